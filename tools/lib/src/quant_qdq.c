/* The QDQ rewrite: which activations get a QuantizeLinear ->
 * DequantizeLinear pair, their parameters (observers, shared through
 * pass-through ops), weights per tensor or channel through the recipe's
 * weight scheme, int32 biases with scale s_x * s_w, constant operands like
 * activations, and the integer RNN's inputs. */
#include "quant_internal.h"

#include <switchyard/sy_fixedpoint.h>

#include <stdlib.h>
#include <string.h>

typedef struct qparam {
    float scale;
    int32_t zp;
    bool set;
} qparam;

/* Which ops the rewrite quantizes, which share their input's parameters and
 * which absorb a following Relu/Clip: the "qdq_patterns" table of the plugin
 * that owns the integer kernels (switchyard/ext/sy_qdq_patterns.h). */
static const sy_qdq_pattern *pattern(const qrun *q, const wnode *n) { return sy_qdq_find(q->pt, n->op); }

static bool has(const qrun *q, const wnode *n, uint32_t flag)
{
    const sy_qdq_pattern *p = pattern(q, n);
    return p && (p->flags & flag);
}

/* data inputs (float) of a quantizable op: bit k set = input k is quantized */
static unsigned qinputs(const qrun *q, const wnode *n)
{
    const sy_qdq_pattern *p = pattern(q, n);
    return p ? p->quantized_inputs : 1u;
}

static char *scalar_init(qrun *q, const char *base, const char *tag, int dt, const void *v, size_t es)
{
    char *name = q_uniq(q->g, base, tag);
    Onnx__TensorProto *t = tl_tensor(&q->g->pl, name, dt, NULL, 0, v, es);
    q_add_init(q->g, t);
    return name;
}

static size_t st_bytes(sy_dtype dt) { return dt == SY_DT_INT16 || dt == SY_DT_UINT16 ? 2 : 1; }

static void zp_bytes(sy_dtype dt, int32_t zp, uint8_t *out)
{
    if (st_bytes(dt) == 2) {
        uint16_t z = (uint16_t)zp;
        memcpy(out, &z, 2);
    } else {
        out[0] = (uint8_t)zp;
    }
}

/* params of an activation from its observer */
static int act_param(qrun *q, vinfo *v, qparam *p)
{
    sy_quant_params qp;
    sy_status *st = q->rc->activations->observer_finalize(v->obs, &qp);
    if (st) {
        q_seterr(q->err, sizeof q->err, "%s: %s", v->name, sy_status_get_message(st));
        sy_status_free(st);
        return -1;
    }
    p->scale = qp.scales[0];
    p->zp = qp.zero_points ? qp.zero_points[0] : 0;
    p->set = true;
    q->rc->params_free(&qp);
    return 0;
}

/* Quantize a float constant (weights / constant operands) with `scheme`
 * into a new initializer + DequantizeLinear; per channel along `axis` when
 * axis >= 0. Returns the DQ output name, NULL on failure. Writes the scales
 * into sc (when not NULL, nch entries). */
