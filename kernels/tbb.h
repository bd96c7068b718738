/* tbb.h — the TBB baseline's kernels (kernels/tbb.cpp, C++ with oneTBB), callable from the
 * C kernels of a driver built with FK_BASELINE_TBB.
 *
 * Every run happens inside one task_arena of `workers` slots (the calling thread takes one,
 * TBB's workers the rest), with tbb::global_control raising the process's parallelism limit
 * to `workers` (so that P may exceed the cores, as the other runtimes allow) and giving TBB's
 * threads 512 MiB stacks (reserved, not touched: deep UTS trees recurse on them). */
#ifndef FK_KERNELS_TBB_H
#define FK_KERNELS_TBB_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "kernels/mn.h"
#include "uts/tree.h"

/* Creates the arena and starts its threads (outside any timing); stops them. */
void bench_tbb_start(unsigned workers);
void bench_tbb_stop(void);
/* One empty task in the arena (the calibrate kernel's run). */
void bench_tbb_noop(void);

int64_t fib_tbb(int n);
double integrate_tbb(double x1, double y1, double x2, double y2, double area, double eps);
void matmul_tbb(const float *a, const float *b, float *r, int n, int s);
int64_t nqueens_tbb(int n);
uts_result uts_tbb(const uts_params *p);
/* The M:N workloads (kernels/mn.h): the parallel loop as n task_group.run from one task, then
 * wait; mergesort as the recursion of the others. */
void mn_each_tbb(size_t n, mn_body *body, void *ctx);
void msort_tbb(int32_t *a, int32_t *tmp, size_t n, size_t cutoff);

#ifdef __cplusplus
}
/* The arena every run happens in, for a kernel's TBB version in a file of its own
 * (kernels/NAME_tbb.cpp): its entry point returns bench_tbb_arena().execute(...). */
#include <oneapi/tbb/task_arena.h>
tbb::task_arena &bench_tbb_arena();
#endif

#endif
