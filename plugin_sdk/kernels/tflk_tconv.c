/*
 * tflk_tconv: TRANSPOSE_CONV (and ONNX ConvTranspose through NHWC copies),
 * NHWC input, filter [OC, KH, KW, IC]. Each input pixel scatters its
 * products into the outputs it reaches (output = input * stride - pad +
 * kernel tap * dilation); float sums per (pixel, tap, channel) are added to
 * the output in that order, as cpu_ref's kernel did before it moved here.
 * int8 accumulates in a wrapping int32 scratch, adds the bias, requantizes
 * per output channel with TFLite Micro's double rounding and clamps.
 */
#include "tflk.h"

static void tconv_walk(const tflk_tconv *p, const void *xv, const void *wv, float *accf, int32_t *acci)
{
    const int32_t IH = p->ih, IW = p->iw, IC = p->ic, OH = p->oh, OW = p->ow, OC = p->oc, KH = p->kh, KW = p->kw;
    for (int32_t bn = 0; bn < p->n; bn++)
        for (int32_t iy = 0; iy < IH; iy++)
            for (int32_t ix = 0; ix < IW; ix++)
                for (int32_t ky = 0; ky < KH; ky++) {
                    const int32_t oy = iy * p->sh - p->pt + ky * p->dh;
                    if (oy < 0 || oy >= OH)
                        continue;
                    for (int32_t kx = 0; kx < KW; kx++) {
                        const int32_t ox = ix * p->sw - p->pl + kx * p->dw;
                        if (ox < 0 || ox >= OW)
                            continue;
                        const size_t yo = (((size_t)bn * OH + oy) * OW + ox) * OC;
                        const size_t xo = (((size_t)bn * IH + iy) * IW + ix) * IC;
                        for (int32_t oc = 0; oc < OC; oc++) {
                            const size_t wo = (((size_t)oc * KH + ky) * KW + kx) * IC;
                            if (accf) {
                                const float *xd = (const float *)xv + xo, *wd = (const float *)wv + wo;
                                float a = 0.0f;
                                for (int32_t ic = 0; ic < IC; ic++)
                                    a += xd[ic] * wd[ic];
                                accf[yo + oc] += a;
                            } else {
                                const int8_t *xd = (const int8_t *)xv + xo, *wd = (const int8_t *)wv + wo;
                                uint32_t a = 0;
                                for (int32_t ic = 0; ic < IC; ic++)
                                    a += (uint32_t)(((int32_t)xd[ic] + p->in_off) * (int32_t)wd[ic]);
                                acci[yo + oc] = (int32_t)((uint32_t)acci[yo + oc] + a);
                            }
                        }
                    }
                }
}

void tflk_tconv_f32(const tflk_tconv *p, const float *x, const float *w, const float *bias, float *y)
{
    const size_t total = (size_t)p->n * p->oh * p->ow * p->oc;
    for (size_t i = 0; i < total; i++)
        y[i] = 0.0f;
    tconv_walk(p, x, w, y, NULL);
    for (size_t i = 0; i < total; i++)
        y[i] = tflk_act_apply(&p->act, y[i] + (bias ? bias[i % (size_t)p->oc] : 0.0f));
}

void tflk_tconv_s8(const tflk_tconv *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y,
                   int32_t *acc)
{
    const size_t total = (size_t)p->n * p->oh * p->ow * p->oc;
    for (size_t i = 0; i < total; i++)
        acc[i] = 0;
    tconv_walk(p, x, w, NULL, acc);
    for (size_t i = 0; i < total; i++) {
        const int32_t oc = (int32_t)(i % (size_t)p->oc), c = p->per_channel ? oc : 0;
        int32_t v = (int32_t)((uint32_t)acc[i] + (uint32_t)(bias ? bias[oc] : 0));
        v = tflk_mul_by_qm(v, p->mult[c], p->shift[c]) + p->out_zp;
        y[i] = (int8_t)tflk_clampi(v, p->lo, p->hi);
    }
}
