/*
 * tflk_lstm: UNIDIRECTIONAL_SEQUENCE_LSTM in fp32 (TFLite input numbering
 * is the caller's business). Quantized weights are dequantized where they
 * are read (scale * (q - zp), the same float the host would precompute), so
 * a package keeps them int8 in flash. Quantized outputs are quantized with
 * the output's parameters and the recurrent state is what the next step
 * reads: the dequantized output.
 */
#include "tflk.h"

float tflk_qt_at(const tflk_qtensor *t, int32_t i)
{
    float q;
    switch (t->dtype) {
    case TFLK_F32: return ((const float *)t->data)[i];
    case TFLK_S8: q = (float)((const int8_t *)t->data)[i]; break;
    case TFLK_S16: q = (float)((const int16_t *)t->data)[i]; break;
    default: q = (float)((const int32_t *)t->data)[i]; break;
    }
    if (!t->count)
        return q;
    int32_t c = t->count > 1 && t->row_len > 0 ? (i / t->row_len) % t->count : 0;
    int32_t zp = t->zps ? t->zps[c] : 0;
    /* (q - zp) is exact in float for these integer widths */
    return t->scales[c] * (q - (float)zp);
}

size_t tflk_lstm_scratch_floats(const tflk_lstm *p)
{
    return (size_t)p->batch * (size_t)(p->n_out + p->n_cell) + 4u * (size_t)p->n_cell + (size_t)p->n_in;
}

static float clampf(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

void tflk_lstm_run(const tflk_lstm *p, const void *x, void *y, float *scratch)
{
    const int32_t C = p->n_cell, I = p->n_in, O = p->n_out, T = p->steps, B = p->batch;
    float *h = scratch, *c = h + B * O, *gates = c + B * C, *xin = gates + 4 * C;
    tflk_qtensor xt = p->x;
    xt.data = x;
    for (int32_t i = 0; i < B * O; i++)
        h[i] = tflk_qt_at(&p->h0, i);
    for (int32_t i = 0; i < B * C; i++)
        c[i] = tflk_qt_at(&p->c0, i);
    for (int32_t t = 0; t < T; t++)
        for (int32_t b = 0; b < B; b++) {
            int32_t xo = p->time_major ? (t * B + b) * I : (b * T + t) * I;
            for (int32_t k = 0; k < I; k++)
                xin[k] = tflk_qt_at(&xt, xo + k);
            float *hb = h + b * O, *cb = c + b * C;
            for (int g = 0; g < 4; g++) {
                if (g == 0 && p->cifg)
                    continue;
                for (int32_t j = 0; j < C; j++) {
                    float acc = p->b[g].data ? tflk_qt_at(&p->b[g], j) : 0.0f;
                    for (int32_t k = 0; k < I; k++)
                        acc += tflk_qt_at(&p->wx[g], j * I + k) * xin[k];
                    for (int32_t k = 0; k < O; k++)
                        acc += tflk_qt_at(&p->wh[g], j * O + k) * hb[k];
                    gates[g * C + j] = acc;
                }
            }
            for (int32_t j = 0; j < C; j++) {
                float fg = gates[C + j] + (p->peep[1].data ? tflk_qt_at(&p->peep[1], j) * cb[j] : 0.0f);
                float ig = p->cifg ? 0.0f : gates[j] + (p->peep[0].data ? tflk_qt_at(&p->peep[0], j) * cb[j] : 0.0f);
                fg = tflk_sigmoidf(fg);
                ig = p->cifg ? 1.0f - fg : tflk_sigmoidf(ig);
                float cg = tflk_act_apply(&p->act, gates[2 * C + j]);
                float cn = fg * cb[j] + ig * cg;
                if (p->cell_clip > 0)
                    cn = clampf(cn, -p->cell_clip, p->cell_clip);
                cb[j] = cn;
            }
            float *hn = gates; /* reuse: the cell's output before projection */
            for (int32_t j = 0; j < C; j++) {
                float og = tflk_sigmoidf(gates[3 * C + j] +
                                         (p->peep[2].data ? tflk_qt_at(&p->peep[2], j) * cb[j] : 0.0f));
                hn[j] = og * tflk_act_apply(&p->act, cb[j]);
            }
            if (p->proj) {
                for (int32_t k = 0; k < O; k++) {
                    float acc = p->pb.data ? tflk_qt_at(&p->pb, k) : 0.0f;
                    for (int32_t j = 0; j < C; j++)
                        acc += tflk_qt_at(&p->pw, k * C + j) * hn[j];
                    if (p->proj_clip > 0)
                        acc = clampf(acc, -p->proj_clip, p->proj_clip);
                    hb[k] = acc;
                }
            } else {
                for (int32_t k = 0; k < O; k++)
                    hb[k] = hn[k];
            }
            int32_t yo = p->time_major ? (t * B + b) * O : (b * T + t) * O;
            for (int32_t k = 0; k < O; k++) {
                if (p->y_dtype == TFLK_F32) {
                    ((float *)y)[yo + k] = hb[k];
                    continue;
                }
                int32_t q = tflk_quantize(hb[k], p->y_scale, p->y_zp, p->y_lo, p->y_hi);
                if (p->y_dtype == TFLK_S8)
                    ((int8_t *)y)[yo + k] = (int8_t)q;
                else
                    ((int16_t *)y)[yo + k] = (int16_t)q;
                hb[k] = p->y_scale * (float)(q - p->y_zp);
            }
        }
}
