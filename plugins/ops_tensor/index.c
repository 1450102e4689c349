/*
 * ops_tensor / index.c: index-driven data movement.
 *
 * Scatter (9, 11), ScatterElements (11, 13, 16, 18: reduction none/add/mul/
 * max/min), ScatterND (11, 13, 16, 18: the same reductions), GatherND (11,
 * 12, 13: batch_dims), OneHot (9, 11), Trilu (14), ReverseSequence (10),
 * CenterCropPad (18),
 * and the ops whose output shape depends on input values: Unique (11),
 * NonZero (9, 13), Compress (9, 11). Their infer computes the shape when the
 * values are known and returns SY_ERR_DYNAMIC_SHAPE otherwise.
 *
 * Every index is checked: negative values count from the end of their axis,
 * anything outside [-dim, dim - 1] is an error naming the index and axis.
 */
#include "tensor_internal.h"
#include "tflk.h"

#include <math.h>
#include <stdlib.h>

static const sy_host_api *H; /* process-wide: the same host table in every environment */

#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

static bool is_index_type(sy_dtype dt) { return dt == SY_DT_INT64 || dt == SY_DT_INT32; }

static int64_t index_at(const sy_tensor *t, int64_t i)
{
    return t->dtype == SY_DT_INT64 ? ((const int64_t *)t->data)[i] : ((const int32_t *)t->data)[i];
}

/* k normalised into [0, dim) or an error naming what it indexes */
static sy_status *norm_index(int64_t k, int64_t dim, const char *what, int axis, int64_t *out)
{
    int64_t v = k < 0 ? k + dim : k;
    if (v < 0 || v >= dim)
        return ERR(SY_ERR_RUNTIME, "%s %lld is out of range [-%lld, %lld] for axis %d", what, (long long)k,
                   (long long)dim, (long long)(dim - 1), axis);
    *out = v;
    return NULL;
}

/* ======================================================================== */
/* reductions shared by ScatterElements and ScatterND                       */
/* ======================================================================== */

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

static sy_status *read_reduction(const sy_node *n, int *red)
{
    char b[16];
    sy_attr_string_or(H, n, "reduction", "none", b, sizeof b);
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    for (int i = 0; i < 5; i++)
        if (!strcmp(b, names[i])) {
            *red = i;
            if (i >= RED_MAX && H->node_opset(n) < 18)
                return ERR(SY_ERR_INVALID_ARGUMENT, "reduction \"%s\" needs opset 18 (node has %d)", b,
                           (int)H->node_opset(n));
            return NULL;
        }
    return ERR(SY_ERR_INVALID_ARGUMENT, "reduction must be none, add, mul, max or min; got \"%s\"", b);
}

/* dst[di] (op)= src[si], both of dtype dt */
static void reduce_into(void *dst, size_t di, const void *src, size_t si, sy_dtype dt, size_t es, int red)
{
    if (red == RED_NONE) {
        memcpy((char *)dst + di * es, (const char *)src + si * es, es);
        return;
    }
    if (sy_dt_is_float(dt)) {
        double a = sy_load_f64(dst, dt, di), b = sy_load_f64(src, dt, si), r;
        switch (red) {
        case RED_ADD: r = a + b; break;
        case RED_MUL: r = a * b; break;
        case RED_MAX: r = (b > a || isnan(b)) ? b : a; break;
        default: r = (b < a || isnan(b)) ? b : a; break;
        }
        sy_store_f64(dst, dt, di, r);
    } else if (dt == SY_DT_UINT64) {
        uint64_t a = ((uint64_t *)dst)[di], b = ((const uint64_t *)src)[si], r;
        switch (red) {
        case RED_ADD: r = a + b; break;
        case RED_MUL: r = a * b; break;
        case RED_MAX: r = b > a ? b : a; break;
        default: r = b < a ? b : a; break;
        }
        ((uint64_t *)dst)[di] = r;
    } else {
        int64_t a = sy_load_i64(dst, dt, di), b = sy_load_i64(src, dt, si), r;
        switch (red) {
        case RED_ADD: r = (int64_t)((uint64_t)a + (uint64_t)b); break;
        case RED_MUL: r = (int64_t)((uint64_t)a * (uint64_t)b); break;
        case RED_MAX: r = b > a ? b : a; break;
        default: r = b < a ? b : a; break;
        }
        if (dt == SY_DT_BOOL)
            r = red == RED_ADD ? (a || b) : r; /* bool: add is or, mul is and */
        sy_store_i64(dst, dt, di, r);
    }
}

/* ======================================================================== */
/* Scatter / ScatterElements                                                */
/* ======================================================================== */

static sy_status *infer_scatter_elements(sy_node *n)
{
    const sy_tensor *x, *idx, *upd;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &idx));
    SY_TRY(sy_need_input(H, n, 2, &upd));
    if (!is_index_type(idx->dtype))
        return ERR(SY_ERR_TYPE, "indices must be int32 or int64, got %s", sy_dt_name(idx->dtype));
    if (upd->dtype != x->dtype)
        return ERR(SY_ERR_TYPE, "updates (%s) must have the dtype of data (%s)", sy_dt_name(upd->dtype),
                   sy_dt_name(x->dtype));
    if (x->rank < 1)
        return ERR(SY_ERR_SHAPE, "data must have rank >= 1");
    if (idx->rank != x->rank)
        return ERR(SY_ERR_SHAPE, "indices must have the rank of data (%d), got %d", (int)x->rank, (int)idx->rank);
    if (!sy_shape_equal(idx->rank, idx->dims, upd->rank, upd->dims)) {
        char a[96], b[96];
        return ERR(SY_ERR_SHAPE, "updates %s must have the shape of indices %s",
                   sy_shape_str(upd->rank, upd->dims, a, sizeof a), sy_shape_str(idx->rank, idx->dims, b, sizeof b));
    }
    int32_t axis;
    SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", 0), x->rank, false, "axis", &axis));
    for (int32_t d = 0; d < x->rank; d++)
        if (d != axis && idx->dims[d] > x->dims[d])
            return ERR(SY_ERR_SHAPE, "indices dim %d (%lld) exceeds data dim %d (%lld)", (int)d,
                       (long long)idx->dims[d], (int)d, (long long)x->dims[d]);
    int red = RED_NONE;
    SY_TRY(read_reduction(n, &red));
    return H->node_set_output(n, 0, x->dtype, x->rank, x->dims);
}

