/* test_span.c — the span build (FK_SPAN=1, runtime/span.c) on programs whose work and span
 * are known: exactly, counted in strands (fib's DAG, n leaves forked by one task, a chain of
 * calls, the burden on each fork's continuation, roots one after another), and in time
 * within a tolerance (a chain of equal leaves: parallelism 1; n equal leaves forked by one
 * task and a balanced binary tree of equal leaves: parallelism about the number of leaves). */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "forkscope.h"
#include "tests/shared_tasks.h"
#include "tests/testlib.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Busy for `us` microseconds of wall time. */
static void spin_us(int us) {
    double end = now_s() + us * 1e-6;
    while (now_s() < end)
        ;
}

/* ---- tasks -------------------------------------------------------------------------------- */

/* fib as a user writes it (tests/shared_tasks.c): 4 strands a node (to the fork, to the call,
 * to the join, to the return), 1 a leaf. */
#define fib shared_fib

/* noise_leaf/noise_us: the leaf of that index (counted from the run's first) spins that much
 * longer: an interrupt in one strand */
static int leaf_index, noise_leaf = -1, noise_us;

FK_LEAF_TASK(leaf, int, (int, us)) {
    if (leaf_index++ == noise_leaf)
        us += noise_us;
    if (us)
        spin_us(us);
    FK_RETURN(1);
} FK_END

typedef struct {
    fk_frame fk;
    int i, n, us, sum;
    int res[64];
} many_frame;

/* n leaves forked from one task, then one join. */
FK_TASK(fan, int, many_frame *f, (int, n), (int, us)) {
    FK_BEGIN(f);
    f->n = n;
    f->us = us;
    for (f->i = 0; f->i < f->n; f->i++)
        FK_FORK(res[f->i], leaf, f->us);
    FK_JOIN();
    f->sum = 0;
    for (f->i = 0; f->i < f->n; f->i++)
        f->sum += f->res[f->i];
    FK_RETURN(f->sum);
} FK_END

/* n leaves called one after another: a chain. */
FK_TASK(chain, int, many_frame *f, (int, n), (int, us)) {
    FK_BEGIN(f);
    f->n = n;
    f->us = us;
    f->sum = 0;
    for (f->i = 0; f->i < f->n; f->i++) {
        FK_CALL(res[0], leaf, f->us);
        f->sum += f->res[0];
    }
    FK_RETURN(f->sum);
} FK_END

typedef struct {
    fk_frame fk;
    int a, b;
} tree_frame;

/* A balanced binary tree of depth d whose 2^d leaves each spin `us`. */
FK_TASK(tree, int, tree_frame *f, (int, d), (int, us)) {
    if (d == 0) {
        spin_us(us);
        FK_RETURN(1);
    }
    FK_BEGIN(f);
    FK_FORK(a, tree, d - 1, us);
    FK_CALL(b, tree, d - 1, us);
    FK_JOIN();
    FK_RETURN(f->a + f->b);
} FK_END

/* ---- helpers ------------------------------------------------------------------------------ */

/* Three repetitions of one root in one measurement (each strand's median time counts: a
 * preempted leaf in one of them does not). */
#define RUN3(p, ret, burden, task, ...)                                                        \
    do {                                                                                   \
        for (int rep_ = 0; rep_ < 3; rep_++) {                                             \
            if (rep_ == 0)                                                                 \
                fk_span_reset(FK_SPAN_TIME, burden);                                       \
            else                                                                           \
                fk_span_next_rep();                                                        \
            ASSERT_EQ(FK_RUN(p, ret, task, __VA_ARGS__), 0);                               \
        }                                                                                  \
    } while (0)

static fk_pool *one_worker(void) {
    fk_pool_opts o;
    fk_pool_opts_init(&o);
    o.workers = 1;
    fk_pool *p = NULL;
    int err = fk_pool_create(&p, &o);
    ASSERT_MSG(err == 0, "fk_pool_create(1 worker): %s", fk_strerror(err));
    return p;
}

