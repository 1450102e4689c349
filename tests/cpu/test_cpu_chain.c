/*
 * The cpu provider's fused chains (cpu_chain.c) against the formulas
 * written out here in double: Conv -> BatchNormalization -> Relu -> Conv
 * (stride 2) -> Clip(0, 6).
 *   - fused: one cpu partition of the five nodes (BN folded into the first
 *     Conv, Relu and Clip as output clamps, NHWC between the Convs)
 *   - taps: the BN and Relu outputs are graph outputs too, so they cannot be
 *     folded away and run as NHWC steps of their own; all three outputs match
 *   - off: fuse_bn, fuse_activation and nhwc_chains false: no partition, the
 *     nodes run one by one, same results
 *   - fp16 storage of the fused chain (one rounding to half at the end)
 *   - threads = 1 and 2 give bit-identical outputs
 *   - isa = portable gives the default path's bits, fp32 and fp16
 */
#include "pt_common.h"
#include "switchyard/sy_sdk.h"

#include <math.h>

#define CHECK PT_CHECK

enum { N = 1, C0 = 4, HH = 10, WW = 9, C1 = 8, C2 = 6 };
#define OH2 ((HH + 2 - 3) / 2 + 1)
#define OW2 ((WW + 2 - 3) / 2 + 1)

static float x[N * C0 * HH * WW], w1[C1 * C0 * 9], b1[C1], w2[C2 * C1 * 9], b2[C2];
static float bn_s[C1], bn_b[C1], bn_m[C1], bn_v[C1];
static double r_bn[N * C1 * HH * WW], r_relu[N * C1 * HH * WW], r_y[N * C2 * OH2 * OW2];
static double m_y[N * C2 * OH2 * OW2], m_bn[N * C1 * HH * WW]; /* sums of |terms| */
static const float eps = 1e-3f;

