/* fibril.c — the Fibril peer (https://github.com/chaoran/fibril; Yang & Mellor-Crummey, PPoPP
 * 2016): the kernels as Fibril functions, written as Fibril's own tests write fib
 * (fibril_init, fibril_fork of every child but the last, a plain call of the last,
 * fibril_join; nqueens forks every placement, as the other versions do), with the per-node work of the other versions (kernels/inline.h,
 * uts/tree.h).  Built against the user's checkout by `make peers PEERS_DIR=DIR` (DIR/fibril);
 * no Fibril code is in this project.  x86-64 only: Fibril switches stacks in x86-64 assembly,
 * and its fork sites are GCC nested functions.
 *
 * Fibril steals continuations on native stacks: the thief runs the stolen continuation on the
 * victim's frame with a fresh stack below it.  The calling thread is worker 0 (fibril_rt_init
 * turns it into one): the kernels run on it directly.  Two limits of Fibril are checked here
 * rather than left to corrupt memory: its deque holds 1000 frames (fibrili.h), so a fork may
 * not nest deeper (UTS T3 is 1,572 levels deep: refused when a path reaches the limit), and it
 * runs at most one worker per online CPU (it quietly lowers a larger count: refused). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <fibril.h>

#include "bench/options.h"
#include "kernels/inline.h"
#include "kernels/peer.h"

#if !defined(__x86_64__)
#error "Fibril runs on x86-64 only (its stack switching is x86-64 assembly)"
#endif

const char bench_peer_name[] = "fibril";
const char bench_peer_what[] = "Fibril (Yang & Mellor-Crummey): continuation stealing on native stacks";

/* Fibril's deque (fibrili.h: void *buff[1000]) holds one slot per fork that has not returned. */
#define FIBRIL_DEQUE_SLOTS 1000

static int started;

void bench_peer_start(unsigned workers) {
    if (fibril_rt_init((int)workers) != 0) {
        fprintf(stderr, "fibril: fibril_rt_init(%u) failed\n", workers);
        exit(2);
    }
    started = 1;
    if (fibril_rt_nprocs() != (int)workers) {
        fprintf(stderr,
                "fibril: asked for %u workers, Fibril started %d (it runs at most one per online CPU and "
                "lowers a larger count): refusing to report the run as %u workers\n",
                workers, fibril_rt_nprocs(), workers);
        exit(2);
    }
    bench_peer_noop(); /* the workers' first fork, outside timing */
}

void bench_peer_stop(void) {
    if (started)
        fibril_rt_exit();
    started = 0;
}

static int nothing(int x) { return x; }

fibril static int noop_fork(void) {
    int a;
    fibril_t fr;
    fibril_init(&fr);
    fibril_fork(&fr, &a, nothing, (0));
    fibril_join(&fr);
    return a;
}
void bench_peer_noop(void) { (void)noop_fork(); }

/* ---- fib: as in the serial projection, an empty asm on the call's result keeps gcc from
 * turning the last call into a loop ------------------------------------------------------- */
fibril static int64_t fib(int n) {
    if (n < 2)
        return n;
    int64_t a, b;
    fibril_t fr;
    fibril_init(&fr);
    fibril_fork(&fr, &a, fib, (n - 1));
    b = fib(n - 2);
    __asm__ volatile("" : "+r"(b));
    fibril_join(&fr);
    return a + b;
}
int64_t fib_peer(int n) { return fib(n); }

/* ---- integrate ------------------------------------------------------------------------------- */
static double eps;
fibril static double integrate(double x1, double y1, double x2, double y2, double area) {
    double half = (x2 - x1) / 2, x0 = x1 + half, y0 = integrate_fn(x0);
    double al = (y1 + y0) / 2 * half, ar = (y0 + y2) / 2 * half;
    if (fabs(al + ar - area) < eps)
        return al + ar;
    double a, b;
    fibril_t fr;
    fibril_init(&fr);
    fibril_fork(&fr, &a, integrate, (x1, y1, x0, y0, al));
    b = integrate(x0, y0, x2, y2, ar);
    __asm__ volatile("" : "+x"(b));
    fibril_join(&fr);
    return a + b;
}
double integrate_peer(double x1, double y1, double x2, double y2, double area, double e) {
    eps = e;
    return integrate(x1, y1, x2, y2, area);
}

/* ---- matmul: r (+)= a b on n x n blocks of row stride s, 4 products in parallel, twice -------- */
fibril static void matmul(const float *a, const float *b, float *r, int n, int s, int add) {
    if (n <= MATMUL_BASE) {
        matmul_base(a, b, r, s, add);
        return;
    }
    int m = n / 2;
    size_t o01 = (size_t)m, o10 = (size_t)m * s, o11 = o10 + m;
    fibril_t fr;
    fibril_init(&fr);
    fibril_fork(&fr, matmul, (a, b, r, m, s, add));
    fibril_fork(&fr, matmul, (a, b + o01, r + o01, m, s, add));
    fibril_fork(&fr, matmul, (a + o10, b, r + o10, m, s, add));
    matmul(a + o10, b + o01, r + o11, m, s, add);
    fibril_join(&fr);
    fibril_fork(&fr, matmul, (a + o01, b + o10, r, m, s, 1));
    fibril_fork(&fr, matmul, (a + o01, b + o11, r + o01, m, s, 1));
    fibril_fork(&fr, matmul, (a + o11, b + o10, r + o10, m, s, 1));
    matmul(a + o11, b + o11, r + o11, m, s, 1);
    fibril_join(&fr);
}
void matmul_peer(const float *a, const float *b, float *r, int n, int s) { matmul(a, b, r, n, s, 0); }

