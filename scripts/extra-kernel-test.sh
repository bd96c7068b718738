#!/bin/bash
# extra-kernel-test.sh — a kernel from outside the tree, as a user adds one: `make
# EXTRA_KERNELS='tests/extra_kernel/*.c'` (squares.c, with its squares_tbb.cpp, a kernel in no
# list of this repository) builds it into the drivers, their tests and the harness of a build
# tree of its own; `forkscope kernels` lists it, its small cases verify on a runtime variant,
# the serial projection and TBB, and `forkscope run` sweeps it like a built-in kernel from a
# config outside the tree.  A file named like a built-in kernel is refused before anything
# compiles, naming it; the default build does not know the kernel.
# A peer from outside the tree the same way: `make EXTRA_PEERS=tests/extra_peer/toy.mk` (a
# fixture whose file defines fib and nqueens alone) builds fk-bench-toy from a "checkout" the
# test makes; its driver lists those two (--kernels) and refuses the others; forkscope
# variants shows it; a plan skips its cells of the other kernels and a sweep runs the rest;
# a fragment without PEER_WHAT is refused, naming it.
set -u
cd "$(dirname "$0")/.."
build=${BUILD:-build}
xb=$build-extra-kernel # (beside $build: the default build's make does not read its dependency files)
tmp=$(mktemp -d /tmp/fk_extra_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; shift; printf '%s\n' "$@" | sed 's/^/  | /' | tail -n 20; fail=$((fail + 1)); }
jobs=-j$(nproc 2>/dev/null || echo 2)

want="$xb/bin/forkscope $xb/bin/fk-bench-serial $xb/bin/fk-bench-cont-seg $xb/bin/fk-bench-omp $xb/bin/fk-bench-omp-llvm \
      $xb/rel/cont-seg/tests/test_kernels $xb/rel/serial/tests/test_kernels $xb/rel/tbb/tests/test_kernels"
# (warnings are errors: the template is ours)
extra=("EXTRA_KERNELS=tests/extra_kernel/*.c" "EXTRA_PEERS=tests/extra_peer/toy.mk")
if make --no-print-directory $jobs BUILD="$xb" WERROR=-Werror "${extra[@]}" $want \
    >"$tmp/make" 2>&1; then
    ok "make EXTRA_KERNELS='tests/extra_kernel/*.c' builds the harness, four drivers (OpenMP with gcc and clang) and three test binaries, warning-free"
else
    bad "make EXTRA_KERNELS='tests/extra_kernel/*.c' builds" "$(tail -n 20 "$tmp/make")"
fi

if out=$("$xb/bin/forkscope" kernels 2>&1) && printf '%s\n' "$out" | grep -qE '^  squares +sum of squares' &&
    printf '%s\n' "$out" | grep -qE -- '--grain +numbers a task adds up itself'; then
    ok "forkscope kernels lists squares and its options"
else
    bad "forkscope kernels lists squares and its options" "$out"
fi
if out=$("$build/bin/forkscope" kernels 2>&1) && printf '%s\n' "$out" | grep -qE '^  fib ' &&
    ! printf '%s\n' "$out" | grep -q squares; then
    ok "the default build does not know squares (its forkscope kernels lists fib, not squares)"
else
    bad "the default build does not know squares" "$out"
fi

for v in cont-seg serial tbb; do
    if out=$("$xb/rel/$v/tests/test_kernels" kernels_verified every_kernel_has_small_cases 2>&1) &&
        printf '%s\n' "$out" | grep -q '^2 passed, 0 failed'; then
        ok "$v: every kernel's small cases verified, squares' among them"
    else
        bad "$v: every kernel's small cases verified" "$out"
    fi
done

if out=$("$xb/bin/fk-bench-omp-llvm" --kernel squares --n 5000 --grain 8 --workers 2 2>&1) &&
    printf '%s\n' "$out" | grep -q '"verified":true'; then
    ok "fk-bench-omp-llvm (clang, libomp) runs squares, verified"
else
    bad "fk-bench-omp-llvm runs squares, verified" "$out"
fi

# A sweep from a config outside the tree, run from another directory.
cat >"$tmp/squares.json" <<JSON
{"name": "squares", "benchmarks": [{"name": "sq", "kernel": "squares", "params": {"n": 200000, "grain": 32}}],
 "variants": ["serial", "cont-seg-busy"], "workers": [1, 2], "repetitions": 2, "calibrate": false}
