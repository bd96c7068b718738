/* force.pml — forced publication (runtime/deque.c, fk__force_publish), model-checked with
 * SPIN (make check-model), as it is and as a deque without the cursor's stores would do it.
 *
 * One owner pushes N items and pops them back, in every order a nested fork-join can make
 * (any interleaving of pushes and pops, the last pushed popped first).  One thief forces
 * publications while the owner runs: under the owner's deque lock it moves split up by half
 * of the private slots, runs membarrier(), then finds how many of those are still there, and
 * publishes them.  One thief steals what is public (load top, fence, load split_pub, copy the
 * slot, CAS top).  The owner takes back a public slot through the slow path, under the lock
 * (take_newest / reclaim, as models/deque.pml).  The property: every item is taken exactly
 * once, and a thief never takes a slot whose item it cannot see.
 *
 * The two protocols:
 *   (default) as deque.c's ring does it (every build but child-native): the owner stores its
 *     cursor at every push and pop, the pop before it reads split; after membarrier() the
 *     forcing thief reads the cursor.
 *   -DLIVE   no cursor in memory (it stays in a register): each slot says whether it is live.
 *     The push writes the item, then the mark (deque.c's FK_LIVE: the record's link, written
 *     last); the pop clears the mark, then reads split.  After membarrier() the forcing thief
 *     scans the marks from split up to the first clear one: the owner's bottom.  A stealing
 *     thief that copied a slot whose mark is clear gives up (FK__STEAL_LOST): the owner is
 *     taking it back, and a copy without its link cannot report its end.  The owner's slow
 *     path gets the bottom from its register and hands the new one back.  (Slots above the
 *     bottom are clear: they were popped, or never pushed in this model, which has no wrap.)
 *
 * Memory model: x86-TSO for the owner.  Its stores (items, marks, cursor, split_pub) go through
 * a FIFO store buffer of SB = 4 entries (a fifth store waits until the flusher commits one: a
 * bound on how far the owner's stores can lag, which one push (2 stores) and two pops fill) that a
 * flusher drains at any time, and that
 * its fences, its locked instructions and a thief's membarrier() drain (the IPI runs a full
 * fence on the owner's CPU, between two of its instructions).  The owner reads its own
 * buffered stores.  The thieves' stores are under the lock or locked instructions
 * (sequentially consistent here).  Simplified: the owner's unlock drains its buffer before it
 * releases the lock (the real dq_unlock is a plain release store); a thief that takes the lock
 * next sees the owner's earlier stores either way (TSO keeps them in order), so only the
 * moments at which those stores reach the stealer are fewer.
 *
 *   -DLIVE -DLOWER  the same, on a deque whose bottom never jumps (FK_LIVE, deque.c: a task
 *     holds its slot's address in a register across its children, and finds the deque where
 *     it left it).  A pop whose slow path finds its slot stolen leaves the cursor there (or
 *     lower: a join gives up the older records of its scope, stolen first), below top, or
 *     at the slot it won in the race for the last public one; the slow path then clears the
 *     marks the thieves left in [cursor, top), makes split and split_pub the cursor, and
 *     lowers top to it with a CAS that also moves a tag packed with top (a thief's CAS
 *     compares both): a thief that read top before the lowering cannot succeed when top
 *     comes back up to what it read.  Slots are then reused below where they were stolen,
 *     which the other protocols never do.
 *
 * Mutations (check-models.sh requires SPIN to refute each):
 *   -DMUT_NO_MEMBARRIER  the forcing thief reads without membarrier() (both protocols)
 *   -DMUT_LOAD_FIRST     the pop reads split before it stores the cursor (as built) or
 *                        clears the mark (LIVE): what fk__pop_record's signal fence forbids
 *   -DMUT_MARK_FIRST     LIVE: the push writes the mark before the item
 *   -DMUT_NO_CLEAR       LIVE: the pop leaves the mark set
 *   -DMUT_NO_TAG         LOWER: top is lowered and CASed without its tag (ABA)
 *   -DMUT_STALE_MARKS    LOWER: the lowering leaves the stolen slots' marks set
 *   -DMUT_LOWER_FIRST    LOWER: top lowered before split_pub (a thief sees the new slot public) */

#if defined(LOWER) && !defined(LIVE)
#error "LOWER is a variant of LIVE: define both"
#endif

#ifndef N
#define N 3
#endif

/* addresses of the owner's buffered stores */
#define A_ITEM(x) (x)
#define A_LIVE(x) (N + (x))
#define A_CUR (2 * N)
#define A_PUB (2 * N + 1)

