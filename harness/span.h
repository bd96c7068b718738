/* span.h — `forkscope span` (harness/span.c): work, span and parallelism of a kernel, from the
 * span build's driver, and the speedup bounds at given worker counts. */
#ifndef HX_SPAN_H
#define HX_SPAN_H

#include "harness/config.h"
#include "harness/launch.h"

/* argv[0] is "span"; returns 0 or an HX_E* code (messages on stderr). */
int hx_cmd_span(int argc, char **argv);

/* The sweep's "span" (config key): after the timed runs, the span build measures each
 * benchmark that "span" names, on one worker, and appends a row to DIR/span.csv:
 *   benchmark,kernel,status,note,burden_from,unit,method,resolved,reps,work_s,min_work_s,span_s,
 *   burdened_span_s,burden_s,parallelism,burdened_parallelism,strands,forks,
 *   strand_parallelism,bound_parallelism
 * status: ok | wrong (the answer did not verify) | unsupported (the span build cannot run
 * the kernel: note says why) | timeout | memory | crash | error.  Times in seconds (the
 * driver's ns); parallelism = strand-median work / span; strand_parallelism: the DAG's in
 * strands (every strand alike); bound_parallelism: what the bounds use -- parallelism if
 * resolved (the clock resolved the strands), else strand_parallelism; burden_from: "given",
 * "the default" (the driver's, 5000 ns) or "calibrated on V: ..." (hx_span_calibrate_burden).  A benchmark already
 * in the file is not measured again (a resumed sweep).  Returns 0, HX_ERUNS_FAILED if a
 * measurement failed (the others are still made), HX_EIO, or HX_EINTERRUPTED. */
int hx_span_sweep(const hx_config *cfg, const char *dir, hx_launcher *l, int intr_fd);

/* A steal's cost on the critical path, measured on runtime variant `variant` (its driver):
 * heat with two equal strips of a cache-sized grid, 2000 steps, each a fork of both strips
 * and a join, at P = 1 and P = 2 (medians of 7): burden = (T2 - T1 / 2) / steps, at least 0.
 * 0 and *burden_ns (and the two times, s), or -1 with the reason in why. */
int hx_span_calibrate_burden(const char *variant, double *burden_ns, double *t1, double *t2, char *why,
                             size_t whylen);

/* A row of DIR/span.csv, read back (report.c). */
typedef struct hx_span_row {
    char benchmark[64], kernel[16], status[16], method[40];
    int resolved;
    double work_s, min_work_s, span_s, burdened_span_s, burden_s, parallelism, burdened_parallelism;
    double strands, forks, strand_parallelism, bound_parallelism;
} hx_span_row;

/* Reads DIR/span.csv into *rows (malloc'd).  0 (n = 0 if there is no file), or -EINVAL with
 * the reason in err (a missing column, a bad number on line N). */
int hx_span_load(const char *dir, hx_span_row **rows, size_t *n, char *err, size_t errlen);

/* The work-span bound on the speedup at P workers, min(P, bound_parallelism), and the
 * burdened estimate min_work / (min_work / P + burdened span) (NAN unless the row is ok and
 * resolved). */
double hx_span_bound(const hx_span_row *r, double P);
double hx_span_burdened(const hx_span_row *r, double P);

#endif
