/*
 * qti_aisw: the Qualcomm block ops (seed 000_a952808d859356a9, QAIRT
 * 80-63442-50 "Block Ops Definitions"), domain "qti_aisw":
 *
 *   Buffer         accumulate frames across runs (modes BLOCKING=0,
 *                  NON_BLOCKING_LEFT=1, NON_BLOCKING_RIGHT=2; buffer_size,
 *                  buffer_dim, buffer_padding, stride; `reset` input)
 *   MaskedSoftmax  softmax over the last axis with an UNCOMPRESSED=0
 *                  (additive) or COMPRESSED=1 (sequence lengths) mask
 *   StatefulGRU    ONNX GRU whose final state carries over to the next run
 *   StatefulLSTM   unless `reset` is true
 *
 * Kernels: cpu_ref (fp32 reference) for all four; per the seed's backend
 * lists also HTP (Buffer, StatefulGRU, StatefulLSTM; the htp provider
 * refuses Buffer mode BLOCKING), LPAI (Buffer on u8/s8/u16 tensors: LPAI
 * has no float tensors; and QStatefulGRU / QStatefulLSTM, the integer forms
 * the QDQ pass folds quantized StatefulGRU / StatefulLSTM into, qsrnn.c,
 * with cpu_ref kernels running the same integer cells) and AIC
 * (MaskedSoftmax). Emulator kernels store in
 * fp16 on HTP: values and carried state are rounded to binary16 (round to
 * nearest even) after fp32 arithmetic; AIC rounds at its domain boundary.
 *
 * Semantics decided here where the seed is silent (docs/emulators.md):
 *  - buffer_padding counts frames; stride counts elements along buffer_dim
 *    (a multiple of the frame extent), as the seed's range [frame, size].
 *  - BLOCKING: while the buffer is not full the op "does not execute": its
 *    output keeps the last full buffer it emitted (zeros before the first).
 *  - COMPRESSED mask: sequences of lengths m_0, m_1, ... are packed along
 *    w and c; row w of sequence s attends to the columns of s only; rows
 *    past the sum of lengths and columns outside the row's sequence are 0.
 *  - Stateful RNNs carry every direction's final state; the first run and
 *    runs with reset = true start from initial_h / initial_c or zeros.
 */
#include "qsrnn.h"
#include "switchyard/sy_sdk.h"
#include "tflk.h" /* the one float softmax body (sy_kernels) */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const sy_host_api *H; /* process-wide: the same host table in every environment */
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)
#define DOMAIN "qti_aisw"

/* ---- numerics of the provider a kernel runs on --------------------------- */
typedef enum { NUM_F32 = 0, NUM_F16 = 1 } num_mode;

static void round_f16_n(float *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        p[i] = sy_f16_round(p[i]);
}

/* The AIC kernel needs no mode of its own: the aic provider's boundary
 * copies round every float tensor entering or leaving its domain to fp16
 * when convert_to_fp16 is on (its default), and fp32 softmax arithmetic on
 * fp16 values is what the spec asks (fp16 storage, fp32 accumulation). */

/* ======================================================================== */
/* Buffer                                                                   */
/* ======================================================================== */
enum { BUF_BLOCKING = 0, BUF_LEFT = 1, BUF_RIGHT = 2 };

typedef struct buf_params {
    int64_t size, dim, padding, stride, mode;
    int64_t frame;                /* in[0].dims[dim] */
    int64_t slots, stride_frames; /* size / frame, stride / frame */
} buf_params;

