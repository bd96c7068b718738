/* plan.h — a configuration expanded into cells (benchmark x variant x workers) and runs (a
 * cell's repetitions) in the configured order: the stage that sweeps, A/B comparisons and
 * cluster shards share.  See sweep.h for the orders. */
#ifndef HX_RUN_PLAN_H
#define HX_RUN_PLAN_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "harness/config/config.h"

typedef struct hx_plan_cell {
    char id[200];          /* "<benchmark>|<variant>|<P>", "calibrate|<variant>|<P>" */
    const hx_bench *bench; /* NULL for a calibrate cell */
    const hx_variant *var;
    unsigned workers, reps, warmup;
    unsigned preps;        /* timed repetitions inside each run: the driver's --reps (the config's
                              "process_reps"); 1 for a command variant, whose command runs once */
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

#endif
