/*
 * MaxPool on the cpu provider against the definition written out here (the
 * largest input value in each window, padding skipped, ceil_mode rounding
 * the output size up):
 *   - inside a fused chain, Conv -> Relu -> MaxPool(3x3, stride 2, ceil_mode)
 *     -> Conv 1x1: one cpu partition of 4 nodes, XNNPACK's NHWC max pooling
 *   - alone, fp32 and fp16 storage, with begin padding and ceil_mode: the
 *     direct kernel, equal value for value
 */
#include "cpu_test_common.h"
#include "pt_common.h"
#include "switchyard/sy_sdk.h"

#include <math.h>

#define CHECK PT_CHECK

static uint32_t lcg = 99u;
static float rnd(void) { return cpu_rnd(&lcg); }

static sy_env *env_cpu(void)
{
    return cpu_env("ops_nn ops_activation", "cpu", "");
}

/* max over a k x k window, stride s, begin pads pt/pl, of one plane */
static void maxpool_ref(const double *in, int h, int w, int k, int s, int pt, int pl, int oh, int ow, double *out)
{
    for (int oy = 0; oy < oh; oy++)
        for (int ox = 0; ox < ow; ox++) {
            double m = -INFINITY;
            for (int ky = 0; ky < k; ky++)
                for (int kx = 0; kx < k; kx++) {
                    int iy = oy * s - pt + ky, ix = ox * s - pl + kx;
                    if (iy >= 0 && iy < h && ix >= 0 && ix < w && in[iy * w + ix] > m)
                        m = in[iy * w + ix];
                }
            out[oy * ow + ox] = m;
        }
}

static bool run(sy_env *env, pt_model *pm, const void *x, size_t xbytes, sy_dtype dt, const int64_t *xd, void *y,
                size_t ybytes, size_t *parts, uint32_t *part_nodes, const char **maxpool_on)
{
    sy_model *model = pt_load(env, pm);
    sy_session *s = NULL;
    sy_session_options so = {.struct_size = sizeof so, .threads = 1, .strict = -1};
    sy_status *st = model ? sy_session_create(env, model, &so, &s) : NULL;
    CHECK(!st, "session: %s", pt_msg(st));
    bool ok = false;
    static char prov[16];
    if (s) {
        sy_tensor t = pt_tensor_f32((float *)(uintptr_t)x, 4, xd);
        t.dtype = dt;
        t.nbytes = xbytes;
        st = sy_session_set_input(s, "x", &t, SY_INPUT_COPY);
        if (!st)
            st = sy_session_run(s);
        const sy_tensor *out = NULL;
        if (!st)
            st = sy_session_get_output(s, 0, &out);
        CHECK(!st && out && out->nbytes == ybytes, "run: %s", pt_msg(st));
        if (out && out->nbytes == ybytes) {
            memcpy(y, out->data, ybytes);
            ok = true;
        }
        *parts = 0;
        *part_nodes = 0;
        for (size_t i = 0; i < sy_session_partition_count(s); i++) {
            const char *p = NULL;
            uint32_t nn = 0;
            bool compiled = false, cached = false;
            if (sy_session_partition_info(s, i, &p, &nn, &compiled, &cached) && p && !strcmp(p, "cpu") && compiled) {
                (*parts)++;
                *part_nodes += nn;
            }
        }
        sy_node_placement pl = {.struct_size = sizeof pl};
        for (size_t i = 0; i < sy_session_node_count(s); i++)
            if (sy_session_node_placement(s, i, &pl) && !strcmp(pl.op, "MaxPool"))
                snprintf(prov, sizeof prov, "%s", pl.provider ? pl.provider : "?");
        *maxpool_on = prov;
        sy_session_release(s);
    }
    sy_model_release(model);
    return ok;
}

enum { C0 = 3, HH = 13, WW = 12, C1 = 8, C2 = 4, PK = 3, PS = 2 };
#define POH ((HH - PK + PS - 1) / PS + 1) /* ceil((13 - 3) / 2) + 1 = 6 */
#define POW ((WW - PK + PS - 1) / PS + 1) /* ceil((12 - 3) / 2) + 1 = 6 */