static sy_status *buf_read(const sy_node *n, buf_params *p)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    p->size = sy_attr_int_or(H, n, "buffer_size", -1);
    p->dim = sy_attr_int_or(H, n, "buffer_dim", -1);
    p->padding = sy_attr_int_or(H, n, "buffer_padding", 0);
    p->mode = sy_attr_int_or(H, n, "mode", BUF_BLOCKING);
    if (p->dim < 0 || p->dim >= x->rank)
        return ERR(SY_ERR_INVALID_ARGUMENT, "Buffer: buffer_dim = %lld must be in [0, %d] (input rank %d)",
                   (long long)p->dim, (int)x->rank - 1, (int)x->rank);
    p->frame = x->dims[p->dim];
    p->stride = sy_attr_int_or(H, n, "stride", p->frame); /* QnnOpDef default 1 frame */
    if (p->frame <= 0)
        return ERR(SY_ERR_SHAPE, "Buffer: input dim %lld (the frame) must be > 0", (long long)p->dim);
    if (p->size <= 0 || p->size % p->frame)
        return ERR(SY_ERR_INVALID_ARGUMENT,
                   "Buffer: buffer_size = %lld must be a positive multiple of Shape(in[0])[buffer_dim] = %lld",
                   (long long)p->size, (long long)p->frame);
    if (p->stride < p->frame || p->stride > p->size || p->stride % p->frame)
        return ERR(SY_ERR_INVALID_ARGUMENT,
                   "Buffer: stride = %lld must be in [%lld, %lld] and a multiple of %lld (the frame)",
                   (long long)p->stride, (long long)p->frame, (long long)p->size, (long long)p->frame);
    if (p->mode < BUF_BLOCKING || p->mode > BUF_RIGHT)
        return ERR(SY_ERR_INVALID_ARGUMENT,
                   "Buffer: mode = %lld must be BLOCKING=0, NON_BLOCKING_LEFT=1 or NON_BLOCKING_RIGHT=2",
                   (long long)p->mode);
    p->slots = p->size / p->frame;
    p->stride_frames = p->stride / p->frame;
    if (p->padding < 0 || p->padding >= p->slots)
        return ERR(SY_ERR_INVALID_ARGUMENT, "Buffer: buffer_padding = %lld frames must be in [0, %lld]",
                   (long long)p->padding, (long long)p->slots - 1);
    const sy_tensor *r = H->node_num_inputs(n) > 1 ? H->node_input(n, 1) : NULL;
    if (r && (r->dtype != SY_DT_BOOL || sy_tensor_numel(r) != 1))
        return ERR(SY_ERR_TYPE, "Buffer: reset must be a bool scalar");
    return NULL;
}

static sy_status *infer_buffer(sy_node *n)
{
    buf_params p;
    SY_TRY(buf_read(n, &p));
    const sy_tensor *x = H->node_input(n, 0);
    int64_t dims[SY_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    dims[p.dim] = p.size;
    return H->node_set_output(n, 0, x->dtype, x->rank, dims);
}

typedef struct buf_state {
    buf_params p;
    size_t esize;
    int64_t outer, inner; /* elements before / after buffer_dim (x frame) */
    uint8_t *store;       /* slots frames in arrival order */
    int64_t count;        /* frames present (padding frames count) */
    uint8_t *last;        /* BLOCKING: the last emitted output */
    num_mode num;
    int32_t zero;         /* the code of real 0: the zero point of a quantized tensor, else 0 */
} buf_state;

/* Empty slots and padding frames hold real 0, which for a quantized tensor
 * is its zero point, not the code 0 (uint8 zero point 10: code 0 is -10 s). */
static void buf_fill_zero(const buf_state *s, uint8_t *dst, size_t bytes)
{
    if (!s->zero) {
        memset(dst, 0, bytes);
        return;
    }
    for (size_t i = 0; i + s->esize <= bytes; i += s->esize) {
        if (s->esize == 1) {
            dst[i] = (uint8_t)s->zero;
        } else {
            uint16_t z = (uint16_t)s->zero;
            memcpy(dst + i, &z, 2);
        }
    }
}

static void buf_reset(void *state)
{
    buf_state *s = state;
    size_t bytes = (size_t)(s->outer * s->p.size * s->inner) * s->esize;
    buf_fill_zero(s, s->store, bytes);
    buf_fill_zero(s, s->last, bytes);
    s->count = s->p.padding;
}

static sy_status *buf_prepare_num(sy_node *n, void **state, num_mode num)
{
    buf_params p;
    SY_TRY(buf_read(n, &p));
    const sy_tensor *x = H->node_input(n, 0);
    buf_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "Buffer: out of memory");
    s->p = p;
    s->esize = sy_dt_size(x->dtype);
    s->outer = sy_dims_prod(x->dims, 0, (int32_t)p.dim);
    s->inner = sy_dims_prod(x->dims, (int32_t)p.dim + 1, x->rank);
    s->num = num;
    /* per-tensor quantized integer data: empty is the zero point */
    if (x->quant && x->quant->count == 1 && x->quant->zero_points && s->esize <= 2 && !sy_dt_is_float(x->dtype))
        s->zero = x->quant->zero_points[0];
    size_t bytes = (size_t)(s->outer * p.size * s->inner) * s->esize;
    s->store = calloc(1, bytes ? bytes : 1);
    s->last = calloc(1, bytes ? bytes : 1);
    if (!s->store || !s->last) {
        free(s->store);
        free(s->last);
        free(s);
        return ERR(SY_ERR_OUT_OF_MEMORY, "Buffer: out of memory");
    }
    buf_reset(s);
    *state = s;
    return NULL;
}

static sy_status *buf_prepare(sy_node *n, void **state) { return buf_prepare_num(n, state, NUM_F32); }
static sy_status *buf_prepare_f16(sy_node *n, void **state) { return buf_prepare_num(n, state, NUM_F16); }

