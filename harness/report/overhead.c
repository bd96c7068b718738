/* overhead.c — report.md's overhead section: paired time ratios, instructions and data
 * reads and writes per call (see overhead.h). */
#include "harness/report/overhead.h"
#include "harness/util/csv.h"
#include "harness/util/util.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/util/errors.h"
#include "harness/config/variants.h"

/* ---- the report section ----------------------------------------------------------------------- */

typedef struct {
    char bench[64], variant[64];
    long workers, rep;
    double time;
} timed_run;

static size_t load_runs(const char *dir, timed_run **out) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/raw.jsonl", dir);
    FILE *f = fopen(path, "r");
    *out = NULL;
    if (!f)
        return 0;
    size_t n = 0, cap = 0;
    char *line = NULL;
    size_t len = 0;
    while (getline(&line, &len, f) > 0) {
        json_t *r = json_loads(line, 0, NULL);
        if (!r)
            continue;
        const char *kind = json_string_value(json_object_get(r, "kind"));
        const char *status = json_string_value(json_object_get(r, "status"));
        const char *bench = json_string_value(json_object_get(r, "benchmark"));
        const char *variant = json_string_value(json_object_get(r, "variant"));
        json_t *t = json_object_get(r, "time_s");
        if (kind && !strcmp(kind, "timed") && status && !strcmp(status, "ok") && bench && variant && json_is_number(t)) {
            if (n == cap) {
                cap = cap ? 2 * cap : 256;
                timed_run *nr = realloc(*out, cap * sizeof *nr);
                if (!nr)
                    break;
                *out = nr;
            }
            timed_run *x = &(*out)[n++];
            snprintf(x->bench, sizeof x->bench, "%s", bench);
            snprintf(x->variant, sizeof x->variant, "%s", variant);
            x->workers = (long)json_integer_value(json_object_get(r, "workers"));
            x->rep = (long)json_integer_value(json_object_get(r, "rep"));
            x->time = json_number_value(t);
        }
        json_decref(r);
    }
    free(line);
    fclose(f);
    return n;
}

static const timed_run *find_run(const timed_run *r, size_t n, const char *bench, const char *variant, long P,
                                 long rep) {
    for (size_t i = 0; i < n; i++)
        if (r[i].workers == P && r[i].rep == rep && !strcmp(r[i].bench, bench) && !strcmp(r[i].variant, variant))
            return &r[i];
    return NULL;
}

/* Median over rounds of num/den ratios: ratio(k) = T(a, Pa, k) / T(b, Pb, k). */
static int paired_median(const timed_run *r, size_t n, const char *bench, const char *va, long pa, const char *vb,
                         long pb, double *med, size_t *rounds) {
    double *v = malloc((n + 1) * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; v && i < n; i++) {
        if (r[i].workers != pa || strcmp(r[i].bench, bench) || strcmp(r[i].variant, va))
            continue;
        const timed_run *o = find_run(r, n, bench, vb, pb, r[i].rep);
        if (o && o->time > 0)
            v[k++] = r[i].time / o->time;
    }
    *rounds = k;
    if (k)
        *med = hx_median(v, k);
    free(v);
    return k ? 0 : -1;
}

/* A table cell from a number field: "%.2f", or "–" if it is empty, absent (instructions.csv
 * from before the data reads and writes) or not a number. */
static void cell(char *buf, size_t size, const char *field) {
    double v;
    if (!hx_csv_parse_num(field, &v) || isnan(v))
        snprintf(buf, size, "–");
    else
        snprintf(buf, size, "%.2f", v);
}

