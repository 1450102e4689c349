/*
 * GELU forms of com.microsoft (fp32):
 *   Gelu       0.5 x (1 + erf(x / sqrt 2))
 *   BiasGelu   Gelu(A + B), B a vector over A's last dim
 *   FastGelu   tanh approximation 0.5 x (1 + tanh(x (sqrt(2/pi) + 0.0356774 x^2)))
 *              of X (+ bias over the last dim), as ONNX Runtime writes it
 *   QuickGelu  x * sigmoid(alpha x), alpha 1.702 by default
 */
#include "contrib.h"

#include <math.h>
#include <stdlib.h>

typedef enum { G_ERF, G_TANH, G_QUICK } gelu_kind;

typedef struct gelu_state {
    gelu_kind kind;
    float alpha;
} gelu_state;

static sy_status *infer_gelu(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(contrib_need_f32(n, 0, "X", 0, SY_MAX_RANK, &x));
    const sy_tensor *b = H->node_num_inputs(n) > 1 ? H->node_input(n, 1) : NULL;
    if (b) {
        int64_t last = x->rank ? x->dims[x->rank - 1] : 1;
        if (b->dtype != SY_DT_FLOAT32 || b->rank != 1 || b->dims[0] != last)
            return ERR(SY_ERR_SHAPE, "bias must be a float32 vector of X's last dimension %lld", (long long)last);
    }
    return H->node_set_output(n, 0, SY_DT_FLOAT32, x->rank, x->dims);
}

static sy_status *prepare_gelu(sy_node *n, void **state)
{
    gelu_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    const char *op = H->node_op(n);
    s->kind = !strcmp(op, "FastGelu") ? G_TANH : !strcmp(op, "QuickGelu") ? G_QUICK : G_ERF;
    s->alpha = sy_attr_float_or(H, n, "alpha", 1.702f);
    *state = s;
    return NULL;
}

static sy_status *run_gelu(void *state, const sy_kernel_io *io)
{
    const gelu_state *s = state;
    const sy_tensor *x = io->inputs[0], *b = io->n_inputs > 1 ? io->inputs[1] : NULL;
    int64_t n = sy_tensor_numel(x), blen = b ? b->dims[0] : 1;
    const float *xd = x->data, *bd = b ? b->data : NULL;
    float *y = io->outputs[0]->data;
    for (int64_t i = 0; i < n; i++) {
        float v = bd ? xd[i] + bd[i % blen] : xd[i];
        switch (s->kind) {
        case G_ERF: y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); break;
        case G_TANH:
            y[i] = 0.5f * v * (1.0f + tanhf(v * (0.7978845608028654f + 0.035677408136300125f * v * v)));
            break;
        case G_QUICK: {
            float z = s->alpha * v;
            y[i] = v * (z >= 0 ? 1.0f / (1.0f + expf(-z)) : expf(z) / (1.0f + expf(z)));
            break;
        }
        }
    }
    return NULL;
}

static const sy_attr_def a_quick[] = {ATTR("alpha", FLOAT)};

static const sy_op_schema schemas[] = {
    CSCHEMA(CONTRIB_DOMAIN, "Gelu", 1, 1, 1, 1, 1, SY_NO_ATTRS, infer_gelu, "0.5 x (1 + erf(x / sqrt 2))"),
    CSCHEMA(CONTRIB_DOMAIN, "BiasGelu", 1, 2, 2, 1, 1, SY_NO_ATTRS, infer_gelu, "Gelu(A + B)"),
    CSCHEMA(CONTRIB_DOMAIN, "FastGelu", 1, 1, 2, 1, 1, SY_NO_ATTRS, infer_gelu, "tanh-approximated Gelu(X + bias)"),
    CSCHEMA(CONTRIB_DOMAIN, "QuickGelu", 1, 1, 1, 1, 1, SY_ATTRS(a_quick), infer_gelu, "x * sigmoid(alpha x)"),
};

static const sy_kernel_def kernels[] = {
    CKERNEL(CONTRIB_DOMAIN, "Gelu", F32, 0, prepare_gelu, run_gelu, sy_release_free),
    CKERNEL(CONTRIB_DOMAIN, "BiasGelu", F32, 0, prepare_gelu, run_gelu, sy_release_free),
    CKERNEL(CONTRIB_DOMAIN, "FastGelu", F32, 0, prepare_gelu, run_gelu, sy_release_free),
    CKERNEL(CONTRIB_DOMAIN, "QuickGelu", F32, 0, prepare_gelu, run_gelu, sy_release_free),
};

const contrib_tables contrib_gelu_tables = {schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels)};
