/*
 * ops_nn / attention.c: Attention (23, 24) and RotaryEmbedding (23), fp32
 * kernels (fp16/bf16/fp64 through the sy_sdk fp32 scope).
 *
 * Attention: Q (B, Hq, S, D) or (B, S, Hq*D) with q_num_heads/kv_num_heads;
 * K/V likewise with Hkv heads; past_key/past_value are concatenated in front
 * of K/V along the sequence and returned as present_key/present_value.
 * scores = (Q K^T) * scale (default 1/sqrt(D)), softcap c > 0 maps s to
 * c * tanh(s / c) before the bias; the bias is attn_mask (bool: false =
 * -inf; float: added; numpy-broadcast to (B, Hq, S, T) and padded with -inf
 * when its last dim is shorter than T), the causal mask (bottom-right: key j
 * is visible to query i iff j <= i + offset, offset = past length, or
 * nonpad_kv_seqlen[b] - S with an external cache) and the padding mask of
 * nonpad_kv_seqlen. Grouped-query heads share K/V head h * Hkv / Hq.
 * qk_matmul_output: 0 scores (after softcap), 1 or 2 scores + bias, 3 the
 * softmax. A fully masked row gets probabilities 0 (so Y is 0 there).
 *
 * RotaryEmbedding: X (B, H, S, D) or (B, S, H*D) with num_heads; cos/sin
 * caches indexed by position_ids (or given per batch and position); the
 * first rotary_embedding_dim dims of each head rotate as halves or
 * interleaved pairs.
 */
#include "nn_internal.h"

#include <math.h>
#include <stdlib.h>

/* ======================================================================== */
/* Attention                                                                */
/* ======================================================================== */

typedef struct att_geom {
    bool three_d;
    int64_t B, Hq, Hkv, S, Skv, P, T, D, Dv;
} att_geom;

typedef struct att_state {
    float scale; /* <= 0: 1/sqrt(D) */
    float softcap;
    bool causal;
    int64_t mode;
    int64_t q_heads, kv_heads;
} att_state;

static const sy_tensor *opt_input(const sy_node *n, uint32_t i)
{
    return i < H->node_num_inputs(n) ? H->node_input(n, i) : NULL;
}

