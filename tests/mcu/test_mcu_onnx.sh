#!/usr/bin/env bash
# The ONNX path to the MCU: mnist-8 quantized by `switchyard quantize` (its
# test_data_set_* as calibration) folds into switchyard.quant QConv,
# QMaxPool, QMatMul, QAdd between QuantizeLinear and DequantizeLinear;
# `switchyard codegen` writes a package with the portable integer kernels
# (plugin_sdk/kernels/qk.c). For test_data_set_0..2: the host run of
# the riscv_mcu provider is bit-exact with the cpu_ref (ops_quant) run and
# has argmax 2, 0, 9; the package built (MODE host: host compiler; MODE qemu:
# riscv64-unknown-elf-gcc + picolibc, qemu-system-riscv32) prints the same
# bytes for that input.
#
#   test_mcu_onnx.sh SWITCHYARD SHARED_DIR WORK_DIR host|qemu
#
# Exit 77 (skipped) without mnist-8, or in qemu mode without the cross
# toolchain, picolibc or QEMU.
set -u
SY=$1 SHARED=$2 WORK=$3 MODE=$4
m=$SHARED/models/onnx/mnist-8
if [ ! -f "$m/model.onnx" ]; then
  echo "SKIP: $m/model.onnx is absent"
  exit 77
fi
. "$(dirname "$0")/mcu_common.sh"
mcu_prepare "$MODE" "$WORK"
q=$WORK/mnist8_int8.onnx
"$SY" quantize "$m/model.onnx" --calib "$m" -o "$q" > "$WORK/quantize.log" 2>&1 || {
  cat "$WORK/quantize.log"
  echo "FAIL: quantize"
  exit 1
}
i=0
for want in 2 0 9; do
  in=$m/test_data_set_$i/input_0.pb pkg=$WORK/pkg$i
  if ! "$SY" codegen "$q" --target ws63 -o "$pkg" --input "Input3=$in" > "$WORK/codegen$i.log" 2>&1; then
    fail "codegen (test_data_set_$i)"; cat "$WORK/codegen$i.log"; i=$((i + 1)); continue
  fi
  top=$(sed -n 's/.*top-5: \[\([0-9]*\)\].*/\1/p' "$WORK/codegen$i.log" | head -1)
  [ "$top" = "$want" ] || fail "test_data_set_$i: the riscv_mcu host run has argmax '$top', expected $want"
  # the cpu_ref run (ops_quant): the same float bytes
  "$SY" run "$q" --input-dir "$m/test_data_set_$i" --output-dir "$WORK/cpu$i" > /dev/null 2>&1 ||
    fail "test_data_set_$i: the cpu_ref run failed"
  exp=$(grep '^out0' "$pkg/expected_output.txt")
  nb=$(echo "$exp" | sed -n 's/^out0 \([0-9]*\):.*/\1/p')
  cpu=$(tail -c "$nb" "$WORK/cpu$i/output_0.pb" 2> /dev/null | od -An -tx1 -v | tr -s ' \n' ' ' | sed 's/ $//')
  [ "out0 $nb:$cpu" = "$exp" ] || fail "test_data_set_$i: riscv_mcu and cpu_ref differ: '$exp' vs 'out0 $nb:$cpu'"
  grep -q 'QConv\|qk_conv_run' "$pkg/src/model.c" || fail "no integer convolution in the package"
  mcu_pkg_run "$MODE" "$pkg" "$WORK/out$i.txt" || { fail "build ($MODE)"; i=$((i + 1)); continue; }
  if ! grep '^out' "$WORK/out$i.txt" | cmp -s - "$pkg/expected_output.txt"; then
    fail "test_data_set_$i: the $MODE run differs from the host run"; cat "$WORK/out$i.txt"
  else
    echo "ok   mnist-8 int8 test_data_set_$i ($MODE): argmax $top, bit-exact with riscv_mcu and cpu_ref; $(grep instret "$WORK/out$i.txt")"
  fi
  i=$((i + 1))
done
if [ $fails -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "all ONNX MCU checks passed ($MODE)"
