/*
 * tflk_softmax: SOFTMAX over the last axis. fp32 with tflk_expf; int8 in
 * TFLite Micro's fixed point (gemmlowp exp on negative values and
 * reciprocal, input differences scaled by beta * input_scale in Q5.26) when
 * the output has scale 1/256 and zero point -128 (the gemmlowp functions of
 * tflk_fixed.c), else through fp32.
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
                sum += tflk_rdivpot(tflk_exp_on_negative(scaled, 5), 12);
            }
        }
        int32_t bits_over_unit;
        int32_t shifted_scale = tflk_get_reciprocal(sum, 12, &bits_over_unit);
        for (int32_t c = 0; c < depth; c++) {
            int32_t diff = (int32_t)x[c] - mx;
            if (diff >= p->diff_min) {
                int32_t scaled = tflk_srdhm((int32_t)((uint32_t)diff << p->left_shift), p->mult);
                int32_t e = tflk_exp_on_negative(scaled, 5);
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
