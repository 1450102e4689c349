#!/usr/bin/env python3
"""Models for train.qas_tflite (test_qas_tflite.c): small int8 (fully
quantized) TFLite models for QAS-INT8, each written twice from the same
numbers:

  NAME.tflite      the int8 TFLite model, written with tflite_fb_writer.py's
                   FlatBuffer writer, QuantizationParameters tables (scale,
                   zero_point, quantized_dimension) and all;
  NAME_ref.onnx    the same network written by hand in ONNX QDQ with the
                   onnx package: every int8 activation a QuantizeLinear /
                   DequantizeLinear pair, the int8 weights and int32 biases
                   initializers read through DequantizeLinear (per channel
                   with axis 0), Gemm(transB = 1), Conv in NCHW between
                   Transposes with its filter in OIHW;
  NAME_codes.bin   the trained layers' int8 weight codes and int32 bias
                   codes as written (each layer's weights [O, K] then its
                   biases, first layer first), for the test to check what
                   the session read.

mlp: x [3, 8] -> QUANTIZE -> FULLY_CONNECTED 8->6 (per-channel weights,
     RELU) -> FULLY_CONNECTED 6->4 (per-tensor weights) -> SOFTMAX ->
     DEQUANTIZE
cnn: x [3, 6, 6, 2] -> QUANTIZE -> CONV_2D 3x3 stride 2 SAME (per-channel,
     RELU) -> RESHAPE [3, 27] -> FULLY_CONNECTED 27->4 -> SOFTMAX ->
     DEQUANTIZE
conv: x [3, 6, 6, 2] -> QUANTIZE -> CONV_2D 3x3 SAME (3 channels, per-channel,
     RELU) -> CONV_2D 3x3 VALID (2 channels, per-tensor) -> RESHAPE [3, 32]
     -> FULLY_CONNECTED 32->4 -> SOFTMAX -> DEQUANTIZE, all three layers
     trained; its twin conv_ref.onnx is the same network written in NCHW
     (input [3, 2, 6, 6], no Transposes, Conv -> Relu -> QuantizeLinear,
     Flatten, the Gemm's weight columns in the CHW order of the NCHW
     flattening); conv_codes.bin holds the filters as the session reads
     them (OIHW), the FULLY_CONNECTED weights as the .tflite holds them;
     conv_nhwc.onnx is the network in the translation's NHWC form written
     by hand, conv1's Relu before its NCHW -> NHWC Transpose
ops: x [3, 6, 6, 2] -> QUANTIZE xq -> AVERAGE_POOL_2D 2x2 -> ap; xq ->
     QUANTIZE (int8 to int8, another scale) -> MAX_POOL_2D 2x2 -> mp;
     ADD(ap, mp) RELU -> sm; ADD(mp, mp) -> sm2; CONCATENATION(sm, sm2,
     axis 3) -> RESHAPE [3, 36] -> FULLY_CONNECTED 36->4 -> SOFTMAX ->
     DEQUANTIZE; the two ADDs' inputs each of their own scale, the
     CONCATENATION's inputs of the output's; ops_front the same front
     alone, its output the CONCATENATION's codes (for qas_tflite_real.mjs);
     bad_concat_scale.tflite the front with sm2 and the CONCATENATION each
     of its own scale (refused: TFLite's int8 kernel does not requantize,
     and real TFLite cannot initialize it: qas_tflite_real.mjs)
pool: x [3, 6, 6, 2] -> QUANTIZE -> CONV_2D 3x3 SAME (RELU) -> MAX_POOL_2D
     2x2 -> RESHAPE [3, 27] -> FULLY_CONNECTED 27->4 -> SOFTMAX ->
     DEQUANTIZE, Conv and FC trained through the pool; its twin pool_ref.onnx
     in NCHW (pool's docstring)
dw:  x [3, 8, 8, 2] -> QUANTIZE -> DEPTHWISE_CONV_2D 3x3 x2 SAME (per-channel
     along dimension 3, RELU) -> MAX_POOL_2D 2x2 -> RESHAPE [3, 64] ->
     FULLY_CONNECTED 64->4 -> SOFTMAX -> DEQUANTIZE
elem: broadcasting ADD, SUB and MUL of two activations or with an int8
     constant (fused RELU6, RELU, NONE) -> CONCATENATION -> RESHAPE ->
     FULLY_CONNECTED 360->4 (elem's docstring); padmean: PAD, PADV2, MEAN
     with and without keep_dims, each mean broadcast against a padded tensor
     -> CONCATENATION -> RESHAPE -> FULLY_CONNECTED 384->4; shape:
     TRANSPOSE, STRIDED_SLICE (negative stride, new axes, shrink), SQUEEZE,
     MAXIMUM and MINIMUM (broadcast, an int8 constant), ADD with a fused
     RELU_N1_TO_1 -> CONCATENATION -> RESHAPE -> FULLY_CONNECTED 120->4
     (shape's docstring); NAME_front the front alone (for
     qas_tflite_real.mjs); rq_pad.tflite, a PAD into another quantization
     than its input's (for qas_tflite_real.mjs: TFLite copies the codes)

and the refusals, bad_TAG.tflite: the mlp (BAD), dw (DW_BAD) or conv
(CONV_BAD) with one thing wrong;
two.tflite, the cnn (subgraph 0, signature 'serving_cnn') and the mlp
(subgraph 1, 'train_mlp') in one file; float.tflite, a float model;
data/{train,test}/{input,label}_K.npy, batches of the mlp's input for
`switchyard train`, data_conv/ the same of conv's.

  python3 qas_tflite_models.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tflite_fb_writer import Graph, Vec, raw_bytes, write_tflite  # noqa: E402

CONV_2D, DEQUANTIZE, FULLY_CONNECTED, RESHAPE, SOFTMAX, QUANTIZE, ADD, SUB = 3, 6, 9, 22, 25, 114, 0, 41
DEPTHWISE_CONV_2D, MAX_POOL_2D, AVERAGE_POOL_2D, CONCATENATION = 4, 17, 1, 2
OPTIONS = {CONV_2D: 1, FULLY_CONNECTED: 8, RESHAPE: 17, SOFTMAX: 9, ADD: 11, DEPTHWISE_CONV_2D: 2, MAX_POOL_2D: 5,
           AVERAGE_POOL_2D: 5, CONCATENATION: 10}
FLOAT32, INT32, UINT8, INT16, INT8 = 0, 2, 3, 7, 9
NONE, RELU, RELU6 = 0, 1, 3
BATCH = 3


class QModel(Graph):
    def tensor(self, name, shape, dtype, data=None, q=None):
        """q: (scales, zero_points, quantized_dimension) or None"""
        return self.add_tensor(name, shape, dtype, None if data is None else raw_bytes(data), q)

    def q_input(self, shape, sx, zx):
        """the float input x and its QUANTIZE into xq (sx, zx)"""
        x = self.tensor('x', shape, FLOAT32)
        xq = self.tensor('xq', shape, INT8, q=([sx], [zx], 0))
        self.op(QUANTIZE, [x], xq)
        return x, xq

    def flat(self, c, k, s, z, reshape=True):
        """RESHAPE of c into flat [BATCH, k] (scale s, zero point z); reshape
        False: the tensors alone, no operator, and c returned"""
        shp = self.tensor('flat/shape', [2], INT32, np.array([BATCH, k], dtype=np.int32))
        r = self.tensor('flat', [BATCH, k], INT8, q=([s], [z], 0))
        if not reshape:
            return c
        self.op(RESHAPE, [c, shp], r, [(0, 'obj', Vec('i32', [BATCH, k]))])
        return r

    def classifier(self, r, W, sw, bw, s_in, sl, zl):
        """r (scale s_in) -> FULLY_CONNECTED fc (weight codes W [4, K] of
        per-channel scales sw, bias codes bw) -> logits (sl, zl) -> SOFTMAX
        -> probs (1/256, -128) -> DEQUANTIZE -> y, returned"""
        w = self.tensor('fc/weights', [4, W.shape[1]], INT8, W, (sw, [0] * 4, 0))
        b = self.tensor('fc/bias', [4], INT32, bw, (bias_scales(s_in, sw), [0] * 4, 0))
        lg = self.tensor('logits', [BATCH, 4], INT8, q=([sl], [zl], 0))
        self.op(FULLY_CONNECTED, [r, w, b], lg, [(0, 'i8', NONE)])
        p = self.tensor('probs', [BATCH, 4], INT8, q=([1.0 / 256], [-128], 0))
        self.op(SOFTMAX, [lg], p, [(0, 'f32', 1.0)])
        y = self.tensor('y', [BATCH, 4], FLOAT32)
        self.op(DEQUANTIZE, [p], y)
        return y

    def write(self, path, inputs, outputs):
        self.io = (inputs, outputs)
        write_qmodels(path, [(self, inputs, outputs, 'main')], [])


def write_qmodels(path, parts, signatures):
    """One .tflite of several subgraphs (tflite_fb_writer.write_tflite)"""
    write_tflite(path, parts, signatures, OPTIONS, 'qas_tflite_models.py')


f32 = np.float32


def codes8(rng, *shape):
    return rng.integers(-127, 128, size=shape).astype(np.int8)


def bias_scales(sx, sw):
    return np.array([f32(float(sx) * float(s)) for s in sw], dtype=np.float32)


# ---- the ONNX QDQ twin ------------------------------------------------------------

class Onnx:
    def __init__(self):
        self.nodes, self.inits = [], []

    def init(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def qparams(self, base, scale, zp):
        return (self.init(base + '.s', np.array(scale, dtype=np.float32)),
                self.init(base + '.z', np.array(zp, dtype=np.int8)))

    def q(self, x, base, scale, zp):
        """QuantizeLinear of float x into base's codes, then their DequantizeLinear"""
        s, z = self.qparams(base, scale, zp)
        self.nodes.append(helper.make_node('QuantizeLinear', [x, s, z], [base + '.q']))
        self.nodes.append(helper.make_node('DequantizeLinear', [base + '.q', s, z], [base + '.dq']))
        return base + '.dq'

    def const_dq(self, name, codes, scales, zero_dtype):
        per = len(scales) > 1
        self.init(name, codes)
        s = self.init(name + '.s', np.array(scales if per else scales[0], dtype=np.float32))
        z = self.init(name + '.z', np.zeros(len(scales) if per else (), dtype=zero_dtype))
        kw = {'axis': 0} if per else {}
        self.nodes.append(helper.make_node('DequantizeLinear', [name, s, z], [name + '.dq'], **kw))
        return name + '.dq'

    def flat(self, c, k, s, z):
        """Reshape of c into [batch, k] (shape [0, k]), then flat's QDQ (s, z)"""
        self.init('flat.shape', np.array([0, k], dtype=np.int64))
        self.nodes.append(helper.make_node('Reshape', [c, 'flat.shape'], ['flat.f']))
        return self.q('flat.f', 'flat', s, z)

    def classifier(self, r, W, sw, bw, s_in, sl, zl, name='fc'):
        """r (scale s_in) -> Gemm of NAME's weight codes W and bias codes bw
        (per-channel scales sw) -> logits QDQ (sl, zl) -> Softmax -> probs
        QDQ (1/256, -128) -> y"""
        wd = self.const_dq(name + '/weights', W, sw, np.int8)
        bd = self.const_dq(name + '/bias', bw, bias_scales(s_in, sw), np.int32)
        self.nodes.append(helper.make_node('Gemm', [r, wd, bd], ['logits.f'], transB=1))
        ld = self.q('logits.f', 'logits', sl, zl)
        self.nodes.append(helper.make_node('Softmax', [ld], ['probs.f'], axis=-1))
        s, z = self.qparams('probs', 1.0 / 256, -128)
        self.nodes.append(helper.make_node('QuantizeLinear', ['probs.f', s, z], ['probs.q']))
        self.nodes.append(helper.make_node('DequantizeLinear', ['probs.q', s, z], ['y']))

    def save(self, path, x_shape, y_shape):
        g = helper.make_graph(self.nodes, 'twin', [helper.make_tensor_value_info('x', TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info('y', TensorProto.FLOAT, y_shape)], self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)], producer_name='qas_tflite_models.py')
        onnx.checker.check_model(m)
        onnx.save(m, path)


