# Sourced by the tests/mcu scripts (bash): what each of them does first.
#
#   mcu_prepare MODE WORK   MODE qemu: exit 77 (skipped) without the cross
#                           toolchain, picolibc or QEMU; then an empty WORK
#   mcu_need_fashion_mnist  sets $data to Fashion-MNIST's folder
#                           (FASHION_MNIST_DIR, default Debian's); exit 77
#                           (skipped) when its training images are absent
#   fail MESSAGE...         prints a failure and counts it in $fails
#   mcu_pkg_run MODE PKG OUT [SECONDS] [PROGRAM]
#                           builds the codegen package PKG (MODE host: the
#                           host compiler with -Werror; qemu: rv32imfc with
#                           picolibc) and runs its PROGRAM (default
#                           sy_model_main; a training package's is
#                           sy_train_main) under QEMU at most SECONDS,
#                           default 600, its output in OUT; a failed build
#                           prints the log's tail and returns 1 (the run's
#                           own status is left to the caller's comparison,
#                           and kept in $mcu_run_rc)

mcu_prepare() {
  if [ "$1" = qemu ]; then
    for tool in riscv64-unknown-elf-gcc qemu-system-riscv32; do
      if ! command -v "$tool" > /dev/null; then
        echo "SKIP: $tool not found: install gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc (tools/dev/install-deps.sh)"
        exit 77
      fi
    done
    if [ ! -f "$(riscv64-unknown-elf-gcc -print-file-name=picolibc.specs)" ]; then
      echo "SKIP: picolibc for riscv64-unknown-elf not found: install picolibc-riscv64-unknown-elf (tools/dev/install-deps.sh)"
      exit 77
    fi
  fi
  rm -rf "$2"
  mkdir -p "$2"
  # the reference run: cpu_ref alone (the default configuration puts the
  # fast cpu provider first, whose kernels are not the bytes riscv_mcu shares)
  CPU_REF_INI=$2/cpu_ref.ini
  printf '[switchyard]\nplugin_dirs = @default\nproviders = cpu_ref\n' > "$CPU_REF_INI"
}

mcu_need_fashion_mnist() {
  data=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
  [ -e "$data/train-images-idx3-ubyte.gz" ] || [ -e "$data/train-images-idx3-ubyte" ] ||
    { echo "SKIP: Fashion-MNIST is absent from $data (Debian package dataset-fashion-mnist)"; exit 77; }
}

fails=0
fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}

mcu_pkg_run() {
  local mode=$1 pkg=$2 out=$3 limit=${4:-600} prog=${5:-sy_model_main}
  if [ "$mode" = qemu ]; then
    cmake -S "$pkg" -B "$pkg/build" -DCMAKE_TOOLCHAIN_FILE="$pkg/toolchain-riscv32.cmake" > "$pkg/build.log" 2>&1 &&
      cmake --build "$pkg/build" >> "$pkg/build.log" 2>&1 || { tail -20 "$pkg/build.log"; return 1; }
    (cd "$pkg" && timeout "$limit" qemu-system-riscv32 -machine virt -bios none -nographic \
      -semihosting-config enable=on,target=native -icount shift=0 -kernel "$pkg/build/$prog.elf") > "$out" 2>&1
    mcu_run_rc=$?
  else
    cmake -S "$pkg" -B "$pkg/build" -DCMAKE_C_FLAGS="-Werror" > "$pkg/build.log" 2>&1 &&
      cmake --build "$pkg/build" >> "$pkg/build.log" 2>&1 || { tail -20 "$pkg/build.log"; return 1; }
    (cd "$pkg" && "$pkg/build/$prog") > "$out" 2>&1
    mcu_run_rc=$?
  fi
  return 0
}
