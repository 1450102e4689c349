/* qk_rnn: the portable integer ONNX RNN (switchyard.quant QRNN), layout 0.
 * No plugin ABI, no malloc, no libm: shared by plugins/ops_quant and
 * riscv_mcu. The design (see qk_rnn.c for the reasons):
 *
 *   acc_x = bias + sum_i (x_i - zx)(W_ci - zw)          int32 (s_x * s_w[c])
 *   acc_h = sum_j (h_j - zh)(R_cj - zr)                 int32 (s_h * s_r[c])
 *   pre   = rq_x(acc_x) + rq_h(acc_h)                   int32, units s_p = A / 32768
 *   pre   = clamp(pre, -clip, clip), then to [-32768, 32767]
 *   h_c   = act_lut(pre) + zy                           int8, Y's scale/zero point
 *
 * The bias is Wb + Rb folded as int32 with scale s_x * s_w[c]. Step 0 reads
 * initial_h with its own parameters (rq_h0); later steps read H_{t-1}, which
 * is quantized like Y (Y and Y_h share Ht's quantization). */
#ifndef QK_RNN_H
#define QK_RNN_H
#include "qk.h"

#define QK_RNN_LUT 257 /* entries of one activation table (256 segments) */

typedef struct qk_rnn {
    int32_t seq, batch, input, hidden, ndir, reverse; /* reverse: the one direction runs backwards */
    int32_t xdt, wdt, rdt, ydt, h0dt;                 /* QK_S8 / QK_U8 */
    int32_t x_zp, y_zp, h0_zp, y_lo, y_hi;
    int32_t n_wzp, n_rzp;       /* 1 or hidden (per output channel, shared by the directions) */
    const int32_t *w_zp, *r_zp; /* n_wzp / n_rzp entries */
    const int32_t *bias;        /* [ndir * hidden] or NULL */
    const qk_rq *rq_x, *rq_h;   /* [ndir * hidden]: accumulators -> pre-activation units */
    const qk_rq *rq_h0;         /* [ndir * hidden] for initial_h; NULL when there is none */
    int32_t clip[2];            /* per direction, in pre-activation units; <= 0: no clip */
    const int32_t *lut;         /* [ndir * QK_RNN_LUT]: f(p_k) in units of s_y / 256 */
} qk_rnn;

/* The table read at one pre-activation value (clamped to 16 bits) with
 * linear interpolation, in units of the table's entries / 256: exact
 * integers, no rounding yet. */
int64_t qk_rnn_interp(const int32_t *lut, int32_t pre);
/* round(v / 2^s) half to even (as QuantizeLinear), 1 <= s <= 62 */
int64_t qk_rshift_even(int64_t v, int32_t s);

/* Activation of one pre-activation value: linear interpolation in the
 * table, rounded half to even to an output code, plus zp, clamped. */
int32_t qk_rnn_act(const int32_t *lut, int32_t pre, int32_t zp, int32_t lo, int32_t hi);

/* x [seq, batch, input]; w [ndir, hidden, input]; r [ndir, hidden, hidden];
 * lens [batch] (valid steps, 0..seq) or NULL; h0 [ndir, batch, hidden] or
 * NULL; y [seq, ndir, batch, hidden] or NULL (invalid steps get y_zp, the
 * code of 0); yh [ndir, batch, hidden] or NULL. scratch: 2 * hidden int32. */
void qk_rnn_run(const qk_rnn *p, const void *x, const void *w, const void *r, const int32_t *lens, const void *h0,
                void *y, void *yh, int32_t *scratch);
#endif
