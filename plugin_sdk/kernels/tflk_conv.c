/*
 * tflk_conv: CONV_2D (OHWI filter, grouped when the filter has fewer input
 * channels than the input) and DEPTHWISE_CONV_2D ([1, KH, KW, OC] filter,
 * channel multiplier OC / IC), NHWC.
 */
#include "tflk.h"

/* The one loop nest of both dtypes: for each output pixel and channel, the
 * accumulator starts at the bias, takes MAC(acc, x, w) over the window that
 * lies inside the input (padding contributes nothing), and STORE(acc, oc)
 * gives the output value. int8 accumulates in uint32 (two's complement
 * wrap, so starting at the bias equals adding it last). */
#define TFLK_CONV_LOOP(XT, YT, ACCT, MAC, STORE)                                                                   \
    do {                                                                                                           \
        const int32_t IH = p->ih, IW = p->iw, IC = p->ic, OH = p->oh, OW = p->ow, OC = p->oc, KH = p->kh,          \
                      KW = p->kw, FIC = p->fic;                                                                    \
        const int32_t groups = p->depthwise ? IC : IC / FIC;                                                      \
        const int32_t oc_per_group = OC / groups;                                                                 \
        for (int32_t bn = 0; bn < p->n; bn++)                                                                     \
            for (int32_t oy = 0; oy < OH; oy++)                                                                   \
                for (int32_t ox = 0; ox < OW; ox++) {                                                             \
                    const int32_t iy0 = oy * p->sh - p->pt, ix0 = ox * p->sw - p->pl;                             \
                    YT *yp = y + ((bn * OH + oy) * OW + ox) * OC;                                                 \
                    for (int32_t oc = 0; oc < OC; oc++) {                                                         \
                        const int32_t g = oc / oc_per_group;                                                      \
                        ACCT acc = bias ? (ACCT)bias[oc] : (ACCT)0;                                               \
                        for (int32_t ky = 0; ky < KH; ky++) {                                                     \
                            const int32_t iy = iy0 + ky * p->dh;                                                  \
                            if (iy < 0 || iy >= IH)                                                               \
                                continue;                                                                         \
                            for (int32_t kx = 0; kx < KW; kx++) {                                                 \
                                const int32_t ix = ix0 + kx * p->dw;                                              \
                                if (ix < 0 || ix >= IW)                                                           \
                                    continue;                                                                     \
                                const XT *xp = x + ((bn * IH + iy) * IW + ix) * IC;                               \
                                if (p->depthwise) {                                                               \
                                    MAC(acc, xp[g], w[(ky * KW + kx) * OC + oc]);                                 \
                                } else {                                                                          \
                                    const XT *wp = w + ((oc * KH + ky) * KW + kx) * FIC;                          \
                                    const XT *xg = xp + g * FIC;                                                  \
                                    for (int32_t ic = 0; ic < FIC; ic++)                                          \
                                        MAC(acc, xg[ic], wp[ic]);                                                 \
                                }                                                                                 \
                            }                                                                                     \
                        }                                                                                         \
                        yp[oc] = STORE(acc, oc);                                                                  \
                    }                                                                                             \
                }                                                                                                 \
    } while (0)

#define MAC_S8(acc, xv, wv) ((acc) += (uint32_t)(((int32_t)(xv) + p->in_off) * (wv)))
#define STORE_S8(acc, oc)                                                                                          \
    (int8_t)tflk_clampi(tflk_rescale(p->rq_single, (int32_t)(acc), p->mult[p->per_channel ? (oc) : 0],             \
                                     p->shift[p->per_channel ? (oc) : 0]) + p->out_zp, p->lo, p->hi)
#define MAC_F32(acc, xv, wv) ((acc) += (xv) * (wv))
#define STORE_F32(acc, oc) tflk_act_apply(&p->act, (acc))

void tflk_conv_s8(const tflk_conv *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y)
{
    TFLK_CONV_LOOP(int8_t, int8_t, uint32_t, MAC_S8, STORE_S8);
}

void tflk_conv_f32(const tflk_conv *p, const float *x, const float *w, const float *bias, float *y)
{
    TFLK_CONV_LOOP(float, float, float, MAC_F32, STORE_F32);
}
