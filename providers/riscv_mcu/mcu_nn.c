/*
 * riscv_mcu: the neural-network operators of ops-mcu.md that run on the
 * transposed-convolution, batched-matmul and 3-D convolution kernels
 * (plugin_sdk/kernels/tflk_tconv.c, tflk_bmm.c, tflk_conv3d.c, the code
 * cpu_ref's tflite_nn runs too):
 *
 *   TFLite TRANSPOSE_CONV (fp32, int8), BATCH_MATMUL (fp32, int8), CONV_3D
 *   (fp32, int8) as the builders of tfl_params.h make them for cpu_ref;
 *   ONNX ConvTranspose and Conv with a 5-D input (fp32, NCHW / NCDHW
 *   through NHWC / NDHWC copies in the node's scratch, weights rearranged
 *   once at prepare), MatMul of rank > 2 or with a runtime B, and Gemm
 *   with transA = 1 (fp32).
 *
 * The seed's rules of each row (Table A #2, #5, #90; Table B #2, #4, #5,
 * #113) are mcu_nn_check's; every decline quotes its row. ONNX LSTM (#20)
 * GRU (#82) and fp32 RNN (#114) go through here to mcu_lstm.c, mcu_gru.c and
 * mcu_rnn.c.
 */
#include "mcu.h"

#include <math.h> /* INFINITY */

#define H mcu_H

static bool is_onnx(const sy_node *n)
{
    const char *dom = H->node_domain(n);
    return !dom || !*dom || !strcmp(dom, "ai.onnx");
}

static bool is_tfl(const sy_node *n)
{
    const char *dom = H->node_domain(n);
    return dom && !strcmp(dom, TFL_DOMAIN);
}

bool mcu_nn_has(const sy_node *n)
{
    const char *op = H->node_op(n);
    if (is_tfl(n))
        return !strcmp(op, "TRANSPOSE_CONV") || !strcmp(op, "BATCH_MATMUL") || !strcmp(op, "CONV_3D");
    if (!is_onnx(n))
        return false;
    if (!strcmp(op, "ConvTranspose") || !strcmp(op, "LSTM") || !strcmp(op, "GRU") || !strcmp(op, "RNN"))
        return true;
    const sy_tensor *x = mcu_in_opt(n, 0), *w = mcu_in_opt(n, 1);
    if (!x)
        return false;
    if (!strcmp(op, "Conv"))
        return x->rank == 5;
    if (!strcmp(op, "MatMul")) /* rank 2 with a constant B stays on the fully-connected kernel (mcu_onnx.c) */
        return x->rank > 2 || (w && (w->rank > 2 || !w->data));
    if (!strcmp(op, "Gemm"))
        return sy_attr_int_or(H, n, "transA", 0) != 0;
    return false;
}

static bool ints_all_eq(const sy_node *n, const char *attr, int64_t want)
{
    int64_t v[8];
    int64_t cnt = sy_attr_ints_copy(H, n, attr, v, 8);
    for (int64_t i = 0; i < cnt && i < 8; i++)
        if (v[i] != want)
            return false;
    return true;
}

static bool f32(const sy_tensor *t) { return !t || t->dtype == SY_DT_FLOAT32; }

static bool act_none(const sy_node *n)
{
    return sy_attr_string_is(H, n, "fused_activation_function", "NONE", "NONE");
}

/* int8 activations: per-tensor quantization (the builders need it) */
static bool q_tensor(const sy_tensor *t)
{
    float s;
    int32_t z;
    return t && t->dtype == SY_DT_INT8 && tfl_qparams(t, &s, &z);
}

