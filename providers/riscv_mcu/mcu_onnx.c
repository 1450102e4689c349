/*
 * riscv_mcu: ONNX (domain "") operators of ops-mcu.md Table B on the same
 * portable kernels as the TFLite ones (mcu_ops.c, riscv_mcu.c): the float
 * one-input ops (tflk_unary.c), the broadcasting two-input ops, comparisons
 * and logical ops (tflk_binary.c; PRelu, Pow, Mod and uint8 BitShift on the
 * same walk), and data
 * movement — Transpose, Concat, Gather, GatherND, ScatterND, Scatter,
 * ScatterElements, Tile, Expand, DepthToSpace, SpaceToDepth (views of
 * tflk_strided.c, tflk_move.c) and the reshapes (a copy). Data movement
 * takes fp32, int8, int32 and bool tensors as they are. fp32 Conv, the
 * pools, Gemm, MatMul and Softmax run on tflk_conv_f32 / tflk_pool_f32 /
 * tflk_fc_f32 / tflk_softmax (LogSoftmax too): NCHW through NHWC copies in the node's
 * scratch, weights rearranged at prepare (mcu.h: wt, bt, pre, post); 5-D
 * Conv, batched MatMul, Gemm transA, ConvTranspose, LSTM and GRU are
 * mcu_nn.c's. The rules of each row are mcu_onnx_check's, quoting Table B.
 */
#include "mcu.h"

#define H mcu_H

typedef struct onnx_row {
    const char *op;
    mcu_kind kind;
    int32_t code; /* TFLK_U_* or TFLK_* of the kind */
    const char *row;
} onnx_row;

static const onnx_row rows[] = {
    {"Relu", MK_UNARY_F32, TFLK_U_RELUN, "#7 Relu"},
    {"Tanh", MK_UNARY_F32, TFLK_U_TANH, "#9 Tanh"},
    {"Sigmoid", MK_UNARY_F32, TFLK_U_LOGISTIC, "#10 Sigmoid"},
    {"Abs", MK_UNARY_F32, TFLK_U_ABS, "#27 Abs"},
    {"Ceil", MK_UNARY_F32, TFLK_U_CEIL, "#28 Ceil"},
    {"Exp", MK_UNARY_F32, TFLK_U_EXP, "#30 Exp"},
    {"Floor", MK_UNARY_F32, TFLK_U_FLOOR, "#31 Floor"},
    {"Log", MK_UNARY_F32, TFLK_U_LOG, "#32 Log"},
    {"Round", MK_UNARY_F32, TFLK_U_ROUND, "#33 Round"},
    {"Sqrt", MK_UNARY_F32, TFLK_U_SQRT, "#35 Sqrt"},
    {"Clip", MK_UNARY_F32, TFLK_U_CLIP, "#48 Clip"},
    {"LeakyRelu", MK_UNARY_F32, TFLK_U_LEAKY, "#61 LeakyRelu"},
    {"HardSwish", MK_UNARY_F32, TFLK_U_HSWISH, "#62 HardSwish"},
    {"Elu", MK_UNARY_F32, TFLK_U_ELUA, "#79 Elu"},
    {"Gelu", MK_UNARY_F32, TFLK_U_GELU, "#83 Gelu"},
    {"Erf", MK_UNARY_F32, TFLK_U_ERF, "#93 Erf"},
    {"HardSigmoid", MK_UNARY_F32, TFLK_U_HSIGMOID, "#94 HardSigmoid"},
    {"Celu", MK_UNARY_F32, TFLK_U_CELU, "#95 Celu"},
    {"Selu", MK_UNARY_F32, TFLK_U_SELU, "#96 Selu"},
    {"ThresholdedRelu", MK_UNARY_F32, TFLK_U_THRELU, "#108 ThresholdedRelu"},
    {"Softsign", MK_UNARY_F32, TFLK_U_SOFTSIGN, "#110 Softsign"},
    {"Softplus", MK_UNARY_F32, TFLK_U_SOFTPLUS, "#111 Softplus"},
    {"Neg", MK_UNARY_F32, TFLK_U_NEG, "#115 Neg"},
    {"Tan", MK_UNARY_F32, TFLK_U_TAN, "#8 Tan"},
    {"Cos", MK_UNARY_F32, TFLK_U_COS, "#29 Cos"},
    {"Sin", MK_UNARY_F32, TFLK_U_SIN, "#34 Sin"},
    {"Swish", MK_UNARY_F32, TFLK_U_SWISH, "#63 Swish"},
    {"PRelu", MK_BIN_F32, TFLK_PRELU, "#57 PRelu"},
    {"Pow", MK_BIN_F32, TFLK_POW, "#116 Pow"},
    {"Mod", MK_BIN_F32, TFLK_FMOD, "#46 Mod"},
    {"BitShift", MK_SHIFT_U8, TFLK_SHL, "#47 BitShift"},
    {"Mul", MK_BIN_F32, TFLK_MUL, "#12 Mul"},
    {"Add", MK_BIN_F32, TFLK_ADD, "#13 Add"},
    {"Sub", MK_BIN_F32, TFLK_SUB, "#14 Sub"},
    {"Div", MK_BIN_F32, TFLK_DIV, "#45 Div"},
    {"Max", MK_BIN_F32, TFLK_MAXN, "#97 Max"},
    {"Min", MK_BIN_F32, TFLK_MINN, "#98 Min"},
    {"Sum", MK_BIN_F32, TFLK_ADD, "#99 Sum"},
    {"And", MK_CMP_B, TFLK_AND, "#64 And"},
    {"Equal", MK_CMP_F32, TFLK_EQ, "#65 Equal"},
    {"GreaterOrEqual", MK_CMP_F32, TFLK_GE, "#66 GreaterOrEqual"},
    {"Greater", MK_CMP_F32, TFLK_GT, "#67 Greater"},
    {"LessOrEqual", MK_CMP_F32, TFLK_LE, "#68 LessOrEqual"},
    {"Less", MK_CMP_F32, TFLK_LT, "#69 Less"},
    {"Not", MK_NOT_B, 0, "#70 Not"},
    {"Or", MK_CMP_B, TFLK_OR, "#71 Or"},
    {"Xor", MK_CMP_B, TFLK_XOR, "#72 Xor"},
    {"Squeeze", MK_COPY, 0, "#24 Squeeze"},
    {"Unsqueeze", MK_COPY, 0, "#25 Unsqueeze"},
    {"Flatten", MK_COPY, 0, "#26 Flatten"},
    {"Dropout", MK_COPY, 0, "#73 Dropout"},
    {"Identity", MK_COPY, 0, "#74 Identity"},
    {"Transpose", MK_TRANSPOSE, 0, "#42 Transpose"},
    {"Concat", MK_CONCAT, 0, "#17 Concat"},
    {"Gather", MK_GATHER, 0, "#15 Gather"},
    {"GatherND", MK_GATHER_ND, 0, "#88 GatherND"},
    {"ScatterND", MK_SCATTER_ND_SET, 0, "#91 ScatterND"},
    {"Scatter", MK_SCATTER_EL, 0, "#89 Scatter"},
    {"ScatterElements", MK_SCATTER_EL, 0, "#90 ScatterElements"},
    {"Tile", MK_VIEW, 0, "#21 Tile"},
    {"Expand", MK_VIEW, 0, "#78 Expand"},
    {"DepthToSpace", MK_VIEW, 0, "#80 DepthToSpace"},
    {"SpaceToDepth", MK_VIEW, 0, "#81 SpaceToDepth"},
    /* fp32 on the TFLite conv / fully-connected / pool / softmax kernels */
    {"Conv", MK_CONV_F32, 0, "#1 Conv"},
    {"MaxPool", MK_POOL_F32, 1, "#3 MaxPool"},
    {"Gemm", MK_FC_F32, 0, "#4 Gemm"},
    {"MatMul", MK_FC_F32, 0, "#5 Matmul"},
    {"Softmax", MK_SOFTMAX_F32, 0, "#6 Softmax"},
    {"LogSoftmax", MK_SOFTMAX_F32, 1, "#112 LogSoftmax"},
    {"AveragePool", MK_POOL_F32, 0, "#18 AveragePool"},
    {"GlobalMaxPool", MK_POOL_F32, 1, "#40 GlobalMaxPool"},
    {"GlobalAveragePool", MK_POOL_F32, 0, "#41 GlobalAveragePool"},
};

