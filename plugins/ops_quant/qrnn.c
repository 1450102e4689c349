/*
 * ops_quant: QRNN (switchyard.quant 1), the integer ONNX RNN that the QDQ
 * pass folds DequantizeLinear(X, W, R[, initial_h]) -> RNN ->
 * QuantizeLinear(Y[, Y_h]) into. Inputs, attributes and checks:
 * qrnn_params.h; the integer design and the kernel: kernels/qk_rnn.c
 * (shared with riscv_mcu). This file only binds them to the plugin ABI.
 */
#include "qrnn_params.h"
#include "quant_internal.h"

static sy_status *infer_qrnn(sy_node *n)
{
    qrnn_params p;
    SY_TRY(qrnn_shapes(H, n, &p));
    uint32_t no = H->node_num_outputs(n);
    if (no > 0)
        SY_TRY(H->node_set_output(n, 0, p.ydt, 4, p.dims_y));
    if (no > 1)
        SY_TRY(H->node_set_output(n, 1, p.ydt, 3, p.dims_yh));
    return NULL;
}

static void release_qrnn(void *state)
{
    qrnn_params_free(state);
    free(state);
}

static sy_status *prepare_qrnn(sy_node *n, void **state)
{
    qrnn_params *p = calloc(1, sizeof *p);
    if (!p)
        return QERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *err = qrnn_build(H, n, q_env_default_rq(n), p);
    if (err) {
        release_qrnn(p);
        return err;
    }
    /* scratch: the state and the next state (2 * hidden), valid lengths (batch) */
    H->node_set_scratch(n, (size_t)(2 * p->k.hidden + p->k.batch + 4) * sizeof(int32_t));
    *state = p;
    return NULL;
}

static sy_status *run_qrnn(void *state, const sy_kernel_io *io)
{
    const qrnn_params *p = state;
    const qk_rnn *k = &p->k;
    int32_t *scratch = io->scratch, *lens = NULL;
    const sy_tensor *sl = q_in(io, QRNN_LENS), *h0 = q_in(io, QRNN_H0);
    if (sl) {
        lens = scratch + 2 * k->hidden;
        for (int32_t b = 0; b < k->batch; b++) {
            int64_t v = sl->dtype == SY_DT_INT64 ? ((const int64_t *)sl->data)[b] : ((const int32_t *)sl->data)[b];
            if (v < 0 || v > k->seq)
                return QERR(SY_ERR_INVALID_ARGUMENT, "QRNN: sequence_lens '%s'[%d] = %lld is outside [0, %d]",
                            sl->name ? sl->name : "?", (int)b, (long long)v, (int)k->seq);
            lens[b] = (int32_t)v;
        }
    }
    sy_tensor *y = io->n_outputs > 0 ? io->outputs[0] : NULL, *yh = io->n_outputs > 1 ? io->outputs[1] : NULL;
    qk_rnn_run(k, io->inputs[QRNN_X]->data, io->inputs[QRNN_W]->data, io->inputs[QRNN_R]->data, lens,
               h0 ? h0->data : NULL, y ? y->data : NULL, yh ? yh->data : NULL, scratch);
    return NULL;
}

#define A_(name, type) {name, SY_ATTR_##type, false}
static const sy_attr_def a_qrnn[] = {A_("activations", STRINGS), A_("activation_alpha", FLOATS),
                                     A_("activation_beta", FLOATS), A_("clip", FLOAT), A_("direction", STRING),
                                     A_("hidden_size", INT), A_("layout", INT), A_("requant", STRING)};

static const sy_op_schema schemas[] = {
    {sizeof(sy_op_schema), SWQ_DOMAIN, "QRNN", 1, 10, QRNN_NIN, 0, 2, a_qrnn, SY_COUNT_OF(a_qrnn), infer_qrnn, NULL,
     0u, 0u, NULL},
};

static const sy_kernel_def kernels[] = {
    {sizeof(sy_kernel_def), SWQ_DOMAIN, "QRNN", 1, 0, "cpu_ref", SY_DT_BIT(SY_DT_INT8) | SY_DT_BIT(SY_DT_UINT8), 0, 0u,
     NULL, prepare_qrnn, run_qrnn, release_qrnn, NULL},
};

void q_tables_rnn(const sy_op_schema **s, uint32_t *ns, const sy_kernel_def **k, uint32_t *nk)
{
    *s = schemas;
    *ns = SY_COUNT_OF(schemas);
    *k = kernels;
    *nk = SY_COUNT_OF(kernels);
}
