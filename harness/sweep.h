/* sweep.h — `forkscope run`: expand a configuration into runs, run them, record them.
 *
 * The plan: cells = benchmark x variant x workers (the serial variant only at P = 1),
 * plus, if "calibrate" is on, one calibrate cell per variant x workers with as many
 * repetitions as that variant's cells.  Each repetition is one run: a fresh driver
 * process with --reps 1 --warmup W, started through the launcher (harness/launch.h), and
 * one line of DIR/raw.jsonl (harness/results.h), appended and fsync'd when it ends.
 * Runs go in the configured order: grouped (cell by cell), interleaved (repetition 0 of
 * every cell, then repetition 1, ...), shuffled (a permutation seeded by "seed"), or paired
 * (round by round, the variants of each benchmark x P back to back in an order drawn from
 * "seed" for every round: what `forkscope compare` pairs).
 *
 * --resume continues a sweep: DIR/config.json must equal the given file byte for byte;
 * runs whose run_id is in DIR/raw.jsonl are skipped; a last line cut short by a kill is
 * cut away first.  SIGINT / SIGTERM kill the running driver, keep raw.jsonl whole, print
 * how to resume and end with HX_EINTERRUPTED.
 *
 * hx_sweep_run goes through stages, each a function of sweep.c: open (configuration, plan),
 * reconcile (what the directory holds, checked against --resume), account (earlier records
 * to their cells), start (launcher, signals, config.json, env.json, raw.jsonl), run a
 * shard (a slice of the plan's runs, skipping those recorded), finish (totals, instruction
 * counts). */
#ifndef HX_SWEEP_H
#define HX_SWEEP_H

#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "harness/config.h"
#include "harness/launch.h"

/* ---- the plan: the stage that A/B comparisons and cluster shards reuse ------------------- */

typedef struct hx_plan_cell {
    char id[200];          /* "<benchmark>|<variant>|<P>", "calibrate|<variant>|<P>" */
    const hx_bench *bench; /* NULL for a calibrate cell */
    const hx_variant *var;
    unsigned workers, reps, warmup;
    int oversub;           /* workers > the configuration's cores */
    char driver[PATH_MAX];
    double est_s;          /* estimated wall time of one run */
    int est_measured;      /* est_s comes from earlier results */
    /* progress, filled while a sweep accounts its records */
    unsigned done, fails[6]; /* fails[status index], results.h's order: ok, wrong, crash, ... */
    double *times;         /* time_s of the ok runs */
    unsigned ntimes;
} hx_plan_cell;

/* One run of the plan: repetition rep of cell cells[cell]; its run_id is "<cell id>#<rep>". */
typedef struct hx_planned_run {
    uint32_t cell, rep;
} hx_planned_run;

typedef struct hx_plan {
    hx_plan_cell *cells; /* calibrate cells first (ncalib of them), then benchmark x variant x P */
    size_t ncells, ncalib;
    hx_planned_run *runs; /* every run, in the configured order */
    size_t nruns;
    size_t nskipped_serial; /* serial cells left out at P > 1 */
    size_t nskipped_command; /* cells of command variants without a command for the kernel */
    size_t nskipped_peer;    /* cells of peers on kernels their driver has no version of */
    size_t nskipped_blocking; /* cells of kernels that need tasks that block (switch) on variants
                                 whose tasks cannot (all but child-fiber-* and serial) */
} hx_plan;

/* Expands cfg into cells and runs (the order: grouped, interleaved or shuffled by cfg->seed,
 * the same on every machine).  0, or HX_EINTERNAL if the cells outgrow their count (a
 * bug; p is then partly filled).  Free p with hx_plan_free either way. */
int hx_plan_build(const hx_config *cfg, hx_plan *p);
/* The built-in estimate of one run of a cell, in seconds (no earlier results). */
double hx_plan_estimate(const hx_plan_cell *c, unsigned cores);
void hx_plan_free(hx_plan *p);

typedef struct hx_sweep_opts {
    const char *config_path;
    const char *outdir; /* NULL: results/<experiment name> */
    int resume;
    int dry_run;           /* print the plan and the estimate; run nothing */
    int live_progress;     /* 1 live line, 0 plain lines, -1 if stderr is a terminal */
    hx_launcher *launcher; /* NULL: started here (start it early if this process grows) */
    FILE *plan_out;        /* where --dry-run prints the plan (NULL: stdout) */
    double effect, cv;     /* --dry-run's power calculation: the change to detect and the
                              noise assumed without earlier runs (fractions; 0: 5% and 3%) */
    /* A shard (harness/slurm.h): only the runs of these cells (ids), in the plan's order;
     * NULL: every run. */
    const char *const *only_cells;
    size_t nonly_cells;
    const char *host;      /* if not NULL, every record gets "host": this (which node ran it) */
    int no_instructions;   /* skip the "instructions" counts and the "span" measurements (a shard
                              leaves them to the merge) */
    unsigned cores;        /* the cores the configuration expands with ("cores", oversubscription);
                              0: this machine's online CPUs */
} hx_sweep_opts;

/* Runs (or, with dry_run, plans) the sweep.  The results directory used is written to dir
 * (if not NULL).  Returns 0 (every run ok), HX_ERUNS_FAILED (the sweep finished, some runs
 * failed: counted over the whole raw.jsonl), HX_ECONFIG, HX_EIO, HX_EUSAGE (results exist
 * and no --resume), HX_ETOOL (a driver cannot be executed), HX_EINTERRUPTED or
 * HX_EINTERNAL; messages go to stderr. */
int hx_sweep_run(const hx_sweep_opts *o, char *dir, size_t dirlen);

/* A bench driver's stdout (bench/driver.c): *doc its JSON object (new reference, NULL if
 * it is not one), *time_s and *cpu_s the medians of its "times" and "cpu_times" (NaN if
 * absent or not all finite numbers).  Returns HX_DRIVER_OK, or what is wrong with it. */
enum { HX_DRIVER_OK, HX_DRIVER_NO_OUTPUT, HX_DRIVER_UNPARSABLE, HX_DRIVER_WRONG, HX_DRIVER_NO_TIMES };
int hx_driver_output(const char *out, size_t len, json_t **doc, double *time_s, double *cpu_s);

/* Reads DIR/raw.jsonl: every complete line must be a JSON object with a string "run_id"; an
 * incomplete last line (no '\n') is cut off the file if fix (resuming), else ignored (a
 * reader beside a sweep that is still writing).  Returns the records (a JSON array, new
 * reference) or NULL with a message on stderr (*why set to HX_EIO).  A missing file gives
 * an empty array. */
json_t *hx_sweep_read_raw(const char *path, int fix, int *why);

#endif
