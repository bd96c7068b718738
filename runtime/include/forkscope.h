/* forkscope.h — a fork-join work-stealing runtime for C.
 *
 * THE SMALLEST COMPLETE PROGRAM (examples/reduce.c is a longer one)
 *
 *   #include <forkscope.h>
 *   #include <stdio.h>
 *
 *   typedef struct { fk_frame fk; long a, b; } fib_frame;  // fk first; results of forks go here
 *
 *   FK_TASK(fib, long, fib_frame *f, (int, n)) {
 *       if (n < 2) FK_RETURN(n);
 *       FK_BEGIN(f);
 *       FK_FORK(a, fib, n - 1);       // may run on another worker
 *       FK_CALL(b, fib, n - 2);       // runs now
 *       FK_JOIN();
 *       FK_RETURN(f->a + f->b);
 *   } FK_END
 *
 *   int main(void) {
 *       fk_pool_opts o;  fk_pool_opts_init(&o);  o.workers = 4;
 *       fk_pool *pool;  long r;
 *       if (fk_pool_create(&pool, &o) != 0 || FK_RUN(pool, &r, fib, 30) != 0) return 1;
 *       printf("fib(30) = %ld\n", r);
 *       fk_pool_destroy(pool);
 *       return 0;
 *   }
 *
 * Build it against an installed forkscope (make install), naming one runtime build (cont-seg,
 * cont-lin, child-seg, child-lin, child-native, child-fiber; -debug for FK_DEBUG's checks):
 *
 *   cc -O2 fib.c $(pkg-config --cflags --libs forkscope-cont-seg) -o fib
 *
 * The build's flags come with its .pc file; code compiled with one build's flags does not link
 * with another build's library (FK__ABI_SYM, forkscope/config.h).  FK_VERSION is this header's
 * version.  docs/runtime.md, "Use the runtime in your program", says more.
 *
 * WRITING A TASK
 *
 *   typedef struct {
 *       fk_frame fk;            // first member of every task frame: the runtime's part
 *       int64_t a, b;           // the task's locals that live across a fork or join
 *   } fib_frame;                // (not its parameters: the task keeps those itself)
 *
 *   FK_TASK(fib, int64_t, fib_frame *f, (int, n)) {
 *       if (n < 2)
 *           FK_RETURN(n);               // a leaf: no frame is ever allocated
 *       FK_BEGIN(f);                    // allocate f on this worker's frame stack
 *       FK_FORK(a, fib, n - 1);         // child may run in parallel; its result goes to f->a
 *       FK_CALL(b, fib, n - 2);         // child runs now (nothing left to overlap); into f->b
 *       FK_JOIN();                      // wait for every child forked since the last join
 *       FK_RETURN(f->a + f->b);         // frees f, returns the result (in registers)
 *   } FK_END
 *
 *   fk_pool *pool;  int64_t r;
 *   fk_pool_opts o;  fk_pool_opts_init(&o);  o.workers = 4;
 *   if (fk_pool_create(&pool, &o) == 0 && FK_RUN(pool, &r, fib, 30) == 0) ...
 *
 * FK_TASK(name, result type, frame declaration, (type, param)...) defines a static task.
 * Up to 8 parameters, or none (FK_TASK(tick, int, tick_frame *f), forked as
 * FK_FORK(r, tick)), of at most FK_RECORD_ARG_WORDS 8-byte words in all, in every
 * build (a root's arguments, and with child stealing a fork's, are copied into fixed-size
 * records; a compile-time error names the task: pass a pointer instead).
 *
 * RESULTS go to the frame: FK_FORK(a, task, ...) and FK_CALL(a, task, ...) name a member of
 * the task's frame (f->a; also f->part[n] as part[n], f->pair.lo as pair.lo), never a C
 * local or a parameter, which the compiler refuses (with frames on frame stacks neither
 * survives the task's continuing on another worker: release builds returned wrong sums).
 * A task returns its result as a C function does, and the fork or call that ran it stores
 * it there, so the compiler usually needs no reload.  Two other forms:
 *   FK_FORK_VOID(task, ...), FK_CALL_VOID(task, ...)   a task whose result type is void
 *       (then it ends in FK_RETURN_VOID()); a task that returns a value is refused;
 *   FK_FORK_AT(p, task, ...), FK_CALL_AT(p, task, ...) the result goes to *p, memory the
 *       task vouches outlives the join and is the same wherever it continues: the heap,
 *       a global, an array it was given, an FK_ALLOC block.  The compiler refuses NULL (a
 *       void pointer) for a task that returns a value; every build refuses an address in
 *       the running worker's own C stack at run time with frames on frame stacks (a
 *       release build in an inline check of a few instructions), and FK_DEBUG builds a
 *       null typed pointer.  It is also
 *       the form for a result through a pointer member: FK_FORK_AT(&f->res[i], ...), not
 *       FK_FORK(res[i], ...), which the compiler refuses (as FK_FORK(p->x, ...)): it
 *       would store wherever the pointer points.
 * The member's type must be the task's result type, and the frame must begin with its
 * fk_frame member (the compiler checks both).
 * What the compiler says to the forms it refuses (GCC; Clang's words are alike):
 *   FK_FORK(x, ...) with x a local:  'fk_result_must_name_a_member_of_this_frame__see_FK_FORK_AT'
 *                                    {aka 'fib_frame'} has no member named 'x'
 *   FK_FORK(&f->a, ...), FK_CALL(NULL, ...) (the spelling before):  expected identifier,
 *       shown with this header's line "FK_FORK(a, ...) stores to f->a: it takes a member's
 *       NAME, not &f->a (FK_FORK_AT(pointer, ...): an address; FK_FORK_VOID(task, ...): no result)"
 *   FK_FORK(res[i], ...) with res a pointer member, FK_FORK(p->x, ...):  cannot apply
 *       'offsetof' to a non constant address, shown with the same line (Clang: offsetof
 *       requires array type, 'int64_t *' invalid; expected ')')
 *   FK_FORK_VOID(fib, ...):  FK_FORK_VOID or FK_CALL_VOID of task fib, which returns a value
 *
 * The parameters (n above) are the task's own variables, kept with its frame as a
 * coroutine keeps them: they may be read and changed anywhere in the task, and keep their
 * values across forks, calls and joins, also when the task continues on another worker.
 * Other C locals do not (rule 1): a LOOP that forks keeps its counter in a parameter or in
 * the frame, since the task may continue on another worker after each fork:
 *
 *   FK_TASK(sum, int64_t, sum_frame *f, (const int *, v), (int, n)) {
 *       FK_BEGIN(f);
 *       while (n > 0) {                           // not: for (int i = 0; ...)
 *           n--;
 *           FK_FORK(part[n], leaf, v[n]);       // into f->part[n]
 *       }
 *       FK_JOIN();
 *       ...
 *
 * A task is static to its file.  To fork, call or run it from other files, declare it in a
 * header with FK_TASK_DECLARE and define it in one file with FK_TASK_DEFINE (below).
 *
 * THE RULES (the runtime relies on them; FK_DEBUG builds check the ones marked *, and the
 * compiler those marked C)
 *  1. After the first FK_FORK or FK_CALL, a task may be resumed on another worker from its
 *     frame: its parameters come back (kept with the frame), but its other C locals are
 *     gone.  A local read after a fork, call or join must live in the frame (f->...), or be
 *     a parameter (no child may write through a parameter's address: the kept value is
 *     put back after each fork and call).  A fork's or call's result goes to a member of
 *     the frame by construction (FK_FORK(a, ...)), which the compiler checks (C); the
 *     escape FK_FORK_AT(p, ...) must point to memory that outlives the join, never a local:
 *     with frames on frame stacks (seg, lin) every build refuses an address in the
 *     running worker's own C stack at run time, naming the task.  (With native frames,
 *     child-native and child-fiber, the task's C frame lives until it returns, and
 *     locals survive.)                                                                C *
 *  2. FK_BEGIN stands at the top level of the body, once, before the first FK_FORK,
 *     FK_CALL, FK_JOIN or FK_ALLOC.                                                      C
 *     A task without FK_BEGIN does not compile; one that never forks is an FK_LEAF_TASK.
 *  3. FK_FORK, FK_CALL, FK_JOIN and FK_SWITCH_TO must not stand inside a switch statement
 *     of the task (a resumed task continues at a case label of FK_BEGIN's own switch).  A
 *     switch on an int type rejects them (a warning on by default: "case label value
 *     exceeds maximum value for type"); loops and ifs are fine.                          C
 *  4. Between an FK_FORK and the next FK_JOIN (a fork-join scope) the task must not read
 *     a forked child's result, and must not use FK_ALLOC/FK_FREE.                      *
 *  5. Every FK_FORK is joined before FK_RETURN (fully strict fork-join), and the body ends
 *     in FK_RETURN on every path.                                                      *
 *  6. FK_ALLOC blocks are freed with FK_FREE in reverse order, before FK_RETURN.        *
 *  7. FK_FORK, FK_CALL, FK_JOIN and FK_RETURN appear only in the task's own body (not in a
 *     helper function): each may return from the task.
 *  8. Ordinary C functions may be called anywhere; they cannot fork.
 *  9. FK_RUN must not be called from inside a task of the same pool (it would wait on
 *     itself; it returns FK_EDEADLK).
 *
 * WHAT RUNS WHERE
 *  - Continuation stealing (FK_STEAL_CONT, default): FK_FORK runs the child at once, as a
 *    plain C call; the parent's continuation sits in the worker's deque and an idle worker
 *    may steal it (a frame that was stolen once makes its later continuations public as it
 *    pushes them).  On one worker the order of execution is the serial projection's.
 *  - Child stealing (FK_STEAL_CHILD): FK_FORK records the call in the deque and the parent
 *    goes on; FK_JOIN runs the children still there, newest first.  With frames on frame
 *    stacks (seg, lin), a join whose child was stolen and has not finished suspends the
 *    parent's frame and whoever finishes last resumes it: no worker thread ever blocks.
 *    With native frames (FK_STACK_NATIVE) the frame is in the task's own C stack frame and
 *    such a join waits, stealing meanwhile from the thief of its child (leapfrogging) or,
 *    while the worker's C stack is shallow enough, from anyone.
 *  - Frames live on per-worker frame stacks: segmented (FK_STACK_SEG: stacklets that
 *    double, one empty stacklet cached) or linear (FK_STACK_LIN: one reserved region per
 *    stack, fatal error on overflow naming the setting to raise), or natively (above).
 *  - The scheduler is greedy: work a worker has pushed reaches idle workers even while its
 *    owner runs a long leaf (a thief whose requests go unanswered forces the publication).
 *
 * BUILDING TASK CODE
 *  Compile with GCC or Clang (the macros use GNU C: statement expressions, typeof).  For
 *  the fastest fork path: -O2 or -O3, no -fPIE (resume points are then one-instruction
 *  stores), and with GCC --param partial-inlining-entry-probability=80 (so that a
 *  recursive task's leaf test is inlined into its forks and calls).  Linked into a shared
 *  library, build the runtime with -DFK_TLS_MODEL='"initial-exec"'.
 *
 * ERRORS
 *  Functions return 0 or a negative FK_E* code (fk_strerror names it).  A failure inside a
 *  running task (out of memory for a stacklet or deque, linear stack overflow, a broken
 *  rule caught by FK_DEBUG) prints what happened and aborts: there is no way to unwind a
 *  half-run fork-join computation safely.
 */
