/*
 * riscv_mcu: the parameters and host runs of the TFLite ops beyond the
 * convolution/pool/softmax/LSTM/ADD family of riscv_mcu.c, each on a
 * portable kernel of plugin_sdk/kernels that the codegen package carries:
 *
 *   views (tflk_strided.c)  SLICE STRIDED_SLICE SPLIT SPLIT_V UNPACK
 *                           REVERSE_V2 TILE DEPTH_TO_SPACE SPACE_TO_DEPTH
 *   tflk_move.c             PAD PADV2 MIRROR_PAD CONCATENATION PACK
 *                           GATHER GATHER_ND SCATTER_ND
 *   tflk_unary.c            the fp32 one-input ops, LOGICAL_NOT, QUANTIZE,
 *                           DEQUANTIZE
 *   tflk_binary.c           MAXIMUM MINIMUM (fp32, raw int8), DIV, PRELU and
 *                           POW (fp32, int8), the comparisons, LOGICAL_AND
 *                           LOGICAL_OR
 *
 * A view is an output that reads one input at a byte offset with element
 * strides (negative for REVERSE_V2, 0 for TILE's repeats), so nine ops share
 * one ten-line kernel. Which nodes are taken is mcu_rules.c's decision.
 */
#include "mcu.h"

#include "tfl_slice.h"

#define H mcu_H

static const struct {
    const char *op;
    mcu_kind kind;
} ops[] = {
    {"SLICE", MK_VIEW},         {"STRIDED_SLICE", MK_VIEW}, {"SPLIT", MK_VIEW},          {"SPLIT_V", MK_VIEW},
    {"UNPACK", MK_VIEW},        {"REVERSE_V2", MK_VIEW},    {"TILE", MK_VIEW},           {"DEPTH_TO_SPACE", MK_VIEW},
    {"SPACE_TO_DEPTH", MK_VIEW}, {"PAD", MK_PAD},           {"PADV2", MK_PAD},           {"MIRROR_PAD", MK_PAD},
    {"CONCATENATION", MK_CONCAT}, {"PACK", MK_CONCAT},      {"GATHER", MK_GATHER},       {"GATHER_ND", MK_GATHER_ND},
    {"SCATTER_ND", MK_SCATTER_ND}, {"LOGICAL_NOT", MK_NOT_B}, {"QUANTIZE", MK_QUANTIZE_F32},
    {"DEQUANTIZE", MK_DEQUANTIZE_S8}, {"MAXIMUM", MK_MAXMIN_S8}, {"MINIMUM", MK_MAXMIN_S8}, {"DIV", MK_BIN_F32},
    {"EQUAL", MK_CMP_F32},      {"NOT_EQUAL", MK_CMP_F32},  {"LESS", MK_CMP_F32},        {"LESS_EQUAL", MK_CMP_F32},
    {"GREATER", MK_CMP_F32},    {"GREATER_EQUAL", MK_CMP_F32}, {"LOGICAL_AND", MK_CMP_B}, {"LOGICAL_OR", MK_CMP_B},
    {"PRELU", MK_BIN_F32},      {"POW", MK_BIN_F32},
};

/* the fp32 one-input ops (tflk_unary.c) by TFLite name */
static int unary_kind(const char *op)
{
    static const struct {
        const char *op;
        int kind;
    } u[] = {
        {"ABS", TFLK_U_ABS},       {"CEIL", TFLK_U_CEIL},         {"COS", TFLK_U_COS},       {"EXP", TFLK_U_EXP},
        {"FLOOR", TFLK_U_FLOOR},   {"LOG", TFLK_U_LOG},           {"ROUND", TFLK_U_ROUND},   {"RSQRT", TFLK_U_RSQRT},
        {"SIN", TFLK_U_SIN},       {"SQRT", TFLK_U_SQRT},         {"SQUARE", TFLK_U_SQUARE}, {"NEG", TFLK_U_NEG},
        {"RELU", TFLK_U_RELU},     {"RELU6", TFLK_U_RELU6},       {"RELU_N1_TO_1", TFLK_U_RELU1},
        {"RELU_0_TO_1", TFLK_U_RELU01}, {"LOGISTIC", TFLK_U_LOGISTIC}, {"TANH", TFLK_U_TANH}, {"ELU", TFLK_U_ELU},
        {"HARD_SWISH", TFLK_U_HSWISH}, {"GELU", TFLK_U_GELU},     {"LEAKY_RELU", TFLK_U_LEAKY},
    };
    for (size_t i = 0; i < SY_COUNT_OF(u); i++)
        if (!strcmp(op, u[i].op))
            return u[i].kind;
    return -1;
}

