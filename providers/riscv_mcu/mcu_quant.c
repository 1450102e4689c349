/*
 * riscv_mcu: the ONNX path to the MCU. `switchyard quantize` writes a QDQ
 * model; the core's QDQ pass folds it into switchyard.quant QConv, QConvTranspose,
 * QMaxPool, QAveragePool, QMatMul, QAdd, QSub, QMul, QConcat, QUnary, QSoftmax,
 * QRNN between an ONNX QuantizeLinear and
 * DequantizeLinear. This file checks those nodes for the MCU, builds the
 * parameters of the portable integer kernels (plugin_sdk/kernels/qk.c:
 * NCHW, int8 activations, per-tensor or per-channel weights) with the same
 * requantizers ops_quant uses (sy_rq_init, q_mult3, the bias quantization,
 * the folded activation clamp), and runs them on the host. ONNX's own
 * QLinearConv / QLinearMatMul (the inputs of QConv / QMatMul) and
 * MatMulInteger / ConvInteger (int32 outputs) run on the same kernels under
 * Table B's rules (#106, #87, #86, #105).
 */
#include "mcu.h"
#include "qk_unary.h"

#include <math.h>

#define H mcu_H
#define SWQ "switchyard.quant"

static const sy_tensor *qin(const sy_node *n, uint32_t i)
{
    return i < H->node_num_inputs(n) ? H->node_input(n, i) : NULL;
}

static bool is_onnx(const char *dom) { return !dom || !*dom || !strcmp(dom, "ai.onnx"); }

/* ONNX's integer operators on the same kernels: 0 none, else which */
enum { OQ_NONE, OQ_QLCONV, OQ_QLMM, OQ_MMI, OQ_CONVI };
static int onnx_int_op(const sy_node *n)
{
    const char *op = H->node_op(n);
    if (!is_onnx(H->node_domain(n)))
        return OQ_NONE;
    return !strcmp(op, "QLinearConv")     ? OQ_QLCONV
           : !strcmp(op, "QLinearMatMul") ? OQ_QLMM
           : !strcmp(op, "MatMulInteger") ? OQ_MMI
           : !strcmp(op, "ConvInteger")   ? OQ_CONVI
                                          : OQ_NONE;
}

bool mcu_quant_domain(const sy_node *n)
{
    const char *op = H->node_op(n), *dom = H->node_domain(n);
    if (dom && !strcmp(dom, SWQ))
        return true;
    return is_onnx(dom) && (!strcmp(op, "QuantizeLinear") || !strcmp(op, "DequantizeLinear") || !strcmp(op, "Reshape") ||
                            onnx_int_op(n) != OQ_NONE);
}

bool mcu_quant_takes_u8(const sy_node *n)
{
    int o = onnx_int_op(n);
    return o == OQ_MMI || o == OQ_CONVI;
}

static int64_t numel(const sy_tensor *t) { return t ? sy_tensor_numel(t) : 0; }

static int32_t zp_at(const sy_tensor *z, int64_t i);

/* How qk_add_run reads b for the output y: 0 when b has y's elements or
 * one (index i, or i % nb), the block length (b's index (i / block) % nb)
 * when b's dims, right-aligned to y's, are 1 except one run equal to y's
 * (a per-channel [C, 1, 1] of NCHW), -1 otherwise */
static int64_t block_bcast(const sy_tensor *b, const sy_tensor *y)
{
    if (!b || !y || b->rank > y->rank)
        return -1;
    if (numel(b) == numel(y) && sy_shape_equal(b->rank, b->dims, y->rank, y->dims))
        return 0;
    if (numel(b) == 1)
        return 0;
    int32_t off = y->rank - b->rank, first = -1, last = -1;
    for (int32_t d = 0; d < b->rank; d++)
        if (b->dims[d] != 1) {
            if (first < 0)
                first = d;
            last = d;
        }
    for (int32_t d = first; d <= last; d++)
        if (b->dims[d] != y->dims[d + off])
            return -1;
    int64_t block = sy_dims_prod(y->dims, last + off + 1, y->rank);
    return block > INT32_MAX || numel(y) > INT32_MAX ? -1 : block;
}

/* t's element strides on y's axes right-aligned to 4 (0 where t is
 * broadcast: its dim 1 or absent), for qk_add_bc; false unless t
 * broadcasts to y (numpy rules) with y at most 4-D and under 2^31 elements */
static bool bcast_strides(const sy_tensor *t, const sy_tensor *y, int32_t st[4])
{
    if (!t || !y || t->rank > y->rank || y->rank > 4 || numel(y) > INT32_MAX)
        return false;
    int64_t s = 1;
    for (int32_t d = 3; d >= 0; d--) {
        const int32_t dy = d - (4 - y->rank), dt = d - (4 - t->rank);
        const int64_t ny = dy >= 0 ? y->dims[dy] : 1, nt = dt >= 0 ? t->dims[dt] : 1;
        if (nt != ny && nt != 1)
            return false;
        if (st)
            st[d] = nt == 1 ? 0 : (int32_t)s;
        s *= nt;
    }
    return true;
}

/* scale/zero-point inputs [from, from+count) must be constants; scales float32 */
static bool const_params(const sy_node *n, const uint32_t *idx, uint32_t cnt, sy_claim *c)
{
    const char *op = H->node_op(n);
    for (uint32_t i = 0; i < cnt; i++) {
        const sy_tensor *t = qin(n, idx[i]);
        if (t && !t->data) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: quantization parameter '%s' must be a constant on the MCU", op,
                     t->name ? t->name : "");
            return false;
        }
        if (t && t->dtype != SY_DT_FLOAT32 && t->dtype != SY_DT_INT8 && t->dtype != SY_DT_UINT8 &&
            t->dtype != SY_DT_INT32) {
            mcu_decline(c, SY_REASON_DTYPE, "%s: quantization parameter '%s' is %s; the MCU takes float32 scales", op,
                     t->name ? t->name : "", sy_dt_name(t->dtype));
            return false;
        }
    }
    return true;
}

static bool i8act(const sy_node *n, const sy_tensor *t, sy_claim *c)
{
    if (t && t->dtype != SY_DT_INT8) {
        mcu_decline(c, SY_REASON_DTYPE, "%s: activation '%s' is %s; the MCU integer kernels take int8", H->node_op(n),
                 t->name ? t->name : "", sy_dt_name(t->dtype));
        return false;
    }
    return true;
}

/* ops-mcu.md Table B's window rules, which the quantized forms inherit
 * from the ONNX op the QDQ pass folded: Conv (#1, seed L5697) group = 1
 * only; MaxPool (#3, seed L6007) dilations = 1, ceil_mode floor, no Indices
 * output, storage_order = 0. (Conv's "auto_pad = NOTSET only" is a
 * converter's input rule: SAME_* resolves to explicit pads with the same
 * result, so it is no reason to refuse the node.) */
static bool table_b_window(const sy_node *n, bool conv, sy_claim *c)
{
    if (conv) {
        int64_t g = sy_attr_int_or(H, n, "group", 1);
        if (g != 1) {
            /* the seed's own words (its Conv table, L5697; the group row, L5785) */
            mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: group must be 1, got %lld (ops-mcu.md Table B #1 Conv; seed 001 "
                     "L5785, Conv group: \"规格约束：仅支持输入为1的情况\", only a group of 1)", H->node_op(n), (long long)g);
            return false;
        }
        return true;
    }
    int64_t d[2] = {1, 1};
    sy_attr_ints_copy(H, n, "dilations", d, 2);
    if (d[0] != 1 || d[1] != 1) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: dilations must be 1, got [%lld, %lld] (ops-mcu.md Table B #3 MaxPool, "
                 "seed L6007)", H->node_op(n), (long long)d[0], (long long)d[1]);
        return false;
    }
    if (sy_attr_int_or(H, n, "ceil_mode", 0) || sy_attr_int_or(H, n, "storage_order", 0) ||
        H->node_num_outputs(n) > 1) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: ceil_mode floor, storage_order 0 and no Indices output only "
                 "(ops-mcu.md Table B #3 MaxPool, seed L6007)", H->node_op(n));
        return false;
    }
    return true;
}

/* QUnary's fn and attributes as ops_quant reads them (qelem.c, unary_read) */
static bool qunary_fn(const sy_node *n, tflk_unary *u, char *fn, size_t len)
{
    int32_t which = 0;
    sy_attr_string_or(H, n, "fn", "Identity", fn, len);
    if (qk_unary_fn(fn, u, &which))
        return false;
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
            return false;
        u->approx = !strcmp(a, "tanh");
    }
    return true;
}

