/*
 * LinearAttention (27): recurrent (linear) attention with a carried state,
 * the four update rules of the spec. Per kv head the state S [d_k, d_v]
 * (past_state, or zeros) runs over the T steps:
 *   gated, gated_delta:  S *= exp(decay_t)          (decay per head or per key dim)
 *   delta, gated_delta:  v_t = beta_t (v_t - S^T (erase_gate_t * k_t))
 *   every rule:          S += k_t v_t^T
 *   output_t = scale q_t^T S   (query head h reads kv head h / (q_heads / kv_heads))
 * Q, K, V are [B, T, heads * dim]; decay [B, T, kv_heads or kv_heads d_k];
 * beta [B, T, kv_heads or 1]. Computed in fp32 (float16 through the SDK's
 * fp32 scope); present_state has past_state's type (query's without one).
 */
#include "nn_internal.h"

#include <math.h>
#include <stdlib.h>

enum { LA_Q, LA_K, LA_V, LA_PAST, LA_DECAY, LA_BETA, LA_ERASE };

typedef struct la_state {
    int64_t hq, hkv, dk, dv;
    bool gating, delta;
    float scale;
} la_state;

static const sy_tensor *la_in(const sy_node *n, uint32_t i)
{
    return i < H->node_num_inputs(n) ? H->node_input(n, i) : NULL;
}

static sy_status *la_check(const sy_node *n, la_state *s)
{
    const sy_tensor *q, *k, *v;
    SY_TRY(sy_need_input(H, n, LA_Q, &q));
    SY_TRY(sy_need_input(H, n, LA_K, &k));
    SY_TRY(sy_need_input(H, n, LA_V, &v));
    if (!sy_dt_is_float(q->dtype) || k->dtype != q->dtype || v->dtype != q->dtype)
        return ERR(SY_ERR_TYPE, "query, key and value must share one float type");
    if (q->rank != 3 || k->rank != 3 || v->rank != 3)
        return ERR(SY_ERR_SHAPE, "query, key and value must be rank 3 [batch, steps, heads * dim]");
    s->hq = sy_attr_int_or(H, n, "q_num_heads", 0);
    s->hkv = sy_attr_int_or(H, n, "kv_num_heads", 0);
    if (s->hq <= 0 || s->hkv <= 0 || s->hq % s->hkv)
        return ERR(SY_ERR_INVALID_MODEL, "q_num_heads (%lld) must be a positive multiple of kv_num_heads (%lld)",
                   (long long)s->hq, (long long)s->hkv);
    int64_t B = q->dims[0], T = q->dims[1];
    if (k->dims[0] != B || v->dims[0] != B || k->dims[1] != T || v->dims[1] != T)
        return ERR(SY_ERR_SHAPE, "query, key and value must agree on batch and steps");
    if (q->dims[2] % s->hq || v->dims[2] % s->hkv || k->dims[2] != s->hkv * (q->dims[2] / s->hq))
        return ERR(SY_ERR_SHAPE, "query [.., %lld] / key [.., %lld] / value [.., %lld] do not split into %lld query and "
                   "%lld kv heads of one key dim", (long long)q->dims[2], (long long)k->dims[2], (long long)v->dims[2],
                   (long long)s->hq, (long long)s->hkv);
    s->dk = q->dims[2] / s->hq;
    s->dv = v->dims[2] / s->hkv;
    char rule[16];
    sy_attr_string_or(H, n, "update_rule", "gated_delta", rule, sizeof rule);
    if (strcmp(rule, "linear") && strcmp(rule, "gated") && strcmp(rule, "delta") && strcmp(rule, "gated_delta"))
        return ERR(SY_ERR_INVALID_MODEL, "update_rule must be linear, gated, delta or gated_delta, got \"%s\"", rule);
    s->gating = !strcmp(rule, "gated") || !strcmp(rule, "gated_delta");
    s->delta = !strcmp(rule, "delta") || !strcmp(rule, "gated_delta");
    const sy_tensor *past = la_in(n, LA_PAST), *dec = la_in(n, LA_DECAY), *beta = la_in(n, LA_BETA);
    const sy_tensor *er = la_in(n, LA_ERASE);
    if (s->gating != (dec != NULL))
        return ERR(SY_ERR_INVALID_MODEL, "update_rule \"%s\" %s the decay input", rule, s->gating ? "needs" : "forbids");
    if (s->delta != (beta != NULL))
        return ERR(SY_ERR_INVALID_MODEL, "update_rule \"%s\" %s the beta input", rule, s->delta ? "needs" : "forbids");
    if (er && !s->delta)
        return ERR(SY_ERR_INVALID_MODEL, "update_rule \"%s\" forbids the erase_gate input", rule);
    if (past && (!sy_dt_is_float(past->dtype) || past->rank != 4 || past->dims[0] != B || past->dims[1] != s->hkv ||
                 past->dims[2] != s->dk || past->dims[3] != s->dv))
        return ERR(SY_ERR_SHAPE, "past_state must be float [%lld, %lld, %lld, %lld]", (long long)B, (long long)s->hkv,
                   (long long)s->dk, (long long)s->dv);
    if (dec && (dec->dtype != q->dtype || dec->rank != 3 || dec->dims[0] != B || dec->dims[1] != T ||
                (dec->dims[2] != s->hkv && dec->dims[2] != s->hkv * s->dk)))
        return ERR(SY_ERR_SHAPE, "decay must be [%lld, %lld, %lld or %lld]", (long long)B, (long long)T,
                   (long long)s->hkv, (long long)(s->hkv * s->dk));
    if (beta && (beta->dtype != q->dtype || beta->rank != 3 || beta->dims[0] != B || beta->dims[1] != T ||
                 (beta->dims[2] != s->hkv && beta->dims[2] != 1)))
        return ERR(SY_ERR_SHAPE, "beta must be [%lld, %lld, %lld or 1]", (long long)B, (long long)T, (long long)s->hkv);
    if (er && (er->dtype != q->dtype || er->rank != 3 || er->dims[0] != B || er->dims[1] != T ||
               er->dims[2] != s->hkv * s->dk))
        return ERR(SY_ERR_SHAPE, "erase_gate must be [%lld, %lld, %lld]", (long long)B, (long long)T,
                   (long long)(s->hkv * s->dk));
    float sc = sy_attr_float_or(H, n, "scale", 0.0f);
    s->scale = sc != 0.0f ? sc : 1.0f / sqrtf((float)s->dk);
    return NULL;
}

