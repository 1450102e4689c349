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
# The reduction, TopK and CumSum tests give axes and K as graph inputs; the
# seed's rows take them as constants, so they are folded into a copy of the
# test first (/usr/bin/python3 with onnx; CumSum's float64 integers become
# float32, exactly).
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
  test_tril test_triu_square
  test_reduce_max_do_not_keepdims_example test_reduce_min_keepdims_example test_reduce_max_negative_axes_keepdims_random
  test_reduce_sum_keepdims_example test_reduce_prod_keepdims_example test_reduce_l1_do_not_keepdims_example
  test_reduce_sum_square_do_not_keepdims_example test_argmax_keepdims_example_select_last_index
  test_argmax_default_axis_random test_argmin_no_keepdims_random test_argmin_negative_axis_keepdims_example
  test_hardmax_example test_hardmax_axis_1 test_hardmax_one_hot test_top_k test_top_k_negative_axis
  test_cumsum_1d test_cumsum_1d_reverse test_cumsum_1d_reverse_exclusive test_cumsum_2d_axis_0
  test_cumsum_2d_axis_1 test_cumsum_2d_negative_axis
  test_bitshift_left_uint8 test_bitshift_right_uint8 test_prelu_broadcast test_greater_equal test_less_equal
  test_greater_equal_bcast test_pow_example test_pow_bcast_scalar test_pow_bcast_array"
approx="test_sigmoid test_selu test_softplus test_erf test_hardsigmoid test_celu
  test_elu test_leakyrelu test_softsign test_thresholdedrelu test_gelu_tanh_2 test_gelu_default_2
  test_softmax_axis_0 test_softmax_default_axis test_averagepool_2d_same_lower test_averagepool_2d_pads
  test_globalaveragepool test_resize_upsample_scales_linear_align_corners test_batchnorm_example
  test_batchnorm_epsilon test_layer_normalization_4d_axis_negative_2 test_layer_normalization_default_axis
  test_layer_normalization_3d_axis1_epsilon test_instancenorm_example test_instancenorm_epsilon
  test_reduce_sum_keepdims_random test_reduce_mean_do_not_keepdims_random test_reduce_prod_negative_axes_keepdims_random
  test_reduce_l2_keep_dims_random test_reduce_l1_negative_axes_keep_dims_random test_reduce_sum_square_keepdims_random
  test_reduce_log_sum_negative_axes test_reduce_sum_empty_set
  test_reduce_prod_default_axes_keepdims_random test_lpnormalization_default
  test_tan test_cos test_sin_example test_swish test_pow test_logsoftmax_axis_1
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
# prep_case TESTDIR OUTDIR: the test as OUTDIR/model.onnx and
# OUTDIR/test_data_set_0 with graph input 1 (axes, K, CumSum's axis) as an
# initializer holding input_1.pb, and float64 data as float32 when every
# value converts exactly (ONNX's CumSum tests are float64 of small integers)
prep_case() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import os, sys, onnx
import numpy as np
from onnx import numpy_helper
d, out = sys.argv[1], sys.argv[2]
os.makedirs(out + "/test_data_set_0", exist_ok=True)
def load(p):
    t = onnx.TensorProto()
    with open(p, "rb") as f:
        t.ParseFromString(f.read())
    return t
def f32(t):
    if t.data_type != onnx.TensorProto.DOUBLE:
        return t
    a = numpy_helper.to_array(t)
    b = a.astype(np.float32)
    if not np.array_equal(b.astype(np.float64), a):
        sys.exit("%s: a float64 value has no exact float32" % t.name)
    return numpy_helper.from_array(b, t.name)
m = onnx.load(d + "/model.onnx")
for v in list(m.graph.input) + list(m.graph.output) + list(m.graph.value_info):
    if v.type.tensor_type.elem_type == onnx.TensorProto.DOUBLE:
        v.type.tensor_type.elem_type = onnx.TensorProto.FLOAT
ins = [i.name for i in m.graph.input]
for k in range(len(ins)):
    t = f32(load("%s/test_data_set_0/input_%d.pb" % (d, k)))
    if k == 1:  # the constant the seed's row asks for
        t.name = ins[1]
        m.graph.initializer.append(t)
    elif k == 0:
        with open(out + "/test_data_set_0/input_0.pb", "wb") as f:
            f.write(t.SerializeToString())
if len(ins) > 1:
    del m.graph.input[1]
k = 0
while os.path.exists("%s/test_data_set_0/output_%d.pb" % (d, k)):
    with open("%s/test_data_set_0/output_%d.pb" % (out, k), "wb") as f:
        f.write(f32(load("%s/test_data_set_0/output_%d.pb" % (d, k))).SerializeToString())
    k += 1
onnx.save(m, out + "/model.onnx")
PY
}
# int8 ONNX reductions (Table B: "gen", fp32 and int8): ONNX int8 tensors
# carry no scale, so the ops compute on the codes as the integer type
# (docs/mcu.md); the expected outputs are numpy's on the same codes: max/min,
# sums and products in int64 keeping the low 8 bits, the mean and the L2
# root truncated, TopK by a stable sort (ties to the lower index). Written
# as node-test folders into $WORK/gen (axes, K and axis as initializers).
/usr/bin/python3 - "$WORK/gen" <<'PY' || fail "writing the int8 reduction tests"
import math, os, sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto as TP
root = sys.argv[1]
rng = np.random.RandomState(14)
x = rng.randint(-128, 128, size=(3, 4, 5)).astype(np.int8)
w8 = lambda a: (np.asarray(a, dtype=np.int64) & 0xff).astype(np.uint8).view(np.int8)
def red(fn, axes, keep):
    a = x.astype(np.int64)
    return w8(fn(a, axis=tuple(axes), keepdims=bool(keep)))
