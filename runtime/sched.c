/* sched.c — what a worker does: run, join, steal, sleep.  (Fibers park and resume in
 * sched_fiber.c; the worker loop's steps here are theirs too.)
 *
 * THE JOIN PROTOCOL (split counter, after Nowa and libfork)
 *   A frame's `steals` counts the children of its current scope that will finish on some
 *   worker other than the one running the frame's code (continuation stealing: one per
 *   theft of the frame's continuation; child stealing: stolen or detached records).  Each
 *   such child, when it finishes, arrives at the frame's join counter with 1; the frame
 *   arrives with K - steals when it reaches FK_JOIN.  Whoever makes the counter reach K
 *   continues the frame after its join.  If nothing was stolen, FK_JOIN costs one test.
 *
 * STACK OWNERSHIP
 *   A worker arriving at a frame's counter either holds the frame's stack with the frame on
 *   top (its stack is not empty), or holds an empty stack (the frame lives elsewhere).  In
 *   the first case it records the stack in the frame; if it is not last, it lets the stack
 *   go and takes a fresh one.  The last arriver adopts the recorded stack if its own is
 *   empty.  So a stack always belongs to the worker running its top frame, and frames are
 *   freed in FILO order on every stack (Williams & Elliott, Algorithms 4 and 5).
 *
 * UNWINDING
 *   A task whose C frame is dead because the rest of it (or of a descendant) will run
 *   elsewhere stores no result (it stores it itself when it finishes) and leaves the C
 *   stack: with continuation stealing by jumping back to where the worker's loop entered
 *   task code (every C frame in between is dead too; fk__unwind), with child stealing by
 *   setting its worker's `unwinding` flag and returning.  A resumed frame is entered from
 *   `trampoline`, never from deep C recursion, so the C stack of a worker stays as deep as
 *   one strand of fast-path calls. */

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "guard.h"
#include "worker.h"
#include "chaos.h"

/* The hot state of this thread's worker (forkscope/impl.h); zero on other threads. */
_Thread_local struct fk__hot fk__tls __attribute__((tls_model(FK_TLS_MODEL)));

#if FK_STACK == FK_STACK_FIBER && !defined(__x86_64__)
FK__NOINLINE struct fk__hot *fk__hot_now_out(void) {
    struct fk__hot *h = &fk__tls;
    __asm__ volatile("" : "+r"(h)::"memory");
    return h;
}
#endif

fk_worker *fk__current_worker(void) { return FK__H->w; }

unsigned fk__worker_id(void) { return FK__H->w->id; }

