#!/usr/bin/env python3
"""Models for train.tflite_ops (test_train_tflite.c, group "ops"): small
float TFLite models with the operators the translator learned last (TANH,
LOGISTIC, BATCH_MATMUL with adj_x / adj_y and batched right operands,
grouped CONV_2D), each written twice from the same numbers:

  NAME.tflite      the TFLite model, written with tflite_fb_writer.py's
                   FlatBuffer writer (schema.fbs field ids, no flatbuffers
                   package);
  NAME_ref.onnx    the same network written by hand in ONNX with the onnx
                   package (NHWC interface, Conv in NCHW between Transposes,
                   the ONNX layouts of the filters), its initializers named
                   after the TFLite tensors so the trained values compare by
                   name;

bmmb has BATCH_MATMULs with batched right operands, a constant and an
activation. sslice has STRIDED_SLICEs with ellipsis, new-axis, begin-mask
and shrink entries; sslice_neg one with negative strides, sslice_off one
with offset = true (and a negative stride). chain has the FP32 rows'
element-wise and shape operators of seed 001 §4.2 in one chain (ADD, MUL,
SUB of trained constants, ABS, DIV by a frozen one, CONCATENATION of two
activations, TRANSPOSE, STRIDED_SLICE with a stride, SQUEEZE), the model
mcu.train_tflite_ops also trains as a ws63 package. two_sg.tflite has two subgraphs with SignatureDefs ('infer' 0,
'train_head' 1: the tanh network), two_sg_ref.onnx is subgraph 1's
reference; sig_one.tflite has the same subgraphs with signatures '1'
(subgraph 0) and 'head' (1); sig_far.tflite's signature 'far' names
subgraph 5 of 1. The refusals: bmm_batched.tflite (batch axes that do not
broadcast), bmm_huge.tflite (a product past 2^63 elements) and conv_bad_group.tflite (filter channels that do not divide
the input's).

  python3 tflite_ops_models.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tflite_fb_writer import Graph, Vec, raw_bytes, write_tflite  # noqa: E402

# ---- TFLite models ---------------------------------------------------------------
TANH, LOGISTIC, CONV_2D, FULLY_CONNECTED, RESHAPE, BATCH_MATMUL, STRIDED_SLICE = 28, 14, 3, 9, 22, 126, 45
ADD, CONCATENATION, MUL, TRANSPOSE, SUB, DIV, SQUEEZE, ABS = 0, 2, 18, 39, 41, 42, 43, 101
OPTIONS = {CONV_2D: 1, FULLY_CONNECTED: 8, RESHAPE: 17, BATCH_MATMUL: 101, STRIDED_SLICE: 32,
           ADD: 11, CONCATENATION: 10, MUL: 21, TRANSPOSE: 26, SUB: 28, DIV: 29, SQUEEZE: 30}
FLOAT32, INT32 = 0, 2


class Model(Graph):
    def __init__(self):
        super().__init__()
        self.consts = {}

    def tensor(self, name, shape, data=None, dtype=FLOAT32):
        if data is not None:
            self.consts[name] = data
            data = raw_bytes(data, np.float32 if dtype == FLOAT32 else np.int32)
        return self.add_tensor(name, shape, dtype, data)

    def write(self, path, inputs, outputs):
        write_models(path, [(self, inputs, outputs, 'main')], [])


def write_models(path, parts, signatures):
    """One .tflite of several subgraphs (tflite_fb_writer.write_tflite)"""
    write_tflite(path, parts, signatures, OPTIONS, 'tflite_ops_models.py')


rng = np.random.default_rng(20261207)


def rand(*shape, scale=0.5):
    return (scale * rng.uniform(-1, 1, size=shape)).astype(np.float32)


def fc(m, x, k, o, name, out_shape):
    w = m.tensor(name + '/weights', [o, k], rand(o, k))
    b = m.tensor(name + '/bias', [o], rand(o, scale=0.1))
    y = m.tensor(name + '/out', out_shape)
    m.op(FULLY_CONNECTED, [x, w, b], y, [(0, 'i8', 0)])
    return y


def onnx_model(path, nodes, inits, x_shape, y_name, y_shape):
    g = helper.make_graph(nodes, 'reference', [helper.make_tensor_value_info('x', TensorProto.FLOAT, x_shape)],
                          [helper.make_tensor_value_info(y_name, TensorProto.FLOAT, y_shape)],
                          [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    mo = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)], producer_name='tflite_ops_models.py')
    onnx.checker.check_model(mo)
    onnx.save(mo, path)


def squash(out, op, onnx_op):
    """x [1, 8] -> FULLY_CONNECTED [1, 6] -> TANH or LOGISTIC -> FULLY_CONNECTED [1, 3]"""
    m = Model()
    x = m.tensor('x', [1, 8])
    h = fc(m, x, 8, 6, 'fc1', [1, 6])
    a = m.tensor('act', [1, 6])
    m.op(op, [h], a)
    y = fc(m, a, 6, 3, 'fc2', [1, 3])
    name = 'tanh' if op == TANH else 'logistic'
    m.write('%s/%s.tflite' % (out, name), [x], [y])
    c = m.consts
    nodes = [helper.make_node('Gemm', ['x', 'fc1/weights', 'fc1/bias'], ['h'], transB=1),
             helper.make_node(onnx_op, ['h'], ['a']),
             helper.make_node('Gemm', ['a', 'fc2/weights', 'fc2/bias'], ['y'], transB=1)]
    onnx_model('%s/%s_ref.onnx' % (out, name), nodes, c, [1, 8], 'y', [1, 3])


def batch_matmul(out):
    """x [1, 4, 6] -> BATCH_MATMUL adj_y with W1 [5, 6] -> [1, 4, 5] -> TANH
    -> BATCH_MATMUL adj_x with W2 [1, 4, 3] (a batch axis of 1) -> [1, 5, 3]
    -> RESHAPE [1, 15]"""
    m = Model()
    x = m.tensor('x', [1, 4, 6])
    w1 = m.tensor('bmm1/w', [5, 6], rand(5, 6))
    h = m.tensor('bmm1/out', [1, 4, 5])
    m.op(BATCH_MATMUL, [x, w1], h, [(1, 'u8', 1)])
    a = m.tensor('act', [1, 4, 5])
    m.op(TANH, [h], a)
    w2 = m.tensor('bmm2/w', [1, 4, 3], rand(1, 4, 3))
    p = m.tensor('bmm2/out', [1, 5, 3])
    m.op(BATCH_MATMUL, [a, w2], p, [(0, 'u8', 1)])
    shp = m.tensor('flat/shape', [2], np.array([1, 15]), INT32)
    y = m.tensor('y', [1, 15])
    m.op(RESHAPE, [p, shp], y, [(0, 'obj', Vec('i32', [1, 15]))])
    m.write('%s/bmm.tflite' % out, [x], [y])
    # the reference: 2-D MatMuls on the rows of the batch, ONNX's own way
    # of writing x . W1^T and h^T . W2 for a batch of [4, 6] samples
    inits = {'bmm1/w': m.consts['bmm1/w'], 'bmm2/w': m.consts['bmm2/w'],
             'rows6': np.array([-1, 6], np.int64), 'b45': np.array([-1, 4, 5], np.int64),
             'rows4': np.array([-1, 4], np.int64), 'w2_2d': np.array([4, 3], np.int64),
             'flat': np.array([-1, 15], np.int64)}
    nodes = [helper.make_node('Reshape', ['x', 'rows6'], ['x2']),
             helper.make_node('Transpose', ['bmm1/w'], ['w1t'], perm=[1, 0]),
             helper.make_node('MatMul', ['x2', 'w1t'], ['h2']),
             helper.make_node('Reshape', ['h2', 'b45'], ['h']),
             helper.make_node('Tanh', ['h'], ['a']),
             helper.make_node('Transpose', ['a'], ['at'], perm=[0, 2, 1]),
             helper.make_node('Reshape', ['at', 'rows4'], ['at2']),
             helper.make_node('Reshape', ['bmm2/w', 'w2_2d'], ['w2']),
             helper.make_node('MatMul', ['at2', 'w2'], ['p2']),
             helper.make_node('Reshape', ['p2', 'flat'], ['y'])]
    onnx_model('%s/bmm_ref.onnx' % out, nodes, inits, [1, 4, 6], 'y', [1, 15])
    # refused: batch axes of 2 and 3, which do not broadcast
    r = Model()
    x = r.tensor('x', [2, 4, 6])
    w = r.tensor('w', [3, 6, 3], rand(3, 6, 3))
    y = r.tensor('y', [2, 4, 3])
    r.op(BATCH_MATMUL, [x, w], y, [])
    r.write('%s/bmm_batched.tflite' % out, [x], [y])
    # refused: shapes whose product intermediate [b, M, K, N] passes 2^63
    # elements (2^80) while every tensor's count fits (2^60)
    h = Model()
    big = 1 << 20
    x = h.tensor('x', [big, big, big])
    w = h.tensor('w', [big, big, big])
    y = h.tensor('y', [big, big, big])
    h.op(BATCH_MATMUL, [x, w], y, [])
    h.write('%s/bmm_huge.tflite' % out, [x, w], [y])


def batch_matmul_batched(out):
    """x [1, 2, 4, 6] -> BATCH_MATMUL adj_y with W1 [2, 5, 6] (a batched
    constant, rank 3 broadcast against rank 4) -> [1, 2, 4, 5] -> TANH -> a;
    x -> BATCH_MATMUL with W2 [6, 3] -> h2 [1, 2, 4, 3];
    BATCH_MATMUL adj_x of a and h2 (both activations, batched) -> [1, 2, 5, 3]
    -> RESHAPE [1, 30]"""
    m = Model()
    x = m.tensor('x', [1, 2, 4, 6])
    w1 = m.tensor('bmmb1/w', [2, 5, 6], rand(2, 5, 6))
    h1 = m.tensor('bmmb1/out', [1, 2, 4, 5])
    m.op(BATCH_MATMUL, [x, w1], h1, [(1, 'u8', 1)])
    a = m.tensor('act', [1, 2, 4, 5])
    m.op(TANH, [h1], a)
    w2 = m.tensor('bmmb2/w', [6, 3], rand(6, 3))
    h2 = m.tensor('bmmb2/out', [1, 2, 4, 3])
    m.op(BATCH_MATMUL, [x, w2], h2, [])
    p = m.tensor('bmmb3/out', [1, 2, 5, 3])
    m.op(BATCH_MATMUL, [a, h2], p, [(0, 'u8', 1)])
    shp = m.tensor('flat/shape', [2], np.array([1, 30]), INT32)
    y = m.tensor('y', [1, 30])
    m.op(RESHAPE, [p, shp], y, [(0, 'obj', Vec('i32', [1, 30]))])
    m.write('%s/bmmb.tflite' % out, [x], [y])
    # The reference, written another way. x . W1[g]^T for both groups g is
    # one 2-D MatMul of x's rows (n, g, m) with W1 laid out [6, (g', j)];
    # the groups' own products are the diagonal g = g', sliced out and
    # concatenated. a^T . h2 per (n, g) is the sum over m of a product
    # broadcast to [n, g, i, j, m], m last.
    c, big = m.consts, 2**62
    inits = {'bmmb1/w': c['bmmb1/w'], 'bmmb2/w': c['bmmb2/w'],
             'rows6': np.array([-1, 6], np.int64), 'w1_2d': np.array([6, 10], np.int64),
             'r5': np.array([-1, 2, 4, 2, 5], np.int64), 'b245': np.array([-1, 2, 4, 5], np.int64),
             'b243': np.array([-1, 2, 4, 3], np.int64), 'ax5': np.arange(5, dtype=np.int64),
             's0': np.array([0, 0, 0, 0, 0], np.int64), 'e0': np.array([big, 1, big, 1, big], np.int64),
             's1': np.array([0, 1, 0, 1, 0], np.int64), 'e1': np.array([big, 2, big, 2, big], np.int64),
             'u3': np.array([3], np.int64), 'u2': np.array([2], np.int64), 'm_axis': np.array([4], np.int64),
             'flat': np.array([-1, 30], np.int64)}
    nodes = [helper.make_node('Reshape', ['x', 'rows6'], ['xr']),
             helper.make_node('Transpose', ['bmmb1/w'], ['w1t'], perm=[2, 0, 1]),
             helper.make_node('Reshape', ['w1t', 'w1_2d'], ['w1all']),
             helper.make_node('MatMul', ['xr', 'w1all'], ['r']),
             helper.make_node('Reshape', ['r', 'r5'], ['r5v']),
             helper.make_node('Slice', ['r5v', 's0', 'e0', 'ax5'], ['d0']),
             helper.make_node('Slice', ['r5v', 's1', 'e1', 'ax5'], ['d1']),
             helper.make_node('Concat', ['d0', 'd1'], ['dg'], axis=1),
             helper.make_node('Reshape', ['dg', 'b245'], ['h1']),
             helper.make_node('Tanh', ['h1'], ['a']),
             helper.make_node('MatMul', ['xr', 'bmmb2/w'], ['h2r']),
             helper.make_node('Reshape', ['h2r', 'b243'], ['h2']),
             helper.make_node('Transpose', ['a'], ['at'], perm=[0, 1, 3, 2]),
             helper.make_node('Unsqueeze', ['at', 'u3'], ['au']),
             helper.make_node('Transpose', ['h2'], ['h2t'], perm=[0, 1, 3, 2]),
             helper.make_node('Unsqueeze', ['h2t', 'u2'], ['hu']),
             helper.make_node('Mul', ['au', 'hu'], ['terms']),
             helper.make_node('ReduceSum', ['terms', 'm_axis'], ['p'], keepdims=0),
             helper.make_node('Reshape', ['p', 'flat'], ['y'])]
    onnx_model('%s/bmmb_ref.onnx' % out, nodes, inits, [1, 2, 4, 6], 'y', [1, 30])


def grouped_conv(out, cin=4, fin=2, cout=6, name='gconv'):
    """x [1, 5, 5, 4] -> CONV_2D 3x3 SAME, filter [6, 3, 3, 2] (2 groups)
    -> [1, 5, 5, 6] -> RESHAPE [1, 150] -> FULLY_CONNECTED [1, 3]"""
    m = Model()
    x = m.tensor('x', [1, 5, 5, cin])
    w = m.tensor('conv/filter', [cout, 3, 3, fin], rand(cout, 3, 3, fin))
    b = m.tensor('conv/bias', [cout], rand(cout, scale=0.1))
    h = m.tensor('conv/out', [1, 5, 5, cout])
    m.op(CONV_2D, [x, w, b], h, [(0, 'i8', 0), (1, 'i32', 1), (2, 'i32', 1), (3, 'i8', 0)])
    shp = m.tensor('flat/shape', [2], np.array([1, 25 * cout]), INT32)
    f = m.tensor('flat', [1, 25 * cout])
    m.op(RESHAPE, [h, shp], f, [(0, 'obj', Vec('i32', [1, 25 * cout]))])
    y = fc(m, f, 25 * cout, 3, 'fc', [1, 3])
    m.write('%s/%s.tflite' % (out, name), [x], [y])
    if cin % fin:
        return
    c = m.consts
    inits = {'conv/filter': np.transpose(c['conv/filter'], (0, 3, 1, 2)), 'conv/bias': c['conv/bias'],
             'fc/weights': c['fc/weights'], 'fc/bias': c['fc/bias'], 'flat': np.array([-1, 25 * cout], np.int64)}
    nodes = [helper.make_node('Transpose', ['x'], ['xc'], perm=[0, 3, 1, 2]),
             helper.make_node('Conv', ['xc', 'conv/filter', 'conv/bias'], ['hc'], group=cin // fin,
                              kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node('Transpose', ['hc'], ['h'], perm=[0, 2, 3, 1]),
             helper.make_node('Reshape', ['h', 'flat'], ['f']),
             helper.make_node('Gemm', ['f', 'fc/weights', 'fc/bias'], ['y'], transB=1)]
    onnx_model('%s/%s_ref.onnx' % (out, name), nodes, inits, [1, 5, 5, cin], 'y', [1, 3])


def slice_front(m):
    """x [1, 12] -> FULLY_CONNECTED fc1 [1, 60] -> RESHAPE [1, 3, 4, 5]: the
    slice models' front; (x, the reshaped r4)"""
    x = m.tensor('x', [1, 12])
    h = fc(m, x, 12, 60, 'fc1', [1, 60])
    s4 = m.tensor('r4/shape', [4], np.array([1, 3, 4, 5]), INT32)
    r4 = m.tensor('r4', [1, 3, 4, 5])
    m.op(RESHAPE, [h, s4], r4, [(0, 'obj', Vec('i32', [1, 3, 4, 5]))])
    return x, r4


