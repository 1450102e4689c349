/*
 * tflk_unary: the fp32 one-input ops of Table A (#7-#9, #27-#37, #56-#58,
 * #68, #73, #76) and of ONNX's Table B (Tan, Erf, Softplus, Softsign, Selu,
 * Celu, HardSigmoid, ThresholdedRelu, Elu with alpha, Clip, Swish) with the functions of the float kernels, computed by
 * tflk_math.c instead of libm so the MCU gives the host's bits; bool
 * LOGICAL_NOT; QUANTIZE and DEQUANTIZE between fp32 and int8.
 */
#include "tflk.h"

static float clampf(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

float tflk_unary_one(const tflk_unary *p, float x)
{
    switch (p->kind) {
    case TFLK_U_ABS: return x < 0.0f ? -x : (x == 0.0f ? 0.0f : x);
    case TFLK_U_CEIL: return tflk_ceilf(x);
    case TFLK_U_COS: return tflk_cosf(x);
    case TFLK_U_EXP: return tflk_expf(x);
    case TFLK_U_FLOOR: return tflk_floorf(x);
    case TFLK_U_LOG: return tflk_logf(x);
    case TFLK_U_ROUND: return tflk_rintf(x); /* TFLite ROUND: half to even */
    case TFLK_U_RSQRT: return 1.0f / tflk_sqrtf(x);
    case TFLK_U_SIN: return tflk_sinf(x);
    case TFLK_U_SQRT: return tflk_sqrtf(x);
    case TFLK_U_SQUARE: return x * x;
    case TFLK_U_NEG: return -x;
    case TFLK_U_RELU: return x > 0.0f ? x : 0.0f;
    case TFLK_U_RELU6: return clampf(x, 0.0f, 6.0f);
    case TFLK_U_RELU1: return clampf(x, -1.0f, 1.0f);
    case TFLK_U_RELU01: return clampf(x, 0.0f, 1.0f);
    case TFLK_U_LOGISTIC: return tflk_sigmoidf(x);
    case TFLK_U_TANH: return tflk_tanhf(x);
    case TFLK_U_ELU: return x >= 0.0f ? x : tflk_expm1f(x);
    case TFLK_U_HSWISH: return x * clampf(x + 3.0f, 0.0f, 6.0f) / 6.0f;
    case TFLK_U_GELU:
        return p->approx ? 0.5f * x * (1.0f + tflk_tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)))
                         : 0.5f * x * (1.0f + tflk_erff(x * 0.70710678118654752f));
    case TFLK_U_LEAKY: return x >= 0.0f ? x : p->alpha * x;
    case TFLK_U_TAN: return tflk_sinf(x) / tflk_cosf(x);
    case TFLK_U_ERF: return tflk_erff(x);
    case TFLK_U_SOFTPLUS: return x > 20.0f ? x : tflk_logf(1.0f + tflk_expf(x));
    case TFLK_U_SOFTSIGN: return x / (1.0f + (x < 0.0f ? -x : x));
    case TFLK_U_SELU: return x > 0.0f ? p->beta * x : p->beta * (p->alpha * tflk_expf(x) - p->alpha);
    case TFLK_U_CELU: {
        float e = p->alpha * (tflk_expf(x / p->alpha) - 1.0f);
        return (x > 0.0f ? x : 0.0f) + (e < 0.0f ? e : 0.0f);
    }
    case TFLK_U_HSIGMOID: return clampf(p->alpha * x + p->beta, 0.0f, 1.0f);
    case TFLK_U_THRELU: return x > p->alpha ? x : 0.0f;
    case TFLK_U_ELUA: return x >= 0.0f ? x : p->alpha * (tflk_expf(x) - 1.0f);
    case TFLK_U_RELUN: return x < 0.0f ? 0.0f : x;
    case TFLK_U_CLIP: return x < p->alpha ? p->alpha : (x > p->beta ? p->beta : x);
    case TFLK_U_SWISH: return x * tflk_sigmoidf(p->alpha * x);
    case TFLK_U_HSWISHX: return x * clampf(x / 6.0f + 0.5f, 0.0f, 1.0f);
    default: return x;
    }
}

void tflk_unary_f32(const tflk_unary *p, const float *x, float *y, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        y[i] = tflk_unary_one(p, x[i]);
}

void tflk_not_b(const uint8_t *x, uint8_t *y, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        y[i] = x[i] == 0;
}

void tflk_quantize_f32(const float *x, int8_t *y, int32_t n, float scale, int32_t zp)
{
    for (int32_t i = 0; i < n; i++)
        y[i] = (int8_t)tflk_quantize(x[i], scale, zp, -128, 127);
}

void tflk_dequantize_s8(const int8_t *x, float *y, int32_t n, float scale, int32_t zp)
{
    for (int32_t i = 0; i < n; i++)
        y[i] = scale * (float)((int32_t)x[i] - zp);
}

void tflk_requantize_s8(const int8_t *x, int8_t *y, int32_t n, int32_t in_zp, int32_t out_zp, int32_t mult,
                        int32_t shift)
{
    for (int32_t i = 0; i < n; i++)
        y[i] = (int8_t)tflk_clampi(tflk_mul_by_qm((int32_t)x[i] - in_zp, mult, shift) + out_zp, -128, 127);
}
