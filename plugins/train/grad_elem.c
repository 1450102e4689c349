/*
 * Element-wise backward operators of the switchyard.train domain, cpu_ref
 * kernels (float32):
 *
 *   ReluGrad(dY, X) -> dX         dX = X > 0 ? dY : 0
 *   AbsGrad(dY, X) -> dX          dX = sign(X) * dY (0 at X = 0)
 *   ReduceToShape(dY, shape) -> dX
 *       sums dY over the dimensions that numpy broadcasting added or
 *       stretched from `shape` (an int64 constant); the backward of any
 *       broadcasting element-wise op (Add, Sub, Mul, Div) for an operand of
 *       that shape.
 *
 *   ConcatGrad(dY, X_1..X_n) -> dX_1..dX_n     (attribute axis)
 *       dY cut along axis into the X's sizes: the backward of Concat.
 *
 *   SliceGrad(dY, shape) -> dX                 (attributes starts, steps)
 *       zeros of `shape` (an int64 constant, X's) with dY's element k on
 *       each axis at starts + k·steps: the backward of a Slice over every
 *       axis with non-zero steps, negative ones placing dY downwards from
 *       the starts (trk_slice_step_grad, the FP32 training
 *       packages' kernel too), at dY's own rank.
 *
 * The other element-wise backwards need no kernel of their own: the
 * training graph builder writes them with forward operators (Mul, Div,
 * Neg, Reshape, Transpose, Split, Pad, Slice, Expand).
 */
#include "train.h"

#include "trk.h"

#include <stdlib.h>
#include <string.h>

static sy_status *need_f32_like(sy_node *n, uint32_t a, uint32_t b)
{
    const sy_tensor *ta, *tb;
    SY_TRY(sy_need_input(H, n, a, &ta));
    SY_TRY(sy_need_input(H, n, b, &tb));
    if (ta->dtype != SY_DT_FLOAT32 || tb->dtype != SY_DT_FLOAT32)
        return ERR(SY_ERR_TYPE, "%s: inputs must be float32, got %s and %s", H->node_op(n), sy_dt_name(ta->dtype),
                   sy_dt_name(tb->dtype));
    if (!sy_shape_equal(ta->rank, ta->dims, tb->rank, tb->dims))
        return ERR(SY_ERR_SHAPE, "%s: dY and X must have the same shape", H->node_op(n));
    return NULL;
}

static sy_status *infer_unary_grad(sy_node *n)
{
    SY_TRY(need_f32_like(n, 0, 1));
    const sy_tensor *x = H->node_input(n, 1);
    return H->node_set_output(n, 0, x->dtype, x->rank, x->dims);
}

static sy_status *run_relu_grad(void *state, const sy_kernel_io *io)
{
    (void)state;
    const float *dy = io->inputs[0]->data, *x = io->inputs[1]->data;
    float *dx = io->outputs[0]->data;
    trk_relu_grad(sy_tensor_numel(io->inputs[1]), dy, x, dx);
    return NULL;
}

static sy_status *run_abs_grad(void *state, const sy_kernel_io *io)
{
    (void)state;
    const float *dy = io->inputs[0]->data, *x = io->inputs[1]->data;
    float *dx = io->outputs[0]->data;
    trk_abs_grad(sy_tensor_numel(io->inputs[1]), dy, x, dx);
    return NULL;
}

/* ---- ReduceToShape ------------------------------------------------------- */

static sy_status *target_shape(sy_node *n, const sy_tensor *dy, int32_t *rank, int64_t *dims)
{
    int64_t cnt = 0;
    const sy_tensor *s;
    SY_TRY(sy_need_input(H, n, 1, &s));
    if (!s->data)
        return ERR(SY_ERR_DYNAMIC_SHAPE, "ReduceToShape: shape (input 1) must be a constant");
    if (s->dtype != SY_DT_INT64 || s->rank != 1 || s->dims[0] > SY_MAX_RANK)
        return ERR(SY_ERR_SHAPE, "ReduceToShape: shape must be a 1-D int64 tensor of at most %d values", SY_MAX_RANK);
    cnt = s->dims[0];
    if (cnt > dy->rank)
        return ERR(SY_ERR_SHAPE, "ReduceToShape: shape has rank %lld, more than dY's %d", (long long)cnt, dy->rank);
    const int64_t *v = s->data;
    for (int64_t i = 0; i < cnt; i++) {
        int64_t d = dy->dims[dy->rank - cnt + i];
        if (v[i] != 1 && v[i] != d)
            return ERR(SY_ERR_SHAPE, "ReduceToShape: shape[%lld] = %lld does not broadcast to dY's dim %lld",
                       (long long)i, (long long)v[i], (long long)d);
        dims[i] = v[i];
    }
    *rank = (int32_t)cnt;
    return NULL;
}

