/* sy_train_chain_read: the artifacts of sy_train_build as the chain of
 * layers an FP32 training package runs (switchyard codegen --train --mode
 * fp32): forward.onnx's nodes, one after another, and the optimizer node's
 * attributes. The package's kernels (plugin_sdk/kernels/trk.c, tflk) take
 * these forms only; any other node is refused naming it. */
#include "train_internal.h"
#include "tl_files.h"
#include "train_rows.h"

#include <switchyard/sy_train.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SY_TRY(e)                                                                                                  \
    do {                                                                                                           \
        sy_status *st_ = (e);                                                                                      \
        if (st_)                                                                                                   \
            return st_;                                                                                            \
    } while (0)

typedef struct chain_priv {
    sy_train_chain pub; /* first: the pointer handed out */
    const sy_train_layer *src; /* the sample, while the chain is read */
    Onnx__ModelProto *fwd, *opt;
    float **owned;
    size_t n_owned;
} chain_priv;

static sy_status *load(const char *dir, const char *file, Onnx__ModelProto **m)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, file) >= sizeof path)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "training artifacts: path too long");
    uint8_t *data = NULL;
    size_t size = 0;
    SY_TRY(tl_read_file(path, &data, &size));
    *m = onnx__model_proto__unpack(NULL, size, data);
    free(data);
    if (!*m || !(*m)->graph)
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s is not an ONNX model", path);
    return NULL;
}

static const Onnx__TensorProto *init_of(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_initializer; i++)
        if (!strcmp(g->initializer[i]->name, name))
            return g->initializer[i];
    return NULL;
}

static const Onnx__AttributeProto *attr_of(const Onnx__NodeProto *n, const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (!strcmp(n->attribute[i]->name, name))
            return n->attribute[i];
    return NULL;
}

static int64_t attr_i(const Onnx__NodeProto *n, const char *name, int64_t def)
{
    const Onnx__AttributeProto *a = attr_of(n, name);
    return a && a->has_i ? a->i : def;
}

static float attr_f(const Onnx__NodeProto *n, const char *name, float def)
{
    const Onnx__AttributeProto *a = attr_of(n, name);
    return a && a->has_f ? a->f : def;
}

/* every entry of an ints attribute equals v (absent: the default v) */
static bool ints_all(const Onnx__NodeProto *n, const char *name, int64_t v)
{
    const Onnx__AttributeProto *a = attr_of(n, name);
    for (size_t i = 0; a && i < a->n_ints; i++)
        if (a->ints[i] != v)
            return false;
    return true;
}

/* a float initializer's values, copied (aligned) */
static sy_status *floats(chain_priv *c, const Onnx__TensorProto *t, const float **out, int64_t *numel)
{
    int64_t n = 1;
    for (size_t d = 0; d < t->n_dims; d++)
        n *= t->dims[d];
    size_t have = t->has_raw_data ? t->raw_data.len : t->n_float_data * 4;
    if (t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || n < 1 || have != (size_t)n * 4)
        return sy_status_create(SY_ERR_INVALID_MODEL, "initializer '%s' is not float32 data of its shape", t->name);
    float *v = malloc(have);
    float **o = realloc(c->owned, (c->n_owned + 1) * sizeof *o);
    if (!v || !o) {
        free(v);
        if (o)
            c->owned = o;
        return sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory");
    }
    c->owned = o;
    c->owned[c->n_owned++] = v;
    memcpy(v, t->has_raw_data ? (const void *)t->raw_data.data : (const void *)t->float_data, have);
    *out = v;
    *numel = n;
    return NULL;
}

#define REFUSE(...) sy_status_create(SY_ERR_UNSUPPORTED, __VA_ARGS__)

/* a refusal of a node within seed 001's FP32 row that the package does not
 * run in the form given: what failed, then the row */
#define REFUSE_ROW(nm, op, row, fmt, ...)                                                                          \
    REFUSE("node '%s' (%s): an FP32 training package takes " fmt "; seed 001 §4: \"%s\"", nm, op, __VA_ARGS__, row)

/* the integers of a constant initializer `name` (int64 or int32), at most
 * cap; -1: not an integer constant (or longer) */
static long ints_const(const Onnx__GraphProto *g, const char *name, int64_t *out, size_t cap)
{
    const Onnx__TensorProto *t = name && *name ? init_of(g, name) : NULL;
    if (!t)
        return -1;
    const bool i64 = t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    if (!i64 && t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT32)
        return -1;
    const size_t es = i64 ? 8 : 4;
    const size_t n = t->has_raw_data ? t->raw_data.len / es : i64 ? t->n_int64_data : t->n_int32_data;
    if (n > cap || (t->has_raw_data && t->raw_data.len % es))
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (!t->has_raw_data)
            out[i] = i64 ? t->int64_data[i] : t->int32_data[i];
        else if (i64)
            memcpy(&out[i], t->raw_data.data + 8 * i, 8);
        else {
            int32_t v;
            memcpy(&v, t->raw_data.data + 4 * i, 4);
            out[i] = v;
        }
    }
    return (long)n;
}

