#!/usr/bin/env bash
# A float ONNX network on the MCU: fp32 mnist-8 (Conv, Add, Relu, MaxPool,
# Reshape, MatMul, Add) runs on riscv_mcu alone (ONNX Table B on the
# TFLite fp32 kernels through NCHW<->NHWC copies, providers/riscv_mcu/mcu_onnx.c).
#  - `switchyard conformance` with riscv_mcu alone (strict): every node on
#    the MCU, test_data_set_0..2 within the conformance tolerance of ONNX's
#    expected output_0.pb (an independent reference: the model zoo's);
#  - `switchyard codegen` for test_data_set_0..2: the host run has argmax
#    2, 0, 9, and the package (MODE host: host compiler; MODE qemu:
#    riscv64-unknown-elf-gcc + picolibc, qemu-system-riscv32) prints the
#    same bytes as the host run of the provider;
#  - graphs/tiny_cnn.onnx and graphs/mlp.onnx against cpu_ref (below);
#  - ONNX node tests that break Table B's rules are declined quoting the row.
#
#   test_mcu_onnx_f32.sh SWITCHYARD SHARED_DIR SOURCE_DIR WORK_DIR host|qemu
#
# Exit 77 (skipped) without mnist-8, or in qemu mode without the cross
# toolchain, picolibc or QEMU.
set -u
SY=$1 SHARED=$2 SRC=$3 WORK=$4 MODE=$5
m=$SHARED/models/onnx/mnist-8
if [ ! -f "$m/model.onnx" ]; then
  echo "SKIP: $m/model.onnx is absent"
  exit 77
fi
. "$(dirname "$0")/mcu_common.sh"
mcu_prepare "$MODE" "$WORK"
m=$(cd "$m" && pwd)
mkdir -p "$WORK/conf"
ln -s "$m" "$WORK/conf/mnist-8"
if "$SY" conformance "$WORK/conf" --config "$SRC/tests/mcu/conformance_riscv_mcu.ini" > "$WORK/conf.log" 2>&1 &&
  grep -q '^1 passed, 0 failed' "$WORK/conf.log"; then
  echo "ok   fp32 mnist-8 on riscv_mcu alone matches output_0.pb within the conformance tolerance"
else
  fail "conformance of fp32 mnist-8 on riscv_mcu alone"; cat "$WORK/conf.log"
fi
"$SY" explain "$m/model.onnx" --config "$SRC/conf/riscv_mcu_ws63.ini" > "$WORK/explain.log" 2>&1
grep -q 'riscv_mcu (emulator): 11 nodes' "$WORK/explain.log" && grep -q 'cpu_ref: 0 nodes' "$WORK/explain.log" ||
  { fail "explain: not every node on riscv_mcu with conf/riscv_mcu_ws63.ini"; cat "$WORK/explain.log"; }
i=0
for want in 2 0 9; do
  in=$m/test_data_set_$i/input_0.pb pkg=$WORK/pkg$i
  if ! "$SY" codegen "$m/model.onnx" --target ws63 -o "$pkg" --input "Input3=$in" > "$WORK/codegen$i.log" 2>&1; then
    fail "codegen (test_data_set_$i)"; cat "$WORK/codegen$i.log"; i=$((i + 1)); continue
  fi
  top=$(sed -n 's/.*top-5: \[\([0-9]*\)\].*/\1/p' "$WORK/codegen$i.log" | head -1)
  [ "$top" = "$want" ] || fail "test_data_set_$i: the riscv_mcu host run has argmax '$top', expected $want"
  grep -q 'tflk_conv_f32' "$pkg/src/model.c" && grep -q 'tflk_fc_f32' "$pkg/src/model.c" &&
    grep -q 'tflk_pool_f32' "$pkg/src/model.c" || fail "the package does not run the fp32 conv, fc and pool kernels"
  mcu_pkg_run "$MODE" "$pkg" "$WORK/out$i.txt" || { fail "build ($MODE)"; i=$((i + 1)); continue; }
  if ! grep '^out' "$WORK/out$i.txt" | cmp -s - "$pkg/expected_output.txt"; then
    fail "test_data_set_$i: the $MODE run differs from the host run"; cat "$WORK/out$i.txt"
  else
    echo "ok   fp32 mnist-8 test_data_set_$i ($MODE): argmax $top, bit-exact with the riscv_mcu host run; $(grep instret "$WORK/out$i.txt")"
  fi
  i=$((i + 1))
done
# the project's graphs/tiny_cnn.onnx (Conv pads 1, Relu, MaxPool, Reshape,
# Gemm transB = 1, Softmax axis 1) and graphs/mlp.onnx (MatMul, Add, Relu):
# every node on riscv_mcu alone within `switchyard compare`'s float32
# tolerance of cpu_ref (its own Conv/Gemm/MatMul/Softmax code), and
# tiny_cnn's package (ONNX Softmax's tflk_expf_d in double, software on
# rv32imfc) bit-exact with the host run
for g in tiny_cnn mlp; do
  "$SY" compare "$SRC/graphs/$g.onnx" --config "$SRC/tests/mcu/conformance_riscv_mcu.ini" \
    --input-dir "$SRC/graphs/$g/test_data_set_0" > "$WORK/compare_$g.log" 2>&1
  if grep -q ' 0 past tolerance, 0 without a value on B' "$WORK/compare_$g.log" &&
    ! awk '$1 ~ /^[0-9]+$/ && $7 != "riscv_mcu" {bad = 1} END {exit !bad}' "$WORK/compare_$g.log"; then
    echo "ok   fp32 $g: every node on riscv_mcu, within the float32 tolerance of cpu_ref"
  else
    fail "fp32 $g on riscv_mcu vs cpu_ref"; cat "$WORK/compare_$g.log"
  fi
