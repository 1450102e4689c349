/*
 * sy_sdk: integer GEMM and batch requantization of the quantized kernels
 * (declared in the "integer GEMM" section of sy_sdk.h).
 *
 * Operands are 8-bit (or 4-bit) codes minus their zero points, held as int16
 * in rows that are contiguous along K and zero-padded to sy_qgemm_kpad(K):
 * every output is a dot product of two such rows. That layout is what lets a
 * C compiler use the widening multiply-add of the target (pmaddwd on x86,
 * smlal/sdot on Arm) for `s += (int32)a[k] * (int32)b[k]` without
 * intrinsics. A register tile of 2 x 4 outputs loads each operand once for
 * several products.
 *
 * Exactness: |operand| <= 255, so a product is <= 65025 and a partial sum over
 * SY_QGEMM_KB = 32768 terms stays below 2^31; partial sums are added in
 * uint32, so the result is the int32 accumulation modulo 2^32, the same as a
 * plain loop with a wrapping accumulator in any order.
 *
 * The ONNX-form requantization here is sy_rq_apply's formula
 * (round_half_even(acc * real_mult) + zp, saturated) rewritten without
 * libm calls: the product is clamped to the range that can still land inside
 * [lo, hi], truncated to an integer, and rounded half to even from the exact
 * remainder, which gives the same code for every int32 accumulator.
 */
#include "switchyard/sy_sdk.h"

#include <fenv.h>
#include <math.h>

#define SY_QGEMM_KB 32768 /* k per exact int32 partial sum (multiple of SY_QGEMM_KALIGN) */

/* GCC vectorizes the reductions below with its dynamic cost model (this
 * file's COMPILE_OPTIONS); clang at -O2 needs to be told the loop is worth
 * vectorizing at width 8. */
#if defined(__clang__)
/* a hint: where it cannot apply (sanitizer builds) the scalar loop is right */
#pragma clang diagnostic ignored "-Wpass-failed"
#define QG_VECTORIZE _Pragma("clang loop vectorize(enable) vectorize_width(8)")
#else
#define QG_VECTORIZE
#endif
/* Kept out of line: inlined into the tile loops, clang vectorizes them with
 * plain multiplies instead of multiply-adds (2.5x slower). */
#if defined(__GNUC__)
#define QG_NOINLINE __attribute__((noinline))
#else
#define QG_NOINLINE
#endif

int64_t sy_qgemm_kpad(int64_t k)
{
    return k <= 0 ? SY_QGEMM_KALIGN : (k + SY_QGEMM_KALIGN - 1) / SY_QGEMM_KALIGN * SY_QGEMM_KALIGN;
}

void sy_qgemm_pack(const void *src, sy_dtype dt, size_t off, int64_t k, int64_t kp, int32_t zp, int16_t *dst)
{
    int64_t i = 0;
    switch (dt) {
    case SY_DT_INT8: {
        const int8_t *s = (const int8_t *)src + off;
        for (; i < k; i++)
            dst[i] = (int16_t)(s[i] - zp);
        break;
    }
    case SY_DT_UINT8: {
        const uint8_t *s = (const uint8_t *)src + off;
        for (; i < k; i++)
            dst[i] = (int16_t)(s[i] - zp);
        break;
    }
    default:
        for (; i < k; i++)
            dst[i] = (int16_t)(sy_q_load(src, dt, off + (size_t)i) - zp);
        break;
    }
    for (; i < kp; i++)
        dst[i] = 0;
}

/* 2 rows of A x 4 rows of B over kb terms: o[r * 4 + c] = a_r . b_c */
QG_NOINLINE static void tile_2x4(int64_t kb, const int16_t *restrict a0, const int16_t *restrict a1,
                     const int16_t *restrict b0, const int16_t *restrict b1, const int16_t *restrict b2,
                     const int16_t *restrict b3, int32_t *restrict o)
{
    int32_t s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0;
    QG_VECTORIZE
    for (int64_t k = 0; k < kb; k++) {
        int32_t x0 = a0[k], x1 = a1[k], y0 = b0[k], y1 = b1[k], y2 = b2[k], y3 = b3[k];
        s00 += x0 * y0;
        s01 += x0 * y1;
        s02 += x0 * y2;
        s03 += x0 * y3;
        s10 += x1 * y0;
        s11 += x1 * y1;
        s12 += x1 * y2;
        s13 += x1 * y3;
    }
    o[0] = s00, o[1] = s01, o[2] = s02, o[3] = s03;
    o[4] = s10, o[5] = s11, o[6] = s12, o[7] = s13;
}

