/* test_deque.c — the split deque and the submission queue, hammered by threads.
 *
 * One owner pushes bursts (long enough to force the buffer to grow) and pops some back;
 * thieves steal as fast as they can and, by finding the public part empty, keep asking the
 * owner to publish, and now and then force a publication (membarrier) while the owner pops.
 * Every item must be taken exactly once, by the owner or by one thief.  Built per stealing
 * mode (slots are frames or records).  Run under ThreadSanitizer by `make check-tsan`. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "runtime/worker.h"
#include "tests/testlib.h"

#define THIEVES 3

static fk_worker *owner;
static _Atomic int done, thieves_up;
static _Atomic uint32_t *taken;
static _Atomic uint64_t stolen_total, stolen_live, forced_total;

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void) { /* xorshift64, owner thread only */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void take(uint64_t id) { atomic_fetch_add_explicit(&taken[id], 1, memory_order_relaxed); }

#if FK_STEAL == FK_STEAL_CONT
static fk_frame *as_frame(uint64_t id) { return (fk_frame *)(uintptr_t)((id + 1) << 4); }
static uint64_t slot_id(fk__slot *s) {
    return ((uintptr_t)atomic_load_explicit(&s->frame, memory_order_relaxed) >> 4) - 1;
}
static void push(uint64_t id) { fk__push(as_frame(id)); }
/* Takes back the newest slot; *id (if id) is the item it held.  A frame's pop does not hand
 * the frame back (its caller is that frame), so the item is read from the slot the pop took:
 * index bottom - 1 before it, which stays as it is until the next push. */
static int pop(uint64_t *id, uint64_t older) {
    (void)older;
    uint64_t i = fk__deque_bottom(owner) - 1;
    if (!fk__pop_fast() && !fk__pop_settle(owner))
        return 0;
    if (id)
        *id = slot_id(&owner->hot->buf[i & owner->hot->mask]);
    return 1;
}
#elif FK_LIVE
/* The live mark (child-native): the owner's cursor is this test's, as it is a task's. */
static fk__slot *lcur;
static void dummy_thunk(const fk__record *r, fk__record *cur) { (void)r, (void)cur; }
static uint64_t slot_id(fk__slot *s) { return atomic_load_explicit(&s->args[0], memory_order_relaxed); }
static void push(uint64_t id) { fk__push_live(FK__H, lcur++, dummy_thunk, 1, NULL, &id, 1); } /* (a link: the mark) */
/* `older`: the owner's records below the newest (a join's scope).  A failed pop leaves the
 * cursor at the oldest of them: every one was stolen first. */
static int pop(uint64_t *id, uint64_t older) {
    const fk__record *r = fk__pop_live(FK__H, lcur - 1, (uint32_t)older);
    if (!r) {
        lcur -= older + 1;
        return 0;
    }
    lcur--;
    if (id)
        *id = slot_id((fk__slot *)r);
    return 1;
}
#else
static void dummy_thunk(const fk__record *r) { (void)r; }
static uint64_t slot_id(fk__slot *s) { return atomic_load_explicit(&s->args[0], memory_order_relaxed); }
static void push(uint64_t id) { fk__push_record(dummy_thunk, 0, NULL, &id, 1); }
static int pop(uint64_t *id, uint64_t older) { /* *id: the item of the record the pop returned */
    (void)older;
    const fk__record *r = fk__pop_record();
    if (r && id)
        *id = slot_id((fk__slot *)r);
    return r != NULL;
}
#endif

/* Steals; after 64 failures in a row forces a publication (if the owner holds private
 * slots), as an idle worker does when its requests go unanswered. */
static void *thief(void *arg) {
    (void)arg;
    uint64_t n = 0, forced = 0;
    unsigned fails = 0;
    atomic_fetch_add(&thieves_up, 1);
    while (!atomic_load_explicit(&done, memory_order_acquire)) {
        fk__slot s;
        if (fk__steal(owner, &s) == FK__STEAL_OK) {
            take(slot_id(&s));
            n++;
            atomic_fetch_add_explicit(&stolen_live, 1, memory_order_relaxed);
            fails = 0;
        } else if (++fails >= 64) {
            fails = 0;
            if (fk__deque_has_private(owner) && fk__force_publish(owner, NULL))
                forced++;
        }
    }
    atomic_fetch_add(&stolen_total, n);
    atomic_fetch_add(&forced_total, forced);
    return NULL;
}

