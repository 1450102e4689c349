/*
 * ops_tensor: shape manipulation and data movement of the default ONNX
 * domain, cpu_ref kernels for every fixed-size dtype (int64 shape subgraphs
 * included).
 *
 * Views (output aliases input 0): Reshape Flatten Squeeze Unsqueeze Identity
 * Movement: Transpose Concat Split Slice Gather GatherElements Expand Tile Pad
 *           Where DepthToSpace SpaceToDepth
 * Sources: Shape Size Constant ConstantOfShape Range EyeLike
 * Conversion: Cast CastLike BitCast
 * index.c: Scatter ScatterElements ScatterND GatherND OneHot Trilu
 *          ReverseSequence Unique NonZero Compress
 */
#include "tensor_internal.h"

#include <math.h>
#include <stdlib.h>

static const sy_host_api *H; /* process-wide: the same host table in every environment */

#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

static void *zalloc(size_t n) { return calloc(1, n); }
#define NEW_STATE(type, var)                                                                                       \
    type *var = zalloc(sizeof(type));                                                                              \
    if (!var)                                                                                                      \
    return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory")

/* An int list from input `idx` (data required) or DYNAMIC. */
static sy_status *input_ints(const sy_node *n, uint32_t idx, const char *what, int64_t *out, int64_t *count,
                             size_t max)
{
    const sy_tensor *t = idx < H->node_num_inputs(n) ? H->node_input(n, idx) : NULL;
    if (!t) {
        *count = -1;
        return NULL;
    }
    if (t->dtype != SY_DT_INT64 && t->dtype != SY_DT_INT32)
        return ERR(SY_ERR_TYPE, "%s must be int64 (or int32), got %s", what, sy_dt_name(t->dtype));
    if (t->rank > 1)
        return ERR(SY_ERR_SHAPE, "%s must be a 1-D tensor, got rank %d", what, (int)t->rank);
    if (!t->data)
        return ERR(SY_ERR_DYNAMIC_SHAPE, "%s is not known before the run", what);
    int64_t c = sy_tensor_read_ints(t, out, max);
    if (c < 0 || (size_t)c > max)
        return ERR(SY_ERR_SHAPE, "%s has %lld values, at most %zu are supported", what, (long long)c, max);
    *count = c;
    return NULL;
}

/* Same as input_ints but from a kernel tensor at run time. */
static int64_t run_ints(const sy_tensor *t, int64_t *out, size_t max)
{
    if (!t)
        return -1;
    int64_t c = sy_tensor_read_ints(t, out, max);
    return (c >= 0 && (size_t)c <= max) ? c : -2;
}

/* ======================================================================== */
/* Reshape                                                                  */
/* ======================================================================== */

static sy_status *reshape_dims(const sy_tensor *x, const int64_t *shape, int64_t n, bool allowzero, int32_t *rank,
                               int64_t *dims)
{
    if (n > SY_MAX_RANK)
        return ERR(SY_ERR_UNSUPPORTED, "shape has %lld dims, at most %d are supported", (long long)n, SY_MAX_RANK);
    int neg = -1;
    int64_t known = 1;
    for (int64_t i = 0; i < n; i++) {
        int64_t d = shape[i];
        if (d == -1) {
            if (neg >= 0)
                return ERR(SY_ERR_SHAPE, "shape may contain at most one -1 (dims %d and %lld)", neg, (long long)i);
            neg = (int)i;
            dims[i] = 1;
            continue;
        }
        if (d < -1)
            return ERR(SY_ERR_SHAPE, "shape[%lld] = %lld is invalid (dims must be >= -1)", (long long)i, (long long)d);
        if (d == 0 && !allowzero) {
            if (i >= x->rank)
                return ERR(SY_ERR_SHAPE, "shape[%lld] = 0 copies input dim %lld, but the input has rank %d",
                           (long long)i, (long long)i, (int)x->rank);
            d = x->dims[i];
        }
        dims[i] = d;
        if (__builtin_mul_overflow(known, d, &known))
            return ERR(SY_ERR_SHAPE, "shape's element count overflows at shape[%lld] = %lld", (long long)i,
                       (long long)d);
    }
    int64_t total = sy_tensor_numel(x);
    if (neg >= 0) {
        if (known == 0 || total % known != 0) {
            char b[96];
            return ERR(SY_ERR_SHAPE, "cannot infer the -1 dim: %lld elements of input %s do not divide by %lld",
                       (long long)total, sy_shape_str(x->rank, x->dims, b, sizeof b), (long long)known);
        }
        dims[neg] = total / known;
        known *= dims[neg];
    }
    if (known != total) {
        char b1[96], b2[96];
        return ERR(SY_ERR_SHAPE, "reshape must keep the element count: input %s has %lld, shape %s has %lld",
                   sy_shape_str(x->rank, x->dims, b1, sizeof b1), (long long)total,
                   sy_shape_str((int32_t)n, dims, b2, sizeof b2), (long long)known);
    }
    *rank = (int32_t)n;
    return NULL;
}

static sy_status *infer_reshape(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int64_t shape[SY_MAX_RANK + 1], cnt;
    if (H->node_opset(n) < 5) {
        cnt = sy_attr_ints_copy(H, n, "shape", shape, SY_MAX_RANK + 1);
        if (cnt < 0)
            return ERR(SY_ERR_INVALID_ARGUMENT, "attribute 'shape' is required before opset 5");
    } else {
        SY_TRY(input_ints(n, 1, "shape", shape, &cnt, SY_MAX_RANK + 1));
        if (cnt < 0)
            return ERR(SY_ERR_INVALID_ARGUMENT, "input 'shape' is required");
    }
    bool allowzero = sy_attr_int_or(H, n, "allowzero", 0) != 0;
    int32_t r = 0;
    int64_t dims[SY_MAX_RANK];
    SY_TRY(reshape_dims(x, shape, cnt, allowzero, &r, dims));
    return H->node_set_output(n, 0, x->dtype, r, dims);
}

/* ======================================================================== */
/* Flatten / Squeeze / Unsqueeze / Identity                                 */
/* ======================================================================== */

static sy_status *infer_flatten(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int32_t axis;
    SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", 1), x->rank, true, "axis", &axis));
    int64_t dims[2] = {sy_dims_prod(x->dims, 0, axis), sy_dims_prod(x->dims, axis, x->rank)};
    return H->node_set_output(n, 0, x->dtype, 2, dims);
}

static sy_status *get_axes(sy_node *n, int32_t attr_before, uint32_t input_idx, int64_t *axes, int64_t *cnt)
{
    if (H->node_opset(n) < attr_before) {
        *cnt = sy_attr_ints_copy(H, n, "axes", axes, SY_MAX_RANK + 1);
        if (*cnt > SY_MAX_RANK)
            return ERR(SY_ERR_SHAPE, "too many axes (%lld)", (long long)*cnt);
        return NULL;
    }
    return input_ints(n, input_idx, "axes", axes, cnt, SY_MAX_RANK);
}

static sy_status *infer_squeeze(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int64_t axes[SY_MAX_RANK + 1], cnt;
    SY_TRY(get_axes(n, 13, 1, axes, &cnt));
    bool drop[SY_MAX_RANK] = {false};
    if (cnt < 0) { /* no axes: all dims of size 1 */
        for (int32_t d = 0; d < x->rank; d++)
            drop[d] = x->dims[d] == 1;
    } else {
        for (int64_t i = 0; i < cnt; i++) {
            int32_t a;
            SY_TRY(sy_norm_axis(H, axes[i], x->rank, false, "axes value", &a));
            if (x->dims[a] != 1)
                return ERR(SY_ERR_SHAPE, "cannot squeeze axis %d: its size is %lld, not 1", (int)a, (long long)x->dims[a]);
            if (drop[a])
                return ERR(SY_ERR_SHAPE, "axis %d is listed twice in axes", (int)a);
            drop[a] = true;
        }
    }
    int64_t dims[SY_MAX_RANK];
    int32_t r = 0;
    for (int32_t d = 0; d < x->rank; d++)
        if (!drop[d])
            dims[r++] = x->dims[d];
    return H->node_set_output(n, 0, x->dtype, r, dims);
}

static sy_status *infer_unsqueeze(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int64_t axes[SY_MAX_RANK + 1], cnt;
    SY_TRY(get_axes(n, 13, 1, axes, &cnt));
    if (cnt < 0)
        return ERR(SY_ERR_INVALID_ARGUMENT, "axes are required");
    int64_t outr = x->rank + cnt;
    if (outr > SY_MAX_RANK)
        return ERR(SY_ERR_UNSUPPORTED, "output rank %lld exceeds %d", (long long)outr, SY_MAX_RANK);
    bool ins[SY_MAX_RANK] = {false};
    for (int64_t i = 0; i < cnt; i++) {
        int32_t a;
        SY_TRY(sy_norm_axis(H, axes[i], (int32_t)outr, false, "axes value", &a));
        if (ins[a])
            return ERR(SY_ERR_SHAPE, "axis %d is listed twice in axes", (int)a);
        ins[a] = true;
    }
    int64_t dims[SY_MAX_RANK];
    int32_t k = 0;
    for (int32_t d = 0; d < outr; d++)
        dims[d] = ins[d] ? 1 : x->dims[k++];
    return H->node_set_output(n, 0, x->dtype, (int32_t)outr, dims);
}

static sy_status *infer_identity(sy_node *n) { return sy_infer_unary(H, n); }

/* ======================================================================== */
/* Transpose                                                                */
/* ======================================================================== */

static sy_status *get_perm(const sy_node *n, int32_t rank, int32_t *perm)
{
    int64_t p[SY_MAX_RANK + 1];
    int64_t c = sy_attr_ints_copy(H, n, "perm", p, SY_MAX_RANK + 1);
    if (c < 0) {
        for (int32_t i = 0; i < rank; i++)
            perm[i] = rank - 1 - i;
        return NULL;
    }
    if (c != rank)
        return ERR(SY_ERR_SHAPE, "perm has %lld entries but the input has rank %d", (long long)c, (int)rank);
    bool seen[SY_MAX_RANK] = {false};
    for (int32_t i = 0; i < rank; i++) {
        int32_t a;
        SY_TRY(sy_norm_axis(H, p[i], rank, false, "perm value", &a));
        if (seen[a])
            return ERR(SY_ERR_SHAPE, "perm is not a permutation: %d appears twice", (int)a);
        seen[a] = true;
        perm[i] = a;
    }
    return NULL;
}

