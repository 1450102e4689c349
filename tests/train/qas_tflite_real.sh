#!/bin/sh
# train.qas_tflite_real: qas_tflite_models.py's int8 models, their ONNX QDQ
# twins and the trained exports of `test_qas_tflite` run in real TFLite and
# in switchyard (qas_tflite_real.mjs).
#
#   qas_tflite_real.sh PYTHON TEST_QAS_TFLITE SWITCHYARD
# Exit 77 (skipped) when PYTHON lacks numpy or onnx, or node/npm or
# @tensorflow/tfjs-tflite are unavailable.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
"$1" -c 'import numpy, onnx' 2>/dev/null || { echo "SKIPPED: $1 has no numpy or onnx"; exit 77; }
. "$here/../tflite/tfljs_modules.sh"
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy_qastfl.XXXXXX")
trap 'rm -rf "$dir"' EXIT
tfljs_modules "$dir"
mkdir "$dir/models"
"$1" "$here/qas_tflite_models.py" "$dir/models"
SY_QAS_TFLITE_MODELS=$dir/models "$2" "$dir/models" >/dev/null
TFLITE_NODE_MODULES="$mods" node "$here/qas_tflite_real.mjs" "$3" "$dir/models"
