/*
 * Element-wise transcendental functions of the cpu provider's kernels
 * (LSTM gates, Softmax): exp, logistic sigmoid and tanh over arrays, with an AVX2
 * path and a portable one that give the same bits. Both evaluate the same
 * formulas with the same operations in the same order: no fused
 * multiply-add (the AVX2 path is written with separate multiplies and adds,
 * and contraction is off for this file), round-to-nearest by the 1.5 * 2^23
 * trick rather than a library call, IEEE division. So `isa = portable` and
 * `isa = auto` agree, and tests/cpu checks it.
 *
 * exp: Cephes' expf (range reduction by ln 2 split in two, a degree-5
 * polynomial; about 1 ulp on the clamped range [-88.376, 88.376]).
 * sigmoid(x) = 1 / (1 + exp(-x)).
 * tanh: Cephes' tanhf: an odd polynomial for |x| < 0.625, else
 * 1 - 2 / (exp(2|x|) + 1) with the sign of x. NaN stays NaN.
 */
#include "cpu.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define VM_X86 1
#endif
#ifdef __clang__
#pragma clang fp contract(off)
#endif

#define EXP_HI 88.3762626647949f
#define EXP_LO -88.3762626647949f
#define LOG2E 1.44269504088896341f
#define C1 0.693359375f
#define C2 -2.12194440e-4f
#define ROUND_MAGIC 12582912.0f /* 1.5 * 2^23: adding and subtracting rounds to an integer */
#define P0 1.9875691500E-4f
#define P1 1.3981999507E-3f
#define P2 8.3334519073E-3f
#define P3 4.1665795894E-2f
#define P4 1.6666665459E-1f
#define P5 5.0000001201E-1f
#define T0 -5.70498872745E-3f
#define T1 2.06390887954E-2f
#define T2 -5.37397155531E-2f
#define T3 1.33314422036E-1f
#define T4 -3.33332819422E-1f
#define TANH_SMALL 0.625f

/* the clamps are written as minps/maxps compute them (callers keep NaN away) */
static float exp1(float x)
{
    x = x < EXP_HI ? x : EXP_HI;
    x = x > EXP_LO ? x : EXP_LO;
    float n = x * LOG2E;
    n = (n + ROUND_MAGIC) - ROUND_MAGIC;
    float r = x - n * C1;
    r = r - n * C2;
    float p = P0;
    p = p * r + P1;
    p = p * r + P2;
    p = p * r + P3;
    p = p * r + P4;
    p = p * r + P5;
    float z = r * r;
    float y = p * z;
    y = y + r;
    y = y + 1.0f;
    int32_t e = ((int32_t)n + 127) << 23;
    float s;
    memcpy(&s, &e, sizeof s);
    return y * s;
}

static float sigmoid1(float x) { return x != x ? x : 1.0f / (1.0f + exp1(-x)); }

static float tanh1(float x)
{
    if (x != x)
        return x;
    float a = x < 0.0f ? -x : x;
    if (a < TANH_SMALL) {
        float z = x * x;
        float p = T0;
        p = p * z + T1;
        p = p * z + T2;
        p = p * z + T3;
        p = p * z + T4;
        float y = p * z;
        y = y * x;
        return y + x;
    }
    float e = exp1(a + a);
    float y = 1.0f - 2.0f / (e + 1.0f);
    return x < 0.0f ? -y : y;
}

#ifdef VM_X86
__attribute__((target("avx2"))) static __m256 exp8(__m256 x)
{
    x = _mm256_min_ps(x, _mm256_set1_ps(EXP_HI));
    x = _mm256_max_ps(x, _mm256_set1_ps(EXP_LO));
    __m256 n = _mm256_mul_ps(x, _mm256_set1_ps(LOG2E));
    n = _mm256_sub_ps(_mm256_add_ps(n, _mm256_set1_ps(ROUND_MAGIC)), _mm256_set1_ps(ROUND_MAGIC));
    __m256 r = _mm256_sub_ps(x, _mm256_mul_ps(n, _mm256_set1_ps(C1)));
    r = _mm256_sub_ps(r, _mm256_mul_ps(n, _mm256_set1_ps(C2)));
    __m256 p = _mm256_set1_ps(P0);
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(P1));
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(P2));
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(P3));
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(P4));
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(P5));
    __m256 y = _mm256_mul_ps(p, _mm256_mul_ps(r, r));
    y = _mm256_add_ps(y, r);
    y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
}

