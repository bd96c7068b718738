/* report.c — report.md and `forkscope fit`.  summary.csv and fits.csv are written and read
 * by harness/results/summary.c (its header has the CSV conventions); results.h the files. */
#include "harness/report/report.h"
#include "harness/config/kernels.h"
#include "harness/util/csv.h"
#include "harness/util/util.h"
#include "harness/report/overhead.h"
#include "harness/analyze/modes.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness/report/analysis.h"
#include "harness/util/errors.h"
#include "harness/analyze/bounds.h"
#include "harness/report/breakdown.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

static void write_span(FILE *f, const char *dir, const hx_summary *s);

/* ---- JSON inputs ----------------------------------------------------------------------------- */

json_t *hx_report_load_json(const char *dir, const char *name, char *why, size_t whylen) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (access(path, F_OK)) {
        if (why)
            snprintf(why, whylen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (!j && why)
        snprintf(why, whylen, "%s line %d: %s", path, e.line, e.text);
    if (j && !json_is_object(j)) {
        if (why)
            snprintf(why, whylen, "%s: not a JSON object", path);
        json_decref(j);
        return NULL;
    }
    return j;
}

void hx_report_experiment_name(const json_t *config, const char *dir, char *buf, size_t len) {
    const char *name = json_string_value(json_object_get(config, "name"));
    if (name && *name) {
        snprintf(buf, len, "%s", name);
        return;
    }
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    size_t b = n;
    while (b > 0 && dir[b - 1] != '/')
        b--;
    snprintf(buf, len, "%.*s", (int)(n - b), dir + b);
}

/* ---- report.md ------------------------------------------------------------------------------- */

const char *hx_report_pm(char *buf, size_t len, double v, double se) {
    if (!isfinite(v))
        snprintf(buf, len, "–");
    else if (!isfinite(se) || se <= 0)
        snprintf(buf, len, "%.4g", v);
    else {
        int d = 1 - (int)floor(log10(se));
        if (d > 12)
            d = 12;
        /* (an se of 10 or more: whole numbers, not rounded further, so that a value below its
         * error, such as the 4 KiB memory floor, is not shown as 0) */
        snprintf(buf, len, "%.*f ± %.*f", d > 0 ? d : 0, v, d > 0 ? d : 0, se);
    }
    return buf;
}

const char *hx_report_exponent(char *buf, size_t len, double n, double se) {
    if (!isfinite(n))
        snprintf(buf, len, "–");
    else if (!isfinite(se))
        snprintf(buf, len, "%.2f", n + 0.0);
    else
        snprintf(buf, len, "%.2f ± %.2f", n + 0.0, se + 0.0); /* + 0.0: no "-0.00" */
    return buf;
}

/* Markdown table cell text: '|' escaped. */
static void md_cell(FILE *f, const char *s) {
    for (; s && *s; s++) {
        if (*s == '|')
            fputc('\\', f);
        fputc(*s, f);
    }
}

/* The driver and source cells of a command variant: each kernel's command line, then the
 * SHA-1 (first 12 digits) of each program. */
static void write_command(FILE *f, const json_t *v) {
    const char *kernel;
    json_t *t;
    int first = 1;
    json_object_foreach(json_object_get(json_object_get(v, "command"), "command"), kernel, t) {
        fprintf(f, "%s%s: `", first ? "" : "<br>", kernel);
        size_t i;
        json_t *a;
        json_array_foreach(t, i, a) {
            if (i)
                fputc(' ', f);
            md_cell(f, json_string_value(a));
        }
        fputc('`', f);
        first = 0;
    }
    fputs(" | ", f);
    const char *prog;
    json_t *sum;
    first = 1;
    json_object_foreach(json_object_get(v, "sha1"), prog, sum) {
        const char *slash = strrchr(prog, '/');
        fprintf(f, "%s%s sha1 %.12s", first ? "" : "<br>", slash ? slash + 1 : prog, json_string_value(sum));
        first = 0;
    }
    fputs(" | – ", f);
}

/* The build that ran: its git revision, forkscope's version, make bundle's build id. */
static void write_build(FILE *f, const json_t *env) {
    const char *s = hx_json_str(env, "git_revision", NULL);
    fprintf(f, "- Git revision: %s%s\n", s ? s : "unknown", json_is_true(json_object_get(env, "git_dirty")) ? " (with uncommitted changes)" : "");
    if ((s = hx_json_str(env, "forkscope_version", NULL)))
        fprintf(f, "- forkscope version: %s\n", s);
    json_t *bundle = json_object_get(env, "bundle");
    if ((s = hx_json_str(bundle, "build_id", NULL)))
        fprintf(f, "- Bundle (make bundle): build id %s, built %s; needs glibc %s or later\n", s,
                hx_json_str(bundle, "built", "?"), hx_json_str(bundle, "glibc_required", "?"));
}

static void write_machine(FILE *f, const json_t *env) {
    fputs("## Machine\n\n", f);
    if (!env) {
        fputs("env.json is missing or unreadable: the machine is unknown.\n\n", f);
        return;
    }
    const char *s;
    json_t *cores = json_object_get(env, "cores");
    fprintf(f, "- CPU: %s", (s = hx_json_str(env, "cpu_model", NULL)) ? s : "unknown");
    if (json_is_integer(cores))
        fprintf(f, ", %lld online cores", (long long)json_integer_value(cores));
    fputc('\n', f);
    if ((s = hx_json_str(env, "topology", NULL)))
        fprintf(f, "- Topology: %s\n", s);
    json_t *mem = json_object_get(env, "memory_bytes");
    if (json_is_number(mem))
        fprintf(f, "- Memory: %.1f GiB\n", json_number_value(mem) / (1024.0 * 1024 * 1024));
    if ((s = hx_json_str(env, "kernel", NULL)))
        fprintf(f, "- Kernel: %s\n", s);
    if ((s = hx_json_str(env, "host", NULL)))
        fprintf(f, "- Host: %s\n", s);
    json_t *cc = json_object_get(env, "compilers");
    if (json_is_object(cc)) {
        fputs("- Compilers:", f);
        const char *k;
        json_t *v;
        int first = 1;
        json_object_foreach(cc, k, v) {
            fprintf(f, "%s %s: %s", first ? "" : ";", k, json_is_string(v) ? json_string_value(v) : "unknown");
            first = 0;
        }
        fputc('\n', f);
    }
    write_build(f, env);
    if ((s = hx_json_str(env, "config_file", NULL)))
        fprintf(f, "- Configuration file: %s\n", s);
    json_t *lo = json_object_get(env, "peers_left_out");
    if (json_is_array(lo) && json_array_size(lo)) {
        fputs("\nPeers left out (listed in \"peers\", not built here: make peers PEERS_DIR=DIR):", f);
        size_t i;
        json_t *e;
        json_array_foreach(lo, i, e) {
            fputs(i ? ", " : " ", f);
            md_cell(f, json_is_string(e) ? json_string_value(e) : "?");
        }
        fputs("\n", f);
    }
    json_t *drv = json_object_get(env, "drivers");
    if (json_is_object(drv) && json_object_size(drv)) {
        fputs("\n| variant | driver | source (git) | compiler | flags |\n|---|---|---|---|---|\n", f);
        const char *k;
        json_t *v;
        json_object_foreach(drv, k, v) {
            fputs("| ", f);
            md_cell(f, k);
            fputs(" | ", f);
            if (json_object_get(v, "command")) { /* a runtime run by command: its programs and their SHA-1s */
                write_command(f, v);
                fputs(" | – |\n", f);
                continue;
            }
            md_cell(f, hx_json_str(v, "path", NULL));
            fputs(" | ", f);
            md_cell(f, hx_json_str(v, "git", NULL));
            json_t *peer = json_object_get(v, "peer"); /* a peer: its checkout and the flags of its code */
            if (hx_json_str(peer, "revision", NULL)) {
                fputs("; peer ", f);
                md_cell(f, hx_json_str(peer, "revision", NULL));
                if (hx_json_str(peer, "flags", NULL)) {
                    fputs(", built with `", f);
                    md_cell(f, hx_json_str(peer, "flags", NULL));
                    fputc('`', f);
                }
            }
            fputs(" | ", f);
            md_cell(f, hx_json_str(v, "compiler", NULL));
            fputs(" | ", f);
            const char *fl = hx_json_str(v, "flags", NULL);
            if (fl) {
                fputc('`', f);
                md_cell(f, fl);
                fputc('`', f);
            }
            const char *name;
            json_t *val;
            json_object_foreach(json_object_get(v, "env"), name, val) { /* the variant's "env" */
                fputs(" `", f);
                md_cell(f, name);
                fputc('=', f);
                md_cell(f, json_string_value(val));
                fputc('`', f);
            }
            fputs(" |\n", f);
        }
    }
    fputc('\n', f);
}

static void write_method(FILE *f, const hx_summary *s) {
    fputs("## Method\n\n", f);
    fprintf(f, "- %zu runs used from %zu lines of raw.jsonl", s->runs, s->lines);
    if (s->nwarnings)
        fprintf(f, " (%zu line%s skipped or questionable: see *Warnings* below)", s->nwarnings,
                s->nwarnings == 1 ? "" : "s");
    fputs(".\n", f);
    fputs("- Time: median of the successful runs of a cell, ± the standard error of the mean "
          "(sample standard deviation / √n); no error with one run.\n",
          f);
    fputs("- CPU time: user + system CPU seconds of the whole driver process (all its threads) during the "
          "timed repetition, median ± standard error; at equal time, less CPU means fewer cycles burnt by "
          "idle workers (busy vs lazy). \"–\": not recorded (drivers before this column).\n",
          f);
    if (!s->calib_runs)
        fputs("- Memory: **no calibrate runs**, so memory is the raw peak RSS (MRSS) of the driver "
              "process, not calibrated: it includes the process's own baseline.\n",
              f);
    else {
        fprintf(f, "- Memory: median peak RSS (MRSS) minus the median MRSS of the calibrate runs of the "
                   "same variant and workers, floored at %g KiB (Eq. 17's data, as the paper did); errors in "
                   "quadrature.\n",
                HX_STATS_MEM_FLOOR_KIB);
        if (s->uncalibrated)
            fprintf(f, "- **%zu cell%s had no calibrate cell** (same variant and workers): %s memory is the raw "
                       "MRSS.\n",
                    s->uncalibrated, s->uncalibrated == 1 ? "" : "s", s->uncalibrated == 1 ? "its" : "their");
    }
    fputs("- Speedup = T_s / T_P (Eq. 15), T_s the serial projection's median time for the same benchmark; "
          "efficiency = speedup / P (Eq. 16); errors propagated from the two standard errors (relative "
          "errors in quadrature).\n",
          f);
    fprintf(f, "- Memory fit (Eq. 17): mem ≈ a + b·M1·P^n, M1 = the variant's own memory at P = 1; weighted "
               "least squares (GSL, Levenberg–Marquardt) with weights 1/se², se raised to at least %g KiB; "
               "start (1, 1, 1) (a in units of M1); bounds b ≥ 0, n ≥ 0 by clamping and refitting at the bound; "
               "errors = √(covariance diagonal) scaled by χ²/dof (dof = points − 3), as scipy's curve_fit "
               "does by default; a fit needs %d points and a P = 1 cell.\n\n",
            HX_FIT_SE_FLOOR_KIB, HX_FIT_MIN_POINTS);
}

/* The kernel of benchmark `bench`, if its memory is its input (its description's note), else NULL. */
static const hx_kernel_info *memory_is_input(const hx_summary *s, const char *bench) {
    for (size_t i = 0; i < s->nbenches; i++)
        if (!strcmp(s->benches[i].name, bench)) {
            const hx_kernel_info *k = hx_kernels_find(s->benches[i].kernel);
            return k && k->memory_is_input ? k : NULL;
        }
    return NULL;
}

static void write_bench_tables(FILE *f, const hx_summary *s, const json_t *env) {
    json_t *jc = json_object_get(env, "cores");
    long cores = json_is_integer(jc) ? (long)json_integer_value(jc) : 0;
    fputs("## Results\n\n", f);
    if (!s->ncells)
        fputs("No timed cells in raw.jsonl.\n\n", f);
    for (size_t b = 0; b < s->nbenches; b++) {
        const hx_bench_info *bi = &s->benches[b];
        fprintf(f, "### %s", bi->name);
        if (*bi->kernel || *bi->params)
            fprintf(f, " (kernel %s%s%s)", *bi->kernel ? bi->kernel : "?", *bi->params ? "; " : "", bi->params);
        fputs("\n\n", f);
        if (bi->serial_workers)
            fprintf(f, "T_s from the serial projection at P = %ld.\n\n", bi->serial_workers);
        else
            fputs("No successful serial run: speedup and efficiency are undefined.\n\n", f);
        fputs("| variant | P | runs ok | time (s) | CPU time (s) | speedup | efficiency | memory (KiB) | failed runs |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|---|\n",
              f);
        int any_over = 0;
        for (size_t i = 0; i < s->ncells; i++) {
            const hx_cell *c = &s->cells[i];
            if (strcmp(c->benchmark, bi->name))
                continue;
            char t[64], cpu[64], sp[64], ef[64], me[64];
            fputs("| ", f);
            md_cell(f, c->variant);
            fprintf(f, " | %ld%s | %d | %s | %s | %s | %s | %s | %s |\n", c->workers, c->oversubscribed ? " †" : "",
                    c->n_ok, hx_report_pm(t, sizeof t, c->time_median, c->time_se),
                    hx_report_pm(cpu, sizeof cpu, c->cpu_median, c->cpu_se),
                    hx_report_pm(sp, sizeof sp, c->speedup, c->speedup_se), hx_report_pm(ef, sizeof ef, c->efficiency, c->efficiency_se),
                    hx_report_pm(me, sizeof me, c->mem, c->mem_se), *c->failures ? c->failures : "");
            any_over |= c->oversubscribed;
        }
        if (any_over) {
            if (cores)
                fprintf(f, "\n† oversubscribed: more workers than the %ld online cores; its times say little about "
                           "scaling (memory still does).\n",
                        cores);
            else
                fputs("\n† oversubscribed: more workers than online cores; its times say little about scaling "
                      "(memory still does).\n",
                      f);
        }
        fputc('\n', f);
    }
}

/* The columns of Table II: variants with at least one successful fit, in the fits' order. */
static size_t table2_columns(const hx_fit *fits, size_t nfits, const char **cols, size_t max) {
    size_t ncols = 0;
    for (size_t i = 0; i < nfits && ncols < max; i++) {
        size_t k = 0;
        while (k < ncols && strcmp(cols[k], fits[i].variant))
            k++;
        if (k < ncols)
            continue;
        int any_ok = 0; /* (the order is the fits' order, whether or not the first one is ok) */
        for (size_t j = i; j < nfits && !any_ok; j++)
            any_ok = fits[j].ok && !strcmp(fits[j].variant, fits[i].variant);
        if (any_ok)
            cols[ncols++] = fits[i].variant;
    }
    return ncols;
}

/* Display width of a UTF-8 string (code points; the table's text has no wide characters). */
static int text_width(const char *s) {
    int w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

static void put_padded(FILE *f, const char *s, int width, int right) {
    int pad = width - text_width(s);
    if (right)
        fprintf(f, "%*s%s", pad > 0 ? pad : 0, "", s);
    else
        fprintf(f, "%s%*s", s, pad > 0 ? pad : 0, "");
}

#define T2_MAX_COLS 64

/* Table II: one row per benchmark, one column per variant, n ± its error ("–": no fit).
 * markdown: a Markdown table (report.md); else aligned text (forkscope fit's output).
 * Returns the number of columns (0: nothing fitted, nothing written). */
static size_t write_table2(FILE *f, const hx_summary *s, const hx_fit *fits, size_t nfits, int markdown) {
    const char *cols[T2_MAX_COLS];
    size_t ncols = table2_columns(fits, nfits, cols, T2_MAX_COLS);
    if (!ncols)
        return 0;
    int width[T2_MAX_COLS + 1];
    width[0] = text_width("benchmark");
    for (size_t b = 0; b < s->nbenches; b++) {
        int w = text_width(s->benches[b].name) + 2 * (memory_is_input(s, s->benches[b].name) != NULL);
        width[0] = w > width[0] ? w : width[0];
    }
    for (size_t k = 0; k < ncols; k++)
        width[k + 1] = text_width(cols[k]) > 11 ? text_width(cols[k]) : 11; /* "0.00 ± 0.00" */
    if (markdown) {
        fputs("| benchmark |", f);
        for (size_t k = 0; k < ncols; k++) {
            fputc(' ', f);
            md_cell(f, cols[k]);
            fputs(" |", f);
        }
        fputs("\n|---|", f);
        for (size_t k = 0; k < ncols; k++)
            fputs("---:|", f);
        fputc('\n', f);
    } else {
        put_padded(f, "benchmark", width[0], 0);
        for (size_t k = 0; k < ncols; k++) {
            fputs("  ", f);
            put_padded(f, cols[k], width[k + 1], 1);
        }
        fputc('\n', f);
    }
    const hx_kernel_info *input_bound[16]; /* the kernels of the ‡ rows, once each */
    size_t ninput = 0;
    for (size_t b = 0; b < s->nbenches; b++) {
        const char *bn = s->benches[b].name;
        const hx_kernel_info *ki = memory_is_input(s, bn);
        int mm = ki != NULL, seen = 0;
        for (size_t j = 0; j < ninput; j++)
            seen |= input_bound[j] == ki;
        if (ki && !seen && ninput < sizeof input_bound / sizeof *input_bound)
            input_bound[ninput++] = ki;
        char name[160];
        snprintf(name, sizeof name, "%s%s", bn, mm ? " ‡" : "");
        if (markdown) {
            fputs("| ", f);
            md_cell(f, name);
            fputs(" |", f);
        } else {
            put_padded(f, name, width[0], 0);
        }
        for (size_t k = 0; k < ncols; k++) {
            const hx_fit *x = NULL;
            for (size_t i = 0; i < nfits; i++)
                if (!strcmp(fits[i].benchmark, bn) && !strcmp(fits[i].variant, cols[k]))
                    x = &fits[i];
            char buf[64];
            const char *cell = x && x->ok ? hx_report_exponent(buf, sizeof buf, x->n, x->n_se) : "–";
            if (markdown) {
                fprintf(f, " %s |", cell);
            } else {
                fputs("  ", f);
                put_padded(f, cell, width[k + 1], 1);
            }
        }
        fputc('\n', f);
    }
    fputs(markdown ? "\n– no fit (reason in the list below)." : "– no fit (the reason is in fits.csv and report.md).", f);
    for (size_t j = 0; j < ninput; j++)
        fprintf(f, " ‡ %s: %s.", input_bound[j]->name, input_bound[j]->memory_is_input);
    fputc('\n', f);
    return ncols;
}

static void write_fit_tables(FILE *f, const hx_summary *s, const hx_fit *fits, size_t nfits) {
    fputs("## Memory scaling: fitted exponents n (Table II)\n\n", f);
    if (!write_table2(f, s, fits, nfits, 1))
        fputs("No fit could be made (see the list of fits below).\n", f);
    fputc('\n', f);
    fputs("### All fits\n\n", f);
    if (!nfits) {
        fputs("None (no cells).\n\n", f);
        return;
    }
    fputs("| benchmark | variant | status | points | M1 (KiB) | a (KiB) | b | n | χ²/dof | note |\n"
          "|---|---|---|---:|---:|---:|---:|---:|---:|---|\n",
          f);
    for (size_t i = 0; i < nfits; i++) {
        const hx_fit *x = &fits[i];
        char m1[64], a[64], b[64], n[64], c2[64];
        fputs("| ", f);
        md_cell(f, x->benchmark);
        fputs(" | ", f);
        md_cell(f, x->variant);
        fprintf(f, " | %s | %d | %s | %s | %s | %s | %s | ", x->ok ? "ok" : "skipped", x->points,
                hx_report_pm(m1, sizeof m1, x->m1, NAN), hx_report_pm(a, sizeof a, x->a, x->a_se), hx_report_pm(b, sizeof b, x->b, x->b_se),
                hx_report_exponent(n, sizeof n, x->n, x->n_se), hx_report_pm(c2, sizeof c2, x->chi2_dof, NAN));
        md_cell(f, x->note);
        fputs(" |\n", f);
    }
    fputc('\n', f);
}

/* "One distribution per cell?": the cells flagged by modes.h's tests, with their modes, and
 * how many had too few runs to tell. */
static void write_modes(FILE *f, const hx_summary *s) {
    /* (the thresholds from modes.h's macros, so that the text says what the tests do) */
    fprintf(f,
            "## One distribution per cell?\n\n"
            "A cell's median and standard error assume its runs come from one distribution.  A cell is "
            "flagged **between-process** when its processes disagree far beyond the spread of the repetitions "
            "inside each (an F test on log times, p < %g, with a between-process SD of at least %g%% and %g "
            "times the within-process one; it needs the drivers' repetitions, `--reps`), and **bimodal** when "
            "its runs form two clusters (the best split into two groups of at least 2 runs, separated beyond "
            "what one normal sample of as many runs shows once in 1,000, with centres at least %g%% apart).  "
            "Fewer than %d runs are too few to tell.  Its median then describes no run: compare such cells "
            "with care (docs/compare.md, \"Is a cell one distribution?\").\n\n",
            HX_MODES_ALPHA, 100 * HX_MODES_SD_FLOOR, HX_MODES_SD_RATIO, 100 * (HX_MODES_RATIO_MIN - 1),
            HX_MODES_MIN_RUNS);
    char why[256];
    size_t ok = 0, flagged = 0, few = 0;
    for (size_t i = 0; i < s->ncells; i++) {
        flagged += hx_modes_flagged(s->cells[i].modes.verdict);
        few += s->cells[i].modes.verdict == HX_MODES_TOO_FEW;
        ok += s->cells[i].modes.verdict == HX_MODES_OK;
    }
    if (flagged)
        fputs("| cell | runs | verdict | modes |\n|---|---:|---|---|\n", f);
    for (size_t i = 0; i < s->ncells; i++) {
        const hx_cell *c = &s->cells[i];
        if (!hx_modes_flagged(c->modes.verdict))
            continue;
        fputs("| ", f);
        md_cell(f, c->benchmark);
        fputs(" \\| ", f);
        md_cell(f, c->variant);
        fprintf(f, " \\| %ld | %zu | **%s** | %s |\n", c->workers, c->modes.runs, hx_modes_name(c->modes.verdict),
                hx_modes_describe(&c->modes, why, sizeof why));
    }
    if (flagged)
        fputc('\n', f);
    fprintf(f, "%zu cell%s flagged; %zu one distribution as far as their runs tell; %zu with too few runs to tell "
               "(fewer than %d).\n\n",
            flagged, flagged == 1 ? "" : "s", ok, few, HX_MODES_MIN_RUNS);
}

static void write_failures(FILE *f, const hx_summary *s) {
    fputs("## Failures\n\n", f);
    if (!s->nfailures) {
        fputs("None: every run succeeded.\n\n", f);
        return;
    }
    fputs("| cell | status | runs | last stderr line |\n|---|---|---:|---|\n", f);
    for (size_t i = 0; i < s->nfailures; i++) {
        const hx_failure *x = &s->failures[i];
        fputs("| ", f);
        md_cell(f, x->benchmark);
        fputs(" \\| ", f);
        md_cell(f, x->variant);
        fprintf(f, " \\| %ld | %s | %d | ", x->workers, x->status, x->count);
        if (*x->last_stderr) {
            fputc('`', f);
            for (const char *p = x->last_stderr; *p; p++)
                fputc(*p == '`' ? '\'' : *p, f);
            fputc('`', f);
        }
        fputs(" |\n", f);
    }
    fputc('\n', f);
}

int hx_report_write_md(const char *path, const char *dir, const hx_summary *s, const hx_fit *fits, size_t nfits,
                       const json_t *env, const json_t *config) {
    char tmp[PATH_MAX];
    FILE *f = hx_atomic_open(path, tmp, sizeof tmp);
    if (!f)
        return -errno;
    char name[256], now[64];
    hx_report_experiment_name(config, dir, name, sizeof name);
    time_t t = time(NULL);
    struct tm tm;
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
    fprintf(f, "# forkscope results: %s\n\n", name);
    const char *date = hx_json_str(env, "date", NULL);
    fprintf(f, "- Experiment run: %s\n", date ? date : "unknown (no date in env.json)");
    const char *desc = hx_json_str(config, "description", NULL);
    if (desc)
        fprintf(f, "- Description: %s\n", desc);
    fprintf(f, "- Results directory: `%s`%s\n", dir, config ? "" : " (config.json missing)");
    fprintf(f, "- This report: written %s by `forkscope fit` from raw.jsonl%s\n\n", now,
            env ? " and env.json" : "");
    write_machine(f, env);
    write_method(f, s);
    write_bench_tables(f, s, env);
    write_span(f, dir, s);
    hx_breakdown_write_md(f, s);
    hx_overhead_write_md(f, dir);
    write_fit_tables(f, s, fits, nfits);
    write_modes(f, s);
    write_failures(f, s);
    if (s->nwarnings) {
        fputs("## Warnings while reading raw.jsonl\n\n", f);
        size_t shown = s->nwarnings < 100 ? s->nwarnings : 100;
        for (size_t i = 0; i < shown; i++)
            fprintf(f, "- %s\n", s->warnings[i]);
        if (shown < s->nwarnings)
            fprintf(f, "- … and %zu more\n", s->nwarnings - shown);
        fputc('\n', f);
    }
    return hx_atomic_commit(f, tmp, path);
}

static int beats_bound(const hx_summary *s, const hx_cell *c, double *self) {
    *self = NAN;
    if (!isfinite(c->time_median) || !isfinite(c->span_bound) || c->workers < 2)
        return 0;
    const hx_cell *one = NULL;
    for (size_t i = 0; i < s->ncells && !one; i++)
        if (s->cells[i].workers == 1 && !strcmp(s->cells[i].benchmark, c->benchmark) &&
            !strcmp(s->cells[i].variant, c->variant) && isfinite(s->cells[i].time_median))
            one = &s->cells[i];
    if (!one || !(c->time_median > 0))
        return 0;
    double r = one->time_median / c->time_median;
    double a = isfinite(one->time_se) ? one->time_se / one->time_median : 0;
    double b = isfinite(c->time_se) ? c->time_se / c->time_median : 0;
    *self = r;
    return r > c->span_bound * 1.05 + 3 * r * sqrt(a * a + b * b);
}

/* Fills the cells' span_bound and burdened_bound from DIR/span.csv; returns the number of
 * cells that beat their bound beyond the noise (or -1 if span.csv is unreadable: err). */
static long span_apply(const char *dir, hx_summary *s, char *err, size_t errlen) {
    hx_spancsv_row *rows;
    size_t n;
    if (hx_spancsv_load(dir, &rows, &n, err, errlen))
        return -1;
    long beat = 0;
    for (size_t i = 0; i < s->ncells; i++) {
        hx_cell *c = &s->cells[i];
        for (size_t k = 0; k < n; k++)
            if (!strcmp(rows[k].benchmark, c->benchmark)) {
                c->span_bound = hx_bounds_speedup(&rows[k], (double)c->workers);
                c->burdened_bound = hx_bounds_burdened(&rows[k], (double)c->workers);
            }
    }
    double self;
    for (size_t i = 0; i < s->ncells; i++)
        beat += beats_bound(s, &s->cells[i], &self);
    free(rows);
    return beat;
}

/* What the paper says of libfork at 112 cores for its own sizes (the kernel's description
 * carries it: bench/options.h).  The paper gives the speedups only as plots, Figs. 5 and 6;
 * these are its text's words and figures, from its section V.C "Discussion". */
const char *hx_report_paper_text(const char *kernel, const char *params) {
    const hx_kernel_info *k = hx_kernels_find(kernel);
    char buf[512];
    snprintf(buf, sizeof buf, "%s ", params ? params : "");
    for (const bench_paper *t = k ? k->paper : NULL; t && t->params; t++) {
        const char *p = strstr(buf, t->params);
        size_t pl = strlen(t->params);
        if (p && (p == buf || p[-1] == ' ') && (t->params[pl - 1] == ' ' || p[pl] == ' '))
            return t->text;
    }
    return NULL;
}

static void write_span(FILE *f, const char *dir, const hx_summary *s) {
    hx_spancsv_row *rows;
    size_t n;
    char err[512];
    if (hx_spancsv_load(dir, &rows, &n, err, sizeof err)) {
        fprintf(f, "## Work and span\n\n%s\n\n", err);
        return;
    }
    if (!n)
        return;
    fputs("## Work and span\n\n"
          "Measured by the span build (`fk-bench-span`: continuation stealing on one worker, every strand "
          "timed; span.csv).  On P workers T_P >= max(T1/P, T_inf), so the speedup is at most "
          "min(P, parallelism) (the work-span bound); the burdened estimate T1/(T1/P + burdened span) "
          "charges each fork a steal's cost, as Cilkscale does, in the time a greedy scheduler needs at "
          "most (T1/P + span): a lower estimate, pessimistic where few forks are stolen, so a curve "
          "should run between the two lines.  A curve close to the bound is limited "
          "by the program; one well below it, by the scheduler (or the machine).  The bound limits each variant's self-speedup T1/T_P; on "
          "the figures' axis T_s/T_P a variant whose T1 is below T_s may rise above it by T_s/T1.  Where the clock "
          "does not resolve the strands, the bound uses the DAG in strands (every strand alike) and "
          "there is no burdened estimate.  The figures speedup.* and efficiency.* draw both bounds.\n\n"
          "| benchmark | work (s, strand medians) | span (s) | parallelism | burdened parallelism | best measured speedup "
          "(variant, P) | bound there | bound at 112 | burdened at 112 | libfork at 112 cores, the paper |\n"
          "|---|---:|---:|---:|---:|---|---:|---:|---:|---|\n",
          f);
    for (size_t k = 0; k < n; k++) {
        const hx_spancsv_row *r = &rows[k];
        int later = 0; /* a failed row measured again later: the last one counts */
        for (size_t j = k + 1; j < n; j++)
            later |= !strcmp(rows[j].benchmark, r->benchmark);
        if (later)
            continue;
        const char *params = NULL;
        for (size_t b = 0; b < s->nbenches; b++)
            if (!strcmp(s->benches[b].name, r->benchmark))
                params = s->benches[b].params;
        const char *paper = hx_report_paper_text(r->kernel, params);
        if (strcmp(r->status, "ok")) {
            fprintf(f, "| %s | %s | | | | | | | | %s |\n", r->benchmark, r->status, paper ? paper : "");
            continue;
        }
        const hx_cell *best = NULL;
        double self;
        for (size_t i = 0; i < s->ncells; i++) {
            const hx_cell *c = &s->cells[i];
            if (!strcmp(c->benchmark, r->benchmark) && isfinite(c->speedup) && strcmp(c->variant, "serial") &&
                (!best || c->speedup > best->speedup))
                best = c;
        }
        char bw[64] = "–", bs[64] = "–", b112[32], bu112[32] = "–", par[48], bpar[32] = "–";
        if (r->resolved) {
            snprintf(bw, sizeof bw, "%.4g", r->min_work_s);
            snprintf(bs, sizeof bs, "%.4g", r->span_s);
            snprintf(par, sizeof par, "%.1f", r->parallelism);
            snprintf(bpar, sizeof bpar, "%.1f", r->burdened_parallelism);
            snprintf(bu112, sizeof bu112, "%.1f", hx_bounds_burdened(r, 112));
        } else {
            snprintf(par, sizeof par, "%.1f (in strands)", r->strand_parallelism);
        }
        snprintf(b112, sizeof b112, "%.1f", hx_bounds_speedup(r, 112));
        if (best) {
            char sp[48];
            hx_report_pm(sp, sizeof sp, best->speedup, best->speedup_se);
            fprintf(f, "| %s | %s | %s | %s | %s | %s (%s, %ld)%s | %.2f | %s | %s | %s |\n", r->benchmark, bw, bs,
                    par, bpar, sp, best->variant, best->workers, beats_bound(s, best, &self) ? " **beats the bound**" : "",
                    best->span_bound, b112, bu112, paper ? paper : "");
        } else {
            fprintf(f, "| %s | %s | %s | %s | %s | – | – | %s | %s | %s |\n", r->benchmark, bw, bs, par, bpar, b112,
                    bu112, paper ? paper : "");
        }
    }
    int any = 0;
    for (size_t i = 0; i < s->ncells; i++) {
        const hx_cell *c = &s->cells[i];
        double self;
        if (!beats_bound(s, c, &self))
            continue;
        if (!any++)
            fputs("\nCells whose self-speedup T1/T_P (the variant's own time at P = 1 over its time at P) "
                  "beats the work-span bound by more than the noise (three standard errors and 5%): the bound "
                  "holds for any schedule, so the measurement (or the span build's DAG) is suspect:\n\n",
                  f);
        fprintf(f, "- %s / %s at P = %ld: T1/T_P %.3f, bound %.3f\n", c->benchmark, c->variant, c->workers, self,
                c->span_bound);
    }
    fputs("\n", f);
    free(rows);
}

int hx_report_analyse_dir(const char *dir, const char *who, int *plot_rc) {
    fflush(NULL);
    int rc = hx_report_fit_dir(dir);
    if (rc != HX_OK) {
        fprintf(stderr, "%s: the analysis of %s failed (%s); the results are kept: rerun `forkscope fit %s`\n", who,
                dir, hx_strerror(rc), dir);
        if (plot_rc)
            *plot_rc = HX_OK;
        return rc;
    }
    fflush(NULL);
    int prc = hx_plot_dir(dir);
    if (prc != HX_OK)
        fprintf(stderr, "%s: plots of %s not drawn (%s%s); the results and the analysis are kept: rerun "
                        "`forkscope plot %s`\n",
                who, dir, hx_strerror(prc), prc == HX_ETOOL ? ": gnuplot missing?" : "", dir);
    if (plot_rc)
        *plot_rc = prc;
    return HX_OK;
}

/* ---- forkscope fit DIR: hx_report_fit_dir ----------------------------------------------------------------------- */

int hx_report_fit_dir(const char *dir) {
    char raw[PATH_MAX], sum[PATH_MAX], fitp[PATH_MAX], md[PATH_MAX];
    if ((size_t)snprintf(raw, sizeof raw, "%s/raw.jsonl", dir) >= sizeof raw ||
        (size_t)snprintf(md, sizeof md, "%s/report.md", dir) >= sizeof md) {
        fprintf(stderr, "forkscope fit: %s: path too long\n", dir);
        return HX_EUSAGE;
    }
    snprintf(sum, sizeof sum, "%s/summary.csv", dir);
    snprintf(fitp, sizeof fitp, "%s/fits.csv", dir);
    hx_summary s;
    int rc = hx_stats_load(raw, &s, stderr, "forkscope fit");
    if (rc < 0) {
        fprintf(stderr, "forkscope fit: %s: %s\n", raw, strerror(-rc));
        hx_summary_free(&s);
        return HX_EIO;
    }
    char why[512];
    long beat = span_apply(dir, &s, why, sizeof why);
    if (beat < 0)
        fprintf(stderr, "forkscope fit: warning: %s (no work-span bounds)\n", why);
    else if (beat)
        fprintf(stderr, "forkscope fit: warning: %ld cell%s beat the work-span bound by more than the noise "
                        "(report.md lists them): the measurement is suspect\n", beat, beat == 1 ? "" : "s");
    hx_fit *fits = NULL;
    size_t nfits = hx_fit_all(&s, &fits);
    json_t *env = hx_report_load_json(dir, "env.json", why, sizeof why);
    if (!env)
        fprintf(stderr, "forkscope fit: warning: %s (the report will not describe the machine)\n", why);
    json_t *config = hx_report_load_json(dir, "config.json", why, sizeof why);
    if (!config)
        fprintf(stderr, "forkscope fit: warning: %s\n", why);
    int status = HX_OK;
    const char *failed = NULL;
    if ((rc = hx_summary_write(sum, &s)))
        failed = sum;
    else if ((rc = hx_fits_write(fitp, fits, nfits)))
        failed = fitp;
    else if ((rc = hx_report_write_md(md, dir, &s, fits, nfits, env, config)))
        failed = md;
    if (failed) {
        fprintf(stderr, "forkscope fit: cannot write %s: %s\n", failed, strerror(-rc));
        status = HX_EIO;
    } else {
        size_t ok = 0;
        for (size_t i = 0; i < nfits; i++)
            ok += fits[i].ok;
        printf("forkscope fit: %zu runs from %s", s.runs, raw);
        if (s.nwarnings)
            printf(" (%zu warning%s, above)", s.nwarnings, s.nwarnings == 1 ? "" : "s");
        printf("\n  %s  %zu cells\n  %s  %zu fits (%zu ok, %zu skipped)\n  %s\n", sum, s.ncells, fitp, nfits, ok,
               nfits - ok, md);
        if (!s.calib_runs && s.ncells)
            printf("  note: no calibrate runs, so memory is the raw MRSS (not calibrated)\n");
        if (s.modes_flagged)
            printf("  note: %zu cell%s not one distribution (between-process or bimodal): report.md, \"One "
                   "distribution per cell?\"\n",
                   s.modes_flagged, s.modes_flagged == 1 ? " is" : "s are");
        if (ok) {
            printf("\nTable II: fitted exponents n of the memory power law MRSS = a + b·M1·P^n (Eq. 17)\n");
            write_table2(stdout, &s, fits, nfits, 0);
        }
    }
    json_decref(env);
    json_decref(config);
    hx_fit_free_all(fits, nfits);
    hx_summary_free(&s);
    return status;
}
