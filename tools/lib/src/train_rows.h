/* Seed 001 §4.2's FP32 training rows, translated (../shared/spec/ops-mcu.md
 * §4.2): the build's rules (train_rules.c) and the FP32 training packages'
 * chain reader (train_chain.c) quote them when they decline a node. */
#ifndef SY_TRAIN_ROWS_H
#define SY_TRAIN_ROWS_H

/* seed 001 §4.2, the FP32 rows (translated) */
#define ROW_CONV                                                                                                       \
    "FP32 Conv: rank 4, batch 1, no bias, no fused activation, stride = 1 and dilation = 1, depthwise-equivalent "    \
    "convolution only: group = input_channel = output_channel, weights OHWI with I = 1"
#define ROW_FC                                                                                                         \
    "FP32 FullyConnected/Gemm/MatMul: rank 2; 2 or 3 inputs; A not transposed, B may be transposed; fused "          \
    "activation none or ReLU only; bias element count = number of output channels"
#define ROW_RESHAPE                                                                                                    \
    "FP32 Reshape/Squeeze/Unsqueeze/Flatten: input and output element counts equal; FP32 static non-empty tensors"
#define ROW_ELTWISE                                                                                                    \
    "FP32 Mul/Add/Sub: no broadcasting: both inputs and the output must have exactly the same shape; fused "         \
    "activation none or ReLU"
#define ROW_CONCAT                                                                                                     \
    "FP32 Concat: exactly 2 inputs and 1 output; input and output ranks equal and non-empty; non-axis dims equal; "  \
    "output axis dim = sum of the two inputs' axis dims"
#define ROW_ABS "FP32 Abs: FP32 static non-empty tensors"
#define ROW_RELU "FP32 Relu: activation backward only for ReLU"
#define ROW_SLICE                                                                                                      \
    "FP32 StridedSlice/Slice: FP32 static non-empty tensors of rank 1-8; full-rank normalized parameters required; " \
    "no slice masks; stride/step > 0; no empty slices"
#define ROW_TRANSPOSE                                                                                                  \
    "FP32 Transpose: perm a valid int32 constant full permutation; FP32 static non-empty; rank 1-19"
#define ROW_DIV "FP32 Div: broadcast-compatible shapes allowed; rank <= 10; no fused activation"
#define ROW_PAD                                                                                                        \
    "FP32 Pad: CONSTANT mode only; rank 1-6; normalized paddings, non-negative padding, positive static shape; "     \
    "output shape = input shape + padding"
#define ROW_REDUCE                                                                                                     \
    "FP32 ReduceSum/ReduceMean: FP32 static non-empty of rank 1-8; axes an int32 constant, which may be empty "      \
    "(meaning reduce over all dims); axes valid and unique; output shape must agree with keep_dims"
#define ROW_MAXPOOL "FP32 training is explicitly not supported for MaxPool2D/MaxPool (QAS-INT8 only)"
#define ROW_MIRROR "Mirror_Pad is not trainable in either mode (QAS-INT8 or FP32)"
#define TRAINABLE_OPS                                                                                                  \
    "Conv, Gemm/MatMul, Relu, Reshape/Squeeze/Unsqueeze/Flatten, Transpose, Mul, Add, Sub, Concat, Abs, Slice, Div, " \
    "Pad, ReduceSum, ReduceMean"

#endif
