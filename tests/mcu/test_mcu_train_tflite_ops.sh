#!/usr/bin/env bash
# An FP32 training package from a .tflite holding the FP32 TFLite rows of
# seed 001 §4.2 that no other package test takes from a .tflite: chain.tflite
# of tests/train/tflite_ops_models.py (x [1, 8] -> FULLY_CONNECTED -> ADD,
# MUL, SUB of trained constants -> ABS -> DIV by a frozen constant ->
# CONCATENATION with the first layer's output -> RESHAPE -> TRANSPOSE ->
# STRIDED_SLICE with a stride -> RESHAPE -> SQUEEZE -> FULLY_CONNECTED [1, 3])
# and chain_ref.onnx, the same network written by hand in ONNX. Checked:
#  - `codegen --train --mode fp32 --target ws63` takes chain.tflite (every
#    translated node within its ws63 row), and its RAM plan is the ONNX
#    twin's;
#  - the host trainer's tensors after the steps (expected_output.txt) from
#    the .tflite are the twin's values, in the same order, bit for bit;
#  - the package built natively (MODE host) or for rv32imfc under QEMU (MODE
#    qemu) trains the same steps to the host trainer's tensors within 1e-6
#    relative (tests/mcu/train_f32_compare.py).
# The data: 32 samples of 8 values uniform in [-1, 1), the class the count of
# the first two that are positive (0, 1 or 2), as .npy pairs.
#
#   test_mcu_train_tflite_ops.sh SWITCHYARD SOURCE_DIR WORK_DIR host|qemu
set -u
SY=$1 SRC=$2 WORK=$3 MODE=$4
. "$(dirname "$0")/mcu_common.sh"
/usr/bin/python3 -c 'import numpy, onnx' 2>/dev/null ||
  { echo "SKIP: /usr/bin/python3 has no numpy or onnx (python3-numpy, python3-onnx)"; exit 77; }
mcu_prepare "$MODE" "$WORK"
mkdir -p "$WORK/models"
/usr/bin/python3 "$SRC/tests/train/tflite_ops_models.py" "$WORK/models" || { echo "FAIL: the test models"; exit 1; }
data=$WORK/data
/usr/bin/python3 - "$data" <<'EOF' || { echo "FAIL: the data"; exit 1; }
import os, sys
import numpy as np
rng = np.random.default_rng(8)
for split, n in (('train', 32), ('test', 8)):
    d = os.path.join(sys.argv[1], split)
    os.makedirs(d)
    for k in range(n):
        v = rng.uniform(-1, 1, 8).astype(np.float32)
        np.save(os.path.join(d, 'input_%d.npy' % k), v)
        np.save(os.path.join(d, 'label_%d.npy' % k), np.array(int(v[0] > 0) + int(v[1] > 0), np.int64))
EOF

steps=32
for m in chain.tflite chain_ref.onnx; do
  "$SY" codegen --train --mode fp32 "$WORK/models/$m" --target ws63 --data "$data" -o "$WORK/pkg_$m" --steps $steps \
      --sram-budget 256K --trainable all --optimizer sgd --momentum 0.9 --lr 0.01 > "$WORK/codegen_$m.log" 2>&1 ||
    { cat "$WORK/codegen_$m.log"; fail "codegen --train --mode fp32 $m"; }
done
pa=$(grep "RAM plan" "$WORK/codegen_chain.tflite.log"); pb=$(grep "RAM plan" "$WORK/codegen_chain_ref.onnx.log")
echo "$pa"
[ -n "$pa" ] && [ "$pa" = "$pb" ] || fail "the .tflite's plan is not the ONNX twin's: '$pa' vs '$pb'"
# the same values in the same order (the tags name the layers of each graph)
cut -d: -f2 "$WORK/pkg_chain.tflite/expected_output.txt" > "$WORK/tfl.bits"
cut -d: -f2 "$WORK/pkg_chain_ref.onnx/expected_output.txt" > "$WORK/onnx.bits"
[ -s "$WORK/tfl.bits" ] && cmp -s "$WORK/tfl.bits" "$WORK/onnx.bits" ||
  fail "the host trainer's tensors from chain.tflite are not the ONNX twin's bits"
# seven trained tensors: fc1 W [8, 8] and b [8], the ADD, MUL and SUB
# constants [1, 8], fc2 W [3, 8] and b [3] (64 + 8 + 3 * 8 + 24 + 3 = 123 values)
tensors=$(grep -c ':' "$WORK/pkg_chain.tflite/expected_output.txt")
values=$(cut -d: -f1 "$WORK/pkg_chain.tflite/expected_output.txt" | awk '{ s += $2 } END { print s }')
[ "$tensors" = 7 ] && [ "$values" = 123 ] ||
  fail "chain.tflite: $tensors trained tensors of $values values, want 7 of 123"

pkg=$WORK/pkg_chain.tflite
mcu_pkg_run "$MODE" "$pkg" "$pkg/out.txt" 900 sy_train_main || fail "build"
[ "${mcu_run_rc:-1}" = 0 ] || { tail -5 "$pkg/out.txt"; fail "the package failed"; }
if /usr/bin/python3 "$SRC/tests/mcu/train_f32_compare.py" "$pkg/out.txt" "$pkg/expected_output.txt"; then
  echo "ok   chain.tflite: $steps FP32 steps on $MODE give the host trainer's tensors within 1e-6 ($(grep '^steps ' "$pkg/out.txt"))"
else
  fail "chain.tflite: the trained tensors differ from the host trainer's"
fi
if [ $fails -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "ok: an FP32 training package from a .tflite of ADD, MUL, SUB, ABS, DIV, CONCATENATION, TRANSPOSE, STRIDED_SLICE, SQUEEZE"