bool mcu_ops_has(const char *op, sy_dtype dt)
{
    if (dt == SY_DT_FLOAT32 && unary_kind(op) >= 0)
        return true;
    for (size_t i = 0; i < SY_COUNT_OF(ops); i++)
        if (!strcmp(op, ops[i].op))
            return true;
    return false;
}

static sy_status *too_big(const char *op, const sy_tensor *t)
{
    return H->status_new(SY_ERR_UNSUPPORTED, "%s: tensor '%s' has %lld elements or rank %d; the MCU kernels index "
                         "with int32 over at most %d dims", op, t->name ? t->name : "", (long long)sy_tensor_numel(t),
                         (int)t->rank, TFLK_BIN_RANK);
}

static bool fits(const sy_tensor *t) { return t->rank <= TFLK_BIN_RANK && sy_tensor_numel(t) <= INT32_MAX / 8; }

/* the views' storage: n strided views and their byte offsets */
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

/* an output `y` that reads x from element `start` with per-dim element
 * steps `step` over `rank` dims of `len` (the leading size-1 dims of a
 * rank above 6 are dropped) */
static sy_status *set_view(mcu_node *k, int32_t v, const sy_tensor *x, int32_t rank, const int64_t *len,
                           const int64_t *step, int64_t start)
{
    tflk_strided *p = &k->views[v];
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
    if (!r) {
        p->dims[0] = 1;
        r = 1;
    }
    p->rank = r;
    p->esize = (int32_t)sy_dt_size(x->dtype);
    k->view_off[v] = start * p->esize;
    return NULL;
}

