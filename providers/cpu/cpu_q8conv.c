/*
 * The cpu provider's own integer convolution (QConv / QLinearConv, the ONNX
 * requantization form). Debian's XNNPACK (0.0~git20220216) runs its int8
 * convolutions on this CPU no faster than its fp32 ones and needs the codes
 * moved to NHWC and back; this kernel reads and writes the graph's NCHW bytes
 * and does the arithmetic on 16-bit values:
 *
 *   run:     x (NCHW, 8-bit codes) -> padded NHWC int16 x - x_zp (zeros in the
 *            padding, so padded taps add nothing), one pass split by rows;
 *   prepare: w - w_zp as int16, packed per group and block of 16 output
 *            channels as [tap][input channel pair][16 channels][2];
 *   compute: acc[pixel][channel] = sum over taps and channel pairs of
 *            pmaddwd(x pair, w pair): products of two values in [-255, 255]
 *            summed in pairs, exact in int32 (no saturating vpmaddubsw);
 *   requant: y = clamp(round_half_even((float)(acc + bias) * mult)) + y_zp,
 *            the product in single precision, as XNNPACK and ONNX Runtime,
 *            so the output bytes are those of the XNNPACK path it replaces.
 *
 * With one input channel (a network's first layer: super_resolution-10's
 * 1 -> 64 5x5) a channel pair would be half zeros, so the pairs run over
 * horizontally adjacent taps instead (kx, kx + 1: neighbours in the row, the
 * padded row one column wider for an odd kernel width).
 *
 * Integer sums are exact and each output is computed by one call, summed in
 * one fixed order, so the result is the same on every path (AVX-512 VNNI,
 * AVX2, portable C) and for every thread count. Tiles of 6 output pixels
 * (consecutive in the NCHW plane, so they are written straight into it) x
 * 16 channels.
 *
 * On CPU_ISA_AVX512 (AVX-512 F/BW/VL + VNNI) every layer whose w - w_zp
 * all fit int8 runs on vpdpbusd instead (cpu_q8conv_vnni.c, chosen here at
 * init, any stride), four byte products per lane and instruction, the same
 * bytes; the int16 tiles of this file and cpu_q8conv_s1.c are the AVX2 and
 * portable paths, and the AVX-512 one for the other layers.
 */
#include "cpu.h"
#include "cpu_q8_requant.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


#define TP 6        /* output pixels per tile */
#define TC 16       /* output channels per block */
#define CHUNK 8     /* tiles per pool item: a channel block's weights stay in L1 across them */

static size_t align64(size_t v) { return (v + 63u) & ~(size_t)63u; }

bool cpu_q8conv_fits(const cpu_conv_geom *g)
{
    int64_t gic = g->c / g->group, goc = g->m / g->group;
    /* below 8 channels per group (depthwise) a block of 16 is mostly padding: XNNPACK's kernels do better */
    if (goc < 8)
        return false;
    /* |sum| <= taps * channels * 255 * 255 must stay inside int32 */
    int64_t k = g->kh * g->kw * (gic + 1);
    return k > 0 && k <= INT32_MAX / (255 * 255);
}