def save_codes(path, parts):
    with open(path, 'wb') as fh:
        for p in parts:
            fh.write(np.ascontiguousarray(p).tobytes())


# ---- mlp ----------------------------------------------------------------------------

def mlp_numbers():
    rng = np.random.default_rng(20261207)
    n = {}
    n['sx'], n['zx'] = f32(0.02), -3
    n['W1'] = codes8(rng, 6, 8)
    n['sw1'] = (0.004 + 0.004 * rng.uniform(size=6)).astype(np.float32)
    n['b1'] = rng.integers(-300, 300, size=6).astype(np.int32)
    n['sh'], n['zh'] = f32(0.05), -10
    n['W2'] = codes8(rng, 4, 6)
    n['sw2'] = np.array([0.011], dtype=np.float32)
    n['b2'] = rng.integers(-200, 200, size=4).astype(np.int32)
    n['sl'], n['zl'] = f32(0.1), 2
    return n


def mlp_tflite(path, n, bad=None):
    """bad: one defect, see BAD"""
    m = QModel()
    bad = bad or ''
    xtype = FLOAT32
    x = m.tensor('x', [BATCH, 8], xtype)
    xq_type = {'uint8': UINT8, 'int16': INT16}.get(bad, INT8)
    xq_q = ([n['sx']], [n['zx']], 0)
    if bad == 'no_quant':
        xq_q = None
    if bad == 'scale_zero':
        xq_q = ([0.0], [n['zx']], 0)
    if bad == 'scale_nan':
        xq_q = ([float('nan')], [n['zx']], 0)
    if bad == 'zp_range':
        xq_q = ([n['sx']], [200], 0)
    if bad == 'zp_count':
        xq_q = ([n['sx']], [n['zx'], 0], 0)
    if bad == 'act_per_channel':
        xq_q = ([n['sx']] * 8, [n['zx']] * 8, 1)
    xq = m.tensor('xq', [BATCH, 8], xq_type, q=xq_q)
    m.op(QUANTIZE, [x], xq)
    w1z = [0] * 6
    if bad == 'asym_weights':
        w1z[2] = 3
    w1_q = (n['sw1'], w1z, 0)
    if bad == 'weights_dim1':
        w1_q = ([n['sw1'][0]] * 8, [0] * 8, 1)
    w1 = m.tensor('fc1/weights', [6, 8], INT8, n['W1'], w1_q)
    bs1 = bias_scales(n['sx'], n['sw1'])
    if bad == 'bias_scale':
        bs1 = bs1 * f32(1.01)
    b1z = [0] * 6
    if bad == 'bias_zp':
        b1z[0] = 1
    b1 = m.tensor('fc1/bias', [6], INT32, n['b1'], (bs1, b1z, 0))
    h = m.tensor('h', [BATCH, 6], INT8, q=([n['sh']], [n['zh']], 0))
    m.op(FULLY_CONNECTED, [xq, w1, b1], h, [(0, 'i8', RELU6 if bad == 'relu6' else RELU)])
    w2 = m.tensor('fc2/weights', [4, 6], INT8, n['W2'], (n['sw2'], [0], 0))
    b2 = m.tensor('fc2/bias', [4], INT32, n['b2'], (bias_scales(n['sh'], n['sw2']), [0], 0))
    lg = m.tensor('logits', [BATCH, 4], INT8, q=([n['sl']], [n['zl']], 0))
    hq = ([n['sh']], [n['zh']], 0)
    inputs = [x]
    if bad == 'sub':  # an int8 SUB with a fused TANH (not translated) before the second layer
        h2 = m.tensor('h2', [BATCH, 6], INT8, q=hq)
        m.op(SUB, [h, h], h2, [(0, 'i8', 4)])
        h = h2
    hq2 = ([n['sh'] * 2], [n['zh']], 0)  # another quantization than h's
    if bad == 'transpose_scale':  # TRANSPOSE(h, [1, 0]) into a tensor of another scale
        pm = m.tensor('perm', [2], INT32, np.array([1, 0], dtype=np.int32))
        h2 = m.tensor('h2', [6, BATCH], INT8, q=hq2)
        m.op(TRANSPOSE, [h, pm], h2)
    if bad in ('sslice_scale', 'sslice_stride0'):  # h[:, 1:5] into another scale, or with a stride of 0
        st = [1, 0] if bad == 'sslice_stride0' else [1, 1]
        ts = [m.tensor('ss/' + k, [2], INT32, np.array(v, dtype=np.int32))
              for k, v in (('begin', [0, 1]), ('end', [0, 5]), ('strides', st))]
        h2 = m.tensor('h2', [BATCH, 4], INT8, q=hq2 if bad == 'sslice_scale' else hq)
        m.op(STRIDED_SLICE, [h] + ts, h2, [(0, 'i32', 1), (1, 'i32', 1)])
    if bad == 'squeeze_dim':  # SQUEEZE of h's axis 1, of 6 values
        h2 = m.tensor('h2', [BATCH], INT8, q=hq)
        m.op(SQUEEZE, [h], h2, [(0, 'obj', Vec('i32', [1]))])
    if bad == 'max_scale':  # MAXIMUM of h and a graph input of another scale
        r1 = m.tensor('row', [1, 6], INT8, q=hq2)
        inputs.append(r1)
        h2 = m.tensor('h2', [BATCH, 6], INT8, q=hq)
        m.op(MAXIMUM, [h, r1], h2)
    if bad == 'min_consts':  # MINIMUM of two constants
        k = m.tensor('k', [6], INT8, np.arange(6, dtype=np.int8), hq)
        h2 = m.tensor('h2', [6], INT8, q=hq)
        m.op(MINIMUM, [k, k], h2)
    if bad == 'add_bcast':  # an int8 ADD of h [3, 6] and a [1, 4] row (a second graph input): no broadcast
        r1 = m.tensor('row', [1, 4], INT8, q=hq)
        inputs.append(r1)
        h2 = m.tensor('h2', [BATCH, 6], INT8, q=hq)
        m.op(ADD, [h, r1], h2, [(0, 'i8', 0)])
        h = h2
    if bad == 'mul_per_channel':  # an int8 MUL of h and a constant [6] of 6 scales
        k = m.tensor('k', [6], INT8, np.arange(6, dtype=np.int8), ([0.01] * 6, [0] * 6, 0))
        h2 = m.tensor('h2', [BATCH, 6], INT8, q=hq)
        m.op(MUL, [h, k], h2, [(0, 'i8', 0)])
        h = h2
    if bad == 'mul_consts':  # an int8 MUL of two constants
        k = m.tensor('k', [6], INT8, np.arange(6, dtype=np.int8), ([0.01], [0], 0))
        h2 = m.tensor('h2', [BATCH, 6], INT8, q=hq)
        m.op(MUL, [k, k], h2, [(0, 'i8', 0)])
    if bad in ('pad_runtime', 'pad_negative', 'pad_scale'):  # PAD [[0, 0], [1, 1]] of h, wrong one way each
        pads = np.array([[0, 0], [1, -1] if bad == 'pad_negative' else [1, 1]], dtype=np.int32)
        pp = m.tensor('pad/paddings', [2, 2], INT32, None if bad == 'pad_runtime' else pads)
        h2 = m.tensor('h2', [BATCH, 8], INT8, q=([n['sh'] * 2], [n['zh']], 0) if bad == 'pad_scale' else hq)
        m.op(PAD, [h, pp], h2)
    if bad == 'padv2_value':  # PADV2 whose constant_values is quantized otherwise than the output
        pp = m.tensor('pad/paddings', [2, 2], INT32, np.array([[0, 0], [1, 1]], dtype=np.int32))
        cv = m.tensor('pad/value', [], INT8, np.array(3, dtype=np.int8), ([n['sh'] * 2], [n['zh']], 0))
        h2 = m.tensor('h2', [BATCH, 8], INT8, q=hq)
        m.op(PADV2, [h, pp, cv], h2)
    if bad in ('mean_runtime', 'mean_axis'):  # MEAN of h over runtime axes, or over axis 2 of a rank-2 tensor
        ax = m.tensor('mean/axes', [1], INT32, None if bad == 'mean_runtime' else np.array([2], dtype=np.int32))
        h2 = m.tensor('h2', [BATCH], INT8, q=hq)
        m.op(MEAN, [h, ax], h2, [(0, 'u8', 0)])
    if bad == 'concat_relu':  # a CONCATENATION of h and h with a fused RELU
        h2 = m.tensor('h2', [BATCH, 12], INT8, q=([n['sh']], [n['zh']], 0))
        m.op(CONCATENATION, [h, h], h2, [(0, 'i32', 1), (1, 'i8', RELU)])
        h = h2
    if bad == 'concat_axis':  # a CONCATENATION of h and h along axis 2 of a rank-2 tensor
        h2 = m.tensor('h2', [BATCH, 12], INT8, q=([n['sh']], [n['zh']], 0))
        m.op(CONCATENATION, [h, h], h2, [(0, 'i32', 2), (1, 'i8', 0)])
        h = h2
    m.op(FULLY_CONNECTED, [h, w2, b2], lg, [(0, 'i8', NONE)])
    p_q = ([1.0 / 256], [-128], 0) if bad != 'softmax_scale' else ([1.0 / 128], [-128], 0)
    p = m.tensor('probs', [BATCH, 4], INT8, q=p_q)
    m.op(SOFTMAX, [lg], p, [(0, 'f32', 1.0)])
    y = m.tensor('y', [BATCH, 4], FLOAT32)
    m.op(DEQUANTIZE, [p], y)
    m.write(path, inputs, [y])
    return m


