/* lace.c — the Lace peer (https://github.com/trolando/lace): the kernels as Lace tasks, written
 * as Lace's own benchmarks write fib (SPAWN the first child, CALL the last, SYNC), with the
 * per-node work of the other versions (kernels/inline.h, uts/tree.h).  Built against the
 * user's checkout by `make peers PEERS_DIR=DIR` (DIR/lace); no Lace code is in this project.
 * (UTS sums its children's results by value as they are synced, where the TBB and OpenMP
 * versions fill a heap array: the same tree and answer; the driver's JSON says which.)
 *
 * Lace runs child stealing with leapfrogging on native stacks (forkscope's child-native is the
 * same strategy): SYNC runs the spawned child itself unless it was stolen, and then steals from
 * the thief while it waits.  Tasks are synced in the reverse order of their spawns. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lace.h"

#include "bench/options.h"
#include "kernels/inline.h"
#include "kernels/peer.h"

const char bench_peer_name[] = "lace";
const char bench_peer_what[] = "Lace (van Dijk & van de Pol): child stealing, leapfrogging, native stacks";

/* The deque holds this many tasks per worker. */
#define LACE_DEQUE_TASKS 1000000

static unsigned lace_started;

void bench_peer_start(unsigned workers) {
    /* The deque holds this many tasks per worker (Lace's benchmarks use 100,000; UTS T3XXL
     * nests 99,049 levels deep). */
    lace_set_stacksize((size_t)512 << 20);
    lace_start(workers, LACE_DEQUE_TASKS);
    lace_started = 1;
    bench_peer_noop(); /* Lace's first RUN sets up its workers (~0.3 s here): outside timing */
}

void bench_peer_stop(void) {
    if (lace_started)
        lace_stop();
    lace_started = 0;
}

TASK_1(int, noop, int, x) { return x; }
void bench_peer_noop(void) { (void)RUN(noop, 0); }

/* As in the serial projection (kernels/fib.c), an empty asm on the children's results keeps
 * the last call out of tail position: without it gcc turns the recursion into a loop with an
 * accumulator, and half of fib's calls vanish (Lace's own fib benchmark runs at 0.55x the
 * serial projection's time here for that reason).  With SPAWN/CALL/SYNC the last call is the
 * one SYNC makes when the spawned child was not stolen. */

/* ---- fib ------------------------------------------------------------------------------------- */
TASK_1(int64_t, fib, int, n) {
    if (n < 2)
        return n;
    SPAWN(fib, n - 1);
    int64_t b = CALL(fib, n - 2);
    __asm__ volatile("" : "+r"(b));
    int64_t a = SYNC(fib); /* (its fast path ends in a call of fib: the last call here) */
    __asm__ volatile("" : "+r"(a));
    return a + b;
}
int64_t fib_peer(int n) { return RUN(fib, n); }

/* ---- integrate ------------------------------------------------------------------------------- */
static double eps;
TASK_5(double, integrate, double, x1, double, y1, double, x2, double, y2, double, area) {
    double half = (x2 - x1) / 2, x0 = x1 + half, y0 = integrate_fn(x0);
    double al = (y1 + y0) / 2 * half, ar = (y0 + y2) / 2 * half;
    if (fabs(al + ar - area) < eps)
        return al + ar;
    SPAWN(integrate, x1, y1, x0, y0, al);
    double b = CALL(integrate, x0, y0, x2, y2, ar);
    __asm__ volatile("" : "+x"(b));
    double a = SYNC(integrate);
    return a + b;
}
double integrate_peer(double x1, double y1, double x2, double y2, double area, double e) {
    eps = e;
    return RUN(integrate, x1, y1, x2, y2, area);
}

/* ---- matmul: r (+)= a b on n x n blocks of row stride s, 4 products in parallel, twice -------- */
VOID_TASK_6(matmul, const float *, a, const float *, b, float *, r, int, n, int, s, int, add) {
    if (n <= MATMUL_BASE) {
        matmul_base(a, b, r, s, add);
        return;
    }
    int m = n / 2;
    size_t o01 = (size_t)m, o10 = (size_t)m * s, o11 = o10 + m;
    SPAWN(matmul, a, b, r, m, s, add);
    SPAWN(matmul, a, b + o01, r + o01, m, s, add);
    SPAWN(matmul, a + o10, b, r + o10, m, s, add);
    CALL(matmul, a + o10, b + o01, r + o11, m, s, add);
    SYNC(matmul);
    SYNC(matmul);
    SYNC(matmul);
    SPAWN(matmul, a + o01, b + o10, r, m, s, 1);
    SPAWN(matmul, a + o01, b + o11, r + o01, m, s, 1);
    SPAWN(matmul, a + o11, b + o10, r + o10, m, s, 1);
    CALL(matmul, a + o11, b + o11, r + o11, m, s, 1);
    SYNC(matmul);
    SYNC(matmul);
    SYNC(matmul);
}
void matmul_peer(const float *a, const float *b, float *r, int n, int s) { RUN(matmul, a, b, r, n, s, 0); }