static void start_thieves(pthread_t *th) {
    atomic_store(&done, 0);
    atomic_store(&thieves_up, 0);
    atomic_store(&stolen_total, 0);
    atomic_store(&stolen_live, 0);
    atomic_store(&forced_total, 0);
    for (int i = 0; i < THIEVES; i++)
        ASSERT_EQ(pthread_create(&th[i], NULL, thief, NULL), 0);
    while (atomic_load(&thieves_up) < THIEVES) /* start together, whatever else the machine runs */
        sched_yield();
}

static void stop_thieves(pthread_t *th) {
    atomic_store_explicit(&done, 1, memory_order_release);
    for (int i = 0; i < THIEVES; i++)
        pthread_join(th[i], NULL);
}

static fk_worker *make_owner(void) {
    fk_worker *w = aligned_alloc(64, (sizeof *w + 63) & ~(size_t)63);
    ASSERT(w);
    memset(w, 0, sizeof *w);
    w->hot = FK__H; /* this thread owns the deque: its fast path is this thread's fk__tls */
    FK__H->w = w;
    ASSERT_EQ(fk__deque_init(w), 0);
#if FK_LIVE
    lcur = w->hot->buf;
#endif
    return w;
}

/* ids[] mirrors what the owner believes is still in its deque, newest last.  The owner
 * pushes at least `total` items, for at least 0.25 s (pausing a little between bursts, so
 * that thieves interleave with it), and goes on (for at most 60 s) until thieves have stolen
 * some: on a loaded machine the thieves may not get a CPU for a while. */
/* The records below the newest that a pop's scope holds: any number under FK_LIVE, where a
 * failed pop lowers the bottom to the scope's oldest; on the ring every one (a failed pop
 * leaves the deque empty: every older slot was stolen first; the stress then checks that
 * one more pop, of an empty deque while thieves run, takes nothing). */
static uint64_t scope_older(uint64_t nids) { return FK_LIVE ? rnd() % nids : nids - 1; }

static void stress(uint64_t total, unsigned max_burst) {
    owner = make_owner();
    uint64_t cap = total * 4;
    taken = calloc(cap, sizeof *taken);
    ASSERT(taken);
    uint64_t *ids = malloc(cap * sizeof *ids), nids = 0, next = 0, popped = 0, got;
    pthread_t th[THIEVES];
    start_thieves(th);
    double t0 = test_now();
    while (next < cap && (next < total || test_now() - t0 < 0.25 ||
                          (atomic_load(&stolen_live) == 0 && test_now() - t0 < 60))) {
        for (unsigned k = rnd() % 64; k; k--)
            fk__cpu_pause();
        uint64_t burst = 1 + rnd() % max_burst;
        for (uint64_t k = 0; k < burst && next < cap; k++) {
            push(next);
            ids[nids++] = next++;
        }
        uint64_t pops = rnd() % (burst + 1);
        for (uint64_t k = 0; k < pops && nids; k++) {
            /* (a join's scope: the newest item and `older` below it; a failed pop gives them
             * all up, as stolen; FK_LIVE lowers top to the scope's oldest) */
            uint64_t older = scope_older(nids);
            if (pop(&got, older)) { /* the newest item the owner has not seen go */
                ASSERT_MSG(got == ids[nids - 1], "popped item %llu, expected %llu", (unsigned long long)got,
                           (unsigned long long)ids[nids - 1]);
                take(got);
                nids--;
                popped++;
            } else {
                nids -= older + 1; /* a failed pop: everything older was stolen too */
                ASSERT_MSG(FK_LIVE || !pop(&got, 0), "a failed pop left item %llu in the deque",
                           (unsigned long long)got);
            }
        }
    }
    while (nids) {
        uint64_t older = scope_older(nids);
        if (pop(&got, older)) {
            ASSERT_MSG(got == ids[nids - 1], "popped item %llu, expected %llu", (unsigned long long)got,
                       (unsigned long long)ids[nids - 1]);
            take(got);
            nids--;
            popped++;
        } else {
            nids -= older + 1;
            ASSERT_MSG(FK_LIVE || !pop(&got, 0), "a failed pop left item %llu in the deque", (unsigned long long)got);
        }
    }
    stop_thieves(th);
    uint64_t stolen = atomic_load(&stolen_total);
    for (uint64_t id = 0; id < next; id++)
        ASSERT_MSG(atomic_load(&taken[id]) == 1, "item %llu taken %u times (popped %llu, stolen %llu)",
                   (unsigned long long)id, atomic_load(&taken[id]), (unsigned long long)popped,
                   (unsigned long long)stolen);
    ASSERT_EQ_U(popped + stolen, next);
    printf("  %llu items: %llu popped by the owner, %llu stolen (%llu forced publications), deque of %llu "
           "slots\n",
           (unsigned long long)next, (unsigned long long)popped, (unsigned long long)stolen,
           (unsigned long long)atomic_load(&forced_total), (unsigned long long)owner->dq_cur->cap);
    /* Growth under steals: certain with a small initial capacity (make check-small: 4 slots);
     * with 1024, thieves that ask all the time make every push publish, and they kept up even
     * with a first burst of 2,048 (seen: the deque never grew, 236,000 of 400,000 stolen). */
    if (FK_DEQUE_INITIAL <= 64 && !FK_LIVE) /* (FK_LIVE: one mapping, which never grows) */
        ASSERT_GT(owner->dq_cur->cap, FK_DEQUE_INITIAL);
    ASSERT_GT(stolen, 0);
    free(ids);
    free(taken);
    fk__deque_destroy(owner);
    free(owner);
}

