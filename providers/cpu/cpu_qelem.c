/*
 * QAdd, QSub, QMul (switchyard.quant, what the QDQ pass folds a binary op
 * between DequantizeLinear and QuantizeLinear into) on 8-bit codes with
 * constant per-tensor parameters, the ONNX requantization form. The output
 * code depends only on the two input codes, so prepare fills a 256 x 256
 * table by calling the shared kernel's element function (qk_bin_one,
 * plugin_sdk/kernels/qk.c: what cpu_ref's QAdd calls per element) on every
 * pair, and run is one lookup per element over the broadcast walk: the bytes
 * are cpu_ref's by construction. On cpu_ref the float work per element made
 * these nodes 2 ms of ultraface_rfb_320 int8 (its box decoding).
 */
#include "cpu.h"
#include "qk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define H cpu_host

typedef struct qelem_state {
    uint8_t table[256 * 256]; /* [a byte][b byte] -> y byte */
} qelem_state;

/* the element parameters cpu_ref's run_bin builds (ONNX form), or false with the reason */
static bool qelem_params(const sy_node *n, qk_add *p, sy_dtype *adt, sy_dtype *bdt, char *why, size_t len)
{
    uint32_t ni = H->node_num_inputs(n);
    const char *rq = NULL;
    size_t rl = 0;
    if (H->attr_string(n, "requant", &rq, &rl) && !(rl == 4 && !memcmp(rq, "onnx", 4)))
        return cpu_decline(why, len, "only the onnx requantization form (gemmlowp, single_rounding: cpu_ref)");
    if (ni < 7)
        return cpu_decline(why, len, "needs a, a_scale, b, b_scale and y_scale");
    const sy_tensor *a = H->node_input(n, 0), *b = H->node_input(n, 3), *y = H->node_output(n, 0);
    if (!a || !b || !y || !cpu_is_q8(a->dtype) || !cpu_is_q8(b->dtype) || !cpu_is_q8(y->dtype))
        return cpu_decline(why, len, "8-bit codes only");
    float sa, sb, sy;
    int32_t za, zb, zy;
    if (!cpu_q_scale_scalar(H->node_input(n, 1), &sa) || !cpu_q_scale_scalar(H->node_input(n, 4), &sb) ||
        !cpu_q_scale_scalar(H->node_input(n, 6), &sy))
        return cpu_decline(why, len, "scales must be constant positive float32 scalars");
    if (!cpu_q_zp_scalar(H->node_input(n, 2), a->dtype, &za) || !cpu_q_zp_scalar(H->node_input(n, 5), b->dtype, &zb) ||
        !cpu_q_zp_scalar(ni > 7 ? H->node_input(n, 7) : NULL, y->dtype, &zy))
        return cpu_decline(why, len, "zero points must be constant scalars of their code's type");
    const char *op = H->node_op(n);
    memset(p, 0, sizeof *p);
    p->op = !strcmp(op, "QMul") ? QK_MUL : !strcmp(op, "QSub") ? QK_SUB : QK_ADD;
    p->mode = QK_RQ_ONNX;
    p->za = za;
    p->zb = zb;
    p->zy = zy;
    /* the fused activation as a code range (ops_quant's q_act_clamp) */
    cpu_q_act_range(n, y->dtype, sy, zy, &p->lo, &p->hi);
    p->ra = sa / sy;
    p->rb = sb / sy;
    p->rm = sa * sb / sy;
    *adt = a->dtype;
    *bdt = b->dtype;
    return true;
}

static bool qelem_accepts(const sy_node *n, char *why, size_t len)
{
    qk_add p;
    sy_dtype a, b;
    return qelem_params(n, &p, &a, &b, why, len);
}

static sy_status *qelem_prepare(sy_node *n, void **state)
{
    char why[160] = "";
    qk_add p;
    sy_dtype adt, bdt;
    if (!qelem_params(n, &p, &adt, &bdt, why, sizeof why))
        return H->status_new(SY_ERR_UNSUPPORTED, "%s", why);
    qelem_state *s = malloc(sizeof *s);
    if (!s)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    for (int32_t ia = 0; ia < 256; ia++)
        for (int32_t ib = 0; ib < 256; ib++) {
            int32_t a = adt == SY_DT_INT8 ? (int32_t)(int8_t)ia : ia, b = bdt == SY_DT_INT8 ? (int32_t)(int8_t)ib : ib;
            s->table[ia * 256 + ib] = (uint8_t)qk_bin_one(&p, a, b);
        }
    *state = s;
    return NULL;
}

static void qelem_loop(const void *ctx, const void *const *in, const int64_t *st, void *out, int64_t n)
{
    const uint8_t *t = ((const qelem_state *)ctx)->table, *a = in[0], *b = in[1];
    uint8_t *y = out;
    int64_t sa = st[0], sb = st[1];
    for (int64_t i = 0; i < n; i++)
        y[i] = t[(size_t)a[i * sa] << 8 | b[i * sb]];
}

static sy_status *qelem_run(void *state, const sy_kernel_io *io)
{
    const sy_tensor *ins[2] = {io->inputs[0], io->inputs[3]};
    return sy_bcast_apply(H, 2, ins, io->outputs[0], qelem_loop, state);
}

#define Q8 (SY_DT_BIT(SY_DT_INT8) | SY_DT_BIT(SY_DT_UINT8))
static const sy_kernel_def qelem_kernels[] = {
    {sizeof(sy_kernel_def), "switchyard.quant", "QAdd", 1, 0, "cpu", Q8, 0, 0u, qelem_accepts, qelem_prepare,
     qelem_run, free, NULL},
    {sizeof(sy_kernel_def), "switchyard.quant", "QSub", 1, 0, "cpu", Q8, 0, 0u, qelem_accepts, qelem_prepare,
     qelem_run, free, NULL},
    {sizeof(sy_kernel_def), "switchyard.quant", "QMul", 1, 0, "cpu", Q8, 0, 0u, qelem_accepts, qelem_prepare,
     qelem_run, free, NULL},
};

sy_status *cpu_qelem_register(const sy_host_api *host, sy_plugin *p)
{
    for (uint32_t i = 0; i < SY_COUNT_OF(qelem_kernels); i++)
        SY_TRY(host->register_kernel(p, &qelem_kernels[i]));
    return NULL;
}
