/* qk: portable C99 integer kernels of the switchyard.quant ops (QConv and
 * QConvTranspose NCHW,
 * QMaxPool, QAveragePool, QMatMul, QAdd/QSub/QMul, QConcat, QuantizeLinear,
 * DequantizeLinear; QSoftmax in qk_softmax.c, QUnary's tables in
 * qk_unary.c) for int8/uint8
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
/* QConvTranspose (Table B #113 int8) on qk_conv's fields: c, ih, iw the
 * input's; oc, oh, ow the output's; pt, pl the begin pads; W [c, oc / group,
 * kh, kw] (w_zp one, or per output channel of a group: index o % (oc /
 * group)); rq one per output channel. Each output gathers the inputs that
 * reach it (o = i * s - pad + k * d), so it is requantized at once, no scratch
 * (a 1-D one: ih = kh = 1) */
void qk_conv_transpose_run(const qk_conv *p, const void *x, const void *w, void *y);

/* QMaxPool NCHW (ONNX geometry: pads begin pt/pl) */
typedef struct qk_pool {
    int32_t nc, ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl;
    int32_t xdt, ydt, x_zp, y_zp, same;
    qk_rq rq; /* when !same */
} qk_pool;
void qk_maxpool_run(const qk_pool *p, const void *x, void *y);
/* QAveragePool over the cells inside the input (count_include_pad = 0, or
 * no padding): the ONNX form averages in double times s_x / s_y, rounded
 * half to even; gemmlowp / single rounding round the average half away from
 * zero (TFLite), then rescale (or add the zero point when `same`) */
void qk_avgpool_run(const qk_pool *p, const void *x, void *y);

/* QSoftmax (qk_softmax.c): `len` codes `inner` apart per row, e_k =
 * e^((q_k - max) s_x) (tflk_expf_d: libm's expf in practice), summed in
 * float, y_k = Q(e_k / sum) with round half to even. scratch: len floats */
typedef struct qk_softmax {
    int32_t outer, len, inner, xdt, ydt, y_zp, lo, hi;
    float sx, sy;
    /* QLogSoftmax (DQ -> LogSoftmax -> Q): y_k = Q(d_k - log(sum)), d_k =
     * s_x (q_k - max), the log tflk_logf's */
    int32_t log;
} qk_softmax;
void qk_softmax_run(const qk_softmax *p, const void *x, void *y, float *scratch);
/* The same bytes with the exponentials from a table: q - max of 8-bit codes
 * lies in [-255, 0], so qk_softmax_lut fills lut[i] = e^(-i s_x) (the same
 * tflk_expf_d floats) once per scale and each row reads them instead of
 * evaluating 256..len exponentials (the host providers; lut: 256 floats) */
void qk_softmax_lut(float sx, float *lut);
void qk_softmax_run_lut(const qk_softmax *p, const float *lut, const void *x, void *y, float *scratch);

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

/* QAdd, QSub, QMul (op QK_ADD, QK_SUB, QK_MUL) on 8-bit codes. ONNX form:
 * ra*da +- rb*db (QMul: rm*da*db) in float, rounded half to even, plus zy;
 * gemmlowp / single rounding: TFLite's add/sub (inputs shifted left by 20,
 * m1/s1, m2/s2, then mo/so) and mul (mo/so on the product). qk_add_run
 * broadcasts b by index modulo nb (nb == n or 1) or by blocks (binner); ops_quant's QAdd/QSub/
 * QMul call qk_bin_one per element of their broadcast walk. */
enum { QK_ADD = 0, QK_SUB = 1, QK_MUL = 2 };
/* QPRelu, QPow (what the QDQ pass folds DQ -> PRelu / Pow -> Q into; ONNX
 * has no integer kernel for either): always the ONNX form, with ra = sa,
 * rb = sb, rm = sy: y = sat(rne(f(sa da, sb db) / sy) + zy), f computed in
 * float (PRelu: a < 0 ? b a : a; Pow: tflk_powf), as ONNX Runtime runs the
 * DequantizeLinear, the float op and the QuantizeLinear */
enum { QK_PRELU = 3, QK_POW = 4 };
typedef struct qk_add {
    int32_t n, nb, adt, bdt, ydt, mode, za, zb, zy, lo, hi;
    float ra, rb;
    int32_t m1, s1, m2, s2, mo, so;
    int32_t op;
    float rm;
    /* > 1: b is broadcast over blocks of binner elements (a per-channel
     * operand [C, 1, 1] of an NCHW a): b's index is (i / binner) % nb */
    int32_t binner;
} qk_add;
int32_t qk_bin_one(const qk_add *p, int32_t a, int32_t b);
void qk_add_run(const qk_add *p, const void *a, const void *b, void *y);
/* Any numpy broadcast of a and b to y (y at most 4-D; riscv_mcu marks it
 * with q.binner = -1): yd is y's shape right-aligned to 4 dims (leading 1s),
 * as / bs a's and b's element strides on each of those axes, 0 where the
 * operand is broadcast (its dim 1 or absent). qk_add_bc_run walks y in
 * order calling qk_bin_one on the codes at those offsets. */
typedef struct qk_add_bc {
    qk_add q;
    int32_t yd[4], as[4], bs[4];
} qk_add_bc;
void qk_add_bc_run(const qk_add_bc *p, const void *a, const void *b, void *y);

/* QConcat (what the QDQ pass folds DQ(x_0) ... DQ(x_n-1) -> Concat -> Q
 * into) on 8-bit codes: n inputs of one code type xdt along one axis;
 * outer is the product of the dims before the axis, yinner the output's
 * codes per outer step (the axis dim times the dims after it), inner[i]
 * input i's. copy[i] != 0: input i has the output's scale, zero point and
 * type, its codes are copied; else y = rq[i](x - zx[i]) with rq[i] =
 * sy_rq_init(mode, s_x / s_y, z_y, the storage range). ops_quant's 8-bit
 * QConcat and riscv_mcu (host and packages) run this; y may point into a
 * larger output (a run of inputs at an offset along the axis). */
typedef struct qk_concat {
    int32_t n, outer, yinner, xdt, ydt;
    const int32_t *inner, *zx, *copy; /* n entries each */
    const qk_rq *rq;                  /* n entries (unused where copy[i]) */
} qk_concat;
void qk_concat_run(const qk_concat *p, const void *const *x, void *y);

void qk_quantize_run(size_t n, const float *x, float scale, int32_t zp, int32_t ydt, void *y);
void qk_dequantize_run(size_t n, const void *x, int32_t xdt, float scale, int32_t zp, float *y);
#endif
