#!/usr/bin/env bash
# On-device training (seed 001 §4, ws63): `switchyard codegen --train` writes
# a QAS-INT8 training package of graphs/fashion_cnn.onnx quantized by
# `switchyard quantize`; built for rv32imfc and run under qemu-system-riscv32
# (MODE qemu) or natively (MODE host), its 200 steps on Fashion-MNIST images
# leave the trained int8 codes, int32 biases and float master copies the host
# trainer holds after the same 200 steps, bit for bit. Two configurations:
# the last layer (weights and biases) and the sparse update of the last two
# layers' biases (the 401,408 frozen weights of fc1 stay in flash). The
# memory plan is printed; a plan over a 256 KB budget (the last two layers'
# weights) is refused, and hi3066 with the seed's sentence.
#
#   test_mcu_train.sh SWITCHYARD SOURCE_DIR WORK_DIR host|qemu
set -u
SY=$1 SRC=$2 WORK=$3 MODE=$4
. "$(dirname "$0")/mcu_common.sh"
data=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
[ -e "$data/train-images-idx3-ubyte.gz" ] || [ -e "$data/train-images-idx3-ubyte" ] ||
  { echo "SKIP: Fashion-MNIST is absent from $data (Debian package dataset-fashion-mnist)"; exit 77; }
mcu_prepare "$MODE" "$WORK"
/usr/bin/python3 "$SRC/tests/train/fashion_calib.py" "$data" "$WORK/calib" 16 || { echo "FAIL: calibration images"; exit 1; }
q=$WORK/fashion_q.onnx
"$SY" quantize "$SRC/graphs/fashion_cnn.onnx" --calib "$WORK/calib" -o "$q" > "$WORK/quantize.log" 2>&1 ||
  { cat "$WORK/quantize.log"; echo "FAIL: quantize"; exit 1; }

for cfg in last:1 bias:2; do
  pkg=$WORK/pkg_${cfg%%:*}
  "$SY" codegen --train "$q" --target ws63 --data "$data" -o "$pkg" --trainable $cfg --steps 200 --lr 0.01 \
      --sram-budget 256K > "$WORK/codegen_${cfg%%:*}.log" 2>&1 ||
    { cat "$WORK/codegen_${cfg%%:*}.log"; fail "$cfg: codegen --train"; continue; }
  grep "RAM plan" "$WORK/codegen_${cfg%%:*}.log"
  if [ "$MODE" = qemu ]; then
    cmake -S "$pkg" -B "$pkg/build" -DCMAKE_TOOLCHAIN_FILE="$pkg/toolchain-riscv32.cmake" > "$pkg/build.log" 2>&1 &&
      cmake --build "$pkg/build" >> "$pkg/build.log" 2>&1 || { cat "$pkg/build.log"; fail "$cfg: build"; continue; }
    (cd "$pkg" && timeout 600 qemu-system-riscv32 -machine virt -bios none -nographic \
      -semihosting-config enable=on,target=native -icount shift=0 -kernel "$pkg/build/sy_train_main.elf") > "$pkg/out.txt" 2>&1
  else
    cmake -S "$pkg" -B "$pkg/build" -DCMAKE_C_FLAGS="-Werror" > "$pkg/build.log" 2>&1 &&
      cmake --build "$pkg/build" >> "$pkg/build.log" 2>&1 || { cat "$pkg/build.log"; fail "$cfg: build"; continue; }
    (cd "$pkg" && "$pkg/build/sy_train_main") > "$pkg/out.txt" 2>&1
  fi || { cat "$pkg/out.txt"; fail "$cfg: the package failed"; continue; }
  if grep -v '^steps ' "$pkg/out.txt" | cmp -s - "$pkg/expected_output.txt"; then
    echo "ok   $cfg: 200 QAS-INT8 steps on $MODE give the host trainer's state bit for bit ($(grep '^steps ' "$pkg/out.txt"))"
  else
    fail "$cfg: the trained state differs from the host trainer's"
    grep -v '^steps ' "$pkg/out.txt" | diff - "$pkg/expected_output.txt" | cut -c1-200 | head -8
  fi
done

# the last two layers' weights do not fit 256 KB: refused with the plan
out=$("$SY" codegen --train "$q" --target ws63 --data "$data" -o "$WORK/big" --trainable last:2 --steps 2 \
      --sram-budget 256K 2>&1) && fail "a plan over 256 KB was accepted"
echo "$out" | grep -q "over the budget of 262144 bytes on ws63" || fail "unclear refusal: $out"
out=$("$SY" codegen --train "$q" --target hi3066 --data "$data" -o "$WORK/h" --steps 2 2>&1) && fail "hi3066 accepted"
echo "$out" | grep -q '当前端侧训练仅在ws63支持' || fail "hi3066 refused without the seed's sentence: $out"
if [ $fails -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
