/* Weight-only recipes: weights stored as float16 (and a Cast), or as
 * symmetric int4 blocks with a DequantizeLinear-21; activations stay float. */
#include "quant_internal.h"

#include <string.h>

/* ======================================================================== */
/* weight-only recipes: fp16 storage, 4-bit blocks (activations stay float) */
/* ======================================================================== */

/* The weight as a float16 initializer (the scheme's conversion, round to
 * nearest even) and a Cast back to float: what every runtime loads, and the
 * Cast of a constant is folded at session creation here. */
static int store_fp16(qrun *q, const char *name, const float *w, int32_t rank, const int64_t *dims, char **out)
{
    wgraph *g = q->g;
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= dims[i];
    uint16_t *h = tl_alloc(&g->pl, (size_t)n * 2 + 2);
    if (!h)
        return -1;
    sy_quant_params qp;
    memset(&qp, 0, sizeof qp);
    qp.struct_size = sizeof qp;
    qp.axis = -1;
    qp.storage = SY_DT_FLOAT16;
    sy_status *st = q->rc->weights->quantize(w, (size_t)n, &qp, 0, h);
    if (st) {
        q_seterr(q->err, sizeof q->err, "weight '%s': %s", name, sy_status_get_message(st));
        sy_status_free(st);
        return 1;
    }
    char *hn = q_uniq(g, name, "f16"), *cn = q_uniq(g, name, "f32");
    q_add_init(g, tl_tensor(&g->pl, hn, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16, dims, (size_t)rank, h, (size_t)n * 2));
    wnode *c = q_add_node(g, "Cast", q_uniq(g, name, "Cast"), 1, 1);
    if (!c)
        return -1;
    c->in[0] = hn;
    c->out[0] = cn;
    Onnx__AttributeProto *a = tl_attr_int(&g->pl, "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    q_node_set_attrs(g, c, &a, 1);
    *out = cn;
    return g->pl.oom ? -1 : 0;
}

/* The weight in blocks of `bs` along `axis` (the reduction axis of the op):
 * one observer and one scale per block, symmetric int4 packed two per byte
 * (low nibble first, ONNX's order), and a DequantizeLinear-21 with axis and
 * block_size; scales have the weight's shape with ceil(D / bs) on `axis`. */
static int store_blocked(qrun *q, const char *name, const float *w, int32_t rank, const int64_t *dims, int axis,
                         int32_t bs, char **out)
{
    wgraph *g = q->g;
    const sy_quant_scheme_def *sch = q->rc->weights;
    int64_t n = 1, inner = 1, outer = 1, D = dims[axis], nb = (dims[axis] + bs - 1) / bs;
    for (int32_t i = 0; i < rank; i++) {
        n *= dims[i];
        if (i < axis)
            outer *= dims[i];
        if (i > axis)
            inner *= dims[i];
    }
    int64_t nsc = outer * nb * inner;
    uint8_t *packed = tl_alloc(&g->pl, (size_t)(n + 1) / 2 + 1);
    float *scales = tl_alloc(&g->pl, (size_t)nsc * sizeof *scales), *tmp = tl_alloc(&g->pl, (size_t)bs * sizeof *tmp);
    uint8_t *tq = tl_alloc(&g->pl, (size_t)bs * 2 + 2);
    if (!packed || !scales || !tmp || !tq)
        return -1;
    for (int64_t s = 0; s < nsc; s++) {
        int64_t o = s / (nb * inner), b = (s / inner) % nb, j = s % inner;
        int64_t a0 = b * bs, a1 = a0 + bs < D ? a0 + bs : D, cnt = 0;
        for (int64_t a = a0; a < a1; a++)
            tmp[cnt++] = w[(o * D + a) * inner + j];
        sy_observer *obs = NULL;
        sy_quant_params qp;
        memset(&qp, 0, sizeof qp);
        sy_tensor t;
        memset(&t, 0, sizeof t);
        t.struct_size = sizeof t;
        t.dtype = SY_DT_FLOAT32;
        t.rank = 1;
        t.dims[0] = cnt;
        t.data = tmp;
        t.nbytes = (size_t)cnt * 4;
        t.name = name;
        sy_status *st = q->rc->observer_new(sch, SY_CALIB_MINMAX, 100.0, &obs);
        if (!st)
            st = sch->observer_update(obs, &t);
        if (!st)
            st = sch->observer_finalize(obs, &qp);
        if (!st && qp.zero_points && qp.zero_points[0] != 0)
            st = sy_status_create(SY_ERR_UNSUPPORTED, "block zero point %d; the int4 writer stores symmetric blocks",
                                  qp.zero_points[0]);
        if (!st)
            st = sch->quantize(tmp, (size_t)cnt, &qp, 0, tq);
        if (obs)
            sch->observer_release(obs);
        if (st) {
            q_seterr(q->err, sizeof q->err, "weight '%s': %s", name, sy_status_get_message(st));
            sy_status_free(st);
            q->rc->params_free(&qp);
            return 1;
        }
        scales[s] = qp.scales[0];
        q->rc->params_free(&qp);
        for (int64_t a = a0, k = 0; a < a1; a++, k++) {
            int64_t i = (o * D + a) * inner + j;
            uint8_t nib = (uint8_t)((tq[k / 2] >> (4 * (k & 1))) & 15);
            packed[i / 2] |= (uint8_t)(nib << (4 * (i & 1)));
        }
    }
    int64_t sdims[SY_MAX_RANK];
    memcpy(sdims, dims, (size_t)rank * sizeof *sdims);
    sdims[axis] = nb;
    char *qn = q_uniq(g, name, "q"), *sn = q_uniq(g, name, "scale"), *dn = q_uniq(g, name, "dq");
    q_add_init(g, tl_tensor(&g->pl, qn, q_onnx_dtype(sch->storage), dims, (size_t)rank, packed, (size_t)(n + 1) / 2));
    q_add_init(g, tl_tensor(&g->pl, sn, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, sdims, (size_t)rank, scales,
                          (size_t)nsc * sizeof *scales));
    wnode *dq = q_add_node(g, "DequantizeLinear", q_uniq(g, name, "DQ"), 2, 1);
    if (!dq)
        return -1;
    dq->in[0] = qn;
    dq->in[1] = sn;
    dq->out[0] = dn;
    Onnx__AttributeProto *at[2] = {tl_attr_int(&g->pl, "axis", axis), tl_attr_int(&g->pl, "block_size", bs)};
    q_node_set_attrs(g, dq, at, 2);
    *out = dn;
    return g->pl.oom ? -1 : 0;
}

/* Weights (input 1) of Conv, MatMul and Gemm, and the biases of Conv and
 * Gemm for fp16: stored by the weight-only recipe, activations untouched.
 * Blocks run along the reduction axis: MatMul axis rank-2, Gemm 0 (1 with
 * transB), Conv 1 (input channels; a Conv with one input channel per group
 * keeps float weights: a block of one costs a scale per weight). */
int q_rewrite_weights(qrun *q, int32_t block, size_t *n_done)
{
    wgraph *g = q->g;
    size_t n0 = g->n_nodes, first_new = g->n_nodes;
    *n_done = 0;
    for (size_t i = 0; i < n0; i++) {
        wnode *n = &g->nodes[i];
        bool conv = !strcmp(n->op, "Conv"), mm = !strcmp(n->op, "MatMul"), gemm = !strcmp(n->op, "Gemm");
        if (n->dead || n->domain[0] || !(conv || mm || gemm))
            continue;
        for (size_t k = 1; k < n->nin && k < 3; k++) {
            if (!n->in[k][0] || !q_is_const_value(q, n->in[k]) || (k == 2 && (block > 0 || mm)))
                continue;
            int32_t rank;
            int64_t dims[SY_MAX_RANK];
            const float *w = q_const_data(q, n->in[k], &rank, dims);
            if (!w)
                continue;
            char *nn = NULL;
            int r;
            if (block > 0) {
                int axis = conv ? 1 : mm ? rank - 2 : (q_attr_i(n, "transB", 0) ? 1 : 0);
                if (rank < 2 || dims[axis] < 2)
                    continue;
                r = store_blocked(q, n->in[k], w, rank, dims, axis, block, &nn);
            } else {
                r = store_fp16(q, n->in[k], w, rank, dims, &nn);
            }
            if (r)
                return r;
            g->nodes[i].in[k] = nn; /* q_add_node may have moved the array */
            n = &g->nodes[i];
            (*n_done)++;
        }
    }
    /* the new Cast / DequantizeLinear nodes read initializers only: first */
    size_t total = g->n_nodes, w = 0;
    wnode *ordered = tl_alloc(&g->pl, (total ? total : 1) * sizeof *ordered);
    if (!ordered)
        return -1;
    for (size_t i = first_new; i < total; i++)
        ordered[w++] = g->nodes[i];
    for (size_t i = 0; i < first_new; i++)
        ordered[w++] = g->nodes[i];
    g->nodes = ordered;
    g->cap_nodes = total;
    q_drop_unused(g);
    return g->pl.oom ? -1 : 0;
}