static void buf_release(void *state)
{
    buf_state *s = state;
    if (!s)
        return;
    free(s->store);
    free(s->last);
    free(s);
}

/* frame f of the store for outer index o */
static inline uint8_t *frame_at(buf_state *s, uint8_t *base, int64_t o, int64_t slot)
{
    return base + (size_t)((o * s->p.slots + slot) * s->p.frame * s->inner) * s->esize;
}

static sy_status *buf_run(void *state, const sy_kernel_io *io)
{
    buf_state *s = state;
    const sy_tensor *x = io->inputs[0];
    const sy_tensor *r = io->n_inputs > 1 ? io->inputs[1] : NULL;
    sy_tensor *y = io->outputs[0];
    if (r && r->data && *(const uint8_t *)r->data)
        buf_reset(s);
    size_t fbytes = (size_t)(s->p.frame * s->inner) * s->esize;
    if (s->count == s->p.slots) { /* full: evict `stride` oldest frames, shift */
        int64_t keep = s->p.slots - s->p.stride_frames;
        for (int64_t o = 0; o < s->outer; o++) {
            memmove(frame_at(s, s->store, o, 0), frame_at(s, s->store, o, s->p.stride_frames), (size_t)keep * fbytes);
            buf_fill_zero(s, frame_at(s, s->store, o, keep), (size_t)s->p.stride_frames * fbytes);
        }
        s->count = keep;
    }
    for (int64_t o = 0; o < s->outer; o++)
        memcpy(frame_at(s, s->store, o, s->count), (const uint8_t *)x->data + (size_t)o * fbytes, fbytes);
    s->count++;
    bool full = s->count == s->p.slots;
    size_t all = (size_t)s->p.slots * fbytes;
    for (int64_t o = 0; o < s->outer; o++) {
        uint8_t *dst = (uint8_t *)y->data + (size_t)o * all;
        if (s->p.mode == BUF_BLOCKING) {
            if (full)
                memcpy(frame_at(s, s->last, o, 0), frame_at(s, s->store, o, 0), all);
            memcpy(dst, frame_at(s, s->last, o, 0), all);
        } else if (s->p.mode == BUF_LEFT || full) {
            memcpy(dst, frame_at(s, s->store, o, 0), all);
        } else { /* NON_BLOCKING_RIGHT: newest at the last slot, zeros before */
            size_t lead = (size_t)(s->p.slots - s->count) * fbytes;
            buf_fill_zero(s, dst, lead);
            memcpy(dst + lead, frame_at(s, s->store, o, 0), (size_t)s->count * fbytes);
        }
    }
    if (s->num == NUM_F16 && y->dtype == SY_DT_FLOAT32) /* storage is fp16 on the device */
        round_f16_n(y->data, sy_tensor_numel(y));
    return NULL;
}

/* ======================================================================== */
/* MaskedSoftmax                                                            */
/* ======================================================================== */
enum { MS_UNCOMPRESSED = 0, MS_COMPRESSED = 1 };

static sy_status *ms_check(const sy_node *n, int64_t *mode)
{
    const sy_tensor *x, *m;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &m));
    *mode = sy_attr_int_or(H, n, "mode", MS_UNCOMPRESSED);
    if (*mode != MS_UNCOMPRESSED && *mode != MS_COMPRESSED)
        return ERR(SY_ERR_INVALID_ARGUMENT, "MaskedSoftmax: mode = %lld must be UNCOMPRESSED=0 or COMPRESSED=1",
                   (long long)*mode);
    if (x->rank != 4)
        return ERR(SY_ERR_SHAPE, "MaskedSoftmax: input must be 4-D [batch, height, width, channel], got rank %d",
                   (int)x->rank);
    if (m->dtype != SY_DT_INT32)
        return ERR(SY_ERR_TYPE, "MaskedSoftmax: mask must be int32 (T1), got %s", sy_dt_name(m->dtype));
    if (m->rank != 2 || m->dims[0] != x->dims[0])
        return ERR(SY_ERR_SHAPE, "MaskedSoftmax: mask must be 2-D [batch = %lld, M]", (long long)x->dims[0]);
    if (*mode == MS_UNCOMPRESSED && m->dims[1] != x->dims[3])
        return ERR(SY_ERR_SHAPE, "MaskedSoftmax: UNCOMPRESSED mask needs M = channel = %lld, got %lld",
                   (long long)x->dims[3], (long long)m->dims[1]);
    if (*mode == MS_COMPRESSED && x->dims[2] != x->dims[3])
        return ERR(SY_ERR_SHAPE, "MaskedSoftmax: COMPRESSED mode needs width == channel, got %lld and %lld",
                   (long long)x->dims[2], (long long)x->dims[3]);
    return NULL;
}

