/* integrate.c — adaptive trapezoid integration of f(x) = (x^2 + 1) x over [0, n].
 *
 * integrate(x1, y1, x2, y2, area): halve the interval; if the two halves' trapezoids agree
 * with the parent's estimate to within eps, return their sum; else fork the left half, call
 * the right half, join and return the sum.  The root (0, f(0), n, f(n), 0) always splits.
 * The paper's size: n = 10^4, eps = 1e-9 (350,009,975 calls).  The answer is checked
 * against the closed form F(n) = n^2 (n^2 + 2) / 4: the sum is formed in the same order by
 * every form, so every form gives the same double. */
#include <math.h>

#include "bench/bench.h"
#include "kernels/inline.h"

/* ---- what the harness knows of integrate (bench/options.h) ------------------------------- */
enum { INTEGRATE_OPT_N, INTEGRATE_OPT_EPS };
static const bench_opt integrate_opts[] = {
    [INTEGRATE_OPT_N] = {"n", BENCH_INT, "10000", 1, 1e6, 0, NULL, "integrate over [0, n]"},
    [INTEGRATE_OPT_EPS] = {"eps", BENCH_DOUBLE, "1e-9", 1e-15, 1e6, 0, NULL, "tolerance of each refinement"},
    {0},
};

/* The closed form F(n) = n^2 (n^2 + 2) / 4. */
static double integrate_exact(double n) { return n * n * (n * n + 2) / 4; }

static int integrate_answer(const bench_vals *v, double *out) {
    *out = integrate_exact(v->d[INTEGRATE_OPT_N]);
    return 0;
}

static double integrate_serial_s(const bench_vals *v, int serial) {
    (void)serial;
    return 0.15 * pow(v->d[INTEGRATE_OPT_N] / 1000, 1.44) * pow(v->d[INTEGRATE_OPT_EPS] / 1e-9, -0.41);
}

static const bench_paper integrate_paper[] = {
    {"n=10000", "4.5x faster than TBB, 14x than OpenMP"},
    {NULL, NULL},
};

const bench_desc bench_integrate_desc = {
    .name = "integrate",
    .summary = "adaptive trapezoid integration of (x^2+1)x over [0, n]",
    .opts = integrate_opts,
    .answer = integrate_answer,
    .answer_rel_tol = 1e-6, /* (a command's output rounds; the drivers check to eps per interval) */
    .model = {.serial_s = integrate_serial_s, .runtime = 2, .omp = 20},
    .paper = integrate_paper,
    .small = (const char *const[]){"n=300 eps=1e-9", "n=10000 eps=1e-3", NULL},
};

#if !BENCH_DESCRIBE_ONLY
static double result, eps;

#define fn integrate_fn

/* The check's reference: the serial projection's arithmetic, counting the intervals it
 * accepts (each within eps of its parent's estimate: the error bound grows with their
 * number). */
static double integrate_check(double x1, double y1, double x2, double y2, double area, uint64_t *leaves) {
    double half = (x2 - x1) / 2, x0 = x1 + half, y0 = fn(x0);
    double al = (y1 + y0) / 2 * half, ar = (y0 + y2) / 2 * half;
    if (fabs(al + ar - area) < eps) {
        ++*leaves;
        return al + ar;
    }
    double a = integrate_check(x1, y1, x0, y0, al, leaves);
    double b = integrate_check(x0, y0, x2, y2, ar, leaves);
    return a + b;
}

#if defined(FK_BASELINE_SERIAL)
/* ---- serial projection ------------------------------------------------------------------ */
__attribute__((noinline)) static double integrate_serial(double x1, double y1, double x2, double y2, double area) {
    double half = (x2 - x1) / 2, x0 = x1 + half, y0 = fn(x0);
    double al = (y1 + y0) / 2 * half, ar = (y0 + y2) / 2 * half;
    if (fabs(al + ar - area) < eps)
        return al + ar;
    double a = integrate_serial(x1, y1, x0, y0, al);
    double b = integrate_serial(x0, y0, x2, y2, ar);
    __asm__ volatile("" : "+x"(b)); /* keeps the second call a call (see fib.c) */
    return a + b;
}

static void integrate_run(bench_ctx *c) {
    double n = (double)c->i[INTEGRATE_OPT_N];
    result = integrate_serial(0, fn(0), n, fn(n), 0);
}

