/* planprint.h — the plan as `forkscope run --dry-run` (and a sweep's start) prints it: its
 * cells, runs, estimates and what was skipped; for a paired sweep the rounds a comparison
 * needs; over earlier results, the cells that are not one distribution. */
#ifndef HX_PLANPRINT_H
#define HX_PLANPRINT_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "harness/config/config.h"
#include "harness/run/plan.h"

/* The plan p of cfg, into directory dir: already_done runs of it are in dir's raw.jsonl;
 * from_results: the estimates come from those runs. */
void hx_plan_print(FILE *out, const hx_config *cfg, const hx_plan *p, const char *dir, size_t already_done,
                   int from_results);
/* A paired or interleaved sweep: the rounds `forkscope compare` needs to detect a change of
 * `effect` (0: 5%) in the noisiest cell, at the noise of the earlier records `done` (a JSON
 * array of raw.jsonl's records), or at the CV `cv` (0: 3%) without them. */
void hx_plan_print_power(FILE *out, const hx_config *cfg, const hx_plan *p, json_t *done, double effect, double cv);
/* Over the earlier records `done`: how many planned cells are not one distribution (modes.h),
 * and which; nothing without earlier records. */
void hx_plan_print_modes(FILE *out, const hx_plan *p, json_t *done);
/* One line naming the command variants whose class asks for more than one repetition within
 * a process ("process_reps" does not reach a command), each line led by prefix; nothing if
 * none. */
void hx_plan_command_reps_note(FILE *out, const hx_config *cfg, const char *prefix);

#endif
