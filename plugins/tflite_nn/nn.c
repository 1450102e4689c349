/*
 * tflite_nn: TFLite neural-network operators (domain "tflite"), cpu_ref
 * kernels with TFLite semantics: NHWC tensors, OHWI filters ([1,KH,KW,OC]
 * for depthwise), SAME/VALID padding as TFLite computes it (odd pixel at
 * the end), fused activations, and int8 kernels that follow TFLite's
 * reference integer kernels (per-channel requantization with the int32
 * multiplier + shift arithmetic that CMSIS-NN/NMSIS-NN share), so results
 * are bit-exact with TFLite Micro.
 *
 *   CONV_2D DEPTHWISE_CONV_2D FULLY_CONNECTED TRANSPOSE_CONV   fp32, int8
 *   AVERAGE_POOL_2D MAX_POOL_2D                                fp32, int8
 *   SOFTMAX                  fp32; int8 (TFLM fixed point when the output
 *                            is scale 1/256 zp -128, else via fp32)
 *   LOG_SOFTMAX              fp32; int8 (TFLite's integer kernel,
 *                            tflk_logsoftmax.c, when the output is scale
 *                            16/256 zp 127, else via fp32)
 *   L2_NORMALIZATION         fp32; int8 through fp32
 *   BATCH_MATMUL             fp32, int8
 *   CONV_3D                  fp32, int8 (the FULL_QUANT form: int8 filter,
 *                            int32 bias)
 *
 * CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV, the pools,
 * SOFTMAX, BATCH_MATMUL and CONV_3D run
 * the portable kernels of plugin_sdk/kernels (the code the riscv_mcu
 * provider runs and `switchyard codegen` ships), with the parameters
 * tfl_params.h builds.
 */
#include "tfl_common.h"
#include "tfl_params.h"
#include "tfl_reduce.h"

static const sy_host_api *H; /* process-wide: the same host table in every environment */
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)
#define OOM() H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory")

static bool attr_same(const sy_node *n)
{
    return sy_attr_string_is(H, n, "padding", "SAME", "SAME");
}

static sy_status *need_rank(const sy_tensor *t, int32_t rank, const char *what)
{
    if (t->rank != rank)
        return ERR(SY_ERR_SHAPE, "%s must have rank %d, got %d", what, rank, t->rank);
    return NULL;
}

static sy_status *check_bias(const sy_tensor *b, int64_t oc, bool int8)
{
    if (!b)
        return NULL;
    if (sy_tensor_numel(b) != oc)
        return ERR(SY_ERR_SHAPE, "bias has %lld elements; the output has %lld channels", (long long)sy_tensor_numel(b),
                   (long long)oc);
    if (int8 ? b->dtype != SY_DT_INT32 : b->dtype != SY_DT_FLOAT32)
        return ERR(SY_ERR_TYPE, "bias must be %s, got %s", int8 ? "int32" : "float32", sy_dt_name(b->dtype));
    return NULL;
}

/* ======================================================================== */
/* CONV_2D / DEPTHWISE_CONV_2D                                              */
/* ======================================================================== */

static sy_status *conv_strides(const sy_node *n, int64_t *sh, int64_t *sw, int64_t *dh, int64_t *dw)
{
    *sh = sy_attr_int_or(H, n, "stride_h", 1);
    *sw = sy_attr_int_or(H, n, "stride_w", 1);
    *dh = sy_attr_int_or(H, n, "dilation_h_factor", 1);
    *dw = sy_attr_int_or(H, n, "dilation_w_factor", 1);
    if (*sh < 1 || *sw < 1 || *dh < 1 || *dw < 1)
        return ERR(SY_ERR_INVALID_ARGUMENT, "strides (%lld, %lld) and dilations (%lld, %lld) must be >= 1",
                   (long long)*sh, (long long)*sw, (long long)*dh, (long long)*dw);
    return NULL;
}