static sy_status *infer_ms(sy_node *n)
{
    int64_t mode;
    SY_TRY(ms_check(n, &mode));
    if (H->node_input(n, 0)->dtype != SY_DT_FLOAT32)
        return ERR(SY_ERR_TYPE, "MaskedSoftmax: input must be float32 (T)");
    return sy_infer_like_input(H, n, 0, 0, SY_DT_UNDEFINED);
}

typedef struct ms_state {
    int64_t mode;
    num_mode num;
} ms_state;

static sy_status *ms_prepare_num(sy_node *n, void **state, num_mode num)
{
    ms_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "MaskedSoftmax: out of memory");
    sy_status *st = ms_check(n, &s->mode);
    if (st) {
        free(s);
        return st;
    }
    s->num = num;
    *state = s;
    return NULL;
}

/* softmax of x + add over one row: the sum (fp16-rounded when the target
 * stores fp16) is formed in y, then the portable kernel runs in place with
 * libm's expf and, for fp16, the output rounding as its store hook */
static void softmax_row(const float *x, const float *add, float *y, int64_t n, bool f16)
{
    for (int64_t i = 0; i < n; i++) {
        float v = x[i] + (add ? add[i] : 0.0f);
        y[i] = f16 ? sy_f16_round(v) : v;
    }
    tflk_softmax k = {.rows = 1, .depth = (int32_t)n, .beta = 1.0f, .exp_fn = expf, .store = f16 ? sy_f16_round : NULL};
    tflk_softmax_f32(&k, y, y);
}

static sy_status *ms_run(void *state, const sy_kernel_io *io)
{
    const ms_state *s = state;
    const sy_tensor *x = io->inputs[0], *m = io->inputs[1];
    sy_tensor *y = io->outputs[0];
    int64_t B = x->dims[0], Hh = x->dims[1], W = x->dims[2], C = x->dims[3], M = m->dims[1];
    const float *xd = x->data;
    const int32_t *md = m->data;
    float *yd = y->data;
    bool f16 = s->num == NUM_F16;
    float *add = io->scratch;
    if (s->mode == MS_UNCOMPRESSED) {
        for (int64_t b = 0; b < B; b++) {
            for (int64_t c = 0; c < C; c++)
                add[c] = (float)md[b * M + c];
            for (int64_t r = 0; r < Hh * W; r++) {
                int64_t o = (b * Hh * W + r) * C;
                softmax_row(xd + o, add, yd + o, C, f16);
            }
        }
        return NULL;
    }
    for (int64_t b = 0; b < B; b++) {
        int64_t total = 0;
        for (int64_t k = 0; k < M; k++) {
            if (md[b * M + k] < 0)
                return ERR(SY_ERR_INVALID_ARGUMENT, "MaskedSoftmax: COMPRESSED mask length %d is negative",
                           (int)md[b * M + k]);
            total += md[b * M + k];
        }
        if (total > C)
            return ERR(SY_ERR_INVALID_ARGUMENT,
                       "MaskedSoftmax: COMPRESSED mask lengths sum to %lld, more than channel = %lld",
                       (long long)total, (long long)C);
        for (int64_t h = 0; h < Hh; h++) {
            memset(yd + (b * Hh + h) * W * C, 0, (size_t)(W * C) * sizeof(float));
            int64_t off = 0;
            for (int64_t k = 0; k < M; k++) {
                int64_t len = md[b * M + k];
                for (int64_t w = off; w < off + len; w++) {
                    int64_t o = ((b * Hh + h) * W + w) * C + off;
                    softmax_row(xd + o, NULL, yd + o, len, f16);
                }
                off += len;
            }
        }
    }
    return NULL;
}

static sy_status *ms_prepare_scratch(sy_node *n, void **state, num_mode num)
{
    SY_TRY(ms_prepare_num(n, state, num));
    H->node_set_scratch(n, (size_t)H->node_input(n, 0)->dims[3] * sizeof(float));
    return NULL;
}
static sy_status *ms_prepare_cpu(sy_node *n, void **state) { return ms_prepare_scratch(n, state, NUM_F32); }
/* ======================================================================== */
/* StatefulGRU / StatefulLSTM                                               */
/* ======================================================================== */
typedef struct srnn_state {
    sy_rnn_cell cfg;
    int ndir;
    bool reverse;
    int64_t seq, batch;
    uint32_t reset_input; /* input index of `reset` */
    float *h, *c;         /* carried state [ndir, batch, hidden] */
    bool have_state;
    num_mode num;
} srnn_state;