#ifndef FORKSCOPE_H
#define FORKSCOPE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A pool of workers (opaque; runtime/pool.c): fk_pool_create below. */
typedef struct fk_pool fk_pool;

#include "forkscope/impl.h"

/* ---- errors ------------------------------------------------------------------------ */

#define FK_ERRNO_MAP(X)                                                              \
    X(NOMEM, "out of memory")                                                        \
    X(INVAL, "invalid argument")                                                     \
    X(AGAIN, "cannot create a worker thread")                                        \
    X(DEADLK, "FK_RUN called from a worker of the same pool")                        \
    X(TOPO, "topology unavailable or invalid")                                       \
    X(SHUTDOWN, "the pool is shutting down")

#define FK__ERR_IDX(name, msg) FK__ERRI_##name,
#define FK__ERR_VAL(name, msg) FK_E##name = -FK__ERRI_##name,
enum { FK__ERRI_NONE_, FK_ERRNO_MAP(FK__ERR_IDX) FK__ERRI_COUNT_ };
typedef enum fk_err { FK_OK = 0, FK_ERRNO_MAP(FK__ERR_VAL) } fk_err;

/* A static message for code err (0 or FK_E*); "unknown error" for anything else. */
const char *fk_strerror(int err);
/* The code's name without prefix ("NOMEM"), "OK" for 0. */
const char *fk_err_name(int err);

