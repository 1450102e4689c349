#!/usr/bin/env python3
"""A small float CNN with a MaxPool for the QAS-INT8 training package test
(test_mcu_train_pool.sh): image [1,1,28,28] -> Conv 3x3 (4 filters, stride 2,
pads 1, bias) -> Relu -> MaxPool 2x2 stride 2 -> Flatten -> Gemm(196 -> 10,
transB) -> Softmax, weights He-uniform from a fixed seed (untrained: a
starting point). `switchyard quantize` writes the MaxPool as
DequantizeLinear -> MaxPool -> QuantizeLinear of the Relu's scale and zero
point, so `codegen --train --trainable last:2` trains the Conv through it.

    make_qas_pool_model.py OUT.onnx [shapes]

shapes: the Flatten followed by Unsqueeze(axes 1) -> Squeeze(axes 1) ->
Reshape [-1, 4, 49] -> Reshape [-1, 196] before the Gemm (seed 001 §4's
Reshape/Squeeze/Unsqueeze/Flatten row; the quantizer puts each in a QDQ
pair of the MaxPool's quantization). transpose: a Transpose (perm
0,2,1,3) of the pooled codes before the Flatten (the package refuses it).
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.RandomState(16)


def he(shape, fan_in):
    lim = np.sqrt(6.0 / fan_in)
    return rng.uniform(-lim, lim, size=shape).astype(np.float32)


cw = he((4, 1, 3, 3), 9)
cb = rng.uniform(-0.1, 0.1, size=(4,)).astype(np.float32)
gw = he((10, 4 * 7 * 7), 4 * 7 * 7)
gb = np.zeros((10,), np.float32)
nodes = [
    helper.make_node("Conv", ["image", "conv.W", "conv.B"], ["c"], name="conv", kernel_shape=[3, 3],
                     pads=[1] * 4, strides=[2, 2]),
    helper.make_node("Relu", ["c"], ["cr"], name="relu"),
    helper.make_node("MaxPool", ["cr"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Flatten", ["p"], ["f"], name="flatten", axis=1),
    helper.make_node("Gemm", ["f4" if len(sys.argv) > 2 and sys.argv[2] == "shapes" else "f", "fc.W", "fc.B"], ["logits"], name="fc", transB=1),
    helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
]
inits = []
if len(sys.argv) > 2 and sys.argv[2] == "shapes":
    inits = [numpy_helper.from_array(np.array([1], np.int64), "ax1"),
             numpy_helper.from_array(np.array([-1, 4, 49], np.int64), "sh1"),
             numpy_helper.from_array(np.array([-1, 196], np.int64), "sh2")]
    nodes[4:4] = [helper.make_node("Unsqueeze", ["f", "ax1"], ["f1"], name="unsqueeze"),
                  helper.make_node("Squeeze", ["f1", "ax1"], ["f2"], name="squeeze"),
                  helper.make_node("Reshape", ["f2", "sh1"], ["f3"], name="reshape1"),
                  helper.make_node("Reshape", ["f3", "sh2"], ["f4"], name="reshape2")]
if len(sys.argv) > 2 and sys.argv[2] == "transpose":
    nodes[2].output[0] = "p0"
    nodes[2:3] = [nodes[2], helper.make_node("Transpose", ["p0"], ["p"], name="transpose", perm=[0, 2, 1, 3])]
g = helper.make_graph(nodes, "qas_conv_pool_fc",
                      [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 1, 28, 28])],
                      [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])],
                      [numpy_helper.from_array(cw, "conv.W"), numpy_helper.from_array(cb, "conv.B"),
                       numpy_helper.from_array(gw, "fc.W"), numpy_helper.from_array(gb, "fc.B")] + inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_qas_pool_model.py")
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, sys.argv[1])
