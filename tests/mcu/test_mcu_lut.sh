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

# The steps every chain below takes (NAME: $WORK/NAME.tflite, its package
# $WORK/pkg_NAME unless set before; INPUT: x = $WORK/INPUT.npy):
#   chain_codegen NAME INPUT [ARGS...]  codegen --target ws63 ARGS; sets m, pkg
#   chain_cpu_run NAME INPUT            the cpu_ref run of $m into $WORK/cpu_NAME
#   chain_same_as_cpu NAME O [NB]       output O of the riscv_mcu host run (the
#                                       package's expected_output.txt) is the
#                                       bytes of cpu_NAME/output_O.pb (NB bytes)
#   chain_pkg_same NAME                 the package's $MODE run prints the same
chain_codegen() {
  local name=$1 in=$2
  shift 2
  m=$WORK/$name.tflite pkg=$WORK/pkg_$name
  "$SY" codegen "$m" --target ws63 "$@" -o "$pkg" --input "x=$WORK/$in.npy" > "$WORK/codegen_$name.log" 2>&1 ||
    { cat "$WORK/codegen_$name.log"; echo "FAIL: codegen $name"; exit 1; }
}
chain_cpu_run() {
  "$SY" run "$m" --input "x=$WORK/$2.npy" --output-dir "$WORK/cpu_$1" > "$WORK/run_$1.log" 2>&1 ||
    { cat "$WORK/run_$1.log"; echo "FAIL: the cpu_ref run of $1"; exit 1; }
}
chain_same_as_cpu() {
  local name=$1 o=$2 want=${3:-} exp nb cpu
  exp=$(grep "^out$o " "$pkg/expected_output.txt")
  nb=$(echo "$exp" | sed -n "s/^out$o \([0-9]*\):.*/\1/p")
  cpu=$(tail -c "$nb" "$WORK/cpu_$name/output_$o.pb" | od -An -tx1 -v | tr -s ' \n' ' ' | sed 's/ $//')
  [ -n "$nb" ] && { [ -z "$want" ] || [ "$nb" = "$want" ]; } && [ "out$o $nb:$cpu" = "$exp" ] ||
    { echo "FAIL: $name output $o: riscv_mcu and cpu_ref differ: '$exp' vs 'out$o $nb:$cpu'${want:+ (want $want bytes)}"; exit 1; }
}
chain_pkg_same() {
  mcu_pkg_run "$MODE" "$pkg" "$WORK/out_$1.txt" || { echo "FAIL: build $1"; exit 1; }
  grep '^out' "$WORK/out_$1.txt" | cmp -s - "$pkg/expected_output.txt" ||
    { cat "$WORK/out_$1.txt"; echo "FAIL: $1: the $MODE run differs from the host run"; exit 1; }
}
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
chain_cpu_run lut_chain x
chain_same_as_cpu lut_chain 0 256
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
  chain_codegen bin_chain_$t x_$t
  [ "$(grep -c 'tflk_binary_' "$pkg/src/model.c")" -eq 3 ] || { echo "FAIL: bin_chain_$t: 3 tflk_binary calls expected"; exit 1; }
  grep -q 'tflk_strided_copy(' "$pkg/src/model.c" || { echo "FAIL: bin_chain_$t: no TRANSPOSE (tflk_strided_copy)"; exit 1; }
  chain_cpu_run bin_chain_$t x_$t
  chain_same_as_cpu bin_chain_$t 0
  chain_pkg_same bin_chain_$t
  echo "ok   ADD/MUL/SUB/TRANSPOSE $t chain ($MODE): bit-exact with riscv_mcu and cpu_ref; $(grep instret "$WORK/out_bin_chain_$t.txt")"
