#!/bin/sh
# Runs the aarch64 build of test_fiber under qemu-user (make check-aarch64).  The cross
# compiler and qemu-user come from scripts/setup.sh; without them this fails, saying so.
bin=build/aarch64/tests/test_fiber
if ! command -v qemu-aarch64 >/dev/null 2>&1; then
    echo "FAIL aarch64: qemu-aarch64 not found (Debian package qemu-user; scripts/setup.sh installs it)"
    echo "0 passed, 1 failed"
    exit 1
fi
if [ ! -x "$bin" ]; then
    echo "FAIL aarch64: $bin not built (needs aarch64-linux-gnu-gcc: gcc-aarch64-linux-gnu, libc6-dev-arm64-cross)"
    echo "0 passed, 1 failed"
    exit 1
fi
exec qemu-aarch64 "$bin" "$@"
