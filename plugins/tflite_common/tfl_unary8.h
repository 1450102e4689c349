/*
 * One-input TFLite elementwise ops: the float function and, for int8, the
 * 256-entry table of output codes. Every int8 one-input op is a function
 * of the input code alone, so TFLite's integer kernels (ABS, RSQRT, SQRT,
 * the RELU family, LEAKY_RELU, HARD_SWISH, LOGISTIC/TANH in fixed point)
 * and its float-built LUTPopulate tables (EXP, LOG, ELU, GELU, ...) are all
 * tabulated here, once per node, by running the kernel on the 256 codes.
 * Shared by the cpu_ref tflite_math plugin and the riscv_mcu provider (which
 * puts the table in the generated package), so both give the same codes.
 * Header-only, like tfl_params.h.
 */
#ifndef SY_TFL_UNARY8_H
#define SY_TFL_UNARY8_H

#include "tfl_params.h"

enum {
    U_ABS, U_CEIL, U_COS, U_EXP, U_FLOOR, U_LOG, U_ROUND, U_RSQRT, U_SIN, U_SQRT, U_SQUARE, U_NEG, U_RELU,
    U_RELU6, U_RELU1, U_RELU01, U_LOGISTIC, U_TANH, U_ELU, U_HSWISH, U_GELU, U_LEAKY, U_NOT
};

static inline int tfl_unary_kind(const char *op)
{
    static const struct {
        const char *name;
        int kind;
    } unops[] = {
        {"ABS", U_ABS},         {"CEIL", U_CEIL},         {"COS", U_COS},       {"EXP", U_EXP},
        {"FLOOR", U_FLOOR},     {"LOG", U_LOG},           {"ROUND", U_ROUND},   {"RSQRT", U_RSQRT},
        {"SIN", U_SIN},         {"SQRT", U_SQRT},         {"SQUARE", U_SQUARE}, {"NEG", U_NEG},
        {"RELU", U_RELU},       {"RELU6", U_RELU6},       {"RELU_N1_TO_1", U_RELU1}, {"RELU_0_TO_1", U_RELU01},
        {"LOGISTIC", U_LOGISTIC}, {"TANH", U_TANH},       {"ELU", U_ELU},       {"HARD_SWISH", U_HSWISH},
        {"GELU", U_GELU},       {"LEAKY_RELU", U_LEAKY},  {"LOGICAL_NOT", U_NOT},
    };
    for (size_t i = 0; i < sizeof unops / sizeof unops[0]; i++)
        if (!strcmp(op, unops[i].name))
            return unops[i].kind;
    return -1;
}

/* the op's attributes and, for int8 LOG, the value TFLite's table gives x <= 0 */
typedef struct tfl_un {
    int kind;
    float alpha;
    bool approx;
    float log_min;
} tfl_un;

static inline float tfl_unary_f(const tfl_un *u, float x)
{
    switch (u->kind) {
    case U_ABS: return fabsf(x);
    case U_CEIL: return ceilf(x);
    case U_COS: return cosf(x);
    case U_EXP: return expf(x);
    case U_FLOOR: return floorf(x);
    case U_LOG: return logf(x);
    case U_ROUND: return rintf(x); /* half to even, as TFLite ROUND */
    case U_RSQRT: return 1.0f / sqrtf(x);
    case U_SIN: return sinf(x);
    case U_SQRT: return sqrtf(x);
    case U_SQUARE: return x * x;
    case U_NEG: return -x;
    case U_RELU: return x > 0 ? x : 0;
    case U_RELU6: return tfl_clampf(x, 0, 6);
    case U_RELU1: return tfl_clampf(x, -1, 1);
    case U_RELU01: return tfl_clampf(x, 0, 1);
    case U_LOGISTIC: return x >= 0 ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x));
    case U_TANH: return tanhf(x);
    case U_ELU: return x >= 0 ? x : expm1f(x);
    case U_HSWISH: return x * tfl_clampf(x + 3.0f, 0, 6) / 6.0f;
    case U_GELU:
        return u->approx ? 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)))
                         : 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case U_LEAKY: return x >= 0 ? x : u->alpha * x;
    }
    return x;
}

