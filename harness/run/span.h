/* span.h — `forkscope span` (harness/run/span.c): work, span and parallelism of a kernel, from the
 * span build's driver, and the speedup bounds at given worker counts. */
#ifndef HX_SPAN_H
#define HX_SPAN_H

#include "harness/config/config.h"
#include "harness/run/launch.h"

/* argv[0] is "span"; returns 0 or an HX_E* code (messages on stderr). */
int hx_cmd_span(int argc, char **argv);

/* The sweep's "span" (config key): after the timed runs, the span build measures each
 * benchmark that "span" names, on one worker, and appends a row to DIR/span.csv:
 *   benchmark,kernel,status,note,burden_from,unit,method,resolved,reps,work_s,min_work_s,span_s,
 *   burdened_span_s,burden_s,parallelism,burdened_parallelism,strands,forks,
 *   strand_parallelism,bound_parallelism
 * status: ok | wrong (the answer did not verify) | unsupported (switch, whose tasks block on
 * each other: not run; note says why) | timeout | memory | crash | error.  Times in seconds (the
 * driver's ns); parallelism = strand-median work / span; strand_parallelism: the DAG's in
 * strands (every strand alike); bound_parallelism: what the bounds use -- parallelism if
 * resolved (the clock resolved the strands), else strand_parallelism; not resolved, the
 * times (work_s, min_work_s, span_s, burdened_span_s) and parallelism, burdened_parallelism
 * are empty (they mean nothing; docs/span.md); burden_from: "given",
 * "the default" (the driver's, 5000 ns; with the reason if a calibration failed) or
 * "calibrated on V: ..." (hx_span_calibrate_burden).
 * A benchmark with an ok or unsupported row is not measured again (a resumed sweep); a failed
 * one is, and its new row comes after the old (readers take the last).  A last line without
 * its newline (a crash while writing) is dropped.  Returns 0; HX_ERUNS_FAILED if a
 * measurement failed (the others are still made), or span.csv cannot be used; HX_ETOOL if
 * the driver cannot be found (all said on stderr); or HX_EINTERRUPTED. */
int hx_span_sweep(const hx_config *cfg, const char *dir, hx_launcher *l, int intr_fd);

/* A steal's cost on the critical path, measured on runtime variant `variant` (its driver, a
 * variant whose tasks fork and join: not a baseline, not a fiber variant): the balanced
 * workload with two equal busy loops of ~0.15 ms, 200 repetitions of a fork-join of the two;
 * three pairs of processes at P = 1 then P = 2 (each the median of its repetitions), a pair's
 * burden T2 - T1 / 2, the median of the pairs kept (at least 0) and their range reported.
 * Needs two CPUs to run on; refused (HX_ERUNS_FAILED) if two workers took more than 0.9 of
 * one's time (no steal was timed: a loaded machine).  Returns 0 and fills *out;
 * HX_EINTERRUPTED; or HX_EUSAGE, HX_ETOOL, HX_ERUNS_FAILED with the reason in why. */
typedef struct hx_burden {
    double ns, lo, hi; /* the median pair's burden (>= 0) and the pairs' range, ns */
    double t1, t2;     /* the medians of the pairs' times, s */
    char variant[32];
} hx_burden;
int hx_span_calibrate_burden(const char *variant, hx_launcher *l, int intr_fd, hx_burden *out, char *why,
                             size_t whylen);
/* "calibrated on V: median of 3 pairs B ns (LO to HI), T1 .. us, T2 .. us a fork-join" */
void hx_span_burden_describe(const hx_burden *b, char *buf, size_t len);

#endif