def slice_head(m, a, k):
    """a -> RESHAPE [1, k] -> FULLY_CONNECTED fc2 [1, 3]: the slice models'
    head; its output"""
    s2 = m.tensor('flat/shape', [2], np.array([1, k]), INT32)
    f = m.tensor('flat', [1, k])
    m.op(RESHAPE, [a, s2], f, [(0, 'obj', Vec('i32', [1, k]))])
    return fc(m, f, k, 3, 'fc2', [1, 3])


def slice_ref(path, c, k, last, inits, slices):
    """A slice model's ONNX reference: Gemm fc1, Reshape to [-1, 3, 4, 5]
    ('r4'), the slice nodes (r4 to `last`) with their initializers, Reshape
    to [-1, k], Gemm fc2; c the TFLite model's constants"""
    every = {n: c[n] for n in ('fc1/weights', 'fc1/bias', 'fc2/weights', 'fc2/bias')}
    every.update({'r4s': np.array([-1, 3, 4, 5], np.int64), 'flat%d' % k: np.array([-1, k], np.int64)})
    every.update(inits)
    nodes = [helper.make_node('Gemm', ['x', 'fc1/weights', 'fc1/bias'], ['h'], transB=1),
             helper.make_node('Reshape', ['h', 'r4s'], ['r4'])] + slices + [
             helper.make_node('Reshape', [last, 'flat%d' % k], ['f']),
             helper.make_node('Gemm', ['f', 'fc2/weights', 'fc2/bias'], ['y'], transB=1)]
    onnx_model(path, nodes, every, [1, 12], 'y', [1, 3])


