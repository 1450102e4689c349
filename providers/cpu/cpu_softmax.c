/*
 * Softmax on the cpu provider, fp32: y = exp(x - max) / sum(exp(x - max))
 * over rows of the last axis (opset 13: `axis` must name the last one, or
 * one followed only by axes of size 1, whose values are then contiguous
 * too: the [1, 1000, 1, 1] classifier of SqueezeNet; the node goes to
 * cpu_ref otherwise) or, before opset 13, over the 2-D rows
 * the input is coerced into at `axis`. The exponentials are cpu_vmath.c's
 * (AVX2 and portable give the same bits); the row sum is taken in eight
 * interleaved partial sums folded in one fixed order on both paths, so
 * `isa = portable` gives the default path's bits. A row holding a NaN or an
 * infinity takes libm's expf with the same formula, as the reference
 * kernel does, since the vector exp clamps its argument. One row at a time
 * on the caller: the rows of the models this serves (attention over a few
 * hundred positions) are far below the work worth a pool hand-off.
 */
#include "cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SM_X86 1
#endif

#define H cpu_host
#define ERR(code, ...) H->status_new((code), __VA_ARGS__)

typedef struct softmax_state {
    int64_t rows, cols;
    cpu_isa isa;
} softmax_state;

/* the row length, or 0 when the node is not of the form taken here */
static int64_t row_length(const sy_node *n, const sy_tensor *x)
{
    if (!x || x->rank < 1)
        return 0;
    bool old = H->node_opset(n) < 13;
    int64_t axis = sy_attr_int_or(H, n, "axis", old ? 1 : -1);
    if (axis < 0)
        axis += x->rank;
    if (axis < 0 || axis >= x->rank)
        return 0;
    int64_t cols = 1;
    for (int32_t d = (int32_t)axis; d < x->rank; d++) {
        if (!old && d > axis && x->dims[d] != 1)
            return 0; /* opset 13 rows run along `axis` alone: strided here */
        cols *= x->dims[d];
    }
    return cols;
}

static bool softmax_accepts(const sy_node *n, char *why, size_t len)
{
    const sy_tensor *x = H->node_input(n, 0);
    if (!row_length(n, x))
        return cpu_decline(why, len, "cpu Softmax takes the last axis only (opset 13; or one followed by axes of size 1) and a non-empty row");
    return true;
}

static sy_status *softmax_prepare(sy_node *n, void **state)
{
    const sy_tensor *x = H->node_input(n, 0);
    int64_t cols = row_length(n, x);
    if (!cols)
        return ERR(SY_ERR_UNSUPPORTED, "cpu Softmax '%s': not of the form this kernel takes", H->node_name(n));
    softmax_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    int64_t total = 1;
    for (int32_t d = 0; d < x->rank; d++)
        total *= x->dims[d];
    const cpu_provider *prov = H->node_provider_state(n);
    s->cols = cols;
    s->rows = total / cols;
    s->isa = prov ? (cpu_isa)prov->isa : CPU_ISA_PORTABLE;
    *state = s;
    return NULL;
}

/* lanes[j] = sum of v[j], v[j + 8], ... below n8, then the fixed fold */
static float fold8(const float lanes[8])
{
    return ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
}

static float sum_portable(const float *v, size_t n)
{
    float lanes[8] = {0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++)
            lanes[j] += v[i + (size_t)j];
    float s = fold8(lanes);
    for (; i < n; i++)
        s += v[i];
    return s;
}

#ifdef SM_X86
__attribute__((target("avx2"))) static float sum_avx2(const float *v, size_t n)
{
    __m256 acc = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        acc = _mm256_add_ps(acc, _mm256_loadu_ps(v + i));
    float lanes[8];
    _mm256_storeu_ps(lanes, acc);
    float s = fold8(lanes);
    for (; i < n; i++)
        s += v[i];
    return s;
}
#endif

static float row_sum(cpu_isa isa, const float *v, size_t n)
{
#ifdef SM_X86
    if (isa >= CPU_ISA_AVX2)
        return sum_avx2(v, n);
#endif
    (void)isa;
    return sum_portable(v, n);
}

static sy_status *softmax_run(void *state, const sy_kernel_io *io)
{
    const softmax_state *s = state;
    const float *x = io->inputs[0]->data;
    float *y = io->outputs[0]->data;
    const size_t cols = (size_t)s->cols;
    for (int64_t r = 0; r < s->rows; r++) {
        const float *xr = x + (size_t)r * cols;
        float *yr = y + (size_t)r * cols;
        float mx = xr[0];
        bool finite = true;
        for (size_t i = 0; i < cols; i++) {
            finite &= isfinite(xr[i]) != 0;
            mx = xr[i] > mx ? xr[i] : mx;
        }
        if (!finite) { /* NaN and infinities as the formula gives them */
            float sum = 0.0f;
            for (size_t i = 0; i < cols; i++) {
                yr[i] = expf(xr[i] - mx);
                sum += yr[i];
            }
            for (size_t i = 0; i < cols; i++)
                yr[i] /= sum;
            continue;
        }
        for (size_t i = 0; i < cols; i++)
            yr[i] = xr[i] - mx;
        cpu_exp_f32(s->isa, yr, cols);
        float sum = row_sum(s->isa, yr, cols);
        for (size_t i = 0; i < cols; i++)
            yr[i] /= sum;
    }
    return NULL;
}

static void softmax_release(void *state) { free(state); }

static const sy_kernel_def softmax_kernels[] = {
    {sizeof(sy_kernel_def), "", "Softmax", 1, 0, "cpu", SY_DT_BIT(SY_DT_FLOAT32), 0, 0u, softmax_accepts,
     softmax_prepare, softmax_run, softmax_release, NULL},
};

sy_status *cpu_softmax_register(const sy_host_api *host, sy_plugin *p)
{
    for (uint32_t i = 0; i < SY_COUNT_OF(softmax_kernels); i++)
        SY_TRY(host->register_kernel(p, &softmax_kernels[i]));
    return NULL;
}
