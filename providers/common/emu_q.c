/*
 * Integer kernels of the Qualcomm emulators (emu.h, "quantized configs"):
 * the switchyard.quant nodes the QDQ pass folds (QConv, QMatMul, QAdd,
 * QMaxPool) computed as the backends do it (spec/targets.md §5.1-§5.3):
 *
 *  - QConv / QMatMul: codes minus zero points, integer MAC into an int64
 *    accumulator (int32 would overflow for 16x8 over long K), int32 bias,
 *    then requantization per output channel in the fixed-point form with
 *    rounding half away from zero (sy_rq_apply, SY_RQ_GEMMLOWP; the spec's
 *    round_half_away(acc * s_in * s_w / s_out)), clamped to the output
 *    encoding range narrowed by the folded activation (act_min/act_max).
 *    The multiplier s_in * s_w / s_out is formed in fp32 from the fp32
 *    encodings, as the ONNX reference and cpu_ref do.
 *  - QAdd / QSub / QMul: fp32 on the rescaled dequantized operands,
 *    requantized on output (round half to even), §5.1 "Eltwise ... in fp32":
 *    (s_a/s_y)(a - z_a) +/- (s_b/s_y)(b - z_b) + z_y, and for QMul
 *    (s_a s_b / s_y)(a - z_a)(b - z_b) + z_y (the product of the centered
 *    codes is exact in int64 and rounded once to fp32).
 *  - QMaxPool: max of the codes; a requantization only when the output
 *    encoding differs from the input's.
 *  - QConcat: codes copied where an input's encoding is the output's, else
 *    "requant on output" (§5.1, no MAC in it): QuantizeLinear of the
 *    dequantized value, round_half_even((s_i/s_y)(q - z_i)) + z_y, clamped --
 *    the SDK's SY_RQ_ONNX requantizer (sy_rq_apply), as cpu_ref computes it.
 *
 * The node's `requant` attribute is ignored: the backend has one arithmetic.
 * Weights, bias and requantizers are finalized once (prepare / compile) and
 * serialized into compile-cache blobs (emu_qk_blob).
 */
#include "emu.h"

#include <math.h>
#include <stdlib.h>

#define H (emu_T->H)
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

enum { EMU_BOP_ADD = 0, EMU_BOP_SUB = 1, EMU_BOP_MUL = 2 };

struct emu_qk {
    int32_t kind; /* EMU_Q_* */
    int32_t xdt, bdt, ydt;
    int32_t zx, zb, zy, lo, hi;
    emu_win g;
    /* conv: N, C, IH, IW, OC, OH, OW; matmul: rows, K, N */
    int64_t N, C, IH, IW, OC, OH, OW, K, tile;
    float ra, rb, rm;    /* QAdd / QSub: s_a / s_y, s_b / s_y; QMul: s_a s_b / s_y */
    int32_t bop;         /* the element-wise op: EMU_BOP_* */
    int64_t nw, nch;     /* element counts of w and of bias / rq */
    int32_t *w;          /* centered weights: conv [OC][K], matmul [K][N] */
    int32_t *bias;       /* int32 per output channel */
    sy_requant *rq;      /* per output channel; QMaxPool: one (when `same` is 0) */
    int32_t same;        /* QMaxPool: output encoding == input encoding */
    /* QConcat: nch inputs; w[i] = input i's dtype, bias[i] = its zero point,
     * rq[i] its requantizer (mult s_i / s_y); K = the axis */
};

void emu_qk_free(emu_qk *q)
{
    if (!q)
        return;
    free(q->w);
    free(q->bias);
    free(q->rq);
    free(q);
}

static const sy_tensor *in_at(const sy_node *n, uint32_t i)
{
    return i < H->node_num_inputs(n) ? H->node_input(n, i) : NULL;
}

/* element i of a float32 scale tensor (a per-tensor scale serves every i) */
static float scale_at(const sy_tensor *s, int64_t i)
{
    return ((const float *)s->data)[sy_tensor_numel(s) > 1 ? i : 0];
}
static int32_t zp_at(const sy_tensor *z, int64_t i)
{
    if (!z || !z->data)
        return 0;
    return sy_q_load(z->data, z->dtype, (size_t)(sy_tensor_numel(z) > 1 ? i : 0));
}