static sy_status *infer_reduce_to_shape(sy_node *n)
{
    const sy_tensor *dy;
    SY_TRY(sy_need_input(H, n, 0, &dy));
    if (dy->dtype != SY_DT_FLOAT32)
        return ERR(SY_ERR_TYPE, "ReduceToShape: dY must be float32, got %s", sy_dt_name(dy->dtype));
    int32_t rank = 0;
    int64_t dims[SY_MAX_RANK];
    SY_TRY(target_shape(n, dy, &rank, dims));
    return H->node_set_output(n, 0, SY_DT_FLOAT32, rank, dims);
}

/* dX[j] = sum of dY[i] over every i that broadcasting maps to j. Walks dY
 * once in order, keeping the index of dX that each position maps to. */
static sy_status *run_reduce_to_shape(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *dy = io->inputs[0];
    sy_tensor *dx = io->outputs[0];
    const int32_t r = dy->rank, off = dy->rank - dx->rank;
    int64_t xstride[SY_MAX_RANK], idx[SY_MAX_RANK] = {0};
    int64_t s = 1;
    for (int32_t k = r - 1; k >= 0; k--) {
        int64_t d = k >= off ? dx->dims[k - off] : 1;
        xstride[k] = d == 1 ? 0 : s; /* a broadcast dim adds into the same element */
        s *= d;
    }
    float *out = dx->data;
    const float *in = dy->data;
    for (int64_t j = 0, m = sy_tensor_numel(dx); j < m; j++)
        out[j] = 0.0f;
    int64_t len = sy_tensor_numel(dy), xo = 0;
    for (int64_t i = 0; i < len; i++) {
        out[xo] += in[i];
        for (int32_t k = r - 1; k >= 0; k--) { /* next position, odometer style */
            idx[k]++;
            xo += xstride[k];
            if (idx[k] < dy->dims[k])
                break;
            xo -= xstride[k] * idx[k];
            idx[k] = 0;
        }
    }
    return NULL;
}

/* ---- SliceGrad --------------------------------------------------------------- */

/* the checked shapes of a SliceGrad node, int32 as trk_slice_step_grad takes them */
typedef struct slice_grad {
    int32_t rank, xd[SY_MAX_RANK], yd[SY_MAX_RANK], start[SY_MAX_RANK], step[SY_MAX_RANK];
} slice_grad;

static sy_status *slice_grad_of(sy_node *n, slice_grad *sg, int64_t *xdims)
{
    const sy_tensor *dy, *s;
    SY_TRY(sy_need_input(H, n, 0, &dy));
    SY_TRY(sy_need_input(H, n, 1, &s));
    if (dy->dtype != SY_DT_FLOAT32)
        return ERR(SY_ERR_TYPE, "SliceGrad: dY must be float32, got %s", sy_dt_name(dy->dtype));
    if (!s->data)
        return ERR(SY_ERR_DYNAMIC_SHAPE, "SliceGrad: shape (input 1) must be a constant");
    if (s->dtype != SY_DT_INT64 || s->rank != 1 || s->dims[0] != dy->rank)
        return ERR(SY_ERR_SHAPE, "SliceGrad: shape must be a 1-D int64 tensor of dY's rank %d", dy->rank);
    int64_t st[SY_MAX_RANK], sp[SY_MAX_RANK];
    if (sy_attr_ints_copy(H, n, "starts", st, SY_MAX_RANK) != dy->rank ||
        sy_attr_ints_copy(H, n, "steps", sp, SY_MAX_RANK) != dy->rank)
        return ERR(SY_ERR_INVALID_ARGUMENT, "SliceGrad: starts and steps must have dY's rank %d entries", dy->rank);
    const int64_t *x = s->data;
    sg->rank = dy->rank;
    for (int32_t d = 0; d < dy->rank; d++) {
        /* the first and last elements dY places, start and start + (dim − 1)·step, inside X (a negative
         * step places them downwards; int32: trk's index arithmetic) */
        if (sp[d] == 0 || sp[d] > INT32_MAX || sp[d] < -INT32_MAX || st[d] < 0 || x[d] < 1 || x[d] > INT32_MAX ||
            st[d] >= x[d] || dy->dims[d] < 1 || dy->dims[d] > INT32_MAX ||
            st[d] + (dy->dims[d] - 1) * sp[d] >= x[d] || st[d] + (dy->dims[d] - 1) * sp[d] < 0)
            return ERR(SY_ERR_SHAPE, "SliceGrad: axis %d: %lld elements of dY from %lld every %lld do not fit X's %lld",
                       (int)d, (long long)dy->dims[d], (long long)st[d], (long long)sp[d], (long long)x[d]);
        sg->xd[d] = (int32_t)x[d], sg->yd[d] = (int32_t)dy->dims[d];
        sg->start[d] = (int32_t)st[d], sg->step[d] = (int32_t)sp[d];
        xdims[d] = x[d];
    }
    return NULL;
}