static char *quant_const(qrun *q, const char *name, const float *x, const int32_t rank, const int64_t *dims,
                         const sy_quant_scheme_def *sch, int axis, float *sc, wnode **dq_out)
{
    wgraph *g = q->g;
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= dims[i];
    int64_t nch = axis >= 0 ? dims[axis] : 1;
    int64_t inner = 1;
    for (int32_t i = axis + 1; axis >= 0 && i < rank; i++)
        inner *= dims[i];
    size_t es = st_bytes(sch->storage);
    uint8_t *qv = tl_alloc(&g->pl, (size_t)n * es + 1);
    float *scales = tl_alloc(&g->pl, (size_t)nch * sizeof *scales);
    uint8_t *zps = tl_alloc(&g->pl, (size_t)nch * es + 1);
    float *tmp = tl_alloc(&g->pl, (size_t)(n ? n : 1) * sizeof *tmp);
    uint8_t *tq = tl_alloc(&g->pl, (size_t)(n ? n : 1) * es);
    if (!qv || !scales || !zps || !tmp || !tq)
        return NULL;
    for (int64_t c = 0; c < nch; c++) {
        /* gather channel c */
        int64_t cnt = 0;
        for (int64_t i = 0; i < n; i++)
            if (axis < 0 || (i / inner) % nch == c)
                tmp[cnt++] = x[i];
        sy_observer *obs = NULL;
        sy_status *st = q->rc->observer_new(sch, SY_CALIB_MINMAX, 100.0, &obs);
        sy_tensor t;
        memset(&t, 0, sizeof t);
        t.struct_size = sizeof t;
        t.dtype = SY_DT_FLOAT32;
        t.rank = 1;
        t.dims[0] = cnt;
        t.data = tmp;
        t.nbytes = (size_t)cnt * 4;
        t.name = name;
        sy_quant_params qp;
        memset(&qp, 0, sizeof qp);
        if (!st)
            st = sch->observer_update(obs, &t);
        if (!st)
            st = sch->observer_finalize(obs, &qp);
        if (!st)
            st = sch->quantize(tmp, (size_t)cnt, &qp, 0, tq);
        sch->observer_release(obs);
        if (st) {
            q_seterr(q->err, sizeof q->err, "weight '%s': %s", name, sy_status_get_message(st));
            sy_status_free(st);
            q->rc->params_free(&qp);
            return NULL;
        }
        scales[c] = qp.scales[0];
        zp_bytes(sch->storage, qp.zero_points ? qp.zero_points[0] : 0, zps + c * (int64_t)es);
        q->rc->params_free(&qp);
        cnt = 0;
        for (int64_t i = 0; i < n; i++)
            if (axis < 0 || (i / inner) % nch == c) {
                memcpy(qv + i * (int64_t)es, tq + cnt * (int64_t)es, es);
                cnt++;
            }
    }
    if (sc)
        memcpy(sc, scales, (size_t)nch * sizeof *sc);
    char *qn = q_uniq(g, name, "q"), *sn = q_uniq(g, name, "scale"), *zn = q_uniq(g, name, "zp"),
         *dn = q_uniq(g, name, "dq");
    int dt = q_onnx_dtype(sch->storage);
    q_add_init(g, tl_tensor(&g->pl, qn, dt, dims, (size_t)rank, qv, (size_t)n * es));
    q_add_init(g, tl_tensor(&g->pl, sn, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, &nch, axis >= 0 ? 1 : 0, scales,
                          (size_t)nch * 4));
    q_add_init(g, tl_tensor(&g->pl, zn, dt, &nch, axis >= 0 ? 1 : 0, zps, (size_t)nch * es));
    wnode *dq = q_add_node(g, "DequantizeLinear", q_uniq(g, name, "DQ"), 3, 1);
    if (!dq)
        return NULL;
    dq->in[0] = qn;
    dq->in[1] = sn;
    dq->in[2] = zn;
    dq->out[0] = dn;
    if (axis >= 0) {
        Onnx__AttributeProto *a = tl_attr_int(&g->pl, "axis", axis);
        q_node_set_attrs(g, dq, &a, 1);
    }
    *dq_out = dq;
    return g->pl.oom ? NULL : dn;
}

/* int32 bias with scale s_x * s_w[c] */
static char *quant_bias(qrun *q, const char *name, const float *b, int64_t n, float sx, const float *sw, int64_t nsw,
                        wnode **dq_out)
{
    wgraph *g = q->g;
    int32_t *qb = tl_alloc(&g->pl, (size_t)n * 4 + 4);
    float *sc = tl_alloc(&g->pl, (size_t)n * 4 + 4);
    if (!qb || !sc)
        return NULL;
    for (int64_t c = 0; c < n; c++) {
        sc[c] = sx * sw[nsw > 1 ? c : 0];
        double v = sy_fx_round_even((double)b[c] / (double)sc[c]);
        /* saturate; a NaN bias (nothing to round) is stored as 0 rather than
         * cast, which C leaves undefined */
        qb[c] = v != v ? 0 : v > 2147483647.0 ? INT32_MAX : (v < -2147483648.0 ? INT32_MIN : (int32_t)v);
    }
    char *qn = q_uniq(g, name, "q"), *sn = q_uniq(g, name, "scale"), *dn = q_uniq(g, name, "dq");
    q_add_init(g, tl_tensor(&g->pl, qn, ONNX__TENSOR_PROTO__DATA_TYPE__INT32, &n, 1, qb, (size_t)n * 4));
    q_add_init(g, tl_tensor(&g->pl, sn, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, &n, 1, sc, (size_t)n * 4));
    wnode *dq = q_add_node(g, "DequantizeLinear", q_uniq(g, name, "DQ"), 2, 1);
    if (!dq)
        return NULL;
    dq->in[0] = qn;
    dq->in[1] = sn;
    dq->out[0] = dn;
    Onnx__AttributeProto *a = tl_attr_int(&g->pl, "axis", 0);
    q_node_set_attrs(g, dq, &a, 1);
    *dq_out = dq;
    return g->pl.oom ? NULL : dn;
}

