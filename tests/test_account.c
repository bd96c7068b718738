/* test_account.c — per-worker time accounting and traces (runtime/account.c), in every
 * variant and build: each test sets up a run whose time split is known and fails when the
 * accounting puts time in the wrong place, loses it, or the trace disagrees with it.
 *
 * Known splits: a root that is one long leaf (its worker works, every other worker only
 * searches or sleeps); n equal leaves (the work adds up to n leaves); the same idle gap on a
 * busy and a lazy pool (the lazy one sleeps through it).  The clock is checked against
 * CLOCK_MONOTONIC: the categories of each worker add up to the wall time between the reset
 * and the reading, measured by the test itself. */
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>

#include "forkscope.h"
#include "testlib.h"

/* ---- tasks -------------------------------------------------------------------------------- */

static void spin_us(int us) {
    double t0 = test_now();
    while (test_now() - t0 < us * 1e-6)
        ;
}

FK_LEAF_TASK(spin_leaf, int64_t, (int, us)) {
    spin_us(us);
    FK_RETURN(1);
} FK_END

typedef struct {
    fk_frame fk;
    int64_t *res;
    int i, n, us;
} leaves_frame;

/* n leaves of us microseconds each, forked in a loop (the last one called). */
FK_TASK(leaves, int64_t, leaves_frame *f, (int, n), (int, us)) {
    FK_BEGIN(f);
    f->n = n;
    f->us = us;
    f->res = FK_ALLOC(int64_t, n);
    for (f->i = 0; f->i < f->n - 1; f->i++)
        FK_FORK_AT(&f->res[f->i], spin_leaf, f->us);
    FK_CALL_AT(&f->res[f->n - 1], spin_leaf, f->us);
    FK_JOIN();
    int64_t s = 0;
    for (int i = 0; i < f->n; i++)
        s += f->res[i];
    FK_FREE(f->res);
    FK_RETURN(s);
} FK_END

typedef struct {
    fk_frame fk;
    int64_t a, b;
} fib_frame;

FK_TASK(tfib, int64_t, fib_frame *f, (int, n)) {
    if (n < 2)
        FK_RETURN(n);
    FK_BEGIN(f);
    FK_FORK(a, tfib, n - 1);
    FK_CALL(b, tfib, n - 2);
    FK_JOIN();
    FK_RETURN(f->a + f->b);
} FK_END

/* ---- helpers ------------------------------------------------------------------------------ */

static fk_pool *make_pool(unsigned workers, fk_sched sched, fk_account acct, uint32_t trace_events) {
    fk_pool_opts o;
    fk_pool_opts_init(&o);
    o.workers = workers;
    o.sched = sched;
    o.account = acct;
    if (trace_events)
        o.trace_events = trace_events;
    fk_pool *p = NULL;
    int err = fk_pool_create(&p, &o);
    ASSERT_MSG(err == 0, "fk_pool_create(%u workers, %s, account %s): %s", workers, fk_sched_name(sched),
               fk_account_name(acct), fk_strerror(err));
    return p;
}

static double ms(double ns) { return ns / 1e6; }

static void print_times(const char *what, const fk_times *t, unsigned n) {
    for (unsigned i = 0; i < n; i++) {
        printf("  %s worker %u: wall %.2f ms:", what, i, ms(t[i].wall_ns));
        for (int c = 0; c < FK_TIME_NCAT; c++)
            if (t[i].ns[c] > 0)
                printf(" %s %.3f", fk_time_cat_name((fk_time_cat)c), ms(t[i].ns[c]));
        printf("\n");
    }
}

/* Every worker's categories add up to the wall time the test measured itself, between the
 * reset and the reading (taken inside [before, after]). */
static void check_walls(const fk_times *t, unsigned n, double before_ns, double after_ns) {
    for (unsigned i = 0; i < n; i++) {
        double sum = 0;
        for (int c = 0; c < FK_TIME_NCAT; c++) {
            ASSERT_MSG(t[i].ns[c] >= 0, "worker %u: %s %.0f ns < 0", i, fk_time_cat_name((fk_time_cat)c), t[i].ns[c]);
            sum += t[i].ns[c];
        }
        ASSERT_MSG(sum == t[i].wall_ns, "worker %u: the categories add up to %.0f ns, wall_ns says %.0f", i, sum,
                   t[i].wall_ns);
        ASSERT_MSG(t[i].cpu_ns >= 0 && t[i].cpu_ns <= sum * 1.01 + 2e6, "worker %u: %.3f ms of CPU in %.3f ms", i,
                   ms(t[i].cpu_ns), ms(sum));
        /* (1% for the TSC's calibration against CLOCK_MONOTONIC, 0.2 ms for the reads) */
        ASSERT_MSG(sum >= before_ns * 0.99 - 2e5 && sum <= after_ns * 1.01 + 2e5,
                   "worker %u: its categories add up to %.3f ms; the test measured between %.3f and %.3f ms", i, ms(sum),
                   ms(before_ns), ms(after_ns));
    }
}

static double mono_ns(void) { return test_now() * 1e9; }

/* Runs one root of a single leaf of us microseconds on worker 0 of a pool of 2, and returns
 * both workers' times over the reset..read interval (checked against the test's own clock). */
static void one_long_leaf(fk_pool *p, const char *what, int us, fk_times t[2]) {
    usleep(20000); /* (the workers settle into their idle loop: the lazy one goes to sleep) */
    double t0 = mono_ns();
    fk_pool_stats_reset(p);
    double t1 = mono_ns();
    int64_t r = 0;
    ASSERT_EQ(FK_RUN_ON(p, 0, &r, spin_leaf, us), 0);
    ASSERT_EQ(r, 1);
    usleep(50000); /* (after the root: its worker must be back to searching or sleeping) */
    double t2 = mono_ns();
    fk_times sum;
    ASSERT_EQ(fk_pool_times(p, &sum, t), 0);
    double t3 = mono_ns();
    print_times(what, t, 2);
    check_walls(t, 2, t2 - t1, t3 - t0);
}

/* ---- tests -------------------------------------------------------------------------------- */

