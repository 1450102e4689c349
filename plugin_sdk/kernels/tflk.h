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

/* by its bare name: codegen packages ship it in kernels/ next to this file,
 * the host finds it in the SDK's include/switchyard */
#include "sy_fixedpoint.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- fixed point (gemmlowp / TFLite reference) -------------------------- */

/* the arithmetic is sy_fixedpoint.h's (the SDK's sy_q_* share it); the
 * tflk_ names stay for the kernels that call them */
static inline int32_t tflk_srdhm(int32_t a, int32_t b) { return sy_fx_srdhm(a, b); }
static inline int32_t tflk_rdivpot(int32_t x, int32_t exponent) { return sy_fx_rdivpot(x, exponent); }
/* MultiplyByQuantizedMultiplier: x * mult * 2^shift, Q0.31 multiplier */
static inline int32_t tflk_mul_by_qm(int32_t x, int32_t mult, int32_t shift) { return sy_fx_mul_by_qm(x, mult, shift); }
/* the requantization of CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED by
 * form: 0 TFLite Micro's double rounding (above), 1 TFLite's single
 * rounding (TFLITE_SINGLE_ROUNDING, the interpreter's int8 kernels) */
static inline int32_t tflk_rescale(int32_t single, int32_t x, int32_t mult, int32_t shift)
{
    return single ? sy_fx_mul_by_qm_single(x, mult, shift) : sy_fx_mul_by_qm(x, mult, shift);
}

static inline int32_t tflk_clampi(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }
/* clamp(v + zp) without int32 overflow: a hostile multiplier can put v near INT32_MIN (fuzz_tflite) */
static inline int32_t tflk_clamp_zp(int32_t v, int32_t zp, int32_t lo, int32_t hi)
{
    int64_t w = (int64_t)v + zp;
    return w < lo ? lo : (w > hi ? hi : (int32_t)w);
}

/* The blocked inner loops of tflk_conv.c and tflk_fc.c need about 22
 * registers (8 accumulators, 6 pointers, the loaded values); inlined into
 * their one caller, GCC spills accumulators inside the loop (rv32 -O2: 53
 * stack accesses per 32 MACs), so they stay functions of their own. */
#if defined(__GNUC__)
#define TFLK_NOINLINE __attribute__((noinline))
#else
#define TFLK_NOINLINE
#endif

/* One output channel's requantization with its per-channel choices made
 * once (the conv/fc kernels walk output channels in the outer loop, so the
 * form and its constants are decided per channel, not per output value).
 * tflk_rq_apply(r, acc) == tflk_rescale(single, acc, mult, shift) for every
 * acc, as one 64-bit add and shift of the product P = (acc << left) * mult:
 *   - gemmlowp: SaturatingRoundingDoublingHighMul is h = floor((P + 2^30) /
 *     2^31) (for P < 0, trunc((P + 1 - 2^30) / 2^31) = floor((P + 2^30) /
 *     2^31)); only P = INT32_MIN^2 saturates, so a multiplier INT32_MIN
 *     (QuantizeMultiplier never gives one) takes tflk_rescale.
 *     RoundingDivideByPOT(h, r) is floor((h + 2^(r-1) - (h < 0)) / 2^r)
 *     (half away from zero), and floor(floor(X / 2^31) / 2^r) = floor(X /
 *     2^(31+r)), so the result is floor((P + K) / 2^(31+r)) with K = 2^30 +
 *     2^(30+r) for h >= 0 and K - 2^31 for h < 0. The sign of P stands for
 *     the sign of h: they differ only where h = 0, whose result is 0 with
 *     either K. r = 0: K = 2^30.
 *   - single rounding (shift in [-31, 0]): floor((P + 2^(t-1)) / 2^t), t =
 *     31 - shift, for both signs; it cannot overflow int32 there. Other
 *     shifts (the saturating ones) take tflk_rescale.
 * The total shift S is 31 to 62: for S >= 32 the result is the high word
 * of P + K shifted right by S - 32, for S = 31 the high word's low 31 bits
 * and the low word's top bit. The carry of the low words, lo + klo >= 2^32,
 * is lo > ~klo: one compare against a constant of the channel. */
typedef struct tflk_rq {
    int32_t mult, shift, single;
    int32_t slow; /* tflk_rescale (above) */
    int32_t left; /* gemmlowp's left shift of the accumulator (wrapping, as the reference's) */
    int32_t s31;  /* S = 31 */
    int32_t sh;   /* S - 32 for S >= 32 */
    uint32_t nklo_p, khi_p, nklo_n, khi_n; /* ~low word and high word of K for P >= 0 and P < 0 */
} tflk_rq;
static inline void tflk_rq_init(tflk_rq *r, int32_t single, int32_t mult, int32_t shift)
{
    /* K's words from 32-bit shifts (a 64-bit shift by a variable is a libgcc call or a branchy
     * sequence on rv32, and this runs once per output channel) */
    uint32_t klo_p = UINT32_C(1) << 30, khi_p = 0, klo_n, khi_n;
    int32_t s = 31; /* S */
    r->mult = mult;
    r->shift = shift;
    r->single = single;
    r->slow = mult == INT32_MIN || (single && (shift > 0 || shift < -31));
    r->left = !single && shift > 0 ? shift : 0;
    if (single) {
        s = r->slow ? 31 : 31 - shift; /* K = 2^(S-1) */
        if (s == 32) {
            klo_p = UINT32_C(1) << 31;
        } else if (s > 32) {
            klo_p = 0;
            khi_p = UINT32_C(1) << (s - 33);
        }
        klo_n = klo_p;
        khi_n = khi_p;
    } else {
        const int32_t right = shift > 0 ? 0 : (-shift > 31 ? 31 : -shift);
        s = 31 + right; /* K = 2^30 + 2^(30+right) for P >= 0, that - 2^31 for P < 0 */
        klo_n = klo_p;
        khi_n = 0;
        if (right == 1) {
            klo_p = UINT32_C(3) << 30;
        } else if (right > 1) {
            khi_p = UINT32_C(1) << (right - 2);
            klo_n = UINT32_C(3) << 30;
            khi_n = khi_p - 1u;
        }
    }
    r->s31 = s == 31;
    r->sh = s == 31 ? 0 : s - 32;
    r->nklo_p = ~klo_p;
    r->khi_p = khi_p;
    r->nklo_n = ~klo_n;
    r->khi_n = khi_n;
}
static inline int32_t tflk_rq_apply(const tflk_rq *r, int32_t acc)
{
    if (r->slow)
        return tflk_rescale(r->single, acc, r->mult, r->shift);
    const int64_t prod = (int64_t)(int32_t)((uint32_t)acc << r->left) * (int64_t)r->mult;
    const uint32_t lo = (uint32_t)prod;
    uint32_t hi = (uint32_t)((uint64_t)prod >> 32);
    const int32_t neg = (int32_t)hi < 0;
    const uint32_t nklo = neg ? r->nklo_n : r->nklo_p;
    hi += (neg ? r->khi_n : r->khi_p) + (uint32_t)(lo > nklo);
    if (r->s31)
        return (int32_t)((hi << 1) | ((lo + ~nklo) >> 31));
    return (int32_t)hi >> r->sh;
}