static const onnx_row *row_of(const sy_node *n)
{
    const char *dom = H->node_domain(n), *op = H->node_op(n);
    if (dom && *dom && strcmp(dom, "ai.onnx"))
        return NULL;
    for (size_t i = 0; i < SY_COUNT_OF(rows); i++)
        if (!strcmp(op, rows[i].op))
            return &rows[i];
    return NULL;
}

bool mcu_onnx_has(const sy_node *n) { return row_of(n) != NULL; }

/* the kinds that move elements as they are (any fixed-size dtype) */
static bool moves(mcu_kind k)
{
    return k == MK_COPY || k == MK_TRANSPOSE || k == MK_CONCAT || k == MK_GATHER || k == MK_GATHER_ND ||
           k == MK_SCATTER_ND_SET || k == MK_SCATTER_EL || k == MK_VIEW;
}

static bool const_in(const sy_node *n, uint32_t i)
{
    const sy_tensor *t = i < H->node_num_inputs(n) ? H->node_input(n, i) : NULL;
    return !t || t->data;
}

static bool ints_all(const sy_node *n, const char *attr, int64_t want)
{
    int64_t v[SY_MAX_RANK * 2];
    int64_t cnt = sy_attr_ints_copy(H, n, attr, v, SY_COUNT_OF(v));
    for (int64_t i = 0; i < cnt && i < (int64_t)SY_COUNT_OF(v); i++)
        if (v[i] != want)
            return false;
    return true;
}

/* Table B's rules of the conv, pool and matrix rows, and what the TFLite
 * kernels they run on take */
