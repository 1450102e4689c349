#!/usr/bin/env bash
# FP32 on-device training (seed 001 §4, ws63): `switchyard codegen --train
# --mode fp32` writes a package that trains a float model on the device,
# batch 1, its forward in tflk's float kernels and its backward and ONNX
# Momentum/Adam update in plugin_sdk/kernels/trk.c, the code the host
# trainer's `train` plugin runs. Built for rv32imfc and run under
# qemu-system-riscv32 (MODE qemu) or natively (MODE host), N steps on the
# first N Fashion-MNIST training images leave the trained tensors within
# 1e-6 relative of the host trainer's after the same steps (issue #15's rule;
# tests/mcu/train_f32_compare.py says per tensor how). Twenty-eight configurations:
# a small CNN (tests/mcu/train_f32_model.py) trained whole with SGD momentum
# (200 steps) and with Adam (100 steps), its fully connected layers as a
# MatMul then a Gemm with transB = 0 (momentum) and as a Gemm with transB = 0
# then a MatMul (Adam), B [K, O] in both, the same with the FP32 rows'
# one-input layers (Pad, Abs, Transpose, Slice, then ReduceMean and Flatten
# with momentum, or ReduceSum, Squeeze and Reshape with Adam; each again
# with the Slice's steps [1, 2, 3, 1]; a Slice and a ReduceMean at rank 8, and
# again with steps [1, 1, 2, 1, 1, 1, 2, 3]: the host's SliceGrad), the
# element-wise rows with constants (Div by a frozen one, Mul, Sub and Add of
# trained ones; Div broadcasting a frozen constant, |o| / c[2, 1, 1], and a
# constant dividend, c[1, 28] / (|o| + 1); the activation stretched by a Div,
# r[1, 2, 28, 1] / c[1, 1, 1, 2] and c / (r + 1); two activations of different
# shapes, ra[1, 2, 28, 1] / (ra as [1, 2, 1, 28] + 1), both stretched; of two ranks, |o| / (rm[1, 28] + 1)
# and rm / (|o| + 1); then two activations of one shape: a residual |o| + o, a
# product |o|·o, a quotient o / (|o| + 1), a value with itself, |o|·|o|
# then that plus itself then that concatenated with itself on the width
# axis, and a Concat of o and |o| on the channel axis and
# of |o| and o on the width axis, each over its input's buffer, and the first again with its front frozen), and graphs/fashion_cnn.onnx's last layer (its
# 401,408 frozen fc1 weights const in flash; its frozen front in place: two
# Concat(self)s over their inputs, the depthwise Conv over the last one's
# output, the trained tensors the out-of-place package's bits), a stride-2 depthwise
# Conv in a frozen front over its input (fc2 trained) and out of place (fc1
# and fc2: its output outlives the forward). Refused: a plan over 256 KB
# (fashion_cnn whole), a layer the package does not run (a MaxPool in the
# frozen front), a MaxPool on the gradient path, a Transpose moving the
# batch axis and a trained stride-2 Conv (each quoting seed 001's row), hi3066 with the seed's sentence.
#
#   test_mcu_train_f32.sh SWITCHYARD SOURCE_DIR WORK_DIR host|qemu
set -u
SY=$1 SRC=$2 WORK=$3 MODE=$4
. "$(dirname "$0")/mcu_common.sh"
mcu_need_fashion_mnist
mcu_prepare "$MODE" "$WORK"
tiny=$WORK/tiny_cnn.onnx
/usr/bin/python3 "$SRC/tests/mcu/train_f32_model.py" "$tiny" || { echo "FAIL: the test model"; exit 1; }
while read -r name opts; do
  # shellcheck disable=SC2086 # opts are the generator's words
  /usr/bin/python3 "$SRC/tests/mcu/train_f32_model.py" "$WORK/tiny_$name.onnx" $opts ||
    { echo "FAIL: the test model $name"; exit 1; }
