#!/bin/bash
# golden-test.sh — the harness's facts about every kernel and configuration are what
# tests/golden/facts.txt records (issue 21: moving a kernel's facts into its own file must
# change none of them).  The facts: each kernel's option rows, whether its tasks block, the
# answer a command variant is checked against, the paper's words, the memory-fit note and the
# plan's estimates, at its defaults and at every benchmark of configs/*.json; `forkscope run
# --dry-run` of every configuration at 2 and 16 cores; `forkscope variants`; `forkscope
# kernels`.  All of it is independent of this machine: the cores are given and every driver
# is FORKSCOPE_DRIVER, a stand-in that does nothing but list, as every peer in peers/ does,
# every kernel but switch (--kernels).
#
#   scripts/golden-test.sh            compare (a difference fails, shown as a diff)
#   scripts/golden-test.sh --update   rewrite tests/golden/facts.txt; a commit that does so
#                                     says which fact changed and why
set -u
cd "$(dirname "$0")/.."
build=${BUILD:-build}
facts=$build/rel/common/tests/golden_facts
golden=tests/golden/facts.txt
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; shift; printf '%s\n' "$@" | sed 's/^/  | /' | head -n 60; fail=$((fail + 1)); }

tmp=$(mktemp -d /tmp/fk_golden_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
kernels=$("$build/bin/fk-bench-serial" --kernels | sed 's/ switch\b//')
printf '#!/bin/sh\n[ "$1" = --kernels ] && echo "%s"\nexit 0\n' "$kernels" >"$tmp/driver" && chmod +x "$tmp/driver"
export FORKSCOPE_DRIVER=$tmp/driver
collect() {
    "$facts" KERNELS && "$facts" configs/*.json &&
        { echo "forkscope variants"; "$build/bin/forkscope" variants; } &&
        { echo "forkscope kernels"; "$build/bin/forkscope" kernels; }
}
# The comparison: 0 if the facts equal the golden file, else 1 with the diff on stdout.
compare() { diff -u "$1" "$2"; }

main_ok=0
if [ ! -x "$facts" ] || [ ! -x "$build/bin/forkscope" ]; then
    bad "the facts can be collected" "missing: $facts or $build/bin/forkscope (make check builds them)"
elif ! collect >"$tmp/facts.txt" 2>"$tmp/err"; then
    bad "the facts can be collected" "$(cat "$tmp/err")" "$(tail -n 20 "$tmp/facts.txt")"
elif [ "${1:-}" = --update ]; then
    mkdir -p "$(dirname "$golden")"
    cp "$tmp/facts.txt" "$golden"
    echo "wrote $golden ($(wc -l <"$golden") lines)"
    exit 0
elif [ ! -f "$golden" ]; then
    bad "the facts match $golden" "no $golden: scripts/golden-test.sh --update writes it"
elif d=$(compare "$golden" "$tmp/facts.txt"); then
    ok "the facts match $golden ($(wc -l <"$golden") lines: $(grep -c '^kernel ' "$golden") kernels, $(grep -c '^config ' "$golden") configurations)"
    main_ok=1
else
    bad "the facts match $golden (scripts/golden-test.sh --update rewrites it: say in the commit which fact changed and why)" "$d"
fi

# The comparison can fail: the facts just collected, with one estimate changed, do not
# compare equal to them (and the facts compare equal to themselves).
if [ "$main_ok" = 1 ]; then
    sed '0,/ est /s/ est [0-9.e+-]*/ est 12345/' "$tmp/facts.txt" >"$tmp/sabotaged.txt"
    if ! cmp -s "$tmp/sabotaged.txt" "$tmp/facts.txt" && ! compare "$tmp/sabotaged.txt" "$tmp/facts.txt" >/dev/null &&
        compare "$tmp/facts.txt" "$golden" >/dev/null; then
        ok "a changed estimate is a difference"
    else
        bad "a changed estimate is a difference" "the sabotaged copy compared equal (or sed changed nothing)"
    fi
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
