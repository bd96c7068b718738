#!/bin/bash
# forkscope slurm on a SLURM cluster of four nodes made here (scripts/slurm-cluster.sh: each node
# a slurmd in its own network, UTS and mount namespaces; node4 sees another CPU model).
#  1. A paired sweep in 3 shards on node1-3 at once (node4 excluded): the records' hosts and
#     times show three nodes running together.  node2 is lost (every process in its namespaces
#     killed) while its shard runs; status names the shard, resubmit sends it to a surviving
#     node, merge gives every run once: the same run ids as a local run of the configuration.
#  2. A shard begun on node4 (the other CPU model) and finished on node1: merge refuses the
#     cell, naming both models, and writes nothing.
# If the cluster cannot be made here, the test fails and says why.  Prints "N passed, N
# failed"; run from the top of the tree after make.
set -u
FS=${FS:-build/bin/forkscope}
FS=$(cd "$(dirname "$FS")" && pwd)/$(basename "$FS")
pass=0; fail=0
tmp=$(mktemp -d /tmp/fk_nodes_XXXXXX)
finish() {
    scripts/slurm-cluster.sh stop "$tmp/cluster" >/dev/null 2>&1
    [ "$fail" = 0 ] && rm -rf "$tmp"
    echo "$pass passed, $fail failed"
    [ "$fail" = 0 ]
    exit
}
. scripts/slurm-lib.sh
DRAIN_S=180

trap 'bad "interrupted"; finish' INT TERM
started=
for _ in 1 2 3; do # (a port or subnet taken here: another one)
    port=$((19000 + RANDOM % 2000 * 2))
    out=$(scripts/slurm-cluster.sh start "$tmp/cluster" 4 "$port" 4 2>&1) && { started=1; break; }
    echo "$out" | grep -q "choose another PORT" || break
done
if [ -z "$started" ]; then
    echo "$out"
    bad "a four-node SLURM cluster starts here (each node in its own namespaces)"
    finish
fi
export SLURM_CONF=$tmp/cluster/slurm.conf
ok "a four-node SLURM cluster starts here (each node in its own namespaces)"
sinfo -N -h -o '  %N %T' | sort

# ---- 1. three nodes at once, one lost --------------------------------------------------------
cat > "$tmp/nodes.json" <<'JSON'
{"name": "slurm-nodes",
 "benchmarks": [{"name": "fib", "kernel": "fib", "params": {"n": 30}},
                {"name": "nqueens", "kernel": "nqueens", "params": {"n": 10}},
                {"name": "integrate", "kernel": "integrate", "params": {"n": 500}}],
 "variants": ["cont-seg-busy", "child-seg-busy", "serial"], "workers": [1], "repetitions": 12,
 "warmup": 0, "calibrate": false, "order": "paired"}
JSON
out=$("$FS" slurm submit "$tmp/nodes.json" -o "$tmp/c" --shards 3 --max-parallel 3 --sbatch-arg=--exclude=node4 2>&1)
job=$(echo "$out" | sed -n 's/.*submitted job \([0-9]*\).*/\1/p')
check "submit: 3 shards, at most 3 at once" '[ -n "$job" ] && grep -q "^#SBATCH --array=0-2%3" "$tmp/c/slurm/job.sbatch"'
[ -n "$job" ] || { echo "$out"; finish; }
# node2's shard, once it has recorded a run and not all of them: lose node2
lost= running=
for _ in $(seq 1500); do
    q=$(squeue -h -r -j "$job" -o '%K %T %N' 2>/dev/null)
    k=$(echo "$q" | awk '$2 == "RUNNING" && $3 == "node2" {print $1}')
    recorded=$( (wc -l < "$tmp/c/shards/${k:-x}/raw.jsonl") 2>/dev/null || echo 0)
    if [ -n "$k" ] && [ "$recorded" -ge 1 ] && [ "$recorded" -lt 36 ]; then
        running=$(echo "$q" | awk '$2 == "RUNNING" {print $3}' | sort | tr '\n' ' ')
        scripts/slurm-cluster.sh kill "$tmp/cluster" 2 && lost=$k
        break
    fi
    sleep 0.05
