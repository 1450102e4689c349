/*
 * The integer convolution on AVX-512 VNNI (vpdpbusd: 64 unsigned bytes
 * times 64 signed bytes, four products summed into each of 16 int32 lanes),
 * any stride, in the graph's NCHW order as cpu_q8conv_s1.c; it replaces
 * that file and cpu_q8conv.c's NHWC tiles when [provider.cpu] isa is avx512
 * (auto on a CPU with AVX-512 F/BW/VL and VNNI) and every w - w_zp fits a
 * signed byte (cpu_q8conv_init decides). vpdpbusd wants one operand
 * unsigned, so the input codes are shifted:
 *
 *   x_u = x + 128 (int8 codes: x ^ 0x80) or x (uint8 codes), in [0, 255];
 *   z   = x_zp + 128 or x_zp, the byte of a zero input (x - x_zp = 0);
 *   sum (x - x_zp) * w' = sum x_u * w' - z * sum w'   (w' = w - w_zp),
 *
 * and the padding is filled with z, so a padded tap contributes x_u - z = 0
 * exactly as the int16 kernels' zeros do; z * sum w' (over every tap of the
 * output channel) is folded into the bias at prepare. Every sum wraps in
 * int32 (vpdpbusd does not saturate, the bias add wraps as in
 * cpu_q8_requant.h) and the true sum lies inside int32 (cpu_q8conv_fits), so
 * acc + bias is the same int32 as on the AVX2 and portable paths and the
 * requantization gives the same bytes.
 *
 *   run:     per image, padded planes of channel quads [group][quad][phase]
 *            [padded row][column][4] bytes x_u: for any tap, 16 consecutive
 *            output pixels of a row read 64 contiguous bytes, the unsigned
 *            operand of one vpdpbusd. At stride sw the padded columns are
 *            split into sw phases (column ph + sw * i is entry i of phase
 *            ph), so output ox at tap kx reads entry ox + kx * dw / sw of
 *            phase kx * dw % sw: neighbours still at any stride (one phase
 *            at stride 1);
 *   prepare: [group][tile of 8 output channels][quad][tap][8][4] bytes w',
 *            a channel's 4 bytes broadcast as the signed operand;
 *   tile:    32 pixels of one output row x 8 output channels, 16
 *            accumulators: per (quad, tap) two loads, eight broadcasts,
 *            16 vpdpbusd; the codes go straight into the NCHW output with
 *            masked stores (partial tiles too).
 *
 * With one input channel at stride 1 (a network's first layer,
 * super_resolution-10's 1 -> 64 5x5) a channel quad would be three quarters
 * zeros, so the quad runs
 * over four horizontally adjacent taps instead (xquad): packed column c holds
 * the padded row's columns c .. c + 3, and a row of kw taps is ceil(kw / 4)
 * quads (the taps past kw have zero weights).
 *
 * Each output is summed by one call in one fixed order, so every thread
 * count gives the same bytes.
 */
#include "cpu.h"
#include "cpu_q8_requant.h"

#include <stdlib.h>
#include <string.h>

#define VM 8      /* output channels per tile */
#define VP 32     /* pixels per tile */
#define VSLACK 256 /* bytes read past the last plane by a row's last, partial tile (lanes not stored) */

static size_t align64(size_t v) { return (v + 63u) & ~(size_t)63u; }

bool cpu_q8v_fits(const cpu_q8conv *q, const uint8_t *w, int32_t wz)
{
#ifdef CPU_HAVE_X86
    if (q->isa < CPU_ISA_AVX512)
        return false;
    size_t wn = (size_t)(q->g.m * q->gic * q->g.kh * q->g.kw);
    for (size_t i = 0; i < wn; i++) {
        int32_t v = (q->u8 ? (int32_t)w[i] : (int32_t)(int8_t)w[i]) - wz;
        if (v < -128 || v > 127)
            return false; /* e.g. uint8 weights around a zero point far from 128: the int16 kernel */
    }
    return true;
#else
    (void)q;
    (void)w;
    (void)wz;
    return false;
#endif
}