/* int8 HARD_SWISH (tflk_hswish.c): TFLite's 16-bit fixed-point kernel. The
 * host computes out = QuantizeMultiplier(xs / 128 / ys) and relu =
 * QuantizeMultiplier(xs / 128 / (3 / 32768)), each multiplier rounded to
 * Q0.15 by tflk_mult_to_q15; out_shift must be <= 0 */
typedef struct tflk_hswish8 {
    int32_t in_zp, out_zp;
    int16_t out_mult, relu_mult;
    int32_t out_shift, relu_shift;
} tflk_hswish8;
int16_t tflk_mult_to_q15(int32_t mult_q31);
void tflk_hswish_s8(const tflk_hswish8 *p, const int8_t *x, int8_t *y, int32_t n);

/* int8 LOG_SOFTMAX over rows of `depth` (tflk_logsoftmax.c), output scale
 * 16/256 zero point 127: mult/left_shift/diff_min as the softmax's
 * (beta * input scale in Q5.26), rev = QuantizeMultiplier(2^(31 -
 * left_shift) / mult) with rev_right_shift = -its shift */
typedef struct tflk_logsm8 {
    int32_t mult, left_shift, diff_min, rev_mult, rev_right_shift;
} tflk_logsm8;
void tflk_log_softmax_s8(const tflk_logsm8 *p, const int8_t *x, int8_t *y, int32_t rows, int32_t depth);

/* ---- int8 elementwise and reduction (tflk_elem8.c) ------------------------ */

/* y[i] = lut[x[i] + 128] (tflk_lut.c): every int8 one-input op, its table
 * built on the host */
void tflk_lut_s8(const int8_t *lut, const int8_t *x, int8_t *y, int32_t n);
/* int8 SQRT / RSQRT: codes below min_valid (a negative real input) are
 * refused as TFLite's kernel does: -1 and *bad the element, nothing written */
int32_t tflk_lut_s8_min(const int8_t *lut, int32_t min_valid, const int8_t *x, int8_t *y, int32_t n, int32_t *bad);

/* TFLite's LUTPopulate<int8_t>: lut[q + 128] = saturate(round_half_away(
 * fn(in_scale * (q - in_zp)) * (1 / out_scale)) + out_zp), all in float */
void tflk_lut_populate_s8(float in_scale, int32_t in_zp, float out_scale, int32_t out_zp,
                          float (*fn)(float, const void *), const void *ctx, int8_t lut[256]);
/* MultiplyByQuantizedMultiplier(int64_t): 16-bit multiplier, one rounding;
 * shift in [-31, 7] */
int32_t tflk_mul_by_qm64(int64_t x, int32_t mult, int32_t shift);
/* GetInvSqrtQuantizedMultiplierExp (Newton-Raphson in Q3.28) */
void tflk_inv_sqrt_qm(int32_t v, int32_t reverse_shift, int32_t *mult, int32_t *shift);

/* int8 RSQRT (elementwise.cc): mult/shift = QuantizeMultiplier(1 / (sqrt(in
 * scale) * out scale)); q must be >= in_zp (the caller refuses others) */
typedef struct tflk_rsqrt8 {
    int32_t in_zp, out_zp, mult, shift;
} tflk_rsqrt8;
int32_t tflk_rsqrt_s8(const tflk_rsqrt8 *p, int32_t q);

/* int8 SQUARED_DIFFERENCE (squared_difference.cc): inputs << 7, rescaled by
 * s_i / (2 max(s1, s2)), differenced, squared, rescaled by (2 max)^2 /
 * (2^14 s_out); all shifts <= 0 */
typedef struct tflk_sqdiff8 {
    int32_t zp1, zp2, out_zp, mult1, shift1, mult2, shift2, out_mult, out_shift;
} tflk_sqdiff8;
int32_t tflk_sqdiff_s8(const tflk_sqdiff8 *p, int32_t a, int32_t b);

/* int8 REDUCE_PROD (reduce.cc QuantizedReduceProd): the first element of
 * an output is q - in_zp, each next one multiplies in and requantizes by
 * QuantizeMultiplier(in_scale / out_scale^(1/n)) (the int64 form), the
 * result once more, plus out_zp */
typedef struct tflk_prod8 {
    int32_t in_zp, out_zp, mult, shift;
} tflk_prod8;
int32_t tflk_prod_next_s8(const tflk_prod8 *p, int32_t acc, int32_t q);
int32_t tflk_prod_out_s8(const tflk_prod8 *p, int32_t acc);

/* ---- fixed-point functions (tflk_fixed.c) ---------------------------------- */

/* saturating x * 2^e (e >= 0) */
int32_t tflk_sat_shl(int32_t x, int32_t e);
/* gemmlowp on a Q(int_bits).(31 - int_bits) raw value, results in Q0.31:
 * exp(a) for a <= 0, 1 / (1 + a) for a in [0, 1), logistic(a), tanh(a) */
int32_t tflk_exp_on_negative(int32_t a, int32_t int_bits);
int32_t tflk_one_over_one_plus_x(int32_t a);
int32_t tflk_logistic_fx(int32_t a, int32_t int_bits);
int32_t tflk_tanh_fx(int32_t a, int32_t int_bits);
/* 1 / x for x > 0 with integer_digits integer bits (TFLite GetReciprocal) */
int32_t tflk_get_reciprocal(int32_t x, int32_t integer_digits, int32_t *num_bits_over_unit);

/* int8 LOGISTIC (output 1/256, zero point -128) and TANH (output 1/128,
 * zero point 0) as reference_integer_ops: the input rescaled to Q4.27 by
 * mult * 2^shift (shift >= 0), saturated beyond +-radius */
typedef struct tflk_act8 {
    int32_t in_zp, radius, mult, shift;
} tflk_act8;

void tflk_logistic_s8(const tflk_act8 *p, const int8_t *x, int8_t *y, int32_t n);
void tflk_tanh_s8(const tflk_act8 *p, const int8_t *x, int8_t *y, int32_t n);

