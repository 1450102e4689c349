/* TFLite builtin operator names and BuiltinOptions decoding tables. The
 * numbers are the enum values and field ids of TFLite's schema.fbs. */
#include "tflite_ops.h"

static const char *const op_names[] = {
    "ADD", "AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D", "DEPTH_TO_SPACE", "DEQUANTIZE",
    "EMBEDDING_LOOKUP", "FLOOR", "FULLY_CONNECTED", "HASHTABLE_LOOKUP", "L2_NORMALIZATION", "L2_POOL_2D",
    "LOCAL_RESPONSE_NORMALIZATION", "LOGISTIC", "LSH_PROJECTION", "LSTM", "MAX_POOL_2D", "MUL", "RELU",
    "RELU_N1_TO_1", "RELU6", "RESHAPE", "RESIZE_BILINEAR", "RNN", "SOFTMAX", "SPACE_TO_DEPTH", "SVDF", "TANH",
    "CONCAT_EMBEDDINGS", "SKIP_GRAM", "CALL", "CUSTOM", "EMBEDDING_LOOKUP_SPARSE", "PAD",
    "UNIDIRECTIONAL_SEQUENCE_RNN", "GATHER", "BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND", "TRANSPOSE", "MEAN", "SUB",
    "DIV", "SQUEEZE", "UNIDIRECTIONAL_SEQUENCE_LSTM", "STRIDED_SLICE", "BIDIRECTIONAL_SEQUENCE_RNN", "EXP", "TOPK_V2",
    "SPLIT", "LOG_SOFTMAX", "DELEGATE", "BIDIRECTIONAL_SEQUENCE_LSTM", "CAST", "PRELU", "MAXIMUM", "ARG_MAX",
    "MINIMUM", "LESS", "NEG", "PADV2", "GREATER", "GREATER_EQUAL", "LESS_EQUAL", "SELECT", "SLICE", "SIN",
    "TRANSPOSE_CONV", "SPARSE_TO_DENSE", "TILE", "EXPAND_DIMS", "EQUAL", "NOT_EQUAL", "LOG", "SUM", "SQRT", "RSQRT",
    "SHAPE", "POW", "ARG_MIN", "FAKE_QUANT", "REDUCE_PROD", "REDUCE_MAX", "PACK", "LOGICAL_OR", "ONE_HOT",
    "LOGICAL_AND", "LOGICAL_NOT", "UNPACK", "REDUCE_MIN", "FLOOR_DIV", "REDUCE_ANY", "SQUARE", "ZEROS_LIKE", "FILL",
    "FLOOR_MOD", "RANGE", "RESIZE_NEAREST_NEIGHBOR", "LEAKY_RELU", "SQUARED_DIFFERENCE", "MIRROR_PAD", "ABS",
    "SPLIT_V", "UNIQUE", "CEIL", "REVERSE_V2", "ADD_N", "GATHER_ND", "COS", "WHERE", "RANK", "ELU",
    "REVERSE_SEQUENCE", "MATRIX_DIAG", "QUANTIZE", "MATRIX_SET_DIAG", "ROUND", "HARD_SWISH", "IF", "WHILE",
    "NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5", "SCATTER_ND", "SELECT_V2", "DENSIFY", "SEGMENT_SUM",
    "BATCH_MATMUL", "PLACEHOLDER_FOR_GREATER_OP_CODES", "CUMSUM", "CALL_ONCE", "BROADCAST_TO", "RFFT2D", "CONV_3D",
    "IMAG", "REAL", "COMPLEX_ABS", "HASHTABLE", "HASHTABLE_FIND", "HASHTABLE_IMPORT", "HASHTABLE_SIZE", "REDUCE_ALL",
    "CONV_3D_TRANSPOSE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "BROADCAST_ARGS", "RANDOM_STANDARD_NORMAL",
    "BUCKETIZE", "RANDOM_UNIFORM", "MULTINOMIAL", "GELU", "DYNAMIC_UPDATE_SLICE", "RELU_0_TO_1",
    "UNSORTED_SEGMENT_PROD", "UNSORTED_SEGMENT_MAX", "UNSORTED_SEGMENT_SUM", "ATAN2", "UNSORTED_SEGMENT_MIN", "SIGN",
    "BITCAST", "BITWISE_XOR", "RIGHT_SHIFT",
};

