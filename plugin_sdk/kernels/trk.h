/*
 * trk: the float32 training kernels (seed 001 §4, FP32 mode): the backward
 * steps and the optimizer updates of FP32 training, plain C99 with no libm,
 * no allocator and no plugin ABI, like tflk. The SAME file serves the host
 * trainer (the `train` plugin's ReluGrad, AbsGrad, ConvGrad and ONNX
 * Momentum / Adam / Adagrad kernels call these) and the FP32
 * training packages `switchyard codegen --train --mode fp32` writes, so the
 * update arithmetic is written once and N steps on the device follow the
 * host's (docs/training.md, "FP32 training packages"). The plugin keeps
 * libm for two computations this file has without it: the
 * SoftmaxCrossEntropyGrad's exp (double) and Adam's bias-corrected rate;
 * trk_softmax_xent_grad and trk_adam_rate are the packages' (within float
 * rounding of the plugin's).
 *
 * Layouts are ONNX's (NCHW, Gemm W [O, K] with B transposed). Loops run in
 * index order with float accumulators; the files are compiled without
 * floating-point contraction everywhere.
 */
#ifndef TRK_H
#define TRK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ReluGrad: dx = x > 0 ? dy : 0.  AbsGrad: dx = sign(x)·dy (0 at x = 0). */
void trk_relu_grad(int64_t n, const float *dy, const float *x, float *dx);
void trk_abs_grad(int64_t n, const float *dy, const float *x, float *dx);

/* The forward Relu y = x > 0 ? x : 0, and the backward of a Concat of one
 * value with itself (n elements per half, batch 1): dx = dy[0..n) + dy[n..2n) */
void trk_relu(int64_t n, const float *x, float *y);
void trk_concat_self_grad(int64_t n, const float *dy, float *dx);

/* The forward of a depthwise convolution (no bias, stride 1, dilation 1)
 * whose output has its input's shape — pads pt + pb = kh − 1 and
 * pl + pr = kw − 1 — written over its input: xy holds c planes [h, w], the
 * input on entry and the output on return; wt [c, kh·kw]. Output row oy
 * reads input rows oy − pt .. oy − pt + kh − 1, and every row above oy is
 * output by then, so before row oy is written its input is copied into a
 * ring of pt + 1 rows (line: (pt + 1)·w floats, the rows oy − pt .. oy),
 * from which the rows at or above oy are read; the rows below oy are
 * still the input in place. Each output value is the sum tflk_conv_f32
 * forms (0, then x·w over ky, kx in order, the taps outside the plane
 * skipped; its identity activation), so the bits are the out-of-place
 * conv's. */
void trk_dw_conv_in_place(int32_t c, int32_t h, int32_t w, int32_t kh, int32_t kw, int32_t pt, int32_t pl,
                          const float *wt, float *xy, float *line);

/* The forward of a depthwise convolution (no bias, dilation 1) whose output
 * plane is no larger than its input's — strides sh, sw (2: the frozen
 * fronts' downsampling), or stride 1 without pads summing to k − 1 —
 * written over its input: xy holds c planes [ih, iw] on entry and c planes
 * [oh, ow] (packed, channel after channel) on return; wt [c, kh·kw]. Each
 * output row is formed in a line of ow floats, then placed; before it is
 * placed, every input row of its channel its place reaches that a later
 * output row still reads is copied into a ring of nring rows of iw floats
 * (slot iy mod nring), from which it is read from then on (a later
 * channel's input is never reached: its output starts at c·oh·ow <=
 * c·ih·iw). ring: nring·iw + ow floats, nring from trk_dw_conv_ring_rows.
 * Each output value is the sum tflk_conv_f32 forms (0, then x·w over ky,
 * kx in order, the taps outside the plane skipped), so the bits are the
 * out-of-place conv's. */
int32_t trk_dw_conv_ring_rows(int32_t c, int32_t ih, int32_t iw, int32_t sh, int32_t pt, int32_t oh, int32_t ow);
void trk_dw_conv_s_in_place(int32_t c, int32_t ih, int32_t iw, int32_t kh, int32_t kw, int32_t sh, int32_t sw,
                            int32_t pt, int32_t pl, int32_t oh, int32_t ow, const float *wt, float *xy, float *ring,
                            int32_t nring);

