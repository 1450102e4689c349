/*
 * tflk_conv: CONV_2D (OHWI filter, grouped when the filter has fewer input
 * channels than the input) and DEPTHWISE_CONV_2D ([1, KH, KW, OC] filter,
 * channel multiplier OC / IC), NHWC.
 */
#include "tflk.h"

/* The one loop nest of both dtypes: for each output pixel and channel, the
 * accumulator starts at the bias, takes MAC(acc, x, w) over the window that
 * lies inside the input (padding contributes nothing), and STORE(acc, oc)
 * gives the output value. int8 accumulates in uint32 (two's complement
 * wrap, so starting at the bias equals adding it last). */
#define TFLK_CONV_LOOP(XT, YT, ACCT, MAC, STORE)                                                                   \
    do {                                                                                                           \
        const int32_t IH = p->ih, IW = p->iw, IC = p->ic, OH = p->oh, OW = p->ow, OC = p->oc, KH = p->kh,          \
                      KW = p->kw, FIC = p->fic;                                                                    \
        const int32_t groups = p->depthwise ? IC : IC / FIC;                                                      \
        const int32_t oc_per_group = OC / groups;                                                                 \
        for (int32_t bn = 0; bn < p->n; bn++)                                                                     \
            for (int32_t oy = 0; oy < OH; oy++)                                                                   \
                for (int32_t ox = 0; ox < OW; ox++) {                                                             \
                    const int32_t iy0 = oy * p->sh - p->pt, ix0 = ox * p->sw - p->pl;                             \
                    YT *yp = y + ((bn * OH + oy) * OW + ox) * OC;                                                 \
                    for (int32_t oc = 0; oc < OC; oc++) {                                                         \
                        const int32_t g = oc / oc_per_group;                                                      \
                        ACCT acc = bias ? (ACCT)bias[oc] : (ACCT)0;                                               \
                        for (int32_t ky = 0; ky < KH; ky++) {                                                     \
                            const int32_t iy = iy0 + ky * p->dh;                                                  \
                            if (iy < 0 || iy >= IH)                                                               \
                                continue;                                                                         \
                            for (int32_t kx = 0; kx < KW; kx++) {                                                 \
                                const int32_t ix = ix0 + kx * p->dw;                                              \
                                if (ix < 0 || ix >= IW)                                                           \
                                    continue;                                                                     \
                                const XT *xp = x + ((bn * IH + iy) * IW + ix) * IC;                               \
                                if (p->depthwise) {                                                               \
                                    MAC(acc, xp[g], w[(ky * KW + kx) * OC + oc]);                                 \
                                } else {                                                                          \
                                    const XT *wp = w + ((oc * KH + ky) * KW + kx) * FIC;                          \
                                    const XT *xg = xp + g * FIC;                                                  \
                                    for (int32_t ic = 0; ic < FIC; ic++)                                          \
                                        MAC(acc, xg[ic], wp[ic]);                                                 \
                                }                                                                                 \
                            }                                                                                     \
                        }                                                                                         \
                        yp[oc] = STORE(acc, oc);                                                                  \
                    }                                                                                             \
                }                                                                                                 \
    } while (0)

#define MAC_S8(acc, xv, wv) ((acc) += (uint32_t)(((int32_t)(xv) + p->in_off) * (wv)))
#define STORE_S8(acc, oc)                                                                                          \
    (int8_t)tflk_clampi(tflk_rescale(p->rq_single, (int32_t)(acc), p->mult[p->per_channel ? (oc) : 0],             \
                                     p->shift[p->per_channel ? (oc) : 0]) + p->out_zp, p->lo, p->hi)
#define MAC_F32(acc, xv, wv) ((acc) += (xv) * (wv))
#define STORE_F32(acc, oc) tflk_act_apply(&p->act, (acc))

/* ---- int8 fast paths -------------------------------------------------------
 * The generic loop costs about 14 rv32 instructions per multiply-accumulate:
 * an add of the input offset, index arithmetic and two bounds tests per tap,
 * a requantization that re-decides its form per value. The fast paths below
 * give the same int32 accumulator bit for bit, because every step is exact
 * modulo 2^32 (the accumulator wraps like the reference's int32):
 *   - offset folding: sum (x + off) w = sum x w + off * sum w, with sum w
 *     taken once per output channel over the whole filter (the loops run
 *     output channels outermost, so it costs one pass over the weights per
 *     call, not per pixel). Only interior pixels, whose every tap lies in the
 *     input, use it; a border pixel takes the taps that lie inside with
 *     (x + off) w as the reference does, since a padded tap adds nothing.
 *   - register blocking: 4 output channels x 2 output pixels share each
 *     loaded weight and activation (6 loads per 8 MACs), inner loops over
 *     contiguous NHWC runs unrolled by 4 so the loads use immediate offsets.
 *   - the requantization's per-channel choices are made once per channel
 *     (tflk_rq, equal to tflk_rescale for every value).
 */

/* the output value of one accumulator of channel rq; zp, lo and hi are the
 * caller's locals (read from p once: every int8 store may alias *p, so the
 * compiler would load them again per value) */
static inline int8_t conv_store(const tflk_rq *rq, int32_t zp, int32_t lo, int32_t hi, uint32_t acc)
{
    return (int8_t)tflk_clamp_zp(tflk_rq_apply(rq, (int32_t)acc), zp, lo, hi);
}
#define STORE8(rq, acc) conv_store((rq), zp, lo, hi, (acc))

/* [lo, hi): the output positions along one axis whose every tap lies inside
 * the input (in size n, kernel k, stride s, dilation d, leading pad pad) */
static void interior_range(int32_t n, int32_t out, int32_t k, int32_t s, int32_t d, int32_t pad, int32_t *lo,
                           int32_t *hi)
{
    int32_t l = (pad + s - 1) / s;
    int32_t lim = n - 1 - (k - 1) * d + pad; /* o * s <= lim */
    int32_t h = lim < 0 ? 0 : lim / s + 1;
    if (l > out)
        l = out;
    if (h > out)
        h = out;
    if (h < l)
        h = l;
    *lo = l;
    *hi = h;
}

/* The reference accumulation of one (pixel, channel) for border pixels:
 * the bias plus (x + off) w over the taps inside the input. xb is the
 * batch's input. */
