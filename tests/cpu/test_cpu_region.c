/*
 * The cpu provider's NHWC regions (cpu_chain.c) on a SqueezeNet fire module
 * and what follows it, against the formulas written out here in double:
 *   s = Relu(Conv1x1(x)); e1 = Relu(Conv1x1(s)); e3 = Relu(Conv3x3 pad 1(s));
 *   c = Concat(e1, e3) along the channels; p = MaxPool 3x3 stride 2 (c);
 *   d = Dropout(p) (inference: the identity); y = Conv1x1(d);
 *   g = GlobalAveragePool(y).
 *   - one cpu partition of all eleven nodes (the expand Convs write straight
 *     into the Concat's buffer);
 *   - taps: s and c are graph outputs too (c is read from inside the wider
 *     buffer, s keeps the squeeze Relu from being folded), and the Dropout's
 *     mask (every element true); all outputs match;
 *   - every optimization off: the nodes run one by one (Concat and Dropout on
 *     cpu's own NCHW kernels), same results;
 *   - fp16 storage (one rounding to half at each output);
 *   - isa = portable and threads = 2 give the default path's bits.
 * Error bound: 2e-6 of the sum of |terms| through the layers (fp32), plus one
 * rounding to half of the value for fp16 storage.
 */
#include "cpu_test_common.h"

#define CHECK PT_CHECK

enum { C0 = 6, HH = 9, WW = 9, CS = 4, CE1 = 5, CE3 = 7, CC = CE1 + CE3, CY = 3, PH = 4, PW = 4 };

static float x[C0 * HH * WW], ws[CS * C0], bs[CS], we1[CE1 * CS], be1[CE1], we3[CE3 * CS * 9], be3[CE3];
static float wy[CY * CC], by[CY];
/* references and the sums of |terms| */
static double r_s[CS * HH * WW], m_s[CS * HH * WW], r_c[CC * HH * WW], m_c[CC * HH * WW];
static double r_y[CY * PH * PW], m_y[CY * PH * PW], r_g[CY], m_g[CY];

static uint32_t lcg = 99u;
static void make_data(bool f16)
{
    float *all[] = {x, ws, bs, we1, be1, we3, be3, wy, by};
    size_t cnt[] = {sizeof x, sizeof ws, sizeof bs, sizeof we1, sizeof be1, sizeof we3, sizeof be3, sizeof wy,
                    sizeof by};
    for (int a = 0; a < 9; a++)
        for (size_t i = 0; i < cnt[a] / sizeof(float); i++) {
            float v = cpu_rnd(&lcg);
            all[a][i] = f16 ? sy_f16_to_f32(sy_f32_to_f16(v)) : v;
        }
    static double xd[C0 * HH * WW], xm[C0 * HH * WW], p[CC * PH * PW], pm[CC * PH * PW];
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) {
        xd[i] = x[i];
        xm[i] = fabs((double)x[i]);
    }
    cpu_ref_conv(xd, xm, C0, HH, WW, ws, bs, CS, 1, 1, 0, true, r_s, m_s);
    cpu_ref_conv(r_s, m_s, CS, HH, WW, we1, be1, CE1, 1, 1, 0, true, r_c, m_c);
    cpu_ref_conv(r_s, m_s, CS, HH, WW, we3, be3, CE3, 3, 1, 1, true, r_c + CE1 * HH * WW, m_c + CE1 * HH * WW);
    for (int c = 0; c < CC; c++) /* 3x3 stride 2 windows, no padding */
        for (int y = 0; y < PH; y++)
            for (int xx = 0; xx < PW; xx++) {
                double best = -INFINITY, bm = 0;
                for (int ky = 0; ky < 3; ky++)
                    for (int kx = 0; kx < 3; kx++) {
                        size_t at = (size_t)((c * HH + 2 * y + ky) * WW + 2 * xx + kx);
                        best = r_c[at] > best ? r_c[at] : best;
                        bm = m_c[at] > bm ? m_c[at] : bm;
                    }
                p[(c * PH + y) * PW + xx] = best;
                pm[(c * PH + y) * PW + xx] = bm;
            }
    cpu_ref_conv(p, pm, CC, PH, PW, wy, by, CY, 1, 1, 0, false, r_y, m_y);
    for (int c = 0; c < CY; c++) { /* the mean of each plane */
        r_g[c] = m_g[c] = 0;
        for (int i = 0; i < PH * PW; i++) {
            r_g[c] += r_y[c * PH * PW + i] / (PH * PW);
            m_g[c] += m_y[c * PH * PW + i] / (PH * PW);
        }
    }
}