/* An owner that pushes and then stops touching its deque (it runs a long leaf) still loses
 * its work to thieves: they force the publication.  Then it pops what is left; every item
 * once. */
TEST(deque_forced_publication) {
    ASSERT_MSG(fk__force_available(), "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) is unavailable: thieves cannot "
               "force an owner to publish, and the scheduler is not greedy on this kernel");
    for (int round = 0; round < 20; round++) {
        owner = make_owner();
        enum { N = 16 };
        taken = calloc(N, sizeof *taken);
        for (uint64_t id = 0; id < N; id++) /* before any thief asks: all private */
            push(id);
        pthread_t th[THIEVES];
        start_thieves(th);
        double t0 = test_now();
        while (atomic_load(&stolen_live) == 0 && test_now() - t0 < 10)
            sched_yield(); /* "a long leaf": no push, no pop */
        uint64_t got = atomic_load(&stolen_live);
        uint64_t popped = 0, item;
        for (uint64_t id = N; id-- > 0;) { /* the newest first: those the thieves left */
            if (!pop(&item, id))
                break;
            ASSERT_MSG(item == id, "round %d: popped item %llu, expected %llu", round, (unsigned long long)item,
                       (unsigned long long)id);
            take(item);
            popped++;
        }
        stop_thieves(th);
        ASSERT_MSG(got > 0, "round %d: nothing was stolen in 10 s from an owner that stopped with %d private slots",
                   round, N);
        uint64_t forced = atomic_load(&forced_total);
        ASSERT_MSG(forced > 0, "round %d: items were stolen but no publication was forced", round);
        for (uint64_t id = 0; id < N; id++)
            ASSERT_MSG(atomic_load(&taken[id]) == 1, "round %d: item %llu taken %u times", round,
                       (unsigned long long)id, atomic_load(&taken[id]));
        ASSERT_EQ_U(popped + atomic_load(&stolen_total), N);
        free(taken);
        fk__deque_destroy(owner);
        free(owner);
    }
}

TEST(deque_small_bursts) { stress(400000, 8); }
TEST(deque_long_bursts) { stress(1000000, 5000); }

/* Without thieves: LIFO order (each pop takes the item pushed last of those left, as the
 * popped slot itself says), growth, and nothing public. */
TEST(deque_owner_only) {
    owner = make_owner();
    taken = calloc(100000, sizeof *taken);
    for (uint64_t id = 0; id < 100000; id++)
        push(id);
    for (uint64_t want = 100000; want-- > 0;) {
        uint64_t got;
        ASSERT_MSG(pop(&got, want), "the pop of item %llu failed", (unsigned long long)want);
        ASSERT_MSG(got == want, "popped item %llu, expected %llu (the newest left)", (unsigned long long)got,
                   (unsigned long long)want);
        take(got);
    }
    for (uint64_t id = 0; id < 100000; id++)
        ASSERT_EQ(atomic_load(&taken[id]), 1);
#if FK_LIVE
    ASSERT(lcur == owner->hot->buf);
    ASSERT_EQ_U(atomic_load(&owner->top), 0);
#else
    ASSERT_EQ_U(fk__deque_bottom(owner), atomic_load(&owner->top));
#endif
    free(taken);
    fk__deque_destroy(owner);
    free(owner);
}

