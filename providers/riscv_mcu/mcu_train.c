/*
 * The training package `switchyard codegen --train` writes (seed 001 §4:
 * on-device training on ws63): QAS-INT8 steps of the trained fully
 * connected and 3x3 convolution layers (plugin_sdk/kernels/qas.c, the very
 * file the host trainer runs, embedded in this plugin; a Conv takes the
 * host's separate passes: gradient, QAS scaling, SGD, re-quantization)
 * over samples held in flash: the
 * int8 codes the model's frozen front gives the first trained layer.
 * A Transpose of a Conv's (pooled) codes before the Gemm after it is the
 * host's too: the codes permuted into the Gemm's input and its input
 * gradient back each step (qas_perm_s8, qas_unperm_f32), two arena blocks.
 * NHWC Convs (an int8 TFLite CONV_2D's) run in the same NCHW kernels: the
 * samples and the following Gemm's weight columns are permuted once, here,
 * where the host session permutes codes and gradients each step.
 * Trained codes, their float master copies and the momentum live in RAM
 * (static arrays, from step to step); the step's gradients and activations
 * and the front's workspace are blocks of one arena placed by lifetime with
 * the core's planner (sy_host_api.plan_blocks); the frozen weights of a
 * biases-only update stay const in flash. The
 * memory plan is checked against the chip's SRAM (or the budget asked
 * for) before anything is written.
 *
 *   DIR/src/train.c            the layers' state and sy_train_step
 *   DIR/src/samples.c          the samples and labels (const)
 *   DIR/src/main.c             init, every sample once, the state printed
 *   DIR/kernels/               qas.c, qas.h, tflk.h, tflk_math.c, sy_fixedpoint.h
 *   DIR/CMakeLists.txt, DIR/toolchain-riscv32.cmake, DIR/README.md
 *   DIR/expected_output.txt    the host trainer's state after the same steps
 */
#include "mcu.h"
#include "mcu_train.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#define H mcu_H

sy_status *mcu_tr_topen(const char *dir, const char *rel, tout *o)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    o->failed = false;
    o->f = fopen(path, "w");
    return o->f ? NULL : H->status_new(SY_ERR_IO, "codegen --train: cannot write %s: %s", path, strerror(errno));
}

sy_status *mcu_tr_tclose(const char *dir, const char *rel, tout *o)
{
    bool bad = o->failed | (fclose(o->f) != 0);
    o->f = NULL;
    return bad ? H->status_new(SY_ERR_IO, "codegen --train: writing %s/%s failed", dir, rel) : NULL;
}

sy_status *mcu_tr_mkdirs(const char *dir)
{
    char p[4096];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "codegen --train: path too long");
    for (char *c = p + 1;; c++) {
        bool end = !*c;
        if (*c == '/' || end) {
            *c = '\0';
            if (mkdir(p, 0777) && errno != EEXIST)
                return H->status_new(SY_ERR_IO, "codegen --train: cannot create %s: %s", p, strerror(errno));
            if (end)
                break;
            *c = '/';
        }
    }
    return NULL;
}

sy_status *mcu_tr_copy_source(const char *dir, const char *name)
{
    for (unsigned i = 0; i < mcu_n_sources; i++)
        if (!strcmp(mcu_sources[i].name, name)) {
            char rel[128];
            snprintf(rel, sizeof rel, "kernels/%s", name);
            tout o;
            SY_TRY(mcu_tr_topen(dir, rel, &o));
            mcu_tr_P(&o, "%s", mcu_sources[i].text);
            return mcu_tr_tclose(dir, rel, &o);
        }
    return H->status_new(SY_ERR_INTERNAL, "codegen --train: kernel source %s is not embedded in the plugin", name);
}

sy_status *mcu_tr_plan_blocks(const char *what, sy_plan_block *blocks, uint32_t n, uint64_t align,
                              uint64_t *arena_bytes, uint64_t *lower_bound)
{
    if (!sy_host_has_plan_blocks(H))
        return H->status_new(SY_ERR_UNSUPPORTED, "%s: this host (ABI %u.%u) has no plan_blocks (ABI 1.7) to plan the "
                             "training workspace with", what, (unsigned)H->abi_major, (unsigned)H->abi_minor);
    return H->plan_blocks(blocks, n, align, arena_bytes, lower_bound);
}

/* the float bits of v, exactly */
void mcu_tr_pf(tout *o, float v)
{
    uint32_t b;
    memcpy(&b, &v, 4);
    mcu_tr_P(o, "sy_f32(0x%08xu)", (unsigned)b);
}

static void arr_i8(tout *o, const char *qual, const char *sym, const int8_t *v, size_t n)
{
    mcu_tr_P(o, "%sint8_t %s[%zu] = {", qual, sym, n ? n : 1);
    for (size_t i = 0; i < n; i++)
        mcu_tr_P(o, "%s%d,", i % 24 ? "" : "\n   ", v[i]);
    mcu_tr_P(o, "%s\n};\n", n ? "" : " 0");
}

static void arr_i32(tout *o, const char *qual, const char *sym, const int32_t *v, size_t n)
{
    mcu_tr_P(o, "%sint32_t %s[%zu] = {", qual, sym, n);
    for (size_t i = 0; i < n; i++)
        mcu_tr_P(o, "%s%ld,", i % 12 ? "" : "\n   ", (long)v[i]);
    mcu_tr_P(o, "\n};\n");
}

