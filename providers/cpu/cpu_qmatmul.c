/*
 * QMatMul (switchyard.quant: what the QDQ pass folds DequantizeLinear ->
 * MatMul/Gemm [-> Relu/Clip] -> QuantizeLinear into) on 8-bit codes.
 *
 * cpu_ref's QMatMul (plugins/ops_quant/qgemm.c) repacks B into int16
 * columns on every run, element by element, which for one-row products
 * (an LLM's decode step, a classifier's Gemm) costs as much as the product
 * itself, and B is often the KV cache, a new tensor each step. Here B is
 * read where it lies: with B as [K, N] the row of A is applied one k at a
 * time to a contiguous row of B (acc[j] += a_k * b[k][j], a loop compilers
 * vectorize), with B transposed ([N, K], Gemm's transB) each output is a dot
 * product of two contiguous rows. B's zero point comes out of the sum as
 * bz_j * sum_k a_k. The accumulators wrap modulo 2^32 as cpu_ref's do and
 * the requantization is the SDK's (sy_rq_init / sy_rq_apply_n with cpu_ref's
 * multiplier s_a * s_b / s_y in float), so the output codes are cpu_ref's,
 * whatever the requantization form the node names.
 */
#include "cpu.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define H cpu_host
#define ERR(code, ...) H->status_new((code), __VA_ARGS__)

typedef struct qmm_state {
    int trans_b;
    int64_t N;        /* columns of the output, fixed by B's constant parameters */
    int32_t az;       /* A's zero point */
    size_t rq_stride; /* 0: one requantizer; 1: one per column */
    sy_requant *rq;   /* [N] */
    int32_t *bias;    /* [N] int32 in the accumulator's scale */
    int32_t *bz;      /* [N] B's zero point per column */
} qmm_state;

/* input i of the node, NULL when absent */
static const sy_tensor *in_at(const sy_node *n, uint32_t i)
{
    return i < H->node_num_inputs(n) ? H->node_input(n, i) : NULL;
}

static bool const_f32(const sy_tensor *t, size_t want_max, size_t *count)
{
    if (!t || !t->data || t->dtype != SY_DT_FLOAT32)
        return false;
    size_t c = cpu_numel(t);
    if (c == 0 || c > want_max)
        return false;
    for (size_t i = 0; i < c; i++) {
        float v = ((const float *)t->data)[i];
        if (!isfinite(v) || !(v > 0.0f))
            return false;
    }
    *count = c;
    return true;
}

/* a constant zero point of the code's type with 1 or up to want_max values (absent: 0) */
static bool const_zp(const sy_tensor *t, sy_dtype dt, size_t want_max)
{
    if (!t)
        return true;
    size_t c = cpu_numel(t);
    return t->data && t->dtype == dt && c >= 1 && (c == 1 || c == want_max);
}

static int32_t zp_at(const sy_tensor *t, size_t i)
{
    if (!t)
        return 0;
    size_t c = cpu_numel(t);
    size_t k = c == 1 ? 0 : i;
    return t->dtype == SY_DT_INT8 ? ((const int8_t *)t->data)[k] : (int32_t)((const uint8_t *)t->data)[k];
}

