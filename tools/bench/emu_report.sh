#!/usr/bin/env bash
# The Qualcomm emulator report (docs/emulators.md): for each emulator (htp,
# lpai, aic) x shared model (mnist-8, super_resolution-10, ultraface_rfb_320)
# in the variants it runs -- the float model, and the model quantized at run
# time by `switchyard quantize` (int8 for htp / lpai, uint8 for aic; lpai has
# no float tensors) -- one row:
#   nodes     taken by the emulator / nodes placed (folded constants excluded),
#             from `switchyard explain --emulator-report`
#   accuracy  of the graph output against cpu_ref running the FLOAT model in
#             fp32: max |err|, relative error max|err| / max|ref|, and for
#             mnist-8 the argmax agreement
#   memory    the per-node verdicts of the report: htp VTCM fits / fits-slow /
#             spill; aic fits-vtcm / fits-l2 / ddr-stream; lpai the scratch
#             memory type of each node taken
#   latency   the modelled latency line of the report (cycles and time)
# Inputs: test_data_set_0 of the model; ultraface_rfb_320 has none, so a
# deterministic image-like pattern ((i*7919) mod 256)/255 (the one
# tests/emulators uses) is written as its input and its calibration set.
# Use an optimized build: super_resolution-10 and ultraface on cpu_ref are
# slow in Debug.
#
#   tools/bench/emu_report.sh [BUILD_DIR] [SHARED_DIR]   (defaults: build, ../shared)
#   EMU_REPORT_MODELS="mnist-8" limits the models.
set -euo pipefail
B=${1:-build}
SHARED=${2:-$(dirname "$0")/../../../shared}
SY=$B/bin/switchyard
PLUG=$B/lib/switchyard/plugins
[ -x "$SY" ] || { echo "emu_report: $SY not found (build first)" >&2; exit 1; }
[ -d "$PLUG" ] || { echo "emu_report: $PLUG not found" >&2; exit 1; }
command -v python3 > /dev/null || { echo "emu_report: python3 not found" >&2; exit 1; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

ini() { # name providers [section text]
  printf '[switchyard]\nplugin_dirs = %s\nproviders = %s\nstrict = false\n%b' "$PLUG" "$2" "${3:-}" > "$W/$1.ini"
}
ini ref cpu_ref
ini htp "htp, cpu_ref" '[provider.htp]\nsoc_model = SM8650\nvtcm_mb = 8\nperf_profile = burst\n'
ini lpai "lpai, cpu_ref" '[provider.lpai]\nhw_version = v6\nscratch_mem_type = tcm\nfps = 100\n'
ini aic "aic, cpu_ref" '[provider.aic]\nsku = standard\nnum_cores = 14\nconvert_to_fp16 = true\n'

# TensorProto helpers (no numpy here): `pattern OUT d0 d1 ...` writes the
# input pattern; `cmp REF GOT [argmax]` prints "max_err rel_err [argmax]"
cat > "$W/pb.py" << 'EOF'
import struct, sys
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i
def parse(path):
    b = open(path, 'rb').read(); i = 0; dims = []; dt = 0; raw = b''; fl = []
    while i < len(b):
        key, i = varint(b, i); f, t = key >> 3, key & 7
        if t == 0:
            v, i = varint(b, i)
            if f == 1: dims.append(v)
            elif f == 2: dt = v
        elif t == 2:
            n, i = varint(b, i); d = b[i:i + n]; i += n
            if f == 9: raw = d
            elif f == 1:
                j = 0
                while j < len(d): v, j = varint(d, j); dims.append(v)
            elif f == 4: fl = list(struct.unpack('<%df' % (len(d) // 4), d))
        elif t == 5: i += 4
        elif t == 1: i += 8
    if dt != 1: sys.exit('only float outputs are compared (dtype %d)' % dt)
    return list(struct.unpack('<%df' % (len(raw) // 4), raw)) if raw else fl
def vint(v):
    out = b''
    while True:
        c = v & 0x7f; v >>= 7
        if v: out += bytes([c | 0x80])
        else: return out + bytes([c])
if sys.argv[1] == 'pattern':
    dims = [int(x) for x in sys.argv[3:]]; n = 1
    for d in dims: n *= d
    raw = struct.pack('<%df' % n, *[((i * 7919) % 256) / 255.0 for i in range(n)])
    body = b''.join(b'\x08' + vint(d) for d in dims) + b'\x10\x01' + b'\x4a' + vint(len(raw)) + raw
    open(sys.argv[2], 'wb').write(body)
else: # cmp REF_DIR GOT_DIR [argmax]: every output_K.pb; the worst output is reported
    import os
    k = 0; err_w = rel_w = 0.0; agree = 'yes'
    while os.path.exists('%s/output_%d.pb' % (sys.argv[2], k)):
        r = parse('%s/output_%d.pb' % (sys.argv[2], k)); g = parse('%s/output_%d.pb' % (sys.argv[3], k))
        if len(r) != len(g): sys.exit('output %d: size %d vs %d' % (k, len(r), len(g)))
        err = max(abs(a - b) for a, b in zip(r, g)); sc = max(abs(a) for a in r)
        err_w = max(err_w, err); rel_w = max(rel_w, err / sc if sc else 0.0)
        if r.index(max(r)) != g.index(max(g)): agree = 'NO'
        k += 1
    print('%.3g %.3g' % (err_w, rel_w) + (' ' + agree if len(sys.argv) > 4 else ''))
EOF

echo "| emulator | model | variant | nodes on emulator / placed | max abs err vs cpu_ref fp32 | rel err (of max abs ref) | argmax agrees | memory verdicts | modelled latency |"
echo "|---|---|---|---:|---:|---:|---|---|---|"
for model in ${EMU_REPORT_MODELS:-mnist-8 super_resolution-10 ultraface_rfb_320}; do
  md=$SHARED/models/onnx/$model
  in=$W/$model-in
  if [ -f "$md/test_data_set_0/input_0.pb" ]; then
    in=$md/test_data_set_0
  else
    mkdir -p "$in"
    python3 "$W/pb.py" pattern "$in/input_0.pb" 1 3 240 320 # ultraface_rfb_320: [1, 3, 240, 320]
  fi
  "$SY" run "$md/model.onnx" --config "$W/ref.ini" --input-dir "$in" --output-dir "$W/$model-ref" > /dev/null
  am=""
  [ "$model" = mnist-8 ] && am=argmax
  for scheme in int8 uint8; do
    "$SY" quantize "$md/model.onnx" --calib "$in" --scheme $scheme -o "$W/$model-$scheme.onnx" > "$W/$model-$scheme.q.txt" 2>&1 ||
      echo "quantize $model $scheme failed: $(tail -1 "$W/$model-$scheme.q.txt")" >&2
  done
  # cpu_ref on the quantized models: the error quantization itself costs
  for entry in "ref int8" "ref uint8" "htp float" "htp int8" "lpai float" "lpai int8" "aic float" "aic uint8"; do
    read -r emu variant <<< "$entry"
    m=$md/model.onnx
    [ "$variant" = float ] || m=$W/$model-$variant.onnx
    [ -f "$m" ] || { echo "| $emu | $model | $variant | quantize failed | | | | | |"; continue; }
    if [ "$emu" = ref ]; then
      "$SY" run "$m" --config "$W/ref.ini" --input-dir "$in" --output-dir "$W/$model-ref-$variant" > /dev/null
      read -r err rel agree <<< "$(python3 "$W/pb.py" cmp "$W/$model-ref" "$W/$model-ref-$variant" ${am:-})"
      echo "| cpu_ref (integer reference) | $model | $variant | - | $err | $rel | ${agree:--} | - | - |"
      continue
    fi
    rep=$W/$model-$emu-$variant.txt
    "$SY" explain "$m" --config "$W/$emu.ini" --emulator-report > "$rep"
    nodes=$(awk '/^nodes:/ {on = 1; next} on && NF >= 3 && $3 != "folded" {t++; if ($3 == e) k++} /^$/ && on {on = 0} END {printf "%d / %d", k, t}' e="$emu" "$rep")
    case $emu in
      # report lines: node op unit label WS B verdict cycles N
      htp) mem=$(awk '$6 == "B" && $8 == "cycles" {c[$7]++} END {printf "fits %d, fits-slow %d, spill %d", c["fits"], c["fits-slow"], c["spill"]}' "$rep") ;;
      aic) mem=$(awk '$6 == "B" && $8 == "cycles" {c[$7]++} END {printf "fits-vtcm %d, fits-l2 %d, ddr-stream %d", c["fits-vtcm"], c["fits-l2"], c["ddr-stream"]}' "$rep") ;;
      lpai) mem=$(awk '$6 == "B" && $8 == "cycles" {c[$7]++} END {s = ""; for (k in c) s = s "scratch in " k ": " c[k]; print (s == "" ? "-" : s)}' "$rep") ;;
    esac
    lat=$(grep -o 'modelled latency[^:]*: [0-9]* cycles = [0-9.]* us' "$rep" | sed 's/modelled latency[^:]*: //' || true)
    "$SY" run "$m" --config "$W/$emu.ini" --input-dir "$in" --output-dir "$W/$model-$emu-$variant" > /dev/null
    read -r err rel agree <<< "$(python3 "$W/pb.py" cmp "$W/$model-ref" "$W/$model-$emu-$variant" $am)"
    echo "| $emu | $model | $variant | $nodes | $err | $rel | ${agree:--} | $mem | ${lat:--} |"
  done
done
