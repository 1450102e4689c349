#!/usr/bin/env python3
"""Writes the small ONNX models of tests/quant/data (no onnx package needed):
DequantizeLinear / QuantizeLinear nodes with invalid quantization parameters
that session creation must refuse, naming the tensor."""
import struct, sys, os

def varint(v):
    out = b''
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7f; v >>= 7
        if v: out += bytes([b | 0x80])
        else: return out + bytes([b])
def key(f, t): return varint((f << 3) | t)
def ld(f, b): return key(f, 2) + varint(len(b)) + b
def vi(f, v): return key(f, 0) + varint(v)
def s(f, x): return ld(f, x.encode())

def tensor(name, dt, dims, raw):
    return b''.join(vi(1, d) for d in dims) + vi(2, dt) + s(8, name) + ld(9, raw)
def value_info(name, dt, dims):
    shape = b''.join(ld(1, vi(1, d)) for d in dims)
    return s(1, name) + ld(2, ld(1, vi(1, dt) + ld(2, shape)))
def attr_int(name, v): return s(1, name) + vi(20, 2) + vi(3, v)
def node2(op, ins, outs, attrs=()):
    return b''.join(s(1, i) for i in ins) + b''.join(s(2, o) for o in outs) + s(3, op + '_0') + s(4, op) + b''.join(ld(5, a) for a in attrs)
def model(nodes, inits, inputs, outputs, opset):
    g = b''.join(ld(1, n) for n in nodes) + s(2, 'g') + b''.join(ld(5, t) for t in inits)
    g += b''.join(ld(11, i) for i in inputs) + b''.join(ld(12, o) for o in outputs)
    return vi(1, 7) + ld(7, g) + ld(8, s(1, '') + vi(2, opset))

F, U8, I8 = 1, 2, 3
f32 = lambda *v: struct.pack('<%df' % len(v), *v)
def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), 'data')
    os.makedirs(out, exist_ok=True)
    cases = {
        # scale 0
        'bad_scale_zero': model([node2('DequantizeLinear', ['x', 'x_scale', 'x_zp'], ['y'])],
                                [tensor('x_scale', F, [], f32(0.0)), tensor('x_zp', I8, [], b'\x00')],
                                [value_info('x', I8, [4])], [value_info('y', F, [4])], 13),
        # negative scale
        'bad_scale_negative': model([node2('QuantizeLinear', ['x', 'x_scale', 'x_zp'], ['y'])],
                                    [tensor('x_scale', F, [], f32(-0.5)), tensor('x_zp', U8, [], b'\x80')],
                                    [value_info('x', F, [4])], [value_info('y', U8, [4])], 13),
        # zero point 200 given for int8 data
        'bad_zero_point': model([node2('DequantizeLinear', ['x', 'x_scale', 'x_zp'], ['y'])],
                                [tensor('x_scale', F, [], f32(0.1)), tensor('x_zp', U8, [], b'\xc8')],
                                [value_info('x', I8, [4])], [value_info('y', F, [4])], 13),
        # per-axis: 2 scales for an axis of length 3
        'bad_axis_length': model([node2('DequantizeLinear', ['x', 'x_scale', 'x_zp'], ['y'], [attr_int('axis', 1)])],
                                 [tensor('x_scale', F, [2], f32(0.1, 0.2)), tensor('x_zp', I8, [2], b'\x00\x00')],
                                 [value_info('x', I8, [2, 3])], [value_info('y', F, [2, 3])], 13),
    }
    for name, m in cases.items():
        with open(os.path.join(out, name + '.onnx'), 'wb') as f:
            f.write(m)


if __name__ == '__main__':
    main()
