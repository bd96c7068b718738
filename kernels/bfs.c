/* bfs.c — the M:N report's level-synchronous breadth-first search: a random graph of n nodes
 * (2^20) and n degree / 2 random edges (degree 16), made from the seed outside timing;
 * search from node 0.
 *
 * Each level splits the frontier into tasks of `grain` nodes (256); a task claims each
 * unvisited neighbour with a compare-and-swap on its distance and appends the ones it
 * claimed to the next frontier (a local buffer, flushed with one fetch-and-add per 256).
 * The levels follow one another: a level's tasks are joined (fork-join lines) or waited for
 * on a counter (the stackful line) before the next starts, so the search's critical path
 * is the number of levels.  The serial projection is the ordinary queue-based search.
 * Distances do not depend on the order of the search: the answer is checked node by node
 * against a serial search. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "kernels/mn.h"

/* ---- what the harness knows of bfs (bench/options.h) ------------------------------------- */
enum { BFS_OPT_N, BFS_OPT_DEGREE, BFS_OPT_SEED, BFS_OPT_GRAIN };
static const bench_opt bfs_opts[] = {
    [BFS_OPT_N] = {"n", BENCH_INT, "1048576", 2, 1 << 28, 0, NULL, "nodes of the random graph"},
    [BFS_OPT_DEGREE] = {"degree", BENCH_INT, "16", 1, 1024, 0, NULL, "average degree (n degree / 2 random edges)"},
    [BFS_OPT_SEED] = {"seed", BENCH_INT, "1", 0, 4294967295.0, 0, NULL, "seed of the graph"},
    [BFS_OPT_GRAIN] = {"grain", BENCH_INT, "256", 1, 1 << 24, 0, NULL, "frontier nodes per task"},
    {0},
};

static double bfs_serial_s(const bench_vals *v, int serial) {
    (void)serial;
    return 1.3e-8 * v->d[BFS_OPT_N] * v->d[BFS_OPT_DEGREE];
}

const bench_desc bench_bfs_desc = {
    .name = "bfs",
    .summary = "M:N report: level-synchronous breadth-first search of a seeded random graph",
    .flags = BENCH_MN,
    .opts = bfs_opts,
    .model = {.serial_s = bfs_serial_s, .runtime = 1.3, .omp = 1.3, .untimed = 2 /* the graph, and the serial search that checks */},
    .small = (const char *const[]){"n=20000 grain=64", NULL},
};

#if !BENCH_DESCRIBE_ONLY

typedef struct {
    size_t n, grain;
    uint32_t *off, *adj; /* the graph, compressed rows: node u's neighbours are adj[off[u] .. off[u + 1]) */
    _Atomic int32_t *dist;
    uint32_t *front, *next;
    size_t front_len;
    _Atomic size_t next_len;
    int32_t level; /* of the frontier */
    int32_t levels;
} bfs;

static bfs B;

static int bfs_prepare(bench_ctx *c) {
    size_t n = (size_t)c->i[BFS_OPT_N], deg = (size_t)c->i[BFS_OPT_DEGREE];
    uint64_t seed = (uint64_t)c->i[BFS_OPT_SEED];
    size_t m = n * deg / 2;
    if (2 * m > UINT32_MAX) {
        fprintf(stderr, "options --n and --degree: %zu edges in both directions do not fit 32-bit offsets\n", 2 * m);
        return -1;
    }
    B = (bfs){.n = n, .grain = (size_t)c->i[BFS_OPT_GRAIN]};
    B.off = calloc(n + 1, sizeof *B.off);
    B.adj = malloc((2 * m + 1) * sizeof *B.adj);
    B.dist = malloc(n * sizeof *B.dist);
    B.front = malloc(n * sizeof *B.front);
    B.next = malloc(n * sizeof *B.next);
    uint32_t *ends = malloc(2 * m * sizeof *ends), *pos = malloc((n + 1) * sizeof *pos);
    if (!B.off || !B.adj || !B.dist || !B.front || !B.next || !ends || !pos) {
        fprintf(stderr, "out of memory for a graph of %zu nodes and %zu edges\n", n, m);
        free(ends);
        free(pos);
        return -1;
    }
    size_t e = 0;
    for (size_t k = 0; k < m; k++) { /* edge k joins two nodes drawn from the seed (no loops) */
        uint32_t u = (uint32_t)(mn_mix(seed * 0x100000001b3ull + 2 * k) % n);
        uint32_t v = (uint32_t)(mn_mix(seed * 0x100000001b3ull + 2 * k + 1) % n);
        if (u == v)
            continue;
        ends[e++] = u;
        ends[e++] = v;
        B.off[u + 1]++;
        B.off[v + 1]++;
    }
    for (size_t u = 0; u < n; u++)
        B.off[u + 1] += B.off[u];
    memcpy(pos, B.off, (n + 1) * sizeof *pos);
    for (size_t k = 0; k < e; k += 2) {
        B.adj[pos[ends[k]]++] = ends[k + 1];
        B.adj[pos[ends[k + 1]]++] = ends[k];
    }
    free(ends);
    free(pos);
    return 0;
}