static void test_in_chain(void)
{
    static float x[C0 * HH * WW], w1[C1 * C0 * 9], b1[C1], w2[C2 * C1], y[C2 * POH * POW];
    for (size_t i = 0; i < sizeof x / 4; i++)
        x[i] = rnd();
    for (size_t i = 0; i < sizeof w1 / 4; i++)
        w1[i] = rnd();
    for (size_t i = 0; i < C1; i++)
        b1[i] = rnd();
    for (size_t i = 0; i < sizeof w2 / 4; i++)
        w2[i] = rnd();
    /* reference: conv 3x3 pad 1, relu, maxpool, conv 1x1 */
    static double t[C1 * HH * WW], tm[C1 * HH * WW], p[C1 * POH * POW], pm_[C1 * POH * POW], ref[C2 * POH * POW],
        mag[C2 * POH * POW];
    for (int m = 0; m < C1; m++)
        for (int oy = 0; oy < HH; oy++)
            for (int ox = 0; ox < WW; ox++) {
                double acc = b1[m], a = fabs(b1[m]);
                for (int c = 0; c < C0; c++)
                    for (int ky = 0; ky < 3; ky++)
                        for (int kx = 0; kx < 3; kx++) {
                            int iy = oy - 1 + ky, ix = ox - 1 + kx;
                            if (iy < 0 || iy >= HH || ix < 0 || ix >= WW)
                                continue;
                            double v = (double)x[(c * HH + iy) * WW + ix] * w1[((m * C0 + c) * 3 + ky) * 3 + kx];
                            acc += v;
                            a += fabs(v);
                        }
                t[(m * HH + oy) * WW + ox] = acc > 0 ? acc : 0;
                tm[(m * HH + oy) * WW + ox] = a;
            }
    for (int m = 0; m < C1; m++) {
        maxpool_ref(t + m * HH * WW, HH, WW, PK, PS, 0, 0, POH, POW, p + m * POH * POW);
        maxpool_ref(tm + m * HH * WW, HH, WW, PK, PS, 0, 0, POH, POW, pm_ + m * POH * POW); /* a bound */
    }
    for (int o = 0; o < C2; o++)
        for (int i = 0; i < POH * POW; i++) {
            double acc = 0, a = 0;
            for (int c = 0; c < C1; c++) {
                acc += p[c * POH * POW + i] * w2[o * C1 + c];
                a += pm_[c * POH * POW + i] * fabs((double)w2[o * C1 + c]);
            }
            ref[o * POH * POW + i] = acc;
            mag[o * POH * POW + i] = a;
        }
    pt_model *pmod = pt_model_new("chain_pool");
    pt_input(pmod, "x", PT_F32, 4, (int64_t[]){1, C0, HH, WW});
    pt_init_f32(pmod, "w1", 4, (int64_t[]){C1, C0, 3, 3}, w1);
    pt_init_f32(pmod, "b1", 1, (int64_t[]){C1}, b1);
    pt_init_f32(pmod, "w2", 4, (int64_t[]){C2, C1, 1, 1}, w2);
    pt_node(pmod, "Conv", "conv1", (const char *[]){"x", "w1", "b1", NULL}, (const char *[]){"t1", NULL});
    pt_attr_ints(pmod, "pads", 4, (int64_t[]){1, 1, 1, 1});
    pt_node(pmod, "Relu", "relu", (const char *[]){"t1", NULL}, (const char *[]){"t2", NULL});
    pt_node(pmod, "MaxPool", "pool", (const char *[]){"t2", NULL}, (const char *[]){"t3", NULL});
    pt_attr_ints(pmod, "kernel_shape", 2, (int64_t[]){PK, PK});
    pt_attr_ints(pmod, "strides", 2, (int64_t[]){PS, PS});
    pt_attr_int(pmod, "ceil_mode", 1);
    pt_node(pmod, "Conv", "conv2", (const char *[]){"t3", "w2", NULL}, (const char *[]){"y", NULL});
    pt_output(pmod, "y", PT_F32, 4, (int64_t[]){1, C2, POH, POW});
    sy_env *env = env_cpu();
    size_t parts = 0;
    uint32_t nn = 0;
    const char *on = "?";
    if (env && run(env, pmod, x, sizeof x, SY_DT_FLOAT32, (int64_t[]){1, C0, HH, WW}, y, sizeof y, &parts, &nn, &on)) {
        CHECK(parts == 1 && nn == 4, "expected one cpu partition of 4 nodes, got %zu (%u)", parts, nn);
        int bad = 0;
        for (int i = 0; i < C2 * POH * POW; i++)
            if (fabs(y[i] - ref[i]) > 1e-5 * mag[i] + 1e-6 && bad++ < 3)
                CHECK(false, "y[%d] = %.9g, reference %.9g", i, y[i], ref[i]);
        CHECK(bad == 0, "%d outputs off", bad);
    }
    sy_env_release(env);
    pt_model_free(pmod);
}

