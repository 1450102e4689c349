/*
 * The FP32 training package `switchyard codegen --train --mode fp32` writes
 * (seed 001 §4: on-device training on ws63): a float model's whole chain of
 * layers on the device, batch 1 — the forward in tflk's float kernels
 * (tflk_conv_f32 per channel for the depthwise Conv, or trk_dw_conv_in_place /
 * trk_dw_conv_s_in_place over its input, tflk_fc_f32 for Gemm,
 * tflk_unary_f32 for Abs, tflk_pad_run for Pad, tflk_strided_copy for Slice
 * and Transpose, tflk_reduce_run for ReduceSum/Mean, tflk_binary_f32 for
 * Add/Sub/Mul/Div with a constant (a Div's broadcast, either order) or of two activations, tflk_concat_run for
 * a Concat of two values; the shapes of those
 * are the request's geom, mcu_train_f32_geom.c checks and writes them),
 * the backward and the ONNX Momentum / Adam update in plugin_sdk/kernels/
 * trk.c, the very code the host trainer's `train` plugin runs. Trained
 * tensors, the optimizer state and one arena of the activations and the
 * gradients (placed on the host by lifetime: what the backward pass reads
 * outlives the forward, the gradients take the floats of what is dead by
 * then) live in RAM (static arrays);
 * frozen tensors and the
 * samples are const, in flash. The memory plan is checked against the chip
 * (or the budget asked for) before anything is written.
 *
 *   DIR/src/train.c         the layers' state and sy_train_step
 *   DIR/src/samples.c       the samples (float32) and labels (const)
 *   DIR/src/main.c          every sample once, the trained tensors printed
 *   DIR/kernels/            trk.c, trk.h, tflk.h, sy_fixedpoint.h and tflk's math, conv, fc, unary,
 *                           strided, move, reduce, fixed and binary files
 *   DIR/CMakeLists.txt, DIR/toolchain-riscv32.cmake, DIR/README.md
 *   DIR/expected_output.txt the host trainer's tensors after the same steps
 */
#include "mcu.h"
#include "mcu_train.h"
#include "mcu_train_f32_geom.h"
#include "trk.h"

#include <math.h>

#define H mcu_H
#define P mcu_tr_P

/* the memory plan of one step (batch 1), bytes */
typedef struct plan32 {
    size_t params, state;
    size_t acts, grads; /* the arena's activations alone, its gradient buffers alone (each planned by itself) */
    size_t work;        /* the arena: both placed together */
    size_t flash_frozen, samples;
    size_t peak, lower;
    int32_t first; /* the first layer with a trained tensor */
    /* one arena (floats) holds the activations and the gradients, placed by
     * lifetime in step times (layer i's forward is time i, the loss n, layer
     * j's backward 2n - j): layer i's output (not a Flatten's or an in-place
     * Relu's, which are its input's) at off[i], live from its writer to its
     * last reader, forward or backward (last[i]); the loss's gradient at
     * gloss; the input gradient layer j's backward writes out of place (h) at
     * hoff[j]; residual i's pending gradient of its other operand at gpoff[i];
     * layer j's weight-gradient row (a Gemm's output channel's, a Conv
     * channel's, an element-wise constant's) at wgoff[j]; an in-place
     * depthwise Conv's ring of input rows at lineoff[j]; -1: none */
    int64_t arena, gloss;
    int64_t *off, *last, *hoff, *gpoff, *wgoff, *lineoff;
} plan32;

/* layer i adds, subtracts, multiplies or divides two activations: its other operand is layer geom.other's
 * output (the sample for -1; its own input for x ∘ x) */
static bool residual_of(const sy_mcu_train_f32_request *r, uint32_t i)
{
    return r->geom && (mcu_f32_elt_kind(r->layers[i].kind) || r->layers[i].kind == SY_MCU_F32_CONCAT) &&
           r->geom[i].residual;
}

static int64_t numel_in(const sy_mcu_f32_layer *L) { return (int64_t)L->ic * L->ih * L->iw; }
static int64_t numel_out(const sy_mcu_f32_layer *L);

/* layer i is a Gemm whose w is [ic, oc] in the model (MatMul, transB = 0): the package holds it as
 * [oc, ic], the layout of tflk_fc_f32 and trk_fc_backward_update, and prints it back as [ic, oc]. The
 * transposition moves values only: every product and sum of the forward, the backward and the
 * element-wise update is the one it would be in the model's layout. */
static bool w_kn(const sy_mcu_train_f32_request *r, uint32_t i)
{
    return r->w_kn && r->layers[i].kind == SY_MCU_F32_GEMM && r->w_kn[i];
}


/* a residual's other operand's element count: the input's, but a Concat's output holds both */
static int64_t other_numel(const sy_mcu_train_f32_request *r, uint32_t i)
{
    const sy_mcu_f32_layer *L = &r->layers[i];
    return L->kind == SY_MCU_F32_CONCAT ? numel_out(L) - numel_in(L)
                                         : mcu_f32_other_numel(&r->geom[i], L->kind, numel_in(L));
}

/* a product's or quotient's backward reads forward values: a product both operands (each one's gradient is
 * dy times the other), a quotient its divisor and its own output (the host's −(dy·y)/b); the layers whose
 * output buffers those are (buf_of's indices: -1 the sample), up to 2; returns how many */
static int residual_reads(const sy_mcu_train_f32_request *r, int32_t j, int32_t *reads);
static int64_t numel_out(const sy_mcu_f32_layer *L) { return (int64_t)L->oc * L->oh * L->ow; }

/* a depthwise Conv's stride on axis 2 (H) or 3 (W): geom.step's (0, or no geom: 1) */
static int32_t conv_stride(const sy_mcu_train_f32_request *r, uint32_t i, int32_t axis)
{
    return r->geom && r->geom[i].step[axis] > 0 ? r->geom[i].step[axis] : 1;
}

/* an in-place Conv whose output plane is smaller than its input's (strides, or no pads): written by
 * trk_dw_conv_s_in_place; one of its shape by trk_dw_conv_in_place */
static bool conv_shrinks(const sy_mcu_train_f32_request *r, uint32_t i)
{
    const sy_mcu_f32_layer *L = &r->layers[i];
    return L->oh != L->ih || L->ow != L->iw || conv_stride(r, i, 2) != 1 || conv_stride(r, i, 3) != 1;
}

/* the floats of an in-place Conv's ring: pt + 1 rows (its shape), or the rows trk_dw_conv_ring_rows
 * counts and a line of the output (smaller) */
static int64_t conv_ring_floats(const sy_mcu_train_f32_request *r, uint32_t i)
{
    const sy_mcu_f32_layer *L = &r->layers[i];
    if (!conv_shrinks(r, i))
        return (int64_t)(L->pt + 1) * L->iw;
    return (int64_t)trk_dw_conv_ring_rows(L->ic, L->ih, L->iw, conv_stride(r, i, 2), L->pt, L->oh, L->ow) * L->iw +
           L->ow;
}

/* each with b, the buffer of layer i − 1's output (buf_of(r, i − 1)) */
static bool relu_in_place_b(const sy_mcu_train_f32_request *r, int32_t i, int32_t b);
static bool conv_in_place_b(const sy_mcu_train_f32_request *r, int32_t i, int32_t b);
static bool concat_in_place_b(const sy_mcu_train_f32_request *r, int32_t i, int32_t b);

/* the buffer layer i's output is in (a Flatten's, an in-place Relu's and an
 * in-place Conv's are their input's, an in-place Concat(self)'s starts with
 * its input): the index of the layer that wrote it, -1 for the sample (in
 * flash) */
static int32_t buf_of(const sy_mcu_train_f32_request *r, int32_t i)
{
    /* forward from the sample: whether layer k writes over its input
     * depends on the buffer its input is in, known by then; walking back
     * from i instead asked the same of every earlier layer again at each
     * step, 2^n predicate calls over a run of n in-place layers */
    int32_t b = -1;
    for (int32_t k = 0; k <= i; k++)
        if (!(r->layers[k].kind == SY_MCU_F32_FLATTEN || relu_in_place_b(r, k, b) || conv_in_place_b(r, k, b) ||
              concat_in_place_b(r, k, b)))
            b = k;
    return b;
}

