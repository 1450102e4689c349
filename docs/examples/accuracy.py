#!/usr/bin/env python3
"""Top-1 agreement and error statistics of an int8 model against its float original.

    python3 docs/examples/accuracy.py FLOAT.onnx INT8.onnx --inputs DIR [--chart FILE.png]
    python3 docs/examples/accuracy.py FLOAT.onnx INT8.onnx --idx IMAGES-idx3-ubyte[.gz]
                                      [--labels LABELS-idx1-ubyte[.gz]] [--limit N] [--scale S]

Inputs come from a folder (each *.npy / *.pb file one sample, or ONNX
test_data_set_*/input_0.pb folders) or from an IDX image file (MNIST,
Fashion-MNIST: Debian's dataset-fashion-mnist installs them in
/usr/share/datasets/fashion-mnist/). An IDX image of R x C bytes is reshaped
to the model's input shape, as float32 pixel * S (default 1: 0..255, what
mnist-8 takes). Both models run on every sample through the Python API; the
script prints top-1 agreement, per-sample max |int8 - float|, the relative
error ||int8 - float|| / ||float||, accuracy against the labels when given,
and draws a bar chart of the agreement per class of the float model when
matplotlib (Debian's python3-matplotlib) is installed.

With --calib DIR the script first writes INT8.onnx itself with
switchyard.quantize (the tools library; the file `switchyard quantize
FLOAT.onnx --calib DIR -o INT8.onnx` writes).
"""
import argparse
import gzip
import os
import sys

import numpy as np

import switchyard as sy


def read_idx(path):
    """An IDX file (big-endian header: 0, 0, type 0x08 = ubyte, rank; then dims): a uint8 array."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise SystemExit("%s: not an unsigned-byte IDX file (magic %s)" % (path, data[:4].hex()))
    rank = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    n = int(np.prod(dims, dtype=np.int64))
    body = np.frombuffer(data, np.uint8, n, 4 + 4 * rank)
    return body.reshape(dims)


def folder_samples(d):
    """Sample files of a folder, sorted: *.npy / *.pb, or test_data_set_*/input_0.pb."""
    files = []
    for name in sorted(os.listdir(d)):
        p = os.path.join(d, name)
        if os.path.isdir(p):
            for f in ("input_0.pb", "input_0.npy"):
                if os.path.isfile(os.path.join(p, f)):
                    files.append(os.path.join(p, f))
                    break
        elif name.endswith((".npy", ".pb")):
            files.append(p)
    if not files:
        raise SystemExit("%s: no *.npy, *.pb or test_data_set_*/input_0.pb samples" % d)
    return [(os.path.relpath(f, d), sy.read_tensor(f)) for f in files]


def fit(x, vi):
    """A sample reshaped to the model input's shape (symbolic dims as 1) and its dtype."""
    shape = tuple(d if isinstance(d, int) else 1 for d in vi.shape)
    if x.size != int(np.prod(shape)):
        raise SystemExit("a sample of %d values does not fit input '%s' %s" % (x.size, vi.name, list(vi.shape)))
    return np.ascontiguousarray(x.reshape(shape), dtype=vi.dtype)


def statistics(f, q, labels=None):
    """f, q: [N, classes] outputs of the float and int8 models."""
    f, q = f.astype(np.float64), q.astype(np.float64)
    top_f, top_q = f.argmax(1), q.argmax(1)
    diff = q - f
    st = {
        "samples": len(f),
        "agreement": float(np.mean(top_f == top_q)),
        "max_abs": diff.__abs__().max(1),
        "rel": np.linalg.norm(diff, axis=1) / np.maximum(np.linalg.norm(f, axis=1), 1e-30),
        "top_f": top_f,
        "top_q": top_q,
    }
    if labels is not None:
        st["acc_f"] = float(np.mean(top_f == labels))
        st["acc_q"] = float(np.mean(top_q == labels))
    return st