TEST(off_by_default) {
    fk_pool_opts o;
    fk_pool_opts_init(&o);
    ASSERT_EQ(o.account, FK_ACCOUNT_OFF);
    fk_pool *p = make_pool(2, FK_SCHED_BUSY, FK_ACCOUNT_OFF, 0);
    fk_times t;
    ASSERT_EQ(fk_pool_times(p, &t, NULL), FK_EINVAL);
    ASSERT_EQ(fk_pool_trace_write(p, stdout, NULL, NULL), FK_EINVAL);
    fk_pool_destroy(p);
    p = make_pool(1, FK_SCHED_BUSY, FK_ACCOUNT_TIMES, 0);
    ASSERT_EQ(fk_pool_trace_write(p, stdout, NULL, NULL), FK_EINVAL); /* times, no trace */
    fk_pool_destroy(p);
    ASSERT_EQ(fk_account_parse("trace", &o.account), 0);
    ASSERT_EQ(o.account, FK_ACCOUNT_TRACE);
    ASSERT_EQ(fk_account_parse("sometimes", &o.account), FK_EINVAL);
    o.account = (fk_account)7;
    fk_pool *bad = NULL;
    ASSERT_EQ(fk_pool_create(&bad, &o), FK_EINVAL);
}

TEST(clock_calibrated) {
    fk_clock_info ck;
    fk_clock_get(&ck);
    printf("  clock %s, %.6f ns per tick, calibrated over %.1f ms%s%s\n", ck.source, ck.ns_per_tick,
           ck.calibration_ms, *ck.fallback_reason ? ": " : "", ck.fallback_reason);
    ASSERT(ck.ns_per_tick > 0);
    if (!strcmp(ck.source, "tsc")) {
        ASSERT(ck.calibration_ms >= 19.0);
        ASSERT_MSG(ck.ns_per_tick > 0.01 && ck.ns_per_tick < 10, "a TSC of %.3f GHz", 1 / ck.ns_per_tick);
    } else {
        ASSERT(!strcmp(ck.source, "monotonic"));
        ASSERT(ck.ns_per_tick == 1.0);
        ASSERT(*ck.fallback_reason);
    }
}

/* One 200 ms leaf on 2 workers: its worker works through it; the other worker searches
 * (busy) or searches and sleeps (lazy) for its whole wall time and works for none of it. */
static void long_leaf_on(fk_sched sched, fk_times t[2]) {
    fk_pool *p = make_pool(2, sched, FK_ACCOUNT_TIMES, 0);
    one_long_leaf(p, fk_sched_name(sched), 200000, t);
    const fk_times *a = &t[0], *b = &t[1];
    ASSERT_TIMING(a->ns[FK_TIME_WORK] >= 199e6 && a->ns[FK_TIME_WORK] <= 203e6,
                  "%s: the worker that ran the 200 ms leaf worked %.3f ms of %.3f", fk_sched_name(sched),
                  ms(a->ns[FK_TIME_WORK]), ms(a->wall_ns));
    ASSERT_MSG(a->ns[FK_TIME_SEARCH] + a->ns[FK_TIME_SLEEP] >= 45e6, "%s: after the root its worker searched and slept "
               "%.3f ms of the 50 ms the test waited", fk_sched_name(sched), ms(a->ns[FK_TIME_SEARCH] + a->ns[FK_TIME_SLEEP]));
    double idle = b->ns[FK_TIME_SEARCH] + b->ns[FK_TIME_SLEEP];
    ASSERT_MSG(idle >= 0.99 * b->wall_ns, "%s: the idle worker searched and slept %.3f ms of its %.3f", fk_sched_name(sched),
               ms(idle), ms(b->wall_ns));
    ASSERT_MSG(b->ns[FK_TIME_WORK] == 0, "%s: the idle worker worked %.3f ms", fk_sched_name(sched), ms(b->ns[FK_TIME_WORK]));
    fk_pool_destroy(p);
}

TEST(long_leaf_busy) {
    fk_times t[2];
    long_leaf_on(FK_SCHED_BUSY, t);
    ASSERT_MSG(t[1].ns[FK_TIME_SLEEP] == 0, "a busy worker slept %.3f ms", ms(t[1].ns[FK_TIME_SLEEP]));
}

TEST(long_leaf_lazy) {
    fk_times t[2];
    long_leaf_on(FK_SCHED_LAZY, t);
}

/* Without the TSC (FORKSCOPE_CLOCK=monotonic, as on a CPU without an invariant one): the
 * same split, read from CLOCK_MONOTONIC.  (Each case runs in its own process, which chooses
 * its clock when its first pool starts.) */
TEST(monotonic_fallback) {
    setenv("FORKSCOPE_CLOCK", "monotonic", 1);
    fk_times t[2];
    long_leaf_on(FK_SCHED_BUSY, t);
    fk_clock_info ck;
    fk_clock_get(&ck);
    ASSERT_MSG(!strcmp(ck.source, "monotonic") && ck.ns_per_tick == 1.0, "clock %s", ck.source);
}

/* Lazy against busy on the same idle gap, 200 ms without a root: the lazy workers sleep
 * through most of it and search less than the busy ones, which never sleep. */
static void idle_gap(fk_sched sched, fk_times t[2]) {
    fk_pool *p = make_pool(2, sched, FK_ACCOUNT_TIMES, 0);
    int64_t r = 0;
    ASSERT_EQ(FK_RUN(p, &r, tfib, 10), 0);
    usleep(10000); /* (the workers get back to their idle loop after the root) */
    double t0 = mono_ns();
    fk_pool_stats_reset(p);
    double t1 = mono_ns();
    usleep(200000); /* (asleep: the test's thread takes no core from the workers) */
    double t2 = mono_ns();
    ASSERT_EQ(fk_pool_times(p, NULL, t), 0);
    double t3 = mono_ns();
    print_times(fk_sched_name(sched), t, 2);
    check_walls(t, 2, t2 - t1, t3 - t0);
    for (int i = 0; i < 2; i++)
        ASSERT_MSG(t[i].ns[FK_TIME_WORK] == 0, "%s: worker %d worked %.3f ms without a root", fk_sched_name(sched), i,
                   ms(t[i].ns[FK_TIME_WORK]));
    fk_pool_destroy(p);
}