static sy_status *prep_view(sy_node *n, mcu_node *k, const char *op)
{
    uint32_t nout = H->node_num_outputs(n);
    int32_t xi = !strcmp(op, "SPLIT") ? 1 : 0;
    const sy_tensor *x = H->node_input(n, (uint32_t)xi);
    if (!fits(x))
        return too_big(op, x);
    for (uint32_t i = 0; i < nout; i++)
        if (!fits(H->node_output(n, i)))
            return too_big(op, H->node_output(n, i));
    k->view_in = xi;
    int64_t st[SY_MAX_RANK], len[SY_MAX_RANK], step[SY_MAX_RANK];
    sy_strides(x->rank, x->dims, st);
    SY_TRY(views_alloc(k, (int32_t)nout));
    if (!strcmp(op, "SLICE") || !strcmp(op, "STRIDED_SLICE")) {
        int64_t start = 0;
        if (op[0] == 'S' && op[1] == 'L') {
            int64_t b[SY_MAX_RANK];
            SY_TRY(tfl_slice_params(H, n, x, b, len));
            for (int32_t d = 0; d < x->rank; d++) {
                start += b[d] * st[d];
                step[d] = st[d];
            }
        } else {
            tfl_ss_plan p;
            SY_TRY(tfl_ss_make(H, n, x, &p));
            for (int32_t d = 0; d < x->rank; d++) {
                start += p.start[d] * st[d];
                step[d] = p.step[d] * st[d];
                len[d] = p.len[d];
            }
        }
        return set_view(k, 0, x, x->rank, len, step, start);
    }
    if (!strcmp(op, "SPLIT") || !strcmp(op, "SPLIT_V") || !strcmp(op, "UNPACK")) {
        int32_t axis;
        if (op[0] == 'U') {
            SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", 0), x->rank, false, "axis", &axis));
        } else {
            int64_t a = 0, cnt = 0;
            SY_TRY(tfl_const_ints(H, n, !strcmp(op, "SPLIT_V") ? 2 : 0, "axis", &a, 1, &cnt));
            SY_TRY(sy_norm_axis(H, a, x->rank, false, "axis", &axis));
        }
        int64_t at = 0;
        for (uint32_t i = 0; i < nout; i++) {
            int64_t sz = op[0] == 'U' ? 1 : H->node_output(n, i)->dims[axis];
            for (int32_t d = 0; d < x->rank; d++) {
                len[d] = d == axis ? sz : x->dims[d];
                step[d] = st[d];
            }
            SY_TRY(set_view(k, (int32_t)i, x, x->rank, len, step, at * st[axis]));
            at += sz;
        }
        return NULL;
    }
    if (!strcmp(op, "REVERSE_V2")) {
        int64_t ax[SY_MAX_RANK], cnt = 0, start = 0;
        SY_TRY(tfl_const_ints(H, n, 1, "axis", ax, SY_MAX_RANK, &cnt));
        for (int32_t d = 0; d < x->rank; d++) {
            len[d] = x->dims[d];
            step[d] = st[d];
        }
        for (int64_t i = 0; i < cnt; i++) {
            int32_t a;
            SY_TRY(sy_norm_axis(H, ax[i], x->rank, false, "axis", &a));
            if (step[a] > 0 && x->dims[a] > 0) {
                start += (x->dims[a] - 1) * st[a];
                step[a] = -st[a];
            }
        }
        return set_view(k, 0, x, x->rank, len, step, start);
    }
    if (!strcmp(op, "TILE")) {
        /* y[m_0, d_0, m_1, d_1, ...] with stride 0 along each repeat; a
         * multiple of 1 adds no dim */
        int64_t m[SY_MAX_RANK], cnt = 0;
        SY_TRY(tfl_const_ints(H, n, 1, "multiples", m, SY_MAX_RANK, &cnt));
        int64_t L[2 * SY_MAX_RANK], S[2 * SY_MAX_RANK];
        int32_t r = 0;
        for (int32_t d = 0; d < x->rank; d++) {
            if (m[d] != 1) {
                L[r] = m[d];
                S[r++] = 0;
            }
            L[r] = x->dims[d];
            S[r++] = st[d];
        }
        return set_view(k, 0, x, r, L, S, 0);
    }
    /* DEPTH_TO_SPACE: y[n, h, i, w, j, c] = x[n, h, w, (i b + j) C' + c];
     * SPACE_TO_DEPTH: y[n, h, w, i, j, c] = x[n, h b + i, w b + j, c] */
    int64_t b = sy_attr_int_or(H, n, "block_size", 0);
    if (x->rank != 4 || b < 2)
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "%s: a 4-D NHWC input and block_size >= 2", op);
    int64_t N = x->dims[0], Hh = x->dims[1], W = x->dims[2], C = x->dims[3];
    if (op[0] == 'D') {
        int64_t c2 = C / (b * b);
        int64_t L[6] = {N, Hh, b, W, b, c2}, S[6] = {Hh * W * C, W * C, b * c2, C, c2, 1};
        return set_view(k, 0, x, 6, L, S, 0);
    }
    int64_t L[6] = {N, Hh / b, W / b, b, b, C}, S[6] = {Hh * W * C, b * W * C, b * C, W * C, C, 1};
    return set_view(k, 0, x, 6, L, S, 0);
}

static sy_status *prep_pad(sy_node *n, mcu_node *k, const char *op)
{
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_output(n, 0);
    tflk_pad *p = &k->u.pad;
    if (!fits(x) || !fits(y))
        return too_big(op, y);
    int64_t pads[2 * SY_MAX_RANK], cnt = 0;
    SY_TRY(tfl_const_ints(H, n, 1, "paddings", pads, 2 * SY_MAX_RANK, &cnt));
    if (cnt != 2 * x->rank)
        return H->status_new(SY_ERR_SHAPE, "%s: paddings must be [%d, 2]", op, (int)x->rank);
    p->rank = x->rank ? x->rank : 1;
    p->odims[0] = p->idims[0] = 1;
    p->esize = (int32_t)sy_dt_size(x->dtype);
    for (int32_t d = 0; d < x->rank; d++) {
        p->idims[d] = (int32_t)x->dims[d];
        p->odims[d] = (int32_t)y->dims[d];
        p->before[d] = (int32_t)pads[2 * d];
    }
    if (!strcmp(op, "MIRROR_PAD")) {
        p->mode = sy_attr_string_is(H, n, "mode", "REFLECT", "SYMMETRIC") ? 2 : 1;
        return NULL;
    }
    const sy_tensor *cv = H->node_num_inputs(n) > 2 ? H->node_input(n, 2) : NULL;
    if (cv) {
        if (!cv->data || cv->dtype != x->dtype || sy_tensor_numel(cv) != 1)
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "PADV2: constant_values must be a constant scalar of the "
                                 "input's dtype %s", sy_dt_name(x->dtype));
        memcpy(p->fill, cv->data, (size_t)p->esize);
        return NULL;
    }
    float sc;
    int32_t zp;
    if (y->dtype == SY_DT_INT8 && tfl_qparams(y, &sc, &zp)) /* real 0: the zero point */
        p->fill[0] = (uint8_t)(int8_t)zp;
    return NULL;
}

