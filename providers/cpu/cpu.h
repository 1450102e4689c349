/*
 * cpu: the fast host CPU provider. Its kernels run on XNNPACK (chosen by
 * measurement, docs/cpu.md) with intra-op threads from a pthreadpool the
 * provider instance owns; cpu_ref stays the reference and the fallback for
 * every node these kernels decline.
 */
#ifndef SY_CPU_H
#define SY_CPU_H

#include "switchyard/sy_sdk.h"

#include <pthreadpool.h>
#include <stdbool.h>
#include <stdint.h>
#include <xnnpack.h>

/* One per provider instance (per environment): its options and its pool. */
typedef struct cpu_provider {
    uint32_t threads;     /* intra-op workers ([provider.cpu] threads) */
    bool threads_set;     /* [provider.cpu] threads was given: it wins over the session's */
    int isa;              /* cpu_isa of the hand-written parts ([provider.cpu] isa) */
    bool vbmi;            /* isa is CPU_ISA_AVX512 and the CPU has VBMI: cpu_map_bytes's 64-byte path */
    pthreadpool_t pool;   /* NULL when threads == 1: work runs on the caller */
    bool own_pool;        /* pool is a cpu_pool (cpu_pool.c), not libpthreadpool's */
    bool fuse_bn;         /* fold BatchNormalization into the Conv before it */
    bool fuse_activation; /* Relu/Clip after a Conv become the Conv's output clamp */
    bool nhwc_chains;     /* consecutive Convs stay in NHWC between them */
    bool own_q8conv;      /* int8_conv = own: QConv on cpu_q8conv.c where it fits, else XNNPACK */
} cpu_provider;

/* One per session when [provider.cpu] threads is not set: a pool of the
 * session's threads (ABI 1.5 session_threads), made at session_begin and
 * used by that session's kernels alone. */
typedef struct cpu_session {
    uint32_t threads;   /* the session's thread count (1: no pool) */
    pthreadpool_t pool; /* NULL when threads == 1 */
    bool own_pool;
} cpu_session;

extern const sy_host_api *cpu_host;

/* The pool the node's kernels split over: its session's when the provider
 * follows the session, else the environment's ([provider.cpu] threads).
 * In prepare and compile (the node is placed on this provider). */
pthreadpool_t cpu_node_pool(const sy_node *n);

/* The pool for a piece of work, or NULL to run it on the caller. Handing
 * work to the pool means waiting for every worker to check in, which on a
 * busy machine can cost a scheduler slice (milliseconds); below about a
 * million multiply-adds (or elements moved) that costs more than it saves.
 * Which ops run threaded depends on their size only, never on the results. */
#define CPU_PARALLEL_MIN_WORK (1u << 20)
static inline pthreadpool_t cpu_pool_for(pthreadpool_t pool, double work)
{
    return work >= (double)CPU_PARALLEL_MIN_WORK ? pool : NULL;
}

/* element count of a tensor whose shape the session has checked */
static inline size_t cpu_numel(const sy_tensor *t) { return (size_t)sy_tensor_numel(t); }

/* the 8-bit storage types of the QDQ kernels */
static inline bool cpu_is_q8(sy_dtype dt) { return dt == SY_DT_INT8 || dt == SY_DT_UINT8; }

/* false, with `text` in `why` when there is room (accepts() hooks) */
bool cpu_decline(char *why, size_t len, const char *text);

/* ---- constant quantization parameters of the folded nodes (cpu_qparams.c) ---- */
/* a constant positive finite float32 scalar */
bool cpu_q_scale_scalar(const sy_tensor *t, float *v);
/* a constant 8-bit scalar zero point of type dt (absent: 0) */
bool cpu_q_zp_scalar(const sy_tensor *t, sy_dtype dt, int32_t *v);
/* [lo, hi] of ydt's codes narrowed by the node's fused act_min / act_max, as cpu_ref's q_act_clamp */
void cpu_q_act_range(const sy_node *n, sy_dtype ydt, float sy, int32_t zy, int32_t *lo, int32_t *hi);
/* the requantization form the session resolves for the node on this provider (the host answers the
 * `requant` attribute: model, session, [provider.cpu], the plugin default, onnx); false for an unknown one */