typedef struct scatter_state {
    int32_t axis;
    int red;
    int32_t batch_dims;
} scatter_state;

static sy_status *prepare_scatter(sy_node *n, void **state)
{
    scatter_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    const sy_tensor *x = H->node_input(n, 0);
    sy_status *st = NULL;
    if (sy_attr_has(H, n, "axis", SY_ATTR_INT) || x->rank > 0)
        st = sy_norm_axis(H, sy_attr_int_or(H, n, "axis", 0), x->rank > 0 ? x->rank : 1, false, "axis", &s->axis);
    if (!st)
        st = read_reduction(n, &s->red);
    s->batch_dims = (int32_t)sy_attr_int_or(H, n, "batch_dims", 0);
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static sy_status *run_scatter_elements(void *state, const sy_kernel_io *io)
{
    const scatter_state *s = state;
    const sy_tensor *x = io->inputs[0], *it = io->inputs[1], *upd = io->inputs[2];
    sy_tensor *y = io->outputs[0];
    size_t es = sy_dt_size(x->dtype);
    if (y->data != x->data)
        memcpy(y->data, x->data, (size_t)sy_tensor_numel(x) * es);
    int64_t xs[SY_MAX_RANK], idx[SY_MAX_RANK] = {0};
    sy_strides(x->rank, x->dims, xs);
    int64_t ni = sy_tensor_numel(it), ad = x->dims[s->axis];
    for (int64_t j = 0; j < ni; j++) {
        int64_t k = 0;
        SY_TRY(norm_index(index_at(it, j), ad, "index", s->axis, &k));
        int64_t off = 0;
        for (int32_t d = 0; d < x->rank; d++)
            off += (d == s->axis ? k : idx[d]) * xs[d];
        reduce_into(y->data, (size_t)off, upd->data, (size_t)j, x->dtype, es, s->red);
        sy_index_next(it->rank, it->dims, idx);
    }
    return NULL;
}

/* ======================================================================== */
/* ScatterND / GatherND                                                     */
/* ======================================================================== */

static sy_status *infer_scatter_nd(sy_node *n)
{
    const sy_tensor *x, *idx, *upd;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &idx));
    SY_TRY(sy_need_input(H, n, 2, &upd));
    if (idx->dtype != SY_DT_INT64)
        return ERR(SY_ERR_TYPE, "indices must be int64, got %s", sy_dt_name(idx->dtype));
    if (upd->dtype != x->dtype)
        return ERR(SY_ERR_TYPE, "updates (%s) must have the dtype of data (%s)", sy_dt_name(upd->dtype),
                   sy_dt_name(x->dtype));
    if (x->rank < 1 || idx->rank < 1)
        return ERR(SY_ERR_SHAPE, "data and indices must have rank >= 1");
    int64_t k = idx->dims[idx->rank - 1];
    if (k < 1 || k > x->rank)
        return ERR(SY_ERR_SHAPE, "indices' last dim (%lld) must be in [1, rank of data = %d]", (long long)k,
                   (int)x->rank);
    /* updates.shape == indices.shape[:-1] + data.shape[k:] */
    int64_t want[2 * SY_MAX_RANK];
    int32_t wr = 0;
    for (int32_t d = 0; d < idx->rank - 1; d++)
        want[wr++] = idx->dims[d];
    for (int32_t d = (int32_t)k; d < x->rank; d++)
        want[wr++] = x->dims[d];
    if (!sy_shape_equal(upd->rank, upd->dims, wr, want)) {
        char a[96], b[96];
        return ERR(SY_ERR_SHAPE, "updates %s must have shape indices.shape[:-1] + data.shape[k:] = %s",
                   sy_shape_str(upd->rank, upd->dims, a, sizeof a), sy_shape_str(wr, want, b, sizeof b));
    }
    int red = RED_NONE;
    SY_TRY(read_reduction(n, &red));
    return H->node_set_output(n, 0, x->dtype, x->rank, x->dims);
}

/* offset (in elements) of data[tuple] for index tuple t of length k over
 * dims; checks every component */
static sy_status *tuple_offset(const int64_t *tuple, int64_t k, const int64_t *dims, const int64_t *strides,
                               int32_t first_axis, int64_t *off)
{
    int64_t o = 0;
    for (int64_t c = 0; c < k; c++) {
        int64_t v = 0;
        SY_TRY(norm_index(tuple[c], dims[c], "index", (int)(first_axis + c), &v));
        o += v * strides[c];
    }
    *off = o;
    return NULL;
}