static sy_status *infer_slice_grad(sy_node *n)
{
    slice_grad sg = {0};
    int64_t xd[SY_MAX_RANK] = {0};
    SY_TRY(slice_grad_of(n, &sg, xd));
    return H->node_set_output(n, 0, SY_DT_FLOAT32, sg.rank, xd);
}

static sy_status *prepare_slice_grad(sy_node *n, void **state)
{
    slice_grad *sg = malloc(sizeof *sg);
    int64_t xd[SY_MAX_RANK] = {0};
    if (!sg)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = slice_grad_of(n, sg, xd);
    if (st) {
        free(sg);
        return st;
    }
    *state = sg;
    return NULL;
}

static sy_status *run_slice_grad(void *state, const sy_kernel_io *io)
{
    const slice_grad *sg = state;
    trk_slice_step_grad(sg->rank, sg->xd, sg->yd, sg->start, sg->step, io->inputs[0]->data, io->outputs[0]->data);
    return NULL;
}

/* ---- ConcatGrad ------------------------------------------------------------ */

/* ConcatGrad(dY, X_1..X_n) -> dX_1..dX_n, attribute axis: dY cut along
 * `axis` into pieces of the X's sizes (the X's are read for their shapes
 * only). The backward of Concat. */
static sy_status *infer_concat_grad(sy_node *n)
{
    const sy_tensor *dy;
    SY_TRY(sy_need_input(H, n, 0, &dy));
    uint32_t nx = H->node_num_inputs(n) - 1;
    if (nx != H->node_num_outputs(n))
        return ERR(SY_ERR_INVALID_ARGUMENT, "ConcatGrad: %u inputs X need %u outputs, got %u", nx, nx,
                   H->node_num_outputs(n));
    if (dy->dtype != SY_DT_FLOAT32)
        return ERR(SY_ERR_TYPE, "ConcatGrad: dY must be float32, got %s", sy_dt_name(dy->dtype));
    int64_t axis = sy_attr_int_or(H, n, "axis", 0);
    if (axis < -dy->rank || axis >= dy->rank)
        return ERR(SY_ERR_INVALID_ARGUMENT, "ConcatGrad: axis %lld is outside rank %d", (long long)axis, dy->rank);
    if (axis < 0)
        axis += dy->rank;
    int64_t total = 0;
    for (uint32_t i = 0; i < nx; i++) {
        const sy_tensor *x;
        SY_TRY(sy_need_input(H, n, 1 + i, &x));
        if (x->rank != dy->rank)
            return ERR(SY_ERR_SHAPE, "ConcatGrad: X_%u has rank %d, dY %d", i + 1, x->rank, dy->rank);
        for (int32_t d = 0; d < dy->rank; d++)
            if (d != axis && x->dims[d] != dy->dims[d])
                return ERR(SY_ERR_SHAPE, "ConcatGrad: X_%u dim %d is %lld, dY's %lld", i + 1, d,
                           (long long)x->dims[d], (long long)dy->dims[d]);
        total += x->dims[axis];
        SY_TRY(H->node_set_output(n, i, SY_DT_FLOAT32, x->rank, x->dims));
    }
    if (total != dy->dims[axis])
        return ERR(SY_ERR_SHAPE, "ConcatGrad: the X's add up to %lld along axis %lld, dY has %lld", (long long)total,
                   (long long)axis, (long long)dy->dims[axis]);
    return NULL;
}

