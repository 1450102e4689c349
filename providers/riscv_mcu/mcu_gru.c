/*
 * riscv_mcu: ONNX GRU (ops-mcu.md Table B #82, fp32) on tflk_gru.c, which
 * reads ONNX's W, R, B and initial_h as the model gives them (no prepared
 * copies): forward, reverse or bidirectional, linear_before_reset 0 or 1.
 * Y is written into the node's scratch when the node does not ask for it.
 * The row's rules (rule 32): float only, W, R and B constants, default
 * activations (no activations, activation_alpha/beta, clip), no
 * sequence_lens, layout 0.
 */
#include "mcu.h"

#define H mcu_H

#define ROW "ops-mcu.md Table B #82 GRU, rule 32"

bool mcu_gru_check(const sy_node *n, sy_claim *c)
{
    const sy_tensor *x = mcu_in_opt(n, 0), *w = mcu_in_opt(n, 1), *r = mcu_in_opt(n, 2), *b = mcu_in_opt(n, 3), *h0 = mcu_in_opt(n, 5);
    uint32_t nin = H->node_num_inputs(n), nout = H->node_num_outputs(n);
    for (uint32_t i = 0; i < nin + nout; i++) {
        const sy_tensor *t = i < nin ? mcu_in_opt(n, i) : mcu_out_opt(n, i - nin);
        if (t && t->dtype != SY_DT_FLOAT32 && i != 4) /* sequence_lens (int32) has a rule of its own */
            return mcu_decline(c, SY_REASON_DTYPE, "GRU: '%s' is %s (%s: float only, no int8)", t->name ? t->name : "",
                            sy_dt_name(t->dtype), ROW), false;
    }
    if (!x || !w || !r || x->rank != 3 || w->rank != 3 || r->rank != 3)
        return mcu_decline(c, SY_REASON_RANK, "GRU: X, W and R must be 3D (%s)", ROW), false;
    int32_t rev = 0;
    int dirs = mcu_rnn_dirs(n, &rev);
    if (!dirs)
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "GRU: direction must be forward, reverse or bidirectional (%s)", ROW),
               false;
    static const char *const fixed[] = {"activations", "activation_alpha", "activation_beta", "clip"};
    for (size_t i = 0; i < SY_COUNT_OF(fixed); i++)
        if (sy_attr_has(H, n, fixed[i], SY_ATTR_STRINGS) || sy_attr_has(H, n, fixed[i], SY_ATTR_FLOATS) ||
            sy_attr_has(H, n, fixed[i], SY_ATTR_FLOAT))
            return mcu_decline(c, SY_REASON_ATTRIBUTE, "GRU: %s is not configurable (%s: default gates only)", fixed[i],
                            ROW), false;
    if (sy_attr_int_or(H, n, "layout", 0) != 0)
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "GRU: layout must be 0 (%s: not configurable)", ROW), false;
    int64_t lbr = sy_attr_int_or(H, n, "linear_before_reset", 0);
    if (lbr != 0 && lbr != 1)
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "GRU: linear_before_reset must be 0 or 1, got %lld (%s)",
                        (long long)lbr, ROW), false;
    if (mcu_in_opt(n, 4))
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "GRU: sequence_lens is not configurable (%s)", ROW), false;
    /* constness last: a node test that feeds W as an input still names the rule it breaks first */
    if (!w->data || !r->data || (b && !b->data))
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "GRU: W, R and B must be constants (%s)", ROW), false;
    int64_t hs = w->dims[1] / 3, B = x->dims[1];
    if (w->dims[0] != dirs || w->dims[1] != 3 * hs || w->dims[2] != x->dims[2] || r->dims[0] != dirs ||
        r->dims[1] != 3 * hs || r->dims[2] != hs || (b && sy_tensor_numel(b) != (int64_t)dirs * 6 * hs) ||
        (h0 && sy_tensor_numel(h0) != (int64_t)dirs * B * hs))
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "GRU: W [%d, 3H, I], R [%d, 3H, H], B [%d, 6H], initial_h [%d, B, H] "
                        "expected (%s)", dirs, dirs, dirs, dirs, ROW), false;
    if (sy_tensor_numel(x) > INT32_MAX / 8 || sy_tensor_numel(w) > INT32_MAX / 8 ||
        x->dims[0] * dirs * B * hs > INT32_MAX / 8)
        return mcu_decline(c, SY_REASON_RANK, "GRU: more than 2^28 elements: the MCU kernels index with int32"), false;
    return true;
}

sy_status *mcu_gru_prepare(sy_node *n, mcu_node *k)
{
    const sy_tensor *x = mcu_in_opt(n, 0), *w = mcu_in_opt(n, 1);
    tflk_gru *p = &k->u.gru;
    memset(p, 0, sizeof *p);
    k->kind = MK_GRU_ONNX;
    p->dirs = mcu_rnn_dirs(n, &p->reverse);
    p->steps = (int32_t)x->dims[0];
    p->batch = (int32_t)x->dims[1];
    p->n_in = (int32_t)x->dims[2];
    p->hidden = (int32_t)(w->dims[1] / 3);
    p->lbr = sy_attr_int_or(H, n, "linear_before_reset", 0) != 0;
    k->pre_floats = tflk_gru_scratch_floats(p);
    size_t s = k->pre_floats;
    if (!mcu_out_opt(n, 0)) /* Y into the scratch */
        s += (size_t)p->steps * (size_t)p->dirs * (size_t)p->batch * (size_t)p->hidden;
    H->node_set_scratch(n, s * sizeof(float));
    return NULL;
}

static const void *io_in(const sy_kernel_io *io, uint32_t i)
{
    return i < io->n_inputs && io->inputs[i] ? io->inputs[i]->data : NULL;
}

sy_status *mcu_gru_run(const mcu_node *k, const sy_kernel_io *io)
{
    float *scratch = io->scratch;
    sy_tensor *y = io->n_outputs > 0 ? io->outputs[0] : NULL, *yh = io->n_outputs > 1 ? io->outputs[1] : NULL;
    tflk_gru_f32(&k->u.gru, io_in(io, 0), io_in(io, 1), io_in(io, 2), io_in(io, 3), io_in(io, 5),
                 y ? y->data : scratch + k->pre_floats, yh ? yh->data : NULL, scratch);
    return NULL;
}
