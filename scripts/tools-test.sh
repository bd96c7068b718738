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
        [ "$(printf '%s\n' "$out" | grep -cE '^  (serial|native-|lace-)')" -eq 13 ]; then
        ok "fork-model ($cc): builds warning-free, 13 variants, every answer right"
    else
        bad "fork-model ($cc): builds warning-free, 13 variants, every answer right" "$out"
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
# small_sweep SCRIPT NAME WHAT FILE, with a Python check on stdin: runs the small sweep
# $tmp/NAME.json into $tmp/NAME, then scripts/SCRIPT on it; "WHAT" passes when SCRIPT succeeds,
# it wrote $tmp/NAME/FILE and the check (given that file as its argument) holds.  SCRIPT must
# also refuse a directory without a sweep.
small_sweep() {
    local script=$1 name=$2 what=$3 file=$4 check out
    check=$(cat)
    if ! out=$(build/bin/forkscope run "$tmp/$name.json" -o "$tmp/$name" 2>&1); then
        bad "$script: the small sweep ran" "$out"
    elif out=$(python3 "scripts/$script" "$tmp/$name" 2>&1) && [ -s "$tmp/$name/$file" ] &&
        python3 -c "$check" "$tmp/$name/$file"; then
        ok "$script: $what"
    else
        bad "$script: $what" "$out"
    fi
    if out=$(python3 "scripts/$script" "$tmp" 2>&1); then bad "$script refuses a directory without a sweep" "$out"
    else ok "$script refuses a directory without a sweep"; fi
}
# scripts/beat-n.py draws time against the heartbeat period from a sweep like configs/beat-n.json
# (a small one here: fib 24, two periods, one run a cell): one block per worker count, each
# period's promotions per second from the drivers' statistics (fewer at the longer period),
# and the figure; a directory without beat-N runs is refused.
if [ -x build/bin/forkscope ] && command -v gnuplot >/dev/null; then
    cat > "$tmp/bn.json" <<'JSON'
{"name": "bn", "benchmarks": [{"name": "fib", "kernel": "fib", "params": {"n": 24}}],
 "variants": [{"name": "thief", "variant": "child-native-busy"},
              {"name": "beat-50", "variant": "child-native-busy-beat", "env": {"FORKSCOPE_BEAT_US": "50"}},
              {"name": "beat-5000", "variant": "child-native-busy-beat", "env": {"FORKSCOPE_BEAT_US": "5000"}}, "serial"],
 "workers": [1, 2], "repetitions": 1, "warmup": 0, "process_reps": 20, "calibrate": false}
JSON
    small_sweep beat-n.py bn "a block per worker count, promotions fewer at the longer period, the figure" \
        plots/beat-n.dat <<'PY'
import os, sys
assert os.path.getsize(os.path.join(os.path.dirname(sys.argv[1]), "beat-n.png")) > 0, "no beat-n.png"
blocks = [b for b in open(sys.argv[1]).read().split("\n\n\n") if b.strip()]
assert len(blocks) == 2, "%d blocks" % len(blocks)
for b in blocks:
    rows = [l.split() for l in b.splitlines() if l and not l.startswith("#")]
    assert [int(r[0]) for r in rows] == [50, 5000], rows
    assert float(rows[0][3]) > float(rows[1][3]), rows  # (fewer promotions at 5 ms)
    assert all(float(r[1]) > 0 for r in rows), rows
PY
else
    bad "beat-n.py" "build/bin/forkscope or gnuplot missing (make check builds and installs them)"