/* a constant quantization parameter of `count` elements (0: any of 1 or `alt`) and dtype dt */
static bool qparam(const sy_node *n, uint32_t i, bool required, sy_dtype dt, int64_t count, int64_t alt,
                   const char *what, const char *row, sy_claim *c)
{
    const sy_tensor *t = qin(n, i);
    if (!t) {
        if (!required)
            return true;
        mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: %s is required (%s)", H->node_op(n), what, row);
        return false;
    }
    if (!t->data) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: %s '%s' must be a constant (%s: all scales and zero points known at "
                 "conversion time)", H->node_op(n), what, t->name ? t->name : "", row);
        return false;
    }
    if (t->dtype != dt) {
        mcu_decline(c, SY_REASON_DTYPE, "%s: %s is %s, expected %s (%s)", H->node_op(n), what, sy_dt_name(t->dtype),
                 sy_dt_name(dt), row);
        return false;
    }
    int64_t e = numel(t);
    if (e != count && e != alt) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: %s has %lld elements; %lld%s%s expected (%s)", H->node_op(n), what,
                 (long long)e, (long long)count, alt != count ? " or " : "", alt != count ? "per channel" : "", row);
        return false;
    }
    if (dt == SY_DT_FLOAT32)
        for (int64_t k = 0; k < e; k++) {
            float v = ((const float *)t->data)[k];
            if (!(v > 0.0f) || !isfinite(v)) {
                mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: %s must be finite and positive, got %g (%s)", H->node_op(n), what,
                         (double)v, row);
                return false;
            }
        }
    return true;
}

/* QLinearConv, QLinearMatMul, MatMulInteger, ConvInteger: Table B's rows #106, #87, #86, #105 */
static bool check_onnx_int(const sy_node *n, int which, const sy_tensor *x, const sy_tensor *y, sy_claim *c)
{
    const char *op = H->node_op(n);
    bool conv = which == OQ_QLCONV || which == OQ_CONVI, ql = which == OQ_QLCONV || which == OQ_QLMM;
    const char *row = which == OQ_QLCONV ? "ops-mcu.md Table B #106 QLinearConv"
                      : which == OQ_QLMM ? "ops-mcu.md Table B #87 QLinearMatMul"
                      : which == OQ_MMI  ? "ops-mcu.md Table B #86 MatMulInteger"
                                         : "ops-mcu.md Table B #105 ConvInteger";
    const sy_tensor *w = qin(n, ql ? 3 : 1);
    if (!w) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: the second operand is missing", op);
        return false;
    }
    /* dtypes */
    sy_dtype xd = x->dtype, wd = w->dtype, ydt = y->dtype;
    bool dt_ok = ql ? xd == SY_DT_INT8 && wd == SY_DT_INT8 && ydt == SY_DT_INT8
               : which == OQ_CONVI ? xd == SY_DT_UINT8 && wd == SY_DT_UINT8 && ydt == SY_DT_INT32
                                   : (xd == SY_DT_INT8 || xd == SY_DT_UINT8) && (wd == SY_DT_INT8 || wd == SY_DT_UINT8) &&
                                         ydt == SY_DT_INT32;
    if (!dt_ok) {
        mcu_decline(c, SY_REASON_DTYPE, "%s: %s x %s -> %s (%s: %s)", op, sy_dt_name(xd), sy_dt_name(wd), sy_dt_name(ydt), row,
                 ql ? "INT8 only, no UINT8" : which == OQ_CONVI ? "uint8 only, Y int32" : "int8 or uint8, Y int32");
        return false;
    }
    /* parameters: constants, per-tensor where the row says so */
    if (ql) {
        int64_t nch = conv ? w->dims[0] : w->dims[w->rank - 1];
        sy_dtype zdt = SY_DT_INT8;
        if (!qparam(n, 1, true, SY_DT_FLOAT32, 1, 1, conv ? "x_scale" : "a_scale", row, c) ||
            !qparam(n, 2, true, zdt, 1, 1, conv ? "x_zero_point" : "a_zero_point", row, c) ||
            !qparam(n, 4, true, SY_DT_FLOAT32, 1, nch, conv ? "w_scale" : "b_scale", row, c) ||
            !qparam(n, 5, true, zdt, numel(qin(n, 4)), numel(qin(n, 4)), conv ? "w_zero_point" : "b_zero_point", row,
                    c) ||
            !qparam(n, 6, true, SY_DT_FLOAT32, 1, 1, "y_scale", row, c) ||
            !qparam(n, 7, true, zdt, 1, 1, "y_zero_point", row, c) ||
            (conv && !qparam(n, 8, false, SY_DT_INT32, nch, nch, "B", row, c)))
            return false;
    } else {
        int64_t nch = conv ? 1 : w->dims[w->rank - 1];
        if (!qparam(n, 2, false, xd, 1, 1, conv ? "x_zero_point" : "a_zero_point", row, c) ||
            !qparam(n, 3, false, wd, 1, conv ? 1 : nch, conv ? "w_zero_point" : "b_zero_point", row, c))
            return false;
    }
    if (conv) {
        if (x->rank != 4 || w->rank != 4) {
            mcu_decline(c, SY_REASON_RANK, "%s: X and W must be 4D NCHW (%s: 2-D convolution only)", op, row);
            return false;
        }
        if (which == OQ_QLCONV && !w->data) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: w must be a constant (%s: w const)", op, row);
            return false;
        }
        char ap[16];
        sy_attr_string_or(H, n, "auto_pad", "NOTSET", ap, sizeof ap);
        int64_t g = sy_attr_int_or(H, n, "group", 1);
        if (which == OQ_QLCONV && (strcmp(ap, "NOTSET") || g != 1)) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "QLinearConv: auto_pad = NOTSET and group = 1 only, got %s and %lld (%s)", ap,
                     (long long)g, row);
            return false;
        }
        int64_t pd[4];
        if (strcmp(ap, "NOTSET") && sy_attr_ints_copy(H, n, "pads", pd, 4) > 0) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: pads must not be set when auto_pad = %s (%s)", op, ap, row);
            return false;
        }
        if (g < 1 || x->dims[1] % g || w->dims[0] % g || w->dims[1] * g != x->dims[1]) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: group %lld must divide both channel counts (%s)", op, (long long)g, row);
            return false;
        }
        return true;
    }
    /* matmul: 2-4D, no broadcasting of the batch dims; the kernel takes one
     * B for every batch, or one B per batch of identical batch dims */
    if (x->rank < 2 || x->rank > 4 || (w->rank != 2 && w->rank != x->rank) || (ql && w->rank != x->rank)) {
        mcu_decline(c, SY_REASON_RANK, "%s: a and b of ranks %d and %d; 2-4D of one rank (%s: no batch-dim broadcasting)",
                 op, x->rank, w->rank, row);
        return false;
    }
    for (int32_t i = 0; w->rank > 2 && i + 2 < x->rank; i++)
        if (x->dims[i] != w->dims[i]) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: batch dims differ (%lld, %lld) (%s: no batch-dim broadcasting)", op,
                     (long long)x->dims[i], (long long)w->dims[i], row);
            return false;
        }
    if (w->dims[w->rank - 2] != x->dims[x->rank - 1]) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: b's second-to-last dim %lld must equal a's last dim %lld (%s)", op,
                 (long long)w->dims[w->rank - 2], (long long)x->dims[x->rank - 1], row);
        return false;
    }
    return true;
}

/* QConvTranspose, what the QDQ pass folds DQ -> ConvTranspose -> Q into:
 * Table B #113's rules for the ONNX form (X 4-D NCHW, batch 1, group 1, no
 * output_shape, W and B constant) with 8-bit codes */
