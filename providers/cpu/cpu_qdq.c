/*
 * QuantizeLinear and DequantizeLinear at the edges of a QDQ model's integer
 * part, float32 <-> int8 / uint8 with one constant scale and zero point (what
 * `switchyard quantize` writes around a graph's inputs and outputs). On
 * cpu_ref they go element by element through the general layout code (4 ms
 * for ultraface_rfb_320's 3 x 240 x 320 input); here one pass, 8 lanes at a
 * time on AVX2, split over the pool. The arithmetic is cpu_ref's, so the bytes are:
 *   quantize    y = sat(round_half_even(x / scale) + zp)   (the division in
 *               float; NaN -> the low end, as sy_rq_quantize)
 *   dequantize  y = (float)(q - zp) * scale
 * Clamping x / scale to [lo - zp, hi - zp] before rounding gives the same
 * code as saturating after (the bounds are integers, rounding is monotone).
 * Per-axis and blocked scales, other types and non-constant parameters
 * stay on cpu_ref.
 */
#include "cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_HAVE_X86 1
#endif

#define H cpu_host
#define BLOCK 16384 /* elements per pool item */

typedef struct qdq_state {
    bool quantize, u8;
    float scale;
    int32_t zp, lo, hi;
    cpu_isa isa;
    pthreadpool_t pool;
} qdq_state;

typedef struct qdq_job {
    const qdq_state *s;
    const void *x;
    void *y;
    size_t n;
} qdq_job;

static bool qdq_params(const sy_node *n, bool quantize, qdq_state *s, char *why, size_t len)
{
    uint32_t ni = H->node_num_inputs(n);
    const sy_tensor *x = H->node_input(n, 0), *sc = ni > 1 ? H->node_input(n, 1) : NULL;
    const sy_tensor *z = ni > 2 ? H->node_input(n, 2) : NULL, *y = H->node_output(n, 0);
    if (!x || !y || !sc || !z)
        return cpu_decline(why, len, "needs the scale and zero point inputs");
    sy_dtype q = quantize ? y->dtype : x->dtype, f = quantize ? x->dtype : y->dtype;
    if (!cpu_is_q8(q) || f != SY_DT_FLOAT32 || z->dtype != q)
        return cpu_decline(why, len, "float32 <-> int8/uint8 with a zero point of the quantized type only");
    if (!sc->data || !z->data || sc->dtype != SY_DT_FLOAT32 || cpu_numel(sc) != 1 || cpu_numel(z) != 1)
        return cpu_decline(why, len, "one constant float32 scale and one constant zero point only (per tensor)");
    float v = *(const float *)sc->data;
    if (!(isfinite(v) && v > 0.0f))
        return cpu_decline(why, len, "the scale must be finite and positive (cpu_ref reports it)");
    s->quantize = quantize;
    s->u8 = q == SY_DT_UINT8;
    s->scale = v;
    s->zp = s->u8 ? (int32_t)*(const uint8_t *)z->data : (int32_t)*(const int8_t *)z->data;
    sy_q_storage_range(q, &s->lo, &s->hi);
    return true;
}

static bool q_accepts(const sy_node *n, char *why, size_t len)
{
    qdq_state s;
    return qdq_params(n, true, &s, why, len);
}

static bool dq_accepts(const sy_node *n, char *why, size_t len)
{
    qdq_state s;
    return qdq_params(n, false, &s, why, len);
}

static void quant_scalar(const qdq_state *s, const float *x, uint8_t *y, size_t i0, size_t i1)
{
    float flo = (float)(s->lo - s->zp), fhi = (float)(s->hi - s->zp);
    for (size_t i = i0; i < i1; i++) {
        float v = x[i] / s->scale;
        v = !(v >= flo) ? flo : v > fhi ? fhi : v; /* NaN to the low end */
        y[i] = (uint8_t)((int32_t)sy_rq_round_even((double)v) + s->zp);
    }
}

static void dequant_scalar(const qdq_state *s, const uint8_t *x, float *y, size_t i0, size_t i1)
{
    for (size_t i = i0; i < i1; i++) {
        int32_t q = s->u8 ? (int32_t)x[i] : (int32_t)(int8_t)x[i];
        y[i] = (float)(q - s->zp) * s->scale;
    }
}

