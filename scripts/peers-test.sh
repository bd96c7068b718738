#!/bin/bash
# The peer drivers (make peers PEERS_DIR=DIR): every kernel each peer runs, verified, at 1, 2
# and 3 workers (more than this machine's cores is fine); the driver protocol (repetitions,
# warm-up, the peer's revision and flags in the JSON); a kernel the peer has no version of is
# refused with exit status 2 before anything runs; a sweep with the peers beside forkscope's
# variants.  Without PEERS_DIR: one skip line.
set -u
cd "$(dirname "$0")/.."
# The peers the Makefile knows (peers/NAME.mk): name, checkout, a file in it, a reason not to build
facts=$(make -s --no-print-directory peer-facts) || { echo "FAIL make peer-facts"; echo "0 passed, 1 failed"; exit 1; }
peers=$(printf '%s\n' "$facts" | cut -f1 | tr '\n' ' ')
checkout_of() { printf '%s\n' "$facts" | awk -F'\t' -v p="$1" '$1 == p { print $2 }'; }
check_of() { printf '%s\n' "$facts" | awk -F'\t' -v p="$1" '$1 == p { print $3 }'; }
skip_of() { printf '%s\n' "$facts" | awk -F'\t' -v p="$1" '$1 == p { print $4 }'; }
bin=${BUILD:-build}/bin
pass=0 fail=0 skip=0
ok() { echo "ok $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

# What needs no checkout: the plan skips a peer's cells of kernels its driver does not list
# (--kernels; here a stand-in driver that lists fib alone) and its calibrate cells where it
# runs nothing, and a peer whose driver is not built stops the sweep before any run, naming
# the command that builds it.
tmp0=$(mktemp -d /tmp/fk_peers0_XXXXXX)
printf '#!/bin/sh\n[ "$1" = --kernels ] && echo "kernels: fib"\nexit 0\n' > "$tmp0/standin" && chmod +x "$tmp0/standin"
cat > "$tmp0/c.json" <<'JSON'
{"name": "peer-plan", "benchmarks": [{"kernel": "fib", "params": {"n": 20}}, {"kernel": "switch", "params": {"rounds": 100}},
  {"name": "switch-only", "kernel": "switch", "params": {"rounds": 100}, "variants": ["serial", "lace"]}],
 "variants": ["serial", "lace"], "workers": [1, 2], "repetitions": 1}
JSON
plan=$(FORKSCOPE_DRIVER=$tmp0/standin "$bin/forkscope" run "$tmp0/c.json" -o "$tmp0/dry" --dry-run 2>&1)
# lace: fib at P = 1, 2 and its calibrate cells; its 4 switch cells skipped; serial: fib, switch, switch-only, calibrate
if echo "$plan" | grep -q "Skipped: 4 cells of peers on kernels they have no version of" &&
   [ "$(echo "$plan" | grep -c '|lace|')" -eq 4 ]; then
    ok "plan: a peer's cells of kernels it has no version of are skipped"
else
    bad "plan with lace on fib and switch: $plan"
fi
mkdir -p "$tmp0/bin" && cp "$bin/forkscope" "$bin/fk-bench-serial" "$tmp0/bin/" # no fk-bench-lace beside it
out=$(cd "$tmp0" && env -u FORKSCOPE_DRIVER bin/forkscope run c.json -o r 2>&1)
rc=$?
if [ $rc -ne 0 ] && echo "$out" | grep -q "a peer: build it from your checkout with make peers PEERS_DIR=DIR" &&
   [ ! -s "$tmp0/r/raw.jsonl" ]; then
    ok "an unbuilt peer stops the sweep before any run, naming make peers"
else
    bad "an unbuilt peer: exit $rc, raw.jsonl $(wc -l < "$tmp0/r/raw.jsonl" 2>/dev/null || echo none): $out"
fi
# through "peers", an unbuilt peer is left out; a benchmark whose own list names only such
# peers is left out too, and said so (not silently planned with no cells)
cat > "$tmp0/lo.json" <<'JSON'
{"name": "left-out", "benchmarks": [{"kernel": "fib", "params": {"n": 15}},
  {"name": "only-peer", "kernel": "fib", "params": {"n": 15}, "variants": ["lace"]}],
 "variants": ["serial"], "peers": ["lace"], "workers": [1], "repetitions": 1}
JSON
plan=$(cd "$tmp0" && env -u FORKSCOPE_DRIVER bin/forkscope run lo.json -o lo --dry-run 2>&1)
if echo "$plan" | grep -q "Left out: the peers lace, not built" &&
   echo "$plan" | grep -q "Left out: benchmark only-peer, whose own \"variants\" names only peers that are not built"; then
    ok "plan: a benchmark left with no variant (its peers not built) is named"
else
    bad "plan with only-peer's lace unbuilt: $plan"
fi
rm -rf "$tmp0"

if [ -z "${PEERS_DIR:-}" ]; then
    echo "skip peers: no PEERS_DIR given (make check-peers PEERS_DIR=DIR builds and tests the peers whose checkouts DIR holds: $peers)"
    echo "$pass passed, $fail failed, 1 skipped"
    [ $fail -eq 0 ]
    exit
fi
# (Taskflow's integrate costs ~25x the serial time per task: a smaller interval.)  The M:N
# workloads at sizes of 10-50 ms: heat's 20 steps and bfs's levels are rounds of forks and a
# join in one root task; balanced's 128 tasks are forked by one.
mn_kernels="balanced:--n:128 imbalanced:--n:128 heat:--steps:20 bfs:--n:65536 mergesort:--n:500000 skynet:--depth:5"
kernels_of() { case $1 in
    (fibril) echo "fib:--n:27 integrate:--n:1000 matmul:--n:128 nqueens:--n:9 uts:--preset:T1 $mn_kernels" ;;
    (taskflow) echo "fib:--n:24 integrate:--n:400 matmul:--n:128 nqueens:--n:9 uts:--preset:T1 $mn_kernels" ;;
    (*) echo "fib:--n:27 integrate:--n:1000 matmul:--n:128 nqueens:--n:9 uts:--preset:T1 $mn_kernels" ;; esac; }
for p in $peers; do
    d=$bin/fk-bench-$p
    c=$(checkout_of "$p")
    if [ ! -e "$PEERS_DIR/$c/$(check_of "$p")" ]; then
        echo "skip $p: no checkout at $PEERS_DIR/$c (no $(check_of "$p"))"
        skip=$((skip + 1))
        continue
    fi
    if [ -n "$(skip_of "$p")" ]; then
        echo "skip $p: $(skip_of "$p") (make peers does not build it here)"
        skip=$((skip + 1))
        continue
    fi
    if [ ! -x "$d" ]; then
        bad "$p: $PEERS_DIR/$p exists but $d was not built (make peers PEERS_DIR=$PEERS_DIR)"
        continue
    fi
    # more workers than cores too, except Fibril, which runs at most one per CPU (below)
    # (online CPUs, as Fibril counts them: nproc would give the affinity mask's)
    ncpu=$(getconf _NPROCESSORS_ONLN)
    ws="1 2 3"
    [ "$p" = fibril ] && ws="1 $( [ "$ncpu" -ge 2 ] && echo 2)"
    for spec in $(kernels_of "$p"); do
        IFS=: read -r k opt val <<<"$spec"
        for w in $ws; do
            out=$(timeout 300 "$d" --kernel "$k" "$opt" "$val" --workers $w --reps 2 --warmup 1 2>&1)
            rc=$?
            if [ $rc -ne 0 ]; then bad "$p $k P=$w: exit $rc: $(echo "$out" | tail -2)"; continue; fi
            why=$(echo "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
p = sys.argv[1]; w = int(sys.argv[2])
errs = []
if d.get("verified") is not True: errs.append("not verified")
if d.get("variant") != p: errs.append("variant %r" % d.get("variant"))
if d.get("workers") != w: errs.append("workers %r" % d.get("workers"))
if len(d.get("times", [])) != 2 or len(d.get("warmup_times", [])) != 1: errs.append("times %r warm-up %r" % (d.get("times"), d.get("warmup_times")))
if not all(t > 0 for t in d.get("times", [])): errs.append("a time <= 0")
peer = d.get("peer", {})
if not peer.get("flags") or not peer.get("what"): errs.append("peer %r" % peer)
if not peer.get("revision", "").endswith("(%s/%s)" % (sys.argv[3], sys.argv[4])): errs.append("peer revision %r: not built from %s/%s" % (peer.get("revision"), sys.argv[3], sys.argv[4]))
print("; ".join(errs))' "$p" "$w" "$(cd "$PEERS_DIR" && pwd)" "$c" 2>&1)
            if [ -z "$why" ]; then ok "$p $k P=$w"; else bad "$p $k P=$w: $why"; fi
        done
    done
    if [ "$p" = fibril ]; then
        # Fibril's limits fail loudly: more workers than CPUs (it would quietly run fewer), and
        # a tree whose forks nest deeper than its 1000-slot deque (T3: 1,572 levels)
        out=$(timeout 60 "$d" --kernel fib --n 20 --workers $(( ncpu + 1 )) 2>&1); rc=$?
        if [ $rc -eq 2 ] && echo "$out" | grep -q "runs at most one per online CPU"; then ok "fibril refuses more workers than CPUs (exit 2)"
        else bad "fibril at $(( ncpu + 1 )) workers: exit $rc, expected 2: $out"; fi
        out=$(timeout 120 "$d" --kernel uts --preset T3 --workers 1 2>&1); rc=$?
        if [ $rc -eq 2 ] && echo "$out" | grep -q "deeper than Fibril's deque holds"; then ok "fibril refuses a tree deeper than its deque (exit 2)"
        else bad "fibril on T3: exit $rc, expected 2: $out"; fi
    fi
    out=$("$d" --kernel switch 2>&1)
    rc=$?
    if [ $rc -eq 2 ] && echo "$out" | grep -q "has no version of kernel switch"; then
        ok "$p refuses a kernel it has no version of (switch: tasks that block; exit 2)"
    else
        bad "$p --kernel switch: exit $rc, expected 2 and a refusal: $out"
    fi
    # the driver lists what its peers/NAME file defines, every kernel tested above among them
    # and not switch; forkscope variants shows that list (the harness plans with it)
    drv=$("$d" --kernels | sed -n 's/^kernels: *//p')
    want=$(for spec in $(kernels_of "$p"); do printf '%s ' "${spec%%:*}"; done)
    missing=$(for k in $want; do case " $drv " in (*" $k "*) ;; (*) printf '%s ' "$k" ;; esac; done)
    hx=$("$bin/forkscope" variants | awk -v p="$p" '$1 == p { getline; sub(/^ *kernels: */, ""); print }')
    if [ -z "$missing" ] && [[ " $drv " != *" switch "* ]] && [ "$(echo $hx)" = "$(echo $drv)" ]; then
        ok "$p: its driver lists the kernels it runs ($drv), as forkscope variants does"
    else bad "$p: --kernels '$drv' (missing: '$missing'), forkscope variants says '$hx'"; fi
done
# The harness: the built peers through a config's "peers", beside forkscope's own variants,
# their cells of kernels they have no version of skipped in the plan, env.json naming each
# peer's checkout; the first built peer is made absent (forkscope runs from a directory
# holding the other drivers only): it is left out, named in the plan, on stderr, in env.json
# and report.md, and the rest of the sweep runs.
built=""
for p in $peers; do [ -e "$PEERS_DIR/$(checkout_of "$p")/$(check_of "$p")" ] && [ -x "$bin/fk-bench-$p" ] && built="$built $p"; done
if [ -z "$built" ]; then
    echo "skip sweep: no peer driver built from $PEERS_DIR (the end-to-end sweep with peers did not run)"
    skip=$((skip + 1))
else
    tmp=$(mktemp -d /tmp/fk_peers_XXXXXX)
    absent=$(echo $built | cut -d' ' -f1)
    present=$(echo $built | cut -s -d' ' -f2-)
    mkdir -p "$tmp/bin"
    cp "$bin/forkscope" "$bin/fk-bench-serial" "$bin/fk-bench-cont-seg" "$tmp/bin/"
    for p in $present; do cp "$bin/fk-bench-$p" "$tmp/bin/"; done
    vs=$(for p in $built; do printf '"%s", ' "$p"; done)
    cat > "$tmp/c.json" <<JSON
{"name": "peers-e2e", "benchmarks": [{"kernel": "fib", "params": {"n": 24}},
  {"kernel": "heat", "params": {"n": 64, "steps": 4, "strips": 8}}, {"kernel": "switch", "params": {"rounds": 100}}],
 "variants": ["serial", "cont-seg-busy"], "peers": [${vs%, }], "workers": [1, 2], "repetitions": 2, "order": "paired"}
JSON
    plan=$(env -u FORKSCOPE_DRIVER "$tmp/bin/forkscope" run "$tmp/c.json" -o "$tmp/dry" --dry-run 2>&1)
    want=$(( $(echo $present | wc -w) * 2 ))
    if { [ $want -eq 0 ] || echo "$plan" | grep -q "Skipped: $want cells of peers on kernels they have no version of"; } &&
       echo "$plan" | grep -q "Left out: the peers $absent, not built"; then
        ok "plan skips the peers' switch cells ($want) and names the absent peer $absent"
    else
        bad "plan: no 'Skipped: $want cells of peers' or 'Left out: the peers $absent' line: $plan"
    fi
    out=$(env -u FORKSCOPE_DRIVER "$tmp/bin/forkscope" run "$tmp/c.json" -o "$tmp/r" 2>&1)
    rc=$?
    if [ $rc -ne 0 ]; then
        bad "forkscope run with peers: exit $rc: $(echo "$out" | tail -5)"
    elif ! echo "$out" | grep -q "left out: the peers $absent, not built"; then
        bad "forkscope run with an absent peer: stderr does not name it: $(echo "$out" | head -5)"
    else
        why=$(python3 - "$tmp/r" "$(cd "$PEERS_DIR" && pwd)" "$absent" $present <<'PY'
import csv, json, sys
d, peers_dir, absent, peers = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rows = list(csv.DictReader(open(d + "/summary.csv")))
env = json.load(open(d + "/env.json"))
errs = []
for p in peers:
    for b in ("fib", "heat"):
        for w in ("1", "2"):
            r = [x for x in rows if x["benchmark"] == b and x["variant"] == p and x["workers"] == w]
            if len(r) != 1 or r[0]["n_ok"] != "2" or r[0]["n_failed"] != "0":
                errs.append("%s %s P=%s: %r" % (p, b, w, r))
    if any(x["variant"] == p and x["benchmark"] == "switch" for x in rows):
        errs.append("%s has switch cells" % p)
    rev = env.get("drivers", {}).get(p, {}).get("peer", {}).get("revision", "")
    if not rev.endswith("(%s/%s)" % (peers_dir, p.split("-")[0])):
        errs.append("env.json drivers.%s.peer.revision %r" % (p, rev))
if any(x["variant"] == absent for x in rows):
    errs.append("the absent peer %s has cells" % absent)
if not [x for x in rows if x["variant"] == "cont-seg-busy" and x["n_ok"] == "2"]:
    errs.append("cont-seg-busy did not run")
if env.get("peers_left_out") != [absent]:
    errs.append("env.json peers_left_out %r" % env.get("peers_left_out"))
if "Peers left out" not in open(d + "/report.md").read() or absent not in open(d + "/report.md").read():
    errs.append("report.md does not name the absent peer")
print("; ".join(errs))
PY
)
        if [ -z "$why" ]; then ok "forkscope run: peers beside forkscope variants, env.json names their checkouts; the absent one left out and named"
        else bad "forkscope run with peers: $why"; fi
        # a resume must see the same peers built: with the absent one now present, it stops
        cp "$bin/fk-bench-$absent" "$tmp/bin/"
        out=$(env -u FORKSCOPE_DRIVER "$tmp/bin/forkscope" run "$tmp/c.json" -o "$tmp/r" --resume 2>&1); rc=$?
        if [ $rc -ne 0 ] && echo "$out" | grep -q "peers\" built here differ from when the sweep started"; then
            ok "a resume refuses a different set of built peers"
        else bad "resume after building $absent: exit $rc: $out"; fi
    fi
    rm -rf "$tmp"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
