/*
 * tflk_conv3d: CONV_3D (fp32), NDHWC input, filter [KD, KH, KW, IC, OC]
 * (ONNX Conv with a 5-D input through NDHWC copies). One sum per output
 * starting from its bias, over kd, kh, kw, ic in that order; taps outside
 * the input are skipped (zero padding), then the fused activation.
 */
#include "tflk.h"

void tflk_conv3d_f32(const tflk_conv3d *p, const float *x, const float *w, const float *bias, float *y)
{
    const int32_t IC = p->ic, OC = p->oc;
    for (int32_t bn = 0; bn < p->n; bn++)
        for (int32_t od = 0; od < p->od; od++)
            for (int32_t oh = 0; oh < p->oh; oh++)
                for (int32_t ow = 0; ow < p->ow; ow++)
                    for (int32_t oc = 0; oc < OC; oc++) {
                        float acc = bias ? bias[oc] : 0.0f;
                        for (int32_t kd = 0; kd < p->kd; kd++) {
                            const int32_t id = od * p->sd - p->pd + kd * p->dd;
                            if (id < 0 || id >= p->id)
                                continue;
                            for (int32_t kh = 0; kh < p->kh; kh++) {
                                const int32_t ih = oh * p->sh - p->pt + kh * p->dh;
                                if (ih < 0 || ih >= p->ih)
                                    continue;
                                for (int32_t kw = 0; kw < p->kw; kw++) {
                                    const int32_t iw = ow * p->sw - p->pl + kw * p->dw;
                                    if (iw < 0 || iw >= p->iw)
                                        continue;
                                    const float *xp = x + ((((size_t)bn * p->id + id) * p->ih + ih) * p->iw + iw) * IC;
                                    const float *wp = w + (((size_t)kd * p->kh + kh) * p->kw + kw) * IC * OC + oc;
                                    for (int32_t ic = 0; ic < IC; ic++)
                                        acc += xp[ic] * wp[(size_t)ic * OC];
                                }
                            }
                        }
                        y[((((size_t)bn * p->od + od) * p->oh + oh) * p->ow + ow) * OC + oc] =
                            tflk_act_apply(&p->act, acc);
                    }
}
