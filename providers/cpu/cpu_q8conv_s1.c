/*
 * The stride-1 case of the provider's integer convolution, computed in the
 * graph's NCHW order with no layout change: output pixels are the vector
 * lanes. Per image the input codes are widened once into padded planes of
 * channel pairs, [group][pair][padded row][padded column][2] int16 of
 * x - x_zp (zeros in the padding; the rows of two channels interleaved, the
 * operand pmaddwd wants), so for any tap the pairs of 16 consecutive output
 * pixels of a row are 64 contiguous bytes. A tile is 16 pixels of one output
 * row x 6 output channels: per (pair, tap) two loads, a broadcast weight pair
 * per channel, 12 pmaddwd; a whole tile writes each channel's 16 codes with
 * two 8-byte stores. The sums, the requantization and the bytes are those of
 * cpu_q8conv.c (exact int32, single-precision product, round half to even),
 * on the AVX2 and the plain C path alike. On CPU_ISA_AVX512 a layer whose
 * w - w_zp fit int8 goes to cpu_q8conv_vnni.c instead (cpu_q8conv_init
 * decides), which gives the same bytes.
 */
#include "cpu.h"
#include "cpu_q8_requant.h"

#include <stdlib.h>
#include <string.h>


#define MT 6     /* output channels per tile */
#define PT 16    /* pixels per tile */
#define SLACK 64 /* int16 read past the last plane by a row's last, partial tile (lanes not stored) */

static size_t align64(size_t v) { return (v + 63u) & ~(size_t)63u; }

bool cpu_q8s1_fits(const cpu_conv_geom *g) { return g->sh == 1 && g->sw == 1; }

sy_status *cpu_q8s1_init(cpu_q8conv *q, const uint8_t *w, int32_t wz, const int32_t *bias, const float *mult)
{
    const cpu_conv_geom *g = &q->g;
    q->s1 = true;
    q->xpair = false;
    q->cpairs = (q->gic + 1) / 2;
    q->goc6 = (q->goc + MT - 1) / MT * MT;
    q->ntap = g->kh * g->kw;
    q->hp = g->ih + g->pt + g->pb;
    q->wp = g->iw + g->pl + g->pr;
    q->plane = q->hp * q->wp;
    size_t nch = (size_t)(g->group * q->goc6), wn = nch * (size_t)(q->cpairs * q->ntap) * 2;
    q->w = aligned_alloc(64, align64(wn * sizeof(int16_t)));
    q->bias = aligned_alloc(64, align64(nch * sizeof(int32_t)));
    q->mult = aligned_alloc(64, align64(nch * sizeof(float)));
    q->tapoff = malloc((size_t)q->ntap * sizeof(int64_t));
    if (!q->w || !q->bias || !q->mult || !q->tapoff)
        return cpu_host->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory for %zu packed weights", wn);
    for (int64_t ky = 0; ky < g->kh; ky++)
        for (int64_t kx = 0; kx < g->kw; kx++)
            q->tapoff[ky * g->kw + kx] = (ky * g->dh * q->wp + kx * g->dw) * 2;
    /* [group][tile of 6 channels][pair][tap][6][2]: a step's broadcasts are neighbours */
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
                for (int64_t t = 0; t < q->ntap; t++)
                    for (int64_t ch = 0; ch < MT; ch++)
                        for (int64_t k = 0; k < 2; k++) {
                            int64_t o = m0 + ch, i = 2 * j + k;
                            int16_t v = 0;
                            if (o < q->goc && i < q->gic) {
                                size_t wi = (size_t)(((gr * q->goc + o) * q->gic + i) * q->ntap + t);
                                v = (int16_t)((q->u8 ? (int32_t)w[wi] : (int32_t)(int8_t)w[wi]) - wz);
                            }
                            *d++ = v;
                        }
        }
    return NULL;
}

size_t cpu_q8s1_scratch(const cpu_q8conv *q)
{
    return align64((size_t)(q->g.n * q->g.group * q->cpairs * q->plane * 2 + SLACK) * sizeof(int16_t)) + 64;
}

typedef struct s1_job {
    const cpu_q8conv *q;
    const uint8_t *x;
    uint8_t *y;
    int16_t *xp;
} s1_job;

