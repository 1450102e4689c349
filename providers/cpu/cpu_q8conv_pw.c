/*
 * The 1x1 (pointwise, stride 1, no padding) case of the provider's integer
 * convolution: y[m][p] = sum_c w[m][c] * x[c][p] is a matrix product whose
 * operands are already in the graph's NCHW order, so no layout change at
 * all. Per image and block of PB pixels the input codes are packed once as
 * channel pairs [pair][pixel][2] int16, x - x_zp (the rows of two channels
 * interleaved: the operand pmaddwd wants); tiles of 16 pixels x 6 output
 * channels then broadcast a weight pair per channel and write 8 pixels of a
 * channel with one store. The sums, the requantization and the bytes are
 * those of cpu_q8conv.c (exact int32, single-precision product, round half
 * to even), on the AVX2 and the plain C path alike.
 */
#include "cpu.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_HAVE_X86 1
#endif

#define PB 64 /* pixels per packed block (one pool item) */
#define MT 6  /* output channels per tile */
#define PT 16 /* pixels per tile */

static size_t align64(size_t v) { return (v + 63u) & ~(size_t)63u; }

bool cpu_q8pw_fits(const cpu_conv_geom *g)
{
    return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && !g->pt && !g->pl && !g->pb && !g->pr;
}

sy_status *cpu_q8pw_init(cpu_q8conv *q, const uint8_t *w, int32_t wz, const int32_t *bias, const float *mult)
{
    const cpu_conv_geom *g = &q->g;
    q->pw = true;
    q->cpairs = (q->gic + 1) / 2;
    q->goc6 = (q->goc + MT - 1) / MT * MT;
    q->npb = (g->oh * g->ow + PB - 1) / PB;
    size_t nch = (size_t)(g->group * q->goc6), wn = nch * (size_t)q->cpairs * 2;
    q->w = aligned_alloc(64, align64(wn * sizeof(int16_t)));
    q->bias = aligned_alloc(64, align64(nch * sizeof(int32_t)));
    q->mult = aligned_alloc(64, align64(nch * sizeof(float)));
    if (!q->w || !q->bias || !q->mult)
        return cpu_host->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory for %zu packed weights", wn);
    /* [group][tile of 6 channels][pair][6][2]: a tile's broadcasts are neighbours */
    int16_t *d = q->w;
    for (int64_t gr = 0; gr < g->group; gr++)
        for (int64_t m0 = 0; m0 < q->goc6; m0 += MT) {
            for (int64_t ch = 0; ch < MT; ch++) {
                int64_t o = m0 + ch, oc = gr * q->goc + o;
                size_t k = (size_t)(gr * q->goc6 + o);
                q->bias[k] = o < q->goc ? bias[oc] : 0;
                q->mult[k] = o < q->goc ? mult[oc] : 0.0f;
            }
            for (int64_t j = 0; j < q->cpairs; j++)
                for (int64_t ch = 0; ch < MT; ch++)
                    for (int64_t k = 0; k < 2; k++) {
                        int64_t o = m0 + ch, i = 2 * j + k;
                        int16_t v = 0;
                        if (o < q->goc && i < q->gic) {
                            size_t wi = (size_t)((gr * q->goc + o) * q->gic + i);
                            v = (int16_t)((q->u8 ? (int32_t)w[wi] : (int32_t)(int8_t)w[wi]) - wz);
                        }
                        *d++ = v;
                    }
        }
    return NULL;
}

size_t cpu_q8pw_scratch(const cpu_q8conv *q)
{
    return align64((size_t)(q->g.n * q->g.group * q->npb * q->cpairs * PB * 2) * sizeof(int16_t)) + 64;
}

typedef struct pw_job {
    const cpu_q8conv *q;
    const uint8_t *x;
    uint8_t *y;
    int16_t *xp;
} pw_job;

static int16_t *block_of(const pw_job *j, int64_t img, int64_t gr, int64_t b)
{
    const cpu_q8conv *q = j->q;
    return j->xp + ((img * q->g.group + gr) * q->npb + b) * q->cpairs * PB * 2;
}

#ifdef CPU_HAVE_X86
/* 16 pixels of two channel rows, interleaved and widened */
__attribute__((target("avx2"))) static void pack16(const uint8_t *r0, const uint8_t *r1, int16_t *d, bool u8,
                                                   int32_t xz)
{
    __m128i a = _mm_loadu_si128((const __m128i *)r0), b = _mm_loadu_si128((const __m128i *)r1);
    __m128i lo = _mm_unpacklo_epi8(a, b), hi = _mm_unpackhi_epi8(a, b);
    __m256i z = _mm256_set1_epi16((int16_t)xz);
    __m256i wl = u8 ? _mm256_cvtepu8_epi16(lo) : _mm256_cvtepi8_epi16(lo);
    __m256i wh = u8 ? _mm256_cvtepu8_epi16(hi) : _mm256_cvtepi8_epi16(hi);
    _mm256_storeu_si256((__m256i *)d, _mm256_sub_epi16(wl, z));
    _mm256_storeu_si256((__m256i *)(d + 16), _mm256_sub_epi16(wh, z));
}
#endif

