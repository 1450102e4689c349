#!/usr/bin/env bash
# The packages' runtime API (docs/mcu.md, "The runtime API"): two models
# generated with their own prefixes (--prefix fc, --prefix uq) link into one
# image (tests/mcu/multi_model) and run through the handle API: two
# instances of one model on two workspaces, tensors by name with dtype and
# shape, a Unique's run-sized outputs, the one-instance calls. Checked
# against each package's expected_output.txt (the host run), against
# `switchyard inspect`'s names, dtypes and shapes, and against hand-worked
# values: fc is y = Relu(x W^T + B) on small integers (exact in float32),
# uq is ONNX Unique (sorted = 0) of eight int8 codes. Also: a bad prefix is
# refused before anything is written. Writes its models itself (numpy,
# onnx): no shared data, never skips on the host.
#
#   test_mcu_api.sh SWITCHYARD SOURCE_DIR WORK_DIR host|qemu
set -u
SY=$1 SRC=$2 WORK=$3 MODE=$4
. "$(dirname "$0")/mcu_common.sh"
mcu_prepare "$MODE" "$WORK"
PY=${SY_PYTHON:-/usr/bin/python3}
"$PY" - "$WORK" <<'PYEOF' || { echo "FAIL: writing the models (needs $PY with numpy and onnx)"; exit 1; }
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
w = sys.argv[1]
# fc: x [1, 4] -> Gemm(W [3, 4], B [3], transB = 1) -> Relu -> y [1, 3]
W = np.array([[1, 0, -1, 2], [2, 1, 0, -3], [-1, -1, 1, 1]], np.float32)
B = np.array([1, -2, 0.5], np.float32)
x = np.array([[1, 2, 3, 4]], np.float32)
g = helper.make_graph(
    [helper.make_node("Gemm", ["x", "W", "B"], ["g"], transB=1), helper.make_node("Relu", ["g"], ["y"])], "fc",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
    [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), w + "/fc.onnx")
np.save(w + "/fc_x.npy", x)
# uq: ONNX Unique, sorted = 0, of int8 codes
u = np.array([5, -3, 5, 100, -128, -3, 0, 5], np.int8)
g = helper.make_graph(
    [helper.make_node("Unique", ["codes"], ["y", "indices", "inverse_indices", "counts"], sorted=0)], "uq",
    [helper.make_tensor_value_info("codes", TensorProto.INT8, [8])],
    [helper.make_tensor_value_info("y", TensorProto.INT8, None),
     helper.make_tensor_value_info("indices", TensorProto.INT64, None),
     helper.make_tensor_value_info("inverse_indices", TensorProto.INT64, None),
     helper.make_tensor_value_info("counts", TensorProto.INT64, None)])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)]), w + "/uq.onnx")
np.save(w + "/uq_x.npy", u)
PYEOF
for m in fc:x uq:codes; do
  p=${m%%:*}
  "$SY" codegen "$WORK/$p.onnx" --target ws63 -o "$WORK/$p" --prefix "$p" --input "${m#*:}=$WORK/${p}_x.npy" \
      > "$WORK/$p.codegen.log" 2>&1 || { cat "$WORK/$p.codegen.log"; fail "$p: codegen"; }
  [ -f "$WORK/$p/include/${p}_model.h" ] || fail "$p: no include/${p}_model.h"
done
# the prefix is checked before a file is written
if "$SY" codegen "$WORK/fc.onnx" --target ws63 -o "$WORK/badprefix" --prefix 9x > "$WORK/badprefix.log" 2>&1; then
  fail "--prefix 9x was accepted"
elif ! grep -q "prefix '9x' must be" "$WORK/badprefix.log" || [ -e "$WORK/badprefix" ]; then
  cat "$WORK/badprefix.log"; fail "--prefix 9x: refused without the rule, or a folder was written"