static uint32_t conv_border_acc(const tflk_conv *p, const int8_t *xb, const int8_t *w, const int32_t *bias,
                                int32_t oy, int32_t ox, int32_t oc)
{
    const int32_t IC = p->ic, KW = p->kw, FIC = p->fic, OC = p->oc;
    const int32_t iy0 = oy * p->sh - p->pt, ix0 = ox * p->sw - p->pl;
    uint32_t acc = bias ? (uint32_t)bias[oc] : 0u;
    for (int32_t ky = 0; ky < p->kh; ky++) {
        const int32_t iy = iy0 + ky * p->dh;
        if (iy < 0 || iy >= p->ih)
            continue;
        for (int32_t kx = 0; kx < KW; kx++) {
            const int32_t ix = ix0 + kx * p->dw;
            if (ix < 0 || ix >= p->iw)
                continue;
            const int8_t *xp = xb + (iy * p->iw + ix) * IC;
            if (p->depthwise) {
                acc += (uint32_t)(((int32_t)xp[oc / (OC / IC)] + p->in_off) * w[(ky * KW + kx) * OC + oc]);
            } else {
                const int8_t *wp = w + ((oc * p->kh + ky) * KW + kx) * FIC;
                for (int32_t ic = 0; ic < FIC; ic++)
                    acc += (uint32_t)(((int32_t)xp[ic] + p->in_off) * wp[ic]);
            }
        }
    }
    return acc;
}

/* the taps of one axis that lie inside the input: [*k0, *k1) for a window
 * starting at i0 (in size n, kernel k, dilation d) */
static void clip_taps(int32_t i0, int32_t n, int32_t k, int32_t d, int32_t *k0, int32_t *k1)
{
    int32_t a = i0 < 0 ? (-i0 + d - 1) / d : 0;
    int32_t lim = n - 1 - i0; /* kk * d <= lim */
    int32_t e = lim < 0 ? 0 : lim / d + 1;
    if (e > k)
        e = k;
    if (a > e)
        a = e;
    *k0 = a;
    *k1 = e;
}

/* the filter's taps as runs contiguous in both the input and the filter:
 * kh rows of nseg runs of len bytes; run (ky, s) starts at ky * xrow + s *
 * xseg in the input and at (ky * nseg + s) * len in the filter */
typedef struct conv_runs {
    int32_t kh, nseg, len, xrow, xseg;
} conv_runs;

#define MAC1(a, xv, wv) ((a) += (uint32_t)((int32_t)(xv) * (int32_t)(wv)))

/* 4 channels (filters w0, w0 + K, w0 + 2K, w0 + 3K) x 2 pixels (xa, xb) */
TFLK_NOINLINE static void dot_4x2(const conv_runs *g, const int8_t *xa, const int8_t *xb, const int8_t *w0, int32_t K,
                    uint32_t acc[8])
{
    uint32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], b0 = acc[4], b1 = acc[5], b2 = acc[6], b3 = acc[7];
    const int8_t *w1 = w0 + K, *w2 = w1 + K, *w3 = w2 + K;
    for (int32_t ky = 0; ky < g->kh; ky++)
        for (int32_t s = 0; s < g->nseg; s++) {
            const int8_t *pa = xa + ky * g->xrow + s * g->xseg, *pb = xb + ky * g->xrow + s * g->xseg;
            int32_t n = g->len;
#define STEP42(o)                                                                                                  \
    do {                                                                                                           \
        const int32_t va = pa[o], vb = pb[o], u0 = w0[o], u1 = w1[o], u2 = w2[o], u3 = w3[o];                      \
        MAC1(a0, va, u0);                                                                                          \
        MAC1(a1, va, u1);                                                                                          \
        MAC1(a2, va, u2);                                                                                          \
        MAC1(a3, va, u3);                                                                                          \
        MAC1(b0, vb, u0);                                                                                          \
        MAC1(b1, vb, u1);                                                                                          \
        MAC1(b2, vb, u2);                                                                                          \
        MAC1(b3, vb, u3);                                                                                          \
    } while (0)
            for (; n >= 2; n -= 2, pa += 2, pb += 2, w0 += 2, w1 += 2, w2 += 2, w3 += 2) {
                STEP42(0);
                STEP42(1);
            }
            for (; n > 0; n--, pa++, pb++, w0++, w1++, w2++, w3++)
                STEP42(0);
#undef STEP42
        }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3, acc[4] = b0, acc[5] = b1, acc[6] = b2, acc[7] = b3;
}

/* dot_4x2 of a 1x1 convolution with a common input channel count KC as a
 * constant: the 4 filters are then w0 + j * KC with immediate offsets (up
 * to 3 * 256 + 1 < 2048, RISC-V's load offset), 3 pointers instead of 6,
 * which leaves GCC the registers it spilled (3 instead of 3.5 instructions
 * per MAC) */
typedef void (*dot42_fn)(const int8_t *pa, const int8_t *pb, const int8_t *w0, uint32_t acc[8]);
#define DOT42_K(KC)                                                                                                \
    TFLK_NOINLINE static void dot42_k##KC(const int8_t *pa, const int8_t *pb, const int8_t *w0, uint32_t acc[8])   \
    {                                                                                                              \
        uint32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], b0 = acc[4], b1 = acc[5], b2 = acc[6],        \
                 b3 = acc[7];                                                                                      \
        for (const int8_t *pe = pa + (KC); pa != pe; pa += 2, pb += 2, w0 += 2) {                                  \
            DOT42_STEP(KC, 0);                                                                                     \
            DOT42_STEP(KC, 1);                                                                                     \
        }                                                                                                          \
        acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3, acc[4] = b0, acc[5] = b1, acc[6] = b2, acc[7] = b3;    \
    }
#define DOT42_STEP(KC, o)                                                                                          \
    do {                                                                                                           \
        const int32_t va = pa[o], vb = pb[o], u0 = w0[o], u1 = w0[(KC) + (o)], u2 = w0[2 * (KC) + (o)],            \
                      u3 = w0[3 * (KC) + (o)];                                                                     \
        MAC1(a0, va, u0);                                                                                          \
        MAC1(a1, va, u1);                                                                                          \
        MAC1(a2, va, u2);                                                                                          \
        MAC1(a3, va, u3);                                                                                          \
        MAC1(b0, vb, u0);                                                                                          \
        MAC1(b1, vb, u1);                                                                                          \
        MAC1(b2, vb, u2);                                                                                          \
        MAC1(b3, vb, u3);                                                                                          \
    } while (0)
DOT42_K(8)
DOT42_K(16)
DOT42_K(32)
DOT42_K(64)
DOT42_K(128)
DOT42_K(256)
#undef DOT42_K

