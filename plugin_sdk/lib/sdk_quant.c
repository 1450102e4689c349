/*
 * sy_sdk: integer requantization and fixed-point math with the rounding of
 * TFLite's reference kernels (and therefore of CMSIS-NN / NMSIS-NN, whose
 * default double-rounding requantization is the same arithmetic):
 *
 *   QuantizeMultiplier          real multiplier -> int32 Q0.31 + shift
 *   SaturatingRoundingDoublingHighMul, RoundingDivideByPOT
 *   MultiplyByQuantizedMultiplier
 *   fused-activation clamp ranges
 *   the gemmlowp fixed-point exp / reciprocal used by int8 Softmax
 *
 * SaturatingRoundingDoublingHighMul, RoundingDivideByPOT and
 * MultiplyByQuantizedMultiplier are sy_fixedpoint.h's (one definition for
 * the SDK and the portable kernels); shifts of signed values are done on
 * their unsigned bit patterns where C would otherwise be undefined, so the
 * results match two's complement hardware and stay clean under UBSan.
 */
#include "switchyard/sy_sdk.h"
#include "switchyard/sy_fixedpoint.h"

#include <math.h>

void sy_q_quantize_multiplier(double m, int32_t *mult, int32_t *shift)
{
    if (!(m > 0.0) || !isfinite(m)) {
        *mult = 0;
        *shift = 0;
        return;
    }
    int e = 0;
    double q = frexp(m, &e);
    int64_t q_fixed = (int64_t)llround(q * 2147483648.0);
    if (q_fixed == (INT64_C(1) << 31)) {
        q_fixed /= 2;
        e++;
    }
    if (e < -31) { /* below what Q0.31 with a 31-bit shift can express */
        e = 0;
        q_fixed = 0;
    }
    if (e > 30) { /* saturate: the largest representable multiplier */
        e = 30;
        q_fixed = INT32_MAX;
    }
    *mult = (int32_t)q_fixed;
    *shift = e;
}

/* the arithmetic is sy_fixedpoint.h's, shared with the portable kernels */
int32_t sy_q_srdhm(int32_t a, int32_t b) { return sy_fx_srdhm(a, b); }

int32_t sy_q_rdivpot(int32_t x, int32_t exponent) { return sy_fx_rdivpot(x, exponent); }

int32_t sy_q_mul_by_qm(int32_t x, int32_t mult, int32_t shift) { return sy_fx_mul_by_qm(x, mult, shift); }
int32_t sy_q_mul_by_qm_single(int32_t x, int32_t mult, int32_t shift) { return sy_fx_mul_by_qm_single(x, mult, shift); }

int32_t sy_q_mul_by_qm_gt1(int32_t x, int32_t mult, int32_t left_shift)
{
    return sy_fx_mul_by_qm_gt1(x, mult, left_shift);
}

void sy_q_dtype_range(sy_dtype dt, int32_t *lo, int32_t *hi)
{
    switch (dt) {
    case SY_DT_INT8: *lo = -128; *hi = 127; break;
    case SY_DT_UINT8: *lo = 0; *hi = 255; break;
    case SY_DT_INT16: *lo = -32768; *hi = 32767; break;
    default: *lo = INT32_MIN; *hi = INT32_MAX; break;
    }
}

/* round(f / scale) + zp, saturated to int32; a scale that gives NaN
 * (0, NaN: refused by the loaders' checks, but this is the SDK) counts as 0 */
static int32_t q_round(float f, float scale, int32_t zp)
{
    float v = roundf(f / scale);
    if (v != v)
        v = 0.0f;
    if (v > 2147483520.0f)
        v = 2147483520.0f;
    if (v < -2147483520.0f)
        v = -2147483520.0f;
    int64_t r = (int64_t)zp + (int64_t)v;
    return r > INT32_MAX ? INT32_MAX : r < INT32_MIN ? INT32_MIN : (int32_t)r;
}

