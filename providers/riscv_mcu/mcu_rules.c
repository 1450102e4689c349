/*
 * Which nodes the MCU takes: ops-mcu.md Table A (the seed's TFLite
 * operator contract of MindSpore Lite Micro on HiSpark MCUs) and its
 * conversion-time rejections, the dtype rule of targets.md §5.4 (fp32 and
 * int8 only, no fp16), the flash budget, and the kernels this provider has.
 * Every decline quotes the rule it applies and where it is written.
 */
#include "mcu.h"

#define H mcu_H

/* ---- helpers of every rules file (mcu.h) ---------------------------------- */

void mcu_decline(sy_claim *c, sy_reason r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    c->take = false;
    c->reason = r;
    vsnprintf(c->text, sizeof c->text, fmt, ap);
    va_end(ap);
}

const sy_tensor *mcu_in_opt(const sy_node *n, uint32_t i)
{
    return i < H->node_num_inputs(n) ? H->node_input(n, i) : NULL;
}

const sy_tensor *mcu_out_opt(const sy_node *n, uint32_t i)
{
    return i < H->node_num_outputs(n) ? H->node_output(n, i) : NULL;
}

int mcu_rnn_dirs(const sy_node *n, int32_t *reverse)
{
    char dir[24];
    sy_attr_string_or(H, n, "direction", "forward", dir, sizeof dir);
    *reverse = !strcmp(dir, "reverse");
    return !strcmp(dir, "bidirectional") ? 2 : (!strcmp(dir, "forward") || *reverse) ? 1 : 0;
}

static bool act_is(const sy_node *n, const char *def, const char *a, const char *b)
{
    char act[32];
    sy_attr_string_or(H, n, "fused_activation_function", def, act, sizeof act);
    return !strcmp(act, a) || (b && !strcmp(act, b));
}

static const char *act_name(const sy_node *n, char *buf, size_t len)
{
    return sy_attr_string_or(H, n, "fused_activation_function", "NONE", buf, len);
}

/* fused activation ∈ {NONE, RELU} (Table A; the rules say which row).
 * A fused RELU6 is the composition of two seed rows, the op's with NONE
 * followed by #56 Relu6 on the op's output (what a converter honouring the
 * seed writes): the node is taken as that pair, and its note in c->text
 * says so (switchyard explain prints it). The kernel applies the Relu6
 * clamp in its requantization: for int8 with the Relu6 keeping the op's
 * output quantization the pair is clamp(clamp(acc, -128, 127), q(0), q(6))
 * with q(0) >= -128 and q(6) <= 127, the fused clamp exactly (TFLite's
 * int8 RELU6 requantizes by 1.0, an identity, then clamps to the same
 * zp + round(0/s), zp + round(6/s)); for fp32 min(max(x, 0), 6) either way.
 * docs/mcu.md says why this is a rule and not a graph rewrite. Activations
 * with no standalone seed row (RELU_N1_TO_1) or that are no clamp (TANH,
 * SIGN_BIT) are refused. */
static bool check_act(const mcu_cfg *cfg, const sy_node *n, const char *row, sy_claim *c)
{
    if (act_is(n, "NONE", "NONE", "RELU"))
        return true;
    char buf[32];
    act_name(n, buf, sizeof buf);
    if (cfg->rules == MCU_RULES_TFLM && !strcmp(buf, "RELU6"))
        return true;
    if (!strcmp(buf, "RELU6")) {
        const sy_tensor *y = mcu_out_opt(n, 0);
        if (y && (y->rank < 2 || y->rank > 4)) {
            mcu_decline(c, SY_REASON_RANK,
                    "%s: fused RELU6 runs as Table A %s (NONE) followed by #56 Relu6, whose in/out must be 2-4D, got "
                    "rank %d (ops-mcu.md)",
                    H->node_op(n), row, y->rank);
            return false;
        }
        snprintf(c->text, sizeof c->text, "%s with fused RELU6 runs as ops-mcu.md Table A %s (NONE) followed by #56 "
                 "Relu6, the clamp in its requantization", H->node_op(n), row);
        return true;
    }
    mcu_decline(c, SY_REASON_ATTRIBUTE,
            "%s: fused_activation_function must be NONE or RELU (or RELU6, run as #56 Relu6 after it), got %s "
            "(ops-mcu.md Table A %s; no seed row composes with it)",
            H->node_op(n), buf, row);
    return false;
}

static bool rank_in(const sy_node *n, const sy_tensor *t, int32_t lo, int32_t hi, const char *what, const char *row,
                    sy_claim *c)
{
    if (!t || (t->rank >= lo && t->rank <= hi))
        return true;
    if (lo == hi)
        mcu_decline(c, SY_REASON_RANK, "%s: %s must be %dD, got rank %d (ops-mcu.md Table A %s)", H->node_op(n), what, lo,
                t->rank, row);
    else
        mcu_decline(c, SY_REASON_RANK, "%s: %s must be %d-%dD, got rank %d (ops-mcu.md Table A %s)", H->node_op(n), what, lo,
                hi, t->rank, row);
    return false;
}

/* one per-tensor scale and zero point on both (a copy of codes keeps values) */
static bool same_quant(const sy_tensor *a, const sy_tensor *b)
{
    float sa, sb;
    int32_t za, zb;
    return tfl_qparams(a, &sa, &za) && tfl_qparams(b, &sb, &zb) && sa == sb && za == zb;
}