const char *tfl_op_name(int32_t code)
{
    if (code < 0 || (size_t)code >= sizeof op_names / sizeof op_names[0])
        return "";
    return op_names[code];
}

#define F(id, kind, name, def) {id, TFL_F_##kind, name, def}
#define FIELDS(arr) arr, (uint32_t)(sizeof arr / sizeof arr[0])

static const tfl_field conv2d[] = {
    F(0, PADDING, "padding", 0),       F(1, I32, "stride_w", 0),
    F(2, I32, "stride_h", 0),          F(3, ACT, "fused_activation_function", 0),
    F(4, I32, "dilation_w_factor", 1), F(5, I32, "dilation_h_factor", 1),
};
static const tfl_field conv3d[] = {
    F(0, PADDING, "padding", 0),       F(1, I32, "stride_d", 0),          F(2, I32, "stride_w", 0),
    F(3, I32, "stride_h", 0),          F(4, ACT, "fused_activation_function", 0),
    F(5, I32, "dilation_d_factor", 1), F(6, I32, "dilation_w_factor", 1), F(7, I32, "dilation_h_factor", 1),
};
static const tfl_field pool2d[] = {
    F(0, PADDING, "padding", 0),   F(1, I32, "stride_w", 0),      F(2, I32, "stride_h", 0),
    F(3, I32, "filter_width", 0),  F(4, I32, "filter_height", 0), F(5, ACT, "fused_activation_function", 0),
};
static const tfl_field dwconv[] = {
    F(0, PADDING, "padding", 0),       F(1, I32, "stride_w", 0),
    F(2, I32, "stride_h", 0),          F(3, I32, "depth_multiplier", 0),
    F(4, ACT, "fused_activation_function", 0), F(5, I32, "dilation_w_factor", 1),
    F(6, I32, "dilation_h_factor", 1),
};
static const tfl_field fc[] = {
    F(0, ACT, "fused_activation_function", 0), F(1, WFORMAT, "weights_format", 0),
    F(2, BOOL, "keep_num_dims", 0),            F(3, BOOL, "asymmetric_quantize_inputs", 0),
};
static const tfl_field softmax[] = {F(0, F32, "beta", 0)};
static const tfl_field concat[] = {F(0, I32, "axis", 0), F(1, ACT, "fused_activation_function", 0)};
static const tfl_field add_sub[] = {F(0, ACT, "fused_activation_function", 0), F(1, BOOL, "pot_scale_int16", 1)};
static const tfl_field act_only[] = {F(0, ACT, "fused_activation_function", 0)};
static const tfl_field lstm_seq[] = {
    F(0, ACT, "fused_activation_function", 0), F(1, F32, "cell_clip", 0), F(2, F32, "proj_clip", 0),
    F(3, BOOL, "time_major", 0), F(4, BOOL, "asymmetric_quantize_inputs", 0),
    F(5, BOOL, "diagonal_recurrent_tensors", 0),
};
static const tfl_field lstm[] = {
    F(0, ACT, "fused_activation_function", 0), F(1, F32, "cell_clip", 0), F(2, F32, "proj_clip", 0),
    F(3, LSTMKIND, "kernel_type", 0), F(4, BOOL, "asymmetric_quantize_inputs", 0),
};
static const tfl_field resize_bilinear[] = {F(2, BOOL, "align_corners", 0), F(3, BOOL, "half_pixel_centers", 0)};
static const tfl_field resize_nn[] = {F(0, BOOL, "align_corners", 0), F(1, BOOL, "half_pixel_centers", 0)};
static const tfl_field reshape[] = {F(0, I32VEC, "new_shape", 0)};
static const tfl_field block[] = {F(0, I32, "block_size", 0)};
static const tfl_field gather[] = {F(0, I32, "axis", 0), F(1, I32, "batch_dims", 0)};
static const tfl_field reducer[] = {F(0, BOOL, "keep_dims", 0)};
static const tfl_field squeeze[] = {F(0, I32VEC, "squeeze_dims", 0)};
static const tfl_field split[] = {F(0, I32, "num_splits", 0)};
static const tfl_field strided_slice[] = {
    F(0, I32, "begin_mask", 0),    F(1, I32, "end_mask", 0),         F(2, I32, "ellipsis_mask", 0),
    F(3, I32, "new_axis_mask", 0), F(4, I32, "shrink_axis_mask", 0), F(5, BOOL, "offset", 0),
};
static const tfl_field cast[] = {F(0, TTYPE, "in_data_type", 0), F(1, TTYPE, "out_data_type", 0)};
static const tfl_field argminmax[] = {F(0, TTYPE, "output_type", 0)};
static const tfl_field transpose_conv[] = {
    F(0, PADDING, "padding", 0), F(1, I32, "stride_w", 0), F(2, I32, "stride_h", 0),
    F(3, ACT, "fused_activation_function", 0),
};
static const tfl_field shape[] = {F(0, TTYPE, "out_type", 2)};
static const tfl_field pack[] = {F(0, I32, "values_count", 0), F(1, I32, "axis", 0)};
static const tfl_field unpack[] = {F(0, I32, "num", 0), F(1, I32, "axis", 0)};
static const tfl_field axis_only[] = {F(0, I32, "axis", 0)};
static const tfl_field leaky[] = {F(0, F32, "alpha", 0)};
static const tfl_field mirror[] = {F(0, MIRROR, "mode", 0)};
static const tfl_field unique[] = {F(0, TTYPE, "idx_out_type", 2)};
static const tfl_field revseq[] = {F(0, I32, "seq_dim", 0), F(1, I32, "batch_dim", 0)};
static const tfl_field batch_matmul[] = {
    F(0, BOOL, "adj_x", 0), F(1, BOOL, "adj_y", 0), F(2, BOOL, "asymmetric_quantize_inputs", 0),
};
static const tfl_field cumsum[] = {F(0, BOOL, "exclusive", 0), F(1, BOOL, "reverse", 0)};
static const tfl_field gelu[] = {F(0, BOOL, "approximate", 0)};
static const tfl_field l2pool[] = {
    F(0, PADDING, "padding", 0),   F(1, I32, "stride_w", 0),      F(2, I32, "stride_h", 0),
    F(3, I32, "filter_width", 0),  F(4, I32, "filter_height", 0), F(5, ACT, "fused_activation_function", 0),
};

