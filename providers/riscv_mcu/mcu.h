/* riscv_mcu internals shared by its source files. */
#ifndef SY_MCU_H
#define SY_MCU_H

#include "tfl_params.h"
#include "tfl_unary8.h"
#include <switchyard/ext/sy_mcu_codegen.h> /* the codegen extension this plugin publishes */
#include "qk.h"
#include "qrnn_params.h"

#include <stdio.h>

extern const sy_host_api *mcu_H;

struct mcu_env;

/* target chips (targets.md §5.4) */
typedef struct mcu_chip {
    const char *name;
    const char *isa;
    uint32_t mhz;
    uint64_t sram, flash;
    uint64_t default_sram_budget; /* POLICY: ws63 shares its SRAM with the radio stacks and LiteOS */
} mcu_chip;

typedef enum mcu_rules { MCU_RULES_SEED = 0, MCU_RULES_TFLM = 1 } mcu_rules;

/* a package's stack by default: picolibc's own default (0x800) */
#define MCU_DEFAULT_STACK 2048u

/* the provider's state in one environment: its options */
typedef struct mcu_cfg {
    const mcu_chip *chip; /* NULL: no target configured, the provider takes nothing */
    uint64_t sram_budget, flash_budget;
    uint64_t stack_bytes; /* the stack a package reserves (its linker script's __stack_size) */
    mcu_rules rules;
    struct mcu_env *env; /* the plugin's state in the same environment */
} mcu_cfg;

/* the rules files' helpers (mcu_rules.c): a decline with its reason and
 * text; input/output i, NULL when the node has fewer; an ONNX recurrent
 * op's direction: 1 or 2 directions (*reverse for "reverse"), 0 unknown */
void mcu_decline(sy_claim *c, sy_reason r, const char *fmt, ...) SY_PRINTF(3, 4);
const sy_tensor *mcu_in_opt(const sy_node *n, uint32_t i);
const sy_tensor *mcu_out_opt(const sy_node *n, uint32_t i);
int mcu_rnn_dirs(const sy_node *n, int32_t *reverse);

/* Table A and the conversion-time rejections (mcu_rules.c) */
void mcu_check_node(const mcu_cfg *cfg, const sy_node *n, sy_claim *claim);

/* switchyard.quant and ONNX QuantizeLinear/DequantizeLinear/Reshape (mcu_quant.c) */
bool mcu_quant_domain(const sy_node *n);
/* false: declined (claim filled) */
bool mcu_quant_check(const sy_node *n, sy_claim *claim);