/* ---- a peer runtime (kernels/peer.h) -------------------------------------------------------- */
#elif defined(FK_BASELINE_PEER)
static void integrate_run(bench_ctx *c) {
    double n = (double)c->i[INTEGRATE_OPT_N];
    result = integrate_peer(0, fn(0), n, fn(n), 0, eps);
}

/* ---- TBB (kernels/tbb.cpp) ------------------------------------------------------------------ */
#elif defined(FK_BASELINE_TBB)
static void integrate_run(bench_ctx *c) {
    double n = (double)c->i[INTEGRATE_OPT_N];
    result = integrate_tbb(0, fn(0), n, fn(n), 0, eps);
}

/* ---- OpenMP tasks ----------------------------------------------------------------------- */
#elif defined(FK_BASELINE_OMP)
static double integrate_omp(double x1, double y1, double x2, double y2, double area) {
    double half = (x2 - x1) / 2, x0 = x1 + half, y0 = fn(x0);
    double al = (y1 + y0) / 2 * half, ar = (y0 + y2) / 2 * half;
    if (fabs(al + ar - area) < eps)
        return al + ar;
    double a, b;
#pragma omp task shared(a)
    a = integrate_omp(x1, y1, x0, y0, al);
    b = integrate_omp(x0, y0, x2, y2, ar);
#pragma omp taskwait
    return a + b;
}

static void integrate_run(bench_ctx *c) {
    double n = (double)c->i[INTEGRATE_OPT_N];
#pragma omp parallel
#pragma omp single
    result = integrate_omp(0, fn(0), n, fn(n), 0);
}

/* ---- forkscope ----------------------------------------------------------------------------- */
#else
typedef struct {
    fk_frame fk;
    double a, b;
    double x0, y0, ar; /* locals needed after the fork (the parameters come back by themselves) */
} integrate_frame;

FK_TASK(integrate, double, integrate_frame *f, (double, x1), (double, y1), (double, x2), (double, y2),
        (double, area)) {
    double half = (x2 - x1) / 2, x0 = x1 + half, y0 = fn(x0);
    double al = (y1 + y0) / 2 * half, ar = (y0 + y2) / 2 * half;
    if (fabs(al + ar - area) < eps)
        FK_RETURN(al + ar);
    FK_BEGIN(f);
    f->x0 = x0;
    f->y0 = y0;
    f->ar = ar;
    FK_FORK(a, integrate, x1, y1, x0, y0, al);
    FK_CALL(b, integrate, f->x0, f->y0, x2, y2, f->ar);
    FK_JOIN();
    FK_RETURN(f->a + f->b);
} FK_END

static void integrate_run(bench_ctx *c) {
    double n = (double)c->i[INTEGRATE_OPT_N];
    if (FK_RUN(c->pool, &result, integrate, 0, fn(0), n, fn(n), 0))
        result = NAN;
}
#endif

static int integrate_prepare(bench_ctx *c) {
    eps = c->d[INTEGRATE_OPT_EPS];
    return 0;
}

static int integrate_verify(bench_ctx *c) {
    double n = (double)c->i[INTEGRATE_OPT_N];
    double exact = integrate_exact(n);
    /* The serial projection in doubles is the reference answer (the tree of refinements and
     * the order of additions are the same in every form); it must also be within eps per
     * accepted interval of the closed form (an interval is accepted when its two halves
     * agree with it to eps; their error is about a third of that), plus the rounding of
     * the integral's size (doubles near 1e15 are 0.25 apart).  (A tolerance of eps alone
     * failed every version below n = 150: n = 100 is 3.9e-5 off over 195,000 intervals.) */
    uint64_t leaves = 0;
    double serial = integrate_check(0, fn(0), n, fn(n), 0, &leaves);
    double err = fabs(result - exact), tol = eps * (double)leaves + 1e-12 * fabs(exact);
    json_object_set_new(c->out, "answer", json_real(result));
    json_object_set_new(c->out, "expected", json_real(exact));
    json_object_set_new(c->out, "error", json_real(err));
    json_object_set_new(c->out, "tolerance", json_real(tol));
    return result == serial && err <= tol;
}

const bench_kernel bench_integrate = {
    .desc = &bench_integrate_desc,
    .prepare = integrate_prepare,
    .run = integrate_run,
    .verify = integrate_verify,
    BENCH_PEER_VERSION(integrate_peer)
};
#endif
