/* The QDQ pass (see pass_qdq.h). Which op folds into which kernel comes
 * from the "qdq_patterns" table of the plugin that owns the kernels
 * (switchyard/ext/sy_qdq_patterns.h); this file implements the rewrites. */
#include "pass_qdq.h"
#include "util.h"

#include <switchyard/ext/sy_qdq_patterns.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIN 64 /* most inputs of one folded node */

typedef struct qctx {
    const sy_env *env;
    const sy_qdq_patterns *pt; /* the kernels' table */
    const char *qd;            /* their domain */
    ir_model *m;
    ir_graph *g;
    uint32_t *uses;  /* per value: references from live nodes */
    int32_t *user;   /* per value: the last live node that references it */
    sy_dtype *qdt;   /* per value: element type when known (initializers, inputs, Q outputs, folded outputs) */
    bool *dead;      /* per node */
    uint32_t n_vals_cap;
} qctx;

/* ---- small queries -------------------------------------------------------- */

static bool is_op(const ir_node *n, const char *op) { return !n->domain[0] && !strcmp(n->op, op); }
static bool is_init(const qctx *c, int32_t v) { return v >= 0 && (c->g->values[v].flags & IR_VALUE_INITIALIZER); }
static bool is_gout(const qctx *c, int32_t v) { return v >= 0 && (c->g->values[v].flags & IR_VALUE_GRAPH_OUTPUT); }
static int64_t v_numel(const ir_value *v)
{
    if (v->rank < 0)
        return -1;
    int64_t n = 1;
    for (int32_t i = 0; i < v->rank; i++) {
        if (v->dims[i] < 0)
            return -1;
        n *= v->dims[i];
    }
    return n;
}
static int32_t in_at(const ir_node *n, uint32_t i) { return i < n->n_inputs ? n->inputs[i] : -1; }
static ir_node *producer(const qctx *c, int32_t v)
{
    if (v < 0 || (uint32_t)v >= c->g->n_values)
        return NULL;
    int32_t p = c->g->values[v].producer;
    return p >= 0 && !c->dead[p] ? &c->g->nodes[p] : NULL;
}

static bool const_f32(const qctx *c, int32_t v, float *out)
{
    if (!is_init(c, v))
        return false;
    const ir_value *iv = &c->g->values[v];
    if (v_numel(iv) != 1 || !iv->data)
        return false;
    if (iv->dtype == SY_DT_FLOAT32) {
        memcpy(out, iv->data, sizeof *out);
        return true;
    }
    return false;
}

static bool const_int(const qctx *c, int32_t v, int32_t *out)
{
    if (!is_init(c, v))
        return false;
    const ir_value *iv = &c->g->values[v];
    if (v_numel(iv) != 1 || !iv->data)
        return false;
    switch (iv->dtype) {
    case SY_DT_INT8: *out = *(const int8_t *)iv->data; return true;
    case SY_DT_UINT8: *out = *(const uint8_t *)iv->data; return true;
    case SY_DT_INT16: { int16_t x; memcpy(&x, iv->data, 2); *out = x; return true; }
    case SY_DT_UINT16: { uint16_t x; memcpy(&x, iv->data, 2); *out = x; return true; }
    case SY_DT_INT32: { int32_t x; memcpy(&x, iv->data, 4); *out = x; return true; }
    default: return false;
    }
}

static int64_t attr_i(const ir_node *n, const char *name, int64_t def)
{
    const ir_attr *a = ir_node_attr(n, name);
    return a && a->type == SY_ATTR_INT ? a->i : def;
}

static bool act_type(sy_dtype dt) { return dt == SY_DT_INT8 || dt == SY_DT_UINT8 || dt == SY_DT_INT16 || dt == SY_DT_UINT16; }
static bool weight_type(sy_dtype dt) { return dt == SY_DT_INT8 || dt == SY_DT_UINT8 || dt == SY_DT_INT4 || dt == SY_DT_UINT4; }

/* ---- DequantizeLinear / QuantizeLinear recognition ------------------------ */

typedef struct dq_info {
    int32_t node, x, s, z;
    int64_t axis;     /* normalised against the rank of x when per axis */
    bool per_tensor;
    sy_dtype dt;
} dq_info;

/* v is the output of a live DequantizeLinear with constant parameters. */
static bool get_dq(const qctx *c, int32_t v, bool allow_axis, dq_info *d)
{
    ir_node *n = producer(c, v);
    if (!n || !is_op(n, "DequantizeLinear") || n->n_outputs != 1)
        return false;
    d->node = c->g->values[v].producer;
    d->x = in_at(n, 0);
    d->s = in_at(n, 1);
    d->z = in_at(n, 2);
    if (d->x < 0 || !is_init(c, d->s) || (d->z >= 0 && !is_init(c, d->z)))
        return false;
    if (attr_i(n, "block_size", 0) != 0)
        return false;
    d->dt = c->qdt[d->x];
    const ir_value *sv = &c->g->values[d->s];
    if (sv->dtype != SY_DT_FLOAT32)
        return false;
    int64_t ns = v_numel(sv);
    d->per_tensor = ns == 1;
    d->axis = attr_i(n, "axis", 1);
    if (!d->per_tensor) {
        if (!allow_axis || sv->rank != 1)
            return false;
        const ir_value *xv = &c->g->values[d->x];
        if (xv->rank <= 0)
            return false;
        if (d->axis < 0)
            d->axis += xv->rank;
        if (d->axis < 0 || d->axis >= xv->rank || xv->dims[d->axis] != ns)
            return false;
    }
    if (d->z >= 0) {
        const ir_value *zv = &c->g->values[d->z];
        if (v_numel(zv) != ns || zv->dtype != d->dt)
            return false;
    }
    return true;
}