sy_status *cpu_q8conv_init(cpu_q8conv *q, const cpu_conv_geom *g, const uint8_t *w, bool u8, int32_t wz,
                           const int32_t *bias, const float *mult, int32_t xz, int32_t yz, int32_t lo, int32_t hi,
                           cpu_isa isa)
{
    memset(q, 0, sizeof *q);
    q->g = *g;
    q->gic = g->c / g->group;
    q->goc = g->m / g->group;
    q->xpair = q->gic == 1 && g->group == 1 && g->dw == 1 && g->kw > 1;
    q->gicp = q->xpair ? 1 : (q->gic + 1) / 2 * 2;
    q->cs = g->group * q->gicp;
    q->nmb = (q->goc + TC - 1) / TC;
    int64_t kwp = q->xpair ? (g->kw + 1) / 2 : g->kw; /* taps per row as packed */
    q->ntap = g->kh * kwp;
    q->npair = q->xpair ? 1 : q->gicp / 2;
    q->hp = g->ih + g->pt + g->pb;
    q->wp = g->iw + g->pl + g->pr + (q->xpair && g->kw % 2 ? 1 : 0);
    q->u8 = u8;
    q->xz = xz;
    q->yz = yz;
    q->lo = lo;
    q->hi = hi;
    q->isa = isa;
    if (cpu_q8v_fits(q, w, wz)) { /* AVX-512 VNNI, any stride (cpu_q8conv_vnni.c) */
        sy_status *st = cpu_q8v_init(q, w, wz, bias, mult);
        if (st)
            cpu_q8conv_free(q);
        return st;
    }
    if (cpu_q8s1_fits(g)) {
        sy_status *st = cpu_q8s1_init(q, w, wz, bias, mult);
        if (st)
            cpu_q8conv_free(q);
        return st;
    }
    size_t nblk = (size_t)(g->group * q->nmb), npair = (size_t)q->npair;
    size_t wn = nblk * (size_t)q->ntap * npair * TC * 2;
    q->w = aligned_alloc(64, align64(wn * sizeof(int16_t)));
    q->bias = aligned_alloc(64, align64(nblk * TC * sizeof(int32_t)));
    q->mult = aligned_alloc(64, align64(nblk * TC * sizeof(float)));
    q->tapoff = malloc((size_t)q->ntap * sizeof(int64_t));
    if (!q->w || !q->bias || !q->mult || !q->tapoff) {
        cpu_q8conv_free(q);
        return cpu_host->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory for %zu packed weights", wn);
    }
    for (int64_t ky = 0; ky < g->kh; ky++)
        for (int64_t kx = 0; kx < kwp; kx++)
            q->tapoff[ky * kwp + kx] = (ky * g->dh * q->wp + (q->xpair ? 2 * kx : kx * g->dw)) * q->cs;
    int16_t *d = q->w;
    for (int64_t gr = 0; gr < g->group; gr++)
        for (int64_t mb = 0; mb < q->nmb; mb++) {
            size_t blk = (size_t)(gr * q->nmb + mb);
            for (int64_t ch = 0; ch < TC; ch++) {
                int64_t o = mb * TC + ch, oc = gr * q->goc + o;
                bool ok = o < q->goc;
                q->bias[blk * TC + (size_t)ch] = ok ? bias[oc] : 0;
                q->mult[blk * TC + (size_t)ch] = ok ? mult[oc] : 0.0f;
            }
            for (int64_t t = 0; t < q->ntap; t++)
                for (int64_t j = 0; j < q->npair; j++)
                    for (int64_t ch = 0; ch < TC; ch++)
                        for (int64_t k = 0; k < 2; k++) {
                            int64_t o = mb * TC + ch;
                            /* the pair's input channel and tap */
                            int64_t i = q->xpair ? 0 : 2 * j + k, ky = t / kwp;
                            int64_t kx = q->xpair ? 2 * (t % kwp) + k : t % kwp;
                            int16_t v = 0;
                            if (o < q->goc && i < q->gic && kx < g->kw) {
                                size_t wi = (size_t)(((gr * q->goc + o) * q->gic + i) * g->kh * g->kw +
                                                     ky * g->kw + kx);
                                v = (int16_t)((u8 ? (int32_t)w[wi] : (int32_t)(int8_t)w[wi]) - wz);
                            }
                            *d++ = v;
                        }
        }
    return NULL;
}

void cpu_q8conv_free(cpu_q8conv *q)
{
    free(q->w);
    free(q->bias);
    free(q->mult);
    free(q->tapoff);
    free(q->w8);
    q->w8 = NULL;
    q->w = NULL;
    q->bias = NULL;
    q->mult = NULL;
    q->tapoff = NULL;
}

size_t cpu_q8conv_scratch(const cpu_q8conv *q)
{
    if (q->vnni)
        return cpu_q8v_scratch(q);
    if (q->s1)
        return cpu_q8s1_scratch(q);
    return align64((size_t)(q->g.n * q->hp * q->wp * q->cs) * sizeof(int16_t)) + 64;
}

typedef struct q8_job {
    const cpu_q8conv *q;
    const uint8_t *x;
    uint8_t *y;
    int16_t *xp; /* padded NHWC int16 */
    int64_t ntiles, nchunks;
} q8_job;

/* channels [c0, c1) x pixels [x0, x1) of one input row, one at a time */
static void widen_scalar(const cpu_q8conv *q, const uint8_t *src, int16_t *d, int64_t c0, int64_t c1,
                         int64_t x0, int64_t x1, int64_t plane)
{
    int64_t cs = q->cs;
    int32_t xz = q->xz;
    for (int64_t c = c0; c < c1; c++) {
        const uint8_t *s = src + c * plane;
        int16_t *dc = d + c / q->gic * q->gicp + c % q->gic;
        if (q->u8)
            for (int64_t x = x0; x < x1; x++)
                dc[x * cs] = (int16_t)((int32_t)s[x] - xz);
        else
            for (int64_t x = x0; x < x1; x++)
                dc[x * cs] = (int16_t)((int32_t)(int8_t)s[x] - xz);
    }
}

