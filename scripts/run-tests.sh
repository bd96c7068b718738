#!/bin/bash
# Runs test executables and keeps what each said, for the summary of `make check`.
#
#   run-tests.sh LABEL BIN...   run each BIN of suite LABEL (BIN::CASE,CASE... runs only those
#                               cases), print its output but the "ok" lines, and record its
#                               closing line "N passed, N failed[, N skipped]", its skips, its
#                               retries and its exit status in $TEST_TOTALS
#   run-tests.sh --summary [--make-status NAME=STATUS]...
#                               the grand total of this `make check`: every suite and binary
#                               that $TEST_MANIFEST promises must have run, exited 0 and
#                               skipped only what $TEST_SKIPS expects; each make status given
#                               must be 0.  Prints what is missing, each skip with its reason,
#                               and "N passed, N failed, N skipped"; resets the totals.
#
# Files (tab-separated; defaults in build/ and tests/):
#   TEST_TOTALS   (build/test-totals)     run  LABEL BIN PASSED FAILED SKIPPED STATUS
#                                         skip LABEL BIN CASE REASON;  retry LABEL BIN CASE
#   TEST_MANIFEST (build/check-manifest)  LABEL BIN: written by the Makefile's `check` from the
#                                         same lists its suites run
#   TEST_SKIPS    (tests/skips)           LABEL BIN-GLOB CASE REASON-WORDS: the skips allowed
# Exit status: non-zero if a test failed, a binary gave no closing line or exited non-zero,
# or (--summary) anything promised did not run, a skip was not expected, or a make failed.
set -u
totals=${TEST_TOTALS:-build/test-totals}
manifest=${TEST_MANIFEST:-build/check-manifest}
skips=${TEST_SKIPS:-tests/skips}
closing='^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?$'

