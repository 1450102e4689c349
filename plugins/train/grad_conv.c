/*
 * Backward operators of 2-D convolution and max pooling (switchyard.train
 * domain, NCHW, float32, cpu_ref):
 *
 *   ConvGrad(dY, X, W) -> dX, dW [, dB]
 *       the gradients of Y = Conv(X, W, B) for the attributes strides,
 *       pads or auto_pad, dilations and group of the forward node (its
 *       attributes are copied as they are). Any output may be omitted.
 *   MaxPoolGrad(dY, X) -> dX
 *       each output's gradient goes to the input element its window
 *       selected (the first maximum in window order, as ONNX Runtime's
 *       MaxPool indices), with kernel_shape, strides, pads, dilations.
 *
 * ConvGrad's loops are trk_conv_grad's (plugin_sdk/kernels/trk.c), shared
 * with the FP32 training packages.
 */
#include "train.h"

#include "trk.h"

#include <stdlib.h>
#include <string.h>

typedef struct geom2d {
    int64_t k[2], s[2], d[2], p[4]; /* kernel, strides, dilations, pads (top, left, bottom, right) */
    int64_t group;
} geom2d;

/* Reads a 2-D attribute list into v[0..1] (default `def` each). */
static sy_status *attr_pair(sy_node *n, const char *name, int64_t def, int64_t *v, int64_t count)
{
    int64_t got[4];
    int64_t c = sy_attr_ints_copy(H, n, name, got, 4);
    if (c < 0) {
        for (int64_t i = 0; i < count; i++)
            v[i] = def;
        return NULL;
    }
    if (c != count)
        return ERR(SY_ERR_INVALID_ARGUMENT, "%s: %s needs %lld values for 2-D data, got %lld", H->node_op(n), name,
                   (long long)count, (long long)c);
    memcpy(v, got, (size_t)count * sizeof *v);
    return NULL;
}

/* Reads the forward node's geometry. `w` (Conv) gives the kernel size;
 * MaxPool reads kernel_shape. auto_pad SAME_UPPER / SAME_LOWER / VALID is
 * resolved into explicit pads from X's size, as the forward op does:
 * out = ceil(in / stride), total pad = max(0, (out-1)*stride + (k-1)*dil + 1 - in),
 * the odd pixel at the end (SAME_UPPER) or the start (SAME_LOWER). */
static sy_status *read_geom(sy_node *n, const sy_tensor *x, const sy_tensor *w, geom2d *g, bool pool)
{
    if (x->dtype != SY_DT_FLOAT32 || x->rank != 4)
        return ERR(SY_ERR_SHAPE, "%s: X must be a 4-D float32 NCHW tensor, got rank %d %s", H->node_op(n), x->rank,
                   sy_dt_name(x->dtype));
    if (pool)
        SY_TRY(attr_pair(n, "kernel_shape", -1, g->k, 2));
    else if (w && w->rank == 4)
        g->k[0] = w->dims[2], g->k[1] = w->dims[3];
    SY_TRY(attr_pair(n, "strides", 1, g->s, 2));
    SY_TRY(attr_pair(n, "dilations", 1, g->d, 2));
    SY_TRY(attr_pair(n, "pads", 0, g->p, 4));
    g->group = pool ? 1 : sy_attr_int_or(H, n, "group", 1);
    for (int i = 0; i < 2; i++)
        if (g->s[i] < 1 || g->d[i] < 1 || g->k[i] < 1)
            return ERR(SY_ERR_INVALID_ARGUMENT, "%s: kernel_shape, strides and dilations must be >= 1",
                       H->node_op(n));
    for (int i = 0; i < 4; i++)
        if (g->p[i] < 0)
            return ERR(SY_ERR_INVALID_ARGUMENT, "%s: pads must be >= 0", H->node_op(n));
    char ap[16];
    sy_attr_string_or(H, n, "auto_pad", "NOTSET", ap, sizeof ap);
    if (!strcmp(ap, "VALID")) {
        memset(g->p, 0, sizeof g->p);
    } else if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
        for (int i = 0; i < 2; i++) {
            int64_t in = x->dims[2 + i], out = (in + g->s[i] - 1) / g->s[i];
            int64_t total = (out - 1) * g->s[i] + (g->k[i] - 1) * g->d[i] + 1 - in;
            total = total > 0 ? total : 0;
            int64_t small = total / 2, big = total - small;
            g->p[i] = ap[5] == 'U' ? small : big;
            g->p[i + 2] = ap[5] == 'U' ? big : small;
        }
    } else if (strcmp(ap, "NOTSET")) {
        return ERR(SY_ERR_INVALID_ARGUMENT, "%s: auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got %s",
                   H->node_op(n), ap);
    }
    return NULL;
}

