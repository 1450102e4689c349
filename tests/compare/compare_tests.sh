#!/bin/sh
# compare_tests.sh TEST SWITCHYARD PBTOOL SHARED SOURCE FAULTY_PLUGIN WORKDIR
# One test of `switchyard compare`. Tests on models of the shared folder exit
# 77 (skipped) when it is absent.
set -u
t=$1; sy=$2; pbtool=$3; shared=$4; src=$5; faulty=$6; work=$7
fail() { echo "FAIL: $*"; exit 1; }
need() { [ -e "$1" ] || { echo "skipped: $1 is absent"; exit 77; }; }
rm -rf "$work" && mkdir -p "$work" || fail "cannot make $work"
# the value column of the row of NODE in a compare table: "verdict" is the last field
row() { echo "$1" | awk -v n="$2" '$2 == n { print; exit }'; }

case $t in
faulty_kernel)
    # test_faulty runs relu (correctly) and flatten, a Reshape, with a
    # kernel that rotates the data by one element; tiny_cnn's other nodes
    # run on cpu_ref. The first wrong value is flatten's, by construction.
    cnn=$src/graphs/tiny_cnn.onnx
    printf '[switchyard]\nplugin_dirs = @default\nplugins = %s\nproviders = test_faulty, cpu_ref\n' "$faulty" > "$work/faulty.ini"
    ex=$("$sy" explain "$cnn" --config "$work/faulty.ini") || fail "explain failed"
    echo "$ex" | grep -Eq '^  flatten +Reshape +test_faulty' || fail "flatten is not on test_faulty: $ex"
    echo "$ex" | grep -Eq '^  relu +Relu +test_faulty' || fail "relu is not on test_faulty: $ex"
    out=$("$sy" compare "$cnn" --config "$work/faulty.ini" --bisect --csv "$work/c.csv" --svg "$work/c.svg")
    rc=$?
    echo "$out"
    [ $rc -eq 3 ] || fail "exit status $rc, expected 3 (a value past tolerance)"
    echo "$out" | grep -q "^first node past tolerance: #4 flatten (Reshape) on test_faulty vs cpu_ref" ||
        fail "compare did not name flatten first"
    # the nodes before it, one of them on the same provider, agree exactly
    for n in conv relu pool; do
        r=$(row "$out" "$n")
        echo "$r" | grep -q ' ok$' || fail "row $n is not ok: $r"
    done
    echo "$(row "$out" relu)" | grep -q 'test_faulty' || fail "relu row does not show test_faulty"
    # after it, the error propagates
    for n in fc softmax; do
        echo "$(row "$out" "$n")" | grep -q 'PAST$' || fail "row $n is not past tolerance"
    done
    echo "$out" | grep -q "^bisect: moving flatten from test_faulty to cpu_ref" || fail "bisect did not move flatten"
    echo "$out" | grep -q "^bisect verdict: node 'flatten' is wrong on test_faulty" || fail "bisect did not confirm flatten"
    echo "$out" | grep -q "^bisect: with it moved, every value is within tolerance" || fail "bisect: values still past"
    # CSV: a header and one row per node output, flatten marked first
    [ "$(wc -l < "$work/c.csv")" -eq 7 ] || fail "CSV has $(wc -l < "$work/c.csv") lines, expected 7"
    grep -q '^4,flatten,Reshape,.*,test_faulty,cpu_ref,.*,first$' "$work/c.csv" || fail "CSV row of flatten"
    grep -q '^2,relu,Relu,.*,test_faulty,cpu_ref,-1,0,0,0,1,,,float32,.*,ok$' "$work/c.csv" || fail "CSV row of relu: exact"
    grep -q '<svg ' "$work/c.svg" && grep -q 'first past tolerance: flatten' "$work/c.svg" || fail "SVG"
    grep -q '>test_faulty<' "$work/c.svg" || fail "SVG legend lacks test_faulty"
    # the conformance kit on the same provider: the model check names the node
    out=$("$sy" cts --plugin "$faulty" --model "$cnn" --filter '^model\.'); rc=$?
    echo "$out" | tail -4
    [ $rc -eq 1 ] || fail "cts --model: exit $rc, expected 1"
    echo "$out" | grep -q "^FAIL model.tiny_cnn.onnx: first diverging node: flatten (Reshape) on test_faulty, value 'flat'.*disappears: the node is wrong" ||
        fail "cts --model did not name flatten"
    # explain --accuracy, the short form for the reports
    out=$("$sy" explain "$cnn" --config "$work/faulty.ini" --accuracy) || fail "explain --accuracy"
    echo "$out" | grep -q "^first node past tolerance: #4 flatten (Reshape) on test_faulty" || fail "explain --accuracy: $out"
    # control: the default deployment against cpu_ref alone agrees everywhere
    out=$("$sy" compare "$cnn"); rc=$?
    [ $rc -eq 0 ] || fail "default vs cpu_ref: exit $rc: $out"
    echo "$out" | grep -q '^first node past tolerance: none' || fail "default vs cpu_ref: $out"
    ;;
