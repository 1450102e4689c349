#!/usr/bin/env bash
# The MCU target end to end: `switchyard codegen` writes a package for each
# shared TFLite model, the package is built (MODE host: with the host C
# compiler; MODE qemu: with riscv64-unknown-elf-gcc + picolibc for rv32imfc)
# and run (host: natively; qemu: qemu-system-riscv32 -machine virt with
# semihosting), and its outputs must be bit-exact with the host run of the
# riscv_mcu provider that codegen recorded (expected_output.txt). Real inputs
# where the model has them: hello_world y ~ sin x, person_detect person.bmp /
# no_person.bmp (under the default rules), mnist_lstm sampleN.png -> N;
# deterministic inputs for kws, anomaly detection and micro_speech. MODE host
# also checks the refusals and person_detect's two-row note.
#
#   test_mcu.sh SWITCHYARD MCU_PREP SHARED_DIR WORK_DIR host|qemu
#
# Exit 77 (skipped) without the shared models, or in qemu mode without the
# cross toolchain or QEMU.
set -u
SY=$1 PREP=$2 SHARED=$3 WORK=$4 MODE=$5
M=$SHARED/models/tflite
if [ ! -d "$M" ]; then
  echo "SKIP: the shared TFLite models ($M) are absent"
  exit 77
fi
. "$(dirname "$0")/mcu_common.sh"
mcu_prepare "$MODE" "$WORK"

build() { # PKG
  local pkg=$1
  if [ "$MODE" = qemu ]; then
    cmake -S "$pkg" -B "$pkg/build" -DCMAKE_TOOLCHAIN_FILE="$pkg/toolchain-riscv32.cmake" > "$pkg/build.log" 2>&1 &&
      cmake --build "$pkg/build" >> "$pkg/build.log" 2>&1
  else
    cmake -S "$pkg" -B "$pkg/build" -DCMAKE_C_FLAGS="-Werror" > "$pkg/build.log" 2>&1 &&
      cmake --build "$pkg/build" >> "$pkg/build.log" 2>&1
  fi
}

run_pkg() { # PKG INPUT_BIN|- OUT_TXT
  local pkg=$1 in=$2 out=$3 rundir
  rundir=$(dirname "$out")/run.$$
  mkdir -p "$rundir"
  [ "$in" != - ] && cp "$in" "$rundir/input0.bin"
  if [ "$MODE" = qemu ]; then
    (cd "$rundir" && timeout 600 qemu-system-riscv32 -machine virt -bios none -nographic \
      -semihosting-config enable=on,target=native -icount shift=0 -kernel "$pkg/build/sy_model_main.elf") > "$out" 2>&1
  else
    (cd "$rundir" && "$pkg/build/sy_model_main") > "$out" 2>&1
  fi
  local rc=$?
  rm -rf "$rundir"
  return $rc
}

