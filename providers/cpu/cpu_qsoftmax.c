/*
 * QSoftmax and QLogSoftmax (switchyard.quant: DequantizeLinear -> Softmax /
 * LogSoftmax -> QuantizeLinear folded) on 8-bit codes with constant
 * per-tensor parameters. cpu_ref runs the shared kernel qk_softmax_run,
 * one tflk_expf_d per element; with 8-bit codes q - max takes only 256
 * values, so prepare fills their exponentials once (qk_softmax_lut) and
 * run is qk_softmax_run_lut: the same floats summed in the same order, so
 * the bytes are cpu_ref's. An LLM's attention rows (512 columns per head)
 * spent most of the int8 decode step in those exponentials.
 */
#include "cpu.h"
#include "qk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define H cpu_host

typedef struct qsm_state {
    float lut[256];
    float sx, sy;
    int32_t zy, axis, legacy, log;
} qsm_state;

/* inputs x, x_scale, x_zp, y_scale, y_zp */
static bool qsm_params(const sy_node *n, qsm_state *s, char *why, size_t len)
{
    uint32_t ni = H->node_num_inputs(n);
    const sy_tensor *x = ni > 0 ? H->node_input(n, 0) : NULL, *y = H->node_output(n, 0);
    if (ni < 4 || !x || !y || !cpu_is_q8(x->dtype) || !cpu_is_q8(y->dtype) || x->rank < 1)
        return cpu_decline(why, len, "8-bit codes with x_scale and y_scale only");
    int32_t zx;
    if (!cpu_q_scale_scalar(H->node_input(n, 1), &s->sx) || !cpu_q_scale_scalar(H->node_input(n, 3), &s->sy))
        return cpu_decline(why, len, "scales must be constant positive float32 scalars");
    if (!cpu_q_zp_scalar(H->node_input(n, 2), x->dtype, &zx) || !cpu_q_zp_scalar(ni > 4 ? H->node_input(n, 4) : NULL, y->dtype, &s->zy))
        return cpu_decline(why, len, "zero points must be constant scalars of their code's type");
    int64_t axis = sy_attr_int_or(H, n, "axis", -1);
    if (axis < -(int64_t)x->rank || axis >= (int64_t)x->rank)
        return cpu_decline(why, len, "axis out of range (cpu_ref reports it)");
    s->axis = (int32_t)(axis < 0 ? axis + x->rank : axis);
    s->legacy = sy_attr_int_or(H, n, "legacy", 0) != 0;
    s->log = !strcmp(H->node_op(n), "QLogSoftmax");
    return true;
}

static bool qsm_accepts(const sy_node *n, char *why, size_t len)
{
    qsm_state s;
    return qsm_params(n, &s, why, len);
}

static sy_status *qsm_prepare(sy_node *n, void **state)
{
    char why[160] = "";
    qsm_state *s = malloc(sizeof *s);
    if (!s)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    if (!qsm_params(n, s, why, sizeof why)) {
        free(s);
        return H->status_new(SY_ERR_UNSUPPORTED, "%s", why);
    }
    qk_softmax_lut(s->sx, s->lut);
    const sy_tensor *x = H->node_input(n, 0);
    H->node_set_scratch(n, (size_t)sy_tensor_numel(x) * sizeof(float) + 64);
    *state = s;
    return NULL;
}

static sy_status *qsm_run(void *state, const sy_kernel_io *io)
{
    const qsm_state *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    /* rows as cpu_ref's run_softmax: legacy (opset < 13) flattens at the axis */
    int64_t outer = sy_dims_prod(x->dims, 0, s->axis), len, inner;
    if (s->legacy) {
        len = sy_dims_prod(x->dims, s->axis, x->rank);
        inner = 1;
    } else {
        len = x->dims[s->axis];
        inner = sy_dims_prod(x->dims, s->axis + 1, x->rank);
    }
    if (sy_tensor_numel(x) > INT32_MAX)
        return H->status_new(SY_ERR_UNSUPPORTED, "QSoftmax '%s': more than 2^31 elements",
                             y->name ? y->name : "?");
    int32_t lo, hi;
    sy_q_storage_range(y->dtype, &lo, &hi);
    qk_softmax p = {(int32_t)outer, (int32_t)len, (int32_t)inner, x->dtype == SY_DT_UINT8 ? QK_U8 : QK_S8,
                    y->dtype == SY_DT_UINT8 ? QK_U8 : QK_S8, s->zy, lo, hi, s->sx, s->sy, s->log};
    qk_softmax_run_lut(&p, s->lut, x->data, y->data, io->scratch);
    return NULL;
}

#define Q8 (SY_DT_BIT(SY_DT_INT8) | SY_DT_BIT(SY_DT_UINT8))
static const sy_kernel_def qsm_kernels[] = {
    {sizeof(sy_kernel_def), "switchyard.quant", "QSoftmax", 1, 0, "cpu", Q8, 0, 0u, qsm_accepts, qsm_prepare,
     qsm_run, free, NULL},
    {sizeof(sy_kernel_def), "switchyard.quant", "QLogSoftmax", 1, 0, "cpu", Q8, 0, 0u, qsm_accepts, qsm_prepare,
     qsm_run, free, NULL},
};

sy_status *cpu_qsoftmax_register(const sy_host_api *host, sy_plugin *p)
{
    for (uint32_t i = 0; i < SY_COUNT_OF(qsm_kernels); i++)
        SY_TRY(host->register_kernel(p, &qsm_kernels[i]));
    return NULL;
}
