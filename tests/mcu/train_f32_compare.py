#!/usr/bin/env python3
"""Compares the trained tensors an FP32 training package printed with the
host trainer's (expected_output.txt): lines 'TAG N: xxxxxxxx ...', each value
a float32's bits in hex. Issue #15's rule: within 1e-6 relative, read per
tensor as max_i |device_i - host_i| <= 1e-6 * max_i |host_i| (a tensor's
scale: a weight that is near zero by chance has no relative precision of
its own). Prints each tensor's normwise error, the worst element-wise
relative error among elements above 1e-3 of the tensor's scale, and the
count of bit-identical values; exit 1 when a tensor is out of tolerance or
the tags or counts differ.

    train_f32_compare.py DEVICE_OUTPUT EXPECTED_OUTPUT [TOL]
"""
import sys

import numpy as np


def read(path):
    out = {}
    for line in open(path):
        if line.startswith("steps "):
            continue
        head, _, rest = line.partition(":")
        tag, n = head.split()
        vals = np.array([int(h, 16) for h in rest.split()], dtype=np.uint32).view(np.float32)
        if len(vals) != int(n):
            sys.exit(f"{path}: {tag} says {n} values, has {len(vals)}")
        out[tag] = vals
    return out


dev, host = read(sys.argv[1]), read(sys.argv[2])
tol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-6
if list(dev) != list(host):
    sys.exit(f"tensors differ: device {list(dev)}, host {list(host)}")
bad = 0
for tag, h in host.items():
    d = dev[tag]
    if len(d) != len(h):
        sys.exit(f"{tag}: {len(d)} values on the device, {len(h)} on the host")
    h64, d64 = h.astype(np.float64), d.astype(np.float64)
    scale = np.max(np.abs(h64))
    err = np.max(np.abs(d64 - h64))
    rel = err / scale if scale > 0 else err
    big = np.abs(h64) > 1e-3 * scale
    elem = np.max(np.abs(d64 - h64)[big] / np.abs(h64[big])) if big.any() else 0.0
    same = int(np.sum(d.view(np.uint32) == h.view(np.uint32)))
    ok = rel <= tol and np.all(np.isfinite(d64))
    bad += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {tag}: {len(h)} values, max |device - host| / max |host| = {rel:.2e} "
          f"(tolerance {tol:g}), worst element {elem:.2e}, {same} bit-identical")
sys.exit(1 if bad else 0)
