#!/usr/bin/env bash
# The MCU report (docs/mcu.md): for each shared TFLite model, `switchyard
# codegen --target ws63`, a cross build for rv32imfc (riscv64-unknown-elf-gcc
# + picolibc, -O2) and one run under qemu-system-riscv32 -icount shift=0:
#   workspace  SY_MODEL_WORKSPACE_BYTES (the core's plan of mcu_sram)
#   flash      .text + .rodata of the package library (model.c + kernels;
#              main, picolibc and the test input excluded): code | weights
#   RAM        .data + .bss of that library + the workspace
#   instr      retired instructions of one sy_model_run (instret CSR read
#              around the call by main, exact under -icount shift=0)
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
  "micro_speech_quantized tflm 28584"
  "person_detect tflm 139264"
  "mnist_lstm_int8 tflm -"
  "mlperf_tiny_kws_dscnn_int8 seed -"
  "mlperf_tiny_ad_toycar_int8 seed -"
)

echo "| model | rules | workspace B | TFLM arena B | flash B (.text + .rodata) = code + weights/params | RAM B (.data + .bss + workspace) | instructions / inference | ms at 240 MHz, 1 instr/cycle | hi3066 |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---|"
max_code=0
for entry in "${MODELS[@]}"; do
  read -r name rules arena <<< "$entry"
  pkg=$W/$name
  "$SY" codegen "$M/$name/model.tflite" --target ws63 --rules "$rules" -o "$pkg" > "$W/$name.log" 2>&1 ||
    { echo "| $name | $rules | codegen failed: $(tail -1 "$W/$name.log") |"; continue; }
  cmake -S "$pkg" -B "$pkg/build" -DCMAKE_TOOLCHAIN_FILE="$pkg/toolchain-riscv32.cmake" > /dev/null 2>&1
  cmake --build "$pkg/build" > /dev/null 2>&1
  ws=$(awk '/#define SY_MODEL_WORKSPACE_BYTES/ {print $3}' "$pkg/include/sy_model.h")
  read -r text rodata data bss < <(riscv64-unknown-elf-size -A "$pkg/build/libsy_model.a" | awk '
    $1 ~ /^\.text/ {t += $2} $1 ~ /^\.(s)?rodata/ {r += $2} $1 ~ /^\.(s)?data/ {d += $2} $1 ~ /^\.(s)?bss/ {b += $2}
    END {print t + 0, r + 0, d + 0, b + 0}')
  [ "$text" -gt "$max_code" ] && max_code=$text
  out=$( (cd "$W" && timeout 600 qemu-system-riscv32 -machine virt -bios none -nographic \
      -semihosting-config enable=on,target=native -icount shift=0 -kernel "$pkg/build/sy_model_main.elf") 2>&1)
  instr=$(awk '/^instret/ {print $2}' <<< "$out")
  if grep '^out' <<< "$out" | cmp -s - "$pkg/expected_output.txt"; then exact=""; else exact=" (NOT bit-exact)"; fi
  ms=$(awk -v i="$instr" 'BEGIN {printf "%.2f", i / 240000}')
  if "$SY" codegen "$M/$name/model.tflite" --target hi3066 --rules "$rules" -o "$W/hi-$name" > "$W/hi.log" 2>&1; then
    hi="fits"
  else
    hi="no: $(grep -o 'the plan needs [0-9]* bytes, the domain holds [0-9]*\|weights need [0-9]* bytes of flash' "$W/hi.log" | head -1)"
  fi
  echo "| $name | $rules | $ws | $arena | $((text + rodata)) = $text + $rodata | $((data + bss + ws)) = $data + $bss + $ws | $instr$exact | $ms | $hi |"
  rm -rf "$W/hi-$name"
done
echo
echo "Largest generated runtime code (.text of model.c + kernels): $max_code B; TFLite Micro framework: 9,732 B on Cortex-M3."
