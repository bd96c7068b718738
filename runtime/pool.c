/* pool.c — creating and destroying pools, options, statistics. */

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "place.h"
#include "worker.h"

/* ---- options ------------------------------------------------------------------------- */

/* Parses "123", "64K", "256M", "1G" into bytes.  0 on success. */
static int parse_size(const char *s, size_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno)
        return -1;
    unsigned shift = 0;
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    default: break;
    }
    if ((*end == 'i' || *end == 'I') && shift)
        end++;
    if ((*end == 'B' || *end == 'b') && shift)
        end++;
    if (*end || v > (~0ull >> shift))
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

/* ---- the run-time axes' names --------------------------------------------------------------- */

typedef struct named {
    const char *name;
    int value;
} named;
#define NAMES(t) t, sizeof t / sizeof *t

static const named sched_names[] = {{"busy", FK_SCHED_BUSY}, {"lazy", FK_SCHED_LAZY}};
static const named placement_names[] = {
    {"compact", FK_PLACE_COMPACT}, {"spread", FK_PLACE_SPREAD}, {"none", FK_PLACE_NONE}};
static const named victims_names[] = {{"topo", FK_VICTIMS_TOPO}, {"uniform", FK_VICTIMS_UNIFORM}};
static const named resume_names[] = {{"any", FK_RESUME_ANY}, {"home", FK_RESUME_HOME}};
static const named promote_names[] = {{"thief", FK_PROMOTE_THIEF}, {"beat", FK_PROMOTE_BEAT}};
static const named share_names[] = {{"one", FK_BEAT_ONE}, {"half", FK_BEAT_HALF}};
static const named account_names[] = {
    {"off", FK_ACCOUNT_OFF}, {"times", FK_ACCOUNT_TIMES}, {"trace", FK_ACCOUNT_TRACE}};

/* The name of value v (the first name for a value not in the table). */
static const char *name_of(const named *t, size_t n, int v) {
    for (size_t i = 0; i < n; i++)
        if (t[i].value == v)
            return t[i].name;
    return t[0].name;
}

static int parse_in(const named *t, size_t n, const char *s, int *out) {
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].name, s)) {
            *out = t[i].value;
            return 0;
        }
    return FK_EINVAL;
}

/* An axis from environment variable var, if set and valid; else a warning naming the values. */
static int env_axis(const char *var, const named *t, size_t n, int cur) {
    const char *s = getenv(var);
    int v = cur;
    if (s && parse_in(t, n, s, &v)) {
        fprintf(stderr, "forkscope: ignoring %s=%s: not", var, s);
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, "%s %s", i == 0 ? "" : i + 1 == n ? " or" : ",", t[i].name);
        fputc('\n', stderr);
    }
    return v;
}

const char *fk_sched_name(fk_sched s) { return name_of(NAMES(sched_names), (int)s); }
const char *fk_placement_name(fk_placement p) { return name_of(NAMES(placement_names), (int)p); }
const char *fk_victims_name(fk_victims v) { return name_of(NAMES(victims_names), (int)v); }
const char *fk_fiber_resume_name(fk_fiber_resume r) { return name_of(NAMES(resume_names), (int)r); }
const char *fk_account_name(fk_account a) { return name_of(NAMES(account_names), (int)a); }
const char *fk_promote_name(fk_promote p) { return name_of(NAMES(promote_names), (int)p); }
int fk_promote_parse(const char *name, fk_promote *out) {
    int v;
    return parse_in(NAMES(promote_names), name, &v) ? FK_EINVAL : (*out = (fk_promote)v, 0);
}
const char *fk_beat_share_name(fk_beat_share s) { return name_of(NAMES(share_names), (int)s); }
int fk_beat_share_parse(const char *name, fk_beat_share *out) {
    int v;
    return parse_in(NAMES(share_names), name, &v) ? FK_EINVAL : (*out = (fk_beat_share)v, 0);
}

