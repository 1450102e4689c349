/*
 * ops_nn: neural-network layers of the default ONNX domain, cpu_ref kernels.
 *
 * Conv, ConvTranspose, MaxPool, AveragePool, LpPool, GlobalAveragePool,
 * GlobalMaxPool, GlobalLpPool, BatchNormalization (inference),
 * InstanceNormalization, LayerNormalization, RMSNormalization, GroupNormalization, LpNormalization,
 * MeanVarianceNormalization, LRN, Gemm, MatMul, Dropout (training mode seeded like numpy).
 *
 * Kernels compute in fp32; f16/bf16/f64 run through sy_sdk's fp32 scope.
 * Conv is the SDK's sy_conv_f32 (im2col in column chunks + sy_gemm_f32, the
 * same code the emulators run); 1-D/2-D/3-D spatial dims are handled by
 * padding the geometry to 3 spatial dims.
 */
#include "nn_internal.h"

#include <math.h>
#include <stdlib.h>

const sy_host_api *sy_nn_host; /* process-wide: the same host table in every environment */
#define NSP 3                       /* spatial dims after padding */

static sy_status *run_f32(void *state, const sy_kernel_io *io, sy_run_fn fn) { return sy_run_as_f32(H, state, io, fn); }

/* ======================================================================== */
/* window geometry (Conv, pools)                                            */
/* ======================================================================== */

enum { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID };

typedef struct win_attrs {
    int auto_pad;
    int32_t nk; /* kernel_shape count (0: from W) */
    int64_t kernel[NSP], strides[NSP], dilations[NSP], pads[2 * NSP];
    int32_t nstrides, ndil, npads;
    bool ceil_mode;
    int64_t group;
    bool count_include_pad;
    int64_t storage_order;
    float p; /* LpPool */
} win_attrs;

typedef struct geom {
    int32_t nsp;                 /* real spatial dims */
    int64_t in[NSP], out[NSP], k[NSP], s[NSP], d[NSP], pb[NSP], pe[NSP];
} geom;

static sy_status *read_win_attrs(const sy_node *n, bool need_kernel, win_attrs *a)
{
    memset(a, 0, sizeof *a);
    char ap[24];
    sy_attr_string_or(H, n, "auto_pad", "NOTSET", ap, sizeof ap);
    if (!strcmp(ap, "NOTSET"))
        a->auto_pad = PAD_NOTSET;
    else if (!strcmp(ap, "SAME_UPPER"))
        a->auto_pad = PAD_SAME_UPPER;
    else if (!strcmp(ap, "SAME_LOWER"))
        a->auto_pad = PAD_SAME_LOWER;
    else if (!strcmp(ap, "VALID"))
        a->auto_pad = PAD_VALID;
    else
        return ERR(SY_ERR_INVALID_ARGUMENT, "auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID; got \"%s\"", ap);
    int64_t c = sy_attr_ints_copy(H, n, "kernel_shape", a->kernel, NSP + 1);
    if (c > NSP)
        return ERR(SY_ERR_UNSUPPORTED, "at most %d spatial dims are supported", NSP);
    if (c < 0 && need_kernel)
        return ERR(SY_ERR_INVALID_ARGUMENT, "attribute 'kernel_shape' is required");
    a->nk = c < 0 ? 0 : (int32_t)c;
    c = sy_attr_ints_copy(H, n, "strides", a->strides, NSP + 1);
    a->nstrides = c < 0 ? 0 : (int32_t)c;
    c = sy_attr_ints_copy(H, n, "dilations", a->dilations, NSP + 1);
    a->ndil = c < 0 ? 0 : (int32_t)c;
    c = sy_attr_ints_copy(H, n, "pads", a->pads, 2 * NSP + 1);
    a->npads = c < 0 ? 0 : (int32_t)c;
    if (a->nstrides > NSP || a->ndil > NSP || a->npads > 2 * NSP)
        return ERR(SY_ERR_UNSUPPORTED, "at most %d spatial dims are supported", NSP);
    a->ceil_mode = sy_attr_int_or(H, n, "ceil_mode", 0) != 0;
    a->group = sy_attr_int_or(H, n, "group", 1);
    a->count_include_pad = sy_attr_int_or(H, n, "count_include_pad", 0) != 0;
    a->storage_order = sy_attr_int_or(H, n, "storage_order", 0);
    a->p = (float)sy_attr_int_or(H, n, "p", 2);
    return NULL;
}

/* kernel: spatial kernel dims (from attr or W), count nsp */
static sy_status *compute_geom(const win_attrs *a, const sy_tensor *x, const int64_t *kernel, geom *g)
{
    int32_t nsp = x->rank - 2;
    if (nsp < 1 || nsp > NSP)
        return ERR(SY_ERR_SHAPE, "input must have 1 to %d spatial dims (rank 3-5), got rank %d", NSP, (int)x->rank);
    if (a->nk && a->nk != nsp)
        return ERR(SY_ERR_SHAPE, "kernel_shape has %d values but the input has %d spatial dims", (int)a->nk, (int)nsp);
    if (a->nstrides && a->nstrides != nsp)
        return ERR(SY_ERR_SHAPE, "strides has %d values but the input has %d spatial dims", (int)a->nstrides, (int)nsp);
    if (a->ndil && a->ndil != nsp)
        return ERR(SY_ERR_SHAPE, "dilations has %d values but the input has %d spatial dims", (int)a->ndil, (int)nsp);
    if (a->npads && a->npads != 2 * nsp)
        return ERR(SY_ERR_SHAPE, "pads has %d values but 2 * %d are required", (int)a->npads, (int)nsp);
    g->nsp = nsp;
    int32_t off = NSP - nsp;
    for (int32_t i = 0; i < NSP; i++) {
        g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1;
        g->pb[i] = g->pe[i] = 0;
    }
    for (int32_t i = 0; i < nsp; i++) {
        int32_t j = off + i;
        g->in[j] = x->dims[2 + i];
        g->k[j] = kernel[i];
        g->s[j] = a->nstrides ? a->strides[i] : 1;
        g->d[j] = a->ndil ? a->dilations[i] : 1;
        if (g->k[j] < 1 || g->s[j] < 1 || g->d[j] < 1)
            return ERR(SY_ERR_INVALID_ARGUMENT, "kernel, strides and dilations must be >= 1 (axis %d)", (int)i);
        int64_t ek = (g->k[j] - 1) * g->d[j] + 1; /* effective kernel */
        if (a->auto_pad == PAD_NOTSET) {
            g->pb[j] = a->npads ? a->pads[i] : 0;
            g->pe[j] = a->npads ? a->pads[nsp + i] : 0;
            if (g->pb[j] < 0 || g->pe[j] < 0)
                return ERR(SY_ERR_INVALID_ARGUMENT, "pads must be >= 0");
            int64_t span = g->in[j] + g->pb[j] + g->pe[j] - ek;
            if (span < 0)
                return ERR(SY_ERR_SHAPE, "kernel (effective size %lld) is larger than the padded input (%lld) on axis %d",
                           (long long)ek, (long long)(g->in[j] + g->pb[j] + g->pe[j]), (int)i);
            if (a->ceil_mode) {
                g->out[j] = (span + g->s[j] - 1) / g->s[j] + 1;
                if ((g->out[j] - 1) * g->s[j] >= g->in[j] + g->pb[j])
                    g->out[j]--;
            } else {
                g->out[j] = span / g->s[j] + 1;
            }
        } else if (a->auto_pad == PAD_VALID) {
            int64_t span = g->in[j] - ek;
            if (span < 0)
                return ERR(SY_ERR_SHAPE, "kernel (effective size %lld) is larger than the input (%lld) on axis %d",
                           (long long)ek, (long long)g->in[j], (int)i);
            g->out[j] = span / g->s[j] + 1;
        } else {
            g->out[j] = (g->in[j] + g->s[j] - 1) / g->s[j];
            int64_t total = (g->out[j] - 1) * g->s[j] + ek - g->in[j];
            if (total < 0)
                total = 0;
            if (a->auto_pad == PAD_SAME_UPPER) {
                g->pb[j] = total / 2;
                g->pe[j] = total - g->pb[j];
            } else {
                g->pe[j] = total / 2;
                g->pb[j] = total - g->pe[j];
            }
        }
    }
    return NULL;
}

static void geom_out_dims(const geom *g, int64_t n, int64_t c, int64_t *dims)
{
    dims[0] = n;
    dims[1] = c;
    for (int32_t i = 0; i < g->nsp; i++)
        dims[2 + i] = g->out[NSP - g->nsp + i];
}

/* ======================================================================== */
/* Conv                                                                     */
/* ======================================================================== */

static sy_status *conv_check(const sy_node *n, const win_attrs *a, const sy_tensor *x, const sy_tensor *w,
                             const sy_tensor *b, geom *g)
{
    (void)n;
    if (x->rank < 3)
        return ERR(SY_ERR_SHAPE, "X must have rank >= 3 (N, C, spatial...), got %d", (int)x->rank);
    if (w->rank != x->rank)
        return ERR(SY_ERR_SHAPE, "W must have the rank of X (%d), got %d", (int)x->rank, (int)w->rank);
    if (a->group < 1 || x->dims[1] % a->group || w->dims[0] % a->group)
        return ERR(SY_ERR_SHAPE, "group = %lld must divide input channels (%lld) and output channels (%lld)",
                   (long long)a->group, (long long)x->dims[1], (long long)w->dims[0]);
    if (w->dims[1] * a->group != x->dims[1])
        return ERR(SY_ERR_SHAPE, "W has %lld input channels per group but X has %lld channels in %lld groups",
                   (long long)w->dims[1], (long long)x->dims[1], (long long)a->group);
    if (a->nk)
        for (int32_t i = 0; i < a->nk; i++)
            if (a->kernel[i] != w->dims[2 + i])
                return ERR(SY_ERR_SHAPE, "kernel_shape[%d] = %lld differs from W's %lld", (int)i,
                           (long long)a->kernel[i], (long long)w->dims[2 + i]);
    if (b && (b->rank != 1 || b->dims[0] != w->dims[0]))
        return ERR(SY_ERR_SHAPE, "B must be 1-D with %lld values", (long long)w->dims[0]);
    if (x->dtype != w->dtype || (b && b->dtype != x->dtype))
        return ERR(SY_ERR_TYPE, "X, W and B must share one element type");
    return compute_geom(a, x, w->dims + 2, g);
}

