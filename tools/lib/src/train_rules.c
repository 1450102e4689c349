/* The seed's training constraints as rules (seed 001 §4, the "FP32" rows of
 * its training table; ../shared/spec/ops-mcu.md §4.2 is the translation).
 * With sy_train_build_options.target = "ws63" every forward node on the
 * gradient path must match its operator's row, else the build declines
 * quoting the row and saying which part failed; "hi3066" is refused with the
 * seed's sentence. The rows speak of shapes, so the forward model runs once
 * at batch 1 (the FP32 Conv row's batch) and the observer records every
 * value's shape; a value whose shape the run did not show (inside a fused
 * partition) makes a row that needs it decline rather than guess. */
#include "train_internal.h"
#include "train_rows.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tr_shape {
    char *name;
    sy_dtype dtype;
    int32_t rank;
    int64_t dims[SY_MAX_RANK];
} tr_shape;

struct tr_rules {
    const char *target;
    const Onnx__GraphProto *fwd;
    tr_shape *v;
    size_t n, cap;
    bool oom;
};

/* the rows: train_rows.h (the FP32 training packages quote them too) */
#define SEED_WS63_ONLY "当前端侧训练仅在ws63支持"

static void record(tr_rules *r, const sy_tensor *t)
{
    if (!t || !t->name || !*t->name || r->oom)
        return;
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->v[i].name, t->name))
            return;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        tr_shape *v = realloc(r->v, cap * sizeof *v);
        if (!v) {
            r->oom = true;
            return;
        }
        r->v = v;
        r->cap = cap;
    }
    tr_shape *s = &r->v[r->n];
    memset(s, 0, sizeof *s);
    s->name = strdup(t->name);
    if (!s->name) {
        r->oom = true;
        return;
    }
    s->dtype = t->dtype;
    s->rank = t->rank < 0 ? 0 : t->rank > SY_MAX_RANK ? SY_MAX_RANK : t->rank;
    memcpy(s->dims, t->dims, (size_t)s->rank * sizeof s->dims[0]);
    r->n++;
}

static void observe(void *user, const sy_node_output *o)
{
    tr_rules *r = user;
    record(r, o->tensor);
    for (uint32_t i = 0; i < o->n_inputs; i++)
        record(r, o->inputs[i]);
}

/* one forward run at batch 1 (symbolic dims taken as 1), zero inputs */
static sy_status *probe(tr_rules *r, sy_env *env, const char *model_path)
{
    sy_model *m = NULL;
    sy_session *s = NULL;
    void **bufs = NULL;
    size_t nin = 0;
    sy_status *st = sy_model_load(env, model_path, &m);
    if (st)
        return st;
    /* every named node on the reference provider: a provider that fuses
     * would hide the values inside its partitions from the observer */
    size_t nn = sy_model_node_count(m), np = 0;
    sy_placement_override *pl = calloc(nn ? nn : 1, sizeof *pl);
    if (!pl)
        goto oom;
    for (size_t i = 0; i < nn; i++) {
        const char *name = NULL, *domain = NULL, *op = NULL;
        if (sy_model_node(m, i, &name, &domain, &op) && name && *name)
            pl[np++] = (sy_placement_override){.node = name, .provider = "cpu_ref"};
    }
    sy_session_options so = {.struct_size = sizeof so, .strict = -1, .placements = pl, .n_placements = (uint32_t)np};
    st = sy_session_create(env, m, &so, &s);
    free(pl);
    if (st)
        goto done;
    nin = sy_model_input_count(m);
    bufs = calloc(nin ? nin : 1, sizeof *bufs);
    if (!bufs)
        goto oom;
    for (size_t i = 0; i < nin; i++) {
        sy_value_info vi = {.struct_size = sizeof vi};
        if (!sy_model_input_info(m, i, &vi) || vi.rank < 0 || !sy_dtype_size(vi.dtype)) {
            st = sy_status_create(SY_ERR_UNSUPPORTED, "input %zu of %s has no static rank and element type", i,
                                  model_path);
            goto done;
        }
        sy_tensor t = {.struct_size = sizeof t, .dtype = vi.dtype, .rank = vi.rank, .name = vi.name};
        size_t numel = 1;
        for (int32_t k = 0; k < vi.rank; k++) {
            t.dims[k] = vi.dims[k] < 0 ? 1 : vi.dims[k];
            if (t.dims[k] > (1 << 24) || numel > ((size_t)1 << 28) / (size_t)(t.dims[k] ? t.dims[k] : 1)) {
                st = sy_status_create(SY_ERR_UNSUPPORTED, "input '%s' of %s is too large to probe", vi.name,
                                      model_path);
                goto done;
            }
            numel *= (size_t)t.dims[k];
        }
        t.nbytes = numel * sy_dtype_size(vi.dtype);
        bufs[i] = calloc(t.nbytes ? t.nbytes : 1, 1);
        if (!bufs[i])
            goto oom;
        t.data = bufs[i];
        record(r, &t);
        if ((st = sy_session_set_input_by_index(s, i, &t, SY_INPUT_COPY)))
            goto done;
    }
    sy_session_set_observer(s, observe, r);
    st = sy_session_run(s);
    sy_session_set_observer(s, NULL, NULL);
    if (!st && r->oom)
        goto oom;
    goto done;
oom:
    st = sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory probing the shapes of %s", model_path);
done:
    for (size_t i = 0; bufs && i < nin; i++)
        free(bufs[i]);
    free(bufs);
    sy_session_release(s);
    sy_model_release(m);
    return st;
}

