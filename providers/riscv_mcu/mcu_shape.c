/*
 * riscv_mcu: the shape, data-movement, normalization and resize rows of
 * ops-mcu.md that mcu_ops.c / mcu_onnx.c do not cover, TFLite (Table A) and
 * ONNX (Table B), on portable kernels of plugin_sdk/kernels:
 *
 *   views (tflk_strided.c)  ONNX Split, Slice
 *   tflk_move.c             ONNX Pad (constant, reflect, edge)
 *   tflk_resize.c           RESIZE_BILINEAR RESIZE_NEAREST_NEIGHBOR, ONNX Resize
 *   tflk_norm.c             ONNX BatchNormalization (inference),
 *                           InstanceNormalization, LayerNormalization (fp32)
 *   tflk_shape.c            CAST FILL SELECT SELECT_V2 REVERSE_SEQUENCE ONE_HOT,
 *                           ONNX Cast ConstantOfShape Where ReverseSequence
 *                           Trilu OneHot GatherElements
 *   tflk_einsum.c           ONNX Einsum (the plan parsed at prepare)
 *   tflk_unique.c           UNIQUE, ONNX Unique
 *   a constant copy         SHAPE, ONNX Shape and Constant (the shapes are
 *                           static: the output is known at prepare)
 *
 * Each row's rules are mcu_shape_check's and quote the row. Data movement
 * takes the element bytes as they are (int8 codes: one quantization on input
 * and output when both carry one). The normalizations are fp32 only: their
 * int8 form would need a requantized statistic the seed does not define, so
 * an int8 normalization stays on cpu_ref (docs/mcu.md).
 */
#include "mcu.h"

#define H mcu_H

typedef struct shape_row {
    const char *op;
    int onnx;
    mcu_kind kind;
    const char *row;
} shape_row;

static const shape_row rows[] = {
    {"Split", 1, MK_VIEW, "Table B #16 Split"},
    {"Slice", 1, MK_VIEW, "Table B #39 Slice"},
    {"Pad", 1, MK_PAD, "Table B #22 Pad"},
    {"Resize", 1, MK_RESIZE, "Table B #23 Resize"},
    {"BatchNormalization", 1, MK_NORM, "Table B #36 BatchNormalization"},
    {"LayerNormalization", 1, MK_NORM, "Table B #37 LayerNormalization"},
    {"InstanceNormalization", 1, MK_NORM, "Table B #19 InstanceNormalization"},
    {"Shape", 1, MK_CONST, "Table B #85 Shape"},
    {"Constant", 1, MK_CONST, "Table B #100 Constant"},
    {"ConstantOfShape", 1, MK_FILL, "Table B #101 ConstantOfShape"},
    {"Cast", 1, MK_CAST, "Table B #56 Cast"},
    {"ReverseSequence", 1, MK_REVSEQ, "Table B #59 ReverseSequence"},
    {"Trilu", 1, MK_TRILU, "Table B #84 Trilu"},
    {"Where", 1, MK_SELECT, "Table B #104 Where"},
    {"OneHot", 1, MK_ONEHOT, "Table B #107 OneHot"},
    {"GatherElements", 1, MK_GATHER_EL, "Table B #75 GatherElements"},
    {"Einsum", 1, MK_EINSUM, "Table B #60 Einsum"},
    {"Unique", 1, MK_UNIQUE, "Table B #109 Unique"},
    {"UNIQUE", 0, MK_UNIQUE, "Table A #86 Unique"},
    {"RESIZE_BILINEAR", 0, MK_RESIZE, "Table A #23 Resize_Bilinear"},
    {"RESIZE_NEAREST_NEIGHBOR", 0, MK_RESIZE, "Table A #24 Resize_Nearest_Neighbor"},
    {"CAST", 0, MK_CAST, "Table A #50 Cast"},
    {"REVERSE_SEQUENCE", 0, MK_REVSEQ, "Table A #55 ReverseSequence"},
    {"FILL", 0, MK_FILL, "Table A #71 Fill"},
    {"SHAPE", 0, MK_CONST, "Table A #72 Shape"},
    {"SELECT", 0, MK_SELECT, "Table A #79 Select"},
    {"SELECT_V2", 0, MK_SELECT, "Table A #80 SelectV2"},
    {"ONE_HOT", 0, MK_ONEHOT, "Table A #85 OneHot"},
};

static const shape_row *row_of(const sy_node *n)
{
    const char *dom = H->node_domain(n), *op = H->node_op(n);
    bool onnx = !dom || !*dom || !strcmp(dom, "ai.onnx");
    if (!onnx && strcmp(dom, TFL_DOMAIN))
        return NULL;
    for (size_t i = 0; i < SY_COUNT_OF(rows); i++)
        if (rows[i].onnx == (int)onnx && !strcmp(op, rows[i].op))
            return &rows[i];
    return NULL;
}

bool mcu_shape_has(const sy_node *n) { return row_of(n) != NULL; }

/* ---- rules ------------------------------------------------------------------ */

static bool no(sy_claim *c, sy_reason r, const char *fmt, ...) SY_PRINTF(3, 4);
static bool no(sy_claim *c, sy_reason r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    c->take = false;
    c->reason = r;
    vsnprintf(c->text, sizeof c->text, fmt, ap);
    va_end(ap);
    return false;
}

static const sy_tensor *in_at(const sy_node *n, uint32_t i)
{
    return i < H->node_num_inputs(n) ? H->node_input(n, i) : NULL;
}

static const sy_tensor *out_at(const sy_node *n, uint32_t i)
{
    return i < H->node_num_outputs(n) ? H->node_output(n, i) : NULL;
}

static bool is_const(const sy_node *n, uint32_t i)
{
    const sy_tensor *t = in_at(n, i);
    return !t || t->data;
}

static bool fits(const sy_tensor *t) { return !t || (t->rank <= TFLK_BIN_RANK && sy_tensor_numel(t) <= INT32_MAX / 8); }

static bool plain(sy_dtype d)
{
    return d == SY_DT_FLOAT32 || d == SY_DT_INT8 || d == SY_DT_INT32 || d == SY_DT_BOOL || d == SY_DT_INT64;
}

/* int8 codes copied keep their values with one quantization (when both carry one) */
static bool codes_ok(const sy_tensor *x, const sy_tensor *y, bool need)
{
    float sx = 0.0f, sy = 0.0f;
    int32_t zx = 0, zy = 0;
    if (!x || !y || x->dtype != SY_DT_INT8)
        return true;
    bool qx = tfl_qparams(x, &sx, &zx), qy = tfl_qparams(y, &sy, &zy);
    if (!qx && !qy)
        return !need;
    return qx && qy && sx == sy && zx == zy;
}

static int64_t ints_in(const sy_node *n, uint32_t i, int64_t *v, size_t max)
{
    const sy_tensor *t = in_at(n, i);
    return t ? sy_tensor_read_ints(t, v, max) : -1;
}

