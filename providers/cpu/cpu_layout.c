/*
 * Layout changes at the edge of the cpu provider's kernels: ONNX tensors are
 * NCHW, XNNPACK works in NHWC. Each pass moves 16 x 16 tiles (channels x
 * pixels) so reads and writes stay in cache lines; a pool splits the pixels.
 * 8-bit codes (the XNNPACK quantized convolutions) move in 16 x 16 byte blocks.
 * Pure data movement plus f16 <-> f32 conversion (round to nearest even), so
 * the result depends neither on the split nor on the path:
 *   CPU_ISA_AVX2      8 x 8 register transposes, F16C conversions; 16 x 16 byte transposes;
 *                     fewer than 8 channels into NHWC: 8 pixels per channel converted at once
 *   CPU_ISA_PORTABLE  plain C (sy_f16_to_f32 / sy_f32_to_f16)
 * picked at run time from the CPU (or forced by [provider.cpu] isa).
 */
#include "cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define CPU_HAVE_X86 1
#endif

#define TILE 16

typedef struct move_job {
    const void *src;
    void *dst;
    int64_t c, hw;
    int64_t ld; /* NHWC pixel stride (>= c): a channel range of a wider tensor */
    cpu_move_kind kind;
    cpu_isa isa;
} move_job;

/* channels [c0, c1) x pixels [p0, p1) of one image, one element at a time */
static void move_scalar(const move_job *j, size_t base, size_t nbase, int64_t c0, int64_t c1, int64_t p0, int64_t p1)
{
    int64_t ld = j->ld, hw = j->hw;
    switch (j->kind) {
    case CPU_TO_NHWC_F32: {
        const float *s = (const float *)j->src + base;
        float *d = (float *)j->dst + nbase;
        for (int64_t p = p0; p < p1; p++)
            for (int64_t ch = c0; ch < c1; ch++)
                d[p * ld + ch] = s[ch * hw + p];
        break;
    }
    case CPU_TO_NCHW_F32: {
        const float *s = (const float *)j->src + nbase;
        float *d = (float *)j->dst + base;
        for (int64_t ch = c0; ch < c1; ch++)
            for (int64_t p = p0; p < p1; p++)
                d[ch * hw + p] = s[p * ld + ch];
        break;
    }
    case CPU_F16_TO_NHWC_F32: {
        const uint16_t *s = (const uint16_t *)j->src + base;
        float *d = (float *)j->dst + nbase;
        for (int64_t p = p0; p < p1; p++)
            for (int64_t ch = c0; ch < c1; ch++)
                d[p * ld + ch] = sy_f16_to_f32(s[ch * hw + p]);
        break;
    }
    case CPU_F32_TO_NCHW_F16: {
        const float *s = (const float *)j->src + nbase;
        uint16_t *d = (uint16_t *)j->dst + base;
        for (int64_t ch = c0; ch < c1; ch++)
            for (int64_t p = p0; p < p1; p++)
                d[ch * hw + p] = sy_f32_to_f16(s[p * ld + ch]);
        break;
    }
    case CPU_TO_NHWC_8: {
        const uint8_t *s = (const uint8_t *)j->src + base;
        uint8_t *d = (uint8_t *)j->dst + nbase;
        for (int64_t p = p0; p < p1; p++)
            for (int64_t ch = c0; ch < c1; ch++)
                d[p * ld + ch] = s[ch * hw + p];
        break;
    }
    case CPU_TO_NCHW_8: {
        const uint8_t *s = (const uint8_t *)j->src + nbase;
        uint8_t *d = (uint8_t *)j->dst + base;
        for (int64_t ch = c0; ch < c1; ch++)
            for (int64_t p = p0; p < p1; p++)
                d[ch * hw + p] = s[p * ld + ch];
        break;
    }
    }
}

#ifdef CPU_HAVE_X86
/* r[i][k] -> r[k][i] for eight rows of eight floats */
__attribute__((target("avx2"))) static inline void transpose8(__m256 r[8])
{
    __m256 t[8], u[8];
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 2; i++) {
        u[4 * i + 0] = _mm256_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0x44);
        u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0xEE);
        u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    for (int i = 0; i < 4; i++) {
        r[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
        r[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
    }
}

/* r[i][k] -> r[k][i] for sixteen rows of sixteen bytes: four rounds of
 * byte interleaves of row i with row i + 8 (a perfect shuffle each round) */
__attribute__((target("avx2"))) static inline void transpose16_u8(__m128i r[16])
{
    for (int s = 0; s < 4; s++) {
        __m128i o[16];
        for (int i = 0; i < 8; i++) {
            o[2 * i] = _mm_unpacklo_epi8(r[i], r[i + 8]);
            o[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + 8]);
        }
        for (int i = 0; i < 16; i++)
            r[i] = o[i];
    }
}

