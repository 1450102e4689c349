"""A FlatBuffer writer of TFLite models (tensorflow/lite/schema/schema.fbs
field ids, no flatbuffers package), shared by tflite_ops_models.py (float
models) and qas_tflite_models.py (int8 models with QuantizationParameters).

Graph collects one subgraph's tensors and operators; write_tflite writes one
.tflite of one or more subgraphs and their SignatureDefs.
"""
import struct

import numpy as np

# ---- a FlatBuffer writer, front to back --------------------------------------
# The root offset comes first and every object is written after the one that
# refers to it, so each uoffset is positive; a table's vtable sits just
# before it (soffset = table - vtable).


class Table:
    def __init__(self, fields):
        self.fields = fields  # [(id, kind, value)], kind: u8 i8 i32 u32 f32 obj


class Vec:
    def __init__(self, kind, items):
        self.kind = kind  # i32 u8 f32 i64 obj
        self.items = items


class Str:
    def __init__(self, s):
        self.s = s.encode()


class FB:
    def __init__(self):
        self.b = bytearray()

    def align(self, n):
        while len(self.b) % n:
            self.b.append(0)

    def patch(self, at, target):
        struct.pack_into('<I', self.b, at, target - at)

    def write(self, o):
        if isinstance(o, Str):
            self.align(4)
            at = len(self.b)
            self.b += struct.pack('<I', len(o.s)) + o.s + b'\0'
            return at
        if isinstance(o, Vec):
            if o.kind == 'u8':
                self.align(16)  # float data inside stays aligned
                while (len(self.b) + 4) % 16:
                    self.b.append(0)
                at = len(self.b)
                self.b += struct.pack('<I', len(o.items)) + bytes(o.items)
                return at
            if o.kind == 'i64':
                while (len(self.b) + 4) % 8:  # the elements 8-aligned
                    self.b.append(0)
                at = len(self.b)
                self.b += struct.pack('<I%dq' % len(o.items), len(o.items), *o.items)
                return at
            self.align(4)
            at = len(self.b)
            self.b += struct.pack('<I', len(o.items))
            if o.kind in ('i32', 'f32'):
                self.b += struct.pack('<%d%s' % (len(o.items), o.kind[0]), *o.items)
                return at
            slots = []
            for _ in o.items:
                slots.append(len(self.b))
                self.b += b'\0\0\0\0'
            for s, item in zip(slots, o.items):
                self.patch(s, self.write(item))
            return at
        return self.table(o)

    def table(self, t):
        size = {'u8': 1, 'i8': 1, 'i32': 4, 'u32': 4, 'f32': 4, 'obj': 4}
        fmt = {'u8': '<B', 'i8': '<b', 'i32': '<i', 'u32': '<I', 'f32': '<f'}
        # layout of the table body: the soffset, then the fields, each aligned
        body, off, n_ids = [], 4, 0
        for fid, kind, val in sorted(t.fields, key=lambda f: -size[f[1]]):
            k = size[kind]
            off = (off + k - 1) // k * k
            body.append((fid, kind, val, off))
            off += k
            n_ids = max(n_ids, fid + 1)
        tsize = (off + 3) // 4 * 4
        vt = [0] * n_ids
        for fid, _, _, o in body:
            vt[fid] = o
        vbytes = struct.pack('<HH', 4 + 2 * n_ids, tsize) + struct.pack('<%dH' % n_ids, *vt)
        # the vtable, then the table aligned to 4 right after it
        self.align(2)
        while (len(self.b) + len(vbytes)) % 4:
            self.b.append(0)
        vat = len(self.b)
        self.b += vbytes
        at = len(self.b)
        self.b += b'\0' * tsize
        struct.pack_into('<i', self.b, at, at - vat)
        children = []
        for fid, kind, val, o in body:
            if kind == 'obj':
                children.append((at + o, val))
            else:
                struct.pack_into(fmt[kind], self.b, at + o, val)
        for slot, val in children:
            self.patch(slot, self.write(val))
        return at

    def finish(self, root):
        self.b += b'\0\0\0\0TFL3'
        self.patch(0, self.write(root))
        return bytes(self.b)


