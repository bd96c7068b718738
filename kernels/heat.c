/* heat.c — the M:N report's heat diffusion: an n x n grid (512), `steps` time steps (400),
 * split into `strips` horizontal strips (64); the strips of the middle third compute their
 * update `heavy` times (4) each step, the same values every time (a lasting imbalance).
 *
 * Each step is the explicit 5-point update u' = u + 0.2 (sum of the 4 neighbours - 4 u)
 * from one grid into the other; the boundary is fixed (top edge 1, left edge 0.5, the rest
 * 0) and the interior starts at 0.  Every cell is computed by the same expression in every
 * form, so the answer is checked cell by cell, exactly, against a serial run.
 *
 * The stackful line (child-fiber) is the report's: one fiber per strip for the whole run,
 * meeting at a barrier after each step (a counter the strips wait on: 63 park, the last
 * wakes them).  The stackless lines cannot keep a task across steps: each step is a
 * fork-join over the strips (the barrier is the join). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "kernels/mn.h"

/* ---- what the harness knows of heat (bench/options.h) ------------------------------------ */
enum { HEAT_OPT_N, HEAT_OPT_STEPS, HEAT_OPT_STRIPS, HEAT_OPT_HEAVY };
static const bench_opt heat_opts[] = {
    [HEAT_OPT_N] = {"n", BENCH_INT, "512", 2, 16384, 0, NULL, "grid of n x n interior cells"},
    [HEAT_OPT_STEPS] = {"steps", BENCH_INT, "400", 1, 1e7, 0, NULL, "time steps (a barrier after each)"},
    [HEAT_OPT_STRIPS] = {"strips", BENCH_INT, "64", 1, 16384, 0, NULL, "horizontal strips, one task each (at most n)"},
    [HEAT_OPT_HEAVY] = {"heavy", BENCH_INT, "4", 1, 1000, 0, NULL,
                        "work factor of the middle third of the strips (each computes its update this often)"},
    {0},
};

static double heat_serial_s(const bench_vals *v, int serial) {
    (void)serial;
    double n = v->d[HEAT_OPT_N];
    return 0.86e-9 * n * n * v->d[HEAT_OPT_STEPS] * (2 + v->d[HEAT_OPT_HEAVY]) / 3;
}

const bench_desc bench_heat_desc = {
    .name = "heat",
    .summary = "M:N report: heat diffusion in strips, the middle third heavier, a barrier per step",
    .flags = BENCH_MN,
    .opts = heat_opts,
    .model = {.serial_s = heat_serial_s, .runtime = 1.1, .omp = 1.1},
    .small = (const char *const[]){"n=64 steps=12", "n=40 strips=7", NULL},
};

#if !BENCH_DESCRIBE_ONLY

typedef struct {
    size_t n, steps, strips, heavy, w; /* w = n + 2: a row with its boundary cells */
    double *g[2];                      /* the two grids, (n + 2) x (n + 2) */
    size_t t;                          /* the step the fork-join lines run now */
#if MN_FIBERS
    fk_counter bar[3]; /* the barrier: step t meets at bar[t % 3] */
#endif
} heat;

static heat H;

static void heat_init(heat *h, double *g) {
    memset(g, 0, h->w * h->w * sizeof *g);
    for (size_t j = 0; j < h->w; j++)
        g[j] = 1.0;
    for (size_t i = 1; i < h->w; i++)
        g[i * h->w] = 0.5;
}

/* Strip k's rows of step t (reps times: the middle third is heavy). */
static void heat_strip(heat *h, size_t k, size_t t) {
    size_t lo = 1 + k * h->n / h->strips, hi = 1 + (k + 1) * h->n / h->strips, w = h->w, n = h->n;
    size_t reps = k >= h->strips / 3 && k < 2 * h->strips / 3 ? h->heavy : 1;
    const double *restrict s = h->g[t & 1];
    double *restrict d = h->g[(t + 1) & 1];
    for (size_t r = 0; r < reps; r++) {
        for (size_t i = lo; i < hi; i++)
            for (size_t j = 1; j <= n; j++) {
                size_t x = i * w + j;
                d[x] = s[x] + 0.2 * (s[x - w] + s[x + w] + s[x - 1] + s[x + 1] - 4.0 * s[x]);
            }
        __asm__ volatile("" ::: "memory"); /* each repetition is done again */
    }
}

#if !MN_FIBERS
static void heat_body(void *ctx, size_t k) { /* the fork-join lines: strip k of step h->t */
    heat *h = ctx;
    heat_strip(h, k, h->t);
}
#endif

static int heat_prepare(bench_ctx *c) {
    H = (heat){.n = (size_t)c->i[HEAT_OPT_N],
               .steps = (size_t)c->i[HEAT_OPT_STEPS],
               .strips = (size_t)c->i[HEAT_OPT_STRIPS],
               .heavy = (size_t)c->i[HEAT_OPT_HEAVY]};
    if (H.strips > H.n) {
        fprintf(stderr, "option --strips: %zu strips of a %zu-row grid: at most one strip per row\n", H.strips, H.n);
        return -1;
    }
    H.w = H.n + 2;
    for (int i = 0; i < 2; i++)
        if (!(H.g[i] = malloc(H.w * H.w * sizeof(double)))) {
            fprintf(stderr, "out of memory for a %zu x %zu grid\n", H.w, H.w);
            return -1;
        }
    return 0;
}

