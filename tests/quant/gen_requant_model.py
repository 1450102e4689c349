#!/usr/bin/env python3
"""Writes the models of tests/quant/data that test_requant_session.c runs
(no onnx package needed):

requant_ties.onnx       int8 x[1,9] -> DequantizeLinear(0.5) -> MatMul with the
                        DequantizeLinear(0.5) of a 9x9 int8 identity ->
                        QuantizeLinear(1.0, zero point 100) -> int8 y[1,9].
                        The QDQ pass folds it into one QMatMul with the
                        multiplier 0.5 * 0.5 / 1.0 = 0.25 (exact in float), so
                        y = sat(requant(x * 0.25) + 100): ties x.5 where the
                        two requantization forms differ.
requant_ties_attr.onnx  the same QMatMul written directly in the
                        switchyard.quant domain with the attribute
                        requant = "gemmlowp" (an explicit per-node choice)."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_bad_models import F, I8, f32, ld, model, s, tensor, value_info, vi


def node(name, op, ins, outs, attrs=(), domain=''):
    n = b''.join(s(1, i) for i in ins) + b''.join(s(2, o) for o in outs) + s(3, name) + s(4, op)
    n += b''.join(ld(5, a) for a in attrs)
    return n + (s(7, domain) if domain else b'')


N = 9
ident = bytes(1 if r == c else 0 for r in range(N) for c in range(N))
inits = [tensor('x_scale', F, [], f32(0.5)), tensor('x_zp', I8, [], b'\x00'),
         tensor('w', I8, [N, N], ident), tensor('w_scale', F, [], f32(0.5)), tensor('w_zp', I8, [], b'\x00'),
         tensor('y_scale', F, [], f32(1.0)), tensor('y_zp', I8, [], bytes([100]))]
io = ([value_info('x', I8, [1, N])], [value_info('y', I8, [1, N])])


def attr_str(name, v): return s(1, name) + vi(20, 3) + ld(4, v.encode())


def with_quant_opset(m):
    # append an opset_import for switchyard.quant version 1 (ModelProto field 8)
    return m + ld(8, s(1, 'switchyard.quant') + vi(2, 1))


qdq = model([node('dq_x', 'DequantizeLinear', ['x', 'x_scale', 'x_zp'], ['xf']),
             node('dq_w', 'DequantizeLinear', ['w', 'w_scale', 'w_zp'], ['wf']),
             node('mm', 'MatMul', ['xf', 'wf'], ['yf']),
             node('q_y', 'QuantizeLinear', ['yf', 'y_scale', 'y_zp'], ['y'])], inits, *io, 13)
qmm = node('mm', 'QMatMul', ['x', 'x_scale', 'x_zp', 'w', 'w_scale', 'w_zp', 'y_scale', 'y_zp'], ['y'],
           [attr_str('requant', 'gemmlowp')], 'switchyard.quant')
attr = with_quant_opset(model([qmm], inits, *io, 13))

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), 'data')
os.makedirs(out, exist_ok=True)
for name, m in (('requant_ties', qdq), ('requant_ties_attr', attr)):
    with open(os.path.join(out, name + '.onnx'), 'wb') as f:
        f.write(m)
