#!/bin/sh
# Do other runtimes load what `switchyard quantize` writes? Quantizes mnist-8
# with every scheme, runs each file in ONNX Runtime's CPU provider (npm
# package onnxruntime-node, installed into a temporary folder with
# --ignore-scripts) and in switchyard, and prints per scheme the file size,
# both runtimes' argmax on the three test sets and their largest difference.
#
#   tools/bench/ort_quant_check.sh [BUILD_DIR] [SHARED_DIR]
set -eu
build=${1:-build}
shared=${2:-../shared}
here=$(cd "$(dirname "$0")" && pwd)
m=$shared/models/onnx/mnist-8
[ -f "$m/model.onnx" ] || { echo "ort_quant_check.sh: $m/model.onnx is absent" >&2; exit 1; }
command -v npm >/dev/null && command -v node >/dev/null || { echo "ort_quant_check.sh: needs node and npm" >&2; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy_ortq.XXXXXX")
trap 'rm -rf "$dir"' EXIT
(cd "$dir" && npm install --silent --no-audit --no-fund --ignore-scripts onnxruntime-node >/dev/null 2>&1) ||
    { echo "ort_quant_check.sh: npm install onnxruntime-node failed" >&2; exit 1; }
sy=$build/bin/switchyard
printf 'mnist-8 float: %s bytes\n' "$(wc -c < "$m/model.onnx")"
for scheme in int8 uint8 int16x8 fp16 int4; do
    q=$dir/mnist8_$scheme.onnx
    "$sy" quantize "$m/model.onnx" --calib "$m" --scheme "$scheme" -o "$q" >/dev/null 2>&1 ||
        { echo "$scheme: switchyard quantize failed" >&2; exit 1; }
    tops=
    for i in 0 1 2; do
        "$sy" run "$q" --input-dir "$m/test_data_set_$i" --output-dir "$dir/sy_$i" > "$dir/run.txt"
        tops="$tops $(sed -n 's/.*top-5: \[\([0-9]*\)\].*/\1/p' "$dir/run.txt")"
    done
    ort=$(ORT_NODE_MODULES="$dir/node_modules" node "$here/ort_quant_check.mjs" "$q" "$m" "$dir" 2>/dev/null) || { echo "$scheme: $ort"; exit 1; }
    printf '%-8s %6s bytes  switchyard: argmax%s;  %s\n' "$scheme" "$(wc -c < "$q")" "$tops" "$ort"
done