#ifdef CPU_HAVE_X86
__attribute__((target("avx2"))) static void quant_avx2(const qdq_state *s, const float *x, uint8_t *y, size_t i0,
                                                       size_t i1)
{
    __m256 sc = _mm256_set1_ps(s->scale), flo = _mm256_set1_ps((float)(s->lo - s->zp)),
           fhi = _mm256_set1_ps((float)(s->hi - s->zp));
    __m256i zp = _mm256_set1_epi32(s->zp);
    size_t i = i0;
    for (; i + 8 <= i1; i += 8) {
        __m256 v = _mm256_div_ps(_mm256_loadu_ps(x + i), sc);
        /* maxps returns its second operand when the first is NaN: NaN -> flo */
        v = _mm256_min_ps(_mm256_max_ps(v, flo), fhi);
        __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(v), zp); /* round half to even, in [lo, hi] */
        __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
        w = s->u8 ? _mm_packus_epi16(w, w) : _mm_packs_epi16(w, w);
        _mm_storel_epi64((__m128i *)(y + i), w);
    }
    quant_scalar(s, x, y, i, i1);
}

__attribute__((target("avx2"))) static void dequant_avx2(const qdq_state *s, const uint8_t *x, float *y, size_t i0,
                                                         size_t i1)
{
    __m256 sc = _mm256_set1_ps(s->scale);
    __m256i zp = _mm256_set1_epi32(s->zp);
    size_t i = i0;
    for (; i + 8 <= i1; i += 8) {
        __m128i b = _mm_loadl_epi64((const __m128i *)(x + i));
        __m256i q = s->u8 ? _mm256_cvtepu8_epi32(b) : _mm256_cvtepi8_epi32(b);
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(q, zp)), sc));
    }
    dequant_scalar(s, x, y, i, i1);
}
#endif

static void qdq_block(void *ctx, size_t b)
{
    const qdq_job *j = ctx;
    const qdq_state *s = j->s;
    size_t i0 = b * BLOCK, i1 = i0 + BLOCK < j->n ? i0 + BLOCK : j->n;
#ifdef CPU_HAVE_X86
    if (s->isa >= CPU_ISA_AVX2) {
        if (s->quantize)
            quant_avx2(s, j->x, j->y, i0, i1);
        else
            dequant_avx2(s, j->x, j->y, i0, i1);
        return;
    }
#endif
    if (s->quantize)
        quant_scalar(s, j->x, j->y, i0, i1);
    else
        dequant_scalar(s, j->x, j->y, i0, i1);
}

static sy_status *qdq_prepare_common(sy_node *n, bool quantize, void **state)
{
    char why[160] = "";
    qdq_state *s = calloc(1, sizeof *s);
    if (!s)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    if (!qdq_params(n, quantize, s, why, sizeof why)) {
        free(s);
        return H->status_new(SY_ERR_UNSUPPORTED, "%s", why);
    }
    const cpu_provider *prov = H->node_provider_state(n);
    s->isa = prov ? (cpu_isa)prov->isa : CPU_ISA_PORTABLE;
    /* a few operations per element: threads only for large tensors */
    s->pool = cpu_pool_for(cpu_node_pool(n), (double)cpu_numel(H->node_input(n, 0)) / 4.0);
    *state = s;
    return NULL;
}

static sy_status *q_prepare(sy_node *n, void **state) { return qdq_prepare_common(n, true, state); }
static sy_status *dq_prepare(sy_node *n, void **state) { return qdq_prepare_common(n, false, state); }

static sy_status *qdq_run(void *state, const sy_kernel_io *io)
{
    qdq_job j = {state, io->inputs[0]->data, io->outputs[0]->data, cpu_numel(io->inputs[0])};
    pthreadpool_parallelize_1d(j.s->pool, qdq_block, &j, (j.n + BLOCK - 1) / BLOCK, 0);
    return NULL;
}

static const sy_kernel_def qdq_kernels[] = {
    {sizeof(sy_kernel_def), "", "QuantizeLinear", 10, 0, "cpu", SY_DT_BIT(SY_DT_FLOAT32), 0, 0u, q_accepts,
     q_prepare, qdq_run, free, NULL},
    {sizeof(sy_kernel_def), "", "DequantizeLinear", 10, 0, "cpu", SY_DT_BIT(SY_DT_INT8) | SY_DT_BIT(SY_DT_UINT8), 0,
     0u, dq_accepts, dq_prepare, qdq_run, free, NULL},
};

sy_status *cpu_qdq_register(const sy_host_api *host, sy_plugin *p)
{
    for (uint32_t i = 0; i < SY_COUNT_OF(qdq_kernels); i++)
        SY_TRY(host->register_kernel(p, &qdq_kernels[i]));
    return NULL;
}
