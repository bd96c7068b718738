/* nqueens.c — count the placements of n non-attacking queens on an n x n board.
 *
 * A task at row j holds an n x n buffer of child boards (one row of n bytes per column it
 * tries): for each column i it copies its own board's first j entries into row i, sets
 * entry j to i, checks the prefix for conflicts, and forks the valid children; then one
 * join and the sum of the children's counts.  A task at row n returns 1.  The paper's size
 * is n = 14 (365,596 solutions).  Checked against the known counts for n = 1..18. */
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "bench/bench.h"
#include "kernels/inline.h"

/* ---- what the harness knows of nqueens (bench/options.h) --------------------------------- */
enum { NQUEENS_OPT_N };
static const bench_opt nqueens_opts[] = {
    [NQUEENS_OPT_N] = {"n", BENCH_INT, "14", 1, NQ_MAX, 0, NULL, "board size"},
    {0},
};

/* The number of placements of n queens, n = 0..NQ_MAX. */
static const int64_t known[NQ_MAX + 1] = {0,     1,      0,       0,        2,         10,         4,
                                          40,    92,     352,     724,      2680,      14200,      73712,
                                          365596, 2279184, 14772512, 95815104, 666090624};

static int nqueens_answer(const bench_vals *v, double *out) {
    int64_t n = v->i[NQUEENS_OPT_N];
    *out = n >= 0 && n <= NQ_MAX ? (double)known[n] : NAN;
    return 0;
}

static double nqueens_serial_s(const bench_vals *v, int serial) {
    (void)serial;
    return 0.0077 * pow(5.0, v->d[NQUEENS_OPT_N] - 10);
}

static const bench_paper nqueens_paper[] = {
    {"n=14", "linear scaling (Fig. 5)"},
    {NULL, NULL},
};

const bench_desc bench_nqueens_desc = {
    .name = "nqueens",
    .summary = "count the solutions of the n-queens problem (fork every valid placement)",
    .opts = nqueens_opts,
    .answer = nqueens_answer,
    .model = {.serial_s = nqueens_serial_s, .runtime = 1.2, .omp = 3},
    .paper = nqueens_paper,
    .small = (const char *const[]){"n=1", "n=8", "n=10", NULL},
};

#if !BENCH_DESCRIBE_ONLY
static int64_t result;

#define conflict nqueens_conflict

/* ---- serial projection ------------------------------------------------------------------ */
#if defined(FK_BASELINE_SERIAL)
__attribute__((noinline)) static int64_t nqueens_serial(int j, const char *board, int n) {
    if (j == n)
        return 1;
    char buf[NQ_MAX * NQ_MAX];
    int64_t sum = 0;
    for (int i = 0; i < n; i++) {
        char *child = buf + i * n;
        memcpy(child, board, (size_t)j);
        child[j] = (char)i;
        if (!conflict(child, j))
            sum += nqueens_serial(j + 1, child, n);
    }
    return sum;
}

static void nqueens_run(bench_ctx *c) {
    char empty[NQ_MAX] = {0};
    result = nqueens_serial(0, empty, (int)c->i[NQUEENS_OPT_N]);
}

/* ---- a peer runtime (kernels/peer.h) -------------------------------------------------------- */
#elif defined(FK_BASELINE_PEER)
static void nqueens_run(bench_ctx *c) { result = nqueens_peer((int)c->i[NQUEENS_OPT_N]); }

/* ---- TBB (kernels/tbb.cpp) ------------------------------------------------------------------ */
#elif defined(FK_BASELINE_TBB)
static void nqueens_run(bench_ctx *c) { result = nqueens_tbb((int)c->i[NQUEENS_OPT_N]); }

/* ---- OpenMP tasks ----------------------------------------------------------------------- */
#elif defined(FK_BASELINE_OMP)
static int64_t nqueens_omp(int j, const char *board, int n) {
    if (j == n)
        return 1;
    char buf[NQ_MAX * NQ_MAX];
    int64_t res[NQ_MAX];
    for (int i = 0; i < n; i++) {
        char *child = buf + i * n;
        memcpy(child, board, (size_t)j);
        child[j] = (char)i;
        res[i] = 0;
        if (!conflict(child, j)) {
#pragma omp task shared(res) firstprivate(child, i)
            res[i] = nqueens_omp(j + 1, child, n);
        }
    }
#pragma omp taskwait
    int64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += res[i];
    return sum;
}

static void nqueens_run(bench_ctx *c) {
    char empty[NQ_MAX] = {0};
    int n = (int)c->i[NQUEENS_OPT_N];
#pragma omp parallel
#pragma omp single
    result = nqueens_omp(0, empty, n);
}

/* ---- forkscope ----------------------------------------------------------------------------- */
#else
typedef struct {
    fk_frame fk;
    int i;
    char *buf;    /* n x n child boards, on the frame stack (FK_ALLOC) */
    int64_t *res; /* the children's counts, in the same block */
} nq_frame;

FK_TASK(nqueens, int64_t, nq_frame *f, (int, j), (const char *, board), (int, n)) {
    if (j == n)
        FK_RETURN(1);
    FK_BEGIN(f);
    f->res = FK_ALLOC(int64_t, (size_t)n + ((size_t)n * (size_t)n + 7) / 8);
    f->buf = (char *)(f->res + n);
    for (int i = 0; i < n; i++) {
        char *child = f->buf + i * n;
        memcpy(child, board, (size_t)j);
        child[j] = (char)i;
        f->res[i] = 0;
    }
    /* The loop below forks: its counter lives in the frame (the parameters come back by
     * themselves after a steal; C locals do not). */
    for (f->i = 0; f->i < n; f->i++) {
        char *child = f->buf + f->i * n;
        if (!conflict(child, j))
            FK_FORK_AT(&f->res[f->i], nqueens, j + 1, child, n);
    }
    FK_JOIN();
    int64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += f->res[i];
    FK_FREE(f->res);
    FK_RETURN(sum);
} FK_END

static void nqueens_run(bench_ctx *c) {
    static const char empty[NQ_MAX];
    if (FK_RUN(c->pool, &result, nqueens, 0, empty, (int)c->i[NQUEENS_OPT_N]))
        result = -1;
}
#endif

static int nqueens_verify(bench_ctx *c) {
    int n = (int)c->i[NQUEENS_OPT_N];
    json_object_set_new(c->out, "answer", json_integer(result));
    json_object_set_new(c->out, "expected", json_integer(known[n]));
    return result == known[n];
}

const bench_kernel bench_nqueens = {
    .desc = &bench_nqueens_desc,
    .run = nqueens_run,
    .verify = nqueens_verify,
    BENCH_PEER_VERSION(nqueens_peer)
};
#endif