void tr_rules_release(tr_rules *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        free(r->v[i].name);
    free(r->v);
    free(r);
}

sy_status *tr_rules_create(const char *target, sy_env *env, const char *model_path, const Onnx__GraphProto *fwd,
                           tr_rules **out)
{
    *out = NULL;
    if (!target)
        return NULL;
    if (!strcmp(target, "hi3066") || !strcmp(target, "3066H"))
        return sy_status_create(SY_ERR_UNSUPPORTED,
                                "sy_train_build: target %s: seed 001 §4: \"" SEED_WS63_ONLY
                                "\" (on-device training is supported only on ws63)",
                                target);
    if (strcmp(target, "ws63"))
        return sy_status_create(SY_ERR_INVALID_ARGUMENT,
                                "sy_train_build: unknown target '%s' (ws63 trains; hi3066 does not)", target);
    tr_rules *r = calloc(1, sizeof *r);
    if (!r)
        return sy_status_create(SY_ERR_OUT_OF_MEMORY, "sy_train_build: out of memory");
    r->target = "ws63";
    r->fwd = fwd;
    sy_env *own = NULL;
    sy_status *st = NULL;
    if (!env && (st = sy_env_create(NULL, &own)))
        goto fail;
    st = probe(r, env ? env : own, model_path);
    sy_env_release(own);
    if (st)
        goto fail;
    *out = r;
    return NULL;
fail:;
    sy_status *wrapped = sy_status_create(sy_status_get_code(st),
                                          "sy_train_build: target ws63: the shape probe (one forward run) failed: %s",
                                          sy_status_get_message(st));
    sy_status_free(st);
    tr_rules_release(r);
    return wrapped;
}

/* ---- the rows ------------------------------------------------------------- */

static const tr_shape *shape(const tr_rules *r, const char *name)
{
    if (!name || !*name)
        return NULL;
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->v[i].name, name))
            return &r->v[i];
    for (size_t i = 0; i < r->fwd->n_initializer; i++) {
        const Onnx__TensorProto *t = r->fwd->initializer[i];
        if (!strcmp(t->name, name)) {
            static _Thread_local tr_shape s; /* read at once by the caller */
            memset(&s, 0, sizeof s);
            s.name = t->name;
            s.dtype = t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ? SY_DT_FLOAT32 : SY_DT_INT64;
            s.rank = t->n_dims > SY_MAX_RANK ? SY_MAX_RANK : (int32_t)t->n_dims;
            for (int32_t k = 0; k < s.rank; k++)
                s.dims[k] = t->dims[k];
            return &s;
        }
    }
    return NULL;
}