static sy_status *prep_concat(sy_node *n, mcu_node *k, const char *op)
{
    const sy_tensor *y = H->node_output(n, 0);
    uint32_t nin = H->node_num_inputs(n);
    tflk_concat *p = &k->u.cat;
    if (!fits(y))
        return too_big(op, y);
    int32_t axis;
    bool pack = op[0] == 'P';
    SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", 0), y->rank, false, "axis", &axis));
    /* PACK stacks along a new axis: the same rows with a dim of 1 per input */
    int64_t outer = sy_dims_prod(y->dims, 0, axis), inner = sy_dims_prod(y->dims, axis + 1, y->rank);
    k->own = calloc(nin, sizeof(int32_t) + 2 * sizeof(float));
    if (!k->own)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    int32_t *rows = k->own;
    float *scale = (float *)(void *)(rows + nin), *bias = scale + nin;
    p->n = (int32_t)nin;
    p->outer = (int32_t)outer;
    p->esize = (int32_t)sy_dt_size(y->dtype);
    p->is_f32 = y->dtype == SY_DT_FLOAT32;
    p->rows = rows;
    SY_TRY(tfl_act_of(H, n, "NONE", &p->act));
    float ys = 0;
    int32_t yz = 0;
    bool rq = false;
    if (y->dtype == SY_DT_INT8 && !tfl_qparams(y, &ys, &yz))
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "int8 %s output needs quantization parameters", op);
    p->out_zp = yz;
    for (uint32_t i = 0; i < nin; i++) {
        const sy_tensor *t = H->node_input(n, i);
        rows[i] = (int32_t)((pack ? 1 : t->dims[axis]) * inner);
        float xs;
        int32_t xz;
        if (y->dtype != SY_DT_INT8)
            continue;
        if (!tfl_qparams(t, &xs, &xz))
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "int8 %s input %u needs quantization parameters", op, i);
        if (xs != ys || xz != yz) {
            /* cpu_ref's tflite_tensor formula: round(q * s + b) + zp_out */
            scale[i] = xs / ys;
            bias[i] = -(float)xz * scale[i];
            rq = true;
        }
    }
    if (rq) {
        p->scale = scale;
        p->bias = bias;
    }
    return NULL;
}

static sy_status *prep_gather(sy_node *n, mcu_node *k, const char *op)
{
    const sy_tensor *x = H->node_input(n, 0), *ix = H->node_input(n, 1), *y = H->node_output(n, 0);
    bool scatter = op[0] == 'S';
    if (scatter) { /* SCATTER_ND(indices, updates, shape) */
        x = y;
        ix = H->node_input(n, 0);
    }
    if (!fits(x) || !fits(y) || !fits(ix))
        return too_big(op, x);
    if (ix->dtype != SY_DT_INT32 && ix->dtype != SY_DT_INT64)
        return H->status_new(SY_ERR_TYPE, "%s: indices must be int32 or int64", op);
    int32_t idx64 = ix->dtype == SY_DT_INT64, es = (int32_t)sy_dt_size(x->dtype);
    if (!strcmp(op, "GATHER")) {
        int32_t axis;
        SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", 0), x->rank, false, "axis", &axis));
        k->u.gat = (tflk_gather){(int32_t)sy_dims_prod(x->dims, 0, axis), (int32_t)x->dims[axis],
                                 (int32_t)sy_tensor_numel(ix), (int32_t)sy_dims_prod(x->dims, axis + 1, x->rank), es,
                                 idx64, 0};
        return NULL;
    }
    tflk_gather_nd *p = &k->u.gnd;
    int64_t D = ix->rank ? ix->dims[ix->rank - 1] : 0;
    if (D < 1 || D > x->rank)
        return H->status_new(SY_ERR_SHAPE, "%s: the index tuples' length %lld must be in [1, %d]", op, (long long)D,
                             (int)x->rank);
    int64_t st[SY_MAX_RANK];
    sy_strides(x->rank, x->dims, st);
    p->n_tuples = (int32_t)(sy_tensor_numel(ix) / D);
    p->nd = (int32_t)D;
    p->inner = (int32_t)sy_dims_prod(x->dims, (int32_t)D, x->rank);
    p->esize = es;
    p->idx64 = idx64;
    p->total = (int32_t)sy_tensor_numel(x);
    p->dtype = x->dtype == SY_DT_FLOAT32 ? TFLK_F32 : x->dtype == SY_DT_INT8 ? TFLK_S8 : TFLK_S32;
    if (scatter && x->dtype != SY_DT_FLOAT32 && x->dtype != SY_DT_INT8 && x->dtype != SY_DT_INT32)
        return H->status_new(SY_ERR_TYPE, "SCATTER_ND: updates must be float32, int8 or int32");
    for (int32_t d = 0; d < p->nd; d++) {
        p->dims[d] = (int32_t)x->dims[d];
        p->st[d] = (int32_t)st[d];
    }
    return NULL;
}