static bool const_input(const sy_node *n, uint32_t i, const char *what, const char *row, sy_claim *c)
{
    const sy_tensor *t = mcu_in_opt(n, i);
    if (!t || t->data)
        return true;
    mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: %s must be an offline constant (ops-mcu.md Table A %s)", H->node_op(n), what,
            row);
    return false;
}

/* Table A rules of ops this provider has no kernel for: a violation is
 * named first, since it is a conversion-time rejection on the real target */
static bool table_a_other(const sy_node *n, const char *op, sy_claim *c)
{
    const sy_tensor *x = mcu_in_opt(n, 0);
    if (!strcmp(op, "CONV_3D")) {
        if (sy_attr_int_or(H, n, "dilation_d_factor", 1) != 1 || sy_attr_int_or(H, n, "dilation_h_factor", 1) != 1 ||
            sy_attr_int_or(H, n, "dilation_w_factor", 1) != 1) {
            mcu_decline(c, SY_REASON_ATTRIBUTE,
                    "CONV_3D: dilation must be 1; dilation != 1 is a conversion-time error, no model is generated "
                    "(ops-mcu.md Table A #2, seed L363-L367)");
            return false;
        }
        if (!act_is(n, "NONE", "NONE", NULL)) {
            mcu_decline(c, SY_REASON_ATTRIBUTE,
                    "CONV_3D: fused_activation_function must be NONE; anything else is a conversion-time error "
                    "(ops-mcu.md Table A #2, seed L363-L367)");
            return false;
        }
    } else if (!strcmp(op, "TRANSPOSE")) {
        const sy_tensor *perm = mcu_in_opt(n, 1);
        if (perm && perm->data && perm->dtype == SY_DT_INT32 && sy_tensor_numel(perm) == 4) {
            const int32_t *pv = perm->data;
            bool nchw = pv[0] == 0 && pv[1] == 3 && pv[2] == 1 && pv[3] == 2;
            bool nhwc = pv[0] == 0 && pv[1] == 2 && pv[2] == 3 && pv[3] == 1;
            if (nchw || nhwc) {
                mcu_decline(c, SY_REASON_ATTRIBUTE,
                        "TRANSPOSE: a single-op Transpose with perm [0,3,1,2] or [0,2,3,1] is not supported "
                        "(ops-mcu.md Table A #42)");
                return false;
            }
        }
    } else if (!strcmp(op, "GATHER")) {
        if (sy_attr_int_or(H, n, "batch_dims", 0) != 0) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "GATHER: batch_dims must be 0 (ops-mcu.md Table A #14)");
            return false;
        }
    } else if (!strcmp(op, "DEPTH_TO_SPACE") || !strcmp(op, "SPACE_TO_DEPTH")) {
        int64_t b = sy_attr_int_or(H, n, "block_size", 0);
        bool d2s = op[0] == 'D';
        if (b < 2 || (x && x->rank == 4 &&
                      (d2s ? x->dims[3] % (b * b) != 0 : (x->dims[1] % b != 0 || x->dims[2] % b != 0)))) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: block_size >= 2 and %s (ops-mcu.md Table A #%s)", op,
                    d2s ? "C % block_size^2 == 0" : "H % block_size == 0 and W % block_size == 0", d2s ? "69" : "70");
            return false;
        }
    } else if (!strcmp(op, "EQUAL") || !strcmp(op, "NOT_EQUAL") || !strcmp(op, "LESS") || !strcmp(op, "LESS_EQUAL") ||
               !strcmp(op, "GREATER") || !strcmp(op, "GREATER_EQUAL")) {
        if (x && x->dtype != SY_DT_FLOAT32 && x->dtype != SY_DT_BOOL) {
            mcu_decline(c, SY_REASON_DTYPE, "%s: inputs must be float32 or bool (ops-mcu.md Table A #60-#65)", op);
            return false;
        }
    } else if (!strcmp(op, "MIRROR_PAD")) {
        char mode[16];
        sy_attr_string_or(H, n, "mode", "REFLECT", mode, sizeof mode);
        if (strcmp(mode, "REFLECT") && strcmp(mode, "SYMMETRIC")) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "MIRROR_PAD: mode must be REFLECT or SYMMETRIC (ops-mcu.md Table A #22)");
            return false;
        }
    }
    return true;
}

/* the int8 ops riscv_mcu runs through a table, with their Table A row; a
 * leading "2 " marks the rows limited to 2-4D (RSQRT, SQRT: not taken,
 * their run-time refusal of negative inputs has no path in a package) */
