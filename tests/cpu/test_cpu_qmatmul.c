/*
 * The cpu provider's QMatMul (the QDQ pass folds DequantizeLinear ->
 * MatMul/Gemm -> QuantizeLinear into it) against the integer formula written
 * out here, on every output:
 *   acc  = sum_k (a_k - za) * (b_kj - zb_j) + bias_j
 *          bias_j = round_half_even(C_j / (sa * sb_j)) for a float Gemm C
 *   y    = sat(round_half_even(acc * m_j) + zy),  m_j = (sa * sb_j) / sy in float
 * byte for byte: constant and runtime B (an LLM's weights and its KV cache),
 * int8 and uint8, per-tensor and per-column B parameters, batched and
 * broadcast 3-D/4-D operands, Gemm's transB with a float bias, and the node
 * on `cpu` (it must not fall back to cpu_ref).
 */
#include "cpu_test_q.h"
#include "cpu_test_common.h"
#include "pt_common.h"
#include "switchyard/sy_sdk.h"

#include <math.h>

#define CHECK PT_CHECK

typedef struct mm_case {
    const char *name;
    bool u8, b_const, per_col, gemm; /* gemm: Gemm transB = 1 with a float C */
    int32_t ra, rb;
    int64_t ad[4], bd[4]; /* A [.., M, K]; B [.., K, N] (gemm: [N, K]) */
} mm_case;

static uint32_t rng = 12345u;
static uint32_t next(void)
{
    rng = rng * 1664525u + 1013904223u;
    return rng >> 8;
}

static int64_t numel(const int64_t *d, int32_t r)
{
    int64_t n = 1;
    for (int32_t i = 0; i < r; i++)
        n *= d[i];
    return n;
}