static sy_status *infer_transpose(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int32_t perm[SY_MAX_RANK];
    SY_TRY(get_perm(n, x->rank, perm));
    int64_t dims[SY_MAX_RANK];
    for (int32_t i = 0; i < x->rank; i++)
        dims[i] = x->dims[perm[i]];
    return H->node_set_output(n, 0, x->dtype, x->rank, dims);
}

typedef struct perm_state {
    int32_t perm[SY_MAX_RANK];
} perm_state;

static sy_status *prepare_transpose(sy_node *n, void **state)
{
    NEW_STATE(perm_state, s);
    sy_status *st = get_perm(n, H->node_input(n, 0)->rank, s->perm);
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static sy_status *run_transpose(void *state, const sy_kernel_io *io)
{
    const perm_state *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    int64_t xs[SY_MAX_RANK], ss[SY_MAX_RANK], dims[SY_MAX_RANK];
    sy_strides(x->rank, x->dims, xs);
    /* collapse: drop size-1 output dims, merge runs that stay adjacent */
    int32_t r = 0;
    for (int32_t i = 0; i < x->rank; i++) {
        int64_t d = x->dims[s->perm[i]], st = xs[s->perm[i]];
        if (d == 1)
            continue;
        if (r > 0 && ss[r - 1] == st * d) {
            dims[r - 1] *= d;
            ss[r - 1] = st;
        } else {
            dims[r] = d;
            ss[r] = st;
            r++;
        }
    }
    size_t es = sy_dt_size(x->dtype);
    if (r == 0) {
        if (sy_tensor_numel(x) > 0)
            memcpy(y->data, x->data, es);
        return NULL;
    }
    sy_copy_strided(y->data, x->data, r, dims, ss, es);
    return NULL;
}

/* ======================================================================== */
/* Concat                                                                   */
/* ======================================================================== */

static sy_status *concat_axis(const sy_node *n, int32_t rank, int32_t *axis)
{
    int64_t a = sy_attr_int_or(H, n, "axis", 1); /* opset 1 default */
    if (H->node_opset(n) >= 4 && !sy_attr_has(H, n, "axis", SY_ATTR_INT))
        return ERR(SY_ERR_INVALID_ARGUMENT, "attribute 'axis' is required from opset 4");
    return sy_norm_axis(H, a, rank, false, "axis", axis);
}

static sy_status *infer_concat(sy_node *n)
{
    const sy_tensor *x0;
    SY_TRY(sy_need_input(H, n, 0, &x0));
    if (x0->rank == 0)
        return ERR(SY_ERR_SHAPE, "Concat inputs must have rank >= 1");
    int32_t axis;
    SY_TRY(concat_axis(n, x0->rank, &axis));
    SY_TRY(sy_check_same_dtype(H, n, -1));
    int64_t dims[SY_MAX_RANK];
    memcpy(dims, x0->dims, sizeof(int64_t) * (size_t)x0->rank);
    dims[axis] = 0;
    for (uint32_t i = 0; i < H->node_num_inputs(n); i++) {
        const sy_tensor *t;
        SY_TRY(sy_need_input(H, n, i, &t));
        if (t->rank != x0->rank)
            return ERR(SY_ERR_SHAPE, "all inputs must have the same rank: input %u has %d, input 0 has %d", i,
                       (int)t->rank, (int)x0->rank);
        for (int32_t d = 0; d < t->rank; d++)
            if (d != axis && t->dims[d] != x0->dims[d])
                return ERR(SY_ERR_SHAPE, "input %u dim %d is %lld but input 0 has %lld (only axis %d may differ)", i,
                           (int)d, (long long)t->dims[d], (long long)x0->dims[d], (int)axis);
        dims[axis] += t->dims[axis];
    }
    return H->node_set_output(n, 0, x0->dtype, x0->rank, dims);
}

typedef struct axis_state {
    int32_t axis;
} axis_state;

static sy_status *prepare_concat(sy_node *n, void **state)
{
    NEW_STATE(axis_state, s);
    sy_status *st = concat_axis(n, H->node_input(n, 0)->rank, &s->axis);
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static sy_status *run_concat(void *state, const sy_kernel_io *io)
{
    const axis_state *s = state;
    sy_tensor *y = io->outputs[0];
    size_t es = sy_dt_size(y->dtype);
    int64_t outer = sy_dims_prod(y->dims, 0, s->axis);
    int64_t ystride = sy_dims_prod(y->dims, s->axis, y->rank) * (int64_t)es;
    char *base = y->data;
    for (uint32_t i = 0; i < io->n_inputs; i++) {
        const sy_tensor *x = io->inputs[i];
        int64_t blk = sy_dims_prod(x->dims, s->axis, x->rank) * (int64_t)es;
        const char *src = x->data;
        for (int64_t o = 0; o < outer && blk > 0; o++)
            memcpy(base + o * ystride, src + o * blk, (size_t)blk);
        base += blk;
    }
    return NULL;
}

/* ======================================================================== */
/* Split                                                                    */
/* ======================================================================== */

/* sizes of each output along axis */
static sy_status *split_sizes(const sy_node *n, const sy_tensor *x, int32_t axis, int64_t *sizes, uint32_t nout,
                              const sy_tensor *split_in)
{
    int64_t sp[64], c = -1;
    if (nout > 64)
        return ERR(SY_ERR_UNSUPPORTED, "at most 64 outputs are supported");
    if (H->node_opset(n) < 13) {
        c = sy_attr_ints_copy(H, n, "split", sp, 64);
        if (c < 0 && split_in) {
            c = run_ints(split_in, sp, 64);
            if (c == -1 || (c < 0 && !split_in->data))
                return ERR(SY_ERR_DYNAMIC_SHAPE, "split is not known before the run");
        }
    } else if (split_in) {
        if (!split_in->data)
            return ERR(SY_ERR_DYNAMIC_SHAPE, "split is not known before the run");
        c = run_ints(split_in, sp, 64);
    }
    int64_t dim = x->dims[axis];
    if (c >= 0) {
        if ((uint64_t)c != nout)
            return ERR(SY_ERR_SHAPE, "split has %lld entries but the node has %u outputs", (long long)c, nout);
        int64_t sum = 0;
        for (uint32_t i = 0; i < nout; i++) {
            if (sp[i] < 0)
                return ERR(SY_ERR_SHAPE, "split[%u] = %lld is negative", i, (long long)sp[i]);
            sizes[i] = sp[i];
            sum += sp[i];
        }
        if (sum != dim)
            return ERR(SY_ERR_SHAPE, "split sums to %lld but axis %d has size %lld", (long long)sum, (int)axis,
                       (long long)dim);
        return NULL;
    }
    int64_t num = nout;
    if (H->node_opset(n) >= 18) {
        int64_t no = sy_attr_int_or(H, n, "num_outputs", -1);
        if (no < 0)
            return ERR(SY_ERR_INVALID_ARGUMENT, "either input 'split' or attribute 'num_outputs' is required");
        if (no != nout)
            return ERR(SY_ERR_SHAPE, "num_outputs = %lld but the node has %u outputs", (long long)no, nout);
        /* ceil split: the last chunk may be smaller */
        int64_t chunk = (dim + num - 1) / num;
        for (uint32_t i = 0; i < nout; i++) {
            int64_t left = dim - chunk * (int64_t)i;
            sizes[i] = left < 0 ? 0 : (left < chunk ? left : chunk);
        }
        return NULL;
    }
    if (dim % num != 0)
        return ERR(SY_ERR_SHAPE, "axis %d of size %lld does not split evenly into %lld outputs", (int)axis,
                   (long long)dim, (long long)num);
    for (uint32_t i = 0; i < nout; i++)
        sizes[i] = dim / num;
    return NULL;
}

static sy_status *infer_split(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int32_t axis;
    SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", 0), x->rank, false, "axis", &axis));
    uint32_t no = H->node_num_outputs(n);
    int64_t sizes[64];
    const sy_tensor *sp = H->node_num_inputs(n) > 1 ? H->node_input(n, 1) : NULL;
    SY_TRY(split_sizes(n, x, axis, sizes, no, sp));
    for (uint32_t i = 0; i < no; i++) {
        int64_t dims[SY_MAX_RANK];
        memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
        dims[axis] = sizes[i];
        SY_TRY(H->node_set_output(n, i, x->dtype, x->rank, dims));
    }
    return NULL;
}

static sy_status *prepare_split(sy_node *n, void **state)
{
    NEW_STATE(axis_state, s);
    sy_status *st = sy_norm_axis(H, sy_attr_int_or(H, n, "axis", 0), H->node_input(n, 0)->rank, false, "axis", &s->axis);
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static sy_status *run_split(void *state, const sy_kernel_io *io)
{
    const axis_state *s = state;
    const sy_tensor *x = io->inputs[0];
    size_t es = sy_dt_size(x->dtype);
    int64_t outer = sy_dims_prod(x->dims, 0, s->axis);
    int64_t xstride = sy_dims_prod(x->dims, s->axis, x->rank) * (int64_t)es;
    const char *base = x->data;
    for (uint32_t i = 0; i < io->n_outputs; i++) {
        sy_tensor *y = io->outputs[i];
        if (!y)
            continue;
        int64_t blk = sy_dims_prod(y->dims, s->axis, y->rank) * (int64_t)es;
        char *dst = y->data;
        for (int64_t o = 0; o < outer && blk > 0; o++)
            memcpy(dst + o * blk, base + o * xstride, (size_t)blk);
        base += blk;
    }
    return NULL;
}

/* ======================================================================== */
/* Slice                                                                    */
/* ======================================================================== */

typedef struct slice_geom {
    int64_t start[SY_MAX_RANK], step[SY_MAX_RANK], dims[SY_MAX_RANK];
} slice_geom;

static sy_status *slice_compute(const sy_tensor *x, const int64_t *starts, const int64_t *ends, const int64_t *axes,
                                const int64_t *steps, int64_t cnt, slice_geom *g)
{
    for (int32_t d = 0; d < x->rank; d++) {
        g->start[d] = 0;
        g->step[d] = 1;
        g->dims[d] = x->dims[d];
    }
    bool seen[SY_MAX_RANK] = {false};
    for (int64_t i = 0; i < cnt; i++) {
        int32_t a;
        if (axes)
            SY_TRY(sy_norm_axis(H, axes[i], x->rank, false, "axes value", &a));
        else if (i < x->rank)
            a = (int32_t)i;
        else
            return ERR(SY_ERR_SHAPE, "%lld starts given for rank %d", (long long)cnt, (int)x->rank);
        if (seen[a])
            return ERR(SY_ERR_SHAPE, "axis %d is sliced twice", (int)a);
        seen[a] = true;
        int64_t dim = x->dims[a], st = steps ? steps[i] : 1;
        if (st == 0)
            return ERR(SY_ERR_INVALID_ARGUMENT, "steps[%lld] is 0", (long long)i);
        int64_t s = starts[i], e = ends[i];
        if (s < 0)
            s += dim;
        if (e < 0)
            e += dim;
        if (st > 0) {
            s = s < 0 ? 0 : (s > dim ? dim : s);
            e = e < 0 ? 0 : (e > dim ? dim : e);
            g->dims[a] = e > s ? (e - s + st - 1) / st : 0;
        } else {
            s = s < 0 ? 0 : (s > dim - 1 ? dim - 1 : s);
            e = e < -1 ? -1 : (e > dim - 1 ? dim - 1 : e);
            g->dims[a] = s > e ? (s - e + (-st) - 1) / (-st) : 0;
        }
        g->start[a] = s;
        g->step[a] = st;
    }
    return NULL;
}

typedef struct slice_state {
    bool from_attrs;
    int64_t cnt;
    int64_t starts[SY_MAX_RANK], ends[SY_MAX_RANK], axes[SY_MAX_RANK];
    bool has_axes;
} slice_state;

static sy_status *slice_attr_params(const sy_node *n, slice_state *s)
{
    int64_t c1 = sy_attr_ints_copy(H, n, "starts", s->starts, SY_MAX_RANK);
    int64_t c2 = sy_attr_ints_copy(H, n, "ends", s->ends, SY_MAX_RANK);
    int64_t c3 = sy_attr_ints_copy(H, n, "axes", s->axes, SY_MAX_RANK);
    if (c1 < 0 || c2 < 0)
        return ERR(SY_ERR_INVALID_ARGUMENT, "attributes 'starts' and 'ends' are required before opset 10");
    if (c1 != c2 || (c3 >= 0 && c3 != c1) || c1 > SY_MAX_RANK)
        return ERR(SY_ERR_SHAPE, "starts, ends and axes must have the same length (%lld, %lld, %lld)", (long long)c1,
                   (long long)c2, (long long)c3);
    s->cnt = c1;
    s->has_axes = c3 >= 0;
    s->from_attrs = true;
    return NULL;
}

/* slice parameters from inputs 1..4 (opset 10+) */
static sy_status *slice_input_params(const sy_tensor *x, const sy_tensor *const *in, uint32_t nin, slice_geom *g)
{
    int64_t st[SY_MAX_RANK], en[SY_MAX_RANK], ax[SY_MAX_RANK], sp[SY_MAX_RANK];
    const sy_tensor *ts = nin > 1 ? in[1] : NULL, *te = nin > 2 ? in[2] : NULL;
    const sy_tensor *ta = nin > 3 ? in[3] : NULL, *tp = nin > 4 ? in[4] : NULL;
    if (!ts || !te)
        return ERR(SY_ERR_INVALID_ARGUMENT, "inputs 'starts' and 'ends' are required");
    if (!ts->data || !te->data || (ta && !ta->data) || (tp && !tp->data))
        return ERR(SY_ERR_DYNAMIC_SHAPE, "slice parameters are not known before the run");
    int64_t c1 = run_ints(ts, st, SY_MAX_RANK), c2 = run_ints(te, en, SY_MAX_RANK);
    int64_t c3 = ta ? run_ints(ta, ax, SY_MAX_RANK) : c1, c4 = tp ? run_ints(tp, sp, SY_MAX_RANK) : c1;
    if (c1 < 0 || c2 < 0 || c3 < 0 || c4 < 0)
        return ERR(SY_ERR_TYPE, "starts/ends/axes/steps must be 1-D int32/int64 with at most %d values", SY_MAX_RANK);
    if (c1 != c2 || c1 != c3 || c1 != c4)
        return ERR(SY_ERR_SHAPE, "starts, ends, axes and steps must have the same length (%lld, %lld, %lld, %lld)",
                   (long long)c1, (long long)c2, (long long)c3, (long long)c4);
    return slice_compute(x, st, en, ta ? ax : NULL, tp ? sp : NULL, c1, g);
}

static sy_status *infer_slice(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    slice_geom g;
    if (H->node_opset(n) < 10) {
        slice_state s;
        SY_TRY(slice_attr_params(n, &s));
        SY_TRY(slice_compute(x, s.starts, s.ends, s.has_axes ? s.axes : NULL, NULL, s.cnt, &g));
    } else {
        const sy_tensor *in[5] = {x, NULL, NULL, NULL, NULL};
        uint32_t nin = H->node_num_inputs(n);
        for (uint32_t i = 1; i < nin && i < 5; i++)
            in[i] = H->node_input(n, i);
        SY_TRY(slice_input_params(x, in, nin, &g));
    }
    return H->node_set_output(n, 0, x->dtype, x->rank, g.dims);
}

static sy_status *prepare_slice(sy_node *n, void **state)
{
    NEW_STATE(slice_state, s);
    if (H->node_opset(n) < 10) {
        sy_status *st = slice_attr_params(n, s);
        if (st) {
            free(s);
            return st;
        }
    }
    *state = s;
    return NULL;
}

static sy_status *run_slice(void *state, const sy_kernel_io *io)
{
    const slice_state *s = state;
    const sy_tensor *x = io->inputs[0];
    slice_geom g;
    if (s->from_attrs)
        SY_TRY(slice_compute(x, s->starts, s->ends, s->has_axes ? s->axes : NULL, NULL, s->cnt, &g));
    else
        SY_TRY(slice_input_params(x, io->inputs, io->n_inputs, &g));
    sy_tensor *y = io->outputs[0];
    if (sy_numel(x->rank, g.dims) == 0)
        return NULL;
    int64_t xs[SY_MAX_RANK], ss[SY_MAX_RANK];
    sy_strides(x->rank, x->dims, xs);
    size_t es = sy_dt_size(x->dtype);
    int64_t off = 0;
    for (int32_t d = 0; d < x->rank; d++) {
        off += g.start[d] * xs[d];
        ss[d] = xs[d] * g.step[d];
    }
    if (x->rank == 0) {
        memcpy(y->data, x->data, es);
        return NULL;
    }
    sy_copy_strided(y->data, (const char *)x->data + off * (int64_t)es, x->rank, g.dims, ss, es);
    return NULL;
}

/* ======================================================================== */
/* Gather / GatherElements                                                  */
/* ======================================================================== */

static sy_status *infer_gather(sy_node *n)
{
    const sy_tensor *x, *idx;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &idx));
    if (idx->dtype != SY_DT_INT64 && idx->dtype != SY_DT_INT32)
        return ERR(SY_ERR_TYPE, "indices must be int32 or int64, got %s", sy_dt_name(idx->dtype));
    if (x->rank < 1)
        return ERR(SY_ERR_SHAPE, "data must have rank >= 1");
    int32_t axis;
    SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", 0), x->rank, false, "axis", &axis));
    int32_t r = x->rank - 1 + idx->rank;
    if (r > SY_MAX_RANK)
        return ERR(SY_ERR_UNSUPPORTED, "output rank %d exceeds %d", (int)r, SY_MAX_RANK);
    int64_t dims[SY_MAX_RANK];
    int32_t k = 0;
    for (int32_t d = 0; d < axis; d++)
        dims[k++] = x->dims[d];
    for (int32_t d = 0; d < idx->rank; d++)
        dims[k++] = idx->dims[d];
    for (int32_t d = axis + 1; d < x->rank; d++)
        dims[k++] = x->dims[d];
    return H->node_set_output(n, 0, x->dtype, r, dims);
}

static sy_status *prepare_axis0(sy_node *n, void **state)
{
    NEW_STATE(axis_state, s);
    sy_status *st = sy_norm_axis(H, sy_attr_int_or(H, n, "axis", 0), H->node_input(n, 0)->rank, false, "axis", &s->axis);
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static sy_status *run_gather(void *state, const sy_kernel_io *io)
{
    const axis_state *s = state;
    const sy_tensor *x = io->inputs[0], *it = io->inputs[1];
    char *y = io->outputs[0]->data;
    size_t es = sy_dt_size(x->dtype);
    int64_t outer = sy_dims_prod(x->dims, 0, s->axis), ad = x->dims[s->axis];
    int64_t inner = sy_dims_prod(x->dims, s->axis + 1, x->rank) * (int64_t)es;
    int64_t ni = sy_tensor_numel(it);
    const char *xd = x->data;
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t j = 0; j < ni; j++) {
            int64_t k = it->dtype == SY_DT_INT64 ? ((const int64_t *)it->data)[j] : ((const int32_t *)it->data)[j];
            if (k < 0)
                k += ad;
            if (k < 0 || k >= ad)
                return ERR(SY_ERR_RUNTIME, "index %lld is out of range for axis %d of size %lld",
                           (long long)(k < 0 ? k - ad : k), (int)s->axis, (long long)ad);
            memcpy(y, xd + (o * ad + k) * inner, (size_t)inner);
            y += inner;
        }
    }
    return NULL;
}

