/*
 * riscv_mcu: the reduction family of ops-mcu.md on tflk_reduce.c, which
 * cpu_ref's TFLite kernels run too (the package ships the same file):
 *
 *   TFLite (Table A)  MEAN SUM REDUCE_MAX REDUCE_MIN REDUCE_PROD (fp32, int8
 *                     in TFLite's integer arithmetic), ARG_MAX ARG_MIN
 *                     (fp32), CUMSUM, TOPK_V2, L2_NORMALIZATION (fp32, int8)
 *   ONNX (Table B)    ReduceMax ReduceMin ReduceSum ReduceSumSquare
 *                     ReduceMean ReduceL1 ReduceL2 ReduceProd CumSum TopK
 *                     (fp32, int8), ReduceLogSum ReduceLogSumExp ArgMax
 *                     ArgMin Hardmax LpNormalization (fp32)
 *
 * ONNX on int8: an ONNX int8 tensor has no scale (a quantized model's
 * scales live in QuantizeLinear/DequantizeLinear, which the QDQ pass folds
 * only into switchyard.quant's conv/matmul/add/pool ops), so ReduceMax,
 * ReduceMin and TopK compare the codes and the arithmetic reductions and
 * CumSum compute in the integer type as ONNX defines them for int8 and as
 * the host reference (ops_reduce) does: an int64 accumulator whose result
 * keeps its low 8 bits, ReduceMean the truncated quotient, ReduceL2 the
 * truncated root (tflk.h: TFLK_RQ_RAW8). The rules are the rows' own, each
 * decline quoting its row; what the kernel cannot do (more than 6 kept or
 * reduced dims after merging neighbours) is declined with the builder's
 * message.
 */
#include "mcu.h"

#include "tfl_reduce.h"

#define H mcu_H

typedef struct red_row {
    const char *op;
    bool onnx;
    int32_t kind; /* TFLK_R_* of a reduction, -1 for the axis ops */
    const char *row;
} red_row;

static const red_row rows[] = {
    {"REDUCE_MAX", false, TFLK_R_MAX, "#46 ReduceMax"},
    {"REDUCE_MIN", false, TFLK_R_MIN, "#47 ReduceMin"},
    {"SUM", false, TFLK_R_SUM, "#48 Sum"},
    {"MEAN", false, TFLK_R_MEAN, "#49 Mean"},
    {"REDUCE_PROD", false, TFLK_R_PROD, "#84 ReduceProd"},
    {"ARG_MAX", false, -1, "#43 ArgMax"},
    {"ARG_MIN", false, -1, "#44 ArgMin"},
    {"CUMSUM", false, -1, "#54 CumSum"},
    {"TOPK_V2", false, -1, "#75 TopK"},
    {"L2_NORMALIZATION", false, -1, "#38 L2Normalization"},
    {"ReduceMax", true, TFLK_R_MAX, "#49 ReduceMax"},
    {"ReduceMin", true, TFLK_R_MIN, "#50 ReduceMin"},
    {"ReduceSum", true, TFLK_R_SUM, "#51 ReduceSum"},
    {"ReduceSumSquare", true, TFLK_R_SUMSQ, "#52 ReduceSumSquare"},
    {"ReduceMean", true, TFLK_R_MEAN, "#53 ReduceMean"},
    {"ReduceL1", true, TFLK_R_L1, "#54 ReduceL1"},
    {"ReduceL2", true, TFLK_R_L2, "#55 ReduceL2"},
    {"ReduceLogSum", true, TFLK_R_LOGSUM, "#76 ReduceLogSum"},
    {"ReduceLogSumExp", true, TFLK_R_LOGSUMEXP, "#77 ReduceLogSumExp"},
    {"ReduceProd", true, TFLK_R_PROD, "#102 ReduceProd"},
    {"ArgMax", true, -1, "#43 ArgMax"},
    {"ArgMin", true, -1, "#44 ArgMin"},
    {"CumSum", true, -1, "#58 CumSum"},
    {"TopK", true, -1, "#92 TopK"},
    {"Hardmax", true, -1, "#103 Hardmax"},
    {"LpNormalization", true, -1, "#38 LpNormalization"},
};