static uint32_t lcg = 777u;
static float rnd(void)
{
    lcg = lcg * 1664525u + 1013904223u;
    return (float)((lcg >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* 3x3 convolution, pad 1, stride s, on one image, accumulating magnitudes */
static void conv3x3(const double *in, int ci, int h, int w, const float *wt, const float *b, int co, int s,
                    double *out, double *mag)
{
    int oh = (h + 2 - 3) / s + 1, ow = (w + 2 - 3) / s + 1;
    for (int m = 0; m < co; m++)
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++) {
                double acc = b[m], a = fabs(b[m]);
                for (int c = 0; c < ci; c++)
                    for (int ky = 0; ky < 3; ky++)
                        for (int kx = 0; kx < 3; kx++) {
                            int iy = oy * s - 1 + ky, ix = ox * s - 1 + kx;
                            if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                                continue;
                            double t = in[(c * h + iy) * w + ix] * wt[((m * ci + c) * 3 + ky) * 3 + kx];
                            acc += t;
                            a += fabs(t);
                        }
                out[(m * oh + oy) * ow + ox] = acc;
                mag[(m * oh + oy) * ow + ox] = a;
            }
}

static void make_data(bool f16)
{
    float *all[] = {x, w1, b1, w2, b2, bn_s, bn_b, bn_m, bn_v};
    size_t cnt[] = {sizeof x, sizeof w1, sizeof b1, sizeof w2, sizeof b2, sizeof bn_s, sizeof bn_b, sizeof bn_m,
                    sizeof bn_v};
    for (int a = 0; a < 9; a++)
        for (size_t i = 0; i < cnt[a] / sizeof(float); i++) {
            float v = rnd();
            if (all[a] == bn_v)
                v = 0.5f + fabsf(v); /* variance > 0 */
            if (all[a] == bn_s)
                v = 0.5f + v;
            all[a][i] = f16 ? sy_f16_to_f32(sy_f32_to_f16(v)) : v;
        }
    static double xd[N * C0 * HH * WW], t1[N * C1 * HH * WW], m1[N * C1 * HH * WW];
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
        xd[i] = x[i];
    conv3x3(xd, C0, HH, WW, w1, b1, C1, 1, t1, m1);
    for (int c = 0; c < C1; c++)
        for (int p = 0; p < HH * WW; p++) {
            size_t i = (size_t)(c * HH * WW + p);
            double k = bn_s[c] / sqrt((double)bn_v[c] + (double)eps); /* the ONNX formula */
            r_bn[i] = (t1[i] - bn_m[c]) * k + bn_b[c];
            m_bn[i] = (m1[i] + fabs((double)bn_m[c])) * fabs(k) + fabs((double)bn_b[c]);
            r_relu[i] = r_bn[i] > 0 ? r_bn[i] : 0;
        }
    conv3x3(r_relu, C1, HH, WW, w2, b2, C2, 2, r_y, m_y);
    for (size_t i = 0; i < sizeof r_y / sizeof r_y[0]; i++)
        r_y[i] = r_y[i] < 0 ? 0 : r_y[i] > 6 ? 6 : r_y[i];
}

static void init(pt_model *m, const char *name, int32_t rank, const int64_t *dims, const float *v, size_t n, bool f16)
{
    if (!f16) {
        pt_init_raw(m, name, PT_F32, rank, dims, v, n * 4);
        return;
    }
    uint16_t *h = malloc(n * 2);
    for (size_t i = 0; i < n; i++)
        h[i] = sy_f32_to_f16(v[i]);
    pt_init_raw(m, name, PT_F16, rank, dims, h, n * 2);
    free(h);
}

static pt_model *build(bool taps, bool f16)
{
    int el = f16 ? PT_F16 : PT_F32;
    pt_model *m = pt_model_new(taps ? "chain_taps" : "chain");
    pt_input(m, "x", el, 4, (int64_t[]){N, C0, HH, WW});
    init(m, "w1", 4, (int64_t[]){C1, C0, 3, 3}, w1, C1 * C0 * 9, f16);
    init(m, "b1", 1, (int64_t[]){C1}, b1, C1, f16);
    init(m, "s", 1, (int64_t[]){C1}, bn_s, C1, f16);
    init(m, "bb", 1, (int64_t[]){C1}, bn_b, C1, f16);
    init(m, "mean", 1, (int64_t[]){C1}, bn_m, C1, f16);
    init(m, "var", 1, (int64_t[]){C1}, bn_v, C1, f16);
    init(m, "w2", 4, (int64_t[]){C2, C1, 3, 3}, w2, C2 * C1 * 9, f16);
    init(m, "b2", 1, (int64_t[]){C2}, b2, C2, f16);
    float lo = 0, hi = 6;
    init(m, "lo", 0, (int64_t[]){1}, &lo, 1, f16);
    init(m, "hi", 0, (int64_t[]){1}, &hi, 1, f16);
    pt_node(m, "Conv", "conv1", (const char *[]){"x", "w1", "b1", NULL}, (const char *[]){"t1", NULL});
    pt_attr_ints(m, "pads", 4, (int64_t[]){1, 1, 1, 1});
    pt_node(m, "BatchNormalization", "bn", (const char *[]){"t1", "s", "bb", "mean", "var", NULL},
            (const char *[]){"t2", NULL});
    pt_attr_float(m, "epsilon", eps);
    pt_node(m, "Relu", "relu", (const char *[]){"t2", NULL}, (const char *[]){"t3", NULL});
    pt_node(m, "Conv", "conv2", (const char *[]){"t3", "w2", "b2", NULL}, (const char *[]){"t4", NULL});
    pt_attr_ints(m, "pads", 4, (int64_t[]){1, 1, 1, 1});
    pt_attr_ints(m, "strides", 2, (int64_t[]){2, 2});
    pt_node(m, "Clip", "clip", (const char *[]){"t4", "lo", "hi", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", el, 4, (int64_t[]){N, C2, OH2, OW2});
    if (taps) {
        pt_output(m, "t2", el, 4, (int64_t[]){N, C1, HH, WW});
        pt_output(m, "t3", el, 4, (int64_t[]){N, C1, HH, WW});
    }
    return m;
}

typedef struct result {
    float y[N * C2 * OH2 * OW2], t2[N * C1 * HH * WW], t3[N * C1 * HH * WW];
    size_t cpu_parts;
    uint32_t part_nodes;
} result;

static bool run(const char *cpu_opts, bool taps, bool f16, result *r)
{
    char ini[4096];
    snprintf(ini, sizeof ini,
             "[switchyard]\nplugins = %s/libsy_cpu_ref.so\nplugins = %s/libsy_ops_nn.so\n"
             "plugins = %s/libsy_ops_activation.so\nplugins = %s/libsy_cpu.so\nproviders = cpu\n"
             "[provider.cpu]\n%s",
             PT_PLUGIN_DIR, PT_PLUGIN_DIR, PT_PLUGIN_DIR, PT_PLUGIN_DIR, cpu_opts);
    memset(r, 0, sizeof *r);
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    CHECK(!st, "env: %s", pt_msg(st));
    if (!env)
        return false;
    pt_model *pm = build(taps, f16);
    sy_model *model = pt_load(env, pm);
    sy_session *s = NULL;
    sy_session_options so = {.struct_size = sizeof so, .threads = 1, .strict = -1};
    st = model ? sy_session_create(env, model, &so, &s) : NULL;
    CHECK(!st, "session: %s", pt_msg(st));
    bool ok = false;
    if (s) {
        uint16_t xh[sizeof x / sizeof x[0]];
        for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
            xh[i] = sy_f32_to_f16(x[i]);
        sy_tensor t = pt_tensor_f32(x, 4, (int64_t[]){N, C0, HH, WW});
        if (f16) {
            t.dtype = SY_DT_FLOAT16;
            t.data = xh;
            t.nbytes = sizeof xh;
        }
        st = sy_session_set_input(s, "x", &t, SY_INPUT_COPY);
        if (!st)
            st = sy_session_run(s);
        CHECK(!st, "run: %s", pt_msg(st));
        float *dst[3] = {r->y, r->t2, r->t3};
        size_t cnt[3] = {N * C2 * OH2 * OW2, N * C1 * HH * WW, N * C1 * HH * WW};
        ok = !st;
        for (size_t o = 0; ok && o < (taps ? 3u : 1u); o++) {
            const sy_tensor *out = NULL;
            st = sy_session_get_output(s, o, &out);
            CHECK(!st && out && out->nbytes == cnt[o] * (f16 ? 2 : 4), "output %zu: %s", o, pt_msg(st));
            if (!out || out->nbytes != cnt[o] * (f16 ? 2 : 4)) {
                ok = false;
                break;
            }
            for (size_t i = 0; i < cnt[o]; i++)
                dst[o][i] = f16 ? sy_f16_to_f32(((const uint16_t *)out->data)[i]) : ((const float *)out->data)[i];
        }
        for (size_t i = 0; i < sy_session_partition_count(s); i++) {
            const char *prov = NULL;
            uint32_t nn = 0;
            bool compiled = false, cached = false;
            if (sy_session_partition_info(s, i, &prov, &nn, &compiled, &cached) && prov && !strcmp(prov, "cpu") &&
                compiled) {
                r->cpu_parts++;
                r->part_nodes += nn;
            }
        }
        sy_session_release(s);
    }
    sy_model_release(model);
    pt_model_free(pm);
    sy_env_release(env);
    return ok;
}

static int compare(const char *what, const float *got, const double *ref, const double *mag, size_t n, bool f16)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        /* fp16: the result is rounded to half once (2^-11 relative; 2^-24 near 0) */
        double tol = 1e-5 * mag[i] + 1e-6 + (f16 ? fabs(ref[i]) / 2048.0 + 6e-8 : 0.0);
        if (fabs(got[i] - ref[i]) > tol && bad++ < 3)
            CHECK(false, "%s[%zu] = %.9g, reference %.9g (tolerance %.3g)", what, i, got[i], ref[i], tol);
    }
    CHECK(bad == 0, "%s: %d of %zu off", what, bad, n);
    return bad;
}

static result r_fused, r_taps, r_off, r_f16, r_t2, r_port, r_port16;

static void test_fused(void)
{
    make_data(false);
    if (!run("", false, false, &r_fused))
        return;
    CHECK(r_fused.cpu_parts == 1 && r_fused.part_nodes == 5, "expected one cpu partition of 5 nodes, got %zu (%u nodes)",
          r_fused.cpu_parts, r_fused.part_nodes);
    compare("fused y", r_fused.y, r_y, m_y, N * C2 * OH2 * OW2, false);
}

static void test_taps(void)
{
    if (!run("", true, false, &r_taps))
        return;
    CHECK(r_taps.cpu_parts == 1 && r_taps.part_nodes == 5, "expected one cpu partition of 5 nodes, got %zu (%u)",
          r_taps.cpu_parts, r_taps.part_nodes);
    compare("taps y", r_taps.y, r_y, m_y, N * C2 * OH2 * OW2, false);
    compare("taps t2 (BN)", r_taps.t2, r_bn, m_bn, N * C1 * HH * WW, false);
    compare("taps t3 (Relu)", r_taps.t3, r_relu, m_bn, N * C1 * HH * WW, false);
}

static void test_off(void)
{
    if (!run("fuse_bn = false\nfuse_activation = off\nnhwc_chains = no\n", false, false, &r_off))
        return;
    CHECK(r_off.cpu_parts == 0, "fusion off: %zu cpu partitions", r_off.cpu_parts);
    compare("off y", r_off.y, r_y, m_y, N * C2 * OH2 * OW2, false);
}

static void test_threads(void)
{
    if (!run("threads = 2\n", false, false, &r_t2))
        return;
    CHECK(!memcmp(r_t2.y, r_fused.y, sizeof r_t2.y), "threads = 2 differs from threads = 1");
    if (run("isa = portable\n", false, false, &r_port))
        CHECK(!memcmp(r_port.y, r_fused.y, sizeof r_port.y), "isa = portable differs from the default path");
}

static void test_fp16(void)
{
    make_data(true);
    if (!run("", false, true, &r_f16))
        return;
    CHECK(r_f16.cpu_parts == 1 && r_f16.part_nodes == 5, "fp16: expected one cpu partition of 5 nodes, got %zu (%u)",
          r_f16.cpu_parts, r_f16.part_nodes);
    compare("fp16 y", r_f16.y, r_y, m_y, N * C2 * OH2 * OW2, true);
    if (run("isa = portable\n", false, true, &r_port16))
        CHECK(!memcmp(r_port16.y, r_f16.y, sizeof r_f16.y), "fp16: isa = portable differs from the default path");
}

static void test_bad_option(void)
{
    char ini[2048];
    snprintf(ini, sizeof ini,
             "[switchyard]\nplugins = %s/libsy_cpu_ref.so\nplugins = %s/libsy_cpu.so\n[provider.cpu]\nfuse_bn = maybe\n",
             PT_PLUGIN_DIR, PT_PLUGIN_DIR);
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    CHECK(st != NULL, "fuse_bn = maybe was accepted");
    const char *msg = pt_msg(st);
    CHECK(strstr(msg, "[provider.cpu] fuse_bn = maybe: expected true or false") != NULL, "message: %s", msg);
    sy_env_release(env);
}

int main(void)
{
    PT_RUN(test_fused);
    PT_RUN(test_taps);
    PT_RUN(test_off);
    PT_RUN(test_threads);
    PT_RUN(test_fp16);
    PT_RUN(test_bad_option);
    return pt_result();
}
