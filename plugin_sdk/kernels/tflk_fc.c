/* tflk_fc: FULLY_CONNECTED, y[b][u] = act(sum_k x[b][k] w[u][k] + bias[u]). */
#include "tflk.h"

void tflk_fc_s8(const tflk_fc *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y)
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
