#!/bin/bash
# The suite tests itself (make check-selftest): the summary of `make check` must fail when
# what it promises did not happen, each shown with a sabotaged copy in a temporary directory
# (the real tree is only read), each beside an unsabotaged control that must pass.
#   - a suite, or one binary of a suite, that wrote no totals; no totals at all; no manifest
#   - a binary that exits non-zero after a clean closing line (and one killed after it)
#   - a case that skips where tests/skips does not expect it (testlib's TEST_SKIP)
#   - a failed make with every test passing
#   - a model search cut short (a tiny depth bound, a tiny memory bound): not "verified"
#   - a timing check (ASSERT_TIMING) that fails once is retried and said so; twice fails;
#     an ordinary assertion is never retried
# Prints "ok WHAT" / "FAIL WHAT" and "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
root=$PWD
tmp=$(mktemp -d /tmp/fk_selftest_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp # (the model script keeps a failed case's files in TMPDIR)
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; shift; printf '%s\n' "$@" | sed 's/^/  | /' | tail -n 12; fail=$((fail + 1)); }

mkdir -p "$tmp/scripts" "$tmp/models" "$tmp/bin"
cp scripts/run-tests.sh scripts/check-models.sh "$tmp/scripts/"
cp models/deque.pml "$tmp/models/"
run_tests=$tmp/scripts/run-tests.sh