static void write_instructions(FILE *f, const char *dir) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/instructions.csv", dir);
    hx_csv_table t;
    if (hx_csv_load(path, &t))
        return;
    /* The columns by the header's names (the dr_ and dw_ ones came later: "–" without them). */
    long c_driver = hx_csv_col(&t, "driver"), c_kernel = hx_csv_col(&t, "kernel"), c_n1 = hx_csv_col(&t, "n1"),
         c_n2 = hx_csv_col(&t, "n2"), c_per = hx_csv_col(&t, "per_call"), c_vs = hx_csv_col(&t, "vs_serial"),
         c_dr = hx_csv_col(&t, "dr_per_call"), c_dr_vs = hx_csv_col(&t, "dr_vs_serial"),
         c_dw = hx_csv_col(&t, "dw_per_call"), c_dw_vs = hx_csv_col(&t, "dw_vs_serial");
    int any = 0;
    for (size_t i = 1; i < t.nlines && c_driver >= 0 && c_per >= 0; i++) {
        char *fields[64];
        size_t nf = hx_csv_split(t.lines[i], fields, 64);
        const char *driver = hx_csv_field(fields, nf, c_driver), *kernel = hx_csv_field(fields, nf, c_kernel);
        double per;
        if (!driver[0] || !hx_csv_parse_num(hx_csv_field(fields, nf, c_per), &per) || isnan(per))
            continue;
        if (!any) {
            fprintf(f, "### Instructions and data accesses per %s call\n\n"
                       "callgrind (with its cache simulation, for the data reads and writes: loads and stores, "
                       "calls' and returns' included), in the task's own functions, %s(%s) minus %s(%s) over the "
                       "calls between them, one worker (exact and repeatable: see harness/run/icount.h).\n\n"
                       "| driver | instructions per call | × serial | data reads per call | × serial "
                       "| data writes per call | × serial |\n|---|---:|---:|---:|---:|---:|---:|\n",
                    kernel, kernel, hx_csv_field(fields, nf, c_n2), kernel, hx_csv_field(fields, nf, c_n1));
            any = 1;
        }
        char vs[32], dr[32], dr_vs[32], dw[32], dw_vs[32];
        cell(vs, sizeof vs, hx_csv_field(fields, nf, c_vs));
        cell(dr, sizeof dr, hx_csv_field(fields, nf, c_dr));
        cell(dr_vs, sizeof dr_vs, hx_csv_field(fields, nf, c_dr_vs));
        cell(dw, sizeof dw, hx_csv_field(fields, nf, c_dw));
        cell(dw_vs, sizeof dw_vs, hx_csv_field(fields, nf, c_dw_vs));
        if (!strcmp(vs, "–")) /* no serial among the variants: no ratios (empty cells, as before) */
            vs[0] = dr_vs[0] = dw_vs[0] = 0;
        fprintf(f, "| %s | %.2f | %s | %s | %s | %s | %s |\n", driver, per, vs, dr, dr_vs, dw, dw_vs);
    }
    if (any)
        fputc('\n', f);
    hx_csv_free(&t);
}

void hx_overhead_write_md(FILE *f, const char *dir) {
    timed_run *r;
    size_t n = load_runs(dir, &r);
    int heading = 0;
    char done[64][64];
    size_t ndone = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(r[i].variant, "serial") || r[i].workers != 1)
            continue;
        const char *bench = r[i].bench;
        int seen = 0;
        for (size_t k = 0; k < ndone; k++)
            seen |= !strcmp(done[k], bench);
        if (seen || ndone == 64)
            continue;
        snprintf(done[ndone++], sizeof done[0], "%s", bench);
        if (!heading) {
            fputs("## Overhead against the serial projection\n\n"
                  "Medians over rounds of ratios taken within a round (repetition k of every cell runs in round k "
                  "of an interleaved sweep): T1/Ts = T(variant, P = 1) / T(serial), Ts/T2 = T(serial) / "
                  "T(variant, P = 2).\n\n",
                  f);
            heading = 1;
        }
        fprintf(f, "### %s\n\n| variant | T1/Ts | Ts/T2 | rounds |\n|---|---:|---:|---:|\n", bench);
        char vdone[64][64];
        size_t nv = 0;
        for (size_t j = 0; j < n; j++) {
            if (strcmp(r[j].bench, bench) || !strcmp(r[j].variant, "serial"))
                continue;
            int vs = 0;
            for (size_t k = 0; k < nv; k++)
                vs |= !strcmp(vdone[k], r[j].variant);
            if (vs || nv == 64)
                continue;
            snprintf(vdone[nv++], sizeof vdone[0], "%s", r[j].variant);
            double t1 = NAN, t2 = NAN;
            size_t n1 = 0, n2 = 0;
            paired_median(r, n, bench, r[j].variant, 1, "serial", 1, &t1, &n1);
            paired_median(r, n, bench, "serial", 1, r[j].variant, 2, &t2, &n2);
            char a[32] = "-", b[32] = "-";
            if (n1)
                snprintf(a, sizeof a, "%.2f", t1);
            if (n2)
                snprintf(b, sizeof b, "%.2f", t2);
            fprintf(f, "| %s | %s | %s | %zu |\n", r[j].variant, a, b, n1 > n2 ? n1 : n2);
        }
        fputc('\n', f);
    }
    free(r);
    write_instructions(f, dir);
}
