/* deque.c — the work-stealing deque: a split deque with no fence on the owner's path.
 *
 * Indices are 64-bit and only grow (they never wrap); slot x lives at buf[x & mask].
 *
 *     top            split            bottom
 *      |  public      |   private       |
 *      v  (thieves)   v   (owner only)  v
 *
 * Thieves take the oldest public slot with a CAS on `top`.  The owner pushes and pops at
 * `bottom` with plain stores while the slot is private; that is the fast path (inline, in
 * forkscope/impl.h).  A thief that finds nothing public asks for work by storing 0 into the
 * owner's `limit`; the owner's next push then takes the slow path here and publishes its
 * oldest private slot (release store of split_pub).  When the owner pops a slot that is
 * public it takes it back as Chase-Lev's pop does, with one seq_cst fence and, for the last
 * public slot, a CAS race on `top`.  The fence-free owner path is Lace's idea (van Dijk &
 * van de Pol); the public part follows Chase-Lev with the orderings of Lê et al. (2013). */
#include <stdlib.h>

#include "worker.h"

#ifndef FK_PUBLISH_BATCH
#define FK_PUBLISH_BATCH 1 /* private slots made public per request (the oldest ones) */
#endif

static fk__dqbuf *buf_new(uint64_t cap) {
    fk__dqbuf *b = malloc(sizeof *b + cap * sizeof(fk__slot));
    if (b) {
        b->cap = cap;
        b->prev = NULL;
    }
    return b;
}

/* ---- the owner's cursor ----------------------------------------------------------------
 * The fast path knows only pointers (cur, splitp, limit); these convert to and from the
 * indices that the protocol is written in. */

uint64_t fk__deque_bottom(const fk_worker *w) {
    return w->hot.lap + (uint64_t)(w->hot.cur - w->hot.buf);
}

static void set_bottom(fk_worker *w, uint64_t b) {
    w->hot.lap = b & ~w->hot.mask;
    w->hot.cur = w->hot.buf + (b & w->hot.mask);
}

static void set_split(fk_worker *w, uint64_t s) {
    w->hot.split = s;
    w->hot.splitp = w->hot.buf + (s & w->hot.mask);
}

/* The slot at which push must stop: the end of the buffer, or the slot of index t + cap
 * (which must not be overwritten: it still holds index t) if that comes first. */
static fk__slot *limit_for(const fk_worker *w, uint64_t t) {
    uint64_t stop = t + w->dq_cur->cap, lap = w->hot.lap;
    if (stop < lap + w->dq_cur->cap)
        return w->hot.buf + (stop - lap);
    return w->hot.buf + w->dq_cur->cap;
}

int fk__deque_init(fk_worker *w) {
    fk__dqbuf *b = buf_new(FK_DEQUE_INITIAL);
    if (!b)
        return FK_ENOMEM;
    w->dq_cur = b;
    w->hot.buf = b->slots;
    w->hot.mask = b->cap - 1;
    set_bottom(w, 0);
    set_split(w, 0);
    atomic_store_explicit(&w->hot.limit, limit_for(w, 0), memory_order_relaxed);
    atomic_store_explicit(&w->top, 0, memory_order_relaxed);
    atomic_store_explicit(&w->split_pub, 0, memory_order_relaxed);
    atomic_store_explicit(&w->dq_buf, b, memory_order_relaxed);
    return 0;
}

void fk__deque_destroy(fk_worker *w) {
    for (fk__dqbuf *b = w->dq_cur, *prev; b; b = prev) {
        prev = b->prev;
        free(b);
    }
    w->dq_cur = NULL;
}

