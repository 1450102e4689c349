/*
 * RoiAlign (10, 16, 22), fp32: for each region rois[r] = (x1, y1, x2, y2)
 * of image batch_indices[r], output_height x output_width bins, each the
 * average (mode avg) or maximum (mode max) of sampling_ratio^2 bilinear
 * samples (sampling_ratio 0: ceil(roi size / bins) per axis). Coordinates
 * are scaled by spatial_scale and shifted by -0.5 in half_pixel mode (the
 * default from opset 16; output_half_pixel, the only form before, keeps
 * them and makes a region at least 1 x 1). Samples more than one pixel
 * outside the image count as 0. Like ONNX Runtime, max mode takes the
 * largest of the four weighted corner values of each sample.
 */
#include "vision.h"

#include <math.h>
#include <stdlib.h>

static const sy_host_api *H;
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

typedef struct roi_state {
    int64_t oh, ow, sampling;
    float scale;
    bool half_pixel, max_mode;
} roi_state;

static sy_status *roi_attrs(const sy_node *n, roi_state *s)
{
    char mode[8], ctm[24];
    sy_attr_string_or(H, n, "mode", "avg", mode, sizeof mode);
    sy_attr_string_or(H, n, "coordinate_transformation_mode", H->node_opset(n) < 16 ? "output_half_pixel" : "half_pixel",
                      ctm, sizeof ctm);
    if (strcmp(mode, "avg") && strcmp(mode, "max"))
        return ERR(SY_ERR_INVALID_MODEL, "mode must be \"avg\" or \"max\", got \"%s\"", mode);
    if (strcmp(ctm, "half_pixel") && strcmp(ctm, "output_half_pixel"))
        return ERR(SY_ERR_INVALID_MODEL,
                   "coordinate_transformation_mode must be \"half_pixel\" or \"output_half_pixel\", got \"%s\"", ctm);
    s->max_mode = !strcmp(mode, "max");
    s->half_pixel = !strcmp(ctm, "half_pixel");
    s->oh = sy_attr_int_or(H, n, "output_height", 1);
    s->ow = sy_attr_int_or(H, n, "output_width", 1);
    s->sampling = sy_attr_int_or(H, n, "sampling_ratio", 0);
    s->scale = sy_attr_float_or(H, n, "spatial_scale", 1.0f);
    if (s->oh <= 0 || s->ow <= 0 || s->oh > (1 << 20) || s->ow > (1 << 20))
        return ERR(SY_ERR_INVALID_MODEL, "output_height and output_width must be in [1, 2^20], got %lld x %lld",
                   (long long)s->oh, (long long)s->ow);
    if (s->sampling < 0 || s->sampling > 1024)
        return ERR(SY_ERR_INVALID_MODEL, "sampling_ratio must be in [0, 1024], got %lld", (long long)s->sampling);
    return NULL;
}

static sy_status *infer_roi_align(sy_node *n)
{
    const sy_tensor *x, *rois, *bi;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &rois));
    SY_TRY(sy_need_input(H, n, 2, &bi));
    if (x->dtype != SY_DT_FLOAT32 || rois->dtype != SY_DT_FLOAT32)
        return ERR(SY_ERR_TYPE, "X and rois must be float32");
    if (bi->dtype != SY_DT_INT64)
        return ERR(SY_ERR_TYPE, "batch_indices must be int64, got %s", sy_dt_name(bi->dtype));
    if (x->rank != 4)
        return ERR(SY_ERR_SHAPE, "X must be [N, C, H, W], got rank %d", x->rank);
    if (rois->rank != 2 || rois->dims[1] != 4 || bi->rank != 1 || bi->dims[0] != rois->dims[0])
        return ERR(SY_ERR_SHAPE, "rois must be [num_rois, 4] and batch_indices [num_rois]");
    roi_state s;
    SY_TRY(roi_attrs(n, &s));
    int64_t d[4] = {rois->dims[0], x->dims[1], s.oh, s.ow};
    return H->node_set_output(n, 0, SY_DT_FLOAT32, 4, d);
}