static const red_row *row_of(const sy_node *n)
{
    const char *dom = H->node_domain(n), *op = H->node_op(n);
    bool onnx = !dom || !*dom || !strcmp(dom, "ai.onnx");
    if (!onnx && strcmp(dom, TFL_DOMAIN))
        return NULL;
    for (size_t i = 0; i < SY_COUNT_OF(rows); i++)
        if (rows[i].onnx == onnx && !strcmp(op, rows[i].op))
            return &rows[i];
    return NULL;
}

bool mcu_reduce_has(const sy_node *n) { return row_of(n) != NULL; }

static const sy_tensor *in_at(const sy_node *n, uint32_t i)
{
    return i < H->node_num_inputs(n) ? H->node_input(n, i) : NULL;
}

/* ---- ONNX parameters ------------------------------------------------------- */

/* the opset where axes became an input (ReduceSum 13, the others 18) */
static int64_t axes_input_since(const char *op) { return !strcmp(op, "ReduceSum") ? 13 : 18; }

/* the axes as given: *cnt -1 when absent; *known false when the input is not a constant */
static sy_status *onnx_axes(const sy_node *n, int64_t *axes, int64_t *cnt, bool *known)
{
    const char *op = H->node_op(n);
    *known = true;
    *cnt = -1;
    if (H->node_opset(n) < axes_input_since(op)) {
        if (sy_attr_has(H, n, "axes", SY_ATTR_INTS))
            *cnt = sy_attr_ints_copy(H, n, "axes", axes, SY_MAX_RANK + 1);
    } else {
        const sy_tensor *at = in_at(n, 1);
        if (at && !at->data) {
            *known = false;
            return NULL;
        }
        if (at)
            *cnt = sy_tensor_read_ints(at, axes, SY_MAX_RANK + 1);
    }
    if (*cnt > SY_MAX_RANK)
        return H->status_new(SY_ERR_SHAPE, "%s: more than %d axes", op, SY_MAX_RANK);
    return NULL;
}

/* the mask of reduced dims; *noop: noop_with_empty_axes with no axes */
static sy_status *onnx_mask(const sy_node *n, const sy_tensor *x, uint32_t *mask, bool *noop)
{
    int64_t axes[SY_MAX_RANK + 1] = {0}, cnt = -1;
    bool known = true;
    SY_TRY(onnx_axes(n, axes, &cnt, &known));
    if (!known)
        return H->status_new(SY_ERR_DYNAMIC_SHAPE, "%s: axes must be a constant", H->node_op(n));
    *noop = false;
    *mask = 0;
    if (cnt <= 0) {
        *noop = sy_attr_int_or(H, n, "noop_with_empty_axes", 0) != 0 && H->node_opset(n) >= axes_input_since(H->node_op(n));
        *mask = x->rank >= 32 ? ~0u : (1u << x->rank) - 1u;
        return NULL;
    }
    for (int64_t i = 0; i < cnt; i++) {
        int32_t a;
        SY_TRY(sy_norm_axis(H, axes[i], x->rank, false, "axes", &a));
        *mask |= 1u << a;
    }
    return NULL;
}

