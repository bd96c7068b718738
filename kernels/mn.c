/* mn.c — the M:N report's balanced and imbalanced workloads, and the parallel loop the other
 * workloads are built of (kernels/mn.h).
 *
 * balanced: n tasks (1024), each a busy loop of `iters` steps (100,000), all started by one
 * task.  imbalanced: the same with tasks 0, every, 2 every, ... (10%) heavy (1,000,000
 * steps) and the rest light (10,000).  Task i runs mn_spin from mn_mix(i) and stores the
 * result in slot i; the answer is checked slot by slot against the closed form (the slots
 * are cleared before every repetition, so a task that did not run is caught). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "kernels/mn.h"

/* ---- what the harness knows of balanced and imbalanced (bench/options.h) ----------------- */
/* (the M:N report's sizes are the defaults: seeds/003) */
enum { BALANCED_OPT_N, BALANCED_OPT_ITERS };
static const bench_opt balanced_opts[] = {
    [BALANCED_OPT_N] = {"n", BENCH_INT, "1024", 1, 1 << 24, 0, NULL, "tasks, all started by one task"},
    [BALANCED_OPT_ITERS] = {"iters", BENCH_INT, "100000", 0, 1e12, 0, NULL, "busy-loop iterations per task"},
    {0},
};
enum { IMBALANCED_OPT_N, IMBALANCED_OPT_LIGHT, IMBALANCED_OPT_HEAVY, IMBALANCED_OPT_EVERY };
static const bench_opt imbalanced_opts[] = {
    [IMBALANCED_OPT_N] = {"n", BENCH_INT, "1024", 1, 1 << 24, 0, NULL, "tasks, all started by one task"},
    [IMBALANCED_OPT_LIGHT] = {"light", BENCH_INT, "10000", 0, 1e12, 0, NULL, "iterations of a light task"},
    [IMBALANCED_OPT_HEAVY] = {"heavy", BENCH_INT, "1000000", 0, 1e12, 0, NULL, "iterations of a heavy task"},
    [IMBALANCED_OPT_EVERY] = {"every", BENCH_INT, "10", 1, 1 << 24, 0, NULL,
                              "tasks 0, every, 2 every, ... are heavy (10: 10%)"},
    {0},
};

/* An LCG step: about 4 cycles. */
static double balanced_serial_s(const bench_vals *v, int serial) {
    (void)serial;
    return 1.42e-9 * v->d[BALANCED_OPT_N] * v->d[BALANCED_OPT_ITERS];
}
static double imbalanced_serial_s(const bench_vals *v, int serial) {
    (void)serial;
    double n = v->d[IMBALANCED_OPT_N], heavy = ceil(n / v->d[IMBALANCED_OPT_EVERY]);
    return 1.42e-9 * (heavy * v->d[IMBALANCED_OPT_HEAVY] + (n - heavy) * v->d[IMBALANCED_OPT_LIGHT]);
}

const bench_desc bench_balanced_desc = {
    .name = "balanced",
    .summary = "M:N report: n equal busy loops started by one task",
    .flags = BENCH_MN,
    .opts = balanced_opts,
    .model = {.serial_s = balanced_serial_s, .runtime = 1.0, .omp = 1.0},
    .span_calibrate = "n=2 iters=100000", /* two loops of ~0.15 ms */
    .small = (const char *const[]){"n=100 iters=2000", NULL},
};

const bench_desc bench_imbalanced_desc = {
    .name = "imbalanced",
    .summary = "M:N report: n busy loops, every k-th heavy (10%), started by one task",
    .flags = BENCH_MN,
    .opts = imbalanced_opts,
    .model = {.serial_s = imbalanced_serial_s, .runtime = 1.0, .omp = 1.0},
    .small = (const char *const[]){"n=200 heavy=20000", NULL},
};

#if !BENCH_DESCRIBE_ONLY
#if defined(FK_BASELINE_OMP)
#include <omp.h>
#endif

uint64_t mn_spin_closed(uint64_t x, uint64_t iters) {
    /* x -> a x + c composed with itself: (a, c) -> (a a, c (a + 1)); r accumulates the map of
     * the bits of iters seen so far (all maps are powers of one, so they commute). */
    uint64_t a = MN_LCG_A, c = MN_LCG_C, ra = 1, rc = 0;
    for (; iters; iters >>= 1) {
        if (iters & 1) {
            ra *= a;
            rc = rc * a + c;
        }
        c *= a + 1;
        a *= a;
    }
    return ra * x + rc;
}

/* ---- the parallel loop ---------------------------------------------------------------------- */
#if FK_BENCH_RUNTIME
FK_LEAF_TASK(mn_each_one, void, (mn_body *, body), (void *, ctx), (size_t, i)) {
    body(ctx, i);
    FK_RETURN_VOID();
} FK_END

#if FK_STACK == FK_STACK_FIBER
/* The stackful line: spawned onto a counter, then a wait that runs what is still on this
 * worker's deque and parks the fiber until thieves have finished the rest. */
FK_LEAF_TASK_DEFINE(mn_each_task, void, (mn_body *, body), (void *, ctx), (size_t, n)) {
    fk_counter c;
    fk_counter_init(&c, 0);
    for (size_t i = 0; i < n; i++)
        FK_SPAWN(&c, NULL, mn_each_one, body, ctx, i);
    fk_counter_wait(&c);
    FK_RETURN_VOID();
} FK_END
#else
typedef struct {
    fk_frame fk;
    size_t i; /* the loop counter: a fork may continue elsewhere (rule 1) */
} each_frame;

