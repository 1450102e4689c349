#!/usr/bin/env bash
# The int8 one-input ops on the MCU: a chain of TANH, EXP, LOG, HARD_SWISH,
# GELU, NEG, ABS, SIN and RELU6 (written by test_tflite_ops --write-model,
# every input code once) that riscv_mcu runs as 256-entry tables
# (plugins/tflite_common/tfl_unary8.h, kernels/tflk_lut.c). The host run of
# the riscv_mcu provider gives the bytes of the cpu_ref (tflite_math) run,
# and the package built (MODE host: host compiler; MODE qemu:
# riscv64-unknown-elf-gcc + picolibc, qemu-system-riscv32) prints the same
# bytes.
#
#   test_mcu_lut.sh SWITCHYARD TEST_TFLITE_OPS WORK_DIR host|qemu
#
# In qemu mode the package is built with the command codegen prints (with a
# relative -o). Exit 77 (skipped) in qemu mode without the cross toolchain, picolibc or QEMU.
set -u
SY=$1 GEN=$2 WORK=$3 MODE=$4
. "$(dirname "$0")/mcu_common.sh"
mcu_prepare "$MODE" "$WORK"
"$GEN" --write-model "$WORK" > "$WORK/gen.log" 2>&1 || { cat "$WORK/gen.log"; echo "FAIL: --write-model"; exit 1; }
m=$WORK/lut_chain.tflite pkg=$WORK/pkg
# -o relative to the working folder, as a user types it: the qemu mode then
# builds with the very command codegen prints
(cd "$WORK" && "$SY" codegen lut_chain.tflite --target ws63 -o pkg --input x=x.npy) > "$WORK/codegen.log" 2>&1 || {
  cat "$WORK/codegen.log"
  echo "FAIL: codegen"
  exit 1
}
n=$(grep -c 'tflk_lut_s8(' "$pkg/src/model.c")
[ "$n" -eq 9 ] || { echo "FAIL: $n tflk_lut_s8 calls in the package, want 9"; exit 1; }
# the cpu_ref run: the same bytes
"$SY" run "$m" --input "x=$WORK/x.npy" --output-dir "$WORK/cpu" > "$WORK/run.log" 2>&1 || {
  cat "$WORK/run.log"
  echo "FAIL: the cpu_ref run"
  exit 1
}
exp=$(grep '^out0' "$pkg/expected_output.txt")
cpu=$(tail -c 256 "$WORK/cpu/output_0.pb" | od -An -tx1 -v | tr -s ' \n' ' ' | sed 's/ $//')
[ "out0 256:$cpu" = "$exp" ] || { echo "FAIL: riscv_mcu and cpu_ref differ: '$exp' vs 'out0 256:$cpu'"; exit 1; }
if [ "$MODE" = qemu ]; then
  build=$(sed -n '/: build with$/{n;p;}' "$WORK/codegen.log")
  [ -n "$build" ] || { cat "$WORK/codegen.log"; echo "FAIL: codegen printed no build command"; exit 1; }
  (cd "$WORK" && eval "$build") > "$pkg/build.log" 2>&1 ||
    { tail -20 "$pkg/build.log"; echo "FAIL: build ($MODE) with the printed command:$build"; exit 1; }
  (cd "$pkg" && timeout 600 qemu-system-riscv32 -machine virt -bios none -nographic \
    -semihosting-config enable=on,target=native -icount shift=0 -kernel "$pkg/build/sy_model_main.elf") > "$WORK/out.txt" 2>&1
else
  cmake -S "$pkg" -B "$pkg/build" -DCMAKE_C_FLAGS="-Werror" > "$pkg/build.log" 2>&1 &&
    cmake --build "$pkg/build" >> "$pkg/build.log" 2>&1 || { tail -20 "$pkg/build.log"; echo "FAIL: build ($MODE)"; exit 1; }
  (cd "$pkg" && "$pkg/build/sy_model_main") > "$WORK/out.txt" 2>&1
fi
if ! grep '^out' "$WORK/out.txt" | cmp -s - "$pkg/expected_output.txt"; then
  cat "$WORK/out.txt"
  echo "FAIL: the $MODE run differs from the host run"
  exit 1