static bool check_qconvt(const sy_node *n, const sy_tensor *x, const sy_tensor *y, sy_claim *c)
{
    static const char row[] = "ops-mcu.md Table B #113 ConvTranspose";
    static const uint32_t idx[] = {1, 2, 3, 4, 5, 6, 7, 8};
    const sy_tensor *w = qin(n, 3);
    if (!const_params(n, idx, 8, c))
        return false;
    if (x->rank != 4 || !w || w->rank != 4) {
        mcu_decline(c, SY_REASON_RANK, "QConvTranspose: X must be 4D NCHW, got rank %d (%s: non-4D input is "
                    "unsupported)", x->rank, row);
        return false;
    }
    if (x->dims[0] != 1) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "QConvTranspose: batch must be 1, got %lld (%s: X static, batch = 1)",
                    (long long)x->dims[0], row);
        return false;
    }
    if (w->dtype != SY_DT_INT8 && w->dtype != SY_DT_UINT8) {
        mcu_decline(c, SY_REASON_DTYPE, "QConvTranspose: W is %s; 8-bit weights are required (%s, int8)",
                    sy_dt_name(w->dtype), row);
        return false;
    }
    if (sy_attr_has(H, n, "output_shape", SY_ATTR_INTS)) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "QConvTranspose: the output_shape attribute is an error at parse time "
                    "(%s: re-export the model with explicit pads)", row);
        return false;
    }
    int64_t g = sy_attr_int_or(H, n, "group", 1);
    if (g != 1) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "QConvTranspose: group must be 1, got %lld (%s: group > 1, including "
                    "depthwise deconvolution, is unsupported)", (long long)g, row);
        return false;
    }
    char ap[16];
    sy_attr_string_or(H, n, "auto_pad", "NOTSET", ap, sizeof ap);
    int64_t pads[4] = {0, 0, 0, 0}, s[2] = {1, 1}, op[2] = {0, 0}, d[2] = {1, 1};
    int64_t np = sy_attr_ints_copy(H, n, "pads", pads, 4);
    if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID") && strcmp(ap, "SAME_UPPER") && strcmp(ap, "SAME_LOWER")) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "QConvTranspose: auto_pad %s (%s)", ap, row);
        return false;
    }
    if (strcmp(ap, "NOTSET") && np > 0) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "QConvTranspose: pads must not be given when auto_pad = %s (%s)", ap, row);
        return false;
    }
    sy_attr_ints_copy(H, n, "strides", s, 2);
    sy_attr_ints_copy(H, n, "output_padding", op, 2);
    sy_attr_ints_copy(H, n, "dilations", d, 2);
    for (int i = 0; i < 2; i++) {
        if (s[i] < 1 || d[i] < 1) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "QConvTranspose: strides and dilations must be >= 1 (%s)", row);
            return false;
        }
        if (op[i] < 0 || op[i] >= s[i]) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "QConvTranspose: output_padding[%d] = %lld must be below the stride "
                        "%lld (%s)", i, (long long)op[i], (long long)s[i], row);
            return false;
        }
    }
    for (int i = 0; i < 4; i++)
        if (pads[i] < 0) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "QConvTranspose: pads must be non-negative (%s)", row);
            return false;
        }
    return i8act(n, x, c) && i8act(n, y, c);
}

/* QConcat, what the QDQ pass folds DQ(x_i) ... -> Concat -> Q into (inputs
 * y_scale, y_zp, then (x, scale, zero point) per input): Table B #17
 * Concat's rules (inputs and output 2-4D, -rank <= axis < rank, the non-axis
 * dims equal; the FP32 training column's "exactly 2 inputs" is a training
 * rule, not an inference one) with int8 codes and constant per-tensor
 * parameters, at most (MCU_MAX_IO - 2) / 3 inputs (what a package records) */
static bool check_qconcat(const sy_node *n, const sy_tensor *y, sy_claim *c)
{
    static const char row[] = "ops-mcu.md Table B #17 Concat, seed L7023";
    uint32_t nin = H->node_num_inputs(n);
    if (nin < 5 || (nin - 2) % 3) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "QConcat: y_scale, y_zp, then (x, scale, zero point) triples expected, got "
                    "%u inputs", nin);
        return false;
    }
    if (nin > MCU_MAX_IO) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "QConcat: %u inputs (%u tensors); a package records at most %d inputs",
                    nin, (nin - 2) / 3, MCU_MAX_IO);
        return false;
    }
    if (!qparam(n, 0, true, SY_DT_FLOAT32, 1, 1, "y_scale", row, c) ||
        !qparam(n, 1, false, SY_DT_INT8, 1, 1, "y_zero_point", row, c))
        return false;
    if (y->rank < 2 || y->rank > 4) {
        mcu_decline(c, SY_REASON_RANK, "QConcat: the output must be 2-4D, got rank %d (%s: concat_result 2-4D)", y->rank,
                    row);
        return false;
    }
    int64_t axis = sy_attr_int_or(H, n, "axis", 0);
    if (axis < -y->rank || axis >= y->rank) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "QConcat: axis %lld is outside [-%d, %d) (%s: -rank <= axis)",
                    (long long)axis, y->rank, y->rank, row);
        return false;
    }
    int32_t ax = (int32_t)(axis < 0 ? axis + y->rank : axis);
    int64_t sum = 0;
    for (uint32_t i = 2; i < nin; i += 3) {
        const sy_tensor *x = qin(n, i);
        if (!x || x->rank < 2 || x->rank > 4 || x->rank != y->rank) {
            mcu_decline(c, SY_REASON_RANK, "QConcat: input %u must be 2-4D of the output's rank %d, got rank %d (%s: "
                        "inputs: list of 2-4D)", (i - 2) / 3, y->rank, x ? x->rank : 0, row);
            return false;
        }
        for (int32_t d = 0; d < x->rank; d++)
            if (d != ax && x->dims[d] != y->dims[d]) {
                mcu_decline(c, SY_REASON_SHAPE, "QConcat: input %u differs from the output on dim %d (%lld, %lld) (%s: "
                            "the non-axis dims equal)", (i - 2) / 3, (int)d, (long long)x->dims[d],
                            (long long)y->dims[d], row);
                return false;
            }
        sum += x->dims[ax];
        if (!qparam(n, i + 1, true, SY_DT_FLOAT32, 1, 1, "an input's scale", row, c) ||
            !qparam(n, i + 2, false, SY_DT_INT8, 1, 1, "an input's zero point", row, c) || !i8act(n, x, c))
            return false;
    }
    if (sum != y->dims[ax] || numel(y) > INT32_MAX) {
        mcu_decline(c, SY_REASON_SHAPE, "QConcat: the inputs' axis dims add to %lld, the output's is %lld, or it holds "
                    "2^31 or more codes (%s: axis dim = sum)", (long long)sum, (long long)y->dims[ax], row);
        return false;
    }
    return i8act(n, y, c);
}