static bool check_resize_onnx(const mcu_cfg *cfg, const sy_node *n, const char *row, sy_claim *c)
{
    (void)cfg;
    const sy_tensor *x = in_at(n, 0), *y = out_at(n, 0);
    if (x->rank != 4)
        return no(c, SY_REASON_RANK, "Resize: X must be 4D NCHW, got rank %d (ops-mcu.md %s)", x->rank, row);
    char m[32], ct[32], nm[32], kp[16];
    sy_attr_string_or(H, n, "mode", "nearest", m, sizeof m);
    sy_attr_string_or(H, n, "coordinate_transformation_mode", "half_pixel", ct, sizeof ct);
    sy_attr_string_or(H, n, "nearest_mode", "round_prefer_floor", nm, sizeof nm);
    sy_attr_string_or(H, n, "keep_aspect_ratio_policy", "stretch", kp, sizeof kp);
    if (strcmp(m, "nearest") && strcmp(m, "linear"))
        return no(c, SY_REASON_ATTRIBUTE, "Resize: mode must be nearest or linear, got %s (ops-mcu.md %s)", m, row);
    if (strcmp(ct, "half_pixel") && strcmp(ct, "align_corners") && strcmp(ct, "asymmetric"))
        return no(c, SY_REASON_ATTRIBUTE, "Resize: coordinate_transformation_mode must be half_pixel, align_corners or "
                  "asymmetric, got %s (ops-mcu.md %s)", ct, row);
    if (!strcmp(m, "nearest") && strcmp(nm, "round_prefer_floor") && strcmp(nm, "round_prefer_ceil") && strcmp(nm, "floor"))
        return no(c, SY_REASON_ATTRIBUTE, "Resize: nearest_mode must be round_prefer_floor, round_prefer_ceil or floor, "
                  "got %s (ops-mcu.md %s)", nm, row);
    if (sy_attr_int_or(H, n, "antialias", 0) != 0 || sy_attr_int_or(H, n, "exclude_outside", 0) != 0 ||
        sy_attr_float_or(H, n, "extrapolation_value", 0.0f) != 0.0f ||
        sy_attr_float_or(H, n, "cubic_coeff_a", -0.75f) != -0.75f || sy_attr_has(H, n, "axes", SY_ATTR_INTS) ||
        strcmp(kp, "stretch"))
        return no(c, SY_REASON_ATTRIBUTE, "Resize: antialias, axes, cubic_coeff_a, exclude_outside, "
                  "extrapolation_value and keep_aspect_ratio_policy are not configurable (ops-mcu.md %s)", row);
    /* opset 10: (X, scales); 11+: (X, roi, scales, sizes) */
    bool v10 = H->node_num_inputs(n) == 2;
    const sy_tensor *sc = in_at(n, v10 ? 1 : 2), *sz = v10 ? NULL : in_at(n, 3);
    bool has_sc = sc && sy_tensor_numel(sc) > 0, has_sz = sz && sy_tensor_numel(sz) > 0;
    if (has_sc == has_sz)
        return no(c, SY_REASON_ATTRIBUTE, "Resize: exactly one of scales and sizes must be given (ops-mcu.md %s)", row);
    if ((has_sc && !sc->data) || (has_sz && !sz->data))
        return no(c, SY_REASON_ATTRIBUTE, "Resize: scales and sizes must be constants (ops-mcu.md %s)", row);
    const sy_tensor *roi = v10 ? NULL : in_at(n, 1);
    if (roi && sy_tensor_numel(roi) > 0)
        return no(c, SY_REASON_ATTRIBUTE, "Resize: roi is not configurable (ops-mcu.md %s)", row);
    if (has_sc) {
        if (x->dtype == SY_DT_INT8)
            return no(c, SY_REASON_ATTRIBUTE, "Resize: int8 does not support scales, use sizes (ops-mcu.md %s)", row);
        float s[4] = {0};
        if (sc->dtype != SY_DT_FLOAT32 || sy_tensor_numel(sc) != 4)
            return no(c, SY_REASON_ATTRIBUTE, "Resize: scales must be 4 fp32 values (ops-mcu.md %s)", row);
        memcpy(s, sc->data, sizeof s);
        if (s[0] != 1.0f || s[1] != 1.0f)
            return no(c, SY_REASON_ATTRIBUTE, "Resize: scales of N and C must be 1.0, got %g, %g (ops-mcu.md %s)",
                      (double)s[0], (double)s[1], row);
        for (int d = 2; d < 4; d++) {
            double o = (double)x->dims[d] * (double)s[d];
            if (o != (double)y->dims[d])
                return no(c, SY_REASON_ATTRIBUTE, "Resize: fp32 requires integer output dims, got %lld x %g "
                          "(ops-mcu.md %s)", (long long)x->dims[d], (double)s[d], row);
        }
    } else {
        int64_t v[4];
        if (ints_in(n, 3, v, 4) != 4 || v[0] != x->dims[0] || v[1] != x->dims[1])
            return no(c, SY_REASON_ATTRIBUTE, "Resize: sizes must hold 4 values with N and C equal to the input's "
                      "(ops-mcu.md %s)", row);
    }
    if (x->dtype == SY_DT_INT8 && !strcmp(m, "linear"))
        return no(c, SY_REASON_ATTRIBUTE, "Resize: int8 runs mode nearest (a copy of codes) on the MCU; an int8 linear "
                  "blend's rounding is not stated by ops-mcu.md %s", row);
    if (x->dtype != SY_DT_FLOAT32 && x->dtype != SY_DT_INT8)
        return no(c, SY_REASON_DTYPE, "Resize: %s data; the MCU resizes fp32 and int8 (ops-mcu.md %s)",
                  sy_dt_name(x->dtype), row);
    return true;
}

static bool check_norm(const mcu_cfg *cfg, const sy_node *n, const char *op, const char *row, sy_claim *c)
{
    (void)cfg;
    const sy_tensor *x = in_at(n, 0);
    uint32_t nin = H->node_num_inputs(n);
    if (x->dtype != SY_DT_FLOAT32)
        return no(c, SY_REASON_DTYPE, "%s: %s input; the MCU normalizes fp32 tensors (ops-mcu.md %s; int8 runs as "
                  "the switchyard.quant QNorm a QDQ model's DQ -> op -> Q folds into)", op, sy_dt_name(x->dtype), row);
    for (uint32_t i = 1; i < nin; i++) {
        const sy_tensor *t = in_at(n, i);
        if (t && t->dtype != SY_DT_FLOAT32)
            return no(c, SY_REASON_DTYPE, "%s: input %u is %s, fp32 expected (ops-mcu.md %s)", op, i,
                      sy_dt_name(t->dtype), row);
    }
    if (op[0] == 'B') {
        if (sy_attr_int_or(H, n, "training_mode", 0) != 0 || (out_at(n, 1)) || (out_at(n, 2)))
            return no(c, SY_REASON_ATTRIBUTE, "BatchNormalization: the inference form only: training_mode = 0 and "
                      "one output (ops-mcu.md %s)", row);
        if (nin != 5 || x->rank < 2)
            return no(c, SY_REASON_ATTRIBUTE, "BatchNormalization: X of rank >= 2 with scale, B, mean and var "
                      "(ops-mcu.md %s)", row);
        for (uint32_t i = 1; i < 5; i++)
            if (sy_tensor_numel(in_at(n, i)) != x->dims[1])
                return no(c, SY_REASON_SHAPE, "BatchNormalization: input %u must hold C = %lld values (ops-mcu.md %s)",
                          i, (long long)x->dims[1], row);
        return true;
    }
    if (op[0] == 'I') {
        if (x->rank < 3 || nin != 3)
            return no(c, SY_REASON_RANK, "InstanceNormalization: input of rank >= 3 (N, C, spatial) with scale and B, "
                      "got rank %d (ops-mcu.md %s)", x->rank, row);
        if (sy_tensor_numel(in_at(n, 1)) != x->dims[1] || sy_tensor_numel(in_at(n, 2)) != x->dims[1])
            return no(c, SY_REASON_SHAPE, "InstanceNormalization: scale and B must hold C values (ops-mcu.md %s)", row);
        return true;
    }
    int32_t axis;
    sy_status *st = sy_norm_axis(H, sy_attr_int_or(H, n, "axis", -1), x->rank, false, "axis", &axis);
    if (st) {
        H->status_free(st);
        return no(c, SY_REASON_ATTRIBUTE, "LayerNormalization: axis must be in [-R, R) (ops-mcu.md %s)", row);
    }
    if (sy_attr_int_or(H, n, "stash_type", 1) != 1)
        return no(c, SY_REASON_ATTRIBUTE, "LayerNormalization: stash_type must be 1 (float statistics)");
    int64_t rowlen = sy_dims_prod(x->dims, axis, x->rank);
    for (uint32_t i = 1; i < nin && i < 3; i++) {
        const sy_tensor *t = in_at(n, i);
        if (t && sy_tensor_numel(t) != rowlen && sy_tensor_numel(t) != 1)
            return no(c, SY_REASON_SHAPE, "LayerNormalization: %s must hold 1 or %lld values (the normalized shape) "
                      "on the MCU (ops-mcu.md %s)", i == 1 ? "scale" : "B", (long long)rowlen, row);
    }
    if (nin < 2 || !in_at(n, 1))
        return no(c, SY_REASON_ATTRIBUTE, "LayerNormalization: scale is required (ops-mcu.md %s)", row);
    return true;
}

