# Sourced by the real-TFLite tests: tfljs_modules DIR sets $mods to a
# node_modules folder holding npm @tensorflow/tfjs-tflite (TFLite compiled to
# WebAssembly): $TFLITE_NODE_MODULES when it holds the package, else the
# package installed into DIR (--ignore-scripts: the .wasm files ship inside
# it). Exits 77 (skipped) when node, npm or the package are unavailable.
tfljs_modules() {
    command -v node >/dev/null ||
        { echo "SKIPPED: node is needed to run real TFLite (npm @tensorflow/tfjs-tflite)"; exit 77; }
    mods=${TFLITE_NODE_MODULES:-}
    if [ -z "$mods" ] || [ ! -f "$mods/@tensorflow/tfjs-tflite/wasm/tflite_web_api_cc.wasm" ]; then
        command -v npm >/dev/null ||
            { echo "SKIPPED: npm is needed to install @tensorflow/tfjs-tflite (or set TFLITE_NODE_MODULES)"; exit 77; }
        (cd "$1" && npm install --silent --no-audit --no-fund --ignore-scripts --legacy-peer-deps \
            @tensorflow/tfjs-tflite >/dev/null 2>&1) ||
            { echo "SKIPPED: npm install @tensorflow/tfjs-tflite failed (no registry access?)"; exit 77; }
        mods=$1/node_modules
    fi
}
