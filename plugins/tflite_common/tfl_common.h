/*
 * Shared by the TFLite operator-family plugins (tflite_nn, tflite_math,
 * tflite_tensor, tflite_recurrent): schema/kernel initialisers for the
 * "tflite" domain, quantization-parameter access, SAME/VALID padding and
 * fused activations. Header-only: every plugin keeps its own copy.
 *
 * TFLite ops have no opset evolution the runtime needs to distinguish, so
 * every schema and kernel covers all operator versions (since 1, open).
 */
#ifndef SY_TFL_COMMON_H
#define SY_TFL_COMMON_H

#include "switchyard/sy_sdk.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TFL_DOMAIN "tflite"

#define TFL_SCHEMA(...) TFL_SCHEMA_(__VA_ARGS__)
#define TFL_SCHEMA_(op, min_in, max_in, min_out, max_out, attrs, n_attrs, infer_fn, inplace, n_inplace, flags_, doc_) \
    {                                                                                                              \
        sizeof(sy_op_schema), TFL_DOMAIN, (op), 1, (min_in), (max_in), (min_out), (max_out), (attrs), (n_attrs),   \
            (infer_fn), (inplace), (n_inplace), (flags_), (doc_)                                                   \
    }

#define TFL_KERNEL(op, mask, type_input, prepare_fn, run_fn, release_fn)                                          \
    {                                                                                                              \
        sizeof(sy_kernel_def), TFL_DOMAIN, (op), 1, 0, "cpu_ref", (mask), (type_input), 0u, NULL, (prepare_fn),   \
            (run_fn), (release_fn), NULL                                                                           \
    }

/* Defines prepare `name` around `impl`: when impl fails, the state it
 * stored is released and cleared (the core calls release only for nodes
 * whose prepare succeeded). */
#define TFL_PREPARE_GUARDED(name, impl, release_fn)                                                               \
    static sy_status *name(sy_node *n, void **state)                                                              \
    {                                                                                                              \
        *state = NULL;                                                                                             \
        sy_status *st_ = impl(n, state);                                                                           \
        if (st_) {                                                                                                 \
            release_fn(*state);                                                                                    \
            *state = NULL;                                                                                         \
        }                                                                                                          \
        return st_;                                                                                                \
    }

#define TFL_F32 SY_DT_BIT(SY_DT_FLOAT32)
#define TFL_I8 SY_DT_BIT(SY_DT_INT8)
#define TFL_F32_I8 (TFL_F32 | TFL_I8)

/* attribute lists */
#define TFL_ATTR_ACT {"fused_activation_function", SY_ATTR_STRING, false}

/* Per-tensor scale and zero point of a quantized tensor (false when the
 * tensor carries none or is per-axis). */
static inline bool tfl_qparams(const sy_tensor *t, float *scale, int32_t *zp)
{
    if (!t || !t->quant || t->quant->count < 1 || !t->quant->scales)
        return false;
    *scale = t->quant->scales[0];
    *zp = t->quant->zero_points ? t->quant->zero_points[0] : 0;
    /* a zero point outside the codes of the tensor's own type is no usable
     * parameter: kernels add it to codes in int32 (x + in_off), and a
     * hostile 2^31 - 1 would overflow there (fuzz_tflite, seed 11) */
    int32_t lo = INT32_MIN, hi = INT32_MAX;
    switch (t->dtype) {
    case SY_DT_INT8: lo = -128, hi = 127; break;
    case SY_DT_UINT8: lo = 0, hi = 255; break;
    case SY_DT_INT16: lo = -32768, hi = 32767; break;
    case SY_DT_UINT16: lo = 0, hi = 65535; break;
    default: break;
    }
    if (*zp < lo || *zp > hi)
        return false;
    /* nor is a scale that is not a positive finite number: kernels divide
     * by it (0/0 became a NaN activation bound, fuzz_tflite seed 4) */
    if (!(*scale > 0.0f) || *scale > 3.4e38f)
        return false;
    return t->quant->count == 1 || t->quant->axis < 0;
}

/* TFLite output size for SAME / VALID (dilated filter). */
static inline int64_t tfl_out_size(bool same, int64_t in, int64_t filter, int64_t stride, int64_t dilation)
{
    int64_t eff = (filter - 1) * dilation + 1;
    if (same)
        return (in + stride - 1) / stride;
    return in >= eff ? (in - eff + stride) / stride : 0;
}

/* Leading padding: TFLite puts the odd pixel at the end. */
static inline int64_t tfl_pad_before(int64_t in, int64_t out, int64_t filter, int64_t stride, int64_t dilation)
{
    int64_t eff = (filter - 1) * dilation + 1;
    int64_t total = (out - 1) * stride + eff - in;
    return total > 0 ? total / 2 : 0;
}

static inline float tfl_clampf(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }
static inline int32_t tfl_clampi(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

/* Fused activation on a float value (clamps; TANH and SIGN_BIT too). */
typedef struct tfl_act {
    int kind; /* 0 clamp, 1 tanh, 2 sign bit */
    float lo, hi;
} tfl_act;

static inline bool tfl_act_from_name(const char *name, tfl_act *a)
{
    a->kind = 0;
    if (sy_act_range_f32(name, &a->lo, &a->hi))
        return true;
    a->lo = -INFINITY;
    a->hi = INFINITY;
    if (!strcmp(name, "TANH")) {
        a->kind = 1;
        return true;
    }
    if (!strcmp(name, "SIGN_BIT")) {
        a->kind = 2;
        return true;
    }
    return false;
}

static inline float tfl_act_apply(const tfl_act *a, float v)
{
    if (a->kind == 1)
        return tanhf(v);
    if (a->kind == 2)
        return signbit(v) ? 1.0f : 0.0f;
    return tfl_clampf(v, a->lo, a->hi);
}

#endif