/* Output size of one spatial axis (floor mode). */
static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1)
{
    return (in + p0 + p1 - d * (k - 1) - 1) / s + 1;
}

static sy_status *check_dy(sy_node *n, const sy_tensor *dy, int64_t nb, int64_t ch, int64_t oh, int64_t ow)
{
    if (dy->dtype != SY_DT_FLOAT32 || dy->rank != 4 || dy->dims[0] != nb || dy->dims[1] != ch || dy->dims[2] != oh ||
        dy->dims[3] != ow)
        return ERR(SY_ERR_SHAPE, "%s: dY must be float32 [%lld,%lld,%lld,%lld], the forward output's shape",
                   H->node_op(n), (long long)nb, (long long)ch, (long long)oh, (long long)ow);
    return NULL;
}

/* ---- ConvGrad -------------------------------------------------------------- */

static sy_status *infer_conv_grad(sy_node *n)
{
    const sy_tensor *dy, *x, *w;
    SY_TRY(sy_need_input(H, n, 0, &dy));
    SY_TRY(sy_need_input(H, n, 1, &x));
    SY_TRY(sy_need_input(H, n, 2, &w));
    geom2d g;
    SY_TRY(read_geom(n, x, w, &g, false));
    if (w->dtype != SY_DT_FLOAT32 || w->rank != 4)
        return ERR(SY_ERR_SHAPE, "ConvGrad: W must be a 4-D float32 tensor [M, C/group, kH, kW]");
    if (g.group < 1 || x->dims[1] % g.group || w->dims[0] % g.group || w->dims[1] * g.group != x->dims[1])
        return ERR(SY_ERR_SHAPE, "ConvGrad: group %lld does not fit X's %lld channels and W [%lld, %lld, ...]",
                   (long long)g.group, (long long)x->dims[1], (long long)w->dims[0], (long long)w->dims[1]);
    int64_t oh = out_size(x->dims[2], w->dims[2], g.s[0], g.d[0], g.p[0], g.p[2]);
    int64_t ow = out_size(x->dims[3], w->dims[3], g.s[1], g.d[1], g.p[1], g.p[3]);
    SY_TRY(check_dy(n, dy, x->dims[0], w->dims[0], oh, ow));
    SY_TRY(H->node_set_output(n, 0, SY_DT_FLOAT32, 4, x->dims));
    if (H->node_num_outputs(n) > 1)
        SY_TRY(H->node_set_output(n, 1, SY_DT_FLOAT32, 4, w->dims));
    if (H->node_num_outputs(n) > 2)
        SY_TRY(H->node_set_output(n, 2, SY_DT_FLOAT32, 1, w->dims));
    return NULL;
}

typedef struct conv_grad_state {
    geom2d g;
} conv_grad_state;

