/* fib.c — recursive Fibonacci: fib(n) = n for n < 2, else fork fib(n-1), call fib(n-2),
 * join, return the sum.  The paper's size is n = 42 (267,914,296; ~867 million tasks).
 * The answer is checked against an iterative computation. */
#include <math.h>

#include "bench/bench.h"

/* ---- what the harness knows of fib (bench/options.h) ------------------------------------- */
enum { FIB_OPT_N };
static const bench_opt fib_opts[] = {
    [FIB_OPT_N] = {"n", BENCH_INT, "42", 0, 92, 0, NULL, "compute fib(n)"},
    {0},
};

/* fib(n), iteratively: the answer every version is checked against. */
static uint64_t fib_value(int n) {
    uint64_t a = 0, b = 1;
    for (int i = 0; i < n; i++) {
        uint64_t t = a + b;
        a = b;
        b = t;
    }
    return a;
}

static int fib_answer(const bench_vals *v, double *out) {
    *out = (double)fib_value((int)v->i[FIB_OPT_N]);
    return 0;
}

/* The calls of a run of fib(n): fib(n) calls fib 2 fib(n + 1) - 1 times. */
static double fib_calls(int64_t n) { return 2 * (double)fib_value((int)n + 1) - 1; }

static double fib_serial_s(const bench_vals *v, int serial) {
    (void)serial;
    return 0.02 * pow(1.6180339887, v->d[FIB_OPT_N] - 30);
}

static const bench_paper fib_paper[] = {
    {"n=42", "7.5x faster than TBB, 24x than OpenMP; T1/Ts = 8.8"},
    {NULL, NULL},
};

const bench_desc bench_fib_desc = {
    .name = "fib",
    .summary = "recursive Fibonacci (fork fib(n-1), call fib(n-2))",
    .opts = fib_opts,
    .flags = BENCH_ICOUNT,
    .answer = fib_answer,
    .icount_calls = fib_calls,
    .model = {.serial_s = fib_serial_s, .runtime = 2.5, .omp = 40},
    .paper = fib_paper,
    .small = (const char *const[]){"n=0", "n=1", "n=20", NULL},
};

#if !BENCH_DESCRIBE_ONLY
static int64_t result;

/* ---- serial projection ----------------------------------------------------------------------
 * Both calls must really happen: noinline keeps gcc from unrolling the recursion into
 * itself, and the empty asm on the second result keeps that call out of tail position, so
 * that gcc cannot turn it into a loop with an accumulator (it does, without the asm). */
#if defined(FK_BASELINE_SERIAL)
__attribute__((noinline)) static int64_t fib_serial(int n) {
    if (n < 2)
        return n;
    int64_t a = fib_serial(n - 1);
    int64_t b = fib_serial(n - 2);
    __asm__ volatile("" : "+r"(b));
    return a + b;
}

static void fib_run(bench_ctx *c) { result = fib_serial((int)c->i[FIB_OPT_N]); }

/* ---- a peer runtime (kernels/peer.h) -------------------------------------------------------- */
#elif defined(FK_BASELINE_PEER)
static void fib_run(bench_ctx *c) { result = fib_peer((int)c->i[FIB_OPT_N]); }

/* ---- TBB (kernels/tbb.cpp) ------------------------------------------------------------------ */
#elif defined(FK_BASELINE_TBB)
static void fib_run(bench_ctx *c) { result = fib_tbb((int)c->i[FIB_OPT_N]); }

/* ---- OpenMP tasks -------------------------------------------------------------------------- */
#elif defined(FK_BASELINE_OMP)
static int64_t fib_omp(int n) {
    if (n < 2)
        return n;
    int64_t a, b;
#pragma omp task shared(a)
    a = fib_omp(n - 1);
    b = fib_omp(n - 2);
#pragma omp taskwait
    return a + b;
}

static void fib_run(bench_ctx *c) {
    int n = (int)c->i[FIB_OPT_N];
#pragma omp parallel
#pragma omp single
    result = fib_omp(n);
}

/* ---- forkscope ------------------------------------------------------------------------------ */
#else
typedef struct {
    fk_frame fk;
    int64_t a, b;
} fib_frame;

FK_TASK(fib, int64_t, fib_frame *f, (int, n)) {
    if (n < 2)
        FK_RETURN(n);
    FK_BEGIN(f);
    FK_FORK(a, fib, n - 1);
    FK_CALL(b, fib, n - 2);
    FK_JOIN();
    FK_RETURN(f->a + f->b);
} FK_END

static void fib_run(bench_ctx *c) {
    if (FK_RUN(c->pool, &result, fib, (int)c->i[FIB_OPT_N]))
        result = -1;
}
#endif

static int fib_verify(bench_ctx *c) {
    uint64_t a = fib_value((int)c->i[FIB_OPT_N]);
    json_object_set_new(c->out, "answer", json_integer(result));
    json_object_set_new(c->out, "expected", json_integer((json_int_t)a));
    return result == (int64_t)a;
}

const bench_kernel bench_fib = {
    .desc = &bench_fib_desc,
    .run = fib_run,
    .verify = fib_verify,
    BENCH_PEER_VERSION(fib_peer)
};
#endif
