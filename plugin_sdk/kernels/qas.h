/*
 * qas: the kernels of QAS-INT8 on-device training (Lin et al. 2022,
 * "On-Device Training Under 256KB Memory": Quantization-Aware Scaling),
 * for the layers seed 001 §4 trains in that mode. Plain C99 with no libm,
 * no allocator and no plugin ABI, like tflk: the SAME files run in the
 * host trainer (libswitchyard_tools) and in the training packages
 * `switchyard codegen --train` writes, so N steps give the same bits on
 * both (compiled without floating-point contraction).
 *
 * What is int8 and what is float (docs/training.md, "QAS-INT8"):
 *   int8   the forward pass: activation codes, weight codes W̄ (symmetric,
 *          zero point 0, one scale per output channel or one per tensor),
 *          int32 bias codes b̄ (scale s_x·s_W), int32 accumulators, the
 *          output requantized to int8 — the inference arithmetic itself;
 *   float  the gradients (of the real-valued loss with respect to W̄ and
 *          b̄ taken as real numbers), the optimizer's state and a float
 *          copy of the trained codes ("master"), which the update changes
 *          and which is re-quantized (rounded, clamped) into the int8
 *          codes after every step. Rounding every update straight into an
 *          int8 code would drop each change smaller than half a code, which
 *          at fine-tuning rates is nearly all of them.
 * The QAS rule: with W = s_W·W̄ the gradient of W̄ is s_W·G_W, so its ratio
 * to the weight is s_W² off the float model's; QAS divides it back,
 * grad_W̄ /= s_W² and grad_b̄ /= (s_W·s_x)² per output channel, and the
 * int8-domain update then moves the real weights as float SGD would.
 */
#ifndef QAS_H
#define QAS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* round half to even for |v| < 2^22 (the rounding of ONNX QuantizeLinear
 * and of Switchyard's default requantization), clamped to [lo, hi] first */
int32_t qas_round_clamp(float v, int32_t lo, int32_t hi);

/* A fully connected layer as seed 001's QAS row takes it: y = x·Wᵀ + b,
 * x [batch, K] int8 (scale x_scale, zero point x_zp), W [O, K] int8 codes
 * ("B transposed": one row per output channel) with w_scale[o], bias int32
 * codes of scale x_scale·w_scale[o] (or none), y [batch, O] int8 (y_scale,
 * y_zp) clamped to [act_min, act_max] (a following ReLU is act_min = y_zp). */
typedef struct qas_fc {
    int32_t k, o;
    float x_scale, y_scale;
    int32_t x_zp, y_zp;
    int32_t act_min, act_max;
    const float *w_scale; /* [o] */
} qas_fc;

/* the int8 forward: acc = Σ (x̄ − x_zp)·W̄ + b̄ (int32), ȳ = y_zp + round(acc ·
 * x_scale·w_scale[o] / y_scale), clamped */
void qas_fc_forward(const qas_fc *p, int32_t batch, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y);

/* The float backward of the forward above at its codes. dy [batch, O] is
 * the loss's gradient with respect to the real output y_scale·(ȳ − y_zp);
 * it passes where the output code did not saturate (act_min < ȳ < act_max:
 * the straight-through estimator of the rounding, zero where the clamp or
 * the fused ReLU cut it). Writes gw [O, K] = ∂L/∂W̄ and gb [O] = ∂L/∂b̄ (the
 * codes taken as reals; gw or gb may be NULL: not wanted, as in a
 * biases-only sparse update) and, when dx is not NULL, dx
 * [batch, K] = ∂L/∂x (the real input). Sums in float, in index order. */
void qas_fc_backward(const qas_fc *p, int32_t batch, const int8_t *x, const int8_t *w, const int8_t *y,
                     const float *dy, float *gw, float *gb, float *dx);

/* QAS: gw[o][·] /= w_scale[o]², gb[o] /= (w_scale[o]·x_scale)² (either may be NULL) */
void qas_scale_grads(int32_t o, int32_t k, const float *w_scale, float x_scale, float *gw, float *gb);

/* One SGD step with momentum on n master values: v = m·v + g, w −= lr·v
 * (ONNX Momentum, standard mode, from a zero v) */
void qas_sgd(int32_t n, float lr, float momentum, const float *g, float *vel, float *master);

/* the master copy re-quantized: weights round-half-even clamped to
 * [−127, 127] (symmetric int8), biases to int32 (clamped to ±2^30) */
void qas_requant_w(int32_t n, const float *master, int8_t *w);
void qas_requant_b(int32_t n, const float *master, int32_t *b);

/* The backward and the update of one layer in one pass, Lin et al.'s
 * in-place update: dx first (it reads the weights before the update), then
 * channel by channel its gradient row into `row` [k], the QAS scaling, the
 * SGD step of the master row and its re-quantized codes — so no [o, k]
 * gradient buffer exists. wm NULL: the weights are frozen (a biases-only
 * update: x, wv and row are not read); bias NULL: none. The same sums in
 * the same order as qas_fc_backward, qas_scale_grads, qas_sgd and
 * qas_requant_*: the same bits. */
void qas_fc_backward_update(const qas_fc *p, int32_t batch, const int8_t *x, int8_t *w, int32_t *bias,
                            const int8_t *y, const float *dy, float *dx, float lr, float momentum, float *wm,
                            float *wv, float *bm, float *bv, float *row);