static sy_status *infer_gather_elements(sy_node *n)
{
    const sy_tensor *x, *idx;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &idx));
    if (idx->dtype != SY_DT_INT64 && idx->dtype != SY_DT_INT32)
        return ERR(SY_ERR_TYPE, "indices must be int32 or int64, got %s", sy_dt_name(idx->dtype));
    if (idx->rank != x->rank || x->rank < 1)
        return ERR(SY_ERR_SHAPE, "indices must have the rank of data (%d), got %d", (int)x->rank, (int)idx->rank);
    int32_t axis;
    SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", 0), x->rank, false, "axis", &axis));
    return H->node_set_output(n, 0, x->dtype, idx->rank, idx->dims);
}

static sy_status *run_gather_elements(void *state, const sy_kernel_io *io)
{
    const axis_state *s = state;
    const sy_tensor *x = io->inputs[0], *it = io->inputs[1];
    char *y = io->outputs[0]->data;
    size_t es = sy_dt_size(x->dtype);
    int64_t xs[SY_MAX_RANK], idx[SY_MAX_RANK] = {0};
    sy_strides(x->rank, x->dims, xs);
    int64_t ni = sy_tensor_numel(it), ad = x->dims[s->axis];
    for (int64_t j = 0; j < ni; j++) {
        int64_t k = it->dtype == SY_DT_INT64 ? ((const int64_t *)it->data)[j] : ((const int32_t *)it->data)[j];
        if (k < 0)
            k += ad;
        if (k < 0 || k >= ad)
            return ERR(SY_ERR_RUNTIME, "index out of range for axis %d of size %lld", (int)s->axis, (long long)ad);
        int64_t off = 0;
        for (int32_t d = 0; d < x->rank; d++)
            off += (d == s->axis ? k : idx[d]) * xs[d];
        memcpy(y + j * (int64_t)es, (const char *)x->data + off * (int64_t)es, es);
        sy_index_next(it->rank, it->dims, idx);
    }
    return NULL;
}

