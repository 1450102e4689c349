/*
 * qk_softmax: switchyard.quant QSoftmax and QLogSoftmax on 8-bit codes
 * (qk.h), the one body ops_quant and riscv_mcu run. The exponentials are
 * tflk_math.c's double-evaluated expf and the log its logf (no libm: the
 * same bits on the MCU), summed in float.
 */
#include "qk.h"
#include "tflk.h"

static int32_t ld(const void *p, int32_t dt, size_t i)
{
    return dt == QK_U8 ? (int32_t)((const uint8_t *)p)[i] : (int32_t)((const int8_t *)p)[i];
}

static int32_t row_max(const qk_softmax *p, const void *x, size_t base)
{
    int32_t mx = INT32_MIN;
    for (int32_t k = 0; k < p->len; k++) {
        int32_t v = ld(x, p->xdt, base + (size_t)k * (size_t)p->inner);
        mx = v > mx ? v : mx;
    }
    return mx;
}

/* y_k of one row from its exponentials e[] and their sum */
static void row_emit(const qk_softmax *p, const void *x, void *y, size_t base, int32_t mx, const float *e, float sum)
{
    const float lse = p->log ? tflk_logf(sum) : 0.0f;
    for (int32_t k = 0; k < p->len; k++) {
        const float d = (float)(ld(x, p->xdt, base + (size_t)k * (size_t)p->inner) - mx) * p->sx;
        int32_t q = qk_quantize1(p->log ? d - lse : e[k] / sum, p->sy, p->y_zp, p->lo, p->hi);
        size_t i = base + (size_t)k * (size_t)p->inner;
        if (p->ydt == QK_U8)
            ((uint8_t *)y)[i] = (uint8_t)q;
        else
            ((int8_t *)y)[i] = (int8_t)q;
    }
}

void qk_softmax_run(const qk_softmax *p, const void *x, void *y, float *e)
{
    for (int32_t o = 0; o < p->outer; o++)
        for (int32_t j = 0; j < p->inner; j++) {
            size_t base = (size_t)o * (size_t)p->len * (size_t)p->inner + (size_t)j;
            int32_t mx = row_max(p, x, base);
            float sum = 0.0f;
            for (int32_t k = 0; k < p->len; k++) { /* the zero point cancels in q - max */
                e[k] = tflk_expf_d((float)(ld(x, p->xdt, base + (size_t)k * (size_t)p->inner) - mx) * p->sx);
                sum += e[k];
            }
            row_emit(p, x, y, base, mx, e, sum);
        }
}

void qk_softmax_lut(float sx, float *lut)
{
    for (int32_t i = 0; i < 256; i++)
        lut[i] = tflk_expf_d((float)-i * sx);
}

void qk_softmax_run_lut(const qk_softmax *p, const float *lut, const void *x, void *y, float *e)
{
    for (int32_t o = 0; o < p->outer; o++)
        for (int32_t j = 0; j < p->inner; j++) {
            size_t base = (size_t)o * (size_t)p->len * (size_t)p->inner + (size_t)j;
            int32_t mx = row_max(p, x, base);
            float sum = 0.0f;
            for (int32_t k = 0; k < p->len; k++) { /* the same floats as tflk_expf_d((q - max) s_x) */
                e[k] = lut[mx - ld(x, p->xdt, base + (size_t)k * (size_t)p->inner)];
                sum += e[k];
            }
            row_emit(p, x, y, base, mx, e, sum);
        }
}