/* ---- the pool ---------------------------------------------------------------------- */

/* Who makes a worker's private forks stealable.  A fork's record is private to its worker (no
 * fence) until it is published.
 *   FK_PROMOTE_THIEF: receiver-initiated.  A thief that finds nothing public asks the owner,
 *     which publishes the oldest half of its private records at its next fork or join (Lace's
 *     split deque; Acar, Chargueraud and Rainey, PPoPP 2013).
 *   FK_PROMOTE_BEAT: heartbeat (Acar et al., PLDI 2018).  Thieves never ask; every beat_us a
 *     heartbeat thread marks each worker that holds private records, and the worker promotes
 *     its oldest one at its next fork or join.  The beat is wall-clock time (Spice's design),
 *     and only a worker holding private work, so a working one, is marked: an idle or sleeping
 *     worker holds none.
 * In both, a thief that has found nothing for force_after_us publishes a busy owner's oldest
 * records itself (greediness: a long leaf's sibling is taken); force_after_us = 0 turns that
 * off, and heartbeat then polls at forks and joins only. */
typedef enum fk_promote {
    FK_PROMOTE_THIEF = 0,
    FK_PROMOTE_BEAT = 1,
} fk_promote;

/* How much a heartbeat's promotion makes stealable (FK_PROMOTE_BEAT):
 *   FK_BEAT_ONE: the oldest private record, one a beat (the heartbeat papers' rule, on which
 *     their work bound rests: at most (T / N + 1) promotions in a run of T).
 *   FK_BEAT_HALF: the oldest half of them, at least one, as a thief's request gets: a loop of
 *     forks (a time step's strips) reaches thieves in one beat rather than one strip a beat;
 *     the promotions per beat stay one, their slots up to half the deque. */
typedef enum fk_beat_share {
    FK_BEAT_ONE = 0,
    FK_BEAT_HALF = 1,
} fk_beat_share;

typedef enum fk_sched {
    FK_SCHED_BUSY = 0, /* idle workers keep stealing, with pause/backoff and, after long failure, yield */
    FK_SCHED_LAZY = 1, /* idle workers sleep; while any worker is busy one thief stays awake */
} fk_sched;

typedef enum fk_placement {
    FK_PLACE_COMPACT = 0, /* fill PUs in order: neighbouring workers share cores and caches */
    FK_PLACE_SPREAD = 1,  /* round-robin over packages / NUMA nodes first */
    FK_PLACE_NONE = 2,    /* no placement: no pinning, all workers in one group */
} fk_placement;

typedef enum fk_victims {
    FK_VICTIMS_TOPO = 0,    /* Eq. 6: closest group first, then weighted by 1/(n_r r^2) */
    FK_VICTIMS_UNIFORM = 1, /* any other worker, equally likely (for A/B comparisons) */
} fk_victims;

/* Fibers (child-fiber builds): where a parked fiber resumes once what it waits for is done. */
typedef enum fk_fiber_resume {
    FK_RESUME_ANY = 0,  /* on the worker that completes it (FiberTaskingLib: fibers migrate) */
    FK_RESUME_HOME = 1, /* on the worker that made the fiber (marl: a fiber never moves) */
} fk_fiber_resume;

/* Per-worker time accounting (fk_pool_times) and, on top of it, a timeline of every worker
 * (fk_pool_trace_write). */
typedef enum fk_account {
    FK_ACCOUNT_OFF = 0,   /* nothing measured (the default: no clock is read) */
    FK_ACCOUNT_TIMES = 1, /* each worker's time split into categories (fk_time_cat) */
    FK_ACCOUNT_TRACE = 2  /* that, and every transition logged for a trace */
} fk_account;