done <<'EOF'
shapes_mean --shapes mean
shapes_sum --shapes sum
shapes_mean_steps --shapes mean --steps
shapes_sum_steps --shapes sum --steps
rank8 --shapes rank8
rank8_steps --shapes rank8 --steps
elt --shapes elt
residual --shapes elt --residual
product --shapes elt --product
quotient --shapes elt --quotient
self --shapes elt --self
concat --shapes elt --concat
concat_w --shapes elt --concat-w
const_div --shapes elt --const-dividend
bcast_div --shapes elt --bcast-div
stretch_div --shapes elt --stretch-div
stretch_dividend --shapes elt --stretch-dividend
bcast_quot --shapes elt --bcast-quotient
bcast_rank --shapes elt --bcast-rank
bcast_rank_div --shapes elt --bcast-rank-dividend
stride2 --stride2
fc_matmul --fc matmul
fc_kn --fc kn
maxpool --maxpool
batch_t --batch-transpose
relus40 --relus 40
EOF

run_cfg() { # NAME MODEL STEPS ARGS...
  local name=$1 model=$2 steps=$3
  shift 3
  local pkg=$WORK/pkg_$name
  "$SY" codegen --train --mode fp32 "$model" --target ws63 --data "$data" -o "$pkg" --steps "$steps" \
      --sram-budget 256K "$@" > "$WORK/codegen_$name.log" 2>&1 ||
    { cat "$WORK/codegen_$name.log"; fail "$name: codegen --train --mode fp32"; return; }
  grep "RAM plan" "$WORK/codegen_$name.log"
  mcu_pkg_run "$MODE" "$pkg" "$pkg/out.txt" 900 sy_train_main || { fail "$name: build"; return; }
  [ "$mcu_run_rc" = 0 ] || { tail -5 "$pkg/out.txt"; fail "$name: the package failed"; return; }
  if /usr/bin/python3 "$SRC/tests/mcu/train_f32_compare.py" "$pkg/out.txt" "$pkg/expected_output.txt"; then
    echo "ok   $name: $steps FP32 steps on $MODE give the host trainer's tensors within 1e-6 ($(grep '^steps ' "$pkg/out.txt"))"
  else
    fail "$name: the trained tensors differ from the host trainer's"
  fi
}

run_cfg tiny_sgd "$tiny" 200 --trainable all --optimizer sgd --momentum 0.9 --lr 0.005
run_cfg tiny_adam "$tiny" 100 --trainable all --optimizer adam --lr 0.002
# B [K, O]: held transposed in the package (tflk_fc_f32's [O, K]), printed back in the model's layout
run_cfg fc_matmul "$WORK/tiny_fc_matmul.onnx" 200 --trainable all --optimizer sgd --momentum 0.9 --lr 0.005
run_cfg fc_kn "$WORK/tiny_fc_kn.onnx" 100 --trainable all --optimizer adam --lr 0.002
grep -q "B \[1568, 8\] in the model, held transposed \[8, 1568\]" "$WORK/pkg_fc_matmul/src/train.c" &&
  grep -q 'put_t("w6", w6, 10, 8);' "$WORK/pkg_fc_matmul/src/train.c" ||
  fail "fc_matmul: train.c does not hold B transposed and print it back"
run_cfg shapes_mean "$WORK/tiny_shapes_mean.onnx" 200 --trainable all --optimizer sgd --momentum 0.9 --lr 0.005
run_cfg shapes_sum "$WORK/tiny_shapes_sum.onnx" 100 --trainable all --optimizer adam --lr 0.002
run_cfg shapes_mean_steps "$WORK/tiny_shapes_mean_steps.onnx" 200 --trainable all --optimizer sgd --momentum 0.9 \
  --lr 0.005
run_cfg shapes_sum_steps "$WORK/tiny_shapes_sum_steps.onnx" 100 --trainable all --optimizer adam --lr 0.002
# the Slice and ReduceMean rows at rank 8 (their "rank 1-8"): tflk's strided copy and reduction and trk's
# backwards at TFLK_BIN_RANK 8
run_cfg rank8 "$WORK/tiny_rank8.onnx" 200 --trainable all --optimizer sgd --momentum 0.9 --lr 0.005
grep -q "static const tflk_strided sl5 = {.rank = 8" "$WORK/pkg_rank8/src/train.c" &&
  grep -q "trk_slice_grad(8, " "$WORK/pkg_rank8/src/train.c" && grep -q "trk_reduce_grad(8, " "$WORK/pkg_rank8/src/train.c" ||
  fail "rank8: train.c does not slice and reduce at rank 8"
