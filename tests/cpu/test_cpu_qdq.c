/*
 * The cpu provider's QuantizeLinear / DequantizeLinear (per tensor, float32
 * <-> int8 / uint8) against the ONNX formulas written out here:
 *   q = saturate(round_half_even(x / scale) + zp)   (x / scale in float)
 *   y = (float)(q - zp) * scale
 * exactly, byte for byte, on random values and the edges (halves, values far
 * outside the range, +-inf, NaN -> the low end as cpu_ref does), on every
 * path (the best this CPU runs, plain C) and split over two threads on a
 * tensor large enough for the pool; per-axis scales go to cpu_ref.
 */
#include "cpu_test_q.h"
#include "cpu_test_common.h"
#include "pt_common.h"
#include "switchyard/sy_sdk.h"

#include <math.h>

#define CHECK PT_CHECK

static uint32_t lcg = 777u;
static float rndf(void)
{
    lcg = lcg * 1664525u + 1013904223u;
    return (float)((int32_t)(lcg >> 8) - (1 << 23)) / (float)(1 << 16); /* [-128, 128) */
}

static sy_env *env_with(const char *extra)
{
    return cpu_env("ops_quant", "cpu, cpu_ref", extra);
}

/* x [1, n] -> QuantizeLinear -> q -> DequantizeLinear -> y; both outputs checked */
static void run(sy_env *env, bool u8, size_t n, bool per_axis, const char *want)
{
    int elem = u8 ? ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 : PT_I8;
    int32_t lo = u8 ? 0 : -128, hi = u8 ? 255 : 127, zp = u8 ? 131 : -7;
    float scale = 0.37f;
    float *x = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        x[i] = rndf();
    /* the edges: exact halves of the scale, far outside, infinities, NaN */
    const float edge[] = {0.5f * scale, 1.5f * scale, -2.5f * scale, 1e30f, -1e30f, INFINITY, -INFINITY, NAN, 0.0f};
    for (size_t i = 0; i < sizeof edge / sizeof edge[0] && i < n; i++)
        x[i * 7 % n] = edge[i];
    pt_model *pm = pt_model_new("qdq");
    /* per axis: two rows, a scale and zero point per row (equal values, so the formula is the same) */
    int64_t rows = per_axis ? 2 : 1, dims[2] = {rows, (int64_t)n / rows};
    float scales[2] = {scale, scale};
    uint8_t zps[2] = {(uint8_t)zp, (uint8_t)zp};
    pt_input(pm, "x", PT_F32, 2, dims);
    pt_init_f32(pm, "s", per_axis ? 1 : 0, &rows, scales);
    pt_init_raw(pm, "z", elem, per_axis ? 1 : 0, &rows, zps, (size_t)rows);
    pt_node(pm, "QuantizeLinear", "q", (const char *[]){"x", "s", "z", NULL}, (const char *[]){"q", NULL});
    if (per_axis)
        pt_attr_int(pm, "axis", 0);
    pt_node(pm, "DequantizeLinear", "dq", (const char *[]){"q", "s", "z", NULL}, (const char *[]){"y", NULL});
    if (per_axis)
        pt_attr_int(pm, "axis", 0);
    pt_output(pm, "q", elem, 2, dims);
    pt_output(pm, "y", PT_F32, 2, dims);
    sy_model *model = pt_load(env, pm);
    sy_session *s = NULL;
    sy_session_options so = {.struct_size = sizeof so, .threads = 1, .strict = -1};
    sy_status *st = model ? sy_session_create(env, model, &so, &s) : NULL;
    CHECK(!st, "session: %s", pt_msg(st));
    if (s) {
        sy_tensor t = pt_tensor_f32(x, 2, dims);
        st = sy_session_set_input(s, "x", &t, SY_INPUT_COPY);
        if (!st)
            st = sy_session_run(s);
        const sy_tensor *oq = NULL, *oy = NULL;
        if (!st)
            st = sy_session_get_output(s, 0, &oq);
        if (!st)
            st = sy_session_get_output(s, 1, &oy);
        CHECK(!st && oq && oy && oq->nbytes == n && oy->nbytes == n * 4, "run: %s", pt_msg(st));
        int bad = 0;
        for (size_t i = 0; !st && oq && oy && i < n; i++) {
            float v = x[i] / scale;
            double r = cq_round_even((double)v) + zp;
            int32_t want_q = !(r >= lo) ? lo : r > hi ? hi : (int32_t)r;
            int32_t got_q = u8 ? ((const uint8_t *)oq->data)[i] : ((const int8_t *)oq->data)[i];
            float want_y = (float)(want_q - zp) * scale, got_y = ((const float *)oy->data)[i];
            if ((got_q != want_q || memcmp(&got_y, &want_y, 4)) && bad++ < 3)
                CHECK(false, "x[%zu] = %g: q %d (formula %d), y %g (formula %g)", i, (double)x[i], got_q, want_q,
                      (double)got_y, (double)want_y);
        }
        CHECK(bad == 0, "%d of %zu values off the formula", bad, n);
        sy_node_placement pl = {.struct_size = sizeof pl};
        for (size_t i = 0; i < sy_session_node_count(s); i++)
            if (sy_session_node_placement(s, i, &pl))
                CHECK(pl.provider && !strcmp(pl.provider, want), "%s on %s, expected %s", pl.op,
                      pl.provider ? pl.provider : "?", want);
        printf("  %s n=%zu%s: on %s, %d off\n", u8 ? "uint8" : "int8", n, per_axis ? " per axis" : "", want, bad);
    }
    sy_session_release(s);
    sy_model_release(model);
    pt_model_free(pm);
    free(x);
}

static void test_paths(void)
{
    const char *configs[] = {"", "[provider.cpu]\nisa = portable\n"};
    for (size_t c = 0; c < 2; c++) {
        sy_env *env = env_with(configs[c]);
        printf("  config: %s\n", c ? "isa = portable" : "(defaults)");
        for (int u = 0; env && u < 2; u++) {
            run(env, u, 1000003, false, "cpu");
            run(env, u, 5, false, "cpu");
        }
        sy_env_release(env);
    }
}

static void test_threads(void)
{
    sy_env *env = env_with("[provider.cpu]\nthreads = 2\n");
    if (env)
        run(env, false, (1u << 22) + 13, false, "cpu");
    sy_env_release(env);
}

static void test_per_axis_declined(void)
{
    sy_env *env = env_with("");
    if (env)
        run(env, true, 64, true, "cpu_ref");
    sy_env_release(env);
}

int main(void)
{
    PT_RUN(test_paths);
    PT_RUN(test_threads);
    PT_RUN(test_per_axis_declined);
    return pt_result();
}
