#!/usr/bin/env python3
"""Writes the small CNN the FP32 training package test trains whole on the
device: image [1, 1, 28, 28] -> Concat(image, image) on channels -> depthwise
3x3 Conv (group 2, pads 1, no bias: seed 001's FP32 Conv row) -> Relu ->
Flatten -> Gemm 1568 -> 8 (B transposed) -> Relu -> Gemm 8 -> 10 ->
Softmax. Weights: a fixed-seed He initialisation, biases 0.

    train_f32_model.py OUT.onnx [--abs]

--abs puts an Abs where the second Relu is: within seed 001's FP32 rows,
but not a layer the FP32 training package runs (its refusal is tested).
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(15)


def he(shape, fan_in):
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


inits = [
    numpy_helper.from_array(he((2, 1, 3, 3), 9), "dw.W"),
    numpy_helper.from_array(he((8, 1568), 1568), "fc1.W"),
    numpy_helper.from_array(np.zeros(8, np.float32), "fc1.B"),
    numpy_helper.from_array(he((10, 8), 8), "fc2.W"),
    numpy_helper.from_array(np.zeros(10, np.float32), "fc2.B"),
]
nodes = [
    helper.make_node("Concat", ["image", "image"], ["x2"], name="copy2", axis=1),
    helper.make_node("Conv", ["x2", "dw.W"], ["c"], name="dw", group=2, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c"], ["cr"], name="relu1"),
    helper.make_node("Flatten", ["cr"], ["f"], name="flatten", axis=1),
    helper.make_node("Gemm", ["f", "fc1.W", "fc1.B"], ["h"], name="fc1", transB=1),
    helper.make_node("Abs" if "--abs" in sys.argv else "Relu", ["h"], ["hr"], name="relu2"),
    helper.make_node("Gemm", ["hr", "fc2.W", "fc2.B"], ["logits"], name="fc2", transB=1),
    helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
]
g = helper.make_graph(nodes, "tiny_train_cnn",
                      [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 1, 28, 28])],
                      [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="switchyard tests")
onnx.checker.check_model(m)
onnx.save(m, sys.argv[1])
