/*
 * The cpu provider's QLinearConv (XNNPACK qs8 / qc8 / qu8) against the
 * ONNX formula written out here:
 *   acc = bias[m] + sum (x - x_zp) * (w - w_zp)
 *   y   = saturate(round_half_even(acc * (x_scale * w_scale[m] / y_scale)) + y_zp)
 * with the product acc * multiplier taken in single precision (ONNX Runtime's
 * form): the outputs must be equal code for code, and within one code of the
 * same formula in double precision (cpu_ref's form). Cases: int8 per tensor,
 * int8 per output channel, uint8 with a weight zero point, strided and
 * padded, depthwise; each on every path of the provider (AVX-512 VNNI, AVX2,
 * plain C, XNNPACK, threads), the VNNI one skipped, and said so, on a CPU
 * without it. With requant = gemmlowp the node goes to cpu_ref (and
 * stays within one code of the formula).
 */
#include "cpu_test_q.h"
#include "cpu_test_common.h"
#include "pt_common.h"
#include "switchyard/sy_sdk.h"

#include <math.h>

#define CHECK PT_CHECK

typedef struct qcase {
    const char *name;
    bool u8, per_channel;
    int64_t c, h, w, m, group, k, stride, pad, dil;
    int32_t wzu; /* uint8: the weight zero point (0: 131, which leaves w - w_zp outside int8) */
} qcase;

static const qcase cases[] = {
    {"int8 per tensor 3x3 pad 1", false, false, 4, 9, 8, 6, 1, 3, 1, 1, 1, 0},
    {"int8 per channel stride 2", false, true, 5, 11, 10, 7, 1, 3, 2, 1, 1, 0},
    {"uint8 weight zero point", true, false, 3, 8, 8, 4, 1, 3, 1, 0, 1, 0},
    {"int8 depthwise per channel", false, true, 8, 7, 7, 8, 8, 3, 1, 1, 1, 0},
    /* depthwise on XNNPACK: 16 x 16 byte blocks of the layout change plus ragged edges */
    {"uint8 depthwise c40 stride 2", true, false, 40, 19, 21, 40, 40, 3, 2, 1, 1, 0},
    {"int8 depthwise per channel c32", false, true, 32, 16, 17, 32, 32, 3, 1, 1, 1, 0},
    /* 8 or more output channels per group: the provider's own kernels unless int8_conv = xnnpack. Stride 1
     * (cpu_q8conv_s1.c, NCHW): rows that leave a partial tile of 16 pixels, channel counts that leave a partial
     * tile of 6, padding, dilation, groups, odd channel counts. Stride 2 (cpu_q8conv.c, NHWC): planes that leave
     * a partial tile of 6 pixels, a partial block of 16 channels, one input channel (pairs of taps). */
    {"int8 per tensor c16 m24 3x3", false, false, 16, 9, 11, 24, 1, 3, 1, 1, 1, 0},
    {"int8 per channel c5 m17 stride 2", false, true, 5, 13, 10, 17, 1, 3, 2, 1, 1, 0},
    {"uint8 w zp c1 m20 5x5 pad 2", true, false, 1, 12, 9, 20, 1, 5, 1, 2, 1, 0},
    {"int8 per channel groups 2 gic 3", false, true, 6, 8, 7, 16, 2, 3, 1, 1, 1, 0},
    {"int8 per tensor dilation 2", false, false, 4, 10, 10, 8, 1, 3, 1, 2, 2, 0},
    /* 1x1 stride 1 unpadded: the NCHW matrix product (cpu_q8conv_pw.c); several 64-pixel blocks, partial tiles */
    {"int8 per channel 1x1 c33 m40", false, true, 33, 5, 7, 40, 1, 1, 1, 0, 1, 0},
    {"uint8 1x1 groups 2 c16 m24", true, false, 16, 12, 12, 24, 2, 1, 1, 0, 1, 0},
    {"int8 per tensor 1x1 stride 2", false, false, 12, 9, 9, 16, 1, 1, 2, 0, 1, 0},
    {"uint8 groups 3 stride 2 pad 0", true, false, 9, 11, 11, 27, 3, 3, 2, 0, 1, 0},
    {"int8 c1 m16 3x3 stride 2", false, false, 1, 11, 12, 16, 1, 3, 2, 1, 1, 0},
    {"uint8 c1 m8 5x5 stride 2 pad 2", true, false, 1, 13, 9, 8, 1, 5, 2, 2, 1, 0},
    /* above CPU_PARALLEL_MIN_WORK (12 M multiply-adds): split over the pool when threads > 1 */
    {"int8 per channel c32 m48 30x30", false, true, 32, 30, 30, 48, 1, 3, 1, 1, 1, 0},
    /* stride 1 on AVX-512 VNNI (cpu_q8conv_vnni.c, when isa is avx512): uint8 with w - w_zp inside int8
     * (w_zp 128), channel counts that leave a partial quad of 4 and a partial tile of 8, rows that leave a
     * partial tile of 32 pixels (and rows shorter than 16), one input channel (quads of taps; not with
     * dilation), groups, padding wider than the kernel's reach */
    {"uint8 w zp 128 c6 m10 3x3", true, false, 6, 9, 37, 10, 1, 3, 1, 1, 1, 128},
    {"int8 c1 m64 5x5 pad 2", false, false, 1, 14, 40, 64, 1, 5, 1, 2, 1, 0},
    {"uint8 w zp 128 c1 m9 5x5 pad 2", true, false, 1, 11, 13, 9, 1, 5, 1, 2, 1, 128},
    {"int8 c1 m8 3x3 pad 1 dilation 2", false, true, 1, 12, 19, 8, 1, 3, 1, 2, 2, 0},
    {"int8 c1 m12 7x7 pad 3", false, false, 1, 9, 33, 12, 1, 7, 1, 3, 1, 0},
    {"int8 per channel c7 m9 3x3 w 5", false, true, 7, 6, 5, 9, 1, 3, 1, 1, 1, 0},
    {"uint8 w zp 128 groups 2 gic 5", true, false, 10, 8, 20, 18, 2, 3, 1, 1, 1, 128},
    {"int8 per channel c64 m32 3x3", false, true, 64, 12, 64, 32, 1, 3, 1, 1, 1, 0},
    {"uint8 w zp 128 stride 2", true, false, 5, 13, 10, 17, 1, 3, 2, 1, 1, 128},
};

