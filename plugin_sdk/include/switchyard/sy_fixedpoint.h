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

#endif