# case NAME MODEL RULES INPUT_NAME CHECK [VARIANT ARG ...]: VARIANT is an
# mcu_prep input kind (png, bmp, hello-f, hello-i) and ARG its file or value;
# CHECK is the mcu_prep check to apply per variant (argmax, person, sin, -)
case_model() {
  local name=$1 model=$2 rules=$3 iname=$4 check=$5
  shift 5
  local dir=$WORK/$name pkg=$WORK/$name/pkg
  mkdir -p "$dir"
  local t0=$SECONDS
  if ! "$SY" codegen "$M/$model/model.tflite" --target ws63 --rules "$rules" -o "$pkg" > "$dir/codegen.log" 2>&1; then
    fail "$name: codegen"; cat "$dir/codegen.log"; return
  fi
  if ! build "$pkg"; then
    fail "$name: build ($MODE)"; tail -20 "$pkg/build.log"; return
  fi
  # the built-in input (the deterministic pattern of codegen)
  if ! run_pkg "$pkg" - "$dir/out.txt"; then
    fail "$name: run"; cat "$dir/out.txt"; return
  fi
  if ! grep '^out' "$dir/out.txt" | cmp -s - "$pkg/expected_output.txt"; then
    fail "$name: $MODE output differs from the host run"; diff <(grep '^out' "$dir/out.txt") "$pkg/expected_output.txt" | head -5
  else
    echo "ok   $name ($MODE, built-in input): bit-exact, $(grep instret "$dir/out.txt")"
  fi
  if [ "$MODE" = qemu ]; then
    # the painted stack: the run's high-water mark inside the reserve the image links
    local used reserved
    used=$(awk '/^stack / {print $2}' "$dir/out.txt")
    reserved=$(awk '/#define SY_MODEL_STACK_BYTES/ {sub(/u$/, "", $3); print $3}' "$pkg/include/sy_model.h")
    if [ -z "$used" ] || [ -z "$reserved" ] || [ "$used" -le 0 ] || [ "$used" -ge "$reserved" ]; then
      fail "$name: stack used '$used' of the '$reserved' bytes reserved"
    else
      echo "ok   $name: stack $used of $reserved bytes"
    fi
  fi
  local i=0
  while [ $# -ge 2 ]; do
    local kind=$1 arg=$2 expect=${3:-}
    shift 3
    local v=$dir/in$i vpkg=$dir/pkg$i
    case $kind in
      png) "$PREP" png "$arg" "$v" ;;
      bmp) "$PREP" bmp "$arg" "$v" ;;
      hello-f) "$PREP" hello f "$arg" "$v" ;;
      hello-i) "$PREP" hello i "$arg" "$v" ;;
    esac || { fail "$name: preparing $arg"; i=$((i + 1)); continue; }
    # the host run of the same provider on this input (and the same model.c)
    if ! "$SY" codegen "$M/$model/model.tflite" --target ws63 --rules "$rules" -o "$vpkg" \
        --input "$iname=$v.npy" > "$dir/codegen$i.log" 2>&1; then
      fail "$name: codegen with $arg"; cat "$dir/codegen$i.log"; i=$((i + 1)); continue
    fi
    cmp -s "$pkg/src/model.c" "$vpkg/src/model.c" || fail "$name: model.c depends on the input"
    if ! run_pkg "$pkg" "$v.bin" "$dir/out$i.txt"; then
      fail "$name: run with $arg"; cat "$dir/out$i.txt"; i=$((i + 1)); continue
    fi
    if ! grep '^out' "$dir/out$i.txt" | cmp -s - "$vpkg/expected_output.txt"; then
      fail "$name: $MODE output for $arg differs from the host run"
    else
      local what=""
      case $check in
        argmax) what=$("$PREP" argmax "$dir/out$i.txt" "$expect") || fail "$name: $arg: $what" ;;
        person) what=$("$PREP" person "$dir/out$i.txt" "$expect") || fail "$name: $arg: $what" ;;
        sin-f) what=$("$PREP" sin "$dir/out$i.txt" f "$arg") || fail "$name: $arg: $what" ;;
        sin-i) what=$("$PREP" sin "$dir/out$i.txt" i "$arg") || fail "$name: $arg: $what" ;;
      esac
      echo "ok   $name ($MODE, $(basename "$arg")): bit-exact; $what"
    fi
    rm -rf "$vpkg"
    i=$((i + 1))
  done
  echo "     $name: $((SECONDS - t0)) s"
}

T=$M
case_model hello_world_float hello_world_float seed "serving_default_dense_input:0" sin-f \
  hello-f 0.5 - hello-f 1.5 - hello-f 3.0 - hello-f 4.5 -
case_model hello_world_int8 hello_world_int8 seed "serving_default_dense_input:0" sin-i \
  hello-i 0.5 - hello-i 1.5 - hello-i 3.0 - hello-i 4.5 -
case_model person_detect person_detect seed input person \
  bmp "$T/person_detect/testdata/person.bmp" 1 bmp "$T/person_detect/testdata/no_person.bmp" 0
mn=()
for d in 0 1 2 3 4 5 6 7 8 9; do mn+=(png "$T/mnist_lstm_int8/testdata/sample$d.png" "$d"); done
case_model mnist_lstm_int8 mnist_lstm_int8 tflm "serving_default_fixed_input:0" argmax "${mn[@]}"
# its depthwise layer (one input channel, multiplier 8) runs as Table A #1 Conv2D under the default rules
case_model micro_speech_quantized micro_speech_quantized seed Reshape_1 -
case_model mlperf_tiny_kws_dscnn_int8 mlperf_tiny_kws_dscnn_int8 seed input_1 -
case_model mlperf_tiny_ad_toycar_int8 mlperf_tiny_ad_toycar_int8 seed input_1 -

