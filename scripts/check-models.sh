#!/bin/bash
# Model checks (SPIN, exhaustive at small bounds): each model in models/ with the defines
# that must verify, and each mutation that SPIN must refute (a model that cannot fail proves
# nothing).  Prints "N passed, N failed".
#
#   check-models.sh [PATTERN]   only the cases whose "model defines" match the extended regex
#
# "verified" means a complete search: pan's exit status 0, no error, and none of pan's words
# for a search it cut short ("max search depth too small": the depth bound PAN_DEPTH;
# "reached -DMEMLIM bound": the memory bound PAN_MEMLIM, MB; "Search not completed").  Each
# of those fails the case, naming the bound to raise.  A refutation needs the error the
# mutation is meant to cause (a counterexample stands whether or not the search went on):
# "refuted", an assertion of the model violated (an item taken twice, a lost result);
# "refuted-end", an invalid end state (a process waiting for ever: a lost wake-up).  Any
# other error (an index out of range, the other kind) fails the case: the model broke
# some other way, and the property it checks was not shown to catch the mutation.
set -u
cd "$(dirname "$0")/.."
command -v spin >/dev/null || { echo "FAIL spin not found (make setup installs Debian's spin)"; echo "0 passed, 1 failed"; exit 1; }
pass=0; fail=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fk_spin_XXXXXX")
# model  defines  expect(ok|refuted|refuted-end)  what
cases=(
  "deque  -DN=3               ok       split deque, x86-TSO store buffer, 2 thieves, 3 items"
  "deque  -DN=4               ok       the same, 4 items"
  "deque  -DSC                ok       the same, sequential consistency"
  "deque  -DNO_FENCE          refuted  reclaim without its fence, under TSO"
  "deque  -DSC,-DNO_FENCE     ok       reclaim without its fence under SC (what x86 tests see)"
  "deque  -DMUT_NO_CAS        refuted  the last public slot taken without the CAS race"
  "deque  -DBEAT,-DN=3        ok       heartbeat promotion: beats at any moment, one slot an answer, thieves never ask"
  "deque  -DBEAT,-DN=4        ok       the same, 4 items"
  "deque  -DBEAT,-DNO_FENCE   refuted  heartbeat promotion, reclaim without its fence"
  "deque  -DBEAT,-DMUT_NO_CAS refuted  heartbeat promotion, the last public slot taken without the CAS race"
  "lazy   -DG=1,-DM=2,-DR=1   ok       lazy sleep/wake: 1 group of 2 workers, a root, stop"
  "lazy   -DG=2,-DM=1,-DR=1   ok       lazy sleep/wake: 2 groups of 1 worker, a root, stop"
  "lazy   -DG=2,-DM=1,-DR=2   ok       lazy sleep/wake: 2 groups of 1 worker, 2 roots, stop"
  "lazy   -DG=1,-DM=2,-DR=1,-DNO_EARLY_B  ok  without (B)'s early test: the re-check suffices"
  "lazy   -DG=1,-DM=2,-DR=1,-DMUT_NO_RECHECK refuted-end  no inbox re-check after the sleeper bit (lost wake-up)"
  "lazy   -DG=2,-DM=1,-DR=1,-DMUT_NO_RECHECK refuted-end  the same, 2 groups"
  "lazy   -DG=1,-DM=2,-DR=1,-DMUT_NO_REPLACE    refuted  the last thief turns active without waking a replacement"
  "lazy   -DG=1,-DM=2,-DR=1,-DMUT_NO_LASTCHECK  refuted  the last thief sleeps while work runs"
  "join   -DC=2               ok       split-counter join, 2 stolen children, stores visible in any order"
  "join   -DC=3               ok       the same, 3 stolen children"
  "join   -DMUT_RELAXED_CHILD   refuted  a child's arrival relaxed, not release (its result unseen)"
  "join   -DMUT_RELAXED_PARENT  refuted  the parent's arrival relaxed (f->stack, sp or waiter unseen)"
  "join   -DMUT_RECORD_AFTER    refuted  f->stack recorded after the parent's arrival"
  "force  -DN=3               ok       forced publication as built: the cursor stored, membarrier(), the cursor read"
  "force  -DMUT_NO_MEMBARRIER refuted  the same without membarrier() (the owner's store still buffered)"
  "force  -DMUT_LOAD_FIRST    refuted  the pop reads split before it stores the cursor"
  "force  -DLIVE,-DN=3        ok       forced publication without the cursor: live marks scanned after membarrier()"
  "force  -DLIVE,-DMUT_NO_MEMBARRIER refuted  live marks without membarrier()"
  "force  -DLIVE,-DMUT_LOAD_FIRST    refuted  the pop reads split before it clears the mark"
  "force  -DLIVE,-DMUT_MARK_FIRST    refuted  the push writes the mark before the item"
  "force  -DLIVE,-DMUT_NO_CLEAR      refuted  the pop leaves the mark set"
  "force  -DLIVE,-DLOWER,-DN=3       ok       live marks on a deque whose bottom never jumps: a stolen pop lowers top (tagged) to the cursor"
  "force  -DLIVE,-DLOWER,-DMUT_NO_TAG      refuted  top lowered without its tag (a thief's stale CAS succeeds)"
  "force  -DLIVE,-DLOWER,-DMUT_STALE_MARKS refuted  the lowering leaves the stolen slots' marks set"
  "force  -DLIVE,-DLOWER,-DMUT_LOWER_FIRST refuted  top lowered before split_pub is (a thief takes the owner's private slot)"
  "force  -DLIVE,-DLOWER,-DMUT_NO_MEMBARRIER refuted  the deque as built, live marks without membarrier()"
  "force  -DLIVE,-DLOWER,-DMUT_LOAD_FIRST    refuted  the deque as built, the pop reading split before it clears the mark"
  "force  -DLIVE,-DLOWER,-DMUT_MARK_FIRST    refuted  the deque as built, the push writing the mark before the item"
  "force  -DLIVE,-DLOWER,-DMUT_NO_CLEAR      refuted  the deque as built, the pop leaving the mark set"
  "ring   -DN=4               ok       deque ring: wrap and growth under 2 thieves, stores visible in any order"
  "ring   -DREACH_GROW        refuted  (a growth happens in the model)"
  "ring   -DREACH_WRAP        refuted  (a wrap-around happens in the model)"
  "ring   -DMUT_RELAXED_PUBLISH  refuted  split_pub stored relaxed, not release (a slot public before its item)"
  "ring   -DMUT_RELAXED_GROW     refuted  dq_buf stored relaxed (the new buffer seen before its copies)"
  "counter -DD=2,-DF=2,-DT=1  ok       fk_counter: 2 doers, 2 parked fibers, a thread on the futex"
  "counter -DD=3,-DF=2,-DT=2  ok       the same, 3 doers, 2 fibers, 2 threads"
  "counter -DMUT_PARK_NO_LOCK refuted-end  the parker lists its fiber without the lock (lost wake-up)"
  "counter -DMUT_CLEAR_EARLY   refuted  ANNOUNCING cleared before the list is taken (used after free)"
  "counter -DMUT_NO_BIT    refuted-end  a thread sleeps without setting seq's bit (lost wake-up)"
  "beat   -DW=2,-DK=2         ok       heartbeat parking in a lazy pool: 2 workers turning active twice each, the stop"
  "beat   -DW=2,-DK=3         ok       the same, 3 times each"
  "beat   -DMUT_WAKE_NO_LOCK refuted-end  the waker signals without the heartbeat's lock (lost wake-up)"
  "beat   -DMUT_NO_RECHECK refuted-end  beat_park does not re-read active after setting beat_parked"
  "beat   -DMUT_READ_FIRST refuted-end  beat_park reads active before setting beat_parked"
  "mpsc   -DP=2,-DK=2         ok       MPSC queue: 2 producers x 2 nodes, the consumer"
  "mpsc   -DP=3,-DK=2         ok       MPSC queue: 3 producers x 2 nodes"
  "mpsc   -DMUT_NO_STUB_CHECK refuted  pop hands out the last node without re-inserting the stub"
)
# MODEL_LONG=1 adds the larger bounds (minutes each)
if [ "${MODEL_LONG:-0}" = 1 ]; then
    cases+=("lazy   -DG=2,-DM=2,-DR=1   ok       lazy sleep/wake: 2 groups of 2 workers, a root, stop"
            "lazy   -DG=1,-DM=2,-DR=2   ok       lazy sleep/wake: 1 group of 2 workers, 2 roots, stop"
            "deque  -DN=5               ok       split deque, 5 items"
            "force  -DLIVE,-DN=4        ok       forced publication without the cursor, 4 items (24 M states)"
            "force  -DLIVE,-DLOWER,-DN=4 ok      the deque whose bottom never jumps, 4 items (57 M states, 3 GB)"
            "ring   -DN=5               ok       deque ring, 5 items")
