#!/bin/sh
# LLM decode/prefill speed: the llm plugin (switchyard llm on cpu_ref) against
# a single-file C forward pass of the same checkpoint (tools/bench/llm_ref/,
# the plain loop llama2.c popularised), in one run, on stories260K.
#
#   tools/bench/llm.sh [BUILD_DIR [SHARED_DIR]]
#   defaults: ./build and ../shared (relative to the repository)
#   env: RUNS (3; best of), CC (cc), CONFIG (an INI for switchyard; default: embedded)
#
# Prints per engine: decode tok/s (greedy from BOS, the 346-token story),
# prefill tok/s (a 300-token prompt; the plain loop feeds it one token at a
# time), the plugin's time outside kernels as a share of the step, and KV bytes.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
shared=${2:-$here/../shared}
runs=${RUNS:-3}
cc=${CC:-cc}
sy=$build/bin/switchyard
model=$shared/models/llm/stories260K.bin
tok=$shared/models/llm/tok512.bin
[ -x "$sy" ] || { echo "llm.sh: $sy not found (build first, or pass the build dir)" >&2; exit 1; }
[ -f "$model" ] || { echo "llm.sh: no model $model" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cfg=""
[ -n "${CONFIG:-}" ] && cfg="--config $CONFIG"

$cc -O2 -std=c11 -ffp-contract=off -o "$work/llm_ref" "$here/tools/bench/llm_ref/llm_ref.c" "$here/tools/bench/llm_ref/llm_ref_main.c" -lm || exit 1
"$sy" llm-export "$model" "$tok" -o "$work/bundle" --quiet || exit 1

# the 300-token prompt: the story's own first 300 ids, as text
ids=$("$work/llm_ref" "$model" --steps 300 | head -n 1)

best_ref=0
best_ref_pf=0
i=0
while [ $i -lt "$runs" ]; do
    r=$("$work/llm_ref" "$model" --quiet | sed -n 's/.*(\([0-9.]*\) tok\/s).*/\1/p')
    best_ref=$(echo "$r $best_ref" | awk '{print ($1 > $2) ? $1 : $2}')
    i=$((i + 1))
done
best_ref_pf=$best_ref # the plain loop has no batched prefill: one token per step

dec=0; pf=0; out_pct=""; kv=""; ttft=""
i=0
prompt=$(printf '%s' "$ids" | awk '{ s = ""; for (i = 1; i <= NF; i++) s = s $i ","; print s }')
while [ $i -lt "$runs" ]; do
    o=$("$sy" llm --bundle "$work/bundle" $cfg 2>&1 >/dev/null)
    d=$(printf '%s\n' "$o" | sed -n 's/^decode: .*(\([0-9.]*\) tok\/s)/\1/p')
    if [ "$(echo "$d $dec" | awk '{print ($1 > $2)}')" = 1 ]; then
        dec=$d
        out_pct=$(printf '%s\n' "$o" | sed -n 's/^outside kernels: .*(\([0-9.]*\)%.*/\1/p')
        kv=$(printf '%s\n' "$o" | sed -n 's/^KV in use: \([0-9]*\) bytes.*/\1/p')
        ttft=$(printf '%s\n' "$o" | sed -n 's/^time to first token: \([0-9.]*\) ms/\1/p')
    fi
    o=$("$sy" llm --bundle "$work/bundle" $cfg --prompt-ids "1,$prompt" --max-tokens 1 2>&1 >/dev/null)
    p=$(printf '%s\n' "$o" | sed -n 's/^prefill: .*(\([0-9.]*\) tok\/s)/\1/p')
    pf=$(echo "$p $pf" | awk '{print ($1 > $2) ? $1 : $2}')
    i=$((i + 1))
done

printf '%-34s %12s %12s %14s %12s %10s\n' engine decode_tok/s prefill_tok/s outside_kernels KV_bytes ttft_ms
printf '%-34s %12s %12s %14s %12s %10s\n' "switchyard llm plugin (cpu_ref)" "$dec" "$pf" "$out_pct%" "$kv" "$ttft"
printf '%-34s %12s %12s %14s %12s %10s\n' "single-file C forward (llm_ref)" "$best_ref" "$best_ref_pf" "-" "-" "-"
echo "$dec $best_ref" | awk '{ printf "plugin decode / plain C decode = %.2f\n", $1 / $2 }'