/* dot_4x2 of an R-row filter whose rows are runs of L = KW * IC bytes (KW
 * x IC contiguous in both the NHWC input and the OHWI filter, dilation_w
 * 1) with R and L constants: the 4 filters are w0 + j * RL with immediate
 * offsets (3 * 3 * 192 + 191 < 2048), 3 pointers instead of 6; the input
 * pointers move to the next row by xrow. ResNet-8's 3x3 convolutions over
 * 16, 32 and 64 channels (L = 48, 96, 192) and its 3-channel input layer
 * (9); the DS-CNN's 10x4 input layer over 1 channel (R = 10, L = 4). */
typedef void (*dot42rl_fn)(const int8_t *pa, const int8_t *pb, const int8_t *w0, int32_t xrow, uint32_t acc[8]);
#define DOT42_RL(R, L)                                                                                             \
    TFLK_NOINLINE static void dot42_r##R##_##L(const int8_t *pa, const int8_t *pb, const int8_t *w0, int32_t xrow, \
                                               uint32_t acc[8])                                                    \
    {                                                                                                              \
        uint32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], b0 = acc[4], b1 = acc[5], b2 = acc[6],        \
                 b3 = acc[7];                                                                                      \
        for (int32_t ky = 0; ky < (R); ky++, pa += xrow - (L), pb += xrow - (L)) {                                 \
            const int8_t *pe = pa + ((L) & ~1);                                                                    \
            for (; pa != pe; pa += 2, pb += 2, w0 += 2) {                                                          \
                DOT42_STEP((R) * (L), 0);                                                                          \
                DOT42_STEP((R) * (L), 1);                                                                          \
            }                                                                                                      \
            if ((L) & 1) {                                                                                         \
                DOT42_STEP((R) * (L), 0);                                                                          \
                pa++, pb++, w0++;                                                                                  \
            }                                                                                                      \
        }                                                                                                          \
        acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3, acc[4] = b0, acc[5] = b1, acc[6] = b2, acc[7] = b3;    \
    }
DOT42_RL(3, 9)
DOT42_RL(3, 48)
DOT42_RL(3, 96)
DOT42_RL(3, 192)
DOT42_RL(10, 4)
#undef DOT42_RL

static dot42rl_fn dot42rl_for(int32_t kh, int32_t dw, int32_t L)
{
    if (dw != 1)
        return NULL;
    if (kh == 10 && L == 4)
        return dot42_r10_4;
    if (kh != 3)
        return NULL;
    switch (L) {
    case 9: return dot42_r3_9;
    case 48: return dot42_r3_48;
    case 96: return dot42_r3_96;
    case 192: return dot42_r3_192;
    default: return NULL;
    }
}

#undef DOT42_STEP

/* the constant-count kernel for a 1x1 filter of K bytes, or NULL */
static dot42_fn dot42_for(int32_t kh, int32_t kw, int32_t K)
{
    if (kh != 1 || kw != 1)
        return NULL;
    switch (K) {
    case 8: return dot42_k8;
    case 16: return dot42_k16;
    case 32: return dot42_k32;
    case 64: return dot42_k64;
    case 128: return dot42_k128;
    case 256: return dot42_k256;
    default: return NULL;
    }
}

/* 4 channels x 1 pixel (an odd interior pixel at the end of a row) */
TFLK_NOINLINE static void dot_4x1(const conv_runs *g, const int8_t *xa, const int8_t *w0, int32_t K, uint32_t acc[4])
{
    uint32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    const int8_t *w1 = w0 + K, *w2 = w1 + K, *w3 = w2 + K;
    for (int32_t ky = 0; ky < g->kh; ky++)
        for (int32_t s = 0; s < g->nseg; s++) {
            const int8_t *pa = xa + ky * g->xrow + s * g->xseg;
            for (int32_t n = g->len; n > 0; n--, pa++, w0++, w1++, w2++, w3++) {
                const int32_t va = *pa;
                MAC1(a0, va, *w0);
                MAC1(a1, va, *w1);
                MAC1(a2, va, *w2);
                MAC1(a3, va, *w3);
            }
        }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}

/* 1 channel x 1 pixel (the channels past the last multiple of 4) */
static uint32_t dot_1x1(const conv_runs *g, const int8_t *xa, const int8_t *w0, uint32_t a)
{
    for (int32_t ky = 0; ky < g->kh; ky++)
        for (int32_t s = 0; s < g->nseg; s++) {
            const int8_t *pa = xa + ky * g->xrow + s * g->xseg;
            for (int32_t n = g->len; n > 0; n--, pa++, w0++)
                MAC1(a, *pa, *w0);
        }
    return a;
}

/* 4 channels (filters w0 + j K) x 1 border pixel: the taps inside the
 * input, (x + off) w as the reference, the offset added once per
 * activation for the 4 channels */
