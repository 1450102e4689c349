/*
 * kernels.conv_fc_exact: tflk_conv_s8 and tflk_fc_s8 (whose fast paths fold
 * the input offset, block channels and pixels and split interior from
 * border pixels) give the int8 output of the textbook definition, code for
 * code. The reference below is written from TFLite's reference kernels
 * (conv.h, depthwise_conv.h, fully_connected.h): for every output, an int64
 * sum over the taps inside the input of (x - in_zp) * w, plus the bias,
 * truncated to int32 as the reference's int32 accumulator, then
 * MultiplyByQuantizedMultiplier (gemmlowp double rounding, or the single
 * rounding form) written out here from its definition, the output zero
 * point and the clamp. Shapes are drawn from a fixed-seed generator so a
 * failure repeats; each case prints its shape when it fails.
 */
#include "tflk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng = 12345u;
static uint32_t next(void)
{
    rng = rng * 1664525u + 1013904223u;
    return rng >> 8;
}
static int32_t rnd(int32_t lo, int32_t hi) { return lo + (int32_t)(next() % (uint32_t)(hi - lo + 1)); }

/* gemmlowp's SaturatingRoundingDoublingHighMul and RoundingDivideByPOT, from their definitions */
static int32_t ref_rescale(int single, int32_t x, int32_t mult, int32_t shift)
{
    if (single) {
        int32_t t = 31 - shift;
        int64_t r = ((int64_t)x * mult + ((int64_t)1 << (t - 1))) >> t;
        return r > INT32_MAX ? INT32_MAX : r < INT32_MIN ? INT32_MIN : (int32_t)r;
    }
    int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    int64_t a = (int64_t)(int32_t)((uint32_t)x << left);
    int64_t ab = a * mult;
    int64_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
    /* the one product that does not fit: (-1) x (-1) in Q0.31 saturates */
    int32_t h = a == INT32_MIN && mult == INT32_MIN ? INT32_MAX : (int32_t)((ab + nudge) / ((int64_t)1 << 31));
    if (right == 0)
        return h;
    /* round half away from zero of h / 2^right */
    int64_t d = (int64_t)1 << right;
    int64_t q = h >= 0 ? ((int64_t)h + d / 2) / d : -((-(int64_t)h + d / 2) / d);
    return (int32_t)q;
}

static int failures;

static void ref_conv(const tflk_conv *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y)
{
    const int32_t groups = p->depthwise ? p->ic : p->ic / p->fic, opg = p->oc / groups;
    for (int32_t b = 0; b < p->n; b++)
        for (int32_t oy = 0; oy < p->oh; oy++)
            for (int32_t ox = 0; ox < p->ow; ox++)
                for (int32_t oc = 0; oc < p->oc; oc++) {
                    int64_t acc = bias ? bias[oc] : 0;
                    const int32_t g = oc / opg;
                    for (int32_t ky = 0; ky < p->kh; ky++)
                        for (int32_t kx = 0; kx < p->kw; kx++) {
                            int32_t iy = oy * p->sh - p->pt + ky * p->dh, ix = ox * p->sw - p->pl + kx * p->dw;
                            if (iy < 0 || iy >= p->ih || ix < 0 || ix >= p->iw)
                                continue;
                            const int8_t *xp = x + ((b * p->ih + iy) * p->iw + ix) * p->ic;
                            if (p->depthwise)
                                acc += (int64_t)(xp[g] + p->in_off) * w[(ky * p->kw + kx) * p->oc + oc];
                            else
                                for (int32_t c = 0; c < p->fic; c++)
                                    acc += (int64_t)(xp[g * p->fic + c] + p->in_off) *
                                           w[((oc * p->kh + ky) * p->kw + kx) * p->fic + c];
                        }
                    int32_t c = p->per_channel ? oc : 0;
                    int32_t r = ref_rescale(p->rq_single, (int32_t)acc, p->mult[c], p->shift[c]) + p->out_zp;
                    y[((b * p->oh + oy) * p->ow + ox) * p->oc + oc] = (int8_t)(r < p->lo ? p->lo : r > p->hi ? p->hi : r);
                }
}

static void fill(int8_t *v, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        v[i] = (int8_t)rnd(-128, 127);
}

