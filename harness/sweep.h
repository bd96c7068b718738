/* sweep.h — `forkscope run`: expand a configuration into runs, run them, record them.
 *
 * The plan: cells = benchmark x variant x workers (the serial variant only at P = 1),
 * plus, if "calibrate" is on, one calibrate cell per variant x workers with as many
 * repetitions as that variant's cells.  Each repetition is one run: a fresh driver
 * process with --reps 1 --warmup W, started through the launcher (harness/launch.h), and
 * one line of DIR/raw.jsonl (harness/results.h), appended and fsync'd when it ends.
 * Runs go in the configured order: grouped (cell by cell), interleaved (repetition 0 of
 * every cell, then repetition 1, ...), or shuffled (a permutation seeded by "seed").
 *
 * --resume continues a sweep: DIR/config.json must equal the given file byte for byte;
 * runs whose run_id is in DIR/raw.jsonl are skipped; a last line cut short by a kill is
 * cut away first.  SIGINT / SIGTERM kill the running driver, keep raw.jsonl whole, print
 * how to resume and end with HX_EXIT_INTERRUPTED. */
#ifndef HX_SWEEP_H
#define HX_SWEEP_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "harness/launch.h"

typedef struct hx_sweep_opts {
    const char *config_path;
    const char *outdir; /* NULL: results/<experiment name> */
    int resume;
    int dry_run;           /* print the plan and the estimate; run nothing */
    int live_progress;     /* 1 live line, 0 plain lines, -1 if stderr is a terminal */
    hx_launcher *launcher; /* NULL: started here (start it early if this process grows) */
    FILE *plan_out;        /* where --dry-run prints the plan (NULL: stdout) */
} hx_sweep_opts;

/* Runs (or, with dry_run, plans) the sweep.  The results directory used is written to dir
 * (if not NULL).  Returns HX_EXIT_OK (every run ok), HX_EXIT_RUNS_FAILED (the sweep
 * finished, some runs failed: counted over the whole raw.jsonl), HX_EXIT_CONFIG,
 * HX_EXIT_IO, HX_EXIT_USAGE (results exist and no --resume), HX_EXIT_TOOL (a driver cannot
 * be executed), HX_EXIT_INTERRUPTED or HX_EXIT_INTERNAL; messages go to stderr. */
int hx_sweep_run(const hx_sweep_opts *o, char *dir, size_t dirlen);

/* Reads DIR/raw.jsonl for resuming: every complete line must be a JSON object with a
 * string "run_id"; an incomplete last line (no '\n') is cut off the file.  Returns the
 * records (a JSON array, new reference) or NULL with a message on stderr (*why set to
 * HX_EXIT_IO).  A missing file gives an empty array. */
json_t *hx_sweep_read_raw(const char *path, int *why);

#endif