static bool relu_in_place(const sy_mcu_train_f32_request *r, int32_t i)
{
    return i >= 1 && relu_in_place_b(r, i, buf_of(r, i - 1));
}
static bool conv_in_place(const sy_mcu_train_f32_request *r, int32_t i)
{
    return i >= 1 && conv_in_place_b(r, i, buf_of(r, i - 1));
}
static bool concat_in_place(const sy_mcu_train_f32_request *r, int32_t i)
{
    return i >= 1 && concat_in_place_b(r, i, buf_of(r, i - 1));
}

/* the first layer with a trained tensor, the lowest whose backward runs; -1: none */
static int32_t first_trained(const sy_mcu_train_f32_request *r)
{
    for (uint32_t i = 0; i < r->n_layers; i++)
        if (r->layers[i].train_w || r->layers[i].train_b)
            return (int32_t)i;
    return -1;
}

/* Layer i may write its output over its input's buffer (a Conv's, a
 * Concat(self)'s below) when no one reads the input after layer i's
 * forward but layer i's own backward:
 *   - the input is an activation, not the sample (in flash, const);
 *   - no residual, product, quotient or Concat takes the input's buffer
 *     (the value in it or a Flatten of it) as its other operand;
 *   - the layer that wrote the buffer is not a quotient of two activations
 *     or a constant's c / x (their backwards read their own output);
 *   - no Relu sharing the buffer (its writer, or in place over it between
 *     its writer and layer i) has a backward: that backward reads its mask
 *     from it.
 * Within those the buffer's last readers are layer i's forward and
 * backward, so the floats are layer i's to overwrite, and its output
 * stays in the buffer for its own readers (a Relu after it may be in
 * place too). */
/* the first three of those: no forward after layer i reads buffer b
 * (layer i − 1's output is in it), nor a backward but a Relu's */
static bool input_unread_after(const sy_mcu_train_f32_request *r, int32_t i, int32_t b)
{
    if (i < 1 || b < 0 ||
        (r->geom && r->layers[b].kind == SY_MCU_F32_DIV && (r->geom[b].residual || r->geom[b].const_first)))
        return false;
    for (uint32_t k = 0; k < r->n_layers; k++)
        if (residual_of(r, k) && r->geom[k].other >= b && r->geom[k].other < i)
            return false;
    return true;
}

static bool input_dead_after(const sy_mcu_train_f32_request *r, int32_t i, int32_t b)
{
    if (!input_unread_after(r, i, b))
        return false;
    const int32_t first = first_trained(r);
    for (int32_t k = b; k < i; k++) /* its writer, then Flattens and in-place layers: the buffer's */
        if (r->layers[k].kind == SY_MCU_F32_RELU && first >= 0 && k >= first)
            return false;
    return true;
}

/* Depthwise Conv i writes its output over its input (trk_dw_conv_in_place,
 * a ring of pt + 1 input rows in the arena, live during its forward) when
 * the output has the input's shape (stride 1; pads summing to kh − 1 and
 * kw − 1), or (trk_dw_conv_s_in_place: a line of the output and the input
 * rows trk_dw_conv_ring_rows counts) when its output plane is no larger
 * than its input's (a stride 2 of a frozen front, or no pads) and that
 * output dies in the forward (shrink_pays); its weights
 * are frozen — a trained Conv's weight
 * gradient reads its input (trk_conv_grad's dW = dY·X); a frozen one's
 * backward reads only dy and W (its x is NULL) — and its input is dead
 * after its forward (input_dead_after). */
/* a Conv of a smaller output over its input keeps its input's block, the
 * larger, for as long as its output (or a value over it) lives: that pays
 * only when that output dies in the forward. The layers after Conv i while
 * the values stay in its buffer (Flattens, Relus without a backward), then
 * the first layer writing elsewhere: none is another layer's other operand,
 * no Relu among them has a backward (it reads its mask there), and the
 * writer's backward, if it runs, reads no input (a trained Gemm's, an
 * Abs's, a Mul's or Div's do); a Concat or Conv next (it might run over the
 * same buffer) ends it too. Decided by kinds alone: buf_of asks
 * conv_in_place_b, so this must not ask buf_of. */
static bool backward_reads(const sy_mcu_f32_layer *L);
static bool shrink_pays(const sy_mcu_train_f32_request *r, int32_t i)
{
    const int32_t first = first_trained(r);
    for (int32_t k = i + 1; k < (int32_t)r->n_layers; k++) {
        for (int32_t m = k; m < (int32_t)r->n_layers; m++)
            if (residual_of(r, (uint32_t)m) && r->geom[m].other >= i && r->geom[m].other < k)
                return false;
        const sy_mcu_f32_layer *L = &r->layers[k];
        const bool back = first >= 0 && k >= first;
        if (L->kind == SY_MCU_F32_FLATTEN || (L->kind == SY_MCU_F32_RELU && !back))
            continue;
        if (L->kind == SY_MCU_F32_RELU || L->kind == SY_MCU_F32_CONCAT_SELF || L->kind == SY_MCU_F32_CONCAT ||
            L->kind == SY_MCU_F32_CONV_DW)
            return false;
        return !back || !(backward_reads(L) || L->kind == SY_MCU_F32_MUL || L->kind == SY_MCU_F32_DIV);
    }
    return false;
}

static bool conv_in_place_b(const sy_mcu_train_f32_request *r, int32_t i, int32_t b)
{
    if (i < 1 || r->layers[i].kind != SY_MCU_F32_CONV_DW)
        return false;
    const sy_mcu_f32_layer *L = &r->layers[i];
    return !L->train_w && L->oc == L->ic &&
           (!conv_shrinks(r, (uint32_t)i) || ((int64_t)L->oh * L->ow <= (int64_t)L->ih * L->iw && shrink_pays(r, i))) &&
           input_dead_after(r, i, b);
}

/* A Concat of a value with itself, [x, x] (batch 1: the halves follow each
 * other), takes its input's buffer as its first half when the input is dead
 * after its forward (input_dead_after; its backward reads dy only): the
 * input's writer writes into the output's block, whose size is then the
 * largest of the values it holds (place_arena), and the forward copies the
 * first half into the second, one copy where there were two. A Concat of
 * two values likewise takes its input's buffer when the input is dead after
 * its forward (trk_concat_in_place: the input's rows moved apart to their
 * places, the other's copied between them; any axis, either order): the
 * other operand is elsewhere — input_dead_after holds only when no layer
 * from the input buffer's writer on is a residual's other operand, the
 * Concat's own among them, so the other's buffer was written before it
 * (and is live through this forward: the planner keeps the two apart). */
static bool concat_in_place_b(const sy_mcu_train_f32_request *r, int32_t i, int32_t b)
{
    return i >= 1 &&
           (r->layers[i].kind == SY_MCU_F32_CONCAT_SELF ||
            (r->layers[i].kind == SY_MCU_F32_CONCAT && residual_of(r, (uint32_t)i))) &&
           input_dead_after(r, i, b);
}

/* Relu i writes its output over its input when nothing reads the input
 * after the Relu's forward: the input is an activation (not the sample in
 * flash), no residual, product, quotient or Concat takes it (or a Flatten
 * of it) as its other operand, and the layer that wrote it is not a
 * quotient of two activations or a constant's c / x (whose backwards read
 * their own output). The Relu's backward reads
 * its output instead: y > 0 exactly where x > 0 (a NaN or -0 gives y = 0,
 * and neither is > 0), so the mask, and every bit after it, is the host's. */
static bool relu_in_place_b(const sy_mcu_train_f32_request *r, int32_t i, int32_t b)
{
    return r->layers[i].kind == SY_MCU_F32_RELU && input_unread_after(r, i, b);
}

/* what layer j's backward reads of its input: an Abs's input for the sign, a
 * Mul's for its trained constant's gradient, a
 * trained layer's input for its weight gradient (trk_fc_backward_update and
 * trk_conv_grad read x only then); a Relu's backward reads its output */