static sy_status *run_scatter_nd(void *state, const sy_kernel_io *io)
{
    const scatter_state *s = state;
    const sy_tensor *x = io->inputs[0], *it = io->inputs[1], *upd = io->inputs[2];
    sy_tensor *y = io->outputs[0];
    size_t es = sy_dt_size(x->dtype);
    if (y->data != x->data)
        memcpy(y->data, x->data, (size_t)sy_tensor_numel(x) * es);
    int64_t k = it->dims[it->rank - 1];
    int64_t xs[SY_MAX_RANK];
    sy_strides(x->rank, x->dims, xs);
    int64_t slice = sy_dims_prod(x->dims, (int32_t)k, x->rank);
    int64_t ntup = sy_tensor_numel(it) / k;
    const int64_t *tup = it->data;
    for (int64_t t = 0; t < ntup; t++) {
        int64_t off;
        SY_TRY(tuple_offset(tup + t * k, k, x->dims, xs, 0, &off));
        for (int64_t e = 0; e < slice; e++)
            reduce_into(y->data, (size_t)(off + e), upd->data, (size_t)(t * slice + e), x->dtype, es, s->red);
    }
    return NULL;
}

static sy_status *infer_gather_nd(sy_node *n)
{
    const sy_tensor *x, *idx;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &idx));
    if (idx->dtype != SY_DT_INT64)
        return ERR(SY_ERR_TYPE, "indices must be int64, got %s", sy_dt_name(idx->dtype));
    if (x->rank < 1 || idx->rank < 1)
        return ERR(SY_ERR_SHAPE, "data and indices must have rank >= 1");
    int64_t b = sy_attr_int_or(H, n, "batch_dims", 0);
    if (b < 0 || b >= idx->rank || b >= x->rank)
        return ERR(SY_ERR_SHAPE, "batch_dims = %lld must be in [0, min(rank(data), rank(indices)) - 1 = %d]",
                   (long long)b, (int)(x->rank < idx->rank ? x->rank : idx->rank) - 1);
    for (int64_t d = 0; d < b; d++)
        if (x->dims[d] != idx->dims[d])
            return ERR(SY_ERR_SHAPE, "batch dim %lld differs: data has %lld, indices %lld", (long long)d,
                       (long long)x->dims[d], (long long)idx->dims[d]);
    int64_t k = idx->dims[idx->rank - 1];
    if (k < 1 || k > x->rank - b)
        return ERR(SY_ERR_SHAPE, "indices' last dim (%lld) must be in [1, rank(data) - batch_dims = %lld]",
                   (long long)k, (long long)(x->rank - b));
    int64_t dims[2 * SY_MAX_RANK];
    int32_t r = 0;
    for (int32_t d = 0; d < idx->rank - 1; d++)
        dims[r++] = idx->dims[d];
    for (int64_t d = b + k; d < x->rank; d++)
        dims[r++] = x->dims[d];
    if (r > SY_MAX_RANK)
        return ERR(SY_ERR_UNSUPPORTED, "output rank %d exceeds %d", (int)r, SY_MAX_RANK);
    return H->node_set_output(n, 0, x->dtype, r, dims);
}

static sy_status *run_gather_nd(void *state, const sy_kernel_io *io)
{
    const scatter_state *s = state;
    const sy_tensor *x = io->inputs[0], *it = io->inputs[1];
    char *y = io->outputs[0]->data;
    size_t es = sy_dt_size(x->dtype);
    int32_t b = s->batch_dims;
    int64_t k = it->dims[it->rank - 1];
    int64_t xs[SY_MAX_RANK];
    sy_strides(x->rank, x->dims, xs);
    int64_t nbatch = sy_dims_prod(x->dims, 0, b);
    int64_t batch_stride = b > 0 ? xs[b - 1] : 0;
    int64_t slice = sy_dims_prod(x->dims, b + (int32_t)k, x->rank) * (int64_t)es;
    int64_t per_batch = (sy_tensor_numel(it) / k) / (nbatch ? nbatch : 1);
    const int64_t *tup = it->data;
    const char *xd = x->data;
    for (int64_t bi = 0; bi < nbatch; bi++) {
        for (int64_t t = 0; t < per_batch; t++) {
            int64_t off;
            SY_TRY(tuple_offset(tup + (bi * per_batch + t) * k, k, x->dims + b, xs + b, b, &off));
            memcpy(y, xd + (bi * batch_stride + off) * (int64_t)es, (size_t)slice);
            y += slice;
        }
    }
    return NULL;
}

/* ======================================================================== */
/* OneHot                                                                   */
/* ======================================================================== */

static sy_status *onehot_depth(const sy_tensor *d, int64_t *depth)
{
    if (sy_tensor_numel(d) != 1)
        return ERR(SY_ERR_SHAPE, "depth must hold exactly one value");
    if (!d->data)
        return ERR(SY_ERR_DYNAMIC_SHAPE, "depth is not known before the run");
    double v = sy_load_f64(d->data, d->dtype, 0);
    if (!(v >= 1))
        return ERR(SY_ERR_INVALID_ARGUMENT, "depth must be >= 1, got %g", v);
    *depth = (int64_t)v;
    return NULL;
}

