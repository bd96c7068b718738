/* spancsv.c — DIR/span.csv read back (spancsv.h). */
#include "harness/results/spancsv.h"
#include "harness/util/csv.h"
#include "harness/util/errors.h"
#include "harness/util/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif


/* ---- DIR/span.csv -------------------------------------------------------------------- */

int hx_spancsv_load(const char *dir, hx_spancsv_row **rows, size_t *n, char *err, size_t errlen) {
    *rows = NULL;
    *n = 0;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/span.csv", dir);
    hx_csv_table t;
    int rc = hx_csv_load(path, &t);
    if (rc == -ENOENT)
        return 0;
    if (rc)
        return hx_errf(err, errlen, "%s: %s", path, strerror(-rc));
    if (t.nlines == 0) { /* (created, nothing written yet) */
        hx_csv_free(&t);
        return 0;
    }
    /* a last line without its newline was cut short by a crash: not a row (the sweep ends
     * it before appending) */
    int torn = 0;
    FILE *tf = fopen(path, "r");
    if (tf && !fseek(tf, -1, SEEK_END))
        torn = fgetc(tf) != '\n';
    if (tf)
        fclose(tf);
    static const struct {
        const char *name;
        size_t off;
    } dc[] = {{"work_s", offsetof(hx_spancsv_row, work_s)},
              {"min_work_s", offsetof(hx_spancsv_row, min_work_s)},
              {"span_s", offsetof(hx_spancsv_row, span_s)},
              {"burdened_span_s", offsetof(hx_spancsv_row, burdened_span_s)},
              {"burden_s", offsetof(hx_spancsv_row, burden_s)},
              {"parallelism", offsetof(hx_spancsv_row, parallelism)},
              {"burdened_parallelism", offsetof(hx_spancsv_row, burdened_parallelism)},
              {"strands", offsetof(hx_spancsv_row, strands)},
              {"forks", offsetof(hx_spancsv_row, forks)},
              {"strand_parallelism", offsetof(hx_spancsv_row, strand_parallelism)},
              {"bound_parallelism", offsetof(hx_spancsv_row, bound_parallelism)}};
    long cb = hx_csv_col(&t, "benchmark"), ck = hx_csv_col(&t, "kernel"), cs = hx_csv_col(&t, "status"),
         cm = hx_csv_col(&t, "method"), cr = hx_csv_col(&t, "resolved"), cd[sizeof dc / sizeof *dc];
    for (size_t k = 0; k < sizeof dc / sizeof *dc; k++)
        cd[k] = hx_csv_col(&t, dc[k].name);
    if (cb < 0 || cs < 0 || cd[sizeof dc / sizeof *dc - 1] < 0) { /* (bound_parallelism) */
        hx_csv_free(&t);
        return hx_errf(err, errlen, "%s: not a span.csv (no benchmark, status or bound_parallelism column)", path);
    }
    for (size_t i = 1; i < t.nlines; i++) {
        if (!t.lines[i][0])
            continue;
        char *fields[64];
        size_t nf = hx_csv_split(t.lines[i], fields, 64);
        if (torn && i == t.nlines - 1)
            break;
        if (nf != t.nhdr) {
            hx_csv_free(&t);
            free(*rows);
            *rows = NULL;
            *n = 0;
            return hx_errf(err, errlen, "%s line %zu: %zu fields, the header has %zu", path, i + 1, nf, t.nhdr);
        }
        *rows = hx_xrealloc(*rows, (*n + 1) * sizeof **rows);
        hx_spancsv_row *r = &(*rows)[*n];
        memset(r, 0, sizeof *r);
        snprintf(r->benchmark, sizeof r->benchmark, "%s", hx_csv_field(fields, nf, cb));
        snprintf(r->kernel, sizeof r->kernel, "%s", hx_csv_field(fields, nf, ck));
        snprintf(r->status, sizeof r->status, "%s", hx_csv_field(fields, nf, cs));
        snprintf(r->method, sizeof r->method, "%s", hx_csv_field(fields, nf, cm));
        r->resolved = !strcmp(hx_csv_field(fields, nf, cr), "1");
        const char *bad = r->benchmark[0] ? NULL : "benchmark";
        for (size_t k = 0; k < sizeof dc / sizeof *dc && !bad; k++)
            if (!hx_csv_parse_num(hx_csv_field(fields, nf, cd[k]), (double *)(void *)((char *)r + dc[k].off)))
                bad = dc[k].name;
        if (!bad && !strcmp(r->status, "ok") && !(r->bound_parallelism >= 1))
            bad = "bound_parallelism (an ok row needs one, at least 1)";
        if (bad) {
            hx_csv_free(&t);
            free(*rows);
            *rows = NULL;
            *n = 0;
            return hx_errf(err, errlen, "%s line %zu: bad %s", path, i + 1, bad);
        }
        ++*n;
    }
    hx_csv_free(&t);
    return 0;
}

