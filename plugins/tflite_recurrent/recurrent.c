/*
 * tflite_recurrent: TFLite UNIDIRECTIONAL_SEQUENCE_LSTM (domain "tflite"),
 * cpu_ref kernel.
 *
 * Inputs as TFLite numbers them: 0 input; 1-4 input-to-{input, forget,
 * cell, output} weights (input gate optional: CIFG); 5-8 recurrent
 * weights; 9-11 peepholes (optional); 12-15 gate biases; 16-17 projection
 * (optional); 18 output state; 19 cell state; 20-23 layer-norm
 * coefficients (optional). Output 0: [batch, time, n_output] (or time
 * major).
 *
 * fp32 models run in fp32. Quantized models (int8 weights and activations,
 * int16 cell state, int32 biases) run in fp32 on the dequantized values
 * and the output is quantized with the output tensor's parameters: the
 * arithmetic follows the float LSTM, not TFLite's integer LSTM, so int8
 * results can differ from TFLite Micro by a few output steps. The state
 * inputs give the initial state of each run (TFLite Micro resets variable
 * tensors to zero; the state is not carried across runs).
 */
#include "tfl_common.h"

static const sy_host_api *H;
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)
#define OOM() H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory")

enum {
    IN_X = 0, W_XI = 1, W_XF, W_XC, W_XO, W_HI = 5, W_HF, W_HC, W_HO, P_I = 9, P_F, P_O, B_I = 12, B_F, B_C, B_O,
    PROJ_W = 16, PROJ_B = 17, ST_H = 18, ST_C = 19, LN_I = 20, LN_F, LN_C, LN_O, N_LSTM_IN = 24
};

static const sy_tensor *in_opt(const sy_node *n, uint32_t i)
{
    return i < H->node_num_inputs(n) ? H->node_input(n, i) : NULL;
}

static sy_status *infer_lstm(sy_node *n)
{
    const sy_tensor *x, *wxf, *whf;
    SY_TRY(sy_need_input(H, n, IN_X, &x));
    SY_TRY(sy_need_input(H, n, W_XF, &wxf));
    SY_TRY(sy_need_input(H, n, W_HF, &whf));
    if (x->rank != 3)
        return ERR(SY_ERR_SHAPE, "input must be 3-D, got rank %d", x->rank);
    if (wxf->rank != 2 || whf->rank != 2)
        return ERR(SY_ERR_SHAPE, "weights must be 2-D");
    int64_t n_cell = wxf->dims[0], n_in = wxf->dims[1], n_out = whf->dims[1];
    if (x->dims[2] != n_in)
        return ERR(SY_ERR_SHAPE, "input depth %lld differs from the weights' %lld", (long long)x->dims[2], (long long)n_in);
    const sy_tensor *pw = in_opt(n, PROJ_W);
    if (pw && (pw->rank != 2 || pw->dims[0] != n_out || pw->dims[1] != n_cell))
        return ERR(SY_ERR_SHAPE, "projection weights must be [%lld, %lld]", (long long)n_out, (long long)n_cell);
    if (!pw && n_out != n_cell)
        return ERR(SY_ERR_SHAPE, "without projection the output size %lld must equal the cell size %lld",
                   (long long)n_out, (long long)n_cell);
    for (uint32_t i = LN_I; i <= LN_O; i++)
        if (in_opt(n, i))
            return ERR(SY_ERR_UNSUPPORTED, "layer-normalized LSTM is not supported");
    static const uint32_t need[] = {W_XC, W_XO, W_HC, W_HO, B_F, B_C, B_O, ST_H, ST_C};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        const sy_tensor *t;
        SY_TRY(sy_need_input(H, n, need[i], &t));
    }
    bool tm = sy_attr_int_or(H, n, "time_major", 0) != 0;
    int64_t dims[3] = {x->dims[0], x->dims[1], n_out};
    (void)tm;
    const sy_tensor *yd = H->node_output(n, 0);
    sy_dtype dt = yd && yd->dtype != SY_DT_UNDEFINED ? yd->dtype : x->dtype;
    return H->node_set_output(n, 0, dt, 3, dims);
}

