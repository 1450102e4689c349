# Sourced by the tests/mcu scripts (bash): what each of them does first.
#
#   mcu_prepare MODE WORK   MODE qemu: exit 77 (skipped) without the cross
#                           toolchain, picolibc or QEMU; then an empty WORK
#   fail MESSAGE...         prints a failure and counts it in $fails

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

fails=0
fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
