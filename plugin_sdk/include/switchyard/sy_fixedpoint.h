/*
 * sy_fixedpoint.h: the gemmlowp / TFLite reference fixed-point primitives,
 * written once for every integer kernel of switchyard (the SDK's sy_q_* and
 * sy_rq_round_even, the portable kernels qk.c and tflk_*.c). Plain C99 with
 * no libm, no allocator and no include but <stdint.h>, because `switchyard
 * codegen` copies this file unchanged into the standalone MCU packages
 * (providers/riscv_mcu), where the same functions must give the same bits.
 *
 * Shifts of signed values are done on their unsigned bit patterns where C
 * would otherwise be undefined; right shifts of negative values are
 * arithmetic on every compiler the project supports (GCC, Clang), as
 * gemmlowp assumes.
 */
#ifndef SY_FIXEDPOINT_H
#define SY_FIXEDPOINT_H

#include <stdint.h>

/* SaturatingRoundingDoublingHighMul: (a * b * 2) >> 32, rounded half away
 * from zero; the one overflowing case (INT32_MIN^2) saturates */
static inline int32_t sy_fx_srdhm(int32_t a, int32_t b)
{
    if (a == b && a == INT32_MIN)
        return INT32_MAX;
    int64_t ab = (int64_t)a * (int64_t)b;
    int64_t nudge = ab >= 0 ? (INT64_C(1) << 30) : (1 - (INT64_C(1) << 30));
    return (int32_t)((ab + nudge) / (INT64_C(1) << 31));
}

/* RoundingDivideByPOT: x / 2^exponent rounded half away from zero;
 * exponent <= 0 returns x, exponent > 31 is taken as 31 */
static inline int32_t sy_fx_rdivpot(int32_t x, int32_t exponent)
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

/* MultiplyByQuantizedMultiplier: x * mult * 2^shift for a Q0.31 multiplier,
 * the left part of the shift before the high multiply (wrapping, as the
 * reference's int32 shift on two's complement hardware), the right part as
 * a rounding shift after it */
static inline int32_t sy_fx_mul_by_qm(int32_t x, int32_t mult, int32_t shift)
{
    int32_t left = shift > 0 ? shift : 0;
    int32_t right = shift > 0 ? 0 : -shift;
    return sy_fx_rdivpot(sy_fx_srdhm((int32_t)((uint32_t)x << left), mult), right);
}

/* MultiplyByQuantizedMultiplier of TFLite built with TFLITE_SINGLE_ROUNDING
 * (and ruy's): one rounding, (x * mult + 2^(t - 1)) >> t with t = 31 -
 * shift, i.e. half up. TFLite's QuantizeMultiplier saturates a shift above
 * 30 to 30 with the multiplier INT32_MAX in that build; so does this. The
 * result saturates to int32 where TFLite only asserts it fits. */
static inline int32_t sy_fx_mul_by_qm_single(int32_t x, int32_t mult, int32_t shift)
{
    if (shift > 30) {
        shift = 30;
        mult = INT32_MAX;
    }
    if (shift < -31)
        return 0; /* QuantizeMultiplier's multiplier 0 for so small a scale */
    const int32_t t = 31 - shift;
    int64_t r = ((int64_t)x * (int64_t)mult + (INT64_C(1) << (t - 1))) >> t;
    return r > INT32_MAX ? INT32_MAX : (r < INT32_MIN ? INT32_MIN : (int32_t)r);
}

/* MultiplyByQuantizedMultiplierGreaterThanOne: left shift only (0..31) */
static inline int32_t sy_fx_mul_by_qm_gt1(int32_t x, int32_t mult, int32_t left_shift)
{
    return sy_fx_srdhm((int32_t)((uint32_t)x << left_shift), mult);
}

/* Rounding half to even without libm and without depending on the FPU
 * rounding mode. NaN, infinities and |v| >= 2^52 (already integers) come
 * back as they are; so do +-0, keeping the sign as rint() does. Truncation
 * is exact below 2^52 and so is d = v - floor(v); ties go to the even
 * neighbour. Branch-free on the fraction: it runs once per element. */
static inline double sy_fx_round_even(double v)
{
    if (!(v < 4503599627370496.0 && v > -4503599627370496.0) || v == 0.0)
        return v;
    int64_t f = (int64_t)v;
    f -= (double)f > v;
    double d = v - (double)f;
    f += (d > 0.5) | ((d == 0.5) & (int)(f & 1));
    return (double)f;
}

/* ---- gemmlowp transcendental helpers (softmax, logistic, tanh, DIV) ------ */

/* int32 additions that wrap like the hardware the reference runs on (no
 * signed-overflow UB); in the ranges the callers keep, nothing wraps */
