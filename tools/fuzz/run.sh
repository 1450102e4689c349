#!/usr/bin/env bash
# A fuzzing campaign over the targets of tests/fuzz (docs/fuzzing.md).
#
#   tools/fuzz/run.sh [--time SECONDS] [--runs N] [--smoke] [--target NAME]... [--build DIR]
#                     [--seed N] [--no-build] [--keep-corpus] [--log FILE]
#
# Builds DIR (default build-fuzz) with Clang, ASan+UBSan and libFuzzer
# (-DSY_FUZZ=ON), seeds each target's corpus from ../shared and the tree at
# run time, then runs the targets one at a time under `nice -n 19`, each for
# SECONDS (default 60) or N executions. --smoke is the CI budget: every
# target for 10 s on seed 1. Prints per target the executions, the time and
# the findings, appends them to --log FILE when given, and exits 1 when any
# target found a crash, a leak, a timeout or an out-of-memory (the input is
# kept in DIR/fuzz/findings/TARGET/: reproduce it with the GCC replay driver
# `build/bin/fuzz_TARGET FILE`, then add it to tests/fuzz/regressions/TARGET/).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
shared=${SY_SHARED_DIR:-$root/../shared}

time_s=60 runs= seed=1 build=build-fuzz do_build=1 keep=0 log= targets=()
all=(onnx tflite ini tensor cache llm_bundle llm_text qas dataset train_tflite)
while [ $# -gt 0 ]; do
  case $1 in
    --time) time_s=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --smoke) time_s=10; seed=1; shift ;;
    --target) targets+=("$2"); shift 2 ;;
    --build) build=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --keep-corpus) keep=1; shift ;;
    --log) log=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
