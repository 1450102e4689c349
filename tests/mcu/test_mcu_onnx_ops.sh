#!/usr/bin/env bash
# ONNX Table B operators on the MCU (providers/riscv_mcu/mcu_onnx.c): ONNX's
# own node tests (../shared/testdata/onnx-node), each generated into a
# package by `switchyard codegen` from its model.onnx and test_data_set_0
# inputs and built (MODE host: host compiler; MODE qemu: rv32imfc +
# picolibc under qemu-system-riscv32). Data movement, comparisons and
# logical ops must give ONNX's expected output_0.pb bytes exactly; the float
# functions (whose tolerance against ONNX's values `switchyard conformance`
# checks, mcu.conformance_onnx_node) must give the host run's bytes.
#
#   test_mcu_onnx_ops.sh SWITCHYARD SHARED_DIR WORK_DIR host|qemu
#
# Exit 77 (skipped) without the shared test data, or in qemu mode without the
# cross toolchain, picolibc or QEMU.
set -u
SY=$1 SHARED=$2 WORK=$3 MODE=$4
. "$(dirname "$0")/mcu_common.sh"
NODE=$SHARED/testdata/onnx-node
[ -d "$NODE" ] || { echo "SKIP: $NODE not found (the ONNX node tests live in the shared folder)"; exit 77; }
mcu_prepare "$MODE" "$WORK"
exact="test_gather_negative_indices test_gathernd_example_int32 test_scatter_elements_with_negative_indices
  test_scatter_with_axis test_transpose_all_permutations_3 test_concat_3d_axis_negative_2
  test_depthtospace_crd_mode_example test_depthtospace_example test_spacetodepth_example test_xor_bcast4v2d
  test_greater test_not_2d test_abs test_neg_example test_floor test_max_float32 test_min_two_inputs
  test_concat_2d_axis_0 test_gather_2d_indices test_transpose_all_permutations_5
  test_maxpool_2d_pads test_maxpool_1d_default test_globalmaxpool
  test_split_variable_parts_2d_opset13 test_split_equal_parts_1d_opset13 test_split_1d_uneven_split_opset18
  test_slice_neg test_slice_default_axes test_slice_end_out_of_bounds test_slice_negative_axes
  test_edge_pad test_reflect_pad test_resize_upsample_sizes_nearest test_resize_downsample_sizes_nearest
  test_resize_upsample_sizes_nearest_floor_align_corners test_resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric
  test_reversesequence_batch test_onehot_negative_indices test_onehot_out_of_range_indices test_gather_elements_0
  test_tril test_triu_square"
approx="test_sigmoid test_selu test_softplus test_erf test_hardsigmoid test_celu
  test_elu test_leakyrelu test_softsign test_thresholdedrelu test_gelu_tanh_2 test_gelu_default_2
  test_softmax_axis_0 test_softmax_default_axis test_averagepool_2d_same_lower test_averagepool_2d_pads
  test_globalaveragepool test_resize_upsample_scales_linear_align_corners test_batchnorm_example
  test_batchnorm_epsilon test_layer_normalization_4d_axis_negative_2 test_layer_normalization_default_axis
  test_layer_normalization_3d_axis1_epsilon test_instancenorm_example test_instancenorm_epsilon"
# The nn rows (mcu_nn.c, mcu_quant.c): ONNX's node tests feed weights,
# scales and zero points as graph inputs, which the seed wants constant
# (ops-mcu.md Table B #87, #113, ...): onnx_const_inputs.py makes a copy
# with those inputs initializers (the expected outputs stay ONNX's), and
# onnx_nn_cases.py writes the rows no node test covers with constant weights
# (Gemm transA, batched MatMul with a constant B, 5-D Conv, an LSTM with
# Y, Y_h and Y_c, GRUs bidirectional and reverse, int8 QLinearConv and
# 3-D QLinearMatMul) with numpy's
# outputs. `switchyard conformance` checks every one of them on riscv_mcu
# alone against those outputs (float tolerance), the loop below host/QEMU.
PY=${SY_PYTHON:-/usr/bin/python3}
gen=$WORK/onnx
mkdir -p "$gen"
const_cases="test_convtranspose:W test_convtranspose_pads:W test_convtranspose_dilations:W
  test_convtranspose_autopad_same:W test_convtranspose_pad:W
  test_qlinearmatmul_2D_int8_float32:a_scale,a_zero_point,b_scale,b_zero_point,y_scale,y_zero_point
  test_matmulinteger:a_zero_point,b_zero_point test_convinteger_without_padding:x_zero_point
  test_lstm_defaults:W,R test_lstm_with_initial_bias:W,R,B test_gru_defaults:W,R test_gru_with_initial_bias:W,R,B"
