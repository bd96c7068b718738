/* matmul.c — R = A B for n x n float matrices (n a power of two), by recursive blocking.
 *
 * matmul(A, B, R, n, s, add) splits each matrix into 2 x 2 blocks of size n/2 (row stride
 * s).  Phase 1 forks R00 (+)= A00 B00, R01 (+)= A00 B01, R10 (+)= A10 B00 and calls
 * R11 (+)= A10 B01, then joins; phase 2 does R00 += A01 B10, R01 += A01 B11, R10 += A11 B10,
 * R11 += A11 B11 the same way.  "(+)=" overwrites when add is false (the root), accumulates
 * otherwise.  A block row of 16 floats fills a 64-byte line: there the base case sums
 * A[i s + k] B[k s + j] over k in a float and stores or adds it.  The paper's size is
 * n = 8192.  A and B are uniform in [0, 1) from a seeded generator.  The check compares
 * against a naive product in double: every entry when n <= 256, else 256 entries chosen by
 * the seed; the largest relative error must stay below the stated tolerance. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "kernels/inline.h"

#define BASE MATMUL_BASE
#define CHECK_ALL_UPTO 256
#define CHECK_SAMPLES 256
#define TOLERANCE 1e-5

/* ---- what the harness knows of matmul (bench/options.h) ---------------------------------- */
enum { MATMUL_OPT_N, MATMUL_OPT_SEED };
static const bench_opt matmul_opts[] = {
    [MATMUL_OPT_N] = {"n", BENCH_INT, "8192", 16, 65536, 1, NULL, "matrix size (a power of two, at least 16)"},
    [MATMUL_OPT_SEED] = {"seed", BENCH_INT, "1", 0, 4294967295.0, 0, NULL, "seed of the inputs"},
    {0},
};

static double matmul_serial_s(const bench_vals *v, int serial) {
    (void)serial;
    double n = v->d[MATMUL_OPT_N];
    return 7e-10 * n * n * n;
}

static const bench_paper matmul_paper[] = {
    {"n=8192", "scales much better than the child stealers (Fig. 5)"},
    {NULL, NULL},
};

const bench_desc bench_matmul_desc = {
    .name = "matmul",
    .summary = "recursive blocked matrix multiplication of n x n floats",
    .opts = matmul_opts,
    /* no .answer: a matrix, checked entry by entry against a product in double */
    .memory_is_input = "its matrices dominate its memory; the paper left it out of its memory figure",
    .model = {.serial_s = matmul_serial_s, .runtime = 1.0, .omp = 1.1, .untimed = 2 /* inputs, verification */},
    .paper = matmul_paper,
    .small = (const char *const[]){"n=16", "n=128", "n=512 seed=7" /* the full check (n <= 256) and the sampled one */, NULL},
};

#if !BENCH_DESCRIBE_ONLY
static float *A, *B, *R;

#define base matmul_base

/* ---- serial projection ------------------------------------------------------------------ */
#if defined(FK_BASELINE_SERIAL)
static void mm_serial(const float *a, const float *b, float *r, int n, int s, int add) {
    if (n <= BASE) {
        base(a, b, r, s, add);
        return;
    }
    int m = n / 2;
    size_t o01 = (size_t)m, o10 = (size_t)m * s, o11 = o10 + m;
    mm_serial(a, b, r, m, s, add);
    mm_serial(a, b + o01, r + o01, m, s, add);
    mm_serial(a + o10, b, r + o10, m, s, add);
    mm_serial(a + o10, b + o01, r + o11, m, s, add);
    mm_serial(a + o01, b + o10, r, m, s, 1);
    mm_serial(a + o01, b + o11, r + o01, m, s, 1);
    mm_serial(a + o11, b + o10, r + o10, m, s, 1);
    mm_serial(a + o11, b + o11, r + o11, m, s, 1);
}

static void matmul_run(bench_ctx *c) {
    int n = (int)c->i[MATMUL_OPT_N];
    mm_serial(A, B, R, n, n, 0);
}

/* ---- a peer runtime (kernels/peer.h) -------------------------------------------------------- */
#elif defined(FK_BASELINE_PEER)
static void matmul_run(bench_ctx *c) {
    int n = (int)c->i[MATMUL_OPT_N];
    matmul_peer(A, B, R, n, n);
}

/* ---- TBB (kernels/tbb.cpp) ------------------------------------------------------------------ */
#elif defined(FK_BASELINE_TBB)
static void matmul_run(bench_ctx *c) {
    int n = (int)c->i[MATMUL_OPT_N];
    matmul_tbb(A, B, R, n, n);
}

/* ---- OpenMP tasks ----------------------------------------------------------------------- */
#elif defined(FK_BASELINE_OMP)
static void mm_omp(const float *a, const float *b, float *r, int n, int s, int add) {
    if (n <= BASE) {
        base(a, b, r, s, add);
        return;
    }
    int m = n / 2;
    size_t o01 = (size_t)m, o10 = (size_t)m * s, o11 = o10 + m;
#pragma omp task
    mm_omp(a, b, r, m, s, add);
#pragma omp task
    mm_omp(a, b + o01, r + o01, m, s, add);
#pragma omp task
    mm_omp(a + o10, b, r + o10, m, s, add);
    mm_omp(a + o10, b + o01, r + o11, m, s, add);
#pragma omp taskwait
#pragma omp task
    mm_omp(a + o01, b + o10, r, m, s, 1);
#pragma omp task
    mm_omp(a + o01, b + o11, r + o01, m, s, 1);
#pragma omp task
    mm_omp(a + o11, b + o10, r + o10, m, s, 1);
    mm_omp(a + o11, b + o11, r + o11, m, s, 1);
#pragma omp taskwait
}