static inline int32_t sy_fx_wadd(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
static inline int32_t sy_fx_wsub(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }

/* SaturatingRoundingMultiplyByPOT: x * 2^e saturated to int32, for
 * 0 < e <= 31; e <= 0 returns x */
static inline int32_t sy_fx_sat_shl(int32_t x, int32_t e)
{
    if (e <= 0)
        return x;
    int32_t threshold = (int32_t)((UINT32_C(1) << (31 - e)) - 1u);
    if (x > threshold)
        return INT32_MAX;
    if (x < -threshold)
        return INT32_MIN;
    return (int32_t)((uint32_t)x << e);
}

/* exp(a) for a in [-1/4, 0), Q0.31 in and out: Taylor series around -1/8 */
static inline int32_t sy_fx_exp_quarter(int32_t a)
{
    const int32_t constant_term = 1895147668; /* exp(-1/8) in Q0.31 */
    const int32_t constant_1_over_3 = 715827883;
    int32_t x = sy_fx_wadd(a, 1 << 28); /* a + 1/8 */
    int32_t x2 = sy_fx_srdhm(x, x);
    int32_t x3 = sy_fx_srdhm(x2, x);
    int32_t x4 = sy_fx_srdhm(x2, x2);
    int32_t x4_over_4 = sy_fx_rdivpot(x4, 2);
    int32_t poly = sy_fx_rdivpot(sy_fx_wadd(sy_fx_srdhm(sy_fx_wadd(x4_over_4, x3), constant_1_over_3), x2), 1);
    return sy_fx_wadd(constant_term, sy_fx_srdhm(constant_term, sy_fx_wadd(x, poly)));
}

/* exp_on_negative_values: a <= 0 in Q(int_bits).(31-int_bits), 1 <= int_bits
 * <= 30; result Q0.31. exp of a mod 1/4 times exp(-2^e) for every set bit e
 * of the rest (the barrel shifter over the integer bits); below -32 the
 * result is 0, as gemmlowp's clamp for int_bits > 5 */
static inline int32_t sy_fx_exp_on_negative(int32_t a, int32_t int_bits)
{
    const int32_t frac = 31 - int_bits;
    const int32_t one_quarter = (int32_t)(UINT32_C(1) << (frac - 2));
    const int32_t mask = one_quarter - 1;
    int32_t amq = sy_fx_wsub(a & mask, one_quarter); /* a mod 1/4, minus 1/4: in [-1/4, 0) */
    int32_t result = sy_fx_exp_quarter(sy_fx_sat_shl(amq, int_bits));
    int32_t remainder = sy_fx_wsub(amq, a);
    /* exp(-2^e) in Q0.31 for e = -2 .. 4 */
    static const int32_t mults[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
    for (int32_t e = -2; e <= 4; e++)
        if (int_bits > e && (remainder & (int32_t)(UINT32_C(1) << (frac + e))))
            result = sy_fx_srdhm(result, mults[e + 2]);
    if (int_bits > 5 && a < -(int32_t)(UINT32_C(1) << (36 - int_bits))) /* below -32 */
        result = 0;
    if (a == 0)
        result = INT32_MAX;
    return result;
}

/* Newton-Raphson for 1 / (1 + a), a in [0, 1) Q0.31; the result in Q2.29
 * (one_over_one_plus_x and TFLite's (1 - a) / (1 + a) read it) */
static inline int32_t sy_fx_nr_reciprocal_q2(int32_t a)
{
    int64_t sum = (int64_t)a + INT32_MAX; /* RoundingHalfSum(a, 1) */
    int64_t sign = sum >= 0 ? 1 : -1;
    int32_t half_denominator = (int32_t)((sum + sign) / 2);
    const int32_t c48_17 = 1515870810, cneg32_17 = -1010580540; /* 48/17 and -32/17 in Q2.29 */
    int32_t x = sy_fx_wadd(c48_17, sy_fx_srdhm(half_denominator, cneg32_17));
    for (int i = 0; i < 3; i++) {
        int32_t hdx = sy_fx_srdhm(half_denominator, x);
        int32_t one_minus = sy_fx_wsub(1 << 29, hdx);
        x = sy_fx_wadd(x, sy_fx_sat_shl(sy_fx_srdhm(x, one_minus), 2));
    }
    return x;
}

/* one_over_one_plus_x_for_x_in_0_1: 1 / (1 + a), a in [0, 1), Q0.31 in and out */
static inline int32_t sy_fx_one_over_one_plus_x(int32_t a) { return sy_fx_sat_shl(sy_fx_nr_reciprocal_q2(a), 1); }

/* count of leading zero bits, 32 for 0 (a loop: no compiler builtin, so
 * the MCU packages build with any C99 compiler) */
static inline int32_t sy_fx_clz32(uint32_t x)
{
    if (!x)
        return 32;
    int32_t n = 0;
    while (!(x & 0x80000000u)) {
        x <<= 1;
        n++;
    }
    return n;
}

/* GetReciprocal: 1/x for x > 0 with integer_digits integer bits, as a Q0.31
 * mantissa in [1/2, 1] and *num_bits_over_unit, the power of two to apply */
static inline int32_t sy_fx_get_reciprocal(int32_t x, int32_t integer_digits, int32_t *num_bits_over_unit)
{
    int32_t headroom_plus_one = sy_fx_clz32((uint32_t)x);
    *num_bits_over_unit = integer_digits - headroom_plus_one;
    int32_t shifted_minus_one = (int32_t)(((uint32_t)x << (headroom_plus_one & 31)) - (UINT32_C(1) << 31));
    return sy_fx_one_over_one_plus_x(shifted_minus_one);
}

#endif