def mean(a, axis, keepdims):
    n = np.prod([a.shape[i] for i in axis])
    s = np.sum(a, axis=axis, keepdims=keepdims)
    return np.sign(s) * (np.abs(s) // n)
def l2(a, axis, keepdims):
    s = np.sum(a * a, axis=axis, keepdims=keepdims)
    return np.vectorize(math.isqrt)(s)
cases = {
    "int8_reduce_max": ("ReduceMax", [1], 1, red(np.max, [1], 1)),
    "int8_reduce_min": ("ReduceMin", [0, 2], 0, red(np.min, [0, 2], 0)),
    "int8_reduce_sum": ("ReduceSum", [2], 1, red(np.sum, [2], 1)),
    "int8_reduce_mean": ("ReduceMean", [1], 0, red(mean, [1], 0)),
    "int8_reduce_prod": ("ReduceProd", [2], 0, red(np.prod, [2], 0)),
    "int8_reduce_l1": ("ReduceL1", [0], 1, red(lambda a, axis, keepdims: np.sum(np.abs(a), axis=axis, keepdims=keepdims), [0], 1)),
    "int8_reduce_sum_square": ("ReduceSumSquare", [1, 2], 0, red(lambda a, axis, keepdims: np.sum(a * a, axis=axis, keepdims=keepdims), [1, 2], 0)),
    "int8_reduce_l2": ("ReduceL2", [2], 1, red(l2, [2], 1)),
}
def write(name, node, inits, y, idx=None):
    d = os.path.join(root, "test_" + name)
    os.makedirs(d + "/test_data_set_0", exist_ok=True)
    outs = [helper.make_tensor_value_info(node.output[0], TP.INT8, y.shape)]
    if idx is not None:
        outs.append(helper.make_tensor_value_info(node.output[1], TP.INT64, idx.shape))
        with open(d + "/test_data_set_0/output_1.pb", "wb") as f:
            f.write(numpy_helper.from_array(idx, node.output[1]).SerializeToString())
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TP.INT8, x.shape)], outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    onnx.save(m, d + "/model.onnx")
    with open(d + "/test_data_set_0/input_0.pb", "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    with open(d + "/test_data_set_0/output_0.pb", "wb") as f:
        f.write(numpy_helper.from_array(y, node.output[0]).SerializeToString())
for name, (op, axes, keep, y) in cases.items():
    node = helper.make_node(op, ["x", "axes"], ["y"], keepdims=keep)
    write(name, node, [numpy_helper.from_array(np.array(axes, np.int64), "axes")], y)
cs = w8(np.cumsum(x.astype(np.int64)[:, ::-1, :], axis=1)[:, ::-1, :])  # reverse, inclusive
write("int8_cumsum", helper.make_node("CumSum", ["x", "axis"], ["y"], reverse=1),
      [numpy_helper.from_array(np.array(1, np.int32), "axis")], cs)
order = np.argsort(-x.astype(np.int64), axis=2, kind="stable")[:, :, :2]
write("int8_top_k", helper.make_node("TopK", ["x", "k"], ["y", "i"], axis=-1),
      [numpy_helper.from_array(np.array([2], np.int64), "k")], np.take_along_axis(x, order, axis=2), order)
PY
int8="test_int8_reduce_max test_int8_reduce_min test_int8_reduce_sum test_int8_reduce_mean test_int8_reduce_prod
  test_int8_reduce_l1 test_int8_reduce_sum_square test_int8_reduce_l2 test_int8_cumsum test_int8_top_k"
exact="$exact $int8"
# int8 Div, Max and Min of ONNX (Table B #45, #97, #98: "gen", fp32 and
# int8): the codes as integers, as ONNX defines the ops on int8 tensors;
# ONNX's own test_div_int8 and test_max_int8, and broadcasting cases whose
# expected outputs are Python's integer arithmetic (division truncated
# toward zero, -128 / -1 wrapping to -128). cpu_ref and riscv_mcu must give
# them exactly (`switchyard conformance`), the packages below on host and QEMU.
G8=$WORK/gen8
rm -rf "$G8"
/usr/bin/python3 - "$G8" <<'PY' || fail "writing the int8 Div/Max/Min tests"
import os, sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto as TP
root = sys.argv[1]
rng = np.random.RandomState(45)
def tdiv(a, b):
    q = [int(int(x) / int(y)) for x, y in zip(a.ravel(), b.ravel())]  # exact for int8 operands
    return np.array([(v + 128) % 256 - 128 for v in q], np.int8).reshape(a.shape)
def write(name, op, a, b, y):
    d = os.path.join(root, "test_" + name)
    os.makedirs(d + "/test_data_set_0", exist_ok=True)
    node = helper.make_node(op, ["a", "b"], ["y"])
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("a", TP.INT8, a.shape),
                                         helper.make_tensor_value_info("b", TP.INT8, b.shape)],
                          [helper.make_tensor_value_info("y", TP.INT8, y.shape)])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]), d + "/model.onnx")
    for k, (nm, t) in enumerate((("a", a), ("b", b))):
        with open(d + "/test_data_set_0/input_%d.pb" % k, "wb") as f:
            f.write(numpy_helper.from_array(t, nm).SerializeToString())
    with open(d + "/test_data_set_0/output_0.pb", "wb") as f:
        f.write(numpy_helper.from_array(y, "y").SerializeToString())
