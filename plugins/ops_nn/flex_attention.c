/*
 * FlexAttention (ai.onnx.preview 1):
 * Y = softmax(scale Q K^T) V per head, Q [B, Hq, L, E], K [B, Hkv, S, E],
 * V [B, Hkv, S, Ev] -> Y [B, Hq, L, Ev]; query head h reads kv head
 * h / (Hq / Hkv); scale defaults to 1/sqrt(E). Computed in double,
 * stored in the inputs' float type.
 *
 * The modifier graphs score_mod, mask_mod and prob_mod run through the host
 * (ABI 1.4: host->attr_graph, node_subgraph, subgraph_run), in the order of
 * the spec: scores, score_mod, mask_mod, softmax over S, prob_mod, the
 * product with V. The tensors they see have the softmax's dtype
 * (softmax_precision, else float32 for float16/bfloat16 inputs, else the
 * inputs' type). Two forms, told apart by the graph's input count:
 *
 *  - tensor form (the node tests'): one input, the whole score (or
 *    probability) tensor [B, Hq, L, S], one output of the same shape; the
 *    graph reads any index it needs from the shape (the tests' causal and
 *    relative-position graphs do), so it runs once per run of the node,
 *    batched over every head and position. mask_mod has this form too: the
 *    scores in, the masked scores out.
 *  - scalar form (the later spec's): score_mod and prob_mod take a scalar
 *    and the int64 scalars batch, head, q_idx, k_idx and return a scalar;
 *    mask_mod takes the four indices and returns a bool (false: the score
 *    becomes mask_value, default -inf). The contract gives the graph one
 *    element, so it runs once per element of [B, Hq, L, S]: a graph that
 *    works on broadcast index tensors would give other shapes (a reduction
 *    or a Shape in it), so batching it would change its meaning.
 */
#include "nn_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PREVIEW "ai.onnx.preview"

/* the modifier graphs, in the order they apply */
enum { MOD_SCORE, MOD_MASK, MOD_PROB, N_MOD };
static const char *const mod_attr[N_MOD] = {"score_mod", "mask_mod", "prob_mod"};
/* the two forms of a modifier graph (see the top of the file) */
enum { FORM_NONE, FORM_TENSOR, FORM_SCALAR };

