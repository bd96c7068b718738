/* join.pml — the child-stealing join of runtime/sched.c (fk__arrive, fk__join_unwound) and
 * the fibers' join and wake (sched_fiber.c's park handler, and run_record's arrival in
 * sched.c: fk__fiber_make_ready), which share one pattern, model-checked with SPIN (make
 * check-model).
 *
 * A parent frame f with C stolen children.  The parent's worker arrives at f's join: it
 * records what the resumer needs (f->stack = the stack holding f, with the stack's saved
 * sp; on fibers, f->waiter = the parked fiber), then adds K - C to the split counter
 * (f->joins / cell->done) with an acq_rel RMW; each child's thief writes the child's
 * result into f, then adds 1.  Whoever brings the counter to K resumes f: on frame stacks
 * it adopts f->stack if its own is empty (fk__stack_adopt reads the stack's sp); on fibers
 * it makes f->waiter ready.  Properties: f is resumed exactly once; its resumer sees the
 * right stack and sp (or waiter) and every child's result.  A parent that is not last gives
 * f's stack away (fk__stack_replace touches only its own fields): the stack is held by one
 * worker whenever f runs.
 *
 * Memory model: weaker than TSO.  Each thread's plain stores (f->stack, the stack's sp,
 * f->waiter, a child's result) wait in a store buffer and reach memory in any order (as
 * ARM and POWER may make them visible), at any time; a release RMW first waits until the
 * thread's earlier stores are visible; a relaxed one does not.  Loads read memory (the
 * acquire half of the last arriver's RMW: it loads only after it).
 * Mutations that SPIN must refute: -DMUT_RELAXED_CHILD (a child's arrival relaxed instead
 * of release: its result may be invisible to the resumer), -DMUT_RELAXED_PARENT (the
 * parent's arrival relaxed: f->stack / sp / waiter invisible), -DMUT_RECORD_AFTER (the
 * parent records f->stack after its arrival: a last child adopts no stack). */

#ifndef C
#define C 2
#endif
#define T (C + 1)        /* thread 0: the parent's worker; 1..C: the thieves */
#define K 16             /* FK__JOIN_K */
#define V_STACK 0        /* f->stack (on fibers f->waiter): 1 = the right one */
#define V_SP 1           /* the stack's saved sp: 7 */
#define V_RES 2          /* f->result[c]: 42 each */
#define NV (2 + C)

byte mem[NV];
bool pend[T * NV];       /* a store of thread t to v waits in t's buffer */
byte pval[T * NV];
byte npend[T];           /* how many stores wait in t's buffer */
byte joins = 0;          /* f->joins: the split counter */
byte resumed = 0;
bool parent_holds = 1;   /* the parent's worker still holds the stack of f */
byte finished = 0;

inline store(t, v, x) {
    atomic { if :: !pend[t * NV + v] -> npend[t]++ :: else fi; pend[t * NV + v] = 1; pval[t * NV + v] = x }
}

#define drained(t) (npend[t] == 0) /* every earlier store of t is visible */

/* the last arriver resumes f */
inline resume(mine) {
    atomic {
        resumed++;
        assert(resumed == 1);
        assert(mine || mem[V_STACK] == 1);                      /* adopts the right stack */
        assert(mine || mem[V_SP] == 7);                         /* ... at its saved sp */
        assert(!mine || parent_holds);
        i = 0;
        do
        :: i < C -> assert(mem[V_RES + i] == 42); i++           /* every child's result */
        :: else -> break
        od
    }
}

proctype parent() {
    byte old, i;
#ifndef MUT_RECORD_AFTER
    store(0, V_SP, 7);                                          /* fk__stack_handle: s->sp */
    store(0, V_STACK, 1);                                       /* f->stack = handle */
#endif
#ifndef MUT_RELAXED_PARENT
    atomic { drained(0) -> old = joins; joins = joins + K - C } /* release (acq_rel) RMW */
#else
    atomic { old = joins; joins = joins + K - C }
#endif
#ifdef MUT_RECORD_AFTER
    store(0, V_SP, 7);
    store(0, V_STACK, 1);
#endif
    if
    :: old + K - C == K -> resume(1)                            /* last: f goes on here */
    :: else -> parent_holds = 0                                 /* fk__stack_replace */
    fi;
    finished++
}

proctype child(byte c) {
    byte old, i;
    store(c, V_RES + c - 1, 42);                                /* the child's result into f */
#ifndef MUT_RELAXED_CHILD
    atomic { drained(c) -> old = joins; joins++ }               /* release (acq_rel) RMW */
#else
    atomic { old = joins; joins++ }
#endif
    if
    :: old + 1 == K -> resume(0)                                /* last: adopts f's stack */
    :: else
    fi;
    finished++
}

active proctype flusher() { /* stores reach memory in any order, at any time */
    byte k;
end:
    do
    :: k = 0;
       do
       :: k < T * NV ->
           if
           :: atomic { pend[k] -> mem[k % NV] = pval[k]; pend[k] = 0; npend[k / NV]-- }
           :: skip
           fi;
           k++
       :: else -> break
       od
    od
}

init {
    byte c = 1;
    atomic {
        run parent();
        do
        :: c <= C -> run child(c); c++
        :: else -> break
        od
    }
    (finished == T);
    assert(resumed == 1)                                        /* exactly once, and at all */
}
