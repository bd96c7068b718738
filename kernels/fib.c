/* fib.c — recursive Fibonacci: fib(n) = n for n < 2, else fork fib(n-1), call fib(n-2),
 * join, return the sum.  The paper's size is n = 42 (267,914,296; ~867 million tasks).
 * The answer is checked against an iterative computation. */
#include "bench/bench.h"


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
    int n = (int)c->i[FIB_OPT_N];
    uint64_t a = 0, b = 1;
    for (int i = 0; i < n; i++) {
        uint64_t t = a + b;
        a = b;
        b = t;
    }
    json_object_set_new(c->out, "answer", json_integer(result));
    json_object_set_new(c->out, "expected", json_integer((json_int_t)a));
    return result == (int64_t)a;
}

const bench_kernel bench_fib = {
    .name = "fib",
    .summary = "recursive Fibonacci (fork fib(n-1), call fib(n-2))",
    .opts = bench_fib_opts,
    .run = fib_run,
    .verify = fib_verify,
};
