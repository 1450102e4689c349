/*
 * QConcat (switchyard.quant: DequantizeLinear(x_i) ... -> Concat ->
 * QuantizeLinear folded) on 8-bit codes with constant per-tensor
 * parameters. Inputs: y_scale, y_zp, then x, x_scale, x_zp per input. An
 * input with the output's scale, zero point and type is copied; any other
 * maps each code through a 256-entry table filled at prepare by the SDK's
 * requantizer over every code (sy_rq_apply_n with cpu_ref's multiplier
 * s_x / s_y and the node's form), so the bytes are cpu_ref's run_concat's;
 * cpu_ref requantizes element by element on every run (ultraface_rfb_320's
 * box heads: 7% of its int8 step).
 */
#include "cpu.h"

#include <stdlib.h>
#include <string.h>

#define H cpu_host

typedef struct qcat_input {
    bool same;         /* the output's parameters: a copy */
    uint8_t map[256];  /* code byte -> output code byte */
} qcat_input;

typedef struct qcat_state {
    int64_t axis;
    uint32_t n;
    bool vbmi; /* cpu_map_bytes's 64-byte path */
    qcat_input in[];
} qcat_state;

static bool qcat_check(const sy_node *n, char *why, size_t len)
{
    uint32_t ni = H->node_num_inputs(n);
    const sy_tensor *y = H->node_output(n, 0);
    float s;
    int32_t z;
    sy_rq_mode mode;
    if (!cpu_q_rq_mode(n, &mode))
        return cpu_decline(why, len, "an unknown requant attribute (cpu_ref reports it)");
    if (!y || !cpu_is_q8(y->dtype) || ni < 5 || (ni - 2) % 3 != 0)
        return cpu_decline(why, len, "8-bit output codes and (x, x_scale, x_zp) triples only");
    if (!cpu_q_scale_scalar(H->node_input(n, 0), &s) || !cpu_q_zp_scalar(H->node_input(n, 1), y->dtype, &z))
        return cpu_decline(why, len, "y's scale and zero point must be constant scalars");
    int64_t axis = sy_attr_int_or(H, n, "axis", 0);
    if (axis < -(int64_t)y->rank || axis >= (int64_t)y->rank)
        return cpu_decline(why, len, "axis out of range (cpu_ref reports it)");
    for (uint32_t i = 2; i < ni; i += 3) {
        const sy_tensor *x = H->node_input(n, i);
        if (!x || !cpu_is_q8(x->dtype) || x->rank != y->rank)
            return cpu_decline(why, len, "8-bit input codes of the output's rank only");
        if (!cpu_q_scale_scalar(H->node_input(n, i + 1), &s) || !cpu_q_zp_scalar(H->node_input(n, i + 2), x->dtype, &z))
            return cpu_decline(why, len, "input scales and zero points must be constant scalars");
    }
    return true;
}

static bool qcat_accepts(const sy_node *n, char *why, size_t len) { return qcat_check(n, why, len); }

static sy_status *qcat_prepare(sy_node *n, void **state)
{
    char why[160] = "";
    if (!qcat_check(n, why, sizeof why))
        return H->status_new(SY_ERR_UNSUPPORTED, "%s", why);
    uint32_t ni = H->node_num_inputs(n), cnt = (ni - 2) / 3;
    qcat_state *s = calloc(1, sizeof *s + cnt * sizeof s->in[0]);
    if (!s)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    const sy_tensor *y = H->node_output(n, 0);
    sy_rq_mode mode;
    (void)cpu_q_rq_mode(n, &mode);
    float sy, sx;
    int32_t zy, zx, lo, hi;
    (void)cpu_q_scale_scalar(H->node_input(n, 0), &sy);
    (void)cpu_q_zp_scalar(H->node_input(n, 1), y->dtype, &zy);
    sy_q_storage_range(y->dtype, &lo, &hi);
    int64_t axis = sy_attr_int_or(H, n, "axis", 0);
    s->axis = axis < 0 ? axis + y->rank : axis;
    s->n = cnt;
    for (uint32_t k = 0; k < cnt; k++) {
        const sy_tensor *x = H->node_input(n, 2 + 3 * k);
        (void)cpu_q_scale_scalar(H->node_input(n, 3 + 3 * k), &sx);
        (void)cpu_q_zp_scalar(H->node_input(n, 4 + 3 * k), x->dtype, &zx);
        qcat_input *in = &s->in[k];
        in->same = sx == sy && zx == zy && x->dtype == y->dtype;
        sy_requant rq;
        sy_rq_init(&rq, mode, (double)sx / sy, zy, lo, hi);
        int32_t cen[256], codes[256];
        for (int32_t b = 0; b < 256; b++) /* byte b as x's code, minus its zero point */
            cen[b] = (x->dtype == SY_DT_INT8 ? (int32_t)(int8_t)b : b) - zx;
        sy_rq_apply_n(&rq, 0, cen, codes, 256);
        for (int32_t b = 0; b < 256; b++)
            in->map[b] = (uint8_t)codes[b];
    }
    const cpu_provider *prov = H->node_provider_state(n);
    s->vbmi = prov && prov->vbmi;
    *state = s;
    return NULL;
}

static sy_status *qcat_run(void *state, const sy_kernel_io *io)
{
    const qcat_state *s = state;
    sy_tensor *y = io->outputs[0];
    int64_t outer = sy_dims_prod(y->dims, 0, (int32_t)s->axis);
    int64_t yinner = sy_dims_prod(y->dims, (int32_t)s->axis, y->rank), offset = 0;
    uint8_t *yd = y->data;
    for (uint32_t k = 0; k < s->n; k++) {
        const sy_tensor *x = io->inputs[2 + 3 * k];
        int64_t inner = sy_dims_prod(x->dims, (int32_t)s->axis, x->rank);
        if (offset + inner > yinner || sy_dims_prod(x->dims, 0, (int32_t)s->axis) != outer)
            return H->status_new(SY_ERR_SHAPE, "QConcat '%s': input %u does not fit the output", y->name ? y->name : "?",
                                 k);
        const uint8_t *xd = x->data, *map = s->in[k].map;
        for (int64_t o = 0; o < outer; o++) {
            uint8_t *dst = yd + (size_t)(o * yinner + offset);
            const uint8_t *src = xd + (size_t)(o * inner);
            if (s->in[k].same) {
                memcpy(dst, src, (size_t)inner);
                continue;
            }
            cpu_map_bytes(s->vbmi, map, src, dst, (size_t)inner);
        }
        offset += inner;
    }
    return NULL;
}

#define Q8 (SY_DT_BIT(SY_DT_INT8) | SY_DT_BIT(SY_DT_UINT8))
/* the type mask applies to input 2, the first x (inputs 0 and 1 are y_scale and y_zp) */
static const sy_kernel_def qcat_kernels[] = {
    {sizeof(sy_kernel_def), "switchyard.quant", "QConcat", 1, 0, "cpu", Q8, 2, 0u, qcat_accepts, qcat_prepare,
     qcat_run, free, NULL},
};

sy_status *cpu_qconcat_register(const sy_host_api *host, sy_plugin *p)
{
    for (uint32_t i = 0; i < SY_COUNT_OF(qcat_kernels); i++)
        SY_TRY(host->register_kernel(p, &qcat_kernels[i]));
    return NULL;
}