static sy_status *infer_conv(sy_node *n)
{
    bool dw_op = !strcmp(H->node_op(n), "DEPTHWISE_CONV_2D");
    const sy_tensor *x, *w;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &w));
    SY_TRY(need_rank(x, 4, "input (NHWC)"));
    SY_TRY(need_rank(w, 4, dw_op ? "filter [1, KH, KW, OC]" : "filter [OC, KH, KW, IC]"));
    int64_t sh, sw, dh, dw;
    SY_TRY(conv_strides(n, &sh, &sw, &dh, &dw));
    int64_t oc, kh = w->dims[1], kw = w->dims[2];
    if (dw_op) {
        oc = w->dims[3];
        if (w->dims[0] != 1)
            return ERR(SY_ERR_SHAPE, "depthwise filter must be [1, KH, KW, OC], got dimension 0 = %lld",
                       (long long)w->dims[0]);
        if (x->dims[3] == 0 || oc % x->dims[3])
            return ERR(SY_ERR_SHAPE, "depthwise output channels %lld are not a multiple of the input channels %lld",
                       (long long)oc, (long long)x->dims[3]);
    } else {
        oc = w->dims[0];
        /* an empty input channel axis would make the group count 0 */
        if (w->dims[3] == 0 || x->dims[3] == 0 || x->dims[3] % w->dims[3] || oc % (x->dims[3] / w->dims[3]))
            return ERR(SY_ERR_SHAPE, "input channels %lld do not match the filter's %lld (or a group count)",
                       (long long)x->dims[3], (long long)w->dims[3]);
    }
    const sy_tensor *b = H->node_num_inputs(n) > 2 ? H->node_input(n, 2) : NULL;
    SY_TRY(check_bias(b, oc, x->dtype == SY_DT_INT8));
    if (w->dtype != x->dtype)
        return ERR(SY_ERR_TYPE, "filter is %s but the input is %s (hybrid models are not supported)",
                   sy_dt_name(w->dtype), sy_dt_name(x->dtype));
    bool same = attr_same(n);
    int64_t dims[4] = {x->dims[0], tfl_out_size(same, x->dims[1], kh, sh, dh), tfl_out_size(same, x->dims[2], kw, sw, dw),
                       oc};
    return H->node_set_output(n, 0, x->dtype, 4, dims);
}

typedef struct kconv_state {
    tflk_conv p;
    tfl_owned o;
    bool int8;
} kconv_state;

static void kconv_release(void *p)
{
    kconv_state *s = p;
    if (!s)
        return;
    tfl_params_free(&s->o);
    free(s);
}

static sy_status *prepare_kconv_impl(sy_node *n, void **state)
{
    kconv_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    s->int8 = H->node_input(n, 0)->dtype == SY_DT_INT8;
    return tfl_build_conv(H, n, &s->p, &s->o);
}

static sy_status *run_kconv(void *state, const sy_kernel_io *io)
{
    const kconv_state *s = state;
    const sy_tensor *b = io->n_inputs > 2 ? io->inputs[2] : NULL;
    if (s->int8)
        tflk_conv_s8(&s->p, io->inputs[0]->data, io->inputs[1]->data, b ? b->data : NULL, io->outputs[0]->data);
    else
        tflk_conv_f32(&s->p, io->inputs[0]->data, io->inputs[1]->data, b ? b->data : NULL, io->outputs[0]->data);
    return NULL;
}

/* ======================================================================== */
/* FULLY_CONNECTED                                                          */
/* ======================================================================== */


static sy_status *infer_fc(sy_node *n)
{
    const sy_tensor *x, *w;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &w));
    SY_TRY(need_rank(w, 2, "weights [units, depth]"));
    if (!sy_attr_string_is(H, n, "weights_format", "DEFAULT", "DEFAULT"))
        return ERR(SY_ERR_UNSUPPORTED, "weights_format must be DEFAULT (shuffled weights are not supported)");
    if (w->dtype != x->dtype)
        return ERR(SY_ERR_TYPE, "weights are %s but the input is %s (hybrid models are not supported)",
                   sy_dt_name(w->dtype), sy_dt_name(x->dtype));
    int64_t units = w->dims[0], depth = w->dims[1];
    int64_t numel = sy_tensor_numel(x);
    if (x->rank < 1 || depth == 0 || numel % depth)
        return ERR(SY_ERR_SHAPE, "input of %lld elements is not a multiple of the weights' depth %lld",
                   (long long)numel, (long long)depth);
    const sy_tensor *b = H->node_num_inputs(n) > 2 ? H->node_input(n, 2) : NULL;
    SY_TRY(check_bias(b, units, x->dtype == SY_DT_INT8));
    if (sy_attr_int_or(H, n, "keep_num_dims", 0)) {
        if (x->dims[x->rank - 1] != depth)
            return ERR(SY_ERR_SHAPE, "keep_num_dims: the input's last dimension %lld must equal the depth %lld",
                       (long long)x->dims[x->rank - 1], (long long)depth);
        int64_t dims[SY_MAX_RANK];
        memcpy(dims, x->dims, sizeof dims);
        dims[x->rank - 1] = units;
        return H->node_set_output(n, 0, x->dtype, x->rank, dims);
    }
    int64_t dims[2] = {numel / depth, units};
    return H->node_set_output(n, 0, x->dtype, 2, dims);
}

