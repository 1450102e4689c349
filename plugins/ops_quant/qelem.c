/*
 * ops_quant: quantized elementwise, concat, pooling, lookup-table and
 * softmax kernels.
 *
 *   QAdd, QSub, QMul (switchyard.quant 1); QLinearAdd, QLinearMul
 *   (com.microsoft 1, what ONNX Runtime's quantizer emits)
 *     inputs a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp; numpy broadcasting.
 *     ONNX form: y = sat(rne(sa/sy*(a-za) + sb/sy*(b-zb)) + zy) (float, like ORT);
 *     gemmlowp form: TFLite's left-shift-20 add and fixed-point multipliers.
 *   QPRelu, QPow (switchyard.quant 1): the same inputs; what DQ -> PRelu /
 *     Pow -> Q folds into; 8-bit codes only, the ONNX form of qk.c's
 *     qk_bin_one (dequantize, the float op, QuantizeLinear), as riscv_mcu.
 *   QConcat (switchyard.quant 1), QLinearConcat (com.microsoft 1)
 *     inputs y_scale, y_zp, then (x, x_scale, x_zp) per input.
 *   QMaxPool, QAveragePool (switchyard.quant 1; attribute global for the
 *     Global* pools) inputs x, x_scale, x_zp, y_scale, y_zp.
 *   QUnary (switchyard.quant 1): fn = an ONNX one-input op (qk_unary.c's
 *     list: Relu, Clip, Sigmoid, Tanh, LeakyRelu, HardSigmoid, HardSwish,
 *     Identity, Abs, Ceil, Floor, Round, Exp, Log, Sqrt, Neg, Sin, Cos, Tan,
 *     Erf, Elu, Celu, Selu, ThresholdedRelu, Softsign, Softplus, Gelu, Swish)
 *     with its attributes (alpha, beta, gamma, min, max, approximate), as a
 *     256-entry table for 8-bit codes (computed per run from the parameters,
 *     qk_unary_table), directly for 16-bit.
 *   QNorm (switchyard.quant 1): fn = BatchNormalization, LayerNormalization
 *     or LpNormalization (epsilon, axis, p, training_mode 0); inputs x, x_scale, x_zp, y_scale, y_zp,
 *     then the op's constant fp32 parameters: dequantized, tflk_norm_run,
 *     quantized (qk.c), as riscv_mcu.
 *   QSoftmax, QLogSoftmax (switchyard.quant 1): attribute axis, legacy
 *     (opset < 13: the input is flattened at axis); QLogSoftmax 8-bit only.
 */
#include "quant_internal.h"
#include "qk.h"
#include "qk_unary.h"
#include "tflk.h" /* tflk_norm_run: QNorm's float normalization */

static void tensor_inputs(const sy_node *n, const sy_tensor **arr, uint32_t max, uint32_t *cnt)
{
    uint32_t k = H->node_num_inputs(n);
    if (k > max)
        k = max;
    for (uint32_t i = 0; i < k; i++)
        arr[i] = H->node_input(n, i);
    *cnt = k;
}

static sy_status *check_out_pair(const sy_node *n, const sy_tensor *ys, const sy_tensor *yz, sy_dtype ydt)
{
    const sy_tensor *y = H->node_output(n, 0);
    sy_tensor yt;
    memset(&yt, 0, sizeof yt);
    yt.name = y && y->name ? y->name : "y";
    return q_check_pair(&yt, ys, yz, ydt, -1);
}

/* ======================================================================== */
/* binary: Add / Sub / Mul                                                  */
/* ======================================================================== */

enum { BIN_ADD, BIN_SUB, BIN_MUL, BIN_PRELU, BIN_POW };

typedef struct bin_state {
    int op;
    sy_rq_mode mode;
    float act_min, act_max;
} bin_state;

typedef struct bin_ctx {
    int op;
    sy_rq_mode mode;
    sy_dtype adt, bdt, ydt;
    int32_t za, zb, zy, lo, hi;
    float ra, rb, rm; /* ONNX form: sa/sy, sb/sy, sa*sb/sy */
    /* gemmlowp form; left_shift scales the zero-point-free inputs up before
     * the per-input multipliers: 20 for 8-bit codes and 15 for 16-bit codes
     * (TFLite's add/sub choice), so that |code difference| << shift stays
     * inside int32 for either width */
    int32_t m1, s1, m2, s2, mo, so, left_shift;
    qk_add q8; /* 8-bit codes: the portable kernel's element (qk.c), riscv_mcu's too */
} bin_ctx;

static int bin_op_of(const char *op)
{
    if (!strcmp(op, "QPRelu"))
        return BIN_PRELU;
    if (!strcmp(op, "QPow"))
        return BIN_POW;
    return !strcmp(op, "QMul") || !strcmp(op, "QLinearMul") ? BIN_MUL : !strcmp(op, "QSub") ? BIN_SUB : BIN_ADD;
}

static sy_status *infer_bin(sy_node *n)
{
    const sy_tensor *in[8];
    uint32_t cnt;
    tensor_inputs(n, in, 8, &cnt);
    if (cnt < 7 || !in[0] || !in[1] || !in[3] || !in[4] || !in[6])
        return QERR(SY_ERR_INVALID_ARGUMENT, "a, a_scale, b, b_scale and y_scale are required");
    if (in[0]->dtype != in[3]->dtype)
        return QERR(SY_ERR_TYPE, "a '%s' is %s but b '%s' is %s", in[0]->name, sy_dt_name(in[0]->dtype), in[3]->name,
                    sy_dt_name(in[3]->dtype));
    const sy_tensor *pair[2] = {in[0], in[3]};
    int32_t rank;
    int64_t dims[SY_MAX_RANK];
    SY_TRY(sy_broadcast_shapes(H, 2, pair, &rank, dims));
    const sy_tensor *yz = cnt > 7 ? in[7] : NULL;
    sy_dtype ydt = yz ? yz->dtype : in[0]->dtype;
    SY_TRY(H->node_set_output(n, 0, ydt, rank, dims));
    SY_TRY(q_check_pair(in[0], in[1], cnt > 2 ? in[2] : NULL, in[0]->dtype, -1));
    SY_TRY(q_check_pair(in[3], in[4], cnt > 5 ? in[5] : NULL, in[3]->dtype, -1));
    return check_out_pair(n, in[6], yz, ydt);
}