static bool check_nn(const sy_node *n, const onnx_row *r, const sy_tensor *x, const sy_tensor *y, sy_claim *c)
{
    const char *op = r->op;
    uint32_t nin = H->node_num_inputs(n);
    char ap[16];
    sy_attr_string_or(H, n, "auto_pad", "NOTSET", ap, sizeof ap);
    if (r->kind == MK_FC_F32) {
        const sy_tensor *b = nin > 1 ? H->node_input(n, 1) : NULL;
        if (x->rank != 2 || !b || b->rank != 2 || y->rank != 2) {
            mcu_decline(c, SY_REASON_RANK, "%s: 2-D A and B on the MCU (the fully-connected kernel; ops-mcu.md Table B "
                     "%s: rank 2), got ranks %d and %d", op, r->row, x->rank, b ? b->rank : 0);
            return false;
        }
        if (!b->data) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: B must be a constant (ops-mcu.md Table B %s: B const; the MCU "
                     "kernel takes it as weights in flash)", op, r->row);
            return false;
        }
        if (!strcmp(op, "Gemm")) {
            float alpha = sy_attr_float_or(H, n, "alpha", 1.0f);
            if (alpha != 1.0f) {
                mcu_decline(c, SY_REASON_ATTRIBUTE, "Gemm: alpha must be 1.0, got %g (ops-mcu.md Table B #4)",
                         (double)alpha);
                return false;
            }
            /* transA = 1 runs on the batched-matmul kernel (mcu_nn.c) */
            const sy_tensor *cc = nin > 2 ? H->node_input(n, 2) : NULL;
            int64_t N = y->dims[1];
            if (cc && sy_attr_float_or(H, n, "beta", 1.0f) != 0.0f) {
                int64_t cn = sy_tensor_numel(cc);
                bool row = cc->rank <= 1 || (cc->rank == 2 && cc->dims[0] == 1);
                if (!cc->data || cc->dtype != SY_DT_FLOAT32 || !row || (cn != 1 && cn != N)) {
                    mcu_decline(c, SY_REASON_ATTRIBUTE, "Gemm: C must be a constant fp32 of 1 or N = %lld elements "
                             "broadcast over the rows (ops-mcu.md Table B #4: C 1D const)", (long long)N);
                    return false;
                }
            }
        }
        return true;
    }
    if (x->rank != 3 && x->rank != 4) {
        mcu_decline(c, SY_REASON_RANK, "%s: X must be 3D or 4D (NCW/NCHW), got rank %d (ops-mcu.md Table B %s)", op,
                 x->rank, r->row);
        return false;
    }
    if (r->kind == MK_CONV_F32) {
        const sy_tensor *w = nin > 1 ? H->node_input(n, 1) : NULL, *b = nin > 2 ? H->node_input(n, 2) : NULL;
        if (!w || !w->data || w->rank != x->rank || w->dtype != SY_DT_FLOAT32 || (b && !b->data)) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "Conv: W (of X's rank) and B must be constants (ops-mcu.md Table B #1)");
            return false;
        }
        /* Table B #1's "auto_pad = NOTSET only" is a converter's input rule:
         * SAME_* and VALID resolve to explicit pads with the same result
         * (lead_pads), as for the int8 QConv (mcu_quant.c) */
        if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID") && strcmp(ap, "SAME_UPPER") && strcmp(ap, "SAME_LOWER")) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "Conv: auto_pad %s (ops-mcu.md Table B #1)", ap);
            return false;
        }
        int64_t g = sy_attr_int_or(H, n, "group", 1);
        if (g != 1) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "Conv: group must be 1, got %lld (ops-mcu.md Table B #1: group = 1 only)",
                     (long long)g);
            return false;
        }
        return true;
    }
    bool global = !strncmp(op, "Global", 6);
    if (global)
        return true;
    if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID") && strcmp(ap, "SAME_UPPER") && strcmp(ap, "SAME_LOWER")) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: auto_pad %s (ops-mcu.md Table B %s)", op, ap, r->row);
        return false;
    }
    if (sy_attr_int_or(H, n, "ceil_mode", 0) != 0) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: ceil_mode must be 0 (ops-mcu.md Table B %s: floor only)", op, r->row);
        return false;
    }
    if (!ints_all(n, "dilations", 1)) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: dilations must be 1 (ops-mcu.md Table B %s: dilations = 1 only)", op,
                 r->row);
        return false;
    }
    if (sy_attr_int_or(H, n, "storage_order", 0) != 0) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: storage_order must be 0 (ops-mcu.md Table B %s)", op, r->row);
        return false;
    }
    if (!strcmp(op, "MaxPool") && H->node_num_outputs(n) > 1 && H->node_output(n, 1)) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "MaxPool: the dual-output form (with Indices) is not supported (ops-mcu.md "
                 "Table B #3)");
        return false;
    }
    if (!strcmp(op, "AveragePool") && sy_attr_int_or(H, n, "count_include_pad", 0) != 0 && !ints_all(n, "pads", 0)) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "AveragePool: count_include_pad = 1 with padding: the MCU kernel averages "
                 "the cells inside the input only (ops-mcu.md Table B #18 does not mention count_include_pad)");
        return false;
    }
    return true;
}

/* the two-input rows whose int8 form is ONNX's integer op on the codes */
static bool int8_codes(const char *op) { return !strcmp(op, "Div") || !strcmp(op, "Max") || !strcmp(op, "Min"); }