def strided_slices(out):
    """x [1, 12] -> FULLY_CONNECTED [1, 60] -> RESHAPE [1, 3, 4, 5]
    -> STRIDED_SLICE (entries: ellipsis, new axis, 1:5:2; TF's rules: the
       ellipsis stands for axes 0-2 whole) [1, 3, 4, 1, 2]
    -> STRIDED_SLICE (entries: begin_mask'd 0, shrink at 1, ellipsis: the
       trailing axes whole) [1, 4, 1, 2]
    -> RESHAPE [1, 8] -> FULLY_CONNECTED [1, 3]
    The reference writes the same slices as ONNX Slice / Unsqueeze / Squeeze
    by hand (what TF's rules say the masks mean)."""
    m = Model()
    x, r4 = slice_front(m)
    # StridedSliceOptions: begin_mask 0, end_mask 1, ellipsis_mask 2,
    # new_axis_mask 3, shrink_axis_mask 4
    b1 = m.tensor('ss1/begin', [3], np.array([0, 0, 1]), INT32)
    e1 = m.tensor('ss1/end', [3], np.array([0, 0, 5]), INT32)
    t1 = m.tensor('ss1/strides', [3], np.array([1, 1, 2]), INT32)
    a1 = m.tensor('ss1', [1, 3, 4, 1, 2])
    m.op(STRIDED_SLICE, [r4, b1, e1, t1], a1, [(2, 'i32', 1), (3, 'i32', 2)])
    b2 = m.tensor('ss2/begin', [3], np.array([7, 1, 0]), INT32)  # entry 0's 7 is masked out
    e2 = m.tensor('ss2/end', [3], np.array([0, 2, 0]), INT32)
    t2 = m.tensor('ss2/strides', [3], np.array([1, 1, 1]), INT32)
    a2 = m.tensor('ss2', [1, 4, 1, 2])
    m.op(STRIDED_SLICE, [a1, b2, e2, t2], a2, [(0, 'i32', 1), (1, 'i32', 1), (2, 'i32', 4), (4, 'i32', 2)])
    y = slice_head(m, a2, 8)
    m.write('%s/sslice.tflite' % out, [x], [y])
    c = m.consts
    BIG = np.iinfo(np.int64).max
    slice_ref('%s/sslice_ref.onnx' % out, c, 8, 'a2', {
        # full-rank Slice parameters (what the training IR takes), the
        # whole axes to the end (a batch of any size)
        'st1': np.array([0, 0, 0, 1], np.int64), 'en1': np.array([BIG, BIG, BIG, 5], np.int64),
        'ax1': np.arange(4, dtype=np.int64), 'sp1': np.array([1, 1, 1, 2], np.int64),
        'new1': np.array([3], np.int64),
        'st2': np.array([0, 1, 0, 0, 0], np.int64), 'en2': np.array([BIG, 2, BIG, BIG, BIG], np.int64),
        'ax2': np.arange(5, dtype=np.int64), 'sq2': np.array([1], np.int64)},
        [helper.make_node('Slice', ['r4', 'st1', 'en1', 'ax1', 'sp1'], ['s1']),
         helper.make_node('Unsqueeze', ['s1', 'new1'], ['a1']),
         helper.make_node('Slice', ['a1', 'st2', 'en2', 'ax2'], ['s2']),
         helper.make_node('Squeeze', ['s2', 'sq2'], ['a2'])])