/* A pop from an empty deque takes nothing, even when the buffer's last slot (where index
 * 0 - 1 maps) still holds a record: one popped before, or, in a buffer that malloc handed
 * back, another pool's.  (Fibers pop deques they never pushed to: a join or counter wait
 * that moved to another worker.  Before the fix, 1-2% of the runs of 10,000 spawned tasks
 * on a second pool ran one stale record again.)  Every build's pop, and the fiber join's. */
#if !FK_LIVE /* (FK_LIVE: a task pops only the slots it pushed: deque_stolen_pop_lowers_top) */
TEST(deque_pop_empty_takes_nothing) {
    owner = make_owner();
    uint64_t n = owner->dq_cur->cap, got; /* fills the first buffer: its last slot is then written */
    for (int round = 0; round < 3; round++) {
        for (uint64_t id = 0; id < n; id++)
            push(id);
        for (uint64_t id = n; id-- > 0;) {
            ASSERT(pop(&got, id));
            ASSERT_EQ_U(got, id);
        }
        ASSERT_EQ_U(fk__deque_bottom(owner), 0);
        ASSERT_MSG(!pop(&got, 0), "round %d: a pop from the empty deque took something", round);
        ASSERT_EQ_U(fk__deque_bottom(owner), 0);
        ASSERT_EQ_U(atomic_load(&owner->top), 0);
#if FK_STACK == FK_STACK_FIBER
        ASSERT_MSG(fk__pop_record_of(0) == NULL, "round %d: a fiber's pop from the empty deque took a record",
                   round);
        ASSERT_EQ_U(fk__deque_bottom(owner), 0);
#endif
    }
    /* and the deque still works: LIFO after the failed pops */
    push(41);
    push(42);
    ASSERT(pop(&got, 0));
    ASSERT_EQ_U(got, 42);
    ASSERT(pop(&got, 1));
    ASSERT_EQ_U(got, 41);
    ASSERT(!pop(NULL, 0));
    fk__deque_destroy(owner);
    free(owner);
}
#endif

/* A thief's request is answered when the owner pops, not only when it pushes (Lace answers at
 * both spawn and sync): an owner that pushed a burst and now pops it back (a join running its
 * children one after another) hands the oldest half to an idle thief at its next pop.  Without it
 * the thief waited for the owner's next push, or for a forced publication (100 us later):
 * the M:N heat workload's fork-join per time step barely sped up.  Deterministic, one thread
 * playing both parts. */
TEST(deque_request_answered_at_pop) {
    owner = make_owner();
    for (uint64_t id = 0; id < 8; id++) /* all private: nobody asked yet */
        push(id);
    fk__slot s;
    uint64_t got;
    ASSERT_EQ(fk__steal(owner, &s), FK__STEAL_EMPTY); /* ... and asks */
    ASSERT(pop(&got, 6));                                 /* the owner takes back its newest */
    ASSERT_EQ_U(got, 7);
    ASSERT_MSG(fk__steal(owner, &s) == FK__STEAL_OK, "the owner popped without answering the thief's request");
    ASSERT_EQ_U(slot_id(&s), 0); /* the oldest */
    /* The answer was the oldest half of the 7 private slots below the one taken back: 0..3
     * (one per request made a thief come back for every slot). */
    for (uint64_t id = 1; id <= 3; id++) {
        ASSERT_MSG(fk__steal(owner, &s) == FK__STEAL_OK, "slot %llu was not published with the first answer",
                   (unsigned long long)id);
        ASSERT_EQ_U(slot_id(&s), id);
    }
    ASSERT_EQ(fk__steal(owner, &s), FK__STEAL_EMPTY); /* 4..6 stay private (and the thief asks again) */
    for (int k = 6; k >= 4; k--) /* the rest, newest first, every one once */
        ASSERT_MSG(pop(NULL, (uint64_t)k - 4) || fk__steal(owner, &s) == FK__STEAL_OK, "item %d lost", k);
#if !FK_LIVE /* (FK_LIVE: a task pops only what it pushed) */
    ASSERT(!pop(NULL, 0));
#endif
    ASSERT_EQ(fk__steal(owner, &s), FK__STEAL_EMPTY);
    fk__deque_destroy(owner);
    free(owner);
}

