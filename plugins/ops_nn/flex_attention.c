/*
 * FlexAttention (ai.onnx.preview 1) without its modifier graphs:
 * Y = softmax(scale Q K^T) V per head, Q [B, Hq, L, E], K [B, Hkv, S, E],
 * V [B, Hkv, S, Ev] -> Y [B, Hq, L, Ev]; query head h reads kv head
 * h / (Hq / Hkv); scale defaults to 1/sqrt(E). Computed in double,
 * stored in the inputs' float type. The score_mod / mask_mod / prob_mod
 * graph attributes need subgraph execution, which the core does not have
 * yet: the schema does not list them, so the core refuses a node that has
 * one, naming the attribute (the host API cannot see graph attributes).
 */
#include "nn_internal.h"

#include <math.h>
#include <stdlib.h>

#define PREVIEW "ai.onnx.preview"

typedef struct flex_state {
    double scale;
} flex_state;

static sy_status *flex_check(const sy_node *n, double *scale)
{
    const sy_tensor *q, *k, *v;
    SY_TRY(sy_need_input(H, n, 0, &q));
    SY_TRY(sy_need_input(H, n, 1, &k));
    SY_TRY(sy_need_input(H, n, 2, &v));
    if (!sy_dt_is_float(q->dtype) || k->dtype != q->dtype || v->dtype != q->dtype)
        return ERR(SY_ERR_TYPE, "Q, K and V must share one float type");
    if (q->rank != 4 || k->rank != 4 || v->rank != 4)
        return ERR(SY_ERR_SHAPE, "Q, K and V must be rank 4 [batch, heads, length, dim]");
    if (k->dims[0] != q->dims[0] || v->dims[0] != q->dims[0] || k->dims[1] != v->dims[1] || k->dims[2] != v->dims[2] ||
        k->dims[3] != q->dims[3] || k->dims[1] <= 0 || q->dims[1] % k->dims[1])
        return ERR(SY_ERR_SHAPE, "Q [B, Hq, L, E], K [B, Hkv, S, E], V [B, Hkv, S, Ev] with Hq a multiple of Hkv "
                   "do not match");
    float sc = sy_attr_float_or(H, n, "scale", 0.0f);
    *scale = sc != 0.0f ? sc : 1.0 / sqrt((double)q->dims[3]);
    return NULL;
}

static sy_status *infer_flex(sy_node *n)
{
    double scale;
    SY_TRY(flex_check(n, &scale));
    const sy_tensor *q = H->node_input(n, 0), *v = H->node_input(n, 2);
    int64_t d[4] = {q->dims[0], q->dims[1], q->dims[2], v->dims[3]};
    return H->node_set_output(n, 0, q->dtype, 4, d);
}

static sy_status *prepare_flex(sy_node *n, void **state)
{
    flex_state *s = malloc(sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = flex_check(n, &s->scale);
    if (st) {
        free(s);
        return st;
    }
    const sy_tensor *k = H->node_input(n, 1), *v = H->node_input(n, 2);
    H->node_set_scratch(n, (size_t)(k->dims[2] + v->dims[3]) * sizeof(double));
    *state = s;
    return NULL;
}

static sy_status *run_flex(void *state, const sy_kernel_io *io)
{
    const flex_state *s = state;
    const sy_tensor *q = io->inputs[0], *k = io->inputs[1], *v = io->inputs[2];
    sy_tensor *y = io->outputs[0];
    int64_t B = q->dims[0], hq = q->dims[1], L = q->dims[2], E = q->dims[3];
    int64_t hkv = k->dims[1], S = k->dims[2], Ev = v->dims[3], g = hq / hkv;
    double *p = io->scratch, *acc = p + S;
    sy_dtype dt = q->dtype;
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < hq; h++) {
            int64_t kh = h / g;
            size_t qo = (size_t)((b * hq + h) * L) * (size_t)E, ko = (size_t)((b * hkv + kh) * S) * (size_t)E;
            size_t vo = (size_t)((b * hkv + kh) * S) * (size_t)Ev, yo = (size_t)((b * hq + h) * L) * (size_t)Ev;
            for (int64_t l = 0; l < L; l++) {
                double mx = -INFINITY, sum = 0;
                for (int64_t j = 0; j < S; j++) {
                    double dot = 0;
                    for (int64_t e = 0; e < E; e++)
                        dot += sy_load_f64(q->data, dt, qo + (size_t)(l * E + e)) *
                               sy_load_f64(k->data, dt, ko + (size_t)(j * E + e));
                    p[j] = dot * s->scale;
                    mx = p[j] > mx ? p[j] : mx;
                }
                for (int64_t j = 0; j < S; j++) {
                    p[j] = exp(p[j] - mx);
                    sum += p[j];
                }
                for (int64_t e = 0; e < Ev; e++)
                    acc[e] = 0;
                for (int64_t j = 0; j < S; j++)
                    for (int64_t e = 0; e < Ev; e++)
                        acc[e] += p[j] / sum * sy_load_f64(v->data, dt, vo + (size_t)(j * Ev + e));
                for (int64_t e = 0; e < Ev; e++)
                    sy_store_f64(y->data, dt, yo + (size_t)(l * Ev + e), acc[e]);
            }
        }
    return NULL;
}

/* score_mod, mask_mod, prob_mod: deliberately absent (see above) */
static const sy_attr_def a_flex[] = {{"scale", SY_ATTR_FLOAT, false}};

static const sy_op_schema schemas[] = {
    {sizeof(sy_op_schema), PREVIEW, "FlexAttention", 1, 3, 3, 1, 1, SY_ATTRS(a_flex), infer_flex, SY_NO_INPLACE, 0,
     "scaled dot-product attention (modifier graphs not supported)"},
};

static const sy_kernel_def kernels[] = {
    {sizeof(sy_kernel_def), PREVIEW, "FlexAttention", 1, 0, "cpu_ref", SY_DT_MASK_FLOATS, 0, 0, NULL, prepare_flex,
     run_flex, sy_release_free, NULL},
};

sy_status *nn_flex_attention_register(const sy_host_api *host, sy_plugin *p)
{
    (void)host;
    return sy_register_tables(H, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