typedef struct kfc_state {
    tflk_fc p;
    tfl_owned o;
    bool int8;
} kfc_state;

static sy_status *prepare_fc_impl(sy_node *n, void **state)
{
    kfc_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    s->int8 = H->node_input(n, 0)->dtype == SY_DT_INT8;
    return tfl_build_fc(H, n, &s->p, &s->o);
}

static sy_status *run_fc(void *state, const sy_kernel_io *io)
{
    const kfc_state *s = state;
    const sy_tensor *b = io->n_inputs > 2 ? io->inputs[2] : NULL;
    if (s->int8)
        tflk_fc_s8(&s->p, io->inputs[0]->data, io->inputs[1]->data, b ? b->data : NULL, io->outputs[0]->data);
    else
        tflk_fc_f32(&s->p, io->inputs[0]->data, io->inputs[1]->data, b ? b->data : NULL, io->outputs[0]->data);
    return NULL;
}

static void fc_release(void *p)
{
    kfc_state *s = p;
    if (!s)
        return;
    tfl_params_free(&s->o);
    free(s);
}

/* ======================================================================== */
/* TRANSPOSE_CONV                                                           */
/* ======================================================================== */

static sy_status *infer_tconv(sy_node *n)
{
    const sy_tensor *os, *w, *x;
    SY_TRY(sy_need_input(H, n, 0, &os));
    SY_TRY(sy_need_input(H, n, 1, &w));
    SY_TRY(sy_need_input(H, n, 2, &x));
    SY_TRY(need_rank(x, 4, "input (NHWC)"));
    SY_TRY(need_rank(w, 4, "filter [OC, KH, KW, IC]"));
    int64_t dims[4];
    if (sy_tensor_read_ints(os, dims, 4) != 4)
        return os->data ? ERR(SY_ERR_SHAPE, "output_shape must hold 4 int32 values")
                        : ERR(SY_ERR_DYNAMIC_SHAPE, "output_shape is not known before running");
    if (w->dims[3] != x->dims[3])
        return ERR(SY_ERR_SHAPE, "filter input channels %lld differ from the input's %lld", (long long)w->dims[3],
                   (long long)x->dims[3]);
    if (dims[3] != w->dims[0] || dims[0] != x->dims[0])
        return ERR(SY_ERR_SHAPE, "output_shape [%lld, %lld, %lld, %lld] does not match batch %lld and filter channels %lld",
                   (long long)dims[0], (long long)dims[1], (long long)dims[2], (long long)dims[3],
                   (long long)x->dims[0], (long long)w->dims[0]);
    if (w->dtype != x->dtype)
        return ERR(SY_ERR_TYPE, "filter is %s but the input is %s", sy_dt_name(w->dtype), sy_dt_name(x->dtype));
    const sy_tensor *b = H->node_num_inputs(n) > 3 ? H->node_input(n, 3) : NULL;
    SY_TRY(check_bias(b, dims[3], x->dtype == SY_DT_INT8));
    for (int i = 1; i < 3; i++)
        if (dims[i] < 0)
            return ERR(SY_ERR_SHAPE, "output_shape has a negative dimension");
    return H->node_set_output(n, 0, x->dtype, 4, dims);
}

/* the shared kernel (tflk_tconv.c), as riscv_mcu and its packages run it */
typedef struct tconv_state {
    tflk_tconv p;
    tfl_owned o;
} tconv_state;

static void tconv_release(void *p)
{
    tconv_state *s = p;
    if (!s)
        return;
    tfl_params_free(&s->o);
    free(s);
}

static sy_status *prepare_tconv_impl(sy_node *n, void **state)
{
    tconv_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    SY_TRY(tfl_build_tconv(H, n, &s->p, &s->o));
    if (H->node_input(n, 2)->dtype == SY_DT_INT8)
        H->node_set_scratch(n, (size_t)sy_tensor_numel(H->node_output(n, 0)) * sizeof(int32_t));
    return NULL;
}