/* 32-bit FNV-1a over bytes: the state printed in a line */
uint32_t mcu_tr_fnv(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

/* a layer's Conv geometry, NULL: fully connected */
static const sy_mcu_train_conv *conv_of(const sy_mcu_train_request *r, uint32_t i)
{
    bool has = r->struct_size >= offsetof(sy_mcu_train_request, convs) + sizeof r->convs && r->convs;
    return has && r->convs[i].conv ? &r->convs[i] : NULL;
}

/* the request's front on the device (DIR/front, an inference package), NULL: the samples are its codes */
static const char *front_of(const sy_mcu_train_request *r)
{
    bool has = r->struct_size >= offsetof(sy_mcu_train_request, front_inputs) + sizeof r->front_inputs;
    return has ? r->front_prefix : NULL;
}

/* a MaxPool on layer i's output codes, NULL: none */
static const sy_mcu_train_pool *pool_of(const sy_mcu_train_request *r, uint32_t i)
{
    bool has = r->struct_size >= offsetof(sy_mcu_train_request, pools) + sizeof r->pools && r->pools;
    return has && r->pools[i].pool ? &r->pools[i] : NULL;
}

/* the permutation of a Transpose of layer i - 1's (a Conv's, pooled or not) codes that layer i reads, NULL: none */
static const int32_t *perm_of(const sy_mcu_train_request *r, uint32_t i)
{
    bool has = r->struct_size >= offsetof(sy_mcu_train_request, perms) + sizeof r->perms && r->perms;
    const int32_t *p = has ? r->perms + 4 * (size_t)i : NULL;
    return p && (p[1] || p[2] || p[3]) ? p : NULL;
}

/* the request's Convs are NHWC layers (an int8 TFLite CONV_2D's, sy_mcu_train_request.nhwc) */
static bool nhwc_of(const sy_mcu_train_request *r)
{
    return r->struct_size >= offsetof(sy_mcu_train_request, nhwc) + sizeof r->nhwc && r->nhwc;
}

/* Layer i is the fully connected layer after an NHWC Conv: the host session
 * flattens the Conv's codes in NHWC order (a copy of them permuted each step)
 * and its weight columns are in that (h, w, c) order. The package instead
 * holds the columns in the (c, h, w) order of the Conv's NCHW output, once,
 * when it is written: column j·c + i (pixel j, channel i) is held at
 * i·hw + j. The forward's int32 dot product is the same sum in another
 * order (exact), and every other sum over the columns' index is per column
 * (the gradient row, the update, the input gradient's), so each value is
 * the host's, moved: no input copy, no gradient permuted back, no RAM.
 * *c, *hw: the Conv's output channels and pixels. */
static bool hwc_cols(const sy_mcu_train_request *r, uint32_t i, int32_t *c, int32_t *hw)
{
    const sy_mcu_train_conv *P = i && nhwc_of(r) && !conv_of(r, i) ? conv_of(r, i - 1) : NULL;
    if (P)
        *c = r->layers[i - 1].o, *hw = P->oh * P->ow;
    return P != NULL;
}

/* the codes of such a layer's [o, c·hw] weights (h, w, c) as the package holds them (c, h, w) */
static int8_t *to_chw_cols(int32_t o, int32_t c, int32_t hw, const int8_t *w)
{
    const size_t k = (size_t)c * (size_t)hw;
    int8_t *v = malloc((size_t)o * k);
    for (size_t r = 0; v && r < (size_t)o; r++)
        for (size_t j = 0; j < (size_t)hw; j++)
            for (size_t i = 0; i < (size_t)c; i++)
                v[r * k + i * (size_t)hw + j] = w[r * k + j * (size_t)c + i];
    return v;
}

/* the int8 values a layer reads and writes per sample */
static size_t in_n(const sy_mcu_train_request *r, uint32_t i)
{
    const sy_mcu_train_conv *c = conv_of(r, i);
    return c ? (size_t)c->c * (size_t)c->h * (size_t)c->w : (size_t)r->layers[i].k;
}

static size_t out_n(const sy_mcu_train_request *r, uint32_t i)
{
    const sy_mcu_train_conv *c = conv_of(r, i);
    return c ? (size_t)r->layers[i].o * (size_t)c->oh * (size_t)c->ow : (size_t)r->layers[i].o;
}

/* the int8 values the next layer reads of layer i: the pooled codes, or its output */
static size_t next_n(const sy_mcu_train_request *r, uint32_t i)
{
    const sy_mcu_train_pool *q = pool_of(r, i);
    return q ? (size_t)r->layers[i].o * (size_t)q->oh * (size_t)q->ow : out_n(r, i);
}

/* the dims [1, o, h, w] of a Conv layer i's codes the next layer reads (pooled or not): a Transpose's input */
static void next_dims(const sy_mcu_train_request *r, uint32_t i, int32_t d[4])
{
    const sy_mcu_train_pool *q = pool_of(r, i);
    const sy_mcu_train_conv *c = conv_of(r, i);
    d[0] = 1, d[1] = r->layers[i].o, d[2] = q ? q->oh : c->oh, d[3] = q ? q->ow : c->ow;
}

/* The step's transient buffers are blocks of one arena placed by lifetime
 * with the core's planner. Times, both ends inclusive: 0 the front (on the
 * device), 1 + i layer i's forward, n + 1 the loss, 2n + 1 - j layer j's
 * backward; what a kernel reads and writes is live at its time, so no
 * kernel writes over what it reads. Layer i's blocks are
 * b[B_PER * i + kind]; after them the front's workspace and the copy of
 * the front's output (the step's input). Size 0: no such buffer. */
enum { B_Y, B_R, B_DY, B_GW, B_GB, B_ROW, B_PL, B_DPL, B_XT, B_DXT, B_PER };
#define B_FRONT(n) ((size_t)B_PER * (n))
#define B_X(n) ((size_t)B_PER * (n) + 1)

static int64_t t_fwd(uint32_t i) { return 1 + (int64_t)i; }
static int64_t t_bwd(const sy_mcu_train_request *r, uint32_t j) { return 2 * (int64_t)r->n_layers + 1 - j; }

/* the memory plan of one step (batch 1) */
typedef struct plan {
    size_t codes, masters, momentum, flash_w, samples;
    /* the arena's blocks by kind, summed: the gradients (a Conv's whole
     * gradient, a fully connected layer's row), the activations (output
     * and ReLU codes, the output gradients, the front's output copied) and
     * the front's workspace */
    size_t grads, acts, front_ws;
    size_t arena;       /* what they take placed by lifetime */
    size_t arena_lower; /* the most bytes of them live at one time */
    size_t peak, lower;
    sy_plan_block *b;
} plan;

static void block(sy_plan_block *b, size_t size, int64_t first, int64_t last)
{
    *b = (sy_plan_block){size, first, last, 0};
}

/* the blocks, then their offsets from the core's planner */
static sy_status *place_step(const sy_mcu_train_request *r, plan *p)
{
    const uint32_t n = r->n_layers;
    const bool bo = r->biases_only, front = front_of(r) != NULL;
    const size_t nb = B_X(n) + 1;
    p->b = calloc(nb, sizeof *p->b);
    sy_plan_block *pb = calloc(nb, sizeof *pb);
    size_t *of = calloc(nb, sizeof *of);
    if (!p->b || !pb || !of) {
        free(pb);
        free(of);
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "codegen --train: out of memory planning %u layers", n);
    }
    for (uint32_t i = 0; i < n; i++) {
        const sy_mcu_train_layer *L = &r->layers[i];
        sy_plan_block *b = &p->b[(size_t)B_PER * i];
        const size_t on = out_n(r, i);
        /* the output codes: the straight-through mask of the backward, and
         * the next layer's input (or the loss's) when no ReLU follows */
        block(&b[B_Y], on, t_fwd(i), t_bwd(r, i));
        /* the ReLU's codes: read by the next forward, and by its backward
         * when its weights train (or by the loss) */
        const bool pool = pool_of(r, i) != NULL;
        /* the next layer reads them at its backward only when its weights train and no Transpose (which
         * reads them at the next forward into a block of its own) is between */
        const bool fwd_only = bo || (i + 1 < n && perm_of(r, i + 1));
        if (L->relu) /* (a MaxPool's backward reads them at the next layer's backward) */
            block(&b[B_R], on, t_fwd(i), i + 1 == n ? t_fwd(n) : fwd_only && !pool ? t_fwd(i + 1) : t_bwd(r, i + 1));
        /* a MaxPool's codes: written at this forward, read as the next layer's input (the ReLU's codes' reach);
         * their gradient: the next layer's input gradient, read by the MaxPool's backward right after it */
        if (pool) {
            block(&b[B_PL], next_n(r, i), t_fwd(i), fwd_only ? t_fwd(i + 1) : t_bwd(r, i + 1));
            block(&b[B_DPL], 4 * next_n(r, i), t_bwd(r, i + 1), t_bwd(r, i + 1));
        }
        /* the output's gradient: written by the loss or as the next
         * layer's input gradient, read by this layer's backward */
        block(&b[B_DY], 4 * on, i + 1 == n ? t_fwd(n) : t_bwd(r, i + 1), t_bwd(r, i));
        /* a Transpose of the previous Conv's codes: the permuted codes, this layer's input (read by its
         * backward when the weights train), and their gradient, permuted back right after the backward */
        if (perm_of(r, i)) {
            block(&b[B_XT], (size_t)L->k, t_fwd(i), bo ? t_fwd(i) : t_bwd(r, i));
            block(&b[B_DXT], 4 * (size_t)L->k, t_bwd(r, i), t_bwd(r, i));
        }
        if (conv_of(r, i)) { /* the separate passes: the whole gradient within the backward */
            if (!bo)
                block(&b[B_GW], 4 * (size_t)L->o * (size_t)L->k, t_bwd(r, i), t_bwd(r, i));
            if (L->bias)
                block(&b[B_GB], 4 * (size_t)L->o, t_bwd(r, i), t_bwd(r, i));
        } else if (!bo) /* one output channel's gradient row: the update is in place */
            block(&b[B_ROW], 4 * (size_t)L->k, t_bwd(r, i), t_bwd(r, i));
    }
    if (front) {
        /* the front's workspace is live while it runs only; its output,
         * copied out, is the first layer's input, read by its backward when
         * the weights train */
        block(&p->b[B_FRONT(n)], (size_t)r->front_workspace_bytes, 0, 0);
        block(&p->b[B_X(n)], in_n(r, 0), 0, bo ? t_fwd(0) : t_bwd(r, 0));
    }
    uint32_t m = 0;
    for (size_t k = 0; k < nb; k++) {
        if (!p->b[k].size)
            continue;
        size_t kind = k < B_FRONT(n) ? k % B_PER : B_PER;
        if (k == B_FRONT(n))
            p->front_ws += p->b[k].size;
        else if (kind == B_GW || kind == B_GB || kind == B_ROW)
            p->grads += p->b[k].size;
        else
            p->acts += p->b[k].size;
        of[m] = k;
        pb[m++] = p->b[k];
    }
    /* 8-byte offsets for the front (its package asks them of a workspace),
     * 4 for the floats otherwise */
    uint64_t arena = 0, lower = 0;
    sy_status *st = mcu_tr_plan_blocks("codegen --train", pb, m, front ? 8 : 4, &arena, &lower);
    for (uint32_t k = 0; !st && k < m; k++)
        p->b[of[k]].offset = pb[k].offset;
    p->arena = (size_t)arena;
    p->arena_lower = (size_t)lower;
    free(pb);
    free(of);
    return st;
}