static bool cast_dt(sy_dtype d) { return d == SY_DT_FLOAT32 || d == SY_DT_INT8 || d == SY_DT_INT32 || d == SY_DT_UINT8; }

static int32_t ein_code(sy_dtype d)
{
    return d == SY_DT_FLOAT32 ? TFLK_F32 : d == SY_DT_INT8 ? TFLK_S8 : d == SY_DT_UINT8 ? TFLK_U8
           : d == SY_DT_INT32 ? TFLK_S32 : 0;
}

/* Table B #60: float32, uint8, int8 or int32 (one dtype for all, the
 * integers as plain integers: products and sums wrap to the output's
 * width), inputs and output 2-4D, standard Einsum rules without "..." */
static bool check_einsum(const sy_node *n, const char *row, sy_claim *c)
{
    uint32_t nin = H->node_num_inputs(n);
    const sy_tensor *y = out_at(n, 0);
    const char *eq = NULL;
    size_t eqlen = 0;
    if (!H->attr_string(n, "equation", &eq, &eqlen) || !eq)
        return no(c, SY_REASON_ATTRIBUTE, "Einsum: the equation attribute is required (ops-mcu.md %s)", row);
    if (strstr(eq, "..."))
        return no(c, SY_REASON_ATTRIBUTE, "Einsum: equation '%s': the ellipsis \"...\" is not supported (ops-mcu.md %s: "
                  "\"equation follows the standard Einsum rules, except that the ellipsis is not supported\")", eq, row);
    if (nin < 1 || nin > TFLK_EIN_IN)
        return no(c, SY_REASON_ATTRIBUTE, "Einsum: %u inputs; the MCU kernel takes 1 to %d", nin, TFLK_EIN_IN);
    int32_t rank[TFLK_EIN_IN];
    const int64_t *dims[TFLK_EIN_IN];
    for (uint32_t i = 0; i < nin; i++) {
        const sy_tensor *t = in_at(n, i);
        if (!t || t->dtype != y->dtype || !ein_code(t->dtype))
            return no(c, SY_REASON_DTYPE, "Einsum: input %u is %s, the output %s (ops-mcu.md %s: float32, uint8, int8 "
                      "or int32, one dtype)", i, t ? sy_dt_name(t->dtype) : "missing", sy_dt_name(y->dtype), row);
        if (t->rank < 2 || t->rank > 4)
            return no(c, SY_REASON_RANK, "Einsum: input %u is %dD (ops-mcu.md %s: inputs 2-4D)", i, t->rank, row);
        if (!codes_ok(t, y, false))
            return no(c, SY_REASON_DTYPE, "Einsum: quantized int8 tensors (ops-mcu.md %s computes on the integers; no "
                      "quantized form)", row);
        rank[i] = t->rank;
        dims[i] = t->dims;
    }
    if (y->rank < 2 || y->rank > 4)
        return no(c, SY_REASON_RANK, "Einsum: the output is %dD (ops-mcu.md %s: output 2-4D)", y->rank, row);
    tflk_einsum p;
    char msg[160];
    if (tflk_einsum_plan(&p, eq, (int32_t)nin, rank, dims, msg, (int32_t)sizeof msg))
        return no(c, SY_REASON_ATTRIBUTE, "Einsum: equation '%s': %s (ops-mcu.md %s)", eq, msg, row);
    return true;
}

static int32_t uq_code(sy_dtype d)
{
    return d == SY_DT_FLOAT32 ? TFLK_F32 : d == SY_DT_INT8 ? TFLK_S8 : d == SY_DT_UINT8 ? TFLK_U8
           : d == SY_DT_INT32 ? TFLK_S32 : 0;
}

/* Table A #86: x 1D of float32, int8, uint8 or int32, indices int32 or
 * int64, not quantizable (int8 codes copied: one quantization). Table B
 * #109: X 1D-4D float32, int8 or uint8 (int32 as the normalized int64 of a
 * source model), no per-channel quantization, axis in [-rank, rank-1],
 * sorted 0 or 1; indices, inverse_indices and counts int64 or int32. */
static bool check_unique(const sy_node *n, bool tfl, const char *row, sy_claim *c)
{
    const sy_tensor *x = in_at(n, 0), *y = out_at(n, 0);
    if (H->node_num_inputs(n) != 1)
        return no(c, SY_REASON_ATTRIBUTE, "Unique: a single input (ops-mcu.md %s)", row);
    if (!uq_code(x->dtype) || y->dtype != x->dtype)
        return no(c, SY_REASON_DTYPE, "Unique: %s input (ops-mcu.md %s: float32, int8, uint8 or int32; the values "
                  "of the input's dtype)", sy_dt_name(x->dtype), row);
    if (tfl ? x->rank != 1 : (x->rank < 1 || x->rank > 4))
        return no(c, SY_REASON_RANK, "Unique: the input is %dD (ops-mcu.md %s: %s)", x->rank, row,
                  tfl ? "x 1D only" : "X 1D-4D");
    if (x->quant && x->quant->count > 1)
        return no(c, SY_REASON_DTYPE, "Unique: per-channel quantization (ops-mcu.md %s: not allowed)", row);
    if (!codes_ok(x, y, false))
        return no(c, SY_REASON_ATTRIBUTE, "Unique: the int8 values must keep the input's quantization (ops-mcu.md %s: "
                  "not quantizable; the codes are copied)", row);
    for (uint32_t i = 1; i < H->node_num_outputs(n); i++) {
        const sy_tensor *t = out_at(n, i);
        if (t && t->dtype != SY_DT_INT32 && t->dtype != SY_DT_INT64)
            return no(c, SY_REASON_DTYPE, "Unique: output %u is %s (ops-mcu.md %s: int32 or int64 indices)", i,
                      sy_dt_name(t->dtype), row);
    }
    if (!tfl) {
        int64_t s = sy_attr_int_or(H, n, "sorted", 1);
        if (s != 0 && s != 1)
            return no(c, SY_REASON_ATTRIBUTE, "Unique: sorted must be 0 or 1, got %lld (ops-mcu.md %s)", (long long)s,
                      row);
        int64_t ax = sy_attr_int_or(H, n, "axis", 0);
        if (sy_attr_has(H, n, "axis", SY_ATTR_INT) && (ax < -(int64_t)x->rank || ax >= x->rank))
            return no(c, SY_REASON_ATTRIBUTE, "Unique: axis %lld outside [-%d, %d] (ops-mcu.md %s)", (long long)ax,
                      x->rank, x->rank - 1, row);
    }
    return true;
}