static sy_status *att_geometry(const att_state *s, const sy_tensor *q, const sy_tensor *k, const sy_tensor *v,
                               const sy_tensor *pk, const sy_tensor *pv, att_geom *g)
{
    if (q->rank != k->rank || q->rank != v->rank || (q->rank != 3 && q->rank != 4))
        return ERR(SY_ERR_SHAPE, "Q, K and V must all be 3-D or all 4-D (got ranks %d, %d, %d)", (int)q->rank,
                   (int)k->rank, (int)v->rank);
    /* the kernel reads Q, K and V (and the past) as one element type */
    if (k->dtype != q->dtype || v->dtype != q->dtype || (pk && pk->dtype != q->dtype) || (pv && pv->dtype != q->dtype))
        return ERR(SY_ERR_TYPE, "Q, K and V (and past_key/past_value) must share one element type (got %s, %s, %s)",
                   sy_dt_name(q->dtype), sy_dt_name(k->dtype), sy_dt_name(v->dtype));
    g->three_d = q->rank == 3;
    g->B = q->dims[0];
    if (k->dims[0] != g->B || v->dims[0] != g->B)
        return ERR(SY_ERR_SHAPE, "Q, K and V must share the batch size %lld", (long long)g->B);
    if (g->three_d) {
        if (s->q_heads <= 0 || s->kv_heads <= 0)
            return ERR(SY_ERR_INVALID_ARGUMENT, "3-D inputs need q_num_heads and kv_num_heads");
        if (q->dims[2] % s->q_heads || k->dims[2] % s->kv_heads || v->dims[2] % s->kv_heads)
            return ERR(SY_ERR_SHAPE, "hidden sizes must divide by the head counts (q %lld / %lld, k %lld and v %lld "
                       "/ %lld)", (long long)q->dims[2], (long long)s->q_heads, (long long)k->dims[2],
                       (long long)v->dims[2], (long long)s->kv_heads);
        g->Hq = s->q_heads;
        g->Hkv = s->kv_heads;
        g->S = q->dims[1];
        g->Skv = k->dims[1];
        g->D = q->dims[2] / g->Hq;
        g->Dv = v->dims[2] / g->Hkv;
        if (k->dims[2] / g->Hkv != g->D)
            return ERR(SY_ERR_SHAPE, "K's head size %lld differs from Q's %lld", (long long)(k->dims[2] / g->Hkv),
                       (long long)g->D);
        if (v->dims[1] != g->Skv)
            return ERR(SY_ERR_SHAPE, "K and V must have the same sequence length");
    } else {
        g->Hq = q->dims[1];
        g->Hkv = k->dims[1];
        g->S = q->dims[2];
        g->Skv = k->dims[2];
        g->D = q->dims[3];
        g->Dv = v->dims[3];
        if (k->dims[3] != g->D)
            return ERR(SY_ERR_SHAPE, "K's head size %lld differs from Q's %lld", (long long)k->dims[3], (long long)g->D);
        if (v->dims[1] != g->Hkv || v->dims[2] != g->Skv)
            return ERR(SY_ERR_SHAPE, "V must have K's heads and sequence length");
    }
    if (g->Hkv <= 0 || g->Hq % g->Hkv)
        return ERR(SY_ERR_SHAPE, "q heads (%lld) must be a multiple of kv heads (%lld)", (long long)g->Hq,
                   (long long)g->Hkv);
    g->P = 0;
    if (pk || pv) {
        if (!pk || !pv)
            return ERR(SY_ERR_INVALID_ARGUMENT, "past_key and past_value must be given together");
        if (pk->rank != 4 || pv->rank != 4 || pk->dims[0] != g->B || pk->dims[1] != g->Hkv || pk->dims[3] != g->D ||
            pv->dims[0] != g->B || pv->dims[1] != g->Hkv || pv->dims[3] != g->Dv || pv->dims[2] != pk->dims[2])
            return ERR(SY_ERR_SHAPE, "past_key/past_value must be (B, kv heads, past, head size) = (%lld, %lld, P, "
                       "%lld/%lld)", (long long)g->B, (long long)g->Hkv, (long long)g->D, (long long)g->Dv);
        g->P = pk->dims[2];
    }
    g->T = g->P + g->Skv;
    return NULL;
}

static void att_read_state(const sy_node *n, att_state *s)
{
    s->scale = sy_attr_float_or(H, n, "scale", 0.0f);
    s->softcap = sy_attr_float_or(H, n, "softcap", 0.0f);
    s->causal = sy_attr_int_or(H, n, "is_causal", 0) != 0;
    s->mode = sy_attr_int_or(H, n, "qk_matmul_output_mode", 0);
    s->q_heads = sy_attr_int_or(H, n, "q_num_heads", 0);
    s->kv_heads = sy_attr_int_or(H, n, "kv_num_heads", 0);
}