/* k: the kind and parameters of an ONNX node */
static sy_status *onnx_build(const sy_node *n, const red_row *r, mcu_node *k)
{
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_output(n, 0);
    const char *op = r->op;
    bool i8 = x->dtype == SY_DT_INT8;
    if (x->dtype != SY_DT_FLOAT32 && x->dtype != SY_DT_INT8)
        return H->status_new(SY_ERR_TYPE, "%s: the MCU kernel takes fp32 or int8, got %s", op, sy_dt_name(x->dtype));
    if (r->kind >= 0) {
        uint32_t mask = 0;
        bool noop = false;
        SY_TRY(onnx_mask(n, x, &mask, &noop));
        if (noop) {
            k->kind = MK_COPY; /* the input unchanged */
            return NULL;
        }
        k->kind = MK_REDUCE;
        tflk_reduce *p = &k->u.red;
        memset(p, 0, sizeof *p);
        p->kind = r->kind;
        p->onnx = 1;
        p->mode = i8 ? TFLK_RQ_RAW8 : TFLK_RQ_F32;
        if (x->rank > 32 || tflk_reduce_plan(p, x->rank, x->dims, mask))
            return H->status_new(SY_ERR_UNSUPPORTED, "%s: input '%s' needs more than %d kept or reduced dims, or has "
                                 "more than 2^31 - 1 elements", op, x->name ? x->name : "", TFLK_BIN_RANK);
        return NULL;
    }
    k->kind = MK_AXIS;
    tflk_axisop *p = &k->u.ax;
    memset(p, 0, sizeof *p);
    p->mode = i8 ? TFLK_RQ_RAW8 : TFLK_RQ_F32;
    int32_t axis = 0;
    if (!strcmp(op, "ArgMax") || !strcmp(op, "ArgMin")) {
        p->op = op[4] == 'a' ? TFLK_A_ARGMAX : TFLK_A_ARGMIN;
        SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", 0), x->rank, false, "axis", &axis));
        p->flags = sy_attr_int_or(H, n, "select_last_index", 0) != 0;
        if (i8 || (y->dtype != SY_DT_INT64 && y->dtype != SY_DT_INT32))
            return H->status_new(SY_ERR_TYPE, "%s: fp32 in, int64 or int32 out", op);
        p->idx64 = y->dtype == SY_DT_INT64;
    } else if (!strcmp(op, "CumSum")) {
        p->op = TFLK_A_CUMSUM;
        SY_TRY(tfl_const_axis(H, n, x, 1, &axis));
        p->flags = (sy_attr_int_or(H, n, "exclusive", 0) != 0) | (sy_attr_int_or(H, n, "reverse", 0) != 0) << 1;
    } else if (!strcmp(op, "TopK")) {
        p->op = TFLK_A_TOPK;
        SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", -1), x->rank, false, "axis", &axis));
        p->flags = sy_attr_int_or(H, n, "largest", 1) == 0;
        p->k = (int32_t)y->dims[axis];
        p->esize = (int32_t)sy_dt_size(x->dtype);
        const sy_tensor *yi = H->node_num_outputs(n) > 1 ? H->node_output(n, 1) : NULL;
        p->idx64 = !yi || yi->dtype == SY_DT_INT64;
    } else if (!strcmp(op, "Hardmax")) {
        p->op = TFLK_A_HARDMAX;
        bool flat = H->node_opset(n) < 13; /* before 13: the input as 2-D [prod(dims[:axis]), prod(dims[axis:])] */
        SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", flat ? 1 : -1), x->rank, false, "axis", &axis));
        if (i8)
            return H->status_new(SY_ERR_TYPE, "Hardmax: fp32 only");
        SY_TRY(tfl_axis_split(H, n, x, axis, p));
        if (flat) {
            p->len *= p->inner;
            p->inner = 1;
        }
        return NULL;
    } else { /* LpNormalization */
        p->op = TFLK_A_LPNORM;
        SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", -1), x->rank, false, "axis", &axis));
        p->flags = (int32_t)sy_attr_int_or(H, n, "p", 2);
        if (i8 || (p->flags != 1 && p->flags != 2))
            return H->status_new(SY_ERR_UNSUPPORTED, "LpNormalization: fp32 with p = 1 or 2");
    }
    return tfl_axis_split(H, n, x, axis, p);
}

sy_status *mcu_reduce_prepare(sy_node *n, mcu_node *k)
{
    const red_row *r = row_of(n);
    if (!r)
        return H->status_new(SY_ERR_INTERNAL, "%s: not a reduction row", H->node_op(n));
    if (r->onnx)
        return onnx_build(n, r, k);
    if (r->kind >= 0) {
        k->kind = MK_REDUCE;
        return tfl_build_reduce(H, n, &k->u.red);
    }
    k->kind = MK_AXIS;
    return tfl_build_axisop(H, n, &k->u.ax);
}

sy_status *mcu_reduce_run(const mcu_node *k, const sy_kernel_io *io)
{
    const void *x = io->inputs[0]->data;
    void *y = io->outputs[0]->data;
    if (k->kind == MK_REDUCE)
        tflk_reduce_run(&k->u.red, x, y);
    else
        tflk_axis_run(&k->u.ax, x, y, io->n_outputs > 1 && io->outputs[1] ? io->outputs[1]->data : NULL);
    return NULL;
}

