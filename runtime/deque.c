/* deque.c — the work-stealing deque: a split deque with no fence on the owner's path.
 *
 * Two deques share this protocol.  The ring (every build but child-native): indices are
 * 64-bit and only grow (they never wrap); slot x lives at buf[x & mask]; the owner stores its
 * cursor at every push and pop.  FK_LIVE's (child-native, at the end of this file): one
 * mapping, slot x at buf[x]; the cursor in the tasks' registers, a live mark on each record
 * instead; the bottom never jumps down-up, and top is lowered to it, with a tag.
 *
 *     top            split            bottom
 *      |  public      |   private       |
 *      v  (thieves)   v   (owner only)  v
 *
 * Thieves take the oldest public slot with a CAS on `top`.  The owner pushes and pops at
 * `bottom` with plain stores while the slot is private; that is the fast path (inline, in
 * forkscope/impl.h).  A thief that finds nothing public asks for work by storing 0 into the
 * owner's `limit`; the owner's next push then takes the slow path here, writes its slot and
 * publishes the oldest half of its private slots, the new one counted among them (release
 * store of split_pub).  Under continuation stealing a frame that was stolen pushes through
 * fk__push_published, which asks for itself: its continuations are published as they are
 * pushed.
 * When the owner pops a slot that is public it takes it back as Chase-Lev's pop does, with
 * one seq_cst fence and, for the last public slot, a CAS race on `top`.  The fence-free
 * owner path is Lace's idea (van Dijk & van de Pol); the public part follows Chase-Lev with
 * the orderings of Lê et al. (2013).
 *
 * GREEDINESS: FORCED PUBLICATION
 * An owner serves requests when it pushes or pops.  One that runs a long leaf (or works
 * through a long join without forking) would keep its private slots from idle thieves for
 * as long as that takes; a scheduler that lets a worker idle while work waits is not
 * greedy, and the bound T_P <= T1/P + O(T_inf) needs one that is.  So a thief whose
 * requests have gone unanswered for a while publishes the owner's oldest private slots
 * itself (fk__force_publish):
 *
 *     thief (holding the owner's dq_lock)        owner (fast pop, no lock, no fence)
 *       split = s + k       (store splitp)         cur = cur - 1       (store)
 *       membarrier()        (a full fence on       compiler barrier
 *                            every CPU running     if (cur >= splitp)   (load)
 *                            one of our threads)       the slot is private: take it
 *       b = bottom          (load cur)
 *       split = min(s + k, b); publish [s, split)
 *
 * This is Dekker's pattern with the owner's fence supplied asymmetrically by the thief's
 * membarrier: either the owner's load of splitp comes after the fence the IPI put in its
 * instruction stream (it sees the new split, and pops below it take the slow path, which
 * takes dq_lock and decides under it), or its store of cur came before that fence (the
 * thief's load of cur sees it and leaves that slot private).  (FK_LIVE: for "cur = cur - 1"
 * read "the slot's mark cleared", and for "load cur", "the marks from s up".)  The owner's
 * slow paths hold dq_lock, so a thief never moves split while the owner rearranges the
 * deque.  Without membarrier (old kernels), requests are served at pushes only, and the pool
 * says so. */
#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "place.h"
#include "worker.h"
#include "chaos.h"

/* How many of n private slots a request makes public: the oldest half, at least one (as
 * Lace does, and as a forced publication does).  One per request made a thief of a loop of
 * forks (a time step's strips, a BFS level's chunks) come back for every slot, and wait
 * each time for the owner's next push or pop: a whole leaf when the owner runs one.
 * -DFK_PUBLISH_ONE=1 (forkscope/config.h) restores one per request (for A/B comparisons). */
static uint64_t publish_count(uint64_t n) { return (FK_PUBLISH_ONE || n < 2) ? (n ? 1 : 0) : (n + 1) / 2; }

static int beating(const fk_worker *w) { return w->pool && w->pool->opts.promote == FK_PROMOTE_BEAT; }

/* How many of n private slots w's owner publishes when asked: a thief's request, the oldest
 * half; a heartbeat (FK_PROMOTE_BEAT), the oldest one (a promotion), or with FK_BEAT_HALF the
 * oldest half.  (A deque without a pool, tests/test_deque.c's, is asked by thieves.) */
static uint64_t request_count(const fk_worker *w, uint64_t n) {
    return beating(w) && w->pool->opts.beat_share == FK_BEAT_ONE ? (n ? 1 : 0) : publish_count(n);
}

/* splitp as a thief leaves it when it asks for work: above every slot, so that the owner's
 * fast pop test (cur - 1 >= splitp: "private") fails and the pop takes its slow path, which
 * answers the request.  splitp is only ever a bound the fast path may find too high (then
 * the slow path decides under dq_lock, from the indices), so a thief may raise it without
 * the lock; the owner's next set_split puts the true value back. */
#define SPLIT_ASK ((fk__slot *)UINTPTR_MAX)

/* A buffer's slots start on a cache line of their own, so a 64-byte record never straddles
 * two lines. */
#define DQ_HEADER 64
_Static_assert(sizeof(fk__dqbuf) <= DQ_HEADER, "the deque buffer header fits a cache line");

/* The slots start right after the page offset of the owner's hot cache line (fk__tls), for
 * the reason given in stack.c (4K aliasing), in a mapping placed at FK__PLACE_DEQUE modulo
 * FK_PLACE_ALIGN (place.h: the same layout in every launch); `skew` bytes of the mapping
 * before the header make the first. */