/* kernel kinds */
typedef enum mcu_kind {
    MK_CONV_S8, MK_CONV_F32, MK_FC_S8, MK_FC_F32, MK_POOL_S8, MK_POOL_F32, MK_SOFTMAX_S8, MK_SOFTMAX_F32,
    MK_LOGSM_S8, /* int8 LOG_SOFTMAX (tflk_logsoftmax.c) */
    MK_LSTM, MK_LSTM8, MK_COPY,
    MK_LUT_S8, /* int8 one-input ops: a 256-entry table (tfl_unary8.h) */
    MK_BIN_S8, MK_BIN_F32, /* ADD SUB MUL (tflk_binary.c) */
    MK_TRANSPOSE,          /* tflk_strided.c */
    /* mcu_nn.c: TRANSPOSE_CONV / ConvTranspose, BATCH_MATMUL / batched MatMul / Gemm transA, CONV_3D / 5-D Conv */
    MK_TCONV_S8, MK_TCONV_F32, MK_BMM_S8, MK_BMM_F32, MK_CONV3D_F32,
    MK_CONV3D_S8, /* int8 CONV_3D (FULL_QUANT form): tflk_conv3d_s8 */
    MK_LSTM_ONNX, /* mcu_lstm.c: ONNX LSTM on tflk_lstm.c */
    MK_GRU_ONNX,  /* mcu_gru.c: ONNX GRU on tflk_gru.c */
    MK_RNN_ONNX,  /* mcu_rnn.c: ONNX RNN (fp32) on tflk_rnn.c */
    /* mcu_ops.c: data movement, fp32 one-input ops, comparisons, (de)quantization */
    MK_VIEW,       /* outputs as strided views of one input (tflk_strided.c): SLICE, SPLIT, TILE, ... */
    MK_PAD,        /* tflk_move.c */
    MK_CONCAT,     /* tflk_move.c: CONCATENATION, PACK */
    MK_GATHER,     /* tflk_move.c */
    MK_GATHER_ND,  /* tflk_move.c */
    MK_SCATTER_ND, /* tflk_move.c */
    MK_SCATTER_ND_SET, MK_SCATTER_EL, /* tflk_move.c: ONNX ScatterND, ScatterElements/Scatter */
    MK_UNARY_F32,  /* tflk_unary.c */
    MK_NOT_B,      /* tflk_unary.c: LOGICAL_NOT */
    MK_QUANTIZE_F32, MK_REQUANT_S8, MK_DEQUANTIZE_S8, /* tflk_unary.c */
    MK_MAXMIN_S8,  /* tflk_binary.c, raw int8 codes */
    MK_CMP_F32, MK_CMP_B, /* tflk_binary.c: comparisons and logical ops, bool out */
    MK_SHIFT_U8,          /* tflk_binary.c: ONNX BitShift on uint8 */
    MK_DIV_S8,            /* tflk_binary.c: int8 DIV (tflk_fixed.c's tflk_div_s8) */
    MK_IDIV_S8,           /* tflk_binary.c: ONNX Div of int8 tensors, the codes as integers */
    MK_PRELU_S8,          /* tflk_binary.c: int8 PRELU with an int8 alpha (TFLite's integer form) */
    MK_BIN8F_S8,          /* tflk_binary.c: int8 POW, PRELU with an fp32 alpha, through float (tflk_bin8f) */
    /* mcu_shape.c: the shape / normalization / resize family (MK_RESIZE first) */
    MK_RESIZE, MK_NORM, MK_CONST, MK_FILL, MK_CAST, MK_REVSEQ, MK_TRILU, MK_SELECT, MK_ONEHOT, MK_GATHER_EL,
    MK_EINSUM, /* tflk_einsum.c: ONNX Einsum */
    MK_UNIQUE, /* tflk_unique.c: UNIQUE, ONNX Unique (a data-dependent output length) */
    /* switchyard.quant (NCHW int8, plugin_sdk/kernels/qk.c) and ONNX Quantize/DequantizeLinear */
    MK_QCONV, MK_QPOOL, MK_QMM, MK_QADD, MK_QUANT, MK_DEQUANT, MK_QRNN,
    MK_QAVGPOOL, /* qk.c: QAveragePool (the qk_pool of QMaxPool) */
    MK_QNORM,    /* QNorm: qk.c's dequantize, tflk_norm.c, qk.c's quantize */
    MK_QSOFTMAX, /* qk_softmax.c */
    MK_QTCONV,   /* qk.c: QConvTranspose (Table B #113 int8) on the qk_conv of QConv */
    MK_QCONCAT,  /* qk.c: QConcat (Table B #17 Concat, int8): copies or requantizes each input */
    /* mcu_reduce.c: reductions and the ops along one axis (tflk_reduce.c) */
    MK_REDUCE, MK_AXIS, MK__COUNT
} mcu_kind;

struct mcu_sess;

