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

# A manifest line: "file PATH" or "dir PATH" (a directory the install created), PATH relative
# to the root; anything else (an absolute path, a "..") is refused rather than removed.
safe_path() { case "$1" in "" | /* | ..* | */../* | */..) return 1 ;; esac; return 0; }

if [ "${1:-}" = --uninstall ]; then
    [ -f "$manifest" ] || die "nothing to uninstall: $manifest is missing (was forkscope installed into $root?)"
    n=0
    while read -r kind f; do
        safe_path "$f" || die "$manifest: refusing the line '$kind $f' (not a path under $root)"
        [ "$kind" = file ] || [ "$kind" = dir ] || die "$manifest: refusing the line '$kind $f'"
    done < "$manifest"
    # the directories it created, deepest first (each removed below only if empty then)
    dirs=$(grep '^dir ' "$manifest" | cut -c5- | awk '{print length($0) "\t" $0}' | sort -rn | cut -f2-) || true
    while read -r kind f; do
        if [ "$kind" = file ]; then rm -f "$root/$f"; n=$((n + 1)); fi
    done < "$manifest"
    rm -f "$manifest"
    while IFS= read -r d; do
        if [ -n "$d" ] && [ -d "$root/$d" ]; then rmdir --ignore-fail-on-non-empty "$root/$d"; fi
    done <<< "$dirs"
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

# What is generated (the manual page, the .pc files) is made before anything is written; then
# each file and each directory the install creates goes into the manifest before it is
# written, so that an install cut short can still be uninstalled.  A manifest already there
# (an earlier install) is kept and added to.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/bin/forkscope" --man > "$tmp/forkscope.1" || die "forkscope --man failed"
for b in "${names[@]}"; do
    v=${b%%=*}
    flags=${b#*=}
    flags=${flags%"${flags##*[![:space:]]}"}
    for kind in release debug; do
        if [ $kind = release ]; then name=forkscope-$v extra= what="release (-O3)"
        else name=forkscope-$v-debug extra=" -DFK_DEBUG=1" what="FK_DEBUG checks (-O1)"; fi
        cat > "$tmp/$name.pc" <<PC || die "cannot write $tmp/$name.pc"
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
    done
done

mkdir -p "$root" || die "cannot create $root"
record() { # KIND PATH: into the manifest (once)
    grep -qxF "$1 $2" "$manifest" 2>/dev/null || echo "$1 $2" >> "$manifest" || die "cannot write $manifest"
}
pending=() # directories made before the manifest (which lives in one of them) exists
mkdirs() { # the directories of PATH (relative) that do not exist yet: recorded, then made
    local d=$1 missing=()
    while [ "$d" != . ] && [ ! -d "$root/$d" ]; do missing=("$d" "${missing[@]}"); d=$(dirname "$d"); done
    for d in "${missing[@]}"; do
        if [ -f "$manifest" ]; then record dir "$d"; else pending+=("$d"); fi
        mkdir "$root/$d" || die "cannot create $root/$d"
    done
}
mkdirs share/forkscope
touch "$manifest" || die "cannot write $manifest"
for d in "${pending[@]}"; do record dir "$d"; done
record file share/forkscope/MANIFEST
n=0
put() { # MODE SRC DEST(relative to root)
    mkdirs "$(dirname "$3")"
    record file "$3"
    install -m "$1" "$2" "$root/$3" || die "cannot install $root/$3"
    n=$((n + 1))
}

put 755 "$build/bin/forkscope" bin/forkscope
for d in "$build"/bin/fk-bench-* "$build"/bin/fk-switch; do
    [ -x "$d" ] && put 755 "$d" "libexec/forkscope/$(basename "$d")"
done
put 644 runtime/include/forkscope.h include/forkscope.h
for h in runtime/include/forkscope/*.h; do put 644 "$h" "include/forkscope/$(basename "$h")"; done
for c in configs/*.json configs/README.md; do put 644 "$c" "share/forkscope/configs/$(basename "$c")"; done
for g in plots/*.gp; do put 644 "$g" "share/forkscope/plots/$(basename "$g")"; done
put 644 "$tmp/forkscope.1" share/man/man1/forkscope.1
for b in "${names[@]}"; do
    v=${b%%=*}
    put 644 "$build/rel/$v/libforkscope.a" "lib/libforkscope-$v.a"
    put 644 "$build/debug/$v/libforkscope.a" "lib/libforkscope-$v-debug.a"
    put 644 "$tmp/forkscope-$v.pc" "lib/pkgconfig/forkscope-$v.pc"
    put 644 "$tmp/forkscope-$v-debug.pc" "lib/pkgconfig/forkscope-$v-debug.pc"
done
installed=$(grep -c '^file ' "$manifest")
echo "installed forkscope $version into $root ($n files, $installed in its manifest; make uninstall PREFIX=$prefix${DESTDIR:+ DESTDIR=$DESTDIR} removes them)"
