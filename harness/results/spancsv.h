/* spancsv.h — the rows of DIR/span.csv (written by `forkscope span` and a sweep's "span",
 * harness/run/span.c, in the format results.h and run/span.h give) read back: by the sweep
 * to resume, by report.md and the plots for the bounds. */
#ifndef HX_RESULTS_SPANCSV_H
#define HX_RESULTS_SPANCSV_H

#include <stddef.h>

/* A row of DIR/span.csv, read back. */
typedef struct hx_spancsv_row {
    char benchmark[64], kernel[16], status[16], method[96];
    int resolved;
    double work_s, min_work_s, span_s, burdened_span_s, burden_s, parallelism, burdened_parallelism;
    double strands, forks, strand_parallelism, bound_parallelism;
} hx_spancsv_row;

/* Reads DIR/span.csv into *rows (malloc'd).  0 (n = 0 if there is no file), or -EINVAL with
 * the reason in err (a missing column, a bad number on line N). */
int hx_spancsv_load(const char *dir, hx_spancsv_row **rows, size_t *n, char *err, size_t errlen);

#endif