TEST(idle_gap_lazy_sleeps) {
    fk_times busy[2], lazy[2];
    idle_gap(FK_SCHED_BUSY, busy);
    idle_gap(FK_SCHED_LAZY, lazy);
    for (int i = 0; i < 2; i++) {
        ASSERT_MSG(busy[i].ns[FK_TIME_SLEEP] == 0 && busy[i].ns[FK_TIME_SEARCH] >= 0.99 * busy[i].wall_ns,
                   "busy worker %d: searched %.3f ms, slept %.3f ms of %.3f", i, ms(busy[i].ns[FK_TIME_SEARCH]),
                   ms(busy[i].ns[FK_TIME_SLEEP]), ms(busy[i].wall_ns));
        ASSERT_MSG(lazy[i].ns[FK_TIME_SLEEP] >= 0.5 * lazy[i].wall_ns, "lazy worker %d slept %.3f ms of %.3f", i,
                   ms(lazy[i].ns[FK_TIME_SLEEP]), ms(lazy[i].wall_ns));
        /* (asleep, it really takes no CPU: the sleep is not a label on a spinning thread) */
        ASSERT_MSG(lazy[i].cpu_ns < 0.5 * lazy[i].wall_ns, "lazy worker %d: %.3f ms of CPU in %.3f ms", i,
                   ms(lazy[i].cpu_ns), ms(lazy[i].wall_ns));
        ASSERT_MSG(lazy[i].ns[FK_TIME_SEARCH] < busy[i].ns[FK_TIME_SEARCH], "worker %d: lazy searched %.3f ms, busy %.3f ms",
                   i, ms(lazy[i].ns[FK_TIME_SEARCH]), ms(busy[i].ns[FK_TIME_SEARCH]));
    }
}

/* A 200 ms leaf on 4 lazy workers: one idle worker stays up as the thief the running one
 * needs (the lazy scheduler's invariant), the other two sleep through most of it. */
TEST(long_leaf_lazy_others_sleep) {
    fk_pool *p = make_pool(4, FK_SCHED_LAZY, FK_ACCOUNT_TIMES, 0);
    usleep(20000);
    fk_pool_stats_reset(p);
    int64_t r = 0;
    ASSERT_EQ(FK_RUN_ON(p, 0, &r, spin_leaf, 200000), 0);
    fk_times t[4];
    ASSERT_EQ(fk_pool_times(p, NULL, t), 0);
    print_times("lazy", t, 4);
    int sleepers = 0;
    for (int i = 1; i < 4; i++) {
        ASSERT_MSG(t[i].ns[FK_TIME_WORK] == 0, "idle worker %d worked %.3f ms", i, ms(t[i].ns[FK_TIME_WORK]));
        sleepers += t[i].ns[FK_TIME_SLEEP] >= 0.5 * t[i].wall_ns;
    }
    ASSERT_MSG(sleepers >= 2, "%d of the 3 idle lazy workers slept through half of the leaf", sleepers);
    fk_pool_destroy(p);
}

/* n equal leaves: whoever runs them, the work adds up to n leaves (within 5%: the forks,
 * the root's own strands and a preemption inside a leaf are work too); on 2 workers the
 * other worker took some of them (a steal, and time in the steal category). */
static void equal_leaves_on(fk_sched sched) {
    enum { N = 64, US = 3000 };
    fk_pool *p = make_pool(2, sched, FK_ACCOUNT_TIMES, 0);
    for (int rep = 0; rep < 2; rep++) { /* (the first warms up) */
        double t0 = mono_ns();
        fk_pool_stats_reset(p);
        double t1 = mono_ns();
        int64_t r = 0;
        ASSERT_EQ(FK_RUN(p, &r, leaves, N, US), 0);
        ASSERT_EQ(r, N);
        double t2 = mono_ns();
        fk_times sum, t[2];
        ASSERT_EQ(fk_pool_times(p, &sum, t), 0);
        double t3 = mono_ns();
        fk_stats st;
        fk_pool_stats(p, &st, NULL);
        if (rep == 0)
            continue;
        print_times(fk_sched_name(sched), t, 2);
        check_walls(t, 2, t2 - t1, t3 - t0);
        double want = N * US * 1e3;
        ASSERT_TIMING(sum.ns[FK_TIME_WORK] >= want && sum.ns[FK_TIME_WORK] <= 1.05 * want,
                      "%s: %d leaves of %d us: the work adds up to %.3f ms, not %.3f ms (+5%%)", fk_sched_name(sched), N,
                      US, ms(sum.ns[FK_TIME_WORK]), ms(want));
        ASSERT_MSG(st.steals >= 1 && sum.ns[FK_TIME_STEAL] > 0, "%s: %llu steals, %.6f ms stealing", fk_sched_name(sched),
                   (unsigned long long)st.steals, ms(sum.ns[FK_TIME_STEAL]));
        ASSERT_MSG(t[0].ns[FK_TIME_WORK] > 0 && t[1].ns[FK_TIME_WORK] > 0, "%s: a worker did no work (%.3f, %.3f ms)",
                   fk_sched_name(sched), ms(t[0].ns[FK_TIME_WORK]), ms(t[1].ns[FK_TIME_WORK]));
    }
    fk_pool_destroy(p);
}

TEST(equal_leaves_busy) { equal_leaves_on(FK_SCHED_BUSY); }
TEST(equal_leaves_lazy) { equal_leaves_on(FK_SCHED_LAZY); }

/* More workers than cores, reader threads while they run fib: every reading is consistent
 * (no part of any worker ever goes down, not even by a tick, and a worker's wall never
 * exceeds the time since the reset as the reader measured it after the reading).  A reading
 * may not go down by construction (account.c: a move closes a period no earlier than any
 * reader counted it), whatever the clocks of the readers' and the workers' CPUs say; the
 * chaos build (runtime/chaos.h) gives each thread its own clock offset, so that a reader
 * ahead of a worker, rare on one machine, happens in every run. */
enum { RW_MAX = 8 };
typedef struct {
    fk_pool *p;
    unsigned workers;
    double t0;
    _Atomic int *stop;
    long readings;
    char bad[256];
} reader_arg;