/* ======================================================================== */
/* Shape / Size                                                             */
/* ======================================================================== */

static void shape_range(const sy_node *n, int32_t rank, int64_t *b, int64_t *e)
{
    int64_t s = sy_attr_int_or(H, n, "start", 0), en = sy_attr_int_or(H, n, "end", rank);
    if (s < 0)
        s += rank;
    if (en < 0)
        en += rank;
    s = s < 0 ? 0 : (s > rank ? rank : s);
    en = en < 0 ? 0 : (en > rank ? rank : en);
    *b = s;
    *e = en < s ? s : en;
}

static sy_status *infer_shape(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int64_t b, e;
    shape_range(n, x->rank, &b, &e);
    int64_t d = e - b;
    return H->node_set_output(n, 0, SY_DT_INT64, 1, &d);
}

typedef struct range_state {
    int64_t b, e;
} range_state;

static sy_status *prepare_shape(sy_node *n, void **state)
{
    NEW_STATE(range_state, s);
    shape_range(n, H->node_input(n, 0)->rank, &s->b, &s->e);
    *state = s;
    return NULL;
}

static sy_status *run_shape(void *state, const sy_kernel_io *io)
{
    const range_state *s = state;
    int64_t *y = io->outputs[0]->data;
    for (int64_t i = s->b; i < s->e; i++)
        y[i - s->b] = io->inputs[0]->dims[i];
    return NULL;
}

static sy_status *infer_size(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    return H->node_set_output(n, 0, SY_DT_INT64, 0, NULL);
}

static sy_status *run_size(void *state, const sy_kernel_io *io)
{
    (void)state;
    *(int64_t *)io->outputs[0]->data = sy_tensor_numel(io->inputs[0]);
    return NULL;
}

/* ======================================================================== */
/* Constant / ConstantOfShape                                               */
/* ======================================================================== */

typedef struct const_state {
    size_t nbytes;
    unsigned char data[];
} const_state;

/* Resolves the one value attribute into dtype/shape/bytes (not copied). */
static sy_status *constant_value(const sy_node *n, sy_dtype *dt, int32_t *rank, int64_t *dims, const void **data,
                                 size_t *nbytes, float *fbuf, int64_t *ibuf)
{
    const sy_tensor *t;
    const float *fs;
    const int64_t *is;
    size_t c;
    float f;
    int64_t i;
    int found = 0;
    if (H->attr_tensor(n, "value", &t) && t) {
        found++;
        if (!sy_dt_size(t->dtype))
            return ERR(SY_ERR_UNSUPPORTED, "Constant of type %s is not supported", sy_dt_name(t->dtype));
        *dt = t->dtype;
        *rank = t->rank;
        memcpy(dims, t->dims, sizeof(int64_t) * (size_t)t->rank);
        *data = t->data;
        *nbytes = (size_t)sy_tensor_numel(t) * sy_dt_size(t->dtype);
    }
    if (H->attr_float(n, "value_float", &f)) {
        found++;
        *dt = SY_DT_FLOAT32;
        *rank = 0;
        *fbuf = f;
        *data = fbuf;
        *nbytes = 4;
    }
    if (H->attr_floats(n, "value_floats", &fs, &c)) {
        found++;
        *dt = SY_DT_FLOAT32;
        *rank = 1;
        dims[0] = (int64_t)c;
        *data = fs;
        *nbytes = c * 4;
    }
    if (H->attr_int(n, "value_int", &i)) {
        found++;
        *dt = SY_DT_INT64;
        *rank = 0;
        *ibuf = i;
        *data = ibuf;
        *nbytes = 8;
    }
    if (H->attr_ints(n, "value_ints", &is, &c)) {
        found++;
        *dt = SY_DT_INT64;
        *rank = 1;
        dims[0] = (int64_t)c;
        *data = is;
        *nbytes = c * 8;
    }
    if (sy_attr_has(H, n, "value_string", SY_ATTR_STRING) || sy_attr_has(H, n, "value_strings", SY_ATTR_STRINGS))
        return ERR(SY_ERR_UNSUPPORTED, "string constants are not supported");
    if (sy_attr_has(H, n, "sparse_value", SY_ATTR_TENSOR))
        return ERR(SY_ERR_UNSUPPORTED, "sparse_value constants are not supported");
    if (found != 1)
        return ERR(SY_ERR_INVALID_ARGUMENT, "Constant needs exactly one value attribute, got %d", found);
    return NULL;
}

static sy_status *infer_constant(sy_node *n)
{
    sy_dtype dt = SY_DT_UNDEFINED;
    int32_t r = 0;
    int64_t dims[SY_MAX_RANK];
    const void *d;
    size_t nb;
    float fb;
    int64_t ib;
    SY_TRY(constant_value(n, &dt, &r, dims, &d, &nb, &fb, &ib));
    return H->node_set_output(n, 0, dt, r, dims);
}

static sy_status *prepare_constant(sy_node *n, void **state)
{
    sy_dtype dt = SY_DT_UNDEFINED;
    int32_t r = 0;
    int64_t dims[SY_MAX_RANK];
    const void *d = NULL;
    size_t nb = 0;
    float fb;
    int64_t ib;
    SY_TRY(constant_value(n, &dt, &r, dims, &d, &nb, &fb, &ib));
    const_state *s = malloc(sizeof *s + nb);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->nbytes = nb;
    if (nb)
        memcpy(s->data, d, nb);
    *state = s;
    return NULL;
}

static sy_status *run_constant(void *state, const sy_kernel_io *io)
{
    const const_state *s = state;
    sy_tensor *y = io->outputs[0];
    size_t nb = s->nbytes < y->nbytes ? s->nbytes : y->nbytes;
    if (nb)
        memcpy(y->data, s->data, nb);
    return NULL;
}

static sy_status *cos_value(const sy_node *n, sy_dtype *dt, unsigned char *val)
{
    const sy_tensor *t;
    memset(val, 0, 8);
    *dt = SY_DT_FLOAT32;
    if (H->attr_tensor(n, "value", &t) && t) {
        if (sy_tensor_numel(t) != 1)
            return ERR(SY_ERR_SHAPE, "value must hold exactly one element");
        if (!sy_dt_size(t->dtype))
            return ERR(SY_ERR_UNSUPPORTED, "value of type %s is not supported", sy_dt_name(t->dtype));
        *dt = t->dtype;
        memcpy(val, t->data, sy_dt_size(t->dtype));
    }
    return NULL;
}

static sy_status *infer_constant_of_shape(sy_node *n)
{
    int64_t shape[SY_MAX_RANK + 1], cnt = 0;
    SY_TRY(input_ints(n, 0, "input (shape)", shape, &cnt, SY_MAX_RANK + 1));
    if (cnt < 0)
        return ERR(SY_ERR_INVALID_ARGUMENT, "input 'input' (the shape) is required");
    if (cnt > SY_MAX_RANK)
        return ERR(SY_ERR_UNSUPPORTED, "rank %lld exceeds %d", (long long)cnt, SY_MAX_RANK);
    for (int64_t i = 0; i < cnt; i++)
        if (shape[i] < 0)
            return ERR(SY_ERR_SHAPE, "shape[%lld] = %lld is negative", (long long)i, (long long)shape[i]);
    sy_dtype dt = SY_DT_FLOAT32;
    unsigned char v[8];
    SY_TRY(cos_value(n, &dt, v));
    return H->node_set_output(n, 0, dt, (int32_t)cnt, shape);
}

typedef struct fill_state {
    size_t es;
    unsigned char v[8];
} fill_state;

static sy_status *prepare_constant_of_shape(sy_node *n, void **state)
{
    NEW_STATE(fill_state, s);
    sy_dtype dt = SY_DT_FLOAT32;
    sy_status *st = cos_value(n, &dt, s->v);
    if (st) {
        free(s);
        return st;
    }
    s->es = sy_dt_size(dt);
    *state = s;
    return NULL;
}

static sy_status *run_fill(void *state, const sy_kernel_io *io)
{
    const fill_state *s = state;
    sy_tensor *y = io->outputs[0];
    int64_t n = sy_tensor_numel(y);
    char *d = y->data;
    bool zero = true;
    for (size_t i = 0; i < s->es; i++)
        zero &= s->v[i] == 0;
    if (zero) {
        memset(d, 0, (size_t)n * s->es);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++)
        memcpy(d + (size_t)i * s->es, s->v, s->es);
    return NULL;
}