static sy_status *prepare_bin(sy_node *n, void **state)
{
    bin_state *st = calloc(1, sizeof *st);
    if (!st)
        return QERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    st->op = bin_op_of(H->node_op(n));
    st->act_min = sy_attr_float_or(H, n, "act_min", -INFINITY);
    st->act_max = sy_attr_float_or(H, n, "act_max", INFINITY);
    sy_status *err = q_node_rq_mode(n, &st->mode);
    if (err) {
        free(st);
        return err;
    }
    *state = st;
    return NULL;
}

static inline int32_t bin_one(const bin_ctx *c, int32_t a, int32_t b)
{
    int64_t da = (int64_t)a - c->za, db = (int64_t)b - c->zb;
    if (c->mode == SY_RQ_GEMMLOWP || c->mode == SY_RQ_SINGLE) {
        int32_t (*mul)(int32_t, int32_t, int32_t) = c->mode == SY_RQ_SINGLE ? sy_q_mul_by_qm_single : sy_q_mul_by_qm;
        int64_t r;
        if (c->op == BIN_MUL) {
            int64_t p = da * db;
            r = (int64_t)mul((int32_t)p, c->mo, c->so) + c->zy;
        } else {
            int32_t sa = mul((int32_t)(da * ((int64_t)1 << c->left_shift)), c->m1, c->s1);
            int32_t sb = mul((int32_t)(db * ((int64_t)1 << c->left_shift)), c->m2, c->s2);
            int64_t sum = c->op == BIN_SUB ? (int64_t)sa - sb : (int64_t)sa + sb;
            if (sum > INT32_MAX)
                sum = INT32_MAX;
            if (sum < INT32_MIN)
                sum = INT32_MIN;
            r = (int64_t)mul((int32_t)sum, c->mo, c->so) + c->zy;
        }
        return r < c->lo ? c->lo : (r > c->hi ? c->hi : (int32_t)r);
    }
    /* QuantizeLinear rounds x / y_scale and then adds the zero point:
     * adding an odd zy before rounding would move every tie by one */
    float v;
    if (c->op == BIN_MUL)
        v = (float)(da * db) * c->rm;
    else if (c->op == BIN_SUB)
        v = c->ra * (float)da - c->rb * (float)db;
    else
        v = c->ra * (float)da + c->rb * (float)db;
    double r = sy_rq_round_even((double)v) + c->zy;
    return !(r >= c->lo) ? c->lo : (r > c->hi ? c->hi : (int32_t)r);
}

static inline int32_t ld8(const void *p, bool u, int64_t i)
{
    return u ? ((const uint8_t *)p)[i] : ((const int8_t *)p)[i];
}

static void bin_loop(const void *ctx, const void *const *in, const int64_t *st, void *out, int64_t n)
{
    const bin_ctx *c = ctx;
    bool a8 = c->adt == SY_DT_INT8 || c->adt == SY_DT_UINT8, b8 = c->bdt == SY_DT_INT8 || c->bdt == SY_DT_UINT8;
    if (a8 && b8 && (c->ydt == SY_DT_INT8 || c->ydt == SY_DT_UINT8)) {
        /* 8-bit codes: typed loads and stores instead of a switch per element */
        bool ua = c->adt == SY_DT_UINT8, ub = c->bdt == SY_DT_UINT8;
        int64_t sa = st[0], sb = st[1];
        if (c->ydt == SY_DT_UINT8)
            for (int64_t i = 0; i < n; i++)
                ((uint8_t *)out)[i] = (uint8_t)qk_bin_one(&c->q8, ld8(in[0], ua, i * sa), ld8(in[1], ub, i * sb));
        else
            for (int64_t i = 0; i < n; i++)
                ((int8_t *)out)[i] = (int8_t)qk_bin_one(&c->q8, ld8(in[0], ua, i * sa), ld8(in[1], ub, i * sb));
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        int32_t a = sy_q_load(in[0], c->adt, (size_t)(i * st[0]));
        int32_t b = sy_q_load(in[1], c->bdt, (size_t)(i * st[1]));
        sy_q_store(out, c->ydt, (size_t)i, bin_one(c, a, b));
    }
}

static sy_status *run_bin(void *state, const sy_kernel_io *io)
{
    const bin_state *st = state;
    const sy_tensor *a = io->inputs[0], *as = io->inputs[1], *az = q_in(io, 2), *b = io->inputs[3],
                    *bs = io->inputs[4], *bz = q_in(io, 5), *ys = io->inputs[6], *yz = q_in(io, 7);
    sy_tensor *y = io->outputs[0];
    bin_ctx c;
    memset(&c, 0, sizeof c);
    c.op = st->op;
    c.mode = st->mode;
    c.adt = a->dtype;
    c.bdt = b->dtype;
    c.ydt = y->dtype;
    c.za = q_zp_at(az, 0);
    c.zb = q_zp_at(bz, 0);
    c.zy = q_zp_at(yz, 0);
    float sa = q_scale_at(as, 0), sb = q_scale_at(bs, 0), sy = q_scale_at(ys, 0);
    if (!(sa > 0.0f) || !(sb > 0.0f) || !(sy > 0.0f))
        return QERR(SY_ERR_INVALID_ARGUMENT, "tensor '%s': scales must be positive", y->name ? y->name : "?");
    q_act_clamp(st->act_min, st->act_max, sy, c.zy, y->dtype, &c.lo, &c.hi);
    c.ra = sa / sy;
    c.rb = sb / sy;
    c.rm = sa * sb / sy;
    if (c.op == BIN_PRELU || c.op == BIN_POW) {
        /* qk_bin_one's float form alone (qk.h: ra = sa, rb = sb, rm = sy) */
        bool b8 = (a->dtype == SY_DT_INT8 || a->dtype == SY_DT_UINT8) && (b->dtype == SY_DT_INT8 || b->dtype == SY_DT_UINT8) &&
                  (y->dtype == SY_DT_INT8 || y->dtype == SY_DT_UINT8);
        if (!b8)
            return QERR(SY_ERR_UNSUPPORTED, "%s '%s': 8-bit codes only, got %s, %s -> %s",
                        c.op == BIN_POW ? "QPow" : "QPRelu", y->name ? y->name : "?", sy_dt_name(a->dtype),
                        sy_dt_name(b->dtype), sy_dt_name(y->dtype));
        c.q8 = (qk_add){0, 0, 0, 0, 0, QK_RQ_ONNX, c.za, c.zb, c.zy, c.lo, c.hi, sa, sb, 0, 0, 0, 0, 0, 0,
                        c.op == BIN_POW ? QK_POW : QK_PRELU, sy, 0};
        const sy_tensor *ins2[2] = {a, b};
        return sy_bcast_apply(H, 2, ins2, y, bin_loop, &c);
    }
    if (c.op == BIN_MUL) {
        sy_q_quantize_multiplier((double)sa * sb / sy, &c.mo, &c.so);
    } else {
        bool wide = sy_dt_size(a->dtype) > 1 || sy_dt_size(b->dtype) > 1;
        c.left_shift = wide ? 15 : 20;
        double twice_max = 2.0 * (sa > sb ? sa : sb);
        sy_q_quantize_multiplier(sa / twice_max, &c.m1, &c.s1);
        sy_q_quantize_multiplier(sb / twice_max, &c.m2, &c.s2);
        sy_q_quantize_multiplier(twice_max / ((double)((int64_t)1 << c.left_shift) * sy), &c.mo, &c.so);
    }
    c.q8 = (qk_add){0, 0, 0, 0, 0, (int32_t)c.mode, c.za, c.zb, c.zy, c.lo, c.hi, c.ra, c.rb, c.m1, c.s1, c.m2,
                    c.s2, c.mo, c.so, c.op == BIN_MUL ? QK_MUL : c.op == BIN_SUB ? QK_SUB : QK_ADD, c.rm, 0};
    const sy_tensor *ins[2] = {a, b};
    if (y->dtype == SY_DT_INT4 || y->dtype == SY_DT_UINT4 || a->dtype == SY_DT_INT4 || a->dtype == SY_DT_UINT4)
        return QERR(SY_ERR_UNSUPPORTED, "4-bit activations are not supported by %s", "the binary kernels");
    return sy_bcast_apply(H, 2, ins, y, bin_loop, &c);
}

