#!/bin/sh
# Builds and runs tools/bench/cpu_libs.c: the largest convolution of the
# issue-17 models through XNNPACK, oneDNN and OpenBLAS (those installed), and
# the core's FMA peak, in one run (docs/cpu.md). Run it under nice.
#   tools/bench/cpu_libs.sh [THREADS]     (OMP_NUM_THREADS follows THREADS)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy_cpulibs.XXXXXX")
trap 'rm -rf "$dir"' EXIT
libs="-lm"
defs=""
[ -f /usr/include/xnnpack.h ] && libs="$libs -lXNNPACK -lpthreadpool -lcpuinfo"
[ -f /usr/include/oneapi/dnnl/dnnl.h ] && libs="$libs -ldnnl"
if echo '#include <cblas.h>' | cc -E - >/dev/null 2>&1 && echo 'int main(void){return 0;}' |
    cc -x c - -lopenblas -o "$dir/probe" 2>/dev/null; then
    libs="$libs -lopenblas"
    defs="-DWITH_CBLAS"
fi
cc -O2 -w $defs "$here/cpu_libs.c" -o "$dir/cpu_libs" $libs
OMP_NUM_THREADS=${1:-1} "$dir/cpu_libs" "${1:-1}"