static sy_status *infer_onehot(sy_node *n)
{
    const sy_tensor *idx, *dep, *val;
    SY_TRY(sy_need_input(H, n, 0, &idx));
    SY_TRY(sy_need_input(H, n, 1, &dep));
    SY_TRY(sy_need_input(H, n, 2, &val));
    if (!sy_dt_is_numeric(idx->dtype) || idx->dtype == SY_DT_BOOL)
        return ERR(SY_ERR_TYPE, "indices must be numeric, got %s", sy_dt_name(idx->dtype));
    if (sy_tensor_numel(val) != 2 || val->rank != 1)
        return ERR(SY_ERR_SHAPE, "values must be a 1-D tensor of 2 elements [off_value, on_value]");
    int32_t r = idx->rank + 1;
    if (r > SY_MAX_RANK)
        return ERR(SY_ERR_UNSUPPORTED, "output rank %d exceeds %d", (int)r, SY_MAX_RANK);
    int32_t axis;
    SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", -1), r, false, "axis", &axis));
    int64_t depth = 0;
    SY_TRY(onehot_depth(dep, &depth));
    int64_t dims[SY_MAX_RANK];
    for (int32_t d = 0, k = 0; d < r; d++)
        dims[d] = d == axis ? depth : idx->dims[k++];
    return H->node_set_output(n, 0, val->dtype, r, dims);
}

static sy_status *prepare_onehot(sy_node *n, void **state)
{
    scatter_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = sy_norm_axis(H, sy_attr_int_or(H, n, "axis", -1), H->node_input(n, 0)->rank + 1, false, "axis",
                                 &s->axis);
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static sy_status *run_onehot(void *state, const sy_kernel_io *io)
{
    const scatter_state *s = state;
    const sy_tensor *idx = io->inputs[0], *val = io->inputs[2];
    sy_tensor *y = io->outputs[0];
    int64_t depth = y->dims[s->axis];
    size_t es = sy_dt_size(y->dtype);
    const char *off = val->data, *on = off + es;
    int64_t outer = sy_dims_prod(y->dims, 0, s->axis), inner = sy_dims_prod(y->dims, s->axis + 1, y->rank);
    char *yd = y->data;
    for (int64_t i = 0; i < outer * depth * inner; i++)
        memcpy(yd + i * (int64_t)es, off, es);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            double v = sy_load_f64(idx->data, idx->dtype, (size_t)(o * inner + j));
            int64_t k = (int64_t)v;
            if (k < 0)
                k += depth;
            if (k < 0 || k >= depth)
                continue; /* out-of-range indices give an all-off row */
            memcpy(yd + ((o * depth + k) * inner + j) * (int64_t)es, on, es);
        }
    return NULL;
}

/* ======================================================================== */
/* Trilu                                                                    */
/* ======================================================================== */

static sy_status *trilu_k(const sy_tensor *kt, int64_t *k)
{
    *k = 0;
    if (!kt)
        return NULL;
    if (kt->dtype != SY_DT_INT64)
        return ERR(SY_ERR_TYPE, "k must be int64, got %s", sy_dt_name(kt->dtype));
    if (sy_tensor_numel(kt) != 1)
        return ERR(SY_ERR_SHAPE, "k must be a scalar (one element)");
    if (kt->data)
        *k = ((const int64_t *)kt->data)[0];
    return NULL;
}

static sy_status *infer_trilu(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (x->rank < 2)
        return ERR(SY_ERR_SHAPE, "Trilu input must have rank >= 2, got %d", (int)x->rank);
    int64_t k;
    SY_TRY(trilu_k(H->node_num_inputs(n) > 1 ? H->node_input(n, 1) : NULL, &k));
    return sy_infer_unary(H, n);
}

static sy_status *prepare_trilu(sy_node *n, void **state)
{
    scatter_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->red = sy_attr_int_or(H, n, "upper", 1) != 0; /* reuses `red` as the upper flag */
    *state = s;
    return NULL;
}

static sy_status *run_trilu(void *state, const sy_kernel_io *io)
{
    const scatter_state *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    int64_t k;
    SY_TRY(trilu_k(io->n_inputs > 1 ? io->inputs[1] : NULL, &k));
    size_t es = sy_dt_size(x->dtype);
    int64_t R = x->dims[x->rank - 2], C = x->dims[x->rank - 1];
    int64_t nb = sy_dims_prod(x->dims, 0, x->rank - 2);
    const char *src = x->data;
    char *dst = y->data;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t i = 0; i < R; i++)
            for (int64_t j = 0; j < C; j++) {
                int64_t e = (b * R + i) * C + j;
                bool keep = s->red ? (j - i >= k) : (j - i <= k);
                if (keep)
                    memcpy(dst + e * (int64_t)es, src + e * (int64_t)es, es);
                else
                    memset(dst + e * (int64_t)es, 0, es);
            }
    return NULL;
}

/* ======================================================================== */
/* ReverseSequence                                                          */
/* ======================================================================== */

static sy_status *rs_axes(const sy_node *n, int32_t rank, int32_t *batch, int32_t *time)
{
    int64_t b = sy_attr_int_or(H, n, "batch_axis", 1), t = sy_attr_int_or(H, n, "time_axis", 0);
    if ((b != 0 && b != 1) || (t != 0 && t != 1) || b == t)
        return ERR(SY_ERR_INVALID_ARGUMENT, "batch_axis (%lld) and time_axis (%lld) must be 0 and 1 in some order",
                   (long long)b, (long long)t);
    if (rank < 2)
        return ERR(SY_ERR_SHAPE, "input must have rank >= 2, got %d", (int)rank);
    *batch = (int32_t)b;
    *time = (int32_t)t;
    return NULL;
}

static sy_status *infer_reverse_sequence(sy_node *n)
{
    const sy_tensor *x, *sl;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &sl));
    int32_t b, t;
    SY_TRY(rs_axes(n, x->rank, &b, &t));
    if (sl->dtype != SY_DT_INT64)
        return ERR(SY_ERR_TYPE, "sequence_lens must be int64, got %s", sy_dt_name(sl->dtype));
    if (sl->rank != 1 || sl->dims[0] != x->dims[b])
        return ERR(SY_ERR_SHAPE, "sequence_lens must be 1-D of the batch size %lld", (long long)x->dims[b]);
    return sy_infer_unary(H, n);
}