def strided_slices_neg(out):
    """x [1, 12] -> FULLY_CONNECTED [1, 60] -> RESHAPE [1, 3, 4, 5]
    -> STRIDED_SLICE with negative strides: [:, 2:0:-1, 3::-2, 4::-2]
       (axis 1 runs 2, 1; axis 2 runs 3, 1; axis 3 runs 4, 2, 0, down to
       element 0) [1, 2, 2, 3]
    -> RESHAPE [1, 12] -> FULLY_CONNECTED [1, 3]
    The reference writes the slice as an ONNX Slice by hand (negative
    steps, ends past element 0)."""
    m = Model()
    x, r4 = slice_front(m)
    # StridedSliceOptions: begin_mask 0, end_mask 1
    b1 = m.tensor('ssn/begin', [4], np.array([0, 2, 3, 4]), INT32)
    e1 = m.tensor('ssn/end', [4], np.array([0, 0, 0, 0]), INT32)
    t1 = m.tensor('ssn/strides', [4], np.array([1, -1, -2, -2]), INT32)
    a1 = m.tensor('ssn', [1, 2, 2, 3])
    m.op(STRIDED_SLICE, [r4, b1, e1, t1], a1, [(0, 'i32', 1), (1, 'i32', 1 | 4 | 8)])
    y = slice_head(m, a1, 12)
    m.write('%s/sslice_neg.tflite' % out, [x], [y])
    c = m.consts
    BIG, LOW = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    slice_ref('%s/sslice_neg_ref.onnx' % out, c, 12, 'a1', {
        'st': np.array([0, 2, 3, 4], np.int64), 'en': np.array([BIG, 0, LOW, LOW], np.int64),
        'sp': np.array([1, -1, -2, -2], np.int64), 'ax': np.arange(4, dtype=np.int64)},
        [helper.make_node('Slice', ['r4', 'st', 'en', 'ax', 'sp'], ['a1'])])