done
pkg=$WORK/pkg_tiny_cnn
if "$SY" codegen "$SRC/graphs/tiny_cnn.onnx" --target ws63 -o "$pkg" \
  --input "image=$SRC/graphs/tiny_cnn/test_data_set_0/input_0.npy" > "$WORK/codegen_tiny_cnn.log" 2>&1; then
  grep -q 'tflk_softmax_f32_acc64' "$pkg/src/model.c" && grep -q 'tflk_expf_d' "$pkg/src/model.c" ||
    fail "tiny_cnn: the package does not run ONNX Softmax's arithmetic"
  if [ "$MODE" = qemu ]; then
    cmake -S "$pkg" -B "$pkg/build" -DCMAKE_TOOLCHAIN_FILE="$pkg/toolchain-riscv32.cmake" > "$pkg/build.log" 2>&1 &&
      cmake --build "$pkg/build" >> "$pkg/build.log" 2>&1 &&
      (cd "$pkg" && timeout 600 qemu-system-riscv32 -machine virt -bios none -nographic \
        -semihosting-config enable=on,target=native -icount shift=0 -kernel "$pkg/build/sy_model_main.elf") \
        > "$WORK/out_tiny_cnn.txt" 2>&1
  else
    cmake -S "$pkg" -B "$pkg/build" -DCMAKE_C_FLAGS="-Werror" > "$pkg/build.log" 2>&1 &&
      cmake --build "$pkg/build" >> "$pkg/build.log" 2>&1 && (cd "$pkg" && "$pkg/build/sy_model_main") > "$WORK/out_tiny_cnn.txt" 2>&1
  fi
  if grep '^out' "$WORK/out_tiny_cnn.txt" | cmp -s - "$pkg/expected_output.txt"; then
    echo "ok   fp32 tiny_cnn ($MODE): the package is bit-exact with the riscv_mcu host run; $(grep instret "$WORK/out_tiny_cnn.txt")"
  else
    fail "fp32 tiny_cnn: the $MODE package differs from the host run"; tail -20 "$pkg/build.log"; cat "$WORK/out_tiny_cnn.txt"
  fi
else
  fail "codegen of fp32 tiny_cnn"; cat "$WORK/codegen_tiny_cnn.log"
fi
# Table B's rules decline, quoting the row (ONNX's node tests that break them)
nt=$SHARED/testdata/onnx-node
if [ -d "$nt" ]; then
  while IFS='|' read -r t want; do
    [ -f "$nt/$t/model.onnx" ] || continue
    "$SY" explain "$nt/$t/model.onnx" --config "$SRC/conf/riscv_mcu_ws63.ini" > "$WORK/decline_$t.log" 2>&1
    if grep -qF "$want" "$WORK/decline_$t.log"; then
      echo "ok   $t declined: $want"
    else
      fail "$t: no decline '$want'"; cat "$WORK/decline_$t.log"
    fi
  done << 'LIST'
test_maxpool_2d_ceil|MaxPool: ceil_mode must be 0 (ops-mcu.md Table B #3 MaxPool: floor only)
test_averagepool_2d_ceil|AveragePool: ceil_mode must be 0 (ops-mcu.md Table B #18 AveragePool: floor only)
test_maxpool_with_argmax_2d_precomputed_pads|MaxPool: the dual-output form (with Indices) is not supported (ops-mcu.md Table B #3)
test_maxpool_with_argmax_2d_precomputed_strides|MaxPool: storage_order must be 0 (ops-mcu.md Table B #3 MaxPool)
test_averagepool_2d_pads_count_include_pad|AveragePool: count_include_pad = 1 with padding
test_maxpool_3d_dilations|MaxPool: X must be 3D or 4D (NCW/NCHW), got rank 5 (ops-mcu.md Table B #3 MaxPool)
test_basic_conv_with_padding|Conv: W (of X's rank) and B must be constants (ops-mcu.md Table B #1)
test_gemm_alpha|Gemm: B must be a constant (ops-mcu.md Table B #4 Gemm
test_matmul_bcast|MatMul: batch dim 0 is 3 and 1; they must be identical (ops-mcu.md Table B #5 Matmul: no broadcasting)
test_convtranspose_output_shape|ConvTranspose: the output_shape attribute is an error at parse time (ops-mcu.md Table B #113
test_convtranspose_group_2|ConvTranspose: group must be 1, got 2 (ops-mcu.md Table B #113 ConvTranspose
test_convtranspose_3d|ConvTranspose: X must be 4D NCHW, got rank 5 (ops-mcu.md Table B #113
test_lstm_batchwise|LSTM: input_forget and layout must be 0 (ops-mcu.md Table B #20 LSTM, rule 31
test_lstm_with_peepholes|LSTM: sequence_lens is not configurable (ops-mcu.md Table B #20 LSTM, rule 31)
test_gru_batchwise|GRU: layout must be 0 (ops-mcu.md Table B #82 GRU, rule 32
test_simple_rnn_defaults|RNN: both Y and Y_h must be outputs (ops-mcu.md Table B #114 RNN, rule 33)
test_simple_rnn_batchwise|RNN: only layout = 0 (time-major) is supported (ops-mcu.md Table B #114 RNN, rule 33)
test_einsum_batch_diagonal|the ellipsis "..." is not supported (ops-mcu.md Table B #60 Einsum
test_einsum_inner_prod|Einsum: input 0 is float64, the output float64 (ops-mcu.md Table B #60 Einsum: float32, uint8, int8 or int32, one dtype)
LIST
fi
if [ $fails -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "all fp32 ONNX MCU checks passed ($MODE)"
