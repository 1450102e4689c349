/*
 * The cpu provider's QAdd / QSub / QMul (the QDQ pass folds
 * DequantizeLinear -> Add/Sub/Mul -> QuantizeLinear into them) against the
 * ONNX formulas written out here, on every pair of input codes:
 *   add/sub  y = sat(round_half_even(sa/sy * (a - za) +- sb/sy * (b - zb)) + zy)
 *   mul      y = sat(round_half_even((a - za) * (b - zb) * (sa * sb / sy)) + zy)
 * with the products and the sum in single precision (the form ops_quant
 * uses), byte for byte; int8 and uint8, a broadcast second input, and the
 * node on `cpu`.
 */
#include "cpu_test_q.h"
#include "cpu_test_common.h"
#include "pt_common.h"
#include "switchyard/sy_sdk.h"

#include <math.h>

#define CHECK PT_CHECK

static sy_env *env_with(const char *extra)
{
    return cpu_env("ops_quant ops_math", "cpu, cpu_ref", extra);
}

/* op: 'a' add, 's' sub, 'm' mul. bcast: b is one code [1, 1] */
static void run(sy_env *env, char op, bool u8, bool bcast)
{
    int elem = u8 ? ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 : PT_I8;
    int32_t lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
    int32_t za = u8 ? 121 : -5, zb = u8 ? 140 : 9, zy = u8 ? 128 : 3;
    float sa = 0.031f, sb = op == 'm' ? 0.017f : 0.045f, sy = op == 'm' ? 0.9f : 0.05f;
    size_t n = 65536, nb = bcast ? 1 : n;
    uint8_t *a = malloc(n), *b = malloc(nb);
    for (size_t i = 0; i < n; i++) {
        a[i] = (uint8_t)(i >> 8);
        if (!bcast)
            b[i] = (uint8_t)(i & 255u);
    }
    if (bcast)
        b[0] = 77;
    const char *name = op == 'a' ? "Add" : op == 's' ? "Sub" : "Mul";
    pt_model *pm = pt_model_new(name);
    pt_input(pm, "a", elem, 2, (int64_t[]){1, (int64_t)n});
    pt_input(pm, "b", elem, 2, (int64_t[]){1, (int64_t)nb});
    pt_init_f32(pm, "sa", 0, (int64_t[]){1}, &sa);
    pt_init_f32(pm, "sb", 0, (int64_t[]){1}, &sb);
    pt_init_f32(pm, "sy", 0, (int64_t[]){1}, &sy);
    pt_init_raw(pm, "za", elem, 0, (int64_t[]){1}, &(uint8_t){(uint8_t)za}, 1);
    pt_init_raw(pm, "zb", elem, 0, (int64_t[]){1}, &(uint8_t){(uint8_t)zb}, 1);
    pt_init_raw(pm, "zy", elem, 0, (int64_t[]){1}, &(uint8_t){(uint8_t)zy}, 1);
    pt_node(pm, "DequantizeLinear", "dqa", (const char *[]){"a", "sa", "za", NULL}, (const char *[]){"fa", NULL});
    pt_node(pm, "DequantizeLinear", "dqb", (const char *[]){"b", "sb", "zb", NULL}, (const char *[]){"fb", NULL});
    pt_node(pm, name, "op", (const char *[]){"fa", "fb", NULL}, (const char *[]){"fy", NULL});
    pt_node(pm, "QuantizeLinear", "q", (const char *[]){"fy", "sy", "zy", NULL}, (const char *[]){"y", NULL});
    pt_output(pm, "y", elem, 2, (int64_t[]){1, (int64_t)n});
    sy_model *model = pt_load(env, pm);
    sy_session *s = NULL;
    sy_session_options so = {.struct_size = sizeof so, .threads = 1, .strict = -1};
    sy_status *st = model ? sy_session_create(env, model, &so, &s) : NULL;
    CHECK(!st, "%s: session: %s", name, pt_msg(st));
    if (s) {
        sy_tensor ta = pt_tensor_f32(NULL, 2, (int64_t[]){1, (int64_t)n}), tb = ta;
        ta.dtype = tb.dtype = u8 ? SY_DT_UINT8 : SY_DT_INT8;
        ta.data = a;
        ta.nbytes = n;
        tb.dims[1] = (int64_t)nb;
        tb.data = b;
        tb.nbytes = nb;
        st = sy_session_set_input(s, "a", &ta, SY_INPUT_COPY);
        if (!st)
            st = sy_session_set_input(s, "b", &tb, SY_INPUT_COPY);
        if (!st)
            st = sy_session_run(s);
        const sy_tensor *out = NULL;
        if (!st)
            st = sy_session_get_output(s, 0, &out);
        CHECK(!st && out && out->nbytes == n, "%s: run: %s", name, pt_msg(st));
        int bad = 0;
        float ra = sa / sy, rb = sb / sy, rm = sa * sb / sy;
        for (size_t i = 0; !st && out && out->nbytes == n && i < n; i++) {
            int32_t av = u8 ? a[i] : (int8_t)a[i], bv = u8 ? b[bcast ? 0 : i] : (int8_t)b[bcast ? 0 : i];
            int32_t da = av - za, db = bv - zb;
            float v = op == 'm' ? (float)(da * db) * rm
                      : op == 's' ? ra * (float)da - rb * (float)db
                                  : ra * (float)da + rb * (float)db;
            double r = cq_round_even((double)v) + zy;
            int32_t want = r < lo ? lo : r > hi ? hi : (int32_t)r;
            int32_t got = u8 ? ((const uint8_t *)out->data)[i] : ((const int8_t *)out->data)[i];
            if (got != want && bad++ < 3)
                CHECK(false, "%s: a %d b %d: y %d, formula %d", name, av, bv, got, want);
        }
        const char *prov = "?";
        sy_node_placement pl = {.struct_size = sizeof pl};
        for (size_t i = 0; i < sy_session_node_count(s); i++)
            if (sy_session_node_placement(s, i, &pl) && pl.op && pl.op[0] == 'Q' && pl.op[1] != 'u' && pl.provider)
                prov = pl.provider;
        CHECK(!strcmp(prov, "cpu"), "%s: the folded node ran on %s, expected cpu", name, prov);
        printf("  %s %s%s: %zu outputs on %s, %d off\n", name, u8 ? "uint8" : "int8", bcast ? " broadcast" : "", n,
               prov, bad);
    }
    sy_session_release(s);
    sy_model_release(model);
    pt_model_free(pm);
    free(a);
    free(b);
}

static void test_ops(void)
{
    sy_env *env = env_with("");
    for (int u = 0; env && u < 2; u++) {
        run(env, 'a', u, false);
        run(env, 's', u, false);
        run(env, 'm', u, false);
        run(env, 'a', u, true);
    }
    sy_env_release(env);
}

int main(void)
{
    PT_RUN(test_ops);
    return pt_result();
}
