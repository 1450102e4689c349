/*
 * tflk_resize: RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR as TFLite computes
 * them (the arithmetic cpu_ref's tflite_tensor ran before it called this
 * file: float sample positions, the bilinear blend of fp32 in double, int8
 * bilinear as ResizeBilinearInteger in 10-bit fixed point), and ONNX Resize's
 * nearest and linear modes on NCHW planes. No libm: tflk_floorf/tflk_roundf.
 */
#include "tflk.h"

#include <string.h>

/* TFLite's ComputeInterpolationValuesInteger: a sample position in 1/1024
 * pixels and the two rows (columns) around it; C division truncates */
static void pos10(int64_t o, int64_t scale10, int32_t hp, int64_t in, int64_t *pos, int64_t *lo, int64_t *hi)
{
    *pos = hp ? o * scale10 + scale10 / 2 - 512 : o * scale10;
    *lo = *pos / 1024 > 0 ? *pos / 1024 : 0;
    *hi = (*pos + 1023) / 1024 < in - 1 ? (*pos + 1023) / 1024 : in - 1;
}

/* the scale rounds; the four weights multiply in 20 bits; the sum rounds half away from zero */
static void bilinear_s8(const tflk_resize *p, const int8_t *xd, int8_t *yd)
{
    int64_t N = p->n, IH = p->ih, IW = p->iw, C = p->c, OH = p->oh, OW = p->ow;
    int64_t sh = (1024 * IH + OH / 2) / OH, sw = (1024 * IW + OW / 2) / OW;
    if (p->ac && OH > 1)
        sh = (1024 * (IH - 1) + (OH - 1) / 2) / (OH - 1);
    if (p->ac && OW > 1)
        sw = (1024 * (IW - 1) + (OW - 1) / 2) / (OW - 1);
    for (int64_t bn = 0; bn < N; bn++)
        for (int64_t oy = 0; oy < OH; oy++) {
            int64_t py, y0, y1;
            pos10(oy, sh, p->hp, IH, &py, &y0, &y1);
            int64_t dy = py - 1024 * y0;
            for (int64_t ox = 0; ox < OW; ox++) {
                int64_t px, x0, x1;
                pos10(ox, sw, p->hp, IW, &px, &x0, &x1);
                int64_t dx = px - 1024 * x0;
                const int8_t *r0 = xd + (bn * IH + y0) * IW * C, *r1 = xd + (bn * IH + y1) * IW * C;
                int8_t *out = yd + ((bn * OH + oy) * OW + ox) * C;
                for (int64_t c = 0; c < C; c++) {
                    int64_t v = r0[x0 * C + c] * (1024 - dy) * (1024 - dx) + r1[x0 * C + c] * dy * (1024 - dx) +
                                r0[x1 * C + c] * (1024 - dy) * dx + r1[x1 * C + c] * dy * dx;
                    out[c] = (int8_t)((v + (v > 0 ? (1 << 19) : -(1 << 19))) / (1 << 20));
                }
            }
        }
}

static void tflite_f32(const tflk_resize *p, const void *x, void *y)
{
    int64_t N = p->n, IH = p->ih, IW = p->iw, C = p->c, OH = p->oh, OW = p->ow;
    float hs = (p->ac && OH > 1) ? (float)(IH - 1) / (float)(OH - 1) : (float)IH / (float)OH;
    float ws = (p->ac && OW > 1) ? (float)(IW - 1) / (float)(OW - 1) : (float)IW / (float)OW;
    size_t es = (size_t)p->esize;
    const float *xf = x;
    float *yf = y;
    for (int64_t bn = 0; bn < N; bn++)
        for (int64_t oy = 0; oy < OH; oy++)
            for (int64_t ox = 0; ox < OW; ox++) {
                int64_t yo = ((bn * OH + oy) * OW + ox) * C;
                if (!p->linear) {
                    float fy = (p->hp ? ((float)oy + 0.5f) : (float)oy) * hs;
                    float fx = (p->hp ? ((float)ox + 0.5f) : (float)ox) * ws;
                    int64_t iy = (int64_t)(p->ac ? tflk_roundf(fy) : tflk_floorf(fy));
                    int64_t ix = (int64_t)(p->ac ? tflk_roundf(fx) : tflk_floorf(fx));
                    iy = iy < IH - 1 ? iy : IH - 1;
                    ix = ix < IW - 1 ? ix : IW - 1;
                    iy = iy < 0 ? 0 : iy;
                    ix = ix < 0 ? 0 : ix;
                    memcpy((unsigned char *)y + (size_t)yo * es,
                           (const unsigned char *)x + (size_t)(((bn * IH + iy) * IW + ix) * C) * es, (size_t)C * es);
                    continue;
                }
                float fy = p->hp ? ((float)oy + 0.5f) * hs - 0.5f : (float)oy * hs;
                float fx = p->hp ? ((float)ox + 0.5f) * ws - 0.5f : (float)ox * ws;
                int64_t y0 = fy > 0 ? (int64_t)tflk_floorf(fy) : 0, x0 = fx > 0 ? (int64_t)tflk_floorf(fx) : 0;
                int64_t y1 = y0 + 1 < IH ? y0 + 1 : IH - 1, x1 = x0 + 1 < IW ? x0 + 1 : IW - 1;
                float dy = fy - tflk_floorf(fy), dx = fx - tflk_floorf(fx);
                if (fy < 0)
                    dy = 0, y0 = 0;
                if (fx < 0)
                    dx = 0, x0 = 0;
                for (int64_t c = 0; c < C; c++) {
                    double v00 = xf[((bn * IH + y0) * IW + x0) * C + c], v01 = xf[((bn * IH + y0) * IW + x1) * C + c];
                    double v10 = xf[((bn * IH + y1) * IW + x0) * C + c], v11 = xf[((bn * IH + y1) * IW + x1) * C + c];
                    yf[yo + c] = (float)(v00 * (1 - dy) * (1 - dx) + v01 * (1 - dy) * dx + v10 * dy * (1 - dx) +
                                         v11 * dy * dx);
                }
            }
}