typedef struct fk_pool_opts {
    unsigned workers;          /* number of workers, 1..FK_MAX_WORKERS; 0: one per online CPU */
    fk_sched sched;            /* FK_SCHED_BUSY or FK_SCHED_LAZY */
    const char *topology;      /* NULL or "": this machine; "xml:FILE"; "synthetic:DESC" (hwloc's
                                  synthetic syntax, e.g. "pack:2 core:56 pu:1").  Workers are
                                  pinned to PUs only on this machine and only if no more
                                  workers than PUs (several busy workers on one PU would wait
                                  for each other's time slices). */
    fk_placement placement;    /* where worker k goes (and so its NUMA node and victim groups) */
    fk_victims victims;        /* whom an idle worker tries to steal from */
    size_t thread_stack_bytes; /* native stack of each worker thread (64 KiB to 1 TiB) */
    size_t linear_stack_bytes; /* FK_STACK_LIN: bytes reserved per frame stack (64 KiB to 1 TiB) */
    size_t stacklet_bytes;     /* FK_STACK_SEG: size of a stack's first stacklet */
    size_t leap_stack_bytes;   /* native frames: a join that waits steals from workers other
                                  than its child's thief only while the worker's C stack is
                                  shallower than this (bounds the C stack; see config.h) */
    size_t fiber_stack_bytes;  /* fibers: the stack of each fiber (bounds a task tree's depth) */
    fk_fiber_resume fiber_resume; /* fibers: where a parked fiber resumes */
    uint32_t force_after_us;   /* greediness: a thief that has found no work for this long forces
                                  a victim holding private work to publish it (a membarrier(),
                                  at most once per force_after_us / 2 pool-wide, and at most
                                  about 1/20 of the time, by what each forcing takes); 0: never */
    fk_promote promote;        /* who makes private forks stealable: thieves that ask (default) or
                                  a heartbeat every beat_us (FK_PROMOTE_BEAT; not with fibers) */
    uint32_t beat_us;          /* FK_PROMOTE_BEAT: the beat's period, 1 us to 10 s */
    fk_beat_share beat_share;  /* FK_PROMOTE_BEAT: what a promotion publishes (FK_BEAT_ONE) */
    uint64_t seed;             /* seeds the workers' victim choices (reproducible runs) */
    fk_account account;        /* time accounting and traces (see fk_pool_times); off by default */
    uint32_t trace_events;     /* FK_ACCOUNT_TRACE: events each worker's log holds; those past
                                  it are counted as dropped (fk_trace_summary), never lost silently */
} fk_pool_opts;

/* Fills o with the defaults of forkscope/config.h, then applies the environment:
 *   FORKSCOPE_WORKERS, FORKSCOPE_SCHED (busy|lazy), FORKSCOPE_TOPOLOGY (as .topology),
 *   FORKSCOPE_PLACEMENT (compact|spread|none), FORKSCOPE_VICTIMS (topo|uniform),
 *   FORKSCOPE_THREAD_STACK, FORKSCOPE_LINEAR_STACK, FORKSCOPE_STACKLET, FORKSCOPE_LEAP_STACK,
 *   FORKSCOPE_FIBER_STACK (sizes in bytes, K/M/G suffixes allowed), FORKSCOPE_FIBER_RESUME
 *   (any|home), FORKSCOPE_FORCE_AFTER (microseconds), FORKSCOPE_PROMOTE (thief|beat),
 *   FORKSCOPE_BEAT_US (microseconds), FORKSCOPE_BEAT_SHARE (one|half), FORKSCOPE_ACCOUNT (off|times|trace),
 *   FORKSCOPE_TRACE_EVENTS (events per worker).
 * A malformed variable is reported on stderr and ignored. */
void fk_pool_opts_init(fk_pool_opts *o);

/* Starts a pool of workers (threads that wait for roots).  On success *out owns the pool.
 * Returns FK_EINVAL for bad options, FK_ETOPO for a topology that cannot be loaded (with a
 * message on stderr naming it), FK_ENOMEM or FK_EAGAIN if resources run out (then nothing
 * is left running). */
int fk_pool_create(fk_pool **out, const fk_pool_opts *o);

/* Prints the pool's topology, where each worker is placed and pinned, and each worker's
 * victim groups with their weights. */
void fk_pool_describe(const fk_pool *pool, FILE *out);

/* Prints what a pool created with o would see, without starting one: the topology
 * (o->topology), where each of o->workers workers would be placed (o->placement) and
 * pinned, and each worker's victim groups with their weights; the other options are not
 * used.  Returns 0; FK_EINVAL or FK_ETOPO with a one-line message naming the topology in
 * err (errlen bytes) if it cannot be built; FK_ENOMEM. */
int fk_topology_describe(const fk_pool_opts *o, FILE *out, char *err, size_t errlen);

/* "compact"/"spread"/"none" and "topo"/"uniform", and the reverse (0 or FK_EINVAL). */
const char *fk_placement_name(fk_placement p);
int fk_placement_parse(const char *name, fk_placement *out);
const char *fk_victims_name(fk_victims v);
int fk_victims_parse(const char *name, fk_victims *out);
const char *fk_fiber_resume_name(fk_fiber_resume r);
int fk_fiber_resume_parse(const char *name, fk_fiber_resume *out);
const char *fk_account_name(fk_account a); /* "off", "times", "trace" */
const char *fk_promote_name(fk_promote p);  /* "thief", "beat" */
int fk_promote_parse(const char *name, fk_promote *out);
const char *fk_beat_share_name(fk_beat_share s); /* "one", "half" */
int fk_beat_share_parse(const char *name, fk_beat_share *out);
int fk_account_parse(const char *name, fk_account *out);

