/*
 * The cpu provider's QMaxPool (the QDQ pass folds DequantizeLinear ->
 * MaxPool -> QuantizeLinear into it) against the ONNX formula written out
 * here, on every output: over the window's cells inside the input,
 *   y's parameters equal x's      y = max q
 *   any other                     y = sat(round_half_even((max q - z_x) * (s_x / s_y)) + z_y)
 * (the maximum of the dequantized values is the dequantized maximum: s_x > 0)
 * with s_x / s_y in double. int8 and uint8; strides, pads, dilations and
 * ceil_mode (windows that pass the input's end); codes covering the whole
 * range; the node on `cpu`.
 */
#include "cpu_test_q.h"
#include "cpu_test_common.h"
#include "pt_common.h"
#include "switchyard/sy_sdk.h"

#define CHECK PT_CHECK

typedef struct pcase {
    const char *name;
    bool u8, same;
    int64_t c, ih, iw, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
    bool ceil;
} pcase;

static int64_t out_len(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1, bool ceil)
{
    int64_t span = in + p0 + p1 - ((k - 1) * d + 1);
    return (ceil ? (span + s - 1) / s : span / s) + 1;
}

static void run(sy_env *env, const pcase *c)
{
    int elem = c->u8 ? ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 : PT_I8;
    int32_t lo = c->u8 ? 0 : -128, hi = c->u8 ? 255 : 127;
    float sx = 0.037f, sy = c->same ? sx : 0.052f;
    int32_t zxv = c->u8 ? 121 : -7, zyv = c->same ? zxv : (c->u8 ? 98 : 11);
    uint8_t zx = (uint8_t)zxv, zy = (uint8_t)zyv;
    int64_t oh = out_len(c->ih, c->kh, c->sh, c->dh, c->pt, c->pb, c->ceil);
    int64_t ow = out_len(c->iw, c->kw, c->sw, c->dw, c->pl, c->pr, c->ceil);
    int64_t xd[4] = {1, c->c, c->ih, c->iw}, yd[4] = {1, c->c, oh, ow};
    size_t nx = (size_t)(c->c * c->ih * c->iw), ny = (size_t)(c->c * oh * ow);
    uint8_t *x = malloc(nx);
    for (size_t e = 0; e < nx; e++) /* every byte value, in no order */
        x[e] = (uint8_t)(e * 73u + e / 7u);
    pt_model *pm = pt_model_new("QMaxPool");
    pt_input(pm, "x", elem, 4, xd);
    pt_init_f32(pm, "sx", 0, (int64_t[]){1}, &sx);
    pt_init_raw(pm, "zx", elem, 0, (int64_t[]){1}, &zx, 1);
    pt_init_f32(pm, "sy", 0, (int64_t[]){1}, &sy);
    pt_init_raw(pm, "zy", elem, 0, (int64_t[]){1}, &zy, 1);
    pt_node(pm, "DequantizeLinear", "dq", (const char *[]){"x", "sx", "zx", NULL}, (const char *[]){"fx", NULL});
    pt_node(pm, "MaxPool", "pool", (const char *[]){"fx", NULL}, (const char *[]){"fy", NULL});
    pt_attr_ints(pm, "kernel_shape", 2, (int64_t[]){c->kh, c->kw});
    pt_attr_ints(pm, "strides", 2, (int64_t[]){c->sh, c->sw});
    pt_attr_ints(pm, "dilations", 2, (int64_t[]){c->dh, c->dw});
    pt_attr_ints(pm, "pads", 4, (int64_t[]){c->pt, c->pl, c->pb, c->pr});
    if (c->ceil)
        pt_attr_int(pm, "ceil_mode", 1);
    pt_node(pm, "QuantizeLinear", "q", (const char *[]){"fy", "sy", "zy", NULL}, (const char *[]){"y", NULL});
    pt_output(pm, "y", elem, 4, yd);
    sy_model *model = pt_load(env, pm);
    sy_session *s = NULL;
    sy_session_options so = {.struct_size = sizeof so, .threads = 1, .strict = -1};
    sy_status *st = model ? sy_session_create(env, model, &so, &s) : NULL;
    CHECK(model && !st, "%s: session: %s", c->name, pt_msg(st));
    if (s) {
        sy_tensor t = pt_tensor_f32(NULL, 4, xd);
        t.dtype = c->u8 ? SY_DT_UINT8 : SY_DT_INT8;
        t.data = x;
        t.nbytes = nx;
        st = sy_session_set_input(s, "x", &t, SY_INPUT_COPY);
    }
    if (s && !st)
        st = sy_session_run(s);
    const sy_tensor *out = NULL;
    if (s && !st)
        st = sy_session_get_output(s, 0, &out);
    CHECK(!s || (!st && out && out->nbytes == ny), "%s: run: %s", c->name, pt_msg(st));
    if (s && !st && out && out->nbytes == ny) {
        int bad = 0;
        double m = (double)sx / (double)sy;
        for (int64_t ch = 0; ch < c->c; ch++)
            for (int64_t y = 0; y < oh; y++)
                for (int64_t xo = 0; xo < ow; xo++) {
                    int32_t best = INT32_MIN;
                    for (int64_t a = 0; a < c->kh; a++)
                        for (int64_t b = 0; b < c->kw; b++) {
                            int64_t iy = y * c->sh - c->pt + a * c->dh, ix = xo * c->sw - c->pl + b * c->dw;
                            if (iy < 0 || iy >= c->ih || ix < 0 || ix >= c->iw)
                                continue;
                            uint8_t v = x[(ch * c->ih + iy) * c->iw + ix];
                            int32_t q = c->u8 ? v : (int8_t)v;
                            best = q > best ? q : best;
                        }
                    int32_t want;
                    if (best == INT32_MIN) {
                        want = zyv; /* no cell inside (not reached by these cases) */
                    } else if (c->same) {
                        want = best;
                    } else {
                        double v = cq_round_even((double)(best - zxv) * m) + zyv;
                        want = v < lo ? lo : v > hi ? hi : (int32_t)v;
                    }
                    size_t e = (size_t)((ch * oh + y) * ow + xo);
                    int32_t got = c->u8 ? ((const uint8_t *)out->data)[e] : ((const int8_t *)out->data)[e];
                    if (got != want && bad++ < 3)
                        CHECK(false, "%s: y[%lld, %lld, %lld] = %d, formula %d", c->name, (long long)ch, (long long)y,
                              (long long)xo, got, want);
                }
        const char *prov = "?";
        sy_node_placement pl = {.struct_size = sizeof pl};
        for (size_t i = 0; i < sy_session_node_count(s); i++)
            if (sy_session_node_placement(s, i, &pl) && pl.op && !strcmp(pl.op, "QMaxPool") && pl.provider)
                prov = pl.provider;
        CHECK(!strcmp(prov, "cpu"), "%s: QMaxPool ran on %s, expected cpu", c->name, prov);
        CHECK(bad == 0, "%s: %d of %zu outputs off", c->name, bad, ny);
        printf("  %s: %zu outputs [%lld x %lld] on %s, %d off\n", c->name, ny, (long long)oh, (long long)ow, prov,
               bad);
    }
    sy_session_release(s);
    sy_model_release(model);
    pt_model_free(pm);
    free(x);
}