static double floor_d(double v)
{
    double t = (double)(int64_t)v;
    return t > v ? t - 1.0 : t;
}

/* ONNX: the source coordinate of output index o */
static double onnx_src(const tflk_resize *p, int64_t o, int64_t in, int64_t out, float scale)
{
    switch (p->coord) {
    case TFLK_RZ_ALIGN_CORNERS: return out > 1 ? (double)o * (double)(in - 1) / (double)(out - 1) : 0.0;
    case TFLK_RZ_ASYMMETRIC: return (double)o / (double)scale;
    default: return ((double)o + 0.5) / (double)scale - 0.5;
    }
}

static int64_t onnx_nearest(const tflk_resize *p, double v, int64_t in)
{
    double f = floor_d(v), fr = v - f;
    int64_t i;
    switch (p->nearest) {
    case TFLK_RZ_FLOOR: i = (int64_t)f; break;
    case TFLK_RZ_CEIL: i = (int64_t)f + (fr > 0.0); break;
    case TFLK_RZ_PREFER_CEIL: i = (int64_t)f + (fr >= 0.5); break;
    default: i = (int64_t)f + (fr > 0.5); break;
    }
    return i < 0 ? 0 : i > in - 1 ? in - 1 : i;
}

static void onnx_run(const tflk_resize *p, const void *x, void *y)
{
    int64_t N = p->n, IH = p->ih, IW = p->iw, OH = p->oh, OW = p->ow, C = p->c;
    size_t es = (size_t)p->esize;
    const float *xf = x;
    float *yf = y;
    for (int64_t bn = 0; bn < N; bn++)
        for (int64_t oy = 0; oy < OH; oy++) {
            double sy = onnx_src(p, oy, IH, OH, p->sh);
            for (int64_t ox = 0; ox < OW; ox++) {
                double sx = onnx_src(p, ox, IW, OW, p->sw);
                int64_t yo = ((bn * OH + oy) * OW + ox) * C;
                if (!p->linear) {
                    int64_t iy = onnx_nearest(p, sy, IH), ix = onnx_nearest(p, sx, IW);
                    memcpy((unsigned char *)y + (size_t)yo * es,
                           (const unsigned char *)x + (size_t)(((bn * IH + iy) * IW + ix) * C) * es, (size_t)C * es);
                    continue;
                }
                double cy = sy < 0 ? 0 : sy > (double)(IH - 1) ? (double)(IH - 1) : sy;
                double cx = sx < 0 ? 0 : sx > (double)(IW - 1) ? (double)(IW - 1) : sx;
                int64_t y0 = (int64_t)floor_d(cy), x0 = (int64_t)floor_d(cx);
                int64_t y1 = y0 + 1 < IH ? y0 + 1 : IH - 1, x1 = x0 + 1 < IW ? x0 + 1 : IW - 1;
                double dy = cy - (double)y0, dx = cx - (double)x0;
                for (int64_t c = 0; c < C; c++) {
                    double v00 = xf[((bn * IH + y0) * IW + x0) * C + c], v01 = xf[((bn * IH + y0) * IW + x1) * C + c];
                    double v10 = xf[((bn * IH + y1) * IW + x0) * C + c], v11 = xf[((bn * IH + y1) * IW + x1) * C + c];
                    yf[yo + c] = (float)((1 - dy) * ((1 - dx) * v00 + dx * v01) + dy * ((1 - dx) * v10 + dx * v11));
                }
            }
        }
}

void tflk_resize_run(const tflk_resize *p, const void *x, void *y)
{
    if (p->onnx)
        onnx_run(p, x, y);
    else if (p->linear && p->esize == 1)
        bilinear_s8(p, x, y);
    else
        tflite_f32(p, x, y);
}