done
# int8 POW and PRELU (ops-mcu.md Table A #74, #53; tflk_binary.c): POW and
# PRELU with an fp32 alpha through float (tflk_binary_s8f), PRELU with an
# int8 alpha as TFLite's integer kernel (tflk_prelu_s8; the seed keeps alpha
# fp32, so that one takes rules = tflm). The riscv_mcu host run gives
# cpu_ref's (tflite_math, the same functions) bytes and the package the same
# ($MODE); tests/tflite checks the ops against hand-worked values.
chain_codegen elem8_chain x_i8 --rules tflm
[ "$(grep -c 'tflk_binary_s8f(' "$pkg/src/model.c")" -eq 2 ] && [ "$(grep -c 'tflk_prelu_s8(' "$pkg/src/model.c")" -eq 1 ] ||
  { echo "FAIL: elem8_chain: want 2 tflk_binary_s8f and 1 tflk_prelu_s8 calls"; exit 1; }
chain_cpu_run elem8_chain x_i8
chain_same_as_cpu elem8_chain 0 128
chain_pkg_same elem8_chain
echo "ok   int8 POW/SUB/PRELU/PRELU chain ($MODE): bit-exact with riscv_mcu and cpu_ref; $(grep instret "$WORK/out_elem8_chain.txt")"
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
  chain_codegen "$name" "$in"
  got=$(grep -c '^    /\* [0-9]' "$pkg/src/model.c")
  [ "$got" -eq "$nodes" ] || { echo "FAIL: $name: $got nodes in the package, want $nodes"; exit 1; }
  chain_cpu_run "$name" "$in"
  chain_same_as_cpu "$name" 0
  chain_pkg_same "$name"
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
  chain_codegen "$name" "$in"
  got=$(grep -c 'tflk_reduce_run(\|tflk_axis_run(' "$pkg/src/model.c")
  [ "$got" -eq "$nodes" ] || { echo "FAIL: $name: $got reduction calls in the package, want $nodes"; exit 1; }
  chain_cpu_run "$name" "$in"
  for ((o = 0; o < nout; o++)); do
    chain_same_as_cpu "$name" "$o"
  done
  chain_pkg_same "$name"
  echo "ok   $name ($MODE): $nodes reduction nodes, $nout outputs bit-exact with riscv_mcu and cpu_ref; $(grep instret "$WORK/out_$name.txt")"
done
# TRANSPOSE_CONV into BATCH_MATMUL (mcu_nn.c: tflk_tconv.c, tflk_bmm.c) in
# int8 (per-channel filter) and fp32: cpu_ref's tflite_nn runs the same
# kernels, so the riscv_mcu host run gives its bytes and the package the same
for t in i8 f32; do
  chain_codegen nn_chain_$t xn_$t
  grep -q 'tflk_tconv_' "$pkg/src/model.c" && grep -q 'tflk_bmm_' "$pkg/src/model.c" ||
    { echo "FAIL: nn_chain_$t: no tflk_tconv / tflk_bmm call"; exit 1; }
  chain_cpu_run nn_chain_$t xn_$t
  chain_same_as_cpu nn_chain_$t 0
  chain_pkg_same nn_chain_$t
  echo "ok   nn_chain_$t ($MODE): TRANSPOSE_CONV + BATCH_MATMUL bit-exact with riscv_mcu and cpu_ref; $(grep instret "$WORK/out_nn_chain_$t.txt")"
done
# int8 CONV_3D, the FULL_QUANT form of ops-mcu.md Table A #2 (mcu_nn.c:
# tflk_conv3d_s8; per-channel filter, int32 bias, SAME, stride_h 2): cpu_ref's
# tflite_nn runs the same kernel, so the riscv_mcu host run gives its bytes and
# the package the same ($MODE); tests/tflite checks the op against TFLite's
# reference integer conv written out in 3-D
chain_codegen conv3d_i8 xc_i8
grep -q 'tflk_conv3d_s8(' "$pkg/src/model.c" || { echo "FAIL: conv3d_i8: no tflk_conv3d_s8 call"; exit 1; }
chain_cpu_run conv3d_i8 xc_i8
chain_same_as_cpu conv3d_i8 0 96
chain_pkg_same conv3d_i8
echo "ok   conv3d_i8 ($MODE): int8 CONV_3D bit-exact with riscv_mcu and cpu_ref; $(grep instret "$WORK/out_conv3d_i8.txt")"
