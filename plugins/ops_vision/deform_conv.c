/*
 * DeformConv (19, 22), fp32, 2-D: a convolution whose kernel taps are
 * moved by learned offsets. For output (oh, ow) and tap (i, j) of offset
 * group og, the input is sampled at
 *   y = oh * stride_h - pad_top + i * dilation_h + offset[n, og*2*kH*kW + 2(i kW + j), oh, ow]
 *   x = ow * stride_w - pad_left + j * dilation_w + offset[n, ... + 1, oh, ow]
 * bilinearly (corners outside the image read 0; nothing at all beyond one
 * pixel outside), times mask[n, og*kH*kW + i kW + j, oh, ow] (1 without a
 * mask). Columns of samples [C/group * kH * kW, oH * oW] are then
 * multiplied by the group's weights, and B added.
 */
#include "vision.h"

#include <math.h>
#include <stdlib.h>

static const sy_host_api *H;
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

typedef struct dc_geom {
    int64_t N, C, Hh, W, oc, kh, kw, oh, ow, group, og;
    int64_t sh, sw, dh, dw, pt, pl;
} dc_geom;

static sy_status *dc_geom_of(const sy_node *n, dc_geom *g)
{
    const sy_tensor *x, *w, *off;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &w));
    SY_TRY(sy_need_input(H, n, 2, &off));
    if (x->dtype != SY_DT_FLOAT32 || w->dtype != SY_DT_FLOAT32 || off->dtype != SY_DT_FLOAT32)
        return ERR(SY_ERR_TYPE, "X, W and offset must be float32");
    if (x->rank != 4 || w->rank != 4 || off->rank != 4)
        return ERR(SY_ERR_UNSUPPORTED, "only 2-D deformable convolution (4-D X, W, offset) is supported");
    g->N = x->dims[0];
    g->C = x->dims[1];
    g->Hh = x->dims[2];
    g->W = x->dims[3];
    g->oc = w->dims[0];
    g->kh = w->dims[2];
    g->kw = w->dims[3];
    g->group = sy_attr_int_or(H, n, "group", 1);
    g->og = sy_attr_int_or(H, n, "offset_group", 1);
    if (g->group <= 0 || g->og <= 0 || g->C % g->group || g->oc % g->group || g->C % g->og ||
        w->dims[1] != g->C / g->group)
        return ERR(SY_ERR_SHAPE, "group %lld / offset_group %lld must divide C %lld (and M %lld), W must be [M, C/group, kH, kW]",
                   (long long)g->group, (long long)g->og, (long long)g->C, (long long)g->oc);
    int64_t v[4], k;
    g->sh = g->sw = g->dh = g->dw = 1;
    g->pt = g->pl = 0;
    int64_t pb = 0, pr = 0;
    if ((k = sy_attr_ints_copy(H, n, "kernel_shape", v, 2)) >= 0 && (k != 2 || v[0] != g->kh || v[1] != g->kw))
        return ERR(SY_ERR_SHAPE, "kernel_shape must match W's [%lld, %lld]", (long long)g->kh, (long long)g->kw);
    if ((k = sy_attr_ints_copy(H, n, "strides", v, 2)) >= 0) {
        if (k != 2 || v[0] <= 0 || v[1] <= 0)
            return ERR(SY_ERR_INVALID_MODEL, "strides must be 2 positive values");
        g->sh = v[0];
        g->sw = v[1];
    }
    if ((k = sy_attr_ints_copy(H, n, "dilations", v, 2)) >= 0) {
        if (k != 2 || v[0] <= 0 || v[1] <= 0)
            return ERR(SY_ERR_INVALID_MODEL, "dilations must be 2 positive values");
        g->dh = v[0];
        g->dw = v[1];
    }
    if ((k = sy_attr_ints_copy(H, n, "pads", v, 4)) >= 0) {
        if (k != 4 || v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0)
            return ERR(SY_ERR_INVALID_MODEL, "pads must be 4 values >= 0");
        g->pt = v[0];
        g->pl = v[1];
        pb = v[2];
        pr = v[3];
    }
    g->oh = (g->Hh + g->pt + pb - g->dh * (g->kh - 1) - 1) / g->sh + 1;
    g->ow = (g->W + g->pl + pr - g->dw * (g->kw - 1) - 1) / g->sw + 1;
    if (g->oh <= 0 || g->ow <= 0)
        return ERR(SY_ERR_SHAPE, "the kernel does not fit the padded input");
    if (off->dims[0] != g->N || off->dims[1] != g->og * 2 * g->kh * g->kw || off->dims[2] != g->oh ||
        off->dims[3] != g->ow)
        return ERR(SY_ERR_SHAPE, "offset must be [%lld, %lld, %lld, %lld]", (long long)g->N,
                   (long long)(g->og * 2 * g->kh * g->kw), (long long)g->oh, (long long)g->ow);
    const sy_tensor *b = H->node_num_inputs(n) > 3 ? H->node_input(n, 3) : NULL;
    const sy_tensor *m = H->node_num_inputs(n) > 4 ? H->node_input(n, 4) : NULL;
    if (b && (b->dtype != SY_DT_FLOAT32 || sy_tensor_numel(b) != g->oc))
        return ERR(SY_ERR_SHAPE, "B must be float32 [%lld]", (long long)g->oc);
    if (m && (m->dtype != SY_DT_FLOAT32 || m->rank != 4 || m->dims[0] != g->N || m->dims[1] != g->og * g->kh * g->kw ||
              m->dims[2] != g->oh || m->dims[3] != g->ow))
        return ERR(SY_ERR_SHAPE, "mask must be float32 [%lld, %lld, %lld, %lld]", (long long)g->N,
                   (long long)(g->og * g->kh * g->kw), (long long)g->oh, (long long)g->ow);
    return NULL;
}