byte item[N];      /* a slot's item: 1..N (0: never written) */
bool live[N];      /* LIVE: the slot's mark (its record's link) */
byte cur = 0;      /* default: the owner's cursor, as thieves read it */
byte split = 0;    /* the owner's split index (under the lock) */
byte splitp = 0;   /* the fast pop's bound (hot->splitp) */
byte split_pub = 0;
byte top = 0;
byte tag = 0;       /* LOWER: moved with top by the owner's lowering (one 64-bit word) */
bool lock = 0;     /* dq_lock */
byte taken[N + 1]; /* by item */
bool owner_done = 0;
byte thieves_done = 0;

/* the owner's store buffer */
#define SB 4
#if SB != 4
#error "sb_commit_one and load_own_item are written for 4 entries"
#endif
byte sb_a[SB];
byte sb_v[SB];
byte sb_n = 0;

inline commit(a, v) {
    if
    :: a < N -> item[a] = v
    :: a >= N && a < 2 * N -> live[a - N] = v
    :: a == A_CUR -> cur = v
    :: a == A_PUB -> split_pub = v
    fi
}

inline sb_commit_one() {
    commit(sb_a[0], sb_v[0]);
    sb_a[0] = sb_a[1]; sb_v[0] = sb_v[1];
    sb_a[1] = sb_a[2]; sb_v[1] = sb_v[2];
    sb_a[2] = sb_a[3]; sb_v[2] = sb_v[3];
    sb_n--
}

inline store(a, v) {
    atomic { sb_n < SB -> sb_a[sb_n] = a; sb_v[sb_n] = v; sb_n++ }
}

inline drain() {
    atomic { do :: sb_n > 0 -> sb_commit_one() :: else -> break od }
}

/* the owner's load of an item it stored: the newest buffered store to it, else memory */
inline load_own_item(x, r) {
    atomic {
        r = item[x];
        if :: sb_n > 0 && sb_a[0] == A_ITEM(x) -> r = sb_v[0] :: else -> skip fi;
        if :: sb_n > 1 && sb_a[1] == A_ITEM(x) -> r = sb_v[1] :: else -> skip fi;
        if :: sb_n > 2 && sb_a[2] == A_ITEM(x) -> r = sb_v[2] :: else -> skip fi;
        if :: sb_n > 3 && sb_a[3] == A_ITEM(x) -> r = sb_v[3] :: else -> skip fi
    }
}

active proctype flusher() {
end:
    do
    :: atomic { sb_n > 0 -> sb_commit_one() }
    od
}

inline owner_take(x) {
    load_own_item(x, c);
    assert(c != 0);
    assert(taken[c] == 0);                         /* (at once, on every path) */
    taken[c]++
}

active proctype owner() {
    byte b = 0, floor = 0, pushed = 0, i, t, c, sp, g, x;
    bool won;
    do
    :: pushed < N ->                               /* a fork: the push at the cursor b */
#if defined(LIVE) && defined(MUT_MARK_FIRST)
        store(A_LIVE(b), 1);
        store(A_ITEM(b), pushed + 1);
#elif defined(LIVE)
        store(A_ITEM(b), pushed + 1);              /* the record's words ... */
        store(A_LIVE(b), 1);                       /* ... its link last */
#else
        store(A_ITEM(b), pushed + 1);
        store(A_CUR, b + 1);                       /* fk__hstore_release(&h->cur, s + 1) */
#endif
        b++;
        pushed++
    :: b > floor ->                                /* a join: the pop of the newest slot */
        i = b - 1;
#ifdef MUT_LOAD_FIRST
        sp = splitp;
#endif
#if defined(LIVE) && !defined(MUT_NO_CLEAR)
        store(A_LIVE(i), 0);                       /* the mark cleared ... */
#elif !defined(LIVE)
        store(A_CUR, i);                           /* the cursor stored ... */
#endif
#ifndef MUT_LOAD_FIRST
        sp = splitp;                               /* ... before split is read */
#endif
        if
        :: i >= sp ->                              /* private: the fast path */
            b = i;
            owner_take(i)
        :: else ->                                 /* the slow path, under dq_lock */
            atomic { lock == 0 -> lock = 1 };
            drain();                               /* (the lock's xchg is locked) */
            if
            :: i >= split ->                       /* take_newest: private after all */
                splitp = split;
                b = i;
                owner_take(i)
            :: else ->                             /* reclaim(w, i) */
                store(A_PUB, i);
                drain();                           /* atomic_thread_fence(seq_cst) */
                atomic { t = top; g = tag };
                if
                :: t < i ->                        /* slots [t, i) stay public; i is ours */
                    split = i;
                    splitp = i;
                    b = i;
                    owner_take(i)
                :: else ->
                    won = 0;
                    if
                    :: t == i ->                   /* the last public slot: race the thieves */
                        atomic {
                            drain();
                            if
                            :: top == i && tag == g -> top = i + 1; owner_take(i); won = 1
                            :: else -> skip
                            fi
                        }
                    :: else -> skip
                    fi;
#ifdef LOWER
                    assert(top > i);               /* stolen, or taken by the CAS above */
                    if                             /* the owner's cursor, where top is lowered (deque.c) */
                    :: won -> b = i                /* it took slot i: its child runs from i */
                    :: !won -> b = i               /* the scope's only record was stolen */
                    :: !won && i > floor + 1 -> b = i - 1 /* one older record of its scope */
                    :: !won -> b = floor           /* all older ones: stolen first */
                    fi;
                    x = b;                         /* the thieves' marks in [b, top) cleared */
                    do
                    :: x < top ->
#ifndef MUT_STALE_MARKS
                        store(A_LIVE(x), 0);
#endif
                        x++
                    :: else -> break
                    od;
                    split = b;
                    splitp = b;
#ifdef MUT_LOWER_FIRST
                    atomic { drain(); top = b; tag++ };
                    store(A_PUB, b)
#else
                    store(A_PUB, b);               /* nothing public: split_pub = b */
                    atomic {                       /* CAS (tag, top) -> (tag + 1, b): locked */
                        drain();
                        top = b;
                        tag++
                    }
#endif
#else
                    split = i + 1;                 /* empty now: top == split == bottom */
                    splitp = i + 1;
                    store(A_PUB, i + 1);
#ifndef LIVE
                    store(A_CUR, i + 1);           /* set_bottom(i + 1) */
#endif
                    b = i + 1;                     /* (LIVE: the slow path hands it back) */
                    floor = i + 1                  /* the older slots were stolen first */
#endif
                fi
            fi;
            drain();
            lock = 0
        fi
    :: pushed == N && b == floor -> break
    od;
    drain();
    owner_done = 1
}