bool cpu_q_rq_mode(const sy_node *n, sy_rq_mode *mode);

/* ---- Conv (cpu_conv.c) ---- */
typedef struct cpu_conv_geom {
    int64_t n, c, m, group;
    int64_t ih, iw, oh, ow, kh, kw, sh, sw, dh, dw;
    int64_t pt, pl, pb, pr;
} cpu_conv_geom;
bool cpu_conv_accepts(const sy_node *n, char *why, size_t len);
/* ONNX rules (auto_pad, pads, strides, dilations) for 1-D (height 1) and 2-D */
sy_status *cpu_conv_geometry(const sy_node *n, const sy_tensor *x, const sy_tensor *w, cpu_conv_geom *g);
/* the node's constant weights in XNNPACK's [out][kh][kw][in] order and its
 * bias (zeros without one), fp32, malloc'ed */
sy_status *cpu_conv_weights(const sy_node *n, const cpu_conv_geom *g, float **w, float **b);
/* an XNNPACK NHWC convolution with the output clamped to [lo, hi] */
sy_status *cpu_conv_create(const cpu_conv_geom *g, const float *w, const float *b, float lo, float hi,
                           xnn_operator_t *op);
sy_status *cpu_conv_register(const sy_host_api *host, sy_plugin *p);
/* QConv and QLinearConv on XNNPACK's integer convolutions (cpu_qconv.c) */
sy_status *cpu_qconv_register(const sy_host_api *host, sy_plugin *p);
/* QuantizeLinear / DequantizeLinear per tensor, float32 <-> 8-bit (cpu_qdq.c) */
sy_status *cpu_qdq_register(const sy_host_api *host, sy_plugin *p);
/* QAdd / QSub / QMul on 8-bit codes through a 256 x 256 table of the shared element function (cpu_qelem.c) */
sy_status *cpu_qelem_register(const sy_host_api *host, sy_plugin *p);
/* QMatMul on 8-bit codes with B read in place, cpu_ref's codes (cpu_qmatmul.c) */
sy_status *cpu_qmatmul_register(const sy_host_api *host, sy_plugin *p);
/* QSoftmax / QLogSoftmax on 8-bit codes from a table of the 256 exponentials, cpu_ref's codes (cpu_qsoftmax.c) */
sy_status *cpu_qsoftmax_register(const sy_host_api *host, sy_plugin *p);
/* QConcat on 8-bit codes: copies, or a 256-entry requantization table per input, cpu_ref's codes (cpu_qconcat.c) */
sy_status *cpu_qconcat_register(const sy_host_api *host, sy_plugin *p);
/* QMaxPool on 8-bit NCHW codes: the window's largest code, mapped once, cpu_ref's codes (cpu_qpool.c) */
sy_status *cpu_qpool_register(const sy_host_api *host, sy_plugin *p);

/* ---- Relu, Clip, BatchNormalization, MaxPool on NCHW (cpu_eltwise.c) ---- */
sy_status *cpu_eltwise_register(const sy_host_api *host, sy_plugin *p);
/* [lo, hi] of a Relu or Clip node whose bounds are constants; false otherwise */
bool cpu_activation_bounds(const sy_node *n, float *lo, float *hi);
/* MaxPool 2-D: what the kernel and a chain take, and the window geometry
 * (end padding grown so floor rounding gives ceil_mode's output size) */
typedef struct cpu_pool_geom {
    int64_t n, c, ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
} cpu_pool_geom;
bool cpu_maxpool_accepts(const sy_node *n, char *why, size_t len);
sy_status *cpu_maxpool_geometry(const sy_node *n, cpu_pool_geom *g);
/* per-channel a, b with BatchNormalization(x) = a * x + b (constant inputs) */
sy_status *cpu_bn_coefficients(const sy_node *n, int64_t channels, float *a, float *b);