static fk__dqbuf *buf_new_(fk_worker *w, uint64_t cap, size_t usable, char **usable_end) {
    uintptr_t want = ((uintptr_t)w->hot + 64) & (4096 - 64);
    size_t bytes = (4096 + DQ_HEADER + cap * sizeof(fk__slot) + 4095) & ~(size_t)4095;
    char *m = usable ? fk__place_map_prot(bytes, 0, FK__PLACE_DEQUE, PROT_NONE) : fk__place_map(bytes, 0, FK__PLACE_DEQUE);
    if (!m)
        return NULL;
    uintptr_t skew = (want + 4096 - DQ_HEADER) & (4096 - 64);
    if (usable) { /* address space, but the header and the first `usable` bytes of slots */
        size_t pg = (size_t)sysconf(_SC_PAGESIZE); /* (4 KiB, or 16 or 64 KiB on some aarch64) */
        size_t first = (skew + DQ_HEADER + usable + pg - 1) & ~(pg - 1);
        if (first > bytes)
            first = bytes;
        if (mprotect(m, first, PROT_READ | PROT_WRITE) != 0) {
            munmap(m, bytes);
            return NULL;
        }
        *usable_end = m + first;
    }
    fk__dqbuf *b = (fk__dqbuf *)(void *)(m + skew);
    b->cap = cap;
    b->prev = NULL;
    b->mem = m;
    b->mem_bytes = bytes;
    return b;
}
#if !FK_LIVE
static fk__dqbuf *buf_new(fk_worker *w, uint64_t cap) { return buf_new_(w, cap, 0, NULL); }
#endif

static fk__slot *buf_slots(fk__dqbuf *b) { return (fk__slot *)(void *)((char *)b + DQ_HEADER); }

/* ---- the owner's slow-path lock ----------------------------------------------------------
 * Held by the owner in every slow path that reads or moves split, bottom or the buffer, and
 * by a thief forcing a publication.  Uncontended except for those rare forcings. */

static void dq_lock(fk_worker *w) {
    while (atomic_exchange_explicit(&w->dq_lock, 1, memory_order_acquire))
        while (atomic_load_explicit(&w->dq_lock, memory_order_relaxed))
            fk__cpu_pause();
}

static int dq_trylock(fk_worker *w) {
    return !atomic_load_explicit(&w->dq_lock, memory_order_relaxed) &&
           !atomic_exchange_explicit(&w->dq_lock, 1, memory_order_acquire);
}

static void dq_unlock(fk_worker *w) { atomic_store_explicit(&w->dq_lock, 0, memory_order_release); }

/* ---- the owner's cursor ----------------------------------------------------------------
 * The fast path knows only pointers (cur, splitp, limit); these convert to and from the
 * indices that the protocol is written in. */

/* top's index.  FK_LIVE packs a tag above it (32 + 32 bits), moved when the owner lowers top
 * ("THE LIVE-MARK DEQUE", below); the ring's top is the index. */
#if FK_LIVE
#define TOP_IDX(t) ((uint64_t)(uint32_t)(t))
#define TOP_TAG(t) ((t) >> 32)
#else
#define TOP_IDX(t) (t)
#endif

#if !FK_LIVE /* (the cursor in the hot state) */
uint64_t fk__deque_bottom(const fk_worker *w) {
    return w->hot->lap + (uint64_t)(atomic_load_explicit(&w->hot->cur, memory_order_relaxed) - w->hot->buf);
}

#endif

/* split's slot, for the owner's test `cur - 1 >= splitp`.  Index x at or after the owner's
 * lap maps to buf + (x - lap), which may be one past the buffer's last slot (x = lap + cap:
 * then no slot of this lap is at or above it); an older x maps to its slot, which is then
 * conservative (every slot of this lap is private anyway). */
static fk__slot *split_ptr(const fk_worker *w, uint64_t x) {
    if (x >= w->hot->lap)
        return w->hot->buf + (x - w->hot->lap);
    return w->hot->buf + (x & w->hot->mask);
}

static void set_split(fk_worker *w, uint64_t s) {
    w->hot->split = s;
    atomic_store_explicit(&w->hot->splitp, split_ptr(w, s), memory_order_relaxed);
    atomic_store_explicit(&w->split_lapped, s < w->hot->lap, memory_order_relaxed);
}

#if !FK_LIVE /* (the ring: laps, limits) */
/* Moves the cursor to index b; the lap may change, so split's pointer is recomputed. */
static void set_bottom(fk_worker *w, uint64_t b) {
    w->hot->lap = b & ~w->hot->mask;
    atomic_store_explicit(&w->hot->cur, w->hot->buf + (b & w->hot->mask), memory_order_relaxed);
    set_split(w, w->hot->split);
}

/* The slot at which push must stop: the end of the buffer, or the slot of index t + cap
 * (which must not be overwritten: it still holds index t) if that comes first. */
static fk__slot *limit_for(const fk_worker *w, uint64_t t) {
    uint64_t stop = t + w->dq_cur->cap, lap = w->hot->lap;
    if (stop < lap + w->dq_cur->cap)
        return w->hot->buf + (stop - lap);
    return w->hot->buf + w->dq_cur->cap;
}

#define push_limit(w, t) limit_for((w), (t))
#else
static fk__dqbuf *live_buf_new(fk_worker *w);
static fk__slot *live_end(const fk_worker *w);
#define push_limit(w, t) ((void)(t), live_end(w))
#endif

int fk__deque_init(fk_worker *w) {
#if FK_LIVE
    fk__dqbuf *b = live_buf_new(w);
#else
    fk__dqbuf *b = buf_new(w, FK_DEQUE_INITIAL);
#endif
    if (!b)
        return FK_ENOMEM;
    w->dq_cur = b;
    w->hot->buf = buf_slots(b);
    w->hot->mask = b->cap - 1;
#if FK_LIVE /* (the cursor is in the tasks' registers; no lap) */
    w->hot->lap = 0;
    set_split(w, 0);
#else
    w->hot->split = 0;
    set_bottom(w, 0); /* (the lap, the cursor, split's slot) */
#endif
    atomic_store_explicit(&w->hot->limit, push_limit(w, 0), memory_order_relaxed);
    atomic_store_explicit(&w->top, 0, memory_order_relaxed);
    atomic_store_explicit(&w->split_pub, 0, memory_order_relaxed);
    atomic_store_explicit(&w->dq_buf, b, memory_order_relaxed);
    atomic_store_explicit(&w->dq_lock, 0, memory_order_relaxed);
    return 0;
}