static bool backward_reads(const sy_mcu_f32_layer *L)
{
    return L->kind == SY_MCU_F32_ABS || (L->kind == SY_MCU_F32_MUL && L->train_w) ||
           ((L->kind == SY_MCU_F32_GEMM || L->kind == SY_MCU_F32_CONV_DW) && L->train_w);
}

/* layer j's backward writes its input's gradient into a buffer of its own
 * (h, then swapped into g): a Gemm's, a Conv's, a Concat's and a shape
 * layer's (Pad, Slice, Transpose, the reductions) change the layout; a
 * Relu's, an Abs's and an element-wise layer's write it over dy, and a
 * Flatten has nothing to do. The first trained layer's is not wanted. */
static bool grad_out_of_place(const sy_mcu_train_f32_request *r, const plan32 *p, int32_t j)
{
    switch (r->layers[j].kind) {
    case SY_MCU_F32_GEMM:
    case SY_MCU_F32_CONV_DW:
    case SY_MCU_F32_CONCAT_SELF:
        return j > p->first;
    case SY_MCU_F32_CONCAT:
    case SY_MCU_F32_PAD:
    case SY_MCU_F32_SLICE:
    case SY_MCU_F32_TRANSPOSE:
    case SY_MCU_F32_REDUCE_SUM:
    case SY_MCU_F32_REDUCE_MEAN:
        return true;
    case SY_MCU_F32_DIV: /* an input stretched by broadcasting: its gradient is a sum, smaller than dy;
                          * two activations broadcast: trk_div_bcast_grad writes it apart from dy */
        return r->geom && (mcu_f32_div_stretched(&r->geom[j], SY_MCU_F32_DIV) ||
                           mcu_f32_div2_bcast(&r->geom[j], SY_MCU_F32_DIV));
    default:
        return false;
    }
}

/* the floats of layer j's weight-gradient row, 0 for none: a Gemm's output
 * channel's [ic] and a depthwise Conv channel's [kh·kw] (each updated before
 * the next is formed), an element-wise layer's trained constant */
static int64_t wgrad_numel(const sy_mcu_f32_layer *L)
{
    if (!L->train_w)
        return 0;
    if (L->kind == SY_MCU_F32_GEMM)
        return L->ic;
    if (L->kind == SY_MCU_F32_CONV_DW)
        return (int64_t)L->kh * L->kw;
    return mcu_f32_elt_kind(L->kind) ? L->w_numel : 0;
}

/* Lifetime-based placement of the activations and the gradients in one
 * arena, first fit in decreasing size: a buffer may take any bytes whose
 * previous holder is dead by the time it is written. A layer's input stays
 * live through the layer's own forward, so no kernel writes over what it
 * reads; outputs of a frozen front nobody reads in the backward die at the
 * next layer and the front runs ping-pong. The backward runs after the
 * loss: an activation kept for it dies with the last backward reading it,
 * and the gradients born later take its floats (Lin et al.'s Tiny Training
 * Engine plans the backward's buffers the same way). Sizes are static: the
 * plan is the host's, made by the core's planner (the rule that places a
 * session's arena). */
static sy_status *place_arena(const sy_mcu_train_f32_request *r, plan32 *p)
{
    const int32_t n = (int32_t)r->n_layers;
    for (int32_t i = 0; i < n; i++)
        p->last[i] = i;
    for (int32_t i = 1; i < n; i++) {
        int32_t b = buf_of(r, i - 1);
        if (b >= 0 && p->last[b] < i)
            p->last[b] = i;
        /* a residual's other operand is read by its forward too */
        b = residual_of(r, (uint32_t)i) ? buf_of(r, r->geom[i].other) : -1;
        if (b >= 0 && p->last[b] < i)
            p->last[b] = i;
    }
    int32_t lb = buf_of(r, n - 1); /* the logits, read by the loss at time n */
    if (lb >= 0 && p->last[lb] < n)
        p->last[lb] = n;
    for (int32_t j = n - 1; j >= (p->first < 0 ? 0 : p->first); j--) {
        int32_t b = buf_of(r, j - 1);
        if (b >= 0 && backward_reads(&r->layers[j]) && p->last[b] < 2 * n - j)
            p->last[b] = 2 * (int64_t)n - j;
        /* a Relu's backward reads its own output, the mask */
        b = r->layers[j].kind == SY_MCU_F32_RELU ? buf_of(r, j) : -1;
        if (b >= 0 && p->last[b] < 2 * n - j)
            p->last[b] = 2 * (int64_t)n - j;
        int32_t rd[2];
        for (int k = residual_reads(r, j, rd); k-- > 0;)
            if (rd[k] >= 0 && p->last[rd[k]] < 2 * n - j)
                p->last[rd[k]] = 2 * (int64_t)n - j;
    }
    /* the core's planner places them (sy_host_api.plan_blocks, refused
     * without it: mcu_tr_plan_blocks): the rule of a session's arena, in
     * floats, a Flatten's output being its input's */
    /* at most n activations, n + 1 carried gradients, n pending ones, n rows and n rings */
    const size_t cap = 5 * (size_t)r->n_layers + 1;
    sy_plan_block *blk = calloc(cap, sizeof *blk);
    int64_t **dst = calloc(cap, sizeof *dst); /* where each block's offset goes */
    if (!blk || !dst) {
        free(blk);
        free(dst);
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "codegen --train --mode fp32: out of memory planning %d layers", n);
    }
    uint32_t nb = 0;
    for (int32_t i = 0; i < n; i++) {
        p->off[i] = p->hoff[i] = p->gpoff[i] = p->wgoff[i] = p->lineoff[i] = -1;
        /* an in-place Conv's ring: the input rows its later output rows read, during its forward only */
        if (conv_in_place(r, i)) {
            dst[nb] = &p->lineoff[i];
            blk[nb++] = (sy_plan_block){(uint64_t)conv_ring_floats(r, (uint32_t)i), i, i, 0};
        }
        if (buf_of(r, i) != i) /* a Flatten, an in-place Relu, Conv or Concat(self): its input's buffer */
            continue;
        /* the buffer holds every value in place over it: an in-place Concat(self)'s is twice its input */
        int64_t size = numel_out(&r->layers[i]);
        for (int32_t k = i + 1; k < n && buf_of(r, k) == i; k++)
            if (numel_out(&r->layers[k]) > size)
                size = numel_out(&r->layers[k]);
        dst[nb] = &p->off[i];
        blk[nb++] = (sy_plan_block){(uint64_t)size, i, p->last[i], 0};
    }
    const uint32_t na = nb;
    p->gloss = -1;
    if (p->first >= 0) {
        const int64_t T = 2 * (int64_t)n;
        /* the gradient the backward carries down (g): the loss writes it at
         * time n; a layer writing its input's gradient out of place reads it
         * last and starts the next one, the in-place layers keep it */
        int64_t *at = &p->gloss, from = n, size = numel_out(&r->layers[n - 1]);
        for (int32_t j = n - 1; j >= p->first; j--) {
            const sy_mcu_f32_layer *L = &r->layers[j];
            if (numel_out(L) > size)
                size = numel_out(L);
            if (grad_out_of_place(r, p, j)) {
                dst[nb] = at;
                blk[nb++] = (sy_plan_block){(uint64_t)size, from, T - j, 0};
                at = &p->hoff[j], from = T - j, size = numel_in(L);
            } else if (numel_in(L) > size)
                size = numel_in(L);
            /* a weight gradient is formed and applied within its layer's backward */
            if (wgrad_numel(L)) {
                dst[nb] = &p->wgoff[j];
                blk[nb++] = (sy_plan_block){(uint64_t)wgrad_numel(L), T - j, T - j, 0};
            }
        }
        dst[nb] = at;
        blk[nb++] = (sy_plan_block){(uint64_t)size, from, T - p->first, 0};
        /* a residual's other operand's gradient: written by the residual's
         * backward, added into the carried one (in place, trk_grad_add) when
         * the backward reaches that operand's layer */
        for (int32_t i = 0; i < n; i++)
            if (residual_of(r, (uint32_t)i) && r->geom[i].other >= p->first) {
                dst[nb] = &p->gpoff[i];
                blk[nb++] = (sy_plan_block){(uint64_t)other_numel(r, (uint32_t)i), T - i, T - r->geom[i].other, 0};
            }
    }
    /* the activations alone and the gradients alone, for the summary's
     * figures, then both together: the plan the package uses */
    uint64_t acts = 0, grads = 0, arena = 0, lower = 0;
    sy_status *st = mcu_tr_plan_blocks("codegen --train --mode fp32", blk, na, 1, &acts, NULL);
    if (!st)
        st = H->plan_blocks(blk + na, nb - na, 1, &grads, NULL);
    if (!st)
        st = H->plan_blocks(blk, nb, 1, &arena, &lower);
    for (uint32_t k = 0; !st && k < nb; k++)
        *dst[k] = (int64_t)blk[k].offset;
    p->acts = 4 * (size_t)acts;
    p->grads = 4 * (size_t)grads;
    p->arena = (int64_t)arena;
    p->work = 4 * (size_t)arena;
    p->lower = 4 * (size_t)lower;
    free(blk);
    free(dst);
    return st;
}

