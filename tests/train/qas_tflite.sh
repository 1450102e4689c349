#!/bin/sh
# train.qas_tflite: qas_tflite_models.py writes the int8 TFLite models, their
# ONNX QDQ twins and the refusals, then test_qas_tflite trains each model
# from both and checks the refusals (test_qas_tflite.c).
#
#   qas_tflite.sh PYTHON TEST_QAS_TFLITE WORK_DIR
# Exit 77 (skipped) when PYTHON lacks numpy or onnx.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
"$1" -c 'import numpy, onnx' 2>/dev/null || { echo "SKIPPED: $1 has no numpy or onnx"; exit 77; }
mkdir -p "$3"
dir=$(mktemp -d "$3/qas_tflite.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$1" "$here/qas_tflite_models.py" "$dir"
SY_QAS_TFLITE_MODELS=$dir "$2" "$dir"
