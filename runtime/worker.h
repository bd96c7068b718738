/* worker.h — the runtime's internal types: workers, pools, and the functions the runtime's
 * modules share (prefix fk__).  Not installed: users see forkscope.h only. */
#ifndef FK_WORKER_H
#define FK_WORKER_H

#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>

#include "fiber.h"
#include "forkscope.h"
#include "mpsc.h"
#include "victim.h"

/* Per-worker statistics that are not on the fork fast path (those live in fk__hot).
 * Only the owner writes them (FK__COUNT: load + store); anyone may read them. */
typedef struct fk__wstats {
    _Atomic uint64_t roots, steals, steal_empty, steal_lost, publishes, forced, force_tries, reclaims, suspends, sleeps,
        leaps;
    _Atomic uint64_t fibers, migrations;
    _Atomic uint64_t stacklets_alloc, stacklets_freed;
} fk__wstats;

#if FK_STATS
#define FK__WSTAT(w, field) FK__COUNT((w)->st.field)
#else
#define FK__WSTAT(w, field) ((void)0)
#endif

/* Per-worker time accounting (account.c).  The owner moves its worker from one category
 * (fk_time_cat) to the next at the scheduler's transitions: the time since `last` goes to
 * the category it leaves.  Readers (any thread) take a consistent copy under `seq` (odd
 * while the owner updates) and raise `seen` to the time they counted the open period up to.
 * With a trace, each transition is also logged. */
enum fk__tev_kind { FK__TEV_CAT, FK__TEV_STEAL, FK__TEV_LEAP, FK__TEV_PROMOTE };
typedef struct fk__tev {
    uint64_t tick;
    const char *name; /* FK__TEV_CAT to work: the task that began it, if known */
    uint16_t kind, cat;
    uint32_t arg;     /* steal, leap: the victim; promote: the slots published */
} fk__tev;

typedef struct fk__acct {
    int on;                    /* the pool's accounting is on (set before the worker starts) */
    _Atomic uint32_t seq;
    _Atomic uint32_t cat;      /* the current category */
    const char *name;          /* the task its work period began with, if known (owner only) */
    _Atomic uint64_t last;     /* when it began (ticks) */
    _Atomic uint64_t t[FK_TIME_NCAT]; /* ticks of the categories' finished periods */
    _Atomic uint64_t seen;     /* readers: the latest time a reading counted the open period up
                                  to (ticks); the owner closes the period no earlier */
    fk__tev *ev;               /* the trace log (NULL: no trace), cap events */
    uint32_t cap;
    _Atomic uint32_t nev;      /* events logged (released after each is written) */
    _Atomic uint64_t dropped;  /* events that found the log full */
    _Atomic uint64_t steals;   /* steal events, logged or dropped */
    _Atomic uint32_t epoch;    /* the pool's acct_epoch the log holds events of (account.c) */
} fk__acct;

/* A deque buffer: capacity, the buffer it replaced (kept until the worker is destroyed,
 * since a slow thief may still read it), then the slots. */
typedef struct fk__dqbuf {
    uint64_t cap;
    struct fk__dqbuf *prev;
    void *mem; /* the mapping (the header is placed inside it, see deque.c) */
    size_t mem_bytes;
    fk__slot slots[];
} fk__dqbuf;

enum fk__wstate { FK__W_ACTIVE, FK__W_THIEF, FK__W_ASLEEP };

struct fk_worker {
    /* The worker thread's fk__tls (forkscope/impl.h): set by the worker itself when it
     * starts; other threads (thieves) reach its deque fields through it. */
    struct fk__hot *hot;

    /* Deque, shared with thieves.  Slots [top, split_pub) are public.  dq_lock: held by the
     * owner in its deque slow paths and by a thief forcing a publication (deque.c).  FK_LIVE:
     * top is a tag (high 32 bits) and the index (low 32), and the tag moves when the owner
     * lowers top (deque.c, "THE LIVE-MARK DEQUE"). */
    _Alignas(64) _Atomic uint64_t top;
    _Atomic uint64_t split_pub;
    _Atomic(fk__dqbuf *) dq_buf;
    _Atomic int dq_lock;
    /* split is in an older lap of the buffer than bottom (set with split, in the slow paths):
     * then every slot of this lap is private, whatever cur and splitp say (deque.c:
     * fk__deque_has_private). */
    _Atomic int split_lapped;

