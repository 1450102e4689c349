#!/usr/bin/env python3
"""Writes the small CNNs the FP32 training package test trains whole on the
device. Weights: a fixed-seed He initialisation, biases 0.

    train_f32_model.py OUT.onnx [--shapes mean|sum|rank8 [--steps]|elt [--residual|--product|--quotient|--self|--concat|--concat-w
                       |--const-dividend|--bcast-div|--bcast-quotient|--bcast-rank|--bcast-rank-dividend
                       |--stretch-div|--stretch-dividend]]
                       [--maxpool] [--batch-transpose] [--fc matmul|kn] [--stride2]
                       [--relus N]

Without --shapes, the chain of the first packages: image [1, 1, 28, 28] ->
Concat(image, image) on channels -> depthwise 3x3 Conv (group 2, pads 1, no
bias: seed 001's FP32 Conv row) -> Relu -> Flatten -> Gemm 1568 -> 8 (B
transposed) -> Relu -> Gemm 8 -> 10 -> Softmax.

--shapes puts the FP32 rows' one-input layers in it: image -> Pad (constant
0.25, one pixel each side) [1, 1, 30, 30] -> Concat(self) -> depthwise 3x3
Conv (no pads) [1, 2, 28, 28] -> Abs -> Transpose (0, 2, 3, 1: not its own
inverse) [1, 28, 28, 2] -> Slice [0:1, 2:26, 1:27, 0:2] [1, 24, 26, 2] -> then
  mean: ReduceMean (axes attribute [2], keepdims 1) [1, 24, 1, 2] -> Flatten [1, 48]
  sum:  ReduceSum (axes input [1], keepdims 1) [1, 1, 26, 2] -> Squeeze (axis 1)
        [1, 26, 2] -> Reshape [1, -1] [1, 52]
-> Gemm -> 8 -> Relu -> Gemm 8 -> 10 -> Softmax. With --steps the Slice
takes steps [1, 2, 3, 1]: [1, 12, 9, 2] (mean: [1, 24]; sum: [1, 18]).

--shapes rank8: the Slice and ReduceMean rows at rank 8, their highest: the
same Pad, Concat, Conv and Abs, then Reshape [1, 2, 2, 2, 2, 2, 7, 7] ->
Slice [0:1, 0:2, 0:2, 0:2, 1:2, 0:2, 1:7, 0:7] [1, 2, 2, 2, 1, 2, 6, 7] ->
ReduceMean (axis 6, keepdims 1) [1, 2, 2, 2, 1, 2, 1, 7] -> Flatten [1, 112]
-> Gemm 112 -> 8 -> Relu -> Gemm 8 -> 10 -> Softmax; with --steps the
Slice takes steps [1, 1, 2, 1, 1, 1, 2, 3]: [1, 2, 1, 2, 1, 2, 3, 3], the
mean [1, 2, 1, 2, 1, 2, 1, 3], Flatten [1, 24], Gemm 24 -> 8.

--shapes elt: the element-wise rows with a constant of the input's shape (no
broadcasting): image -> Div by a frozen constant in [1, 2) -> Mul by a
trained one (the first trained layer) -> Concat(self) -> depthwise 3x3 Conv
(pads 1) -> Sub from a trained constant (c - x) -> Abs -> ReduceMean (axis
3) -> Flatten [1, 56] -> Add a trained constant -> Gemm 56 -> 8 -> Relu ->
Gemm 8 -> 10 -> Softmax. Two activations of one shape (no broadcasting)
feed the ReduceMean instead: with --residual, Abs's output plus Sub's
(y = |o| + o, a residual); with --product, their product |o|·o; with
--quotient, Abs's output plus a frozen constant of ones, then Sub's output
divided by that (o / (|o| + 1): the previous layer's output the divisor,
never 0; the constant is trained, an Add's); with --self, a value with
itself: |o|·|o|, then that plus itself, then that concatenated with itself
on the width axis [1, 2, 28, 56]; with --bcast-div, |o| divided by a frozen
constant [2, 1, 1] in [1, 2) (seed 001's Div row: broadcasting allowed);
with --const-dividend, a frozen constant [1, 28] in [1, 2) divided by |o| +
1 (a constant dividend, broadcast over channels and rows; the ones are an
Add's trained constant); with --concat, Concat(o, |o|) on
the channel axis [1, 4, 28, 28] (the previous output second; Flatten
[1, 112], Gemm 112 -> 8); with --concat-w, Concat(|o|, o) on the width
axis [1, 2, 28, 56].

--fc sets the layout of the two fully connected layers (seed 001's "FP32
Gemm/MatMul" row: B [K, O] not transposed): with matmul, fc1 is a MatMul by
B [K, 8] (no bias; a hidden layer) and fc2 a Gemm with transB = 0, B [8, 10]
and C [10] (the logits); with kn, fc1 is a Gemm without transB (B [K, 8], C
[8]) and fc2 a MatMul by B [8, 10].

--relus N puts N Relus in a row where the first Relu is (each in place over
the one before: the planner's cost over long runs of in-place layers).

--stride2 gives the Conv strides 2 ([1, 2, 14, 14]; Flatten 392, Gemm
392 -> 8): outside the seed's FP32 Conv row (stride 1), so trained with
--trainable last:2, the Conv in the frozen front (its backward never runs),
where the package runs it over its input.

Refused by the package (their refusals are tested): --maxpool puts a 1x1
MaxPool where the first Relu is (seed 001: not FP32-trainable; no layer the
package runs); --batch-transpose starts with a Transpose (1, 0, 2, 3),
which moves the batch axis.

--shapes elt --bcast-rank divides two activations of different ranks:
Abs's output [1, 2, 28, 28] by its mean over channels and width, [1, 28],
plus a trained constant of ones (numpy aligns the divisor from the last
axis, [1, 1, 1, 28]: its own batch axis is stretched over the channels);
--bcast-rank-dividend divides the mean over channels and width [1, 28] of
|o| + 1 (a trained constant of ones) by |o| + 1 [1, 2, 28, 28] (the
lower-ranked operand the dividend, the other's gradient pending).

--shapes elt --bcast-quotient divides two activations of different shapes:
the mean of Abs's output over the width, ra [1, 2, 28, 1], by that mean
turned to [1, 2, 1, 28] (a Transpose of axes of size 1) plus a trained
constant of ones, both stretched to [1, 2, 28, 28] (seed 001's Div row
allows broadcasting; each operand's gradient summed over its stretched
axis).

--shapes elt --stretch-div divides the ReduceMean's [1, 2, 28, 1] by a
frozen constant [1, 1, 1, 2] in [1, 2), which stretches the activation to
[1, 2, 28, 2] (seed 001's Div row allows broadcasting; its gradient is
summed over the stretched axis; Flatten [1, 112], Gemm 112 -> 8);
--shapes elt --stretch-dividend divides that constant by the ReduceMean's
output plus a trained constant of ones [1, 2, 28, 1] (c / (r + 1), the
divisor stretched).
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(15)
args = sys.argv[2:]
shapes = args[args.index("--shapes") + 1] if "--shapes" in args else None
fc = args[args.index("--fc") + 1] if "--fc" in args else None
relus = int(args[args.index("--relus") + 1]) if "--relus" in args else 1


def he(shape, fan_in):
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


def ints(name, v):
    return numpy_helper.from_array(np.array(v, np.int64), name)


if shapes is None:
    s2 = "--stride2" in args
    inits = [
        numpy_helper.from_array(he((2, 1, 3, 3), 9), "dw.W"),
        numpy_helper.from_array(he((8, 392 if s2 else 1568), 392 if s2 else 1568), "fc1.W"),
        numpy_helper.from_array(np.zeros(8, np.float32), "fc1.B"),
    ]
    first = "image"
    nodes = []
    if "--batch-transpose" in args:
        nodes.append(helper.make_node("Transpose", ["image"], ["imt"], name="swap", perm=[1, 0, 2, 3]))
        first = "imt"
    nodes += [
        helper.make_node("Concat", [first, first], ["x2"], name="copy2", axis=1),
        helper.make_node("Conv", ["x2", "dw.W"], ["c"], name="dw", group=2, kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         strides=[2, 2] if s2 else [1, 1]),
        helper.make_node("MaxPool", ["c"], ["cr"], name="relu1", kernel_shape=[1, 1]) if "--maxpool" in args
        else helper.make_node("Relu", ["c"], ["cr" if relus == 1 else "cr1"], name="relu1"),
    ]
    nodes += [helper.make_node("Relu", ["cr%d" % i], ["cr" if i + 1 == relus else "cr%d" % (i + 1)],
                               name="relu1_%d" % i) for i in range(1, relus)]
    nodes.append(helper.make_node("Flatten", ["cr"], ["f"], name="flatten", axis=1))
    if fc is None:
        nodes.append(helper.make_node("Gemm", ["f", "fc1.W", "fc1.B"], ["h"], name="fc1", transB=1))
    else:
        inits[1] = numpy_helper.from_array(he((1568, 8), 1568), "fc1.W")
        if fc == "matmul":
            nodes.append(helper.make_node("MatMul", ["f", "fc1.W"], ["h"], name="fc1"))
        else:
            nodes.append(helper.make_node("Gemm", ["f", "fc1.W", "fc1.B"], ["h"], name="fc1"))
elif shapes == "elt":
    stretch = "--stretch-div" in args or "--stretch-dividend" in args
    k = 112 if "--concat" in args or stretch else 56
    inits = [
        numpy_helper.from_array((1 + rng.random((1, 1, 28, 28))).astype(np.float32), "div.C"),
        numpy_helper.from_array((1 + 0.1 * rng.standard_normal((1, 1, 28, 28))).astype(np.float32), "scale.W"),
        numpy_helper.from_array(he((2, 1, 3, 3), 9), "dw.W"),
        numpy_helper.from_array((0.1 * rng.standard_normal((1, 2, 28, 28))).astype(np.float32), "off.B"),
        numpy_helper.from_array(np.zeros((1, k), np.float32), "shift.B"),
        numpy_helper.from_array(he((8, k), k), "fc1.W"),
        numpy_helper.from_array(np.zeros(8, np.float32), "fc1.B"),
    ]
    nodes = [
        helper.make_node("Div", ["image", "div.C"], ["d"], name="div"),
        helper.make_node("Mul", ["d", "scale.W"], ["m"], name="scale"),
        helper.make_node("Concat", ["m", "m"], ["x2"], name="copy2", axis=1),
        helper.make_node("Conv", ["x2", "dw.W"], ["c"], name="dw", group=2, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Sub", ["off.B", "c"], ["o"], name="off"),
        helper.make_node("Abs", ["o"], ["oa"], name="abs"),
    ]
    two = any(f in args for f in ("--residual", "--product", "--quotient", "--self", "--concat", "--concat-w",
                                  "--const-dividend", "--bcast-div", "--bcast-quotient", "--bcast-rank",
                                  "--bcast-rank-dividend"))
    if "--residual" in args or "--product" in args:
        nodes.append(helper.make_node("Add" if "--residual" in args else "Mul", ["oa", "o"], ["res"], name="residual"))
    elif "--quotient" in args or "--const-dividend" in args:
        inits.append(numpy_helper.from_array(np.ones((1, 2, 28, 28), np.float32), "one.C"))
        nodes.append(helper.make_node("Add", ["oa", "one.C"], ["oa1"], name="plus1"))
        if "--const-dividend" in args:
            inits.append(numpy_helper.from_array((1 + rng.random((1, 28))).astype(np.float32), "num.C"))
        nodes.append(helper.make_node("Div", ["num.C" if "--const-dividend" in args else "o", "oa1"], ["res"],
                                      name="residual"))
    elif "--bcast-div" in args:
        inits.append(numpy_helper.from_array((1 + rng.random((2, 1, 1))).astype(np.float32), "div2.C"))
        nodes.append(helper.make_node("Div", ["oa", "div2.C"], ["res"], name="residual"))
    elif "--bcast-quotient" in args:
        # two activations of different shapes: ra [1, 2, 28, 1] / (|ra| as [1, 2, 1, 28] + 1), both
        # stretched to [1, 2, 28, 28] (the Transpose moves only axes of size 1: a view)
        inits.append(numpy_helper.from_array(np.ones((1, 2, 1, 28), np.float32), "one.C"))
        nodes += [
            helper.make_node("ReduceMean", ["oa"], ["ra"], name="mean_r", axes=[3], keepdims=1),
            helper.make_node("Transpose", ["ra"], ["rt"], name="turn", perm=[0, 1, 3, 2]),
            helper.make_node("Add", ["rt", "one.C"], ["den"], name="plus1"),
            helper.make_node("Div", ["ra", "den"], ["res"], name="residual"),
        ]
    elif "--bcast-rank" in args:
        # two activations of different ranks: |o| [1, 2, 28, 28] divided by its mean over channels and
        # width, rank 2 [1, 28], plus a trained constant of ones (numpy aligns it as [1, 1, 1, 28]: its
        # batch axis is stretched over the channels); the previous output is the divisor
        inits.append(numpy_helper.from_array(np.ones((1, 28), np.float32), "one.C"))
        nodes += [
            helper.make_node("ReduceMean", ["oa"], ["rm"], name="mean_cw", axes=[1, 3], keepdims=0),
            helper.make_node("Add", ["rm", "one.C"], ["den"], name="plus1"),
            helper.make_node("Div", ["oa", "den"], ["res"], name="residual"),
        ]
    elif "--bcast-rank-dividend" in args:
        # the lower-ranked operand the dividend and the previous output: the mean over channels and
        # width [1, 28] of |o| + 1 (a trained constant of ones) divided by |o| + 1 [1, 2, 28, 28]
        inits.append(numpy_helper.from_array(np.ones((1, 2, 28, 28), np.float32), "one.C"))
        nodes += [
            helper.make_node("Add", ["oa", "one.C"], ["oa1"], name="plus1"),
            helper.make_node("ReduceMean", ["oa1"], ["rm"], name="mean_cw", axes=[1, 3], keepdims=0),
            helper.make_node("Div", ["rm", "oa1"], ["res"], name="residual"),
        ]
    elif "--concat" in args:
        nodes.append(helper.make_node("Concat", ["o", "oa"], ["res"], name="residual", axis=1))
    elif "--concat-w" in args:
        nodes.append(helper.make_node("Concat", ["oa", "o"], ["res"], name="residual", axis=-1))
    elif "--self" in args:
        nodes.append(helper.make_node("Mul", ["oa", "oa"], ["sq"], name="square"))
        nodes.append(helper.make_node("Add", ["sq", "sq"], ["dbl"], name="residual"))
        nodes.append(helper.make_node("Concat", ["dbl", "dbl"], ["res"], name="twice_w", axis=3))
    nodes += [
        helper.make_node("ReduceMean", ["res" if two else "oa"], ["r"], name="mean_w", axes=[3],
                         keepdims=1),
    ]
    if stretch:
        inits.append(numpy_helper.from_array((1 + rng.random((1, 1, 1, 2))).astype(np.float32), "wide.C"))
    if "--stretch-div" in args:
        nodes.append(helper.make_node("Div", ["r", "wide.C"], ["rw"], name="stretch"))
    elif "--stretch-dividend" in args:
        inits.append(numpy_helper.from_array(np.ones((1, 2, 28, 1), np.float32), "one.C"))
        nodes.append(helper.make_node("Add", ["r", "one.C"], ["r1"], name="plus1"))
        nodes.append(helper.make_node("Div", ["wide.C", "r1"], ["rw"], name="stretch"))
    nodes += [
        helper.make_node("Flatten", ["rw" if stretch else "r"], ["f0"], name="flatten", axis=1),
        helper.make_node("Add", ["f0", "shift.B"], ["f"], name="shift"),
        helper.make_node("Gemm", ["f", "fc1.W", "fc1.B"], ["h"], name="fc1", transB=1),
    ]
elif shapes == "rank8":
    # the Slice and ReduceMean rows at rank 8 (their highest): |conv| [1, 2, 28, 28] as
    # [1, 2, 2, 2, 2, 2, 7, 7], then Slice [0:1, 0:2, 0:2, 0:2, 1:2, 0:2, 1:7, 0:7] -> [1, 2, 2, 2, 1, 2, 6, 7],
    # ReduceMean over axis 6 (keepdims) -> [1, 2, 2, 2, 1, 2, 1, 7] -> Flatten 112; with --steps the
    # Slice's steps [1, 1, 2, 1, 1, 1, 2, 3] -> [1, 2, 1, 2, 1, 2, 3, 3], the mean -> [.., 1, 3], Flatten 24
    # (the host trainer's SliceGrad scatters dY at rank 8)
    k8 = 24 if "--steps" in args else 112
    inits = [
        ints("pad.pads", [0, 0, 1, 1, 0, 0, 1, 1]),
        numpy_helper.from_array(np.array(0.25, np.float32), "pad.value"),
        numpy_helper.from_array(he((2, 1, 3, 3), 9), "dw.W"),
        ints("r8.shape", [1, 2, 2, 2, 2, 2, 7, 7]),
        ints("cut.starts", [0, 0, 0, 0, 1, 0, 1, 0]),
        ints("cut.ends", [1, 2, 2, 2, 2, 2, 7, 7]),
        ints("cut.axes", list(range(8))),
        ints("cut.steps", [1, 1, 2, 1, 1, 1, 2, 3] if "--steps" in args else [1] * 8),
        numpy_helper.from_array(he((8, k8), k8), "fc1.W"),
        numpy_helper.from_array(np.zeros(8, np.float32), "fc1.B"),
    ]
    nodes = [
        helper.make_node("Pad", ["image", "pad.pads", "pad.value"], ["p"], name="pad", mode="constant"),
        helper.make_node("Concat", ["p", "p"], ["x2"], name="copy2", axis=1),
        helper.make_node("Conv", ["x2", "dw.W"], ["c"], name="dw", group=2, kernel_shape=[3, 3]),
        helper.make_node("Abs", ["c"], ["ca"], name="abs"),
        helper.make_node("Reshape", ["ca", "r8.shape"], ["c8"], name="to_rank8"),
        helper.make_node("Slice", ["c8", "cut.starts", "cut.ends", "cut.axes", "cut.steps"], ["s"], name="cut"),
        helper.make_node("ReduceMean", ["s"], ["r"], name="mean_6", axes=[6], keepdims=1),
        helper.make_node("Flatten", ["r"], ["f"], name="flatten", axis=1),
        helper.make_node("Gemm", ["f", "fc1.W", "fc1.B"], ["h"], name="fc1", transB=1),
    ]
else:
    k = 48 if shapes == "mean" else 52
    steps = [1, 2, 3, 1] if "--steps" in args else [1, 1, 1, 1]
    if "--steps" in args:
        k = 24 if shapes == "mean" else 18
    inits = [
        ints("pad.pads", [0, 0, 1, 1, 0, 0, 1, 1]),
        numpy_helper.from_array(np.array(0.25, np.float32), "pad.value"),
        numpy_helper.from_array(he((2, 1, 3, 3), 9), "dw.W"),
        ints("cut.starts", [0, 2, 1, 0]),
        ints("cut.ends", [1, 26, 27, 2]),
        ints("cut.axes", [0, 1, 2, 3]),
        ints("cut.steps", steps),
        numpy_helper.from_array(he((8, k), k), "fc1.W"),
        numpy_helper.from_array(np.zeros(8, np.float32), "fc1.B"),
    ]
    nodes = [
        helper.make_node("Pad", ["image", "pad.pads", "pad.value"], ["p"], name="pad", mode="constant"),
        helper.make_node("Concat", ["p", "p"], ["x2"], name="copy2", axis=1),
        helper.make_node("Conv", ["x2", "dw.W"], ["c"], name="dw", group=2, kernel_shape=[3, 3]),
        helper.make_node("Abs", ["c"], ["ca"], name="abs"),
        helper.make_node("Transpose", ["ca"], ["t"], name="to_nhwc", perm=[0, 2, 3, 1]),
        helper.make_node("Slice", ["t", "cut.starts", "cut.ends", "cut.axes", "cut.steps"], ["s"], name="cut"),
    ]
    if shapes == "mean":
        nodes += [
            helper.make_node("ReduceMean", ["s"], ["r"], name="mean_w", axes=[2], keepdims=1),
            helper.make_node("Flatten", ["r"], ["f"], name="flatten", axis=1),
        ]
    else:
        inits += [ints("sum.axes", [1]), ints("sq.axes", [1]), ints("flat.shape", [1, -1])]
        nodes += [
            helper.make_node("ReduceSum", ["s", "sum.axes"], ["r"], name="sum_h", keepdims=1),
            helper.make_node("Squeeze", ["r", "sq.axes"], ["q"], name="squeeze"),
            helper.make_node("Reshape", ["q", "flat.shape"], ["f"], name="flatten"),
        ]
    nodes.append(helper.make_node("Gemm", ["f", "fc1.W", "fc1.B"], ["h"], name="fc1", transB=1))
inits += [
    numpy_helper.from_array(he((10, 8) if fc is None else (8, 10), 8), "fc2.W"),
    numpy_helper.from_array(np.zeros(10, np.float32), "fc2.B"),
]
nodes += [
    helper.make_node("Relu", ["h"], ["hr"], name="relu2"),
    helper.make_node("Gemm", ["hr", "fc2.W", "fc2.B"], ["logits"], name="fc2", transB=1) if fc is None
    else helper.make_node("Gemm", ["hr", "fc2.W", "fc2.B"], ["logits"], name="fc2", transB=0) if fc == "matmul"
    else helper.make_node("MatMul", ["hr", "fc2.W"], ["logits"], name="fc2"),
    helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
]
used = {i for n in nodes for i in n.input}
inits = [t for t in inits if t.name in used]  # a MatMul has no bias
g = helper.make_graph(nodes, "tiny_train_cnn",
                      [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 1, 28, 28])],
                      [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="switchyard tests")
onnx.checker.check_model(m)
onnx.save(m, sys.argv[1])