static bool check_tconv(const mcu_cfg *cfg, const sy_node *n, sy_claim *c)
{
    const bool seed = cfg->rules == MCU_RULES_SEED;
    const char *row = "ops-mcu.md Table A #90 TransposeConv";
    const sy_tensor *os = mcu_in_opt(n, 0), *w = mcu_in_opt(n, 1), *x = mcu_in_opt(n, 2), *b = mcu_in_opt(n, 3);
    const sy_tensor *y = H->node_output(n, 0);
    if (!x || !w || !os || !y || x->rank != 4 || w->rank != 4 || y->rank != 4)
        return mcu_decline(c, SY_REASON_RANK, "TRANSPOSE_CONV: input and filter must be 4D (NHWC, [OC, KH, KW, IC]) "
                        "(%s)", row), false;
    if (!os->data || os->dtype != SY_DT_INT32 || !w->data || (b && !b->data))
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "TRANSPOSE_CONV: output_shape (int32), filter and bias must be "
                        "offline constants (%s: output_shape const, consumed by the converter)", row), false;
    /* rules = tflm: what TFLite Micro's kernel takes (any batch, a fused activation) */
    if (seed && x->dims[0] != 1)
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "TRANSPOSE_CONV: batch must be 1, got %lld (%s: input static, batch "
                        "= 1; rules = tflm accepts it)", (long long)x->dims[0], row), false;
    if (seed && !act_none(n))
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "TRANSPOSE_CONV: fused_activation_function must be NONE (%s: fused "
                        "activation not enabled; a following Relu stays a separate node; rules = tflm accepts it)",
                        row), false;
    if (x->dtype == SY_DT_FLOAT32) {
        if (!f32(w) || !f32(b) || !f32(y))
            return mcu_decline(c, SY_REASON_DTYPE, "TRANSPOSE_CONV: fp32 input needs fp32 filter, bias and output (%s)",
                            row), false;
        return true;
    }
    if (x->dtype != SY_DT_INT8 || !q_tensor(x) || !q_tensor(y) || w->dtype != SY_DT_INT8 ||
        (b && b->dtype != SY_DT_INT32))
        return mcu_decline(c, SY_REASON_DTYPE, "TRANSPOSE_CONV: fp32, or full-quant int8 (per-tensor int8 input and "
                        "output, int8 filter, int32 bias) (%s)", row), false;
    return true;
}