static pt_model *build(bool taps, bool f16)
{
    int el = f16 ? PT_F16 : PT_F32;
    pt_model *m = pt_model_new("fire");
    pt_input(m, "x", el, 4, (int64_t[]){1, C0, HH, WW});
    cpu_init_floats(m, "ws", 4, (int64_t[]){CS, C0, 1, 1}, ws, CS * C0, f16);
    cpu_init_floats(m, "bs", 1, (int64_t[]){CS}, bs, CS, f16);
    cpu_init_floats(m, "we1", 4, (int64_t[]){CE1, CS, 1, 1}, we1, CE1 * CS, f16);
    cpu_init_floats(m, "be1", 1, (int64_t[]){CE1}, be1, CE1, f16);
    cpu_init_floats(m, "we3", 4, (int64_t[]){CE3, CS, 3, 3}, we3, CE3 * CS * 9, f16);
    cpu_init_floats(m, "be3", 1, (int64_t[]){CE3}, be3, CE3, f16);
    cpu_init_floats(m, "wy", 4, (int64_t[]){CY, CC, 1, 1}, wy, CY * CC, f16);
    cpu_init_floats(m, "by", 1, (int64_t[]){CY}, by, CY, f16);
    pt_node(m, "Conv", "squeeze", (const char *[]){"x", "ws", "bs", NULL}, (const char *[]){"s0", NULL});
    pt_node(m, "Relu", "squeeze_relu", (const char *[]){"s0", NULL}, (const char *[]){"s", NULL});
    pt_node(m, "Conv", "expand1", (const char *[]){"s", "we1", "be1", NULL}, (const char *[]){"e1a", NULL});
    pt_node(m, "Relu", "expand1_relu", (const char *[]){"e1a", NULL}, (const char *[]){"e1", NULL});
    pt_node(m, "Conv", "expand3", (const char *[]){"s", "we3", "be3", NULL}, (const char *[]){"e3a", NULL});
    pt_attr_ints(m, "pads", 4, (int64_t[]){1, 1, 1, 1});
    pt_node(m, "Relu", "expand3_relu", (const char *[]){"e3a", NULL}, (const char *[]){"e3", NULL});
    pt_node(m, "Concat", "concat", (const char *[]){"e1", "e3", NULL}, (const char *[]){"c", NULL});
    pt_attr_int(m, "axis", 1);
    pt_node(m, "MaxPool", "pool", (const char *[]){"c", NULL}, (const char *[]){"p", NULL});
    pt_attr_ints(m, "kernel_shape", 2, (int64_t[]){3, 3});
    pt_attr_ints(m, "strides", 2, (int64_t[]){2, 2});
    pt_node(m, "Dropout", "drop", (const char *[]){"p", NULL}, (const char *[]){"d", taps ? "dm" : NULL, NULL});
    pt_node(m, "Conv", "final", (const char *[]){"d", "wy", "by", NULL}, (const char *[]){"y", NULL});
    pt_node(m, "GlobalAveragePool", "gap", (const char *[]){"y", NULL}, (const char *[]){"g", NULL});
    pt_output(m, "y", el, 4, (int64_t[]){1, CY, PH, PW});
    pt_output(m, "g", el, 4, (int64_t[]){1, CY, 1, 1});
    if (taps) {
        pt_output(m, "s", el, 4, (int64_t[]){1, CS, HH, WW});
        pt_output(m, "c", el, 4, (int64_t[]){1, CC, HH, WW});
        pt_output(m, "dm", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 4, (int64_t[]){1, CC, PH, PW});
    }
    return m;
}

typedef struct result {
    float y[CY * PH * PW], g[CY], s[CS * HH * WW], c[CC * HH * WW];
    bool mask_all_true;
    cpu_run_info info;
} result;

/* the Dropout mask (output 4 with taps): every element true */
static void read_mask(sy_session *s, void *arg)
{
    bool *all_true = arg;
    const sy_tensor *mask = NULL;
    if (!sy_session_get_output(s, 4, &mask) && mask && mask->nbytes == CC * PH * PW) {
        *all_true = true;
        for (size_t i = 0; i < mask->nbytes; i++)
            *all_true &= ((const uint8_t *)mask->data)[i] == 1;
    }
}