static sy_status *infer_attention(sy_node *n)
{
    const sy_tensor *q, *k, *v;
    SY_TRY(sy_need_input(H, n, 0, &q));
    SY_TRY(sy_need_input(H, n, 1, &k));
    SY_TRY(sy_need_input(H, n, 2, &v));
    if (!sy_dt_is_float(q->dtype))
        return ERR(SY_ERR_TYPE, "Q must be a float tensor, got %s", sy_dt_name(q->dtype));
    att_state s;
    att_read_state(n, &s);
    if (s.mode < 0 || s.mode > 3)
        return ERR(SY_ERR_INVALID_ARGUMENT, "qk_matmul_output_mode must be 0..3, got %lld", (long long)s.mode);
    att_geom g;
    SY_TRY(att_geometry(&s, q, k, v, opt_input(n, 4), opt_input(n, 5), &g));
    const sy_tensor *m = opt_input(n, 3), *np_ = opt_input(n, 6);
    if (m) {
        if (m->rank < 2 || m->rank > 4)
            return ERR(SY_ERR_SHAPE, "attn_mask must have rank 2 to 4, got %d", (int)m->rank);
        int64_t full[4] = {g.B, g.Hq, g.S, g.T};
        for (int32_t d = 0; d < m->rank; d++) {
            int64_t md = m->dims[m->rank - 1 - d], fd = full[3 - d];
            bool ok = d == 0 ? (md <= fd) : (md == fd || md == 1);
            if (!ok) {
                char a[96];
                return ERR(SY_ERR_SHAPE, "attn_mask %s does not broadcast to (B, q heads, S, T) = (%lld, %lld, %lld, "
                           "%lld)", sy_shape_str(m->rank, m->dims, a, sizeof a), (long long)g.B, (long long)g.Hq,
                           (long long)g.S, (long long)g.T);
            }
        }
    }
    if (np_ && (np_->rank != 1 || np_->dims[0] != g.B || np_->dtype != SY_DT_INT64))
        return ERR(SY_ERR_SHAPE, "nonpad_kv_seqlen must be int64 of shape (B = %lld)", (long long)g.B);
    if (g.three_d) {
        int64_t yd[3] = {g.B, g.S, g.Hq * g.Dv};
        SY_TRY(H->node_set_output(n, 0, q->dtype, 3, yd));
    } else {
        int64_t yd[4] = {g.B, g.Hq, g.S, g.Dv};
        SY_TRY(H->node_set_output(n, 0, q->dtype, 4, yd));
    }
    uint32_t no = H->node_num_outputs(n);
    int64_t kd[4] = {g.B, g.Hkv, g.T, g.D}, vd[4] = {g.B, g.Hkv, g.T, g.Dv}, qk[4] = {g.B, g.Hq, g.S, g.T};
    if (no > 1)
        SY_TRY(H->node_set_output(n, 1, k->dtype, 4, kd));
    if (no > 2)
        SY_TRY(H->node_set_output(n, 2, v->dtype, 4, vd));
    if (no > 3)
        SY_TRY(H->node_set_output(n, 3, q->dtype, 4, qk));
    return NULL;
}

static sy_status *prepare_attention(sy_node *n, void **state)
{
    att_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    att_read_state(n, s);
    att_geom g;
    sy_status *st = att_geometry(s, H->node_input(n, 0), H->node_input(n, 1), H->node_input(n, 2), opt_input(n, 4),
                                 opt_input(n, 5), &g);
    if (st) {
        free(s);
        return st;
    }
    size_t fl = (size_t)(g.B * g.Hkv * g.T * (g.D + g.Dv) + 2 * g.T);
    H->node_set_scratch(n, sy_f32_scope_bytes(H, n) + fl * sizeof(float) + 64);
    *state = s;
    return NULL;
}

/* element (b, h, s, d) of a 3-D (B, S, H*D) or 4-D (B, H, S, D) tensor */
static int64_t att_off(bool three_d, int64_t H_, int64_t S, int64_t D, int64_t b, int64_t h, int64_t s, int64_t d)
{
    return three_d ? ((b * S + s) * H_ + h) * D + d : ((b * H_ + h) * S + s) * D + d;
}

static double mask_bias(const sy_tensor *m, const int64_t *mst, int64_t b, int64_t h, int64_t i, int64_t j)
{
    if (j >= m->dims[m->rank - 1])
        return -INFINITY; /* padded */
    int64_t idx[4] = {b, h, i, j}, off = 0;
    for (int d = 0; d < 4; d++)
        off += idx[d] * mst[d];
    if (m->dtype == SY_DT_BOOL)
        return ((const uint8_t *)m->data)[off] ? 0.0 : -INFINITY;
    return sy_load_f64(m->data, m->dtype, (size_t)off);
}