static bool check_bmm(const mcu_cfg *cfg, const sy_node *n, const char *op, const char *row, bool tfl, sy_claim *c)
{
    const sy_tensor *a = mcu_in_opt(n, 0), *b = mcu_in_opt(n, 1), *y = H->node_output(n, 0);
    /* rules = tflm (TFLite only): TFLite Micro's BATCH_MATMUL broadcasts the batch dims; the kernel does too */
    const bool bcast = tfl && cfg->rules == MCU_RULES_TFLM;
    if (!a || !b || !y || a->rank < 2 || b->rank < 2 || y->rank > TFLK_BMM_RANK + 2 ||
        (!bcast && (a->rank > 4 || b->rank != a->rank)))
        return mcu_decline(c, SY_REASON_RANK, "%s: x and y must be 2-4D of one rank, got ranks %d and %d (%s: no "
                        "broadcasting)", op, a ? a->rank : 0, b ? b->rank : 0, row), false;
    for (int32_t i = 0; !bcast && i + 2 < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: batch dim %d is %lld and %lld; they must be identical (%s: "
                            "no broadcasting%s)", op, (int)i, (long long)a->dims[i], (long long)b->dims[i], row,
                            tfl ? "; rules = tflm accepts it" : ""), false;
    if (a->dtype == SY_DT_FLOAT32 && f32(b) && f32(y))
        return true;
    if (tfl && q_tensor(a) && q_tensor(b) && q_tensor(y))
        return true;
    return mcu_decline(c, SY_REASON_DTYPE, "%s: %s%s (%s)", op, tfl ? "fp32, or int8 with per-tensor quantization" : "fp32",
                    tfl ? "" : " on this kernel (int8 runs as the switchyard.quant QMatMul of a quantized model)",
                    row), false;
}

static bool check_conv3d(const sy_node *n, sy_claim *c)
{
    bool tfl = is_tfl(n);
    const char *row = tfl ? "ops-mcu.md Table A #2 Conv3D" : "ops-mcu.md Table B #2 Conv3D";
    const char *op = H->node_op(n);
    const sy_tensor *x = mcu_in_opt(n, 0), *w = mcu_in_opt(n, 1), *b = mcu_in_opt(n, 2), *y = H->node_output(n, 0);
    if (!x || !w || !y || x->rank != 5 || w->rank != 5)
        return mcu_decline(c, SY_REASON_RANK, "%s: 5-D input and filter (%s)", op, row), false;
    if (!w->data || (b && !b->data))
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "%s: filter and bias must be constants (%s: filter const, bias "
                        "optional)", op, row), false;
    if (x->dtype == SY_DT_INT8 && tfl) {
        /* the FULL_QUANT form of an fp32 model (seed row: int8 weights, int32 bias); the filter symmetric, per
         * tensor or per output channel (its last axis) */
        const sy_quant_params *wq = w->quant;
        bool wq_ok = wq && wq->scales && (wq->count == 1 || (wq->axis == 4 && (int64_t)wq->count == w->dims[4]));
        for (uint32_t i = 0; wq_ok && wq->zero_points && i < wq->count; i++)
            wq_ok = wq->zero_points[i] == 0;
        if (!q_tensor(x) || !q_tensor(y) || w->dtype != SY_DT_INT8 || !wq_ok || (b && b->dtype != SY_DT_INT32))
            return mcu_decline(c, SY_REASON_DTYPE, "%s: int8 takes the full-quant form: per-tensor int8 input and "
                            "output, an int8 filter with symmetric per-tensor or per-output-channel (axis 4) scales, "
                            "an int32 bias (%s: int8 only via FULL_QUANT, int8 weights and int32 bias)", op, row), false;
    } else if (x->dtype != SY_DT_FLOAT32 || !f32(w) || !f32(b) || !f32(y)) {
        return mcu_decline(c, SY_REASON_DTYPE, "%s: %s: fp32 input, filter, bias and output%s (%s)", op,
                        sy_dt_name(x->dtype), tfl ? ", or the full-quant int8 form" : " (the 5-D Conv kernel of "
                        "ONNX models is fp32)", row), false;
    }
    if (tfl) /* dilation and activation: table_a_other (mcu_rules.c) quoted them already */
        return true;
    char ap[16];
    sy_attr_string_or(H, n, "auto_pad", "NOTSET", ap, sizeof ap);
    if (strcmp(ap, "NOTSET"))
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "Conv (5-D): auto_pad must be NOTSET, got %s; a conversion-time "
                        "error (%s, seed L5961)", ap, row), false;
    if (!ints_all_eq(n, "dilations", 1))
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "Conv (5-D): dilations must be [1,1,1]; a conversion-time error (%s, "
                        "seed L6001-L6005)", row), false;
    int64_t g = sy_attr_int_or(H, n, "group", 1);
    if (g != 1)
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "Conv (5-D): group must be 1, got %lld; a conversion-time error (%s)",
                        (long long)g, row), false;
    int64_t s[3] = {1, 1, 1};
    sy_attr_ints_copy(H, n, "strides", s, 3);
    for (int i = 0; i < 3; i++)
        if (s[i] != 1 && s[i] != 2)
            return mcu_decline(c, SY_REASON_ATTRIBUTE, "Conv (5-D): strides must be 1 or 2 per axis, got %lld (%s)",
                            (long long)s[i], row), false;
    return true;
}