TFLK_NOINLINE static void border_4x1(const tflk_conv *p, const int8_t *xb, const int8_t *w0, int32_t K, int32_t oy,
                                     int32_t ox, uint32_t acc[4])
{
    const int32_t IC = p->ic, KW = p->kw, off = p->in_off;
    const int32_t iy0 = oy * p->sh - p->pt, ix0 = ox * p->sw - p->pl;
    int32_t ky0, ky1, kx0, kx1;
    clip_taps(iy0, p->ih, p->kh, p->dh, &ky0, &ky1);
    clip_taps(ix0, p->iw, KW, p->dw, &kx0, &kx1);
    if (kx0 >= kx1)
        return;
    /* the taps inside as runs contiguous in both the input and the filter: a row's (kx1 - kx0) x IC
     * bytes when dilation_w is 1, else one run of IC per tap */
    const int32_t nseg = p->dw == 1 ? 1 : kx1 - kx0, len = p->dw == 1 ? (kx1 - kx0) * IC : IC;
    const int32_t xseg = p->dw * IC;
    uint32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    for (int32_t ky = ky0; ky < ky1; ky++) {
        const int8_t *xr = xb + ((iy0 + ky * p->dh) * p->iw + ix0 + kx0 * p->dw) * IC;
        const int8_t *wr = w0 + (ky * KW + kx0) * IC;
        for (int32_t sg = 0; sg < nseg; sg++, xr += xseg, wr += IC) {
            const int8_t *xp = xr, *wp = wr;
            for (const int8_t *xe = xp + len; xp != xe; xp++, wp++) {
                const int32_t xv = *xp + off;
                MAC1(a0, xv, wp[0]);
                MAC1(a1, xv, wp[K]);
                MAC1(a2, xv, wp[2 * K]);
                MAC1(a3, xv, wp[3 * K]);
            }
        }
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}

/* the accumulator's start of an interior pixel: bias + off * sum w */
static uint32_t folded_base(const tflk_conv *p, const int32_t *bias, int32_t oc, uint32_t wsum)
{
    return (bias ? (uint32_t)bias[oc] : 0u) + (uint32_t)p->in_off * wsum;
}

static void rq_of(const tflk_conv *p, int32_t oc, tflk_rq *r)
{
    const int32_t c = p->per_channel ? oc : 0;
    tflk_rq_init(r, p->rq_single, p->mult[c], p->shift[c]);
}

/* y[l * yl + i * ys] = the int8 output of base + acc[l * n + i] (nl lines
 * of n), one channel's constants held in registers */
TFLK_NOINLINE static void rq_lines(const tflk_rq *r, const uint32_t *acc, int32_t nl, int32_t n, int8_t *y,
                                   int32_t yl, int32_t ys, uint32_t base, int32_t zp, int32_t lo, int32_t hi)
{
    if (r->slow || r->s31 || r->left) {
        for (int32_t l = 0; l < nl; l++)
            for (int32_t i = 0; i < n; i++)
                y[l * yl + i * ys] = (int8_t)tflk_clamp_zp(tflk_rq_apply(r, (int32_t)(base + *acc++)), zp, lo, hi);
        return;
    }
    const int64_t m = r->mult;
    const uint32_t np = r->nklo_p, hp = r->khi_p, nn = r->nklo_n, hn = r->khi_n;
    const int32_t sh = r->sh;
    for (; nl > 0; nl--, y += yl) {
        int8_t *yp = y;
        for (const uint32_t *e = acc + n; acc != e; acc++, yp += ys) {
            const int64_t prod = (int64_t)(int32_t)(base + *acc) * m;
            const uint32_t lo32 = (uint32_t)prod, hi32 = (uint32_t)((uint64_t)prod >> 32);
            const uint32_t h =
                (int32_t)hi32 < 0 ? hi32 + hn + (uint32_t)(lo32 > nn) : hi32 + hp + (uint32_t)(lo32 > np);
            int32_t v = ((int32_t)h >> sh) + zp;
            /* written so that an in-range value takes two untaken branches (tflk_clampi's form compiles
             * to three moves and two branches on rv32 GCC -O2) */
            if (v > hi)
                v = hi;
            if (v < lo)
                v = lo;
            *yp = (int8_t)v;
        }
    }
}

/* A 1x1, stride 1 convolution (a GEMM over the pixels) with a common input
 * channel count KC: 4 output channels x 4 pixels per inner loop, the 4
 * filters at w0 + j KC and the 4 pixels at x + i KC (immediate offsets up
 * to 3 * 256 + 1 < 2048), 8 loads per 16 MACs, and the loop over pixel
 * blocks inside the function (one call per PW_CHUNK pixels). The raw sums
 * of channel j, pixel i go to acc[j * PW_CHUNK + i]; rq_lines adds the
 * folded base and requantizes. */
#define PW_CHUNK 32
typedef void (*pw44_fn)(const int8_t *x, const int8_t *w0, int32_t nblk, uint32_t *acc);
#define PW44_STEP(KC, o)                                                                                           \
    do {                                                                                                           \
        const int32_t u0 = w[o], u1 = w[(KC) + (o)], u2 = w[2 * (KC) + (o)], u3 = w[3 * (KC) + (o)];               \
        int32_t v = xp[o];                                                                                         \
        MAC1(c00, v, u0), MAC1(c10, v, u1), MAC1(c20, v, u2), MAC1(c30, v, u3);                                    \
        v = xp[(KC) + (o)];                                                                                        \
        MAC1(c01, v, u0), MAC1(c11, v, u1), MAC1(c21, v, u2), MAC1(c31, v, u3);                                    \
        v = xp[2 * (KC) + (o)];                                                                                    \
        MAC1(c02, v, u0), MAC1(c12, v, u1), MAC1(c22, v, u2), MAC1(c32, v, u3);                                    \
        v = xp[3 * (KC) + (o)];                                                                                    \
        MAC1(c03, v, u0), MAC1(c13, v, u1), MAC1(c23, v, u2), MAC1(c33, v, u3);                                    \
    } while (0)
#define PW44_K(KC)                                                                                                 \
    TFLK_NOINLINE static void pw44_k##KC(const int8_t *x, const int8_t *w0, int32_t nblk, uint32_t *acc)           \
    {                                                                                                              \
        for (; nblk > 0; nblk--, x += 4 * (KC), acc += 4) {                                                        \
            uint32_t c00 = 0, c01 = 0, c02 = 0, c03 = 0, c10 = 0, c11 = 0, c12 = 0, c13 = 0;                       \
            uint32_t c20 = 0, c21 = 0, c22 = 0, c23 = 0, c30 = 0, c31 = 0, c32 = 0, c33 = 0;                       \
            const int8_t *w = w0;                                                                                  \
            for (const int8_t *xp = x, *xe = x + (KC); xp != xe; xp++, w++)                                        \
                PW44_STEP(KC, 0);                                                                                  \
            acc[0] = c00, acc[1] = c01, acc[2] = c02, acc[3] = c03;                                                \
            acc[PW_CHUNK] = c10, acc[PW_CHUNK + 1] = c11, acc[PW_CHUNK + 2] = c12, acc[PW_CHUNK + 3] = c13;        \
            acc[2 * PW_CHUNK] = c20, acc[2 * PW_CHUNK + 1] = c21, acc[2 * PW_CHUNK + 2] = c22;                     \
            acc[2 * PW_CHUNK + 3] = c23;                                                                           \
            acc[3 * PW_CHUNK] = c30, acc[3 * PW_CHUNK + 1] = c31, acc[3 * PW_CHUNK + 2] = c32;                     \
            acc[3 * PW_CHUNK + 3] = c33;                                                                           \
        }                                                                                                          \
    }
PW44_K(8)
PW44_K(16)
PW44_K(32)
PW44_K(64)
PW44_K(128)
PW44_K(256)
#undef PW44_K
#undef PW44_STEP

static pw44_fn pw44_for(int32_t K)
{
    switch (K) {
    case 8: return pw44_k8;
    case 16: return pw44_k16;
    case 32: return pw44_k32;
    case 64: return pw44_k64;
    case 128: return pw44_k128;
    case 256: return pw44_k256;
    default: return NULL;
    }
}

/* CONV_2D with one group (the filter holds every input channel): OHWI, so
 * a filter row ky is KW * IC contiguous bytes, as is the input under it
 * when dilation_w is 1 (else KW runs of IC); a 1x1 convolution is a GEMM
 * over pixels with runs of IC. */
static void conv_s8_dense(const tflk_conv *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y)
{
    /* a 1x1, stride 1 convolution over an H x W image is one over a 1 x HW
     * row: the pixel pairs then run across the ends of rows (an odd W
     * leaves one lone pixel per image, not one per row) */
    tflk_conv flat;
    if (p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->pt == 0 && p->pl == 0 && p->oh == p->ih &&
        p->ow == p->iw) {
        flat = *p;
        flat.iw = flat.ow = p->ih * p->iw;
        flat.ih = flat.oh = 1;
        p = &flat;
    }
    const int32_t IH = p->ih, IW = p->iw, IC = p->ic, OH = p->oh, OW = p->ow, OC = p->oc, KW = p->kw;
    const int32_t K = p->kh * KW * IC;
    const int32_t zp = p->out_zp, lo = p->lo, hi = p->hi;
    conv_runs g = {p->kh, p->dw == 1 ? 1 : KW, p->dw == 1 ? KW * IC : IC, p->dh * IW * IC, p->dw * IC};
    const dot42_fn dot42 = dot42_for(p->kh, KW, K);
    const dot42rl_fn dot42rl = dot42rl_for(p->kh, p->dw, KW * IC);
    const pw44_fn pw44 = p == &flat ? pw44_for(K) : NULL;
    uint32_t pwacc[4 * PW_CHUNK];
    int32_t oy_lo, oy_hi, ox_lo, ox_hi;
    interior_range(IH, OH, p->kh, p->sh, p->dh, p->pt, &oy_lo, &oy_hi);
    interior_range(IW, OW, KW, p->sw, p->dw, p->pl, &ox_lo, &ox_hi);
    for (int32_t bn = 0; bn < p->n; bn++) {
        const int8_t *xb = x + bn * IH * IW * IC;
        int8_t *yb = y + bn * OH * OW * OC;
        for (int32_t oc0 = 0; oc0 < OC;) {
            const int32_t nb = OC - oc0 >= 4 ? 4 : 1;
            const int8_t *wb = w + oc0 * K;
            uint32_t base[4], bias0[4];
            tflk_rq rq[4];
            for (int32_t j = 0; j < nb; j++) {
                uint32_t s = 0;
                for (int32_t k = 0; k < K; k++)
                    s += (uint32_t)(int32_t)wb[j * K + k];
                base[j] = folded_base(p, bias, oc0 + j, s);
                bias0[j] = bias ? (uint32_t)bias[oc0 + j] : 0u;
                rq_of(p, oc0 + j, &rq[j]);
            }
            if (pw44 && nb == 4) { /* the flattened 1x1: OH = 1, every pixel interior */
                for (int32_t o0 = 0; o0 < OW; o0 += PW_CHUNK) {
                    const int32_t cnt = OW - o0 < PW_CHUNK ? OW - o0 : PW_CHUNK, full = cnt / 4 * 4;
                    const int8_t *xa = xb + o0 * K;
                    pw44(xa, wb, cnt / 4, pwacc);
                    for (int32_t i = full; i < cnt; i++) {
                        uint32_t a4[4] = {0, 0, 0, 0};
                        dot_4x1(&g, xa + i * K, wb, K, a4);
                        for (int32_t j = 0; j < 4; j++)
                            pwacc[j * PW_CHUNK + i] = a4[j];
                    }
                    for (int32_t j = 0; j < 4; j++)
                        rq_lines(&rq[j], pwacc + j * PW_CHUNK, 1, cnt, yb + o0 * OC + oc0 + j, 0, OC, base[j], zp, lo,
                                 hi);
                }
                oc0 += 4;
                continue;
            }
            for (int32_t oy = 0; oy < OH; oy++) {
                const int32_t row_in = oy >= oy_lo && oy < oy_hi;
                int8_t *yr = yb + oy * OW * OC + oc0;
                for (int32_t ox = 0; ox < OW;) {
                    int8_t *ya = yr + ox * OC;
                    if (!row_in || ox < ox_lo || ox >= ox_hi) {
                        if (nb == 4) {
                            uint32_t acc[4] = {bias0[0], bias0[1], bias0[2], bias0[3]};
                            border_4x1(p, xb, wb, K, oy, ox, acc);
                            for (int32_t j = 0; j < 4; j++)
                                ya[j] = STORE8(&rq[j], acc[j]);
                        } else {
                            ya[0] = STORE8(&rq[0], conv_border_acc(p, xb, w, bias, oy, ox, oc0));
                        }
                        ox++;
                        continue;
                    }
                    /* formed only inside: a border pixel's window start may lie before the input */
                    const int8_t *xa = xb + ((oy * p->sh - p->pt) * IW + ox * p->sw - p->pl) * IC;
                    if (nb == 4 && ox + 1 < ox_hi) {
                        uint32_t acc[8] = {base[0], base[1], base[2], base[3], base[0], base[1], base[2], base[3]};
                        if (dot42)
                            dot42(xa, xa + p->sw * IC, wb, acc);
                        else if (dot42rl)
                            dot42rl(xa, xa + p->sw * IC, wb, g.xrow, acc);
                        else
                            dot_4x2(&g, xa, xa + p->sw * IC, wb, K, acc);
                        for (int32_t j = 0; j < 4; j++) {
                            ya[j] = STORE8(&rq[j], acc[j]);
                            ya[OC + j] = STORE8(&rq[j], acc[4 + j]);
                        }
                        ox += 2;
                    } else if (nb == 4) {
                        uint32_t acc[4] = {base[0], base[1], base[2], base[3]};
                        dot_4x1(&g, xa, wb, K, acc);
                        for (int32_t j = 0; j < 4; j++)
                            ya[j] = STORE8(&rq[j], acc[j]);
                        ox++;
                    } else {
                        ya[0] = STORE8(&rq[0], dot_1x1(&g, xa, wb, base[0]));
                        ox++;
                    }
                }
            }
            oc0 += nb;
        }
    }
}

/* DEPTHWISE_CONV_2D, channel multiplier M = OC / IC of 1 or a multiple of
 * 4: output channel c reads input channel c / M, the filter [1, KH, KW, OC]
 * holds tap t of channel c at t * OC + c, so 4 adjacent output channels are
 * 4 contiguous filter bytes and read 4 contiguous input bytes (M = 1) or
 * one (M a multiple of 4: one load for 4 MACs). Blocks of 4 channels x 2
 * interior pixels per tap; border pixels take the taps inside the input
 * with (x + off) w, 4 channels at once. */
/* the filters this fast path takes have at most DW_MAX_TAPS taps (the
 * offset table, 512 bytes, lives on the stack; micro_speech's 10 x 8 filter
 * is 80); larger ones take the reference loop */
#define DW_MAX_TAPS 128
typedef struct dw_geo {
    int32_t kh, kw, xrow, xcol, c, off;
    int32_t toff[DW_MAX_TAPS]; /* tap ky * KW + kx: ky * xrow + kx * xcol */
} dw_geo;

/* interior taps of 4 channels x 2 pixels (xa, xb) into acc[0..3], acc[4..7];
 * input channel offsets 0, X1, X2, X3 (M = 1: 1, 2, 3; M = 4k: 0, 0, 0).
 * One loop over the taps with their input offsets from a table (g->toff):
 * with the ky / kx loop nest GCC spilled accumulators on rv32. */
#define DW_TAPS_FN(NAME, X1, X2, X3)                                                                               \
    TFLK_NOINLINE static void NAME(const dw_geo *g, const int8_t *xa, const int8_t *xb, const int8_t *wt,          \
                                   uint32_t acc[8])                                                                \
    {                                                                                                              \
        uint32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], b0 = acc[4], b1 = acc[5], b2 = acc[6],        \
                 b3 = acc[7];                                                                                      \
        const int32_t C = g->c;                                                                                    \
        for (const int32_t *t = g->toff, *te = g->toff + g->kh * g->kw; t != te; t++, wt += C) {                   \
            const int8_t *pa = xa + *t, *pb = xb + *t;                                                             \
            const int32_t u0 = wt[0], u1 = wt[1], u2 = wt[2], u3 = wt[3];                                          \
            MAC1(a0, pa[0], u0);                                                                                   \
            MAC1(a1, pa[X1], u1);                                                                                  \
            MAC1(a2, pa[X2], u2);                                                                                  \
            MAC1(a3, pa[X3], u3);                                                                                  \
            MAC1(b0, pb[0], u0);                                                                                   \
            MAC1(b1, pb[X1], u1);                                                                                  \
            MAC1(b2, pb[X2], u2);                                                                                  \
            MAC1(b3, pb[X3], u3);                                                                                  \
        }                                                                                                          \
        acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3, acc[4] = b0, acc[5] = b1, acc[6] = b2, acc[7] = b3;    \
    }
