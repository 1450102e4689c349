#!/bin/sh
# Latency of the issue-17 models side by side: `switchyard bench` (default
# providers: cpu, then cpu_ref) and ONNX Runtime's CPU provider (npm
# onnxruntime-node, graphOptimizationLevel all), on the same inputs, in
# alternating rounds; per row the median of the round medians and the ratio
# switchyard / onnxruntime (below 1.0: switchyard is faster). fp32 is the
# model as shipped (float: fp32, or fp16 storage); int8 the QDQ model `switchyard quantize` writes, run by
# both. Threads: [provider.cpu] threads set explicitly (intra-op; it wins
# over the session's threads, which the cpu provider follows only when the key
# is absent; the core's branch pool stays at 1, as ORT's interOpNumThreads)
# against ORT's intraOpNumThreads.
# llm_decode is the LLM bundle's decode step: `switchyard llm-export
# --attention onnx` of the shared stories260K checkpoint (plain ONNX attention,
# which ONNX Runtime runs), its token_ar1_cl512 graph, the KV cache and mask as
# full 511-column inputs (both runtimes compute every column of that graph).
# Run it under nice on a shared machine.
#
#   tools/bench/ort_models.sh [BUILD_DIR]
#   env: MODELS (mnist-8 super_resolution-10 ultraface_rfb_320 squeezenet1.0_fp16
#        bidi_lstm_nnsplit llm_decode), THREADS ("1 2"), PRECISIONS ("float int8"),
#        ROUNDS (3), ITERS (10), WARMUP (2), SHARED (../shared of the source
#        tree), ORT_NODE_MODULES (a node_modules with onnxruntime-node; else
#        npm installs it into a temporary folder)
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
shared=${SHARED:-$root/../shared}
models=${MODELS:-mnist-8 super_resolution-10 ultraface_rfb_320 squeezenet1.0_fp16 bidi_lstm_nnsplit llm_decode}
threads_list=${THREADS:-1 2}
precisions=${PRECISIONS:-float int8}
rounds=${ROUNDS:-3}
iters=${ITERS:-10}
warmup=${WARMUP:-2}
sy="$build/bin/switchyard"
[ -x "$sy" ] || { echo "ort_models.sh: no $sy (build first)" >&2; exit 1; }
[ -d "$shared/models/onnx" ] || { echo "ort_models.sh: no $shared/models/onnx (set SHARED)" >&2; exit 1; }
command -v node >/dev/null || { echo "ort_models.sh: needs node" >&2; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy_ortm.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mods=${ORT_NODE_MODULES:-}
if [ -z "$mods" ]; then
    command -v npm >/dev/null || { echo "ort_models.sh: needs npm (or ORT_NODE_MODULES)" >&2; exit 1; }
    (cd "$dir" && npm install --silent --no-audit --no-fund --ignore-scripts onnxruntime-node >/dev/null 2>&1) ||
        { echo "ort_models.sh: npm install onnxruntime-node failed" >&2; exit 1; }
    mods=$dir/node_modules
fi
export ORT_NODE_MODULES="$mods"
ort() { node "$here/ort_models.mjs" "$@"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-22s %-5s %-3s %12s %12s %8s\n' model prec thr "switchyard" "onnxruntime" ratio
for m in $models; do
    src=$shared/models/onnx/$m/model.onnx
    if [ "$m" = llm_decode ]; then
        src=$dir/llm/token_ar1_cl512_1_of_1.onnx
        ckpt=$shared/models/llm
        if ! "$sy" llm-export "$ckpt/stories260K.bin" "$ckpt/tok512.bin" -o "$dir/llm" --attention onnx --quiet \
            >"$dir/llm.log" 2>&1; then
            printf '%-22s not exported: %s\n' "$m" "$(tail -1 "$dir/llm.log" | cut -c1-90)"
            continue
        fi
    fi
    [ -f "$src" ] || { printf '%-22s missing (%s)\n' "$m" "$src"; continue; }
    in=$dir/$m.in
    mkdir -p "$in"
    ort inputs "$src" "$in"
    for prec in $precisions; do
        model=$src
        if [ "$prec" = int8 ]; then
            model=$dir/$m.int8.onnx
            calib=$shared/models/onnx/$m/test_data_set_0
            [ -d "$calib" ] || calib=$in
            if ! "$sy" quantize "$src" --calib "$calib" -o "$model" >"$dir/q.log" 2>&1; then
                printf '%-22s %-5s     not quantized: %s\n' "$m" "$prec" "$(tail -1 "$dir/q.log" | cut -c1-90)"
                continue
            fi
        fi
        for t in $threads_list; do
            ini=$dir/t$t.ini
            printf '[switchyard]\nplugin_dirs = @default\nthreads = 1\n[provider.cpu]\nthreads = %s\n' "$t" >"$ini"
            : >"$dir/sy.ms"
            : >"$dir/ort.ms"
            r=0
            while [ "$r" -lt "$rounds" ]; do
                "$sy" bench "$model" --config "$ini" --input-dir "$in" --iters "$iters" --warmup "$warmup" 2>&1 |
                    sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' >>"$dir/sy.ms"
                ort time "$model" "$in" "$t" "$iters" "$warmup" | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' >>"$dir/ort.ms"
                r=$((r + 1))
            done
            a=$(median <"$dir/sy.ms")
            b=$(median <"$dir/ort.ms")
            if [ -z "$a" ] || [ -z "$b" ]; then
                printf '%-22s %-5s %-3s failed: switchyard "%s", onnxruntime "%s"\n' "$m" "$prec" "$t" "$a" "$b"
                continue
            fi
            awk -v m="$m" -v p="$prec" -v t="$t" -v a="$a" -v b="$b" \
                'BEGIN { printf "%-22s %-5s %-3s %9.3f ms %9.3f ms %7.2fx\n", m, p, t, a, b, a / b }'
        done
    done
done