static int residual_reads(const sy_mcu_train_f32_request *r, int32_t j, int32_t *reads)
{
    if (r->geom && r->layers[j].kind == SY_MCU_F32_DIV && !r->geom[j].residual && r->geom[j].const_first) {
        reads[0] = buf_of(r, j - 1), reads[1] = j; /* c / x: its divisor, the input, and its output */
        return 2;
    }
    if (!residual_of(r, (uint32_t)j))
        return 0;
    const int32_t in = buf_of(r, j - 1), oth = buf_of(r, r->geom[j].other);
    switch (r->layers[j].kind) {
    case SY_MCU_F32_MUL:
        reads[0] = in, reads[1] = oth;
        return 2;
    case SY_MCU_F32_DIV: /* const_first: y = other / input */
        reads[0] = r->geom[j].const_first ? in : oth, reads[1] = j;
        return 2;
    default: /* Add, Sub: dy passed on */
        return 0;
    }
}

/* plan: 6 · n_layers entries, the arena's offsets and lifetimes (plan32's off, last, hoff, gpoff, wgoff, lineoff) */
static sy_status *plan_of(const sy_mcu_train_f32_request *r, plan32 *p, int64_t *plan)
{
    const size_t n = r->n_layers;
    memset(p, 0, sizeof *p);
    p->off = plan, p->last = plan + n, p->hoff = plan + 2 * n, p->gpoff = plan + 3 * n, p->wgoff = plan + 4 * n;
    p->lineoff = plan + 5 * n;
    const int groups = r->optimizer == 1 ? 2 : 1;
    p->first = -1;
    for (uint32_t i = 0; i < r->n_layers; i++) {
        const sy_mcu_f32_layer *L = &r->layers[i];
        if (p->first < 0 && (L->train_w || L->train_b))
            p->first = (int32_t)i;
        size_t tw = L->train_w ? (size_t)L->w_numel : 0, tb = L->train_b ? (size_t)L->b_numel : 0;
        p->params += 4 * (tw + tb);
        p->state += 4 * (size_t)groups * (tw + tb);
        p->flash_frozen += 4 * ((L->w && !L->train_w ? (size_t)L->w_numel : 0) + (L->b && !L->train_b ? (size_t)L->b_numel : 0));
    }
    p->samples = (size_t)r->n_samples * (4 * (size_t)r->sample_numel + 4);
    SY_TRY(place_arena(r, p));
    /* the lower bound: the most floats live at one time (whatever the
     * placement, those exist together; the sample itself is in flash) */
    p->peak = p->params + p->state + p->work;
    p->lower += p->params + p->state;
    return NULL;
}

/* a float as a C99 hexadecimal literal: the exact value */
static void hexf(tout *o, float v) { P(o, "%af", (double)v); }

static void arr_f(tout *o, const char *qual, const char *sym, const float *v, size_t n)
{
    P(o, "%sfloat %s[%zu] = {", qual, sym, n);
    for (size_t i = 0; i < n; i++) {
        P(o, "%s", i % 6 ? " " : "\n   ");
        hexf(o, v[i]);
        P(o, ",");
    }
    P(o, "\n};\n");
}

/* v [rows, cols] as the array of its transpose [cols, rows] */
static void arr_ft(tout *o, const char *qual, const char *sym, const float *v, int32_t rows, int32_t cols)
{
    P(o, "%sfloat %s[%lld] = {", qual, sym, (long long)rows * cols);
    for (int64_t i = 0; i < (int64_t)rows * cols; i++) {
        P(o, "%s", i % 6 ? " " : "\n   ");
        hexf(o, v[i % rows * cols + i / rows]);
        P(o, ",");
    }
    P(o, "\n};\n");
}

static bool all_finite(const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return false;
    return true;
}

/* the buffer holding layer i's output ("x" before layer 0; a Flatten's is its input's) */
static void out_name(const sy_mcu_train_f32_request *r, int32_t i, char *buf, size_t n)
{
    i = buf_of(r, i);
    if (i < 0)
        snprintf(buf, n, "x");
    else
        snprintf(buf, n, "a%d", (int)i);
}

