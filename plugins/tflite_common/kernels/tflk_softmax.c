/*
 * tflk_softmax: SOFTMAX over the last axis. fp32 with tflk_expf; int8 in
 * TFLite Micro's fixed point (gemmlowp exp on negative values and
 * reciprocal, input differences scaled by beta * input_scale in Q5.26) when
 * the output has scale 1/256 and zero point -128, else through fp32.
 */
#include "tflk.h"

#include <math.h> /* INFINITY only: no libm call */

void tflk_softmax_f32(const tflk_softmax *p, const float *x, float *y)
{
    const int32_t d = p->depth;
    for (int32_t r = 0; r < p->rows; r++) {
        const float *xr = x + r * d;
        float *yr = y + r * d;
        float mx = -INFINITY;
        for (int32_t c = 0; c < d; c++)
            mx = xr[c] > mx ? xr[c] : mx;
        float sum = 0.0f;
        for (int32_t c = 0; c < d; c++)
            sum += tflk_expf((xr[c] - mx) * p->beta);
        for (int32_t c = 0; c < d; c++)
            yr[c] = tflk_expf((xr[c] - mx) * p->beta) / sum;
    }
}

/* saturating x * 2^e for e > 0 */
static int32_t sat_shl(int32_t x, int e)
{
    int32_t threshold = (int32_t)((UINT32_C(1) << (31 - e)) - 1u);
    if (x > threshold)
        return INT32_MAX;
    if (x < -threshold)
        return INT32_MIN;
    return (int32_t)((uint32_t)x << e);
}

/* exp(a) for a in [-1/4, 0), Q0.31 in and out */
static int32_t exp_quarter(int32_t a)
{
    const int32_t constant_term = 1895147668; /* exp(-1/8) */
    const int32_t constant_1_over_3 = 715827883;
    int32_t x = a + (1 << 28); /* a + 1/8 */
    int32_t x2 = tflk_srdhm(x, x);
    int32_t x3 = tflk_srdhm(x2, x);
    int32_t x4 = tflk_srdhm(x2, x2);
    int32_t x4_over_4 = tflk_rdivpot(x4, 2);
    int32_t poly = tflk_rdivpot(tflk_srdhm(x4_over_4 + x3, constant_1_over_3) + x2, 1);
    return constant_term + tflk_srdhm(constant_term, x + poly);
}

/* exp of a <= 0 in Q5.26, result Q0.31 */
static int32_t exp_on_negative_values(int32_t a)
{
    const int frac = 26;
    const int32_t one_quarter = 1 << (frac - 2);
    const int32_t mask = one_quarter - 1;
    int32_t a_mod_quarter_minus_one_quarter = (a & mask) - one_quarter;
    int32_t result = exp_quarter(sat_shl(a_mod_quarter_minus_one_quarter, 5));
    int32_t remainder = a_mod_quarter_minus_one_quarter - a;
    static const int32_t mults[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
    for (int e = -2; e <= 4; e++)
        if (remainder & (1 << (frac + e)))
            result = tflk_srdhm(result, mults[e + 2]);
    if (a == 0)
        result = INT32_MAX;
    return result;
}

/* 1 / (1 + a) for a in [0, 1), Q0.31 */
static int32_t one_over_one_plus_x(int32_t a)
{
    int64_t sum = (int64_t)a + INT32_MAX;
    int64_t sign = sum >= 0 ? 1 : -1;
    int32_t half_denominator = (int32_t)((sum + sign) / 2);
    const int32_t c48_17 = 1515870810, cneg32_17 = -1010580540; /* Q2.29 */
    int32_t x = c48_17 + tflk_srdhm(half_denominator, cneg32_17);
    for (int i = 0; i < 3; i++) {
        int32_t hdx = tflk_srdhm(half_denominator, x);
        int32_t one_minus = (1 << 29) - hdx;
        x = x + sat_shl(tflk_srdhm(x, one_minus), 2);
    }
    return sat_shl(x, 1);
}

static int clz32(uint32_t x)
{
    if (!x)
        return 32;
    int n = 0;
    while (!(x & 0x80000000u)) {
        x <<= 1;
        n++;
    }
    return n;
}

static int32_t get_reciprocal(int32_t x, int32_t integer_digits, int32_t *num_bits_over_unit)
{
    int headroom_plus_one = clz32((uint32_t)x);
    *num_bits_over_unit = integer_digits - headroom_plus_one;
    int32_t shifted_minus_one = (int32_t)(((uint32_t)x << (headroom_plus_one & 31)) - (UINT32_C(1) << 31));
    return one_over_one_plus_x(shifted_minus_one);
}

static void softmax_s8_fixed(const tflk_softmax *p, const int8_t *in, int8_t *out)
{
    const int32_t depth = p->depth;
    for (int32_t r = 0; r < p->rows; r++) {
        const int8_t *x = in + r * depth;
        int8_t *y = out + r * depth;
        int32_t mx = -128;
        for (int32_t c = 0; c < depth; c++)
            if (x[c] > mx)
                mx = x[c];
        int32_t sum = 0; /* Q12.19 */
        for (int32_t c = 0; c < depth; c++) {
            int32_t diff = (int32_t)x[c] - mx;
            if (diff >= p->diff_min) {
                int32_t scaled = tflk_srdhm((int32_t)((uint32_t)diff << p->left_shift), p->mult);
                sum += tflk_rdivpot(exp_on_negative_values(scaled), 12);
            }
        }
        int32_t bits_over_unit;
        int32_t shifted_scale = get_reciprocal(sum, 12, &bits_over_unit);
        for (int32_t c = 0; c < depth; c++) {
            int32_t diff = (int32_t)x[c] - mx;
            if (diff >= p->diff_min) {
                int32_t scaled = tflk_srdhm((int32_t)((uint32_t)diff << p->left_shift), p->mult);
                int32_t e = exp_on_negative_values(scaled);
                int32_t unsat = tflk_rdivpot(tflk_srdhm(shifted_scale, e), bits_over_unit + 31 - 8);
                y[c] = (int8_t)tflk_clampi(unsat - 128, -128, 127);
            } else {
                y[c] = -128;
            }
        }
    }
}

void tflk_softmax_s8(const tflk_softmax *p, const int8_t *x, int8_t *y, float *buf)
{
    if (p->fixed) {
        softmax_s8_fixed(p, x, y);
        return;
    }
    const int32_t d = p->depth;
    for (int32_t r = 0; r < p->rows; r++) {
        for (int32_t c = 0; c < d; c++)
            buf[c] = p->in_scale * (float)((int32_t)x[r * d + c] - p->in_zp);
        tflk_softmax row = *p;
        row.rows = 1;
        tflk_softmax_f32(&row, buf, buf);
        for (int32_t c = 0; c < d; c++)
            y[r * d + c] = (int8_t)tflk_quantize(buf[c], p->out_scale, p->out_zp, -128, 127);
    }
}