typedef struct q_info {
    int32_t node, y, s, z;
    sy_dtype dt;
} q_info;

/* v (not a graph output) is consumed only by a QuantizeLinear with constant
 * per-tensor parameters. */
static bool get_q(const qctx *c, int32_t v, q_info *q)
{
    if (v < 0 || is_gout(c, v) || c->uses[v] != 1)
        return false;
    int32_t ui = c->user[v];
    if (ui < 0 || c->dead[ui])
        return false;
    const ir_node *n = &c->g->nodes[ui];
    if (!is_op(n, "QuantizeLinear") || in_at(n, 0) != v || n->n_outputs != 1 || n->outputs[0] < 0)
        return false;
    if (attr_i(n, "block_size", 0) != 0)
        return false;
    q->node = ui;
    q->y = n->outputs[0];
    q->s = in_at(n, 1);
    q->z = in_at(n, 2);
    float s;
    int32_t z;
    if (!const_f32(c, q->s, &s) || (q->z >= 0 && !const_int(c, q->z, &z)))
        return false;
    q->dt = c->qdt[q->y];
    return act_type(q->dt);
}

/* A single-consumer Relu or Clip (constant bounds) after v, followed by a
 * QuantizeLinear: the clamp folds into the requantization. */
static bool get_act_q(const qctx *c, int32_t v, float *amin, float *amax, int32_t *act_node, q_info *q)
{
    *amin = -INFINITY;
    *amax = INFINITY;
    *act_node = -1;
    if (get_q(c, v, q))
        return true;
    if (v < 0 || is_gout(c, v) || c->uses[v] != 1 || c->user[v] < 0)
        return false;
    const ir_node *a = &c->g->nodes[c->user[v]];
    if (in_at(a, 0) != v || a->n_outputs != 1)
        return false;
    const sy_qdq_pattern *ap = a->domain[0] ? NULL : sy_qdq_find(c->pt, a->op);
    if (!ap || !(ap->flags & SY_QDQ_ACTIVATION))
        return false;
    if (!(ap->flags & SY_QDQ_CLIP_RANGE)) {
        *amin = 0.0f; /* Relu */
    } else {
        if (a->opset < 11) {
            const ir_attr *lo = ir_node_attr(a, "min"), *hi = ir_node_attr(a, "max");
            if (lo)
                *amin = lo->f;
            if (hi)
                *amax = hi->f;
        } else {
            int32_t lo = in_at(a, 1), hi = in_at(a, 2);
            if ((lo >= 0 && !const_f32(c, lo, amin)) || (hi >= 0 && !const_f32(c, hi, amax)))
                return false;
        }
    }
    if (!get_q(c, a->outputs[0], q))
        return false;
    *act_node = c->user[v];
    return true;
}

/* ---- attributes ----------------------------------------------------------- */

static bool attr_copy(ir_attr *dst, const ir_attr *src, const char *rename)
{
    memset(dst, 0, sizeof *dst);
    dst->name = sy_strdup(rename ? rename : src->name);
    dst->type = src->type;
    dst->i = src->i;
    dst->f = src->f;
    dst->count = src->count;
    if (!dst->name)
        return false;
    if (src->type == SY_ATTR_STRING) {
        dst->s = sy_strndup(src->s ? src->s : "", src->s_len);
        dst->s_len = src->s_len;
        return dst->s != NULL;
    }
    if (src->type == SY_ATTR_INTS) {
        dst->ints = malloc((src->count ? src->count : 1) * sizeof *dst->ints);
        if (!dst->ints)
            return false;
        if (src->count)
            memcpy(dst->ints, src->ints, src->count * sizeof *dst->ints);
        return true;
    }
    if (src->type == SY_ATTR_FLOATS) {
        dst->floats = malloc((src->count ? src->count : 1) * sizeof *dst->floats);
        if (!dst->floats)
            return false;
        if (src->count)
            memcpy(dst->floats, src->floats, src->count * sizeof *dst->floats);
        return true;
    }
    if (src->type == SY_ATTR_STRINGS) { /* RNN activations */
        dst->strings = calloc(src->count ? src->count : 1, sizeof *dst->strings);
        if (!dst->strings)
            return false;
        for (size_t i = 0; i < src->count; i++)
            if (!(dst->strings[i] = sy_strdup(src->strings[i] ? src->strings[i] : "")))
                return false;
        return true;
    }
    return src->type == SY_ATTR_INT || src->type == SY_ATTR_FLOAT;
}

typedef struct attr_list {
    ir_attr a[16];
    uint32_t n;
    bool failed;
} attr_list;

static void al_free(attr_list *l)
{
    for (uint32_t i = 0; i < l->n; i++)
        ir_attr_free(&l->a[i]);
    l->n = 0;
}
static void al_copy(attr_list *l, const ir_node *n, const char *name)
{
    const ir_attr *a = ir_node_attr(n, name);
    if (!a || l->n >= 16)
        return;
    if (!attr_copy(&l->a[l->n], a, NULL)) {
        ir_attr_free(&l->a[l->n]);
        l->failed = true;
        return;
    }
    l->n++;
}
static void al_float(attr_list *l, const char *name, float v)
{
    if (l->n >= 16)
        return;
    ir_attr *a = &l->a[l->n];
    memset(a, 0, sizeof *a);
    a->name = sy_strdup(name);
    a->type = SY_ATTR_FLOAT;
    a->f = v;
    if (!a->name)
        l->failed = true;
    else
        l->n++;
}
static void al_int(attr_list *l, const char *name, int64_t v)
{
    if (l->n >= 16)
        return;
    ir_attr *a = &l->a[l->n];
    memset(a, 0, sizeof *a);
    a->name = sy_strdup(name);
    a->type = SY_ATTR_INT;
    a->i = v;
    if (!a->name)
        l->failed = true;
    else
        l->n++;
}
static void al_string(attr_list *l, const char *name, const char *v)
{
    if (l->n >= 16)
        return;
    ir_attr *a = &l->a[l->n];
    memset(a, 0, sizeof *a);
    a->name = sy_strdup(name);
    a->type = SY_ATTR_STRING;
    a->s = sy_strdup(v);
    a->s_len = strlen(v);
    if (!a->name || !a->s) {
        ir_attr_free(a);
        l->failed = true;
    } else {
        l->n++;
    }
}
static void al_act(attr_list *l, float amin, float amax)
{
    if (isfinite(amin))
        al_float(l, "act_min", amin);
    if (isfinite(amax))
        al_float(l, "act_max", amax);
}

