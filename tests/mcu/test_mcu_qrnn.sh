#!/usr/bin/env bash
# The integer ONNX RNN on the MCU: a float bidirectional RNN (written by
# test_qrnn --write-model) quantized by `switchyard quantize` folds into
# switchyard.quant QRNN; `switchyard codegen` writes a package with
# plugin_sdk/kernels/qk_rnn.c. For two calibration inputs: the host
# run of the riscv_mcu provider gives the bytes of the cpu_ref (ops_quant)
# run for Y and Y_h, and the package built (MODE host: host compiler; MODE
# qemu: riscv64-unknown-elf-gcc + picolibc, qemu-system-riscv32) prints the
# same bytes.
#
#   test_mcu_qrnn.sh SWITCHYARD TEST_QRNN WORK_DIR host|qemu
#
# Exit 77 (skipped) in qemu mode without the cross toolchain, picolibc or QEMU.
set -u
SY=$1 GEN=$2 WORK=$3 MODE=$4
. "$(dirname "$0")/mcu_common.sh"
mcu_prepare "$MODE" "$WORK"
"$GEN" --write-model "$WORK" > "$WORK/gen.log" 2>&1 || { cat "$WORK/gen.log"; echo "FAIL: --write-model"; exit 1; }
q=$WORK/rnn_int8.onnx
"$SY" quantize "$WORK/rnn.onnx" --calib "$WORK/calib" -o "$q" > "$WORK/quantize.log" 2>&1 || {
  cat "$WORK/quantize.log"
  echo "FAIL: quantize"
  exit 1
}
# the bytes of output K (Y, Y_h) of a .pb as main prints them
pb_hex() { tail -c "$2" "$1" 2> /dev/null | od -An -tx1 -v | tr -s ' \n' ' ' | sed 's/ $//'; }
for i in 2 5; do
  in=$WORK/calib/set_$i/input_0.pb pkg=$WORK/pkg$i
  if ! "$SY" codegen "$q" --target ws63 -o "$pkg" --input "X=$in" > "$WORK/codegen$i.log" 2>&1; then
    fail "codegen (set_$i)"; cat "$WORK/codegen$i.log"; continue
  fi
  grep -q 'qk_rnn_run' "$pkg/src/model.c" || fail "set_$i: no qk_rnn_run in the package"
  # the cpu_ref run (ops_quant QRNN): the same float bytes for Y and Y_h
  "$SY" run "$q" --input-dir "$WORK/calib/set_$i" --output-dir "$WORK/cpu$i" > /dev/null 2>&1 ||
    fail "set_$i: the cpu_ref run failed"
  for o in 0 1; do
    exp=$(grep "^out$o" "$pkg/expected_output.txt")
    nb=$(echo "$exp" | sed -n "s/^out$o \([0-9]*\):.*/\1/p")
    cpu=$(pb_hex "$WORK/cpu$i/output_$o.pb" "$nb")
    [ -n "$nb" ] && [ "out$o $nb:$cpu" = "$exp" ] || fail "set_$i out$o: riscv_mcu and cpu_ref differ: '$exp' vs 'out$o $nb:$cpu'"
  done
  mcu_pkg_run "$MODE" "$pkg" "$WORK/out$i.txt" || { fail "build ($MODE)"; continue; }
  if ! grep '^out' "$WORK/out$i.txt" | cmp -s - "$pkg/expected_output.txt"; then
    fail "set_$i: the $MODE run differs from the host run"; cat "$WORK/out$i.txt"
  else
    echo "ok   int8 RNN set_$i ($MODE): Y and Y_h bit-exact with riscv_mcu and cpu_ref; $(grep instret "$WORK/out$i.txt")"
  fi
done
[ "$fails" -eq 0 ] || exit 1