static sy_status *plan_of(const sy_mcu_train_request *r, plan *p)
{
    memset(p, 0, sizeof *p);
    for (uint32_t i = 0; i < r->n_layers; i++) {
        const sy_mcu_train_layer *L = &r->layers[i];
        size_t ok = (size_t)L->o * (size_t)L->k, o = (size_t)L->o;
        size_t trained = (r->biases_only ? 0 : ok) + (L->bias ? o : 0);
        p->codes += (r->biases_only ? 0 : ok) + (L->bias ? 4 * o : 0);
        p->flash_w += (r->biases_only ? ok : 0) + 4 * o; /* frozen codes and the scales */
        p->masters += 4 * trained;
        p->momentum += 4 * trained;
    }
    const bool front = front_of(r) != NULL;
    p->samples = (size_t)r->n_samples * (front ? (size_t)r->front_input_bytes : in_n(r, 0)) + 4 * (size_t)r->n_samples;
    SY_TRY(place_step(r, p));
    /* the persistent state (trained codes, masters, momentum) and the
     * arena; the lower bound of this schedule: the state and the most
     * bytes of the arena's blocks live at one time, which no placement of
     * them goes below (the planner's bound) */
    p->peak = p->codes + p->masters + p->momentum + p->arena;
    p->lower = p->codes + p->masters + p->momentum + p->arena_lower;
    return NULL;
}

/* a buffer of the arena: a constant pointer to its bytes, its lifetime said */
static void at(tout *o, const char *type, const char *sym, uint32_t i, const sy_plan_block *b)
{
    if (b->size)
        mcu_tr_P(o, "static %s *const %s%u = SY_AT(%s, %llu); /* %llu bytes, times %lld..%lld */\n", type, sym, i,
                 type, (unsigned long long)b->offset, (unsigned long long)b->size, (long long)b->first,
                 (long long)b->last);
}

/* layer i's input: the sample, the previous ReLU's codes or, without a ReLU, its output codes (or
 * the pooled codes; or those permuted by a Transpose) */
static void input_sym(const sy_mcu_train_request *r, uint32_t i, char *sym, size_t len)
{
    if (!i)
        snprintf(sym, len, "x");
    else if (perm_of(r, i))
        snprintf(sym, len, "xt%u", i);
    else
        snprintf(sym, len, "%s%u", pool_of(r, i - 1) ? "pl" : r->layers[i - 1].relu ? "r" : "y", i - 1);
}

/* the previous layer's codes as they lie (what a Transpose before layer i reads) */
static void prev_sym(const sy_mcu_train_request *r, uint32_t i, char *sym, size_t len)
{
    if (!i)
        snprintf(sym, len, "x");
    else
        snprintf(sym, len, "%s%u", pool_of(r, i - 1) ? "pl" : r->layers[i - 1].relu ? "r" : "y", i - 1);
}

/* after layer j's backward, the MaxPool on layer j - 1's codes: the gradient of its pooled codes to the first
 * maximal position of each window (the host's call, at the same point) */
static void pool_backward(tout *o, const sy_mcu_train_request *r, uint32_t j)
{
    if (j && pool_of(r, j - 1))
        mcu_tr_P(o, "    qas_maxpool_backward(&pp%u, 1, %s%u, dpl%u, dy%u);\n", j - 1,
                 r->layers[j - 1].relu ? "r" : "y", j - 1, j - 1, j - 1);
}