void fk__deque_destroy(fk_worker *w) {
    for (fk__dqbuf *b = w->dq_cur, *prev; b; b = prev) {
        prev = b->prev;
        munmap(b->mem, b->mem_bytes);
    }
    w->dq_cur = NULL;
}

/* A slot's copy: into the deque (a push's slow path, the ring's growth) or out of it (a
 * steal, a left-over).  A record's link last, with release order: FK_LIVE's live mark
 * (fk__push_live), which a thief may read as soon as it is set. */
static void copy_slot(fk__slot *dst, const fk__slot *src) {
#if FK_STEAL == FK_STEAL_CONT
    atomic_store_explicit(&dst->frame, atomic_load_explicit(&src->frame, memory_order_relaxed),
                          memory_order_relaxed);
#else
    atomic_store_explicit(&dst->thunk, atomic_load_explicit(&src->thunk, memory_order_relaxed), memory_order_relaxed);
    atomic_store_explicit(&dst->ret, atomic_load_explicit(&src->ret, memory_order_relaxed), memory_order_relaxed);
    for (int i = 0; i < FK_RECORD_ARG_WORDS; i++)
        atomic_store_explicit(&dst->args[i], atomic_load_explicit(&src->args[i], memory_order_relaxed),
                              memory_order_relaxed);
    atomic_store_explicit(&dst->link, atomic_load_explicit(&src->link, memory_order_relaxed), memory_order_release);
#endif
}

#if !FK_LIVE /* (the ring grows) */
/* Doubles the buffer, copying the live slots [t, b). */
static void grow(fk_worker *w, uint64_t t, uint64_t b) {
    fk__dqbuf *old = w->dq_cur;
    fk__dqbuf *nb = buf_new(w, old->cap * 2);
    if (!nb)
        fk__fatal("out of memory growing a deque to %llu slots", (unsigned long long)old->cap * 2);
    for (uint64_t x = t; x < b; x++)
        copy_slot(&buf_slots(nb)[x & (nb->cap - 1)], &buf_slots(old)[x & (old->cap - 1)]);
    nb->prev = old;
    w->dq_cur = nb;
    w->hot->buf = buf_slots(nb);
    w->hot->mask = nb->cap - 1;
    set_bottom(w, b);
    /* Release: a thief that loads this pointer (acquire, in fk__steal) sees the copies. */
    atomic_store_explicit(&w->dq_buf, nb, memory_order_release);
}

#endif

/* Makes the private slots [split, split + n) public (owner, under dq_lock). */
static void publish(fk_worker *w, uint64_t n) {
    set_split(w, w->hot->split + n);
    FK_CHAOS_POINT();
    /* Release: pairs with the thief's acquire load of split_pub; it then sees the published
     * slots and everything the owner wrote before pushing them (the frames or the records'
     * arguments). */
    atomic_store_explicit(&w->split_pub, w->hot->split, memory_order_release);
}

/* Time accounting (FK_TIME_PROMOTE): while the owner answers a request (publishes) and while
 * it takes back a slot it had published (reclaim: the fence, the CAS race for the last one),
 * its time goes to "promote", then back to the category (and task name) it was in.  A pool's
 * promote time over its publications is τ, the cost of a promotion to its owner beyond the
 * fast path (the heartbeat papers' τ), the clock's reads included; what it leaves out: the
 * slow path's entry and lock around them. */
typedef struct acct_back {
    unsigned cat; /* FK_TIME_NCAT: the time was not moved (accounting off) */
    const char *name;
} acct_back;

static acct_back promote_begin(fk_worker *w) {
    acct_back b = {FK_TIME_NCAT, NULL};
#if FK_ACCOUNT
    if (FK__ACCT_ON(w)) {
        b.cat = atomic_load_explicit(&w->acct.cat, memory_order_relaxed);
        b.name = w->acct.name;
        fk__acct_to(w, FK_TIME_PROMOTE, NULL, 0);
    }
#else
    (void)w;
#endif
    return b;
}

static void promote_end(fk_worker *w, acct_back b) {
    if (b.cat != FK_TIME_NCAT)
        fk__acct_to(w, b.cat, b.name, 0);
}

/* Answers a request (a thief's, a beat's promotion, or under continuation stealing a stolen
 * frame's own: fk__push_published) with the oldest n private slots:
 * published, counted, and a "promote" mark on the owner's timeline when it traces. */
static void answer(fk_worker *w, uint64_t n) {
    acct_back b = promote_begin(w);
    publish(w, n);
    FK__WSTAT(w, publishes);
    if (FK__ACCT_ON(w))
        fk__acct_event(w, FK__TEV_PROMOTE, (uint32_t)n, 0);
    promote_end(w, b);
}

/* A pop's slow path (owner, under dq_lock; i is the slot being taken back, private: the
 * ring's take_newest, FK_LIVE's fk__pop_slow): if a thief asked for work, publish the
 * oldest private slots below i (not i itself: the owner is taking it, and would only have
 * to reclaim it through the public path; models/deque.pml checks that this is speed, not
 * safety) and clear the request.  Answering at pops as well as at pushes (Lace does at
 * spawn and sync) matters to an owner that pushed a burst and pops it back: a join running
 * its children, a loop of forks per time step. */