static void *reader(void *arg) {
    reader_arg *ra = arg;
    double last[RW_MAX][FK_TIME_NCAT] = {{0}};
    while (!atomic_load(ra->stop) && !ra->bad[0]) {
        fk_times t[RW_MAX];
        if (fk_pool_times(ra->p, NULL, t)) {
            snprintf(ra->bad, sizeof ra->bad, "fk_pool_times failed");
            break;
        }
        double since = mono_ns() - ra->t0;
        for (unsigned i = 0; i < ra->workers && !ra->bad[0]; i++) {
            for (int c = 0; c < FK_TIME_NCAT; c++) {
                if (t[i].ns[c] < last[i][c])
                    snprintf(ra->bad, sizeof ra->bad, "worker %u: %s went from %.0f to %.0f ns (reading %ld)", i,
                             fk_time_cat_name((fk_time_cat)c), last[i][c], t[i].ns[c], ra->readings);
                last[i][c] = t[i].ns[c];
            }
            if (t[i].wall_ns > since * 1.01 + 2e5)
                snprintf(ra->bad, sizeof ra->bad, "worker %u: wall %.0f ns, %.0f ns since the reset", i, t[i].wall_ns,
                         since);
        }
        ra->readings++;
    }
    return NULL;
}

/* `workers` workers run fib(n) `reps` times while `readers` threads read their times. */
static void read_while(unsigned workers, fk_sched sched, unsigned readers, int n, int reps) {
    fk_pool *p = make_pool(workers, sched, FK_ACCOUNT_TIMES, 0);
    _Atomic int stop = 0;
    reader_arg ra[RW_MAX];
    pthread_t th[RW_MAX];
    double t0 = mono_ns();
    fk_pool_stats_reset(p);
    for (unsigned k = 0; k < readers; k++) {
        ra[k] = (reader_arg){.p = p, .workers = workers, .t0 = t0, .stop = &stop};
        ASSERT_EQ(pthread_create(&th[k], NULL, reader, &ra[k]), 0);
    }
    for (int rep = 0; rep < reps; rep++) {
        int64_t r = 0;
        ASSERT_EQ(FK_RUN(p, &r, tfib, n), 0);
        ASSERT_EQ(r, n == 24 ? 46368 : 121393);
    }
    atomic_store(&stop, 1);
    long readings = 0;
    for (unsigned k = 0; k < readers; k++) {
        pthread_join(th[k], NULL);
        readings += ra[k].readings;
    }
    printf("  %ld readings by %u threads while %u %s workers ran fib(%d) x %d\n", readings, readers, workers,
           fk_sched_name(sched), n, reps);
    for (unsigned k = 0; k < readers; k++)
        ASSERT_MSG(!ra[k].bad[0], "reader %u: %s", k, ra[k].bad);
    ASSERT(readings > 10);
    fk_pool_destroy(p);
}

TEST(read_while_running) { read_while(4, FK_SCHED_LAZY, 1, 24, 10); }

/* The same, harder: 3 readers and 6 busy workers on (here) 2 cores, so that a worker or a
 * reader is often descheduled in the middle of a move or a reading. */
TEST(read_while_running_many) { read_while(6, FK_SCHED_BUSY, 3, 26, 6); }

/* A join that must wait: a root forks a 100 ms leaf, calls a 5 ms one and joins, on 2
 * workers.  One worker runs the long leaf; the other works only the few ms of the short one
 * and spends the rest where its variant puts a wait: native frames in the join's wait,
 * frame stacks in the join's slow path and then searching (the suspended frame is resumed by
 * the long leaf's worker), fibers parked (switching, then searching). */
typedef struct {
    fk_frame fk;
    int64_t a, b;
} wait_frame;

FK_TASK(fork_long_call_short, int64_t, wait_frame *f) {
    FK_BEGIN(f);
    FK_FORK(a, spin_leaf, 100000);
    FK_CALL(b, spin_leaf, 5000);
    FK_JOIN();
    FK_RETURN(f->a + f->b);
} FK_END

TEST(join_waits_where_its_variant_waits) {
    fk_pool *p = make_pool(2, FK_SCHED_BUSY, FK_ACCOUNT_TIMES, 0);
    usleep(10000);
    fk_pool_stats_reset(p);
    int64_t r = 0;
    ASSERT_EQ(FK_RUN_ON(p, 0, &r, fork_long_call_short), 0);
    ASSERT_EQ(r, 2);
    fk_times t[2];
    ASSERT_EQ(fk_pool_times(p, NULL, t), 0);
    print_times("busy", t, 2);
    int L = t[1].ns[FK_TIME_WORK] > t[0].ns[FK_TIME_WORK], O = 1 - L;
    ASSERT_TIMING(t[L].ns[FK_TIME_WORK] >= 99e6 && t[O].ns[FK_TIME_WORK] <= 8e6,
                  "the long leaf's worker worked %.3f ms, the other %.3f ms (the short leaf: 5 ms)",
                  ms(t[L].ns[FK_TIME_WORK]), ms(t[O].ns[FK_TIME_WORK]));
    double waited = t[O].ns[FK_TIME_JOIN] + t[O].ns[FK_TIME_SEARCH] + t[O].ns[FK_TIME_WAIT] + t[O].ns[FK_TIME_FIBER];
    ASSERT_TIMING(waited >= 88e6, "the other worker waited %.3f ms (join, search, wait, fiber)", ms(waited));
#if FK_STACK == FK_STACK_NATIVE
    ASSERT_TIMING(t[O].ns[FK_TIME_WAIT] >= 88e6, "native frames: the join waited %.3f ms", ms(t[O].ns[FK_TIME_WAIT]));
#elif FK_STACK == FK_STACK_FIBER
    /* (a timing check: a worker starved of its CPU for the whole 100 ms steals nothing, and
     * then nothing parks; seen once in a CI run beside other builds on both cores) */
    ASSERT_TIMING(t[0].ns[FK_TIME_FIBER] + t[1].ns[FK_TIME_FIBER] > 0, "fibers: no time parking or switching");
    ASSERT_MSG(t[O].ns[FK_TIME_WAIT] == 0, "fibers: %.3f ms in a native join's wait", ms(t[O].ns[FK_TIME_WAIT]));
#else
    ASSERT_MSG(t[O].ns[FK_TIME_JOIN] > 0 && t[O].ns[FK_TIME_WAIT] == 0,
               "frame stacks: join %.6f ms, wait %.6f ms", ms(t[O].ns[FK_TIME_JOIN]), ms(t[O].ns[FK_TIME_WAIT]));
#endif
    fk_pool_destroy(p);
}

