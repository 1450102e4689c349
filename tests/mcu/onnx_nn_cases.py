#!/usr/bin/env python3
"""ONNX test folders (model.onnx, test_data_set_0/{input,output}_K.pb) for
the riscv_mcu rows that ONNX's node tests do not cover with constant
weights: Gemm with transA = 1, batched MatMul with a constant B and Conv
with a 5-D input (ops-mcu.md Table B #4, #5, #2). The expected outputs are
numpy's (float64 sums rounded to float32), an independent reference:
`switchyard conformance` compares riscv_mcu's results with them within its
float tolerance.

    onnx_nn_cases.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(out, name, node, inputs, inits, outputs, feeds, expected, opset=13):
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    g = helper.make_graph([node], name, inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(m, os.path.join(d, "model.onnx"))
    for i, v in enumerate(feeds):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(v).SerializeToString())
    for i, v in enumerate(expected):
        with open(os.path.join(d, "test_data_set_0", "output_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(v).SerializeToString())


def vi(name, a):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(a.shape))


def f32(rng, *shape):
    return rng.uniform(-1, 1, size=shape).astype(np.float32)


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(14)
    # Gemm transA = 1 (and transB = 1), C a row vector: Y = A^T B^T + C
    a, b, c = f32(rng, 5, 3), f32(rng, 4, 5), f32(rng, 4)
    y = (a.astype(np.float64).T @ b.astype(np.float64).T + c).astype(np.float32)
    save(out, "mcu_gemm_transA_transB", helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1, transB=1),
         [vi("a", a)], {"b": b, "c": c}, [vi("y", y)], [a], [y])
    a, b = f32(rng, 6, 2), f32(rng, 6, 3)
    y = (a.astype(np.float64).T @ b.astype(np.float64)).astype(np.float32)
    save(out, "mcu_gemm_transA", helper.make_node("Gemm", ["a", "b"], ["y"], transA=1), [vi("a", a)], {"b": b},
         [vi("y", y)], [a], [y])
    # batched MatMul, B a constant of the same batch dims
    a, b = f32(rng, 2, 3, 4), f32(rng, 2, 4, 5)
    y = np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    save(out, "mcu_matmul_3d_const_b", helper.make_node("MatMul", ["a", "b"], ["y"]), [vi("a", a)], {"b": b},
         [vi("y", y)], [a], [y])
    # Conv with a 5-D input: NCDHW, asymmetric pads, strides 1 and 2
    x, w, bias = f32(rng, 1, 2, 4, 5, 5), f32(rng, 3, 2, 2, 3, 3), f32(rng, 3)
    pads, strides = [1, 0, 1, 0, 1, 2], [1, 2, 2]
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(pads[i], pads[i + 3]) for i in range(3)])
    od = [(xp.shape[2 + i] - w.shape[2 + i]) // strides[i] + 1 for i in range(3)]
    y = np.zeros((1, 3, *od))
    for o in range(3):
        for d in range(od[0]):
            for h in range(od[1]):
                for q in range(od[2]):
                    z, r, s = d * strides[0], h * strides[1], q * strides[2]
                    win = xp[0, :, z:z + w.shape[2], r:r + w.shape[3], s:s + w.shape[4]]
                    y[0, o, d, h, q] = np.sum(win * w[o]) + bias[o]
    y = y.astype(np.float32)
    save(out, "mcu_conv3d_pads_strides", helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=pads, strides=strides),
         [vi("x", x)], {"w": w, "b": bias}, [vi("y", y)], [x], [y])


if __name__ == "__main__":
    main()
