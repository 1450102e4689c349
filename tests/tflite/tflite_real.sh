#!/bin/sh
# The shared TFLite models against the real TFLite interpreter: the npm
# package @tensorflow/tfjs-tflite (TFLite compiled to WebAssembly) is taken
# from $TFLITE_NODE_MODULES when that folder holds it, else installed into a
# temporary folder (--ignore-scripts: the .wasm files ship inside the
# package); tflite_real.mjs runs the same inputs through both.
#
#   tflite_real.sh SWITCHYARD SHARED_DIR MCU_INI
# Exit 77 (skipped) when the shared models, node/npm or the package are
# unavailable.
set -eu
sy=$1
shared=$2
ini=$3
here=$(cd "$(dirname "$0")" && pwd)
[ -d "$shared/models/tflite" ] ||
    { echo "SKIPPED: $shared/models/tflite is absent (the shared folder)"; exit 77; }
command -v node >/dev/null ||
    { echo "SKIPPED: node is needed to run real TFLite (npm @tensorflow/tfjs-tflite)"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy_tflreal.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mods=${TFLITE_NODE_MODULES:-}
if [ -z "$mods" ] || [ ! -f "$mods/@tensorflow/tfjs-tflite/wasm/tflite_web_api_cc.wasm" ]; then
    command -v npm >/dev/null ||
        { echo "SKIPPED: npm is needed to install @tensorflow/tfjs-tflite (or set TFLITE_NODE_MODULES)"; exit 77; }
    (cd "$dir" && npm install --silent --no-audit --no-fund --ignore-scripts --legacy-peer-deps \
        @tensorflow/tfjs-tflite >/dev/null 2>&1) ||
        { echo "SKIPPED: npm install @tensorflow/tfjs-tflite failed (no registry access?)"; exit 77; }
    mods=$dir/node_modules
fi
mkdir "$dir/work"
TFLITE_NODE_MODULES="$mods" node "$here/tflite_real.mjs" "$sy" "$shared" "$dir/work" "$ini"
