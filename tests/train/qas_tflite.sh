#!/bin/sh
# train.qas_tflite: qas_tflite_models.py writes the int8 TFLite models, their
# ONNX QDQ twins and the refusals, then test_qas_tflite trains each model
# from both and checks the refusals (test_qas_tflite.c).
#
# Then `switchyard train --mode qas-int8 mlp.tflite` writes OUT/model.onnx
# and OUT/model.tflite, and `test_qas_tflite cli OUT` reads both back; one
# epoch and a --resume to the second give the same two files byte for byte.
# `switchyard train --mode qas-int8 conv.tflite --trainable last:3` trains
# its two CONV_2D layers and the FULLY_CONNECTED (a model.tflite unlike the
# source), and `codegen --train` writes a package of the three (its steps
# under QEMU: tests/mcu/test_mcu_train_qas_tflite.sh). pool.tflite trains
# --trainable last:2 through its MAX_POOL_2D; its `codegen --train` is refused
# (the package pools NCHW codes only).
# `--subgraph train_mlp` trains two.tflite's subgraph 1 (read back the same
# way, also after a --resume); an unknown signature and an index out of
# range are refused with their messages.
#
#   qas_tflite.sh PYTHON TEST_QAS_TFLITE WORK_DIR SWITCHYARD
# Exit 77 (skipped) when PYTHON lacks numpy or onnx.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
"$1" -c 'import numpy, onnx' 2>/dev/null || { echo "SKIPPED: $1 has no numpy or onnx"; exit 77; }
mkdir -p "$3"
dir=$(mktemp -d "$3/qas_tflite.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$1" "$here/qas_tflite_models.py" "$dir"
SY_QAS_TFLITE_MODELS=$dir "$2" "$dir"
"$4" train --mode qas-int8 "$dir/mlp.tflite" --data "$dir/data" -o "$dir/out" --trainable last:2 --batch 3 \
  --lr 0.5 --epochs 2
SY_QAS_TFLITE_MODELS=$dir "$2" cli "$dir/out"
"$4" train --mode qas-int8 "$dir/mlp.tflite" --data "$dir/data" -o "$dir/res" --trainable last:2 --batch 3 \
  --lr 0.5 --epochs 1 >/dev/null
"$4" train --mode qas-int8 "$dir/mlp.tflite" --data "$dir/data" -o "$dir/res" --trainable last:2 --batch 3 \
  --lr 0.5 --epochs 2 --resume >/dev/null
cmp "$dir/out/model.tflite" "$dir/res/model.tflite"
cmp "$dir/out/model.onnx" "$dir/res/model.onnx"
echo "ok   one epoch and --resume to the second: model.tflite and model.onnx as the 2-epoch run's"
"$4" train --mode qas-int8 "$dir/conv.tflite" --data "$dir/data_conv" -o "$dir/conv_out" --trainable last:3 \
  --batch 3 --lr 0.1 --epochs 1 >"$dir/conv_train.log"
[ -s "$dir/conv_out/model.tflite" ] && ! cmp -s "$dir/conv.tflite" "$dir/conv_out/model.tflite" ||
  { cat "$dir/conv_train.log"; echo "FAIL conv.tflite --trainable last:3: no trained model.tflite"; exit 1; }
echo "ok   switchyard train conv.tflite --trainable last:3: $(grep -c . "$dir/conv_train.log") lines, a trained model.tflite"
"$4" codegen --train --mode qas-int8 "$dir/conv.tflite" --target ws63 --data "$dir/data_conv" \
  -o "$dir/conv_pkg" --trainable last:3 --steps 3 >"$dir/conv_cg.log" 2>&1 &&
  [ -s "$dir/conv_pkg/src/train.c" ] || { cat "$dir/conv_cg.log"; echo "FAIL codegen --train of the trained CONV_2Ds"; exit 1; }
echo "ok   codegen --train of the trained CONV_2Ds: $(grep -o "wrote .*: 3 QAS-INT8 steps of 3 layers" "$dir/conv_cg.log")"
# pool.tflite: the host trains its CONV_2D through the MAX_POOL_2D (test_qas_tflite's pool twin); the training
# package does not pool NHWC codes yet, and codegen --train says so
"$4" train --mode qas-int8 "$dir/pool.tflite" --data "$dir/data_conv" -o "$dir/pool_out" --trainable last:2 \
  --batch 3 --lr 0.1 --epochs 1 >"$dir/pool_train.log"
[ -s "$dir/pool_out/model.tflite" ] && ! cmp -s "$dir/pool.tflite" "$dir/pool_out/model.tflite" ||
  { cat "$dir/pool_train.log"; echo "FAIL pool.tflite --trainable last:2: no trained model.tflite"; exit 1; }
echo "ok   switchyard train pool.tflite --trainable last:2: a trained model.tflite"
if "$4" codegen --train --mode qas-int8 "$dir/pool.tflite" --target ws63 --data "$dir/data_conv" \
    -o "$dir/pool_pkg" --trainable last:2 --steps 3 >"$dir/pool_cg.log" 2>&1; then
  echo "FAIL codegen --train of pool.tflite was taken"; exit 1
fi
want="the QAS-INT8 training package does not train through an NHWC MaxPool yet"
grep -qF "$want" "$dir/pool_cg.log" || { cat "$dir/pool_cg.log"; echo "FAIL codegen --train of pool.tflite"; exit 1; }
echo "ok   codegen --train of pool.tflite refused: $(grep -F "$want" "$dir/pool_cg.log")"
# --subgraph: two.tflite's subgraph 1 (signature train_mlp, the mlp) trained and written back (that no byte
# outside its trained buffers changes is checked on two.tflite's exports by test_qas_tflite's twins)
"$4" train --mode qas-int8 "$dir/two.tflite" --subgraph train_mlp --data "$dir/data" -o "$dir/two" \
  --trainable last:2 --batch 3 --lr 0.5 --epochs 2 >/dev/null
SY_QAS_TFLITE_MODELS=$dir "$2" cli "$dir/two" two.tflite train_mlp
"$4" train --mode qas-int8 "$dir/two.tflite" --subgraph train_mlp --data "$dir/data" -o "$dir/two" \
  --trainable last:2 --batch 3 --lr 0.5 --epochs 3 --resume >/dev/null
SY_QAS_TFLITE_MODELS=$dir "$2" cli "$dir/two" two.tflite train_mlp
echo "ok   --subgraph train_mlp, and --resume with it"
for sg in nope 2; do
  if "$4" train --mode qas-int8 "$dir/two.tflite" --subgraph $sg --data "$dir/data" -o "$dir/bad_$sg" \
      --trainable last:2 --batch 3 --epochs 1 >"$dir/bad.out" 2>&1; then
    echo "FAIL --subgraph $sg was taken"; exit 1
  fi
  case $sg in
    nope) want="no subgraph 'nope': the model's signatures are 'serving_cnn' (subgraph 0), 'train_mlp' (subgraph 1)" ;;
    *) want="subgraph 2 is out of range: the model has 2 subgraphs (0 to 1)" ;;
  esac
  grep -qF "$want" "$dir/bad.out" || { echo "FAIL --subgraph $sg:"; cat "$dir/bad.out"; exit 1; }
  echo "ok   --subgraph $sg refused: $(grep -F "$want" "$dir/bad.out")"
done