#if MN_FIBERS
/* A strip's fiber: every step, then the barrier.  Before arriving at step t's counter it
 * counts itself into step t + 1's: that counter's last zero (step t - 2) has no waiter left,
 * since every strip passed step t - 1's barrier (fk_counter's rule for raising a count). */
FK_LEAF_TASK(heat_strip_fiber, void, (heat *, h), (size_t, k)) {
    for (size_t t = 0; t < h->steps; t++) {
        heat_strip(h, k, t);
        fk_counter_add(&h->bar[(t + 1) % 3], 1);
        fk_counter_done(&h->bar[t % 3]);
        fk_counter_wait(&h->bar[t % 3]);
    }
    FK_RETURN_VOID();
} FK_END

FK_LEAF_TASK(heat_root, void, (heat *, h)) {
    fk_counter all;
    fk_counter_init(&all, 0);
    fk_counter_init(&h->bar[0], (uint32_t)h->strips);
    fk_counter_init(&h->bar[1], 0);
    fk_counter_init(&h->bar[2], 0);
    for (size_t k = 0; k < h->strips; k++)
        FK_SPAWN(&all, NULL, heat_strip_fiber, h, k);
    fk_counter_wait(&all);
    FK_RETURN_VOID();
} FK_END
#elif FK_BENCH_RUNTIME
typedef struct {
    fk_frame fk;
} heat_frame;

FK_TASK(heat_root, void, heat_frame *f, (heat *, h)) {
    FK_BEGIN(f);
    for (h->t = 0; h->t < h->steps; h->t++)
        FK_CALL_VOID(mn_each_task, heat_body, h, h->strips);
    FK_RETURN_VOID();
} FK_END
#endif

#if defined(FK_BASELINE_PEER)
static size_t heat_next(void *ctx) { /* the strips of the next step (H.t starts at -1) */
    heat *h = ctx;
    return ++h->t < h->steps ? h->strips : 0;
}
#endif

static void heat_run(bench_ctx *c) {
    heat_init(&H, H.g[0]);
    heat_init(&H, H.g[1]);
#if FK_BENCH_RUNTIME
    if (FK_RUN(c->pool, NULL, heat_root, &H))
        H.g[H.steps & 1][H.w + 1] = NAN;
#elif defined(FK_BASELINE_OMP)
    (void)c;
#pragma omp parallel
#pragma omp single
    for (H.t = 0; H.t < H.steps; H.t++)
        mn_each_omp(H.strips, heat_body, &H);
#elif defined(FK_BASELINE_TBB)
    (void)c;
    for (H.t = 0; H.t < H.steps; H.t++)
        mn_each_tbb(H.strips, heat_body, &H);
#elif defined(FK_BASELINE_PEER)
    (void)c;
    H.t = (size_t)-1;
    mn_rounds_peer(heat_next, heat_body, &H);
#else
    (void)c;
    for (H.t = 0; H.t < H.steps; H.t++)
        for (size_t k = 0; k < H.strips; k++)
            heat_body(&H, k);
#endif
}

/* The reference: the same steps, serially, each strip once (its repetitions give the same
 * values). */
static int heat_verify(bench_ctx *c) {
    heat r = H;
    r.heavy = 1;
    r.g[0] = r.g[1] = NULL;
    int ok = 0;
    if ((r.g[0] = malloc(r.w * r.w * sizeof(double))) && (r.g[1] = malloc(r.w * r.w * sizeof(double)))) {
        heat_init(&r, r.g[0]);
        heat_init(&r, r.g[1]);
        for (size_t t = 0; t < r.steps; t++)
            for (size_t k = 0; k < r.strips; k++)
                heat_strip(&r, k, t);
        const double *got = H.g[H.steps & 1], *want = r.g[r.steps & 1];
        double sum = 0, wsum = 0;
        size_t wrong = 0;
        for (size_t x = 0; x < r.w * r.w; x++) {
            wrong += memcmp(&got[x], &want[x], sizeof got[x]) != 0;
            sum += got[x];
            wsum += want[x];
        }
        json_object_set_new(c->out, "answer", json_real(sum));
        json_object_set_new(c->out, "expected", json_real(wsum));
        json_object_set_new(c->out, "wrong_cells", json_integer((json_int_t)wrong));
        ok = wrong == 0;
    }
    free(r.g[0]);
    free(r.g[1]);
    json_object_set_new(c->out, "model", json_string(mn_model()));
    return ok;
}

static void heat_cleanup(bench_ctx *c) {
    (void)c;
    free(H.g[0]);
    free(H.g[1]);
    H.g[0] = H.g[1] = NULL;
}

const bench_kernel bench_heat = {
    .desc = &bench_heat_desc,
    .prepare = heat_prepare,
    .run = heat_run,
    .verify = heat_verify,
    .cleanup = heat_cleanup,
    BENCH_PEER_VERSION(mn_rounds_peer)
};
#endif