typedef struct lstm_state {
    int64_t n_cell, n_in, n_out;
    bool cifg, peephole, proj, time_major;
    tfl_act act;
    float cell_clip, proj_clip;
    /* dequantized constants (row-major) */
    float *wx[4], *wh[4], *p[3], *b[4], *pw, *pb;
    float *h0, *c0;
    float *buf;
} lstm_state;

static void lstm_release(void *p)
{
    lstm_state *s = p;
    if (!s)
        return;
    for (int i = 0; i < 4; i++) {
        free(s->wx[i]);
        free(s->wh[i]);
        free(s->b[i]);
    }
    for (int i = 0; i < 3; i++)
        free(s->p[i]);
    free(s->pw);
    free(s->pb);
    free(s->h0);
    free(s->c0);
    free(s->buf);
    free(s);
}

/* element i of t as a real number (dequantized; per-axis along `axis` rows) */
static float real_at(const sy_tensor *t, int64_t i, int64_t row_len)
{
    if (t->dtype == SY_DT_FLOAT32)
        return ((const float *)t->data)[i];
    double q = sy_load_f64(t->data, t->dtype, (size_t)i);
    const sy_quant_params *qp = t->quant;
    if (!qp || !qp->scales || !qp->count)
        return (float)q;
    int64_t c = qp->count > 1 && row_len > 0 ? (i / row_len) % qp->count : 0;
    int32_t zp = qp->zero_points ? qp->zero_points[c] : 0;
    return qp->scales[c] * (float)(q - zp);
}

static sy_status *dequant(const sy_tensor *t, int64_t expect, int64_t row_len, const char *what, float **out)
{
    *out = NULL;
    if (!t)
        return NULL;
    if (!t->data)
        return ERR(SY_ERR_UNSUPPORTED, "%s must be a constant", what);
    if (sy_tensor_numel(t) != expect)
        return ERR(SY_ERR_SHAPE, "%s has %lld elements, expected %lld", what, (long long)sy_tensor_numel(t),
                   (long long)expect);
    if (t->dtype != SY_DT_FLOAT32 && !sy_dt_is_int(t->dtype))
        return ERR(SY_ERR_TYPE, "%s has dtype %s", what, sy_dt_name(t->dtype));
    float *p = malloc((size_t)(expect ? expect : 1) * sizeof *p);
    if (!p)
        return OOM();
    for (int64_t i = 0; i < expect; i++)
        p[i] = real_at(t, i, row_len);
    *out = p;
    return NULL;
}

