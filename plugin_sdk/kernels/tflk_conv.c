/*
 * tflk_conv: CONV_2D (OHWI filter, grouped when the filter has fewer input
 * channels than the input) and DEPTHWISE_CONV_2D ([1, KH, KW, OC] filter,
 * channel multiplier OC / IC), NHWC.
 */
#include "tflk.h"

void tflk_conv_s8(const tflk_conv *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y)
{
    const int32_t IH = p->ih, IW = p->iw, IC = p->ic, OH = p->oh, OW = p->ow, OC = p->oc, KH = p->kh, KW = p->kw;
    const int32_t FIC = p->fic;
    const int32_t groups = p->depthwise ? IC : IC / FIC;
    const int32_t oc_per_group = OC / groups;
    for (int32_t bn = 0; bn < p->n; bn++)
        for (int32_t oy = 0; oy < OH; oy++)
            for (int32_t ox = 0; ox < OW; ox++) {
                const int32_t iy0 = oy * p->sh - p->pt, ix0 = ox * p->sw - p->pl;
                int8_t *yp = y + ((bn * OH + oy) * OW + ox) * OC;
                for (int32_t oc = 0; oc < OC; oc++) {
                    const int32_t g = oc / oc_per_group;
                    uint32_t acc = 0;
                    for (int32_t ky = 0; ky < KH; ky++) {
                        const int32_t iy = iy0 + ky * p->dh;
                        if (iy < 0 || iy >= IH)
                            continue;
                        for (int32_t kx = 0; kx < KW; kx++) {
                            const int32_t ix = ix0 + kx * p->dw;
                            if (ix < 0 || ix >= IW)
                                continue;
                            const int8_t *xp = x + ((bn * IH + iy) * IW + ix) * IC;
                            if (p->depthwise) {
                                acc += (uint32_t)(((int32_t)xp[g] + p->in_off) * w[(ky * KW + kx) * OC + oc]);
                            } else {
                                const int8_t *wp = w + ((oc * KH + ky) * KW + kx) * FIC;
                                const int8_t *xg = xp + g * FIC;
                                for (int32_t ic = 0; ic < FIC; ic++)
                                    acc += (uint32_t)(((int32_t)xg[ic] + p->in_off) * wp[ic]);
                            }
                        }
                    }
                    if (bias)
                        acc += (uint32_t)bias[oc];
                    const int32_t c = p->per_channel ? oc : 0;
                    int32_t r = tflk_mul_by_qm((int32_t)acc, p->mult[c], p->shift[c]) + p->out_zp;
                    yp[oc] = (int8_t)tflk_clampi(r, p->lo, p->hi);
                }
            }
}

void tflk_conv_f32(const tflk_conv *p, const float *x, const float *w, const float *bias, float *y)
{
    const int32_t IH = p->ih, IW = p->iw, IC = p->ic, OH = p->oh, OW = p->ow, OC = p->oc, KH = p->kh, KW = p->kw;
    const int32_t FIC = p->fic;
    const int32_t groups = p->depthwise ? IC : IC / FIC;
    const int32_t oc_per_group = OC / groups;
    for (int32_t bn = 0; bn < p->n; bn++)
        for (int32_t oy = 0; oy < OH; oy++)
            for (int32_t ox = 0; ox < OW; ox++) {
                const int32_t iy0 = oy * p->sh - p->pt, ix0 = ox * p->sw - p->pl;
                float *yp = y + ((bn * OH + oy) * OW + ox) * OC;
                for (int32_t oc = 0; oc < OC; oc++) {
                    const int32_t g = oc / oc_per_group;
                    float acc = bias ? bias[oc] : 0.0f;
                    for (int32_t ky = 0; ky < KH; ky++) {
                        const int32_t iy = iy0 + ky * p->dh;
                        if (iy < 0 || iy >= IH)
                            continue;
                        for (int32_t kx = 0; kx < KW; kx++) {
                            const int32_t ix = ix0 + kx * p->dw;
                            if (ix < 0 || ix >= IW)
                                continue;
                            const float *xp = x + ((bn * IH + iy) * IW + ix) * IC;
                            if (p->depthwise) {
                                acc += xp[g] * w[(ky * KW + kx) * OC + oc];
                            } else {
                                const float *wp = w + ((oc * KH + ky) * KW + kx) * FIC;
                                const float *xg = xp + g * FIC;
                                for (int32_t ic = 0; ic < FIC; ic++)
                                    acc += xg[ic] * wp[ic];
                            }
                        }
                    }
                    yp[oc] = tflk_act_apply(&p->act, acc);
                }
            }
}