a = rng.randint(-128, 128, size=(2, 3, 4)).astype(np.int8)
a[0, 0, 0] = -128
b = rng.randint(-128, 128, size=(3, 1)).astype(np.int8)
b[b == 0] = 7
b[0, 0] = -1
ab = np.broadcast_to(b, a.shape)
write("int8_div_bcast", "Div", a, b, tdiv(a, ab))
write("int8_max_bcast", "Max", a, b, np.maximum(a, ab))
c = rng.randint(-128, 128, size=(4,)).astype(np.int8)
write("int8_min_bcast", "Min", a, c, np.minimum(a, np.broadcast_to(c, a.shape)))
PY
for t in test_div_int8 test_max_int8; do cp -r "$NODE/$t" "$G8/"; done
g8cases="test_int8_div_bcast test_int8_max_bcast test_int8_min_bcast test_div_int8 test_max_int8"
# PRelu and Pow in full-quant int8 (Table B #57, #116): DQ(x), DQ(slope /
# exponent) -> op -> Q, which the QDQ pass folds into one QPRelu / QPow;
# ConvTranspose int8 (#113): DQ(x), DQ(W) [, DQ(b)] -> ConvTranspose -> Q,
# one QConvTranspose (stride 2 with pads and output_padding, W per channel
# on axis 1 with an int32 bias; a SAME_UPPER same-size one), whose host run
# must also give cpu_ref's bytes (same_as_cpu_ref below).
# The expected codes are numpy's float32 of ONNX's definitions (x - zp
# times the scale, the op, x / y_scale rounded half to even plus zp,
# saturated), and ONNX Runtime must give them too (below) when it is here.
/usr/bin/python3 - "$G8" <<'PY' || fail "writing the QDQ PRelu/Pow tests"
import os, sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto as TP
root = sys.argv[1]
f32 = np.float32
np.seterr(all="ignore")  # x = 0 to a negative power is inf, saturated by QuantizeLinear
def deq(q, s, z):
    return (q.astype(np.int32) - z).astype(f32) * f32(s)
def quant(v, s, z):
    r = np.rint(v / f32(s)) + z
    return np.clip(np.nan_to_num(r, nan=-128.0, posinf=127.0, neginf=-128.0), -128, 127).astype(np.int8)
def save_case(name, g, feeds, y, check=False):
    """test_NAME/: g as an opset 17, IR 8 model, the (name, array) feeds as
    input_K.pb and y as output_0.pb"""
    d = os.path.join(root, "test_" + name)
    os.makedirs(d + "/test_data_set_0", exist_ok=True)
    mo = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    mo.ir_version = 8
    if check:
        onnx.checker.check_model(mo)
    onnx.save(mo, d + "/model.onnx")
    for k, (nm, t) in enumerate(feeds):
        with open(d + "/test_data_set_0/input_%d.pb" % k, "wb") as f:
            f.write(numpy_helper.from_array(t, nm).SerializeToString())
    with open(d + "/test_data_set_0/output_0.pb", "wb") as f:
        f.write(numpy_helper.from_array(y, "y").SerializeToString())
def write(name, op, x, xq, b, bq, b_const, yq, y):
    inits = [numpy_helper.from_array(np.array(v, dtype=t), n) for n, v, t in
             (("xs", xq[0], f32), ("xz", xq[1], np.int8), ("bs", bq[0], f32), ("bz", bq[1], np.int8),
              ("ys", yq[0], f32), ("yz", yq[1], np.int8))]
    ins = [helper.make_tensor_value_info("x", TP.INT8, x.shape)]
    if b_const:
        inits.append(numpy_helper.from_array(b, "b"))
    else:
        ins.append(helper.make_tensor_value_info("b", TP.INT8, b.shape))
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
             helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"]),
             helper.make_node(op, ["xf", "bf"], ["yf"]),
             helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"])]
    g = helper.make_graph(nodes, name, ins, [helper.make_tensor_value_info("y", TP.INT8, y.shape)], inits)
    save_case(name, g, [("x", x)] + ([] if b_const else [("b", b)]), y)
x = (np.arange(60) * 37 % 256 - 128).astype(np.int8).reshape(1, 3, 4, 5)
xq, sq, yq = (0.05, 3), (0.02, 0), (0.04, -2)
for name, sl in (("qdq_prelu_channel", np.array([10, -25, 60], np.int8).reshape(3, 1, 1)),
                 ("qdq_prelu_scalar", np.array([-13], np.int8))):
    xf, sf = deq(x, *xq), deq(sl, *sq)
    write(name, "PRelu", x, xq, sl, sq, True, yq, quant(np.where(xf < 0, sf * xf, xf), *yq))
xp = (np.arange(24) * 11 % 256 - 128).astype(np.int8).reshape(2, 3, 4)
xpq, eq, ypq = (0.03, -128), (0.02, 0), (0.2, -100)
e = np.array([50, 100, -40, 75], np.int8)
write("qdq_pow_const", "Pow", xp, xpq, e, eq, True, ypq,
      quant(np.power(deq(xp, *xpq), deq(e, *eq)), *ypq))
e2 = (np.arange(24) * 29 % 200 - 100).astype(np.int8).reshape(2, 3, 4)
write("qdq_pow_runtime", "Pow", xp, xpq, e2, eq, False, ypq,
      quant(np.power(deq(xp, *xpq), deq(e2, *eq)), *ypq))
# QAdd / QSub / QMul with numpy broadcasting either way (ops-mcu.md rows 12-14:
# 2-4D, broadcasting): y = clamp(round((sa (a - za) op sb (b - zb)) / sy) + zy).
# The data are checked to land nowhere within 1e-4 codes of a rounding tie
# (float32 orders of the op differ by ~1e-5 codes at 127), so every code
# must match exactly.
def bin_case(name, op, x, xq, b, bq, b_const, yq):
    xf, bf = deq(x, *xq).astype(np.float64), deq(b, *bq).astype(np.float64)
    v = {"Add": xf + bf, "Sub": xf - bf, "Mul": xf * bf}[op] / yq[0]
    near = np.abs(np.abs(v - np.floor(v)) - 0.5) < 1e-4
    assert not near.any(), "%s: %d elements near a rounding tie" % (name, near.sum())
    y = np.clip(np.rint(v) + yq[1], -128, 127).astype(np.int8)
    write(name, op, x, xq, b, bq, b_const, yq, y)