/* multipliers as QuantizeMultiplier gives them: [2^30, 2^31), shifts that
 * keep the accumulators' range within the int8 outputs mostly, some left */
static void quant(int32_t *mult, int32_t *shift, int32_t n, int32_t lshift)
{
    for (int32_t i = 0; i < n; i++) {
        mult[i] = (int32_t)((1u << 30) + (next() % (1u << 30)));
        shift[i] = lshift ? rnd(0, 2) : rnd(-14, -6);
    }
}

static int32_t out_size(int32_t in, int32_t k, int32_t s, int32_t d, int same, int32_t *pad)
{
    int32_t ek = (k - 1) * d + 1;
    int32_t o = same ? (in + s - 1) / s : (in - ek) / s + 1;
    int32_t need = (o - 1) * s + ek - in;
    *pad = same && need > 0 ? need / 2 : 0;
    return o;
}

static void conv_case(int kind, int32_t it)
{
    /* kind 0 dense, 1 depthwise multiplier 1, 2 depthwise multiplier 2, 3 grouped, 4 and 5 depthwise
     * multiplier 4 and 8, 6 dense 1x1 with 8, 16, ... 256 input channels, 7 depthwise 3x3, 8 dense 1x1
     * over more pixels, 9 dense 3x3 over 3, 16, 32 or 64 channels */
    tflk_conv p;
    memset(&p, 0, sizeof p);
    p.n = rnd(1, 2);
    p.ih = rnd(1, 9);
    p.iw = rnd(1, 11);
    p.kh = rnd(1, 3);
    p.kw = rnd(1, 3);
    if (it % 4 == 0 || kind == 6 || kind == 8)
        p.kh = p.kw = 1;
    p.sh = rnd(1, 2);
    p.sw = rnd(1, 2);
    p.dh = it % 5 == 1 ? 2 : 1;
    p.dw = it % 7 == 2 ? 2 : 1;
    if ((kind == 1 || kind == 4 || kind == 5) && it % 13 == 0) { /* up to 144 taps: past the fast path's 128-entry table too */
        p.kh = rnd(6, 12);
        p.kw = rnd(6, 12);
        p.ih = rnd(p.kh, p.kh + 4);
        p.iw = rnd(p.kw, p.kw + 4);
    }
    if (kind == 7) { /* depthwise 3x3 (the row kernels), rows past their 64-pixel chunk */
        p.kh = p.kw = 3;
        if (it % 5 == 0)
            p.iw = rnd(60, 140);
    }
    if (kind == 9) { /* dense 3x3 over 3, 16, 32, 64 channels, 10x4 over 1 (the constant-run kernels) */
        p.kh = p.kw = 3;
        if (it % 5 == 4) {
            p.kh = 10;
            p.kw = 4;
            p.ih = rnd(8, 24);
            p.iw = rnd(3, 12);
        }
    }
    if (kind == 8) { /* dense 1x1 over many pixels (the 4 x 4 blocks and their tails) */
        p.ih = rnd(1, 6);
        p.iw = rnd(1, 13);
    }
    int same = (int)(next() & 1);
    p.oh = out_size(p.ih, p.kh, p.sh, p.dh, same, &p.pt);
    p.ow = out_size(p.iw, p.kw, p.sw, p.dw, same, &p.pl);
    if (p.oh < 1 || p.ow < 1)
        return;
    int32_t groups = 1;
    if (kind == 0 || kind == 6 || kind == 8 || kind == 9) {
        static const int32_t common[] = {8, 16, 32, 64, 128, 256}; /* the constant-count 1x1 kernels */
        static const int32_t common3[] = {3, 16, 32, 64};
        p.ic = kind == 9 ? (p.kh == 10 ? 1 : common3[it % 4]) : kind >= 6 ? common[it % 6] : rnd(1, 13);
        p.oc = rnd(1, 11);
        p.fic = p.ic;
    } else if (kind == 3) {
        groups = rnd(2, 3);
        p.fic = rnd(1, 4);
        p.ic = p.fic * groups;
        p.oc = groups * rnd(1, 3);
    } else {
        p.depthwise = 1;
        p.ic = kind == 4 || kind == 5 ? rnd(1, 3) : rnd(1, 11);
        p.oc = p.ic * (kind == 4 ? 4 : kind == 5 ? 8 : kind == 7 ? 1 : kind);
        p.fic = 1;
    }
    int32_t nw = p.depthwise ? p.kh * p.kw * p.oc : p.oc * p.kh * p.kw * p.fic;
    int32_t nx = p.n * p.ih * p.iw * p.ic, ny = p.n * p.oh * p.ow * p.oc;
    int8_t *x = malloc((size_t)nx), *w = malloc((size_t)nw), *y = malloc((size_t)ny), *r = malloc((size_t)ny);
    int32_t *bias = malloc((size_t)p.oc * 4), *mult = malloc((size_t)p.oc * 4), *shift = malloc((size_t)p.oc * 4);
    fill(x, nx);
    fill(w, nw);
    for (int32_t i = 0; i < p.oc; i++)
        bias[i] = rnd(-40000, 40000);
    p.in_off = rnd(-127, 128);
    p.out_zp = rnd(-20, 20);
    p.lo = it % 3 ? -128 : p.out_zp;
    p.hi = it % 6 == 5 ? 100 : 127;
    p.per_channel = (int32_t)(next() & 1);
    p.rq_single = it % 4 == 3;
    quant(mult, shift, p.oc, it % 11 == 4);
    p.mult = mult;
    p.shift = shift;
    const int32_t *b = it % 9 == 8 ? NULL : bias;
    memset(y, 0x55, (size_t)ny);
    tflk_conv_s8(&p, x, w, b, y);
    ref_conv(&p, x, w, b, r);
    for (int32_t i = 0; i < ny; i++)
        if (y[i] != r[i]) {
            fprintf(stderr,
                    "FAIL conv kind %d case %d: n%d %dx%dx%d -> %dx%dx%d k%dx%d s%d,%d d%d,%d pad %d,%d fic %d "
                    "single %d: output %d is %d, the reference %d\n",
                    kind, it, p.n, p.ih, p.iw, p.ic, p.oh, p.ow, p.oc, p.kh, p.kw, p.sh, p.sw, p.dh, p.dw, p.pt, p.pl,
                    p.fic, p.rq_single, i, y[i], r[i]);
            failures++;
            break;
        }
    free(x), free(w), free(y), free(r), free(bias), free(mult), free(shift);
}