static sy_status *infer_deform_conv(sy_node *n)
{
    dc_geom g;
    SY_TRY(dc_geom_of(n, &g));
    int64_t d[4] = {g.N, g.oc, g.oh, g.ow};
    return H->node_set_output(n, 0, SY_DT_FLOAT32, 4, d);
}

static sy_status *prepare_deform_conv(sy_node *n, void **state)
{
    dc_geom *g = calloc(1, sizeof *g);
    if (!g)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = dc_geom_of(n, g);
    if (st) {
        free(g);
        return st;
    }
    H->node_set_scratch(n, (size_t)(g->C * g->kh * g->kw * g->oh * g->ow) * sizeof(float));
    *state = g;
    return NULL;
}

static float sample(const float *img, int64_t h, int64_t w, float y, float x)
{
    if (y <= -1.0f || y >= (float)h || x <= -1.0f || x >= (float)w)
        return 0.0f;
    float fy = floorf(y), fx = floorf(x);
    int64_t y0 = (int64_t)fy, x0 = (int64_t)fx;
    float ly = y - fy, lx = x - fx;
    float v00 = y0 >= 0 && x0 >= 0 ? img[y0 * w + x0] : 0.0f;
    float v01 = y0 >= 0 && x0 + 1 < w ? img[y0 * w + x0 + 1] : 0.0f;
    float v10 = y0 + 1 < h && x0 >= 0 ? img[(y0 + 1) * w + x0] : 0.0f;
    float v11 = y0 + 1 < h && x0 + 1 < w ? img[(y0 + 1) * w + x0 + 1] : 0.0f;
    return (1 - ly) * (1 - lx) * v00 + (1 - ly) * lx * v01 + ly * (1 - lx) * v10 + ly * lx * v11;
}

static sy_status *run_deform_conv(void *state, const sy_kernel_io *io)
{
    const dc_geom *g = state;
    const float *x = io->inputs[0]->data, *w = io->inputs[1]->data, *off = io->inputs[2]->data;
    const sy_tensor *bt = io->n_inputs > 3 ? io->inputs[3] : NULL, *mt = io->n_inputs > 4 ? io->inputs[4] : NULL;
    const float *bias = bt ? bt->data : NULL, *mask = mt ? mt->data : NULL;
    float *y = io->outputs[0]->data, *col = io->scratch;
    int64_t K = g->kh * g->kw, P = g->oh * g->ow, cpo = g->C / g->og, cpg = g->C / g->group, mpg = g->oc / g->group;
    for (int64_t n = 0; n < g->N; n++) {
        for (int64_t c = 0; c < g->C; c++) {
            int64_t og = c / cpo;
            const float *img = x + (n * g->C + c) * g->Hh * g->W;
            for (int64_t i = 0; i < g->kh; i++)
                for (int64_t j = 0; j < g->kw; j++) {
                    int64_t t = i * g->kw + j;
                    const float *dy = off + ((n * g->og + og) * 2 * K + 2 * t) * P, *dx = dy + P;
                    const float *mk = mask ? mask + ((n * g->og + og) * K + t) * P : NULL;
                    float *row = col + (c * K + t) * P;
                    for (int64_t oh = 0; oh < g->oh; oh++)
                        for (int64_t ow = 0; ow < g->ow; ow++) {
                            int64_t p = oh * g->ow + ow;
                            float yy = (float)(oh * g->sh - g->pt + i * g->dh) + dy[p];
                            float xx = (float)(ow * g->sw - g->pl + j * g->dw) + dx[p];
                            float v = sample(img, g->Hh, g->W, yy, xx);
                            row[p] = mk ? v * mk[p] : v;
                        }
                }
        }
        for (int64_t gr = 0; gr < g->group; gr++) {
            float *yo = y + (n * g->oc + gr * mpg) * P;
            sy_gemm_f32(false, false, mpg, P, cpg * K, 1.0f, w + gr * mpg * cpg * K, cpg * K, col + gr * cpg * K * P, P,
                        0.0f, yo, P);
            if (bias)
                for (int64_t m = 0; m < mpg; m++)
                    for (int64_t p = 0; p < P; p++)
                        yo[m * P + p] += bias[gr * mpg + m];
        }
    }
    return NULL;
}

#define ATTR(n, t) {n, SY_ATTR_##t, false}
static const sy_attr_def a_dc[] = {ATTR("dilations", INTS), ATTR("group", INT), ATTR("kernel_shape", INTS),
                                   ATTR("offset_group", INT), ATTR("pads", INTS), ATTR("strides", INTS)};

static const sy_op_schema schemas[] = {
    SY_SCHEMA("DeformConv", 19, 3, 5, 1, 1, SY_ATTRS(a_dc), infer_deform_conv, SY_NO_INPLACE, 0),
    SY_SCHEMA("DeformConv", 22, 3, 5, 1, 1, SY_ATTRS(a_dc), infer_deform_conv, SY_NO_INPLACE, 0),
};

static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("DeformConv", 1, 0, SY_DT_BIT(SY_DT_FLOAT32), 0, prepare_deform_conv, run_deform_conv,
                  sy_release_free),
};

sy_status *vision_deform_conv_register(const sy_host_api *host, sy_plugin *p)
{
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