static sy_status *infer_conv(sy_node *n)
{
    const sy_tensor *x, *w;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &w));
    const sy_tensor *b = H->node_num_inputs(n) > 2 ? H->node_input(n, 2) : NULL;
    win_attrs a;
    geom g;
    SY_TRY(read_win_attrs(n, false, &a));
    SY_TRY(conv_check(n, &a, x, w, b, &g));
    int64_t dims[SY_MAX_RANK];
    geom_out_dims(&g, x->dims[0], w->dims[0], dims);
    return H->node_set_output(n, 0, x->dtype, x->rank, dims);
}

typedef struct conv_state {
    win_attrs a;
} conv_state;

/* the SDK's NCHW convolution (sy_conv_f32, shared with the emulators) on this geometry */
static void conv_geom_of(const geom *g, const sy_tensor *x, const sy_tensor *w, int64_t group, sy_conv_geom *cg)
{
    cg->n = x->dims[0];
    cg->c = x->dims[1];
    cg->m = w->dims[0];
    cg->group = group;
    for (int i = 0; i < NSP; i++) {
        cg->in[i] = g->in[i];
        cg->out[i] = g->out[i];
        cg->k[i] = g->k[i];
        cg->s[i] = g->s[i];
        cg->d[i] = g->d[i];
        cg->pb[i] = g->pb[i];
        cg->pe[i] = g->pe[i];
    }
}

static sy_status *prepare_conv(sy_node *n, void **state)
{
    conv_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = read_win_attrs(n, false, &s->a);
    geom g;
    const sy_tensor *x = H->node_input(n, 0), *w = H->node_input(n, 1);
    if (!st)
        st = conv_check(n, &s->a, x, w, NULL, &g);
    if (st) {
        free(s);
        return st;
    }
    sy_conv_geom cg;
    conv_geom_of(&g, x, w, s->a.group, &cg);
    H->node_set_scratch(n, sy_f32_scope_bytes(H, n) + sy_conv_f32_scratch(&cg) + 64);
    *state = s;
    return NULL;
}

static sy_status *conv_f32(void *state, const sy_kernel_io *io)
{
    const conv_state *s = state;
    const sy_tensor *x = io->inputs[0], *w = io->inputs[1];
    const sy_tensor *b = io->n_inputs > 2 ? io->inputs[2] : NULL;
    geom g;
    SY_TRY(compute_geom(&s->a, x, w->dims + 2, &g));
    sy_conv_geom cg;
    conv_geom_of(&g, x, w, s->a.group, &cg);
    if (!sy_conv_f32(&cg, x->data, w->data, b ? b->data : NULL, io->outputs[0]->data, io->scratch, io->scratch_bytes))
        return ERR(SY_ERR_INTERNAL, "Conv scratch too small (%zu bytes)", io->scratch_bytes);
    return NULL;
}

static sy_status *run_conv(void *state, const sy_kernel_io *io) { return run_f32(state, io, conv_f32); }

/* ======================================================================== */
/* ConvTranspose                                                            */
/* ======================================================================== */

typedef struct convt_state {
    win_attrs a;
    int64_t output_padding[NSP], output_shape[NSP];
    int32_t nop, nos;
} convt_state;

/* geometry: g->in = X spatial, g->out = Y spatial, pads resolved */
static sy_status *convt_geom(const convt_state *s, const sy_tensor *x, const sy_tensor *w, geom *g)
{
    const win_attrs *a = &s->a;
    int32_t nsp = x->rank - 2;
    if (nsp < 1 || nsp > NSP)
        return ERR(SY_ERR_SHAPE, "input must have 1 to %d spatial dims, got rank %d", NSP, (int)x->rank);
    if (w->rank != x->rank)
        return ERR(SY_ERR_SHAPE, "W must have the rank of X (%d), got %d", (int)x->rank, (int)w->rank);
    if (a->group < 1 || x->dims[1] % a->group || w->dims[0] != x->dims[1])
        return ERR(SY_ERR_SHAPE, "W dim 0 (%lld) must equal input channels (%lld), divisible by group %lld",
                   (long long)w->dims[0], (long long)x->dims[1], (long long)a->group);
    if ((a->nstrides && a->nstrides != nsp) || (a->ndil && a->ndil != nsp) || (a->npads && a->npads != 2 * nsp) ||
        (s->nop && s->nop != nsp) || (s->nos && s->nos != nsp))
        return ERR(SY_ERR_SHAPE, "strides/dilations/pads/output_padding/output_shape must match %d spatial dims",
                   (int)nsp);
    g->nsp = nsp;
    int32_t off = NSP - nsp;
    for (int32_t i = 0; i < NSP; i++) {
        g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1;
        g->pb[i] = g->pe[i] = 0;
    }
    for (int32_t i = 0; i < nsp; i++) {
        int32_t j = off + i;
        g->in[j] = x->dims[2 + i];
        g->k[j] = w->dims[2 + i];
        g->s[j] = a->nstrides ? a->strides[i] : 1;
        g->d[j] = a->ndil ? a->dilations[i] : 1;
        int64_t op = s->nop ? s->output_padding[i] : 0;
        int64_t ek = (g->k[j] - 1) * g->d[j] + 1;
        if (s->nos) {
            g->out[j] = s->output_shape[i];
            int64_t total = g->s[j] * (g->in[j] - 1) + op + ek - g->out[j];
            if (total < 0)
                total = 0;
            if (a->auto_pad == PAD_SAME_UPPER || a->auto_pad == PAD_NOTSET) {
                g->pb[j] = total / 2;
                g->pe[j] = total - g->pb[j];
            } else {
                g->pe[j] = total / 2;
                g->pb[j] = total - g->pe[j];
            }
            if (a->auto_pad == PAD_NOTSET && a->npads) {
                g->pb[j] = a->pads[i];
                g->pe[j] = a->pads[nsp + i];
            }
        } else if (a->auto_pad == PAD_SAME_UPPER || a->auto_pad == PAD_SAME_LOWER) {
            g->out[j] = g->in[j] * g->s[j];
            int64_t total = g->s[j] * (g->in[j] - 1) + op + ek - g->out[j];
            if (total < 0)
                total = 0;
            if (a->auto_pad == PAD_SAME_UPPER) {
                g->pb[j] = total / 2;
                g->pe[j] = total - g->pb[j];
            } else {
                g->pe[j] = total / 2;
                g->pb[j] = total - g->pe[j];
            }
        } else {
            g->pb[j] = a->npads && a->auto_pad == PAD_NOTSET ? a->pads[i] : 0;
            g->pe[j] = a->npads && a->auto_pad == PAD_NOTSET ? a->pads[nsp + i] : 0;
            g->out[j] = g->s[j] * (g->in[j] - 1) + op + ek - g->pb[j] - g->pe[j];
        }
        if (g->out[j] < 0)
            return ERR(SY_ERR_SHAPE, "output size on axis %d would be negative", (int)i);
    }
    return NULL;
}

static sy_status *read_convt(const sy_node *n, convt_state *s)
{
    SY_TRY(read_win_attrs(n, false, &s->a));
    int64_t c = sy_attr_ints_copy(H, n, "output_padding", s->output_padding, NSP + 1);
    s->nop = c < 0 ? 0 : (int32_t)c;
    c = sy_attr_ints_copy(H, n, "output_shape", s->output_shape, NSP + 1);
    s->nos = c < 0 ? 0 : (int32_t)c;
    if (s->nop > NSP || s->nos > NSP)
        return ERR(SY_ERR_UNSUPPORTED, "at most %d spatial dims are supported", NSP);
    return NULL;
}

static sy_status *infer_convt(sy_node *n)
{
    const sy_tensor *x, *w;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &w));
    convt_state s;
    SY_TRY(read_convt(n, &s));
    geom g;
    SY_TRY(convt_geom(&s, x, w, &g));
    int64_t dims[SY_MAX_RANK];
    geom_out_dims(&g, x->dims[0], w->dims[1] * s.a.group, dims);
    return H->node_set_output(n, 0, x->dtype, x->rank, dims);
}

static sy_status *prepare_convt(sy_node *n, void **state)
{
    convt_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = read_convt(n, s);
    if (st) {
        free(s);
        return st;
    }
    H->node_set_scratch(n, sy_f32_scope_bytes(H, n));
    *state = s;
    return NULL;
}

/* direct scatter: y[n, m, o] += x[n, c, i] * w[c, m', k] where o = i*s - pb + k*d */
static sy_status *convt_f32(void *state, const sy_kernel_io *io)
{
    const convt_state *s = state;
    const sy_tensor *x = io->inputs[0], *w = io->inputs[1];
    const sy_tensor *b = io->n_inputs > 2 ? io->inputs[2] : NULL;
    sy_tensor *y = io->outputs[0];
    geom g;
    SY_TRY(convt_geom(s, x, w, &g));
    int64_t N = x->dims[0], C = x->dims[1], G = s->a.group, cg = C / G, mg = w->dims[1], M = mg * G;
    int64_t in_sp = g.in[0] * g.in[1] * g.in[2], out_sp = g.out[0] * g.out[1] * g.out[2];
    int64_t ksz = g.k[0] * g.k[1] * g.k[2];
    const float *xd = x->data, *wd = w->data;
    float *yd = y->data;
    for (int64_t nn = 0; nn < N; nn++)
        for (int64_t m = 0; m < M; m++) {
            float *yp = yd + (nn * M + m) * out_sp;
            float bv = b ? ((const float *)b->data)[m] : 0.0f;
            for (int64_t j = 0; j < out_sp; j++)
                yp[j] = bv;
        }
    for (int64_t nn = 0; nn < N; nn++)
        for (int64_t c = 0; c < C; c++) {
            int64_t gi = c / cg;
            const float *xp = xd + (nn * C + c) * in_sp;
            for (int64_t mm = 0; mm < mg; mm++) {
                int64_t m = gi * mg + mm;
                float *yp = yd + (nn * M + m) * out_sp;
                const float *wp = wd + (c * mg + mm) * ksz;
                for (int64_t id = 0; id < g.in[0]; id++)
                    for (int64_t ih = 0; ih < g.in[1]; ih++)
                        for (int64_t iw = 0; iw < g.in[2]; iw++) {
                            float xv = xp[(id * g.in[1] + ih) * g.in[2] + iw];
                            for (int64_t kd = 0; kd < g.k[0]; kd++) {
                                int64_t od = id * g.s[0] - g.pb[0] + kd * g.d[0];
                                if (od < 0 || od >= g.out[0])
                                    continue;
                                for (int64_t kh = 0; kh < g.k[1]; kh++) {
                                    int64_t oh = ih * g.s[1] - g.pb[1] + kh * g.d[1];
                                    if (oh < 0 || oh >= g.out[1])
                                        continue;
                                    const float *wr = wp + (kd * g.k[1] + kh) * g.k[2];
                                    float *yr = yp + (od * g.out[1] + oh) * g.out[2];
                                    for (int64_t kw = 0; kw < g.k[2]; kw++) {
                                        int64_t ow = iw * g.s[2] - g.pb[2] + kw * g.d[2];
                                        if (ow >= 0 && ow < g.out[2])
                                            yr[ow] += xv * wr[kw];
                                    }
                                }
                            }
                        }
            }
        }
    return NULL;
}

