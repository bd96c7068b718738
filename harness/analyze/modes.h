/* modes.h — is a cell one distribution?  Two tests on the runs (processes) of one cell.
 *
 * A run is one driver process; its "times" (the driver's --reps) are its repetitions.  A cell
 * is flagged when
 *   between-process  its processes disagree far beyond the spread of the repetitions inside
 *                    each: a one-way random-effects ANOVA on log times with the processes as
 *                    groups (F = MSB / MSW, p from GSL's gsl_cdf_fdist_Q) says p < HX_MODES_ALPHA,
 *                    *and* the between-process standard deviation of log time
 *                    sd_b = sqrt(max(0, MSB - MSW) / n0) is at least HX_MODES_SD_FLOOR and
 *                    HX_MODES_SD_RATIO times the within-process one sqrt(MSW) (an effect-size
 *                    floor: a significant 1% between processes on a quiet machine is no flag).
 *                    Needs HX_MODES_MIN_GROUPS runs with at least 2 repetitions each;
 *   bimodal          its runs form two clusters: the best 2-means split of the runs' log times
 *                    (the median of each run's repetitions, as time_s; in one dimension the best
 *                    split is contiguous, so every cut of the sorted values is tried), each
 *                    cluster with at least 2 runs, has Ashman's D = sqrt(2) |m2 - m1| /
 *                    sqrt(s1^2 + s2^2), the two variances pooled (|m2 - m1| / s), at least
 *                    hx_modes_d_critical(k) (what one normal sample of k runs exceeds once in
 *                    1,000) and centres at least HX_MODES_RATIO_MIN apart (exp(m2 - m1)).
 *                    Needs 4 runs (6 to see a 3x split of 12 runs' kind).
 * A cell neither test flags is "ok" if it has at least HX_MODES_MIN_RUNS successful runs, else
 * "too-few" (too few runs to tell).  docs/compare.md says why these tests and thresholds, and
 * their false-positive rate on synthetic unimodal cells (tests/test_compare.c). */
#ifndef HX_MODES_H
#define HX_MODES_H

#include <stddef.h>

#include "harness/results/summary.h" /* (the verdict, hx_modes, and its names) */

#define HX_MODES_ALPHA 0.001    /* level of the F test (per cell: a sweep has many) */
#define HX_MODES_SD_FLOOR 0.05  /* between-process SD of log time (about 5%) below which no flag */
#define HX_MODES_SD_RATIO 2.0   /* ... and it must be this many times the within-process SD */
#define HX_MODES_RATIO_MIN 1.10 /* the slow cluster's centre at least 10% above the fast one's */
#define HX_MODES_MIN_GROUPS 3   /* runs with >= 2 repetitions the F test needs */
#define HX_MODES_MIN_RUNS 6     /* runs a cell needs to be called "ok" */

/* Judges one cell: k runs, run i with time t[i] > 0 (its time_s) and nrep[i] repetitions
 * rep[i][0 .. nrep[i]) > 0 (as hx_stats_read_reps gives them; nrep and rep may be NULL: no
 * repetitions known, only the clusters are tested; a run with a repetition not > 0 is left out
 * of the F test, as a time not > 0 is out of both).  Nothing is kept; out is filled. */
void hx_modes_judge(const double *t, size_t k, const size_t *nrep, double *const *rep, hx_modes *out);

/* The D a cell of k runs must reach to be called bimodal: the 99.9% quantile of the best
 * split's D over normal samples of k runs (a table for k = 4..40, simulated; INFINITY below 4). */
double hx_modes_d_critical(size_t k);

/* 1 if the verdict says the cell is not one distribution (between-process or bimodal). */
int hx_modes_flagged(hx_modes_verdict v);

/* One sentence for people: why the cell was flagged and its modes ("two clusters: 5 runs at
 * 0.102 s, 7 at 0.300 s (2.94x apart, Ashman's D 23)"), or what "ok"/"too-few" means.  Into
 * buf; returns buf. */
const char *hx_modes_describe(const hx_modes *m, char *buf, size_t len);

#endif