/* the checks of qmm_accepts; N from B (constant parameters fix it) */
static bool qmm_check(const sy_node *n, int64_t *N_out, char *why, size_t len)
{
    /* a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp [, bias] */
    const sy_tensor *a = in_at(n, 0), *b = in_at(n, 3), *y = H->node_output(n, 0);
    sy_rq_mode mode;
    if (!cpu_q_rq_mode(n, &mode))
        return cpu_decline(why, len, "an unknown requant attribute (cpu_ref reports it)");
    if (!a || !b || !y || !cpu_is_q8(a->dtype) || !cpu_is_q8(b->dtype) || !cpu_is_q8(y->dtype))
        return cpu_decline(why, len, "8-bit A, B and output codes only");
    if (a->rank < 2 || b->rank < 2)
        return cpu_decline(why, len, "1-D operands (cpu_ref's integer kernel reports them)");
    bool tb = sy_attr_int_or(H, n, "transB", 0) != 0;
    int64_t N = tb ? b->dims[b->rank - 2] : b->dims[b->rank - 1];
    int64_t K = tb ? b->dims[b->rank - 1] : b->dims[b->rank - 2];
    if (N <= 0 || K <= 0 || a->dims[a->rank - 1] != K)
        return cpu_decline(why, len, "empty or mismatched operands (cpu_ref reports them)");
    size_t c;
    if (!const_f32(in_at(n, 1), 1, &c) || !const_f32(in_at(n, 6), 1, &c) ||
        !const_f32(in_at(n, 4), (size_t)N, &c) || (c != 1 && c != (size_t)N))
        return cpu_decline(why, len, "scales must be constant positive float32: A's and y's one, B's one or per column");
    if (!const_zp(in_at(n, 2), a->dtype, 1) || !const_zp(in_at(n, 5), b->dtype, (size_t)N) ||
        !const_zp(in_at(n, 7), y->dtype, 1))
        return cpu_decline(why, len, "zero points must be constants of their code's type (B's one or per column)");
    const sy_tensor *bias = in_at(n, 8);
    if (bias && (!bias->data || (bias->dtype != SY_DT_INT32 && bias->dtype != SY_DT_FLOAT32) ||
                 (cpu_numel(bias) != 1 && cpu_numel(bias) != (size_t)N)))
        return cpu_decline(why, len, "the bias must be a constant int32 or float32 with 1 or N values");
    *N_out = N;
    return true;
}

static bool qmm_accepts(const sy_node *n, char *why, size_t len)
{
    int64_t N;
    return qmm_check(n, &N, why, len);
}

static void qmm_release(void *state)
{
    qmm_state *s = state;
    if (!s)
        return;
    free(s->rq);
    free(s->bias);
    free(s->bz);
    free(s);
}

static sy_status *qmm_prepare(sy_node *n, void **state)
{
    char why[160] = "";
    int64_t N;
    if (!qmm_check(n, &N, why, sizeof why))
        return ERR(SY_ERR_UNSUPPORTED, "%s", why);
    sy_rq_mode mode;
    (void)cpu_q_rq_mode(n, &mode);
    const sy_tensor *bs = in_at(n, 4), *bzt = in_at(n, 5), *y = H->node_output(n, 0);
    const sy_tensor *bias = in_at(n, 8);
    qmm_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->trans_b = sy_attr_int_or(H, n, "transB", 0) != 0;
    s->N = N;
    s->az = zp_at(in_at(n, 2), 0);
    s->rq = malloc((size_t)N * sizeof *s->rq);
    s->bias = malloc((size_t)N * sizeof *s->bias);
    s->bz = malloc((size_t)N * sizeof *s->bz);
    if (!s->rq || !s->bias || !s->bz) {
        qmm_release(s);
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    }
    float sa = *(const float *)in_at(n, 1)->data, sy = *(const float *)in_at(n, 6)->data;
    int32_t yz = zp_at(in_at(n, 7), 0), lo, hi;
    cpu_q_act_range(n, y->dtype, sy, yz, &lo, &hi); /* the fused activation */
    size_t nbs = cpu_numel(bs);
    s->rq_stride = nbs > 1 ? 1 : 0;
    for (int64_t j = 0; j < N; j++) {
        float sb = ((const float *)bs->data)[nbs > 1 ? (size_t)j : 0];
        float m = sa * sb; /* cpu_ref's multiplier: the product, then the quotient, in float */
        m = m / sy;
        sy_rq_init(&s->rq[j], mode, (double)m, yz, lo, hi);
        s->bz[j] = zp_at(bzt, (size_t)j);
        s->bias[j] = 0;
        if (!bias)
            continue;
        size_t bi = cpu_numel(bias) == 1 ? 0 : (size_t)j;
        if (bias->dtype == SY_DT_INT32) {
            s->bias[j] = ((const int32_t *)bias->data)[bi];
        } else { /* a float bias in the accumulator's scale s_a * s_b, rounded half to even */
            double v = sy_rq_round_even((double)((const float *)bias->data)[bi] / ((double)sa * (double)sb));
            s->bias[j] = v > INT32_MAX ? INT32_MAX : (v < INT32_MIN ? INT32_MIN : (int32_t)v);
        }
    }
    /* scratch: accumulators and codes of one output row */
    H->node_set_scratch(n, (size_t)N * 2 * sizeof(int32_t) + 64);
    *state = s;
    return NULL;
}