static bool check_convt(const sy_node *n, sy_claim *c)
{
    const char *row = "ops-mcu.md Table B #113 ConvTranspose";
    const sy_tensor *x = mcu_in_opt(n, 0), *w = mcu_in_opt(n, 1), *b = mcu_in_opt(n, 2), *y = H->node_output(n, 0);
    if (!x || !w || !y || x->rank != 4 || w->rank != 4)
        return mcu_decline(c, SY_REASON_RANK, "ConvTranspose: X must be 4D NCHW, got rank %d (%s: non-4D input is "
                        "unsupported)", x ? x->rank : 0, row), false;
    if (x->dims[0] != 1)
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "ConvTranspose: batch must be 1, got %lld (%s: X static, batch = 1)",
                        (long long)x->dims[0], row), false;
    if (x->dtype != SY_DT_FLOAT32 || !f32(w) || !f32(b) || !f32(y))
        return mcu_decline(c, SY_REASON_DTYPE, "ConvTranspose: %s: the MCU kernel of the ONNX form is fp32 (%s: X, W, B "
                        "float32)", sy_dt_name(x->dtype), row), false;
    if (sy_attr_has(H, n, "output_shape", SY_ATTR_INTS))
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "ConvTranspose: the output_shape attribute is an error at parse time "
                        "(%s: re-export the model with explicit pads)", row), false;
    int64_t g = sy_attr_int_or(H, n, "group", 1);
    if (g != 1)
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "ConvTranspose: group must be 1, got %lld (%s: group > 1, including "
                        "depthwise deconvolution, is unsupported)", (long long)g, row), false;
    char ap[16];
    sy_attr_string_or(H, n, "auto_pad", "NOTSET", ap, sizeof ap);
    int64_t pads[4] = {0, 0, 0, 0};
    int64_t np = sy_attr_ints_copy(H, n, "pads", pads, 4);
    if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID") && strcmp(ap, "SAME_UPPER") && strcmp(ap, "SAME_LOWER"))
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "ConvTranspose: auto_pad %s (%s)", ap, row), false;
    if (strcmp(ap, "NOTSET") && np > 0)
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "ConvTranspose: pads must not be given when auto_pad = %s (%s)", ap,
                        row), false;
    int64_t s[2] = {1, 1}, op[2] = {0, 0}, d[2] = {1, 1};
    sy_attr_ints_copy(H, n, "strides", s, 2);
    sy_attr_ints_copy(H, n, "output_padding", op, 2);
    sy_attr_ints_copy(H, n, "dilations", d, 2);
    for (int i = 0; i < 2; i++) {
        if (s[i] < 1 || d[i] < 1)
            return mcu_decline(c, SY_REASON_ATTRIBUTE, "ConvTranspose: strides and dilations must be >= 1 (%s)", row),
                   false;
        if (op[i] < 0 || op[i] >= s[i])
            return mcu_decline(c, SY_REASON_ATTRIBUTE, "ConvTranspose: output_padding[%d] = %lld must be below the stride "
                            "%lld (%s)", i, (long long)op[i], (long long)s[i], row), false;
    }
    for (int i = 0; i < 4; i++)
        if (pads[i] < 0)
            return mcu_decline(c, SY_REASON_ATTRIBUTE, "ConvTranspose: pads must be non-negative (%s)", row), false;
    if (!w->data || (b && !b->data))
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "ConvTranspose: W and B must be initializers (%s)", row), false;
    return true;
}

static bool check_gemm_ta(const sy_node *n, sy_claim *c)
{
    const char *row = "ops-mcu.md Table B #4 Gemm";
    const sy_tensor *a = mcu_in_opt(n, 0), *b = mcu_in_opt(n, 1), *cc = mcu_in_opt(n, 2), *y = H->node_output(n, 0);
    if (!a || !b || !y || a->rank != 2 || b->rank != 2)
        return mcu_decline(c, SY_REASON_RANK, "Gemm: A and B must be 2D (%s)", row), false;
    if (a->dtype != SY_DT_FLOAT32 || !f32(b) || !f32(y))
        return mcu_decline(c, SY_REASON_DTYPE, "Gemm: %s: fp32 on this kernel (%s; int8 runs as the switchyard.quant "
                        "QMatMul of a quantized model)", sy_dt_name(a->dtype), row), false;
    float alpha = sy_attr_float_or(H, n, "alpha", 1.0f);
    if (alpha != 1.0f)
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "Gemm: alpha must be 1.0, got %g (%s)", (double)alpha, row), false;
    if (!b->data)
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "Gemm: B must be a constant (%s: B const)", row), false;
    int64_t N = y->dims[1];
    if (cc && sy_attr_float_or(H, n, "beta", 1.0f) != 0.0f) {
        int64_t cn = sy_tensor_numel(cc);
        bool rowv = cc->rank <= 1 || (cc->rank == 2 && cc->dims[0] == 1);
        if (!cc->data || cc->dtype != SY_DT_FLOAT32 || !rowv || (cn != 1 && cn != N))
            return mcu_decline(c, SY_REASON_ATTRIBUTE, "Gemm: C must be a constant fp32 of 1 or N = %lld elements "
                            "broadcast over the rows (%s: C 1D const)", (long long)N, row), false;
    }
    return true;
}