DW_TAPS_FN(dw_taps_m1, 1, 2, 3)
DW_TAPS_FN(dw_taps_m4, 0, 0, 0)
#undef DW_TAPS_FN

/* the taps of a border pixel that lie inside, nky x nkx from xr (input)
 * and wr (filter), 4 channels, (x + off) w */
#define DW_BORDER_FN(NAME, X1, X2, X3)                                                                             \
    TFLK_NOINLINE static void NAME(const dw_geo *g, const int8_t *xr, const int8_t *wr, int32_t nky, int32_t nkx,  \
                                   uint32_t acc[4])                                                                \
    {                                                                                                              \
        uint32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];                                               \
        const int32_t off = g->off;                                                                                \
        for (int32_t ky = 0; ky < nky; ky++, xr += g->xrow, wr += g->kw * g->c) {                                  \
            const int8_t *xp = xr, *wt = wr;                                                                       \
            for (int32_t kx = 0; kx < nkx; kx++, xp += g->xcol, wt += g->c) {                                      \
                MAC1(a0, xp[0] + off, wt[0]);                                                                      \
                MAC1(a1, xp[X1] + off, wt[1]);                                                                     \
                MAC1(a2, xp[X2] + off, wt[2]);                                                                     \
                MAC1(a3, xp[X3] + off, wt[3]);                                                                     \
            }                                                                                                      \
        }                                                                                                          \
        acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;                                                        \
    }