static void copy_slot(fk__slot *dst, const fk__slot *src) {
#if FK_STEAL == FK_STEAL_CONT
    atomic_store_explicit(&dst->frame, atomic_load_explicit(&src->frame, memory_order_relaxed),
                          memory_order_relaxed);
#else
    atomic_store_explicit(&dst->thunk, atomic_load_explicit(&src->thunk, memory_order_relaxed), memory_order_relaxed);
    atomic_store_explicit(&dst->link, atomic_load_explicit(&src->link, memory_order_relaxed), memory_order_relaxed);
    atomic_store_explicit(&dst->ret, atomic_load_explicit(&src->ret, memory_order_relaxed), memory_order_relaxed);
    for (int i = 0; i < FK_RECORD_ARG_WORDS; i++)
        atomic_store_explicit(&dst->args[i], atomic_load_explicit(&src->args[i], memory_order_relaxed),
                              memory_order_relaxed);
#endif
}

/* Doubles the buffer, copying the live slots [t, b). */
static void grow(fk_worker *w, uint64_t t, uint64_t b) {
    fk__dqbuf *old = w->dq_cur;
    fk__dqbuf *nb = buf_new(old->cap * 2);
    if (!nb)
        fk__fatal("out of memory growing a deque to %llu slots", (unsigned long long)old->cap * 2);
    for (uint64_t x = t; x < b; x++)
        copy_slot(&nb->slots[x & (nb->cap - 1)], &old->slots[x & (old->cap - 1)]);
    nb->prev = old;
    w->dq_cur = nb;
    w->hot.buf = nb->slots;
    w->hot.mask = nb->cap - 1;
    set_bottom(w, b);
    set_split(w, w->hot.split);
    /* Release: a thief that loads this pointer (acquire, in fk__steal) sees the copies. */
    atomic_store_explicit(&w->dq_buf, nb, memory_order_release);
}

fk__slot *fk__push_slow(fk_worker *w) {
    struct fk__hot *h = &w->hot;
    fk__slot *lim = atomic_load_explicit(&h->limit, memory_order_relaxed);
    uint64_t b = fk__deque_bottom(w);
    /* Acquire: pairs with the thieves' CAS on top, so that the slots they took are theirs
     * before this push may write over them. */
    uint64_t t = atomic_load_explicit(&w->top, memory_order_acquire);
    if (b - t >= w->dq_cur->cap)
        grow(w, t, b);
    else
        set_bottom(w, b); /* at the end of the buffer: wrap to its start */
    int keep_asking = 0;
    if (lim == NULL) { /* a thief asked for work: publish the oldest private slots */
        uint64_t n = b - h->split;
        if (n > FK_PUBLISH_BATCH)
            n = FK_PUBLISH_BATCH;
        if (n) {
            set_split(w, h->split + n);
            /* Release: pairs with the thief's acquire load of split_pub; it then sees the
             * published slots and everything the owner wrote before pushing them (the
             * frames the slots point to). */
            atomic_store_explicit(&w->split_pub, h->split, memory_order_release);
            FK__WSTAT(w, publishes);
        } else {
            keep_asking = 1; /* nothing to give yet: publish at the next push */
        }
    }
    fk__slot *newlim = keep_asking ? NULL : limit_for(w, t);
    /* A thief may have stored NULL since we read lim: then keep its NULL (the CAS fails). */
    atomic_compare_exchange_strong_explicit(&h->limit, &lim, newlim, memory_order_relaxed, memory_order_relaxed);
    return h->cur;
}

/* The owner takes back slot i = bottom - 1, which is public (so split == bottom).
 * Returns 1 if it is ours again, 0 if a thief has it; either way bottom and split end
 * consistent and, if the deque is now empty, top == split == bottom. */
