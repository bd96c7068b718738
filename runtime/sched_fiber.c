/* sched_fiber.c — the fiber scheduler (child-fiber builds, FK_STACK_FIBER): a join that
 * waits parks its fiber.  The worker loop's steps (local work, steal rounds, going idle)
 * and the running of records are sched.c's; what is here is what only fibers do.
 *
 * Tasks run on fibers (never on a worker thread's own stack).  Each fiber runs the worker
 * loop at its base; records, stolen or popped, run on the current fiber by ordinary calls.
 * A join whose stolen children have not all finished parks its fiber: the worker goes on
 * with a ready fiber, or with an idle (or new) one that starts the worker loop afresh.
 *
 * THE WAKE PROTOCOL (no lost wake-up, exactly one resumer).  The join counter f->done
 * counts the stolen children that finished (each adds 1 with acq_rel).  The parking
 * fiber cannot publish itself while it still runs on its stack, so the fiber that runs
 * next does it for it, after the switch (after_switch, PARK): it stores f->waiter, then
 * adds K - stolen (acq_rel).  Whoever brings the counter to K makes the fiber ready:
 * that adder itself if every child had arrived, else the last child (sched.c, run_record;
 * its RMW follows the adder's in the counter's modification order, so it reads the waiter).  A ready
 * fiber is resumed by a worker loop at its base (or by a join that parks), never twice.
 *
 * WHERE A FIBER RESUMES: FK_RESUME_ANY, on the worker that made it ready (it migrates:
 * FiberTaskingLib); FK_RESUME_HOME, only on the worker that made it (marl): a fiber
 * made ready elsewhere is sent to its home worker's inbox, which wakes it if it sleeps.
 *
 * A fiber's frame stack (FK_ALLOC blocks) goes with it: a fiber that parks with a
 * non-empty one takes it along and the worker takes a fresh one; resumed, it adopts it.
 *
 * No termination counting: a root's submitter waits for the root's own completion flag,
 * and an idle worker is a thief (lazy: it may sleep) whatever its parked fibers wait for. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"
#include "chaos.h"

#if FK_STACK == FK_STACK_FIBER
enum { FMSG_PARK = 1, FMSG_WAIT = 2, FMSG_RELEASE = 3, FMSG_MOVE = 4 };
typedef struct fmsg {
    int kind;
    fk__fiber *fiber; /* the fiber that parked (PARK, WAIT) or left for good (RELEASE) */
    fk_frame *frame;  /* PARK: its join cell and how many children it waits for */
    uint32_t stolen;
    fk_counter *counter; /* WAIT: the counter it waits on */
    unsigned to;         /* MOVE: the worker it continues on */
} fmsg;

static _Noreturn void fiber_loop_entry(void *arg, void *data);

static void idle_put(fk_worker *w, fk__fiber *f) {
    f->next = w->idle;
    w->idle = f;
}

static void ready_push(fk_worker *w, fk__fiber *f) {
    f->next = NULL;
    if (w->ready_tail)
        w->ready_tail->next = f;
    else
        w->ready_head = f;
    w->ready_tail = f;
}

static fk__fiber *ready_pop(fk_worker *w) {
    fk__fiber *f = w->ready_head;
    if (f && !(w->ready_head = f->next))
        w->ready_tail = NULL;
    return f;
}

/* A ready fiber as a deque record (FK_RESUME_ANY): any worker that pops or steals it
 * resumes the fiber.  Its link is no frame's, counter's or root's, so no join or counter
 * wait takes it; only the worker loop (drain, steal) and park() do. */
#define LINK_RESUME (FK__LINK_ROOT | FK__LINK_COUNTER)

/* The record's thunk, run by the worker loop on a fiber at whose base the loop runs: that
 * fiber is left for good (the resumed one puts it in the idle list) and f continues. */