def mlp_onnx(path, n):
    o = Onnx()
    xd = o.q('x', 'xq', n['sx'], n['zx'])
    w1 = o.const_dq('fc1/weights', n['W1'], n['sw1'], np.int8)
    b1 = o.const_dq('fc1/bias', n['b1'], bias_scales(n['sx'], n['sw1']), np.int32)
    o.nodes.append(helper.make_node('Gemm', [xd, w1, b1], ['h.f'], transB=1))
    o.nodes.append(helper.make_node('Relu', ['h.f'], ['h.r']))
    hd = o.q('h.r', 'h', n['sh'], n['zh'])
    o.classifier(hd, n['W2'], n['sw2'], n['b2'], n['sh'], n['sl'], n['zl'], 'fc2')
    o.save(path, [BATCH, 8], [BATCH, 4])


# ---- cnn ----------------------------------------------------------------------------

def cnn(out):
    rng = np.random.default_rng(7)
    sx, zx = f32(0.04), 1
    F = codes8(rng, 3, 3, 3, 2)  # OHWI
    sf = (0.003 + 0.003 * rng.uniform(size=3)).astype(np.float32)
    bf = rng.integers(-400, 400, size=3).astype(np.int32)
    sc, zc = f32(0.06), -5
    W = codes8(rng, 4, 27)
    sw = (0.004 + 0.004 * rng.uniform(size=4)).astype(np.float32)
    bw = rng.integers(-300, 300, size=4).astype(np.int32)
    sl, zl = f32(0.12), -1

    m = QModel()
    x, xq = m.q_input([BATCH, 6, 6, 2], sx, zx)
    f = m.tensor('conv/filter', [3, 3, 3, 2], INT8, F, (sf, [0, 0, 0], 0))
    fb = m.tensor('conv/bias', [3], INT32, bf, (bias_scales(sx, sf), [0, 0, 0], 0))
    c = m.tensor('conv', [BATCH, 3, 3, 3], INT8, q=([sc], [zc], 0))
    # Conv2DOptions: padding SAME (0), stride_w 1, stride_h 2, fused activation 3
    m.op(CONV_2D, [xq, f, fb], c, [(0, 'i8', 0), (1, 'i32', 2), (2, 'i32', 2), (3, 'i8', RELU)])
    r = m.flat(c, 27, sc, zc)
    y = m.classifier(r, W, sw, bw, sc, sl, zl)
    m.write(out + '/cnn.tflite', [x], [y])
    save_codes(out + '/cnn_codes.bin', [W, bw])
    cnn.model = m

    o = Onnx()
    xd = o.q('x', 'xq', sx, zx)
    o.nodes.append(helper.make_node('Transpose', [xd], ['xq.nchw'], perm=[0, 3, 1, 2]))
    fd = o.const_dq('conv/filter', np.ascontiguousarray(F.transpose(0, 3, 1, 2)), sf, np.int8)
    bd = o.const_dq('conv/bias', bf, bias_scales(sx, sf), np.int32)
    # SAME on 6 with a 3x3 kernel and stride 2: 3 outputs, one pad after
    o.nodes.append(helper.make_node('Conv', ['xq.nchw', fd, bd], ['conv.nchw'], kernel_shape=[3, 3], strides=[2, 2],
                                    dilations=[1, 1], pads=[0, 0, 1, 1], group=1))
    o.nodes.append(helper.make_node('Transpose', ['conv.nchw'], ['conv.f'], perm=[0, 2, 3, 1]))
    o.nodes.append(helper.make_node('Relu', ['conv.f'], ['conv.r']))
    cd = o.q('conv.r', 'conv', sc, zc)
    rd = o.flat(cd, 27, sc, zc)
    o.classifier(rd, W, sw, bw, sc, sl, zl)
    o.save(out + '/cnn_ref.onnx', [BATCH, 6, 6, 2], [BATCH, 4])