done
check "SLURM ran the three shards at once, on node1, node2 and node3 (running: $running)" \
    '[ "$running" = "node1 node2 node3 " ]' 
check "node2 lost while its shard ran (shard ${lost:-?})" '[ -n "$lost" ]'
[ -n "$lost" ] || finish
before=$(wc -l < "$tmp/c/shards/$lost/raw.jsonl")
check "the job drains without node2" 'drained "$job"'
check "SLURM marks node2 down" '[ -n "$(sinfo -h -n node2 -o %T | grep -i down)" ]'
status=$("$FS" slurm status "$tmp/c" 2>&1)
echo "$status" | sed 's/^/  /'
check "status: shard $lost missing runs and not queued, the other two complete" \
    'echo "$status" | grep -q "^$lost .*not queued" && echo "$status" | grep -q "2 of 3 shards complete"'
out=$("$FS" slurm resubmit "$tmp/c" 2>&1)
job2=$(echo "$out" | sed -n "s/.*submitted job \([0-9]*\) (array $lost).*/\1/p")
check "resubmit: only shard $lost" '[ -n "$job2" ]'
[ -n "$job2" ] && check "the resubmitted shard drains" 'drained "$job2"'
status=$("$FS" slurm status "$tmp/c" 2>&1)
check "status: complete after the resubmission" 'echo "$status" | grep -q "3 of 3 shards complete"'
check "merge" '"$FS" slurm merge "$tmp/c" >"$tmp/merge.log" 2>&1 || { tail -5 "$tmp/merge.log"; false; }'
why=$(python3 - "$tmp/c" "$lost" "$before" <<'PY'
import calendar, glob, json, sys, time
d, lost, before = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
recs = [json.loads(l) for l in open(d + "/raw.jsonl")]
errs = []
span = {}
for r in recs:
    t0 = calendar.timegm(time.strptime(r["started"], "%Y-%m-%dT%H:%M:%SZ"))
    lo, hi = span.get(r["host"], (1e18, 0))
    span[r["host"]] = (min(lo, t0), max(hi, t0 + r["wall_s"] + 1))
shards = {}
for k in range(3):
    for l in open("%s/shards/%d/raw.jsonl" % (d, k)):
        shards.setdefault(k, []).append(json.loads(l)["host"])
for k, hosts in sorted(shards.items()):
    print("  shard %d: %s" % (k, ", ".join("%s x%d" % (h, hosts.count(h)) for h in sorted(set(hosts)))))
first = {k: v[0] for k, v in shards.items()}
if sorted(first.values()) != ["node1", "node2", "node3"]:
    errs.append("the shards did not start on node1, node2, node3: %s" % first)
if first.get(lost) != "node2":
    errs.append("shard %d did not start on node2" % lost)
after = set(shards[lost][before:])
if not after or after & {"node2", "node4"}:
    errs.append("the resubmitted shard ran on %s, not on a surviving node" % sorted(after))
both = [h for h in ("node1", "node3") if h in span]
if len(both) == 2 and "node2" in span:
    lo = max(span[h][0] for h in ("node1", "node2", "node3"))
    hi = min(span[h][1] for h in ("node1", "node2", "node3"))
    print("  node1, node2, node3 all running from +%.0f s to +%.0f s" % (lo - min(s[0] for s in span.values()),
                                                                           hi - min(s[0] for s in span.values())))
    if lo >= hi:
        errs.append("the three nodes never ran at the same time: %s" % span)
env = json.load(open(d + "/env.json"))
nodes = sorted(env.get("slurm", {}).get("nodes", {}))
if not set(["node1", "node2", "node3"]) <= set(nodes):
    errs.append("env.json's slurm nodes: %s" % nodes)
print("; ".join(errs))
PY
) || why="$why; the checker failed"
echo "$why" | grep '^  '
check "three shards on three nodes at once; the lost shard finished on a surviving node" \
    '[ -z "$(echo "$why" | grep -v "^  ")" ] || { echo "$why" | grep -v "^  "; false; }'
