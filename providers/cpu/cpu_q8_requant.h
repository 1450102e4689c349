/* The requantization step of the provider's integer convolutions
 * (cpu_q8conv.c, cpu_q8conv_s1.c), written once: an int32 accumulator plus
 * the channel's bias, wrapping as XNNPACK's int32 lanes do, times the
 * channel's float multiplier, clamped to the activation's code range less
 * the zero point, rounded half to even, plus the zero point. The scalar and
 * AVX2 forms give the same codes (cvtps2dq rounds half to even under the
 * default MXCSR; the magic-number add does the same in C). Also the AVX2
 * broadcast of one int16 pair both kernels feed vpmaddwd with. */
#ifndef SY_CPU_Q8_REQUANT_H
#define SY_CPU_Q8_REQUANT_H

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_HAVE_X86 1
#endif

/* round half to even of a float in [-2^22, 2^22] (the clamp keeps it inside) */
static inline float cpu_q8_round_even(float v)
{
    const float magic = 12582912.0f; /* 1.5 * 2^23: the sum rounds to an integer, half to even */
    float t = v + magic;
    return t - magic;
}

/* flo, fhi: the code range less the zero point yz, as floats */
static inline int32_t cpu_q8_code(int32_t acc, int32_t bias, float mult, float flo, float fhi, int32_t yz)
{
    int32_t a = (int32_t)((uint32_t)acc + (uint32_t)bias); /* wraps as int32 lanes */
    float f = (float)a * mult;
    f = f < flo ? flo : f > fhi ? fhi : f;
    return (int32_t)cpu_q8_round_even(f) + yz;
}

#ifdef CPU_HAVE_X86
__attribute__((target("avx2"))) static inline __m256i cpu_q8_bcast_pair(const int16_t *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return _mm256_set1_epi32(v);
}

/* eight lanes of cpu_q8_code */
__attribute__((target("avx2"))) static inline __m256i cpu_q8_codes_avx2(__m256i acc, __m256i bias, __m256 mult,
                                                                       __m256 flo, __m256 fhi, __m256i yz)
{
    __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(acc, bias)), mult);
    f = _mm256_min_ps(_mm256_max_ps(f, flo), fhi);
    return _mm256_add_epi32(_mm256_cvtps_epi32(f), yz);
}
#endif

#endif