int fk_sched_parse(const char *name, fk_sched *out) {
    int v;
    return parse_in(NAMES(sched_names), name, &v) ? FK_EINVAL : (*out = (fk_sched)v, 0);
}
int fk_placement_parse(const char *name, fk_placement *out) {
    int v;
    return parse_in(NAMES(placement_names), name, &v) ? FK_EINVAL : (*out = (fk_placement)v, 0);
}
int fk_victims_parse(const char *name, fk_victims *out) {
    int v;
    return parse_in(NAMES(victims_names), name, &v) ? FK_EINVAL : (*out = (fk_victims)v, 0);
}
int fk_account_parse(const char *name, fk_account *out) {
    int v;
    return parse_in(NAMES(account_names), name, &v) ? FK_EINVAL : (*out = (fk_account)v, 0);
}

int fk_fiber_resume_parse(const char *name, fk_fiber_resume *out) {
    int v;
    return parse_in(NAMES(resume_names), name, &v) ? FK_EINVAL : (*out = (fk_fiber_resume)v, 0);
}

static void env_size(const char *name, size_t *out) {
    const char *s = getenv(name);
    if (s && parse_size(s, out))
        fprintf(stderr, "forkscope: ignoring %s=%s: not a size (bytes, or with K/M/G)\n", name, s);
}

/* An integer variable in [lo, hi]: 1 and *out if it is set and one, else 0 (said on stderr
 * if it is set but malformed). */
static int env_count(const char *name, unsigned long lo, unsigned long hi, const char *what, unsigned long *out) {
    const char *s = getenv(name);
    if (!s)
        return 0;
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*s && *s != '-' && !*end && v >= lo && v <= hi) {
        *out = v;
        return 1;
    }
    fprintf(stderr, "forkscope: ignoring %s=%s: not %s in %lu..%lu\n", name, s, what, lo, hi);
    return 0;
}

void fk_pool_opts_init(fk_pool_opts *o) {
    memset(o, 0, sizeof *o);
    o->workers = 0;
    o->sched = FK_SCHED_BUSY;
    o->thread_stack_bytes = FK_THREAD_STACK_BYTES;
    o->linear_stack_bytes = FK_LINEAR_STACK_BYTES;
    o->stacklet_bytes = FK_STACKLET_BYTES;
    o->leap_stack_bytes = FK_LEAP_RANDOM_STACK;
    o->fiber_stack_bytes = FK_FIBER_STACK_BYTES;
    o->fiber_resume = FK_RESUME_ANY;
    o->force_after_us = FK_FORCE_AFTER_NS / 1000;
    o->promote = FK_PROMOTE_THIEF;
    o->beat_us = FK_BEAT_NS / 1000;
    o->beat_share = FK_BEAT_ONE;
    o->seed = 0x666f726b73636f70ull; /* "forkscop" */
    o->account = FK_ACCOUNT_OFF;
    o->trace_events = FK_TRACE_EVENTS;
    unsigned long v;
    if (env_count("FORKSCOPE_WORKERS", 1, FK_MAX_WORKERS, "a worker count", &v))
        o->workers = (unsigned)v;
    o->sched = (fk_sched)env_axis("FORKSCOPE_SCHED", NAMES(sched_names), (int)o->sched);
    o->topology = getenv("FORKSCOPE_TOPOLOGY");
    o->placement = (fk_placement)env_axis("FORKSCOPE_PLACEMENT", NAMES(placement_names), (int)o->placement);
    o->victims = (fk_victims)env_axis("FORKSCOPE_VICTIMS", NAMES(victims_names), (int)o->victims);
    env_size("FORKSCOPE_THREAD_STACK", &o->thread_stack_bytes);
    env_size("FORKSCOPE_LINEAR_STACK", &o->linear_stack_bytes);
    env_size("FORKSCOPE_STACKLET", &o->stacklet_bytes);
    env_size("FORKSCOPE_LEAP_STACK", &o->leap_stack_bytes);
    env_size("FORKSCOPE_FIBER_STACK", &o->fiber_stack_bytes);
    o->fiber_resume =
        (fk_fiber_resume)env_axis("FORKSCOPE_FIBER_RESUME", NAMES(resume_names), (int)o->fiber_resume);
    o->account = (fk_account)env_axis("FORKSCOPE_ACCOUNT", NAMES(account_names), (int)o->account);
    if (env_count("FORKSCOPE_TRACE_EVENTS", 1, UINT32_MAX, "a count of events", &v))
        o->trace_events = (uint32_t)v;
    if (env_count("FORKSCOPE_FORCE_AFTER", 0, 10000000, "microseconds", &v))
        o->force_after_us = (uint32_t)v;
    o->promote = (fk_promote)env_axis("FORKSCOPE_PROMOTE", NAMES(promote_names), (int)o->promote);
    if (env_count("FORKSCOPE_BEAT_US", 1, 10000000, "microseconds", &v))
        o->beat_us = (uint32_t)v;
    o->beat_share = (fk_beat_share)env_axis("FORKSCOPE_BEAT_SHARE", NAMES(share_names), (int)o->beat_share);
}