fi
# scripts/beat-bound.py sets heartbeat's T1 against the work bound 1 + tau/N from a sweep like
# configs/beat-bound.json (small here: fib 25, two periods, 3 runs a cell): a row per period with
# the paired ratio from forkscope compare, tau measured on the -tau copy (a positive number of
# ns), the bound above 1 and a verdict; the verdict's rule on both sides; a directory without
# such runs refused.
if [ -x build/bin/forkscope ]; then
    cat > "$tmp/bb.json" <<'JSON'
{"name": "bb", "benchmarks": [{"name": "fib", "kernel": "fib", "params": {"n": 25}},
                              {"name": "fib-tau", "kernel": "fib", "params": {"n": 25}}],
 "variants": [{"name": "thief", "variant": "child-native-busy"},
              {"name": "beat-20", "variant": "child-native-busy-beat", "env": {"FORKSCOPE_BEAT_US": "20"}},
              {"name": "beat-500", "variant": "child-native-busy-beat", "env": {"FORKSCOPE_BEAT_US": "500"}}],
 "workers": [1], "repetitions": 3, "warmup": 0, "process_reps": 30, "breakdown": ["fib-tau"], "calibrate": false,
 "order": "interleaved"}
JSON
    small_sweep beat-bound.py bb "a row per period, tau measured, the bound and a verdict" beat-bound.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [int(r["n_us"]) for r in rows] == [20, 500], rows
for r in rows:
    assert float(r["tau_ns"]) > 0 and float(r["bound"]) > 1 and float(r["lo"]) <= float(r["ratio"]) <= float(r["hi"]), r
    assert r["verdict"] in ("within", "exceeds"), r
PY
    if python3 -c "
import importlib.util, sys
s = importlib.util.spec_from_file_location('bb', 'scripts/beat-bound.py'); m = importlib.util.module_from_spec(s)
s.loader.exec_module(m)
sys.exit(0 if m.verdict(1.01, 1.005) == 'exceeds' and m.verdict(1.005, 1.005) == 'within' and m.verdict(0.99, 1.0001) == 'within' else 1)"; then
        ok "beat-bound.py: exceeds only when the whole interval lies above the bound"
    else
        bad "beat-bound.py: exceeds only when the whole interval lies above the bound" ""
    fi
else
    bad "beat-bound.py" "build/bin/forkscope missing (make check builds it)"
