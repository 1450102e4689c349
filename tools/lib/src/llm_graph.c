/* One ONNX graph of an LLM bundle per (AR, CL, shard), built as protobuf-c
 * messages with standard ONNX ops at opset 17 (Gather, MatMul, Mul, Add,
 * Sub, Div, Sqrt, Reciprocal, Neg, Exp, Reshape, Transpose, Split, Concat,
 * Softmax, Cast), plus, by default, one CausalAttention node per layer in the
 * "switchyard.llm" domain (plugins/ops_llm), which replaces the
 * Concat/MatMul/Div/Add/Softmax/MatMul chain with the same arithmetic over
 * the unmasked KV columns only. The arithmetic follows the llama2.c forward
 * pass operation by operation (RMSNorm as sum of squares / dim + eps,
 * 1/sqrt, x*s*w; SiLU as x * 1/(1+exp(-x)); interleaved RoPE; scores /
 * sqrt(head_dim)), so the logits match a plain C loop closely.
 *
 * The I/O contract (spec/llm.md section 1.1):
 *   input_ids int32 [1,AR] (shard 1) or hidden_states_{i-1} [1,AR,dim]
 *   position_ids_cos / position_ids_sin [1,1,AR,head_dim/2]
 *   attention_mask [1,1,AR,CL] additive float
 *   past_key_L_in [H_kv,1,hd,CL-AR] (keys transposed), past_value_L_in [H_kv,1,CL-AR,hd]
 *   -> hidden_states_i [1,AR,dim] or logits [1,AR,vocab],
 *      past_key_L_out [H_kv,1,hd,AR], past_value_L_out [H_kv,1,AR,hd]
 * Weights: once, in weights.bin, referenced by every graph as external data.
 */
#include "llm_internal.h"
#include "tl_files.h"
#include "tl_onnx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPSET 17
#define IR_VERSION 8
#define LLM_DOMAIN "switchyard.llm" /* plugins/ops_llm */

typedef struct gb {
    tl_pool *pl;
    Onnx__GraphProto *g;
    size_t cap_node, cap_init, cap_in, cap_out;
    int tmp;
    const wfile *w;
    const char *ones; /* name of the [dim,1] ones constant, once per graph */
    bool fused;       /* attention as one switchyard.llm CausalAttention node */
} gb;

static void *grow(tl_pool *pl, void *arr, size_t n, size_t *cap, size_t es)
{
    if (n < *cap)
        return arr;
    size_t nc = *cap ? *cap * 2 : 16;
    void *g = tl_alloc(pl, nc * es);
    if (!g)
        return NULL;
    if (n)
        memcpy(g, arr, n * es);
    *cap = nc;
    return g;
}

static const char *tmpname(gb *b, const char *hint) { return tl_printf(b->pl, "%s_%d", hint, b->tmp++); }

static void g_input(gb *b, const char *name, int elem, const int64_t *dims, size_t nd)
{
    b->g->input = grow(b->pl, b->g->input, b->g->n_input, &b->cap_in, sizeof *b->g->input);
    if (b->g->input)
        b->g->input[b->g->n_input++] = tl_value_info(b->pl, name, elem, dims, nd);
}

static void g_output(gb *b, const char *name, int elem, const int64_t *dims, size_t nd)
{
    b->g->output = grow(b->pl, b->g->output, b->g->n_output, &b->cap_out, sizeof *b->g->output);
    if (b->g->output)
        b->g->output[b->g->n_output++] = tl_value_info(b->pl, name, elem, dims, nd);
}

static void g_init(gb *b, Onnx__TensorProto *t)
{
    b->g->initializer = grow(b->pl, b->g->initializer, b->g->n_initializer, &b->cap_init, sizeof *b->g->initializer);
    if (b->g->initializer && t)
        b->g->initializer[b->g->n_initializer++] = t;
}