bool mcu_onnx_check(const mcu_cfg *cfg, const sy_node *n, sy_claim *c)
{
    (void)cfg;
    const onnx_row *r = row_of(n);
    const char *op = r->op;
    uint32_t nin = H->node_num_inputs(n), nout = H->node_num_outputs(n);
    const sy_tensor *x = nin ? H->node_input(n, 0) : NULL, *y = nout ? H->node_output(n, 0) : NULL;
    if (!x || !y)
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: an input and an output are required", op), false;
    sy_dtype dt = x->dtype;
    /* the comparisons also compare bools: Table B #65-#69 give A and B as
     * "float32 or bool" (the seed: 数据类型仅支持float32、bool on the
     * inputs) and C as bool, so bool is an input dtype, false < true */
    bool want_bool = r->kind == MK_CMP_B || r->kind == MK_NOT_B || (r->kind == MK_CMP_F32 && dt == SY_DT_BOOL);
    if (moves(r->kind)) {
        if (dt != SY_DT_FLOAT32 && dt != SY_DT_INT8 && dt != SY_DT_INT32 && dt != SY_DT_BOOL && dt != SY_DT_INT64) {
            mcu_decline(c, SY_REASON_DTYPE, "%s: %s data: the MCU moves fp32, int8, int32 and bool tensors", op,
                     sy_dt_name(dt));
            return false;
        }
    } else if (r->kind == MK_SHIFT_U8) {
        if (dt != SY_DT_UINT8) {
            mcu_decline(c, SY_REASON_DTYPE, "BitShift: %s inputs; the MCU kernel is uint8 (ops-mcu.md Table B #47: "
                     "uint8)", sy_dt_name(dt));
            return false;
        }
    } else if (dt == SY_DT_INT8 && int8_codes(op)) {
        /* Table B #45, #97, #98 list int8: ONNX int8 tensors carry no scale, so
         * the op computes on the codes as integers (ONNX's integer Div, Max, Min) */
    } else if (want_bool ? dt != SY_DT_BOOL : dt != SY_DT_FLOAT32) {
        mcu_decline(c, SY_REASON_DTYPE, "%s: %s inputs; the MCU kernel is %s (ops-mcu.md Table B %s; int8 runs as the "
                 "switchyard.quant ops of a quantized model)", op, sy_dt_name(dt), want_bool ? "bool" : "fp32", r->row);
        return false;
    }
    if (nin > MCU_MAX_IO || nout > MCU_MAX_IO) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: %u inputs, %u outputs; a package records at most %d", op, nin, nout,
                 MCU_MAX_IO);
        return false;
    }
    if (r->kind == MK_BIN_F32 && nin != 2) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: exactly two inputs on the MCU, got %u (ops-mcu.md Table B %s)", op, nin,
                 r->row);
        return false;
    }
    if ((r->kind == MK_BIN_F32 || r->kind == MK_CMP_F32 || r->kind == MK_CMP_B || r->kind == MK_SHIFT_U8) &&
        (nin < 2 || !H->node_input(n, 1) || H->node_input(n, 1)->dtype != dt)) {
        mcu_decline(c, SY_REASON_DTYPE, "%s: both inputs must be %s on the MCU, got %s (ops-mcu.md Table B %s)", op,
                 sy_dt_name(dt), nin > 1 && H->node_input(n, 1) ? sy_dt_name(H->node_input(n, 1)->dtype) : "none",
                 r->row);
        return false;
    }
    if (!strcmp(op, "Mod") && sy_attr_int_or(H, n, "fmod", 0) != 1) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "Mod: fmod must be 1 on fp32 inputs (ops-mcu.md Table B #46: fp32; ONNX "
                 "requires fmod = 1 for floating-point inputs)");
        return false;
    }
    if (!strcmp(op, "Dropout") && nin > 2 && H->node_input(n, 2)) {
        const sy_tensor *tm = H->node_input(n, 2);
        if (!tm->data || tm->dtype != SY_DT_BOOL || *(const uint8_t *)tm->data) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "Dropout: training_mode must be a constant false on the MCU (inference "
                     "is the identity; ops-mcu.md Table B #73)");
            return false;
        }
    }
    if (!strcmp(op, "Dropout") && nout > 1 && H->node_output(n, 1)) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "Dropout: the mask output is not produced on the MCU (ops-mcu.md Table B #73)");
        return false;
    }
    if (!strcmp(op, "Clip") && (!const_in(n, 1) || !const_in(n, 2))) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "Clip: min and max must be constants on the MCU (ops-mcu.md Table B #48)");
        return false;
    }
    if (!strcmp(op, "Gelu")) {
        char a[16];
        sy_attr_string_or(H, n, "approximate", "none", a, sizeof a);
        if (strcmp(a, "none") && strcmp(a, "tanh")) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "Gelu: approximate must be none or tanh (ops-mcu.md Table B #83)");
            return false;
        }
    }
    if ((!strcmp(op, "Tile") || !strcmp(op, "Expand")) && !const_in(n, 1)) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: %s must be a constant (ops-mcu.md Table B %s)", op,
                 op[0] == 'T' ? "repeats" : "shape", r->row);
        return false;
    }
    if (!strcmp(op, "GatherND") && sy_attr_int_or(H, n, "batch_dims", 0) != 0) {
        mcu_decline(c, SY_REASON_ATTRIBUTE, "GatherND: batch_dims must be 0 on the MCU (ops-mcu.md Table B #88)");
        return false;
    }
    if (!strcmp(op, "ScatterND") || !strcmp(op, "ScatterElements")) {
        char red[16];
        sy_attr_string_or(H, n, "reduction", "none", red, sizeof red);
        if (strcmp(red, "none")) {
            mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: reduction must be none, got %s (ops-mcu.md Table B %s)", op, red,
                     r->row);
            return false;
        }
    }
    if ((!strcmp(op, "DepthToSpace") || !strcmp(op, "SpaceToDepth")) && x->rank != 4) {
        mcu_decline(c, SY_REASON_RANK, "%s: input must be 4D NCHW, got rank %d (ops-mcu.md Table B %s)", op, x->rank,
                 r->row);
        return false;
    }
    if ((r->kind == MK_CONV_F32 || r->kind == MK_POOL_F32 || r->kind == MK_FC_F32) && !check_nn(n, r, x, y, c))
        return false;
    if (r->kind == MK_SOFTMAX_F32 && x->rank < 1) {
        mcu_decline(c, SY_REASON_RANK, "%s: a scalar input (ops-mcu.md Table B %s: 2-4D)", op, r->row);
        return false;
    }
    if (x->rank > TFLK_BIN_RANK || y->rank > TFLK_BIN_RANK || sy_tensor_numel(y) > INT32_MAX / 8 ||
        sy_tensor_numel(x) > INT32_MAX / 8) {
        mcu_decline(c, SY_REASON_RANK, "%s: rank above %d or more than 2^28 elements: the MCU kernels index with int32", op,
                 TFLK_BIN_RANK);
        return false;
    }
    return true;
}