qa = (np.arange(24) * 53 % 256 - 128).astype(np.int8).reshape(2, 3, 4)
bin_case("qdq_add_bcast_b", "Add", qa, (0.05, 3), np.array([[17], [-90], [101]], np.int8), (0.03, -7), True, (0.07, 2))
bin_case("qdq_sub_bcast_a", "Sub", np.array([[40], [-77], [120]], np.int8), (0.0437, -2), qa, (0.0513, 3), False,
         (0.0917, -5))
qm = (np.arange(10) * 29 % 256 - 128).astype(np.int8).reshape(1, 2, 1, 5)
bm = (np.arange(12) * 71 % 256 - 128).astype(np.int8).reshape(3, 1, 4, 1)
bin_case("qdq_mul_bcast_both", "Mul", qm, (0.031, 1), bm, (0.027, -3), False, (0.11, 4))
bin_case("qdq_add_bcast_both", "Add", qa.reshape(2, 1, 12)[:, :, :3].copy(), (0.0471, 3),
         np.array([[60], [-30], [5], [-128]], np.int8), (0.0613, 1), True, (0.0829, -3))
# LogSoftmax (#112: any axis): y = x - max - log(sum(exp(x - max))) in float64, quantized
def lsm_case(name, x, axis, xq, yq):
    xf = deq(x, *xq).astype(np.float64)
    m = xf.max(axis=axis, keepdims=True)
    v = xf - m - np.log(np.exp(xf - m).sum(axis=axis, keepdims=True))
    y = quant(v.astype(f32), *yq)
    inits = [numpy_helper.from_array(np.array(v_, dtype=t), n) for n, v_, t in
             (("xs", xq[0], f32), ("xz", xq[1], np.int8), ("ys", yq[0], f32), ("yz", yq[1], np.int8))]
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
             helper.make_node("LogSoftmax", ["xf"], ["yf"], axis=axis),
             helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"])]
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TP.INT8, x.shape)],
                          [helper.make_tensor_value_info("y", TP.INT8, y.shape)], inits)
    save_case(name, g, [("x", x)], y)
xl = (np.arange(2 * 5 * 7) * 53 % 256 - 128).astype(np.int8).reshape(2, 5, 7)
lsm_case("qdq_logsoftmax_last", xl, -1, (0.04, 5), (0.07, 120))
lsm_case("qdq_logsoftmax_axis1", xl, 1, (0.04, 5), (0.07, 120))
# BatchNormalization (#36, inference) and LayerNormalization (#37) with
# constant fp32 parameters, in float64 from the ONNX definitions
def norm_case(name, op, x, params, attrs, ref, xq, yq):
    y = quant(ref(deq(x, *xq).astype(np.float64)).astype(f32), *yq)
    inits = [numpy_helper.from_array(np.array(v_, dtype=t), n) for n, v_, t in
             (("xs", xq[0], f32), ("xz", xq[1], np.int8), ("ys", yq[0], f32), ("yz", yq[1], np.int8))]
    inits += [numpy_helper.from_array(v_.astype(f32), n) for n, v_ in params]
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
             helper.make_node(op, ["xf"] + [n for n, _ in params], ["yf"], **attrs),
             helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"])]
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TP.INT8, x.shape)],
                          [helper.make_tensor_value_info("y", TP.INT8, y.shape)], inits)
    save_case(name, g, [("x", x)], y)
xn = (np.arange(2 * 3 * 4 * 5) * 71 % 256 - 128).astype(np.int8).reshape(2, 3, 4, 5)
sc, bi = np.array([0.5, -1.25, 2.0]), np.array([0.1, 0.3, -0.7])
mu, va = np.array([0.2, -0.4, 1.0]), np.array([1.5, 0.25, 4.0])
c4 = lambda a: a.reshape(1, 3, 1, 1)
norm_case("qdq_batchnorm", "BatchNormalization", xn, [("s", sc), ("b", bi), ("m", mu), ("v", va)], {"epsilon": 1e-3},
          lambda v: (v - c4(mu)) / np.sqrt(c4(va) + np.float64(f32(1e-3))) * c4(sc) + c4(bi), (0.05, 2), (0.06, -3))
ls = np.linspace(-1.5, 1.5, 20).reshape(4, 5)  # X.shape[axis:]
lb = np.linspace(0.4, -0.6, 20).reshape(4, 5)
def ln_ref(v):
    r = v.reshape(2, 3, 20)
    m = r.mean(axis=-1, keepdims=True)
    s2 = ((r - m) ** 2).mean(axis=-1, keepdims=True)
    return ((r - m) / np.sqrt(s2 + np.float64(f32(1e-5))) * ls.astype(f32).ravel() + lb.astype(f32).ravel()).reshape(v.shape)
norm_case("qdq_layernorm", "LayerNormalization", xn, [("s", ls), ("b", lb)], {"axis": 2}, ln_ref, (0.05, 2), (0.03, 0))
# LpNormalization (#38, p = 1 or 2): x / ||x||_p along the axis
def lp_ref(axis, p_):
    def f(v):
        nrm = np.abs(v).sum(axis=axis, keepdims=True) if p_ == 1 else np.sqrt((v * v).sum(axis=axis, keepdims=True))
        return np.where(nrm > 0, v / np.where(nrm > 0, nrm, 1), 0)
    return f
