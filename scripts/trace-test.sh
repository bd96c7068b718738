#!/bin/bash
# forkscope trace and the drivers' --account / --trace: on every runtime variant a run writes a
# Chrome trace that is valid JSON in the trace format (complete spans per worker disjoint and
# inside the run, flows paired), whose steal flows are the statistics' steals and whose work
# is the breakdown's; the breakdown's categories add up to each worker's wall time; a log too
# small for the run says how much it dropped; bad command lines are refused with the reason.
set -u
bin=${BUILD:-build}/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

# check TRACE DRIVER_JSON: "" if the two agree and the trace is well formed, else why
check() {
    python3 - "$1" "$2" <<'PY'
import json, sys
errs = []
try:
    t = json.load(open(sys.argv[1])); d = json.load(open(sys.argv[2]))
except Exception as e:
    print("not JSON: %s" % e); sys.exit()
ev, od = t.get("traceEvents"), t.get("otherData", {})
if not isinstance(ev, list) or not ev: errs.append("no traceEvents")
P = d["workers"]
last, work, flows, fin, promotes = {}, 0.0, {}, {}, 0
wall_us = sum(d["times"]) * 1e6
for e in ev or []:
    ph = e.get("ph")
    if ph == "M": continue
    tid = e.get("tid")
    if not (0 <= tid < P): errs.append("tid %s" % tid); break
    if ph == "X":
        if e["dur"] <= 0 or e["ts"] < 0: errs.append("span ts %s dur %s" % (e["ts"], e["dur"])); break
        if e["ts"] < last.get(tid, 0) - 0.002: errs.append("worker %d: overlapping spans at %s" % (tid, e["ts"])); break
        last[tid] = e["ts"] + e["dur"]
        if e["cat"] == "work": work += e["dur"]
    elif ph == "s": flows[e["id"]] = e
    elif ph == "f": fin[e["id"]] = e
    elif ph == "i" and e.get("name") == "promote" and e["args"]["slots"] >= 1: promotes += 1
    else: errs.append("phase %s" % ph); break
if set(flows) != set(fin): errs.append("%d flow starts, %d finishes" % (len(flows), len(fin)))
steals = sum(1 for e in flows.values() if e["cat"] == "steal")
if steals != d["stats"]["steals"] or steals != d["trace"]["steals"]:
    errs.append("%d steal flows, statistics %d, driver %d" % (steals, d["stats"]["steals"], d["trace"]["steals"]))
if od.get("variant") != d["variant"] or od.get("kernel") != d["kernel"]: errs.append("otherData %s" % od)
# each request answered (a thief's or a beat's) is a promote mark: as many as the statistics count
if od.get("promote") != d["pool"]["promote"]: errs.append("otherData's promote %s, the pool's %s" % (od.get("promote"), d["pool"]["promote"]))
if not od.get("dropped") and (promotes != d["trace"]["promotions"] or promotes != d["stats"]["publishes"]):
    errs.append("%d promote marks, driver %d, statistics %d" % (promotes, d["trace"]["promotions"], d["stats"]["publishes"]))
bd = d["breakdown"]["seconds"]
cats = ["work", "search", "steal", "join", "wait", "fiber", "sleep", "promote"]
if set(bd) - set(cats) - {"wall", "cpu"}: errs.append("categories not known here: %s" % sorted(set(bd) - set(cats) - {"wall", "cpu"}))
if abs(sum(bd[c] for c in cats) - bd["wall"]) > 1e-9 * max(1, bd["wall"]): errs.append("categories %s" % bd)
# the answers' time is accounted (a request arriving while a slow path runs is answered in the
# time it was in, so only where there were a few)
if d["stats"]["publishes"] >= 10 and bd["promote"] <= 0: errs.append("%d publications, no promote time" % d["stats"]["publishes"])
# the trace's work is the breakdown's (the spans end where the breakdown was read, give or take its read)
if abs(work * 1e-6 - bd["work"]) > 0.02 * bd["work"] + 2e-4: errs.append("trace work %.6f s, breakdown %.6f s" % (work * 1e-6, bd["work"]))
if bd["wall"] < P * sum(d["times"]) * 0.99: errs.append("walls %.6f s < P x the runs %.6f s" % (bd["wall"], P * sum(d["times"])))
print("; ".join(errs))
PY
}

for v in cont-seg-busy cont-lin-lazy child-seg-busy child-lin-busy child-native-lazy child-native-busy-beat cont-seg-lazy-beat child-fiber-busy-any child-fiber-lazy-home; do
    out=$("$bin/forkscope" trace --kernel fib --n 24 --variant $v --workers 2 --reps 3 -o "$tmp/$v.json" 2>&1)
    rc=$?
    drv=${v%-busy*}; drv=${drv%-lazy*}
    sched=$(echo $v | grep -o 'busy\|lazy')
    res=$(echo $v | grep -o -- '-any$\|-home$' | tr -d -)
    prom=$(echo $v | grep -o -- '-beat$' | tr -d -)
    "$bin/fk-bench-$drv" --kernel fib --n 24 --workers 2 --sched $sched ${res:+--resume $res} ${prom:+--promote $prom} --reps 3 \
        --trace "$tmp/$v.2.json" > "$tmp/$v.drv.json" 2>"$tmp/err"
    why=$(check "$tmp/$v.2.json" "$tmp/$v.drv.json")
    if [ $rc -ne 0 ] || ! echo "$out" | grep -q "^wrote $tmp/$v.json: [0-9]* events" || ! [ -s "$tmp/$v.json" ]; then
        bad "forkscope trace on $v: exit $rc: $(echo "$out" | head -3)"
    elif [ -n "$why" ]; then
        bad "the trace of fib(24) on $v: $why"
    else
        ok "$v: the trace is well formed, its steals and promotions are the statistics', its work the breakdown's"
    fi
