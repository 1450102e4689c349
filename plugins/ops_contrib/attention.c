/*
 * com.microsoft Attention (fp32): multi-head self-attention with the QKV
 * projection fused in, GPT-2's key/value cache (past in, present out), a
 * causal (unidirectional) mask and the key-padding masks of ONNX Runtime.
 *
 *   inputs   0 input [B, S, Hin]   1 weights [Hin, Hq + Hk + Hv]   2 bias [Hq + Hk + Hv]
 *            3 mask_index (int32): [B] end positions, [2B] end then start
 *              positions, [B, T] 0/1 key padding ([B, 1] / [1, 1]: none),
 *              [B, S, T] 0/1 per query
 *            4 past [2, B, N, P, Hd]   5 attention_bias [B or 1, N, S, T]
 *   outputs  0 [B, S, Hv]   1 present [2, B, N, P + S, Hd] (past ++ this step's K, V)
 *
 * scores = scale * Q K^T + mask (+ attention_bias), softmax over T = P + S,
 * times V. As in ONNX Runtime's CPU kernel, a masked key gets
 * mask_filter_value, and the causal mask adds mask_filter_value once more
 * to keys after the query's position P + s.
 */
#include "contrib.h"

#include <math.h>
#include <stdlib.h>

enum { A_IN, A_W, A_BIAS, A_MASK, A_PAST, A_ABIAS, A_PAST_LEN };

typedef struct attn_shape {
    int64_t B, S, hin, N, qh, kh, vh, P, T;
} attn_shape;

static const sy_tensor *in_at(const sy_node *n, uint32_t i)
{
    return i < H->node_num_inputs(n) ? H->node_input(n, i) : NULL;
}