/* Shuts the pool down: from the moment it is called, FK_RUN refuses new roots with
 * FK_ESHUTDOWN; every root already accepted runs to completion (its caller gets 0 and its
 * result); then the workers stop and their threads are joined.  Other threads may call
 * FK_RUN on the pool while this runs and after it returned (they get FK_ESHUTDOWN), until
 * fk_pool_destroy.  Calling it again does nothing.  Not from a task of the pool itself
 * (it would wait for its own root: it aborts, saying so).  Tasks spawned with fk_spawn
 * that no root waits for may be dropped. */
void fk_pool_shutdown(fk_pool *pool);

/* fk_pool_shutdown, then frees everything the pool owns.  No thread may use the pool once
 * this is called: a thread that may still call FK_RUN on it must be waited for between a
 * fk_pool_shutdown and this. */
void fk_pool_destroy(fk_pool *pool);

unsigned fk_pool_workers(const fk_pool *pool);

/* FK_RUN(pool, &result, task, args...): runs task(args) as a root on the pool and waits
 * for it; result receives its value (a null address drops it).  Any ordinary thread may call it, several at once.
 * Returns 0, FK_EDEADLK (called from one of this pool's workers) or FK_ESHUTDOWN (the
 * pool is shutting down or shut down: the root did not run). */
#define FK_RUN(pool, ret, task, ...) FK_RUN_ON(pool, -1, ret, task, __VA_ARGS__)

/* FK_RUN_ON(pool, worker, &result, task, args...): the same, but the root starts on the
 * given worker (0..workers-1; -1: any), through that worker's submission queue.  Returns
 * FK_EINVAL for a worker the pool does not have. */