bool mcu_nn_check(const mcu_cfg *cfg, const sy_node *n, sy_claim *c)
{
    const char *op = H->node_op(n);
    bool ok;
    if (!strcmp(op, "TRANSPOSE_CONV"))
        ok = check_tconv(cfg, n, c);
    else if (!strcmp(op, "BATCH_MATMUL"))
        ok = check_bmm(cfg, n, op, "ops-mcu.md Table A #5 BatchMatmul", true, c);
    else if (!strcmp(op, "CONV_3D") || !strcmp(op, "Conv"))
        ok = check_conv3d(n, c);
    else if (!strcmp(op, "ConvTranspose"))
        ok = check_convt(n, c);
    else if (!strcmp(op, "LSTM"))
        ok = mcu_lstm_check(n, c);
    else if (!strcmp(op, "GRU"))
        ok = mcu_gru_check(n, c);
    else if (!strcmp(op, "RNN"))
        ok = mcu_rnn_check(n, c);
    else if (!strcmp(op, "MatMul"))
        ok = check_bmm(cfg, n, op, "ops-mcu.md Table B #5 Matmul", false, c);
    else
        ok = check_gemm_ta(n, c);
    if (!ok)
        return false;
    const sy_tensor *y = H->node_output(n, 0);
    for (uint32_t i = 0; i < H->node_num_inputs(n); i++) {
        const sy_tensor *t = H->node_input(n, i);
        if (t && sy_tensor_numel(t) > INT32_MAX / 8)
            return mcu_decline(c, SY_REASON_RANK, "%s: more than 2^28 elements: the MCU kernels index with int32", op),
                   false;
    }
    if (y && sy_tensor_numel(y) > INT32_MAX / 8)
        return mcu_decline(c, SY_REASON_RANK, "%s: more than 2^28 elements: the MCU kernels index with int32", op), false;
    return true;
}

/* ---- prepare ------------------------------------------------------------------ */