static void fc_case(int32_t it)
{
    tflk_fc p;
    memset(&p, 0, sizeof p);
    p.batches = rnd(1, 3);
    p.units = rnd(1, 13);
    static const int32_t common[] = {64, 128, 256, 640}; /* the constant-depth FC kernels */
    p.depth = it % 3 == 2 ? common[(it / 3) % 4] : rnd(1, 70);
    p.in_off = rnd(-127, 128);
    p.w_off = it % 5 == 4 ? rnd(-10, 10) : 0;
    p.out_zp = rnd(-20, 20);
    p.lo = -128;
    p.hi = 127;
    p.per_channel = (int32_t)(next() & 1);
    p.rq_single = it % 4 == 3;
    int32_t nx = p.batches * p.depth, nw = p.units * p.depth, ny = p.batches * p.units;
    int8_t *x = malloc((size_t)nx), *w = malloc((size_t)nw), *y = malloc((size_t)ny), *r = malloc((size_t)ny);
    int32_t *bias = malloc((size_t)p.units * 4), *mult = malloc((size_t)p.units * 4), *shift = malloc((size_t)p.units * 4);
    fill(x, nx);
    fill(w, nw);
    for (int32_t i = 0; i < p.units; i++)
        bias[i] = rnd(-40000, 40000);
    quant(mult, shift, p.units, it % 11 == 4);
    p.mult = mult;
    p.shift = shift;
    const int32_t *b = it % 9 == 8 ? NULL : bias;
    tflk_fc_s8(&p, x, w, b, y);
    for (int32_t i = 0; i < p.batches; i++)
        for (int32_t u = 0; u < p.units; u++) {
            int64_t acc = b ? b[u] : 0;
            for (int32_t k = 0; k < p.depth; k++)
                acc += (int64_t)(x[i * p.depth + k] + p.in_off) * (w[u * p.depth + k] + p.w_off);
            int32_t c = p.per_channel ? u : 0;
            int32_t v = ref_rescale(p.rq_single, (int32_t)acc, mult[c], shift[c]) + p.out_zp;
            r[i * p.units + u] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
        }
    for (int32_t i = 0; i < ny; i++)
        if (y[i] != r[i]) {
            fprintf(stderr, "FAIL fc case %d: batches %d units %d depth %d w_off %d single %d: output %d is %d, the "
                            "reference %d\n",
                    it, p.batches, p.units, p.depth, p.w_off, p.rq_single, i, y[i], r[i]);
            failures++;
            break;
        }
    free(x), free(w), free(y), free(r), free(bias), free(mult), free(shift);
}