static uint32_t lcg = 4242u;
static int32_t rndi(int32_t lo, int32_t hi)
{
    lcg = lcg * 1664525u + 1013904223u;
    return lo + (int32_t)((lcg >> 8) % (uint32_t)(hi - lo + 1));
}

static int32_t sat(double v, int32_t lo, int32_t hi) { return v < lo ? lo : v > hi ? hi : (int32_t)v; }

static sy_env *env_with(const char *extra)
{
    return cpu_env("ops_quant", "cpu", extra);
}

static void run_case(const qcase *q, sy_env *env, const char *session_requant, const char *want_provider)
{
    int32_t lo = q->u8 ? 0 : -128, hi = q->u8 ? 255 : 127;
    int elem = q->u8 ? ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 : PT_I8;
    int64_t dil = q->dil, ke = dil * (q->k - 1) + 1;
    int64_t gic = q->c / q->group, oh = (q->h + 2 * q->pad - ke) / q->stride + 1,
            ow = (q->w + 2 * q->pad - ke) / q->stride + 1;
    size_t xn = (size_t)(q->c * q->h * q->w), wn = (size_t)(q->m * gic * q->k * q->k), yn = (size_t)(q->m * oh * ow);
    uint8_t *x = malloc(xn), *w = malloc(wn), *y = calloc(1, yn);
    int32_t *bias = malloc((size_t)q->m * 4);
    float ws[64];
    float xs = 0.02f, ys = 0.05f;
    int32_t xz = q->u8 ? 128 : -3, yz = q->u8 ? 120 : 5, wz = q->u8 ? (q->wzu ? q->wzu : 131) : 0;
    for (size_t i = 0; i < xn; i++)
        x[i] = (uint8_t)rndi(lo, hi);
    for (size_t i = 0; i < wn; i++)
        w[i] = (uint8_t)rndi(lo, hi);
    for (int64_t m = 0; m < q->m; m++) {
        bias[m] = rndi(-2000, 2000);
        ws[m] = q->per_channel ? 0.001f * (float)(m + 3) : 0.0037f;
    }
    pt_model *pm = pt_model_new(q->name);
    pt_input(pm, "x", elem, 4, (int64_t[]){1, q->c, q->h, q->w});
    pt_init_f32(pm, "xs", 0, (int64_t[]){1}, &xs);
    pt_init_raw(pm, "xz", elem, 0, (int64_t[]){1}, &(uint8_t){(uint8_t)xz}, 1);
    pt_init_raw(pm, "w", elem, 4, (int64_t[]){q->m, gic, q->k, q->k}, w, wn);
    int64_t nws = q->per_channel ? q->m : 1;
    pt_init_f32(pm, "ws", q->per_channel ? 1 : 0, &nws, ws);
    uint8_t wzs[64];
    memset(wzs, (uint8_t)wz, sizeof wzs);
    pt_init_raw(pm, "wz", elem, q->per_channel ? 1 : 0, &nws, wzs, (size_t)nws);
    pt_init_f32(pm, "ys", 0, (int64_t[]){1}, &ys);
    pt_init_raw(pm, "yz", elem, 0, (int64_t[]){1}, &(uint8_t){(uint8_t)yz}, 1);
    pt_init_raw(pm, "b", ONNX__TENSOR_PROTO__DATA_TYPE__INT32, 1, &q->m, bias, (size_t)q->m * 4);
    pt_node(pm, "QLinearConv", "qconv", (const char *[]){"x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b", NULL},
            (const char *[]){"y", NULL});
    pt_attr_ints(pm, "pads", 4, (int64_t[]){q->pad, q->pad, q->pad, q->pad});
    pt_attr_ints(pm, "strides", 2, (int64_t[]){q->stride, q->stride});
    if (dil != 1)
        pt_attr_ints(pm, "dilations", 2, (int64_t[]){dil, dil});
    if (q->group != 1)
        pt_attr_int(pm, "group", q->group);
    pt_output(pm, "y", elem, 4, (int64_t[]){1, q->m, oh, ow});
    sy_model *model = pt_load(env, pm);
    sy_session *s = NULL;
    sy_session_options so = {.struct_size = sizeof so, .threads = 1, .strict = -1, .requant = session_requant};
    sy_status *st = model ? sy_session_create(env, model, &so, &s) : NULL;
    CHECK(!st, "%s: session: %s", q->name, pt_msg(st));
    const char *prov = "?";
    if (s) {
        sy_tensor t = pt_tensor_f32(NULL, 4, (int64_t[]){1, q->c, q->h, q->w});
        t.dtype = q->u8 ? SY_DT_UINT8 : SY_DT_INT8;
        t.data = x;
        t.nbytes = xn;
        st = sy_session_set_input(s, "x", &t, SY_INPUT_COPY);
        if (!st)
            st = sy_session_run(s);
        const sy_tensor *out = NULL;
        if (!st)
            st = sy_session_get_output(s, 0, &out);
        CHECK(!st && out && out->nbytes == yn, "%s: run: %s", q->name, pt_msg(st));
        if (out && out->nbytes == yn)
            memcpy(y, out->data, yn);
        sy_node_placement pl = {.struct_size = sizeof pl};
        for (size_t i = 0; i < sy_session_node_count(s); i++)
            if (sy_session_node_placement(s, i, &pl) && !strcmp(pl.op, "QLinearConv") && pl.provider)
                prov = pl.provider;
    }
    CHECK(!strcmp(prov, want_provider), "%s: QLinearConv on %s, expected %s", q->name, prov, want_provider);
    int off_single = 0, off_double = 0;
    for (int64_t m = 0; m < q->m && s; m++)
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++) {
                int64_t acc = bias[m], g = m / (q->m / q->group);
                for (int64_t i = 0; i < gic; i++)
                    for (int64_t ky = 0; ky < q->k; ky++)
                        for (int64_t kx = 0; kx < q->k; kx++) {
                            int64_t iy = oy * q->stride - q->pad + ky * dil, ix = ox * q->stride - q->pad + kx * dil;
                            if (iy < 0 || iy >= q->h || ix < 0 || ix >= q->w)
                                continue;
                            size_t xi = (size_t)(((g * gic + i) * q->h + iy) * q->w + ix);
                            size_t wi = (size_t)(((m * gic + i) * q->k + ky) * q->k + kx);
                            int32_t xv = q->u8 ? x[xi] : (int8_t)x[xi], wv = q->u8 ? w[wi] : (int8_t)w[wi];
                            acc += (int64_t)(xv - xz) * (wv - wz);
                        }
                float mult = xs * ws[q->per_channel ? m : 0] / ys;
                int32_t single = sat(cq_round_even((double)((float)acc * mult)) + yz, lo, hi);
                int32_t dbl = sat(cq_round_even((double)acc * (double)mult) + yz, lo, hi);
                size_t yi = (size_t)((m * oh + oy) * ow + ox);
                int32_t got = q->u8 ? y[yi] : (int8_t)y[yi];
                bool cpu = !strcmp(want_provider, "cpu");
                /* the gemmlowp form on cpu_ref is only held to one code */
                if (cpu && got != single && off_single++ < 3)
                    CHECK(false, "%s: y[%zu] = %d, formula (single product) %d", q->name, yi, got, single);
                if (abs(got - dbl) > 1 && off_double++ < 3)
                    CHECK(false, "%s: y[%zu] = %d, more than one code from the double form %d", q->name, yi, got, dbl);
            }
    CHECK(off_single == 0 && off_double == 0, "%s on %s: %d outputs off the formula", q->name, prov, off_single);
    printf("  %-32s on %-7s %zu outputs, %d off\n", q->name, prov, yn, off_single);
    sy_session_release(s);
    sy_model_release(model);
    pt_model_free(pm);
    free(x);
    free(w);
    free(y);
    free(bias);
}