static sy_status *run_tconv(void *state, const sy_kernel_io *io)
{
    const tconv_state *s = state;
    const sy_tensor *w = io->inputs[1], *x = io->inputs[2];
    const sy_tensor *b = io->n_inputs > 3 ? io->inputs[3] : NULL;
    sy_tensor *y = io->outputs[0];
    if (x->dtype != SY_DT_INT8) {
        tflk_tconv_f32(&s->p, x->data, w->data, b ? b->data : NULL, y->data);
        return NULL;
    }
    if (io->scratch_bytes < (size_t)sy_tensor_numel(y) * sizeof(int32_t))
        return ERR(SY_ERR_INTERNAL, "TRANSPOSE_CONV scratch too small");
    tflk_tconv_s8(&s->p, x->data, w->data, b ? b->data : NULL, y->data, io->scratch);
    return NULL;
}

/* ======================================================================== */
/* AVERAGE_POOL_2D / MAX_POOL_2D                                            */
/* ======================================================================== */

static sy_status *pool_params(const sy_node *n, int64_t *fh, int64_t *fw, int64_t *sh, int64_t *sw)
{
    *fh = sy_attr_int_or(H, n, "filter_height", 1);
    *fw = sy_attr_int_or(H, n, "filter_width", 1);
    *sh = sy_attr_int_or(H, n, "stride_h", 1);
    *sw = sy_attr_int_or(H, n, "stride_w", 1);
    if (*fh < 1 || *fw < 1 || *sh < 1 || *sw < 1)
        return ERR(SY_ERR_INVALID_ARGUMENT, "filter (%lld x %lld) and strides (%lld, %lld) must be >= 1",
                   (long long)*fh, (long long)*fw, (long long)*sh, (long long)*sw);
    return NULL;
}

static sy_status *infer_pool(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(need_rank(x, 4, "input (NHWC)"));
    int64_t fh, fw, sh, sw;
    SY_TRY(pool_params(n, &fh, &fw, &sh, &sw));
    bool same = attr_same(n);
    int64_t dims[4] = {x->dims[0], tfl_out_size(same, x->dims[1], fh, sh, 1), tfl_out_size(same, x->dims[2], fw, sw, 1),
                       x->dims[3]};
    return H->node_set_output(n, 0, x->dtype, 4, dims);
}

typedef struct kpool_state {
    tflk_pool p;
    bool int8;
} kpool_state;

static sy_status *prepare_pool_impl(sy_node *n, void **state)
{
    kpool_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    s->int8 = H->node_input(n, 0)->dtype == SY_DT_INT8;
    return tfl_build_pool(H, n, &s->p);
}

static sy_status *run_pool(void *state, const sy_kernel_io *io)
{
    const kpool_state *s = state;
    if (s->int8)
        tflk_pool_s8(&s->p, io->inputs[0]->data, io->outputs[0]->data);
    else
        tflk_pool_f32(&s->p, io->inputs[0]->data, io->outputs[0]->data);
    return NULL;
}

/* ======================================================================== */
/* SOFTMAX / LOG_SOFTMAX / L2_NORMALIZATION                                 */
/* ======================================================================== */

typedef struct sm_state {
    int kind; /* 0 softmax, 1 log softmax, 2 l2 norm */
    float beta;
    bool int8, fixed;
    float in_scale, out_scale;
    int32_t in_zp, out_zp;
    tfl_act act;
    tflk_softmax k; /* SOFTMAX: the portable kernel */
    tflk_logsm8 lk; /* LOG_SOFTMAX int8 with TFLite's output 16/256, 127 */
    tflk_axisop l2; /* L2_NORMALIZATION: tflk_reduce.c, the kernel riscv_mcu runs */
} sm_state;

static sy_status *infer_softmax(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (x->rank < 1)
        return ERR(SY_ERR_SHAPE, "input must have rank >= 1");
    return sy_infer_unary(H, n);
}

/* one row of float log softmax, in place in `buf` */
static void float_row(const sm_state *s, float *buf, int64_t d)
{
    /* LOG_SOFTMAX: the portable kernel riscv_mcu runs (tflk_softmax.c) */
    tflk_softmax k = {.rows = 1, .depth = (int32_t)d, .beta = s->beta};
    tflk_log_softmax_f32(&k, buf, buf);
}