/* fk__force_publish, while the owner runs */
active proctype forcer() {
    byte s, k, n, x, end;
    do
    :: owner_done -> break
    :: atomic { lock == 0 -> lock = 1 };           /* dq_trylock */
        s = split;
#ifdef LIVE
        n = 0;                                     /* a hint: the marks from split up */
        x = s;
        do
        :: x < N ->
            if
            :: live[x] -> n++; x++
            :: else -> break
            fi
        :: else -> break
        od;
#else
        n = (cur > s -> cur - s : 0);              /* a hint: the cursor */
#endif
        if
        :: n > 0 ->
            k = (n + 1) / 2;
            split = s + k;
            splitp = s + k;                        /* set_split(v, s + k) */
#ifndef MUT_NO_MEMBARRIER
            drain();                               /* membarrier(): a fence on the owner's CPU */
#endif
#ifdef LIVE
            end = s;                               /* the live slots of [s, s + k) */
            do
            :: end < s + k ->
                if
                :: live[end] -> end++
                :: else -> break
                fi
            :: else -> break
            od;
#else
            end = (cur < s + k -> cur : s + k);    /* min(s + k, the cursor) */
#endif
            if
            :: end > s ->
                split = end;
                splitp = end;
                split_pub = end                    /* published */
            :: else ->
                split = s;
                splitp = s
            fi
        :: else -> skip
        fi;
        lock = 0
    od;
    thieves_done++
}

/* fk__steal */
active proctype stealer() {
    byte t, s, c, g;
    bool m;
    do
    :: atomic { t = top; g = tag };
       s = split_pub;                              /* (after the seq_cst fence) */
       if
       :: t >= s ->
            if
            :: owner_done -> break
            :: else -> skip
            fi
       :: else ->
            c = item[t];                           /* copy_slot */
            m = live[t];
            atomic {
                if
#ifdef LIVE
                :: !m -> skip                      /* no mark: the owner is taking it back */
#if defined(LOWER) && !defined(MUT_NO_TAG)
                :: m && (top != t || tag != g) -> skip   /* FK__STEAL_LOST */
                :: m && top == t && tag == g ->    /* CAS (tag, top) -> (tag, top + 1) */
#else
                :: m && top != t -> skip           /* FK__STEAL_LOST */
                :: m && top == t ->                /* CAS top t -> t + 1 */
#endif
#else
                :: top != t -> skip                /* FK__STEAL_LOST */
                :: top == t ->                     /* CAS top t -> t + 1 */
#endif
                    top = t + 1;
                    assert(c != 0);                /* a slot published before its item */
                    assert(taken[c] == 0);         /* taken twice (at once, on every path) */
                    taken[c]++
                fi
            }
       fi
    od;
    thieves_done++
}

active proctype check() {
    byte k;
    (owner_done && thieves_done == 2);
    for (k : 1 .. N) {
        assert(taken[k] == 1)
    }
}