static sy_status *prepare_reverse_sequence(sy_node *n, void **state)
{
    scatter_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    int32_t b, t;
    sy_status *st = rs_axes(n, H->node_input(n, 0)->rank, &b, &t);
    if (st) {
        free(s);
        return st;
    }
    s->axis = t;
    s->batch_dims = b;
    *state = s;
    return NULL;
}

static sy_status *run_reverse_sequence(void *state, const sy_kernel_io *io)
{
    const scatter_state *s = state;
    const sy_tensor *x = io->inputs[0], *sl = io->inputs[1];
    sy_tensor *y = io->outputs[0];
    size_t es = sy_dt_size(x->dtype);
    int64_t xs[SY_MAX_RANK];
    sy_strides(x->rank, x->dims, xs);
    int64_t T = x->dims[s->axis], B = x->dims[s->batch_dims];
    int64_t inner = sy_dims_prod(x->dims, 2, x->rank) * (int64_t)es;
    const int64_t *lens = sl->data;
    for (int64_t bi = 0; bi < B; bi++) {
        int64_t len = lens[bi];
        if (len < 0 || len > T)
            return ERR(SY_ERR_RUNTIME, "sequence_lens[%lld] = %lld is outside [0, %lld]", (long long)bi,
                       (long long)len, (long long)T);
        for (int64_t ti = 0; ti < T; ti++) {
            int64_t src_t = ti < len ? len - 1 - ti : ti;
            int64_t so = (src_t * xs[s->axis] + bi * xs[s->batch_dims]) * (int64_t)es;
            int64_t dofs = (ti * xs[s->axis] + bi * xs[s->batch_dims]) * (int64_t)es;
            memcpy((char *)y->data + dofs, (const char *)x->data + so, (size_t)inner);
        }
    }
    return NULL;
}

/* ======================================================================== */
/* Unique: plugin_sdk/kernels/tflk_unique.c (the kernel riscv_mcu runs)     */
/* ======================================================================== */

/* the kernel's element code of dt; 0: none */
static int32_t uniq_code(sy_dtype dt)
{
    switch (dt) {
    case SY_DT_FLOAT32: return TFLK_F32;
    case SY_DT_FLOAT64: return TFLK_F64;
    case SY_DT_FLOAT16: return TFLK_F16;
    case SY_DT_BFLOAT16: return TFLK_BF16;
    case SY_DT_INT8: return TFLK_S8;
    case SY_DT_UINT8: return TFLK_U8;
    case SY_DT_BOOL: return TFLK_BOOL;
    case SY_DT_INT16: return TFLK_S16;
    case SY_DT_UINT16: return TFLK_U16;
    case SY_DT_INT32: return TFLK_S32;
    case SY_DT_UINT32: return TFLK_U32;
    case SY_DT_INT64: return TFLK_S64;
    case SY_DT_UINT64: return TFLK_U64;
    default: return 0;
    }
}

/* the kernel's items for x (axis attribute or the flattened input); *axis -1 without one */
static sy_status *unique_view(const sy_node *n, const sy_tensor *x, tflk_unique *v, int32_t *axis)
{
    memset(v, 0, sizeof *v);
    v->dt = uniq_code(x->dtype);
    if (!v->dt)
        return ERR(SY_ERR_UNSUPPORTED, "Unique of %s is not supported", sy_dt_name(x->dtype));
    *axis = -1;
    int64_t outer = 1, items = sy_tensor_numel(x), inner = 1;
    if (sy_attr_has(H, n, "axis", SY_ATTR_INT)) {
        SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", 0), x->rank, false, "axis", axis));
        outer = sy_dims_prod(x->dims, 0, *axis);
        items = x->dims[*axis];
        inner = sy_dims_prod(x->dims, *axis + 1, x->rank);
    }
    if (sy_tensor_numel(x) >= (int64_t)1 << 30)
        return ERR(SY_ERR_UNSUPPORTED, "Unique of 2^30 elements or more is not supported");
    v->outer = (int32_t)outer;
    v->n_items = (int32_t)items;
    v->inner = (int32_t)inner;
    v->sorted = sy_attr_int_or(H, n, "sorted", 1) != 0;
    v->idx64 = 1; /* ONNX's indices are int64 */
    return NULL;
}

static sy_status *infer_unique(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    tflk_unique v;
    int32_t axis;
    SY_TRY(unique_view(n, x, &v, &axis));
    /* before the run: Y, indices and counts at their bound, as many values
     * as items, when the core plans them so (nobody reads them; ABI 1.6) */
    bool bounded = !x->data;
    if (bounded && !sy_host_has_bounded_outputs(H))
        return ERR(SY_ERR_DYNAMIC_SHAPE, "the number of unique values is not known before the run");
    int64_t u = v.n_items, ni = v.n_items;
    if (!bounded) {
        void *buf = malloc(tflk_unique_scratch_bytes(&v) + 1);
        if (!buf)
            return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
        u = tflk_unique_run(&v, x->data, NULL, NULL, NULL, NULL, buf);
        free(buf);
    }
    int64_t dims[SY_MAX_RANK];
    if (axis >= 0) {
        memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
        dims[axis] = u;
        SY_TRY(H->node_set_output(n, 0, x->dtype, x->rank, dims));
    } else {
        SY_TRY(H->node_set_output(n, 0, x->dtype, 1, &u));
    }
    uint32_t no = H->node_num_outputs(n);
    if (no > 1)
        SY_TRY(H->node_set_output(n, 1, SY_DT_INT64, 1, &u));
    if (no > 2)
        SY_TRY(H->node_set_output(n, 2, SY_DT_INT64, 1, &ni));
    if (no > 3)
        SY_TRY(H->node_set_output(n, 3, SY_DT_INT64, 1, &u));
    for (uint32_t i = 0; bounded && i < no; i++)
        if (i != 2) /* inverse_indices has one entry per item whatever the count */
            SY_TRY(H->node_bound_output(n, i));
    return NULL;
}