/* The backwards of the FP32 rows' data-movement layers, shapes batch
 * included (rank <= TFLK_BIN_RANK, row-major): the host trainer writes
 * them with forward operators (docs/training.md), these are the same
 * copies, in tflk's strided copy and pad:
 *   Pad (constant):  dx = dy's window of x's shape at `before` (the pad
 *                    value carries no gradient)
 *   Slice (steps 1): dx = dy placed at `start` in zeros of x's shape
 *   Transpose:       dx = dy transposed back (y's axis d is x's perm[d])
 *   ReduceSum/Mean:  dx[i] = dy[i with the reduced axes at 0]·k (axes:
 *                    bit d reduced; k = 1 for the sum, Size(Y) / Size(X)
 *                    in float for the mean, as the host's Div of the two) */
void trk_pad_grad(int32_t rank, const int32_t *xdims, const int32_t *ydims, const int32_t *before, const float *dy,
                  float *dx);
void trk_slice_grad(int32_t rank, const int32_t *xdims, const int32_t *ydims, const int32_t *start, const float *dy,
                    float *dx);
/* Slice with steps: dx = zeros of x's shape, dy's element k on each axis at start + k·step (the host's
 * spread-and-pad of dy, copies; a negative step places dy downwards from start) */
void trk_slice_step_grad(int32_t rank, const int32_t *xdims, const int32_t *ydims, const int32_t *start,
                         const int32_t *step, const float *dy, float *dx);
void trk_transpose_grad(int32_t rank, const int32_t *xdims, const int32_t *perm, const float *dy, float *dx);
void trk_reduce_grad(int32_t rank, const int32_t *xdims, uint32_t axes, float k, const float *dy, float *dx);

/* The backward of an element-wise layer of x and a constant c of x's shape
 * (the seed's FP32 Add/Sub/Mul/Div rows: no broadcasting), op TFLK_ADD,
 * TFLK_SUB, TFLK_MUL or TFLK_DIV; c_first: y = c ∘ x (Sub only; Div's c is
 * the divisor). Per element, the host graph's forward operators:
 *   Add: dx = dy, dc = dy;   Sub x − c: dx = dy, dc = −dy;   c − x: dx = −dy, dc = dy
 *   Mul: dx = dy·c, dc = dy·x;   Div x / c: dx = dy / c (c is never trained)
 * dx or dc NULL: not wanted; dx may be dy (each element is read before it
 * is written); x is read by Mul's dc only. */
void trk_eltwise_grad(int32_t op, int32_t c_first, int64_t n, const float *dy, const float *x, const float *c,
                      float *dx, float *dc);

/* The backward of y = a / b, a and b two activations of one shape (b the
 * divisor), in the host graph's operations and order (train_autodiff.c's
 * Div rule): da = dy / b,  db = −((dy·y) / b), y the forward's quotient.
 * da or db NULL: not wanted; either may be dy (each element is read before
 * it is written). */
void trk_div_grad(int64_t n, const float *dy, const float *y, const float *b, float *da, float *db);

/* The backward of y = a / b, a and b two activations of one rank broadcast
 * against each other (seed 001's Div row allows broadcasting; numpy's rule
 * at equal ranks: each pair of dims equal or one of them 1, ydims the
 * larger), b the divisor: the host graph's
 *   da = ReduceToShape(dy / b, a's shape)
 *   db = ReduceToShape(−((dy·y) / b), b's shape)
 * in one walk of dy in row-major order, each element's value added into
 * the element of da and of db it broadcasts from, from 0 (ReduceToShape's
 * order: the host's bits). y has ydims, b bdims; da (adims) or db (bdims)
 * NULL: not wanted; neither may alias dy, y or b. Rank <= TFLK_BIN_RANK. */
void trk_div_bcast_grad(int32_t rank, const int32_t *ydims, const int32_t *adims, const int32_t *bdims,
                        const float *dy, const float *y, const float *b, float *da, float *db);

/* The backward of a Concat of two values a and b, each of `outer` rows (a
 * row: a's ra elements, then b's rb): the host's Slices of dy, copies.
 * da or db NULL: not wanted. */
void trk_concat_grad(int64_t outer, int64_t ra, int64_t rb, const float *dy, float *da, float *db);

/* The forward of a Concat of two values over the input's own buffer: buf
 * holds the input a, outer rows of ra floats; afterwards it holds the
 * output, outer rows of a's row then b's rb floats (b_first: b's row
 * first). Copies only, the bits of an out-of-place Concat. buf must have
 * outer·(ra + rb) floats; b must not overlap them. */
void trk_concat_in_place(int64_t outer, int64_t ra, int64_t rb, int32_t b_first, const float *b, float *buf);

/* acc += a: a second gradient of a value read twice (a residual's skip),
 * as the host graph's Sum of the two */
