/* tflk_fc: FULLY_CONNECTED, y[b][u] = act(sum_k x[b][k] w[u][k] + bias[u]). */
#include "tflk.h"

/* The reference: acc = bias + sum (x + in_off) (w + w_off), int32 wrapping.
 * The fast path (w_off = 0, every int8 TFLite model's symmetric weights)
 * computes the same sum with the input offset added once per activation
 * and shared by 4 units (each weight is used once per batch row, so folding
 * off * sum w in would cost an add per weight instead), the depth loop
 * unrolled by 4 so the loads use immediate offsets, and each unit's
 * requantization decided once (tflk_rq). Other weight zero points take the
 * plain loop. */
static void fc_s8_generic(const tflk_fc *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y)
{
    const int32_t U = p->units, K = p->depth;
    for (int32_t i = 0; i < p->batches; i++) {
        const int8_t *xp = x + i * K;
        for (int32_t u = 0; u < U; u++) {
            const int8_t *wp = w + u * K;
            uint32_t acc = 0; /* int32 that wraps like the hardware */
            for (int32_t k = 0; k < K; k++)
                acc += (uint32_t)(((int32_t)xp[k] + p->in_off) * ((int32_t)wp[k] + p->w_off));
            if (bias)
                acc += (uint32_t)bias[u];
            int32_t c = p->per_channel ? u : 0;
            int32_t r = tflk_rescale(p->rq_single, (int32_t)acc, p->mult[c], p->shift[c]) + p->out_zp;
            y[i * U + u] = (int8_t)tflk_clampi(r, p->lo, p->hi);
        }
    }
}

#define FC_MAC(a, xv, wv) ((a) += (uint32_t)((xv) * (int32_t)(wv)))

/* 4 units (rows w0 + j K) of one batch row, unrolled by 2 (by 4, GCC's
 * rv32 -O2 loads all 20 values first and spills: 15 stack accesses per 16
 * MACs) */
TFLK_NOINLINE static void fc_dot4(const int8_t *xp, const int8_t *w0, int32_t K, int32_t off, uint32_t acc[4])
{
    const int8_t *w1 = w0 + K, *w2 = w1 + K, *w3 = w2 + K;
    uint32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int32_t k = 0;
#define FC_STEP(o)                                                                                                 \
    do {                                                                                                           \
        const int32_t xv = (int32_t)xp[o] + off;                                                                   \
        FC_MAC(a0, xv, w0[o]);                                                                                     \
        FC_MAC(a1, xv, w1[o]);                                                                                     \
        FC_MAC(a2, xv, w2[o]);                                                                                     \
        FC_MAC(a3, xv, w3[o]);                                                                                     \
    } while (0)
    for (; k + 2 <= K; k += 2, xp += 2, w0 += 2, w1 += 2, w2 += 2, w3 += 2) {
        FC_STEP(0);
        FC_STEP(1);
    }
    if (k < K)
        FC_STEP(0);
#undef FC_STEP
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}

/* fc_dot4 with a common depth KC as a constant: the 4 rows are w0 + j * KC
 * with immediate load offsets (3 * 640 + 3 < 2048), 2 pointers instead of
 * 5, so unrolling by 4 fits the registers */
typedef void (*fc_dot4_fn)(const int8_t *xp, const int8_t *w0, int32_t off, uint32_t acc[4]);
#define FC_DOT4_K(KC)                                                                                              \
    TFLK_NOINLINE static void fc_dot4_k##KC(const int8_t *xp, const int8_t *w0, int32_t off, uint32_t acc[4])      \
    {                                                                                                              \
        uint32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;                                                                   \
        for (const int8_t *xe = xp + (KC); xp != xe; xp += 4, w0 += 4) {                                           \
            FC_STEPK(KC, 0);                                                                                       \
            FC_STEPK(KC, 1);                                                                                       \
            FC_STEPK(KC, 2);                                                                                       \
            FC_STEPK(KC, 3);                                                                                       \
        }                                                                                                          \
        acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;                                                        \
    }
#define FC_STEPK(KC, o)                                                                                            \
    do {                                                                                                           \
        const int32_t xv = (int32_t)xp[o] + off;                                                                   \
        FC_MAC(a0, xv, w0[o]);                                                                                     \
        FC_MAC(a1, xv, w0[(KC) + (o)]);                                                                            \
        FC_MAC(a2, xv, w0[2 * (KC) + (o)]);                                                                        \
        FC_MAC(a3, xv, w0[3 * (KC) + (o)]);                                                                        \
    } while (0)
FC_DOT4_K(64)
FC_DOT4_K(128)
FC_DOT4_K(256)
FC_DOT4_K(640)
#undef FC_DOT4_K
#undef FC_STEPK

static fc_dot4_fn fc_dot4_for(int32_t K)
{
    switch (K) {
    case 64: return fc_dot4_k64;
    case 128: return fc_dot4_k128;
    case 256: return fc_dot4_k256;
    case 640: return fc_dot4_k640;
    default: return NULL;
    }
}

void tflk_fc_s8(const tflk_fc *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y)
{
    if (p->w_off != 0) {
        fc_s8_generic(p, x, w, bias, y);
        return;
    }
    const int32_t U = p->units, K = p->depth, off = p->in_off, zp = p->out_zp, lo = p->lo, hi = p->hi;
    const fc_dot4_fn dk = fc_dot4_for(K);
    tflk_rq rq0; /* per-tensor: decided once for the whole call */
    tflk_rq_init(&rq0, p->rq_single, p->mult[0], p->shift[0]);
    for (int32_t u0 = 0; u0 < U;) {
        const int32_t nb = U - u0 >= 4 ? 4 : 1;
        tflk_rq rqc[4];
        const tflk_rq *rq[4] = {&rq0, &rq0, &rq0, &rq0};
        for (int32_t j = 0; j < nb && p->per_channel; j++) {
            tflk_rq_init(&rqc[j], p->rq_single, p->mult[u0 + j], p->shift[u0 + j]);
            rq[j] = &rqc[j];
        }
        for (int32_t i = 0; i < p->batches; i++) {
            const int8_t *xp = x + i * K;
            const int8_t *w0 = w + u0 * K;
            uint32_t acc[4];
            if (nb == 4) {
                if (dk)
                    dk(xp, w0, off, acc);
                else
                    fc_dot4(xp, w0, K, off, acc);
            } else {
                uint32_t a = 0;
                for (int32_t k = 0; k < K; k++)
                    FC_MAC(a, (int32_t)xp[k] + off, w0[k]);
                acc[0] = a;
            }
            for (int32_t j = 0; j < nb; j++) {
                const uint32_t t = acc[j] + (bias ? (uint32_t)bias[u0 + j] : 0u);
                const int32_t r = tflk_rq_apply(rq[j], (int32_t)t) + zp;
                y[i * U + u0 + j] = (int8_t)tflk_clampi(r, lo, hi);
            }
        }
        u0 += nb;
    }
}

void tflk_fc_f32(const tflk_fc *p, const float *x, const float *w, const float *bias, float *y)
{
    const int32_t U = p->units, K = p->depth;
    for (int32_t i = 0; i < p->batches; i++) {
        const float *xp = x + i * K;
        for (int32_t u = 0; u < U; u++) {
            const float *wp = w + u * K;
            float acc = 0.0f;
            for (int32_t k = 0; k < K; k++)
                acc += xp[k] * wp[k];
            if (bias)
                acc += bias[u];
            y[i * U + u] = tflk_act_apply(&p->act, acc);
        }
    }
}