/* the kernel's view and whether Y, indices and counts are planned at their bound */
typedef struct unique_state {
    tflk_unique v;
    int32_t axis; /* Y's axis of values, 0 without the attribute */
    bool bounded;
} unique_state;

static sy_status *prepare_unique(sy_node *n, void **state)
{
    unique_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    int32_t axis;
    sy_status *st = unique_view(n, H->node_input(n, 0), &s->v, &axis);
    if (st) {
        free(s);
        return st;
    }
    s->axis = axis < 0 ? 0 : axis;
    s->bounded = sy_host_has_bounded_outputs(H) && H->node_output_bounded(n, 0);
    H->node_set_scratch(n, tflk_unique_scratch_bytes(&s->v) + 1);
    *state = s;
    return NULL;
}

static void *out_or_null(const sy_kernel_io *io, uint32_t i)
{
    return io->n_outputs > i && io->outputs[i] ? io->outputs[i]->data : NULL;
}

static sy_status *run_unique(void *state, const sy_kernel_io *io)
{
    const unique_state *us = state;
    const tflk_unique *s = &us->v;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    /* Y was planned for the count infer found (a node-by-node session
     * re-infers with the data at hand), or at its bound */
    void *scratch = io->scratch;
    int32_t u = tflk_unique_run(s, x->data, NULL, NULL, NULL, NULL, scratch);
    int64_t slab = (int64_t)s->outer * s->inner; /* 0: Y is empty whatever the count */
    int64_t planned = slab > 0 ? sy_tensor_numel(y) / slab : u;
    if (us->bounded ? u > planned : u != planned)
        return ERR(SY_ERR_RUNTIME, "Unique found %d values but the output was planned for %s%lld", (int)u,
                   us->bounded ? "at most " : "", (long long)planned);
    tflk_unique_run(s, x->data, y->data, out_or_null(io, 1), out_or_null(io, 2), out_or_null(io, 3), scratch);
    if (us->bounded) {
        sy_bound_set_len(y, y->rank == x->rank ? us->axis : 0, u);
        for (uint32_t i = 1; i < io->n_outputs; i++)
            if (i != 2 && io->outputs[i])
                sy_bound_set_len(io->outputs[i], 0, u);
    }
    return NULL;
}

/* ======================================================================== */
/* NonZero / Compress                                                       */
/* ======================================================================== */

static int64_t count_nonzero(const sy_tensor *x, int64_t limit)
{
    int64_t n = sy_tensor_numel(x), c = 0;
    if (limit >= 0 && limit < n)
        n = limit;
    for (int64_t i = 0; i < n; i++)
        c += sy_load_f64(x->data, x->dtype, (size_t)i) != 0.0;
    return c;
}

static sy_status *infer_nonzero(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (!sy_dt_size(x->dtype))
        return ERR(SY_ERR_UNSUPPORTED, "NonZero of %s is not supported", sy_dt_name(x->dtype));
    if (!x->data)
        return ERR(SY_ERR_DYNAMIC_SHAPE, "the number of non-zero values is not known before the run");
    int64_t dims[2] = {x->rank, count_nonzero(x, -1)};
    return H->node_set_output(n, 0, SY_DT_INT64, 2, dims);
}

static sy_status *run_nonzero(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    int64_t nnz = y->dims[1], total = sy_tensor_numel(x), idx[SY_MAX_RANK] = {0}, c = 0;
    int64_t *out = y->data;
    for (int64_t i = 0; i < total; i++) {
        if (sy_load_f64(x->data, x->dtype, (size_t)i) != 0.0) {
            if (c >= nnz)
                return ERR(SY_ERR_RUNTIME, "NonZero found more values than planned (%lld)", (long long)nnz);
            for (int32_t d = 0; d < x->rank; d++)
                out[d * nnz + c] = idx[d];
            c++;
        }
        sy_index_next(x->rank, x->dims, idx);
    }
    return NULL;
}

static sy_status *infer_compress(sy_node *n)
{
    const sy_tensor *x, *c;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &c));
    if (c->dtype != SY_DT_BOOL)
        return ERR(SY_ERR_TYPE, "condition must be bool, got %s", sy_dt_name(c->dtype));
    if (c->rank != 1)
        return ERR(SY_ERR_SHAPE, "condition must be 1-D, got rank %d", (int)c->rank);
    bool has_axis = sy_attr_has(H, n, "axis", SY_ATTR_INT);
    int32_t axis = -1;
    if (has_axis)
        SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", 0), x->rank, false, "axis", &axis));
    int64_t len = has_axis ? x->dims[axis] : sy_tensor_numel(x);
    if (c->dims[0] > len)
        return ERR(SY_ERR_SHAPE, "condition has %lld entries but the selected axis has %lld", (long long)c->dims[0],
                   (long long)len);
    if (!c->data)
        return ERR(SY_ERR_DYNAMIC_SHAPE, "condition is not known before the run");
    int64_t k = count_nonzero(c, -1);
    if (!has_axis)
        return H->node_set_output(n, 0, x->dtype, 1, &k);
    int64_t dims[SY_MAX_RANK];
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    dims[axis] = k;
    return H->node_set_output(n, 0, x->dtype, x->rank, dims);
}