/* one 16 x 16 block of 8-bit codes at channel c0, pixel p0 */
__attribute__((target("avx2"))) static void move_block16_u8(const move_job *j, size_t base, size_t nbase, int64_t c0,
                                                            int64_t p0)
{
    int64_t ld = j->ld, hw = j->hw;
    const uint8_t *s = j->src;
    uint8_t *d = j->dst;
    __m128i r[16];
    if (j->kind == CPU_TO_NHWC_8) {
        for (int i = 0; i < 16; i++)
            r[i] = _mm_loadu_si128((const __m128i *)(s + base + (size_t)((c0 + i) * hw + p0)));
        transpose16_u8(r);
        for (int i = 0; i < 16; i++)
            _mm_storeu_si128((__m128i *)(d + nbase + (size_t)((p0 + i) * ld + c0)), r[i]);
    } else {
        for (int i = 0; i < 16; i++)
            r[i] = _mm_loadu_si128((const __m128i *)(s + nbase + (size_t)((p0 + i) * ld + c0)));
        transpose16_u8(r);
        for (int i = 0; i < 16; i++)
            _mm_storeu_si128((__m128i *)(d + base + (size_t)((c0 + i) * hw + p0)), r[i]);
    }
}

/* fewer than 8 channels into NHWC (an image's 3 colour planes): each
 * channel's 8 pixels converted at once into a small block, then written
 * pixel by pixel; channel by channel in plain C the f16 conversion was most
 * of the cost (0.5 ms of squeezenet1.0_fp16's 224 x 224 input) */
__attribute__((target("avx2,f16c"))) static void move_narrow(const move_job *j, size_t base, size_t nbase, int64_t c1,
                                                             int64_t p0, int64_t p1)
{
    int64_t ld = j->ld, hw = j->hw, p = p0;
    float t[8][8], *d = (float *)j->dst + nbase;
    for (; p + 8 <= p1; p += 8) {
        for (int64_t ch = 0; ch < c1; ch++) {
            size_t at = base + (size_t)(ch * hw + p);
            __m256 v = j->kind == CPU_TO_NHWC_F32
                           ? _mm256_loadu_ps((const float *)j->src + at)
                           : _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)j->src + at)));
            _mm256_storeu_ps(t[ch], v);
        }
        for (int64_t i = 0; i < 8; i++)
            for (int64_t ch = 0; ch < c1; ch++)
                d[(p + i) * ld + ch] = t[ch][i];
    }
    move_scalar(j, base, nbase, 0, c1, p, p1);
}

/* one 8 x 8 block at channel c0, pixel p0 */
__attribute__((target("avx2,f16c"))) static void move_block8(const move_job *j, size_t base, size_t nbase, int64_t c0,
                                                             int64_t p0)
{
    int64_t ld = j->ld, hw = j->hw;
    __m256 r[8];
    switch (j->kind) {
    case CPU_TO_NHWC_F32:
    case CPU_F16_TO_NHWC_F32:
        for (int i = 0; i < 8; i++) {
            size_t at = base + (size_t)((c0 + i) * hw + p0);
            r[i] = j->kind == CPU_TO_NHWC_F32
                       ? _mm256_loadu_ps((const float *)j->src + at)
                       : _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)j->src + at)));
        }
        transpose8(r);
        for (int i = 0; i < 8; i++)
            _mm256_storeu_ps((float *)j->dst + nbase + (size_t)((p0 + i) * ld + c0), r[i]);
        break;
    case CPU_TO_NCHW_F32:
    case CPU_F32_TO_NCHW_F16:
        for (int i = 0; i < 8; i++)
            r[i] = _mm256_loadu_ps((const float *)j->src + nbase + (size_t)((p0 + i) * ld + c0));
        transpose8(r);
        for (int i = 0; i < 8; i++) {
            size_t at = base + (size_t)((c0 + i) * hw + p0);
            if (j->kind == CPU_TO_NCHW_F32)
                _mm256_storeu_ps((float *)j->dst + at, r[i]);
            else
                _mm_storeu_si128((__m128i *)((uint16_t *)j->dst + at),
                                 _mm256_cvtps_ph(r[i], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        }
        break;
    case CPU_TO_NHWC_8: /* bytes take move_block16_u8 */
    case CPU_TO_NCHW_8:
        break;
    }
}
#endif