static sy_status *write_train_c(const mcu_chip *chip, const sy_mcu_train_request *r, const plan *p)
{
    tout o;
    SY_TRY(mcu_tr_topen(r->dir, "src/train.c", &o));
    mcu_tr_P(&o, "/* Generated by switchyard codegen --train from %s for %s: do not edit.\n"
          " * QAS-INT8 steps (batch 1) of %u trained layers%s: the calls and their\n"
          " * order are the host trainer's (tools/lib/src/train_qas.c), so the bits are too. */\n",
      r->model_name, chip->name, r->n_layers, r->biases_only ? ", biases only" : "");
    mcu_tr_P(&o, "#include \"sy_train.h\"\n\n#include \"qas.h\"\n\n#include <string.h>\n\n"
          "static float sy_f32(uint32_t b)\n{\n    float f;\n    memcpy(&f, &b, 4);\n    return f;\n}\n\n");
    /* the transient buffers: offsets the core's planner chose by lifetime,
     * so one arena holds them all (and the front's workspace); the trained
     * state stays in arrays of its own, live from step to step */
    mcu_tr_P(&o, "/* The step's transient buffers (activations, gradients) and %s: bytes of one\n"
                 " * arena, placed on the host by the core's planner by lifetime. Times: %s1 + i layer i's\n"
                 " * forward, %u the loss, %u - j layer j's backward. */\n"
                 "uint64_t sy_train_arena[(SY_TRAIN_ARENA_BYTES + 7) / 8];\n"
                 "#define SY_AT(type, off) ((type *)((unsigned char *)sy_train_arena + (off)))\n\n",
             front_of(r) ? "the front's workspace" : "nothing else", front_of(r) ? "0 the front, " : "",
             r->n_layers + 1, 2 * r->n_layers + 1);
    for (uint32_t i = 0; i < r->n_layers; i++) {
        const sy_mcu_train_layer *L = &r->layers[i];
        const sy_mcu_train_conv *C = conv_of(r, i);
        size_t ok = (size_t)L->o * (size_t)L->k;
        char sym[32];
        if (C)
            mcu_tr_P(&o, "/* layer %u: Conv %dx%d, [%d, %d, %d] -> [%d, %d, %d]%s */\n", i, C->kh, C->kw, C->c, C->h,
                     C->w, L->o, C->oh, C->ow, L->relu ? ", ReLU" : "");
        else
            mcu_tr_P(&o, "/* layer %u: [%d -> %d]%s */\n", i, L->k, L->o, L->relu ? ", ReLU" : "");
        snprintf(sym, sizeof sym, "w%u", i);
        int32_t hc, hhw;
        if (hwc_cols(r, i, &hc, &hhw)) {
            int8_t *v = to_chw_cols(L->o, hc, hhw, L->w);
            if (!v) {
                fclose(o.f);
                return H->status_new(SY_ERR_OUT_OF_MEMORY, "codegen --train: out of memory");
            }
            mcu_tr_P(&o, "/* its columns in the (c, h, w) order of the NHWC Conv's NCHW output (the model's\n"
                         " * are (h, w, c), the order the host flattens it in): the same sums, no permutation\n"
                         " * a step */\n");
            arr_i8(&o, r->biases_only ? "static const " : "static ", sym, v, ok);
            free(v);
        } else
            arr_i8(&o, r->biases_only ? "static const " : "static ", sym, L->w, ok);
        if (L->bias) {
            snprintf(sym, sizeof sym, "b%u", i);
            arr_i32(&o, "static ", sym, L->bias, (size_t)L->o);
        }
        mcu_tr_P(&o, "static float ws%u[%d];\nstatic const uint32_t ws%u_bits[%d] = {", i, L->o, i, L->o);
        for (int32_t c = 0; c < L->o; c++) {
            uint32_t b;
            memcpy(&b, &L->w_scale[c], 4);
            mcu_tr_P(&o, "%s0x%08xu,", c % 8 ? "" : "\n   ", (unsigned)b);
        }
        mcu_tr_P(&o, "\n};\n");
        if (!r->biases_only)
            mcu_tr_P(&o, "static float wm%u[%zu], wv%u[%zu];\n", i, ok, i, ok);
        if (L->bias)
            mcu_tr_P(&o, "static float bm%u[%d], bv%u[%d];\n", i, L->o, i, L->o);
        /* the input is the sample (in flash, or the front's output copied
         * into the arena) or the previous layer's ReLU output; a Conv's
         * gradient is formed whole, then scaled and applied (the host's
         * passes), a fully connected layer's a row at a time */
        const sy_plan_block *b = &p->b[(size_t)B_PER * i];
        at(&o, "int8_t", "y", i, &b[B_Y]);
        at(&o, "int8_t", "r", i, &b[B_R]);
        at(&o, "float", "dy", i, &b[B_DY]);
        at(&o, "float", "gw", i, &b[B_GW]);
        at(&o, "float", "gb", i, &b[B_GB]);
        at(&o, "float", "row", i, &b[B_ROW]);
        at(&o, "int8_t", "pl", i, &b[B_PL]);
        at(&o, "float", "dpl", i, &b[B_DPL]);
        at(&o, "int8_t", "xt", i, &b[B_XT]);
        at(&o, "float", "dxt", i, &b[B_DXT]);
        const int32_t *tp = perm_of(r, i);
        if (tp) {
            int32_t d[4];
            next_dims(r, i - 1, d);
            mcu_tr_P(&o, "/* the Transpose before it: layer %u's codes [1, %d, %d, %d], permutation (%d, %d, %d, %d) */\n"
                         "static const int32_t td%u[4] = {%d, %d, %d, %d}, tp%u[4] = {%d, %d, %d, %d};\n",
                     i - 1, d[1], d[2], d[3], tp[0], tp[1], tp[2], tp[3], i, d[0], d[1], d[2], d[3], i, tp[0], tp[1],
                     tp[2], tp[3]);
        }
        mcu_tr_P(&o, "static %s p%u;\n", C ? "qas_conv" : "qas_fc", i);
        if (pool_of(r, i))
            mcu_tr_P(&o, "static qas_pool pp%u;\n", i);
        mcu_tr_P(&o, "\n");
    }
    mcu_tr_P(&o, "void sy_train_init(void)\n{\n");
    for (uint32_t i = 0; i < r->n_layers; i++) {
        const sy_mcu_train_layer *L = &r->layers[i];
        mcu_tr_P(&o, "    for (int c = 0; c < %d; c++)\n        ws%u[c] = sy_f32(ws%u_bits[c]);\n", L->o, i, i);
        const sy_mcu_train_conv *C = conv_of(r, i);
        if (C)
            mcu_tr_P(&o, "    p%u.c = %d;\n    p%u.h = %d;\n    p%u.w = %d;\n    p%u.o = %d;\n    p%u.oh = %d;\n"
                     "    p%u.ow = %d;\n    p%u.kh = %d;\n    p%u.kw = %d;\n    p%u.sh = %d;\n    p%u.sw = %d;\n"
                     "    p%u.pt = %d;\n    p%u.pl = %d;\n",
                     i, C->c, i, C->h, i, C->w, i, L->o, i, C->oh, i, C->ow, i, C->kh, i, C->kw, i, C->sh, i, C->sw,
                     i, C->pt, i, C->pl);
        else
            mcu_tr_P(&o, "    p%u.k = %d;\n    p%u.o = %d;\n", i, L->k, i, L->o);
        const sy_mcu_train_pool *Q = pool_of(r, i);
        if (Q && C)
            mcu_tr_P(&o, "    pp%u.c = %d;\n    pp%u.h = %d;\n    pp%u.w = %d;\n    pp%u.oh = %d;\n    pp%u.ow = %d;\n"
                     "    pp%u.kh = %d;\n    pp%u.kw = %d;\n    pp%u.sh = %d;\n    pp%u.sw = %d;\n    pp%u.pt = %d;\n"
                     "    pp%u.pl = %d;\n",
                     i, L->o, i, C->oh, i, C->ow, i, Q->oh, i, Q->ow, i, Q->kh, i, Q->kw, i, Q->sh, i, Q->sw, i,
                     Q->pt, i, Q->pl);
        mcu_tr_P(&o, "    p%u.x_scale = ", i);
        mcu_tr_pf(&o, L->x_scale);
        mcu_tr_P(&o, ";\n    p%u.y_scale = ", i);
        mcu_tr_pf(&o, L->y_scale);
        mcu_tr_P(&o, ";\n    p%u.x_zp = %d;\n    p%u.y_zp = %d;\n    p%u.act_min = -128;\n    p%u.act_max = 127;\n"
              "    p%u.w_scale = ws%u;\n", i, L->x_zp, i, L->y_zp, i, i, i, i);
        /* the masters start as the codes, as on the host */
        if (!r->biases_only)
            mcu_tr_P(&o, "    for (int i = 0; i < %d; i++)\n        wm%u[i] = (float)w%u[i];\n", L->o * L->k, i, i);
        if (L->bias)
            mcu_tr_P(&o, "    for (int i = 0; i < %d; i++)\n        bm%u[i] = (float)b%u[i];\n", L->o, i, i);
    }
    mcu_tr_P(&o, "}\n\n");
    const sy_mcu_train_layer *last = &r->layers[r->n_layers - 1];
    mcu_tr_P(&o, "int sy_train_step(const int8_t *x, int32_t label, float lr)\n{\n");
    for (uint32_t i = 0; i < r->n_layers; i++) {
        const sy_mcu_train_layer *L = &r->layers[i];
        char bsym[16], xsym[16];
        snprintf(bsym, sizeof bsym, L->bias ? "b%u" : "NULL", i);
        input_sym(r, i, xsym, sizeof xsym);
        if (perm_of(r, i)) { /* the host's Transpose of the Conv's codes into this layer's input */
            char psym[16];
            prev_sym(r, i, psym, sizeof psym);
            mcu_tr_P(&o, "    qas_perm_s8(1, td%u, tp%u, %s, xt%u);\n", i, i, psym, i);
        }
        /* a fully connected layer after a Conv reads its output codes as they lie: the Flatten of NCHW */
        mcu_tr_P(&o, "    %s(&p%u, 1, %s, w%u, %s, y%u);\n", conv_of(r, i) ? "qas_conv_forward" : "qas_fc_forward", i,
                 xsym, i, bsym, i);
        /* without a ReLU the output codes go on as they are */
        if (L->relu)
            mcu_tr_P(&o, "    qas_relu_s8(%zu, %d, y%u, r%u);\n", out_n(r, i), L->y_zp, i, i);
        if (pool_of(r, i))
            mcu_tr_P(&o, "    qas_maxpool_forward(&pp%u, 1, %s%u, pl%u);\n", i, L->relu ? "r" : "y", i, i);
    }
    mcu_tr_P(&o, "    if (qas_softmax_xent_grad(1, %d, %s%u, p%u.y_scale, &label, dy%u) >= 0)\n        return -1;\n",
             last->o, last->relu ? "r" : "y", r->n_layers - 1, r->n_layers - 1, r->n_layers - 1);
    for (uint32_t j = r->n_layers; j-- > 0;) {
        const sy_mcu_train_layer *L = &r->layers[j];
        char xs[16], b[16], dx[16], wm[16], wv[16], bm[16], bv[16];
        input_sym(r, j, xs, sizeof xs);
        snprintf(b, sizeof b, L->bias ? "b%u" : "NULL", j);
        snprintf(dx, sizeof dx, !j ? "NULL" : pool_of(r, j - 1) ? "dpl%u" : "dy%u", j - 1);
        char pdx[16];
        memcpy(pdx, dx, sizeof pdx);
        if (perm_of(r, j)) /* the gradient of the permuted codes, then permuted back to the Conv's layout */
            snprintf(dx, sizeof dx, "dxt%u", j);
        snprintf(wm, sizeof wm, r->biases_only ? "NULL" : "wm%u", j);
        snprintf(wv, sizeof wv, r->biases_only ? "NULL" : "wv%u", j);
        snprintf(bm, sizeof bm, L->bias ? "bm%u" : "NULL", j);
        snprintf(bv, sizeof bv, L->bias ? "bv%u" : "NULL", j);
        if (L->relu)
            mcu_tr_P(&o, "    qas_relu_backward(%zu, %d, y%u, dy%u, dy%u);\n", out_n(r, j), L->y_zp, j, j, j);
        if (conv_of(r, j)) {
            /* the host's separate passes: the gradient, QAS, SGD, the re-quantization */
            char gw[16], gb[16];
            snprintf(gw, sizeof gw, r->biases_only ? "NULL" : "gw%u", j);
            snprintf(gb, sizeof gb, L->bias ? "gb%u" : "NULL", j);
            mcu_tr_P(&o, "    qas_conv_backward(&p%u, 1, %s, w%u, y%u, dy%u, %s, %s, %s);\n", j, xs, j, j, j, gw, gb, dx);
            mcu_tr_P(&o, "    qas_scale_grads(%d, %d, ws%u, p%u.x_scale, %s, %s);\n", L->o, L->k, j, j, gw, gb);
            if (!r->biases_only) {
                mcu_tr_P(&o, "    qas_sgd(%zu, lr, ", (size_t)L->o * (size_t)L->k);
                mcu_tr_pf(&o, r->momentum);
                mcu_tr_P(&o, ", gw%u, wv%u, wm%u);\n    qas_requant_w(%zu, wm%u, w%u);\n", j, j, j,
                         (size_t)L->o * (size_t)L->k, j, j);
            }
            if (L->bias) {
                mcu_tr_P(&o, "    qas_sgd(%d, lr, ", L->o);
                mcu_tr_pf(&o, r->momentum);
                mcu_tr_P(&o, ", gb%u, bv%u, bm%u);\n    qas_requant_b(%d, bm%u, b%u);\n", j, j, j, L->o, j, j);
            }
            pool_backward(&o, r, j);
            continue;
        }
        /* frozen weights are const; the kernel writes them only when it has masters */
        mcu_tr_P(&o, "    qas_fc_backward_update(&p%u, 1, %s, (int8_t *)w%u, %s, y%u, dy%u, %s, lr, ", j, xs, j, b, j, j, dx);
        mcu_tr_pf(&o, r->momentum);
        char row[16];
        snprintf(row, sizeof row, r->biases_only ? "NULL" : "row%u", j);
        mcu_tr_P(&o, ", %s, %s, %s, %s, %s);\n", wm, wv, bm, bv, row);
        if (perm_of(r, j))
            mcu_tr_P(&o, "    qas_unperm_f32(1, td%u, tp%u, dxt%u, %s);\n", j, j, j, pdx);
        pool_backward(&o, r, j);
    }
    mcu_tr_P(&o, "    return 0;\n}\n\n");
    /* the state: codes in hex, masters by hash (the format of expected_output.txt) */
    mcu_tr_P(&o, "static uint32_t fnv(const void *p, size_t n)\n{\n    const unsigned char *b = p;\n"
          "    uint32_t h = 2166136261u;\n    for (size_t i = 0; i < n; i++)\n        h = (h ^ b[i]) * 16777619u;\n"
          "    return h;\n}\n\n"
          "static void hex(const char *tag, const void *p, size_t n)\n{\n    const unsigned char *b = p;\n"
          "    printf(\"%%s %%lu:\", tag, (unsigned long)n);\n    for (size_t i = 0; i < n; i++)\n"
          "        printf(\" %%02x\", b[i]);\n    printf(\"\\n\");\n}\n\n");
    int32_t hc, hhw;
    bool any_hwc = false;
    for (uint32_t i = 0; i < r->n_layers; i++)
        any_hwc |= !r->biases_only && hwc_cols(r, i, &hc, &hhw);
    if (any_hwc) /* printed in the host's column order, read in place: no copy */
        mcu_tr_P(&o, "/* the weights after the NHWC Conv, held with columns (c, h, w), in the host's\n"
                     " * (h, w, c) order */\n"
                     "static void hex_hwc(const char *tag, const int8_t *w, long o, long c, long hw)\n{\n"
                     "    printf(\"%%s %%lu:\", tag, (unsigned long)(o * c * hw));\n"
                     "    for (long r = 0; r < o; r++)\n        for (long j = 0; j < hw; j++)\n"
                     "            for (long i = 0; i < c; i++)\n"
                     "                printf(\" %%02x\", (unsigned char)w[(r * c + i) * hw + j]);\n"
                     "    printf(\"\\n\");\n}\n\n"
                     "static uint32_t fnv_hwc(const float *m, long o, long c, long hw)\n{\n"
                     "    uint32_t h = 2166136261u;\n"
                     "    for (long r = 0; r < o; r++)\n        for (long j = 0; j < hw; j++)\n"
                     "            for (long i = 0; i < c; i++) {\n"
                     "                const unsigned char *b = (const unsigned char *)(m + (r * c + i) * hw + j);\n"
                     "                for (int k = 0; k < 4; k++)\n                    h = (h ^ b[k]) * 16777619u;\n"
                     "            }\n    return h;\n}\n\n");
    mcu_tr_P(&o, "void sy_train_print(void)\n{\n");
    for (uint32_t i = 0; i < r->n_layers; i++) {
        const sy_mcu_train_layer *L = &r->layers[i];
        if (!r->biases_only && hwc_cols(r, i, &hc, &hhw))
            mcu_tr_P(&o, "    hex_hwc(\"w%u\", w%u, %d, %d, %d);\n"
                         "    printf(\"wm%u fnv %%08lx\\n\", (unsigned long)fnv_hwc(wm%u, %d, %d, %d));\n", i, i, L->o, hc,
                     hhw, i, i, L->o, hc, hhw);
        else if (!r->biases_only)
            mcu_tr_P(&o, "    hex(\"w%u\", w%u, sizeof w%u);\n    printf(\"wm%u fnv %%08lx\\n\", (unsigned long)fnv(wm%u, "
                  "sizeof wm%u));\n", i, i, i, i, i, i);
        if (L->bias)
            mcu_tr_P(&o, "    hex(\"b%u\", b%u, sizeof b%u);\n    printf(\"bm%u fnv %%08lx\\n\", (unsigned long)fnv(bm%u, "
                  "sizeof bm%u));\n", i, i, i, i, i, i);
    }
    mcu_tr_P(&o, "}\n");
    SY_TRY(mcu_tr_tclose(r->dir, "src/train.c", &o));

    char fronts[320] = "";
    if (front_of(r))
        snprintf(fronts, sizeof fronts,
                 "/* in it: the front's workspace and the copy of its output, the first layer's input */\n"
                 "#define SY_TRAIN_FRONT_AT %llu\n#define SY_TRAIN_FRONT_BYTES %llu\n#define SY_TRAIN_INPUT_AT %llu\n",
                 (unsigned long long)p->b[B_FRONT(r->n_layers)].offset,
                 (unsigned long long)p->b[B_FRONT(r->n_layers)].size,
                 (unsigned long long)p->b[B_X(r->n_layers)].offset);
    SY_TRY(mcu_tr_topen(r->dir, "include/sy_train.h", &o));
    mcu_tr_P(&o, "/* Generated by switchyard codegen --train: the training package's API. */\n"
          "#ifndef SY_TRAIN_PKG_H\n#define SY_TRAIN_PKG_H\n\n#include <stdint.h>\n#include <stdio.h>\n\n"
          "#define SY_TRAIN_SAMPLES %u\n#define SY_TRAIN_SAMPLE_BYTES %d\n\n"
          "/* the front's input per sample (0: the samples are the front's codes) */\n"
          "#define SY_TRAIN_INPUT_BYTES %lu\n\n"
          "/* the arena of the step's transient buffers%s, 8-byte aligned */\n"
          "#define SY_TRAIN_ARENA_BYTES %zu\nextern uint64_t sy_train_arena[];\n%s\n"
          "/* the layers' state as written (codes, masters from the codes, zero momentum) */\n"
          "void sy_train_init(void);\n"
          "/* one QAS-INT8 step on one sample (the front's int8 codes); -1: label outside the classes */\n"
          "int sy_train_step(const int8_t *x, int32_t label, float lr);\n"
          "/* the state in expected_output.txt's format */\nvoid sy_train_print(void);\n\n"
          "extern const int8_t sy_train_samples[];\nextern const unsigned char sy_train_inputs[];\n"
          "extern const int32_t sy_train_labels[];\n\n#endif\n",
      r->n_samples, (int)in_n(r, 0), front_of(r) ? (unsigned long)r->front_input_bytes : 0ul,
      front_of(r) ? " and the front's workspace" : "", p->arena, fronts);
    SY_TRY(mcu_tr_tclose(r->dir, "include/sy_train.h", &o));

    SY_TRY(mcu_tr_topen(r->dir, "src/samples.c", &o));
    const char *fp = front_of(r);
    if (fp) {
        /* the front's input tensor per sample, as bytes: the model's input,
         * or its codes when the front's input QuantizeLinear ran on the host */
        mcu_tr_P(&o, "/* Generated by switchyard codegen --train: the samples (the front's inputs, which the\n"
                     " * frozen front in front/ turns into the first trained layer's codes) and labels. */\n"
                     "#include \"sy_train.h\"\n\n");
        size_t n = (size_t)r->n_samples * (size_t)r->front_input_bytes;
        const unsigned char *b = r->front_inputs;
        mcu_tr_P(&o, "const unsigned char sy_train_inputs[%zu] = {", n);
        for (size_t i = 0; i < n; i++)
            mcu_tr_P(&o, "%s%u,", i % 24 ? "" : "\n   ", b[i]);
        mcu_tr_P(&o, "\n};\n");
        arr_i8(&o, "const ", "sy_train_samples", NULL, 0);
    } else {
        mcu_tr_P(&o, "/* Generated by switchyard codegen --train: the samples (the frozen front's codes) and labels. */\n"
                     "#include \"sy_train.h\"\n\n");
        const sy_mcu_train_conv *C0 = conv_of(r, 0);
        if (C0 && nhwc_of(r)) {
            /* the front's NHWC [h, w, c] codes stored as the NCHW [c, h, w] the Conv reads: the host
             * session permutes each sample so (train_qas.c, s8_to_nchw), the package once, here */
            const size_t n = in_n(r, 0), hw = (size_t)C0->h * (size_t)C0->w, c = (size_t)C0->c;
            int8_t *v = malloc((size_t)r->n_samples * n);
            if (!v) {
                fclose(o.f);
                return H->status_new(SY_ERR_OUT_OF_MEMORY, "codegen --train: out of memory");
            }
            for (size_t s = 0; s < r->n_samples; s++)
                for (size_t i = 0; i < c; i++)
                    for (size_t j = 0; j < hw; j++)
                        v[s * n + i * hw + j] = r->samples[s * n + j * c + i];
            mcu_tr_P(&o, "/* each sample NCHW [%zu, %d, %d]: the front's NHWC codes permuted for the Conv */\n", c,
                     C0->h, C0->w);
            arr_i8(&o, "const ", "sy_train_samples", v, (size_t)r->n_samples * n);
            free(v);
        } else
            arr_i8(&o, "const ", "sy_train_samples", r->samples, (size_t)r->n_samples * in_n(r, 0));
        mcu_tr_P(&o, "const unsigned char sy_train_inputs[1] = {0};\n");
    }
    arr_i32(&o, "const ", "sy_train_labels", r->labels, r->n_samples);
    SY_TRY(mcu_tr_tclose(r->dir, "src/samples.c", &o));

    uint32_t lr_bits;
    memcpy(&lr_bits, &r->lr, 4);
    char create[256] = "";
    if (fp)
        snprintf(create, sizeof create,
                 "    if (%s_model_create(&front, SY_AT_FRONT, SY_TRAIN_FRONT_BYTES)) {\n"
                 "        printf(\"error: %s_model_create\\n\");\n        return 1;\n    }\n", fp, fp);
    SY_TRY(mcu_tr_topen(r->dir, "src/main.c", &o));
    mcu_tr_P(&o, "/* Generated by switchyard codegen --train: every sample once (one step each%s), then the\n"
          " * state and the retired instructions of the steps (0 off RISC-V). */\n"
          "#include \"sy_train.h\"\n\n#include <string.h>\n\n", fp ? ", the frozen front first" : "");
    if (fp) {
        char up[MCU_API_PREFIX_MAX + 1];
        size_t n = 0;
        for (; fp[n] && n < MCU_API_PREFIX_MAX; n++)
            up[n] = (char)(fp[n] >= 'a' && fp[n] <= 'z' ? fp[n] - 'a' + 'A' : fp[n]);
        up[n] = '\0';
        /* the copy of the front's output; for a first-layer NHWC Conv it
         * permutes the front's [h, w, c] codes to the [c, h, w] the Conv
         * reads (the host session's s8_to_nchw) in the same pass, so the
         * permutation costs no RAM and no copy of its own */
        char copy[640];
        const sy_mcu_train_conv *C0 = conv_of(r, 0);
        if (C0 && nhwc_of(r))
            snprintf(copy, sizeof copy,
                     "    /* its NHWC [%d, %d, %d] codes to the NCHW the Conv reads */\n"
                     "    const int8_t *f = %s_model_output_data(&front, 0);\n"
                     "    for (long i = 0; i < %d; i++)\n        for (long j = 0; j < %d; j++)\n"
                     "            x[i * %d + j] = f[j * %d + i];\n",
                     C0->h, C0->w, C0->c, fp, C0->c, C0->h * C0->w, C0->h * C0->w, C0->c);
        else
            snprintf(copy, sizeof copy, "    memcpy(x, %s_model_output_data(&front, 0), SY_TRAIN_SAMPLE_BYTES);\n", fp);
        /* The front is the inference package in front/, its weights const
         * in flash. Its workspace is bytes of the step's arena: the front
         * runs before any of the step's buffers is live, so the planner
         * lets them overlap it. Its output lies at an offset of that
         * workspace which the front's package chooses when it is written,
         * after this plan (so that a refused plan writes nothing), and the
         * step reads it up to the first layer's backward; it is copied to a
         * block of its own (one memcpy of the first layer's input a step),
         * so the rest of the front's workspace is free once the front ran,
         * and the plan needs nothing of the front's layout but its size,
         * which the #error holds it to. A workspace holds one predict's
         * activations and scratch, nothing kept from one to the next. */
        mcu_tr_P(&o, "#include \"%s_model.h\"\n\n"
                     "/* The front's workspace is bytes of the step's arena (SY_TRAIN_FRONT_AT): the front runs\n"
                     " * before the step's buffers are live, which may then take them. Its output, the first\n"
                     " * layer's input, is copied out to a block of its own (SY_TRAIN_INPUT_AT), live until the\n"
                     " * step's last read of it. */\n"
                     "#if %s_MODEL_WORKSPACE_BYTES > SY_TRAIN_FRONT_BYTES\n"
                     "#error \"the front needs more workspace than the training plan holds for it\"\n#endif\n"
                     "#define SY_AT_FRONT ((unsigned char *)sy_train_arena + SY_TRAIN_FRONT_AT)\n"
                     "static %s_model front;\n\n"
                     "/* the front on sample s: its output codes, NULL when it fails */\n"
                     "static const int8_t *sample(int s)\n{\n"
                     "    int8_t *x = (int8_t *)sy_train_arena + SY_TRAIN_INPUT_AT;\n"
                     "    unsigned char *in = %s_model_input_data(&front, 0);\n"
                     "    if (!in || %s_model_input_info(0)->bytes != SY_TRAIN_INPUT_BYTES ||\n"
                     "        %s_model_output_size(&front, 0) != SY_TRAIN_SAMPLE_BYTES)\n        return NULL;\n"
                     "    memcpy(in, sy_train_inputs + (long)s * SY_TRAIN_INPUT_BYTES, SY_TRAIN_INPUT_BYTES);\n"
                     "    if (%s_model_predict(&front))\n        return NULL;\n"
                     "%s"
                     "    return x;\n}\n\n",
                 fp, up, fp, fp, fp, fp, fp, copy);
    } else
        mcu_tr_P(&o, "static const int8_t *sample(int s) { return sy_train_samples + (long)s * SY_TRAIN_SAMPLE_BYTES; }\n\n");
    mcu_tr_P(&o, "#if defined(__riscv) && __riscv_xlen == 32\n"
          "static uint64_t rd_instret(void)\n{\n    uint32_t hi, lo, hi2;\n    do {\n"
          "        __asm__ volatile(\"csrr %%0, instreth\" : \"=r\"(hi));\n"
          "        __asm__ volatile(\"csrr %%0, instret\" : \"=r\"(lo));\n"
          "        __asm__ volatile(\"csrr %%0, instreth\" : \"=r\"(hi2));\n"
          "    } while (hi != hi2);\n    return (uint64_t)hi << 32 | lo;\n}\n"
          "#else\nstatic uint64_t rd_instret(void) { return 0; }\n#endif\n\n"
          "int main(void)\n{\n    sy_train_init();\n%s    uint32_t lr_bits = 0x%08lxu;\n    float lr;\n"
          "    memcpy(&lr, &lr_bits, 4);\n    uint64_t i0 = rd_instret();\n"
          "    for (int s = 0; s < SY_TRAIN_SAMPLES; s++) {\n        const int8_t *x = sample(s);\n"
          "        if (!x) {\n            printf(\"error: the front on sample %%d\\n\", s);\n            return 1;\n        }\n"
          "        if (sy_train_step(x, sy_train_labels[s], lr)) {\n"
          "            printf(\"error: label of sample %%d\\n\", s);\n            return 1;\n        }\n    }\n"
          "    uint64_t i1 = rd_instret();\n    sy_train_print();\n"
          "    printf(\"steps %%d instret %%lu per step %%lu\\n\", SY_TRAIN_SAMPLES, (unsigned long)(i1 - i0),\n"
          "           (unsigned long)((i1 - i0) / SY_TRAIN_SAMPLES));\n    return 0;\n}\n",
      create, (unsigned long)lr_bits);
    SY_TRY(mcu_tr_tclose(r->dir, "src/main.c", &o));
    return NULL;
}

