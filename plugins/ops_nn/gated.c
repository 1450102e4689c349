/*
 * Gated and stateful blocks of recent LLM / state-space models (fp32 compute;
 * float16 tensors through the SDK's fp32 scope):
 *
 *   SwiGLU (28)               y = Swish_alpha(a) * b = a * sigmoid(alpha a) * b
 *   CausalConvWithState (27)  depthwise causal conv1d with a carried state:
 *       padded = concat(past_state or zeros [B, C, K - 1], input [B, C, L]) on
 *       the last axis; output[b, c, t] = sum_k weight[c, 0, k] padded[b, c, t + k]
 *       (+ bias[c]), then activation none | silu (swish: its alias);
 *       present_state = the last K - 1 steps of padded
 */
#include "nn_internal.h"

#include <math.h>
#include <stdlib.h>

static inline float sigm(float x) { return x >= 0 ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x)); }

/* ---- SwiGLU ------------------------------------------------------------- */

static sy_status *infer_swiglu(sy_node *n)
{
    const sy_tensor *a, *b;
    SY_TRY(sy_need_input(H, n, 0, &a));
    SY_TRY(sy_need_input(H, n, 1, &b));
    if (!sy_dt_is_float(a->dtype) || b->dtype != a->dtype)
        return ERR(SY_ERR_TYPE, "a and b must share one float type, got %s and %s", sy_dt_name(a->dtype),
                   sy_dt_name(b->dtype));
    return sy_infer_broadcast(H, n, SY_DT_UNDEFINED, 2);
}

typedef struct swiglu_state {
    float alpha;
} swiglu_state;

static sy_status *prepare_swiglu(sy_node *n, void **state)
{
    swiglu_state *s = malloc(sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->alpha = sy_attr_float_or(H, n, "alpha", 1.0f);
    H->node_set_scratch(n, sy_f32_scope_bytes(H, n));
    *state = s;
    return NULL;
}

static void swiglu_loop(const void *ctx, const void *const *in, const int64_t *st, void *out, int64_t n)
{
    float alpha = ((const swiglu_state *)ctx)->alpha;
    const float *a = in[0], *b = in[1];
    float *y = out;
    for (int64_t i = 0; i < n; i++) {
        float x = a[i * st[0]];
        y[i] = x * sigm(alpha * x) * b[i * st[1]];
    }
}

static sy_status *swiglu_f32(void *state, const sy_kernel_io *io)
{
    const sy_tensor *ins[2] = {io->inputs[0], io->inputs[1]};
    return sy_bcast_apply(H, 2, ins, io->outputs[0], swiglu_loop, state);
}

static sy_status *run_swiglu(void *state, const sy_kernel_io *io) { return sy_run_as_f32(H, state, io, swiglu_f32); }

/* ---- CausalConvWithState ------------------------------------------------ */

typedef struct ccs_state {
    bool silu;
} ccs_state;

static sy_status *ccs_check(const sy_node *n, bool *silu)
{
    const sy_tensor *x, *w;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &w));
    if (!sy_dt_is_float(x->dtype) || w->dtype != x->dtype)
        return ERR(SY_ERR_TYPE, "input and weight must share one float type");
    if (x->rank != 3)
        return ERR(SY_ERR_SHAPE, "input must be [batch, channels, length], got rank %d", x->rank);
    int64_t C = x->dims[1];
    if (w->rank != 3 || w->dims[0] != C || w->dims[1] != 1 || w->dims[2] < 1)
        return ERR(SY_ERR_SHAPE, "weight must be [%lld, 1, kernel] (one filter per channel)", (long long)C);
    int64_t K = w->dims[2];
    const sy_tensor *b = H->node_num_inputs(n) > 2 ? H->node_input(n, 2) : NULL;
    const sy_tensor *ps = H->node_num_inputs(n) > 3 ? H->node_input(n, 3) : NULL;
    if (b && (b->dtype != x->dtype || b->rank != 1 || b->dims[0] != C))
        return ERR(SY_ERR_SHAPE, "bias must be [%lld] of input's type", (long long)C);
    if (ps && (ps->dtype != x->dtype || ps->rank != 3 || ps->dims[0] != x->dims[0] || ps->dims[1] != C ||
               ps->dims[2] != K - 1))
        return ERR(SY_ERR_SHAPE, "past_state must be [%lld, %lld, %lld]", (long long)x->dims[0], (long long)C,
                   (long long)(K - 1));
    char act[8];
    sy_attr_string_or(H, n, "activation", "none", act, sizeof act);
    if (strcmp(act, "none") && strcmp(act, "silu") && strcmp(act, "swish"))
        return ERR(SY_ERR_INVALID_MODEL, "activation must be \"none\", \"silu\" or \"swish\", got \"%s\"", act);
    *silu = strcmp(act, "none") != 0;
    return NULL;
}

