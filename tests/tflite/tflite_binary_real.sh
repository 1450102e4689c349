#!/bin/sh
# int8 ADD, SUB and MUL, every pair of input codes, against the real TFLite
# interpreter (tflite_binary_real.mjs); needs no shared data.
#
#   tflite_binary_real.sh SWITCHYARD GEN_BINARY_MODEL MCU_INI
# Exit 77 (skipped) when node/npm or the package are unavailable.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tfljs_modules.sh"
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy_tflbin.XXXXXX")
trap 'rm -rf "$dir"' EXIT
tfljs_modules "$dir"
mkdir "$dir/work"
TFLITE_NODE_MODULES="$mods" node "$here/tflite_binary_real.mjs" "$1" "$2" "$dir/work" "$3"