typedef struct flex_state {
    double scale;
    sy_subgraph *mod[N_MOD]; /* NULL when the node has no such graph; owned by the node */
    uint8_t form[N_MOD];
    bool any_mod;
    sy_dtype sdt;            /* dtype of the score tensor the graphs see */
    double mask_value;       /* what a position mask_mod (scalar form) masks gets */
    size_t scores_bytes;     /* scratch: the score tensor, then per-row doubles */
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
    /* the later spec's switch: head groups only when asked (absent: the
     * node tests' form, where a multiple is always grouped) */
    int64_t gqa;
    if (H->attr_int(n, "enable_gqa", &gqa) && !gqa && q->dims[1] != k->dims[1])
        return ERR(SY_ERR_SHAPE, "enable_gqa = 0 needs as many query heads as key/value heads (%lld, %lld)",
                   (long long)q->dims[1], (long long)k->dims[1]);
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

/* The softmax's dtype: softmax_precision when given, else float32 for the
 * half types and the inputs' type otherwise (the spec's promotion). */
static sy_status *softmax_dtype(const sy_node *n, sy_dtype in, sy_dtype *out)
{
    int64_t sp;
    *out = in == SY_DT_FLOAT16 || in == SY_DT_BFLOAT16 ? SY_DT_FLOAT32 : in;
    if (!H->attr_int(n, "softmax_precision", &sp))
        return NULL;
    if (sp != SY_DT_FLOAT32 && sp != SY_DT_FLOAT16 && sp != SY_DT_BFLOAT16 && sp != SY_DT_FLOAT64)
        return ERR(SY_ERR_INVALID_MODEL, "softmax_precision %lld is not float, float16, bfloat16 or double",
                   (long long)sp);
    *out = (sy_dtype)sp;
    return NULL;
}

/* Ask for modifier graph m in the form its input count says. */
static sy_status *ask_mod(sy_node *n, flex_state *s, int m)
{
    uint32_t ni = 0, no = 0;
    if (!H->attr_graph(n, mod_attr[m], &ni, &no))
        return NULL;
    uint32_t scalar_in = m == MOD_MASK ? 4 : 5;
    const sy_dtype sd[1] = {s->sdt}, bd[1] = {SY_DT_BOOL};
    const sy_dtype scalar_dt[5] = {s->sdt, SY_DT_INT64, SY_DT_INT64, SY_DT_INT64, SY_DT_INT64};
    const sy_dtype mask_dt[4] = {SY_DT_INT64, SY_DT_INT64, SY_DT_INT64, SY_DT_INT64};
    sy_subgraph_sig sig = {sizeof sig, 1, 1, 0, sd, sd};
    if (ni == scalar_in) {
        sig.n_inputs = scalar_in;
        sig.input_dtypes = m == MOD_MASK ? mask_dt : scalar_dt;
        sig.output_dtypes = m == MOD_MASK ? bd : sd;
    } else if (ni != 1) {
        return ERR(SY_ERR_INVALID_MODEL,
                   "node '%s' (FlexAttention): graph attribute '%s' has %u inputs; it takes 1 (the whole [B, Hq, L, S] "
                   "%s tensor) or %u (%s)",
                   H->node_name(n), mod_attr[m], ni, m == MOD_PROB ? "probability" : "score", scalar_in,
                   m == MOD_MASK ? "the int64 scalars batch, head, q_idx, k_idx" :
                                   "a scalar and the int64 scalars batch, head, q_idx, k_idx");
    }
    SY_TRY(H->node_subgraph(n, mod_attr[m], &sig, &s->mod[m]));
    s->form[m] = ni == 1 ? FORM_TENSOR : FORM_SCALAR;
    s->any_mod = true;
    return NULL;
}

static sy_status *prepare_flex(sy_node *n, void **state)
{
    flex_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = flex_check(n, &s->scale);
    const sy_tensor *q = H->node_input(n, 0), *k = H->node_input(n, 1), *v = H->node_input(n, 2);
    if (!st)
        st = softmax_dtype(n, q->dtype, &s->sdt);
    s->mask_value = sy_attr_float_or(H, n, "mask_value", -INFINITY);
    /* (the loader refuses this plugin on a host older than the ABI it was
     * built with, so this holds; checked as the ABI asks) */
    if (!st && !sy_host_has_subgraphs(H))
        st = ERR(SY_ERR_UNSUPPORTED, "node '%s': this host has no subgraph API (ABI 1.4) for the modifier graphs",
                 H->node_name(n));
    for (int m = 0; !st && m < N_MOD; m++)
        st = ask_mod(n, s, m);
    if (st) {
        free(s);
        return st;
    }
    size_t S = (size_t)k->dims[2], Ev = (size_t)v->dims[3];
    size_t per_row = (S + Ev) * sizeof(double);
    if (s->any_mod) {
        /* the whole score tensor [B, Hq, L, S], 64-byte rounded, then the row */
        size_t cnt = (size_t)q->dims[0] * (size_t)q->dims[1] * (size_t)q->dims[2] * S;
        s->scores_bytes = (cnt * sy_dt_size(s->sdt) + 63) & ~(size_t)63;
    }
    H->node_set_scratch(n, s->scores_bytes + per_row);
    *state = s;
    return NULL;
}

/* out must be the [B, Hq, L, S] tensor the graph was given */
static sy_status *mod_check(const char *attr, const sy_tensor *in, const sy_tensor *out)
{
    bool same = out->rank == in->rank && out->dtype == in->dtype;
    for (int32_t d = 0; same && d < in->rank; d++)
        same = out->dims[d] == in->dims[d];
    if (!same)
        return ERR(SY_ERR_SHAPE, "%s: its output must have the shape [%lld, %lld, %lld, %lld] of its input", attr,
                   (long long)in->dims[0], (long long)in->dims[1], (long long)in->dims[2], (long long)in->dims[3]);
    return NULL;
}

static sy_tensor scalar_tensor(sy_dtype dt, void *data, size_t bytes)
{
    sy_tensor t;
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    t.dtype = dt;
    t.rank = 0;
    t.data = data;
    t.nbytes = bytes;
    return t;
}

/* The scalar form: one run per element (the contract gives the graph one
 * score and its four indices, nothing to batch over); the results go into
 * the scores buffer `dst`, element by element (each is read before it is
 * written, so cur may be dst). */
static sy_status *mod_run_scalar(const flex_state *s, int m, const sy_tensor *cur, void *dst)
{
    sy_dtype sdt = s->sdt;
    uint64_t val_store = 0;
    int64_t idx[4];
    sy_tensor val = scalar_tensor(sdt, &val_store, sy_dt_size(sdt)), it[4];
    for (int i = 0; i < 4; i++)
        it[i] = scalar_tensor(SY_DT_INT64, &idx[i], sizeof idx[i]);
    const sy_tensor *in[5];
    uint32_t n_in = 0;
    if (m != MOD_MASK)
        in[n_in++] = &val;
    for (int i = 0; i < 4; i++)
        in[n_in++] = &it[i];
    const int64_t *d = cur->dims;
    size_t e = 0;
    for (idx[0] = 0; idx[0] < d[0]; idx[0]++)
        for (idx[1] = 0; idx[1] < d[1]; idx[1]++)
            for (idx[2] = 0; idx[2] < d[2]; idx[2]++)
                for (idx[3] = 0; idx[3] < d[3]; idx[3]++, e++) {
                    double x = sy_load_f64(cur->data, sdt, e);
                    sy_store_f64(&val_store, sdt, 0, x);
                    const sy_tensor *out = NULL;
                    SY_TRY(H->subgraph_run(s->mod[m], in, n_in, &out, 1));
                    if (sy_tensor_numel(out) != 1)
                        return ERR(SY_ERR_SHAPE, "%s: its output must be a scalar; it has %lld elements",
                                   mod_attr[m], (long long)sy_tensor_numel(out));
                    if (m == MOD_MASK)
                        sy_store_f64(dst, sdt, e, *(const uint8_t *)out->data ? x : s->mask_value);
                    else
                        sy_store_f64(dst, sdt, e, sy_load_f64(out->data, sdt, 0));
                }
    return NULL;
}

/* Run graph m on `cur` (the score or probability tensor); *cur becomes its
 * result, valid until the graph runs again. */
static sy_status *mod_run(const flex_state *s, int m, const sy_tensor **cur, const sy_tensor *scores)
{
    if (!s->mod[m])
        return NULL;
    if (s->form[m] == FORM_SCALAR) {
        SY_TRY(mod_run_scalar(s, m, *cur, scores->data));
        *cur = scores;
        return NULL;
    }
    const sy_tensor *in = *cur, *out = NULL;
    SY_TRY(H->subgraph_run(s->mod[m], &in, 1, &out, 1));
    SY_TRY(mod_check(mod_attr[m], in, out));
    *cur = out;
    return NULL;
}

/* With modifier graphs: the whole score tensor is made, handed to
 * score_mod and mask_mod, turned into probabilities in the same buffer,
 * handed to prob_mod, and only then multiplied with V. */
static sy_status *run_flex_mod(const flex_state *s, const sy_kernel_io *io)
{
    const sy_tensor *q = io->inputs[0], *k = io->inputs[1], *v = io->inputs[2];
    sy_tensor *y = io->outputs[0];
    int64_t B = q->dims[0], hq = q->dims[1], L = q->dims[2], E = q->dims[3];
    int64_t hkv = k->dims[1], S = k->dims[2], Ev = v->dims[3], g = hq / hkv;
    sy_dtype dt = q->dtype, sdt = s->sdt;
    void *sc = io->scratch;
    double *p = (double *)((uint8_t *)io->scratch + s->scores_bytes), *acc = p + S;
    sy_tensor scores;
    memset(&scores, 0, sizeof scores);
    scores.struct_size = sizeof scores;
    scores.dtype = sdt;
    scores.rank = 4;
    scores.dims[0] = B;
    scores.dims[1] = hq;
    scores.dims[2] = L;
    scores.dims[3] = S;
    scores.data = sc;
    scores.nbytes = (size_t)(B * hq * L * S) * sy_dt_size(sdt);
    scores.name = "scores";
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < hq; h++) {
            size_t qo = (size_t)((b * hq + h) * L) * (size_t)E, ko = (size_t)((b * hkv + h / g) * S) * (size_t)E;
            size_t so = (size_t)((b * hq + h) * L) * (size_t)S;
            for (int64_t l = 0; l < L; l++)
                for (int64_t j = 0; j < S; j++) {
                    double dot = 0;
                    for (int64_t e = 0; e < E; e++)
                        dot += sy_load_f64(q->data, dt, qo + (size_t)(l * E + e)) *
                               sy_load_f64(k->data, dt, ko + (size_t)(j * E + e));
                    sy_store_f64(sc, sdt, so + (size_t)(l * S + j), dot * s->scale);
                }
        }
    const sy_tensor *cur = &scores;
    SY_TRY(mod_run(s, MOD_SCORE, &cur, &scores));
    SY_TRY(mod_run(s, MOD_MASK, &cur, &scores));
    /* softmax per row, into the scores buffer: a row is read whole before
     * it is written (cur may be that buffer: an identity graph) */
    for (int64_t r = 0; r < B * hq * L; r++) {
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < S; j++) {
            p[j] = sy_load_f64(cur->data, sdt, (size_t)(r * S + j));
            mx = p[j] > mx ? p[j] : mx;
        }
        for (int64_t j = 0; j < S; j++) {
            p[j] = exp(p[j] - mx);
            sum += p[j];
        }
        for (int64_t j = 0; j < S; j++)
            sy_store_f64(sc, sdt, (size_t)(r * S + j), p[j] / sum);
    }
    cur = &scores;
    SY_TRY(mod_run(s, MOD_PROB, &cur, &scores));
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < hq; h++) {
            size_t vo = (size_t)((b * hkv + h / g) * S) * (size_t)Ev, yo = (size_t)((b * hq + h) * L) * (size_t)Ev;
            size_t po = (size_t)((b * hq + h) * L) * (size_t)S;
            for (int64_t l = 0; l < L; l++) {
                for (int64_t e = 0; e < Ev; e++)
                    acc[e] = 0;
                for (int64_t j = 0; j < S; j++) {
                    double pj = sy_load_f64(cur->data, sdt, po + (size_t)(l * S + j));
                    for (int64_t e = 0; e < Ev; e++)
                        acc[e] += pj * sy_load_f64(v->data, dt, vo + (size_t)(j * Ev + e));
                }
                for (int64_t e = 0; e < Ev; e++)
                    sy_store_f64(y->data, dt, yo + (size_t)(l * Ev + e), acc[e]);
            }
        }
    return NULL;
}

static sy_status *run_flex(void *state, const sy_kernel_io *io)
{
    const flex_state *s = state;
    if (s->any_mod)
        return run_flex_mod(s, io);
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

static const sy_attr_def a_flex[] = {{"scale", SY_ATTR_FLOAT, false},        {"score_mod", SY_ATTR_GRAPH, false},
                                     {"mask_mod", SY_ATTR_GRAPH, false},     {"prob_mod", SY_ATTR_GRAPH, false},
                                     {"enable_gqa", SY_ATTR_INT, false},     {"softmax_precision", SY_ATTR_INT, false},
                                     {"mask_value", SY_ATTR_FLOAT, false}};

static const sy_op_schema schemas[] = {
    {sizeof(sy_op_schema), PREVIEW, "FlexAttention", 1, 3, 3, 1, 1, SY_ATTRS(a_flex), infer_flex, SY_NO_INPLACE, 0,
     "scaled dot-product attention with score_mod / mask_mod / prob_mod graphs"},
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