static sy_status *run_convt(void *state, const sy_kernel_io *io) { return run_f32(state, io, convt_f32); }

/* ======================================================================== */
/* pools                                                                    */
/* ======================================================================== */

enum { POOL_MAX, POOL_AVG, POOL_LP };

typedef struct pool_state {
    win_attrs a;
    int kind;
} pool_state;

static int pool_kind(const char *op)
{
    return !strcmp(op, "MaxPool") ? POOL_MAX : !strcmp(op, "LpPool") ? POOL_LP : POOL_AVG;
}

static sy_status *infer_pool(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    win_attrs a;
    geom g;
    SY_TRY(read_win_attrs(n, true, &a));
    SY_TRY(compute_geom(&a, x, a.kernel, &g));
    int64_t dims[SY_MAX_RANK];
    geom_out_dims(&g, x->dims[0], x->dims[1], dims);
    SY_TRY(H->node_set_output(n, 0, x->dtype, x->rank, dims));
    if (H->node_num_outputs(n) > 1)
        SY_TRY(H->node_set_output(n, 1, SY_DT_INT64, x->rank, dims));
    return NULL;
}

static sy_status *prepare_pool(sy_node *n, void **state)
{
    pool_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = read_win_attrs(n, true, &s->a);
    if (st) {
        free(s);
        return st;
    }
    s->kind = pool_kind(H->node_op(n));
    H->node_set_scratch(n, sy_f32_scope_bytes(H, n));
    *state = s;
    return NULL;
}

static sy_status *pool_f32(void *state, const sy_kernel_io *io)
{
    const pool_state *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    sy_tensor *yi = io->n_outputs > 1 ? io->outputs[1] : NULL;
    geom g;
    SY_TRY(compute_geom(&s->a, x, s->a.kernel, &g));
    int64_t planes = x->dims[0] * x->dims[1];
    int64_t in_sp = g.in[0] * g.in[1] * g.in[2], out_sp = g.out[0] * g.out[1] * g.out[2];
    const float *xd = x->data;
    float *yd = y->data;
    int64_t *id_out = yi ? yi->data : NULL;
    float p = s->a.p;
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *xp = xd + pl * in_sp;
        float *yp = yd + pl * out_sp;
        int64_t j = 0;
        for (int64_t od = 0; od < g.out[0]; od++)
            for (int64_t oh = 0; oh < g.out[1]; oh++)
                for (int64_t ow = 0; ow < g.out[2]; ow++, j++) {
                    int64_t d0 = od * g.s[0] - g.pb[0], h0 = oh * g.s[1] - g.pb[1], w0 = ow * g.s[2] - g.pb[2];
                    float acc = s->kind == POOL_MAX ? -INFINITY : 0.0f;
                    int64_t best = -1, cnt = 0, cnt_pad = 0;
                    for (int64_t kd = 0; kd < g.k[0]; kd++) {
                        int64_t id = d0 + kd * g.d[0];
                        bool din = id >= 0 && id < g.in[0];
                        bool dpad = id >= -g.pb[0] && id < g.in[0] + g.pe[0];
                        for (int64_t kh = 0; kh < g.k[1]; kh++) {
                            int64_t ih = h0 + kh * g.d[1];
                            bool hin = ih >= 0 && ih < g.in[1];
                            bool hpad = ih >= -g.pb[1] && ih < g.in[1] + g.pe[1];
                            for (int64_t kw = 0; kw < g.k[2]; kw++) {
                                int64_t iw = w0 + kw * g.d[2];
                                bool win = iw >= 0 && iw < g.in[2];
                                bool wpad = iw >= -g.pb[2] && iw < g.in[2] + g.pe[2];
                                if (dpad && hpad && wpad)
                                    cnt_pad++;
                                if (!(din && hin && win))
                                    continue;
                                int64_t off = (id * g.in[1] + ih) * g.in[2] + iw;
                                float v = xp[off];
                                cnt++;
                                if (s->kind == POOL_MAX) {
                                    if (v > acc || best < 0) {
                                        acc = v > acc || best < 0 ? v : acc;
                                        best = off;
                                    }
                                } else if (s->kind == POOL_AVG) {
                                    acc += v;
                                } else {
                                    acc += powf(fabsf(v), p);
                                }
                            }
                        }
                    }
                    if (s->kind == POOL_AVG) {
                        int64_t div = s->a.count_include_pad ? cnt_pad : cnt;
                        acc = div > 0 ? acc / (float)div : 0.0f;
                    } else if (s->kind == POOL_LP) {
                        acc = powf(acc, 1.0f / p);
                    }
                    yp[j] = acc;
                    if (id_out) {
                        int64_t idx = best < 0 ? 0 : best;
                        if (s->a.storage_order == 1 && best >= 0) {
                            /* column-major within the plane (2-D: h + w * H) */
                            int64_t w_ = best % g.in[2], h_ = (best / g.in[2]) % g.in[1], d_ = best / (g.in[2] * g.in[1]);
                            idx = d_ + g.in[0] * (h_ + g.in[1] * w_);
                        }
                        id_out[pl * out_sp + j] = pl * in_sp + idx;
                    }
                }
    }
    return NULL;
}

static sy_status *run_pool(void *state, const sy_kernel_io *io) { return run_f32(state, io, pool_f32); }

/* global pools */
static sy_status *infer_global_pool(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (x->rank < 2)
        return ERR(SY_ERR_SHAPE, "input must have rank >= 2 (N, C, ...), got %d", (int)x->rank);
    int64_t dims[SY_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++)
        dims[d] = d < 2 ? x->dims[d] : 1;
    return H->node_set_output(n, 0, x->dtype, x->rank, dims);
}

static sy_status *prepare_global_pool(sy_node *n, void **state)
{
    pool_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    const char *op = H->node_op(n);
    s->kind = !strcmp(op, "GlobalMaxPool") ? POOL_MAX : !strcmp(op, "GlobalLpPool") ? POOL_LP : POOL_AVG;
    s->a.p = (float)sy_attr_int_or(H, n, "p", 2);
    H->node_set_scratch(n, sy_f32_scope_bytes(H, n));
    *state = s;
    return NULL;
}

static sy_status *global_pool_f32(void *state, const sy_kernel_io *io)
{
    const pool_state *s = state;
    const sy_tensor *x = io->inputs[0];
    float *y = io->outputs[0]->data;
    int64_t planes = x->dims[0] * x->dims[1], sp = sy_dims_prod(x->dims, 2, x->rank);
    const float *xd = x->data;
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *xp = xd + pl * sp;
        if (s->kind == POOL_MAX) {
            float m = sp > 0 ? xp[0] : -INFINITY;
            for (int64_t i = 1; i < sp; i++)
                m = xp[i] > m ? xp[i] : m;
            y[pl] = m;
        } else if (s->kind == POOL_AVG) {
            double acc = 0;
            for (int64_t i = 0; i < sp; i++)
                acc += xp[i];
            y[pl] = sp > 0 ? (float)(acc / (double)sp) : 0.0f;
        } else {
            double acc = 0;
            for (int64_t i = 0; i < sp; i++)
                acc += pow(fabs(xp[i]), s->a.p);
            y[pl] = (float)pow(acc, 1.0 / s->a.p);
        }
    }
    return NULL;
}

static sy_status *run_global_pool(void *state, const sy_kernel_io *io) { return run_f32(state, io, global_pool_f32); }

/* ======================================================================== */
/* normalisations                                                           */
/* ======================================================================== */

typedef struct norm_state {
    bool training;
    float eps, alpha, beta, bias, momentum;
    int64_t size;
    int32_t axis;
    int64_t axes_mask; /* MVN */
    int64_t p;
} norm_state;

static sy_status *infer_batchnorm(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (x->rank < 2)
        return ERR(SY_ERR_SHAPE, "X must have rank >= 2 (N, C, ...), got %d", (int)x->rank);
    int64_t c = x->dims[1], inner = sy_dims_prod(x->dims, 2, x->rank);
    bool spatial = sy_attr_int_or(H, n, "spatial", 1) != 0;
    int64_t ne1 = 0;
    for (uint32_t i = 1; i < 5; i++) {
        const sy_tensor *t;
        SY_TRY(sy_need_input(H, n, i, &t));
        int64_t ne = sy_tensor_numel(t);
        if (t->dtype != x->dtype && H->node_opset(n) < 15)
            return ERR(SY_ERR_TYPE, "input %u must have X's element type %s", i, sy_dt_name(x->dtype));
        /* opset 15's T1 / T2 are float types, read through fp32 shadows: a
         * bool or integer var was read as float32 past its end (fuzz_onnx) */
        if (t->dtype != SY_DT_FLOAT32 && t->dtype != SY_DT_FLOAT16 && t->dtype != SY_DT_BFLOAT16 &&
            t->dtype != SY_DT_FLOAT64)
            return ERR(SY_ERR_TYPE, "input %u is %s; scale, B, mean and var must be float16, bfloat16, float or double",
                       i, sy_dt_name(t->dtype));
        if (ne != c && !(!spatial && ne == c * inner))
            return ERR(SY_ERR_SHAPE, "input %u must hold C = %lld values, got %lld", i, (long long)c, (long long)ne);
        /* the kernel reads all four per channel or all four per element,
         * as scale says: a mean of C values beside a scale of C x inner
         * was read past its end (found by fuzz_onnx) */
        if (i == 1)
            ne1 = ne;
        else if (ne != ne1)
            return ERR(SY_ERR_SHAPE, "input %u holds %lld values but scale holds %lld (spatial = 0: all four C x %lld, or all C)",
                       i, (long long)ne, (long long)ne1, (long long)inner);
    }
    SY_TRY(H->node_set_output(n, 0, x->dtype, x->rank, x->dims));
    for (uint32_t o = 1; o < H->node_num_outputs(n); o++) {
        const sy_tensor *m = H->node_input(n, o < 3 ? o + 2 : 3 + (o % 2));
        SY_TRY(H->node_set_output(n, o, m->dtype, m->rank, m->dims));
    }
    return NULL;
}