static sy_status *infer_ccs(sy_node *n)
{
    bool silu;
    SY_TRY(ccs_check(n, &silu));
    const sy_tensor *x = H->node_input(n, 0), *w = H->node_input(n, 1);
    SY_TRY(H->node_set_output(n, 0, x->dtype, 3, x->dims));
    if (H->node_num_outputs(n) > 1) {
        int64_t d[3] = {x->dims[0], x->dims[1], w->dims[2] - 1};
        SY_TRY(H->node_set_output(n, 1, x->dtype, 3, d));
    }
    return NULL;
}

static sy_status *prepare_ccs(sy_node *n, void **state)
{
    ccs_state *s = malloc(sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = ccs_check(n, &s->silu);
    if (st) {
        free(s);
        return st;
    }
    const sy_tensor *x = H->node_input(n, 0), *w = H->node_input(n, 1);
    size_t pad = (size_t)(x->dims[1] * (x->dims[2] + w->dims[2] - 1)) * sizeof(float);
    H->node_set_scratch(n, sy_f32_scope_bytes(H, n) + pad);
    *state = s;
    return NULL;
}

/* The scope places the fp32 shadows first; the padded rows of one batch
 * element follow them in the scratch. */
static sy_status *ccs_f32(void *state, const sy_kernel_io *io)
{
    const ccs_state *s = state;
    const sy_tensor *x = io->inputs[0], *w = io->inputs[1];
    const sy_tensor *b = io->n_inputs > 2 ? io->inputs[2] : NULL, *ps = io->n_inputs > 3 ? io->inputs[3] : NULL;
    sy_tensor *y = io->outputs[0], *pr = io->n_outputs > 1 ? io->outputs[1] : NULL;
    int64_t B = x->dims[0], C = x->dims[1], L = x->dims[2], K = w->dims[2], P = L + K - 1;
    float *pad = (float *)((char *)io->scratch + io->scratch_bytes) - C * P;
    const float *xd = x->data, *wd = w->data, *bd = b ? b->data : NULL, *pd = ps ? ps->data : NULL;
    float *yd = y->data;
    for (int64_t bi = 0; bi < B; bi++) {
        for (int64_t c = 0; c < C; c++) {
            float *row = pad + c * P;
            for (int64_t k = 0; k < K - 1; k++)
                row[k] = pd ? pd[(bi * C + c) * (K - 1) + k] : 0.0f;
            memcpy(row + K - 1, xd + (bi * C + c) * L, (size_t)L * sizeof(float));
            const float *wc = wd + c * K;
            for (int64_t t = 0; t < L; t++) {
                float acc = bd ? bd[c] : 0.0f;
                for (int64_t k = 0; k < K; k++)
                    acc += wc[k] * row[t + k];
                yd[(bi * C + c) * L + t] = s->silu ? acc * sigm(acc) : acc;
            }
            if (pr && K > 1)
                memcpy((float *)pr->data + (bi * C + c) * (K - 1), row + L, (size_t)(K - 1) * sizeof(float));
        }
    }
    return NULL;
}

static sy_status *run_ccs(void *state, const sy_kernel_io *io) { return sy_run_as_f32(H, state, io, ccs_f32); }

static const sy_attr_def a_swiglu[] = {{"alpha", SY_ATTR_FLOAT, false}};
static const sy_attr_def a_ccs[] = {{"activation", SY_ATTR_STRING, false}};

static const sy_op_schema schemas[] = {
    SY_SCHEMA("SwiGLU", 28, 2, 2, 1, 1, SY_ATTRS(a_swiglu), infer_swiglu, SY_NO_INPLACE, 0),
    SY_SCHEMA("CausalConvWithState", 27, 2, 4, 1, 2, SY_ATTRS(a_ccs), infer_ccs, SY_NO_INPLACE, 0),
};

static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("SwiGLU", 1, 0, SY_DT_MASK_FLOATS, 0, prepare_swiglu, run_swiglu, sy_release_free),
    SY_CPU_KERNEL("CausalConvWithState", 1, 0, SY_DT_MASK_FLOATS, 0, prepare_ccs, run_ccs, sy_release_free),
};

sy_status *nn_gated_register(const sy_host_api *host, sy_plugin *p)
{
    (void)host;
    return sy_register_tables(H, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