/* ---- traces ------------------------------------------------------------------------------- */

static json_t *write_and_load(fk_pool *p, fk_trace_summary *s) {
    char path[] = "/tmp/fk-trace-XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    FILE *f = fdopen(fd, "w");
    ASSERT(f);
    const char *meta[] = {"kernel", "t\"est", NULL};
    ASSERT_EQ(fk_pool_trace_write(p, f, meta, s), 0);
    fclose(f);
    json_error_t err;
    json_t *doc = json_load_file(path, 0, &err);
    ASSERT_MSG(doc, "the trace is not JSON: %s:%d: %s", path, err.line, err.text);
    unlink(path);
    return doc;
}

/* The Chrome format: traceEvents, each with ph, pid, tid; complete spans ("X") with
 * non-negative ts and dur, within the trace; per worker the spans are disjoint (one
 * category at a time); every flow start ("s") has its finish ("f") with the same id; instant
 * events ("i") are promotions of at least one slot.
 * Returns the number of steal flows. */
static size_t check_chrome(json_t *doc, unsigned workers) {
    json_t *evs = json_object_get(doc, "traceEvents");
    ASSERT_MSG(json_is_array(evs) && json_array_size(evs) > 0, "no traceEvents array");
    json_t *other = json_object_get(doc, "otherData");
    ASSERT(json_is_object(other));
    ASSERT_MSG(!strcmp(json_string_value(json_object_get(other, "kernel")), "t\"est"), "meta not kept");
    ASSERT(json_is_string(json_object_get(other, "clock")));
    ASSERT(!strcmp(json_string_value(json_object_get(other, "variant")), fk_build_variant()));
    double last_end[64];
    for (unsigned i = 0; i < 64; i++)
        last_end[i] = -1;
    size_t starts = 0, finishes = 0, spans = 0;
    uint64_t id_sum_s = 0, id_sum_f = 0;
    size_t k;
    json_t *e;
    json_array_foreach(evs, k, e) {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        ASSERT_MSG(ph && json_is_integer(json_object_get(e, "pid")), "event %zu: no ph or pid", k);
        if (!strcmp(ph, "M"))
            continue;
        json_int_t tid = json_integer_value(json_object_get(e, "tid"));
        ASSERT_MSG(tid >= 0 && tid < (json_int_t)workers, "event %zu: tid %lld", k, (long long)tid);
        double ts = json_number_value(json_object_get(e, "ts"));
        ASSERT_MSG(ts >= 0, "event %zu: ts %f", k, ts);
        if (!strcmp(ph, "X")) {
            double dur = json_number_value(json_object_get(e, "dur"));
            ASSERT_MSG(dur > 0, "event %zu: dur %f", k, dur);
            /* (ts and dur are printed to 1 ns) */
            ASSERT_MSG(ts >= last_end[tid] - 0.002, "worker %lld: a span at %.3f us begins before the last one ended (%.3f)",
                       (long long)tid, ts, last_end[tid]);
            last_end[tid] = ts + dur;
            ASSERT(json_is_string(json_object_get(e, "name")) && json_is_string(json_object_get(e, "cat")));
            spans++;
        } else if (!strcmp(ph, "s")) {
            starts++;
            id_sum_s += (uint64_t)json_integer_value(json_object_get(e, "id"));
        } else if (!strcmp(ph, "f")) {
            finishes++;
            id_sum_f += (uint64_t)json_integer_value(json_object_get(e, "id"));
        } else if (!strcmp(ph, "i")) { /* a promotion: an instant mark on its worker's track */
            const char *name = json_string_value(json_object_get(e, "name"));
            ASSERT_MSG(name && !strcmp(name, "promote") &&
                           json_integer_value(json_object_get(json_object_get(e, "args"), "slots")) >= 1,
                       "event %zu: an instant event that is not a promotion of at least one slot", k);
        } else {
            ASSERT_MSG(0, "event %zu: phase %s", k, ph);
        }
    }
    ASSERT_MSG(spans > 0, "no spans");
    ASSERT_MSG(starts == finishes && id_sum_s == id_sum_f, "%zu flow starts, %zu finishes", starts, finishes);
    /* each steal goes from one worker to another, and lands where a steal span of the thief
     * begins (the attempt that succeeded) */
    json_array_foreach(evs, k, e) {
        if (strcmp(json_string_value(json_object_get(e, "ph")), "f") || strcmp(json_string_value(json_object_get(e, "cat")), "steal"))
            continue;
        json_int_t id = json_integer_value(json_object_get(e, "id")), thief = json_integer_value(json_object_get(e, "tid"));
        double ts = json_number_value(json_object_get(e, "ts"));
        int from_other = 0, lands = 0;
        size_t j;
        json_t *x;
        json_array_foreach(evs, j, x) {
            const char *ph = json_string_value(json_object_get(x, "ph"));
            if (!strcmp(ph, "s") && json_integer_value(json_object_get(x, "id")) == id)
                from_other = json_integer_value(json_object_get(x, "tid")) != thief;
            if (!strcmp(ph, "X") && json_integer_value(json_object_get(x, "tid")) == thief &&
                !strcmp(json_string_value(json_object_get(x, "cat")), "steal") &&
                fabs(json_number_value(json_object_get(x, "ts")) - ts) < 0.002)
                lands = 1;
        }
        ASSERT_MSG(from_other, "steal %lld: from worker %lld to itself", (long long)id, (long long)thief);
        ASSERT_MSG(lands, "steal %lld at %.3f us: no steal span of worker %lld begins there", (long long)id, ts,
                   (long long)thief);
    }
    return starts;
}

static size_t promote_marks(json_t *doc) {
    size_t n = 0, k;
    json_t *e;
    json_array_foreach(json_object_get(doc, "traceEvents"), k, e)
        n += !strcmp(json_string_value(json_object_get(e, "ph")), "i");
    return n;
}

