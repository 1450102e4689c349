#!/bin/sh
# Conformance against ONNX Runtime itself: runs every ONNX node test through
# ONNX Runtime (npm onnxruntime-node, installed into a temporary folder with
# --ignore-scripts) and through `switchyard conformance`, and writes the
# table of the tests ONNX Runtime passes and Switchyard does not.
#
#   tools/dev/ort_conformance.sh [BUILD_DIR] [SHARED_DIR] [OUT.md]
#       defaults: build, ../shared, docs/ort-conformance.md
set -eu
build=${1:-build}
shared=${2:-../shared}
out=${3:-docs/ort-conformance.md}
here=$(cd "$(dirname "$0")" && pwd)
tests=$shared/testdata/onnx-node
[ -d "$tests" ] || { echo "ort_conformance.sh: $tests is absent" >&2; exit 1; }
command -v npm >/dev/null && command -v node >/dev/null || { echo "ort_conformance.sh: needs node and npm" >&2; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy_ortconf.XXXXXX")
trap 'rm -rf "$dir"' EXIT
(cd "$dir" && npm install --silent --no-audit --no-fund --ignore-scripts onnxruntime-node >/dev/null 2>&1) ||
    { echo "ort_conformance.sh: npm install onnxruntime-node failed" >&2; exit 1; }
ORT_NODE_MODULES="$dir/node_modules" node "$here/ort_conformance.mjs" "$tests" > "$dir/ort.tsv"
"$build/bin/switchyard" conformance "$tests" --verbose > "$dir/sy.log" 2>&1 || true
version=$(node -e "console.log(require('$dir/node_modules/onnxruntime-node/package.json').version)")
node "$here/ort_conformance_report.mjs" "$dir/ort.tsv" "$dir/sy.log" "$version" > "$out"
sed -n '/^| Switchyard/p;/^| ONNX Runtime/p;/^## /p' "$out"