/* ---- RNN: the integer QRNN of the QDQ pass (plugins/ops_quant/qrnn_params.h):
 * X, initial_h, Y and Y_h get pairs (Y_h with Y's parameters: the state is
 * one int8 H_t), W and R are weights (per hidden unit, axis 1, with
 * --per-channel), B stays float (folded as int32 by the kernel). RNNs the
 * kernel does not take (layout 1, other activations) stay float. */
static bool rnn_quantizable(qrun *q, const wnode *n)
{
    const sy_qdq_pattern *p = pattern(q, n);
    if (n->dead || n->domain[0] || !p || p->fold != SY_QDQ_FOLD_RNN || n->nin < 3 || n->nout < 1 || q_attr_i(n, "layout", 0))
        return false;
    const Onnx__AttributeProto *a = q_attr(n, "activations");
    for (size_t i = 0; a && i < a->n_strings; i++)
        if (a->strings[i].len < 4 || (strncmp((const char *)a->strings[i].data, "Tanh", a->strings[i].len) &&
                                      strncmp((const char *)a->strings[i].data, "Sigmoid", a->strings[i].len) &&
                                      strncmp((const char *)a->strings[i].data, "Relu", a->strings[i].len)))
            return false;
    return q_is_float_act(q, n->in[0]) && q_is_const_value(q, n->in[1]) && q_is_const_value(q, n->in[2]);
}

static void rnn_mark(qrun *q, bool *qset)
{
    for (size_t i = 0; i < q->g->n_nodes; i++) {
        const wnode *n = &q->g->nodes[i];
        if (!rnn_quantizable(q, n))
            continue;
        const char *vals[4] = {n->in[0], n->nin > 5 ? n->in[5] : "", n->out[0], n->nout > 1 ? n->out[1] : ""};
        for (int k = 0; k < 4; k++) {
            vinfo *v = vals[k][0] && q_is_float_act(q, vals[k]) ? q_vfind(q->vals, q->n_vals, vals[k]) : NULL;
            if (v)
                qset[v - q->vals] = true;
        }
    }
}

/* Y_h takes Y's parameters (after the observers gave theirs) */
static void rnn_share(qrun *q, const bool *qset, qparam *par)
{
    for (size_t i = 0; i < q->g->n_nodes; i++) {
        const wnode *n = &q->g->nodes[i];
        if (!rnn_quantizable(q, n) || n->nout < 2 || !n->out[0][0] || !n->out[1][0])
            continue;
        vinfo *y = q_vfind(q->vals, q->n_vals, n->out[0]), *yh = q_vfind(q->vals, q->n_vals, n->out[1]);
        if (y && yh && qset[y - q->vals] && qset[yh - q->vals])
            par[yh - q->vals] = par[y - q->vals];
    }
}