static void run(sy_env *env, const mm_case *c)
{
    int elem = c->u8 ? ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 : PT_I8;
    int32_t lo = c->u8 ? 0 : -128, hi = c->u8 ? 255 : 127;
    int64_t M = c->ad[c->ra - 2], K = c->ad[c->ra - 1];
    int64_t N = c->gemm ? c->bd[0] : c->bd[c->rb - 1];
    /* output dims: broadcast batch, then M, N */
    int32_t ry = c->ra > c->rb ? c->ra : c->rb;
    int64_t yd[4];
    for (int32_t i = 0; i < ry - 2; i++) {
        int32_t ia = i - (ry - c->ra), ib = i - (ry - c->rb);
        int64_t da = ia >= 0 ? c->ad[ia] : 1, db = ib >= 0 ? c->bd[ib] : 1;
        yd[i] = da > db ? da : db;
    }
    yd[ry - 2] = M;
    yd[ry - 1] = N;
    size_t na = (size_t)numel(c->ad, c->ra), nb = (size_t)numel(c->bd, c->rb), ny = (size_t)numel(yd, ry);
    uint8_t *a = malloc(na), *b = malloc(nb);
    for (size_t i = 0; i < na; i++)
        a[i] = (uint8_t)next();
    for (size_t i = 0; i < nb; i++)
        b[i] = (uint8_t)next();
    float sa = 0.021f, sy = 0.37f, sb[64], cbias[64];
    uint8_t za = c->u8 ? 131 : (uint8_t)(int8_t)-7, zb[64], zy = c->u8 ? 120 : 4;
    size_t nbp = c->per_col ? (size_t)N : 1;
    for (size_t j = 0; j < nbp; j++) {
        sb[j] = 0.004f + 0.0007f * (float)j;
        zb[j] = c->u8 ? (uint8_t)(118 + j % 7) : (uint8_t)(int8_t)((int)(j % 5) - 2);
    }
    for (int64_t j = 0; j < N; j++)
        cbias[j] = 0.05f * (float)(j % 9) - 0.2f;
    pt_model *pm = pt_model_new(c->name);
    pt_input(pm, "a", elem, c->ra, c->ad);
    if (c->b_const)
        pt_init_raw(pm, "b", elem, c->rb, c->bd, b, nb);
    else
        pt_input(pm, "b", elem, c->rb, c->bd);
    pt_init_f32(pm, "sa", 0, (int64_t[]){1}, &sa);
    pt_init_f32(pm, "sy", 0, (int64_t[]){1}, &sy);
    pt_init_raw(pm, "za", elem, 0, (int64_t[]){1}, &za, 1);
    pt_init_raw(pm, "zy", elem, 0, (int64_t[]){1}, &zy, 1);
    if (c->per_col) {
        pt_init_f32(pm, "sb", 1, (int64_t[]){N}, sb);
        pt_init_raw(pm, "zb", elem, 1, (int64_t[]){N}, zb, (size_t)N);
    } else {
        pt_init_f32(pm, "sb", 0, (int64_t[]){1}, sb);
        pt_init_raw(pm, "zb", elem, 0, (int64_t[]){1}, zb, 1);
    }
    pt_node(pm, "DequantizeLinear", "dqa", (const char *[]){"a", "sa", "za", NULL}, (const char *[]){"fa", NULL});
    pt_node(pm, "DequantizeLinear", "dqb", (const char *[]){"b", "sb", "zb", NULL}, (const char *[]){"fb", NULL});
    if (c->per_col)
        pt_attr_int(pm, "axis", c->gemm ? 0 : c->rb - 1);
    if (c->gemm) {
        pt_init_f32(pm, "c", 1, (int64_t[]){N}, cbias);
        pt_node(pm, "Gemm", "op", (const char *[]){"fa", "fb", "c", NULL}, (const char *[]){"fy", NULL});
        pt_attr_int(pm, "transB", 1);
    } else {
        pt_node(pm, "MatMul", "op", (const char *[]){"fa", "fb", NULL}, (const char *[]){"fy", NULL});
    }
    pt_node(pm, "QuantizeLinear", "q", (const char *[]){"fy", "sy", "zy", NULL}, (const char *[]){"y", NULL});
    pt_output(pm, "y", elem, ry, yd);
    sy_model *model = pt_load(env, pm);
    sy_session *s = NULL;
    sy_session_options so = {.struct_size = sizeof so, .threads = 1, .strict = -1};
    sy_status *st = model ? sy_session_create(env, model, &so, &s) : NULL;
    CHECK(model && !st, "%s: session: %s", c->name, pt_msg(st));
    if (s) {
        sy_tensor ta = pt_tensor_f32(NULL, c->ra, c->ad), tb = pt_tensor_f32(NULL, c->rb, c->bd);
        ta.dtype = tb.dtype = c->u8 ? SY_DT_UINT8 : SY_DT_INT8;
        ta.data = a;
        ta.nbytes = na;
        tb.data = b;
        tb.nbytes = nb;
        st = sy_session_set_input(s, "a", &ta, SY_INPUT_COPY);
        if (!st && !c->b_const)
            st = sy_session_set_input(s, "b", &tb, SY_INPUT_COPY);
        if (!st)
            st = sy_session_run(s);
        const sy_tensor *out = NULL;
        if (!st)
            st = sy_session_get_output(s, 0, &out);
        CHECK(!st && out && out->nbytes == ny, "%s: run: %s", c->name, pt_msg(st));
        int bad = 0;
        int64_t idx[4] = {0};
        for (size_t e = 0; !st && out && out->nbytes == ny && e < ny; e++) {
            /* e -> index per output dim */
            size_t r = e;
            for (int32_t i = ry - 1; i >= 0; i--) {
                idx[i] = (int64_t)(r % (size_t)yd[i]);
                r /= (size_t)yd[i];
            }
            int64_t m = idx[ry - 2], j = idx[ry - 1];
            /* A's and B's element offsets of their matrices under broadcasting */
            size_t oa = 0, ob = 0;
            for (int32_t i = 0; i < ry - 2; i++) {
                int32_t ia = i - (ry - c->ra), ib = i - (ry - c->rb);
                if (ia >= 0)
                    oa = oa * (size_t)c->ad[ia] + (size_t)(c->ad[ia] > 1 ? idx[i] : 0);
                if (ib >= 0)
                    ob = ob * (size_t)c->bd[ib] + (size_t)(c->bd[ib] > 1 ? idx[i] : 0);
            }
            size_t pj = c->per_col ? (size_t)j : 0;
            int32_t zbj = c->u8 ? zb[pj] : (int8_t)zb[pj], zav = c->u8 ? za : (int8_t)za;
            int64_t acc = 0;
            for (int64_t k = 0; k < K; k++) {
                size_t ai = oa * (size_t)(M * K) + (size_t)(m * K + k);
                size_t bi = c->gemm ? (size_t)(j * K + k) : ob * (size_t)(K * N) + (size_t)(k * N + j);
                int32_t av = c->u8 ? a[ai] : (int8_t)a[ai], bv = c->u8 ? b[bi] : (int8_t)b[bi];
                acc += (int64_t)(av - zav) * (bv - zbj);
            }
            if (c->gemm)
                acc += (int64_t)cq_round_even((double)cbias[j] / ((double)sa * (double)sb[pj]));
            float mult = sa * sb[pj];
            mult = mult / sy;
            double v = cq_round_even((double)acc * (double)mult) + (c->u8 ? zy : (int8_t)zy);
            int32_t want = v < lo ? lo : v > hi ? hi : (int32_t)v;
            int32_t got = c->u8 ? ((const uint8_t *)out->data)[e] : ((const int8_t *)out->data)[e];
            if (got != want && bad++ < 3)
                CHECK(false, "%s: output %zu: %d, formula %d", c->name, e, got, want);
        }
        const char *prov = "?";
        sy_node_placement pl = {.struct_size = sizeof pl};
        for (size_t i = 0; i < sy_session_node_count(s); i++)
            if (sy_session_node_placement(s, i, &pl) && pl.op && !strcmp(pl.op, "QMatMul") && pl.provider)
                prov = pl.provider;
        CHECK(!strcmp(prov, "cpu"), "%s: QMatMul ran on %s, expected cpu", c->name, prov);
        printf("  %s: %zu outputs on %s, %d off\n", c->name, ny, prov, bad);
    }
    sy_session_release(s);
    sy_model_release(model);
    pt_model_free(pm);
    free(a);
    free(b);
}

