/* mergesort.c — the M:N report's parallel mergesort: n random 32-bit keys (5,000,000), made
 * from the seed outside timing and copied into the array each repetition; halves sorted in
 * parallel down to `cutoff` keys (5,000), below which the sort is serial; every merge is
 * serial (the root's, of all n keys, bounds the speedup).
 *
 * Fork-join lines: fork the left half, call the right, join, merge.  The stackful line:
 * fk_spawn the left half onto a counter, sort the right half, wait on the counter (the
 * fiber parks if a thief still sorts the left half), merge.
 * The answer is checked for order and, by a multiset hash (the sum of a mix of each key),
 * for being the input's keys. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "kernels/mn.h"

/* ---- what the harness knows of mergesort (bench/options.h) ------------------------------- */
enum { MERGESORT_OPT_N, MERGESORT_OPT_CUTOFF, MERGESORT_OPT_SEED };
static const bench_opt mergesort_opts[] = {
    [MERGESORT_OPT_N] = {"n", BENCH_INT, "5000000", 1, 1 << 30, 0, NULL, "32-bit keys to sort"},
    [MERGESORT_OPT_CUTOFF] = {"cutoff", BENCH_INT, "5000", 2, 1 << 30, 0, NULL, "sort serially at or below this many keys"},
    [MERGESORT_OPT_SEED] = {"seed", BENCH_INT, "1", 0, 4294967295.0, 0, NULL, "seed of the keys"},
    {0},
};

static double mergesort_serial_s(const bench_vals *v, int serial) {
    (void)serial;
    double n = v->d[MERGESORT_OPT_N];
    return 4.7e-9 * n * log2(n > 2 ? n : 2);
}

const bench_desc bench_mergesort_desc = {
    .name = "mergesort",
    .summary = "M:N report: parallel mergesort of random keys, serial below a cutoff",
    .flags = BENCH_MN,
    .opts = mergesort_opts,
    .model = {.serial_s = mergesort_serial_s, .runtime = 1.0, .omp = 1.0},
    .small = (const char *const[]){"n=60000 cutoff=2000", "n=1", NULL},
};

#if !BENCH_DESCRIBE_ONLY

typedef struct {
    size_t n, cutoff;
    int32_t *in, *a, *tmp;
    uint64_t in_hash;
} msort;

static msort M;

void msort_merge(int32_t *a, int32_t *tmp, size_t n, size_t mid) {
    size_t i = 0, j = mid, k = 0;
    while (i < mid && j < n)
        tmp[k++] = a[j] < a[i] ? a[j++] : a[i++];
    while (i < mid)
        tmp[k++] = a[i++];
    while (j < n)
        tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof *a);
}

void msort_serial(int32_t *a, int32_t *tmp, size_t n) {
    if (n <= 16) { /* insertion sort */
        for (size_t i = 1; i < n; i++) {
            int32_t x = a[i];
            size_t j = i;
            for (; j > 0 && a[j - 1] > x; j--)
                a[j] = a[j - 1];
            a[j] = x;
        }
        return;
    }
    size_t mid = n / 2;
    msort_serial(a, tmp, mid);
    msort_serial(a + mid, tmp + mid, n - mid);
    msort_merge(a, tmp, n, mid);
}

static uint64_t keys_hash(const int32_t *a, size_t n) {
    uint64_t h = 0;
    for (size_t i = 0; i < n; i++)
        h += mn_mix((uint64_t)(uint32_t)a[i]);
    return h;
}

static int mergesort_prepare(bench_ctx *c) {
    M = (msort){.n = (size_t)c->i[MERGESORT_OPT_N], .cutoff = (size_t)c->i[MERGESORT_OPT_CUTOFF]};
    M.in = malloc(M.n * sizeof *M.in);
    M.a = malloc(M.n * sizeof *M.a);
    M.tmp = malloc(M.n * sizeof *M.tmp);
    if (!M.in || !M.a || !M.tmp) {
        fprintf(stderr, "out of memory for %zu keys\n", M.n);
        return -1;
    }
    uint64_t seed = (uint64_t)c->i[MERGESORT_OPT_SEED];
    for (size_t i = 0; i < M.n; i++)
        M.in[i] = (int32_t)(uint32_t)mn_mix(seed * 0x100000001b3ull + i);
    M.in_hash = keys_hash(M.in, M.n);
    return 0;
}

