#!/bin/bash
# The fib overhead table: T_s of the serial projection, T1 and T2 of every runtime variant
# (and of the OpenMP baselines), measured in one run with the repetitions interleaved, so
# that the machine's drift affects every configuration alike.  Medians, with min-max.
#   scripts/bench-fib.sh [N] [REPS]       (defaults: fib(42), 5 repetitions)
# Writes the table to stdout and to results/bench/fib-N.md, raw runs to results/bench/fib-N.jsonl.
# Run it on a quiet machine: anything else running (a build, a test) spoils the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-42}
REPS=${2:-5}
BIN=build/bin
OUT=results/bench
mkdir -p "$OUT"
RAW=$OUT/fib-$N.jsonl
: > "$RAW"

configs=("serial 1 busy")
for v in cont-seg cont-lin child-seg child-lin; do
    configs+=("$v 1 busy" "$v 2 busy")
done
configs+=("cont-seg 2 lazy" "child-seg 2 lazy")
# OpenMP tasks cost ~40x a call here (fib(42) would take minutes): BENCH_OMP=1 adds them.
if [ "${BENCH_OMP:-0}" = 1 ]; then configs+=("omp 1 busy" "omp 2 busy" "omp-llvm 1 busy" "omp-llvm 2 busy"); fi

load=$(cut -d' ' -f1 /proc/loadavg)
echo "fib($N), $REPS interleaved repetitions, $(nproc) cores, load average $load at start" >&2
for ((r = 1; r <= REPS; r++)); do
    for c in "${configs[@]}"; do
        read -r v p s <<< "$c"
        echo "  rep $r/$REPS: $v $s $p workers" >&2
        if ! line=$("$BIN/fk-bench-$v" --kernel fib --n "$N" --workers "$p" --sched "$s" --reps 1); then
            echo "bench-fib: $v on $p workers failed (exit $?)" >&2
            exit 1
        fi
        echo "$line" >> "$RAW"
    done
done

# Median and range per configuration; ratios against the serial median.
awk -v n="$N" '
function median(a, k,   i, j, t) {
    for (i = 2; i <= k; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
{
    match($0, /"variant":"[^"]*"/); v = substr($0, RSTART + 11, RLENGTH - 12)
    match($0, /"sched":"[^"]*"/); s = substr($0, RSTART + 9, RLENGTH - 10)
    match($0, /"workers":[0-9]+/); p = substr($0, RSTART + 10, RLENGTH - 10)
    match($0, /"times":\[[^]]*\]/); t = substr($0, RSTART + 9, RLENGTH - 10) + 0
    if ($0 !~ /"verified":true/) { print "bench-fib: an answer did not verify: " $0 > "/dev/stderr"; bad = 1 }
    key = v " " s " " p
    if (!(key in cnt)) order[++nk] = key
    cnt[key]++; T[key, cnt[key]] = t
}
END {
    for (i = 1; i <= nk; i++) {
        key = order[i]; k = cnt[key]; mn = 1e99; mx = 0
        for (j = 1; j <= k; j++) { a[j] = T[key, j]; if (a[j] < mn) mn = a[j]; if (a[j] > mx) mx = a[j] }
        med[key] = median(a, k); lo[key] = mn; hi[key] = mx
    }
    ts = med["serial none 1"]
    printf "| variant | scheduler | T1 (s) | T1/Ts | T2 (s) | Ts/T2 |\n|---|---|---|---|---|---|\n"
    printf "| serial projection | - | Ts = %.3f [%.3f-%.3f] | 1 | - | - |\n", ts, lo["serial none 1"], hi["serial none 1"]
    for (i = 1; i <= nk; i++) {
        split(order[i], f, " "); v = f[1]; s = f[2]
        if (v == "serial" || done[v, s]) continue
        done[v, s] = 1
        k1 = v " " s " 1"; k2 = v " " s " 2"
        c1 = (k1 in med) ? sprintf("%.3f [%.3f-%.3f] | %.2f", med[k1], lo[k1], hi[k1], med[k1] / ts) : "- | -"
        c2 = (k2 in med) ? sprintf("%.3f [%.3f-%.3f] | %.2f", med[k2], lo[k2], hi[k2], ts / med[k2]) : "- | -"
        printf "| %s | %s | %s | %s |\n", v, s, c1, c2
    }
    exit bad
}' "$RAW" | tee "$OUT/fib-$N.md"
echo "(medians of $REPS, [min-max]; raw runs in $RAW)"