static sy_status *prepare_softmax_impl(sy_node *n, void **state)
{
    sm_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    const char *op = H->node_op(n);
    s->kind = !strcmp(op, "SOFTMAX") ? 0 : !strcmp(op, "LOG_SOFTMAX") ? 1 : 2;
    s->beta = s->kind == 0 ? sy_attr_float_or(H, n, "beta", 1.0f) : 1.0f;
    s->act.kind = 0;
    s->act.lo = -INFINITY;
    s->act.hi = INFINITY;
    if (s->kind == 2)
        return tfl_build_axisop(H, n, &s->l2);
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_output(n, 0);
    s->int8 = x->dtype == SY_DT_INT8;
    if (s->kind == 0) {
        SY_TRY(tfl_build_softmax(H, n, &s->k));
        if (s->int8 && !s->k.fixed)
            H->node_set_scratch(n, (size_t)(s->k.depth ? s->k.depth : 1) * sizeof(float));
        return NULL;
    }
    if (s->int8) {
        if (!tfl_qparams(x, &s->in_scale, &s->in_zp) || !tfl_qparams(y, &s->out_scale, &s->out_zp))
            return ERR(SY_ERR_INVALID_ARGUMENT, "int8 %s needs per-tensor quantization on input and output", op);
        if (s->kind == 1 && s->out_scale == 16.0f / 256.0f && s->out_zp == 127) {
            s->fixed = true;
            SY_TRY(tfl_build_logsm8(H, s->in_scale, &s->lk));
        }
        H->node_set_scratch(n, (size_t)(x->rank ? x->dims[x->rank - 1] : 1) * sizeof(float));
    }
    return NULL;
}

static sy_status *run_softmax(void *state, const sy_kernel_io *io)
{
    const sm_state *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    int64_t d = x->dims[x->rank - 1];
    int64_t rows = d ? sy_tensor_numel(x) / d : 0;
    if (s->kind == 2) {
        tflk_axis_run(&s->l2, x->data, y->data, NULL);
        return NULL;
    }
    if (s->kind == 0) {
        if (s->int8)
            tflk_softmax_s8(&s->k, x->data, y->data, io->scratch);
        else
            tflk_softmax_f32(&s->k, x->data, y->data);
        return NULL;
    }
    if (!s->int8) {
        const float *xd = x->data;
        float *yd = y->data;
        for (int64_t r = 0; r < rows; r++) {
            if (yd != xd)
                memcpy(yd + r * d, xd + r * d, (size_t)d * sizeof(float));
            float_row(s, yd + r * d, d);
        }
        return NULL;
    }
    if (s->fixed && s->kind == 1) {
        if (rows > INT32_MAX || d > INT32_MAX)
            return ERR(SY_ERR_UNSUPPORTED, "int8 LOG_SOFTMAX: %lld rows of %lld: the kernel counts in int32",
                       (long long)rows, (long long)d);
        tflk_log_softmax_s8(&s->lk, x->data, y->data, (int32_t)rows, (int32_t)d);
        return NULL;
    }
    float *buf = io->scratch;
    const int8_t *xd = x->data;
    int8_t *yd = y->data;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t c = 0; c < d; c++)
            buf[c] = s->in_scale * (float)((int32_t)xd[r * d + c] - s->in_zp);
        float_row(s, buf, d);
        for (int64_t c = 0; c < d; c++)
            yd[r * d + c] = (int8_t)sy_q_quantize_f32(buf[c], s->out_scale, s->out_zp, -128, 127);
    }
    return NULL;
}

/* ======================================================================== */
/* BATCH_MATMUL                                                             */
/* ======================================================================== */

static sy_status *bmm_shapes(const sy_tensor *a, const sy_tensor *b, bool ax, bool ay, int32_t *rank, int64_t *dims)
{
    if (a->rank < 2 || b->rank < 2)
        return ERR(SY_ERR_SHAPE, "BATCH_MATMUL inputs need rank >= 2 (got %d and %d)", a->rank, b->rank);
    int64_t M = ax ? a->dims[a->rank - 1] : a->dims[a->rank - 2];
    int64_t K = ax ? a->dims[a->rank - 2] : a->dims[a->rank - 1];
    int64_t K2 = ay ? b->dims[b->rank - 1] : b->dims[b->rank - 2];
    int64_t N = ay ? b->dims[b->rank - 2] : b->dims[b->rank - 1];
    if (K != K2)
        return ERR(SY_ERR_SHAPE, "BATCH_MATMUL inner dimensions differ: %lld vs %lld", (long long)K, (long long)K2);
    int32_t r = a->rank > b->rank ? a->rank : b->rank;
    for (int32_t i = 0; i < r - 2; i++) {
        int32_t ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return ERR(SY_ERR_SHAPE, "BATCH_MATMUL batch dimensions %lld and %lld do not broadcast", (long long)da,
                       (long long)db);
        dims[i] = da == 1 ? db : da;
    }
    dims[r - 2] = M;
    dims[r - 1] = N;
    *rank = r;
    return NULL;
}

