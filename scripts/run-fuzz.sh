#!/bin/bash
# Runs every libFuzzer target of build/fuzz/ (make check-fuzz, make fuzz).  For target X:
#   1. each input in fuzz/regressions/X/ (crashes found before, kept as fixtures) once;
#   2. fuzzing for $FUZZ_SECONDS s (default 5) from the committed corpus fuzz/corpus/X/
#      (read only: new inputs go to a scratch directory, or with FUZZ_KEEP=1 to
#      build/fuzz/corpus/X/, to be minimised into the corpus by hand: fuzz/README.md).
# A crash, leak, timeout (10 s per input) or memory blow-up (2 GiB) fails the target and
# leaves the input in build/fuzz/artifacts/.  Prints "ok X ..." or "FAIL X ...", then
# "N passed, N failed".
set -u
build=${BUILD:-build}
secs=${FUZZ_SECONDS:-5}
targets=${FUZZ_TARGETS:-"config results csv output cli topology"}
pass=0; fail=0
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
mkdir -p "$build/fuzz/artifacts"
for t in $targets; do
    bin=$build/fuzz/fuzz_$t
    if [ ! -x "$bin" ]; then
        echo "FAIL $t: $bin not built (make $bin)"; fail=$((fail + 1)); continue
    fi
    corpus=fuzz/corpus/$t
    regress=fuzz/regressions/$t
    log=$build/fuzz/$t.log
    opts=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -close_fd_mask=3
          "-artifact_prefix=$build/fuzz/artifacts/$t-")
    # 1. the regressions, each input once
    if [ -d "$regress" ] && [ -n "$(ls -A "$regress" 2>/dev/null)" ]; then
        if ! "$bin" "${opts[@]}" "$regress"/* >"$log" 2>&1; then
            echo "FAIL $t: a regression input fails again ($regress)"
            grep -m3 -E "ERROR|SUMMARY|Running: " "$log" | sed 's/^/  /'
            fail=$((fail + 1)); continue
        fi
    fi
    # 2. fuzzing from the corpus
    if [ "${FUZZ_KEEP:-0}" = 1 ]; then
        work=$build/fuzz/corpus/$t; mkdir -p "$work"
    else
        work=$(mktemp -d /tmp/fkfuzz_corpus_XXXXXX)
    fi
    start=$(date +%s)
    "$bin" "${opts[@]}" -max_total_time="$secs" -print_final_stats=1 "$work" "$corpus" >"$log" 2>&1
    rc=$?
    [ "${FUZZ_KEEP:-0}" = 1 ] || rm -rf "$work"
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
    ninputs=$(ls "$corpus" 2>/dev/null | wc -l)
    if [ "$rc" = 0 ]; then
        echo "ok $t: ${runs:-?} inputs in $(( $(date +%s) - start )) s from $ninputs in the corpus, ${cov:-cov: ?}"
        pass=$((pass + 1))
    else
        echo "FAIL $t: libFuzzer exit $rc (log $log)"
        grep -m4 -E "ERROR|SUMMARY|Test unit written" "$log" | sed 's/^/  /'
        fail=$((fail + 1))
    fi
done
rm -rf /tmp/fkfuzz.* 2>/dev/null
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