bool mcu_shape_check(const mcu_cfg *cfg, const sy_node *n, sy_claim *c)
{
    const shape_row *r = row_of(n);
    const char *op = r->op, *row = r->row;
    uint32_t nin = H->node_num_inputs(n), nout = H->node_num_outputs(n);
    const sy_tensor *x = in_at(n, 0), *y = out_at(n, 0);
    if (!y || (!x && r->kind != MK_CONST))
        return no(c, SY_REASON_ATTRIBUTE, "%s: an input and an output are required", op);
    if (nin > MCU_MAX_IO || nout > MCU_MAX_IO)
        return no(c, SY_REASON_ATTRIBUTE, "%s: %u inputs, %u outputs; a package records at most %d", op, nin, nout,
                  MCU_MAX_IO);
    for (uint32_t i = 0; i < nout; i++)
        if (!fits(out_at(n, i)))
            return no(c, SY_REASON_RANK, "%s: rank above %d or more than 2^28 elements: the MCU kernels index with "
                      "int32", op, TFLK_BIN_RANK);
    if (!fits(x))
        return no(c, SY_REASON_RANK, "%s: rank above %d or more than 2^28 elements: the MCU kernels index with int32",
                  op, TFLK_BIN_RANK);
    bool tfl = !r->onnx;
    switch (r->kind) {
    case MK_VIEW:
        if (!plain(x->dtype))
            return no(c, SY_REASON_DTYPE, "%s: %s data: the MCU moves fp32, int8, int32 and bool tensors", op,
                      sy_dt_name(x->dtype));
        for (uint32_t i = 1; i < nin; i++)
            if (!is_const(n, i))
                return no(c, SY_REASON_ATTRIBUTE, "%s: input %u must be a constant (ops-mcu.md %s: %s)", op, i, row,
                          op[1] == 'p' ? "split sizes" : "starts, ends, axes and steps all const");
        for (uint32_t i = 0; i < nout; i++)
            if (!codes_ok(x, out_at(n, i), false))
                return no(c, SY_REASON_ATTRIBUTE, "%s: int8 input and outputs must share one quantization", op);
        return true;
    case MK_PAD: {
        char m[16];
        sy_attr_string_or(H, n, "mode", "constant", m, sizeof m);
        if (!plain(x->dtype) || sy_dt_size(x->dtype) > 4)
            return no(c, SY_REASON_DTYPE, "Pad: %s data: the MCU pads fp32, int8, int32 and bool", sy_dt_name(x->dtype));
        if (strcmp(m, "constant") && strcmp(m, "reflect") && strcmp(m, "edge"))
            return no(c, SY_REASON_ATTRIBUTE, "Pad: mode must be constant, reflect or edge, got %s (ops-mcu.md %s)", m,
                      row);
        if (in_at(n, 3))
            return no(c, SY_REASON_ATTRIBUTE, "Pad: axes is not configurable (ops-mcu.md %s)", row);
        if (!is_const(n, 1) || !is_const(n, 2))
            return no(c, SY_REASON_ATTRIBUTE, "Pad: pads and constant_value must be constants (ops-mcu.md %s)", row);
        int64_t p[2 * SY_MAX_RANK];
        int64_t cnt = nin > 1 ? ints_in(n, 1, p, SY_COUNT_OF(p)) : sy_attr_ints_copy(H, n, "pads", p, SY_COUNT_OF(p));
        if (cnt != 2 * x->rank)
            return no(c, SY_REASON_ATTRIBUTE, "Pad: pads must hold 2 x rank = %d values (ops-mcu.md %s)", 2 * x->rank,
                      row);
        for (int64_t i = 0; i < cnt; i++)
            if (p[i] < 0)
                return no(c, SY_REASON_ATTRIBUTE, "Pad: pads must be non-negative, got %lld (ops-mcu.md %s)",
                          (long long)p[i], row);
        if (!strcmp(m, "reflect"))
            for (int32_t d = 0; d < x->rank; d++)
                if (p[d] >= x->dims[d] || p[d + x->rank] >= x->dims[d])
                    return no(c, SY_REASON_ATTRIBUTE, "Pad: reflect pads must be smaller than the dim");
        if (x->dtype == SY_DT_INT8 && !strcmp(m, "constant") && x->rank != 4)
            return no(c, SY_REASON_RANK, "Pad: mode = constant with int8 supports only 4D input, got rank %d "
                      "(ops-mcu.md %s)", x->rank, row);
        return codes_ok(x, y, false) ? true : no(c, SY_REASON_ATTRIBUTE, "Pad: int8 input and output must share one "
                                                 "quantization");
    }
    case MK_RESIZE: {
        if (r->onnx)
            return check_resize_onnx(cfg, n, row, c);
        bool ac = sy_attr_int_or(H, n, "align_corners", 0) != 0, hp = sy_attr_int_or(H, n, "half_pixel_centers", 0) != 0;
        if (ac == hp)
            return no(c, SY_REASON_ATTRIBUTE, "%s: exactly one of align_corners and half_pixel_centers must be true "
                      "(ops-mcu.md %s, §5 rule 34)", op, row);
        if (x->rank != 4 || !is_const(n, 1))
            return no(c, SY_REASON_ATTRIBUTE, "%s: a 4D NHWC input and a constant size (ops-mcu.md %s)", op, row);
        if (x->dtype != SY_DT_FLOAT32 && x->dtype != SY_DT_INT8)
            return no(c, SY_REASON_DTYPE, "%s: %s input; fp32 or int8 (ops-mcu.md %s)", op, sy_dt_name(x->dtype), row);
        return codes_ok(x, y, true) ? true : no(c, SY_REASON_ATTRIBUTE, "%s: int8 input and output must share one "
                                                "per-tensor quantization (TFLite requires it)", op);
    }
    case MK_NORM: return check_norm(cfg, n, op, row, c);
    case MK_CONST:
        if (!strcmp(op, "Constant")) {
            const sy_tensor *v = NULL;
            if (!H->attr_tensor(n, "value", &v) || !v || !v->data || v->nbytes != y->nbytes)
                return no(c, SY_REASON_ATTRIBUTE, "Constant: the MCU takes the `value` tensor form (ops-mcu.md %s)", row);
            return true;
        }
        if (tfl ? y->dtype != SY_DT_INT32 : y->dtype != SY_DT_INT64)
            return no(c, SY_REASON_DTYPE, "%s: the output must be %s (ops-mcu.md %s)", op, tfl ? "int32" : "int64", row);
        return true;
    case MK_FILL: {
        if (y->dtype != SY_DT_FLOAT32 && y->dtype != SY_DT_INT8 && y->dtype != SY_DT_INT32 && y->dtype != SY_DT_BOOL)
            return no(c, SY_REASON_DTYPE, "%s: %s output; fp32, int32, bool or int8 (ops-mcu.md %s)", op,
                      sy_dt_name(y->dtype), row);
        if (y->rank > 32 || sy_tensor_numel(y) < 1)
            return no(c, SY_REASON_SHAPE, "%s: every dim must be > 0 (ops-mcu.md %s)", op, row);
        if (tfl) {
            const sy_tensor *v = in_at(n, 1);
            if (!v || sy_tensor_numel(v) != 1 || v->dtype != y->dtype || x->dtype != SY_DT_INT32)
                return no(c, SY_REASON_DTYPE, "FILL: dims int32 and a scalar value of the output's dtype (ops-mcu.md %s)",
                          row);
            return codes_ok(v, y, false) ? true : no(c, SY_REASON_ATTRIBUTE, "FILL: int8 value and output must share "
                                                     "one quantization");
        }
        if (x->dtype != SY_DT_INT64)
            return no(c, SY_REASON_DTYPE, "ConstantOfShape: the input must be int64 (ops-mcu.md %s)", row);
        if (y->rank > 4)
            return no(c, SY_REASON_RANK, "ConstantOfShape: rank 1-4 (ops-mcu.md %s: Lite supports rank 1-4)", row);
        return true;
    }
    case MK_CAST: {
        if (!cast_dt(x->dtype) || !cast_dt(y->dtype))
            return no(c, SY_REASON_DTYPE, "%s: %s to %s; in/out float32, uint8, int8, int32 only (ops-mcu.md %s)", op,
                      sy_dt_name(x->dtype), sy_dt_name(y->dtype), row);
        return true;
    }
    case MK_REVSEQ: {
        const sy_tensor *len = in_at(n, 1);
        int64_t ba = sy_attr_int_or(H, n, tfl ? "batch_dim" : "batch_axis", tfl ? 0 : 1);
        int64_t sa = sy_attr_int_or(H, n, tfl ? "seq_dim" : "time_axis", 0);
        if (!(ba == 0 || ba == 1) || !(sa == 0 || sa == 1) || ba == sa)
            return no(c, SY_REASON_ATTRIBUTE, "%s: the batch and sequence axes may only be 0 or 1 and must differ, got "
                      "%lld and %lld (ops-mcu.md %s)", op, (long long)ba, (long long)sa, row);
        if (!len || (len->dtype != SY_DT_INT32 && len->dtype != SY_DT_INT64) || x->rank < 2)
            return no(c, SY_REASON_DTYPE, "%s: sequence lengths int32 and an input of rank >= 2 (ops-mcu.md %s)", op, row);
        if (x->dtype != SY_DT_FLOAT32 && x->dtype != SY_DT_INT8 && x->dtype != SY_DT_INT32)
            return no(c, SY_REASON_DTYPE, "%s: %s data; float32, int8 or int32 (ops-mcu.md %s)", op,
                      sy_dt_name(x->dtype), row);
        return codes_ok(x, y, tfl) ? true : no(c, SY_REASON_ATTRIBUTE, "%s: int8 input and output must share one "
                                               "quantization", op);
    }
    case MK_TRILU:
        if (!is_const(n, 1))
            return no(c, SY_REASON_ATTRIBUTE, "Trilu: k must be a constant (ops-mcu.md %s)", row);
        if (x->rank < 2 || !plain(x->dtype))
            return no(c, SY_REASON_RANK, "Trilu: an input of rank >= 2 of fp32, int8, int32 or bool (ops-mcu.md %s)", row);
        return true;
    case MK_SELECT: {
        const sy_tensor *a = in_at(n, 1), *b = in_at(n, 2);
        if (x->dtype != SY_DT_BOOL || !a || !b)
            return no(c, SY_REASON_DTYPE, "%s: condition must be bool (ops-mcu.md %s)", op, row);
        if (a->dtype != b->dtype || !plain(a->dtype) || y->rank > TFLK_BIN_RANK)
            return no(c, SY_REASON_DTYPE, "%s: x and y of one dtype (fp32, int8, int32, bool)", op);
        if (!strcmp(op, "SELECT") && (!sy_shape_equal(x->rank, x->dims, a->rank, a->dims) ||
                                      !sy_shape_equal(a->rank, a->dims, b->rank, b->dims)))
            return no(c, SY_REASON_SHAPE, "SELECT: no broadcasting: condition, x and y of one shape (ops-mcu.md %s; "
                      "SELECT_V2 broadcasts)", row);
        if (!codes_ok(a, y, tfl) || !codes_ok(b, y, tfl))
            return no(c, SY_REASON_ATTRIBUTE, "%s: int8 x, y and output must share one quantization", op);
        return true;
    }
    case MK_ONEHOT: {
        if (x->dtype != SY_DT_INT32 && x->dtype != SY_DT_INT64)
            return no(c, SY_REASON_DTYPE, "%s: indices must be int32 (ops-mcu.md %s)", op, row);
        if (!is_const(n, 1) || sy_tensor_numel(in_at(n, 1)) != 1)
            return no(c, SY_REASON_ATTRIBUTE, "%s: depth must be a constant scalar", op);
        if (y->dtype != SY_DT_FLOAT32 && y->dtype != SY_DT_INT8)
            return no(c, SY_REASON_DTYPE, "%s: output float32 or int8 (ops-mcu.md %s)", op, row);
        const sy_tensor *on = in_at(n, 2), *off = tfl ? in_at(n, 3) : NULL;
        if (!on || on->dtype != y->dtype || sy_tensor_numel(on) != (tfl ? 1 : 2) || (tfl && (!off || off->dtype != y->dtype ||
                                                                                         sy_tensor_numel(off) != 1)))
            return no(c, SY_REASON_DTYPE, "%s: on and off values of the output's dtype (ops-mcu.md %s)", op, row);
        int64_t ax = sy_attr_int_or(H, n, "axis", -1);
        if (ax < -(int64_t)x->rank - 1 || ax > x->rank)
            return no(c, SY_REASON_ATTRIBUTE, "%s: axis must be -1 or in [0, %d] (ops-mcu.md %s)", op, x->rank, row);
        return true;
    }
    case MK_GATHER_EL: {
        const sy_tensor *ix = in_at(n, 1);
        if (x->dtype != SY_DT_FLOAT32)
            return no(c, SY_REASON_DTYPE, "GatherElements: data must be float (ops-mcu.md %s)", row);
        if (!ix || (ix->dtype != SY_DT_INT32 && ix->dtype != SY_DT_INT64) || ix->rank != x->rank)
            return no(c, SY_REASON_DTYPE, "GatherElements: int32 indices of data's rank (ops-mcu.md %s)", row);
        if (cfg->rules == MCU_RULES_SEED && !sy_shape_equal(x->rank, x->dims, ix->rank, ix->dims))
            return no(c, SY_REASON_SHAPE, "GatherElements: the indices' size must equal data's (ops-mcu.md %s; rules "
                      "= tflm takes any indices of data's rank as ONNX does)", row);
        return true;
    }
    case MK_EINSUM: return check_einsum(n, row, c);
    case MK_UNIQUE: return check_unique(n, tfl, row, c);
    default: return no(c, SY_REASON_NO_KERNEL, "%s: no MCU kernel", op);
    }
}

