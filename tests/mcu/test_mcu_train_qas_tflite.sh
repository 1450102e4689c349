#!/usr/bin/env bash
# QAS-INT8 training packages of an int8 TFLite CONV_2D model (seed 001 §4,
# ws63): tests/train/qas_tflite_models.py's conv.tflite (x [6, 6, 2] NHWC ->
# QUANTIZE -> CONV_2D 3x3 SAME, 3 filters, RELU -> CONV_2D 3x3 VALID, 2
# filters -> RESHAPE [32] -> FULLY_CONNECTED 32->4 -> SOFTMAX), whose Convs
# the translation writes between NHWC layout Transposes. The host session
# trains them in NCHW, permuting the first Conv's input codes NHWC -> NCHW
# and flattening the last Conv's codes in NHWC order for the Gemm; the
# package permutes the samples (or the front's output as it copies it) and
# holds the Gemm's weight columns in the Conv's NCHW order instead, printing
# them back in the host's. `switchyard codegen --train` packages of it, built
# for rv32imfc and run under qemu-system-riscv32 (MODE qemu) or natively
# (MODE host), must print after N steps the trained int8 codes, int32 biases
# and float master copies the host session holds after the same N steps, bit
# for bit, in three configurations:
#   last:3  the two Convs and the Gemm (the front: the input's QuantizeLinear,
#           run on the host: the samples are its NHWC codes, stored NCHW);
#   last:2  conv2 and the Gemm, the frozen front (QUANTIZE, conv1 and its
#           layout Transposes) on the device as an inference package in
#           front/, its NHWC output permuted as it is copied for conv2;
#   bias:3  the three layers' biases only (the weights frozen in flash).
# The RAM peak and lower bound of each plan are asserted, and the Convs'
# weight codes must have moved. Then the int8 fronts of elem.tflite
# (broadcasting ADD, SUB, MUL, with int8 constants on either side) and
# padmean.tflite (PAD, PADV2, MEAN) and shape.tflite (TRANSPOSE,
# STRIDED_SLICE with new axes, a shrink and a negative stride, SQUEEZE,
# MAXIMUM, MINIMUM, ADD with a fused RELU_N1_TO_1) run on the device before
# their trained FULLY_CONNECTED (last:1), bit for bit with the host session
# likewise.
#
#   test_mcu_train_qas_tflite.sh SWITCHYARD SOURCE_DIR WORK_DIR host|qemu
set -u
SY=$1 SRC=$2 WORK=$3 MODE=$4
. "$(dirname "$0")/mcu_common.sh"
/usr/bin/python3 -c 'import numpy, onnx' 2>/dev/null ||
  { echo "SKIP: /usr/bin/python3 has no numpy or onnx (python3-numpy, python3-onnx)"; exit 77; }
mcu_prepare "$MODE" "$WORK"
mkdir -p "$WORK/models" && /usr/bin/python3 "$SRC/tests/train/qas_tflite_models.py" "$WORK/models" > "$WORK/models.log" 2>&1 ||
  { cat "$WORK/models.log"; echo "FAIL: the test models"; exit 1; }
# more samples than the models' data_conv (12): 16 batches of 3 NHWC [6, 6, 2]
# images in [-1, 1) and their labels, .npy files as `switchyard train` reads
data=$WORK/data
/usr/bin/python3 - "$data" <<'PY' || { echo "FAIL: the samples"; exit 1; }
import os, sys
import numpy as np
rng = np.random.default_rng(7)
d = sys.argv[1] + "/train"
os.makedirs(d)
for k in range(16):
    np.save("%s/input_%d.npy" % (d, k), rng.uniform(-1, 1, size=(3, 6, 6, 2)).astype(np.float32))
    np.save("%s/label_%d.npy" % (d, k), rng.integers(0, 4, size=3).astype(np.int64))
PY
steps=48

