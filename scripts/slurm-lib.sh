# slurm-lib.sh — what the SLURM scripts share; sourced, not run.
#   stop_daemons DIR NAME...   stops the daemons whose pid files are DIR/NAME.pid (TERM, then
#                              KILL after 5 s) and removes the pid files
#   ok, bad, check, drained, run_ids: the end-to-end tests' counters and waits (they count in
#                              $pass and $fail; drained waits up to $DRAIN_S seconds, default 120)

stop_daemons() {
    local d=$1 p f pid
    shift
    for p in "$@"; do
        f=$d/$p.pid
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
        rm -f "$f"
    done
}

ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

# Waits until job $1 has nothing left in the queue.  Only an squeue that succeeds and lists
# nothing says so: one that fails (the controller busy or gone, a job it does not know) lists
# nothing too, so it is asked again, and its last error is shown if it never answers.
drained() {
    local out err= errf
    errf=$(mktemp)
    for _ in $(seq $((${DRAIN_S:-120} * 5))); do
        if out=$(squeue -h -r -j "$1" 2>"$errf"); then
            [ -z "$out" ] && { rm -f "$errf"; return 0; }
            err=
        else
            err=$(cat "$errf")
        fi
        sleep 0.2
    done
    rm -f "$errf"
    [ -n "$err" ] && echo "  squeue -j $1 failed: $err"
    return 1
}

# The run ids of a raw.jsonl, sorted.
run_ids() { python3 -c 'import json,sys; print("\n".join(sorted(json.loads(l)["run_id"] for l in open(sys.argv[1]))))' "$1"; }