typedef struct mcu_node {
    mcu_kind kind;
    /* the provider's state for the session this kernel belongs to (ABI 1.2
     * node_provider_session): run records into its capture, if it has one */
    const struct mcu_sess *sess;
    char name[96], op[40];
    union {
        tflk_conv conv;
        tflk_fc fc;
        tflk_pool pool;
        tflk_softmax sm;
        struct {
            tflk_logsm8 p;
            int32_t rows, depth;
        } lsm; /* MK_LOGSM_S8 */
        tflk_lstm lstm;
        tflk_lstm8 lstm8;
        tfl_unary8 lut;
        tflk_binary bin;
        tflk_bin8f b8f; /* MK_BIN8F_S8 */
        tflk_strided tr;
        tflk_tconv tconv;
        tflk_bmm bmm;
        tflk_conv3d c3;
        tflk_gru gru;
        tflk_rnn rnn;
        tflk_pad pad;
        tflk_concat cat;
        tflk_gather gat;
        tflk_gather_nd gnd;
        tflk_scatter_el sel;
        tflk_unary un;
        tflk_reduce red; /* MK_REDUCE */
        tflk_axisop ax;  /* MK_AXIS */
        /* mcu_shape.c */
        tflk_resize rz;
        tflk_norm nrm;
        tflk_select sel3;
        tflk_revseq rs;
        tflk_trilu tri;
        tflk_onehot oh;
        struct {
            tflk_einsum p;
            int32_t dt; /* TFLK_F32, TFLK_S8, TFLK_U8, TFLK_S32 */
        } ein;          /* MK_EINSUM */
        struct {
            tflk_unique p;
            int32_t axis; /* Y's axis of values (0: the flattened input or TFLite's 1-D one) */
            bool bounded; /* Y, indices and counts planned at their bound (ABI 1.6): a package can hold them */
        } uq;             /* MK_UNIQUE */
        struct {
            int32_t from, to, n;
        } cast; /* TFLK_F32 ... element codes */
        struct {
            int32_t esize, n, in; /* in: the input holding the value; -1: `own` */
        } fill;
        struct {
            float scale;
            int32_t zp, in_zp, mult, shift, n;
        } tq; /* the TFLite QUANTIZE / DEQUANTIZE kinds */
        qk_conv qconv;
        qk_pool qpool;
        qk_mm qmm;
        qk_add_bc qadd; /* MK_QADD: q, and the strides when q.binner == -1 */
        qk_softmax qsm;
        qk_concat qcat; /* MK_QCONCAT: inner / zx / copy in `own`, rq in q_rq */
        struct {
            tflk_norm p;
            tflk_axisop ax; /* LpNormalization (lp): tflk_reduce.c's LPNORM */
            float sx, sy;
            int32_t zx, zy, xdt, ydt, n, lp;
        } qn; /* MK_QNORM */
        qrnn_params qrnn; /* owns its arrays (qrnn_params_free) */
        struct {
            float scale;
            int32_t zp, dt, n;
        } qdq;
    } u;
    /* owned arrays of the switchyard.quant kinds: q_n requantizers, biases, weight zero points */
    qk_rq *q_rq;
    int32_t *q_bias, *q_zp;
    int32_t q_n, q_nzp;
    /* the input holding the weights / second operand of MK_QCONV, MK_QMM,
     * MK_QADD: 3 for switchyard.quant and QLinear*, 1 for ConvInteger and
     * MatMulInteger */
    int32_t q_w;
    tfl_owned o;
    /* MK_VIEW: n_views strided views of input view_in, output i from byte
     * offset view_off[i] of it; MK_CONCAT's rows/scale/bias (all in `own`) */
    tflk_strided *views;
    int64_t *view_off;
    int32_t n_views, view_in;
    void *own; /* one allocation behind views / view_off / the concat arrays */
    /* ONNX Conv/Gemm/MatMul (mcu_onnx.c): the kernel's weights and bias as
     * prepared copies (in `own`): the TFLite kernels take W as OHWI /
     * [units, depth] and the bias pre-scaled, so ONNX's layouts are
     * rearranged once at prepare; the package ships these copies. NULL:
     * the node's own inputs 1 and 2 */
    const float *wt, *bt;
    size_t wt_bytes, bt_bytes;
    /* ONNX NCHW on the NHWC conv/pool kernels: `pre` copies x into the
     * scratch as NHWC, the kernel writes its NHWC output after it, `post`
     * copies that back into y as NCHW (tflk_strided_copy) */
    int32_t nchw;
    tflk_strided pre, post;
    size_t pre_floats; /* the NHWC input's floats: the kernel's output starts there in the scratch */
    /* ONNX Softmax: the ONNX arithmetic of cpu_ref (summed in double, times
     * the reciprocal: tflk_softmax_f32_acc64) rather than TFLite's */
    int32_t sm_acc64;
    /* MK_SOFTMAX_F32 as LOG_SOFTMAX / ONNX LogSoftmax (tflk_log_softmax_f32) */
    int32_t sm_log;
    /* the constant arrays of the params and their lengths (for emission) */
    int32_t n_mult;
    /* inputs known at plan time (weights): bit i for input i. The core does
     * not fill sy_tensor.domain, so this is how a buffer is told apart from
     * an activation of the workspace */
    uint32_t const_mask;
} mcu_node;

