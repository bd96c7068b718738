/* options.h — what a benchmark kernel says about itself: its description (bench_desc), read
 * by the bench drivers (bench.h's bench_kernel points to it) and by the harness, which learns
 * every kernel from it and names none.
 *
 * A kernel is one file (kernels/NAME.c, uts/uts.c): at its top the description, pure data and
 * pure functions; below, under #if !BENCH_DESCRIBE_ONLY, the versions each driver runs.  The
 * harness links every kernel file compiled with -DBENCH_DESCRIBE_ONLY=1, so that it needs no
 * built driver.  BENCH_KERNEL_LIST below is the one other place a kernel is named. */
#ifndef FK_BENCH_OPTIONS_H
#define FK_BENCH_OPTIONS_H

#include <stddef.h>
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

#define BENCH_MAX_OPTS 16

/* Option values, in the order of the kernel's option table: i[] and d[] both hold a number
 * (an integer option's d is its value as a double, a real one's i its truncation), s[] a
 * choice (pointing into the text it was parsed from). */
typedef struct bench_vals {
    int64_t i[BENCH_MAX_OPTS];
    double d[BENCH_MAX_OPTS];
    const char *s[BENCH_MAX_OPTS];
} bench_vals;

/* What the paper says of a benchmark of this kernel at 112 cores: `params` is matched against
 * the benchmark's params as report.md renders them ("n=42 eps=1e-09"), as a whole word, or
 * as a word's start where it ends in a space ("preset=T1 " is T1, not T1L). */
typedef struct bench_paper {
    const char *params, *text;
} bench_paper;

/* The plan's estimate of one run (harness/run/plan.c), before any has been measured. */
typedef struct bench_model {
    /* One timed repetition of the serial projection, in seconds (on a 2-core Xeon VM; roughly);
     * `serial`: the variant run is the serial projection itself (a kernel whose tasks block
     * costs a thread hand-off there, a fiber switch elsewhere). */
    double (*serial_s)(const bench_vals *v, int serial);
    double runtime; /* a runtime variant's (and a peer's) time over the serial projection's */
    double omp;     /* OpenMP's (libgomp; libomp twice that; TBB 0.4 times, at least 1) */
    double untimed; /* work outside the timing in each run (inputs, verification), in serial_s */
} bench_model;

enum bench_flag {
    BENCH_BLOCKS = 1, /* its tasks block on each other: only variants whose tasks can (fibers)
                         and the serial projection run it, and it has no fork-join DAG */
    BENCH_ICOUNT = 2, /* the kernel whose instructions per call a config's "instructions"
                         counts (its task is named after it; fk-bench-* --kernel NAME --n N,
                         with icount_calls(N) task calls) */
    BENCH_MN = 4,     /* a workload of the M:N report (seeds/003): the tests take them as a group */
};

typedef struct bench_desc {
    const char *name;    /* [a-z0-9_]+, at most 15 characters */
    const char *summary; /* one line, for --list */
    const bench_opt *opts; /* terminated by an entry with name == NULL */
    unsigned flags;      /* bench_flag */
    /* The answer a run at v must give as one number (what the harness checks a runtime run
     * by command against; the kernel's own verify uses it too): 0 and *out (NaN where v has
     * none it knows), or NULL if a run's answer is not one number (matmul: a matrix). */
    int (*answer)(const bench_vals *v, double *out);
    double answer_rel_tol; /* how far a command's answer may be from it, relative (0: exact) */
    /* Non-NULL: its memory is its input (the power law of memory does not describe it): the
     * memory fit's note, and report.md and the plots set its memory apart. */
    const char *memory_is_input;
    bench_model model;
    const bench_paper *paper; /* the paper's words, {NULL} terminated; NULL: none */
    /* BENCH_ICOUNT: the task calls a run at --n N makes (fib: 2 fib(N + 1) - 1). */
    double (*icount_calls)(int64_t n);
    /* Small cases, each "OPTION=VALUE ..." ("": the defaults), NULL-terminated, at least one:
     * verified on every variant and baseline at 1-4 workers (tests/test_kernels.c), so they
     * must run in well under a second. */
    const char *const *small;
    /* Non-NULL: `forkscope span` calibrates the burden of a steal on this kernel, run with
     * these options ("OPTION=VALUE ...", as a small case): a fork-join of two equal pieces of work much longer
     * than a steal, repeated (harness/run/span.c).  One kernel says so. */
    const char *span_calibrate;
} bench_desc;

/* The kernels, in the order --list and the harness show them: each X(name) refers to the
 * bench_desc bench_<name>_desc of its file (and, in a driver, the bench_kernel bench_<name>). */
#define BENCH_KERNEL_LIST(X)                                                                \
    X(fib) X(integrate) X(matmul) X(nqueens) X(uts) X(balanced) X(imbalanced) X(heat) X(bfs)  \
    X(mergesort) X(switch) X(skynet) BENCH_EXTRA_KERNELS(X)

/* Kernels from outside the tree: the Makefile's EXTRA_KERNELS defines this as X(name) ... */
#ifndef BENCH_EXTRA_KERNELS
#define BENCH_EXTRA_KERNELS(X)
#endif
#define BENCH_DECLARE_DESC_(k) extern const bench_desc bench_##k##_desc;
BENCH_KERNEL_LIST(BENCH_DECLARE_DESC_)

/* Every kernel's description, in the list's order, NULL-terminated; one by name (NULL if none). */
extern const bench_desc *const bench_descs[];
const bench_desc *bench_desc_find(const char *name);

/* The index of option `name` in opts, or -1. */
int bench_opt_find(const bench_opt *opts, const char *name);
/* Parses and checks option idx of opts (named flag in messages) from text into v; 0, or -1
 * with a message naming the option in err. */
int bench_vals_set(const bench_opt *opts, bench_vals *v, int idx, const char *flag, const char *val, char *err,
                   size_t errlen);
/* Sets every option of opts to its default; 0, or -1 with the message in err (a default out
 * of its own range: the table is wrong). */
int bench_vals_defaults(const bench_opt *opts, bench_vals *v, char *err, size_t errlen);

/* NQUEENS' largest board: its table of answers goes up to it (peers size their buffers by it). */
#define NQ_MAX 18
/* skynet's widest fan-out (its option's limit; the peers size their arrays by it) */
#define SKYNET_MAX_FANOUT 10

#endif
