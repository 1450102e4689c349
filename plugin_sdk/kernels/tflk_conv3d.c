/*
 * tflk_conv3d: CONV_3D, NDHWC input, filter [KD, KH, KW, IC, OC] (ONNX
 * Conv with a 5-D input through NDHWC copies). One sum per output starting
 * from its bias, over kd, kh, kw, ic in that order; taps outside the input
 * are skipped (zero padding), then the fused activation (fp32) or the
 * requantization (int8).
 *
 * int8 (the FULL_QUANT form of an fp32 model): TFLite's reference integer
 * conv semantics in three dimensions, as tflk_conv_s8's generic loop: an
 * int32 accumulator of (x + in_off) * w from the int32 bias, wrapping like
 * two's complement hardware (so the sum's order does not matter), then
 * tflk_rescale by the output channel's multiplier, + out_zp, clamped to
 * [lo, hi]. A padded tap adds nothing, as (x + in_off) = 0 there.
 */
#include "tflk.h"

/* The taps of output (bn, od, oh, ow) inside the input, kd, kh, kw in that
 * order; *t is the next tap's index in the filter ((kd * KH + kh) * KW + kw,
 * 0 to start). Writes the offsets of its input pixel's IC values and of its
 * filter slice [IC, OC]; 0 when no tap is left. Padded taps are
 * skipped: they add nothing. */
static int next_tap(const tflk_conv3d *p, int32_t bn, int32_t od, int32_t oh, int32_t ow, int32_t *t, size_t *xo,
                     size_t *wo)
{
    for (; *t < p->kd * p->kh * p->kw; (*t)++) {
        const int32_t kd = *t / (p->kh * p->kw), kh = *t / p->kw % p->kh, kw = *t % p->kw;
        const int32_t id = od * p->sd - p->pd + kd * p->dd, ih = oh * p->sh - p->pt + kh * p->dh,
                      iw = ow * p->sw - p->pl + kw * p->dw;
        if (id < 0 || id >= p->id || ih < 0 || ih >= p->ih || iw < 0 || iw >= p->iw)
            continue;
        *xo = ((((size_t)bn * p->id + id) * p->ih + ih) * p->iw + iw) * p->ic;
        *wo = (size_t)*t * p->ic * p->oc;
        (*t)++;
        return 1;
    }
    return 0;
}

void tflk_conv3d_f32(const tflk_conv3d *p, const float *x, const float *w, const float *bias, float *y)
{
    const int32_t IC = p->ic, OC = p->oc;
    for (int32_t bn = 0; bn < p->n; bn++)
        for (int32_t od = 0; od < p->od; od++)
            for (int32_t oh = 0; oh < p->oh; oh++)
                for (int32_t ow = 0; ow < p->ow; ow++)
                    for (int32_t oc = 0; oc < OC; oc++) {
                        float acc = bias ? bias[oc] : 0.0f;
                        size_t xo, wo;
                        for (int32_t t = 0; next_tap(p, bn, od, oh, ow, &t, &xo, &wo);) {
                            const float *xp = x + xo, *wp = w + wo + oc;
                            for (int32_t ic = 0; ic < IC; ic++)
                                acc += xp[ic] * wp[(size_t)ic * OC];
                        }
                        y[((((size_t)bn * p->od + od) * p->oh + oh) * p->ow + ow) * OC + oc] =
                            tflk_act_apply(&p->act, acc);
                    }
}

void tflk_conv3d_s8(const tflk_conv3d *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y)
{
    const int32_t IC = p->ic, OC = p->oc;
    for (int32_t bn = 0; bn < p->n; bn++)
        for (int32_t od = 0; od < p->od; od++)
            for (int32_t oh = 0; oh < p->oh; oh++)
                for (int32_t ow = 0; ow < p->ow; ow++)
                    for (int32_t oc = 0; oc < OC; oc++) {
                        uint32_t acc = bias ? (uint32_t)bias[oc] : 0u;
                        size_t xo, wo;
                        for (int32_t t = 0; next_tap(p, bn, od, oh, ow, &t, &xo, &wo);) {
                            const int8_t *xp = x + xo, *wp = w + wo + oc;
                            for (int32_t ic = 0; ic < IC; ic++)
                                acc += (uint32_t)(((int32_t)xp[ic] + p->in_off) * wp[(size_t)ic * OC]);
                        }
                        const int32_t c = p->per_channel ? oc : 0;
                        const int32_t v = tflk_rescale(p->rq_single, (int32_t)acc, p->mult[c], p->shift[c]);
                        y[((((size_t)bn * p->od + od) * p->oh + oh) * p->ow + ow) * OC + oc] =
                            (int8_t)tflk_clamp_zp(v, p->out_zp, p->lo, p->hi);
                    }
}