static void test_qmatmul(void)
{
    sy_env *env = cpu_env("ops_quant ops_math ops_nn", "cpu, cpu_ref", "");
    static const mm_case cases[] = {
        {"int8 weights [64, 48] per column, one row", false, true, true, false, 2, 2, {1, 64}, {64, 48}},
        {"uint8 weights [37, 19], 5 rows", true, true, false, false, 2, 2, {5, 37}, {37, 19}},
        {"int8 KV-cache-like runtime B [2,3,8,40]", false, false, false, false, 4, 4, {2, 3, 1, 8}, {2, 3, 8, 40}},
        {"uint8 runtime B [2,3,40,8], 3 rows", true, false, false, false, 4, 4, {2, 3, 3, 40}, {2, 3, 40, 8}},
        {"int8 A [4,6,16] x broadcast B [16, 9]", false, false, false, false, 3, 2, {4, 6, 16}, {16, 9}},
        {"int8 A [6,16] x batched B [3,16,5]", false, false, false, false, 2, 3, {6, 16}, {3, 16, 5}},
        {"int8 Gemm transB [20, 33] per row, float C", false, true, true, true, 2, 2, {3, 33}, {20, 33}},
        {"uint8 Gemm transB [11, 29], float C", true, true, false, true, 2, 2, {2, 29}, {11, 29}},
    };
    for (size_t i = 0; env && i < sizeof cases / sizeof cases[0]; i++)
        run(env, &cases[i]);
    sy_env_release(env);
}

int main(void)
{
    PT_RUN(test_qmatmul);
    return pt_result();
}