/* ---- committing a fold ---------------------------------------------------- */

static void node_ref(qctx *c, uint32_t ni, int delta)
{
    const ir_node *n = &c->g->nodes[ni];
    for (uint32_t k = 0; k < n->n_inputs; k++) {
        int32_t v = n->inputs[k];
        if (v < 0)
            continue;
        if (delta > 0) {
            c->uses[v]++;
            c->user[v] = (int32_t)ni;
        } else if (c->uses[v] > 0) {
            c->uses[v]--;
        }
    }
}

static void kill_node(qctx *c, int32_t ni)
{
    if (ni < 0 || c->dead[ni])
        return;
    node_ref(c, (uint32_t)ni, -1);
    c->dead[ni] = true;
}

/* Replace node ni by (domain, op) with the given inputs, attributes and one
 * output; kill the Q node (and the folded activation). Takes the attributes
 * (freed on failure). */
static bool commit(qctx *c, uint32_t ni, const char *domain, const char *op, const int32_t *ins, uint32_t n_in,
                   attr_list *al, int32_t out, int32_t q_node, int32_t act_node)
{
    char *nop = sy_strdup(op), *ndom = sy_strdup(domain);
    int32_t *nin = malloc((n_in ? n_in : 1) * sizeof *nin);
    int32_t *nout = malloc(sizeof *nout);
    ir_attr *nattrs = al->n ? malloc(al->n * sizeof *nattrs) : NULL;
    if (!nop || !ndom || !nin || !nout || (al->n && !nattrs) || al->failed) {
        free(nop);
        free(ndom);
        free(nin);
        free(nout);
        free(nattrs);
        al_free(al);
        return false;
    }
    memcpy(nin, ins, n_in * sizeof *nin);
    nout[0] = out;
    if (al->n)
        memcpy(nattrs, al->a, al->n * sizeof *nattrs);
    /* from here on nothing can fail */
    kill_node(c, q_node);
    kill_node(c, act_node);
    ir_node *n = &c->g->nodes[ni];
    node_ref(c, ni, -1);
    ir_graph_free_ptr(c->g, n->op); /* a no-op for the graph's pool (ir.h) */
    ir_graph_free_ptr(c->g, n->domain);
    ir_graph_free_ptr(c->g, n->inputs);
    ir_graph_free_ptr(c->g, n->outputs);
    for (uint32_t i = 0; i < n->n_attrs; i++)
        ir_attr_free(&n->attrs[i]);
    free(n->attrs);
    n->op = nop;
    n->domain = ndom;
    n->opset = 1;
    n->inputs = nin;
    n->n_inputs = n_in;
    n->outputs = nout;
    n->n_outputs = 1;
    n->attrs = nattrs;
    n->n_attrs = al->n;
    al->n = 0;
    node_ref(c, ni, +1);
    return true;
}

/* ---- the folds ------------------------------------------------------------ */

static void push_dq(int32_t *ins, uint32_t *k, const dq_info *d)
{
    ins[(*k)++] = d->x;
    ins[(*k)++] = d->s;
    ins[(*k)++] = d->z;
}
static void push_q(int32_t *ins, uint32_t *k, const q_info *q)
{
    ins[(*k)++] = q->s;
    ins[(*k)++] = q->z;
}

/* the attributes the pattern keeps */
static void al_copy_pattern(attr_list *al, const ir_node *n, const sy_qdq_pattern *p)
{
    for (const char *const *a = p->attrs; a && *a; a++)
        al_copy(al, n, *a);
}

/* QConv / QConvTranspose: x, x_scale, x_zp, w, w_scale, w_zp, y_scale,
 * y_zp[, float bias], the op's attributes and the fused activation */
static bool commit_conv(qctx *c, uint32_t ni, const sy_qdq_pattern *p, const dq_info *x, const dq_info *w,
                        const q_info *q, float amin, float amax, int32_t act)
{
    const ir_node *n = &c->g->nodes[ni];
    int32_t ins[9];
    uint32_t k = 0;
    push_dq(ins, &k, x);
    push_dq(ins, &k, w);
    push_q(ins, &k, q);
    if (in_at(n, 2) >= 0)
        ins[k++] = in_at(n, 2); /* float bias (a DQ of it is folded as a constant) */
    attr_list al = {0};
    al_copy_pattern(&al, n, p);
    al_act(&al, amin, amax);
    c->qdt[q->y] = q->dt;
    return commit(c, ni, c->qd, p->qop, ins, k, &al, q->y, q->node, act);
}

