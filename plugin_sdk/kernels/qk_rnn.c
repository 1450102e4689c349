/* qk_rnn: the portable integer ONNX RNN (see qk_rnn.h).
 *
 * Why this shape:
 *   - the two products keep separate int32 accumulators because X and
 *     H_{t-1} have different scales; each is requantized (qk_rq_apply, the
 *     same ONNX or gemmlowp form as every switchyard.quant kernel) into one
 *     common fixed-point pre-activation whose unit s_p = A / 32768 is chosen
 *     per activation by the host (A = 8 for Tanh, 16 for Sigmoid: beyond
 *     that both are flat to far below an output step; for Relu A is where
 *     the output code saturates), so the sum, the clip and the table index
 *     are plain integer operations;
 *   - the activation is a 257-entry table of f at the 256 segment ends,
 *     computed once by the host with libm, read with linear interpolation:
 *     the segment is 1/16 for Tanh, and the interpolation error (h^2/8 * f'')
 *     stays below 0.05 of an int8 step, so host and MCU share the table and
 *     agree bit for bit without a libm on the MCU;
 *   - the recurrent state is the int8 H_t itself (quantized like Y), which
 *     is what an int8 RNN on an MCU keeps between steps.
 */
#include "qk_rnn.h"

static int32_t ldq(const void *p, int32_t dt, size_t i)
{
    return dt == QK_U8 ? (int32_t)((const uint8_t *)p)[i] : (int32_t)((const int8_t *)p)[i];
}
static void stq(void *p, int32_t dt, size_t i, int32_t v)
{
    if (dt == QK_U8)
        ((uint8_t *)p)[i] = (uint8_t)v;
    else
        ((int8_t *)p)[i] = (int8_t)v;
}

/* qk_rq_apply, with the accumulator first clamped where the gemmlowp form's
 * left shift would wrap: such values saturate the pre-activation anyway. */
static int32_t to_pre(const qk_rq *r, int64_t acc)
{
    if (r->mode != QK_RQ_ONNX && r->shift > 0) {
        int64_t lim = ((int64_t)1 << (31 - (r->shift > 30 ? 30 : r->shift))) - 1;
        acc = acc > lim ? lim : (acc < -lim ? -lim : acc);
    }
    return qk_rq_apply(r, acc);
}

int64_t qk_rnn_interp(const int32_t *lut, int32_t pre)
{
    int32_t u = (pre < -32768 ? -32768 : (pre > 32767 ? 32767 : pre)) + 32768; /* 0 .. 65535 */
    int32_t k = u >> 8, frac = u & 255;
    return (int64_t)lut[k] * 256 + (int64_t)(lut[k + 1] - lut[k]) * frac;
}

int64_t qk_rshift_even(int64_t v, int32_t s)
{
    /* floor without shifting a negative value, then half to even */
    int64_t d = (int64_t)1 << s, half = d >> 1;
    int64_t q = v >= 0 ? v / d : -((-v + d - 1) / d), rem = v - q * d;
    return q + ((rem > half || (rem == half && (q & 1))) ? 1 : 0);
}

int32_t qk_rnn_act(const int32_t *lut, int32_t pre, int32_t zp, int32_t lo, int32_t hi)
{
    int64_t q = qk_rshift_even(qk_rnn_interp(lut, pre), 16) + zp; /* units s_y / 65536 -> codes */
    return q < lo ? lo : (q > hi ? hi : (int32_t)q);
}

void qk_rnn_run(const qk_rnn *p, const void *x, const void *w, const void *r, const int32_t *lens, const void *h0,
                void *y, void *yh, int32_t *scratch)
{
    const int32_t H = p->hidden, I = p->input, B = p->batch, D = p->ndir, S = p->seq;
    int32_t *h = scratch, *hn = scratch + H;
    for (int32_t d = 0; d < D; d++) {
        const int32_t rev = D == 2 ? d == 1 : p->reverse != 0;
        const int32_t *lut = p->lut + (size_t)d * QK_RNN_LUT;
        for (int32_t b = 0; b < B; b++) {
            int32_t len = lens ? lens[b] : S;
            len = len < 0 ? 0 : (len > S ? S : len);
            int32_t first = 1;
            for (int32_t c = 0; c < H; c++)
                h[c] = p->y_zp; /* unused before step 0 reads initial_h or nothing */
            for (int32_t s = 0; s < len; s++) {
                int32_t t = rev ? len - 1 - s : s;
                for (int32_t c = 0; c < H; c++) {
                    size_t dc = (size_t)d * H + c;
                    int32_t wz = p->w_zp ? p->w_zp[p->n_wzp > 1 ? c : 0] : 0;
                    int32_t rz = p->r_zp ? p->r_zp[p->n_rzp > 1 ? c : 0] : 0;
                    uint32_t ax = p->bias ? (uint32_t)p->bias[dc] : 0u; /* wrapping, as the other kernels */
                    const size_t wrow = dc * (size_t)I, xrow = ((size_t)t * B + b) * (size_t)I;
                    for (int32_t i = 0; i < I; i++)
                        ax += (uint32_t)((ldq(x, p->xdt, xrow + i) - p->x_zp) * (ldq(w, p->wdt, wrow + i) - wz));
                    int32_t pre = to_pre(&p->rq_x[dc], (int32_t)ax);
                    const size_t rrow = dc * (size_t)H;
                    if (first && h0 && p->rq_h0) {
                        uint32_t ah = 0u;
                        const size_t hrow = ((size_t)d * B + b) * (size_t)H;
                        for (int32_t j = 0; j < H; j++)
                            ah += (uint32_t)((ldq(h0, p->h0dt, hrow + j) - p->h0_zp) * (ldq(r, p->rdt, rrow + j) - rz));
                        pre += to_pre(&p->rq_h0[dc], (int32_t)ah);
                    } else if (!first) {
                        uint32_t ah = 0u;
                        for (int32_t j = 0; j < H; j++)
                            ah += (uint32_t)((h[j] - p->y_zp) * (ldq(r, p->rdt, rrow + j) - rz));
                        pre += to_pre(&p->rq_h[dc], (int32_t)ah);
                    }
                    if (p->clip[d] > 0)
                        pre = pre > p->clip[d] ? p->clip[d] : (pre < -p->clip[d] ? -p->clip[d] : pre);
                    hn[c] = qk_rnn_act(lut, pre, p->y_zp, p->y_lo, p->y_hi);
                }
                for (int32_t c = 0; c < H; c++) {
                    h[c] = hn[c];
                    if (y)
                        stq(y, p->ydt, (((size_t)t * D + d) * B + b) * (size_t)H + c, hn[c]);
                }
                first = 0;
            }
            for (int32_t t = len; t < S && y; t++) /* steps past the sequence: Y = 0 */
                for (int32_t c = 0; c < H; c++)
                    stq(y, p->ydt, (((size_t)t * D + d) * B + b) * (size_t)H + c, p->y_zp);
            if (yh) /* a sequence of length 0 gives Y_h = 0 */
                for (int32_t c = 0; c < H; c++)
                    stq(yh, p->ydt, ((size_t)d * B + b) * (size_t)H + c, len ? h[c] : p->y_zp);
        }
    }
}