static sy_status *infer_la(sy_node *n)
{
    la_state s;
    SY_TRY(la_check(n, &s));
    const sy_tensor *q = H->node_input(n, LA_Q), *past = la_in(n, LA_PAST);
    int64_t od[3] = {q->dims[0], q->dims[1], s.hq * s.dv};
    SY_TRY(H->node_set_output(n, 0, q->dtype, 3, od));
    if (H->node_num_outputs(n) > 1) {
        int64_t sd[4] = {q->dims[0], s.hkv, s.dk, s.dv};
        SY_TRY(H->node_set_output(n, 1, past ? past->dtype : q->dtype, 4, sd));
    }
    return NULL;
}

static sy_status *prepare_la(sy_node *n, void **state)
{
    la_state *s = malloc(sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = la_check(n, s);
    if (st) {
        free(s);
        return st;
    }
    /* the fp32 shadows, then S of every (batch, kv head), the retrieved row and v_t */
    int64_t B = H->node_input(n, LA_Q)->dims[0];
    H->node_set_scratch(n, sy_f32_scope_bytes(H, n) + (size_t)(B * s->hkv * s->dk * s->dv + 2 * s->dv) * sizeof(float));
    *state = s;
    return NULL;
}

static sy_status *la_f32(void *state, const sy_kernel_io *io)
{
    const la_state *s = state;
    const sy_tensor *q = io->inputs[LA_Q];
    const float *qd = q->data, *kd = io->inputs[LA_K]->data, *vd = io->inputs[LA_V]->data;
    const sy_tensor *past = io->n_inputs > LA_PAST ? io->inputs[LA_PAST] : NULL;
    const sy_tensor *dec = io->n_inputs > LA_DECAY ? io->inputs[LA_DECAY] : NULL;
    const sy_tensor *beta = io->n_inputs > LA_BETA ? io->inputs[LA_BETA] : NULL;
    const sy_tensor *er = io->n_inputs > LA_ERASE ? io->inputs[LA_ERASE] : NULL;
    sy_tensor *out = io->outputs[0], *pres = io->n_outputs > 1 ? io->outputs[1] : NULL;
    int64_t B = q->dims[0], T = q->dims[1], hq = s->hq, hkv = s->hkv, dk = s->dk, dv = s->dv, g = hq / hkv;
    size_t ssz = (size_t)(B * hkv * dk * dv);
    float *S = (float *)((char *)io->scratch + io->scratch_bytes) - ssz - 2 * (size_t)dv, *ret = S + ssz, *vt = ret + dv;
    if (past)
        memcpy(S, past->data, ssz * sizeof(float));
    else
        for (size_t i = 0; i < ssz; i++)
            S[i] = 0.0f;
    float *od = out->data;
    for (int64_t b = 0; b < B; b++)
        for (int64_t t = 0; t < T; t++) {
            for (int64_t h = 0; h < hkv; h++) {
                float *Sh = S + (b * hkv + h) * dk * dv;
                const float *kt = kd + (b * T + t) * hkv * dk + h * dk;
                const float *vsrc = vd + (b * T + t) * hkv * dv + h * dv;
                if (s->gating) {
                    int64_t dl = dec->dims[2];
                    const float *gt = (const float *)dec->data + (b * T + t) * dl;
                    for (int64_t d = 0; d < dk; d++) {
                        float f = expf(dl == hkv ? gt[h] : gt[h * dk + d]);
                        for (int64_t m = 0; m < dv; m++)
                            Sh[d * dv + m] *= f;
                    }
                }
                for (int64_t m = 0; m < dv; m++)
                    vt[m] = vsrc[m];
                if (s->delta) {
                    const float *eg = er ? (const float *)er->data + (b * T + t) * hkv * dk + h * dk : NULL;
                    for (int64_t m = 0; m < dv; m++)
                        ret[m] = 0.0f;
                    for (int64_t d = 0; d < dk; d++) {
                        float ke = eg ? eg[d] * kt[d] : kt[d];
                        for (int64_t m = 0; m < dv; m++)
                            ret[m] += Sh[d * dv + m] * ke;
                    }
                    int64_t bl = beta->dims[2];
                    float bt = ((const float *)beta->data)[(b * T + t) * bl + (bl == 1 ? 0 : h)];
                    for (int64_t m = 0; m < dv; m++)
                        vt[m] = bt * (vt[m] - ret[m]);
                }
                for (int64_t d = 0; d < dk; d++)
                    for (int64_t m = 0; m < dv; m++)
                        Sh[d * dv + m] += kt[d] * vt[m];
            }
            for (int64_t h = 0; h < hq; h++) {
                const float *Sh = S + (b * hkv + h / g) * dk * dv;
                const float *qt = qd + (b * T + t) * hq * dk + h * dk;
                float *o = od + (b * T + t) * hq * dv + h * dv;
                for (int64_t m = 0; m < dv; m++) {
                    float acc = 0.0f;
                    for (int64_t d = 0; d < dk; d++)
                        acc += qt[d] * Sh[d * dv + m];
                    o[m] = s->scale * acc;
                }
            }
        }
    if (pres)
        memcpy(pres->data, S, ssz * sizeof(float));
    return NULL;
}

static sy_status *run_la(void *state, const sy_kernel_io *io) { return sy_run_as_f32(H, state, io, la_f32); }

static const sy_attr_def a_la[] = {
    {"chunk_size", SY_ATTR_INT, false}, {"kv_num_heads", SY_ATTR_INT, true}, {"q_num_heads", SY_ATTR_INT, true},
    {"scale", SY_ATTR_FLOAT, false},    {"update_rule", SY_ATTR_STRING, false},
};

static const sy_op_schema schemas[] = {
    SY_SCHEMA("LinearAttention", 27, 3, 7, 1, 2, SY_ATTRS(a_la), infer_la, SY_NO_INPLACE, 0),
};

static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("LinearAttention", 1, 0, SY_DT_MASK_FLOATS, 0, prepare_la, run_la, sy_release_free),
};

sy_status *nn_linear_attention_register(const sy_host_api *host, sy_plugin *p)
{
    (void)host;
    return sy_register_tables(H, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
