#!/usr/bin/env bash
# MLPerf Tiny's benchmark models under the default rules (rules = seed, no
# --rules): the int8 ResNet-8 of the image-classification benchmark, written
# by gen_resnet8 (its architecture, fixed pseudo-random weights; always
# present), and the keyword-spotting DS-CNN and anomaly-detection models of
# the shared folder (skipped one by one when absent). Each is generated,
# built (MODE host: host compiler; MODE qemu: riscv64-unknown-elf-gcc +
# picolibc, qemu-system-riscv32 -icount shift=0) and run on codegen's
# deterministic input, its outputs bit-exact with the host run of the
# riscv_mcu provider (expected_output.txt); ResNet-8's riscv_mcu run must
# also give the bytes of the cpu_ref run. The fourth model, visual wake
# words, is TFLite Micro's person_detect here (MobileNetV1 0.25, the
# architecture of MLPerf Tiny's VWW model): its fused RELU6 runs as the
# conv row (NONE) followed by Table A #56 Relu6 and its first depthwise
# layer (one input channel, multiplier 8) as #1 Conv2D; its riscv_mcu run
# must give the bytes of the cpu_ref run too.
#
#   test_mcu_mlperf_tiny.sh SWITCHYARD GEN_RESNET8 SHARED_DIR WORK_DIR host|qemu
#
# Exit 77 (skipped) in qemu mode without the cross toolchain, picolibc or QEMU.
set -u
SY=$1 GEN=$2 SHARED=$3 WORK=$4 MODE=$5
. "$(dirname "$0")/mcu_common.sh"
mcu_prepare "$MODE" "$WORK"

# check NAME MODEL [CODEGEN ARGS]: codegen under the default rules (--target
# ws63 unless other arguments are given), build, run, compare
check() {
  local name=$1 model=$2 pkg=$WORK/$1
  shift 2
  [ $# -gt 0 ] || set -- --target ws63
  if ! "$SY" codegen "$model" "$@" -o "$pkg" > "$WORK/$name.codegen.log" 2>&1; then
    fail "$name: codegen under the default rules"; cat "$WORK/$name.codegen.log"; return 1
  fi
  mcu_pkg_run "$MODE" "$pkg" "$WORK/$name.out" || { fail "$name: build ($MODE)"; return 1; }
  if ! grep '^out' "$WORK/$name.out" | cmp -s - "$pkg/expected_output.txt"; then
    fail "$name: the $MODE run differs from the host run"; cat "$WORK/$name.out"; return 1
  fi
  local macs
  macs=$(awk '/#define SY_MODEL_MACS/ {sub(/u$/, "", $3); print $3}' "$pkg/include/sy_model.h")
  echo "ok   $name ($MODE, default rules): bit-exact; $macs MACs; $(grep instret "$WORK/$name.out")"
}

"$GEN" "$WORK" > "$WORK/gen.log" 2>&1 || { cat "$WORK/gen.log"; echo "FAIL: gen_resnet8"; exit 1; }
if check resnet8 "$WORK/resnet8.tflite"; then
  # the host run of riscv_mcu (expected_output.txt, on codegen's deterministic input) against cpu_ref's
  # on the same input (the package's test_input.c holds it; codegen writes it as input0.bin too)
  exp=$(grep '^out0' "$WORK/resnet8/expected_output.txt")
  "$SY" run "$WORK/resnet8.tflite" --output-dir "$WORK/cpu" > "$WORK/run.log" 2>&1 ||
    { cat "$WORK/run.log"; fail "resnet8: the cpu_ref run"; }
  cpu=$(tail -c 10 "$WORK/cpu/output_0.pb" | od -An -tx1 -v | tr -s ' \n' ' ' | sed 's/ $//')
  if [ "out0 10:$cpu" = "$exp" ]; then
    echo "ok   resnet8: riscv_mcu (the package's reference) and cpu_ref give the same 10 bytes"
  else
    fail "resnet8: riscv_mcu and cpu_ref differ: '$exp' vs 'out0 10:$cpu'"
  fi
fi
# the same ResNet-8 under the single-rounding form (the parameter structs
# carry it: rq_single and the once-rounded residual ADDs that real TFLite
# computes, tests/tflite/tflite_binary_real.mjs): the package against the
# host run of that form
{ cat "$(dirname "$0")/../../conf/riscv_mcu_ws63.ini"; echo "requant = single_rounding"; } > "$WORK/single.ini"
if check resnet8_single "$WORK/resnet8.tflite" --config "$WORK/single.ini"; then
  exp=$(grep '^out0' "$WORK/resnet8_single/expected_output.txt")
  "$SY" run "$WORK/resnet8.tflite" --requant single_rounding --output-dir "$WORK/cpu_single" > "$WORK/run.log" 2>&1 ||
    { cat "$WORK/run.log"; fail "resnet8_single: the cpu_ref run"; }
  cpu=$(tail -c 10 "$WORK/cpu_single/output_0.pb" | od -An -tx1 -v | tr -s ' \n' ' ' | sed 's/ $//')
  if [ "out0 10:$cpu" = "$exp" ]; then
    echo "ok   resnet8_single: riscv_mcu and cpu_ref give the same 10 bytes under single_rounding"
  else
    fail "resnet8_single: riscv_mcu and cpu_ref differ under single_rounding: '$exp' vs 'out0 10:$cpu'"
  fi
  if cmp -s "$WORK/resnet8/expected_output.txt" "$WORK/resnet8_single/expected_output.txt"; then
    fail "resnet8_single: the single_rounding package gives the gemmlowp outputs (the form did not reach it)"
  fi
fi
M=$SHARED/models/tflite
if [ -f "$M/person_detect/model.tflite" ]; then
  if check person_detect "$M/person_detect/model.tflite"; then
    exp=$(grep '^out0' "$WORK/person_detect/expected_output.txt")
    "$SY" run "$M/person_detect/model.tflite" --output-dir "$WORK/cpu_pd" > "$WORK/run.log" 2>&1 || { cat "$WORK/run.log"; fail "person_detect: the cpu_ref run"; }
    cpu=$(tail -c 2 "$WORK/cpu_pd/output_0.pb" | od -An -tx1 -v | tr -s ' \n' ' ' | sed 's/ $//')
    if [ "out0 2:$cpu" = "$exp" ]; then
      echo "ok   person_detect: riscv_mcu (the package's reference) and cpu_ref give the same 2 bytes"
    else
      fail "person_detect: riscv_mcu and cpu_ref differ: '$exp' vs 'out0 2:$cpu'"
    fi
  fi
else
  echo "skip person_detect: $M/person_detect/model.tflite is absent"
fi
for name in mlperf_tiny_kws_dscnn_int8 mlperf_tiny_ad_toycar_int8; do
  if [ -f "$M/$name/model.tflite" ]; then
    check "$name" "$M/$name/model.tflite"
  else
    echo "skip $name: $M/$name/model.tflite is absent"
  fi
done
if [ $fails -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "MLPerf Tiny models generate under the default rules ($MODE)"