static size_t steal_flows(json_t *doc) {
    size_t n = 0, k;
    json_t *e;
    json_array_foreach(json_object_get(doc, "traceEvents"), k, e) {
        if (!strcmp(json_string_value(json_object_get(e, "ph")), "s") &&
            !strcmp(json_string_value(json_object_get(e, "cat")), "steal"))
            n++;
    }
    return n;
}

/* The work spans of a 2-worker trace: their length per worker (us) into work[2]; returns the
 * longest. */
static double work_spans(json_t *doc, double work[2]) {
    double longest = 0;
    work[0] = work[1] = 0;
    size_t k;
    json_t *e;
    json_array_foreach(json_object_get(doc, "traceEvents"), k, e) {
        if (strcmp(json_string_value(json_object_get(e, "ph")), "X") ||
            strcmp(json_string_value(json_object_get(e, "cat")), "work"))
            continue;
        double d = json_number_value(json_object_get(e, "dur"));
        work[json_integer_value(json_object_get(e, "tid")) & 1] += d;
        longest = d > longest ? d : longest;
    }
    return longest;
}

/* fib(27) on 2 and on 4 workers (more than cores): the trace is valid, and it shows exactly the
 * steals the statistics count. */
TEST(trace_steals_match_stats) {
    for (unsigned workers = 2; workers <= 4; workers += 2) {
        fk_pool *p = make_pool(workers, FK_SCHED_BUSY, FK_ACCOUNT_TRACE, 0);
        int64_t r = 0;
        for (int rep = 0; rep < 10; rep++) {
            ASSERT_EQ(FK_RUN(p, &r, tfib, 27), 0);
            ASSERT_EQ(r, 196418);
        }
        fk_trace_summary s;
        json_t *doc = write_and_load(p, &s);
        fk_stats st;
        fk_pool_stats(p, &st, NULL);
        check_chrome(doc, workers);
        size_t flows = steal_flows(doc);
        printf("  %u workers: %llu events, %llu steals (statistics %llu), %zu steal flows\n", workers,
               (unsigned long long)s.events, (unsigned long long)s.steals, (unsigned long long)st.steals, flows);
        ASSERT_EQ(s.dropped, 0);
        ASSERT_MSG(st.steals > 0, "no steals in fib(27) x 10 on %u workers", workers);
        ASSERT_MSG(s.steals == st.steals && flows == st.steals, "%zu steal flows, %llu logged, statistics %llu", flows,
                   (unsigned long long)s.steals, (unsigned long long)st.steals);
        /* each request answered is a "promote" mark on the owner's track */
        size_t marks = promote_marks(doc);
        ASSERT_MSG(st.publishes > 0 && marks == st.publishes && s.promotions == st.publishes,
                   "%zu promote marks, %llu counted by the trace, statistics %llu", marks,
                   (unsigned long long)s.promotions, (unsigned long long)st.publishes);
        json_decref(doc);
        fk_pool_destroy(p);
    }
}

#if FK_STACK != FK_STACK_FIBER
/* The "promote" spans of a one-worker trace, [from, to) in us, in order of time (*n of them;
 * free the result). */
static double *promote_spans(json_t *doc, size_t *n) {
    double *sp = NULL;
    size_t k, cap = 0;
    json_t *x;
    *n = 0;
    json_array_foreach(json_object_get(doc, "traceEvents"), k, x) {
        if (strcmp(json_string_value(json_object_get(x, "ph")), "X") ||
            strcmp(json_string_value(json_object_get(x, "cat")), "promote"))
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 256;
            sp = realloc(sp, cap * 2 * sizeof *sp);
            ASSERT(sp);
        }
        double ts = json_number_value(json_object_get(x, "ts"));
        sp[2 * *n] = ts;
        sp[2 * *n + 1] = ts + json_number_value(json_object_get(x, "dur"));
        ASSERT_MSG(*n == 0 || ts >= sp[2 * *n - 2], "promote spans out of order at %.4f us", ts);
        (*n)++;
    }
    return sp;
}

/* Whether time at (us) lies inside one of the n spans (the trace's us are printed to 4
 * decimals: a thousandth of a us of slack). */
static int in_spans(const double *sp, size_t n, double at) {
    size_t lo = 0, hi = n; /* the last span starting at or before at + slack */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (sp[2 * mid] <= at + 1e-3)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && at <= sp[2 * (lo - 1) + 1] + 1e-3;
}
#endif

#if FK_STACK != FK_STACK_FIBER
/* fib(30) runs on a one-worker pool tracing under a 50 us beat that publishes `share` (one
 * slot or half the private ones, whatever FORKSCOPE_BEAT_SHARE says), until the statistics
 * count at least `want` promotions or `reps` runs (a few ms each) are done; returns the pool
 * (*pp), its statistics (*st), and its trace as loaded, with its summary (*s). */
static json_t *beat_trace(fk_pool **pp, fk_beat_share share, uint64_t want, int reps, fk_stats *st, fk_trace_summary *s) {
    fk_pool_opts o;
    fk_pool_opts_init(&o);
    o.workers = 1;
    o.account = FK_ACCOUNT_TRACE;
    o.promote = FK_PROMOTE_BEAT;
    o.beat_share = share;
    o.beat_us = 50;
    ASSERT_EQ(fk_pool_create(pp, &o), 0);
    int64_t r = 0;
    memset(st, 0, sizeof *st);
    for (int rep = 0; rep < reps && st->publishes < want; rep++) {
        ASSERT_EQ(FK_RUN(*pp, &r, tfib, 30), 0);
        ASSERT_EQ(r, 832040);
        fk_pool_stats(*pp, st, NULL);
    }
    return write_and_load(*pp, s);
}
#else
/* Heartbeat promotion is not built for fibers: the pool is refused. */
static void beat_refused_on_fibers(void) {
    fk_pool_opts o;
    fk_pool_opts_init(&o);
    o.workers = 1;
    o.promote = FK_PROMOTE_BEAT;
    fk_pool *p = NULL;
    ASSERT_EQ(fk_pool_create(&p, &o), FK_EINVAL);
}
#endif