# Fake test binaries: shell scripts that print what a test binary prints.
cat > "$tmp/bin/good" <<'EOF'
#!/bin/sh
echo "ok a (0.00s)"; echo "ok b (0.00s)"; echo "2 passed, 0 failed, 0 skipped"
EOF
cat > "$tmp/bin/good2" <<'EOF'
#!/bin/sh
echo "ok c (0.00s)"; echo "1 passed, 0 failed"
EOF
cat > "$tmp/bin/lying" <<'EOF'
#!/bin/sh
echo "ok a (0.00s)"; echo "1 passed, 0 failed"; exit 1
EOF
cat > "$tmp/bin/crash-after" <<'EOF'
#!/bin/sh
echo "ok a (0.00s)"; echo "1 passed, 0 failed, 0 skipped"; kill -SEGV $$
EOF
chmod +x "$tmp/bin"/*

# A real testlib program: a case that skips, one whose timing check fails once, one whose
# timing check always fails, one with a wrong answer (never retried).
cat > "$tmp/t_lib.c" <<'EOF'
#include "testlib.h"
TEST(runs) { ASSERT_EQ(1 + 1, 2); }
TEST(cannot_run_here) { TEST_SKIP("no widget on this machine"); }
TEST(slow_once) {
    const char *mark = getenv("SELFTEST_MARK");
    int first = access(mark, F_OK) != 0;
    if (first) {
        FILE *f = fopen(mark, "w");
        ASSERT(f);
        fclose(f);
    }
    ASSERT_TIMING(!first, "took %d ms, the bound is 10 ms", 50);
}
TEST(always_slow) { ASSERT_TIMING(0, "took %d ms, the bound is 10 ms", 50); }
TEST(wrong_answer) { ASSERT_EQ(6 * 7, 41); }
int main(int argc, char **argv) {
    return test_main(argc, argv, (struct test_case[]){TEST_CASE(runs, 5), TEST_CASE(cannot_run_here, 5),
                                                      TEST_CASE(slow_once, 5), TEST_CASE(always_slow, 5),
                                                      TEST_CASE(wrong_answer, 5), {0}});
}
EOF
if ! out=$(${CC:-gcc} -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$root/tests" "$tmp/t_lib.c" -o "$tmp/bin/t_lib" 2>&1); then
    bad "testlib program compiles" "$out"
fi
export SELFTEST_MARK=$tmp/slow_once.mark

# summary MANIFEST-LINES SKIPS-LINES -- RUNS... : runs each "LABEL BIN..." through the copy
# of run-tests.sh, then its summary; sets $out (everything printed) and $st (summary status).
summary() {
    local m=$1 s=$2 run
    shift 3
    printf '%b' "$m" > "$tmp/manifest"
    printf '%b' "$s" > "$tmp/skips"
    rm -f "$tmp/totals" "$SELFTEST_MARK"
    export TEST_TOTALS=$tmp/totals TEST_MANIFEST=$tmp/manifest TEST_SKIPS=$tmp/skips
    out=""
    for run in "$@"; do
        # shellcheck disable=SC2086
        out+=$("$run_tests" $run 2>&1)$'\n'
    done
    out+=$("$run_tests" --summary "${make_status[@]}" 2>&1)
    st=$?
    make_status=()
}
make_status=()
has() { grep -qF -- "$1" <<< "$out"; }
closing() { tail -n 1 <<< "$out"; }

G=$tmp/bin/good G2=$tmp/bin/good2 L=$tmp/bin/lying C=$tmp/bin/crash-after T=$tmp/bin/t_lib

# --- the controls: what ran is what was promised
summary "s1\t$G\ns2\t$G2\n" "" -- "s1 $G" "s2 $G2"
if [ $st = 0 ] && [ "$(closing)" = "3 passed, 0 failed, 0 skipped" ]; then ok "control: every promised binary ran and passed"
else bad "control: every promised binary ran and passed (status $st)" "$out"; fi

# --- a whole suite missing (its prerequisites did not build under make -k)
summary "s1\t$G\ns2\t$G2\n" "" -- "s1 $G"
if [ $st != 0 ] && has "$G2 (s2)" && has "suite s2: 1 missing"; then ok "a suite that never ran fails the summary, named"
else bad "a suite that never ran fails the summary, named (status $st)" "$out"; fi

# --- one binary of a suite missing
summary "s1\t$G\ns1\t$tmp/bin/never-built\n" "" -- "s1 $G"
if [ $st != 0 ] && has "$tmp/bin/never-built (s1)"; then ok "a binary that never ran fails the summary, named"
else bad "a binary that never ran fails the summary, named (status $st)" "$out"; fi

# --- nothing ran at all; no manifest at all
summary "s1\t$G\n" "" --
if [ $st != 0 ] && [ "$(closing)" = "0 passed, 1 failed, 0 skipped" ]; then ok "no totals at all fails the summary"
else bad "no totals at all fails the summary (status $st)" "$out"; fi
rm -f "$tmp/manifest"
out=$(TEST_MANIFEST=$tmp/no-such-manifest "$run_tests" --summary 2>&1); st=$?
if [ $st != 0 ] && has "no manifest"; then ok "no manifest fails the summary"
else bad "no manifest fails the summary (status $st)" "$out"; fi

# --- a non-zero exit after a clean closing line ("1 passed, 0 failed" then exit 1; a crash)
summary "s1\t$L\n" "" -- "s1 $L"
if [ $st != 0 ] && has "exit status 1 after a closing line of 0 failed" && has 'lying: exit status 1 after its closing line "1 passed, 0 failed"'; then
    ok "exit 1 after '1 passed, 0 failed' fails the run and the summary"
else bad "exit 1 after '1 passed, 0 failed' fails the run and the summary (status $st)" "$out"; fi
summary "s1\t$C\n" "" -- "s1 $C"
if [ $st != 0 ] && has "exit status 139 after a closing line of 0 failed"; then ok "a crash after a clean closing line fails the summary"
else bad "a crash after a clean closing line fails the summary (status $st)" "$out"; fi

# --- a failed make, every test passing
make_status=(--make-status build=0 --make-status suites=2)
summary "s1\t$G\n" "" -- "s1 $G"
if [ $st != 0 ] && has "make (suites) exited with status 2" && [ "$(closing)" = "2 passed, 1 failed, 0 skipped" ]; then
    ok "a failed make fails the summary"
else bad "a failed make fails the summary (status $st)" "$out"; fi

# --- testlib: skips, retries, and the summary's judgement of a skip
summary "s1\t$T::runs,cannot_run_here\n" "" -- "s1 $T::runs,cannot_run_here"
if [ $st != 0 ] && has "skip cannot_run_here: no widget on this machine" && has "tests/skips does not expect it" &&
   [ "$(closing)" = "1 passed, 1 failed, 1 skipped" ]; then
    ok "an unexpected skip is counted as skipped, listed with its reason, and fails the summary"
else bad "an unexpected skip is counted as skipped, listed with its reason, and fails the summary (status $st)" "$out"; fi
summary "s1\t$T::runs,cannot_run_here\n" "s1\t$T\tcannot_run_here\tno widget\n" -- "s1 $T::runs,cannot_run_here"
if [ $st = 0 ] && has "skipped, as tests/skips expects (1)" && [ "$(closing)" = "1 passed, 0 failed, 1 skipped" ]; then
    ok "control: an expected skip is listed and passes"
else bad "control: an expected skip is listed and passes (status $st)" "$out"; fi
summary "s1\t$T::runs,cannot_run_here\n" "s1\t$T\tcannot_run_here\tsome other reason\n" -- "s1 $T::runs,cannot_run_here"
if [ $st != 0 ] && has "tests/skips does not expect it"; then ok "a skip for another reason than the expected one fails"
else bad "a skip for another reason than the expected one fails (status $st)" "$out"; fi

summary "s1\t$T::slow_once\n" "" -- "s1 $T::slow_once"
if [ $st = 0 ] && has "retry slow_once: a timing check failed" && has "timing check failed: took 50 ms" &&
   has "run a second time after a timing check failed (1)"; then
    ok "a timing check that fails once is retried, and the retry is reported"
else bad "a timing check that fails once is retried, and the retry is reported (status $st)" "$out"; fi
summary "s1\t$T::always_slow,wrong_answer\n" "" -- "s1 $T::always_slow,wrong_answer"
if [ $st != 0 ] && has "FAIL always_slow: a timing check failed twice" && has "FAIL wrong_answer" &&
   ! has "retry wrong_answer" && [ "$(closing)" = "0 passed, 2 failed, 0 skipped" ]; then
    ok "a timing check that fails twice fails; a wrong answer is not retried"
else bad "a timing check that fails twice fails; a wrong answer is not retried (status $st)" "$out"; fi

# --- model checking: a search cut short is not "verified"
M=$tmp/scripts/check-models.sh
out=$("$M" 'deque -DN=3$' 2>&1); st=$?
if [ $st = 0 ] && has "ok deque -DN=3: verified" && has "depth "; then ok "control: the model copy verifies deque N=3 (depth reported)"
else bad "control: the model copy verifies deque N=3 (depth reported) (status $st)" "$out"; fi
sed 's/^depth=\${PAN_DEPTH:-[0-9]*}/depth=${PAN_DEPTH:-20}/' "$M" > "$tmp/scripts/check-models-shallow.sh"
sed 's/^memlim=\${PAN_MEMLIM:-[0-9]*}/memlim=${PAN_MEMLIM:-1}/' "$M" > "$tmp/scripts/check-models-tight.sh"
chmod +x "$tmp/scripts"/check-models-*.sh
if cmp -s "$M" "$tmp/scripts/check-models-shallow.sh" || cmp -s "$M" "$tmp/scripts/check-models-tight.sh"; then
    bad "the model script can be sabotaged" "its depth= or memlim= line is not where this test looks"
fi
out=$("$tmp/scripts/check-models-shallow.sh" 'deque -DN=3$' 2>&1); st=$?
if [ $st != 0 ] && has "FAIL deque -DN=3: not verified" && has "raise PAN_DEPTH (now 20)" && ! has "verified ("; then
    ok "a model search cut short by its depth bound fails, naming the bound"
else bad "a model search cut short by its depth bound fails, naming the bound (status $st)" "$out"; fi
out=$("$tmp/scripts/check-models-tight.sh" 'deque -DN=3$' 2>&1); st=$?
if [ $st != 0 ] && has "raise PAN_MEMLIM (now 1 MB)" && ! has "verified ("; then
    ok "a model search cut short by its memory bound fails, naming the bound"
else bad "a model search cut short by its memory bound fails, naming the bound (status $st)" "$out"; fi
# a refutation of the wrong kind (the mutation meant to break an assertion breaks something
# else) is no refutation: the NO_FENCE case expecting an invalid end state must fail, and
# the control (as committed) must pass
out=$("$M" 'deque -DNO_FENCE$' 2>&1); st=$?
if [ $st = 0 ] && has "ok deque -DNO_FENCE: refuted as it must be, assertion violated"; then
    ok "control: the model copy refutes deque NO_FENCE with its assertion"
else bad "control: the model copy refutes deque NO_FENCE with its assertion (status $st)" "$out"; fi
sed 's/^\(  "deque  -DNO_FENCE  *\)refuted /\1refuted-end /' "$M" > "$tmp/scripts/check-models-kind.sh"
chmod +x "$tmp/scripts/check-models-kind.sh"
if cmp -s "$M" "$tmp/scripts/check-models-kind.sh"; then
    bad "the model script can be sabotaged" "its deque -DNO_FENCE case is not where this test looks"
fi
out=$("$tmp/scripts/check-models-kind.sh" 'deque -DNO_FENCE$' 2>&1); st=$?
if [ $st != 0 ] && has "FAIL deque -DNO_FENCE: expected refuted-end (an invalid end state), SPIN found: assertion violated" &&
   ! has "refuted as it must be"; then
    ok "a mutation refuted by another property than the one it is meant to break fails"
else bad "a mutation refuted by another property than the one it is meant to break fails (status $st)" "$out"; fi
# ... and through the summary, as make check sees it (BIN::CASE passes the case's pattern)
spec="$tmp/scripts/check-models-shallow.sh::deque -DN=3\$"
printf 'model\t%s\n' "$spec" > "$tmp/manifest"
rm -f "$tmp/totals"
out=$("$run_tests" model "$spec" 2>&1; "$run_tests" --summary 2>&1); st=$?
if [ $st != 0 ] && grep -qE '^[0-9]+ passed, [1-9][0-9]* failed' <<< "$(tail -n 1 <<< "$out")"; then
    ok "a model script with a cut-short search fails make check's summary"
else bad "a model script with a cut-short search fails make check's summary (status $st)" "$out"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