/* ======================================================================== */
/* Cast / CastLike                                                          */
/* ======================================================================== */

static const struct {
    const char *name;
    sy_dtype dt;
} dtype_names[] = {{"FLOAT", SY_DT_FLOAT32},  {"UINT8", SY_DT_UINT8},   {"INT8", SY_DT_INT8},
                   {"UINT16", SY_DT_UINT16},  {"INT16", SY_DT_INT16},   {"INT32", SY_DT_INT32},
                   {"INT64", SY_DT_INT64},    {"BOOL", SY_DT_BOOL},     {"FLOAT16", SY_DT_FLOAT16},
                   {"DOUBLE", SY_DT_FLOAT64}, {"UINT32", SY_DT_UINT32}, {"UINT64", SY_DT_UINT64},
                   {"BFLOAT16", SY_DT_BFLOAT16}};

/* string <-> number is not a conversion of bits: refused here */
static bool cast_dtype_ok(sy_dtype dt) { return dt != SY_DT_STRING && (sy_dt_size(dt) || sy_dt_is_lowbit(dt)); }

static sy_status *cast_target(const sy_node *n, sy_dtype *dt)
{
    if (!strcmp(H->node_op(n), "CastLike")) {
        const sy_tensor *t;
        SY_TRY(sy_need_input(H, n, 1, &t));
        *dt = t->dtype;
    } else if (H->node_opset(n) < 6) {
        char buf[32];
        sy_attr_string_or(H, n, "to", "", buf, sizeof buf);
        *dt = SY_DT_UNDEFINED;
        for (size_t i = 0; i < sizeof dtype_names / sizeof dtype_names[0]; i++)
            if (!strcmp(buf, dtype_names[i].name))
                *dt = dtype_names[i].dt;
        if (*dt == SY_DT_UNDEFINED)
            return ERR(SY_ERR_UNSUPPORTED, "Cast to \"%s\" is not supported", buf);
    } else {
        int64_t to;
        if (!H->attr_int(n, "to", &to))
            return ERR(SY_ERR_INVALID_ARGUMENT, "attribute 'to' is required");
        *dt = (sy_dtype)to;
    }
    if (!cast_dtype_ok(*dt) && *dt != SY_DT_STRING)
        return ERR(SY_ERR_UNSUPPORTED, "Cast to %s (%d) is not supported", sy_dt_name_full(*dt), (int)*dt);
    return NULL;
}

static sy_status *infer_cast(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (!cast_dtype_ok(x->dtype) && x->dtype != SY_DT_STRING)
        return ERR(SY_ERR_UNSUPPORTED, "Cast from %s (%d) is not supported", sy_dt_name_full(x->dtype),
                   (int)x->dtype);
    sy_dtype dt = SY_DT_UNDEFINED;
    SY_TRY(cast_target(n, &dt));
    if ((x->dtype == SY_DT_STRING || dt == SY_DT_STRING) && !cast_string_supported(x->dtype, dt))
        return ERR(SY_ERR_UNSUPPORTED, "Cast from %s to %s is not supported (string casts take int and float "
                   "types)", sy_dt_name_full(x->dtype), sy_dt_name_full(dt));
    return H->node_set_output(n, 0, dt, x->rank, x->dims);
}

typedef struct cast_state {
    bool saturate;
    sy_round_mode mode;
} cast_state;

static sy_status *prepare_cast(sy_node *n, void **state)
{
    char m[16];
    sy_attr_string_or(H, n, "round_mode", "up", m, sizeof m);
    sy_round_mode mode;
    if (!strcmp(m, "up"))
        mode = SY_ROUND_UP;
    else if (!strcmp(m, "down"))
        mode = SY_ROUND_DOWN;
    else if (!strcmp(m, "nearest"))
        mode = SY_ROUND_NEAREST;
    else
        return ERR(SY_ERR_INVALID_ARGUMENT, "round_mode must be up, down or nearest; got \"%s\"", m);
    NEW_STATE(cast_state, s);
    s->saturate = sy_attr_int_or(H, n, "saturate", 1) != 0;
    s->mode = mode;
    *state = s;
    return NULL;
}

static sy_status *run_cast(void *state, const sy_kernel_io *io)
{
    const cast_state *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    if (x->dtype == SY_DT_STRING || y->dtype == SY_DT_STRING)
        return cast_string_run(H, io);
    if (!sy_convert_ex(x->data, x->dtype, y->data, y->dtype, (size_t)sy_tensor_numel(x), s->saturate, s->mode))
        return ERR(SY_ERR_UNSUPPORTED, "Cast from %s to %s is not supported", sy_dt_name_full(x->dtype),
                   sy_dt_name_full(y->dtype));
    return NULL;
}

/* BitCast (26): the same bits as another type of the same bit width. */
static sy_status *infer_bitcast(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int64_t to;
    if (!H->attr_int(n, "to", &to))
        return ERR(SY_ERR_INVALID_ARGUMENT, "attribute 'to' is required");
    sy_dtype dt = (sy_dtype)to;
    if (!cast_dtype_ok(x->dtype) || !cast_dtype_ok(dt))
        return ERR(SY_ERR_UNSUPPORTED, "BitCast from %s (%d) to %s (%d) is not supported", sy_dt_name_full(x->dtype),
                   (int)x->dtype, sy_dt_name_full(dt), (int)dt);
    if (sy_dt_bits(x->dtype) != sy_dt_bits(dt))
        return ERR(SY_ERR_TYPE, "BitCast needs types of the same bit width: %s has %u bits, %s has %u",
                   sy_dt_name_full(x->dtype), sy_dt_bits(x->dtype), sy_dt_name_full(dt), sy_dt_bits(dt));
    return H->node_set_output(n, 0, dt, x->rank, x->dims);
}

static sy_status *run_bitcast(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    size_t nb = sy_dt_nbytes(x->dtype, sy_tensor_numel(x));
    if (nb && y->data != x->data)
        memcpy(y->data, x->data, nb);
    return NULL;
}

/* ======================================================================== */
/* Expand / Tile                                                            */
/* ======================================================================== */

static sy_status *infer_expand(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int64_t shape[SY_MAX_RANK + 1], cnt;
    SY_TRY(input_ints(n, 1, "shape", shape, &cnt, SY_MAX_RANK + 1));
    if (cnt < 0)
        return ERR(SY_ERR_INVALID_ARGUMENT, "input 'shape' is required");
    if (cnt > SY_MAX_RANK)
        return ERR(SY_ERR_UNSUPPORTED, "rank %lld exceeds %d", (long long)cnt, SY_MAX_RANK);
    sy_tensor st = {.struct_size = sizeof(sy_tensor), .dtype = x->dtype, .rank = (int32_t)cnt};
    memcpy(st.dims, shape, sizeof(int64_t) * (size_t)cnt);
    const sy_tensor *ts[2] = {x, &st};
    int32_t r;
    int64_t dims[SY_MAX_RANK];
    SY_TRY(sy_broadcast_shapes(H, 2, ts, &r, dims));
    return H->node_set_output(n, 0, x->dtype, r, dims);
}

static sy_status *run_expand(void *state, const sy_kernel_io *io)
{
    (void)state;
    if (!sy_broadcast_copy(io->inputs[0], io->outputs[0]))
        return ERR(SY_ERR_SHAPE, "input does not broadcast to the output shape");
    return NULL;
}

static sy_status *infer_tile(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int64_t rep[SY_MAX_RANK + 1], cnt;
    SY_TRY(input_ints(n, 1, "repeats", rep, &cnt, SY_MAX_RANK + 1));
    if (cnt != x->rank)
        return ERR(SY_ERR_SHAPE, "repeats must have one value per input dim (%d), got %lld", (int)x->rank,
                   (long long)cnt);
    int64_t dims[SY_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++) {
        if (rep[d] < 0)
            return ERR(SY_ERR_SHAPE, "repeats[%d] = %lld is negative", (int)d, (long long)rep[d]);
        if (__builtin_mul_overflow(x->dims[d], rep[d], &dims[d]))
            return ERR(SY_ERR_SHAPE, "dim %d: %lld x repeats %lld overflows", (int)d, (long long)x->dims[d],
                       (long long)rep[d]);
    }
    return H->node_set_output(n, 0, x->dtype, x->rank, dims);
}

static sy_status *run_tile(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    size_t es = sy_dt_size(x->dtype);
    int64_t total = sy_tensor_numel(y);
    if (total == 0)
        return NULL;
    if (x->rank == 0) {
        memcpy(y->data, x->data, es);
        return NULL;
    }
    int64_t xs[SY_MAX_RANK], idx[SY_MAX_RANK] = {0};
    sy_strides(x->rank, x->dims, xs);
    int32_t r = x->rank;
    int64_t inner = y->dims[r - 1], xin = x->dims[r - 1];
    char *dst = y->data;
    const char *src = x->data;
    for (;;) {
        int64_t off = 0;
        for (int32_t d = 0; d < r - 1; d++)
            off += (idx[d] % x->dims[d]) * xs[d];
        const char *row = src + off * (int64_t)es;
        for (int64_t j = 0; j < inner; j += xin)
            memcpy(dst + j * (int64_t)es, row, (size_t)xin * es);
        dst += inner * (int64_t)es;
        if (!sy_index_next(r - 1, y->dims, idx))
            break;
    }
    return NULL;
}

/* ======================================================================== */
/* Pad                                                                      */
/* ======================================================================== */

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

typedef struct pad_state {
    int mode;
    bool from_attrs;
    int64_t pads[2 * SY_MAX_RANK];
    int64_t npads;
    double value;
} pad_state;

static sy_status *pad_mode(const sy_node *n, int *mode)
{
    char m[16];
    sy_attr_string_or(H, n, "mode", "constant", m, sizeof m);
    if (!strcmp(m, "constant"))
        *mode = PAD_CONSTANT;
    else if (!strcmp(m, "reflect"))
        *mode = PAD_REFLECT;
    else if (!strcmp(m, "edge"))
        *mode = PAD_EDGE;
    else if (!strcmp(m, "wrap"))
        *mode = PAD_WRAP;
    else
        return ERR(SY_ERR_INVALID_ARGUMENT, "mode must be constant, reflect, edge or wrap; got \"%s\"", m);
    return NULL;
}

