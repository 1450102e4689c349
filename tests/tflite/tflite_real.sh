#!/bin/sh
# The shared TFLite models against the real TFLite interpreter: the npm
# package @tensorflow/tfjs-tflite (TFLite compiled to WebAssembly) is taken
# from $TFLITE_NODE_MODULES when that folder holds it, else installed into a
# temporary folder (--ignore-scripts: the .wasm files ship inside the
# package); tflite_real.mjs runs the same inputs through both.
#
#   tflite_real.sh SWITCHYARD SHARED_DIR MCU_INI [GEN_RESNET8]
# GEN_RESNET8 (tests/mcu/gen_resnet8) adds the int8 ResNet-8 it writes, which
# needs no shared data. Exit 77 (skipped) when node/npm or the package are
# unavailable, or when there is no model at all.
set -eu
sy=$1
shared=$2
ini=$3
gen_resnet8=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tfljs_modules.sh"
[ -d "$shared/models/tflite" ] || [ -n "$gen_resnet8" ] ||
    { echo "SKIPPED: $shared/models/tflite is absent (the shared folder)"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy_tflreal.XXXXXX")
trap 'rm -rf "$dir"' EXIT
tfljs_modules "$dir"
mkdir "$dir/work" "$dir/generated"
roots=
if [ -d "$shared/models/tflite" ]; then
    roots=$shared/models
else
    echo "note: $shared/models/tflite is absent (the shared folder): only the generated ResNet-8 runs"
fi
if [ -n "$gen_resnet8" ]; then
    "$gen_resnet8" "$dir/generated" >/dev/null
    roots="$roots $dir/generated"
fi
# shellcheck disable=SC2086 # roots is a list of folders without spaces
TFLITE_NODE_MODULES="$mods" node "$here/tflite_real.mjs" "$sy" "$dir/work" "$ini" $roots