static bool is_lstm(const sy_node *n) { return !strcmp(H->node_op(n), "StatefulLSTM"); }

static sy_status *srnn_read(const sy_node *n, srnn_state *s)
{
    bool lstm = is_lstm(n);
    memset(s, 0, sizeof *s);
    sy_rnn_cell_defaults(&s->cfg, lstm ? SY_RNN_LSTM : SY_RNN_GRU, 0, 0); /* ONNX default activations */
    s->reset_input = lstm ? 8 : 6;
    char dir[24];
    sy_attr_string_or(H, n, "direction", "forward", dir, sizeof dir);
    if (!strcmp(dir, "forward"))
        s->ndir = 1;
    else if (!strcmp(dir, "reverse")) {
        s->ndir = 1;
        s->reverse = true;
    } else if (!strcmp(dir, "bidirectional"))
        s->ndir = 2;
    else
        return ERR(SY_ERR_INVALID_ARGUMENT, "%s: direction must be forward, reverse or bidirectional; got \"%s\"",
                   H->node_op(n), dir);
    float clip;
    s->cfg.clip = -1.0f;
    if (H->attr_float(n, "clip", &clip)) {
        if (!(clip > 0))
            return ERR(SY_ERR_INVALID_ARGUMENT, "%s: clip must be > 0, got %g", H->node_op(n), (double)clip);
        s->cfg.clip = clip;
    }
    s->cfg.linear_before_reset = sy_attr_int_or(H, n, "linear_before_reset", 0) != 0;
    s->cfg.input_forget = sy_attr_int_or(H, n, "input_forget", 0) != 0;
    const sy_tensor *x, *w, *r;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &w));
    SY_TRY(sy_need_input(H, n, 2, &r));
    for (int i = 0; i < 3; i++) {
        const sy_tensor *t = H->node_input(n, (uint32_t)i);
        if (t->dtype != SY_DT_FLOAT32)
            return ERR(SY_ERR_TYPE, "%s: X, W and R must be float32 (T), input %d is %s", H->node_op(n), i,
                       sy_dt_name(t->dtype));
        if (t->rank != 3)
            return ERR(SY_ERR_SHAPE, "%s: X, W and R must be 3-D, input %d has rank %d", H->node_op(n), i,
                       (int)t->rank);
    }
    int64_t hs = sy_attr_int_or(H, n, "hidden_size", r->dims[2]);
    int64_t G = (int64_t)s->cfg.kind;
    s->cfg.hidden = hs;
    s->cfg.input = x->dims[2];
    s->seq = x->dims[0];
    s->batch = x->dims[1];
    if (r->dims[0] != s->ndir || r->dims[1] != G * hs || r->dims[2] != hs)
        return ERR(SY_ERR_SHAPE, "%s: R must be [%d, %lld, %lld]", H->node_op(n), s->ndir, (long long)(G * hs),
                   (long long)hs);
    if (w->dims[0] != s->ndir || w->dims[1] != G * hs || w->dims[2] != x->dims[2])
        return ERR(SY_ERR_SHAPE, "%s: W must be [%d, %lld, %lld]", H->node_op(n), s->ndir, (long long)(G * hs),
                   (long long)x->dims[2]);
    uint32_t ni = H->node_num_inputs(n);
    const sy_tensor *b = ni > 3 ? H->node_input(n, 3) : NULL;
    if (b && (b->dtype != SY_DT_FLOAT32 || b->rank != 2 || b->dims[0] != s->ndir || b->dims[1] != 2 * G * hs))
        return ERR(SY_ERR_SHAPE, "%s: B must be float32 [%d, %lld]", H->node_op(n), s->ndir, (long long)(2 * G * hs));
    const sy_tensor *sl = ni > 4 ? H->node_input(n, 4) : NULL;
    if (sl && (sl->dtype != SY_DT_INT32 || sl->rank != 1 || sl->dims[0] != s->batch))
        return ERR(SY_ERR_SHAPE, "%s: sequence_lens must be int32 [%lld] (T1)", H->node_op(n), (long long)s->batch);
    uint32_t last_state = lstm ? 7 : 6;
    for (uint32_t i = 5; i < ni && i < last_state; i++) {
        const sy_tensor *h0 = H->node_input(n, i);
        if (h0 && (h0->dtype != SY_DT_FLOAT32 || h0->rank != 3 || h0->dims[0] != s->ndir ||
                   h0->dims[1] != s->batch || h0->dims[2] != hs))
            return ERR(SY_ERR_SHAPE, "%s: input %u (initial state) must be float32 [%d, %lld, %lld]", H->node_op(n),
                       i, s->ndir, (long long)s->batch, (long long)hs);
    }
    const sy_tensor *p = lstm && ni > 7 ? H->node_input(n, 7) : NULL;
    if (p && (p->dtype != SY_DT_FLOAT32 || p->rank != 2 || p->dims[0] != s->ndir || p->dims[1] != 3 * hs))
        return ERR(SY_ERR_SHAPE, "StatefulLSTM: P must be float32 [%d, %lld]", s->ndir, (long long)(3 * hs));
    const sy_tensor *rs = ni > s->reset_input ? H->node_input(n, s->reset_input) : NULL;
    if (rs && (rs->dtype != SY_DT_BOOL || sy_tensor_numel(rs) != 1))
        return ERR(SY_ERR_TYPE, "%s: reset must be a bool scalar", H->node_op(n));
    return NULL;
}

