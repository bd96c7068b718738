#!/bin/bash
# forkscope slurm, end to end, on a one-node SLURM cluster started here (scripts/slurm-local.sh):
# submit a sweep as a job array (2 shards, one at a time), cancel the second array task while
# it runs, see status report the missing runs, resubmit, merge, and compare with a local run of
# the same configuration: the same cells and run counts, no run twice, every record naming
# the node it ran on.  If the cluster cannot start, the test fails and says why.
# Prints "N passed, N failed"; run from the top of the tree after make.
set -u
FS=${FS:-build/bin/forkscope}
pass=0; fail=0
tmp=$(mktemp -d /tmp/fk_slurm_XXXXXX)
finish() {
    scripts/slurm-local.sh stop "$tmp/cluster" >/dev/null 2>&1
    [ "$fail" = 0 ] && rm -rf "$tmp"
    echo "$pass passed, $fail failed"
    [ "$fail" = 0 ]
    exit
}
. scripts/slurm-lib.sh
# whether every record of $2/raw.jsonl, the env.json of each of $2's shards and the nodes of
# the merged env.json name host $1 (those that do not are printed)
on_host() {
    python3 - "$1" "$2" <<'PY'
import glob, json, sys
host, d = sys.argv[1], sys.argv[2]
recs = [json.loads(l) for l in open(d + "/raw.jsonl") if l.strip()]
bad = ["%s: %r" % (r["run_id"], r.get("host")) for r in recs if r.get("host") != host]
envs = sorted(glob.glob(d + "/shards/*/env.json"))
bad += ["%s: %r" % (e, json.load(open(e)).get("host")) for e in envs if json.load(open(e)).get("host") != host]
nodes = sorted(json.load(open(d + "/env.json")).get("slurm", {}).get("nodes", {}))
bad += ["env.json's slurm nodes: %s" % nodes] if nodes != [host] else []
for b in bad[:5]:
    print("  not on %s: %s" % (host, b))
sys.exit(not recs or not envs or bool(bad))
PY
}

port=$((17000 + RANDOM % 2000))
if ! out=$(scripts/slurm-local.sh start "$tmp/cluster" "$port" 2>&1); then
    echo "$out"
    bad "a one-node SLURM cluster starts here"
    finish
fi
export SLURM_CONF=$tmp/cluster/slurm.conf
ok "a one-node SLURM cluster starts here"

cat > "$tmp/e2e.json" <<'JSON'
{"name": "slurm-e2e",
 "benchmarks": [{"name": "fib", "kernel": "fib", "params": {"n": 31}},
                {"name": "nqueens", "kernel": "nqueens", "params": {"n": 10}}],
 "variants": ["cont-seg-busy", "serial"], "workers": [1, 2], "repetitions": 6, "warmup": 0,
 "calibrate": false, "order": "paired", "instructions": {"kernel": "fib", "n": [4, 8]}}
JSON
out=$("$FS" slurm submit "$tmp/e2e.json" -o "$tmp/c" --shards 2 --max-parallel 1 2>&1)
job=$(echo "$out" | sed -n 's/.*submitted job \([0-9]*\).*/\1/p')
check "submit: an array job of 2 shards" '[ -n "$job" ] && grep -q "^#SBATCH --array=0-1%1" "$tmp/c/slurm/job.sbatch"'
[ -n "$job" ] || { echo "$out"; finish; }

check "families never split: a benchmark's variants at one P share a shard" \
    'python3 -c "
import json, sys
m = json.load(open(sys.argv[1]))
where = {}
for k, sh in enumerate(m[\"shards\"]):
    for c in sh[\"cells\"]:
        b, v, p = c.split(\"|\")
        where.setdefault((b, p), set()).add(k)
sys.exit(any(len(s) > 1 for s in where.values()))
" "$tmp/c/slurm/manifest.json"'

# cancel array task 1 once it runs and has recorded something
cancelled=0
for _ in $(seq 1200); do
    if [ "$(squeue -h -r -j "$job" -o '%K %T' 2>/dev/null | awk '$1 == 1 {print $2}')" = RUNNING ] &&
       [ -s "$tmp/c/shards/1/raw.jsonl" ]; then
        scancel "${job}_1" && cancelled=1
        break
    fi
    sleep 0.05
done
check "array task 1 cancelled while it ran" '[ "$cancelled" = 1 ]'
check "the job drains" 'drained "$job"'
status=$("$FS" slurm status "$tmp/c" 2>&1)
echo "$status" | sed 's/^/  /'
check "status: shard 0 complete, shard 1 missing runs and not queued" \
    'echo "$status" | grep -q "^1 .*not queued" && echo "$status" | grep -q "1 of 2 shards complete"'
out=$("$FS" slurm resubmit "$tmp/c" 2>&1)
job2=$(echo "$out" | sed -n 's/.*submitted job \([0-9]*\) (array 1).*/\1/p')
check "resubmit: only shard 1" '[ -n "$job2" ]'
[ -n "$job2" ] && check "the second job drains" 'drained "$job2"'
status=$("$FS" slurm status "$tmp/c" 2>&1)
check "status: complete after the resubmission" 'echo "$status" | grep -q "2 of 2 shards complete"'
check "merge" '"$FS" slurm merge "$tmp/c" >"$tmp/merge.log" 2>&1'
check "a local run of the same configuration" '"$FS" run "$tmp/e2e.json" -o "$tmp/local" >"$tmp/local.log" 2>&1'
check "the same runs as the local sweep, none twice" \
    '[ -s "$tmp/c/raw.jsonl" ] && diff <(run_ids "$tmp/local/raw.jsonl") <(run_ids "$tmp/c/raw.jsonl") >/dev/null'
# The cluster's one node is this machine (NodeAddr 127.0.0.1): every shard ran here, so every
# record and every shard's env.json must name this machine's hostname.
check "every merged record names the node it ran on ($(hostname))" 'on_host "$(hostname)" "$tmp/c"'
check "the analysis of the merged directory" '[ -s "$tmp/c/summary.csv" ] && [ -s "$tmp/c/report.md" ]'
check "instructions counted once, by merge, not by the shards" \
    'grep -q "^fk-bench-cont-seg,fib,4,8," "$tmp/c/instructions.csv" && [ ! -e "$tmp/c/shards/0/instructions.csv" ]'

# A cell whose runs come from nodes of different CPU models is not merged: shard 1's first run
# made to come from another node (as a resubmission to another partition would).
cp -r "$tmp/c" "$tmp/mixed" && rm -f "$tmp/mixed/raw.jsonl"
python3 - "$tmp/mixed/shards/1" <<'PY'
import json, sys
d = sys.argv[1]
lines = open(d + "/raw.jsonl").read().splitlines()
first = json.loads(lines[0]); first["host"] = "othernode"; lines[0] = json.dumps(first)
open(d + "/raw.jsonl", "w").write("\n".join(lines) + "\n")
env = json.load(open(d + "/env.json"))
env.setdefault("resumes", []).append({"host": "othernode", "cpu_model": "Another CPU"})
json.dump(env, open(d + "/env.json", "w"))
PY
out=$("$FS" slurm merge "$tmp/mixed" 2>&1); rc=$?
check "merge refuses a cell run on two CPU models, naming it" \
    '[ "$rc" != 0 ] && echo "$out" | grep -q "different CPU models" && [ ! -e "$tmp/mixed/raw.jsonl" ]'
finish