/* ======================================================================== */
/* concat                                                                   */
/* ======================================================================== */

static sy_status *infer_concat(sy_node *n)
{
    uint32_t cnt = H->node_num_inputs(n);
    if (cnt < 5 || (cnt - 2) % 3)
        return QERR(SY_ERR_INVALID_ARGUMENT, "QConcat takes y_scale, y_zp, then (x, scale, zero point) triples");
    const sy_tensor *ys = H->node_input(n, 0), *yz = H->node_input(n, 1), *x0 = H->node_input(n, 2);
    if (!ys || !x0)
        return QERR(SY_ERR_INVALID_ARGUMENT, "y_scale and the first input are required");
    int64_t axis_a = sy_attr_int_or(H, n, "axis", 0);
    int32_t axis;
    SY_TRY(sy_norm_axis(H, axis_a, x0->rank, false, "axis", &axis));
    int64_t dims[SY_MAX_RANK];
    memcpy(dims, x0->dims, sizeof dims);
    dims[axis] = 0;
    for (uint32_t i = 2; i < cnt; i += 3) {
        const sy_tensor *x = H->node_input(n, i);
        if (!x || x->rank != x0->rank)
            return QERR(SY_ERR_SHAPE, "concat input %u is missing or has a different rank", (i - 2) / 3);
        for (int32_t d = 0; d < x->rank; d++)
            if (d != axis && x->dims[d] != x0->dims[d])
                return QERR(SY_ERR_SHAPE, "concat input '%s' differs on axis %d", x->name ? x->name : "?", (int)d);
        if (x->dtype != x0->dtype)
            return QERR(SY_ERR_TYPE, "concat inputs differ in dtype");
        SY_TRY(q_check_pair(x, H->node_input(n, i + 1), H->node_input(n, i + 2), x->dtype, -1));
        dims[axis] += x->dims[axis];
    }
    sy_dtype ydt = yz ? yz->dtype : x0->dtype;
    SY_TRY(H->node_set_output(n, 0, ydt, x0->rank, dims));
    return check_out_pair(n, ys, yz, ydt);
}

typedef struct axis_state {
    int64_t axis;
    sy_rq_mode mode;
    bool legacy;
    bool log; /* QLogSoftmax */
} axis_state;

static sy_status *prepare_axis(sy_node *n, void **state)
{
    axis_state *st = calloc(1, sizeof *st);
    if (!st)
        return QERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    bool sm = !strcmp(H->node_op(n), "QSoftmax") || !strcmp(H->node_op(n), "QLogSoftmax");
    st->axis = sy_attr_int_or(H, n, "axis", sm ? -1 : 0);
    st->log = !strcmp(H->node_op(n), "QLogSoftmax");
    st->legacy = sy_attr_int_or(H, n, "legacy", 0) != 0;
    sy_status *err = q_node_rq_mode(n, &st->mode);
    if (err) {
        free(st);
        return err;
    }
    *state = st;
    return NULL;
}

static bool is8(sy_dtype dt) { return dt == SY_DT_INT8 || dt == SY_DT_UINT8; }

/* 8-bit codes (every input has the first one's dtype: infer_concat): the
 * portable kernel, riscv_mcu's too (qk.c, qk_concat_run), over runs of up
 * to 16 inputs written at their offset along the axis */
static sy_status *run_concat8(const axis_state *st, const sy_kernel_io *io, int32_t axis, int64_t outer, int64_t yinner,
                              float sy, int32_t zy, int32_t lo, int32_t hi)
{
    enum { RUN = 16 };
    sy_tensor *y = io->outputs[0];
    int32_t inner[RUN], zx[RUN], copy[RUN];
    qk_rq rq[RUN];
    const void *xs[RUN];
    int64_t offset = 0;
    uint32_t i = 2;
    while (i + 1 < io->n_inputs) {
        int32_t m = 0;
        int64_t run_off = offset;
        for (; m < RUN && i + 1 < io->n_inputs; m++, i += 3) {
            const sy_tensor *x = io->inputs[i];
            float sx = q_scale_at(io->inputs[i + 1], 0);
            inner[m] = (int32_t)sy_dims_prod(x->dims, axis, x->rank);
            zx[m] = q_zp_at(q_in(io, i + 2), 0);
            copy[m] = sx == sy && zx[m] == zy && x->dtype == y->dtype;
            sy_requant r;
            sy_rq_init(&r, st->mode, (double)sx / sy, zy, lo, hi);
            rq[m] = (qk_rq){(int32_t)r.mode, r.real_mult, r.mult, r.shift, r.zp, r.lo, r.hi};
            xs[m] = x->data;
            offset += inner[m];
        }
        const int32_t dt = io->inputs[2]->dtype == SY_DT_UINT8 ? QK_U8 : QK_S8;
        qk_concat p = {m, (int32_t)outer, (int32_t)yinner, dt, y->dtype == SY_DT_UINT8 ? QK_U8 : QK_S8,
                       inner, zx, copy, rq};
        qk_concat_run(&p, xs, (char *)y->data + run_off);
    }
    return NULL;
}