/* fib's DAG counted by hand: strands (work), span and burdened span in strands. */
static void fib_dag(int n, double burden, double *work, double *span, double *bspan, uint64_t *forks) {
    if (n < 2) {
        *work = *span = *bspan = 1;
        *forks = 0;
        return;
    }
    double w1, s1, b1, w2, s2, b2;
    uint64_t f1, f2;
    fib_dag(n - 1, burden, &w1, &s1, &b1, &f1);
    fib_dag(n - 2, burden, &w2, &s2, &b2, &f2);
    *work = 4 + w1 + w2;
    /* to the fork (1), the forked child; then to the call (1), the called child, to the join
     * (1): the join takes the longer; then to the return (1) */
    *span = 1 + (1 + s1 > 3 + s2 ? 1 + s1 : 3 + s2);
    /* burdened (Cilkscale's rule): the forked child's path to the join pays a steal, and so
     * does the continuation after the fork */
    *bspan = 1 + (1 + burden + b1 > 3 + burden + b2 ? 1 + burden + b1 : 3 + burden + b2);
    *forks = 1 + f1 + f2;
}

/* ---- cases -------------------------------------------------------------------------------- */

TEST(span_build) {
    ASSERT_EQ(fk_span_enabled(), 1);
    ASSERT_MSG(!strcmp(fk_build_variant(), "span"), "fk_build_variant() = %s", fk_build_variant());
}

TEST(refuses_more_workers) {
    fk_pool_opts o;
    fk_pool_opts_init(&o);
    o.workers = 2;
    fk_pool *p = NULL;
    ASSERT_EQ(fk_pool_create(&p, &o), FK_EINVAL);
}

/* fib(n)'s DAG in strands, exactly, with and without a burden. */
TEST(fib_strands_exact) {
    fk_pool *p = one_worker();
    for (int n = 0; n <= 22; n++) {
        for (int b = 0; b <= 10; b += 10) {
            fk_span_reset(FK_SPAN_STRANDS, b);
            int64_t r = 0;
            ASSERT_EQ(FK_RUN(p, &r, fib, n), 0);
            fk_span_result s;
            ASSERT_EQ(fk_span_get(&s), 0);
            double w, sp, bs;
            uint64_t forks;
            fib_dag(n, b, &w, &sp, &bs, &forks);
            ASSERT_MSG(s.work == w && s.span == sp && s.burdened_span == bs && s.forks == forks &&
                           s.strands == (uint64_t)w && s.roots == 1,
                       "fib(%d), burden %d: work %.0f span %.0f burdened %.0f forks %llu strands %llu roots %llu; "
                       "the DAG has work %.0f span %.0f burdened %.0f forks %llu",
                       n, b, s.work, s.span, s.burdened_span, (unsigned long long)s.forks,
                       (unsigned long long)s.strands, (unsigned long long)s.roots, w, sp, bs,
                       (unsigned long long)forks);
            ASSERT_EQ(s.unit, FK_SPAN_STRANDS);
            ASSERT_MSG(s.strand_work == w && s.strand_span == sp, "fib(%d): the DAG in strands %.0f, %.0f", n,
                       s.strand_work, s.strand_span);
        }
    }
    fk_pool_destroy(p);
}

/* Burdened spans by hand, from Cilkscale's rule (a steal's burden B on the forked child's
 * path to the join and on the continuation): fib(2) is to the fork (1), the leaf fib(1) (1)
 * + B | B + to the call (1), fib(0) (1), to the join (1); then to the return (1): 1 + B + 1
 * against B + 3, so 5 + B.  fib(3) forks fib(2) (5 + B) after 1 strand: 1 + B + 5 + B =
 * 6 + 2B against the continuation 1 + B + 1 + fib(1) 1 + 1 = 4 + B; then 1: 7 + 2B. */