static bool fold_conv(qctx *c, uint32_t ni, const sy_qdq_pattern *p)
{
    const ir_node *n = &c->g->nodes[ni];
    dq_info x, w;
    q_info q;
    float amin, amax;
    int32_t act;
    if (n->n_outputs != 1 || !get_dq(c, in_at(n, 0), false, &x) || !act_type(x.dt) ||
        !get_dq(c, in_at(n, 1), true, &w) || !weight_type(w.dt) || (!w.per_tensor && w.axis != 0) ||
        !get_act_q(c, n->outputs[0], &amin, &amax, &act, &q))
        return false;
    return commit_conv(c, ni, p, &x, &w, &q, amin, amax, act);
}

/* DQ(x), DQ(w)[, bias] -> ConvTranspose -> Q (Table B #113 int8): QConv's
 * inputs. Only what QConvTranspose's integer kernel computes: 8-bit codes
 * (its requantization takes 8-bit activations only), 1 or 2 spatial dims,
 * and a per-channel W on axis 1, its output channels ([C_in, C_out / group,
 * k...]); anything else stays float. */
static bool fold_conv_transpose(qctx *c, uint32_t ni, const sy_qdq_pattern *p)
{
    const ir_node *n = &c->g->nodes[ni];
    dq_info x, w;
    q_info q;
    float amin, amax;
    int32_t act;
    if (n->n_outputs != 1 || !get_dq(c, in_at(n, 0), false, &x) || (x.dt != SY_DT_INT8 && x.dt != SY_DT_UINT8) ||
        !get_dq(c, in_at(n, 1), true, &w) || (w.dt != SY_DT_INT8 && w.dt != SY_DT_UINT8) ||
        (!w.per_tensor && w.axis != 1))
        return false;
    const ir_value *wv = &c->g->values[w.x];
    if (wv->rank < 3 || wv->rank > 4)
        return false;
    if (!get_act_q(c, n->outputs[0], &amin, &amax, &act, &q) || (q.dt != SY_DT_INT8 && q.dt != SY_DT_UINT8))
        return false;
    return commit_conv(c, ni, p, &x, &w, &q, amin, amax, act);
}

static bool fold_matmul(qctx *c, uint32_t ni, const sy_qdq_pattern *p)
{
    const bool gemm = p->fold == SY_QDQ_FOLD_GEMM;
    const ir_node *n = &c->g->nodes[ni];
    dq_info a, b;
    q_info q;
    float amin, amax;
    int32_t act;
    bool tb = false;
    if (gemm) {
        const ir_attr *al_ = ir_node_attr(n, "alpha"), *be = ir_node_attr(n, "beta");
        if (attr_i(n, "transA", 0) != 0 || (al_ && al_->f != 1.0f) || (be && be->f != 1.0f && in_at(n, 2) >= 0))
            return false;
        tb = attr_i(n, "transB", 0) != 0;
    }
    if (n->n_outputs != 1 || !get_dq(c, in_at(n, 0), false, &a) || !act_type(a.dt) ||
        !get_dq(c, in_at(n, 1), true, &b) || !weight_type(b.dt))
        return false;
    if (!b.per_tensor) {
        const ir_value *bv = &c->g->values[b.x];
        if (bv->rank != 2 || b.axis != (tb ? 0 : 1))
            return false;
    }
    if (!get_act_q(c, n->outputs[0], &amin, &amax, &act, &q))
        return false;
    int32_t ins[9];
    uint32_t k = 0;
    push_dq(ins, &k, &a);
    push_dq(ins, &k, &b);
    push_q(ins, &k, &q);
    if (gemm && in_at(n, 2) >= 0)
        ins[k++] = in_at(n, 2);
    attr_list al = {0};
    if (tb)
        al_int(&al, "transB", 1);
    al_act(&al, amin, amax);
    c->qdt[q.y] = q.dt;
    return commit(c, ni, c->qd, p->qop, ins, k, &al, q.y, q.node, act);
}

static bool fold_binary(qctx *c, uint32_t ni, const sy_qdq_pattern *p)
{
    const ir_node *n = &c->g->nodes[ni];
    dq_info a, b;
    q_info q;
    float amin, amax;
    int32_t act;
    if (n->n_inputs != 2 || n->n_outputs != 1 || !get_dq(c, in_at(n, 0), false, &a) ||
        !get_dq(c, in_at(n, 1), false, &b) || !act_type(a.dt) || a.dt != b.dt ||
        !get_act_q(c, n->outputs[0], &amin, &amax, &act, &q))
        return false;
    if (n->opset < 7) /* legacy axis broadcasting */
        return false;
    int32_t ins[8];
    uint32_t k = 0;
    push_dq(ins, &k, &a);
    push_dq(ins, &k, &b);
    push_q(ins, &k, &q);
    attr_list al = {0};
    al_act(&al, amin, amax);
    c->qdt[q.y] = q.dt;
    return commit(c, ni, c->qd, p->qop, ins, k, &al, q.y, q.node, act);
}

/* DQ(x), fp32 initializers -> op -> Q (SY_QDQ_FOLD_FLOAT: the normalizations
 * with their constant parameters) */
static bool fold_float(qctx *c, uint32_t ni, const sy_qdq_pattern *p)
{
    const ir_node *n = &c->g->nodes[ni];
    dq_info x;
    q_info q;
    if (n->n_outputs < 1 || n->n_inputs + 4 > MAX_FIN || !get_dq(c, in_at(n, 0), false, &x) || !act_type(x.dt) ||
        !get_q(c, n->outputs[0], &q))
        return false;
    for (uint32_t o = 1; o < n->n_outputs; o++)
        if (n->outputs[o] >= 0) /* BatchNormalization's running statistics, LayerNormalization's Mean */
            return false;
    for (uint32_t i = 1; i < n->n_inputs; i++) {
        int32_t v = n->inputs[i];
        if (v >= 0 && (!is_init(c, v) || c->g->values[v].dtype != SY_DT_FLOAT32))
            return false;
    }
    int32_t ins[MAX_FIN];
    uint32_t k = 0;
    push_dq(ins, &k, &x);
    push_q(ins, &k, &q);
    for (uint32_t i = 1; i < n->n_inputs; i++)
        ins[k++] = n->inputs[i];
    attr_list al = {0};
    al_string(&al, "fn", n->op);
    al_copy_pattern(&al, n, p);
    c->qdt[q.y] = q.dt;
    return commit(c, ni, c->qd, p->qop, ins, k, &al, q.y, q.node, -1);
}

