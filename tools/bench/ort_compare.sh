#!/bin/sh
# Dispatch overhead side by side: the same generated chain of NODES tiny
# elementwise nodes through `switchyard bench` and through ONNX Runtime's CPU
# provider (npm package onnxruntime-node, installed into a temporary folder
# with --ignore-scripts: the CPU library ships inside the package).
#
#   tools/bench/ort_compare.sh [BUILD_DIR]     env: NODES (10000), ITERS (200), WARMUP (20),
#                                               ORT_OPT (all | disabled: ORT graph fusions)
set -eu
build=${1:-build}
nodes=${NODES:-10000}
iters=${ITERS:-200}
warmup=${WARMUP:-20}
here=$(cd "$(dirname "$0")" && pwd)
command -v npm >/dev/null && command -v node >/dev/null || { echo "ort_compare.sh: needs node and npm" >&2; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy_ort.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$build/bin/sy_gen_graphs" --out-dir "$dir" --only elementwise_chain --chain "$nodes" >/dev/null
model=$dir/elementwise_chain.onnx
(cd "$dir" && npm install --silent --no-audit --no-fund --ignore-scripts onnxruntime-node >/dev/null 2>&1) ||
    { echo "ort_compare.sh: npm install onnxruntime-node failed" >&2; exit 1; }
sy=$("$build/bin/switchyard" bench "$model" --iters "$iters" --warmup "$warmup" | grep 'per inference')
ort=$(ORT_NODE_MODULES="$dir/node_modules" node "$here/ort_dispatch.mjs" "$model" "$iters" "$warmup")
echo "switchyard: $sy"
echo "$ort"
printf '%s\n%s\n' "$sy" "$ort" | awk -v n="$nodes" '
    /median/ { for (i = 1; i <= NF; i++) if ($i == "median") m[++k] = $(i + 1) }
    END { printf "median ns per node: switchyard %.1f, onnxruntime %.1f; ratio onnxruntime/switchyard %.2f\n",
                 m[1] * 1e6 / n, m[2] * 1e6 / n, m[2] / m[1] }'