static sy_status *prep_quant(sy_node *n, mcu_node *k, const char *op)
{
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_output(n, 0);
    if (sy_tensor_numel(x) > INT32_MAX)
        return too_big(op, x);
    k->u.tq.n = (int32_t)sy_tensor_numel(x);
    const sy_tensor *q = op[0] == 'Q' ? y : x;
    if (!tfl_qparams(q, &k->u.tq.scale, &k->u.tq.zp))
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "%s: '%s' needs per-tensor quantization parameters", op,
                             q->name ? q->name : "");
    if (op[0] == 'Q' && x->dtype == SY_DT_INT8) {
        float is;
        k->kind = MK_REQUANT_S8;
        if (!tfl_qparams(x, &is, &k->u.tq.in_zp))
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "QUANTIZE: the int8 input needs quantization parameters");
        sy_q_quantize_multiplier((double)is / (double)k->u.tq.scale, &k->u.tq.mult, &k->u.tq.shift);
    } else {
        k->kind = op[0] == 'Q' ? MK_QUANTIZE_F32 : MK_DEQUANTIZE_S8;
    }
    return NULL;
}

static int32_t binary_op(const char *op)
{
    static const struct {
        const char *op;
        int32_t code;
    } b[] = {{"MAXIMUM", TFLK_MAX}, {"MINIMUM", TFLK_MIN}, {"DIV", TFLK_DIV}, {"EQUAL", TFLK_EQ},
             {"NOT_EQUAL", TFLK_NE}, {"LESS", TFLK_LT},   {"LESS_EQUAL", TFLK_LE}, {"GREATER", TFLK_GT},
             {"GREATER_EQUAL", TFLK_GE}, {"LOGICAL_AND", TFLK_AND}, {"LOGICAL_OR", TFLK_OR},
             {"PRELU", TFLK_PRELU}, {"POW", TFLK_POW}};
    for (size_t i = 0; i < SY_COUNT_OF(b); i++)
        if (!strcmp(op, b[i].op))
            return b[i].code;
    return -1;
}

/* int8 PRELU and POW, with cpu_ref's tflite_math parameters (tfl_params.h):
 * an int8 alpha is TFLite's integer PRELU, an fp32 alpha and POW go through
 * float (tflk_bin8f); no fused activation, the int8 range */
static sy_status *prep_prelu_pow8(sy_node *n, mcu_node *k, const char *op)
{
    const sy_tensor *x = H->node_input(n, 0), *b = H->node_input(n, 1), *y = H->node_output(n, 0);
    bool b_f32 = b->dtype == SY_DT_FLOAT32;
    float s1, s2 = 0, so;
    int32_t z1, z2 = 0, zo;
    if (!tfl_qparams(x, &s1, &z1) || !tfl_qparams(y, &so, &zo) || (!b_f32 && !tfl_qparams(b, &s2, &z2)))
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "int8 %s needs per-tensor quantization", op);
    if (op[1] == 'R' && !b_f32) {
        k->kind = MK_PRELU_S8;
        SY_TRY(tfl_binary_walk(H, n, &k->u.bin));
        tfl_prelu8_params(s1, z1, s2, z2, so, zo, -128, 127, &k->u.bin);
        return NULL;
    }
    k->kind = MK_BIN8F_S8;
    SY_TRY(tfl_binary_walk(H, n, &k->u.b8f.w));
    tfl_bin8f_params(op[1] == 'R' ? TFLK_PRELU : TFLK_POW, s1, z1, s2, z2, so, zo, -128, 127, b_f32, &k->u.b8f);
    return NULL;
}