/* ---- prepare ------------------------------------------------------------------ */

static sy_status *views_alloc(mcu_node *k, int32_t n)
{
    k->own = calloc((size_t)n, sizeof(tflk_strided) + sizeof(int64_t));
    if (!k->own)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    k->view_off = k->own;
    k->views = (tflk_strided *)(void *)(k->view_off + n);
    k->n_views = n;
    return NULL;
}

/* view v of x: `len` per dim, element steps, a start element */
static void set_view(mcu_node *k, int32_t v, const sy_tensor *x, const int64_t *len, const int64_t *step, int64_t start)
{
    tflk_strided *p = &k->views[v];
    p->rank = x->rank ? x->rank : 1;
    p->dims[0] = 1;
    for (int32_t d = 0; d < x->rank; d++) {
        p->dims[d] = (int32_t)len[d];
        p->st[d] = (int32_t)step[d];
    }
    p->esize = (int32_t)sy_dt_size(x->dtype);
    k->view_off[v] = start * p->esize;
}

static sy_status *prep_split(sy_node *n, mcu_node *k)
{
    const sy_tensor *x = H->node_input(n, 0);
    uint32_t nout = H->node_num_outputs(n);
    int32_t axis;
    SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", 0), x->rank, false, "axis", &axis));
    int64_t st[SY_MAX_RANK], len[SY_MAX_RANK], at = 0;
    sy_strides(x->rank, x->dims, st);
    SY_TRY(views_alloc(k, (int32_t)nout));
    for (uint32_t i = 0; i < nout; i++) {
        const sy_tensor *o = H->node_output(n, i);
        int64_t sz = o ? o->dims[axis] : 0;
        for (int32_t d = 0; d < x->rank; d++)
            len[d] = d == axis ? sz : x->dims[d];
        set_view(k, (int32_t)i, x, len, st, at * st[axis]);
        at += sz;
    }
    if (at != x->dims[axis])
        return H->status_new(SY_ERR_SHAPE, "Split: the outputs hold %lld of the axis' %lld elements", (long long)at,
                             (long long)x->dims[axis]);
    return NULL;
}

static sy_status *prep_slice(sy_node *n, mcu_node *k)
{
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_output(n, 0);
    int64_t s[SY_MAX_RANK], e[SY_MAX_RANK], ax[SY_MAX_RANK], stp[SY_MAX_RANK];
    int64_t ns, ne, na, nst;
    if (H->node_num_inputs(n) == 1) { /* opset 1: attributes */
        ns = sy_attr_ints_copy(H, n, "starts", s, SY_MAX_RANK);
        ne = sy_attr_ints_copy(H, n, "ends", e, SY_MAX_RANK);
        na = sy_attr_ints_copy(H, n, "axes", ax, SY_MAX_RANK);
        nst = -1;
    } else {
        ns = ints_in(n, 1, s, SY_MAX_RANK);
        ne = ints_in(n, 2, e, SY_MAX_RANK);
        na = in_at(n, 3) ? ints_in(n, 3, ax, SY_MAX_RANK) : -1;
        nst = in_at(n, 4) ? ints_in(n, 4, stp, SY_MAX_RANK) : -1;
    }
    if (ns < 0 || ns != ne || ns > x->rank || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "Slice: starts, ends, axes and steps must be constant vectors "
                             "of one length");
    int64_t st[SY_MAX_RANK], len[SY_MAX_RANK], step[SY_MAX_RANK], start = 0;
    sy_strides(x->rank, x->dims, st);
    for (int32_t d = 0; d < x->rank; d++) {
        len[d] = x->dims[d];
        step[d] = st[d];
    }
    for (int64_t i = 0; i < ns; i++) {
        int32_t a;
        SY_TRY(sy_norm_axis(H, na >= 0 ? ax[i] : i, x->rank, false, "axes", &a));
        int64_t dim = x->dims[a], b = s[i], en = e[i], sp = nst >= 0 ? stp[i] : 1;
        if (sp == 0)
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "Slice: a step of 0");
        if (b < 0)
            b += dim;
        if (en < 0)
            en += dim;
        if (sp > 0) {
            b = b < 0 ? 0 : b > dim ? dim : b;
            en = en < 0 ? 0 : en > dim ? dim : en;
        } else {
            b = b < 0 ? 0 : b > dim - 1 ? dim - 1 : b;
            en = en < -1 ? -1 : en > dim - 1 ? dim - 1 : en;
        }
        int64_t l = sp > 0 ? (en - b + sp - 1) / sp : (b - en + (-sp) - 1) / (-sp);
        len[a] = l > 0 ? l : 0;
        step[a] = sp * st[a];
        start += len[a] ? b * st[a] : 0;
    }
    for (int32_t d = 0; d < x->rank; d++)
        if (len[d] != y->dims[d])
            return H->status_new(SY_ERR_SHAPE, "Slice: dim %d: %lld elements planned, the output has %lld", d,
                                 (long long)len[d], (long long)y->dims[d]);
    SY_TRY(views_alloc(k, 1));
    set_view(k, 0, x, len, step, start);
    return NULL;
}

