/*
 * Relu, Clip, BatchNormalization (inference) and MaxPool on the cpu
 * provider, on NCHW tensors in fp32 and fp16 storage. Inside a fused chain
 * (cpu_chain.c) the first three become part of the Conv before them; these
 * kernels run them wherever they stand alone. Same formulas as the
 * reference kernels: Relu keeps NaN, Clip is min then max, MaxPool skips the
 * padding.
 */
#include "cpu.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define H cpu_host
#define ERR(code, ...) H->status_new((code), __VA_ARGS__)

bool cpu_decline(char *why, size_t len, const char *text)
{
    if (why && len)
        snprintf(why, len, "%s", text);
    return false;
}

static bool scalar_f32(const sy_tensor *t, float *v)
{
    if (!t->data || cpu_numel(t) != 1)
        return false;
    if (t->dtype == SY_DT_FLOAT32)
        *v = *(const float *)t->data;
    else if (t->dtype == SY_DT_FLOAT16)
        *v = sy_f16_to_f32(*(const uint16_t *)t->data);
    else
        return false;
    return true;
}

bool cpu_activation_bounds(const sy_node *n, float *lo, float *hi)
{
    const char *op = H->node_op(n);
    if (!strcmp(op, "Relu")) {
        *lo = 0.0f;
        *hi = INFINITY;
        return true;
    }
    if (strcmp(op, "Clip"))
        return false;
    *lo = -INFINITY;
    *hi = INFINITY;
    if (H->node_opset(n) < 11) {
        *lo = sy_attr_float_or(H, n, "min", -FLT_MAX);
        *hi = sy_attr_float_or(H, n, "max", FLT_MAX);
        return true;
    }
    uint32_t ni = H->node_num_inputs(n);
    const sy_tensor *tl = ni > 1 ? H->node_input(n, 1) : NULL, *th = ni > 2 ? H->node_input(n, 2) : NULL;
    if ((tl && !scalar_f32(tl, lo)) || (th && !scalar_f32(th, hi)))
        return false;
    return true;
}

/* ---- Relu / Clip ---------------------------------------------------------- */

typedef struct act_state {
    float lo, hi;
    bool relu;
} act_state;

static bool act_accepts(const sy_node *n, char *why, size_t len)
{
    float lo, hi;
    if (!cpu_activation_bounds(n, &lo, &hi))
        return cpu_decline(why, len, "Clip bounds must be constant scalars");
    return true;
}

/* Every Relu has the same state: one shared record, not a heap block per
 * node (a chain of 10^6 Relu paid 32 MB for copies of it). */
static const act_state relu_state = {0.0f, INFINITY, true};

static void act_release(void *state)
{
    if (state != &relu_state)
        free(state);
}

static sy_status *act_prepare(sy_node *n, void **state)
{
    if (!strcmp(H->node_op(n), "Relu")) {
        *state = (void *)&relu_state;
        return NULL;
    }
    act_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    if (!cpu_activation_bounds(n, &s->lo, &s->hi)) {
        free(s);
        return ERR(SY_ERR_UNSUPPORTED, "Clip bounds must be constant scalars");
    }
    s->relu = false;
    *state = s;
    return NULL;
}

static sy_status *act_run(void *state, const sy_kernel_io *io)
{
    const act_state *s = state;
    const sy_tensor *x = io->inputs[0];
    size_t n = cpu_numel(x);
    if (x->dtype == SY_DT_FLOAT32) {
        const float *xd = x->data;
        float *yd = io->outputs[0]->data;
        float lo = s->lo, hi = s->hi;
        if (s->relu)
            for (size_t i = 0; i < n; i++)
                yd[i] = xd[i] > 0.0f || xd[i] != xd[i] ? xd[i] : 0.0f;
        else
            for (size_t i = 0; i < n; i++) {
                float v = xd[i] < lo ? lo : xd[i];
                yd[i] = v > hi ? hi : v;
            }
        return NULL;
    }
    const uint16_t *xd = x->data;
    uint16_t *yd = io->outputs[0]->data;
    if (s->relu) { /* on the bits: negative (sign set, not NaN) and -0 become +0 */
        for (size_t i = 0; i < n; i++) {
            uint16_t h = xd[i];
            yd[i] = (h & 0x8000u) && (h & 0x7fffu) <= 0x7c00u ? 0 : h;
        }
        return NULL;
    }
    for (size_t i = 0; i < n; i++) { /* in fp32, then rounded, as the reference's fp32 scope */
        float v = sy_f16_to_f32(xd[i]);
        v = v < s->lo ? s->lo : v;
        yd[i] = v > s->hi ? sy_f32_to_f16(s->hi) : v == sy_f16_to_f32(xd[i]) ? xd[i] : sy_f32_to_f16(v);
    }
    return NULL;
}

