/*
 * Conv on the cpu provider: 1-D and 2-D convolution (grouped and depthwise
 * included) in fp32 and fp16 storage, run by XNNPACK's NHWC convolution.
 * prepare() reorders the constant weights once into XNNPACK's
 * [group][out][kh][kw][in] order (XNNPACK packs them for its micro-kernels)
 * and sizes the scratch; run() moves the input to NHWC fp32 in the scratch,
 * convolves, and moves the result back to NCHW (rounding to fp16 for fp16
 * storage), all split over the provider's pool.
 */
#include "cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xnnpack.h>

#define H cpu_host
#define ERR(code, ...) H->status_new((code), __VA_ARGS__)

typedef cpu_conv_geom conv_geom;

typedef struct conv_state {
    conv_geom g;
    sy_dtype dt;
    xnn_operator_t op;
    pthreadpool_t pool;
    cpu_isa isa;
} conv_state;

/* Geometry of a 1-D (as 2-D with height 1) or 2-D Conv, following the ONNX
 * rules for auto_pad, pads, strides and dilations. */
sy_status *cpu_conv_geometry(const sy_node *n, const sy_tensor *x, const sy_tensor *w, conv_geom *g)
{
    int32_t nsp = x->rank - 2;
    if (nsp < 1 || nsp > 2)
        return ERR(SY_ERR_UNSUPPORTED, "cpu Conv handles 1-D and 2-D inputs, got rank %d", (int)x->rank);
    if (w->rank != x->rank)
        return ERR(SY_ERR_SHAPE, "W must have the rank of X (%d), got %d", (int)x->rank, (int)w->rank);
    int64_t k[2], s[2] = {1, 1}, d[2] = {1, 1}, p[4] = {0, 0, 0, 0}, in[2];
    int64_t ks = sy_attr_ints_copy(H, n, "kernel_shape", k, 3);
    int64_t ns = sy_attr_ints_copy(H, n, "strides", s, 3);
    int64_t nd = sy_attr_ints_copy(H, n, "dilations", d, 3);
    int64_t np = sy_attr_ints_copy(H, n, "pads", p, 5);
    if ((ks >= 0 && ks != nsp) || (ns >= 0 && ns != nsp) || (nd >= 0 && nd != nsp) || (np >= 0 && np != 2 * nsp))
        return ERR(SY_ERR_SHAPE, "kernel_shape, strides, dilations and pads must have %d, %d, %d and %d values",
                   (int)nsp, (int)nsp, (int)nsp, (int)(2 * nsp));
    char ap[24];
    sy_attr_string_or(H, n, "auto_pad", "NOTSET", ap, sizeof ap);
    g->n = x->dims[0];
    g->c = x->dims[1];
    g->m = w->dims[0];
    g->group = sy_attr_int_or(H, n, "group", 1);
    if (g->group < 1 || g->c % g->group || g->m % g->group || w->dims[1] * g->group != g->c)
        return ERR(SY_ERR_SHAPE, "group = %lld does not split X's %lld channels and W's %lld x %lld",
                   (long long)g->group, (long long)g->c, (long long)g->m, (long long)w->dims[1]);
    /* 1-D: height 1; the single spatial axis is the width */
    int64_t kk[2] = {1, w->dims[x->rank - 1]}, ss[2] = {1, s[nsp - 1]}, dd[2] = {1, d[nsp - 1]};
    int64_t pb[2] = {0, p[nsp - 1]}, pe[2] = {0, p[2 * nsp - 1]};
    in[0] = 1;
    in[1] = x->dims[x->rank - 1];
    if (nsp == 2) {
        kk[0] = w->dims[2];
        ss[0] = s[0];
        dd[0] = d[0];
        pb[0] = p[0];
        pe[0] = p[2];
        in[0] = x->dims[2];
    }
    if (ks >= 0)
        for (int32_t i = 0; i < nsp; i++)
            if (k[i] != w->dims[2 + i])
                return ERR(SY_ERR_SHAPE, "kernel_shape[%d] = %lld differs from W's %lld", (int)i, (long long)k[i],
                           (long long)w->dims[2 + i]);
    int64_t out[2];
    for (int i = 0; i < 2; i++) {
        if (kk[i] < 1 || ss[i] < 1 || dd[i] < 1 || pb[i] < 0 || pe[i] < 0)
            return ERR(SY_ERR_INVALID_ARGUMENT, "kernel, strides, dilations must be >= 1 and pads >= 0");
        int64_t ek = (kk[i] - 1) * dd[i] + 1;
        if (!strcmp(ap, "NOTSET")) {
            if (in[i] + pb[i] + pe[i] < ek)
                return ERR(SY_ERR_SHAPE, "kernel (effective %lld) is larger than the padded input (%lld)",
                           (long long)ek, (long long)(in[i] + pb[i] + pe[i]));
            out[i] = (in[i] + pb[i] + pe[i] - ek) / ss[i] + 1;
        } else if (!strcmp(ap, "VALID")) {
            if (in[i] < ek)
                return ERR(SY_ERR_SHAPE, "kernel (effective %lld) is larger than the input (%lld)", (long long)ek,
                           (long long)in[i]);
            pb[i] = pe[i] = 0;
            out[i] = (in[i] - ek) / ss[i] + 1;
        } else if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
            out[i] = (in[i] + ss[i] - 1) / ss[i];
            int64_t total = (out[i] - 1) * ss[i] + ek - in[i];
            if (total < 0)
                total = 0;
            bool upper = !strcmp(ap, "SAME_UPPER");
            pb[i] = upper ? total / 2 : total - total / 2;
            pe[i] = total - pb[i];
        } else {
            return ERR(SY_ERR_INVALID_ARGUMENT, "auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID; got \"%s\"",
                       ap);
        }
    }
    g->ih = in[0];
    g->iw = in[1];
    g->oh = out[0];
    g->ow = out[1];
    g->kh = kk[0];
    g->kw = kk[1];
    g->sh = ss[0];
    g->sw = ss[1];
    g->dh = dd[0];
    g->dw = dd[1];
    g->pt = pb[0];
    g->pb = pe[0];
    g->pl = pb[1];
    g->pr = pe[1];
    return NULL;
}