static void resume_thunk(const fk__record *r) {
    fk__fiber *f = (fk__fiber *)(uintptr_t)atomic_load_explicit(&r->args[0], memory_order_relaxed);
    fmsg m = {FMSG_RELEASE, fk__fiber_current(), NULL, 0, NULL, 0};
    FK__ACCT(fk__worker_now(), FK_TIME_FIBER); /* (until f's park() returns: work again) */
    fk__fiber_exit_to(m.fiber, f, &m);
}

/* f may continue.  FK_RESUME_HOME: on its home worker only (marl), through its inbox if that
 * is not this one.  FK_RESUME_ANY: on any worker (FiberTaskingLib): a record on this worker's
 * deque; if a thief is asking for work, made public at once with everything below it, so
 * that idle workers take them without waiting for this one to answer request after request
 * (a counter's zero may make many fibers ready at once: heat's barrier). */
void fk__fiber_make_ready(fk_worker *w, fk__fiber *f) {
    fk__fstate *st = f->user;
    if (w->pool->opts.fiber_resume == FK_RESUME_HOME) {
        if (st->home == w) {
            ready_push(w, f);
        } else {
            st->sub.kind = FK__SUB_FIBER;
            fk__submit(w->pool, &st->sub, (int)st->home->id); /* the queue's release hands f over */
        }
        return;
    }
    /* (Only if a thief asked for work: publishing makes the owner's own pops of these slots
     * take the slow path; a push answers one request with one slot, not a burst.) */
    int asked = atomic_load_explicit(&w->hot->limit, memory_order_relaxed) == NULL;
    uint64_t words[1] = {(uint64_t)(uintptr_t)f};
    fk__push_record(resume_thunk, LINK_RESUME, NULL, words, 1);
    if (asked)
        fk__deque_publish_all(w);
}

/* A fiber that came through w's inbox (FK__SUB_FIBER): on its way here by FK_SWITCH_TO (it
 * runs here and nowhere else), or made ready where it could not run (on another worker while
 * it resumes at home only, or on a thread that is not a worker): made ready here. */
void fk__fiber_received(fk_worker *w, fk__fstate *st) {
    if (st->move_to == w) {
        st->move_to = NULL;
        ready_push(w, st->fiber);
    } else {
        fk__fiber_make_ready(w, st->fiber);
    }
}

/* The newest record of this worker's deque, if it resumes a fiber: that fiber (park() goes
 * straight to it); else NULL. */
static fk__fiber *resume_pop(void) {
    const fk__record *r = fk__pop_record_of(LINK_RESUME);
    return r ? (fk__fiber *)(uintptr_t)atomic_load_explicit(&r->args[0], memory_order_relaxed) : NULL;
}

/* A fiber that will run the worker loop: an idle one, or a new one. */
static fk__fiber *loop_fiber(fk_worker *w) {
    fk__fiber *f = w->idle;
    if (f) {
        w->idle = f->next;
        fk__fiber_restart(f, fiber_loop_entry, NULL);
        return f;
    }
    fk__fstate *st = calloc(1, sizeof *st);
    f = st ? fk__fiber_new(w->pool->opts.fiber_stack_bytes, fiber_loop_entry, NULL, "a fiber's stack",
                           "the task tree is too deep for it (tasks run on fibers and recurse on their stacks); "
                           "raise FORKSCOPE_FIBER_STACK or fk_pool_opts.fiber_stack_bytes")
           : NULL;
    if (!f)
        fk__fatal("worker %u cannot make a fiber (a %zu-byte stack): %s", w->id, w->pool->opts.fiber_stack_bytes,
                  strerror(errno ? errno : ENOMEM));
    st->fiber = f;
    st->home = w;
    f->user = st;
    FK__WSTAT(w, fibers);
    return f;
}

