#!/bin/bash
# install-test.sh — make install into a temporary prefix and use it as a user would:
#  - the tree has what docs/runtime.md says (bin, libexec drivers, a library and a .pc per
#    build, release and debug, the headers, configs, gnuplot scripts, the manual page);
#  - out of the tree, with `cc $(pkg-config --cflags --libs forkscope-V)`, gcc and clang:
#    the program forkscope.h opens with (every runtime build, release; its 4 workers) and
#    examples/reduce.c (every build, release and debug, on 2 workers, to its serial answers:
#    its exit status says so, naming the build it linked);
#  - code compiled with one build's flags and linked with another's library fails to link,
#    naming the build it was compiled for; pkg-config's version is the header's and forkscope's;
#  - the installed forkscope, run from another directory, finds its drivers (libexec) and its
#    gnuplot scripts (share/forkscope/plots) for a small sweep, and its manual page renders;
#  - make uninstall leaves nothing behind.
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
top=$PWD
tmp=$(mktemp -d /tmp/fk_install_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; shift; printf '%s\n' "$@" | sed 's/^/  | /' | tail -n 15; fail=$((fail + 1)); }
builds="cont-seg cont-lin child-seg child-lin child-native child-fiber"

build=${BUILD:-build}
# a page of another package's, there before: uninstall must leave it and its directories
mkdir -p "$prefix/share/man/man1" && echo ".TH KEEP 1" > "$prefix/share/man/man1/keep.1"
if ! out=$(make -s install PREFIX="$prefix" BUILD="$build" 2>&1); then
    bad "make install PREFIX=$prefix" "$out"
    echo "$pass passed, $fail failed"
    exit 1
fi
missing=""
for f in bin/forkscope libexec/forkscope/fk-bench-serial libexec/forkscope/fk-bench-cont-seg libexec/forkscope/fk-switch \
         include/forkscope.h include/forkscope/config.h include/forkscope/impl.h share/forkscope/configs/quick.json \
         share/forkscope/plots/speedup.gp share/man/man1/forkscope.1; do
    [ -s "$prefix/$f" ] || missing="$missing $f"
done
for v in $builds; do
    for n in forkscope-$v forkscope-$v-debug; do
        [ -s "$prefix/lib/lib$n.a" ] || missing="$missing lib/lib$n.a"
        [ -s "$prefix/lib/pkgconfig/$n.pc" ] || missing="$missing lib/pkgconfig/$n.pc"
    done
done
if [ -z "$missing" ]; then ok "make install: the tree ($(find "$prefix" -type f | wc -l) files)"
else bad "make install: the tree" "missing:$missing"; fi

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
want=$(sed -n 's/^#define FK_VERSION "\(.*\)"$/\1/p' runtime/include/forkscope/config.h)
got_pc=$(pkg-config --modversion forkscope-cont-seg 2>&1)
got_fs=$("$prefix/bin/forkscope" --version 2>&1)
if [ -n "$want" ] && [ "$got_pc" = "$want" ] && [ "$got_fs" = "forkscope $want" ]; then
    ok "one version: the header's FK_VERSION $want, pkg-config's, forkscope --version's"
else
    bad "one version" "FK_VERSION '$want', pkg-config '$got_pc', forkscope '$got_fs'"
fi

mkdir -p "$tmp/user"
cp examples/reduce.c "$tmp/user/"
cd "$tmp/user"
for cc in gcc clang; do
    for v in $builds; do
        for n in forkscope-$v forkscope-$v-debug; do
            what="examples/reduce.c with $cc against $n"
            # shellcheck disable=SC2046
            if ! out=$($cc -O2 -Wall -Wextra reduce.c $(pkg-config --cflags --libs $n) -o reduce 2>&1) || [ -n "$out" ]; then
                bad "$what: builds warning-free" "$out"
                continue
            fi
            out=$(./reduce 2 2>&1)
            rc=$?
            if [ $rc -eq 0 ] && echo "$out" | grep -q "^forkscope $want, $v, 2 workers: sum \([-0-9]*\) (serial \1), fib(30) 832040 (serial 832040)"; then
                ok "$what: builds, runs on 2 workers, both answers right"
            else
                bad "$what: runs on 2 workers, both answers right (exit $rc)" "$out"
            fi
        done
    done
done

