/* cstack.c — a worker's C stack overflowing is reported, not a bare SIGSEGV.
 *
 * Fast-path calls recurse on the worker thread's C stack in every variant (and native
 * frames live there), so a deep enough task tree overflows it.  Each worker thread has a
 * large guard region below its stack (FK_CSTACK_GUARD_BYTES); the handler of guard.c,
 * running on a small signal stack, recognises a fault in it and says which setting to
 * raise. */
#include <stdio.h>

#include "guard.h"
#include "worker.h"

static _Thread_local fk__guard_zone zone;
static _Thread_local char what[48];

void fk__cstack_guard_install(void) { fk__guard_install(); }

/* On the worker thread, before it runs anything. */
void fk__cstack_guard_enter(fk_worker *w) {
    if (!FK__GUARD_ACTIVE)
        return;
    char *hi;
    if (fk__thread_stack(&w->cstack_lo, &hi))
        w->cstack_lo = NULL;
    if (!w->cstack_lo || fk__guard_thread_enter() != 0)
        return;
    snprintf(what, sizeof what, "worker %u's C stack", w->id);
    zone = (fk__guard_zone){
        .lo = w->cstack_lo - FK_CSTACK_GUARD_BYTES,
        .hi = w->cstack_lo,
        .stack_bytes = w->pool->opts.thread_stack_bytes,
        .what = what,
#if FK_STACK == FK_STACK_NATIVE
        .hint = "the task tree is too deep for it (fast-path calls recurse on it, and native frames "
                "live in it); raise FORKSCOPE_THREAD_STACK or fk_pool_opts.thread_stack_bytes",
#else
        .hint = "the task tree is too deep for it (fast-path calls recurse on it); raise "
                "FORKSCOPE_THREAD_STACK or fk_pool_opts.thread_stack_bytes",
#endif
    };
    fk__guard_thread_zone = &zone;
}

void fk__cstack_guard_leave(fk_worker *w) {
    (void)w;
    fk__guard_thread_zone = NULL;
    fk__guard_thread_leave();
}