static sy_status *prepare_norm(sy_node *n, void **state)
{
    norm_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    const char *op = H->node_op(n);
    s->eps = sy_attr_float_or(H, n, "epsilon", !strcmp(op, "LRN") ? 0.0f : 1e-5f);
    s->alpha = sy_attr_float_or(H, n, "alpha", 1e-4f);
    s->beta = sy_attr_float_or(H, n, "beta", 0.75f);
    s->bias = sy_attr_float_or(H, n, "bias", 1.0f);
    s->size = sy_attr_int_or(H, n, "size", 1);
    s->momentum = sy_attr_float_or(H, n, "momentum", 0.9f);
    s->training = !strcmp(op, "BatchNormalization") && sy_attr_int_or(H, n, "training_mode", 0) != 0;
    s->p = sy_attr_int_or(H, n, "p", 2);
    const sy_tensor *x = H->node_input(n, 0);
    int64_t axis = sy_attr_int_or(H, n, "axis", -1);
    sy_status *st = NULL;
    if (!strcmp(op, "LayerNormalization") || !strcmp(op, "LpNormalization") || !strcmp(op, "RMSNormalization"))
        st = sy_norm_axis(H, axis, x->rank, false, "axis", &s->axis);
    if (!strcmp(op, "GroupNormalization"))
        s->size = sy_attr_int_or(H, n, "num_groups", 1);
    if (!strcmp(op, "MeanVarianceNormalization")) {
        int64_t axes[SY_MAX_RANK + 1] = {0, 2, 3};
        int64_t c = sy_attr_ints_copy(H, n, "axes", axes, SY_MAX_RANK + 1);
        if (c < 0)
            c = 3;
        for (int64_t i = 0; i < c && !st; i++) {
            int32_t a;
            st = sy_norm_axis(H, axes[i], x->rank, false, "axes value", &a);
            if (!st)
                s->axes_mask |= (int64_t)1 << a;
        }
    }
    if (st) {
        free(s);
        return st;
    }
    H->node_set_scratch(n, sy_f32_scope_bytes(H, n));
    *state = s;
    return NULL;
}

/* training_mode = 1 (opset 14+): batch statistics, running stats as outputs 1, 2 */
static sy_status *batchnorm_train_f32(const norm_state *s, const sy_kernel_io *io)
{
    const sy_tensor *x = io->inputs[0];
    const float *sc = io->inputs[1]->data, *bb = io->inputs[2]->data, *mu = io->inputs[3]->data,
                *var = io->inputs[4]->data;
    int64_t N = x->dims[0], C = x->dims[1], inner = sy_dims_prod(x->dims, 2, x->rank);
    const float *xd = x->data;
    float *yd = io->outputs[0]->data;
    float *rm = io->n_outputs > 1 && io->outputs[1] ? io->outputs[1]->data : NULL;
    float *rv = io->n_outputs > 2 && io->outputs[2] ? io->outputs[2]->data : NULL;
    double cnt = (double)(N * inner);
    for (int64_t c = 0; c < C; c++) {
        double m = 0, v = 0;
        for (int64_t nn = 0; nn < N; nn++)
            for (int64_t i = 0; i < inner; i++)
                m += xd[(nn * C + c) * inner + i];
        m = cnt > 0 ? m / cnt : 0;
        for (int64_t nn = 0; nn < N; nn++)
            for (int64_t i = 0; i < inner; i++) {
                double d = xd[(nn * C + c) * inner + i] - m;
                v += d * d;
            }
        v = cnt > 0 ? v / cnt : 0;
        float a = (float)(sc[c] / sqrt(v + s->eps)), b = (float)(bb[c] - m * a);
        for (int64_t nn = 0; nn < N; nn++)
            for (int64_t i = 0; i < inner; i++)
                yd[(nn * C + c) * inner + i] = xd[(nn * C + c) * inner + i] * a + b;
        if (rm)
            rm[c] = (float)(mu[c] * s->momentum + m * (1.0 - s->momentum));
        if (rv)
            rv[c] = (float)(var[c] * s->momentum + v * (1.0 - s->momentum));
    }
    return NULL;
}

static sy_status *batchnorm_f32(void *state, const sy_kernel_io *io)
{
    const norm_state *s = state;
    if (s->training)
        return batchnorm_train_f32(s, io);
    const sy_tensor *x = io->inputs[0];
    const float *sc = io->inputs[1]->data, *bb = io->inputs[2]->data, *mu = io->inputs[3]->data,
                *var = io->inputs[4]->data;
    int64_t N = x->dims[0], C = x->dims[1], inner = sy_dims_prod(x->dims, 2, x->rank);
    bool per_elem = sy_tensor_numel(io->inputs[1]) == C * inner && inner != 1;
    const float *xd = x->data;
    float *yd = io->outputs[0]->data;
    for (int64_t nn = 0; nn < N; nn++)
        for (int64_t c = 0; c < C; c++) {
            const float *xp = xd + (nn * C + c) * inner;
            float *yp = yd + (nn * C + c) * inner;
            if (per_elem) {
                for (int64_t i = 0; i < inner; i++) {
                    int64_t k = c * inner + i;
                    yp[i] = (xp[i] - mu[k]) / sqrtf(var[k] + s->eps) * sc[k] + bb[k];
                }
            } else {
                float a = sc[c] / sqrtf(var[c] + s->eps), b = bb[c] - mu[c] * a;
                for (int64_t i = 0; i < inner; i++)
                    yp[i] = xp[i] * a + b;
            }
        }
    /* optional extra outputs of old opsets: running mean / var pass through */
    for (uint32_t o = 1; o < io->n_outputs; o++) {
        sy_tensor *t = io->outputs[o];
        const sy_tensor *src = io->inputs[(o % 2) ? 3 : 4];
        if (t && t->data != src->data)
            memcpy(t->data, src->data, t->nbytes < src->nbytes ? t->nbytes : src->nbytes);
    }
    return NULL;
}

static sy_status *run_batchnorm(void *state, const sy_kernel_io *io) { return run_f32(state, io, batchnorm_f32); }

static sy_status *infer_instnorm(sy_node *n)
{
    const sy_tensor *x, *sc, *b;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &sc));
    SY_TRY(sy_need_input(H, n, 2, &b));
    if (x->rank < 3)
        return ERR(SY_ERR_SHAPE, "input must have rank >= 3 (N, C, spatial...), got %d", (int)x->rank);
    if (sy_tensor_numel(sc) != x->dims[1] || sy_tensor_numel(b) != x->dims[1])
        return ERR(SY_ERR_SHAPE, "scale and B must hold C = %lld values", (long long)x->dims[1]);
    SY_TRY(sy_check_same_dtype(H, n, 3));
    return sy_infer_unary(H, n);
}

static sy_status *instnorm_f32(void *state, const sy_kernel_io *io)
{
    const norm_state *s = state;
    const sy_tensor *x = io->inputs[0];
    const float *sc = io->inputs[1]->data, *bb = io->inputs[2]->data;
    int64_t N = x->dims[0], C = x->dims[1], inner = sy_dims_prod(x->dims, 2, x->rank);
    const float *xd = x->data;
    float *yd = io->outputs[0]->data;
    for (int64_t nn = 0; nn < N; nn++)
        for (int64_t c = 0; c < C; c++) {
            const float *xp = xd + (nn * C + c) * inner;
            float *yp = yd + (nn * C + c) * inner;
            double m = 0, v = 0;
            for (int64_t i = 0; i < inner; i++)
                m += xp[i];
            m /= (double)inner;
            for (int64_t i = 0; i < inner; i++)
                v += (xp[i] - m) * (xp[i] - m);
            v /= (double)inner;
            float a = (float)(sc[c] / sqrt(v + s->eps)), b = (float)(bb[c] - m * a);
            for (int64_t i = 0; i < inner; i++)
                yp[i] = xp[i] * a + b;
        }
    return NULL;
}

static sy_status *run_instnorm(void *state, const sy_kernel_io *io) { return run_f32(state, io, instnorm_f32); }

static sy_status *infer_layernorm(sy_node *n)
{
    const sy_tensor *x, *sc;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &sc));
    int32_t axis;
    SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", -1), x->rank, false, "axis", &axis));
    int64_t inner = sy_dims_prod(x->dims, axis, x->rank);
    const sy_tensor *b = H->node_num_inputs(n) > 2 ? H->node_input(n, 2) : NULL;
    int64_t ns = sy_tensor_numel(sc);
    if (ns != inner && ns != 1)
        return ERR(SY_ERR_SHAPE, "Scale must broadcast to the normalised shape (%lld values), got %lld",
                   (long long)inner, (long long)ns);
    if (b && sy_tensor_numel(b) != inner && sy_tensor_numel(b) != 1)
        return ERR(SY_ERR_SHAPE, "B must broadcast to the normalised shape (%lld values)", (long long)inner);
    SY_TRY(H->node_set_output(n, 0, x->dtype, x->rank, x->dims));
    int64_t dims[SY_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++)
        dims[d] = d < axis ? x->dims[d] : 1;
    sy_dtype st = (sy_dtype)sy_attr_int_or(H, n, "stash_type", SY_DT_FLOAT32);
    for (uint32_t o = 1; o < H->node_num_outputs(n) && o < 3; o++)
        SY_TRY(H->node_set_output(n, o, st, x->rank, dims));
    return NULL;
}

