/* test_kernels.c — every kernel of the list at its description's small sizes (and the
 * calibrate kernel), verified, in whatever this binary was built as: a runtime variant (1-4 workers, busy and
 * lazy), the serial projection, or an OpenMP baseline (1-4 threads).  Also the driver's
 * command line: bad options give a one-line error naming the option and a non-zero exit. */
#include <math.h>
#include <sys/wait.h>

#include "bench/bench.h"
#include "kernels/mn.h"
#include "tests/testlib.h"

#if defined(FK_BASELINE_OMP)
#include <omp.h>
#endif

/* One small case: a kernel and its options, "OPTION=VALUE ..." (its description's `small`). */
struct size {
    const char *kernel, *args;
};

/* Sets the options of args ("n=20 eps=1e-9") in c, parsed in buf (of BENCH_ARGS_MAX bytes:
 * a choice keeps a pointer into it, so it lives as long as c). */
#define BENCH_ARGS_MAX 256
static void set_args(bench_ctx *c, const char *args, char *buf) {
    char err[256];
    ASSERT_MSG(strlen(args) < BENCH_ARGS_MAX, "kernel %s: small case too long: %s", c->kernel->desc->name, args);
    snprintf(buf, BENCH_ARGS_MAX, "%s", args);
    for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        ASSERT_MSG(eq, "kernel %s: small case '%s': '%s' is not OPTION=VALUE", c->kernel->desc->name, args, tok);
        *eq = 0;
        int idx = bench_opt_index(c->kernel, tok);
        ASSERT_MSG(idx >= 0, "kernel %s has no option %s", c->kernel->desc->name, tok);
        ASSERT_MSG(bench_set_opt(c, idx, tok, eq + 1, err, sizeof err) == 0, "%s", err);
    }
}

/* Runs one kernel the way the driver does: prepare, two repetitions, verify.  Runtime
 * builds: the pool's statistics of the two repetitions into *st (if st). */
static void run_stats(const struct size *z, unsigned workers, int lazy, void *st) {
    const bench_kernel *k = bench_find(z->kernel);
    ASSERT_MSG(k, "no kernel %s", z->kernel);
    bench_ctx c;
    char argbuf[BENCH_ARGS_MAX];
    ASSERT_EQ(bench_ctx_init(&c, k), 0);
    set_args(&c, z->args, argbuf);
    c.workers = workers;
#if FK_BENCH_RUNTIME
    fk_pool_opts o;
    fk_pool_opts_init(&o);
    o.workers = workers;
    o.sched = lazy ? FK_SCHED_LAZY : FK_SCHED_BUSY;
    ASSERT_EQ(fk_pool_create(&c.pool, &o), 0);
#elif defined(FK_BASELINE_OMP)
    (void)lazy;
    omp_set_num_threads((int)workers);
#elif defined(FK_BASELINE_TBB)
    (void)lazy;
    bench_tbb_start(workers);
#else
    (void)lazy;
#endif
    int can = !(k->desc->flags & BENCH_BLOCKS) || MN_FIBERS;
#if defined(FK_BASELINE_SERIAL)
    can = 1;
#endif
    if (!can) { /* refused, saying why (stderr), before anything runs */
        ASSERT_MSG(k->prepare(&c) != 0, "%s accepted kernel %s, whose tasks block, which its tasks cannot express",
                   bench_variant(), z->kernel);
    } else {
        ASSERT(!k->prepare || k->prepare(&c) == 0);
        k->run(&c);
        k->run(&c);
        int ok = k->verify(&c);
        char *js = json_dumps(c.out, JSON_COMPACT);
        ASSERT_MSG(ok, "%s %s on %u workers (%s): wrong answer: %s", z->kernel, z->args, workers, bench_variant(), js);
        free(js);
    }
#if FK_BENCH_RUNTIME
    if (st)
        fk_pool_stats(c.pool, st, NULL);
#else
    (void)st;
#endif
    if (k->cleanup)
        k->cleanup(&c);
#if FK_BENCH_RUNTIME
    fk_pool_destroy(c.pool);
#elif defined(FK_BASELINE_TBB)
    bench_tbb_stop();
#endif
    json_decref(c.out);
}

static void run_one(const struct size *z, unsigned workers, int lazy) { run_stats(z, workers, lazy, NULL); }

/* Every small case of every kernel in the list whose flags `mn` says (and the calibrate
 * kernel's, with the others), as fn does it. */