/* a shape's per-sample view (c, h, w): dims 1, 2 and the product of the rest */
static void chw(int32_t r, const int64_t *d, int64_t *c, int64_t *h, int64_t *w)
{
    *c = r > 1 ? d[1] : 1;
    *h = r > 2 ? d[2] : 1;
    *w = 1;
    for (int32_t i = 3; i < r; i++)
        *w *= d[i];
}

static int64_t count(int32_t r, const int64_t *d)
{
    int64_t n = 1;
    for (int32_t i = 0; i < r; i++)
        n *= d[i];
    return n;
}

/* an axis of rank r, negative from the end; -1 when out of range */
static int64_t axis_of(int64_t a, int32_t r) { return a < -r || a >= r ? -1 : a < 0 ? a + r : a; }

/* the output shape: out_rank, out_dims set; oc, oh, ow from them */
static sy_status *set_out(sy_train_layer *L, const char *nm, const char *op)
{
    if (L->out_rank < 1 || L->out_rank > SY_TRAIN_MAX_RANK || L->out_dims[0] != 1)
        return REFUSE("node '%s' (%s): an FP32 training package keeps the batch axis first and of size 1, rank 1-%d "
                      "(the output here has rank %d)", nm, op, SY_TRAIN_MAX_RANK, (int)L->out_rank);
    for (int32_t d = 0; d < L->out_rank; d++)
        if (L->out_dims[d] < 1)
            return REFUSE("node '%s' (%s): output dimension %d is %lld (an empty tensor)", nm, op, (int)d,
                          (long long)L->out_dims[d]);
    chw(L->out_rank, L->out_dims, &L->oc, &L->oh, &L->ow);
    return NULL;
}

/* Reshape, Flatten, Squeeze, Unsqueeze: the same values in another shape */
static sy_status *reshape_layer(const Onnx__GraphProto *g, const Onnx__NodeProto *n, sy_train_layer *L)
{
    const char *op = n->op_type, *nm = L->name;
    const int32_t r = L->in_rank;
    int64_t v[SY_TRAIN_MAX_RANK + 1];
    L->kind = SY_TRAIN_LAYER_FLATTEN;
    if (!strcmp(op, "Flatten")) {
        int64_t a = axis_of(attr_i(n, "axis", 1), r + 1);
        if (a != 1)
            return REFUSE_ROW(nm, op, ROW_RESHAPE, "Flatten on axis 1 only (the batch axis stays first)%s", "");
        L->out_rank = 2;
        L->out_dims[0] = 1, L->out_dims[1] = count(r, L->in_dims);
        return set_out(L, nm, op);
    }
    if (!strcmp(op, "Reshape")) {
        long k = n->n_input > 1 ? ints_const(g, n->input[1], v, SY_TRAIN_MAX_RANK) : -1;
        if (k < 1 || attr_i(n, "allowzero", 0))
            return REFUSE_ROW(nm, op, ROW_RESHAPE, "a Reshape to a constant shape of rank 1-%d (allowzero 0)",
                              SY_TRAIN_MAX_RANK);
        int64_t known = 1;
        int infer = -1;
        for (long i = 0; i < k; i++) {
            int64_t d = v[i] == 0 && i < r ? L->in_dims[i] : v[i];
            if (d == -1 && infer < 0)
                infer = (int)i;
            else if (d < 1)
                return REFUSE_ROW(nm, op, ROW_RESHAPE, "a shape of positive sizes, 0 (kept) and one -1 (entry %ld "
                                  "is %lld)", i, (long long)v[i]);
            else
                known *= d;
            L->out_dims[i] = d;
        }
        const int64_t total = count(r, L->in_dims);
        if (infer >= 0)
            L->out_dims[infer] = known > 0 && total % known == 0 ? total / known : 0;
        L->out_rank = (int32_t)k;
        if (count(L->out_rank, L->out_dims) != total)
            return REFUSE_ROW(nm, op, ROW_RESHAPE, "a shape of %lld elements (the input's)", (long long)total);
        return set_out(L, nm, op);
    }
    /* Squeeze, Unsqueeze: the axes an attribute (opset < 13) or a constant input */
    const Onnx__AttributeProto *aa = attr_of(n, "axes");
    long k = -1;
    if (aa && aa->n_ints <= SY_TRAIN_MAX_RANK) {
        k = (long)aa->n_ints;
        memcpy(v, aa->ints, aa->n_ints * sizeof *v);
    } else if (!aa && n->n_input > 1)
        k = ints_const(g, n->input[1], v, SY_TRAIN_MAX_RANK);
    if (k < 1)
        return REFUSE_ROW(nm, op, ROW_RESHAPE, "%s over constant axes (without them the batch axis %s too)", op,
                          !strcmp(op, "Squeeze") ? "would go" : "is unclear");
    bool at[SY_TRAIN_MAX_RANK] = {false};
    const int32_t ro = !strcmp(op, "Squeeze") ? r - (int32_t)k : r + (int32_t)k;
    L->out_rank = ro;
    if (ro < 1 || ro > SY_TRAIN_MAX_RANK) /* before the axes index `at` by the output's rank */
        return set_out(L, nm, op);
    for (long i = 0; i < k; i++) {
        int64_t a = axis_of(v[i], !strcmp(op, "Squeeze") ? r : ro);
        if (a <= 0 || at[a] || (!strcmp(op, "Squeeze") && L->in_dims[a] != 1))
            return REFUSE_ROW(nm, op, ROW_RESHAPE, "%s of distinct axes other than the batch axis%s (axis %lld)", op,
                              !strcmp(op, "Squeeze") ? " and of size 1" : "", (long long)v[i]);
        at[a] = true;
    }
    for (int32_t d = 0, s = 0; d < (!strcmp(op, "Squeeze") ? r : ro); d++) {
        if (!strcmp(op, "Squeeze")) {
            if (!at[d])
                L->out_dims[s++] = L->in_dims[d];
        } else
            L->out_dims[d] = at[d] ? 1 : L->in_dims[s++];
    }
    return set_out(L, nm, op);
}