static sy_status *infer_bmm(sy_node *n)
{
    const sy_tensor *a, *b;
    SY_TRY(sy_need_input(H, n, 0, &a));
    SY_TRY(sy_need_input(H, n, 1, &b));
    if (a->dtype != b->dtype)
        return ERR(SY_ERR_TYPE, "BATCH_MATMUL inputs are %s and %s", sy_dt_name(a->dtype), sy_dt_name(b->dtype));
    int32_t r = 0;
    int64_t dims[SY_MAX_RANK];
    SY_TRY(bmm_shapes(a, b, sy_attr_int_or(H, n, "adj_x", 0), sy_attr_int_or(H, n, "adj_y", 0), &r, dims));
    return H->node_set_output(n, 0, a->dtype, r, dims);
}

/* the shared kernel (tflk_bmm.c) */
static sy_status *prepare_bmm_impl(sy_node *n, void **state)
{
    tflk_bmm *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    return tfl_build_bmm(H, n, s);
}

static sy_status *run_bmm(void *state, const sy_kernel_io *io)
{
    const tflk_bmm *s = state;
    const sy_tensor *a = io->inputs[0], *b = io->inputs[1];
    if (a->dtype == SY_DT_INT8)
        tflk_bmm_s8(s, a->data, b->data, io->outputs[0]->data);
    else
        tflk_bmm_f32(s, a->data, b->data, NULL, io->outputs[0]->data);
    return NULL;
}

/* ======================================================================== */
/* CONV_3D (fp32, int8)                                                     */
/* ======================================================================== */

static sy_status *c3_params(const sy_node *n, int64_t *s, int64_t *d)
{
    s[0] = sy_attr_int_or(H, n, "stride_d", 1);
    s[1] = sy_attr_int_or(H, n, "stride_h", 1);
    s[2] = sy_attr_int_or(H, n, "stride_w", 1);
    d[0] = sy_attr_int_or(H, n, "dilation_d_factor", 1);
    d[1] = sy_attr_int_or(H, n, "dilation_h_factor", 1);
    d[2] = sy_attr_int_or(H, n, "dilation_w_factor", 1);
    for (int i = 0; i < 3; i++)
        if (s[i] < 1 || d[i] < 1)
            return ERR(SY_ERR_INVALID_ARGUMENT, "strides and dilations must be >= 1");
    return NULL;
}

static sy_status *infer_conv3d(sy_node *n)
{
    const sy_tensor *x, *w;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &w));
    SY_TRY(need_rank(x, 5, "input (NDHWC)"));
    SY_TRY(need_rank(w, 5, "filter [KD, KH, KW, IC, OC]"));
    /* fp32, or the int8 model FULL_QUANT makes of one (int8 filter, int32 bias) */
    if ((x->dtype != SY_DT_FLOAT32 && x->dtype != SY_DT_INT8) || w->dtype != x->dtype)
        return ERR(SY_ERR_TYPE, "CONV_3D runs on float32, or int8 with an int8 filter (full quantization of fp32); "
                   "got a %s input and a %s filter", sy_dt_name(x->dtype), sy_dt_name(w->dtype));
    if (w->dims[3] != x->dims[4])
        return ERR(SY_ERR_SHAPE, "filter input channels %lld differ from the input's %lld", (long long)w->dims[3],
                   (long long)x->dims[4]);
    const sy_tensor *b = H->node_num_inputs(n) > 2 ? H->node_input(n, 2) : NULL;
    SY_TRY(check_bias(b, w->dims[4], x->dtype == SY_DT_INT8));
    int64_t s[3], d[3];
    SY_TRY(c3_params(n, s, d));
    bool same = attr_same(n);
    int64_t dims[5] = {x->dims[0], 0, 0, 0, w->dims[4]};
    for (int i = 0; i < 3; i++)
        dims[1 + i] = tfl_out_size(same, x->dims[1 + i], w->dims[i], s[i], d[i]);
    return H->node_set_output(n, 0, x->dtype, 5, dims);
}

