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

/* ---- the M:N report's workloads (seeds/003: its sizes are the defaults) ---- */

const bench_opt bench_balanced_opts[] = {
    [BALANCED_OPT_N] = {"n", BENCH_INT, "1024", 1, 1 << 24, 0, NULL, "tasks, all started by one task"},
    [BALANCED_OPT_ITERS] = {"iters", BENCH_INT, "100000", 0, 1e12, 0, NULL, "busy-loop iterations per task"},
    {0},
};

const bench_opt bench_imbalanced_opts[] = {
    [IMBALANCED_OPT_N] = {"n", BENCH_INT, "1024", 1, 1 << 24, 0, NULL, "tasks, all started by one task"},
    [IMBALANCED_OPT_LIGHT] = {"light", BENCH_INT, "10000", 0, 1e12, 0, NULL, "iterations of a light task"},
    [IMBALANCED_OPT_HEAVY] = {"heavy", BENCH_INT, "1000000", 0, 1e12, 0, NULL, "iterations of a heavy task"},
    [IMBALANCED_OPT_EVERY] = {"every", BENCH_INT, "10", 1, 1 << 24, 0, NULL,
                              "tasks 0, every, 2 every, ... are heavy (10: 10%)"},
    {0},
};

const bench_opt bench_heat_opts[] = {
    [HEAT_OPT_N] = {"n", BENCH_INT, "512", 2, 16384, 0, NULL, "grid of n x n interior cells"},
    [HEAT_OPT_STEPS] = {"steps", BENCH_INT, "400", 1, 1e7, 0, NULL, "time steps (a barrier after each)"},
    [HEAT_OPT_STRIPS] = {"strips", BENCH_INT, "64", 1, 16384, 0, NULL, "horizontal strips, one task each (at most n)"},
    [HEAT_OPT_HEAVY] = {"heavy", BENCH_INT, "4", 1, 1000, 0, NULL,
                        "work factor of the middle third of the strips (each computes its update this often)"},
    {0},
};

const bench_opt bench_bfs_opts[] = {
    [BFS_OPT_N] = {"n", BENCH_INT, "1048576", 2, 1 << 28, 0, NULL, "nodes of the random graph"},
    [BFS_OPT_DEGREE] = {"degree", BENCH_INT, "16", 1, 1024, 0, NULL, "average degree (n degree / 2 random edges)"},
    [BFS_OPT_SEED] = {"seed", BENCH_INT, "1", 0, 4294967295.0, 0, NULL, "seed of the graph"},
    [BFS_OPT_GRAIN] = {"grain", BENCH_INT, "256", 1, 1 << 24, 0, NULL, "frontier nodes per task"},
    {0},
};

const bench_opt bench_mergesort_opts[] = {
    [MERGESORT_OPT_N] = {"n", BENCH_INT, "5000000", 1, 1 << 30, 0, NULL, "32-bit keys to sort"},
    [MERGESORT_OPT_CUTOFF] = {"cutoff", BENCH_INT, "5000", 2, 1 << 30, 0, NULL, "sort serially at or below this many keys"},
    [MERGESORT_OPT_SEED] = {"seed", BENCH_INT, "1", 0, 4294967295.0, 0, NULL, "seed of the keys"},
    {0},
};

const bench_opt bench_switch_opts[] = {
    [SWITCH_OPT_ROUNDS] = {"rounds", BENCH_INT, "20000", 1, 1e9, 0, NULL,
                           "round trips between two tasks that block (two hand-offs each)"},
    {0},
};

const bench_kernel_opts bench_kernel_options[] = {
    {"fib", bench_fib_opts},         {"integrate", bench_integrate_opts}, {"matmul", bench_matmul_opts},
    {"nqueens", bench_nqueens_opts}, {"uts", bench_uts_opts},             {"balanced", bench_balanced_opts},
    {"imbalanced", bench_imbalanced_opts}, {"heat", bench_heat_opts},     {"bfs", bench_bfs_opts},
    {"mergesort", bench_mergesort_opts},   {"switch", bench_switch_opts}, {NULL, NULL},
};

/* The number of placements of n queens, n = 0..NQ_MAX (nqueens verifies against it; so does
 * the harness for a runtime run by command). */
const int64_t bench_nqueens_known[NQ_MAX + 1] = {0,     1,      0,       0,        2,         10,         4,
                                          40,    92,     352,     724,      2680,      14200,      73712,
                                          365596, 2279184, 14772512, 95815104, 666090624};
