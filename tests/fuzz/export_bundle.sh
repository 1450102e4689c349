#!/bin/sh
# Export the LLM bundle the LLM fuzz targets read (stories260K from the
# shared folder). Exit 77 (skipped) when the shared model is absent.
#   export_bundle.sh CLI SHARED_DIR OUT_DIR
set -eu
cli=$1 shared=$2 out=$3
ckpt=$shared/models/llm/stories260K.bin tok=$shared/models/llm/tok512.bin
if [ ! -f "$ckpt" ] || [ ! -f "$tok" ]; then
  echo "the shared LLM checkpoint $ckpt is absent: skipped"
  exit 77
fi
rm -rf "$out"
"$cli" llm-export "$ckpt" "$tok" -o "$out" --ar 1,32 --cl 64,128 --quiet
echo "bundle exported to $out"
