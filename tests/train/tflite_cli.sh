#!/bin/sh
# `switchyard train` on a TFLite model: the CNN of test_train_tflite.c and a
# small data folder it writes (`test_train_tflite cli-files`); the trained
# model is written as OUT/model.onnx and OUT/model.tflite, the .tflite has the
# source's size and other bytes, and both run.
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
# --help says so
"$sy" train --help | grep -q "OUT/model.tflite" || fail "--help does not mention OUT/model.tflite"
echo "ok: switchyard train on a TFLite model writes and runs OUT/model.tflite"
