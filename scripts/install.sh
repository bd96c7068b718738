#!/bin/bash
# install.sh — make install and make uninstall (docs/runtime.md, "Use the runtime in your program").
#
#   scripts/install.sh              installs into $DESTDIR$PREFIX (PREFIX default /usr/local)
#   scripts/install.sh --uninstall  removes what the install wrote (its manifest says what)
#
# The Makefile passes BUILD (the build tree) and FK_INSTALL_VARIANTS ("cont-seg=-DFK_STEAL=1
# -DFK_STACK=1;..."): each runtime build's name and the -D flags its code must be compiled with.
# The tree (the layout make bundle uses, docs/bundle.md):
#   bin/forkscope                        finds its drivers in ../libexec/forkscope
#   libexec/forkscope/                   fk-bench-* (peers included when built), fk-switch
#   lib/libforkscope-V.a, -V-debug.a     each runtime build, release (-O3) and FK_DEBUG (-O1)
#   lib/pkgconfig/forkscope-V.pc, -V-debug.pc
#   include/forkscope.h, include/forkscope/*.h
#   share/forkscope/configs/, plots/     which an installed forkscope finds (../share/forkscope)
#   share/man/man1/forkscope.1           forkscope --man
#   share/forkscope/MANIFEST             every file installed, for --uninstall
# The archives are the in-tree ones, built -fno-pie: each .pc's Libs carry -no-pie, so that a
# plain cc (PIE by default on Debian) links them.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${PREFIX:-/usr/local}
root=${DESTDIR:-}$prefix
build=${BUILD:-build}
manifest=$root/share/forkscope/MANIFEST
die() { echo "install: $*" >&2; exit 1; }

if [ "${1:-}" = --uninstall ]; then
    [ -f "$manifest" ] || die "nothing to uninstall: $manifest is missing (was forkscope installed into $root?)"
    n=0
    while IFS= read -r f; do
        [ -n "$f" ] || continue
        rm -f "$root/$f" && n=$((n + 1))
    done < "$manifest"
    rm -f "$manifest"
    for d in libexec/forkscope include/forkscope share/forkscope/configs share/forkscope/plots share/forkscope \
             lib/pkgconfig share/man/man1 share/man; do
        [ -d "$root/$d" ] && rmdir --ignore-fail-on-non-empty "$root/$d"
    done
    echo "uninstalled forkscope from $root ($n files)"
    exit 0
fi

[ -n "${FK_INSTALL_VARIANTS:-}" ] || die "FK_INSTALL_VARIANTS is not set (run make install)"
version=$(sed -n 's/^#define FK_VERSION "\(.*\)"$/\1/p' runtime/include/forkscope/config.h)
[ -n "$version" ] || die "no FK_VERSION in runtime/include/forkscope/config.h"
[ -x "$build/bin/forkscope" ] || die "$build/bin/forkscope is not built"

# Everything there before anything is written (an install cut short would leave files no
# manifest names).
IFS=';' read -ra builds <<< "$FK_INSTALL_VARIANTS"
names=()
for b in "${builds[@]}"; do
    v=${b%%=*}
    v=${v//[[:space:]]/}
    [ -n "$v" ] || continue
    names+=("$v=${b#*=}")
    for m in rel debug; do
        [ -f "$build/$m/$v/libforkscope.a" ] || die "$build/$m/$v/libforkscope.a is not built (make install builds it)"
    done
done
[ ${#names[@]} -gt 0 ] || die "FK_INSTALL_VARIANTS names no build"

installed=()
put() { # MODE SRC DEST(relative to root)
    install -D -m "$1" "$2" "$root/$3"
    installed+=("$3")
}

put 755 "$build/bin/forkscope" bin/forkscope
for d in "$build"/bin/fk-bench-* "$build"/bin/fk-switch; do
    [ -x "$d" ] && put 755 "$d" "libexec/forkscope/$(basename "$d")"
done
put 644 runtime/include/forkscope.h include/forkscope.h
for h in runtime/include/forkscope/*.h; do put 644 "$h" "include/forkscope/$(basename "$h")"; done
for c in configs/*.json configs/README.md; do put 644 "$c" "share/forkscope/configs/$(basename "$c")"; done
for g in plots/*.gp; do put 644 "$g" "share/forkscope/plots/$(basename "$g")"; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/bin/forkscope" --man > "$tmp/forkscope.1"
put 644 "$tmp/forkscope.1" share/man/man1/forkscope.1

for b in "${names[@]}"; do
    v=${b%%=*}
    flags=${b#*=}
    flags=${flags%"${flags##*[![:space:]]}"}
    for kind in release debug; do
        if [ $kind = release ]; then lib=$build/rel/$v/libforkscope.a name=forkscope-$v extra= what="release (-O3)"
        else lib=$build/debug/$v/libforkscope.a name=forkscope-$v-debug extra=" -DFK_DEBUG=1" what="FK_DEBUG checks (-O1)"; fi
        put 644 "$lib" "lib/lib$name.a"
        cat > "$tmp/$name.pc" <<PC
prefix=$prefix
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: $name
Description: forkscope's fork-join work-stealing runtime, build $v, $what
Version: $version
Requires.private: hwloc
Cflags: -I\${includedir} $flags$extra -pthread
Libs: -L\${libdir} -l$name -pthread -lhwloc -lm -no-pie
PC
        put 644 "$tmp/$name.pc" "lib/pkgconfig/$name.pc"
    done
done

printf '%s\n' "${installed[@]}" share/forkscope/MANIFEST > "$tmp/MANIFEST"
install -D -m 644 "$tmp/MANIFEST" "$manifest"
echo "installed forkscope $version into $root (${#installed[@]} files; make uninstall PREFIX=$prefix${DESTDIR:+ DESTDIR=$DESTDIR} removes them)"
