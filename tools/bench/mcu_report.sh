#!/usr/bin/env bash
# The MCU report (docs/mcu.md): for each shared TFLite model, `switchyard
# codegen --target ws63`, a cross build for rv32imfc (riscv64-unknown-elf-gcc
# + picolibc, -O2) and one run under qemu-system-riscv32 -icount shift=0:
#   workspace  SY_MODEL_WORKSPACE_BYTES (the core's plan of mcu_sram)
#   sizes      from the LINKED image (kernels compiled with -ffunction-sections
#              -fdata-sections, linked with --gc-sections), attributed per object
#              by the linker map sy_model_main.map:
#     runtime code  .text + .rodata of the kernels plus .text of model.c (the
#                   generated run function and API): what the model calls
#     weights       .rodata of model.c (weights and const parameter structs)
#     flash         runtime code + weights (the model's share of .text + .rodata)
#     RAM           .data + .bss of model.c and the kernels + the workspace + the
#                   stack the image reserves (SY_MODEL_STACK_BYTES, the linker
#                   script's __stack_size)
#   stack      the run's high-water mark in that reserve (the test main paints it)
#     image         .text + .rodata + .data of the whole ELF (picolibc, crt0 and the
#                   test main with its built-in input included) and the other
#                   objects' share, for reference
#   instr      retired instructions of one sy_model_run (instret CSR read
#              around the call by main, exact under -icount shift=0)
#   MACs       SY_MODEL_MACS of the generated header (codegen counts the
#              multiply-accumulates of conv, depthwise, fully-connected and
#              LSTM nodes) and instructions / MAC
#   hi3066     whether codegen for hi3066 (48 KB SRAM budget, 512 KB flash) accepts it
# against TFLite Micro's published figures (person_detect arena 136 KB,
# micro_speech 28,584 B; framework code 9,732 B on Cortex-M3).
#
#   tools/bench/mcu_report.sh [BUILD_DIR] [SHARED_DIR]     (defaults: build, ../shared)
set -euo pipefail
B=${1:-build}
SHARED=${2:-$(dirname "$0")/../../../shared}
SY=$B/bin/switchyard
M=$SHARED/models/tflite
for tool in riscv64-unknown-elf-gcc riscv64-unknown-elf-size qemu-system-riscv32 cmake; do
  command -v "$tool" > /dev/null || { echo "mcu_report: $tool not found (tools/dev/install-deps.sh)" >&2; exit 1; }
done
[ -x "$SY" ] || { echo "mcu_report: $SY not found (build first)" >&2; exit 1; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# name rules TFLM-arena
MODELS=(
  "hello_world_int8 seed -"
  "hello_world_float seed -"
  "micro_speech_quantized seed 28584"
  "person_detect seed 139264"
  "mnist_lstm_int8 tflm -"
  "mlperf_tiny_kws_dscnn_int8 seed -"
  "mlperf_tiny_ad_toycar_int8 seed -"
  "mlperf_tiny_resnet8_int8 seed -"
)
# MLPerf Tiny's image-classification ResNet-8 is not among the shared models:
# tests/mcu/gen_resnet8 writes an int8 model of its architecture (fixed
# pseudo-random weights, the benchmark's 12.5 M MACs)
model_path() { # NAME
  if [ "$1" = mlperf_tiny_resnet8_int8 ]; then
    echo "$W/resnet8.tflite"
  else
    echo "$M/$1/model.tflite"
  fi
}
if [ -x "$B/bin/gen_resnet8" ]; then
  "$B/bin/gen_resnet8" "$W" > /dev/null
else
  echo "mcu_report: $B/bin/gen_resnet8 not found: the ResNet-8 row fails" >&2
fi

MAPSUM=$(dirname "$0")/mcu_mapsum.awk
echo "| model | rules | workspace B | TFLM arena B | runtime code B | flash B = code + weights/params | RAM B = .data + .bss + workspace + stack | stack used B | whole image flash B (picolibc, crt0, test main) | instructions / inference | MACs | instructions / MAC | ms at 240 MHz, 1 instr/cycle | hi3066 |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
max_code=0
for entry in "${MODELS[@]}"; do
  read -r name rules arena <<< "$entry"
  pkg=$W/$name
  model=$(model_path "$name")
  "$SY" codegen "$model" --target ws63 --rules "$rules" -o "$pkg" > "$W/$name.log" 2>&1 ||
    { echo "| $name | $rules | codegen failed: $(tail -1 "$W/$name.log") |"; continue; }
  cmake -S "$pkg" -B "$pkg/build" -DCMAKE_TOOLCHAIN_FILE="$pkg/toolchain-riscv32.cmake" > /dev/null 2>&1
  cmake --build "$pkg/build" > /dev/null 2>&1
  ws=$(awk '/#define SY_MODEL_WORKSPACE_BYTES/ {print $3}' "$pkg/include/sy_model.h")
  macs=$(awk '/#define SY_MODEL_MACS/ {sub(/u$/, "", $3); print $3}' "$pkg/include/sy_model.h")
  stk=$(awk '/#define SY_MODEL_STACK_BYTES/ {sub(/u$/, "", $3); print $3}' "$pkg/include/sy_model.h")
  # model.{text,rodata,data,bss} kernels.{...} main.{...} others.{...}
  read -r mt mr md mb kt kr kd kb nt nr nd nb lt lr ld lb < <(awk -f "$MAPSUM" "$pkg/build/sy_model_main.map")
  code=$((mt + kt + kr))
  weights=$mr
  rdata=$((md + kd)); rbss=$((mb + kb))
  image=$((mt + mr + md + kt + kr + kd + nt + nr + nd + lt + lr + ld))
  other=$((nt + nr + nd + lt + lr + ld))
  [ "$code" -gt "$max_code" ] && max_code=$code
  out=$( (cd "$W" && timeout 600 qemu-system-riscv32 -machine virt -bios none -nographic \
      -semihosting-config enable=on,target=native -icount shift=0 -kernel "$pkg/build/sy_model_main.elf") 2>&1)
  instr=$(awk '/^instret/ {print $2}' <<< "$out")
  used=$(awk '/^stack / {print $2}' <<< "$out")
  if grep '^out' <<< "$out" | cmp -s - "$pkg/expected_output.txt"; then exact=""; else exact=" (NOT bit-exact)"; fi
  ms=$(awk -v i="$instr" 'BEGIN {printf "%.2f", i / 240000}')
  ipm=$(awk -v i="$instr" -v m="${macs:-0}" 'BEGIN {if (m > 0 && i > 0) printf "%.2f", i / m; else print "-"}')
  if "$SY" codegen "$model" --target hi3066 --rules "$rules" -o "$W/hi-$name" > "$W/hi.log" 2>&1; then
    hi="fits"
  else
    hi="no: $(grep -o 'the plan needs [0-9]* bytes, the domain holds [0-9]*\|weights need [0-9]* bytes of flash' "$W/hi.log" | head -1)"
  fi
  echo "| $name | $rules | $ws | $arena | $code | $((code + weights)) = $code + $weights | $((rdata + rbss + ws + stk)) = $rdata + $rbss + $ws + $stk | ${used:--} | $image ($other outside the model) | $instr$exact | ${macs:--} | $ipm | $ms | $hi |"
  rm -rf "$W/hi-$name"
done
echo
echo "Largest generated runtime code (linked kernels + run function): $max_code B; TFLite Micro framework: 9,732 B on Cortex-M3."