sy_status *cpu_q8v_init(cpu_q8conv *q, const uint8_t *w, int32_t wz, const int32_t *bias, const float *mult)
{
    const cpu_conv_geom *g = &q->g;
    q->vnni = true;
    q->s1 = false;
    q->xpair = false;
    q->xquad = q->gic == 1 && g->group == 1 && g->dw == 1 && g->kw > 1 && g->sw == 1;
    int64_t nq = (g->kw + 3) / 4; /* xquad: quads per row of taps */
    q->quads = q->xquad ? 1 : (q->gic + 3) / 4;
    q->ntap = q->xquad ? g->kh * nq : g->kh * g->kw;
    q->goc8 = (q->goc + VM - 1) / VM * VM;
    q->hp = g->ih + g->pt + g->pb;
    q->wp = g->iw + g->pl + g->pr;
    /* xquad: the last quad of a row reads up to 4 * nq - kw columns past the padded row; a stride sw
     * splits the padded columns into sw phases of ceil(wp / sw) */
    q->wq = q->xquad ? q->wp + 4 * nq - g->kw : (q->wp + g->sw - 1) / g->sw;
    q->plane = g->sw * q->hp * q->wq; /* per quad: its phases one after the other */
    q->zb = (uint8_t)(q->u8 ? q->xz : q->xz + 128);
    size_t nch = (size_t)(g->group * q->goc8), wn = nch * (size_t)(q->quads * q->ntap) * 4;
    q->w8 = aligned_alloc(64, align64(wn));
    q->bias = aligned_alloc(64, align64(nch * sizeof(int32_t)));
    q->mult = aligned_alloc(64, align64(nch * sizeof(float)));
    q->tapoff = malloc((size_t)q->ntap * sizeof(int64_t));
    if (!q->w8 || !q->bias || !q->mult || !q->tapoff)
        return cpu_host->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory for %zu packed weights", wn);
    /* output (oy, ox) at tap (ky, kx) reads padded column ox * sw + kx * dw: in phase (kx * dw) % sw,
     * at ox + (kx * dw) / sw, so 16 neighbouring outputs read 16 neighbouring quads at any stride */
    for (int64_t ky = 0; ky < g->kh; ky++)
        for (int64_t t = 0; t < (q->xquad ? nq : g->kw); t++) {
            int64_t col = t * g->dw, ph = col % g->sw;
            q->tapoff[ky * (q->xquad ? nq : g->kw) + t] =
                q->xquad ? (ky * g->dh * q->wq + 4 * t) * 4
                         : ((ph * q->hp + ky * g->dh) * q->wq + col / g->sw) * 4;
        }
    int8_t *d = q->w8;
    for (int64_t gr = 0; gr < g->group; gr++)
        for (int64_t m0 = 0; m0 < q->goc8; m0 += VM) {
            uint32_t wsum[VM] = {0}; /* sum of w' per channel, wrapping as the lanes do */
            for (int64_t jq = 0; jq < q->quads; jq++)
                for (int64_t t = 0; t < q->ntap; t++)
                    for (int64_t ch = 0; ch < VM; ch++)
                        for (int64_t k = 0; k < 4; k++) {
                            int64_t o = m0 + ch, i = q->xquad ? 0 : 4 * jq + k;
                            int64_t ky = q->xquad ? t / nq : t / g->kw, kx = q->xquad ? 4 * (t % nq) + k : t % g->kw;
                            int32_t v = 0;
                            if (o < q->goc && i < q->gic && kx < g->kw) {
                                size_t wi = (size_t)(((gr * q->goc + o) * q->gic + i) * g->kh * g->kw + ky * g->kw + kx);
                                v = (q->u8 ? (int32_t)w[wi] : (int32_t)(int8_t)w[wi]) - wz;
                            }
                            wsum[ch] += (uint32_t)v;
                            *d++ = (int8_t)v;
                        }
            for (int64_t ch = 0; ch < VM; ch++) {
                int64_t o = m0 + ch, oc = gr * q->goc + o;
                size_t k = (size_t)(gr * q->goc8 + o);
                /* bias - z * sum w': the shift of the input folded in, mod 2^32 */
                q->bias[k] = o < q->goc ? (int32_t)((uint32_t)bias[oc] - (uint32_t)q->zb * wsum[ch]) : 0;
                q->mult[k] = o < q->goc ? mult[oc] : 0.0f;
            }
        }
    return NULL;
}