/* ---- fused NHWC regions (cpu_chain.c): the provider's group/compile ---- */
sy_status *cpu_chain_group(void *state, const sy_node *const *nodes, uint32_t n, uint32_t *group_of);
sy_status *cpu_chain_compile(void *state, const sy_partition *p, void **compiled);
sy_status *cpu_chain_run(void *compiled, const sy_kernel_io *io);
void cpu_chain_release(void *compiled);

/* The code paths of the hand-written parts (cpu_layout.c); XNNPACK picks
 * its own micro-kernels from cpuinfo. Ordered: each level has the ones
 * below it, so code with an AVX2 form only tests isa >= CPU_ISA_AVX2.
 * CPU_ISA_AVX512 is AVX-512 F/BW/VL plus VNNI (vpdpbusd): only the integer
 * convolutions have a form of their own there (cpu_q8conv_vnni.c). */
typedef enum cpu_isa { CPU_ISA_PORTABLE = 0, CPU_ISA_AVX2 = 1, CPU_ISA_AVX512 = 2 } cpu_isa;
cpu_isa cpu_isa_detect(void); /* the best path this CPU runs */
/* AVX-512 VBMI (vpermi2b) besides CPU_ISA_AVX512: the byte tables of cpu_map_bytes */
bool cpu_has_vbmi(void);
/* y[i] = map[x[i]] for n bytes: the 256-entry requantization tables of the 8-bit
 * kernels (cpu_bytemap.c); vbmi: 64 bytes per step, else one at a time. Same bytes. */
void cpu_map_bytes(bool vbmi, const uint8_t map[256], const uint8_t *x, uint8_t *y, size_t n);

/* The provider's own integer convolution (cpu_q8conv.c): NCHW 8-bit codes in
 * and out, 16-bit products summed exactly in int32, the ONNX requantization
 * in single precision (XNNPACK's bytes). */
typedef struct cpu_q8conv {
    cpu_conv_geom g;
    int64_t gic, goc, gicp, cs, nmb, hp, wp; /* gicp: gic rounded up to even; cs: group * gicp */
    int64_t ntap, npair; /* packed taps, and input pairs per tap */
    bool xpair;          /* one input channel: pairs of horizontally adjacent taps (see cpu_q8conv.c) */
    bool s1;             /* stride 1: the NCHW kernel of cpu_q8conv_s1.c */
    int64_t cpairs, goc6, plane; /* s1: input channel pairs, goc rounded up to 6, padded plane (pixels) */
    int16_t *w;      /* w - w_zp, [group][block of 16 out][tap][in pair][16][2] */
    int32_t *bias;   /* [group][block][16] */
    float *mult;     /* s_x * s_w[m] / s_y, [group][block][16] */
    int64_t *tapoff; /* per tap, its offset in the padded NHWC int16 input */
    /* AVX-512 VNNI (cpu_q8conv_vnni.c): codes as unsigned bytes in quads, weights as int8 */
    bool vnni;           /* taken when isa = avx512 and every w - w_zp fits int8 */
    bool xquad;          /* vnni, one input channel, stride 1: quads of horizontally adjacent taps */
    int64_t quads, goc8, wq; /* input quads per group, goc rounded up to 8, packed row width (pixels, per phase) */
    int8_t *w8;          /* w - w_zp, [group][tile of 8 out][quad][tap][8][4] */
    uint8_t zb;          /* the byte of x = x_zp in the packed input (padding) */
    bool u8;
    int32_t xz, yz, lo, hi; /* zero points; output code range (fused activation) */
    cpu_isa isa;
} cpu_q8conv;
/* the shapes it takes (else XNNPACK): 8 or more output channels per group, sums inside int32 */
bool cpu_q8conv_fits(const cpu_conv_geom *g);
/* w: ONNX [m][gic][kh][kw] codes (int8, or uint8 when u8); bias and mult per output channel */
sy_status *cpu_q8conv_init(cpu_q8conv *q, const cpu_conv_geom *g, const uint8_t *w, bool u8, int32_t wz,
                           const int32_t *bias, const float *mult, int32_t xz, int32_t yz, int32_t lo, int32_t hi,
                           cpu_isa isa);