fi
# make layouts (make check builds the copies, as configs/layouts.json's dry run in the golden
# facts needs them): the same
# objects linked after 0 and 16 bytes of padding, so that every .text function of the p16 copy
# lies 16 bytes past the p0 copy's; scripts/layouts.py on a small sweep of the copies: a row per
# build with its copies' least <= median <= most T1/Ts and their spread, Ts the serial copies'
# median; a directory without serial-pN copies refused.
if [ -x build/layout/p0/fk-bench-serial ] && [ -x build/layout/p16/fk-bench-child-native ]; then
    moved=1
    for d in serial:fib_serial child-native:fib.part.0 child-native:fib__thunk; do
        a0=$(nm "build/layout/p0/fk-bench-${d%%:*}" | awk -v s="${d#*:}" '$3 == s {print $1}')
        a16=$(nm "build/layout/p16/fk-bench-${d%%:*}" | awk -v s="${d#*:}" '$3 == s {print $1}')
        if [ -z "$a0" ] || [ -z "$a16" ] || [ $((16#$a16 - 16#$a0)) -ne 16 ]; then moved=0; echo "  ${d}: p0 at ${a0:-?}, p16 at ${a16:-?}"; fi
    done
    if [ $moved = 1 ]; then ok "make layouts: the p16 copies' code lies 16 bytes past the p0 copies'"
    else bad "make layouts: the p16 copies' code lies 16 bytes past the p0 copies'" ""; fi
    cat > "$tmp/lay.json" <<'JSON'
{"name": "lay", "benchmarks": [{"name": "fib", "kernel": "fib", "params": {"n": 22}}],
 "variants": [{"name": "serial-p0", "variant": "serial", "drivers": "build/layout/p0"},
              {"name": "serial-p16", "variant": "serial", "drivers": "build/layout/p16"},
              {"name": "child-native-busy-p0", "variant": "child-native-busy", "drivers": "build/layout/p0"},
              {"name": "child-native-busy-p16", "variant": "child-native-busy", "drivers": "build/layout/p16"}],
 "workers": [1], "repetitions": 3, "warmup": 0, "calibrate": false, "order": "interleaved"}
JSON
    small_sweep layouts.py lay "a row per build of real copies: least <= median <= most, the spread their ratio" \
        layouts.csv <<'PY'
import csv, sys
rows = {r["build"]: r for r in csv.DictReader(open(sys.argv[1]))}
assert sorted(rows) == ["child-native-busy", "serial"], rows
for r in rows.values():
    assert r["benchmark"] == "fib" and int(r["copies"]) == 2, r
    lo, med, hi = float(r["least"]), float(r["median"]), float(r["most"])
    assert 0 < lo <= med <= hi and abs(float(r["spread"]) - hi / lo) < 1e-3, r
PY
else
    bad "make layouts" "build/layout/p0, p16 copies of serial and child-native missing (make check builds them)"
fi
# scripts/layouts.py's arithmetic on records of known times, 12 rounds, every time in round k
# multiplied by 1 + k (so that only a per-round Ts cancels it): Ts the serial copies' per-round
# median (0.5, 1, 2 -> 1); a copy's ratio the median over the rounds all its copies ran (x-p16's
# 0.6 x 6 and 0.7 x 5: a mean, or its failed run of 9, would move it); P = 2 and calibrate
# records and a torn line left out; against Lace's per-round median likewise; p 1 for identical
# copies, under 0.01 for copies apart in every round, none for one copy; a copy that shares no
# round with the serial copies named and left out.
mkdir -p "$tmp/known"
python3 - "$tmp/known/raw.jsonl" <<'PY'
import json, sys
recs = []
def rec(v, rep, t, status="ok", workers=1, kind="timed"):
    recs.append({"benchmark": "fib", "variant": v, "workers": workers, "kind": kind, "status": status, "rep": rep,
                 "time_s": t * (1 + rep)})
for k in range(12):
    rec("serial-p0", k, 0.5); rec("serial-p16", k, 1.0); rec("serial-p32", k, 2.0)
    rec("lace-p0", k, 0.2); rec("lace-p16", k, 0.3)
    rec("x-p0", k, 0.5); rec("x-p0", k, 7.0, workers=2); rec("x-p0", k, 7.0, kind="calibrate")
    rec("z-p0", k, 0.7); rec("z-p16", k, 0.7)
    rec("w-p0", k, 0.5); rec("w-p16", k, 0.8)
    rec("solo-p0", k, 0.9)
    if k < 11:
        rec("x-p16", k, 0.6 if k < 6 else 0.7)
rec("x-p16", 11, 9.0, status="failed")
rec("y-p0", 99, 1.0)
with open(sys.argv[1], "w") as f:
    f.write("".join(json.dumps(r) + "\n" for r in recs) + '{"torn')
PY
if out=$(python3 scripts/layouts.py "$tmp/known" 2>&1) && printf '%s\n' "$out" | grep -q "y .*no round" &&
    python3 - "$tmp/known/layouts.csv" <<'PY'
import csv, math, sys
rows = {r["build"]: r for r in csv.DictReader(open(sys.argv[1]))}
assert sorted(rows) == ["lace", "serial", "solo", "w", "x", "z"], rows
def near(r, **want):
    for k, v in want.items():
        assert abs(float(r[k]) - v) < 1e-3, (r["build"], k, r[k], v)
near(rows["serial"], copies=3, rounds=12, least=0.5, median=1, most=2, spread=4, lace_least=2, lace_median=4, lace_most=8)
near(rows["x"], copies=2, rounds=11, least=0.5, median=0.55, most=0.6, spread=1.2, lace_least=2, lace_median=2.2,
     lace_most=2.4)
near(rows["lace"], copies=2, least=0.2, median=0.25, most=0.3, spread=1.5)
near(rows["z"], spread=1, p=1)
assert float(rows["w"]["p"]) < 0.01, rows["w"]
assert int(rows["solo"]["copies"]) == 1 and math.isnan(float(rows["solo"]["p"])), rows["solo"]
PY
then
    ok "layouts.py: known times give the expected ratios, spreads and Lace columns"
else
    bad "layouts.py: known times give the expected ratios, spreads and Lace columns" "$out"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