#ifdef CPU_HAVE_X86
/* 8 channels x 8 pixels: widened, zero point subtracted, 8 x 8 int16
 * register transpose, one 16-byte store per pixel (channel c at lane c:
 * only when no group is padded, gicp == gic) */
__attribute__((target("avx2"))) static void widen_block8(const cpu_q8conv *q, const uint8_t *src, int16_t *d,
                                                         int64_t c0, int64_t x0, int64_t plane)
{
    __m128i zp = _mm_set1_epi16((int16_t)q->xz), a[8];
    for (int i = 0; i < 8; i++) {
        __m128i b = _mm_loadl_epi64((const __m128i *)(src + (c0 + i) * plane + x0));
        a[i] = _mm_sub_epi16(q->u8 ? _mm_cvtepu8_epi16(b) : _mm_cvtepi8_epi16(b), zp);
    }
    __m128i t0 = _mm_unpacklo_epi16(a[0], a[1]), t1 = _mm_unpackhi_epi16(a[0], a[1]);
    __m128i t2 = _mm_unpacklo_epi16(a[2], a[3]), t3 = _mm_unpackhi_epi16(a[2], a[3]);
    __m128i t4 = _mm_unpacklo_epi16(a[4], a[5]), t5 = _mm_unpackhi_epi16(a[4], a[5]);
    __m128i t6 = _mm_unpacklo_epi16(a[6], a[7]), t7 = _mm_unpackhi_epi16(a[6], a[7]);
    __m128i u0 = _mm_unpacklo_epi32(t0, t2), u1 = _mm_unpackhi_epi32(t0, t2);
    __m128i u2 = _mm_unpacklo_epi32(t1, t3), u3 = _mm_unpackhi_epi32(t1, t3);
    __m128i u4 = _mm_unpacklo_epi32(t4, t6), u5 = _mm_unpackhi_epi32(t4, t6);
    __m128i u6 = _mm_unpacklo_epi32(t5, t7), u7 = _mm_unpackhi_epi32(t5, t7);
    __m128i r[8] = {_mm_unpacklo_epi64(u0, u4), _mm_unpackhi_epi64(u0, u4), _mm_unpacklo_epi64(u1, u5),
                    _mm_unpackhi_epi64(u1, u5), _mm_unpacklo_epi64(u2, u6), _mm_unpackhi_epi64(u2, u6),
                    _mm_unpacklo_epi64(u3, u7), _mm_unpackhi_epi64(u3, u7)};
    for (int p = 0; p < 8; p++)
        _mm_storeu_si128((__m128i *)(d + (x0 + p) * q->cs + c0), r[p]);
}
#endif

/* padded row r of image img: zeros outside the input, x - x_zp inside */
static void widen_row(void *ctx, size_t img, size_t r)
{
    const q8_job *j = ctx;
    const cpu_q8conv *q = j->q;
    const cpu_conv_geom *g = &q->g;
    int64_t cs = q->cs, y = (int64_t)r - g->pt;
    int16_t *d = j->xp + ((int64_t)img * q->hp + (int64_t)r) * q->wp * cs;
    if (y < 0 || y >= g->ih || q->gicp != q->gic) {
        memset(d, 0, (size_t)(q->wp * cs) * sizeof(int16_t));
        if (y < 0 || y >= g->ih)
            return;
    } else {
        memset(d, 0, (size_t)(g->pl * cs) * sizeof(int16_t));
        memset(d + (g->pl + g->iw) * cs, 0, (size_t)((q->wp - g->pl - g->iw) * cs) * sizeof(int16_t));
    }
    d += g->pl * cs;
    int64_t plane = g->ih * g->iw;
    const uint8_t *src = j->x + (int64_t)img * g->c * plane + y * g->iw;
#ifdef CPU_HAVE_X86
    if (q->isa >= CPU_ISA_AVX2 && q->gicp == q->gic) {
        int64_t c8 = g->c / 8 * 8, x8 = g->iw / 8 * 8;
        for (int64_t c0 = 0; c0 < c8; c0 += 8)
            for (int64_t x0 = 0; x0 < x8; x0 += 8)
                widen_block8(q, src, d, c0, x0, plane);
        /* the ragged edges one by one */
        widen_scalar(q, src, d, 0, c8, x8, g->iw, plane);
        widen_scalar(q, src, d, c8, g->c, 0, g->iw, plane);
        return;
    }
#endif
    widen_scalar(q, src, d, 0, g->c, 0, g->iw, plane);
}