void cpu_q8conv_free(cpu_q8conv *q);
size_t cpu_q8conv_scratch(const cpu_q8conv *q); /* bytes of the run's scratch */
void cpu_q8conv_run(const cpu_q8conv *q, pthreadpool_t pool, const void *x, void *y, void *scratch);
/* the stride-1 case (cpu_q8conv_s1.c), chosen by cpu_q8conv_init */
bool cpu_q8s1_fits(const cpu_conv_geom *g);
sy_status *cpu_q8s1_init(cpu_q8conv *q, const uint8_t *w, int32_t wz, const int32_t *bias, const float *mult);
size_t cpu_q8s1_scratch(const cpu_q8conv *q);
void cpu_q8s1_run(const cpu_q8conv *q, pthreadpool_t pool, const void *x, void *y, void *scratch);
/* any stride on vpdpbusd (cpu_q8conv_vnni.c), chosen by cpu_q8conv_init: fits when the CPU path is
 * CPU_ISA_AVX512 and every w - w_zp lies in [-128, 127] */
bool cpu_q8v_fits(const cpu_q8conv *q, const uint8_t *w, int32_t wz);
sy_status *cpu_q8v_init(cpu_q8conv *q, const uint8_t *w, int32_t wz, const int32_t *bias, const float *mult);
size_t cpu_q8v_scratch(const cpu_q8conv *q);
void cpu_q8v_run(const cpu_q8conv *q, pthreadpool_t pool, const void *x, void *y, void *scratch);

/* NCHW <-> NHWC repacking of n images of c channels x hw pixels; the f16
 * kinds convert while they move. The NHWC side has pixel stride ld >= c (a
 * channel range of a wider NHWC tensor). Split over the pool. */
typedef enum cpu_move_kind {
    CPU_TO_NHWC_F32,     /* f32 NCHW -> f32 NHWC */
    CPU_TO_NCHW_F32,     /* f32 NHWC -> f32 NCHW */
    CPU_F16_TO_NHWC_F32, /* f16 NCHW -> f32 NHWC */
    CPU_F32_TO_NCHW_F16, /* f32 NHWC -> f16 NCHW, round to nearest even */
    CPU_TO_NHWC_8,       /* 8-bit codes NCHW -> NHWC */
    CPU_TO_NCHW_8        /* 8-bit codes NHWC -> NCHW */
} cpu_move_kind;
void cpu_layout_move(pthreadpool_t pool, cpu_isa isa, cpu_move_kind kind, const void *src, void *dst, int64_t n,
                     int64_t c, int64_t hw, int64_t ld);

/* exp, sigmoid and tanh in place over n floats; both paths give the same
 * bits (cpu_vmath.c). exp clamps its argument to [-88.376, 88.376] and
 * wants no NaN. */
void cpu_exp_f32(cpu_isa isa, float *x, size_t n);
void cpu_sigmoid_f32(cpu_isa isa, float *x, size_t n);
void cpu_tanh_f32(cpu_isa isa, float *x, size_t n);

/* a Dropout mask at inference: every element kept (bool true; 1.0 for the
 * float masks of Dropout before opset 10). false for another element type */
bool cpu_mask_dtype_ok(sy_dtype dt);
void cpu_fill_mask(sy_tensor *mask);

/* LSTM (cpu_lstm.c); Concat and Dropout in the graph's layout (cpu_copy.c) */
sy_status *cpu_lstm_register(const sy_host_api *host, sy_plugin *p);
sy_status *cpu_copy_register(const sy_host_api *host, sy_plugin *p);
/* Softmax over the last axis (or, before opset 13, the coerced 2-D rows), fp32 (cpu_softmax.c) */
sy_status *cpu_softmax_register(const sy_host_api *host, sy_plugin *p);

#endif