static const char *lut_row(const char *op)
{
    static const char *const rows[][2] = {
        {"RELU", "2 #7 Relu"},          {"TANH", "2 #8 Tanh"},         {"LOGISTIC", "2 #9 Logistic"},
        {"RELU6", "2 #56 Relu6"},       {"LEAKY_RELU", "2 #57 LeakyRelu"}, {"HARD_SWISH", "2 #58 HardSwish"},
        {"ELU", "2 #68 Elu"},           {"NEG", "2 #73 Neg"},          {"GELU", "2 #76 Gelu"},
        {"ABS", "- #27 Abs"},           {"CEIL", "- #28 Ceil"},        {"COS", "- #29 Cos"},
        {"EXP", "- #30 Exp"},           {"FLOOR", "- #31 Floor"},      {"LOG", "- #32 Log"},
        {"ROUND", "- #33 Round"},       {"SIN", "- #35 Sin"},          {"SQUARE", "- #37 Square"},
        {"SQRT", "- #36 Sqrt"},         {"RSQRT", "- #34 Rsqrt"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (!strcmp(op, rows[i][0]))
            return rows[i][1];
    return NULL;
}

/* "2-4D" of a row, under rules = seed (TFLite Micro takes any rank) */
static bool seed_rank(const mcu_cfg *cfg, const sy_node *n, const sy_tensor *t, const char *what, const char *row,
                      sy_claim *c)
{
    if (cfg->rules != MCU_RULES_SEED || !t || (t->rank >= 2 && t->rank <= 4))
        return true;
    mcu_decline(c, SY_REASON_RANK,
            "%s: %s must be 2-4D, got rank %d (ops-mcu.md Table A %s; rules = tflm accepts any rank as TFLite "
            "Micro does)",
            H->node_op(n), what, t->rank, row);
    return false;
}

/* a copy of int8 codes keeps their meaning only with one quantization */
static bool codes_kept(const sy_node *n, const sy_tensor *x, const sy_tensor *y, sy_claim *c)
{
    if (!x || !y || x->dtype != SY_DT_INT8 || same_quant(x, y))
        return true;
    mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: int8 input '%s' and output '%s' must share one per-tensor quantization (the "
            "op moves codes; TFLite requires it)", H->node_op(n), x->name ? x->name : "", y->name ? y->name : "");
    return false;
}

/* the row of each op of mcu_ops.c */
static const char *move_row(const char *op)
{
    static const char *const rows[][2] = {
        {"GATHER", "#14 Gather"},       {"SPLIT", "#15 Split"},          {"SPLIT_V", "#16 SplitV"},
        {"CONCATENATION", "#17 Concatenation"}, {"TILE", "#19 Tile"},    {"PAD", "#20 Pad"},
        {"PADV2", "#21 PadV2"},         {"MIRROR_PAD", "#22 Mirror_Pad"}, {"SLICE", "#39 Slice"},
        {"STRIDED_SLICE", "#40 StridedSlice"}, {"DIV", "#45 Div"},        {"QUANTIZE", "#51 Quantize"},
        {"DEQUANTIZE", "#52 Dequantize"}, {"LOGICAL_AND", "#59 LogicalAnd"}, {"EQUAL", "#60 Equal"},
        {"GREATER_EQUAL", "#61 GreaterEqual"}, {"GREATER", "#62 Greater"}, {"LESS_EQUAL", "#63 LessEqual"},
        {"LESS", "#64 Less"},           {"NOT_EQUAL", "#65 NotEqual"},   {"LOGICAL_NOT", "#66 LogicalNot"},
        {"LOGICAL_OR", "#67 LogicalOr"}, {"DEPTH_TO_SPACE", "#69 DepthToSpace"},
        {"SPACE_TO_DEPTH", "#70 SpaceToDepth"}, {"PACK", "#77 Pack"},     {"UNPACK", "#78 Unpack"},
        {"REVERSE_V2", "#81 ReverseV2"}, {"MAXIMUM", "#82 Maximum"},     {"MINIMUM", "#83 Minimum"},
        {"GATHER_ND", "#87 GatherNd"},  {"SCATTER_ND", "#88 ScatterND"}, {"SQRT", "#36 Sqrt"},
        {"RSQRT", "#34 Rsqrt"},         {"PRELU", "#53 PRelu"},          {"POW", "#74 Pow"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (!strcmp(op, rows[i][0]))
            return rows[i][1];
    return NULL;
}

/* Table A's rules of the ops of mcu_ops.c (after table_a_other's) */
static bool move_rules(const mcu_cfg *cfg, const sy_node *n, const char *op, sy_claim *c)
{
    uint32_t nin = H->node_num_inputs(n), nout = H->node_num_outputs(n);
    const sy_tensor *x = mcu_in_opt(n, 0), *y = nout ? H->node_output(n, 0) : NULL;
    const char *row = move_row(op);
    if (!row) { /* the fp32 one-input ops: the rows marked 2-4D */
        const char *lr = lut_row(op);
        return !lr || lr[0] != '2' || seed_rank(cfg, n, x, "input", lr + 2, c);
    }
    if (nin > MCU_MAX_IO || nout > MCU_MAX_IO) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: %u inputs and %u outputs; a generated package records at most %d of "
                "each", op, nin, nout, MCU_MAX_IO);
        return false;
    }
    if (!strcmp(op, "SQRT") || !strcmp(op, "RSQRT"))
        return true; /* fp32: any rank */
    if (!strcmp(op, "PRELU") || !strcmp(op, "POW")) {
        const sy_tensor *b = mcu_in_opt(n, 1);
        bool pr = op[1] == 'R';
        /* PRELU: input 1-4D, alpha 0D-4D unidirectionally broadcast, output
         * the input's shape; POW: base and exponent 1-4D, result max 4D */
        if (!rank_in(n, x, 1, 4, pr ? "input" : "base", row, c) ||
            !rank_in(n, b, pr ? 0 : 1, 4, pr ? "alpha" : "exponent", row, c) || !rank_in(n, y, 1, 4, "output", row, c))
            return false;
        if (!b || !x || !y || (x->dtype != SY_DT_FLOAT32 && x->dtype != SY_DT_INT8) || y->dtype != x->dtype) {
            mcu_decline(c, SY_REASON_DTYPE, "%s: %s and output float32 or int8, of one dtype (ops-mcu.md Table A %s)", op,
                    pr ? "input" : "base", row);
            return false;
        }
        if (x->dtype == SY_DT_FLOAT32 && b->dtype != SY_DT_FLOAT32) {
            mcu_decline(c, SY_REASON_DTYPE, "%s: an fp32 %s takes an fp32 %s (ops-mcu.md Table A %s)", op,
                    pr ? "input" : "base", pr ? "alpha" : "exponent", row);
            return false;
        }
        if (x->dtype == SY_DT_INT8) {
            float s;
            int32_t z;
            /* PRELU: alpha float32 only, it stays FP32 under quantization; TFLite's
             * own int8 alpha (prelu.cc's integer form) with rules = tflm. POW: an
             * int8 exponent, as the base */
            bool b_ok = pr ? b->dtype == SY_DT_FLOAT32 || (b->dtype == SY_DT_INT8 && cfg->rules == MCU_RULES_TFLM)
                           : b->dtype == SY_DT_INT8;
            if (!b_ok) {
                mcu_decline(c, SY_REASON_DTYPE, "%s: an int8 %s takes %s, got %s (ops-mcu.md Table A %s%s)", op,
                        pr ? "input" : "base", pr ? "a float32 alpha" : "an int8 exponent", sy_dt_name(b->dtype), row,
                        pr ? ": alpha float32 only, it stays FP32 during quantization; rules = tflm takes TFLite's "
                             "int8 alpha" : ": fp32 or int8");
                return false;
            }
            if (!tfl_qparams(x, &s, &z) || !tfl_qparams(y, &s, &z) || (b->dtype == SY_DT_INT8 && !tfl_qparams(b, &s, &z))) {
                mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: int8 tensors need per-tensor quantization (ops-mcu.md Table A %s: "
                        "full quantization)", op, row);
                return false;
            }
            if (!pr && x->data) {
                /* a constant base below 0: the seed's INT8 POW takes base >= 0 only */
                float bs;
                int32_t bz;
                tfl_qparams(x, &bs, &bz);
                for (int64_t i = 0; i < sy_tensor_numel(x); i++)
                    if (((const int8_t *)x->data)[i] < bz) {
                        mcu_decline(c, SY_REASON_ATTRIBUTE, "POW: int8 base element %lld is negative (ops-mcu.md Table A "
                                "#74: INT8 supports only base >= 0)", (long long)i);
                        return false;
                    }
            }
        }
        if (pr && y && !sy_shape_equal(x->rank, x->dims, y->rank, y->dims)) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "PRELU: alpha must broadcast to the input's shape (unidirectional; "
                    "ops-mcu.md Table A #53)");
            return false;
        }
        return true;
    }
    bool split = !strcmp(op, "SPLIT");
    const sy_tensor *data = split ? mcu_in_opt(n, 1) : x;
    if (!strcmp(op, "SCATTER_ND")) {
        const sy_tensor *upd = mcu_in_opt(n, 1);
        if (!x || x->dtype != SY_DT_INT32 || !upd || (upd->dtype != SY_DT_FLOAT32 && upd->dtype != SY_DT_INT8)) {
            mcu_decline(c, SY_REASON_DTYPE, "SCATTER_ND: indices int32, updates float32 or int8 (ops-mcu.md Table A #88)");
            return false;
        }
        return const_input(n, 2, "shape", "#88 ScatterND", c) && codes_kept(n, upd, y, c);
    }
    if (!strcmp(op, "GATHER_ND")) {
        const sy_tensor *ix = mcu_in_opt(n, 1);
        if (!ix || (ix->dtype != SY_DT_INT32 && ix->dtype != SY_DT_INT64)) {
            mcu_decline(c, SY_REASON_DTYPE, "GATHER_ND: indices must be int32 or int64 (ops-mcu.md Table A #87)");
            return false;
        }
        return codes_kept(n, x, y, c);
    }
    if (!strcmp(op, "GATHER")) {
        const sy_tensor *ix = mcu_in_opt(n, 1);
        if (ix && ix->dtype != SY_DT_INT32 && (cfg->rules == MCU_RULES_SEED || ix->dtype != SY_DT_INT64)) {
            mcu_decline(c, SY_REASON_DTYPE, "GATHER: indices must be int32, got %s (ops-mcu.md Table A #14; rules = tflm "
                    "also takes int64)", sy_dt_name(ix->dtype));
            return false;
        }
        return seed_rank(cfg, n, x, "params", row, c) && seed_rank(cfg, n, ix, "indices", row, c) &&
               seed_rank(cfg, n, y, "output", row, c) && codes_kept(n, x, y, c);
    }
    if (!seed_rank(cfg, n, data, "input", row, c))
        return false;
    if (!strcmp(op, "CONCATENATION") || !strcmp(op, "PACK")) {
        if (op[0] == 'C' && !check_act(cfg, n, row, c))
            return false;
        for (uint32_t i = 1; i < nin; i++)
            if (!seed_rank(cfg, n, mcu_in_opt(n, i), "every input", row, c))
                return false;
        if (op[0] == 'P' && x && y && x->dtype == SY_DT_INT8)
            for (uint32_t i = 0; i < nin; i++)
                if (!codes_kept(n, mcu_in_opt(n, i), y, c))
                    return false;
        return true;
    }
    if (!strcmp(op, "PAD") || !strcmp(op, "PADV2") || !strcmp(op, "MIRROR_PAD")) {
        if (!const_input(n, 1, "paddings", row, c) || (op[3] == 'V' && !const_input(n, 2, "constant_values", row, c)))
            return false;
        if (op[0] == 'P' && x && x->dtype == SY_DT_INT8 && x->rank != 4 && cfg->rules == MCU_RULES_SEED) {
            mcu_decline(c, SY_REASON_RANK, "%s: the int8 quantized case supports only 4D input, got rank %d (ops-mcu.md "
                    "Table A %s; rules = tflm accepts any rank)", op, x->rank, row);
            return false;
        }
        return codes_kept(n, x, y, c);
    }
    if (!strcmp(op, "SLICE"))
        return const_input(n, 1, "begin", row, c) && const_input(n, 2, "size", row, c) && codes_kept(n, x, y, c);
    if (!strcmp(op, "STRIDED_SLICE")) {
        if (!const_input(n, 1, "begin", row, c) || !const_input(n, 2, "end", row, c) ||
            !const_input(n, 3, "strides", row, c))
            return false;
        if (sy_attr_int_or(H, n, "offset", 0)) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "STRIDED_SLICE: offset is fixed false (ops-mcu.md Table A #40)");
            return false;
        }
        int64_t elm = sy_attr_int_or(H, n, "ellipsis_mask", 0);
        if (elm & (elm - 1)) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "STRIDED_SLICE: only one bit of ellipsis_mask may be 1 (ops-mcu.md Table A #40)");
            return false;
        }
        return codes_kept(n, x, y, c);
    }
    if (!strcmp(op, "TILE"))
        return const_input(n, 1, "multiples", row, c) && codes_kept(n, x, y, c);
    if (!strcmp(op, "REVERSE_V2")) {
        const sy_tensor *ax = mcu_in_opt(n, 1);
        if (!const_input(n, 1, "axis", row, c))
            return false;
        int64_t cnt = ax ? sy_tensor_numel(ax) : 0;
        uint32_t seen = 0;
        bool ok = cnt <= 4 && ax && (ax->dtype == SY_DT_INT32 || ax->dtype == SY_DT_INT64);
        for (int64_t i = 0; ok && i < cnt; i++) {
            int64_t a = sy_load_i64(ax->data, ax->dtype, (size_t)i);
            a = a < 0 ? a + x->rank : a;
            ok = a >= 0 && a < x->rank && !((seen >> a) & 1u);
            if (ok)
                seen |= 1u << a;
        }
        if (!ok) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "REVERSE_V2: axis must be unique, in [-rank, rank), at most 4 elements "
                    "(ops-mcu.md Table A #81)");
            return false;
        }
        return codes_kept(n, x, y, c);
    }
    if (!strcmp(op, "SPLIT") || !strcmp(op, "SPLIT_V") || !strcmp(op, "UNPACK") || !strcmp(op, "DEPTH_TO_SPACE") ||
        !strcmp(op, "SPACE_TO_DEPTH")) {
        if (!strcmp(op, "DEPTH_TO_SPACE") || !strcmp(op, "SPACE_TO_DEPTH")) { /* in/out 4D NHWC */
            if (!rank_in(n, x, 4, 4, "input (NHWC)", row, c))
                return false;
        } else if (!const_input(n, split ? 0 : 2, "axis", row, c) || (!strcmp(op, "SPLIT_V") && !const_input(n, 1, "size_splits", row, c))) {
            return false;
        }
        for (uint32_t i = 0; i < nout; i++)
            if (!codes_kept(n, data, H->node_output(n, i), c))
                return false;
        return true;
    }
    /* element-wise two-input ops and (de)quantization */
    const sy_tensor *b = mcu_in_opt(n, 1);
    if (b && !seed_rank(cfg, n, b, "rhs", row, c))
        return false;
    if (!seed_rank(cfg, n, y, "output", row, c))
        return false;
    if (!strcmp(op, "MAXIMUM") || !strcmp(op, "MINIMUM")) {
        if (x && x->dtype == SY_DT_INT8 && (!codes_kept(n, x, y, c) || !codes_kept(n, b, y, c)))
            return false;
        if (!b || b->dtype != x->dtype || !y || y->dtype != x->dtype) {
            mcu_decline(c, SY_REASON_DTYPE, "%s: both inputs and the output must share one dtype (fp32 or int8)", op);
            return false;
        }
        return true;
    }
    if (!strcmp(op, "DIV")) {
        const sy_tensor *b = mcu_in_opt(n, 1);
        if (!x || (x->dtype != SY_DT_FLOAT32 && x->dtype != SY_DT_INT8) || !b || b->dtype != x->dtype || !y ||
            y->dtype != x->dtype) {
            mcu_decline(c, SY_REASON_DTYPE, "DIV: lhs, rhs and output must share one dtype, fp32 or int8 (ops-mcu.md "
                    "Table A #45)");
            return false;
        }
        return check_act(cfg, n, row, c);
    }
    if (!strcmp(op, "LOGICAL_AND") || !strcmp(op, "LOGICAL_OR") || !strcmp(op, "LOGICAL_NOT")) {
        if (x && x->dtype != SY_DT_BOOL) {
            mcu_decline(c, SY_REASON_DTYPE, "%s: bool only (ops-mcu.md Table A %s)", op, row);
            return false;
        }
        return true;
    }
    if (!strcmp(op, "QUANTIZE") || !strcmp(op, "DEQUANTIZE")) {
        const sy_tensor *q = op[0] == 'Q' ? y : x, *f = op[0] == 'Q' ? x : y;
        float sc;
        int32_t zp;
        if (!q || q->dtype != SY_DT_INT8 || !tfl_qparams(q, &sc, &zp) || !f ||
            (f->dtype != SY_DT_FLOAT32 && !(op[0] == 'Q' && f->dtype == SY_DT_INT8))) {
            mcu_decline(c, SY_REASON_DTYPE, "%s: fp32 %s per-tensor int8 (or int8 to int8) on the MCU (ops-mcu.md Table A "
                    "%s)", op, op[0] == 'Q' ? "to" : "from", row);
            return false;
        }
        return true;
    }
    /* comparisons: table_a_other checked float32/bool */
    return true;
}

