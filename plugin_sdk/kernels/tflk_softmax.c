/*
 * tflk_softmax: SOFTMAX, the one float softmax body of the project (TFLite,
 * riscv_mcu, the ONNX cpu_ref, the emulators; each keeps its documented
 * arithmetic through tflk_softmax's exp_fn/store hooks and the choice of
 * float or double accumulation). fp32 with tflk_expf by default; int8 in
 * TFLite Micro's fixed point (gemmlowp exp on negative values and
 * reciprocal, input differences scaled by beta * input_scale in Q5.26) when
 * the output has scale 1/256 and zero point -128 (the gemmlowp functions of
 * tflk_fixed.c), else through fp32.
 */
#include "tflk.h"

#include <math.h> /* INFINITY only: no libm call */

/* every float softmax of the project: `acc64` picks the accumulation (a
 * constant at each call, so each entry point compiles to its own loop and a
 * package's --gc-sections drops the one it does not call) */
static inline void softmax_f32_rows(const tflk_softmax *p, const float *x, float *y, int acc64)
{
    const ptrdiff_t d = p->depth, in = p->inner > 0 ? p->inner : 1;
    float (*ex)(float) = p->exp_fn ? p->exp_fn : tflk_expf;
    for (ptrdiff_t r = 0; r < p->rows; r++)
        for (ptrdiff_t i = 0; i < in; i++) {
            const float *xr = x + r * d * in + i;
            float *yr = y + r * d * in + i;
            float mx = -INFINITY;
            for (ptrdiff_t c = 0; c < d; c++)
                mx = xr[c * in] > mx ? xr[c * in] : mx;
            if (acc64) {
                double sum = 0.0;
                for (ptrdiff_t c = 0; c < d; c++) {
                    float e = ex((xr[c * in] - mx) * p->beta);
                    sum += e;
                    yr[c * in] = e;
                }
                float inv = (float)(1.0 / sum);
                for (ptrdiff_t c = 0; c < d; c++)
                    yr[c * in] = p->store ? p->store(yr[c * in] * inv) : yr[c * in] * inv;
            } else {
                float sum = 0.0f;
                for (ptrdiff_t c = 0; c < d; c++)
                    sum += ex((xr[c * in] - mx) * p->beta);
                for (ptrdiff_t c = 0; c < d; c++) {
                    float v = ex((xr[c * in] - mx) * p->beta) / sum;
                    yr[c * in] = p->store ? p->store(v) : v;
                }
            }
        }
}

void tflk_softmax_f32(const tflk_softmax *p, const float *x, float *y) { softmax_f32_rows(p, x, y, 0); }
void tflk_softmax_f32_acc64(const tflk_softmax *p, const float *x, float *y) { softmax_f32_rows(p, x, y, 1); }

static inline void log_softmax_rows(const tflk_softmax *p, const float *x, float *y, int acc64)
{
    const ptrdiff_t d = p->depth, in = p->inner > 0 ? p->inner : 1;
    float (*ex)(float) = p->exp_fn ? p->exp_fn : tflk_expf;
    for (ptrdiff_t r = 0; r < p->rows; r++)
        for (ptrdiff_t i = 0; i < in; i++) {
            const float *xr = x + r * d * in + i;
            float *yr = y + r * d * in + i;
            float mx = -INFINITY;
            for (ptrdiff_t c = 0; c < d; c++)
                mx = xr[c * in] > mx ? xr[c * in] : mx;
            float ls;
            if (acc64) {
                double sum = 0.0;
                for (ptrdiff_t c = 0; c < d; c++)
                    sum += ex((xr[c * in] - mx) * p->beta);
                ls = (float)tflk_log_d(sum);
            } else {
                float sum = 0.0f;
                for (ptrdiff_t c = 0; c < d; c++)
                    sum += ex((xr[c * in] - mx) * p->beta);
                ls = tflk_logf(sum);
            }
            for (ptrdiff_t c = 0; c < d; c++)
                yr[c * in] = (xr[c * in] - mx) * p->beta - ls;
        }
}

void tflk_log_softmax_f32(const tflk_softmax *p, const float *x, float *y) { log_softmax_rows(p, x, y, 0); }
void tflk_log_softmax_f32_acc64(const tflk_softmax *p, const float *x, float *y) { log_softmax_rows(p, x, y, 1); }

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