TEST(burden_by_hand) {
    fk_pool *p = one_worker();
    const int n[] = {2, 3};
    const double want[] = {5 + 10, 7 + 2 * 10};
    for (int i = 0; i < 2; i++) {
        fk_span_reset(FK_SPAN_STRANDS, 10);
        int64_t r = 0;
        ASSERT_EQ(FK_RUN(p, &r, fib, n[i]), 0);
        fk_span_result s;
        ASSERT_EQ(fk_span_get(&s), 0);
        ASSERT_MSG(s.burdened_span == want[i], "fib(%d), burden 10: burdened span %.0f, by hand %.0f", n[i],
                   s.burdened_span, want[i]);
    }
    fk_pool_destroy(p);
}

typedef struct {
    fk_frame fk;
    int i, r[8];
} twice_frame;

/* Two fork-join scopes in one task: a leaves, join, b leaves, join. */
FK_TASK(twice, int, twice_frame *f, (int, a), (int, b)) {
    FK_BEGIN(f);
    for (f->i = 0; f->i < a; f->i++)
        FK_FORK(r[f->i], leaf, 0);
    FK_JOIN();
    for (f->i = 0; f->i < b; f->i++)
        FK_FORK(r[f->i], leaf, 0);
    FK_JOIN();
    FK_RETURN(a + b);
} FK_END

/* Spans add up across joins: a scope of k forked leaves takes k + 1 strands to its join (the
 * last leaf, or the strand to the join); then the return: (a + 1) + (b + 1) + 1.  Work: a + b
 * leaves, a + b + 2 strands to the forks and joins, 1 to the return. */
TEST(two_joins_exact) {
    fk_pool *p = one_worker();
    for (int a = 1; a <= 4; a++)
        for (int b = 1; b <= 4; b++) {
            fk_span_reset(FK_SPAN_STRANDS, 0);
            int r = 0;
            ASSERT_EQ(FK_RUN(p, &r, twice, a, b), 0);
            fk_span_result s;
            ASSERT_EQ(fk_span_get(&s), 0);
            ASSERT_MSG(s.work == 2 * (a + b) + 3 && s.span == a + b + 3, "twice(%d, %d): work %.0f span %.0f (want %d, %d)",
                       a, b, s.work, s.span, 2 * (a + b) + 3, a + b + 3);
        }
    fk_pool_destroy(p);
}

/* n leaves forked by one task: n + 2 strands of its own (to each fork, to the join, to the
 * return) and n leaves; the longest path runs through the last fork's leaf or the strand to
 * the join (n + 1), then the return: n + 2.  Burdened: each fork charges b on the child's
 * path to the join and on the continuation. */
TEST(fan_strands_exact) {
    fk_pool *p = one_worker();
    for (int n = 1; n <= 64; n *= 2) {
        fk_span_reset(FK_SPAN_STRANDS, 3);
        int r = 0;
        ASSERT_EQ(FK_RUN(p, &r, fan, n, 0), 0);
        ASSERT_EQ(r, n);
        fk_span_result s;
        ASSERT_EQ(fk_span_get(&s), 0);
        ASSERT_MSG(s.work == 2 * n + 2 && s.span == n + 2 && s.forks == (uint64_t)n,
                   "fan of %d: work %.0f span %.0f forks %llu (want %d, %d, %d)", n, s.work, s.span,
                   (unsigned long long)s.forks, 2 * n + 2, n + 2, n);
        /* the last leaf's path: n strands, n - 1 continuations' burdens, itself and its own
         * burden to the join; the strand to the join: n strands, n burdens, itself: both
         * n + n b + 1, then the return (burden_by_hand tells the two rules apart) */
        double want_b = n + 3.0 * n + 2;
        ASSERT_MSG(s.burdened_span == want_b, "fan of %d: burdened span %.0f, want %.0f", n, s.burdened_span, want_b);
    }
    fk_pool_destroy(p);
}

