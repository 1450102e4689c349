/* ops_nn internals shared between its source files. */
#ifndef SY_OPS_NN_INTERNAL_H
#define SY_OPS_NN_INTERNAL_H

#include "switchyard/sy_sdk.h"

extern const sy_host_api *sy_nn_host;
#define H sy_nn_host
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

sy_status *nn_infer_resize(sy_node *n);
sy_status *nn_prepare_resize(sy_node *n, void **state);
sy_status *nn_run_resize(void *state, const sy_kernel_io *io);

/* loss.c: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss */
sy_status *nn_loss_register(const sy_host_api *host, sy_plugin *p);
/* attention.c: Attention, RotaryEmbedding */
sy_status *nn_attention_register(const sy_host_api *host, sy_plugin *p);
/* gated.c: SwiGLU, CausalConvWithState */
sy_status *nn_gated_register(const sy_host_api *host, sy_plugin *p);
/* linear_attention.c: LinearAttention */
sy_status *nn_linear_attention_register(const sy_host_api *host, sy_plugin *p);
/* flex_attention.c: FlexAttention (ai.onnx.preview) and its modifier graphs */
sy_status *nn_flex_attention_register(const sy_host_api *host, sy_plugin *p);

#endif