/* full per-axis pads [begin..., end...] for rank r from pads (+ axes) */
static sy_status *pad_expand(int32_t r, const int64_t *pads, int64_t np, const int64_t *axes, int64_t na, int64_t *full)
{
    for (int32_t i = 0; i < 2 * r; i++)
        full[i] = 0;
    if (axes) {
        if (np != 2 * na)
            return ERR(SY_ERR_SHAPE, "pads must have 2 values per axis (%lld axes), got %lld", (long long)na,
                       (long long)np);
        for (int64_t i = 0; i < na; i++) {
            int32_t a;
            SY_TRY(sy_norm_axis(H, axes[i], r, false, "axes value", &a));
            full[a] = pads[i];
            full[r + a] = pads[na + i];
        }
        return NULL;
    }
    if (np != 2 * r)
        return ERR(SY_ERR_SHAPE, "pads must have 2 * rank = %d values, got %lld", 2 * r, (long long)np);
    memcpy(full, pads, sizeof(int64_t) * (size_t)(2 * r));
    return NULL;
}

static sy_status *pad_params(const sy_node *n, const sy_tensor *x, const sy_tensor *const *in, uint32_t nin,
                             const pad_state *s, int64_t *full, double *value)
{
    if (s && s->from_attrs) {
        *value = s->value;
        return pad_expand(x->rank, s->pads, s->npads, NULL, 0, full);
    }
    if (!s && H->node_opset(n) < 11) {
        int64_t p[2 * SY_MAX_RANK + 1];
        int64_t c = sy_attr_ints_copy(H, n, "pads", p, 2 * SY_MAX_RANK + 1);
        if (c < 0)
            c = sy_attr_ints_copy(H, n, "paddings", p, 2 * SY_MAX_RANK + 1);
        if (c < 0)
            return ERR(SY_ERR_INVALID_ARGUMENT, "attribute 'pads' is required before opset 11");
        *value = sy_attr_float_or(H, n, "value", 0.0f);
        return pad_expand(x->rank, p, c, NULL, 0, full);
    }
    const sy_tensor *tp = nin > 1 ? in[1] : NULL, *tv = nin > 2 ? in[2] : NULL, *ta = nin > 3 ? in[3] : NULL;
    if (!tp)
        return ERR(SY_ERR_INVALID_ARGUMENT, "input 'pads' is required");
    if (!tp->data || (ta && !ta->data))
        return ERR(SY_ERR_DYNAMIC_SHAPE, "pads are not known before the run");
    int64_t p[2 * SY_MAX_RANK], ax[SY_MAX_RANK];
    int64_t np = run_ints(tp, p, 2 * SY_MAX_RANK), na = ta ? run_ints(ta, ax, SY_MAX_RANK) : 0;
    if (np < 0 || na < 0)
        return ERR(SY_ERR_SHAPE, "pads/axes must be 1-D int64 with at most %d values", 2 * SY_MAX_RANK);
    *value = 0.0;
    if (tv && tv->data && sy_tensor_numel(tv) > 0)
        *value = sy_load_f64(tv->data, tv->dtype, 0);
    return pad_expand(x->rank, p, np, ta ? ax : NULL, na, full);
}

static sy_status *infer_pad(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int mode;
    SY_TRY(pad_mode(n, &mode));
    const sy_tensor *in[4] = {x, NULL, NULL, NULL};
    uint32_t nin = H->node_num_inputs(n);
    for (uint32_t i = 1; i < nin && i < 4; i++)
        in[i] = H->node_input(n, i);
    int64_t full[2 * SY_MAX_RANK];
    double v;
    SY_TRY(pad_params(n, x, in, nin, NULL, full, &v));
    int64_t dims[SY_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++) {
        dims[d] = x->dims[d] + full[d] + full[x->rank + d];
        if (dims[d] < 0)
            return ERR(SY_ERR_SHAPE, "pads make axis %d negative (%lld)", (int)d, (long long)dims[d]);
        if (mode != PAD_CONSTANT && x->dims[d] == 0 && dims[d] > 0)
            return ERR(SY_ERR_SHAPE, "cannot pad empty axis %d in non-constant mode", (int)d);
        if (mode == PAD_REFLECT && (full[d] >= x->dims[d] || full[x->rank + d] >= x->dims[d]) &&
            (full[d] > 0 || full[x->rank + d] > 0))
            return ERR(SY_ERR_SHAPE, "reflect pads on axis %d must be smaller than its size %lld", (int)d,
                       (long long)x->dims[d]);
    }
    return H->node_set_output(n, 0, x->dtype, x->rank, dims);
}