if [ "$MODE" = host ]; then
  # refusals: the rule is quoted, the budgets give both figures
  expect_refusal() { # WHAT NEEDLE ARGS...
    local what=$1 needle=$2
    shift 2
    local log=$WORK/refusal.log
    if "$SY" codegen "$@" -o "$WORK/refused" > "$log" 2>&1; then
      fail "$what: codegen succeeded"
    elif ! grep -qF -- "$needle" "$log"; then
      fail "$what: the message lacks '$needle'"; cat "$log"
    else
      echo "ok   refused: $what: $(grep -oF -- "$needle" "$log" | head -1)"
    fi
  }
  # person_detect's fused RELU6, once refused under rules = seed, is taken as
  # two seed rows (the conv's with NONE, then #56 Relu6); explain says so
  note="CONV_2D with fused RELU6 runs as ops-mcu.md Table A #1 Conv2D (NONE) followed by #56 Relu6"
  if ! "$SY" explain "$M/person_detect/model.tflite" --config "$(dirname "$0")/../../conf/riscv_mcu_ws63.ini" \
      > "$WORK/explain_pd.log" 2>&1; then
    fail "person_detect under rules=seed: explain"; cat "$WORK/explain_pd.log"
  elif ! grep -qF "took 13 x CONV_2D: $note" "$WORK/explain_pd.log" ||
       ! grep -qF "riscv_mcu (emulator): 31 nodes" "$WORK/explain_pd.log"; then
    fail "person_detect under rules=seed: explain lacks the two-row note or a node"; cat "$WORK/explain_pd.log"
  else
    echo "ok   accepted: person_detect under rules=seed: $note"
  fi
  expect_refusal "mnist_lstm under rules=seed (LSTM)" "not among the 90 TFLite operators" \
    "$M/mnist_lstm_int8/model.tflite" --target ws63
  expect_refusal "person_detect on hi3066 (48 KB budget)" "the plan needs 55296 bytes, the domain holds 49152" \
    "$M/person_detect/model.tflite" --target hi3066 --rules tflm
  expect_refusal "a 1 KB SRAM budget" "the domain holds 1024" \
    "$M/mlperf_tiny_kws_dscnn_int8/model.tflite" --target ws63 --sram-budget 1K
  expect_refusal "a flash budget below the weights" "the weights need 270880 bytes of flash, the flash budget is 100000" \
    "$M/mlperf_tiny_ad_toycar_int8/model.tflite" --target ws63 --flash-budget 100000
  expect_refusal "an unknown target" "expected ws63 or hi3066" "$M/hello_world_int8/model.tflite" --target esp32
  ini=$WORK/bad.ini
  printf '[switchyard]\nplugin_dirs = @default\n[provider.riscv_mcu]\ntarget = ws63\nsram = 1\n' > "$ini"
  if "$SY" run "$M/hello_world_int8/model.tflite" --config "$ini" > "$WORK/bad.log" 2>&1; then
    fail "an unknown provider key is not refused"
  elif grep -q "unknown key 'sram'" "$WORK/bad.log"; then
    echo "ok   refused: unknown key 'sram' in [provider.riscv_mcu]"
  else
    fail "an unknown provider key: unexpected message"; cat "$WORK/bad.log"
  fi
  # the package's stack reserve: its bounds, and the SRAM it takes with the budget
  for bad in "ws63 100:a byte count of at least 512, a multiple of 16" "ws63 1000:a multiple of 16" \
             "hi3066 32K:sram_budget 49152 + stack_bytes 32768 exceed hi3066's SRAM of 65536 bytes"; do
    spec=${bad%%:*} needle=${bad#*:}
    printf '[switchyard]\nplugin_dirs = @default\n[provider.riscv_mcu]\ntarget = %s\nstack_bytes = %s\n' \
      "${spec% *}" "${spec#* }" > "$ini"
    if "$SY" run "$M/hello_world_int8/model.tflite" --config "$ini" > "$WORK/bad.log" 2>&1; then
      fail "stack_bytes = ${spec#* } on ${spec% *} is not refused"
    elif grep -qF -- "$needle" "$WORK/bad.log"; then
      echo "ok   refused: stack_bytes = ${spec#* } on ${spec% *}: $needle"
    else
      fail "stack_bytes = ${spec#* }: unexpected message"; cat "$WORK/bad.log"
    fi
  done
fi

if [ "$MODE" = qemu ]; then
  # a reserve below what the run needs (micro_speech's depthwise layers use
  # about 1.2 KB) is caught by the painted stack, not left to corrupt memory
  ini=$WORK/small_stack.ini
  printf '[switchyard]\nplugin_dirs = @default\nproviders = riscv_mcu, cpu_ref\n[provider.riscv_mcu]\ntarget = ws63\nrules = tflm\nstack_bytes = 512\n' > "$ini"
  spkg=$WORK/small_stack
  if ! "$SY" codegen "$M/micro_speech_quantized/model.tflite" --config "$ini" -o "$spkg" > "$WORK/small.log" 2>&1; then
    fail "codegen with stack_bytes = 512"; cat "$WORK/small.log"
  elif ! grep -q "SY_MODEL_STACK_BYTES 512u" "$spkg/include/sy_model.h" || ! grep -q "__stack_size=512" "$spkg/toolchain-riscv32.cmake"; then
    fail "stack_bytes = 512 is not what the package reserves"
  elif ! build "$spkg"; then
    fail "small stack: build"; tail -20 "$spkg/build.log"
  else
    run_pkg "$spkg" - "$WORK/small_out.txt"
    rc=$?
    if [ $rc -eq 3 ] && grep -q "error: the run used the whole 512-byte stack (overflow)" "$WORK/small_out.txt"; then
      echo "ok   a 512-byte stack under micro_speech: the overflow is reported (exit 3)"
    else
      fail "a 512-byte stack under micro_speech: exit $rc"; cat "$WORK/small_out.txt"
    fi
  fi
fi

if [ $fails -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "all MCU checks passed ($MODE)"