#define FK_RUN_ON(pool, worker, ret, task, ...)                                           \
    ((void)sizeof((ret) == (task##__ret_t *)0),                                           \
     fk__run((pool), (worker), task##__thunk, (void *)(ret), &(struct task##__args){__VA_ARGS__}, \
             sizeof(struct task##__args), &FK__ABI_SYM))

/* ---- counters: waits that block a fiber, not a worker ------------------------------------
 * A counter counts outstanding work; fk_counter_wait returns once it is zero.  In a task of
 * a child-fiber build the wait parks the task's fiber and the worker runs other work
 * meanwhile (FiberTaskingLib's WaitForCounter, marl's WaitGroup); on a thread that is not a
 * worker it blocks the thread.  In the other builds a task cannot wait on a counter (its
 * worker would block, and with it the work the count waits for): fk_counter_wait aborts
 * there, saying so.  Any number of fibers and threads may wait on one counter.  The count
 * may rise again after it reached zero only once every waiter of that zero has returned.
 * The fields are private (fk__): use only the fk_counter_* functions.  They are in this
 * header only so that a counter can be embedded by value (in a frame, a struct). */
typedef struct fk_counter {
    _Atomic uint64_t fk__state; /* the count (low 32 bits) and, above it, "a zero is being announced" */
    _Atomic uint32_t fk__lock;  /* guards fk__waiters (fk_counter_done at zero, a fiber parking) */
    _Atomic uint32_t fk__seq;   /* futex word of waiting threads: bumped at every zero */
    void *fk__waiters;          /* parked fibers */
} fk_counter;

void fk_counter_init(fk_counter *c, uint32_t n);
void fk_counter_add(fk_counter *c, uint32_t n);
/* Takes one off the count; at zero, every waiter continues.  Any thread, any task.  A waiter
 * returns only once the fk_counter_done that made the zero no longer touches the counter, so
 * the counter may live in the waiter's frame (and die when it returns). */
void fk_counter_done(fk_counter *c);
void fk_counter_wait(fk_counter *c);
uint32_t fk_counter_value(fk_counter *c);

/* FK_SPAWN(&counter, &result, task, args...), in a task of a child-fiber build: adds one to
 * the counter and starts task(args) detached from the caller's fork-join scope (FK_JOIN does
 * not wait for it); when it has finished, with its result in place, the counter goes down
 * by one.  fk_spawn(&counter, fn, arg) does the same for a plain function fn(arg).  A task
 * that waits on the counter first runs the spawned work still on its worker's deque. */
#define FK_SPAWN(counter, slot, task, ...) FK__SPAWN(counter, slot, task, __VA_ARGS__)
void fk_spawn(fk_counter *c, void (*fn)(void *), void *arg);

/* ---- statistics -------------------------------------------------------------------- */

typedef struct fk_stats {
    uint64_t forks, calls, roots;   /* children created by FK_FORK / FK_CALL (counted only in
                                       tasks compiled with FK_STATS=2, else 0); roots run */
    uint64_t steals;                /* successful steals */
    uint64_t steal_empty;           /* attempts that found the victim's public deque empty */
    uint64_t steal_lost;            /* attempts that lost a race with another thief or the owner */
    uint64_t publishes, reclaims;   /* owner made deque slots public / took public slots back */
    uint64_t forced;                /* publications this thief forced on an owner that did not
                                       answer its requests (greediness; see deque.c) */
    uint64_t force_tries;           /* forcings it tried (each a membarrier(), which interrupts
                                       every worker), published something or not */
    uint64_t suspends;              /* joins (explicit or implicit) that could not continue at once
                                       (native frames: joins that waited for stolen children) */
    uint64_t leaps;                 /* native frames: children stolen back from the thief of an
                                       awaited child, or from anyone, while a join waited */
    uint64_t sleeps;                /* times a lazy worker went to sleep */
    uint64_t fibers;                /* fibers: fibers made (each a stack of fiber_stack_bytes) */
    uint64_t migrations;            /* fibers: parked fibers resumed on another worker */
    uint64_t stacklets_alloc, stacklets_freed; /* segmented: stacklets; linear: regions */
    uint64_t stack_bytes_peak;      /* pool-wide peak of frame-stack bytes held (segmented:
                                       stacklets allocated; linear: bytes touched, in 64 KiB steps) */
} fk_stats;

/* Sums the workers' statistics (since the last fk_pool_stats_reset) into *sum; per_worker,
 * if not NULL, receives one entry per worker.  Safe at any time; between roots the numbers
 * are those of the finished roots (idle thieves may still add failed steal attempts).
 * fk_stats_enabled() returns the library's FK_STATS: 0 (every counter reads 0) or not. */
void fk_pool_stats(const fk_pool *pool, fk_stats *sum, fk_stats *per_worker);
void fk_pool_stats_reset(fk_pool *pool);
int fk_stats_enabled(void);

/* ---- where the time goes: per-worker time accounting ------------------------------- *
 * With fk_pool_opts.account on, every worker's time since the pool started (or since the
 * last fk_pool_stats_reset) is split into the categories below, by reading the clock
 * (fk_clock_get) at the scheduler's own transitions; the fork/join fast path reads none, so
 * the fast path's own cost counts as work.  Per worker the categories add up to its wall
 * time: each moment belongs to exactly one.  Off (the default), a transition costs one
 * load and an untaken branch, on slow paths only.  Any thread may read them at any time. */
typedef enum fk_time_cat {
    FK_TIME_WORK,   /* running task code (roots, stolen work, resumed frames) */
    FK_TIME_SEARCH, /* looking for work: failed steal attempts, backoff, the idle loop */
    FK_TIME_STEAL,  /* after a successful steal, the set-up until the stolen work runs (the
                       attempt itself, failed or not, is search) */
    FK_TIME_JOIN,   /* join slow paths: arriving at a join counter, a fork whose
                       continuation was stolen, completing a task and resuming its parent */
    FK_TIME_WAIT,   /* native frames: a join waiting for stolen children (between leaps) */
    FK_TIME_FIBER,  /* fibers: parking, switching and resuming fibers */
    FK_TIME_SLEEP,  /* a lazy worker asleep */
    FK_TIME_PROMOTE, /* making private forks stealable: the owner publishing its oldest ones
                        when asked (a thief's request, a heartbeat's mark), and taking back a
                        slot it had published (the reclaim's fence and CAS) */
    FK_TIME_NCAT
} fk_time_cat;

typedef struct fk_times {
    double ns[FK_TIME_NCAT]; /* per category */
    double wall_ns;          /* their sum: the worker's wall time (summed over workers) */
    double cpu_ns;           /* the worker thread's CPU time over the same interval: wall_ns -
                                cpu_ns - ns[FK_TIME_SLEEP] is time the OS had it descheduled
                                (more workers than cores; it counts in whatever category the
                                worker was in) */
} fk_times;

/* "work", "search", ... (NULL for a value out of range). */
const char *fk_time_cat_name(fk_time_cat c);
/* Fills *sum (all workers) and per_worker[i] (if not NULL): 0, or FK_EINVAL if the pool's
 * accounting is off. */
int fk_pool_times(const fk_pool *pool, fk_times *sum, fk_times *per_worker);

/* The clock the accounting and the span build read. */
typedef struct fk_clock_info {
    const char *source;          /* "tsc" (invariant time-stamp counter) or "monotonic" */
    double ns_per_tick;          /* calibrated against CLOCK_MONOTONIC (1 for monotonic) */
    double calibration_ms;       /* how long the calibration ran (0: none) */
    const char *fallback_reason; /* why not the TSC ("" when it is) */
} fk_clock_info;
void fk_clock_get(fk_clock_info *out);

/* ---- timelines (fk_pool_opts.account = FK_ACCOUNT_TRACE) -------------------------------- *
 * Writes the workers' timelines since the last fk_pool_stats_reset (or the pool's start) as
 * a Chrome Trace Event Format file (Perfetto's UI and chrome://tracing open it): one track
 * per worker, a span per period of one category (work periods named by the task that began
 * them when the runtime knows it: a stolen or resumed frame's task, "root", "stolen child"),
 * each steal a flow from the victim's track to the thief's, each promotion (a request
 * answered, a thief's or a heartbeat's, and on cont-* builds a stolen frame publishing its own
 * forks) an instant mark "promote" on the owner's track.  meta: NULL, or pairs of strings
 * (key, value, ..., NULL) added to the file's "otherData" beside the variant, the clock and
 * the event counts.  Call it while the pool is idle (between roots): each worker's last span
 * ends at the call (at its last logged move if its log was full).  Each reset starts the logs
 * afresh (a worker's, at its first move after it), so that a warm-up does not fill them.
 * 0, FK_EINVAL (tracing off) or an errno value. */
typedef struct fk_trace_summary {
    uint64_t events;  /* events (moves between categories, steals, leaps), all workers, since the
                         last fk_pool_stats_reset (or the pool's start): in the file or dropped */
    uint64_t dropped; /* of those, the ones past a full log (fk_pool_opts.trace_events): not in the file */
    uint64_t steals;  /* steal events, in the file or dropped */
    uint64_t promotions; /* "promote" marks in the file: a worker's private forks published in answer to a
                            thief's request or a heartbeat (forced publications are not marked) */
} fk_trace_summary;
int fk_pool_trace_write(const fk_pool *pool, FILE *out, const char *const *meta, fk_trace_summary *summary);

/* ---- work and span (the span build: FK_SPAN=1, runtime/span.c) -------------------- */

/* A span build runs its tasks on one worker in the serial projection's order and measures
 * the fork-join DAG they make: work (the sum of the strands), span (the longest path), and
 * the burdened span (each fork charged `burden`, a steal's cost, on the forked child's path
 * to the join and on the continuation, as Cilkscale does).  One measurement at a time, by
 * one pool of one worker (the measurement is global).  Costs
 * are ns (FK_SPAN_TIME: the time-stamp counter; the hooks' own time is not counted) or
 * strands (FK_SPAN_STRANDS: each strand costs 1: the DAG's shape, exact).  Roots run one
 * after another: their works and spans add up.
 *
 * Time is noisy where it matters most: the span is a maximum over paths, so an interrupt
 * or a preemption in any strand lands on some path (a 50 us tick on fib(25), whose true
 * span is under 1 us).  So a measurement may span several repetitions of the same program
 * (fk_span_next_rep between them): the first logs the DAG's events and every strand's
 * time, the second and third add theirs, and fk_span_get evaluates the DAG again with each
 * strand's median of three (the least of two) (FK_SPAN_PER_STRAND_MEDIAN): a span and a work
 * (min_work) of typical strands without their hiccups (`work`: the median of the
 * repetitions' own sums; the two differ by the noise the medians drop).  Warm-up
 * repetitions are not part of a measurement: reset after them.  A log over FORKSCOPE_SPAN_LOG_MIB
 * (default FK_SPAN_LOG_MIB; ~14 bytes a strand), a strand of over a second, or a repetition
 * whose DAG differs, falls back to the least of the repetitions' own figures, and says so.
 * A strand's time leaves out the hooks' own time, but holds what is left of each hook
 * around it (a call, a return, a read of the clock): `hook` is taken off for each, the residue
 * measured on empty strands but never more than the least time any strand took a hook
 * (`hook_bound`), so that no strand is taken below 0 and a repetition's work is never less
 * than its strands' raw time less hook_bound a hook, on any host.  Where what is left is not
 * at least twice the residue or the clock's resolution for each hook (fib's strands are
 * about 1 ns), the clock does not resolve the strands: `resolved` says so, the times mean
 * little, and the DAG in strands is given beside.
 * Other builds: fk_span_enabled() is 0 and fk_span_get fails. */
typedef enum { FK_SPAN_TIME, FK_SPAN_STRANDS } fk_span_unit;
typedef enum {
    FK_SPAN_EXACT,              /* strands: counted */
    FK_SPAN_PER_STRAND_MEDIAN,     /* time: the DAG with each strand's median time of three repetitions */
    FK_SPAN_REP_MIN_LOG_FULL,   /* time: the least over the repetitions (the log outgrew its cap) */
    FK_SPAN_REP_MIN_DAG_VARIED, /* time: the least over the repetitions (their DAGs differed) */
    FK_SPAN_REP_MIN_LONG_STRAND, /* time: the least over the repetitions (a strand too long to log) */
} fk_span_method;
typedef struct fk_span_result {
    fk_span_unit unit;
    fk_span_method method;
    double work;          /* the median of the repetitions' own works: ns, or strands */
    double min_work;      /* time: the sum of each strand's median time (what the span is
                             measured against: parallelism = min_work / span); strands: work */
    double span, burdened_span, burden;
    double last_span;                         /* the last repetition's own span, unfiltered */
    double hook;       /* time: what is taken off a strand for each hook (for the strand and
                          each hook inside it), ns: min(hook_calibrated, hook_bound) */
    double hook_calibrated; /* time: the hooks' residue measured on empty strands, ns */
    double hook_bound; /* time: the least any strand of the measurement took a hook, ns (no
                          hook leaves more in a strand than the strand took) */
    double clock_resolution; /* time: the least step between two reads of the clock, ns */
    double raw_work;   /* time: the median of the repetitions' strands' raw times, ns (work
                          >= raw_work - hooks * hook_bound) */
    uint64_t hooks;    /* time: the residues taken off in the last repetition (a strand's
                          and one for each hook inside it) */
    int resolved;      /* time: the work is at least twice what is uncertain in it (for each
                          hook, `hook` or the clock's resolution, whichever is more); if not,
                          the clock cannot resolve the strands and the times mean little: the
                          DAG's shape in strands below still holds */
    double strand_work, strand_span; /* the DAG in strands (the last repetition's), in every unit */
    uint64_t strands, forks, roots;           /* of the last repetition */
    unsigned reps;                            /* repetitions combined */
} fk_span_result;
int fk_span_enabled(void);
/* Starts a measurement (between roots): costs in `unit`, `burden` per fork in that unit. */
void fk_span_reset(fk_span_unit unit, double burden);
/* Between repetitions of the same program within one measurement. */
void fk_span_next_rep(void);
/* What was measured since the reset: 0, or FK_EINVAL (not a span build, or a root is
 * still running).  May be called again after more repetitions. */
int fk_span_get(fk_span_result *r);
/* The method's name: "exact", "per-strand minimum", ... */
const char *fk_span_method_name(fk_span_method m);

/* The compile-time variant of this build: "cont-seg", "cont-lin", "child-seg", "child-lin",
 * "child-native", "child-fiber". */
const char *fk_build_variant(void);
/* "busy" / "lazy", and the reverse (0 on success, FK_EINVAL otherwise). */
const char *fk_sched_name(fk_sched s);
int fk_sched_parse(const char *name, fk_sched *out);

/* Inside a task: the index (0..workers-1) of the worker running it. */
#define FK_WORKER_ID() fk__worker_id()
/* Inside a task, outside a fork-join scope, after FK_BEGIN: continue on worker k (for
 * example the thread that owns a resource that is not thread-safe).  The task's frame is
 * handed to k through k's submission queue (fibers: the task's fiber parks and k resumes
 * it); like a fork, this may resume the task on another worker, so rule 1 applies.  Aborts
 * if the pool has no worker k.  Not in child-native builds (a compile-time error): a frame
 * in a C stack frame cannot move. */
#define FK_SWITCH_TO(k) FK__SWITCH(__COUNTER__, k)

/* ---- the task macros ----------------------------------------------------------------- */

/* FK_TASK(name, result type, frame declaration, (type, param)...) { body } FK_END */
#define FK_TASK(name, RET, FRAMEDECL, ...) FK__TASK(name, RET, FRAMEDECL, __VA_ARGS__)

/* A task that never forks, calls or joins (so it never needs a frame and is never
 * resumed): FK_LEAF_TASK(name, result type, (type, param)...) { ... FK_RETURN(v); } FK_END.
 * It can be forked, called and run as a root like any task. */
#define FK_LEAF_TASK(name, RET, ...) FK__LEAF_TASK(name, RET, __VA_ARGS__)

/* Tasks shared between files.  In a header:
 *     FK_TASK_DECLARE(name, result type, (type, param)...)
 * and in exactly one .c file that includes it, with the same result type and parameters:
 *     FK_TASK_DEFINE(name, result type, frame declaration, (type, param)...) { ... } FK_END
 * or  FK_LEAF_TASK_DEFINE(name, result type, (type, param)...) { ... } FK_END
 * Every file that includes the header can then fork, call and run the task.  (No ';' after
 * FK_TASK_DECLARE: like FK_END, it ends in a function body.) */
#define FK_TASK_DECLARE(name, RET, ...) FK__TASK_IFACE(name, RET, extern, __VA_ARGS__)
#define FK_TASK_DEFINE(name, RET, FRAMEDECL, ...) FK__TASK_DEFINE(name, RET, FRAMEDECL, __VA_ARGS__)
#define FK_LEAF_TASK_DEFINE(name, RET, ...) FK__LEAF_TASK_DEFINE(name, RET, __VA_ARGS__)

/* Closes the body of an FK_TASK or FK_LEAF_TASK. */
#define FK_END FK__END

/* Allocates the task's frame (the variable named in FK_TASK): on the worker's frame stack,
 * or (native variants) in the task's own C stack frame.  Every FK_TASK has exactly one
 * FK_BEGIN, at the top level of its body, before its first fork, call, join or FK_ALLOC (a
 * task without one does not compile: use FK_LEAF_TASK).  The code before FK_BEGIN runs
 * only on a fresh call: a resumed task continues at its resume point. */
#define FK_BEGIN(var) FK__BEGIN(var)

/* FK_FORK(member, task, args...): start a child that may run in parallel; its result goes
 * to the frame's member (f->member: `a`, `part[n]`, `pair.lo`), which the task reads after
 * the FK_JOIN. */
#define FK_FORK(member, task, ...) FK__FORK(__COUNTER__, FK__MEMBER_SLOT(member, task), task, __VA_ARGS__) /* FK_FORK(a, ...) stores to f->a: it takes a member's NAME, not &f->a, and a member in the frame, not one through a pointer (FK_FORK_AT(pointer, ...): an address; FK_FORK_VOID(task, ...): no result) */
/* FK_CALL(member, task, args...): run a child to completion before going on; its result
 * goes to f->member. */
#define FK_CALL(member, task, ...) FK__CALL(__COUNTER__, FK__MEMBER_SLOT(member, task), task, __VA_ARGS__) /* FK_CALL(b, ...) stores to f->b: it takes a member's NAME, not &f->b, and a member in the frame, not one through a pointer (FK_CALL_AT(pointer, ...): an address; FK_CALL_VOID(task, ...): no result) */
/* FK_FORK_VOID(task, args...), FK_CALL_VOID(task, args...): the same for a task whose result
 * type is void (a task that returns a value is refused: its result must go somewhere). */
#define FK_FORK_VOID(...) FK__FORK_VOID(__COUNTER__, __VA_ARGS__)
#define FK_CALL_VOID(...) FK__CALL_VOID(__COUNTER__, __VA_ARGS__)
/* FK_FORK_AT(pointer, task, args...), FK_CALL_AT(pointer, task, args...): the result goes to
 * *pointer, memory the task vouches outlives the join and is seen wherever the task
 * continues: the heap, a global, an array the task was given, a block of FK_ALLOC.  Never
 * a C local or a parameter of the task (with frames on frame stacks they are gone when the
 * task continues on another worker; with frames on frame stacks every build refuses an
 * address in the running worker's own C stack at run time, naming the task). */
#define FK_FORK_AT(pointer, task, ...) FK__FORK(__COUNTER__, FK__AT_SLOT(pointer, task), task, __VA_ARGS__)
#define FK_CALL_AT(pointer, task, ...) FK__CALL(__COUNTER__, FK__AT_SLOT(pointer, task), task, __VA_ARGS__)
/* FK_JOIN(): wait until every child forked since the last join has finished. */
#define FK_JOIN() FK__JOIN(__COUNTER__)

/* FK_RETURN(value): free the frame (if any), deliver value, return from the task. */
#define FK_RETURN(v) FK__RETURN_VALUE(v)
#define FK_RETURN_VOID() FK__RETURN_NOVALUE()

/* FK_ALLOC(type, n): n objects of type on the worker's frame stack (16-byte aligned).
 * Only outside a fork-join scope, after FK_BEGIN; free with FK_FREE in reverse order. */
#define FK_ALLOC(T, n) FK__ALLOC(T, n)
#define FK_FREE(p) FK__FREE(p)

#endif