static void answer_at_pop(fk_worker *w, uint64_t i) {
    if (atomic_load_explicit(&w->hot->limit, memory_order_relaxed) != NULL)
        return;
    uint64_t s = w->hot->split;
    if (i <= s || i + 1 == TOP_IDX(atomic_load_explicit(&w->top, memory_order_relaxed)))
        return; /* nothing private below the slot being taken (the request stays) */
    answer(w, request_count(w, i - s));
    fk__slot *lim = NULL; /* a later request keeps its NULL (the CAS fails) */
    atomic_compare_exchange_strong_explicit(&w->hot->limit, &lim,
                                            push_limit(w, TOP_IDX(atomic_load_explicit(&w->top, memory_order_acquire))),
                                            memory_order_relaxed, memory_order_relaxed);
}

/* The end of every push's slow path (the new slot written, b the bottom past it, t the top
 * its room was made for): a thief's request served with the oldest private slots, the new
 * one counted among them; the push's limit set again; the lock released. */
static void push_slow_end(fk_worker *w, uint64_t t, uint64_t b) {
    fk__slot *lim = atomic_load_explicit(&w->hot->limit, memory_order_relaxed);
    if (lim == NULL) /* a thief asked for work: publish the oldest private slots */
        answer(w, request_count(w, b - w->hot->split));
    /* A thief may have stored NULL since we read lim: then keep its NULL (the CAS fails). */
    atomic_compare_exchange_strong_explicit(&w->hot->limit, &lim, push_limit(w, t), memory_order_relaxed,
                                            memory_order_relaxed);
    dq_unlock(w);
}

/* The head of every reclaim: the owner takes back slot i, which is public (split > i), and
 * stores split_pub = i.  1: top is below i, so [top, i) stay public and i is the owner's;
 * else 0, and *won says whether the owner won slot i, the last public one, in a race with
 * the thieves (top then moved past it); if not, a thief has it.  The tail sets the deque
 * right after either (the ring's and FK_LIVE's differ). */
static int reclaim_head(fk_worker *w, uint64_t i, int *won) {
    atomic_store_explicit(&w->split_pub, i, memory_order_relaxed);
    FK_CHAOS_POINT(); /* (the store still in the store buffer, on hardware that has one) */
    /* seq_cst fence, pairs with the fence in fk__steal (store-load, as Dekker): either the
     * thief's load of split_pub sees i, so it will not take slot i, or our load of top
     * below sees its claim (its CAS, or the top it loaded before its fence). */
    atomic_thread_fence(memory_order_seq_cst);
    FK_CHAOS_POINT();
    uint64_t t = atomic_load_explicit(&w->top, memory_order_relaxed);
    FK__WSTAT(w, reclaims);
    FK_CHAOS_POINT();
    *won = 0;
    if (TOP_IDX(t) < i)
        return 1;
    if (TOP_IDX(t) == i) /* the last public slot: race the thieves for it (the tag unchanged) */
        *won = atomic_compare_exchange_strong_explicit(&w->top, &t, t + 1, memory_order_seq_cst,
                                                       memory_order_relaxed);
    return 0;
}

/* The owner takes back slot i = bottom - 1, which is public (so split == bottom).
 * Returns 1 if it is ours again, 0 if a thief has it (and, FK_LIVE, with it the `older`
 * records of the scope below i); the deque's bottom, split and top end consistent (the
 * tails, reclaim_tail).  Its time goes to "promote". */
static int reclaim_tail(fk_worker *w, uint64_t i, uint32_t older, int mine, int won);
static int reclaim(fk_worker *w, uint64_t i, uint32_t older) {
    acct_back b = promote_begin(w);
    int won, mine = reclaim_head(w, i, &won);
    mine = reclaim_tail(w, i, older, mine, won);
    promote_end(w, b);
    return mine;
}

#if !FK_LIVE /* (the ring's slow paths) */

/* Owner, cur >= limit: room for the slot (wrap to the buffer's start, or grow), the slot
 * written at index b, and a thief's request served with the oldest private slots. */
static void push_slow_begin(fk_worker *w, uint64_t *t_out) {
    dq_lock(w);
    uint64_t b = fk__deque_bottom(w);
    /* Acquire: pairs with the thieves' CAS on top, so that the slots they took are theirs
     * before this push may write over them. */
    uint64_t t = atomic_load_explicit(&w->top, memory_order_acquire);
    if (b - t >= w->dq_cur->cap)
        grow(w, t, b);
    else
        set_bottom(w, b); /* at the end of the buffer: wrap to its start */
    *t_out = t;
}

#if FK_STEAL == FK_STEAL_CONT
void fk__push_slow(fk_frame *f) {
    fk_worker *w = FK__H->w;
    uint64_t t;
    push_slow_begin(w, &t);
    fk__slot *s = atomic_load_explicit(&w->hot->cur, memory_order_relaxed);
    atomic_store_explicit(&s->frame, f, memory_order_relaxed);
    atomic_store_explicit(&w->hot->cur, s + 1, memory_order_release);
    push_slow_end(w, t, fk__deque_bottom(w));
}

/* A push whose slot is published at once, as if a thief had asked (a stolen frame's forks). */
void fk__push_published(fk_frame *f) {
    atomic_store_explicit(&FK__H->limit, NULL, memory_order_relaxed);
    fk__push_slow(f);
}
#else
void fk__push_slow(void) {
    fk_worker *w = FK__H->w;
    uint64_t t;
    push_slow_begin(w, &t);
    fk__slot *s = atomic_load_explicit(&w->hot->cur, memory_order_relaxed);
    copy_slot(s, &w->hot->scratch);
    atomic_store_explicit(&w->hot->cur, s + 1, memory_order_release);
    push_slow_end(w, t, fk__deque_bottom(w));
}
#endif

