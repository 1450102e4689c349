/*
 * ops_contrib: the com.microsoft operators ONNX Runtime's exporters and its
 * transformer optimizer write, cpu_ref kernels (fp32). Shared between the
 * files of the family: the host table and the registration tables each file
 * contributes.
 */
#ifndef SY_OPS_CONTRIB_H
#define SY_OPS_CONTRIB_H

#include "switchyard/sy_sdk.h"

#define CONTRIB_DOMAIN "com.microsoft"

/* set once by the plugin's init (the host table is the same for every
 * environment; no option or per-environment state lives here) */
extern const sy_host_api *contrib_host;
#define H contrib_host
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

#define ATTR(n, t) {n, SY_ATTR_##t, false}
#define ATTR_REQ(n, t) {n, SY_ATTR_##t, true}
#define F32 SY_DT_BIT(SY_DT_FLOAT32)

/* schema / kernel initialisers for a domain other than the default one */
#define CSCHEMA(dom, op, since, mi, ma, mo, mao, attrs, infer, doc)                                               \
    {sizeof(sy_op_schema), dom, op, since, mi, ma, mo, mao, attrs, infer, SY_NO_INPLACE, 0, doc}
#define CKERNEL(dom, op, mask, type_in, prep, run, rel)                                                            \
    {sizeof(sy_kernel_def), dom, op, 1, 0, "cpu_ref", mask, type_in, 0u, NULL, prep, run, rel, NULL}

/* each file's tables */
typedef struct contrib_tables {
    const sy_op_schema *schemas;
    uint32_t n_schemas;
    const sy_kernel_def *kernels;
    uint32_t n_kernels;
} contrib_tables;

extern const contrib_tables contrib_norm_tables;      /* norm.c: Embed/Skip/Simplified LayerNormalization */
extern const contrib_tables contrib_gelu_tables;      /* gelu.c: Gelu, FastGelu, BiasGelu, QuickGelu */
extern const contrib_tables contrib_attention_tables; /* attention.c: Attention with past/present */
extern const contrib_tables contrib_qlinear_tables;   /* qlinear.c: QLinear* elementwise and pooling */

/* a float32 input `i` (present) of the rank range; messages name `what` */
sy_status *contrib_need_f32(const sy_node *n, uint32_t i, const char *what, int32_t min_rank, int32_t max_rank,
                            const sy_tensor **out);

#endif