norm_case("qdq_lpnorm_p2", "LpNormalization", xn, [], {"axis": 1, "p": 2}, lp_ref(1, 2), (0.05, 2), (1.0 / 128, 0))
norm_case("qdq_lpnorm_p1", "LpNormalization", xn, [], {"axis": -1, "p": 1}, lp_ref(-1, 1), (0.05, 2), (1.0 / 128, 0))
# ConvTranspose from its definition (Table B #113 int8): every input pixel
# scatters x * W into y[o] with o = i * stride - pad_begin + k * dilation
def convt_ref(x, w, b, strides, pads_begin, out_hw):
    n, c, ih, iw = x.shape
    _, m, kh, kw = w.shape
    y = np.zeros((n, m, out_hw[0], out_hw[1]), np.float64)
    for ci in range(c):
        for mo in range(m):
            for i in range(ih):
                for j in range(iw):
                    for a in range(kh):
                        for bb in range(kw):
                            oy, ox = i * strides[0] - pads_begin[0] + a, j * strides[1] - pads_begin[1] + bb
                            if 0 <= oy < out_hw[0] and 0 <= ox < out_hw[1]:
                                y[:, mo, oy, ox] += x[:, ci, i, j] * w[ci, mo, a, bb]
    return y + (0 if b is None else b.reshape(1, -1, 1, 1))
def convt_case(name, x, xq, w, wq, b, yq, attrs, strides, pads_begin, out_hw):
    """DQ(x), DQ(W) [, DQ(int32 b)] -> ConvTranspose -> Q: one QConvTranspose (Table B #113 int8)"""
    ws, wz = np.array(wq[0], f32), np.array(wq[1], np.int8)
    per_ch = ws.ndim == 1
    wf = (w.astype(np.int32) - (wz.reshape(1, -1, 1, 1) if per_ch else wz)).astype(f32) * \
         (ws.reshape(1, -1, 1, 1) if per_ch else ws)
    xf = deq(x, *xq)
    bf = None
    inits = [numpy_helper.from_array(np.array(v_, dtype=t), n_) for n_, v_, t in
             (("xs", xq[0], f32), ("xz", xq[1], np.int8), ("ys", yq[0], f32), ("yz", yq[1], np.int8))]
    inits += [numpy_helper.from_array(w, "w"), numpy_helper.from_array(ws, "ws"), numpy_helper.from_array(wz, "wz")]
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], **({"axis": 1} if per_ch else {}))]
    ins = ["xf", "wf"]
    if b is not None:  # int32 codes of scale x_scale * w_scale, as a quantizer writes them
        bs = (f32(xq[0]) * ws).astype(f32)
        inits += [numpy_helper.from_array(b, "b"), numpy_helper.from_array(bs, "bs"),
                  numpy_helper.from_array(np.zeros(bs.shape, np.int32), "bz")]
        nodes.append(helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"], **({"axis": 0} if per_ch else {})))
        bf = b.astype(f32) * bs
        ins.append("bf")
    nodes += [helper.make_node("ConvTranspose", ins, ["yf"], **attrs),
              helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"])]
    y = quant(convt_ref(xf.astype(np.float64), wf.astype(np.float64), None if bf is None else bf.astype(np.float64),
                        strides, pads_begin, out_hw).astype(f32), *yq)
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TP.INT8, x.shape)],
                          [helper.make_tensor_value_info("y", TP.INT8, y.shape)], inits)
    save_case(name, g, [("x", x)], y, check=True)
# stride 2 with pads and output_padding, W per channel on axis 1, an int32 bias:
# out = 2 (4 - 1) + 1 + 3 - (1 + 0) = 9 high, 2 (5 - 1) + 0 + 3 - (1 + 1) = 9 wide
xt = (np.arange(1 * 3 * 4 * 5) * 37 % 256 - 128).astype(np.int8).reshape(1, 3, 4, 5)
wt = (np.arange(3 * 2 * 3 * 3) * 53 % 255 - 127).astype(np.int8).reshape(3, 2, 3, 3)
bt = np.array([1500, -2300], np.int32)
convt_case("qdq_convtranspose_s2_pads", xt, (0.05, 3), wt, ([0.004, 0.007], [0, 0]), bt, (0.35, -5),
           {"strides": [2, 2], "pads": [1, 1, 0, 1], "output_padding": [1, 0]}, (2, 2), (1, 1), (9, 9))
# "same" size: stride 1, a 2x2 kernel, auto_pad SAME_UPPER (total pad 1 per axis, at the end), W per tensor
# with a zero point, no bias
ws_ = (np.arange(3 * 4 * 2 * 2) * 29 % 251 - 125).astype(np.int8).reshape(3, 4, 2, 2)
convt_case("qdq_convtranspose_same", xt, (0.05, 3), ws_, (0.006, 2), None, (0.12, 7),
           {"auto_pad": "SAME_UPPER", "kernel_shape": [2, 2]}, (1, 1), (0, 0), (4, 5))
def concat_case(name, xs, qs, yq, axis):
    """DQ(x_i) ... -> Concat -> Q with inputs of other scales and zero points
    than the output's: one QConcat (Table B #17 Concat, int8); an input with
    the output's encoding is copied. The scales make every step exact in
    float32 (DequantizeLinear, x / y_scale), so numpy's codes are ONNX's."""
    names = ["x%d" % i for i in range(len(xs))]
    inits, nodes = [], []
    for nm, (s_, z_) in zip(names, qs):
        inits += [numpy_helper.from_array(np.array(s_, f32), nm + "_s"), numpy_helper.from_array(np.array(z_, np.int8), nm + "_z")]
        nodes.append(helper.make_node("DequantizeLinear", [nm, nm + "_s", nm + "_z"], [nm + "_f"]))
    inits += [numpy_helper.from_array(np.array(yq[0], f32), "ys"), numpy_helper.from_array(np.array(yq[1], np.int8), "yz")]
    nodes += [helper.make_node("Concat", [nm + "_f" for nm in names], ["yf"], axis=axis),
              helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"])]
    y = quant(np.concatenate([deq(x, *q) for x, q in zip(xs, qs)], axis=axis), *yq)
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info(nm, TP.INT8, x.shape) for nm, x in zip(names, xs)],
                          [helper.make_tensor_value_info("y", TP.INT8, y.shape)], inits)
    save_case(name, g, list(zip(names, xs)), y)
