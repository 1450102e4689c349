/* riscv_mcu internals shared by its source files. */
#ifndef SY_MCU_H
#define SY_MCU_H

#include "tfl_params.h"
#include "tfl_unary8.h"
#include <switchyard/ext/sy_mcu_codegen.h> /* the codegen extension this plugin publishes */
#include "qk.h"
#include "qrnn_params.h"

extern const sy_host_api *mcu_H;

/* target chips (targets.md §5.4) */
typedef struct mcu_chip {
    const char *name;
    const char *isa;
    uint32_t mhz;
    uint64_t sram, flash;
    uint64_t default_sram_budget; /* POLICY: ws63 shares its SRAM with the radio stacks and LiteOS */
} mcu_chip;

typedef enum mcu_rules { MCU_RULES_SEED = 0, MCU_RULES_TFLM = 1 } mcu_rules;

typedef struct mcu_cfg {
    const mcu_chip *chip; /* NULL: no target configured, the provider takes nothing */
    uint64_t sram_budget, flash_budget;
    mcu_rules rules;
} mcu_cfg;

/* the configuration of the last created provider (emit reads it): the
 * codegen extension v1 has no handle, so "the last environment's provider" is
 * process-wide by its contract (switchyard codegen makes one environment) */
extern mcu_cfg mcu_current;

/* Table A and the conversion-time rejections (mcu_rules.c) */
void mcu_check_node(const mcu_cfg *cfg, const sy_node *n, sy_claim *claim);

/* switchyard.quant and ONNX QuantizeLinear/DequantizeLinear/Reshape (mcu_quant.c) */
bool mcu_quant_domain(const sy_node *n);
/* false: declined (claim filled) */
bool mcu_quant_check(const sy_node *n, sy_claim *claim);

/* kernel kinds */
typedef enum mcu_kind {
    MK_CONV_S8, MK_CONV_F32, MK_FC_S8, MK_FC_F32, MK_POOL_S8, MK_POOL_F32, MK_SOFTMAX_S8, MK_SOFTMAX_F32,
    MK_LSTM, MK_LSTM8, MK_COPY,
    MK_LUT_S8, /* int8 one-input ops: a 256-entry table (tfl_unary8.h) */
    MK_BIN_S8, MK_BIN_F32, /* ADD SUB MUL (tflk_binary.c) */
    MK_TRANSPOSE,          /* tflk_strided.c */
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
    /* switchyard.quant (NCHW int8, plugin_sdk/kernels/qk.c) and ONNX Quantize/DequantizeLinear */
    MK_QCONV, MK_QPOOL, MK_QMM, MK_QADD, MK_QUANT, MK_DEQUANT, MK_QRNN, MK__COUNT
} mcu_kind;

typedef struct mcu_node {
    mcu_kind kind;
    char name[96], op[40];
    union {
        tflk_conv conv;
        tflk_fc fc;
        tflk_pool pool;
        tflk_softmax sm;
        tflk_lstm lstm;
        tflk_lstm8 lstm8;
        tfl_unary8 lut;
        tflk_binary bin;
        tflk_strided tr;
        tflk_pad pad;
        tflk_concat cat;
        tflk_gather gat;
        tflk_gather_nd gnd;
        tflk_scatter_el sel;
        tflk_unary un;
        struct {
            float scale;
            int32_t zp, in_zp, mult, shift, n;
        } tq; /* the TFLite QUANTIZE / DEQUANTIZE kinds */
        qk_conv qconv;
        qk_pool qpool;
        qk_mm qmm;
        qk_add qadd;
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
    tfl_owned o;
    /* MK_VIEW: n_views strided views of input view_in, output i from byte
     * offset view_off[i] of it; MK_CONCAT's rows/scale/bias (all in `own`) */
    tflk_strided *views;
    int64_t *view_off;
    int32_t n_views, view_in;
    void *own; /* one allocation behind views / view_off / the concat arrays */
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

typedef struct mcu_capture {
    bool on;
    mcu_rec *recs;
    uint32_t n, cap;
    bool overflow;
} mcu_capture;

extern mcu_capture mcu_cap;

sy_status *mcu_quant_prepare(sy_node *n, mcu_node *k);

/* the TFLite ops of mcu_ops.c: does it build `op` (fp32/int8/bool as the
 * input says), its prepare and run */
bool mcu_ops_has(const char *op, sy_dtype dt);
sy_status *mcu_ops_prepare(sy_node *n, mcu_node *k);
sy_status *mcu_ops_run(const mcu_node *k, const sy_kernel_io *io);

/* ONNX (domain "") ops of Table B on the same kernels (mcu_onnx.c): does
 * it map the node, Table B's rules (false: declined, claim filled), prepare */
bool mcu_onnx_has(const sy_node *n);
bool mcu_onnx_check(const mcu_cfg *cfg, const sy_node *n, sy_claim *claim);
sy_status *mcu_onnx_prepare(sy_node *n, mcu_node *k);
sy_status *mcu_quant_run(const mcu_node *k, const sy_kernel_io *io);

sy_status *mcu_emit(const sy_mcu_codegen_request *req, char *summary, size_t len);
/* the QAS-INT8 training package (mcu_train.c) */
sy_status *mcu_emit_train(const sy_mcu_train_request *req, char *summary, size_t len);

/* the kernel sources embedded at build time (mcu_sources.c, generated) */
typedef struct mcu_source {
    const char *name;
    const char *text;
} mcu_source;
extern const mcu_source mcu_sources[];
extern const unsigned mcu_n_sources;

#endif
