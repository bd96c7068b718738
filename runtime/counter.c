/* counter.c — fk_counter: counts that fibers and threads wait on (see forkscope.h).
 *
 * Waiters of two kinds, woken together when the count reaches zero:
 *  - parked fibers (child-fiber builds), on the counter's list.  A fiber cannot add itself
 *    to the list while it still runs on its stack, so the fiber that runs next does it,
 *    under the counter's lock, checking the count there (sched_fiber.c, after_switch WAIT);
 *    fk_counter_done takes the list under the same lock after the count reached zero.
 *    Either the waker's lock comes second and finds the fiber listed, or the parker's does
 *    and sees the zero: no lost wake-up;
 *  - threads that are not workers, on a futex: seq's low bit says that a thread may sleep,
 *    and every zero adds 2 (clearing the bit) and wakes the sleepers if it was set.  A
 *    thread sets the bit, then reads the count (both seq_cst), then sleeps while seq is
 *    what it set: a zero after its read changes seq first, so the sleep returns at once.
 * Lifetime: a waiter may free the counter as soon as it returns (a counter in the waiting
 * task's frame is the common case), so the fk_counter_done that makes the zero must be done
 * with the counter before any waiter returns.  Its decrement to zero also sets ANNOUNCING in
 * the same atomic word; it clears it with its last access to the counter, and a waiter
 * returns only once it sees the count at zero with ANNOUNCING clear (settle: a short wait,
 * the announcer's few remaining steps).  Parked fibers are made ready after that clear.
 * A count that goes below zero is a misuse and aborts. */
#include <limits.h>
#include <sched.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "worker.h"

#define ANNOUNCING (1ull << 32)
#define COUNT(s) ((uint32_t)(s))

void fk_counter_init(fk_counter *c, uint32_t n) {
    atomic_store_explicit(&c->fk__state, n, memory_order_relaxed);
    atomic_store_explicit(&c->fk__lock, 0, memory_order_relaxed);
    atomic_store_explicit(&c->fk__seq, 0, memory_order_relaxed);
    c->fk__waiters = NULL;
}

void fk_counter_add(fk_counter *c, uint32_t n) {
    if (COUNT(atomic_fetch_add_explicit(&c->fk__state, n, memory_order_acq_rel)) > UINT32_MAX - n)
        fk__fatal("fk_counter_add: the count overflows 32 bits");
}

uint32_t fk_counter_value(fk_counter *c) { return COUNT(atomic_load_explicit(&c->fk__state, memory_order_acquire)); }

/* Waits until the announcement of a zero is over (the announcer's last access is its clear). */
static void settle(fk_counter *c) {
    for (unsigned spins = 0; atomic_load_explicit(&c->fk__state, memory_order_acquire) & ANNOUNCING; spins++) {
        if (spins < 64)
            fk__cpu_pause();
        else
            sched_yield();
    }
}

/* The lock over the counter's list of parked fibers (also taken by sched_fiber.c's parker). */
void fk__counter_lock(fk_counter *c) {
    while (atomic_exchange_explicit(&c->fk__lock, 1, memory_order_acquire))
        while (atomic_load_explicit(&c->fk__lock, memory_order_relaxed))
            fk__cpu_pause();
}

void fk__counter_unlock(fk_counter *c) { atomic_store_explicit(&c->fk__lock, 0, memory_order_release); }

static void wake_threads(fk_counter *c) {
    uint32_t old = atomic_load_explicit(&c->fk__seq, memory_order_seq_cst);
    while (!atomic_compare_exchange_weak_explicit(&c->fk__seq, &old, (old + 2) & ~1u, memory_order_seq_cst,
                                                  memory_order_seq_cst))
        ;
    if (old & 1)
        syscall(SYS_futex, (uint32_t *)&c->fk__seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void fk_counter_done(fk_counter *c) {
    /* seq_cst: it includes the release that a waiter's acquire of the zero needs (what the
     * finished work wrote comes first), and orders the decrement in the single total order
     * with a sleeping thread's seq_cst set of seq's bit and read of the count (above). */
    uint64_t old = atomic_load_explicit(&c->fk__state, memory_order_relaxed), new;
    do {
        if (COUNT(old) == 0)
            fk__fatal("fk_counter_done on a counter that is already zero (%p)", (void *)c);
        new = old - 1;
        if (COUNT(new) == 0)
            new |= ANNOUNCING;
    } while (!atomic_compare_exchange_weak_explicit(&c->fk__state, &old, new, memory_order_seq_cst,
                                                    memory_order_relaxed));
    if (COUNT(new) != 0)
        return;
#if FK_STACK == FK_STACK_FIBER
    /* (the lock's acquire pairs with a parker's release: the fibers it listed) */
    fk__counter_lock(c);
    fk__fiber *f = c->fk__waiters;
    c->fk__waiters = NULL;
    fk__counter_unlock(c);
#endif
    wake_threads(c);
    atomic_fetch_and_explicit(&c->fk__state, ~ANNOUNCING, memory_order_release); /* the last access to c */
#if FK_STACK == FK_STACK_FIBER
    while (f) {
        fk__fiber *next = f->next; /* (read before the fiber can run and reuse the link) */
        fk__fiber_wake(f);
        f = next;
    }
#endif
}

void fk_counter_wait(fk_counter *c) {
    if (COUNT(atomic_load_explicit(&c->fk__state, memory_order_acquire)) == 0) {
        settle(c);
        return;
    }
    if (FK__H->w) {
#if FK_STACK == FK_STACK_FIBER
        fk__fiber_wait_counter(c);
        settle(c);
        return;
#else
        fk__fatal("fk_counter_wait in a task of a %s build: only fibers (child-fiber builds) can wait in a task; "
                  "its worker would block, and with it the work the count waits for",
                  fk_build_variant());
#endif
    }
    for (;;) { /* a thread that is not a worker: sleep on seq */
        uint32_t s = atomic_load_explicit(&c->fk__seq, memory_order_seq_cst);
        if (!(s & 1) && !atomic_compare_exchange_strong_explicit(&c->fk__seq, &s, s | 1, memory_order_seq_cst,
                                                                 memory_order_seq_cst))
            continue;
        if (COUNT(atomic_load_explicit(&c->fk__state, memory_order_seq_cst)) == 0) {
            settle(c);
            return;
        }
        syscall(SYS_futex, (uint32_t *)&c->fk__seq, FUTEX_WAIT_PRIVATE, s | 1, NULL, NULL, 0);
    }
}

#if FK_STACK != FK_STACK_FIBER
void fk_spawn(fk_counter *c, void (*fn)(void *), void *arg) {
    (void)c, (void)fn, (void)arg;
    fk__fatal("fk_spawn in a %s build: spawned work is waited for on a counter, which only fibers "
              "(child-fiber builds) can do in a task",
              fk_build_variant());
}
#endif