size_t cpu_q8v_scratch(const cpu_q8conv *q)
{
    return align64((size_t)(q->g.n * q->g.group * q->quads * q->plane * 4 + VSLACK)) + 64;
}

#ifdef CPU_HAVE_X86
#define VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

typedef struct v_job {
    const cpu_q8conv *q;
    const uint8_t *x;
    uint8_t *y;
    uint8_t *xp;
} v_job;

/* the packed plane of quad jq of group gr, image img */
static uint8_t *vplane(const v_job *j, int64_t img, int64_t gr, int64_t jq)
{
    const cpu_q8conv *q = j->q;
    return j->xp + ((img * q->g.group + gr) * q->quads + jq) * q->plane * 4;
}

/* 16 pixels of four channel rows, interleaved into 16 quads */
VNNI_TARGET static void quad16(const __m128i v[4], uint8_t *d)
{
    __m128i a0 = _mm_unpacklo_epi8(v[0], v[1]), a1 = _mm_unpackhi_epi8(v[0], v[1]);
    __m128i b0 = _mm_unpacklo_epi8(v[2], v[3]), b1 = _mm_unpackhi_epi8(v[2], v[3]);
    _mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi16(a0, b0));
    _mm_storeu_si128((__m128i *)(d + 16), _mm_unpackhi_epi16(a0, b0));
    _mm_storeu_si128((__m128i *)(d + 32), _mm_unpacklo_epi16(a1, b1));
    _mm_storeu_si128((__m128i *)(d + 48), _mm_unpackhi_epi16(a1, b1));
}

/* 16 pixels from x (stride 1) or every other of 32 (stride 2) of four channel rows (NULL: a channel past
 * the group's, any byte does: its weights are 0), shifted to unsigned, as 16 quads */
VNNI_TARGET static void pack16q(const uint8_t *const r[4], int64_t ix, int64_t sw, uint8_t *d, __m128i flip,
                                __m128i zb)
{
    __m128i v[4];
    const __m128i even = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    for (int k = 0; k < 4; k++) {
        if (!r[k]) {
            v[k] = zb;
            continue;
        }
        __m128i a = _mm_loadu_si128((const __m128i *)(r[k] + ix));
        if (sw == 2) {
            __m128i b = _mm_loadu_si128((const __m128i *)(r[k] + ix + 16));
            a = _mm_unpacklo_epi64(_mm_shuffle_epi8(a, even), _mm_shuffle_epi8(b, even));
        }
        v[k] = _mm_xor_si128(a, flip);
    }
    quad16(v, d);
}