# The program forkscope.h opens with, as a user would copy it out of the installed header.
sed -n '/^ \*   #include <forkscope.h>/,/^ \*   }$/p' "$prefix/include/forkscope.h" | sed -e 's/^ \*   //' -e 's/^ \*$//' > door.c
for cc in gcc clang; do
    for v in $builds; do
        # shellcheck disable=SC2046
        if out=$($cc -O2 -Wall -Wextra door.c $(pkg-config --cflags --libs forkscope-$v) -o door 2>&1) &&
            [ -z "$out" ] && [ "$(./door 2>&1)" = "fib(30) = 832040" ] && [ "$(wc -l < door.c)" -gt 10 ]; then
            ok "the program forkscope.h opens with, $cc, forkscope-$v: builds warning-free, prints fib(30) = 832040"
        else
            bad "the program forkscope.h opens with ($cc, forkscope-$v)" "$out" "$(./door 2>&1)" "$(head -5 door.c)"
        fi
    done
done

# A mismatch fails to link, naming the build the code was compiled for.
out=$(gcc -O2 reduce.c $(pkg-config --cflags forkscope-child-native) $(pkg-config --libs forkscope-cont-seg) -o mm 2>&1)
rc=$?
if [ $rc -ne 0 ] && echo "$out" | grep -q "undefined reference to .fk__abi2_steal2_stack3_debug0_"; then
    ok "child-native's flags against cont-seg's library: refused at link time, naming the build"
else
    bad "child-native's flags against cont-seg's library: refused at link time (exit $rc)" "$out"
fi
out=$(gcc -O2 reduce.c $(pkg-config --cflags forkscope-cont-seg) $(pkg-config --libs forkscope-cont-seg-debug) -o mm 2>&1)
rc=$?
if [ $rc -ne 0 ] && echo "$out" | grep -q "undefined reference to .fk__abi2_steal1_stack1_debug0_"; then
    ok "release flags against the debug library: refused at link time"
else
    bad "release flags against the debug library: refused at link time (exit $rc)" "$out"
fi

# The installed forkscope from another directory: its drivers and its gnuplot scripts.
cat > small.json <<'JSON'
{"name": "small", "benchmarks": [{"name": "fib", "kernel": "fib", "params": {"n": 20}}],
 "variants": ["cont-seg-busy", "child-native-busy-beat", "serial"], "workers": [1, 2], "repetitions": 1, "calibrate": false}
JSON
out=$("$prefix/bin/forkscope" run small.json -o "$tmp/user/out" 2>&1)
rc=$?
drv=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["drivers"]["cont-seg-busy"]["path"])' \
      "$tmp/user/out/env.json" 2>&1)
if [ $rc -eq 0 ] && [ "$drv" = "$prefix/libexec/forkscope/fk-bench-cont-seg" ] && ls "$tmp/user/out/plots/"*.png >/dev/null 2>&1 &&
    [ "$(grep -c '"status":"ok"' "$tmp/user/out/raw.jsonl")" -eq 5 ]; then
    ok "the installed forkscope run, elsewhere: its drivers from libexec, 5 runs ok, figures from its share/forkscope/plots"
else
    bad "the installed forkscope run, elsewhere (exit $rc, driver $drv)" "$out"
fi
if out=$(groff -man -Tutf8 -ww -z "$prefix/share/man/man1/forkscope.1" 2>&1) && [ -z "$out" ] &&
    man -l "$prefix/share/man/man1/forkscope.1" 2>/dev/null | grep -q "compare DIR"; then
    ok "the manual page renders without a warning, with every command (forkscope --man)"
else
    bad "the manual page renders without a warning" "$out"
fi

cd "$top"
out=$(make -s uninstall PREFIX="$prefix" 2>&1) || bad "make uninstall exits 0" "$out"
# (what was there before stays: share/man/man1/keep.1 and its directories; every directory the
# install made goes)
left=$(cd "$prefix" && find . -mindepth 1 | sort | tr '\n' ' ')
if [ "$left" = "./share ./share/man ./share/man/man1 ./share/man/man1/keep.1 " ]; then
    ok "make uninstall: only what was there before is left (another package's page and its directories)"
else bad "make uninstall: only what was there before is left" "$out" "$left"; fi
mkdir -p "$prefix/share/forkscope" && echo "file ../../etc/passwd" > "$prefix/share/forkscope/MANIFEST"
out=$(make -s uninstall PREFIX="$prefix" 2>&1)
if [ $? -ne 0 ] && echo "$out" | grep -q "refusing the line 'file ../../etc/passwd'"; then
    ok "make uninstall refuses a manifest line outside the prefix, removing nothing"
else bad "make uninstall refuses a manifest line outside the prefix" "$out"; fi
rm -rf "$prefix/share/forkscope"
out=$(make -s uninstall PREFIX="$prefix" 2>&1)
if [ $? -ne 0 ] && echo "$out" | grep -q "nothing to uninstall"; then ok "make uninstall again: refused, saying why"
else bad "make uninstall again: refused, saying why" "$out"; fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