fi
# one switchyard build writes the same kernel files into every package
for f in "$WORK"/uq/kernels/*; do
  [ ! -e "$WORK/fc/kernels/$(basename "$f")" ] || cmp -s "$f" "$WORK/fc/kernels/$(basename "$f")" ||
    fail "kernels/$(basename "$f") differs between the packages"
done
# each package on its own still runs its test main (the handle API) and matches its host run
for p in fc uq; do
  mcu_pkg_run "$MODE" "$WORK/$p" "$WORK/$p.out" || { fail "$p: build"; continue; }
  grep '^out' "$WORK/$p.out" | cmp -s - "$WORK/$p/expected_output.txt" ||
    { cat "$WORK/$p.out"; fail "$p: its own main differs from the host run"; }
done
# the image of both
img=$WORK/image
if [ "$MODE" = qemu ]; then
  cmake -S "$(dirname "$0")/multi_model" -B "$img" -DFC="$WORK/fc" -DUQ="$WORK/uq" \
    -DCMAKE_TOOLCHAIN_FILE="$WORK/fc/toolchain-riscv32.cmake" > "$WORK/image.log" 2>&1 &&
    cmake --build "$img" >> "$WORK/image.log" 2>&1 || { tail -20 "$WORK/image.log"; fail "image: build"; }
  timeout 300 qemu-system-riscv32 -machine virt -bios none -nographic -semihosting-config enable=on,target=native \
    -icount shift=0 -kernel "$img/multi_model.elf" > "$WORK/image.out" 2>&1
else
  cmake -S "$(dirname "$0")/multi_model" -B "$img" -DFC="$WORK/fc" -DUQ="$WORK/uq" > "$WORK/image.log" 2>&1 &&
    cmake --build "$img" >> "$WORK/image.log" 2>&1 || { tail -20 "$WORK/image.log"; fail "image: build"; }
  "$img/multi_model" > "$WORK/image.out" 2>&1
fi
out=$WORK/image.out
grep -q '^done, 0 failures' "$out" || { cat "$out"; fail "image: the API's refusals or calls failed"; }
grep '^error' "$out" && fail "image: errors"
# both instances and the one-instance calls give the host run's bytes
for tag in fc_a fc_b fc_s; do
  sed -n "s/^$tag //p" "$out" | cmp -s - "$WORK/fc/expected_output.txt" || { cat "$out"; fail "image: $tag differs from fc's host run"; }
done
sed -n 's/^uq //p' "$out" | grep '^out[0-9]' | cmp -s - "$WORK/uq/expected_output.txt" || { cat "$out"; fail "image: uq differs from its host run"; }
# hand-worked: y = Relu(x W^T + B), x = [1, 2, 3, 4]: [1 + 0 - 3 + 8 + 1, 2 + 2 + 0 - 12 - 2, -1 - 2 + 3 + 4 + 0.5]
#   = [7, 0 (Relu of -10), 4.5] as float32 bits
grep -qx 'fc_a out0 12: 00 00 e0 40 00 00 00 00 00 00 90 40' "$out" || { cat "$out"; fail "image: fc is not [7, 0, 4.5]"; }
# Unique of [5, -3, 5, 100, -128, -3, 0, 5], first-occurrence order: y [5, -3, 100, -128, 0], indices
# [0, 1, 3, 4, 6], inverse [0, 1, 0, 2, 3, 1, 4, 0], counts [3, 2, 1, 1, 1]; the outputs' run shapes
grep -qx 'uq out0 5: 05 fd 64 80 00' "$out" || { cat "$out"; fail "image: uq y"; }
for want in 'uq shape 0 [5]' 'uq shape 1 [5]' 'uq shape 2 [8]' 'uq shape 3 [5]'; do
  grep -qxF "$want" "$out" || { cat "$out"; fail "image: '$want' missing"; }
done
grep -qx 'uq out3 40: 03 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00' "$out" ||
  { cat "$out"; fail "image: uq counts"; }
# names, dtypes and declared shapes as switchyard inspect reads the models (a Unique's outputs: their bound)
grep -qx "fc input 0 'x' float32 \[1,4\]" "$out" && grep -qx "fc output 0 'y' float32 \[1,3\]" "$out" &&
  grep -qx "uq input 0 'codes' int8 \[8\]" "$out" && grep -qx "uq output 0 'y' int8 \[8\]" "$out" &&
  grep -qx "uq output 1 'indices' int64 \[8\]" "$out" || { cat "$out"; fail "image: tensor info"; }
"$SY" inspect "$WORK/fc.onnx" | grep -q "input 0 'x' float32 \[1,4\]" || fail "inspect disagrees on fc's input"
if [ $fails -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "ok   two packages (--prefix fc, uq) in one $MODE image: two instances, tensors by name, a Unique's run shapes"