/* one recorded buffer */
typedef struct mcu_buf {
    const void *data;
    size_t nbytes;
    sy_dtype dtype;
    bool is_const; /* a weight, kept in flash */
    const char *name;
    const sy_quant_params *quant;
} mcu_buf;

#define MCU_MAX_IO 24
typedef struct mcu_rec {
    const mcu_node *k;
    uint32_t n_in, n_out;
    mcu_buf in[MCU_MAX_IO], out[MCU_MAX_IO];
    void *scratch;
    size_t scratch_bytes;
} mcu_rec;

/* The record of one session's riscv_mcu kernels (the extension's opaque
 * sy_mcu_capture). It belongs to that session, not to the process or the
 * environment: only the kernels prepared for the session reach it (through
 * mcu_node.sess), so runs of other sessions never enter it, and two
 * captures share nothing (docs/mcu.md, "Where the capture lives"). */
typedef struct sy_mcu_capture {
    struct mcu_env *env;   /* the environment of the extension table that made it */
    struct mcu_sess *sess; /* NULL once the session is released */
    struct sy_session *session;
    bool on;  /* inside capture_run: the kernels record */
    bool ran; /* a capture_run finished: the record is a whole run */
    mcu_rec *recs;
    uint32_t n, cap;
    bool overflow;
} mcu_capture;

/* The provider's state for one session (session_begin): the environment's
 * options, and the capture when the session was made by the extension's
 * session_create. Used by that session's thread only. */
typedef struct mcu_sess {
    const mcu_cfg *cfg;
    mcu_capture *cap;
} mcu_sess;

sy_status *mcu_quant_prepare(sy_node *n, mcu_node *k);
/* ConvInteger / MatMulInteger: the ops whose uint8 activations the MCU takes (ops-mcu.md Table B #86, #105) */
bool mcu_quant_takes_u8(const sy_node *n);

/* the transposed-conv, batched-matmul and 3-D conv rows (mcu_nn.c): does
 * it take the node, the seed's rules (false: declined, claim filled),
 * prepare, run */
bool mcu_nn_has(const sy_node *n);
bool mcu_nn_check(const mcu_cfg *cfg, const sy_node *n, sy_claim *claim);
sy_status *mcu_nn_prepare(sy_node *n, mcu_node *k);
sy_status *mcu_nn_run(const mcu_node *k, const sy_kernel_io *io);
/* ONNX LSTM (mcu_lstm.c, reached through mcu_nn.c): Table B #20's rules, prepare, run */
bool mcu_lstm_check(const sy_node *n, sy_claim *claim);
sy_status *mcu_lstm_prepare(sy_node *n, mcu_node *k);
sy_status *mcu_lstm_run(const mcu_node *k, const sy_kernel_io *io);
/* ONNX GRU (mcu_gru.c, the same way): Table B #82's rules, prepare, run */
bool mcu_gru_check(const sy_node *n, sy_claim *claim);
sy_status *mcu_gru_prepare(sy_node *n, mcu_node *k);
sy_status *mcu_gru_run(const mcu_node *k, const sy_kernel_io *io);
/* ONNX RNN in fp32 (mcu_rnn.c, the same way): Table B #114's rules, prepare, run */
bool mcu_rnn_check(const sy_node *n, sy_claim *claim);
sy_status *mcu_rnn_prepare(sy_node *n, mcu_node *k);
sy_status *mcu_rnn_run(const mcu_node *k, const sy_kernel_io *io);

/* the TFLite ops of mcu_ops.c: does it build `op` (fp32/int8/bool as the
 * input says), its prepare and run */
bool mcu_ops_has(const char *op, sy_dtype dt);
sy_status *mcu_ops_prepare(sy_node *n, mcu_node *k);
sy_status *mcu_ops_run(const mcu_node *k, const sy_kernel_io *io);

/* ONNX (domain "") ops of Table B on the same kernels (mcu_onnx.c): does
 * it map the node, Table B's rules (false: declined, claim filled), prepare */
