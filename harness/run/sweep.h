/* sweep.h — `forkscope run`: expand a configuration into runs, run them, record them.
 *
 * The plan: cells = benchmark x variant x workers (the serial variant only at P = 1),
 * plus, if "calibrate" is on, one calibrate cell per variant x workers with as many
 * repetitions as that variant's cells.  Each repetition is one run: a fresh driver
 * process with --reps R --warmup W ("process_reps", "warmup"; R is 1 unless the config
 * says, and the run's time_s is the median of its R), started through the launcher (harness/run/launch.h), and
 * one line of DIR/raw.jsonl (harness/results/results.h), appended and fsync'd when it ends.
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

#include "harness/config/config.h"
#include "harness/run/launch.h"

#include "harness/run/plan.h"

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
    /* A shard (harness/cluster/slurm.h): only the runs of these cells (ids), in the plan's order;
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

#endif