/* Under heartbeat promotion each promotion publishes one slot, the oldest private (the
 * count that the work bound rests on: T1 beat <= T1 off + (T/N) tau, with one slot a beat),
 * and every one is marked on the timeline, inside a span of the worker's "promote" time (the
 * time τ is measured from): on one worker (no thief, no forcing, no stolen frame publishing
 * for itself), fib(30) with a 50 us beat. */
TEST(beat_promotes_one_slot) {
#if FK_STACK == FK_STACK_FIBER
    beat_refused_on_fibers();
#else
    fk_pool *p = NULL;
    fk_stats st;
    fk_trace_summary s;
    json_t *doc = beat_trace(&p, FK_BEAT_ONE, 1, 20, &st, &s);
    check_chrome(doc, 1);
    size_t marks = 0, k, nspans;
    double *spans = promote_spans(doc, &nspans);
    json_t *e;
    json_array_foreach(json_object_get(doc, "traceEvents"), k, e) {
        if (strcmp(json_string_value(json_object_get(e, "ph")), "i"))
            continue;
        json_int_t slots = json_integer_value(json_object_get(json_object_get(e, "args"), "slots"));
        ASSERT_MSG(slots == 1, "a heartbeat's promotion published %lld slots, not the oldest one", (long long)slots);
        ASSERT_MSG(in_spans(spans, nspans, json_number_value(json_object_get(e, "ts"))),
                   "a promotion at %.4f us outside the worker's promote time (%zu promote spans)",
                   json_number_value(json_object_get(e, "ts")), nspans);
        marks++;
    }
    free(spans);
    printf("  fib(30) on 1 worker, a 50 us beat: %zu promotions, each of one slot, in %zu promote spans\n", marks,
           nspans);
    ASSERT_EQ(s.dropped, 0);
    ASSERT_MSG(marks > 0, "no promotion in 20 runs of fib(30) with a 50 us beat");
    ASSERT_MSG(marks == st.publishes && s.promotions == marks, "%zu marks, trace %llu, statistics %llu", marks,
               (unsigned long long)s.promotions, (unsigned long long)st.publishes);
    json_decref(doc);
    fk_pool_destroy(p);
#endif
}

/* FK_BEAT_HALF: a beat's promotion publishes the oldest half of the private slots, so on one
 * worker (fib(30), a 50 us beat: a deque some 30 deep) some promotion publishes several, and
 * none more than half of the deque's depth plus one. */
TEST(beat_half_promotes_half) {
#if FK_STACK == FK_STACK_FIBER
    beat_refused_on_fibers();
#else
    fk_pool *p = NULL;
    fk_stats st;
    fk_trace_summary s;
    json_t *doc = beat_trace(&p, FK_BEAT_HALF, 5, 40, &st, &s);
    json_int_t most = 0;
    size_t k, marks = 0;
    json_t *e;
    json_array_foreach(json_object_get(doc, "traceEvents"), k, e) {
        if (strcmp(json_string_value(json_object_get(e, "ph")), "i"))
            continue;
        json_int_t slots = json_integer_value(json_object_get(json_object_get(e, "args"), "slots"));
        ASSERT_MSG(slots >= 1 && slots <= 16, "a promotion of %lld slots from a deque at most 30 deep", (long long)slots);
        most = slots > most ? slots : most;
        marks++;
    }
    printf("  fib(30) on 1 worker, a 50 us beat, half a deque a beat: %zu promotions, the largest %lld slots\n", marks,
           (long long)most);
    ASSERT_MSG(marks > 0 && most >= 2, "%zu promotions, none of more than %lld slot", marks, (long long)most);
    json_decref(doc);
    fk_pool_destroy(p);
#endif
}

/* The promote category holds the promotions' time and nothing else: on one worker under thief
 * promotion nobody asks, and fib(25) x 20 puts not a tick there; under a 20 us heartbeat the
 * same runs promote, and their promote time is there, a plausible τ each (1 ns to 100 us:
 * the slow path under the deque's lock and two clock reads). */
TEST(promote_time_is_promotions) {
    for (int beat = 0; beat <= 1; beat++) {
        fk_pool_opts o;
        fk_pool_opts_init(&o);
        o.workers = 1;
        o.account = FK_ACCOUNT_TIMES;
        o.promote = beat ? FK_PROMOTE_BEAT : FK_PROMOTE_THIEF;
        o.beat_us = 20;
        fk_pool *p = NULL;
#if FK_STACK == FK_STACK_FIBER
        if (beat) {
            ASSERT_EQ(fk_pool_create(&p, &o), FK_EINVAL);
            continue;
        }
#endif
        ASSERT_EQ(fk_pool_create(&p, &o), 0);
        int64_t r = 0;
        fk_stats st = {0};
        for (int rep = 0; rep < 20 || (beat && st.publishes < 20 && rep < 2000); rep++) {
            ASSERT_EQ(FK_RUN(p, &r, tfib, 25), 0);
            ASSERT_EQ(r, 75025);
            fk_pool_stats(p, &st, NULL);
        }
        fk_times t;
        ASSERT_EQ(fk_pool_times(p, &t, NULL), 0);
        double promote = t.ns[FK_TIME_PROMOTE];
        printf("  %s: %llu promotions, promote %.0f ns of %.0f ns\n", beat ? "heartbeat 20 us" : "thief",
               (unsigned long long)st.publishes, promote, t.wall_ns);
        if (!beat) {
            ASSERT_MSG(st.publishes == 0 && promote == 0, "thief promotion on one worker: %llu promotions, %.0f ns promoting",
                       (unsigned long long)st.publishes, promote);
        } else {
            ASSERT_MSG(st.publishes >= 20, "%llu promotions under a 20 us beat", (unsigned long long)st.publishes);
            double tau = promote / (double)st.publishes;
            printf("  tau %.1f ns a promotion\n", tau);
            ASSERT_MSG(tau >= 1 && tau <= 1e5, "tau %.1f ns (promote %.0f ns over %llu promotions)", tau, promote,
                       (unsigned long long)st.publishes);
        }
        fk_pool_destroy(p);
    }
}

/* The trace covers the run: a long leaf's worker shows one work span of about its length,
 * the other one no work at all. */