static sy_status *pad_layer(const Onnx__GraphProto *g, const Onnx__NodeProto *n, sy_train_layer *L)
{
    const char *op = n->op_type, *nm = L->name;
    const int32_t r = L->in_rank;
    const Onnx__AttributeProto *m = attr_of(n, "mode");
    if (m && m->s.len && !(m->s.len == 8 && !memcmp(m->s.data, "constant", 8)))
        return REFUSE_ROW(nm, op, ROW_PAD, "constant mode only (mode '%.*s')", (int)(m->s.len > 32 ? 32 : m->s.len),
                          (const char *)m->s.data);
    int64_t p[2 * SY_TRAIN_MAX_RANK];
    long k = -1;
    const Onnx__AttributeProto *pa = attr_of(n, "pads");
    if (n->n_input > 1 && *n->input[1])
        k = ints_const(g, n->input[1], p, 2 * SY_TRAIN_MAX_RANK);
    else if (pa && pa->n_ints <= 2 * SY_TRAIN_MAX_RANK) {
        k = (long)pa->n_ints;
        memcpy(p, pa->ints, pa->n_ints * sizeof *p);
    }
    if (k != 2 * r || (n->n_input > 3 && *n->input[3]))
        return REFUSE_ROW(nm, op, ROW_PAD, "constant pads over every axis (normalized paddings: %d for rank %d)",
                          2 * (int)r, (int)r);
    L->value = attr_f(n, "value", 0.0f);
    if (n->n_input > 2 && *n->input[2]) {
        const Onnx__TensorProto *cv = init_of(g, n->input[2]);
        if (!cv || cv->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ||
            (cv->has_raw_data ? cv->raw_data.len : cv->n_float_data * 4) != 4)
            return REFUSE_ROW(nm, op, ROW_PAD, "a constant float32 scalar as the pad value ('%s')", n->input[2]);
        memcpy(&L->value, cv->has_raw_data ? (const void *)cv->raw_data.data : (const void *)cv->float_data, 4);
    }
    L->kind = SY_TRAIN_LAYER_PAD;
    L->out_rank = r;
    for (int32_t d = 0; d < r; d++) {
        if (p[d] < 0 || p[r + d] < 0 || (d == 0 && (p[0] || p[r])))
            return REFUSE_ROW(nm, op, ROW_PAD, "non-negative padding, none on the batch axis (axis %d: %lld, %lld)",
                              (int)d, (long long)p[d], (long long)p[r + d]);
        L->start[d] = p[d];
        L->out_dims[d] = L->in_dims[d] + p[d] + p[r + d];
    }
    return set_out(L, nm, op);
}

static sy_status *slice_layer(const Onnx__GraphProto *g, const Onnx__NodeProto *n, sy_train_layer *L)
{
    const char *op = n->op_type, *nm = L->name;
    const int32_t r = L->in_rank;
    int64_t st[SY_TRAIN_MAX_RANK], en[SY_TRAIN_MAX_RANK], v[SY_TRAIN_MAX_RANK];
    long ks = n->n_input > 1 ? ints_const(g, n->input[1], st, SY_TRAIN_MAX_RANK) : -1;
    long ke = n->n_input > 2 ? ints_const(g, n->input[2], en, SY_TRAIN_MAX_RANK) : -1;
    if (ks != r || ke != r)
        return REFUSE_ROW(nm, op, ROW_SLICE, "constant starts and ends over every axis (full-rank: %d entries)",
                          (int)r);
    if (n->n_input > 3 && *n->input[3]) {
        bool ok = ints_const(g, n->input[3], v, SY_TRAIN_MAX_RANK) == r;
        for (int32_t d = 0; ok && d < r; d++)
            ok = v[d] == d;
        if (!ok)
            return REFUSE_ROW(nm, op, ROW_SLICE, "the axes 0..%d in order (normalized parameters)", (int)r - 1);
    }
    for (int32_t d = 0; d < r; d++)
        L->step[d] = 1;
    if (n->n_input > 4 && *n->input[4]) {
        bool ok = ints_const(g, n->input[4], v, SY_TRAIN_MAX_RANK) == r;
        for (int32_t d = 0; ok && d < r; d++)
            ok = v[d] >= 1 && v[d] <= INT32_MAX && (d || v[0] == 1);
        if (!ok)
            return REFUSE_ROW(nm, op, ROW_SLICE, "constant positive steps over every axis, 1 on the batch axis%s", "");
        for (int32_t d = 0; d < r; d++)
            L->step[d] = v[d];
    }
    L->kind = SY_TRAIN_LAYER_SLICE;
    L->out_rank = r;
    for (int32_t d = 0; d < r; d++) {
        int64_t e = en[d] > L->in_dims[d] ? L->in_dims[d] : en[d];
        if (st[d] < 0 || e <= st[d] || (d == 0 && st[0] != 0))
            return REFUSE_ROW(nm, op, ROW_SLICE, "non-negative starts before their ends, the batch axis whole (axis "
                              "%d: %lld to %lld of %lld)", (int)d, (long long)st[d], (long long)en[d],
                              (long long)L->in_dims[d]);
        L->start[d] = st[d];
        L->out_dims[d] = (e - st[d] + L->step[d] - 1) / L->step[d]; /* start, start + step, ... before the end */
    }
    return set_out(L, nm, op);
}