/* int16 sigmoid and tanh by interpolation in TFLite's sigmoid table; input
 * x * mult >> shift in units of 1/(3 * 2^...) as the reference (mult 0: 3 << shift) */
void tflk_sigmoid_s16(int32_t mult, int32_t shift, const int16_t *x, int16_t *y, int32_t n);
void tflk_tanh_s16(int32_t mult, int32_t shift, const int16_t *x, int16_t *y, int32_t n);

/* int8 DIV of one element pair (reference_ops::DivElementwise): zero points,
 * output multiplier s1 / (s2 * so) and the activation clamp */
typedef struct tflk_div8 {
    int32_t zp1, zp2, out_zp, mult, shift, lo, hi;
} tflk_div8;

int32_t tflk_div_s8(const tflk_div8 *p, int32_t a, int32_t b);

/* int8 MEAN and SUM from the int32 sum of the raw int8 values over `count`
 * elements, as TFLite Micro's reduce: MEAN with equal input/output scale and
 * zero point (same) is the truncated integer quotient, else the float
 * rescale of QuantizedMeanOrSum (scale = in_scale / out_scale in float);
 * SUM rescales in float and wraps to int8 as the reference's cast does. */
typedef struct tflk_reduce8 {
    int32_t same, in_zp, out_zp;
    float scale;
} tflk_reduce8;

int32_t tflk_mean_s8(const tflk_reduce8 *p, int32_t sum, int32_t count);
int32_t tflk_sum_s8(const tflk_reduce8 *p, int32_t sum, int32_t count);

/* ---- float helpers (tflk_math.c) ------------------------------------------ */

float tflk_expf(float x);
/* e^x in double, rounded once (tflk_math.c): the ONNX softmax's exp, as libm's expf */
float tflk_expf_d(float x);
float tflk_tanhf(float x);
float tflk_sigmoidf(float x);
/* round half away from zero (C roundf) */
float tflk_roundf(float x);
/* round half to even, floor, ceil, e^x - 1, sqrt (correctly rounded), log,
 * sin, cos (beyond |x| = 6433 reduced by 2/pi to 256 bits, Payne-Hanek),
 * erf: without libm, the same bits on every IEEE-754 target */
float tflk_rintf(float x);
float tflk_floorf(float x);
float tflk_ceilf(float x);
float tflk_expm1f(float x);
float tflk_sqrtf(float x);
float tflk_logf(float x);
float tflk_sinf(float x);
float tflk_cosf(float x);
float tflk_erff(float x);
/* x^y (C99 pow's special cases; integral y by squaring in double, else
 * e^(y log x) with log and exp in double, rounded once) and fmod(x, y)
 * (exact, by long division of the significands) */
float tflk_powf(float x, float y);
/* the natural log of a finite x > 0 in double (error below 2^-60 relative) */
double tflk_log_d(double x);
float tflk_fmodf(float x, float y);
/* TFLite's quantization of a real value: round(x / scale) + zp, clamped */
int32_t tflk_quantize(float x, float scale, int32_t zp, int32_t lo, int32_t hi);

/* A fused activation on float values: kind 0 clamps to [lo, hi] (NONE is
 * [-inf, inf]), 1 tanh, 2 sign bit. */
typedef struct tflk_act {
    int32_t kind;
    float lo, hi;
} tflk_act;

float tflk_act_apply(const tflk_act *a, float v);

/* ---- ADD / SUB / MUL with broadcasting (tflk_binary.c) --------------------- */

enum { TFLK_ADD = 0, TFLK_SUB = 1, TFLK_MUL = 2 };
/* 8: the seed's FP32 training rows of Slice and ReduceSum/ReduceMean go to
 * rank 8, and the training packages run those layers in these kernels */
#define TFLK_BIN_RANK 8
/* The output's dims (rank <= 8) and each input's element strides along
 * them (0 where that input is broadcast). int8 follows TFLite's reference
 * integer kernels: ADD/SUB shift both inputs left by 20, rescale each by
 * m1/s1, m2/s2 (s_i / (2 max(s1, s2))) and the sum by mo/so (2 max /
 * (2^20 s_out)); MUL rescales the product of the centred inputs by mo/so
 * (s1 s2 / s_out); lo/hi is the fused activation's clamp. rq_single picks
 * the requantization form of those rescales (tflk_rescale). Under the
 * single-rounding form an ADD/SUB whose ratios s_i / s_out lie in
 * [2^-10, 2^8) is rounded once, as the TFLite interpreter's default XNNPACK
 * path does (measured bit for bit against it, tests/tflite): one = 1,
 * y = ((a - z1) om1 + (b - z2) om2 + 2^(osh-1)) >> osh, the multipliers
 * round(s_i / s_out * 2^osh) below 2^21 (om2 negated for SUB), osh = 20 -
 * the binary exponent of the larger ratio, in [13, 30]; with |a - z| <=
 * 255 the sum stays below 2^31, so int32 is exact. */
typedef struct tflk_binary {
    int32_t op, rank;
    int32_t dims[TFLK_BIN_RANK], sa[TFLK_BIN_RANK], sb[TFLK_BIN_RANK];
    int32_t z1, z2, zo, m1, s1, m2, s2, mo, so, lo, hi; /* int8 */
    int32_t rq_single, one, om1, om2, osh;             /* int8: the requantization form */
    tflk_act act;                                       /* fp32 */
} tflk_binary;

/* one int8 element (cpu_ref's tflite_math runs this too) */
int32_t tflk_binary_s8_one(const tflk_binary *p, int32_t a, int32_t b);
void tflk_binary_s8(const tflk_binary *p, const int8_t *a, const int8_t *b, int8_t *y);
void tflk_binary_f32(const tflk_binary *p, const float *a, const float *b, float *y);

/* ---- TRANSPOSE (tflk_strided.c) ----------------------------------------------- */

/* y, dense over dims (rank <= 8), takes x's element at sum(idx[d] * st[d]);
 * the bytes of an element are copied as they are (fp32, int8 codes with
 * equal quantization, int32) */
typedef struct tflk_strided {
    int32_t rank, esize;
    int32_t dims[TFLK_BIN_RANK], st[TFLK_BIN_RANK];
} tflk_strided;
void tflk_strided_copy(const tflk_strided *p, const void *x, void *y);

/* ---- element-wise comparisons, logical ops, MAXIMUM/MINIMUM, DIV -------------- */

/* tflk_binary's walk with other element functions (tflk_binary.c): op is one
 * of these; the broadcast strides are tflk_binary's. MAXIMUM/MINIMUM on int8
 * compare the raw codes (TFLite needs equal quantization); DIV is fp32 with
 * the fused activation. Comparisons and logical ops write bool bytes (0, 1). */
