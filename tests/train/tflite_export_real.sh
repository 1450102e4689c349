#!/bin/sh
# The .tflite export against an independent runtime (tflite_export_real.mjs):
# the sine model (when the shared folder has it) and the CNN of
# test_train_tflite.c, and with PYTHON (numpy, onnx) the models of
# tflite_ops_models.py, trained and exported by `test_train_tflite export`.
#
#   tflite_export_real.sh tflite|ort TEST_TRAIN_TFLITE SWITCHYARD SHARED_DIR [PYTHON]
# tflite (train.tflite_real): real TFLite, npm @tensorflow/tfjs-tflite from
#   $TFLITE_NODE_MODULES or installed by npm (tests/tflite/tfljs_modules.sh);
# ort (train.tflite_ort): ONNX Runtime, npm onnxruntime-node from
#   $ORT_NODE_MODULES, else from $TFLITE_NODE_MODULES, else installed by npm.
# Exit 77 (skipped) when node, npm or the runtime's package are unavailable:
# each runtime is its own test, so a pass always ran its reference.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
mode=$1
shift
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy_trtfl.XXXXXX")
trap 'rm -rf "$dir"' EXIT
case $mode in
tflite)
  . "$here/../tflite/tfljs_modules.sh"
  tfljs_modules "$dir"
  ;;
ort)
  command -v node >/dev/null ||
    { echo "SKIPPED: node is needed to run ONNX Runtime (npm onnxruntime-node)"; exit 77; }
  mods=
  for m in "${ORT_NODE_MODULES:-}" "${TFLITE_NODE_MODULES:-}"; do
    if [ -n "$m" ] && [ -f "$m/onnxruntime-node/package.json" ]; then mods=$m; break; fi
  done
  if [ -z "$mods" ]; then
    command -v npm >/dev/null ||
      { echo "SKIPPED: npm is needed to install onnxruntime-node (or set ORT_NODE_MODULES)"; exit 77; }
    (cd "$dir" && npm install --silent --no-audit --no-fund --ignore-scripts onnxruntime-node >/dev/null 2>&1) ||
      { echo "SKIPPED: npm install onnxruntime-node failed (no registry access?)"; exit 77; }
    mods=$dir/node_modules
  fi
  ;;
*)
  echo "usage: tflite_export_real.sh tflite|ort TEST_TRAIN_TFLITE SWITCHYARD SHARED_DIR [PYTHON]"
  exit 2
  ;;
esac
mkdir "$dir/work" "$dir/models"
if [ -n "${4:-}" ] && "$4" -c 'import numpy, onnx' 2>/dev/null; then
  "$4" "$here/tflite_ops_models.py" "$dir/models"
  SY_TFLITE_OPS_MODELS=$dir/models
  export SY_TFLITE_OPS_MODELS
else
  echo "note: no python3 with numpy and onnx: the models of tflite_ops_models.py are left out"
fi
"$1" export "$3" "$dir/work" >/dev/null
if [ "$mode" = tflite ]; then
  TFLITE_NODE_MODULES="$mods" node "$here/tflite_export_real.mjs" "$2" "$dir/work" tflite
else
  ORT_NODE_MODULES="$mods" node "$here/tflite_export_real.mjs" "$2" "$dir/work" ort
fi