/* The ring's tail: if the deque is now empty, top == split == bottom == i + 1. */
static int reclaim_tail(fk_worker *w, uint64_t i, uint32_t older, int mine, int won) {
    (void)older;
    if (mine) { /* slots [top, i) stay public; i is private again */
        w->hot->split = i;
        set_bottom(w, i);
        return 1;
    }
    /* Empty now, with top == i + 1. */
    w->hot->split = i + 1;
    set_bottom(w, i + 1);
    atomic_store_explicit(&w->split_pub, i + 1, memory_order_relaxed);
    return won;
}

/* The newest slot, index i (bottom has already been moved to i by the caller): private (the
 * fast path's test failed only because the buffer wrapped, or because a forcing thief moved
 * split and then gave the slot back) or public (reclaim it).  Under dq_lock. */
static int take_newest(fk_worker *w, uint64_t i) {
    if (i >= w->hot->split) {
        set_bottom(w, i);
        return 1;
    }
    return reclaim(w, i, 0);
}

/* The cursor back up by one, exactly as the fast pop moved it down (not set_bottom(i + 1):
 * at the end of a buffer that would start the next lap under a limit computed for this
 * one, and a push could overwrite a live slot). */
static void undo_pop(fk_worker *w) {
    atomic_store_explicit(&w->hot->cur, atomic_load_explicit(&w->hot->cur, memory_order_relaxed) + 1,
                          memory_order_release);
}

/* A pop from an empty deque (bottom was top; the caller moved it to i = top - 1): there is
 * no slot i to take.  Undoes the pop and returns 1.  Without this test, at index 0 i wraps
 * to 2^64 - 1, which passes every comparison with top and split, and slot i & mask (the
 * buffer's last) would be taken: whatever it holds, a record taken before or another
 * pool's stale memory, would run again.  A fiber's join or counter wait may pop a deque it
 * has never pushed to (it may have moved to another worker), so this happens.  Under
 * dq_lock: if top is i + 1 nothing is public, so no thief moves it meanwhile. */
static int undo_empty_pop(fk_worker *w, uint64_t i) {
    if (i + 1 != atomic_load_explicit(&w->top, memory_order_acquire))
        return 0;
    undo_pop(w);
    return 1;
}

/* Every pop's slow path, under dq_lock, after the fast pop moved bottom to i: nothing if the
 * deque was empty; with owner, nothing either if slot i is not owner's (its link; the pop is
 * undone); else a thief's request answered and slot i taken back if it is still ours (1) —
 * 0 if a thief has it.  split's slot is set again in every case (a request's SPLIT_ASK gone). */
static int not_owners(const fk_worker *w, uint64_t i, const uintptr_t *owner) {
#if FK_STEAL == FK_STEAL_CHILD
    return owner && i >= atomic_load_explicit(&w->top, memory_order_acquire) &&
           atomic_load_explicit(&w->hot->buf[i & w->hot->mask].link, memory_order_relaxed) != *owner;
#else
    (void)w, (void)i, (void)owner; /* (frames have no owner link; only fiber joins ask) */
    return 0;
#endif
}

static int settle(fk_worker *w, uint64_t i, const uintptr_t *owner) {
    int mine = 0;
    if (undo_empty_pop(w, i)) {
        /* nothing to take */
    } else if (not_owners(w, i, owner)) {
        undo_pop(w);
    } else {
        answer_at_pop(w, i);
        mine = take_newest(w, i);
    }
    set_split(w, w->hot->split);
    return mine;
}

/* The owner's fast pop failed: take the newest slot back if it is still ours (1), under the
 * lock; 0 if a thief has it.  (For tests and fk__pop_slow.) */
int fk__pop_settle(fk_worker *w) {
    dq_lock(w);
    int mine = settle(w, fk__deque_bottom(w), NULL);
    dq_unlock(w);
    return mine;
}

#if FK_STEAL == FK_STEAL_CONT
/* The pop after a fork found its slot public (or the buffer wrapped), after the child
 * finished here: the slot is ours again (go on: FK__POP_CONTINUE), or a thief has the
 * parent's continuation.  Then arrive at the parent's join counter as that child: continue
 * at the parent's resume point if we are last (FK__POP_RESUME), else unwind (this C frame
 * and those below it are dead: every older continuation was stolen first). */
int fk__pop_slow(fk_frame *f) {
    fk_worker *w = FK__H->w;
    FK__ACCT(w, FK_TIME_JOIN);
    int r = FK__POP_CONTINUE;
    if (!fk__pop_settle(w)) {
        if (!fk__arrive(w, f, 1))
            fk__unwind(w); /* (the join's time goes on until the scheduler's) */
        r = FK__POP_RESUME;
    }
    FK__ACCT(w, FK_TIME_WORK);
    return r;
}
#else
const fk__record *fk__pop_slow(void) {
    fk_worker *w = FK__H->w;
    dq_lock(w);
    uint64_t i = fk__deque_bottom(w);
    const fk__record *r = NULL;
    if (settle(w, i, NULL)) /* bottom is now i, or i + 1 == top if the deque emptied */
        r = &w->hot->buf[i & w->hot->mask];
    dq_unlock(w); /* NULL: slot i was stolen, and so were all older ones */
    return r;
}

#if FK_STACK == FK_STACK_FIBER
/* fk__pop_slow for a join that takes only its own records (fk__pop_record_of): the newest
 * slot (public, or past a wrap) is taken back only if its link is owner's; if it is not,
 * the owner's bottom goes back up (as if the pop never happened: the slot stays for whoever
 * takes it).  Under the lock, so no forcing thief moves split meanwhile. */
const fk__record *fk__pop_slow_of(uintptr_t owner) {
    fk_worker *w = FK__H->w;
    dq_lock(w);
    uint64_t i = fk__deque_bottom(w);
    const fk__record *r = NULL;
    if (settle(w, i, &owner))
        r = &w->hot->buf[i & w->hot->mask];
    dq_unlock(w);
    return r;
}
#endif
#endif