/* ---- BatchNormalization (inference form) ---------------------------------- */

sy_status *cpu_bn_coefficients(const sy_node *n, int64_t channels, float *a, float *b)
{
    float eps = sy_attr_float_or(H, n, "epsilon", 1e-5f);
    const sy_tensor *p[4];
    for (uint32_t i = 0; i < 4; i++) {
        p[i] = H->node_input(n, i + 1);
        if (!p[i] || !p[i]->data || cpu_numel(p[i]) != (size_t)channels ||
            (p[i]->dtype != SY_DT_FLOAT32 && p[i]->dtype != SY_DT_FLOAT16))
            return ERR(SY_ERR_UNSUPPORTED, "BatchNormalization parameters must be constants of %lld values",
                       (long long)channels);
    }
    for (int64_t c = 0; c < channels; c++) {
        double v[4];
        for (int i = 0; i < 4; i++)
            v[i] = p[i]->dtype == SY_DT_FLOAT16 ? sy_f16_to_f32(((const uint16_t *)p[i]->data)[c])
                                                : ((const float *)p[i]->data)[c];
        /* y = scale * (x - mean) / sqrt(var + eps) + B */
        double k = v[0] / sqrt(v[3] + (double)eps);
        a[c] = (float)k;
        b[c] = (float)(v[1] - v[2] * k);
    }
    return NULL;
}

static bool bn_accepts(const sy_node *n, char *why, size_t len)
{
    const sy_tensor *x = H->node_input(n, 0);
    if (!x || x->rank < 2)
        return cpu_decline(why, len, "X must have rank >= 2");
    if (H->node_num_outputs(n) > 1 || sy_attr_int_or(H, n, "training_mode", 0) != 0)
        return cpu_decline(why, len, "training mode (more than one output) is cpu_ref's");
    if (H->node_opset(n) < 9 && sy_attr_int_or(H, n, "spatial", 1) == 0)
        return cpu_decline(why, len, "spatial = 0 is cpu_ref's");
    for (uint32_t i = 1; i < 5; i++) {
        const sy_tensor *t = H->node_input(n, i);
        if (!t || !t->data || t->dtype != x->dtype || cpu_numel(t) != (size_t)x->dims[1])
            return cpu_decline(why, len, "scale, B, mean and var must be constants of X's type, one per channel");
    }
    return true;
}

typedef struct bn_state {
    int64_t n, c, inner;
    float *a, *b;
} bn_state;

static void bn_release(void *state)
{
    bn_state *s = state;
    if (s) {
        free(s->a);
        free(s);
    }
}

static sy_status *bn_prepare(sy_node *n, void **state)
{
    const sy_tensor *x = H->node_input(n, 0);
    bn_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->n = x->dims[0];
    s->c = x->dims[1];
    s->inner = 1;
    for (int32_t i = 2; i < x->rank; i++)
        s->inner *= x->dims[i];
    s->a = malloc(2 * (size_t)s->c * sizeof(float) + 1);
    if (!s->a) {
        free(s);
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    }
    s->b = s->a + s->c;
    sy_status *st = cpu_bn_coefficients(n, s->c, s->a, s->b);
    if (st) {
        bn_release(s);
        return st;
    }
    *state = s;
    return NULL;
}

static sy_status *bn_run(void *state, const sy_kernel_io *io)
{
    const bn_state *s = state;
    const sy_tensor *x = io->inputs[0];
    for (int64_t i = 0; i < s->n * s->c; i++) {
        float a = s->a[i % s->c], b = s->b[i % s->c];
        size_t off = (size_t)(i * s->inner);
        if (x->dtype == SY_DT_FLOAT32) {
            const float *xd = (const float *)x->data + off;
            float *yd = (float *)io->outputs[0]->data + off;
            for (int64_t j = 0; j < s->inner; j++)
                yd[j] = a * xd[j] + b;
        } else {
            const uint16_t *xd = (const uint16_t *)x->data + off;
            uint16_t *yd = (uint16_t *)io->outputs[0]->data + off;
            for (int64_t j = 0; j < s->inner; j++)
                yd[j] = sy_f32_to_f16(a * sy_f16_to_f32(xd[j]) + b);
        }
    }
    return NULL;
}

