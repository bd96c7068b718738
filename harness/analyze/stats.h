/* stats.h — descriptive statistics, and the reduction of DIR/raw.jsonl to one row per cell.
 *
 * A missing value is NaN everywhere in this module (a cell with no successful run, a
 * standard deviation of one sample, a speedup without a serial cell); the CSV writers turn
 * NaN into an empty field (see results.h). All numerics are in double. */
#ifndef HX_STATS_H
#define HX_STATS_H

#include <stddef.h>
#include <stdio.h>

#include "harness/analyze/modes.h"
#include "harness/results/summary.h" /* (the cells, hx_summary) */

/* ---- descriptive statistics --------------------------------------------------------------- */

/* One sample's summary.  sd is the sample standard deviation (n - 1 in the denominator),
 * se = sd / sqrt(n) the standard error of the mean; both NaN when n < 2.  Every field but n
 * is NaN when n == 0. */
typedef struct hx_sample {
    size_t n;
    double median, mean, sd, se, min, max;
} hx_sample;

/* Summarises x[0..n-1] (unchanged; a copy is sorted).  NaN entries must not be passed. */
void hx_stats_describe(const double *x, size_t n, hx_sample *out);

/* sqrt(a^2 + b^2): errors of independent quantities added in quadrature.  NaN if either is. */
double hx_stats_quadrature(double a, double b);

/* q = num / den, with q_se by first-order propagation (relative errors in quadrature):
 * q_se = |q| * sqrt((num_se/num)^2 + (den_se/den)^2).  q is NaN if either value is NaN or
 * den == 0; q_se is NaN if q or either error is NaN. */
void hx_stats_ratio(double num, double num_se, double den, double den_se, double *q, double *q_se);

/* ---- the cells of a results directory ---------------------------------------------------- */

/* The floor of calibrated memory, KiB: mem = max(mrss - calib, HX_STATS_MEM_FLOOR_KIB), as
 * the paper did (MRSS is quantised to 4 KiB pages). */
#define HX_STATS_MEM_FLOOR_KIB 4.0

/* A raw.jsonl record's breakdown (its driver's "breakdown" seconds over the driver's timed
 * repetitions) per repetition into bd[HX_BD_N]: 1; 0 if the record has none; -1 if it is
 * malformed.  bd[HX_BD_PROMOTE] is NAN for a driver before 0.24, which had no such part. */
typedef struct json_t json_t;
int hx_stats_read_breakdown(json_t *record, double *bd);
/* A raw.jsonl record's repetitions (its driver's "times", the process's --reps; each a number
 * > 0) into *out, allocated (the caller frees it): their count.  0 and *out NULL if the driver
 * printed no such array, it is empty, or any entry is not a positive number.  Every reader of
 * the repetitions (summary.csv, compare, a dry run's modes) reads them here. */
size_t hx_stats_read_reps(json_t *record, double **out);

/* A benchmark's params object as report.md renders them, "k=v k=v" in the file's order
 * (hx_bench_info.params); malloc'd. */
char *hx_stats_render_params(const json_t *params);

/* Reads path (a raw.jsonl, see results.h) and reduces it to cells.  A line that is not valid
 * JSON, lacks a field this needs or has one of the wrong type is skipped with a warning that
 * names its line number (printed to `warn` if not NULL, prefixed by `prog`, and kept in
 * out->warnings); a last line without its newline that does not parse is reported as
 * truncated.  Returns 0, or -errno if the file cannot be read (out is then empty).  The
 * caller frees out with hx_summary_free. */
int hx_stats_load(const char *path, hx_summary *out, FILE *warn, const char *prog);

/* Computes every derived column of the cells in place: calibrated memory from mrss and the
 * calibrate columns, speedup/efficiency against the benchmark's serial cell.  hx_stats_load
 * calls it; exposed for callers that build cells by hand (tests). */
void hx_stats_derive(hx_summary *s);

/* Returns the index of the cell (benchmark, variant, workers) in s, or -1. */
long hx_stats_find(const hx_summary *s, const char *benchmark, const char *variant, long workers);

#endif