static sy_status *attention_f32(void *state, const sy_kernel_io *io)
{
    const att_state *s = state;
    const sy_tensor *q = io->inputs[0], *k = io->inputs[1], *v = io->inputs[2];
    const sy_tensor *m = io->n_inputs > 3 ? io->inputs[3] : NULL;
    const sy_tensor *pk = io->n_inputs > 4 ? io->inputs[4] : NULL, *pv = io->n_inputs > 5 ? io->inputs[5] : NULL;
    const sy_tensor *nonpad = io->n_inputs > 6 ? io->inputs[6] : NULL;
    att_geom g;
    SY_TRY(att_geometry(s, q, k, v, pk, pv, &g));
    size_t need = (size_t)(g.B * g.Hkv * g.T * (g.D + g.Dv) + 2 * g.T) * sizeof(float);
    if (io->scratch_bytes < need)
        return ERR(SY_ERR_INTERNAL, "Attention scratch too small");
    float *kt = io->scratch, *vt = kt + g.B * g.Hkv * g.T * g.D, *sc = vt + g.B * g.Hkv * g.T * g.Dv;
    float *bias = sc + g.T;
    /* present K/V: past then new, (B, Hkv, T, D) */
    const float *qd = q->data, *kd = k->data, *vd = v->data;
    for (int64_t b = 0; b < g.B; b++)
        for (int64_t h = 0; h < g.Hkv; h++)
            for (int64_t t = 0; t < g.T; t++) {
                float *ko = kt + ((b * g.Hkv + h) * g.T + t) * g.D, *vo = vt + ((b * g.Hkv + h) * g.T + t) * g.Dv;
                if (t < g.P) {
                    memcpy(ko, (const float *)pk->data + ((b * g.Hkv + h) * g.P + t) * g.D, sizeof(float) * (size_t)g.D);
                    memcpy(vo, (const float *)pv->data + ((b * g.Hkv + h) * g.P + t) * g.Dv,
                           sizeof(float) * (size_t)g.Dv);
                } else {
                    for (int64_t d = 0; d < g.D; d++)
                        ko[d] = kd[att_off(g.three_d, g.Hkv, g.Skv, g.D, b, h, t - g.P, d)];
                    for (int64_t d = 0; d < g.Dv; d++)
                        vo[d] = vd[att_off(g.three_d, g.Hkv, g.Skv, g.Dv, b, h, t - g.P, d)];
                }
            }
    if (io->n_outputs > 1 && io->outputs[1])
        memcpy(io->outputs[1]->data, kt, sizeof(float) * (size_t)(g.B * g.Hkv * g.T * g.D));
    if (io->n_outputs > 2 && io->outputs[2])
        memcpy(io->outputs[2]->data, vt, sizeof(float) * (size_t)(g.B * g.Hkv * g.T * g.Dv));
    float *qk_out = io->n_outputs > 3 && io->outputs[3] ? io->outputs[3]->data : NULL;
    float *y = io->outputs[0]->data;
    double scale = s->scale > 0 ? s->scale : 1.0 / sqrt((double)g.D);
    int64_t mst[4] = {0, 0, 0, 0};
    if (m) {
        int64_t st = 1;
        for (int32_t d = m->rank - 1; d >= 0; d--) {
            int32_t fd = 4 - m->rank + d;
            mst[fd] = (m->dims[d] == 1 && fd != 3) ? 0 : st;
            st *= m->dims[d];
        }
    }
    const int64_t *npd = nonpad ? nonpad->data : NULL;
    for (int64_t b = 0; b < g.B; b++) {
        int64_t offset = g.P;
        if (!pk && npd)
            offset = npd[b] - g.S;
        for (int64_t h = 0; h < g.Hq; h++) {
            int64_t hk = h / (g.Hq / g.Hkv);
            const float *kb = kt + (b * g.Hkv + hk) * g.T * g.D, *vb = vt + (b * g.Hkv + hk) * g.T * g.Dv;
            for (int64_t i = 0; i < g.S; i++) {
                double mx = -INFINITY;
                for (int64_t j = 0; j < g.T; j++) {
                    double acc = 0;
                    for (int64_t d = 0; d < g.D; d++)
                        acc += (double)qd[att_off(g.three_d, g.Hq, g.S, g.D, b, h, i, d)] * kb[j * g.D + d];
                    acc *= scale;
                    if (s->softcap > 0)
                        acc = s->softcap * tanh(acc / s->softcap);
                    double bb = 0;
                    if (m)
                        bb += mask_bias(m, mst, b, h, i, j);
                    if (s->causal && j > i + offset)
                        bb += -INFINITY;
                    if (npd && j >= npd[b])
                        bb += -INFINITY;
                    sc[j] = (float)acc;
                    bias[j] = (float)(acc + bb);
                    if (bias[j] > mx)
                        mx = bias[j];
                }
                float *qo = qk_out ? qk_out + ((b * g.Hq + h) * g.S + i) * g.T : NULL;
                if (qo && s->mode == 0)
                    memcpy(qo, sc, sizeof(float) * (size_t)g.T);
                if (qo && (s->mode == 1 || s->mode == 2))
                    memcpy(qo, bias, sizeof(float) * (size_t)g.T);
                double sum = 0;
                for (int64_t j = 0; j < g.T; j++) {
                    /* a fully masked row gives probabilities 0, not NaN */
                    double e = mx == -INFINITY ? 0.0 : exp((double)bias[j] - mx);
                    sc[j] = (float)e;
                    sum += e;
                }
                for (int64_t j = 0; j < g.T; j++)
                    sc[j] = sum > 0 ? (float)(sc[j] / sum) : 0.0f;
                if (qo && s->mode == 3)
                    memcpy(qo, sc, sizeof(float) * (size_t)g.T);
                for (int64_t d = 0; d < g.Dv; d++) {
                    double acc = 0;
                    for (int64_t j = 0; j < g.T; j++)
                        acc += (double)sc[j] * vb[j * g.Dv + d];
                    y[att_off(g.three_d, g.Hq, g.S, g.Dv, b, h, i, d)] = (float)acc;
                }
            }
        }
    }
    return NULL;
}