/* the shared kernel (tflk_conv3d.c) */
typedef struct conv3d_state {
    tflk_conv3d p;
    tfl_owned o; /* int8: the multipliers */
    bool int8;
} conv3d_state;

static void conv3d_release(void *p)
{
    conv3d_state *s = p;
    if (!s)
        return;
    tfl_params_free(&s->o);
    free(s);
}

static sy_status *prepare_conv3d_impl(sy_node *n, void **state)
{
    conv3d_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    s->int8 = H->node_input(n, 0)->dtype == SY_DT_INT8;
    return tfl_build_conv3d(H, n, &s->p, &s->o);
}

static sy_status *run_conv3d(void *state, const sy_kernel_io *io)
{
    const conv3d_state *s = state;
    const sy_tensor *b = io->n_inputs > 2 ? io->inputs[2] : NULL;
    if (s->int8)
        tflk_conv3d_s8(&s->p, io->inputs[0]->data, io->inputs[1]->data, b ? b->data : NULL, io->outputs[0]->data);
    else
        tflk_conv3d_f32(&s->p, io->inputs[0]->data, io->inputs[1]->data, b ? b->data : NULL, io->outputs[0]->data);
    return NULL;
}

/* a failed prepare releases what it allocated: the core keeps no state then */
TFL_PREPARE_GUARDED(prepare_kconv, prepare_kconv_impl, kconv_release)
TFL_PREPARE_GUARDED(prepare_fc, prepare_fc_impl, fc_release)
TFL_PREPARE_GUARDED(prepare_tconv, prepare_tconv_impl, tconv_release)
TFL_PREPARE_GUARDED(prepare_pool, prepare_pool_impl, sy_release_free)
TFL_PREPARE_GUARDED(prepare_softmax, prepare_softmax_impl, sy_release_free)
TFL_PREPARE_GUARDED(prepare_bmm, prepare_bmm_impl, sy_release_free)
TFL_PREPARE_GUARDED(prepare_conv3d, prepare_conv3d_impl, conv3d_release)

/* ======================================================================== */
/* registration                                                             */
/* ======================================================================== */

static const sy_attr_def conv_attrs[] = {
    {"padding", SY_ATTR_STRING, false},          {"stride_w", SY_ATTR_INT, false},
    {"stride_h", SY_ATTR_INT, false},            TFL_ATTR_ACT,
    {"dilation_w_factor", SY_ATTR_INT, false},   {"dilation_h_factor", SY_ATTR_INT, false},
    {"depth_multiplier", SY_ATTR_INT, false},
};
static const sy_attr_def conv3d_attrs[] = {
    {"padding", SY_ATTR_STRING, false},          {"stride_d", SY_ATTR_INT, false},
    {"stride_w", SY_ATTR_INT, false},            {"stride_h", SY_ATTR_INT, false},
    TFL_ATTR_ACT,                                {"dilation_d_factor", SY_ATTR_INT, false},
    {"dilation_w_factor", SY_ATTR_INT, false},   {"dilation_h_factor", SY_ATTR_INT, false},
};
static const sy_attr_def fc_attrs[] = {
    TFL_ATTR_ACT,
    {"weights_format", SY_ATTR_STRING, false},
    {"keep_num_dims", SY_ATTR_INT, false},
    {"asymmetric_quantize_inputs", SY_ATTR_INT, false},
};
static const sy_attr_def tconv_attrs[] = {
    {"padding", SY_ATTR_STRING, false}, {"stride_w", SY_ATTR_INT, false}, {"stride_h", SY_ATTR_INT, false}, TFL_ATTR_ACT,
};
static const sy_attr_def pool_attrs[] = {
    {"padding", SY_ATTR_STRING, false},     {"stride_w", SY_ATTR_INT, false},
    {"stride_h", SY_ATTR_INT, false},       {"filter_width", SY_ATTR_INT, false},
    {"filter_height", SY_ATTR_INT, false},  TFL_ATTR_ACT,
};
static const sy_attr_def softmax_attrs[] = {{"beta", SY_ATTR_FLOAT, false}};
static const sy_attr_def l2_attrs[] = {TFL_ATTR_ACT};
static const sy_attr_def bmm_attrs[] = {
    {"adj_x", SY_ATTR_INT, false}, {"adj_y", SY_ATTR_INT, false}, {"asymmetric_quantize_inputs", SY_ATTR_INT, false},
};

