#!/usr/bin/env bash
# QAS-INT8 training packages through an int8 MaxPool (seed 001 §4's "QAS
# INT8 MaxPool2D/MaxPool" row): tests/mcu/make_qas_pool_model.py's Conv 3x3
# (stride 2, pads 1, 4 filters) -> Relu -> MaxPool 2x2 -> Flatten ->
# Gemm(196 -> 10), quantized by `switchyard quantize` (the MaxPool as
# DequantizeLinear -> MaxPool -> QuantizeLinear of one quantization), both
# layers trained (--trainable last:2, the gradient through the MaxPool into
# the Conv) and their biases (bias:2), and (pool-matmul, last:2) with the
# Gemm rewritten as MatMul(A, Transpose(perm 1,0) of its weight) without
# bias (tests/mcu/qdq_gemm_to_matmul.py: the row's "B transposed"); built for rv32imfc and run under
# qemu-system-riscv32 (MODE qemu) or natively (MODE host), 200 steps on
# Fashion-MNIST images leave the host trainer's int8 codes, int32 biases and
# float master copies bit for bit. The pooled codes and their gradient are
# blocks of the step's arena placed by the core's planner: the RAM peak and
# lower bound are printed and checked; the Conv's weight codes must move.
# And (pool-transpose, last:2) with a Transpose (perm 0,2,1,3) of the pooled
# codes before the Flatten, in its QDQ pair: the package permutes the codes
# into the Gemm's input and its input gradient back each step, the host
# session's qas_perm_s8 / qas_unperm_f32, the permuted codes and their
# gradient blocks of the same arena (peak 25436, lower bound 25434 bytes:
# the permuted codes take the pooled codes' place after the forward, their
# 784-byte gradient is over the pool model's).
#
#   test_mcu_train_pool.sh SWITCHYARD SOURCE_DIR WORK_DIR host|qemu
set -u
SY=$1 SRC=$2 WORK=$3 MODE=$4
. "$(dirname "$0")/mcu_common.sh"
mcu_need_fashion_mnist
mcu_prepare "$MODE" "$WORK"
/usr/bin/python3 "$SRC/tests/train/fashion_calib.py" "$data" "$WORK/calib" 16 || { echo "FAIL: calibration images"; exit 1; }
qp=$WORK/pool_q.onnx
/usr/bin/python3 "$SRC/tests/mcu/make_qas_pool_model.py" "$WORK/pool.onnx" &&
  "$SY" quantize "$WORK/pool.onnx" --calib "$WORK/calib" -o "$qp" > "$WORK/quantize.log" 2>&1 ||
  { cat "$WORK/quantize.log"; echo "FAIL: the MaxPool model"; exit 1; }

# the same with its Gemm as MatMul(A, Transpose(perm 1,0) of the weight), no bias (the row's "B transposed")
qm=$WORK/pool_matmul_q.onnx
/usr/bin/python3 "$SRC/tests/mcu/qdq_gemm_to_matmul.py" "$qp" "$qm" fc || { echo "FAIL: the MatMul model"; exit 1; }

# and with Unsqueeze -> Squeeze -> Reshape -> Reshape after the Flatten (each in its QDQ pair): the same layers
qs=$WORK/pool_shapes_q.onnx
/usr/bin/python3 "$SRC/tests/mcu/make_qas_pool_model.py" "$WORK/pool_shapes.onnx" shapes &&
  "$SY" quantize "$WORK/pool_shapes.onnx" --calib "$WORK/calib" -o "$qs" > "$WORK/quantize_shapes.log" 2>&1 ||
  { cat "$WORK/quantize_shapes.log"; echo "FAIL: the MaxPool model with shapes"; exit 1; }

