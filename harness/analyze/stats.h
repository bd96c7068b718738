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

/* The parts of a breakdown ("breakdown" in a config: results.h), in summary.csv's order: the
 * runtime's categories (fk_time_cat), then their sum, the workers' wall time. */
enum { HX_BD_WORK, HX_BD_SEARCH, HX_BD_STEAL, HX_BD_JOIN, HX_BD_WAIT, HX_BD_FIBER, HX_BD_SLEEP, HX_BD_WALL, HX_BD_N };
extern const char *const hx_bd_names[HX_BD_N]; /* "work", ..., "wall" */
/* A raw.jsonl record's breakdown (its driver's "breakdown" seconds over the driver's timed
 * repetitions) per repetition into bd[HX_BD_N]: 1; 0 if the record has none; -1 if it is
 * malformed. */
typedef struct json_t json_t;
int hx_stats_read_breakdown(json_t *record, double *bd);
/* A raw.jsonl record's repetitions (its driver's "times", the process's --reps; each a number
 * > 0) into *out, allocated (the caller frees it): their count.  0 and *out NULL if the driver
 * printed no such array, it is empty, or any entry is not a positive number.  Every reader of
 * the repetitions (summary.csv, compare, a dry run's modes) reads them here. */
size_t hx_stats_read_reps(json_t *record, double **out);

/* One row of summary.csv: a cell of kind "timed" (benchmark, variant, workers), with its
 * calibrate cell folded in.  Field names and meanings are results.h's columns. */
typedef struct hx_cell {
    char *benchmark, *kernel, *variant; /* owned */
    long workers;
    int oversubscribed; /* any of its runs said so */
    int n_ok, n_failed;
    char *failures; /* owned; "" or "timeout:2;crash:1" (most frequent first) */
    double time_median, time_mean, time_sd, time_se, time_min, time_max;
    double mrss_median, mrss_se, calib_median, calib_se, mem, mem_se;
    double speedup, speedup_se, efficiency, efficiency_se;
    double cpu_median, cpu_se; /* CPU seconds of the timed repetition, NAN if not recorded */
    double span_bound, burdened_bound; /* from DIR/span.csv (span.h): min(P, parallelism) and the
                                          burdened estimate at this P; NAN if not measured */
    double bd[HX_BD_N]; /* where the workers' time went, s per repetition summed over the
                           workers, the mean over the runs that measured it; NAN if none did */
    double inflation_ts, inflation_t1; /* bd[HX_BD_WORK] / T_s and / the variant's T_1 (NAN
                                          without the breakdown or the time) */
    hx_modes modes; /* is the cell one distribution (modes.h): from its runs' time_s and their
                       drivers' "times" (each process's repetitions) */
} hx_cell;

/* Failed runs of one cell with one status (for report.md's list of failures). */
typedef struct hx_failure {
    char *benchmark, *variant, *status; /* owned; benchmark "calibrate" for calibrate cells */
    long workers;
    int count;
    char *last_stderr; /* owned; the last non-empty stderr line of the last such run, or "" */
} hx_failure;

/* Per benchmark: what report.md says about it beyond its cells. */
typedef struct hx_bench_info {
    char *name, *kernel, *params; /* owned; params rendered "n=42 eps=1e-09" (first run's) */
    long serial_workers;          /* the serial cell T_s came from, 0 if none */
} hx_bench_info;

/* Everything `forkscope fit` derives from raw.jsonl, before the fits. */
typedef struct hx_summary {
    hx_cell *cells; /* benchmarks in order of first appearance, then variants likewise, then
                     * workers ascending */
    size_t ncells;
    hx_failure *failures;
    size_t nfailures;
    hx_bench_info *benches;
    size_t nbenches;
    char **warnings; /* owned; one per skipped line or other oddity, already printed */
    size_t nwarnings;
    size_t lines, runs;    /* lines read (non-empty), runs used */
    size_t calib_runs;     /* calibrate runs with status ok */
    size_t uncalibrated;   /* timed cells with an MRSS but no calibrate cell to subtract */
    size_t se_missing;     /* cells with one successful run (no standard error) */
    size_t modes_flagged;  /* cells whose modes verdict is between-process or bimodal */
    size_t modes_too_few;  /* cells with too few runs to tell */
} hx_summary;

/* A benchmark's params object as report.md renders them, "k=v k=v" in the file's order
 * (hx_bench_info.params); malloc'd. */
char *hx_stats_render_params(const json_t *params);

/* Reads path (a raw.jsonl, see results.h) and reduces it to cells.  A line that is not valid
 * JSON, lacks a field this needs or has one of the wrong type is skipped with a warning that
 * names its line number (printed to `warn` if not NULL, prefixed by `prog`, and kept in
 * out->warnings); a last line without its newline that does not parse is reported as
 * truncated.  Returns 0, or -errno if the file cannot be read (out is then empty).  The
 * caller frees out with hx_stats_free. */
int hx_stats_load(const char *path, hx_summary *out, FILE *warn, const char *prog);

/* Computes every derived column of the cells in place: calibrated memory from mrss and the
 * calibrate columns, speedup/efficiency against the benchmark's serial cell.  hx_stats_load
 * calls it; exposed for callers that build cells by hand (tests). */
void hx_stats_derive(hx_summary *s);

void hx_stats_free(hx_summary *s);

/* Returns the index of the cell (benchmark, variant, workers) in s, or -1. */
long hx_stats_find(const hx_summary *s, const char *benchmark, const char *variant, long workers);

#endif