for c in $const_cases; do
  t=${c%%:*}
  "$PY" "$(dirname "$0")/onnx_const_inputs.py" "$NODE/$t" "$gen/$t" ${c#*:} 2> "$WORK/$t.gen.log" ||
    { cat "$WORK/$t.gen.log"; fail "$t: onnx_const_inputs.py (needs $PY with the onnx package)"; }
done
"$PY" "$(dirname "$0")/onnx_nn_cases.py" "$gen" || fail "onnx_nn_cases.py (needs $PY with numpy and onnx)"
for t in test_matmul_4d test_matmul_2d; do cp -r "$NODE/$t" "$gen/"; done
"$SY" conformance "$gen" --config "$(dirname "$0")/conformance_riscv_mcu.ini" > "$WORK/conformance.log" 2>&1 ||
  { cat "$WORK/conformance.log"; fail "the nn rows on riscv_mcu differ from ONNX's / numpy's outputs"; }
grep -q ' 0 failed, 0 skipped' "$WORK/conformance.log" || { cat "$WORK/conformance.log"; fail "nn rows: not all passed"; }
exact="$exact test_convtranspose test_convtranspose_pads test_convtranspose_dilations test_convtranspose_autopad_same
  test_convtranspose_pad test_qlinearmatmul_2D_int8_float32 test_matmulinteger test_convinteger_without_padding
  mcu_qlinearconv_int8 mcu_qlinearmatmul_3d_int8"
approx="$approx test_matmul_4d test_matmul_2d mcu_gemm_transA_transB mcu_gemm_transA mcu_matmul_3d_const_b
  mcu_conv3d_pads_strides test_lstm_defaults test_lstm_with_initial_bias mcu_lstm_y_yh_yc test_gru_defaults
  test_gru_with_initial_bias mcu_gru_bidir_lbr mcu_gru_reverse"
# the tests whose inputs 1.. are the seed's offline constants (Resize's sizes
# and scales, OneHot's depth and values, Split's split, Slice's starts, ends,
# axes and steps, Pad's pads): their values become initializers
# (onnx_bake_inputs.py), as a converted model carries them
baked="test_resize_upsample_sizes_nearest test_resize_downsample_sizes_nearest
  test_resize_upsample_sizes_nearest_floor_align_corners test_resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric
  test_resize_upsample_scales_linear_align_corners test_onehot_negative_indices test_onehot_out_of_range_indices
  test_split_variable_parts_2d_opset13 test_split_1d_uneven_split_opset18 test_slice_neg test_slice_default_axes
  test_slice_end_out_of_bounds test_slice_negative_axes test_edge_pad test_reflect_pad"
n=0
for t in $exact $approx; do
  d=$NODE/$t
  [ -d "$gen/$t" ] && d=$gen/$t
  [ -f "$d/model.onnx" ] || { fail "$t: $d/model.onnx not found"; continue; }
  model=$d/model.onnx
  if [[ " ${baked//$'\n'/ } " == *" $t "* ]]; then
    if ! "$PY" -c 'import onnx' 2> /dev/null; then
      fail "$t: $PY with the onnx module (python3-onnx, tools/dev/install-deps.sh) makes its constant inputs initializers"
      continue
    fi
    model=$WORK/$t.onnx
    "$PY" "$(dirname "$0")/onnx_bake_inputs.py" "$d" "$model" || { fail "$t: onnx_bake_inputs.py"; continue; }
  fi
  args=()
  while read -r k name; do
    args+=(--input "$name=$d/test_data_set_0/input_$k.pb")
  done < <("$SY" inspect "$model" | sed -n "s/^  input \([0-9]*\) '\([^']*\)'.*/\1 \2/p")
  pkg=$WORK/$t
  "$SY" codegen "$model" --target ws63 -o "$pkg" "${args[@]}" > "$WORK/$t.codegen.log" 2>&1 ||
    { cat "$WORK/$t.codegen.log"; fail "$t: codegen"; continue; }
  exp=$(grep '^out0' "$pkg/expected_output.txt")
  if [[ " ${exact//$'\n'/ } " == *" $t "* ]]; then
    nb=$(echo "$exp" | sed -n 's/^out0 \([0-9]*\):.*/\1/p')
    ref=$(tail -c "$nb" "$d/test_data_set_0/output_0.pb" | od -An -tx1 -v | tr -s ' \n' ' ' | sed 's/ $//')
    [ "out0 $nb:$ref" = "$exp" ] || { fail "$t: riscv_mcu differs from ONNX's output_0.pb"; continue; }
  fi
  if [ "$MODE" = qemu ]; then
    cmake -S "$pkg" -B "$pkg/build" -DCMAKE_TOOLCHAIN_FILE="$pkg/toolchain-riscv32.cmake" > "$pkg/build.log" 2>&1 &&
      cmake --build "$pkg/build" >> "$pkg/build.log" 2>&1 || { tail -20 "$pkg/build.log"; fail "$t: build"; continue; }
    (cd "$pkg" && timeout 300 qemu-system-riscv32 -machine virt -bios none -nographic \
      -semihosting-config enable=on,target=native -icount shift=0 -kernel "$pkg/build/sy_model_main.elf") > "$WORK/$t.out" 2>&1
  else
    cmake -S "$pkg" -B "$pkg/build" -DCMAKE_C_FLAGS="-Werror" > "$pkg/build.log" 2>&1 &&
      cmake --build "$pkg/build" >> "$pkg/build.log" 2>&1 || { tail -20 "$pkg/build.log"; fail "$t: build"; continue; }
    (cd "$pkg" && "$pkg/build/sy_model_main") > "$WORK/$t.out" 2>&1
  fi
  grep '^out' "$WORK/$t.out" | cmp -s - "$pkg/expected_output.txt" ||
    { cat "$WORK/$t.out"; fail "$t: the $MODE run differs from the host run"; continue; }
  n=$((n + 1))
  echo "ok   $t ($MODE): bit-exact with the host run$([[ " ${exact//$'\n'/ } " == *" $t "* ]] && echo " and ONNX's output_0.pb"); $(grep instret "$WORK/$t.out")"
done
[ "$fails" -eq 0 ] || exit 1
echo "ok   $n ONNX node tests on the MCU ($MODE)"