static bool fold_concat(qctx *c, uint32_t ni, const sy_qdq_pattern *p)
{
    const ir_node *n = &c->g->nodes[ni];
    q_info q;
    if (n->n_outputs != 1 || n->n_inputs == 0 || 2 + 3 * n->n_inputs > MAX_FIN || !get_q(c, n->outputs[0], &q))
        return false;
    int32_t ins[MAX_FIN];
    uint32_t k = 0;
    push_q(ins, &k, &q);
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        dq_info d;
        if (!get_dq(c, n->inputs[i], false, &d) || d.dt != q.dt)
            return false;
        push_dq(ins, &k, &d);
    }
    attr_list al = {0};
    al_copy_pattern(&al, n, p);
    c->qdt[q.y] = q.dt;
    return commit(c, ni, c->qd, p->qop, ins, k, &al, q.y, q.node, -1);
}

/* single input, single output ops of the switchyard.quant domain:
 * x, x_scale, x_zp, y_scale, y_zp */
static bool fold_unary_like(qctx *c, uint32_t ni, const sy_qdq_pattern *p)
{
    const ir_node *n = &c->g->nodes[ni];
    dq_info x;
    q_info q;
    if (n->n_outputs < 1 || !get_dq(c, in_at(n, 0), false, &x) || !act_type(x.dt) || !get_q(c, n->outputs[0], &q))
        return false;
    for (uint32_t o = 1; o < n->n_outputs; o++)
        if (n->outputs[o] >= 0) /* MaxPool's Indices */
            return false;
    int32_t ins[5];
    uint32_t k = 0;
    push_dq(ins, &k, &x);
    push_q(ins, &k, &q);
    attr_list al = {0};
    if (p->fold == SY_QDQ_FOLD_POOL) {
        al_copy_pattern(&al, n, p);
        if (p->flags & SY_QDQ_GLOBAL)
            al_int(&al, "global", 1);
    } else if (p->fold == SY_QDQ_FOLD_LUT) {
        al_string(&al, "fn", n->op);
        al_copy_pattern(&al, n, p);
        if (p->flags & SY_QDQ_CLIP_RANGE) {
            float lo = -INFINITY, hi = INFINITY;
            if (n->opset < 11) {
                const ir_attr *a = ir_node_attr(n, "min"), *b = ir_node_attr(n, "max");
                if (a)
                    lo = a->f;
                if (b)
                    hi = b->f;
            } else if ((in_at(n, 1) >= 0 && !const_f32(c, in_at(n, 1), &lo)) ||
                       (in_at(n, 2) >= 0 && !const_f32(c, in_at(n, 2), &hi))) {
                al_free(&al);
                return false;
            }
            if (isfinite(lo))
                al_float(&al, "min", lo);
            if (isfinite(hi))
                al_float(&al, "max", hi);
        }
    } else { /* softmax */
        bool legacy = n->opset < 13;
        al_int(&al, "axis", attr_i(n, "axis", legacy ? 1 : -1));
        if (legacy)
            al_int(&al, "legacy", 1);
    }
    c->qdt[q.y] = q.dt;
    return commit(c, ni, c->qd, p->qop, ins, k, &al, q.y, q.node, -1);
}

/* scale and zero point of two parameter pairs are the same constants */
static bool same_params(const qctx *c, int32_t s1, int32_t z1, int32_t s2, int32_t z2)
{
    float a, b;
    int32_t za = 0, zb = 0;
    if (!const_f32(c, s1, &a) || !const_f32(c, s2, &b) || a != b)
        return false;
    if ((z1 >= 0 && !const_int(c, z1, &za)) || (z2 >= 0 && !const_int(c, z2, &zb)))
        return false;
    return za == zb;
}

/* A new scalar initializer of dtype dt holding v; -1 on failure. */
static int32_t new_scalar(qctx *c, const char *base, sy_dtype dt, int32_t v)
{
    char name[256];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "%s__qpad%d", base, i);
        if (ir_graph_find_value(c->g, name) < 0)
            break;
    }
    size_t es = dt == SY_DT_INT8 || dt == SY_DT_UINT8 ? 1 : 2;
    void *data = sy_aligned_alloc(es, 16);
    if (!data)
        return -1;
    int32_t idx = ir_graph_intern_value(c->g, name);
    if (idx < 0 || (uint32_t)idx >= c->n_vals_cap) {
        sy_aligned_free(data);
        return -1; /* the per-value tables were sized before: do not grow past them */
    }
    switch (dt) {
    case SY_DT_INT8: *(int8_t *)data = (int8_t)v; break;
    case SY_DT_UINT8: *(uint8_t *)data = (uint8_t)v; break;
    case SY_DT_INT16: { int16_t x = (int16_t)v; memcpy(data, &x, 2); break; }
    default: { uint16_t x = (uint16_t)v; memcpy(data, &x, 2); break; }
    }
    ir_value *iv = &c->g->values[idx];
    iv->flags |= IR_VALUE_INITIALIZER;
    iv->dtype = dt;
    iv->rank = 0;
    iv->flags |= IR_VALUE_OWNS_DATA;
    iv->data = data;
    iv->nbytes = es;
    c->qdt[idx] = dt;
    return idx;
}