/* Makes every private slot public: what a hop (FK_SWITCH_TO) leaves behind, the ancestors'
 * continuations, can go to idle thieves at once while this worker drains the rest as
 * left-overs; fibers publish a ready fiber's record when a thief asked (sched_fiber.c). */
void fk__deque_publish_all(fk_worker *w) {
    dq_lock(w);
    uint64_t b = fk__deque_bottom(w);
    if (b > w->hot->split)
        publish(w, b - w->hot->split);
    dq_unlock(w);
}

/* The owner takes its newest slot, whoever pushed it (records left behind by frames that
 * unwound).  Returns 1 with a copy in *out, 0 if the deque is empty or the slot was stolen. */
int fk__pop_leftover(fk_worker *w, fk__slot *out) {
    dq_lock(w);
    int r = 0;
    uint64_t b = fk__deque_bottom(w);
    if (b != atomic_load_explicit(&w->top, memory_order_relaxed) && take_newest(w, b - 1)) {
        copy_slot(out, &w->hot->buf[(b - 1) & w->hot->mask]);
        r = 1;
    }
    dq_unlock(w);
    return r;
}

#endif

/* A request for work from v's owner (a thief's, or a beat's): its next push sees limit NULL,
 * its next pop sees split's slot at SPLIT_ASK; either takes its slow path, which answers.
 * Only if not asked already, so that idle thieves do not keep invalidating the owner's cache
 * line. */
static void ask_owner(fk_worker *v) {
    if (atomic_load_explicit(&v->hot->limit, memory_order_relaxed) != 0)
        atomic_store_explicit(&v->hot->limit, NULL, memory_order_relaxed);
    if (atomic_load_explicit(&v->hot->splitp, memory_order_relaxed) != SPLIT_ASK)
        atomic_store_explicit(&v->hot->splitp, SPLIT_ASK, memory_order_relaxed);
}

int fk__steal(fk_worker *v, fk__slot *out) {
    /* Acquire: pairs with the CAS of the thief that moved top here (see reclaim_head's fence
     * argument: a later seq_cst fence must order after that CAS). */
    uint64_t t = atomic_load_explicit(&v->top, memory_order_acquire), x = TOP_IDX(t);
    FK_CHAOS_POINT();
    atomic_thread_fence(memory_order_seq_cst); /* pairs with the fence in reclaim_head */
    FK_CHAOS_POINT();
    /* Acquire: pairs with the release store of split_pub in publish (and a forcing thief's). */
    uint64_t s = atomic_load_explicit(&v->split_pub, memory_order_acquire);
    if (x >= s) {
        /* Nothing public: ask the owner to publish.  Under heartbeat promotion thieves
         * never ask: the beat does. */
        if (!beating(v))
            ask_owner(v);
        return FK__STEAL_EMPTY;
    }
    /* Acquire: pairs with the release store in grow (the copied slots).  (FK_LIVE's buffer
     * is set once; through dq_buf, the owner's hot lines stay its own.) */
    fk__dqbuf *b = atomic_load_explicit(&v->dq_buf, memory_order_acquire);
    FK_CHAOS_POINT();
#if FK_LIVE
    copy_slot(out, &buf_slots(b)[x]); /* (x < split_pub <= cap: no wrap) */
#else
    copy_slot(out, &buf_slots(b)[x & (b->cap - 1)]);
#endif
    FK_CHAOS_POINT(); /* between the load of the slot and the CAS that makes it ours */
#if FK_LIVE
    /* A clear mark: the owner is taking the slot back (its pop clears the mark before it
     * reclaims); a copy without its link cannot report its end. */
    if (!atomic_load_explicit(&out->link, memory_order_relaxed))
        return FK__STEAL_LOST;
#endif
    /* The slot we read is ours only if top (and FK_LIVE's tag) is still t: any overwrite of
     * slot x needs the owner to have seen top past it first, or to have moved the tag.
     * seq_cst: ordered with the owner's fence. */
    if (!atomic_compare_exchange_strong_explicit(&v->top, &t, t + 1, memory_order_seq_cst,
                                                 memory_order_relaxed))
        return FK__STEAL_LOST;
    return FK__STEAL_OK;
}

/* ---- forced publication ----------------------------------------------------------------- */

static pthread_once_t membarrier_once = PTHREAD_ONCE_INIT;
static int membarrier_ok;