def chart(st, n_classes, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("chart: skipped, matplotlib is not installed (Debian: apt-get install python3-matplotlib)")
        return
    classes = np.arange(n_classes)
    per = [np.mean(st["top_q"][st["top_f"] == c] == c) * 100 if np.any(st["top_f"] == c) else 0 for c in classes]
    count = [int(np.sum(st["top_f"] == c)) for c in classes]
    fig, ax = plt.subplots(figsize=(8, 4))
    bars = ax.bar(classes, per, color="#4c72b0")
    for b, n in zip(bars, count):
        ax.text(b.get_x() + b.get_width() / 2, b.get_height() + 0.5, "n=%d" % n, ha="center", fontsize=8)
    ax.set_xticks(classes)
    ax.set_xlabel("class predicted by the float model")
    ax.set_ylabel("int8 top-1 agreement (%)")
    ax.set_ylim(0, 105)
    ax.set_title("int8 vs float: %.2f%% top-1 agreement over %d samples" % (st["agreement"] * 100, st["samples"]))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print("chart: wrote %s" % path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("float_model")
    ap.add_argument("int8_model")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--inputs", metavar="DIR", help="folder of samples")
    src.add_argument("--idx", metavar="FILE", help="IDX image file (.gz allowed)")
    ap.add_argument("--labels", metavar="FILE", help="IDX label file: also report accuracy")
    ap.add_argument("--limit", type=int, default=0, help="first N samples only")
    ap.add_argument("--scale", type=float, default=1.0, help="IDX pixel -> float32 factor (default 1)")
    ap.add_argument("--chart", metavar="PNG", help="bar chart of agreement per class (needs matplotlib)")
    ap.add_argument("--calib", metavar="DIR", help="first quantize FLOAT into INT8 on these samples")
    ap.add_argument("--scheme", default="int8", help="with --calib: the scheme (int8, uint8, int16x8)")
    ap.add_argument("--config", metavar="INI", help="deployment INI of both sessions (default: embedded)")
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args(argv)

    env = sy.Env(a.config)
    if a.calib:
        rep = sy.quantize(a.float_model, a.calib, a.int8_model, env=env, scheme=a.scheme)
        print("quantized: %s (%s, %d bytes, %d calibration samples)" % (a.int8_model, a.scheme, rep.output_bytes,
                                                                       rep.n_samples))
    sessions = [sy.Session(env, sy.Model(m, env), threads=a.threads) for m in (a.float_model, a.int8_model)]
    vi = sessions[0].inputs[0]
    if len(sessions[0].inputs) != 1:
        raise SystemExit("%s has %d inputs; this example feeds one" % (a.float_model, len(sessions[0].inputs)))
    labels = None
    if a.idx:
        images = read_idx(a.idx)
        samples = ((str(i), img.astype(np.float32) * np.float32(a.scale)) for i, img in enumerate(images))
        total = len(images)
        if a.labels:
            labels = read_idx(a.labels).astype(np.int64)
    else:
        listed = folder_samples(a.inputs)
        samples, total = iter(listed), len(listed)
    if a.limit:
        total = min(total, a.limit)
    outs = ([], [])
    for k, (_, x) in zip(range(total), samples):
        x = fit(x, vi)
        for s, acc in zip(sessions, outs):
            y = s.run({vi.name: x}, copy=False)[s.outputs[0].name]
            acc.append(y.reshape(-1).astype(np.float64))
            del y  # the view must go before the session's next run
    f, q = np.stack(outs[0]), np.stack(outs[1])
    if labels is not None:
        labels = labels[:total]
    st = statistics(f, q, labels)
    print("samples: %d (%s)" % (st["samples"], a.idx or a.inputs))
    print("top-1 agreement: %.2f%% (%d of %d differ)" % (st["agreement"] * 100,
                                                       int(np.sum(st["top_f"] != st["top_q"])), st["samples"]))
    print("max |int8 - float| per sample: mean %.6g, max %.6g" % (st["max_abs"].mean(), st["max_abs"].max()))
    print("relative error ||int8 - float|| / ||float||: mean %.6g, max %.6g" % (st["rel"].mean(), st["rel"].max()))
    if labels is not None:
        print("accuracy against the labels: float %.2f%%, int8 %.2f%%" % (st["acc_f"] * 100, st["acc_q"] * 100))
    if a.chart:
        chart(st, f.shape[1], a.chart)
    return 0


if __name__ == "__main__":
    sys.exit(main())
