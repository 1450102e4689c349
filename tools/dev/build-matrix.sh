#!/usr/bin/env bash
# Builds the whole tree (library, plugins, CLI, tests) with GCC and Clang in
# every CMake build type with -DSY_WERROR=ON, so a warning any of them emits
# fails. Builds only; .ci/run runs the tests on the default, Release and
# sanitizer builds. Usage: tools/dev/build-matrix.sh [OUT_DIR] (default
# build-matrix); COMPILERS / TYPES override the lists.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build-matrix}
compilers=${COMPILERS:-gcc clang}
types=${TYPES:-Debug Release RelWithDebInfo MinSizeRel}
for cc in $compilers; do
  for bt in $types; do
    dir=$out/$cc-$bt
    printf 'build-matrix: %s %s\n' "$cc" "$bt"
    cmake -S . -B "$dir" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE="$bt" -DSY_WERROR=ON >/dev/null
    if ! cmake --build "$dir" -j2 >"$dir/build.log" 2>&1; then
      grep -E 'warning|error' "$dir/build.log" | head -40
      echo "build-matrix: $cc $bt failed (log: $dir/build.log)"
      exit 1
    fi
  done
done
echo "build-matrix: all builds warning-free"
