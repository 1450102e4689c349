/*
 * The "qdq_patterns" table (switchyard/ext/sy_qdq_patterns.h): which float
 * op folds into which of this plugin's switchyard.quant kernels, how, and
 * where the quantizer puts Q/DQ pairs. The core's QDQ pass and the tools
 * library's quantizer read it; neither names these ops.
 *
 * Softmax and RNN fold when a model quantizes them, but the quantizer does
 * not place pairs around Softmax (no SY_QDQ_QUANTIZE) and quantizes RNNs by
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
static const char *const pool_attrs[] = {"auto_pad",  "kernel_shape", "pads",  "strides",
                                         "dilations", "ceil_mode",    "count_include_pad", NULL};
static const char *const concat_attrs[] = {"axis", NULL};
static const char *const alpha[] = {"alpha", NULL};
static const char *const alpha_beta[] = {"alpha", "beta", NULL};

static const sy_qdq_pattern patterns[] = {
    /* op, fold, quantized op, flags, quantized inputs, attributes kept */
    {"Conv", SY_QDQ_FOLD_CONV, "QConv", Q | FUSE | W, 3u, conv_attrs},
    {"MatMul", SY_QDQ_FOLD_MATMUL, "QMatMul", Q | FUSE | W | CONSTS, 3u, NULL},
    {"Gemm", SY_QDQ_FOLD_GEMM, "QMatMul", Q | FUSE | W, 3u, NULL},
    {"Add", SY_QDQ_FOLD_BINARY, "QAdd", Q | FUSE | CONSTS, 3u, NULL},
    {"Sub", SY_QDQ_FOLD_BINARY, "QSub", Q | FUSE | CONSTS, 3u, NULL},
    {"Mul", SY_QDQ_FOLD_BINARY, "QMul", Q | FUSE | CONSTS, 3u, NULL},
    {"Concat", SY_QDQ_FOLD_CONCAT, "QConcat", Q | CONSTS, ~0u, concat_attrs},
    {"RNN", SY_QDQ_FOLD_RNN, "QRNN", 0, 0u, NULL},
    {"MaxPool", SY_QDQ_FOLD_POOL, "QMaxPool", Q | SHARE, 1u, pool_attrs},
    {"GlobalMaxPool", SY_QDQ_FOLD_POOL, "QMaxPool", Q | SHARE | SY_QDQ_GLOBAL, 1u, pool_attrs},
    {"AveragePool", SY_QDQ_FOLD_POOL, "QAveragePool", Q, 1u, pool_attrs},
    {"GlobalAveragePool", SY_QDQ_FOLD_POOL, "QAveragePool", Q | SY_QDQ_GLOBAL, 1u, pool_attrs},
    {"Relu", SY_QDQ_FOLD_LUT, "QUnary", Q | ACT, 1u, NULL},
    {"Clip", SY_QDQ_FOLD_LUT, "QUnary", Q | ACT | SY_QDQ_CLIP_RANGE, 1u, NULL},
    {"Sigmoid", SY_QDQ_FOLD_LUT, "QUnary", Q, 1u, NULL},
    {"Tanh", SY_QDQ_FOLD_LUT, "QUnary", Q, 1u, NULL},
    {"LeakyRelu", SY_QDQ_FOLD_LUT, "QUnary", Q, 1u, alpha},
    {"HardSigmoid", SY_QDQ_FOLD_LUT, "QUnary", Q, 1u, alpha_beta},
    {"HardSwish", SY_QDQ_FOLD_LUT, "QUnary", Q, 1u, NULL},
    {"Softmax", SY_QDQ_FOLD_SOFTMAX, "QSoftmax", 0, 1u, NULL},
    {"Reshape", SY_QDQ_FOLD_PASSTHROUGH, NULL, Q | SHARE, 1u, NULL},
    {"Flatten", SY_QDQ_FOLD_PASSTHROUGH, NULL, Q | SHARE, 1u, NULL},
    {"Squeeze", SY_QDQ_FOLD_PASSTHROUGH, NULL, Q | SHARE, 1u, NULL},
    {"Unsqueeze", SY_QDQ_FOLD_PASSTHROUGH, NULL, Q | SHARE, 1u, NULL},
    {"Transpose", SY_QDQ_FOLD_PASSTHROUGH, NULL, Q | SHARE, 1u, NULL},
    {"Slice", SY_QDQ_FOLD_PASSTHROUGH, NULL, Q | SHARE, 1u, NULL},
    {"Identity", SY_QDQ_FOLD_PASSTHROUGH, NULL, Q | SHARE, 1u, NULL},
    {"Pad", SY_QDQ_FOLD_PASSTHROUGH, NULL, Q | SHARE | SY_QDQ_PAD_VALUE, 1u, NULL},
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
