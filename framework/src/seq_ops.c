/*
 * The operators of sequence and optional values: SequenceEmpty/Construct/
 * At/Insert/Erase/Length, SplitToSequence, ConcatFromSequence, SequenceMap
 * (a body run per item, like a Loop's), Optional, OptionalHasElement and
 * OptionalGetElement. A sequence's items are copies the sequence owns
 * (values.c); the item dtype is kept in the value's t.dtype.
 */
#include "builtin.h"
#include "session.h"
#include "status.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static int64_t numel_of(const sy_tensor *t)
{
    int64_t n = 1;
    for (int32_t d = 0; d < t->rank; d++)
        n *= t->dims[d];
    return n;
}

/* y becomes a tensor of this type and shape, with room for its data */
static sy_status *out_tensor(struct sy_session *s, sy_value_rt *y, sy_dtype dt, int32_t rank, const int64_t *dims)
{
    sy_value_clear_seq(y);
    y->t.dtype = dt;
    y->t.rank = rank;
    int64_t n = 1;
    bool overflow = false;
    for (int32_t d = 0; d < rank; d++) {
        y->t.dims[d] = dims[d];
        overflow |= __builtin_mul_overflow(n, dims[d], &n);
    }
    if (overflow || !sy_dtype_bytes(dt, n, &y->t.nbytes))
        return sy_error(SY_ERR_SHAPE, "the output's size overflows");
    SY_TRY(sy_session_check_tensor(s, &y->t, "output"));
    SY_TRY(sy_value_ensure_owned(y, y->t.nbytes));
    y->shape_known = true;
    return NULL;
}

/* y becomes an empty sequence of item dtype dt */
static sy_status *out_seq(sy_value_rt *y, sy_dtype dt, sy_seq **q)
{
    sy_seq *nq = calloc(1, sizeof *nq);
    if (!nq)
        return sy_error_oom();
    sy_value_clear_seq(y);
    y->kind = SY_RT_SEQUENCE;
    y->seq = nq;
    y->t.dtype = dt;
    y->t.rank = 0;
    y->t.nbytes = 0;
    y->t.data = NULL;
    y->shape_known = true;
    *q = nq;
    return NULL;
}

static sy_status *need_seq(const sy_value_rt *v, const char *what)
{
    if (!v)
        return sy_error(SY_ERR_INVALID_MODEL, "%s is omitted", what);
    if (v->kind != SY_RT_SEQUENCE || !v->seq)
        return sy_error(SY_ERR_TYPE, "%s is a %s; it must be a sequence", what, sy_value_kind_name(v));
    return NULL;
}

static sy_status *need_tensor(const sy_value_rt *v, const char *what)
{
    if (!v)
        return sy_error(SY_ERR_INVALID_MODEL, "%s is omitted", what);
    if (v->kind != SY_RT_TENSOR)
        return sy_error(SY_ERR_TYPE, "%s is a %s; it must be a tensor", what, sy_value_kind_name(v));
    return NULL;
}

/* a position into n items; `end` admits n itself (insert) */
static sy_status *position(const sy_value_rt *p, uint32_t n, bool end, uint32_t *out)
{
    int64_t i;
    SY_TRY(sy_bi_scalar_i64(p, "the position", &i));
    int64_t lo = -(int64_t)n, hi = end ? (int64_t)n : (int64_t)n - 1;
    if (i < lo || i > hi)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "position %lld is out of range [%lld, %lld] for a sequence of %u",
                        (long long)i, (long long)lo, (long long)hi, n);
    *out = (uint32_t)(i < 0 ? i + n : i);
    return NULL;
}

static sy_status *copy_seq_into(struct sy_session *s, sy_value_rt *y, const sy_value_rt *x, sy_seq **q)
{
    SY_TRY(out_seq(y, x->t.dtype, q));
    for (uint32_t i = 0; i < x->seq->n; i++)
        SY_TRY(sy_seq_push(s, *q, &x->seq->items[i], (*q)->n));
    return NULL;
}

