/*
 * riscv_mcu: ONNX RNN in fp32 (ops-mcu.md Table B #114; its int8 form is
 * switchyard.quant QRNN in mcu_quant.c) on tflk_rnn.c, the kernel cpu_ref's
 * layout-0 RNN calls too. ONNX's W, R, B, sequence_lens and initial_h are
 * read as the model gives them: forward, reverse or bidirectional, any of
 * the eleven activations with their alpha/beta, clip. The row's rules
 * (rule 33): float32, layout 0, W and R constants, hidden_size given and
 * matching W and R, both Y and Y_h outputs, sequence_lens int32.
 */
#include "mcu.h"

#define H mcu_H

#define ROW "ops-mcu.md Table B #114 RNN, rule 33"

/* activations, activation_alpha/beta into p (ONNX's defaults: Tanh); false
 * with a message in `why` when they do not parse */
static bool read_acts(const sy_node *n, int dirs, tflk_rnn *p, char *why, size_t len)
{
    float al[4], be[4];
    int64_t na = sy_attr_floats_copy(H, n, "activation_alpha", al, 4);
    int64_t nb = sy_attr_floats_copy(H, n, "activation_beta", be, 4);
    const char *const *names = NULL;
    size_t cnt = 0;
    int ia = 0, ib = 0;
    for (int d = 0; d < 2; d++) {
        p->act[d] = TFLK_RA_TANH;
        p->alpha[d] = p->beta[d] = 0.0f;
    }
    if (!H->attr_strings(n, "activations", &names, &cnt))
        return true;
    if ((int)cnt != dirs) {
        snprintf(why, len, "activations must list %d function(s), one per direction, got %zu", dirs, cnt);
        return false;
    }
    for (int d = 0; d < dirs; d++) {
        int32_t np;
        p->act[d] = tflk_rnn_act_of(names[d], &np, &p->alpha[d], &p->beta[d]);
        if (p->act[d] < 0) {
            snprintf(why, len, "activation '%s' is not one of Tanh, Relu, Sigmoid, Affine, LeakyRelu, "
                     "ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus", names[d]);
            return false;
        }
        if (np >= 1 && ia < na)
            p->alpha[d] = al[ia++];
        if (np >= 2 && ib < nb)
            p->beta[d] = be[ib++];
    }
    return true;
}