static sy_status *layernorm_f32(void *state, const sy_kernel_io *io)
{
    const norm_state *s = state;
    const sy_tensor *x = io->inputs[0];
    const sy_tensor *tb = io->n_inputs > 2 ? io->inputs[2] : NULL;
    const float *sc = io->inputs[1]->data, *bb = tb ? tb->data : NULL;
    bool sc1 = sy_tensor_numel(io->inputs[1]) == 1, b1 = tb && sy_tensor_numel(tb) == 1;
    int64_t outer = sy_dims_prod(x->dims, 0, s->axis), inner = sy_dims_prod(x->dims, s->axis, x->rank);
    const float *xd = x->data;
    float *yd = io->outputs[0]->data;
    float *mo = io->n_outputs > 1 && io->outputs[1] ? io->outputs[1]->data : NULL;
    float *io_ = io->n_outputs > 2 && io->outputs[2] ? io->outputs[2]->data : NULL;
    for (int64_t o = 0; o < outer; o++) {
        const float *xp = xd + o * inner;
        float *yp = yd + o * inner;
        double m = 0, v = 0;
        for (int64_t i = 0; i < inner; i++)
            m += xp[i];
        m /= (double)inner;
        for (int64_t i = 0; i < inner; i++)
            v += (xp[i] - m) * (xp[i] - m);
        v /= (double)inner;
        float inv = (float)(1.0 / sqrt(v + s->eps));
        for (int64_t i = 0; i < inner; i++) {
            float t = (float)(xp[i] - m) * inv * sc[sc1 ? 0 : i];
            yp[i] = bb ? t + bb[b1 ? 0 : i] : t;
        }
        if (mo)
            mo[o] = (float)m;
        if (io_)
            io_[o] = inv;
    }
    return NULL;
}

static sy_status *run_layernorm(void *state, const sy_kernel_io *io) { return run_f32(state, io, layernorm_f32); }

/* RMSNormalization (23): y = x / sqrt(mean(x^2 over axes [axis, rank)) + eps)
 * * scale, scale broadcasting (numpy, right-aligned) to the normalised dims. */
static sy_status *infer_rmsnorm(sy_node *n)
{
    const sy_tensor *x, *sc;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &sc));
    int32_t axis;
    SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", -1), x->rank, false, "axis", &axis));
    int32_t nr = x->rank - axis;
    bool ok = sc->rank <= nr;
    for (int32_t d = 0; ok && d < sc->rank; d++) {
        int64_t sd = sc->dims[sc->rank - 1 - d], xd = x->dims[x->rank - 1 - d];
        ok = sd == xd || sd == 1;
    }
    if (!ok) {
        char a[96], b[96];
        return ERR(SY_ERR_SHAPE, "scale %s must broadcast to the normalised dims %s",
                   sy_shape_str(sc->rank, sc->dims, a, sizeof a), sy_shape_str(nr, x->dims + axis, b, sizeof b));
    }
    if (sc->dtype != x->dtype)
        return ERR(SY_ERR_TYPE, "scale (%s) must have the dtype of X (%s)", sy_dt_name(sc->dtype),
                   sy_dt_name(x->dtype));
    return H->node_set_output(n, 0, x->dtype, x->rank, x->dims);
}

static sy_status *rmsnorm_f32(void *state, const sy_kernel_io *io)
{
    const norm_state *s = state;
    const sy_tensor *x = io->inputs[0], *sc = io->inputs[1];
    int32_t nr = x->rank - s->axis;
    int64_t outer = sy_dims_prod(x->dims, 0, s->axis), inner = sy_dims_prod(x->dims, s->axis, x->rank);
    /* scale strides over the normalised dims (0 where it broadcasts) */
    int64_t sst[SY_MAX_RANK] = {0}, st = 1;
    for (int32_t d = 0; d < sc->rank; d++) {
        int32_t xd = nr - 1 - d;
        int64_t dim = sc->dims[sc->rank - 1 - d];
        sst[xd] = dim == 1 ? 0 : st;
        st *= dim;
    }
    const float *xd = x->data, *sd = sc->data;
    float *yd = io->outputs[0]->data;
    for (int64_t o = 0; o < outer; o++) {
        const float *xp = xd + o * inner;
        float *yp = yd + o * inner;
        double ss = 0;
        for (int64_t i = 0; i < inner; i++)
            ss += (double)xp[i] * xp[i];
        float inv = (float)(1.0 / sqrt(ss / (double)inner + s->eps));
        int64_t idx[SY_MAX_RANK] = {0};
        for (int64_t i = 0; i < inner; i++) {
            int64_t so = 0;
            for (int32_t d = 0; d < nr; d++)
                so += idx[d] * sst[d];
            yp[i] = xp[i] * inv * sd[so];
            sy_index_next(nr, x->dims + s->axis, idx);
        }
    }
    return NULL;
}

static sy_status *run_rmsnorm(void *state, const sy_kernel_io *io) { return run_f32(state, io, rmsnorm_f32); }

/* GroupNormalization (18: scale/bias per group; 21: per channel): mean and
 * variance over each group of C / num_groups channels and the spatial dims. */
static sy_status *infer_groupnorm(sy_node *n)
{
    const sy_tensor *x, *sc, *b;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &sc));
    SY_TRY(sy_need_input(H, n, 2, &b));
    if (x->rank < 3)
        return ERR(SY_ERR_SHAPE, "X must have rank >= 3 (N, C, spatial...), got %d", (int)x->rank);
    int64_t g = sy_attr_int_or(H, n, "num_groups", 0), C = x->dims[1];
    if (g <= 0 || C % g)
        return ERR(SY_ERR_INVALID_ARGUMENT, "num_groups (%lld) must be > 0 and divide C = %lld", (long long)g,
                   (long long)C);
    int64_t want = H->node_opset(n) >= 21 ? C : g;
    if (sy_tensor_numel(sc) != want || sy_tensor_numel(b) != want)
        return ERR(SY_ERR_SHAPE, "scale and bias must hold %lld values (%s at opset %d)", (long long)want,
                   H->node_opset(n) >= 21 ? "C" : "num_groups", (int)H->node_opset(n));
    SY_TRY(sy_check_same_dtype(H, n, 3));
    return H->node_set_output(n, 0, x->dtype, x->rank, x->dims);
}

static sy_status *groupnorm_f32(void *state, const sy_kernel_io *io)
{
    const norm_state *s = state;
    const sy_tensor *x = io->inputs[0];
    const float *sc = io->inputs[1]->data, *bb = io->inputs[2]->data;
    int64_t N = x->dims[0], C = x->dims[1], G = s->size, inner = sy_dims_prod(x->dims, 2, x->rank);
    bool per_channel = sy_tensor_numel(io->inputs[1]) == C;
    int64_t cpg = C / G, len = cpg * inner;
    const float *xd = x->data;
    float *yd = io->outputs[0]->data;
    for (int64_t nn = 0; nn < N; nn++)
        for (int64_t g = 0; g < G; g++) {
            const float *xp = xd + (nn * C + g * cpg) * inner;
            float *yp = yd + (nn * C + g * cpg) * inner;
            double m = 0, v = 0;
            for (int64_t i = 0; i < len; i++)
                m += xp[i];
            m /= (double)len;
            for (int64_t i = 0; i < len; i++)
                v += (xp[i] - m) * (xp[i] - m);
            v /= (double)len;
            double inv = 1.0 / sqrt(v + s->eps);
            for (int64_t c = 0; c < cpg; c++) {
                int64_t k = per_channel ? g * cpg + c : g;
                for (int64_t i = 0; i < inner; i++)
                    yp[c * inner + i] = (float)(((double)xp[c * inner + i] - m) * inv * sc[k] + bb[k]);
            }
        }
    return NULL;
}

static sy_status *run_groupnorm(void *state, const sy_kernel_io *io) { return run_f32(state, io, groupnorm_f32); }

static sy_status *infer_lrn(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (x->rank < 3)
        return ERR(SY_ERR_SHAPE, "input must have rank >= 3 (N, C, spatial...), got %d", (int)x->rank);
    if (sy_attr_int_or(H, n, "size", 0) < 1)
        return ERR(SY_ERR_INVALID_ARGUMENT, "size must be >= 1");
    return sy_infer_unary(H, n);
}

static sy_status *lrn_f32(void *state, const sy_kernel_io *io)
{
    const norm_state *s = state;
    const sy_tensor *x = io->inputs[0];
    int64_t N = x->dims[0], C = x->dims[1], inner = sy_dims_prod(x->dims, 2, x->rank);
    int64_t lo = (s->size - 1) / 2, hi = s->size - 1 - lo;
    const float *xd = x->data;
    float *yd = io->outputs[0]->data;
    for (int64_t nn = 0; nn < N; nn++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < inner; i++) {
                float sum = 0;
                for (int64_t k = c - lo; k <= c + hi; k++)
                    if (k >= 0 && k < C) {
                        float v = xd[(nn * C + k) * inner + i];
                        sum += v * v;
                    }
                float v = xd[(nn * C + c) * inner + i];
                yd[(nn * C + c) * inner + i] = v / powf(s->bias + s->alpha / (float)s->size * sum, s->beta);
            }
    return NULL;
}

static sy_status *run_lrn(void *state, const sy_kernel_io *io) { return run_f32(state, io, lrn_f32); }

static sy_status *infer_lpnorm(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int32_t axis;
    SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", -1), x->rank, false, "axis", &axis));
    int64_t p = sy_attr_int_or(H, n, "p", 2);
    if (p != 1 && p != 2)
        return ERR(SY_ERR_INVALID_ARGUMENT, "p must be 1 or 2, got %lld", (long long)p);
    return sy_infer_unary(H, n);
}

static sy_status *lpnorm_f32(void *state, const sy_kernel_io *io)
{
    const norm_state *s = state;
    const sy_tensor *x = io->inputs[0];
    int64_t outer = sy_dims_prod(x->dims, 0, s->axis), ad = x->dims[s->axis];
    int64_t inner = sy_dims_prod(x->dims, s->axis + 1, x->rank);
    const float *xd = x->data;
    float *yd = io->outputs[0]->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double acc = 0;
            for (int64_t a = 0; a < ad; a++) {
                float v = xd[(o * ad + a) * inner + i];
                acc += s->p == 1 ? fabs(v) : (double)v * v;
            }
            double norm = s->p == 1 ? acc : sqrt(acc);
            for (int64_t a = 0; a < ad; a++) {
                int64_t k = (o * ad + a) * inner + i;
                yd[k] = norm > 0 ? (float)(xd[k] / norm) : 0.0f;
            }
        }
    return NULL;
}

static sy_status *run_lpnorm(void *state, const sy_kernel_io *io) { return run_f32(state, io, lpnorm_f32); }