# ---- TFLite models ---------------------------------------------------------------

class Graph:
    """One subgraph: tensors (name, shape, TensorType, raw bytes of a constant
    or None, QuantizationParameters (scales, zero_points,
    quantized_dimension) or None) and operators (builtin code, inputs,
    output, options fields)."""

    def __init__(self):
        self.tensors, self.ops = [], []

    def add_tensor(self, name, shape, dtype, raw=None, q=None):
        self.tensors.append((name, list(shape), dtype, raw, q))
        return len(self.tensors) - 1

    def op(self, code, ins, out, opts=()):
        self.ops.append((code, ins, out, list(opts)))


def write_tflite(path, parts, signatures, options, producer):
    """One .tflite of several subgraphs: parts [(Graph, inputs, outputs,
    name)], one subgraph each, their operator codes and buffers pooled;
    signatures [(signature_key, subgraph_index, [(input name, tensor)],
    [(output name, tensor)])] as SignatureDefs; options {builtin code:
    BuiltinOptions type} for the operators that carry an options table;
    producer the model's description."""
    codes = sorted({o[0] for m, _, _, _ in parts for o in m.ops})
    buffers = [Table([])]
    sgs = []
    for m, inputs, outputs, sg_name in parts:
        tensors = []
        for name, shape, dtype, raw, q in m.tensors:
            f = [(0, 'obj', Vec('i32', shape)), (1, 'i8', dtype), (3, 'obj', Str(name))]
            if raw is not None:
                f.append((2, 'u32', len(buffers)))
                buffers.append(Table([(0, 'obj', Vec('u8', raw))]))
            if q is not None:
                scales, zps, qd = q
                qf = [(2, 'obj', Vec('f32', [float(s) for s in scales])), (3, 'obj', Vec('i64', [int(z) for z in zps]))]
                if qd:
                    qf.append((6, 'i32', qd))
                f.append((4, 'obj', Table(qf)))
            tensors.append(Table(f))
        ops = []
        for code, ins, out, opts in m.ops:
            f = [(0, 'u32', codes.index(code)), (1, 'obj', Vec('i32', ins)), (2, 'obj', Vec('i32', [out]))]
            if code in options:
                f += [(3, 'u8', options[code]), (4, 'obj', Table(opts))]
            ops.append(Table(f))
        sgs.append(Table([(0, 'obj', Vec('obj', tensors)), (1, 'obj', Vec('i32', inputs)),
                          (2, 'obj', Vec('i32', outputs)), (3, 'obj', Vec('obj', ops)), (4, 'obj', Str(sg_name))]))
    opcodes = Vec('obj', [Table([(0, 'i8', min(c, 127)), (2, 'i32', 1), (3, 'i32', c)]) for c in codes])
    fields = [(0, 'u32', 3), (1, 'obj', opcodes), (2, 'obj', Vec('obj', sgs)),
              (3, 'obj', Str(producer)), (4, 'obj', Vec('obj', buffers))]

    # SignatureDef: inputs (field 0) and outputs (1) as TensorMaps (name 0,
    # tensor_index 1), signature_key (2), subgraph_index (4); real TFLite
    # refuses a signature without its inputs and outputs
    def tmap(pairs):
        return Vec('obj', [Table([(0, 'obj', Str(n)), (1, 'u32', t)]) for n, t in pairs])
    if signatures:
        fields.append((7, 'obj', Vec('obj', [Table([(0, 'obj', tmap(ins)), (1, 'obj', tmap(outs)), (2, 'obj', Str(k)),
                                                    (4, 'u32', i)]) for k, i, ins, outs in signatures])))
    with open(path, 'wb') as fh:
        fh.write(FB().finish(Table(fields)))


def raw_bytes(data, dtype=None):
    """a constant's bytes, little-endian as numpy lays them out (converted to
    dtype first when given)"""
    return np.ascontiguousarray(data, dtype=dtype).tobytes()