static sy_status *run_concat(void *state, const sy_kernel_io *io)
{
    const axis_state *st = state;
    sy_tensor *y = io->outputs[0];
    const sy_tensor *ys = io->inputs[0], *yz = q_in(io, 1);
    int32_t axis;
    SY_TRY(sy_norm_axis(H, st->axis, y->rank, false, "axis", &axis));
    int64_t outer = sy_dims_prod(y->dims, 0, axis), yinner = sy_dims_prod(y->dims, axis, y->rank);
    float sy = q_scale_at(ys, 0);
    int32_t zy = q_zp_at(yz, 0), lo, hi;
    sy_q_storage_range(y->dtype, &lo, &hi);
    if (is8(y->dtype) && io->n_inputs > 2 && is8(io->inputs[2]->dtype) && outer <= INT32_MAX && yinner <= INT32_MAX)
        return run_concat8(st, io, axis, outer, yinner, sy, zy, lo, hi);
    int64_t offset = 0;
    for (uint32_t i = 2; i + 1 < io->n_inputs; i += 3) {
        const sy_tensor *x = io->inputs[i], *xs = io->inputs[i + 1], *xz = q_in(io, i + 2);
        int64_t inner = sy_dims_prod(x->dims, axis, x->rank);
        float sx = q_scale_at(xs, 0);
        int32_t zx = q_zp_at(xz, 0);
        bool same = sx == sy && zx == zy && x->dtype == y->dtype;
        sy_requant rq;
        sy_rq_init(&rq, st->mode, (double)sx / sy, zy, lo, hi);
        size_t xsz = sy_dt_size(x->dtype), ysz = sy_dt_size(y->dtype);
        if (same && xsz > 0) { /* whole-byte codes with the output's parameters: copies */
            for (int64_t o = 0; o < outer; o++)
                memcpy((char *)y->data + (size_t)(o * yinner + offset) * ysz, (const char *)x->data + (size_t)(o * inner) * xsz,
                       (size_t)inner * xsz);
            offset += inner;
            continue;
        }
        if (xsz > 0 && xsz <= 2 && ysz > 0) {
            /* 8/16-bit codes: q - zx fits int32; requantized in chunks */
            int32_t cen[256], codes[256];
            for (int64_t o = 0; o < outer; o++)
                for (int64_t j0 = 0; j0 < inner; j0 += 256) {
                    size_t nn = (size_t)(inner - j0 < 256 ? inner - j0 : 256);
                    q_load_centered(x->data, x->dtype, (size_t)(o * inner + j0), nn, zx, cen);
                    sy_rq_apply_n(&rq, 0, cen, codes, nn);
                    q_store_codes(y->data, y->dtype, (size_t)(o * yinner + offset + j0), codes, nn);
                }
            offset += inner;
            continue;
        }
        for (int64_t o = 0; o < outer; o++)
            for (int64_t j = 0; j < inner; j++) {
                int32_t q = sy_q_load(x->data, x->dtype, (size_t)(o * inner + j));
                int32_t v = same ? q : sy_rq_apply(&rq, (int64_t)q - zx);
                sy_q_store(y->data, y->dtype, (size_t)(o * yinner + offset + j), v);
            }
        offset += inner;
    }
    return NULL;
}

/* ======================================================================== */
/* pooling                                                                  */
/* ======================================================================== */

typedef struct pool_state {
    bool is_max, global, count_include_pad;
    q_win g;
    sy_rq_mode mode;
} pool_state;

static sy_status *pool_geom(const sy_node *n, const sy_tensor *x, bool global, q_win *g)
{
    int64_t k[2];
    int32_t nk;
    if (global) {
        nk = x->rank - 2;
        if (nk < 1 || nk > 2)
            return QERR(SY_ERR_UNSUPPORTED, "global pooling takes 1 or 2 spatial dims");
        for (int32_t i = 0; i < nk; i++)
            k[i] = x->dims[2 + i];
    } else {
        int64_t c = sy_attr_ints_copy(H, n, "kernel_shape", k, 2);
        if (c < 1 || c > 2)
            return QERR(SY_ERR_INVALID_ARGUMENT, "kernel_shape must have 1 or 2 values");
        nk = (int32_t)c;
    }
    return q_win_compute(n, x, k, nk, g);
}

static sy_status *infer_pool(sy_node *n)
{
    const sy_tensor *x = q_nin(n, 0), *xs = q_nin(n, 1), *xz = q_nin(n, 2), *ys = q_nin(n, 3), *yz = q_nin(n, 4);
    if (!x || !xs || !ys)
        return QERR(SY_ERR_INVALID_ARGUMENT, "x, x_scale and y_scale are required");
    q_win g;
    SY_TRY(pool_geom(n, x, sy_attr_int_or(H, n, "global", 0) != 0, &g));
    int64_t dims[4];
    q_win_out_dims(&g, x, x->dims[1], dims);
    sy_dtype ydt = yz ? yz->dtype : x->dtype;
    SY_TRY(H->node_set_output(n, 0, ydt, x->rank, dims));
    SY_TRY(q_check_pair(x, xs, xz, x->dtype, -1));
    return check_out_pair(n, ys, yz, ydt);
}

static sy_status *prepare_pool(sy_node *n, void **state)
{
    pool_state *st = calloc(1, sizeof *st);
    if (!st)
        return QERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    st->is_max = !strcmp(H->node_op(n), "QMaxPool");
    st->global = sy_attr_int_or(H, n, "global", 0) != 0;
    st->count_include_pad = sy_attr_int_or(H, n, "count_include_pad", 0) != 0;
    sy_status *err = pool_geom(n, H->node_input(n, 0), st->global, &st->g);
    if (!err)
        err = q_node_rq_mode(n, &st->mode);
    if (err) {
        free(st);
        return err;
    }
    *state = st;
    return NULL;
}

