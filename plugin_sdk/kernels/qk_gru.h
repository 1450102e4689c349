/* qk_gru: the portable integer GRU cell with a carried state, shared by the
 * cpu_ref and lpai kernels of qti_aisw QStatefulGRU (plugins/qti_aisw).
 * No plugin ABI, no malloc, no libm. ONNX gate order z, r, h; per gate
 * (see qk_gru.c for the reasons):
 *
 *   acc_x = bias_x + sum_i (x_i - zx)(W_gc,i - zw)       int32 (s_x * s_w)
 *   z, r  = sigmoid(rq_x(acc_x) + rq_h(sum_j (H_j - zy)(R_gc,j - zr)))   Q15
 *   lbr 0: rh_j = round(r_j (H_j - zy) / 2^15)           codes of Y's scale
 *          h~  = tanh(rq_x(acc_x) + rq_h(sum_j rh_j (R_hc,j - zr)))
 *   lbr 1: h~  = tanh(rq_x(acc_x) + round(r_c rq_h(bias_h + sum_j (H_j - zy)(R_hc,j - zr)) / 2^15))
 *   H_c   = round(((2^15 - z) h~ + z (H_c - zy)) / 2^15) + zy, clamped  codes of Y
 *
 * Pre-activations are in units s_p = A / 32768 (A = 16 for the sigmoid
 * gates, 8 for tanh), as qk_rnn. The state H is the codes of Y / Y_h (one
 * quantization), carried by the caller between runs. */
#ifndef QK_GRU_H
#define QK_GRU_H
#include "qk_rnn.h"

typedef struct qk_gru {
    int32_t seq, batch, input, hidden, ndir, reverse, lbr; /* reverse: the one direction runs backwards */
    int32_t xdt, wdt, rdt, ydt;                            /* QK_S8 / QK_U8 */
    int32_t x_zp, y_zp, y_lo, y_hi;
    int32_t n_wzp, n_rzp;          /* 1 or 3 * hidden (per gate row, shared by the directions) */
    const int32_t *w_zp, *r_zp;    /* n_wzp / n_rzp entries */
    const int32_t *bias_x;         /* [ndir * 3 * hidden] (s_x * s_w) or NULL */
    const int32_t *bias_h;         /* [ndir * hidden] Rbh (s_y * s_r) for lbr != 0, or NULL */
    const qk_rq *rq_x, *rq_h;      /* [ndir * 3 * hidden]: accumulators -> pre-activation units */
    int32_t clip_s, clip_t;        /* clip in sigmoid / tanh pre-activation units; <= 0: no clip */
    const int32_t *lut_s;          /* [QK_RNN_LUT] sigmoid in units 2^-23 (Q15 gate * 256) */
    const int32_t *lut_t;          /* [QK_RNN_LUT] tanh in units s_y / 256 */
} qk_gru;

/* Scratch int32 entries qk_gru_run needs. */
#define QK_GRU_SCRATCH(hidden) (4 * (size_t)(hidden))

/* x [seq, batch, input]; w [ndir, 3*hidden, input]; r [ndir, 3*hidden,
 * hidden]; lens [batch] (valid steps, 0..seq) or NULL; h [ndir, batch,
 * hidden] the carried state (codes of Y), read and updated; y [seq, ndir,
 * batch, hidden] or NULL (steps past a sequence get y_zp, the code of 0);
 * yh [ndir, batch, hidden] or NULL (the state after the run). */
void qk_gru_run(const qk_gru *p, const void *x, const void *w, const void *r, const int32_t *lens, int32_t *h,
                void *y, void *yh, int32_t *scratch);
#endif
