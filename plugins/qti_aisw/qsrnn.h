/* qti_aisw QStatefulGRU / QStatefulLSTM: the integer StatefulGRU the QDQ pass folds
 * DequantizeLinear(X, W, R[, initial_h]) -> StatefulGRU ->
 * QuantizeLinear(Y[, Y_h]) into (docs/emulators.md, "qti_aisw block ops").
 * Inputs (QRNN's layout, plugins/ops_quant/qrnn_params.h, plus reset):
 *   0 X, 1 x_scale, 2 x_zero_point, 3 W, 4 w_scale, 5 w_zero_point,
 *   6 R, 7 r_scale, 8 r_zero_point, 9 y_scale, 10 y_zero_point,
 *   11 B (float [ndir, 6*hidden]), 12 sequence_lens (int32/int64 [batch]),
 *   13 initial_h (codes), 14 h0_scale, 15 h0_zero_point, 16 reset (bool)
 * Outputs: Y [seq, ndir, batch, hidden], Y_h [ndir, batch, hidden], both
 *   with y_scale / y_zero_point; the carried state is Y_h's codes.
 * Attributes: hidden_size, direction, clip, linear_before_reset, requant
 *   (onnx | gemmlowp | single_rounding: the model's, else the session's
 *   form, framework/src/requant_form.c; onnx by default).
 * One integer cell (plugin_sdk/kernels/qk_gru.c) for cpu_ref and lpai. */
#ifndef QTI_QSRNN_H
#define QTI_QSRNN_H
#include "switchyard/sy_sdk.h"

void qgru_set_host(const sy_host_api *host);
sy_status *qgru_infer(sy_node *n);
sy_status *qgru_prepare(sy_node *n, void **state);
sy_status *qgru_run(void *state, const sy_kernel_io *io);
void qgru_release(void *state);
void qgru_reset(void *state);

/* QStatefulLSTM: the same inputs 0..16, then 17 c_scale, 18 c_zero_point
 * (Y_c's, required: the carried C is Y_c's codes), 19 initial_c, 20
 * c0_scale, 21 c0_zero_point, 22 P (float [ndir, 3*hidden]). Outputs Y,
 * Y_h (y_scale), Y_c (c_scale). Attributes hidden_size, direction, clip,
 * input_forget, requant. Cell: plugin_sdk/kernels/qk_lstm.c. */
sy_status *qlstm_infer(sy_node *n);
sy_status *qlstm_prepare(sy_node *n, void **state);
sy_status *qlstm_run(void *state, const sy_kernel_io *io);
void qlstm_release(void *state);
void qlstm_reset(void *state);

#endif