static sy_status *attn_shapes(const sy_node *n, attn_shape *a)
{
    const sy_tensor *x, *w;
    SY_TRY(contrib_need_f32(n, A_IN, "input", 3, 3, &x));
    SY_TRY(contrib_need_f32(n, A_W, "weights", 2, 2, &w));
    int64_t heads = sy_attr_int_or(H, n, "num_heads", 0);
    if (heads <= 0)
        return ERR(SY_ERR_INVALID_MODEL, "num_heads must be positive, got %lld", (long long)heads);
    if (sy_attr_int_or(H, n, "do_rotary", 0) != 0)
        return ERR(SY_ERR_UNSUPPORTED, "do_rotary=1 is not supported by this kernel");
    if (sy_attr_int_or(H, n, "past_present_share_buffer", 0) != 0 || in_at(n, A_PAST_LEN))
        return ERR(SY_ERR_UNSUPPORTED, "past_present_share_buffer / past_sequence_length are not supported");
    a->B = x->dims[0];
    a->S = x->dims[1];
    a->hin = x->dims[2];
    a->N = heads;
    if (w->dims[0] != a->hin)
        return ERR(SY_ERR_SHAPE, "weights has %lld rows, input's hidden size is %lld", (long long)w->dims[0],
                   (long long)a->hin);
    int64_t qkv[3];
    int64_t nq = sy_attr_ints_copy(H, n, "qkv_hidden_sizes", qkv, 3);
    if (nq < 0) {
        if (w->dims[1] % 3)
            return ERR(SY_ERR_SHAPE, "weights has %lld columns, not a multiple of 3 (Q, K, V)", (long long)w->dims[1]);
        qkv[0] = qkv[1] = qkv[2] = w->dims[1] / 3;
    } else if (nq != 3) {
        return ERR(SY_ERR_INVALID_MODEL, "qkv_hidden_sizes must have 3 values, got %lld", (long long)nq);
    }
    if (qkv[0] != qkv[1] || qkv[0] <= 0 || qkv[2] <= 0 || qkv[0] + qkv[1] + qkv[2] != w->dims[1])
        return ERR(SY_ERR_SHAPE, "qkv_hidden_sizes %lld/%lld/%lld must be positive, Q = K, and sum to the %lld "
                   "columns of weights", (long long)qkv[0], (long long)qkv[1], (long long)qkv[2], (long long)w->dims[1]);
    if (qkv[0] % heads || qkv[2] % heads)
        return ERR(SY_ERR_SHAPE, "hidden sizes %lld (Q, K) and %lld (V) must be multiples of num_heads %lld",
                   (long long)qkv[0], (long long)qkv[2], (long long)heads);
    a->qh = qkv[0];
    a->kh = qkv[1];
    a->vh = qkv[2];
    const sy_tensor *b = in_at(n, A_BIAS);
    if (b && (b->dtype != SY_DT_FLOAT32 || b->rank != 1 || b->dims[0] != w->dims[1]))
        return ERR(SY_ERR_SHAPE, "bias must be a float32 vector of the %lld weight columns", (long long)w->dims[1]);
    a->P = 0;
    const sy_tensor *past = in_at(n, A_PAST);
    if (past) {
        if (a->qh != a->vh)
            return ERR(SY_ERR_UNSUPPORTED, "past needs equal Q, K and V hidden sizes");
        if (past->dtype != SY_DT_FLOAT32 || past->rank != 5 || past->dims[0] != 2 || past->dims[1] != a->B ||
            past->dims[2] != heads || past->dims[4] != a->qh / heads)
            return ERR(SY_ERR_SHAPE, "past must be float32 [2, %lld, %lld, past_sequence, %lld]", (long long)a->B,
                       (long long)heads, (long long)(a->qh / heads));
        a->P = past->dims[3];
    }
    a->T = a->P + a->S;
    const sy_tensor *m = in_at(n, A_MASK);
    if (m) {
        bool ok = m->dtype == SY_DT_INT32;
        if (ok && m->rank == 1)
            ok = m->dims[0] == a->B || m->dims[0] == 2 * a->B;
        else if (ok && m->rank == 2)
            ok = (m->dims[0] == a->B && (m->dims[1] == a->T || m->dims[1] == 1)) ||
                 (m->dims[0] == 1 && m->dims[1] == 1);
        else if (ok && m->rank == 3)
            ok = m->dims[0] == a->B && m->dims[1] == a->S && m->dims[2] == a->T;
        else if (ok && m->rank == 4)
            return ERR(SY_ERR_UNSUPPORTED, "the 4-D (Megatron) mask_index is not supported");
        else
            ok = false;
        if (!ok)
            return ERR(SY_ERR_SHAPE, "mask_index must be int32 [%lld], [%lld], [%lld, %lld] or [%lld, %lld, %lld]",
                       (long long)a->B, (long long)(2 * a->B), (long long)a->B, (long long)a->T, (long long)a->B,
                       (long long)a->S, (long long)a->T);
    }
    const sy_tensor *ab = in_at(n, A_ABIAS);
    if (ab && (ab->dtype != SY_DT_FLOAT32 || ab->rank != 4 || (ab->dims[0] != a->B && ab->dims[0] != 1) ||
               ab->dims[1] != heads || ab->dims[2] != a->S || ab->dims[3] != a->T))
        return ERR(SY_ERR_SHAPE, "attention_bias must be float32 [%lld or 1, %lld, %lld, %lld]", (long long)a->B,
                   (long long)heads, (long long)a->S, (long long)a->T);
    return NULL;
}

static sy_status *infer_attention(sy_node *n)
{
    attn_shape a;
    SY_TRY(attn_shapes(n, &a));
    int64_t od[3] = {a.B, a.S, a.vh};
    SY_TRY(H->node_set_output(n, 0, SY_DT_FLOAT32, 3, od));
    if (H->node_num_outputs(n) > 1) {
        if (a.qh != a.vh)
            return ERR(SY_ERR_UNSUPPORTED, "present needs equal Q, K and V hidden sizes");
        int64_t pd[5] = {2, a.B, a.N, a.T, a.qh / a.N};
        SY_TRY(H->node_set_output(n, 1, SY_DT_FLOAT32, 5, pd));
    }
    return NULL;
}