static float const_f(const sy_node *n, uint32_t i, const char *attr, float def)
{
    const sy_tensor *t = i < H->node_num_inputs(n) ? H->node_input(n, i) : NULL;
    if (t && t->data && t->dtype == SY_DT_FLOAT32 && sy_tensor_numel(t) == 1)
        return *(const float *)t->data;
    return attr ? sy_attr_float_or(H, n, attr, def) : def;
}

static sy_status *ints_of(const sy_node *n, uint32_t i, int64_t *out, int64_t *cnt)
{
    const sy_tensor *t = H->node_input(n, i);
    if (!t || !t->data || (t->dtype != SY_DT_INT64 && t->dtype != SY_DT_INT32) || sy_tensor_numel(t) > SY_MAX_RANK)
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "%s: input %u must be a constant int64 vector", H->node_op(n), i);
    *cnt = sy_tensor_numel(t);
    for (int64_t k = 0; k < *cnt; k++)
        out[k] = sy_load_i64(t->data, t->dtype, (size_t)k);
    return NULL;
}

/* one view of x into y over `rank` dims of `len` with element steps */
static sy_status *one_view(mcu_node *k, const sy_tensor *x, int32_t rank, const int64_t *len, const int64_t *step)
{
    k->own = calloc(1, sizeof(tflk_strided) + sizeof(int64_t));
    if (!k->own)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    k->view_off = k->own;
    k->views = (tflk_strided *)(void *)(k->view_off + 1);
    k->n_views = 1;
    tflk_strided *p = k->views;
    int32_t r = 0;
    for (int32_t d = 0; d < rank; d++) {
        if (len[d] == 1 && rank - d > TFLK_BIN_RANK - r)
            continue;
        if (r == TFLK_BIN_RANK)
            return H->status_new(SY_ERR_UNSUPPORTED, "%s: the view needs more than %d dims", k->op, TFLK_BIN_RANK);
        p->dims[r] = (int32_t)len[d];
        p->st[r] = (int32_t)step[d];
        r++;
    }
    if (!r)
        p->dims[r++] = 1;
    p->rank = r;
    p->esize = (int32_t)sy_dt_size(x->dtype);
    return NULL;
}

/* the spatial attribute `attr` of a 3D/4D node as (h, w): 1-D forms have H = 1 */
static void hw_attr(const sy_node *n, const char *attr, int32_t rank, int64_t def, int64_t *h, int64_t *w)
{
    int64_t v[4] = {def, def, def, def};
    int64_t cnt = sy_attr_ints_copy(H, n, attr, v, 4);
    if (rank == 3) {
        *h = def;
        *w = cnt >= 1 ? v[0] : def;
    } else {
        *h = cnt >= 1 ? v[0] : def;
        *w = cnt >= 2 ? v[1] : def;
    }
}

/* the leading pads (top, left) of a conv/pool: `pads` is [begins..., ends...];
 * the trailing ones follow from the output's size (the kernels skip cells
 * outside the input) */
static void lead_pads(const sy_node *n, int32_t rank, int64_t ih, int64_t iw, int64_t oh, int64_t ow, int64_t kh,
                      int64_t kw, int64_t sh, int64_t sw, int64_t *pt, int64_t *pl)
{
    char ap[16];
    sy_attr_string_or(H, n, "auto_pad", "NOTSET", ap, sizeof ap);
    *pt = *pl = 0;
    if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
        int64_t th = (oh - 1) * sh + kh - ih, tw = (ow - 1) * sw + kw - iw;
        th = th > 0 ? th : 0;
        tw = tw > 0 ? tw : 0;
        bool lower = !strcmp(ap, "SAME_LOWER"); /* the odd cell at the beginning */
        *pt = lower ? th - th / 2 : th / 2;
        *pl = lower ? tw - tw / 2 : tw / 2;
        return;
    }
    if (strcmp(ap, "NOTSET"))
        return; /* VALID */
    int64_t v[4] = {0, 0, 0, 0};
    sy_attr_ints_copy(H, n, "pads", v, 4);
    if (rank == 3)
        *pl = v[0];
    else {
        *pt = v[0];
        *pl = v[1];
    }
}

/* NCHW x and y around an NHWC kernel (mcu.h: pre, post, the scratch) */
static void nchw_views(sy_node *n, mcu_node *k, int64_t N, int64_t C, int64_t IH, int64_t IW, int64_t OC,
                       int64_t OH, int64_t OW)
{
    k->nchw = 1;
    k->pre = (tflk_strided){4, 4, {(int32_t)N, (int32_t)IH, (int32_t)IW, (int32_t)C, 0, 0},
                            {(int32_t)(C * IH * IW), (int32_t)IW, 1, (int32_t)(IH * IW), 0, 0}};
    k->post = (tflk_strided){4, 4, {(int32_t)N, (int32_t)OC, (int32_t)OH, (int32_t)OW, 0, 0},
                             {(int32_t)(OH * OW * OC), 1, (int32_t)(OW * OC), (int32_t)OC, 0, 0}};
    k->pre_floats = (size_t)(N * C * IH * IW);
    H->node_set_scratch(n, (k->pre_floats + (size_t)(N * OC * OH * OW)) * sizeof(float));
}