static sy_status *run_pool(void *state, const sy_kernel_io *io)
{
    const pool_state *st = state;
    const sy_tensor *x = io->inputs[0], *xs = io->inputs[1], *xz = q_in(io, 2), *ys = io->inputs[3],
                    *yz = q_in(io, 4);
    sy_tensor *y = io->outputs[0];
    const q_win *g = &st->g;
    float sx = q_scale_at(xs, 0), sy = q_scale_at(ys, 0);
    int32_t zx = q_zp_at(xz, 0), zy = q_zp_at(yz, 0), lo, hi;
    sy_q_storage_range(y->dtype, &lo, &hi);
    bool same = sx == sy && zx == zy;
    sy_requant rq;
    sy_rq_init(&rq, st->mode, (double)sx / sy, zy, lo, hi);
    int64_t NC = x->dims[0] * x->dims[1], IH = g->in[0], IW = g->in[1], OH = g->out[0], OW = g->out[1];
    bool b8x = x->dtype == SY_DT_INT8 || x->dtype == SY_DT_UINT8, b8y = y->dtype == SY_DT_INT8 || y->dtype == SY_DT_UINT8;
    bool pads = g->pb[0] || g->pb[1] || g->pe[0] || g->pe[1];
    if ((st->is_max || !st->count_include_pad || !pads) && b8x && b8y && NC * IH * IW <= INT32_MAX &&
        NC * OH * OW <= INT32_MAX) {
        /* the portable kernels riscv_mcu runs (kernels/qk.c) */
        qk_pool p = {(int32_t)NC, (int32_t)IH, (int32_t)IW, (int32_t)OH, (int32_t)OW, (int32_t)g->k[0],
                     (int32_t)g->k[1], (int32_t)g->s[0], (int32_t)g->s[1], (int32_t)g->d[0], (int32_t)g->d[1],
                     (int32_t)g->pb[0], (int32_t)g->pb[1], x->dtype == SY_DT_UINT8 ? QK_U8 : QK_S8,
                     y->dtype == SY_DT_UINT8 ? QK_U8 : QK_S8, zx, zy, same,
                     {(int32_t)rq.mode, rq.real_mult, rq.mult, rq.shift, rq.zp, rq.lo,
                      rq.hi}};
        if (st->is_max)
            qk_maxpool_run(&p, x->data, y->data);
        else
            qk_avgpool_run(&p, x->data, y->data);
        return NULL;
    }
    for (int64_t nc = 0; nc < NC; nc++) {
        size_t xb = (size_t)(nc * IH * IW), yb = (size_t)(nc * OH * OW);
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                int32_t best = INT32_MIN;
                int64_t sum = 0, count = 0, cells = 0;
                for (int64_t kh = 0; kh < g->k[0]; kh++) {
                    int64_t ih = oh * g->s[0] - g->pb[0] + kh * g->d[0];
                    for (int64_t kw = 0; kw < g->k[1]; kw++) {
                        int64_t iw = ow * g->s[1] - g->pb[1] + kw * g->d[1];
                        bool inside = ih >= 0 && ih < IH && iw >= 0 && iw < IW;
                        /* count_include_pad counts cells inside the padded input only */
                        if (ih < IH + g->pe[0] && iw < IW + g->pe[1])
                            cells++;
                        if (!inside)
                            continue;
                        int32_t v = sy_q_load(x->data, x->dtype, xb + (size_t)(ih * IW + iw));
                        if (v > best)
                            best = v;
                        sum += v - zx;
                        count++;
                    }
                }
                int32_t out;
                if (st->is_max) {
                    out = count == 0 ? zy : (same ? best : sy_rq_apply(&rq, (int64_t)best - zx));
                } else {
                    int64_t div = st->count_include_pad ? cells : count;
                    if (div <= 0) {
                        out = zy;
                    } else if (st->mode != SY_RQ_ONNX) {
                        /* TFLite: average rounded half away from zero, then rescale */
                        int64_t avg = sum >= 0 ? (sum + div / 2) / div : (sum - div / 2) / div;
                        out = same ? (int32_t)(avg + zy < lo ? lo : (avg + zy > hi ? hi : avg + zy))
                                   : sy_rq_apply(&rq, avg);
                    } else {
                        double v = (double)sum / (double)div * ((double)sx / (double)sy);
                        double r = sy_rq_round_even(v) + zy;
                        out = !(r >= lo) ? lo : (r > hi ? hi : (int32_t)r);
                    }
                }
                sy_q_store(y->data, y->dtype, yb + (size_t)(oh * OW + ow), out);
            }
    }
    return NULL;
}

/* ======================================================================== */
/* lookup-table unary functions                                             */
/* ======================================================================== */

/* the fn list and its math are qk_unary.c's (plugin_sdk/kernels), which
 * riscv_mcu runs too: f is tflk_unary.c's fp32 function */
typedef struct unary_state {
    tflk_unary u;
} unary_state;

static sy_status *unary_read(const sy_node *n, unary_state *st)
{
    char fn[32];
    int32_t which = 0;
    sy_attr_string_or(H, n, "fn", "Identity", fn, sizeof fn);
    if (qk_unary_fn(fn, &st->u, &which))
        return QERR(SY_ERR_INVALID_ARGUMENT, "QUnary: unknown fn \"%s\"", fn);
    tflk_unary *u = &st->u;
    if (which & 1)
        u->alpha = sy_attr_float_or(H, n, "alpha", u->alpha);
    if (which & 2)
        u->beta = sy_attr_float_or(H, n, "beta", u->beta);
    if (which & 4)
        u->beta = sy_attr_float_or(H, n, "gamma", u->beta);
    if (which & 8) {
        u->alpha = sy_attr_float_or(H, n, "min", -INFINITY);
        u->beta = sy_attr_float_or(H, n, "max", INFINITY);
    }
    if (which & 16) {
        char a[16];
        sy_attr_string_or(H, n, "approximate", "none", a, sizeof a);
        if (strcmp(a, "none") && strcmp(a, "tanh"))
            return QERR(SY_ERR_INVALID_ARGUMENT, "QUnary Gelu: approximate must be none or tanh, got \"%s\"", a);
        u->approx = !strcmp(a, "tanh");
    }
    return NULL;
}

