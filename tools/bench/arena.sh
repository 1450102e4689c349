#!/bin/sh
# Memory plan quality on every ONNX model of a directory: runs
# `switchyard bench` on each model that loads and prints, per memory domain,
# the arena bytes, the lower bound (largest sum of bytes live at any step),
# arena / lower bound, and the naive plan (no buffer reuse).
#
#   tools/bench/arena.sh [BUILD_DIR [MODELS_DIR]]
#   defaults: ./build and ../shared/models/onnx (relative to the repository)
#   env: ITERS (1), THREADS (1)
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
models=${2:-$here/../shared/models/onnx}
iters=${ITERS:-1}
threads=${THREADS:-1}
sy=$build/bin/switchyard
[ -x "$sy" ] || { echo "arena.sh: $sy not found (build first, or pass the build dir)" >&2; exit 1; }
[ -d "$models" ] || { echo "arena.sh: no model directory $models" >&2; exit 1; }

printf '%-40s %-10s %12s %12s %7s %12s %7s\n' model domain arena lower_bound ratio naive naive/lb
worst=0
find "$models" -name '*.onnx' | sort | while read -r f; do
    rel=${f#"$models"/}
    name=${rel%/model.onnx}
    name=${name%.onnx}
    if ! out=$("$sy" bench "$f" --iters "$iters" --warmup 0 --threads "$threads" 2>&1); then
        why=$(printf '%s\n' "$out" | grep -v '^model:' | head -n 1 | sed -e "s|$f: ||" -e 's|^switchyard: ||' | cut -c 1-100)
        printf '%-40s does not run: %s\n' "$name" "$why"
        continue
    fi
    # "memory domain D: arena A bytes, lower bound L bytes, ratio R; naive plan N bytes (...)"
    printf '%s\n' "$out" | grep '^memory domain' | awk -v m="$name" '{
        d = $3; sub(":", "", d);
        for (i = 1; i <= NF; i++) {
            if ($i == "arena") a = $(i + 1);
            if ($i == "bound") l = $(i + 1);
            if ($i == "plan") n = $(i + 1);
        }
        printf "%-40s %-10s %12d %12d %7.3f %12d %7.2f\n", m, d, a, l, (l > 0 ? a / l : 1), n, (l > 0 ? n / l : 1);
    }'
done
