#!/usr/bin/python3
# qas_state_model.py Q.onnx STATE.txt OUT.onnx: the int8 QDQ model Q.onnx
# (from `switchyard quantize`) with its last Gemm's weight and bias codes
# replaced by those a QAS-INT8 training package prints (its `w0 N:` and
# `b0 N:` lines of hex bytes: int8 codes, int32 little-endian), so that the
# package's trained state can be evaluated as a model. Prints how many of the
# weight codes differ from Q.onnx's.
import sys
import numpy as np
import onnx
from onnx import numpy_helper

qpath, state, out = sys.argv[1:4]
m = onnx.load(qpath)
lines = {l.split(':')[0].split()[0]: l.split(':', 1)[1].split()
         for l in open(state) if ':' in l and l.split()[0] in ('w0', 'b0')}
if 'w0' not in lines or 'b0' not in lines:
    sys.exit('%s: no w0 / b0 lines' % state)
w = np.array([int(v, 16) for v in lines['w0']], dtype=np.uint8).view(np.int8)
b = np.frombuffer(bytes(int(v, 16) for v in lines['b0']), dtype='<i4')
gemm = [n for n in m.graph.node if n.op_type == 'Gemm'][-1]
dq = {n.output[0]: n for n in m.graph.node if n.op_type == 'DequantizeLinear'}
inits = {i.name: i for i in m.graph.initializer}
moved = 0
for name, codes in ((gemm.input[1], w), (gemm.input[2], b)):
    init = inits[dq[name].input[0]]
    old = numpy_helper.to_array(init)
    if old.size != codes.size:
        sys.exit('%s: %d codes in the state, %d in %s' % (state, codes.size, old.size, init.name))
    if name == gemm.input[1]:
        moved = int(np.sum(old.reshape(-1) != codes))
    init.CopyFrom(numpy_helper.from_array(codes.astype(old.dtype).reshape(old.shape), init.name))
onnx.save(m, out)
print('%s: %d of %d weight codes differ from the quantized model' % (gemm.name, moved, w.size))