static sy_status *run_attention(void *state, const sy_kernel_io *io) { return sy_run_as_f32(H, state, io, attention_f32); }

/* ======================================================================== */
/* RotaryEmbedding                                                          */
/* ======================================================================== */

typedef struct rope_state {
    bool interleaved;
    int64_t num_heads, rot_dim;
} rope_state;

static sy_status *infer_rope(sy_node *n)
{
    const sy_tensor *x, *c, *sn;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &c));
    SY_TRY(sy_need_input(H, n, 2, &sn));
    const sy_tensor *pos = opt_input(n, 3);
    if (x->rank != 3 && x->rank != 4)
        return ERR(SY_ERR_SHAPE, "input must be (B, S, hidden) or (B, H, S, D), got rank %d", (int)x->rank);
    int64_t nh = sy_attr_int_or(H, n, "num_heads", 0);
    int64_t D;
    if (x->rank == 3) {
        if (nh <= 0 || x->dims[2] % nh)
            return ERR(SY_ERR_INVALID_ARGUMENT, "3-D input needs num_heads > 0 dividing hidden size %lld",
                       (long long)x->dims[2]);
        D = x->dims[2] / nh;
    } else {
        D = x->dims[3];
    }
    int64_t rd = sy_attr_int_or(H, n, "rotary_embedding_dim", 0);
    if (rd == 0)
        rd = D;
    if (rd < 0 || rd > D || rd % 2)
        return ERR(SY_ERR_INVALID_ARGUMENT, "rotary_embedding_dim = %lld must be even and <= head size %lld",
                   (long long)rd, (long long)D);
    if (c->rank != sn->rank || !sy_shape_equal(c->rank, c->dims, sn->rank, sn->dims))
        return ERR(SY_ERR_SHAPE, "cos_cache and sin_cache must have the same shape");
    int64_t last = c->dims[c->rank - 1];
    if (last < rd / 2)
        return ERR(SY_ERR_SHAPE, "cos/sin caches hold %lld values per position, rotary dim / 2 = %lld is needed",
                   (long long)last, (long long)(rd / 2));
    if (pos) {
        if (c->rank != 2)
            return ERR(SY_ERR_SHAPE, "with position_ids the caches must be 2-D (max position, rotary dim / 2)");
        if (pos->dtype != SY_DT_INT64)
            return ERR(SY_ERR_TYPE, "position_ids must be int64");
    } else if (c->rank != 3) {
        return ERR(SY_ERR_SHAPE, "without position_ids the caches must be 3-D (B, S, rotary dim / 2)");
    }
    return H->node_set_output(n, 0, x->dtype, x->rank, x->dims);
}

