#!/bin/sh
# quantize_example.sh PREFIX EXAMPLE_C CC SANITIZE LIBDIR SHARED WORK
# docs/examples/quantize.c compiled with the installed prefix's pkg-config
# flags (switchyard-tools) quantizes mnist-8 through the installed
# libswitchyard_tools, and the installed `switchyard quantize` does the same:
# the two files are the same bytes, for int8 and the int4 weight-only scheme.
# Needs the prefix install.tree made (the install fixture); exits 77 when
# mnist-8 is absent.
set -u
prefix=$1 src=$2 cc=$3 sanitize=$4 libdir=$5 shared=$6 work=$7
fail() { echo "FAIL: $*"; exit 1; }
m=$shared/models/onnx/mnist-8
[ -f "$m/model.onnx" ] || { echo "skipped: $m/model.onnx is absent"; exit 77; }
[ -x "$prefix/bin/switchyard" ] || fail "no installed prefix at $prefix (install.tree sets it up)"
command -v pkg-config > /dev/null || { echo "skipped: pkg-config is absent"; exit 77; }
rm -rf "$work" && mkdir -p "$work"
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
flags=$(pkg-config --cflags --libs switchyard-tools) || fail "pkg-config switchyard-tools"
echo "pkg-config switchyard-tools: $flags"
san=
[ "$sanitize" = ON ] && san="-fsanitize=address,undefined -fno-omit-frame-pointer"
# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Wextra -Werror $san "$src" -o "$work/quantize" $flags -Wl,-rpath,"$prefix/$libdir" ||
  fail "compiling $src against the installed prefix"
ldd "$work/quantize" | grep -q "$prefix/$libdir/libswitchyard_tools.so" || fail "the example does not load the installed libswitchyard_tools"
for scheme in int8 int4; do
  "$work/quantize" "$m/model.onnx" "$m" "$work/host_$scheme.onnx" $scheme || fail "$scheme: the example failed"
  "$prefix/bin/switchyard" quantize "$m/model.onnx" --calib "$m" --scheme $scheme -o "$work/cli_$scheme.onnx" \
    > "$work/cli_$scheme.log" 2>&1 || { cat "$work/cli_$scheme.log"; fail "$scheme: switchyard quantize failed"; }
  cmp "$work/host_$scheme.onnx" "$work/cli_$scheme.onnx" || fail "$scheme: the host program and switchyard quantize wrote different bytes"
  echo "$scheme: $(wc -c < "$work/host_$scheme.onnx") bytes, the same from the host program and the CLI"
done
# a host program's bad input: a refusal with a message, nothing written
"$work/quantize" "$m/model.onnx" "$m" "$work/bad.onnx" no_such_scheme > "$work/bad.log" 2>&1 && fail "an unknown scheme was accepted"
grep -q "NOT_FOUND: no loaded plugin publishes the scheme 'no_such_scheme'" "$work/bad.log" || { cat "$work/bad.log"; fail "unknown scheme: unexpected message"; }
[ ! -e "$work/bad.onnx" ] || fail "a refused run wrote $work/bad.onnx"
echo "PASS install.quantize_example"