/* ---- the rules ---------------------------------------------------------- */

static bool rdecline(sy_claim *c, sy_reason r, const char *fmt, ...) SY_PRINTF(3, 4);
static bool rdecline(sy_claim *c, sy_reason r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    c->take = false;
    c->reason = r;
    vsnprintf(c->text, sizeof c->text, fmt, ap);
    va_end(ap);
    return false;
}

static const char *tname(const sy_tensor *t) { return t && t->name ? t->name : ""; }

/* rank in [lo, hi] (the row's "2-4D"); TFLite rows relax it under rules = tflm */
static bool rank_ok(const mcu_cfg *cfg, const red_row *r, const sy_tensor *t, int32_t lo, int32_t hi, sy_claim *c)
{
    if (!t || (t->rank >= lo && t->rank <= hi) || (!r->onnx && cfg->rules == MCU_RULES_TFLM))
        return true;
    return rdecline(c, SY_REASON_RANK, "%s: input '%s' must be %d-%dD, got rank %d (ops-mcu.md Table %s %s%s)", r->op,
                    tname(t), lo, hi, t->rank, r->onnx ? "B" : "A", r->row,
                    r->onnx ? "" : "; rules = tflm accepts any rank as TFLite Micro does");
}

static bool dtype_ok(const red_row *r, const sy_tensor *x, bool fp32_only, sy_claim *c)
{
    if (x && (x->dtype == SY_DT_FLOAT32 || (!fp32_only && x->dtype == SY_DT_INT8)))
        return true;
    const char *name = strchr(r->row, ' '); /* "#43 ArgMax": the number, then the seed's name */
    return rdecline(c, SY_REASON_DTYPE, "%s (%s): input '%s' is %s: %s (ops-mcu.md Table %s %.*s)", r->op,
                    name ? name + 1 : r->row, tname(x), x ? sy_dt_name(x->dtype) : "absent",
                    fp32_only ? "float only, no int8" : "fp32 and int8 only", r->onnx ? "B" : "A",
                    (int)(name ? (size_t)(name - r->row) : strlen(r->row)), r->row);
}

/* the TFLite reductions: axes a constant, non-empty list in [-rank, rank) */
static bool tfl_axes_ok(const red_row *r, const sy_node *n, const sy_tensor *x, sy_claim *c)
{
    const sy_tensor *at = in_at(n, 1);
    if (!at || !at->data)
        return rdecline(c, SY_REASON_ATTRIBUTE, "%s: axes must be a constant (ops-mcu.md Table A %s)", r->op, r->row);
    int64_t cnt = sy_tensor_numel(at);
    if (cnt == 0 && r->kind != TFLK_R_PROD)
        return rdecline(c, SY_REASON_ATTRIBUTE, "%s: an empty axes list is not supported (ops-mcu.md Table A %s)",
                        r->op, r->row);
    for (int64_t i = 0; i < cnt; i++) {
        int64_t a = sy_load_i64(at->data, at->dtype, (size_t)i);
        if (a < -(int64_t)x->rank || a >= x->rank)
            return rdecline(c, SY_REASON_ATTRIBUTE, "%s: axes element %lld is outside [-%d, %d) (ops-mcu.md Table A %s)",
                            r->op, (long long)a, x->rank, x->rank, r->row);
    }
    return true;
}