/* pack block b of image img, every group: [pair][pixel][2], zeros past the plane and the last channel */
static void pack_block(void *ctx, size_t img, size_t b)
{
    const pw_job *j = ctx;
    const cpu_q8conv *q = j->q;
    int64_t hw = q->g.oh * q->g.ow, p0 = (int64_t)b * PB, np = hw - p0 < PB ? hw - p0 : PB;
    int32_t xz = q->xz;
    for (int64_t gr = 0; gr < q->g.group; gr++) {
        int16_t *d = block_of(j, (int64_t)img, gr, (int64_t)b);
        for (int64_t jp = 0; jp < q->cpairs; jp++, d += PB * 2) {
            int64_t c = gr * q->gic + 2 * jp;
            const uint8_t *r0 = j->x + ((int64_t)img * q->g.c + c) * hw + p0;
            const uint8_t *r1 = 2 * jp + 1 < q->gic ? r0 + hw : NULL;
            int64_t p = 0;
#ifdef CPU_HAVE_X86
            if (q->isa == CPU_ISA_AVX2 && r1)
                for (; p + 16 <= np; p += 16)
                    pack16(r0 + p, r1 + p, d + 2 * p, q->u8, xz);
#endif
            for (; p < np; p++) {
                int32_t a = q->u8 ? (int32_t)r0[p] : (int32_t)(int8_t)r0[p];
                int32_t a1 = r1 ? (q->u8 ? (int32_t)r1[p] : (int32_t)(int8_t)r1[p]) - xz : 0;
                d[2 * p] = (int16_t)(a - xz);
                d[2 * p + 1] = (int16_t)a1;
            }
            memset(d + 2 * np, 0, (size_t)(2 * (PB - np)) * sizeof(int16_t));
        }
    }
}


static void store_codes(const pw_job *j, int64_t img, int64_t gr, int64_t m0, int64_t p0, int64_t np,
                        const int32_t codes[MT][PT])
{
    const cpu_q8conv *q = j->q;
    int64_t hw = q->g.oh * q->g.ow, nm = q->goc - m0 < MT ? q->goc - m0 : MT;
    for (int64_t i = 0; i < nm; i++) {
        uint8_t *d = j->y + (img * q->g.m + gr * q->goc + m0 + i) * hw + p0;
        for (int64_t p = 0; p < np; p++)
            d[p] = (uint8_t)codes[i][p];
    }
}

/* round half to even of a float in [-2^22, 2^22] (the clamp keeps it inside) */
static inline float round_even_f(float v)
{
    const float magic = 12582912.0f; /* 1.5 * 2^23: the sum rounds to an integer, half to even */
    float t = v + magic;
    return t - magic;
}

static void tile_portable(const pw_job *j, const int16_t *x, const int16_t *w, size_t k0, int32_t codes[MT][PT])
{
    const cpu_q8conv *q = j->q;
    int32_t acc[MT][PT];
    memset(acc, 0, sizeof acc);
    for (int64_t jp = 0; jp < q->cpairs; jp++, x += PB * 2, w += MT * 2)
        for (int i = 0; i < MT; i++)
            for (int p = 0; p < PT; p++)
                acc[i][p] += x[2 * p] * w[2 * i] + x[2 * p + 1] * w[2 * i + 1];
    float flo = (float)(q->lo - q->yz), fhi = (float)(q->hi - q->yz);
    for (int i = 0; i < MT; i++)
        for (int p = 0; p < PT; p++) {
            int32_t a = (int32_t)((uint32_t)acc[i][p] + (uint32_t)q->bias[k0 + (size_t)i]); /* wraps as int32 lanes */
            float f = (float)a * q->mult[k0 + (size_t)i];
            f = f < flo ? flo : f > fhi ? fhi : f;
            codes[i][p] = (int32_t)round_even_f(f) + q->yz;
        }
}

#ifdef CPU_HAVE_X86
__attribute__((target("avx2"))) static inline __m256i bcast_pair(const int16_t *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return _mm256_set1_epi32(v);
}