typedef struct attn_state {
    attn_shape a;
    bool causal;
    float scale, filter;
} attn_state;

/* scratch (floats): qkv [B*S, Hq+Hk+Hv], K and V of one head [T, Hd],
 * mask of one batch row [S, T], scores [S, T] */
static size_t attn_scratch_floats(const attn_shape *a)
{
    int64_t hd = a->qh / a->N, vd = a->vh / a->N;
    return (size_t)(a->B * a->S * (a->qh + a->kh + a->vh) + a->T * (hd + vd) + 2 * a->S * a->T);
}

static sy_status *prepare_attention(sy_node *n, void **state)
{
    attn_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = attn_shapes(n, &s->a);
    if (st) {
        free(s);
        return st;
    }
    s->causal = sy_attr_int_or(H, n, "unidirectional", 0) != 0;
    float sc = sy_attr_float_or(H, n, "scale", 0.0f);
    s->scale = sc != 0.0f ? sc : 1.0f / sqrtf((float)(s->a.qh / s->a.N));
    s->filter = sy_attr_float_or(H, n, "mask_filter_value", -10000.0f);
    H->node_set_scratch(n, attn_scratch_floats(&s->a) * sizeof(float));
    *state = s;
    return NULL;
}

/* mask row block [S, T] of batch b: 0 (attend) or the filter value */
static void build_mask(const attn_state *s, const sy_tensor *m, int64_t b, float *mask)
{
    const attn_shape *a = &s->a;
    int64_t S = a->S, T = a->T;
    for (int64_t i = 0; i < S * T; i++)
        mask[i] = 0.0f;
    if (m) {
        const int32_t *md = m->data;
        if (m->rank == 3) {
            for (int64_t i = 0; i < S * T; i++)
                mask[i] = md[b * S * T + i] > 0 ? 0.0f : s->filter;
        } else if (m->rank == 2 && m->dims[1] == T && T != 1) {
            for (int64_t t = 0; t < T; t++)
                mask[t] = md[b * T + t] > 0 ? 0.0f : s->filter;
        } else if (m->rank == 1) {
            int64_t end = md[b], start = m->dims[0] == 2 * a->B ? md[b + a->B] : 0;
            for (int64_t t = 0; t < T; t++)
                mask[t] = t >= end || t < start ? s->filter : 0.0f;
        }
        if (m->rank != 3)
            for (int64_t q = 1; q < S; q++)
                memcpy(mask + q * T, mask, (size_t)T * sizeof(float));
    }
    if (s->causal)
        for (int64_t q = 0; q < S; q++)
            for (int64_t t = a->P + q + 1; t < T; t++)
                mask[q * T + t] += s->filter;
}

