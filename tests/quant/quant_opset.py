#!/usr/bin/env python3
"""The opset upgrade of `switchyard quantize` (tools/lib/src/quant_opset.c).

  quant_opset.py gen WORK     writes the cases (WORK/cases.json for tests/ml/ort_ml.mjs)
  quant_opset.py check WORK   checks the quantized model's form and its outputs

Cases (float models, written here with onnx.helper):
  old     opset 11: Conv -> Relu -> Dropout(ratio 0.3) -> GlobalAveragePool ->
          Softmax without `axis` ([1, 4, 1, 1]: before 13 the default axis 1
          flattens to rows of 4; from 13 the default is -1, a row of 1)
  refuse  opset 11: Conv -> Softmax(axis 1) on [1, 4, 6, 6]: the two opsets
          disagree, so the quantizer must refuse
  half    opset 13, float16: Conv -> Relu; quantized as its float32 form
          (quant_widen.c) with its float16 input and output behind Casts
  half_rand  float16 with a RandomNormalLike of dtype float16: refused
The check: the quantized `old` is opset 13 with Softmax axis = 1 written out
and Dropout's ratio as input 1; ONNX Runtime runs it (a Dropout with a
`ratio` attribute at 13 is invalid there), its probabilities sum to 1 over
the four channels and stay within 0.05 of the float model's (int8
activations); `switchyard run` gives the QDQ graph's formula written out
here (qdq_reference), and ONNX Runtime lands within two codes of it. The
quantized `half` keeps float16 x and y, reads x through Cast(to=FLOAT) and
writes y through Cast(to=FLOAT16) with QuantizeLinear/DequantizeLinear in
float32 between; `switchyard run` gives its QDQ formula (half_reference)
rounded to float16, ONNX Runtime runs it within two codes of the formula,
and it stays within 2.5 codes of the float16 model's output (ONNX Runtime).
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def x_values(n):
    return [((i * 37) % 101) / 50.0 - 1.0 for i in range(n)]


def conv_nodes(dtype, nptype):
    rng = np.random.default_rng(5)
    w = numpy_helper.from_array((rng.standard_normal((4, 2, 3, 3)) * 0.4).astype(nptype), "w")
    b = numpy_helper.from_array((rng.standard_normal(4) * 0.1).astype(nptype), "b")
    node = helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1])
    return [node], [w, b]


def save(work, name, graph, opset):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="quant_opset")
    m.ir_version = 7
    onnx.checker.check_model(m)
    os.makedirs(os.path.join(work, name), exist_ok=True)
    onnx.save(m, os.path.join(work, name, "model.onnx"))


def gen(work):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])
    nodes, inits = conv_nodes(TensorProto.FLOAT, np.float32)
    nodes += [helper.make_node("Relu", ["c"], ["r"], name="relu"),
              helper.make_node("Dropout", ["r"], ["d"], name="drop", ratio=0.3),
              helper.make_node("GlobalAveragePool", ["d"], ["g"], name="gap"),
              helper.make_node("Softmax", ["g"], ["y"], name="softmax")]
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 1, 1])
    save(work, "old", helper.make_graph(nodes, "old", [x], [y], inits), 11)

    nodes, inits = conv_nodes(TensorProto.FLOAT, np.float32)
    nodes += [helper.make_node("Softmax", ["c"], ["y"], name="softmax", axis=1)]
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])
    save(work, "refuse", helper.make_graph(nodes, "refuse", [x], [y], inits), 11)

    xh = helper.make_tensor_value_info("x", TensorProto.FLOAT16, [1, 2, 6, 6])
    nodes, inits = conv_nodes(TensorProto.FLOAT16, np.float16)
    nodes += [helper.make_node("Relu", ["c"], ["y"], name="relu")]
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT16, [1, 4, 6, 6])
    save(work, "half", helper.make_graph(nodes, "half", [xh], [y], inits), 13)
    nodes, inits = conv_nodes(TensorProto.FLOAT16, np.float16)
    nodes += [helper.make_node("RandomNormalLike", ["c"], ["n"], name="noise", dtype=TensorProto.FLOAT16),
              helper.make_node("Add", ["c", "n"], ["y"], name="add")]
    save(work, "half_rand", helper.make_graph(nodes, "half_rand", [xh], [y], inits), 13)

    calib = os.path.join(work, "calib")
    os.makedirs(calib, exist_ok=True)
    xv = np.array(x_values(72), dtype=np.float32).reshape(1, 2, 6, 6)
    np.save(os.path.join(calib, "input_0.npy"), xv)
    os.makedirs(os.path.join(work, "calib16"), exist_ok=True)
    np.save(os.path.join(work, "calib16", "input_0.npy"), xv.astype(np.float16))
    for d in ("q", "hq"):
        os.makedirs(os.path.join(work, d), exist_ok=True)
    inputs = [{"name": "x", "dtype": "float32", "dims": [1, 2, 6, 6], "data": [float(v) for v in xv.ravel()]}]
    bits = [int(b) for b in xv.astype(np.float16).view(np.uint16).ravel()]
    inputs16 = [{"name": "x", "dtype": "float16", "dims": [1, 2, 6, 6], "data": bits}]
    cases = [{"name": "old", "inputs": inputs}, {"name": "q", "inputs": inputs},
             {"name": "half", "inputs": inputs16}, {"name": "hq", "inputs": inputs16}]
    with open(os.path.join(work, "cases.json"), "w") as f:
        json.dump(cases, f)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def ort_out(work, name):
    with open(os.path.join(work, name, "ort.json")) as f:
        r = json.load(f)
    if not r["ok"]:
        fail(f"ONNX Runtime refused {name}/model.onnx: {r['error']}")
    o = r["outputs"][0]
    if o["type"] == "float16":  # the 16-bit patterns
        return np.array(o["data"], dtype=np.uint16).view(np.float16).astype(np.float64)
    return np.array(o["data"], dtype=np.float64)


def check(work):
    m = onnx.load(os.path.join(work, "q", "model.onnx"))
    opset = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")]
    if opset != [13]:
        fail(f"the quantized model's opset is {opset}, 13 expected")
    by_op = {}
    for n in m.graph.node:
        by_op.setdefault(n.op_type, []).append(n)
    sm = by_op["Softmax"][0]
    axis = [a.i for a in sm.attribute if a.name == "axis"]
    if axis != [1]:
        fail(f"Softmax's axis attribute is {axis}: the opset-11 default 1 must be written out at 13")
    dr = by_op["Dropout"][0]
    if [a.name for a in dr.attribute]:
        fail(f"Dropout keeps attributes {[a.name for a in dr.attribute]} at opset 13")
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    if len(dr.input) < 2 or dr.input[1] not in inits or abs(float(inits[dr.input[1]]) - 0.3) > 1e-7:
        fail(f"Dropout's ratio is not the input 0.3: inputs {list(dr.input)}")
    if not by_op.get("QuantizeLinear"):
        fail("the quantized model has no QuantizeLinear")
    f = ort_out(work, "old")
    q = ort_out(work, "q")
    if abs(q.sum() - 1.0) > 1e-5:
        fail(f"the quantized probabilities sum to {q.sum()} (ONNX Runtime), not 1")
    if np.max(np.abs(q - f)) > 0.05:
        fail(f"quantized {q.tolist()} against float {f.tolist()} (ONNX Runtime): more than 0.05 apart")
    ours = numpy_helper.to_array(onnx.load_tensor(os.path.join(work, "q_out", "output_0.pb"))).astype(np.float64).ravel()
    ref = qdq_reference(work, inits)
    if np.max(np.abs(ours - ref)) > 1e-6:
        fail(f"switchyard run {ours.tolist()} against the QDQ formula {ref.tolist()} on the quantized model")
    # ONNX Runtime runs the DQ -> GlobalAveragePool -> Q of this graph as its
    # fused QLinearGlobalAveragePool, whose rounding lands one code off the
    # formula's in a channel here; one code of g moves a probability by about
    # s_g * p * (1 - p) = 3.4e-4: two codes' worth is allowed
    if np.max(np.abs(q - ref)) > 7e-4:
        fail(f"ONNX Runtime {q.tolist()} against the QDQ formula {ref.tolist()}: more than two codes of g apart")
    print(f"ok: quantized old model: Softmax axis 1, Dropout ratio input; ONNX Runtime float {np.round(f, 4).tolist()}, "
          f"quantized {np.round(q, 4).tolist()}; switchyard within {np.max(np.abs(ours - ref)):.2g} of the QDQ formula")
    check_half(work)


def elem_type(vi):
    return vi.type.tensor_type.elem_type


def check_half(work):
    m = onnx.load(os.path.join(work, "hq", "model.onnx"))
    if [elem_type(i) for i in m.graph.input] != [TensorProto.FLOAT16] or \
            [elem_type(o) for o in m.graph.output] != [TensorProto.FLOAT16]:
        fail("the quantized float16 model's input and output are not float16")
    ops = [n.op_type for n in m.graph.node]
    casts = [n for n in m.graph.node if n.op_type == "Cast"]
    to = [a.i for n in casts for a in n.attribute if a.name == "to"]
    if sorted(to) != [TensorProto.FLOAT, TensorProto.FLOAT16] or casts[0].input[0] != "x" or \
            m.graph.node[-1].op_type != "Cast" or m.graph.node[-1].output[0] != "y":
        fail(f"expected Cast(x, to=FLOAT) in and Cast(to=FLOAT16) -> y out, got {ops} with to={to}")
    if "QuantizeLinear" not in ops:
        fail(f"the quantized float16 model has no QuantizeLinear: {ops}")
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    if any(v.dtype == np.float16 for v in inits.values()):
        fail("a float16 initializer is left in the quantized model")
    ref = half_reference(work, m, inits)
    ours = numpy_helper.to_array(onnx.load_tensor(os.path.join(work, "hq_out", "output_0.pb")))
    if ours.dtype != np.float16:
        fail(f"switchyard run of the quantized float16 model gave {ours.dtype}, float16 expected")
    ours = ours.astype(np.float64).ravel()
    # the formula's value rounded to float16 once: one half ulp of float16
    # apart at most, plus a tie rounded the other way
    tol = np.maximum(np.abs(ref), 2.0 ** -14) * 2.0 ** -10
    if np.any(np.abs(ours - ref) > tol):
        fail(f"switchyard run of the quantized float16 model against the QDQ formula: worst "
             f"{np.max(np.abs(ours - ref)):.3g}")
    s_y = float(inits[[n for n in m.graph.node if n.op_type == "QuantizeLinear"][-1].input[1]])
    q = ort_out(work, "hq")
    f = ort_out(work, "half")
    # ONNX Runtime's int8 Conv on an x86 CPU without VNNI multiplies u8
    # activations (the int8 codes + 128) by s8 weights with pmaddubsw, whose
    # pair sums saturate at 16 bits (the "saturation issue" of 8-bit dot
    # products on SSE/AVX2/AVX-512 without VNNI): an output where a pair can
    # pass 32767 is not the QDQ formula there, so only the others are held to
    # it, and the test says how many it left out
    sat = u8s8_pairs_saturate(work, m, inits)
    if sat.sum() > 8:
        fail(f"{int(sat.sum())} of {sat.size} outputs can saturate a u8*s8 pair: the test input no longer tells "
             f"ONNX Runtime's arithmetic from the formula")
    keep = ~sat
    if np.max(np.abs(q - ref)[keep]) > 2 * s_y + np.max(tol):
        fail(f"ONNX Runtime on the quantized float16 model: {np.max(np.abs(q - ref)[keep]):.3g} from the formula, "
             f"more than two codes ({s_y:.3g} each)")
    if np.max(np.abs(q - f)[keep]) > 2.5 * s_y:
        fail(f"quantized float16 model {np.max(np.abs(q - f)[keep]):.3g} from the float16 model (ONNX Runtime), "
             f"more than 2.5 codes ({s_y:.3g} each)")
    print(f"ok: quantized float16 model: float16 x and y behind Casts; switchyard within "
          f"{np.max(np.abs(ours - ref)):.2g} of the QDQ formula, ONNX Runtime {np.max(np.abs(q - ref)[keep]):.2g}, "
          f"{np.max(np.abs(q - f)[keep]):.2g} from the float16 model (codes of {s_y:.3g}); {int(sat.sum())} of "
          f"{sat.size} outputs left out of the ONNX Runtime checks (a u8*s8 pair sum can pass 32767: "
          f"{np.max(np.abs(q - ref)[sat]) / s_y if sat.any() else 0:.1f} codes off there)")


def u8s8_pairs_saturate(work, m, I):
    """For each output of the quantized `half` Conv: can a pair of u8*s8
    products (activation code + 128 times weight code) pass the int16 range?
    Both pairings a packed kernel may use are checked: two input channels at
    one tap, and neighbours in the (channel, kh, kw) order."""
    node = {n.output[0]: n for n in m.graph.node}
    conv = [n for n in m.graph.node if n.op_type == "Conv"][0]
    xn = node[conv.input[0]]
    s, z = I[xn.input[1]], I[xn.input[2]]
    x = np.load(os.path.join(work, "calib16", "input_0.npy")).astype(np.float64)
    xc = q(x, s, z).astype(np.int64) + (128 if z.dtype == np.int8 else 0)
    xp = np.pad(xc[0], ((0, 0), (1, 1), (1, 1)), constant_values=int(z) + (128 if z.dtype == np.int8 else 0))
    w = I[node[conv.input[1]].input[0]].astype(np.int64)
    sat = np.zeros((4, 6, 6), bool)
    for o in range(4):
        for i in range(6):
            for j in range(6):
                p = xp[:, i:i + 3, j:j + 3] * w[o]
                flat = p.ravel()
                pairs = np.concatenate([(p[0] + p[1]).ravel(), flat[0:-1:2] + flat[1::2]])
                sat[o, i, j] = np.any(np.abs(pairs) > 32767)
    return sat.ravel()


def half_reference(work, m, I):
    """The quantized `half` graph written out in double: x as float16 values,
    Q/DQ of the Conv's input, the dequantized weights and bias, Conv, Relu,
    Q/DQ of its output."""
    node = {n.output[0]: n for n in m.graph.node}
    qdq = lambda v, n: dq(q(v, I[n.input[1]], I[n.input[2]]), I[n.input[1]], I[n.input[2]])
    x = np.load(os.path.join(work, "calib16", "input_0.npy")).astype(np.float64)
    conv = [n for n in m.graph.node if n.op_type == "Conv"][0]
    xq = node[conv.input[0]]  # DequantizeLinear of the QuantizeLinear of the Cast
    xd = qdq(x, xq)
    w, b = dq_weight(I, node[conv.input[1]]), dq_bias(I, node[conv.input[2]])
    r = np.maximum(conv3x3(xd, w, b), 0.0)
    yq = node[m.graph.node[-1].input[0]]
    return qdq(r, yq).ravel()


def q(v, s, z):
    lo, hi = (0, 255) if z.dtype == np.uint8 else (-128, 127)
    return np.clip(np.rint(v / np.float64(s)) + int(z), lo, hi)


def dq(c, s, z):
    return (np.asarray(c, np.float64) - np.asarray(z, np.float64)) * np.asarray(s, np.float64)


def dq_weight(I, wn):
    ws = np.asarray(I[wn.input[1]], np.float64).reshape(-1, 1, 1, 1)
    wz = np.asarray(I[wn.input[2]] if len(wn.input) > 2 else 0, np.float64).reshape(-1, 1, 1, 1)
    return (I[wn.input[0]].astype(np.float64) - wz) * ws


def dq_bias(I, bn):
    return I[bn.input[0]].astype(np.float64) * np.asarray(I[bn.input[1]], np.float64)


def conv3x3(xd, w, b):
    """Conv of [1, 2, 6, 6] with [4, 2, 3, 3], pads 1"""
    xp = np.pad(xd, ((0, 0), (0, 0), (1, 1), (1, 1)))
    c = np.zeros((1, 4, 6, 6))
    for o in range(4):
        for i in range(6):
            for j in range(6):
                c[0, o, i, j] = np.sum(xp[0, :, i:i + 3, j:j + 3] * w[o]) + b[o]
    return c


def qdq_reference(work, I):
    """The quantized `old` graph written out: every QuantizeLinear a
    round-half-even of v / s plus the zero point, clamped to the codes;
    every DequantizeLinear (c - z) * s; the float ops in double."""
    m = onnx.load(os.path.join(work, "q", "model.onnx"))
    node = {n.output[0]: n for n in m.graph.node}
    def params(out):  # (scale, zero point) of the Q/DQ pair that produces `out`
        n = node[out]
        return I[n.input[1]], I[n.input[2]] if len(n.input) > 2 and n.input[2] else np.int8(0)

    x = np.load(os.path.join(work, "calib", "input_0.npy")).astype(np.float64)
    conv = node["c"]
    xd = dq(q(x, *params(conv.input[0])), *params(conv.input[0]))
    c = conv3x3(xd, dq_weight(I, node[conv.input[1]]), dq_bias(I, node[conv.input[2]]))
    r = dq(q(np.maximum(c, 0.0), *params("r")), *params("r"))
    d = dq(q(r, *params("d")), *params("d"))
    g = dq(q(d.mean(axis=(2, 3)), *params("g")), *params("g")).ravel()
    e = np.exp(g - g.max())
    return e / e.sum()


if __name__ == "__main__":
    {"gen": gen, "check": check}[sys.argv[1]](sys.argv[2])