# model --trainable where-the-front-runs RAM-peak lower-bound
for case in "conv last:3 host 3264 3264" "conv last:2 device 3358 3354" "conv bias:3 host 816 816" \
            "elem last:1 device 14832 14828" "padmean last:1 device 15816 15812" "shape last:1 device 5640 5640"; do
  set -- $case
  model=$1 cfg=$2 front=$3 peak=$4 lower=$5
  m=$WORK/models/$model.tflite
  name=${model}_${cfg/:/}
  pkg=$WORK/pkg_$name log=$WORK/codegen_$name.log
  "$SY" codegen --train --mode qas-int8 "$m" --target ws63 --data "$data" -o "$pkg" --trainable "$cfg" \
      --steps $steps --lr 0.005 --sram-budget 256K > "$log" 2>&1 || { cat "$log"; fail "$cfg: codegen --train"; continue; }
  grep "RAM plan" "$log"
  grep -q "RAM plan of a step: peak $peak bytes = .*; lower bound $lower bytes;" "$log" ||
    fail "$cfg: expected a RAM peak of $peak bytes and a lower bound of $lower bytes"
  if [ "$front" = device ] && [ "$model" != conv ]; then
    grep -q "the front's inputs; it runs on the device" "$log" && grep -q "front_model_predict" "$pkg/src/main.c" ||
      fail "$model $cfg: the front does not run on the device"
  elif [ "$front" = device ]; then
    grep -q "the front's inputs; it runs on the device" "$log" && grep -q "front_model_predict" "$pkg/src/main.c" &&
      grep -q "NHWC \[6, 6, 3\] codes to the NCHW the Conv reads" "$pkg/src/main.c" ||
      fail "$cfg: the front does not run on the device, its NHWC output not permuted for conv2"
  else
    grep -q "the frozen front is the input's QuantizeLinear alone" "$log" &&
      grep -q "each sample NCHW \[2, 6, 6\]: the front's NHWC codes permuted" "$pkg/src/samples.c" ||
      fail "$cfg: expected the image's codes as samples, stored NCHW"
  fi
  if [ "$model" = conv ] && [ "$cfg" != bias:3 ]; then
    grep -q "its columns in the (c, h, w) order of the NHWC Conv's NCHW output" "$pkg/src/train.c" ||
      fail "$cfg: the Gemm's weight columns are not held in the Conv's NCHW order"
    # the first Conv trained: its weight codes after the steps (expected_output.txt,
    # the host's) are not the package's starting ones (src/train.c)
    /usr/bin/python3 - "$pkg" <<'PY' || fail "$cfg: the first Conv's weight codes did not move"
import re, sys
d = sys.argv[1]
src = open(d + "/src/train.c").read()
start = [int(v) & 0xFF for v in re.search(r"int8_t w0\[(\d+)\] = \{([^}]*)\}", src).group(2).split(",") if v.strip()]
end = [int(v, 16) for v in re.search(r"^w0 \d+:(.*)$", open(d + "/expected_output.txt").read(), re.M).group(1).split()]
moved = sum(a != b for a, b in zip(start, end))
print("%d of the first Conv's %d weight codes moved" % (moved, len(start)))
sys.exit(0 if len(start) == len(end) and moved else 1)
PY
  fi
  mcu_pkg_run "$MODE" "$pkg" "$pkg/out.txt" 600 sy_train_main || { fail "$cfg: build"; continue; }
  [ "$mcu_run_rc" = 0 ] || { cat "$pkg/out.txt"; fail "$cfg: the package failed"; continue; }
  if grep -v '^steps ' "$pkg/out.txt" | cmp -s - "$pkg/expected_output.txt"; then
    echo "ok   $model.tflite $cfg: $steps QAS-INT8 steps on $MODE give the host session's state bit for bit ($(grep '^steps ' "$pkg/out.txt"))"
  else
    fail "$model.tflite $cfg: the trained state differs from the host session's"
    grep -v '^steps ' "$pkg/out.txt" | diff - "$pkg/expected_output.txt" | cut -c1-200 | head -8
  fi
done
if [ $fails -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
