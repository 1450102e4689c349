#!/usr/bin/env python3
"""A small float CNN for the QAS-INT8 Conv training package test
(test_mcu_train.sh): image [1,1,28,28] -> Conv 3x3 (4 filters, stride 2, pads 1,
bias) -> Relu -> Flatten -> Gemm(784 -> 10, transB) -> Softmax, weights
He-uniform from a fixed seed (untrained: a starting point). Its Conv is
within seed 001 §4's QAS-INT8 Conv row (3x3, group 1), so `codegen --train
--trainable last:2` trains the Conv and the Gemm.

    make_qas_conv_model.py OUT.onnx [KERNEL]

KERNEL (default 3): another size (5) makes a Conv outside the row, which
the package must decline.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.RandomState(15)
k = int(sys.argv[2]) if len(sys.argv) > 2 else 3


def he(shape, fan_in):
    lim = np.sqrt(6.0 / fan_in)
    return rng.uniform(-lim, lim, size=shape).astype(np.float32)


cw = he((4, 1, k, k), k * k)
cb = rng.uniform(-0.1, 0.1, size=(4,)).astype(np.float32)
gw = he((10, 4 * 14 * 14), 4 * 14 * 14)
gb = np.zeros((10,), np.float32)
nodes = [
    helper.make_node("Conv", ["image", "conv.W", "conv.B"], ["c"], name="conv", kernel_shape=[k, k],
                     pads=[k // 2] * 4, strides=[2, 2]),
    helper.make_node("Relu", ["c"], ["cr"], name="relu"),
    helper.make_node("Flatten", ["cr"], ["f"], name="flatten", axis=1),
    helper.make_node("Gemm", ["f", "fc.W", "fc.B"], ["logits"], name="fc", transB=1),
    helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
]
g = helper.make_graph(nodes, "qas_conv_fc",
                      [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 1, 28, 28])],
                      [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])],
                      [numpy_helper.from_array(cw, "conv.W"), numpy_helper.from_array(cb, "conv.B"),
                       numpy_helper.from_array(gw, "fc.W"), numpy_helper.from_array(gb, "fc.B")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_qas_conv_model.py")
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, sys.argv[1])
