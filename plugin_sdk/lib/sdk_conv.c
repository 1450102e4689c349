/* sy_sdk: the host's fp32 NCHW convolution (see sy_sdk.h), im2col + GEMM. */
#include "switchyard/sy_sdk.h"

#include <stdint.h>
#include <string.h>

#define COL_CHUNK_FLOATS (1u << 20) /* im2col scratch target: 4 MiB */

static bool pointwise(const sy_conv_geom *g)
{
    for (int i = 0; i < 3; i++)
        if (g->k[i] != 1 || g->s[i] != 1 || g->pb[i] || g->pe[i])
            return false;
    return true;
}

size_t sy_conv_f32_scratch(const sy_conv_geom *g)
{
    if (pointwise(g))
        return 0;
    int64_t rows = g->c / (g->group > 0 ? g->group : 1) * g->k[0] * g->k[1] * g->k[2];
    int64_t cols = g->out[0] * g->out[1] * g->out[2];
    int64_t chunk = (int64_t)COL_CHUNK_FLOATS / (rows > 0 ? rows : 1);
    if (chunk < 64)
        chunk = 64;
    if (chunk > cols)
        chunk = cols;
    return (size_t)(rows * chunk) * sizeof(float);
}

/* im2col of one group of one image for output columns [c0, c1) */
static void im2col(const float *x, int64_t cg, const sy_conv_geom *g, int64_t c0, int64_t c1, float *col)
{
    int64_t ncols = c1 - c0;
    int64_t OH = g->out[1], OW = g->out[2];
    int64_t ID = g->in[0], IH = g->in[1], IW = g->in[2];
    int64_t r = 0;
    for (int64_t c = 0; c < cg; c++)
        for (int64_t kd = 0; kd < g->k[0]; kd++)
            for (int64_t kh = 0; kh < g->k[1]; kh++)
                for (int64_t kw = 0; kw < g->k[2]; kw++, r++) {
                    float *dst = col + r * ncols;
                    int64_t j = c0;
                    int64_t ow = j % OW, oh = (j / OW) % OH, od = j / (OW * OH);
                    while (j < c1) {
                        int64_t run = OW - ow;
                        if (run > c1 - j)
                            run = c1 - j;
                        int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];
                        int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
                        if (id < 0 || id >= ID || ih < 0 || ih >= IH) {
                            memset(dst, 0, (size_t)run * sizeof(float));
                        } else {
                            const float *xr = x + ((c * ID + id) * IH + ih) * IW;
                            int64_t iw = ow * g->s[2] - g->pb[2] + kw * g->d[2];
                            int64_t sw = g->s[2];
                            if (sw == 1 && iw >= 0 && iw + run <= IW) {
                                memcpy(dst, xr + iw, (size_t)run * sizeof(float));
                            } else {
                                for (int64_t t = 0; t < run; t++, iw += sw)
                                    dst[t] = (iw >= 0 && iw < IW) ? xr[iw] : 0.0f;
                            }
                        }
                        dst += run;
                        j += run;
                        ow = 0;
                        if (++oh == OH) {
                            oh = 0;
                            od++;
                        }
                    }
                }
}

bool sy_conv_f32(const sy_conv_geom *g, const float *x, const float *w, const float *b, float *y, void *scratch,
                 size_t scratch_bytes)
{
    int64_t N = g->n, C = g->c, M = g->m, G = g->group;
    int64_t cg = C / G, mg = M / G;
    int64_t rows = cg * g->k[0] * g->k[1] * g->k[2];
    int64_t cols = g->out[0] * g->out[1] * g->out[2];
    int64_t in_sp = g->in[0] * g->in[1] * g->in[2];
    bool pw = pointwise(g);
    int64_t chunk = cols;
    float *col = NULL;
    if (!pw) {
        col = (float *)(((uintptr_t)scratch + 63u) & ~(uintptr_t)63u);
        size_t avail = scratch_bytes > 64 ? scratch_bytes - 64 : 0;
        chunk = (int64_t)(avail / sizeof(float)) / (rows > 0 ? rows : 1);
        if (chunk > cols)
            chunk = cols;
        if (chunk < 1 && cols > 0)
            return false;
    }
    for (int64_t nn = 0; nn < N; nn++)
        for (int64_t gi = 0; gi < G; gi++) {
            const float *xg = x + (nn * C + gi * cg) * in_sp;
            const float *wg = w + gi * mg * rows;
            float *yg = y + (nn * M + gi * mg) * cols;
            if (pw) {
                sy_gemm_f32(false, false, mg, cols, rows, 1.0f, wg, rows, xg, in_sp, 0.0f, yg, cols);
                continue;
            }
            for (int64_t c0 = 0; c0 < cols; c0 += chunk) {
                int64_t c1 = c0 + chunk < cols ? c0 + chunk : cols;
                im2col(xg, cg, g, c0, c1, col);
                sy_gemm_f32(false, false, mg, c1 - c0, rows, 1.0f, wg, rows, col, c1 - c0, 0.0f, yg + c0, cols);
            }
        }
    if (b)
        for (int64_t nn = 0; nn < N; nn++)
            for (int64_t m = 0; m < M; m++) {
                float bv = b[m], *yr = y + (nn * M + m) * cols;
                for (int64_t j = 0; j < cols; j++)
                    yr[j] += bv;
            }
    return true;
}