/* a whole tile's valid channels go straight to out; the rest to codes (the caller stores a partial tile) */
__attribute__((target("avx2"))) static void tile_avx2(const pw_job *j, const int16_t *x, const int16_t *w, size_t k0,
                                                      uint8_t *out, int64_t hw, int64_t nm, int64_t np,
                                                      int32_t codes[MT][PT])
{
    const cpu_q8conv *q = j->q;
    __m256i a00 = _mm256_setzero_si256(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00;
    __m256i a30 = a00, a31 = a00, a40 = a00, a41 = a00, a50 = a00, a51 = a00;
    for (int64_t jp = 0; jp < q->cpairs; jp++, x += PB * 2, w += MT * 2) {
        __m256i x0 = _mm256_load_si256((const __m256i *)x), x1 = _mm256_load_si256((const __m256i *)(x + 16));
        __m256i b = bcast_pair(w);
        a00 = _mm256_add_epi32(a00, _mm256_madd_epi16(x0, b));
        a01 = _mm256_add_epi32(a01, _mm256_madd_epi16(x1, b));
        b = bcast_pair(w + 2);
        a10 = _mm256_add_epi32(a10, _mm256_madd_epi16(x0, b));
        a11 = _mm256_add_epi32(a11, _mm256_madd_epi16(x1, b));
        b = bcast_pair(w + 4);
        a20 = _mm256_add_epi32(a20, _mm256_madd_epi16(x0, b));
        a21 = _mm256_add_epi32(a21, _mm256_madd_epi16(x1, b));
        b = bcast_pair(w + 6);
        a30 = _mm256_add_epi32(a30, _mm256_madd_epi16(x0, b));
        a31 = _mm256_add_epi32(a31, _mm256_madd_epi16(x1, b));
        b = bcast_pair(w + 8);
        a40 = _mm256_add_epi32(a40, _mm256_madd_epi16(x0, b));
        a41 = _mm256_add_epi32(a41, _mm256_madd_epi16(x1, b));
        b = bcast_pair(w + 10);
        a50 = _mm256_add_epi32(a50, _mm256_madd_epi16(x0, b));
        a51 = _mm256_add_epi32(a51, _mm256_madd_epi16(x1, b));
    }
    __m256i acc[MT][2] = {{a00, a01}, {a10, a11}, {a20, a21}, {a30, a31}, {a40, a41}, {a50, a51}};
    __m256 flo = _mm256_set1_ps((float)(q->lo - q->yz)), fhi = _mm256_set1_ps((float)(q->hi - q->yz));
    __m256i yz = _mm256_set1_epi32(q->yz);
    for (int i = 0; i < MT; i++) {
        __m256i bias = _mm256_set1_epi32(q->bias[k0 + (size_t)i]);
        __m256 mult = _mm256_set1_ps(q->mult[k0 + (size_t)i]);
        for (int h = 0; h < 2; h++) {
            __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(acc[i][h], bias)), mult);
            f = _mm256_min_ps(_mm256_max_ps(f, flo), fhi);
            __m256i c = _mm256_add_epi32(_mm256_cvtps_epi32(f), yz); /* half to even; inside the code range */
            if (i < nm && np == PT) {
                __m128i s = _mm_packs_epi32(_mm256_castsi256_si128(c), _mm256_extracti128_si256(c, 1));
                s = q->u8 ? _mm_packus_epi16(s, s) : _mm_packs_epi16(s, s);
                _mm_storel_epi64((__m128i *)(out + i * hw + 8 * h), s);
            } else {
                _mm256_storeu_si256((__m256i *)&codes[i][8 * h], c);
            }
        }
    }
}
#endif

static void conv_block(void *ctx, size_t img, size_t b)
{
    const pw_job *j = ctx;
    const cpu_q8conv *q = j->q;
    int64_t hw = q->g.oh * q->g.ow, pb0 = (int64_t)b * PB, pbn = hw - pb0 < PB ? hw - pb0 : PB;
    int32_t codes[MT][PT];
    for (int64_t gr = 0; gr < q->g.group; gr++) {
        const int16_t *xb = block_of(j, (int64_t)img, gr, (int64_t)b);
        for (int64_t m0 = 0; m0 < q->goc6; m0 += MT) {
            size_t k0 = (size_t)(gr * q->goc6 + m0);
            const int16_t *w = q->w + k0 * (size_t)q->cpairs * 2;
            int64_t nm = q->goc - m0 < MT ? q->goc - m0 : MT;
            for (int64_t t = 0; t < pbn; t += PT) {
                int64_t np = pbn - t < PT ? pbn - t : PT;
#ifdef CPU_HAVE_X86
                if (q->isa == CPU_ISA_AVX2) {
                    uint8_t *out = j->y + ((int64_t)img * q->g.m + gr * q->goc + m0) * hw + pb0 + t;
                    tile_avx2(j, xb + 2 * t, w, k0, out, hw, nm, np, codes);
                    if (np < PT)
                        store_codes(j, (int64_t)img, gr, m0, pb0 + t, np, codes);
                    continue;
                }
#endif
                tile_portable(j, xb + 2 * t, w, k0, codes);
                store_codes(j, (int64_t)img, gr, m0, pb0 + t, np, codes);
            }
        }
    }
}

void cpu_q8pw_run(const cpu_q8conv *q, pthreadpool_t pool, const void *x, void *y, void *scratch)
{
    pw_job j = {q, x, y, (int16_t *)(((uintptr_t)scratch + 63u) & ~(uintptr_t)63u)};
    const cpu_conv_geom *g = &q->g;
    pthreadpool_parallelize_2d(cpu_pool_for(pool, (double)(g->n * g->c * g->oh * g->ow)), pack_block, &j,
                               (size_t)g->n, (size_t)q->npb, 0);
    pthreadpool_parallelize_2d(pool, conv_block, &j, (size_t)g->n, (size_t)q->npb, 0);
}