static sy_status *transpose_layer(const Onnx__NodeProto *n, sy_train_layer *L)
{
    const char *op = n->op_type, *nm = L->name;
    const int32_t r = L->in_rank;
    const Onnx__AttributeProto *p = attr_of(n, "perm");
    bool seen[SY_TRAIN_MAX_RANK] = {false}, ok = p && p->n_ints == (size_t)r;
    for (int32_t d = 0; ok && d < r; d++) {
        ok = p->ints[d] >= 0 && p->ints[d] < r && !seen[p->ints[d]] && (d || !p->ints[0]);
        if (ok)
            seen[p->ints[d]] = true;
    }
    if (!ok)
        return REFUSE_ROW(nm, op, ROW_TRANSPOSE, "an explicit permutation of the %d axes keeping the batch axis first",
                          (int)r);
    L->kind = SY_TRAIN_LAYER_TRANSPOSE;
    L->out_rank = r;
    /* a permutation that moves only axes of size 1 (a TFLite model's NHWC
     * [1, H, W, 1] to NCHW and back) leaves every element where it was in
     * row-major order: the package takes it as a reshape, a view of its
     * input, instead of a copy into a buffer of its own */
    int64_t last = -1;
    bool moves = false;
    for (int32_t d = 0; d < r; d++) {
        L->perm[d] = p->ints[d];
        L->out_dims[d] = L->in_dims[p->ints[d]];
        if (L->out_dims[d] != 1) {
            moves |= p->ints[d] < last;
            last = p->ints[d];
        }
    }
    if (!moves)
        L->kind = SY_TRAIN_LAYER_FLATTEN;
    return set_out(L, nm, op);
}

static sy_status *reduce_layer(const Onnx__GraphProto *g, const Onnx__NodeProto *n, sy_train_layer *L)
{
    const char *op = n->op_type, *nm = L->name;
    const int32_t r = L->in_rank;
    int64_t v[SY_TRAIN_MAX_RANK];
    long k = 0;
    const Onnx__AttributeProto *aa = attr_of(n, "axes");
    if (aa) {
        k = aa->n_ints <= SY_TRAIN_MAX_RANK ? (long)aa->n_ints : -1;
        if (k > 0)
            memcpy(v, aa->ints, aa->n_ints * sizeof *v);
    } else if (n->n_input > 1 && *n->input[1])
        k = ints_const(g, n->input[1], v, SY_TRAIN_MAX_RANK);
    if (k < 0 || attr_i(n, "noop_with_empty_axes", 0))
        return REFUSE_ROW(nm, op, ROW_REDUCE, "constant axes (empty: every axis; noop_with_empty_axes 0)%s", "");
    const bool keep = attr_i(n, "keepdims", 1) != 0;
    L->axes = k ? 0u : (1u << r) - 1u;
    for (long i = 0; i < k; i++) {
        int64_t a = axis_of(v[i], r);
        if (a < 0 || (L->axes >> a & 1u))
            return REFUSE_ROW(nm, op, ROW_REDUCE, "valid and unique axes (%lld for rank %d)", (long long)v[i], (int)r);
        L->axes |= 1u << a;
    }
    if ((L->axes & 1u) && !keep)
        return REFUSE_ROW(nm, op, ROW_REDUCE, "keepdims 1 when the batch axis is reduced (it stays first)%s", "");
    L->kind = !strcmp(op, "ReduceSum") ? SY_TRAIN_LAYER_REDUCE_SUM : SY_TRAIN_LAYER_REDUCE_MEAN;
    L->out_rank = 0;
    for (int32_t d = 0; d < r; d++)
        if (!(L->axes >> d & 1u))
            L->out_dims[L->out_rank++] = L->in_dims[d];
        else if (keep)
            L->out_dims[L->out_rank++] = 1;
    return set_out(L, nm, op);
}

/* the value `on` as a two-input layer's other operand: the last layer writing
 * it (the previous one when `on` is the input itself), else the sample;
 * *k its index (-1 the sample); NULL when it is neither */