static const char *const_i64(gb *b, const int64_t *v, size_t n)
{
    const char *name = tmpname(b, "c_i64");
    int64_t d = (int64_t)n;
    Onnx__TensorProto *t = tl_tensor_header(b->pl, name, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, &d, 1);
    if (!t)
        return name;
    uint8_t *raw = tl_alloc(b->pl, n * 8);
    if (raw)
        for (size_t i = 0; i < n; i++)
            for (int k = 0; k < 8; k++)
                raw[8 * i + (size_t)k] = (uint8_t)((uint64_t)v[i] >> (8 * k));
    t->has_raw_data = 1;
    t->raw_data.len = n * 8;
    t->raw_data.data = raw;
    g_init(b, t);
    return name;
}

static const char *const_f32(gb *b, const char *hint, const float *v, const int64_t *dims, size_t nd)
{
    const char *name = tmpname(b, hint);
    Onnx__TensorProto *t = tl_tensor_header(b->pl, name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, dims, nd);
    if (!t)
        return name;
    size_t n = 1;
    for (size_t i = 0; i < nd; i++)
        n *= (size_t)dims[i];
    uint8_t *raw = tl_alloc(b->pl, n * 4);
    if (raw)
        for (size_t i = 0; i < n; i++) {
            uint32_t u;
            memcpy(&u, &v[i], 4);
            for (int k = 0; k < 4; k++)
                raw[4 * i + (size_t)k] = (uint8_t)(u >> (8 * k));
        }
    t->has_raw_data = 1;
    t->raw_data.len = n * 4;
    t->raw_data.data = raw;
    g_init(b, t);
    return name;
}

static const char *scalar(gb *b, float v)
{
    int64_t one = 1;
    return const_f32(b, "c_f32", &v, &one, 1);
}

/* One node; `outs` names (NULL entries get fresh names). Returns output 0. */
static const char *node(gb *b, const char *op, const char *const *ins, size_t n_in, const char **outs, size_t n_out,
                        Onnx__AttributeProto *a0, Onnx__AttributeProto *a1)
{
    b->g->node = grow(b->pl, b->g->node, b->g->n_node, &b->cap_node, sizeof *b->g->node);
    Onnx__NodeProto *n = tl_alloc(b->pl, sizeof *n);
    if (!b->g->node || !n)
        return "";
    onnx__node_proto__init(n);
    n->op_type = tl_strdup(b->pl, op);
    n->name = tl_printf(b->pl, "%s_%zu", op, b->g->n_node);
    n->n_input = n_in;
    n->input = tl_alloc(b->pl, (n_in ? n_in : 1) * sizeof *n->input);
    n->n_output = n_out;
    n->output = tl_alloc(b->pl, n_out * sizeof *n->output);
    if (!n->input || !n->output)
        return "";
    for (size_t i = 0; i < n_in; i++)
        n->input[i] = tl_strdup(b->pl, ins[i]);
    for (size_t i = 0; i < n_out; i++) {
        if (!outs[i])
            outs[i] = tmpname(b, op);
        n->output[i] = tl_strdup(b->pl, outs[i]);
    }
    Onnx__AttributeProto *as[2] = {a0, a1};
    size_t na = (a0 ? 1 : 0) + (a1 ? 1 : 0);
    n->attribute = tl_alloc(b->pl, (na ? na : 1) * sizeof *n->attribute);
    if (n->attribute)
        for (size_t i = 0; i < 2; i++)
            if (as[i])
                n->attribute[n->n_attribute++] = as[i];
    b->g->node[b->g->n_node++] = n;
    return outs[0];
}

static const char *op1(gb *b, const char *op, const char *x)
{
    const char *o[1] = {NULL};
    return node(b, op, &x, 1, o, 1, NULL, NULL);
}

static const char *op2(gb *b, const char *op, const char *x, const char *y)
{
    const char *in[2] = {x, y}, *o[1] = {NULL};
    return node(b, op, in, 2, o, 1, NULL, NULL);
}