/* The hint that a victim holds private work (fk__deque_has_private, which decides whether a
 * hungry thief forces a publication, and whether a beat asks) is right after the buffer has
 * wrapped under private slots.  top = split = cap - 1 (each slot published by a forcing and
 * stolen), then two pushes: one in the buffer's last slot, one in its first (the next lap).
 * split's slot now lies above the cursor; the hint said "nothing" and, under heartbeat
 * promotion, an owner in a long leaf kept these slots from every thief.  Deterministic, one
 * thread playing both parts. */
#if !FK_LIVE /* (FK_LIVE has no wrap: deque_stolen_pop_lowers_top checks its hint) */
TEST(deque_private_seen_across_a_wrap) {
    ASSERT_MSG(fk__force_available(), "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) is unavailable");
    owner = make_owner();
    uint64_t cap = owner->dq_cur->cap;
    fk__slot s;
    for (uint64_t id = 0; id + 1 < cap; id++) {
        push(id);
        ASSERT_MSG(fk__deque_has_private(owner), "item %llu pushed: no private work seen", (unsigned long long)id);
        ASSERT_EQ(fk__force_publish(owner, NULL), 1);
        ASSERT_EQ(fk__steal(owner, &s), FK__STEAL_OK);
        ASSERT_EQ_U(slot_id(&s), id);
    }
    ASSERT_EQ_U(atomic_load(&owner->top), cap - 1);
    ASSERT_MSG(!fk__deque_has_private(owner), "an empty deque seen as holding private work");
    push(cap - 1);
    push(cap);
    ASSERT_EQ_U(owner->dq_cur->cap, cap); /* wrapped, not grown */
    ASSERT_MSG(fk__deque_has_private(owner), "2 private slots across the buffer's wrap (top = split = %llu, "
               "bottom = %llu) not seen", (unsigned long long)(cap - 1), (unsigned long long)fk__deque_bottom(owner));
    ASSERT_EQ(fk__force_publish(owner, NULL), 1); /* the oldest: cap - 1 */
    ASSERT_EQ(fk__steal(owner, &s), FK__STEAL_OK);
    ASSERT_EQ_U(slot_id(&s), cap - 1);
    ASSERT_MSG(fk__deque_has_private(owner), "1 private slot after the wrap not seen");
    uint64_t got;
    ASSERT(pop(&got, 0));
    ASSERT_EQ_U(got, cap);
    ASSERT_MSG(!fk__deque_has_private(owner), "the emptied deque seen as holding private work");
    fk__deque_destroy(owner);
    free(owner);
}
#endif

#if FK_LIVE
/* The live mark's deque (FK_LIVE): a pop that finds its slot stolen lowers top to the
 * owner's cursor, the scope's oldest record, clears the marks the thieves left, and moves
 * top's tag; the slots are then reused, and a thief that read top before the lowering
 * cannot take one of them with that old value.  Deterministic, one thread playing both
 * parts (models/force.pml -DLIVE -DLOWER checks every interleaving at small sizes). */
