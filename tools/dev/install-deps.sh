#!/usr/bin/env bash
# Installs the Debian 12 packages Switchyard needs to build and test.
# The one list of build dependencies: the README and .ci/run both use it.
set -euo pipefail

PACKAGES=(
  cmake make pkg-config            # build system
  gcc clang libclang-rt-dev        # compilers; clang's sanitizer runtimes for the ASan/UBSan build
  libinih-dev                      # INI parsing
  uthash-dev                       # registry and name tables
  libprotobuf-c-dev protobuf-c-compiler  # ONNX decoding (code generated from onnx.proto)
  libmd-dev                        # sha256 pins of plugin files
  zlib1g-dev                       # IDX training data, gzip or not (tools library); tests/mcu PNG inputs
  libjpeg62-turbo-dev libpng-dev   # plugins/ops_image: ImageDecoder's JPEG and PNG streams
  libpcre2-dev                     # plugins/ops_string: RegexFullMatch (PCRE2 for the RE2 syntax ONNX names)
  libtiff-dev libopenjp2-7-dev     # plugins/ops_image: ImageDecoder's TIFF and JPEG 2000 streams
  gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf  # switchyard codegen packages for rv32imfc MCUs
  qemu-system-misc                 # qemu-system-riscv32: the MCU packages run under QEMU in tests/mcu
  libxnnpack-dev libpthreadpool-dev libcpuinfo-dev  # the cpu provider's kernels and intra-op threads (providers/cpu, docs/cpu.md)
  python3 python3-numpy            # the Python package tools/python and tests/python
  python3-pip python3-setuptools python3-wheel  # tests/python: pip install --no-build-isolation (offline)
  python3-matplotlib dataset-fashion-mnist  # tests/python: docs/examples/accuracy.py's chart, on real images
  python3-onnx                     # tests/python: an independent reader of training checkpoints
)

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  SUDO=(sudo)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -q
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