/* 1 row of A x 4 rows of B */
QG_NOINLINE static void tile_1x4(int64_t kb, const int16_t *restrict a0, const int16_t *restrict b0,
                     const int16_t *restrict b1, const int16_t *restrict b2, const int16_t *restrict b3,
                     int32_t *restrict o)
{
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    QG_VECTORIZE
    for (int64_t k = 0; k < kb; k++) {
        int32_t x0 = a0[k];
        s0 += x0 * b0[k];
        s1 += x0 * b1[k];
        s2 += x0 * b2[k];
        s3 += x0 * b3[k];
    }
    o[0] = s0, o[1] = s1, o[2] = s2, o[3] = s3;
}

QG_NOINLINE static int32_t dot1(int64_t kb, const int16_t *restrict a, const int16_t *restrict b)
{
    int32_t s = 0;
    QG_VECTORIZE
    for (int64_t k = 0; k < kb; k++)
        s += (int32_t)a[k] * b[k];
    return s;
}

/* c[i][j] (+)= partial over [k0, k0 + kb); first: store instead of add */
static void qgemm_block(int64_t m, int64_t n, int64_t kb, const int16_t *a, int64_t lda, const int16_t *b,
                        int64_t ldb, uint32_t *c, int64_t ldc, bool first)
{
    int32_t o[8];
    int64_t i = 0;
    for (; i + 2 <= m; i += 2) {
        const int16_t *a0 = a + i * lda, *a1 = a0 + lda;
        uint32_t *c0 = c + i * ldc, *c1 = c0 + ldc;
        int64_t j = 0;
        for (; j + 4 <= n; j += 4) {
            const int16_t *bj = b + j * ldb;
            tile_2x4(kb, a0, a1, bj, bj + ldb, bj + 2 * ldb, bj + 3 * ldb, o);
            for (int q = 0; q < 4; q++) {
                c0[j + q] = (first ? 0u : c0[j + q]) + (uint32_t)o[q];
                c1[j + q] = (first ? 0u : c1[j + q]) + (uint32_t)o[4 + q];
            }
        }
        for (; j < n; j++) {
            const int16_t *bj = b + j * ldb;
            c0[j] = (first ? 0u : c0[j]) + (uint32_t)dot1(kb, a0, bj);
            c1[j] = (first ? 0u : c1[j]) + (uint32_t)dot1(kb, a1, bj);
        }
    }
    for (; i < m; i++) {
        const int16_t *a0 = a + i * lda;
        uint32_t *c0 = c + i * ldc;
        int64_t j = 0;
        for (; j + 4 <= n; j += 4) {
            const int16_t *bj = b + j * ldb;
            tile_1x4(kb, a0, bj, bj + ldb, bj + 2 * ldb, bj + 3 * ldb, o);
            for (int q = 0; q < 4; q++)
                c0[j + q] = (first ? 0u : c0[j + q]) + (uint32_t)o[q];
        }
        for (; j < n; j++)
            c0[j] = (first ? 0u : c0[j]) + (uint32_t)dot1(kb, a0, b + j * ldb);
    }
}

void sy_qgemm_s16(int64_t m, int64_t n, int64_t kp, const int16_t *a, int64_t lda, const int16_t *b, int64_t ldb,
                  const int32_t *bias_row, const int32_t *bias_col, int32_t *c, int64_t ldc)
{
    if (m <= 0 || n <= 0)
        return;
    uint32_t *cu = (uint32_t *)c; /* wrapping accumulation; same representation */
    if (kp <= 0) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++)
                cu[i * ldc + j] = 0;
    }
    for (int64_t k0 = 0; k0 < kp; k0 += SY_QGEMM_KB) {
        int64_t kb = kp - k0 < SY_QGEMM_KB ? kp - k0 : SY_QGEMM_KB;
        qgemm_block(m, n, kb, a + k0, lda, b + k0, ldb, cu, ldc, k0 == 0);
    }
    if (bias_row || bias_col)
        for (int64_t i = 0; i < m; i++) {
            uint32_t br = bias_row ? (uint32_t)bias_row[i] : 0u;
            uint32_t *ci = cu + i * ldc;
            for (int64_t j = 0; j < n; j++)
                ci[j] += br + (bias_col ? (uint32_t)bias_col[j] : 0u);
        }
}

/* ---- batch requantization ------------------------------------------------ */

/* ONNX form over n accumulators with bounds [lo_d, hi_d] on acc * mult (see
 * the header comment). Written in doubles with selects (no branches, no
 * int/double mixes in one expression) so that it vectorizes: t is v
 * truncated, d = v - t exact, odd = 1 when t is odd. */
static void rq_onnx_n(double mult, double lo_d, double hi_d, int32_t zp, int32_t lo, int32_t hi,
                      const int32_t *restrict acc, int32_t *restrict out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double v = (double)acc[i] * mult;
        v = v < lo_d ? lo_d : v;
        v = v > hi_d ? hi_d : v;
        double t = (double)(int32_t)v; /* |v| < 2^31 */
        double d = v - t;
        double odd = fabs(t - 2.0 * (double)(int32_t)(t * 0.5));
        double r = t + (d > 0.5 ? 1.0 : 0.0) - (d < -0.5 ? 1.0 : 0.0) + (d == 0.5 ? odd : 0.0) -
                   (d == -0.5 ? odd : 0.0);
        int32_t q = (int32_t)r + zp;
        q = q < lo ? lo : q;
        out[i] = q > hi ? hi : q;
    }
}