# a Slice with steps at rank 8: the host trainer's backward is the train plugin's SliceGrad
# (trk_slice_step_grad, dY scattered at its own rank), the package's the same kernel
run_cfg rank8_steps "$WORK/tiny_rank8_steps.onnx" 200 --trainable all --optimizer sgd --momentum 0.9 --lr 0.005
grep -q "trk_slice_step_grad(8, xd5, yd5, st5, sp5, g, h);" "$WORK/pkg_rank8_steps/src/train.c" ||
  fail "rank8_steps: train.c does not scatter dy at the steps at rank 8"
grep -q 'SliceGrad' "$WORK/pkg_rank8_steps/artifacts/training.onnx" ||
  fail "rank8_steps: the host trainer's graph has no SliceGrad"
run_cfg elt "$WORK/tiny_elt.onnx" 200 --trainable all --optimizer sgd --momentum 0.9 --lr 0.005
run_cfg residual "$WORK/tiny_residual.onnx" 200 --trainable all --optimizer sgd --momentum 0.9 --lr 0.005
run_cfg product "$WORK/tiny_product.onnx" 200 --trainable all --optimizer sgd --momentum 0.9 --lr 0.005
run_cfg quotient "$WORK/tiny_quotient.onnx" 100 --trainable all --optimizer adam --lr 0.002
# seed 001's Div row allows broadcasting: |o| / c[2, 1, 1] and c[1, 28] / (|o| + 1), the constants
# broadcast in tflk_binary_f32's walk (strides 0), the activation's gradient the host's at its own shape
run_cfg bcast_div "$WORK/tiny_bcast_div.onnx" 200 --trainable all --optimizer sgd --momentum 0.9 --lr 0.005
run_cfg const_div "$WORK/tiny_const_div.onnx" 100 --trainable all --optimizer adam --lr 0.002
grep -q "the constant \[1, 2, 1, 1\] broadcast with the input" "$WORK/pkg_bcast_div/src/train.c" &&
  grep -q "the constant \[1, 1, 1, 28\] broadcast with the input" "$WORK/pkg_const_div/src/train.c" ||
  fail "bcast_div, const_div: train.c does not broadcast the constants"
# the activation stretched by the Div (the row allows broadcasting): r [1, 2, 28, 1] / c[1, 1, 1, 2] and
# c[1, 1, 1, 2] / (r + 1), [1, 2, 28, 2]; the input's gradient is the host's at the output's shape summed
# over the stretched axis (its ReduceToShape), tflk_reduce_run into a buffer of the input's shape
run_cfg stretch_div "$WORK/tiny_stretch_div.onnx" 200 --trainable all --optimizer sgd --momentum 0.9 --lr 0.005
run_cfg stretch_dividend "$WORK/tiny_stretch_dividend.onnx" 100 --trainable all --optimizer adam --lr 0.002
grep -q "tflk_reduce_run(&rg7, g, h);" "$WORK/pkg_stretch_div/src/train.c" &&
  grep -q "tflk_reduce_run(&rg8, g, h);" "$WORK/pkg_stretch_dividend/src/train.c" ||
  fail "stretch_div, stretch_dividend: train.c does not sum the gradient over the stretched axis"
# two activations of different shapes (the Div row allows broadcasting): ra [1, 2, 28, 1] divided by
# den [1, 2, 1, 28], both stretched to [1, 2, 28, 28]; trk_div_bcast_grad sums each operand's gradient
# over its stretched axis (the host's ReduceToShape, in its order), the divisor's into h, the dividend's
# into gp9 until the backward reaches its layer
run_cfg bcast_quot "$WORK/tiny_bcast_quot.onnx" 200 --trainable all --optimizer sgd --momentum 0.9 --lr 0.005
grep -q "trk_div_bcast_grad(4, yd9, od9, xd9, g, a9, a8, gp9, h);" "$WORK/pkg_bcast_quot/src/train.c" &&
  grep -q "static const tflk_binary el9 = {.op = TFLK_DIV, .rank = 4, .dims = {1, 2, 28, 28}, .sa = {0, 28, 1, 0}, .sb = {56, 28, 0, 1}" \
    "$WORK/pkg_bcast_quot/src/train.c" ||
  fail "bcast_quot: train.c does not broadcast the two activations against each other"