#if !defined(FK_BASELINE_SERIAL)
static void bfs_flush(bfs *b, const uint32_t *buf, size_t k) {
    size_t at = atomic_fetch_add_explicit(&b->next_len, k, memory_order_relaxed);
    memcpy(b->next + at, buf, k * sizeof *buf);
}

/* Task i of a level: frontier nodes [i grain, (i + 1) grain). */
static void bfs_body(void *ctx, size_t i) {
    bfs *b = ctx;
    uint32_t buf[256];
    size_t k = 0, lo = i * b->grain, hi = lo + b->grain < b->front_len ? lo + b->grain : b->front_len;
    int32_t d = b->level + 1;
    for (size_t x = lo; x < hi; x++) {
        uint32_t u = b->front[x];
        for (uint32_t e = b->off[u]; e < b->off[u + 1]; e++) {
            uint32_t v = b->adj[e];
            int32_t unseen = -1;
            if (atomic_load_explicit(&b->dist[v], memory_order_relaxed) < 0 &&
                atomic_compare_exchange_strong_explicit(&b->dist[v], &unseen, d, memory_order_relaxed,
                                                        memory_order_relaxed)) {
                buf[k++] = v;
                if (k == sizeof buf / sizeof buf[0]) {
                    bfs_flush(b, buf, k);
                    k = 0;
                }
            }
        }
    }
    bfs_flush(b, buf, k);
}

static size_t bfs_tasks(const bfs *b) { return (b->front_len + b->grain - 1) / b->grain; }

/* The frontier just found becomes the current one. */
static void bfs_advance(bfs *b) {
    uint32_t *t = b->front;
    b->front = b->next;
    b->next = t;
    b->front_len = atomic_load_explicit(&b->next_len, memory_order_relaxed);
    atomic_store_explicit(&b->next_len, 0, memory_order_relaxed);
    b->level++;
}
#endif

static void bfs_start(bfs *b) {
    for (size_t u = 0; u < b->n; u++)
        atomic_store_explicit(&b->dist[u], -1, memory_order_relaxed);
    atomic_store_explicit(&b->dist[0], 0, memory_order_relaxed);
    b->front[0] = 0;
    b->front_len = 1;
    atomic_store_explicit(&b->next_len, 0, memory_order_relaxed);
    b->level = 0;
}

/* The serial search, into dist (plain stores: nobody else runs). */
static int32_t bfs_serial(bfs *b) {
    bfs_start(b);
    size_t head = 0, tail = 1;
    uint32_t *q = b->front;
    int32_t deepest = 0;
    while (head < tail) {
        uint32_t u = q[head++];
        int32_t d = atomic_load_explicit(&b->dist[u], memory_order_relaxed) + 1;
        for (uint32_t e = b->off[u]; e < b->off[u + 1]; e++) {
            uint32_t v = b->adj[e];
            if (atomic_load_explicit(&b->dist[v], memory_order_relaxed) < 0) {
                atomic_store_explicit(&b->dist[v], d, memory_order_relaxed);
                q[tail++] = v;
                deepest = d;
            }
        }
    }
    return deepest + 1;
}