DW_BORDER_FN(dw_border_m1, 1, 2, 3)
DW_BORDER_FN(dw_border_m4, 0, 0, 0)
#undef DW_BORDER_FN

static void dw_s8(const tflk_conv *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y)
{
    const int32_t IH = p->ih, IW = p->iw, IC = p->ic, C = p->oc, OH = p->oh, OW = p->ow, KH = p->kh, KW = p->kw;
    const int32_t M = C / IC, xpix = p->sw * IC;
    dw_geo g = {KH, KW, p->dh * IW * IC, p->dw * IC, C, p->in_off, {0}};
    for (int32_t ky = 0; ky < KH; ky++)
        for (int32_t kx = 0; kx < KW; kx++)
            g.toff[ky * KW + kx] = ky * g.xrow + kx * g.xcol;
    void (*const taps)(const dw_geo *, const int8_t *, const int8_t *, const int8_t *, uint32_t *) =
        M == 1 ? dw_taps_m1 : dw_taps_m4;
    void (*const border)(const dw_geo *, const int8_t *, const int8_t *, int32_t, int32_t, uint32_t *) =
        M == 1 ? dw_border_m1 : dw_border_m4;
    const int32_t zp = p->out_zp, lo = p->lo, hi = p->hi;
    int32_t oy_lo, oy_hi, ox_lo, ox_hi;
    interior_range(IH, OH, KH, p->sh, p->dh, p->pt, &oy_lo, &oy_hi);
    interior_range(IW, OW, KW, p->sw, p->dw, p->pl, &ox_lo, &ox_hi);
    for (int32_t bn = 0; bn < p->n; bn++) {
        const int8_t *xb = x + bn * IH * IW * IC;
        int8_t *yb = y + bn * OH * OW * C;
        for (int32_t c0 = 0; c0 < C;) {
            const int32_t nb = C - c0 >= 4 ? 4 : 1, ci0 = c0 / M;
            uint32_t base[4], bias0[4];
            tflk_rq rq[4];
            for (int32_t j = 0; j < nb; j++) {
                uint32_t s = 0;
                for (int32_t t = 0; t < KH * KW; t++)
                    s += (uint32_t)(int32_t)w[t * C + c0 + j];
                base[j] = folded_base(p, bias, c0 + j, s);
                bias0[j] = bias ? (uint32_t)bias[c0 + j] : 0u;
                rq_of(p, c0 + j, &rq[j]);
            }
            for (int32_t oy = 0; oy < OH; oy++) {
                const int32_t row_in = oy >= oy_lo && oy < oy_hi;
                int8_t *yr = yb + oy * OW * C + c0;
                for (int32_t ox = 0; ox < OW;) {
                    int8_t *ya = yr + ox * C;
                    const int32_t inside = row_in && ox >= ox_lo && ox < ox_hi;
                    if (nb == 1) { /* M = 1: the channels past the last multiple of 4 */
                        uint32_t a;
                        if (!inside) {
                            a = conv_border_acc(p, xb, w, bias, oy, ox, c0);
                        } else {
                            a = base[0];
                            const int8_t *xa = xb + ((oy * p->sh - p->pt) * IW + ox * p->sw - p->pl) * IC + ci0;
                            const int8_t *wt = w + c0;
                            for (int32_t ky = 0; ky < KH; ky++, xa += g.xrow) {
                                const int8_t *pa = xa;
                                for (int32_t kx = 0; kx < KW; kx++, pa += g.xcol, wt += C)
                                    MAC1(a, pa[0], wt[0]);
                            }
                        }
                        ya[0] = STORE8(&rq[0], a);
                        ox++;
                        continue;
                    }
                    uint32_t acc[8];
                    int32_t npx = 1;
                    if (!inside) {
                        const int32_t iy0 = oy * p->sh - p->pt, ix0 = ox * p->sw - p->pl;
                        int32_t ky0, ky1, kx0, kx1;
                        clip_taps(iy0, IH, KH, p->dh, &ky0, &ky1);
                        clip_taps(ix0, IW, KW, p->dw, &kx0, &kx1);
                        for (int32_t j = 0; j < 4; j++)
                            acc[j] = bias0[j];
                        if (ky0 < ky1 && kx0 < kx1) /* pointers formed only at a tap inside */
                            border(&g, xb + ((iy0 + ky0 * p->dh) * IW + ix0 + kx0 * p->dw) * IC + ci0,
                                   w + (ky0 * KW + kx0) * C + c0, ky1 - ky0, kx1 - kx0, acc);
                    } else {
                        npx = ox + 1 < ox_hi ? 2 : 1;
                        for (int32_t j = 0; j < 4; j++)
                            acc[j] = acc[4 + j] = base[j];
                        const int8_t *xa = xb + ((oy * p->sh - p->pt) * IW + ox * p->sw - p->pl) * IC + ci0;
                        /* a lone last pixel reads its own taps twice rather than a second loop */
                        taps(&g, xa, npx == 2 ? xa + xpix : xa, w + c0, acc);
                    }
                    for (int32_t k = 0; k < npx; k++)
                        for (int32_t j = 0; j < 4; j++)
                            ya[k * C + j] = STORE8(&rq[j], acc[4 * k + j]);
                    ox += npx;
                }
            }
            c0 += nb;
        }
    }
}

