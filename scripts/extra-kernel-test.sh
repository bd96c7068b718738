#!/bin/bash
# extra-kernel-test.sh — a kernel from outside the tree, as a user adds one: `make
# EXTRA_KERNELS='tests/extra_kernel/*.c'` (squares.c, with its squares_tbb.cpp, a kernel in no
# list of this repository) builds it into the drivers, their tests and the harness of a build
# tree of its own; `forkscope kernels` lists it, its small cases verify on a runtime variant,
# the serial projection and TBB, and `forkscope run` sweeps it like a built-in kernel from a
# config outside the tree.  A file named like a built-in kernel is refused before anything
# compiles, naming it; the default build does not know the kernel.
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
if make --no-print-directory $jobs BUILD="$xb" WERROR=-Werror EXTRA_KERNELS='tests/extra_kernel/*.c' $want \
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
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