enum {
    TFLK_MAX = 3, TFLK_MIN = 4, TFLK_DIV = 5, TFLK_EQ = 6, TFLK_NE = 7, TFLK_LT = 8, TFLK_LE = 9, TFLK_GT = 10,
    TFLK_GE = 11, TFLK_AND = 12, TFLK_OR = 13, TFLK_XOR = 14,
    TFLK_MAXN = 15, TFLK_MINN = 16, /* ONNX Max/Min: NaN if either operand is NaN */
    /* ONNX PRelu (x < 0: slope * x), Pow (tflk_powf), Mod with fmod = 1
     * (tflk_fmodf, exact); BitShift on uint8 codes (tflk_shift_u8) */
    TFLK_PRELU = 17, TFLK_POW = 18, TFLK_FMOD = 19, TFLK_SHL = 20, TFLK_SHR = 21
};
void tflk_binary_s8_raw(const tflk_binary *p, const int8_t *a, const int8_t *b, int8_t *y);
void tflk_compare_f32(const tflk_binary *p, const float *a, const float *b, uint8_t *y);
/* bool operands (any non-zero byte is true, false < true): EQ NE LT LE GT GE AND OR XOR */
void tflk_compare_b(const tflk_binary *p, const uint8_t *a, const uint8_t *b, uint8_t *y);
/* ONNX BitShift on uint8 (op TFLK_SHL / TFLK_SHR): a shift by 8 or more gives 0 */
void tflk_shift_u8(const tflk_binary *p, const uint8_t *a, const uint8_t *b, uint8_t *y);
/* int8 DIV on the walk (tflk_div_s8 per element with zp1 = z1, zp2 = z2,
 * out_zp = zo, mult/shift = mo/so, lo/hi): -1 and nothing written when a
 * divisor code equals z2 (a real 0, which TFLite's reference asserts on) */
int32_t tflk_div_s8_run(const tflk_binary *p, const int8_t *a, const int8_t *b, int8_t *y);
/* ONNX Div of int8 tensors (no scale): the codes divided as integers,
 * truncated toward zero; -1 and nothing written when a divisor is 0 */
int32_t tflk_idiv_s8_run(const tflk_binary *p, const int8_t *a, const int8_t *b, int8_t *y);

/* TFLite int8 PRELU with an int8 alpha (prelu.cc): d = x - z1; d >= 0
 * requantized by m1/s1 (s_x / s_y), else d (alpha - z2) by m2/s2 (s_x
 * s_alpha / s_y); + zo, clamped to [lo, hi]; op TFLK_PRELU on the walk.
 * cpu_ref's tflite_math runs tflk_prelu_s8_one. */
int32_t tflk_prelu_s8_one(const tflk_binary *p, int32_t a, int32_t alpha);
void tflk_prelu_s8(const tflk_binary *p, const int8_t *a, const int8_t *alpha, int8_t *y);
/* The int8 forms TFLite has no integer kernel for (POW; PRELU with an fp32
 * alpha, which the seed keeps in FP32): each code dequantized in float,
 * s (q - z), the fp32 op of the walk (TFLK_POW: tflk_powf, TFLK_PRELU),
 * requantized by tflk_quantize to [lo, hi]. b_f32: the second operand is
 * fp32 as it is. cpu_ref's tflite_math runs tflk_bin8f_one. */
typedef struct tflk_bin8f {
    tflk_binary w; /* op, the walk, z1 z2 zo lo hi; act none */
    float s1, s2, so;
    int32_t b_f32;
} tflk_bin8f;
/* one element: a the first code, b the second operand's real value */
int32_t tflk_bin8f_one(const tflk_bin8f *p, int32_t a, float b);
void tflk_binary_s8f(const tflk_bin8f *p, const int8_t *a, const void *b, int8_t *y);

/* ---- fp32 one-input ops (tflk_unary.c) ------------------------------------------ */

/* the float functions of TFLite's one-input kernels, with tflk_math.c's
 * exp/log/sin/cos/sqrt (no libm); alpha: LEAKY_RELU's slope, approx: GELU's
 * tanh form. Bool LOGICAL_NOT is TFLK_U_NOT on bytes (tflk_not_b). */
enum {
    TFLK_U_ABS, TFLK_U_CEIL, TFLK_U_COS, TFLK_U_EXP, TFLK_U_FLOOR, TFLK_U_LOG, TFLK_U_ROUND, TFLK_U_RSQRT,
    TFLK_U_SIN, TFLK_U_SQRT, TFLK_U_SQUARE, TFLK_U_NEG, TFLK_U_RELU, TFLK_U_RELU6, TFLK_U_RELU1, TFLK_U_RELU01,
    TFLK_U_LOGISTIC, TFLK_U_TANH, TFLK_U_ELU, TFLK_U_HSWISH, TFLK_U_GELU, TFLK_U_LEAKY,
    /* ONNX's (Table B): alpha and beta are the op's attributes */
    TFLK_U_TAN, TFLK_U_ERF, TFLK_U_SOFTPLUS, TFLK_U_SOFTSIGN, TFLK_U_SELU, TFLK_U_CELU, TFLK_U_HSIGMOID,
    TFLK_U_THRELU, TFLK_U_ELUA, TFLK_U_CLIP, TFLK_U_RELUN, /* ONNX Relu: NaN stays NaN */
    TFLK_U_SWISH,                                         /* ONNX Swish: x * sigmoid(alpha x) */
    TFLK_U_HSWISHX                                        /* ONNX HardSwish: x * clamp(x / 6 + 1/2, 0, 1) */
};
typedef struct tflk_unary {
    int32_t kind, approx;
    float alpha, beta;
} tflk_unary;
float tflk_unary_one(const tflk_unary *p, float x);
void tflk_unary_f32(const tflk_unary *p, const float *x, float *y, int32_t n);
void tflk_not_b(const uint8_t *x, uint8_t *y, int32_t n);
/* QUANTIZE fp32 -> int8 (tflk_quantize per element) and DEQUANTIZE int8 -> fp32:
 * scale * (q - zp) in float */
void tflk_quantize_f32(const float *x, int8_t *y, int32_t n, float scale, int32_t zp);
void tflk_dequantize_s8(const int8_t *x, float *y, int32_t n, float scale, int32_t zp);
/* int8 -> int8 QUANTIZE (requantization): TFLite's Requantize, q' =
 * zp_out + MultiplyByQuantizedMultiplier(q - zp_in, mult, shift), saturated */