/* padded row r of packed plane pq (group * quads + quad) of image img, each phase */
VNNI_TARGET static void pack_row(void *ctx, size_t item, size_t r)
{
    const v_job *j = ctx;
    const cpu_q8conv *q = j->q;
    const cpu_conv_geom *g = &q->g;
    int64_t img = (int64_t)item / (g->group * q->quads), pq = (int64_t)item % (g->group * q->quads);
    int64_t gr = pq / q->quads, jq = pq % q->quads, hw = g->ih * g->iw, y = (int64_t)r - g->pt;
    int64_t sw = q->xquad ? 1 : g->sw;
    uint8_t *d0 = vplane(j, img, gr, jq) + (int64_t)r * q->wq * 4, zb = q->zb, flip = q->u8 ? 0 : 0x80;
    if (y < 0 || y >= g->ih) {
        for (int64_t ph = 0; ph < sw; ph++)
            memset(d0 + ph * q->hp * q->wq * 4, zb, (size_t)(q->wq * 4));
        return;
    }
    const uint8_t *src = j->x + (img * g->c + gr * q->gic) * hw + y * g->iw;
    if (q->xquad) {
        /* column c: padded columns c .. c + 3 of the one channel; inside the row 16 columns at a time, four
         * byte shuffles of four overlapping loads */
        const __m128i sh = _mm_setr_epi8(0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6);
        const __m128i vflip = _mm_set1_epi8((char)flip);
        int64_t c = 0;
        for (; c < q->wq; c++) {
            if (c >= g->pl && c + 16 <= q->wq && c - g->pl + 28 <= g->iw) {
                const uint8_t *sx = src + (c - g->pl);
                for (int h = 0; h < 4; h++) {
                    __m128i v = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(sx + 4 * h)), vflip);
                    _mm_storeu_si128((__m128i *)(d0 + 4 * c + 16 * h), _mm_shuffle_epi8(v, sh));
                }
                c += 15;
                continue;
            }
            for (int64_t k = 0; k < 4; k++) {
                int64_t ix = c + k - g->pl;
                d0[4 * c + k] = ix >= 0 && ix < g->iw ? (uint8_t)(src[ix] ^ flip) : zb;
            }
        }
        return;
    }
    const uint8_t *rows[4];
    for (int k = 0; k < 4; k++)
        rows[k] = 4 * jq + k < q->gic ? src + (4 * jq + k) * hw : NULL;
    __m128i vflip = _mm_set1_epi8((char)flip), vzb = _mm_set1_epi8((char)zb);
    for (int64_t ph = 0; ph < sw; ph++) {
        /* entry i of phase ph: padded column ph + sw * i, input column ix = ph + sw * i - pl */
        uint8_t *d = d0 + ph * q->hp * q->wq * 4;
        int64_t i = 0;
        for (; i < q->wq; i++) {
            int64_t ix = ph + sw * i - g->pl;
            if (ix >= 0 && (sw <= 2 || ix >= g->iw))
                break;
            if (ix < 0 || ix >= g->iw)
                memset(d + 4 * i, zb, 4);
            else
                for (int k = 0; k < 4; k++)
                    d[4 * i + k] = rows[k] ? (uint8_t)(rows[k][ix] ^ flip) : zb;
        }
        if (sw <= 2) /* blocks of 16 entries whose 16 (or 32) input bytes lie inside the row */
            for (; i + 16 <= q->wq && ph + sw * i - g->pl + 16 * sw <= g->iw; i += 16)
                pack16q(rows, ph + sw * i - g->pl, sw, d + 4 * i, vflip, vzb);
        for (; i < q->wq; i++) {
            int64_t ix = ph + sw * i - g->pl;
            if (ix < 0 || ix >= g->iw)
                memset(d + 4 * i, zb, 4);
            else
                for (int k = 0; k < 4; k++)
                    d[4 * i + k] = rows[k] ? (uint8_t)(rows[k][ix] ^ flip) : zb;
        }
    }
}

/* accumulators of one channel: the two 16-pixel halves */
#define VSTEP(i)                                                                                                       \
    do {                                                                                                               \
        int32_t wv;                                                                                                    \
        memcpy(&wv, w + 4 * (i), 4);                                                                                   \
        __m512i b = _mm512_set1_epi32(wv);                                                                             \
        a##i##0 = _mm512_dpbusd_epi32(a##i##0, x0, b);                                                                 \
        a##i##1 = _mm512_dpbusd_epi32(a##i##1, x1, b);                                                                 \
    } while (0)