static void hex_line(tout *o, const char *tag, uint32_t i, const void *p, size_t n)
{
    const uint8_t *b = p;
    mcu_tr_P(o, "%s%u %lu:", tag, i, (unsigned long)n);
    for (size_t k = 0; k < n; k++)
        mcu_tr_P(o, " %02x", b[k]);
    mcu_tr_P(o, "\n");
}

sy_status *mcu_tr_build_files(const char *dir, const mcu_chip *chip, uint64_t budget, const char *model_name,
                              const char *kernel_c)
{
    return mcu_tr_build_files_ex(dir, chip, budget, model_name, kernel_c, NULL);
}

sy_status *mcu_tr_build_files_ex(const char *dir, const mcu_chip *chip, uint64_t budget, const char *model_name,
                                 const char *kernel_c, const char *extra)
{
    tout o;
    SY_TRY(mcu_tr_topen(dir, "CMakeLists.txt", &o));
    mcu_tr_P(&o, "# Generated by switchyard codegen --train from %s for %s.\n"
          "# RISC-V: cmake -S . -B build -DCMAKE_TOOLCHAIN_FILE=toolchain-riscv32.cmake && cmake --build build\n"
          "cmake_minimum_required(VERSION 3.13)\nproject(sy_train C)\n"
          "set(CMAKE_C_STANDARD 99)\nset(CMAKE_C_STANDARD_REQUIRED ON)\nset(CMAKE_C_EXTENSIONS OFF)\n"
          "add_executable(sy_train_main src/main.c src/train.c src/samples.c %s)\n"
          "target_include_directories(sy_train_main PRIVATE include kernels)\n"
          "# -ffp-contract=off: no fused multiply-add, so the MCU computes the bits the host computed\n"
          "target_compile_options(sy_train_main PRIVATE -O2 -ffp-contract=off -Wall -Wextra)\n"
          "if(CMAKE_SYSTEM_NAME STREQUAL \"Generic\")\n"
          "  target_link_options(sy_train_main PRIVATE -Wl,--gc-sections)\n"
          "  set_target_properties(sy_train_main PROPERTIES SUFFIX \".elf\")\nendif()\n",
      model_name, chip->name, kernel_c);
    if (extra)
        mcu_tr_P(&o, "%s", extra);
    SY_TRY(mcu_tr_tclose(dir, "CMakeLists.txt", &o));
    SY_TRY(mcu_tr_topen(dir, "toolchain-riscv32.cmake", &o));
    /* RAM is the budget the plan was checked against, so an image whose
     * static state would not fit does not link */
    mcu_tr_P(&o, "# %s: %s. The image links at QEMU virt's RAM: 'flash' (text, rodata: the frozen weights and\n"
          "# the samples) first, then 'ram' (data, bss: the trained state; stack) of the budget's size.\n"
          "set(CMAKE_SYSTEM_NAME Generic)\nset(CMAKE_SYSTEM_PROCESSOR riscv32)\n"
          "set(SY_RISCV_PREFIX \"riscv64-unknown-elf-\" CACHE STRING \"cross toolchain prefix\")\n"
          "set(CMAKE_C_COMPILER ${SY_RISCV_PREFIX}gcc)\nset(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)\n"
          "set(CMAKE_C_FLAGS_INIT \"-march=rv32imfc -mabi=ilp32f --specs=picolibc.specs\")\n"
          "set(CMAKE_EXE_LINKER_FLAGS_INIT \"--oslib=semihost --crt0=semihost "
          "-Wl,--defsym=__flash=0x80000000 -Wl,--defsym=__flash_size=%llu "
          "-Wl,--defsym=__ram=0x%llx -Wl,--defsym=__ram_size=%llu\")\n",
      chip->name, chip->isa, (unsigned long long)chip->flash, 0x80000000ull + chip->flash,
      (unsigned long long)budget);
    SY_TRY(mcu_tr_tclose(dir, "toolchain-riscv32.cmake", &o));
    return NULL;
}