static sy_status *oom(void) { return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory"); }

/* x (channel-first, rank 4 or 5) into the scratch channel-last, the
 * kernel's channel-last output after it, back into y channel-first */
static void cl_views(sy_node *n, mcu_node *k, const sy_tensor *x, const sy_tensor *y)
{
    int32_t r = x->rank;
    k->nchw = 1;
    memset(&k->pre, 0, sizeof k->pre);
    memset(&k->post, 0, sizeof k->post);
    k->pre.rank = k->post.rank = r;
    k->pre.esize = k->post.esize = 4;
    int64_t xs[SY_MAX_RANK], ysl[SY_MAX_RANK];
    sy_strides(r, x->dims, xs);
    /* pre: dims [N, spatial..., C] reading x's strides */
    k->pre.dims[0] = (int32_t)x->dims[0];
    k->pre.st[0] = (int32_t)xs[0];
    for (int32_t i = 2; i < r; i++) {
        k->pre.dims[i - 1] = (int32_t)x->dims[i];
        k->pre.st[i - 1] = (int32_t)xs[i];
    }
    k->pre.dims[r - 1] = (int32_t)x->dims[1];
    k->pre.st[r - 1] = (int32_t)xs[1];
    /* post: y's dims [N, C, spatial...] reading the channel-last buffer */
    int64_t cl[SY_MAX_RANK];
    cl[0] = y->dims[0];
    for (int32_t i = 2; i < r; i++)
        cl[i - 1] = y->dims[i];
    cl[r - 1] = y->dims[1];
    sy_strides(r, cl, ysl);
    k->post.dims[0] = (int32_t)y->dims[0];
    k->post.st[0] = (int32_t)ysl[0];
    k->post.dims[1] = (int32_t)y->dims[1];
    k->post.st[1] = (int32_t)ysl[r - 1];
    for (int32_t i = 2; i < r; i++) {
        k->post.dims[i] = (int32_t)y->dims[i];
        k->post.st[i] = (int32_t)ysl[i - 1];
    }
    k->pre_floats = (size_t)sy_tensor_numel(x);
    H->node_set_scratch(n, (k->pre_floats + (size_t)sy_tensor_numel(y)) * sizeof(float));
}

/* ONNX ConvTranspose: W [C_in, C_out, kH, kW] as the kernel's [OC, KH, KW, IC] */
static sy_status *prep_convt(sy_node *n, mcu_node *k)
{
    const sy_tensor *x = mcu_in_opt(n, 0), *w = mcu_in_opt(n, 1), *b = mcu_in_opt(n, 2), *y = H->node_output(n, 0);
    const int64_t IC = x->dims[1], IH = x->dims[2], IW = x->dims[3], OC = y->dims[1], OH = y->dims[2],
                  OW = y->dims[3], KH = w->dims[2], KW = w->dims[3];
    if (w->dims[0] != IC || w->dims[1] != OC)
        return H->status_new(SY_ERR_SHAPE, "ConvTranspose: W [%lld, %lld, ...] for %lld input and %lld output channels",
                             (long long)w->dims[0], (long long)w->dims[1], (long long)IC, (long long)OC);
    int64_t s[2] = {1, 1}, d[2] = {1, 1}, op[2] = {0, 0}, pads[4] = {0, 0, 0, 0};
    sy_attr_ints_copy(H, n, "strides", s, 2);
    sy_attr_ints_copy(H, n, "dilations", d, 2);
    sy_attr_ints_copy(H, n, "output_padding", op, 2);
    sy_attr_ints_copy(H, n, "pads", pads, 4);
    char ap[16];
    sy_attr_string_or(H, n, "auto_pad", "NOTSET", ap, sizeof ap);
    const int64_t in[2] = {IH, IW}, out[2] = {OH, OW}, kk[2] = {KH, KW};
    int64_t pb[2];
    for (int i = 0; i < 2; i++) {
        if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
            /* ONNX: total = s (i - 1) + output_padding + (k - 1) d + 1 - o; SAME_UPPER puts the odd cell at the end */
            int64_t total = s[i] * (in[i] - 1) + op[i] + (kk[i] - 1) * d[i] + 1 - out[i];
            total = total > 0 ? total : 0;
            pb[i] = !strcmp(ap, "SAME_UPPER") ? total / 2 : total - total / 2;
        } else {
            pb[i] = strcmp(ap, "NOTSET") ? 0 : pads[i];
        }
    }
    size_t nw = (size_t)(IC * OC * KH * KW);
    float *own = calloc(nw + (size_t)OC, sizeof(float));
    if (!own)
        return oom();
    k->own = own;
    const float *ws = w->data;
    for (int64_t ic = 0; ic < IC; ic++)
        for (int64_t oc = 0; oc < OC; oc++)
            for (int64_t a = 0; a < KH * KW; a++)
                own[(oc * KH * KW + a) * IC + ic] = ws[(ic * OC + oc) * KH * KW + a];
    k->wt = own;
    k->wt_bytes = nw * sizeof(float);
    if (b && b->data) {
        memcpy(own + nw, b->data, (size_t)OC * sizeof(float));
        k->bt = own + nw;
        k->bt_bytes = (size_t)OC * sizeof(float);
    }
    k->u.tconv = (tflk_tconv){.n = (int32_t)x->dims[0], .ih = (int32_t)IH, .iw = (int32_t)IW, .ic = (int32_t)IC,
                              .oh = (int32_t)OH, .ow = (int32_t)OW, .oc = (int32_t)OC, .kh = (int32_t)KH,
                              .kw = (int32_t)KW, .sh = (int32_t)s[0], .sw = (int32_t)s[1], .dh = (int32_t)d[0],
                              .dw = (int32_t)d[1], .pt = (int32_t)pb[0], .pl = (int32_t)pb[1],
                              .act = {0, -INFINITY, INFINITY}};
    cl_views(n, k, x, y);
    return NULL;
}