static sy_status *mvn_f32(void *state, const sy_kernel_io *io)
{
    const norm_state *s = state;
    const sy_tensor *x = io->inputs[0];
    int64_t total = sy_tensor_numel(x);
    /* split dims into kept (outer key) and reduced; iterate by keys */
    int64_t xs[SY_MAX_RANK], kdims[SY_MAX_RANK], rdims[SY_MAX_RANK], kst[SY_MAX_RANK], rst[SY_MAX_RANK];
    int32_t nk = 0, nr = 0;
    sy_strides(x->rank, x->dims, xs);
    for (int32_t d = 0; d < x->rank; d++) {
        if (s->axes_mask & ((int64_t)1 << d)) {
            rdims[nr] = x->dims[d];
            rst[nr++] = xs[d];
        } else {
            kdims[nk] = x->dims[d];
            kst[nk++] = xs[d];
        }
    }
    int64_t nred = sy_numel(nr, rdims);
    if (total == 0 || nred == 0)
        return NULL;
    const float *xd = x->data;
    float *yd = io->outputs[0]->data;
    int64_t ki[SY_MAX_RANK] = {0};
    do {
        int64_t base = 0;
        for (int32_t d = 0; d < nk; d++)
            base += ki[d] * kst[d];
        double m = 0, v = 0;
        int64_t ri[SY_MAX_RANK] = {0};
        do {
            int64_t off = base;
            for (int32_t d = 0; d < nr; d++)
                off += ri[d] * rst[d];
            m += xd[off];
        } while (sy_index_next(nr, rdims, ri));
        m /= (double)nred;
        memset(ri, 0, sizeof ri);
        do {
            int64_t off = base;
            for (int32_t d = 0; d < nr; d++)
                off += ri[d] * rst[d];
            v += (xd[off] - m) * (xd[off] - m);
        } while (sy_index_next(nr, rdims, ri));
        v /= (double)nred;
        double sd = sqrt(v) + 1e-9;
        memset(ri, 0, sizeof ri);
        do {
            int64_t off = base;
            for (int32_t d = 0; d < nr; d++)
                off += ri[d] * rst[d];
            yd[off] = (float)((xd[off] - m) / sd);
        } while (sy_index_next(nr, rdims, ri));
    } while (sy_index_next(nk, kdims, ki));
    return NULL;
}

static sy_status *infer_mvn(sy_node *n) { return sy_infer_unary(H, n); }

static sy_status *run_mvn(void *state, const sy_kernel_io *io) { return run_f32(state, io, mvn_f32); }

/* ======================================================================== */
/* Gemm / MatMul                                                            */
/* ======================================================================== */

typedef struct gemm_state {
    bool ta, tb;
    float alpha, beta;
} gemm_state;

static sy_status *infer_gemm(sy_node *n)
{
    const sy_tensor *a, *b;
    SY_TRY(sy_need_input(H, n, 0, &a));
    SY_TRY(sy_need_input(H, n, 1, &b));
    if (a->rank != 2 || b->rank != 2)
        return ERR(SY_ERR_SHAPE, "A and B must be 2-D, got ranks %d and %d", (int)a->rank, (int)b->rank);
    SY_TRY(sy_check_same_dtype(H, n, -1));
    bool ta = sy_attr_int_or(H, n, "transA", 0) != 0, tb = sy_attr_int_or(H, n, "transB", 0) != 0;
    int64_t M = ta ? a->dims[1] : a->dims[0], K = ta ? a->dims[0] : a->dims[1];
    int64_t K2 = tb ? b->dims[1] : b->dims[0], N = tb ? b->dims[0] : b->dims[1];
    if (K != K2)
        return ERR(SY_ERR_SHAPE, "inner dims differ: op(A) is %lldx%lld, op(B) is %lldx%lld", (long long)M, (long long)K,
                   (long long)K2, (long long)N);
    int64_t dims[2] = {M, N};
    const sy_tensor *c = H->node_num_inputs(n) > 2 ? H->node_input(n, 2) : NULL;
    if (c) {
        sy_tensor y = {.struct_size = sizeof(sy_tensor), .dtype = a->dtype, .rank = 2, .dims = {M, N}};
        const sy_tensor *ts[2] = {&y, c};
        int32_t r;
        int64_t bd[SY_MAX_RANK];
        SY_TRY(sy_broadcast_shapes(H, 2, ts, &r, bd));
        if (r != 2 || bd[0] != M || bd[1] != N)
            return ERR(SY_ERR_SHAPE, "C must broadcast to (M, N) = (%lld, %lld)", (long long)M, (long long)N);
    }
    return H->node_set_output(n, 0, a->dtype, 2, dims);
}

static sy_status *prepare_gemm(sy_node *n, void **state)
{
    gemm_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->ta = sy_attr_int_or(H, n, "transA", 0) != 0;
    s->tb = sy_attr_int_or(H, n, "transB", 0) != 0;
    s->alpha = sy_attr_float_or(H, n, "alpha", 1.0f);
    s->beta = sy_attr_float_or(H, n, "beta", 1.0f);
    H->node_set_scratch(n, sy_f32_scope_bytes(H, n));
    *state = s;
    return NULL;
}

static sy_status *gemm_f32(void *state, const sy_kernel_io *io)
{
    const gemm_state *s = state;
    const sy_tensor *a = io->inputs[0], *b = io->inputs[1];
    const sy_tensor *c = io->n_inputs > 2 ? io->inputs[2] : NULL;
    sy_tensor *y = io->outputs[0];
    int64_t M = y->dims[0], N = y->dims[1], K = s->ta ? a->dims[0] : a->dims[1];
    float beta = 0.0f;
    if (c && s->beta != 0.0f) {
        if (!sy_broadcast_copy(c, y))
            return ERR(SY_ERR_SHAPE, "C does not broadcast to the output");
        beta = s->beta;
    }
    sy_gemm_f32(s->ta, s->tb, M, N, K, s->alpha, a->data, a->dims[1], b->data, b->dims[1], beta, y->data, N);
    return NULL;
}

static sy_status *run_gemm(void *state, const sy_kernel_io *io) { return run_f32(state, io, gemm_f32); }

/* MatMul shapes: numpy matmul with 1-D promotion and batch broadcasting */
typedef struct mm_shape {
    int64_t M, K, N;
    int32_t brank;
    int64_t bdims[SY_MAX_RANK], astr[SY_MAX_RANK], bstr[SY_MAX_RANK]; /* batch strides in matrices */
    int32_t yrank;
    int64_t ydims[SY_MAX_RANK];
} mm_shape;

static sy_status *mm_compute(const sy_tensor *a, const sy_tensor *b, mm_shape *m)
{
    if (a->rank < 1 || b->rank < 1)
        return ERR(SY_ERR_SHAPE, "MatMul inputs must have rank >= 1");
    int64_t ad[SY_MAX_RANK + 1], bd[SY_MAX_RANK + 1];
    int32_t ar = a->rank, br = b->rank;
    memcpy(ad, a->dims, sizeof(int64_t) * (size_t)ar);
    memcpy(bd, b->dims, sizeof(int64_t) * (size_t)br);
    bool a1 = ar == 1, b1 = br == 1;
    if (a1) { /* [K] -> [1, K] */
        ad[1] = ad[0];
        ad[0] = 1;
        ar = 2;
    }
    if (b1) { /* [K] -> [K, 1] */
        bd[1] = 1;
        br = 2;
    }
    m->M = ad[ar - 2];
    m->K = ad[ar - 1];
    m->N = bd[br - 1];
    if (bd[br - 2] != m->K)
        return ERR(SY_ERR_SHAPE, "inner dims differ: A has K = %lld, B has K = %lld", (long long)m->K,
                   (long long)bd[br - 2]);
    int32_t abr = ar - 2, bbr = br - 2;
    m->brank = abr > bbr ? abr : bbr;
    int64_t as = m->M * m->K, bs = m->K * m->N;
    for (int32_t d = m->brank - 1; d >= 0; d--) {
        int32_t ai = d - (m->brank - abr), bi = d - (m->brank - bbr);
        int64_t x = ai >= 0 ? ad[ai] : 1, y = bi >= 0 ? bd[bi] : 1;
        if (x != y && x != 1 && y != 1)
            return ERR(SY_ERR_SHAPE, "batch dims do not broadcast: %lld vs %lld", (long long)x, (long long)y);
        m->bdims[d] = x > y ? x : (x == 1 ? y : x);
        m->astr[d] = x == 1 ? 0 : as;
        m->bstr[d] = y == 1 ? 0 : bs;
        as *= x;
        bs *= y;
    }
    int32_t r = 0;
    for (int32_t d = 0; d < m->brank; d++)
        m->ydims[r++] = m->bdims[d];
    if (!a1)
        m->ydims[r++] = m->M;
    if (!b1)
        m->ydims[r++] = m->N;
    m->yrank = r;
    return NULL;
}

static sy_status *infer_matmul(sy_node *n)
{
    const sy_tensor *a, *b;
    SY_TRY(sy_need_input(H, n, 0, &a));
    SY_TRY(sy_need_input(H, n, 1, &b));
    SY_TRY(sy_check_same_dtype(H, n, -1));
    mm_shape m;
    SY_TRY(mm_compute(a, b, &m));
    return H->node_set_output(n, 0, a->dtype, m.yrank, m.ydims);
}

static sy_status *prepare_scope(sy_node *n, void **state)
{
    *state = NULL;
    H->node_set_scratch(n, sy_f32_scope_bytes(H, n));
    return NULL;
}

static sy_status *matmul_f32(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *a = io->inputs[0], *b = io->inputs[1];
    mm_shape m;
    SY_TRY(mm_compute(a, b, &m));
    const float *ad = a->data, *bd = b->data;
    float *yd = io->outputs[0]->data;
    int64_t nb = sy_numel(m.brank, m.bdims);
    /* B shared by every batch and A contiguous: one tall GEMM */
    bool b_shared = true;
    for (int32_t d = 0; d < m.brank; d++)
        b_shared &= m.bstr[d] == 0;
    if (b_shared) {
        bool a_full = true;
        for (int32_t d = 0; d < m.brank; d++)
            a_full &= m.astr[d] != 0 || m.bdims[d] == 1;
        if (a_full) {
            sy_gemm_f32(false, false, nb * m.M, m.N, m.K, 1.0f, ad, m.K, bd, m.N, 0.0f, yd, m.N);
            return NULL;
        }
    }
    int64_t idx[SY_MAX_RANK] = {0};
    for (int64_t i = 0; i < nb; i++) {
        int64_t ao = 0, bo = 0;
        for (int32_t d = 0; d < m.brank; d++) {
            ao += idx[d] * m.astr[d];
            bo += idx[d] * m.bstr[d];
        }
        sy_gemm_f32(false, false, m.M, m.N, m.K, 1.0f, ad + ao, m.K, bd + bo, m.N, 0.0f, yd + i * m.M * m.N, m.N);
        sy_index_next(m.brank, m.bdims, idx);
    }
    return NULL;
}

