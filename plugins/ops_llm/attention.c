/*
 * ops_llm: fused LLM operators in the "switchyard.llm" domain, cpu_ref.
 *
 * CausalAttention (since 1): scaled dot-product attention over a KV cache
 * laid out as the LLM bundle contract (docs/llm.md) stores it, without
 * concatenating past and new entries and without touching masked columns.
 *   inputs  q        [Hkv, G, AR, hd]   queries (RoPE applied), G = heads per KV head
 *           k_new    [Hkv, 1, hd, AR]   this step's keys, transposed
 *           v_new    [Hkv, 1, AR, hd]   this step's values
 *           past_k   [Hkv, 1, hd, KV]   past keys, transposed (KV = CL - AR)
 *           past_v   [Hkv, 1, KV, hd]   past values
 *           mask     [1, 1, AR, CL]     additive; column c < KV is past column
 *                                        c, column KV + i is new entry i
 *   output  y        [Hkv, G, AR, hd]
 * Semantics: y = softmax(q K^T / sqrt(hd) + mask) V with K = concat(past_k,
 * k_new) and V = concat(past_v, v_new) along the CL axis, except that columns
 * whose mask is <= -1e4 are skipped (their softmax weight underflows to
 * exactly 0 in float for any realistic score; the bundle uses -1e9). A row
 * with no unmasked column yields zeros. The arithmetic follows the ONNX
 * graph it replaces (MatMul, Div, Add, Softmax with a double sum, MatMul)
 * operation by operation, so results match it bit for bit.
 */
#include "switchyard/sy_sdk.h"

#include <math.h>
#include <stdlib.h>

static const sy_host_api *H; /* process-wide: the same host table in every environment */

#define ERR(code, ...) H->status_new(code, __VA_ARGS__)
#define MASK_SKIP (-1e4f)

enum { IN_Q, IN_KN, IN_VN, IN_PK, IN_PV, IN_MASK, N_IN };

typedef struct att_state {
    int64_t Hkv, G, AR, hd, KV, CL;
} att_state;

static sy_status *check(const sy_node *n, att_state *s)
{
    const sy_tensor *t[N_IN];
    for (uint32_t i = 0; i < N_IN; i++) {
        SY_TRY(sy_need_input(H, n, i, &t[i]));
        if (t[i]->dtype != SY_DT_FLOAT32)
            return ERR(SY_ERR_TYPE, "CausalAttention: input %u is %s, not float32", i, sy_dt_name(t[i]->dtype));
        if (t[i]->rank != 4)
            return ERR(SY_ERR_SHAPE, "CausalAttention: input %u must be rank 4, got %d", i, (int)t[i]->rank);
    }
    const int64_t *q = t[IN_Q]->dims;
    s->Hkv = q[0];
    s->G = q[1];
    s->AR = q[2];
    s->hd = q[3];
    s->KV = t[IN_PK]->dims[3];
    s->CL = s->KV + s->AR;
    const int64_t want[N_IN][4] = {
        {s->Hkv, s->G, s->AR, s->hd}, {s->Hkv, 1, s->hd, s->AR}, {s->Hkv, 1, s->AR, s->hd},
        {s->Hkv, 1, s->hd, s->KV},    {s->Hkv, 1, s->KV, s->hd}, {1, 1, s->AR, s->CL},
    };
    static const char *const names[N_IN] = {"q", "k_new", "v_new", "past_k", "past_v", "mask"};
    for (int i = 0; i < N_IN; i++)
        for (int d = 0; d < 4; d++)
            if (t[i]->dims[d] != want[i][d])
                return ERR(SY_ERR_SHAPE,
                           "CausalAttention: %s must be [%lld,%lld,%lld,%lld] (q [Hkv,G,AR,hd], past_k [Hkv,1,hd,KV])",
                           names[i], (long long)want[i][0], (long long)want[i][1], (long long)want[i][2],
                           (long long)want[i][3]);
    return NULL;
}

static sy_status *infer_att(sy_node *n)
{
    att_state s;
    SY_TRY(check(n, &s));
    return H->node_set_output(n, 0, SY_DT_FLOAT32, 4, (const int64_t[]){s.Hkv, s.G, s.AR, s.hd});
}

static sy_status *prepare_att(sy_node *n, void **state)
{
    *state = NULL;
    att_state *s = malloc(sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "CausalAttention: out of memory");
    sy_status *st = check(n, s);
    if (st) {
        free(s);
        return st;
    }
    /* scratch: the runs of unmasked columns of one row and their scores */
    H->node_set_scratch(n, (size_t)s->CL * (2 * sizeof(int32_t) + sizeof(float)));
    *state = s;
    return NULL;
}

/* Runs of unmasked columns of one mask row, split at KV (past | new), as
 * (first, end) pairs; returns the number of runs. */