/* Reshape & co.: the op runs on the codes when its output is quantized with
 * the input's parameters. */
static bool fold_passthrough(qctx *c, uint32_t ni, const sy_qdq_pattern *p)
{
    ir_node *n = &c->g->nodes[ni];
    dq_info x;
    q_info q;
    if (n->n_outputs != 1 || !get_dq(c, in_at(n, 0), false, &x) || !act_type(x.dt) || !get_q(c, n->outputs[0], &q) ||
        q.dt != x.dt || !same_params(c, x.s, x.z, q.s, q.z))
        return false;
    /* nothing checks the parameters of codes that are only moved: a bad
     * scale keeps the float path, whose DequantizeLinear refuses it by name */
    float xs;
    if (!const_f32(c, x.s, &xs) || !(xs > 0.0f) || !isfinite(xs))
        return false;
    int32_t pad_value = -1;
    if (p->flags & SY_QDQ_PAD_VALUE) {
        if (n->opset < 11)
            return false;
        const ir_attr *mode = ir_node_attr(n, "mode");
        bool constant = !mode || (mode->s && !strcmp(mode->s, "constant"));
        if (constant) {
            float v = 0.0f, s;
            int32_t zp = 0, lo, hi;
            if (in_at(n, 2) >= 0 && !const_f32(c, in_at(n, 2), &v))
                return false;
            if (!const_f32(c, x.s, &s) || (x.z >= 0 && !const_int(c, x.z, &zp)))
                return false;
            lo = x.dt == SY_DT_INT8 ? -128 : x.dt == SY_DT_INT16 ? -32768 : 0;
            hi = x.dt == SY_DT_INT8 ? 127 : x.dt == SY_DT_UINT8 ? 255 : x.dt == SY_DT_INT16 ? 32767 : 65535;
            double r = nearbyint((double)(v / s)) + zp;
            int32_t qv = r < lo ? lo : (r > hi ? hi : (int32_t)r);
            pad_value = new_scalar(c, n->name, x.dt, qv);
            if (pad_value < 0)
                return false;
        }
    }
    uint32_t n_in = n->n_inputs;
    if (pad_value >= 0 && n_in < 3)
        n_in = 3;
    int32_t *nin = malloc(n_in * sizeof *nin);
    if (!nin)
        return false;
    for (uint32_t i = 0; i < n_in; i++)
        nin[i] = i < n->n_inputs ? n->inputs[i] : -1;
    nin[0] = x.x;
    if (pad_value >= 0)
        nin[2] = pad_value;
    kill_node(c, q.node);
    node_ref(c, ni, -1);
    ir_graph_free_ptr(c->g, n->inputs);
    n->inputs = nin;
    n->n_inputs = n_in;
    n->outputs[0] = q.y;
    node_ref(c, ni, +1);
    c->qdt[q.y] = q.dt;
    return true;
}

/* A Q output of the RNN: present, or absent / unread (-1 then). */
static bool rnn_out_q(const qctx *c, int32_t v, q_info *q, bool *present)
{
    *present = false;
    if (v < 0 || (!is_gout(c, v) && c->uses[v] == 0))
        return true;
    *present = true;
    return get_q(c, v, q) && (q->dt == SY_DT_INT8 || q->dt == SY_DT_UINT8);
}

/* A float constant, or a DequantizeLinear of constants (folded at creation). */
static bool const_float(const qctx *c, int32_t v)
{
    ir_node *bp = producer(c, v);
    bool const_dq = bp && is_op(bp, "DequantizeLinear") && is_init(c, in_at(bp, 0)) && is_init(c, in_at(bp, 1)) &&
                    (in_at(bp, 2) < 0 || is_init(c, in_at(bp, 2)));
    return (is_init(c, v) && c->g->values[v].dtype == SY_DT_FLOAT32) || const_dq;
}

/* DQ(X), DQ(W), DQ(R), [B], [sequence_lens], [DQ(initial_h)] -> RNN ->
 * Q(Y) [and Q(Y_h) with the same parameters] => switchyard.quant QRNN;
 * the same with qti_aisw StatefulGRU (and its `reset`) => qti_aisw
 * QStatefulGRU (plugins/qti_aisw/qsrnn.h: QRNN's inputs, reset at 16);
 * qti_aisw StatefulLSTM with [DQ(initial_c)], [P] and Q(Y_c) (required:
 * the carried C is Y_c's codes) => QStatefulLSTM (inputs 0..16, then c_s
 * c_z c0 c0_s c0_z P)
 * (plugins/ops_quant/qrnn_params.h: inputs X x_s x_z W w_s w_z R r_s r_z
 * y_s y_z B lens h0 h0_s h0_z). Only what the integer kernel takes is
 * folded (int8/uint8, per-tensor or per-hidden-unit weights, Tanh/Sigmoid/
 * Relu, layout 0); anything else keeps the float RNN. */
