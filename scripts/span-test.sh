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

# every kernel on the span driver, in time
for spec in "fib --n 18" "integrate --n 100" "matmul --n 64" "nqueens --n 7" "uts --preset T1" "uts --preset T3 --reps 1" \
            "balanced --n 32 --iters 1000" "imbalanced --n 32" "heat --n 64 --steps 4 --strips 8" "bfs --n 4096" \
            "mergesort --n 100000"; do
    out=$("$bin/fk-bench-span" --kernel $spec --reps 2 2>&1)
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
print("; ".join(errs))' 2>&1)
    if [ $rc -eq 0 ] && [ -z "$why" ]; then ok "span driver: $spec"
    else bad "span driver: $spec: exit $rc: $why $(echo "$out" | tail -2)"; fi
done

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
# the text form names what it measured
out=$("$bin/forkscope" span --kernel fib --n 20 --project 112 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q "the DAG in strands: work 54726, span 41" && echo "$out" | grep -q "^ *112 "; then
    ok "span's text: the DAG in strands and the projection at 112"
else bad "forkscope span --kernel fib --n 20: exit $rc: $out"; fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