/* The transform of TFLite's int8 lookup tables (LUTPopulate). ELU's table
 * uses exp(x) - 1 in float (TFLite's and TFLite Micro's EluPrepare), not
 * the expm1 of the float kernel; LOG's maps x <= 0 to the lowest output
 * value (elementwise.cc LogLUTPrepare). TFLite has int8 tables for EXP,
 * LOG, ELU, GELU; the other table ops (no int8 kernel in TFLite: SIN, COS,
 * SQUARE, NEG, CEIL, FLOOR, ROUND, ...) use the same construction. */
static inline float tfl_unary_lut_fn(float x, const void *ctx)
{
    const tfl_un *u = ctx;
    if (u->kind == U_ELU)
        return x < 0.0f ? expf(x) - 1.0f : x;
    if (u->kind == U_LOG)
        return x <= 0.0f ? u->log_min : logf(x);
    return tfl_unary_f(u, x);
}

/* the int8 integer kernels take a positive finite scale and a zero point in
 * int8's range (TFLite checks the latter); anything else is refused */
static inline sy_status *tfl_q8_check(const sy_host_api *H, const sy_node *n, const char *which, float scale,
                                      int32_t zp)
{
    if (!(scale > 0.0f) || scale == INFINITY)
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "int8 %s: %s scale %g is not a positive finite number",
                             H->node_op(n), which, (double)scale);
    if (zp < -128 || zp > 127)
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "int8 %s: %s zero point %d is outside [-128, 127]",
                             H->node_op(n), which, (int)zp);
    return NULL;
}

/* zp + round(v / scale) clamped to int8, as TFLite's activation range */
static inline int32_t tfl_act_q8(float v, float scale, int32_t zp)
{
    float r = roundf(v / scale) + (float)zp;
    return r <= -128.0f ? -128 : r >= 127.0f ? 127 : (int32_t)r;
}

/* the int8 table: out[q + 128] for every input code q; codes below
 * min_valid (SQRT, RSQRT: a negative real input) are refused at run time */
typedef struct tfl_unary8 {
    int8_t lut[256];
    int32_t min_valid;
} tfl_unary8;