TEST(deque_stolen_pop_lowers_top) {
    ASSERT_MSG(fk__force_available(), "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) is unavailable");
    owner = make_owner();
    fk__slot s;
    uint64_t got;
    for (uint64_t id = 0; id < 5; id++)
        push(id);
    ASSERT_EQ(fk__steal(owner, &s), FK__STEAL_EMPTY); /* all private (and the thief asks) */
    ASSERT(fk__deque_has_private(owner));
    ASSERT_EQ(fk__force_publish(owner, NULL), 1); /* the oldest half of 5: 0, 1, 2 */
    for (uint64_t id = 0; id < 3; id++) {
        ASSERT_EQ(fk__steal(owner, &s), FK__STEAL_OK);
        ASSERT_EQ_U(slot_id(&s), id);
    }
    ASSERT_EQ(fk__steal(owner, &s), FK__STEAL_EMPTY); /* 3, 4 private: the thief asks */
    ASSERT(pop(&got, 4)); /* private; the request answered with slot 3 */
    ASSERT_EQ_U(got, 4);
    uint64_t before = atomic_load(&owner->top); /* what a slow thief read: index 3, tag 0 */
    ASSERT_EQ_U(before, 3);
    ASSERT_EQ(fk__steal(owner, &s), FK__STEAL_OK);
    ASSERT_EQ_U(slot_id(&s), 3);
    /* The join's pop of slot 3 finds it stolen, with its 3 older records: the cursor goes
     * back to slot 0, and so does top, with the tag moved on. */
    ASSERT(!pop(&got, 3));
    ASSERT(lcur == owner->hot->buf);
    uint64_t t = atomic_load(&owner->top);
    ASSERT_MSG(t == ((uint64_t)1 << 32), "top after the lowering: tag %llu, index %llu (want tag 1, index 0)",
               (unsigned long long)(t >> 32), (unsigned long long)(uint32_t)t);
    ASSERT_EQ_U(atomic_load(&owner->split_pub), 0);
    for (int x = 0; x < 5; x++)
        ASSERT_MSG(atomic_load(&owner->hot->buf[x].link) == 0, "slot %d still marked live after the lowering", x);
    ASSERT_MSG(!fk__deque_has_private(owner), "the emptied deque seen as holding private work");
    /* The slots are reused from 0.  One record: a forcing thief must find exactly it (had the
     * thieves' marks on slots 1 and 2 stayed, it would count 3, publish 2, and slot 1's old
     * record, item 1, would be taken again). */
    push(10);
    ASSERT(fk__deque_has_private(owner));
    ASSERT_EQ(fk__force_publish(owner, NULL), 1);
    ASSERT_EQ_U(atomic_load(&owner->split_pub), 1);
    ASSERT_EQ(fk__steal(owner, &s), FK__STEAL_OK);
    ASSERT_EQ_U(slot_id(&s), 10);
    ASSERT_EQ(fk__steal(owner, &s), FK__STEAL_EMPTY); /* (and asks) */
    push(11); /* answers: slot 1 public */
    push(12);
    push(13);
    ASSERT_EQ(fk__steal(owner, &s), FK__STEAL_OK);
    ASSERT_EQ_U(slot_id(&s), 11);
    ASSERT_EQ(fk__steal(owner, &s), FK__STEAL_EMPTY); /* (and asks) */
    push(14); /* answers: the oldest half of 2..4, slots 2 and 3 public */
    ASSERT_EQ(fk__steal(owner, &s), FK__STEAL_OK);
    ASSERT_EQ_U(slot_id(&s), 12);
    /* top's index is 3 again: the value from before the lowering (index 3, tag 0) must not
     * match it. */
    ASSERT_EQ_U((uint32_t)atomic_load(&owner->top), 3);
    uint64_t stale = before;
    ASSERT_MSG(!atomic_compare_exchange_strong(&owner->top, &stale, before + 1),
               "a CAS with top's value from before the lowering succeeded");
    ASSERT(pop(&got, 4)); /* private */
    ASSERT_EQ_U(got, 14);
    /* Slot 3 is public and nobody took it: the owner wins it in the race for the last
     * public slot, and top, moved past it by that CAS, is lowered back to it. */
    ASSERT(pop(&got, 3));
    ASSERT_EQ_U(got, 13);
    t = atomic_load(&owner->top);
    ASSERT_MSG(t == (((uint64_t)2 << 32) | 3), "top after the won race: tag %llu, index %llu (want 2, 3)",
               (unsigned long long)(t >> 32), (unsigned long long)(uint32_t)t);
    ASSERT(!pop(&got, 2)); /* 12, stolen, with 10 and 11 below it */
    ASSERT(lcur == owner->hot->buf);
    ASSERT_EQ_U(atomic_load(&owner->top), (uint64_t)3 << 32);
    fk__deque_destroy(owner);
    free(owner);
}

/* Thieves read the slot at the owner's cursor (the hint at split_pub, a forcing's scan up to
 * the first clear mark): it must be usable even when the cursor stands at the push's limit,
 * the last slot made usable so far.  Every record published and stolen: split_pub is then the
 * cursor. */