void tflk_requantize_s8(const int8_t *x, int8_t *y, int32_t n, int32_t in_zp, int32_t out_zp, int32_t mult,
                        int32_t shift);

/* ---- data movement (tflk_move.c) ------------------------------------------------- */

/* PAD, PADV2 (mode 0: the fill bytes), MIRROR_PAD (mode 1 REFLECT, 2
 * SYMMETRIC): y over odims (rank <= 8) reads x at idx - before when inside
 * idims, else the fill or the mirrored index */
/* mode 3: ONNX's edge (the nearest border element) */
typedef struct tflk_pad {
    int32_t rank, esize, mode;
    int32_t odims[TFLK_BIN_RANK], idims[TFLK_BIN_RANK], before[TFLK_BIN_RANK];
    uint8_t fill[4];
} tflk_pad;
void tflk_pad_run(const tflk_pad *p, const void *x, void *y);

/* CONCATENATION and PACK: for each of `outer` rows, the n inputs' rows of
 * rows[i] elements one after the other. int8 with another quantization than
 * the output's (scale[i] != 0): TFLite's requantization in float,
 * round(q * scale + bias) + out_zp, saturated; fp32: the fused activation */
typedef struct tflk_concat {
    int32_t n, outer, esize, out_zp, is_f32;
    const int32_t *rows;
    const float *scale, *bias; /* NULL: no input is requantized */
    tflk_act act;
} tflk_concat;
void tflk_concat_run(const tflk_concat *p, const void *const *x, void *y);

/* GATHER (axis gather: outer x n_idx rows of inner bytes), GATHER_ND (each
 * tuple of nd indices selects a slice of inner bytes at sum(idx[d] *
 * st[d]) elements; dims bound each index) and SCATTER_ND (y zeroed, each
 * update slice added at its tuple; dtype TFLK_F32, TFLK_S8 (wrapping add as
 * the reference's) or TFLK_S32). Indices are int32 or, idx64, int64. A
 * negative or too large index returns its value through *bad (when not
 * NULL) and 1; nothing else is reported. */
typedef struct tflk_gather {
    int32_t outer, dim, n_idx, inner, esize, idx64;
    int32_t wrap; /* ONNX: an index in [-dim, 0) counts from the end */
} tflk_gather;
int32_t tflk_gather_run(const tflk_gather *p, const void *x, const void *idx, void *y, int64_t *bad);
typedef struct tflk_gather_nd {
    int32_t n_tuples, nd, inner, esize, idx64, dtype, total;
    int32_t dims[TFLK_BIN_RANK], st[TFLK_BIN_RANK];
    int32_t wrap; /* ONNX: negative indices count from the end */
} tflk_gather_nd;
int32_t tflk_gather_nd_run(const tflk_gather_nd *p, const void *x, const void *idx, void *y, int64_t *bad);
int32_t tflk_scatter_nd_run(const tflk_gather_nd *p, const void *idx, const void *upd, void *y, int64_t *bad);
/* ONNX ScatterND (reduction none): y = data, each tuple's slice replaced */
int32_t tflk_scatter_nd_set(const tflk_gather_nd *p, const void *data, const void *idx, const void *upd, void *y,
                            int64_t *bad);
/* ONNX ScatterElements / Scatter (reduction none): y = data; for every
 * element of indices (dims idims), y at its position with the axis
 * coordinate replaced by the index (negative from the end) = the update */
typedef struct tflk_scatter_el {
    int32_t rank, axis, esize, idx64, total;
    int32_t idims[TFLK_BIN_RANK], ydims[TFLK_BIN_RANK];
} tflk_scatter_el;
int32_t tflk_scatter_el_run(const tflk_scatter_el *p, const void *data, const void *idx, const void *upd, void *y,
                            int64_t *bad);

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
    int32_t rq_single; /* int8: 1 single-rounding requantization (tflk_rescale) */
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
    int32_t rq_single; /* int8: 1 single-rounding requantization (tflk_rescale) */
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
    /* host users only (a generated package leaves them 0): the axis may be
     * an inner one, `inner` elements apart (0 = the last axis, rows = the
     * product of the dims before it); `exp_fn` replaces tflk_expf (a host
     * provider's documented arithmetic: libm's expf); `store` rounds each
     * output (an emulator's fp16 storage) */
    int32_t inner;
    float (*exp_fn)(float);
    float (*store)(float);
} tflk_softmax;

/* TFLite's arithmetic: the exponentials summed in float, each divided by the sum */
void tflk_softmax_f32(const tflk_softmax *p, const float *x, float *y);
/* the ONNX cpu_ref's: summed in double, each multiplied by (float)(1 / sum) */
void tflk_softmax_f32_acc64(const tflk_softmax *p, const float *x, float *y);
/* LOG_SOFTMAX / ONNX LogSoftmax on the same rows: x - max - log(sum of
 * exps). TFLite's form sums in float and takes tflk_logf; the ONNX cpu_ref's
 * (acc64) sums in double and takes the double log rounded once. In place
 * is allowed (y == x). */
void tflk_log_softmax_f32(const tflk_softmax *p, const float *x, float *y);
void tflk_log_softmax_f32_acc64(const tflk_softmax *p, const float *x, float *y);
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

/* The integer LSTM of TFLite Micro (8-bit activations and weights, 16-bit
 * cell): gates are the sum of two int8 FULLY_CONNECTED outputs requantized
 * to int16 Q3.12 (input side with the gate bias), sigmoid/tanh to Q0.15,
 * the cell updated in its int16 scale, the hidden state requantized to int8
 * with the output-state tensor's scale and zero point. No CIFG, peephole,
 * projection or layer norm (TFLite Micro refuses them too). */
typedef struct tflk_lstm8 {
    int32_t n_cell, n_in, steps, batch, time_major;
    int32_t x_off, h_off; /* minus the zero points of the input and the output state */
    const int8_t *wx[4], *wh[4]; /* gates input, forget, cell, output */
    const int32_t *b[4];         /* NULL: no bias */
    int32_t x_mult[4], x_shift[4], h_mult[4], h_shift[4];
    int32_t fc_mult, fc_shift; /* forget gate x cell -> cell */
    int32_t ic_mult, ic_shift; /* input gate x cell gate -> cell */
    int32_t oh_mult, oh_shift, h_zp; /* tanh(cell) x output gate -> hidden */
    int32_t cell_tanh_mult, cell_tanh_shift; /* tanh of the cell in its scale */
    int32_t cell_gate_sigmoid; /* the cell gate's activation: 0 tanh, 1 sigmoid */
    int32_t cell_clip; /* quantized clip of the cell state; -1: none */
    const int8_t *h0;  /* initial output state, int8; NULL: the zero point (TFLite Micro's reset) */
    const int16_t *c0; /* initial cell state, int16; NULL: 0 */
} tflk_lstm8;