static sy_status *infer_unary(sy_node *n)
{
    const sy_tensor *x = q_nin(n, 0), *xs = q_nin(n, 1), *xz = q_nin(n, 2), *ys = q_nin(n, 3), *yz = q_nin(n, 4);
    if (!x || !xs || !ys)
        return QERR(SY_ERR_INVALID_ARGUMENT, "x, x_scale and y_scale are required");
    if (!strcmp(H->node_op(n), "QUnary")) {
        unary_state st;
        SY_TRY(unary_read(n, &st));
    }
    sy_dtype ydt = yz ? yz->dtype : x->dtype;
    SY_TRY(sy_infer_like_input(H, n, 0, 0, ydt));
    SY_TRY(q_check_pair(x, xs, xz, x->dtype, -1));
    return check_out_pair(n, ys, yz, ydt);
}

static sy_status *prepare_unary(sy_node *n, void **state)
{
    unary_state *st = calloc(1, sizeof *st);
    if (!st)
        return QERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *err = unary_read(n, st);
    if (err) {
        free(st);
        return err;
    }
    *state = st;
    return NULL;
}

static sy_status *run_unary(void *state, const sy_kernel_io *io)
{
    const unary_state *st = state;
    const sy_tensor *x = io->inputs[0], *xs = io->inputs[1], *xz = q_in(io, 2), *ys = io->inputs[3],
                    *yz = q_in(io, 4);
    sy_tensor *y = io->outputs[0];
    float sx = q_scale_at(xs, 0), sy = q_scale_at(ys, 0);
    int32_t zx = q_zp_at(xz, 0), zy = q_zp_at(yz, 0), lo, hi, xlo, xhi;
    sy_q_storage_range(y->dtype, &lo, &hi);
    sy_q_storage_range(x->dtype, &xlo, &xhi);
    size_t n = (size_t)sy_tensor_numel(x);
    if (xhi - xlo <= 255) {
        int32_t table[256];
        qk_unary_table(&st->u, sx, zx, xlo, xhi, sy, zy, lo, hi, table);
        for (size_t i = 0; i < n; i++)
            sy_q_store(y->data, y->dtype, i, table[sy_q_load(x->data, x->dtype, i) - xlo]);
    } else {
        for (size_t i = 0; i < n; i++)
            sy_q_store(y->data, y->dtype, i,
                       sy_rq_quantize(tflk_unary_one(&st->u, sy_rq_dequantize(sy_q_load(x->data, x->dtype, i), sx, zx)),
                                      sy, zy, lo, hi));
    }
    return NULL;
}

/* ======================================================================== */
/* softmax                                                                  */
/* ======================================================================== */

static sy_status *prepare_softmax(sy_node *n, void **state)
{
    SY_TRY(prepare_axis(n, state));
    const sy_tensor *x = H->node_input(n, 0);
    H->node_set_scratch(n, (size_t)sy_tensor_numel(x) * sizeof(float) + 64);
    return NULL;
}

static sy_status *run_softmax(void *state, const sy_kernel_io *io)
{
    const axis_state *st = state;
    const sy_tensor *x = io->inputs[0], *xs = io->inputs[1], *xz = q_in(io, 2), *ys = io->inputs[3],
                    *yz = q_in(io, 4);
    sy_tensor *y = io->outputs[0];
    int32_t axis;
    SY_TRY(sy_norm_axis(H, st->axis, x->rank, false, "axis", &axis));
    int64_t outer, len, inner;
    if (st->legacy) {
        outer = sy_dims_prod(x->dims, 0, axis);
        len = sy_dims_prod(x->dims, axis, x->rank);
        inner = 1;
    } else {
        outer = sy_dims_prod(x->dims, 0, axis);
        len = x->dims[axis];
        inner = sy_dims_prod(x->dims, axis + 1, x->rank);
    }
    float sx = q_scale_at(xs, 0), sy = q_scale_at(ys, 0);
    int32_t zx = q_zp_at(xz, 0), zy = q_zp_at(yz, 0), lo, hi;
    sy_q_storage_range(y->dtype, &lo, &hi);
    float *e = io->scratch;
    bool b8 = (x->dtype == SY_DT_INT8 || x->dtype == SY_DT_UINT8) && (y->dtype == SY_DT_INT8 || y->dtype == SY_DT_UINT8);
    if (b8 && sy_tensor_numel(x) <= INT32_MAX) { /* the portable kernel riscv_mcu runs (kernels/qk_softmax.c) */
        qk_softmax p = {(int32_t)outer, (int32_t)len, (int32_t)inner, x->dtype == SY_DT_UINT8 ? QK_U8 : QK_S8,
                        y->dtype == SY_DT_UINT8 ? QK_U8 : QK_S8, zy, lo, hi, sx, sy, st->log};
        qk_softmax_run(&p, x->data, y->data, e);
        return NULL;
    }
    if (st->log)
        return QERR(SY_ERR_UNSUPPORTED, "QLogSoftmax '%s': 8-bit codes only, got %s -> %s", y->name ? y->name : "?",
                    sy_dt_name(x->dtype), sy_dt_name(y->dtype));
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            size_t base = (size_t)(o * len * inner + j);
            int32_t mx = INT32_MIN;
            for (int64_t k = 0; k < len; k++) {
                int32_t v = sy_q_load(x->data, x->dtype, base + (size_t)(k * inner));
                if (v > mx)
                    mx = v;
            }
            float sum = 0.0f;
            for (int64_t k = 0; k < len; k++) {
                int32_t v = sy_q_load(x->data, x->dtype, base + (size_t)(k * inner));
                e[k] = expf((float)(v - mx) * sx);
                sum += e[k];
            }
            (void)zx; /* the zero point cancels in x - max */
            for (int64_t k = 0; k < len; k++)
                sy_q_store(y->data, y->dtype, base + (size_t)(k * inner), sy_rq_quantize(e[k] / sum, sy, zy, lo, hi));
        }
    return NULL;
}

/* ======================================================================== */
/* tables                                                                   */
/* ======================================================================== */