static int64_t mask_runs(const float *m, int64_t KV, int64_t CL, int32_t *runs)
{
    int64_t nr = 0;
    for (int64_t c = 0; c < CL;) {
        if (!(m[c] > MASK_SKIP)) {
            c++;
            continue;
        }
        int64_t c0 = c, lim = c < KV ? KV : CL;
        while (c < lim && m[c] > MASK_SKIP)
            c++;
        runs[2 * nr] = (int32_t)c0;
        runs[2 * nr + 1] = (int32_t)c;
        nr++;
    }
    return nr;
}

static sy_status *run_att(void *state, const sy_kernel_io *io)
{
    const att_state *s = state;
    const int64_t Hkv = s->Hkv, G = s->G, AR = s->AR, hd = s->hd, KV = s->KV, CL = s->CL;
    const float *q = io->inputs[IN_Q]->data, *kn = io->inputs[IN_KN]->data, *vn = io->inputs[IN_VN]->data;
    const float *pk = io->inputs[IN_PK]->data, *pv = io->inputs[IN_PV]->data, *mask = io->inputs[IN_MASK]->data;
    float *y = io->outputs[0]->data;
    int32_t *runs = io->scratch;
    float *sc = (float *)(runs + 2 * CL);
    const float div = sqrtf((float)hd);
    for (int64_t a = 0; a < AR; a++) {
        const float *m = mask + a * CL;
        int64_t nr = mask_runs(m, KV, CL, runs);
        for (int64_t h = 0; h < Hkv; h++) {
            const float *hpk = pk + h * hd * KV, *hkn = kn + h * hd * AR;
            const float *hpv = pv + h * KV * hd, *hvn = vn + h * AR * hd;
            for (int64_t g = 0; g < G; g++) {
                const float *qr = q + ((h * G + g) * AR + a) * hd;
                float *yr = y + ((h * G + g) * AR + a) * hd;
                for (int64_t d = 0; d < hd; d++)
                    yr[d] = 0.0f;
                if (!nr)
                    continue;
                /* scores: per column, the dot product in index order (as
                 * MatMul), computed a run of contiguous key columns at a time */
                float mx = -INFINITY;
                int64_t i = 0;
                for (int64_t r = 0; r < nr; r++) {
                    int64_t c0 = runs[2 * r], n = runs[2 * r + 1] - c0;
                    const float *kb = c0 < KV ? hpk + c0 : hkn + (c0 - KV);
                    int64_t ks = c0 < KV ? KV : AR;
                    float *restrict sr = sc + i;
                    for (int64_t j = 0; j < n; j++)
                        sr[j] = 0.0f;
                    for (int64_t d = 0; d < hd; d++) {
                        const float qd = qr[d], *restrict kr = kb + d * ks;
                        for (int64_t j = 0; j < n; j++)
                            sr[j] += qd * kr[j];
                    }
                    for (int64_t j = 0; j < n; j++) {
                        float v = sr[j] / div + m[c0 + j];
                        sr[j] = v;
                        if (v > mx || i + j == 0)
                            mx = v;
                    }
                    i += n;
                }
                double sum = 0;
                for (int64_t j = 0; j < i; j++) {
                    float e = expf(sc[j] - mx);
                    sum += e;
                    sc[j] = e;
                }
                float inv = (float)(1.0 / sum);
                i = 0;
                for (int64_t r = 0; r < nr; r++) {
                    int64_t c0 = runs[2 * r], n = runs[2 * r + 1] - c0;
                    const float *vb = c0 < KV ? hpv + c0 * hd : hvn + (c0 - KV) * hd;
                    for (int64_t j = 0; j < n; j++, i++) {
                        const float p = sc[i] * inv, *vr = vb + j * hd;
                        for (int64_t d = 0; d < hd; d++)
                            yr[d] += p * vr[d];
                    }
                }
            }
        }
    }
    return NULL;
}

static const sy_op_schema schemas[] = {
    {sizeof(sy_op_schema), "switchyard.llm", "CausalAttention", 1, N_IN, N_IN, 1, 1, SY_NO_ATTRS, infer_att,
     SY_NO_INPLACE, 0, "attention over a transposed-key KV cache plus this step's entries, masked columns skipped"},
};

static const sy_kernel_def kernels[] = {
    {sizeof(sy_kernel_def), "switchyard.llm", "CausalAttention", 1, 0, "cpu_ref", SY_DT_BIT(SY_DT_FLOAT32), 0, 0u, NULL,
     prepare_att, run_att, sy_release_free, NULL},
};

static sy_status *llm_ops_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}

static void llm_ops_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "ops_llm",
    .version = "0.1.0",
    .description = "fused LLM operators (switchyard.llm CausalAttention), cpu_ref",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = llm_ops_init,
    .fini = llm_ops_fini,
};

SY_PLUGIN_DEFINE(desc)
