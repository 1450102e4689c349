#!/usr/bin/env python3
"""Writes an ONNX node test's model with its inputs 1.. as initializers.

The seed makes Resize's sizes/scales, OneHot's depth and values and the like
offline constants (ops-mcu.md "const"); ONNX's node tests feed them as graph
inputs, which a codegen package cannot plan. This bakes the test's own values
(test_data_set_0/input_K.pb, K >= 1) into the model, so the package runs the
node on input 0 alone.

    onnx_bake_inputs.py TEST_DIR OUT.onnx
"""
import os
import sys

import onnx

test_dir, out = sys.argv[1], sys.argv[2]
model = onnx.load(os.path.join(test_dir, "model.onnx"))
g = model.graph
keep = []
for k, vi in enumerate(list(g.input)):
    if k == 0:
        keep.append(vi)
        continue
    t = onnx.TensorProto()
    with open(os.path.join(test_dir, "test_data_set_0", "input_%d.pb" % k), "rb") as f:
        t.ParseFromString(f.read())
    t.name = vi.name
    g.initializer.append(t)
del g.input[:]
g.input.extend(keep)
onnx.save(model, out)
