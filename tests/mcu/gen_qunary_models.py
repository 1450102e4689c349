#!/usr/bin/python3
"""Quantized one-input ONNX models for the int8 forms of Table B's float
functions (tests/mcu/test_mcu_onnx_ops.sh): per function a node-test folder
OUT/test_q_<op>/ with

  model.onnx           int8 x [2, 128] -> DequantizeLinear -> <op> -> QuantizeLinear -> int8 y
  test_data_set_0/     input_0.pb: every int8 code once; output_0.pb: the expected codes

The QDQ pass folds the three nodes into one switchyard.quant QUnary, whose
table cpu_ref (ops_quant) and riscv_mcu (MK_LUT_S8) build from qk_unary.c.
The expected codes are written out here, independently of that code, as the
ONNX definitions compose: q_y = sat(round_half_even(f(s_x (q - z_x)) / s_y) + z_y),
with DequantizeLinear's product and the division by s_y in float32 and f in
float64 (Python's math module), rounded to float32 as an fp32 op returns it.

Also OUT/test_qx_<op>/ (Mul, Sub, AveragePool, GlobalAveragePool, Softmax
between DequantizeLinear and QuantizeLinear) with inputs only: see CROSS; and
OUT/test_qb_<op>/, the comparisons on bool inputs (bool_cmp) and fp32 Mod
(fmod): models of exact expected outputs that are not quantized.

  gen_qunary_models.py OUT
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# op, attributes, f(x) in float64, the scales (input, output) and zero points
SIG = lambda v: 1.0 / (1.0 + math.exp(-v))
F32 = lambda a: float(np.float32(a))  # an ONNX float attribute is a float32
LEAKY = lambda v: v if v >= 0 else float(np.float32(F32(0.2) * np.float32(v)))  # alpha x: a float32 product
CASES = [
    ("Relu", {}, lambda v: max(v, 0.0), (0.05, 0.03), (3, -128)),
    ("Tanh", {}, math.tanh, (0.03, 1.0 / 128), (0, 0)),
    ("Sigmoid", {}, SIG, (0.06, 1.0 / 256), (0, -128)),
    ("LeakyRelu", {"alpha": 0.2}, LEAKY, (0.05, 0.04), (-5, 10)),
    ("HardSigmoid", {}, lambda v: min(max(F32(0.2) * v + 0.5, 0.0), 1.0), (0.05, 1.0 / 256), (0, -128)),
    ("HardSwish", {}, lambda v: v * min(max(v / 6.0 + 0.5, 0.0), 1.0), (0.04, 0.03), (0, -40)),
    ("Abs", {}, abs, (0.05, 0.05), (7, -128)),
    ("Neg", {}, lambda v: -v, (0.05, 0.05), (7, -7)),
    ("Ceil", {}, math.ceil, (0.037, 0.05), (0, 0)),
    ("Floor", {}, math.floor, (0.037, 0.05), (0, 0)),
    ("Round", {}, lambda v: float(np.round(v)), (0.037, 0.05), (0, 0)),
    ("Exp", {}, math.exp, (0.02, 0.06), (0, -128)),
    ("Log", {}, lambda v: math.log(v) if v > 0 else (-math.inf if v == 0 else math.nan), (0.05, 0.04), (-128, 40)),
    ("Sqrt", {}, lambda v: math.sqrt(v) if v >= 0 else math.nan, (0.05, 0.015), (-128, -128)),
    ("Sin", {}, math.sin, (0.03, 1.0 / 128), (0, 0)),
    ("Cos", {}, math.cos, (0.03, 1.0 / 128), (0, 0)),
    ("Tan", {}, math.tan, (0.01, 0.02), (0, 0)),
    ("Erf", {}, math.erf, (0.02, 1.0 / 128), (0, 0)),
    ("Elu", {"alpha": 0.8}, lambda v: v if v >= 0 else F32(0.8) * (math.exp(v) - 1.0), (0.04, 0.03), (0, -60)),
    ("Celu", {"alpha": 1.5}, lambda v: max(0.0, v) + min(0.0, 1.5 * (math.exp(v / 1.5) - 1.0)), (0.04, 0.03), (0, -60)),
    ("Selu", {}, lambda v: 1.0507009873554805 * (v if v > 0 else 1.6732632423543772 * (math.exp(v) - 1.0)),
     (0.03, 0.035), (0, -60)),
    ("ThresholdedRelu", {"alpha": 0.5}, lambda v: v if v > 0.5 else 0.0, (0.03, 0.03), (0, -128)),
    ("Softsign", {}, lambda v: v / (1.0 + abs(v)), (0.05, 1.0 / 128), (0, 0)),
    ("Softplus", {}, lambda v: math.log1p(math.exp(v)), (0.04, 0.025), (0, -128)),
    ("Gelu", {}, lambda v: 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))), (0.03, 0.025), (0, -100)),
    ("Gelu", {"approximate": "tanh"},
     lambda v: 0.5 * v * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v ** 3))), (0.03, 0.025),
     (0, -100)),
    ("Swish", {"alpha": 1.5}, lambda v: v * SIG(1.5 * v), (0.03, 0.025), (0, -100)),
]
OPSET = {"Swish": 24}  # the others at 20 (Gelu is new in 20)


def expected(f, sx, zx, sy, zy):
    sx32, sy32 = np.float32(sx), np.float32(sy)
    out = []
    for q in range(-128, 128):
        x = np.float32(np.float32(q - zx) * sx32)  # DequantizeLinear in float32
        v = np.float32(f(float(x)))  # the fp32 op's result
        r = np.float32(v / sy32)  # QuantizeLinear: x / scale in float32
        if math.isnan(r):
            code = -128  # saturation of NaN: the low bound, as sy_rq_quantize
        else:
            code = float(np.round(np.float64(r))) + zy if math.isfinite(r) else (127 if r > 0 else -128)
            code = int(min(max(code, -128), 127))
        out.append(code)
    return np.array(out, dtype=np.int8).reshape(2, 128)


def dq(name, scale, zp):
    return (helper.make_node("DequantizeLinear", [name, name + "_s", name + "_z"], [name + "_f"]),
            [numpy_helper.from_array(np.array(scale, dtype=np.float32), name + "_s"),
             numpy_helper.from_array(np.array(zp, dtype=np.int8), name + "_z")])


# the int8 forms that fold into QMul, QSub, QAveragePool and QSoftmax: no
# expected output here (test_mcu_onnx_ops.sh takes cpu_ref's and requires
# riscv_mcu and its packages to give it bit for bit)
CROSS = [
    ("Mul", {}, [[2, 128], [2, 128]], (0.05, 0.04, 0.06), (3, -7, 5)),
    ("Sub", {}, [[2, 128], [2, 128]], (0.05, 0.04, 0.06), (3, -7, 5)),
    ("AveragePool", {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}, [[1, 2, 8, 8]],
     (0.05, 0.03), (3, -2)),
    ("GlobalAveragePool", {}, [[1, 4, 8, 8]], (0.05, 0.06), (3, -2)),
    ("Softmax", {"axis": -1}, [[4, 64]], (0.08, 1.0 / 256), (0, -128)),
]


def cross(out):
    for op, attrs, shapes, scales, zps in CROSS:
        d = os.path.join(out, "test_qx_" + op.lower())
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        names = ["a", "b"][: len(shapes)]
        nodes, inits, ins = [], [], []
        rng = np.random.default_rng(7)
        for i, (nm, shp) in enumerate(zip(names, shapes)):
            node, init = dq(nm, scales[i], zps[i])
            nodes.append(node)
            inits += init
            ins.append(helper.make_tensor_value_info(nm, TensorProto.INT8, shp))
            n = int(np.prod(shp))
            v = (np.arange(n) * (37 if i else 1) % 256 - 128) if n >= 256 else rng.integers(-128, 128, n)
            with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as fh:
                fh.write(numpy_helper.from_array(np.array(v, dtype=np.int8).reshape(shp), nm).SerializeToString())
        nodes.append(helper.make_node(op, [nm + "_f" for nm in names], ["yf"], **attrs))
        inits += [numpy_helper.from_array(np.array(scales[-1], dtype=np.float32), "sy"),
                  numpy_helper.from_array(np.array(zps[-1], dtype=np.int8), "zy")]
        nodes.append(helper.make_node("QuantizeLinear", ["yf", "sy", "zy"], ["y"]))
        g = helper.make_graph(nodes, op, ins, [helper.make_tensor_value_info("y", TensorProto.INT8, None)], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
        m.ir_version = 10
        onnx.save(m, os.path.join(d, "model.onnx"))


def bool_cmp(out):
    """OUT/test_qb_<op>/: Greater, GreaterOrEqual, Less, LessOrEqual on bool A
    and B (Table B #66-#69 list "fp32 bool": bool inputs, false < true),
    every pair of values, B broadcast; the expected output by numpy."""
    a = np.array([[False, False, True, True], [True, False, True, False]])
    b = np.array([False, True, True, False])
    for op, f in (("Greater", np.greater), ("GreaterOrEqual", np.greater_equal), ("Less", np.less),
                  ("LessOrEqual", np.less_equal)):
        d = os.path.join(out, "test_qb_" + op.lower())
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        g = helper.make_graph([helper.make_node(op, ["a", "b"], ["y"])], op,
                              [helper.make_tensor_value_info("a", TensorProto.BOOL, [2, 4]),
                               helper.make_tensor_value_info("b", TensorProto.BOOL, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.BOOL, [2, 4])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)])
        m.ir_version = 8
        onnx.save(m, os.path.join(d, "model.onnx"))
        for i, (nm, v) in enumerate((("a", a), ("b", b), ("y", f(a, b)))):
            fn = "output_0.pb" if nm == "y" else "input_%d.pb" % i
            with open(os.path.join(d, "test_data_set_0", fn), "wb") as fh:
                fh.write(numpy_helper.from_array(v, nm).SerializeToString())


def fmod(out):
    """OUT/test_qb_mod_fmod/: fp32 Mod with fmod = 1 (Table B #46), C's fmod,
    which is exact: numpy's float32 np.fmod is the expected output. Mixed signs,
    a quotient near 2^30, subnormal and zero remainders, an infinite divisor."""
    x = np.array([[5.5, -5.5, 5.5, -5.5, 1e9, 7.25], [3.0e-39, -0.0, 123.456, -1e-3, 6.0, 2.5]], dtype=np.float32)
    y = np.array([2.0, 2.0, -2.0, -2.0, 0.7, np.inf], dtype=np.float32)
    d = os.path.join(out, "test_qb_mod_fmod")
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    g = helper.make_graph([helper.make_node("Mod", ["a", "b"], ["y"], fmod=1)], "mod",
                          [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 6]),
                           helper.make_tensor_value_info("b", TensorProto.FLOAT, [6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 6])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, os.path.join(d, "model.onnx"))
    for nm, v, fn in (("a", x, "input_0.pb"), ("b", y, "input_1.pb"), ("y", np.fmod(x, y), "output_0.pb")):
        with open(os.path.join(d, "test_data_set_0", fn), "wb") as fh:
            fh.write(numpy_helper.from_array(v, nm).SerializeToString())


def main():
    out = sys.argv[1]
    cross(out)
    bool_cmp(out)
    fmod(out)
    for op, attrs, f, (sx, sy), (zx, zy) in CASES:
        name = "test_q_" + op.lower() + ("_tanh" if attrs.get("approximate") == "tanh" else "")
        d = os.path.join(out, name)
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        inits = [
            numpy_helper.from_array(np.array(sx, dtype=np.float32), "sx"),
            numpy_helper.from_array(np.array(zx, dtype=np.int8), "zx"),
            numpy_helper.from_array(np.array(sy, dtype=np.float32), "sy"),
            numpy_helper.from_array(np.array(zy, dtype=np.int8), "zy"),
        ]
        nodes = [
            helper.make_node("DequantizeLinear", ["x", "sx", "zx"], ["xf"]),
            helper.make_node(op, ["xf"], ["yf"], **attrs),
            helper.make_node("QuantizeLinear", ["yf", "sy", "zy"], ["y"]),
        ]
        g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.INT8, [2, 128])],
                              [helper.make_tensor_value_info("y", TensorProto.INT8, [2, 128])], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET.get(op, 20))])
        m.ir_version = 10
        onnx.save(m, os.path.join(d, "model.onnx"))
        x = np.arange(-128, 128, dtype=np.int8).reshape(2, 128)
        with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as fh:
            fh.write(numpy_helper.from_array(x, "x").SerializeToString())
        with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as fh:
            fh.write(numpy_helper.from_array(expected(f, sx, zx, sy, zy), "y").SerializeToString())
    print(len(CASES))


if __name__ == "__main__":
    main()