sy_status *mcu_ops_prepare(sy_node *n, mcu_node *k)
{
    const char *op = H->node_op(n);
    const sy_tensor *x = H->node_input(n, 0);
    int uk = unary_kind(op);
    if (uk >= 0 && x->dtype == SY_DT_FLOAT32) {
        k->kind = MK_UNARY_F32;
        k->u.un = (tflk_unary){uk, sy_attr_int_or(H, n, "approximate", 0) != 0, sy_attr_float_or(H, n, "alpha", 0.0f), 0.0f};
        if (sy_tensor_numel(x) > INT32_MAX)
            return too_big(op, x);
        return NULL;
    }
    mcu_kind kind = MK__COUNT;
    for (size_t i = 0; i < SY_COUNT_OF(ops); i++)
        if (!strcmp(op, ops[i].op))
            kind = ops[i].kind;
    k->kind = kind;
    switch (kind) {
    case MK_VIEW: return prep_view(n, k, op);
    case MK_PAD: return prep_pad(n, k, op);
    case MK_CONCAT: return prep_concat(n, k, op);
    case MK_GATHER:
    case MK_GATHER_ND:
    case MK_SCATTER_ND: return prep_gather(n, k, op);
    case MK_QUANTIZE_F32:
    case MK_DEQUANTIZE_S8: return prep_quant(n, k, op);
    case MK_NOT_B:
        if (sy_tensor_numel(x) > INT32_MAX)
            return too_big(op, x);
        return NULL;
    case MK_MAXMIN_S8:
    case MK_BIN_F32:
    case MK_CMP_F32:
    case MK_CMP_B:
        if (kind == MK_MAXMIN_S8 && x->dtype == SY_DT_FLOAT32)
            k->kind = MK_BIN_F32;
        if (kind == MK_CMP_F32 && x->dtype == SY_DT_BOOL)
            k->kind = MK_CMP_B;
        if (kind == MK_BIN_F32 && x->dtype == SY_DT_INT8 && (!strcmp(op, "PRELU") || !strcmp(op, "POW")))
            return prep_prelu_pow8(n, k, op);
        SY_TRY(tfl_build_binary(H, n, &k->u.bin));
        k->u.bin.op = binary_op(op);
        if (kind == MK_BIN_F32 && x->dtype == SY_DT_INT8 && !strcmp(op, "DIV")) {
            /* cpu_ref's tflite_math parameters (tfl_div8_params) in the walk's fields */
            const sy_tensor *b = H->node_input(n, 1), *y = H->node_output(n, 0);
            float s1, s2, so;
            int32_t z1, z2, zo;
            tflk_div8 d;
            if (!tfl_qparams(x, &s1, &z1) || !tfl_qparams(b, &s2, &z2) || !tfl_qparams(y, &so, &zo))
                return H->status_new(SY_ERR_INVALID_ARGUMENT, "int8 DIV needs per-tensor quantization");
            tfl_div8_params(s1, z1, s2, z2, so, zo, k->u.bin.lo, k->u.bin.hi, &d);
            k->kind = MK_DIV_S8;
            k->u.bin.z1 = d.zp1, k->u.bin.z2 = d.zp2, k->u.bin.zo = d.out_zp, k->u.bin.mo = d.mult,
            k->u.bin.so = d.shift;
        }
        return NULL;
    default: return H->status_new(SY_ERR_UNSUPPORTED, "%s: no riscv_mcu kernel", op);
    }
}

static sy_status *index_error(const mcu_node *k, int64_t bad)
{
    return H->status_new(SY_ERR_RUNTIME, "%s '%s': index %lld is out of range (the package's sy_model_run returns -1)",
                         k->op, k->name, (long long)bad);
}