#define D(code, type, name, fields) {code, type, name, FIELDS(fields)}
#define E(code, type, name) {code, type, name, NULL, 0}
static const tfl_op_desc descs[] = {
    D(0, 11, "AddOptions", add_sub),
    D(1, 5, "Pool2DOptions", pool2d),
    D(2, 10, "ConcatenationOptions", concat),
    D(3, 1, "Conv2DOptions", conv2d),
    D(4, 2, "DepthwiseConv2DOptions", dwconv),
    D(5, 94, "DepthToSpaceOptions", block),
    E(6, 38, "DequantizeOptions"),
    D(9, 8, "FullyConnectedOptions", fc),
    D(11, 12, "L2NormOptions", act_only),
    D(12, 5, "Pool2DOptions", l2pool),
    D(16, 14, "LSTMOptions", lstm),
    D(17, 5, "Pool2DOptions", pool2d),
    D(18, 21, "MulOptions", act_only),
    D(22, 17, "ReshapeOptions", reshape),
    D(23, 15, "ResizeBilinearOptions", resize_bilinear),
    D(25, 9, "SoftmaxOptions", softmax),
    D(26, 19, "SpaceToDepthOptions", block),
    E(34, 22, "PadOptions"),
    D(36, 23, "GatherOptions", gather),
    E(37, 24, "BatchToSpaceNDOptions"),
    E(38, 25, "SpaceToBatchNDOptions"),
    E(39, 26, "TransposeOptions"),
    D(40, 27, "ReducerOptions", reducer),
    D(41, 28, "SubOptions", add_sub),
    D(42, 29, "DivOptions", act_only),
    D(43, 30, "SqueezeOptions", squeeze),
    D(44, 71, "UnidirectionalSequenceLSTMOptions", lstm_seq),
    D(45, 32, "StridedSliceOptions", strided_slice),
    E(47, 33, "ExpOptions"),
    E(48, 34, "TopKV2Options"),
    D(49, 35, "SplitOptions", split),
    E(50, 36, "LogSoftmaxOptions"),
    D(53, 37, "CastOptions", cast),
    E(55, 39, "MaximumMinimumOptions"),
    D(56, 40, "ArgMaxOptions", argminmax),
    E(57, 39, "MaximumMinimumOptions"),
    E(58, 41, "LessOptions"),
    E(59, 42, "NegOptions"),
    E(60, 43, "PadV2Options"),
    E(61, 44, "GreaterOptions"),
    E(62, 45, "GreaterEqualOptions"),
    E(63, 46, "LessEqualOptions"),
    E(64, 47, "SelectOptions"),
    E(65, 48, "SliceOptions"),
    D(67, 49, "TransposeConvOptions", transpose_conv),
    E(69, 51, "TileOptions"),
    E(70, 52, "ExpandDimsOptions"),
    E(71, 53, "EqualOptions"),
    E(72, 54, "NotEqualOptions"),
    D(74, 27, "ReducerOptions", reducer),
    D(77, 55, "ShapeOptions", shape),
    E(78, 56, "PowOptions"),
    D(79, 57, "ArgMinOptions", argminmax),
    D(81, 27, "ReducerOptions", reducer),
    D(82, 27, "ReducerOptions", reducer),
    D(83, 59, "PackOptions", pack),
    E(84, 60, "LogicalOrOptions"),
    D(85, 61, "OneHotOptions", axis_only),
    E(86, 62, "LogicalAndOptions"),
    E(87, 63, "LogicalNotOptions"),
    D(88, 64, "UnpackOptions", unpack),
    D(89, 27, "ReducerOptions", reducer),
    E(92, 66, "SquareOptions"),
    E(94, 68, "FillOptions"),
    D(97, 74, "ResizeNearestNeighborOptions", resize_nn),
    D(98, 75, "LeakyReluOptions", leaky),
    D(100, 77, "MirrorPadOptions", mirror),
    E(101, 78, "AbsOptions"),
    D(102, 79, "SplitVOptions", split),
    D(103, 80, "UniqueOptions", unique),
    E(105, 81, "ReverseV2Options"),
    E(107, 83, "GatherNdOptions"),
    E(108, 84, "CosOptions"),
    D(112, 87, "ReverseSequenceOptions", revseq),
    E(114, 89, "QuantizeOptions"),
    E(117, 91, "HardSwishOptions"),
    E(122, 97, "ScatterNdOptions"),
    E(123, 98, "SelectV2Options"),
    D(126, 101, "BatchMatMulOptions", batch_matmul),
    D(128, 102, "CumsumOptions", cumsum),
    D(132, 106, "Conv3DOptions", conv3d),
    D(150, 116, "GeluOptions", gelu),
};

