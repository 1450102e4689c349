/*
 * Byte-to-byte tables over a run of codes, y[i] = map[x[i]]: how the 8-bit
 * kernels requantize when a value's scale or zero point changes and nothing
 * else does (QConcat inputs with other parameters than the output,
 * QMaxPool's maximum). One load and one store per byte is what the scalar
 * loop costs; SqueezeNet's fire modules push 1.4 MB of codes through such
 * tables per inference. AVX-512 VBMI's vpermi2b looks up 64 bytes in a
 * 128-entry table at once: two of them (the low and the high half of the
 * table, bit 6 of the index choosing between their two registers) and a
 * blend on bit 7 cover the 256 entries. A lookup is exact, so both paths
 * give the same bytes. x may be y (in place).
 */
#include "cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define BM_X86 1
#endif

static void map_scalar(const uint8_t *map, const uint8_t *x, uint8_t *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = map[x[i]];
}

#ifdef BM_X86
/* 64 lookups: bits 0-6 of each index select within a half (the two
 * registers of the half by bit 6), bit 7 the half */
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static inline __m512i
lookup64(__m512i t0, __m512i t1, __m512i t2, __m512i t3, __m512i v)
{
    __m512i lo = _mm512_permutex2var_epi8(t0, v, t1), hi = _mm512_permutex2var_epi8(t2, v, t3);
    return _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi);
}

__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static void map_vbmi(const uint8_t *map, const uint8_t *x,
                                                                            uint8_t *y, size_t n)
{
    const __m512i t0 = _mm512_loadu_si512(map), t1 = _mm512_loadu_si512(map + 64);
    const __m512i t2 = _mm512_loadu_si512(map + 128), t3 = _mm512_loadu_si512(map + 192);
    size_t i = 0;
    for (; i + 64 <= n; i += 64)
        _mm512_storeu_si512(y + i, lookup64(t0, t1, t2, t3, _mm512_loadu_si512(x + i)));
    if (i < n) { /* the tail under a mask: nothing read or written past n */
        __mmask64 m = (1ull << (n - i)) - 1; /* n - i < 64 */
        _mm512_mask_storeu_epi8(y + i, m, lookup64(t0, t1, t2, t3, _mm512_maskz_loadu_epi8(m, x + i)));
    }
}
#endif

void cpu_map_bytes(bool vbmi, const uint8_t map[256], const uint8_t *x, uint8_t *y, size_t n)
{
#ifdef BM_X86
    if (vbmi) {
        map_vbmi(map, x, y, n);
        return;
    }
#endif
    (void)vbmi;
    map_scalar(map, x, y, n);
}