static void test_alone(bool f16)
{
    enum { C = 5, IH = 9, IW = 10, K = 2, S = 2, PT = 1, PL = 1 };
    int oh = (IH + PT - K + S - 1) / S + 1, ow = (IW + PL - K + S - 1) / S + 1; /* ceil_mode */
    float x[C * IH * IW];
    uint16_t x16[C * IH * IW];
    double xd[C * IH * IW], ref[C * 8 * 8];
    for (int i = 0; i < C * IH * IW; i++) {
        x[i] = rnd();
        x16[i] = sy_f32_to_f16(x[i]);
        xd[i] = f16 ? sy_f16_to_f32(x16[i]) : x[i];
    }
    for (int c = 0; c < C; c++)
        maxpool_ref(xd + c * IH * IW, IH, IW, K, S, PT, PL, oh, ow, ref + c * oh * ow);
    int el = f16 ? PT_F16 : PT_F32;
    pt_model *pm = pt_model_new("pool_alone");
    pt_input(pm, "x", el, 4, (int64_t[]){1, C, IH, IW});
    pt_node(pm, "MaxPool", "pool", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    pt_attr_ints(pm, "kernel_shape", 2, (int64_t[]){K, K});
    pt_attr_ints(pm, "strides", 2, (int64_t[]){S, S});
    pt_attr_ints(pm, "pads", 4, (int64_t[]){PT, PL, 0, 0});
    pt_attr_int(pm, "ceil_mode", 1);
    pt_output(pm, "y", el, 4, (int64_t[]){1, C, oh, ow});
    sy_env *env = env_cpu();
    float y[C * 8 * 8];
    uint16_t y16[C * 8 * 8];
    size_t parts, n = (size_t)(C * oh * ow);
    uint32_t nn;
    const char *on = "?";
    if (env && run(env, pm, f16 ? (const void *)x16 : (const void *)x, sizeof x / (f16 ? 2 : 1),
                   f16 ? SY_DT_FLOAT16 : SY_DT_FLOAT32, (int64_t[]){1, C, IH, IW}, f16 ? (void *)y16 : (void *)y,
                   n * (f16 ? 2 : 4), &parts, &nn, &on)) {
        CHECK(!strcmp(on, "cpu"), "MaxPool on %s", on);
        int bad = 0;
        for (size_t i = 0; i < n; i++) {
            double got = f16 ? sy_f16_to_f32(y16[i]) : y[i];
            if (got != ref[i] && bad++ < 3)
                CHECK(false, "%s y[%zu] = %.9g, reference %.9g", f16 ? "fp16" : "fp32", i, got, ref[i]);
        }
        CHECK(bad == 0, "%d outputs off", bad);
    }
    sy_env_release(env);
    pt_model_free(pm);
}

static void test_alone_f32(void) { test_alone(false); }
static void test_alone_f16(void) { test_alone(true); }

int main(void)
{
    PT_RUN(test_in_chain);
    PT_RUN(test_alone_f32);
    PT_RUN(test_alone_f16);
    return pt_result();
}