/* Compress's axis attribute */
typedef struct axis_state {
    bool has_axis;
    int64_t axis_attr;
} axis_state;

static sy_status *prepare_axis_attr(sy_node *n, void **state)
{
    axis_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->has_axis = sy_attr_has(H, n, "axis", SY_ATTR_INT);
    s->axis_attr = sy_attr_int_or(H, n, "axis", 0);
    *state = s;
    return NULL;
}

static sy_status *run_compress(void *state, const sy_kernel_io *io)
{
    const axis_state *s = state;
    const sy_tensor *x = io->inputs[0], *c = io->inputs[1];
    size_t es = sy_dt_size(x->dtype);
    int64_t outer = 1, len = sy_tensor_numel(x), inner = 1;
    if (s->has_axis) {
        int32_t axis = (int32_t)(s->axis_attr < 0 ? s->axis_attr + x->rank : s->axis_attr);
        outer = sy_dims_prod(x->dims, 0, axis);
        len = x->dims[axis];
        inner = sy_dims_prod(x->dims, axis + 1, x->rank);
    }
    const uint8_t *cd = c->data;
    int64_t nc = c->dims[0] < len ? c->dims[0] : len;
    int64_t blk = inner * (int64_t)es;
    char *y = io->outputs[0]->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < nc; i++)
            if (cd[i]) {
                memcpy(y, (const char *)x->data + (o * len + i) * blk, (size_t)blk);
                y += blk;
            }
    return NULL;
}

/* ======================================================================== */
/* CenterCropPad                                                            */
/* ======================================================================== */

/* Per axis: source index = output index + off[d]; off = crop start
 * (dim - target) / 2 when cropping, -(target - dim) / 2 when padding (zeros). */
static sy_status *ccp_geometry(const sy_node *n, const sy_tensor *x, const sy_tensor *sh, int64_t *dims, int64_t *off)
{
    if (sh->dtype != SY_DT_INT64 && sh->dtype != SY_DT_INT32)
        return ERR(SY_ERR_TYPE, "shape must be int32 or int64, got %s", sy_dt_name(sh->dtype));
    if (sh->rank != 1)
        return ERR(SY_ERR_SHAPE, "shape must be 1-D");
    if (!sh->data)
        return ERR(SY_ERR_DYNAMIC_SHAPE, "shape is not known before the run");
    int64_t axes[SY_MAX_RANK + 1];
    int64_t na = sy_attr_ints_copy(H, n, "axes", axes, SY_MAX_RANK + 1);
    if (na < 0) {
        na = x->rank;
        for (int64_t i = 0; i < na; i++)
            axes[i] = i;
    }
    if (na > SY_MAX_RANK || sh->dims[0] != na)
        return ERR(SY_ERR_SHAPE, "shape has %lld values but %lld axes are cropped/padded", (long long)sh->dims[0],
                   (long long)na);
    for (int32_t d = 0; d < x->rank; d++) {
        dims[d] = x->dims[d];
        off[d] = 0;
    }
    bool seen[SY_MAX_RANK] = {false};
    for (int64_t i = 0; i < na; i++) {
        int32_t a;
        SY_TRY(sy_norm_axis(H, axes[i], x->rank, false, "axes value", &a));
        if (seen[a])
            return ERR(SY_ERR_SHAPE, "axis %d is listed twice in axes", (int)a);
        seen[a] = true;
        int64_t t = index_at(sh, i), dim = x->dims[a];
        if (t < 0)
            return ERR(SY_ERR_SHAPE, "shape[%lld] = %lld is negative", (long long)i, (long long)t);
        dims[a] = t;
        off[a] = t < dim ? (dim - t) / 2 : -((t - dim) / 2);
    }
    return NULL;
}

static sy_status *infer_ccp(sy_node *n)
{
    const sy_tensor *x, *sh;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &sh));
    int64_t dims[SY_MAX_RANK], off[SY_MAX_RANK];
    SY_TRY(ccp_geometry(n, x, sh, dims, off));
    return H->node_set_output(n, 0, x->dtype, x->rank, dims);
}

typedef struct ccp_state {
    int64_t off[SY_MAX_RANK];
} ccp_state;