static sy_status *prep_pad(sy_node *n, mcu_node *k)
{
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_output(n, 0);
    uint32_t nin = H->node_num_inputs(n);
    tflk_pad *p = &k->u.pad;
    int64_t pads[2 * SY_MAX_RANK];
    int64_t cnt = nin > 1 ? ints_in(n, 1, pads, SY_COUNT_OF(pads)) : sy_attr_ints_copy(H, n, "pads", pads, SY_COUNT_OF(pads));
    if (cnt != 2 * x->rank)
        return H->status_new(SY_ERR_SHAPE, "Pad: pads must hold %d values", 2 * x->rank);
    char m[16];
    sy_attr_string_or(H, n, "mode", "constant", m, sizeof m);
    p->mode = !strcmp(m, "reflect") ? 1 : !strcmp(m, "edge") ? 3 : 0;
    p->rank = x->rank ? x->rank : 1;
    p->odims[0] = p->idims[0] = 1;
    p->esize = (int32_t)sy_dt_size(x->dtype);
    for (int32_t d = 0; d < x->rank; d++) {
        p->idims[d] = (int32_t)x->dims[d];
        p->odims[d] = (int32_t)y->dims[d];
        p->before[d] = (int32_t)pads[d]; /* ONNX: [begins..., ends...] */
    }
    const sy_tensor *cv = nin > 2 ? H->node_input(n, 2) : NULL;
    if (cv && cv->data && sy_tensor_numel(cv) == 1) {
        if (cv->dtype != x->dtype)
            return H->status_new(SY_ERR_TYPE, "Pad: constant_value must have the data's dtype");
        memcpy(p->fill, cv->data, (size_t)p->esize);
    } else if (nin <= 1 && x->dtype == SY_DT_FLOAT32) {
        float v = sy_attr_float_or(H, n, "value", 0.0f);
        memcpy(p->fill, &v, 4);
    }
    return NULL;
}

static sy_status *prep_resize(sy_node *n, mcu_node *k, const shape_row *r)
{
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_output(n, 0);
    tflk_resize *p = &k->u.rz;
    memset(p, 0, sizeof *p);
    p->esize = (int32_t)sy_dt_size(x->dtype);
    if (!r->onnx) {
        *p = (tflk_resize){.n = (int32_t)x->dims[0], .ih = (int32_t)x->dims[1], .iw = (int32_t)x->dims[2],
                           .c = (int32_t)x->dims[3], .oh = (int32_t)y->dims[1], .ow = (int32_t)y->dims[2],
                           .esize = p->esize, .linear = !strcmp(r->op, "RESIZE_BILINEAR"),
                           .ac = sy_attr_int_or(H, n, "align_corners", 0) != 0,
                           .hp = sy_attr_int_or(H, n, "half_pixel_centers", 0) != 0};
        if (p->linear && p->esize != 1 && p->esize != 4)
            return H->status_new(SY_ERR_TYPE, "%s: fp32 or int8", r->op);
        return NULL;
    }
    char m[16], ct[32], nm[32];
    sy_attr_string_or(H, n, "mode", "nearest", m, sizeof m);
    sy_attr_string_or(H, n, "coordinate_transformation_mode", "half_pixel", ct, sizeof ct);
    sy_attr_string_or(H, n, "nearest_mode", "round_prefer_floor", nm, sizeof nm);
    p->onnx = 1;
    p->linear = !strcmp(m, "linear");
    p->coord = !strcmp(ct, "align_corners") ? TFLK_RZ_ALIGN_CORNERS
               : !strcmp(ct, "asymmetric")  ? TFLK_RZ_ASYMMETRIC
                                            : TFLK_RZ_HALF_PIXEL;
    p->nearest = !strcmp(nm, "round_prefer_ceil") ? TFLK_RZ_PREFER_CEIL
                 : !strcmp(nm, "floor")           ? TFLK_RZ_FLOOR
                 : !strcmp(nm, "ceil")            ? TFLK_RZ_CEIL
                                                  : TFLK_RZ_PREFER_FLOOR;
    p->n = (int32_t)(x->dims[0] * x->dims[1]);
    p->ih = (int32_t)x->dims[2];
    p->iw = (int32_t)x->dims[3];
    p->c = 1;
    p->oh = (int32_t)y->dims[2];
    p->ow = (int32_t)y->dims[3];
    bool v10 = H->node_num_inputs(n) == 2;
    const sy_tensor *sc = H->node_input(n, v10 ? 1 : 2);
    if (sc && sy_tensor_numel(sc) == 4 && sc->data && sc->dtype == SY_DT_FLOAT32) {
        float s[4];
        memcpy(s, sc->data, sizeof s);
        p->sh = s[2];
        p->sw = s[3];
    } else { /* sizes: the scale is output / input */
        p->sh = (float)y->dims[2] / (float)x->dims[2];
        p->sw = (float)y->dims[3] / (float)x->dims[3];
    }
    if (p->linear && p->esize != 4)
        return H->status_new(SY_ERR_TYPE, "Resize: linear on fp32 only");
    return NULL;
}

static sy_status *prep_norm(sy_node *n, mcu_node *k, const char *op)
{
    const sy_tensor *x = H->node_input(n, 0);
    tflk_norm *p = &k->u.nrm;
    memset(p, 0, sizeof *p);
    if (op[0] == 'L') {
        int32_t axis;
        SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", -1), x->rank, false, "axis", &axis));
        p->mode = TFLK_NORM_LAYER;
        p->outer = (int32_t)sy_dims_prod(x->dims, 0, axis);
        p->groups = 1;
        p->inner = (int32_t)sy_dims_prod(x->dims, axis, x->rank);
        p->n_scale = (int32_t)sy_tensor_numel(H->node_input(n, 1));
        const sy_tensor *b = H->node_num_inputs(n) > 2 ? H->node_input(n, 2) : NULL;
        p->n_bias = b ? (int32_t)sy_tensor_numel(b) : 0;
    } else {
        p->mode = op[0] == 'B' ? TFLK_NORM_BATCH : TFLK_NORM_INSTANCE;
        p->outer = (int32_t)x->dims[0];
        p->groups = (int32_t)x->dims[1];
        p->inner = (int32_t)sy_dims_prod(x->dims, 2, x->rank);
    }
    p->eps = sy_attr_float_or(H, n, "epsilon", 1e-5f);
    return NULL;
}

