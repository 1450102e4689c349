/*
 * com.microsoft quantized (QLinear) operators on uint8 / int8 tensors with
 * per-tensor scales and zero points (a missing zero point is 0):
 *
 *   QLinearSigmoid, QLinearLeakyRelu (X, X_scale, X_zp, Y_scale, Y_zp)
 *       y = quantize(f(dequantize(x))) through a 256-entry table
 *   QLinearGlobalAveragePool (X, x_scale, x_zp, y_scale, y_zp), NCHW or channels_last
 *       y = (sum - n zx) sx / (sy n) + zy
 *
 * Results round half to even and saturate, in float as ONNX Runtime's
 * kernels compute them. (QLinearAdd, QLinearMul, QLinearConcat and the
 * other ONNX Runtime quantizer ops live in ops_quant.)
 */
#include "contrib.h"

#include <math.h>
#include <stdlib.h>

#define Q8 (SY_DT_BIT(SY_DT_UINT8) | SY_DT_BIT(SY_DT_INT8))

typedef struct qp {
    float scale;
    int32_t zp;
} qp;

static const sy_tensor *in_opt(const sy_node *n, uint32_t i)
{
    return i < H->node_num_inputs(n) ? H->node_input(n, i) : NULL;
}

/* scale (float32 scalar) and zero point (scalar of `dt`, optional) known at plan time */
static sy_status *read_qp(const sy_node *n, uint32_t si, uint32_t zi, sy_dtype dt, qp *out)
{
    const sy_tensor *s = in_opt(n, si), *z = in_opt(n, zi);
    if (!s || s->dtype != SY_DT_FLOAT32 || sy_tensor_numel(s) != 1)
        return ERR(SY_ERR_SHAPE, "input %u (scale) must be a float32 scalar", si);
    if (!s->data)
        return ERR(SY_ERR_UNSUPPORTED, "input %u (scale) must be a constant", si);
    out->scale = *(const float *)s->data;
    if (!(out->scale > 0.0f) || !isfinite(out->scale))
        return ERR(SY_ERR_INVALID_MODEL, "input %u (scale) must be positive and finite, got %g", si, (double)out->scale);
    out->zp = 0;
    if (z) {
        if (z->dtype != dt || sy_tensor_numel(z) != 1)
            return ERR(SY_ERR_SHAPE, "input %u (zero point) must be a %s scalar", zi, sy_dt_name(dt));
        if (!z->data)
            return ERR(SY_ERR_UNSUPPORTED, "input %u (zero point) must be a constant", zi);
        out->zp = dt == SY_DT_UINT8 ? *(const uint8_t *)z->data : *(const int8_t *)z->data;
    }
    return NULL;
}

/* round(v) + zp, saturated: the zero point is added after rounding (adding
 * it in float first would round 55.4999995 + 60 to a tie) */
static int32_t q_sat(float v, int32_t zp, sy_dtype dt)
{
    float r = nearbyintf(v) + (float)zp; /* round half to even in the default rounding mode */
    float lo = dt == SY_DT_UINT8 ? 0.0f : -128.0f, hi = dt == SY_DT_UINT8 ? 255.0f : 127.0f;
    return (int32_t)(r < lo ? lo : r > hi ? hi : r);
}

static int32_t ld8(const void *p, sy_dtype dt, int64_t i)
{
    return dt == SY_DT_UINT8 ? ((const uint8_t *)p)[i] : ((const int8_t *)p)[i];
}

static void st8(void *p, sy_dtype dt, int64_t i, int32_t v)
{
    if (dt == SY_DT_UINT8)
        ((uint8_t *)p)[i] = (uint8_t)v;
    else
        ((int8_t *)p)[i] = (int8_t)v;
}

static sy_status *need_q8(const sy_node *n, uint32_t i, const char *what, const sy_tensor **out)
{
    const sy_tensor *t = in_opt(n, i);
    if (!t)
        return ERR(SY_ERR_INVALID_ARGUMENT, "input %u (%s) is required", i, what);
    if (t->dtype != SY_DT_UINT8 && t->dtype != SY_DT_INT8)
        return ERR(SY_ERR_TYPE, "%s must be uint8 or int8, got %s", what, sy_dt_name(t->dtype));
    *out = t;
    return NULL;
}

/* ======================================================================== */
/* QLinearSigmoid, QLinearLeakyRelu: table of the 256 codes                 */
/* ======================================================================== */

typedef struct qlut_state {
    sy_dtype dt;
    uint8_t lut[256]; /* indexed by the code's byte */
} qlut_state;

static sy_status *infer_qlut(sy_node *n)
{
    const sy_tensor *x = NULL; /* set by need_q8 (GCC -O3 cannot tell) */
    SY_TRY(need_q8(n, 0, "X", &x));
    qp tmp;
    SY_TRY(read_qp(n, 1, 2, x->dtype, &tmp));
    SY_TRY(read_qp(n, 3, 4, x->dtype, &tmp));
    return H->node_set_output(n, 0, x->dtype, x->rank, x->dims);
}