const char *fk_build_variant(void) {
#if FK_SPAN
    return "span";
#elif FK_STEAL == FK_STEAL_CONT && FK_STACK == FK_STACK_SEG
    return "cont-seg";
#elif FK_STEAL == FK_STEAL_CONT
    return "cont-lin";
#elif FK_STACK == FK_STACK_SEG
    return "child-seg";
#elif FK_STACK == FK_STACK_LIN
    return "child-lin";
#elif FK_STACK == FK_STACK_NATIVE
    return "child-native";
#else
    return "child-fiber";
#endif
}

int fk_stats_enabled(void) { return FK_STATS; }

/* ---- create / destroy ---------------------------------------------------------------- */


/* The CPUs this process may run on (its affinity mask; the online count if that fails). */
static long usable_cpus(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

/* Lazy-scheduler groups: group_of[k] is worker k's group (a NUMA node), or NULL for one
 * group of all workers.  Every worker starts as a thief of its group. */
static int setup_groups(fk_pool *p, const unsigned *group_of) {
    unsigned ng = 1;
    for (unsigned k = 0; group_of && k < p->n; k++)
        ng = group_of[k] + 1 > ng ? group_of[k] + 1 : ng;
    p->groups = aligned_alloc(64, ng * sizeof *p->groups); /* fk__group is cache-line aligned */
    if (!p->groups)
        return FK_ENOMEM;
    memset(p->groups, 0, ng * sizeof *p->groups);
    p->ngroups = ng;
    for (unsigned k = 0; k < p->n; k++)
        p->groups[group_of ? group_of[k] : 0].n++;
    for (unsigned g = 0; g < ng; g++) {
        p->groups[g].members = calloc(p->groups[g].n ? p->groups[g].n : 1, sizeof(unsigned));
        if (!p->groups[g].members)
            return FK_ENOMEM;
        atomic_store(&p->groups[g].thieves, (int)p->groups[g].n);
        p->groups[g].n = 0;
    }
    for (unsigned k = 0; k < p->n; k++) {
        fk__group *gr = &p->groups[group_of ? group_of[k] : 0];
        p->workers[k]->group = (unsigned)(gr - p->groups);
        gr->members[gr->n++] = k;
    }
    return 0;
}

static void free_groups(fk_pool *p) {
    for (unsigned g = 0; p->groups && g < p->ngroups; g++)
        free(p->groups[g].members);
    free(p->groups);
    p->groups = NULL;
}

static void free_workers(fk_pool *p, unsigned n) {
    for (unsigned i = 0; i < n; i++) {
        fk__victims_free(&p->workers[i]->victims); /* deque and stack: freed by the worker */
        fk__acct_worker_free(p->workers[i]);
        if (p->workers[i]->cstack_map)
            munmap(p->workers[i]->cstack_map, p->workers[i]->cstack_map_bytes);
        free(p->workers[i]);
    }
    free(p->workers);
}

/* Worker w's C stack: `bytes` (rounded up to pages) whose top lies at FK__PLACE_CSTACK_TOP
 * modulo FK_PLACE_ALIGN (place.h: the thread's TLS, fk__tls among it, sits just below the
 * top, so its address is then the same in every launch), with FK_CSTACK_GUARD_BYTES of
 * inaccessible address space below it: a task frame bigger than a page still lands in the
 * guard, where fk__cstack_overflow recognises the fault.  Set as attr's stack; the mapping
 * is w's until free_workers. */
static int map_cstack(fk_worker *w, size_t bytes, pthread_attr_t *attr) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    bytes = (bytes + page - 1) / page * page; /* (fk_pool_create bounds bytes at 2^40) */
    size_t total = bytes + FK_CSTACK_GUARD_BYTES;
    char *m = fk__place_map(total, total, FK__PLACE_CSTACK_TOP);
    if (!m)
        return FK_ENOMEM;
    w->cstack_map = m;
    w->cstack_map_bytes = total;
    if (mprotect(m, FK_CSTACK_GUARD_BYTES, PROT_NONE))
        return FK_ENOMEM;
    if (pthread_attr_setstack(attr, m + FK_CSTACK_GUARD_BYTES, bytes))
        return FK_EINVAL;
    return 0;
}