/* scratch bytes: the state (batch * n_cell int8 + int16) and four int16 gate rows */
size_t tflk_lstm8_scratch_bytes(const tflk_lstm8 *p);
void tflk_lstm8_run(const tflk_lstm8 *p, const int8_t *x, int8_t *y, void *scratch);

/* ---- reductions and axis ops (tflk_reduce.c) ------------------------------ */

/* What the elements are: fp32; int8 with per-tensor scales and zero points
 * as TFLite (MEAN/SUM/REDUCE_PROD in TFLite Micro's integer arithmetic,
 * MAX/MIN on the codes when both sides share one quantization, the rest
 * through fp32); int8 codes read as plain integers (ONNX on an int8
 * tensor: no scale, the arithmetic of the integer type, results wrap to
 * 8 bits as the host reference's int64-to-int8 store does). */
enum { TFLK_RQ_F32 = 0, TFLK_RQ_TFL8 = 1, TFLK_RQ_RAW8 = 2 };
enum {
    TFLK_R_SUM, TFLK_R_MEAN, TFLK_R_MAX, TFLK_R_MIN, TFLK_R_PROD, TFLK_R_L1, TFLK_R_L2, TFLK_R_LOGSUM,
    TFLK_R_LOGSUMEXP, TFLK_R_SUMSQ
};

/* A reduction over some dims: the output's elements are the kept dims in
 * row-major order (keep_dims only changes the output's shape); each
 * output visits its reduced elements in row-major order (the order
 * TFLite's REDUCE_PROD requantizes in). Dims and element strides of the
 * input, at most TFLK_BIN_RANK kept and reduced. fp32 accumulates in
 * double, as the host reference (exact for short windows, and one rounding
 * at the end). onnx: MAX/MIN let a NaN through (ONNX), else TFLite's
 * comparisons. */
typedef struct tflk_reduce {
    int32_t kind, mode, onnx;
    int32_t nk, nr;
    int32_t kd[TFLK_BIN_RANK], ks[TFLK_BIN_RANK], rd[TFLK_BIN_RANK], rs[TFLK_BIN_RANK];
    int32_t raw; /* TFLK_RQ_TFL8: MEAN, SUM, or MAX/MIN with one quantization, on the codes */
    float xs, ys;
    int32_t xz, yz;
    tflk_reduce8 r8; /* MEAN / SUM */
    tflk_prod8 p8;   /* REDUCE_PROD */
} tflk_reduce;

void tflk_reduce_run(const tflk_reduce *p, const void *x, void *y);
/* the kept and reduced dims of p from a shape and a mask of reduced dims
 * (bit d: dim d), neighbours of one kind merged; -1: more than
 * TFLK_BIN_RANK of a kind, or more than 2^31 - 1 elements (a host check) */
int32_t tflk_reduce_plan(tflk_reduce *p, int32_t rank, const int64_t *dims, uint32_t mask);

/* Ops along one axis of [outer, len, inner]:
 *   ARGMAX ARGMIN  fp32 in, int32 or (idx64) int64 index out; ties to the
 *                  first index, flags 1: to the last (select_last_index)
 *   CUMSUM         flags 1 exclusive, 2 reverse; int8 TFLK_RQ_TFL8 through
 *                  fp32 (the running sum in double, quantized per output)
 *   TOPK           the k largest (flags 1: smallest) in order, ties to the
 *                  lower index; values (fp32 or int8 codes, esize bytes)
 *                  to y, indices to y2; the output axis has length k
 *   HARDMAX        1 at the first maximum, 0 elsewhere (fp32)
 *   LPNORM         ONNX LpNormalization, p = 1 or 2 (flags): x / norm, 0
 *                  where the norm is 0; the norm in double
 *   L2NORM         TFLite L2_NORMALIZATION on the last axis: x / max(sqrt
 *                  (sum x^2), 1e-6) in float and the fused activation;
 *                  int8 through fp32 */
enum { TFLK_A_ARGMAX, TFLK_A_ARGMIN, TFLK_A_CUMSUM, TFLK_A_TOPK, TFLK_A_HARDMAX, TFLK_A_LPNORM, TFLK_A_L2NORM };

typedef struct tflk_axisop {
    int32_t op, mode;
    int32_t outer, len, inner;
    int32_t flags, k, idx64, esize;
    float xs, ys;
    int32_t xz, yz;
    tflk_act act;
} tflk_axisop;

void tflk_axis_run(const tflk_axisop *p, const void *x, void *y, void *y2);

/* ---- TRANSPOSE_CONV / ConvTranspose (tflk_tconv.c) ------------------------ */

/* NHWC input [n, ih, iw, ic], filter [oc, kh, kw, ic], output [n, oh, ow,
 * oc]; input pixel (iy, ix) with tap (ky, kx) lands on output (iy * sh - pt
 * + ky * dh, ix * sw - pl + kx * dw), outside cells dropped. int8: in_off =
 * -input zero point, mult/shift per output channel (per_channel) or one,
 * lo/hi the clamp; `acc` scratch of n * oh * ow * oc int32 */
typedef struct tflk_tconv {
    int32_t n, ih, iw, ic, oh, ow, oc, kh, kw, sh, sw, dh, dw, pt, pl;
    int32_t in_off, out_zp, lo, hi, per_channel;
    const int32_t *mult, *shift;
    tflk_act act; /* fp32 */
} tflk_tconv;
void tflk_tconv_f32(const tflk_tconv *p, const float *x, const float *w, const float *bias, float *y);
void tflk_tconv_s8(const tflk_tconv *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y,
                   int32_t *acc);

/* ---- BATCH_MATMUL / batched MatMul (tflk_bmm.c) ---------------------------- */

#define TFLK_BMM_RANK 4
/* `batches` matrices y [m, n] = op(a) [m, k] x op(b) [k, n]; a is [k, m]
 * when adj_x, b [n, k] when adj_y. The batch index is read over bdims
 * (rank <= 4; y's batch dims) and sa/sb give each operand's element step
 * per batch index (0: broadcast). int8: x_off/y_off = -zero points, one
 * per-tensor mult/shift, out_zp */
typedef struct tflk_bmm {
    int32_t batches, m, n, k, adj_x, adj_y, rank;
    int32_t bdims[TFLK_BMM_RANK], sa[TFLK_BMM_RANK], sb[TFLK_BMM_RANK];
    int32_t x_off, y_off, out_zp, mult, shift;
} tflk_bmm;
/* bias: n floats added to every row (ONNX Gemm's C), NULL for none */
void tflk_bmm_f32(const tflk_bmm *p, const float *a, const float *b, const float *bias, float *y);
void tflk_bmm_s8(const tflk_bmm *p, const int8_t *a, const int8_t *b, int8_t *y);