static inline sy_status *tfl_build_unary8(const sy_host_api *H, const sy_node *n, tfl_un *u, tfl_unary8 *t)
{
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_output(n, 0);
    float xs, ys;
    int32_t xz, yz;
    if (!tfl_qparams(x, &xs, &xz) || !tfl_qparams(y, &ys, &yz))
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "int8 %s needs per-tensor quantization on input and output",
                             H->node_op(n));
    SY_TRY(tfl_q8_check(H, n, "input", xs, xz));
    SY_TRY(tfl_q8_check(H, n, "output", ys, yz));
    int8_t all[256];
    for (int q = -128; q < 128; q++)
        all[q + 128] = (int8_t)q;
    t->min_valid = -128;
    if ((u->kind == U_LOGISTIC && ys == 1.0f / 256.0f && yz == -128) ||
        (u->kind == U_TANH && ys == 1.0f / 128.0f && yz == 0)) {
        /* TFLite Micro's fixed-point reference_integer_ops (tflk_fixed.c) */
        tflk_act8 a8;
        tfl_act8_params(xs, xz, &a8);
        if (u->kind == U_LOGISTIC)
            tflk_logistic_s8(&a8, all, t->lut, 256);
        else
            tflk_tanh_s8(&a8, all, t->lut, 256);
        return NULL;
    }
    if (u->kind == U_HSWISH) {
        /* TFLite's HardSwishPrepare: both multipliers from float
         * quotients, then rounded to 16 bits */
        const float hires = (1.0f / 128.0f) * xs;
        int32_t m;
        tflk_hswish8 hp = {.in_zp = xz, .out_zp = yz};
        sy_q_quantize_multiplier((double)(hires / ys), &m, &hp.out_shift);
        hp.out_mult = tflk_mult_to_q15(m);
        sy_q_quantize_multiplier((double)(hires / (3.0f / 32768.0f)), &m, &hp.relu_shift);
        hp.relu_mult = tflk_mult_to_q15(m);
        if (hp.out_shift > 0)
            return H->status_new(SY_ERR_UNSUPPORTED,
                                 "int8 HARD_SWISH: input scale %g / 128 over output scale %g is above 1, which "
                                 "TFLite's kernel does not support",
                                 (double)xs, (double)ys);
        tflk_hswish_s8(&hp, all, t->lut, 256);
        return NULL;
    }
    if (u->kind == U_LEAKY && u->alpha >= 0.0f) {
        /* TFLite QuantizeLeakyRelu: the identity and alpha branches each
         * requantize with their own multiplier (leaky_relu.cc computes
         * them in float), double rounding included */
        int32_t mi, si, ma, sa;
        sy_q_quantize_multiplier((double)(xs / ys), &mi, &si);
        sy_q_quantize_multiplier((double)(xs * u->alpha / ys), &ma, &sa);
        for (int q = -128; q < 128; q++) {
            int32_t d = q - xz;
            int32_t v = yz + (d >= 0 ? tflk_mul_by_qm(d, mi, si) : tflk_mul_by_qm(d, ma, sa));
            t->lut[q + 128] = (int8_t)tfl_clampi(v, -128, 127);
        }
        return NULL;
    }
    if (u->kind == U_ABS) {
        /* elementwise.cc AbsEvalQuantized: |q - zp| requantized by the
         * float quotient xs / ys only when the scales differ */
        int32_t m = 0, sh = 0;
        bool rescale = xs != ys;
        if (rescale)
            sy_q_quantize_multiplier((double)(xs / ys), &m, &sh);
        for (int q = -128; q < 128; q++) {
            int32_t v = q - xz < 0 ? xz - q : q - xz;
            v = (rescale ? tflk_mul_by_qm(v, m, sh) : v) + yz;
            t->lut[q + 128] = (int8_t)tfl_clampi(v, -128, 127);
        }
        return NULL;
    }
    if (u->kind == U_RELU || u->kind == U_RELU6 || u->kind == U_RELU1 || u->kind == U_RELU01) {
        /* activations.cc ReluPrepare / QuantizedReluX: one multiplier from
         * the float quotient xs / ys, then the activation range
         * zp + round(bound / ys) */
        int32_t m, sh;
        sy_q_quantize_multiplier((double)(xs / ys), &m, &sh);
        float amin = u->kind == U_RELU1 ? -1.0f : 0.0f;
        float amax = u->kind == U_RELU6 ? 6.0f : u->kind == U_RELU ? INFINITY : 1.0f;
        int32_t lo = tfl_act_q8(amin, ys, yz), hi = amax == INFINITY ? 127 : tfl_act_q8(amax, ys, yz);
        for (int q = -128; q < 128; q++)
            t->lut[q + 128] = (int8_t)tfl_clampi(yz + tflk_mul_by_qm(q - xz, m, sh), lo, hi);
        return NULL;
    }
    if (u->kind == U_RSQRT) {
        /* elementwise.cc RsqrtEvalQuantizedInt8: the inverse square root
         * in fixed point; sqrt(in scale) is a float sqrt, its product with
         * the output scale a float product */
        tflk_rsqrt8 rp = {.in_zp = xz, .out_zp = yz};
        sy_q_quantize_multiplier(1.0 / (double)(sqrtf(xs) * ys), &rp.mult, &rp.shift);
        memset(t->lut, 0, sizeof t->lut);
        t->min_valid = xz;
        for (int q = xz; q < 128; q++)
            t->lut[q + 128] = (int8_t)tflk_rsqrt_s8(&rp, q);
        return NULL;
    }
    if (u->kind == U_SQRT) {
        /* elementwise.cc SqrtEvalQuantized: sqrt of the dequantized float
         * divided by the output scale, TRUNCATED toward zero
         * (static_cast<int>), plus the zero point */
        memset(t->lut, 0, sizeof t->lut);
        t->min_valid = xz;
        for (int q = xz; q < 128; q++) {
            float f = sqrtf(xs * (float)(q - xz)) / ys;
            int32_t v = f >= 2147483520.0f ? 127 : (int32_t)f + yz;
            t->lut[q + 128] = (int8_t)tfl_clampi(v, -128, 127);
        }
        return NULL;
    }
    u->log_min = (float)(-128 - yz) * ys;
    tflk_lut_populate_s8(xs, xz, ys, yz, tfl_unary_lut_fn, u, t->lut);
    return NULL;
}

#endif