static void each_case(int mn, void (*fn)(const struct size *z)) {
    size_t n = 0;
    for (size_t k = 0; bench_kernels[k]; k++) {
        const bench_desc *d = bench_kernels[k]->desc;
        if (!!(d->flags & BENCH_MN) != mn)
            continue;
        for (const char *const *a = d->small; a && *a; a++, n++)
            fn(&(struct size){d->name, *a});
    }
    ASSERT_MSG(n >= 4, "only %zu small cases", n);
}

#if defined(FK_BASELINE_SERIAL)
#define MAX_WORKERS 1
#else
#define MAX_WORKERS 4
#endif

static void busy_1_to_max(const struct size *z) {
    for (unsigned w = 1; w <= MAX_WORKERS; w++)
        run_one(z, w, 0);
}

TEST(kernels_verified) { each_case(0, busy_1_to_max); }

#if FK_BENCH_RUNTIME /* (lazy workers are the runtime's) */
static void lazy_2_4(const struct size *z) {
    for (unsigned w = 2; w <= 4; w += 2)
        run_one(z, w, 1);
}
TEST(kernels_verified_lazy) { each_case(0, lazy_2_4); }
#endif

static void mn_case(const struct size *z) {
    busy_1_to_max(z);
    if (FK_BENCH_RUNTIME)
        run_one(z, 3, 1);
}
TEST(mn_kernels_verified) { each_case(1, mn_case); }

/* Every kernel of the list has a driver version and small cases (what the tests above run),
 * each a valid set of its options, and a description within the limits the harness and the
 * drivers assume: a name of at most 15 characters, at most BENCH_MAX_OPTS options, a
 * calibration (if any) of valid options, the call count wherever BENCH_ICOUNT is said. */
static void valid_args(const bench_kernel *k, const char *args) {
    bench_ctx c;
    char argbuf[BENCH_ARGS_MAX];
    ASSERT_EQ(bench_ctx_init(&c, k), 0);
    set_args(&c, args, argbuf);
    json_decref(c.out);
}

TEST(every_kernel_has_small_cases) {
    size_t n = 0, calibrate = 0, icount = 0;
    for (size_t i = 0; bench_descs[i]; i++, n++) {
        const bench_desc *d = bench_descs[i];
        const bench_kernel *k = bench_find(d->name);
        ASSERT_MSG(k && k->desc == d, "kernel %s: no driver version with its description", d->name);
        ASSERT_MSG(strlen(d->name) <= 15 && d->summary && d->model.serial_s, "kernel %s: name, summary or model",
                   d->name);
        size_t nopt = 0;
        while (d->opts[nopt].name)
            nopt++;
        ASSERT_MSG(nopt <= BENCH_MAX_OPTS, "kernel %s has %zu options, over %d", d->name, nopt, BENCH_MAX_OPTS);
        ASSERT_MSG(d->small && d->small[0], "kernel %s has no small cases (its description's .small)", d->name);
        for (const char *const *a = d->small; *a; a++)
            valid_args(k, *a);
        if (d->span_calibrate)
            valid_args(k, d->span_calibrate), calibrate++;
        ASSERT_MSG(!(d->flags & BENCH_ICOUNT) == !d->icount_calls, "kernel %s: BENCH_ICOUNT without icount_calls, or "
                   "the reverse", d->name);
        icount += !!(d->flags & BENCH_ICOUNT);
    }
    ASSERT_GE(n, 10);
    ASSERT_MSG(calibrate == 1 && icount == 1, "%zu kernels say span calibrates on them, %zu BENCH_ICOUNT: one each",
               calibrate, icount);
}

/* The M:N workloads run as their lines promise.  Stackful (child-fiber): heat's strips live
 * across the time steps and meet at a barrier, so on one worker each strip parks at least
 * once and holds a fiber of its own (at least `strips` fibers); the fork-join lines never
 * park.  Every runtime line: work started by one task is taken by thieves (steals on 2
 * workers; a few tries, since a busy machine may give the thief no CPU for a while). */