__attribute__((target("avx2"))) static void sigmoid_avx2(float *x, size_t n)
{
    size_t i = 0;
    const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256 e = exp8(_mm256_sub_ps(zero, v));
        __m256 y = _mm256_div_ps(one, _mm256_add_ps(one, e));
        _mm256_storeu_ps(x + i, _mm256_blendv_ps(y, v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q))); /* NaN stays */
    }
    for (; i < n; i++)
        x[i] = sigmoid1(x[i]);
}

__attribute__((target("avx2"))) static void tanh_avx2(float *x, size_t n)
{
    size_t i = 0;
    const __m256 one = _mm256_set1_ps(1.0f), two = _mm256_set1_ps(2.0f);
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256 a = _mm256_andnot_ps(sign, v);
        __m256 z = _mm256_mul_ps(v, v);
        __m256 p = _mm256_set1_ps(T0);
        p = _mm256_add_ps(_mm256_mul_ps(p, z), _mm256_set1_ps(T1));
        p = _mm256_add_ps(_mm256_mul_ps(p, z), _mm256_set1_ps(T2));
        p = _mm256_add_ps(_mm256_mul_ps(p, z), _mm256_set1_ps(T3));
        p = _mm256_add_ps(_mm256_mul_ps(p, z), _mm256_set1_ps(T4));
        __m256 small = _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(p, z), v), v);
        __m256 e = exp8(_mm256_add_ps(a, a));
        __m256 big = _mm256_sub_ps(one, _mm256_div_ps(two, _mm256_add_ps(e, one)));
        big = _mm256_or_ps(big, _mm256_and_ps(sign, v)); /* the sign of x (big >= 0) */
        __m256 is_small = _mm256_cmp_ps(a, _mm256_set1_ps(TANH_SMALL), _CMP_LT_OQ);
        __m256 y = _mm256_blendv_ps(big, small, is_small);
        _mm256_storeu_ps(x + i, _mm256_blendv_ps(y, v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q))); /* NaN stays */
    }
    for (; i < n; i++)
        x[i] = tanh1(x[i]);
}
#endif

#ifdef VM_X86
__attribute__((target("avx2"))) static void exp_avx2(float *x, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(x + i, exp8(_mm256_loadu_ps(x + i)));
    for (; i < n; i++)
        x[i] = exp1(x[i]);
}
#endif

void cpu_exp_f32(cpu_isa isa, float *x, size_t n)
{
#ifdef VM_X86
    if (isa >= CPU_ISA_AVX2) {
        exp_avx2(x, n);
        return;
    }
#endif
    (void)isa;
    for (size_t i = 0; i < n; i++)
        x[i] = exp1(x[i]);
}

void cpu_sigmoid_f32(cpu_isa isa, float *x, size_t n)
{
#ifdef VM_X86
    if (isa >= CPU_ISA_AVX2) {
        sigmoid_avx2(x, n);
        return;
    }
#endif
    (void)isa;
    for (size_t i = 0; i < n; i++)
        x[i] = sigmoid1(x[i]);
}

void cpu_tanh_f32(cpu_isa isa, float *x, size_t n)
{
#ifdef VM_X86
    if (isa >= CPU_ISA_AVX2) {
        tanh_avx2(x, n);
        return;
    }
#endif
    (void)isa;
    for (size_t i = 0; i < n; i++)
        x[i] = tanh1(x[i]);
}
