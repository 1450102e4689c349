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
#include "cpu_test_common.h"

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

static void make_data(bool f16)
{
    float *all[] = {x, w1, b1, w2, b2, bn_s, bn_b, bn_m, bn_v};
    size_t cnt[] = {sizeof x, sizeof w1, sizeof b1, sizeof w2, sizeof b2, sizeof bn_s, sizeof bn_b, sizeof bn_m,
                    sizeof bn_v};
    for (int a = 0; a < 9; a++)
        for (size_t i = 0; i < cnt[a] / sizeof(float); i++) {
            float v = cpu_rnd(&lcg);
            if (all[a] == bn_v)
                v = 0.5f + fabsf(v); /* variance > 0 */
            if (all[a] == bn_s)
                v = 0.5f + v;
            all[a][i] = f16 ? sy_f16_to_f32(sy_f32_to_f16(v)) : v;
        }
    static double xd[N * C0 * HH * WW], t1[N * C1 * HH * WW], m1[N * C1 * HH * WW];
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
        xd[i] = x[i];
    cpu_ref_conv(xd, NULL, C0, HH, WW, w1, b1, C1, 3, 1, 1, false, t1, m1);
    for (int c = 0; c < C1; c++)
        for (int p = 0; p < HH * WW; p++) {
            size_t i = (size_t)(c * HH * WW + p);
            double k = bn_s[c] / sqrt((double)bn_v[c] + (double)eps); /* the ONNX formula */
            r_bn[i] = (t1[i] - bn_m[c]) * k + bn_b[c];
            m_bn[i] = (m1[i] + fabs((double)bn_m[c])) * fabs(k) + fabs((double)bn_b[c]);
            r_relu[i] = r_bn[i] > 0 ? r_bn[i] : 0;
        }
    cpu_ref_conv(r_relu, NULL, C1, HH, WW, w2, b2, C2, 3, 2, 1, false, r_y, m_y);
    for (size_t i = 0; i < sizeof r_y / sizeof r_y[0]; i++)
        r_y[i] = r_y[i] < 0 ? 0 : r_y[i] > 6 ? 6 : r_y[i];
}

static pt_model *build(bool taps, bool f16)
{
    int el = f16 ? PT_F16 : PT_F32;
    pt_model *m = pt_model_new(taps ? "chain_taps" : "chain");
    pt_input(m, "x", el, 4, (int64_t[]){N, C0, HH, WW});
    cpu_init_floats(m, "w1", 4, (int64_t[]){C1, C0, 3, 3}, w1, C1 * C0 * 9, f16);
    cpu_init_floats(m, "b1", 1, (int64_t[]){C1}, b1, C1, f16);
    cpu_init_floats(m, "s", 1, (int64_t[]){C1}, bn_s, C1, f16);
    cpu_init_floats(m, "bb", 1, (int64_t[]){C1}, bn_b, C1, f16);
    cpu_init_floats(m, "mean", 1, (int64_t[]){C1}, bn_m, C1, f16);
    cpu_init_floats(m, "var", 1, (int64_t[]){C1}, bn_v, C1, f16);
    cpu_init_floats(m, "w2", 4, (int64_t[]){C2, C1, 3, 3}, w2, C2 * C1 * 9, f16);
    cpu_init_floats(m, "b2", 1, (int64_t[]){C2}, b2, C2, f16);
    float lo = 0, hi = 6;
    cpu_init_floats(m, "lo", 0, (int64_t[]){1}, &lo, 1, f16);
    cpu_init_floats(m, "hi", 0, (int64_t[]){1}, &hi, 1, f16);
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
    cpu_run_info info;
} result;

static bool run(const char *cpu_opts, bool taps, bool f16, result *r)
{
    memset(r, 0, sizeof *r);
    pt_model *pm = build(taps, f16);
    float *dst[3] = {r->y, r->t2, r->t3};
    size_t cnt[3] = {N * C2 * OH2 * OW2, N * C1 * HH * WW, N * C1 * HH * WW};
    bool ok = cpu_run_model("ops_nn ops_activation", cpu_opts, pm, x, 4, (int64_t[]){N, C0, HH, WW}, f16,
                            taps ? 3u : 1u, dst, cnt, &r->info, NULL, NULL);
    pt_model_free(pm);
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
    CHECK(r_fused.info.cpu_parts == 1 && r_fused.info.part_nodes == 5, "expected one cpu partition of 5 nodes, got %zu (%u nodes)",
          r_fused.info.cpu_parts, r_fused.info.part_nodes);
    compare("fused y", r_fused.y, r_y, m_y, N * C2 * OH2 * OW2, false);
}

static void test_taps(void)
{
    if (!run("", true, false, &r_taps))
        return;
    CHECK(r_taps.info.cpu_parts == 1 && r_taps.info.part_nodes == 5, "expected one cpu partition of 5 nodes, got %zu (%u)",
          r_taps.info.cpu_parts, r_taps.info.part_nodes);
    compare("taps y", r_taps.y, r_y, m_y, N * C2 * OH2 * OW2, false);
    compare("taps t2 (BN)", r_taps.t2, r_bn, m_bn, N * C1 * HH * WW, false);
    compare("taps t3 (Relu)", r_taps.t3, r_relu, m_bn, N * C1 * HH * WW, false);
}

static void test_off(void)
{
    if (!run("fuse_bn = false\nfuse_activation = off\nnhwc_chains = no\n", false, false, &r_off))
        return;
    CHECK(r_off.info.cpu_parts == 0, "fusion off: %zu cpu partitions", r_off.info.cpu_parts);
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
    CHECK(r_f16.info.cpu_parts == 1 && r_f16.info.part_nodes == 5, "fp16: expected one cpu partition of 5 nodes, got %zu (%u)",
          r_f16.info.cpu_parts, r_f16.info.part_nodes);
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