bool mcu_quant_check(const sy_node *n, sy_claim *c)
{
    const char *op = H->node_op(n), *dom = H->node_domain(n);
    const sy_tensor *x = qin(n, 0), *y = H->node_num_outputs(n) ? H->node_output(n, 0) : NULL;
    if (!x || !y) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: missing input or output", op);
        return false;
    }
    if (!is_onnx(dom) && !strcmp(op, "QConcat")) /* input 0 is y_scale */
        return check_qconcat(n, y, c);
    if (onnx_int_op(n) != OQ_NONE)
        return check_onnx_int(n, onnx_int_op(n), x, y, c);
    if (is_onnx(dom)) {
        if (!strcmp(op, "Reshape"))
            return true;
        bool q = !strcmp(op, "QuantizeLinear");
        const sy_tensor *s = qin(n, 1), *z = qin(n, 2);
        static const uint32_t idx[] = {1, 2};
        if (!const_params(n, idx, 2, c))
            return false;
        if (!s || numel(s) != 1 || (z && numel(z) != 1) || s->dtype != SY_DT_FLOAT32) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: the MCU takes a per-tensor float32 scale only", op);
            return false;
        }
        if ((q ? x : y)->dtype != SY_DT_FLOAT32) {
            mcu_decline(c, SY_REASON_DTYPE, "%s: the float side must be float32", op);
            return false;
        }
        return i8act(n, q ? y : x, c);
    }
    if (!strcmp(op, "QConv")) {
        static const uint32_t idx[] = {1, 2, 3, 4, 5, 6, 7, 8};
        const sy_tensor *w = qin(n, 3);
        if (!const_params(n, idx, 8, c))
            return false;
        if (x->rank != 4 || !w || w->rank != 4) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "QConv: the MCU kernel takes 2-D NCHW convolutions only");
            return false;
        }
        if (w->dtype != SY_DT_INT8 && w->dtype != SY_DT_UINT8) {
            mcu_decline(c, SY_REASON_DTYPE, "QConv: weights are %s; 8-bit weights are required", sy_dt_name(w->dtype));
            return false;
        }
        if (!table_b_window(n, true, c))
            return false;
        return i8act(n, x, c) && i8act(n, y, c);
    }
    if (!strcmp(op, "QConvTranspose")) /* Table B #113, int8: the fp32 row's rules (mcu_nn.c) */
        return check_qconvt(n, x, y, c);
    if (!strcmp(op, "QMaxPool")) {
        static const uint32_t idx[] = {1, 2, 3, 4};
        if (!const_params(n, idx, 4, c))
            return false;
        if (!table_b_window(n, false, c))
            return false;
        if (x->rank != 4 || sy_attr_int_or(H, n, "global", 0)) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "QMaxPool: the MCU kernel takes 2-D NCHW windows, no global pooling");
            return false;
        }
        return i8act(n, x, c) && i8act(n, y, c);
    }
    if (!strcmp(op, "QAveragePool")) { /* Table B #18 AveragePool, #41 GlobalAveragePool */
        static const uint32_t idx[] = {1, 2, 3, 4};
        bool global = sy_attr_int_or(H, n, "global", 0) != 0;
        const char *row = global ? "#41 GlobalAveragePool" : "#18 AveragePool";
        int64_t d[2] = {1, 1}, pd[4] = {0, 0, 0, 0};
        sy_attr_ints_copy(H, n, "dilations", d, 2);
        sy_attr_ints_copy(H, n, "pads", pd, 4);
        char ap[24];
        sy_attr_string_or(H, n, "auto_pad", "NOTSET", ap, sizeof ap);
        if (!const_params(n, idx, 4, c))
            return false;
        if (x->rank != 4) {
            mcu_decline(c, SY_REASON_RANK, "QAveragePool: the MCU kernel takes 2-D NCHW windows, got rank %d (ops-mcu.md "
                     "Table B %s)", x->rank, row);
            return false;
        }
        if (d[0] != 1 || d[1] != 1 || sy_attr_int_or(H, n, "ceil_mode", 0)) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "QAveragePool: dilations 1 and ceil_mode floor only (ops-mcu.md Table B %s)",
                     row);
            return false;
        }
        if (sy_attr_int_or(H, n, "count_include_pad", 0) &&
            (pd[0] || pd[1] || pd[2] || pd[3] || !strncmp(ap, "SAME", 4))) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "QAveragePool: count_include_pad = 1 with padding: the MCU kernel averages "
                     "the cells inside the input only (ops-mcu.md Table B %s does not mention count_include_pad)", row);
            return false;
        }
        return i8act(n, x, c) && i8act(n, y, c);
    }
    if (!strcmp(op, "QNorm")) { /* Table B #36 BatchNormalization, #37 LayerNormalization */
        static const uint32_t idx[] = {1, 2, 3, 4};
        char fn[32];
        sy_attr_string_or(H, n, "fn", "", fn, sizeof fn);
        bool bn = !strcmp(fn, "BatchNormalization"), lp = !strcmp(fn, "LpNormalization");
        const char *row = bn ? "#36 BatchNormalization" : lp ? "#38 LpNormalization" : "#37 LayerNormalization";
        uint32_t nin = H->node_num_inputs(n);
        if (!const_params(n, idx, 4, c))
            return false;
        if (lp) {
            int64_t pn = sy_attr_int_or(H, n, "p", 2);
            int32_t axis;
            sy_status *st = sy_norm_axis(H, sy_attr_int_or(H, n, "axis", -1), x->rank, false, "axis", &axis);
            if (st)
                H->status_free(st);
            if (st || (pn != 1 && pn != 2) || x->rank < 2 || x->rank > 4 || numel(x) > INT32_MAX / 2) {
                mcu_decline(c, SY_REASON_ATTRIBUTE, "QNorm LpNormalization: p must be 1 or 2, axis in [-R, R), input 2-4D "
                         "(ops-mcu.md Table B #38)");
                return false;
            }
            return i8act(n, x, c) && i8act(n, y, c);
        }
        if (!bn && strcmp(fn, "LayerNormalization")) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "QNorm: fn '%s' has no MCU kernel", fn);
            return false;
        }
        if (x->rank < 2 || x->rank > 4 || numel(x) > INT32_MAX / 2) {
            mcu_decline(c, SY_REASON_RANK, "QNorm %s: input 2-4D, got rank %d (ops-mcu.md Table B %s)", fn, x->rank, row);
            return false;
        }
        for (uint32_t i = 5; i < nin; i++) {
            const sy_tensor *t = qin(n, i);
            if (t && (!t->data || t->dtype != SY_DT_FLOAT32)) {
                mcu_decline(c, SY_REASON_ATTRIBUTE, "QNorm %s: its parameters must be constant fp32 (ops-mcu.md Table B %s)",
                         fn, row);
                return false;
            }
        }
        if (bn) {
            if (sy_attr_int_or(H, n, "training_mode", 0) != 0 || nin != 9) {
                mcu_decline(c, SY_REASON_ATTRIBUTE, "QNorm BatchNormalization: the inference form with scale, B, mean and "
                         "var (ops-mcu.md Table B #36)");
                return false;
            }
            for (uint32_t i = 5; i < 9; i++)
                if (numel(qin(n, i)) != x->dims[1]) {
                    mcu_decline(c, SY_REASON_SHAPE, "QNorm BatchNormalization: input %u must hold C = %lld values "
                             "(ops-mcu.md Table B #36)", i, (long long)x->dims[1]);
                    return false;
                }
        } else {
            int32_t axis;
            sy_status *st = sy_norm_axis(H, sy_attr_int_or(H, n, "axis", -1), x->rank, false, "axis", &axis);
            if (st) {
                H->status_free(st);
                mcu_decline(c, SY_REASON_ATTRIBUTE, "QNorm LayerNormalization: axis must be in [-R, R) (ops-mcu.md Table B "
                         "#37)");
                return false;
            }
            int64_t inner = sy_dims_prod(x->dims, axis, x->rank);
            const sy_tensor *s = qin(n, 5), *b = nin > 6 ? qin(n, 6) : NULL;
            if (nin < 6 || nin > 7 || (numel(s) != inner && numel(s) != 1) || (b && numel(b) != inner && numel(b) != 1)) {
                mcu_decline(c, SY_REASON_SHAPE, "QNorm LayerNormalization: scale and B of the normalized %lld elements "
                         "(ops-mcu.md Table B #37)", (long long)inner);
                return false;
            }
        }
        return i8act(n, x, c) && i8act(n, y, c);
    }
    if (!strcmp(op, "QSoftmax") || !strcmp(op, "QLogSoftmax")) { /* Table B #6 Softmax, #112 LogSoftmax */
        static const uint32_t idx[] = {1, 2, 3, 4};
        bool lsm = op[1] == 'L';
        if (!const_params(n, idx, 4, c))
            return false;
        if (x->rank < 1 || (lsm && x->rank > 5) || numel(x) > INT32_MAX) {
            mcu_decline(c, SY_REASON_RANK, "%s: rank %d, %lld elements (ops-mcu.md Table B %s)", op, x->rank,
                     (long long)numel(x), lsm ? "#112 LogSoftmax: input 1D-5D" : "#6 Softmax: 2-4D");
            return false;
        }
        return i8act(n, x, c) && i8act(n, y, c);
    }
    if (!strcmp(op, "QMatMul")) {
        static const uint32_t idx[] = {1, 2, 3, 4, 5, 6, 7, 8};
        const sy_tensor *b = qin(n, 3);
        if (!const_params(n, idx, 8, c))
            return false;
        /* transB: the attribute the QDQ pass writes (framework/src/pass_qdq.c) and ops_quant reads */
        bool tb = sy_attr_int_or(H, n, "transB", 0) != 0;
        if (!b || b->rank != 2 || (b->dtype != SY_DT_INT8 && b->dtype != SY_DT_UINT8)) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "QMatMul: the MCU kernel takes a constant 8-bit 2-D B ([K, N], or [N, K] "
                     "with transB = 1)");
            return false;
        }
        int64_t kb = tb ? b->dims[1] : b->dims[0], nb = tb ? b->dims[0] : b->dims[1];
        if (kb <= 0 || nb <= 0 || x->rank < 1 || x->dims[x->rank - 1] != kb || y->rank < 1 || y->dims[y->rank - 1] != nb ||
            numel(y) / nb != numel(x) / kb) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "QMatMul: A's last dim must be B's K = %lld and Y's last dim B's N = %lld",
                     (long long)kb, (long long)nb);
            return false;
        }
        return i8act(n, x, c) && i8act(n, y, c);
    }
    if (!strcmp(op, "QAdd") || !strcmp(op, "QSub") || !strcmp(op, "QMul")) {
        static const uint32_t idx[] = {1, 2, 4, 5, 6, 7};
        const sy_tensor *b = qin(n, 3);
        if (!const_params(n, idx, 6, c))
            return false;
        if (!b || x->rank > 4 || b->rank > 4 || y->rank > 4) {
            mcu_decline(c, SY_REASON_RANK, "%s: A, B and the output at most 4-D (ops-mcu.md: Mul/Add/Sub take 2-4D "
                     "inputs)", op);
            return false;
        }
        if (!bcast_strides(x, y, NULL) || !bcast_strides(b, y, NULL)) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: A and B must broadcast (numpy rules) to the output's shape", op);
            return false;
        }
        return i8act(n, x, c) && i8act(n, b, c) && i8act(n, y, c);
    }
    if (!strcmp(op, "QPRelu") || !strcmp(op, "QPow")) {
        /* DQ -> PRelu / Pow -> Q (ops-mcu.md Table B #57: slope unidirectionally
         * broadcast to X; #116: X, Y, Z max 4D) */
        static const uint32_t idx[] = {1, 2, 4, 5, 6, 7};
        const sy_tensor *b = qin(n, 3);
        const char *row = op[1] == 'P' ? "#57 PRelu" : "#116 Pow";
        if (!const_params(n, idx, 6, c))
            return false;
        if (!b || x->rank > 4 || y->rank > 4 || b->rank > 4) {
            mcu_decline(c, SY_REASON_RANK, "%s: X, %s and the output at most 4-D (ops-mcu.md Table B %s)", op,
                     op[1] == 'P' ? "slope" : "Y", row);
            return false;
        }
        if (numel(x) != numel(y) || block_bcast(b, y) < 0) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: the MCU kernel takes X of the output's shape and a %s of it, of 1 "
                     "element or broadcast over trailing dims (per channel) (ops-mcu.md Table B %s%s)", op,
                     op[1] == 'P' ? "slope" : "Y", row, op[1] == 'P' ? ": slope unidirectionally broadcast to X" : "");
            return false;
        }
        if (op[2] == 'o' && x->data) {
            /* a constant base below 0: the seed's INT8 Pow takes X >= 0 only */
            int32_t zx = zp_at(qin(n, 2), 0);
            for (int64_t i = 0; i < numel(x); i++)
                if (((const int8_t *)x->data)[i] < zx) {
                    mcu_decline(c, SY_REASON_ATTRIBUTE, "QPow: base element %lld is negative (ops-mcu.md Table B #116: "
                             "INT8 only with X >= 0)", (long long)i);
                    return false;
                }
        }
        return i8act(n, x, c) && i8act(n, b, c) && i8act(n, y, c);
    }
    if (!strcmp(op, "QUnary")) { /* one table of output codes (qk_unary.c) */
        static const uint32_t idx[] = {1, 2, 3, 4};
        tflk_unary u;
        char fn[32];
        if (!const_params(n, idx, 4, c))
            return false;
        if (!qunary_fn(n, &u, fn, sizeof fn)) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "QUnary: fn '%s' (or its approximate) is not one the MCU tables know", fn);
            return false;
        }
        if (numel(x) > INT32_MAX) {
            mcu_decline(c, SY_REASON_RANK, "QUnary: more than 2^31 - 1 elements");
            return false;
        }
        return i8act(n, x, c) && i8act(n, y, c);
    }
    if (!strcmp(op, "QRNN")) { /* the integer ONNX RNN, plugin_sdk/kernels/qk_rnn.c */
        static const uint32_t idx[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14, 15};
        const sy_tensor *sl = qin(n, QRNN_LENS), *h0 = qin(n, QRNN_H0);
        if (!const_params(n, idx, SY_COUNT_OF(idx), c))
            return false;
        if (H->node_num_outputs(n) < 2 || !H->node_output(n, 1)) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "QRNN: the MCU takes an RNN with both Y and Y_h (ops-mcu.md rule 33)");
            return false;
        }
        if (sl && sl->dtype != SY_DT_INT32) {
            mcu_decline(c, SY_REASON_DTYPE, "QRNN: sequence_lens is %s; the MCU takes int32", sy_dt_name(sl->dtype));
            return false;
        }
        return i8act(n, x, c) && i8act(n, y, c) && i8act(n, h0, c);
    }
    mcu_decline(c, SY_REASON_NO_KERNEL, "%s (domain '%s'): no MCU kernel in this build (it has QConv, QConvTranspose, QMaxPool, QAveragePool, QMatMul, QAdd, QSub, QMul, QPRelu, QPow, QConcat, QNorm, QUnary, QSoftmax, QLogSoftmax, QRNN)",
             op, dom ? dom : "");
    return false;
}

