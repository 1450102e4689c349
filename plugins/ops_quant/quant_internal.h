/* ops_quant: shared declarations of the quantized operator family. */
#ifndef SY_OPS_QUANT_INTERNAL_H
#define SY_OPS_QUANT_INTERNAL_H

#include "switchyard/sy_sdk.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

extern const sy_host_api *H;

/* The plugin's state in one environment (host->plugin_set_state). */
typedef struct q_env {
    sy_rq_mode default_rq; /* [plugin.ops_quant] requant = onnx|gemmlowp */
    /* the same, published to the host (SY_EXT_REQUANT_DEFAULT) when set */
    sy_requant_default published;
} q_env;

/* The environment's default form, for a node whose infer/prepare runs now. */
static inline sy_rq_mode q_env_default_rq(const sy_node *n)
{
    const q_env *e = H->node_plugin_state(n);
    return e ? e->default_rq : SY_RQ_ONNX;
}

#define QERR(code, ...) H->status_new((code), __VA_ARGS__)
#define SWQ_DOMAIN "switchyard.quant"

/* Scale element i of a float32/float16/bfloat16 tensor. */
static inline float q_scale_at(const sy_tensor *s, size_t i)
{
    switch (s->dtype) {
    case SY_DT_FLOAT16: return sy_f16_to_f32(((const uint16_t *)s->data)[i]);
    case SY_DT_BFLOAT16: return sy_bf16_to_f32(((const uint16_t *)s->data)[i]);
    case SY_DT_FLOAT64: return (float)((const double *)s->data)[i];
    default: return ((const float *)s->data)[i];
    }
}
/* Zero point element i (0 when the tensor is omitted). */
static inline int32_t q_zp_at(const sy_tensor *z, size_t i)
{
    return z && z->data ? sy_q_load(z->data, z->dtype, i) : 0;
}
static inline int64_t q_numel(const sy_tensor *t) { return t ? sy_tensor_numel(t) : 0; }
static inline bool q_is_scale_dtype(sy_dtype dt)
{
    return dt == SY_DT_FLOAT32 || dt == SY_DT_FLOAT16 || dt == SY_DT_BFLOAT16;
}
static inline bool q_is_qtype(sy_dtype dt)
{
    return dt == SY_DT_INT8 || dt == SY_DT_UINT8 || dt == SY_DT_INT16 || dt == SY_DT_UINT16 || dt == SY_DT_INT4 ||
           dt == SY_DT_UINT4 || dt == SY_DT_INT32;
}
static inline const sy_tensor *q_in(const sy_kernel_io *io, uint32_t i) { return i < io->n_inputs ? io->inputs[i] : NULL; }
static inline const sy_tensor *q_nin(const sy_node *n, uint32_t i)
{
    return i < H->node_num_inputs(n) ? H->node_input(n, i) : NULL;
}

/* Checks a (scale, zero point) pair of quantized tensor `x` when their values
 * are known (initializers): scales > 0 and finite, zero points inside the
 * range of `qdt`, per-axis count == `axis_len` (-1: per tensor only). Every
 * message names the tensor. */
sy_status *q_check_pair(const sy_tensor *x, const sy_tensor *s, const sy_tensor *z, sy_dtype qdt, int64_t axis_len);

/* The requantization form of a node: attribute `requant`, else the plugin default. */
sy_status *q_node_rq_mode(const sy_node *n, sy_rq_mode *mode);

/* Output clamp [lo, hi] from the dtype range and the optional folded
 * activation bounds act_min/act_max (real values, attributes). */
void q_act_clamp(float act_min, float act_max, float y_scale, int32_t y_zp, sy_dtype ydt, int32_t *lo, int32_t *hi);

/* A multiplier s_a * s_b / s_y computed in the scales' own precision (as the
 * ONNX reference does with numpy scalars of that dtype). */
double q_mult3(float sa, float sb, float sy, sy_dtype scale_dt);

/* Window geometry of Conv and pools over 1 or 2 spatial dims (a 1-D input is
 * handled as height 1). Index 0 = height, 1 = width. */
typedef struct q_win {
    int32_t nsp;
    int64_t in[2], out[2], k[2], s[2], d[2], pb[2], pe[2];
} q_win;
/* kernel: nk spatial kernel dims (from kernel_shape or W); reads auto_pad,
 * strides, dilations, pads, ceil_mode of the node. */
sy_status *q_win_compute(const sy_node *n, const sy_tensor *x, const int64_t *kernel, int32_t nk, q_win *g);
/* output dims [N, C, spatial...] */
void q_win_out_dims(const q_win *g, const sy_tensor *x, int64_t c, int64_t *dims);

/* Store n int32 codes (already clamped) into a quantized tensor at offset off. */
void q_store_codes(void *y, sy_dtype dt, size_t off, const int32_t *v, size_t n);
/* Load n codes minus zp into int32. */
void q_load_centered(const void *x, sy_dtype dt, size_t off, size_t n, int32_t zp, int32_t *out);

/* registration tables of each file */
void q_tables_qdq(const sy_op_schema **s, uint32_t *ns, const sy_kernel_def **k, uint32_t *nk);
void q_tables_gemm(const sy_op_schema **s, uint32_t *ns, const sy_kernel_def **k, uint32_t *nk);
void q_tables_elem(const sy_op_schema **s, uint32_t *ns, const sy_kernel_def **k, uint32_t *nk);
void q_tables_rnn(const sy_op_schema **s, uint32_t *ns, const sy_kernel_def **k, uint32_t *nk);
void q_tables_convt(const sy_op_schema **s, uint32_t *ns, const sy_kernel_def **k, uint32_t *nk);
/* the "qdq_patterns" extension (qdq_patterns.c): which op folds into which kernel */
sy_status *q_register_patterns(const sy_host_api *host, sy_plugin *p);

#endif