def conv(out, bad=None):
    """bad: conv5x5 (the second CONV_2D 5x5 VALID: outside the seed's 3x3
    row), dilation2 (the second CONV_2D dilated 2: outside the kernels')"""
    rng = np.random.default_rng(31)
    sx, zx = f32(0.035), 2
    k2 = 5 if bad == 'conv5x5' else 3
    d2 = 2 if bad == 'dilation2' else 1
    F1 = codes8(rng, 3, 3, 3, 2)  # OHWI
    s1 = (0.004 + 0.004 * rng.uniform(size=3)).astype(np.float32)
    b1 = rng.integers(-400, 400, size=3).astype(np.int32)
    sc1, zc1 = f32(0.05), -6
    F2 = codes8(rng, 2, k2, k2, 3)  # OHWI
    s2 = np.array([0.005], dtype=np.float32)
    b2 = rng.integers(-300, 300, size=2).astype(np.int32)
    sc2, zc2 = f32(0.07), 4
    o2 = 6 - (k2 - 1) * d2  # VALID
    K = 2 * o2 * o2
    W = codes8(rng, 4, K)  # columns in the NHWC flattening (h, w, c)
    sw = (0.003 + 0.003 * rng.uniform(size=4)).astype(np.float32)
    bw = rng.integers(-300, 300, size=4).astype(np.int32)
    sl, zl = f32(0.1), -2

    m = QModel()
    x, xq = m.q_input([BATCH, 6, 6, 2], sx, zx)
    f1 = m.tensor('conv1/filter', [3, 3, 3, 2], INT8, F1, (s1, [0] * 3, 0))
    fb1 = m.tensor('conv1/bias', [3], INT32, b1, (bias_scales(sx, s1), [0] * 3, 0))
    c1 = m.tensor('conv1', [BATCH, 6, 6, 3], INT8, q=([sc1], [zc1], 0))
    # Conv2DOptions: padding (0 SAME, 1 VALID), stride_w, stride_h, fused activation, dilation_w, dilation_h
    m.op(CONV_2D, [xq, f1, fb1], c1, [(0, 'i8', 0), (1, 'i32', 1), (2, 'i32', 1), (3, 'i8', RELU)])
    f2 = m.tensor('conv2/filter', [2, k2, k2, 3], INT8, F2, (s2, [0], 0))
    fb2 = m.tensor('conv2/bias', [2], INT32, b2, (bias_scales(sc1, s2), [0], 0))
    c2 = m.tensor('conv2', [BATCH, o2, o2, 2], INT8, q=([sc2], [zc2], 0))
    m.op(CONV_2D, [c1, f2, fb2], c2, [(0, 'i8', 1), (1, 'i32', 1), (2, 'i32', 1), (3, 'i8', NONE), (4, 'i32', d2),
                                      (5, 'i32', d2)])
    r = m.flat(c2, K, sc2, zc2)
    y = m.classifier(r, W, sw, bw, sc2, sl, zl)
    if bad:
        m.write('%s/bad_%s.tflite' % (out, bad), [x], [y])
        return
    m.write(out + '/conv.tflite', [x], [y])
    oihw1, oihw2 = (np.ascontiguousarray(F.transpose(0, 3, 1, 2)) for F in (F1, F2))
    save_codes(out + '/conv_codes.bin', [oihw1, b1, oihw2, b2, W, bw])

    # the twin, in NCHW: the Gemm reads the NCHW flattening (c, h, w), so its
    # column (c, h, w) is the TFLite weight's column (h, w, c)
    Wc = np.ascontiguousarray(W.reshape(4, o2, o2, 2).transpose(0, 3, 1, 2).reshape(4, K))
    o = Onnx()
    xd = o.q('x', 'xq', sx, zx)
    fd1 = o.const_dq('conv1/filter', oihw1, s1, np.int8)
    bd1 = o.const_dq('conv1/bias', b1, bias_scales(sx, s1), np.int32)
    o.nodes.append(helper.make_node('Conv', [xd, fd1, bd1], ['conv1.f'], kernel_shape=[3, 3], strides=[1, 1],
                                    dilations=[1, 1], pads=[1, 1, 1, 1], group=1))
    o.nodes.append(helper.make_node('Relu', ['conv1.f'], ['conv1.r']))
    cd1 = o.q('conv1.r', 'conv1', sc1, zc1)
    fd2 = o.const_dq('conv2/filter', oihw2, s2, np.int8)
    bd2 = o.const_dq('conv2/bias', b2, bias_scales(sc1, s2), np.int32)
    o.nodes.append(helper.make_node('Conv', [cd1, fd2, bd2], ['conv2.f'], kernel_shape=[3, 3], strides=[1, 1],
                                    dilations=[1, 1], pads=[0, 0, 0, 0], group=1))
    cd2 = o.q('conv2.f', 'conv2', sc2, zc2)
    o.nodes.append(helper.make_node('Flatten', [cd2], ['flat.f'], axis=1))
    rd = o.q('flat.f', 'flat', sc2, zc2)
    o.classifier(rd, Wc, sw, bw, sc2, sl, zl)
    o.save(out + '/conv_ref.onnx', [BATCH, 2, 6, 6], [BATCH, 4])

    # the NHWC form by hand: each Conv between Transposes, conv1's Relu before the second
    o = Onnx()
    xd = o.q('x', 'xq', sx, zx)
    o.nodes.append(helper.make_node('Transpose', [xd], ['xq.t'], perm=[0, 3, 1, 2]))
    fd1 = o.const_dq('conv1/filter', oihw1, s1, np.int8)
    bd1 = o.const_dq('conv1/bias', b1, bias_scales(sx, s1), np.int32)
    o.nodes.append(helper.make_node('Conv', ['xq.t', fd1, bd1], ['conv1.f'], kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    o.nodes.append(helper.make_node('Relu', ['conv1.f'], ['conv1.r']))
    o.nodes.append(helper.make_node('Transpose', ['conv1.r'], ['conv1.t'], perm=[0, 2, 3, 1]))
    cd1 = o.q('conv1.t', 'conv1', sc1, zc1)
    o.nodes.append(helper.make_node('Transpose', [cd1], ['conv1.dq.t'], perm=[0, 3, 1, 2]))
    fd2 = o.const_dq('conv2/filter', oihw2, s2, np.int8)
    bd2 = o.const_dq('conv2/bias', b2, bias_scales(sc1, s2), np.int32)
    o.nodes.append(helper.make_node('Conv', ['conv1.dq.t', fd2, bd2], ['conv2.f'], kernel_shape=[3, 3],
                                    pads=[0, 0, 0, 0]))
    o.nodes.append(helper.make_node('Transpose', ['conv2.f'], ['conv2.t'], perm=[0, 2, 3, 1]))
    cd2 = o.q('conv2.t', 'conv2', sc2, zc2)
    rd = o.flat(cd2, K, sc2, zc2)
    o.classifier(rd, W, sw, bw, sc2, sl, zl)
    o.save(out + '/conv_nhwc.onnx', [BATCH, 6, 6, 2], [BATCH, 4])


def pool(out):
    """x [3, 6, 6, 2] -> QUANTIZE -> CONV_2D 3x3 SAME (3 channels, per-channel,
    RELU) -> MAX_POOL_2D 2x2 stride 2 VALID -> RESHAPE [3, 27] ->
    FULLY_CONNECTED 27->4 -> SOFTMAX -> DEQUANTIZE, the Conv and the FC
    trained (last:2, the gradient through the pool); pool_ref.onnx the same
    network in NCHW (input [3, 2, 6, 6], Conv -> Relu -> QDQ -> MaxPool ->
    QDQ -> Flatten, the Gemm's columns in the CHW order); pool_codes.bin the
    filter OIHW, its biases, the FC weights as the .tflite holds them"""
    rng = np.random.default_rng(47)
    sx, zx = f32(0.033), -3
    F = codes8(rng, 3, 3, 3, 2)  # OHWI
    sf = (0.004 + 0.004 * rng.uniform(size=3)).astype(np.float32)
    bf = rng.integers(-400, 400, size=3).astype(np.int32)
    sc, zc = f32(0.045), -9
    K = 3 * 3 * 3
    W = codes8(rng, 4, K)  # columns in the NHWC flattening (h, w, c)
    sw = (0.003 + 0.003 * rng.uniform(size=4)).astype(np.float32)
    bw = rng.integers(-300, 300, size=4).astype(np.int32)
    sl, zl = f32(0.09), 1

    m = QModel()
    x, xq = m.q_input([BATCH, 6, 6, 2], sx, zx)
    f = m.tensor('conv/filter', [3, 3, 3, 2], INT8, F, (sf, [0] * 3, 0))
    fb = m.tensor('conv/bias', [3], INT32, bf, (bias_scales(sx, sf), [0] * 3, 0))
    c = m.tensor('conv', [BATCH, 6, 6, 3], INT8, q=([sc], [zc], 0))
    m.op(CONV_2D, [xq, f, fb], c, [(0, 'i8', 0), (1, 'i32', 1), (2, 'i32', 1), (3, 'i8', RELU)])
    mp = m.tensor('pool', [BATCH, 3, 3, 3], INT8, q=([sc], [zc], 0))
    # Pool2DOptions: padding VALID, stride_w, stride_h, filter_width, filter_height
    m.op(MAX_POOL_2D, [c], mp, [(0, 'i8', 1), (1, 'i32', 2), (2, 'i32', 2), (3, 'i32', 2), (4, 'i32', 2)])
    r = m.flat(mp, K, sc, zc)
    y = m.classifier(r, W, sw, bw, sc, sl, zl)
    m.write(out + '/pool.tflite', [x], [y])
    oihw = np.ascontiguousarray(F.transpose(0, 3, 1, 2))
    save_codes(out + '/pool_codes.bin', [oihw, bf, W, bw])

    Wc = np.ascontiguousarray(W.reshape(4, 3, 3, 3).transpose(0, 3, 1, 2).reshape(4, K))
    o = Onnx()
    xd = o.q('x', 'xq', sx, zx)
    fd = o.const_dq('conv/filter', oihw, sf, np.int8)
    bd = o.const_dq('conv/bias', bf, bias_scales(sx, sf), np.int32)
    o.nodes.append(helper.make_node('Conv', [xd, fd, bd], ['conv.f'], kernel_shape=[3, 3], strides=[1, 1],
                                    dilations=[1, 1], pads=[1, 1, 1, 1], group=1))
    o.nodes.append(helper.make_node('Relu', ['conv.f'], ['conv.r']))
    cd = o.q('conv.r', 'conv', sc, zc)
    o.nodes.append(helper.make_node('MaxPool', [cd], ['pool.f'], kernel_shape=[2, 2], strides=[2, 2],
                                    pads=[0, 0, 0, 0]))
    pd = o.q('pool.f', 'pool', sc, zc)
    o.nodes.append(helper.make_node('Flatten', [pd], ['flat.f'], axis=1))
    rd = o.q('flat.f', 'flat', sc, zc)
    o.classifier(rd, Wc, sw, bw, sc, sl, zl)
    o.save(out + '/pool_ref.onnx', [BATCH, 2, 6, 6], [BATCH, 4])

    # bad_pool_u8.onnx: the translation's NHWC form by hand, the Conv's codes (the pool's input) uint8
    o = Onnx()
    xd = o.q('x', 'xq', sx, zx)
    o.nodes.append(helper.make_node('Transpose', [xd], ['xq.t'], perm=[0, 3, 1, 2]))
    fd = o.const_dq('conv/filter', oihw, sf, np.int8)
    bd = o.const_dq('conv/bias', bf, bias_scales(sx, sf), np.int32)
    o.nodes.append(helper.make_node('Conv', ['xq.t', fd, bd], ['conv.f'], kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    o.nodes.append(helper.make_node('Transpose', ['conv.f'], ['conv.t'], perm=[0, 2, 3, 1]))
    o.nodes.append(helper.make_node('Relu', ['conv.t'], ['conv.r']))
    s8 = o.init('conv.s', np.array(sc, dtype=np.float32))
    z8 = o.init('conv.z', np.array(128 + zc, dtype=np.uint8))
    o.nodes.append(helper.make_node('QuantizeLinear', ['conv.r', s8, z8], ['conv.q']))
    o.nodes.append(helper.make_node('DequantizeLinear', ['conv.q', s8, z8], ['conv.dq']))
    o.nodes.append(helper.make_node('Transpose', ['conv.dq'], ['conv.dq.t'], perm=[0, 3, 1, 2]))
    o.nodes.append(helper.make_node('MaxPool', ['conv.dq.t'], ['pool.nchw'], kernel_shape=[2, 2], strides=[2, 2],
                                    pads=[0, 0, 0, 0], name='pool'))
    o.nodes.append(helper.make_node('Transpose', ['pool.nchw'], ['pool.f'], perm=[0, 2, 3, 1]))
    pd = o.q('pool.f', 'pool', sc, zc)
    rd = o.flat(pd, K, sc, zc)
    o.classifier(rd, W, sw, bw, sc, sl, zl)
    o.save(out + '/bad_pool_u8.onnx', [BATCH, 6, 6, 2], [BATCH, 4])


def dw(out, bad=None):
    """x [3, 8, 8, 2] -> QUANTIZE -> DEPTHWISE_CONV_2D 3x3, multiplier 2 (4
    channels, per-channel along dimension 3), SAME, RELU -> MAX_POOL_2D 2x2
    stride 2 -> RESHAPE [3, 64] -> FULLY_CONNECTED 64->4 -> SOFTMAX ->
    DEQUANTIZE"""
    rng = np.random.default_rng(11)
    sx, zx = f32(0.03), -2
    F = codes8(rng, 1, 3, 3, 4)  # [1, H, W, C*m]
    sf = (0.004 + 0.004 * rng.uniform(size=4)).astype(np.float32)
    bf = rng.integers(-400, 400, size=4).astype(np.int32)
    sc, zc = f32(0.05), -7
    W = codes8(rng, 4, 64)
    sw = (0.003 + 0.003 * rng.uniform(size=4)).astype(np.float32)
    bw = rng.integers(-300, 300, size=4).astype(np.int32)
    sl, zl = f32(0.11), 3

    m = QModel()
    x, xq = m.q_input([BATCH, 8, 8, 2], sx, zx)
    # dw_qdim0: the 4 scales along dimension 0 (of 1), CONV_2D's per-channel dimension, not the depthwise one
    f = m.tensor('dw/filter', [1, 3, 3, 4], INT8, F, (sf, [0] * 4, 0 if bad == 'dw_qdim0' else 3))
    fb = m.tensor('dw/bias', [4], INT32, bf, (bias_scales(sx, sf), [0] * 4, 0))
    c = m.tensor('dw', [BATCH, 8, 8, 4], INT8, q=([sc], [zc], 0))
    # DepthwiseConv2DOptions: padding SAME, stride_w, stride_h, depth_multiplier, fused activation
    m.op(DEPTHWISE_CONV_2D, [xq, f, fb], c, [(0, 'i8', 0), (1, 'i32', 1), (2, 'i32', 1), (3, 'i32', 2),
                                             (4, 'i8', RELU)])
    mp = m.tensor('pool', [BATCH, 4, 4, 4], INT8, q=([sc * (2 if bad in ('pool_scale', 'avgpool_scale') else 1)],
                                                     [zc], 0))
    # Pool2DOptions: padding VALID, stride_w, stride_h, filter_width, filter_height
    m.op(AVERAGE_POOL_2D if bad == 'avgpool_scale' else MAX_POOL_2D, [c], mp, [(0, 'i8', 1), (1, 'i32', 2), (2, 'i32', 2), (3, 'i32', 2), (4, 'i32', 2)])
    # fc_rank4: the FULLY_CONNECTED reads the pool's [3, 4, 4, 4] itself
    r = m.flat(mp, 64, sc, zc, reshape=bad != 'fc_rank4')
    y = m.classifier(r, W, sw, bw, sc, sl, zl)
    if bad:
        m.write('%s/bad_%s.tflite' % (out, bad), [x], [y])
        return
    m.write(out + '/dw.tflite', [x], [y])
    save_codes(out + '/dw_codes.bin', [W, bw])

    o = Onnx()
    xd = o.q('x', 'xq', sx, zx)
    o.nodes.append(helper.make_node('Transpose', [xd], ['xq.nchw'], perm=[0, 3, 1, 2]))
    # [1, H, W, C*m] -> [C*m, 1, H, W]
    fd = o.const_dq('dw/filter', np.ascontiguousarray(F.transpose(3, 0, 1, 2)), sf, np.int8)
    bd = o.const_dq('dw/bias', bf, bias_scales(sx, sf), np.int32)
    # SAME on 8 with 3x3 and stride 1: one pad on each side
    o.nodes.append(helper.make_node('Conv', ['xq.nchw', fd, bd], ['dw.nchw'], kernel_shape=[3, 3], strides=[1, 1],
                                    dilations=[1, 1], pads=[1, 1, 1, 1], group=2))
    o.nodes.append(helper.make_node('Transpose', ['dw.nchw'], ['dw.f'], perm=[0, 2, 3, 1]))
    o.nodes.append(helper.make_node('Relu', ['dw.f'], ['dw.r']))
    cd = o.q('dw.r', 'dw', sc, zc)
    o.nodes.append(helper.make_node('Transpose', [cd], ['dw.dq.nchw'], perm=[0, 3, 1, 2]))
    o.nodes.append(helper.make_node('MaxPool', ['dw.dq.nchw'], ['pool.nchw'], kernel_shape=[2, 2], strides=[2, 2],
                                    pads=[0, 0, 0, 0]))
    o.nodes.append(helper.make_node('Transpose', ['pool.nchw'], ['pool.f'], perm=[0, 2, 3, 1]))
    pd = o.q('pool.f', 'pool', sc, zc)
    rd = o.flat(pd, 64, sc, zc)
    o.classifier(rd, W, sw, bw, sc, sl, zl)
    o.save(out + '/dw_ref.onnx', [BATCH, 8, 8, 2], [BATCH, 4])


def ops(out, rq=False, front=False):
    """AVERAGE_POOL_2D, ADD and CONCATENATION in the frozen front (the module's docstring); front: the front
    alone, its output the CONCATENATION's codes dequantized (NAME_front.tflite, NAME_front_ref.onnx)"""
    name = 'ops' + ('_front' if front else '')
    rng = np.random.default_rng(13 + rq)
    sx, zx = f32(0.03), -2
    s2, z2 = f32(0.05), 4
    s3, z3 = f32(0.04), -6
    s4, z4 = (f32(0.07), 9) if rq else (s3, z3)  # sm2
    s5, z5 = (f32(0.045), -3) if rq else (s3, z3)  # the concatenation
    W = codes8(rng, 4, 36)
    sw = (0.003 + 0.003 * rng.uniform(size=4)).astype(np.float32)
    bw = rng.integers(-300, 300, size=4).astype(np.int32)
    sl, zl = f32(0.11), 3
    pool = [(0, 'i8', 1), (1, 'i32', 2), (2, 'i32', 2), (3, 'i32', 2), (4, 'i32', 2)]  # VALID, 2x2, stride 2

    m = QModel()
    x, xq = m.q_input([BATCH, 6, 6, 2], sx, zx)
    ap = m.tensor('ap', [BATCH, 3, 3, 2], INT8, q=([sx], [zx], 0))
    m.op(AVERAGE_POOL_2D, [xq], ap, pool)
    xr = m.tensor('xr', [BATCH, 6, 6, 2], INT8, q=([s2], [z2], 0))
    m.op(QUANTIZE, [xq], xr)
    mp = m.tensor('mp', [BATCH, 3, 3, 2], INT8, q=([s2], [z2], 0))
    m.op(MAX_POOL_2D, [xr], mp, pool)
    sm = m.tensor('sm', [BATCH, 3, 3, 2], INT8, q=([s3], [z3], 0))
    m.op(ADD, [ap, mp], sm, [(0, 'i8', RELU)])
    sm2 = m.tensor('sm2', [BATCH, 3, 3, 2], INT8, q=([s4], [z4], 0))
    m.op(ADD, [mp, mp], sm2, [(0, 'i8', NONE)])
    cat = m.tensor('cat', [BATCH, 3, 3, 4], INT8, q=([s5], [z5], 0))
    m.op(CONCATENATION, [sm, sm2], cat, [(0, 'i32', -1 if rq else 3), (1, 'i8', NONE)])
    if rq:  # refused: TFLite's int8 CONCATENATION takes inputs of its output's quantization only
        m.write('%s/bad_concat_scale.tflite' % out, [x], [m.tensor('y', [BATCH, 3, 3, 4], FLOAT32)])
        return
    if front:
        y = m.tensor('y', [BATCH, 3, 3, 4], FLOAT32)
        m.op(DEQUANTIZE, [cat], y)
        m.write('%s/%s.tflite' % (out, name), [x], [y])
    r = m.flat(cat, 36, s5, z5)
    y = m.classifier(r, W, sw, bw, s5, sl, zl)
    if not front:
        m.write('%s/%s.tflite' % (out, name), [x], [y])
        save_codes('%s/%s_codes.bin' % (out, name), [W, bw])

    o = Onnx()
    xd = o.q('x', 'xq', sx, zx)
    o.nodes.append(helper.make_node('Transpose', [xd], ['xq.nchw'], perm=[0, 3, 1, 2]))
    o.nodes.append(helper.make_node('AveragePool', ['xq.nchw'], ['ap.nchw'], kernel_shape=[2, 2], strides=[2, 2],
                                    pads=[0, 0, 0, 0]))
    o.nodes.append(helper.make_node('Transpose', ['ap.nchw'], ['ap.f'], perm=[0, 2, 3, 1]))
    apd = o.q('ap.f', 'ap', sx, zx)
    xrd = o.q(xd, 'xr', s2, z2)  # QUANTIZE int8 -> int8: the codes of xq requantized
    o.nodes.append(helper.make_node('Transpose', [xrd], ['xr.nchw'], perm=[0, 3, 1, 2]))
    o.nodes.append(helper.make_node('MaxPool', ['xr.nchw'], ['mp.nchw'], kernel_shape=[2, 2], strides=[2, 2],
                                    pads=[0, 0, 0, 0]))
    o.nodes.append(helper.make_node('Transpose', ['mp.nchw'], ['mp.f'], perm=[0, 2, 3, 1]))
    mpd = o.q('mp.f', 'mp', s2, z2)
    o.nodes.append(helper.make_node('Add', [apd, mpd], ['sm.f']))
    o.nodes.append(helper.make_node('Relu', ['sm.f'], ['sm.r']))
    smd = o.q('sm.r', 'sm', s3, z3)
    o.nodes.append(helper.make_node('Add', [mpd, mpd], ['sm2.f']))
    sm2d = o.q('sm2.f', 'sm2', s4, z4)
    o.nodes.append(helper.make_node('Concat', [smd, sm2d], ['cat.f'], axis=3))
    catd = o.q('cat.f', 'cat', s5, z5)
    if front:
        o.nodes.append(helper.make_node('DequantizeLinear', ['cat.q', 'cat.s', 'cat.z'], ['y']))
        o.save('%s/%s_ref.onnx' % (out, name), [BATCH, 6, 6, 2], [BATCH, 3, 3, 4])
        return
    rd = o.flat(catd, 36, s5, z5)
    o.classifier(rd, W, sw, bw, s5, sl, zl)
    o.save('%s/%s_ref.onnx' % (out, name), [BATCH, 6, 6, 2], [BATCH, 4])


# ---- elem and padmean: ADD, SUB, MUL, PAD, PADV2 and MEAN in the frozen front ---------------

MUL, PAD, PADV2, MEAN = 18, 34, 60, 40
OPTIONS.update({SUB: 28, MUL: 21, PAD: 22, PADV2: 43, MEAN: 27})  # SubOptions, MulOptions, PadOptions, ...
TRANSPOSE, SQUEEZE, STRIDED_SLICE, MAXIMUM, MINIMUM, RELU_N1_TO_1 = 39, 43, 45, 55, 57, 2
OPTIONS.update({SQUEEZE: 30, STRIDED_SLICE: 32})  # SqueezeOptions, StridedSliceOptions (TRANSPOSE, MAXIMUM: none)


def const_q(o, name, codes, scale, zp):
    """an int8 constant of one scale and zero point read through DequantizeLinear (an activation's form)"""
    o.init(name, codes)
    s, z = o.qparams(name, scale, zp)
    o.nodes.append(helper.make_node('DequantizeLinear', [name, s, z], [name + '.dq']))
    return name + '.dq'


def trained_tail(m, o, cat, catd, shape, sq, zq, rng, out, name, front):
    """cat (ONNX: catd, its dequantized codes) of `shape` quantized (sq, zq) -> RESHAPE [3, K] ->
    FULLY_CONNECTED K->4 (trained) -> SOFTMAX -> DEQUANTIZE; front: the front alone, its output cat's
    codes dequantized (NAME_front.tflite, NAME_front_ref.onnx)"""
    K = int(np.prod(shape[1:]))
    x = 0  # the graph input, tensor 0
    if front:
        y = m.tensor('y', shape, FLOAT32)
        m.op(DEQUANTIZE, [cat], y)
        m.write('%s/%s_front.tflite' % (out, name), [x], [y])
        o.nodes.append(helper.make_node('DequantizeLinear', [catd.replace('.dq', '.q'), catd.replace('.dq', '.s'),
                                                             catd.replace('.dq', '.z')], ['y']))
        o.save('%s/%s_front_ref.onnx' % (out, name), [BATCH, 6, 6, 2], shape)
        return
    W = codes8(rng, 4, K)
    sw = (0.0005 + 0.0005 * rng.uniform(size=4)).astype(np.float32)  # small: K is some hundred inputs
    bw = rng.integers(-300, 300, size=4).astype(np.int32)
    sl, zl = f32(0.25), 3  # room for the logits of some hundred inputs
    shp = m.tensor('flat/shape', [2], INT32, np.array([BATCH, K], dtype=np.int32))
    r = m.tensor('flat', [BATCH, K], INT8, q=([sq], [zq], 0))
    m.op(RESHAPE, [cat, shp], r, [(0, 'obj', Vec('i32', [BATCH, K]))])
    w = m.tensor('fc/weights', [4, K], INT8, W, (sw, [0] * 4, 0))
    b = m.tensor('fc/bias', [4], INT32, bw, (bias_scales(sq, sw), [0] * 4, 0))
    lg = m.tensor('logits', [BATCH, 4], INT8, q=([sl], [zl], 0))
    m.op(FULLY_CONNECTED, [r, w, b], lg, [(0, 'i8', NONE)])
    p = m.tensor('probs', [BATCH, 4], INT8, q=([1.0 / 256], [-128], 0))
    m.op(SOFTMAX, [lg], p, [(0, 'f32', 1.0)])
    y = m.tensor('y', [BATCH, 4], FLOAT32)
    m.op(DEQUANTIZE, [p], y)
    m.write('%s/%s.tflite' % (out, name), [x], [y])
    save_codes('%s/%s_codes.bin' % (out, name), [W, bw])
    o.init('flat.shape', np.array([0, K], dtype=np.int64))
    o.nodes.append(helper.make_node('Reshape', [catd, 'flat.shape'], ['flat.f']))
    rd = o.q('flat.f', 'flat', sq, zq)
    wd = o.const_dq('fc/weights', W, sw, np.int8)
    bwd = o.const_dq('fc/bias', bw, bias_scales(sq, sw), np.int32)
    o.nodes.append(helper.make_node('Gemm', [rd, wd, bwd], ['logits.f'], transB=1))
    ld = o.q('logits.f', 'logits', sl, zl)
    o.nodes.append(helper.make_node('Softmax', [ld], ['probs.f'], axis=-1))
    s, z = o.qparams('probs', 1.0 / 256, -128)
    o.nodes.append(helper.make_node('QuantizeLinear', ['probs.f', s, z], ['probs.q']))
    o.nodes.append(helper.make_node('DequantizeLinear', ['probs.q', s, z], ['y']))
    o.save('%s/%s_ref.onnx' % (out, name), [BATCH, 6, 6, 2], [BATCH, 4])


def binary_cat(m, cases, hw, sq, zq):
    """b1..bn = the binary ops of cases (code, a, b, fused activation), each [BATCH, hw, hw, 2] of (sq, zq),
    then cat = their CONCATENATION on axis 3, of the same quantization: elem's and padmean's fronts"""
    bs = []
    for i, (code, a, b, act) in enumerate(cases):
        t = m.tensor('b%d' % (i + 1), [BATCH, hw, hw, 2], INT8, q=([sq], [zq], 0))
        m.op(code, [a, b], t, [(0, 'i8', act)])
        bs.append(t)
    cat = m.tensor('cat', [BATCH, hw, hw, 2 * len(cases)], INT8, q=([sq], [zq], 0))
    m.op(CONCATENATION, bs, cat, [(0, 'i32', 3), (1, 'i8', NONE)])
    return cat


def elem(out, front=False):
    """x [3, 6, 6, 2] -> QUANTIZE xq (0.03, -2); gp = AVERAGE_POOL_2D 6x6 (xq) [3, 1, 1, 2];
    b1 = ADD(xq, gp) RELU6 (two activations broadcast); b2 = SUB(xq, k1) (k1 an int8 constant [2]);
    b3 = MUL(xq, gp) RELU (broadcast); b4 = MUL(xq, k2) (k2 an int8 constant [1, 1, 1, 2]);
    b5 = ADD(k1, xq) (the constant first); every b of the CONCATENATION's quantization (0.1, 0);
    cat = CONCATENATION(b1..b5, axis 3) [3, 6, 6, 10] -> the trained tail (trained_tail)"""
    rng = np.random.default_rng(17)
    sx, zx = f32(0.03), -2
    sk1, zk1, sk2, zk2 = f32(0.02), 3, f32(0.005), -1
    K1 = np.array([70, -90], dtype=np.int8)
    K2 = np.array([100, -60], dtype=np.int8).reshape(1, 1, 1, 2)
    sq, zq = f32(0.1), 0
    m = QModel()
    x = m.tensor('x', [BATCH, 6, 6, 2], FLOAT32)
    xq = m.tensor('xq', [BATCH, 6, 6, 2], INT8, q=([sx], [zx], 0))
    m.op(QUANTIZE, [x], xq)
    gp = m.tensor('gp', [BATCH, 1, 1, 2], INT8, q=([sx], [zx], 0))
    m.op(AVERAGE_POOL_2D, [xq], gp, [(0, 'i8', 1), (1, 'i32', 6), (2, 'i32', 6), (3, 'i32', 6), (4, 'i32', 6)])
    k1 = m.tensor('k1', [2], INT8, K1, ([sk1], [zk1], 0))
    k2 = m.tensor('k2', [1, 1, 1, 2], INT8, K2, ([sk2], [zk2], 0))
    cat = binary_cat(m, [(ADD, xq, gp, RELU6), (SUB, xq, k1, NONE), (MUL, xq, gp, RELU), (MUL, xq, k2, NONE),
                         (ADD, k1, xq, NONE)], 6, sq, zq)

    o = Onnx()
    xd = o.q('x', 'xq', sx, zx)
    o.nodes.append(helper.make_node('Transpose', [xd], ['xq.nchw'], perm=[0, 3, 1, 2]))
    o.nodes.append(helper.make_node('AveragePool', ['xq.nchw'], ['gp.nchw'], kernel_shape=[6, 6], strides=[6, 6],
                                    pads=[0, 0, 0, 0]))
    o.nodes.append(helper.make_node('Transpose', ['gp.nchw'], ['gp.f'], perm=[0, 2, 3, 1]))
    gpd = o.q('gp.f', 'gp', sx, zx)
    k1d = const_q(o, 'k1', K1, sk1, zk1)
    k2d = const_q(o, 'k2', K2, sk2, zk2)
    o.init('act.min', np.array(0.0, dtype=np.float32))
    o.init('act.max', np.array(6.0, dtype=np.float32))
    outs = []
    for i, (op, a, b, act) in enumerate([('Add', xd, gpd, 'relu6'), ('Sub', xd, k1d, None), ('Mul', xd, gpd, 'relu'),
                                         ('Mul', xd, k2d, None), ('Add', k1d, xd, None)]):
        n = 'b%d' % (i + 1)
        o.nodes.append(helper.make_node(op, [a, b], [n + '.f']))
        f = n + '.f'
        if act == 'relu6':
            o.nodes.append(helper.make_node('Clip', [f, 'act.min', 'act.max'], [n + '.r']))
            f = n + '.r'
        elif act == 'relu':
            o.nodes.append(helper.make_node('Relu', [f], [n + '.r']))
            f = n + '.r'
        outs.append(o.q(f, n, sq, zq))
    o.nodes.append(helper.make_node('Concat', outs, ['cat.f'], axis=3))
    catd = o.q('cat.f', 'cat', sq, zq)
    trained_tail(m, o, cat, catd, [BATCH, 6, 6, 10], sq, zq, rng, out, 'elem', front)


def padmean(out, front=False):
    """x [3, 6, 6, 2] -> QUANTIZE xq (0.03, -2); pd = PAD(xq, [[0, 0], [1, 1], [2, 0], [0, 0]]) and pv =
    PADV2(xq, the same, constant code 5) [3, 8, 8, 2] of xq's quantization; mk = MEAN(pd, [1, 2], keep_dims)
    [3, 1, 1, 2] (0.02, 1); mk2 = MEAN(pd, [2, -3], keep_dims) (0.025, -1); m0 = MEAN(pv, [1, 2]) [3, 2]
    (0.02, 1) -> RESHAPE [3, 1, 1, 2]; b1 = ADD(pv, mk), b2 = SUB(pd, mk2), b3 = ADD(pd, m0r), each (0.05, 0);
    cat = CONCATENATION(b1, b2, b3, axis 3) [3, 8, 8, 6] -> the trained tail (trained_tail)"""
    rng = np.random.default_rng(19)
    sx, zx = f32(0.03), -2
    sm, zm, sm2, zm2 = f32(0.02), 1, f32(0.025), -1
    sq, zq = f32(0.05), 0
    pads = [[0, 0], [1, 1], [2, 0], [0, 0]]
    m = QModel()
    x = m.tensor('x', [BATCH, 6, 6, 2], FLOAT32)
    xq = m.tensor('xq', [BATCH, 6, 6, 2], INT8, q=([sx], [zx], 0))
    m.op(QUANTIZE, [x], xq)
    pp = m.tensor('pad/paddings', [4, 2], INT32, np.array(pads, dtype=np.int32))
    pd = m.tensor('pd', [BATCH, 8, 8, 2], INT8, q=([sx], [zx], 0))
    m.op(PAD, [xq, pp], pd)
    cv = m.tensor('pad/value', [], INT8, np.array(5, dtype=np.int8), ([sx], [zx], 0))
    pv = m.tensor('pv', [BATCH, 8, 8, 2], INT8, q=([sx], [zx], 0))
    m.op(PADV2, [xq, pp, cv], pv)
    a12 = m.tensor('mean/axes', [2], INT32, np.array([1, 2], dtype=np.int32))
    a2m3 = m.tensor('mean/axes2', [2], INT32, np.array([2, -3], dtype=np.int32))
    mk = m.tensor('mk', [BATCH, 1, 1, 2], INT8, q=([sm], [zm], 0))
    m.op(MEAN, [pd, a12], mk, [(0, 'u8', 1)])
    mk2 = m.tensor('mk2', [BATCH, 1, 1, 2], INT8, q=([sm2], [zm2], 0))
    m.op(MEAN, [pd, a2m3], mk2, [(0, 'u8', 1)])
    m0 = m.tensor('m0', [BATCH, 2], INT8, q=([sm], [zm], 0))
    m.op(MEAN, [pv, a12], m0, [(0, 'u8', 0)])
    rs = m.tensor('m0/shape', [4], INT32, np.array([BATCH, 1, 1, 2], dtype=np.int32))
    m0r = m.tensor('m0r', [BATCH, 1, 1, 2], INT8, q=([sm], [zm], 0))
    m.op(RESHAPE, [m0, rs], m0r, [(0, 'obj', Vec('i32', [BATCH, 1, 1, 2]))])
    cat = binary_cat(m, [(ADD, pv, mk, NONE), (SUB, pd, mk2, NONE), (ADD, pd, m0r, NONE)], 8, sq, zq)

    o = Onnx()
    xd = o.q('x', 'xq', sx, zx)
    o.init('pads', np.array([0, 1, 2, 0, 0, 1, 0, 0], dtype=np.int64))  # every axis's begin, then the ends
    o.init('pad.value', np.array(f32(5 - zx) * sx, dtype=np.float32))  # code 5 as its real value
    o.nodes.append(helper.make_node('Pad', [xd, 'pads'], ['pd.f']))
    pdd = o.q('pd.f', 'pd', sx, zx)
    o.nodes.append(helper.make_node('Pad', [xd, 'pads', 'pad.value'], ['pv.f']))
    pvd = o.q('pv.f', 'pv', sx, zx)
    o.nodes.append(helper.make_node('ReduceMean', [pdd], ['mk.f'], axes=[1, 2], keepdims=1))
    mkd = o.q('mk.f', 'mk', sm, zm)
    o.nodes.append(helper.make_node('ReduceMean', [pdd], ['mk2.f'], axes=[1, 2], keepdims=1))
    mk2d = o.q('mk2.f', 'mk2', sm2, zm2)
    o.nodes.append(helper.make_node('ReduceMean', [pvd], ['m0.f'], axes=[1, 2], keepdims=0))
    m0d = o.q('m0.f', 'm0', sm, zm)
    o.init('m0.shape', np.array([0, 1, 1, 2], dtype=np.int64))
    o.nodes.append(helper.make_node('Reshape', [m0d, 'm0.shape'], ['m0r.f']))
    m0rd = o.q('m0r.f', 'm0r', sm, zm)
    outs = []
    for i, (op, a, b) in enumerate([('Add', pvd, mkd), ('Sub', pdd, mk2d), ('Add', pdd, m0rd)]):
        n = 'b%d' % (i + 1)
        o.nodes.append(helper.make_node(op, [a, b], [n + '.f']))
        outs.append(o.q(n + '.f', n, sq, zq))
    o.nodes.append(helper.make_node('Concat', outs, ['cat.f'], axis=3))
    catd = o.q('cat.f', 'cat', sq, zq)
    trained_tail(m, o, cat, catd, [BATCH, 8, 8, 6], sq, zq, rng, out, 'padmean', front)



# ---- shape: TRANSPOSE, STRIDED_SLICE, SQUEEZE, MAXIMUM, MINIMUM and fused RELU_N1_TO_1 in the front ----



def ss_opts(begin=0, end=0, ellipsis=0, new=0, shrink=0):
    return [(0, 'i32', begin), (1, 'i32', end), (2, 'i32', ellipsis), (3, 'i32', new), (4, 'i32', shrink)]


def shape(out, front=False):
    """x [3, 6, 6, 2] -> QUANTIZE xq (0.03, -2); every tensor below of xq's quantization:
    t1 = TRANSPOSE(xq, [0, 2, 1, 3]); s1 = STRIDED_SLICE(t1, [:, 5:1:-1, 0:6:2, :]) [3, 4, 3, 2] (begin and
    end masks on axes 0 and 3, a negative stride);
    gp = AVERAGE_POOL_2D 6x6 (xq) [3, 1, 1, 2]; sq = SQUEEZE(gp, [1, 2]) [3, 2];
    nx = STRIDED_SLICE(sq, [:, None, None, :]) [3, 1, 1, 2] (new axes);
    b1 = MAXIMUM(s1, nx) (broadcast); b2 = MINIMUM(s1, k) (k an int8 constant [2]);
    sh = STRIDED_SLICE(xq, [:, 1:5, 0:5:2, 1]) [3, 4, 3] (shrink) -> RESHAPE [3, 4, 3, 1];
    b3 = MINIMUM(shr, s1) (broadcast, the activation first);
    s2 = STRIDED_SLICE(xq, [:, 0:3, 1:5, :]) [3, 3, 4, 2] -> b4 = TRANSPOSE(s2, [0, 2, 1, 3]) [3, 4, 3, 2];
    b5 = ADD(s1, nx) RELU_N1_TO_1 (codes clamped to those of -1 and 1: -35 and 31);
    cat = CONCATENATION(b1..b5, axis 3) [3, 4, 3, 10] -> the trained tail (trained_tail)"""
    rng = np.random.default_rng(23)
    sx, zx = f32(0.03), -2
    K = np.array([40, -20], dtype=np.int8)
    m = QModel()
    q = ([sx], [zx], 0)

    def t(name, shp):
        return m.tensor(name, shp, INT8, q=q)

    def i32(name, v):
        return m.tensor(name, [len(v)], INT32, np.array(v, dtype=np.int32))

    x = m.tensor('x', [BATCH, 6, 6, 2], FLOAT32)
    xq = t('xq', [BATCH, 6, 6, 2])
    m.op(QUANTIZE, [x], xq)
    perm = i32('perm', [0, 2, 1, 3])
    t1 = t('t1', [BATCH, 6, 6, 2])
    m.op(TRANSPOSE, [xq, perm], t1)
    s1 = t('s1', [BATCH, 4, 3, 2])
    m.op(STRIDED_SLICE, [t1, i32('s1/begin', [0, 5, 0, 0]), i32('s1/end', [0, 1, 6, 0]),
                         i32('s1/strides', [1, -1, 2, 1])], s1, ss_opts(begin=9, end=9))
    gp = t('gp', [BATCH, 1, 1, 2])
    m.op(AVERAGE_POOL_2D, [xq], gp, [(0, 'i8', 1), (1, 'i32', 6), (2, 'i32', 6), (3, 'i32', 6), (4, 'i32', 6)])
    sq = t('sq', [BATCH, 2])
    m.op(SQUEEZE, [gp], sq, [(0, 'obj', Vec('i32', [1, 2]))])
    nx = t('nx', [BATCH, 1, 1, 2])
    m.op(STRIDED_SLICE, [sq, i32('nx/begin', [0, 0, 0, 0]), i32('nx/end', [0, 0, 0, 0]),
                         i32('nx/strides', [1, 1, 1, 1])], nx, ss_opts(begin=9, end=9, new=6))
    k = m.tensor('k', [2], INT8, K, q)
    bs = [t('b%d' % i, [BATCH, 4, 3, 2]) for i in range(1, 6)]
    m.op(MAXIMUM, [s1, nx], bs[0])
    m.op(MINIMUM, [s1, k], bs[1])
    sh = t('sh', [BATCH, 4, 3])
    m.op(STRIDED_SLICE, [xq, i32('sh/begin', [0, 1, 0, 1]), i32('sh/end', [0, 5, 5, 2]),
                         i32('sh/strides', [1, 1, 2, 1])], sh, ss_opts(begin=1, end=1, shrink=8))
    shr = t('shr', [BATCH, 4, 3, 1])
    m.op(RESHAPE, [sh, i32('shr/shape', [BATCH, 4, 3, 1])], shr, [(0, 'obj', Vec('i32', [BATCH, 4, 3, 1]))])
    m.op(MINIMUM, [shr, s1], bs[2])
    s2 = t('s2', [BATCH, 3, 4, 2])
    m.op(STRIDED_SLICE, [xq, i32('s2/begin', [0, 0, 1, 0]), i32('s2/end', [0, 3, 5, 0]),
                         i32('s2/strides', [1, 1, 1, 1])], s2, ss_opts(begin=9, end=9))
    m.op(TRANSPOSE, [s2, perm], bs[3])
    m.op(ADD, [s1, nx], bs[4], [(0, 'i8', RELU_N1_TO_1)])
    cat = t('cat', [BATCH, 4, 3, 10])
    m.op(CONCATENATION, bs, cat, [(0, 'i32', 3), (1, 'i8', NONE)])

    # the twin, written with numpy-style indices turned into ONNX by hand: Transpose, Slice of explicit
    # starts / ends / steps, Squeeze, Unsqueeze, Max / Min on the dequantized values, Clip(-1, 1)
    o = Onnx()
    xd = o.q('x', 'xq', sx, zx)

    def node(op, ins, name, **kw):
        o.nodes.append(helper.make_node(op, ins, [name + '.f'], **kw))
        return o.q(name + '.f', name, sx, zx)

    def ints(name, v):
        return o.init(name, np.array(v, dtype=np.int64))

    t1d = node('Transpose', [xd], 't1', perm=[0, 2, 1, 3])
    # t1[:, 5:1:-1, 0:6:2, :] (axes 1 and 2 only)
    s1d = node('Slice', [t1d, ints('s1.st', [5, 0]), ints('s1.en', [1, 6]), ints('s1.ax', [1, 2]),
                         ints('s1.sp', [-1, 2])], 's1')
    o.nodes.append(helper.make_node('Transpose', [xd], ['xq.nchw'], perm=[0, 3, 1, 2]))
    o.nodes.append(helper.make_node('AveragePool', ['xq.nchw'], ['gp.nchw'], kernel_shape=[6, 6], strides=[6, 6]))
    o.nodes.append(helper.make_node('Transpose', ['gp.nchw'], ['gp.f'], perm=[0, 2, 3, 1]))
    gpd = o.q('gp.f', 'gp', sx, zx)
    sqd = node('Squeeze', [gpd, ints('sq.ax', [1, 2])], 'sq')
    nxd = node('Unsqueeze', [sqd, ints('nx.ax', [1, 2])], 'nx')
    kd = const_q(o, 'k', K, sx, zx)
    b1 = node('Max', [s1d, nxd], 'b1')
    b2 = node('Min', [s1d, kd], 'b2')
    # xq[:, 1:5, 0:5:2, 1]: a Gather of index 1 on axis 3 drops it
    o.init('sh.idx', np.array(1, dtype=np.int64))
    shs = node('Slice', [xd, ints('sh.st', [1, 0]), ints('sh.en', [5, 5]), ints('sh.ax', [1, 2]),
                         ints('sh.sp', [1, 2])], 'shs')
    shd = node('Gather', [shs, 'sh.idx'], 'sh', axis=3)
    shrd = node('Reshape', [shd, ints('shr.shape', [0, 4, 3, 1])], 'shr')
    b3 = node('Min', [shrd, s1d], 'b3')
    s2d = node('Slice', [xd, ints('s2.st', [0, 1]), ints('s2.en', [3, 5]), ints('s2.ax', [1, 2])], 's2')
    b4 = node('Transpose', [s2d], 'b4', perm=[0, 2, 1, 3])
    o.nodes.append(helper.make_node('Add', [s1d, nxd], ['b5.sum']))
    o.init('b5.lo', np.array(-1.0, dtype=np.float32))
    o.init('b5.hi', np.array(1.0, dtype=np.float32))
    b5 = node('Clip', ['b5.sum', 'b5.lo', 'b5.hi'], 'b5')
    o.nodes.append(helper.make_node('Concat', [b1, b2, b3, b4, b5], ['cat.f'], axis=3))
    catd = o.q('cat.f', 'cat', sx, zx)
    trained_tail(m, o, cat, catd, [BATCH, 4, 3, 10], sx, zx, rng, out, 'shape', front)



def rq_pad(out):
    """rq_pad.tflite: x [3, 6, 6, 2] -> QUANTIZE xq (0.03, -2) -> PAD [[0, 0], [1, 1], [2, 0], [0, 0]] -> pd of
    another quantization (0.06, 3) -> DEQUANTIZE: what real TFLite's int8 PAD does with such an output
    (qas_tflite_real.mjs: it copies the codes, it does not requantize; the translation refuses it)"""
    m = QModel()
    x = m.tensor('x', [BATCH, 6, 6, 2], FLOAT32)
    xq = m.tensor('xq', [BATCH, 6, 6, 2], INT8, q=([f32(0.03)], [-2], 0))
    m.op(QUANTIZE, [x], xq)
    pp = m.tensor('pad/paddings', [4, 2], INT32, np.array([[0, 0], [1, 1], [2, 0], [0, 0]], dtype=np.int32))
    pd = m.tensor('pd', [BATCH, 8, 8, 2], INT8, q=([f32(0.06)], [3], 0))
    m.op(PAD, [xq, pp], pd)
    y = m.tensor('y', [BATCH, 8, 8, 2], FLOAT32)
    m.op(DEQUANTIZE, [pd], y)
    m.write(out + '/rq_pad.tflite', [x], [y])


BAD = ['uint8', 'int16', 'no_quant', 'scale_zero', 'scale_nan', 'zp_range', 'zp_count', 'act_per_channel',
       'asym_weights', 'weights_dim1', 'bias_scale', 'bias_zp', 'relu6', 'sub', 'add_bcast',
       'concat_axis', 'concat_relu', 'softmax_scale', 'mul_per_channel', 'mul_consts', 'pad_runtime',
       'pad_negative', 'pad_scale', 'padv2_value', 'mean_runtime', 'mean_axis', 'transpose_scale', 'sslice_scale',
       'sslice_stride0', 'squeeze_dim', 'max_scale', 'min_consts']


DW_BAD = ['dw_qdim0', 'pool_scale', 'avgpool_scale', 'fc_rank4']


def two(path, cnn_m, mlp_m):
    """two.tflite: subgraph 0 the cnn (signature 'serving_cnn'), subgraph 1
    the mlp (signature 'train_mlp'), the buffers pooled"""
    (ci, co), (mi, mo) = cnn_m.io, mlp_m.io
    write_qmodels(path, [(cnn_m, ci, co, 'cnn'), (mlp_m, mi, mo, 'mlp')],
                  [('serving_cnn', 0, [('x', ci[0])], [('y', co[0])]), ('train_mlp', 1, [('x', mi[0])], [('y', mo[0])])])


CONV_BAD = ['conv5x5', 'dilation2']


def float_model(path):
    """a float FULLY_CONNECTED model (no int8 tensor)"""
    m = QModel()
    x = m.tensor('x', [1, 4], FLOAT32)
    w = m.tensor('w', [2, 4], FLOAT32, np.ones((2, 4), dtype=np.float32))
    y = m.tensor('y', [1, 2], FLOAT32)
    m.op(FULLY_CONNECTED, [x, w, -1], y, [(0, 'i8', 0)])
    m.write(path, [x], [y])


def dataset(out, name='data', sample=(8,)):
    """data/train and data/test for `switchyard train`: batches [3, 8] of the mlp's input (or of another
    sample shape) and their labels"""
    rng = np.random.default_rng(99)
    for part, count in (('train', 4), ('test', 2)):
        d = '%s/%s/%s' % (out, name, part)
        os.makedirs(d, exist_ok=True)
        for k in range(count):
            np.save('%s/input_%d.npy' % (d, k), rng.uniform(-1, 1, size=(BATCH,) + sample).astype(np.float32))
            np.save('%s/label_%d.npy' % (d, k), rng.integers(0, 4, size=BATCH).astype(np.int64))


def main(out):
    n = mlp_numbers()
    mlp_m = mlp_tflite(out + '/mlp.tflite', n)
    mlp_onnx(out + '/mlp_ref.onnx', n)
    save_codes(out + '/mlp_codes.bin', [n['W1'], n['b1'], n['W2'], n['b2']])
    cnn(out)
    conv(out)
    for b in CONV_BAD:
        conv(out, b)
    two(out + '/two.tflite', cnn.model, mlp_m)
    dw(out)
    pool(out)
    ops(out)
    ops(out, front=True)
    ops(out, rq=True)
    for front in (False, True):
        elem(out, front)
        padmean(out, front)
        shape(out, front)
    rq_pad(out)
    for b in DW_BAD:
        dw(out, b)
    for b in BAD:
        mlp_tflite('%s/bad_%s.tflite' % (out, b), n, b)
    float_model(out + '/float.tflite')
    dataset(out)
    dataset(out, 'data_conv', (6, 6, 2))


if __name__ == '__main__':
    main(sys.argv[1])
