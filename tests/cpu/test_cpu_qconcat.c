/*
 * The cpu provider's QConcat (the QDQ pass folds DequantizeLinear(x_i) ...
 * -> Concat -> QuantizeLinear into it) against the ONNX formula written out
 * here, on every output:
 *   an input with the output's scale and zero point   y = q
 *   any other                                         y = sat(round_half_even((q - z_x) * (s_x / s_y)) + z_y)
 * with s_x / s_y in double; int8 and uint8, the channel axis and the last
 * (axis -1), every code of each input, and the node on `cpu`.
 */
#include "cpu_test_q.h"
#include "cpu_test_common.h"
#include "pt_common.h"
#include "switchyard/sy_sdk.h"

#define CHECK PT_CHECK

static void run(sy_env *env, bool u8, int64_t axis)
{
    int elem = u8 ? ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 : PT_I8;
    int32_t lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
    /* three inputs [2, c_i, 7, 16] (axis 1: runs of 336, 224 and 448 codes, the
     * table path's 64-byte steps and tails) or [2, 3, 7, w_i] (axis -1); 256
     * elements or more each */
    const int64_t ext[3] = {3, 2, 4};
    float sx[3] = {0.05f, 0.013f, 0.021f}, sy = 0.021f;
    uint8_t zx[3], zy = u8 ? 128 : 0;
    zx[0] = u8 ? 100 : (uint8_t)(int8_t)-9;
    zx[1] = u8 ? 140 : 17;
    zx[2] = zy; /* input 2 has the output's parameters: copied */
    int64_t d[3][4], yd[4] = {2, 3, 7, 16};
    int32_t ax = axis < 0 ? 3 : 1;
    yd[ax] = 0;
    uint8_t *x[3];
    size_t nx[3];
    pt_model *pm = pt_model_new("Concat");
    const char *names[3] = {"a", "b", "c"}, *fnames[3] = {"fa", "fb", "fc"};
    char sn[3][8], zn[3][8];
    for (int i = 0; i < 3; i++) {
        int64_t base[4] = {2, 3, 7, 16};
        base[ax] = ext[i] * (axis < 0 ? 4 : 1);
        memcpy(d[i], base, sizeof base);
        yd[ax] += base[ax];
        nx[i] = (size_t)(base[0] * base[1] * base[2] * base[3]);
        x[i] = malloc(nx[i]);
        for (size_t e = 0; e < nx[i]; e++)
            x[i][e] = (uint8_t)(e * 7u + (size_t)i);
        pt_input(pm, names[i], elem, 4, d[i]);
        snprintf(sn[i], sizeof sn[i], "s%d", i);
        snprintf(zn[i], sizeof zn[i], "z%d", i);
        pt_init_f32(pm, sn[i], 0, (int64_t[]){1}, &sx[i]);
        pt_init_raw(pm, zn[i], elem, 0, (int64_t[]){1}, &zx[i], 1);
        pt_node(pm, "DequantizeLinear", fnames[i], (const char *[]){names[i], sn[i], zn[i], NULL},
                (const char *[]){fnames[i], NULL});
    }
    pt_init_f32(pm, "sy", 0, (int64_t[]){1}, &sy);
    pt_init_raw(pm, "zy", elem, 0, (int64_t[]){1}, &zy, 1);
    pt_node(pm, "Concat", "cat", (const char *[]){"fa", "fb", "fc", NULL}, (const char *[]){"fy", NULL});
    pt_attr_int(pm, "axis", axis);
    pt_node(pm, "QuantizeLinear", "q", (const char *[]){"fy", "sy", "zy", NULL}, (const char *[]){"y", NULL});
    pt_output(pm, "y", elem, 4, yd);
    sy_model *model = pt_load(env, pm);
    sy_session *s = NULL;
    sy_session_options so = {.struct_size = sizeof so, .threads = 1, .strict = -1};
    sy_status *st = model ? sy_session_create(env, model, &so, &s) : NULL;
    CHECK(model && !st, "session: %s", pt_msg(st));
    size_t ny = (size_t)(yd[0] * yd[1] * yd[2] * yd[3]);
    for (int i = 0; s && !st && i < 3; i++) {
        sy_tensor t = pt_tensor_f32(NULL, 4, d[i]);
        t.dtype = u8 ? SY_DT_UINT8 : SY_DT_INT8;
        t.data = x[i];
        t.nbytes = nx[i];
        st = sy_session_set_input(s, names[i], &t, SY_INPUT_COPY);
    }
    if (s && !st)
        st = sy_session_run(s);
    const sy_tensor *out = NULL;
    if (s && !st)
        st = sy_session_get_output(s, 0, &out);
    CHECK(!s || (!st && out && out->nbytes == ny), "run: %s", pt_msg(st));
    int bad = 0;
    if (s && !st && out && out->nbytes == ny) {
        int64_t outer = 1, yinner = 1;
        for (int32_t k = 0; k < ax; k++)
            outer *= yd[k];
        for (int32_t k = ax; k < 4; k++)
            yinner *= yd[k];
        int64_t off = 0;
        for (int i = 0; i < 3; i++) {
            int64_t inner = (int64_t)nx[i] / outer;
            double m = (double)sx[i] / (double)sy;
            int32_t zxi = u8 ? zx[i] : (int8_t)zx[i], zyv = u8 ? zy : (int8_t)zy;
            for (int64_t o = 0; o < outer; o++)
                for (int64_t j = 0; j < inner; j++) {
                    uint8_t c = x[i][o * inner + j];
                    int32_t q = u8 ? c : (int8_t)c, want;
                    if (i == 2) {
                        want = q;
                    } else {
                        double v = cq_round_even((double)(q - zxi) * m) + zyv;
                        want = v < lo ? lo : v > hi ? hi : (int32_t)v;
                    }
                    size_t e = (size_t)(o * yinner + off + j);
                    int32_t got = u8 ? ((const uint8_t *)out->data)[e] : ((const int8_t *)out->data)[e];
                    if (got != want && bad++ < 3)
                        CHECK(false, "input %d code %d: y %d, formula %d", i, q, got, want);
                }
            off += inner;
        }
        const char *prov = "?";
        sy_node_placement pl = {.struct_size = sizeof pl};
        for (size_t i = 0; i < sy_session_node_count(s); i++)
            if (sy_session_node_placement(s, i, &pl) && pl.op && !strcmp(pl.op, "QConcat") && pl.provider)
                prov = pl.provider;
        CHECK(!strcmp(prov, "cpu"), "QConcat ran on %s, expected cpu", prov);
        printf("  QConcat %s axis %lld: %zu outputs on %s, %d off\n", u8 ? "uint8" : "int8", (long long)axis, ny, prov,
               bad);
    }
    sy_session_release(s);
    sy_model_release(model);
    pt_model_free(pm);
    for (int i = 0; i < 3; i++)
        free(x[i]);
}

static void test_qconcat(void)
{
    /* the default path (64-byte tables on an AVX-512 VBMI CPU) and the portable one */
    const char *isas[2] = {"", "[provider.cpu]\nisa = portable\n"};
    for (int p = 0; p < 2; p++) {
        sy_env *env = cpu_env("ops_quant ops_tensor", "cpu, cpu_ref", isas[p]);
        for (int u = 0; env && u < 2; u++) {
            run(env, u, 1);
            run(env, u, -1);
        }
        sy_env_release(env);
    }
}

int main(void)
{
    PT_RUN(test_qconcat);
    return pt_result();
}