static sy_status *infer_srnn(sy_node *n)
{
    srnn_state s;
    SY_TRY(srnn_read(n, &s));
    int64_t y[4] = {s.seq, s.ndir, s.batch, s.cfg.hidden}, yh[3] = {s.ndir, s.batch, s.cfg.hidden};
    uint32_t no = H->node_num_outputs(n);
    if (no > 0)
        SY_TRY(H->node_set_output(n, 0, SY_DT_FLOAT32, 4, y));
    for (uint32_t o = 1; o < no; o++)
        SY_TRY(H->node_set_output(n, o, SY_DT_FLOAT32, 3, yh));
    return NULL;
}

static void srnn_reset(void *state)
{
    srnn_state *s = state;
    s->have_state = false;
}

static sy_status *srnn_prepare_num(sy_node *n, void **state, num_mode num)
{
    srnn_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = srnn_read(n, s);
    if (st) {
        free(s);
        return st;
    }
    s->num = num;
    size_t nst = (size_t)(s->ndir * s->batch * s->cfg.hidden);
    s->h = calloc(nst ? nst : 1, sizeof(float));
    s->c = calloc(nst ? nst : 1, sizeof(float));
    if (!s->h || !s->c) {
        free(s->h);
        free(s->c);
        free(s);
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    }
    size_t lens = (size_t)s->batch * sizeof(int64_t);
    size_t x16 = num == NUM_F16 ? (size_t)(s->seq * s->batch * s->cfg.input) * sizeof(float) : 0;
    H->node_set_scratch(n, sy_rnn_dir_scratch_floats(&s->cfg, s->seq, s->batch) * sizeof(float) + lens + x16 + 64);
    *state = s;
    return NULL;
}

static sy_status *srnn_prepare(sy_node *n, void **state) { return srnn_prepare_num(n, state, NUM_F32); }
static sy_status *srnn_prepare_f16(sy_node *n, void **state) { return srnn_prepare_num(n, state, NUM_F16); }

static void srnn_release(void *state)
{
    srnn_state *s = state;
    if (!s)
        return;
    free(s->h);
    free(s->c);
    free(s);
}

