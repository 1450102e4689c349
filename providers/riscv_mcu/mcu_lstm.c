/*
 * riscv_mcu: ONNX LSTM (ops-mcu.md Table B #20, fp32) on TFLite's fp32 LSTM
 * kernel (plugin_sdk/kernels/tflk_lstm.c). The kernel takes one [H, I]
 * (input) and [H, H] (recurrent) matrix per gate in TFLite's order (input,
 * forget, cell, output): ONNX's W [1, 4H, I] and R [1, 4H, H] hold theirs
 * in the order i, o, f, c, so each gate points into W / R where ONNX put
 * it. ONNX's two biases Wb + Rb are summed once at prepare (the kernel
 * starts each gate's sum from one bias), and the initial states (zeros when
 * absent) are prepared copies. X is time-major (layout 0); Y [T, 1, B, H]
 * is the kernel's time-major output; Y_h and Y_c are the hidden and cell
 * state the kernel leaves in its scratch, copied out after the run.
 *
 * The row's rules: forward only, default activations (sigmoid, tanh, tanh),
 * no clip, input_forget 0, layout 0, no sequence_lens, no peepholes (P);
 * W, R and B constants. Initial states that are graph inputs are declined:
 * the package holds the kernel's parameters as constants.
 */
#include "mcu.h"

#define H mcu_H

#define ROW "ops-mcu.md Table B #20 LSTM, rule 31"

bool mcu_lstm_check(const sy_node *n, sy_claim *c)
{
    const sy_tensor *x = mcu_in_opt(n, 0), *w = mcu_in_opt(n, 1), *r = mcu_in_opt(n, 2), *b = mcu_in_opt(n, 3);
    for (uint32_t i = 0; i < H->node_num_inputs(n) + H->node_num_outputs(n); i++) {
        const sy_tensor *t = i < H->node_num_inputs(n) ? mcu_in_opt(n, i) : mcu_out_opt(n, i - H->node_num_inputs(n));
        if (t && t->dtype != SY_DT_FLOAT32 && i != 4) /* sequence_lens (int32) has a rule of its own */
            return mcu_decline(c, SY_REASON_DTYPE, "LSTM: '%s' is %s (%s: float only, no int8)", t->name ? t->name : "",
                            sy_dt_name(t->dtype), ROW), false;
    }
    if (!x || !w || !r || x->rank != 3 || w->rank != 3 || r->rank != 3)
        return mcu_decline(c, SY_REASON_RANK, "LSTM: X, W and R must be 3D (%s)", ROW), false;
    char dir[24];
    sy_attr_string_or(H, n, "direction", "forward", dir, sizeof dir);
    if (strcmp(dir, "forward"))
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "LSTM: direction must be forward, got %s (%s: direction not "
                        "configurable)", dir, ROW), false;
    static const char *const fixed[] = {"activations", "activation_alpha", "activation_beta", "clip"};
    for (size_t i = 0; i < SY_COUNT_OF(fixed); i++)
        if (sy_attr_has(H, n, fixed[i], SY_ATTR_STRINGS) || sy_attr_has(H, n, fixed[i], SY_ATTR_FLOATS) ||
            sy_attr_has(H, n, fixed[i], SY_ATTR_FLOAT))
            return mcu_decline(c, SY_REASON_ATTRIBUTE, "LSTM: %s is not configurable (%s)", fixed[i], ROW), false;
    if (sy_attr_int_or(H, n, "input_forget", 0) != 0 || sy_attr_int_or(H, n, "layout", 0) != 0)
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "LSTM: input_forget and layout must be 0 (%s: not configurable)", ROW),
               false;
    if (mcu_in_opt(n, 4))
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "LSTM: sequence_lens is not configurable (%s)", ROW), false;
    if (mcu_in_opt(n, 7))
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "LSTM: P (peepholes) is not configurable (%s)", ROW), false;
    for (uint32_t i = 5; i <= 6; i++)
        if (mcu_in_opt(n, i) && !mcu_in_opt(n, i)->data)
            return mcu_decline(c, SY_REASON_ATTRIBUTE, "LSTM: %s is a graph input; the MCU kernel takes the initial "
                            "state as a constant (zeros when absent), which the package holds", i == 5 ? "initial_h" :
                            "initial_c"), false;
    /* constness last: a node test that feeds W as an input still names the rule it breaks first */
    if (!w->data || !r->data || (b && !b->data))
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "LSTM: W, R and B must be constants (%s)", ROW), false;
    int64_t hs = w->dims[1] / 4;
    if (w->dims[0] != 1 || w->dims[1] != 4 * hs || w->dims[2] != x->dims[2] || r->dims[1] != 4 * hs ||
        r->dims[2] != hs || (b && sy_tensor_numel(b) != 8 * hs) ||
        (mcu_in_opt(n, 5) && sy_tensor_numel(mcu_in_opt(n, 5)) != x->dims[1] * hs) ||
        (mcu_in_opt(n, 6) && sy_tensor_numel(mcu_in_opt(n, 6)) != x->dims[1] * hs))
        return mcu_decline(c, SY_REASON_ATTRIBUTE, "LSTM: W [1, 4H, I], R [1, 4H, H], B [1, 8H], initial_h and initial_c "
                        "[1, B, H] expected (%s)", ROW), false;
    if (sy_tensor_numel(x) > INT32_MAX / 8 || sy_tensor_numel(w) > INT32_MAX / 8)
        return mcu_decline(c, SY_REASON_RANK, "LSTM: more than 2^28 elements: the MCU kernels index with int32"), false;
    return true;
}

