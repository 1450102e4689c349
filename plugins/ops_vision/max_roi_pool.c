/*
 * MaxRoiPool (1), float and double: for each region rois[r] = (batch, x1,
 * y1, x2, y2), pooled_shape[0] x pooled_shape[1] bins, each the maximum of
 * its pixels (0 for an empty bin). The spec does not say how regions map
 * to pixels; as ONNX Runtime (Caffe's ROI pooling), the corners are
 * scaled by spatial_scale and rounded half away from zero, the region is
 * end - start + 1 pixels (at least 1) per axis, bin i of n covers
 * [floor(i size / n), ceil((i + 1) size / n)) from the start, clipped to
 * the image.
 */
#include "vision.h"

#include <math.h>
#include <stdlib.h>

static const sy_host_api *H;
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

typedef struct mrp {
    int64_t ph, pw;
    float scale;
} mrp;

static sy_status *mrp_attrs(const sy_node *n, mrp *s)
{
    const int64_t *ps;
    size_t k = 0;
    if (!H->attr_ints(n, "pooled_shape", &ps, &k) || k != 2)
        return ERR(SY_ERR_INVALID_MODEL, "attribute pooled_shape must be [height, width], it has %zu values", k);
    if (ps[0] < 1 || ps[1] < 1)
        return ERR(SY_ERR_INVALID_MODEL, "attribute pooled_shape = [%lld, %lld] must be positive", (long long)ps[0],
                   (long long)ps[1]);
    s->ph = ps[0], s->pw = ps[1];
    s->scale = sy_attr_float_or(H, n, "spatial_scale", 1.0f);
    if (!(s->scale > 0) || !isfinite(s->scale))
        return ERR(SY_ERR_INVALID_MODEL, "attribute spatial_scale = %g must be positive and finite", (double)s->scale);
    return NULL;
}

static sy_status *infer_mrp(sy_node *n)
{
    const sy_tensor *x, *r;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &r));
    if (x->dtype != SY_DT_FLOAT32 && x->dtype != SY_DT_FLOAT64)
        return ERR(SY_ERR_TYPE, "X must be float or double, got %s", sy_dt_name(x->dtype));
    if (r->dtype != x->dtype)
        return ERR(SY_ERR_TYPE, "rois is %s, X %s: they share one type", sy_dt_name(r->dtype), sy_dt_name(x->dtype));
    if (x->rank != 4)
        return ERR(SY_ERR_SHAPE, "X must be [N, C, H, W], got rank %d", x->rank);
    if (r->rank != 2 || r->dims[1] != 5)
        return ERR(SY_ERR_SHAPE, "rois must be [num_rois, 5] (batch, x1, y1, x2, y2)");
    mrp s = {0};
    SY_TRY(mrp_attrs(n, &s));
    int64_t d[4] = {r->dims[0], x->dims[1], s.ph, s.pw};
    return H->node_set_output(n, 0, x->dtype, 4, d);
}

static sy_status *prepare_mrp(sy_node *n, void **state)
{
    mrp *s = malloc(sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = mrp_attrs(n, s);
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static int64_t clampi(int64_t v, int64_t hi) { return v < 0 ? 0 : v > hi ? hi : v; }

static sy_status *run_mrp(void *state, const sy_kernel_io *io)
{
    const mrp *s = state;
    const sy_tensor *x = io->inputs[0], *rois = io->inputs[1];
    sy_tensor *y = io->outputs[0];
    int64_t N = x->dims[0], C = x->dims[1], Hh = x->dims[2], W = x->dims[3], R = rois->dims[0];
    for (int64_t r = 0; r < R; r++) {
        double b = sy_load_f64(rois->data, rois->dtype, (size_t)(r * 5));
        if (!(b >= 0 && b < (double)N))
            return ERR(SY_ERR_INVALID_ARGUMENT, "rois[%lld] names batch %g; X has %lld", (long long)r, b, (long long)N);
        int64_t bi = (int64_t)b, c4[4];
        for (int k = 0; k < 4; k++) /* in float as ONNX Runtime, then rounded half away from zero */
            c4[k] = (int64_t)roundf((float)sy_load_f64(rois->data, rois->dtype, (size_t)(r * 5 + 1 + k)) * s->scale);
        int64_t rh = c4[3] - c4[1] + 1, rw = c4[2] - c4[0] + 1;
        rh = rh < 1 ? 1 : rh;
        rw = rw < 1 ? 1 : rw;
        float bh = (float)rh / (float)s->ph, bw = (float)rw / (float)s->pw;
        for (int64_t c = 0; c < C; c++) {
            size_t plane = (size_t)((bi * C + c) * Hh * W);
            for (int64_t i = 0; i < s->ph; i++) {
                int64_t h0 = clampi((int64_t)floorf((float)i * bh) + c4[1], Hh);
                int64_t h1 = clampi((int64_t)ceilf((float)(i + 1) * bh) + c4[1], Hh);
                for (int64_t j = 0; j < s->pw; j++) {
                    int64_t w0 = clampi((int64_t)floorf((float)j * bw) + c4[0], W);
                    int64_t w1 = clampi((int64_t)ceilf((float)(j + 1) * bw) + c4[0], W);
                    double m = -INFINITY;
                    for (int64_t h = h0; h < h1; h++)
                        for (int64_t w = w0; w < w1; w++) {
                            double v = sy_load_f64(x->data, x->dtype, plane + (size_t)(h * W + w));
                            m = v > m ? v : m;
                        }
                    size_t o = (size_t)(((r * C + c) * s->ph + i) * s->pw + j);
                    sy_store_f64(y->data, y->dtype, o, h1 <= h0 || w1 <= w0 ? 0.0 : m);
                }
            }
        }
    }
    return NULL;
}

static const sy_attr_def a_mrp[] = {{"pooled_shape", SY_ATTR_INTS, true}, {"spatial_scale", SY_ATTR_FLOAT, false}};

static const sy_op_schema schemas[] = {
    SY_SCHEMA("MaxRoiPool", 1, 2, 2, 1, 1, SY_ATTRS(a_mrp), infer_mrp, SY_NO_INPLACE, 0),
};

static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("MaxRoiPool", 1, 0, SY_DT_BIT(SY_DT_FLOAT32) | SY_DT_BIT(SY_DT_FLOAT64), 0, prepare_mrp, run_mrp,
                  sy_release_free),
};

sy_status *vision_max_roi_pool_register(const sy_host_api *host, sy_plugin *p)
{
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
