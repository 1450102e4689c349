/*
 * The constant operands of TFLite's slicing ops, resolved at prepare time:
 * SLICE's begin and size, STRIDED_SLICE's plan (per input dim a start, a
 * step and a length after the masks; the output dims after new_axis and
 * shrink). Shared by cpu_ref's tflite_tensor and the riscv_mcu provider, so
 * both slice the same elements. Header-only, like tfl_params.h.
 */
#ifndef SY_TFL_SLICE_H
#define SY_TFL_SLICE_H

#include "tfl_common.h"

/* constant integer input (shape, axes, paddings...) */
static inline sy_status *tfl_const_ints(const sy_host_api *H, const sy_node *n, uint32_t i, const char *what, int64_t *out, size_t max, int64_t *count)
{
    const sy_tensor *t = H->node_input(n, i);
    /* defined on every path (GCC's -Wmaybe-uninitialized cannot follow SY_TRY) */
    *count = 0;
    if (max)
        out[0] = 0;
    if (!t)
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "%s (input %u) is required", what, i);
    if (!t->data)
        return H->status_new(SY_ERR_DYNAMIC_SHAPE, "%s (input %u) is not known before running", what, i);
    if (t->dtype != SY_DT_INT32 && t->dtype != SY_DT_INT64)
        return H->status_new(SY_ERR_TYPE, "%s must be int32 or int64, got %s", what, sy_dt_name(t->dtype));
    int64_t n_el = sy_tensor_numel(t);
    if (n_el > (int64_t)max)
        return H->status_new(SY_ERR_SHAPE, "%s has %lld values; at most %zu are supported", what, (long long)n_el, max);
    for (int64_t k = 0; k < n_el; k++)
        out[k] = sy_load_i64(t->data, t->dtype, (size_t)k);
    *count = n_el;
    return NULL;
}

/* begin and size of SLICE, resolved */
static inline sy_status *tfl_slice_params(const sy_host_api *H, const sy_node *n, const sy_tensor *x, int64_t *begin, int64_t *size)
{
    int64_t c1 = 0, c2 = 0; /* set by const_ints; gcc -O3 cannot see it */
    SY_TRY(tfl_const_ints(H, n, 1, "begin", begin, SY_MAX_RANK, &c1));
    SY_TRY(tfl_const_ints(H, n, 2, "size", size, SY_MAX_RANK, &c2));
    if (c1 != x->rank || c2 != x->rank)
        return H->status_new(SY_ERR_SHAPE, "begin and size need %d values (got %lld and %lld)", x->rank, (long long)c1,
                   (long long)c2);
    for (int32_t d = 0; d < x->rank; d++) {
        if (size[d] == -1)
            size[d] = x->dims[d] - begin[d];
        if (begin[d] < 0 || size[d] < 0 || begin[d] + size[d] > x->dims[d])
            return H->status_new(SY_ERR_SHAPE, "slice [%lld, +%lld) is outside dimension %d of size %lld", (long long)begin[d],
                       (long long)size[d], d, (long long)x->dims[d]);
    }
    return NULL;
}

/* strided slice plan: per input dim, start and step; output dims after shrink */
typedef struct tfl_ss_plan {
    int32_t rank;             /* input rank */
    int64_t start[SY_MAX_RANK], step[SY_MAX_RANK], len[SY_MAX_RANK];
    int32_t out_rank;
    int64_t out_dims[SY_MAX_RANK];
} tfl_ss_plan;