# and with a Transpose (perm 0,2,1,3) of the pooled codes before the Flatten, in its QDQ pair
qt=$WORK/pool_t_q.onnx
/usr/bin/python3 "$SRC/tests/mcu/make_qas_pool_model.py" "$WORK/pool_t.onnx" transpose &&
  "$SY" quantize "$WORK/pool_t.onnx" --calib "$WORK/calib" -o "$qt" > "$WORK/quantize_t.log" 2>&1 ||
  { cat "$WORK/quantize_t.log"; echo "FAIL: the Transpose model"; exit 1; }

# name model --trainable RAM-peak lower-bound
for case in "pool $qp last:2 24652 24650" "pool-bias $qp bias:2 5708 5706" "pool-matmul $qm last:2 24532 24530" \
            "pool-shapes $qs last:2 24652 24650" "pool-transpose $qt last:2 25436 25434"; do
  set -- $case
  name=$1 model=$2 cfg=$3 peak=$4 lower=$5
  pkg=$WORK/pkg_$name
  "$SY" codegen --train "$model" --target ws63 --data "$data" -o "$pkg" --trainable $cfg --steps 200 --lr 0.01 \
      --sram-budget 256K > "$WORK/codegen_$name.log" 2>&1 ||
    { cat "$WORK/codegen_$name.log"; fail "$name: codegen --train"; continue; }
  grep "RAM plan" "$WORK/codegen_$name.log"
  grep -q "RAM plan of a step: peak $peak bytes = .*; lower bound $lower bytes;" "$WORK/codegen_$name.log" ||
    fail "$name: expected a RAM peak of $peak bytes and a lower bound of $lower bytes"
  grep -q "qas_maxpool_forward(&pp0, 1, r0, pl0)" "$pkg/src/train.c" &&
    grep -q "qas_maxpool_backward(&pp0, 1, r0, dpl0, dy0)" "$pkg/src/train.c" ||
    fail "$name: the package does not pool the Conv's codes (forward and backward)"
  if [ "$name" = pool-transpose ]; then
    grep -q "qas_perm_s8(1, td1, tp1, pl0, xt1)" "$pkg/src/train.c" &&
      grep -q "qas_unperm_f32(1, td1, tp1, dxt1, dpl0)" "$pkg/src/train.c" &&
      grep -q "tp1\[4\] = {0, 2, 1, 3}" "$pkg/src/train.c" ||
      fail "$name: the package does not permute the pooled codes into the Gemm and its gradient back"
  fi
  if [ "$name" != pool-bias ]; then
    /usr/bin/python3 - "$pkg" <<'PY' || fail "$name: the Conv's weight codes did not move in 200 steps"
import re, sys
d = sys.argv[1]
src = open(d + "/src/train.c").read()
start = [int(v) & 0xFF for v in re.search(r"int8_t w0\[36\] = \{([^}]*)\}", src).group(1).split(",") if v.strip()]
end = [int(v, 16) for v in re.search(r"^w0 36:(.*)$", open(d + "/expected_output.txt").read(), re.M).group(1).split()]
moved = sum(a != b for a, b in zip(start, end))
print("%s: %d of the Conv's 36 weight codes moved in 200 steps (the gradient through the MaxPool)" % (d.split("pkg_")[-1], moved))
sys.exit(0 if len(start) == 36 and len(end) == 36 and moved else 1)
PY
  fi
  mcu_pkg_run "$MODE" "$pkg" "$pkg/out.txt" 600 sy_train_main || { fail "$name: build"; continue; }
  [ "$mcu_run_rc" = 0 ] || { cat "$pkg/out.txt"; fail "$name: the package failed"; continue; }
  if grep -v '^steps ' "$pkg/out.txt" | cmp -s - "$pkg/expected_output.txt"; then
    echo "ok   $name: 200 QAS-INT8 steps on $MODE give the host trainer's state bit for bit ($(grep '^steps ' "$pkg/out.txt"))"
  else
    fail "$name: the trained state differs from the host trainer's"
    grep -v '^steps ' "$pkg/out.txt" | diff - "$pkg/expected_output.txt" | cut -c1-200 | head -8
  fi
done
if [ $fails -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "all passed"