sy_status *mcu_ops_run(const mcu_node *k, const sy_kernel_io *io)
{
    const void *x = io->inputs[0]->data;
    const void *b = io->n_inputs > 1 && io->inputs[1] ? io->inputs[1]->data : NULL;
    void *y = io->outputs[0]->data;
    int32_t n = (int32_t)sy_tensor_numel(io->inputs[0]);
    int64_t bad = 0;
    switch (k->kind) {
    case MK_VIEW: {
        const unsigned char *src = io->inputs[k->view_in]->data;
        for (int32_t i = 0; i < k->n_views && i < (int32_t)io->n_outputs; i++)
            if (sy_tensor_numel(io->outputs[i]))
                tflk_strided_copy(&k->views[i], src + k->view_off[i], io->outputs[i]->data);
        return NULL;
    }
    case MK_PAD: tflk_pad_run(&k->u.pad, x, y); return NULL;
    case MK_CONCAT: {
        const void *xs[MCU_MAX_IO];
        if (io->n_inputs > MCU_MAX_IO)
            return H->status_new(SY_ERR_UNSUPPORTED, "%s: more than %d inputs", k->op, MCU_MAX_IO);
        for (uint32_t i = 0; i < io->n_inputs; i++)
            xs[i] = io->inputs[i]->data;
        tflk_concat_run(&k->u.cat, xs, y);
        return NULL;
    }
    case MK_GATHER: return tflk_gather_run(&k->u.gat, x, b, y, &bad) ? index_error(k, bad) : NULL;
    case MK_GATHER_ND: return tflk_gather_nd_run(&k->u.gnd, x, b, y, &bad) ? index_error(k, bad) : NULL;
    case MK_SCATTER_ND: return tflk_scatter_nd_run(&k->u.gnd, x, b, y, &bad) ? index_error(k, bad) : NULL;
    case MK_SCATTER_ND_SET:
        return tflk_scatter_nd_set(&k->u.gnd, x, b, io->inputs[2]->data, y, &bad) ? index_error(k, bad) : NULL;
    case MK_SCATTER_EL:
        return tflk_scatter_el_run(&k->u.sel, x, b, io->inputs[2]->data, y, &bad) ? index_error(k, bad) : NULL;
    case MK_UNARY_F32: tflk_unary_f32(&k->u.un, x, y, n); return NULL;
    case MK_NOT_B: tflk_not_b(x, y, n); return NULL;
    case MK_QUANTIZE_F32: tflk_quantize_f32(x, y, n, k->u.tq.scale, k->u.tq.zp); return NULL;
    case MK_REQUANT_S8:
        tflk_requantize_s8(x, y, n, k->u.tq.in_zp, k->u.tq.zp, k->u.tq.mult, k->u.tq.shift);
        return NULL;
    case MK_DEQUANTIZE_S8: tflk_dequantize_s8(x, y, n, k->u.tq.scale, k->u.tq.zp); return NULL;
    case MK_MAXMIN_S8: tflk_binary_s8_raw(&k->u.bin, x, b, y); return NULL;
    case MK_BIN_F32: tflk_binary_f32(&k->u.bin, x, b, y); return NULL;
    case MK_CMP_F32: tflk_compare_f32(&k->u.bin, x, b, y); return NULL;
    case MK_CMP_B: tflk_compare_b(&k->u.bin, x, b, y); return NULL;
    case MK_SHIFT_U8: tflk_shift_u8(&k->u.bin, x, b, y); return NULL;
    case MK_DIV_S8:
        if (tflk_div_s8_run(&k->u.bin, x, b, y))
            return H->status_new(SY_ERR_RUNTIME, "int8 DIV '%s': a divisor element equals its zero point %d (a real "
                                 "0; the package's sy_model_run returns -1)", k->name, (int)k->u.bin.z2);
        return NULL;
    case MK_PRELU_S8: tflk_prelu_s8(&k->u.bin, x, b, y); return NULL;
    case MK_BIN8F_S8: tflk_binary_s8f(&k->u.b8f, x, b, y); return NULL;
    case MK_IDIV_S8:
        if (tflk_idiv_s8_run(&k->u.bin, x, b, y))
            return H->status_new(SY_ERR_RUNTIME, "int8 Div '%s': a divisor element is 0 (integer division by zero; "
                                 "the package's sy_model_run returns -1)", k->name);
        return NULL;
    default: return H->status_new(SY_ERR_INTERNAL, "%s: kind %d is not an mcu_ops kind", k->op, (int)k->kind);
    }
}