/* acc[j] += a * b[j], j < n, modulo 2^32 */
static void mac_row_s8(uint32_t *acc, int32_t a, const int8_t *b, int64_t n)
{
    for (int64_t j = 0; j < n; j++)
        acc[j] += (uint32_t)(a * (int32_t)b[j]);
}

static void mac_row_u8(uint32_t *acc, int32_t a, const uint8_t *b, int64_t n)
{
    for (int64_t j = 0; j < n; j++)
        acc[j] += (uint32_t)(a * (int32_t)b[j]);
}

/* sum_k (a[k] - az) * b[k] modulo 2^32 */
static uint32_t dot_codes(const void *a, sy_dtype adt, int32_t az, const void *b, sy_dtype bdt, int64_t k)
{
    uint32_t s = 0;
    if (adt == SY_DT_INT8 && bdt == SY_DT_INT8) {
        const int8_t *x = a, *w = b;
        for (int64_t i = 0; i < k; i++)
            s += (uint32_t)(((int32_t)x[i] - az) * (int32_t)w[i]);
    } else if (adt == SY_DT_UINT8 && bdt == SY_DT_UINT8) {
        const uint8_t *x = a, *w = b;
        for (int64_t i = 0; i < k; i++)
            s += (uint32_t)(((int32_t)x[i] - az) * (int32_t)w[i]);
    } else if (adt == SY_DT_UINT8) {
        const uint8_t *x = a;
        const int8_t *w = b;
        for (int64_t i = 0; i < k; i++)
            s += (uint32_t)(((int32_t)x[i] - az) * (int32_t)w[i]);
    } else {
        const int8_t *x = a;
        const uint8_t *w = b;
        for (int64_t i = 0; i < k; i++)
            s += (uint32_t)(((int32_t)x[i] - az) * (int32_t)w[i]);
    }
    return s;
}

static int32_t code_at(const void *p, sy_dtype dt, size_t i)
{
    return dt == SY_DT_INT8 ? ((const int8_t *)p)[i] : (int32_t)((const uint8_t *)p)[i];
}

/* element offsets (in matrices) of A and B for the batch index idx[] under broadcasting */
static void batch_offsets(const sy_tensor *a, const sy_tensor *b, int32_t rank, const int64_t *idx, int64_t *oa,
                          int64_t *ob)
{
    int64_t sa = 1, sb = 1;
    *oa = *ob = 0;
    for (int32_t i = rank - 3; i >= 0; i--) {
        int32_t ia = i - (rank - a->rank), ib = i - (rank - b->rank);
        if (ia >= 0) {
            if (a->dims[ia] > 1)
                *oa += idx[i] * sa;
            sa *= a->dims[ia];
        }
        if (ib >= 0) {
            if (b->dims[ib] > 1)
                *ob += idx[i] * sb;
            sb *= b->dims[ib];
        }
    }
}

