#!/bin/sh
# The .tflite export against real TFLite (tflite_export_real.mjs): the
# sine model (when the shared folder has it) and the CNN of
# test_train_tflite.c, trained and exported by `test_train_tflite export`.
#
#   tflite_export_real.sh TEST_TRAIN_TFLITE SWITCHYARD SHARED_DIR
# Exit 77 (skipped) when node/npm or @tensorflow/tfjs-tflite are unavailable.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tflite/tfljs_modules.sh"
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy_trtfl.XXXXXX")
trap 'rm -rf "$dir"' EXIT
tfljs_modules "$dir"
mkdir "$dir/work"
"$1" export "$3" "$dir/work" >/dev/null
TFLITE_NODE_MODULES="$mods" node "$here/tflite_export_real.mjs" "$2" "$dir/work"