#if FK_BENCH_RUNTIME
TEST(mn_workloads_lines) {
    fk_stats st;
    const struct size heat = {"heat", "n=64 steps=6"}; /* 64 strips */
    run_stats(&heat, 1, 0, &st);
    printf("  heat (64 strips) on 1 worker: %llu fibers\n", (unsigned long long)st.fibers);
    if (MN_FIBERS)
        ASSERT_MSG(st.fibers >= 64, "64 strips that wait at a barrier ran on %llu fibers", (unsigned long long)st.fibers);
    else
        ASSERT_EQ_U(st.fibers, 0);
    const struct size bal = {"balanced", "n=64 iters=200000"};
    uint64_t steals = 0;
    double t0 = test_now();
    for (int i = 0; !steals && test_now() - t0 < 30; i++) {
        run_stats(&bal, 2, 0, &st);
        steals = st.steals;
    }
    printf("  balanced (64 tasks from one) on 2 workers: %llu steals\n", (unsigned long long)steals);
    ASSERT_MSG(steals > 0, "no thief took any of 64 tasks started by one task in 30 s");
    if (MN_FIBERS) { /* the switch kernel: every hand-off parks one fiber and wakes the other */
        const struct size sw = {"switch", "rounds=200"};
        run_stats(&sw, 1, 0, &st);
        printf("  switch (200 rounds) on 1 worker: %llu fibers\n", (unsigned long long)st.fibers);
        ASSERT_GE(st.fibers, 2);
    }
}
#endif

/* Options are checked with messages that name them. */
TEST(bad_options) {
    static const struct {
        const char *kernel, *opt, *val, *msg;
    } bad[] = {
        {"fib", "n", "-1", "out of range"},
        {"fib", "n", "x", "not an integer"},
        {"fib", "n", "", "not an integer"},
        {"matmul", "n", "100", "not a power of two"},
        {"matmul", "n", "8", "out of range"},
        {"integrate", "eps", "abc", "not a number"},
        {"integrate", "eps", "-1", "out of range"},
        {"nqueens", "n", "40", "out of range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        bench_ctx c;
        ASSERT_EQ(bench_ctx_init(&c, bench_find(bad[i].kernel)), 0);
        char err[256] = "";
        int idx = bench_opt_index(c.kernel, bad[i].opt);
        ASSERT(idx >= 0);
        ASSERT_NE(bench_set_opt(&c, idx, bad[i].opt, bad[i].val, err, sizeof err), 0);
        ASSERT_STR_CONTAINS(err, bad[i].opt);
        ASSERT_STR_CONTAINS(err, bad[i].msg);
        json_decref(c.out);
    }
    ASSERT(bench_find("fibonacci") == NULL);
}

/* The driver executable of this build, if it has been built (make check builds it first). */
static const char *driver_path(void) {
    static char path[256];
    const char *bin = getenv("FORKSCOPE_BIN_DIR"); /* another build tree's drivers (BUILD=...) */
    snprintf(path, sizeof path, "%s/fk-bench-%s", bin && *bin ? bin : "build/bin", bench_variant());
    return access(path, X_OK) == 0 ? path : NULL;
}

/* The driver, or the case is skipped, saying which (make check builds every driver first,
 * and fails on this skip: tests/skips does not expect it). */
static const char *need_driver(void) {
    const char *d = driver_path();
    if (!d)
        TEST_SKIP("driver fk-bench-%s not built (make build/bin/fk-bench-%s)", bench_variant(), bench_variant());
    return d;
}

static const char *const *cli_argv;
static void exec_driver(void *arg) {
    (void)arg;
    execv(cli_argv[0], (char *const *)cli_argv);
    _exit(127);
}

/* The command line: every bad option gives one line on stderr naming it, exit status 1. */
TEST(driver_cli_errors) {
    const char *d = need_driver();
    static const struct {
        const char *args[8], *msg;
    } cases[] = {
        {{"--kernel", "fibonacci"}, "unknown kernel 'fibonacci'"},
        {{"--kernel"}, "--kernel needs a value"},
        {{"--kernel", "fib", "--n"}, "--n needs a value"},
        {{"--kernel", "fib", "--n", "-5"}, "--n: -5 is out of range"},
        {{"--kernel", "matmul", "--n", "1000"}, "--n: 1000 is not a power of two"},
        {{"--kernel", "fib", "--workers", "0"}, "--workers"},
        {{"--kernel", "fib", "--frobnicate", "1"}, "unknown option --frobnicate"},
        {{"--kernel", "fib", "--sched", "sleepy"}, "--sched"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *argv[10] = {d};
        for (int j = 0; cases[i].args[j]; j++)
            argv[j + 1] = cases[i].args[j];
        cli_argv = argv;
        char *err;
        int st = test_run_capturing(exec_driver, NULL, &err);
        ASSERT_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 1, "case %zu: expected exit 1, got status %d (%s)", i, st, err);
        ASSERT_STR_CONTAINS(err, cases[i].msg);
        size_t lines = 0;
        for (char *p = err; *p; p++)
            lines += *p == '\n';
        ASSERT_MSG(lines == 1, "case %zu: expected one line of error, got %zu: %s", i, lines, err);
        free(err);
    }
}

/* A run prints one JSON object with what the harness needs. */
TEST(driver_json) {
    const char *d = need_driver();
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s --kernel fib --n 15 --reps 3 --warmup 1 --workers 1", d);
    FILE *f = popen(cmd, "r");
    ASSERT(f);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    ASSERT_EQ(pclose(f), 0);
    json_error_t e;
    json_t *doc = json_loads(buf, 0, &e);
    ASSERT_MSG(doc, "not JSON: %s (%s)", buf, e.text);
    ASSERT(json_is_true(json_object_get(doc, "verified")));
    ASSERT_EQ(json_array_size(json_object_get(doc, "times")), 3);
    ASSERT_EQ(json_array_size(json_object_get(doc, "warmup_times")), 1);
    /* CPU time of each timed repetition: positive, at most workers (1) x its time + a tick */
    json_t *cpu = json_object_get(doc, "cpu_times");
    ASSERT_EQ(json_array_size(cpu), 3);
    for (size_t i = 0; i < 3; i++) {
        double c = json_number_value(json_array_get(cpu, i));
        double t = json_number_value(json_array_get(json_object_get(doc, "times"), i));
        ASSERT_MSG(c >= 0 && c <= t + 0.005, "repetition %zu: cpu %g s, time %g s", i, c, t);
    }
    ASSERT_EQ(json_integer_value(json_object_get(doc, "answer")), 610);
    ASSERT(json_is_boolean(json_object_get(doc, "oversubscribed")));
    ASSERT(json_object_get(json_object_get(doc, "build"), "flags"));
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(doc, "params"), "n")), 15);
    json_decref(doc);
}