/* Calls only: every strand is on the path. */
TEST(chain_strands_exact) {
    fk_pool *p = one_worker();
    fk_span_reset(FK_SPAN_STRANDS, 100);
    int r = 0;
    ASSERT_EQ(FK_RUN(p, &r, chain, 10, 0), 0);
    ASSERT_EQ(r, 10);
    fk_span_result s;
    ASSERT_EQ(fk_span_get(&s), 0);
    /* the task: 10 strands to the calls and 1 to the return; 10 leaves */
    ASSERT_MSG(s.work == 21 && s.span == 21 && s.burdened_span == 21 && s.forks == 0,
               "chain: work %.0f span %.0f burdened %.0f forks %llu", s.work, s.span, s.burdened_span,
               (unsigned long long)s.forks);
    fk_pool_destroy(p);
}

/* Roots one after another add up. */
TEST(roots_add_up) {
    fk_pool *p = one_worker();
    fk_span_reset(FK_SPAN_STRANDS, 0);
    int64_t r;
    ASSERT_EQ(FK_RUN(p, &r, fib, 10), 0);
    ASSERT_EQ(FK_RUN(p, &r, fib, 12), 0);
    fk_span_result s;
    ASSERT_EQ(fk_span_get(&s), 0);
    double w1, s1, b1, w2, s2, b2;
    uint64_t f1, f2;
    fib_dag(10, 0, &w1, &s1, &b1, &f1);
    fib_dag(12, 0, &w2, &s2, &b2, &f2);
    ASSERT_MSG(s.work == w1 + w2 && s.span == s1 + s2 && s.roots == 2, "two roots: work %.0f span %.0f roots %llu",
               s.work, s.span, (unsigned long long)s.roots);
    fk_pool_destroy(p);
}

/* In time: a chain of 20 leaves of 200 us has parallelism 1; 16 leaves of 1 ms forked by one
 * task, and a balanced tree of 16 such leaves, have parallelism about 16 (the rest of the
 * strands are ns); with a burden of 100 us a fork, the last of the 16 leaves ends 1.5 ms
 * later.  A wrong combination rule (span = work, or span = one leaf) fails. */
TEST(time_known_dags) {
    fk_pool *p = one_worker();
    fk_span_result s;
    int r = 0;
    double t0 = now_s();
    RUN3(p, &r, 5000, chain, 20, 200);
    double wall = (now_s() - t0) / 3;
    ASSERT_EQ(fk_span_get(&s), 0);
    ASSERT_EQ(s.unit, FK_SPAN_TIME);
    ASSERT_EQ(s.method, FK_SPAN_PER_STRAND_MEDIAN);
    ASSERT_MSG(s.min_work >= 20 * 200e3 && s.work >= 20 * 200e3 && s.work <= wall * 1e9,
               "chain: least work %.0f ns, work %.0f ns, wall %.0f ns", s.min_work, s.work, wall * 1e9);
    ASSERT_MSG(s.min_work / s.span > 0.999 && s.min_work / s.span < 1.001, "chain: parallelism %.4f, want 1",
               s.min_work / s.span);

    RUN3(p, &r, 100e3, fan, 16, 1000);
    ASSERT_EQ(fk_span_get(&s), 0);
    ASSERT_TIMING(s.min_work / s.span > 14.5 && s.min_work / s.span < 16.01,
                  "fan of 16 leaves of 1 ms: parallelism %.2f (work %.0f ns, span %.0f ns)", s.min_work / s.span, s.work,
                  s.span);
    /* the burdened span: the last leaf's path pays 16 burdens of 100 us (15 continuations and
     * its own to the join) */
    ASSERT_TIMING(s.burdened_span > s.span + 1.52e6 && s.burdened_span < s.span + 1.65e6,
                  "fan: burdened span %.0f ns against span %.0f ns (burdens of 100 us)", s.burdened_span, s.span);

    RUN3(p, &r, 5000, tree, 4, 1000);
    ASSERT_EQ(r, 16);
    ASSERT_EQ(fk_span_get(&s), 0);
    /* beside the times, the DAG in strands: 15 nodes of 4, 16 leaves of 1; a path of 4 a level
     * (to the fork, the child, to the call, the callee, to the join: the callee's side is
     * longer by 2) and the leaf */
    ASSERT_MSG(s.strand_work == 76 && s.strand_span == 17, "tree in strands: work %.0f span %.0f (want 76, 17)",
               s.strand_work, s.strand_span);
    ASSERT_TIMING(s.min_work / s.span > 14.5 && s.min_work / s.span < 16.01,
                  "tree of depth 4, leaves of 1 ms: parallelism %.2f (work %.0f ns, span %.0f ns)", s.min_work / s.span,
                  s.work, s.span);
    fk_pool_destroy(p);
}

