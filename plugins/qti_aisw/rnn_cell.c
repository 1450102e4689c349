/* GRU / LSTM direction with explicit state (see rnn_cell.h). */
#include "rnn_cell.h"

#include "switchyard/sy_sdk.h"

#include <math.h>
#include <string.h>

static inline float sigm(float x) { return x >= 0 ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x)); }

static inline float clipv(float clip, float v)
{
    if (clip > 0)
        return v < -clip ? -clip : (v > clip ? clip : v);
    return v;
}

size_t qrnn_scratch_floats(const qrnn_cfg *c, int64_t seq, int64_t batch)
{
    int64_t gh = (int64_t)c->kind * c->hidden;
    return (size_t)(seq * batch * gh + batch * gh + 2 * c->hidden + 16);
}

void qrnn_dir(const qrnn_cfg *c, bool reverse, const float *x, int64_t seq, int64_t batch, const float *W,
              const float *R, const float *B, const float *P, const int64_t *lens, float *h, float *cst, float *y,
              int64_t y_step, float *scratch)
{
    int64_t hd = c->hidden, gh = (int64_t)c->kind * hd, in = c->input;
    float *xw = scratch, *hr = xw + seq * batch * gh, *tmp = hr + batch * gh;
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
            const float *g = xw + (t * batch + b) * gh;
            const float *hrb = hr + b * gh;
            float *hb = h + b * hd;
#define WB(j) (Wb ? Wb[j] : 0.0f)
#define RB(j) (Rb ? Rb[j] : 0.0f)
            if (c->kind == QRNN_LSTM) {
                float *cb = cst + b * hd;
                for (int64_t k = 0; k < hd; k++) {
                    float ig = g[k] + WB(k) + hrb[k] + RB(k);
                    float og = g[hd + k] + WB(hd + k) + hrb[hd + k] + RB(hd + k);
                    float fg = g[2 * hd + k] + WB(2 * hd + k) + hrb[2 * hd + k] + RB(2 * hd + k);
                    float cg = g[3 * hd + k] + WB(3 * hd + k) + hrb[3 * hd + k] + RB(3 * hd + k);
                    float cprev = cb[k];
                    if (P) {
                        ig += P[k] * cprev;
                        fg += P[2 * hd + k] * cprev;
                    }
                    float iv = sigm(clipv(c->clip, ig));
                    float fv = c->input_forget ? 1.0f - iv : sigm(clipv(c->clip, fg));
                    float cv = tanhf(clipv(c->clip, cg));
                    float cn = fv * cprev + iv * cv;
                    if (P)
                        og += P[hd + k] * cn;
                    float ov = sigm(clipv(c->clip, og));
                    cb[k] = cn;
                    tmp[k] = ov * tanhf(cn);
                }
                memcpy(hb, tmp, (size_t)hd * sizeof(float));
            } else {
                float *rg = tmp, *hh = tmp + hd;
                for (int64_t k = 0; k < hd; k++)
                    rg[k] = sigm(clipv(c->clip, g[hd + k] + WB(hd + k) + hrb[hd + k] + RB(hd + k)));
                const float *Rh = R + 2 * hd * hd;
                for (int64_t k = 0; k < hd; k++) {
                    float pre = g[2 * hd + k] + WB(2 * hd + k);
                    if (c->lbr) {
                        pre += rg[k] * (hrb[2 * hd + k] + RB(2 * hd + k));
                    } else {
                        float acc = 0;
                        for (int64_t q = 0; q < hd; q++)
                            acc += rg[q] * hb[q] * Rh[k * hd + q];
                        pre += acc + RB(2 * hd + k);
                    }
                    hh[k] = pre;
                }
                for (int64_t k = 0; k < hd; k++) {
                    float z = sigm(clipv(c->clip, g[k] + WB(k) + hrb[k] + RB(k)));
                    float ht = tanhf(clipv(c->clip, hh[k]));
                    hb[k] = (1.0f - z) * ht + z * hb[k];
                }
            }
#undef WB
#undef RB
            if (y)
                memcpy(y + (t * y_step + b) * hd, hb, (size_t)hd * sizeof(float));
        }
    }
}