static sy_status *prepare_qlut(sy_node *n, void **state)
{
    qlut_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->dt = H->node_input(n, 0)->dtype;
    qp x, y;
    sy_status *st = read_qp(n, 1, 2, s->dt, &x);
    if (!st)
        st = read_qp(n, 3, 4, s->dt, &y);
    if (st) {
        free(s);
        return st;
    }
    bool sig = !strcmp(H->node_op(n), "QLinearSigmoid");
    float alpha = sy_attr_float_or(H, n, "alpha", 0.01f);
    for (int c = 0; c < 256; c++) {
        int32_t code = s->dt == SY_DT_UINT8 ? c : (int32_t)(int8_t)(uint8_t)c;
        float v = (float)(code - x.zp) * x.scale;
        float f = sig ? 1.0f / (1.0f + expf(-v)) : (v >= 0.0f ? v : v * alpha);
        int32_t q = q_sat(f / y.scale, y.zp, s->dt);
        s->lut[c] = (uint8_t)q;
    }
    *state = s;
    return NULL;
}

static sy_status *run_qlut(void *state, const sy_kernel_io *io)
{
    const qlut_state *s = state;
    const uint8_t *x = io->inputs[0]->data;
    uint8_t *y = io->outputs[0]->data;
    int64_t n = sy_tensor_numel(io->inputs[0]);
    for (int64_t i = 0; i < n; i++)
        y[i] = s->lut[x[i]];
    return NULL;
}

/* ======================================================================== */
/* QLinearGlobalAveragePool                                                 */
/* ======================================================================== */

typedef struct qgap_state {
    sy_dtype dt;
    bool channels_last;
    qp x, y;
} qgap_state;

static sy_status *infer_qgap(sy_node *n)
{
    const sy_tensor *x = NULL; /* set by need_q8 (GCC -O3 cannot tell) */
    SY_TRY(need_q8(n, 0, "X", &x));
    if (x->rank < 3)
        return ERR(SY_ERR_SHAPE, "X must have rank >= 3 (N, C, spatial...), got %d", x->rank);
    qp tmp;
    SY_TRY(read_qp(n, 1, 2, x->dtype, &tmp));
    SY_TRY(read_qp(n, 3, 4, x->dtype, &tmp));
    bool cl = sy_attr_int_or(H, n, "channels_last", 0) != 0;
    int64_t d[SY_MAX_RANK];
    for (int32_t i = 0; i < x->rank; i++)
        d[i] = i == 0 || i == (cl ? x->rank - 1 : 1) ? x->dims[i] : 1;
    return H->node_set_output(n, 0, x->dtype, x->rank, d);
}

static sy_status *prepare_qgap(sy_node *n, void **state)
{
    qgap_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->dt = H->node_input(n, 0)->dtype;
    s->channels_last = sy_attr_int_or(H, n, "channels_last", 0) != 0;
    sy_status *st = read_qp(n, 1, 2, s->dt, &s->x);
    if (!st)
        st = read_qp(n, 3, 4, s->dt, &s->y);
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static sy_status *run_qgap(void *state, const sy_kernel_io *io)
{
    const qgap_state *s = state;
    const sy_tensor *x = io->inputs[0];
    int64_t N = x->dims[0], C = s->channels_last ? x->dims[x->rank - 1] : x->dims[1];
    int64_t nc = N * C, sp = nc > 0 ? sy_tensor_numel(x) / nc : 0;
    float mult = s->x.scale / (s->y.scale * (float)sp);
    for (int64_t b = 0; b < N; b++)
        for (int64_t c = 0; c < C; c++) {
            int64_t acc = 0;
            for (int64_t i = 0; i < sp; i++)
                acc += ld8(x->data, s->dt, s->channels_last ? (b * sp + i) * C + c : (b * C + c) * sp + i);
            acc -= sp * s->x.zp;
            st8(io->outputs[0]->data, s->dt, b * C + c, q_sat((float)acc * mult, s->y.zp, s->dt));
        }
    return NULL;
}

/* ======================================================================== */
/* tables                                                                   */
/* ======================================================================== */

static const sy_attr_def a_alpha[] = {ATTR("alpha", FLOAT)};
static const sy_attr_def a_gap[] = {ATTR("channels_last", INT)};

static const sy_op_schema schemas[] = {
    CSCHEMA(CONTRIB_DOMAIN, "QLinearSigmoid", 1, 4, 5, 1, 1, SY_NO_ATTRS, infer_qlut, "quantized Sigmoid"),
    CSCHEMA(CONTRIB_DOMAIN, "QLinearLeakyRelu", 1, 4, 5, 1, 1, SY_ATTRS(a_alpha), infer_qlut, "quantized LeakyRelu"),
    CSCHEMA(CONTRIB_DOMAIN, "QLinearGlobalAveragePool", 1, 5, 5, 1, 1, SY_ATTRS(a_gap), infer_qgap,
            "quantized GlobalAveragePool"),
};

static const sy_kernel_def kernels[] = {
    CKERNEL(CONTRIB_DOMAIN, "QLinearSigmoid", Q8, 0, prepare_qlut, run_qlut, sy_release_free),
    CKERNEL(CONTRIB_DOMAIN, "QLinearLeakyRelu", Q8, 0, prepare_qlut, run_qlut, sy_release_free),
    CKERNEL(CONTRIB_DOMAIN, "QLinearGlobalAveragePool", Q8, 0, prepare_qgap, run_qgap, sy_release_free),
};

const contrib_tables contrib_qlinear_tables = {schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels)};