JSON
fs=$(cd "$xb/bin" && pwd)/forkscope
if (cd "$tmp" && "$fs" run squares.json -o out >run.log 2>&1) &&
    [ "$(grep -c '^sq,squares,' "$tmp/out/summary.csv")" -eq 3 ] &&
    ! grep -q '"verified":false' "$tmp/out/raw.jsonl" && [ "$(grep -c '"verified":true' "$tmp/out/raw.jsonl")" -eq 6 ]; then
    ok "forkscope run sweeps squares from a config outside the tree: 3 cells, 6 verified runs"
else
    bad "forkscope run sweeps squares" "$(tail -n 15 "$tmp/run.log" 2>/dev/null)" "$(cat "$tmp/out/summary.csv" 2>/dev/null)"
fi

if out=$(make --no-print-directory BUILD="$tmp/clash" EXTRA_KERNELS=tests/extra_kernel/clash/fib.c all 2>&1); then
    bad "a kernel named like a built-in one is refused" "make succeeded" "$out"
elif printf '%s\n' "$out" | grep -q 'named like the built-in kernel fib' && [ ! -e "$tmp/clash" ]; then
    ok "a kernel named like a built-in one is refused before anything compiles, naming it"
else
    bad "a kernel named like a built-in one is refused, naming it" "$out"
fi
for bad_arg in 'tests/extra_kernel/no-such.c' 'tests/extra_kernel/squares_tbb.cpp tests/extra_kernel/squares.c'; do
    if out=$(make --no-print-directory BUILD="$tmp/bad" EXTRA_KERNELS="$bad_arg" all 2>&1); then
        bad "EXTRA_KERNELS='$bad_arg' is refused" "make succeeded"
    elif printf '%s\n' "$out" | grep -qE 'EXTRA_KERNELS: .*(no such file|not a kernel file)' && [ ! -e "$tmp/bad" ]; then
        ok "EXTRA_KERNELS='$bad_arg' is refused before anything compiles: $(printf '%s\n' "$out" | grep -o 'EXTRA_KERNELS: .*' | cut -c1-70)"
    else
        bad "EXTRA_KERNELS='$bad_arg' is refused, saying why" "$out"
    fi
done
# ---- a peer of one's own ----
mkdir -p "$tmp/peers/toy" && echo '/* the toy peer: no code */' >"$tmp/peers/toy/toy.h"
if out=$(make --no-print-directory $jobs BUILD="$xb" WERROR=-Werror "${extra[@]}" PEERS_DIR="$tmp/peers" peers 2>&1) &&
    printf '%s\n' "$out" | grep -q '^peers built: toy$' && printf '%s\n' "$out" | grep -q 'peers: lace: no checkout'; then
    ok "make peers EXTRA_PEERS=tests/extra_peer/toy.mk builds fk-bench-toy alone (no other checkout)"
else
    bad "make peers builds fk-bench-toy" "$out"
fi
toy=$xb/bin/fk-bench-toy
if [ "$("$toy" --kernels 2>&1)" = "kernels: fib nqueens" ]; then
    ok "fk-bench-toy --kernels lists what its file defines: fib nqueens"
else
    bad "fk-bench-toy --kernels" "$("$toy" --kernels 2>&1)"
fi
out=$("$toy" --kernel integrate --n 100 2>&1)
rc=$?
if [ $rc -eq 2 ] && printf '%s\n' "$out" | grep -q 'toy has no version of kernel integrate'; then
    ok "fk-bench-toy refuses integrate (exit 2), which its file does not define"
else
    bad "fk-bench-toy --kernel integrate: exit $rc" "$out"
fi
if out=$("$xb/bin/forkscope" variants 2>&1) && default=$("$build/bin/forkscope" variants 2>&1) &&
    printf '%s\n' "$out" | grep -A1 -E '^  toy +a test fixture' | grep -qE '^ +kernels: fib nqueens $' &&
    printf '%s\n' "$out" | grep -q '(fk-bench-toy: built)' && printf '%s\n' "$default" | grep -q '^  lace ' &&
    ! printf '%s\n' "$default" | grep -q '^  toy '; then
    ok "forkscope variants shows toy, built, with its driver's kernels; the default build does not know it"
else
    bad "forkscope variants shows toy" "$out"
fi
cat >"$tmp/toy.json" <<JSON
{"name": "toy", "benchmarks": [{"kernel": "fib", "params": {"n": 18}}, {"kernel": "integrate", "params": {"n": 100}},
  {"kernel": "squares", "params": {"n": 1000}}, {"kernel": "nqueens", "params": {"n": 6}}],
 "variants": ["serial"], "peers": ["toy"], "workers": [1], "repetitions": 1, "calibrate": false}
