/*
 * tflk_lstm8: UNIDIRECTIONAL_SEQUENCE_LSTM in integers, as TFLite Micro's
 * kernel runs an int8 model (lstm_eval: 8-bit activations and weights,
 * int32 biases, int16 cell state). Per step and gate: FC(input) with the
 * gate bias and FC(output state) without, each requantized to int16 Q3.12
 * and clamped, a saturating int16 sum, then sigmoid or tanh to Q0.15
 * (tflk_fixed.c). cell = f*cell + i*g in the cell's scale (each product
 * requantized and clamped to int16, the sum saturating, then the optional
 * clip); hidden = tanh(cell) * o requantized to int8. The output at each
 * step is the new hidden state. Each run starts from h0/c0 when given, else
 * as TFLite Micro resets its variable tensors: the hidden state at its zero
 * point (a real 0) and the cell at 0. No state is carried across runs.
 */
#include "tflk.h"

size_t tflk_lstm8_scratch_bytes(const tflk_lstm8 *p)
{
    size_t s = (size_t)p->batch * (size_t)p->n_cell;
    /* int16: cell state (batch rows) and four gate rows; int8: hidden state */
    return (s + 4u * (size_t)p->n_cell) * sizeof(int16_t) + s;
}

static int16_t sat16(int32_t v) { return (int16_t)tflk_clampi(v, -32768, 32767); }

/* one gate row: activation(FC_x(x) + FC_h(h)) in Q0.15 */
static void gate(const tflk_lstm8 *p, int g, const int8_t *x, const int8_t *h, int16_t *out, int16_t *tmp)
{
    const int32_t C = p->n_cell, I = p->n_in;
    const int8_t *wx = p->wx[g], *wh = p->wh[g];
    for (int32_t j = 0; j < C; j++) {
        /* int32 wrapping, as the other integer kernels (tflk_fc.c): a
         * model's bias and zero points may sit anywhere in int32, and a
         * signed overflow would be undefined */
        uint32_t acc = 0;
        for (int32_t k = 0; k < I; k++)
            acc += (uint32_t)(int32_t)wx[j * I + k] * ((uint32_t)(int32_t)x[k] + (uint32_t)p->x_off);
        if (p->b[g])
            acc += (uint32_t)p->b[g][j];
        out[j] = sat16(tflk_mul_by_qm((int32_t)acc, p->x_mult[g], p->x_shift[g]));
        acc = 0;
        for (int32_t k = 0; k < C; k++)
            acc += (uint32_t)(int32_t)wh[j * C + k] * ((uint32_t)(int32_t)h[k] + (uint32_t)p->h_off);
        tmp[j] = sat16(tflk_mul_by_qm((int32_t)acc, p->h_mult[g], p->h_shift[g]));
        out[j] = sat16((int32_t)out[j] + (int32_t)tmp[j]);
    }
    /* Q3.12 in: the LUT functions' power-of-two case with no extra shift */
    if (g == 2 && !p->cell_gate_sigmoid)
        tflk_tanh_s16(0, 0, out, out, C);
    else
        tflk_sigmoid_s16(0, 0, out, out, C);
}

void tflk_lstm8_run(const tflk_lstm8 *p, const int8_t *x, int8_t *y, void *scratch)
{
    const int32_t C = p->n_cell, I = p->n_in, T = p->steps, B = p->batch;
    int16_t *cell = scratch;
    int16_t *fg = cell + B * C, *ig = fg + C, *cg = ig + C, *tmp = cg + C;
    int8_t *hid = (int8_t *)(tmp + C);
    for (int32_t i = 0; i < B * C; i++) {
        hid[i] = p->h0 ? p->h0[i] : (int8_t)p->h_zp;
        cell[i] = p->c0 ? p->c0[i] : 0;
    }
    for (int32_t t = 0; t < T; t++)
        for (int32_t b = 0; b < B; b++) {
            const int8_t *xr = x + (p->time_major ? (t * B + b) : (b * T + t)) * I;
            int8_t *h = hid + b * C;
            int16_t *c = cell + b * C;
            gate(p, 1, xr, h, fg, tmp);
            gate(p, 0, xr, h, ig, tmp);
            gate(p, 2, xr, h, cg, tmp);
            for (int32_t j = 0; j < C; j++) {
                int16_t fc = sat16(tflk_mul_by_qm((int32_t)fg[j] * c[j], p->fc_mult, p->fc_shift));
                int16_t ic = sat16(tflk_mul_by_qm((int32_t)ig[j] * cg[j], p->ic_mult, p->ic_shift));
                int32_t v = sat16((int32_t)fc + (int32_t)ic);
                if (p->cell_clip >= 0)
                    v = tflk_clampi(v, -p->cell_clip, p->cell_clip);
                c[j] = (int16_t)v;
            }
            gate(p, 3, xr, h, ig, tmp); /* the output gate reads the old hidden state */
            tflk_tanh_s16(p->cell_tanh_mult, p->cell_tanh_shift, c, fg, C);
            int8_t *yr = y + (p->time_major ? (t * B + b) : (b * T + t)) * C;
            for (int32_t j = 0; j < C; j++) {
                int32_t v = p->h_zp + tflk_mul_by_qm((int32_t)fg[j] * ig[j], p->oh_mult, p->oh_shift);
                h[j] = (int8_t)tflk_clampi(v, -128, 127);
                yr[j] = h[j];
            }
        }
}