static int decline(tr_autodiff *ad, const Onnx__NodeProto *n, const char *row, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int decline(tr_autodiff *ad, const Onnx__NodeProto *n, const char *row, const char *fmt, ...)
{
    char why[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(ad->err, sizeof ad->err, "node '%s' (%s): not trainable on %s: %s; seed 001 §4: \"%s\"",
             n->name && *n->name ? n->name : "(unnamed)", n->op_type, ad->rules->target, why, row);
    return 1;
}

static const Onnx__AttributeProto *attr(const Onnx__NodeProto *n, const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (!strcmp(n->attribute[i]->name, name))
            return n->attribute[i];
    return NULL;
}

static const Onnx__TensorProto *constant(const tr_rules *r, const Onnx__NodeProto *n, size_t i)
{
    if (i >= n->n_input || !n->input[i][0])
        return NULL;
    for (size_t k = 0; k < r->fwd->n_initializer; k++)
        if (!strcmp(r->fwd->initializer[k]->name, n->input[i]))
            return r->fwd->initializer[k];
    return NULL;
}

/* the int values of an integer initializer (int32 or int64), at most cap */
static long const_ints(const Onnx__TensorProto *t, int64_t *out, size_t cap)
{
    size_t n = 0;
    if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64) {
        n = t->n_int64_data ? t->n_int64_data : t->raw_data.len / 8;
        for (size_t i = 0; i < n && i < cap; i++) {
            if (t->n_int64_data)
                out[i] = t->int64_data[i];
            else
                memcpy(&out[i], t->raw_data.data + 8 * i, 8);
        }
    } else if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT32) {
        n = t->n_int32_data ? t->n_int32_data : t->raw_data.len / 4;
        for (size_t i = 0; i < n && i < cap; i++) {
            int32_t v;
            if (t->n_int32_data)
                v = t->int32_data[i];
            else
                memcpy(&v, t->raw_data.data + 4 * i, 4);
            out[i] = v;
        }
    } else
        return -1;
    return n > cap ? -1 : (long)n;
}

static int64_t numel(const tr_shape *s)
{
    int64_t e = 1;
    for (int32_t k = 0; k < s->rank; k++)
        e *= s->dims[k];
    return e;
}

static bool same_shape(const tr_shape *a, const tr_shape *b)
{
    if (a->rank != b->rank)
        return false;
    for (int32_t k = 0; k < a->rank; k++)
        if (a->dims[k] != b->dims[k])
            return false;
    return true;
}