TEST(deque_bottom_slot_readable) {
    ASSERT_MSG(fk__force_available(), "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) is unavailable");
    owner = make_owner();
    fk__slot *lim = atomic_load(&owner->hot->limit), s;
    uint64_t n = 0, got;
    while (lcur < lim)
        push(n++);
    ASSERT_EQ(fk__steal(owner, &s), FK__STEAL_EMPTY); /* (and asks) */
    while (fk__force_publish(owner, NULL))
        while (fk__steal(owner, &s) == FK__STEAL_OK)
            ;
    ASSERT_EQ_U(atomic_load(&owner->split_pub), n);
    ASSERT_EQ_U((uint32_t)atomic_load(&owner->top), n);
    /* (the loop's last forcing scanned from slot n, the cursor's; so does this one) */
    ASSERT_EQ(fk__force_publish(owner, NULL), 0);
    atomic_store(&owner->hot->splitp, owner->hot->buf + owner->hot->split); /* (the last steal's request hid split) */
    ASSERT_MSG(!fk__deque_has_private(owner), "%llu records all stolen: private work seen", (unsigned long long)n);
    ASSERT(!pop(&got, n - 1));
    ASSERT(lcur == owner->hot->buf);
    fk__deque_destroy(owner);
    free(owner);
}

/* More records waiting than the deque holds is a fatal error that names the limit (the
 * slots on the way to the last are made usable first). */
static void push_past_the_end(void *arg) {
    (void)arg;
    owner = make_owner();
    lcur = owner->hot->buf + owner->dq_cur->cap - 1;
    push(1); /* the last slot */
    push(2); /* none left */
    _exit(0);
}

TEST(deque_full_reported) {
    char *err;
    int st = test_run_capturing(push_past_the_end, NULL, &err);
    ASSERT_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "expected an abort, got status %d; stderr: %s", st, err);
    ASSERT_STR_CONTAINS(err, "deque is full");
    ASSERT_STR_CONTAINS(err, "FK_LIVE_SLOTS");
    free(err);
}
#endif

/* ---- the MPSC submission queue ------------------------------------------------------------ */

#define PRODUCERS 4
#define PER_PRODUCER 200000

struct item {
    fk__mpsc_node node;
    unsigned producer, seq;
};

static fk__mpsc q;
static struct item *items;

static void *producer(void *arg) {
    unsigned p = (unsigned)(uintptr_t)arg;
    for (unsigned i = 0; i < PER_PRODUCER; i++) {
        struct item *it = &items[p * PER_PRODUCER + i];
        it->producer = p;
        it->seq = i;
        fk__mpsc_push(&q, &it->node);
    }
    return NULL;
}

TEST(mpsc_every_node_once_in_order) {
    fk__mpsc_init(&q);
    ASSERT(!fk__mpsc_nonempty(&q));
    items = calloc(PRODUCERS * PER_PRODUCER, sizeof *items);
    pthread_t th[PRODUCERS];
    for (unsigned p = 0; p < PRODUCERS; p++)
        ASSERT_EQ(pthread_create(&th[p], NULL, producer, (void *)(uintptr_t)p), 0);
    unsigned next[PRODUCERS] = {0}, got = 0;
    while (got < PRODUCERS * PER_PRODUCER) {
        fk__mpsc_node *n = fk__mpsc_pop(&q);
        if (!n)
            continue;
        struct item *it = (struct item *)(void *)n;
        ASSERT_MSG(it->seq == next[it->producer], "producer %u: got item %u, expected %u", it->producer, it->seq,
                   next[it->producer]);
        next[it->producer]++;
        got++;
    }
    for (unsigned p = 0; p < PRODUCERS; p++)
        pthread_join(th[p], NULL);
    ASSERT(fk__mpsc_pop(&q) == NULL);
    ASSERT(!fk__mpsc_nonempty(&q));
    free(items);
}

int main(int argc, char **argv) {
    printf("# test_deque: variant %s\n", fk_build_variant());
    return test_main(argc, argv, (struct test_case[]){
        TEST_CASE(deque_owner_only, 30),
#if FK_LIVE
        TEST_CASE(deque_stolen_pop_lowers_top, 30),
        TEST_CASE(deque_bottom_slot_readable, 30),
        TEST_CASE(deque_full_reported, 30),
#else
        TEST_CASE(deque_pop_empty_takes_nothing, 30),
        TEST_CASE(deque_private_seen_across_a_wrap, 30),
#endif
        TEST_CASE(deque_request_answered_at_pop, 30),
        TEST_CASE(deque_small_bursts, 120),
        TEST_CASE(deque_long_bursts, 120),
        TEST_CASE(deque_forced_publication, 120),
        TEST_CASE(mpsc_every_node_once_in_order, 60),
        {0},
    });
}
