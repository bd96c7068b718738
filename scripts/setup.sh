#!/bin/sh
# Installs the Debian packages forkscope needs, and only those that are missing (clang-19:
# the libfork peer, C++23, built by make peers; patchelf: make bundle's run paths).
# Quick when everything is present: one dpkg-query, no network.
set -eu

PKGS="gcc make clang libomp-dev nettle-dev libhwloc-dev hwloc libpapi-dev papi-tools
      libjansson-dev libgsl-dev r-mathlib libtbb-dev g++ gnuplot-nox libtsan2 libasan8 libubsan1 valgrind
      gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user slurm-wlm munge iproute2 util-linux spin bc python3
      libclang-rt-14-dev clang-19 patchelf pkgconf groff-base man-db"

missing=""
for p in $PKGS; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$st" in
        *"install ok installed"*) ;;
        *) missing="$missing $p" ;;
    esac
done

if [ -z "$missing" ]; then
    exit 0
fi

echo "setup: installing missing Debian packages:$missing"
SUDO=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
        echo "setup: need root (or sudo) to install:$missing" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
# Try without refreshing the package lists first; refresh only if that fails.
if ! $SUDO apt-get install -y --no-install-recommends $missing; then
    $SUDO apt-get update
    $SUDO apt-get install -y --no-install-recommends $missing
fi