# two activations of different ranks (numpy's alignment from the last axis): |o| [1, 2, 28, 28] by
# den [1, 28], and rm [1, 28] by |o| + 1; the rank-2 operand is passed at rank 4 as [1, 1, 1, 28]
# (the same floats: its own batch axis one of the stretched axes), so trk_div_bcast_grad sums its
# gradient over the three leading axes, the host's ReduceToShape to its rank-2 shape
run_cfg bcast_rank "$WORK/tiny_bcast_rank.onnx" 200 --trainable all --optimizer sgd --momentum 0.9 --lr 0.005
run_cfg bcast_rank_div "$WORK/tiny_bcast_rank_div.onnx" 100 --trainable all --optimizer adam --lr 0.002
grep -q "trk_div_bcast_grad(4, yd8, od8, xd8, g, a8, a7, gp8, h);" "$WORK/pkg_bcast_rank/src/train.c" &&
  grep -q "static const int32_t xd8\[4\] = {1, 1, 1, 28};" "$WORK/pkg_bcast_rank/src/train.c" &&
  grep -q "trk_div_bcast_grad(4, yd8, xd8, od8, g, a8, a6, h, gp8);" "$WORK/pkg_bcast_rank_div/src/train.c" ||
  fail "bcast_rank, bcast_rank_div: train.c does not divide the rank-2 operand aligned at rank 4"
run_cfg self "$WORK/tiny_self.onnx" 200 --trainable all --optimizer sgd --momentum 0.9 --lr 0.005
run_cfg concat "$WORK/tiny_concat.onnx" 200 --trainable all --optimizer sgd --momentum 0.9 --lr 0.005
run_cfg concat_w "$WORK/tiny_concat_w.onnx" 100 --trainable all --optimizer adam --lr 0.002
# a Concat of two values over its input's buffer when the input is dead after it (|o|: Abs's backward
# reads o, not |o|): trk_concat_in_place moves the input's rows apart and copies the other's between
# them (the other first on the channel axis, second on the width axis); Concat(d, d) reads its input as
# its other operand and stays out of place. With the front frozen (concat `last:2`: fc1 and fc2) the
# forward's activations are the peak, 26,768 B where the out-of-place Concat took 33,040 B
run_cfg concat_l2 "$WORK/tiny_concat.onnx" 100 --trainable last:2 --optimizer sgd --momentum 0.9 --lr 0.005
grep -q "trk_concat_in_place(1, 1568, 1568, 1, a4, a5);" "$WORK/pkg_concat/src/train.c" &&
  grep -q "trk_concat_in_place(56, 28, 28, 0, a4, a5);" "$WORK/pkg_concat_w/src/train.c" &&
  grep -q "trk_concat_in_place(1, 1568, 1568, 1, a4, a5);" "$WORK/pkg_concat_l2/src/train.c" &&
  grep -q "tflk_concat_run(&cc8, (const void \*const\[\]){a7, a7}, a8);" "$WORK/pkg_self/src/train.c" ||
  fail "concat, concat_w, concat_l2, self: the Concats of two values are not in place over a dead input (or self's is)"
grep -q "RAM plan of a step: peak 26768 bytes = trained tensors 3976 + optimizer state 3976 + workspace 18816 " \
  "$WORK/codegen_concat_l2.log" || fail "concat_l2: not the in-place plan: $(cat "$WORK/codegen_concat_l2.log")"
