/* Recurrent cell math shared by ops_recurrent and qti_aisw (sy_sdk.h). */
#include "switchyard/sy_sdk.h"

#include <math.h>
#include <string.h>

float sy_rnn_act_apply(const sy_rnn_act *f, float x)
{
    switch (f->kind) {
    case SY_RNN_ACT_SIGMOID: return x >= 0 ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x));
    case SY_RNN_ACT_TANH: return tanhf(x);
    case SY_RNN_ACT_RELU: return x > 0 ? x : 0;
    case SY_RNN_ACT_AFFINE: return f->alpha * x + f->beta;
    case SY_RNN_ACT_LEAKY_RELU: return x >= 0 ? x : f->alpha * x;
    case SY_RNN_ACT_THRESHOLDED_RELU: return x > f->alpha ? x : 0;
    case SY_RNN_ACT_SCALED_TANH: return f->alpha * tanhf(f->beta * x);
    case SY_RNN_ACT_HARD_SIGMOID: {
        float v = f->alpha * x + f->beta;
        return v < 0 ? 0 : (v > 1 ? 1 : v);
    }
    case SY_RNN_ACT_ELU: return x >= 0 ? x : f->alpha * expm1f(x);
    case SY_RNN_ACT_SOFTSIGN: return x / (1 + fabsf(x));
    default: return x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x));
    }
}

void sy_rnn_cell_defaults(sy_rnn_cell *c, sy_rnn_kind kind, int64_t hidden, int64_t input)
{
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->hidden = hidden;
    c->input = input;
    c->clip = -1.0f;
    c->act[0] = (sy_rnn_act){kind == SY_RNN_SIMPLE ? SY_RNN_ACT_TANH : SY_RNN_ACT_SIGMOID, 0, 0};
    c->act[1] = (sy_rnn_act){SY_RNN_ACT_TANH, 0, 0};
    c->act[2] = (sy_rnn_act){SY_RNN_ACT_TANH, 0, 0};
}

static inline float clipv(const sy_rnn_cell *c, float v)
{
    if (c->clip > 0)
        return v < -c->clip ? -c->clip : (v > c->clip ? c->clip : v);
    return v;
}

void sy_rnn_cell_step(const sy_rnn_cell *c, float *g, const float *hr, const float *R, const float *Rb,
                      const float *P, float *h, float *cst, float *tmp)
{
    int64_t hd = c->hidden;
    const sy_rnn_act *f = c->act;
#define RB(j) (Rb ? Rb[j] : 0.0f)
    if (c->kind == SY_RNN_SIMPLE) {
        for (int64_t k = 0; k < hd; k++)
            h[k] = sy_rnn_act_apply(&f[0], clipv(c, g[k] + hr[k] + RB(k)));
    } else if (c->kind == SY_RNN_LSTM) {
        for (int64_t k = 0; k < hd; k++) {
            float ig = g[k] + hr[k] + RB(k);
            float og = g[hd + k] + hr[hd + k] + RB(hd + k);
            float fg = g[2 * hd + k] + hr[2 * hd + k] + RB(2 * hd + k);
            float cg = g[3 * hd + k] + hr[3 * hd + k] + RB(3 * hd + k);
            float cprev = cst[k];
            if (P) {
                ig += P[k] * cprev;
                fg += P[2 * hd + k] * cprev;
            }
            float iv = sy_rnn_act_apply(&f[0], clipv(c, ig));
            float fv = c->input_forget ? 1.0f - iv : sy_rnn_act_apply(&f[0], clipv(c, fg));
            float cv = sy_rnn_act_apply(&f[1], clipv(c, cg));
            float cn = fv * cprev + iv * cv;
            if (P)
                og += P[hd + k] * cn;
            float ov = sy_rnn_act_apply(&f[0], clipv(c, og));
            cst[k] = cn;
            tmp[k] = ov * sy_rnn_act_apply(&f[2], cn);
        }
        memcpy(h, tmp, (size_t)hd * sizeof(float));
    } else { /* GRU: z, r, h */
        float *rg = tmp;
        for (int64_t k = 0; k < hd; k++)
            rg[k] = sy_rnn_act_apply(&f[0], clipv(c, g[hd + k] + hr[hd + k] + RB(hd + k)));
        if (!c->linear_before_reset) {
            /* (r . h) Rh^T */
            float *rh = tmp + hd;
            for (int64_t k = 0; k < hd; k++)
                rh[k] = rg[k] * h[k];
            const float *Rh = R + 2 * hd * hd;
            for (int64_t k = 0; k < hd; k++) {
                float acc = 0;
                for (int64_t q = 0; q < hd; q++)
                    acc += rh[q] * Rh[k * hd + q];
                g[2 * hd + k] += acc + RB(2 * hd + k);
            }
        } else {
            for (int64_t k = 0; k < hd; k++)
                g[2 * hd + k] += rg[k] * (hr[2 * hd + k] + RB(2 * hd + k));
        }
        for (int64_t k = 0; k < hd; k++) {
            float z = sy_rnn_act_apply(&f[0], clipv(c, g[k] + hr[k] + RB(k)));
            float ht = sy_rnn_act_apply(&f[1], clipv(c, g[2 * hd + k]));
            h[k] = (1.0f - z) * ht + z * h[k];
        }
    }
#undef RB
}

size_t sy_rnn_dir_scratch_floats(const sy_rnn_cell *c, int64_t seq, int64_t batch)
{
    int64_t gh = (int64_t)c->kind * c->hidden;
    return (size_t)(seq * batch * gh + batch * gh + gh + 2 * c->hidden + 16);
}

void sy_rnn_dir(const sy_rnn_cell *c, bool reverse, const float *x, int64_t seq, int64_t batch, const float *W,
                const float *R, const float *B, const float *P, const int64_t *lens, float *h, float *cst, float *y,
                int64_t y_step, float *scratch)
{
    int64_t hd = c->hidden, gh = (int64_t)c->kind * hd, in = c->input;
    float *xw = scratch, *hr = xw + seq * batch * gh, *g = hr + batch * gh, *tmp = g + gh;
    const float *Wb = B, *Rb = B ? B + gh : NULL;
    if (seq * batch > 0)
        sy_gemm_f32(false, true, seq * batch, gh, in, 1.0f, x, in, W, in, 0.0f, xw, gh);
    for (int64_t step = 0; step < seq; step++) {
        sy_gemm_f32(false, true, batch, gh, hd, 1.0f, h, hd, R, hd, 0.0f, hr, gh);
        for (int64_t b = 0; b < batch; b++) {
            int64_t len = lens ? lens[b] : seq;
            if (len > seq)
                len = seq;
            int64_t t = reverse ? len - 1 - step : step;
            if (step >= len || t < 0)
                continue;
            const float *xr = xw + (t * batch + b) * gh;
            for (int64_t j = 0; j < gh; j++)
                g[j] = xr[j] + (Wb ? Wb[j] : 0.0f);
            float *hb = h + b * hd;
            sy_rnn_cell_step(c, g, hr + b * gh, R, Rb, P, hb, c->kind == SY_RNN_LSTM ? cst + b * hd : NULL, tmp);
            if (y)
                memcpy(y + (t * y_step + b) * hd, hb, (size_t)hd * sizeof(float));
        }
    }
}