# every code of each requantized input: a scale 0.5 zp 3 (multiplier 1: a shift
# of the zero point, saturating), b 0.25 zp -2 (multiplier 0.5: ties half to
# even), c the output's 0.5 zp 1 (copied), concatenated on the channel axis
ca = (np.arange(256) - 128).astype(np.int8).reshape(2, 4, 32)
cb = (np.arange(256) * 37 % 256 - 128).astype(np.int8).reshape(2, 4, 32)
cc = (np.arange(64) * 53 % 256 - 128).astype(np.int8).reshape(2, 1, 32)
concat_case("qdq_concat", [ca, cb, cc], [(0.5, 3), (0.25, -2), (0.5, 1)], (0.5, 1), 1)
# the last axis (axis -1), 4-D: multipliers 1.5 and 0.25 (quarters; ties half to even)
cd = (np.arange(96) * 29 % 256 - 128).astype(np.int8).reshape(1, 2, 3, 16)
ce = (np.arange(48) * 71 % 256 - 128).astype(np.int8).reshape(1, 2, 3, 8)
concat_case("qdq_concat_last", [cd, ce], [(0.75, -5), (0.125, 0)], (0.5, -3), -1)
PY
qdqcases="test_qdq_prelu_channel test_qdq_prelu_scalar test_qdq_pow_const test_qdq_pow_runtime
  test_qdq_add_bcast_b test_qdq_sub_bcast_a test_qdq_mul_bcast_both test_qdq_add_bcast_both
  test_qdq_logsoftmax_last test_qdq_logsoftmax_axis1 test_qdq_batchnorm test_qdq_layernorm test_qdq_lpnorm_p2
  test_qdq_lpnorm_p1 test_qdq_convtranspose_s2_pads test_qdq_convtranspose_same test_qdq_concat test_qdq_concat_last"
ORTM=${ORT_NODE_MODULES:-/work/deps/node_modules}
if command -v node > /dev/null && [ -d "$ORTM/onnxruntime-node" ]; then
  mkdir -p "$WORK/ort_qdq"
  for t in $qdqcases; do cp -r "$G8/$t" "$WORK/ort_qdq/"; done
  ORT_NODE_MODULES=$ORTM node "$(dirname "$0")/../../tools/dev/ort_conformance.mjs" "$WORK/ort_qdq" > "$WORK/ort_qdq.log" 2>&1
  if [ "$(grep -c "	pass" "$WORK/ort_qdq.log")" -eq 18 ]; then
    echo "ok   ONNX Runtime gives the QDQ PRelu/Pow/broadcast Add/Sub/Mul/LogSoftmax/BatchNormalization/LayerNormalization/LpNormalization/ConvTranspose/Concat cases' expected codes"
  else
    cat "$WORK/ort_qdq.log"
    fail "ONNX Runtime differs from the QDQ PRelu/Pow/LogSoftmax/normalization/ConvTranspose/Concat expected codes"
  fi
else
  echo "note ONNX Runtime (node, onnxruntime-node in ORT_NODE_MODULES) absent: the QDQ PRelu/Pow codes rest on numpy's formula"
fi
for cfg in default "$(dirname "$0")/conformance_riscv_mcu.ini"; do
  copt=(); [ "$cfg" = default ] || copt=(--config "$cfg")
  res=$("$SY" conformance "$G8" "${copt[@]}" 2>&1 | tail -1)
  [ "$res" = "23 passed, 0 failed, 0 skipped" ] || { "$SY" conformance "$G8" "${copt[@]}" 2>&1 | grep FAIL; fail "int8 Div/Max/Min, QDQ PRelu/Pow/LogSoftmax/ConvTranspose/Concat on $cfg: $res"; }
done
for t in $qdqcases; do
  "$SY" explain "$G8/$t/model.onnx" --config "$(dirname "$0")/conformance_riscv_mcu.ini" 2>&1 | grep -Eq ' Q(PRelu|Pow|Add|Sub|Mul|LogSoftmax|Norm|ConvTranspose|Concat)  *riscv_mcu  *taken' ||
    fail "$t: not folded into one QPRelu/QPow/QLogSoftmax/QNorm/QConvTranspose/QConcat node on riscv_mcu"
done
echo "ok   int8 Div/Max/Min on the codes and QDQ PRelu/Pow/broadcast Add/Sub/Mul/LogSoftmax/normalizations/ConvTranspose/Concat (one QPRelu/QPow/QAdd/QSub/QMul/QLogSoftmax/QNorm/QConvTranspose/QConcat each): cpu_ref and riscv_mcu give ONNX's, Python's and numpy's outputs"
# QDQ ops riscv_mcu declines on a 5-D output, quoting the rule (strict:
# nothing else may take them), one row each:
#   QNODE|OP|A SHAPE|B SHAPE|ATTRS (Python keywords)|the message's rule|what the ok line says
# a 5-D Concat of int8 codes with other scales: the QConcat is declined
# quoting Table B #17's "2-4D"; a QAdd whose output is 5-D (A [2, 1, 3, 2, 2]
# broadcast with B [3, 1, 1]): declined, rank over 4
qdq_5d_rows=(
  "QConcat|Concat|1,2,2,2,2|1,1,2,2,2|axis=1|QConcat: the output must be 2-4D, got rank 5 (ops-mcu.md Table B #17 Concat|a 5-D QConcat is declined quoting ops-mcu.md Table B #17 Concat"
  "QAdd|Add|2,1,3,2,2|3,1,1||QAdd: A, B and the output at most 4-D|a QAdd with a 5-D output is declined (A, B and the output at most 4-D)"
)
for row in "${qdq_5d_rows[@]}"; do
  IFS='|' read -r qnode op ashape bshape attrs rule okline <<< "$row"
  model=$WORK/${qnode,,}_5d.onnx
  /usr/bin/python3 - "$model" "$op" "$ashape" "$bshape" "$attrs" <<'PY' || fail "writing the 5-D QDQ $op model"
import sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto as TP
path, op, ashape, bshape, attrs = sys.argv[1:]
shape = lambda s: [int(d) for d in s.split(",")]
kw = {k: int(v) for k, v in (a.split("=") for a in attrs.split(",") if a)}
inits = [numpy_helper.from_array(np.array(v, t), n) for n, v, t in
         (("as", 0.5, np.float32), ("az", 3, np.int8), ("bs", 0.25, np.float32), ("bz", -2, np.int8),
          ("ys", 0.5, np.float32), ("yz", 1, np.int8))]
nodes = [helper.make_node("DequantizeLinear", ["a", "as", "az"], ["af"]),
         helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"]),
         helper.make_node(op, ["af", "bf"], ["yf"], **kw),
         helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"])]
g = helper.make_graph(nodes, op.lower() + "_5d", [helper.make_tensor_value_info("a", TP.INT8, shape(ashape)),
                                                  helper.make_tensor_value_info("b", TP.INT8, shape(bshape))],
                      [helper.make_tensor_value_info("y", TP.INT8, None)], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, path)
PY
  out=$("$SY" explain "$model" --config "$(dirname "$0")/conformance_riscv_mcu.ini" 2>&1) &&
    fail "a 5-D $qnode was placed on riscv_mcu alone"
  echo "$out" | grep -qF "$rule" || fail "the 5-D $qnode was refused without the rule '$rule': $out"
  echo "ok   $okline"
done
exact="$exact $g8cases $qdqcases"
# The nn rows (mcu_nn.c, mcu_quant.c): ONNX's node tests feed weights,
# scales and zero points as graph inputs, which the seed wants constant
# (ops-mcu.md Table B #87, #113, ...): onnx_const_inputs.py makes a copy
# with those inputs initializers (the expected outputs stay ONNX's), and
# onnx_nn_cases.py writes the rows no node test covers with constant weights
# (Gemm transA, batched MatMul with a constant B, 5-D Conv, an LSTM with
# Y, Y_h and Y_c, GRUs bidirectional and reverse, fp32 RNNs over the eleven
# activations with clip and sequence_lens, Einsums (fp32, int8, int32; ONNX's
# test_einsum_transpose as float32), Unique (terminal and read by a Neg), int8 QLinearConv and
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
ONNX_NODE=$NODE "$PY" "$(dirname "$0")/onnx_nn_cases.py" "$gen" || fail "onnx_nn_cases.py (needs $PY with numpy and onnx)"
for t in test_matmul_4d test_matmul_2d; do cp -r "$NODE/$t" "$gen/"; done
"$SY" conformance "$gen" --config "$(dirname "$0")/conformance_riscv_mcu.ini" > "$WORK/conformance.log" 2>&1 ||
  { cat "$WORK/conformance.log"; fail "the nn rows on riscv_mcu differ from ONNX's / numpy's outputs"; }
grep -q ' 0 failed, 0 skipped' "$WORK/conformance.log" || { cat "$WORK/conformance.log"; fail "nn rows: not all passed"; }
# Unique (mcu_unique_* above: numpy's np.unique): its output length depends on the data. Y, indices and
# counts that no node reads are planned at their bound (ABI 1.6), so the packages below hold them there and
# report the run's count; a Unique whose Y feeds another node (mcu_unique_then_neg) keeps the node-by-node
# session, which no package can hold: codegen refuses it with the seed's rule
t=mcu_unique_then_neg
if "$SY" codegen "$gen/$t/model.onnx" --target ws63 -o "$WORK/$t" --input "x=$gen/$t/test_data_set_0/input_0.pb" \
    > "$WORK/$t.codegen.log" 2>&1; then
  fail "$t: codegen wrote a package for a Unique whose Y another node reads"
elif ! grep -q 'must be terminal graph outputs' "$WORK/$t.codegen.log"; then
  cat "$WORK/$t.codegen.log"; fail "$t: codegen refused without the seed's rule"
else
  echo "ok   $t: conformance on riscv_mcu's host run; codegen refuses (Y read by Neg: not a terminal output)"
fi
uniq_cases="mcu_unique_f32_unsorted mcu_unique_f32_axis_unsorted mcu_unique_int8_sorted_axis mcu_unique_int8_unsorted
  mcu_unique_uint8_sorted mcu_unique_int32_unsorted"
exact="$exact $uniq_cases"
exact="$exact test_convtranspose test_convtranspose_pads test_convtranspose_dilations test_convtranspose_autopad_same
  test_convtranspose_pad test_qlinearmatmul_2D_int8_float32 test_matmulinteger test_convinteger_without_padding
  mcu_qlinearconv_int8 mcu_qlinearmatmul_3d_int8 mcu_einsum_int8_matmul mcu_einsum_int8_diagonal_sum
  mcu_einsum_int32_batch mcu_einsum_uint8_matmul test_einsum_transpose_f32"
approx="$approx test_matmul_4d test_matmul_2d mcu_gemm_transA_transB mcu_gemm_transA mcu_matmul_3d_const_b
  mcu_conv3d_pads_strides test_lstm_defaults test_lstm_with_initial_bias mcu_lstm_y_yh_yc test_gru_defaults
  test_gru_with_initial_bias mcu_gru_bidir_lbr mcu_gru_reverse mcu_rnn_forward mcu_rnn_bidir_relu_leaky_clip
  mcu_rnn_reverse_seq_lens mcu_rnn_bidir_affine_scaledtanh mcu_rnn_bidir_hardsigmoid_elu
  mcu_rnn_bidir_softsign_softplus mcu_rnn_thresholdedrelu mcu_einsum_matmul mcu_einsum_batch_matmul
  mcu_einsum_transpose_4d mcu_einsum_diagonal mcu_einsum_reduce mcu_einsum_three_inputs mcu_einsum_implicit
  mcu_einsum_outer"
# the tests whose inputs 1.. are the seed's offline constants (Resize's sizes
# and scales, OneHot's depth and values, Split's split, Slice's starts, ends,
# axes and steps, Pad's pads): their values become initializers
# (onnx_bake_inputs.py), as a converted model carries them
baked="test_resize_upsample_sizes_nearest test_resize_downsample_sizes_nearest
  test_resize_upsample_sizes_nearest_floor_align_corners test_resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric
  test_resize_upsample_scales_linear_align_corners test_onehot_negative_indices test_onehot_out_of_range_indices
  test_split_variable_parts_2d_opset13 test_split_1d_uneven_split_opset18 test_slice_neg test_slice_default_axes
  test_slice_end_out_of_bounds test_slice_negative_axes test_edge_pad test_reflect_pad"
# riscv_mcu and cpu_ref run one shared kernel for these: byte-equal outputs
same_as_cpu_ref="$uniq_cases mcu_rnn_forward mcu_rnn_bidir_relu_leaky_clip mcu_rnn_reverse_seq_lens mcu_rnn_bidir_affine_scaledtanh
  mcu_rnn_bidir_hardsigmoid_elu mcu_rnn_bidir_softsign_softplus mcu_rnn_thresholdedrelu mcu_einsum_matmul
  mcu_einsum_batch_matmul mcu_einsum_transpose_4d mcu_einsum_diagonal mcu_einsum_reduce mcu_einsum_three_inputs
  mcu_einsum_implicit mcu_einsum_outer mcu_einsum_int8_matmul mcu_einsum_int8_diagonal_sum mcu_einsum_int32_batch
  mcu_einsum_uint8_matmul test_einsum_transpose_f32 test_qdq_convtranspose_s2_pads test_qdq_convtranspose_same
  test_qdq_concat test_qdq_concat_last"
n=0
for t in $exact $approx; do
  d=$NODE/$t
  [ -d "$gen/$t" ] && d=$gen/$t
  [ -d "$QDIR/$t" ] && d=$QDIR/$t
  [ -d "$WORK/gen/$t" ] && d=$WORK/gen/$t
  [ -d "$G8/$t" ] && d=$G8/$t
  if [[ $t == test_reduce_* || $t == test_top_k* || $t == test_cumsum_* ]] && [ "$d" = "$NODE/$t" ]; then
    # the seed's rows take axes, K and CumSum's axis as constants (Table B #49-#55, #58, #76,
    # #77, #92, #102): a copy of the test with input 1 folded in (and float64 as float32)
    prep_case "$d" "$WORK/src_$t" || { fail "$t: preparing the constant-axes copy"; continue; }
    d=$WORK/src_$t
  fi
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
    [ "out0 $nb:$ref" = "$exp" ] || { fail "$t: riscv_mcu differs from the reference output_0.pb"; continue; }
  fi
  if [[ " ${same_as_cpu_ref//$'\n'/ } " == *" $t "* ]]; then
    # the kernels cpu_ref shares with riscv_mcu (plugin_sdk/kernels): cpu_ref's run gives the same bytes
    rm -rf "$WORK/$t.cpu_ref"
    "$SY" run "$model" --input-dir "$d/test_data_set_0" --output-dir "$WORK/$t.cpu_ref" > "$WORK/$t.cpu_ref.log" 2>&1 ||
      { cat "$WORK/$t.cpu_ref.log"; fail "$t: cpu_ref run"; continue; }
    k=0 same=1
    while grep -q "^out$k " "$pkg/expected_output.txt"; do
      nb=$(sed -n "s/^out$k \([0-9]*\):.*/\1/p" "$pkg/expected_output.txt")
      ref=$(tail -c "$nb" "$WORK/$t.cpu_ref/output_$k.pb" | od -An -tx1 -v | tr -s ' \n' ' ' | sed 's/ $//')
      [ "out$k $nb:$ref" = "$(grep "^out$k " "$pkg/expected_output.txt")" ] || same=0
      k=$((k + 1))
    done
    [ "$same" = 1 ] || { fail "$t: riscv_mcu differs from cpu_ref"; continue; }
  fi
  mcu_pkg_run "$MODE" "$pkg" "$WORK/$t.out" 300 || { fail "$t: build"; continue; }
  grep '^out' "$WORK/$t.out" | cmp -s - "$pkg/expected_output.txt" ||
    { cat "$WORK/$t.out"; fail "$t: the $MODE run differs from the host run"; continue; }
  n=$((n + 1))
  ref_of=ONNX
  [ "$d" = "$WORK/gen/$t" ] && ref_of=numpy
  [ "$d" = "$G8/$t" ] && [[ $t == test_int8_* ]] && ref_of=Python
  [ "$d" = "$G8/$t" ] && [[ $t == test_qdq_* ]] && ref_of=numpy
  echo "ok   $t ($MODE): bit-exact with the host run$([[ " ${exact//$'\n'/ } " == *" $t "* ]] && echo " and $ref_of's output_0.pb")$([[ " ${same_as_cpu_ref//$'\n'/ } " == *" $t "* ]] && echo " and cpu_ref"); $(grep instret "$WORK/$t.out")"
done
[ "$fails" -eq 0 ] || exit 1
echo "ok   $n ONNX node tests on the MCU ($MODE)"