/* The heartbeat (FK_PROMOTE_BEAT): every beat_us, each worker that is working (running a task,
 * not searching or asleep) and holds private records is marked, as a thief's request marks
 * it, and promotes its oldest one at its next fork or join (deque.c).  A worker's work time
 * is sampled at the beats: one working at a beat counts as having worked through the period
 * before it.  A beat that comes late (this thread preempted) is not made up for.  At P = 1 it
 * beats too: the one-worker time of a heartbeat pool pays for its promotions, as the papers'
 * work bound counts them.
 * Parking: while a lazy pool is idle (no worker active: every one asleep or about to be) the
 * thread waits on beat_cond without a timeout, beat_parked set; the worker that makes the
 * pool active again wakes it (fk__beat_wake).  Both sides are seq_cst (a Dekker pair: this
 * thread stores beat_parked then loads active; the worker increments active then exchanges
 * beat_parked), so at least one sees the other; and this thread holds beat_lock from its store
 * to the wait, so the worker's signal, taken under the lock, finds it waiting (models/beat.pml
 * checks it, and refutes the waker without the lock).  A busy pool's
 * idle workers spin anyway, and it beats on. */
static uint64_t mono_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void fk__beat_wake(fk_pool *p) {
    if (!atomic_load_explicit(&p->beat_parked, memory_order_seq_cst)) /* (only the heartbeat sets it) */
        return;
    if (atomic_exchange_explicit(&p->beat_parked, 0, memory_order_seq_cst)) {
        pthread_mutex_lock(&p->beat_lock);
        pthread_cond_signal(&p->beat_cond);
        pthread_mutex_unlock(&p->beat_lock);
    }
}

/* Under beat_lock: parks while the lazy pool is idle (1 if it did).  Returns with the lock held. */
static int beat_park(fk_pool *p) {
    if (p->sched != FK_SCHED_LAZY)
        return 0;
    atomic_store_explicit(&p->beat_parked, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&p->active, memory_order_seq_cst) > 0) {
        atomic_store_explicit(&p->beat_parked, 0, memory_order_relaxed);
        return 0;
    }
    atomic_fetch_add_explicit(&p->beat_parks, 1, memory_order_relaxed);
    while (!p->beat_stop && atomic_load_explicit(&p->beat_parked, memory_order_seq_cst))
        pthread_cond_wait(&p->beat_cond, &p->beat_lock);
    return 1;
}

