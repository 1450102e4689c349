#!/bin/sh
# ops_contrib and ops_legacy against ONNX Runtime: installs the npm package
# onnxruntime-node into a temporary folder (--ignore-scripts: the CPU
# library ships inside the package) and runs ort_contrib.mjs, which feeds
# the same inputs to both runtimes and compares every output.
#
#   ort_contrib.sh SWITCHYARD SHARED_DIR
# Exit 77 (skipped) when the shared models, node/npm or the package are
# unavailable.
set -eu
sy=$1
shared=$2
here=$(cd "$(dirname "$0")" && pwd)
for m in tiny_random_gpt2_ort_fused fns_candy_style_transfer_legacy; do
    [ -f "$shared/models/onnx/$m/model.onnx" ] ||
        { echo "SKIPPED: $shared/models/onnx/$m/model.onnx is absent (the shared folder)"; exit 77; }
done
command -v node >/dev/null && command -v npm >/dev/null ||
    { echo "SKIPPED: node and npm are needed to run ONNX Runtime (npm onnxruntime-node)"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy_ortc.XXXXXX")
trap 'rm -rf "$dir"' EXIT
(cd "$dir" && npm install --silent --no-audit --no-fund --ignore-scripts onnxruntime-node >/dev/null 2>&1) ||
    { echo "SKIPPED: npm install onnxruntime-node failed (no registry access?)"; exit 77; }
mkdir "$dir/work"
ORT_NODE_MODULES="$dir/node_modules" node "$here/ort_contrib.mjs" "$sy" "$shared" "$dir/work"