void trk_grad_add(int64_t n, const float *a, float *acc);

/* SoftmaxCrossEntropyGrad of scores [batch, classes] against labels:
 * ds = scale·(softmax(s) − onehot(label)), scale = dL / D (D = batch for the
 * mean, 1 for the sum). The softmax's exponentials are tflk_expf_d's (e^x
 * in double rounded once), summed in double. Returns the first sample whose
 * label is outside [0, classes), or −1. */
int64_t trk_softmax_xent_grad(int64_t batch, int64_t classes, const float *scores, const int64_t *labels, float scale,
                              float *ds);

/* ConvGrad of a 2-D NCHW convolution, Y[n,m,oy,ox] = Σ_{c in m's group,
 * ky, kx} X[n, c, oy·s − p + ky·d, ox·s − p + kx·d]·W[m, c − c0, ky, kx] (+B[m]):
 *   dX[n,c,iy,ix] += dY·W,  dW[m,cl,ky,kx] += dY·X,  dB[m] += dY
 * (each of dx, dw, db may be NULL: not wanted; the others are zeroed
 * first). */
typedef struct trk_conv {
    int64_t n, c_in, ih, iw; /* X */
    int64_t m, cg, kh, kw;   /* W [m, cg, kh, kw], cg = c_in / group */
    int64_t oh, ow, group;
    int64_t s[2], p[2], d[2]; /* strides, leading pads, dilations (H, W) */
} trk_conv;
void trk_conv_grad(const trk_conv *g, const float *dy, const float *x, const float *w, float *dx, float *dw,
                   float *db);

/* The ONNX ai.onnx.preview.training optimizers per element, in the
 * operator documents' order (x may alias xo and the state its output: the
 * update in place):
 *   Momentum: g = norm·x + G; v' = alpha·v + b·g (b = T > 0 ? beta : 1);
 *             standard x' = x − r·v', Nesterov x' = x − r·(g + alpha·v')
 *   Adam:     g = norm·x + G; v' = alpha·v + (1 − alpha)·g;
 *             h' = beta·h + (1 − beta)·g²; x' = (1 − norm_post)·(x − r·v'/(√h' + eps))
 *             with r = trk_adam_rate(R, alpha, beta, T)
 *   Adagrad:  g = norm·x + G; h' = h + g²; x' = x − r·g/(√h' + eps),
 *             r = R / (1 + T·decay) */
typedef enum trk_opt_kind { TRK_MOMENTUM = 0, TRK_ADAM = 1, TRK_ADAGRAD = 2 } trk_opt_kind;
typedef struct trk_opt {
    int32_t kind;     /* trk_opt_kind */
    float r;          /* this step's rate (Adam: bias-corrected; Adagrad: decayed) */
    float alpha, beta; /* Momentum: alpha and b; Adam: alpha, beta */
    float epsilon, norm, norm_post;
    int32_t nesterov;
} trk_opt;
/* s1, s2: the state (Momentum v; Adam v, h; Adagrad h), s2 only for Adam */
void trk_opt_step(const trk_opt *o, int64_t n, const float *x, const float *g, const float *s1, const float *s2,
                  float *xo, float *s1o, float *s2o);
/* Adam's bias-corrected rate: T > 0 ? R·√(1 − betaᵀ)/(1 − alphaᵀ) : R (the
 * powers by squaring in double, rounded once) */
float trk_adam_rate(float r, float alpha, float beta, int64_t t);

/* A Gemm layer y = x·Wᵀ + b at batch 1 (W [o, k]: B transposed), its
 * backward and its update in one pass (the in-place update of Lin et al.:
 * no [o, k] gradient buffer): dx [k] = Σ_o dy[o]·W[o, ·] first (the weights
 * before the update; dx NULL: not wanted), then per output channel the
 * gradient row dW[o, ·] = dy[o]·x (into row [k]) and the optimizer step of
 * that row of W and of its state; the bias's gradient is dy. w_s1/w_s2 NULL
 * with w frozen (train_w 0), likewise b. These are the host graph's
 * gradients at batch 1 (dW = dYᵀ·X, dB = Σ_batch dY, dX = dY·W). */
void trk_fc_backward_update(const trk_opt *o, int32_t k, int32_t n_out, const float *x, float *w, float *b,
                            const float *dy, float *dx, int32_t train_w, float *w_s1, float *w_s2, float *b_s1,
                            float *b_s2, float *row);

#ifdef __cplusplus
}
#endif

#endif