static sy_status *prepare_concat_grad(sy_node *n, void **state)
{
    int64_t *axis = malloc(sizeof *axis);
    if (!axis)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    *axis = sy_attr_int_or(H, n, "axis", 0);
    if (*axis < 0)
        *axis += H->node_input(n, 0)->rank;
    *state = axis;
    return NULL;
}

static sy_status *run_concat_grad(void *state, const sy_kernel_io *io)
{
    const sy_tensor *dy = io->inputs[0];
    const int64_t axis = *(const int64_t *)state;
    int64_t total = 0;
    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < axis; d++)
        outer *= dy->dims[d];
    for (int32_t d = (int32_t)axis + 1; d < dy->rank; d++)
        inner *= dy->dims[d];
    const float *src = dy->data;
    for (uint32_t i = 0; i < io->n_outputs; i++) {
        int64_t len = io->inputs[1 + i]->dims[axis];
        if (io->outputs[i]) {
            float *dst = io->outputs[i]->data;
            for (int64_t o = 0; o < outer; o++)
                memcpy(dst + o * len * inner, src + (o * dy->dims[axis] + total) * inner,
                       (size_t)(len * inner) * sizeof *dst);
        }
        total += len;
    }
    return NULL;
}

static const sy_attr_def a_axis[] = {{"axis", SY_ATTR_INT, false}};
static const sy_attr_def a_slice[] = {{"starts", SY_ATTR_INTS, true}, {"steps", SY_ATTR_INTS, true}};

#define G_SCHEMA(op, nin, infer_fn, doc)                                                                           \
    {sizeof(sy_op_schema), SY_TRAIN_DOMAIN, op, 1, nin, nin, 1, 1, SY_NO_ATTRS, infer_fn, SY_NO_INPLACE, 0, doc}
#define G_KERNEL(op, run_fn)                                                                                       \
    {sizeof(sy_kernel_def), SY_TRAIN_DOMAIN, op, 1, 0, "cpu_ref", SY_DT_BIT(SY_DT_FLOAT32), 0, 0u, NULL,          \
     sy_prepare_nothing, run_fn, NULL, NULL}

const sy_op_schema sy_train_elem_schemas[] = {
    G_SCHEMA("ReluGrad", 2, infer_unary_grad, "dX = X > 0 ? dY : 0"),
    G_SCHEMA("AbsGrad", 2, infer_unary_grad, "dX = sign(X) * dY"),
    G_SCHEMA("ReduceToShape", 2, infer_reduce_to_shape, "sum dY over the dims broadcasting stretched from shape"),
    {sizeof(sy_op_schema), SY_TRAIN_DOMAIN, "ConcatGrad", 1, 2, -1, 1, -1, SY_ATTRS(a_axis), infer_concat_grad,
     SY_NO_INPLACE, SY_SCHEMA_OPTIONAL_OUTPUTS, "dY cut along axis into the sizes of the X's (an X without gradient: omitted)"},
    {sizeof(sy_op_schema), SY_TRAIN_DOMAIN, "SliceGrad", 1, 2, 2, 1, 1, SY_ATTRS(a_slice), infer_slice_grad,
     SY_NO_INPLACE, 0, "zeros of shape with dY's element k on each axis at starts + k * steps"},
};
const uint32_t sy_train_elem_n_schemas = SY_COUNT_OF(sy_train_elem_schemas);

const sy_kernel_def sy_train_elem_kernels[] = {
    G_KERNEL("ReluGrad", run_relu_grad),
    G_KERNEL("AbsGrad", run_abs_grad),
    G_KERNEL("ReduceToShape", run_reduce_to_shape),
    {sizeof(sy_kernel_def), SY_TRAIN_DOMAIN, "ConcatGrad", 1, 0, "cpu_ref", SY_DT_BIT(SY_DT_FLOAT32), 0, 0u, NULL,
     prepare_concat_grad, run_concat_grad, sy_release_free, NULL},
    {sizeof(sy_kernel_def), SY_TRAIN_DOMAIN, "SliceGrad", 1, 0, "cpu_ref", SY_DT_BIT(SY_DT_FLOAT32), 0, 0u, NULL,
     prepare_slice_grad, run_slice_grad, sy_release_free, NULL},
};
const uint32_t sy_train_elem_n_kernels = SY_COUNT_OF(sy_train_elem_kernels);