# a product's backward reads both operands and a quotient's its divisor and
# its own output: they outlive the forward (the plan's lower bound, the most
# bytes live at once, counts each such buffer once: at most the peak)
for name in product quotient bcast_quot bcast_rank bcast_rank_div self concat concat_w; do
  plan=$(grep "RAM plan" "$WORK/codegen_$name.log")
  pk=$(echo "$plan" | sed -n 's/.*peak \([0-9]*\) bytes.*/\1/p')
  lb=$(echo "$plan" | sed -n 's/.*lower bound \([0-9]*\) bytes.*/\1/p')
  [ -n "$pk" ] && [ -n "$lb" ] && [ "$lb" -le "$pk" ] && [ "$pk" -le 262144 ] ||
    fail "$name: the plan's lower bound '$lb' is not at most its peak '$pk' (within 256 KB): $plan"
done
# the small CNN's two Relus write over their inputs (nothing reads a Relu's
# input after its forward; its backward takes the mask from its output):
# Concat 1,568 + Conv/Relu 1,568 + fc1/Relu 8 + logits 10 floats = 12,616
# bytes, where a buffer per Relu needed 18,920
plan=$(grep "RAM plan" "$WORK/codegen_tiny_sgd.log")
echo "$plan" | grep -q "alone: activations 12616," || fail "tiny_sgd: the Relus are not in place: $plan"
# the gradients share the arena with the activations by lifetime (each
# born after the loss takes the floats of what is dead by then; a Conv's
# weight gradient is one channel's at a time): 25,120 bytes of workspace
# where the activations took 12,616 and the gradients 18,888 bytes of their
# own (peak 132,784); the self CNN's three pending gradients likewise (peak
# 115,016 before, gradients 50,472)
echo "$plan" | grep -q "peak 126400 bytes = trained tensors 50640 + optimizer state 50640 + workspace 25120 .*lower bound 126400 bytes" ||
  fail "tiny_sgd: not the arena of activations and gradients: $plan"
plan=$(grep "RAM plan" "$WORK/codegen_self.log")
echo "$plan" | grep -q "peak 70816 bytes = trained tensors 11888 + optimizer state 11888 + workspace 47040 .*lower bound 70816 bytes" ||
  fail "self: not the arena of activations and gradients: $plan"
[ "$(grep -c "in place over its input" "$WORK/pkg_tiny_sgd/src/train.c")" = 2 ] ||
  fail "tiny_sgd: train.c does not say both Relus are in place"
run_cfg fashion_last1 "$SRC/graphs/fashion_cnn.onnx" 100 --trainable last:1 --optimizer sgd --momentum 0 --lr 0.01
# the frozen front's activations share one arena by lifetime and only fc2's
# input (64 floats) and the logits outlive the forward. Nothing reads the
# first two Concat(self)s' outputs after the next Concat, nor the last one's
# after the Conv: the second and third Concats take their input's buffer as
# their first half (one copy each), the frozen depthwise Conv writes over
# the third's output (trk_dw_conv_in_place keeps 2 input rows of 28 floats)
# and its Relu over that, so one 6,272-float buffer holds them all: the
# largest working sets are fc1's, its 6,272-float input and 64-float output,
# and the Conv's 6,272 + 56, 6,336 floats = 25,344 bytes. Out of place, the
# last Concat's input and output (9,408 floats) and the Conv's (two
# 6,272-float halves) exist together: the plan was 55,376 bytes, workspace
# 50,176 (37,632 with the Conv alone in place); keeping every activation,
# 100,600 bytes (activations 94,632); with gradient buffers of their own,
# 56,144 (gradients 768: fc2's 64-float row now takes arena floats).
plan=$(grep "RAM plan" "$WORK/codegen_fashion_last1.log")
echo "$plan" | grep -q "peak 30544 bytes = trained tensors 2600 + optimizer state 2600 + workspace 25344 (activations and gradients in one arena placed by lifetime; alone: activations 25344, gradients 512); lower bound 30544 bytes" ||
  fail "fashion_last1: not the lifetime plan with the Concats and the Conv in place: $plan"
[ "$(grep -c "its input the first half" "$WORK/pkg_fashion_last1/src/train.c")" = 2 ] ||
  fail "fashion_last1: the second and third Concat(self) are not in place"