static bool run(const char *cpu_opts, bool taps, bool f16, result *r)
{
    memset(r, 0, sizeof *r);
    pt_model *pm = build(taps, f16);
    float *dst[4] = {r->y, r->g, r->s, r->c};
    size_t cnt[4] = {CY * PH * PW, CY, CS * HH * WW, CC * HH * WW};
    bool ok = cpu_run_model("ops_nn ops_activation ops_tensor", cpu_opts, pm, x, 4, (int64_t[]){1, C0, HH, WW}, f16,
                            taps ? 4u : 2u, dst, cnt, &r->info, taps ? read_mask : NULL, &r->mask_all_true);
    pt_model_free(pm);
    return ok;
}

static void compare(const char *what, const float *got, const double *ref, const double *mag, size_t n, bool f16)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double tol = 2e-6 * mag[i] + 1e-30 + (f16 ? fabs(ref[i]) * 0x1p-11 + 0x1p-25 : 0);
        if (!(fabs((double)got[i] - ref[i]) <= tol) && bad++ < 5)
            CHECK(false, "%s[%zu] = %.9g, reference %.9g (tolerance %.3g)", what, i, got[i], ref[i], tol);
    }
    CHECK(bad == 0, "%s: %d of %zu off", what, bad, n);
}

static void test_fused(void)
{
    make_data(false);
    static result r, rp, r2;
    if (!run("", false, false, &r))
        return;
    CHECK(r.info.cpu_parts == 1 && r.info.part_nodes == 11, "expected one cpu partition of 11 nodes, got %zu (%u nodes)",
          r.info.cpu_parts, r.info.part_nodes);
    compare("y", r.y, r_y, m_y, CY * PH * PW, false);
    compare("g", r.g, r_g, m_g, CY, false);
    if (run("isa = portable\n", false, false, &rp))
        CHECK(!memcmp(rp.y, r.y, sizeof r.y), "isa = portable differs from the default path");
    if (run("threads = 2\n", false, false, &r2))
        CHECK(!memcmp(r2.y, r.y, sizeof r.y), "threads = 2 differs from threads = 1");
}

static void test_taps(void)
{
    make_data(false);
    static result r;
    if (!run("", true, false, &r))
        return;
    CHECK(r.info.cpu_parts == 1 && r.info.part_nodes == 11, "taps: expected one cpu partition of 11 nodes, got %zu (%u)",
          r.info.cpu_parts, r.info.part_nodes);
    CHECK(r.mask_all_true, "taps: the Dropout mask is not all true");
    compare("y", r.y, r_y, m_y, CY * PH * PW, false);
    compare("g", r.g, r_g, m_g, CY, false);
    compare("s", r.s, r_s, m_s, CS * HH * WW, false);
    compare("c", r.c, r_c, m_c, CC * HH * WW, false);
}

static void test_off(void)
{
    make_data(false);
    static result r;
    if (!run("fuse_bn = false\nfuse_activation = false\nnhwc_chains = false\n", true, false, &r))
        return;
    CHECK(r.info.cpu_parts == 0, "optimizations off: %zu cpu partitions", r.info.cpu_parts);
    CHECK(r.info.cpu_nodes == 11, "optimizations off: %zu of 11 nodes on cpu", r.info.cpu_nodes);
    CHECK(r.mask_all_true, "optimizations off: the Dropout mask is not all true");
    compare("y (off)", r.y, r_y, m_y, CY * PH * PW, false);
    compare("g (off)", r.g, r_g, m_g, CY, false);
    compare("c (off)", r.c, r_c, m_c, CC * HH * WW, false);
}

static void test_f16(void)
{
    make_data(true);
    static result r, rp;
    if (!run("", true, true, &r))
        return;
    CHECK(r.info.cpu_parts == 1 && r.info.part_nodes == 11, "fp16: expected one cpu partition of 11 nodes, got %zu (%u)",
          r.info.cpu_parts, r.info.part_nodes);
    compare("fp16 g", r.g, r_g, m_g, CY, true);
    compare("fp16 y", r.y, r_y, m_y, CY * PH * PW, true);
    compare("fp16 c", r.c, r_c, m_c, CC * HH * WW, true);
    if (run("isa = portable\n", true, true, &rp))
        CHECK(!memcmp(rp.y, r.y, sizeof r.y) && !memcmp(rp.c, r.c, sizeof r.c),
              "fp16: isa = portable differs from the default path");
}

int main(void)
{
    PT_RUN(test_fused);
    PT_RUN(test_taps);
    PT_RUN(test_off);
    PT_RUN(test_f16);
    return pt_result();
}
