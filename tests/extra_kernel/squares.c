/* squares.c — a kernel kept outside the list, as a user would write one, to test
 * `make EXTRA_KERNELS='DIR/NAME.c ...'` (a glob works too; scripts/extra-kernel-test.sh).
 * It is also the template of docs/suite.md ("A kernel of your own"): copy it, rename it
 * NAME.c, and rename every squares_ / bench_squares below to NAME.
 *
 * The sum of i^2 for i in [0, n), by halving the range: a task forks its left half, calls its
 * right half and joins, down to `grain` numbers, which it adds up itself.  The answer is the
 * closed form (n - 1) n (2n - 1) / 6, checked exactly. */
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench.h"

/* ---- what the harness knows of squares (bench/options.h) --------------------------------- */
enum { SQUARES_OPT_N, SQUARES_OPT_GRAIN };
static const bench_opt squares_opts[] = {
    [SQUARES_OPT_N] = {"n", BENCH_INT, "1000000", 1, 1 << 20, 0, NULL, "sum the squares of 0 .. n - 1"},
    [SQUARES_OPT_GRAIN] = {"grain", BENCH_INT, "64", 1, 1 << 20, 0, NULL, "numbers a task adds up itself"},
    {0},
};

/* The closed form: every version's answer must equal it. */
static uint64_t squares_exact(const bench_vals *v) {
    uint64_t n = (uint64_t)v->i[SQUARES_OPT_N];
    return (n - 1) * n * (2 * n - 1) / 6;
}

static int squares_answer(const bench_vals *v, double *out) {
    *out = (double)squares_exact(v);
    return 0;
}

/* About 1 ns a number serially (a guess: `forkscope run --dry-run` shows it). */
static double squares_serial_s(const bench_vals *v, int serial) {
    (void)serial;
    return 1e-9 * v->d[SQUARES_OPT_N];
}

const bench_desc bench_squares_desc = {
    .name = "squares",
    .summary = "sum of squares by recursive halving (a kernel from outside the tree)",
    .opts = squares_opts,
    .answer = squares_answer,
    .model = {.serial_s = squares_serial_s, .runtime = 2, .omp = 10},
    .small = (const char *const[]){"n=1", "n=1000 grain=1", "n=100000", NULL},
};

#if !BENCH_DESCRIBE_ONLY
static uint64_t result;

#if !defined(FK_BASELINE_TBB) && !defined(FK_BASELINE_PEER) /* (where a version here adds numbers up) */
static uint64_t squares_leaf(uint64_t lo, uint64_t hi) {
    uint64_t s = 0;
    for (uint64_t i = lo; i < hi; i++) {
        s += i * i;
        __asm__ volatile("" : "+r"(s)); /* (no closed form in place of the loop: it is the work) */
    }
    return s;
}
#endif

#if defined(FK_BASELINE_SERIAL)
__attribute__((noinline)) static uint64_t squares_serial(uint64_t lo, uint64_t hi, uint64_t grain) {
    if (hi - lo <= grain)
        return squares_leaf(lo, hi);
    uint64_t mid = lo + (hi - lo) / 2;
    uint64_t a = squares_serial(lo, mid, grain);
    uint64_t b = squares_serial(mid, hi, grain);
    __asm__ volatile("" : "+r"(b)); /* (keeps the second call out of tail position, as fib.c) */
    return a + b;
}
static void squares_run(bench_ctx *c) {
    result = squares_serial(0, (uint64_t)c->i[SQUARES_OPT_N], (uint64_t)c->i[SQUARES_OPT_GRAIN]);
}

#elif defined(FK_BASELINE_PEER) /* (no peer has a version: its driver refuses the kernel) */
static void squares_run(bench_ctx *c) {
    (void)c;
    fprintf(stderr, "squares: internal error: no peer version\n");
    abort();
}

#elif defined(FK_BASELINE_TBB) /* (squares_tbb.cpp beside this file) */
uint64_t squares_tbb(uint64_t lo, uint64_t hi, uint64_t grain);
static void squares_run(bench_ctx *c) {
    result = squares_tbb(0, (uint64_t)c->i[SQUARES_OPT_N], (uint64_t)c->i[SQUARES_OPT_GRAIN]);
}

#elif defined(FK_BASELINE_OMP)
static uint64_t squares_omp(uint64_t lo, uint64_t hi, uint64_t grain) {
    if (hi - lo <= grain)
        return squares_leaf(lo, hi);
    uint64_t mid = lo + (hi - lo) / 2, a, b;
#pragma omp task shared(a)
    a = squares_omp(lo, mid, grain);
    b = squares_omp(mid, hi, grain);
#pragma omp taskwait
    return a + b;
}
static void squares_run(bench_ctx *c) {
    uint64_t n = (uint64_t)c->i[SQUARES_OPT_N], grain = (uint64_t)c->i[SQUARES_OPT_GRAIN];
#pragma omp parallel
#pragma omp single
    result = squares_omp(0, n, grain);
}

#else /* forkscope: results in the frame (FK_FORK(a, ...) stores into f->a) */
typedef struct {
    fk_frame fk;
    uint64_t a, b;
} squares_frame;

FK_TASK(squares, uint64_t, squares_frame *f, (uint64_t, lo), (uint64_t, hi), (uint64_t, grain)) {
    if (hi - lo <= grain)
        FK_RETURN(squares_leaf(lo, hi));
    FK_BEGIN(f);
    FK_FORK(a, squares, lo, lo + (hi - lo) / 2, grain);
    FK_CALL(b, squares, lo + (hi - lo) / 2, hi, grain);
    FK_JOIN();
    FK_RETURN(f->a + f->b);
} FK_END

static void squares_run(bench_ctx *c) {
    if (FK_RUN(c->pool, &result, squares, 0, (uint64_t)c->i[SQUARES_OPT_N], (uint64_t)c->i[SQUARES_OPT_GRAIN]))
        result = UINT64_MAX; /* (0 is an answer: n = 1's) */
}
#endif

static int squares_verify(bench_ctx *c) {
    uint64_t want = squares_exact(&c->v);
    json_object_set_new(c->out, "answer", json_integer((json_int_t)result));
    json_object_set_new(c->out, "expected", json_integer((json_int_t)want));
    return result == want;
}

const bench_kernel bench_squares = {
    .desc = &bench_squares_desc,
    .run = squares_run,
    .verify = squares_verify,
};
#endif
