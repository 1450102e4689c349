"""ai.onnx.ml operators: switchyard against ONNX Runtime (npm
onnxruntime-node) on the one-node models of ml_cases.py; floats within
1e-5 relative (plus 1e-6 absolute near zero), integers and strings exact.

  /usr/bin/python3 ml_ort.py SWITCHYARD WORK_DIR
Exit 77 (skipped) when node or the onnxruntime-node package is absent
(a node_modules folder named by ORT_NODE_MODULES, else a temporary npm
install)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:  # Debian's python3-onnx (with python3-numpy) writes the models
    import numpy as np
    import onnx  # noqa: F401
except ImportError as e:
    print("SKIPPED: python3-onnx is needed to write the models (%s)" % e)
    sys.exit(77)
from onnx import numpy_helper, TensorProto

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ml_cases  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))


def ort_modules():
    d = os.environ.get("ORT_NODE_MODULES")
    if d and os.path.isfile(os.path.join(d, "onnxruntime-node", "package.json")):
        return d, None
    if not shutil.which("npm"):
        return None, None
    tmp = tempfile.mkdtemp(prefix="sy_ortml.")
    r = subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--ignore-scripts",
                        "onnxruntime-node"], cwd=tmp, capture_output=True)
    return (os.path.join(tmp, "node_modules"), tmp) if r.returncode == 0 else (None, tmp)


def to_proto(name, a):
    if a.dtype == object:
        t = TensorProto(name=name, data_type=TensorProto.STRING, dims=list(a.shape))
        t.string_data.extend(s.encode() for s in a.reshape(-1))
        return t
    return numpy_helper.from_array(a, name)


def jtype(a):
    return "string" if a.dtype == object else str(a.dtype)


def main():
    sy, work = sys.argv[1], sys.argv[2]
    if not shutil.which("node"):
        print("SKIPPED: node is needed to run ONNX Runtime (npm onnxruntime-node)")
        return 77
    mods, tmp = ort_modules()
    if not mods:
        print("SKIPPED: onnxruntime-node is not installed and npm install failed")
        return 77
    os.makedirs(work, exist_ok=True)
    cases = ml_cases.cases()
    manifest = []
    for name, model, inputs in cases:
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(model.SerializeToString())
        for i, (n, a) in enumerate(inputs):
            with open(os.path.join(d, "input_%d.pb" % i), "wb") as f:
                f.write(to_proto(n, a).SerializeToString())
        manifest.append({"name": name, "inputs": [
            {"name": n, "dtype": jtype(a), "dims": list(a.shape),
             "data": [str(v) if a.dtype == np.int64 else (None if isinstance(v, float) and np.isnan(v) else v)
                      for v in a.reshape(-1).tolist()]} for n, a in inputs]})
    # NaN does not survive JSON: null stands for it (ort_ml.mjs reads it back)
    with open(os.path.join(work, "cases.json"), "w") as f:
        json.dump(manifest, f)
    subprocess.run(["node", os.path.join(here, "ort_ml.mjs"), work], check=True,
                   env=dict(os.environ, ORT_NODE_MODULES=mods))
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    failed = 0
    for name, _, _ in cases:
        d = os.path.join(work, name)
        ref = json.load(open(os.path.join(d, "ort.json")))
        if not ref["ok"]:
            print("FAIL %s: onnxruntime refused the model: %s" % (name, ref["error"]))
            failed += 1
            continue
        r = subprocess.run([sy, "run", os.path.join(d, "model.onnx"), "--input-dir", d, "--output-dir",
                            os.path.join(d, "sy")], capture_output=True, text=True)
        if r.returncode:
            print("FAIL %s: switchyard run: %s" % (name, r.stderr.strip()))
            failed += 1
            continue
        msgs, worst = [], 0.0
        for i, o in enumerate(ref["outputs"]):
            t = TensorProto()
            t.ParseFromString(open(os.path.join(d, "sy", "output_%d.pb" % i), "rb").read())
            got = numpy_helper.to_array(t)
            if got.shape != tuple(o["dims"]):
                msgs.append("%s: shape %s, onnxruntime %s" % (o["name"], got.shape, o["dims"]))
                continue
            if o["type"] == "string":
                want = [s for s in o["data"]]
                g = [s.decode() if isinstance(s, bytes) else s for s in got.reshape(-1).tolist()]
                if g != want:
                    msgs.append("%s: %s, onnxruntime %s" % (o["name"], g, want))
            elif o["type"] in ("int64", "int32"):
                if got.reshape(-1).tolist() != [int(v) for v in o["data"]]:
                    msgs.append("%s: %s, onnxruntime %s" % (o["name"], got.reshape(-1).tolist(), o["data"]))
            else:
                want = np.array([np.nan if v is None else v for v in o["data"]], np.float64)
                g = got.reshape(-1).astype(np.float64)
                bad = ~((np.abs(g - want) <= 1e-6 + 1e-5 * np.abs(want)) | (np.isnan(g) & np.isnan(want)))
                if g.size:
                    worst = max(worst, float(np.nanmax(np.abs(g - want) / (1e-6 + np.abs(want)))))
                if bad.any():
                    msgs.append("%s: got %s, onnxruntime %s" % (o["name"], g.tolist(), want.tolist()))
            if str(got.dtype) != {"string": "object"}.get(o["type"], o["type"]):
                msgs.append("%s: dtype %s, onnxruntime %s" % (o["name"], got.dtype, o["type"]))
        print("%s %s (worst rel %.2g)%s" % ("FAIL" if msgs else "ok  ", name, worst,
                                              "".join("\n    " + m for m in msgs)))
        failed += bool(msgs)
    print("%d of %d cases match onnxruntime" % (len(cases) - failed, len(cases)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