static sy_status *run_matmul(void *state, const sy_kernel_io *io) { return run_f32(state, io, matmul_f32); }

/* ======================================================================== */
/* Dropout                                                                  */
/* ======================================================================== */

/* Inference (training_mode absent/false or ratio 0): identity, mask all
 * true. Training mode: keep x where u >= ratio and scale by 1/(1-ratio), u
 * drawn uniform in [0, 1) in row-major order from MT19937 seeded with the
 * `seed` attribute (0 when absent) and turned into doubles the way numpy's
 * legacy RandomState does, so a seeded node reproduces the ONNX reference
 * (np.random.seed(seed); np.random.uniform(0, 1, x.shape)). */

typedef struct mt19937 {
    uint32_t mt[624];
    int idx;
} mt19937;

static void mt_seed(mt19937 *r, uint32_t seed)
{
    r->mt[0] = seed;
    for (int i = 1; i < 624; i++)
        r->mt[i] = 1812433253u * (r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) + (uint32_t)i;
    r->idx = 624;
}

static uint32_t mt_next(mt19937 *r)
{
    if (r->idx >= 624) {
        for (int i = 0; i < 624; i++) {
            uint32_t y = (r->mt[i] & 0x80000000u) | (r->mt[(i + 1) % 624] & 0x7fffffffu);
            r->mt[i] = r->mt[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        r->idx = 0;
    }
    uint32_t y = r->mt[r->idx++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

/* numpy random_sample: 53 random bits from two draws */
static double mt_double(mt19937 *r)
{
    uint32_t a = mt_next(r) >> 5, b = mt_next(r) >> 6;
    return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

static sy_status *infer_dropout(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (H->node_num_inputs(n) > 1) {
        const sy_tensor *tr = H->node_input(n, 1);
        double ratio;
        if (tr && sy_tensor_numel(tr) != 1)
            return ERR(SY_ERR_SHAPE, "ratio must be a scalar");
        if (tr && sy_tensor_scalar_f64(tr, &ratio) && !(ratio >= 0.0 && ratio < 1.0))
            return ERR(SY_ERR_INVALID_ARGUMENT, "ratio must be in [0, 1), got %g", ratio);
    }
    SY_TRY(H->node_set_output(n, 0, x->dtype, x->rank, x->dims));
    if (H->node_num_outputs(n) > 1)
        SY_TRY(H->node_set_output(n, 1, H->node_opset(n) >= 10 ? SY_DT_BOOL : x->dtype, x->rank, x->dims));
    return NULL;
}

typedef struct dropout_state {
    uint32_t seed;
} dropout_state;

static sy_status *prepare_dropout(sy_node *n, void **state)
{
    dropout_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->seed = (uint32_t)sy_attr_int_or(H, n, "seed", 0);
    *state = s;
    return NULL;
}

static sy_status *run_dropout(void *state, const sy_kernel_io *io)
{
    const dropout_state *s = state;
    double tm = 0, ratio = 0.5;
    if (io->n_inputs > 2 && io->inputs[2])
        sy_tensor_scalar_f64(io->inputs[2], &tm);
    if (io->n_inputs > 1 && io->inputs[1])
        sy_tensor_scalar_f64(io->inputs[1], &ratio);
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    sy_tensor *m = io->n_outputs > 1 ? io->outputs[1] : NULL;
    size_t n = (size_t)sy_tensor_numel(x);
    if (tm != 0.0 && ratio != 0.0) {
        if (!(ratio > 0.0 && ratio < 1.0))
            return ERR(SY_ERR_INVALID_ARGUMENT, "ratio must be in [0, 1), got %g", ratio);
        if (!sy_dt_is_float(x->dtype))
            return ERR(SY_ERR_TYPE, "training-mode Dropout needs a float input, got %s", sy_dt_name(x->dtype));
        mt19937 *r = malloc(sizeof *r);
        if (!r)
            return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
        mt_seed(r, s->seed);
        float scale = (float)(1.0 / (1.0 - ratio));
        for (size_t i = 0; i < n; i++) {
            bool keep = mt_double(r) >= ratio;
            double xv = sy_load_f64(x->data, x->dtype, i);
            /* float types scale in float like the reference; float64 in double */
            double v = !keep ? 0.0 : x->dtype == SY_DT_FLOAT64 ? xv / (1.0 - ratio) : (double)((float)xv * scale);
            sy_store_f64(y->data, y->dtype, i, v);
            if (m)
                sy_store_f64(m->data, m->dtype, i, keep ? 1.0 : 0.0);
        }
        free(r);
        return NULL;
    }
    SY_TRY(sy_run_copy_input0(state, io));
    if (m) {
        if (m->dtype == SY_DT_BOOL)
            memset(m->data, 1, n);
        else
            for (size_t i = 0; i < n; i++)
                sy_store_f64(m->data, m->dtype, i, 1.0);
    }
    return NULL;
}

/* ======================================================================== */
/* tables                                                                   */
/* ======================================================================== */

#define ATTR(n, t) {n, SY_ATTR_##t, false}
static const sy_attr_def a_conv[] = {ATTR("auto_pad", STRING), ATTR("dilations", INTS), ATTR("group", INT),
                                     ATTR("kernel_shape", INTS), ATTR("pads", INTS), ATTR("strides", INTS)};
static const sy_attr_def a_convt[] = {ATTR("auto_pad", STRING),       ATTR("dilations", INTS),
                                      ATTR("group", INT),             ATTR("kernel_shape", INTS),
                                      ATTR("output_padding", INTS),   ATTR("output_shape", INTS),
                                      ATTR("pads", INTS),             ATTR("strides", INTS)};
static const sy_attr_def a_pool_v1[] = {ATTR("auto_pad", STRING), {"kernel_shape", SY_ATTR_INTS, true},
                                        ATTR("pads", INTS), ATTR("strides", INTS)};
static const sy_attr_def a_maxpool_v8[] = {ATTR("auto_pad", STRING), {"kernel_shape", SY_ATTR_INTS, true},
                                           ATTR("pads", INTS), ATTR("storage_order", INT), ATTR("strides", INTS)};
static const sy_attr_def a_maxpool_v10[] = {ATTR("auto_pad", STRING),      ATTR("ceil_mode", INT),
                                            ATTR("dilations", INTS),       {"kernel_shape", SY_ATTR_INTS, true},
                                            ATTR("pads", INTS),            ATTR("storage_order", INT),
                                            ATTR("strides", INTS)};
static const sy_attr_def a_avgpool_v7[] = {ATTR("auto_pad", STRING), ATTR("count_include_pad", INT),
                                           {"kernel_shape", SY_ATTR_INTS, true}, ATTR("pads", INTS),
                                           ATTR("strides", INTS)};
static const sy_attr_def a_avgpool_v10[] = {ATTR("auto_pad", STRING), ATTR("ceil_mode", INT),
                                            ATTR("count_include_pad", INT), {"kernel_shape", SY_ATTR_INTS, true},
                                            ATTR("pads", INTS), ATTR("strides", INTS)};
static const sy_attr_def a_avgpool_v19[] = {ATTR("auto_pad", STRING),          ATTR("ceil_mode", INT),
                                            ATTR("count_include_pad", INT),    ATTR("dilations", INTS),
                                            {"kernel_shape", SY_ATTR_INTS, true}, ATTR("pads", INTS),
                                            ATTR("strides", INTS)};
static const sy_attr_def a_lppool_v2[] = {ATTR("auto_pad", STRING), {"kernel_shape", SY_ATTR_INTS, true},
                                          ATTR("p", INT), ATTR("pads", INTS), ATTR("strides", INTS)};
static const sy_attr_def a_lppool_v18[] = {ATTR("auto_pad", STRING), ATTR("ceil_mode", INT), ATTR("dilations", INTS),
                                           {"kernel_shape", SY_ATTR_INTS, true}, ATTR("p", INT), ATTR("pads", INTS),
                                           ATTR("strides", INTS)};
static const sy_attr_def a_p[] = {ATTR("p", INT)};
static const sy_attr_def a_bn_v1[] = {ATTR("consumed_inputs", INTS), ATTR("epsilon", FLOAT), ATTR("is_test", INT),
                                      ATTR("momentum", FLOAT), ATTR("spatial", INT)};
static const sy_attr_def a_bn_v6[] = {ATTR("epsilon", FLOAT), ATTR("is_test", INT), ATTR("momentum", FLOAT),
                                      ATTR("spatial", INT)};
static const sy_attr_def a_bn_v7[] = {ATTR("epsilon", FLOAT), ATTR("momentum", FLOAT), ATTR("spatial", INT)};
static const sy_attr_def a_bn_v9[] = {ATTR("epsilon", FLOAT), ATTR("momentum", FLOAT)};
static const sy_attr_def a_bn_v14[] = {ATTR("epsilon", FLOAT), ATTR("momentum", FLOAT), ATTR("training_mode", INT)};
static const sy_attr_def a_in_v1[] = {ATTR("consumed_inputs", INTS), ATTR("epsilon", FLOAT)};
static const sy_attr_def a_eps[] = {ATTR("epsilon", FLOAT)};
static const sy_attr_def a_rms[] = {ATTR("axis", INT), ATTR("epsilon", FLOAT), ATTR("stash_type", INT)};
static const sy_attr_def a_gn[] = {ATTR("epsilon", FLOAT), {"num_groups", SY_ATTR_INT, true}, ATTR("stash_type", INT)};
static const sy_attr_def a_ln[] = {ATTR("axis", INT), ATTR("epsilon", FLOAT), ATTR("stash_type", INT)};
static const sy_attr_def a_lrn[] = {ATTR("alpha", FLOAT), ATTR("beta", FLOAT), ATTR("bias", FLOAT),
                                    {"size", SY_ATTR_INT, true}};
static const sy_attr_def a_lpn[] = {ATTR("axis", INT), ATTR("p", INT)};
static const sy_attr_def a_mvn[] = {ATTR("axes", INTS)};
static const sy_attr_def a_gemm_v1[] = {ATTR("alpha", FLOAT), ATTR("beta", FLOAT), ATTR("broadcast", INT),
                                        ATTR("transA", INT), ATTR("transB", INT)};
static const sy_attr_def a_gemm_v7[] = {ATTR("alpha", FLOAT), ATTR("beta", FLOAT), ATTR("transA", INT),
                                        ATTR("transB", INT)};
static const sy_attr_def a_resize_v10[] = {ATTR("mode", STRING)};
static const sy_attr_def a_resize_v11[] = {ATTR("coordinate_transformation_mode", STRING), ATTR("cubic_coeff_a", FLOAT),
                                           ATTR("exclude_outside", INT), ATTR("extrapolation_value", FLOAT),
                                           ATTR("mode", STRING), ATTR("nearest_mode", STRING)};
static const sy_attr_def a_resize_v18[] = {ATTR("antialias", INT), ATTR("axes", INTS),
                                           ATTR("coordinate_transformation_mode", STRING), ATTR("cubic_coeff_a", FLOAT),
                                           ATTR("exclude_outside", INT), ATTR("extrapolation_value", FLOAT),
                                           ATTR("keep_aspect_ratio_policy", STRING), ATTR("mode", STRING),
                                           ATTR("nearest_mode", STRING)};
static const sy_attr_def a_upsample_v7[] = {ATTR("mode", STRING), {"scales", SY_ATTR_FLOATS, true}};
static const sy_attr_def a_drop_v1[] = {ATTR("consumed_inputs", INTS), ATTR("is_test", INT), ATTR("ratio", FLOAT)};
static const sy_attr_def a_drop_v6[] = {ATTR("is_test", INT), ATTR("ratio", FLOAT)};
static const sy_attr_def a_drop_v7[] = {ATTR("ratio", FLOAT)};
static const sy_attr_def a_drop_v12[] = {ATTR("seed", INT)};

static const sy_inplace_pair alias00[] = {{0, 0, true}};
static const sy_inplace_pair reuse00[] = {{0, 0, false}}; /* Dropout 12: training mode writes y */
static const sy_inplace_pair ip00[] = {{0, 0, false}};

#define S(op, since, mi, ma, mo, mao, attrs, infer) SY_SCHEMA(op, since, mi, ma, mo, mao, attrs, infer, SY_NO_INPLACE, 0)
#define SIP(op, since, mi, ma, mo, mao, attrs, infer) SY_SCHEMA(op, since, mi, ma, mo, mao, attrs, infer, SY_INPLACE(ip00), 0)

static const sy_op_schema schemas[] = {
    S("Conv", 1, 2, 3, 1, 1, SY_ATTRS(a_conv), infer_conv),
    S("ConvTranspose", 1, 2, 3, 1, 1, SY_ATTRS(a_convt), infer_convt),
    S("MaxPool", 1, 1, 1, 1, 1, SY_ATTRS(a_pool_v1), infer_pool),
    S("MaxPool", 8, 1, 1, 1, 2, SY_ATTRS(a_maxpool_v8), infer_pool),
    S("MaxPool", 10, 1, 1, 1, 2, SY_ATTRS(a_maxpool_v10), infer_pool),
    S("AveragePool", 1, 1, 1, 1, 1, SY_ATTRS(a_pool_v1), infer_pool),
    S("AveragePool", 7, 1, 1, 1, 1, SY_ATTRS(a_avgpool_v7), infer_pool),
    S("AveragePool", 10, 1, 1, 1, 1, SY_ATTRS(a_avgpool_v10), infer_pool),
    S("AveragePool", 19, 1, 1, 1, 1, SY_ATTRS(a_avgpool_v19), infer_pool),
    S("LpPool", 2, 1, 1, 1, 1, SY_ATTRS(a_lppool_v2), infer_pool),
    S("LpPool", 18, 1, 1, 1, 1, SY_ATTRS(a_lppool_v18), infer_pool),
    S("GlobalAveragePool", 1, 1, 1, 1, 1, SY_NO_ATTRS, infer_global_pool),
    S("GlobalMaxPool", 1, 1, 1, 1, 1, SY_NO_ATTRS, infer_global_pool),
    S("GlobalLpPool", 2, 1, 1, 1, 1, SY_ATTRS(a_p), infer_global_pool),
    S("BatchNormalization", 1, 5, 5, 1, 5, SY_ATTRS(a_bn_v1), infer_batchnorm),
    S("BatchNormalization", 6, 5, 5, 1, 5, SY_ATTRS(a_bn_v6), infer_batchnorm),
    S("BatchNormalization", 7, 5, 5, 1, 5, SY_ATTRS(a_bn_v7), infer_batchnorm),
    S("BatchNormalization", 9, 5, 5, 1, 5, SY_ATTRS(a_bn_v9), infer_batchnorm),
    S("BatchNormalization", 14, 5, 5, 1, 3, SY_ATTRS(a_bn_v14), infer_batchnorm),
    S("InstanceNormalization", 1, 3, 3, 1, 1, SY_ATTRS(a_in_v1), infer_instnorm),
    S("InstanceNormalization", 6, 3, 3, 1, 1, SY_ATTRS(a_eps), infer_instnorm),
    S("LayerNormalization", 17, 2, 3, 1, 3, SY_ATTRS(a_ln), infer_layernorm),
    S("RMSNormalization", 23, 2, 2, 1, 1, SY_ATTRS(a_rms), infer_rmsnorm),
    S("GroupNormalization", 18, 3, 3, 1, 1, SY_ATTRS(a_gn), infer_groupnorm),
    S("GroupNormalization", 21, 3, 3, 1, 1, SY_ATTRS(a_gn), infer_groupnorm),
    SIP("LRN", 1, 1, 1, 1, 1, SY_ATTRS(a_lrn), infer_lrn),
    S("LpNormalization", 1, 1, 1, 1, 1, SY_ATTRS(a_lpn), infer_lpnorm),
    S("MeanVarianceNormalization", 9, 1, 1, 1, 1, SY_ATTRS(a_mvn), infer_mvn),
    S("Gemm", 1, 3, 3, 1, 1, SY_ATTRS(a_gemm_v1), infer_gemm),
    S("Gemm", 7, 3, 3, 1, 1, SY_ATTRS(a_gemm_v7), infer_gemm),
    S("Gemm", 11, 2, 3, 1, 1, SY_ATTRS(a_gemm_v7), infer_gemm),
    S("MatMul", 1, 2, 2, 1, 1, SY_NO_ATTRS, infer_matmul),
    S("Resize", 10, 2, 2, 1, 1, SY_ATTRS(a_resize_v10), nn_infer_resize),
    S("Resize", 11, 1, 4, 1, 1, SY_ATTRS(a_resize_v11), nn_infer_resize),
    S("Resize", 18, 1, 4, 1, 1, SY_ATTRS(a_resize_v18), nn_infer_resize),
    S("Upsample", 7, 1, 1, 1, 1, SY_ATTRS(a_upsample_v7), nn_infer_resize),
    S("Upsample", 9, 2, 2, 1, 1, SY_ATTRS(a_resize_v10), nn_infer_resize),
    SY_SCHEMA("Dropout", 1, 1, 1, 1, 2, SY_ATTRS(a_drop_v1), infer_dropout, SY_INPLACE(alias00), 0),
    SY_SCHEMA("Dropout", 6, 1, 1, 1, 2, SY_ATTRS(a_drop_v6), infer_dropout, SY_INPLACE(alias00), 0),
    SY_SCHEMA("Dropout", 7, 1, 1, 1, 2, SY_ATTRS(a_drop_v7), infer_dropout, SY_INPLACE(alias00), 0),
    SY_SCHEMA("Dropout", 12, 1, 3, 1, 2, SY_ATTRS(a_drop_v12), infer_dropout, SY_INPLACE(reuse00), 0),
};

#define FL SY_DT_MASK_FLOATS
#define K(op, prep, run, rel) SY_CPU_KERNEL(op, 1, 0, FL, 0, prep, run, rel)

static const sy_kernel_def kernels[] = {
    K("Conv", prepare_conv, run_conv, sy_release_free),
    K("ConvTranspose", prepare_convt, run_convt, sy_release_free),
    K("MaxPool", prepare_pool, run_pool, sy_release_free),
    K("AveragePool", prepare_pool, run_pool, sy_release_free),
    K("LpPool", prepare_pool, run_pool, sy_release_free),
    K("GlobalAveragePool", prepare_global_pool, run_global_pool, sy_release_free),
    K("GlobalMaxPool", prepare_global_pool, run_global_pool, sy_release_free),
    K("GlobalLpPool", prepare_global_pool, run_global_pool, sy_release_free),
    K("BatchNormalization", prepare_norm, run_batchnorm, sy_release_free),
    K("InstanceNormalization", prepare_norm, run_instnorm, sy_release_free),
    K("LayerNormalization", prepare_norm, run_layernorm, sy_release_free),
    K("RMSNormalization", prepare_norm, run_rmsnorm, sy_release_free),
    K("GroupNormalization", prepare_norm, run_groupnorm, sy_release_free),
    K("LRN", prepare_norm, run_lrn, sy_release_free),
    K("LpNormalization", prepare_norm, run_lpnorm, sy_release_free),
    K("MeanVarianceNormalization", prepare_norm, run_mvn, sy_release_free),
    K("Gemm", prepare_gemm, run_gemm, sy_release_free),
    K("MatMul", prepare_scope, run_matmul, NULL),
    K("Resize", nn_prepare_resize, nn_run_resize, sy_release_free),
    K("Upsample", nn_prepare_resize, nn_run_resize, sy_release_free),
    SY_CPU_KERNEL("Dropout", 1, 0, SY_DT_MASK_PLAIN, 0, prepare_dropout, run_dropout, sy_release_free),
};

static sy_status *nn_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    sy_nn_host = host;
    SY_TRY(sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels)));
    SY_TRY(nn_loss_register(host, p));
    SY_TRY(nn_attention_register(host, p));
    SY_TRY(nn_gated_register(host, p));
    SY_TRY(nn_linear_attention_register(host, p));
    return nn_flex_attention_register(host, p);
}

static void nn_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "ops_nn",
    .version = "0.1.0",
    .description = "convolution, pooling, normalisation, Gemm/MatMul (ONNX default domain), cpu_ref kernels",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = nn_init,
    .fini = nn_fini,
};

SY_PLUGIN_DEFINE(desc)
