/* qk: portable C99 integer kernels of the switchyard.quant ops (QConv NCHW,
 * QMaxPool, QMatMul, QAdd, QuantizeLinear, DequantizeLinear) for int8/uint8
 * codes. No plugin ABI, no malloc, no libm: shared by plugins/ops_quant and
 * riscv_mcu (copied into codegen packages). The math is that of
 * sy_rq_apply / sy_rq_quantize / sy_q_mul_by_qm (plugin_sdk/lib), so host
 * and MCU agree bit for bit (compile with -ffp-contract=off). */
#ifndef QK_H
#define QK_H
#include <stddef.h>
#include <stdint.h>

/* the sy_rq_mode values: float, gemmlowp double rounding, TFLite single rounding */
enum { QK_RQ_ONNX = 0, QK_RQ_GEMMLOWP = 1, QK_RQ_SINGLE = 2 };
/* QK_S32: the raw int32 accumulator as the output, no requantization (ONNX
 * ConvInteger, MatMulInteger; rq may be NULL) */
enum { QK_S8 = 0, QK_U8 = 1, QK_S32 = 2 };

typedef struct qk_rq {
    int32_t mode;      /* QK_RQ_ONNX, QK_RQ_GEMMLOWP or QK_RQ_SINGLE */
    double real_mult;  /* s_x * s_w / s_y (ONNX form) */
    int32_t mult, shift;
    int32_t zp, lo, hi;
} qk_rq;

double qk_round_even(double v); /* |v| < 2^52 or returned as is; no libm */
int32_t qk_mul_by_qm(int32_t x, int32_t mult, int32_t shift);
/* the fixed-point multiply of a form: gemmlowp's, or single rounding for QK_RQ_SINGLE */
int32_t qk_mul_by_qm_form(int32_t mode, int32_t x, int32_t mult, int32_t shift);
int32_t qk_rq_apply(const qk_rq *r, int64_t acc);
int32_t qk_quantize1(float x, float scale, int32_t zp, int32_t lo, int32_t hi);

/* QConv: NCHW input codes, OIHW weights (w_zp per channel or one), int32 bias, one rq per OC */
typedef struct qk_conv {
    int32_t n, c, ih, iw, oc, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, group;
    int32_t xdt, wdt, ydt, x_zp;
    int32_t n_wzp;          /* 1 or oc */
    const int32_t *w_zp;    /* n_wzp entries */
    const int32_t *bias;    /* oc entries (NULL: 0) */
    const qk_rq *rq;        /* oc entries */
} qk_conv;
void qk_conv_run(const qk_conv *p, const void *x, const void *w, void *y);

/* QMaxPool NCHW (ONNX geometry: pads begin pt/pl) */
typedef struct qk_pool {
    int32_t nc, ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl;
    int32_t xdt, ydt, x_zp, y_zp, same;
    qk_rq rq; /* when !same */
} qk_pool;
void qk_maxpool_run(const qk_pool *p, const void *x, void *y);

/* QMatMul [batch, M, K] x B (b_zp per column or one): B is [K, N], or
 * [N, K] when trans_b (a Gemm's transB = 1); one B for every batch, or one
 * per batch when b_batched (ONNX QLinearMatMul / MatMulInteger of rank > 2) */
typedef struct qk_mm {
    int32_t batch, m, k, nn, adt, bdt, ydt, a_zp, n_bzp, trans_b;
    const int32_t *b_zp, *bias;
    const qk_rq *rq; /* nn entries (NULL for QK_S32) */
    int32_t b_batched;
} qk_mm;
void qk_matmul_run(const qk_mm *p, const void *a, const void *b, void *y);

/* QAdd (ONNX form: ra*da + rb*db + zy in float; gemmlowp: TFLite add) with
 * b broadcast by index modulo nb (nb == n or 1) */
typedef struct qk_add {
    int32_t n, nb, adt, bdt, ydt, mode, za, zb, zy, lo, hi;
    float ra, rb;
    int32_t m1, s1, m2, s2, mo, so;
} qk_add;
void qk_add_run(const qk_add *p, const void *a, const void *b, void *y);

void qk_quantize_run(size_t n, const float *x, float scale, int32_t zp, int32_t ydt, void *y);
void qk_dequantize_run(size_t n, const void *x, int32_t xdt, float scale, int32_t zp, float *y);
#endif
