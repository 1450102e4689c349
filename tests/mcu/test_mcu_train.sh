#!/usr/bin/env bash
# On-device training (seed 001 §4, ws63): `switchyard codegen --train` writes
# a QAS-INT8 training package of fashion_cnn trained by train.cli_accuracy
# (FP32_WORK/a/model.onnx, 2 epochs, ~89%) quantized by `switchyard
# quantize`; built for rv32imfc and run under qemu-system-riscv32
# (MODE qemu) or natively (MODE host), its 200 steps on Fashion-MNIST images
# leave the trained int8 codes, int32 biases and float master copies the host
# trainer holds after the same 200 steps, bit for bit. Two configurations:
# the last layer (weights and biases) and the sparse update of the last two
# layers' biases (the 401,408 frozen weights of fc1 stay in flash). A third
# package trains a Conv: tests/mcu/make_qas_conv_model.py's Conv 3x3 (stride
# 2, pads 1, 4 filters) -> Relu -> Flatten -> Gemm(784 -> 10), quantized the
# same way, both layers (--trainable last:2), and its Conv weights must have
# moved from their starting codes; a fourth, its two layers' biases; a
# fifth, its Gemm only (--trainable last:1), whose frozen front (the Conv,
# the Relu, the Flatten) runs on the device as an inference package in
# front/ before each step, on samples that are the image's int8 codes (the
# front's input QuantizeLinear runs on the host). The other conv packages'
# front is that QuantizeLinear alone (their samples are its codes);
# fashion_cnn's front (a depthwise QConv of group 8; its QConcat runs) is declined by
# riscv_mcu under the seed's rules, so those packages keep the host's codes
# (--front auto), and --front device is refused naming the nodes. The memory plan is printed and its peak and lower bound checked; a plan over a 256 KB budget (the last
# two layers' weights) is refused, a 5x5 Conv with the seed's QAS Conv row,
# and hi3066 with the seed's sentence.
#
# The printed test accuracy of the last:1 package's state (its trained
# codes written into the quantized model) is a figure, not asserted.
#
#   test_mcu_train.sh SWITCHYARD SOURCE_DIR WORK_DIR host|qemu FP32_WORK|untrained
# FP32_WORK: train.cli_accuracy's work folder (the CTest fixture fashion_fp32);
# without its model the test is skipped (exit 77). `untrained` (sanitizer
# builds, which do not register train.cli_accuracy) fine-tunes the untrained
# graphs/fashion_cnn.onnx instead, and says so.
set -u
SY=$1 SRC=$2 WORK=$3 MODE=$4 FP32_WORK=${5:-}
. "$(dirname "$0")/mcu_common.sh"
mcu_need_fashion_mnist
if [ "$FP32_WORK" = untrained ]; then
  f32=$SRC/graphs/fashion_cnn.onnx
  echo "NOTE: fine-tuning the UNTRAINED graphs/fashion_cnn.onnx (train.cli_accuracy, whose trained model this test takes, is not registered in this build)"
else
  f32=$FP32_WORK/a/model.onnx
  [ -n "$FP32_WORK" ] && [ -s "$f32" ] && [ -s "$FP32_WORK/a/test_accuracy.txt" ] ||
    { echo "SKIP: no trained fashion_cnn in '$FP32_WORK/a' (run train.cli_accuracy first: the CTest fixture fashion_fp32)"; exit 77; }
  echo "the trained fashion_cnn: $f32 (float test accuracy $(cat "$FP32_WORK/a/test_accuracy.txt")%)"
fi
mcu_prepare "$MODE" "$WORK"
/usr/bin/python3 "$SRC/tests/train/fashion_calib.py" "$data" "$WORK/calib" 16 || { echo "FAIL: calibration images"; exit 1; }
q=$WORK/fashion_q.onnx
"$SY" quantize "$f32" --calib "$WORK/calib" -o "$q" > "$WORK/quantize.log" 2>&1 ||
  { cat "$WORK/quantize.log"; echo "FAIL: quantize"; exit 1; }

