/*
 * The provider's integer convolution kernel (cpu_q8conv*.c) called directly,
 * not through a session, so the test sees which path a layer took: on
 * CPU_ISA_AVX512 the stride-1 layers whose w - w_zp fit int8 must take the
 * VNNI kernel (cpu_q8conv_vnni.c; any stride; one input channel at stride
 * 1: quads of taps), the others the int16 one. Every path's bytes are compared with the formula
 * written out here, not with another kernel:
 *   acc  = sum over valid taps (x - x_zp) * (w - w_zp)            (exact)
 *   a    = acc + bias[m], wrapped to int32
 *   code = clamp(round_half_even((float)a * mult[m]), lo - y_zp, hi - y_zp) + y_zp
 * (the product in single precision). Cases: int8 and uint8, per-tensor and
 * per-channel multipliers, a weight zero point that fits int8 and one that
 * does not, padding, dilation, stride 2, groups, one input channel, odd
 * channel counts, rows with partial tiles, two images, a fused activation
 * range; each with no pool and with pools of 2 and 3 threads (the bytes
 * must not depend on the count). The portable and AVX2 paths run first;
 * without AVX-512 VNNI the VNNI part is skipped and the test says so (and
 * reports SKIP to ctest).
 */
#include "cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const sy_host_api *cpu_host; /* the kernels only use it on running out of memory */

static int failures, checks;
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        checks++;                                                                                                      \
        if (!(cond)) {                                                                                                 \
            failures++;                                                                                                \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                                \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
        }                                                                                                              \
    } while (0)

typedef struct vcase {
    const char *name;
    bool u8, per_channel;
    int64_t n, c, h, w, m, group, k, stride, pad, dil;
    int32_t wz;        /* weight zero point */
    bool relu;         /* a fused activation: codes from y_zp up */
    bool vnni, xquad;  /* the path expected on CPU_ISA_AVX512 */
} vcase;

static const vcase cases[] = {
    {"int8 per tensor c16 m24 3x3 pad 1", false, false, 1, 16, 9, 11, 24, 1, 3, 1, 1, 1, 0, false, true, false},
    {"int8 per channel c64 m64 3x3 (sr-10 body)", false, true, 1, 64, 10, 40, 64, 1, 3, 1, 1, 1, 0, true, true, false},
    {"int8 per channel c7 m9 odd, w 5", false, true, 2, 7, 6, 5, 9, 1, 3, 1, 1, 1, 0, false, true, false},
    {"int8 c1 m64 5x5 pad 2 (sr-10 first)", false, false, 1, 1, 14, 40, 64, 1, 5, 1, 2, 1, 0, true, true, true},
    {"int8 per channel c1 m12 7x7 pad 3", false, true, 2, 1, 9, 33, 12, 1, 7, 1, 3, 1, 0, false, true, true},
    {"int8 c1 m8 3x3 dilation 2", false, false, 1, 1, 12, 19, 8, 1, 3, 1, 2, 2, 0, false, true, false},
    {"int8 per channel groups 2 gic 3", false, true, 1, 6, 8, 7, 16, 2, 3, 1, 1, 1, 0, false, true, false},
    {"int8 per tensor 1x1 c33 m40", false, false, 1, 33, 5, 7, 40, 1, 1, 1, 0, 1, 0, false, true, false},
    {"int8 pad 3 > kernel reach, c5 m8", false, true, 1, 5, 4, 6, 8, 1, 3, 1, 3, 1, 0, false, true, false},
    {"uint8 w zp 128 c6 m10 3x3", true, false, 1, 6, 9, 37, 10, 1, 3, 1, 1, 1, 128, false, true, false},
    {"uint8 w zp 128 c1 m9 5x5 pad 2", true, false, 2, 1, 11, 13, 9, 1, 5, 1, 2, 1, 128, true, true, true},
    {"uint8 w zp 128 c1 m16 3x3 pad 1 w 70", true, false, 1, 1, 6, 70, 16, 1, 3, 1, 1, 1, 128, false, true, true},
    {"uint8 w zp 128 groups 2 gic 5", true, false, 1, 10, 8, 20, 18, 2, 3, 1, 1, 1, 128, false, true, false},
    {"uint8 per channel w zp 100", true, true, 1, 4, 7, 18, 8, 1, 3, 1, 1, 1, 100, false, true, false},
    {"uint8 w zp 131: w - w_zp leaves int8", true, false, 1, 3, 8, 8, 8, 1, 3, 1, 0, 1, 131, false, false, false},
    /* strides above 1: the padded columns split into phases */
    {"int8 per channel stride 2 c5 m17", false, true, 1, 5, 13, 10, 17, 1, 3, 2, 1, 1, 0, false, true, false},
    {"uint8 w zp 128 c1 m16 5x5 stride 2", true, false, 1, 1, 13, 9, 16, 1, 5, 2, 2, 1, 128, false, true, false},
    {"int8 c3 m16 3x3 stride 2 w 71 (uf first)", false, true, 2, 3, 9, 71, 16, 1, 3, 2, 1, 1, 0, true, true, false},
    {"uint8 w zp 128 c8 m24 stride 2 dil 2", true, false, 1, 8, 15, 45, 24, 1, 3, 2, 2, 2, 128, false, true, false},
    {"int8 per channel groups 3 stride 3 w 50", false, true, 1, 9, 11, 50, 24, 3, 3, 3, 1, 1, 0, false, true, false},
    {"int8 1x1 stride 2 c12 m16", false, false, 1, 12, 9, 40, 16, 1, 1, 2, 0, 1, 0, false, true, false},
    {"uint8 w zp 131 stride 2 (int16)", true, false, 1, 4, 9, 9, 8, 1, 3, 2, 1, 1, 131, false, false, false},
};