/* the requantized codes of one tile, [pixel][channel], to the NCHW plane */
static void store_tile(const q8_job *j, int64_t img, int64_t gr, int64_t mb, int64_t p0, int64_t np,
                       const int32_t codes[TP][TC])
{
    const cpu_q8conv *q = j->q;
    int64_t ohw = q->g.oh * q->g.ow, nc = q->goc - mb * TC < TC ? q->goc - mb * TC : TC;
    for (int64_t ch = 0; ch < nc; ch++) {
        uint8_t *d = j->y + (img * q->g.m + gr * q->goc + mb * TC + ch) * ohw + p0;
        for (int64_t p = 0; p < np; p++)
            d[p] = (uint8_t)codes[p][ch];
    }
}

static void tile_portable(const q8_job *j, const int16_t *const xp[TP], const int16_t *w, size_t blk,
                          int32_t codes[TP][TC])
{
    const cpu_q8conv *q = j->q;
    int32_t acc[TP][TC];
    memset(acc, 0, sizeof acc);
    int64_t npair = q->npair;
    for (int64_t t = 0; t < q->ntap; t++) {
        int64_t off = q->tapoff[t];
        for (int64_t jp = 0; jp < npair; jp++, w += 2 * TC)
            for (int p = 0; p < TP; p++) {
                const int16_t *xv = xp[p] + off + 2 * jp;
                int32_t a0 = xv[0], a1 = xv[1];
                for (int ch = 0; ch < TC; ch++)
                    acc[p][ch] += a0 * w[2 * ch] + a1 * w[2 * ch + 1];
            }
    }
    float flo = (float)(q->lo - q->yz), fhi = (float)(q->hi - q->yz);
    for (int p = 0; p < TP; p++)
        for (int ch = 0; ch < TC; ch++) {
            codes[p][ch] = cpu_q8_code(acc[p][ch], q->bias[blk * TC + (size_t)ch], q->mult[blk * TC + (size_t)ch],
                                       flo, fhi, q->yz);
        }
}