static void futex_wait(_Atomic uint32_t *addr, uint32_t expected) {
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *addr, int n) {
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- joins ---------------------------------------------------------------------------- */

#if !FK__NATIVE_FRAMES
int fk__arrive(fk_worker *w, fk_frame *f, uint32_t add) {
    int mine = !fk__stack_empty(w);
#if FK_DEBUG
    if (mine != fk__stack_holds(w, f))
        fk__fatal("internal error: worker %u arrives at frame %p with %s stack that %s it", w->id, (void *)f,
                  mine ? "a busy" : "an empty", fk__stack_holds(w, f) ? "holds" : "does not hold");
#endif
    if (mine)
        f->stack = fk__stack_handle(w);
    FK_CHAOS_POINT();
    /* acq_rel: the release half publishes what we did before arriving (a child's result,
     * f->stack) to the last arriver; the acquire half gives the last arriver everyone's. */
    uint32_t old = atomic_fetch_add_explicit(&f->joins, add, memory_order_acq_rel);
    FK_CHAOS_POINT(); /* arrived: the last arriver may resume f (and adopt its stack) now */
    if (old + add != FK__JOIN_K) {
        FK__WSTAT(w, suspends);
        if (mine)
            fk__stack_replace(w); /* f's stack now belongs to whoever resumes f */
        return 0;
    }
    if (!mine)
        fk__stack_adopt(w, f->stack);
    f->steals = 0;
    atomic_store_explicit(&f->joins, 0, memory_order_relaxed);
    return 1;
}

#if FK_STEAL == FK_STEAL_CONT
/* The task macros' join with stolen children: returns if we are last, else unwinds. */
void fk__join(fk_frame *f) {
    fk_worker *w = FK__H->w;
    FK__ACCT(w, FK_TIME_JOIN);
    if (!fk__arrive(w, f, FK__JOIN_K - f->steals))
        fk__unwind(w);
    FK__ACCT(w, FK_TIME_WORK);
}
#else
/* The task macros' join with stolen children: 1 to go on, 0 (unwinding set) to unwind. */
int fk__join(fk_frame *f) {
    struct fk__hot *h = FK__H;
    FK__ACCT(h->w, FK_TIME_JOIN);
    if (fk__arrive(h->w, f, FK__JOIN_K - f->steals)) {
        FK__ACCT(h->w, FK_TIME_WORK);
        return 1;
    }
    h->unwinding = 1;
    return 0;
}
#endif
#endif

#if FK_STEAL == FK_STEAL_CHILD && !FK__NATIVE_FRAMES
/* f's inline child unwound during f's join: that child and f's records left finish
 * elsewhere.  f arrives now; if it is last, it is resumed once this worker's C stack has
 * unwound (its ancestors' C frames are dead too), on its own stack. */
void fk__join_unwound(fk_frame *f, uint32_t detached) {
    fk_worker *w = FK__H->w;
    f->steals += detached;
    f->nrec = 0;
    uint32_t add = FK__JOIN_K - f->steals;
    uint32_t old = atomic_fetch_add_explicit(&f->joins, add, memory_order_acq_rel);
    if (old + add != FK__JOIN_K) {
        FK__WSTAT(w, suspends);
        return;
    }
    f->steals = 0;
    atomic_store_explicit(&f->joins, 0, memory_order_relaxed);
    if (w->pending)
        fk__fatal("internal error: two frames pending on worker %u", w->id);
    w->pending = f;
}
#endif

/* ---- running frames and records ------------------------------------------------------ */

static void root_done(fk__root *r) {
    /* Release: pairs with the submitter's acquire load; it then sees the result. */
    atomic_store_explicit(&r->done, 1, memory_order_release);
    futex_wake(&r->done, 1);
}

#if !FK__NATIVE_FRAMES
/* A task with the given link completed: who runs next (NULL: nobody, go steal). */
static fk_frame *complete(fk_worker *w, uintptr_t link) {
    if (link & FK__LINK_ROOT) {
        root_done((fk__root *)(link & ~FK__LINK_MASK));
        return NULL;
    }
    fk_frame *p = (fk_frame *)(link & ~FK__LINK_MASK);
    if (link & FK__LINK_CALLED) {
#if FK_STEAL == FK_STEAL_CHILD
        p->steals += p->nrec; /* p's records left on the worker it unwound from */
        p->nrec = 0;
#endif
        return p; /* p waits right after the call, on the same stack */
    }
    return fk__arrive(w, p, 1) ? p : NULL;
}

static fk_frame *take_pending(fk_worker *w) {
#if FK_STEAL == FK_STEAL_CHILD
    fk_frame *f = w->pending;
    if (f) {
        w->pending = NULL;
        if (!fk__stack_empty(w))
            fk__fatal("internal error: worker %u resumes a pending frame on a busy stack", w->id);
        fk__stack_adopt(w, f->stack);
    }
    return f;
#else
    (void)w;
    return NULL;
#endif
}

/* Entering task code from the bottom of this worker's C stack: resuming frame f, or running
 * record r.  1 if the code unwound, 0 if it completed.  Continuation stealing: an unwinding
 * task jumps back here (fk__unwind); child stealing: it returns with the flag set. */
static void run_task_code(fk_frame *f, const fk__record *r) {
    if (f)
        f->rp->info->resume(f);
    else
        fk__record_thunk(r)(r);
}

#if FK_STEAL == FK_STEAL_CONT
_Noreturn void fk__unwind(fk_worker *w) { siglongjmp(w->unwind_to, 1); }

static FK__NOINLINE int enter(fk_worker *w, fk_frame *f, const fk__record *r) {
    if (sigsetjmp(w->unwind_to, 0))
        return 1;
    run_task_code(f, r);
    return 0;
}
#else
static int enter(fk_worker *w, fk_frame *f, const fk__record *r) {
    run_task_code(f, r);
    int u = w->hot->unwinding;
    w->hot->unwinding = 0;
    return u;
}
#endif

/* After a task returned at the bottom of this worker's C stack: if it unwound, take a
 * pending frame (child stealing); if it completed, announce it. */
static fk_frame *after_run(fk_worker *w, uintptr_t link, int unwound_) {
    return unwound_ ? take_pending(w) : complete(w, link);
}

/* Resumes f, then whatever its completion makes runnable, until nothing is.  A resumed
 * frame is entered from here, never from deep C recursion, so the C stack of a worker
 * stays as deep as one strand of fast-path calls. */
static void trampoline(fk_worker *w, fk_frame *f) {
    while (f) {
        uintptr_t link = f->link;
#if FK_DEBUG
        if (f->dbg_magic != FK__DBG_MAGIC)
            fk__fatal("internal error: worker %u resumes a dead frame %p", w->id, (void *)f);
#endif
        FK__ACCT_NAMED(w, FK_TIME_WORK, f->rp->info->name);
        int u = enter(w, f, NULL);
        FK__ACCT(w, FK_TIME_JOIN);
        f = after_run(w, link, u);
    }
}

/* Runs a record (a root, or with child stealing a stolen or left-over child) detached:
 * its completion is announced to its parent through the join counter. */
static void run_record(fk_worker *w, const fk__record *r) {
    uintptr_t link = fk__record_link(r);
#if FK_DEBUG
    if (!fk__stack_empty(w))
        fk__fatal("internal error: worker %u runs a detached record on a busy stack", w->id);
#endif
    int u = enter(w, NULL, r);
    FK__ACCT(w, FK_TIME_JOIN);
    trampoline(w, after_run(w, link, u));
}
#elif FK_STACK == FK_STACK_FIBER
/* Fibers: a record runs on the current fiber; if it parks, the fiber may finish it on
 * another worker.  Then the record reports to its parent's join cell (the last arrival
 * makes the parked parent ready) or to the root's submitter. */
static void run_record(fk_worker *w, const fk__record *r) {
    uintptr_t link = fk__record_link(r);
    fk__record_thunk(r)(r);
    if (link & FK__LINK_ROOT) {
        root_done((fk__root *)(link & ~FK__LINK_MASK));
        return;
    }
    if (link & FK__LINK_COUNTER) { /* FK_SPAWN / fk_spawn */
        fk_counter_done((fk_counter *)(link & ~FK__LINK_MASK));
        return;
    }
    fk_frame *cell = (fk_frame *)link;
    FK__REFRESH(w);
    /* Release: the child's result before the parent's acquire; acquire: the parent's
     * waiter, stored before its own (release) arrival, if that came first. */
    FK_CHAOS_POINT();
    if (atomic_fetch_add_explicit(&cell->done, 1, memory_order_acq_rel) + 1 == FK__JOIN_K)
        fk__fiber_make_ready(w, cell->waiter);
}
#else
/* Native frames: a stolen child runs to completion on this C stack (it never unwinds),
 * then reports to its parent's join cell, or to the root's submitter.  FK_LIVE: it runs
 * over the deque from cursor fk__rc (the worker loop: the deque's first slot; a join
 * that leapfrogs: its own cursor). */
static void run_record(fk_worker *w, const fk__record *r FK__RC_PARAM) {
    uintptr_t link = fk__record_link(r);
    if (link & FK__LINK_ROOT) {
        fk__record_thunk(r)(r FK__RC(fk__rc));
        root_done((fk__root *)(link & ~FK__LINK_MASK));
        return;
    }
    fk_frame *cell = (fk_frame *)link;
    /* The parent is waiting (or will wait) at its join for this child: say who has it, so
     * that it can steal back from us meanwhile. */
    atomic_store_explicit(&cell->thief, w->id + 1, memory_order_relaxed);
    fk__record_thunk(r)(r FK__RC(fk__rc));
    /* Release: the child's result (and everything it wrote) before the parent's acquire
     * load of done. */
    atomic_fetch_add_explicit(&cell->done, 1, memory_order_release);
}
#endif
/* What a record run from the worker's loop starts from (FK_LIVE: the deque's first slot,
 * where every task that began there has left the cursor). */
#if FK_LIVE
#define LOOP_CUR(w) FK__RC((w)->hot->buf)
#else
#define LOOP_CUR(w)
#endif

/* ---- lazy scheduler: who is awake ---------------------------------------------------- *
 * active: workers running tasks (pool-wide); groups[g].thieves: workers of group g (a NUMA
 * node) awake looking for work.  Invariant (Lin, Huang & Wong, per node as in libfork):
 * while active > 0, every group has a thief awake, except for the moment between a
 * group's last thief turning active and the member it wakes registering as a thief.
 * When the pool goes from idle to active, every group without a thief gets one woken.  A worker
 * sleeps on its own futex word; sleepers[] says who sleeps, so a waker can pick one.
 *
 * ORDERING.  Every operation on active, thieves[], sleepers[] and wake_epoch is seq_cst:
 * the protocol is two store-buffering (Dekker) pairs, and each side must see the other's
 * store or have its own seen.
 *  (A) a sleeper and a waker.  try_sleep: set its sleeper bit (S1), fence (F1), then load
 *      the inbox, active and thieves (L1).  fk__wake / wake_one: the waker's publication
 *      (a root in the inbox, the increment of active in become_active, the decrement of
 *      thieves) (S2), fence (F2), then load the sleeper bit (L2).  F1 and F2 are totally
 *      ordered: if F1 is first, L2 sees S1 and the waker wakes it; if F2 is first, L1 sees
 *      S2 and the sleeper cancels.  Never both miss (the lost wake-up).
 *  (B) the last thief.  try_sleep decrements thieves then loads active; become_active
 *      increments active then decrements thieves (its fetch_sub result tells it whether it
 *      took the last thief).  Both RMWs and loads are seq_cst, so of a worker going to
 *      sleep and a worker going active at once, at least one sees the other: the sleeper
 *      sees active > 0 and stays up, or the new active worker sees thieves reach 0 and
 *      wakes a replacement (through (A)).
 *  wake_bit's fetch_and on the sleeper bit decides which waker owns a sleeper (one futex
 *  wake per sleep); its wake_epoch increment is what futex_wait compares against, so a
 *  wake between try_sleep's epoch load and its futex_wait makes the wait return at once. */

static int wake_bit(fk_worker *w) {
    fk_pool *p = w->pool;
    uint64_t bit = 1ull << (w->id % 64);
    /* the one waker that clears the bit wakes it (ORDERING, last paragraph) */
    if (!(atomic_fetch_and_explicit(&p->sleepers[w->id / 64], ~bit, memory_order_seq_cst) & bit))
        return 0; /* not asleep, or someone else is waking it */
    FK_CHAOS_POINT(); /* between owning the wake and bumping the epoch */
    /* pairs with try_sleep's epoch load: a wake after it makes futex_wait return at once */
    atomic_fetch_add_explicit(&w->wake_epoch, 1, memory_order_seq_cst);
    futex_wake(&w->wake_epoch, 1);
    return 1;
}

void fk__wake(fk_worker *w) {
    /* F2 of (A): pairs with F1 in try_sleep (store-load): either we see its sleeper bit,
     * or it sees what we published before calling us (a root in its inbox). */
    atomic_thread_fence(memory_order_seq_cst);
    FK_CHAOS_POINT();
    uint64_t bit = 1ull << (w->id % 64);
    if (atomic_load_explicit(&w->pool->sleepers[w->id / 64], memory_order_seq_cst) & bit)
        wake_bit(w);
}

/* Wakes one sleeping member of group g, if there is one. */
static void wake_one(fk_pool *p, unsigned g) {
    /* F2 of (A): after the caller's change of active/thieves, before reading sleeper bits */
    atomic_thread_fence(memory_order_seq_cst);
    const fk__group *gr = &p->groups[g];
    for (unsigned i = 0; i < gr->n; i++) {
        unsigned k = gr->members[i];
        uint64_t bit = 1ull << (k % 64);
        if ((atomic_load_explicit(&p->sleepers[k / 64], memory_order_seq_cst) & bit) && wake_bit(p->workers[k]))
            return;
    }
}

/* FK_DEBUG: the counters stay within their bounds (a transition counted twice or lost would
 * break the lazy scheduler's invariant: while any worker is active, each group has a thief
 * awake).  (Each bound reads its counter afresh; other builds read nothing.) */
static void check_counts(const fk_pool *p, unsigned g) {
    FK__ASSERT_CMP(atomic_load(&p->groups[g].thieves), >=, 0);
    FK__ASSERT_CMP(atomic_load(&p->groups[g].thieves), <=, (int)p->groups[g].n);
    FK__ASSERT_CMP(atomic_load(&p->active), >=, 0);
    FK__ASSERT_CMP(atomic_load(&p->active), <=, (int)p->n);
}

static void become_active(fk_worker *w) {
    fk_pool *p = w->pool;
    /* A thief's hunger (for forcing a publication) counts from when it last had work, not
     * from before a root or a leftover came through its own queues: a worker that ran the
     * root after 100 ms idle forced a membarrier() every 50 us through a whole run (2,400
     * per run of heat on cont-seg at P = 2, every one of them while it did find work). */
    w->hungry_since = 0;
    if (atomic_load_explicit(&w->state, memory_order_relaxed) == FK__W_ACTIVE)
        return;
    atomic_store_explicit(&w->state, FK__W_ACTIVE, memory_order_relaxed);
    if (p->sched == FK_SCHED_LAZY) {
        fk__group *g = &p->groups[w->group];
        /* (B): active up first, then thieves down; the result says if we were the last */
        int was_idle = atomic_fetch_add_explicit(&p->active, 1, memory_order_seq_cst) == 0;
        if (atomic_fetch_sub_explicit(&g->thieves, 1, memory_order_seq_cst) == 1)
            wake_one(p, w->group); /* we were our group's last thief: wake a replacement */
        if (was_idle) { /* work appeared: every group without a thief gets one, and the heartbeat */
            for (unsigned h = 0; h < p->ngroups; h++)
                if (h != w->group && atomic_load_explicit(&p->groups[h].thieves, memory_order_seq_cst) == 0)
                    wake_one(p, h);
            fk__beat_wake(p);
        }
        check_counts(p, w->group);
    }
}

static void become_thief(fk_worker *w) {
    fk_pool *p = w->pool;
    if (atomic_load_explicit(&w->state, memory_order_relaxed) != FK__W_ACTIVE)
        return;
    if (p->sched == FK_SCHED_LAZY) {
        /* counted as a thief before it stops counting as active: never in neither count,
         * so no (B) check elsewhere can see its group thiefless because of it */
        atomic_fetch_add_explicit(&p->groups[w->group].thieves, 1, memory_order_seq_cst);
        atomic_fetch_sub_explicit(&p->active, 1, memory_order_seq_cst);
        check_counts(p, w->group);
    }
    atomic_store_explicit(&w->state, FK__W_THIEF, memory_order_relaxed);
}

/* A thief with nothing to do for a while: sleep unless it is its group's last thief while
 * some worker is active.  No wake-up is lost: a waker clears our sleeper bit and bumps our
 * epoch, and futex_wait returns at once if the epoch moved since we read it. */
static void try_sleep(fk_worker *w) {
    fk_pool *p = w->pool;
    _Atomic int *thieves = &p->groups[w->group].thieves;
    /* (B): thieves down, then load active (become_active does the mirror image) */
    int last = atomic_fetch_sub_explicit(thieves, 1, memory_order_seq_cst) == 1;
    FK_CHAOS_POINT();
    if (last && atomic_load_explicit(&p->active, memory_order_seq_cst) > 0) {
        atomic_fetch_add_explicit(thieves, 1, memory_order_seq_cst);
        return;
    }
    uint64_t bit = 1ull << (w->id % 64);
    uint32_t epoch = atomic_load_explicit(&w->wake_epoch, memory_order_seq_cst); /* vs wake_bit's increment */
    FK_CHAOS_POINT();
    atomic_store_explicit(&w->state, FK__W_ASLEEP, memory_order_relaxed);
    atomic_fetch_or_explicit(&p->sleepers[w->id / 64], bit, memory_order_seq_cst); /* S1 of (A) */
    FK_CHAOS_POINT(); /* between the sleeper's bit and its re-check */
    atomic_thread_fence(memory_order_seq_cst); /* F1: pairs with F2 in fk__wake, wake_one */
    int cancel = fk__stopping(p) || fk__mpsc_nonempty(&w->inbox) ||
                 (atomic_load_explicit(thieves, memory_order_seq_cst) == 0 &&
                  atomic_load_explicit(&p->active, memory_order_seq_cst) > 0);
    if (!cancel) {
        FK__WSTAT(w, sleeps);
        FK__ACCT(w, FK_TIME_SLEEP);
        futex_wait(&w->wake_epoch, epoch);
        FK__ACCT(w, FK_TIME_SEARCH);
    }
    atomic_fetch_and_explicit(&p->sleepers[w->id / 64], ~bit, memory_order_seq_cst);
    atomic_store_explicit(&w->state, FK__W_THIEF, memory_order_relaxed);
    atomic_fetch_add_explicit(thieves, 1, memory_order_seq_cst);
    check_counts(p, w->group);
}

/* ---- submissions --------------------------------------------------------------------- */

void fk__submit(fk_pool *p, fk__sub *sub, int worker) {
    fk_worker *target = NULL;
    if (worker >= 0) {
        target = p->workers[worker];
    } else { /* prefer a worker that is awake and idle, then a sleeping one, then any */
        unsigned n = p->n, start = atomic_fetch_add_explicit(&p->next_submit, 1, memory_order_relaxed) % n;
        fk_worker *sleeper = NULL;
        for (unsigned i = 0; i < n && !target; i++) {
            fk_worker *w = p->workers[(start + i) % n];
            int st = atomic_load_explicit(&w->state, memory_order_relaxed);
            if (st == FK__W_THIEF)
                target = w;
            else if (st == FK__W_ASLEEP && !sleeper)
                sleeper = w;
        }
        if (!target)
            target = sleeper ? sleeper : p->workers[start];
    }
    fk__mpsc_push(&target->inbox, &sub->node);
    fk__wake(target);
}

#if !FK__NATIVE_FRAMES
/* FK_SWITCH_TO: f asks to continue on worker k.  If f's stack is ours (f on top), it goes
 * with f; if our stack is empty, f lives on a stack nobody holds (it was stolen) and k runs
 * it on its own, as a thief would.  f's C frame then dies, and with it those of the
 * ancestors below it on this C stack: unwinding.  Every slot in our deque is the
 * continuation of one of those ancestors that forked, whose child (on the way to f) now
 * finishes elsewhere: they are published, and whatever thieves leave of them this worker
 * resumes as a thief would (drain_leftovers), once back in its loop. */
void fk__switch(fk_frame *f, unsigned k) {
    fk_worker *w = FK__H->w;
    fk_pool *p = w->pool;
    if (k >= p->n)
        fk__fatal("FK_SWITCH_TO(%u): the pool has %u workers", k, p->n);
    fk__hop *h = malloc(sizeof *h);
    if (!h)
        fk__fatal("out of memory for FK_SWITCH_TO");
    h->sub.kind = FK__SUB_FRAME;
    h->frame = f;
    h->stack = NULL;
#if FK_STEAL == FK_STEAL_CONT
    fk__deque_publish_all(w);
#endif
    if (!fk__stack_empty(w)) {
        h->stack = f->stack = fk__stack_handle(w);
        fk__stack_replace(w);
    }
    fk__submit(p, &h->sub, (int)k); /* the queue's release publishes f and its stack to k */
#if FK_STEAL == FK_STEAL_CONT
    fk__unwind(w);
#else
    w->hot->unwinding = 1;
#endif
}
#endif

#if FK_STACK == FK_STACK_NATIVE
/* ---- native frames: a join that waits ---------------------------------------------------
 * `stolen` children of the scope whose join cell is f were stolen; wait until all have
 * reported (f->done), doing useful work meanwhile:
 *  - leapfrogging: steal from the worker that took one of them (f->thief).  What it has
 *    public are descendants of the child it took (its older slots were all stolen before
 *    it could take ours), so each such steal runs a task deeper in the tree than the frame
 *    waiting here: a worker's C stack stays as deep as one path of the task tree;
 *  - every FK_LEAP_TRIES failed attempts, one steal from anyone (as an idle thief would),
 *    but only while this worker's C stack is shallower than fk_pool_opts.leap_stack_bytes, L
 *    (such a task may be shallow in the tree: it restarts the depth count).  Bound: a
 *    worker's C stack never holds more than L bytes plus one root-to-leaf path of the task
 *    tree, each level costing its task's C frame plus this function's and run_record's
 *    (tests/test_runtime.c, leap_stack_bounded);
 *  - force a publication from the thief if it does not answer (greediness).
 * Between attempts it pauses once, never longer: the loop is what keeps this worker busy,
 * and the awaited children may finish at any moment (a back-off that grew to 1,024 pauses,
 * ~40 us on cores whose pause takes ~140 cycles, left 16 workers waiting 77% of their time
 * on deep UTS trees; issue 19).  Only where the pool has more workers than CPUs does it
 * yield the CPU, once per FK_LEAP_TRIES failures: there the thief it waits for may be
 * waiting for this CPU. */
static int try_force(fk_worker *w, fk_worker *v);
static int take_from(fk_worker *w, fk_worker *v, fk__slot *s);

static size_t c_stack_used(const fk_worker *w) {
    char here;
    return (size_t)(w->stack_base - &here);
}

size_t fk__cstack_depth(void) { return c_stack_used(FK__H->w); }

/* One attempt of a waiting join: a steal from the awaited child's thief t (1 + its id, or 0
 * for none yet), or every FK_LEAP_TRIES failures (*fails counts them over the whole wait,
 * successes between them or not), from anyone while the C stack allows.  Which victim gave
 * the slot: *from. */
static int leap(fk_worker *w, uint32_t t, unsigned *fails, fk__slot *s, unsigned *from) {
    fk_pool *p = w->pool;
    unsigned v = t ? t - 1 : w->id;
    if (v != w->id && take_from(w, p->workers[v], s)) {
        *from = v;
        return 1;
    }
    if (++*fails % FK_LEAP_TRIES)
        return 0;
    if (p->crowded)
        sched_yield();
    if (p->n > 1 && c_stack_used(w) < p->opts.leap_stack_bytes) {
        v = fk__victim_pick(&w->victims);
        if (take_from(w, p->workers[v], s)) {
            *from = v;
            return 1;
        }
    }
    return 0;
}

/* One steal from v, forcing a publication if v has only private work (greedy: an owner
 * busy in a leaf or a join of its own is made to publish). */
static int take_from(fk_worker *w, fk_worker *v, fk__slot *s) {
    int r = fk__steal(v, s);
    return r == FK__STEAL_OK ||
           (r == FK__STEAL_EMPTY && fk__deque_has_private(v) && try_force(w, v) && fk__steal(v, s) == FK__STEAL_OK);
}

void fk__lf_join(fk_frame *f, uint32_t stolen FK__RC_PARAM) {
    fk_worker *w = FK__H->w;
    unsigned fails = 0, v;
    FK__WSTAT(w, suspends);
    FK__ACCT(w, FK_TIME_WAIT);
    /* Acquire: pairs with each thief's release increment; their children's results and
     * writes are then visible here. */
    while (atomic_load_explicit(&f->done, memory_order_acquire) < stolen) {
        fk__slot s;
        if (!leap(w, atomic_load_explicit(&f->thief, memory_order_relaxed), &fails, &s, &v)) {
            fk__cpu_pause();
            continue;
        }
        FK__WSTAT(w, leaps);
        w->hungry_since = 0;
        if (FK__ACCT_ON(w)) {
            fk__acct_event(w, FK__TEV_LEAP, v, 0);
            fk__acct_to(w, FK_TIME_WORK, "leapt child", 0);
        }
        run_record(w, &s FK__RC(fk__rc));
        FK__ACCT(w, FK_TIME_WAIT);
    }
    f->sync0 = 0; /* every thief is done with the cell: ready for the next scope */
    FK__ACCT(w, FK_TIME_WORK);
}
#endif

static void backoff(unsigned fails) {
    if (fails >= FK_BUSY_YIELD_AFTER) {
        sched_yield();
        return;
    }
    unsigned spins = 1u << (fails < 10 ? fails : 10);
    if (spins > FK_BUSY_MAX_PAUSE)
        spins = FK_BUSY_MAX_PAUSE;
    for (unsigned i = 0; i < spins; i++)
        fk__cpu_pause();
}

/* ---- the worker loop ----------------------------------------------------------------- */

/* A round of the worker loop that found nothing: back off, or (lazy) after enough such
 * rounds offer to sleep. */
static void idle_step(fk_worker *w, unsigned *fails) {
    if (++*fails >= FK_STEAL_ROUNDS && w->pool->sched == FK_SCHED_LAZY) {
        try_sleep(w);
        *fails = FK_STEAL_ROUNDS / 2; /* the last thief keeps backing off */
        return;
    }
    backoff(*fails);
}

/* Runs what a successful steal from victim v took.  (The accounting's steal part begins
 * here: the attempt itself was search, and a reading taken during it has counted it so.) */
static void run_stolen(fk_worker *w, fk__slot *s, unsigned v) {
    FK__WSTAT(w, steals);
    if (FK__ACCT_ON(w)) /* (the steal's event at the time its part began) */
        fk__acct_event(w, FK__TEV_STEAL, v, fk__acct_to(w, FK_TIME_STEAL, NULL, 0));
    become_active(w);
#if FK_STEAL == FK_STEAL_CONT && !FK__NATIVE_FRAMES
    fk_frame *f = atomic_load_explicit(&s->frame, memory_order_relaxed);
    f->steals++; /* we own f's continuation now; its other children arrive later */
    trampoline(w, f); /* (which accounts the frame's time as its task's work) */
#else
    FK__ACCT_NAMED(w, FK_TIME_WORK, "stolen child");
    run_record(w, s LOOP_CUR(w));
    FK__REFRESH(w);
#endif
    FK__ACCT(w, FK_TIME_SEARCH);
}

/* A thief that has found nothing for opts.force_after_us (FK_FORCE_AFTER_NS; under heartbeat
 * promotion at least two beats) forces a victim
 * that holds private work to publish it (deque.c), at most once per half that time in the
 * whole pool, and per FK_FORCE_SPACING times what the last one took: each forcing costs
 * every busy worker an interrupt. */
static int try_force(fk_worker *w, fk_worker *v) {
    fk_pool *p = w->pool;
    uint64_t after = (uint64_t)p->opts.force_after_us * 1000;
    if (!after)
        return 0;
    /* (under heartbeat promotion the beat publishes; forcing is the fallback for an owner in a
     * leaf or a join that no beat reaches: not before two beats) */
    if (p->opts.promote == FK_PROMOTE_BEAT && after < 2000 * (uint64_t)p->opts.beat_us)
        after = 2000 * (uint64_t)p->opts.beat_us;
    uint64_t now = now_ns();
    if (!w->hungry_since) {
        w->hungry_since = now;
        return 0;
    }
    if (now - w->hungry_since < after)
        return 0;
    /* One forcing at a time pool-wide: the slot is taken (UINT64_MAX) while it runs, then set
     * to when the next may start. */
    uint64_t next = atomic_load_explicit(&p->force_next, memory_order_relaxed);
    if (now < next || !atomic_compare_exchange_strong_explicit(&p->force_next, &next, UINT64_MAX,
                                                               memory_order_relaxed, memory_order_relaxed))
        return 0;
    now = now_ns(); /* (the clock again: this thread may have been preempted since) */
    int tried;
    int published = fk__force_publish(v, &tried);
    next = now + after / 2;
    if (tried) {
        FK__WSTAT(w, force_tries);
        /* What it cost is paid by every worker (membarrier() interrupts each of them, and the
         * victim may wait for its deque's lock meanwhile): none again for FK_FORCE_SPACING
         * times what this one took (at most FK_FORCE_SPACING_MAX_NS: a thief preempted in the
         * call must not switch forcing off for long), so that forcing costs the pool about
         * 1/FK_FORCE_SPACING of its time wherever it runs (in this VM a membarrier() took
         * 1-100 us; one every 50 us doubled the time of heat on cont-seg at P = 2). */
        uint64_t gap = (now_ns() - now) * FK_FORCE_SPACING;
        if (gap > FK_FORCE_SPACING_MAX_NS)
            gap = FK_FORCE_SPACING_MAX_NS;
        if (now + gap > next)
            next = now + gap;
    }
    atomic_store_explicit(&p->force_next, next, memory_order_relaxed);
    if (!published)
        return 0;
    FK__WSTAT(w, forced);
    return 1;
}

static int steal_round(fk_worker *w) {
    fk_pool *p = w->pool;
    unsigned tries = fk__victim_round(&w->victims);
    fk_worker *hoarder = NULL; /* a victim with nothing public but private work */
    for (unsigned i = 0; i < tries; i++) {
        fk_worker *v = p->workers[fk__victim_pick(&w->victims)];
        fk__slot s;
        int r = fk__steal(v, &s);
        if (r == FK__STEAL_OK) {
            run_stolen(w, &s, v->id);
            return 1;
        }
        if (r == FK__STEAL_EMPTY) {
            FK__WSTAT(w, steal_empty);
            if (!hoarder && fk__deque_has_private(v))
                hoarder = v;
        } else {
            FK__WSTAT(w, steal_lost);
        }
    }
    if (hoarder && try_force(w, hoarder)) {
        fk__slot s;
        if (fk__steal(hoarder, &s) == FK__STEAL_OK) {
            run_stolen(w, &s, hoarder->id);
            return 1;
        }
    }
    if (!w->hungry_since)
        w->hungry_since = now_ns();
    return 0;
}

/* Continuations and records left in our own deque by frames that unwound (a called or
 * hopping descendant, a suspended inline child): run them.  With continuation stealing a
 * slot is a parent's continuation whose child finishes elsewhere: we resume it exactly as
 * a thief would.  With child stealing a slot is a child, run detached.  (FK_LIVE: native
 * tasks join every record they push, FK_DEBUG checks it at FK_RETURN, so none is left.) */
#if FK_LIVE
static int drain_leftovers(fk_worker *w) {
    (void)w;
    return 0;
}
#else
static int drain_leftovers(fk_worker *w) {
    int did = 0;
    fk__slot s;
    while (fk__pop_leftover(w, &s)) {
        become_active(w);
        did = 1;
#if FK_STEAL == FK_STEAL_CONT && !FK__NATIVE_FRAMES
        fk_frame *f = atomic_load_explicit(&s.frame, memory_order_relaxed);
        f->steals++;
        trampoline(w, f);
#else
        FK__ACCT_NAMED(w, FK_TIME_WORK, "left-over child");
        run_record(w, &s LOOP_CUR(w));
        FK__REFRESH(w);
#endif
        FK__ACCT(w, FK_TIME_SEARCH);
    }
    return did;
}
#endif

/* Everything this worker can do without stealing. */
static int local_work(fk_worker *w) {
    int did = drain_leftovers(w);
    FK__REFRESH(w); /* (fibers: whatever ran may have moved this fiber to another worker) */
    fk__mpsc_node *n;
    while ((n = fk__mpsc_pop(&w->inbox))) {
        fk__sub *sub = (fk__sub *)(void *)n;
        become_active(w);
        did = 1;
        if (sub->kind == FK__SUB_ROOT) {
            FK__WSTAT(w, roots);
            FK__ACCT_NAMED(w, FK_TIME_WORK, "root");
            run_record(w, &((fk__root *)(void *)sub)->rec LOOP_CUR(w));
            FK__REFRESH(w);
            FK__ACCT(w, FK_TIME_SEARCH);
        } else {
#if FK_STACK == FK_STACK_FIBER
            if (sub->kind == FK__SUB_FIBER) { /* a fiber sent here (sched_fiber.c) */
                fk__fiber_received(w, (fk__fstate *)(void *)sub);
                continue;
            }
#endif
#if !FK__NATIVE_FRAMES
            fk__hop *h = (fk__hop *)(void *)sub;
            fk_frame *f = h->frame;
            if (h->stack)
                fk__stack_adopt(w, h->stack);
            free(h);
            trampoline(w, f);
            FK__ACCT(w, FK_TIME_SEARCH);
#else
            fk__fatal("internal error: a frame hop with native frames");
#endif
        }
        drain_leftovers(w);
        FK__REFRESH(w);
    }
    return did;
}

#if FK_STACK != FK_STACK_FIBER
static void worker_loop(fk_worker *w) {
    fk_pool *p = w->pool;
    unsigned fails = 0;
    while (!fk__stopping(p)) {
        FK__ACCT(w, FK_TIME_SEARCH);
#if FK_DEBUG
        if (!fk__stack_empty(w) || w->pending)
            fk__fatal("internal error: worker %u is idle with a busy stack (%td bytes) or a pending frame (%p)",
                      w->id, w->hot->sp - w->hot->lo, (void *)w->pending);
#endif
        int did = local_work(w);
        if (!did && p->n > 1) {
            did = steal_round(w);
            if (did)
                local_work(w);
        }
        if (did) {
            become_thief(w);
            fails = 0;
            continue;
        }
        idle_step(w, &fails);
    }
}
#else
/* The worker loop's steps, for the fiber worker loop (sched_fiber.c).  Wrappers, so that in
 * the other builds the steps stay static and inline into worker_loop as they did. */
void fk__become_active(fk_worker *w) { become_active(w); }
void fk__become_thief(fk_worker *w) { become_thief(w); }
int fk__local_work(fk_worker *w) { return local_work(w); }
int fk__steal_round(fk_worker *w) { return steal_round(w); }
void fk__idle_step(fk_worker *w, unsigned *fails) { idle_step(w, fails); }
#endif

void *fk__worker_main(void *arg) {
    fk_worker *w = arg;
    fk_pool *p = w->pool;
    char base;
    w->stack_base = &base;
    FK__H->w = w;
    w->hot = FK__H;
    char *cs_lo, *cs_hi;
    if (fk__thread_stack(&cs_lo, &cs_hi) == 0) { /* (for FK_FORK_AT's check: fk__at_check) */
        w->hot->cs_lo = (uintptr_t)cs_lo;
        w->hot->cs_size = (uintptr_t)(cs_hi - cs_lo);
    }
    fk__cstack_guard_enter(w);
    /* Pinned first (when pinning applies), then the worker initialises its own deque and
     * stack, so that their memory is first touched on its NUMA node.  A failed pin is a
     * warning: the pool still works. */
    if (fk__topo_bind(p->topo, w->id))
        fprintf(stderr, "forkscope: cannot pin worker %u: %s\n", w->id, strerror(errno));
    int err = fk__deque_init(w);
    if (!err)
        err = fk__stack_init(w);
    pthread_mutex_lock(&p->lock);
    if (err && !p->start_err)
        p->start_err = err;
    p->started++;
    pthread_cond_broadcast(&p->cond);
    while (p->started < p->n && !p->start_err) /* nobody steals before every deque exists */
        pthread_cond_wait(&p->cond, &p->lock);
    err = p->start_err;
    pthread_mutex_unlock(&p->lock);
#if FK_STACK == FK_STACK_FIBER
    if (!err)
        fk__fiber_worker_run(w);
#else
    if (!err)
        worker_loop(w);
#endif
    /* The deque and the stack point into this thread's fk__tls, which dies with the thread:
     * wait until no other worker can still be stealing from us. */
    pthread_mutex_lock(&p->lock);
    p->left++;
    pthread_cond_broadcast(&p->cond);
    while (p->left < p->started)
        pthread_cond_wait(&p->cond, &p->lock);
    pthread_mutex_unlock(&p->lock);
    fk__stack_destroy(w);
    fk__deque_destroy(w);
#if FK_STACK == FK_STACK_FIBER
    fk__fiber_worker_free(w);
#endif
    fk__cstack_guard_leave(w);
    atomic_store_explicit(&w->final_forks, atomic_load_explicit(&w->hot->n_fork, memory_order_relaxed),
                          memory_order_relaxed);
    atomic_store_explicit(&w->final_calls, atomic_load_explicit(&w->hot->n_call, memory_order_relaxed),
                          memory_order_relaxed);
    return NULL;
}

/* This build's name (config.h: FK__ABI_SYM), which every FK_RUN refers to. */
const char FK__ABI_SYM = 1;

int fk__run(fk_pool *pool, int worker, fk__thunk_fn *thunk, void *ret, const void *args, size_t size, const char *abi) {
    (void)abi;
    if (FK__H->w && FK__H->w->pool == pool)
        return FK_EDEADLK;
    if (worker >= (int)pool->n)
        return FK_EINVAL;
    /* Accepted or refused under the pool's lock, which fk_pool_shutdown takes to close the
     * pool: a root is either refused, or counted before the shutdown waits for the count to
     * fall to zero (the workers run until then).  A root is never left in a stopped
     * worker's inbox. */
    pthread_mutex_lock(&pool->lock);
    int closing = pool->closing;
    if (!closing)
        pool->inflight++;
    pthread_mutex_unlock(&pool->lock);
    if (closing)
        return FK_ESHUTDOWN;
    fk__root r;
    uint64_t words[FK_RECORD_ARG_WORDS] = {0};
    memcpy(words, args, size);
    r.sub.kind = FK__SUB_ROOT;
    atomic_store_explicit(&r.rec.thunk, (uintptr_t)thunk, memory_order_relaxed);
    atomic_store_explicit(&r.rec.link, (uintptr_t)&r | FK__LINK_ROOT, memory_order_relaxed);
    atomic_store_explicit(&r.rec.ret, (uintptr_t)ret, memory_order_relaxed);
    for (int i = 0; i < FK_RECORD_ARG_WORDS; i++)
        atomic_store_explicit(&r.rec.args[i], words[i], memory_order_relaxed);
    atomic_store_explicit(&r.done, 0, memory_order_relaxed);
    fk__submit(pool, &r.sub, worker); /* the push into the inbox releases the record to the worker */
    while (!atomic_load_explicit(&r.done, memory_order_acquire))
        futex_wait(&r.done, 0);
    pthread_mutex_lock(&pool->lock);
    if (--pool->inflight == 0 && pool->closing)
        pthread_cond_broadcast(&pool->cond);
    pthread_mutex_unlock(&pool->lock);
    return 0;
}

void fk__wake_all(fk_pool *p) {
    for (unsigned i = 0; i < p->n; i++)
        wake_bit(p->workers[i]);
}
