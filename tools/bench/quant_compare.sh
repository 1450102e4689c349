#!/usr/bin/env bash
# fp32 vs int8 on cpu_ref (issue #5 benchmarks): each model is quantized with
# `switchyard quantize` (int8 scheme, min/max calibration), then the float and
# the quantized model are benchmarked side by side on the same inputs:
#   bytes      model file sizes fp32 / int8
#   latency    median ms of `switchyard bench`; the two models alternate for
#              ROUNDS rounds of ITERS runs each so that a busy machine slows
#              both alike; the figure is the median of the round medians
#   ratio      int8 / fp32 latency (below 1: int8 is faster)
#   accuracy   the quantize tool's report against fp32 on the calibration set
# Calibration: mnist-8 and super_resolution-10 use their test_data_set_*;
# ultraface_rfb_320 has none in ../shared, so four deterministic image-like
# .npy samples in [-1, 1] (the model's normalised input range) are written.
#
#   tools/bench/quant_compare.sh [BUILD_DIR] [SHARED_DIR] [ROUNDS] [ITERS]
#   (defaults: build, ../shared, 3, 10; a RelWithDebInfo build for figures)
set -euo pipefail
B=${1:-build}
SHARED=${2:-$(dirname "$0")/../../../shared}
ROUNDS=${3:-3}
ITERS=${4:-10}
SY=$B/bin/switchyard
M=$SHARED/models/onnx
[ -x "$SY" ] || { echo "quant_compare: $SY not found (build first)" >&2; exit 1; }
[ -d "$M" ] || { echo "quant_compare: $M not found" >&2; exit 1; }
command -v python3 > /dev/null || { echo "quant_compare: python3 is needed for the ultraface calibration samples" >&2; exit 1; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# N .npy float32 samples [1, 3, 240, 320]: smooth gradients plus noise
mkdir -p "$W/ufcal"
python3 - "$W/ufcal" 4 << 'EOF'
import math, random, struct, sys
out, n = sys.argv[1], int(sys.argv[2])
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 240, 320), }"
hdr += " " * (64 - (10 + len(hdr) + 1) % 64) + "\n"
for s in range(n):
    rnd = random.Random(s)
    fx, fy, ph = rnd.uniform(0.01, 0.05), rnd.uniform(0.01, 0.05), rnd.uniform(0, 6.28)
    vals = [max(-1.0, min(1.0, 0.6 * math.sin(fx * x + fy * y + ph + c) + 0.4 * (rnd.random() * 2 - 1)))
            for c in range(3) for y in range(240) for x in range(320)]
    with open("%s/sample_%d.npy" % (out, s), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<%df" % len(vals), *vals))
EOF

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
bench_ms() { "$SY" bench "$1" --iters "$ITERS" --warmup 2 | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p'; }

# name calibration
MODELS=(
  "mnist-8 $M/mnist-8"
  "super_resolution-10 $M/super_resolution-10"
  "ultraface_rfb_320 $W/ufcal"
)
printf '%-20s %10s %10s %6s %10s %10s %7s  %s\n' model fp32_bytes int8_bytes i8/f32 fp32_ms int8_ms i8/f32 "accuracy (quantize report)"
for entry in "${MODELS[@]}"; do
  read -r name calib <<< "$entry"
  f=$M/$name/model.onnx
  q=$W/$name.int8.onnx
  rep=$("$SY" quantize "$f" --calib "$calib" -o "$q" 2>&1) || { echo "$name: quantize failed: $rep" >&2; exit 1; }
  acc=$(echo "$rep" | awk '/max abs error/ {m = $4} /relative error/ {r = $3} /argmax agrees/ {a = $3}
                           END {printf "max|e| %s rel %s argmax %s", m, r, a}')
  fr=() qr=()
  for ((r = 0; r < ROUNDS; r++)); do
    fr+=("$(bench_ms "$f")")
    qr+=("$(bench_ms "$q")")
  done
  fm=$(printf '%s\n' "${fr[@]}" | median)
  qm=$(printf '%s\n' "${qr[@]}" | median)
  fb=$(stat -c %s "$f")
  qb=$(stat -c %s "$q")
  printf '%-20s %10d %10d %5.2fx %10.3f %10.3f %7.3f  %s\n' "$name" "$fb" "$qb" \
    "$(echo "$fb $qb" | awk '{print $2 / $1}')" "$fm" "$qm" "$(echo "$fm $qm" | awk '{print $2 / $1}')" "$acc"
done