static sy_status *write_train_c(const mcu_chip *chip, const sy_mcu_train_f32_request *r, const plan32 *p)
{
    tout o;
    SY_TRY(mcu_tr_topen(r->dir, "src/train.c", &o));
    const bool adam = r->optimizer == 1;
    P(&o, "/* Generated by switchyard codegen --train --mode fp32 from %s for %s: do not edit.\n"
          " * FP32 steps (batch 1) of %u layers, %s: the forward in tflk's float kernels, the backward\n"
          " * and the update in trk.c, the host trainer's code. */\n",
      r->model_name, chip->name, r->n_layers, adam ? "ONNX Adam" : "ONNX Momentum");
    P(&o, "#include \"sy_train.h\"\n\n#include \"tflk.h\"\n#include \"trk.h\"\n\n#include <math.h>\n#include <string.h>\n\n");
    const int groups = adam ? 2 : 1;
    P(&o, "/* every activation, placed by lifetime on the host: an output reuses the floats of the ones\n"
          " * dead when it is written; what the backward reads stays until then */\n"
          "static float sy_act[%lld];\n\n",
      (long long)p->arena);
    for (uint32_t i = 0; i < r->n_layers; i++) {
        const sy_mcu_f32_layer *L = &r->layers[i];
        static const char *kinds[] = {"",
                                      "depthwise Conv",
                                      "Relu",
                                      "Flatten (a reshape)",
                                      "Concat (self)",
                                      "Gemm",
                                      "Abs",
                                      "Pad (constant)",
                                      "Slice",
                                      "Transpose",
                                      "ReduceSum",
                                      "ReduceMean",
                                      "Add (a constant or a residual)",
                                      "Sub (a constant or a residual)",
                                      "Mul (a constant or two activations)",
                                      "Div (by or of a constant or of two activations, broadcast)",
                                      "Concat (two values)"};
        P(&o, "/* layer %u: %s [%d, %d, %d] -> [%d, %d, %d] */\n", i, kinds[L->kind], L->ic, L->ih, L->iw, L->oc,
          L->oh, L->ow);
        char sym[32];
        if (L->w && w_kn(r, i)) {
            P(&o, "/* B [%d, %d] in the model, held transposed [%d, %d] (tflk_fc_f32's layout) */\n", L->ic, L->oc,
              L->oc, L->ic);
            snprintf(sym, sizeof sym, "w%u", i);
            arr_ft(&o, L->train_w ? "static " : "static const ", sym, L->w, L->ic, L->oc);
        } else if (L->w) {
            snprintf(sym, sizeof sym, "w%u", i);
            arr_f(&o, L->train_w ? "static " : "static const ", sym, L->w, (size_t)L->w_numel);
        }
        if (L->w) {
            if (L->train_w)
                for (int g = 0; g < groups; g++)
                    P(&o, "static float w%u_s%d[%d];\n", i, g + 1, L->w_numel);
        }
        if (L->b) {
            snprintf(sym, sizeof sym, "b%u", i);
            arr_f(&o, L->train_b ? "static " : "static const ", sym, L->b, (size_t)L->b_numel);
            if (L->train_b)
                for (int g = 0; g < groups; g++)
                    P(&o, "static float b%u_s%d[%d];\n", i, g + 1, L->b_numel);
        }
        if (relu_in_place(r, (int32_t)i) || conv_in_place(r, (int32_t)i))
            P(&o, "/* its output: in place over its input, layer %d's buffer */\n", (int)buf_of(r, (int32_t)i));
        else if (concat_in_place(r, (int32_t)i))
            P(&o, "/* its output: layer %d's buffer, %s */\n", (int)buf_of(r, (int32_t)i),
              L->kind == SY_MCU_F32_CONCAT ? "its input's rows moved apart in it" : "its input the first half");
        else if (L->kind != SY_MCU_F32_FLATTEN)
            P(&o, "/* its output: %lld floats of the arena, live to time %lld (forward i = layer i, loss %u, "
                  "backward of j = %u - j) */\nstatic float *const a%u = sy_act + %lld;\n",
              (long long)numel_out(L), (long long)p->last[i], r->n_layers, 2 * r->n_layers, i, (long long)p->off[i]);
        if (conv_in_place(r, (int32_t)i) && !conv_shrinks(r, i))
            P(&o, "/* the input rows its output rows still read once theirs are overwritten: %d rows of %d "
                  "floats of the arena, live in its forward only */\nstatic float *const ring%u = sy_act + %lld;\n",
              L->pt + 1, L->iw, i, (long long)p->lineoff[i]);
        else if (conv_in_place(r, (int32_t)i))
            P(&o, "/* the input rows later output rows still read once an output row's place reaches them (%d "
                  "rows of %d floats) and a line of the output (%d floats): %lld floats of the arena, live in its "
                  "forward only */\nstatic float *const ring%u = sy_act + %lld;\n",
              (int)((conv_ring_floats(r, i) - L->ow) / L->iw), L->iw, L->ow, (long long)conv_ring_floats(r, i), i,
              (long long)p->lineoff[i]);
        if (L->kind == SY_MCU_F32_CONV_DW) {
            if (!conv_in_place(r, (int32_t)i))
                P(&o, "/* one channel: NCHW's plane is NHWC with C = 1 */\n"
                  "static const tflk_conv cv%u = {.n = 1, .ih = %d, .iw = %d, .ic = 1, .oh = %d, .ow = %d, .oc = 1, "
                  ".kh = %d, .kw = %d, .fic = 1, .depthwise = 1,\n    .sh = %d, .sw = %d, .dh = 1, .dw = 1, .pt = %d, "
                  ".pl = %d, .act = {0, -INFINITY, INFINITY}};\n",
              i, L->ih, L->iw, L->oh, L->ow, L->kh, L->kw, conv_stride(r, i, 2), conv_stride(r, i, 3), L->pt, L->pl);
            /* trained, the backward runs one channel at a time (its weight gradient then its step) */
            if ((int32_t)i >= p->first)
                P(&o, "static const trk_conv tc%u = {.n = 1, .c_in = %d, .ih = %d, .iw = %d, .m = %d, .cg = 1, .kh = %d, "
                  ".kw = %d, .oh = %d, .ow = %d,\n    .group = %d, .s = {1, 1}, .p = {%d, %d}, .d = {1, 1}};\n",
              i, L->train_w ? 1 : L->ic, L->ih, L->iw, L->train_w ? 1 : L->oc, L->kh, L->kw, L->oh, L->ow,
              L->train_w ? 1 : L->ic, L->pt, L->pl);
        }
        /* an in-place Concat of two values needs no tflk_concat descriptor (its call takes the rows) */
        if (mcu_f32_geom_kind(L->kind) && !(L->kind == SY_MCU_F32_CONCAT && concat_in_place(r, (int32_t)i)))
            mcu_f32_geom_decl(&o, L->kind, &r->geom[i], i, (int32_t)i > p->first);
        if (p->gpoff[i] >= 0)
            P(&o, "/* the gradient of its other operand, layer %d's output, until the backward reaches it: %lld "
                  "floats of the arena */\nstatic float *const gp%u = sy_act + %lld;\n",
              (int)r->geom[i].other, (long long)other_numel(r, i), i, (long long)p->gpoff[i]);
        if (p->wgoff[i] >= 0)
            P(&o, "/* %s weight gradient, %lld floats of the arena: the update is in place */\n"
                  "static float *const %s%u = sy_act + %lld;\n",
              L->kind == SY_MCU_F32_GEMM ? "one output channel's" : L->kind == SY_MCU_F32_CONV_DW ? "one channel's"
                                                                                                 : "its constant's",
              (long long)wgrad_numel(L), L->kind == SY_MCU_F32_GEMM ? "row" : "gw", i, (long long)p->wgoff[i]);
        if (L->kind == SY_MCU_F32_GEMM)
            P(&o, "static const tflk_fc fc%u = {.batches = 1, .units = %d, .depth = %d, .act = {0, -INFINITY, "
                  "INFINITY}};\n",
              i, L->oc, L->ic);
        P(&o, "\n");
    }
    const sy_mcu_f32_layer *last = &r->layers[r->n_layers - 1];
    P(&o, "\nint sy_train_step(const float *x, int32_t label, int64_t t, float lr)\n{\n"
          "    trk_opt o = {.kind = %s, .alpha = ",
      adam ? "TRK_ADAM" : "TRK_MOMENTUM");
    hexf(&o, r->alpha);
    P(&o, ", .beta = ");
    hexf(&o, r->beta);
    P(&o, ", .epsilon = ");
    hexf(&o, r->epsilon);
    P(&o, ", .norm = ");
    hexf(&o, r->norm);
    P(&o, ", .nesterov = %d};\n", r->nesterov);
    if (adam && r->rates)
        P(&o, "    o.r = sy_train_rates[t - 1];\n    (void)lr;\n");
    else if (adam)
        P(&o, "    o.r = trk_adam_rate(lr, o.alpha, o.beta, t);\n");
    else
        P(&o, "    o.r = lr;\n    if (t <= 0)\n        o.beta = 1.0f;\n");
    /* g: the gradient of the output of the layer the backward is at, from the
     * loss's down; h: where a layer's input gradient goes when it is not
     * formed over g (each such buffer placed in the arena by lifetime) */
    P(&o, "    int64_t lab = label;\n    float *g = sy_act + %lld, *h = NULL, *sw;\n    (void)h;\n    (void)sw;\n",
      (long long)p->gloss);
    char in[16], out[16], bsym[16];
    for (uint32_t i = 0; i < r->n_layers; i++) {
        const sy_mcu_f32_layer *L = &r->layers[i];
        out_name(r, (int32_t)i - 1, in, sizeof in);
        switch (L->kind) {
        case SY_MCU_F32_CONV_DW:
            if (conv_in_place(r, (int32_t)i) && conv_shrinks(r, i)) { /* a smaller plane, over its input */
                P(&o, "    trk_dw_conv_s_in_place(%d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, w%u, %s, ring%u, %d);\n",
                  L->ic, L->ih, L->iw, L->kh, L->kw, conv_stride(r, i, 2), conv_stride(r, i, 3), L->pt, L->pl, L->oh,
                  L->ow, i, in, i, (int)((conv_ring_floats(r, i) - L->ow) / L->iw));
                break;
            }
            if (conv_in_place(r, (int32_t)i)) { /* the same sums as tflk_conv_f32's, over its input */
                P(&o, "    trk_dw_conv_in_place(%d, %d, %d, %d, %d, %d, %d, w%u, %s, ring%u);\n", L->ic, L->ih, L->iw,
                  L->kh, L->kw, L->pt, L->pl, i, in, i);
                break;
            }
            P(&o, "    for (int c = 0; c < %d; c++)\n        tflk_conv_f32(&cv%u, %s + c * %d, w%u + c * %d, NULL, "
                  "a%u + c * %d);\n",
              L->ic, i, in, L->ih * L->iw, i, L->kh * L->kw, i, L->oh * L->ow);
            break;
        case SY_MCU_F32_RELU:
            out_name(r, (int32_t)i, out, sizeof out);
            P(&o, "    trk_relu(%lld, %s, %s);\n", (long long)numel_in(L), in, out);
            break;
        case SY_MCU_F32_CONCAT_SELF:
            if (concat_in_place(r, (int32_t)i)) { /* the first half is the input */
                P(&o, "    memcpy(%s + %lld, %s, %lld);\n", in, (long long)numel_in(L), in, (long long)numel_in(L) * 4);
                break;
            }
            P(&o, "    memcpy(a%u, %s, %lld);\n    memcpy(a%u + %lld, %s, %lld);\n", i, in,
              (long long)numel_in(L) * 4, i, (long long)numel_in(L), in, (long long)numel_in(L) * 4);
            break;
        case SY_MCU_F32_GEMM:
            snprintf(bsym, sizeof bsym, L->b ? "b%u" : "NULL", i);
            P(&o, "    tflk_fc_f32(&fc%u, %s, w%u, %s, a%u);\n", i, in, i, bsym, i);
            break;
        case SY_MCU_F32_FLATTEN: /* the same values */
            break;
        case SY_MCU_F32_CONCAT: {
            char oth[16];
            out_name(r, r->geom[i].other, oth, sizeof oth);
            mcu_f32_concat_forward(&o, &r->geom[i], i, in, oth, concat_in_place(r, (int32_t)i));
            break;
        }
        default:
            if (residual_of(r, i)) {
                char oth[16];
                out_name(r, r->geom[i].other, oth, sizeof oth);
                P(&o, "    tflk_binary_f32(&el%u, %s, %s, a%u);\n", i, r->geom[i].const_first ? oth : in,
                  r->geom[i].const_first ? in : oth, i);
            } else
                mcu_f32_geom_forward(&o, L->kind, &r->geom[i], i, in);
            break;
        }
    }
    /* the loss's gradient (mean over the batch of 1: dL/D = 1) */
    out_name(r, (int32_t)r->n_layers - 1, out, sizeof out);
    P(&o, "    if (trk_softmax_xent_grad(1, %d, %s, &lab, 1.0f, g) >= 0)\n        return -1;\n", last->oc, out);
    /* backward, down to the first trained layer; g holds the gradient of
     * layer j's output, h receives its input's */
    for (int32_t j = (int32_t)r->n_layers - 1; j >= p->first; j--) {
        const sy_mcu_f32_layer *L = &r->layers[j];
        const bool dx = j > p->first;
        out_name(r, j - 1, in, sizeof in);
        /* g is the gradient of layer j's output: add what residuals reading it left */
        for (uint32_t i = (uint32_t)j + 1; i < r->n_layers; i++)
            if (residual_of(r, i) && r->geom[i].other == j)
                P(&o, "    trk_grad_add(%lld, gp%u, g);\n", (long long)other_numel(r, i), i);
        if (grad_out_of_place(r, p, j))
            P(&o, "    h = sy_act + %lld;\n", (long long)p->hoff[j]);
        switch (L->kind) {
        case SY_MCU_F32_GEMM:
            /* a frozen W's backward does not read x, whose floats may hold another activation by now */
            P(&o, "    trk_fc_backward_update(&o, %d, %d, %s, (float *)w%d, %s, g, %s, %d, ", L->ic, L->oc,
              L->train_w ? in : "NULL", j,
              L->train_b ? (snprintf(bsym, sizeof bsym, "b%d", j), bsym) : "NULL", dx ? "h" : "NULL", L->train_w);
            if (L->train_w)
                P(&o, "w%d_s1, %s, ", j, adam ? (snprintf(bsym, sizeof bsym, "w%d_s2", j), bsym) : "NULL");
            else
                P(&o, "NULL, NULL, ");
            if (L->train_b)
                P(&o, "b%d_s1, %s, ", j, adam ? (snprintf(bsym, sizeof bsym, "b%d_s2", j), bsym) : "NULL");
            else
                P(&o, "NULL, NULL, ");
            P(&o, "%s);\n", L->train_w ? (snprintf(bsym, sizeof bsym, "row%d", j), bsym) : "NULL");
            if (dx)
                P(&o, "    sw = g, g = h, h = sw;\n");
            break;
        case SY_MCU_F32_RELU:
            /* the mask from the output (y > 0 exactly where x > 0): the input may be overwritten by it */
            out_name(r, j, out, sizeof out);
            P(&o, "    trk_relu_grad(%lld, g, %s, g);\n", (long long)numel_in(L), out);
            break;
        case SY_MCU_F32_CONCAT_SELF:
            if (dx)
                P(&o, "    trk_concat_self_grad(%lld, g, h);\n    sw = g, g = h, h = sw;\n", (long long)numel_in(L));
            break;
        case SY_MCU_F32_CONV_DW:
            if (!L->train_w) {
                P(&o, "    trk_conv_grad(&tc%d, g, NULL, w%d, %s, NULL, NULL);\n", j, j, dx ? "h" : "NULL");
            } else {
                /* fused per channel, as a Gemm's per output channel: channel c's
                 * input gradient and weight gradient (tc<j> is one channel's),
                 * then its step; depthwise, no other channel reads w<j>'s c row,
                 * and every element's sum runs in the whole call's order */
                const int64_t ihw = (int64_t)L->ih * L->iw, ohw = (int64_t)L->oh * L->ow, k = wgrad_numel(L);
                char dxs[64] = "NULL", s2[64] = "NULL";
                if (dx)
                    snprintf(dxs, sizeof dxs, "h + c * %lld", (long long)ihw);
                if (adam)
                    snprintf(s2, sizeof s2, "w%d_s2 + c * %lld", j, (long long)k);
                P(&o, "    for (int c = 0; c < %d; c++) {\n"
                      "        trk_conv_grad(&tc%d, g + c * %lld, %s + c * %lld, w%d + c * %lld, %s, gw%d, NULL);\n"
                      "        trk_opt_step(&o, %lld, w%d + c * %lld, gw%d, w%d_s1 + c * %lld, %s, w%d + c * %lld, "
                      "w%d_s1 + c * %lld, %s);\n    }\n",
                  L->ic, j, (long long)ohw, in, (long long)ihw, j, (long long)k, dxs, j, (long long)k, j,
                  (long long)k, j, j, (long long)k, s2, j, (long long)k, j, (long long)k, s2);
            }
            if (dx)
                P(&o, "    sw = g, g = h, h = sw;\n");
            break;
        case SY_MCU_F32_FLATTEN:
            break;
        case SY_MCU_F32_CONCAT: /* never the first trained layer: dx is wanted */
            mcu_f32_concat_backward(&o, &r->geom[j], (uint32_t)j, r->geom[j].other >= p->first);
            break;
        case SY_MCU_F32_ADD:
        case SY_MCU_F32_SUB:
        case SY_MCU_F32_MUL:
        case SY_MCU_F32_DIV:
        {
            char oth[16] = "NULL";
            if (residual_of(r, (uint32_t)j))
                out_name(r, r->geom[j].other, oth, sizeof oth);
            mcu_f32_elt_backward(&o, L, &r->geom[j], (uint32_t)j, in, oth, dx, adam,
                                 residual_of(r, (uint32_t)j) && r->geom[j].other >= p->first);
            break;
        }
        default: /* never the first trained layer (no tensor of their own): dx is wanted */
            mcu_f32_geom_backward(&o, L->kind, &r->geom[j], (uint32_t)j, in);
            break;
        }
    }
    P(&o, "    return 0;\n}\n\n");
    /* the trained tensors, each value's float bits in hex (expected_output.txt's format) */
    P(&o, "static void put(const char *tag, const float *v, int n)\n{\n    printf(\"%%s %%d:\", tag, n);\n"
          "    for (int i = 0; i < n; i++) {\n        uint32_t b;\n        memcpy(&b, &v[i], 4);\n"
          "        printf(\" %%08lx\", (unsigned long)b);\n    }\n    printf(\"\\n\");\n}\n\n");
    bool any_kn = false;
    for (uint32_t i = 0; i < r->n_layers; i++)
        any_kn |= w_kn(r, i) && r->layers[i].train_w;
    if (any_kn)
        P(&o, "/* v [rows, cols] printed as its transpose [cols, rows]: a B held transposed, in the model's layout */\n"
              "static void put_t(const char *tag, const float *v, int rows, int cols)\n{\n"
              "    printf(\"%%s %%d:\", tag, rows * cols);\n"
              "    for (int c = 0; c < cols; c++)\n        for (int i = 0; i < rows; i++) {\n"
              "            uint32_t b;\n            memcpy(&b, &v[(long)i * cols + c], 4);\n"
              "            printf(\" %%08lx\", (unsigned long)b);\n        }\n    printf(\"\\n\");\n}\n\n");
    P(&o, "void sy_train_print(void)\n{\n");
    for (uint32_t i = 0; i < r->n_layers; i++) {
        const sy_mcu_f32_layer *L = &r->layers[i];
        if (L->train_w && w_kn(r, i))
            P(&o, "    put_t(\"w%u\", w%u, %d, %d);\n", i, i, L->oc, L->ic);
        else if (L->train_w)
            P(&o, "    put(\"w%u\", w%u, %d);\n", i, i, L->w_numel);
        if (L->train_b)
            P(&o, "    put(\"b%u\", b%u, %d);\n", i, i, L->b_numel);
    }
    P(&o, "}\n");
    SY_TRY(mcu_tr_tclose(r->dir, "src/train.c", &o));

    SY_TRY(mcu_tr_topen(r->dir, "include/sy_train.h", &o));
    P(&o, "/* Generated by switchyard codegen --train --mode fp32: the training package's API. */\n"
          "#ifndef SY_TRAIN_PKG_H\n#define SY_TRAIN_PKG_H\n\n#include <stdint.h>\n#include <stdio.h>\n\n"
          "#define SY_TRAIN_SAMPLES %u\n#define SY_TRAIN_SAMPLE_NUMEL %d\n\n"
          "/* one FP32 step on one sample; t is the 1-based update number (the optimizers' T);\n"
          " * -1: the label is outside the classes */\n"
          "int sy_train_step(const float *x, int32_t label, int64_t t, float lr);\n"
          "/* the trained tensors in expected_output.txt's format */\nvoid sy_train_print(void);\n\n"
          "extern const float sy_train_samples[];\nextern const int32_t sy_train_labels[];\n"
          "/* Adam: the host trainer's bias-corrected rate of each step */\nextern const float sy_train_rates[];\n\n#endif\n",
      r->n_samples, r->sample_numel);
    SY_TRY(mcu_tr_tclose(r->dir, "include/sy_train.h", &o));

    SY_TRY(mcu_tr_topen(r->dir, "src/samples.c", &o));
    P(&o, "/* Generated by switchyard codegen --train --mode fp32: the samples (float32) and labels. */\n"
          "#include \"sy_train.h\"\n\n");
    arr_f(&o, "const ", "sy_train_samples", r->samples, (size_t)r->n_samples * (size_t)r->sample_numel);
    if (r->optimizer == 1 && r->rates)
        arr_f(&o, "const ", "sy_train_rates", r->rates, r->n_samples);
    P(&o, "const int32_t sy_train_labels[%u] = {", r->n_samples);
    for (uint32_t i = 0; i < r->n_samples; i++)
        P(&o, "%s%ld,", i % 16 ? "" : "\n   ", (long)r->labels[i]);
    P(&o, "\n};\n");
    SY_TRY(mcu_tr_tclose(r->dir, "src/samples.c", &o));

    uint32_t lr_bits;
    memcpy(&lr_bits, &r->lr, 4);
    SY_TRY(mcu_tr_topen(r->dir, "src/main.c", &o));
    P(&o, "/* Generated by switchyard codegen --train --mode fp32: every sample once (one step each),\n"
          " * then the trained tensors and the retired instructions of the steps (0 off RISC-V). */\n"
          "#include \"sy_train.h\"\n\n#include <string.h>\n\n"
          "#if defined(__riscv) && __riscv_xlen == 32\n"
          "static uint64_t rd_instret(void)\n{\n    uint32_t hi, lo, hi2;\n    do {\n"
          "        __asm__ volatile(\"csrr %%0, instreth\" : \"=r\"(hi));\n"
          "        __asm__ volatile(\"csrr %%0, instret\" : \"=r\"(lo));\n"
          "        __asm__ volatile(\"csrr %%0, instreth\" : \"=r\"(hi2));\n"
          "    } while (hi != hi2);\n    return (uint64_t)hi << 32 | lo;\n}\n"
          "#else\nstatic uint64_t rd_instret(void) { return 0; }\n#endif\n\n"
          "int main(void)\n{\n    uint32_t lr_bits = 0x%08lxu;\n    float lr;\n"
          "    memcpy(&lr, &lr_bits, 4);\n    uint64_t i0 = rd_instret();\n"
          "    for (int s = 0; s < SY_TRAIN_SAMPLES; s++)\n"
          "        if (sy_train_step(sy_train_samples + (long)s * SY_TRAIN_SAMPLE_NUMEL, sy_train_labels[s], s + 1, lr)) {\n"
          "            printf(\"error: label of sample %%d\\n\", s);\n            return 1;\n        }\n"
          "    uint64_t i1 = rd_instret();\n    sy_train_print();\n"
          "    printf(\"steps %%d instret %%lu per step %%lu\\n\", SY_TRAIN_SAMPLES, (unsigned long)(i1 - i0),\n"
          "           (unsigned long)((i1 - i0) / SY_TRAIN_SAMPLES));\n    return 0;\n}\n",
      (unsigned long)lr_bits);
    return mcu_tr_tclose(r->dir, "src/main.c", &o);
}