static void *beat_main(void *arg) {
    fk_pool *p = arg;
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL); /* (the kernel's default slack, 50 us, would stretch a beat) */
    uint64_t period = (uint64_t)p->opts.beat_us * 1000, next = mono_ns();
    pthread_mutex_lock(&p->beat_lock);
    while (!p->beat_stop) {
        next += period;
        struct timespec at = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
        int rc = 0;
        while (!p->beat_stop && (rc = pthread_cond_timedwait(&p->beat_cond, &p->beat_lock, &at)) == 0)
            ; /* (woken: stop, or spurious) */
        if (rc && rc != ETIMEDOUT) /* (cannot wait: fail loudly rather than spin) */
            fk__fatal("the heartbeat thread cannot wait for its next beat (pthread_cond_timedwait: %d)", rc);
        if (p->beat_stop)
            break;
        pthread_mutex_unlock(&p->beat_lock);
        uint64_t now = mono_ns();
        if (now > next + period)
            next = now; /* more than a beat late: start again from now */
        for (unsigned i = 0; i < p->n; i++)
            if (atomic_load_explicit(&p->workers[i]->state, memory_order_relaxed) == FK__W_ACTIVE)
                fk__deque_beat(p->workers[i]);
        pthread_mutex_lock(&p->beat_lock);
        if (beat_park(p))
            next = mono_ns(); /* (parked: the next beat a period after waking) */
    }
    pthread_mutex_unlock(&p->beat_lock);
    return NULL;
}

/* Starts the heartbeat thread (its clock: CLOCK_MONOTONIC).  0, or FK_EAGAIN. */
static int beat_start(fk_pool *p) {
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca))
        return FK_EAGAIN;
    int bad = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) || pthread_cond_init(&p->beat_cond, &ca);
    pthread_condattr_destroy(&ca);
    if (bad)
        return FK_EAGAIN;
    pthread_mutex_init(&p->beat_lock, NULL);
    /* Off the workers' PUs where one is free, from its start: unbound, the OS woke it on a
     * pinned worker's own PU now and then, and preempted that worker (docs/heartbeat.md,
     * "Where the heartbeat thread runs").  Where every PU has a worker it stays unbound. */
    cpu_set_t spare;
    pthread_attr_t attr;
    p->beat_pus = fk__topo_spare_cpus(p->topo, &spare);
    int bad_attr = pthread_attr_init(&attr);
    if (!bad_attr && p->beat_pus > 0 && pthread_attr_setaffinity_np(&attr, sizeof spare, &spare))
        p->beat_pus = -1;
    bad = bad_attr || pthread_create(&p->beat_thread, &attr, beat_main, p);
    if (!bad_attr)
        pthread_attr_destroy(&attr);
    if (bad) { /* (the binding refused, as a worker's pin may be: run it unbound) */
        if (p->beat_pus > 0)
            p->beat_pus = -1;
        bad = pthread_create(&p->beat_thread, NULL, beat_main, p);
    }
    if (bad) {
        pthread_cond_destroy(&p->beat_cond);
        pthread_mutex_destroy(&p->beat_lock);
        return FK_EAGAIN;
    }
    (void)pthread_setname_np(p->beat_thread, "fk-beat");
    p->beating = 1;
    p->beat_made = 1;
    return 0;
}

static void beat_stop(fk_pool *p) {
    if (!p->beating)
        return;
    pthread_mutex_lock(&p->beat_lock);
    p->beat_stop = 1;
    atomic_store_explicit(&p->beat_parked, 0, memory_order_relaxed);
    pthread_cond_signal(&p->beat_cond);
    pthread_mutex_unlock(&p->beat_lock);
    pthread_join(p->beat_thread, NULL);
    p->beating = 0;
    /* beat_lock and beat_cond stay until fk_pool_destroy (beat_free), after the workers are
     * joined: a worker that turns active during the shutdown (a spawned task no root waits
     * for) may still take the lock in fk__beat_wake. */
}

static void beat_free(fk_pool *p) {
    if (!p->beat_made)
        return;
    pthread_cond_destroy(&p->beat_cond);
    pthread_mutex_destroy(&p->beat_lock);
    p->beat_made = 0;
}