qc=$WORK/conv_q.onnx
for k in 3 5; do
  /usr/bin/python3 "$SRC/tests/mcu/make_qas_conv_model.py" "$WORK/conv$k.onnx" $k &&
    "$SY" quantize "$WORK/conv$k.onnx" --calib "$WORK/calib" -o "$WORK/conv${k}_q.onnx" > "$WORK/quantize_conv$k.log" 2>&1 ||
    { cat "$WORK/quantize_conv$k.log"; echo "FAIL: the ${k}x$k Conv model"; exit 1; }
done
mv "$WORK/conv3_q.onnx" "$qc"

# name model --trainable where-the-front-runs RAM-peak lower-bound
# (the step's buffers and the front's workspace in one arena placed by the
# core's planner: the peak is the persistent state and that arena, the
# lower bound the state and the most bytes of the arena live at one time)
for case in "last:1 $q last:1 host 6188 6186" "bias:2 $q bias:2 host 1260 1258" "conv $qc last:2 host 78944 78942" \
            "conv-bias:2 $qc bias:2 host 4140 4138" "conv-front $qc last:1 device 74656 74650"; do
  set -- $case
  name=$1 model=$2 cfg=$3 front=$4 peak=$5 lower=$6
  pkg=$WORK/pkg_${name%%:*}
  "$SY" codegen --train "$model" --target ws63 --data "$data" -o "$pkg" --trainable $cfg --steps 200 --lr 0.01 \
      --sram-budget 256K > "$WORK/codegen_${name%%:*}.log" 2>&1 ||
    { cat "$WORK/codegen_${name%%:*}.log"; fail "$name: codegen --train"; continue; }
  grep "RAM plan" "$WORK/codegen_${name%%:*}.log"
  grep -q "RAM plan of a step: peak $peak bytes = .*; lower bound $lower bytes;" "$WORK/codegen_${name%%:*}.log" ||
    fail "$name: expected a RAM peak of $peak bytes and a lower bound of $lower bytes"
  if [ "$front" = device ]; then
    grep -q "the front's inputs; it runs on the device" "$WORK/codegen_${name%%:*}.log" && [ -f "$pkg/front/src/model.c" ] &&
      grep -q "front_model_predict" "$pkg/src/main.c" || fail "$name: the front does not run on the device"
    grep "^the front (front/)" "$WORK/codegen_${name%%:*}.log"
  else
    grep -q "the frozen front stays on the host\|the frozen front is the input's QuantizeLinear alone" \
        "$WORK/codegen_${name%%:*}.log" &&
      ! grep -q "front_model_predict" "$pkg/src/main.c" ||
      fail "$name: expected the host's front (riscv_mcu declines fashion_cnn's; the conv model's last:2 front is its input's QuantizeLinear)"
  fi
  if [ "$name" = conv ]; then
    # the Conv trained: its 36 weight codes after 200 steps (expected_output.txt,
    # the host's) are not the package's starting ones (src/train.c)
    /usr/bin/python3 - "$pkg" <<'PY' || fail "conv: the Conv's weight codes did not move in 200 steps"