/* Repetitions: each strand's median time.  Repetition 0 has 20 ms more in leaf 3 of a fan
 * of 8 leaves of 1 ms: alone it makes a span of 21 ms; over 3 repetitions the DAG is
 * evaluated with leaf 3's 1 ms. */
TEST(per_strand_median) {
    fk_pool *p = one_worker();
    int r = 0;
    fk_span_result s;
    for (int rep = 0; rep < 3; rep++) {
        if (rep == 0)
            fk_span_reset(FK_SPAN_TIME, 0);
        else
            fk_span_next_rep();
        leaf_index = 0;
        noise_leaf = rep == 0 ? 3 : -1;
        noise_us = 20000;
        ASSERT_EQ(FK_RUN(p, &r, fan, 8, 1000), 0);
        ASSERT_EQ(fk_span_get(&s), 0);
        if (rep == 0) {
            ASSERT_MSG(s.span > 20e6 && s.method == FK_SPAN_PER_STRAND_MEDIAN, "one repetition: span %.0f ns (%s)",
                       s.span, fk_span_method_name(s.method));
            /* one repetition: the replay of the log is the live measurement (the live one took
             * off the residue as low as it had fallen then, the replay its final value: a few ns
             * apart at most, on 17 strands) */
            ASSERT_MSG(fabs(s.min_work - s.work) <= 1e-9 * s.work && fabs(s.span - s.last_span) <= 17 * 3 * s.hook,
                       "replay of one repetition: work %.3f, live %.3f; span %.3f, live %.3f", s.min_work, s.work, s.span,
                       s.last_span);
        }
    }
    noise_leaf = -1;
    ASSERT_EQ(s.reps, 3);
    ASSERT_EQ(s.method, FK_SPAN_PER_STRAND_MEDIAN);
    ASSERT_EQ(s.resolved, 1);
    ASSERT_TIMING(s.span > 1e6 && s.span < 1.5e6 && s.work > 8e6 && s.work < 9e6,
                  "three repetitions: span %.0f ns, work %.0f ns (leaves of 1 ms; 8 of them)", s.span, s.work);
    fk_pool_destroy(p);
}

/* The median keeps what two repetitions of three agree on (leaf 3 20 ms longer in both), and
 * a fourth repetition is not logged (its 20 ms are not in the span). */
TEST(median_of_three) {
    fk_pool *p = one_worker();
    int r = 0;
    fk_span_result s;
    for (int case_ = 0; case_ < 2; case_++) {
        int reps = case_ ? 4 : 3;
        for (int rep = 0; rep < reps; rep++) {
            if (rep == 0)
                fk_span_reset(FK_SPAN_TIME, 0);
            else
                fk_span_next_rep();
            leaf_index = 0;
            noise_leaf = (case_ == 0 && rep < 2) || (case_ == 1 && rep == 3) ? 3 : -1;
            noise_us = 20000;
            ASSERT_EQ(FK_RUN(p, &r, fan, 8, 1000), 0);
        }
        noise_leaf = -1;
        ASSERT_EQ(fk_span_get(&s), 0);
        if (case_ == 0)
            ASSERT_MSG(s.span > 20e6, "noise in 2 of 3 repetitions: span %.0f ns, want it kept (> 20 ms)", s.span);
        else
            ASSERT_TIMING(s.span < 1.5e6, "noise in the 4th repetition only: span %.0f ns, want it ignored", s.span);
    }
    fk_pool_destroy(p);
}