const tfl_op_desc *tfl_op_desc_of(int32_t code)
{
    for (size_t i = 0; i < sizeof descs / sizeof descs[0]; i++)
        if (descs[i].code == code)
            return &descs[i];
    return NULL;
}

#define ENUM_NAME(fn, ...)                                                                                         \
    const char *fn(int v)                                                                                          \
    {                                                                                                              \
        static const char *const names[] = {__VA_ARGS__};                                                          \
        return v >= 0 && (size_t)v < sizeof names / sizeof names[0] ? names[v] : NULL;                             \
    }
ENUM_NAME(tfl_act_name, "NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT")
ENUM_NAME(tfl_padding_name, "SAME", "VALID")
ENUM_NAME(tfl_ttype_name, "FLOAT32", "FLOAT16", "INT32", "UINT8", "INT64", "STRING", "BOOL", "INT16", "COMPLEX64",
          "INT8", "FLOAT64", "COMPLEX128", "UINT64", "RESOURCE", "VARIANT", "UINT32", "UINT16", "INT4", "BFLOAT16")
ENUM_NAME(tfl_mirror_name, "REFLECT", "SYMMETRIC")
ENUM_NAME(tfl_wformat_name, "DEFAULT", "SHUFFLED4x16INT8")
ENUM_NAME(tfl_lstmkind_name, "FULL", "BASIC")