static bool fold_rnn(qctx *c, uint32_t ni, const sy_qdq_pattern *p)
{
    const ir_node *n = &c->g->nodes[ni];
    /* qti_aisw StatefulGRU (ONNX GRU's inputs plus `reset` at 6): its
     * integer form takes QRNN's inputs plus reset at 16; GRU's gates are
     * fixed (sigmoid, tanh), so there are no activations to check */
    const bool sgru = p->fold == SY_QDQ_FOLD_STATEFUL_GRU, slstm = p->fold == SY_QDQ_FOLD_STATEFUL_LSTM;
    int32_t reset = sgru ? in_at(n, 6) : slstm ? in_at(n, 8) : -1, c0v = slstm ? in_at(n, 6) : -1,
            pv = slstm ? in_at(n, 7) : -1;
    if ((sgru && n->n_inputs > 7) || (slstm && n->n_inputs > 9))
        return false;
    dq_info x, w, r, h0, c0;
    q_info qy, qh, qc;
    bool has_y, has_h, has_c = false;
    if (n->n_inputs < 3 || attr_i(n, "layout", 0) != 0 || !get_dq(c, in_at(n, 0), false, &x) ||
        (x.dt != SY_DT_INT8 && x.dt != SY_DT_UINT8))
        return false;
    dq_info *wr[2] = {&w, &r};
    for (int k = 0; k < 2; k++) {
        dq_info *d = wr[k];
        if (!get_dq(c, in_at(n, 1 + (uint32_t)k), true, d) || (d->dt != SY_DT_INT8 && d->dt != SY_DT_UINT8) ||
            !is_init(c, d->x) || (!d->per_tensor && d->axis != 1))
            return false;
    }
    const ir_attr *acts = ir_node_attr(n, "activations");
    for (size_t i = 0; acts && i < acts->count; i++)
        if (acts->type != SY_ATTR_STRINGS ||
            (strcmp(acts->strings[i], "Tanh") && strcmp(acts->strings[i], "Sigmoid") && strcmp(acts->strings[i], "Relu")))
            return false;
    int32_t b = in_at(n, 3), lens = in_at(n, 4), h0v = in_at(n, 5);
    if ((b >= 0 && !const_float(c, b)) || (pv >= 0 && !const_float(c, pv)))
        return false;
    if (h0v >= 0 && (!get_dq(c, h0v, false, &h0) || (h0.dt != SY_DT_INT8 && h0.dt != SY_DT_UINT8)))
        return false;
    if (c0v >= 0 && (!get_dq(c, c0v, false, &c0) || (c0.dt != SY_DT_INT8 && c0.dt != SY_DT_UINT8)))
        return false;
    if (slstm && (!rnn_out_q(c, n->n_outputs > 2 ? n->outputs[2] : -1, &qc, &has_c) || !has_c))
        return false;
    if (!rnn_out_q(c, n->n_outputs > 0 ? n->outputs[0] : -1, &qy, &has_y) ||
        !rnn_out_q(c, n->n_outputs > 1 ? n->outputs[1] : -1, &qh, &has_h) || (!has_y && !has_h))
        return false;
    if (has_y && has_h && (qy.dt != qh.dt || !same_params(c, qy.s, qy.z, qh.s, qh.z)))
        return false;
    const q_info *q = has_y ? &qy : &qh;
    int32_t ins[23];
    uint32_t k = 0;
    push_dq(ins, &k, &x);
    push_dq(ins, &k, &w);
    push_dq(ins, &k, &r);
    push_q(ins, &k, q);
    ins[k++] = b;
    ins[k++] = lens;
    if (h0v >= 0)
        push_dq(ins, &k, &h0);
    if (reset >= 0) {
        while (k < 16)
            ins[k++] = -1; /* omitted optional inputs up to reset */
        ins[k++] = reset;
    }
    if (slstm) {
        while (k < 17)
            ins[k++] = -1;
        push_q(ins, &k, &qc);
        if (c0v >= 0)
            push_dq(ins, &k, &c0);
        else
            for (int i = 0; i < 3; i++)
                ins[k++] = -1;
        ins[k++] = pv;
    }
    while (k > 0 && ins[k - 1] < 0)
        k--;
    int32_t *outs = malloc(3 * sizeof *outs);
    if (!outs)
        return false;
    outs[0] = has_y ? qy.y : -1;
    outs[1] = has_h ? qh.y : -1;
    outs[2] = has_c ? qc.y : -1;
    attr_list al = {0};
    static const char *const keep[] = {"activations", "activation_alpha", "activation_beta", "clip", "direction",
                                       "hidden_size"};
    static const char *const keep_gru[] = {"clip", "direction", "hidden_size", "linear_before_reset"};
    static const char *const keep_lstm[] = {"clip", "direction", "hidden_size", "input_forget"};
    const char *const *kp = sgru ? keep_gru : slstm ? keep_lstm : keep;
    size_t nk = sgru || slstm ? 4 : sizeof keep / sizeof *keep;
    for (size_t i = 0; i < nk; i++)
        al_copy(&al, n, kp[i]);
    if (!commit(c, ni, sy_qdq_qop_domain(c->pt, p), p->qop, ins, k, &al, outs[0], has_y ? qy.node : qh.node, -1)) {
        free(outs);
        return false;
    }
    /* the second output and its QuantizeLinear */
    ir_node *nn = &c->g->nodes[ni];
    ir_graph_free_ptr(c->g, nn->outputs);
    nn->outputs = outs;
    nn->n_outputs = has_c ? 3 : has_h ? 2 : 1;
    if (has_y && has_h)
        kill_node(c, qh.node);
    if (has_c)
        kill_node(c, qc.node);
    if (has_y)
        c->qdt[qy.y] = qy.dt;
    if (has_h)
        c->qdt[qh.y] = qh.dt;
    if (has_c)
        c->qdt[qc.y] = qc.dt;
    return true;
}