sy_status *mcu_tr_check_chip(const mcu_cfg *cfg, uint64_t want_budget, const mcu_chip **out, uint64_t *budget)
{
    const mcu_chip *chip = cfg ? cfg->chip : NULL;
    if (!chip)
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "codegen --train: no riscv_mcu target configured");
    if (!strcmp(chip->name, "hi3066"))
        return H->status_new(SY_ERR_UNSUPPORTED, "codegen --train: target hi3066: seed 001 §4: "
                                                 "\"当前端侧训练仅在ws63支持\" (on-device training is supported only on ws63)");
    /* the request's budget, else the whole SRAM (the training state is the
     * application's RAM, not the inference workspace's budget) */
    *budget = want_budget ? want_budget : chip->sram;
    if (*budget > chip->sram)
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "codegen --train: a budget of %llu bytes exceeds %s's SRAM of "
                                                      "%llu bytes", (unsigned long long)*budget, chip->name,
                             (unsigned long long)chip->sram);
    *out = chip;
    return NULL;
}

/* the package of a checked request, planned */
static sy_status *emit_planned(const mcu_chip *chip, uint64_t budget, const sy_mcu_train_request *r, const plan *p,
                               char *summary, size_t len)
{
    const char *fp = front_of(r);
    snprintf(summary, len,
             "training package for %s: %u layers%s, %u steps\n"
             "RAM plan of a step: peak %zu bytes = trained codes %zu + master copies %zu + momentum %zu + one arena %zu "
             "(gradients %zu, activations %zu, the front's workspace %zu: %zu bytes placed by lifetime); lower bound "
             "%zu bytes; budget %llu bytes (%s SRAM %llu)\n"
             "flash: frozen weights and scales %zu bytes, samples %zu bytes (%s)",
             chip->name, r->n_layers, r->biases_only ? " (biases only)" : "", r->n_samples, p->peak, p->codes,
             p->masters, p->momentum, p->arena, p->grads, p->acts, p->front_ws, p->grads + p->acts + p->front_ws,
             p->lower, (unsigned long long)budget, chip->name,
             (unsigned long long)chip->sram, p->flash_w, p->samples,
             fp ? "the front's inputs; it runs on the device, front/ its inference package"
                : "the front's codes, computed on the host");
    if (p->peak > budget)
        return H->status_new(SY_ERR_BUDGET,
                             "codegen --train: the training plan needs %zu bytes of RAM (trained codes %zu, master "
                             "copies %zu, momentum %zu, one arena %zu of gradients %zu, activations %zu and the "
                             "front's workspace %zu), over the budget of %llu bytes on %s: train fewer layers or "
                             "biases only",
                             p->peak, p->codes, p->masters, p->momentum, p->arena, p->grads, p->acts, p->front_ws,
                             (unsigned long long)budget, chip->name);
    if (p->flash_w + p->samples > chip->flash)
        return H->status_new(SY_ERR_BUDGET, "codegen --train: %zu bytes of flash (frozen weights and "
                                                        "samples) over %s's %llu: fewer samples",
                             p->flash_w + p->samples, chip->name, (unsigned long long)chip->flash);
    SY_TRY(mcu_tr_mkdirs(r->dir));
    char sub[4200];
    const char *subs[3] = {"src", "include", "kernels"};
    for (int i = 0; i < 3; i++) {
        snprintf(sub, sizeof sub, "%s/%s", r->dir, subs[i]);
        SY_TRY(mcu_tr_mkdirs(sub));
    }
    SY_TRY(write_train_c(chip, r, p));
    const char *kern[5] = {"qas.c", "qas.h", "tflk.h", "tflk_math.c", "sy_fixedpoint.h"};
    for (int i = 0; i < 5; i++)
        SY_TRY(mcu_tr_copy_source(r->dir, kern[i]));
    SY_TRY(mcu_tr_build_files_ex(r->dir, chip, budget, r->model_name, "kernels/qas.c kernels/tflk_math.c",
                                    fp ? "# the frozen front: the inference package in front/ (its library sy_model)\n"
                                      "add_subdirectory(front EXCLUDE_FROM_ALL)\n"
                                      "target_link_libraries(sy_train_main PRIVATE sy_model)\n"
                                    : NULL));
    tout o;
    SY_TRY(mcu_tr_topen(r->dir, "README.md", &o));
    mcu_tr_P(&o, "# QAS-INT8 training package for %s (generated by `switchyard codegen --train`)\n\n"
          "`src/main.c` runs one training step per sample of `src/samples.c` (%s\n"
          "of %s gives the first trained layer) and prints the trained state; `expected_output.txt` is\n"
          "what the host trainer holds after the same steps.\n\n%s\n\n"
          "```sh\ncmake -S . -B build -DCMAKE_TOOLCHAIN_FILE=toolchain-riscv32.cmake && cmake --build build\n"
          "qemu-system-riscv32 -machine virt -bios none -nographic -semihosting-config enable=on,target=native \\\n"
          "    -icount shift=0 -kernel build/sy_train_main.elf\n```\n",
      chip->name, fp ? "the front's inputs; the frozen front, the\ninference package in `front/`, runs on each first and its output"
                     : "the int8 codes the frozen front", r->model_name, summary);
    SY_TRY(mcu_tr_tclose(r->dir, "README.md", &o));
    SY_TRY(mcu_tr_topen(r->dir, "expected_output.txt", &o));
    for (uint32_t i = 0; i < r->n_layers; i++) {
        const sy_mcu_train_layer *L = &r->layers[i];
        size_t ok = (size_t)L->o * (size_t)L->k;
        if (!r->biases_only) {
            hex_line(&o, "w", i, L->w_final, ok);
            mcu_tr_P(&o, "wm%u fnv %08lx\n", i, (unsigned long)mcu_tr_fnv(L->w_master_final, ok * 4));
        }
        if (L->bias) {
            hex_line(&o, "b", i, L->bias_final, (size_t)L->o * 4);
            mcu_tr_P(&o, "bm%u fnv %08lx\n", i, (unsigned long)mcu_tr_fnv(L->b_master_final, (size_t)L->o * 4));
        }
    }
    return mcu_tr_tclose(r->dir, "expected_output.txt", &o);
}