check "a local run of the same configuration" '"$FS" run "$tmp/nodes.json" -o "$tmp/local" >"$tmp/local.log" 2>&1'
check "the same runs as the local sweep, none twice" \
    '[ -s "$tmp/c/raw.jsonl" ] && diff <(run_ids "$tmp/local/raw.jsonl") <(run_ids "$tmp/c/raw.jsonl") >/dev/null'

# ~97 s of runs estimated (3 families of ~30 s) against --time 1 (a minute): 2 shards fit; and
# against 0:20 (a minute too: SLURM rounds up) with one family alone over a minute: none do
sed 's/"repetitions": 12/"repetitions": 150/' "$tmp/nodes.json" > "$tmp/long.json"
out=$("$FS" slurm submit "$tmp/long.json" -o "$tmp/t" --cores 2 --shards 1 --time 1 --no-submit 2>&1)
echo "$out" | grep warning | sed 's/^/  /'
check "submit warns when a shard's estimate exceeds --time, with the shards that would fit" \
    'echo "$out" | grep -q "warning: the longest shard is estimated at 9[0-9] s, more than --time 1 (60 s): 2 shards would fit (--shards 2)"'
sed 's/"repetitions": 12/"repetitions": 400/' "$tmp/nodes.json" > "$tmp/longer.json"
out=$("$FS" slurm submit "$tmp/longer.json" -o "$tmp/t2" --cores 2 --shards 3 --time 0:20 --no-submit 2>&1)
check "... and when no number of shards would (a family alone is longer)" \
    'echo "$out" | grep -q "more than --time 0:20 (60 s): the largest family of cells alone takes"'

# ---- 2. one cell across two CPU models ---------------------------------------------------------
cat > "$tmp/mixed.json" <<'JSON'
{"name": "slurm-mixed",
 "benchmarks": [{"name": "fib", "kernel": "fib", "params": {"n": 30}}],
 "variants": ["cont-seg-busy", "serial"], "workers": [1], "repetitions": 20, "warmup": 0,
 "calibrate": false, "order": "paired"}
JSON
"$FS" slurm submit "$tmp/mixed.json" -o "$tmp/m" --shards 1 --no-submit >/dev/null 2>&1
srun -w node4 -J fk-mixed "$FS" slurm run-shard "$tmp/m" 0 >"$tmp/m4.log" 2>&1 &
for _ in $(seq 600); do
    [ "$( (wc -l < "$tmp/m/shards/0/raw.jsonl") 2>/dev/null || echo 0)" -ge 3 ] && break
    sleep 0.05
done
scancel -n fk-mixed; wait
srun -w node1 "$FS" slurm run-shard "$tmp/m" 0 >"$tmp/m1.log" 2>&1
hosts=$(python3 -c 'import json,sys; print(" ".join(sorted(set(json.loads(l)["host"] for l in open(sys.argv[1])))))' \
        "$tmp/m/shards/0/raw.jsonl" 2>/dev/null)
check "the shard ran on node4 (another CPU model), then on node1 (hosts: $hosts)" '[ "$hosts" = "node1 node4" ]'
out=$("$FS" slurm merge "$tmp/m" 2>&1); rc=$?
echo "$out" | grep "different CPU models" | sed 's/^/  /'
check "merge refuses the cell run on two CPU models, naming both, and writes nothing" \
    '[ "$rc" = 2 ] && echo "$out" | grep -q "cell fib|.*different CPU models:.*forkscope fake CPU (node4)" &&
     echo "$out" | grep "different CPU models" | grep -q "(node1)" && [ ! -e "$tmp/m/raw.jsonl" ]'
finish
