#!/usr/bin/env bash
# ONNX Table B operators on the MCU (providers/riscv_mcu/mcu_onnx.c): ONNX's
# own node tests (../shared/testdata/onnx-node), each generated into a
# package by `switchyard codegen` from its model.onnx and test_data_set_0
# inputs and built (MODE host: host compiler; MODE qemu: rv32imfc +
# picolibc under qemu-system-riscv32). Data movement, comparisons and
# logical ops must give ONNX's expected output_0.pb bytes exactly; the float
# functions (whose tolerance against ONNX's values `switchyard conformance`
# checks, mcu.conformance_onnx_node) must give the host run's bytes.
# Then the int8 forms of the one-input functions: gen_qunary_models.py writes
# DQ -> f -> Q models with the expected codes written out from the ONNX
# definitions; cpu_ref and riscv_mcu must give them exactly (one QUnary each),
# and their packages too, on the host and under QEMU; the DQ -> Mul/Sub/
# AveragePool/GlobalAveragePool/Softmax -> Q models must give cpu_ref's codes;
# Greater(OrEqual)/Less(OrEqual) on bool inputs (the seed's "float32, bool"
# A and B) numpy's booleans.
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
  test_bitshift_left_uint8 test_bitshift_right_uint8 test_prelu_broadcast test_greater_equal test_less_equal
  test_greater_equal_bcast test_pow_example test_pow_bcast_scalar test_pow_bcast_array"
approx="test_sigmoid test_selu test_softplus test_erf test_hardsigmoid test_celu
  test_elu test_leakyrelu test_softsign test_thresholdedrelu test_gelu_tanh_2 test_gelu_default_2
  test_softmax_axis_0 test_softmax_default_axis test_averagepool_2d_same_lower test_averagepool_2d_pads
  test_globalaveragepool test_tan test_cos test_sin_example test_swish test_pow test_logsoftmax_axis_1
  test_logsoftmax_default_axis test_logsoftmax_large_number test_logsoftmax_example_1"
# the int8 forms of the one-input functions: DQ -> f -> Q models whose
# expected codes gen_qunary_models.py writes out from the ONNX definitions;
# cpu_ref (ops_quant) and riscv_mcu must both fold them into one QUnary and
# give those codes exactly, then the packages run them below
QDIR=$WORK/qunary
rm -rf "$QDIR"
"${PYTHON:-/usr/bin/python3}" "$(dirname "$0")/gen_qunary_models.py" "$QDIR" > "$WORK/qunary.log" 2>&1 ||
  { cat "$WORK/qunary.log"; fail "gen_qunary_models.py (needs python3 with numpy and onnx; PYTHON=...)"; }
# the QMul/QSub/QAveragePool/QSoftmax models carry no expected output: cpu_ref's becomes it
for q in $(cd "$QDIR" 2>/dev/null && ls -d test_qx_* 2>/dev/null); do
  "$SY" run "$QDIR/$q/model.onnx" --input-dir "$QDIR/$q/test_data_set_0" --output-dir "$QDIR/$q/test_data_set_0" \
    > "$WORK/$q.cpu_ref.log" 2>&1 || { cat "$WORK/$q.cpu_ref.log"; fail "$q: cpu_ref run"; }
done
qcases=$(cd "$QDIR" 2>/dev/null && ls -d test_q_* test_qx_* 2>/dev/null)
bcases=$(cd "$QDIR" 2>/dev/null && ls -d test_qb_* 2>/dev/null)
[ -n "$qcases" ] || fail "no quantized models generated"
INI=$(dirname "$0")/conformance_riscv_mcu.ini
for cfg in default "$INI"; do
  copt=(); [ "$cfg" = default ] || copt=(--config "$cfg")
  res=$("$SY" conformance "$QDIR" "${copt[@]}" 2>&1 | tail -1)
  nq=$(echo "$qcases $bcases" | wc -w)
  [ "$res" = "$nq passed, 0 failed, 0 skipped" ] || { "$SY" conformance "$QDIR" "${copt[@]}" 2>&1 | grep FAIL; fail "QUnary models on $cfg: $res"; }
done
for q in $qcases; do
  "$SY" explain "$QDIR/$q/model.onnx" --config "$INI" 2>&1 | grep -Eq ' Q(Unary|Mul|Sub|AveragePool|Softmax)  *riscv_mcu  *taken' ||
    fail "$q: not folded into one switchyard.quant node on riscv_mcu"
done
echo "ok   $(echo "$qcases" | wc -w) DQ -> op -> Q models: one switchyard.quant node each on riscv_mcu; QUnary gives the written-out codes on cpu_ref and riscv_mcu, QMul/QSub/QAveragePool/QSoftmax cpu_ref's"
exact="$exact $qcases $bcases"
n=0
for t in $exact $approx; do
  d=$NODE/$t
  [ -d "$QDIR/$t" ] && d=$QDIR/$t
  [ -f "$d/model.onnx" ] || { fail "$t: $d/model.onnx not found"; continue; }
  args=()
  while read -r k name; do
    args+=(--input "$name=$d/test_data_set_0/input_$k.pb")
  done < <("$SY" inspect "$d/model.onnx" | sed -n "s/^  input \([0-9]*\) '\([^']*\)'.*/\1 \2/p")
  pkg=$WORK/$t
  "$SY" codegen "$d/model.onnx" --target ws63 -o "$pkg" "${args[@]}" > "$WORK/$t.codegen.log" 2>&1 ||
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