/* ---- SplitToSequence -------------------------------------------------------- */
static sy_status *split_to_sequence(struct sy_session *s, sy_node_rt *nr)
{
    const ir_node *n = nr->view.ir;
    sy_value_rt *x = sy_bi_in(s, nr, 0), *sp = sy_bi_in(s, nr, 1), *y = sy_bi_out(s, nr, 0);
    SY_TRY(need_tensor(x, "the input"));
    const ir_attr *aa = ir_node_attr(n, "axis"), *ka = ir_node_attr(n, "keepdims");
    int64_t axis = aa ? aa->i : 0, keep = ka ? ka->i : 1;
    int32_t r = x->t.rank;
    if (r < 1 || axis < -r || axis >= r)
        return sy_error(SY_ERR_INVALID_MODEL, "axis %lld is out of range for rank %d", (long long)axis, r);
    if (axis < 0)
        axis += r;
    size_t es = sy_dtype_elem_size(x->t.dtype);
    if (!es)
        return sy_error(SY_ERR_UNSUPPORTED, "SplitToSequence of dtype %s", sy_dtype_name(x->t.dtype));
    int64_t len = x->t.dims[axis];
    /* chunk lengths */
    int64_t *lens = NULL;
    int64_t nchunks = 0;
    if (!sp) {
        nchunks = len;
        lens = malloc((size_t)(len ? len : 1) * sizeof *lens);
        for (int64_t i = 0; lens && i < len; i++)
            lens[i] = 1;
    } else {
        SY_TRY(need_tensor(sp, "split"));
        if (sp->t.dtype != SY_DT_INT64 && sp->t.dtype != SY_DT_INT32)
            return sy_error(SY_ERR_TYPE, "split is %s; it must be int32 or int64", sy_dtype_name(sp->t.dtype));
        int64_t ns = numel_of(&sp->t);
        if (sp->t.rank == 0) {
            int64_t c;
            SY_TRY(sy_bi_scalar_i64(sp, "split", &c));
            if (c <= 0)
                return sy_error(SY_ERR_INVALID_ARGUMENT, "split %lld must be positive", (long long)c);
            nchunks = (len + c - 1) / c;
            lens = malloc((size_t)(nchunks ? nchunks : 1) * sizeof *lens);
            for (int64_t i = 0; lens && i < nchunks; i++)
                lens[i] = i + 1 < nchunks ? c : len - c * (nchunks - 1);
        } else {
            if (sp->t.rank != 1)
                return sy_error(SY_ERR_SHAPE, "split must be a scalar or 1-D; it has rank %d", sp->t.rank);
            nchunks = ns;
            lens = malloc((size_t)(ns ? ns : 1) * sizeof *lens);
            int64_t sum = 0;
            for (int64_t i = 0; lens && i < ns; i++) {
                lens[i] = sp->t.dtype == SY_DT_INT64 ? ((const int64_t *)sp->t.data)[i]
                                                     : ((const int32_t *)sp->t.data)[i];
                if (lens[i] < 0) {
                    long long bad = (long long)lens[i];
                    free(lens);
                    return sy_error(SY_ERR_INVALID_ARGUMENT, "split[%lld] = %lld is negative", (long long)i, bad);
                }
                sum += lens[i];
            }
            if (lens && sum != len) {
                free(lens);
                return sy_error(SY_ERR_INVALID_ARGUMENT, "split sums to %lld; axis %lld has %lld", (long long)sum,
                                (long long)axis, (long long)len);
            }
        }
    }
    if (!lens)
        return sy_error_oom();
    sy_seq *q = NULL;
    sy_status *st = out_seq(y, x->t.dtype, &q);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; d++)
        outer *= x->t.dims[d];
    for (int64_t d = axis + 1; d < r; d++)
        inner *= x->t.dims[d];
    int64_t at = 0;
    for (int64_t c = 0; !st && c < nchunks; c++) {
        sy_tensor t = {.struct_size = sizeof t, .dtype = x->t.dtype, .rank = r};
        memcpy(t.dims, x->t.dims, sizeof t.dims);
        t.dims[axis] = lens[c];
        if (!sp && !keep) { /* size-1 chunks without their axis */
            t.rank = r - 1;
            for (int32_t d = (int32_t)axis; d < r - 1; d++)
                t.dims[d] = x->t.dims[d + 1];
        }
        size_t row = (size_t)(lens[c] * inner) * es;
        t.nbytes = (size_t)outer * row;
        t.data = sy_aligned_alloc(t.nbytes ? t.nbytes : 1, 64);
        if (!t.data) {
            st = sy_error_oom();
            break;
        }
        for (int64_t o = 0; o < outer; o++)
            memcpy((uint8_t *)t.data + (size_t)o * row,
                   (const uint8_t *)x->t.data + ((size_t)(o * len + at) * (size_t)inner) * es, row);
        st = sy_seq_push(s, q, &t, q->n);
        sy_aligned_free(t.data);
        at += lens[c];
    }
    free(lens);
    return st;
}