fi
depth=${PAN_DEPTH:-1000000}
memlim=${PAN_MEMLIM:-4096}
only=${1:-}
for c in "${cases[@]}"; do
    read -r model defs expect what <<< "$c"
    if [ -n "$only" ] && ! grep -qE -- "$only" <<< "$model $defs"; then
        continue
    fi
    defs=${defs//,/ }
    d=$tmp/$model$(echo "$defs" | tr -dc 'A-Za-z0-9')
    mkdir -p "$d"
    cp "models/$model.pml" "$d/"
    start=$(date +%s.%N)
    rc=0
    if ! (cd "$d" && spin -a $defs "$model.pml" >spin.log 2>&1); then
        rc=spin
    elif ! (cd "$d" && gcc -O2 -DSAFETY -DCOLLAPSE -DMEMLIM="$memlim" -o pan pan.c 2>>spin.log); then
        rc=gcc
    else
        (cd "$d" && ./pan -m"$depth" >pan.log 2>&1) || rc=$?
    fi
    errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$d/pan.log" 2>/dev/null | head -1)
    # the first error pan reports: "pan:1: assertion violated ...", "pan:1: invalid end state ..."
    found=$(grep -m1 -E "^pan:[0-9]+: " "$d/pan.log" 2>/dev/null | sed 's/^pan:[0-9]*: *//; s/ (at depth.*//')
    case $found in
        "assertion violated"*) kind=refuted ;;
        "invalid end state"*) kind=refuted-end ;;
        *) kind="other" ;;
    esac
    states=$(sed -n 's/^ *\([0-9e+.]*\) states, stored.*/\1/p' "$d/pan.log" 2>/dev/null | head -1)
    reached=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' "$d/pan.log" 2>/dev/null | head -1)
    cut=""
    grep -q "max search depth too small" "$d/pan.log" 2>/dev/null &&
        cut="the search hit its depth bound (max search depth too small): raise PAN_DEPTH (now $depth)"
    grep -q "reached -DMEMLIM bound" "$d/pan.log" 2>/dev/null &&
        cut="${cut:+$cut; }the search hit its memory bound (reached -DMEMLIM): raise PAN_MEMLIM (now $memlim MB)"
    [ -z "$cut" ] && grep -q "Search not completed" "$d/pan.log" 2>/dev/null && [ "${errors:-0}" = 0 ] &&
        cut="pan says the search was not completed"
    t=$(echo "$(date +%s.%N) - $start" | bc)
    if [ "$rc" != 0 ] || [ -z "$errors" ]; then
        case $rc in
            spin) why="spin refused the model" ;; gcc) why="pan.c did not compile" ;;
            0) why="pan printed no 'errors:' line" ;; *) why="pan exited with status $rc" ;;
        esac
        echo "FAIL $model $defs: no verdict ($what): $why"
        sed 's/^/  /' "$d/spin.log" "$d/pan.log" 2>/dev/null | tail -5
        fail=$((fail + 1))
    elif [ "$expect" != ok ] && [ "$errors" != 0 ] && [ "$kind" = "$expect" ]; then
        printf "ok %s %s: refuted as it must be, %s (%s states, depth %s, %.2f s): %s\n" "$model" "$defs" "$found" "$states" "$reached" "$t" "$what"
        pass=$((pass + 1))
    elif [ "$expect" != ok ] && [ "$errors" != 0 ]; then
        echo "FAIL $model $defs: expected $expect ($([ "$expect" = refuted ] && echo "an assertion violated" || echo "an invalid end state")), SPIN found: ${found:-an error it did not name} ($what)"
        fail=$((fail + 1))
    elif [ "$expect" = ok ] && [ "$errors" = 0 ] && [ -z "$cut" ]; then
        printf "ok %s %s: verified (%s states, depth %s, %.2f s): %s\n" "$model" "$defs" "$states" "$reached" "$t" "$what"
        pass=$((pass + 1))
    elif [ "$errors" = 0 ] && [ -n "$cut" ]; then
        echo "FAIL $model $defs: $([ "$expect" = ok ] && echo "not verified" || echo "no counterexample"), and the search is incomplete: $cut ($states states, depth $reached; $what)"
        fail=$((fail + 1))
    else
        echo "FAIL $model $defs: expected $expect, SPIN says errors: $errors ($what)"
        grep -m2 "assertion violated\|invalid end" "$d/pan.log" | sed 's/^/  /'
        fail=$((fail + 1))
    fi
done
[ "$fail" = 0 ] && rm -rf "$tmp"
[ $((pass + fail)) -gt 0 ] || { echo "FAIL no model case matches '$only'"; fail=1; }
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
