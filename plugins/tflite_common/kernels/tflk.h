/*
 * tflk: the portable TFLite kernels. Plain C99 with no dependency on the
 * plugin ABI, libm or an allocator, so the SAME files are compiled into the
 * host plugins (tflite_nn, tflite_recurrent: cpu_ref; riscv_mcu: the host
 * check of the MCU target) and into the standalone packages that
 * `switchyard codegen` writes for a RISC-V MCU. Every parameter a kernel
 * needs is precomputed by the caller on the host (requantization
 * multipliers and shifts, padding, clamp ranges) and passed in a struct of
 * scalars and const arrays, which a generated package holds as constants.
 *
 * Arithmetic: int8 kernels follow TFLite's reference integer kernels with
 * the double-rounding requantization (SaturatingRoundingDoublingHighMul +
 * RoundingDivideByPOT) that CMSIS-NN and NMSIS-NN share; int32
 * accumulators wrap like two's complement hardware. Float kernels use the
 * transcendental functions of tflk_math.c, not the C library's, so results
 * are bit-identical on every IEEE-754 single-precision target compiled
 * without floating-point contraction (-ffp-contract=off).
 */
#ifndef TFLK_H
#define TFLK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- fixed point (gemmlowp / TFLite reference) -------------------------- */

static inline int32_t tflk_srdhm(int32_t a, int32_t b)
{
    if (a == b && a == INT32_MIN)
        return INT32_MAX;
    int64_t ab = (int64_t)a * (int64_t)b;
    int64_t nudge = ab >= 0 ? (INT64_C(1) << 30) : (1 - (INT64_C(1) << 30));
    return (int32_t)((ab + nudge) / (INT64_C(1) << 31));
}