/* ---- nqueens: fork every valid placement of queen j ---------------------------------------- */
TASK_3(int64_t, nqueens, int, j, const char *, board, int, n) {
    if (j == n)
        return 1;
    char buf[NQ_MAX * NQ_MAX];
    int k = 0;
    for (int i = 0; i < n; i++) {
        char *child = buf + i * n;
        memcpy(child, board, (size_t)j);
        child[j] = (char)i;
        if (!nqueens_conflict(child, j)) {
            SPAWN(nqueens, j + 1, child, n);
            k++;
        }
    }
    int64_t sum = 0;
    while (k--)
        sum += SYNC(nqueens);
    return sum;
}
int64_t nqueens_peer(int n) {
    char empty[NQ_MAX] = {0};
    return RUN(nqueens, 0, empty, n);
}

/* ---- skynet: spawn the first fanout - 1 children, call the last, sync them all ----------------- */
TASK_3(int64_t, skynet, int64_t, num, int64_t, size, int, fanout) {
    if (size == 1)
        return num;
    int64_t part = size / fanout;
    for (int i = 0; i < fanout - 1; i++)
        SPAWN(skynet, num + i * part, part, fanout);
    int64_t sum = CALL(skynet, num + (fanout - 1) * part, part, fanout);
    for (int i = 0; i < fanout - 1; i++)
        sum += SYNC(skynet);
    return sum;
}
int64_t skynet_peer(int64_t num, int64_t size, int fanout) { return RUN(skynet, num, size, fanout); }

/* ---- UTS: spawn all children but the last, call the last --------------------------------------- */
static const uts_params *tree;
TASK_2(uts_result, uts_visit, uts_state, s, int, height) {
    int n = uts_num_children(tree, &s, height);
    if (n == 0)
        return uts_result_leaf(height);
    for (int i = 0; i < n - 1; i++) {
        uts_state child;
        uts_child(tree, &child, &s, i);
        SPAWN(uts_visit, child, height + 1);
    }
    uts_state last;
    uts_child(tree, &last, &s, n - 1);
    uts_result total = uts_result_inner(height);
    uts_result r = CALL(uts_visit, last, height + 1);
    uts_result_add(&total, &r);
    for (int i = 0; i < n - 1; i++) {
        r = SYNC(uts_visit);
        uts_result_add(&total, &r);
    }
    return total;
}
uts_result uts_peer(const uts_params *p) {
    uts_state root;
    uts_root(p, &root);
    tree = p;
    return RUN(uts_visit, root, 0);
}

/* ---- the M:N workloads (kernels/mn.h): in one root task, each round's tasks spawned by it, then
 * as many SYNCs; mergesort as fib -------------------------------------------------------------- */
const char bench_peer_mn_model[] = "fork-join: Lace SPAWN, SYNC";

VOID_TASK_3(mn_leaf, mn_body *, body, void *, ctx, size_t, i) { body(ctx, i); }
/* (all of a round's tasks are in the deque at once: a round larger than the deque is
 * refused, exit 2, rather than left to Lace's own exit) */
VOID_TASK_3(mn_rounds, mn_next *, next, mn_body *, body, void *, ctx) {
    for (size_t n; (n = next(ctx)) != 0;) {
        if (n >= LACE_DEQUE_TASKS) {
            fprintf(stderr, "lace: a round of %zu tasks spawned by one task: the deque holds fewer (%d)\n", n,
                    LACE_DEQUE_TASKS);
            exit(2);
        }
        for (size_t i = 0; i < n; i++)
            SPAWN(mn_leaf, body, ctx, i);
        for (size_t i = 0; i < n; i++)
            SYNC(mn_leaf);
    }
}
void mn_rounds_peer(mn_next *next, mn_body *body, void *ctx) { RUN(mn_rounds, next, body, ctx); }

VOID_TASK_4(msort, int32_t *, a, int32_t *, tmp, size_t, n, size_t, cutoff) {
    if (n <= cutoff) {
        msort_serial(a, tmp, n);
        return;
    }
    size_t mid = n / 2;
    SPAWN(msort, a, tmp, mid, cutoff);
    CALL(msort, a + mid, tmp + mid, n - mid, cutoff);
    SYNC(msort);
    msort_merge(a, tmp, n, mid);
}
void msort_peer(int32_t *a, int32_t *tmp, size_t n, size_t cutoff) { RUN(msort, a, tmp, n, cutoff); }