    /* Owner only from here on. */
    _Alignas(64) fk_pool *pool;
    unsigned id;
    fk__dqbuf *dq_cur;
    char *live_committed; /* FK_LIVE: the end of the deque's slots made usable so far */
    void *stk_cur;   /* current stack: fk__stacklet * (seg) or fk__region * (lin) */
    void *stk_spare; /* one empty stack kept for the next release, or NULL */
    fk_frame *pending; /* a frame to resume once the C stack has unwound (child stealing) */
#if FK_STEAL == FK_STEAL_CONT && !FK__NATIVE_FRAMES
    sigjmp_buf unwind_to; /* where task code that must unwind jumps (sched.c: enter_frame) */
#endif
    char *stack_base;  /* near the bottom of the worker thread's C stack (leapfrogging's bound) */
    char *cstack_lo;   /* lowest usable address of the worker's C stack (0: unknown) */
    char *cstack_map;  /* the C stack's mapping, guard included (pool.c: map_cstack), or NULL */
    size_t cstack_map_bytes;
    fk__victims victims;
    fk__wstats st;
    uint64_t hungry_since; /* ns (monotonic) since which this thief has found no work, or 0 */
    _Alignas(64) fk__acct acct; /* time accounting: owner writes, anyone reads (account.c) */
    _Atomic uint64_t final_forks, final_calls; /* hot->n_fork/n_call when the worker exited */

    /* Submissions from other threads (roots). */
    fk__mpsc inbox;

    /* Sleeping (lazy scheduler): the futex word, and whether a waker must use it. */
    _Alignas(64) _Atomic uint32_t wake_epoch;
    _Atomic int state; /* enum fk__wstate, read by submitters choosing a worker */

    unsigned group; /* index into pool->groups */
    pthread_t thread;

#if FK_STACK == FK_STACK_FIBER
    /* Fibers (owner only).  The thread's own stack runs no task: the worker starts on it,
     * switches to a fiber running the worker loop, and comes back to it to exit. */
    fk__fiber main_fiber;
    fk__fiber *idle;                    /* fibers to reuse, linked by next */
    fk__fiber *ready_head, *ready_tail; /* parked fibers that may continue here, FIFO */
#endif
};


/* What arrives in a worker's submission queue: a root from outside, or a frame that asked
 * to continue on this worker (FK_SWITCH_TO), with the stack it lives on if it brings one. */
enum fk__sub_kind { FK__SUB_ROOT, FK__SUB_FRAME, FK__SUB_FIBER };
typedef struct fk__sub {
    fk__mpsc_node node; /* first: the queue links these */
    int kind;
} fk__sub;

typedef struct fk__root {
    fk__sub sub;
    fk__record rec;
    _Atomic uint32_t done; /* futex word: 0 running, 1 finished */
} fk__root;

typedef struct fk__hop {
    fk__sub sub;
    fk_frame *frame;
    void *stack; /* the frame's stack, to adopt (NULL: the frame lives on a stack nobody holds) */
} fk__hop;

#if FK_STACK == FK_STACK_FIBER
/* What the scheduler keeps per fiber (fk__fiber.user). */
typedef struct fk__fstate {
    fk__sub sub;      /* first: a ready fiber sent to its home worker (FK__SUB_FIBER) */
    fk__fiber *fiber;
    fk_worker *home;  /* the worker that made it (FK_RESUME_HOME: the only one it runs on) */
    fk_worker *parked_on; /* where it parked last (for the migration count) */
    void *stack;      /* its frame stack (FK_ALLOC blocks) while parked, or NULL */
    fk_worker *move_to; /* FK_SWITCH_TO: the worker it is on its way to (ready there only) */
} fk__fstate;
#endif

/* A group of workers that share a lazy-scheduler budget (a NUMA node). */
typedef struct fk__group {
    _Alignas(64) _Atomic int thieves; /* awake workers of the group looking for work */
    unsigned n;                       /* members */
    unsigned *members;                /* worker ids */
} fk__group;

struct fk_pool {
    unsigned n;
    fk_sched sched;
    fk_pool_opts opts;
    fk_worker **workers;
    _Atomic int stop;