static sy_status *prepare_conv_grad(sy_node *n, void **state)
{
    conv_grad_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = read_geom(n, H->node_input(n, 1), H->node_input(n, 2), &s->g, false);
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

/* The gradients themselves are trk_conv_grad's (plugin_sdk/kernels/trk.c),
 * the loops the FP32 training packages run too. */
static sy_status *run_conv_grad(void *state, const sy_kernel_io *io)
{
    const geom2d *g = &((const conv_grad_state *)state)->g;
    const sy_tensor *tdy = io->inputs[0], *tx = io->inputs[1], *tw = io->inputs[2];
    float *dx = io->n_outputs > 0 && io->outputs[0] ? io->outputs[0]->data : NULL;
    float *dw = io->n_outputs > 1 && io->outputs[1] ? io->outputs[1]->data : NULL;
    float *db = io->n_outputs > 2 && io->outputs[2] ? io->outputs[2]->data : NULL;
    const trk_conv c = {.n = tx->dims[0], .c_in = tx->dims[1], .ih = tx->dims[2], .iw = tx->dims[3],
                        .m = tw->dims[0], .cg = tw->dims[1], .kh = tw->dims[2], .kw = tw->dims[3],
                        .oh = tdy->dims[2], .ow = tdy->dims[3], .group = g->group,
                        .s = {g->s[0], g->s[1]}, .p = {g->p[0], g->p[1]}, .d = {g->d[0], g->d[1]}};
    trk_conv_grad(&c, tdy->data, tx->data, tw->data, dx, dw, db);
    return NULL;
}

/* ---- MaxPoolGrad ----------------------------------------------------------- */

static sy_status *infer_maxpool_grad(sy_node *n)
{
    const sy_tensor *dy, *x;
    SY_TRY(sy_need_input(H, n, 0, &dy));
    SY_TRY(sy_need_input(H, n, 1, &x));
    geom2d g;
    SY_TRY(read_geom(n, x, NULL, &g, true));
    if (sy_attr_int_or(H, n, "ceil_mode", 0))
        return ERR(SY_ERR_UNSUPPORTED, "MaxPoolGrad: ceil_mode 1 is not supported (floor output sizes only)");
    int64_t oh = out_size(x->dims[2], g.k[0], g.s[0], g.d[0], g.p[0], g.p[2]);
    int64_t ow = out_size(x->dims[3], g.k[1], g.s[1], g.d[1], g.p[1], g.p[3]);
    SY_TRY(check_dy(n, dy, x->dims[0], x->dims[1], oh, ow));
    return H->node_set_output(n, 0, SY_DT_FLOAT32, 4, x->dims);
}

static sy_status *prepare_maxpool_grad(sy_node *n, void **state)
{
    conv_grad_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = read_geom(n, H->node_input(n, 1), NULL, &s->g, true);
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static sy_status *run_maxpool_grad(void *state, const sy_kernel_io *io)
{
    const geom2d *g = &((const conv_grad_state *)state)->g;
    const sy_tensor *tdy = io->inputs[0], *tx = io->inputs[1];
    const float *dy = tdy->data, *x = tx->data;
    float *dx = io->outputs[0]->data;
    const int64_t planes = tx->dims[0] * tx->dims[1], ih = tx->dims[2], iw = tx->dims[3];
    const int64_t oh = tdy->dims[2], ow = tdy->dims[3];
    memset(dx, 0, (size_t)sy_tensor_numel(tx) * sizeof *dx);
    for (int64_t p = 0; p < planes; p++)
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++) {
                int64_t best = -1;
                float bv = 0.0f;
                for (int64_t ky = 0; ky < g->k[0]; ky++) {
                    const int64_t iy = oy * g->s[0] - g->p[0] + ky * g->d[0];
                    if (iy < 0 || iy >= ih)
                        continue;
                    for (int64_t kx = 0; kx < g->k[1]; kx++) {
                        const int64_t ix = ox * g->s[1] - g->p[1] + kx * g->d[1];
                        if (ix < 0 || ix >= iw)
                            continue;
                        const int64_t i = (p * ih + iy) * iw + ix;
                        if (best < 0 || x[i] > bv) { /* strict: the first maximum keeps the gradient */
                            best = i;
                            bv = x[i];
                        }
                    }
                }
                if (best >= 0)
                    dx[best] += dy[(p * oh + oy) * ow + ox];
            }
    return NULL;
}

#define ATTR(n, t) {n, SY_ATTR_##t, false}
static const sy_attr_def a_conv[] = {ATTR("auto_pad", STRING), ATTR("dilations", INTS), ATTR("group", INT),
                                     ATTR("kernel_shape", INTS), ATTR("pads", INTS), ATTR("strides", INTS)};
static const sy_attr_def a_pool[] = {ATTR("auto_pad", STRING), ATTR("ceil_mode", INT), ATTR("dilations", INTS),
                                     ATTR("kernel_shape", INTS), ATTR("pads", INTS), ATTR("storage_order", INT),
                                     ATTR("strides", INTS)};

const sy_op_schema sy_train_conv_schemas[] = {
    {sizeof(sy_op_schema), SY_TRAIN_DOMAIN, "ConvGrad", 1, 3, 3, 1, 3, SY_ATTRS(a_conv), infer_conv_grad,
     SY_NO_INPLACE, SY_SCHEMA_OPTIONAL_OUTPUTS, "dX, dW, dB of a 2-D Conv (each may be omitted: the first Conv's dX)"},
    {sizeof(sy_op_schema), SY_TRAIN_DOMAIN, "MaxPoolGrad", 1, 2, 2, 1, 1, SY_ATTRS(a_pool), infer_maxpool_grad,
     SY_NO_INPLACE, 0, "dX of a 2-D MaxPool"},
};
const uint32_t sy_train_conv_n_schemas = SY_COUNT_OF(sy_train_conv_schemas);

const sy_kernel_def sy_train_conv_kernels[] = {
    {sizeof(sy_kernel_def), SY_TRAIN_DOMAIN, "ConvGrad", 1, 0, "cpu_ref", SY_DT_BIT(SY_DT_FLOAT32), 1, 0u, NULL,
     prepare_conv_grad, run_conv_grad, sy_release_free, NULL},
    {sizeof(sy_kernel_def), SY_TRAIN_DOMAIN, "MaxPoolGrad", 1, 0, "cpu_ref", SY_DT_BIT(SY_DT_FLOAT32), 1, 0u, NULL,
     prepare_maxpool_grad, run_maxpool_grad, sy_release_free, NULL},
};
const uint32_t sy_train_conv_n_kernels = SY_COUNT_OF(sy_train_conv_kernels);