static void fmt_shape(const tr_shape *s, char *buf, size_t cap)
{
    size_t len = (size_t)snprintf(buf, cap, "[");
    for (int32_t k = 0; k < s->rank && len < cap; k++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%lld", k ? "," : "", (long long)s->dims[k]);
    if (len < cap)
        snprintf(buf + len, cap - len, "]");
}

/* the node's value `v` must have a known shape, be FP32 and non-empty */
#define NEED_FP32(v, row, what)                                                                                        \
    do {                                                                                                               \
        if (!(v))                                                                                                      \
            return decline(ad, n, row, "the shape of %s is unknown (not shown by the probe run)", what);               \
        if ((v)->dtype != SY_DT_FLOAT32)                                                                               \
            return decline(ad, n, row, "%s is %s, not FP32", what, sy_dtype_name((v)->dtype));                        \
        if (numel(v) <= 0)                                                                                             \
            return decline(ad, n, row, "%s is empty", what);                                                           \
    } while (0)

static int conv(tr_autodiff *ad, const Onnx__NodeProto *n)
{
    const tr_rules *r = ad->rules;
    const tr_shape *x = shape(r, n->input[0]);
    NEED_FP32(x, ROW_CONV, "X");
    tr_shape xs = *x;
    const tr_shape *w = n->n_input > 1 ? shape(r, n->input[1]) : NULL;
    NEED_FP32(w, ROW_CONV, "W");
    if (xs.rank != 4 || w->rank != 4)
        return decline(ad, n, ROW_CONV, "X has rank %d and W rank %d, not 4", (int)xs.rank, (int)w->rank);
    if (xs.dims[0] != 1)
        return decline(ad, n, ROW_CONV, "batch %lld, not 1", (long long)xs.dims[0]);
    if (n->n_input > 2 && n->input[2][0])
        return decline(ad, n, ROW_CONV, "it has a bias");
    static const char *const one_attrs[] = {"strides", "dilations"};
    for (size_t k = 0; k < 2; k++) {
        const Onnx__AttributeProto *a = attr(n, one_attrs[k]);
        for (size_t i = 0; a && i < a->n_ints; i++)
            if (a->ints[i] != 1)
                return decline(ad, n, ROW_CONV, "%s[%zu] = %lld, not 1", one_attrs[k], i, (long long)a->ints[i]);
    }
    const Onnx__AttributeProto *g = attr(n, "group");
    int64_t group = g && g->has_i ? g->i : 1;
    if (group != xs.dims[1] || w->dims[0] != group || w->dims[1] != 1)
        return decline(ad, n, ROW_CONV,
                       "group %lld with %lld input and %lld output channels and W [%lld,%lld,..] is not depthwise",
                       (long long)group, (long long)xs.dims[1], (long long)w->dims[0], (long long)w->dims[0],
                       (long long)w->dims[1]);
    return 0;
}

static int fc(tr_autodiff *ad, const Onnx__NodeProto *n)
{
    const tr_rules *r = ad->rules;
    const bool gemm = !strcmp(n->op_type, "Gemm");
    if (n->n_input < 2 || n->n_input > 3 || (!gemm && n->n_input != 2))
        return decline(ad, n, ROW_FC, "%zu inputs", n->n_input);
    const tr_shape *a = shape(r, n->input[0]);
    NEED_FP32(a, ROW_FC, "A");
    int32_t ra = a->rank;
    const tr_shape *b = shape(r, n->input[1]);
    NEED_FP32(b, ROW_FC, "B");
    if (ra != 2 || b->rank != 2)
        return decline(ad, n, ROW_FC, "A has rank %d and B rank %d, not 2", (int)ra, (int)b->rank);
    if (!gemm)
        return 0;
    const Onnx__AttributeProto *ta = attr(n, "transA"), *tb = attr(n, "transB");
    if (ta && ta->i)
        return decline(ad, n, ROW_FC, "A is transposed");
    int64_t out_ch = tb && tb->i ? b->dims[0] : b->dims[1];
    if (n->n_input == 3 && n->input[2][0]) {
        const tr_shape *c = shape(r, n->input[2]);
        NEED_FP32(c, ROW_FC, "the bias");
        if (numel(c) != out_ch)
            return decline(ad, n, ROW_FC, "the bias has %lld elements for %lld output channels",
                           (long long)numel(c), (long long)out_ch);
    }
    return 0;
}

static int eltwise(tr_autodiff *ad, const Onnx__NodeProto *n, bool broadcast_ok)
{
    const tr_rules *r = ad->rules;
    const char *row = broadcast_ok ? ROW_DIV : ROW_ELTWISE;
    if (n->n_input != 2)
        return decline(ad, n, row, "%zu inputs", n->n_input);
    const tr_shape *y = shape(r, n->output[0]);
    NEED_FP32(y, row, "the output");
    tr_shape ys = *y;
    if (broadcast_ok)
        return ys.rank > 10 ? decline(ad, n, row, "rank %d", (int)ys.rank) : 0;
    tr_shape in[2];
    for (size_t i = 0; i < 2; i++) {
        const tr_shape *s = shape(r, n->input[i]);
        NEED_FP32(s, row, i ? "B" : "A");
        in[i] = *s;
    }
    if (!same_shape(&in[0], &in[1]) || !same_shape(&in[0], &ys)) {
        char a[96], b[96], o[96];
        fmt_shape(&in[0], a, sizeof a);
        fmt_shape(&in[1], b, sizeof b);
        fmt_shape(&ys, o, sizeof o);
        return decline(ad, n, row, "it broadcasts: %s and %s to %s", a, b, o);
    }
    return 0;
}

static int concat(tr_autodiff *ad, const Onnx__NodeProto *n)
{
    const tr_rules *r = ad->rules;
    if (n->n_input != 2 || n->n_output != 1)
        return decline(ad, n, ROW_CONCAT, "%zu inputs and %zu outputs", n->n_input, n->n_output);
    tr_shape in[2];
    for (size_t i = 0; i < 2; i++) {
        const tr_shape *s = shape(r, n->input[i]);
        NEED_FP32(s, ROW_CONCAT, i ? "input 1" : "input 0");
        in[i] = *s;
    }
    if (in[0].rank != in[1].rank || in[0].rank == 0)
        return decline(ad, n, ROW_CONCAT, "input ranks %d and %d", (int)in[0].rank, (int)in[1].rank);
    return 0;
}

static int reshape_like(tr_autodiff *ad, const Onnx__NodeProto *n)
{
    const tr_rules *r = ad->rules;
    const tr_shape *x = shape(r, n->input[0]);
    NEED_FP32(x, ROW_RESHAPE, "the input");
    int64_t ex = numel(x);
    const tr_shape *y = shape(r, n->output[0]);
    NEED_FP32(y, ROW_RESHAPE, "the output");
    if (ex != numel(y))
        return decline(ad, n, ROW_RESHAPE, "%lld input and %lld output elements", (long long)ex, (long long)numel(y));
    return 0;
}

static int transpose(tr_autodiff *ad, const Onnx__NodeProto *n)
{
    const tr_shape *x = shape(ad->rules, n->input[0]);
    NEED_FP32(x, ROW_TRANSPOSE, "the input");
    if (x->rank < 1 || x->rank > 19)
        return decline(ad, n, ROW_TRANSPOSE, "rank %d", (int)x->rank);
    const Onnx__AttributeProto *p = attr(n, "perm");
    if (p && p->n_ints != (size_t)x->rank)
        return decline(ad, n, ROW_TRANSPOSE, "perm has %zu entries for rank %d", p->n_ints, (int)x->rank);
    bool seen[SY_MAX_RANK] = {0};
    for (size_t i = 0; p && i < p->n_ints; i++) {
        if (p->ints[i] < 0 || p->ints[i] >= x->rank || seen[p->ints[i]])
            return decline(ad, n, ROW_TRANSPOSE, "perm is not a permutation");
        seen[p->ints[i]] = true;
    }
    return 0;
}

static int slice(tr_autodiff *ad, const Onnx__NodeProto *n)
{
    const tr_rules *r = ad->rules;
    const tr_shape *x = shape(r, n->input[0]);
    NEED_FP32(x, ROW_SLICE, "the input");
    if (x->rank < 1 || x->rank > 8)
        return decline(ad, n, ROW_SLICE, "rank %d", (int)x->rank);
    const tr_shape *y = shape(r, n->output[0]);
    NEED_FP32(y, ROW_SLICE, "the output (an empty slice)");
    if (ad->opset >= 10) {
        for (size_t i = 1; i < n->n_input && i < 5; i++)
            if (n->input[i][0] && !constant(r, n, i))
                return decline(ad, n, ROW_SLICE, "input %zu (%s) is not a constant", i, n->input[i]);
        const Onnx__TensorProto *st = constant(r, n, 4);
        int64_t steps[SY_MAX_RANK];
        long ns = st ? const_ints(st, steps, SY_MAX_RANK) : 0;
        if (ns < 0)
            return decline(ad, n, ROW_SLICE, "steps are not an integer list of at most rank entries");
        for (long i = 0; i < ns; i++)
            if (steps[i] <= 0)
                return decline(ad, n, ROW_SLICE, "step %lld", (long long)steps[i]);
    }
    return 0;
}

static int pad(tr_autodiff *ad, const Onnx__NodeProto *n)
{
    const tr_rules *r = ad->rules;
    const Onnx__AttributeProto *m = attr(n, "mode");
    if (m && m->s.len && (m->s.len != 8 || memcmp(m->s.data, "constant", 8)))
        return decline(ad, n, ROW_PAD, "mode '%.*s'", (int)(m->s.len > 32 ? 32 : m->s.len), (const char *)m->s.data);
    const tr_shape *x = shape(r, n->input[0]);
    NEED_FP32(x, ROW_PAD, "the input");
    if (x->rank < 1 || x->rank > 6)
        return decline(ad, n, ROW_PAD, "rank %d", (int)x->rank);
    int64_t pads[2 * SY_MAX_RANK];
    long np = -1;
    const Onnx__AttributeProto *pa = attr(n, "pads");
    if (ad->opset < 11 && pa) {
        np = pa->n_ints <= 2 * SY_MAX_RANK ? (long)pa->n_ints : -1;
        for (long i = 0; i < np; i++)
            pads[i] = pa->ints[i];
    } else if (ad->opset >= 11) {
        const Onnx__TensorProto *t = constant(r, n, 1);
        if (!t)
            return decline(ad, n, ROW_PAD, "the pads are not a constant");
        np = const_ints(t, pads, 2 * SY_MAX_RANK);
        if (n->n_input > 3 && n->input[3][0])
            return decline(ad, n, ROW_PAD, "it pads selected axes (normalized paddings cover every axis)");
    }
    if (np != 2 * (long)x->rank)
        return decline(ad, n, ROW_PAD, "%ld pads for rank %d", np, (int)x->rank);
    for (long i = 0; i < np; i++)
        if (pads[i] < 0)
            return decline(ad, n, ROW_PAD, "pad %ld is %lld (negative)", i, (long long)pads[i]);
    return 0;
}

static int reduce(tr_autodiff *ad, const Onnx__NodeProto *n)
{
    const tr_rules *r = ad->rules;
    const tr_shape *x = shape(r, n->input[0]);
    NEED_FP32(x, ROW_REDUCE, "the input");
    int32_t rank = x->rank;
    if (rank < 1 || rank > 8)
        return decline(ad, n, ROW_REDUCE, "rank %d", (int)rank);
    int64_t axes[SY_MAX_RANK];
    long na = 0;
    const Onnx__AttributeProto *a = attr(n, "axes");
    if (a) {
        na = a->n_ints <= SY_MAX_RANK ? (long)a->n_ints : -1;
        for (long i = 0; i < na; i++)
            axes[i] = a->ints[i];
    } else if (n->n_input > 1 && n->input[1][0]) {
        const Onnx__TensorProto *t = constant(r, n, 1);
        if (!t)
            return decline(ad, n, ROW_REDUCE, "the axes (%s) are not a constant", n->input[1]);
        na = const_ints(t, axes, SY_MAX_RANK);
    }
    if (na < 0)
        return decline(ad, n, ROW_REDUCE, "the axes are not an integer list of at most %d entries", SY_MAX_RANK);
    bool seen[SY_MAX_RANK] = {0};
    for (long i = 0; i < na; i++) {
        int64_t v = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (v < 0 || v >= rank || seen[v])
            return decline(ad, n, ROW_REDUCE, "axis %lld is out of range or repeated for rank %d",
                           (long long)axes[i], (int)rank);
        seen[v] = true;
    }
    return 0;
}

int tr_rules_check(tr_autodiff *ad, const Onnx__NodeProto *n)
{
    const char *op = n->op_type;
    if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx"))
        return decline(ad, n, "the trainable operators: " TRAINABLE_OPS, "no seed training row for domain '%s'",
                       n->domain);
    if (!strcmp(op, "Conv"))
        return conv(ad, n);
    if (!strcmp(op, "Gemm") || !strcmp(op, "MatMul"))
        return fc(ad, n);
    if (!strcmp(op, "Relu")) {
        const tr_shape *x = shape(ad->rules, n->input[0]);
        NEED_FP32(x, ROW_RELU, "the input");
        return 0;
    }
    if (!strcmp(op, "Abs")) {
        const tr_shape *x = shape(ad->rules, n->input[0]);
        NEED_FP32(x, ROW_ABS, "the input");
        return 0;
    }
    if (!strcmp(op, "Reshape") || !strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze") || !strcmp(op, "Flatten"))
        return reshape_like(ad, n);
    if (!strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul"))
        return eltwise(ad, n, false);
    if (!strcmp(op, "Div"))
        return eltwise(ad, n, true);
    if (!strcmp(op, "Concat"))
        return concat(ad, n);
    if (!strcmp(op, "Transpose"))
        return transpose(ad, n);
    if (!strcmp(op, "Slice"))
        return slice(ad, n);
    if (!strcmp(op, "Pad"))
        return pad(ad, n);
    if (!strcmp(op, "ReduceSum") || !strcmp(op, "ReduceMean"))
        return reduce(ad, n);
    if (!strcmp(op, "MaxPool"))
        return decline(ad, n, ROW_MAXPOOL, "a float MaxPool");
    if (!strcmp(op, "MirrorPad") || !strcmp(op, "Mirror_Pad"))
        return decline(ad, n, ROW_MIRROR, "a mirror pad");
    return decline(ad, n, "the trainable operators: " TRAINABLE_OPS, "%s has no row in the training table", op);
}