/* ---- CONV_3D (tflk_conv3d.c) --------------------------------------------------- */

/* NDHWC input, filter [kd, kh, kw, ic, oc], leading pads pd/pt/pl. int8
 * (the FULL_QUANT form: int8 input, filter and output, int32 bias): in_off
 * = -input zero point, mult/shift per output channel (per_channel) or one,
 * lo/hi the clamp, rq_single the requantization form of tflk_rescale; the
 * fp32 kernel reads none of them */
typedef struct tflk_conv3d {
    int32_t n, id, ih, iw, ic, od, oh, ow, oc, kd, kh, kw;
    int32_t sd, sh, sw, dd, dh, dw, pd, pt, pl;
    tflk_act act;
    int32_t in_off, out_zp, lo, hi, per_channel;
    const int32_t *mult, *shift;
    int32_t rq_single;
} tflk_conv3d;
void tflk_conv3d_f32(const tflk_conv3d *p, const float *x, const float *w, const float *bias, float *y);
void tflk_conv3d_s8(const tflk_conv3d *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y);

/* ---- ONNX GRU, fp32 (tflk_gru.c) ------------------------------------------- */

/* layout 0: x [steps, batch, n_in], W [dirs, 3H, I], R [dirs, 3H, H], B
 * [dirs, 6H] (NULL: 0), h0 [dirs, batch, H] (NULL: 0); y [steps, dirs,
 * batch, H] (required), yh [dirs, batch, H] (NULL: not written). dirs 2 is
 * bidirectional (direction 1 reversed); with dirs 1, reverse runs backwards.
 * lbr: linear_before_reset */
typedef struct tflk_gru {
    int32_t steps, batch, n_in, hidden, dirs, reverse, lbr;
} tflk_gru;
size_t tflk_gru_scratch_floats(const tflk_gru *p);
void tflk_gru_f32(const tflk_gru *p, const float *x, const float *w, const float *r, const float *b, const float *h0,
                  float *y, float *yh, float *scratch);

/* ---- ONNX RNN, fp32 (tflk_rnn.c) ------------------------------------------- */

/* ONNX's recurrent activations, in the order of the SDK's sy_rnn_act_kind
 * (cpu_ref passes its parsed kinds as they are); alpha/beta as ONNX's */
enum {
    TFLK_RA_SIGMOID, TFLK_RA_TANH, TFLK_RA_RELU, TFLK_RA_AFFINE, TFLK_RA_LEAKY, TFLK_RA_THRELU, TFLK_RA_SCALEDTANH,
    TFLK_RA_HSIGMOID, TFLK_RA_ELU, TFLK_RA_SOFTSIGN, TFLK_RA_SOFTPLUS
};
float tflk_rnn_act(int32_t kind, float alpha, float beta, float x);
/* the kind of an ONNX activation name (-1: none), how many of alpha, beta
 * it consumes and their ONNX defaults */
int32_t tflk_rnn_act_of(const char *name, int32_t *n_params, float *alpha, float *beta);
/* layout 0: x [steps, batch, n_in], W [dirs, H, I], R [dirs, H, H], B
 * [dirs, 2H] (NULL: 0), lens [batch] (NULL: every row steps long), h0 [dirs,
 * batch, H] (NULL: 0); y [steps, dirs, batch, H] and yh [dirs, batch, H]
 * (NULL: not written). dirs 2 is bidirectional (direction 1 reversed); with
 * dirs 1, reverse runs backwards. act/alpha/beta per direction; clip <= 0:
 * none. scratch: tflk_rnn_scratch_floats floats. */
typedef struct tflk_rnn {
    int32_t steps, batch, n_in, hidden, dirs, reverse;
    int32_t act[2];
    float alpha[2], beta[2], clip;
} tflk_rnn;
size_t tflk_rnn_scratch_floats(const tflk_rnn *p);
void tflk_rnn_f32(const tflk_rnn *p, const float *x, const float *w, const float *r, const float *b,
                  const int32_t *lens, const float *h0, float *y, float *yh, float *scratch);

/* ---- ONNX Einsum (tflk_einsum.c) ------------------------------------------ */

/* element codes beyond tflk_cast's (TFLK_F32, TFLK_S8, TFLK_S16, TFLK_S32,
 * TFLK_U8, TFLK_S64) that cpu_ref's Einsum runs too */
enum { TFLK_F64 = 8, TFLK_U16 = 9, TFLK_U32 = 10, TFLK_U64 = 11 };
#define TFLK_EIN_IN 8   /* inputs */
#define TFLK_EIN_RANK 8 /* output dims (and each input's) */
#define TFLK_EIN_SUM 16 /* summed labels */
/* tflk_einsum_plan's failures (0: a plan); msg says what */
enum { TFLK_EIN_EINVAL = 1, TFLK_EIN_ESHAPE = 2, TFLK_EIN_EUNSUPPORTED = 3 };
/* the plan: output dims, summed-label dims, and per input the element
 * stride of each (a label repeated in a term: its strides added) */
typedef struct tflk_einsum {
    int32_t n_in, n_out, n_sum;
    int32_t out_dims[TFLK_EIN_RANK], sum_dims[TFLK_EIN_SUM];
    int32_t out_stride[TFLK_EIN_IN][TFLK_EIN_RANK], sum_stride[TFLK_EIN_IN][TFLK_EIN_SUM];
} tflk_einsum;
/* eq against n_in inputs of rank[k] dims dims[k][..] (host side) */
int32_t tflk_einsum_plan(tflk_einsum *p, const char *eq, int32_t n_in, const int32_t *rank,
                         const int64_t *const *dims, char *msg, int32_t msg_len);
/* in[k] of element code dt (every input and the output share it) */
void tflk_einsum_run(const tflk_einsum *p, int32_t dt, const void *const *in, void *y);

/* ---- TFLite UNIQUE / ONNX Unique (tflk_unique.c) --------------------------- */

enum { TFLK_F16 = 12, TFLK_BF16 = 13 };
/* bytes of an element code (0: unknown) */
int32_t tflk_elem_size(int32_t dt);
/* items: outer x n_items x inner elements of code dt (item i: the inner
 * elements at (o * n_items + i) * inner for each o); sorted: ascending
 * groups, else first-occurrence order; idx64: the index outputs are int64,
 * else int32 */
