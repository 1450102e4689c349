#!/bin/sh
# quant_opset.sh SWITCHYARD WORKDIR [NODE_MODULES]: the opset upgrade of
# `switchyard quantize` (tests/quant/quant_opset.py says what is checked).
# ONNX Runtime: the npm package onnxruntime-node from NODE_MODULES or
# $ORT_NODE_MODULES, else installed into WORKDIR; exits 77 (skipped) without
# node/npm or registry access.
set -u
sy=$1 work=$2 mods=${3:-${ORT_NODE_MODULES:-}}
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
[ -x "$py" ] || py=python3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work" || exit 1
if [ -z "$mods" ] || [ ! -f "$mods/onnxruntime-node/package.json" ]; then
  command -v node >/dev/null && command -v npm >/dev/null ||
    { echo "SKIPPED: node and npm are needed to run ONNX Runtime (npm onnxruntime-node)"; exit 77; }
  mkdir -p "$work/npm"
  (cd "$work/npm" && npm install --silent --no-audit --no-fund --ignore-scripts onnxruntime-node >/dev/null 2>&1) ||
    { echo "SKIPPED: npm install onnxruntime-node failed (no registry access?)"; exit 77; }
  mods=$work/npm/node_modules
fi
"$py" "$here/quant_opset.py" gen "$work" || fail "generating the models"

"$sy" quantize "$work/old/model.onnx" --calib "$work/calib" -o "$work/q/model.onnx" >"$work/old.log" 2>&1 ||
  { cat "$work/old.log"; fail "quantize refused the opset-11 model"; }

out=$("$sy" quantize "$work/refuse/model.onnx" --calib "$work/calib" -o "$work/refused.onnx" 2>&1) &&
  fail "quantize took a Softmax whose opset-11 and opset-13 meanings differ"
echo "$out" | grep -q "node 'softmax' (Softmax, axis 1): cannot raise the opset to 13 unless the axis is the last or every dim after it is 1" ||
  fail "refusal message: $out"
[ ! -e "$work/refused.onnx" ] || fail "a refused model was written"

"$sy" quantize "$work/half/model.onnx" --calib "$work/calib16" -o "$work/hq/model.onnx" >"$work/half.log" 2>&1 ||
  { cat "$work/half.log"; fail "quantize refused the float16 model"; }
grep -q "float16 model widened to float32 (2 initializers; float16 inputs and outputs kept)" "$work/half.log" ||
  { cat "$work/half.log"; fail "the float16 widening is not reported"; }
out=$("$sy" quantize "$work/half_rand/model.onnx" --calib "$work/calib16" -o "$work/half_rand_q.onnx" 2>&1) &&
  fail "quantize took a float16 model with a RandomNormalLike of dtype float16"
echo "$out" | grep -q "node 'noise' (RandomNormalLike): its attribute 'dtype' makes float16 values" ||
  fail "float16 refusal message: $out"
[ ! -e "$work/half_rand_q.onnx" ] || fail "a refused float16 model was written"

ORT_NODE_MODULES=$mods node "$here/../ml/ort_ml.mjs" "$work" || fail "ONNX Runtime"
"$sy" run "$work/q/model.onnx" --input-dir "$work/calib" --output-dir "$work/q_out" >"$work/run.log" 2>&1 ||
  { cat "$work/run.log"; fail "switchyard run of the quantized model"; }
"$sy" run "$work/hq/model.onnx" --input-dir "$work/calib16" --output-dir "$work/hq_out" >"$work/run16.log" 2>&1 ||
  { cat "$work/run16.log"; fail "switchyard run of the quantized float16 model"; }
"$py" "$here/quant_opset.py" check "$work"