/* ---- MaxPool (2-D, NCHW) -------------------------------------------------- */

typedef struct pool_state {
    cpu_pool_geom g;
} pool_state;

bool cpu_maxpool_accepts(const sy_node *n, char *why, size_t len)
{
    const sy_tensor *x = H->node_input(n, 0);
    if (!x || x->rank != 4)
        return cpu_decline(why, len, "only 2-D MaxPool (rank 4)");
    if (H->node_num_outputs(n) > 1 && H->node_output(n, 1))
        return cpu_decline(why, len, "the Indices output is cpu_ref's");
    char ap[24];
    sy_attr_string_or(H, n, "auto_pad", "NOTSET", ap, sizeof ap);
    if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID"))
        return cpu_decline(why, len, "auto_pad SAME_* is cpu_ref's");
    if (sy_attr_int_or(H, n, "storage_order", 0) != 0)
        return cpu_decline(why, len, "storage_order = 1 is cpu_ref's");
    return true;
}

sy_status *cpu_maxpool_geometry(const sy_node *n, cpu_pool_geom *g)
{
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_output(n, 0);
    int64_t k[2], s2[2] = {1, 1}, d[2] = {1, 1}, p[4] = {0, 0, 0, 0};
    if (sy_attr_ints_copy(H, n, "kernel_shape", k, 3) != 2)
        return ERR(SY_ERR_INVALID_MODEL, "kernel_shape must have 2 values");
    int64_t ns = sy_attr_ints_copy(H, n, "strides", s2, 3), nd = sy_attr_ints_copy(H, n, "dilations", d, 3);
    char ap[24];
    sy_attr_string_or(H, n, "auto_pad", "NOTSET", ap, sizeof ap);
    int64_t np = strcmp(ap, "VALID") ? sy_attr_ints_copy(H, n, "pads", p, 5) : -1;
    if ((ns >= 0 && ns != 2) || (nd >= 0 && nd != 2) || (np >= 0 && np != 4))
        return ERR(SY_ERR_SHAPE, "strides, dilations and pads must have 2, 2 and 4 values");
    if (np < 0)
        p[0] = p[1] = p[2] = p[3] = 0;
    *g = (cpu_pool_geom){x->dims[0], x->dims[1], x->dims[2], x->dims[3], y->dims[2], y->dims[3], k[0], k[1],
                         s2[0],      s2[1],      d[0],       d[1],       p[0],       p[1],       p[2],       p[3]};
    /* ceil_mode: the last windows may pass the end padding; pad the end
     * further so a floor-rounding pool gives the same output size */
    for (int i = 0; i < 2; i++) {
        int64_t in = i ? g->iw : g->ih, out = i ? g->ow : g->oh, ks = i ? g->kw : g->kh, st = i ? g->sw : g->sh;
        int64_t ek = (ks - 1) * (i ? g->dw : g->dh) + 1, *pe = i ? &g->pr : &g->pb, pb = i ? g->pl : g->pt;
        int64_t need = (out - 1) * st + ek - (in + pb + *pe);
        if (need > 0)
            *pe += need;
    }
    return NULL;
}

