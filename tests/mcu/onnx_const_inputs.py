#!/usr/bin/env python3
"""A copy of an ONNX node test (model.onnx, test_data_set_0) with the named
inputs made initializers, their values the test's own input_K.pb: the seed
wants weights, scales and zero points as constants (ops-mcu.md Table B),
while ONNX's node tests feed them as graph inputs. The outputs stay ONNX's
output_K.pb, so the copy checks against the same independent reference.

    onnx_const_inputs.py SRC_DIR DST_DIR NAME[,NAME...] [NAME ...]
"""
import os
import shutil
import sys

import onnx
from onnx import numpy_helper


def main():
    src, dst = sys.argv[1], sys.argv[2]
    names = {k for a in sys.argv[3:] for k in a.split(",") if k}
    m = onnx.load(os.path.join(src, "model.onnx"))
    ds = os.path.join(src, "test_data_set_0")
    init = {i.name for i in m.graph.initializer}
    inputs = [i for i in m.graph.input if i.name not in init]
    missing = names - {i.name for i in inputs}
    if missing:
        sys.exit("no graph input named " + ", ".join(sorted(missing)))
    os.makedirs(os.path.join(dst, "test_data_set_0"), exist_ok=True)
    keep = []
    k_out = 0
    for k, inp in enumerate(inputs):
        t = onnx.TensorProto()
        with open(os.path.join(ds, "input_%d.pb" % k), "rb") as f:
            t.ParseFromString(f.read())
        if inp.name in names:
            t.name = inp.name
            m.graph.initializer.append(t)
        else:
            keep.append(inp)
            shutil.copy(os.path.join(ds, "input_%d.pb" % k), os.path.join(dst, "test_data_set_0", "input_%d.pb" % k_out))
            k_out += 1
    del m.graph.input[:]
    m.graph.input.extend(keep)
    for f in os.listdir(ds):
        if f.startswith("output_"):
            shutil.copy(os.path.join(ds, f), os.path.join(dst, "test_data_set_0", f))
    onnx.save(m, os.path.join(dst, "model.onnx"))


if __name__ == "__main__":
    main()
