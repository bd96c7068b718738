#!/bin/bash
# make bundle: a relocatable tarball of this build, for an x86-64 Linux machine with no
# compiler and no -dev packages (a cluster node, a bigger server; docs/bundle.md).
#
#   scripts/bundle.sh OUT.tar.gz     (BUILD=dir: the build tree, default build)
#
# Its tree, the layout an installed forkscope has (PREFIX = the tarball's top folder):
#   bin/forkscope                         finds its drivers in ../libexec/forkscope
#   libexec/forkscope/fk-bench-*, fk-switch   every driver in BUILD/bin, peers included
#   lib/                                  every shared library they load (ldd) but libc, libm,
#                                         libpthread, libdl, librt and the loader; and
#                                         libtbbmalloc, which oneTBB opens itself
#   share/forkscope/configs/, plots/      the experiment files, the gnuplot scripts
#   share/forkscope/BUNDLE.txt            build id, revision, glibc floor, -march (env.json
#                                         records it as "bundle"); SHA256SUMS of every file
# Each executable's run path is $ORIGIN-relative (../lib, ../../lib) and each library's is
# $ORIGIN (their own dependencies: libpapi -> libpfm), set with patchelf; executables and
# libraries lose their debug sections (strip --strip-debug: symbols stay, for callgrind).
# Exit status: 0, or 1 with the reason (a tool missing, a library that does not resolve).
set -euo pipefail

out=${1:?usage: scripts/bundle.sh OUT.tar.gz}
build=${BUILD:-build}
bin=$build/bin
die() { echo "bundle: $*" >&2; exit 1; }

for t in patchelf ldd strip objdump sha256sum tar gzip; do
    command -v $t >/dev/null || die "needs $t (patchelf: Debian package patchelf, which scripts/setup.sh installs)"
done
[ -x "$bin/forkscope" ] || die "no $bin/forkscope: build first (make all)"
drivers=$(cd "$bin" && ls fk-bench-* fk-switch 2>/dev/null | sort) || true
[ -n "$drivers" ] || die "no drivers in $bin: build first (make all)"

rev=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
top=forkscope-$rev
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/$top
mkdir -p "$root/bin" "$root/libexec/forkscope" "$root/lib" "$root/share/forkscope/configs" "$root/share/forkscope/plots"

cp "$bin/forkscope" "$root/bin/"
for d in $drivers; do cp "$bin/$d" "$root/libexec/forkscope/"; done
cp configs/*.json configs/README.md "$root/share/forkscope/configs/"
cp plots/*.gp "$root/share/forkscope/plots/"

# The libraries: what the loader resolves for each executable (ldd lists the whole closure),
# copied under the name the loader looks for.  libc, libm, libpthread, libdl, librt and the
# loader stay the machine's (they are glibc: the floor below).
system_lib() {
    case "$1" in
        linux-vdso.so.*|ld-linux*.so.*|libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*) return 0 ;;
    esac
    return 1
}
collect() { # FILE...: copy what they load into lib/
    local f line name path
    for f in "$@"; do
        while read -r line; do
            case "$line" in
                *"=> not found"*) die "$(basename "$f"): ${line%% *} not found (ldd)" ;;
                *" => /"*) name=${line%% *}; path=${line#* => }; path=${path%% (*} ;;
                *) continue ;;
            esac
            system_lib "$name" && continue
            [ -e "$root/lib/$name" ] || cp -L "$path" "$root/lib/$name"
        done < <(env -u LD_LIBRARY_PATH ldd "$f")
    done
}
collect "$root/bin/forkscope" "$root"/libexec/forkscope/*
# oneTBB opens its allocator itself (dlopen, from libtbb's own directory when it can): bring
# it, so that TBB allocates there as it does here.
if [ -e "$root/lib/libtbb.so.12" ]; then
    m=$(env -u LD_LIBRARY_PATH ldconfig -p | awk '/libtbbmalloc\.so\.2 .*x86-64/ && !m {m = $NF} END {print m}')
    if [ -n "$m" ]; then cp -L "$m" "$root/lib/libtbbmalloc.so.2"; collect "$root/lib/libtbbmalloc.so.2"; fi
fi

# The floor: the newest glibc symbol version any file needs (before stripping: the same).
glibc_required=$(for f in "$root"/bin/* "$root"/libexec/forkscope/* "$root"/lib/*; do objdump -T "$f"; done 2>/dev/null |
                 grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)

chmod u+w "$root"/lib/*
strip --strip-debug "$root"/bin/* "$root"/libexec/forkscope/* "$root"/lib/*
patchelf --set-rpath '$ORIGIN/../lib' "$root/bin/forkscope"
for f in "$root"/libexec/forkscope/*; do patchelf --set-rpath '$ORIGIN/../../lib' "$f"; done
for f in "$root"/lib/*; do patchelf --set-rpath '$ORIGIN' "$f"; done

peers="" peer_march=""
for d in $drivers; do
    p=${d#fk-bench-}
    [ -e "$build/peers/$p/peerinfo.c" ] || continue # (a peer's driver: make peers wrote its peerinfo)
    # (the flags make peers compiled its code with, as its driver records them for the JSON)
    m=$(sed -n 's/.*bench_peer_flags\[\] = "\(.*\)";/\1/p' "$build/peers/$p/peerinfo.c" 2>/dev/null | grep -o -- '-march=[^ ]*' | head -1) || true
    peers="${peers:+$peers }$p"
    peer_march="${peer_march:+$peer_march, }$p ${m:-no -march}"
done
(cd "$root" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum) > "$root/share/forkscope/SHA256SUMS"
build_id=$(sha256sum < "$root/share/forkscope/SHA256SUMS" | cut -c1-16)
{
    echo "# forkscope bundle (make bundle; docs/bundle.md).  Unpack anywhere and run bin/forkscope:"
    echo "# it finds its drivers, libraries and gnuplot scripts by itself.  env.json records these"
    echo "# lines as \"bundle\"; SHA256SUMS lists every file (build_id: its SHA-256, first 16 digits)."
    echo "build_id: $build_id"
    echo "git_revision: $rev"
    echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "build_system: $(uname -srm); $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
    echo "glibc_build: $(getconf GNU_LIBC_VERSION | sed 's/glibc //')"
    echo "glibc_required: $glibc_required"
    echo "march: x86-64 (forkscope's builds take no -march)"
    echo "peer_march: ${peer_march:-no peer built with -march}"
    echo "drivers: $(echo $drivers | sed 's/fk-bench-//g')"
    echo "peers: ${peers:-none built (make peers PEERS_DIR=DIR before make bundle)}"
    echo "libraries: $(cd "$root/lib" && ls | tr '\n' ' ')"
} > "$root/share/forkscope/BUNDLE.txt"

mkdir -p "$(dirname "$out")"
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner -cf - "$top" | gzip -n -6 > "$out.tmp"
mv "$out.tmp" "$out"
echo "bundle: $out ($(du -h "$out" | cut -f1); $top/: $(echo $drivers | wc -w) drivers, $(ls "$root/lib" | wc -l) libraries," \
     "peers: ${peers:-none}; build id $build_id; needs glibc $glibc_required or later, x86-64${peer_march:+, peers $peer_march})"