static const sy_op_schema schemas[] = {
    TFL_SCHEMA("CONV_2D", 2, 3, 1, 1, SY_ATTRS(conv_attrs), infer_conv, SY_NO_INPLACE, 0,
               "2-D convolution, NHWC input, OHWI filter"),
    TFL_SCHEMA("DEPTHWISE_CONV_2D", 2, 3, 1, 1, SY_ATTRS(conv_attrs), infer_conv, SY_NO_INPLACE, 0,
               "depthwise 2-D convolution, [1, KH, KW, OC] filter"),
    TFL_SCHEMA("FULLY_CONNECTED", 2, 3, 1, 1, SY_ATTRS(fc_attrs), infer_fc, SY_NO_INPLACE, 0,
               "y = x W^T + b over the last dimension"),
    TFL_SCHEMA("TRANSPOSE_CONV", 3, 4, 1, 1, SY_ATTRS(tconv_attrs), infer_tconv, SY_NO_INPLACE, 0,
               "transposed 2-D convolution (output_shape, filter, input[, bias])"),
    TFL_SCHEMA("AVERAGE_POOL_2D", 1, 1, 1, 1, SY_ATTRS(pool_attrs), infer_pool, SY_NO_INPLACE, 0,
               "average pooling, NHWC"),
    TFL_SCHEMA("MAX_POOL_2D", 1, 1, 1, 1, SY_ATTRS(pool_attrs), infer_pool, SY_NO_INPLACE, 0, "max pooling, NHWC"),
    TFL_SCHEMA("SOFTMAX", 1, 1, 1, 1, SY_ATTRS(softmax_attrs), infer_softmax, SY_NO_INPLACE, 0,
               "softmax over the last axis"),
    TFL_SCHEMA("LOG_SOFTMAX", 1, 1, 1, 1, SY_NO_ATTRS, infer_softmax, SY_NO_INPLACE, 0,
               "log softmax over the last axis"),
    TFL_SCHEMA("L2_NORMALIZATION", 1, 1, 1, 1, SY_ATTRS(l2_attrs), infer_softmax, SY_NO_INPLACE, 0,
               "L2 normalization over the last axis"),
    TFL_SCHEMA("BATCH_MATMUL", 2, 2, 1, 1, SY_ATTRS(bmm_attrs), infer_bmm, SY_NO_INPLACE, 0,
               "batched matrix product"),
    TFL_SCHEMA("CONV_3D", 2, 3, 1, 1, SY_ATTRS(conv3d_attrs), infer_conv3d, SY_NO_INPLACE, 0,
               "3-D convolution, NDHWC input, [KD, KH, KW, IC, OC] filter"),
};

static const sy_kernel_def kernels[] = {
    TFL_KERNEL("CONV_2D", TFL_F32_I8, 0, prepare_kconv, run_kconv, kconv_release),
    TFL_KERNEL("DEPTHWISE_CONV_2D", TFL_F32_I8, 0, prepare_kconv, run_kconv, kconv_release),
    TFL_KERNEL("FULLY_CONNECTED", TFL_F32_I8, 0, prepare_fc, run_fc, fc_release),
    TFL_KERNEL("TRANSPOSE_CONV", TFL_F32_I8, 2, prepare_tconv, run_tconv, tconv_release),
    TFL_KERNEL("AVERAGE_POOL_2D", TFL_F32_I8, 0, prepare_pool, run_pool, sy_release_free),
    TFL_KERNEL("MAX_POOL_2D", TFL_F32_I8, 0, prepare_pool, run_pool, sy_release_free),
    TFL_KERNEL("SOFTMAX", TFL_F32_I8, 0, prepare_softmax, run_softmax, sy_release_free),
    TFL_KERNEL("LOG_SOFTMAX", TFL_F32_I8, 0, prepare_softmax, run_softmax, sy_release_free),
    TFL_KERNEL("L2_NORMALIZATION", TFL_F32_I8, 0, prepare_softmax, run_softmax, sy_release_free),
    TFL_KERNEL("BATCH_MATMUL", TFL_F32_I8, 0, prepare_bmm, run_bmm, sy_release_free),
    TFL_KERNEL("CONV_3D", TFL_F32_I8, 0, prepare_conv3d, run_conv3d, conv3d_release),
};

static sy_status *nn_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}

static void nn_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "tflite_nn",
    .version = "0.1.0",
    .description = "TFLite neural-network operators (conv, fully connected, pooling, softmax), cpu_ref fp32/int8",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = nn_init,
    .fini = nn_fini,
};

SY_PLUGIN_DEFINE(desc)