static tflk_qtensor f32_at(const float *p) { return (tflk_qtensor){p, TFLK_F32, 0, 0, NULL, NULL}; }

sy_status *mcu_lstm_prepare(sy_node *n, mcu_node *k)
{
    const sy_tensor *x = mcu_in_opt(n, 0), *w = mcu_in_opt(n, 1), *r = mcu_in_opt(n, 2), *b = mcu_in_opt(n, 3), *h0 = mcu_in_opt(n, 5), *c0 = mcu_in_opt(n, 6);
    const int32_t T = (int32_t)x->dims[0], B = (int32_t)x->dims[1], I = (int32_t)x->dims[2];
    const int32_t Hs = (int32_t)(w->dims[1] / 4);
    k->kind = MK_LSTM_ONNX;
    /* own: the summed bias [4H] in TFLite's gate order, h0 [B H], c0 [B H] */
    size_t nf = (size_t)4 * Hs + 2 * (size_t)B * Hs;
    float *own = calloc(nf ? nf : 1, sizeof(float));
    if (!own)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    k->own = own;
    k->wt = own;
    k->wt_bytes = nf * sizeof(float);
    float *bias = own, *hh = own + 4 * Hs, *cc = hh + (size_t)B * Hs;
    /* TFLite gate g (input, forget, cell, output) is ONNX's block onnx_of[g] (i, o, f, c) */
    static const int onnx_of[4] = {0, 2, 3, 1};
    tflk_lstm *p = &k->u.lstm;
    memset(p, 0, sizeof *p);
    p->n_cell = p->n_out = Hs;
    p->n_in = I;
    p->steps = T;
    p->batch = B;
    p->time_major = 1;
    p->act = (tflk_act){1, 0.0f, 0.0f}; /* tanh: ONNX's g and h */
    p->x = (tflk_qtensor){NULL, TFLK_F32, 0, 0, NULL, NULL};
    const float *wd = w->data, *rd = r->data, *bd = b ? b->data : NULL;
    for (int g = 0; g < 4; g++) {
        const size_t blk = (size_t)onnx_of[g];
        p->wx[g] = f32_at(wd + blk * (size_t)Hs * (size_t)I);
        p->wh[g] = f32_at(rd + blk * (size_t)Hs * (size_t)Hs);
        for (int32_t j = 0; bd && j < Hs; j++)
            bias[(size_t)g * Hs + j] = bd[blk * Hs + j] + bd[(4 + blk) * Hs + j];
        p->b[g] = f32_at(bias + (size_t)g * Hs);
    }
    if (h0)
        memcpy(hh, h0->data, (size_t)B * Hs * sizeof(float));
    if (c0)
        memcpy(cc, c0->data, (size_t)B * Hs * sizeof(float));
    p->h0 = f32_at(hh);
    p->c0 = f32_at(cc);
    p->y_dtype = TFLK_F32;
    /* scratch: the kernel's, then Y when the node does not ask for it */
    size_t s = tflk_lstm_scratch_floats(p) * sizeof(float);
    k->pre_floats = tflk_lstm_scratch_floats(p);
    if (!mcu_out_opt(n, 0))
        s += (size_t)T * B * Hs * sizeof(float);
    H->node_set_scratch(n, s);
    return NULL;
}

sy_status *mcu_lstm_run(const mcu_node *k, const sy_kernel_io *io)
{
    const tflk_lstm *p = &k->u.lstm;
    float *scratch = io->scratch;
    sy_tensor *y = io->n_outputs > 0 ? io->outputs[0] : NULL, *yh = io->n_outputs > 1 ? io->outputs[1] : NULL,
              *yc = io->n_outputs > 2 ? io->outputs[2] : NULL;
    float *ybuf = y ? y->data : scratch + k->pre_floats;
    tflk_lstm_run(p, io->inputs[0]->data, ybuf, scratch);
    /* the kernel's scratch starts with h [B, H], then c [B, H]: the final states */
    const size_t bh = (size_t)p->batch * (size_t)p->n_cell;
    if (yh)
        tflk_copy(yh->data, scratch, bh * sizeof(float));
    if (yc)
        tflk_copy(yc->data, scratch + bh, bh * sizeof(float));
    return NULL;
}