done

# a log of 16 events a worker: the rest is counted, said, and in the file's otherData
out=$(FORKSCOPE_TRACE_EVENTS=16 "$bin/forkscope" trace --kernel fib --n 24 --workers 2 --reps 3 -o "$tmp/small.json" 2>&1)
why=$(python3 -c '
import json, sys
t = json.load(open(sys.argv[1])); o = t["otherData"]
errs = []
if o["dropped"] <= 0 or o["events"] != o["dropped"] + 2 * 16: errs.append("events %d dropped %d" % (o["events"], o["dropped"]))
print("; ".join(errs))' "$tmp/small.json" 2>&1)
if [ -z "$why" ] && echo "$out" | grep -q "events DROPPED (the logs were full: raise FORKSCOPE_TRACE_EVENTS)"; then
    ok "a full log: what it dropped is counted and said"
else
    bad "a full log: $why: $(echo "$out" | head -3)"
fi

# the timeline figure of a trace: every span and every steal of the file in its data
out=$("$bin/forkscope" plot "$tmp/cont-seg-busy.json" 2>&1); rc=$?
why=$(python3 -c '
import json, sys
t = json.load(open(sys.argv[1])); ev = t["traceEvents"]
spans = sum(1 for e in ev if e.get("ph") == "X")
steals = sum(1 for e in ev if e.get("ph") == "s" and e.get("cat") == "steal")
rows = [l.split() for l in open(sys.argv[2]) if not l.startswith("#")]
srows = [l.split() for l in open(sys.argv[3]) if not l.startswith("#")]
errs = []
if len(rows) != spans: errs.append("%d spans in timeline.dat, %d in the trace" % (len(rows), spans))
if len(srows) != steals: errs.append("%d steals in steals.dat, %d in the trace" % (len(srows), steals))
if any(r[1] == r[2] for r in srows): errs.append("a steal from a worker to itself")
print("; ".join(errs))' "$tmp/cont-seg-busy.json" "$tmp/cont-seg-busy-timeline/timeline.dat" "$tmp/cont-seg-busy-timeline/steals.dat" 2>&1)
if [ $rc -eq 0 ] && [ -z "$why" ] && [ -s "$tmp/cont-seg-busy-timeline/timeline.png" ]; then
    ok "forkscope plot TRACE: the timeline figure, with every span and steal of the trace"
elif [ $rc -eq 6 ]; then
    bad "forkscope plot TRACE: gnuplot missing (make check installs it): $out"
else
    bad "forkscope plot TRACE: exit $rc: $why: $(echo "$out" | head -3)"
fi
out=$("$bin/forkscope" plot "$tmp/err" 2>&1); rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep -q "is not a trace"; then ok "refused: plot of a file that is not a trace"
else bad "plot of a non-trace: exit $rc: $(echo "$out" | head -2)"; fi

# accounting without a trace, and off
d=$("$bin/fk-bench-cont-seg" --kernel fib --n 20 --workers 2 --account times 2>&1)
if echo "$d" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert "trace" not in d and d["breakdown"]["seconds"]["wall"] > 0 and d["pool"]["account"] == "times"' 2>/dev/null; then
    ok "--account times: a breakdown, no trace"
else bad "--account times: $(echo "$d" | head -c 300)"; fi
d=$("$bin/fk-bench-cont-seg" --kernel fib --n 20 --workers 2 2>&1)
if echo "$d" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert "breakdown" not in d and d["pool"]["account"] == "off"' 2>/dev/null; then
    ok "by default no accounting"
else bad "default accounting: $(echo "$d" | head -c 300)"; fi

# refusals
refused() { # WHAT EXPECTED-MESSAGE COMMAND...
    local what=$1 msg=$2; shift 2
    out=$("$@" 2>&1); rc=$?
    if [ $rc -eq 1 ] && echo "$out" | grep -qF -- "$msg"; then ok "refused: $what"
    else bad "$what: exit $rc: $(echo "$out" | head -2)"; fi
}
refused "no -o" "no -o FILE" "$bin/forkscope" trace --kernel fib
refused "a baseline" "is not one of forkscope's runtime variants" "$bin/forkscope" trace --kernel fib --variant serial -o "$tmp/x.json"
refused "--sched" "part of the variant name" "$bin/forkscope" trace --kernel fib --sched lazy -o "$tmp/x.json"
refused "--promote" "part of the variant name" "$bin/forkscope" trace --kernel fib --promote beat -o "$tmp/x.json"
refused "a bad kernel option" "unknown option --m for kernel fib" "$bin/forkscope" trace --kernel fib --m 3 -o "$tmp/x.json"
refused "--account on the serial driver" "only the runtime's variants" "$bin/fk-bench-serial" --kernel fib --account times
refused "--account bad" "is not off, times or trace" "$bin/fk-bench-cont-seg" --kernel fib --account sometimes
refused "--trace with --account times" "needs the trace, not --account times" "$bin/fk-bench-cont-seg" --kernel fib --trace "$tmp/x.json" --account times
out=$("$bin/forkscope" trace --kernel fib --n 10 -o /nonexistent/dir/x.json 2>&1); rc=$?
if [ $rc -eq 4 ] && echo "$out" | grep -q "cannot write the trace /nonexistent/dir/x.json"; then ok "an unwritable trace file is an error"
else bad "unwritable trace: exit $rc: $(echo "$out" | head -2)"; fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