/* ONNX Conv, 5-D: W [OC, IC, KD, KH, KW] as the kernel's [KD, KH, KW, IC, OC] */
static sy_status *prep_conv3d_onnx(sy_node *n, mcu_node *k)
{
    const sy_tensor *x = mcu_in_opt(n, 0), *w = mcu_in_opt(n, 1), *b = mcu_in_opt(n, 2), *y = H->node_output(n, 0);
    const int64_t IC = x->dims[1], OC = y->dims[1], KD = w->dims[2], KH = w->dims[3], KW = w->dims[4];
    if (w->dims[0] != OC || w->dims[1] != IC)
        return H->status_new(SY_ERR_SHAPE, "Conv: W [%lld, %lld, ...] for %lld input and %lld output channels",
                             (long long)w->dims[0], (long long)w->dims[1], (long long)IC, (long long)OC);
    int64_t s[3] = {1, 1, 1}, pads[6] = {0, 0, 0, 0, 0, 0};
    sy_attr_ints_copy(H, n, "strides", s, 3);
    sy_attr_ints_copy(H, n, "pads", pads, 6); /* [D_b, H_b, W_b, D_e, H_e, W_e]: the ends follow from Y's size */
    size_t nw = (size_t)(OC * IC * KD * KH * KW), KS = (size_t)(KD * KH * KW);
    float *own = calloc(nw + (size_t)OC, sizeof(float));
    if (!own)
        return oom();
    k->own = own;
    const float *ws = w->data;
    for (size_t oc = 0; oc < (size_t)OC; oc++)
        for (size_t ic = 0; ic < (size_t)IC; ic++)
            for (size_t a = 0; a < KS; a++)
                own[(a * (size_t)IC + ic) * (size_t)OC + oc] = ws[(oc * (size_t)IC + ic) * KS + a];
    k->wt = own;
    k->wt_bytes = nw * sizeof(float);
    if (b && b->data) {
        memcpy(own + nw, b->data, (size_t)OC * sizeof(float));
        k->bt = own + nw;
        k->bt_bytes = (size_t)OC * sizeof(float);
    }
    k->u.c3 = (tflk_conv3d){.n = (int32_t)x->dims[0], .id = (int32_t)x->dims[2], .ih = (int32_t)x->dims[3],
                            .iw = (int32_t)x->dims[4], .ic = (int32_t)IC, .od = (int32_t)y->dims[2],
                            .oh = (int32_t)y->dims[3], .ow = (int32_t)y->dims[4], .oc = (int32_t)OC,
                            .kd = (int32_t)KD, .kh = (int32_t)KH, .kw = (int32_t)KW, .sd = (int32_t)s[0],
                            .sh = (int32_t)s[1], .sw = (int32_t)s[2], .dd = 1, .dh = 1, .dw = 1,
                            .pd = (int32_t)pads[0], .pt = (int32_t)pads[1], .pl = (int32_t)pads[2],
                            .act = {0, -INFINITY, INFINITY}};
    cl_views(n, k, x, y);
    return NULL;
}

/* ONNX MatMul (rank > 2 or a runtime B) and Gemm with transA = 1 on tflk_bmm_f32 */
static sy_status *prep_bmm_onnx(sy_node *n, mcu_node *k)
{
    const sy_tensor *a = mcu_in_opt(n, 0), *b = mcu_in_opt(n, 1), *y = H->node_output(n, 0);
    tflk_bmm *p = &k->u.bmm;
    memset(p, 0, sizeof *p);
    bool gemm = !strcmp(H->node_op(n), "Gemm");
    p->adj_x = gemm;
    p->adj_y = gemm && sy_attr_int_or(H, n, "transB", 0) != 0;
    p->m = (int32_t)y->dims[y->rank - 2];
    p->n = (int32_t)y->dims[y->rank - 1];
    p->k = (int32_t)(p->adj_x ? a->dims[a->rank - 2] : a->dims[a->rank - 1]);
    SY_TRY(tfl_bmm_batches(H, a, b, y, p));
    const sy_tensor *cc = gemm ? mcu_in_opt(n, 2) : NULL;
    float beta = gemm ? sy_attr_float_or(H, n, "beta", 1.0f) : 0.0f;
    if (cc && cc->data && beta != 0.0f) {
        float *own = calloc((size_t)p->n, sizeof(float));
        if (!own)
            return oom();
        k->own = own;
        const float *cs = cc->data;
        int64_t cn = sy_tensor_numel(cc);
        for (int32_t u = 0; u < p->n; u++)
            own[u] = beta * cs[cn == 1 ? 0 : u];
        k->bt = own;
        k->bt_bytes = (size_t)p->n * sizeof(float);
    }
    return NULL;
}

