#!/usr/bin/env python3
"""Models for mcu.train_tflite (test_mcu_train_tflite.sh): a float TFLite
model FP32 training packages take straight from the .tflite, and its twin in
ONNX from the same numbers.

  dw.tflite     x [1, 28, 28, 1] (NHWC: the Fashion-MNIST image as TFLite
                models take it) -> DEPTHWISE_CONV_2D 3x3 SAME, stride 1, no
                bias (seed 001's FP32 Conv row) -> RELU -> RESHAPE [1, 784]
                -> FULLY_CONNECTED [10, 784] + bias
  dw_ref.onnx   the same network in ONNX's layout: x [1, 1, 28, 28] -> Conv
                group 1 (one channel) -> Relu -> Flatten -> Gemm transB = 1;
                with one channel NHWC and NCHW hold the image's bytes in the
                same order, so both train on the same samples

The FlatBuffer writer is tests/train/tflite_ops_models.py's.

  python3 train_tflite_model.py OUT_DIR
"""
import os
import sys

import numpy as np
from onnx import helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'train'))
import tflite_ops_models as t  # noqa: E402

DEPTHWISE_CONV_2D, RELU = 4, 19
t.OPTIONS[DEPTHWISE_CONV_2D] = 2  # BuiltinOptions.DepthwiseConv2DOptions


def main():
    out = sys.argv[1]
    m = t.Model()
    x = m.tensor('x', [1, 28, 28, 1])
    w = m.tensor('dw/filter', [1, 3, 3, 1], t.rand(1, 3, 3, 1))
    h = m.tensor('dw/out', [1, 28, 28, 1])
    # padding SAME, stride 1 x 1, depth multiplier 1, no fused activation; bias -1: none
    m.op(DEPTHWISE_CONV_2D, [x, w, -1], h, [(0, 'i8', 0), (1, 'i32', 1), (2, 'i32', 1), (3, 'i32', 1), (4, 'i8', 0)])
    r = m.tensor('relu', [1, 28, 28, 1])
    m.op(RELU, [h], r)
    shp = m.tensor('flat/shape', [2], np.array([1, 784]), t.INT32)
    f = m.tensor('flat', [1, 784])
    m.op(t.RESHAPE, [r, shp], f, [(0, 'obj', t.Vec('i32', [1, 784]))])
    y = t.fc(m, f, 784, 10, 'fc', [1, 10])
    m.write(os.path.join(out, 'dw.tflite'), [x], [y])
    c = m.consts
    inits = {'dw/filter': c['dw/filter'].reshape(1, 1, 3, 3), 'fc/weights': c['fc/weights'], 'fc/bias': c['fc/bias']}
    nodes = [helper.make_node('Conv', ['x', 'dw/filter'], ['h'], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node('Relu', ['h'], ['r']),
             helper.make_node('Flatten', ['r'], ['f']),
             helper.make_node('Gemm', ['f', 'fc/weights', 'fc/bias'], ['y'], transB=1)]
    t.onnx_model(os.path.join(out, 'dw_ref.onnx'), nodes, inits, [1, 1, 28, 28], 'y', [1, 10])


if __name__ == '__main__':
    main()
