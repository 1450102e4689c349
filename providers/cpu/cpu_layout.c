/*
 * Layout changes at the edge of the cpu provider's kernels: ONNX tensors are
 * NCHW, XNNPACK works in NHWC. Each pass moves square tiles so both the
 * reads and the writes stay in cache lines; a pool splits the pixels. Pure
 * data movement (and f16<->f32 rounding to nearest even), so the result does
 * not depend on the split.
 */
#include "cpu.h"

#define TILE 16

typedef struct move_job {
    const void *src;
    void *dst;
    int64_t c, hw;
    int kind; /* 0 f32 to nhwc, 1 f32 to nchw, 2 f16->f32 to nhwc, 3 f32->f16 to nchw */
} move_job;

/* One tile column: pixels [p0, p0 + TILE) of image `img`, every channel. */
static void move_tile(void *ctx, size_t img, size_t tile)
{
    const move_job *j = ctx;
    int64_t c = j->c, hw = j->hw;
    int64_t p0 = (int64_t)tile * TILE, p1 = p0 + TILE < hw ? p0 + TILE : hw;
    size_t base = (size_t)img * (size_t)(c * hw);
    for (int64_t c0 = 0; c0 < c; c0 += TILE) {
        int64_t c1 = c0 + TILE < c ? c0 + TILE : c;
        switch (j->kind) {
        case 0: {
            const float *s = (const float *)j->src + base;
            float *d = (float *)j->dst + base;
            for (int64_t p = p0; p < p1; p++)
                for (int64_t ch = c0; ch < c1; ch++)
                    d[p * c + ch] = s[ch * hw + p];
            break;
        }
        case 1: {
            const float *s = (const float *)j->src + base;
            float *d = (float *)j->dst + base;
            for (int64_t ch = c0; ch < c1; ch++)
                for (int64_t p = p0; p < p1; p++)
                    d[ch * hw + p] = s[p * c + ch];
            break;
        }
        case 2: {
            const uint16_t *s = (const uint16_t *)j->src + base;
            float *d = (float *)j->dst + base;
            for (int64_t p = p0; p < p1; p++)
                for (int64_t ch = c0; ch < c1; ch++)
                    d[p * c + ch] = sy_f16_to_f32(s[ch * hw + p]);
            break;
        }
        default: {
            const float *s = (const float *)j->src + base;
            uint16_t *d = (uint16_t *)j->dst + base;
            for (int64_t ch = c0; ch < c1; ch++)
                for (int64_t p = p0; p < p1; p++)
                    d[ch * hw + p] = sy_f32_to_f16(s[p * c + ch]);
            break;
        }
        }
    }
}

static void move(pthreadpool_t pool, const void *src, void *dst, int64_t n, int64_t c, int64_t hw, int kind)
{
    move_job j = {src, dst, c, hw, kind};
    size_t tiles = (size_t)((hw + TILE - 1) / TILE);
    /* pthreadpool runs the calls on the caller when pool is NULL */
    pthreadpool_parallelize_2d(pool, move_tile, &j, (size_t)n, tiles, 0);
}

void cpu_nchw_to_nhwc_f32(pthreadpool_t pool, const float *src, float *dst, int64_t n, int64_t c, int64_t hw)
{
    move(pool, src, dst, n, c, hw, 0);
}

void cpu_nhwc_to_nchw_f32(pthreadpool_t pool, const float *src, float *dst, int64_t n, int64_t c, int64_t hw)
{
    move(pool, src, dst, n, c, hw, 1);
}

void cpu_nchw_f16_to_nhwc_f32(pthreadpool_t pool, const uint16_t *src, float *dst, int64_t n, int64_t c, int64_t hw)
{
    move(pool, src, dst, n, c, hw, 2);
}

void cpu_nhwc_f32_to_nchw_f16(pthreadpool_t pool, const float *src, uint16_t *dst, int64_t n, int64_t c, int64_t hw)
{
    move(pool, src, dst, n, c, hw, 3);
}
