/* sy_sdk: blocked fp32 GEMM (row-major), shared by Conv, Gemm, MatMul, RNNs. */
#include "switchyard/sy_sdk.h"

#define GEMM_NB 256 /* columns of C kept hot */
#define GEMM_KB 128 /* depth block */

/* C[0..4)[0..n) += A-panel * B-block, for 4 rows at once (axpy form). */
static void kernel_rows4(int64_t nr, int64_t n, int64_t kb, const float *a, int64_t a_rs, int64_t a_ks,
                         const float *restrict b, int64_t ldb, float *restrict c, int64_t ldc, float alpha)
{
    float *restrict c0 = c, *restrict c1 = c + ldc, *restrict c2 = c + 2 * ldc, *restrict c3 = c + 3 * ldc;
    if (nr == 4) {
        for (int64_t p = 0; p < kb; p++) {
            const float *restrict bp = b + p * ldb;
            float a0 = alpha * a[p * a_ks], a1 = alpha * a[a_rs + p * a_ks], a2 = alpha * a[2 * a_rs + p * a_ks],
                  a3 = alpha * a[3 * a_rs + p * a_ks];
            for (int64_t j = 0; j < n; j++) {
                float bv = bp[j];
                c0[j] += a0 * bv;
                c1[j] += a1 * bv;
                c2[j] += a2 * bv;
                c3[j] += a3 * bv;
            }
        }
        return;
    }
    for (int64_t r = 0; r < nr; r++) {
        float *restrict cr = c + r * ldc;
        for (int64_t p = 0; p < kb; p++) {
            const float *restrict bp = b + p * ldb;
            float av = alpha * a[r * a_rs + p * a_ks];
            for (int64_t j = 0; j < n; j++)
                cr[j] += av * bp[j];
        }
    }
}

static float dot(const float *restrict x, const float *restrict y, int64_t k)
{
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
    int64_t p = 0;
    for (; p + 8 <= k; p += 8) {
        s0 += x[p] * y[p];
        s1 += x[p + 1] * y[p + 1];
        s2 += x[p + 2] * y[p + 2];
        s3 += x[p + 3] * y[p + 3];
        s4 += x[p + 4] * y[p + 4];
        s5 += x[p + 5] * y[p + 5];
        s6 += x[p + 6] * y[p + 6];
        s7 += x[p + 7] * y[p + 7];
    }
    for (; p < k; p++)
        s0 += x[p] * y[p];
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
}

void sy_gemm_f32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                 int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    if (m <= 0 || n <= 0)
        return;
    /* scale C by beta first (beta 0 overwrites, so NaN garbage disappears) */
    for (int64_t i = 0; i < m; i++) {
        float *cr = c + i * ldc;
        if (beta == 0.0f)
            memset(cr, 0, (size_t)n * sizeof(float));
        else if (beta != 1.0f)
            for (int64_t j = 0; j < n; j++)
                cr[j] *= beta;
    }
    if (k <= 0 || alpha == 0.0f)
        return;
    int64_t a_rs = trans_a ? 1 : lda; /* step between rows of op(A) */
    int64_t a_ks = trans_a ? lda : 1; /* step along k */
    if (trans_b) {
        /* B stored N x K: dot products along contiguous rows */
        if (!trans_a) {
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++)
                    c[i * ldc + j] += alpha * dot(a + i * lda, b + j * ldb, k);
            return;
        }
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                float s = 0;
                for (int64_t p = 0; p < k; p++)
                    s += a[p * lda + i] * b[j * ldb + p];
                c[i * ldc + j] += alpha * s;
            }
        return;
    }
    for (int64_t j0 = 0; j0 < n; j0 += GEMM_NB) {
        int64_t nb = n - j0 < GEMM_NB ? n - j0 : GEMM_NB;
        for (int64_t p0 = 0; p0 < k; p0 += GEMM_KB) {
            int64_t kb = k - p0 < GEMM_KB ? k - p0 : GEMM_KB;
            for (int64_t i = 0; i < m; i += 4) {
                int64_t nr = m - i < 4 ? m - i : 4;
                kernel_rows4(nr, nb, kb, a + i * a_rs + p0 * a_ks, a_rs, a_ks, b + p0 * ldb + j0, ldb,
                             c + i * ldc + j0, ldc, alpha);
            }
        }
    }
}