/* ---- parameters, as ops_quant computes them ------------------------------------ */

static float scale_at(const sy_tensor *s, int64_t i) { return ((const float *)s->data)[numel(s) > 1 ? i : 0]; }
static int32_t zp_at(const sy_tensor *z, int64_t i)
{
    return z && z->data ? sy_q_load(z->data, z->dtype, (size_t)(numel(z) > 1 ? i : 0)) : 0;
}
static int32_t qdt(sy_dtype dt) { return dt == SY_DT_UINT8 ? QK_U8 : QK_S8; }

static sy_status *rq_mode(const sy_node *n, sy_rq_mode *mode)
{
    const char *s = NULL;
    size_t len = 0;
    *mode = SY_RQ_ONNX;
    if (H->attr_string(n, "requant", &s, &len)) {
        char buf[32];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < 31 ? len : 31), s);
        if (!sy_rq_mode_parse(buf, mode))
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "attribute requant = \"%s\": expected onnx, gemmlowp or single_rounding", buf);
    }
    return NULL;
}

/* q_act_clamp of ops_quant */
static void act_clamp(const sy_node *n, float ys, int32_t yz, sy_dtype ydt, int32_t *lo, int32_t *hi)
{
    float amin = sy_attr_float_or(H, n, "act_min", -INFINITY), amax = sy_attr_float_or(H, n, "act_max", INFINITY);
    sy_q_storage_range(ydt, lo, hi);
    if (isfinite(amin)) {
        int32_t v = sy_rq_quantize(amin, ys, yz, *lo, *hi);
        if (v > *lo)
            *lo = v;
    }
    if (isfinite(amax)) {
        int32_t v = sy_rq_quantize(amax, ys, yz, *lo, *hi);
        if (v < *hi)
            *hi = v;
    }
}

static void to_qk(const sy_requant *r, qk_rq *q)
{
    q->mode = (int32_t)r->mode; /* QK_RQ_* are the sy_rq_mode values */
    q->real_mult = r->real_mult;
    q->mult = r->mult;
    q->shift = r->shift;
    q->zp = r->zp;
    q->lo = r->lo;
    q->hi = r->hi;
}

/* per output channel: requantizers, int32 bias, weight zero points (QConv, QMatMul) */
static sy_status *chan_params(const sy_node *n, mcu_node *k, int32_t nch, uint32_t ixs, uint32_t iws, uint32_t iwz,
                              uint32_t iys, uint32_t iyz, uint32_t ib)
{
    const sy_tensor *xs = qin(n, ixs), *ws = qin(n, iws), *wz = qin(n, iwz), *ys = qin(n, iys), *yz = qin(n, iyz),
                    *b = qin(n, ib), *y = H->node_output(n, 0);
    if ((numel(ws) != 1 && numel(ws) != nch) || (wz && numel(wz) != 1 && numel(wz) != nch) ||
        (b && numel(b) != 1 && numel(b) != nch))
        return H->status_new(SY_ERR_SHAPE, "%s: per-channel parameters of %d channels expected", H->node_op(n), nch);
    if (b && b->dtype != SY_DT_INT32 && b->dtype != SY_DT_FLOAT32)
        return H->status_new(SY_ERR_TYPE, "%s: bias must be int32 or float32", H->node_op(n));
    sy_rq_mode mode;
    SY_TRY(rq_mode(n, &mode));
    k->q_n = nch;
    k->q_nzp = wz ? (int32_t)numel(wz) : 0;
    k->q_rq = calloc((size_t)nch, sizeof *k->q_rq);
    k->q_bias = calloc((size_t)nch, sizeof *k->q_bias);
    k->q_zp = calloc((size_t)(k->q_nzp ? k->q_nzp : 1), sizeof *k->q_zp);
    if (!k->q_rq || !k->q_bias || !k->q_zp)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    float sx = scale_at(xs, 0), sy = scale_at(ys, 0);
    int32_t yzp = zp_at(yz, 0), lo, hi;
    act_clamp(n, sy, yzp, y->dtype, &lo, &hi);
    for (int32_t c = 0; c < nch; c++) {
        float sw = scale_at(ws, c);
        /* q_mult3 of ops_quant for float32 scales */
        float m = sx * sw;
        m = m / sy;
        sy_requant r;
        sy_rq_init(&r, mode, (double)m, yzp, lo, hi);
        to_qk(&r, &k->q_rq[c]);
        if (b && b->dtype == SY_DT_INT32) {
            k->q_bias[c] = ((const int32_t *)b->data)[numel(b) == 1 ? 0 : c];
        } else if (b) {
            double v = sy_rq_round_even((double)scale_at(b, c) / ((double)sx * (double)sw));
            k->q_bias[c] = v > INT32_MAX ? INT32_MAX : (v < INT32_MIN ? INT32_MIN : (int32_t)v);
        }
    }
    for (int32_t c = 0; c < k->q_nzp; c++)
        k->q_zp[c] = zp_at(wz, c);
    return NULL;
}

/* ConvInteger / MatMulInteger: no requantizer, no bias; the weight zero
 * points of input `iz` (one, or one per output channel / column) */