/* A 2-D convolution as seed 001's QAS row takes it ("INT8 input, weight
 * and output; INT32 bias; rank 4; group 1; 3x3 convolution only"; weights
 * per tensor or per output channel): x [batch, c, h, w] int8 (NCHW, scale
 * x_scale, zero point x_zp; a padded position is the real 0, the code x_zp),
 * W [o, c, kh, kw] int8 codes (the ONNX layout of the OHWI row's weights,
 * symmetric, w_scale[o]), bias int32 codes of scale x_scale·w_scale[o] (or
 * none), y [batch, o, oh, ow] int8 (y_scale, y_zp) clamped to [act_min,
 * act_max]. Strides and leading pads as given (dilation 1); the kernel
 * size is any, the row's 3x3 is the rules' to check. */
typedef struct qas_conv {
    int32_t c, h, w;    /* input per sample */
    int32_t o, oh, ow;  /* output per sample */
    int32_t kh, kw;
    int32_t sh, sw, pt, pl;
    float x_scale, y_scale;
    int32_t x_zp, y_zp;
    int32_t act_min, act_max;
    const float *w_scale; /* [o] */
} qas_conv;

/* the int8 forward: acc = Σ_{c, ky, kx} (x̄ − x_zp)·W̄ + b̄ (int32) over the
 * window, ȳ = y_zp + round(acc · x_scale·w_scale[o] / y_scale), clamped (the
 * multiplier formed in float as qas_fc_forward forms it) */
void qas_conv_forward(const qas_conv *p, int32_t batch, const int8_t *x, const int8_t *w, const int32_t *bias,
                      int8_t *y);

/* The float backward at the forward's codes, as qas_fc_backward: dy [batch,
 * o, oh, ow] is the gradient of the real output, passed where the output
 * code did not saturate (act_min < ȳ < act_max); writes gw [o, c, kh, kw] =
 * ∂L/∂W̄ and gb [o] = ∂L/∂b̄ (the codes as reals; NULL: not wanted) and,
 * when not NULL, dx [batch, c, h, w] = ∂L/∂x (the real input). QAS's
 * division is qas_scale_grads(o, c·kh·kw, ...), the update qas_sgd and
 * qas_requant_* as for a fully connected layer. */
void qas_conv_backward(const qas_conv *p, int32_t batch, const int8_t *x, const int8_t *w, const int8_t *y,
                       const float *dy, float *gw, float *gb, float *dx);

/* ReLU on int8 codes of one quantization (max(x̄, zp)) and its backward on
 * the real gradient: dx = x̄ > zp ? dy : 0 */
void qas_relu_s8(int32_t n, int32_t zp, const int8_t *x, int8_t *y);
void qas_relu_backward(int32_t n, int32_t zp, const int8_t *x, const float *dy, float *dx);

/* A 2-D MaxPool on int8 codes of one per-tensor quantization (seed 001's
 * "QAS INT8 MaxPool2D/MaxPool" row; its input and output have the same
 * scale and zero point, as the quantizer's DequantizeLinear -> MaxPool ->
 * QuantizeLinear pair writes them): the code of the maximum is the maximum
 * of the codes, since v = s·(x̄ − z) is increasing in x̄. x [batch, c, h, w],
 * y [batch, c, oh, ow] (NCHW; a pooling is per channel, so the layout only
 * orders the buffer). Windows kh x kw at strides sh, sw with leading pads
 * pt, pl (a padded position is never the maximum: ONNX pads MaxPool with
 * −inf), dilation 1; the caller gives oh, ow (floor mode). */
typedef struct qas_pool {
    int32_t c, h, w, oh, ow;
    int32_t kh, kw, sh, sw, pt, pl;
} qas_pool;

void qas_maxpool_forward(const qas_pool *p, int32_t batch, const int8_t *x, int8_t *y);

/* Its backward: dx [batch, c, h, w] = 0, then each output's gradient dy
 * added to the FIRST maximal input position of its window in row-major
 * order (ky, then kx: the tie rule; a subgradient of max), overlapping
 * windows summing in output order. x is the forward's input codes. */
void qas_maxpool_backward(const qas_pool *p, int32_t batch, const int8_t *x, const float *dy, float *dx);

/* A Transpose of int8 codes with a constant permutation that keeps the batch
 * first: batch samples of dims d[1..3] (d[0] = 1), y = transpose(x) with
 * perm (perm[0] = 0, perm[1..3] a permutation of 1..3: y's dims are
 * d[perm[1..3]]); a plain index map, no arithmetic. qas_unperm_f32 takes
 * a gradient of the permuted layout back: dx = transposeᵀ(dy). */
void qas_perm_s8(int32_t batch, const int32_t d[4], const int32_t perm[4], const int8_t *x, int8_t *y);
void qas_unperm_f32(int32_t batch, const int32_t d[4], const int32_t perm[4], const float *dy, float *dx);

/* Softmax cross-entropy of dequantized int8 logits [batch, classes] against
 * labels (the zero point cancels in the softmax), reduction mean: dlogits = (softmax − onehot) / batch (the
 * gradient with respect to the real logits). Returns the index of the first
 * label outside [0, classes), or −1. exp is tflk_expf, so host and device
 * agree. */
int32_t qas_softmax_xent_grad(int32_t batch, int32_t classes, const int8_t *logits, float scale,
                              const int32_t *labels, float *dlogits);

#ifdef __cplusplus
}
#endif

#endif