grep -q "trk_dw_conv_in_place(8, 28, 28, 3, 3, 1, 1, w3, a0, ring3);" "$WORK/pkg_fashion_last1/src/train.c" &&
  grep -q "static float \*const ring3 = sy_act + 6272;" "$WORK/pkg_fashion_last1/src/train.c" ||
  fail "fashion_last1: the depthwise Conv does not run in place over the Concat's output"
# the in-place Conv forms the sums of the out-of-place one (train.trk_kernels
# checks the kernel bit for bit) and the Concats copy the same values: the trained tensors are the bits the
# package with the Conv out of place printed, natively and under QEMU (their
# lines' SHA-256, recorded from that package, commit f8a7285)
sum=$(grep -E '^[wb][0-9]+ ' "$WORK/pkg_fashion_last1/out.txt" | sha256sum | cut -d' ' -f1)
[ "$sum" = 35517378515e6697697270263d40f5dd1169aa6ea34babc2245203877086b7d8 ] ||
  fail "fashion_last1: the trained tensors are not the out-of-place package's bits (SHA-256 $sum)"
peak=$(echo "$plan" | sed -n 's/.*peak \([0-9]*\) bytes.*/\1/p')
[ -n "$peak" ] && [ "$peak" -lt 100600 ] || fail "fashion_last1: peak '$peak' not below the 100,600 bytes of keeping every activation"

# a frozen depthwise Conv of stride 2 (the seed's Conv row is stride 1: outside it only where no backward
# runs, the front) over its input: trk_dw_conv_s_in_place places each 14-float output row after copying
# the input rows its place reaches that later rows read (none here: the ring is its line of 14 floats).
# Only fc2 trained (last:1): the Concat's 1,568-float buffer then holds the Conv's and the Relu's 392 and
# dies at fc1's forward: 7,048 bytes where the Conv out of place took 8,560 (workspace 7,840: the
# Concat's output and the Conv's together), and the trained tensors are the out-of-place package's bits
# (SHA-256 recorded from it). With fc1 trained too (last:2) its backward reads its input, which would
# keep the 1,568-float buffer to the end: the Conv stays out of place there (33,712 bytes; in place, 35,280)
run_cfg stride2 "$WORK/tiny_stride2.onnx" 100 --trainable last:1 --optimizer sgd --momentum 0.9 --lr 0.005
grep -q "trk_dw_conv_s_in_place(2, 28, 28, 3, 3, 2, 2, 1, 1, 14, 14, w1, a0, ring1, 0);" "$WORK/pkg_stride2/src/train.c" ||
  fail "stride2: the stride-2 Conv does not run over its input"
grep -q "peak 7048 bytes = trained tensors 360 + optimizer state 360 + workspace 6328 (activations and gradients in one arena placed by lifetime; alone: activations 6328, gradients 72); lower bound 7048 bytes" \
  "$WORK/codegen_stride2.log" || fail "stride2: not the in-place plan: $(grep "RAM plan" "$WORK/codegen_stride2.log")"
sum=$(grep -E '^[wb][0-9]+ ' "$WORK/pkg_stride2/out.txt" | sha256sum | cut -d' ' -f1)
[ "$sum" = 6369583a7ed879848d2d75df55c38d8df682994ac6d3aaa259ff1a0bd6413742 ] ||
  fail "stride2: the trained tensors are not the out-of-place package's bits (SHA-256 $sum)"
run_cfg stride2_fc1 "$WORK/tiny_stride2.onnx" 100 --trainable last:2 --optimizer sgd --momentum 0.9 --lr 0.005
grep -q "tflk_conv_f32(&cv1, " "$WORK/pkg_stride2_fc1/src/train.c" && ! grep -q "trk_dw_conv_s_in_place(" "$WORK/pkg_stride2_fc1/src/train.c" &&
  grep -q "peak 33712 bytes" "$WORK/codegen_stride2_fc1.log" ||
  fail "stride2_fc1: the Conv should stay out of place when fc1's backward keeps its output"
# on the gradient path the stride-2 Conv is outside the seed's row: refused by the build, quoting it
out=$("$SY" codegen --train --mode fp32 "$WORK/tiny_stride2.onnx" --target ws63 --data "$data" -o "$WORK/s2all" \
      --steps 2 --trainable all 2>&1) && fail "a trained stride-2 Conv was accepted"