/* A repetition whose DAG differs, and a log over its cap: the least of the repetitions' own
 * figures, said so. */
TEST(fallbacks_said) {
    fk_pool *p = one_worker();
    int r = 0;
    fk_span_result s;
    fk_span_reset(FK_SPAN_TIME, 0);
    ASSERT_EQ(FK_RUN(p, &r, fan, 8, 100), 0);
    fk_span_next_rep();
    ASSERT_EQ(FK_RUN(p, &r, fan, 4, 100), 0);
    ASSERT_EQ(fk_span_get(&s), 0);
    ASSERT_MSG(s.method == FK_SPAN_REP_MIN_DAG_VARIED, "fans of 8 then 4: %s", fk_span_method_name(s.method));
    ASSERT_MSG(s.min_work > 0.4e6 && s.min_work < 0.6e6, "least work %.0f ns: the fan of 4's", s.min_work);

    setenv("FORKSCOPE_SPAN_LOG_MIB", "1", 1); /* fib(22): 143,281 strands, ~1.6 MB of log */
    fk_span_reset(FK_SPAN_TIME, 0);
    int64_t f = 0;
    ASSERT_EQ(FK_RUN(p, &f, fib, 22), 0);
    fk_span_next_rep();
    ASSERT_EQ(FK_RUN(p, &f, fib, 22), 0);
    ASSERT_EQ(fk_span_get(&s), 0);
    double w22, s22, b22;
    uint64_t f22;
    fib_dag(22, 0, &w22, &s22, &b22, &f22);
    ASSERT_MSG(s.strand_work == w22 && s.strand_span == s22, "fib(22) with a 1 MiB log: the DAG in strands %.0f, %.0f",
               s.strand_work, s.strand_span);
    ASSERT_MSG(s.method == FK_SPAN_REP_MIN_LOG_FULL && s.work >= 0 && s.strands == 143281,
               "fib(22) with a 1 MiB log: %s, work %.0f, strands %llu", fk_span_method_name(s.method), s.work,
               (unsigned long long)s.strands);
    /* Resolved is a verdict on timing: fib's strands (about 1 ns each in a release build) are
     * finer than the clock resolves, so the fallback is said unresolved there; in a sanitizer
     * build each takes tens of ns and may be resolved.  Either way the verdict follows its
     * rule: work at least twice the larger of residue and clock step, a hook. */
    ASSERT_MSG(s.hooks > 0, "fib(22): no hooks counted");
    double per = s.hook > s.clock_resolution ? s.hook : s.clock_resolution;
    double least = s.work < s.min_work ? s.work : s.min_work;
    ASSERT_MSG(s.resolved == (least >= 2 * per * (double)s.hooks), "fib(22): resolved %d, but work %.0f ns against "
               "2 x %.2f ns x %llu hooks", s.resolved, least, per, (unsigned long long)s.hooks);
    if (!TEST_SANITIZED) /* (a timing check, retried once: two preempted repetitions could resolve) */
        ASSERT_TIMING(!s.resolved, "fib(22) in a release build: resolved, work %.0f ns against 2 x %.2f ns x %llu hooks",
                      least, per, (unsigned long long)s.hooks);
    unsetenv("FORKSCOPE_SPAN_LOG_MIB");
    fk_pool_destroy(p);
}

/* Finding 3 of issue 19: on a host whose calibrated residue exceeded what fib's strands take,
 * the residue taken off every strand took the work to 0.  With the residue inflated 8 times
 * (FORKSCOPE_SPAN_RESIDUE_SCALE), no strand is taken below 0: fib(18)'s work is above 0 and
 * at least its strands' raw time less the least a strand took a hook, for each hook; and
 * leaves of 1 ms keep their work, resolved. */