static inline sy_status *tfl_ss_make(const sy_host_api *H, const sy_node *n, const sy_tensor *x, tfl_ss_plan *p)
{
    int64_t b[SY_MAX_RANK], e[SY_MAX_RANK], s[SY_MAX_RANK], c1 = 0, c2 = 0, c3 = 0;
    SY_TRY(tfl_const_ints(H, n, 1, "begin", b, SY_MAX_RANK, &c1));
    SY_TRY(tfl_const_ints(H, n, 2, "end", e, SY_MAX_RANK, &c2));
    SY_TRY(tfl_const_ints(H, n, 3, "strides", s, SY_MAX_RANK, &c3));
    if (c1 != c2 || c1 != c3)
        return H->status_new(SY_ERR_SHAPE, "begin, end and strides have %lld, %lld and %lld values", (long long)c1,
                   (long long)c2, (long long)c3);
    int64_t bm = sy_attr_int_or(H, n, "begin_mask", 0), em = sy_attr_int_or(H, n, "end_mask", 0);
    int64_t elm = sy_attr_int_or(H, n, "ellipsis_mask", 0), nam = sy_attr_int_or(H, n, "new_axis_mask", 0);
    int64_t sam = sy_attr_int_or(H, n, "shrink_axis_mask", 0);
    if (sy_attr_int_or(H, n, "offset", 0))
        return H->status_new(SY_ERR_UNSUPPORTED, "STRIDED_SLICE offset = true is not supported");
    if (elm & (elm - 1))
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "ellipsis_mask %lld has more than one bit set", (long long)elm);
    /* count the sparse entries that consume input dims */
    int32_t consumed = 0;
    for (int64_t i = 0; i < c1; i++)
        if (!((nam >> i) & 1) && !((elm >> i) & 1))
            consumed++;
    p->rank = x->rank;
    p->out_rank = 0;
    int32_t d = 0; /* input dim */
    for (int64_t i = 0; i < c1 || d < x->rank; i++) {
        if (i < c1 && ((elm >> i) & 1)) {
            int32_t fill = x->rank - consumed;
            for (int32_t k = 0; k < fill && d < x->rank; k++, d++) {
                p->start[d] = 0;
                p->step[d] = 1;
                p->len[d] = x->dims[d];
                p->out_dims[p->out_rank++] = x->dims[d];
            }
            continue;
        }
        if (i < c1 && ((nam >> i) & 1)) {
            if (p->out_rank >= SY_MAX_RANK)
                return H->status_new(SY_ERR_SHAPE, "output rank exceeds %d", SY_MAX_RANK);
            p->out_dims[p->out_rank++] = 1;
            continue;
        }
        if (d >= x->rank) {
            if (i < c1)
                return H->status_new(SY_ERR_SHAPE, "STRIDED_SLICE has more slice entries than input dimensions");
            break;
        }
        int64_t dim = x->dims[d];
        if (i >= c1) { /* trailing dims: full */
            p->start[d] = 0;
            p->step[d] = 1;
            p->len[d] = dim;
            p->out_dims[p->out_rank++] = dim;
            d++;
            continue;
        }
        int64_t st = s[i];
        if (st == 0)
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "strides[%lld] is 0", (long long)i);
        bool shrink = (sam >> i) & 1;
        int64_t lo = st > 0 ? 0 : -1, hi = st > 0 ? dim : dim - 1;
        int64_t bb = b[i], ee = e[i];
        if ((bm >> i) & 1)
            bb = st > 0 ? 0 : dim - 1;
        else {
            if (bb < 0)
                bb += dim;
            bb = bb < lo ? lo : (bb > hi ? hi : bb);
        }
        if (shrink) {
            if (b[i] < -dim || b[i] >= dim)
                return H->status_new(SY_ERR_SHAPE, "shrink index %lld is out of range for dimension %d of size %lld",
                           (long long)b[i], d, (long long)dim);
            bb = b[i] < 0 ? b[i] + dim : b[i];
            p->start[d] = bb;
            p->step[d] = 1;
            p->len[d] = 1;
            d++;
            continue;
        }
        if ((em >> i) & 1)
            ee = st > 0 ? dim : -1;
        else {
            if (ee < 0)
                ee += dim;
            ee = ee < lo ? lo : (ee > hi ? hi : ee);
        }
        int64_t len = st > 0 ? (ee > bb ? (ee - bb + st - 1) / st : 0) : (bb > ee ? (bb - ee + (-st) - 1) / (-st) : 0);
        p->start[d] = bb;
        p->step[d] = st;
        p->len[d] = len;
        if (p->out_rank >= SY_MAX_RANK)
            return H->status_new(SY_ERR_SHAPE, "output rank exceeds %d", SY_MAX_RANK);
        p->out_dims[p->out_rank++] = len;
        d++;
    }
    return NULL;
}

#endif