bool sy_q_act_range(sy_dtype dt, const char *act, float scale, int32_t zp, int32_t *lo, int32_t *hi)
{
    int32_t qmin, qmax;
    sy_q_dtype_range(dt, &qmin, &qmax);
    *lo = qmin;
    *hi = qmax;
    if (!act || !strcmp(act, "NONE"))
        return true;
    if (!strcmp(act, "RELU")) {
        int32_t z = q_round(0.0f, scale, zp);
        *lo = z > qmin ? z : qmin;
        return true;
    }
    if (!strcmp(act, "RELU6")) {
        int32_t z = q_round(0.0f, scale, zp), s = q_round(6.0f, scale, zp);
        *lo = z > qmin ? z : qmin;
        *hi = s < qmax ? s : qmax;
        return true;
    }
    if (!strcmp(act, "RELU_N1_TO_1")) {
        int32_t a = q_round(-1.0f, scale, zp), b = q_round(1.0f, scale, zp);
        *lo = a > qmin ? a : qmin;
        *hi = b < qmax ? b : qmax;
        return true;
    }
    if (!strcmp(act, "RELU_0_TO_1")) {
        int32_t a = q_round(0.0f, scale, zp), b = q_round(1.0f, scale, zp);
        *lo = a > qmin ? a : qmin;
        *hi = b < qmax ? b : qmax;
        return true;
    }
    return false; /* TANH, SIGN_BIT: not a clamp */
}

bool sy_act_range_f32(const char *act, float *lo, float *hi)
{
    *lo = -INFINITY;
    *hi = INFINITY;
    if (!act || !strcmp(act, "NONE"))
        return true;
    if (!strcmp(act, "RELU")) {
        *lo = 0.0f;
        return true;
    }
    if (!strcmp(act, "RELU6")) {
        *lo = 0.0f;
        *hi = 6.0f;
        return true;
    }
    if (!strcmp(act, "RELU_N1_TO_1")) {
        *lo = -1.0f;
        *hi = 1.0f;
        return true;
    }
    if (!strcmp(act, "RELU_0_TO_1")) {
        *lo = 0.0f;
        *hi = 1.0f;
        return true;
    }
    return false;
}

int32_t sy_q_quantize_f32(float x, float scale, int32_t zp, int32_t lo, int32_t hi)
{
    float v = roundf(x / scale) + (float)zp;
    if (!(v >= (float)lo)) /* also NaN */
        return lo;
    if (v > (float)hi)
        return hi;
    return (int32_t)v;
}

/* ---- gemmlowp fixed point ------------------------------------------------- */

/* one definition each in sy_fixedpoint.h, shared with the TFLite kernels
 * (tflk_fixed.c); the SDK's softmax reads exp with 5 integer bits */
int32_t sy_q_exp_on_negative_values(int32_t a)
{
    /* a: Q5.26 (5 integer bits), a <= 0; result Q0.31 */
    return sy_fx_exp_on_negative(a, 5);
}

int32_t sy_q_one_over_one_plus_x(int32_t a) { return sy_fx_one_over_one_plus_x(a); }

int32_t sy_q_get_reciprocal(int32_t x, int32_t integer_digits, int32_t *num_bits_over_unit)
{
    return sy_fx_get_reciprocal(x, integer_digits, num_bits_over_unit);
}

void sy_q_softmax_params(double beta, double input_scale, int32_t *mult, int32_t *left_shift, int32_t *diff_min)
{
    const int integer_bits = 5;
    double real = beta * input_scale * (double)(INT64_C(1) << (31 - integer_bits));
    if (real > 2147483647.0)
        real = 2147483647.0;
    sy_q_quantize_multiplier(real, mult, left_shift);
    if (*left_shift < 0) { /* tiny beta*scale: every difference rounds to 0 */
        *left_shift = 0;
    }
    double max_rescaled = 1.0 * ((1 << integer_bits) - 1) * (double)(INT64_C(1) << (31 - integer_bits)) /
                          (double)(INT64_C(1) << *left_shift);
    *diff_min = -(int32_t)floor(max_rescaled);
}