int fk_pool_create(fk_pool **out, const fk_pool_opts *o) {
    fk_pool_opts opts;
    if (o)
        opts = *o;
    else
        fk_pool_opts_init(&opts);
    if (opts.workers == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        opts.workers = cpus < 1 ? 1 : cpus > FK_MAX_WORKERS ? FK_MAX_WORKERS : (unsigned)cpus;
    }
    if (opts.workers > FK_MAX_WORKERS || (opts.sched != FK_SCHED_BUSY && opts.sched != FK_SCHED_LAZY) ||
        (unsigned)opts.placement > FK_PLACE_NONE || (unsigned)opts.victims > FK_VICTIMS_UNIFORM ||
        opts.thread_stack_bytes < (64u << 10) || opts.linear_stack_bytes < (64u << 10) ||
        opts.thread_stack_bytes > ((size_t)1 << 40) || opts.linear_stack_bytes > ((size_t)1 << 40) ||
        opts.stacklet_bytes > ((size_t)1 << 40) || opts.fiber_stack_bytes < (64u << 10) ||
        opts.fiber_stack_bytes > ((size_t)1 << 40) || (unsigned)opts.fiber_resume > FK_RESUME_HOME ||
        (unsigned)opts.account > FK_ACCOUNT_TRACE || (unsigned)opts.promote > FK_PROMOTE_BEAT ||
        (unsigned)opts.beat_share > FK_BEAT_HALF ||
        (opts.promote == FK_PROMOTE_BEAT && (opts.beat_us < 1 || opts.beat_us > 10000000)))
        return FK_EINVAL;
#if FK_STACK == FK_STACK_FIBER
    if (opts.promote == FK_PROMOTE_BEAT) { /* (a parked fiber's record is published when a thief asks) */
        fprintf(stderr, "forkscope: heartbeat promotion is not built for fibers (child-fiber): their thieves must "
                        "ask for a ready fiber's record; use thief promotion, or a seg, lin or native variant\n");
        return FK_EINVAL;
    }
#endif
#if FK_SPAN
    if (opts.workers != 1) { /* the span's shadow stack follows one worker's serial order */
        fprintf(stderr, "forkscope: the span build measures work and span on 1 worker, not %u\n", opts.workers);
        return FK_EINVAL;
    }
#endif

    static _Atomic int warned;
    if (opts.workers > 1 && !fk__force_available() && !atomic_exchange(&warned, 1))
        fprintf(stderr, "forkscope: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) is unavailable (Linux < 4.14 or "
                        "blocked): thieves cannot force a publication, so work pushed before a long leaf waits "
                        "for the owner's next push (the scheduler is not greedy)\n");
    int err = FK_ENOMEM;
    fk_pool *p = aligned_alloc(64, (sizeof *p + 63) & ~(size_t)63);
    if (!p)
        goto pool_alloc_failed;
    memset(p, 0, sizeof *p);
    p->n = opts.workers;
    p->sched = opts.sched;
    p->opts = opts;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, NULL);

    char msg[512];
    err = fk__topo_create(&p->topo,
                          &(fk__topo_opts){.spec = opts.topology, .workers = p->n,
                                           .place = (fk__topo_place)opts.placement},
                          msg, sizeof msg);
    if (err) {
        fprintf(stderr, "forkscope: %s\n", msg);
        goto topology_failed;
    }
    p->crowded = (long)p->n > usable_cpus();
    err = FK_ENOMEM;
    p->workers = calloc(p->n, sizeof *p->workers);
    if (!p->workers)
        goto workers_array_failed;
    unsigned made = 0;
    for (; made < p->n; made++) {
        fk_worker *w = aligned_alloc(64, (sizeof *w + 63) & ~(size_t)63);
        if (!w)
            goto worker_failed;
        memset(w, 0, sizeof *w);
        w->pool = p;
        w->id = made;
        if (opts.victims == FK_VICTIMS_TOPO) {
            if (fk__victims_init_topo(&w->victims, made, p->topo, opts.seed)) {
                free(w);
                goto worker_failed;
            }
        } else {
            fk__victims_init(&w->victims, made, p->n, opts.seed);
        }
        if (fk__acct_worker_init(w)) {
            fk__victims_free(&w->victims);
            free(w);
            goto worker_failed;
        }
        fk__mpsc_init(&w->inbox);
        atomic_store(&w->state, FK__W_THIEF);
        p->workers[made] = w;
    }

    if (setup_groups(p, opts.placement == FK_PLACE_NONE ? NULL : fk__topo_nodes(p->topo)))
        goto threads_failed;
    if (fk__acct_pool_init(p))
        goto threads_failed;

    pthread_attr_t attr;
    if (pthread_attr_init(&attr)) {
        err = FK_EAGAIN;
        goto threads_failed;
    }
    fk__cstack_guard_install();
    unsigned running = 0;
    int stack_err = 0;
    for (; running < p->n; running++)
        if ((stack_err = map_cstack(p->workers[running], opts.thread_stack_bytes, &attr)) ||
            pthread_create(&p->workers[running]->thread, &attr, fk__worker_main, p->workers[running]))
            break;
    pthread_attr_destroy(&attr);

    /* Wait until every worker has its deque and stack (or one failed). */
    pthread_mutex_lock(&p->lock);
    if (running < p->n && !p->start_err) {
        p->start_err = stack_err ? stack_err : FK_EAGAIN;
        pthread_cond_broadcast(&p->cond);
    }
    while (p->started < running)
        pthread_cond_wait(&p->cond, &p->lock);
    err = p->start_err;
    pthread_mutex_unlock(&p->lock);
    if (!err && opts.promote == FK_PROMOTE_BEAT)
        err = beat_start(p);
    if (err) {
        atomic_store(&p->stop, 1);
        fk__wake_all(p);
        for (unsigned i = 0; i < running; i++)
            pthread_join(p->workers[i]->thread, NULL);
        goto threads_failed;
    }
    *out = p;
    return 0;

    /* Undo in reverse order; each label is the step that failed. */