fi
echo "ok   int8 table chain ($MODE): 9 ops, all 256 codes, bit-exact with riscv_mcu and cpu_ref; $(grep instret "$WORK/out.txt")"
# ADD, SUB, MUL (tflk_binary.c) and TRANSPOSE (tflk_strided.c) in int8 and
# fp32: a broadcast constant, two activations, a broadcast over two dims; the riscv_mcu host run gives the
# cpu_ref (tflite_math) bytes and the package the same bytes ($MODE)
for t in i8 f32; do
  m=$WORK/bin_chain_$t.tflite pkg=$WORK/pkg_bin_$t
  "$SY" codegen "$m" --target ws63 -o "$pkg" --input "x=$WORK/x_$t.npy" > "$WORK/codegen_$t.log" 2>&1 ||
    { cat "$WORK/codegen_$t.log"; echo "FAIL: codegen bin_chain_$t"; exit 1; }
  [ "$(grep -c 'tflk_binary_' "$pkg/src/model.c")" -eq 3 ] || { echo "FAIL: bin_chain_$t: 3 tflk_binary calls expected"; exit 1; }
  grep -q 'tflk_strided_copy(' "$pkg/src/model.c" || { echo "FAIL: bin_chain_$t: no TRANSPOSE (tflk_strided_copy)"; exit 1; }
  "$SY" run "$m" --input "x=$WORK/x_$t.npy" --output-dir "$WORK/cpu_$t" > "$WORK/run_$t.log" 2>&1 ||
    { cat "$WORK/run_$t.log"; echo "FAIL: the cpu_ref run of bin_chain_$t"; exit 1; }
  exp=$(grep '^out0' "$pkg/expected_output.txt")
  nb=$(echo "$exp" | sed -n 's/^out0 \([0-9]*\):.*/\1/p')
  cpu=$(tail -c "$nb" "$WORK/cpu_$t/output_0.pb" | od -An -tx1 -v | tr -s ' \n' ' ' | sed 's/ $//')
  [ "out0 $nb:$cpu" = "$exp" ] || { echo "FAIL: bin_chain_$t: riscv_mcu and cpu_ref differ"; exit 1; }
  mcu_pkg_run "$MODE" "$pkg" "$WORK/out_$t.txt" || { echo "FAIL: build bin_chain_$t"; exit 1; }
  grep '^out' "$WORK/out_$t.txt" | cmp -s - "$pkg/expected_output.txt" ||
    { cat "$WORK/out_$t.txt"; echo "FAIL: bin_chain_$t: the $MODE run differs from the host run"; exit 1; }
  echo "ok   ADD/MUL/SUB/TRANSPOSE $t chain ($MODE): bit-exact with riscv_mcu and cpu_ref; $(grep instret "$WORK/out_$t.txt")"
done
# int8 POW and PRELU (ops-mcu.md Table A #74, #53; tflk_binary.c): POW and
# PRELU with an fp32 alpha through float (tflk_binary_s8f), PRELU with an
# int8 alpha as TFLite's integer kernel (tflk_prelu_s8; the seed keeps alpha
# fp32, so that one takes rules = tflm). The riscv_mcu host run gives
# cpu_ref's (tflite_math, the same functions) bytes and the package the same
# ($MODE); tests/tflite checks the ops against hand-worked values.
m=$WORK/elem8_chain.tflite pkg=$WORK/pkg_elem8
"$SY" codegen "$m" --target ws63 --rules tflm -o "$pkg" --input "x=$WORK/x_i8.npy" > "$WORK/codegen_elem8.log" 2>&1 ||
  { cat "$WORK/codegen_elem8.log"; echo "FAIL: codegen elem8_chain"; exit 1; }
[ "$(grep -c 'tflk_binary_s8f(' "$pkg/src/model.c")" -eq 2 ] && [ "$(grep -c 'tflk_prelu_s8(' "$pkg/src/model.c")" -eq 1 ] ||
  { echo "FAIL: elem8_chain: want 2 tflk_binary_s8f and 1 tflk_prelu_s8 calls"; exit 1; }