/* PAPI's software events count here and come out plausible; hardware events (none on this
 * VM) are either counted or reported unavailable with a reason, and the run goes on. */
TEST(driver_papi) {
    const char *d = need_driver();
    unsigned workers = strcmp(bench_variant(), "serial") ? 4 : 1; /* 4 > cores: switches happen */
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "%s --kernel fib --n 34 --reps 2 --workers %u "
             "--papi perf::TASK-CLOCK,perf::PAGE-FAULTS,perf::CONTEXT-SWITCHES,PAPI_TOT_CYC --papi-per-worker 1",
             d, workers);
    FILE *f = popen(cmd, "r");
    ASSERT(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    ASSERT_EQ(pclose(f), 0);
    json_error_t e;
    json_t *doc = json_loads(buf, 0, &e);
    ASSERT_MSG(doc, "not JSON: %s", buf);
    ASSERT(json_is_true(json_object_get(doc, "verified")));
    json_t *ev = json_object_get(json_object_get(doc, "papi"), "events");
    ASSERT_MSG(ev, "no papi events in %s", buf);
    double wall = 0;
    for (size_t i = 0; i < json_array_size(json_object_get(doc, "times")); i++)
        wall += json_real_value(json_array_get(json_object_get(doc, "times"), i));
    json_t *clk = json_object_get(ev, "perf::TASK-CLOCK");
    ASSERT(json_is_true(json_object_get(clk, "available")));
    double ns = (double)json_integer_value(json_object_get(clk, "total"));
    /* CPU time of the counting threads during the timed repetitions: at most workers x wall
     * plus slack for the start and stop (busy workers spin between them: seen 139 ms for
     * 2 x 13 ms at 4 workers with fib 32 while the machine was loaded), and more than a
     * small part of one thread's wall time. */
    ASSERT_MSG(ns > 0.2e9 * wall && ns < 1.2e9 * wall * workers + 10e6 * workers, "TASK-CLOCK %.0f ns for %.4f s x %u workers",
               ns, wall, workers);
    /* (TBB's driver counts on its measuring thread only: its workers are TBB's) */
    unsigned counting = strcmp(bench_variant(), "tbb") ? workers : 1;
    ASSERT_EQ(json_array_size(json_object_get(clk, "per_thread")), counting);
    for (unsigned t = 0; t < counting; t++) /* every counting thread counted (its own time) */
        ASSERT_MSG(json_integer_value(json_array_get(json_object_get(clk, "per_thread"), t)) > 0,
                   "TASK-CLOCK of thread %u is 0", t);
    json_t *pf = json_object_get(ev, "perf::PAGE-FAULTS");
    ASSERT(json_is_true(json_object_get(pf, "available")));
    ASSERT(json_is_integer(json_object_get(pf, "total")));
    json_t *cs = json_object_get(ev, "perf::CONTEXT-SWITCHES");
    ASSERT(json_is_true(json_object_get(cs, "available")));
    if (workers > 2) /* 4 spinning or working threads on 2 cores are switched */
        ASSERT_GT(json_integer_value(json_object_get(cs, "total")), 0);
    json_t *cyc = json_object_get(ev, "PAPI_TOT_CYC");
    if (json_is_true(json_object_get(cyc, "available")))
        ASSERT_GT(json_integer_value(json_object_get(cyc, "total")), 0);
    else
        ASSERT(json_string_length(json_object_get(cyc, "reason")) > 0);
    json_decref(doc);

    /* Page faults are those of the timed run: mergesort of 2^22 keys first writes its 16 MiB
     * scratch array (malloc'd, never touched before the run, so fresh pages) inside the one
     * timed repetition, on the counting threads: at least one fault per page of it (per
     * 2 MiB where transparent huge pages are "always"). */
    snprintf(cmd, sizeof cmd, "%s --kernel mergesort --n 4194304 --reps 1 --warmup 0 --workers %u --papi perf::PAGE-FAULTS",
             d, workers);
    f = popen(cmd, "r");
    ASSERT(f);
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    ASSERT_EQ(pclose(f), 0);
    doc = json_loads(buf, 0, &e);
    ASSERT_MSG(doc, "not JSON: %s", buf);
    ASSERT(json_is_true(json_object_get(doc, "verified")));
    json_int_t faults =
        json_integer_value(json_object_get(json_object_get(json_object_get(json_object_get(doc, "papi"), "events"), "perf::PAGE-FAULTS"), "total"));
    long page = sysconf(_SC_PAGESIZE);
    FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (thp) {
        char mode[128] = "";
        if (fgets(mode, sizeof mode, thp) && strstr(mode, "[always]"))
            page = 2L << 20;
        fclose(thp);
    }
    printf("  mergesort 2^22 on %u workers: %lld page faults (scratch array: %ld pages)\n", workers, (long long)faults,
           (4194304L * 4) / page);
    ASSERT_MSG(faults >= (4194304L * 4) / page, "%lld page faults counted, but the run first-touched %ld pages", (long long)faults,
               (4194304L * 4) / page);
    json_decref(doc);
}