threads_failed: /* the groups, the thread attributes or a thread: every worker is allocated */
    free_groups(p);
    free(p->acct_base);
    free(p->acct_cpu_base);
    made = p->n;
worker_failed: /* worker `made` (the ones before it are allocated) */
    free_workers(p, made);
workers_array_failed:
    fk__topo_destroy(p->topo);
topology_failed:
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->cond);
    free(p);
pool_alloc_failed:
    return err;
}

void fk_pool_shutdown(fk_pool *p) {
    if (FK__H->w && FK__H->w->pool == p)
        fk__fatal("fk_pool_shutdown called from a task of the same pool: it would wait for its own root");
    pthread_mutex_lock(&p->lock);
    p->closing = 1; /* from here FK_RUN refuses */
    while (p->inflight)
        pthread_cond_wait(&p->cond, &p->lock);
    if (p->shut) { /* another call stops the workers, or did: wait until it has */
        while (p->shut != 2)
            pthread_cond_wait(&p->cond, &p->lock);
        pthread_mutex_unlock(&p->lock);
        return;
    }
    p->shut = 1;
    pthread_mutex_unlock(&p->lock);
    /* Every accepted root returned: no inbox holds one, and nobody submits again. */
    beat_stop(p);
    atomic_store_explicit(&p->stop, 1, memory_order_release);
    fk__wake_all(p);
    for (unsigned i = 0; i < p->n; i++)
        pthread_join(p->workers[i]->thread, NULL);
    pthread_mutex_lock(&p->lock);
    p->shut = 2;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

void fk_pool_destroy(fk_pool *p) {
    if (!p)
        return;
    fk_pool_shutdown(p);
    beat_free(p);
    free_workers(p, p->n);
    free_groups(p);
    fk__topo_destroy(p->topo);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->cond);
    free(p->baseline);
    free(p->acct_base);
    free(p->acct_cpu_base);
    free(p);
}

unsigned fk_pool_workers(const fk_pool *p) { return p->n; }

void fk_pool_describe(const fk_pool *p, FILE *out) {
    fprintf(out, "pool: %u workers, variant %s, scheduler %s, victims %s, placement %s, %u lazy group%s\n", p->n,
            fk_build_variant(), fk_sched_name(p->sched), fk_victims_name(p->opts.victims),
            fk_placement_name(p->opts.placement), p->ngroups, p->ngroups == 1 ? "" : "s");
    fk__topo_print(p->topo, out);
    if (p->beating)
        fprintf(out, "heartbeat: every %u us, %s of the private records a promotion, %s\n", p->opts.beat_us,
                p->opts.beat_share == FK_BEAT_HALF ? "half" : "one",
                p->beat_pus > 0   ? "its thread bound to the PUs no worker is pinned to"
                : p->beat_pus < 0 ? "its thread unbound (it could not be bound)"
                                  : "its thread unbound (no PU free of workers, or workers not pinned: a beat may preempt a worker)");
}