/* ---- nqueens: fork every valid placement of queen j ---------------------------------------- */
fibril static int64_t nqueens(int j, const char *board, int n) {
    if (j == n)
        return 1;
    char buf[NQ_MAX * NQ_MAX];
    int64_t res[NQ_MAX];
    fibril_t fr;
    fibril_init(&fr);
    for (int i = 0; i < n; i++) {
        char *child = buf + i * n;
        memcpy(child, board, (size_t)j);
        child[j] = (char)i;
        res[i] = 0;
        if (!nqueens_conflict(child, j))
            fibril_fork(&fr, &res[i], nqueens, (j + 1, child, n));
    }
    fibril_join(&fr);
    int64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += res[i];
    return sum;
}
int64_t nqueens_peer(int n) {
    char empty[NQ_MAX] = {0};
    return nqueens(0, empty, n);
}

/* ---- skynet: fork the first fanout - 1 children, call the last, join (as fib) --------------------- */
fibril static int64_t skynet(int64_t num, int64_t size, int fanout) {
    if (size == 1)
        return num;
    int64_t res[SKYNET_MAX_FANOUT], part = size / fanout;
    fibril_t fr;
    fibril_init(&fr);
    for (int i = 0; i < fanout - 1; i++)
        fibril_fork(&fr, &res[i], skynet, (num + i * part, part, fanout));
    res[fanout - 1] = skynet(num + (fanout - 1) * part, part, fanout);
    fibril_join(&fr);
    int64_t sum = 0;
    for (int i = 0; i < fanout; i++)
        sum += res[i];
    return sum;
}
int64_t skynet_peer(int64_t num, int64_t size, int fanout) { return skynet(num, size, fanout); }

/* ---- UTS: fork all children but the last, call the last ---------------------------------------- */
static const uts_params *tree;
fibril static uts_result uts_visit(uts_state s, int height) {
    int n = uts_num_children(tree, &s, height);
    if (n == 0)
        return uts_result_leaf(height);
    if (height >= FIBRIL_DEQUE_SLOTS - 1) {
        fprintf(stderr,
                "fibril: this tree nests forks deeper than Fibril's deque holds (%d frames, fibrili.h): "
                "cannot run it\n",
                FIBRIL_DEQUE_SLOTS);
        exit(2); /* (the driver's "could not run", not a wrong answer) */
    }
    uts_result *res = malloc((size_t)n * sizeof *res); /* on the heap, as the TBB version */
    if (!res) {
        fprintf(stderr, "fibril: out of memory\n");
        exit(2);
    }
    fibril_t fr;
    fibril_init(&fr);
    for (int i = 0; i < n - 1; i++) {
        uts_state child;
        uts_child(tree, &child, &s, i);
        fibril_fork(&fr, &res[i], uts_visit, (child, height + 1));
    }
    uts_state last;
    uts_child(tree, &last, &s, n - 1);
    res[n - 1] = uts_visit(last, height + 1);
    fibril_join(&fr);
    uts_result total = uts_result_inner(height);
    for (int i = 0; i < n; i++)
        uts_result_add(&total, &res[i]);
    free(res);
    return total;
}
uts_result uts_peer(const uts_params *p) {
    uts_state root;
    uts_root(p, &root);
    tree = p;
    return uts_visit(root, 0);
}

/* ---- the M:N workloads (kernels/mn.h): each round's tasks forked by one function, then one
 * join; mergesort as fib ----------------------------------------------------------------------- */
const char bench_peer_mn_model[] = "fork-join: fibril_fork, fibril_join";

static void mn_leaf(mn_body *body, void *ctx, size_t i) { body(ctx, i); }
fibril static void mn_round(mn_body *body, void *ctx, size_t n) {
    fibril_t fr;
    fibril_init(&fr);
    for (size_t i = 0; i < n; i++)
        fibril_fork(&fr, mn_leaf, (body, ctx, i));
    fibril_join(&fr);
}
/* (The driver's thread is worker 0: the rounds run on it, as every kernel here.) */
void mn_rounds_peer(mn_next *next, mn_body *body, void *ctx) {
    for (size_t n; (n = next(ctx)) != 0;)
        mn_round(body, ctx, n);
}

fibril static void msort(int32_t *a, int32_t *tmp, size_t n, size_t cutoff) {
    if (n <= cutoff) {
        msort_serial(a, tmp, n);
        return;
    }
    size_t mid = n / 2;
    fibril_t fr;
    fibril_init(&fr);
    fibril_fork(&fr, msort, (a, tmp, mid, cutoff));
    msort(a + mid, tmp + mid, n - mid, cutoff);
    fibril_join(&fr);
    msort_merge(a, tmp, n, mid);
}
void msort_peer(int32_t *a, int32_t *tmp, size_t n, size_t cutoff) { msort(a, tmp, n, cutoff); }