JSON
if (cd "$tmp" && "$fs" run toy.json -o toyout --dry-run >toy.log 2>&1 && "$fs" run toy.json -o toyout >>toy.log 2>&1) &&
    grep -q 'Skipped: 2 cells of peers on kernels they have no version of' "$tmp/toy.log" &&
    [ "$(grep -cE '^(fib,fib|nqueens,nqueens),toy,1,false,1,0,' "$tmp/toyout/summary.csv")" -eq 2 ] &&
    [ "$(grep -c ',toy,' "$tmp/toyout/summary.csv")" -eq 2 ] && ! grep -q '"verified":false' "$tmp/toyout/raw.jsonl"; then
    ok "a sweep plans toy on fib and nqueens only (its integrate and squares cells skipped), both verified"
else
    bad "a sweep with toy" "$(tail -n 15 "$tmp/toy.log" 2>/dev/null)" "$(cat "$tmp/toyout/summary.csv" 2>/dev/null)"
fi
# the plan depends on the peers' kernels: a resume refuses a driver that lists others now
recorded=$(python3 - "$tmp/toyout/env.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
print(json.dumps(e.get("peer_kernels")))
if e.get("peer_kernels") == {"toy": " fib nqueens "}:
    e["peer_kernels"]["toy"] = " fib "; json.dump(e, open(sys.argv[1], "w"))
PY
)
out=$(cd "$tmp" && "$fs" run toy.json -o toyout --resume 2>&1)
rc=$?
if [ "$recorded" = '{"toy": " fib nqueens "}' ] && [ $rc -ne 0 ] &&
    printf '%s\n' "$out" | grep -q "the peers' drivers list other kernels than when the sweep started"; then
    ok "a resume refuses peers whose drivers list other kernels than when the sweep started (exit $rc)"
else
    bad "env.json's peer_kernels $recorded; a resume with toy's kernels changed: exit $rc" "$out"
fi
# a peer driver that does not list its kernels (one built before --kernels) stops the sweep
mkdir -p "$tmp/silent/bin" && cp "$xb/bin/forkscope" "$xb/bin/fk-bench-serial" "$tmp/silent/bin/" &&
    printf '#!/bin/sh\nexit 0\n' >"$tmp/silent/bin/fk-bench-toy" && chmod +x "$tmp/silent/bin/fk-bench-toy"
out=$(cd "$tmp" && env -u FORKSCOPE_DRIVER silent/bin/forkscope run toy.json -o silentout 2>&1)
rc=$?
if [ $rc -ne 0 ] && printf '%s\n' "$out" | grep -q 'does not list the kernels it runs (--kernels)' &&
    [ ! -s "$tmp/silentout/raw.jsonl" ]; then
    ok "a peer driver that does not list its kernels stops the sweep before any run, saying so"
else
    bad "a silent peer driver: exit $rc" "$out"
fi
# fragments with a bad name or a text that would break a C string or a shell word
mkpeer() { printf 'PEERS += %s\nPEER_WHAT_%s := %s\nPEER_CHECKOUT_%s := x\nPEER_CHECK_%s := x.h\nPEER_SRC_%s := x.c\nPEER_FLAGS_%s := cc\n' \
    "$1" "$1" "$2" "$1" "$1" "$1" "$1" >"$tmp/$3.mk"; }
mkpeer Upper "fine" upper; mkpeer cont-x "fine" axis; mkpeer pipe "a | b" pipe
for f in "upper:a peer's name is lower-case words" "axis:is a build's or a variant axis value's" \
    "pipe:PEER_WHAT_pipe holds a double quote, backslash, |"; do
    out=$(make --no-print-directory BUILD="$tmp/badpeer" EXTRA_PEERS="$tmp/${f%%:*}.mk" peer-facts 2>&1)
    if printf '%s\n' "$out" | grep -qF "${f#*:}" && [ ! -e "$tmp/badpeer" ]; then
        ok "a peer fragment is refused before anything runs: ${f#*:}"
    else
        bad "the fragment ${f%%:*}.mk is refused ('${f#*:}')" "$out"
    fi
done
if out=$(make --no-print-directory BUILD="$tmp/badpeer" EXTRA_PEERS=tests/extra_peer/bad/nowhat.mk all 2>&1); then
    bad "a peer fragment without PEER_WHAT is refused" "make succeeded"
elif printf '%s\n' "$out" | grep -q 'peer nowhat: its fragment sets no PEER_WHAT_nowhat' && [ ! -e "$tmp/badpeer" ]; then
    ok "a peer fragment without PEER_WHAT is refused before anything compiles, naming it"
else
    bad "a peer fragment without PEER_WHAT is refused, naming it" "$out"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