#define A_(name, type) {name, SY_ATTR_##type, false}
/* ======================================================================== */
/* QNorm: DQ(x) -> BatchNormalization / LayerNormalization -> Q              */
/* ======================================================================== */

typedef struct qnorm_state {
    int32_t mode; /* TFLK_NORM_BATCH or TFLK_NORM_LAYER; -1: LpNormalization */
    int64_t axis, p;
    float eps;
} qnorm_state;

/* inputs x, x_scale, x_zp, y_scale, y_zp, then the op's: BatchNormalization
 * scale, B, mean, var; LayerNormalization scale[, B] (fp32 constants) */
static sy_status *prepare_qnorm(sy_node *n, void **state)
{
    char fn[32];
    sy_attr_string_or(H, n, "fn", "", fn, sizeof fn);
    bool bn = !strcmp(fn, "BatchNormalization"), ln = !strcmp(fn, "LayerNormalization");
    bool lp = !strcmp(fn, "LpNormalization");
    const sy_tensor *x = H->node_input(n, 0);
    uint32_t nin = H->node_num_inputs(n);
    if (!bn && !ln && !lp)
        return QERR(SY_ERR_INVALID_ARGUMENT, "QNorm: fn '%s' is not BatchNormalization, LayerNormalization or "
                    "LpNormalization", fn);
    int64_t pn = sy_attr_int_or(H, n, "p", 2);
    if (lp && (nin != 5 || (pn != 1 && pn != 2)))
        return QERR(SY_ERR_UNSUPPORTED, "QNorm LpNormalization: p = 1 or 2 and no parameters");
    if (bn && (sy_attr_int_or(H, n, "training_mode", 0) != 0 || nin != 9 || x->rank < 2))
        return QERR(SY_ERR_UNSUPPORTED, "QNorm BatchNormalization: the inference form, X of rank >= 2 with scale, B, "
                    "mean and var");
    if (ln && (nin < 6 || nin > 7))
        return QERR(SY_ERR_INVALID_ARGUMENT, "QNorm LayerNormalization: scale and an optional B");
    for (uint32_t i = 5; i < nin; i++) {
        const sy_tensor *t = H->node_input(n, i);
        if (t && (t->dtype != SY_DT_FLOAT32 || !t->data))
            return QERR(SY_ERR_TYPE, "QNorm: input %u must be a constant fp32", i);
    }
    qnorm_state *st = calloc(1, sizeof *st);
    if (!st)
        return QERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    st->mode = bn ? TFLK_NORM_BATCH : ln ? TFLK_NORM_LAYER : -1;
    st->axis = sy_attr_int_or(H, n, "axis", -1);
    st->p = pn;
    st->eps = sy_attr_float_or(H, n, "epsilon", 1e-5f);
    *state = st;
    H->node_set_scratch(n, 2 * (size_t)sy_tensor_numel(x) * sizeof(float) + 64);
    return NULL;
}

static sy_status *run_qnorm(void *state, const sy_kernel_io *io)
{
    const qnorm_state *st = state;
    const sy_tensor *x = io->inputs[0], *xs = io->inputs[1], *xz = q_in(io, 2), *ys = io->inputs[3], *yz = q_in(io, 4);
    sy_tensor *y = io->outputs[0];
    bool b8 = (x->dtype == SY_DT_INT8 || x->dtype == SY_DT_UINT8) && (y->dtype == SY_DT_INT8 || y->dtype == SY_DT_UINT8);
    int64_t n = sy_tensor_numel(x);
    if (!b8 || n > INT32_MAX)
        return QERR(SY_ERR_UNSUPPORTED, "QNorm '%s': 8-bit codes and fewer than 2^31 elements only",
                    y->name ? y->name : "?");
    int32_t axis = 0;
    if (st->mode != TFLK_NORM_BATCH)
        SY_TRY(sy_norm_axis(H, st->axis, x->rank, false, "axis", &axis));
    float *f = io->scratch, *g = f + n;
    if (st->mode < 0) { /* LpNormalization: tflk_reduce.c's LPNORM on the dequantized values */
        tflk_axisop ax;
        memset(&ax, 0, sizeof ax);
        ax.op = TFLK_A_LPNORM;
        ax.mode = TFLK_RQ_F32;
        ax.flags = (int32_t)st->p;
        ax.outer = (int32_t)sy_dims_prod(x->dims, 0, axis);
        ax.len = (int32_t)x->dims[axis];
        ax.inner = (int32_t)sy_dims_prod(x->dims, axis + 1, x->rank);
        qk_dequantize_run((size_t)n, x->data, x->dtype == SY_DT_UINT8 ? QK_U8 : QK_S8, q_scale_at(xs, 0),
                          q_zp_at(xz, 0), f);
        tflk_axis_run(&ax, f, g, NULL);
        qk_quantize_run((size_t)n, g, q_scale_at(ys, 0), q_zp_at(yz, 0), y->dtype == SY_DT_UINT8 ? QK_U8 : QK_S8,
                        y->data);
        return NULL;
    }
    const sy_tensor *sc = io->inputs[5], *b = io->n_inputs > 6 ? io->inputs[6] : NULL;
    const sy_tensor *mean = st->mode == TFLK_NORM_BATCH ? io->inputs[7] : NULL;
    const sy_tensor *var = st->mode == TFLK_NORM_BATCH ? io->inputs[8] : NULL;
    tflk_norm p;
    tflk_norm_onnx(&p, st->mode, x->rank, x->dims, axis, (int32_t)sy_tensor_numel(sc),
                   b ? (int32_t)sy_tensor_numel(b) : 0, st->eps);
    int64_t want = st->mode == TFLK_NORM_BATCH ? p.groups : p.inner;
    if ((sy_tensor_numel(sc) != want && sy_tensor_numel(sc) != 1) ||
        (b && sy_tensor_numel(b) != want && sy_tensor_numel(b) != 1) ||
        (st->mode == TFLK_NORM_BATCH && (sy_tensor_numel(sc) != want || !b || sy_tensor_numel(b) != want ||
                                         sy_tensor_numel(mean) != want || sy_tensor_numel(var) != want)))
        return QERR(SY_ERR_SHAPE, "QNorm '%s': the parameters must hold %lld values", y->name ? y->name : "?",
                    (long long)want);
    qk_dequantize_run((size_t)n, x->data, x->dtype == SY_DT_UINT8 ? QK_U8 : QK_S8, q_scale_at(xs, 0), q_zp_at(xz, 0), f);
    tflk_norm_run(&p, f, sc->data, b ? b->data : NULL, mean ? mean->data : NULL, var ? var->data : NULL, g, NULL, NULL);
    qk_quantize_run((size_t)n, g, q_scale_at(ys, 0), q_zp_at(yz, 0), y->dtype == SY_DT_UINT8 ? QK_U8 : QK_S8, y->data);
    return NULL;
}

