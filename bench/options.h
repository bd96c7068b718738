/* options.h — the options of every benchmark kernel: one table, read by the bench drivers
 * (each kernel's bench_kernel.opts, parsed on its command line) and by the harness (a
 * configuration's "params" are checked against it before anything runs).  Pure data: the
 * harness links options.c without any kernel. */
#ifndef FK_BENCH_OPTIONS_H
#define FK_BENCH_OPTIONS_H

#include <stdint.h>

enum bench_opt_type {
    BENCH_INT,    /* 64-bit integer */
    BENCH_DOUBLE, /* real number */
    BENCH_CHOICE, /* one of a '|'-separated list in `choices` */
};

typedef struct bench_opt {
    const char *name; /* without dashes: "n" is given as --n VALUE (or, for UTS, -x VALUE) */
    enum bench_opt_type type;
    const char *def;     /* default, as it would be written on the command line */
    double min, max;     /* inclusive range (BENCH_INT, BENCH_DOUBLE) */
    int pow2;            /* BENCH_INT: must be a power of two */
    const char *choices; /* BENCH_CHOICE */
    const char *help;
} bench_opt;

/* Each kernel's options (terminated by an entry with name == NULL), and their indices. */
enum { FIB_OPT_N };
extern const bench_opt bench_fib_opts[];
enum { INTEGRATE_OPT_N, INTEGRATE_OPT_EPS };
extern const bench_opt bench_integrate_opts[];
enum { MATMUL_OPT_N, MATMUL_OPT_SEED };
extern const bench_opt bench_matmul_opts[];
enum { NQUEENS_OPT_N };
extern const bench_opt bench_nqueens_opts[];
enum { UTS_OPT_T, UTS_OPT_B, UTS_OPT_R, UTS_OPT_A, UTS_OPT_D, UTS_OPT_Q, UTS_OPT_M, UTS_OPT_F, UTS_OPT_G, UTS_OPT_PRESET, UTS_OPT_ALLOC };
extern const bench_opt bench_uts_opts[];

/* The M:N report's workloads (kernels/mn.c, heat.c, bfs.c, mergesort.c, switch.c). */
enum { BALANCED_OPT_N, BALANCED_OPT_ITERS };
extern const bench_opt bench_balanced_opts[];
enum { IMBALANCED_OPT_N, IMBALANCED_OPT_LIGHT, IMBALANCED_OPT_HEAVY, IMBALANCED_OPT_EVERY };
extern const bench_opt bench_imbalanced_opts[];
enum { HEAT_OPT_N, HEAT_OPT_STEPS, HEAT_OPT_STRIPS, HEAT_OPT_HEAVY };
extern const bench_opt bench_heat_opts[];
enum { BFS_OPT_N, BFS_OPT_DEGREE, BFS_OPT_SEED, BFS_OPT_GRAIN };
extern const bench_opt bench_bfs_opts[];
enum { MERGESORT_OPT_N, MERGESORT_OPT_CUTOFF, MERGESORT_OPT_SEED };
extern const bench_opt bench_mergesort_opts[];
enum { SWITCH_OPT_ROUNDS };
extern const bench_opt bench_switch_opts[];

/* NQUEENS_OPT_N's largest board: the kernel knows the answers up to it. */
#define NQ_MAX 18
/* The number of placements of n queens, n = 0..NQ_MAX. */
extern const int64_t bench_nqueens_known[NQ_MAX + 1];

/* The kernels by name (not "calibrate", which has no options), NULL-name terminated. */
typedef struct bench_kernel_opts {
    const char *name;
    const bench_opt *opts;
} bench_kernel_opts;
extern const bench_kernel_opts bench_kernel_options[];

#endif
