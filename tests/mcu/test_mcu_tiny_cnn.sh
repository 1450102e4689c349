#!/usr/bin/env bash
# graphs/tiny_cnn.onnx quantized by `switchyard quantize` (per tensor and per
# channel) runs on the ws63 configuration with its Conv, MaxPool and Gemm
# (transB = 1, W stored [N, K]) on riscv_mcu, and gives the bytes of the
# cpu_ref (ops_quant) run. The provider once read the Gemm as [K, N] and
# refused it ("QMatMul: per-channel parameters of 64 channels expected").
#
#   test_mcu_tiny_cnn.sh SWITCHYARD SOURCE_DIR WORK_DIR
set -u
SY=$1 SRC=$2 WORK=$3
. "$(dirname "$0")/mcu_common.sh"
mcu_prepare host "$WORK"
m=$SRC/graphs/tiny_cnn.onnx data=$SRC/graphs/tiny_cnn/test_data_set_0
for pc in "" --per-channel; do
  q=$WORK/tiny_cnn${pc:+_pc}.onnx tag=${pc:---per-tensor}
  "$SY" quantize "$m" --calib "$data" $pc -o "$q" > "$WORK/quantize.log" 2>&1 ||
    { cat "$WORK/quantize.log"; fail "quantize $tag"; continue; }
  "$SY" explain "$q" --config "$SRC/conf/riscv_mcu_ws63.ini" > "$WORK/explain.log" 2>&1 ||
    { cat "$WORK/explain.log"; fail "explain $tag"; continue; }
  for op in QConv QMaxPool QMatMul; do
    grep -Eq " $op +riscv_mcu +taken" "$WORK/explain.log" || { cat "$WORK/explain.log"; fail "$tag: $op is not on riscv_mcu"; }
  done
  "$SY" run "$q" --config "$SRC/conf/riscv_mcu_ws63.ini" --input-dir "$data" --output-dir "$WORK/mcu" > "$WORK/run_mcu.log" 2>&1 ||
    { cat "$WORK/run_mcu.log"; fail "$tag: the ws63 run failed"; continue; }
  "$SY" run "$q" --config "$CPU_REF_INI" --input-dir "$data" --output-dir "$WORK/cpu" > "$WORK/run_cpu.log" 2>&1 ||
    { cat "$WORK/run_cpu.log"; fail "$tag: the cpu_ref run failed"; continue; }
  if cmp -s "$WORK/mcu/output_0.pb" "$WORK/cpu/output_0.pb"; then
    echo "ok   tiny_cnn int8 $tag: Conv, MaxPool, Gemm(transB) on riscv_mcu, bit-exact with cpu_ref"
  else
    fail "$tag: riscv_mcu and cpu_ref outputs differ"
  fi
done
if [ $fails -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