static bool tfl_rules(const mcu_cfg *cfg, const red_row *r, const sy_node *n, sy_claim *c)
{
    const sy_tensor *x = in_at(n, 0), *y = H->node_num_outputs(n) ? H->node_output(n, 0) : NULL;
    const char *op = r->op;
    if (r->kind >= 0)
        return dtype_ok(r, x, false, c) && rank_ok(cfg, r, x, 2, 4, c) && tfl_axes_ok(r, n, x, c);
    if (!strcmp(op, "ARG_MAX") || !strcmp(op, "ARG_MIN")) {
        if (!dtype_ok(r, x, true, c) || !rank_ok(cfg, r, x, 2, 4, c))
            return false;
        if (!in_at(n, 1) || !in_at(n, 1)->data)
            return rdecline(c, SY_REASON_ATTRIBUTE, "%s: dim must be a constant (ops-mcu.md Table A %s)", op, r->row);
        if (y && y->dtype != SY_DT_INT32 && (cfg->rules == MCU_RULES_SEED || y->dtype != SY_DT_INT64))
            return rdecline(c, SY_REASON_DTYPE, "%s: output_type must be tf.int32, got %s (ops-mcu.md Table A %s; "
                            "rules = tflm also takes int64)", op, sy_dt_name(y->dtype), r->row);
        return true;
    }
    if (!strcmp(op, "CUMSUM")) {
        const sy_tensor *at = in_at(n, 1);
        if (!dtype_ok(r, x, false, c) || !rank_ok(cfg, r, x, 1, 4, c))
            return false;
        if (!at || !at->data || (at->dtype != SY_DT_INT32 && at->dtype != SY_DT_INT64))
            return rdecline(c, SY_REASON_ATTRIBUTE, "CUMSUM: axis must be a constant int32 or int64 scalar (ops-mcu.md "
                            "Table A %s)", r->row);
        return true;
    }
    if (!strcmp(op, "TOPK_V2")) {
        const sy_tensor *kt = in_at(n, 1);
        if (!dtype_ok(r, x, false, c))
            return false;
        if (!kt || !kt->data || kt->dtype != SY_DT_INT32)
            return rdecline(c, SY_REASON_ATTRIBUTE, "TOPK_V2: k must be a constant int32 scalar (ops-mcu.md Table A %s)",
                            r->row);
        float sa, sb;
        int32_t za, zb;
        if (x->dtype == SY_DT_INT8 && y &&
            !(tfl_qparams(x, &sa, &za) && tfl_qparams(y, &sb, &zb) && sa == sb && za == zb))
            return rdecline(c, SY_REASON_ATTRIBUTE, "TOPK_V2: int8 input and values must share one per-tensor "
                            "quantization (the op copies codes)");
        return true;
    }
    /* L2_NORMALIZATION */
    char act[32];
    sy_attr_string_or(H, n, "fused_activation_function", "NONE", act, sizeof act);
    if (strcmp(act, "NONE") && strcmp(act, "RELU") && strcmp(act, "RELU6"))
        return rdecline(c, SY_REASON_ATTRIBUTE, "L2_NORMALIZATION: fused_activation_function must be NONE, RELU or "
                        "RELU6, got %s (ops-mcu.md Table A %s)", act, r->row);
    return dtype_ok(r, x, false, c) && rank_ok(cfg, r, x, 2, 4, c) && rank_ok(cfg, r, y, 2, 4, c);
}

