#!/bin/bash
# Runs test executables and totals their closing "N passed, N failed" lines.
#   run-tests.sh LABEL BIN...   run each BIN, append its totals to build/test-totals
#                               (BIN::CASE,CASE... runs only those cases of BIN)
#   run-tests.sh --summary      print the grand total of this `make check` and reset it
# Exit status: non-zero if any test failed or any binary did not print its closing line.
set -u
totals=build/test-totals
if [ "${1:-}" = "--summary" ]; then
    p=0; f=0
    if [ -f "$totals" ]; then
        while read -r a b; do p=$((p + a)); f=$((f + b)); done < "$totals"
        rm -f "$totals"
    fi
    echo "== all tests: $p passed, $f failed"
    echo "$p passed, $f failed"
    [ "$f" -eq 0 ]
    exit
fi
label=$1; shift
mkdir -p build
status=0
for spec in "$@"; do
    bin=${spec%%::*}
    cases=()
    [ "$spec" = "$bin" ] || IFS=, read -r -a cases <<< "${spec#*::}"
    name=${spec#build/}
    echo "== $name"
    out=$("$bin" "${cases[@]}" 2>&1)
    rc=$?
    echo "$out" | grep -v '^ok ' || true
    line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
    if [ -z "$line" ]; then
        echo "FAIL $name: no closing line (exit $rc)"
        echo "0 1" >> "$totals"
        status=1
        continue
    fi
    read -r np _ nf _ <<< "$line"
    echo "$np $nf" >> "$totals"
    [ "$rc" -eq 0 ] || status=1
done
exit $status