/* ---- DEPTHWISE_CONV_2D 3x3, dilation 1 (any channel multiplier) ------------
 * One channel at a time: its 9 weights stay in registers and the window
 * slides along the longer output axis (rows, or columns when the image is
 * taller than wide, as KWS's 25 x 5), so stride 1 loads 3 new activations
 * per output and stride 2 loads 6, against 9 MACs. The accumulators of a
 * few lines go to a buffer and are requantized in a second loop with the
 * channel's constants in registers (9 weights, 9 activations and 9
 * requantization constants in one loop would not fit rv32's registers).
 * Exact, with the offset folded (base = bias + off * sum w over the taps
 * of lines inside the input): a line of the window outside the input takes
 * weight 0, and a position outside along the slide (at most one at each
 * end) takes the activation -off (the input's zero point), whose (x + off)
 * w is 0 like the reference's skipped tap. */
#define DW3_CHUNK 64

typedef struct dw3_geo {
    int32_t step;      /* bytes between positions along the slide */
    int32_t n;         /* outputs per line */
    int32_t pl, rpad;  /* a pad position before the first output's window, after the last's (0 or 1) */
    int32_t pad;       /* the activation at a pad position (the input's zero point) */
    int32_t off;       /* the input offset (-pad) */
    int32_t lstep;     /* bytes between input lines */
    int32_t ls, lp;    /* the stride and leading padding across lines */
    int32_t llen;      /* input lines */
} dw3_geo;

/* k[l * 3 + t]: the weight of window line l, tap t along the slide. Each
 * position's 3 activations are loaded once and multiplied by the 3 weight
 * columns: with column t of the window it completes (t = 2) or continues
 * (t = 0, 1) one output, so only the partial sums of the next outputs
 * carry over (2 registers, not 6 activations). A pad position adds pad *
 * (the column's weights). Output lines l0 .. l0 + nl - 1 of channel xc
 * (the input at that channel); a window line outside the input reads line
 * 0 or the last with weight 0, and the line's base (bias + off * sum w) is
 * that of the weights it keeps. */
#define DW3_LD(V)                                                                                                  \
    do {                                                                                                           \
        V##0 = *r0, V##1 = *r1, V##2 = *r2;                                                                        \
        r0 += C, r1 += C, r2 += C;                                                                                 \
    } while (0)
#define DW3_COL(V, T) ((uint32_t)(V##0 * k0##T + V##1 * k1##T + V##2 * k2##T))
#define DW3_LINE                                                                                                   \
    const int32_t il = l * g->ls - g->lp, in0 = il >= 0 && il < g->llen, in1 = il + 1 >= 0 && il + 1 < g->llen,    \
                  in2 = il + 2 >= 0 && il + 2 < g->llen;                                                           \
    const int32_t m0 = -in0, m1 = -in1, m2 = -in2, last = g->llen - 1;                                             \
    const int8_t *r0 = xc + (in0 ? il : il < 0 ? 0 : last) * g->lstep;                                             \
    const int8_t *r1 = xc + (in1 ? il + 1 : il + 1 < 0 ? 0 : last) * g->lstep;                                     \
    const int8_t *r2 = xc + (in2 ? il + 2 : il + 2 < 0 ? 0 : last) * g->lstep;                                     \
    const int32_t k00 = k[0] & m0, k01 = k[1] & m0, k02 = k[2] & m0, k10 = k[3] & m1, k11 = k[4] & m1,             \
                  k12 = k[5] & m1, k20 = k[6] & m2, k21 = k[7] & m2, k22 = k[8] & m2;                              \
    const uint32_t base = b0 + (uint32_t)g->off * (uint32_t)(k00 + k01 + k02 + k10 + k11 + k12 + k20 + k21 + k22); \
    const uint32_t pad0 = (uint32_t)(g->pad * (k00 + k10 + k20)), pad2 = (uint32_t)(g->pad * (k02 + k12 + k22))