static sy_status *prepare_roi_align(sy_node *n, void **state)
{
    roi_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = roi_attrs(n, s);
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

typedef struct sample {
    int64_t pos[4];
    float w[4];
} sample;

static sample bilinear_sample(float y, float x, int64_t h, int64_t w)
{
    sample sm = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    if (y < -1.0f || y > (float)h || x < -1.0f || x > (float)w)
        return sm;
    y = y <= 0 ? 0 : y;
    x = x <= 0 ? 0 : x;
    int64_t yl = (int64_t)y, xl = (int64_t)x, yh, xh;
    if (yl >= h - 1) {
        yh = yl = h - 1;
        y = (float)yl;
    } else {
        yh = yl + 1;
    }
    if (xl >= w - 1) {
        xh = xl = w - 1;
        x = (float)xl;
    } else {
        xh = xl + 1;
    }
    float ly = y - (float)yl, lx = x - (float)xl, hy = 1 - ly, hx = 1 - lx;
    sm.w[0] = hy * hx;
    sm.w[1] = hy * lx;
    sm.w[2] = ly * hx;
    sm.w[3] = ly * lx;
    sm.pos[0] = yl * w + xl;
    sm.pos[1] = yl * w + xh;
    sm.pos[2] = yh * w + xl;
    sm.pos[3] = yh * w + xh;
    return sm;
}

static sy_status *run_roi_align(void *state, const sy_kernel_io *io)
{
    const roi_state *s = state;
    const sy_tensor *x = io->inputs[0];
    const float *rois = io->inputs[1]->data;
    const int64_t *bi = io->inputs[2]->data;
    int64_t R = io->inputs[1]->dims[0], N = x->dims[0], C = x->dims[1], Hh = x->dims[2], W = x->dims[3];
    float *y = io->outputs[0]->data;
    float off = s->half_pixel ? 0.5f : 0.0f;
    for (int64_t r = 0; r < R; r++) {
        if (bi[r] < 0 || bi[r] >= N)
            return ERR(SY_ERR_RUNTIME, "batch_indices[%lld] = %lld is outside the %lld images", (long long)r,
                       (long long)bi[r], (long long)N);
        const float *b = rois + r * 4;
        float sw = b[0] * s->scale - off, sh = b[1] * s->scale - off;
        float rw = b[2] * s->scale - off - sw, rh = b[3] * s->scale - off - sh;
        if (!s->half_pixel) {
            rw = rw > 1.0f ? rw : 1.0f;
            rh = rh > 1.0f ? rh : 1.0f;
        }
        float bh = rh / (float)s->oh, bw = rw / (float)s->ow;
        int64_t gh = s->sampling > 0 ? s->sampling : (int64_t)ceilf(rh / (float)s->oh);
        int64_t gw = s->sampling > 0 ? s->sampling : (int64_t)ceilf(rw / (float)s->ow);
        if (gh > 4096 || gw > 4096)
            return ERR(SY_ERR_RUNTIME, "region %lld needs %lld x %lld samples per bin (at most 4096 per axis)",
                       (long long)r, (long long)gh, (long long)gw);
        float count = (float)(gh * gw > 1 ? gh * gw : 1);
        for (int64_t c = 0; c < C; c++) {
            const float *img = (const float *)x->data + (bi[r] * C + c) * Hh * W;
            for (int64_t ph = 0; ph < s->oh; ph++)
                for (int64_t pw = 0; pw < s->ow; pw++) {
                    float acc = 0.0f;
                    bool first = true;
                    for (int64_t iy = 0; iy < gh; iy++) {
                        float yy = sh + (float)ph * bh + ((float)iy + 0.5f) * bh / (float)gh;
                        for (int64_t ix = 0; ix < gw; ix++) {
                            float xx = sw + (float)pw * bw + ((float)ix + 0.5f) * bw / (float)gw;
                            sample sm = bilinear_sample(yy, xx, Hh, W);
                            if (s->max_mode) {
                                float m = sm.w[0] * img[sm.pos[0]];
                                for (int k = 1; k < 4; k++) {
                                    float v = sm.w[k] * img[sm.pos[k]];
                                    m = v > m ? v : m;
                                }
                                acc = first || m > acc ? m : acc;
                                first = false;
                            } else {
                                for (int k = 0; k < 4; k++)
                                    acc += sm.w[k] * img[sm.pos[k]];
                            }
                        }
                    }
                    y[((r * C + c) * s->oh + ph) * s->ow + pw] = s->max_mode ? acc : acc / count;
                }
        }
    }
    return NULL;
}

#define ATTR(n, t) {n, SY_ATTR_##t, false}
static const sy_attr_def a_roi10[] = {ATTR("mode", STRING), ATTR("output_height", INT), ATTR("output_width", INT),
                                      ATTR("sampling_ratio", INT), ATTR("spatial_scale", FLOAT)};
static const sy_attr_def a_roi16[] = {ATTR("coordinate_transformation_mode", STRING), ATTR("mode", STRING),
                                      ATTR("output_height", INT), ATTR("output_width", INT),
                                      ATTR("sampling_ratio", INT), ATTR("spatial_scale", FLOAT)};

static const sy_op_schema schemas[] = {
    SY_SCHEMA("RoiAlign", 10, 3, 3, 1, 1, SY_ATTRS(a_roi10), infer_roi_align, SY_NO_INPLACE, 0),
    SY_SCHEMA("RoiAlign", 16, 3, 3, 1, 1, SY_ATTRS(a_roi16), infer_roi_align, SY_NO_INPLACE, 0),
    SY_SCHEMA("RoiAlign", 22, 3, 3, 1, 1, SY_ATTRS(a_roi16), infer_roi_align, SY_NO_INPLACE, 0),
};

static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("RoiAlign", 1, 0, SY_DT_BIT(SY_DT_FLOAT32), 0, prepare_roi_align, run_roi_align, sy_release_free),
};

sy_status *vision_roi_align_register(const sy_host_api *host, sy_plugin *p)
{
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
