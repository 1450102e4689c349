/* int8 HARD_SWISH as TFLite's reference kernel (reference_ops::HardSwish):
 * 16-bit fixed point, so a model gives TFLite's bits, including at the
 * exact .5 cases where rounding the real x * relu6(x + 3) / 6 would differ. */
#include "tflk.h"

/* gemmlowp's SaturatingRoundingDoublingHighMul on int16 */
static int16_t srdhm16(int16_t a, int16_t b)
{
    if (a == b && a == INT16_MIN)
        return INT16_MAX;
    int32_t ab = (int32_t)a * (int32_t)b;
    int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
    return (int16_t)((ab + nudge) / (1 << 15));
}

/* the same, truncating (SQDMULH): it cancels the bias of the rounding one */
static int16_t sdhm16(int16_t a, int16_t b)
{
    if (a == b && a == INT16_MIN)
        return INT16_MAX;
    return (int16_t)(((int32_t)a * (int32_t)b) / (1 << 15));
}

static int16_t sat_shl16(int16_t v, int32_t amount)
{
    int64_t r = (int64_t)v * ((int64_t)1 << amount);
    return (int16_t)(r > INT16_MAX ? INT16_MAX : (r < INT16_MIN ? INT16_MIN : r));
}

int16_t tflk_mult_to_q15(int32_t mult_q31)
{
    if (mult_q31 >= INT32_MAX - (1 << 15))
        return INT16_MAX;
    return (int16_t)((mult_q31 + (1 << 15)) >> 16);
}

void tflk_hswish_s8(const tflk_hswish8 *p, const int8_t *x, int8_t *y, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        int16_t v = (int16_t)(x[i] - p->in_zp);
        /* the input on the "hires" scale: 2^7 finer than the input's */
        int16_t hires = (int16_t)(v * (1 << 7));
        int16_t pre = srdhm16(hires, p->out_mult);
        /* the relu-ish factor: x rescaled so that 3.0 is 2^15, saturating,
         * then mapped from [-1, 1] to [0, 1] */
        int16_t r = hires;
        if (p->relu_shift > 0)
            r = sat_shl16(r, p->relu_shift - 1);
        r = srdhm16(r, p->relu_mult);
        if (p->relu_shift > 0)
            r = sat_shl16(r, 1);
        if (p->relu_shift < 0)
            r = (int16_t)tflk_rdivpot(r, -p->relu_shift);
        r = (int16_t)((r + (1 << 15)) >> 1);
        int32_t o = tflk_rdivpot(sdhm16(r, pre), -p->out_shift) + p->out_zp;
        y[i] = (int8_t)tflk_clampi(o, -128, 127);
    }
}
