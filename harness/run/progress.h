/* progress.h — what a running sweep tells its user on stderr.
 *
 * On a terminal: one live line, rewritten in place, "cells d/t  runs d/t  CELL  elapsed
 * ETA"; messages (hx_progress_note) are printed above it.  Elsewhere (a log file, CI): one
 * plain line per finished cell with its median time and failures, so a log stays short. */
#ifndef HX_PROGRESS_H
#define HX_PROGRESS_H

#include <stddef.h>
#include <stdio.h>

typedef struct hx_progress hx_progress;

/* out: where to write (stderr); live: 1 live line, 0 plain lines, -1 isatty(out).
 * cells, runs: totals of the plan; cells_done, runs_done: already done (resume).  NULL if
 * out of memory. */
hx_progress *hx_progress_new(FILE *out, int live, size_t cells, size_t runs, size_t cells_done, size_t runs_done);

/* A run of cell is starting. */
void hx_progress_run_start(hx_progress *p, const char *cell);
/* A run finished (recorded). */
void hx_progress_run_done(hx_progress *p);
/* Refreshes the live line (elapsed, and how long the current run has been going); for
 * hx_run_req.tick.  Does nothing off a terminal. */
void hx_progress_tick(void *p);
/* Every run of cell is done: n_ok successful runs with median time median_s (< 0 if none),
 * failures "" or e.g. "timeout:2;crash:1". */
void hx_progress_cell_done(hx_progress *p, const char *cell, unsigned n_ok, unsigned n_failed, double median_s,
                           const char *failures);
/* A message line, kept above the live line. */
void hx_progress_note(hx_progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Ends the live line and frees p (NULL allowed). */
void hx_progress_finish(hx_progress *p);

/* "1 h 02 min", "3 min 05 s", "12.3 s" */
void hx_progress_duration(double s, char *buf, size_t len);

#endif