static const sy_train_layer *other_operand(const chain_priv *c, const char *on, int32_t *k)
{
    const sy_train_layer *o = NULL;
    for (size_t i = 0; i < c->pub.n_layers; i++)
        if (c->pub.layers[i].output && !strcmp(c->pub.layers[i].output, on))
            *k = (int32_t)i, o = &c->pub.layers[i];
    if (!o && c->src && !strcmp(c->src->output, on))
        *k = -1, o = c->src;
    return o;
}

/* Add, Sub, Mul of the layer's input and a constant of its very shape
 * (the seed's rows: no broadcasting), Div of it and a constant broadcast with
 * it (the Div row allows broadcasting), or of two activations of that shape
 * (a Div's broadcast-compatible, of one rank or two): the input and an earlier
 * layer's output, the sample or the input itself (x + x, x * x: the other
 * operand is then the previous layer's output) —
 * the one place the chain is a graph */
static sy_status *eltwise_layer(chain_priv *c, const Onnx__GraphProto *g, const Onnx__NodeProto *n, const char *cur,
                                sy_train_layer *L)
{
    const char *op = n->op_type, *nm = L->name;
    const bool div = !strcmp(op, "Div");
    const char *row = div ? ROW_DIV : ROW_ELTWISE;
    const int first = n->n_input == 2 && !strcmp(n->input[1], cur) && strcmp(n->input[0], cur) ? 1 : 0;
    const Onnx__TensorProto *w = n->n_input == 2 ? init_of(g, n->input[1 - first]) : NULL;
    const char *on = n->n_input == 2 ? n->input[1 - first] : "";
    L->kind = !strcmp(op, "Add") ? SY_TRAIN_LAYER_ADD
              : !strcmp(op, "Sub") ? SY_TRAIN_LAYER_SUB
              : !strcmp(op, "Mul") ? SY_TRAIN_LAYER_MUL
                                   : SY_TRAIN_LAYER_DIV;
    L->const_first = first;
    if (!w && *on) {
        /* two activations */
        int32_t k = -1;
        const sy_train_layer *o = other_operand(c, on, &k);
        if (!o)
            return REFUSE_ROW(nm, op, row, "%s of the previous layer's output and an earlier layer's output, the "
                              "sample or a constant ('%s' is none of them)", op, on);
        bool same = o->out_rank == L->in_rank;
        for (int32_t d = 0; same && d < L->in_rank; d++)
            same = o->out_dims[d] == L->in_dims[d];
        L->residual = 1, L->other = k;
        if (div) {
            /* a Div broadcasts (its row allows it): numpy's rule, the dims aligned from the last axis,
             * each pair equal or one of them 1, the output the larger; each operand's gradient is summed
             * over the axes it is stretched on (the host's ReduceToShape, which sums a lower-ranked
             * shape's missing leading axes too). Both operands are written at the output's rank, the
             * lower-ranked one's dims after leading 1s: the same elements in the same order, its own
             * batch axis (1) one of the stretched axes, so the package's kernels see one rank.
             * in_dims are the input's so aligned, w_dims the other operand's */
            const int32_t r = o->out_rank > L->in_rank ? o->out_rank : L->in_rank;
            const int32_t li = r - L->in_rank, lo = r - o->out_rank;
            int64_t in[SY_TRAIN_MAX_RANK];
            bool ok = true;
            for (int32_t d = 0; d < r; d++)
                in[d] = d < li ? 1 : L->in_dims[d - li];
            for (int32_t d = 0; ok && d < r; d++) {
                const int64_t i = in[d], v = d < lo ? 1 : o->out_dims[d - lo];
                ok = i == v || i == 1 || v == 1;
                L->in_dims[d] = i;
                L->w_dims[d] = v;
                L->out_dims[d] = v > i ? v : i;
            }
            if (!ok)
                return REFUSE_ROW(nm, op, row, "two activations broadcast-compatible with each other (their dims "
                                  "aligned from the last axis, each pair equal or one of them 1; '%s' and the "
                                  "input are not)", on);
            L->in_rank = L->out_rank = r;
            return set_out(L, nm, op);
        }
        if (!same)
            return REFUSE_ROW(nm, op, row, "two operands of exactly the same shape ('%s' is not the input's: no "
                              "broadcasting)", on);
        return NULL;
    }
    if (!w)
        return REFUSE_ROW(nm, op, row, "%s of the previous layer's output and a constant initializer or another "
                          "activation of its shape", op);
    if (div) {
        /* x / c or c / x, numpy's broadcasting (dims aligned from the last, each pair equal or one of
         * them 1): the constant may be stretched to the input and the input to the constant (the Div
         * row allows broadcasting), the output the larger of each pair; the batch axis stays the
         * input's 1. The input's gradient is then summed over the axes it was stretched on (the host's
         * ReduceToShape) */
        const int32_t r = L->in_rank, lead = r - (int32_t)w->n_dims;
        bool ok = lead >= 0;
        for (int32_t d = 0; ok && d < r; d++) {
            const int64_t i = L->in_dims[d], k = d < lead ? 1 : w->dims[d - lead];
            L->w_dims[d] = k;
            ok = k >= 1 && (k == 1 || i == 1 || k == i) && (d > 0 || k == 1);
            L->out_dims[d] = k > i ? k : i;
        }
        if (!ok)
            return REFUSE_ROW(nm, op, row, "a constant broadcast-compatible with the input (rank %d at most, "
                              "each dimension equal to the input's or one of them 1, 1 on the batch axis; '%s')",
                              (int)r, w->name);
        L->w_name = w->name;
        sy_status *st = set_out(L, nm, op);
        return st ? st : floats(c, w, &L->w, &L->w_numel);
    }
    bool same = w->n_dims == (size_t)L->in_rank;
    for (int32_t d = 0; same && d < L->in_rank; d++)
        same = w->dims[d] == L->in_dims[d];
    if (!same)
        return REFUSE_ROW(nm, op, row, "a constant of exactly the input's shape (rank %d; no broadcasting)",
                          (int)L->in_rank);
    L->w_name = w->name;
    return floats(c, w, &L->w, &L->w_numel);
}

