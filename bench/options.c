/* options.c — the options of every benchmark kernel (see options.h). */
#include "bench/options.h"

#include <stddef.h>
#include <stdint.h>

const bench_opt bench_fib_opts[] = {
    [FIB_OPT_N] = {"n", BENCH_INT, "42", 0, 92, 0, NULL, "compute fib(n)"},
    {0},
};

const bench_opt bench_integrate_opts[] = {
    [INTEGRATE_OPT_N] = {"n", BENCH_INT, "10000", 1, 1e6, 0, NULL, "integrate over [0, n]"},
    [INTEGRATE_OPT_EPS] = {"eps", BENCH_DOUBLE, "1e-9", 1e-15, 1e6, 0, NULL, "tolerance of each refinement"},
    {0},
};

const bench_opt bench_matmul_opts[] = {
    [MATMUL_OPT_N] = {"n", BENCH_INT, "8192", 16, 65536, 1, NULL, "matrix size (a power of two, at least 16)"},
    [MATMUL_OPT_SEED] = {"seed", BENCH_INT, "1", 0, 4294967295.0, 0, NULL, "seed of the inputs"},
    {0},
};

const bench_opt bench_nqueens_opts[] = {
    [NQUEENS_OPT_N] = {"n", BENCH_INT, "14", 1, NQ_MAX, 0, NULL, "board size"},
    {0},
};

const bench_opt bench_uts_opts[] = {
    [UTS_OPT_T] = {"t", BENCH_INT, "1", 0, 3, 0, NULL, "tree type: 0 BIN, 1 GEO, 2 HYBRID, 3 BALANCED"},
    [UTS_OPT_B] = {"b", BENCH_DOUBLE, "4.0", 0, 2147483647.0, 0, NULL, "root branching factor b0 (> 0)"},
    [UTS_OPT_R] = {"r", BENCH_INT, "0", -2147483648.0, 2147483647.0, 0, NULL, "root seed"},
    [UTS_OPT_A] = {"a", BENCH_INT, "0", 0, 3, 0, NULL, "GEO shape: 0 LINEAR, 1 EXPDEC, 2 CYCLIC, 3 FIXED"},
    [UTS_OPT_D] = {"d", BENCH_INT, "6", 0, 100000000, 0, NULL, "GEO/BALANCED depth limit gen_mx"},
    [UTS_OPT_Q] = {"q", BENCH_DOUBLE, "0.234375", 0, 1, 0, NULL, "BIN: probability that a non-root node has children"},
    [UTS_OPT_M] = {"m", BENCH_INT, "4", 0, 1000000, 0, NULL, "BIN: children of such a node (capped at 100)"},
    [UTS_OPT_F] = {"f", BENCH_DOUBLE, "0.5", 0, 1, 0, NULL, "HYBRID: fraction of gen_mx where GEO switches to BIN"},
    [UTS_OPT_G] = {"g", BENCH_INT, "1", 1, 1000000, 0, NULL, "compute granularity: SHA-1 hashes per child (same tree)"},
    [UTS_OPT_PRESET] = {"preset", BENCH_CHOICE, "none", 0, 0, 0, "none|T1|T1L|T1XXL|T3|T3L|T3XXL",
                    "a tree of the paper; overrides -t -b -r -a -d -q -m -f (not -g)"},
    [UTS_OPT_ALLOC] = {"alloc", BENCH_CHOICE, "heap", 0, 0, 0, "heap|stack",
                   "children's result array: malloc, or FK_ALLOC on the frame stack (runtime builds)"},
    {0},
};

const bench_kernel_opts bench_kernel_options[] = {
    {"fib", bench_fib_opts},         {"integrate", bench_integrate_opts}, {"matmul", bench_matmul_opts},
    {"nqueens", bench_nqueens_opts}, {"uts", bench_uts_opts},             {NULL, NULL},
};

/* The number of placements of n queens, n = 0..NQ_MAX (nqueens verifies against it; so does
 * the harness for a runtime run by command). */
const int64_t bench_nqueens_known[NQ_MAX + 1] = {0,     1,      0,       0,        2,         10,         4,
                                          40,    92,     352,     724,      2680,      14200,      73712,
                                          365596, 2279184, 14772512, 95815104, 666090624};
