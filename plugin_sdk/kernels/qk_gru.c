/* qk_gru: the portable integer GRU with a carried state (see qk_gru.h).
 *
 * Why this shape:
 *   - X and H have different scales, so each product keeps its own int32
 *     accumulator and its own requantizer into the gate's pre-activation
 *     units, as qk_rnn (the sum, the clip and the table index are then
 *     plain integers); the activations are qk_rnn's 257-entry tables read
 *     with linear interpolation, so host and MCU agree without a libm;
 *   - the gates z and r stay Q15 fractions (0 .. 32768) rather than codes:
 *     they only scale other values, and a Q15 product is an exact integer;
 *   - with linear_before_reset = 0 the reset gate multiplies H before R_h:
 *     r (.) H is requantized to H's own codes (what an int8 backend holds
 *     as a tensor) so the R_h product is again an int32 of codes;
 *   - the new state mixes h~ (units s_y / 65536 from the tanh table) and
 *     H_{t-1} (codes) in one int64 with a single rounding to Y's codes: the
 *     state is always exactly the Y_h an integer graph would emit.
 */
#include "qk_gru.h"

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
 * left shift would wrap (as qk_rnn: such values saturate the gate anyway) */
static int32_t to_pre(const qk_rq *r, int64_t acc)
{
    if (r->mode != QK_RQ_ONNX && r->shift > 0) {
        int64_t lim = ((int64_t)1 << (31 - (r->shift > 30 ? 30 : r->shift))) - 1;
        acc = acc > lim ? lim : (acc < -lim ? -lim : acc);
    }
    return qk_rq_apply(r, acc);
}

static int32_t clip_pre(int32_t pre, int32_t clip)
{
    return clip > 0 ? (pre > clip ? clip : (pre < -clip ? -clip : pre)) : pre;
}

/* sigmoid gate as a Q15 fraction in [0, 32768] */
static int32_t gate_q15(const int32_t *lut, int32_t pre)
{
    int64_t v = qk_rshift_even(qk_rnn_interp(lut, pre), 16);
    return v < 0 ? 0 : (v > 32768 ? 32768 : (int32_t)v);
}

void qk_gru_run(const qk_gru *p, const void *x, const void *w, const void *r, const int32_t *lens, int32_t *h,
                void *y, void *yh, int32_t *scratch)
{
    const int32_t H = p->hidden, I = p->input, B = p->batch, D = p->ndir, S = p->seq;
    int32_t *zg = scratch, *rg = scratch + H, *rh = scratch + 2 * H, *hn = scratch + 3 * H;
    for (int32_t d = 0; d < D; d++) {
        const int32_t rev = D == 2 ? d == 1 : p->reverse != 0;
        for (int32_t b = 0; b < B; b++) {
            int32_t len = lens ? lens[b] : S;
            len = len < 0 ? 0 : (len > S ? S : len);
            int32_t *hs = h + ((size_t)d * B + b) * (size_t)H; /* this direction's carried state */
            for (int32_t s = 0; s < len; s++) {
                const int32_t t = rev ? len - 1 - s : s;
                const size_t xrow = ((size_t)t * B + b) * (size_t)I;
                /* z and r for every unit first: the h gate of unit c reads r of all units */
                for (int32_t g = 0; g < 2; g++)
                    for (int32_t c = 0; c < H; c++) {
                        const int32_t row = g * H + c;
                        const size_t dr = (size_t)d * 3 * H + row;
                        int32_t wz = p->w_zp ? p->w_zp[p->n_wzp > 1 ? row : 0] : 0;
                        int32_t rz = p->r_zp ? p->r_zp[p->n_rzp > 1 ? row : 0] : 0;
                        uint32_t ax = p->bias_x ? (uint32_t)p->bias_x[dr] : 0u, ah = 0u; /* wrapping, as qk_rnn */
                        for (int32_t i = 0; i < I; i++)
                            ax += (uint32_t)((ldq(x, p->xdt, xrow + i) - p->x_zp) * (ldq(w, p->wdt, dr * I + i) - wz));
                        for (int32_t j = 0; j < H; j++)
                            ah += (uint32_t)((hs[j] - p->y_zp) * (ldq(r, p->rdt, dr * H + j) - rz));
                        int32_t pre = clip_pre(to_pre(&p->rq_x[dr], (int32_t)ax) + to_pre(&p->rq_h[dr], (int32_t)ah),
                                               p->clip_s);
                        (g == 0 ? zg : rg)[c] = gate_q15(p->lut_s, pre);
                    }
                if (!p->lbr)
                    for (int32_t j = 0; j < H; j++)
                        rh[j] = (int32_t)qk_rshift_even((int64_t)rg[j] * (hs[j] - p->y_zp), 15);
                for (int32_t c = 0; c < H; c++) {
                    const int32_t row = 2 * H + c;
                    const size_t dr = (size_t)d * 3 * H + row;
                    int32_t wz = p->w_zp ? p->w_zp[p->n_wzp > 1 ? row : 0] : 0;
                    int32_t rz = p->r_zp ? p->r_zp[p->n_rzp > 1 ? row : 0] : 0;
                    uint32_t ax = p->bias_x ? (uint32_t)p->bias_x[dr] : 0u, ah = 0u;
                    for (int32_t i = 0; i < I; i++)
                        ax += (uint32_t)((ldq(x, p->xdt, xrow + i) - p->x_zp) * (ldq(w, p->wdt, dr * I + i) - wz));
                    int32_t pre = to_pre(&p->rq_x[dr], (int32_t)ax);
                    if (!p->lbr) {
                        for (int32_t j = 0; j < H; j++)
                            ah += (uint32_t)(rh[j] * (ldq(r, p->rdt, dr * H + j) - rz));
                        pre += to_pre(&p->rq_h[dr], (int32_t)ah);
                    } else {
                        ah = p->bias_h ? (uint32_t)p->bias_h[(size_t)d * H + c] : 0u;
                        for (int32_t j = 0; j < H; j++)
                            ah += (uint32_t)((hs[j] - p->y_zp) * (ldq(r, p->rdt, dr * H + j) - rz));
                        pre += (int32_t)qk_rshift_even((int64_t)rg[c] * to_pre(&p->rq_h[dr], (int32_t)ah), 15);
                    }
                    pre = clip_pre(pre, p->clip_t);
                    /* h~ in units s_y / 65536; H_t = (1 - z) h~ + z H_{t-1} in units s_y / 2^31 */
                    int64_t ht = qk_rnn_interp(p->lut_t, pre);
                    int64_t mix = (int64_t)(32768 - zg[c]) * ht + (int64_t)zg[c] * (hs[c] - p->y_zp) * 65536;
                    int64_t q = qk_rshift_even(mix, 31) + p->y_zp;
                    hn[c] = q < p->y_lo ? p->y_lo : (q > p->y_hi ? p->y_hi : (int32_t)q);
                }
                for (int32_t c = 0; c < H; c++) {
                    hs[c] = hn[c];
                    if (y)
                        stq(y, p->ydt, (((size_t)t * D + d) * B + b) * (size_t)H + c, hn[c]);
                }
            }
            for (int32_t t = len; t < S && y; t++) /* steps past the sequence: Y = 0 */
                for (int32_t c = 0; c < H; c++)
                    stq(y, p->ydt, (((size_t)t * D + d) * B + b) * (size_t)H + c, p->y_zp);
            if (yh) /* the state after the run (unchanged by a sequence of length 0) */
                for (int32_t c = 0; c < H; c++)
                    stq(yh, p->ydt, ((size_t)d * B + b) * (size_t)H + c, hs[c]);
        }
    }
}
