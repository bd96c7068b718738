#!/bin/bash
# beat-suite.sh — every kernel under heartbeat promotion: each runtime build that has it (all
# but child-fiber) runs test_kernels' verification cases (the paper's kernels busy and lazy,
# the M:N workloads) and test_uts whole, with FORKSCOPE_PROMOTE=beat and a 20 us beat (many
# promotions, so many interleavings of a beat with forks, joins and steals).  The pools those
# tests make read the environment (fk_pool_opts_init); that they did is checked through a
# driver's JSON (pool.promote, pool.beat_us).  Then half a deque a beat (FORKSCOPE_BEAT_SHARE)
# on a build of each strategy.  Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
build=${BUILD:-build}
b=$build/rel
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; shift; printf '%s\n' "$@" | sed 's/^/  | /' | tail -n 15; fail=$((fail + 1)); }
export FORKSCOPE_PROMOTE=beat FORKSCOPE_BEAT_US=20
closing='^([0-9]+) passed, ([0-9]+) failed'
for v in cont-seg cont-lin child-seg child-lin child-native; do
    d=$("$build/bin/fk-bench-$v" --kernel fib --n 20 --workers 2 2>&1)
    if echo "$d" | python3 -c 'import json,sys; p=json.load(sys.stdin)["pool"]; assert p["promote"] == "beat" and p["beat_us"] == 20' 2>/dev/null; then
        ok "$v: the environment selects heartbeat promotion, a 20 us beat"
    else
        bad "$v: the environment selects heartbeat promotion, a 20 us beat" "$d"
    fi
    for t in "test_kernels kernels_verified kernels_verified_lazy mn_kernels_verified mn_workloads_lines" "test_uts"; do
        set -- $t
        bin=$b/$v/tests/$1
        shift
        if [ ! -x "$bin" ]; then
            bad "$v: $(basename "$bin") under heartbeat promotion" "$bin is not built (make check builds it)"
            continue
        fi
        out=$("$bin" "$@" 2>&1)
        rc=$?
        last=$(echo "$out" | tail -n 1)
        if [ $rc -eq 0 ] && [[ $last =~ $closing ]] && [ "${BASH_REMATCH[2]}" = 0 ] && [ "${BASH_REMATCH[1]}" -gt 0 ]; then
            ok "$v: $(basename "$bin") under heartbeat promotion: $last"
        else
            bad "$v: $(basename "$bin") under heartbeat promotion (exit $rc)" "$out"
        fi
    done
done
# A beat that promotes the oldest half (FORKSCOPE_BEAT_SHARE=half): the paper's kernels and the
# M:N workloads verify on a build of each strategy.
for v in cont-seg child-native; do
    d=$(FORKSCOPE_BEAT_SHARE=half "$build/bin/fk-bench-$v" --kernel fib --n 20 --workers 2 2>&1)
    if echo "$d" | python3 -c 'import json,sys; p=json.load(sys.stdin)["pool"]; assert p["promote"] == "beat" and p["beat_share"] == "half"' 2>/dev/null; then
        ok "$v: the environment selects half a deque a beat"
    else
        bad "$v: the environment selects half a deque a beat" "$d"
    fi
    bin=$b/$v/tests/test_kernels
    if [ ! -x "$bin" ]; then
        bad "$v: test_kernels with half a deque a beat" "$bin is not built (make check builds it)"
        continue
    fi
    out=$(FORKSCOPE_BEAT_SHARE=half "$bin" kernels_verified kernels_verified_lazy mn_kernels_verified 2>&1)
    rc=$?
    last=$(echo "$out" | tail -n 1)
    if [ $rc -eq 0 ] && [[ $last =~ $closing ]] && [ "${BASH_REMATCH[2]}" = 0 ] && [ "${BASH_REMATCH[1]}" -gt 0 ]; then
        ok "$v: test_kernels with half a deque a beat: $last"
    else
        bad "$v: test_kernels with half a deque a beat (exit $rc)" "$out"
    fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