int fk_topology_describe(const fk_pool_opts *o, FILE *out, char *err, size_t errlen) {
    fk__topo *t;
    int rc = fk__topo_create(&t,
                             &(fk__topo_opts){.spec = o->topology, .workers = o->workers,
                                              .place = (fk__topo_place)o->placement},
                             err, errlen);
    if (rc)
        return rc;
    fk__topo_print(t, out);
    fk__topo_destroy(t);
    return 0;
}

/* ---- statistics ---------------------------------------------------------------------- */

#define LOAD(c) atomic_load_explicit(&(c), memory_order_relaxed)

static void worker_stats(const fk_worker *w, fk_stats *s) {
    memset(s, 0, sizeof *s);
    s->forks = LOAD(w->hot->n_fork); /* 0 unless tasks were compiled with FK_STATS >= 2 */
    s->calls = LOAD(w->hot->n_call);
#if FK_STATS
    s->roots = LOAD(w->st.roots);
    s->steals = LOAD(w->st.steals);
    s->steal_empty = LOAD(w->st.steal_empty);
    s->steal_lost = LOAD(w->st.steal_lost);
    s->publishes = LOAD(w->st.publishes);
    s->forced = LOAD(w->st.forced);
    s->force_tries = LOAD(w->st.force_tries);
    s->reclaims = LOAD(w->st.reclaims);
    s->suspends = LOAD(w->st.suspends);
    s->sleeps = LOAD(w->st.sleeps);
    s->leaps = LOAD(w->st.leaps);
    s->fibers = LOAD(w->st.fibers);
    s->migrations = LOAD(w->st.migrations);
    s->stacklets_alloc = LOAD(w->st.stacklets_alloc);
    s->stacklets_freed = LOAD(w->st.stacklets_freed);
#else
    (void)w;
#endif
}

/* The counters of fk_stats, for summing and subtracting field by field. */
#define COUNTERS(X) X(forks) X(calls) X(roots) X(steals) X(steal_empty) X(steal_lost) X(publishes) X(forced) X(force_tries) \
    X(reclaims) X(suspends) X(sleeps) X(leaps) X(fibers) X(migrations) X(stacklets_alloc) X(stacklets_freed)
#define ADD(f) t->f += w->f;
#define SUB(f) s->f -= b->f;

static void raw_stats(const fk_pool *p, fk_stats *sum, fk_stats *per_worker) {
    memset(sum, 0, sizeof *sum);
    for (unsigned i = 0; i < p->n; i++) {
        fk_stats ws, *w = per_worker ? &per_worker[i] : &ws, *t = sum;
        worker_stats(p->workers[i], w);
        COUNTERS(ADD)
    }
}

void fk_pool_stats(const fk_pool *p, fk_stats *sum, fk_stats *per_worker) {
    fk_stats t;
    raw_stats(p, &t, per_worker);
    if (p->baseline) {
        fk_stats *s = &t, *b = &p->baseline[p->n];
        COUNTERS(SUB)
        for (unsigned i = 0; per_worker && i < p->n; i++) {
            s = &per_worker[i];
            b = &p->baseline[i];
            COUNTERS(SUB)
        }
    }
    int64_t peak = atomic_load_explicit(&p->stack_bytes_peak, memory_order_relaxed);
    t.stack_bytes_peak = peak > 0 ? (uint64_t)peak : 0;
    if (sum)
        *sum = t;
}

void fk_pool_stats_reset(fk_pool *p) {
    if (!p->baseline)
        p->baseline = calloc(p->n + 1, sizeof *p->baseline);
    if (p->baseline)
        raw_stats(p, &p->baseline[p->n], p->baseline);
    atomic_store(&p->stack_bytes_peak, atomic_load(&p->stack_bytes));
    fk__acct_reset(p);
}
