/*
 * The cpu provider's QSoftmax / QLogSoftmax (the QDQ pass folds
 * DequantizeLinear -> Softmax / LogSoftmax -> QuantizeLinear into them)
 * against the formulas written out here, on every output:
 *   d_k = (q_k - max) * s_x in float,  e_k = e^(d_k) rounded to float
 *   sum = e_0 + e_1 + ... in float, in k order
 *   softmax     y_k = sat(round_half_even((e_k / sum) / s_y) + z_y)
 *   logsoftmax  y_k = sat(round_half_even((d_k - log(sum)) / s_y) + z_y)
 * byte for byte; int8 and uint8, the last axis (an attention row of 512)
 * and an inner axis, and the node on `cpu` (not cpu_ref).
 */
#include "cpu_test_q.h"
#include "cpu_test_common.h"
#include "pt_common.h"
#include "switchyard/sy_sdk.h"

#include <math.h>

#define CHECK PT_CHECK

static uint32_t rng = 777u;
static uint32_t next(void)
{
    rng = rng * 1664525u + 1013904223u;
    return rng >> 8;
}

static void run(sy_env *env, bool u8, bool lg, int32_t rank, const int64_t *d, int64_t axis, float sx, float sy)
{
    int elem = u8 ? ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 : PT_I8;
    int32_t lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
    size_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= (size_t)d[i];
    uint8_t *x = malloc(n);
    for (size_t i = 0; i < n; i++)
        x[i] = (uint8_t)next();
    uint8_t zx = u8 ? 100 : 3, zy = lg ? (u8 ? 255 : 127) : (u8 ? 0 : (uint8_t)(int8_t)-128);
    const char *op = lg ? "LogSoftmax" : "Softmax";
    pt_model *pm = pt_model_new(op);
    pt_input(pm, "x", elem, rank, d);
    pt_init_f32(pm, "sx", 0, (int64_t[]){1}, &sx);
    pt_init_f32(pm, "sy", 0, (int64_t[]){1}, &sy);
    pt_init_raw(pm, "zx", elem, 0, (int64_t[]){1}, &zx, 1);
    pt_init_raw(pm, "zy", elem, 0, (int64_t[]){1}, &zy, 1);
    pt_node(pm, "DequantizeLinear", "dq", (const char *[]){"x", "sx", "zx", NULL}, (const char *[]){"fx", NULL});
    pt_node(pm, op, "op", (const char *[]){"fx", NULL}, (const char *[]){"fy", NULL});
    pt_attr_int(pm, "axis", axis);
    pt_node(pm, "QuantizeLinear", "q", (const char *[]){"fy", "sy", "zy", NULL}, (const char *[]){"y", NULL});
    pt_output(pm, "y", elem, rank, d);
    sy_model *model = pt_load(env, pm);
    sy_session *s = NULL;
    sy_session_options so = {.struct_size = sizeof so, .threads = 1, .strict = -1};
    sy_status *st = model ? sy_session_create(env, model, &so, &s) : NULL;
    CHECK(model && !st, "%s: session: %s", op, pt_msg(st));
    if (s) {
        sy_tensor tx = pt_tensor_f32(NULL, rank, d);
        tx.dtype = u8 ? SY_DT_UINT8 : SY_DT_INT8;
        tx.data = x;
        tx.nbytes = n;
        st = sy_session_set_input(s, "x", &tx, SY_INPUT_COPY);
        if (!st)
            st = sy_session_run(s);
        const sy_tensor *out = NULL;
        if (!st)
            st = sy_session_get_output(s, 0, &out);
        CHECK(!st && out && out->nbytes == n, "%s: run: %s", op, pt_msg(st));
        int bad = 0;
        int64_t ax = axis < 0 ? axis + rank : axis, len = d[ax], inner = 1;
        for (int32_t i = (int32_t)ax + 1; i < rank; i++)
            inner *= d[i];
        float *e = malloc((size_t)len * sizeof *e);
        for (size_t r = 0; !st && out && out->nbytes == n && r < n / (size_t)len; r++) {
            size_t base = (r / (size_t)inner) * (size_t)(len * inner) + r % (size_t)inner;
            int32_t mx = -1000;
            for (int64_t k = 0; k < len; k++) {
                uint8_t c = x[base + (size_t)(k * inner)];
                int32_t v = u8 ? c : (int8_t)c;
                mx = v > mx ? v : mx;
            }
            float sum = 0.0f;
            for (int64_t k = 0; k < len; k++) {
                uint8_t c = x[base + (size_t)(k * inner)];
                float dk = (float)((u8 ? c : (int8_t)c) - mx) * sx;
                e[k] = (float)exp((double)dk);
                sum += e[k];
            }
            for (int64_t k = 0; k < len; k++) {
                size_t i = base + (size_t)(k * inner);
                float dk = (float)((u8 ? x[i] : (int8_t)x[i]) - mx) * sx;
                float v = lg ? dk - (float)log((double)sum) : e[k] / sum;
                double q = cq_round_even((double)(v / sy)) + (u8 ? zy : (int8_t)zy);
                int32_t want = q < lo ? lo : q > hi ? hi : (int32_t)q;
                int32_t got = u8 ? ((const uint8_t *)out->data)[i] : ((const int8_t *)out->data)[i];
                if (got != want && bad++ < 3)
                    CHECK(false, "%s: output %zu: %d, formula %d", op, i, got, want);
            }
        }
        free(e);
        const char *prov = "?";
        sy_node_placement pl = {.struct_size = sizeof pl};
        for (size_t i = 0; i < sy_session_node_count(s); i++)
            if (sy_session_node_placement(s, i, &pl) && pl.op && strstr(pl.op, "Softmax") && pl.provider)
                prov = pl.provider;
        CHECK(!strcmp(prov, "cpu"), "%s: the folded node ran on %s, expected cpu", op, prov);
        printf("  Q%s %s, axis %lld of %d-D: %zu outputs on %s, %d off\n", op, u8 ? "uint8" : "int8", (long long)axis,
               rank, n, prov, bad);
    }
    sy_session_release(s);
    sy_model_release(model);
    pt_model_free(pm);
    free(x);
}

static void test_qsoftmax(void)
{
    sy_env *env = cpu_env("ops_quant ops_nn ops_activation", "cpu, cpu_ref", "");
    for (int u = 0; env && u < 2; u++) {
        run(env, u, false, 3, (int64_t[]){1, 8, 512}, -1, 0.043f, 1.0f / 256.0f);
        run(env, u, false, 3, (int64_t[]){3, 17, 5}, 1, 0.11f, 1.0f / 256.0f);
        run(env, u, true, 2, (int64_t[]){4, 300}, -1, 0.07f, 0.0625f);
    }
    sy_env_release(env);
}

int main(void)
{
    PT_RUN(test_qsoftmax);
    return pt_result();
}
