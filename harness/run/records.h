/* records.h — the runs' records: a finished run's record built, a driver's stdout turned into
 * numbers, DIR/raw.jsonl read back (the format is results/results.h's). */
#ifndef HX_RUN_RECORDS_H
#define HX_RUN_RECORDS_H

#include <jansson.h>
#include <stddef.h>

#include "harness/run/launch.h"
#include "harness/run/plan.h"

/* A bench driver's stdout (bench/driver.c): *doc its JSON object (new reference, NULL if
 * it is not one), *time_s and *cpu_s the medians of its "times" and "cpu_times" (NaN if
 * absent or not all finite numbers).  Returns HX_DRIVER_OK, or what is wrong with it. */
enum { HX_DRIVER_OK, HX_DRIVER_NO_OUTPUT, HX_DRIVER_UNPARSABLE, HX_DRIVER_WRONG, HX_DRIVER_NO_TIMES };
int hx_records_driver_output(const char *out, size_t len, json_t **doc, double *time_s, double *cpu_s);

/* Reads DIR/raw.jsonl: every complete line must be a JSON object with a string "run_id"; an
 * incomplete last line (no '\n') is cut off the file if fix (resuming), else ignored (a
 * reader beside a sweep that is still writing).  Returns the records (a JSON array, new
 * reference) or NULL with a message on stderr (*why set to HX_EIO).  A missing file gives
 * an empty array. */
json_t *hx_records_read_raw(const char *path, int fix, int *why);

/* A run's status as raw.jsonl's "status" spells it (results.h), and back (HX_ST_ERROR for a
 * name that is none of them). */
enum { HX_ST_OK, HX_ST_WRONG, HX_ST_CRASH, HX_ST_TIMEOUT, HX_ST_MEMORY, HX_ST_ERROR, HX_NSTATUS };
extern const char *const hx_status_names[HX_NSTATUS];
int hx_status_index(const char *name);

/* What a record says of the sweep beside its run: the limits it ran under (for the notes of a
 * run stopped at one), the launcher's memory mechanism, the host (NULL: none recorded). */
typedef struct hx_record_ctx {
    double time_limit_s;
    unsigned long long memory_limit_mib;
    const char *mechanism;
    const char *host;
} hx_record_ctx;
/* The record (results.h's raw.jsonl line) of run `rep` of cell c, which r describes and which
 * started at `started` (epoch seconds): its status judged from how the process ended, the
 * driver's output (or a command variant's answer and time), with the stderr tail made valid
 * UTF-8 in place.  A new reference. */
json_t *hx_records_make(const hx_record_ctx *x, const hx_plan_cell *c, unsigned rep, const hx_run_res *r,
                        double started);

#endif
