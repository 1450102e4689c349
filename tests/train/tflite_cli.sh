#!/bin/sh
# `switchyard train` on a TFLite model: the CNN of test_train_tflite.c and a
# small data folder it writes (`test_train_tflite cli-files`); the trained
# model is written as OUT/model.onnx and OUT/model.tflite, the .tflite has the
# source's size and other bytes, and both run; --subgraph chooses by index
# (an index out of range refused).
#
#   tflite_cli.sh SWITCHYARD TEST_TRAIN_TFLITE WORKDIR
set -u
sy=$1; gen=$2; work=$3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"; mkdir -p "$work"
"$gen" cli-files /nonexistent "$work" >/dev/null || fail "cli-files"
out=$("$sy" train "$work/cnn.tflite" --data "$work/data" -o "$work/o" --batch 8 --optimizer sgd --lr 0.05 2>&1) ||
    fail "train: $out"
echo "$out" | tail -3
echo "$out" | grep -q "trained model: $work/o/model.tflite" || fail "no .tflite export reported"
for f in model.onnx model.tflite source.tflite forward.onnx; do
    [ -s "$work/o/$f" ] || fail "$f was not written"
done
[ "$(wc -c < "$work/o/model.tflite")" -eq "$(wc -c < "$work/cnn.tflite")" ] || fail "model.tflite changed size"
cmp -s "$work/o/model.tflite" "$work/cnn.tflite" && fail "model.tflite is the untrained source"
for m in model.tflite model.onnx; do
    "$sy" run "$work/o/$m" --input-dir "$work/in" --output-dir "$work/run_$m" >/dev/null 2>&1 || fail "run $m"
done
# --subgraph: an index past the model's one subgraph is refused naming the
# file; the index 0 trains the same model
out=$("$sy" train "$work/cnn.tflite" --data "$work/data" -o "$work/o_sg" --batch 8 --subgraph 1 2>&1) &&
    fail "--subgraph 1 of a one-subgraph model was accepted"
echo "$out" | grep -q "$work/cnn.tflite: subgraph 1 is out of range: the model has 1 subgraph (0 to 0)" ||
    fail "--subgraph 1: $out"
out=$("$sy" train "$work/cnn.tflite" --data "$work/data" -o "$work/o_sg" --batch 8 --optimizer sgd --lr 0.05 \
      --subgraph 0 2>&1) || fail "--subgraph 0: $out"
cmp -s "$work/o_sg/model.tflite" "$work/o/model.tflite" || fail "--subgraph 0 trained another model"
# --help says so
"$sy" train --help | grep -q "OUT/model.tflite" || fail "--help does not mention OUT/model.tflite"
"$sy" train --help | grep -q -- "--subgraph S" || fail "--help does not mention --subgraph"
echo "ok: switchyard train on a TFLite model writes and runs OUT/model.tflite"