void mcu_check_node(const mcu_cfg *cfg, const sy_node *n, sy_claim *c)
{
    c->take = false;
    c->text[0] = '\0'; /* a taken node keeps the note of its rule (check_act) */
    if (!cfg->chip) {
        mcu_decline(c, SY_REASON_POLICY, "no target: set [provider.riscv_mcu] target = ws63 or hi3066");
        return;
    }
    const char *op = H->node_op(n), *dom = H->node_domain(n);
    bool quant = mcu_quant_domain(n);
    bool red = !quant && mcu_reduce_has(n); /* the reductions of Tables A and B (mcu_reduce.c) */
    bool nn = !quant && !red && mcu_nn_has(n);    /* transposed / batched / 3-D (mcu_nn.c) */
    bool shape = !quant && !red && !nn && mcu_shape_has(n); /* the shape / norm / resize rows, A and B (mcu_shape.c) */
    bool onnx = !quant && !red && !nn && !shape && mcu_onnx_has(n); /* Table B on the shared kernels (mcu_onnx.c) */
    if (!quant && !onnx && !red && !nn && !shape && (!dom || strcmp(dom, TFL_DOMAIN))) {
        mcu_decline(c, SY_REASON_OP_UNSUPPORTED, "%s (domain '%s'): the MCU kernels are the TFLite-domain ones", op,
                dom ? dom : "");
        return;
    }
    /* dtypes: fp32 and int8 (int32 biases and shapes, int16 LSTM cell state) */
    uint32_t nin = H->node_num_inputs(n), nout = H->node_num_outputs(n);
    for (uint32_t i = 0; i < nin + nout; i++) {
        const sy_tensor *t = i < nin ? H->node_input(n, i) : H->node_output(n, i - nin);
        if (!t)
            continue;
        if (t->dtype == SY_DT_FLOAT16 || t->dtype == SY_DT_BFLOAT16) {
            mcu_decline(c, SY_REASON_DTYPE,
                    "%s: %s '%s' is %s; the MCU runs fp32 and int8 only, no fp16 (targets.md §5.4; the seed: 不支持fp16)",
                    op, i < nin ? "input" : "output", t->name ? t->name : "", sy_dt_name(t->dtype));
            return;
        }
        /* BitShift (Table B #47), Einsum (#60), Unique (#109, Table A #86) and the integer ops of mcu_quant.c
         * are the rows whose seed dtypes include uint8 */
        bool u8_row = (onnx && !strcmp(op, "BitShift")) ||
                      (shape && (!strcmp(op, "Einsum") || !strcmp(op, "Unique") || !strcmp(op, "UNIQUE")));
        if (t->dtype == SY_DT_UINT8 && !t->data && !u8_row && !mcu_quant_takes_u8(n)) {
            mcu_decline(c, SY_REASON_DTYPE, "%s: uint8 activations: the MCU runs fp32 and int8 only (targets.md §5.4)", op);
            return;
        }
        if (t->dtype == SY_DT_INT8 && !t->data && t->quant && t->quant->count > 1) {
            mcu_decline(c, SY_REASON_ATTRIBUTE,
                    "%s: activation '%s' is quantized per channel; activations are always per-tensor "
                    "(ops-mcu.md §5 rule 14)",
                    op, t->name ? t->name : "");
            return;
        }
    }
    if (quant && !mcu_quant_check(n, c))
        return;
    const sy_tensor *x = mcu_in_opt(n, 0), *y = nout ? H->node_output(n, 0) : NULL;
    bool i8 = x && x->dtype == SY_DT_INT8;
    bool known = true;
    if (quant) {
        /* checked by mcu_quant_check */
    } else if (red) {
        if (!mcu_reduce_check(cfg, n, c))
            return;
    } else if (nn) {
        /* a Table A conversion-time rejection first (CONV_3D), then the row's rules */
        if (!table_a_other(n, op, c) || !mcu_nn_check(cfg, n, c))
            return;
    } else if (shape) {
        if (!mcu_shape_check(cfg, n, c))
            return;
    } else if (onnx) {
        if (!mcu_onnx_check(cfg, n, c))
            return;
    } else if (!strcmp(op, "CONV_2D")) {
        if (!rank_in(n, x, 4, 4, "input (NHWC)", "#1 Conv2D", c) || !const_input(n, 1, "filter", "#1 Conv2D", c) ||
            !const_input(n, 2, "bias", "#1 Conv2D", c) || !check_act(cfg, n, "#1 Conv2D", c))
            return;
    } else if (!strcmp(op, "DEPTHWISE_CONV_2D")) {
        if (!rank_in(n, x, 4, 4, "input (NHWC)", "#41 DepthwiseConv2D", c) ||
            !const_input(n, 1, "filter", "#41 DepthwiseConv2D", c) ||
            !const_input(n, 2, "bias", "#41 DepthwiseConv2D", c) || !check_act(cfg, n, "#41 DepthwiseConv2D", c))
            return;
        int64_t mult = x && y && x->rank == 4 && y->rank == 4 && x->dims[3] ? y->dims[3] / x->dims[3] : 1;
        /* over one input channel a depthwise convolution is a convolution
         * with `mult` output channels (the same products and sums: filter
         * [1, kh, kw, mult] is OHWI [mult, kh, kw, 1]), what a converter
         * honouring the seed writes: Table A #1 takes it (person_detect's
         * first layer) */
        if (i8 && mult != 1 && cfg->rules == MCU_RULES_SEED && x->dims[3] == 1) {
            char rl[96] = "";
            if (c->text[0]) /* check_act's note: the fused RELU6 */
                snprintf(rl, sizeof rl, "%s", strstr(c->text, " followed by") ? strstr(c->text, " followed by") : "");
            char *cut = strstr(rl, ", the clamp");
            if (cut)
                *cut = '\0';
            snprintf(c->text, sizeof c->text, "DEPTHWISE_CONV_2D over one input channel, depth_multiplier %lld, runs as "
                     "ops-mcu.md Table A #1 Conv2D with %lld output channels%s", (long long)mult, (long long)mult, rl);
        } else if (i8 && mult != 1 && cfg->rules == MCU_RULES_SEED) {
            mcu_decline(c, SY_REASON_ATTRIBUTE,
                    "DEPTHWISE_CONV_2D: depth_multiplier must be 1 in the int8 quantized case, got %lld "
                    "(ops-mcu.md Table A #41, §5 rule 23; rules = tflm accepts it as TFLite Micro does)",
                    (long long)mult);
            return;
        }
    } else if (!strcmp(op, "MAX_POOL_2D") || !strcmp(op, "AVERAGE_POOL_2D")) {
        const char *row = op[0] == 'M' ? "#3 MaxPool2D" : "#18 AveragePool2D";
        if (!rank_in(n, x, 4, 4, "input (NHWC)", row, c) || !check_act(cfg, n, row, c))
            return;
    } else if (!strcmp(op, "FULLY_CONNECTED")) {
        if (!rank_in(n, x, 2, 4, "input", "#4 FullyConnected", c) ||
            !rank_in(n, mcu_in_opt(n, 1), 2, 2, "filter", "#4 FullyConnected", c) ||
            !const_input(n, 1, "filter", "#4 FullyConnected", c) || !const_input(n, 2, "bias", "#4 FullyConnected", c) ||
            !check_act(cfg, n, "#4 FullyConnected", c))
            return;
        if (!sy_attr_string_is(H, n, "weights_format", "DEFAULT", "DEFAULT")) {
            mcu_decline(c, SY_REASON_ATTRIBUTE,
                    "FULLY_CONNECTED: weights_format must be DEFAULT (ops-mcu.md Table A #4)");
            return;
        }
    } else if (!strcmp(op, "SOFTMAX")) {
        float beta = sy_attr_float_or(H, n, "beta", 1.0f);
        if (beta != 1.0f) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "SOFTMAX: beta must be 1, got %g (ops-mcu.md Table A #6)", (double)beta);
            return;
        }
        if (!rank_in(n, x, 2, 4, "input", "#6 Softmax", c))
            return;
    } else if (!strcmp(op, "LOG_SOFTMAX")) {
        /* input 1D-5D, the last axis; int8 only in TFLite's integer form
         * (its kernel requires output scale 16/256 and zero point 127) */
        if (!rank_in(n, x, 1, 5, "input", "#89 LogSoftmax", c))
            return;
        float ys;
        int32_t yz;
        if (i8 && (!y || !tfl_qparams(y, &ys, &yz) || ys != 16.0f / 256.0f || yz != 127)) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "LOG_SOFTMAX: an int8 output must have scale 16/256 and zero point 127, "
                    "as TFLite's integer kernel requires (ops-mcu.md Table A #89: full-quant INT8)");
            return;
        }
        if (i8 && x && sy_tensor_numel(x) > INT32_MAX) {
            mcu_decline(c, SY_REASON_RANK, "LOG_SOFTMAX: more than 2^31 - 1 elements");
            return;
        }
    } else if (!strcmp(op, "RESHAPE")) {
        const sy_tensor *shape = mcu_in_opt(n, 1);
        if (!rank_in(n, x, 2, 4, "input", "#10 Reshape", c) || !rank_in(n, y, 2, 4, "output", "#10 Reshape", c))
            return;
        if (shape && shape->dtype != SY_DT_INT32) {
            mcu_decline(c, SY_REASON_DTYPE, "RESHAPE: shape must be int32, got %s (ops-mcu.md Table A #10)",
                    sy_dt_name(shape->dtype));
            return;
        }
    } else if (!strcmp(op, "UNIDIRECTIONAL_SEQUENCE_LSTM")) {
        if (cfg->rules == MCU_RULES_SEED) {
            mcu_decline(c, SY_REASON_OP_UNSUPPORTED,
                    "UNIDIRECTIONAL_SEQUENCE_LSTM is not among the 90 TFLite operators of ops-mcu.md Table A (ONNX "
                    "LSTM is float only, §5 rule 31); rules = tflm runs it");
            return;
        }
    } else if (i8 && lut_row(op)) {
        /* int8 one-input ops (a table of output codes): the rows that say
         * "in/out 2-4D"; TFLite Micro takes any rank */
        const char *row = lut_row(op);
        if (row[0] == '2' && cfg->rules == MCU_RULES_SEED && x && (x->rank < 2 || x->rank > 4)) {
            mcu_decline(c, SY_REASON_RANK,
                    "%s: input must be 2-4D, got rank %d (ops-mcu.md Table A %s; rules = tflm accepts any rank as "
                    "TFLite Micro does)",
                    op, x->rank, row + 2);
            return;
        }
    } else if (!strcmp(op, "ADD") || !strcmp(op, "SUB") || !strcmp(op, "MUL")) {
        const char *row = op[0] == 'A' ? "#12 Add" : op[0] == 'S' ? "#13 Sub" : "#11 Mul";
        const sy_tensor *b = mcu_in_opt(n, 1);
        /* "lhs, rhs, out 2-4D"; rules = tflm takes any rank as TFLite Micro does */
        if (cfg->rules == MCU_RULES_SEED && (!rank_in(n, x, 2, 4, "lhs", row, c) || !rank_in(n, b, 2, 4, "rhs", row, c) ||
                                             !rank_in(n, y, 2, 4, "output", row, c)))
            return;
        if (!check_act(cfg, n, row, c))
            return;
        if (!b || b->dtype != x->dtype || !y || y->dtype != x->dtype) {
            mcu_decline(c, SY_REASON_DTYPE, "%s: lhs, rhs and output must share one dtype (fp32 or int8)", op);
            return;
        }
    } else if (!strcmp(op, "TRANSPOSE")) {
        /* the layout permutations first (a conversion-time rejection), then
         * "in/out 2-4D" under rules = seed; perm an offline int32 constant */
        if (!table_a_other(n, op, c) || (cfg->rules == MCU_RULES_SEED && !rank_in(n, x, 2, 4, "input", "#42 Transpose", c)) ||
            !const_input(n, 1, "perm", "#42 Transpose", c))
            return;
        if (x && x->dtype == SY_DT_INT8 && y && !same_quant(x, y)) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "TRANSPOSE: int8 input and output must share one quantization");
            return;
        }
    } else if (!strcmp(op, "SQUEEZE") || !strcmp(op, "EXPAND_DIMS")) {
        /* Table A #25, #26: any rank */
    } else if (mcu_ops_has(op, x ? x->dtype : SY_DT_UNDEFINED) &&
               (x && (x->dtype == SY_DT_FLOAT32 || x->dtype == SY_DT_INT8 || x->dtype == SY_DT_INT32 ||
                      x->dtype == SY_DT_BOOL || x->dtype == SY_DT_INT64))) {
        /* mcu_ops.c: the rule of its row first (table_a_other's, then its own) */
        if (!table_a_other(n, op, c) || !move_rules(cfg, n, op, c))
            return;
    } else {
        known = false;
        if (!table_a_other(n, op, c))
            return;
    }
    if (!known) {
        mcu_decline(c, SY_REASON_NO_KERNEL,
                "%s: no MCU kernel in this build (it has CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, the pools, "
                "SOFTMAX, the LSTM, the reshapes, ADD/SUB/MUL, the data-movement ops, comparisons, the one-input "
                "ops and the reductions; docs/mcu.md lists them)",
                op);
        return;
    }
    /* weights against flash */
    uint64_t wbytes = 0;
    for (uint32_t i = 0; i < nin; i++) {
        const sy_tensor *t = H->node_input(n, i);
        if (t && t->data)
            wbytes += t->nbytes;
    }
    if (wbytes > cfg->flash_budget) {
        mcu_decline(c, SY_REASON_MEMORY, "%s: weights of %llu bytes exceed the flash budget of %llu bytes (%s)", op,
                (unsigned long long)wbytes, (unsigned long long)cfg->flash_budget, cfg->chip->name);
        return;
    }
    c->take = true;
    c->reason = SY_REASON_TAKEN;
}