/* W and R through the weight scheme; their DequantizeLinear nodes go to pre */
static int rnn_weights(qrun *q, const bool *qset, wnode **pre, size_t *npre)
{
    for (size_t i = 0; i < q->g->n_nodes; i++) {
        wnode *n = &q->g->nodes[i];
        vinfo *x = rnn_quantizable(q, n) ? q_vfind(q->vals, q->n_vals, n->in[0]) : NULL;
        if (!x || !qset[x - q->vals])
            continue;
        for (size_t k = 1; k <= 2; k++) {
            int32_t rank;
            int64_t dims[SY_MAX_RANK];
            const float *w = q_const_data(q, n->in[k], &rank, dims);
            if (!w || rank != 3)
                continue;
            bool pc = q->per_channel && q->rc->weights_per_channel;
            const sy_quant_scheme_def *ws = pc ? q->rc->weights_per_channel : q->rc->weights;
            wnode *dq = NULL;
            char *dn = quant_const(q, n->in[k], w, rank, dims, ws, pc ? 1 : -1, NULL, &dq);
            if (!dn)
                return -1;
            pre[(*npre)++] = dq;
            n->in[k] = dn;
        }
    }
    return 0;
}

int q_rewrite_qdq(qrun *q)
{
    wgraph *g = q->g;
    size_t n0 = g->n_nodes;
    bool *fused = NULL;
    qparam *par = calloc(q->n_vals + 1, sizeof *par);
    bool *qset = calloc(q->n_vals + 1, sizeof *qset);
    wnode **pre = calloc(n0 * 8 + 16, sizeof *pre); /* DQ nodes for constants, emitted first */
    size_t npre = 0;
    int rc = -1;
    if (!par || !qset || !pre)
        goto out;
    /* outputs of Conv/Gemm/MatMul/Add/Sub/Mul whose only reader is a Relu or
     * Clip: no pair in between, the activation folds into the requantization */
    fused = calloc(q->n_vals + 1, sizeof *fused);
    if (!fused)
        goto out;
    for (size_t i = 0; i < n0; i++) {
        wnode *n = &g->nodes[i];
        long user = -1;
        if (n->dead || n->domain[0] || !has(q, n, SY_QDQ_FUSES_ACTIVATION) || n->nout < 1 || q_is_graph_output(g, n->out[0]) ||
            q_count_uses(g, n->out[0], &user) != 1)
            continue;
        const wnode *u = &g->nodes[user];
        const sy_qdq_pattern *up = pattern(q, u);
        bool act = up && (up->flags & SY_QDQ_ACTIVATION) &&
                   (!(up->flags & SY_QDQ_CLIP_RANGE) || ((u->nin < 2 || q_is_const_value(q, u->in[1])) &&
                                                         (u->nin < 3 || !u->in[2][0] || q_is_const_value(q, u->in[2]))));
        vinfo *vo = q_vfind(q->vals, q->n_vals, n->out[0]);
        if (act && vo)
            fused[vo - q->vals] = true;
    }
    /* which activations get a Q/DQ pair */
    for (size_t i = 0; i < n0; i++) {
        wnode *n = &g->nodes[i];
        if (n->dead || n->domain[0] || !has(q, n, SY_QDQ_QUANTIZE) || n->nout < 1)
            continue;
        if (!q_is_float_act(q, n->out[0]))
            continue;
        unsigned mask = qinputs(q, n);
        bool ok = true;
        for (size_t k = 0; k < n->nin && k < 32; k++)
            if ((mask >> k) & 1u) {
                if (!n->in[k][0])
                    continue;
                vinfo *v = q_vfind(q->vals, q->n_vals, n->in[k]);
                bool c = q_is_const_value(q, n->in[k]);
                if (!(c || q_is_float_act(q, n->in[k])) || (v && v->dtype != SY_DT_FLOAT32 && !c))
                    ok = false;
            }
        if (!ok)
            continue;
        for (size_t k = 0; k < n->nin && k < 32; k++)
            if (((mask >> k) & 1u) && n->in[k][0] && !q_is_const_value(q, n->in[k])) {
                vinfo *vk = q_vfind(q->vals, q->n_vals, n->in[k]);
                if (vk && !fused[vk - q->vals])
                    qset[vk - q->vals] = true;
            }
        vinfo *vo = q_vfind(q->vals, q->n_vals, n->out[0]);
        if (vo && !fused[vo - q->vals])
            qset[vo - q->vals] = true;
    }
    rnn_mark(q, qset);
    /* parameters: observers, then shared ones in graph order */
    for (size_t v = 0; v < q->n_vals; v++)
        if (qset[v] && act_param(q, &q->vals[v], &par[v]))
            goto out;
    for (size_t i = 0; i < n0; i++) {
        wnode *n = &g->nodes[i];
        if (n->dead || !has(q, n, SY_QDQ_SHARES_PARAMS) || n->nout < 1)
            continue;
        vinfo *vi = q_vfind(q->vals, q->n_vals, n->in[0]), *vo = q_vfind(q->vals, q->n_vals, n->out[0]);
        if (vi && vo && qset[vi - q->vals] && qset[vo - q->vals])
            par[vo - q->vals] = par[vi - q->vals];
    }
    rnn_share(q, qset, par);
    if (rnn_weights(q, qset, pre, &npre))
        goto out;
    /* weights, biases and constant operands */
    sy_dtype adt = q->rc->activations->storage;
    for (size_t i = 0; i < n0; i++) {
        wnode *n = &g->nodes[i];
        if (n->dead || n->domain[0] || !has(q, n, SY_QDQ_QUANTIZE) || n->nout < 1)
            continue;
        vinfo *vo = q_vfind(q->vals, q->n_vals, n->out[0]);
        vinfo *v0 = n->nin ? q_vfind(q->vals, q->n_vals, n->in[0]) : NULL;
        bool out_q = vo && (qset[vo - q->vals] || q_is_float_act(q, n->out[0]));
        if (!out_q || !v0)
            continue;
        const sy_qdq_pattern *p = pattern(q, n);
        /* ConvTranspose's W is [C_in, C_out / group, k...]: its output channels,
         * the per-channel axis and the bias length, are dims[1] (QConvTranspose
         * requantizes per output channel; the fold refuses axis 0) */
        bool convt = p->fold == SY_QDQ_FOLD_CONV_TRANSPOSE;
        bool conv = p->fold == SY_QDQ_FOLD_CONV || convt, gemm = p->fold == SY_QDQ_FOLD_GEMM;
        if ((p->flags & SY_QDQ_WEIGHTS) && n->nin >= 2 && q_is_const_value(q, n->in[1]) && qset[v0 - q->vals]) {
            int32_t rank;
            int64_t dims[SY_MAX_RANK];
            const float *w = q_const_data(q, n->in[1], &rank, dims);
            if (!w)
                continue;
            bool tb = gemm && q_attr_i(n, "transB", 0);
            int axis = -1;
            const sy_quant_scheme_def *ws = q->rc->weights;
            if (q->per_channel && q->rc->weights_per_channel && (conv || rank == 2)) {
                ws = q->rc->weights_per_channel;
                axis = convt ? 1 : conv ? 0 : (tb ? 0 : 1);
            }
            int64_t nch = axis >= 0 ? dims[axis] : 1;
            float *sw = tl_alloc(&g->pl, (size_t)nch * sizeof *sw);
            wnode *dq = NULL;
            char *dn = sw ? quant_const(q, n->in[1], w, rank, dims, ws, axis, sw, &dq) : NULL;
            if (!dn)
                goto out;
            pre[npre++] = dq;
            n->in[1] = dn;
            /* bias */
            if ((conv || gemm) && n->nin >= 3 && n->in[2][0] && q_is_const_value(q, n->in[2])) {
                int32_t br;
                int64_t bd[SY_MAX_RANK];
                const float *b = q_const_data(q, n->in[2], &br, bd);
                int64_t nb = 1;
                for (int32_t k = 0; k < br; k++)
                    nb *= bd[k];
                int64_t oc = convt ? dims[1] : conv ? dims[0] : (tb ? dims[0] : dims[1]);
                if (b && nb == oc) {
                    wnode *bdq = NULL;
                    char *bn = quant_bias(q, n->in[2], b, nb, par[v0 - q->vals].scale, sw, nch, &bdq);
                    if (!bn)
                        goto out;
                    pre[npre++] = bdq;
                    n->in[2] = bn;
                }
            }
            continue;
        }
        /* constant operands of elementwise ops / concat: like activations */
        unsigned mask = qinputs(q, n);
        for (size_t k = 0; k < n->nin && k < 32; k++) {
            if (!((mask >> k) & 1u) || !n->in[k][0] || !q_is_const_value(q, n->in[k]))
                continue;
            if (!(p->flags & SY_QDQ_CONST_OPERANDS))
                continue;
            int32_t rank;
            int64_t dims[SY_MAX_RANK];
            const float *c = q_const_data(q, n->in[k], &rank, dims);
            if (!c)
                continue;
            wnode *dq = NULL;
            char *dn = quant_const(q, n->in[k], c, rank, dims, q->rc->activations, -1, NULL, &dq);
            if (!dn)
                goto out;
            pre[npre++] = dq;
            n->in[k] = dn;
        }
    }
    /* Q/DQ pairs, in graph order (graph inputs first) */
    size_t nq_cap = q->n_vals * 2 + 2;
    wnode **qd = calloc(nq_cap, sizeof *qd);
    long *after = calloc(nq_cap, sizeof *after);
    size_t nqd = 0;
    if (!qd || !after) {
        free(qd);
        free(after);
        goto out;
    }
    for (size_t v = 0; v < q->n_vals; v++) {
        if (!qset[v])
            continue;
        vinfo *vi = &q->vals[v];
        const char *t = vi->name;
        long p = q_producer_of(g, t);
        char *sn = scalar_init(q, t, "s", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, &par[v].scale, 4);
        uint8_t zb[2];
        zp_bytes(adt, par[v].zp, zb);
        char *zn = scalar_init(q, t, "z", q_onnx_dtype(adt), zb, st_bytes(adt));
        char *qn = q_uniq(g, t, "q");
        wnode *qn_ = q_add_node(g, "QuantizeLinear", q_uniq(g, t, "Q"), 3, 1);
        wnode *dq = q_add_node(g, "DequantizeLinear", q_uniq(g, t, "DQ"), 3, 1);
        if (!qn_ || !dq) {
            free(qd);
            free(after);
            goto out;
        }
        if (p >= 0) {
            /* producer writes t__f; Q(t__f) -> DQ -> t, so consumers and outputs keep t */
            char *fname = q_uniq(g, t, "f");
            for (size_t k = 0; k < g->nodes[p].nout; k++)
                if (!strcmp(g->nodes[p].out[k], t))
                    g->nodes[p].out[k] = fname;
            qn_->in[0] = fname;
            dq->out[0] = (char *)t;
        } else {
            char *dname = q_uniq(g, t, "dq");
            for (size_t i = 0; i < n0; i++)
                for (size_t k = 0; k < g->nodes[i].nin; k++)
                    if (!strcmp(g->nodes[i].in[k], t))
                        g->nodes[i].in[k] = dname;
            qn_->in[0] = (char *)t;
            dq->out[0] = dname;
        }
        qn_->in[1] = sn;
        qn_->in[2] = zn;
        qn_->out[0] = qn;
        dq->in[0] = qn;
        dq->in[1] = sn;
        dq->in[2] = zn;
        qd[nqd] = qn_;
        after[nqd++] = p;
        qd[nqd] = dq;
        after[nqd++] = p;
    }
    /* order: constant DQs, graph-input pairs, then each node followed by its pairs */
    size_t total = g->n_nodes;
    wnode *ordered = tl_alloc(&g->pl, (total ? total : 1) * sizeof *ordered);
    if (!ordered) {
        free(qd);
        free(after);
        goto out;
    }
    size_t w = 0;
    for (size_t i = 0; i < npre; i++)
        ordered[w++] = *pre[i];
    for (size_t j = 0; j < nqd; j++)
        if (after[j] < 0)
            ordered[w++] = *qd[j];
    for (size_t i = 0; i < n0; i++) {
        if (g->nodes[i].dead)
            continue;
        ordered[w++] = g->nodes[i];
        for (size_t j = 0; j < nqd; j++)
            if (after[j] == (long)i)
                ordered[w++] = *qd[j];
    }
    free(qd);
    free(after);
    g->nodes = ordered;
    g->n_nodes = w;
    g->cap_nodes = total;
    q_drop_unused(g);
    rc = g->pl.oom ? -1 : 0;
out:
    free(fused);
    free(par);
    free(qset);
    free(pre);
    return rc;
}
