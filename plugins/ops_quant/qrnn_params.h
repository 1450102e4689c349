/* QRNN (switchyard.quant): the checks of a node and the parameters of the
 * portable kernel (kernels/qk_rnn.c), computed once on the host. Shared by
 * ops_quant (cpu_ref) and riscv_mcu, so both run the same integers.
 *
 * Inputs:  0 X, 1 x_scale, 2 x_zero_point, 3 W, 4 w_scale, 5 w_zero_point,
 *          6 R, 7 r_scale, 8 r_zero_point, 9 y_scale, 10 y_zero_point,
 *          11 B (float [ndir, 2*hidden], optional), 12 sequence_lens
 *          (int32/int64 [batch], optional), 13 initial_h (codes [ndir,
 *          batch, hidden], optional), 14 h0_scale, 15 h0_zero_point
 * Outputs: Y [seq, ndir, batch, hidden], Y_h [ndir, batch, hidden] (either
 *          may be omitted), both quantized with y_scale / y_zero_point
 * Attributes: hidden_size, direction, clip, activations (Tanh, Sigmoid,
 *          Relu; one per direction), requant (onnx | gemmlowp)
 */
#ifndef SY_QRNN_PARAMS_H
#define SY_QRNN_PARAMS_H

#include "qk_rnn.h"
#include "switchyard/sy_sdk.h"

enum { QRNN_X = 0, QRNN_W = 3, QRNN_R = 6, QRNN_YS = 9, QRNN_B = 11, QRNN_LENS = 12, QRNN_H0 = 13, QRNN_NIN = 16 };

typedef struct qrnn_params {
    qk_rnn k;       /* pointers into buf */
    void *buf;      /* one allocation: zero points, bias, requantizers, tables */
    sy_dtype ydt;   /* element type of Y / Y_h */
    int64_t dims_y[4], dims_yh[3];
} qrnn_params;

/* Shapes and element types only (infer): fills k's sizes, ydt and dims. */
sy_status *qrnn_shapes(const sy_host_api *h, const sy_node *n, qrnn_params *p);
/* Everything (prepare): the checks of qrnn_shapes, then the quantization
 * parameters (constants, scales > 0, zero points in range, per-channel
 * lengths; every message names the tensor) and the kernel's tables. Free
 * with qrnn_params_free. def_mode: the requantization form when the node
 * has no `requant` attribute (and the host does not answer one). */
sy_status *qrnn_build(const sy_host_api *h, const sy_node *n, sy_rq_mode def_mode, qrnn_params *p);
void qrnn_params_free(qrnn_params *p);

#endif