def strided_slice_offset(out):
    """x [1, 12] -> FULLY_CONNECTED [1, 60] -> RESHAPE [1, 3, 4, 5]
    -> STRIDED_SLICE with offset = true (each end counted from its begin as
       resolved, TFLite's StridedSliceEndForAxis): begin [0, 1, 3, -2], end
       [1, 1, -2, 2], strides [1, 1, -1, 1], shrink at 1: axis 0 from 0 to
       0 + 1, axis 1 the one element 1, axis 2 from 3 down to 3 - 2 = 1 (3,
       2), axis 3 from -2 (3) to 3 + 2 = 5 (3, 4) [1, 2, 2] (without the
       offset, axis 2 would be empty)
    -> RESHAPE [1, 4] -> FULLY_CONNECTED [1, 3]
    The reference writes the slice as ONNX Slice + Squeeze by hand."""
    m = Model()
    x, r4 = slice_front(m)
    # StridedSliceOptions: shrink_axis_mask 4, offset 5
    b1 = m.tensor('sso/begin', [4], np.array([0, 1, 3, -2]), INT32)
    e1 = m.tensor('sso/end', [4], np.array([1, 1, -2, 2]), INT32)
    t1 = m.tensor('sso/strides', [4], np.array([1, 1, -1, 1]), INT32)
    a1 = m.tensor('sso', [1, 2, 2])
    m.op(STRIDED_SLICE, [r4, b1, e1, t1], a1, [(4, 'i32', 2), (5, 'u8', 1)])
    y = slice_head(m, a1, 4)
    m.write('%s/sslice_off.tflite' % out, [x], [y])
    c = m.consts
    BIG = np.iinfo(np.int64).max
    slice_ref('%s/sslice_off_ref.onnx' % out, c, 4, 'a1', {
        'st': np.array([0, 1, 3, 3], np.int64), 'en': np.array([BIG, 2, 1, 5], np.int64),
        'sp': np.array([1, 1, -1, 1], np.int64), 'ax': np.arange(4, dtype=np.int64),
        'sq': np.array([1], np.int64)},
        [helper.make_node('Slice', ['r4', 'st', 'en', 'ax', 'sp'], ['s1']),
         helper.make_node('Squeeze', ['s1', 'sq'], ['a1'])])