TEST(inflated_residue) {
    fk_pool *p = one_worker();
    fk_span_result s, s1;
    int64_t f = 0;
    int r = 0;
    setenv("FORKSCOPE_SPAN_RESIDUE_SCALE", "1", 1);
    RUN3(p, &f, 5000, fib, 18);
    ASSERT_EQ(fk_span_get(&s1), 0);
    setenv("FORKSCOPE_SPAN_RESIDUE_SCALE", "8", 1);
    RUN3(p, &f, 5000, fib, 18);
    ASSERT_EQ(fk_span_get(&s), 0);
    printf("  fib(18), residue x8: work %.0f ns (raw %.0f ns, %llu hooks), strand-median work %.0f ns, span %.0f ns; "
           "residue taken off %.2f ns, calibrated %.2f ns (x1: %.2f), bound %.2f ns, clock step %.2f ns; resolved %d\n",
           s.work, s.raw_work, (unsigned long long)s.hooks, s.min_work, s.span, s.hook, s.hook_calibrated,
           s1.hook_calibrated, s.hook_bound, s.clock_resolution, s.resolved);
    /* (two calibrations, a neighbour's load between them: x8 need only show as more than x2) */
    ASSERT_MSG(s.hook_calibrated > 2 * s1.hook_calibrated, "the residue calibrated %.2f ns, x1 %.2f ns", s.hook_calibrated,
               s1.hook_calibrated);
    /* the bound engaged: the inflated residue is more than fib's strands take a hook */
    ASSERT_MSG(s.hook == s.hook_bound && s.hook_bound < s.hook_calibrated, "residue taken off %.3f ns, bound %.3f, "
               "calibrated %.3f: the bound did not engage", s.hook, s.hook_bound, s.hook_calibrated);
    ASSERT_MSG(s.hook <= s.hook_bound && s.hook <= s.hook_calibrated, "the residue taken off %.3f ns: above its bound %.3f "
               "or the calibrated %.3f", s.hook, s.hook_bound, s.hook_calibrated);
    ASSERT_MSG(s.work > 0 && s.min_work > 0 && s.span > 0 && s.span <= s.min_work,
               "fib(18), residue x8: work %.1f, strand-median work %.1f, span %.1f ns", s.work, s.min_work, s.span);
    ASSERT_MSG(s.work >= s.raw_work - (double)s.hooks * s.hook_bound - 1e-6 * s.raw_work,
               "fib(18): work %.1f ns below the raw %.1f less %llu hooks of %.3f ns", s.work, s.raw_work,
               (unsigned long long)s.hooks, s.hook_bound);
    ASSERT_MSG(s.strand_work == 20901 && s.strand_span == 37, "fib(18) in strands: %.0f, %.0f", s.strand_work,
               s.strand_span);

    RUN3(p, &r, 5000, fan, 16, 1000);
    ASSERT_EQ(fk_span_get(&s), 0);
    ASSERT_MSG(s.resolved && s.min_work >= 16e6 && s.work >= 16e6, "fan of 16 leaves of 1 ms, residue x8: work %.0f, "
               "strand-median %.0f ns, resolved %d", s.work, s.min_work, s.resolved);
    /* (its parallelism is time_known_dags' timing check: preemption on a loaded machine
     * lengthens a leaf, and only lengthens it) */
    unsetenv("FORKSCOPE_SPAN_RESIDUE_SCALE");
    fk_pool_destroy(p);
}

int main(int argc, char **argv) {
    return test_main(argc, argv,
                     (struct test_case[]){TEST_CASE(span_build, 10), TEST_CASE(refuses_more_workers, 10),
                                          TEST_CASE(fib_strands_exact, 60), TEST_CASE(burden_by_hand, 10),
                                          TEST_CASE(two_joins_exact, 10), TEST_CASE(fan_strands_exact, 10),
                                          TEST_CASE(chain_strands_exact, 10), TEST_CASE(roots_add_up, 10),
                                          TEST_CASE(time_known_dags, 30), TEST_CASE(per_strand_median, 30),
                                          TEST_CASE(median_of_three, 30),
                                          TEST_CASE(fallbacks_said, 30), TEST_CASE(inflated_residue, 30), {0}});
}
