/* summary.h — DIR/summary.csv and DIR/fits.csv (results.h gives their columns): the rows
 * `forkscope fit` derives and `forkscope plot`, compare and report read back, the types
 * that hold them, and the one-distribution verdict each row carries (analyze/modes.h judges
 * it; here is what it is and how summary.csv spells it).
 *
 * CSV: RFC 4180 (a field with a comma, quote or newline is quoted, quotes doubled); numbers
 * with 10 significant digits; a missing value (NaN) is an empty field.  Readers find columns
 * by their header name, so a hand-edited file may reorder or drop optional columns. */
#ifndef HX_RESULTS_SUMMARY_H
#define HX_RESULTS_SUMMARY_H

#include <stddef.h>

/* ---- a cell's verdict: one distribution or not (analyze/modes.h) --------------------------- */

typedef enum hx_modes_verdict {
    HX_MODES_NONE,    /* no successful run: nothing to judge ("" in summary.csv) */
    HX_MODES_OK,      /* one distribution, as far as the tests can tell */
    HX_MODES_TOO_FEW, /* fewer than HX_MODES_MIN_RUNS runs, and neither test flags */
    HX_MODES_BETWEEN, /* the processes disagree beyond their repetitions (not two clusters) */
    HX_MODES_BIMODAL, /* the runs form two clusters */
    HX_MODES_N
} hx_modes_verdict;

typedef struct hx_modes {
    hx_modes_verdict verdict;
    size_t runs;              /* runs judged */
    size_t groups;            /* runs with >= 2 repetitions, all > 0 (the F test's groups) */
    double p;                 /* the F test's p-value; NaN without HX_MODES_MIN_GROUPS groups */
    double sd_between, sd_within; /* of log time (about relative); NaN likewise */
    double d, ratio;          /* Ashman's D (capped at 1000) and the centres' ratio of the best
                                 split; NaN with fewer than 4 runs */
    double median[2];         /* the clusters' median times (fast, slow), the time's unit; NaN
                                 unless bimodal */
    size_t n[2];              /* and their runs */
} hx_modes;

/* "ok", "too-few", "between-process", "bimodal"; "" for HX_MODES_NONE. */
const char *hx_modes_name(hx_modes_verdict v);
/* The verdict a name says; HX_MODES_NONE for "" or an unknown name. */
hx_modes_verdict hx_modes_parse(const char *name);

/* ---- summary.csv ----------------------------------------------------------------------------- */

/* The parts of a breakdown ("breakdown" in a config: results.h), in summary.csv's order: the
 * runtime's categories (fk_time_cat), then their sum, the workers' wall time. */
enum {
    HX_BD_WORK, HX_BD_SEARCH, HX_BD_STEAL, HX_BD_JOIN, HX_BD_WAIT, HX_BD_FIBER, HX_BD_SLEEP, HX_BD_PROMOTE, HX_BD_WALL, HX_BD_N
};
extern const char *const hx_bd_names[HX_BD_N]; /* "work", ..., "wall" */

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
    double promotions_per_s; /* forkscope's runtime variants: publications of private forks (a
                                thief's request answered, a beat's promotion, and under
                                continuation stealing a stolen frame's publication of its own
                                forks; forced ones are not counted) per second of the timed repetitions, the median over the runs
                                (the drivers' stats.publishes); NAN for others */
    double promotion_ns; /* τ, a promotion's measured cost: the breakdown's promote time over the
                            publications, ns, the median over the runs that have both; NAN
                            without a breakdown or a publication */
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

/* Frees everything s holds and empties it. */
void hx_summary_free(hx_summary *s);

/* ---- fits.csv ---------------------------------------------------------------------------------- */

/* One memory fit, MRSS ~ a + b*M1*P^n (analyze/fit.h), a row of fits.csv. */
typedef struct hx_fit {
    char *benchmark, *variant; /* owned (NULL from hx_fit_power_law) */
    int ok;                    /* 1: status "ok"; 0: "skipped", why in note */
    int points;                /* points used */
    double m1;                 /* KiB; NaN if none */
    double a, a_se, b, b_se, n, n_se, chi2_dof; /* a in KiB; NaN where not determined */
    char note[320];
} hx_fit;

/* Frees n fits and the array. */
void hx_fit_free_all(hx_fit *fits, size_t n);

/* ---- the files ---------------------------------------------------------------------------------- */

/* Writes the summary's cells as summary.csv (results.h's columns, in order) to path,
 * through a temporary file renamed into place.  Returns 0 or -errno. */
int hx_summary_write(const char *path, const hx_summary *s);

/* Writes fits.csv (results.h's columns) likewise.  Returns 0 or -errno. */
int hx_fits_write(const char *path, const hx_fit *fits, size_t n);

/* Reads a summary.csv into out->cells (out->benches from them, params ""; no failures or
 * warnings).  Returns 0; -errno if it cannot be read; -EINVAL if it is not a summary (err
 * says why: a required column missing, a bad number on line N).  Free with hx_summary_free. */
int hx_summary_read(const char *path, hx_summary *out, char *err, size_t errlen);

/* Reads a fits.csv; *fits malloc'd (free with hx_fit_free_all).  Returns as above. */
int hx_fits_read(const char *path, hx_fit **fits, size_t *n, char *err, size_t errlen);

#endif