/* the output bytes of Shape / SHAPE / Constant, known at prepare */
static sy_status *prep_const(sy_node *n, mcu_node *k, const char *op)
{
    const sy_tensor *y = H->node_output(n, 0);
    k->own = calloc(1, y->nbytes ? y->nbytes : 1);
    if (!k->own)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    if (!strcmp(op, "Constant")) {
        const sy_tensor *v = NULL;
        if (!H->attr_tensor(n, "value", &v) || !v || !v->data || v->nbytes != y->nbytes)
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "Constant: a `value` tensor of the output's size");
        memcpy(k->own, v->data, y->nbytes);
        return NULL;
    }
    const sy_tensor *x = H->node_input(n, 0);
    int64_t from = 0, to = x->rank;
    if (op[0] == 'S' && op[1] == 'h') { /* ONNX Shape: start, end clamped to [0, rank] */
        from = sy_attr_int_or(H, n, "start", 0);
        to = sy_attr_int_or(H, n, "end", x->rank);
        from = from < 0 ? from + x->rank : from;
        to = to < 0 ? to + x->rank : to;
        from = from < 0 ? 0 : from > x->rank ? x->rank : from;
        to = to < 0 ? 0 : to > x->rank ? x->rank : to;
    }
    int64_t cnt = to > from ? to - from : 0;
    if ((size_t)cnt * sy_dt_size(y->dtype) != y->nbytes)
        return H->status_new(SY_ERR_SHAPE, "%s: %lld dims for an output of %zu bytes", op, (long long)cnt, y->nbytes);
    for (int64_t i = 0; i < cnt; i++)
        sy_store_i64(k->own, y->dtype, (size_t)i, x->dims[from + i]);
    return NULL;
}

static int32_t elem_code(sy_dtype d)
{
    switch (d) {
    case SY_DT_FLOAT32: return TFLK_F32;
    case SY_DT_INT8: return TFLK_S8;
    case SY_DT_INT16: return TFLK_S16;
    case SY_DT_INT32: return TFLK_S32;
    case SY_DT_INT64: return TFLK_S64;
    case SY_DT_BOOL: return TFLK_BOOL;
    default: return TFLK_U8;
    }
}


/* GatherElements' and ScatterElements' (Scatter's) parameters: the data x,
 * the indices (input 1) of the same rank, the axis attribute (default 0) */
sy_status *mcu_elements_params(sy_node *n, const sy_tensor *x, tflk_scatter_el *p)
{
    const sy_tensor *ix = H->node_input(n, 1);
    int32_t axis;
    SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", 0), x->rank, false, "axis", &axis));
    memset(p, 0, sizeof *p);
    p->rank = x->rank;
    p->axis = axis;
    p->esize = (int32_t)sy_dt_size(x->dtype);
    p->idx64 = ix->dtype == SY_DT_INT64;
    p->total = (int32_t)sy_tensor_numel(x);
    for (int32_t d = 0; d < x->rank; d++) {
        p->idims[d] = (int32_t)ix->dims[d];
        p->ydims[d] = (int32_t)x->dims[d];
    }
    return NULL;
}
sy_status *mcu_shape_prepare(sy_node *n, mcu_node *k)
{
    const shape_row *r = row_of(n);
    const char *op = r->op;
    const sy_tensor *x = H->node_num_inputs(n) ? H->node_input(n, 0) : NULL, *y = H->node_output(n, 0);
    k->kind = r->kind;
    switch (r->kind) {
    case MK_VIEW: return op[1] == 'p' ? prep_split(n, k) : prep_slice(n, k);
    case MK_PAD: return prep_pad(n, k);
    case MK_RESIZE: return prep_resize(n, k, r);
    case MK_NORM: return prep_norm(n, k, op);
    case MK_CONST: return prep_const(n, k, op);
    case MK_FILL: {
        k->u.fill.esize = (int32_t)sy_dt_size(y->dtype);
        k->u.fill.n = (int32_t)sy_tensor_numel(y);
        k->u.fill.in = r->onnx ? -1 : 1;
        if (r->onnx) { /* ConstantOfShape: `value` (one element), default fp32 0 */
            k->own = calloc(1, 8);
            if (!k->own)
                return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
            const sy_tensor *v = NULL;
            if (H->attr_tensor(n, "value", &v) && v && v->data) {
                if (v->dtype != y->dtype || sy_tensor_numel(v) != 1)
                    return H->status_new(SY_ERR_TYPE, "ConstantOfShape: value must be one element of the output's dtype");
                memcpy(k->own, v->data, (size_t)k->u.fill.esize);
            } else if (y->dtype != SY_DT_FLOAT32) {
                return H->status_new(SY_ERR_TYPE, "ConstantOfShape: without value the output is fp32");
            }
        }
        return NULL;
    }
    case MK_CAST:
        k->u.cast.from = elem_code(x->dtype);
        k->u.cast.to = elem_code(y->dtype);
        k->u.cast.n = (int32_t)sy_tensor_numel(x);
        return NULL;
    case MK_REVSEQ: {
        bool tfl = !r->onnx;
        int64_t sa = sy_attr_int_or(H, n, tfl ? "seq_dim" : "time_axis", 0);
        k->u.rs = (tflk_revseq){(int32_t)x->dims[0], (int32_t)x->dims[1], (int32_t)sy_dims_prod(x->dims, 2, x->rank),
                                (int32_t)sy_dt_size(x->dtype), (int32_t)sa, H->node_input(n, 1)->dtype == SY_DT_INT64};
        int32_t nb = sa ? k->u.rs.d0 : k->u.rs.d1;
        if (sy_tensor_numel(H->node_input(n, 1)) != nb)
            return H->status_new(SY_ERR_SHAPE, "%s: %d sequence lengths expected", op, nb);
        return NULL;
    }
    case MK_UNIQUE: { /* Y, indices and counts planned at their bound, else re-inferred with the data (docs/mcu.md) */
        tflk_unique *p = &k->u.uq.p;
        memset(&k->u.uq, 0, sizeof k->u.uq);
        k->u.uq.bounded = sy_host_has_bounded_outputs(H) && H->node_output_bounded(n, 0);
        p->dt = uq_code(x->dtype);
        p->outer = p->inner = 1;
        p->n_items = (int32_t)sy_tensor_numel(x);
        p->sorted = r->onnx ? sy_attr_int_or(H, n, "sorted", 1) != 0 : 0;
        if (r->onnx && sy_attr_has(H, n, "axis", SY_ATTR_INT)) {
            int64_t ax = sy_attr_int_or(H, n, "axis", 0);
            ax = ax < 0 ? ax + x->rank : ax;
            p->outer = (int32_t)sy_dims_prod(x->dims, 0, (int32_t)ax);
            p->n_items = (int32_t)x->dims[ax];
            p->inner = (int32_t)sy_dims_prod(x->dims, (int32_t)ax + 1, x->rank);
            k->u.uq.axis = (int32_t)ax;
        }
        const sy_tensor *ix = H->node_num_outputs(n) > 1 ? H->node_output(n, 1) : NULL;
        if (!ix && H->node_num_outputs(n) > 2)
            ix = H->node_output(n, 2);
        p->idx64 = ix && ix->dtype == SY_DT_INT64;
        for (uint32_t i = 1; i < H->node_num_outputs(n); i++)
            if (H->node_output(n, i) && (H->node_output(n, i)->dtype == SY_DT_INT64) != (p->idx64 != 0))
                return H->status_new(SY_ERR_TYPE, "%s: the index outputs must share one dtype", op);
        H->node_set_scratch(n, tflk_unique_scratch_bytes(p) + 1);
        return NULL;
    }
    case MK_EINSUM: {
        uint32_t nin = H->node_num_inputs(n);
        int32_t rank[TFLK_EIN_IN];
        const int64_t *dims[TFLK_EIN_IN];
        const char *eq = NULL;
        size_t eqlen = 0;
        if (nin < 1 || nin > TFLK_EIN_IN || !H->attr_string(n, "equation", &eq, &eqlen) || !eq)
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "Einsum: 1 to %d inputs and an equation", TFLK_EIN_IN);
        for (uint32_t i = 0; i < nin; i++) {
            rank[i] = H->node_input(n, i)->rank;
            dims[i] = H->node_input(n, i)->dims;
        }
        char msg[160];
        if (tflk_einsum_plan(&k->u.ein.p, eq, (int32_t)nin, rank, dims, msg, (int32_t)sizeof msg))
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "Einsum '%s': %s", eq, msg);
        k->u.ein.dt = ein_code(y->dtype);
        return NULL;
    }
    case MK_TRILU: {
        int64_t kv = 0, rr = x->dims[x->rank - 2], cc = x->dims[x->rank - 1];
        if (H->node_num_inputs(n) > 1 && H->node_input(n, 1) && ints_in(n, 1, &kv, 1) != 1)
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "Trilu: k must be a constant scalar");
        kv = kv < -(rr + cc) ? -(rr + cc) : kv > rr + cc ? rr + cc : kv;
        k->u.tri = (tflk_trilu){(int32_t)sy_dims_prod(x->dims, 0, x->rank - 2), (int32_t)rr, (int32_t)cc, (int32_t)kv,
                                sy_attr_int_or(H, n, "upper", 1) != 0, (int32_t)sy_dt_size(x->dtype)};
        return NULL;
    }
    case MK_SELECT: {
        /* y's dims; each operand right-aligned, stride 0 where it broadcasts */
        tflk_select *p = &k->u.sel3;
        memset(p, 0, sizeof *p);
        p->rank = y->rank ? y->rank : 1;
        p->dims[0] = 1;
        p->esize = (int32_t)sy_dt_size(y->dtype);
        int32_t *ss[3] = {p->sc, p->sa, p->sb};
        for (uint32_t i = 0; i < 3; i++) {
            const sy_tensor *t = H->node_input(n, i);
            int64_t st[SY_MAX_RANK];
            sy_strides(t->rank, t->dims, st);
            if (t->rank > y->rank)
                return H->status_new(SY_ERR_SHAPE, "%s: input %u has a higher rank than the output", op, i);
            for (int32_t d = 0; d < y->rank; d++) {
                int32_t dt = d - (y->rank - t->rank);
                ss[i][d] = dt >= 0 && t->dims[dt] != 1 ? (int32_t)st[dt] : 0;
                if (dt >= 0 && t->dims[dt] != 1 && t->dims[dt] != y->dims[d])
                    return H->status_new(SY_ERR_SHAPE, "%s: input %u does not broadcast to the output", op, i);
            }
        }
        for (int32_t d = 0; d < y->rank; d++)
            p->dims[d] = (int32_t)y->dims[d];
        return NULL;
    }
    case MK_ONEHOT: {
        int64_t depth = 0;
        if (ints_in(n, 1, &depth, 1) != 1) {
            double dv;
            if (!sy_tensor_scalar_f64(H->node_input(n, 1), &dv))
                return H->status_new(SY_ERR_INVALID_ARGUMENT, "%s: depth must be a constant scalar", op);
            depth = (int64_t)dv;
        }
        int32_t axis;
        SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", -1), x->rank + 1, false, "axis", &axis));
        if (y->rank != x->rank + 1 || y->dims[axis] != depth)
            return H->status_new(SY_ERR_SHAPE, "%s: output dim %d must be the depth %lld", op, axis, (long long)depth);
        k->u.oh = (tflk_onehot){(int32_t)sy_dims_prod(x->dims, 0, axis), (int32_t)depth,
                                (int32_t)sy_dims_prod(x->dims, axis, x->rank), (int32_t)sy_dt_size(y->dtype),
                                x->dtype == SY_DT_INT64, r->onnx};
        return NULL;
    }
    case MK_GATHER_EL: {
        return mcu_elements_params(n, x, &k->u.sel);
    }
    default: return H->status_new(SY_ERR_INTERNAL, "%s: no shape-family mapping", op);
    }
}

