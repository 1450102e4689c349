/* int8 LOG_SOFTMAX as TFLite's reference_integer_ops::LogSoftmax (output
 * scale 16/256, zero point 127): the softmax's differences in Q5.26, the
 * sum of exps in Q12.19, its log in Q5.26 (TFLite's
 * log_x_for_x_greater_than_or_equal_to_1, a rational approximation around
 * sqrt(sqrt(2)) after splitting off the power of two), and the reverse
 * scaling that sends too-small differences to -128. */
#include "tflk.h"

static int32_t wadd(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
static int32_t wsub(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }

static int32_t leading_zeros(uint32_t x)
{
    int32_t n = 0;
    if (!x)
        return 32;
    while (!(x & UINT32_C(0x80000000))) {
        x <<= 1;
        n++;
    }
    return n;
}

static int32_t sat_i32(int64_t v) { return (int32_t)(v > INT32_MAX ? INT32_MAX : (v < INT32_MIN ? INT32_MIN : v)); }

/* x * 2^e, e >= 0, saturating (SaturatingRoundingMultiplyByPOTParam) */
static int32_t pot(int32_t x, int32_t e)
{
    if (e == 0)
        return x;
    int32_t limit = (int32_t)((INT64_C(1) << (31 - e)) - 1);
    if (x > limit)
        return INT32_MAX;
    if (x < -limit)
        return INT32_MIN;
    return (int32_t)((uint32_t)x << e);
}

/* log(x) for x >= 1; x in Q12.19, the result in Q5.26, accumulated in Q6.25 */
static int32_t log_q12_to_q5(int32_t x)
{
    enum { IN_BITS = 12, ACC_BITS = 6 };
    const int32_t log_2 = 1488522236, sqrt_sqrt_half = 1805811301, sqrt_half = 1518500250;
    const int32_t alpha_n = 117049297, alpha_d = 127690142, alpha_i = 1057819769, alpha_f = 638450708;
    const int32_t quarter = tflk_rdivpot(536870912, ACC_BITS);
    /* two candidate splits x = 2^k * r, r near sqrt(sqrt(2)); the one
     * with r nearer it (smaller r) is kept */
    int32_t hz_a = leading_zeros((uint32_t)x);
    int32_t r_a = pot(tflk_srdhm(pot(x, hz_a - 1), sqrt_half), 1);
    int32_t k_a = sat_i32((int64_t)pot(IN_BITS - hz_a, 31 - ACC_BITS) + quarter);
    int32_t z_b = tflk_srdhm(x, sqrt_half);
    int32_t hz_b = leading_zeros((uint32_t)z_b) - 1;
    int32_t r_b = pot(x, hz_b);
    int32_t k_b = sat_i32((int64_t)pot(IN_BITS - hz_b, 31 - ACC_BITS) - quarter);
    int32_t r = r_a < r_b ? r_a : r_b;
    int32_t k = k_a > k_b ? k_a : k_b;
    int64_t hs = (int64_t)r + sqrt_sqrt_half;
    int32_t p = (int32_t)((hs + (hs >= 0 ? 1 : -1)) / 2);
    int32_t q = wsub(r, sqrt_sqrt_half);
    q = wadd(q, q);
    int32_t q2 = tflk_srdhm(q, q);
    int32_t num = wadd(tflk_srdhm(q, r), tflk_srdhm(tflk_srdhm(q, q2), alpha_n));
    int32_t den = wadd(tflk_srdhm(p, wadd(wadd(alpha_i, q), tflk_srdhm(alpha_d, q2))), tflk_srdhm(alpha_f, q));
    int32_t recip = tflk_one_over_one_plus_x(den);
    int32_t acc = wadd(tflk_srdhm(k, log_2), tflk_srdhm(tflk_rdivpot(num, ACC_BITS), recip));
    return tflk_sat_shl(acc, 1);
}

void tflk_log_softmax_s8(const tflk_logsm8 *p, const int8_t *x, int8_t *y, int32_t rows, int32_t depth)
{
    for (int32_t r = 0; r < rows; r++) {
        const int8_t *xr = x + (int64_t)r * depth;
        int8_t *yr = y + (int64_t)r * depth;
        int32_t mx = -128;
        for (int32_t c = 0; c < depth; c++)
            mx = xr[c] > mx ? xr[c] : mx;
        int32_t sum = 0; /* Q12.19: safe for 2^12 terms */
        for (int32_t c = 0; c < depth; c++) {
            int32_t d = xr[c] - mx;
            if (d >= p->diff_min)
                sum = wadd(sum, tflk_rdivpot(tflk_exp_on_negative(tflk_mul_by_qm(d, p->mult, p->left_shift), 5), 12));
        }
        int32_t log_sum = log_q12_to_q5(sum);
        int32_t lim = tflk_mul_by_qm(wadd(log_sum, INT32_MIN), p->rev_mult, -p->rev_right_shift);
        int32_t cut = p->diff_min - 1 > lim ? p->diff_min - 1 : lim;
        for (int32_t c = 0; c < depth; c++) {
            int32_t d = xr[c] - mx;
            if (d > cut) {
                int32_t dq5 = tflk_mul_by_qm(d, p->mult, p->left_shift);
                yr[c] = (int8_t)tflk_clampi(tflk_rdivpot(wsub(dq5, log_sum), 31 - 5 - 4) + 127, -128, 127);
            } else {
                yr[c] = -128;
            }
        }
    }
}