static void put_line(tout *o, const char *tag, uint32_t i, const float *v, int32_t n)
{
    P(o, "%s%u %d:", tag, i, n);
    for (int32_t k = 0; k < n; k++) {
        uint32_t b;
        memcpy(&b, &v[k], 4);
        P(o, " %08lx", (unsigned long)b);
    }
    P(o, "\n");
}

static sy_status *check_request(const sy_mcu_train_f32_request *r)
{
    if (!r || r->struct_size < sizeof *r || !r->dir || !r->n_layers || !r->layers || !r->n_samples || !r->samples ||
        !r->labels || r->sample_numel < 1 || (r->optimizer != 0 && r->optimizer != 1))
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "codegen --train --mode fp32: incomplete request");
    if (r->geom && r->geom_size != sizeof *r->geom)
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "codegen --train --mode fp32: the request's layer shapes are "
                             "%u bytes each, this riscv_mcu plugin's %zu (another build of sy_mcu_codegen.h: rebuild "
                             "the caller against this plugin's headers)", r->geom_size, sizeof *r->geom);
    bool any = false;
    for (uint32_t i = 0; i < r->n_layers; i++) {
        const sy_mcu_f32_layer *L = &r->layers[i];
        int64_t in = numel_in(L), prev = i ? numel_out(&r->layers[i - 1]) : r->sample_numel;
        const bool res = residual_of(r, i);
        bool weighted =
            L->kind == SY_MCU_F32_CONV_DW || L->kind == SY_MCU_F32_GEMM || (mcu_f32_elt_kind(L->kind) && !res);
        bool bad = L->kind < SY_MCU_F32_CONV_DW || L->kind > SY_MCU_F32_CONCAT || in < 1 || numel_out(L) < 1 ||
                   in != prev || (weighted && (!L->w || L->w_numel < 1)) || (L->train_w && !L->w_final) ||
                   (L->train_b && (!L->b || !L->b_final)) || (L->kind == SY_MCU_F32_CONV_DW && L->b) ||
                   (L->w && !all_finite(L->w, (size_t)L->w_numel)) || (L->b && !all_finite(L->b, (size_t)L->b_numel));
        if (mcu_f32_geom_kind(L->kind))
            bad |= !r->geom || !mcu_f32_geom_ok(&r->geom[i], L->kind, in, numel_out(L)) || L->b || L->train_b ||
                   (L->kind == SY_MCU_F32_CONCAT && !res) ||
                   (res ? L->w || L->train_w || r->geom[i].other < -1 || r->geom[i].other >= (int32_t)i ||
                              (r->geom[i].other < 0 ? r->sample_numel : numel_out(&r->layers[r->geom[i].other])) !=
                                  other_numel(r, i)
                    : mcu_f32_elt_kind(L->kind) ? L->w_numel != mcu_f32_elt_w_numel(&r->geom[i], L->kind, in) ||
                                                      (L->kind == SY_MCU_F32_DIV && L->train_w)
                                                : L->w || L->train_w);
        if (L->kind == SY_MCU_F32_GEMM)
            bad |= L->w_numel != L->oc * L->ic || (L->b && L->b_numel != L->oc);
        if (L->kind == SY_MCU_F32_CONV_DW) {
            /* the output covers the padded input but for less than a stride at its end; a stride other
             * than 1 only before every trained layer (no backward runs: the seed's row is stride 1) */
            const int32_t sh = conv_stride(r, i, 2), sw = conv_stride(r, i, 3);
            bad |= L->oc != L->ic || L->w_numel != L->ic * L->kh * L->kw || L->pt < 0 || L->pl < 0 || sh > 64 ||
                   sw > 64 || (int64_t)(L->oh - 1) * sh + L->kh + sh - 1 < L->ih + L->pt ||
                   (int64_t)(L->ow - 1) * sw + L->kw + sw - 1 < L->iw + L->pl ||
                   ((sh != 1 || sw != 1) && (any || L->train_w));
        }
        if (bad)
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "codegen --train --mode fp32: layer %u is inconsistent", i);
        any |= L->train_w || L->train_b;
    }
    if (r->layers[r->n_layers - 1].kind != SY_MCU_F32_GEMM)
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "codegen --train --mode fp32: the chain must end in a Gemm");
    if (!any)
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "codegen --train --mode fp32: nothing is trained");
    for (uint32_t s = 0; s < r->n_samples; s++)
        if (r->labels[s] < 0 || r->labels[s] >= r->layers[r->n_layers - 1].oc)
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "codegen --train --mode fp32: label %ld of sample %u is "
                                                          "outside [0, %d)", (long)r->labels[s], s,
                                 r->layers[r->n_layers - 1].oc);
    if (!all_finite(r->samples, (size_t)r->n_samples * (size_t)r->sample_numel))
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "codegen --train --mode fp32: a sample is not finite");
    return NULL;
}

