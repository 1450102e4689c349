/*
 * The "qdq_patterns" table (switchyard/ext/sy_qdq_patterns.h): which float
 * op folds into which of this plugin's switchyard.quant kernels, how, and
 * where the quantizer puts Q/DQ pairs. The core's QDQ pass and the tools
 * library's quantizer read it; neither names these ops.
 *
 * Softmax and RNN fold when a model quantizes them, but the quantizer does
 * not place pairs around Softmax (no SY_QDQ_QUANTIZE; LogSoftmax it does) and quantizes RNNs by
 * their own rule (the integer QRNN's inputs, see qrnn_params.h).
 */
#include "quant_internal.h"

#include <switchyard/ext/sy_qdq_patterns.h>

#define Q SY_QDQ_QUANTIZE
#define SHARE SY_QDQ_SHARES_PARAMS
#define FUSE SY_QDQ_FUSES_ACTIVATION
#define ACT SY_QDQ_ACTIVATION
#define CONSTS SY_QDQ_CONST_OPERANDS
#define W SY_QDQ_WEIGHTS

static const char *const conv_attrs[] = {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides", NULL};
static const char *const convt_attrs[] = {"auto_pad", "dilations", "group",         "kernel_shape",
                                          "pads",     "strides",   "output_padding", "output_shape", NULL};
static const char *const pool_attrs[] = {"auto_pad",  "kernel_shape", "pads",  "strides",
                                         "dilations", "ceil_mode",    "count_include_pad", NULL};
static const char *const concat_attrs[] = {"axis", NULL};
static const char *const alpha[] = {"alpha", NULL};
static const char *const alpha_beta[] = {"alpha", "beta", NULL};
static const char *const alpha_gamma[] = {"alpha", "gamma", NULL};
static const char *const approximate[] = {"approximate", NULL};
static const char *const bn_attrs[] = {"epsilon", "training_mode", NULL};
static const char *const ln_attrs[] = {"axis", "epsilon", NULL};
static const char *const lp_attrs[] = {"axis", "p", NULL};

static const sy_qdq_pattern patterns[] = {
    /* op, fold, quantized op, flags, quantized inputs, attributes kept */
    {"Conv", SY_QDQ_FOLD_CONV, "QConv", Q | FUSE | W, 3u, conv_attrs, NULL, NULL},
    /* Table B #113 int8: the quantizer quantizes W per channel on axis 1 (W's output channels) */
    {"ConvTranspose", SY_QDQ_FOLD_CONV_TRANSPOSE, "QConvTranspose", Q | FUSE | W, 3u, convt_attrs, NULL, NULL},
    {"MatMul", SY_QDQ_FOLD_MATMUL, "QMatMul", Q | FUSE | W | CONSTS, 3u, NULL, NULL, NULL},
    {"Gemm", SY_QDQ_FOLD_GEMM, "QMatMul", Q | FUSE | W, 3u, NULL, NULL, NULL},
    {"Add", SY_QDQ_FOLD_BINARY, "QAdd", Q | FUSE | CONSTS, 3u, NULL, NULL, NULL},
    {"Sub", SY_QDQ_FOLD_BINARY, "QSub", Q | FUSE | CONSTS, 3u, NULL, NULL, NULL},
    {"Mul", SY_QDQ_FOLD_BINARY, "QMul", Q | FUSE | CONSTS, 3u, NULL, NULL, NULL},
    {"Concat", SY_QDQ_FOLD_CONCAT, "QConcat", Q | CONSTS, ~0u, concat_attrs, NULL, NULL},
    {"RNN", SY_QDQ_FOLD_RNN, "QRNN", 0, 0u, NULL, NULL, NULL},
    {"MaxPool", SY_QDQ_FOLD_POOL, "QMaxPool", Q | SHARE, 1u, pool_attrs, NULL, NULL},
    {"GlobalMaxPool", SY_QDQ_FOLD_POOL, "QMaxPool", Q | SHARE | SY_QDQ_GLOBAL, 1u, pool_attrs, NULL, NULL},
    {"AveragePool", SY_QDQ_FOLD_POOL, "QAveragePool", Q, 1u, pool_attrs, NULL, NULL},
    {"GlobalAveragePool", SY_QDQ_FOLD_POOL, "QAveragePool", Q | SY_QDQ_GLOBAL, 1u, pool_attrs, NULL, NULL},
    {"Relu", SY_QDQ_FOLD_LUT, "QUnary", Q | ACT, 1u, NULL, NULL, NULL},
    {"Clip", SY_QDQ_FOLD_LUT, "QUnary", Q | ACT | SY_QDQ_CLIP_RANGE, 1u, NULL, NULL, NULL},
    {"Sigmoid", SY_QDQ_FOLD_LUT, "QUnary", Q, 1u, NULL, NULL, NULL},
    {"Tanh", SY_QDQ_FOLD_LUT, "QUnary", Q, 1u, NULL, NULL, NULL},
    {"LeakyRelu", SY_QDQ_FOLD_LUT, "QUnary", Q, 1u, alpha, NULL, NULL},
    {"HardSigmoid", SY_QDQ_FOLD_LUT, "QUnary", Q, 1u, alpha_beta, NULL, NULL},
    {"HardSwish", SY_QDQ_FOLD_LUT, "QUnary", Q, 1u, NULL, NULL, NULL},
    {"Softmax", SY_QDQ_FOLD_SOFTMAX, "QSoftmax", 0, 1u, NULL, NULL, NULL},
    {"LogSoftmax", SY_QDQ_FOLD_SOFTMAX, "QLogSoftmax", Q, 1u, NULL, NULL, NULL}, /* Table B #112 */
    /* the normalizations with constant fp32 parameters (Table B #36, #37,
     * #38): dequantize, the float normalization (tflk_norm.c, tflk_reduce.c's
     * LPNORM), quantize; the quantizer pairs the data input and output and
     * keeps scale / bias / mean / variance float, as the fold wants them.
     * (A BatchNormalization after a Conv is folded into the Conv first.) */
    {"BatchNormalization", SY_QDQ_FOLD_FLOAT, "QNorm", Q, 1u, bn_attrs, NULL, NULL},
    {"LayerNormalization", SY_QDQ_FOLD_FLOAT, "QNorm", Q, 1u, ln_attrs, NULL, NULL},
    {"LpNormalization", SY_QDQ_FOLD_FLOAT, "QNorm", Q, 1u, lp_attrs, NULL, NULL}, /* #38: tflk_reduce.c's LPNORM */
    /* PRelu and Pow (ops-mcu.md Table B #57, #116: full-quant int8): DQ(x),
     * DQ(slope / exponent) -> op -> Q folds into one node computing in float
     * (qk.c); the quantizer pairs both inputs, a constant slope or exponent
     * quantized like an activation (CONSTS) */
    {"PRelu", SY_QDQ_FOLD_BINARY, "QPRelu", Q | CONSTS, 3u, NULL, NULL, NULL},
    {"Pow", SY_QDQ_FOLD_BINARY, "QPow", Q | CONSTS, 3u, NULL, NULL, NULL},
    /* the other one-input float functions: a DQ -> f -> Q of a model folds
     * into QUnary's table (qk_unary.c); the quantizer does not place pairs
     * around them (no Q flag), so `switchyard quantize` keeps them float */
    {"Abs", SY_QDQ_FOLD_LUT, "QUnary", 0, 1u, NULL, NULL, NULL},
    {"Ceil", SY_QDQ_FOLD_LUT, "QUnary", 0, 1u, NULL, NULL, NULL},
    {"Floor", SY_QDQ_FOLD_LUT, "QUnary", 0, 1u, NULL, NULL, NULL},
    {"Round", SY_QDQ_FOLD_LUT, "QUnary", 0, 1u, NULL, NULL, NULL},
    {"Exp", SY_QDQ_FOLD_LUT, "QUnary", 0, 1u, NULL, NULL, NULL},
    {"Log", SY_QDQ_FOLD_LUT, "QUnary", 0, 1u, NULL, NULL, NULL},
    {"Sqrt", SY_QDQ_FOLD_LUT, "QUnary", 0, 1u, NULL, NULL, NULL},
    {"Neg", SY_QDQ_FOLD_LUT, "QUnary", 0, 1u, NULL, NULL, NULL},
    {"Sin", SY_QDQ_FOLD_LUT, "QUnary", 0, 1u, NULL, NULL, NULL},
    {"Cos", SY_QDQ_FOLD_LUT, "QUnary", 0, 1u, NULL, NULL, NULL},
    {"Tan", SY_QDQ_FOLD_LUT, "QUnary", 0, 1u, NULL, NULL, NULL},
    {"Erf", SY_QDQ_FOLD_LUT, "QUnary", 0, 1u, NULL, NULL, NULL},
    {"Elu", SY_QDQ_FOLD_LUT, "QUnary", 0, 1u, alpha, NULL, NULL},
    {"Celu", SY_QDQ_FOLD_LUT, "QUnary", 0, 1u, alpha, NULL, NULL},
    {"Selu", SY_QDQ_FOLD_LUT, "QUnary", 0, 1u, alpha_gamma, NULL, NULL},
    {"ThresholdedRelu", SY_QDQ_FOLD_LUT, "QUnary", 0, 1u, alpha, NULL, NULL},
    {"Softsign", SY_QDQ_FOLD_LUT, "QUnary", 0, 1u, NULL, NULL, NULL},
    {"Softplus", SY_QDQ_FOLD_LUT, "QUnary", 0, 1u, NULL, NULL, NULL},
    {"Gelu", SY_QDQ_FOLD_LUT, "QUnary", 0, 1u, approximate, NULL, NULL},
    {"Swish", SY_QDQ_FOLD_LUT, "QUnary", 0, 1u, alpha, NULL, NULL},
    {"Reshape", SY_QDQ_FOLD_PASSTHROUGH, NULL, Q | SHARE, 1u, NULL, NULL, NULL},
    {"Flatten", SY_QDQ_FOLD_PASSTHROUGH, NULL, Q | SHARE, 1u, NULL, NULL, NULL},
    {"Squeeze", SY_QDQ_FOLD_PASSTHROUGH, NULL, Q | SHARE, 1u, NULL, NULL, NULL},
    {"Unsqueeze", SY_QDQ_FOLD_PASSTHROUGH, NULL, Q | SHARE, 1u, NULL, NULL, NULL},
    {"Transpose", SY_QDQ_FOLD_PASSTHROUGH, NULL, Q | SHARE, 1u, NULL, NULL, NULL},
    {"Slice", SY_QDQ_FOLD_PASSTHROUGH, NULL, Q | SHARE, 1u, NULL, NULL, NULL},
    {"Identity", SY_QDQ_FOLD_PASSTHROUGH, NULL, Q | SHARE, 1u, NULL, NULL, NULL},
    {"Pad", SY_QDQ_FOLD_PASSTHROUGH, NULL, Q | SHARE | SY_QDQ_PAD_VALUE, 1u, NULL, NULL, NULL},
    /* the qti_aisw block ops (plugins/qti_aisw): fold when that plugin is
     * loaded; the quantizer does not place pairs around it */
    {"StatefulGRU", SY_QDQ_FOLD_STATEFUL_GRU, "QStatefulGRU", 0, 0u, NULL, "qti_aisw", "qti_aisw"},
    {"StatefulLSTM", SY_QDQ_FOLD_STATEFUL_LSTM, "QStatefulLSTM", 0, 0u, NULL, "qti_aisw", "qti_aisw"},
};

static const sy_qdq_patterns table = {
    .struct_size = sizeof(sy_qdq_patterns),
    .pattern_size = sizeof(sy_qdq_pattern),
    .domain = "switchyard.quant",
    .n_patterns = sizeof patterns / sizeof *patterns,
    .patterns = patterns,
};

sy_status *q_register_patterns(const sy_host_api *host, sy_plugin *p)
{
    return host->register_extension(p, SY_QDQ_PATTERNS_EXTENSION, SY_QDQ_PATTERNS_VERSION, &table);
}