#ifdef CPU_HAVE_X86
__attribute__((target("avx2"))) static void tile_avx2(const q8_job *j, const int16_t *const xp[TP],
                                                      const int16_t *w, size_t blk, int32_t codes[TP][TC])
{
    const cpu_q8conv *q = j->q;
    __m256i a00 = _mm256_setzero_si256(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00;
    __m256i a30 = a00, a31 = a00, a40 = a00, a41 = a00, a50 = a00, a51 = a00;
    int64_t npair = q->npair;
    for (int64_t t = 0; t < q->ntap; t++) {
        int64_t off = q->tapoff[t];
        const int16_t *x0 = xp[0] + off, *x1 = xp[1] + off, *x2 = xp[2] + off;
        const int16_t *x3 = xp[3] + off, *x4 = xp[4] + off, *x5 = xp[5] + off;
        for (int64_t jp = 0; jp < npair; jp++, w += 2 * TC) {
            __m256i w0 = _mm256_load_si256((const __m256i *)w), w1 = _mm256_load_si256((const __m256i *)(w + TC));
            __m256i b = cpu_q8_bcast_pair(x0 + 2 * jp);
            a00 = _mm256_add_epi32(a00, _mm256_madd_epi16(b, w0));
            a01 = _mm256_add_epi32(a01, _mm256_madd_epi16(b, w1));
            b = cpu_q8_bcast_pair(x1 + 2 * jp);
            a10 = _mm256_add_epi32(a10, _mm256_madd_epi16(b, w0));
            a11 = _mm256_add_epi32(a11, _mm256_madd_epi16(b, w1));
            b = cpu_q8_bcast_pair(x2 + 2 * jp);
            a20 = _mm256_add_epi32(a20, _mm256_madd_epi16(b, w0));
            a21 = _mm256_add_epi32(a21, _mm256_madd_epi16(b, w1));
            b = cpu_q8_bcast_pair(x3 + 2 * jp);
            a30 = _mm256_add_epi32(a30, _mm256_madd_epi16(b, w0));
            a31 = _mm256_add_epi32(a31, _mm256_madd_epi16(b, w1));
            b = cpu_q8_bcast_pair(x4 + 2 * jp);
            a40 = _mm256_add_epi32(a40, _mm256_madd_epi16(b, w0));
            a41 = _mm256_add_epi32(a41, _mm256_madd_epi16(b, w1));
            b = cpu_q8_bcast_pair(x5 + 2 * jp);
            a50 = _mm256_add_epi32(a50, _mm256_madd_epi16(b, w0));
            a51 = _mm256_add_epi32(a51, _mm256_madd_epi16(b, w1));
        }
    }
    __m256i acc[TP][2] = {{a00, a01}, {a10, a11}, {a20, a21}, {a30, a31}, {a40, a41}, {a50, a51}};
    __m256 flo = _mm256_set1_ps((float)(q->lo - q->yz)), fhi = _mm256_set1_ps((float)(q->hi - q->yz));
    __m256i yz = _mm256_set1_epi32(q->yz);
    for (int h = 0; h < 2; h++) {
        __m256i bias = _mm256_load_si256((const __m256i *)(q->bias + blk * TC + (size_t)(8 * h)));
        __m256 mult = _mm256_load_ps(q->mult + blk * TC + (size_t)(8 * h));
        for (int p = 0; p < TP; p++) {
            _mm256_storeu_si256((__m256i *)&codes[p][8 * h], cpu_q8_codes_avx2(acc[p][h], bias, mult, flo, fhi, yz));
        }
    }
}
#endif

/* CHUNK tiles of image img, every group and channel block */
static void conv_chunk(void *ctx, size_t img, size_t chunk)
{
    const q8_job *j = ctx;
    const cpu_q8conv *q = j->q;
    const cpu_conv_geom *g = &q->g;
    int64_t ohw = g->oh * g->ow, t0 = (int64_t)chunk * CHUNK;
    int64_t t1 = t0 + CHUNK < j->ntiles ? t0 + CHUNK : j->ntiles;
    const int16_t *ximg = j->xp + (int64_t)img * q->hp * q->wp * q->cs;
    size_t wblk = (size_t)(q->ntap * q->npair * TC * 2);
    int32_t codes[TP][TC];
    /* each tile's pixels in the padded input, once for every block; a tile
     * past the plane's end repeats its last pixel (computed, not stored) */
    const int16_t *base[CHUNK][TP];
    for (int64_t t = t0; t < t1; t++) {
        int64_t p0 = t * TP, np = ohw - p0 < TP ? ohw - p0 : TP;
        int64_t oy = p0 / g->ow, ox = p0 % g->ow;
        for (int64_t p = 0; p < TP; p++) {
            base[t - t0][p] = ximg + ((oy * g->sh) * q->wp + ox * g->sw) * q->cs;
            if (p + 1 < np && ++ox == g->ow) {
                ox = 0;
                oy++;
            }
        }
    }
    for (int64_t gr = 0; gr < g->group; gr++)
        for (int64_t mb = 0; mb < q->nmb; mb++) {
            size_t blk = (size_t)(gr * q->nmb + mb);
            const int16_t *w = q->w + blk * wblk;
            for (int64_t t = t0; t < t1; t++) {
                int64_t p0 = t * TP, np = ohw - p0 < TP ? ohw - p0 : TP;
                const int16_t *xp[TP];
                for (int64_t p = 0; p < TP; p++)
                    xp[p] = base[t - t0][p] + gr * q->gicp;
#ifdef CPU_HAVE_X86
                if (q->isa >= CPU_ISA_AVX2)
                    tile_avx2(j, xp, w, blk, codes);
                else
#endif
                    tile_portable(j, xp, w, blk, codes);
                store_tile(j, (int64_t)img, gr, mb, p0, np, codes);
            }
        }
}

void cpu_q8conv_run(const cpu_q8conv *q, pthreadpool_t pool, const void *x, void *y, void *scratch)
{
    if (q->vnni) {
        cpu_q8v_run(q, pool, x, y, scratch);
        return;
    }
    if (q->s1) {
        cpu_q8s1_run(q, pool, x, y, scratch);
        return;
    }
    const cpu_conv_geom *g = &q->g;
    q8_job j = {q, x, y, (int16_t *)(((uintptr_t)scratch + 63u) & ~(uintptr_t)63u), 0, 0};
    int64_t ohw = g->oh * g->ow;
    j.ntiles = (ohw + TP - 1) / TP;
    j.nchunks = (j.ntiles + CHUNK - 1) / CHUNK;
    pthreadpool_parallelize_2d(cpu_pool_for(pool, (double)(g->n * q->hp * q->wp * q->cs)), widen_row, &j,
                               (size_t)g->n, (size_t)q->hp, 0);
    pthreadpool_parallelize_2d(pool, conv_chunk, &j, (size_t)g->n, (size_t)j.nchunks, 0);
}