static const sy_attr_def a_bin[] = {A_("act_min", FLOAT), A_("act_max", FLOAT), A_("requant", STRING)};
static const sy_attr_def a_concat[] = {A_("axis", INT), A_("requant", STRING)};
static const sy_attr_def a_pool[] = {A_("auto_pad", STRING), A_("kernel_shape", INTS), A_("pads", INTS),
                                     A_("strides", INTS),    A_("dilations", INTS),    A_("ceil_mode", INT),
                                     A_("count_include_pad", INT), A_("storage_order", INT), A_("global", INT),
                                     A_("requant", STRING)};
static const sy_attr_def a_unary[] = {A_("fn", STRING),  A_("alpha", FLOAT), A_("beta", FLOAT),
                                      A_("gamma", FLOAT), A_("min", FLOAT),   A_("max", FLOAT),
                                      A_("approximate", STRING)};
static const sy_attr_def a_qnorm[] = {A_("fn", STRING), A_("epsilon", FLOAT), A_("axis", INT),
                                      A_("training_mode", INT), A_("p", INT)};
static const sy_attr_def a_softmax[] = {A_("axis", INT), A_("legacy", INT)};
static const sy_attr_def a_ms_concat[] = {A_("axis", INT)};

#define QSCH(...) QSCH_(__VA_ARGS__)
#define QSCH_(dom, op, mn, mx, attrs, n_attrs, infer)                                                              \
    {sizeof(sy_op_schema), dom, op, 1, mn, mx, 1, 1, attrs, n_attrs, infer, NULL, 0u, 0u, NULL}
#define MS "com.microsoft"

static const sy_op_schema schemas[] = {
    QSCH(SWQ_DOMAIN, "QAdd", 7, 8, SY_ATTRS(a_bin), infer_bin),
    QSCH(SWQ_DOMAIN, "QSub", 7, 8, SY_ATTRS(a_bin), infer_bin),
    QSCH(SWQ_DOMAIN, "QMul", 7, 8, SY_ATTRS(a_bin), infer_bin),
    QSCH(SWQ_DOMAIN, "QPRelu", 7, 8, SY_ATTRS(a_bin), infer_bin),
    QSCH(SWQ_DOMAIN, "QPow", 7, 8, SY_ATTRS(a_bin), infer_bin),
    QSCH(MS, "QLinearAdd", 7, 8, SY_NO_ATTRS, infer_bin),
    QSCH(MS, "QLinearMul", 7, 8, SY_NO_ATTRS, infer_bin),
    QSCH(SWQ_DOMAIN, "QConcat", 5, -1, SY_ATTRS(a_concat), infer_concat),
    QSCH(MS, "QLinearConcat", 5, -1, SY_ATTRS(a_ms_concat), infer_concat),
    QSCH(SWQ_DOMAIN, "QMaxPool", 4, 5, SY_ATTRS(a_pool), infer_pool),
    QSCH(SWQ_DOMAIN, "QAveragePool", 4, 5, SY_ATTRS(a_pool), infer_pool),
    QSCH(SWQ_DOMAIN, "QUnary", 4, 5, SY_ATTRS(a_unary), infer_unary),
    QSCH(SWQ_DOMAIN, "QSoftmax", 4, 5, SY_ATTRS(a_softmax), infer_unary),
    QSCH(SWQ_DOMAIN, "QLogSoftmax", 4, 5, SY_ATTRS(a_softmax), infer_unary),
    QSCH(SWQ_DOMAIN, "QNorm", 5, 9, SY_ATTRS(a_qnorm), infer_unary),
};

#define Q8MASK                                                                                                     \
    (SY_DT_BIT(SY_DT_INT8) | SY_DT_BIT(SY_DT_UINT8) | SY_DT_BIT(SY_DT_INT16) | SY_DT_BIT(SY_DT_UINT16))
#define QK(dom, op, ti, prep, run)                                                                                 \
    {sizeof(sy_kernel_def), dom, op, 1, 0, "cpu_ref", Q8MASK, ti, 0u, NULL, prep, run, sy_release_free, NULL}

static const sy_kernel_def kernels[] = {
    QK(SWQ_DOMAIN, "QAdd", 0, prepare_bin, run_bin),
    QK(SWQ_DOMAIN, "QSub", 0, prepare_bin, run_bin),
    QK(SWQ_DOMAIN, "QMul", 0, prepare_bin, run_bin),
    QK(SWQ_DOMAIN, "QPRelu", 0, prepare_bin, run_bin),
    QK(SWQ_DOMAIN, "QPow", 0, prepare_bin, run_bin),
    QK(MS, "QLinearAdd", 0, prepare_bin, run_bin),
    QK(MS, "QLinearMul", 0, prepare_bin, run_bin),
    QK(SWQ_DOMAIN, "QConcat", 2, prepare_axis, run_concat),
    QK(MS, "QLinearConcat", 2, prepare_axis, run_concat),
    QK(SWQ_DOMAIN, "QMaxPool", 0, prepare_pool, run_pool),
    QK(SWQ_DOMAIN, "QAveragePool", 0, prepare_pool, run_pool),
    QK(SWQ_DOMAIN, "QUnary", 0, prepare_unary, run_unary),
    QK(SWQ_DOMAIN, "QSoftmax", 0, prepare_softmax, run_softmax),
    QK(SWQ_DOMAIN, "QLogSoftmax", 0, prepare_softmax, run_softmax),
    QK(SWQ_DOMAIN, "QNorm", 0, prepare_qnorm, run_qnorm),
};

void q_tables_elem(const sy_op_schema **s, uint32_t *ns, const sy_kernel_def **k, uint32_t *nk)
{
    *s = schemas;
    *ns = SY_COUNT_OF(schemas);
    *k = kernels;
    *nk = SY_COUNT_OF(kernels);
}