/* ---- host run ------------------------------------------------------------------ */

static const void *in_data(const sy_kernel_io *io, uint32_t i)
{
    return i < io->n_inputs && io->inputs[i] ? io->inputs[i]->data : NULL;
}

static sy_status *bad_index(const mcu_node *k, int64_t bad)
{
    return H->status_new(SY_ERR_RUNTIME, "%s '%s': index or length %lld is out of range (the package's sy_model_run "
                         "returns -1)", k->op, k->name, (long long)bad);
}

sy_status *mcu_shape_run(const mcu_node *k, const sy_kernel_io *io)
{
    void *y = io->outputs[0]->data;
    const void *x = in_data(io, 0), *a = in_data(io, 1), *b = in_data(io, 2);
    int64_t bad = 0;
    switch (k->kind) {
    case MK_RESIZE: tflk_resize_run(&k->u.rz, x, y); return NULL;
    case MK_NORM: {
        const tflk_norm *p = &k->u.nrm;
        float *mean = io->n_outputs > 1 && io->outputs[1] ? io->outputs[1]->data : NULL;
        float *inv = io->n_outputs > 2 && io->outputs[2] ? io->outputs[2]->data : NULL;
        tflk_norm_run(p, x, a, p->mode == TFLK_NORM_LAYER && !p->n_bias ? NULL : b, in_data(io, 3), in_data(io, 4), y,
                      mean, inv);
        return NULL;
    }
    case MK_CONST: memcpy(y, k->own, io->outputs[0]->nbytes); return NULL;
    case MK_FILL: tflk_fill(y, k->u.fill.in < 0 ? k->own : a, k->u.fill.esize, k->u.fill.n); return NULL;
    case MK_CAST: tflk_cast(k->u.cast.from, k->u.cast.to, x, y, k->u.cast.n); return NULL;
    case MK_REVSEQ: return tflk_revseq_run(&k->u.rs, x, a, y, &bad) ? bad_index(k, bad) : NULL;
    case MK_TRILU: tflk_trilu_run(&k->u.tri, x, y); return NULL;
    case MK_SELECT: tflk_select_run(&k->u.sel3, x, a, b, y); return NULL;
    case MK_ONEHOT: {
        const unsigned char *on = b, *off = k->u.oh.onnx ? b : in_data(io, 3);
        if (k->u.oh.onnx) /* values = [off, on] */
            on = (const unsigned char *)b + k->u.oh.esize;
        tflk_onehot_run(&k->u.oh, x, on, off, y);
        return NULL;
    }
    case MK_GATHER_EL: return tflk_gather_el_run(&k->u.sel, x, a, y, &bad) ? bad_index(k, bad) : NULL;
    case MK_UNIQUE: {
        const tflk_unique *p = &k->u.uq.p;
        bool bounded = k->u.uq.bounded;
        int32_t u = tflk_unique_run(p, x, NULL, NULL, NULL, NULL, io->scratch);
        int64_t slab = (int64_t)p->outer * p->inner, planned = slab > 0 ? sy_tensor_numel(io->outputs[0]) / slab : u;
        if (bounded ? u > planned : u != planned)
            return H->status_new(SY_ERR_RUNTIME, "%s '%s': %d unique values, the output was planned for %s%lld",
                                 k->op, k->name, (int)u, bounded ? "at most " : "", (long long)planned);
        /* TFLite: (values, idx); ONNX: (Y, indices, inverse_indices, counts) */
        void *o1 = io->n_outputs > 1 && io->outputs[1] ? io->outputs[1]->data : NULL;
        void *o2 = io->n_outputs > 2 && io->outputs[2] ? io->outputs[2]->data : NULL;
        void *o3 = io->n_outputs > 3 && io->outputs[3] ? io->outputs[3]->data : NULL;
        bool tfl = !strcmp(k->op, "UNIQUE");
        if (tfl)
            tflk_unique_run(p, x, y, NULL, o1, NULL, io->scratch);
        else
            tflk_unique_run(p, x, y, o1, o2, o3, io->scratch);
        if (bounded) { /* the run's lengths: TFLite's idx and ONNX's inverse_indices keep one per item */
            sy_bound_set_len(io->outputs[0], io->outputs[0]->rank > 1 ? k->u.uq.axis : 0, u);
            for (uint32_t i = 1; !tfl && i < io->n_outputs; i++)
                if (i != 2 && io->outputs[i])
                    sy_bound_set_len(io->outputs[i], 0, u);
        }
        return NULL;
    }
    case MK_EINSUM: {
        const void *in[TFLK_EIN_IN];
        for (uint32_t i = 0; i < io->n_inputs && i < TFLK_EIN_IN; i++)
            in[i] = in_data(io, i);
        tflk_einsum_run(&k->u.ein.p, k->u.ein.dt, in, y);
        return NULL;
    }
    default: return H->status_new(SY_ERR_INTERNAL, "%s: kind %d is not a shape-family kind", k->op, (int)k->kind);
    }
}
