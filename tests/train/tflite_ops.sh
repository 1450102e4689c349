#!/bin/sh
# train.tflite_ops: tflite_ops_models.py writes the TANH, LOGISTIC,
# BATCH_MATMUL, grouped CONV_2D, STRIDED_SLICE and chain (ADD, MUL, SUB, ABS,
# DIV, CONCATENATION, TRANSPOSE, STRIDED_SLICE, SQUEEZE) models and their
# ONNX references, then
# `test_train_tflite ops` trains each from both (test_train_tflite.c).
#
#   tflite_ops.sh PYTHON TEST_TRAIN_TFLITE SHARED_DIR WORK_DIR
# Exit 77 (skipped) when PYTHON lacks numpy or onnx.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
"$1" -c 'import numpy, onnx' 2>/dev/null || { echo "SKIPPED: $1 has no numpy or onnx"; exit 77; }
mkdir -p "$4"
dir=$(mktemp -d "$4/tflite_ops.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$1" "$here/tflite_ops_models.py" "$dir"
SY_TFLITE_OPS_MODELS=$dir "$2" ops "$3" "$4"