static sy_status *int_zps(const sy_node *n, mcu_node *k, uint32_t iz, int32_t nch)
{
    const sy_tensor *wz = qin(n, iz);
    if (wz && numel(wz) != 1 && numel(wz) != nch)
        return H->status_new(SY_ERR_SHAPE, "%s: %lld weight zero points for %d channels", H->node_op(n),
                             (long long)numel(wz), nch);
    k->q_n = 0;
    k->q_nzp = wz ? (int32_t)numel(wz) : 0;
    k->q_zp = calloc((size_t)(k->q_nzp ? k->q_nzp : 1), sizeof *k->q_zp);
    if (!k->q_zp)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    for (int32_t c = 0; c < k->q_nzp; c++)
        k->q_zp[c] = zp_at(wz, c);
    return NULL;
}

/* the NCHW shapes, code types and x zero point of a QConv / QConvTranspose
 * node's qk_conv (the window, groups and channel parameters differ) */
static void qconv_shape(qk_conv *p, const sy_node *n, const sy_tensor *x, const sy_tensor *w, const sy_tensor *y)
{
    p->n = (int32_t)x->dims[0];
    p->c = (int32_t)x->dims[1];
    p->ih = (int32_t)x->dims[2];
    p->iw = (int32_t)x->dims[3];
    p->oc = (int32_t)y->dims[1];
    p->oh = (int32_t)y->dims[2];
    p->ow = (int32_t)y->dims[3];
    p->kh = (int32_t)w->dims[2];
    p->kw = (int32_t)w->dims[3];
    p->xdt = qdt(x->dtype);
    p->wdt = qdt(w->dtype);
    p->ydt = qdt(y->dtype);
    p->x_zp = zp_at(qin(n, 2), 0);
}

/* begin pads of a 2-D window from the node's attributes and its known output */
static sy_status *window(const sy_node *n, const sy_tensor *x, const sy_tensor *y, int32_t kh, int32_t kw, int32_t *s,
                         int32_t *d, int32_t *pb)
{
    int64_t st[2] = {1, 1}, dl[2] = {1, 1}, pd[4] = {0, 0, 0, 0};
    sy_attr_ints_copy(H, n, "strides", st, 2);
    sy_attr_ints_copy(H, n, "dilations", dl, 2);
    sy_attr_ints_copy(H, n, "pads", pd, 4);
    char ap[24];
    sy_attr_string_or(H, n, "auto_pad", "NOTSET", ap, sizeof ap);
    int32_t k[2] = {kh, kw};
    for (int i = 0; i < 2; i++) {
        s[i] = (int32_t)st[i];
        d[i] = (int32_t)dl[i];
        if (!strcmp(ap, "NOTSET")) {
            pb[i] = (int32_t)pd[i];
        } else if (!strcmp(ap, "VALID")) {
            pb[i] = 0;
        } else if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
            int64_t ek = (int64_t)(k[i] - 1) * d[i] + 1;
            int64_t total = (y->dims[2 + i] - 1) * s[i] + ek - x->dims[2 + i];
            if (total < 0)
                total = 0;
            pb[i] = (int32_t)(!strcmp(ap, "SAME_UPPER") ? total / 2 : total - total / 2);
        } else {
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "auto_pad \"%s\"", ap);
        }
    }
    return NULL;
}