static sy_status *prepare_lstm_impl(sy_node *n, void **state)
{
    lstm_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    const sy_tensor *x = H->node_input(n, IN_X), *wxf = H->node_input(n, W_XF), *whf = H->node_input(n, W_HF);
    s->n_cell = wxf->dims[0];
    s->n_in = wxf->dims[1];
    s->n_out = whf->dims[1];
    s->time_major = sy_attr_int_or(H, n, "time_major", 0) != 0;
    s->cell_clip = sy_attr_float_or(H, n, "cell_clip", 0.0f);
    s->proj_clip = sy_attr_float_or(H, n, "proj_clip", 0.0f);
    char act[32];
    sy_attr_string_or(H, n, "fused_activation_function", "TANH", act, sizeof act);
    if (!tfl_act_from_name(act, &s->act))
        return ERR(SY_ERR_INVALID_ARGUMENT, "unknown fused_activation_function '%s'", act);
    if (!strcmp(act, "NONE")) /* a plain cell: identity */
        s->act.kind = 0;
    s->cifg = in_opt(n, W_XI) == NULL;
    const int64_t C = s->n_cell, I = s->n_in, O = s->n_out;
    static const char *const gate[4] = {"input", "forget", "cell", "output"};
    char what[64];
    for (int g = 0; g < 4; g++) {
        if (g == 0 && s->cifg)
            continue;
        snprintf(what, sizeof what, "input-to-%s weights", gate[g]);
        SY_TRY(dequant(in_opt(n, (uint32_t)(W_XI + g)), C * I, I, what, &s->wx[g]));
        snprintf(what, sizeof what, "recurrent-to-%s weights", gate[g]);
        SY_TRY(dequant(in_opt(n, (uint32_t)(W_HI + g)), C * O, O, what, &s->wh[g]));
        snprintf(what, sizeof what, "%s gate bias", gate[g]);
        SY_TRY(dequant(in_opt(n, (uint32_t)(B_I + g)), C, 1, what, &s->b[g]));
        if (!s->wx[g] || !s->wh[g])
            return ERR(SY_ERR_INVALID_ARGUMENT, "%s gate weights are missing", gate[g]);
    }
    for (int g = 0; g < 3; g++) {
        SY_TRY(dequant(in_opt(n, (uint32_t)(P_I + g)), C, 1, "peephole weights", &s->p[g]));
        if (s->p[g])
            s->peephole = true;
    }
    SY_TRY(dequant(in_opt(n, PROJ_W), O * C, C, "projection weights", &s->pw));
    SY_TRY(dequant(in_opt(n, PROJ_B), O, 1, "projection bias", &s->pb));
    s->proj = s->pw != NULL;
    const sy_tensor *h0 = H->node_input(n, ST_H), *c0 = H->node_input(n, ST_C);
    int64_t batch = s->time_major ? x->dims[1] : x->dims[0];
    if (sy_tensor_numel(h0) != batch * O || sy_tensor_numel(c0) != batch * C)
        return ERR(SY_ERR_SHAPE, "state tensors must be [batch, %lld] and [batch, %lld]", (long long)O, (long long)C);
    s->h0 = malloc((size_t)(batch * O + 1) * sizeof(float));
    s->c0 = malloc((size_t)(batch * C + 1) * sizeof(float));
    s->buf = malloc((size_t)(batch * (O + 5 * C) + I + 1) * sizeof(float));
    if (!s->h0 || !s->c0 || !s->buf)
        return OOM();
    if (!h0->data || !c0->data)
        return ERR(SY_ERR_UNSUPPORTED, "LSTM state inputs must be variable (constant-initialised) tensors");
    for (int64_t i = 0; i < batch * O; i++)
        s->h0[i] = real_at(h0, i, 0);
    for (int64_t i = 0; i < batch * C; i++)
        s->c0[i] = real_at(c0, i, 0);
    return NULL;
}

static float sigm(float v) { return v >= 0 ? 1.0f / (1.0f + expf(-v)) : expf(v) / (1.0f + expf(v)); }

