/* sy_ss_resolve: TFLite's (and TF's) STRIDED_SLICE specification, a sparse
 * list of begin/end/stride entries with five masks, resolved against an
 * input shape into one start, step and length per input axis and the output
 * shape. Written once for the operator families, the riscv_mcu provider and
 * the training translator, so all three slice the same elements.
 *
 * The rules are TF's dense-spec expansion: an ellipsis entry stands for as
 * many full axes as the entries that consume an input axis leave over (rank
 * - consumed, where new-axis and ellipsis entries consume none); a new-axis
 * entry puts an axis of 1 in the output and consumes no input axis; input
 * axes past the last entry are taken whole (an implicit trailing ellipsis);
 * a shrink entry takes the one element at `begin` and drops the axis.
 * TFLite's `offset` option makes each end relative to its begin: end +=
 * the begin as resolved (after negative indices, clamping and begin_mask),
 * then the sum is resolved as an end is (negative wraps once, clamps), and
 * end_mask still wins (TFLite's StridedSliceEndForAxis). */
#include "sy_sdk.h"

#include <stdarg.h>
#include <stdio.h>

static sy_status_code why_of(char *why, size_t n, sy_status_code code, const char *fmt, ...)
{
    if (why && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, n, fmt, ap);
        va_end(ap);
    }
    return code;
}

static bool push_out(sy_ss_plan *p, int64_t len, bool new_axis)
{
    if (p->out_rank >= SY_MAX_RANK)
        return false;
    p->new_axis[p->out_rank] = new_axis;
    p->out_dims[p->out_rank++] = len;
    return true;
}

static void whole(sy_ss_plan *p, int32_t d, int64_t dim)
{
    p->start[d] = 0;
    p->step[d] = 1;
    p->len[d] = dim;
    p->shrunk[d] = false;
}

sy_status_code sy_ss_resolve(int32_t rank, const int64_t *dims, const sy_ss_spec *s, sy_ss_plan *p, char *why,
                             size_t why_len)
{
    memset(p, 0, sizeof *p);
    p->rank = rank;
    if (rank < 0 || rank > SY_MAX_RANK)
        return why_of(why, why_len, SY_ERR_SHAPE, "an input of rank %d (at most %d)", rank, SY_MAX_RANK);
    if (s->n < 0 || s->n > SY_MAX_RANK)
        return why_of(why, why_len, SY_ERR_SHAPE, "%d slice entries (at most %d)", s->n, SY_MAX_RANK);
    int64_t elm = s->ellipsis_mask, nam = s->new_axis_mask;
    if (elm & (elm - 1))
        return why_of(why, why_len, SY_ERR_INVALID_ARGUMENT, "ellipsis_mask %lld has more than one bit set",
                      (long long)elm);
    int32_t consumed = 0;
    for (int32_t i = 0; i < s->n; i++)
        if (!(nam >> i & 1) && !(elm >> i & 1))
            consumed++;
    if (consumed > rank)
        return why_of(why, why_len, SY_ERR_SHAPE, "%d slice entries take an input axis each, the input has %d",
                      consumed, rank);
    int32_t d = 0; /* the next input axis */
    for (int32_t i = 0; i < s->n; i++) {
        if (elm >> i & 1) { /* before new_axis: an entry with both bits is the ellipsis */
            for (int32_t k = rank - consumed; k > 0; k--, d++) {
                whole(p, d, dims[d]);
                if (!push_out(p, dims[d], false))
                    goto too_many;
            }
            continue;
        }
        if (nam >> i & 1) {
            if (!push_out(p, 1, true))
                goto too_many;
            continue;
        }
        int64_t dim = dims[d], st = s->strides[i];
        if (st == 0)
            return why_of(why, why_len, SY_ERR_INVALID_ARGUMENT, "strides[%d] is 0", i);
        if (s->shrink_axis_mask >> i & 1) {
            int64_t b = s->begin[i];
            if (b < -dim || b >= dim)
                return why_of(why, why_len, SY_ERR_SHAPE, "shrink index %lld is out of range for axis %d of %lld",
                              (long long)b, d, (long long)dim);
            p->start[d] = b < 0 ? b + dim : b;
            p->step[d] = 1;
            p->len[d] = 1;
            p->shrunk[d] = true;
            d++;
            continue;
        }
        /* begin and end clamped to [0, dim] (positive steps) or [-1, dim - 1] */
        int64_t lo = st > 0 ? 0 : -1, hi = st > 0 ? dim : dim - 1, b = s->begin[i], e = s->end[i];
        if (s->begin_mask >> i & 1)
            b = st > 0 ? 0 : dim - 1;
        else {
            b = b < 0 ? b + dim : b;
            b = b < lo ? lo : b > hi ? hi : b;
        }
        if (s->end_mask >> i & 1)
            e = st > 0 ? dim : -1;
        else {
            if (s->offset) /* b is in [-1, dim]: saturate rather than overflow */
                e = b > 0 && e > INT64_MAX - b ? INT64_MAX : b < 0 && e < INT64_MIN - b ? INT64_MIN : e + b;
            e = e < 0 ? e + dim : e;
            e = e < lo ? lo : e > hi ? hi : e;
        }
        /* the count of b, b + st, ... short of e; |st| taken without overflow (INT64_MIN as INT64_MAX:
         * either way one element, the span being at most dim + 1) */
        int64_t span = st > 0 ? e - b : b - e, mag = st > 0 ? st : st == INT64_MIN ? INT64_MAX : -st;
        int64_t len = span > 0 ? (span - 1) / mag + 1 : 0;
        p->start[d] = b;
        p->step[d] = st;
        p->len[d] = len;
        p->shrunk[d] = false;
        if (!push_out(p, len, false))
            goto too_many;
        d++;
    }
    for (; d < rank; d++) { /* the implicit trailing ellipsis */
        whole(p, d, dims[d]);
        if (!push_out(p, dims[d], false))
            goto too_many;
    }
    return SY_OK;
too_many:
    return why_of(why, why_len, SY_ERR_SHAPE, "the output would have more than %d axes", SY_MAX_RANK);
}