static sy_status *srnn_run(void *state, const sy_kernel_io *io)
{
    srnn_state *s = state;
    bool lstm = s->cfg.kind == SY_RNN_LSTM;
    const sy_tensor *x = io->inputs[0], *w = io->inputs[1], *r = io->inputs[2];
#define IN(i) (io->n_inputs > (i) ? io->inputs[i] : NULL)
    const sy_tensor *tb = IN(3), *tsl = IN(4), *th0 = IN(5), *tc0 = lstm ? IN(6) : NULL, *tp = lstm ? IN(7) : NULL;
    const sy_tensor *trs = IN(s->reset_input);
#undef IN
    sy_tensor *ty = io->n_outputs > 0 ? io->outputs[0] : NULL;
    sy_tensor *tyh = io->n_outputs > 1 ? io->outputs[1] : NULL;
    sy_tensor *tyc = lstm && io->n_outputs > 2 ? io->outputs[2] : NULL;
    int64_t hd = s->cfg.hidden, G = (int64_t)s->cfg.kind, batch = s->batch, seq = s->seq;
    size_t nst = (size_t)(s->ndir * batch * hd);
    bool reset = trs && trs->data && *(const uint8_t *)trs->data;
    if (reset || !s->have_state) {
        if (th0)
            memcpy(s->h, th0->data, nst * sizeof(float));
        else
            memset(s->h, 0, nst * sizeof(float));
        if (tc0)
            memcpy(s->c, tc0->data, nst * sizeof(float));
        else
            memset(s->c, 0, nst * sizeof(float));
        if (s->num == NUM_F16) {
            round_f16_n(s->h, (int64_t)nst);
            round_f16_n(s->c, (int64_t)nst);
        }
    }
    float *scratch = io->scratch;
    int64_t *lens = (int64_t *)((uint8_t *)io->scratch +
                                sy_rnn_dir_scratch_floats(&s->cfg, seq, batch) * sizeof(float));
    const int64_t *lp = NULL;
    if (tsl) {
        for (int64_t b = 0; b < batch; b++)
            lens[b] = ((const int32_t *)tsl->data)[b];
        lp = lens;
    }
    const float *xd = x->data;
    if (s->num == NUM_F16) { /* X arrives fp16-valued from the boundary copy; weights are rounded here */
        float *x16 = (float *)(lens + batch);
        memcpy(x16, xd, (size_t)(seq * batch * s->cfg.input) * sizeof(float));
        round_f16_n(x16, seq * batch * s->cfg.input);
        xd = x16;
    }
    if (ty)
        memset(ty->data, 0, ty->nbytes);
    for (int d = 0; d < s->ndir; d++) {
        bool rev = s->reverse || d == 1;
        const float *W = (const float *)w->data + d * G * hd * s->cfg.input;
        const float *R = (const float *)r->data + d * G * hd * hd;
        const float *B = tb ? (const float *)tb->data + d * 2 * G * hd : NULL;
        const float *P = tp ? (const float *)tp->data + d * 3 * hd : NULL;
        float *y = ty ? (float *)ty->data + d * batch * hd : NULL;
        sy_rnn_dir(&s->cfg, rev, xd, seq, batch, W, R, B, P, lp, s->h + d * batch * hd, s->c + d * batch * hd, y,
                 s->ndir * batch, scratch);
    }
    if (s->num == NUM_F16) {
        round_f16_n(s->h, (int64_t)nst);
        round_f16_n(s->c, (int64_t)nst);
        if (ty)
            round_f16_n(ty->data, sy_tensor_numel(ty));
    }
    s->have_state = true;
    if (tyh)
        memcpy(tyh->data, s->h, nst * sizeof(float));
    if (tyc)
        memcpy(tyc->data, s->c, nst * sizeof(float));
    return NULL;
}

/* ======================================================================== */
/* registration                                                             */
/* ======================================================================== */
#define ATTR(n, t, req) {n, SY_ATTR_##t, req}
static const sy_attr_def a_buffer[] = {ATTR("buffer_size", INT, true), ATTR("buffer_dim", INT, true),
                                       ATTR("buffer_padding", INT, false), ATTR("stride", INT, false),
                                       ATTR("mode", INT, false)};
static const sy_attr_def a_ms[] = {ATTR("mode", INT, false)};
static const sy_attr_def a_gru[] = {ATTR("hidden_size", INT, false), ATTR("clip", FLOAT, false),
                                    ATTR("direction", STRING, false), ATTR("linear_before_reset", INT, false)};
static const sy_attr_def a_qgru[] = {ATTR("hidden_size", INT, false), ATTR("clip", FLOAT, false),
                                     ATTR("direction", STRING, false), ATTR("linear_before_reset", INT, false),
                                     ATTR("requant", STRING, false)};
static const sy_attr_def a_qlstm[] = {ATTR("hidden_size", INT, false), ATTR("clip", FLOAT, false),
                                      ATTR("direction", STRING, false), ATTR("input_forget", INT, false),
                                      ATTR("requant", STRING, false)};
static const sy_attr_def a_lstm[] = {ATTR("hidden_size", INT, false), ATTR("clip", FLOAT, false),
                                     ATTR("direction", STRING, false), ATTR("input_forget", INT, false)};

#define QS(op, mi, ma, mo, xo, attrs, infer, flags, doc)                                                           \
    {sizeof(sy_op_schema), DOMAIN, op, 1, mi, ma, 1, mo, SY_ATTRS(attrs), infer, SY_NO_INPLACE, flags, doc}
static const sy_op_schema schemas[] = {
    QS("Buffer", 1, 2, 1, 1, a_buffer, infer_buffer, SY_SCHEMA_STATEFUL,
       "accumulate frames across runs (qti_aisw block op)"),
    QS("MaskedSoftmax", 2, 2, 1, 1, a_ms, infer_ms, 0, "softmax with an uncompressed or compressed mask"),
    QS("StatefulGRU", 3, 7, 2, 2, a_gru, infer_srnn, SY_SCHEMA_STATEFUL, "GRU whose state carries across runs"),
    QS("StatefulLSTM", 3, 9, 3, 3, a_lstm, infer_srnn, SY_SCHEMA_STATEFUL, "LSTM whose state carries across runs"),
    QS("QStatefulGRU", 10, 17, 2, 2, a_qgru, qgru_infer, SY_SCHEMA_STATEFUL,
       "integer StatefulGRU (the QDQ fold of DQ -> StatefulGRU -> Q)"),
    QS("QStatefulLSTM", 18, 23, 3, 3, a_qlstm, qlstm_infer, SY_SCHEMA_STATEFUL,
       "integer StatefulLSTM (the QDQ fold of DQ -> StatefulLSTM -> Q)"),
};