def chain(out):
    """x [1, 8] -> FULLY_CONNECTED fc1 [1, 8] (h) -> ADD c1 -> MUL c2 -> SUB c3
    -> ABS -> DIV by c4 (every constant [1, 8]: no broadcasting, the FP32
    Mul/Add/Sub rows) -> CONCATENATION with h on axis 1 [1, 16] -> RESHAPE
    [1, 4, 4] -> TRANSPOSE [0, 2, 1] -> STRIDED_SLICE [:, :, 0:4:2] (axis 0
    by begin/end mask) [1, 4, 2] -> RESHAPE [1, 1, 8] -> SQUEEZE [1] [1, 8]
    -> FULLY_CONNECTED fc2 [1, 3].
    The trained tensors: fc1's and fc2's weights and biases and the
    constants of ADD, MUL and SUB (weight operands); DIV's divisor is frozen
    (c4 = 1 + |u| > 0, so the quotient never divides by zero).
    The reference writes the same network in ONNX by hand: Gemm, Add, Mul,
    Sub, Abs, Div, Concat, Reshape, Transpose, Slice, Reshape, Squeeze, Gemm."""
    m = Model()
    x = m.tensor('x', [1, 8])
    h = fc(m, x, 8, 8, 'fc1', [1, 8])
    prev = h
    for op, name, data in ((ADD, 'add', rand(1, 8)), (MUL, 'mul', (1 + rand(1, 8))), (SUB, 'sub', rand(1, 8))):
        c = m.tensor(name + '/c', [1, 8], data)
        o = m.tensor(name, [1, 8])
        m.op(op, [prev, c], o, [(0, 'i8', 0)])  # fused_activation_function NONE
        prev = o
    a = m.tensor('abs', [1, 8])
    m.op(ABS, [prev], a)
    c4 = m.tensor('div/c', [1, 8], (1 + np.abs(rand(1, 8))).astype(np.float32))
    d = m.tensor('div', [1, 8])
    m.op(DIV, [a, c4], d, [(0, 'i8', 0)])
    cc = m.tensor('concat', [1, 16])
    m.op(CONCATENATION, [d, h], cc, [(0, 'i32', 1), (1, 'i8', 0)])  # axis 1, no activation
    s1 = m.tensor('r3/shape', [3], np.array([1, 4, 4]), INT32)
    r3 = m.tensor('r3', [1, 4, 4])
    m.op(RESHAPE, [cc, s1], r3, [(0, 'obj', Vec('i32', [1, 4, 4]))])
    perm = m.tensor('tr/perm', [3], np.array([0, 2, 1]), INT32)
    tr = m.tensor('tr', [1, 4, 4])
    m.op(TRANSPOSE, [r3, perm], tr, [])
    # StridedSliceOptions: begin_mask 0, end_mask 1 (axis 0 whole)
    b = m.tensor('ss/begin', [3], np.array([0, 0, 0]), INT32)
    e = m.tensor('ss/end', [3], np.array([0, 4, 4]), INT32)
    st = m.tensor('ss/strides', [3], np.array([1, 1, 2]), INT32)
    ss = m.tensor('ss', [1, 4, 2])
    m.op(STRIDED_SLICE, [tr, b, e, st], ss, [(0, 'i32', 1), (1, 'i32', 1)])
    s2 = m.tensor('r1/shape', [3], np.array([1, 1, 8]), INT32)
    r1 = m.tensor('r1', [1, 1, 8])
    m.op(RESHAPE, [ss, s2], r1, [(0, 'obj', Vec('i32', [1, 1, 8]))])
    sq = m.tensor('sq', [1, 8])
    m.op(SQUEEZE, [r1], sq, [(0, 'obj', Vec('i32', [1]))])  # squeeze_dims [1]
    y = fc(m, sq, 8, 3, 'fc2', [1, 3])
    m.write('%s/chain.tflite' % out, [x], [y])
    c = m.consts
    BIG = np.iinfo(np.int64).max
    inits = {k: c[k] for k in ('fc1/weights', 'fc1/bias', 'add/c', 'mul/c', 'sub/c', 'div/c', 'fc2/weights',
                               'fc2/bias')}
    inits.update({'r3s': np.array([-1, 4, 4], np.int64), 'r1s': np.array([-1, 1, 8], np.int64),
                  'st': np.array([0, 0, 0], np.int64), 'en': np.array([BIG, 4, 4], np.int64),
                  'ax': np.arange(3, dtype=np.int64), 'sp': np.array([1, 1, 2], np.int64),
                  'sq1': np.array([1], np.int64)})
    nodes = [helper.make_node('Gemm', ['x', 'fc1/weights', 'fc1/bias'], ['h'], transB=1),
             helper.make_node('Add', ['h', 'add/c'], ['a1']),
             helper.make_node('Mul', ['a1', 'mul/c'], ['a2']),
             helper.make_node('Sub', ['a2', 'sub/c'], ['a3']),
             helper.make_node('Abs', ['a3'], ['a4']),
             helper.make_node('Div', ['a4', 'div/c'], ['a5']),
             helper.make_node('Concat', ['a5', 'h'], ['cc'], axis=1),
             helper.make_node('Reshape', ['cc', 'r3s'], ['r3']),
             helper.make_node('Transpose', ['r3'], ['tr'], perm=[0, 2, 1]),
             helper.make_node('Slice', ['tr', 'st', 'en', 'ax', 'sp'], ['ss']),
             helper.make_node('Reshape', ['ss', 'r1s'], ['r1']),
             helper.make_node('Squeeze', ['r1', 'sq1'], ['sq']),
             helper.make_node('Gemm', ['sq', 'fc2/weights', 'fc2/bias'], ['y'], transB=1)]
    onnx_model('%s/chain_ref.onnx' % out, nodes, inits, [1, 8], 'y', [1, 3])