static sy_status *qmm_run(void *state, const sy_kernel_io *io)
{
    const qmm_state *s = state;
    const sy_tensor *a = io->inputs[0], *b = io->inputs[3];
    sy_tensor *y = io->outputs[0];
    int64_t M = a->dims[a->rank - 2], K = a->dims[a->rank - 1], N = s->N;
    int64_t kb = s->trans_b ? b->dims[b->rank - 1] : b->dims[b->rank - 2];
    int64_t nb = s->trans_b ? b->dims[b->rank - 2] : b->dims[b->rank - 1];
    if (kb != K || nb != N || y->rank < 2 || y->dims[y->rank - 1] != N || y->dims[y->rank - 2] != M)
        return ERR(SY_ERR_SHAPE, "QMatMul '%s': A [.., %lld, %lld], B's K %lld and N %lld, output N %lld differ",
                   y->name ? y->name : "?", (long long)M, (long long)K, (long long)kb, (long long)nb, (long long)N);
    int32_t rank = y->rank;
    int64_t batch = 1;
    for (int32_t i = 0; i < rank - 2; i++)
        batch *= y->dims[i];
    uint32_t *acc = io->scratch;
    int32_t *codes = (int32_t *)(acc + N);
    int64_t idx[SY_MAX_RANK] = {0};
    for (int64_t bt = 0; bt < batch; bt++) {
        int64_t oa, ob;
        batch_offsets(a, b, rank, idx, &oa, &ob);
        size_t a0 = (size_t)(oa * M * K), b0 = (size_t)(ob * K * N);
        for (int64_t m = 0; m < M; m++) {
            size_t am = a0 + (size_t)(m * K);
            const uint8_t *arow = (const uint8_t *)a->data + am;
            if (s->trans_b) {
                for (int64_t j = 0; j < N; j++) {
                    const uint8_t *brow = (const uint8_t *)b->data + b0 + (size_t)(j * K);
                    acc[j] = (uint32_t)s->bias[j] + dot_codes(arow, a->dtype, s->az, brow, b->dtype, K);
                }
            } else {
                for (int64_t j = 0; j < N; j++)
                    acc[j] = (uint32_t)s->bias[j];
                for (int64_t k = 0; k < K; k++) {
                    int32_t ak = code_at(a->data, a->dtype, am + (size_t)k) - s->az;
                    if (ak == 0)
                        continue;
                    const uint8_t *brow = (const uint8_t *)b->data + b0 + (size_t)(k * N);
                    if (b->dtype == SY_DT_INT8)
                        mac_row_s8(acc, ak, (const int8_t *)brow, N);
                    else
                        mac_row_u8(acc, ak, brow, N);
                }
            }
            /* B's zero point: - bz_j * sum_k (a_k - az) */
            uint32_t sum_a = 0;
            for (int64_t k = 0; k < K; k++)
                sum_a += (uint32_t)(code_at(a->data, a->dtype, am + (size_t)k) - s->az);
            for (int64_t j = 0; j < N; j++)
                acc[j] -= (uint32_t)s->bz[j] * sum_a;
            sy_rq_apply_n(s->rq, s->rq_stride, (const int32_t *)acc, codes, (size_t)N);
            size_t yo = (size_t)((bt * M + m) * N);
            if (y->dtype == SY_DT_INT8)
                for (int64_t j = 0; j < N; j++)
                    ((int8_t *)y->data)[yo + (size_t)j] = (int8_t)codes[j];
            else
                for (int64_t j = 0; j < N; j++)
                    ((uint8_t *)y->data)[yo + (size_t)j] = (uint8_t)codes[j];
        }
        for (int32_t i = rank - 3; i >= 0; i--) {
            if (++idx[i] < y->dims[i])
                break;
            idx[i] = 0;
        }
    }
    return NULL;
}

#define Q8 (SY_DT_BIT(SY_DT_INT8) | SY_DT_BIT(SY_DT_UINT8))
static const sy_kernel_def qmm_kernels[] = {
    {sizeof(sy_kernel_def), "switchyard.quant", "QMatMul", 1, 0, "cpu", Q8, 0, 0u, qmm_accepts, qmm_prepare, qmm_run,
     qmm_release, NULL},
};

sy_status *cpu_qmatmul_register(const sy_host_api *host, sy_plugin *p)
{
    for (uint32_t i = 0; i < SY_COUNT_OF(qmm_kernels); i++)
        SY_TRY(host->register_kernel(p, &qmm_kernels[i]));
    return NULL;
}