/* ---- ConcatFromSequence -------------------------------------------------- */
static sy_status *concat_from_sequence(struct sy_session *s, sy_node_rt *nr)
{
    const ir_node *n = nr->view.ir;
    sy_value_rt *x = sy_bi_in(s, nr, 0), *y = sy_bi_out(s, nr, 0);
    SY_TRY(need_seq(x, "the input"));
    const ir_attr *aa = ir_node_attr(n, "axis"), *na = ir_node_attr(n, "new_axis");
    if (!aa)
        return sy_error(SY_ERR_INVALID_MODEL, "ConcatFromSequence needs the attribute 'axis'");
    bool new_axis = na && na->i;
    const sy_seq *q = x->seq;
    if (!q->n)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "ConcatFromSequence of an empty sequence");
    const sy_tensor *t0 = &q->items[0];
    int32_t r = t0->rank, ro = r + (new_axis ? 1 : 0);
    int64_t axis = aa->i;
    if (axis < -ro || axis >= ro || ro < 1 || ro > SY_MAX_RANK)
        return sy_error(SY_ERR_INVALID_MODEL, "axis %lld is out of range for rank %d", (long long)axis, ro);
    if (axis < 0)
        axis += ro;
    size_t es = sy_dtype_elem_size(t0->dtype);
    if (!es)
        return sy_error(SY_ERR_UNSUPPORTED, "ConcatFromSequence of dtype %s", sy_dtype_name(t0->dtype));
    int64_t total = 0;
    for (uint32_t i = 0; i < q->n; i++) {
        const sy_tensor *t = &q->items[i];
        if (t->dtype != t0->dtype || t->rank != r)
            return sy_error(SY_ERR_SHAPE, "item %u differs in dtype or rank from item 0", i);
        for (int32_t d = 0; d < r; d++)
            if ((new_axis || d != axis) && t->dims[d] != t0->dims[d])
                return sy_error(SY_ERR_SHAPE, "item %u has dimension %d = %lld, item 0 %lld", i, d,
                                (long long)t->dims[d], (long long)t0->dims[d]);
        total += new_axis ? 1 : t->dims[axis];
    }
    int64_t dims[SY_MAX_RANK];
    for (int32_t d = 0, e = 0; d < ro; d++)
        dims[d] = d == axis ? total : t0->dims[new_axis ? e++ : d];
    SY_TRY(out_tensor(s, y, t0->dtype, ro, dims));
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; d++)
        outer *= dims[d];
    size_t out_row = (size_t)numel_of(&y->t) / (size_t)(outer ? outer : 1) * es;
    size_t off = 0;
    for (uint32_t i = 0; i < q->n; i++) {
        const sy_tensor *t = &q->items[i];
        size_t row = outer ? t->nbytes / (size_t)outer : 0;
        for (int64_t o = 0; o < outer; o++)
            memcpy((uint8_t *)y->t.data + (size_t)o * out_row + off, (const uint8_t *)t->data + (size_t)o * row, row);
        off += row;
    }
    return NULL;
}