TFLK_NOINLINE static void dw3_s1(const dw3_geo *g, const int8_t *xc, const int32_t *k, uint32_t b0, int32_t l0,
                                 int32_t nl, uint32_t *acc)
{
    const int32_t C = g->step, nm = g->n - g->rpad;
    for (int32_t l = l0; l < l0 + nl; l++) {
        DW3_LINE;
        int32_t v0, v1, v2;
        uint32_t pa, pb; /* the next output's sum over its first 2 columns, the one after's over its first */
        if (g->pl) {
            pa = base + pad0;
        } else {
            DW3_LD(v);
            pa = base + DW3_COL(v, 0);
        }
        DW3_LD(v);
        pb = pa + DW3_COL(v, 1);
        pa = base + DW3_COL(v, 0);
        for (uint32_t *const e = acc + nm; acc != e; acc++) {
            DW3_LD(v);
            *acc = pb + DW3_COL(v, 2);
            pb = pa + DW3_COL(v, 1);
            pa = base + DW3_COL(v, 0);
        }
        if (g->rpad)
            *acc++ = pb + pad2;
    }
}

TFLK_NOINLINE static void dw3_s2(const dw3_geo *g, const int8_t *xc, const int32_t *k, uint32_t b0, int32_t l0,
                                 int32_t nl, uint32_t *acc)
{
    const int32_t C = g->step, nm = g->n - g->rpad;
    for (int32_t l = l0; l < l0 + nl; l++) {
        DW3_LINE;
        int32_t v0, v1, v2, u0, u1, u2;
        uint32_t pa; /* the next output's first column */
        if (g->pl) {
            pa = base + pad0;
        } else {
            DW3_LD(v);
            pa = base + DW3_COL(v, 0);
        }
        for (uint32_t *const e = acc + nm; acc != e; acc++) {
            DW3_LD(v);
            DW3_LD(u);
            *acc = pa + DW3_COL(v, 1) + DW3_COL(u, 2);
            pa = base + DW3_COL(u, 0);
        }
        if (g->rpad) {
            v0 = *r0, v1 = *r1, v2 = *r2;
            *acc++ = pa + DW3_COL(v, 1) + pad2;
        }
    }
}
#undef DW3_COL
#undef DW3_LD
#undef DW3_LINE

/* 1 when dw3_s8 takes p: the slide axis (the longer output axis whose
 * stride is 1 or 2) has at most one pad position at each end and at most
 * DW3_CHUNK outputs */
static int32_t dw3_axes(const tflk_conv *p, int32_t *horizontal, int32_t *rpad)
{
    if (!(p->depthwise && p->ic > 0 && p->oc % p->ic == 0 && p->kh == 3 && p->kw == 3 && p->dh == 1 && p->dw == 1))
        return 0;
    const int32_t h = (p->ow >= p->oh && p->sw <= 2) || p->sh > 2;
    const int32_t len = h ? p->iw : p->ih, n = h ? p->ow : p->oh, s = h ? p->sw : p->sh, pl = h ? p->pl : p->pt;
    const int32_t rp = (n - 1) * s + 3 - pl - len;
    *horizontal = h;
    *rpad = rp > 0 ? rp : 0;
    return s <= 2 && pl >= 0 && pl <= 1 && rp <= 1 && n <= DW3_CHUNK && len > 0;
}

static void dw3_s8(const tflk_conv *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y, int32_t hz,
                   int32_t rpad)
{
    const int32_t IH = p->ih, IW = p->iw, IC = p->ic, C = p->oc, OH = p->oh, OW = p->ow, M = C / IC;
    const int32_t zp = p->out_zp, lo = p->lo, hi = p->hi;
    /* the slide axis and the line axis (the other one) */
    const int32_t n = hz ? OW : OH, nlines = hz ? OH : OW;
    const int32_t yl = hz ? OW * C : C, ys = hz ? C : OW * C; /* output steps per line, per position */
    const dw3_geo g = {hz ? IC : IW * IC, n, hz ? p->pl : p->pt, rpad, -p->in_off, p->in_off,
                       hz ? IW * IC : IC, hz ? p->sh : p->sw, hz ? p->pt : p->pl, hz ? IH : IW};
    void (*const kern)(const dw3_geo *, const int8_t *, const int32_t *, uint32_t, int32_t, int32_t, uint32_t *) =
        (hz ? p->sw : p->sh) == 1 ? dw3_s1 : dw3_s2;
    const int32_t lpc = DW3_CHUNK / n; /* lines per buffer */
    uint32_t acc[DW3_CHUNK];
    for (int32_t bn = 0; bn < p->n; bn++)
        for (int32_t c = 0; c < C; c++) {
            const int8_t *xc = x + bn * IH * IW * IC + c / M; /* output channel c reads input channel c / M */
            int8_t *yc = y + bn * OH * OW * C + c;
            tflk_rq rq;
            rq_of(p, c, &rq);
            int32_t k[9];
            for (int32_t ky = 0; ky < 3; ky++)
                for (int32_t kx = 0; kx < 3; kx++)
                    k[hz ? ky * 3 + kx : kx * 3 + ky] = w[(ky * 3 + kx) * C + c];
            const uint32_t b0 = bias ? (uint32_t)bias[c] : 0u;
            for (int32_t l = 0; l < nlines; l += lpc) {
                const int32_t nl = nlines - l < lpc ? nlines - l : lpc;
                kern(&g, xc, k, b0, l, nl, acc);
                rq_lines(&rq, acc, nl, n, yc + l * yl, yl, ys, 0, zp, lo, hi);
            }
        }
}

void tflk_conv_s8(const tflk_conv *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y)
{
    int32_t hz = 0, rpad = 0;
    if (dw3_axes(p, &hz, &rpad)) {
        dw3_s8(p, x, w, bias, y, hz, rpad);
        return;
    }
    if (p->ic > 0 && (p->depthwise ? (p->oc == p->ic || (p->oc % p->ic == 0 && (p->oc / p->ic) % 4 == 0)) &&
                                         p->kh * p->kw <= DW_MAX_TAPS
                                   : p->fic == p->ic)) {
        if (p->depthwise)
            dw_s8(p, x, w, bias, y);
        else
            conv_s8_dense(p, x, w, bias, y);
        return;
    }
    /* grouped convolution, depthwise with a channel multiplier of 2, 3, 5, ... */
    TFLK_CONV_LOOP(int8_t, int8_t, uint32_t, MAC_S8, STORE_S8);
}

void tflk_conv_f32(const tflk_conv *p, const float *x, const float *w, const float *bias, float *y)
{
    TFLK_CONV_LOOP(float, float, float, MAC_F32, STORE_F32);
}