def two_subgraphs(out):
    """two_sg.tflite: subgraph 0 (signature 'infer') x [1, 8] ->
    FULLY_CONNECTED [1, 3]; subgraph 1 (signature 'train_head') the tanh
    network of squash() with its numbers, whose reference is
    two_sg_ref.onnx"""
    a = Model()
    x = a.tensor('x', [1, 8])
    y = fc(a, x, 8, 3, 'infer_fc', [1, 3])
    b = Model()
    x1 = b.tensor('x', [1, 8])
    h = fc(b, x1, 8, 6, 'fc1', [1, 6])
    t = b.tensor('act', [1, 6])
    b.op(TANH, [h], t)
    y1 = fc(b, t, 6, 3, 'fc2', [1, 3])
    write_models('%s/two_sg.tflite' % out, [(a, [x], [y], 'infer'), (b, [x1], [y1], 'train_head')],
                 [('infer', 0, [('x', x)], [('y', y)]), ('train_head', 1, [('x', x1)], [('y', y1)])])
    nodes = [helper.make_node('Gemm', ['x', 'fc1/weights', 'fc1/bias'], ['h'], transB=1),
             helper.make_node('Tanh', ['h'], ['a']),
             helper.make_node('Gemm', ['a', 'fc2/weights', 'fc2/bias'], ['y'], transB=1)]
    onnx_model('%s/two_sg_ref.onnx' % out, nodes, b.consts, [1, 8], 'y', [1, 3])
    # the same subgraphs with a signature called '1' that names subgraph 0:
    # a name is looked up before an index
    write_models('%s/sig_one.tflite' % out, [(a, [x], [y], 'infer'), (b, [x1], [y1], 'train_head')],
                 [('1', 0, [('x', x)], [('y', y)]), ('head', 1, [('x', x1)], [('y', y1)])])
    # refused when chosen: a signature naming a subgraph the model lacks
    write_models('%s/sig_far.tflite' % out, [(a, [x], [y], 'infer')], [('far', 5, [('x', x)], [('y', y)])])


def main():
    out = sys.argv[1]
    squash(out, TANH, 'Tanh')
    squash(out, LOGISTIC, 'Sigmoid')
    batch_matmul(out)
    batch_matmul_batched(out)
    grouped_conv(out)
    strided_slices(out)
    two_subgraphs(out)
    grouped_conv(out, cin=4, fin=3, cout=6, name='conv_bad_group')
    strided_slices_neg(out)  # last: the models before keep their numbers
    strided_slice_offset(out)
    chain(out)  # after the others: they keep their numbers


if __name__ == '__main__':
    main()