sy_status *mcu_quant_prepare(sy_node *n, mcu_node *k)
{
    const char *op = H->node_op(n), *dom = H->node_domain(n);
    const sy_tensor *x = qin(n, 0), *y = H->node_output(n, 0);
    const int which = onnx_int_op(n);
    /* the weights / second operand: input 1 of ConvInteger and MatMulInteger, else 3 */
    k->q_w = which == OQ_MMI || which == OQ_CONVI ? 1 : 3;
    if (is_onnx(dom) && which == OQ_NONE) {
        if (!strcmp(op, "Reshape")) {
            k->kind = MK_COPY;
            return NULL;
        }
        bool q = !strcmp(op, "QuantizeLinear");
        k->kind = q ? MK_QUANT : MK_DEQUANT;
        k->u.qdq.scale = scale_at(qin(n, 1), 0);
        k->u.qdq.zp = zp_at(qin(n, 2), 0);
        k->u.qdq.dt = qdt(q ? y->dtype : x->dtype);
        k->u.qdq.n = (int32_t)numel(x);
        return NULL;
    }
    if (!strcmp(op, "QConv") || which == OQ_QLCONV || which == OQ_CONVI) {
        const sy_tensor *w = qin(n, (uint32_t)k->q_w);
        qk_conv *p = &k->u.qconv;
        k->kind = MK_QCONV;
        qconv_shape(p, n, x, w, y);
        p->group = (int32_t)sy_attr_int_or(H, n, "group", 1);
        int32_t s[2], d[2], pb[2];
        SY_TRY(window(n, x, y, p->kh, p->kw, s, d, pb));
        p->sh = s[0], p->sw = s[1], p->dh = d[0], p->dw = d[1], p->pt = pb[0], p->pl = pb[1];
        if (which == OQ_CONVI) /* int32 out: the zero points only (ops-mcu.md Table B #105: one element each) */
            SY_TRY(int_zps(n, k, 3, p->oc));
        else
            SY_TRY(chan_params(n, k, p->oc, 1, 4, 5, 6, 7, 8));
        if (which == OQ_CONVI)
            p->ydt = QK_S32;
        p->n_wzp = k->q_nzp;
        p->w_zp = k->q_nzp ? k->q_zp : NULL;
        p->bias = k->q_n ? k->q_bias : NULL;
        p->rq = k->q_n ? k->q_rq : NULL;
        return NULL;
    }
    if (!strcmp(op, "QConvTranspose")) { /* as ops_quant's run_convt (qconvt.c), group 1 */
        const sy_tensor *w = qin(n, 3);
        qk_conv *p = &k->u.qconv;
        k->kind = MK_QTCONV;
        if (w->dims[0] != x->dims[1] || w->dims[1] != y->dims[1])
            return H->status_new(SY_ERR_SHAPE, "QConvTranspose: W [%lld, %lld, ...] for %lld input and %lld output "
                                 "channels", (long long)w->dims[0], (long long)w->dims[1], (long long)x->dims[1],
                                 (long long)y->dims[1]);
        int64_t s[2] = {1, 1}, d[2] = {1, 1}, op_[2] = {0, 0}, pads[4] = {0, 0, 0, 0};
        sy_attr_ints_copy(H, n, "strides", s, 2);
        sy_attr_ints_copy(H, n, "dilations", d, 2);
        sy_attr_ints_copy(H, n, "output_padding", op_, 2);
        sy_attr_ints_copy(H, n, "pads", pads, 4);
        char ap[16];
        sy_attr_string_or(H, n, "auto_pad", "NOTSET", ap, sizeof ap);
        int32_t pb[2];
        for (int i = 0; i < 2; i++) {
            if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
                /* ONNX: total = s (i - 1) + output_padding + (k - 1) d + 1 - o; SAME_UPPER puts the odd cell at the end */
                int64_t total = s[i] * (x->dims[2 + i] - 1) + op_[i] + (w->dims[2 + i] - 1) * d[i] + 1 - y->dims[2 + i];
                total = total > 0 ? total : 0;
                pb[i] = (int32_t)(!strcmp(ap, "SAME_UPPER") ? total / 2 : total - total / 2);
            } else {
                pb[i] = strcmp(ap, "NOTSET") ? 0 : (int32_t)pads[i];
            }
        }
        qconv_shape(p, n, x, w, y);
        p->sh = (int32_t)s[0], p->sw = (int32_t)s[1], p->dh = (int32_t)d[0], p->dw = (int32_t)d[1];
        p->pt = pb[0], p->pl = pb[1];
        p->group = 1;
        /* group 1: W's axis-1 parameters are one per output channel */
        SY_TRY(chan_params(n, k, p->oc, 1, 4, 5, 6, 7, 8));
        p->n_wzp = k->q_nzp;
        p->w_zp = k->q_nzp ? k->q_zp : NULL;
        p->bias = k->q_bias;
        p->rq = k->q_rq;
        return NULL;
    }
    if (!strcmp(op, "QMaxPool") || !strcmp(op, "QAveragePool")) {
        qk_pool *p = &k->u.qpool;
        k->kind = op[1] == 'M' ? MK_QPOOL : MK_QAVGPOOL;
        int64_t ks[2] = {1, 1};
        if (sy_attr_int_or(H, n, "global", 0)) { /* GlobalAveragePool: the whole plane */
            ks[0] = x->dims[2];
            ks[1] = x->dims[3];
        } else {
            sy_attr_ints_copy(H, n, "kernel_shape", ks, 2);
        }
        p->nc = (int32_t)(x->dims[0] * x->dims[1]);
        p->ih = (int32_t)x->dims[2];
        p->iw = (int32_t)x->dims[3];
        p->oh = (int32_t)y->dims[2];
        p->ow = (int32_t)y->dims[3];
        p->kh = (int32_t)ks[0];
        p->kw = (int32_t)ks[1];
        int32_t s[2], d[2], pb[2];
        SY_TRY(window(n, x, y, p->kh, p->kw, s, d, pb));
        p->sh = s[0], p->sw = s[1], p->dh = d[0], p->dw = d[1], p->pt = pb[0], p->pl = pb[1];
        p->xdt = qdt(x->dtype);
        p->ydt = qdt(y->dtype);
        float sx = scale_at(qin(n, 1), 0), sy = scale_at(qin(n, 3), 0);
        p->x_zp = zp_at(qin(n, 2), 0);
        p->y_zp = zp_at(qin(n, 4), 0);
        p->same = sx == sy && p->x_zp == p->y_zp;
        sy_rq_mode mode;
        SY_TRY(rq_mode(n, &mode));
        int32_t lo, hi;
        sy_q_storage_range(y->dtype, &lo, &hi);
        sy_requant r;
        sy_rq_init(&r, mode, (double)sx / sy, p->y_zp, lo, hi);
        to_qk(&r, &p->rq);
        return NULL;
    }
    if (!strcmp(op, "QMatMul") || which == OQ_QLMM || which == OQ_MMI) {
        const sy_tensor *b = qin(n, (uint32_t)k->q_w);
        qk_mm *p = &k->u.qmm;
        k->kind = MK_QMM;
        p->trans_b = sy_attr_int_or(H, n, "transB", 0) != 0;
        p->b_batched = b->rank > 2; /* ONNX: one B per batch, the batch dims checked identical */
        p->k = (int32_t)b->dims[b->rank - (p->trans_b ? 1 : 2)];
        p->nn = (int32_t)b->dims[b->rank - (p->trans_b ? 2 : 1)];
        p->m = (int32_t)x->dims[x->rank - 2 >= 0 ? x->rank - 2 : 0];
        if (x->rank < 2)
            p->m = 1;
        p->batch = (int32_t)(numel(x) / ((int64_t)p->m * p->k));
        p->adt = qdt(x->dtype);
        p->bdt = qdt(b->dtype);
        p->ydt = qdt(y->dtype);
        p->a_zp = zp_at(qin(n, 2), 0);
        if (which == OQ_MMI) {
            SY_TRY(int_zps(n, k, 3, p->nn));
            p->ydt = QK_S32;
        } else {
            SY_TRY(chan_params(n, k, p->nn, 1, 4, 5, 6, 7, 8));
        }
        p->n_bzp = k->q_nzp;
        p->b_zp = k->q_nzp ? k->q_zp : NULL;
        p->bias = k->q_n ? k->q_bias : NULL;
        p->rq = k->q_n ? k->q_rq : NULL;
        return NULL;
    }
    if (!strcmp(op, "QPRelu") || !strcmp(op, "QPow")) {
        /* ops_quant's run_bin for these ops: qk_bin_one's float form (qk.h) */
        const sy_tensor *b = qin(n, 3);
        qk_add *p = &k->u.qadd.q;
        k->kind = MK_QADD;
        memset(&k->u.qadd, 0, sizeof k->u.qadd);
        p->op = op[2] == 'o' ? QK_POW : QK_PRELU;
        p->n = (int32_t)numel(y);
        p->nb = (int32_t)numel(b);
        p->binner = (int32_t)block_bcast(b, y);
        p->adt = qdt(x->dtype);
        p->bdt = qdt(b->dtype);
        p->ydt = qdt(y->dtype);
        p->mode = QK_RQ_ONNX;
        p->za = zp_at(qin(n, 2), 0);
        p->zb = zp_at(qin(n, 5), 0);
        p->zy = zp_at(qin(n, 7), 0);
        float sy = scale_at(qin(n, 6), 0);
        act_clamp(n, sy, p->zy, y->dtype, &p->lo, &p->hi);
        p->ra = scale_at(qin(n, 1), 0);
        p->rb = scale_at(qin(n, 4), 0);
        p->rm = sy;
        return NULL;
    }
    if (!strcmp(op, "QAdd") || !strcmp(op, "QSub") || !strcmp(op, "QMul")) {
        const sy_tensor *b = qin(n, 3);
        qk_add_bc *bc = &k->u.qadd;
        qk_add *p = &bc->q;
        k->kind = MK_QADD;
        p->op = op[1] == 'A' ? QK_ADD : op[1] == 'S' ? QK_SUB : QK_MUL;
        p->n = (int32_t)numel(y);
        p->nb = (int32_t)numel(b);
        p->binner = 0;
        if (numel(x) != numel(y) || (numel(b) != numel(y) && numel(b) != 1)) {
            /* any other broadcast: qk_add_bc_run's stride walk (the fast
             * index / index-modulo loop stays for A of Y's size with B of it or 1) */
            p->binner = -1;
            if (!bcast_strides(x, y, bc->as) || !bcast_strides(b, y, bc->bs))
                return H->status_new(SY_ERR_INTERNAL, "%s: A and B do not broadcast to Y", op);
            for (int32_t d = 0; d < 4; d++)
                bc->yd[d] = d - (4 - y->rank) >= 0 ? (int32_t)y->dims[d - (4 - y->rank)] : 1;
        }
        p->adt = qdt(x->dtype);
        p->bdt = qdt(b->dtype);
        p->ydt = qdt(y->dtype);
        sy_rq_mode mode;
        SY_TRY(rq_mode(n, &mode));
        p->mode = (int32_t)mode;
        p->za = zp_at(qin(n, 2), 0);
        p->zb = zp_at(qin(n, 5), 0);
        p->zy = zp_at(qin(n, 7), 0);
        float sa = scale_at(qin(n, 1), 0), sb = scale_at(qin(n, 4), 0), sy = scale_at(qin(n, 6), 0);
        act_clamp(n, sy, p->zy, y->dtype, &p->lo, &p->hi);
        p->ra = sa / sy;
        p->rb = sb / sy;
        p->rm = sa * sb / sy;
        if (p->op == QK_MUL) { /* as ops_quant's run_bin */
            sy_q_quantize_multiplier((double)sa * sb / sy, &p->mo, &p->so);
            return NULL;
        }
        double twice_max = 2.0 * (sa > sb ? sa : sb);
        sy_q_quantize_multiplier(sa / twice_max, &p->m1, &p->s1);
        sy_q_quantize_multiplier(sb / twice_max, &p->m2, &p->s2);
        sy_q_quantize_multiplier(twice_max / ((double)(1 << 20) * sy), &p->mo, &p->so);
        return NULL;
    }
    if (!strcmp(op, "QNorm")) { /* as ops_quant's run_qnorm */
        char fn[32];
        sy_attr_string_or(H, n, "fn", "", fn, sizeof fn);
        bool bn = !strcmp(fn, "BatchNormalization");
        int32_t axis = 0;
        if (!bn)
            SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", -1), x->rank, false, "axis", &axis));
        const sy_tensor *b = H->node_num_inputs(n) > 6 ? qin(n, 6) : NULL;
        k->kind = MK_QNORM;
        memset(&k->u.qn, 0, sizeof k->u.qn);
        if (!strcmp(fn, "LpNormalization")) { /* as ops_quant's run_qnorm */
            tflk_axisop *ax = &k->u.qn.ax;
            k->u.qn.lp = 1;
            ax->op = TFLK_A_LPNORM;
            ax->mode = TFLK_RQ_F32;
            ax->flags = (int32_t)sy_attr_int_or(H, n, "p", 2);
            ax->outer = (int32_t)sy_dims_prod(x->dims, 0, axis);
            ax->len = (int32_t)x->dims[axis];
            ax->inner = (int32_t)sy_dims_prod(x->dims, axis + 1, x->rank);
            ax->act = (tflk_act){0, -INFINITY, INFINITY};
        } else
        tflk_norm_onnx(&k->u.qn.p, bn ? TFLK_NORM_BATCH : TFLK_NORM_LAYER, x->rank, x->dims, axis,
                       (int32_t)numel(qin(n, 5)), b ? (int32_t)numel(b) : 0, sy_attr_float_or(H, n, "epsilon", 1e-5f));
        k->u.qn.sx = scale_at(qin(n, 1), 0);
        k->u.qn.zx = zp_at(qin(n, 2), 0);
        k->u.qn.sy = scale_at(qin(n, 3), 0);
        k->u.qn.zy = zp_at(qin(n, 4), 0);
        k->u.qn.xdt = qdt(x->dtype);
        k->u.qn.ydt = qdt(y->dtype);
        k->u.qn.n = (int32_t)numel(x);
        H->node_set_scratch(n, 2 * (size_t)numel(x) * sizeof(float));
        return NULL;
    }
    if (!strcmp(op, "QSoftmax") || !strcmp(op, "QLogSoftmax")) { /* as ops_quant's run_softmax (axis, legacy) */
        bool legacy = sy_attr_int_or(H, n, "legacy", 0) != 0;
        int32_t axis;
        SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", -1), x->rank, false, "axis", &axis));
        qk_softmax *p = &k->u.qsm;
        k->kind = MK_QSOFTMAX;
        p->log = op[1] == 'L';
        p->outer = (int32_t)sy_dims_prod(x->dims, 0, axis);
        p->len = (int32_t)(legacy ? sy_dims_prod(x->dims, axis, x->rank) : x->dims[axis]);
        p->inner = legacy ? 1 : (int32_t)sy_dims_prod(x->dims, axis + 1, x->rank);
        p->xdt = qdt(x->dtype);
        p->ydt = qdt(y->dtype);
        p->sx = scale_at(qin(n, 1), 0);
        p->sy = scale_at(qin(n, 3), 0);
        p->y_zp = zp_at(qin(n, 4), 0);
        sy_q_storage_range(y->dtype, &p->lo, &p->hi);
        H->node_set_scratch(n, (size_t)(p->len > 0 ? p->len : 1) * sizeof(float));
        return NULL;
    }
    if (!strcmp(op, "QUnary")) {
        /* the table ops_quant builds per run, built once: its parameters are
         * constants (mcu_quant_check); the package ships it (MK_LUT_S8) */
        tflk_unary u;
        char fn[32];
        if (!qunary_fn(n, &u, fn, sizeof fn))
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "QUnary: unknown fn '%s'", fn);
        int32_t table[256];
        qk_unary_table(&u, scale_at(qin(n, 1), 0), zp_at(qin(n, 2), 0), -128, 127, scale_at(qin(n, 3), 0),
                       zp_at(qin(n, 4), 0), -128, 127, table);
        k->kind = MK_LUT_S8;
        for (int32_t i = 0; i < 256; i++)
            k->u.lut.lut[i] = (int8_t)table[i];
        k->u.lut.min_valid = -128;
        return NULL;
    }
    if (!strcmp(op, "QConcat")) { /* as ops_quant's run_concat for 8-bit codes (qk_concat_run) */
        int32_t axis;
        SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", 0), y->rank, false, "axis", &axis));
        const int32_t m = (int32_t)(H->node_num_inputs(n) - 2) / 3;
        int32_t *arr = calloc((size_t)m * 3, sizeof *arr);
        k->q_rq = calloc((size_t)m, sizeof *k->q_rq);
        k->own = arr;
        if (!arr || !k->q_rq)
            return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
        k->q_n = m;
        sy_rq_mode mode;
        SY_TRY(rq_mode(n, &mode));
        float sy = scale_at(qin(n, 0), 0);
        int32_t zy = zp_at(qin(n, 1), 0), lo, hi;
        sy_q_storage_range(y->dtype, &lo, &hi);
        for (int32_t i = 0; i < m; i++) {
            const sy_tensor *xi = qin(n, 2 + 3 * (uint32_t)i);
            float sx = scale_at(qin(n, 3 + 3 * (uint32_t)i), 0);
            int32_t zx = zp_at(qin(n, 4 + 3 * (uint32_t)i), 0);
            arr[i] = (int32_t)sy_dims_prod(xi->dims, axis, xi->rank);
            arr[m + i] = zx;
            arr[2 * m + i] = sx == sy && zx == zy && xi->dtype == y->dtype;
            sy_requant r;
            sy_rq_init(&r, mode, (double)sx / sy, zy, lo, hi);
            to_qk(&r, &k->q_rq[i]);
        }
        k->kind = MK_QCONCAT;
        k->u.qcat = (qk_concat){m, (int32_t)sy_dims_prod(y->dims, 0, axis), (int32_t)sy_dims_prod(y->dims, axis, y->rank),
                                qdt(qin(n, 2)->dtype), qdt(y->dtype), arr, arr + m, arr + 2 * m, k->q_rq};
        return NULL;
    }
    if (!strcmp(op, "QRNN")) {
        k->kind = MK_QRNN;
        sy_rq_mode mode;
        SY_TRY(rq_mode(n, &mode));
        SY_TRY(qrnn_build(H, n, mode, &k->u.qrnn)); /* the parameters ops_quant computes */
        const qk_rnn *p = &k->u.qrnn.k;
        H->node_set_scratch(n, (size_t)(2 * p->hidden + 4) * sizeof(int32_t));
        return NULL;
    }
    return H->status_new(SY_ERR_UNSUPPORTED, "riscv_mcu: no kernel for %s", op);
}

