#!/usr/bin/env python3
"""Writes the DequantizeLinear-21 block-wise int4 models of tests/quant/data
that test_dq_blocked.c runs (no onnx package needed). The int4 codes are an
initializer, packed two per byte, low nibble first (ONNX's order):

dq_blocked_axis1.onnx     x [[1,-2,7],[-8,3,0]], axis 1, block_size 2, scales
                          [[0.5,2],[0.25,4]]: a last block of one element
dq_blocked_axis1_zp.onnx  the same with int4 zero points [[1,0],[0,-1]]
dq_blocked_axis0.onnx     x [[1,-2],[7,-8],[3,0]], axis 0, block_size 2,
                          scales [[0.5,2],[0.25,4]]"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_bad_models import F, f32, ld, s, tensor, value_info, vi

INT4 = 22


def pack4(vals):
    nib = [v & 15 for v in vals] + ([0] if len(vals) % 2 else [])
    return bytes(nib[i] | (nib[i + 1] << 4) for i in range(0, len(nib), 2))


def dq_model(x, xdims, scales, axis, block, zp=None):
    ins = ['x', 'x_scale'] + (['x_zp'] if zp else [])
    attrs = [s(1, 'axis') + vi(20, 2) + vi(3, axis), s(1, 'block_size') + vi(20, 2) + vi(3, block)]
    node = b''.join(s(1, i) for i in ins) + s(2, 'y') + s(3, 'dq') + s(4, 'DequantizeLinear')
    node += b''.join(ld(5, a) for a in attrs)
    sdims = list(xdims)
    sdims[axis] = (xdims[axis] + block - 1) // block
    inits = [tensor('x', INT4, xdims, pack4(x)), tensor('x_scale', F, sdims, f32(*scales))]
    if zp:
        inits.append(tensor('x_zp', INT4, sdims, pack4(zp)))
    g = ld(1, node) + s(2, 'g') + b''.join(ld(5, t) for t in inits) + ld(12, value_info('y', F, xdims))
    return vi(1, 10) + ld(7, g) + ld(8, s(1, '') + vi(2, 21))


out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), 'data')
os.makedirs(out, exist_ok=True)
models = {
    'dq_blocked_axis1': dq_model([1, -2, 7, -8, 3, 0], [2, 3], [0.5, 2, 0.25, 4], 1, 2),
    'dq_blocked_axis1_zp': dq_model([1, -2, 7, -8, 3, 0], [2, 3], [0.5, 2, 0.25, 4], 1, 2, [1, 0, 0, -1]),
    'dq_blocked_axis0': dq_model([1, -2, 7, -8, 3, 0], [3, 2], [0.5, 2, 0.25, 4], 0, 2),
}
for name, m in models.items():
    with open(os.path.join(out, name + '.onnx'), 'wb') as f:
        f.write(m)