/* A parallel baseline really runs on the workers it is given: nqueens(12) on 2 workers keeps
 * both busy (process CPU time over 1.4 x the wall time of the timed repetition); a driver
 * that quietly ran on one thread would show about 1.0. */
#if !FK_BENCH_RUNTIME && !defined(FK_BASELINE_SERIAL)
/* (the runtime's parallelism is test_runtime's: greedy, steals; serial has none) */
TEST(baseline_uses_its_workers) {
    const char *d = need_driver();
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        TEST_SKIP("one core online: CPU over wall time cannot exceed 1");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s --kernel nqueens --n 12 --reps 3 --workers 2", d);
    FILE *f = popen(cmd, "r");
    ASSERT(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    ASSERT_EQ(pclose(f), 0);
    json_error_t e;
    json_t *doc = json_loads(buf, 0, &e);
    ASSERT_MSG(doc, "not JSON: %s", buf);
    double best = 0;
    for (size_t i = 0; i < 3; i++) {
        double t = json_real_value(json_array_get(json_object_get(doc, "times"), i));
        double c = json_real_value(json_array_get(json_object_get(doc, "cpu_times"), i));
        best = fmax(best, c / t);
    }
    printf("  %s nqueens(12) on 2 workers: CPU / wall up to %.2f\n", bench_variant(), best);
    /* a timing check: another process on the two cores lowers it (retried once) */
    ASSERT_TIMING(best > 1.4, "%s on 2 workers used %.2f CPUs", bench_variant(), best);
    json_decref(doc);
}
#endif

int main(int argc, char **argv) {
    printf("# test_kernels: %s\n", bench_variant());
    return test_main(argc, argv, (struct test_case[]){
        TEST_CASE(kernels_verified, 120),
#if FK_BENCH_RUNTIME
        TEST_CASE(kernels_verified_lazy, 120),
#endif
        TEST_CASE(mn_kernels_verified, 120),
        TEST_CASE(every_kernel_has_small_cases, 10),
#if FK_BENCH_RUNTIME
        TEST_CASE(mn_workloads_lines, 120),
#endif
        TEST_CASE(bad_options, 10),
        TEST_CASE(driver_cli_errors, 30),
        TEST_CASE(driver_json, 30),
        TEST_CASE(driver_papi, 60),
#if !FK_BENCH_RUNTIME && !defined(FK_BASELINE_SERIAL)
        TEST_CASE(baseline_uses_its_workers, 60),
#endif
        {0},
    });
}