static bool onnx_rules(const mcu_cfg *cfg, const red_row *r, const sy_node *n, sy_claim *c)
{
    const sy_tensor *x = in_at(n, 0);
    const char *op = r->op;
    if (r->kind >= 0) {
        bool fp32_only = r->kind == TFLK_R_LOGSUM || r->kind == TFLK_R_LOGSUMEXP;
        bool sumsq = r->kind == TFLK_R_SUMSQ, prod = r->kind == TFLK_R_PROD;
        if (!dtype_ok(r, x, fp32_only, c) || (!sumsq && !rank_ok(cfg, r, x, 2, 4, c)))
            return false;
        int64_t axes[SY_MAX_RANK + 1] = {0}, cnt = -1;
        bool known = true;
        sy_status *st = onnx_axes(n, axes, &cnt, &known);
        if (st) {
            H->status_free(st);
            cnt = SY_MAX_RANK + 1;
        }
        if (!known)
            return rdecline(c, SY_REASON_ATTRIBUTE, "%s: axes must be a constant (ops-mcu.md Table B %s)", op, r->row);
        /* the rows that forbid an empty list: Max Min Sum Mean LogSum LogSumExp */
        bool empty_ok = sumsq || prod || r->kind == TFLK_R_L1 || r->kind == TFLK_R_L2;
        if (cnt <= 0 && !empty_ok)
            return rdecline(c, SY_REASON_ATTRIBUTE, "%s: axes absent or empty (reduce all) is not supported (ops-mcu.md "
                            "Table B %s)", op, r->row);
        bool noop_cfg = sumsq || prod; /* the other rows: noop_with_empty_axes not configurable */
        if (!noop_cfg && sy_attr_int_or(H, n, "noop_with_empty_axes", 0) != 0)
            return rdecline(c, SY_REASON_ATTRIBUTE, "%s: noop_with_empty_axes is not configurable (ops-mcu.md Table B %s)",
                            op, r->row);
        uint32_t seen = 0;
        for (int64_t i = 0; i < cnt; i++) {
            int64_t a = axes[i] < 0 ? axes[i] + x->rank : axes[i];
            if (axes[i] < -(int64_t)x->rank || axes[i] >= x->rank || (sumsq && ((seen >> a) & 1u)))
                return rdecline(c, SY_REASON_ATTRIBUTE, "%s: axes must be in [-rank, rank)%s, got %lld (ops-mcu.md Table "
                                "B %s)", op, sumsq ? " without duplicates" : "", (long long)axes[i], r->row);
            seen |= 1u << a;
        }
        return true;
    }
    if (!strcmp(op, "ArgMax") || !strcmp(op, "ArgMin"))
        return dtype_ok(r, x, true, c) && rank_ok(cfg, r, x, 2, 4, c);
    if (!strcmp(op, "Hardmax"))
        return dtype_ok(r, x, true, c);
    if (!strcmp(op, "LpNormalization")) {
        int64_t p = sy_attr_int_or(H, n, "p", 2);
        if (!dtype_ok(r, x, true, c) || !rank_ok(cfg, r, x, 2, 4, c))
            return false;
        if (p != 1 && p != 2)
            return rdecline(c, SY_REASON_ATTRIBUTE, "LpNormalization: p must be 1 or 2, got %lld (ops-mcu.md Table B %s)",
                            (long long)p, r->row);
        return true;
    }
    if (!strcmp(op, "CumSum")) {
        const sy_tensor *at = in_at(n, 1);
        if (!dtype_ok(r, x, false, c) || !rank_ok(cfg, r, x, 1, 4, c))
            return false;
        if (!at || !at->data || (at->dtype != SY_DT_INT32 && at->dtype != SY_DT_INT64))
            return rdecline(c, SY_REASON_ATTRIBUTE, "CumSum: axis must be a constant int32 or int64 scalar (ops-mcu.md "
                            "Table B %s)", r->row);
        return true;
    }
    /* TopK: X no int64 (the MCU: fp32 or int8), K a constant */
    if (!dtype_ok(r, x, false, c))
        return false;
    if (H->node_opset(n) >= 10 && (!in_at(n, 1) || !in_at(n, 1)->data))
        return rdecline(c, SY_REASON_ATTRIBUTE, "TopK: K must be a constant on the MCU (ops-mcu.md Table B %s)", r->row);
    return true;
}

bool mcu_reduce_check(const mcu_cfg *cfg, const sy_node *n, sy_claim *c)
{
    const red_row *r = row_of(n);
    if (!r)
        return rdecline(c, SY_REASON_OP_UNSUPPORTED, "%s: not a reduction row", H->node_op(n));
    if (!H->node_num_inputs(n) || !H->node_num_outputs(n) || !in_at(n, 0))
        return rdecline(c, SY_REASON_ATTRIBUTE, "%s: an input and an output are required", r->op);
    if (!(r->onnx ? onnx_rules(cfg, r, n, c) : tfl_rules(cfg, r, n, c)))
        return false;
    /* what the kernel cannot do: the builder's refusal */
    mcu_node *k = calloc(1, sizeof *k);
    if (!k)
        return rdecline(c, SY_REASON_MEMORY, "%s: out of memory", r->op);
    sy_status *st = r->onnx ? onnx_build(n, r, k)
                    : r->kind >= 0 ? tfl_build_reduce(H, n, &k->u.red)
                                   : tfl_build_axisop(H, n, &k->u.ax);
    free(k);
    if (st) {
        rdecline(c, SY_REASON_NO_KERNEL, "%s", H->status_message(st));
        H->status_free(st);
        return false;
    }
    return true;
}