    /* Lazy scheduler bookkeeping.  Workers form groups (NUMA nodes); while any worker is
     * active, each group keeps one of its workers awake as a thief. */
    _Alignas(64) _Atomic int active; /* workers running tasks, pool-wide */
    _Atomic uint64_t sleepers[FK_MAX_WORKERS / 64];
    unsigned ngroups;
    fk__group *groups;
    fk__topo *topo; /* placement, NUMA nodes, victim groups (NULL with placement none) */
    int crowded;    /* more workers than the CPUs this process may run on (its affinity) */

    /* Frame-stack memory held by the whole pool (slow paths only). */
    _Alignas(64) _Atomic int64_t stack_bytes;
    _Atomic int64_t stack_bytes_peak;
    /* fk_pool_stats_reset: counters are reported relative to this snapshot. */
    fk_stats *baseline;
    /* ... and times relative to this one (ticks, FK_TIME_NCAT per worker; allocated with the
     * pool when it accounts), and traces from acct_t0 on (0: from the start); each reset
     * bumps acct_epoch, and a worker's first transition after it starts its log afresh. */
    _Atomic uint64_t *acct_base;
    _Atomic uint64_t *acct_cpu_base; /* each worker thread's CPU time at the reset, ns */
    _Atomic uint64_t acct_t0;
    _Atomic uint32_t acct_epoch;

    _Atomic unsigned next_submit; /* round-robin start for choosing a root's worker */
    _Atomic uint64_t force_next;  /* ns before which no thief may force a publication */
    /* FK_PROMOTE_BEAT: the heartbeat thread (pool.c), running while beating; told to stop
     * (beat_stop, under beat_lock, with beat_cond signalled: it waits on it between beats).
     * beat_parked: 1 while it waits for a lazy pool to turn active (fk__beat_wake). */
    pthread_t beat_thread;
    int beating, beat_stop, beat_made; /* beat_made: beat_lock and beat_cond exist (until fk_pool_destroy) */
    int beat_pus; /* the PUs free of workers it is bound to (fk__topo_spare_cpus; 0: none, unbound; -1: could not) */
    pthread_mutex_t beat_lock;
    pthread_cond_t beat_cond;
    _Atomic int beat_parked;
    _Atomic uint64_t beat_parks; /* how often it parked (for tests) */

    /* Start-up handshake; under lock too, the roots FK_RUN accepted and not yet returned
     * (inflight), whether the pool still accepts roots (closing: fk_pool_shutdown) and
     * whether its workers are being stopped (shut 1) or were (2). */
    unsigned inflight;
    int closing, shut;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    unsigned started;
    unsigned left; /* workers that have left their loop (they free their deques after all have) */
    int start_err;
};

/* account.c: the hooks.  FK__ACCT(w, c): from now on w's time goes to category c (nothing
 * when the accounting is off: one load and an untaken branch). */
#if FK_ACCOUNT
uint64_t fk__acct_to(fk_worker *w, unsigned cat, const char *name, uint64_t at); /* the time it used, 0: no move */
void fk__acct_event(fk_worker *w, unsigned kind, uint32_t arg, uint64_t at);
int fk__acct_worker_init(fk_worker *w);
int fk__acct_pool_init(fk_pool *p);
void fk__acct_worker_free(fk_worker *w);
void fk__acct_reset(fk_pool *p);
#define FK__ACCT_ON(w) __builtin_expect((w)->acct.on, 0)
#define FK__ACCT_NAMED(w, c, name)                                                          \
    do {                                                                                   \
        if (FK__ACCT_ON(w))                                                                \
            fk__acct_to((w), (c), (name), 0);                                              \
    } while (0)
#else
#define FK__ACCT_ON(w) 0
#define FK__ACCT_NAMED(w, c, name) ((void)0)
static inline uint64_t fk__acct_to(fk_worker *w, unsigned cat, const char *name, uint64_t at) {
    return (void)w, (void)cat, (void)name, (void)at, 0;
}
static inline void fk__acct_event(fk_worker *w, unsigned kind, uint32_t arg, uint64_t at) {
    (void)w, (void)kind, (void)arg, (void)at;
}
static inline int fk__acct_worker_init(fk_worker *w) { return (void)w, 0; }
static inline int fk__acct_pool_init(fk_pool *p) { return (void)p, 0; }
static inline void fk__acct_worker_free(fk_worker *w) { (void)w; }
static inline void fk__acct_reset(fk_pool *p) { (void)p; }
#endif
#define FK__ACCT(w, c) FK__ACCT_NAMED(w, c, NULL)

