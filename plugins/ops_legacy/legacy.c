/*
 * ops_legacy: the experimental operators ONNX removed (opset 10) that
 * ONNX Runtime still runs, so models exported in their time load
 * (fns_candy_style_transfer and the other early CoreML / Torch7 exports).
 * Default domain, fp32 cpu_ref kernels:
 *
 *   ImageScaler        y[n, c] = scale * x[n, c] + bias[c]  (NCHW)
 *   Crop               x[:, :, top : H - bottom, left : W - right] with
 *                      border = [left, top, right, bottom]; `scale` = [h, w]
 *                      takes h x w from (top, left) instead
 *   Affine             alpha * x + beta
 *   ScaledTanh         alpha * tanh(beta * x)
 *   ParametricSoftplus alpha * ln(1 + exp(beta * x))
 *   Scale              scale * x
 */
#include "switchyard/sy_sdk.h"

#include <math.h>
#include <stdlib.h>

static const sy_host_api *H; /* process-wide: the same host table in every environment */

#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

static sy_status *need_f32(const sy_node *n, const sy_tensor **x)
{
    SY_TRY(sy_need_input(H, n, 0, x));
    if ((*x)->dtype != SY_DT_FLOAT32)
        return ERR(SY_ERR_TYPE, "input must be float32, got %s", sy_dt_name((*x)->dtype));
    return NULL;
}

/* ======================================================================== */
/* pointwise: Affine, ScaledTanh, ParametricSoftplus, Scale                 */
/* ======================================================================== */

typedef enum { P_AFFINE, P_SCALED_TANH, P_SOFTPLUS, P_SCALE } point_kind;

typedef struct point_state {
    point_kind kind;
    float alpha, beta;
} point_state;

static sy_status *infer_point(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(need_f32(n, &x));
    return H->node_set_output(n, 0, x->dtype, x->rank, x->dims);
}

static sy_status *prepare_point(sy_node *n, void **state)
{
    point_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    const char *op = H->node_op(n);
    if (!strcmp(op, "Affine")) {
        s->kind = P_AFFINE;
        s->alpha = sy_attr_float_or(H, n, "alpha", 1.0f);
        s->beta = sy_attr_float_or(H, n, "beta", 0.0f);
    } else if (!strcmp(op, "ScaledTanh")) {
        s->kind = P_SCALED_TANH;
        s->alpha = sy_attr_float_or(H, n, "alpha", 1.0f);
        s->beta = sy_attr_float_or(H, n, "beta", 1.0f);
    } else if (!strcmp(op, "ParametricSoftplus")) {
        s->kind = P_SOFTPLUS;
        s->alpha = sy_attr_float_or(H, n, "alpha", 1.0f);
        s->beta = sy_attr_float_or(H, n, "beta", 1.0f);
    } else {
        s->kind = P_SCALE;
        s->alpha = sy_attr_float_or(H, n, "scale", 1.0f);
    }
    *state = s;
    return NULL;
}

static sy_status *run_point(void *state, const sy_kernel_io *io)
{
    const point_state *s = state;
    const float *x = io->inputs[0]->data;
    float *y = io->outputs[0]->data;
    int64_t n = sy_tensor_numel(io->inputs[0]);
    float a = s->alpha, b = s->beta;
    switch (s->kind) {
    case P_AFFINE:
        for (int64_t i = 0; i < n; i++)
            y[i] = a * x[i] + b;
        break;
    case P_SCALED_TANH:
        for (int64_t i = 0; i < n; i++)
            y[i] = a * tanhf(b * x[i]);
        break;
    case P_SOFTPLUS:
        for (int64_t i = 0; i < n; i++) {
            float z = b * x[i];
            y[i] = a * (z > 0 ? z + log1pf(expf(-z)) : log1pf(expf(z)));
        }
        break;
    case P_SCALE:
        for (int64_t i = 0; i < n; i++)
            y[i] = a * x[i];
        break;
    }
    return NULL;
}

/* ======================================================================== */
/* ImageScaler                                                              */
/* ======================================================================== */

static sy_status *infer_image_scaler(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(need_f32(n, &x));
    if (x->rank != 4)
        return ERR(SY_ERR_SHAPE, "input must be 4-D NCHW, got rank %d", x->rank);
    const float *bias;
    size_t nb = 0;
    if (H->attr_floats(n, "bias", &bias, &nb) && (int64_t)nb != x->dims[1])
        return ERR(SY_ERR_INVALID_MODEL, "bias has %zu values, the input has %lld channels", nb,
                   (long long)x->dims[1]);
    return H->node_set_output(n, 0, x->dtype, x->rank, x->dims);
}

typedef struct scaler_state {
    float scale;
    const float *bias; /* C values or NULL; valid while the model is loaded */
} scaler_state;

static sy_status *prepare_image_scaler(sy_node *n, void **state)
{
    scaler_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->scale = sy_attr_float_or(H, n, "scale", 1.0f);
    size_t nb = 0;
    if (!H->attr_floats(n, "bias", &s->bias, &nb))
        s->bias = NULL;
    *state = s;
    return NULL;
}

static sy_status *run_image_scaler(void *state, const sy_kernel_io *io)
{
    const scaler_state *s = state;
    const sy_tensor *x = io->inputs[0];
    int64_t N = x->dims[0], C = x->dims[1], hw = x->dims[2] * x->dims[3];
    const float *xd = x->data;
    float *y = io->outputs[0]->data;
    for (int64_t b = 0; b < N; b++)
        for (int64_t c = 0; c < C; c++) {
            float bias = s->bias ? s->bias[c] : 0.0f;
            int64_t o = (b * C + c) * hw;
            for (int64_t i = 0; i < hw; i++)
                y[o + i] = s->scale * xd[o + i] + bias;
        }
    return NULL;
}