/* pixels [p0, p0 + TILE) of image `img`, every channel */
static void move_tile(void *ctx, size_t img, size_t tile)
{
    const move_job *j = ctx;
    int64_t c = j->c, hw = j->hw;
    int64_t p0 = (int64_t)tile * TILE, p1 = p0 + TILE < hw ? p0 + TILE : hw;
    size_t base = (size_t)img * (size_t)(c * hw), nbase = (size_t)img * (size_t)(j->ld * hw);
    for (int64_t c0 = 0; c0 < c; c0 += TILE) {
        int64_t c1 = c0 + TILE < c ? c0 + TILE : c;
#ifdef CPU_HAVE_X86
        if (j->isa >= CPU_ISA_AVX2 && (j->kind == CPU_TO_NHWC_8 || j->kind == CPU_TO_NCHW_8)) {
            int64_t c16 = c0 + (c1 - c0) / 16 * 16, p16 = p0 + (p1 - p0) / 16 * 16;
            for (int64_t cb = c0; cb < c16; cb += 16)
                for (int64_t pb = p0; pb < p16; pb += 16)
                    move_block16_u8(j, base, nbase, cb, pb);
            move_scalar(j, base, nbase, c16, c1, p0, p1);
            move_scalar(j, base, nbase, c0, c16, p16, p1);
            continue;
        }
        if (j->isa >= CPU_ISA_AVX2 && c < 8 && (j->kind == CPU_TO_NHWC_F32 || j->kind == CPU_F16_TO_NHWC_F32)) {
            move_narrow(j, base, nbase, c, p0, p1);
            continue;
        }
        if (j->isa >= CPU_ISA_AVX2) {
            int64_t c8 = c0 + (c1 - c0) / 8 * 8, p8 = p0 + (p1 - p0) / 8 * 8;
            for (int64_t cb = c0; cb < c8; cb += 8)
                for (int64_t pb = p0; pb < p8; pb += 8)
                    move_block8(j, base, nbase, cb, pb);
            /* the ragged edges one by one */
            move_scalar(j, base, nbase, c8, c1, p0, p1);
            move_scalar(j, base, nbase, c0, c8, p8, p1);
            continue;
        }
#endif
        move_scalar(j, base, nbase, c0, c1, p0, p1);
    }
}

void cpu_layout_move(pthreadpool_t pool, cpu_isa isa, cpu_move_kind kind, const void *src, void *dst, int64_t n,
                     int64_t c, int64_t hw, int64_t ld)
{
    move_job j = {src, dst, c, hw, ld, kind, isa};
    pool = cpu_pool_for(pool, (double)n * (double)c * (double)hw);
    size_t tiles = (size_t)((hw + TILE - 1) / TILE);
    /* pthreadpool runs the calls on the caller when pool is NULL */
    pthreadpool_parallelize_2d(pool, move_tile, &j, (size_t)n, tiles, 0);
}

/* AVX2 and F16C from CPUID, and the OS saving the YMM registers (XGETBV);
 * then AVX-512 F/BW/VL and VNNI, and the OS saving the opmask and ZMM state */
cpu_isa cpu_isa_detect(void)
{
#ifdef CPU_HAVE_X86
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return CPU_ISA_PORTABLE;
    bool f16c = (c >> 29) & 1u, avx = (c >> 28) & 1u, osxsave = (c >> 27) & 1u;
    if (!f16c || !avx || !osxsave)
        return CPU_ISA_PORTABLE;
    unsigned lo, hi;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 6u) != 6u) /* XMM and YMM state */
        return CPU_ISA_PORTABLE;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !((b >> 5) & 1u))
        return CPU_ISA_PORTABLE;
    bool f = (b >> 16) & 1u, bw = (b >> 30) & 1u, vl = (b >> 31) & 1u, vnni = (c >> 11) & 1u;
    if (f && bw && vl && vnni && (lo & 0xE0u) == 0xE0u) /* opmask, upper ZMM0-15, ZMM16-31 */
        return CPU_ISA_AVX512;
    return CPU_ISA_AVX2;
#else
    return CPU_ISA_PORTABLE;
#endif
}

bool cpu_has_vbmi(void)
{
#ifdef CPU_HAVE_X86
    unsigned a, b, c, d;
    /* AVX512_VBMI is CPUID.(7,0):ECX bit 1; the OS state of the ZMM
     * registers is cpu_isa_detect's, which the callers ask first */
    return cpu_isa_detect() == CPU_ISA_AVX512 && __get_cpuid_count(7, 0, &a, &b, &c, &d) && ((c >> 1) & 1u);
#else
    return false;
#endif
}