bool mcu_rnn_check(const sy_node *n, sy_claim *c)
{
    const sy_tensor *x = mcu_in_opt(n, 0), *w = mcu_in_opt(n, 1), *r = mcu_in_opt(n, 2), *b = mcu_in_opt(n, 3), *sl = mcu_in_opt(n, 4), *h0 = mcu_in_opt(n, 5);
    uint32_t nin = H->node_num_inputs(n), nout = H->node_num_outputs(n);
    for (uint32_t i = 0; i < nin + nout; i++) {
        const sy_tensor *t = i < nin ? mcu_in_opt(n, i) : mcu_out_opt(n, i - nin);
        if (t && t->dtype != SY_DT_FLOAT32 && i != 4) /* sequence_lens has a rule of its own */
            return mcu_decline(c, SY_REASON_DTYPE, "RNN: '%s' is %s (%s: the model must be float32; int8 is the "
                            "quantized QRNN)", t->name ? t->name : "", sy_dt_name(t->dtype), ROW), false;
    }
    if (!x || !w || !r || x->rank != 3 || w->rank != 3 || r->rank != 3)
        return mcu_decline(c, SY_REASON_RANK, "RNN: X, W and R must be 3D (%s)", ROW), false;
    if (!mcu_out_opt(n, 0) || !mcu_out_opt(n, 1))
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "RNN: both Y and Y_h must be outputs (%s)", ROW), false;
    if (sy_attr_int_or(H, n, "layout", 0) != 0)
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "RNN: only layout = 0 (time-major) is supported (%s)", ROW), false;
    int32_t rev = 0;
    int dirs = mcu_rnn_dirs(n, &rev);
    if (!dirs)
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "RNN: direction must be forward, reverse or bidirectional (%s)", ROW),
               false;
    tflk_rnn p;
    char why[200];
    if (!read_acts(n, dirs, &p, why, sizeof why))
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "RNN: %s (%s)", why, ROW), false;
    float clip;
    if (H->attr_float(n, "clip", &clip) && !(clip > 0.0f))
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "RNN: clip must be > 0, got %g (%s)", (double)clip, ROW), false;
    int64_t hs = sy_attr_int_or(H, n, "hidden_size", -1);
    if (hs < 1)
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "RNN: hidden_size is required (%s)", ROW), false;
    if (sl && sl->dtype != SY_DT_INT32)
        return mcu_decline(c, SY_REASON_DTYPE, "RNN: sequence_lens is %s (%s: int32)", sy_dt_name(sl->dtype), ROW), false;
    int64_t B = x->dims[1];
    if (w->dims[0] != dirs || w->dims[1] != hs || w->dims[2] != x->dims[2] || r->dims[0] != dirs ||
        r->dims[1] != hs || r->dims[2] != hs || (b && sy_tensor_numel(b) != (int64_t)dirs * 2 * hs) ||
        (sl && sy_tensor_numel(sl) != B) || (h0 && sy_tensor_numel(h0) != (int64_t)dirs * B * hs))
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "RNN: W [%d, %lld, I], R [%d, %lld, %lld], B [%d, %lld], "
                        "sequence_lens [batch], initial_h [%d, batch, %lld] expected (%s: hidden_size must match W "
                        "and R)", dirs, (long long)hs, dirs, (long long)hs, (long long)hs, dirs, (long long)(2 * hs),
                        dirs, (long long)hs, ROW), false;
    /* constness last: a node test that feeds W as an input still names the rule it breaks first */
    if (!w->data || !r->data)
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "RNN: W and R must be constants (%s)", ROW), false;
    if (sy_tensor_numel(x) > INT32_MAX / 8 || sy_tensor_numel(w) > INT32_MAX / 8 ||
        sy_tensor_numel(r) > INT32_MAX / 8 || x->dims[0] * dirs * B * hs > INT32_MAX / 8)
        return mcu_decline(c, SY_REASON_RANK, "RNN: more than 2^28 elements: the MCU kernels index with int32"), false;
    return true;
}

sy_status *mcu_rnn_prepare(sy_node *n, mcu_node *k)
{
    const sy_tensor *x = mcu_in_opt(n, 0);
    tflk_rnn *p = &k->u.rnn;
    memset(p, 0, sizeof *p);
    k->kind = MK_RNN_ONNX;
    p->dirs = mcu_rnn_dirs(n, &p->reverse);
    p->steps = (int32_t)x->dims[0];
    p->batch = (int32_t)x->dims[1];
    p->n_in = (int32_t)x->dims[2];
    p->hidden = (int32_t)sy_attr_int_or(H, n, "hidden_size", 0);
    char why[200];
    if (!read_acts(n, p->dirs, p, why, sizeof why))
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "RNN: %s", why);
    float clip;
    p->clip = H->attr_float(n, "clip", &clip) ? clip : -1.0f;
    H->node_set_scratch(n, tflk_rnn_scratch_floats(p) * sizeof(float));
    return NULL;
}

static const void *io_in(const sy_kernel_io *io, uint32_t i)
{
    return i < io->n_inputs && io->inputs[i] ? io->inputs[i]->data : NULL;
}

sy_status *mcu_rnn_run(const mcu_node *k, const sy_kernel_io *io)
{
    const int32_t *lens = io_in(io, 4);
    for (int32_t b = 0; lens && b < k->u.rnn.batch; b++) /* as cpu_ref: refused, not clamped */
        if (lens[b] < 0 || lens[b] > k->u.rnn.steps)
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "RNN: sequence_lens '%s'[%d] = %d is outside [0, %d]",
                                 io->inputs[4]->name ? io->inputs[4]->name : "?", (int)b, (int)lens[b],
                                 (int)k->u.rnn.steps);
    tflk_rnn_f32(&k->u.rnn, io_in(io, 0), io_in(io, 1), io_in(io, 2), io_in(io, 3), lens, io_in(io, 5),
                 io->outputs[0]->data, io->outputs[1]->data, io->scratch);
    return NULL;
}