static sy_status *prepare_rope(sy_node *n, void **state)
{
    rope_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->interleaved = sy_attr_int_or(H, n, "interleaved", 0) != 0;
    s->num_heads = sy_attr_int_or(H, n, "num_heads", 0);
    s->rot_dim = sy_attr_int_or(H, n, "rotary_embedding_dim", 0);
    H->node_set_scratch(n, sy_f32_scope_bytes(H, n));
    *state = s;
    return NULL;
}

static sy_status *rope_f32(void *state, const sy_kernel_io *io)
{
    const rope_state *s = state;
    const sy_tensor *x = io->inputs[0], *ct = io->inputs[1], *st = io->inputs[2];
    const sy_tensor *pos = io->n_inputs > 3 ? io->inputs[3] : NULL;
    bool three = x->rank == 3;
    int64_t B = x->dims[0], Hh = three ? s->num_heads : x->dims[1], S = three ? x->dims[1] : x->dims[2];
    int64_t D = three ? x->dims[2] / Hh : x->dims[3];
    int64_t rd = s->rot_dim ? s->rot_dim : D, half = rd / 2, cw = ct->dims[ct->rank - 1];
    const float *xd = x->data, *cd = ct->data, *sd = st->data;
    float *yd = io->outputs[0]->data;
    for (int64_t b = 0; b < B; b++)
        for (int64_t t = 0; t < S; t++) {
            int64_t row;
            if (pos) {
                int64_t p = ((const int64_t *)pos->data)[sy_tensor_numel(pos) == S ? t : b * S + t];
                if (p < 0 || p >= ct->dims[0])
                    return ERR(SY_ERR_RUNTIME, "position id %lld is outside the cache (%lld rows)", (long long)p,
                               (long long)ct->dims[0]);
                row = p;
            } else {
                row = b * S + t;
            }
            const float *cr = cd + row * cw, *sr = sd + row * cw;
            for (int64_t h = 0; h < Hh; h++) {
                int64_t base = att_off(three, Hh, S, D, b, h, t, 0);
                const float *xp = xd + base;
                float *yp = yd + base;
                for (int64_t i = 0; i < half; i++) {
                    int64_t i1 = s->interleaved ? 2 * i : i, i2 = s->interleaved ? 2 * i + 1 : i + half;
                    float x1 = xp[i1], x2 = xp[i2];
                    yp[i1] = cr[i] * x1 - sr[i] * x2;
                    yp[i2] = sr[i] * x1 + cr[i] * x2;
                }
                for (int64_t i = rd; i < D; i++)
                    yp[i] = xp[i];
            }
        }
    return NULL;
}

static sy_status *run_rope(void *state, const sy_kernel_io *io) { return sy_run_as_f32(H, state, io, rope_f32); }

/* ======================================================================== */
/* tables                                                                   */
/* ======================================================================== */

#define A(n, t) {n, SY_ATTR_##t, false}
static const sy_attr_def a_att[] = {A("is_causal", INT),          A("kv_num_heads", INT), A("q_num_heads", INT),
                                    A("qk_matmul_output_mode", INT), A("scale", FLOAT),     A("softcap", FLOAT),
                                    A("softmax_precision", INT)};
static const sy_attr_def a_rope[] = {A("interleaved", INT), A("num_heads", INT), A("rotary_embedding_dim", INT)};

static const sy_op_schema schemas[] = {
    SY_SCHEMA("Attention", 23, 3, 6, 1, 4, SY_ATTRS(a_att), infer_attention, SY_NO_INPLACE, 0),
    SY_SCHEMA("Attention", 24, 3, 7, 1, 4, SY_ATTRS(a_att), infer_attention, SY_NO_INPLACE, 0),
    SY_SCHEMA("RotaryEmbedding", 23, 3, 4, 1, 1, SY_ATTRS(a_rope), infer_rope, SY_NO_INPLACE, 0),
};

static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("Attention", 1, 0, SY_DT_MASK_FLOATS, 0, prepare_attention, run_attention, sy_release_free),
    SY_CPU_KERNEL("RotaryEmbedding", 1, 0, SY_DT_MASK_FLOATS, 0, prepare_rope, run_rope, sy_release_free),
};

sy_status *nn_attention_register(const sy_host_api *host, sy_plugin *p)
{
    (void)host;
    return sy_register_tables(H, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