/* Whether the pool's workers are to leave their loops. */
static inline int fk__stopping(const fk_pool *p) {
    return atomic_load_explicit(&p->stop, memory_order_acquire);
}

/* sched.c */
void *fk__worker_main(void *arg);
fk_worker *fk__current_worker(void);
int fk__arrive(fk_worker *w, fk_frame *f, uint32_t add);
#if FK_STEAL == FK_STEAL_CONT && !FK__NATIVE_FRAMES
/* Task code whose C frame must die: back to the worker's loop (w->unwind_to). */
_Noreturn void fk__unwind(fk_worker *w);
#endif
void fk__wake(fk_worker *w);
void fk__submit(fk_pool *pool, fk__sub *sub, int worker); /* worker < 0: any */
void fk__wake_all(fk_pool *pool);
#if FK_STACK == FK_STACK_FIBER
/* The worker loop's steps, which the fiber worker loop (sched_fiber.c) runs too: become
 * active (running tasks) or a thief (looking for work); run what is in the deque's leftovers
 * and the inbox (1 if anything ran); one steal round (1 if it ran what it stole); back off
 * or sleep after a round that found nothing (*fails: such rounds in a row). */
void fk__become_active(fk_worker *w);
void fk__become_thief(fk_worker *w);
int fk__local_work(fk_worker *w);
int fk__steal_round(fk_worker *w);
void fk__idle_step(fk_worker *w, unsigned *fails);
#endif

#if FK_STACK == FK_STACK_NATIVE
size_t fk__cstack_depth(void); /* bytes of the current worker's C stack in use */
#endif

/* counter.c */
void fk__counter_lock(fk_counter *c);
void fk__counter_unlock(fk_counter *c);

/* sched_fiber.c */
#if FK_STACK == FK_STACK_FIBER
/* The worker of the thread running this code, read afresh.  A fiber may park on one
 * worker's thread and continue on another's, and within one function the compiler takes a
 * thread-local's address (and so FK__H->w) to be constant: code that may have switched
 * fibers since it last looked must ask again (FK__REFRESH).  Not inlined: in a function of
 * its own, the thread-local's address is computed afresh.  (Static: each file that uses it
 * has its copy, a call the compiler sees through for registers; unused, it is not emitted.) */
static FK__NOINLINE __attribute__((unused)) fk_worker *fk__worker_now(void) {
    fk_worker *w = FK__H->w;
    __asm__ volatile("" ::: "memory");
    return w;
}
#define FK__REFRESH(w) ((w) = fk__worker_now())
/* The worker thread's life on fibers: into the worker loop on a fiber, and back to exit;
 * then (after every worker left its loop) its idle fibers unmapped. */
void fk__fiber_worker_run(fk_worker *w);
void fk__fiber_worker_free(fk_worker *w);
/* f may continue (its join's last child finished, its counter reached zero): on this
 * worker or, by fk_pool_opts.fiber_resume, at its home worker. */
void fk__fiber_make_ready(fk_worker *w, fk__fiber *f);
/* A fiber that came through w's inbox (FK__SUB_FIBER). */
void fk__fiber_received(fk_worker *w, fk__fstate *st);
/* fk_counter_wait in a task; fk_counter_done's wake of a fiber parked on a counter. */
void fk__fiber_wait_counter(fk_counter *c);
void fk__fiber_wake(void *fiber);
#else
#define FK__REFRESH(w) ((void)0)
#endif

/* cstack.c */
void fk__cstack_guard_install(void);
void fk__cstack_guard_enter(fk_worker *w);
void fk__cstack_guard_leave(fk_worker *w);

/* deque.c */
int fk__deque_init(fk_worker *w);
void fk__deque_destroy(fk_worker *w);
enum { FK__STEAL_OK, FK__STEAL_EMPTY, FK__STEAL_LOST };
int fk__steal(fk_worker *victim, fk__slot *out);
/* Forced publication (a thief makes the oldest private slots of an owner that does not
 * answer requests public; see deque.c).  fk__force_available: whether this kernel offers
 * the membarrier() it needs.  fk__deque_has_private: a hint, read without locking. */