static sy_status *run_lstm(void *state, const sy_kernel_io *io)
{
    const lstm_state *s = state;
    const sy_tensor *x = io->inputs[IN_X];
    sy_tensor *y = io->outputs[0];
    const int64_t C = s->n_cell, I = s->n_in, O = s->n_out;
    const int64_t T = s->time_major ? x->dims[0] : x->dims[1], B = s->time_major ? x->dims[1] : x->dims[0];
    float *h = s->buf, *c = h + B * O, *gates = c + B * C, *xin = gates + 4 * C;
    memcpy(h, s->h0, (size_t)(B * O) * sizeof(float));
    memcpy(c, s->c0, (size_t)(B * C) * sizeof(float));
    float ys = 1.0f;
    int32_t yz = 0;
    bool yq = y->dtype != SY_DT_FLOAT32;
    if (yq && !tfl_qparams(y, &ys, &yz))
        return ERR(SY_ERR_INVALID_ARGUMENT, "quantized LSTM output needs quantization parameters");
    int32_t lo, hi;
    sy_q_dtype_range(y->dtype, &lo, &hi);
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++) {
            int64_t xo = s->time_major ? (t * B + b) * I : (b * T + t) * I;
            for (int64_t k = 0; k < I; k++)
                xin[k] = real_at(x, xo + k, 0);
            float *hb = h + b * O, *cb = c + b * C;
            for (int g = 0; g < 4; g++) {
                if (g == 0 && s->cifg)
                    continue;
                for (int64_t j = 0; j < C; j++) {
                    float acc = s->b[g] ? s->b[g][j] : 0.0f;
                    const float *wx = s->wx[g] + j * I, *wh = s->wh[g] + j * O;
                    for (int64_t k = 0; k < I; k++)
                        acc += wx[k] * xin[k];
                    for (int64_t k = 0; k < O; k++)
                        acc += wh[k] * hb[k];
                    gates[g * C + j] = acc;
                }
            }
            for (int64_t j = 0; j < C; j++) {
                float fg = gates[C + j] + (s->p[1] ? s->p[1][j] * cb[j] : 0.0f);
                float ig = s->cifg ? 0.0f : gates[j] + (s->p[0] ? s->p[0][j] * cb[j] : 0.0f);
                fg = sigm(fg);
                ig = s->cifg ? 1.0f - fg : sigm(ig);
                float cg = tfl_act_apply(&s->act, gates[2 * C + j]);
                float cn = fg * cb[j] + ig * cg;
                if (s->cell_clip > 0)
                    cn = tfl_clampf(cn, -s->cell_clip, s->cell_clip);
                cb[j] = cn;
            }
            float *hn = gates; /* reuse: the cell's output before projection */
            for (int64_t j = 0; j < C; j++) {
                float og = sigm(gates[3 * C + j] + (s->p[2] ? s->p[2][j] * cb[j] : 0.0f));
                hn[j] = og * tfl_act_apply(&s->act, cb[j]);
            }
            if (s->proj) {
                for (int64_t k = 0; k < O; k++) {
                    float acc = s->pb ? s->pb[k] : 0.0f;
                    for (int64_t j = 0; j < C; j++)
                        acc += s->pw[k * C + j] * hn[j];
                    if (s->proj_clip > 0)
                        acc = tfl_clampf(acc, -s->proj_clip, s->proj_clip);
                    hb[k] = acc;
                }
            } else {
                memcpy(hb, hn, (size_t)O * sizeof(float));
            }
            int64_t yo = s->time_major ? (t * B + b) * O : (b * T + t) * O;
            for (int64_t k = 0; k < O; k++) {
                if (!yq)
                    ((float *)y->data)[yo + k] = hb[k];
                else
                    sy_store_i64(y->data, y->dtype, (size_t)(yo + k), sy_q_quantize_f32(hb[k], ys, yz, lo, hi));
            }
            /* the recurrent state is what the next step reads: the quantized output */
            if (yq)
                for (int64_t k = 0; k < O; k++)
                    hb[k] = ys * (float)((int32_t)sy_load_i64(y->data, y->dtype, (size_t)(yo + k)) - yz);
        }
    return NULL;
}

/* a failed prepare releases what it allocated: the core keeps no state then */
TFL_PREPARE_GUARDED(prepare_lstm, prepare_lstm_impl, lstm_release)

static const sy_attr_def lstm_attrs[] = {
    TFL_ATTR_ACT,
    {"cell_clip", SY_ATTR_FLOAT, false},
    {"proj_clip", SY_ATTR_FLOAT, false},
    {"time_major", SY_ATTR_INT, false},
    {"asymmetric_quantize_inputs", SY_ATTR_INT, false},
    {"diagonal_recurrent_tensors", SY_ATTR_INT, false},
    {"intermediate_scales", SY_ATTR_FLOATS, false},
    {"intermediate_zero_points", SY_ATTR_INTS, false},
};

static const sy_op_schema schemas[] = {
    TFL_SCHEMA("UNIDIRECTIONAL_SEQUENCE_LSTM", 20, N_LSTM_IN, 1, 1, SY_ATTRS(lstm_attrs), infer_lstm, SY_NO_INPLACE,
               0, "LSTM over a sequence (TFLite input numbering)"),
};

static const sy_kernel_def kernels[] = {
    TFL_KERNEL("UNIDIRECTIONAL_SEQUENCE_LSTM", TFL_F32_I8, 0, prepare_lstm, run_lstm, lstm_release),
};

static sy_status *rec_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}

static void rec_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "tflite_recurrent",
    .version = "0.1.0",
    .description = "TFLite UNIDIRECTIONAL_SEQUENCE_LSTM, cpu_ref (fp32; int8 through fp32)",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = rec_init,
    .fini = rec_fini,
};

SY_PLUGIN_DEFINE(desc)
