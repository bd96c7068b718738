/* deque.pml — the split deque of runtime/deque.c, model-checked with SPIN (make check-model).
 *
 * One owner pushes N items, answering a thief's request at each push (publish the oldest
 * half of the private slots, at least one) and at each pop (answer_at_pop: the oldest half
 * of those below the slot taken), then pops everything back: private slots on
 * the fast path, public ones through reclaim (Chase-Lev's pop: store split_pub, seq_cst fence,
 * load top, a CAS race for the last one).  THIEVES thieves steal (load top, fence, load
 * split_pub, CAS top) and ask for work when nothing is public.  The property: every item is
 * taken exactly once.
 *
 * Memory model: x86-TSO for the owner's stores to split_pub (the only shared variable the
 * owner stores to without a locked instruction): a FIFO store buffer of one entry per
 * pending store, drained by a flusher at any time, by the owner's fence and by its CAS
 * (locked instructions drain the buffer); the owner reads its own buffered value.  The
 * thieves' shared writes are CASes on top (locked) and the request flag (a hint: any value
 * is safe).  -DSC: no store buffer (sequential consistency).
 *
 * Mutations (make check-model requires SPIN to find an item taken twice in each: a model
 * that cannot fail proves nothing): -DNO_FENCE removes reclaim's fence (deque.c, reclaim_head:
 * atomic_thread_fence(memory_order_seq_cst)) — found under TSO, harmless under -DSC, which is
 * why x86 stress tests and TSan never saw it; -DMUT_NO_CAS takes the last public slot without
 * the CAS race on top (reclaim_head's t == i case).  (Publishing the slot being taken back, in
 * answer_at_pop, is not such a mutation: take_newest then reclaims it through the public
 * path; the model verifies that too, so "below i" there is for speed, not safety.)
 *
 * -DBEAT: heartbeat promotion (fk_pool_opts.promote = FK_PROMOTE_BEAT).  Thieves never ask;
 * a heartbeat process marks the owner at any moment (fk__deque_beat: the same request a thief
 * makes, also while slots are public or the owner is inside a pop), and each answer publishes
 * one slot, the oldest private (request_count: 1).  The mutations above are refuted under it
 * too (check-models.sh).
 *
 * Each step names the C it models: see the comments.  Modelled elsewhere: growth and wrap of
 * the buffer (ring.pml), forced publication (membarrier(): force.pml).  Not modelled: the
 * fiber pop's ownership test. */

#ifndef N
#define N 3
#endif
#ifndef THIEVES
#define THIEVES 2
#endif

/* How many of n private slots an answer publishes (deque.c: request_count) */
#ifdef BEAT
#define COUNT(n) 1
#else
#define COUNT(n) (((n) + 1) / 2)
#endif

byte top = 0;       /* fk_worker.top: thieves' CAS, reclaim's CAS */
byte split_pub = 0; /* fk_worker.split_pub: owner's stores, thieves' acquire loads */
bool request = 0;   /* a thief's request: limit = NULL and splitp = SPLIT_ASK */
byte taken[N];
bool owner_done = 0;
byte thieves_done = 0;

/* the owner's store buffer (x86-TSO), FIFO of pending stores to split_pub */
#define SB 3
byte sb[SB];
byte sb_n = 0;

inline sb_commit_one() {
    split_pub = sb[0];
    sb[0] = sb[1];
    sb[1] = sb[2];
    sb_n--
}

inline store_split_pub(v) {
#ifdef SC
    split_pub = v
#else
    atomic { sb_n < SB -> sb[sb_n] = v; sb_n++ } /* (a full buffer waits for the flusher) */
#endif
}

inline load_own_split_pub(r) { /* (the owner never needs to; kept for completeness) */
    atomic { if :: sb_n > 0 -> r = sb[sb_n - 1] :: else -> r = split_pub fi }
}

inline drain() { /* a fence, or a locked instruction */
    atomic { do :: sb_n > 0 -> sb_commit_one() :: else -> break od }
}

active proctype flusher() {
end:
    do
    :: atomic { sb_n > 0 -> sb_commit_one() }
    od
}

active proctype owner() {
    byte bottom = 0, split = 0, i, t, n;
    /* ---- push N items (fk__push_record; push_slow_end publishes when asked) ---- */
    do
    :: bottom < N ->
        bottom++;                                  /* the slot written, cur + 1 */
        if
        :: request ->                              /* push_slow_end: lim == NULL */
            request = 0;
            split = split + COUNT(bottom - split);  /* publish(w, request_count(n)): the oldest half, or 1 */
            store_split_pub(split)                 /* release store of split_pub */
        :: else -> skip
        fi
    :: else -> break
    od;
    /* ---- pop everything back ---- */
    do
    :: bottom == 0 -> break
    :: bottom > 0 ->
        i = bottom - 1;
        bottom = i;                                /* fk__pop_record: cur - 1, stored before the test */
        if
        :: i >= split && !request ->               /* fast path: private (splitp not SPLIT_ASK) */
            taken[i]++
        :: else ->                                 /* fk__pop_slow, under dq_lock */
            t = top;
            if
            :: i + 1 == t ->                       /* undo_empty_pop */
                bottom = i + 1;
                break
            :: else -> skip
            fi;
            if                                     /* answer_at_pop: publish below i */
            :: request && i > split ->
                request = 0;
                split = split + COUNT(i - split);  /* the oldest half below i (at least one), or 1 */
                store_split_pub(split)
            :: else -> skip
            fi;
            if
            :: i >= split ->                       /* take_newest: private */
                taken[i]++
            :: else ->                             /* reclaim(w, i) */
                store_split_pub(i);
#ifndef NO_FENCE
                drain();                           /* atomic_thread_fence(seq_cst) */
#endif
                t = top;
                if
                :: t < i ->                        /* slots [t, i) stay public; i is ours */
                    split = i;
                    taken[i]++
                :: else ->
                    if
                    :: t == i ->                   /* the last public slot: race the thieves */
#ifdef MUT_NO_CAS
                        top = i + 1;               /* mutation: takes it without the race */
                        taken[i]++
#else
                        atomic {
                            drain();               /* (a locked CAS drains the buffer) */
                            if
                            :: top == i -> top = i + 1; taken[i]++
                            :: else -> skip
                            fi
                        }
#endif
                    :: else -> skip
                    fi;
                    split = i + 1;                 /* empty now */
                    bottom = i + 1;
                    store_split_pub(i + 1);
                    break
                fi
            fi
        fi
    od;
    drain();
    owner_done = 1
}

active [THIEVES] proctype thief() {
    byte t, s;
    do
    :: t = top;                                    /* acquire load of top */
       s = split_pub;                              /* (seq_cst fence; no stores pending) acquire load */
       if
       :: t >= s ->
            if
            :: owner_done -> break
#ifdef BEAT
            :: else -> skip                        /* under heartbeat promotion thieves never ask */
#else
            :: else -> request = 1                 /* ask: limit = NULL, splitp = SPLIT_ASK */
#endif
            fi
       :: else ->
            atomic {                               /* copy slot t, then CAS top t -> t + 1 */
                if
                :: top == t -> top = t + 1; taken[t]++
                :: else -> skip                    /* FK__STEAL_LOST */
                fi
            }
       fi
    od;
    thieves_done++
}

#ifdef BEAT
active proctype beat() {                           /* pool.c: beat_main -> fk__deque_beat -> ask_owner */
    do
    :: owner_done -> break
    :: request = 1
    od
}
#endif

active proctype check() {
    byte k;
    (owner_done && thieves_done == THIEVES);
    for (k : 0 .. N - 1) {
        assert(taken[k] == 1)
    }
}