#if FK_BENCH_RUNTIME
typedef struct {
    fk_frame fk;
} bfs_frame;

FK_TASK(bfs_root, void, bfs_frame *f, (bfs *, b)) {
    FK_BEGIN(f);
    while (b->front_len) {
        FK_CALL_VOID(mn_each_task, bfs_body, b, bfs_tasks(b));
        bfs_advance(b);
    }
    FK_RETURN_VOID();
} FK_END
#endif

#if defined(FK_BASELINE_PEER)
static int bfs_round;
static size_t bfs_next(void *ctx) { /* the frontier found by the last round becomes the current one */
    bfs *b = ctx;
    if (bfs_round++)
        bfs_advance(b);
    return bfs_tasks(b);
}
#endif

static void bfs_run(bench_ctx *c) {
#if FK_BENCH_RUNTIME
    bfs_start(&B);
    if (FK_RUN(c->pool, NULL, bfs_root, &B))
        B.level = -1;
#elif defined(FK_BASELINE_OMP)
    (void)c;
    bfs_start(&B);
#pragma omp parallel
#pragma omp single
    while (B.front_len) {
        mn_each_omp(bfs_tasks(&B), bfs_body, &B);
        bfs_advance(&B);
    }
#elif defined(FK_BASELINE_TBB)
    (void)c;
    bfs_start(&B);
    while (B.front_len) {
        mn_each_tbb(bfs_tasks(&B), bfs_body, &B);
        bfs_advance(&B);
    }
#elif defined(FK_BASELINE_PEER)
    (void)c;
    bfs_start(&B);
    bfs_round = 0;
    mn_rounds_peer(bfs_next, bfs_body, &B);
#else
    (void)c;
    B.level = bfs_serial(&B);
#endif
    B.levels = B.level; /* the last level found nothing: levels 0 .. level - 1 */
}

static int bfs_verify(bench_ctx *c) {
    int32_t *got = malloc(B.n * sizeof *got);
    if (!got) {
        json_object_set_new(c->out, "error", json_string("out of memory for the check"));
        return 0;
    }
    int64_t sum = 0, wsum = 0;
    size_t reached = 0;
    for (size_t u = 0; u < B.n; u++) {
        got[u] = atomic_load_explicit(&B.dist[u], memory_order_relaxed);
        sum += got[u];
        reached += got[u] >= 0;
    }
    int32_t levels = B.levels;
    int32_t want_levels = bfs_serial(&B); /* overwrites dist */
    size_t wrong = 0;
    for (size_t u = 0; u < B.n; u++) {
        int32_t w = atomic_load_explicit(&B.dist[u], memory_order_relaxed);
        wsum += w;
        wrong += got[u] != w;
    }
    free(got);
    json_object_set_new(c->out, "answer", json_integer(sum));
    json_object_set_new(c->out, "expected", json_integer(wsum));
    json_object_set_new(c->out, "wrong_nodes", json_integer((json_int_t)wrong));
    json_object_set_new(c->out, "levels", json_integer(levels));
    json_object_set_new(c->out, "reached", json_integer((json_int_t)reached));
    json_object_set_new(c->out, "edges", json_integer((json_int_t)B.off[B.n] / 2));
    json_object_set_new(c->out, "model", json_string(mn_model()));
    return wrong == 0 && levels == want_levels;
}

static void bfs_cleanup(bench_ctx *c) {
    (void)c;
    free(B.off);
    free(B.adj);
    free((void *)B.dist);
    free(B.front);
    free(B.next);
    memset(&B, 0, sizeof B);
}

const bench_kernel bench_bfs = {
    .desc = &bench_bfs_desc,
    .prepare = bfs_prepare,
    .run = bfs_run,
    .verify = bfs_verify,
    .cleanup = bfs_cleanup,
    BENCH_PEER_VERSION(mn_rounds_peer)
};
#endif
