#!/bin/sh
# The .tflite export against real TFLite and ONNX Runtime (tflite_export_real.mjs): the
# sine model (when the shared folder has it) and the CNN of
# test_train_tflite.c, and with PYTHON (numpy, onnx) the models of
# tflite_ops_models.py, trained and exported by `test_train_tflite export`.
#
#   tflite_export_real.sh TEST_TRAIN_TFLITE SWITCHYARD SHARED_DIR [PYTHON]
# Exit 77 (skipped) when node/npm or @tensorflow/tfjs-tflite are unavailable.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tflite/tfljs_modules.sh"
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy_trtfl.XXXXXX")
trap 'rm -rf "$dir"' EXIT
tfljs_modules "$dir"
mkdir "$dir/work" "$dir/models"
if [ -n "${4:-}" ] && "$4" -c 'import numpy, onnx' 2>/dev/null; then
  "$4" "$here/tflite_ops_models.py" "$dir/models"
  SY_TFLITE_OPS_MODELS=$dir/models
  export SY_TFLITE_OPS_MODELS
else
  echo "note: no python3 with numpy and onnx: the models of tflite_ops_models.py are left out"
fi
"$1" export "$3" "$dir/work" >/dev/null
# ONNX Runtime runs the exported .onnx too when onnxruntime-node sits next to
# the TFLite package (or in $ORT_NODE_MODULES); without it that part is noted
ort=${ORT_NODE_MODULES:-$mods}
TFLITE_NODE_MODULES="$mods" ORT_NODE_MODULES="$ort" node "$here/tflite_export_real.mjs" "$2" "$dir/work"