int8_vs_float)
    m=$shared/models/onnx/mnist-8
    need "$m/model.onnx"
    q=$work/mnist8_int8.onnx
    "$sy" quantize "$m/model.onnx" --calib "$m" -o "$q" > /dev/null || fail "quantize failed"
    in=$m/test_data_set_0
    # both sides on cpu_ref: the difference is the quantization alone
    printf '[switchyard]\nplugin_dirs = @default\nproviders = cpu_ref\n' > "$work/ref.ini"
    out=$("$sy" compare "$q" --config "$work/ref.ini" --against-model "$m/model.onnx" --input-dir "$in" --csv "$work/q.csv"); rc=$?
    echo "$out"
    [ $rc -eq 0 ] || fail "exit $rc: a correctly quantized mnist-8 should stay within the 'quantized' tolerance"
    # QDQ names matched to the float ones, quantized codes dequantized
    echo "$(row "$out" Convolution110)" | grep -q 'ReLU114_Output_0__q.* int8 .*cpu_ref *cpu_ref' ||
        fail "QConv Convolution110 not matched to ReLU114_Output_0"
    # the measure, checked independently: the relative error of the output
    # from the two models' output files, computed by pbtool
    "$sy" run "$q" --config "$work/ref.ini" --input-dir "$in" --output-dir "$work/oq" > /dev/null || fail "run int8"
    "$sy" run "$m/model.onnx" --config "$work/ref.ini" --input-dir "$in" --output-dir "$work/of" > /dev/null || fail "run float"
    want=$("$pbtool" relerr "$work/oq/output_0.pb" "$work/of/output_0.pb") || fail "pbtool relerr"
    got=$(awk -F, '$2 == "Plus214_Output_0__DQ34" { print $12 }' "$work/q.csv")
    echo "relative error of the output: compare $got, pbtool $want"
    awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-5 * b + 1e-9) }' ||
        fail "compare's relative error $got differs from pbtool's $want"
    # a miscalibrated tensor: the scale of ReLU114's QuantizeLinear 16 times
    # too small clips Convolution110's codes; everything before it is as good
    # as in the correct model, so the first node past tolerance is Convolution110
    "$pbtool" scale-q "$q" "$work/bad.onnx" ReLU114_Output_0 0.0625 || fail "pbtool scale-q"
    bad=$("$sy" compare "$work/bad.onnx" --config "$work/ref.ini" --against-model "$m/model.onnx" --input-dir "$in" --bisect); rc=$?
    echo "$bad"
    [ $rc -eq 3 ] || fail "miscalibrated: exit $rc, expected 3"
    echo "$bad" | grep -q '^first node past tolerance: #4 Convolution110 (QConv)' || fail "miscalibrated: not Convolution110"
    for n in Convolution28 Pooling66; do
        [ "$(row "$bad" $n)" = "$(row "$out" $n)" ] || fail "row $n changed by the miscalibration of a later tensor"
    done
    # the node runs on cpu_ref already: bisect says the provider is not the cause
    echo "$bad" | grep -q "^bisect verdict: not a provider defect at 'Convolution110'" || fail "bisect verdict"
    ;;
ultraface_htp)
    m=$shared/models/onnx/ultraface_rfb_320/model.onnx
    need "$m"
    for ini in "$src"/conf/htp*.ini; do
        out=$("$sy" compare "$m" --config "$ini" --csv "$work/u.csv"); rc=$?
        echo "$out" | tail -3
        [ $rc -eq 3 ] || fail "$ini: exit $rc, expected 3 (fp16 differs from fp32 past the float32 tolerance)"
        # the right first node: the first value that htp produces, in
        # execution order; nodes of cpu_ref before it would agree exactly
        first=$(awk -F, 'NR > 1 && $7 == "htp" { print $2; exit }' "$work/u.csv")
        [ -n "$first" ] || fail "$ini: no value produced by htp"
        echo "$out" | grep -q "^first node past tolerance: #[0-9]* $first (.*) on htp vs cpu_ref" ||
            fail "$ini: compare did not name $first, the first node htp ran"
        awk -F, -v f="$first" 'NR > 1 && $2 == f { exit } NR > 1 && $NF != "ok" { bad = 1 } END { exit bad }' \
            "$work/u.csv" || fail "$ini: a value before $first is past tolerance"
        # fused partitions: the first htp value is a partition output and the report says so
        echo "$out" | grep "^first node past tolerance" | grep -q 'fused partition' || fail "$ini: fusion not reported"
        # bisect: the first value is a partition's output; with the whole
        # partition on cpu_ref the error goes, with any single node it stays
        out=$("$sy" compare "$m" --config "$ini" --bisect --brief); rc=$?
        echo "$out" | grep '^bisect'
        echo "$out" | grep -q "^bisect: '.*' is an output of fused partition 0 ([0-9]* nodes on htp): moving all of them to cpu_ref" ||
            fail "$ini: bisect did not move the partition"
        echo "$out" | grep -q "^bisect: the error disappears at" || fail "$ini: the partition on cpu_ref did not remove the error"
        echo "$out" | grep -q "^bisect verdict: the error is spread over partition 0 ([0-9]* nodes on htp" ||
            fail "$ini: bisect verdict"
        # within the float16 tolerance everywhere: the emulator's fp16 is as accurate as fp16 can be
        out=$("$sy" compare "$m" --config "$ini" --tol float32=0.02 --brief); rc=$?
        [ $rc -eq 0 ] || fail "$ini: some value is past relative error 0.02: $out"
    done
    ;;
usage)
    "$sy" compare > /dev/null 2>&1; [ $? -eq 2 ] || fail "no MODEL: exit status"
    err=$("$sy" compare "$src/graphs/tiny_cnn.onnx" --tol float32=abc 2>&1); [ $? -eq 2 ] || fail "bad --tol: status"
    echo "$err" | grep -q "float32=abc" || fail "bad --tol not named: $err"
    err=$("$sy" compare "$src/graphs/tiny_cnn.onnx" --tol speed=1 2>&1); [ $? -eq 2 ] || fail "unknown --tol key"
    err=$("$sy" compare "$work/none.onnx" 2>&1); [ $? -eq 1 ] || fail "missing model: status"
    echo "$err" | grep -q "none.onnx" || fail "missing model not named: $err"
    "$sy" compare --help | grep -q -- '--bisect' || fail "help"
    ;;
*)
    fail "unknown test $t"
    ;;
esac
echo "ok: $t"