import re, sys
d = sys.argv[1]
src = open(d + "/src/train.c").read()
start = [int(v) & 0xFF for v in re.search(r"int8_t w0\[36\] = \{([^}]*)\}", src).group(1).split(",") if v.strip()]
end = [int(v, 16) for v in re.search(r"^w0 36:(.*)$", open(d + "/expected_output.txt").read(), re.M).group(1).split()]
moved = sum(a != b for a, b in zip(start, end))
print("conv: %d of the Conv's 36 weight codes moved in 200 steps" % moved)
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
  if [ "$name" = last:1 ]; then
    # the figure: the test accuracy of the package's trained fc2 (its printed
    # codes in the quantized model) against the quantized model's
    /usr/bin/python3 "$SRC/tests/mcu/qas_state_model.py" "$q" "$pkg/out.txt" "$WORK/fashion_t.onnx" &&
      acc=$("$SY" train --mode qas-int8 "$q" --data "$data" -o "$WORK/ev_q" --limit 1 --batch 1 --lr 0 2>/dev/null) &&
      acc_t=$("$SY" train --mode qas-int8 "$WORK/fashion_t.onnx" --data "$data" -o "$WORK/ev_t" --limit 1 --batch 1 \
              --lr 0 2>/dev/null) || fail "$name: the package's state could not be evaluated"
    a_q=$(echo "$acc" | sed -n 's/^int8 model before fine-tuning: .*test accuracy \([0-9.]*%\).*/\1/p')
    a_t=$(echo "$acc_t" | sed -n 's/^int8 model before fine-tuning: .*test accuracy \([0-9.]*%\).*/\1/p')
    echo "$name: test accuracy (10,000 images) of the int8 model $a_q, after the package's 200 steps $a_t"
  fi
done

# the last two layers' weights do not fit 256 KB: refused with the plan
out=$("$SY" codegen --train "$q" --target ws63 --data "$data" -o "$WORK/big" --trainable last:2 --steps 2 \
      --sram-budget 256K 2>&1) && fail "a plan over 256 KB was accepted"
echo "$out" | grep -q "over the budget of 262144 bytes on ws63" || fail "unclear refusal: $out"
# a 5x5 Conv is outside the QAS-INT8 Conv row: declined, quoting it
out=$("$SY" codegen --train "$WORK/conv5_q.onnx" --target ws63 --data "$data" -o "$WORK/c5" --trainable last:2 \
      --steps 2 2>&1) && fail "a 5x5 Conv was accepted"
echo "$out" | grep -q "a 5x5 kernel; seed 001 §4: \"QAS INT8 Conv2D/Conv: .*3x3 convolution only" ||
  fail "5x5 Conv refused without the seed's row: $out"
# the front's workspace counts against the budget: the conv model's last:1
# (74,656 B, its 1,664 B sharing the step's arena) is refused at 74,000 B,
# and nothing is written
rm -rf "$WORK/tight"
out=$("$SY" codegen --train "$qc" --target ws63 --data "$data" -o "$WORK/tight" --trainable last:1 --steps 2 \
      --sram-budget 74000 2>&1) && fail "a plan over 74,000 B with the front's workspace was accepted"
echo "$out" | grep -q "needs 74656 bytes of RAM (.*one arena 3976 of .*the front's workspace 1664), over the budget of 74000 bytes" ||
  fail "the refusal does not count the front's workspace: $out"
[ ! -e "$WORK/tight" ] || fail "a refused plan wrote $WORK/tight"
# fashion_cnn's front on the device: declined, naming the nodes and the seed's rule
out=$("$SY" codegen --train "$q" --target ws63 --data "$data" -o "$WORK/fd" --trainable last:1 --steps 2 \
      --front device 2>&1) && fail "fashion_cnn's front was accepted on the device"
echo "$out" | grep -q "node 'dwconv' (QConv) could not be placed.*group must be 1, got 8 (.*seed 001 L5785, Conv group: \"规格约束：仅支持输入为1的情况\"" ||
  fail "the front on the device refused without its nodes and the seed's group row: $out"
out=$("$SY" codegen --train "$q" --target ws63 --data "$data" -o "$WORK/fb" --steps 2 --front flash 2>&1) &&
  fail "--front flash accepted"
echo "$out" | grep -q "expected auto, device or host, got 'flash'" || fail "unclear --front refusal: $out"
out=$("$SY" codegen --train "$q" --target hi3066 --data "$data" -o "$WORK/h" --steps 2 2>&1) && fail "hi3066 accepted"
echo "$out" | grep -q '当前端侧训练仅在ws63支持' || fail "hi3066 refused without the seed's sentence: $out"
if [ $fails -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