static const char *op2_named(gb *b, const char *op, const char *x, const char *y, const char *out)
{
    const char *in[2] = {x, y}, *o[1] = {out};
    return node(b, op, in, 2, o, 1, NULL, NULL);
}

static const char *reshape(gb *b, const char *x, const int64_t *dims, size_t nd, const char *out)
{
    const char *shape = const_i64(b, dims, nd);
    return op2_named(b, "Reshape", x, shape, out);
}

static const char *transpose(gb *b, const char *x, const int64_t *perm, size_t n)
{
    const char *o[1] = {NULL};
    return node(b, "Transpose", &x, 1, o, 1, tl_attr_ints(b->pl, "perm", perm, n), NULL);
}

static const char *concat2(gb *b, const char *x, const char *y, int64_t axis)
{
    const char *in[2] = {x, y}, *o[1] = {NULL};
    return node(b, "Concat", in, 2, o, 1, tl_attr_int(b->pl, "axis", axis), NULL);
}

/* a weight: an external-data initializer in weights.bin (+ Cast when fp16) */
static const char *weight(gb *b, ectx *e, const char *name)
{
    const wtensor *w = llm_wfind(b->w, name);
    if (!w) {
        llm_fail(e, SY_ERR_INTERNAL, "internal error: weight '%s' missing", name);
        return "";
    }
    bool f16 = b->w->fp16;
    Onnx__TensorProto *t = tl_tensor_header(b->pl, name,
                                      f16 ? ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 : ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
                                      w->dims, (size_t)w->nd);
    if (!t)
        return "";
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    t->n_external_data = 3;
    t->external_data = tl_alloc(b->pl, 3 * sizeof *t->external_data);
    if (!t->external_data)
        return "";
    const char *keys[3] = {"location", "offset", "length"};
    const char *vals[3] = {LLM_WEIGHTS_FILE, tl_printf(b->pl, "%zu", w->offset),
                           tl_printf(b->pl, "%zu", w->numel * (f16 ? 2u : 4u))};
    for (int i = 0; i < 3; i++) {
        Onnx__StringStringEntryProto *kv = tl_alloc(b->pl, sizeof *kv);
        if (!kv)
            return "";
        onnx__string_string_entry_proto__init(kv);
        kv->key = tl_strdup(b->pl, keys[i]);
        kv->value = tl_strdup(b->pl, vals[i]);
        t->external_data[i] = kv;
    }
    g_init(b, t);
    if (!f16)
        return name;
    const char *o[1] = {NULL};
    return node(b, "Cast", &name, 1, o, 1, tl_attr_int(b->pl, "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT), NULL);
}

typedef struct dims_t {
    int64_t dim, hid, H, Hkv, hd, G, vocab;
    int64_t AR, CL, KV;
} dims_t;

/* llama2.c rmsnorm: ss = sum(x^2) / dim + eps; y = w * (x * (1/sqrt(ss))) */
static const char *rmsnorm(gb *b, ectx *e, const dims_t *d, const char *x, const char *wname)
{
    if (!b->ones) {
        float *ones = tl_alloc(b->pl, (size_t)d->dim * sizeof(float));
        if (!ones)
            return "";
        for (int64_t i = 0; i < d->dim; i++)
            ones[i] = 1.0f;
        int64_t od[2] = {d->dim, 1};
        b->ones = const_f32(b, "ones", ones, od, 2);
    }
    const char *sq = op2(b, "Mul", x, x);
    const char *ss = op2(b, "MatMul", sq, b->ones); /* [1,AR,1]: the sum in index order */
    ss = op2(b, "Div", ss, scalar(b, (float)d->dim));
    ss = op2(b, "Add", ss, scalar(b, 1e-5f));
    ss = op1(b, "Reciprocal", op1(b, "Sqrt", ss));
    const char *y = op2(b, "Mul", x, ss);
    return op2(b, "Mul", y, weight(b, e, wname));
}

/* interleaved RoPE on t [AR, heads, hd/2, 2] with cos/sin [AR,1,hd/2,1] */
static const char *rope(gb *b, const char *t, const char *cs, const char *sn)
{
    const char *two = const_i64(b, (const int64_t[]){1, 1}, 2);
    const char *in[2] = {t, two}, *o[2] = {NULL, NULL};
    node(b, "Split", in, 2, o, 2, tl_attr_int(b->pl, "axis", 3), NULL);
    const char *r0 = op2(b, "Sub", op2(b, "Mul", o[0], cs), op2(b, "Mul", o[1], sn));
    const char *r1 = op2(b, "Add", op2(b, "Mul", o[0], sn), op2(b, "Mul", o[1], cs));
    return concat2(b, r0, r1, 3);
}

static const char *layer(gb *b, ectx *e, const dims_t *d, int l, const char *x, const char *cs, const char *sn,
                         const char *mask)
{
    char nm[96];
    snprintf(nm, sizeof nm, "layers.%d.attention_norm", l);
    const char *xn = rmsnorm(b, e, d, x, nm);
    snprintf(nm, sizeof nm, "layers.%d.wq_t", l);
    const char *q = op2(b, "MatMul", xn, weight(b, e, nm));
    snprintf(nm, sizeof nm, "layers.%d.wk_t", l);
    const char *k = op2(b, "MatMul", xn, weight(b, e, nm));
    snprintf(nm, sizeof nm, "layers.%d.wv_t", l);
    const char *v = op2(b, "MatMul", xn, weight(b, e, nm));

    q = rope(b, reshape(b, q, (const int64_t[]){d->AR, d->H, d->hd / 2, 2}, 4, NULL), cs, sn);
    q = reshape(b, q, (const int64_t[]){d->AR, d->Hkv, d->G, d->hd}, 4, NULL);
    q = transpose(b, q, (const int64_t[]){1, 2, 0, 3}, 4); /* [Hkv,G,AR,hd] */

    k = rope(b, reshape(b, k, (const int64_t[]){d->AR, d->Hkv, d->hd / 2, 2}, 4, NULL), cs, sn);
    k = reshape(b, k, (const int64_t[]){d->AR, d->Hkv, d->hd}, 3, NULL);
    k = transpose(b, k, (const int64_t[]){1, 2, 0}, 3); /* [Hkv,hd,AR] */
    char kout[64], vout[64], kin[64], vin[64];
    snprintf(kout, sizeof kout, "past_key_%d_out", l);
    snprintf(vout, sizeof vout, "past_value_%d_out", l);
    snprintf(kin, sizeof kin, "past_key_%d_in", l);
    snprintf(vin, sizeof vin, "past_value_%d_in", l);
    k = reshape(b, k, (const int64_t[]){d->Hkv, 1, d->hd, d->AR}, 4, kout);
    v = reshape(b, v, (const int64_t[]){d->AR, d->Hkv, d->hd}, 3, NULL);
    v = transpose(b, v, (const int64_t[]){1, 0, 2}, 3); /* [Hkv,AR,hd] */
    v = reshape(b, v, (const int64_t[]){d->Hkv, 1, d->AR, d->hd}, 4, vout);
    g_input(b, kin, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, (const int64_t[]){d->Hkv, 1, d->hd, d->KV}, 4);
    g_input(b, vin, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, (const int64_t[]){d->Hkv, 1, d->KV, d->hd}, 4);
    g_output(b, kout, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, (const int64_t[]){d->Hkv, 1, d->hd, d->AR}, 4);
    g_output(b, vout, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, (const int64_t[]){d->Hkv, 1, d->AR, d->hd}, 4);

    const char *att;
    if (b->fused) {
        /* switchyard.llm CausalAttention (plugins/ops_llm): the same math over
         * the unmasked columns only, reading past and new entries in place */
        const char *in[6] = {q, kout, vout, kin, vin, mask}, *o[1] = {NULL};
        att = node(b, "CausalAttention", in, 6, o, 1, NULL, NULL); /* [Hkv,G,AR,hd] */
        b->g->node[b->g->n_node - 1]->domain = tl_strdup(b->pl, LLM_DOMAIN);
    } else {
        const char *kf = concat2(b, kin, k, 3); /* [Hkv,1,hd,CL] */
        const char *vf = concat2(b, vin, v, 2); /* [Hkv,1,CL,hd] */
        const char *s = op2(b, "MatMul", q, kf); /* [Hkv,G,AR,CL] */
        s = op2(b, "Div", s, scalar(b, sqrtf((float)d->hd)));
        s = op2(b, "Add", s, mask);
        const char *o[1] = {NULL};
        s = node(b, "Softmax", &s, 1, o, 1, tl_attr_int(b->pl, "axis", -1), NULL);
        att = op2(b, "MatMul", s, vf); /* [Hkv,G,AR,hd] */
    }
    att = transpose(b, att, (const int64_t[]){2, 0, 1, 3}, 4); /* [AR,Hkv,G,hd] */
    att = reshape(b, att, (const int64_t[]){1, d->AR, d->dim}, 3, NULL);
    snprintf(nm, sizeof nm, "layers.%d.wo_t", l);
    x = op2(b, "Add", x, op2(b, "MatMul", att, weight(b, e, nm)));

    snprintf(nm, sizeof nm, "layers.%d.ffn_norm", l);
    xn = rmsnorm(b, e, d, x, nm);
    snprintf(nm, sizeof nm, "layers.%d.w1_t", l);
    const char *h1 = op2(b, "MatMul", xn, weight(b, e, nm));
    snprintf(nm, sizeof nm, "layers.%d.w3_t", l);
    const char *h3 = op2(b, "MatMul", xn, weight(b, e, nm));
    /* silu(h1) = h1 * (1 / (1 + exp(-h1))) */
    const char *sg = op1(b, "Reciprocal", op2(b, "Add", op1(b, "Exp", op1(b, "Neg", h1)), scalar(b, 1.0f)));
    const char *hh = op2(b, "Mul", op2(b, "Mul", h1, sg), h3);
    snprintf(nm, sizeof nm, "layers.%d.w2_t", l);
    return op2(b, "Add", x, op2(b, "MatMul", hh, weight(b, e, nm)));
}

int llm_write_graph(ectx *e, tl_pool *pl, const char *dir, const wfile *w, const ckpt *c, const llm_graph_spec *s,
                    char *path, size_t path_len, size_t *n_nodes, size_t *bytes)
{
    const int ar = s->ar, cl = s->cl, shard = s->shard, n_shards = s->n_shards, l0 = s->l0, l1 = s->l1;
    const bool fused = s->fused;
    const llm_ckpt_header *h = &c->h;
    dims_t d = {.dim = h->dim, .hid = h->hidden_dim, .H = h->n_heads, .Hkv = h->n_kv_heads};
    d.hd = d.dim / d.H;
    d.G = d.H / d.Hkv;
    d.vocab = h->vocab_size > 0 ? h->vocab_size : -h->vocab_size;
    d.AR = ar;
    d.CL = cl;
    d.KV = cl - ar;
    char *name = tl_printf(pl, "%s_ar%d_cl%d_%d_of_%d", ar == 1 ? "token" : "prompt", ar, cl, shard, n_shards);
    gb b = {.pl = pl, .w = w, .fused = fused};
    b.g = tl_alloc(pl, sizeof *b.g);
    if (!b.g || !name)
        return llm_fail(e, SY_ERR_OUT_OF_MEMORY, "out of memory");
    onnx__graph_proto__init(b.g);
    b.g->name = name;
    const int F = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    const char *x;
    bool has_layers = l1 > l0;
    if (shard == 1) {
        g_input(&b, "input_ids", ONNX__TENSOR_PROTO__DATA_TYPE__INT32, (const int64_t[]){1, d.AR}, 2);
    } else {
        char *in = tl_printf(pl, "hidden_states_%d", shard - 1);
        g_input(&b, in, F, (const int64_t[]){1, d.AR, d.dim}, 3);
    }
    const char *cs = NULL, *sn = NULL, *mask = NULL;
    if (has_layers) {
        g_input(&b, "position_ids_cos", F, (const int64_t[]){1, 1, d.AR, d.hd / 2}, 4);
        g_input(&b, "position_ids_sin", F, (const int64_t[]){1, 1, d.AR, d.hd / 2}, 4);
        g_input(&b, "attention_mask", F, (const int64_t[]){1, 1, d.AR, d.CL}, 4);
        cs = reshape(&b, "position_ids_cos", (const int64_t[]){d.AR, 1, d.hd / 2, 1}, 4, NULL);
        sn = reshape(&b, "position_ids_sin", (const int64_t[]){d.AR, 1, d.hd / 2, 1}, 4, NULL);
        mask = "attention_mask";
    }
    const char *out_name = shard == n_shards ? "logits" : tl_printf(pl, "hidden_states_%d", shard);
    g_output(&b, out_name, F, shard == n_shards ? (const int64_t[]){1, d.AR, d.vocab} : (const int64_t[]){1, d.AR, d.dim},
             3);
    if (shard == 1)
        x = op2(&b, "Gather", weight(&b, e, "tok_embeddings"), "input_ids"); /* [1,AR,dim] */
    else
        x = b.g->input[0]->name;
    for (int l = l0; l < l1; l++)
        x = layer(&b, e, &d, l, x, cs, sn, mask);
    if (shard == n_shards) {
        x = rmsnorm(&b, e, &d, x, "norm");
        op2_named(&b, "MatMul", x, weight(&b, e, "output_t"), "logits");
    } else {
        const char *in[1] = {x}, *o[1] = {out_name};
        node(&b, "Identity", in, 1, o, 1, NULL, NULL);
    }
    if (pl->oom)
        return llm_fail(e, SY_ERR_OUT_OF_MEMORY, "out of memory building graph %s", name);
    if (e->failed)
        return -1;

    bool llm_ops = fused && has_layers;
    Onnx__OperatorSetIdProto *opset = tl_alloc(pl, 2 * sizeof *opset);
    Onnx__OperatorSetIdProto **opsets = tl_alloc(pl, 2 * sizeof *opsets);
    if (!opset || !opsets)
        return llm_fail(e, SY_ERR_OUT_OF_MEMORY, "out of memory");
    onnx__operator_set_id_proto__init(&opset[0]);
    opset[0].domain = tl_strdup(pl, "");
    opset[0].has_version = 1;
    opset[0].version = OPSET;
    opsets[0] = &opset[0];
    onnx__operator_set_id_proto__init(&opset[1]);
    opset[1].domain = tl_strdup(pl, LLM_DOMAIN);
    opset[1].has_version = 1;
    opset[1].version = 1;
    opsets[1] = &opset[1];
    Onnx__ModelProto m;
    onnx__model_proto__init(&m);
    m.has_ir_version = 1;
    m.ir_version = IR_VERSION;
    m.n_opset_import = llm_ops ? 2 : 1;
    m.opset_import = opsets;
    m.producer_name = tl_strdup(pl, "switchyard llm-export");
    m.producer_version = tl_strdup(pl, "1");
    m.graph = b.g;
    size_t len = 0;
    uint8_t *buf = tl_pack_model(&m, &len);
    if (!buf)
        return llm_fail(e, SY_ERR_OUT_OF_MEMORY, "out of memory packing %s", name);
    if ((size_t)snprintf(path, path_len, "%s/%s.onnx", dir, name) >= path_len) {
        free(buf);
        return llm_fail(e, SY_ERR_INVALID_ARGUMENT, "%s: path too long", dir);
    }
    int rc = llm_take(e, tl_write_atomic(path, buf, len, NULL, 0));
    free(buf);
    *n_nodes = b.g->n_node;
    *bytes = len;
    return rc;
}