typedef struct tflk_unique {
    int32_t outer, n_items, inner, dt, sorted, idx64;
} tflk_unique;
size_t tflk_unique_scratch_bytes(const tflk_unique *p);
/* Returns u, the number of unique items: y [outer, u, inner], indices and
 * counts [u], inverse [n_items]; any output NULL: not written. */
int32_t tflk_unique_run(const tflk_unique *p, const void *x, void *y, void *indices, void *inverse, void *counts,
                        void *scratch);

/* ---- data movement ---------------------------------------------------------- */

/* RESHAPE and friends: a copy unless the buffers are the same */
void tflk_copy(void *dst, const void *src, size_t bytes);

/* ---- shape, casts, selection (tflk_shape.c) -------------------------------------- */

/* element codes of tflk_cast (TFLK_F32, TFLK_S8, TFLK_S32 as above) */
enum { TFLK_U8 = 5, TFLK_BOOL = 6, TFLK_S64 = 7 };
/* CAST / ONNX Cast of n elements: float to an integer truncates toward 0 and
 * saturates (NaN gives 0: C leaves an out-of-range conversion undefined);
 * an integer to a narrower one wraps as C++'s static_cast; anything to bool
 * is != 0 */
void tflk_cast(int32_t from, int32_t to, const void *x, void *y, int32_t n);
/* FILL / ConstantOfShape: n copies of one element of esize bytes */
void tflk_fill(void *y, const void *value, int32_t esize, int32_t n);
/* SELECT / SELECT_V2 / Where: y = cond ? a : b over dims (rank <= 8) with
 * per-operand element strides (0 where an operand broadcasts) */
typedef struct tflk_select {
    int32_t rank, esize;
    int32_t dims[TFLK_BIN_RANK], sc[TFLK_BIN_RANK], sa[TFLK_BIN_RANK], sb[TFLK_BIN_RANK];
} tflk_select;
void tflk_select_run(const tflk_select *p, const uint8_t *cond, const void *a, const void *b, void *y);
/* REVERSE_SEQUENCE / ReverseSequence: x as [d0, d1, inner] with the sequence
 * axis seq_axis (0 or 1) and the batch axis the other; along the sequence
 * axis the first len[b] elements of batch b are reversed. A length outside
 * [0, seq dim] returns 1 (its value in *bad when not NULL), nothing written */
typedef struct tflk_revseq {
    int32_t d0, d1, inner, esize, seq_axis, len64;
} tflk_revseq;
int32_t tflk_revseq_run(const tflk_revseq *p, const void *x, const void *len, void *y, int64_t *bad);
/* Trilu: per [rows, cols] matrix, y = x where (upper ? j - i >= k : j - i <= k), else 0 */
typedef struct tflk_trilu {
    int32_t batches, rows, cols, k, upper, esize;
} tflk_trilu;
void tflk_trilu_run(const tflk_trilu *p, const void *x, void *y);
/* ONE_HOT / OneHot: indices [outer, inner] to y [outer, depth, inner]; an
 * index equal to d gives on, else off. onnx: an index in [-depth, 0) counts
 * from the end (TFLite: a negative index gives an all-off slice) */
typedef struct tflk_onehot {
    int32_t outer, depth, inner, esize, idx64, onnx;
} tflk_onehot;
void tflk_onehot_run(const tflk_onehot *p, const void *idx, const void *on, const void *off, void *y);
/* ONNX GatherElements: y (dims idims) at position i takes data (dims ydims)
 * at i with the axis coordinate replaced by the index (negative from the
 * end); an out-of-range index returns 1, nothing written */
int32_t tflk_gather_el_run(const tflk_scatter_el *p, const void *data, const void *idx, void *y, int64_t *bad);

/* ---- RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR / ONNX Resize (tflk_resize.c) ---- */

/* x [n, ih, iw, c] to y [n, oh, ow, c] (ONNX NCHW as n = N*C planes, c = 1).
 * onnx = 0: TFLite's kernels with its align_corners (ac) and
 * half_pixel_centers (hp) flags; esize 1 bilinear is TFLite's
 * ResizeBilinearInteger on int8 codes. onnx = 1: ONNX's coordinate
 * transformations (coord) with the scales sh, sw (output / input) and the
 * nearest_mode (nearest); linear clamps the source coordinate to the input
 * (what ONNX's edge handling gives). Nearest copies elements of esize bytes */
enum { TFLK_RZ_HALF_PIXEL = 0, TFLK_RZ_ALIGN_CORNERS = 1, TFLK_RZ_ASYMMETRIC = 2 };
enum { TFLK_RZ_PREFER_FLOOR = 0, TFLK_RZ_PREFER_CEIL = 1, TFLK_RZ_FLOOR = 2, TFLK_RZ_CEIL = 3 };
typedef struct tflk_resize {
    int32_t n, ih, iw, c, oh, ow, esize, linear, ac, hp, onnx, coord, nearest;
    float sh, sw;
} tflk_resize;
void tflk_resize_run(const tflk_resize *p, const void *x, void *y);

/* ---- ONNX BatchNormalization, LayerNormalization, InstanceNormalization (tflk_norm.c) ---- */

/* x as [outer, groups, inner], fp32. BATCH (inference): per group g,
 * y = (x - mean[g]) / sqrt(var[g] + eps) * scale[g] + bias[g]. INSTANCE: the
 * mean and variance of each (outer, group) row of inner elements; scale and
 * bias per group. LAYER: the mean and variance of each outer row of
 * groups * inner elements (groups = 1); scale and bias per element of the
 * row (n_scale, n_bias 1: one value; bias NULL: 0); mean and inv (NULL: not
 * wanted) get each row's mean and 1 / sqrt(var + eps). The sums are in double */
enum { TFLK_NORM_BATCH = 0, TFLK_NORM_INSTANCE = 1, TFLK_NORM_LAYER = 2 };
typedef struct tflk_norm {
    int32_t mode, outer, groups, inner, n_scale, n_bias;
    float eps;
} tflk_norm;
void tflk_norm_run(const tflk_norm *p, const float *x, const float *scale, const float *bias, const float *mean_in,
                   const float *var_in, float *y, float *mean, float *inv);
/* the parameters of an ONNX normalization of x (rank, dims): BATCH and
 * INSTANCE over dim 1, LAYER from axis (normalized) on, with n_scale and
 * n_bias elements of scale and B (0: no B) */
void tflk_norm_onnx(tflk_norm *p, int32_t mode, int32_t rank, const int64_t *dims, int32_t axis, int32_t n_scale,
                    int32_t n_bias, float eps);

#ifdef __cplusplus
}
#endif
#endif