/* What the fiber that switched to us could not do itself. */
static void after_switch(fk_worker *w, fmsg *m) {
    if (!m)
        return;
    if (m->kind == FMSG_RELEASE) {
        idle_put(w, m->fiber);
        return;
    }
    if (m->kind == FMSG_MOVE) { /* to worker `to`'s ready list, through its inbox */
        fk__fstate *st = m->fiber->user;
        st->move_to = w->pool->workers[m->to];
        st->home = st->move_to; /* (resume home: it lives there now) */
        st->sub.kind = FK__SUB_FIBER;
        fk__submit(w->pool, &st->sub, (int)m->to); /* the queue's release hands it over */
        return;
    }
    if (m->kind == FMSG_WAIT) {
        /* Under the lock, against fk_counter_done's (counter.c): it takes the waiters after
         * the count reached zero; a zero it made before we look is seen here. */
        fk_counter *c = m->counter;
        fk__counter_lock(c);
        int zero = (uint32_t)atomic_load_explicit(&c->fk__state, memory_order_acquire) == 0;
        if (!zero) {
            m->fiber->next = c->fk__waiters;
            c->fk__waiters = m->fiber;
        }
        fk__counter_unlock(c);
        if (zero)
            fk__fiber_make_ready(w, m->fiber);
        return;
    }
    fk_frame *f = m->frame;
    f->waiter = m->fiber;
    uint32_t add = FK__JOIN_K - m->stolen;
    FK_CHAOS_POINT();
    if (atomic_fetch_add_explicit(&f->done, add, memory_order_acq_rel) + add == FK__JOIN_K)
        fk__fiber_make_ready(w, m->fiber); /* every child had finished */
}

/* Parks the running fiber (m says why: the fiber that runs next publishes it) and returns
 * once it has been made ready and resumed, possibly on another worker's thread. */
static void park(fk_worker *w, fmsg *m) {
    FK__WSTAT(w, suspends);
    FK__ACCT(w, FK_TIME_FIBER);
    fk__fiber *self = m->fiber;
    fk__fstate *st = self->user;
    st->parked_on = w;
    st->stack = NULL;
    if (!fk__stack_empty(w)) { /* FK_ALLOC blocks live: the stack parks with us */
        st->stack = fk__stack_handle(w);
        fk__stack_replace(w);
    }
    fk__fiber *next = ready_pop(w); /* (a ready fiber adopts its own frame stack, below) */
    if (!next)
        next = resume_pop();
    if (!next)
        next = loop_fiber(w);
    fmsg *got = fk__fiber_switch(self, next, m);
    w = fk__worker_now();
    after_switch(w, got);
    if (st->stack)
        fk__stack_adopt(w, st->stack);
    st->stack = NULL;
    if (st->parked_on != w)
        FK__WSTAT(w, migrations);
    FK__ACCT(w, FK_TIME_WORK); /* (this worker's: the fiber may have moved) */
}

void fk__fiber_join(fk_frame *f, uint32_t stolen) {
    /* Acquire: pairs with each child's release increment (their results). */
    if (atomic_load_explicit(&f->done, memory_order_acquire) != stolen) {
        fmsg m = {FMSG_PARK, fk__fiber_current(), f, stolen, NULL, 0};
        park(fk__worker_now(), &m);
    }
    f->sync0 = 0;
}

/* FK_SWITCH_TO(k) on a fiber: park, and let worker k resume us (from its ready list, which
 * no other worker takes from). */
void fk__fiber_switch_to(unsigned k) {
    fk_worker *w = fk__worker_now();
    if (k >= w->pool->n)
        fk__fatal("FK_SWITCH_TO(%u): the pool has %u workers", k, w->pool->n);
    if (k == w->id)
        return;
    fmsg m = {FMSG_MOVE, fk__fiber_current(), NULL, 0, NULL, k};
    park(w, &m);
}

/* fk_counter_wait in a task: run the spawned work of the counter still on top of our deque,
 * then park until the count is zero. */
void fk__fiber_wait_counter(fk_counter *c) {
    uintptr_t link = (uintptr_t)c | FK__LINK_COUNTER;
    while ((uint32_t)atomic_load_explicit(&c->fk__state, memory_order_acquire) != 0) {
        const fk__record *r = fk__pop_record_of(link);
        if (!r) {
            fmsg m = {FMSG_WAIT, fk__fiber_current(), NULL, 0, c, 0};
            park(fk__worker_now(), &m);
            return;
        }
        fk__record_thunk(r)(r);
        fk_counter_done(c);
    }
}