TEST(trace_shows_long_leaf) {
    fk_pool *p = make_pool(2, FK_SCHED_BUSY, FK_ACCOUNT_TRACE, 0);
    usleep(10000);
    fk_pool_stats_reset(p);
    int64_t r = 0;
    ASSERT_EQ(FK_RUN_ON(p, 0, &r, spin_leaf, 100000), 0);
    usleep(50000); /* (the root's worker must show searching after it, not a longer work span) */
    fk_trace_summary s;
    json_t *doc = write_and_load(p, &s);
    check_chrome(doc, 2);
    double work[2], longest = work_spans(doc, work);
    printf("  work spans: worker 0 %.3f ms, worker 1 %.3f ms; longest %.3f ms\n", work[0] / 1e3, work[1] / 1e3,
           longest / 1e3);
    /* (>= the leaf less 0.1%: the trace's clock is the TSC, calibrated against the leaf's
     * CLOCK_MONOTONIC, and the two drift apart by some 0.05% over a chaos build's run) */
    ASSERT_MSG(longest >= 100000 * 0.999 && longest < 110000, "the longest work span is %.3f ms, the leaf 100 ms",
               longest / 1e3);
    ASSERT_MSG(work[1] == 0, "worker 1 worked %.3f ms in the trace", work[1] / 1e3);
    json_decref(doc);
    fk_pool_destroy(p);
}

/* A tiny log: the events past it are counted exactly.  One busy worker running the same
 * roots makes the same transitions whatever the timing: a big log counts them all. */
TEST(trace_dropped_counted) {
    uint64_t total[2], dropped[2];
    for (int pass = 0; pass < 2; pass++) {
        uint32_t cap = pass ? 8 : 100000;
        fk_pool *p = make_pool(1, FK_SCHED_BUSY, FK_ACCOUNT_TRACE, cap);
        for (int rep = 0; rep < 30; rep++) {
            int64_t r = 0;
            ASSERT_EQ(FK_RUN(p, &r, tfib, 12), 0);
            ASSERT_EQ(r, 144);
        }
        usleep(10000); /* (the worker's last move, back to search after the last root, is made) */
        fk_trace_summary s;
        json_t *doc = write_and_load(p, &s);
        check_chrome(doc, 1);
        ASSERT_EQ((long long)json_integer_value(json_object_get(json_object_get(doc, "otherData"), "dropped")),
                  (long long)s.dropped);
        json_decref(doc);
        total[pass] = s.events;
        dropped[pass] = s.dropped;
        fk_pool_destroy(p);
    }
    printf("  %llu events; a log of 8 dropped %llu\n", (unsigned long long)total[0], (unsigned long long)dropped[1]);
    ASSERT_EQ(dropped[0], 0);
    ASSERT_MSG(total[0] >= 60, "30 roots made only %llu events", (unsigned long long)total[0]);
    ASSERT_EQ(total[1], total[0]);
    ASSERT_EQ(dropped[1], total[0] - 8);
}

/* A reset starts the logs afresh: a warm-up that filled a small log leaves the timed part
 * whole, and the counts are the timed part's. */
TEST(trace_reset_starts_afresh) {
    fk_pool *p = make_pool(2, FK_SCHED_BUSY, FK_ACCOUNT_TRACE, 64);
    int64_t r = 0;
    double w0 = test_now();
    for (int rep = 0; rep < 50; rep++) /* (the warm-up: far more than 64 events a worker, and work) */
        ASSERT_EQ(FK_RUN(p, &r, tfib, 20), 0);
    double warm_ms = (test_now() - w0) * 1e3;
    fk_trace_summary s;
    json_t *doc = write_and_load(p, &s);
    ASSERT_MSG(s.dropped > 0, "the warm-up did not fill a log of 64 events (%llu events)", (unsigned long long)s.events);
    json_decref(doc);
    usleep(10000);
    fk_pool_stats_reset(p);
    ASSERT_EQ(FK_RUN_ON(p, 0, &r, spin_leaf, 50000), 0);
    usleep(10000);
    doc = write_and_load(p, &s);
    check_chrome(doc, 2);
    printf("  after the reset: %llu events, %llu dropped\n", (unsigned long long)s.events, (unsigned long long)s.dropped);
    ASSERT_MSG(s.dropped == 0 && s.events <= 16, "after the reset: %llu events, %llu dropped", (unsigned long long)s.events,
               (unsigned long long)s.dropped);
    /* worker 0: the 50 ms leaf, after the reset, not the warm-up's work; worker 1: no work */
    double work[2];
    work_spans(doc, work);
    /* (less 0.1%: the two clocks, as in trace_shows_long_leaf) */
    ASSERT_MSG(work[0] >= 50000 * 0.999 && work[1] == 0, "work spans after the reset: %.3f, %.3f ms", work[0] / 1e3,
               work[1] / 1e3);
    ASSERT_TIMING(work[0] < 50000 + 0.5 * warm_ms * 1e3, "work spans after the reset: %.3f ms (the leaf: 50 ms; the "
                  "warm-up took %.3f ms)", work[0] / 1e3, warm_ms);
    json_decref(doc);
    fk_pool_destroy(p);
}

int main(int argc, char **argv) {
    return test_main(argc, argv, (struct test_case[]){
        TEST_CASE(off_by_default, 10),
        TEST_CASE(clock_calibrated, 10),
        TEST_CASE(long_leaf_busy, 30),
        TEST_CASE(long_leaf_lazy, 30),
        TEST_CASE(monotonic_fallback, 30),
        TEST_CASE(idle_gap_lazy_sleeps, 30),
        TEST_CASE(long_leaf_lazy_others_sleep, 30),
        TEST_CASE(equal_leaves_busy, 60),
        TEST_CASE(equal_leaves_lazy, 60),
        TEST_CASE(read_while_running, 60),
        TEST_CASE(read_while_running_many, 60),
        TEST_CASE(join_waits_where_its_variant_waits, 30),
        TEST_CASE(trace_steals_match_stats, 60),
        TEST_CASE(beat_promotes_one_slot, 60),
        TEST_CASE(promote_time_is_promotions, 60),
        TEST_CASE(beat_half_promotes_half, 60),
        TEST_CASE(trace_shows_long_leaf, 30),
        TEST_CASE(trace_dropped_counted, 30),
        TEST_CASE(trace_reset_starts_afresh, 30),
        {0},
    });
}