/* ---- SequenceMap --------------------------------------------------------- */
static sy_status *sequence_map(struct sy_session *s, sy_node_rt *nr)
{
    const ir_node *n = nr->view.ir;
    sy_value_rt *x = sy_bi_in(s, nr, 0);
    SY_TRY(need_seq(x, "input_sequence"));
    struct sy_session *b;
    SY_TRY(sy_bi_sub(s, nr, "body", &b));
    const ir_graph *g = b->g;
    if (g->n_inputs != n->n_inputs)
        return sy_error(SY_ERR_INVALID_MODEL, "SequenceMap has %u inputs, its body %u", n->n_inputs, g->n_inputs);
    if (g->n_outputs != n->n_outputs)
        return sy_error(SY_ERR_INVALID_MODEL, "SequenceMap has %u outputs, its body %u", n->n_outputs,
                        g->n_outputs);
    uint32_t len = x->seq->n;
    for (uint32_t k = 1; k < n->n_inputs; k++) {
        const sy_value_rt *a = sy_bi_in(s, nr, k);
        if (!a)
            return sy_error(SY_ERR_INVALID_MODEL, "SequenceMap's input %u is omitted", k);
        if (a->kind == SY_RT_SEQUENCE && a->seq->n != len)
            return sy_error(SY_ERR_SHAPE, "SequenceMap's input %u has %u items, input_sequence %u", k, a->seq->n,
                            len);
        if (a->kind == SY_RT_NONE)
            return sy_error(SY_ERR_TYPE, "SequenceMap's input %u is an empty optional", k);
    }
    sy_seq **outs = calloc(n->n_outputs ? n->n_outputs : 1, sizeof *outs);
    if (!outs)
        return sy_error_oom();
    sy_status *st = NULL;
    for (uint32_t o = 0; !st && o < n->n_outputs; o++) {
        sy_value_rt *y = sy_bi_out(s, nr, o);
        if (y)
            st = out_seq(y, g->values[g->outputs[o]].dtype, &outs[o]);
    }
    sy_value_rt item = {0};
    sy_value_rt *items = calloc(n->n_inputs, sizeof *items);
    if (!st && !items)
        st = sy_error_oom();
    for (uint32_t i = 0; !st && i < len; i++) {
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            const sy_value_rt *a = sy_bi_in(s, nr, k);
            if (a->kind == SY_RT_SEQUENCE) {
                items[k] = item;
                items[k].t = a->seq->items[i];
                sy_session_bind(b, g->inputs[k], &items[k]);
            } else {
                sy_session_bind(b, g->inputs[k], a);
            }
        }
        st = sy_session_run_sub(b);
        for (uint32_t o = 0; !st && o < n->n_outputs; o++) {
            const sy_value_rt *v = &b->values[g->outputs[o]];
            if (!outs[o])
                continue;
            if (v->kind != SY_RT_TENSOR)
                st = sy_error(SY_ERR_TYPE, "SequenceMap's body output %u is a %s; it must be a tensor", o,
                              sy_value_kind_name(v));
            else {
                sy_value_rt *y = sy_bi_out(s, nr, o);
                y->t.dtype = v->t.dtype;
                st = sy_seq_push(s, outs[o], &v->t, outs[o]->n);
            }
        }
        if (st)
            st = sy_error_wrap(st, "SequenceMap item %u", i);
    }
    free(items);
    free(outs);
    return st;
}