/* The same when the FPU rounds to nearest even (the usual mode, checked by
 * the caller): adding and subtracting 1.5 * 2^52 rounds |v| < 2^51 half to
 * even in one step. */
static void rq_onnx_n_rne(double mult, double lo_d, double hi_d, int32_t zp, int32_t lo, int32_t hi,
                          const int32_t *restrict acc, int32_t *restrict out, size_t n)
{
    const double magic = 6755399441055744.0; /* 1.5 * 2^52 */
    for (size_t i = 0; i < n; i++) {
        double v = (double)acc[i] * mult;
        v = v < lo_d ? lo_d : v;
        v = v > hi_d ? hi_d : v;
        int32_t q = (int32_t)((v + magic) - magic) + zp;
        q = q < lo ? lo : q;
        out[i] = q > hi ? hi : q;
    }
}

void sy_rq_apply_n(const sy_requant *r, size_t r_stride, const int32_t *acc, int32_t *out, size_t n)
{
    if (r_stride) {
        for (size_t i = 0; i < n; i++)
            sy_rq_apply_n(r + i * r_stride, 0, acc + i, out + i, 1);
        return;
    }
    const int32_t lim = INT32_C(1) << 30;
    if (r->mode == SY_RQ_GEMMLOWP) {
        /* an int32 accumulator needs no saturation before the fixed-point multiply */
        for (size_t i = 0; i < n; i++) {
            int64_t v = (int64_t)sy_q_mul_by_qm(acc[i], r->mult, r->shift) + r->zp;
            out[i] = v < r->lo ? r->lo : (v > r->hi ? r->hi : (int32_t)v);
        }
        return;
    }
    if (r->mode == SY_RQ_SINGLE) {
        for (size_t i = 0; i < n; i++) {
            int64_t v = (int64_t)sy_q_mul_by_qm_single(acc[i], r->mult, r->shift) + r->zp;
            out[i] = v < r->lo ? r->lo : (v > r->hi ? r->hi : (int32_t)v);
        }
        return;
    }
    if (!isfinite(r->real_mult) || r->lo < -lim || r->hi > lim || r->zp < -lim || r->zp > lim || r->lo > r->hi) {
        for (size_t i = 0; i < n; i++)
            out[i] = sy_rq_apply(r, acc[i]);
        return;
    }
    /* below lo - zp - 1 (above hi - zp + 1) every value saturates to lo (hi) */
    double lo_d = (double)r->lo - (double)r->zp - 1.0, hi_d = (double)r->hi - (double)r->zp + 1.0;
    if (fegetround() == FE_TONEAREST)
        rq_onnx_n_rne(r->real_mult, lo_d, hi_d, r->zp, r->lo, r->hi, acc, out, n);
    else
        rq_onnx_n(r->real_mult, lo_d, hi_d, r->zp, r->lo, r->hi, acc, out, n);
}

void sy_qgemm_mac_row(int64_t n, int32_t w, const int16_t *restrict x, int64_t xstride, int32_t *restrict acc)
{
    uint32_t *a = (uint32_t *)acc;
    int16_t w16 = (int16_t)w; /* int16 x int16: the widening multiply of the target */
    if (xstride == 1) {
        for (int64_t i = 0; i < n; i++)
            a[i] += (uint32_t)(w16 * x[i]);
    } else {
        for (int64_t i = 0; i < n; i++)
            a[i] += (uint32_t)(w16 * x[i * xstride]);
    }
}

void sy_q_store_n(void *y, sy_dtype dt, size_t off, const int32_t *v, size_t n)
{
    switch (dt) {
    case SY_DT_INT8: {
        int8_t *d = (int8_t *)y + off;
        for (size_t i = 0; i < n; i++)
            d[i] = (int8_t)v[i];
        break;
    }
    case SY_DT_UINT8: {
        uint8_t *d = (uint8_t *)y + off;
        for (size_t i = 0; i < n; i++)
            d[i] = (uint8_t)v[i];
        break;
    }
    case SY_DT_INT16: {
        int16_t *d = (int16_t *)y + off;
        for (size_t i = 0; i < n; i++)
            d[i] = (int16_t)v[i];
        break;
    }
    case SY_DT_UINT16: {
        uint16_t *d = (uint16_t *)y + off;
        for (size_t i = 0; i < n; i++)
            d[i] = (uint16_t)v[i];
        break;
    }
    case SY_DT_INT32: memcpy((int32_t *)y + off, v, n * sizeof *v); break;
    default:
        for (size_t i = 0; i < n; i++)
            sy_q_store(y, dt, off + i, v[i]);
        break;
    }
}