/* the output clamp: the encoding's range narrowed by the folded activation */
static void out_clamp(const sy_node *n, float sy, int32_t zy, sy_dtype ydt, int32_t *lo, int32_t *hi)
{
    sy_q_storage_range(ydt, lo, hi);
    float amin = sy_attr_float_or(H, n, "act_min", -INFINITY), amax = sy_attr_float_or(H, n, "act_max", INFINITY);
    if (isfinite(amin)) {
        int32_t v = sy_rq_quantize(amin, sy, zy, *lo, *hi);
        *lo = v > *lo ? v : *lo;
    }
    if (isfinite(amax)) {
        int32_t v = sy_rq_quantize(amax, sy, zy, *lo, *hi);
        *hi = v < *hi ? v : *hi;
    }
}

static bool is_static(const sy_tensor *t) { return t && t->data; }

/* weights centered per output channel, bias to int32 (scale s_x * s_w[c]),
 * one fixed-point requantizer per channel */
static sy_status *mac_params(const sy_node *n, emu_qk *q, const sy_tensor *w, int64_t nch, bool conv, bool tb)
{
    const sy_tensor *xs = in_at(n, 1), *ws = in_at(n, 4), *wz = in_at(n, 5), *ys = in_at(n, 6),
                    *yz = in_at(n, 7), *b = in_at(n, 8);
    if (!is_static(xs) || !is_static(ws) || !is_static(ys) || !is_static(w) || (wz && !is_static(wz)) ||
        (yz && !is_static(yz)) || (b && !is_static(b)))
        return ERR(SY_ERR_UNSUPPORTED, "%s: '%s': weights, bias and encodings must be static", emu_T->provider,
                   H->node_name(n));
    if (xs->dtype != SY_DT_FLOAT32 || ws->dtype != SY_DT_FLOAT32 || ys->dtype != SY_DT_FLOAT32)
        return ERR(SY_ERR_UNSUPPORTED, "%s: '%s': scales must be float32", emu_T->provider, H->node_name(n));
    if ((sy_tensor_numel(ws) != 1 && sy_tensor_numel(ws) != nch) ||
        (wz && sy_tensor_numel(wz) != 1 && sy_tensor_numel(wz) != nch))
        return ERR(SY_ERR_SHAPE, "%s: '%s': %lld weight scales / zero points for %lld output channels",
                   emu_T->provider, H->node_name(n), (long long)sy_tensor_numel(ws), (long long)nch);
    q->nw = sy_tensor_numel(w);
    q->nch = nch;
    q->w = malloc((size_t)(q->nw ? q->nw : 1) * sizeof *q->w);
    q->bias = calloc((size_t)(nch ? nch : 1), sizeof *q->bias);
    q->rq = calloc((size_t)(nch ? nch : 1), sizeof *q->rq);
    if (!q->w || !q->bias || !q->rq)
        return ERR(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", emu_T->provider);
    int64_t K = nch ? q->nw / nch : 0;
    for (int64_t i = 0; i < q->nw; i++) {
        /* conv: OIHW, channel = i / K; matmul B [K, N] (or [N, K] with transB), stored [K][N] */
        int64_t c = conv ? i / K : (tb ? i / K : i % nch);
        int64_t dst = conv ? i : (tb ? (i % K) * nch + i / K : i);
        q->w[dst] = sy_q_load(w->data, w->dtype, (size_t)i) - zp_at(wz, c);
    }
    float sx = scale_at(xs, 0), sy = scale_at(ys, 0);
    q->zy = zp_at(yz, 0);
    out_clamp(n, sy, q->zy, q->ydt, &q->lo, &q->hi);
    int64_t nb = b ? sy_tensor_numel(b) : 0;
    if (b && nb != nch && nb != 1)
        return ERR(SY_ERR_SHAPE, "%s: '%s': bias has %lld elements, %lld expected", emu_T->provider, H->node_name(n),
                   (long long)nb, (long long)nch);
    for (int64_t c = 0; c < nch; c++) {
        float sw = scale_at(ws, c);
        float m = sx * sw; /* fp32, as the ONNX reference forms it */
        m = m / sy;
        sy_rq_init(&q->rq[c], SY_RQ_GEMMLOWP, (double)m, q->zy, q->lo, q->hi);
        if (!b)
            continue;
        int64_t bi = nb == 1 ? 0 : c;
        if (b->dtype == SY_DT_INT32) {
            q->bias[c] = ((const int32_t *)b->data)[bi];
        } else if (b->dtype == SY_DT_FLOAT32) {
            double v = sy_rq_round_even((double)((const float *)b->data)[bi] / ((double)sx * (double)sw));
            q->bias[c] = v > INT32_MAX ? INT32_MAX : (v < INT32_MIN ? INT32_MIN : (int32_t)v);
        } else {
            return ERR(SY_ERR_TYPE, "%s: '%s': bias is %s; int32 or float is required", emu_T->provider,
                       H->node_name(n), sy_dt_name(b->dtype));
        }
    }
    return NULL;
}

sy_status *emu_qk_build(const sy_node *n, int kind, const emu_win *g, emu_qk **out, size_t *scratch)
{
    *out = NULL;
    *scratch = 0;
    emu_qk *q = calloc(1, sizeof *q);
    if (!q)
        return ERR(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", emu_T->provider);
    q->kind = kind;
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_output(n, 0);
    q->xdt = x->dtype;
    q->ydt = y->dtype;
    q->zx = zp_at(in_at(n, 2), 0);
    if (g)
        q->g = *g;
    sy_status *st = NULL;
    switch (kind) {
    case EMU_Q_CONV: {
        const sy_tensor *w = H->node_input(n, 3);
        q->N = x->dims[0], q->C = x->dims[1], q->IH = x->dims[2], q->IW = x->dims[3];
        q->OC = y->dims[1], q->OH = y->dims[2], q->OW = y->dims[3];
        q->K = sy_dims_prod(w->dims, 1, 4);
        int64_t P = q->OH * q->OW;
        q->tile = P < 1024 ? (P ? P : 1) : 1024;
        st = mac_params(n, q, w, q->OC, true, false);
        /* centered input plane, column tile, accumulators */
        *scratch = (size_t)(q->C * q->IH * q->IW + q->K * q->tile) * sizeof(int32_t) + (size_t)q->tile * sizeof(int64_t);
        break;
    }
    case EMU_Q_MATMUL: {
        const sy_tensor *w = H->node_input(n, 3);
        bool tb = sy_attr_int_or(H, n, "transB", 0) != 0;
        if (!w || w->rank != 2) {
            st = ERR(SY_ERR_UNSUPPORTED, "%s: '%s': QMatMul needs a rank-2 constant B", emu_T->provider,
                     H->node_name(n));
            break;
        }
        q->K = x->dims[x->rank - 1];
        q->OC = tb ? w->dims[0] : w->dims[1];
        q->N = q->K ? sy_tensor_numel(x) / q->K : 0; /* rows */
        st = mac_params(n, q, w, q->OC, false, tb);
        *scratch = (size_t)(q->OC ? q->OC : 1) * sizeof(int64_t);
        break;
    }
    case EMU_Q_ADD: {
        const sy_tensor *as = in_at(n, 1), *b = in_at(n, 3), *bs = in_at(n, 4), *ys = in_at(n, 6);
        if (!is_static(as) || !is_static(bs) || !is_static(ys) || (in_at(n, 5) && !is_static(in_at(n, 5))) ||
            (in_at(n, 7) && !is_static(in_at(n, 7))) || as->dtype != SY_DT_FLOAT32 ||
            bs->dtype != SY_DT_FLOAT32 || ys->dtype != SY_DT_FLOAT32) {
            st = ERR(SY_ERR_UNSUPPORTED, "%s: '%s': encodings must be static", emu_T->provider, H->node_name(n));
            break;
        }
        q->bdt = b->dtype;
        q->zb = zp_at(in_at(n, 5), 0);
        q->zy = zp_at(in_at(n, 7), 0);
        float sa = scale_at(as, 0), sb = scale_at(bs, 0), sy = scale_at(ys, 0);
        const char *op = H->node_op(n);
        q->bop = !strcmp(op, "QMul") ? EMU_BOP_MUL : !strcmp(op, "QSub") ? EMU_BOP_SUB : EMU_BOP_ADD;
        q->ra = sa / sy;
        q->rb = sb / sy;
        q->rm = sa * sb / sy; /* fp32, in this order, as cpu_ref forms it */
        out_clamp(n, sy, q->zy, q->ydt, &q->lo, &q->hi);
        break;
    }
    case EMU_Q_MAXPOOL: {
        const sy_tensor *xs = in_at(n, 1), *ys = in_at(n, 3);
        if (!is_static(xs) || !is_static(ys) || xs->dtype != SY_DT_FLOAT32 || ys->dtype != SY_DT_FLOAT32) {
            st = ERR(SY_ERR_UNSUPPORTED, "%s: '%s': encodings must be static", emu_T->provider, H->node_name(n));
            break;
        }
        float sx = scale_at(xs, 0), sy = scale_at(ys, 0);
        q->zy = zp_at(in_at(n, 4), 0);
        q->N = x->dims[0] * x->dims[1], q->IH = x->dims[2], q->IW = x->dims[3], q->OH = y->dims[2], q->OW = y->dims[3];
        sy_q_storage_range(q->ydt, &q->lo, &q->hi);
        q->same = sx == sy && q->zx == q->zy && q->xdt == q->ydt;
        q->nch = 1;
        if (!(q->rq = calloc(1, sizeof *q->rq))) {
            st = ERR(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", emu_T->provider);
            break;
        }
        sy_rq_init(q->rq, SY_RQ_GEMMLOWP, (double)(sx / sy), q->zy, q->lo, q->hi);
        break;
    }
    case EMU_Q_CONCAT: {
        const sy_tensor *ys = in_at(n, 0), *yz = in_at(n, 1);
        uint32_t ni = H->node_num_inputs(n);
        q->nch = q->nw = ni >= 2 ? (ni - 2) / 3 : 0;
        q->xdt = q->nch ? in_at(n, 2)->dtype : SY_DT_UNDEFINED;
        int64_t axis = sy_attr_int_or(H, n, "axis", 0);
        q->K = axis < 0 ? axis + y->rank : axis;
        if (!q->nch || (ni - 2) % 3 || q->K < 0 || q->K >= y->rank || !is_static(ys) || ys->dtype != SY_DT_FLOAT32 ||
            (yz && !is_static(yz))) {
            st = ERR(SY_ERR_UNSUPPORTED, "%s: '%s': QConcat needs y_scale, y_zp, (x, scale, zero point) triples with "
                     "static encodings and an axis within rank %d", emu_T->provider, H->node_name(n), (int)y->rank);
            break;
        }
        q->zy = zp_at(yz, 0);
        float sy = scale_at(ys, 0);
        sy_q_storage_range(q->ydt, &q->lo, &q->hi);
        q->w = malloc((size_t)q->nch * sizeof *q->w);
        q->bias = malloc((size_t)q->nch * sizeof *q->bias);
        q->rq = calloc((size_t)q->nch, sizeof *q->rq);
        if (!q->w || !q->bias || !q->rq) {
            st = ERR(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", emu_T->provider);
            break;
        }
        for (int64_t i = 0; i < q->nch && !st; i++) {
            const sy_tensor *xi = in_at(n, (uint32_t)(2 + 3 * i)), *si = in_at(n, (uint32_t)(3 + 3 * i)),
                            *zi = in_at(n, (uint32_t)(4 + 3 * i));
            if (!xi || !is_static(si) || si->dtype != SY_DT_FLOAT32 || (zi && !is_static(zi)))
                st = ERR(SY_ERR_UNSUPPORTED, "%s: '%s': input %lld's encoding must be static fp32", emu_T->provider,
                         H->node_name(n), (long long)i);
            else {
                q->w[i] = xi->dtype;
                q->bias[i] = zp_at(zi, 0);
                sy_rq_init(&q->rq[i], SY_RQ_ONNX, (double)scale_at(si, 0) / (double)sy, q->zy, q->lo, q->hi);
            }
        }
        break;
    }
    default: st = ERR(SY_ERR_INTERNAL, "%s: unknown integer kernel %d", emu_T->provider, kind);
    }
    if (st) {
        emu_qk_free(q);
        return st;
    }
    *out = q;
    return NULL;
}

/* ---- run ------------------------------------------------------------------ */
static void run_qconv(const emu_qk *q, const sy_kernel_io *io)
{
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    const emu_win *g = &q->g;
    int64_t C = q->C, IH = q->IH, IW = q->IW, OC = q->OC, OW = q->OW, P = q->OH * q->OW;
    int64_t G = g->group > 0 ? g->group : 1, Cg = C / G, OCg = OC / G, KH = g->kshape[0], KW = g->kshape[1];
    int64_t K = Cg * KH * KW, chw = C * IH * IW;
    int32_t *xc = io->scratch, *col = xc + chw;
    int64_t *acc = (int64_t *)(col + q->K * q->tile);
    for (int64_t b = 0; b < q->N; b++) {
        for (int64_t i = 0; i < chw; i++)
            xc[i] = sy_q_load(x->data, (sy_dtype)q->xdt, (size_t)(b * chw + i)) - q->zx;
        for (int64_t gr = 0; gr < G; gr++) {
            const int32_t *xg = xc + gr * Cg * IH * IW;
            for (int64_t p0 = 0; p0 < P; p0 += q->tile) {
                int64_t T = P - p0 < q->tile ? P - p0 : q->tile;
                for (int64_t c = 0; c < Cg; c++) /* im2col of the tile; padding is the zero point (0 centered) */
                    for (int64_t kh = 0; kh < KH; kh++)
                        for (int64_t kw = 0; kw < KW; kw++) {
                            int32_t *row = col + ((c * KH + kh) * KW + kw) * T;
                            for (int64_t t = 0; t < T; t++) {
                                int64_t p = p0 + t, oh = p / OW, ow = p % OW;
                                int64_t ih = oh * g->strides[0] - g->pads[0] + kh * g->dil[0];
                                int64_t iw = ow * g->strides[1] - g->pads[1] + kw * g->dil[1];
                                row[t] = (ih >= 0 && ih < IH && iw >= 0 && iw < IW) ? xg[(c * IH + ih) * IW + iw] : 0;
                            }
                        }
                for (int64_t m = 0; m < OCg; m++) {
                    int64_t oc = gr * OCg + m;
                    const int32_t *wr = q->w + oc * K;
                    for (int64_t t = 0; t < T; t++)
                        acc[t] = q->bias[oc];
                    for (int64_t k = 0; k < K; k++) {
                        int64_t wv = wr[k];
                        const int32_t *cr = col + k * T;
                        for (int64_t t = 0; t < T; t++)
                            acc[t] += wv * cr[t];
                    }
                    size_t off = (size_t)((b * OC + oc) * P + p0);
                    for (int64_t t = 0; t < T; t++)
                        sy_q_store(y->data, (sy_dtype)q->ydt, off + (size_t)t, sy_rq_apply(&q->rq[oc], acc[t]));
                }
            }
        }
    }
}

static void run_qmatmul(const emu_qk *q, const sy_kernel_io *io)
{
    const sy_tensor *a = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    int64_t R = q->N, K = q->K, NN = q->OC;
    int64_t *acc = io->scratch;
    for (int64_t r = 0; r < R; r++) {
        for (int64_t j = 0; j < NN; j++)
            acc[j] = q->bias[j];
        for (int64_t k = 0; k < K; k++) {
            int64_t av = sy_q_load(a->data, (sy_dtype)q->xdt, (size_t)(r * K + k)) - q->zx;
            const int32_t *br = q->w + k * NN;
            for (int64_t j = 0; j < NN; j++)
                acc[j] += av * br[j];
        }
        for (int64_t j = 0; j < NN; j++)
            sy_q_store(y->data, (sy_dtype)q->ydt, (size_t)(r * NN + j), sy_rq_apply(&q->rq[j], acc[j]));
    }
}

static void add_loop(const void *ctx, const void *const *in, const int64_t *st, void *out, int64_t n)
{
    const emu_qk *q = ctx;
    for (int64_t i = 0; i < n; i++) {
        int32_t da = sy_q_load(in[0], (sy_dtype)q->xdt, (size_t)(i * st[0])) - q->zx;
        int32_t db = sy_q_load(in[1], (sy_dtype)q->bdt, (size_t)(i * st[1])) - q->zb;
        /* rounded before the zero point is added, as QuantizeLinear (and cpu_ref) */
        float v = q->bop == EMU_BOP_MUL   ? (float)((int64_t)da * db) * q->rm
                  : q->bop == EMU_BOP_SUB ? q->ra * (float)da - q->rb * (float)db
                                          : q->ra * (float)da + q->rb * (float)db;
        double r = sy_rq_round_even((double)v) + q->zy;
        sy_q_store(out, (sy_dtype)q->ydt, (size_t)i, !(r >= q->lo) ? q->lo : (r > q->hi ? q->hi : (int32_t)r));
    }
}

static void run_qmaxpool(const emu_qk *q, const sy_kernel_io *io)
{
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    const emu_win *g = &q->g;
    for (int64_t p = 0; p < q->N; p++)
        for (int64_t oh = 0; oh < q->OH; oh++)
            for (int64_t ow = 0; ow < q->OW; ow++) {
                int32_t m = INT32_MIN;
                for (int64_t kh = 0; kh < g->kshape[0]; kh++)
                    for (int64_t kw = 0; kw < g->kshape[1]; kw++) {
                        int64_t ih = oh * g->strides[0] - g->pads[0] + kh * g->dil[0];
                        int64_t iw = ow * g->strides[1] - g->pads[1] + kw * g->dil[1];
                        if (ih < 0 || ih >= q->IH || iw < 0 || iw >= q->IW)
                            continue; /* padding never wins a max */
                        int32_t v = sy_q_load(x->data, (sy_dtype)q->xdt, (size_t)((p * q->IH + ih) * q->IW + iw));
                        m = v > m ? v : m;
                    }
                int32_t v = q->same ? m : sy_rq_apply(q->rq, (int64_t)m - q->zx);
                sy_q_store(y->data, (sy_dtype)q->ydt, (size_t)((p * q->OH + oh) * q->OW + ow), v);
            }
}

static void run_qconcat(const emu_qk *q, const sy_kernel_io *io)
{
    sy_tensor *y = io->outputs[0];
    int32_t axis = (int32_t)q->K;
    int64_t outer = sy_dims_prod(y->dims, 0, axis), yinner = sy_dims_prod(y->dims, axis, y->rank), off = 0;
    size_t ysz = sy_dt_size((sy_dtype)q->ydt);
    for (int64_t i = 0; i < q->nch; i++) {
        const sy_tensor *x = io->inputs[2 + 3 * i];
        sy_dtype xdt = (sy_dtype)q->w[i];
        int32_t zx = q->bias[i];
        int64_t inner = sy_dims_prod(x->dims, axis, x->rank);
        if (q->rq[i].real_mult == 1.0 && zx == q->zy && xdt == (sy_dtype)q->ydt) { /* the output's encoding: a copy */
            for (int64_t o = 0; o < outer; o++)
                memcpy((char *)y->data + (size_t)(o * yinner + off) * ysz, (const char *)x->data + (size_t)(o * inner) * ysz,
                       (size_t)inner * ysz);
        } else {
            for (int64_t o = 0; o < outer; o++)
                for (int64_t j = 0; j < inner; j++) {
                    int64_t d = (int64_t)sy_q_load(x->data, xdt, (size_t)(o * inner + j)) - zx;
                    sy_q_store(y->data, (sy_dtype)q->ydt, (size_t)(o * yinner + off + j), sy_rq_apply(&q->rq[i], d));
                }
        }
        off += inner;
    }
}

sy_status *emu_qk_run(const emu_qk *q, const sy_kernel_io *io)
{
    switch (q->kind) {
    case EMU_Q_CONV: run_qconv(q, io); return NULL;
    case EMU_Q_MATMUL: run_qmatmul(q, io); return NULL;
    case EMU_Q_ADD: {
        const sy_tensor *ins[2] = {io->inputs[0], io->inputs[3]};
        return sy_bcast_apply(H, 2, ins, io->outputs[0], add_loop, q);
    }
    case EMU_Q_MAXPOOL: run_qmaxpool(q, io); return NULL;
    case EMU_Q_CONCAT: run_qconcat(q, io); return NULL;
    default: return ERR(SY_ERR_INTERNAL, "%s: unknown integer kernel %d", emu_T->provider, q->kind);
    }
}

/* ---- blob: emu_qk scalars | i32[nw] w | i32[nch] bias | sy_requant[nch] rq ---- */
size_t emu_qk_blob(const emu_qk *q, uint8_t *out)
{
    emu_qk s = *q;
    s.w = s.bias = NULL;
    s.rq = NULL;
    size_t nw = (size_t)(q->w ? q->nw : 0) * sizeof(int32_t), nb = (size_t)(q->bias ? q->nch : 0) * sizeof(int32_t),
           nr = (size_t)(q->rq ? q->nch : 0) * sizeof(sy_requant);
    if (out) {
        memcpy(out, &s, sizeof s);
        if (nw)
            memcpy(out + sizeof s, q->w, nw);
        if (nb)
            memcpy(out + sizeof s + nw, q->bias, nb);
        if (nr)
            memcpy(out + sizeof s + nw + nb, q->rq, nr);
    }
    return sizeof s + nw + nb + nr;
}

/* ---- what capability checks need ------------------------------------------ */
bool emu_qbinary(const char *op) { return !strcmp(op, "QAdd") || !strcmp(op, "QSub") || !strcmp(op, "QMul"); }

const char *emu_qbase_op(const char *op)
{
    static const char *const map[][2] = {{"QConv", "Conv"}, {"QMatMul", "MatMul"}, {"QAdd", "Add"},
                                         {"QMaxPool", "MaxPool"}, {"QConcat", "Concat"},
                                         {"QSub", "Sub"},   {"QMul", "Mul"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(op, map[i][0]))
            return map[i][1];
    return op;
}

bool emu_qdescribe(const sy_node *n, emu_qinfo *qi)
{
    memset(qi, 0, sizeof *qi);
    const char *dom = H->node_domain ? H->node_domain(n) : "";
    if (!dom || strcmp(dom, "switchyard.quant"))
        return false;
    const char *op = H->node_op(n);
    bool cat = !strcmp(op, "QConcat"); /* y_scale, y_zp, then (x, scale, zero point) triples */
    const sy_tensor *x = in_at(n, cat ? 2 : 0), *y = H->node_output(n, 0);
    qi->quant = true;
    qi->act = x ? x->dtype : SY_DT_UNDEFINED;
    qi->out = y ? y->dtype : SY_DT_UNDEFINED;
    qi->wt = SY_DT_UNDEFINED;
    qi->qbits = (int)sy_dt_size(qi->act) * 8;
    qi->w_symmetric = true;
    qi->params_static = true;
    uint32_t ni = H->node_num_inputs(n);
    for (uint32_t i = 1; i < ni; i++) { /* everything but the activations is a constant */
        const sy_tensor *t = H->node_input(n, i);
        bool activation = (emu_qbinary(op) && i == 3) || (cat && i >= 2 && (i - 2) % 3 == 0);
        if (t && !activation && !t->data)
            qi->params_static = false;
        /* the emulators read fp32 encodings (QNN's Qnn_ScaleOffset_t scales are float) */
        if (t && (t->dtype == SY_DT_FLOAT16 || t->dtype == SY_DT_BFLOAT16 || t->dtype == SY_DT_FLOAT64))
            qi->params_static = false;
    }
    if (!strcmp(op, "QConv") || !strcmp(op, "QMatMul")) {
        const sy_tensor *w = in_at(n, 3), *ws = in_at(n, 4), *wz = in_at(n, 5);
        qi->wt = w ? w->dtype : SY_DT_UNDEFINED;
        qi->w_per_axis = ws && sy_tensor_numel(ws) > 1;
        if (wz && wz->data)
            for (int64_t i = 0; i < sy_tensor_numel(wz); i++)
                qi->w_symmetric &= sy_q_load(wz->data, wz->dtype, (size_t)i) == 0;
    }
    return true;
}