sy_status *sy_seq_op(struct sy_session *s, sy_node_rt *nr)
{
    const ir_node *n = nr->view.ir;
    sy_value_rt *y = sy_bi_out(s, nr, 0);
    if (!y)
        return sy_error(SY_ERR_INVALID_MODEL, "%s's output is omitted", n->op);
    sy_seq *q = NULL;
    uint32_t at = 0; /* set by position() on every path that reads it; GCC -O2 cannot see that */
    switch (nr->builtin) {
    case SY_BI_SEQUENCE_EMPTY: {
        const ir_attr *a = ir_node_attr(n, "dtype");
        sy_dtype dt = a ? (sy_dtype)a->i : SY_DT_FLOAT32;
        if (!sy_dtype_valid((int32_t)dt))
            return sy_error(SY_ERR_INVALID_MODEL, "dtype %lld is not a tensor element type", (long long)a->i);
        return out_seq(y, dt, &q);
    }
    case SY_BI_SEQUENCE_CONSTRUCT: {
        const sy_value_rt *x0 = sy_bi_in(s, nr, 0);
        SY_TRY(need_tensor(x0, "input 0"));
        SY_TRY(out_seq(y, x0->t.dtype, &q));
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            const sy_value_rt *x = sy_bi_in(s, nr, k);
            SY_TRY(need_tensor(x, "an input"));
            if (x->t.dtype != x0->t.dtype)
                return sy_error(SY_ERR_TYPE, "input %u is %s, input 0 %s: a sequence holds one dtype", k,
                                sy_dtype_name(x->t.dtype), sy_dtype_name(x0->t.dtype));
            SY_TRY(sy_seq_push(s, q, &x->t, q->n));
        }
        return NULL;
    }
    case SY_BI_SEQUENCE_AT: {
        const sy_value_rt *x = sy_bi_in(s, nr, 0), *p = sy_bi_in(s, nr, 1);
        SY_TRY(need_seq(x, "the input sequence"));
        SY_TRY(need_tensor(p, "the position"));
        SY_TRY(position(p, x->seq->n, false, &at));
        const sy_tensor *t = &x->seq->items[at];
        SY_TRY(out_tensor(s, y, t->dtype, t->rank, t->dims));
        if (t->nbytes)
            memcpy(y->t.data, t->data, t->nbytes);
        return NULL;
    }
    case SY_BI_SEQUENCE_INSERT: {
        const sy_value_rt *x = sy_bi_in(s, nr, 0), *t = sy_bi_in(s, nr, 1), *p = sy_bi_in(s, nr, 2);
        SY_TRY(need_seq(x, "the input sequence"));
        SY_TRY(need_tensor(t, "the tensor to insert"));
        if (x->seq->n && t->t.dtype != x->t.dtype)
            return sy_error(SY_ERR_TYPE, "inserting a %s tensor into a sequence of %s", sy_dtype_name(t->t.dtype),
                            sy_dtype_name(x->t.dtype));
        at = x->seq->n;
        if (p)
            SY_TRY(position(p, x->seq->n, true, &at));
        SY_TRY(copy_seq_into(s, y, x, &q));
        y->t.dtype = t->t.dtype;
        return sy_seq_push(s, q, &t->t, at);
    }
    case SY_BI_SEQUENCE_ERASE: {
        const sy_value_rt *x = sy_bi_in(s, nr, 0), *p = sy_bi_in(s, nr, 1);
        SY_TRY(need_seq(x, "the input sequence"));
        if (!x->seq->n)
            return sy_error(SY_ERR_INVALID_ARGUMENT, "SequenceErase of an empty sequence");
        at = x->seq->n - 1;
        if (p)
            SY_TRY(position(p, x->seq->n, false, &at));
        SY_TRY(out_seq(y, x->t.dtype, &q));
        for (uint32_t i = 0; i < x->seq->n; i++)
            if (i != at)
                SY_TRY(sy_seq_push(s, q, &x->seq->items[i], q->n));
        return NULL;
    }
    case SY_BI_SEQUENCE_LENGTH: {
        const sy_value_rt *x = sy_bi_in(s, nr, 0);
        SY_TRY(need_seq(x, "the input sequence"));
        SY_TRY(out_tensor(s, y, SY_DT_INT64, 0, NULL));
        int64_t len = x->seq->n;
        memcpy(y->t.data, &len, sizeof len);
        return NULL;
    }
    case SY_BI_SPLIT_TO_SEQUENCE:
        return split_to_sequence(s, nr);
    case SY_BI_CONCAT_FROM_SEQUENCE:
        return concat_from_sequence(s, nr);
    case SY_BI_SEQUENCE_MAP:
        return sequence_map(s, nr);
    case SY_BI_OPTIONAL: {
        const sy_value_rt *x = sy_bi_in(s, nr, 0);
        if (!x) {
            sy_value_clear_seq(y);
            y->kind = SY_RT_NONE;
            y->t.rank = 0;
            y->t.nbytes = 0;
            y->t.data = NULL;
            y->shape_known = true;
            return NULL;
        }
        if (x->kind == SY_RT_NONE)
            return sy_error(SY_ERR_TYPE, "Optional of an empty optional (an optional holds a tensor or a sequence)");
        return sy_value_assign(s, y, x);
    }
    case SY_BI_OPTIONAL_HAS_ELEMENT: {
        const sy_value_rt *x = sy_bi_in(s, nr, 0);
        SY_TRY(out_tensor(s, y, SY_DT_BOOL, 0, NULL));
        *(uint8_t *)y->t.data = x && x->kind != SY_RT_NONE;
        return NULL;
    }
    case SY_BI_OPTIONAL_GET_ELEMENT: {
        const sy_value_rt *x = sy_bi_in(s, nr, 0);
        if (!x || x->kind == SY_RT_NONE)
            return sy_error(SY_ERR_INVALID_ARGUMENT, "OptionalGetElement of an empty optional");
        return sy_value_assign(s, y, x);
    }
    default:
        return sy_error(SY_ERR_INTERNAL, "built-in op %d has no implementation", nr->builtin);
    }
}