static sy_status *run_attention(void *state, const sy_kernel_io *io)
{
    const attn_state *s = state;
    const attn_shape *a = &s->a;
    const sy_tensor *m = io->n_inputs > A_MASK ? io->inputs[A_MASK] : NULL;
    const sy_tensor *past = io->n_inputs > A_PAST ? io->inputs[A_PAST] : NULL;
    const sy_tensor *ab = io->n_inputs > A_ABIAS ? io->inputs[A_ABIAS] : NULL;
    const sy_tensor *bias = io->n_inputs > A_BIAS ? io->inputs[A_BIAS] : NULL;
    sy_tensor *present = io->n_outputs > 1 ? io->outputs[1] : NULL;
    if (m && m->rank == 2 && m->dims[1] == 1)
        m = NULL; /* the dummy mask: none */
    int64_t B = a->B, S = a->S, T = a->T, P = a->P, N = a->N;
    int64_t hd = a->qh / N, vd = a->vh / N, ld = a->qh + a->kh + a->vh;
    float *qkv = io->scratch, *kc = qkv + B * S * ld, *vc = kc + T * hd, *mask = vc + T * vd, *sc = mask + S * T;
    /* QKV = input W + bias */
    sy_gemm_f32(false, false, B * S, ld, a->hin, 1.0f, io->inputs[A_IN]->data, a->hin, io->inputs[A_W]->data, ld,
                0.0f, qkv, ld);
    if (bias) {
        const float *bd = bias->data;
        for (int64_t r = 0; r < B * S; r++)
            for (int64_t c = 0; c < ld; c++)
                qkv[r * ld + c] += bd[c];
    }
    bool use_mask = m || (s->causal && S > 1);
    const float *pd = past ? past->data : NULL;
    float *prd = present ? present->data : NULL;
    float *out = io->outputs[0]->data;
    for (int64_t b = 0; b < B; b++) {
        if (use_mask)
            build_mask(s, m, b, mask);
        for (int64_t h = 0; h < N; h++) {
            /* K and V of this head over the past and this step */
            for (int64_t t = 0; t < T; t++) {
                float *kr = kc + t * hd, *vr = vc + t * vd;
                if (t < P) {
                    memcpy(kr, pd + ((b * N + h) * P + t) * hd, (size_t)hd * sizeof(float));
                    memcpy(vr, pd + (((B + b) * N + h) * P + t) * vd, (size_t)vd * sizeof(float));
                } else {
                    const float *row = qkv + (b * S + t - P) * ld;
                    memcpy(kr, row + a->qh + h * hd, (size_t)hd * sizeof(float));
                    memcpy(vr, row + a->qh + a->kh + h * vd, (size_t)vd * sizeof(float));
                }
            }
            if (prd) {
                memcpy(prd + (b * N + h) * T * hd, kc, (size_t)(T * hd) * sizeof(float));
                memcpy(prd + ((B + b) * N + h) * T * vd, vc, (size_t)(T * vd) * sizeof(float));
            }
            sy_gemm_f32(false, true, S, T, hd, s->scale, qkv + b * S * ld + h * hd, ld, kc, hd, 0.0f, sc, T);
            const float *abd = ab ? (const float *)ab->data + (((ab->dims[0] == 1 ? 0 : b) * N + h) * S * T) : NULL;
            for (int64_t q = 0; q < S; q++) {
                float *row = sc + q * T, mx = -INFINITY;
                for (int64_t t = 0; t < T; t++) {
                    if (use_mask)
                        row[t] += mask[q * T + t];
                    if (abd)
                        row[t] += abd[q * T + t];
                    mx = row[t] > mx ? row[t] : mx;
                }
                double sum = 0;
                for (int64_t t = 0; t < T; t++) {
                    row[t] = expf(row[t] - mx);
                    sum += row[t];
                }
                float inv = (float)(1.0 / sum);
                for (int64_t t = 0; t < T; t++)
                    row[t] *= inv;
            }
            sy_gemm_f32(false, false, S, vd, T, 1.0f, sc, T, vc, vd, 0.0f, out + b * S * a->vh + h * vd, a->vh);
        }
    }
    return NULL;
}

static const sy_attr_def a_attn[] = {
    ATTR_REQ("num_heads", INT),     ATTR("unidirectional", INT),   ATTR("qkv_hidden_sizes", INTS),
    ATTR("mask_filter_value", FLOAT), ATTR("scale", FLOAT),        ATTR("do_rotary", INT),
    ATTR("past_present_share_buffer", INT), ATTR("rotary_embedding_dim", INT),
};

static const sy_op_schema schemas[] = {
    CSCHEMA(CONTRIB_DOMAIN, "Attention", 1, 2, 7, 1, 2, SY_ATTRS(a_attn), infer_attention,
            "multi-head self-attention with fused QKV projection, causal/padding masks and a KV cache"),
};

static const sy_kernel_def kernels[] = {
    CKERNEL(CONTRIB_DOMAIN, "Attention", F32, 0, prepare_attention, run_attention, sy_release_free),
};

const contrib_tables contrib_attention_tables = {schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels)};