/* the package of a checked request; plan: 6 · n_layers entries, the arena's (plan_of) */
static sy_status *emit_checked(const mcu_chip *chip, uint64_t budget, const sy_mcu_train_f32_request *r,
                               char *summary, size_t len, int64_t *plan)
{
    plan32 p;
    SY_TRY(plan_of(r, &p, plan));
    snprintf(summary, len,
             "FP32 training package for %s: %u layers, %s, %u steps\n"
             "RAM plan of a step: peak %zu bytes = trained tensors %zu + optimizer state %zu + workspace %zu "
             "(activations and gradients in one arena placed by lifetime; alone: activations %zu, gradients %zu); "
             "lower bound %zu bytes; budget %llu bytes (%s SRAM %llu)\n"
             "flash: frozen tensors %zu bytes, samples %zu bytes",
             chip->name, r->n_layers, r->optimizer == 1 ? "Adam" : "Momentum", r->n_samples, p.peak, p.params,
             p.state, p.work, p.acts, p.grads, p.lower, (unsigned long long)budget, chip->name, (unsigned long long)chip->sram,
             p.flash_frozen, p.samples);
    if (p.peak > budget)
        return H->status_new(SY_ERR_BUDGET,
                             "codegen --train --mode fp32: the training plan needs %zu bytes of RAM (trained tensors "
                             "%zu, optimizer state %zu, activations and gradients %zu), over the budget of %llu bytes "
                             "on %s: train fewer layers",
                             p.peak, p.params, p.state, p.work, (unsigned long long)budget, chip->name);
    if (p.flash_frozen + p.samples > chip->flash)
        return H->status_new(SY_ERR_BUDGET, "codegen --train --mode fp32: %zu bytes of flash (frozen tensors and "
                                            "samples) over %s's %llu: fewer samples",
                             p.flash_frozen + p.samples, chip->name, (unsigned long long)chip->flash);
    SY_TRY(mcu_tr_mkdirs(r->dir));
    char sub[4200];
    const char *subs[3] = {"src", "include", "kernels"};
    for (int i = 0; i < 3; i++) {
        snprintf(sub, sizeof sub, "%s/%s", r->dir, subs[i]);
        SY_TRY(mcu_tr_mkdirs(sub));
    }
    SY_TRY(write_train_c(chip, r, &p));
    /* trk.c's data-movement backwards are tflk's strided copy and pad; tflk_reduce.c's int8 paths need tflk_fixed.c */
    const char *kern[] = {"trk.c",       "trk.h",         "tflk.h",      "sy_fixedpoint.h", "tflk_math.c",
                          "tflk_conv.c", "tflk_fc.c",     "tflk_unary.c", "tflk_strided.c", "tflk_move.c",
                          "tflk_reduce.c", "tflk_fixed.c", "tflk_binary.c"};
    for (size_t i = 0; i < sizeof kern / sizeof *kern; i++)
        SY_TRY(mcu_tr_copy_source(r->dir, kern[i]));
    SY_TRY(mcu_tr_build_files(r->dir, chip, budget, r->model_name,
                              "kernels/trk.c kernels/tflk_math.c kernels/tflk_conv.c kernels/tflk_fc.c "
                              "kernels/tflk_unary.c kernels/tflk_strided.c kernels/tflk_move.c kernels/tflk_reduce.c "
                              "kernels/tflk_fixed.c kernels/tflk_binary.c"));
    tout o;
    SY_TRY(mcu_tr_topen(r->dir, "README.md", &o));
    P(&o, "# FP32 training package for %s (generated by `switchyard codegen --train --mode fp32`)\n\n"
          "`src/main.c` runs one training step per sample of `src/samples.c` on the whole model %s and\n"
          "prints the trained tensors (each value's float bits in hex); `expected_output.txt` is what the\n"
          "host trainer holds after the same steps.\n\n%s\n\n"
          "```sh\ncmake -S . -B build -DCMAKE_TOOLCHAIN_FILE=toolchain-riscv32.cmake && cmake --build build\n"
          "qemu-system-riscv32 -machine virt -bios none -nographic -semihosting-config enable=on,target=native \\\n"
          "    -icount shift=0 -kernel build/sy_train_main.elf\n```\n",
      chip->name, r->model_name, summary);
    SY_TRY(mcu_tr_tclose(r->dir, "README.md", &o));
    SY_TRY(mcu_tr_topen(r->dir, "expected_output.txt", &o));
    for (uint32_t i = 0; i < r->n_layers; i++) {
        const sy_mcu_f32_layer *L = &r->layers[i];
        if (L->train_w)
            put_line(&o, "w", i, L->w_final, L->w_numel);
        if (L->train_b)
            put_line(&o, "b", i, L->b_final, L->b_numel);
    }
    return mcu_tr_tclose(r->dir, "expected_output.txt", &o);
}

sy_status *mcu_emit_train_f32(const mcu_cfg *cfg, const sy_mcu_train_f32_request *r, char *summary, size_t len)
{
    const mcu_chip *chip = NULL;
    uint64_t budget = 0;
    SY_TRY(mcu_tr_check_chip(cfg, r ? r->sram_budget : 0, &chip, &budget));
    SY_TRY(check_request(r));
    int64_t *plan = calloc(6 * (size_t)r->n_layers, sizeof *plan);
    if (!plan)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "codegen --train --mode fp32: out of memory planning %u layers",
                             r->n_layers);
    sy_status *st = emit_checked(chip, budget, r, summary, len, plan);
    free(plan);
    return st;
}