#if MN_FIBERS
FK_TASK_DECLARE(msort_spawned, void, (int32_t *, a), (int32_t *, tmp), (size_t, n), (size_t, cutoff))

static void msort_fiber(int32_t *a, int32_t *tmp, size_t n, size_t cutoff) {
    if (n <= cutoff) {
        msort_serial(a, tmp, n);
        return;
    }
    size_t mid = n / 2;
    fk_counter left;
    fk_counter_init(&left, 0);
    FK_SPAWN(&left, NULL, msort_spawned, a, tmp, mid, cutoff);
    msort_fiber(a + mid, tmp + mid, n - mid, cutoff);
    fk_counter_wait(&left);
    msort_merge(a, tmp, n, mid);
}

FK_LEAF_TASK_DEFINE(msort_spawned, void, (int32_t *, a), (int32_t *, tmp), (size_t, n), (size_t, cutoff)) {
    msort_fiber(a, tmp, n, cutoff);
    FK_RETURN_VOID();
} FK_END
#define msort_task msort_spawned
#elif FK_BENCH_RUNTIME
typedef struct {
    fk_frame fk; /* (the parameters are all the task reads after its fork) */
} msort_frame;

FK_TASK(msort_task, void, msort_frame *f, (int32_t *, a), (int32_t *, tmp), (size_t, n), (size_t, cutoff)) {
    if (n <= cutoff) {
        msort_serial(a, tmp, n);
        FK_RETURN_VOID();
    }
    FK_BEGIN(f);
    FK_FORK_VOID(msort_task, a, tmp, n / 2, cutoff);
    FK_CALL_VOID(msort_task, a + n / 2, tmp + n / 2, n - n / 2, cutoff);
    FK_JOIN();
    msort_merge(a, tmp, n, n / 2);
    FK_RETURN_VOID();
} FK_END
#elif defined(FK_BASELINE_OMP)
static void msort_omp(int32_t *a, int32_t *tmp, size_t n, size_t cutoff) {
    if (n <= cutoff) {
        msort_serial(a, tmp, n);
        return;
    }
    size_t mid = n / 2;
#pragma omp task
    msort_omp(a, tmp, mid, cutoff);
    msort_omp(a + mid, tmp + mid, n - mid, cutoff);
#pragma omp taskwait
    msort_merge(a, tmp, n, mid);
}
#endif

static void mergesort_run(bench_ctx *c) {
    memcpy(M.a, M.in, M.n * sizeof *M.a);
#if FK_BENCH_RUNTIME
    if (FK_RUN(c->pool, NULL, msort_task, M.a, M.tmp, M.n, M.cutoff))
        M.a[0] = M.a[M.n - 1] + 1; /* (out of order: the check fails) */
#elif defined(FK_BASELINE_OMP)
    (void)c;
#pragma omp parallel
#pragma omp single
    msort_omp(M.a, M.tmp, M.n, M.cutoff);
#elif defined(FK_BASELINE_TBB)
    (void)c;
    msort_tbb(M.a, M.tmp, M.n, M.cutoff);
#elif defined(FK_BASELINE_PEER)
    (void)c;
    msort_peer(M.a, M.tmp, M.n, M.cutoff);
#else
    (void)c;
    msort_serial(M.a, M.tmp, M.n);
#endif
}

static int mergesort_verify(bench_ctx *c) {
    size_t disorder = 0;
    for (size_t i = 1; i < M.n; i++)
        disorder += M.a[i - 1] > M.a[i];
    uint64_t h = keys_hash(M.a, M.n);
    json_object_set_new(c->out, "answer", json_integer((json_int_t)(h >> 1)));
    json_object_set_new(c->out, "expected", json_integer((json_int_t)(M.in_hash >> 1)));
    json_object_set_new(c->out, "out_of_order", json_integer((json_int_t)disorder));
    json_object_set_new(c->out, "model", json_string(mn_model()));
    return disorder == 0 && h == M.in_hash;
}

static void mergesort_cleanup(bench_ctx *c) {
    (void)c;
    free(M.in);
    free(M.a);
    free(M.tmp);
    memset(&M, 0, sizeof M);
}

const bench_kernel bench_mergesort = {
    .desc = &bench_mergesort_desc,
    .prepare = mergesort_prepare,
    .run = mergesort_run,
    .verify = mergesort_verify,
    .cleanup = mergesort_cleanup,
    BENCH_PEER_VERSION(msort_peer)
};
#endif
