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
 * The kernel is the portable one of plugin_sdk/kernels/tflk_lstm.c
 * (what the riscv_mcu provider runs and `switchyard codegen` ships), with
 * the parameters tfl_params.h builds; quantized weights are dequantized
 * where they are read.
 *
 * fp32 models run in fp32. int8 models (int8 weights and activations, int16
 * cell state, int32 biases) run TFLite Micro's integer LSTM
 * (plugin_sdk/kernels/tflk_lstm8.c, parameters from tfl_build_lstm8):
 * bit-exact with its reference kernel. fp32: the state inputs give the
 * initial state of each run; int8: each run starts as TFLite Micro resets
 * its variable tensors (hidden state at its zero point, cell 0). The state
 * is not carried across runs.
 */
#include "tfl_common.h"
#include "tfl_params.h"

static const sy_host_api *H; /* process-wide: the same host table in every environment */
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
    bool q; /* int8: the integer LSTM */
    tflk_lstm p;
    tflk_lstm8 p8;
} lstm_state;

static void lstm_release(void *p) { free(p); }

static sy_status *prepare_lstm_impl(sy_node *n, void **state)
{
    lstm_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    if (H->node_input(n, IN_X)->dtype == SY_DT_INT8) {
        s->q = true;
        SY_TRY(tfl_build_lstm8(H, n, &s->p8));
        H->node_set_scratch(n, tflk_lstm8_scratch_bytes(&s->p8));
        return NULL;
    }
    SY_TRY(tfl_build_lstm(H, n, &s->p));
    H->node_set_scratch(n, tflk_lstm_scratch_floats(&s->p) * sizeof(float));
    return NULL;
}

static sy_status *run_lstm(void *state, const sy_kernel_io *io)
{
    const lstm_state *s = state;
    if (s->q)
        tflk_lstm8_run(&s->p8, io->inputs[IN_X]->data, io->outputs[0]->data, io->scratch);
    else
        tflk_lstm_run(&s->p, io->inputs[IN_X]->data, io->outputs[0]->data, io->scratch);
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
    .description = "TFLite UNIDIRECTIONAL_SEQUENCE_LSTM, cpu_ref (fp32; int8 as TFLite Micro's integer LSTM)",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = rec_init,
    .fini = rec_fini,
};

SY_PLUGIN_DEFINE(desc)