static sy_status *node_layer(chain_priv *c, const Onnx__GraphProto *g, const Onnx__NodeProto *n, const char *cur,
                             sy_train_layer *prev, sy_train_layer *L)
{
    const char *op = n->op_type;
    const char *nm = n->name && *n->name ? n->name : "";
    const bool elt = !strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") || !strcmp(op, "Div");
    /* a two-input node may read the previous output second (the other operand first) */
    const bool two = elt || !strcmp(op, "Concat");
    if (n->n_input < 1 || (strcmp(n->input[0], cur) && !(two && n->n_input == 2 && !strcmp(n->input[1], cur))) ||
        n->n_output < 1)
        return REFUSE("node '%s' (%s) does not read the previous layer's output: an FP32 training package runs a chain",
                      nm, op);
    memset(L, 0, sizeof *L);
    L->name = nm;
    L->in_rank = prev->out_rank;
    memcpy(L->in_dims, prev->out_dims, sizeof L->in_dims);
    chw(L->in_rank, L->in_dims, &L->ic, &L->ih, &L->iw);
    L->out_rank = L->in_rank;
    memcpy(L->out_dims, L->in_dims, sizeof L->out_dims);
    L->oc = L->ic, L->oh = L->ih, L->ow = L->iw;
    if (!strcmp(op, "Relu") || !strcmp(op, "Abs")) {
        L->kind = !strcmp(op, "Relu") ? SY_TRAIN_LAYER_RELU : SY_TRAIN_LAYER_ABS;
        return NULL;
    }
    if (!strcmp(op, "Flatten") || !strcmp(op, "Reshape") || !strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze"))
        return reshape_layer(g, n, L);
    if (!strcmp(op, "Pad"))
        return pad_layer(g, n, L);
    if (!strcmp(op, "Slice"))
        return slice_layer(g, n, L);
    if (!strcmp(op, "Transpose"))
        return transpose_layer(n, L);
    if (!strcmp(op, "ReduceSum") || !strcmp(op, "ReduceMean"))
        return reduce_layer(g, n, L);
    if (elt)
        return eltwise_layer(c, g, n, cur, L);
    if (!strcmp(op, "Concat")) {
        const int64_t ax = axis_of(attr_i(n, "axis", 0), L->in_rank);
        if (n->n_input != 2 || ax < 1)
            return REFUSE_ROW(nm, op, ROW_CONCAT, "exactly two inputs, the previous layer's output one of them, on an "
                              "axis other than the batch axis (%zu inputs, axis %lld)", n->n_input,
                              (long long)attr_i(n, "axis", 0));
        if (!strcmp(n->input[0], cur) && !strcmp(n->input[1], cur) && ax == 1 && L->in_rank == 4) {
            L->kind = SY_TRAIN_LAYER_CONCAT_SELF; /* the first packages' form, kept as it was */
            L->out_dims[1] *= 2;
            return set_out(L, nm, op);
        }
        /* two values (or one value twice on another axis): the other operand as a residual's */
        const int first = strcmp(n->input[0], cur) ? 1 : 0;
        const char *on = n->input[1 - first];
        int32_t k = -1;
        const sy_train_layer *o = other_operand(c, on, &k);
        if (!o)
            return REFUSE_ROW(nm, op, ROW_CONCAT, "the previous layer's output and an earlier layer's output or the "
                              "sample ('%s' is neither)", on);
        bool same = o->out_rank == L->in_rank;
        for (int32_t d = 0; same && d < L->in_rank; d++)
            same = d == ax || o->out_dims[d] == L->in_dims[d];
        if (!same)
            return REFUSE_ROW(nm, op, ROW_CONCAT, "two inputs of one rank and the same dims but on axis %lld ('%s' "
                              "and '%s')", (long long)ax, cur, on);
        L->kind = SY_TRAIN_LAYER_CONCAT;
        L->const_first = first;
        L->residual = 1, L->other = k;
        L->axes = 1u << ax;
        L->out_dims[ax] += o->out_dims[ax];
        return set_out(L, nm, op);
    }
    if (!strcmp(op, "Conv")) {
        const Onnx__TensorProto *w = n->n_input > 1 ? init_of(g, n->input[1]) : NULL;
        const Onnx__AttributeProto *ap = attr_of(n, "auto_pad");
        const Onnx__AttributeProto *pads = attr_of(n, "pads"), *sa = attr_of(n, "strides");
        /* strides: 1 is the seed's FP32 Conv row (a Conv the gradient flows through is refused otherwise by
         * sy_train_build's rule); a frozen front's Conv, whose backward never runs, may downsample */
        int64_t s[2] = {1, 1};
        for (size_t i = 0; sa && i < sa->n_ints && i < 2; i++)
            s[i] = sa->ints[i];
        if (!w || w->n_dims != 4 || w->dims[0] != L->ic || w->dims[1] != 1 || attr_i(n, "group", 1) != L->ic ||
            (n->n_input > 2 && *n->input[2]) || (sa && sa->n_ints != 2) || s[0] < 1 || s[1] < 1 || s[0] > 64 ||
            s[1] > 64 || !ints_all(n, "dilations", 1) ||
            (ap && ap->s.len && !(ap->s.len == 6 && !memcmp(ap->s.data, "NOTSET", 6))) ||
            (pads && pads->n_ints != 4) || L->in_rank != 4)
            return REFUSE("node '%s' (Conv): an FP32 training package takes the seed's FP32 Conv only: depthwise "
                          "(group = C_in = C_out, W [C, 1, kh, kw]), stride 1 (1 to 64 in a frozen front), "
                          "dilation 1, explicit pads, no bias", nm);
        L->kind = SY_TRAIN_LAYER_CONV_DW;
        L->kh = w->dims[2], L->kw = w->dims[3];
        int64_t p[4] = {0, 0, 0, 0};
        for (size_t i = 0; pads && i < 4; i++)
            p[i] = pads->ints[i];
        if (p[0] < 0 || p[1] < 0 || p[2] < 0 || p[3] < 0)
            return REFUSE("node '%s' (Conv): negative pads", nm);
        L->pt = p[0], L->pl = p[1];
        L->step[2] = s[0], L->step[3] = s[1]; /* the strides (H, W) */
        const int64_t eh = L->ih + p[0] + p[2] - L->kh, ew = L->iw + p[1] + p[3] - L->kw;
        L->out_dims[2] = eh < 0 ? 0 : eh / s[0] + 1, L->out_dims[3] = ew < 0 ? 0 : ew / s[1] + 1;
        if (L->out_dims[2] < 1 || L->out_dims[3] < 1)
            return REFUSE("node '%s' (Conv): an empty output", nm);
        SY_TRY(set_out(L, nm, op));
        L->w_name = w->name;
        return floats(c, w, &L->w, &L->w_numel);
    }
    if (!strcmp(op, "Gemm") || !strcmp(op, "MatMul")) {
        /* y = x·Bᵀ + C with B [O, K] (Gemm, transB = 1), or y = x·B (+ C) with B [K, O] (MatMul, Gemm
         * transB = 0): w is B in the model's layout either way, w_kn says which */
        const bool mm = !strcmp(op, "MatMul");
        const Onnx__TensorProto *w = n->n_input > 1 ? init_of(g, n->input[1]) : NULL;
        const Onnx__TensorProto *b = !mm && n->n_input > 2 && *n->input[2] ? init_of(g, n->input[2]) : NULL;
        const int64_t k = L->ic * L->ih * L->iw;
        const int kn = mm || !attr_i(n, "transB", 0);
        const int64_t o = w && w->n_dims == 2 ? w->dims[kn ? 1 : 0] : 0;
        if (mm && (n->n_input != 2 || !w || w->n_dims != 2 || w->dims[0] != k || L->in_rank != 2))
            return REFUSE_ROW(nm, op, ROW_FC, "MatMul of A [1, K] (the previous layer's output) and a constant B "
                              "[K, O] (K = %lld)", (long long)k);
        if (!w || w->n_dims != 2 || w->dims[kn ? 0 : 1] != k || attr_i(n, "transA", 0) ||
            attr_f(n, "alpha", 1.0f) != 1.0f || attr_f(n, "beta", 1.0f) != 1.0f || L->in_rank != 2 ||
            (n->n_input > 2 && *n->input[2] && (!b || b->n_dims != 1 || b->dims[0] != o)))
            return REFUSE("node '%s' (Gemm): an FP32 training package takes Gemm with A [1, K] not transposed, a "
                          "constant B [O, K] transposed or [K, O] not, an optional constant C [O], alpha = beta = 1",
                          nm);
        L->kind = SY_TRAIN_LAYER_GEMM;
        L->w_kn = kn;
        L->ic = k, L->ih = L->iw = 1;
        L->out_dims[1] = o;
        SY_TRY(set_out(L, nm, op));
        L->w_name = w->name;
        SY_TRY(floats(c, w, &L->w, &L->w_numel));
        if (b) {
            L->b_name = b->name;
            SY_TRY(floats(c, b, &L->b, &L->b_numel));
        }
        return NULL;
    }
    return REFUSE("node '%s' (%s): an FP32 training package runs depthwise Conv, Relu, Abs, Flatten/Reshape/Squeeze/"
                  "Unsqueeze, Concat of two values, Pad (constant), Slice, Transpose, ReduceSum/ReduceMean, "
                  "Add/Sub/Mul/Div with a constant or another activation and Gemm/MatMul only", nm, op);
}

static sy_status *read_chain(chain_priv *c, const char *dir)
{
    SY_TRY(load(dir, TR_FORWARD_FILE, &c->fwd));
    SY_TRY(load(dir, TR_OPTIMIZER_FILE, &c->opt));
    const Onnx__GraphProto *g = c->fwd->graph;
    /* the one data input: the graph input that is no initializer */
    const Onnx__ValueInfoProto *in = NULL;
    for (size_t i = 0; i < g->n_input; i++)
        if (!init_of(g, g->input[i]->name)) {
            if (in)
                return REFUSE("an FP32 training package takes one data input ('%s' and '%s')", in->name,
                              g->input[i]->name);
            in = g->input[i];
        }
    const Onnx__TypeProto__Tensor *tt = in && in->type ? in->type->tensor_type : NULL;
    const Onnx__TensorShapeProto *sh = tt ? tt->shape : NULL;
    if (!sh || (sh->n_dim != 4 && sh->n_dim != 2) || !tt->has_elem_type ||
        tt->elem_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
        return REFUSE("an FP32 training package takes a float32 input [N, C, H, W] or [N, K]");
    sy_train_layer src = {0};
    int64_t d[3] = {1, 1, 1};
    for (size_t i = 1; i < sh->n_dim; i++) {
        if (sh->dim[i]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE || sh->dim[i]->dim_value < 1)
            return REFUSE("input '%s': dimension %zu is not a fixed size", in->name, i);
        d[i - 1] = sh->dim[i]->dim_value;
    }
    src.oc = d[0], src.oh = d[1], src.ow = d[2];
    src.out_rank = (int32_t)sh->n_dim;
    src.output = in->name;
    src.out_dims[0] = 1;
    for (size_t i = 1; i < sh->n_dim; i++)
        src.out_dims[i] = d[i - 1];
    c->pub.layers = calloc(g->n_node ? g->n_node : 1, sizeof *c->pub.layers);
    if (!c->pub.layers)
        return sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory");
    const char *cur = in->name;
    sy_train_layer *prev = &src;
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        /* a final Softmax: the loss reads its input (the logits) */
        if (i + 1 == g->n_node && !strcmp(n->op_type, "Softmax") && c->pub.n_layers)
            break;
        sy_train_layer *L = &c->pub.layers[c->pub.n_layers];
        c->src = &src;
        SY_TRY(node_layer(c, g, n, cur, prev, L));
        L->output = n->output[0];
        c->pub.n_layers++;
        cur = n->output[0];
        prev = L;
    }
    c->src = NULL; /* src is this function's */
    if (!c->pub.n_layers || prev->kind != SY_TRAIN_LAYER_GEMM)
        return REFUSE("an FP32 training package's chain ends in a Gemm (the logits)");
    const Onnx__GraphProto *og = c->opt->graph;
    if (og->n_node != 1)
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s/%s: one optimizer node expected", dir, TR_OPTIMIZER_FILE);
    const Onnx__NodeProto *on = og->node[0];
    if (!strcmp(on->op_type, "Adam")) {
        c->pub.optimizer = SY_TRAIN_ADAM;
        c->pub.alpha = attr_f(on, "alpha", 0.9f);
        c->pub.beta = attr_f(on, "beta", 0.999f);
        c->pub.epsilon = attr_f(on, "epsilon", 1e-6f);
        if (attr_f(on, "norm_coefficient_post", 0.0f) != 0.0f)
            return REFUSE("Adam's norm_coefficient_post is not taken by FP32 training packages");
    } else if (!strcmp(on->op_type, "Momentum")) {
        c->pub.optimizer = SY_TRAIN_SGD;
        c->pub.alpha = attr_f(on, "alpha", 0.0f);
        c->pub.beta = attr_f(on, "beta", 1.0f);
        const Onnx__AttributeProto *m = attr_of(on, "mode");
        c->pub.nesterov = m && m->s.len == 8 && !memcmp(m->s.data, "nesterov", 8);
    } else
        return REFUSE("optimizer %s: FP32 training packages run Momentum or Adam", on->op_type);
    c->pub.norm = attr_f(on, "norm_coefficient", 0.0f);
    return NULL;
}

SY_EXPORT sy_status *sy_train_chain_read(const char *dir, sy_train_chain **out)
{
    if (!dir || !out)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_train_chain_read: dir and out are required");
    *out = NULL;
    chain_priv *c = calloc(1, sizeof *c);
    if (!c)
        return sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = read_chain(c, dir);
    if (st) {
        sy_train_chain_free(&c->pub);
        return st;
    }
    *out = &c->pub;
    return NULL;
}

SY_EXPORT void sy_train_chain_free(sy_train_chain *pub)
{
    chain_priv *c = (chain_priv *)pub;
    if (!c)
        return;
    for (size_t i = 0; i < c->n_owned; i++)
        free(c->owned[i]);
    free(c->owned);
    free(c->pub.layers);
    if (c->fwd)
        onnx__model_proto__free_unpacked(c->fwd, NULL);
    if (c->opt)
        onnx__model_proto__free_unpacked(c->opt, NULL);
    free(c);
}