"$SY" run "$m" --input "x=$WORK/x_i8.npy" --output-dir "$WORK/cpu_elem8" > "$WORK/run_elem8.log" 2>&1 ||
  { cat "$WORK/run_elem8.log"; echo "FAIL: the cpu_ref run of elem8_chain"; exit 1; }
exp=$(grep '^out0' "$pkg/expected_output.txt")
cpu=$(tail -c 128 "$WORK/cpu_elem8/output_0.pb" | od -An -tx1 -v | tr -s ' \n' ' ' | sed 's/ $//')
[ "out0 128:$cpu" = "$exp" ] || { echo "FAIL: elem8_chain: riscv_mcu and cpu_ref differ: '$exp' vs 'out0 128:$cpu'"; exit 1; }
mcu_pkg_run "$MODE" "$pkg" "$WORK/out_elem8.txt" || { echo "FAIL: build elem8_chain"; exit 1; }
grep '^out' "$WORK/out_elem8.txt" | cmp -s - "$pkg/expected_output.txt" ||
  { cat "$WORK/out_elem8.txt"; echo "FAIL: elem8_chain: the $MODE run differs from the host run"; exit 1; }
echo "ok   int8 POW/SUB/PRELU/PRELU chain ($MODE): bit-exact with riscv_mcu and cpu_ref; $(grep instret "$WORK/out_elem8.txt")"
# The data-movement, index and comparison kernels (mcu_ops.c: tflk_strided.c
# views, tflk_move.c, tflk_unary.c, tflk_binary.c's comparisons): PAD,
# STRIDED_SLICE, SPLIT, CONCATENATION, DEPTH_TO_SPACE, REVERSE_V2, GATHER,
# MAXIMUM, TILE, then DEQUANTIZE (int8) or ABS and SQRT (fp32); GATHER_ND,
# SCATTER_ND, GREATER, LOGICAL_NOT; RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR,
# REVERSE_SEQUENCE, then CAST (int8) or GREATER, SELECT_V2, CAST, ONE_HOT (fp32:
# mcu_shape.c, tflk_resize.c, tflk_shape.c). Exact operations: the riscv_mcu host run
# gives cpu_ref's (tflite_tensor, tflite_math) bytes and the package the same.
for t in move_chain_i8:x_i8:11 move_chain_f32:x_f32:12 idx_chain:xi:4 shape_chain_i8:x_i8:4 shape_chain_f32:x_f32:7; do
  name=${t%%:*} rest=${t#*:}
  in=${rest%%:*} nodes=${rest#*:}
  m=$WORK/$name.tflite pkg=$WORK/pkg_$name
  "$SY" codegen "$m" --target ws63 -o "$pkg" --input "x=$WORK/$in.npy" > "$WORK/codegen_$name.log" 2>&1 ||
    { cat "$WORK/codegen_$name.log"; echo "FAIL: codegen $name"; exit 1; }
  got=$(grep -c '^    /\* [0-9]' "$pkg/src/model.c")
  [ "$got" -eq "$nodes" ] || { echo "FAIL: $name: $got nodes in the package, want $nodes"; exit 1; }
  "$SY" run "$m" --input "x=$WORK/$in.npy" --output-dir "$WORK/cpu_$name" > "$WORK/run_$name.log" 2>&1 ||
    { cat "$WORK/run_$name.log"; echo "FAIL: the cpu_ref run of $name"; exit 1; }
  exp=$(grep '^out0' "$pkg/expected_output.txt")
  nb=$(echo "$exp" | sed -n 's/^out0 \([0-9]*\):.*/\1/p')
  cpu=$(tail -c "$nb" "$WORK/cpu_$name/output_0.pb" | od -An -tx1 -v | tr -s ' \n' ' ' | sed 's/ $//')
  [ "out0 $nb:$cpu" = "$exp" ] || { echo "FAIL: $name: riscv_mcu and cpu_ref differ: '$exp' vs 'out0 $nb:$cpu'"; exit 1; }
  mcu_pkg_run "$MODE" "$pkg" "$WORK/out_$name.txt" || { echo "FAIL: build $name"; exit 1; }
  grep '^out' "$WORK/out_$name.txt" | cmp -s - "$pkg/expected_output.txt" ||
    { cat "$WORK/out_$name.txt"; echo "FAIL: $name: the $MODE run differs from the host run"; exit 1; }
  echo "ok   $name ($MODE): $nodes nodes bit-exact with riscv_mcu and cpu_ref; $(grep instret "$WORK/out_$name.txt")"
done
# The reductions (mcu_reduce.c, tflk_reduce.c): CUMSUM, L2_NORMALIZATION,
# TOPK_V2, REDUCE_PROD, SUM, MEAN, REDUCE_MIN, REDUCE_MAX in int8 (TFLite's
# integer MEAN/SUM/REDUCE_PROD, REDUCE_MIN between two quantizations) and
# fp32 (with ARG_MAX, ARG_MIN): every output of the riscv_mcu host run is
# cpu_ref's (tflite_math, tflite_nn: the same kernel), and the package's the
# host run's ($MODE). tests/tflite checks each op against hand-worked and
# TFLite-formula values on both providers.
for t in red_chain_i8:xr_i8:8:4 red_chain_f32:xr_f32:10:6; do
  IFS=: read -r name in nodes nout <<< "$t"
  m=$WORK/$name.tflite pkg=$WORK/pkg_$name
  "$SY" codegen "$m" --target ws63 -o "$pkg" --input "x=$WORK/$in.npy" > "$WORK/codegen_$name.log" 2>&1 ||
    { cat "$WORK/codegen_$name.log"; echo "FAIL: codegen $name"; exit 1; }
  got=$(grep -c 'tflk_reduce_run(\|tflk_axis_run(' "$pkg/src/model.c")
  [ "$got" -eq "$nodes" ] || { echo "FAIL: $name: $got reduction calls in the package, want $nodes"; exit 1; }
  "$SY" run "$m" --input "x=$WORK/$in.npy" --output-dir "$WORK/cpu_$name" > "$WORK/run_$name.log" 2>&1 ||
    { cat "$WORK/run_$name.log"; echo "FAIL: the cpu_ref run of $name"; exit 1; }
  for ((o = 0; o < nout; o++)); do
    exp=$(grep "^out$o " "$pkg/expected_output.txt")
    nb=$(echo "$exp" | sed -n "s/^out$o \([0-9]*\):.*/\1/p")
    cpu=$(tail -c "$nb" "$WORK/cpu_$name/output_$o.pb" | od -An -tx1 -v | tr -s ' \n' ' ' | sed 's/ $//')
    [ -n "$nb" ] && [ "out$o $nb:$cpu" = "$exp" ] ||
      { echo "FAIL: $name output $o: riscv_mcu and cpu_ref differ: '$exp' vs 'out$o $nb:$cpu'"; exit 1; }
  done
  mcu_pkg_run "$MODE" "$pkg" "$WORK/out_$name.txt" || { echo "FAIL: build $name"; exit 1; }
  grep '^out' "$WORK/out_$name.txt" | cmp -s - "$pkg/expected_output.txt" ||
    { cat "$WORK/out_$name.txt"; echo "FAIL: $name: the $MODE run differs from the host run"; exit 1; }
  echo "ok   $name ($MODE): $nodes reduction nodes, $nout outputs bit-exact with riscv_mcu and cpu_ref; $(grep instret "$WORK/out_$name.txt")"
done
# TRANSPOSE_CONV into BATCH_MATMUL (mcu_nn.c: tflk_tconv.c, tflk_bmm.c) in
# int8 (per-channel filter) and fp32: cpu_ref's tflite_nn runs the same
# kernels, so the riscv_mcu host run gives its bytes and the package the same
for t in i8 f32; do
  m=$WORK/nn_chain_$t.tflite pkg=$WORK/pkg_nn_$t
  "$SY" codegen "$m" --target ws63 -o "$pkg" --input "x=$WORK/xn_$t.npy" > "$WORK/codegen_nn_$t.log" 2>&1 ||
    { cat "$WORK/codegen_nn_$t.log"; echo "FAIL: codegen nn_chain_$t"; exit 1; }
  grep -q 'tflk_tconv_' "$pkg/src/model.c" && grep -q 'tflk_bmm_' "$pkg/src/model.c" ||
    { echo "FAIL: nn_chain_$t: no tflk_tconv / tflk_bmm call"; exit 1; }
  "$SY" run "$m" --input "x=$WORK/xn_$t.npy" --output-dir "$WORK/cpu_nn_$t" > "$WORK/run_nn_$t.log" 2>&1 ||
    { cat "$WORK/run_nn_$t.log"; echo "FAIL: the cpu_ref run of nn_chain_$t"; exit 1; }
  exp=$(grep '^out0' "$pkg/expected_output.txt")
  nb=$(echo "$exp" | sed -n 's/^out0 \([0-9]*\):.*/\1/p')
  cpu=$(tail -c "$nb" "$WORK/cpu_nn_$t/output_0.pb" | od -An -tx1 -v | tr -s ' \n' ' ' | sed 's/ $//')
  [ "out0 $nb:$cpu" = "$exp" ] || { echo "FAIL: nn_chain_$t: riscv_mcu and cpu_ref differ"; exit 1; }
  mcu_pkg_run "$MODE" "$pkg" "$WORK/out_nn_$t.txt" || { echo "FAIL: build nn_chain_$t"; exit 1; }
  grep '^out' "$WORK/out_nn_$t.txt" | cmp -s - "$pkg/expected_output.txt" ||
    { cat "$WORK/out_nn_$t.txt"; echo "FAIL: nn_chain_$t: the $MODE run differs from the host run"; exit 1; }
  echo "ok   nn_chain_$t ($MODE): TRANSPOSE_CONV + BATCH_MATMUL bit-exact with riscv_mcu and cpu_ref; $(grep instret "$WORK/out_nn_$t.txt")"
done
# int8 CONV_3D, the FULL_QUANT form of ops-mcu.md Table A #2 (mcu_nn.c:
# tflk_conv3d_s8; per-channel filter, int32 bias, SAME, stride_h 2): cpu_ref's
# tflite_nn runs the same kernel, so the riscv_mcu host run gives its bytes and
# the package the same ($MODE); tests/tflite checks the op against TFLite's
# reference integer conv written out in 3-D
m=$WORK/conv3d_i8.tflite pkg=$WORK/pkg_conv3d_i8
"$SY" codegen "$m" --target ws63 -o "$pkg" --input "x=$WORK/xc_i8.npy" > "$WORK/codegen_conv3d_i8.log" 2>&1 ||
  { cat "$WORK/codegen_conv3d_i8.log"; echo "FAIL: codegen conv3d_i8"; exit 1; }
grep -q 'tflk_conv3d_s8(' "$pkg/src/model.c" || { echo "FAIL: conv3d_i8: no tflk_conv3d_s8 call"; exit 1; }
"$SY" run "$m" --input "x=$WORK/xc_i8.npy" --output-dir "$WORK/cpu_conv3d_i8" > "$WORK/run_conv3d_i8.log" 2>&1 ||
  { cat "$WORK/run_conv3d_i8.log"; echo "FAIL: the cpu_ref run of conv3d_i8"; exit 1; }
exp=$(grep '^out0' "$pkg/expected_output.txt")
nb=$(echo "$exp" | sed -n 's/^out0 \([0-9]*\):.*/\1/p')
cpu=$(tail -c "$nb" "$WORK/cpu_conv3d_i8/output_0.pb" | od -An -tx1 -v | tr -s ' \n' ' ' | sed 's/ $//')
[ "$nb" = 96 ] && [ "out0 $nb:$cpu" = "$exp" ] ||
  { echo "FAIL: conv3d_i8: riscv_mcu and cpu_ref differ: '$exp' vs 'out0 $nb:$cpu'"; exit 1; }
mcu_pkg_run "$MODE" "$pkg" "$WORK/out_conv3d_i8.txt" || { echo "FAIL: build conv3d_i8"; exit 1; }
grep '^out' "$WORK/out_conv3d_i8.txt" | cmp -s - "$pkg/expected_output.txt" ||
  { cat "$WORK/out_conv3d_i8.txt"; echo "FAIL: conv3d_i8: the $MODE run differs from the host run"; exit 1; }
echo "ok   conv3d_i8 ($MODE): int8 CONV_3D bit-exact with riscv_mcu and cpu_ref; $(grep instret "$WORK/out_conv3d_i8.txt")"
