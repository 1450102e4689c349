/* tflk_pool: AVERAGE_POOL_2D and MAX_POOL_2D, NHWC; padding cells are not counted. */
#include "tflk.h"

#include <math.h> /* INFINITY only: no libm call */

void tflk_pool_s8(const tflk_pool *p, const int8_t *x, int8_t *y)
{
    const int32_t IH = p->ih, IW = p->iw, C = p->c, OH = p->oh, OW = p->ow;
    for (int32_t bn = 0; bn < p->n; bn++)
        for (int32_t oy = 0; oy < OH; oy++)
            for (int32_t ox = 0; ox < OW; ox++) {
                const int32_t y0 = oy * p->sh - p->pt, x0 = ox * p->sw - p->pl;
                const int32_t ys = y0 < 0 ? 0 : y0, ye = y0 + p->fh < IH ? y0 + p->fh : IH;
                const int32_t xs = x0 < 0 ? 0 : x0, xe = x0 + p->fw < IW ? x0 + p->fw : IW;
                for (int32_t c = 0; c < C; c++) {
                    int32_t acc = p->is_max ? -128 : 0, cnt = 0;
                    for (int32_t iy = ys; iy < ye; iy++)
                        for (int32_t ix = xs; ix < xe; ix++) {
                            int32_t v = x[((bn * IH + iy) * IW + ix) * C + c];
                            if (p->is_max)
                                acc = v > acc ? v : acc;
                            else
                                acc += v;
                            cnt++;
                        }
                    if (!p->is_max && cnt)
                        acc = acc > 0 ? (acc + cnt / 2) / cnt : (acc - cnt / 2) / cnt;
                    y[((bn * OH + oy) * OW + ox) * C + c] = (int8_t)tflk_clampi(acc, p->lo, p->hi);
                }
            }
}

void tflk_pool_f32(const tflk_pool *p, const float *x, float *y)
{
    const int32_t IH = p->ih, IW = p->iw, C = p->c, OH = p->oh, OW = p->ow;
    for (int32_t bn = 0; bn < p->n; bn++)
        for (int32_t oy = 0; oy < OH; oy++)
            for (int32_t ox = 0; ox < OW; ox++) {
                const int32_t y0 = oy * p->sh - p->pt, x0 = ox * p->sw - p->pl;
                const int32_t ys = y0 < 0 ? 0 : y0, ye = y0 + p->fh < IH ? y0 + p->fh : IH;
                const int32_t xs = x0 < 0 ? 0 : x0, xe = x0 + p->fw < IW ? x0 + p->fw : IW;
                for (int32_t c = 0; c < C; c++) {
                    float acc = p->is_max ? -INFINITY : 0.0f;
                    int32_t cnt = 0;
                    for (int32_t iy = ys; iy < ye; iy++)
                        for (int32_t ix = xs; ix < xe; ix++) {
                            float v = x[((bn * IH + iy) * IW + ix) * C + c];
                            if (p->is_max)
                                acc = v > acc ? v : acc;
                            else
                                acc += v;
                            cnt++;
                        }
                    if (!p->is_max)
                        acc = cnt ? acc / (float)cnt : 0.0f;
                    y[((bn * OH + oy) * OW + ox) * C + c] = tflk_act_apply(&p->act, acc);
                }
            }
}
