#!/bin/sh
# int8 CONV_3D against the real TFLite interpreter through the equivalent
# int8 CONV_2D (tflite_conv3d_real.mjs, gen_conv3d_model.c); needs no shared data.
#
#   tflite_conv3d_real.sh SWITCHYARD GEN_CONV3D_MODEL
# Exit 77 (skipped) when node/npm or the package are unavailable.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tfljs_modules.sh"
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy_tflc3d.XXXXXX")
trap 'rm -rf "$dir"' EXIT
tfljs_modules "$dir"
mkdir "$dir/work"
TFLITE_NODE_MODULES="$mods" node "$here/tflite_conv3d_real.mjs" "$1" "$2" "$dir/work"