/* Only constant weights and bias can be packed at prepare. */
bool cpu_conv_accepts(const sy_node *n, char *why, size_t len)
{
    const sy_tensor *x = H->node_input(n, 0), *w = H->node_input(n, 1);
    const sy_tensor *b = H->node_num_inputs(n) > 2 ? H->node_input(n, 2) : NULL;
    if (!x || !w || (x->rank != 3 && x->rank != 4))
        return cpu_decline(why, len, "only 1-D and 2-D Conv (rank 3 or 4)");
    if (!w->data || (b && !b->data))
        return cpu_decline(why, len, "weights and bias must be constants");
    if (w->dtype != x->dtype || (b && b->dtype != x->dtype))
        return cpu_decline(why, len, "X, W and B must share one element type");
    return true;
}

sy_status *cpu_conv_weights(const sy_node *n, const cpu_conv_geom *g, float **w_out, float **b_out)
{
    const sy_tensor *w = H->node_input(n, 1);
    const sy_tensor *b = H->node_num_inputs(n) > 2 ? H->node_input(n, 2) : NULL;
    int64_t gic = g->c / g->group, ksz = g->kh * g->kw;
    size_t wn = (size_t)(g->m * gic * ksz);
    float *wx = malloc(wn * sizeof(float) + 1), *bx = calloc((size_t)g->m + 1, sizeof(float));
    if (!wx || !bx) {
        free(wx);
        free(bx);
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory for %zu weights", wn);
    }
    bool f16 = w->dtype == SY_DT_FLOAT16;
    /* ONNX W[m][i][k] -> XNNPACK [m][k][i] (m already runs group-major) */
    for (int64_t m = 0; m < g->m; m++)
        for (int64_t i = 0; i < gic; i++)
            for (int64_t k = 0; k < ksz; k++) {
                size_t from = (size_t)((m * gic + i) * ksz + k), to = (size_t)((m * ksz + k) * gic + i);
                wx[to] = f16 ? sy_f16_to_f32(((const uint16_t *)w->data)[from]) : ((const float *)w->data)[from];
            }
    for (int64_t m = 0; b && m < g->m; m++)
        bx[m] = f16 ? sy_f16_to_f32(((const uint16_t *)b->data)[m]) : ((const float *)b->data)[m];
    *w_out = wx;
    *b_out = bx;
    return NULL;
}