static void membarrier_setup(void) {
    long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    membarrier_ok = cmds >= 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
                    syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

int fk__force_available(void) {
    pthread_once(&membarrier_once, membarrier_setup);
    return membarrier_ok;
}

#if !FK_LIVE /* (the ring's hint) */
int fk__deque_has_private(const fk_worker *v) {
    /* A hint read without the lock: cur, splitp and split_lapped may be of different moments
     * (then the forcing finds nothing to do, or the next look finds the work).  A request's
     * SPLIT_ASK hides split: perhaps (forcing decides under the lock).  Once the buffer has
     * wrapped under private slots (split in an older lap than bottom), split's slot may lie
     * above cur: cur > splitp alone said "nothing" for private work, and under heartbeat
     * promotion, where no thief's request sets SPLIT_ASK, an owner in a long leaf kept it
     * from every thief (greedy_beat, 4 leaves waiting for each other: 1 met in 30 s). */
    fk__slot *sp = atomic_load_explicit(&v->hot->splitp, memory_order_relaxed);
    return sp == SPLIT_ASK || atomic_load_explicit(&v->hot->cur, memory_order_relaxed) > sp ||
           atomic_load_explicit(&v->split_lapped, memory_order_relaxed);
}

#endif

void fk__deque_beat(fk_worker *w) {
    if (fk__deque_has_private(w))
        ask_owner(w);
}

/* How many slots from split (s) up the owner holds privately, as a forcing thief sees them
 * before its membarrier() (a hint: the owner runs on), and how many of the oldest k of them
 * are still there after it.  The ring reads the cursor the owner stores; FK_LIVE's deque
 * (at the end of this file) counts the live marks. */
#if !FK_LIVE
static uint64_t forced_hint(const fk_worker *v, uint64_t s) {
    uint64_t b = fk__deque_bottom(v);
    return b > s ? b - s : 0;
}
static uint64_t forced_after_fence(const fk_worker *v, uint64_t s, uint64_t k) {
    /* Acquire: pairs with the owner's release stores of cur; the slots below it and what
     * they point to were written before. */
    uint64_t b2 = v->hot->lap + (uint64_t)(atomic_load_explicit(&v->hot->cur, memory_order_acquire) -
                                          v->hot->buf); /* the owner may be taking slot b2 now */
    return b2 > s ? (b2 - s < k ? b2 - s : k) : 0;
}
#else
static uint64_t forced_hint(const fk_worker *v, uint64_t s);
static uint64_t forced_after_fence(const fk_worker *v, uint64_t s, uint64_t k);
#endif

int fk__force_publish(fk_worker *v, int *tried) {
    if (tried)
        *tried = 0;
    if (!fk__force_available() || !dq_trylock(v))
        return 0;
    int published = 0;
    uint64_t s = v->hot->split, n = forced_hint(v, s);
    if (n > 0) {
        uint64_t k = (n + 1) / 2; /* half of the private slots, the oldest, at least one */
        set_split(v, s + k);
        if (tried)
            *tried = 1;
        /* The owner's fence, supplied by the kernel (see the comment at the top). */
        if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
            set_split(v, s);
        } else {
            uint64_t end = s + forced_after_fence(v, s, k);
            set_split(v, end);
            if (end > s) {
                atomic_store_explicit(&v->split_pub, end, memory_order_release);
                published = 1;
            }
        }
    }
    dq_unlock(v);
    return published;
}

#if FK_LIVE
/* ==== THE LIVE-MARK DEQUE (FK_LIVE: child-native) ==========================================
 * The owner's cursor lives in its tasks' registers (forkscope/impl.h, fk__push_live and
 * fk__pop_live): nothing stores it.  What a thief needs instead:
 *   - A record's link is its mark (never 0 in a live record): the push writes it last, the
 *     pop clears it before it reads split.  The slots [split, bottom) are then the live
 *     ones above split, and a forcing thief finds the bottom by them (after membarrier(),
 *     as the ring's reads cur).
 *   - The slots never move: one mapping of FK_LIVE_SLOTS, slot x at buf[x], no wrap, no
 *     growth, so a task's register names its slot for as long as its record lives.
 *   - The bottom never jumps.  A pop that finds its slot stolen leaves the owner's cursor at
 *     the scope's oldest record (every older one was stolen first), below top; the slow path
 *     then lowers top to that cursor at once, clears the marks the thieves left on the slots
 *     in between, and makes split and split_pub the same.  top packs a tag with the index,
 *     and the lowering moves the tag, so that a thief that read top before cannot succeed
 *     when top comes back up to what it read.  Indices then stay below the owner's depth
 *     in records.
 * models/force.pml -DLIVE -DLOWER checks this protocol (and refutes it without the tag,
 * with the stale marks left, or with top lowered before split_pub). */
_Static_assert(FK_LIVE_SLOTS >= 64 && FK_LIVE_SLOTS <= (1u << 31), "FK_LIVE_SLOTS: 64 to 2^31 slots (top's index has 32 bits)");
_Static_assert((FK_LIVE_SLOTS & (FK_LIVE_SLOTS - 1)) == 0, "FK_LIVE_SLOTS: a power of two (hot->mask)");

/* The push's limit when no thief asks: the last whole slot made usable so far. */
static fk__slot *live_end(const fk_worker *w) {
    fk__slot *b = w->hot->buf;
    uint64_t n = (uint64_t)((char *)w->live_committed - (char *)b) / sizeof(fk__slot);
    /* n - 1: the slot at the cursor stays usable after every fast push (thieves read it:
     * fk__deque_has_private at split_pub, a forcing's scan up to the first clear mark). */
    return b + (n - 1 < w->dq_cur->cap ? n - 1 : w->dq_cur->cap);
}

/* The slots are committed (made readable and writable) in steps of this many bytes as the
 * deque first reaches them: the rest of the reservation is address space only (PROT_NONE),
 * which no commit limit (vm.overcommit_memory=2) or RLIMIT_DATA counts. */
#define LIVE_COMMIT ((size_t)1 << 16)

/* The reservation: FK_LIVE_SLOTS slots, or fewer where the address space is limited (ulimit
 * -v): halved down to 2^16 slots (4 MiB).  Only its header and first LIVE_COMMIT bytes of
 * slots are usable at first. */
static fk__dqbuf *live_buf_new(fk_worker *w) {
    for (uint64_t cap = FK_LIVE_SLOTS;; cap /= 2) {
        fk__dqbuf *b = buf_new_(w, cap, LIVE_COMMIT, &w->live_committed);
        if (b) {
#ifdef MADV_NOHUGEPAGE
            (void)madvise(b->mem, b->mem_bytes, MADV_NOHUGEPAGE); /* (a 2 MiB page at the first push: MRSS) */
#endif
            return b;
        }
        if (cap <= ((uint64_t)1 << 16))
            return NULL;
    }
}

/* Slot x's mark, as a thief reads it (acquire: pairs with the push's release store of the
 * link; the record's other words are then visible). */
static int live_mark(const fk_worker *v, uint64_t x) {
    return atomic_load_explicit(&v->hot->buf[x].link, memory_order_acquire) != 0;
}

