/* qk_lstm: the portable integer LSTM with carried H and C (see qk_lstm.h).
 *
 * As qk_gru: separate int32 accumulators for X and H requantized into the
 * gate's pre-activation units, qk_rnn's interpolated tables, Q15 gates. What
 * is particular to the LSTM:
 *   - C has its own quantization (Y_c's), so the peepholes P (.) C are a
 *     fixed-point product per unit (P * s_c / s_p with 16 fraction bits)
 *     rather than a requantizer: P may be negative, and one int64 product
 *     per unit is exact;
 *   - C_t = f C_{t-1} + i c~ mixes in one int64 and rounds once to Y_c's
 *     codes, and h(C_t) reads that code (requantized into tanh units), so
 *     the state carried to the next run is exactly the Y_c emitted;
 *   - H_t = o h(C_t) is one Q15 x table product rounded once to Y's codes.
 */
#include "qk_lstm.h"

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
static int32_t to_pre(const qk_rq *r, int64_t acc)
{
    if (r->mode != QK_RQ_ONNX && r->shift > 0) { /* as qk_rnn: where gemmlowp's left shift would wrap */
        int64_t lim = ((int64_t)1 << (31 - (r->shift > 30 ? 30 : r->shift))) - 1;
        acc = acc > lim ? lim : (acc < -lim ? -lim : acc);
    }
    return qk_rq_apply(r, acc);
}
static int32_t clip_pre(int64_t pre, int32_t clip)
{
    if (clip > 0)
        return (int32_t)(pre > clip ? clip : (pre < -clip ? -clip : pre));
    return (int32_t)(pre > INT32_MAX ? INT32_MAX : (pre < INT32_MIN ? INT32_MIN : pre));
}
static int32_t gate_q15(const int32_t *lut, int32_t pre)
{
    int64_t v = qk_rshift_even(qk_rnn_interp(lut, pre), 16);
    return v < 0 ? 0 : (v > 32768 ? 32768 : (int32_t)v);
}
static int32_t sat(int64_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : (int32_t)v); }

/* pre-activation of gate row `row` (of 4H) of direction d at input row xrow */
static int32_t gate_pre(const qk_lstm *p, const void *x, const void *w, const void *r, const int32_t *hs, int32_t d,
                        int32_t row, size_t xrow)
{
    const int32_t H = p->hidden, I = p->input;
    const size_t dr = (size_t)d * 4 * H + row;
    int32_t wz = p->w_zp ? p->w_zp[p->n_wzp > 1 ? row : 0] : 0;
    int32_t rz = p->r_zp ? p->r_zp[p->n_rzp > 1 ? row : 0] : 0;
    uint32_t ax = p->bias_x ? (uint32_t)p->bias_x[dr] : 0u, ah = 0u; /* wrapping, as qk_rnn */
    for (int32_t i = 0; i < I; i++)
        ax += (uint32_t)((ldq(x, p->xdt, xrow + i) - p->x_zp) * (ldq(w, p->wdt, dr * I + i) - wz));
    for (int32_t j = 0; j < H; j++)
        ah += (uint32_t)((hs[j] - p->y_zp) * (ldq(r, p->rdt, dr * H + j) - rz));
    return to_pre(&p->rq_x[dr], (int32_t)ax) + to_pre(&p->rq_h[dr], (int32_t)ah);
}

static int64_t peep(const qk_lstm *p, int32_t d, int32_t k, int32_t c, int32_t code)
{
    /* P order i, o, f: k = 0, 1, 2 */
    if (!p->peep)
        return 0;
    return qk_rshift_even((int64_t)p->peep[((size_t)d * 3 + k) * p->hidden + c] * (code - p->c_zp), 16);
}

void qk_lstm_run(const qk_lstm *p, const void *x, const void *w, const void *r, const int32_t *lens, int32_t *h,
                 int32_t *c, void *y, void *yh, void *yc, int32_t *scratch)
{
    const int32_t H = p->hidden, I = p->input, B = p->batch, D = p->ndir, S = p->seq;
    int32_t *hn = scratch, *cn = scratch + H;
    for (int32_t d = 0; d < D; d++) {
        const int32_t rev = D == 2 ? d == 1 : p->reverse != 0;
        for (int32_t b = 0; b < B; b++) {
            int32_t len = lens ? lens[b] : S;
            len = len < 0 ? 0 : (len > S ? S : len);
            int32_t *hs = h + ((size_t)d * B + b) * (size_t)H, *cs = c + ((size_t)d * B + b) * (size_t)H;
            for (int32_t s = 0; s < len; s++) {
                const int32_t t = rev ? len - 1 - s : s;
                const size_t xrow = ((size_t)t * B + b) * (size_t)I;
                for (int32_t u = 0; u < H; u++) {
                    int32_t ig = gate_q15(p->lut_s, clip_pre(gate_pre(p, x, w, r, hs, d, u, xrow) +
                                                                 peep(p, d, 0, u, cs[u]),
                                                             p->clip_s));
                    int32_t fg = p->input_forget ? 32768 - ig
                                                 : gate_q15(p->lut_s, clip_pre(gate_pre(p, x, w, r, hs, d, 2 * H + u, xrow) +
                                                                                   peep(p, d, 2, u, cs[u]),
                                                                               p->clip_s));
                    int64_t ct = qk_rnn_interp(p->lut_tc, clip_pre(gate_pre(p, x, w, r, hs, d, 3 * H + u, xrow), p->clip_t));
                    int64_t mix = (int64_t)fg * (cs[u] - p->c_zp) * 65536 + (int64_t)ig * ct; /* units s_c / 2^31 */
                    cn[u] = sat(qk_rshift_even(mix, 31) + p->c_zp, p->c_lo, p->c_hi);
                    int32_t og = gate_q15(p->lut_s, clip_pre(gate_pre(p, x, w, r, hs, d, H + u, xrow) +
                                                                 peep(p, d, 1, u, cn[u]),
                                                             p->clip_s));
                    int64_t hc = qk_rnn_interp(p->lut_th, qk_rq_apply(&p->rq_c, (int64_t)cn[u] - p->c_zp));
                    hn[u] = sat(qk_rshift_even((int64_t)og * hc, 31) + p->y_zp, p->y_lo, p->y_hi);
                }
                for (int32_t u = 0; u < H; u++) {
                    hs[u] = hn[u];
                    cs[u] = cn[u];
                    if (y)
                        stq(y, p->ydt, (((size_t)t * D + d) * B + b) * (size_t)H + u, hn[u]);
                }
            }
            for (int32_t t = len; t < S && y; t++) /* steps past the sequence: Y = 0 */
                for (int32_t u = 0; u < H; u++)
                    stq(y, p->ydt, (((size_t)t * D + d) * B + b) * (size_t)H + u, p->y_zp);
            for (int32_t u = 0; u < H; u++) {
                if (yh)
                    stq(yh, p->ydt, ((size_t)d * B + b) * (size_t)H + u, hs[u]);
                if (yc)
                    stq(yc, p->cdt, ((size_t)d * B + b) * (size_t)H + u, cs[u]);
            }
        }
    }
}