static sy_status *prepare_ccp(sy_node *n, void **state)
{
    ccp_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    int64_t dims[SY_MAX_RANK];
    sy_status *st = ccp_geometry(n, H->node_input(n, 0), H->node_input(n, 1), dims, s->off);
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static sy_status *run_ccp(void *state, const sy_kernel_io *io)
{
    const ccp_state *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    size_t es = sy_dt_size(x->dtype);
    int64_t total = sy_tensor_numel(y), xs[SY_MAX_RANK], idx[SY_MAX_RANK] = {0};
    sy_strides(x->rank, x->dims, xs);
    for (int64_t j = 0; j < total; j++) {
        int64_t off = 0;
        bool in = true;
        for (int32_t d = 0; d < x->rank && in; d++) {
            int64_t si = idx[d] + s->off[d];
            in = si >= 0 && si < x->dims[d];
            off += si * xs[d];
        }
        char *dst = (char *)y->data + j * (int64_t)es;
        if (in)
            memcpy(dst, (const char *)x->data + off * (int64_t)es, es);
        else
            memset(dst, 0, es);
        sy_index_next(y->rank, y->dims, idx);
    }
    return NULL;
}

/* ======================================================================== */
/* tables                                                                   */
/* ======================================================================== */

static const sy_attr_def a_axis[] = {{"axis", SY_ATTR_INT, false}};
static const sy_attr_def a_axis_red[] = {{"axis", SY_ATTR_INT, false}, {"reduction", SY_ATTR_STRING, false}};
static const sy_attr_def a_red[] = {{"reduction", SY_ATTR_STRING, false}};
static const sy_attr_def a_batch_dims[] = {{"batch_dims", SY_ATTR_INT, false}};
static const sy_attr_def a_upper[] = {{"upper", SY_ATTR_INT, false}};
static const sy_attr_def a_rs[] = {{"batch_axis", SY_ATTR_INT, false}, {"time_axis", SY_ATTR_INT, false}};
static const sy_attr_def a_axes[] = {{"axes", SY_ATTR_INTS, false}};
static const sy_attr_def a_unique[] = {{"axis", SY_ATTR_INT, false}, {"sorted", SY_ATTR_INT, false}};

#define OP(op, since, mi, ma, mo, mao, attrs, infer) SY_SCHEMA(op, since, mi, ma, mo, mao, attrs, infer, SY_NO_INPLACE, 0)
#define DYN(op, since, mi, ma, mo, mao, attrs, infer)                                                              \
    SY_SCHEMA(op, since, mi, ma, mo, mao, attrs, infer, SY_NO_INPLACE, SY_SCHEMA_DATA_DEPENDENT_SHAPE)

static const sy_op_schema schemas[] = {
    OP("Scatter", 9, 3, 3, 1, 1, SY_ATTRS(a_axis), infer_scatter_elements),
    OP("Scatter", 11, 3, 3, 1, 1, SY_ATTRS(a_axis), infer_scatter_elements),
    OP("ScatterElements", 11, 3, 3, 1, 1, SY_ATTRS(a_axis), infer_scatter_elements),
    OP("ScatterElements", 13, 3, 3, 1, 1, SY_ATTRS(a_axis), infer_scatter_elements),
    OP("ScatterElements", 16, 3, 3, 1, 1, SY_ATTRS(a_axis_red), infer_scatter_elements),
    OP("ScatterElements", 18, 3, 3, 1, 1, SY_ATTRS(a_axis_red), infer_scatter_elements),
    OP("ScatterND", 11, 3, 3, 1, 1, SY_NO_ATTRS, infer_scatter_nd),
    OP("ScatterND", 13, 3, 3, 1, 1, SY_NO_ATTRS, infer_scatter_nd),
    OP("ScatterND", 16, 3, 3, 1, 1, SY_ATTRS(a_red), infer_scatter_nd),
    OP("ScatterND", 18, 3, 3, 1, 1, SY_ATTRS(a_red), infer_scatter_nd),
    OP("GatherND", 11, 2, 2, 1, 1, SY_NO_ATTRS, infer_gather_nd),
    OP("GatherND", 12, 2, 2, 1, 1, SY_ATTRS(a_batch_dims), infer_gather_nd),
    OP("GatherND", 13, 2, 2, 1, 1, SY_ATTRS(a_batch_dims), infer_gather_nd),
    OP("OneHot", 9, 3, 3, 1, 1, SY_ATTRS(a_axis), infer_onehot),
    OP("OneHot", 11, 3, 3, 1, 1, SY_ATTRS(a_axis), infer_onehot),
    OP("Trilu", 14, 1, 2, 1, 1, SY_ATTRS(a_upper), infer_trilu),
    OP("CenterCropPad", 18, 2, 2, 1, 1, SY_ATTRS(a_axes), infer_ccp),
    OP("ReverseSequence", 10, 2, 2, 1, 1, SY_ATTRS(a_rs), infer_reverse_sequence),
    DYN("Unique", 11, 1, 1, 1, 4, SY_ATTRS(a_unique), infer_unique),
    DYN("NonZero", 9, 1, 1, 1, 1, SY_NO_ATTRS, infer_nonzero),
    DYN("NonZero", 13, 1, 1, 1, 1, SY_NO_ATTRS, infer_nonzero),
    DYN("Compress", 9, 2, 2, 1, 1, SY_ATTRS(a_axis), infer_compress),
    DYN("Compress", 11, 2, 2, 1, 1, SY_ATTRS(a_axis), infer_compress),
};

#define ALL SY_DT_MASK_PLAIN
#define K(op, mask, ti, prep, run) SY_CPU_KERNEL(op, 1, 0, mask, ti, prep, run, sy_release_free)
#define KN(op, mask, ti, run) SY_CPU_KERNEL(op, 1, 0, mask, ti, sy_prepare_nothing, run, NULL)

static const sy_kernel_def kernels[] = {
    K("Scatter", ALL, 0, prepare_scatter, run_scatter_elements),
    K("ScatterElements", ALL, 0, prepare_scatter, run_scatter_elements),
    K("ScatterND", ALL, 0, prepare_scatter, run_scatter_nd),
    K("GatherND", ALL, 0, prepare_scatter, run_gather_nd),
    K("OneHot", ALL, 2, prepare_onehot, run_onehot),
    K("Trilu", ALL, 0, prepare_trilu, run_trilu),
    K("CenterCropPad", ALL, 0, prepare_ccp, run_ccp),
    K("ReverseSequence", ALL, 0, prepare_reverse_sequence, run_reverse_sequence),
    K("Unique", ALL, 0, prepare_unique, run_unique),
    KN("NonZero", ALL, 0, run_nonzero),
    K("Compress", ALL, 0, prepare_axis_attr, run_compress),
};

sy_status *tensor_index_register(const sy_host_api *host, sy_plugin *p)
{
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
