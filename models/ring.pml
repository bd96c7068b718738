/* ring.pml — the split deque's buffer in runtime/deque.c: wrap-around and growth under
 * steals, with the publication's and the growth's release stores, model-checked with SPIN
 * (make check-model).  (models/deque.pml checks the pops and reclaim's fence and CAS race
 * under TSO; this one the ring buffer under a weaker memory model.)
 *
 * The owner pushes N items into a ring of CAP0 slots (push_slow_begin: if bottom - top
 * reaches the capacity, grow: a buffer twice as big, the live slots [top, bottom) copied, the
 * new buffer's pointer stored with release; else the index wraps to the buffer's start),
 * writes each item into its slot, and publishes on a thief's request (publish: split_pub
 * stored with release), then publishes the rest.  THIEVES thieves: load top, split_pub, the
 * buffer pointer (dq_buf, acquire), the slot, then CAS top.  Old buffers stay allocated (as
 * in deque.c, freed at pool destruction), so a thief may read one.
 *
 * Memory model: weaker than TSO.  The owner's stores (slots, dq_buf, split_pub) wait in a
 * store buffer and become visible in any order (ARM, POWER); a release store first waits
 * until the owner's earlier stores are visible; the owner reads its own pending stores.
 * Thieves' loads are in program order.  Properties: every item is taken exactly once, and
 * what a thief read from the slot it won is that item (not a stale or unwritten slot).
 * Mutations that SPIN must refute: -DMUT_RELAXED_PUBLISH (split_pub stored relaxed: a thief
 * sees a slot published before the item in it), -DMUT_RELAXED_GROW (dq_buf stored relaxed:
 * a thief reads the new buffer before the copies in it).  -DREACH_GROW and -DREACH_WRAP assert
 * that no push grows the buffer, or wraps around it: SPIN must refute both (both happen). */

#ifndef N
#define N 4
#endif
#ifndef THIEVES
#define THIEVES 2
#endif
#define CAP0 2
#define NBUF 3               /* capacities 2, 4, 8: room for N <= 8 */
#define SLOTS 8
#define L_BUF (NBUF * SLOTS) /* location of dq_buf */
#define L_SPLIT (L_BUF + 1)  /* location of split_pub */
#define NLOC (L_SPLIT + 1)

byte mem[NLOC];              /* slot contents: item + 1 (0: never written); dq_buf; split_pub */
bool pend[NLOC];
byte pval[NLOC];
byte npend = 0;
byte top = 0;
bool request = 0;
byte taken[N];
byte ntaken = 0;
bool owner_done = 0;


inline store(l, x) {
    atomic { if :: !pend[l] -> npend++ :: else fi; pend[l] = 1; pval[l] = x }
}
inline own_load(l, r) { atomic { if :: pend[l] -> r = pval[l] :: else -> r = mem[l] fi } }
#define SLOT(b, i) ((b) * SLOTS + ((i) & ((CAP0 << (b)) - 1)))

active proctype flusher() { /* the owner's stores reach memory in any order, at any time */
    byte k;
end:
    do
    :: atomic {
           npend > 0 -> select(k : 0 .. NLOC - 1);
           if
           :: pend[k] -> mem[k] = pval[k]; pend[k] = 0; npend--
           :: else
           fi;
           k = 0
       }
    od
}

active proctype owner() {
    byte bottom = 0, split = 0, cur = 0, t, x, v;
    do
    :: bottom < N ->
        /* push_slow_begin: room for slot `bottom` */
        t = top;                                            /* acquire load of top */
        if
        :: bottom - t >= (CAP0 << cur) ->                   /* grow(w, t, bottom) */
#ifdef REACH_GROW
            assert(0);                                      /* (reachability check) */
#endif
            x = t;
            do
            :: x < bottom -> own_load(SLOT(cur, x), v); store(SLOT(cur + 1, x), v); x++
            :: else -> break
            od;
            cur++;
#ifndef MUT_RELAXED_GROW
            (npend == 0);                                   /* release: the copies first */
#endif
            store(L_BUF, cur)                               /* dq_buf = the new buffer */
        :: else                                             /* (or wrap to the start) */
        fi;
#ifdef REACH_WRAP
        assert(bottom < (CAP0 << cur));                     /* (reachability check) */
#endif
        store(SLOT(cur, bottom), bottom + 1);               /* the item into its slot */
        bottom++;
        if
        :: request ->                                       /* push_slow_end: asked */
            request = 0;
            split++;
#ifndef MUT_RELAXED_PUBLISH
            (npend == 0);                                   /* release store of split_pub */
#endif
            store(L_SPLIT, split)
        :: else
        fi
    :: else -> break
    od;
    /* the rest made public (in deque.c the owner pops them back; deque.pml checks that) */
    (npend == 0);
    store(L_SPLIT, N);
    owner_done = 1
}

active [THIEVES] proctype thief() {
    byte t, s, b, c;
    do
    :: ntaken == N -> break
    :: else ->
        b = 0; c = 0;
        t = top;                                            /* acquire load of top */
        s = mem[L_SPLIT];                                   /* (fence) acquire load of split_pub */
        if
        :: t >= s -> request = 1                            /* nothing public: ask */
        :: else ->
            b = mem[L_BUF];                                 /* acquire load of dq_buf */
            c = mem[SLOT(b, t)];                            /* copy slot t */
            atomic {
                if
                :: top == t ->                              /* CAS top t -> t + 1: ours */
                    top = t + 1;
                    assert(c == t + 1);                     /* the item itself */
                    taken[t]++;
                    assert(taken[t] == 1);
                    ntaken++
                :: else                                     /* FK__STEAL_LOST */
                fi
            }
        fi
    od
}