/* ======================================================================== */
/* Crop                                                                     */
/* ======================================================================== */

typedef struct crop_box {
    int64_t top, left, h, w;
} crop_box;

static sy_status *crop_box_of(const sy_node *n, const sy_tensor *x, crop_box *b)
{
    if (x->rank != 4)
        return ERR(SY_ERR_SHAPE, "input must be 4-D NCHW, got rank %d", x->rank);
    int64_t bd[4], sc[2];
    int64_t nb = sy_attr_ints_copy(H, n, "border", bd, 4);
    if (nb != 4)
        return ERR(SY_ERR_INVALID_MODEL, "border must have 4 values (left, top, right, bottom), got %lld",
                   (long long)(nb < 0 ? 0 : nb));
    for (int i = 0; i < 4; i++)
        if (bd[i] < 0)
            return ERR(SY_ERR_INVALID_MODEL, "border values must be >= 0, got %lld", (long long)bd[i]);
    int64_t H_ = x->dims[2], W = x->dims[3];
    int64_t ns = sy_attr_ints_copy(H, n, "scale", sc, 2);
    int64_t bottom = H_ - bd[3], right = W - bd[2];
    if (ns >= 0) {
        if (ns != 2)
            return ERR(SY_ERR_INVALID_MODEL, "scale must have 2 values (height, width), got %lld", (long long)ns);
        bottom = bd[1] + sc[0];
        right = bd[0] + sc[1];
    }
    if (bottom <= bd[1] || right <= bd[0] || bottom > H_ || right > W)
        return ERR(SY_ERR_SHAPE, "crop rows [%lld, %lld) x columns [%lld, %lld) do not fit the %lld x %lld input",
                   (long long)bd[1], (long long)bottom, (long long)bd[0], (long long)right, (long long)H_, (long long)W);
    b->top = bd[1];
    b->left = bd[0];
    b->h = bottom - bd[1];
    b->w = right - bd[0];
    return NULL;
}

static sy_status *infer_crop(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(need_f32(n, &x));
    crop_box b;
    SY_TRY(crop_box_of(n, x, &b));
    int64_t d[4] = {x->dims[0], x->dims[1], b.h, b.w};
    return H->node_set_output(n, 0, x->dtype, 4, d);
}

static sy_status *prepare_crop(sy_node *n, void **state)
{
    crop_box *b = calloc(1, sizeof *b);
    if (!b)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = crop_box_of(n, H->node_input(n, 0), b);
    if (st) {
        free(b);
        return st;
    }
    *state = b;
    return NULL;
}

static sy_status *run_crop(void *state, const sy_kernel_io *io)
{
    const crop_box *b = state;
    const sy_tensor *x = io->inputs[0];
    int64_t planes = x->dims[0] * x->dims[1], H_ = x->dims[2], W = x->dims[3];
    const float *xd = x->data;
    float *y = io->outputs[0]->data;
    for (int64_t p = 0; p < planes; p++)
        for (int64_t r = 0; r < b->h; r++)
            memcpy(y + (p * b->h + r) * b->w, xd + (p * H_ + b->top + r) * W + b->left, (size_t)b->w * sizeof(float));
    return NULL;
}

/* ======================================================================== */
/* registration                                                             */
/* ======================================================================== */

#define ATTR(n, t) {n, SY_ATTR_##t, false}
static const sy_attr_def a_ab[] = {ATTR("alpha", FLOAT), ATTR("beta", FLOAT)};
static const sy_attr_def a_scale[] = {ATTR("scale", FLOAT)};
static const sy_attr_def a_scaler[] = {ATTR("bias", FLOATS), ATTR("scale", FLOAT)};
static const sy_attr_def a_crop[] = {ATTR("border", INTS), ATTR("scale", INTS)};

static const sy_inplace_pair ip00[] = {{0, 0, false}};
#define P(op, attrs) SY_SCHEMA(op, 1, 1, 1, 1, 1, SY_ATTRS(attrs), infer_point, SY_INPLACE(ip00), 0)

static const sy_op_schema schemas[] = {
    P("Affine", a_ab),
    P("ScaledTanh", a_ab),
    P("ParametricSoftplus", a_ab),
    P("Scale", a_scale),
    SY_SCHEMA("ImageScaler", 1, 1, 1, 1, 1, SY_ATTRS(a_scaler), infer_image_scaler, SY_INPLACE(ip00), 0),
    SY_SCHEMA("Crop", 1, 1, 1, 1, 1, SY_ATTRS(a_crop), infer_crop, SY_NO_INPLACE, 0),
};

#define F32 SY_DT_BIT(SY_DT_FLOAT32)
static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("Affine", 1, 0, F32, 0, prepare_point, run_point, sy_release_free),
    SY_CPU_KERNEL("ScaledTanh", 1, 0, F32, 0, prepare_point, run_point, sy_release_free),
    SY_CPU_KERNEL("ParametricSoftplus", 1, 0, F32, 0, prepare_point, run_point, sy_release_free),
    SY_CPU_KERNEL("Scale", 1, 0, F32, 0, prepare_point, run_point, sy_release_free),
    SY_CPU_KERNEL("ImageScaler", 1, 0, F32, 0, prepare_image_scaler, run_image_scaler, sy_release_free),
    SY_CPU_KERNEL("Crop", 1, 0, F32, 0, prepare_crop, run_crop, sy_release_free),
};

static sy_status *legacy_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}

static void legacy_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "ops_legacy",
    .version = "0.1.0",
    .description = "removed experimental ONNX operators ONNX Runtime still runs (ImageScaler, Crop, Affine, ...)",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = legacy_init,
    .fini = legacy_fini,
};

SY_PLUGIN_DEFINE(desc)