static uint32_t lcg = 2026u;
static int32_t rndi(int32_t lo, int32_t hi)
{
    lcg = lcg * 1664525u + 1013904223u;
    return lo + (int32_t)((lcg >> 8) % (uint32_t)(hi - lo + 1));
}

static bool cpu_has_vnni(void)
{
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
}

typedef struct vdata {
    cpu_conv_geom g;
    uint8_t *x, *w, *want;
    int32_t *bias;
    float *mult;
    int32_t xz, yz, lo, hi;
    size_t yn;
} vdata;

static void make_case(const vcase *v, vdata *d)
{
    int32_t clo = v->u8 ? 0 : -128, chi = v->u8 ? 255 : 127;
    int64_t ke = v->dil * (v->k - 1) + 1, gic = v->c / v->group, goc = v->m / v->group;
    cpu_conv_geom *g = &d->g;
    *g = (cpu_conv_geom){.n = v->n, .c = v->c, .m = v->m, .group = v->group, .ih = v->h, .iw = v->w,
                         .kh = v->k, .kw = v->k, .sh = v->stride, .sw = v->stride, .dh = v->dil, .dw = v->dil,
                         .pt = v->pad, .pl = v->pad, .pb = v->pad, .pr = v->pad};
    g->oh = (v->h + 2 * v->pad - ke) / v->stride + 1;
    g->ow = (v->w + 2 * v->pad - ke) / v->stride + 1;
    size_t xn = (size_t)(v->n * v->c * v->h * v->w), wn = (size_t)(v->m * gic * v->k * v->k);
    d->yn = (size_t)(v->n * v->m * g->oh * g->ow);
    d->x = malloc(xn);
    d->w = malloc(wn);
    d->want = malloc(d->yn);
    d->bias = malloc((size_t)v->m * sizeof(int32_t));
    d->mult = malloc((size_t)v->m * sizeof(float));
    d->xz = v->u8 ? 131 : -5;
    d->yz = v->u8 ? 120 : 3;
    d->lo = v->relu ? d->yz : clo;
    d->hi = chi;
    for (size_t i = 0; i < xn; i++)
        d->x[i] = (uint8_t)rndi(clo, chi);
    /* uint8 weights within int8 of w_zp when the case expects that; else the whole range */
    for (size_t i = 0; i < wn; i++) {
        int32_t lo = clo, hi = chi;
        if (v->u8 && v->wz != 131) {
            lo = v->wz - 128 < 0 ? 0 : v->wz - 128;
            hi = v->wz + 127 > 255 ? 255 : v->wz + 127;
        }
        d->w[i] = (uint8_t)rndi(lo, hi);
    }
    for (int64_t m = 0; m < v->m; m++) {
        d->bias[m] = rndi(-3000, 3000);
        d->mult[m] = v->per_channel ? 0.0004f * (float)(m % 7 + 1) : 0.0011f;
    }
    /* the formula, per output */
    for (int64_t b = 0; b < v->n; b++)
        for (int64_t m = 0; m < v->m; m++)
            for (int64_t oy = 0; oy < g->oh; oy++)
                for (int64_t ox = 0; ox < g->ow; ox++) {
                    int64_t acc = 0, gr = m / goc;
                    for (int64_t i = 0; i < gic; i++)
                        for (int64_t ky = 0; ky < v->k; ky++)
                            for (int64_t kx = 0; kx < v->k; kx++) {
                                int64_t iy = oy * v->stride - v->pad + ky * v->dil;
                                int64_t ix = ox * v->stride - v->pad + kx * v->dil;
                                if (iy < 0 || iy >= v->h || ix < 0 || ix >= v->w)
                                    continue;
                                uint8_t xb = d->x[(((b * v->c) + gr * gic + i) * v->h + iy) * v->w + ix];
                                uint8_t wb = d->w[((m * gic + i) * v->k + ky) * v->k + kx];
                                int32_t xv = v->u8 ? xb : (int8_t)xb, wv = v->u8 ? wb : (int8_t)wb;
                                acc += (int64_t)(xv - d->xz) * (wv - v->wz);
                            }
                    int32_t a = (int32_t)(uint32_t)((uint64_t)acc + (uint64_t)(uint32_t)d->bias[m]);
                    float f = (float)a * d->mult[m];
                    float flo = (float)(d->lo - d->yz), fhi = (float)(d->hi - d->yz);
                    f = f < flo ? flo : f > fhi ? fhi : f;
                    int32_t code = (int32_t)rintf(f) + d->yz; /* rintf: half to even in the default mode */
                    d->want[((b * v->m + m) * g->oh + oy) * g->ow + ox] = (uint8_t)code;
                }
}