static sy_status *pool_prepare(sy_node *n, void **state)
{
    pool_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = cpu_maxpool_geometry(n, &s->g);
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

/* a key whose unsigned order is the order of the fp16 values (not NaN);
 * -0 and +0 share one key, as they compare equal */
static inline uint16_t f16_key(uint16_t h)
{
    if ((h & 0x7fffu) == 0)
        return 0x8000u;
    return (h & 0x8000u) ? (uint16_t)~h : (uint16_t)(h | 0x8000u);
}

static sy_status *pool_run(void *state, const sy_kernel_io *io)
{
    const cpu_pool_geom *s = &((const pool_state *)state)->g;
    bool f16 = io->inputs[0]->dtype == SY_DT_FLOAT16;
    for (int64_t plane = 0; plane < s->n * s->c; plane++) {
        size_t ioff = (size_t)(plane * s->ih * s->iw), ooff = (size_t)(plane * s->oh * s->ow);
        for (int64_t oy = 0; oy < s->oh; oy++)
            for (int64_t ox = 0; ox < s->ow; ox++) {
                float m = -INFINITY;
                uint16_t mbits = 0xfc00u, mkey = f16_key(0xfc00u); /* -inf */
                for (int64_t ky = 0; ky < s->kh; ky++) {
                    int64_t iy = oy * s->sh - s->pt + ky * s->dh;
                    if (iy < 0 || iy >= s->ih)
                        continue;
                    for (int64_t kx = 0; kx < s->kw; kx++) {
                        int64_t ix = ox * s->sw - s->pl + kx * s->dw;
                        if (ix < 0 || ix >= s->iw)
                            continue;
                        size_t at = ioff + (size_t)(iy * s->iw + ix);
                        if (f16) { /* ordered on the bits: same order as the values, ties keep the first */
                            uint16_t bits = ((const uint16_t *)io->inputs[0]->data)[at];
                            uint16_t key = f16_key(bits);
                            if ((bits & 0x7fffu) <= 0x7c00u && key > mkey) { /* NaN never wins, as v > m */
                                mkey = key;
                                mbits = bits;
                            }
                        } else {
                            float v = ((const float *)io->inputs[0]->data)[at];
                            if (v > m)
                                m = v;
                        }
                    }
                }
                size_t o = ooff + (size_t)(oy * s->ow + ox);
                if (f16)
                    ((uint16_t *)io->outputs[0]->data)[o] = mbits;
                else
                    ((float *)io->outputs[0]->data)[o] = m;
            }
    }
    return NULL;
}

#define FLOATS (SY_DT_BIT(SY_DT_FLOAT32) | SY_DT_BIT(SY_DT_FLOAT16))
/* ---- GlobalAveragePool (2-D) ------------------------------------------------ */

static bool gap_accepts(const sy_node *n, char *why, size_t len)
{
    const sy_tensor *x = H->node_input(n, 0);
    if (!x || x->rank != 4)
        return cpu_decline(why, len, "only 2-D GlobalAveragePool (rank 4)");
    return true;
}

static sy_status *gap_prepare(sy_node *n, void **state)
{
    (void)n;
    *state = NULL;
    return NULL;
}

/* the mean of each plane, summed in order in fp32 (as the region's XNNPACK
 * kernel does, within rounding) */
static sy_status *gap_run(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *x = io->inputs[0];
    int64_t planes = x->dims[0] * x->dims[1], hw = x->dims[2] * x->dims[3];
    bool f16 = x->dtype == SY_DT_FLOAT16;
    for (int64_t p = 0; p < planes; p++) {
        float acc = 0.0f;
        for (int64_t i = 0; i < hw; i++)
            acc += f16 ? sy_f16_to_f32(((const uint16_t *)x->data)[p * hw + i]) : ((const float *)x->data)[p * hw + i];
        float mean = hw ? acc / (float)hw : NAN;
        if (f16)
            ((uint16_t *)io->outputs[0]->data)[p] = sy_f32_to_f16(mean);
        else
            ((float *)io->outputs[0]->data)[p] = mean;
    }
    return NULL;
}

static const sy_kernel_def kernels[] = {
    {sizeof(sy_kernel_def), "", "GlobalAveragePool", 1, 0, "cpu", FLOATS, 0, 0u, gap_accepts, gap_prepare, gap_run,
     NULL, NULL},
    {sizeof(sy_kernel_def), "", "Relu", 6, 0, "cpu", FLOATS, 0, 0u, act_accepts, act_prepare, act_run, act_release, NULL},
    {sizeof(sy_kernel_def), "", "Clip", 6, 0, "cpu", FLOATS, 0, 0u, act_accepts, act_prepare, act_run, act_release, NULL},
    {sizeof(sy_kernel_def), "", "BatchNormalization", 7, 0, "cpu", FLOATS, 0, 0u, bn_accepts, bn_prepare, bn_run,
     bn_release, NULL},
    {sizeof(sy_kernel_def), "", "MaxPool", 1, 0, "cpu", FLOATS, 0, 0u, cpu_maxpool_accepts, pool_prepare, pool_run,
     free,
     NULL},
};

sy_status *cpu_eltwise_register(const sy_host_api *host, sy_plugin *p)
{
    for (uint32_t i = 0; i < SY_COUNT_OF(kernels); i++)
        SY_TRY(host->register_kernel(p, &kernels[i]));
    return NULL;
}
