/* qk_lstm: the portable integer LSTM cell with carried H and C, shared by
 * the cpu_ref and lpai kernels of qti_aisw QStatefulLSTM (plugins/qti_aisw).
 * No plugin ABI, no malloc, no libm. ONNX gate order i, o, f, c; P order
 * i, o, f. The design is qk_gru's (see qk_gru.h, qk_lstm.c):
 *
 *   pre_g = rq_x(bias_x + sum (x - zx)(W - zw)) + rq_h(sum (H - zy)(R - zr))
 *           [+ peep: round(P_g' (C - zc) / 2^16)]              gate units
 *   i, f, o = sigmoid(clip(pre)) as Q15; c~ = tanh(clip(pre)) in s_c / 65536
 *   (input_forget: f = 1 - i)
 *   C_t = round((f (C - zc) 65536 + i c~) / 2^31) + zc, clamped    codes of Y_c
 *   o uses C_t in its peephole; H_t = round(o tanh(rq_c(C_t - zc)) / 2^31) + zy
 *
 * P_g' = P_g * s_c / s_p * 2^16 (int32). H is carried as Y_h's codes, C as
 * Y_c's, by the caller. */
#ifndef QK_LSTM_H
#define QK_LSTM_H
#include "qk_rnn.h"

typedef struct qk_lstm {
    int32_t seq, batch, input, hidden, ndir, reverse, input_forget;
    int32_t xdt, wdt, rdt, ydt, cdt;            /* QK_S8 / QK_U8 */
    int32_t x_zp, y_zp, y_lo, y_hi, c_zp, c_lo, c_hi;
    int32_t n_wzp, n_rzp;          /* 1 or 4 * hidden */
    const int32_t *w_zp, *r_zp;
    const int32_t *bias_x;         /* [ndir * 4 * hidden] (Wb + Rb at s_x * s_w) or NULL */
    const int32_t *peep;           /* [ndir * 3 * hidden] P_g' (i, o, f) or NULL */
    const qk_rq *rq_x, *rq_h;      /* [ndir * 4 * hidden]: accumulators -> gate units */
    qk_rq rq_c;                    /* C codes - zc -> tanh pre-activation units */
    int32_t clip_s, clip_t;        /* clip in sigmoid / tanh units; <= 0: none */
    const int32_t *lut_s;          /* sigmoid, units 2^-23 */
    const int32_t *lut_tc;         /* tanh, units s_c / 256 (the cell gate c~) */
    const int32_t *lut_th;         /* tanh, units s_y / 256 (h(C_t)) */
} qk_lstm;

#define QK_LSTM_SCRATCH(hidden) (3 * (size_t)(hidden))

/* x [seq, batch, input]; w [ndir, 4H, input]; r [ndir, 4H, H]; lens
 * [batch] or NULL; h, c [ndir, batch, H] the carried states (codes of Y_h,
 * Y_c), read and updated; y [seq, ndir, batch, H], yh, yc [ndir, batch, H]
 * or NULL. */
void qk_lstm_run(const qk_lstm *p, const void *x, const void *w, const void *r, const int32_t *lens, int32_t *h,
                 int32_t *c, void *y, void *yh, void *yc, int32_t *scratch);
#endif