static void free_case(vdata *d)
{
    free(d->x);
    free(d->w);
    free(d->want);
    free(d->bias);
    free(d->mult);
}

static const char *isa_name(cpu_isa isa)
{
    return isa == CPU_ISA_AVX512 ? "avx512" : isa == CPU_ISA_AVX2 ? "avx2" : "portable";
}

static void run_case(const vcase *v, const vdata *d, cpu_isa isa, pthreadpool_t pools[3])
{
    cpu_q8conv q;
    CHECK(cpu_q8conv_fits(&d->g), "%s: does not fit the kernel", v->name);
    sy_status *st = cpu_q8conv_init(&q, &d->g, d->w, v->u8, v->wz, d->bias, d->mult, d->xz, d->yz, d->lo, d->hi, isa);
    CHECK(!st, "%s: init failed", v->name);
    if (st)
        return;
    bool want_vnni = isa == CPU_ISA_AVX512 && v->vnni;
    CHECK(q.vnni == want_vnni, "%s on %s: vnni %d, expected %d", v->name, isa_name(isa), q.vnni, want_vnni);
    CHECK(!q.vnni || q.xquad == v->xquad, "%s: xquad %d, expected %d", v->name, q.xquad, v->xquad);
    void *scratch = malloc(cpu_q8conv_scratch(&q));
    uint8_t *y = malloc(d->yn);
    int off = 0;
    for (int p = 0; p < 3; p++) {
        memset(y, 0xA5, d->yn);
        cpu_q8conv_run(&q, pools[p], d->x, y, scratch);
        for (size_t i = 0; i < d->yn; i++)
            if (y[i] != d->want[i] && off++ < 3)
                CHECK(false, "%s on %s, pool %d: y[%zu] = %d, formula %d", v->name, isa_name(isa), p, i,
                      v->u8 ? y[i] : (int8_t)y[i], v->u8 ? d->want[i] : (int8_t)d->want[i]);
    }
    CHECK(off == 0, "%s on %s: %d outputs off the formula", v->name, isa_name(isa), off);
    printf("  %-44s %-8s %s %zu outputs x 3 pools, %d off\n", v->name, isa_name(isa),
           q.vnni ? (q.xquad ? "vnni/xquad" : "vnni      ") : "int16     ", d->yn, off);
    free(y);
    free(scratch);
    cpu_q8conv_free(&q);
}

int main(void)
{
    pthreadpool_t pools[3] = {NULL, pthreadpool_create(2), pthreadpool_create(3)};
    if (!pools[1] || !pools[2]) {
        printf("FAIL: no thread pools\n");
        return 1;
    }
    /* the integer kernels need AVX2 only (F16C is for the layout changes, not compiled in here) */
    bool vnni = cpu_has_vnni(), avx2 = __builtin_cpu_supports("avx2");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        vdata d;
        make_case(&cases[i], &d);
        run_case(&cases[i], &d, CPU_ISA_PORTABLE, pools);
        if (avx2)
            run_case(&cases[i], &d, CPU_ISA_AVX2, pools);
        if (vnni)
            run_case(&cases[i], &d, CPU_ISA_AVX512, pools);
        free_case(&d);
    }
    pthreadpool_destroy(pools[1]);
    pthreadpool_destroy(pools[2]);
    printf("%d checks, %d failed\n", checks, failures);
    if (failures)
        return 1;
    if (!avx2)
        printf("SKIPPED: no AVX2 on this CPU: the avx2 path was not run\n");
    if (!vnni) {
        printf("SKIPPED: no AVX-512 F/BW/VL + VNNI on this CPU: the VNNI kernel was not run "
               "(the portable%s path passed)\n",
               avx2 ? " and AVX2" : "");
        return 77; /* ctest: SKIP_RETURN_CODE */
    }
    return 0;
}