static void test_qmaxpool(void)
{
    static const pcase cases[] = {
        /* squeezenet's: 3x3 stride 2, ceil_mode (the last window passes the end), requantized */
        {"int8 3x3 s2 ceil", false, false, 5, 14, 15, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, true},
        {"uint8 3x3 s1 pads 1, same parameters", true, true, 4, 9, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false},
        {"int8 2x3 strides 1x2 dilations 2x1 pads 0 1 1 0", false, false, 3, 10, 13, 2, 3, 1, 2, 2, 1, 0, 1, 1, 0,
         false},
        {"uint8 2x2 s2 requantized", true, false, 6, 16, 16, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, false},
        {"int8 3x3 s2 pads 1 ceil, same parameters", false, true, 2, 7, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true},
        /* rows of 70 requantized through the table: a 64-byte step and a tail */
        {"uint8 3x3 s1 requantized, 70-wide rows", true, false, 2, 5, 72, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, false},
    };
    /* the default path (64-byte tables on an AVX-512 VBMI CPU) and the portable one */
    const char *isas[2] = {"", "[provider.cpu]\nisa = portable\n"};
    for (int p = 0; p < 2; p++) {
        sy_env *env = cpu_env("ops_quant ops_nn", "cpu, cpu_ref", isas[p]);
        for (size_t i = 0; env && i < SY_COUNT_OF(cases); i++)
            run(env, &cases[i]);
        sy_env_release(env);
    }
}

int main(void)
{
    PT_RUN(test_qmaxpool);
    return pt_result();
}