static bool try_fold(qctx *c, uint32_t ni)
{
    const ir_node *n = &c->g->nodes[ni];
    /* rows name their op's domain (qti_aisw StatefulGRU/LSTM); the quantized
     * op must be registered in its own domain, or the node stays float */
    const sy_qdq_pattern *p = sy_qdq_find_in(c->pt, n->domain, n->op);
    if (!p || (p->fold != SY_QDQ_FOLD_PASSTHROUGH &&
               (!p->qop || !sy_env_find_schema(c->env, sy_qdq_qop_domain(c->pt, p), p->qop, 1))))
        return false;
    switch (p->fold) {
    case SY_QDQ_FOLD_CONV: return fold_conv(c, ni, p);
    case SY_QDQ_FOLD_CONV_TRANSPOSE: return fold_conv_transpose(c, ni, p);
    case SY_QDQ_FOLD_MATMUL:
    case SY_QDQ_FOLD_GEMM: return fold_matmul(c, ni, p);
    case SY_QDQ_FOLD_BINARY: return fold_binary(c, ni, p);
    case SY_QDQ_FOLD_CONCAT: return fold_concat(c, ni, p);
    case SY_QDQ_FOLD_RNN:
    case SY_QDQ_FOLD_STATEFUL_GRU:
    case SY_QDQ_FOLD_STATEFUL_LSTM: return fold_rnn(c, ni, p);
    case SY_QDQ_FOLD_POOL:
    case SY_QDQ_FOLD_LUT:
    case SY_QDQ_FOLD_SOFTMAX: return fold_unary_like(c, ni, p);
    case SY_QDQ_FOLD_PASSTHROUGH: return fold_passthrough(c, ni, p);
    case SY_QDQ_FOLD_FLOAT: return fold_float(c, ni, p);
    default: return false;
    }
}

/* ---- driver --------------------------------------------------------------- */

static bool has_subgraphs(const ir_graph *g)
{
    for (uint32_t i = 0; i < g->n_nodes; i++)
        for (uint32_t a = 0; a < g->nodes[i].n_attrs; a++)
            if (g->nodes[i].attrs[a].type == SY_ATTR_GRAPH)
                return true;
    return false;
}

static bool add_opset(ir_model *m, const char *qd)
{
    if (ir_model_opset(m, qd) >= 0)
        return true;
    ir_opset *grown = realloc(m->opsets, (m->n_opsets + 1) * sizeof *grown);
    if (!grown)
        return false;
    m->opsets = grown;
    grown[m->n_opsets].domain = sy_strdup(qd);
    grown[m->n_opsets].version = 1;
    if (!grown[m->n_opsets].domain)
        return false;
    m->n_opsets++;
    return true;
}

uint32_t sy_pass_qdq(const sy_env *env, ir_model *m)
{
    if (!env || !m)
        return 0;
    ir_graph *g = &m->graph;
    bool any_dq = false;
    for (uint32_t i = 0; i < g->n_nodes && !any_dq; i++)
        any_dq = is_op(&g->nodes[i], "DequantizeLinear");
    /* the table of the plugin that owns the integer kernels */
    const sy_qdq_patterns *pt = sy_get_extension(env, SY_QDQ_PATTERNS_EXTENSION, SY_QDQ_PATTERNS_VERSION);
    if (!any_dq || has_subgraphs(g) || !pt || pt->struct_size < sizeof *pt ||
        pt->pattern_size < SY_QDQ_PATTERN_V1_SIZE || !pt->domain || !pt->domain[0])
        return 0;
    qctx c = {0};
    c.env = env;
    c.pt = pt;
    c.qd = pt->domain;
    c.m = m;
    c.g = g;
    /* no `requant` attribute on the folded nodes: the model is shared by
     * sessions, and each session resolves the form (requant_form.c) */
    /* room for a few new values (Pad constants) without growing the tables */
    c.n_vals_cap = g->n_values + g->n_nodes + 1;
    c.uses = calloc(c.n_vals_cap, sizeof *c.uses);
    c.user = malloc(c.n_vals_cap * sizeof *c.user);
    c.qdt = calloc(c.n_vals_cap, sizeof *c.qdt);
    c.dead = calloc(g->n_nodes + 1, sizeof *c.dead);
    uint32_t folded = 0;
    if (!c.uses || !c.user || !c.qdt || !c.dead || !add_opset(m, c.qd))
        goto done;
    for (uint32_t v = 0; v < c.n_vals_cap; v++)
        c.user[v] = -1;
    for (uint32_t v = 0; v < g->n_values; v++)
        c.qdt[v] = g->values[v].dtype;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        node_ref(&c, i, +1);
        const ir_node *n = &g->nodes[i];
        if (is_op(n, "QuantizeLinear") && n->n_outputs == 1 && n->outputs[0] >= 0) {
            int32_t z = in_at(n, 2);
            sy_dtype dt = z >= 0 ? g->values[z].dtype : (sy_dtype)attr_i(n, "output_dtype", 0);
            c.qdt[n->outputs[0]] = dt ? dt : SY_DT_UINT8;
        }
    }
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (!c.dead[i] && try_fold(&c, i))
            folded++;
    if (!folded)
        goto done;
    /* DequantizeLinear nodes nobody reads any more */
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        if (!c.dead[i] && is_op(n, "DequantizeLinear") && n->n_outputs == 1 && n->outputs[0] >= 0 &&
            c.uses[n->outputs[0]] == 0 && !is_gout(&c, n->outputs[0]))
            kill_node(&c, (int32_t)i);
    }
    /* compact the node list (order is kept) and recompute producers */
    uint32_t w = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        if (c.dead[i]) {
            ir_node_clear(g, &g->nodes[i]);
            continue;
        }
        if (w != i)
            g->nodes[w] = g->nodes[i];
        w++;
    }
    g->n_nodes = w;
    for (uint32_t v = 0; v < g->n_values; v++)
        g->values[v].producer = -1;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        for (uint32_t k = 0; k < g->nodes[i].n_outputs; k++)
            if (g->nodes[i].outputs[k] >= 0)
                g->values[g->nodes[i].outputs[k]].producer = (int32_t)i;
done:
    free(c.uses);
    free(c.user);
    free(c.qdt);
    free(c.dead);
    return folded;
}
