#!/bin/bash
# mcu.input_encoding: a QDQ model whose graph input is int8 codes (a model
# cut after its input QuantizeLinear, as a QAS session's frozen front is)
# states their meaning only through the DequantizeLinear nodes reading them.
# The loader records that encoding on the input when every reader agrees, so
# a pass-through op on the codes (here a Pad, folded to run on the codes)
# sees its input quantized like its output, and riscv_mcu places it (strict).
#   pad        xq -> DQ(0.03, -2) -> Pad([0,0,1,2, 0,0,1,0], constant 0)
#              -> Q(0.03, -2) -> DQ -> y: riscv_mcu places every node and y is
#              the codes padded with -2 (the zero point), dequantized: the
#              expected values are written out here with numpy from that rule
#   disagree   xq also read by a DQ of another scale: no encoding is recorded
#              (two readings), and riscv_mcu declines the Pad with its rule
#
#   test_mcu_input_encoding.sh SWITCHYARD PYTHON
# Exit 77 (skipped) when PYTHON lacks numpy or onnx.
set -euo pipefail
SY=$1 PY=$2
here=$(cd "$(dirname "$0")" && pwd)
"$PY" -c 'import numpy, onnx' 2>/dev/null || { echo "SKIPPED: $PY has no numpy or onnx"; exit 77; }
W=$(mktemp -d "${TMPDIR:-/tmp}/sy_inenc.XXXXXX")
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL $*"; exit 1; }

"$PY" - "$W" <<'PYEOF'
import sys, os
import numpy as np
from onnx import helper, numpy_helper, TensorProto as TP, save
w = sys.argv[1]
s, z = np.float32(0.03), -2
rng = np.random.default_rng(3)
x = rng.integers(-128, 128, size=(1, 2, 3, 4), dtype=np.int8)
pads = [0, 0, 1, 2, 0, 0, 1, 0]

def model(name, disagree):
    inits = [numpy_helper.from_array(np.array(s, np.float32), 's'),
             numpy_helper.from_array(np.array(z, np.int8), 'z'),
             numpy_helper.from_array(np.array(pads, np.int64), 'pads'),
             numpy_helper.from_array(np.array(0.0, np.float32), 'cv')]
    nodes = [helper.make_node('DequantizeLinear', ['xq', 's', 'z'], ['xf']),
             helper.make_node('Pad', ['xf', 'pads', 'cv'], ['pf']),
             helper.make_node('QuantizeLinear', ['pf', 's', 'z'], ['pq']),
             helper.make_node('DequantizeLinear', ['pq', 's', 'z'], ['y'])]
    outs = [helper.make_tensor_value_info('y', TP.FLOAT, [1, 2, 5, 6])]
    if disagree:
        inits.append(numpy_helper.from_array(np.array(0.5, np.float32), 's2'))
        nodes.append(helper.make_node('DequantizeLinear', ['xq', 's2', 'z'], ['y2']))
        outs.append(helper.make_tensor_value_info('y2', TP.FLOAT, [1, 2, 3, 4]))
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info('xq', TP.INT8, [1, 2, 3, 4])], outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
    m.ir_version = 8
    os.makedirs(os.path.join(w, name), exist_ok=True)
    save(m, os.path.join(w, name, 'model.onnx'))
    np.save(os.path.join(w, name, 'xq.npy'), x)

model('pad', False)
model('disagree', True)
# the Pad's rule on codes: the new places hold the zero point, whose real value is the constant 0
q = np.pad(x.astype(np.int32), [(0, 0), (0, 0), (1, 1), (2, 0)], constant_values=z)
np.save(os.path.join(w, 'want.npy'), (s * (q - z).astype(np.float32)).astype(np.float32))
PYEOF

INI=$here/conformance_riscv_mcu.ini
"$SY" run "$W/pad/model.onnx" --config "$INI" --input xq="$W/pad/xq.npy" --output-dir "$W/pad/out" > "$W/pad.log" 2>&1 ||
  { cat "$W/pad.log"; fail "pad: riscv_mcu (strict) did not run the model"; }
"$SY" explain "$W/pad/model.onnx" --config "$INI" > "$W/pad.explain" 2>&1 || { cat "$W/pad.explain"; fail "pad: explain"; }
grep -Eq 'Pad +riscv_mcu +taken' "$W/pad.explain" || { cat "$W/pad.explain"; fail "pad: the Pad is not on riscv_mcu"; }
"$PY" - "$W" <<'PYEOF' || fail "pad: riscv_mcu's output differs from the padded codes"
import sys, numpy as np
from onnx import numpy_helper, TensorProto
w = sys.argv[1]
t = TensorProto()
t.ParseFromString(open(w + '/pad/out/output_0.pb', 'rb').read())
got, want = numpy_helper.to_array(t), np.load(w + '/want.npy')
assert got.shape == want.shape, (got.shape, want.shape)
assert np.array_equal(got, want), np.abs(got - want).max()
print('ok   pad: the int8 input took its DequantizeLinear\'s encoding; riscv_mcu ran the Pad on the codes, '
      '%d values equal to numpy\'s padded codes' % want.size)
PYEOF
if "$SY" run "$W/disagree/model.onnx" --config "$INI" --input xq="$W/disagree/xq.npy" > "$W/dis.log" 2>&1; then
  fail "disagree: riscv_mcu placed the Pad of an input read with two encodings"
fi
grep -q "Pad: int8 input and output must share one quantization" "$W/dis.log" ||
  { cat "$W/dis.log"; fail "disagree: not declined with the Pad's rule"; }
echo "ok   disagree: an input read by DequantizeLinear nodes of two scales gets no encoding; the Pad is declined:"
grep -o "Pad: int8 input and output must share one quantization" "$W/dis.log" | head -1 | sed 's/^/       /'