static inline int32_t tflk_rdivpot(int32_t x, int32_t exponent)
{
    if (exponent <= 0)
        return x;
    if (exponent > 31)
        exponent = 31;
    int32_t mask = (int32_t)((UINT32_C(1) << exponent) - 1u);
    int32_t remainder = x & mask;
    int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/* MultiplyByQuantizedMultiplier: x * mult * 2^shift, Q0.31 multiplier */
static inline int32_t tflk_mul_by_qm(int32_t x, int32_t mult, int32_t shift)
{
    int32_t left = shift > 0 ? shift : 0;
    int32_t right = shift > 0 ? 0 : -shift;
    return tflk_rdivpot(tflk_srdhm((int32_t)((uint32_t)x << left), mult), right);
}

static inline int32_t tflk_clampi(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

/* ---- float helpers (tflk_math.c) ------------------------------------------ */

float tflk_expf(float x);
float tflk_tanhf(float x);
float tflk_sigmoidf(float x);
/* round half away from zero (C roundf) */
float tflk_roundf(float x);
/* TFLite's quantization of a real value: round(x / scale) + zp, clamped */
int32_t tflk_quantize(float x, float scale, int32_t zp, int32_t lo, int32_t hi);

/* A fused activation on float values: kind 0 clamps to [lo, hi] (NONE is
 * [-inf, inf]), 1 tanh, 2 sign bit. */
typedef struct tflk_act {
    int32_t kind;
    float lo, hi;
} tflk_act;

float tflk_act_apply(const tflk_act *a, float v);

/* ---- CONV_2D / DEPTHWISE_CONV_2D (tflk_conv.c) ---------------------------- */

typedef struct tflk_conv {
    int32_t n, ih, iw, ic, oh, ow, oc, kh, kw;
    int32_t fic;       /* the filter's input channels (1 for depthwise) */
    int32_t depthwise; /* filter [1, KH, KW, OC], output channel oc reads input channel oc / (OC / IC) */
    int32_t sh, sw, dh, dw;
    int32_t pt, pl;    /* leading padding (TFLite puts the odd pixel at the end) */
    /* int8 */
    int32_t in_off, out_zp, lo, hi;
    int32_t per_channel; /* mult/shift hold OC entries (else one) */
    const int32_t *mult, *shift;
    /* fp32 */
    tflk_act act;
} tflk_conv;

void tflk_conv_s8(const tflk_conv *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y);
void tflk_conv_f32(const tflk_conv *p, const float *x, const float *w, const float *bias, float *y);

/* ---- FULLY_CONNECTED (tflk_fc.c) ------------------------------------------- */

typedef struct tflk_fc {
    int32_t batches, units, depth;
    int32_t in_off, w_off, out_zp, lo, hi;
    int32_t per_channel;
    const int32_t *mult, *shift;
    tflk_act act;
} tflk_fc;

void tflk_fc_s8(const tflk_fc *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y);
void tflk_fc_f32(const tflk_fc *p, const float *x, const float *w, const float *bias, float *y);

/* ---- AVERAGE_POOL_2D / MAX_POOL_2D (tflk_pool.c) ------------------------- */

typedef struct tflk_pool {
    int32_t is_max;
    int32_t n, ih, iw, c, oh, ow, fh, fw, sh, sw, pt, pl;
    int32_t lo, hi; /* int8 clamp */
    tflk_act act;   /* fp32 */
} tflk_pool;

void tflk_pool_s8(const tflk_pool *p, const int8_t *x, int8_t *y);
void tflk_pool_f32(const tflk_pool *p, const float *x, float *y);

/* ---- SOFTMAX over the last axis (tflk_softmax.c) ---------------------------- */

typedef struct tflk_softmax {
    int32_t rows, depth;
    float beta;
    /* int8: fixed point (TFLite Micro's kernel, output scale 1/256 zp -128)
     * or through fp32 with the scratch row */
    int32_t fixed;
    int32_t mult, left_shift, diff_min;
    float in_scale, out_scale;
    int32_t in_zp, out_zp;
} tflk_softmax;

void tflk_softmax_f32(const tflk_softmax *p, const float *x, float *y);
/* scratch: `depth` floats when !fixed */
void tflk_softmax_s8(const tflk_softmax *p, const int8_t *x, int8_t *y, float *scratch);

/* ---- UNIDIRECTIONAL_SEQUENCE_LSTM (tflk_lstm.c) --------------------------- */

enum { TFLK_F32 = 1, TFLK_S8 = 2, TFLK_S16 = 3, TFLK_S32 = 4 };

/* A tensor read as real numbers: fp32, or integers dequantized per tensor
 * or per row (count scales; row r uses scales[r % count]). */
typedef struct tflk_qtensor {
    const void *data; /* NULL: absent */
    int32_t dtype;    /* TFLK_* */
    int32_t count;    /* scale/zero-point pairs (0: raw integers) */
    int32_t row_len;
    const float *scales;
    const int32_t *zps;
} tflk_qtensor;

float tflk_qt_at(const tflk_qtensor *t, int32_t i);

typedef struct tflk_lstm {
    int32_t n_cell, n_in, n_out, steps, batch, time_major;
    int32_t cifg, proj;
    tflk_act act;
    float cell_clip, proj_clip;
    tflk_qtensor x;
    tflk_qtensor wx[4], wh[4], peep[3], b[4], pw, pb, h0, c0;
    /* output: fp32, or quantized int8/int16 with scale and zero point */
    int32_t y_dtype;
    float y_scale;
    int32_t y_zp, y_lo, y_hi;
} tflk_lstm;

/* scratch floats: batch * (n_out + n_cell) + 4 * n_cell + n_in */
size_t tflk_lstm_scratch_floats(const tflk_lstm *p);
void tflk_lstm_run(const tflk_lstm *p, const void *x, void *y, float *scratch);

/* ---- data movement ---------------------------------------------------------- */

/* RESHAPE and friends: a copy unless the buffers are the same */
void tflk_copy(void *dst, const void *src, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