echo "$out" | grep -q "UNSUPPORTED: sy_train_build: node 'dw' (Conv): not trainable on ws63: strides\[0\] = 2, not 1; seed 001 §4: \"FP32 Conv: rank 4, batch 1, no bias, no fused activation, stride = 1 and dilation = 1" ||
  fail "unclear refusal of a trained stride-2 Conv: $out"

# the whole of fashion_cnn (402,194 values and their momentum) does not fit 256 KB
out=$("$SY" codegen --train --mode fp32 "$SRC/graphs/fashion_cnn.onnx" --target ws63 --data "$data" -o "$WORK/big" \
      --steps 2 --optimizer sgd --momentum 0.9 --sram-budget 256K 2>&1) && fail "a plan over 256 KB was accepted"
echo "$out" | grep -q "over the budget of 262144 bytes on ws63" || fail "unclear refusal: $out"
# a MaxPool in the frozen front (no gradient through it, so the build takes
# it) is not a layer the package runs
out=$("$SY" codegen --train --mode fp32 "$WORK/tiny_maxpool.onnx" --target ws63 --data "$data" -o "$WORK/mp" \
      --steps 2 --trainable last:1 2>&1) && fail "a chain with MaxPool was accepted"
echo "$out" | grep -q "node 'relu1' (MaxPool): an FP32 training package runs depthwise Conv, Relu, Abs, Flatten/Reshape/Squeeze/Unsqueeze, Concat of two values, Pad (constant), Slice, Transpose, ReduceSum/ReduceMean, Add/Sub/Mul/Div with a constant or another activation and Gemm/MatMul only" ||
  fail "unclear refusal of MaxPool in the chain: $out"
# on the gradient path the seed's row refuses it
out=$("$SY" codegen --train --mode fp32 "$WORK/tiny_maxpool.onnx" --target ws63 --data "$data" -o "$WORK/mp" \
      --steps 2 2>&1) && fail "a MaxPool to train through was accepted"
echo "$out" | grep -q "FP32 training is explicitly not supported for MaxPool2D/MaxPool" ||
  fail "MaxPool refused without the seed's row: $out"
# one sample per step: the batch axis stays first
out=$("$SY" codegen --train --mode fp32 "$WORK/tiny_batch_t.onnx" --target ws63 --data "$data" -o "$WORK/bt" \
      --steps 2 2>&1) && fail "a Transpose of the batch axis was accepted"
echo "$out" | grep -q "node 'swap' (Transpose): an FP32 training package takes an explicit permutation of the 4 axes keeping the batch axis first; seed 001 §4: \"FP32 Transpose: perm a valid int32 constant full permutation" ||
  fail "unclear refusal of a batch Transpose: $out"
# forty Relus in a row, each in place over the one before: planned in
# linear work (the planner asked each layer's buffer of every earlier one
# again at each step, 2^n calls: 24 Relus took 26 s, forty would not end),
# and the plan is the small CNN's (the Relus add no buffer)
out=$(timeout 60 "$SY" codegen --train --mode fp32 "$WORK/tiny_relus40.onnx" --target ws63 --data "$data" \
      -o "$WORK/r40" --steps 2 --sram-budget 256K 2>&1) || fail "forty Relus in a row: codegen failed or hung: $out"
echo "$out" | grep -q "peak 126400 bytes = trained tensors 50640 + optimizer state 50640 + workspace 25120 (activations and gradients in one arena placed by lifetime; alone: activations 12616," ||
  fail "forty Relus in a row: not the small CNN's plan: $out"
out=$("$SY" codegen --train --mode fp32 "$tiny" --target hi3066 --data "$data" -o "$WORK/h" --steps 2 2>&1) &&
  fail "hi3066 accepted"
echo "$out" | grep -q '当前端侧训练仅在ws63支持' || fail "hi3066 refused without the seed's sentence: $out"
[ ! -e "$WORK/h/src" ] || fail "hi3066: a package was written"
if [ $fails -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