static sy_status *prep_conv_pool(sy_node *n, mcu_node *k, const onnx_row *r)
{
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_output(n, 0);
    int32_t rank = x->rank;
    int64_t N = x->dims[0], C = x->dims[1], IH = rank == 4 ? x->dims[2] : 1, IW = x->dims[rank - 1];
    int64_t OC = y->dims[1], OH = rank == 4 ? y->dims[2] : 1, OW = y->dims[rank - 1];
    int64_t kh, kw, sh, sw, pt, pl;
    bool global = !strncmp(r->op, "Global", 6);
    if (r->kind == MK_CONV_F32) {
        const sy_tensor *w = H->node_input(n, 1);
        kh = rank == 4 ? w->dims[2] : 1;
        kw = w->dims[rank - 1];
        if (w->dims[0] != OC || w->dims[1] != C)
            return H->status_new(SY_ERR_SHAPE, "Conv: W [%lld, %lld, ...] for %lld input and %lld output channels",
                                 (long long)w->dims[0], (long long)w->dims[1], (long long)C, (long long)OC);
    } else if (global) {
        kh = IH;
        kw = IW;
    } else {
        hw_attr(n, "kernel_shape", rank, 1, &kh, &kw);
    }
    if (global)
        sh = sw = 1;
    else
        hw_attr(n, "strides", rank, 1, &sh, &sw);
    if (global)
        pt = pl = 0;
    else
        lead_pads(n, rank, IH, IW, OH, OW, kh, kw, sh, sw, &pt, &pl);
    if (r->kind == MK_CONV_F32) {
        int64_t dh, dw;
        hw_attr(n, "dilations", rank, 1, &dh, &dw);
        const sy_tensor *w = H->node_input(n, 1), *b = H->node_num_inputs(n) > 2 ? H->node_input(n, 2) : NULL;
        size_t nw = (size_t)(OC * C * kh * kw);
        float *own = calloc(nw + (size_t)OC, sizeof(float));
        if (!own)
            return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
        k->own = own;
        /* ONNX W [M, C, kH, kW] as the kernel's OHWI */
        const float *ws = w->data;
        for (int64_t m = 0; m < OC; m++)
            for (int64_t c = 0; c < C; c++)
                for (int64_t a = 0; a < kh * kw; a++)
                    own[(m * kh * kw + a) * C + c] = ws[(m * C + c) * kh * kw + a];
        k->wt = own;
        k->wt_bytes = nw * sizeof(float);
        if (b && b->data) {
            memcpy(own + nw, b->data, (size_t)OC * sizeof(float));
            k->bt = own + nw;
            k->bt_bytes = (size_t)OC * sizeof(float);
        }
        k->u.conv = (tflk_conv){.n = (int32_t)N, .ih = (int32_t)IH, .iw = (int32_t)IW, .ic = (int32_t)C,
                                .oh = (int32_t)OH, .ow = (int32_t)OW, .oc = (int32_t)OC, .kh = (int32_t)kh,
                                .kw = (int32_t)kw, .fic = (int32_t)C, .sh = (int32_t)sh, .sw = (int32_t)sw,
                                .dh = (int32_t)dh, .dw = (int32_t)dw, .pt = (int32_t)pt, .pl = (int32_t)pl,
                                .act = {0, -INFINITY, INFINITY}};
    } else {
        k->u.pool = (tflk_pool){.is_max = r->code, .n = (int32_t)N, .ih = (int32_t)IH, .iw = (int32_t)IW,
                                .c = (int32_t)C, .oh = (int32_t)OH, .ow = (int32_t)OW, .fh = (int32_t)kh,
                                .fw = (int32_t)kw, .sh = (int32_t)sh, .sw = (int32_t)sw, .pt = (int32_t)pt,
                                .pl = (int32_t)pl, .lo = -128, .hi = 127, .act = {0, -INFINITY, INFINITY}};
    }
    nchw_views(n, k, N, C, IH, IW, OC, OH, OW);
    return NULL;
}

/* Gemm / MatMul on tflk_fc_f32: W as [units, depth] (B transposed unless
 * Gemm's transB = 1), the bias beta * C broadcast to the N units */
static sy_status *prep_fc(sy_node *n, mcu_node *k)
{
    const sy_tensor *a = H->node_input(n, 0), *b = H->node_input(n, 1), *y = H->node_output(n, 0);
    bool gemm = !strcmp(H->node_op(n), "Gemm");
    bool tb = gemm && sy_attr_int_or(H, n, "transB", 0) != 0;
    int64_t M = a->dims[0], K = a->dims[1], N = y->dims[1];
    if ((tb ? b->dims[1] : b->dims[0]) != K || (tb ? b->dims[0] : b->dims[1]) != N)
        return H->status_new(SY_ERR_SHAPE, "%s: B [%lld, %lld] for A [%lld, %lld] and Y [.., %lld]", H->node_op(n),
                             (long long)b->dims[0], (long long)b->dims[1], (long long)M, (long long)K, (long long)N);
    const sy_tensor *cc = gemm && H->node_num_inputs(n) > 2 ? H->node_input(n, 2) : NULL;
    float beta = gemm ? sy_attr_float_or(H, n, "beta", 1.0f) : 0.0f;
    bool has_c = cc && cc->data && beta != 0.0f;
    float *own = calloc((size_t)(N * K + (has_c ? N : 0)), sizeof(float));
    if (!own)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    k->own = own;
    const float *bs = b->data;
    for (int64_t u = 0; u < N; u++)
        for (int64_t d = 0; d < K; d++)
            own[u * K + d] = tb ? bs[u * K + d] : bs[d * N + u];
    k->wt = own;
    k->wt_bytes = (size_t)(N * K) * sizeof(float);
    if (has_c) {
        const float *cs = cc->data;
        int64_t cn = sy_tensor_numel(cc);
        for (int64_t u = 0; u < N; u++)
            own[N * K + u] = beta * cs[cn == 1 ? 0 : u];
        k->bt = own + N * K;
        k->bt_bytes = (size_t)N * sizeof(float);
    }
    k->u.fc = (tflk_fc){.batches = (int32_t)M, .units = (int32_t)N, .depth = (int32_t)K,
                        .act = {0, -INFINITY, INFINITY}};
    return NULL;
}