/* x: the tile's first pixel in the plane of quad 0; channel i's codes at out + i * ohw, np pixels, nm channels */
VNNI_TARGET static void tile_vnni(const cpu_q8conv *q, const uint8_t *x, const int8_t *w, size_t k0, uint8_t *out,
                                  int64_t ohw, int64_t nm, int64_t np)
{
    __m512i a00 = _mm512_setzero_si512(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00;
    __m512i a31 = a00, a40 = a00, a41 = a00, a50 = a00, a51 = a00, a60 = a00, a61 = a00, a70 = a00, a71 = a00;
    const int64_t *tapoff = q->tapoff;
    int64_t ntap = q->ntap, pstride = q->plane * 4;
    for (int64_t jq = 0; jq < q->quads; jq++, x += pstride)
        for (int64_t t = 0; t < ntap; t++, w += VM * 4) {
            const uint8_t *xt = x + tapoff[t];
            __m512i x0 = _mm512_loadu_si512((const void *)xt), x1 = _mm512_loadu_si512((const void *)(xt + 64));
            VSTEP(0);
            VSTEP(1);
            VSTEP(2);
            VSTEP(3);
            VSTEP(4);
            VSTEP(5);
            VSTEP(6);
            VSTEP(7);
        }
    __m512i acc[VM][2] = {{a00, a01}, {a10, a11}, {a20, a21}, {a30, a31},
                          {a40, a41}, {a50, a51}, {a60, a61}, {a70, a71}};
    __m512 flo = _mm512_set1_ps((float)(q->lo - q->yz)), fhi = _mm512_set1_ps((float)(q->hi - q->yz));
    __m512i yz = _mm512_set1_epi32(q->yz);
    __mmask16 m[2] = {np >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << np) - 1u),
                      np >= 32 ? (__mmask16)0xFFFF : np > 16 ? (__mmask16)((1u << (np - 16)) - 1u) : (__mmask16)0};
    for (int64_t i = 0; i < nm; i++) {
        __m512i bias = _mm512_set1_epi32(q->bias[k0 + (size_t)i]);
        __m512 mult = _mm512_set1_ps(q->mult[k0 + (size_t)i]);
        for (int h = 0; h < 2; h++) {
            /* cpu_q8_code on 16 lanes: the same operations in the same order as cpu_q8_codes_avx2 */
            __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(acc[i][h], bias)), mult);
            f = _mm512_min_ps(_mm512_max_ps(f, flo), fhi);
            __m512i c = _mm512_add_epi32(_mm512_cvtps_epi32(f), yz);
            /* the codes lie in the type's range already: truncation keeps their bytes */
            _mm_mask_storeu_epi8(out + i * ohw + 16 * h, m[h], _mm512_cvtepi32_epi8(c));
        }
    }
}

/* output row oy of image img: every group, channel tile and pixel tile */
VNNI_TARGET static void conv_row(void *ctx, size_t img, size_t oy)
{
    const v_job *j = ctx;
    const cpu_q8conv *q = j->q;
    const cpu_conv_geom *g = &q->g;
    int64_t ohw = g->oh * g->ow;
    size_t wtile = (size_t)(q->quads * q->ntap) * VM * 4;
    for (int64_t gr = 0; gr < g->group; gr++) {
        /* output (oy, ox) reads padded (oy * sh + ky * dh, ox * sw + kx * dw) */
        const uint8_t *xrow = vplane(j, (int64_t)img, gr, 0) + (int64_t)oy * g->sh * q->wq * 4;
        for (int64_t m0 = 0; m0 < q->goc; m0 += VM) {
            size_t k0 = (size_t)(gr * q->goc8 + m0);
            const int8_t *w = q->w8 + (k0 / VM) * wtile;
            int64_t nm = q->goc - m0 < VM ? q->goc - m0 : VM;
            uint8_t *out = j->y + ((int64_t)img * g->m + gr * q->goc + m0) * ohw + (int64_t)oy * g->ow;
            for (int64_t ox = 0; ox < g->ow; ox += VP) {
                int64_t np = g->ow - ox < VP ? g->ow - ox : VP;
                tile_vnni(q, xrow + 4 * ox, w, k0, out + ox, ohw, nm, np);
            }
        }
    }
}
#endif

void cpu_q8v_run(const cpu_q8conv *q, pthreadpool_t pool, const void *x, void *y, void *scratch)
{
#ifdef CPU_HAVE_X86
    v_job j = {q, x, y, (uint8_t *)(((uintptr_t)scratch + 63u) & ~(uintptr_t)63u)};
    const cpu_conv_geom *g = &q->g;
    size_t planes = (size_t)(g->n * g->group * q->quads);
    /* the slack past the last plane is read (lanes not stored) but must be defined */
    memset(j.xp + planes * (size_t)q->plane * 4, 0, VSLACK);
    pthreadpool_parallelize_2d(cpu_pool_for(pool, (double)planes * (double)q->plane * 4), pack_row, &j, planes,
                               (size_t)q->hp, 0);
    pthreadpool_parallelize_2d(pool, conv_row, &j, (size_t)g->n, (size_t)g->oh, 0);
#else
    (void)q;
    (void)pool;
    (void)x;
    (void)y;
    (void)scratch;
#endif
}
