/*
 * int8 elementwise and reduction kernels of TFLite's reference interpreter
 * that are neither a plain requantization nor a gemmlowp function:
 * the float-built lookup table (LUTPopulate), RSQRT's fixed-point inverse
 * square root, SQUARED_DIFFERENCE's shifted, rescaled difference and
 * REDUCE_PROD's product requantized at every step. Formulas from TFLite's
 * public sources (kernels/elementwise.cc, squared_difference.cc, reduce.cc,
 * internal/common.h); the code is written here.
 */
#include "tflk.h"

/* TFLite's LUTPopulate for 8 bits: dequantize in float, transform, multiply
 * by the float 1/scale (not a division: the product can round differently),
 * round half away from zero, add the zero point in float, saturate. The
 * reference casts the float to int32 first, which is undefined for values
 * beyond int32 and non-finite ones; here they saturate by sign and NaN
 * gives the lowest code. */
void tflk_lut_populate_s8(float in_scale, int32_t in_zp, float out_scale, int32_t out_zp,
                          float (*fn)(float, const void *), const void *ctx, int8_t lut[256])
{
    const float inverse_scale = 1.0f / out_scale;
    for (int32_t q = -128; q <= 127; q++) {
        const float x = in_scale * (float)(q - in_zp);
        const float r = tflk_roundf(fn(x, ctx) * inverse_scale) + (float)out_zp;
        int32_t v;
        if (!(r == r))
            v = -128;
        else if (r >= 127.0f)
            v = 127;
        else if (r <= -128.0f)
            v = -128;
        else
            v = (int32_t)r;
        lut[q + 128] = (int8_t)v;
    }
}

static int32_t clz32(uint32_t v)
{
    int32_t n = 0;
    if (!v)
        return 32;
    while (!(v & 0x80000000u)) {
        v <<= 1;
        n++;
    }
    return n;
}

/* saturating x * 2^e for e > 0 (gemmlowp SaturatingRoundingMultiplyByPOT) */
static int32_t sat_pot(int32_t x, int32_t e)
{
    const int32_t lim = (int32_t)(INT32_MAX >> e);
    if (x > lim)
        return INT32_MAX;
    if (x < -lim - 1)
        return INT32_MIN;
    return (int32_t)((uint32_t)x << e);
}

/* GetInvSqrtQuantizedMultiplierExp: 1/sqrt(v) as a Q0.31 multiplier and a
 * shift, by five Newton-Raphson steps x <- 1.5x - (v/2)x^3 in Q3.28 on v
 * normalized to [2^27, 2^29), times sqrt(2)/2; v <= 1 gives the largest
 * multiplier with shift 0. The shift is then scaled by reverse_shift. */
void tflk_inv_sqrt_qm(int32_t v, int32_t reverse_shift, int32_t *mult, int32_t *shift)
{
    if (v <= 1) {
        *mult = INT32_MAX;
        *shift = 0;
        return;
    }
    int32_t sh = 11;
    while (v >= (1 << 29)) {
        v /= 4;
        sh++;
    }
    const int32_t pairs = (clz32((uint32_t)v) - 1) / 2 - 1;
    sh -= pairs;
    v = (int32_t)((uint32_t)v << (2 * pairs));
    const int32_t in_q3 = v >> 1;
    const int32_t half_in = tflk_rdivpot(in_q3, 1);
    const int32_t half_three = (1 << 28) + (1 << 27);
    int32_t x = 1 << 28; /* 1.0 in Q3.28 */
    for (int i = 0; i < 5; i++) {
        /* Q3 * Q3 = Q6, * Q3 = Q9: back to Q3 is a saturating << 6 */
        const int32_t x3 = sat_pot(tflk_srdhm(tflk_srdhm(x, x), x), 6);
        /* gemmlowp's FixedPoint subtraction wraps; Q6 back to Q3: << 3 */
        const int32_t d = (int32_t)((uint32_t)tflk_srdhm(half_three, x) - (uint32_t)tflk_srdhm(half_in, x3));
        x = sat_pot(d, 3);
    }
    x = tflk_srdhm(x, 1518500250); /* sqrt(2)/2 in Q0.31 */
    if (sh < 0) {
        x = (int32_t)((uint32_t)x << -sh);
        sh = 0;
    }
    *mult = x;
    *shift = sh * reverse_shift;
}

int32_t tflk_rsqrt_s8(const tflk_rsqrt8 *p, int32_t q)
{
    const int32_t v = q - p->in_zp;
    if (v == 0) /* TFLite: "any value close to 0 represents the max output value" */
        return 127;
    int32_t m, s;
    tflk_inv_sqrt_qm(v, -1, &m, &s);
    /* 2^20 / sqrt(v) in integer, then times 1 / (sqrt(in_scale) * out_scale) */
    const int32_t data = tflk_mul_by_qm(1, m, s + 20);
    return tflk_clampi(tflk_mul_by_qm(data, p->mult, p->shift - 20) + p->out_zp, -128, 127);
}

int32_t tflk_sqdiff_s8(const tflk_sqdiff8 *p, int32_t a, int32_t b)
{
    /* left shift 7: 255^2 * 2^14 still fits in int32 */
    const int32_t sa = tflk_mul_by_qm((a - p->zp1) * (1 << 7), p->mult1, p->shift1);
    const int32_t sb = tflk_mul_by_qm((b - p->zp2) * (1 << 7), p->mult2, p->shift2);
    const int32_t d = sa - sb;
    return tflk_clampi(tflk_mul_by_qm(d * d, p->out_mult, p->out_shift) + p->out_zp, -128, 127);
}

