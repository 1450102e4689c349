/*
 * tflk_bmm: BATCH_MATMUL (and ONNX MatMul of rank > 2, Gemm with transA):
 * y[b] = op(x[b]) op(w[b]) with op a transpose when adj_x / adj_y, batch
 * dims walked over y's (up to TFLK_BMM_RANK) and each operand's matrix
 * step per batch index (0 where it is broadcast). Float sums run over k
 * from 0 and the bias (one per column, optional) is added last; int8 is
 * TFLite's reference: centred operands, a wrapping int32 sum, one
 * per-tensor double-rounding requantization.
 */
#include "tflk.h"

static size_t batch_off(const tflk_bmm *p, int32_t bt, const int32_t *step)
{
    size_t off = 0;
    for (int32_t i = p->rank - 1; i >= 0; i--) {
        const int32_t d = p->bdims[i] ? p->bdims[i] : 1;
        off += (size_t)(bt % d) * (size_t)step[i];
        bt /= d;
    }
    return off;
}

void tflk_bmm_f32(const tflk_bmm *p, const float *a, const float *b, const float *bias, float *y)
{
    const int32_t M = p->m, N = p->n, K = p->k;
    for (int32_t bt = 0; bt < p->batches; bt++) {
        const float *ad = a + batch_off(p, bt, p->sa), *bd = b + batch_off(p, bt, p->sb);
        for (int32_t m = 0; m < M; m++)
            for (int32_t nn = 0; nn < N; nn++) {
                float acc = 0.0f;
                for (int32_t k = 0; k < K; k++)
                    acc += (p->adj_x ? ad[(size_t)k * M + m] : ad[(size_t)m * K + k]) *
                           (p->adj_y ? bd[(size_t)nn * K + k] : bd[(size_t)k * N + nn]);
                if (bias)
                    acc += bias[nn];
                y[((size_t)bt * M + m) * N + nn] = acc;
            }
    }
}

void tflk_bmm_s8(const tflk_bmm *p, const int8_t *a, const int8_t *b, int8_t *y)
{
    const int32_t M = p->m, N = p->n, K = p->k;
    for (int32_t bt = 0; bt < p->batches; bt++) {
        const int8_t *ad = a + batch_off(p, bt, p->sa), *bd = b + batch_off(p, bt, p->sb);
        for (int32_t m = 0; m < M; m++)
            for (int32_t nn = 0; nn < N; nn++) {
                uint32_t acc = 0;
                for (int32_t k = 0; k < K; k++) {
                    const int32_t av = (int32_t)(p->adj_x ? ad[(size_t)k * M + m] : ad[(size_t)m * K + k]) + p->x_off;
                    const int32_t bv = (int32_t)(p->adj_y ? bd[(size_t)nn * K + k] : bd[(size_t)k * N + nn]) + p->y_off;
                    acc += (uint32_t)(av * bv);
                }
                const int32_t r = tflk_mul_by_qm((int32_t)acc, p->mult, p->shift) + p->out_zp;
                y[((size_t)bt * M + m) * N + nn] = (int8_t)tflk_clampi(r, -128, 127);
            }
    }
}