sy_status *mcu_nn_prepare(sy_node *n, mcu_node *k)
{
    const char *op = H->node_op(n);
    if (!strcmp(op, "TRANSPOSE_CONV")) {
        bool i8 = mcu_in_opt(n, 2)->dtype == SY_DT_INT8;
        k->kind = i8 ? MK_TCONV_S8 : MK_TCONV_F32;
        SY_TRY(tfl_build_tconv(H, n, &k->u.tconv, &k->o));
        k->n_mult = k->u.tconv.per_channel ? k->u.tconv.oc : 1;
        if (i8)
            H->node_set_scratch(n, (size_t)sy_tensor_numel(H->node_output(n, 0)) * sizeof(int32_t));
        return NULL;
    }
    if (!strcmp(op, "BATCH_MATMUL")) {
        k->kind = mcu_in_opt(n, 0)->dtype == SY_DT_INT8 ? MK_BMM_S8 : MK_BMM_F32;
        return tfl_build_bmm(H, n, &k->u.bmm);
    }
    if (!strcmp(op, "CONV_3D")) {
        k->kind = mcu_in_opt(n, 0)->dtype == SY_DT_INT8 ? MK_CONV3D_S8 : MK_CONV3D_F32;
        SY_TRY(tfl_build_conv3d(H, n, &k->u.c3, &k->o));
        k->n_mult = k->u.c3.per_channel ? k->u.c3.oc : 1;
        return NULL;
    }
    if (!strcmp(op, "LSTM"))
        return mcu_lstm_prepare(n, k);
    if (!strcmp(op, "GRU"))
        return mcu_gru_prepare(n, k);
    if (!strcmp(op, "RNN"))
        return mcu_rnn_prepare(n, k);
    if (!strcmp(op, "ConvTranspose")) {
        k->kind = MK_TCONV_F32;
        return prep_convt(n, k);
    }
    if (!strcmp(op, "Conv")) {
        k->kind = MK_CONV3D_F32;
        return prep_conv3d_onnx(n, k);
    }
    k->kind = MK_BMM_F32;
    return prep_bmm_onnx(n, k);
}

/* ---- run ------------------------------------------------------------------------ */

sy_status *mcu_nn_run(const mcu_node *k, const sy_kernel_io *io)
{
    sy_tensor *y = io->outputs[0];
    switch (k->kind) {
    case MK_TCONV_S8: {
        const sy_tensor *b = io->n_inputs > 3 ? io->inputs[3] : NULL;
        if (io->scratch_bytes < (size_t)sy_tensor_numel(y) * sizeof(int32_t))
            return H->status_new(SY_ERR_INTERNAL, "TRANSPOSE_CONV: scratch too small");
        tflk_tconv_s8(&k->u.tconv, io->inputs[2]->data, io->inputs[1]->data, b ? b->data : NULL, y->data, io->scratch);
        return NULL;
    }
    case MK_TCONV_F32:
    case MK_CONV3D_F32: {
        bool tconv = k->kind == MK_TCONV_F32;
        /* TFLite: (output_shape, filter, input[, bias]) / (input, filter[, bias]); ONNX: prepared weights */
        const uint32_t xi = tconv && !k->nchw ? 2 : 0, bi = tconv && !k->nchw ? 3 : 2;
        const float *w = k->wt ? k->wt : io->inputs[1]->data;
        const float *bias = k->wt ? k->bt : io->n_inputs > bi && io->inputs[bi] ? io->inputs[bi]->data : NULL;
        const float *x = io->inputs[xi]->data;
        float *out = y->data;
        if (k->nchw) {
            float *s = io->scratch;
            tflk_strided_copy(&k->pre, x, s);
            x = s;
            out = s + k->pre_floats;
        }
        if (tconv)
            tflk_tconv_f32(&k->u.tconv, x, w, bias, out);
        else
            tflk_conv3d_f32(&k->u.c3, x, w, bias, out);
        if (k->nchw)
            tflk_strided_copy(&k->post, out, y->data);
        return NULL;
    }
    case MK_CONV3D_S8: {
        const sy_tensor *b = io->n_inputs > 2 ? io->inputs[2] : NULL;
        tflk_conv3d_s8(&k->u.c3, io->inputs[0]->data, io->inputs[1]->data, b ? b->data : NULL, y->data);
        return NULL;
    }
    case MK_LSTM_ONNX: return mcu_lstm_run(k, io);
    case MK_GRU_ONNX: return mcu_gru_run(k, io);
    case MK_RNN_ONNX: return mcu_rnn_run(k, io);
    case MK_BMM_S8: tflk_bmm_s8(&k->u.bmm, io->inputs[0]->data, io->inputs[1]->data, y->data); return NULL;
    case MK_BMM_F32: tflk_bmm_f32(&k->u.bmm, io->inputs[0]->data, io->inputs[1]->data, k->bt, y->data); return NULL;
    default: return H->status_new(SY_ERR_INTERNAL, "%s: not a kind of mcu_nn.c", k->op);
    }
}