sy_status *mcu_quant_run(const mcu_node *k, const sy_kernel_io *io)
{
    const void *x = io->inputs[0]->data;
    void *y = io->outputs[0]->data;
    switch (k->kind) {
    case MK_QCONV: qk_conv_run(&k->u.qconv, x, io->inputs[k->q_w]->data, y); break;
    case MK_QTCONV: qk_conv_transpose_run(&k->u.qconv, x, io->inputs[k->q_w]->data, y); break;
    case MK_QPOOL: qk_maxpool_run(&k->u.qpool, x, y); break;
    case MK_QAVGPOOL: qk_avgpool_run(&k->u.qpool, x, y); break;
    case MK_QSOFTMAX: qk_softmax_run(&k->u.qsm, x, y, io->scratch); break;
    case MK_QNORM: {
        float *f = io->scratch, *g = f + k->u.qn.n;
        const sy_tensor *b = io->n_inputs > 6 ? io->inputs[6] : NULL;
        bool bn = k->u.qn.p.mode == TFLK_NORM_BATCH;
        qk_dequantize_run((size_t)k->u.qn.n, x, k->u.qn.xdt, k->u.qn.sx, k->u.qn.zx, f);
        if (k->u.qn.lp)
            tflk_axis_run(&k->u.qn.ax, f, g, NULL);
        else
            tflk_norm_run(&k->u.qn.p, f, io->inputs[5]->data, b ? b->data : NULL, bn ? io->inputs[7]->data : NULL,
                      bn ? io->inputs[8]->data : NULL, g, NULL, NULL);
        qk_quantize_run((size_t)k->u.qn.n, g, k->u.qn.sy, k->u.qn.zy, k->u.qn.ydt, y);
        break;
    }
    case MK_QMM: qk_matmul_run(&k->u.qmm, x, io->inputs[k->q_w]->data, y); break;
    case MK_QCONCAT: {
        const void *xs[MCU_MAX_IO];
        for (int32_t i = 0; i < k->u.qcat.n; i++)
            xs[i] = io->inputs[2 + 3 * i]->data;
        qk_concat_run(&k->u.qcat, xs, y);
        break;
    }
    case MK_QADD:
        if (k->u.qadd.q.binner < 0)
            qk_add_bc_run(&k->u.qadd, x, io->inputs[3]->data, y);
        else
            qk_add_run(&k->u.qadd.q, x, io->inputs[3]->data, y);
        break;
    case MK_QUANT: qk_quantize_run((size_t)k->u.qdq.n, x, k->u.qdq.scale, k->u.qdq.zp, k->u.qdq.dt, y); break;
    case MK_DEQUANT: qk_dequantize_run((size_t)k->u.qdq.n, x, k->u.qdq.dt, k->u.qdq.scale, k->u.qdq.zp, y); break;
    case MK_QRNN: {
        const sy_tensor *sl = io->n_inputs > QRNN_LENS ? io->inputs[QRNN_LENS] : NULL,
                        *h0 = io->n_inputs > QRNN_H0 ? io->inputs[QRNN_H0] : NULL;
        for (int32_t b = 0; sl && b < k->u.qrnn.k.batch; b++) { /* as ops_quant: refused, not clamped */
            int32_t v = ((const int32_t *)sl->data)[b];
            if (v < 0 || v > k->u.qrnn.k.seq)
                return H->status_new(SY_ERR_INVALID_ARGUMENT, "QRNN: sequence_lens '%s'[%d] = %d is outside [0, %d]",
                                     sl->name ? sl->name : "?", (int)b, (int)v, (int)k->u.qrnn.k.seq);
        }
        qk_rnn_run(&k->u.qrnn.k, x, io->inputs[QRNN_W]->data, io->inputs[QRNN_R]->data,
                   sl ? (const int32_t *)sl->data : NULL, h0 ? h0->data : NULL, y, io->outputs[1]->data, io->scratch);
        break;
    }

    default: break;
    }
    return NULL;
}
