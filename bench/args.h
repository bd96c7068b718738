/* args.h — the bench driver's command line, parsed without exiting (the driver exits on a
 * bad one; the fuzz target feeds it anything). */
#ifndef FK_BENCH_ARGS_H
#define FK_BENCH_ARGS_H

#include <stddef.h>

#include "bench/bench.h"

/* The span build's default burden: Cilkscale's 15,000 cycles, at 3 GHz. */
#define BENCH_SPAN_BURDEN_NS 5000.0

typedef struct bench_cli {
    unsigned reps, warmup;
    int uts_mode;        /* "uts" came first: the UTS reference's flags and summary line */
    const char *sched;   /* busy|lazy */
    const char *resume;  /* fiber builds: any|home; NULL if not given */
    const char *promote; /* runtime builds but fibers: thief|beat; NULL if not given (FORKSCOPE_PROMOTE's) */
    unsigned beat_us;    /* --beat-us, 1 us .. 10 s; 0 if not given (FORKSCOPE_BEAT_US's) */
    const char *papi;    /* events to count, comma-separated, or NULL */
    int papi_per_worker; /* 0|1 */
    int span_strands;    /* the span build: costs in strands (1) or ns (0) */
    double burden_ns;    /* the span build: a steal's burden on a fork (time), ns */
    double burden_strands; /* the same counted in strands (--span-unit strands; default 0) */
    int burden_given;      /* 1: --burden-ns, 2: --burden-strands (each needs its unit) */
    int account;           /* runtime variants: an fk_account (--account), or -1: the environment's */
    const char *trace;     /* runtime variants: write the timeline here (Chrome trace JSON) */
} bench_cli;

enum { BENCH_CLI_RUN = 0, BENCH_CLI_HELP = 1, BENCH_CLI_LIST = 2, BENCH_CLI_KERNELS = 3, BENCH_CLI_ERROR = -1 };

/* Parses argv: the kernel ("uts" first, or --kernel NAME anywhere), then every option as
 * --name VALUE or --name=VALUE (one dash will do), each checked against the kernel's table
 * (bench/options.h) or the driver's own.  Fills c->kernel, c's option values (defaults
 * first) and c->workers, and *cli.  Returns BENCH_CLI_RUN; BENCH_CLI_HELP, BENCH_CLI_LIST or
 * BENCH_CLI_KERNELS for --help / --list / --kernels; or BENCH_CLI_ERROR with a one-line
 * message in err naming the option.
 * Values point into argv. */
int bench_cli_parse(int argc, char **argv, bench_ctx *c, bench_cli *cli, char *err, size_t errlen);

#endif