/* Softmax: opset < 13 flattens at `axis` (default 1) and normalizes the
 * inner block as one row; from 13 one axis (default -1), inner elements apart */
static sy_status *prep_softmax(sy_node *n, mcu_node *k)
{
    const sy_tensor *x = H->node_input(n, 0);
    bool old = H->node_opset(n) < 13;
    int32_t axis;
    SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", old ? 1 : -1), x->rank, false, "axis", &axis));
    tflk_softmax *p = &k->u.sm;
    memset(p, 0, sizeof *p);
    p->rows = (int32_t)sy_dims_prod(x->dims, 0, axis);
    p->depth = (int32_t)(old ? sy_dims_prod(x->dims, axis, x->rank) : x->dims[axis]);
    p->inner = old ? 0 : (int32_t)sy_dims_prod(x->dims, axis + 1, x->rank);
    p->beta = 1.0f;
    k->sm_acc64 = 1;
    k->sm_log = !strcmp(H->node_op(n), "LogSoftmax");
    p->exp_fn = tflk_expf_d;
    return NULL;
}

sy_status *mcu_onnx_prepare(sy_node *n, mcu_node *k)
{
    const onnx_row *r = row_of(n);
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_output(n, 0);
    k->kind = r->kind;
    int64_t st[SY_MAX_RANK];
    sy_strides(x->rank, x->dims, st);
    switch (r->kind) {
    case MK_CONV_F32:
    case MK_POOL_F32: return prep_conv_pool(n, k, r);
    case MK_FC_F32: return prep_fc(n, k);
    case MK_SOFTMAX_F32: return prep_softmax(n, k);
    case MK_UNARY_F32: {
        tflk_unary *u = &k->u.un;
        u->kind = r->code;
        char a[16];
        sy_attr_string_or(H, n, "approximate", "none", a, sizeof a);
        u->approx = !strcmp(a, "tanh");
        switch (r->code) {
        case TFLK_U_LEAKY: u->alpha = sy_attr_float_or(H, n, "alpha", 0.01f); break;
        case TFLK_U_ELUA:
        case TFLK_U_CELU:
        case TFLK_U_THRELU: u->alpha = sy_attr_float_or(H, n, "alpha", 1.0f); break;
        case TFLK_U_SELU:
            u->alpha = sy_attr_float_or(H, n, "alpha", 1.67326319217681884765625f);
            u->beta = sy_attr_float_or(H, n, "gamma", 1.05070102214813232421875f);
            break;
        case TFLK_U_HSIGMOID:
            u->alpha = sy_attr_float_or(H, n, "alpha", 0.2f);
            u->beta = sy_attr_float_or(H, n, "beta", 0.5f);
            break;
        case TFLK_U_SWISH: u->alpha = sy_attr_float_or(H, n, "alpha", 1.0f); break;
        case TFLK_U_CLIP: /* opset < 11: attributes; later: optional inputs */
            u->alpha = const_f(n, 1, "min", -INFINITY);
            u->beta = const_f(n, 2, "max", INFINITY);
            break;
        default: break;
        }
        return NULL;
    }
    case MK_BIN_F32:
    case MK_CMP_F32:
    case MK_CMP_B:
    case MK_SHIFT_U8:
        if (r->kind == MK_CMP_F32 && x->dtype == SY_DT_BOOL)
            k->kind = MK_CMP_B;
        /* int8 (int8_codes): ONNX tensors without scales, the walk alone */
        SY_TRY(x->dtype == SY_DT_INT8 ? tfl_binary_walk(H, n, &k->u.bin) : tfl_build_binary(H, n, &k->u.bin));
        k->u.bin.op = r->code;
        if (r->kind == MK_BIN_F32 && x->dtype == SY_DT_INT8) { /* Div, Max, Min on the codes */
            k->kind = r->code == TFLK_DIV ? MK_IDIV_S8 : MK_MAXMIN_S8;
            k->u.bin.op = r->code == TFLK_MAXN ? TFLK_MAX : r->code == TFLK_MINN ? TFLK_MIN : TFLK_DIV;
        }
        if (r->kind == MK_SHIFT_U8 && sy_attr_string_is(H, n, "direction", "", "RIGHT"))
            k->u.bin.op = TFLK_SHR;
        k->u.bin.act = (tflk_act){0, -INFINITY, INFINITY};
        return NULL;
    case MK_NOT_B:
    case MK_COPY: return NULL;
    case MK_TRANSPOSE: {
        int64_t perm[SY_MAX_RANK];
        int64_t np = sy_attr_ints_copy(H, n, "perm", perm, SY_MAX_RANK);
        tflk_strided *p = &k->u.tr;
        memset(p, 0, sizeof *p);
        p->rank = x->rank ? x->rank : 1;
        p->dims[0] = 1;
        p->esize = (int32_t)sy_dt_size(x->dtype);
        for (int32_t d = 0; d < x->rank; d++) {
            int64_t a = np == x->rank ? perm[d] : x->rank - 1 - d; /* default: reversed dims */
            if (a < 0 || a >= x->rank)
                return H->status_new(SY_ERR_INVALID_ARGUMENT, "Transpose: perm is not a permutation");
            p->dims[d] = (int32_t)x->dims[a];
            p->st[d] = (int32_t)st[a];
        }
        return NULL;
    }
    case MK_CONCAT: {
        int32_t axis;
        SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", 0), y->rank, false, "axis", &axis));
        uint32_t nin = H->node_num_inputs(n);
        k->own = calloc(nin, sizeof(int32_t));
        if (!k->own)
            return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
        int32_t *rw = k->own;
        int64_t inner = sy_dims_prod(y->dims, axis + 1, y->rank);
        for (uint32_t i = 0; i < nin; i++)
            rw[i] = (int32_t)(H->node_input(n, i)->dims[axis] * inner);
        k->u.cat = (tflk_concat){(int32_t)nin, (int32_t)sy_dims_prod(y->dims, 0, axis), (int32_t)sy_dt_size(y->dtype),
                                 0, 0, rw, NULL, NULL, {0, -INFINITY, INFINITY}};
        return NULL;
    }
    case MK_GATHER: {
        const sy_tensor *ix = H->node_input(n, 1);
        int32_t axis;
        SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", 0), x->rank, false, "axis", &axis));
        k->u.gat = (tflk_gather){(int32_t)sy_dims_prod(x->dims, 0, axis), (int32_t)x->dims[axis],
                                 (int32_t)sy_tensor_numel(ix), (int32_t)sy_dims_prod(x->dims, axis + 1, x->rank),
                                 (int32_t)sy_dt_size(x->dtype), ix->dtype == SY_DT_INT64, 1};
        return NULL;
    }
    case MK_GATHER_ND:
    case MK_SCATTER_ND_SET: {
        /* GatherND(data, indices); ScatterND(data, indices, updates): y = data, slices replaced */
        const sy_tensor *ix = H->node_input(n, 1);
        tflk_gather_nd *p = &k->u.gnd;
        int64_t D = ix->rank ? ix->dims[ix->rank - 1] : 0;
        if (D < 1 || D > x->rank)
            return H->status_new(SY_ERR_SHAPE, "%s: index tuples of %lld for rank %d", r->op, (long long)D, x->rank);
        p->n_tuples = (int32_t)(sy_tensor_numel(ix) / D);
        p->nd = (int32_t)D;
        p->inner = (int32_t)sy_dims_prod(x->dims, (int32_t)D, x->rank);
        p->esize = (int32_t)sy_dt_size(x->dtype);
        p->idx64 = ix->dtype == SY_DT_INT64;
        p->total = (int32_t)sy_tensor_numel(x);
        p->dtype = 0;
        p->wrap = 1;
        for (int32_t d = 0; d < p->nd; d++) {
            p->dims[d] = (int32_t)x->dims[d];
            p->st[d] = (int32_t)st[d];
        }
        return NULL;
    }
    case MK_SCATTER_EL: {
        return mcu_elements_params(n, x, &k->u.sel);
    }
    case MK_VIEW: {
        int64_t len[2 * SY_MAX_RANK], step[2 * SY_MAX_RANK], v[SY_MAX_RANK], cnt = 0;
        k->view_in = 0;
        if (!strcmp(r->op, "Tile")) {
            SY_TRY(ints_of(n, 1, v, &cnt));
            int32_t rr = 0;
            for (int32_t d = 0; d < x->rank; d++) {
                if (d < cnt && v[d] != 1) {
                    len[rr] = v[d];
                    step[rr++] = 0;
                }
                len[rr] = x->dims[d];
                step[rr++] = st[d];
            }
            return one_view(k, x, rr, len, step);
        }
        if (!strcmp(r->op, "Expand")) { /* y's dims, stride 0 where x broadcasts */
            for (int32_t d = 0; d < y->rank; d++) {
                int32_t dx = d - (y->rank - x->rank);
                len[d] = y->dims[d];
                step[d] = dx >= 0 && x->dims[dx] != 1 ? st[dx] : 0;
            }
            return one_view(k, x, y->rank, len, step);
        }
        int64_t b = sy_attr_int_or(H, n, "blocksize", 0);
        if (x->rank != 4 || b < 1)
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "%s: 4-D NCHW input and blocksize >= 1", r->op);
        int64_t N = x->dims[0], C = x->dims[1], Hh = x->dims[2], W = x->dims[3];
        if (r->op[0] == 'D') { /* y[n, c, h, i, w, j] */
            int64_t c2 = C / (b * b);
            char mode[8];
            sy_attr_string_or(H, n, "mode", "DCR", mode, sizeof mode);
            bool crd = !strcmp(mode, "CRD");
            int64_t L[6] = {N, c2, Hh, b, W, b};
            int64_t S[6] = {C * Hh * W, crd ? b * b * Hh * W : Hh * W, W, crd ? b * Hh * W : b * c2 * Hh * W, 1,
                            crd ? Hh * W : c2 * Hh * W};
            return one_view(k, x, 6, L, S);
        }
        /* SpaceToDepth: y[n, i, j, c, h, w] = x[n, c, h b + i, w b + j] */
        int64_t L[6] = {N, b, b, C, Hh / b, W / b}, S[6] = {C * Hh * W, W, 1, Hh * W, b * W, b};
        return one_view(k, x, 6, L, S);
    }
    default: return H->status_new(SY_ERR_INTERNAL, "%s: no ONNX mapping", r->op);
    }
}