if [ "${1:-}" = "--summary" ]; then
    shift
    makes=()
    while [ $# -gt 0 ]; do
        case $1 in
            --make-status) makes+=("$2"); shift 2 ;;
            *) echo "run-tests.sh: unknown option $1" >&2; exit 2 ;;
        esac
    done
    [ -f "$totals" ] || : > "$totals"
    if [ ! -f "$manifest" ]; then
        echo "FAIL no manifest $manifest: nothing says what should have run"
        echo "0 passed, 1 failed, 0 skipped"
        exit 1
    fi
    # One awk pass over the three files: missing runs, bad exits, unexpected skips.
    awk -F'\t' -v M="$manifest" -v S="$skips" -v makes="${makes[*]:-}" '
        function glob_match(g, s,   re) { # shell-style * and ? in BIN-GLOB
            re = g; gsub(/[.+^$()|{}\[\]]/, "\\\\&", re); gsub(/\*/, ".*", re); gsub(/\?/, ".", re)
            return s ~ ("^" re "$")
        }
        FILENAME == M { if ($0 !~ /^#/ && NF >= 2) { want[$1 "\t" $2] = 1; order[++nw] = $1 "\t" $2 }; next }
        FILENAME == S { if ($0 !~ /^#/ && NF >= 4) { ns++; sl[ns] = $1; sb[ns] = $2; sc[ns] = $3; sr[ns] = $4 }; next }
        $1 == "run"   { key = $2 "\t" $3; ran[key]++; p += $4; f += $5; k += $6
                        per_p[$2] += $4; per_f[$2] += $5; per_k[$2] += $6
                        if ($7 != 0 && $5 == 0) { bad[++nb] = "FAIL " $3 " (" $2 "): exit status " $7 " after a closing line of 0 failed" }
                        if (!(key in want)) extra[++ne] = key
                        if (!($2 in seen)) { seen[$2] = 1; labels[++nl] = $2 }
                        next }
        $1 == "skip"  { ok = 0; bin = $3; sub(/::.*/, "", bin)
                        for (i = 1; i <= ns; i++)
                            if (sl[i] == $2 && glob_match(sb[i], bin) && sc[i] == $4 && index($5, sr[i])) ok = 1
                        line = $2 "  " $3 "  " $4 ": " $5
                        if (ok) expected[++nx] = line; else unexpected[++nu] = line
                        next }
        $1 == "retry" { retried[++nr] = $2 "  " $3 "  " $4; next }
        END {
            extra_f = 0
            for (i = 1; i <= nw; i++) if (!(order[i] in ran)) {
                split(order[i], a, "\t"); missing[++nm] = a[2] " (" a[1] ")"; missing_suite[a[1]]++ }
            print "== summary"
            for (i = 1; i <= nl; i++)
                printf "   %-10s %5d passed, %d failed, %d skipped\n", labels[i], per_p[labels[i]], per_f[labels[i]], per_k[labels[i]]
            if (nx) { print "== skipped, as tests/skips expects (" nx "):"; for (i = 1; i <= nx; i++) print "   " expected[i] }
            if (nr) { print "== run a second time after a timing check failed (" nr "):"; for (i = 1; i <= nr; i++) print "   " retried[i] }
            if (nm) { print "== FAIL: promised by the manifest, but wrote no totals (not built, or its suite did not run):"
                      for (s in missing_suite) print "   suite " s ": " missing_suite[s] " missing"
                      for (i = 1; i <= nm; i++) print "   " missing[i]; extra_f += nm }
            if (nb) { print "== FAIL: exited non-zero after a clean closing line:"; for (i = 1; i <= nb; i++) print "   " bad[i]; extra_f += nb }
            if (nu) { print "== FAIL: skipped, and tests/skips does not expect it:"; for (i = 1; i <= nu; i++) print "   " unexpected[i]; extra_f += nu }
            n = split(makes, ms, " ")
            mk_f = 0
            for (i = 1; i <= n; i++) { split(ms[i], kv, "="); if (kv[2] != 0) { print "== FAIL: make (" kv[1] ") exited with status " kv[2]; mk_f++ } }
            # A failed make with nothing else to show for it is a failure of its own.
            if (mk_f && !f && !extra_f) extra_f = mk_f
            if (ne) print "== (also ran, not in the manifest: " ne ")"
            printf "== all tests: %d passed, %d failed, %d skipped\n", p, f + extra_f, k
            printf "%d passed, %d failed, %d skipped\n", p, f + extra_f, k
            exit (f + extra_f + mk_f) ? 1 : 0
        }' "$manifest" "$skips" "$totals"
    st=$?
    rm -f "$totals"
    exit $st
fi

label=$1; shift
mkdir -p "$(dirname "$totals")"
tab=$'\t'
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
    line=$(echo "$out" | grep -E "$closing" | tail -n 1)
    if [ -z "$line" ]; then
        echo "FAIL $name: no closing line (exit $rc)"
        echo "run$tab$label$tab$spec${tab}0${tab}1${tab}0$tab$rc" >> "$totals"
        status=1
        continue
    fi
    [[ $line =~ $closing ]]
    np=${BASH_REMATCH[1]} nf=${BASH_REMATCH[2]} ns=${BASH_REMATCH[4]:-0}
    echo "run$tab$label$tab$spec$tab$np$tab$nf$tab$ns$tab$rc" >> "$totals"
    # "skip CASE: REASON" and "retry CASE: ..." lines, from testlib and the scripts alike
    echo "$out" | sed -n 's/^skip \([^ :]*\): \(.*\)$/\1\t\2/p' | while IFS=$tab read -r c why; do
        echo "skip$tab$label$tab$spec$tab$c$tab$why" >> "$totals"
    done
    nlines=$(echo "$out" | grep -c '^skip [^ :]*: ')
    if [ "$nlines" -lt "$ns" ]; then # a skip must say which case and why
        echo "skip$tab$label$tab$spec$tab?$tab$((ns - nlines)) skipped without a \"skip CASE: reason\" line" >> "$totals"
    fi
    echo "$out" | sed -n 's/^retry \([^ :]*\): .*$/\1/p' | while read -r c; do
        echo "retry$tab$label$tab$spec$tab$c" >> "$totals"
    done
    if [ "$rc" -ne 0 ]; then
        [ "$nf" -eq 0 ] && echo "FAIL $name: exit status $rc after its closing line \"$line\""
        status=1
    fi
done
exit $status