static int reclaim(fk_worker *w, uint64_t i) {
    atomic_store_explicit(&w->split_pub, i, memory_order_relaxed);
    /* seq_cst fence, pairs with the fence in fk__steal (store-load, as Dekker): either the
     * thief's load of split_pub sees i, so it will not take slot i, or our load of top
     * below sees its claim (its CAS, or the top it loaded before its fence). */
    atomic_thread_fence(memory_order_seq_cst);
    uint64_t t = atomic_load_explicit(&w->top, memory_order_relaxed);
    FK__WSTAT(w, reclaims);
    if (t < i) { /* slots [t, i) stay public; i is private again */
        set_split(w, i);
        set_bottom(w, i);
        return 1;
    }
    int won = 0;
    if (t == i) /* the last public slot: race the thieves for it */
        won = atomic_compare_exchange_strong_explicit(&w->top, &t, i + 1, memory_order_seq_cst,
                                                      memory_order_relaxed);
    /* Empty now, with top == i + 1. */
    set_bottom(w, i + 1);
    set_split(w, i + 1);
    atomic_store_explicit(&w->split_pub, i + 1, memory_order_relaxed);
    return won;
}

/* The newest slot, index i = bottom - 1: private (the fast path's test failed only because
 * the buffer wrapped; step back a lap) or public (reclaim it). */
static int take_newest(fk_worker *w, uint64_t i) {
    if (i >= w->hot.split) {
        set_bottom(w, i);
        return 1;
    }
    return reclaim(w, i);
}

#if FK_STEAL == FK_STEAL_CONT
int fk__pop_slow(fk_worker *w) {
    return take_newest(w, fk__deque_bottom(w) - 1);
}
#else
const fk__record *fk__pop_slow(fk_worker *w, fk_frame *f, uint32_t nrec) {
    uint64_t i = fk__deque_bottom(w) - 1;
    if (take_newest(w, i)) /* bottom is now i, or i + 1 == top if the deque emptied */
        return &w->hot.buf[i & w->hot.mask];
    /* Slot i was stolen, and so were all older ones: all of f's records. */
    f->steals += nrec;
    return NULL;
}
#endif

/* The owner takes its newest slot, whoever pushed it (records left behind by frames that
 * unwound).  Returns 1 with a copy in *out, 0 if the deque is empty or the slot was stolen. */
int fk__pop_leftover(fk_worker *w, fk__slot *out) {
    uint64_t b = fk__deque_bottom(w);
    if (b == atomic_load_explicit(&w->top, memory_order_relaxed))
        return 0;
    if (!take_newest(w, b - 1))
        return 0;
    copy_slot(out, &w->hot.buf[(b - 1) & w->hot.mask]);
    return 1;
}

int fk__steal(fk_worker *v, fk__slot *out) {
    /* Acquire: pairs with the CAS of the thief that moved top here (see reclaim's fence
     * argument: a later seq_cst fence must order after that CAS). */
    uint64_t t = atomic_load_explicit(&v->top, memory_order_acquire);
    atomic_thread_fence(memory_order_seq_cst); /* pairs with the fence in reclaim */
    /* Acquire: pairs with the release store of split_pub in fk__push_slow. */
    uint64_t s = atomic_load_explicit(&v->split_pub, memory_order_acquire);
    if (t >= s) {
        /* Nothing public: ask the owner to publish (only if not asked already, so that
         * idle thieves do not keep invalidating the owner's cache line). */
        if (atomic_load_explicit(&v->hot.limit, memory_order_relaxed) != 0)
            atomic_store_explicit(&v->hot.limit, NULL, memory_order_relaxed);
        return FK__STEAL_EMPTY;
    }
    /* Acquire: pairs with the release store in grow (the copied slots). */
    fk__dqbuf *b = atomic_load_explicit(&v->dq_buf, memory_order_acquire);
    copy_slot(out, &b->slots[t & (b->cap - 1)]);
    /* The slot we read is ours only if top is still t: any overwrite of slot t needs the
     * owner to have seen top > t first.  seq_cst: ordered with the owner's fence. */
    if (!atomic_compare_exchange_strong_explicit(&v->top, &t, t + 1, memory_order_seq_cst,
                                                 memory_order_relaxed))
        return FK__STEAL_LOST;
    return FK__STEAL_OK;
}
