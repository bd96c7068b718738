/* mn.h — what the M:N report's workloads share (seeds/003; kernels/mn.c, heat.c, bfs.c,
 * mergesort.c, switch.c), in C and in the TBB baseline's C++ (kernels/tbb.cpp).
 *
 * The report's scheduler runs every task on a fiber that can block on a counter
 * (WaitForCounter).  Here each workload has two lines: on a child-fiber build it is written
 * that way (tasks started with fk_spawn, waits that park the fiber: the stackful, M:N line),
 * on every other build as fork-join (the stackless line; OpenMP and TBB tasks; the serial
 * projection).  Where the report's workload has a shape fork-join cannot express (heat's
 * strips that live across time steps and meet at a barrier; two tasks handing control to
 * each other), the fork-join line does what fork-join can (a fork-join per time step) or
 * the workload is refused (switch). */
#ifndef FK_KERNELS_MN_H
#define FK_KERNELS_MN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 in child-fiber builds (tasks can block: the stackful line), else 0. */
#if defined(FK_BENCH_RUNTIME) && FK_BENCH_RUNTIME
#define MN_FIBERS (FK_STACK == FK_STACK_FIBER)
#else
#define MN_FIBERS 0
#endif

/* One task of a parallel loop: body(ctx, i). */
typedef void mn_body(void *ctx, size_t i);

/* The busy loop of balanced and imbalanced: `iters` steps of a 64-bit linear congruential
 * generator (Knuth's MMIX constants) from x.  A dependent multiply-add chain of about 4
 * cycles a step that no compiler shortens (the empty asm hides x from the optimiser);
 * mn_spin_closed computes the same value in O(log iters) steps, to check the answer. */
#define MN_LCG_A 6364136223846793005ull
#define MN_LCG_C 1442695040888963407ull
static inline uint64_t mn_spin(uint64_t x, uint64_t iters) {
    for (uint64_t k = 0; k < iters; k++) {
        x = x * MN_LCG_A + MN_LCG_C;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}
uint64_t mn_spin_closed(uint64_t x, uint64_t iters);

/* splitmix64: seeds of the inputs (bfs, mergesort) and mergesort's multiset hash. */
static inline uint64_t mn_mix(uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* mergesort's serial parts: sorts a[0, n) using tmp[0, n); merges the sorted a[0, mid) and
 * a[mid, n) through tmp. */
void msort_serial(int32_t *a, int32_t *tmp, size_t n);
void msort_merge(int32_t *a, int32_t *tmp, size_t n, size_t mid);

/* How this build runs the workloads ("fork-join: ...", "blocking: ...", "serial"), reported
 * with each answer. */
const char *mn_model(void);

#if defined(FK_BASELINE_OMP)
/* The parallel loop as OpenMP tasks, from the one thread of a parallel region's single. */
void mn_each_omp(size_t n, mn_body *body, void *ctx);
#endif

#ifdef __cplusplus
}
#endif

/* The parallel loop every workload but mergesort and switch is built of: n tasks started by
 * one task, then a wait for all of them (the report's "all fibers originate on worker 0's
 * deque").  mn_each_task is the forkscope version, a task to FK_CALL: FK_FORKs of one leaf
 * task each, then FK_JOIN; on child-fiber builds fk_spawn onto a counter, then a wait that
 * parks.  (kernels/mn.c) */
#if defined(FK_BENCH_RUNTIME) && FK_BENCH_RUNTIME
FK_TASK_DECLARE(mn_each_task, void, (mn_body *, body), (void *, ctx), (size_t, n))
#endif

#endif