/* A fiber parked on a counter may continue (fk_counter_done, from any thread): here if this
 * is one of its pool's workers, else through its home worker's inbox. */
void fk__fiber_wake(void *fiber) {
    fk__fiber *f = fiber;
    fk__fstate *st = f->user;
    fk_worker *w = fk__worker_now();
    if (w && w->pool == st->home->pool) {
        fk__fiber_make_ready(w, f);
        return;
    }
    st->sub.kind = FK__SUB_FIBER;
    fk__submit(st->home->pool, &st->sub, (int)st->home->id);
}

static void spawn_fn_thunk(const fk__record *r) {
    void (*fn)(void *) = (void (*)(void *))(uintptr_t)atomic_load_explicit(&r->args[0], memory_order_relaxed);
    fn((void *)(uintptr_t)atomic_load_explicit(&r->args[1], memory_order_relaxed));
}

void fk_spawn(fk_counter *c, void (*fn)(void *), void *arg) {
    if (!fk__worker_now())
        fk__fatal("fk_spawn outside a task: spawned work starts on the worker of the task that spawns it");
    fk_counter_add(c, 1);
    uint64_t words[2] = {(uint64_t)(uintptr_t)fn, (uint64_t)(uintptr_t)arg};
    fk__push_record(spawn_fn_thunk, (uintptr_t)c | FK__LINK_COUNTER, NULL, words, 2);
}

/* The worker loop on a fiber: local work, ready fibers first; steal; sleep (lazy). */
static _Noreturn void fiber_loop(void) {
    unsigned fails = 0;
    fk_worker *w = fk__worker_now();
    fk__become_thief(w); /* a fresh loop: whatever ran here before parked */
    for (;;) {
        w = fk__worker_now();
        fk_pool *p = w->pool;
        if (fk__stopping(p)) {
            fmsg m = {FMSG_RELEASE, fk__fiber_current(), NULL, 0, NULL, 0};
            fk__fiber_exit_to(m.fiber, &w->main_fiber, &m);
        }
        FK__ACCT(w, FK_TIME_SEARCH);
        fk__fiber *r = ready_pop(w);
        if (r) { /* resume it; this fiber, at its base, becomes idle */
            fk__become_active(w);
            FK__ACCT(w, FK_TIME_FIBER);
            fmsg m = {FMSG_RELEASE, fk__fiber_current(), NULL, 0, NULL, 0};
            fk__fiber_exit_to(m.fiber, r, &m);
        }
        int did = fk__local_work(w);
        FK__REFRESH(w);
        if (!did && p->n > 1 && !w->ready_head) {
            did = fk__steal_round(w);
            FK__REFRESH(w);
        }
        if (did || w->ready_head) {
            fk__become_thief(w);
            fails = 0;
            continue;
        }
        fk__idle_step(w, &fails);
    }
}

static void fiber_loop_entry(void *arg, void *data) {
    (void)data;
    after_switch(fk__worker_now(), arg);
    fiber_loop();
}

/* The worker thread: from its own stack into the loop on a fiber, and back to exit. */
void fk__fiber_worker_run(fk_worker *w) {
    int rc = fk__fiber_thread_init(&w->main_fiber);
    if (rc)
        fk__fatal("worker %u cannot describe its thread's stack: %s", w->id, strerror(-rc));
    fmsg *got = fk__fiber_switch(&w->main_fiber, loop_fiber(w), NULL);
    after_switch(w, got); /* the loop fiber that came back here at the stop */
}

/* After every worker left its loop: unmap this worker's idle fibers (with FK_RESUME_ANY
 * they may have been made by others: each fiber is in exactly one idle list by now). */
void fk__fiber_worker_free(fk_worker *w) {
    while (w->idle) {
        fk__fiber *f = w->idle;
        w->idle = f->next;
        free(f->user);
        fk__fiber_free(f);
    }
    fk__fiber_thread_exit(&w->main_fiber);
}
#endif