int fk__force_available(void);
int fk__deque_has_private(const fk_worker *victim);
/* FK_PROMOTE_BEAT, from the heartbeat thread: if w holds private records, mark it as a thief's
 * request does; its next push or pop promotes its oldest private record. */
void fk__deque_beat(fk_worker *w);
/* A lazy pool went from idle to active (sched.c: become_active, after its seq_cst increment
 * of active): wakes the heartbeat thread if it parked. */
void fk__beat_wake(fk_pool *p);
/* 1 if it published; *tried (if not NULL) says whether it issued a membarrier(). */
int fk__force_publish(fk_worker *victim, int *tried);
void fk__deque_publish_all(fk_worker *w);
#if !FK_LIVE /* (FK_LIVE: the owner's cursor is in its tasks' registers, no pop settles, and
              * native tasks leave no record over) */
int fk__pop_leftover(fk_worker *w, fk__slot *out);
int fk__pop_settle(fk_worker *w);
uint64_t fk__deque_bottom(const fk_worker *w); /* the owner's bottom index */
#endif

/* stack.c */
/* The common cases of the frame stack's slow paths (fk__alloc_slow, fk__free_slow), which
 * the register-saving stubs (tramp.c) try first: compiled to use the general registers
 * only, so that the stub need not save the vector state around them.  NULL / 0: not done,
 * the full slow path must run. */
#if FK__STUBS
#define FK__GPR_ONLY __attribute__((target("general-regs-only")))
#else
#define FK__GPR_ONLY
#endif
FK__GPR_ONLY void *fk__alloc_slow_quick(size_t n);
FK__GPR_ONLY int fk__free_slow_quick(void *p);
int fk__stack_init(fk_worker *w);
void fk__stack_destroy(fk_worker *w);
int fk__stack_empty(const fk_worker *w);
/* Whether p lies in the used part of w's current stack (for debug checks). */
int fk__stack_holds(const fk_worker *w, const void *p);
void *fk__stack_handle(fk_worker *w);
void fk__stack_replace(fk_worker *w);
void fk__stack_adopt(fk_worker *w, void *handle);
void fk__stack_account(fk_pool *pool, int64_t bytes);
/* For tests: sizes of the stacklets of w's current stack from the bottom (the one after
 * *current is the cached one); returns how many there are.  Linear: one region. */
int fk__stack_describe(fk_worker *w, size_t *sizes, int max, int *current);

static inline void fk__cpu_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* error.c */
FK__NORETURN FK__COLD void fk__fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* FK__ASSERT_CMP(a, op, b), op a comparison: in FK_DEBUG builds, unless (a) op (b) holds,
 * a fatal error (fk__fatal) naming file:line, the expression and both values, e.g.
 * "sched.c:345: check failed: thieves <= n (3 <= 2)".  a and b are integers or pointers,
 * each evaluated once.  In other builds it evaluates nothing and costs nothing (the
 * comparison is still type-checked, and its variables count as used). */
#if FK_DEBUG
#define FK__ASSERT_CMP(a, op, b)                                                                  \
    do {                                                                                          \
        __auto_type fk__ca = (a);                                                                 \
        __auto_type fk__cb = (b);                                                                 \
        if (FK__UNLIKELY(!(fk__ca op fk__cb)))                                                    \
            fk__assert_cmp_fail(__FILE__, __LINE__, #a, #op, #b, FK__IS_SIGNED(fk__ca),           \
                                (unsigned long long)fk__ca, FK__IS_SIGNED(fk__cb),                \
                                (unsigned long long)fk__cb);                                      \
    } while (0)
/* 1 for a value of a signed integer type (printed as long long), else 0 (unsigned long long) */
#define FK__IS_SIGNED(x)                                                                          \
    _Generic((x), char: CHAR_MIN < 0, signed char: 1, short: 1, int: 1, long: 1, long long: 1, default: 0)
FK__NORETURN FK__COLD void fk__assert_cmp_fail(const char *file, int line, const char *a, const char *op,
                                               const char *b, int a_signed, unsigned long long va,
                                               int b_signed, unsigned long long vb);
#else
#define FK__ASSERT_CMP(a, op, b) ((void)sizeof((a) op (b)))
#endif

#endif