sy_status *cpu_conv_create(const cpu_conv_geom *g, const float *w, const float *b, float lo, float hi,
                           xnn_operator_t *op)
{
    int64_t gic = g->c / g->group, goc = g->m / g->group;
    enum xnn_status xs = xnn_create_convolution2d_nhwc_f32(
        (uint32_t)g->pt, (uint32_t)g->pr, (uint32_t)g->pb, (uint32_t)g->pl, (uint32_t)g->kh, (uint32_t)g->kw,
        (uint32_t)g->sh, (uint32_t)g->sw, (uint32_t)g->dh, (uint32_t)g->dw, (uint32_t)g->group, (size_t)gic,
        (size_t)goc, (size_t)g->c, (size_t)g->m, w, b, lo, hi, 0, op);
    if (xs != xnn_status_success)
        return ERR(SY_ERR_UNSUPPORTED, "XNNPACK refused the convolution (status %d)", (int)xs);
    return NULL;
}

static void conv_release(void *state)
{
    conv_state *s = state;
    if (!s)
        return;
    if (s->op)
        xnn_delete_operator(s->op);
    free(s);
}

static size_t align64(size_t v) { return (v + 63u) & ~(size_t)63u; }

static sy_status *conv_prepare(sy_node *n, void **state)
{
    const sy_tensor *x = H->node_input(n, 0), *w = H->node_input(n, 1);
    const cpu_provider *prov = H->node_provider_state(n);
    conv_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = cpu_conv_geometry(n, x, w, &s->g);
    if (st) {
        free(s);
        return st;
    }
    const conv_geom *g = &s->g;
    s->dt = x->dtype;
    s->pool = cpu_pool_for(cpu_node_pool(n),
                           (double)(g->n * g->m * g->oh * g->ow) * (double)(g->c / g->group * g->kh * g->kw));
    s->isa = prov ? (cpu_isa)prov->isa : CPU_ISA_PORTABLE;
    float *wx = NULL, *bx = NULL;
    st = cpu_conv_weights(n, g, &wx, &bx);
    if (!st)
        st = cpu_conv_create(g, wx, bx, -INFINITY, INFINITY, &s->op);
    free(wx);
    free(bx);
    if (st) {
        free(s);
        return st;
    }
    size_t in_bytes = (size_t)(g->n * g->c * g->ih * g->iw) * sizeof(float);
    size_t out_bytes = (size_t)(g->n * g->m * g->oh * g->ow) * sizeof(float);
    H->node_set_scratch(n, align64(in_bytes) + align64(out_bytes) + 64);
    *state = s;
    return NULL;
}

static sy_status *conv_run(void *state, const sy_kernel_io *io)
{
    conv_state *s = state;
    const conv_geom *g = &s->g;
    size_t in_bytes = (size_t)(g->n * g->c * g->ih * g->iw) * sizeof(float);
    float *xin = (float *)(((uintptr_t)io->scratch + 63u) & ~(uintptr_t)63u);
    float *yout = (float *)((char *)xin + align64(in_bytes));
    int64_t ihw = g->ih * g->iw, ohw = g->oh * g->ow;
    cpu_layout_move(s->pool, s->isa, s->dt == SY_DT_FLOAT16 ? CPU_F16_TO_NHWC_F32 : CPU_TO_NHWC_F32,
                    io->inputs[0]->data, xin, g->n, g->c, ihw, g->c);
    /* the scratch is at the same address every run, so after the first run
     * setup only re-reads the pointers it already has (no allocation) */
    enum xnn_status xs =
        xnn_setup_convolution2d_nhwc_f32(s->op, (size_t)g->n, (size_t)g->ih, (size_t)g->iw, xin, yout, s->pool);
    if (xs == xnn_status_success)
        xs = xnn_run_operator(s->op, s->pool);
    if (xs != xnn_status_success)
        return ERR(SY_ERR_RUNTIME, "XNNPACK convolution failed (status %d)", (int)xs);
    cpu_layout_move(s->pool, s->isa, s->dt == SY_DT_FLOAT16 ? CPU_F32_TO_NCHW_F16 : CPU_TO_NCHW_F32, yout,
                    io->outputs[0]->data, g->n, g->m, ohw, g->m);
    return NULL;
}

static const sy_kernel_def conv_kernels[] = {
    {sizeof(sy_kernel_def), "", "Conv", 1, 0, "cpu", SY_DT_BIT(SY_DT_FLOAT32) | SY_DT_BIT(SY_DT_FLOAT16), 0, 0u,
     cpu_conv_accepts, conv_prepare, conv_run, conv_release, NULL},
};

sy_status *cpu_conv_register(const sy_host_api *host, sy_plugin *p)
{
    for (uint32_t i = 0; i < SY_COUNT_OF(conv_kernels); i++)
        SY_TRY(host->register_kernel(p, &conv_kernels[i]));
    return NULL;
}