/* GatherElements/ScatterElements parameters, shared by mcu_shape.c and mcu_onnx.c */
sy_status *mcu_elements_params(sy_node *n, const sy_tensor *x, tflk_scatter_el *p);
bool mcu_onnx_has(const sy_node *n);
bool mcu_onnx_check(const mcu_cfg *cfg, const sy_node *n, sy_claim *claim);
sy_status *mcu_onnx_prepare(sy_node *n, mcu_node *k);
sy_status *mcu_quant_run(const mcu_node *k, const sy_kernel_io *io);

/* the reduction family of Tables A and B (mcu_reduce.c): does it take the
 * node's op, its rules (false: declined, claim filled), prepare, run */
bool mcu_reduce_has(const sy_node *n);
bool mcu_reduce_check(const mcu_cfg *cfg, const sy_node *n, sy_claim *claim);
sy_status *mcu_reduce_prepare(sy_node *n, mcu_node *k);
sy_status *mcu_reduce_run(const mcu_node *k, const sy_kernel_io *io);
static inline bool mcu_is_reduce_kind(mcu_kind k) { return k == MK_REDUCE || k == MK_AXIS; }

/* the shape, normalization and resize rows, TFLite and ONNX (mcu_shape.c):
 * does it map the node, the rows' rules (false: declined, claim filled),
 * prepare, and the host run of the kinds from MK_RESIZE on */
bool mcu_shape_has(const sy_node *n);
bool mcu_shape_check(const mcu_cfg *cfg, const sy_node *n, sy_claim *claim);
sy_status *mcu_shape_prepare(sy_node *n, mcu_node *k);
sy_status *mcu_shape_run(const mcu_node *k, const sy_kernel_io *io);

/* a package file being written (mcu_emit.c): `failed` remembers a short write */
typedef struct mcu_out {
    FILE *f;
    bool failed;
} mcu_out;
void mcu_P(mcu_out *o, const char *fmt, ...) SY_PRINTF(2, 3);
sy_status *mcu_open_out(const char *dir, const char *rel, mcu_out *o);
sy_status *mcu_close_out(const char *dir, const char *rel, mcu_out *o);

/* The package's runtime API (mcu_emit_api.c): what mcu_emit found of the
 * graph's inputs and outputs. An output a Unique writes at its bound has
 * the count slot of that Unique (else -1), the axis the count is and the
 * bytes of one item. */
#define MCU_API_PREFIX_MAX 24
#define MCU_API_MAX_COUNTS 64
typedef struct mcu_api_io {
    size_t off, bytes, per;
    int32_t slot, axis;
} mcu_api_io;
typedef struct mcu_api {
    const char *pf; /* the names' prefix: PF_model_create ... */
    const sy_mcu_codegen_request *req;
    const mcu_chip *chip;
    mcu_api_io in[16], out[16];
    uint32_t n_counts;
    int32_t count_bound[MCU_API_MAX_COUNTS]; /* per slot: the Unique's item count */
    uint64_t macs, stack;
} mcu_api;
sy_status *mcu_api_check_prefix(const char *pf);
sy_status *mcu_api_write_header(const char *dir, const mcu_api *a);
/* model.c: the tensor tables and every call but predict's body; then the one-instance calls */
void mcu_api_model_c(mcu_out *o, const mcu_api *a);
void mcu_api_model_c_tail(mcu_out *o, const mcu_api *a);
sy_status *mcu_api_write_main(const char *dir, const mcu_api *a);

/* the package from the record `cap` of a run, for the target and budgets `cfg` (mcu_emit.c) */
sy_status *mcu_emit(const mcu_cfg *cfg, const mcu_capture *cap, const sy_mcu_codegen_request *req, char *summary,
                    size_t len);
/* the QAS-INT8 training package for cfg's chip (mcu_train.c; cfg NULL: refused) */
sy_status *mcu_emit_train(const mcu_cfg *cfg, const sy_mcu_train_request *req, char *summary, size_t len);

/* the kernel sources embedded at build time (mcu_sources.c, generated) */
typedef struct mcu_source {
    const char *name;
    const char *text;
} mcu_source;
extern const mcu_source mcu_sources[];
extern const unsigned mcu_n_sources;

#endif