#define QK(op, prov, mask, flags, prep, run, rel, rst)                                                            \
    {sizeof(sy_kernel_def), DOMAIN, op, 1, 0, prov, mask, 0, flags, NULL, prep, run, rel, rst}
#define LPAI_Q (SY_DT_BIT(SY_DT_UINT8) | SY_DT_BIT(SY_DT_INT8) | SY_DT_BIT(SY_DT_UINT16))
#define QGRU_T (SY_DT_BIT(SY_DT_UINT8) | SY_DT_BIT(SY_DT_INT8))
static const sy_kernel_def kernels[] = {
    /* cpu_ref: the fp32 reference (Buffer moves bytes of any plain dtype) */
    QK("Buffer", "cpu_ref", SY_DT_MASK_PLAIN, SY_KERNEL_STATEFUL, buf_prepare, buf_run, buf_release, buf_reset),
    QK("MaskedSoftmax", "cpu_ref", SY_DT_BIT(SY_DT_FLOAT32), 0, ms_prepare_cpu, ms_run, sy_release_free, NULL),
    QK("StatefulGRU", "cpu_ref", SY_DT_BIT(SY_DT_FLOAT32), SY_KERNEL_STATEFUL, srnn_prepare, srnn_run, srnn_release,
       srnn_reset),
    QK("StatefulLSTM", "cpu_ref", SY_DT_BIT(SY_DT_FLOAT32), SY_KERNEL_STATEFUL, srnn_prepare, srnn_run, srnn_release,
       srnn_reset),
    /* HTP (seed: CPU, LPAI, HTP for Buffer and the stateful RNNs; HTP only
     * NON_BLOCKING Buffer modes, enforced by the htp provider) */
    QK("Buffer", "htp", SY_DT_BIT(SY_DT_FLOAT32), SY_KERNEL_STATEFUL, buf_prepare_f16, buf_run, buf_release,
       buf_reset),
    QK("StatefulGRU", "htp", SY_DT_BIT(SY_DT_FLOAT32), SY_KERNEL_STATEFUL, srnn_prepare_f16, srnn_run, srnn_release,
       srnn_reset),
    QK("StatefulLSTM", "htp", SY_DT_BIT(SY_DT_FLOAT32), SY_KERNEL_STATEFUL, srnn_prepare_f16, srnn_run,
       srnn_release, srnn_reset),
    /* LPAI: quantized tensors only (the lpai provider refuses float) */
    QK("Buffer", "lpai", LPAI_Q, SY_KERNEL_STATEFUL, buf_prepare, buf_run, buf_release, buf_reset),
    /* the integer StatefulGRU / StatefulLSTM: one cell each
     * (kernels/qk_gru.c, qk_lstm.c) on cpu_ref and on LPAI, whose Gru and
     * Lstm take s8/u8 */
    QK("QStatefulGRU", "cpu_ref", QGRU_T, SY_KERNEL_STATEFUL, qgru_prepare, qgru_run, qgru_release, qgru_reset),
    QK("QStatefulGRU", "lpai", QGRU_T, SY_KERNEL_STATEFUL, qgru_prepare, qgru_run, qgru_release, qgru_reset),
    QK("QStatefulLSTM", "cpu_ref", QGRU_T, SY_KERNEL_STATEFUL, qlstm_prepare, qlstm_run, qlstm_release, qlstm_reset),
    QK("QStatefulLSTM", "lpai", QGRU_T, SY_KERNEL_STATEFUL, qlstm_prepare, qlstm_run, qlstm_release, qlstm_reset),
    /* AIC (seed: MaskedSoftmax on CPU and AIC) */
    QK("MaskedSoftmax", "aic", SY_DT_BIT(SY_DT_FLOAT32), 0, ms_prepare_cpu, ms_run, sy_release_free, NULL),
};

static sy_status *qti_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    qgru_set_host(host);
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}

static void qti_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = 0,
    .name = "qti_aisw",
    .version = "0.1.0",
    .description = "Qualcomm block ops (domain qti_aisw): Buffer, MaskedSoftmax, StatefulGRU, StatefulLSTM, QStatefulGRU, QStatefulLSTM",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = qti_init,
    .fini = qti_fini,
};

SY_PLUGIN_DEFINE(desc)
