#!/bin/sh
# A fused activation under the default rules (rules = seed) on riscv_mcu:
# fused RELU6 against the explicit CONV_2D + RELU6 pair and real TFLite
# (fused_act_real.mjs), and the fused activations no seed row composes with
# (TANH, RELU_N1_TO_1) still refused with the row quoted. Needs no shared data.
#
#   test_mcu_fused_act.sh SWITCHYARD GEN_ACT_MODEL MCU_INI
# Exit 77 (skipped) when node/npm or @tensorflow/tfjs-tflite are unavailable.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy_fusedact.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fails=0
for form in tanh n1to1; do
  "$2" "$dir/$form.tflite" $form
  act=$([ $form = tanh ] && echo TANH || echo RELU_N1_TO_1)
  needle="CONV_2D: fused_activation_function must be NONE or RELU (or RELU6, run as #56 Relu6 after it), got $act (ops-mcu.md Table A #1 Conv2D"
  if "$1" codegen "$dir/$form.tflite" --target ws63 -o "$dir/pkg_$form" > "$dir/$form.log" 2>&1; then
    echo "FAIL: fused $act: codegen succeeded under the default rules"; fails=$((fails + 1))
  elif ! grep -qF -- "$needle" "$dir/$form.log"; then
    echo "FAIL: fused $act: the refusal lacks '$needle'"; cat "$dir/$form.log"; fails=$((fails + 1))
  else
    echo "ok   refused: fused $act quoting ops-mcu.md Table A #1 Conv2D"
  fi
done
# the fused model generates under the default rules, with the two-row note
"$2" "$dir/fused.tflite" fused
if "$1" codegen "$dir/fused.tflite" --target ws63 -o "$dir/pkg" > "$dir/cg.log" 2>&1; then
  echo "ok   fused RELU6: codegen under the default rules"
else
  echo "FAIL: fused RELU6: codegen under the default rules"; cat "$dir/cg.log"; fails=$((fails + 1))
fi
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
. "$here/../tflite/tfljs_modules.sh"
tfljs_modules "$dir"
mkdir "$dir/work"
# strict: every node on riscv_mcu, none falls back to cpu_ref
sed 's/^strict = false/strict = true/' "$3" > "$dir/strict.ini"
grep -q '^strict = true' "$dir/strict.ini" || { echo "FAIL: $3 has no 'strict = false' line to turn"; exit 1; }
TFLITE_NODE_MODULES="$mods" node "$here/fused_act_real.mjs" "$1" "$2" "$dir/work" "$dir/strict.ini"
