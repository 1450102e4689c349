#!/bin/sh
# Dispatch overhead of the run path: a generated chain of NODES tiny
# elementwise nodes (Add, Mul, Relu on [1, 64] floats; default 10,000) run
# with `switchyard bench`; prints milliseconds per inference and ns per node.
#
#   tools/bench/dispatch.sh [BUILD_DIR]        (default: ./build)
#   env: NODES (10000), ITERS (200), WARMUP (20), THREADS (1)
set -eu
build=${1:-build}
nodes=${NODES:-10000}
iters=${ITERS:-200}
warmup=${WARMUP:-20}
threads=${THREADS:-1}
gen=$build/bin/sy_gen_graphs
sy=$build/bin/switchyard
for b in "$gen" "$sy"; do
    [ -x "$b" ] || { echo "dispatch.sh: $b not found (build first, or pass the build dir)" >&2; exit 1; }
done
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy_dispatch.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$gen" --out-dir "$dir" --only elementwise_chain --chain "$nodes" >/dev/null
model=$dir/elementwise_chain.onnx
out=$("$sy" bench "$model" --iters "$iters" --warmup "$warmup" --threads "$threads")
line=$(printf '%s\n' "$out" | grep 'per inference')
# "N runs after W warm-up: min A ms, median B ms, max C ms per inference"
printf '%s\n' "$line" | awk -v n="$nodes" -v t="$threads" '{
    for (i = 1; i <= NF; i++) {
        if ($i == "min") mn = $(i + 1);
        if ($i == "median") md = $(i + 1);
        if ($i == "max") mx = $(i + 1);
    }
    printf "elementwise chain, %d nodes, threads %d: min %.3f ms, median %.3f ms, max %.3f ms per inference\n", n, t, mn, md, mx;
    printf "dispatch: %.1f ns per node (min), %.1f ns per node (median)\n", mn * 1e6 / n, md * 1e6 / n;
}'
