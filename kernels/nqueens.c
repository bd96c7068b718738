/* nqueens.c — count the placements of n non-attacking queens on an n x n board.
 *
 * A task at row j holds an n x n buffer of child boards (one row of n bytes per column it
 * tries): for each column i it copies its own board's first j entries into row i, sets
 * entry j to i, checks the prefix for conflicts, and forks the valid children; then one
 * join and the sum of the children's counts.  A task at row n returns 1.  The paper's size
 * is n = 14 (365,596 solutions).  Checked against the known counts for n = 1..18. */
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "kernels/inline.h"



#define known bench_nqueens_known

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
    .name = "nqueens",
    .summary = "count the solutions of the n-queens problem (fork every valid placement)",
    .opts = bench_nqueens_opts,
    .run = nqueens_run,
    .verify = nqueens_verify,
};
