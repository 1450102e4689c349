#!/usr/bin/env bash
# The README's test command: install the packages, build, run every test.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tools/dev/install-deps.sh && cmake -S . -B build && cmake --build build -j2 && ctest --test-dir build --output-on-failure
