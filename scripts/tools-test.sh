#!/bin/bash
# tools-test.sh — the measuring scripts that make check does not otherwise run still build
# and still check what they measure: scripts/fork-model.c with gcc and clang (warnings are
# errors), its answers right, and its answer check failing on a copy built to be wrong.
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/fk_tools_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; shift; printf '%s\n' "$@" | sed 's/^/  | /' | tail -n 12; fail=$((fail + 1)); }

for cc in gcc clang; do
    if ! command -v "$cc" >/dev/null; then
        bad "fork-model builds with $cc" "$cc is not on PATH"
        continue
    fi
    if out=$(CCS=$cc scripts/fork-model.sh 20 3 2>&1) &&
        [ "$(printf '%s\n' "$out" | grep -cE '^  (serial|native-|lace-like)')" -eq 8 ]; then
        ok "fork-model ($cc): builds warning-free, 8 variants, every answer right"
    else
        bad "fork-model ($cc): builds warning-free, 8 variants, every answer right" "$out"
    fi
done
cc=$(command -v gcc || command -v clang || echo cc)
if ! "$cc" -O2 -std=c11 -DMODEL_BIAS=1 -o "$tmp/biased" scripts/fork-model.c 2>"$tmp/err"; then
    bad "fork-model refuses a wrong answer" "$(cat "$tmp/err")"
else
    out=$("$tmp/biased" 20 1 2>&1)
    rc=$?
    if [ "$rc" -eq 1 ] && printf '%s\n' "$out" | grep -qE 'lace-like: fib\(20\) = [0-9]+, not 6765'; then
        ok "fork-model refuses a wrong answer (exit 1, naming the variant)"
    else
        bad "fork-model refuses a wrong answer (exit 1, naming the variant)" "rc $rc" "$out"
    fi
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