static bool cpu_has_vnni(void)
{
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
}

/* every case on every path: the best this CPU runs, AVX-512 VNNI and AVX2
 * forced when it has them, plain C, XNNPACK instead of the provider's
 * kernel, two and three intra-op threads (two on VNNI); each must give the
 * formula's bytes */
static void test_cases(void)
{
    const char *configs[] = {"",
                             "[provider.cpu]\nisa = avx512\n",
                             "[provider.cpu]\nthreads = 2\nisa = avx512\n",
                             "[provider.cpu]\nisa = avx2\n",
                             "[provider.cpu]\nisa = portable\n",
                             "[provider.cpu]\nint8_conv = xnnpack\n",
                             "[provider.cpu]\nthreads = 2\n",
                             "[provider.cpu]\nthreads = 3\nisa = portable\n"};
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        if ((c == 1 || c == 2) && !cpu_has_vnni()) {
            printf("  SKIPPED: no AVX-512 F/BW/VL + VNNI on this CPU: the forced avx512 configuration (%s) is not "
                   "run\n",
                   configs[c] + 15);
            continue;
        }
        if (c == 3 && !__builtin_cpu_supports("avx2")) {
            printf("  (no AVX2 on this CPU: the forced avx2 configuration is not run)\n");
            continue;
        }
        printf("  config: %s", c ? configs[c] + 15 : "(defaults)\n");
        sy_env *env = env_with(configs[c]);
        for (size_t i = 0; env && i < sizeof cases / sizeof cases[0]; i++)
            run_case(&cases[i], env, NULL, "cpu");
        sy_env_release(env);
    }
}

/* a value the key does not know is refused with the key in the message */
static void test_bad_option(void)
{
    sy_env *env = NULL;
    char ini[4096];
    snprintf(ini, sizeof ini,
             "[switchyard]\nplugins = %s/libsy_cpu_ref.so\nplugins = %s/libsy_cpu.so\nproviders = cpu\n"
             "[provider.cpu]\nint8_conv = fast\n",
             PT_PLUGIN_DIR, PT_PLUGIN_DIR);
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    const char *msg = st ? sy_status_get_message(st) : "accepted";
    CHECK(st && strstr(msg, "int8_conv = fast"), "int8_conv = fast: %s", msg);
    sy_status_free(st); /* once: pt_msg would free it too */
    sy_env_release(env);
}

static void test_gemmlowp_declined(void)
{
    sy_env *env = env_with("");
    if (env)
        run_case(&cases[0], env, "gemmlowp", "cpu_ref");
    sy_env_release(env);
}

int main(void)
{
    PT_RUN(test_cases);
    PT_RUN(test_gemmlowp_declined);
    PT_RUN(test_bad_option);
    return pt_result();
}
