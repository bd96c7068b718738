#!/bin/bash
# forkscope span and the span build's driver (fk-bench-span): fib's DAG in strands against its
# closed form through the CLI's JSON; every kernel, UTS tree and M:N workload runs verified
# on the span driver with 0 < span <= work; the projection is min(P, parallelism); bad
# command lines are refused with the reason.
set -u
bin=${BUILD:-build}/bin
pass=0 fail=0
ok() { echo "ok $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

# fib(n) in strands: 4 a node, 1 a leaf; span S(n) = 1 + max(1 + S(n-1), 3 + S(n-2)), S(0) = S(1) = 1
for n in 2 10 20; do
    out=$("$bin/forkscope" span --kernel fib --n $n --unit strands --reps 1 --json --project 1,4,100000 2>&1)
    why=$(echo "$out" | python3 -c '
import json, sys
n = int(sys.argv[1])
d = json.load(sys.stdin); s = d["span"]
W, S = {0: 1, 1: 1}, {0: 1, 1: 1}
for k in range(2, n + 1):
    W[k] = 4 + W[k - 1] + W[k - 2]
    S[k] = 1 + max(1 + S[k - 1], 3 + S[k - 2])
errs = []
if not d.get("verified"): errs.append("not verified")
if s["work"] != W[n] or s["span"] != S[n]: errs.append("work %s span %s, the DAG has %d, %d" % (s["work"], s["span"], W[n], S[n]))
if s["unit"] != "strands" or not s["method"].startswith("exact"): errs.append("unit %s method %s" % (s["unit"], s["method"]))
for r in d["projection"]:
    want = min(r["workers"], W[n] / S[n])
    if abs(r["speedup_bound"] - want) > 1e-6 * want: errs.append("P=%d bound %s, want %s" % (r["workers"], r["speedup_bound"], want))
print("; ".join(errs))' $n 2>&1)
    if [ -z "$why" ]; then ok "fib($n) in strands: the closed form's work and span, bounds min(P, work/span)"
    else bad "fib($n) in strands: $why: $(echo "$out" | head -3)"; fi
done

# every kernel on the span driver, in time; then again with the hooks' calibrated residue
# inflated 8 times (FORKSCOPE_SPAN_RESIDUE_SCALE): a host whose clock costs more, or whose
# calibration over-estimates what the hooks leave in the strands, must not read a work of 0
driver_checks() { # LABEL, then the environment's assignments
    local label=$1 spec out rc why
    shift
    for spec in "fib --n 18" "integrate --n 100" "matmul --n 64" "nqueens --n 7" "uts --preset T1" "uts --preset T3 --reps 1" \
                "balanced --n 32 --iters 1000" "imbalanced --n 32" "heat --n 64 --steps 4 --strips 8" "bfs --n 4096" \
                "mergesort --n 100000"; do
        out=$(env "$@" "$bin/fk-bench-span" --kernel $spec --reps 2 2>&1)
        rc=$?
        why=$(echo "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin); s = d["span"]
errs = []
if not d.get("verified"): errs.append("not verified")
if d.get("variant") != "span": errs.append("variant %r" % d.get("variant"))
if not (s["work"] > 0 and 0 < s["span"] <= s["work"] * 1.0001): errs.append("work %s span %s" % (s["work"], s["span"]))
if s["burdened_span"] < s["span"]: errs.append("burdened span %s below the span %s" % (s["burdened_span"], s["span"]))
g = s.get("dag_in_strands")
if not g or not (1 <= g["span"] <= g["work"]) or g["work"] != s["strands"]: errs.append("dag_in_strands %r, strands %r" % (g, s["strands"]))
# the residue taken off is at most what any strand took a hook, so the work is at least the
# raw time of the strands less that for each hook
h, hb, hc = s["hook_ns"], s["hook_bound_ns"], s["hook_calibrated_ns"]
if not (h <= hb * (1 + 1e-9) and h <= hc * (1 + 1e-9)): errs.append("residue %s above its bound %s or the calibrated %s" % (h, hb, hc))
if s["work"] < s["raw_work"] - s["hooks"] * hb - 1e-6 * s["raw_work"]: errs.append("work %s below raw %s less %s hooks of %s" % (s["work"], s["raw_work"], s["hooks"], hb))
if s["resolved"] and not s["min_work"] > 0: errs.append("resolved with a strand-median work of %s" % s["min_work"])
print("; ".join(errs))' 2>&1)
        if [ $rc -eq 0 ] && [ -z "$why" ]; then ok "span driver$label: $spec"
        else bad "span driver$label: $spec: exit $rc: $why $(echo "$out" | tail -2)"; fi
    done
}
driver_checks ""
driver_checks " (residue x8)" FORKSCOPE_SPAN_RESIDUE_SCALE=8
# not resolved: the times null in span --json, the bounds from the DAG in strands
out=$(FORKSCOPE_SPAN_RESIDUE_SCALE=8 "$bin/forkscope" span --kernel fib --n 18 --json --project 2,100000 2>&1)
why=$(echo "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin); s = d["span"]; errs = []
if s["resolved"]: errs.append("fib(18) resolved (hook %s ns)" % s["hook_ns"])
for k in ("work", "min_work", "span", "burdened_span", "parallelism", "burdened_parallelism"):
    if s[k] is not None: errs.append("%s %r, want null" % (k, s[k]))
if not s["raw_work"] > 0: errs.append("raw_work %r" % s["raw_work"])
g = s["dag_in_strands"]
if [r["speedup_bound"] for r in d["projection"]] != [2, g["parallelism"]]: errs.append("projection %r" % d["projection"])
print("; ".join(errs))' 2>&1)
if [ -z "$why" ]; then ok "span --json (residue x8): fib(18) not resolved, its times null, bounds from the DAG in strands"
else bad "span --json fib 18 (residue x8): $why: $(echo "$out" | tail -3)"; fi
out=$(FORKSCOPE_SPAN_RESIDUE_SCALE=8 "$bin/forkscope" span --kernel fib --n 18 2>&1)
if echo "$out" | grep -q "^  work  *not resolved" && echo "$out" | grep -q "^  span  *not resolved"; then ok "span's text: not resolved"
else bad "span's text, not resolved: $out"; fi

# refusals
out=$("$bin/forkscope" span --kernel fib --workers 2 2>&1); rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep -q "one worker"; then ok "span refuses --workers"
else bad "span --workers 2: exit $rc: $out"; fi
out=$("$bin/forkscope" span --kernel fib --project 2,x 2>&1); rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep -q "option --project"; then ok "span refuses a bad --project"
else bad "span --project 2,x: exit $rc: $out"; fi
out=$("$bin/fk-bench-span" --kernel fib --workers 3 2>&1); rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep -q "one worker"; then ok "the span driver refuses more than one worker"
else bad "fk-bench-span --workers 3: exit $rc: $out"; fi
out=$("$bin/fk-bench-cont-seg" --kernel fib --span-unit strands 2>&1); rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep -q "only the span build"; then ok "other drivers refuse --span-unit"
else bad "fk-bench-cont-seg --span-unit: exit $rc: $out"; fi
out=$("$bin/fk-bench-span" --kernel fib --n 10 --span-unit strands --burden-ns 100 2>&1); rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep -q "burden-strands"; then ok "a burden in ns refused in the strand unit"
else bad "--span-unit strands --burden-ns: exit $rc: $out"; fi
out=$("$bin/fk-bench-span" --kernel fib --n 10 --burden-strands 3 2>&1); rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep -q "needs --span-unit strands"; then ok "a burden in strands refused in time"
else bad "--burden-strands in time: exit $rc: $out"; fi
# the burden calibrated: a figure and how it was found; a baseline refused
out=$("$bin/forkscope" span --calibrate-burden --burden-variant child-lin-busy 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -Eq "^burden [0-9]+ ns a fork \(calibrated on child-lin-busy: median of 3 pairs -?[0-9]+ ns \(-?[0-9]+ to -?[0-9]+\), T1 [0-9.]+ us, T2 [0-9.]+ us a fork-join\)"; then
    ok "the burden calibrated on a runtime variant: $(echo "$out" | tail -1)"
elif [ $rc -eq 4 ] && echo "$out" | grep -q "the second worker hardly helped"; then
    ok "the burden not calibrated, and why (a loaded machine): $(echo "$out" | tail -1)"
else bad "--calibrate-burden: exit $rc: $out"; fi
for v in tbb child-fiber-busy-any; do
    out=$("$bin/forkscope" span --calibrate-burden --burden-variant $v 2>&1); rc=$?
    if [ $rc -eq 1 ] && echo "$out" | grep -q "calibrated on a forkscope runtime variant whose tasks fork and join"; then
        ok "the burden is not calibrated on $v"
    else bad "--calibrate-burden $v: exit $rc: $out"; fi
done
out=$("$bin/forkscope" span --kernel matmul --n 64 --burden-ns=calibrate --burden-variant=cont-seg-busy --json 2>&1); rc=$?
b=$(echo "$out" | sed -n 's/^burden \([0-9]*\) ns a fork (calibrated on cont-seg-busy.*/\1/p')
if [ $rc -eq 0 ] && [ -n "$b" ] && echo "$out" | sed -n '/^{/,$p' | python3 -c "import json,sys; d=json.load(sys.stdin); sys.exit(0 if abs(d['span']['burden'] - $b) < 1 else 1)"; then
    ok "--burden-ns=calibrate hands the driver the calibrated burden ($b ns)"
else bad "--burden-ns=calibrate: exit $rc: $(echo "$out" | head -3)"; fi
for args in "--kernel fib --burden-variant cont-seg-busy" "--kernel fib --unit strands --burden-ns calibrate" \
            "--calibrate-burden --kernel fib"; do
    out=$("$bin/forkscope" span $args 2>&1); rc=$?
    if [ $rc -eq 1 ]; then ok "span $args: refused ($(echo "$out" | head -1 | cut -c1-70)...)"
    else bad "span $args: exit $rc: $out"; fi
done
# the text form names what it measured
out=$("$bin/forkscope" span --kernel fib --n 20 --project 112 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q "the DAG in strands: work 54726, span 41" && echo "$out" | grep -q "^ *112 "; then
    ok "span's text: the DAG in strands and the projection at 112"
else bad "forkscope span --kernel fib --n 20: exit $rc: $out"; fi

# The sweep's "span": span.csv, the bounds in summary.csv, report.md and the figures; two busy
# loops forked from one task, one twice the other's length (parallelism 3/2), whose measured
# T1/T2 must not beat its own bound beyond the noise, on continuation and child stealing (it
# comes within 1-4% of it here); the check that would say so is shown
# to fire on a bound made too low; switch is recorded as unsupported; a resumed sweep does
# not measure again.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/c.json" <<'JSON'
{"name": "spansweep",
 "benchmarks": [{"name": "imb", "kernel": "imbalanced", "params": {"n": 2, "every": 2, "heavy": 20000000, "light": 10000000}},
                {"name": "fib", "kernel": "fib", "params": {"n": 30}},
                {"name": "sw", "kernel": "switch", "params": {"rounds": 100}, "variants": ["serial"]},
                {"name": "nq", "kernel": "nqueens", "params": {"n": 6}}],
 "variants": ["cont-lin-busy", "child-native-busy", "serial"], "workers": [1, 2], "repetitions": 7, "warmup": 1,
 "calibrate": false, "order": "interleaved",
 "span": {"benchmarks": ["imb", "fib", "sw"], "burden_ns": "calibrate"}}
JSON
"$bin/forkscope" run "$tmp/c.json" -o "$tmp/r" > "$tmp/log" 2>&1
rc=$?
why=$(python3 - "$tmp/r" <<'PY' 2>&1
import csv, sys, os
d = sys.argv[1]
errs = []
rows = {r["benchmark"]: r for r in csv.DictReader(open(d + "/span.csv"))}
if set(rows) != {"imb", "fib", "sw"}: errs.append("span.csv rows %s" % sorted(rows))
h = rows.get("imb", {}); f = rows.get("fib", {}); w = rows.get("sw", {})
if h.get("status") != "ok" or h.get("resolved") != "1": errs.append("imb %s" % h)
elif not 1.4 <= float(h["bound_parallelism"]) <= 1.6: errs.append("imb's parallelism %s, expected 1.5" % h["bound_parallelism"])
if f.get("status") != "ok" or float(f.get("strand_parallelism") or 0) <= 2: errs.append("fib %s" % f)
elif f.get("resolved") == "0" and any(f[k] for k in ("work_s", "min_work_s", "span_s", "burdened_span_s", "parallelism", "burdened_parallelism")):
    errs.append("fib not resolved, with times: %s" % f)
bf = h.get("burden_from", "")
if not (bf.startswith("calibrated on cont-lin-busy: median of 3 pairs ") or bf.startswith("the default: the calibration on cont-lin-busy failed (")) or not float(h.get("burden_s") or -1) >= 0:
    errs.append("imb's burden: %r, %r s" % (h.get("burden_from"), h.get("burden_s")))
if w.get("status") != "unsupported" or "block on each other" not in w.get("note", ""): errs.append("switch %s" % w)
cells = list(csv.DictReader(open(d + "/summary.csv")))
t1 = {(c["benchmark"], c["variant"]): float(c["time_median"]) for c in cells if c["workers"] == "1" and c["time_median"]}
for c in cells:
    b, v, p = c["benchmark"], c["variant"], int(c["workers"])
    if b in ("imb", "fib"):
        want = min(p, float(rows[b]["bound_parallelism"]))
        if not c["span_bound"] or abs(float(c["span_bound"]) - want) > 1e-6 * want: errs.append("%s/%s/%d span_bound %r, want %g" % (b, v, p, c["span_bound"], want))
        if b == "imb" and not c["burdened_bound"]: errs.append("imb without a burdened bound")
        if p == 2 and v != "serial":
            self = t1[(b, v)] / float(c["time_median"])
            print("  %s/%s: T1/T2 %.3f, bound %.3f" % (b, v, self, float(c["span_bound"])), file=sys.stderr)
            # (fib's runs of a few ms drift by more than that on this VM: only shown)
            if b == "imb" and self > 1.05 * float(c["span_bound"]) + 0.1: errs.append("%s/%s: T1/T2 %.3f beats the bound %s" % (b, v, self, c["span_bound"]))
    elif c["span_bound"]: errs.append("%s has a bound %s without span" % (b, c["span_bound"]))
md = open(d + "/report.md").read()
if "## Work and span" not in md or "| imb |" not in md or "\n- imb / " in md: errs.append("report.md's work and span section")
bd = open(d + "/plots/bounds.dat").read()
if "# imb" not in bd or "\n2 1." not in bd: errs.append("bounds.dat: %s" % bd[:400])
st = open(d + "/plots/settings.gp").read()
if "sc_anybound = 1" not in st or "array sc_bound[4] = [2, 1, 0, 0]" not in st: errs.append("settings.gp's bounds")
for fig in ("speedup.png", "efficiency.png"):
    if not os.path.getsize(d + "/plots/" + fig): errs.append(fig)
print("; ".join(errs))
PY
)
if [ $rc -eq 0 ] && [ -z "$(echo "$why" | grep -v '^  ')" ]; then ok "sweep \"span\": span.csv, bounds in summary.csv, report.md, figures; T1/T2 within the bound"; echo "$why"
else bad "sweep \"span\": exit $rc: $why: $(grep -i 'span\|error' "$tmp/log" | tail -5)"; fi
lines=$(wc -l < "$tmp/r/span.csv")
"$bin/forkscope" run "$tmp/c.json" -o "$tmp/r" --resume > "$tmp/log2" 2>&1
if [ $? -eq 0 ] && [ "$(wc -l < "$tmp/r/span.csv")" = "$lines" ] && ! grep -q "span: imb" "$tmp/log2"; then
    ok "a resumed sweep does not measure work and span again"
else bad "resume: span.csv $(wc -l < "$tmp/r/span.csv") lines (was $lines): $(tail -3 "$tmp/log2")"; fi
# the check fires: imb's bound made 1.0 (the least a bound can be) and its runs at P = 2 made 3
# times faster in raw.jsonl, so that T1/T2 beats it whatever the machine's load did to the real
# runs (their T1/T2 is about 1.5 on a quiet machine, below 1 on a loaded one)
cp "$tmp/r/span.csv" "$tmp/span.good"
cp "$tmp/r/raw.jsonl" "$tmp/raw.good"
sed -i 's/^\(imb,.*,\)[0-9.e+-]*$/\11.0/' "$tmp/r/span.csv"
python3 - "$tmp/r/raw.jsonl" <<'PY'
import json, sys
path = sys.argv[1]
out = []
for line in open(path):
    r = json.loads(line)
    if r.get("benchmark") == "imb" and r.get("workers") == 2 and r.get("time_s"):
        r["time_s"] /= 3
        if isinstance(r.get("driver"), dict) and "times" in r["driver"]:
            r["driver"]["times"] = [t / 3 for t in r["driver"]["times"]]
    out.append(json.dumps(r))
open(path, "w").write("\n".join(out) + "\n")
PY
out=$("$bin/forkscope" fit "$tmp/r" 2>&1)
if echo "$out" | grep -q "beat the work-span bound" && grep -q "^- imb / .* at P = 2: T1/T_P" "$tmp/r/report.md"; then
    ok "a bound below the measured T1/T2 is reported as beaten"
else bad "a bound of 1.0 against T1/T2 made 3x: $out $(grep -A4 'beats the work-span' "$tmp/r/report.md")"; fi
cp "$tmp/raw.good" "$tmp/r/raw.jsonl"
# a failed measurement is measured again by a resumed sweep, and the last row counts; a row cut
# short by a crash is not a row
cp "$tmp/span.good" "$tmp/r/span.csv"
sed -i 's/^fib,fib,ok,/fib,fib,timeout,stopped/' "$tmp/r/span.csv"
printf 'nq,nqueens,ok,,given,s,exact,1,3,1,1,1,1,1,1,1,1,1,1,1.4' >> "$tmp/r/span.csv" # (all 20 fields, the last cut)
"$bin/forkscope" run "$tmp/c.json" -o "$tmp/r" --resume > "$tmp/log3" 2>&1; rc=$?
why=$(python3 - "$tmp/r" <<'PY' 2>&1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1] + "/span.csv")))
errs = []
if any(None in r or None in r.values() for r in rows): errs.append("a row with the wrong number of fields")
if [r["benchmark"] for r in rows] != ["imb", "fib", "sw", "fib"]: errs.append("rows %s" % [(r["benchmark"], r["status"]) for r in rows])
elif rows[3]["status"] != "ok" or rows[1]["status"] != "timeout": errs.append("statuses %s" % [r["status"] for r in rows])
md = open(sys.argv[1] + "/report.md").read()
sec = md.split("## Work and span")[1].split("\n## ")[0]
if sec.count("| fib |") != 1 or "timeout" in sec: errs.append("report.md's Work and span shows the timed-out row: %s" % sec[-800:])
print("; ".join(errs))
PY
)
if [ $rc -eq 0 ] && [ -z "$why" ] && grep -q "span: fib (2 of 3)" "$tmp/log3" && ! grep -q "span: imb (" "$tmp/log3"; then
    ok "a failed measurement is retried on --resume, the torn row dropped, the last row reported"
else bad "resume after a failure: exit $rc: $why: $(grep span "$tmp/log3" | tail -4)"; fi
# a bad span.csv is named, and the rest is still written
head -1 "$tmp/r/span.csv" > "$tmp/bad.csv"
echo "imb,imbalanced,ok,,given,s,x,1,3,zzz" >> "$tmp/bad.csv"
cp "$tmp/bad.csv" "$tmp/r/span.csv"
out=$("$bin/forkscope" fit "$tmp/r" 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q "span.csv line 2: 10 fields, the header has 20"; then ok "a bad span.csv is named by line"
else bad "bad span.csv: exit $rc: $out"; fi
head -1 "$tmp/span.good" > "$tmp/bad.csv"
echo "imb,imbalanced,ok,,given,s,x,1,3,0.1,0.1,0.05,0.05,0,2,2,6,2,1.5," >> "$tmp/bad.csv"
cp "$tmp/bad.csv" "$tmp/r/span.csv"
out=$("$bin/forkscope" fit "$tmp/r" 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q "span.csv line 2: bad bound_parallelism"; then ok "an ok row without a bound is refused by name"
else bad "ok row without a bound: exit $rc: $out"; fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
