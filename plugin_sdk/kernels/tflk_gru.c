/*
 * tflk_gru: ONNX GRU in fp32 (layout 0), forward, reverse or bidirectional.
 * W [dirs, 3H, I], R [dirs, 3H, H] and B [dirs, 6H] are ONNX's own arrays
 * (gates z, r, h; B = Wb then Rb), so a package keeps them as the model
 * gave them. Per step and direction: z = sigmoid(x Wz + h Rz + Wbz + Rbz),
 * r likewise, the candidate n = tanh(x Wh + (r . h) Rh + Rbh + Wbh), or
 * with linear_before_reset tanh(x Wh + r . (h Rh + Rbh) + Wbh); then h =
 * (1 - z) n + z h. Each sum runs over the inputs, then the hidden state,
 * then the biases, in float; sigmoid and tanh are tflk_math.c's.
 */
#include "tflk.h"

size_t tflk_gru_scratch_floats(const tflk_gru *p)
{
    return (size_t)p->batch * (size_t)p->hidden + 3u * (size_t)p->hidden;
}

void tflk_gru_f32(const tflk_gru *p, const float *x, const float *w, const float *r, const float *b, const float *h0,
                  float *y, float *yh, float *scratch)
{
    const int32_t T = p->steps, B = p->batch, I = p->n_in, Hs = p->hidden;
    const size_t BH = (size_t)B * (size_t)Hs;
    float *h = scratch, *zg = h + BH, *rg = zg + Hs, *hr = rg + Hs;
    for (int32_t d = 0; d < p->dirs; d++) {
        const int32_t rev = p->dirs == 2 ? d : p->reverse;
        const float *wd = w + (size_t)d * 3 * Hs * I, *rd = r + (size_t)d * 3 * Hs * Hs;
        const float *wb = b ? b + (size_t)d * 6 * Hs : NULL, *rb = wb ? wb + 3 * Hs : NULL;
        for (size_t i = 0; i < BH; i++)
            h[i] = h0 ? h0[(size_t)d * BH + i] : 0.0f;
        for (int32_t s = 0; s < T; s++) {
            const int32_t t = rev ? T - 1 - s : s;
            for (int32_t bn = 0; bn < B; bn++) {
                const float *xt = x + ((size_t)t * B + bn) * I;
                float *hb = h + (size_t)bn * Hs;
                /* z, r and the recurrent part of the candidate from the old h */
                for (int32_t j = 0; j < Hs; j++) {
                    float az = 0.0f, ar = 0.0f, ah = 0.0f;
                    for (int32_t k = 0; k < I; k++) {
                        az += xt[k] * wd[(size_t)j * I + k];
                        ar += xt[k] * wd[((size_t)Hs + j) * I + k];
                    }
                    for (int32_t k = 0; k < Hs; k++) {
                        az += hb[k] * rd[(size_t)j * Hs + k];
                        ar += hb[k] * rd[((size_t)Hs + j) * Hs + k];
                    }
                    if (wb) {
                        az += wb[j] + rb[j];
                        ar += wb[Hs + j] + rb[Hs + j];
                    }
                    zg[j] = tflk_sigmoidf(az);
                    rg[j] = tflk_sigmoidf(ar);
                    if (p->lbr) { /* h Rh + Rbh, gated by r below */
                        for (int32_t k = 0; k < Hs; k++)
                            ah += hb[k] * rd[((size_t)2 * Hs + j) * Hs + k];
                        hr[j] = ah + (rb ? rb[2 * Hs + j] : 0.0f);
                    }
                }
                if (!p->lbr) /* (r . h) Rh + Rbh */
                    for (int32_t j = 0; j < Hs; j++) {
                        float ah = 0.0f;
                        for (int32_t k = 0; k < Hs; k++)
                            ah += rg[k] * hb[k] * rd[((size_t)2 * Hs + j) * Hs + k];
                        hr[j] = ah + (rb ? rb[2 * Hs + j] : 0.0f);
                    }
                for (int32_t j = 0; j < Hs; j++) {
                    float ax = 0.0f;
                    for (int32_t k = 0; k < I; k++)
                        ax += xt[k] * wd[((size_t)2 * Hs + j) * I + k];
                    const float n = tflk_tanhf(ax + (p->lbr ? rg[j] * hr[j] : hr[j]) + (wb ? wb[2 * Hs + j] : 0.0f));
                    hr[j] = (1.0f - zg[j]) * n + zg[j] * hb[j]; /* the new h, kept apart until every j has read the old */
                }
                for (int32_t j = 0; j < Hs; j++) {
                    hb[j] = hr[j];
                    y[(((size_t)t * p->dirs + d) * B + bn) * Hs + j] = hr[j];
                }
            }
        }
        if (yh)
            for (size_t i = 0; i < BH; i++)
                yh[(size_t)d * BH + i] = h[i];
    }
}