sy_status *mcu_emit_train(const mcu_cfg *cfg, const sy_mcu_train_request *r, char *summary, size_t len)
{
    if (!r || r->struct_size < offsetof(sy_mcu_train_request, convs) || !r->dir || !r->n_layers || !r->layers ||
        !r->n_samples || !r->labels)
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "codegen --train: incomplete request");
    const char *fp = front_of(r);
    if (fp)
        SY_TRY(mcu_api_check_prefix(fp)); /* it begins the names main.c calls */
    if (fp ? !r->front_inputs || r->front_input_bytes < 1 || r->front_input_bytes > (1u << 24) ||
                 !r->front_workspace_bytes
           : !r->samples)
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "codegen --train: %s", fp ? "the front on the device: its "
                             "inputs or its workspace are missing or empty (or over 16 MB a sample)"
                                                                                 : "no samples");
    const mcu_chip *chip = NULL;
    uint64_t budget = 0;
    SY_TRY(mcu_tr_check_chip(cfg, r->sram_budget, &chip, &budget));
    for (uint32_t i = 0; i < r->n_layers; i++) {
        const sy_mcu_train_layer *L = &r->layers[i];
        if (L->k < 1 || L->o < 1 || !L->w || !L->w_scale || !L->w_final || (L->bias && !L->bias_final) ||
            (r->biases_only && !L->bias))
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "codegen --train: layer %u is inconsistent", i);
        const sy_mcu_train_conv *C = conv_of(r, i);
        if (C) {
            if (C->kh != 3 || C->kw != 3)
                return H->status_new(SY_ERR_UNSUPPORTED, "codegen --train: layer %u (Conv %dx%d): seed 001 §4, QAS "
                                                         "INT8 Conv2D/Conv: \"3x3 convolution only\"", i, C->kh, C->kw);
            /* bounded so that every size below is an int32 and the arrays are the kernels' */
            bool ok = C->c >= 1 && C->h >= 1 && C->w >= 1 && C->oh >= 1 && C->ow >= 1 && C->sh >= 1 && C->sw >= 1 &&
                      C->pt >= 0 && C->pl >= 0 && C->c <= 4096 && C->h <= 4096 && C->w <= 4096 && C->oh <= 4096 &&
                      C->ow <= 4096 && C->sh <= 64 && C->sw <= 64 && C->pt <= 64 && C->pl <= 64 &&
                      (int64_t)C->c * C->kh * C->kw == L->k && (int64_t)C->c * C->h * C->w <= (1 << 24) &&
                      (int64_t)L->o * C->oh * C->ow <= (1 << 24) && i + 1 < r->n_layers;
            /* a Conv reads the samples or the previous Conv's output */
            const sy_mcu_train_conv *P = i ? conv_of(r, i - 1) : NULL;
            const sy_mcu_train_pool *PQ = i ? pool_of(r, i - 1) : NULL;
            if (!ok || (i && (!P || C->c != r->layers[i - 1].o || C->h != (PQ ? PQ->oh : P->oh) ||
                              C->w != (PQ ? PQ->ow : P->ow))))
                return H->status_new(SY_ERR_INVALID_ARGUMENT, "codegen --train: layer %u (Conv) is inconsistent%s",
                                     i, i + 1 < r->n_layers ? "" : ": the last layer gives the logits, not a Conv");
        } else if (i && (size_t)L->k != next_n(r, i - 1))
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "codegen --train: layer %u reads %d values, layer %u gives "
                                                          "%zu", i, L->k, i - 1, next_n(r, i - 1));
        const int32_t *T = perm_of(r, i);
        if (T) { /* a Transpose of the previous NCHW Conv's 4-D codes keeping the batch first, as the host checked */
            bool ok = !C && i && conv_of(r, i - 1) && !nhwc_of(r) && T[0] == 0;
            for (int a = 1; ok && a < 4; a++)
                ok = (T[1] == a) + (T[2] == a) + (T[3] == a) == 1;
            if (!ok)
                return H->status_new(SY_ERR_INVALID_ARGUMENT, "codegen --train: layer %u's Transpose is inconsistent "
                                     "(a full permutation keeping the batch first of an NCHW Conv layer's codes, "
                                     "read by a fully connected layer)", i);
        }
        const sy_mcu_train_pool *Q = pool_of(r, i);
        if (Q) { /* the window within the Conv's output, floor mode, as the host session checked */
            bool ok = C && i + 1 < r->n_layers && !nhwc_of(r) && Q->kh >= 1 && Q->kw >= 1 && Q->kh <= 64 &&
                      Q->kw <= 64 && Q->sh >= 1 && Q->sw >= 1 && Q->sh <= 64 && Q->sw <= 64 && Q->pt >= 0 &&
                      Q->pl >= 0 && Q->pt < Q->kh && Q->pl < Q->kw && Q->oh >= 1 && Q->ow >= 1 &&
                      (Q->oh - 1) * Q->sh - Q->pt < C->oh && (Q->ow - 1) * Q->sw - Q->pl < C->ow;
            if (!ok)
                return H->status_new(SY_ERR_INVALID_ARGUMENT, "codegen --train: layer %u's MaxPool is inconsistent "
                                     "(a MaxPool follows an NCHW Conv that is not the last layer)", i);
        }
    }
    plan p = {0};
    sy_status *st = plan_of(r, &p);
    if (!st)
        st = emit_planned(chip, budget, r, &p, summary, len);
    free(p.b);
    return st;
}
