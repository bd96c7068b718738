/* skynet.c — the headline kernel of tzcnt/runtime-benchmarks: a tree of fan-out `fanout`
 * and depth `depth` (10 and 6: 10^6 leaves, 111,111 inner nodes), every node a task.  Leaf i
 * (numbered left to right) returns i; an inner node forks its first fanout - 1 children,
 * calls the last, joins and returns their sum.  The root's answer is L (L - 1) / 2 for
 * L = fanout^depth leaves (499,999,500,000 at the defaults), checked exactly.  Almost no
 * work per task: like fib, it measures what a fork and a join cost, here in a loop of forks
 * with a wide join. */
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench.h"

/* ---- what the harness knows of skynet (bench/options.h) ---------------------------------- */
enum { SKYNET_OPT_DEPTH, SKYNET_OPT_FANOUT };
static const bench_opt skynet_opts[] = {
    [SKYNET_OPT_DEPTH] = {"depth", BENCH_INT, "6", 0, 9, 0, NULL, "levels below the root (10^6 leaves at 6)"},
    [SKYNET_OPT_FANOUT] = {"fanout", BENCH_INT, "10", 2, SKYNET_MAX_FANOUT, 0, NULL, "children of every inner node"},
    {0},
};

/* L = fanout^depth leaves (at most 10^9: the sum fits an int64_t). */
static int64_t skynet_leaves(const bench_vals *v) {
    int64_t l = 1;
    for (int64_t d = 0; d < v->i[SKYNET_OPT_DEPTH]; d++)
        l *= v->i[SKYNET_OPT_FANOUT];
    return l;
}

/* The leaves' indices summed: L (L - 1) / 2. */
static int64_t skynet_sum(const bench_vals *v) {
    int64_t l = skynet_leaves(v);
    return l * (l - 1) / 2;
}

static int skynet_answer(const bench_vals *v, double *out) {
    *out = (double)skynet_sum(v);
    return 0;
}

/* Every node a call of a few instructions: about 2 ns a node serially (AMD EPYC VM). */
static double skynet_serial_s(const bench_vals *v, int serial) {
    (void)serial;
    double l = (double)skynet_leaves(v), f = v->d[SKYNET_OPT_FANOUT];
    return 2e-9 * l * f / (f - 1);
}

const bench_desc bench_skynet_desc = {
    .name = "skynet",
    .summary = "tzcnt/runtime-benchmarks' skynet: a tree of fanout^depth leaf tasks, each its index, summed",
    .opts = skynet_opts,
    .answer = skynet_answer,
    .model = {.serial_s = skynet_serial_s, .runtime = 3, .omp = 40}, /* measured: 1.6-4.4x, 38x */
    .small = (const char *const[]){"depth=0", "depth=1 fanout=2", "depth=4", "depth=7 fanout=3", NULL},
};

#if !BENCH_DESCRIBE_ONLY
static int64_t result;

/* ---- serial projection ------------------------------------------------------------------- */
#if defined(FK_BASELINE_SERIAL)
__attribute__((noinline)) static int64_t skynet_serial(int64_t num, int64_t size, int fanout) {
    if (size == 1)
        return num;
    int64_t sum = 0, part = size / fanout;
    for (int i = 0; i < fanout; i++)
        sum += skynet_serial(num + i * part, part, fanout);
    return sum;
}

static void skynet_run(bench_ctx *c) {
    result = skynet_serial(0, skynet_leaves(&c->v), (int)c->i[SKYNET_OPT_FANOUT]);
}

/* ---- a peer runtime (kernels/peer.h; a peer without skynet_peer refuses it) --------------- */
#elif defined(FK_BASELINE_PEER)
static void skynet_run(bench_ctx *c) {
    result = skynet_peer(0, skynet_leaves(&c->v), (int)c->i[SKYNET_OPT_FANOUT]);
}

/* ---- TBB (kernels/skynet_tbb.cpp) --------------------------------------------------------- */
#elif defined(FK_BASELINE_TBB)
int64_t skynet_tbb(int64_t num, int64_t size, int fanout); /* (its definition: extern "C", the same) */
static void skynet_run(bench_ctx *c) {
    result = skynet_tbb(0, skynet_leaves(&c->v), (int)c->i[SKYNET_OPT_FANOUT]);
}

/* ---- OpenMP tasks -------------------------------------------------------------------------- */
#elif defined(FK_BASELINE_OMP)
static int64_t skynet_omp(int64_t num, int64_t size, int fanout) {
    if (size == 1)
        return num;
    int64_t part[SKYNET_MAX_FANOUT], step = size / fanout;
    for (int i = 0; i < fanout - 1; i++) {
#pragma omp task shared(part) firstprivate(i)
        part[i] = skynet_omp(num + i * step, step, fanout);
    }
    part[fanout - 1] = skynet_omp(num + (fanout - 1) * step, step, fanout);
#pragma omp taskwait
    int64_t sum = 0;
    for (int i = 0; i < fanout; i++)
        sum += part[i];
    return sum;
}

static void skynet_run(bench_ctx *c) {
    int64_t leaves = skynet_leaves(&c->v);
    int fanout = (int)c->i[SKYNET_OPT_FANOUT];
#pragma omp parallel
#pragma omp single
    result = skynet_omp(0, leaves, fanout);
}

/* ---- forkscope ----------------------------------------------------------------------------- */
#else
typedef struct {
    fk_frame fk;
    int i; /* the loop's counter lives in the frame: C locals do not survive a steal */
    int64_t part[SKYNET_MAX_FANOUT];
} skynet_frame;

FK_TASK(skynet, int64_t, skynet_frame *f, (int64_t, num), (int64_t, size), (int, fanout)) {
    if (size == 1)
        FK_RETURN(num);
    FK_BEGIN(f);
    for (f->i = 0; f->i < fanout - 1; f->i++)
        FK_FORK(part[f->i], skynet, num + f->i * (size / fanout), size / fanout, fanout);
    FK_CALL(part[fanout - 1], skynet, num + (fanout - 1) * (size / fanout), size / fanout, fanout);
    FK_JOIN();
    int64_t sum = 0;
    for (int i = 0; i < fanout; i++)
        sum += f->part[i];
    FK_RETURN(sum);
} FK_END

static void skynet_run(bench_ctx *c) {
    if (FK_RUN(c->pool, &result, skynet, 0, skynet_leaves(&c->v), (int)c->i[SKYNET_OPT_FANOUT]))
        result = -1;
}
#endif

static int skynet_verify(bench_ctx *c) {
    int64_t want = skynet_sum(&c->v);
    json_object_set_new(c->out, "answer", json_integer(result));
    json_object_set_new(c->out, "expected", json_integer(want));
    return result == want;
}

const bench_kernel bench_skynet = {
    .desc = &bench_skynet_desc,
    .run = skynet_run,
    .verify = skynet_verify,
    BENCH_PEER_VERSION(skynet_peer)
};
#endif