/* tflk_rq_apply against the definition over the edges: the saturating
 * INT32_MIN x INT32_MIN, shifts past 31 either way, both forms */
static void rq_cases(void)
{
    const int32_t accs[] = {INT32_MIN, INT32_MIN + 1, -65536, -3, -1, 0, 1, 2, 3, 1 << 30, INT32_MAX - 1, INT32_MAX};
    const int32_t mults[] = {INT32_MIN, -(1 << 30) - 777, -1, 0, 1, 1 << 30, (1 << 30) + 12345, INT32_MAX};
    for (int single = 0; single < 2; single++)
        for (int32_t shift = -40; shift <= 31; shift++)
            for (size_t m = 0; m < sizeof mults / sizeof *mults; m++) {
                if (single && (mults[m] < 0 || shift < -31 || shift > 30))
                    continue; /* QuantizeMultiplier's range; tflk_rescale clamps the rest its own way */
                tflk_rq r;
                tflk_rq_init(&r, single, mults[m], shift);
                for (int32_t k = 0; k < 4096; k++) {
                    int32_t acc = k < 12 ? accs[k] : k < 1024 ? (int32_t)((uint32_t)(k - 512) << (k % 24)) : (int32_t)(next() * 2654435761u);
                    int32_t got = tflk_rq_apply(&r, acc), want = ref_rescale(single, acc, mults[m], shift);
                    if (!single && shift < -31) /* RoundingDivideByPOT's exponent saturates at 31 */
                        want = ref_rescale(0, acc, mults[m], -31);
                    if (got != want) {
                        fprintf(stderr, "FAIL requant single %d acc %d mult %d shift %d: %d, the definition %d\n", single,
                                acc, mults[m], shift, got, want);
                        failures++;
                        return;
                    }
                }
            }
}

int main(void)
{
    int32_t n = 0;
    rq_cases();
    for (int kind = 0; kind < 10; kind++)
        for (int32_t it = 0; it < 600; it++, n++)
            conv_case(kind, it);
    for (int32_t it = 0; it < 600; it++, n++)
        fc_case(it);
    /* hand-worked: a 1x1 conv, one channel, x = 3 (zero point -2, so x + off = 5), w = 7, bias 10:
     * acc 45; multiplier 2^30 (0.5) shift -1. gemmlowp rounds twice: 45 * 0.5 = 22.5 -> 23, / 2 =
     * 11.5 -> 12 (half away from zero), + out_zp 1 = 13; single rounding: 45 * 0.25 = 11.25 -> 11,
     * + 1 = 12 */
    {
        int8_t x = 3, w = 7, y = 0;
        int32_t bias = 10, mult = 1 << 30, shift = -1;
        tflk_conv p;
        memset(&p, 0, sizeof p);
        p.n = p.ih = p.iw = p.ic = p.oh = p.ow = p.oc = p.kh = p.kw = p.fic = p.sh = p.sw = p.dh = p.dw = 1;
        p.in_off = 2;
        p.out_zp = 1;
        p.lo = -128;
        p.hi = 127;
        p.mult = &mult;
        p.shift = &shift;
        tflk_conv_s8(&p, &x, &w, &bias, &y);
        if (y != 13) {
            fprintf(stderr, "FAIL hand-worked 1x1 conv (gemmlowp): %d, expected 13\n", y);
            failures++;
        }
        p.rq_single = 1;
        tflk_conv_s8(&p, &x, &w, &bias, &y);
        if (y != 12) {
            fprintf(stderr, "FAIL hand-worked 1x1 conv (single rounding): %d, expected 12\n", y);
            failures++;
        }
    }
    printf("%d cases, %d failures\n", n, failures);
    return failures ? 1 : 0;
}