/* the padded plane of pair jp of group gr, image img */
static int16_t *plane_of(const s1_job *j, int64_t img, int64_t gr, int64_t jp)
{
    const cpu_q8conv *q = j->q;
    return j->xp + ((img * q->g.group + gr) * q->cpairs + jp) * q->plane * 2;
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

/* the padded plane of pair pg (group * cpairs + pair) of image img */
static void pack_plane(void *ctx, size_t img, size_t pg)
{
    const s1_job *j = ctx;
    const cpu_q8conv *q = j->q;
    const cpu_conv_geom *g = &q->g;
    int64_t gr = (int64_t)pg / q->cpairs, jp = (int64_t)pg % q->cpairs, hw = g->ih * g->iw;
    int16_t *d = plane_of(j, (int64_t)img, gr, jp);
    int32_t xz = q->xz;
    const uint8_t *r0 = j->x + ((int64_t)img * g->c + gr * q->gic + 2 * jp) * hw;
    const uint8_t *r1 = 2 * jp + 1 < q->gic ? r0 + hw : NULL;
    memset(d, 0, (size_t)(g->pt * q->wp * 2) * sizeof(int16_t));
    memset(d + (g->pt + g->ih) * q->wp * 2, 0, (size_t)(g->pb * q->wp * 2) * sizeof(int16_t));
    for (int64_t y = 0; y < g->ih; y++) {
        int16_t *dr = d + (g->pt + y) * q->wp * 2;
        memset(dr, 0, (size_t)(g->pl * 2) * sizeof(int16_t));
        memset(dr + (g->pl + g->iw) * 2, 0, (size_t)(g->pr * 2) * sizeof(int16_t));
        dr += g->pl * 2;
        const uint8_t *s0 = r0 + y * g->iw, *s1 = r1 ? r1 + y * g->iw : NULL;
        int64_t p = 0;
#ifdef CPU_HAVE_X86
        if (q->isa >= CPU_ISA_AVX2 && s1)
            for (; p + 16 <= g->iw; p += 16)
                pack16(s0 + p, s1 + p, dr + 2 * p, q->u8, xz);
#endif
        for (; p < g->iw; p++) {
            int32_t a0 = q->u8 ? (int32_t)s0[p] : (int32_t)(int8_t)s0[p];
            int32_t a1 = s1 ? (q->u8 ? (int32_t)s1[p] : (int32_t)(int8_t)s1[p]) - xz : 0;
            dr[2 * p] = (int16_t)(a0 - xz);
            dr[2 * p + 1] = (int16_t)a1;
        }
    }
}

static void store_codes(const s1_job *j, int64_t img, int64_t gr, int64_t m0, int64_t p0, int64_t np,
                        const int32_t codes[MT][PT])
{
    const cpu_q8conv *q = j->q;
    int64_t ohw = q->g.oh * q->g.ow, nm = q->goc - m0 < MT ? q->goc - m0 : MT;
    for (int64_t i = 0; i < nm; i++) {
        uint8_t *d = j->y + (img * q->g.m + gr * q->goc + m0 + i) * ohw + p0;
        for (int64_t p = 0; p < np; p++)
            d[p] = (uint8_t)codes[i][p];
    }
}

/* x: the tile's first pixel in the plane of pair 0 */
static void tile_portable(const s1_job *j, const int16_t *x, const int16_t *w, size_t k0, int32_t codes[MT][PT])
{
    const cpu_q8conv *q = j->q;
    int32_t acc[MT][PT];
    memset(acc, 0, sizeof acc);
    for (int64_t jp = 0; jp < q->cpairs; jp++, x += q->plane * 2)
        for (int64_t t = 0; t < q->ntap; t++, w += MT * 2) {
            const int16_t *xt = x + q->tapoff[t];
            for (int i = 0; i < MT; i++)
                for (int p = 0; p < PT; p++)
                    acc[i][p] += xt[2 * p] * w[2 * i] + xt[2 * p + 1] * w[2 * i + 1];
        }
    float flo = (float)(q->lo - q->yz), fhi = (float)(q->hi - q->yz);
    for (int i = 0; i < MT; i++)
        for (int p = 0; p < PT; p++) {
            codes[i][p] = cpu_q8_code(acc[i][p], q->bias[k0 + (size_t)i], q->mult[k0 + (size_t)i], flo, fhi, q->yz);
        }
}

#ifdef CPU_HAVE_X86
/* a whole tile's valid channels go straight to out (channel i at out + i * ohw); the rest to codes */
__attribute__((target("avx2"))) static void tile_avx2(const s1_job *j, const int16_t *x, const int16_t *w, size_t k0,
                                                      uint8_t *out, int64_t ohw, int64_t nm, int64_t np,
                                                      int32_t codes[MT][PT])
{
    const cpu_q8conv *q = j->q;
    __m256i a00 = _mm256_setzero_si256(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00;
    __m256i a30 = a00, a31 = a00, a40 = a00, a41 = a00, a50 = a00, a51 = a00;
    const int64_t *tapoff = q->tapoff;
    int64_t ntap = q->ntap;
    for (int64_t jp = 0; jp < q->cpairs; jp++, x += q->plane * 2)
        for (int64_t t = 0; t < ntap; t++, w += MT * 2) {
            const int16_t *xt = x + tapoff[t];
            __m256i x0 = _mm256_loadu_si256((const __m256i *)xt), x1 = _mm256_loadu_si256((const __m256i *)(xt + 16));
            __m256i b = cpu_q8_bcast_pair(w);
            a00 = _mm256_add_epi32(a00, _mm256_madd_epi16(x0, b));
            a01 = _mm256_add_epi32(a01, _mm256_madd_epi16(x1, b));
            b = cpu_q8_bcast_pair(w + 2);
            a10 = _mm256_add_epi32(a10, _mm256_madd_epi16(x0, b));
            a11 = _mm256_add_epi32(a11, _mm256_madd_epi16(x1, b));
            b = cpu_q8_bcast_pair(w + 4);
            a20 = _mm256_add_epi32(a20, _mm256_madd_epi16(x0, b));
            a21 = _mm256_add_epi32(a21, _mm256_madd_epi16(x1, b));
            b = cpu_q8_bcast_pair(w + 6);
            a30 = _mm256_add_epi32(a30, _mm256_madd_epi16(x0, b));
            a31 = _mm256_add_epi32(a31, _mm256_madd_epi16(x1, b));
            b = cpu_q8_bcast_pair(w + 8);
            a40 = _mm256_add_epi32(a40, _mm256_madd_epi16(x0, b));
            a41 = _mm256_add_epi32(a41, _mm256_madd_epi16(x1, b));
            b = cpu_q8_bcast_pair(w + 10);
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
            __m256i c = cpu_q8_codes_avx2(acc[i][h], bias, mult, flo, fhi, yz);
            if (i < nm && np == PT) {
                __m128i s = _mm_packs_epi32(_mm256_castsi256_si128(c), _mm256_extracti128_si256(c, 1));
                s = q->u8 ? _mm_packus_epi16(s, s) : _mm_packs_epi16(s, s);
                _mm_storel_epi64((__m128i *)(out + i * ohw + 8 * h), s);
            } else {
                _mm256_storeu_si256((__m256i *)&codes[i][8 * h], c);
            }
        }
    }
}
#endif

/* output row oy of image img: every group, channel tile and pixel tile */
static void conv_row(void *ctx, size_t img, size_t oy)
{
    const s1_job *j = ctx;
    const cpu_q8conv *q = j->q;
    const cpu_conv_geom *g = &q->g;
    int64_t ohw = g->oh * g->ow;
    int32_t codes[MT][PT];
    for (int64_t gr = 0; gr < g->group; gr++) {
        /* output (oy, ox) reads padded (oy + ky * dh, ox + kx * dw) */
        const int16_t *xrow = plane_of(j, (int64_t)img, gr, 0) + (int64_t)oy * q->wp * 2;
        for (int64_t m0 = 0; m0 < q->goc6; m0 += MT) {
            size_t k0 = (size_t)(gr * q->goc6 + m0);
            const int16_t *w = q->w + k0 * (size_t)(q->cpairs * q->ntap) * 2;
            int64_t nm = q->goc - m0 < MT ? q->goc - m0 : MT;
            for (int64_t ox = 0; ox < g->ow; ox += PT) {
                int64_t np = g->ow - ox < PT ? g->ow - ox : PT, p0 = (int64_t)oy * g->ow + ox;
#ifdef CPU_HAVE_X86
                if (q->isa >= CPU_ISA_AVX2) {
                    uint8_t *out = j->y + ((int64_t)img * g->m + gr * q->goc + m0) * ohw + p0;
                    tile_avx2(j, xrow + 2 * ox, w, k0, out, ohw, nm, np, codes);
                    if (np < PT)
                        store_codes(j, (int64_t)img, gr, m0, p0, np, codes);
                    continue;
                }
#endif
                tile_portable(j, xrow + 2 * ox, w, k0, codes);
                store_codes(j, (int64_t)img, gr, m0, p0, np, codes);
            }
        }
    }
}

void cpu_q8s1_run(const cpu_q8conv *q, pthreadpool_t pool, const void *x, void *y, void *scratch)
{
    s1_job j = {q, x, y, (int16_t *)(((uintptr_t)scratch + 63u) & ~(uintptr_t)63u)};
    const cpu_conv_geom *g = &q->g;
    /* the slack past the last plane is read (lanes not stored) but must be defined */
    memset(j.xp + g->n * g->group * q->cpairs * q->plane * 2, 0, SLACK * sizeof(int16_t));
    pthreadpool_parallelize_2d(cpu_pool_for(pool, (double)(g->n * g->c * q->plane)), pack_plane, &j, (size_t)g->n,
                               (size_t)(g->group * q->cpairs), 0);
    pthreadpool_parallelize_2d(pool, conv_row, &j, (size_t)g->n, (size_t)g->oh, 0);
}