/* How many slots from x up, at most n, are live (marks set), to the first clear one. */
static uint64_t live_run(const fk_worker *v, uint64_t x, uint64_t n) {
    uint64_t k = 0, cap = v->dq_cur->cap;
    while (k < n && x + k < cap && live_mark(v, x + k))
        k++;
    return k;
}

/* Owner, cur >= limit: the end of the usable slots, or a request (a thief's, a beat's).  The
 * record (in the hot state's scratch) goes to cur, its link last; a request is served with
 * the oldest private slots, the new one counted among them. */
void fk__push_slow(fk__slot *cur) {
    fk_worker *w = FK__H->w;
    dq_lock(w);
    uint64_t i = (uint64_t)(cur - w->hot->buf);
    if (i >= w->dq_cur->cap)
        fk__fatal("worker %u's deque is full: %llu records wait for their joins (FK_LIVE_SLOTS, "
                  "forkscope/config.h; fewer if the address space was limited)", w->id, (unsigned long long)i);
    if ((char *)(cur + 2) > w->live_committed) { /* the slots up to cur + 1 (the next cursor's) */
        char *end = (char *)w->dq_cur->mem + w->dq_cur->mem_bytes; /* (slot cap lies inside) */
        char *to = (char *)(((uintptr_t)(cur + 2) + LIVE_COMMIT - 1) & ~(uintptr_t)(LIVE_COMMIT - 1));
        if (to > end)
            to = end;
        if (mprotect(w->live_committed, (size_t)(to - w->live_committed), PROT_READ | PROT_WRITE) != 0)
            fk__fatal("worker %u's deque could not grow past %llu slots (mprotect: %s)", w->id,
                      (unsigned long long)i, strerror(errno));
        w->live_committed = to;
    }
    copy_slot(cur, &w->hot->scratch); /* (the mark last) */
    push_slow_end(w, 0, i + 1);
}

/* Top lowered to b, the owner's cursor, after a pop found the deque emptied (under dq_lock;
 * nothing is public: split_pub <= top).  The marks thieves left in [b, top) are cleared
 * (stolen slots keep theirs, and a forcing thief's scan must stop at the bottom), split and
 * split_pub become b, and top becomes b with its tag moved on. */
static void lower(fk_worker *w, uint64_t b) {
    uint64_t t = atomic_load_explicit(&w->top, memory_order_relaxed);
    for (uint64_t x = b; x < TOP_IDX(t); x++)
        atomic_store_explicit(&w->hot->buf[x].link, 0, memory_order_relaxed);
    w->hot->split = b;
    atomic_store_explicit(&w->split_pub, b, memory_order_relaxed);
    FK_CHAOS_POINT();
    /* seq_cst: after the stores above, as the model's locked CAS.  No thief moves top now
     * (nothing is public), and one whose CAS compares an older value fails on the tag. */
    uint64_t nt = ((TOP_TAG(t) + 1) << 32) | b;
    if (!atomic_compare_exchange_strong_explicit(&w->top, &t, nt, memory_order_seq_cst, memory_order_relaxed))
        fk__fatal("internal error: worker %u's top moved while nothing was public", w->id);
}

/* FK_LIVE's tail of a reclaim of slot i (reclaim_head): top ends at the owner's cursor or
 * below it: [top, i) stay public (i ours), or top is lowered to i (ours, won in the race
 * for the last public slot) or to i - older (stolen, with the `older` records of the scope
 * below it). */
static int reclaim_tail(fk_worker *w, uint64_t i, uint32_t older, int mine, int won) {
    if (mine) { /* slots [top, i) stay public; i is ours */
        w->hot->split = i;
        return 1;
    }
    if (!won && older > i)
        fk__fatal("internal error: worker %u's scope has %u records below slot %llu", w->id, older,
                  (unsigned long long)i);
    lower(w, won ? i : i - older);
    return won;
}

/* The fast pop of slot s failed (split above it: a thief's request, a forcing thief that
 * gave the slot back, or public).  Under dq_lock: s if it is ours, else NULL (stolen: the
 * deque's bottom is now s - older, the scope's oldest record). */
const fk__record *fk__pop_slow(fk__slot *s, uint32_t older) {
    fk_worker *w = FK__H->w;
    dq_lock(w);
    uint64_t i = (uint64_t)(s - w->hot->buf);
    const fk__record *r = s;
    if (i >= w->hot->split) /* private after all; a request below it is answered */
        answer_at_pop(w, i);
    else if (!reclaim(w, i, older))
        r = NULL;
    set_split(w, w->hot->split); /* (a request's SPLIT_ASK gone) */
    dq_unlock(w);
    return r;
}

int fk__deque_has_private(const fk_worker *v) {
    /* A hint read without the lock (forcing decides under it): a request's SPLIT_ASK hides
     * split; else the slot at split_pub (split, but for a moment in a slow path) is live. */
    fk__slot *sp = atomic_load_explicit(&v->hot->splitp, memory_order_relaxed);
    uint64_t s = atomic_load_explicit(&v->split_pub, memory_order_relaxed);
    return sp == SPLIT_ASK || (s < v->dq_cur->cap && live_mark(v, s));
}

/* (fk__force_publish's counts: the live marks from split up, before membarrier() a hint,
 * after it the live ones of the oldest k: the owner may be clearing the next mark now.  The
 * hint reads at most FORCE_SCAN slots, so that a forcing holds the owner's lock for a few
 * hundred slots' reads at most: an owner that forked a million leaves and sits in another
 * gives FORCE_SCAN / 2 a forcing, and its thieves come back for more.) */
#define FORCE_SCAN 256
static uint64_t forced_hint(const fk_worker *v, uint64_t s) { return live_run(v, s, FORCE_SCAN); }
static uint64_t forced_after_fence(const fk_worker *v, uint64_t s, uint64_t k) { return live_run(v, s, k); }
#endif