static sy_status *prepare_pad(sy_node *n, void **state)
{
    NEW_STATE(pad_state, s);
    sy_status *st = pad_mode(n, &s->mode);
    if (!st && H->node_opset(n) < 11) {
        s->npads = sy_attr_ints_copy(H, n, "pads", s->pads, 2 * SY_MAX_RANK);
        if (s->npads < 0)
            s->npads = sy_attr_ints_copy(H, n, "paddings", s->pads, 2 * SY_MAX_RANK);
        s->value = sy_attr_float_or(H, n, "value", 0.0f);
        s->from_attrs = true;
    }
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static int64_t pad_src(int mode, int64_t i, int64_t dim)
{
    if (i >= 0 && i < dim)
        return i;
    switch (mode) {
    case PAD_EDGE: return i < 0 ? 0 : dim - 1;
    case PAD_WRAP: {
        int64_t m = i % dim;
        return m < 0 ? m + dim : m;
    }
    case PAD_REFLECT: {
        if (dim == 1)
            return 0;
        int64_t period = 2 * (dim - 1);
        int64_t m = i % period;
        if (m < 0)
            m += period;
        return m < dim ? m : period - m;
    }
    default: return -1;
    }
}

static sy_status *run_pad(void *state, const sy_kernel_io *io)
{
    const pad_state *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    int64_t full[2 * SY_MAX_RANK];
    double v;
    SY_TRY(pad_params(NULL, x, io->inputs, io->n_inputs, s, full, &v));
    size_t es = sy_dt_size(x->dtype);
    int64_t total = sy_tensor_numel(y);
    if (total == 0)
        return NULL;
    unsigned char cval[8];
    sy_store_f64(cval, y->dtype, 0, v);
    int32_t r = x->rank;
    if (r == 0) {
        memcpy(y->data, x->data, es);
        return NULL;
    }
    int64_t xs[SY_MAX_RANK], idx[SY_MAX_RANK] = {0};
    sy_strides(r, x->dims, xs);
    int64_t inner = y->dims[r - 1], xin = x->dims[r - 1], pb = full[r - 1];
    char *dst = y->data;
    const char *src = x->data;
    for (;;) {
        int64_t off = 0;
        bool out = false;
        for (int32_t d = 0; d < r - 1; d++) {
            int64_t si = pad_src(s->mode, idx[d] - full[d], x->dims[d]);
            if (si < 0) {
                out = true;
                break;
            }
            off += si * xs[d];
        }
        for (int64_t j = 0; j < inner; j++) {
            char *o = dst + j * (int64_t)es;
            int64_t si = out ? -1 : pad_src(s->mode, j - pb, xin);
            if (si < 0)
                memcpy(o, cval, es);
            else
                memcpy(o, src + (off + si) * (int64_t)es, es);
        }
        dst += inner * (int64_t)es;
        if (!sy_index_next(r - 1, y->dims, idx))
            break;
    }
    return NULL;
}

/* ======================================================================== */
/* Where                                                                    */
/* ======================================================================== */

#define WHERE_FN(T, SFX)                                                                                           \
    static void where_##SFX(const void *c, const void *const *in, const int64_t *st, void *out, int64_t n)         \
    {                                                                                                              \
        (void)c;                                                                                                   \
        const uint8_t *cd = in[0];                                                                                 \
        const T *a = in[1], *b = in[2];                                                                            \
        T *o = out;                                                                                                \
        for (int64_t i = 0; i < n; i++)                                                                            \
            o[i] = cd[i * st[0]] ? a[i * st[1]] : b[i * st[2]];                                                    \
    }
WHERE_FN(uint8_t, 1)
WHERE_FN(uint16_t, 2)
WHERE_FN(uint32_t, 4)
WHERE_FN(uint64_t, 8)
WHERE_FN(sy_string, 16) /* string records: the text is shared, not copied */

static sy_status *infer_where(sy_node *n)
{
    const sy_tensor *c, *a, *b;
    SY_TRY(sy_need_input(H, n, 0, &c));
    SY_TRY(sy_need_input(H, n, 1, &a));
    SY_TRY(sy_need_input(H, n, 2, &b));
    if (c->dtype != SY_DT_BOOL)
        return ERR(SY_ERR_TYPE, "condition must be bool, got %s", sy_dt_name(c->dtype));
    if (a->dtype != b->dtype)
        return ERR(SY_ERR_TYPE, "X is %s but Y is %s", sy_dt_name(a->dtype), sy_dt_name(b->dtype));
    const sy_tensor *ts[3] = {c, a, b};
    int32_t r;
    int64_t dims[SY_MAX_RANK];
    SY_TRY(sy_broadcast_shapes(H, 3, ts, &r, dims));
    return H->node_set_output(n, 0, a->dtype, r, dims);
}

static sy_status *run_where(void *state, const sy_kernel_io *io)
{
    (void)state;
    sy_bcast_fn fn;
    switch (sy_dt_size(io->inputs[1]->dtype)) {
    case 1: fn = where_1; break;
    case 2: fn = where_2; break;
    case 4: fn = where_4; break;
    case 8: fn = where_8; break;
    case 16: fn = where_16; break;
    default: return ERR(SY_ERR_TYPE, "unsupported element type");
    }
    return sy_bcast_apply(H, 3, io->inputs, io->outputs[0], fn, NULL);
}

/* ======================================================================== */
/* Range / EyeLike                                                          */
/* ======================================================================== */

static sy_status *range_count(const sy_tensor *s, const sy_tensor *l, const sy_tensor *d, int64_t *cnt)
{
    double a, b, c;
    if (!sy_tensor_scalar_f64(s, &a) || !sy_tensor_scalar_f64(l, &b) || !sy_tensor_scalar_f64(d, &c))
        return ERR(SY_ERR_DYNAMIC_SHAPE, "Range inputs are not known before the run");
    if (c == 0)
        return ERR(SY_ERR_INVALID_ARGUMENT, "delta must not be 0");
    double nf = ceil((b - a) / c);
    if (sy_dt_is_int(s->dtype)) {
        int64_t ia = sy_load_i64(s->data, s->dtype, 0), ib = sy_load_i64(l->data, l->dtype, 0),
                ic = sy_load_i64(d->data, d->dtype, 0);
        if (ic == 0)
            return ERR(SY_ERR_INVALID_ARGUMENT, "delta must not be 0");
        int64_t num = ib - ia;
        nf = (double)((num / ic) + ((num % ic != 0 && ((num % ic > 0) == (ic > 0))) ? 1 : 0));
    }
    *cnt = nf > 0 ? (int64_t)nf : 0;
    return NULL;
}

static sy_status *infer_range(sy_node *n)
{
    const sy_tensor *s, *l, *d;
    SY_TRY(sy_need_input(H, n, 0, &s));
    SY_TRY(sy_need_input(H, n, 1, &l));
    SY_TRY(sy_need_input(H, n, 2, &d));
    SY_TRY(sy_check_same_dtype(H, n, 3));
    int64_t cnt;
    SY_TRY(range_count(s, l, d, &cnt));
    return H->node_set_output(n, 0, s->dtype, 1, &cnt);
}

static sy_status *run_range(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *s = io->inputs[0], *d = io->inputs[2];
    sy_tensor *y = io->outputs[0];
    int64_t n = sy_tensor_numel(y);
    if (sy_dt_is_int(s->dtype)) {
        int64_t a = sy_load_i64(s->data, s->dtype, 0), c = sy_load_i64(d->data, d->dtype, 0);
        for (int64_t i = 0; i < n; i++)
            sy_store_i64(y->data, y->dtype, (size_t)i, a + i * c);
    } else {
        double a = sy_load_f64(s->data, s->dtype, 0), c = sy_load_f64(d->data, d->dtype, 0);
        for (int64_t i = 0; i < n; i++)
            sy_store_f64(y->data, y->dtype, (size_t)i, a + (double)i * c);
    }
    return NULL;
}

static sy_status *infer_eyelike(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (x->rank != 2)
        return ERR(SY_ERR_SHAPE, "EyeLike input must be 2-D, got rank %d", (int)x->rank);
    int64_t dt = sy_attr_int_or(H, n, "dtype", x->dtype);
    if (!sy_dt_size((sy_dtype)dt) || dt == SY_DT_STRING)
        return ERR(SY_ERR_UNSUPPORTED, "dtype %lld is not supported", (long long)dt);
    return H->node_set_output(n, 0, (sy_dtype)dt, 2, x->dims);
}

typedef struct k_state {
    int64_t k;
} k_state;

static sy_status *prepare_eyelike(sy_node *n, void **state)
{
    NEW_STATE(k_state, s);
    s->k = sy_attr_int_or(H, n, "k", 0);
    *state = s;
    return NULL;
}

static sy_status *run_eyelike(void *state, const sy_kernel_io *io)
{
    const k_state *s = state;
    sy_tensor *y = io->outputs[0];
    memset(y->data, 0, y->nbytes);
    for (int64_t i = 0; i < y->dims[0]; i++) {
        int64_t j = i + s->k;
        if (j >= 0 && j < y->dims[1])
            sy_store_i64(y->data, y->dtype, (size_t)(i * y->dims[1] + j), 1);
    }
    return NULL;
}

/* ======================================================================== */
/* DepthToSpace / SpaceToDepth                                              */
/* ======================================================================== */

static sy_status *infer_d2s(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (x->rank != 4)
        return ERR(SY_ERR_SHAPE, "input must be 4-D NCHW, got rank %d", (int)x->rank);
    int64_t b = sy_attr_int_or(H, n, "blocksize", 0);
    if (b <= 0)
        return ERR(SY_ERR_INVALID_ARGUMENT, "blocksize must be > 0");
    int64_t dims[4];
    if (!strcmp(H->node_op(n), "DepthToSpace")) {
        if (x->dims[1] % (b * b))
            return ERR(SY_ERR_SHAPE, "channels (%lld) must be divisible by blocksize^2 (%lld)", (long long)x->dims[1],
                       (long long)(b * b));
        int64_t d[4] = {x->dims[0], x->dims[1] / (b * b), x->dims[2] * b, x->dims[3] * b};
        memcpy(dims, d, sizeof d);
    } else {
        if (x->dims[2] % b || x->dims[3] % b)
            return ERR(SY_ERR_SHAPE, "H and W must be divisible by blocksize %lld", (long long)b);
        int64_t d[4] = {x->dims[0], x->dims[1] * b * b, x->dims[2] / b, x->dims[3] / b};
        memcpy(dims, d, sizeof d);
    }
    return H->node_set_output(n, 0, x->dtype, 4, dims);
}

typedef struct d2s_state {
    int64_t b;
    bool crd;
    bool d2s;
} d2s_state;

static sy_status *prepare_d2s(sy_node *n, void **state)
{
    NEW_STATE(d2s_state, s);
    s->b = sy_attr_int_or(H, n, "blocksize", 1);
    s->crd = sy_attr_string_is(H, n, "mode", "DCR", "CRD");
    s->d2s = !strcmp(H->node_op(n), "DepthToSpace");
    *state = s;
    return NULL;
}

static sy_status *run_d2s(void *state, const sy_kernel_io *io)
{
    const d2s_state *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    size_t es = sy_dt_size(x->dtype);
    int64_t b = s->b;
    /* express as a 6-D transpose of a reshaped view */
    int64_t N = x->dims[0], dims[6], st[6];
    if (s->d2s) {
        int64_t C = y->dims[1], Hh = x->dims[2], W = x->dims[3];
        /* out[n, c, h*b+i, w*b+j] */
        int64_t xs_n = x->dims[1] * Hh * W;
        int64_t d[6] = {N, C, Hh, b, W, b};
        memcpy(dims, d, sizeof d);
        if (s->crd) { /* in channel = c*b*b + i*b + j */
            int64_t t[6] = {xs_n, b * b * Hh * W, W, b * Hh * W, 1, Hh * W};
            memcpy(st, t, sizeof t);
        } else { /* DCR: in channel = i*b*C + j*C + c */
            int64_t t[6] = {xs_n, Hh * W, W, b * C * Hh * W, 1, C * Hh * W};
            memcpy(st, t, sizeof t);
        }
    } else {
        int64_t C = x->dims[1], Hh = y->dims[2], W = y->dims[3];
        /* out[n, (i*b + j)*C + c, h, w] = in[n, c, h*b+i, w*b+j] */
        int64_t xW = x->dims[3];
        int64_t d[6] = {N, b, b, C, Hh, W};
        memcpy(dims, d, sizeof d);
        int64_t t[6] = {C * x->dims[2] * xW, xW, 1, x->dims[2] * xW, b * xW, b};
        memcpy(st, t, sizeof t);
    }
    sy_copy_strided(y->data, x->data, 6, dims, st, es);
    return NULL;
}

/* ======================================================================== */
/* tables                                                                   */
/* ======================================================================== */

static const sy_attr_def a_reshape_v1[] = {{"consumed_inputs", SY_ATTR_INTS, false}, {"shape", SY_ATTR_INTS, false}};
static const sy_attr_def a_allowzero[] = {{"allowzero", SY_ATTR_INT, false}};
static const sy_attr_def a_axis[] = {{"axis", SY_ATTR_INT, false}};
static const sy_attr_def a_axes[] = {{"axes", SY_ATTR_INTS, false}};
static const sy_attr_def a_axes_req[] = {{"axes", SY_ATTR_INTS, true}};
static const sy_attr_def a_perm[] = {{"perm", SY_ATTR_INTS, false}};
static const sy_attr_def a_split_v1[] = {{"axis", SY_ATTR_INT, false}, {"split", SY_ATTR_INTS, false}};
static const sy_attr_def a_split_v18[] = {{"axis", SY_ATTR_INT, false}, {"num_outputs", SY_ATTR_INT, false}};
static const sy_attr_def a_slice_v1[] = {{"axes", SY_ATTR_INTS, false}, {"ends", SY_ATTR_INTS, true},
                                         {"starts", SY_ATTR_INTS, true}};
static const sy_attr_def a_shape_v15[] = {{"end", SY_ATTR_INT, false}, {"start", SY_ATTR_INT, false}};
static const sy_attr_def a_const_v1[] = {{"value", SY_ATTR_TENSOR, false}};
static const sy_attr_def a_const_v11[] = {{"sparse_value", SY_ATTR_TENSOR, false}, {"value", SY_ATTR_TENSOR, false}};
static const sy_attr_def a_const_v12[] = {
    {"sparse_value", SY_ATTR_TENSOR, false}, {"value", SY_ATTR_TENSOR, false},
    {"value_float", SY_ATTR_FLOAT, false},   {"value_floats", SY_ATTR_FLOATS, false},
    {"value_int", SY_ATTR_INT, false},       {"value_ints", SY_ATTR_INTS, false},
    {"value_string", SY_ATTR_STRING, false}, {"value_strings", SY_ATTR_STRINGS, false}};
static const sy_attr_def a_value_t[] = {{"value", SY_ATTR_TENSOR, false}};
static const sy_attr_def a_cast_v1[] = {{"to", SY_ATTR_STRING, true}};
static const sy_attr_def a_cast_v6[] = {{"to", SY_ATTR_INT, true}};
static const sy_attr_def a_cast_v19[] = {{"saturate", SY_ATTR_INT, false}, {"to", SY_ATTR_INT, true}};
static const sy_attr_def a_cast_v24[] = {{"round_mode", SY_ATTR_STRING, false},
                                         {"saturate", SY_ATTR_INT, false},
                                         {"to", SY_ATTR_INT, true}};
static const sy_attr_def a_castlike_v19[] = {{"saturate", SY_ATTR_INT, false}};
static const sy_attr_def a_castlike_v24[] = {{"round_mode", SY_ATTR_STRING, false}, {"saturate", SY_ATTR_INT, false}};
static const sy_attr_def a_pad_v1[] = {{"mode", SY_ATTR_STRING, false}, {"paddings", SY_ATTR_INTS, true},
                                       {"value", SY_ATTR_FLOAT, false}};
static const sy_attr_def a_pad_v2[] = {{"mode", SY_ATTR_STRING, false}, {"pads", SY_ATTR_INTS, true},
                                       {"value", SY_ATTR_FLOAT, false}};
static const sy_attr_def a_mode[] = {{"mode", SY_ATTR_STRING, false}};
static const sy_attr_def a_eyelike[] = {{"dtype", SY_ATTR_INT, false}, {"k", SY_ATTR_INT, false}};
static const sy_attr_def a_block[] = {{"blocksize", SY_ATTR_INT, true}};
static const sy_attr_def a_block_mode[] = {{"blocksize", SY_ATTR_INT, true}, {"mode", SY_ATTR_STRING, false}};

static const sy_inplace_pair alias00[] = {{0, 0, true}};

#define VIEW(op, since, mi, ma, attrs, infer) SY_SCHEMA(op, since, mi, ma, 1, 1, attrs, infer, SY_INPLACE(alias00), 0)
#define OP(op, since, mi, ma, mo, mao, attrs, infer) SY_SCHEMA(op, since, mi, ma, mo, mao, attrs, infer, SY_NO_INPLACE, 0)
#define SHAPEONLY(op, since, attrs, infer)                                                                         \
    SY_SCHEMA(op, since, 1, 1, 1, 1, attrs, infer, SY_NO_INPLACE, SY_SCHEMA_READS_SHAPES_ONLY)

static const sy_op_schema schemas[] = {
    VIEW("Reshape", 1, 1, 1, SY_ATTRS(a_reshape_v1), infer_reshape),
    VIEW("Reshape", 5, 2, 2, SY_NO_ATTRS, infer_reshape),
    VIEW("Reshape", 14, 2, 2, SY_ATTRS(a_allowzero), infer_reshape),
    VIEW("Flatten", 1, 1, 1, SY_ATTRS(a_axis), infer_flatten),
    VIEW("Squeeze", 1, 1, 1, SY_ATTRS(a_axes), infer_squeeze),
    VIEW("Squeeze", 13, 1, 2, SY_NO_ATTRS, infer_squeeze),
    VIEW("Unsqueeze", 1, 1, 1, SY_ATTRS(a_axes_req), infer_unsqueeze),
    VIEW("Unsqueeze", 13, 2, 2, SY_NO_ATTRS, infer_unsqueeze),
    VIEW("Identity", 1, 1, 1, SY_NO_ATTRS, infer_identity),
    OP("Transpose", 1, 1, 1, 1, 1, SY_ATTRS(a_perm), infer_transpose),
    OP("Concat", 1, 1, -1, 1, 1, SY_ATTRS(a_axis), infer_concat),
    OP("Split", 1, 1, 2, 1, -1, SY_ATTRS(a_split_v1), infer_split),
    OP("Split", 13, 1, 2, 1, -1, SY_ATTRS(a_axis), infer_split),
    OP("Split", 18, 1, 2, 1, -1, SY_ATTRS(a_split_v18), infer_split),
    OP("Slice", 1, 1, 1, 1, 1, SY_ATTRS(a_slice_v1), infer_slice),
    OP("Slice", 10, 3, 5, 1, 1, SY_NO_ATTRS, infer_slice),
    OP("Gather", 1, 2, 2, 1, 1, SY_ATTRS(a_axis), infer_gather),
    OP("GatherElements", 11, 2, 2, 1, 1, SY_ATTRS(a_axis), infer_gather_elements),
    SHAPEONLY("Shape", 1, SY_NO_ATTRS, infer_shape),
    SHAPEONLY("Shape", 15, SY_ATTRS(a_shape_v15), infer_shape),
    SHAPEONLY("Size", 1, SY_NO_ATTRS, infer_size),
    OP("Constant", 1, 0, 0, 1, 1, SY_ATTRS(a_const_v1), infer_constant),
    OP("Constant", 11, 0, 0, 1, 1, SY_ATTRS(a_const_v11), infer_constant),
    OP("Constant", 12, 0, 0, 1, 1, SY_ATTRS(a_const_v12), infer_constant),
    OP("ConstantOfShape", 9, 1, 1, 1, 1, SY_ATTRS(a_value_t), infer_constant_of_shape),
    OP("Cast", 1, 1, 1, 1, 1, SY_ATTRS(a_cast_v1), infer_cast),
    OP("Cast", 6, 1, 1, 1, 1, SY_ATTRS(a_cast_v6), infer_cast),
    OP("Cast", 19, 1, 1, 1, 1, SY_ATTRS(a_cast_v19), infer_cast),
    OP("Cast", 24, 1, 1, 1, 1, SY_ATTRS(a_cast_v24), infer_cast),
    OP("CastLike", 15, 2, 2, 1, 1, SY_NO_ATTRS, infer_cast),
    OP("CastLike", 19, 2, 2, 1, 1, SY_ATTRS(a_castlike_v19), infer_cast),
    OP("CastLike", 24, 2, 2, 1, 1, SY_ATTRS(a_castlike_v24), infer_cast),
    OP("BitCast", 26, 1, 1, 1, 1, SY_ATTRS(a_cast_v6), infer_bitcast),
    OP("Expand", 8, 2, 2, 1, 1, SY_NO_ATTRS, infer_expand),
    OP("Tile", 6, 2, 2, 1, 1, SY_NO_ATTRS, infer_tile),
    OP("Pad", 1, 1, 1, 1, 1, SY_ATTRS(a_pad_v1), infer_pad),
    OP("Pad", 2, 1, 1, 1, 1, SY_ATTRS(a_pad_v2), infer_pad),
    OP("Pad", 11, 2, 3, 1, 1, SY_ATTRS(a_mode), infer_pad),
    OP("Pad", 18, 2, 4, 1, 1, SY_ATTRS(a_mode), infer_pad),
    OP("Where", 9, 3, 3, 1, 1, SY_NO_ATTRS, infer_where),
    OP("Range", 11, 3, 3, 1, 1, SY_NO_ATTRS, infer_range),
    OP("EyeLike", 9, 1, 1, 1, 1, SY_ATTRS(a_eyelike), infer_eyelike),
    OP("DepthToSpace", 1, 1, 1, 1, 1, SY_ATTRS(a_block), infer_d2s),
    OP("DepthToSpace", 11, 1, 1, 1, 1, SY_ATTRS(a_block_mode), infer_d2s),
    OP("SpaceToDepth", 1, 1, 1, 1, 1, SY_ATTRS(a_block), infer_d2s),
};

#define ALL SY_DT_MASK_PLAIN
/* kernels that only move whole elements take string records too */
#define MOVE SY_DT_MASK_MOVABLE
#define K(op, mask, ti, prep, run, rel) SY_CPU_KERNEL(op, 1, 0, mask, ti, prep, run, rel)
#define KN(op, mask, ti, run) SY_CPU_KERNEL(op, 1, 0, mask, ti, sy_prepare_nothing, run, NULL)

static const sy_kernel_def kernels[] = {
    KN("Reshape", MOVE, 0, sy_run_copy_input0),
    KN("Flatten", MOVE, 0, sy_run_copy_input0),
    KN("Squeeze", MOVE, 0, sy_run_copy_input0),
    KN("Unsqueeze", MOVE, 0, sy_run_copy_input0),
    KN("Identity", MOVE, 0, sy_run_copy_input0),
    K("Transpose", MOVE, 0, prepare_transpose, run_transpose, sy_release_free),
    K("Concat", MOVE, 0, prepare_concat, run_concat, sy_release_free),
    K("Split", MOVE, 0, prepare_split, run_split, sy_release_free),
    K("Slice", MOVE, 0, prepare_slice, run_slice, sy_release_free),
    K("Gather", MOVE, 0, prepare_axis0, run_gather, sy_release_free),
    K("GatherElements", MOVE, 0, prepare_axis0, run_gather_elements, sy_release_free),
    K("Shape", SY_DT_MASK_ALL, 0, prepare_shape, run_shape, sy_release_free),
    KN("Size", SY_DT_MASK_ALL, 0, run_size),
    K("Constant", MOVE, -1, prepare_constant, run_constant, sy_release_free),
    K("ConstantOfShape", ALL, -1, prepare_constant_of_shape, run_fill, sy_release_free),
    K("Cast", MOVE | SY_DT_MASK_LOWBIT, 0, prepare_cast, run_cast, sy_release_free),
    K("CastLike", MOVE | SY_DT_MASK_LOWBIT, 0, prepare_cast, run_cast, sy_release_free),
    KN("BitCast", ALL | SY_DT_MASK_LOWBIT, 0, run_bitcast),
    KN("Expand", MOVE, 0, run_expand),
    KN("Tile", MOVE, 0, run_tile),
    K("Pad", ALL, 0, prepare_pad, run_pad, sy_release_free),
    KN("Where", MOVE, 1, run_where),
    KN("Range", SY_DT_MASK_NUMERIC, 0, run_range),
    K("EyeLike", ALL, -1, prepare_eyelike, run_eyelike, sy_release_free),
    K("DepthToSpace", ALL, 0, prepare_d2s, run_d2s, sy_release_free),
    K("SpaceToDepth", ALL, 0, prepare_d2s, run_d2s, sy_release_free),
};

static sy_status *tensor_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    SY_TRY(sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels)));
    SY_TRY(tensor_index_register(host, p));
    SY_TRY(tensor_cache_register(host, p));
    return tensor_optional_register(host, p);
}

static void tensor_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "ops_tensor",
    .version = "0.1.0",
    .description = "shape manipulation and data movement (ONNX default domain), cpu_ref kernels",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = tensor_init,
    .fini = tensor_fini,
};

SY_PLUGIN_DEFINE(desc)
