/*
 * One-layer GRU / LSTM over a sequence for one direction, with the state
 * passed in and out, so that a caller can carry it across runs
 * (qti_aisw StatefulGRU / StatefulLSTM). Activations are the ONNX defaults
 * (f = sigmoid, g = h = tanh), which is all the block ops define.
 *
 * PROPOSAL (see docs/emulators.md): this is the recurrent cell math that
 * plugins/ops_recurrent also implements privately; the API is shaped to
 * move into plugin_sdk (sy_sdk: sdk_rnn.c, names sy_rnn_*) so that both
 * families call one implementation. Until that move it lives here.
 */
#ifndef QTI_RNN_CELL_H
#define QTI_RNN_CELL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { QRNN_GRU = 3, QRNN_LSTM = 4 } qrnn_kind; /* = gate count */

typedef struct qrnn_cfg {
    qrnn_kind kind;
    int64_t hidden, input;
    bool lbr;          /* GRU linear_before_reset */
    bool input_forget; /* LSTM: f = 1 - i */
    float clip;        /* <= 0: none */
} qrnn_cfg;

/* Floats of scratch qrnn_dir needs. */
size_t qrnn_scratch_floats(const qrnn_cfg *c, int64_t seq, int64_t batch);

/*
 * Runs one direction. x: [seq, batch, input]; W: [G*hidden, input];
 * R: [G*hidden, hidden]; B: [2*G*hidden] or NULL; P: [3*hidden] or NULL
 * (LSTM peepholes i, o, f); lens: per-batch valid lengths or NULL (= seq).
 * h, c: [batch, hidden] state in and out (c ignored for GRU). y: when not
 * NULL, [seq, ydir_stride...]: step t of batch b is written at
 * y + (t * y_step + b) * hidden, where y_step = ndir * batch for ONNX Y
 * layout; the caller passes y already offset to its direction.
 * reverse: steps run from each sequence's own last valid step to 0.
 */
void qrnn_dir(const qrnn_cfg *c, bool reverse, const float *x, int64_t seq, int64_t batch, const float *W,
              const float *R, const float *B, const float *P, const int64_t *lens, float *h, float *cst, float *y,
              int64_t y_step, float *scratch);

#endif
