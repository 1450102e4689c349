#!/usr/bin/env bash
# FP32 training packages from a TFLite model (issue #15: training graphs "from
# a forward ONNX or TFLite model"): tests/mcu/train_tflite_model.py writes
# dw.tflite (NHWC [1, 28, 28, 1] -> DEPTHWISE_CONV_2D without bias -> RELU ->
# RESHAPE -> FULLY_CONNECTED) and dw_ref.onnx, the same numbers in ONNX's
# layout. Checked:
#  - `switchyard train dw.tflite --data Fashion-MNIST`: the IDX images
#    [1, 28, 28] feed the NHWC input [N, 28, 28, 1] (the same bytes: only
#    axes of size 1 differ), and the epoch prints the ONNX twin's figures
#    (test accuracy at least 80%: 82.12% when written);
#  - `codegen --train --mode fp32 dw.tflite`: the host trainer's tensors after
#    the steps are the ONNX twin's bit for bit, the translation's Transposes
#    around the one-channel Conv move no element and are views (the twin's
#    RAM plan), and the package trained natively or under QEMU gives the host
#    trainer's tensors within 1e-6 (tests/mcu/train_f32_compare.py).
#
#   test_mcu_train_tflite.sh SWITCHYARD SOURCE_DIR WORK_DIR host|qemu
set -u
SY=$1 SRC=$2 WORK=$3 MODE=$4
. "$(dirname "$0")/mcu_common.sh"
mcu_need_fashion_mnist
/usr/bin/python3 -c 'import numpy, onnx' 2>/dev/null ||
  { echo "SKIP: /usr/bin/python3 has no numpy or onnx (python3-numpy, python3-onnx)"; exit 77; }
mcu_prepare "$MODE" "$WORK"
/usr/bin/python3 "$SRC/tests/mcu/train_tflite_model.py" "$WORK" || { echo "FAIL: the test models"; exit 1; }

# host training straight from the .tflite on the IDX files
for m in dw.tflite dw_ref.onnx; do
  "$SY" train "$WORK/$m" --data "$data" -o "$WORK/train_$m" --batch 16 --lr 0.01 > "$WORK/train_$m.log" 2>&1 ||
    { tail -3 "$WORK/train_$m.log"; fail "train $m"; }
done
a=$(grep '^epoch 1:' "$WORK/train_dw.tflite.log"); b=$(grep '^epoch 1:' "$WORK/train_dw_ref.onnx.log")
echo "dw.tflite: $a"
[ -n "$a" ] && [ "$a" = "$b" ] || fail "switchyard train: the .tflite's epoch '$a' is not the ONNX twin's '$b'"
acc=$(echo "$a" | sed -n 's/.*test accuracy \([0-9]*\)\..*/\1/p')
[ -n "$acc" ] && [ "$acc" -ge 80 ] || fail "switchyard train dw.tflite: test accuracy '$acc' below 80%"

for m in dw.tflite dw_ref.onnx; do
  "$SY" codegen --train --mode fp32 "$WORK/$m" --target ws63 --data "$data" -o "$WORK/pkg_$m" --steps 100 \
      --sram-budget 256K --optimizer sgd --momentum 0.9 --lr 0.005 > "$WORK/codegen_$m.log" 2>&1 ||
    { cat "$WORK/codegen_$m.log"; fail "codegen --train --mode fp32 $m"; }
done
pa=$(grep "RAM plan" "$WORK/codegen_dw.tflite.log"); pb=$(grep "RAM plan" "$WORK/codegen_dw_ref.onnx.log")
echo "$pa"
[ -n "$pa" ] && [ "$pa" = "$pb" ] || fail "the .tflite's plan is not the ONNX twin's: '$pa' vs '$pb'"
grep -q "layer 0: Flatten (a reshape) \[28, 28, 1\] -> \[1, 28, 28\]" "$WORK/pkg_dw.tflite/src/train.c" ||
  fail "the NHWC-to-NCHW Transpose of one channel is not a view"
# the same values in the same order (the tags name other layer indices)
cut -d: -f2 "$WORK/pkg_dw.tflite/expected_output.txt" > "$WORK/tfl.bits"
cut -d: -f2 "$WORK/pkg_dw_ref.onnx/expected_output.txt" > "$WORK/onnx.bits"
[ -s "$WORK/tfl.bits" ] && cmp -s "$WORK/tfl.bits" "$WORK/onnx.bits" ||
  fail "the host trainer's tensors from the .tflite are not the ONNX twin's bits"

pkg=$WORK/pkg_dw.tflite
mcu_pkg_run "$MODE" "$pkg" "$pkg/out.txt" 900 sy_train_main || fail "build"
[ "${mcu_run_rc:-1}" = 0 ] || { tail -5 "$pkg/out.txt"; fail "the package failed"; }
if /usr/bin/python3 "$SRC/tests/mcu/train_f32_compare.py" "$pkg/out.txt" "$pkg/expected_output.txt"; then
  echo "ok   dw.tflite: 100 FP32 steps on $MODE give the host trainer's tensors within 1e-6 ($(grep '^steps ' "$pkg/out.txt"))"
else
  fail "dw.tflite: the trained tensors differ from the host trainer's"
fi
if [ $fails -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "ok: FP32 training packages from a .tflite"
