#!/usr/bin/env bash
# The README's test command: install the packages, build, run every test.
# Extra arguments go to the CMake configure step, e.g.
#   bash tools/dev/test.sh -DSY_WERROR=ON -DCMAKE_BUILD_TYPE=Release
# BUILD_DIR (default: build) names the build folder.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD_DIR:-build}
bash tools/dev/install-deps.sh && cmake -S . -B "$build" "$@" && cmake --build "$build" -j2 && ctest --test-dir "$build" --output-on-failure -j2