static void matmul_run(bench_ctx *c) {
    int n = (int)c->i[MATMUL_OPT_N];
#pragma omp parallel
#pragma omp single
    mm_omp(A, B, R, n, n, 0);
}

/* ---- forkscope ----------------------------------------------------------------------------- */
#else
typedef struct {
    fk_frame fk;
} mm_frame;

/* Block offsets (m = n / 2). */
#define O01 ((size_t)(n / 2))
#define O10 ((size_t)(n / 2) * (size_t)s)
#define O11 (O10 + O01)

FK_TASK(matmul, void, mm_frame *f, (const float *, a), (const float *, b), (float *, r), (int, n), (int, s),
        (int, add)) {
    if (n <= BASE) {
        base(a, b, r, s, add);
        FK_RETURN_VOID();
    }
    FK_BEGIN(f); /* (a frame with nothing of its own: the parameters come back by themselves) */
    FK_FORK_VOID(matmul, a, b, r, n / 2, s, add);
    FK_FORK_VOID(matmul, a, b + O01, r + O01, n / 2, s, add);
    FK_FORK_VOID(matmul, a + O10, b, r + O10, n / 2, s, add);
    FK_CALL_VOID(matmul, a + O10, b + O01, r + O11, n / 2, s, add);
    FK_JOIN();
    FK_FORK_VOID(matmul, a + O01, b + O10, r, n / 2, s, 1);
    FK_FORK_VOID(matmul, a + O01, b + O11, r + O01, n / 2, s, 1);
    FK_FORK_VOID(matmul, a + O11, b + O10, r + O10, n / 2, s, 1);
    FK_CALL_VOID(matmul, a + O11, b + O11, r + O11, n / 2, s, 1);
    FK_JOIN();
    FK_RETURN_VOID();
} FK_END

static void matmul_run(bench_ctx *c) {
    int n = (int)c->i[MATMUL_OPT_N];
    if (FK_RUN(c->pool, NULL, matmul, A, B, R, n, n, 0))
        R[0] = NAN;
}
#endif

/* splitmix64: the inputs depend only on the seed. */
static uint64_t next_u64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static float unit(uint64_t *x) { return (float)(next_u64(x) >> 40) * (1.0f / 16777216.0f); }

static int matmul_prepare(bench_ctx *c) {
    size_t n = (size_t)c->i[MATMUL_OPT_N], bytes = n * n * sizeof(float);
    A = aligned_alloc(64, bytes);
    B = aligned_alloc(64, bytes);
    R = aligned_alloc(64, bytes);
    if (!A || !B || !R) {
        fprintf(stderr, "matmul: cannot allocate three %zu x %zu matrices (%zu MiB)\n", n, n, 3 * bytes >> 20);
        return -1;
    }
    uint64_t x = (uint64_t)c->i[MATMUL_OPT_SEED];
    for (size_t k = 0; k < n * n; k++)
        A[k] = unit(&x);
    for (size_t k = 0; k < n * n; k++)
        B[k] = unit(&x);
    memset(R, 0, bytes);
    return 0;
}

static double entry_error(size_t n, size_t i, size_t j) {
    double want = 0;
    for (size_t k = 0; k < n; k++)
        want += (double)A[i * n + k] * (double)B[k * n + j];
    return fabs((double)R[i * n + j] - want) / (want > 0 ? want : 1);
}

static int matmul_verify(bench_ctx *c) {
    size_t n = (size_t)c->i[MATMUL_OPT_N], checked = 0;
    double worst = 0;
    if (n <= CHECK_ALL_UPTO) {
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++, checked++) {
                double e = entry_error(n, i, j);
                worst = e > worst || isnan(e) ? e : worst;
            }
    } else {
        uint64_t x = (uint64_t)c->i[MATMUL_OPT_SEED] ^ 0xc0ffee;
        for (; checked < CHECK_SAMPLES; checked++) {
            double e = entry_error(n, next_u64(&x) % n, next_u64(&x) % n);
            worst = e > worst || isnan(e) ? e : worst;
        }
    }
    json_object_set_new(c->out, "answer", json_real(R[0]));
    json_object_set_new(c->out, "max_rel_error", json_real(worst));
    json_object_set_new(c->out, "tolerance", json_real(TOLERANCE));
    json_object_set_new(c->out, "entries_checked", json_integer((json_int_t)checked));
    return worst <= TOLERANCE;
}

static void matmul_cleanup(bench_ctx *c) {
    (void)c;
    free(A);
    free(B);
    free(R);
    A = B = R = NULL;
}

const bench_kernel bench_matmul = {
    .desc = &bench_matmul_desc,
    .prepare = matmul_prepare,
    .run = matmul_run,
    .verify = matmul_verify,
    .cleanup = matmul_cleanup,
    BENCH_PEER_VERSION(matmul_peer)
};
#endif