case $build in /*) ;; *) build=$root/$build ;; esac

if [ "$do_build" = 1 ]; then
  cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DSY_SANITIZE=ON -DSY_FUZZ=ON \
        -DSY_SHARED_DIR="$shared" ${CMAKE_C_COMPILER_LAUNCHER:+-DCMAKE_C_COMPILER_LAUNCHER=$CMAKE_C_COMPILER_LAUNCHER} >/dev/null
  targets_list=$(printf 'fuzz_%s ' "${targets[@]}")
  # shellcheck disable=SC2086
  cmake --build "$build" -j2 --target $targets_list switchyard_cli >/dev/null
fi

work=$build/fuzz
mkdir -p "$work"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

# ---- seed corpora, from the tree and ../shared at run time ------------------
seed_dir() { # TARGET -> prints the seed folder (built once)
  local t=$1 d=$work/seeds/$1
  if [ -d "$d" ]; then echo "$d"; return; fi
  mkdir -p "$d"
  case $t in
    onnx)
      cp "$root"/graphs/*.onnx "$d"/ 2>/dev/null || true
      if [ -d "$shared/testdata" ]; then
        find "$shared/testdata" -name model.onnx -size -64k | sort | head -400 |
          while read -r f; do cp "$f" "$d/$(echo "$f" | md5sum | cut -c1-12).onnx"; done
      fi
      [ -d "$shared/models/onnx" ] && find "$shared/models/onnx" -name '*.onnx' -size -2M -exec cp {} "$d"/ \; ;;
    tflite|train_tflite)
      [ -d "$shared/models/tflite" ] && find "$shared/models/tflite" -name '*.tflite' -size -2M |
        while read -r f; do cp "$f" "$d/$(basename "$(dirname "$f")")_$(basename "$f")"; done
      # the small models of train.tflite_ops (python3 with onnx): the
      # operators the training translator and the importer share
      # (STRIDED_SLICE's masks, BATCH_MATMUL, grouped CONV_2D, subgraphs)
      local g=$work/tflite_ops
      mkdir -p "$g"
      if /usr/bin/python3 "$root/tests/train/tflite_ops_models.py" "$g" >/dev/null 2>&1; then
        cp "$g"/*.tflite "$d"/
      fi ;;
    ini)
      cp "$root"/conf/*.ini "$d"/ ;;
    tensor)
      find "$root/graphs" -name '*.npy' -exec cp {} "$d"/ \; 2>/dev/null || true
      if [ -d "$shared/testdata" ]; then
        find "$shared/testdata" -name '*.pb' -size -16k | sort | head -300 |
          while read -r f; do cp "$f" "$d/$(echo "$f" | md5sum | cut -c1-12).pb"; done
      fi ;;
    cache)
      ASAN_OPTIONS=detect_leaks=0 "$build/bin/switchyard" compile "$root/graphs/tiny_cnn.onnx" --config "$root/conf/htp.ini" \
        -o "$d/tiny_cnn.htp" \
        >/dev/null ;;
    qas) # the target's own session writes its checkpoint (fuzz_qas.c)
      : > "$work/empty"
      SY_FUZZ_WRITE_SEED=$d ASAN_OPTIONS=detect_leaks=0 "$build/bin/fuzz_qas" "$work/empty" >/dev/null 2>&1 || return 1 ;;
    dataset) # files joined by \n@@\n (fuzz_dataset.c): an IDX pair, and input/label pairs
      printf '\0\0\x08\x03\0\0\0\x02\0\0\0\x02\0\0\0\x02\x01\x02\x03\x04\xfb\xfc\xfd\xfe\n@@\n\0\0\x08\x01\0\0\0\x02\x07\x00' > "$d/idx"
      # label_K.pb: an ONNX TensorProto int64 [1] (dims 1, data_type 7, raw_data 2), or a scalar
      { cat "$root/graphs/mlp/test_data_set_0/input_0.npy"; printf '\n@@\n\x08\x01\x10\x07\x4a\x08\x02\0\0\0\0\0\0\0'; } > "$d/npy_pb"
      { cat "$root/graphs/tiny_cnn/test_data_set_0/input_0.npy"; printf '\n@@\n\x10\x07\x4a\x08\x01\0\0\0\0\0\0\0\n@@\n'
        cat "$root/graphs/tiny_cnn/test_data_set_0/input_0.npy"; printf '\n@@\n\x10\x07\x4a\x08\x03\0\0\0\0\0\0\0'; } > "$d/two_pairs" ;;
    llm_bundle|llm_text)
      local b=$work/llm_bundle
      if [ ! -d "$b" ]; then
        sh "$root/tests/fuzz/export_bundle.sh" "$build/bin/switchyard" "$shared" "$b" >/dev/null || return 1
      fi
      if [ "$t" = llm_bundle ]; then
        { cat "$b/bundle.ini"; printf '\n@@\n'; cat "$b/tokenizer.bin"; } > "$d/bundle"
        cp "$b/bundle.ini" "$d/ini_only"
      else
        printf 'Once upon a time' > "$d/text"
        printf 'Lily and Ben\n@@\n\x01\x00\x00\x00\x93\x01\x00\x00' > "$d/text_ids"
      fi ;;
  esac
  echo "$d"
}

status=0
summary=()
for t in "${targets[@]}"; do
  bin=$build/bin/fuzz_$t
  [ -x "$bin" ] || { echo "run.sh: $bin is not built" >&2; exit 2; }
  if ! seeds=$(seed_dir "$t"); then
    echo "== $t: skipped (its seed data in $shared is absent)"
    summary+=("$t skipped")
    continue
  fi
  corpus=$work/corpus/$t findings=$work/findings/$t
  [ "$keep" = 1 ] || rm -rf "$corpus"
  rm -rf "$findings"
  mkdir -p "$corpus" "$findings"
  dict=()
  [ -f "$root/tests/fuzz/dict/$t.dict" ] && dict=(-dict="$root/tests/fuzz/dict/$t.dict")
  # a QAS checkpoint is an ONNX file too
  case $t in onnx|qas) dict=(-dict="$root/tests/fuzz/dict/onnx.dict") ;; esac
  budget=(-max_total_time="$time_s")
  [ -n "$runs" ] && budget=(-runs="$runs")
  export SY_FUZZ_LLM_BUNDLE=$work/llm_bundle
  out=$work/$t.log
  echo "== $t: ${runs:+$runs runs}${runs:-$time_s s}, seed $seed, corpus from $seeds"
  rc=0
  nice -n 19 "$bin" -seed="$seed" "${budget[@]}" -rss_limit_mb=2560 -malloc_limit_mb=1024 -timeout=20 \
    -max_len=1048576 -print_final_stats=1 -artifact_prefix="$findings/" "${dict[@]}" "$corpus" "$seeds" \
    >"$out" 2>&1 || rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out" | tail -1 | grep -o '[0-9]*$' || echo 0)
  secs=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$out" | tail -1 | awk '{print $5}' || true)
  found=$(find "$findings" -type f ! -name 'slow-unit-*' | wc -l) # a slow unit is not a finding (the load decides it)
  line="$t execs=${execs:-0} seconds=${secs:-$time_s} findings=$found rc=$rc"
  echo "   $line"
  summary+=("$line")
  if [ "$rc" != 0 ] || [ "$found" != 0 ]; then
    status=1
    grep -m5 -E 'ERROR|SUMMARY|runtime error|Test unit written' "$out" || true
  fi
done
echo "== summary ($(date -u +%Y-%m-%dT%H:%MZ), seed $seed)"
printf '   %s\n' "${summary[@]}"
if [ -n "$log" ]; then printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%MZ)" "${summary[@]}" >> "$log"; fi
exit $status