FK_TASK_DEFINE(mn_each_task, void, each_frame *f, (mn_body *, body), (void *, ctx), (size_t, n)) {
    FK_BEGIN(f);
    for (f->i = 0; f->i < n; f->i++)
        FK_FORK_VOID(mn_each_one, body, ctx, f->i);
    FK_JOIN();
    FK_RETURN_VOID();
} FK_END
#endif

const char *mn_model(void) {
#if FK_STACK == FK_STACK_FIBER
    return "blocking: fk_spawn onto counters, waits park fibers";
#else
    return "fork-join: FK_FORK, FK_JOIN";
#endif
}
#elif defined(FK_BASELINE_OMP)
void mn_each_omp(size_t n, mn_body *body, void *ctx) {
    /* (All captures explicit: clang 14 crashes on a task that captures the parameter `body`
     * implicitly.) */
    for (size_t i = 0; i < n; i++) {
#pragma omp task default(none) firstprivate(body, ctx, i)
        body(ctx, i);
    }
#pragma omp taskwait
}

const char *mn_model(void) { return "fork-join: omp task, omp taskwait"; }
#elif defined(FK_BASELINE_TBB)
const char *mn_model(void) { return "fork-join: tbb::task_group run, wait"; }
#elif defined(FK_BASELINE_PEER)
/* (weak: a peer whose file forgets it says so rather than dropping the field) */
const char *mn_model(void) {
    return bench_peer_mn_model ? bench_peer_mn_model : "unknown (the peer defines no bench_peer_mn_model)";
}
#else
const char *mn_model(void) { return "serial"; }
#endif

/* ---- balanced and imbalanced ----------------------------------------------------------------- */

typedef struct {
    size_t n;
    uint64_t light, heavy, every;
    uint64_t *res;
} loops;

static loops L;

static uint64_t loop_iters(const loops *l, size_t i) { return i % l->every == 0 ? l->heavy : l->light; }

static void loop_body(void *ctx, size_t i) {
    loops *l = ctx;
    l->res[i] = mn_spin(mn_mix(i), loop_iters(l, i));
}

static int loops_prepare(size_t n, uint64_t light, uint64_t heavy, uint64_t every) {
    L = (loops){n, light, heavy, every, calloc(n, sizeof *L.res)};
    if (!L.res) {
        fprintf(stderr, "out of memory for %zu tasks' results\n", n);
        return -1;
    }
    return 0;
}

static int balanced_prepare(bench_ctx *c) {
    uint64_t it = (uint64_t)c->i[BALANCED_OPT_ITERS];
    return loops_prepare((size_t)c->i[BALANCED_OPT_N], it, it, 1);
}

static int imbalanced_prepare(bench_ctx *c) {
    return loops_prepare((size_t)c->i[IMBALANCED_OPT_N], (uint64_t)c->i[IMBALANCED_OPT_LIGHT],
                         (uint64_t)c->i[IMBALANCED_OPT_HEAVY], (uint64_t)c->i[IMBALANCED_OPT_EVERY]);
}

#if defined(FK_BASELINE_PEER)
static int loops_rounds; /* left to run: one round of all the tasks */
static size_t loops_next(void *ctx) {
    loops *l = ctx;
    return loops_rounds-- > 0 ? l->n : 0;
}
#endif

static void loops_run(bench_ctx *c) {
    memset(L.res, 0, L.n * sizeof *L.res);
#if FK_BENCH_RUNTIME
    if (FK_RUN(c->pool, NULL, mn_each_task, loop_body, &L, L.n))
        L.res[0] = 0;
#elif defined(FK_BASELINE_OMP)
    (void)c;
#pragma omp parallel
#pragma omp single
    mn_each_omp(L.n, loop_body, &L);
#elif defined(FK_BASELINE_TBB)
    (void)c;
    mn_each_tbb(L.n, loop_body, &L);
#elif defined(FK_BASELINE_PEER)
    (void)c;
    loops_rounds = 1;
    mn_rounds_peer(loops_next, loop_body, &L);
#else
    (void)c;
    for (size_t i = 0; i < L.n; i++)
        loop_body(&L, i);
#endif
}

static int loops_verify(bench_ctx *c) {
    uint64_t sum = 0, want = 0, steps = 0;
    size_t wrong = 0;
    for (size_t i = 0; i < L.n; i++) {
        uint64_t e = mn_spin_closed(mn_mix(i), loop_iters(&L, i));
        wrong += L.res[i] != e;
        sum += L.res[i];
        want += e;
        steps += loop_iters(&L, i);
    }
    json_object_set_new(c->out, "answer", json_integer((json_int_t)(sum >> 1)));
    json_object_set_new(c->out, "expected", json_integer((json_int_t)(want >> 1)));
    json_object_set_new(c->out, "wrong_tasks", json_integer((json_int_t)wrong));
    json_object_set_new(c->out, "loop_steps", json_integer((json_int_t)steps));
    json_object_set_new(c->out, "model", json_string(mn_model()));
    return wrong == 0;
}

static void loops_cleanup(bench_ctx *c) {
    (void)c;
    free(L.res);
    L.res = NULL;
}

const bench_kernel bench_balanced = {
    .desc = &bench_balanced_desc,
    .prepare = balanced_prepare,
    .run = loops_run,
    .verify = loops_verify,
    .cleanup = loops_cleanup,
    BENCH_PEER_VERSION(mn_rounds_peer)
};

const bench_kernel bench_imbalanced = {
    .desc = &bench_imbalanced_desc,
    .prepare = imbalanced_prepare,
    .run = loops_run,
    .verify = loops_verify,
    .cleanup = loops_cleanup,
    BENCH_PEER_VERSION(mn_rounds_peer)
};
#endif
