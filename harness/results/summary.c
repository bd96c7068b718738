/* summary.c — summary.csv and fits.csv written and read back, the types' frees and the
 * verdicts' names (summary.h). */
#include "harness/results/summary.h"
#include "harness/util/csv.h"
#include "harness/util/errors.h"
#include "harness/util/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const hx_bd_names[HX_BD_N] = {"work", "search", "steal", "join", "wait", "fiber", "sleep", "promote", "wall"};

static const char *const names[HX_MODES_N] = {"", "ok", "too-few", "between-process", "bimodal"};

const char *hx_modes_name(hx_modes_verdict v) { return v < HX_MODES_N ? names[v] : ""; }

hx_modes_verdict hx_modes_parse(const char *name) {
    for (int v = 1; name && v < HX_MODES_N; v++)
        if (!strcmp(name, names[v]))
            return (hx_modes_verdict)v;
    return HX_MODES_NONE;
}

void hx_summary_free(hx_summary *s) {
    for (size_t i = 0; i < s->ncells; i++) {
        free(s->cells[i].benchmark);
        free(s->cells[i].kernel);
        free(s->cells[i].variant);
        free(s->cells[i].failures);
    }
    free(s->cells);
    for (size_t i = 0; i < s->nfailures; i++) {
        free(s->failures[i].benchmark);
        free(s->failures[i].variant);
        free(s->failures[i].status);
        free(s->failures[i].last_stderr);
    }
    free(s->failures);
    for (size_t i = 0; i < s->nbenches; i++) {
        free(s->benches[i].name);
        free(s->benches[i].kernel);
        free(s->benches[i].params);
    }
    free(s->benches);
    for (size_t i = 0; i < s->nwarnings; i++)
        free(s->warnings[i]);
    free(s->warnings);
    memset(s, 0, sizeof *s);
}

void hx_fit_free_all(hx_fit *fits, size_t n) {
    for (size_t i = 0; i < n; i++) {
        free(fits[i].benchmark);
        free(fits[i].variant);
    }
    free(fits);
}

/* The double columns of summary.csv after "failures", in results.h's order; the last NLATE
 * come after the modes columns (they were added later: the columns before keep their places). */
static const struct dcol {
    const char *name;
    size_t off;
} summary_dcols[] = {
    {"time_median", offsetof(hx_cell, time_median)},
    {"time_mean", offsetof(hx_cell, time_mean)},
    {"time_sd", offsetof(hx_cell, time_sd)},
    {"time_se", offsetof(hx_cell, time_se)},
    {"time_min", offsetof(hx_cell, time_min)},
    {"time_max", offsetof(hx_cell, time_max)},
    {"mrss_median_kib", offsetof(hx_cell, mrss_median)},
    {"mrss_se_kib", offsetof(hx_cell, mrss_se)},
    {"calib_median_kib", offsetof(hx_cell, calib_median)},
    {"calib_se_kib", offsetof(hx_cell, calib_se)},
    {"mem_kib", offsetof(hx_cell, mem)},
    {"mem_se_kib", offsetof(hx_cell, mem_se)},
    {"speedup", offsetof(hx_cell, speedup)},
    {"speedup_se", offsetof(hx_cell, speedup_se)},
    {"efficiency", offsetof(hx_cell, efficiency)},
    {"efficiency_se", offsetof(hx_cell, efficiency_se)},
    {"cpu_median_s", offsetof(hx_cell, cpu_median)},
    {"cpu_se_s", offsetof(hx_cell, cpu_se)},
    {"span_bound", offsetof(hx_cell, span_bound)},
    {"burdened_bound", offsetof(hx_cell, burdened_bound)},
    {"work_s", offsetof(hx_cell, bd[HX_BD_WORK])},
    {"search_s", offsetof(hx_cell, bd[HX_BD_SEARCH])},
    {"steal_s", offsetof(hx_cell, bd[HX_BD_STEAL])},
    {"join_s", offsetof(hx_cell, bd[HX_BD_JOIN])},
    {"wait_s", offsetof(hx_cell, bd[HX_BD_WAIT])},
    {"fiber_s", offsetof(hx_cell, bd[HX_BD_FIBER])},
    {"sleep_s", offsetof(hx_cell, bd[HX_BD_SLEEP])},
    {"workers_wall_s", offsetof(hx_cell, bd[HX_BD_WALL])},
    {"inflation_ts", offsetof(hx_cell, inflation_ts)},
    {"inflation_t1", offsetof(hx_cell, inflation_t1)},
    {"promotions_per_s", offsetof(hx_cell, promotions_per_s)},
    {"promote_s", offsetof(hx_cell, bd[HX_BD_PROMOTE])},
    {"promotion_ns", offsetof(hx_cell, promotion_ns)},
};
#define NDCOLS (sizeof summary_dcols / sizeof *summary_dcols)
#define NLATE 2

/* After them: "modes" (the verdict's name), then these (modes.h), then mode1_runs, mode2_runs
 * after each cluster's median. */
static const struct dcol modes_dcols[] = {
    {"modes_p", offsetof(hx_cell, modes.p)},
    {"modes_sd_between", offsetof(hx_cell, modes.sd_between)},
    {"modes_sd_within", offsetof(hx_cell, modes.sd_within)},
    {"modes_d", offsetof(hx_cell, modes.d)},
    {"modes_ratio", offsetof(hx_cell, modes.ratio)},
    {"mode1_median_s", offsetof(hx_cell, modes.median[0])},
    {"mode2_median_s", offsetof(hx_cell, modes.median[1])},
};
#define NMCOLS (sizeof modes_dcols / sizeof *modes_dcols)
static const char *const mode_runs_cols[2] = {"mode1_runs", "mode2_runs"};

static const struct dcol fit_dcols[] = {
    {"m1_kib", offsetof(hx_fit, m1)}, {"a", offsetof(hx_fit, a)},       {"a_se", offsetof(hx_fit, a_se)},
    {"b", offsetof(hx_fit, b)},       {"b_se", offsetof(hx_fit, b_se)}, {"n", offsetof(hx_fit, n)},
    {"n_se", offsetof(hx_fit, n_se)}, {"chi2_dof", offsetof(hx_fit, chi2_dof)},
};
#define NFCOLS (sizeof fit_dcols / sizeof *fit_dcols)

static double *dfield(void *base, size_t off) { return (double *)(void *)((char *)base + off); }
static double cdfield(const void *base, size_t off) { return *(const double *)(const void *)((const char *)base + off); }

int hx_summary_write(const char *path, const hx_summary *s) {
    char tmp[PATH_MAX];
    FILE *f = hx_atomic_open(path, tmp, sizeof tmp);
    if (!f)
        return -errno;
    fputs("benchmark,kernel,variant,workers,oversubscribed,n_ok,n_failed,failures", f);
    for (size_t k = 0; k < NDCOLS - NLATE; k++)
        fprintf(f, ",%s", summary_dcols[k].name);
    fputs(",modes", f);
    for (size_t k = 0; k < NMCOLS; k++)
        fprintf(f, ",%s%s%s", modes_dcols[k].name, k >= NMCOLS - 2 ? "," : "",
                k >= NMCOLS - 2 ? mode_runs_cols[k - (NMCOLS - 2)] : "");
    for (size_t k = NDCOLS - NLATE; k < NDCOLS; k++)
        fprintf(f, ",%s", summary_dcols[k].name);
    fputc('\n', f);
    for (size_t i = 0; i < s->ncells; i++) {
        hx_cell *c = &s->cells[i];
        hx_csv_str(f, c->benchmark);
        fputc(',', f);
        hx_csv_str(f, c->kernel);
        fputc(',', f);
        hx_csv_str(f, c->variant);
        fprintf(f, ",%ld,%s,%d,%d,", c->workers, c->oversubscribed ? "true" : "false", c->n_ok, c->n_failed);
        hx_csv_str(f, c->failures);
        for (size_t k = 0; k < NDCOLS - NLATE; k++) {
            fputc(',', f);
            hx_csv_num(f, *dfield(c, summary_dcols[k].off));
        }
        fprintf(f, ",%s", hx_modes_name(c->modes.verdict));
        for (size_t k = 0; k < NMCOLS; k++) {
            fputc(',', f);
            hx_csv_num(f, *dfield(c, modes_dcols[k].off));
            if (k >= NMCOLS - 2 && c->modes.n[k - (NMCOLS - 2)])
                fprintf(f, ",%zu", c->modes.n[k - (NMCOLS - 2)]);
            else if (k >= NMCOLS - 2)
                fputc(',', f);
        }
        for (size_t k = NDCOLS - NLATE; k < NDCOLS; k++) {
            fputc(',', f);
            hx_csv_num(f, *dfield(c, summary_dcols[k].off));
        }
        fputc('\n', f);
    }
    return hx_atomic_commit(f, tmp, path);
}

int hx_fits_write(const char *path, const hx_fit *fits, size_t n) {
    char tmp[PATH_MAX];
    FILE *f = hx_atomic_open(path, tmp, sizeof tmp);
    if (!f)
        return -errno;
    fputs("benchmark,variant,status,points", f);
    for (size_t k = 0; k < NFCOLS; k++)
        fprintf(f, ",%s", fit_dcols[k].name);
    fputs(",note\n", f);
    for (size_t i = 0; i < n; i++) {
        const hx_fit *x = &fits[i];
        hx_csv_str(f, x->benchmark);
        fputc(',', f);
        hx_csv_str(f, x->variant);
        fprintf(f, ",%s,%d", x->ok ? "ok" : "skipped", x->points);
        for (size_t k = 0; k < NFCOLS; k++) {
            fputc(',', f);
            hx_csv_num(f, cdfield(x, fit_dcols[k].off));
        }
        fputc(',', f);
        hx_csv_str(f, x->note);
        fputc('\n', f);
    }
    return hx_atomic_commit(f, tmp, path);
}


/* The modes columns of one row into c->modes (optional columns: absent, the verdict is none):
 * NULL, or the name of the column that does not parse. */
static const char *read_modes(hx_cell *c, char **fields, size_t nf, long cmode, const long *cm, const long *cruns) {
    hx_modes *m = &c->modes;
    memset(m, 0, sizeof *m);
    m->verdict = cmode >= 0 ? hx_modes_parse(hx_csv_field(fields, nf, cmode)) : HX_MODES_NONE;
    for (size_t k = 0; k < NMCOLS; k++) {
        double *d = dfield(c, modes_dcols[k].off);
        *d = NAN;
        if (cm[k] >= 0 && !hx_csv_parse_num(hx_csv_field(fields, nf, cm[k]), d))
            return modes_dcols[k].name;
    }
    for (int k = 0; k < 2; k++) {
        const char *v = cruns[k] >= 0 ? hx_csv_field(fields, nf, cruns[k]) : "";
        long n = 0;
        if (*v && (!hx_csv_parse_long(v, &n) || n < 0))
            return mode_runs_cols[k];
        m->n[k] = (size_t)n;
    }
    return NULL;
}

int hx_summary_read(const char *path, hx_summary *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    hx_csv_table t;
    int rc = hx_csv_load(path, &t);
    if (rc)
        return rc;
    long cb = hx_csv_col(&t, "benchmark"), ck = hx_csv_col(&t, "kernel"), cv = hx_csv_col(&t, "variant"),
         cw = hx_csv_col(&t, "workers"), co = hx_csv_col(&t, "oversubscribed"), cok = hx_csv_col(&t, "n_ok"),
         cnf = hx_csv_col(&t, "n_failed"), cf = hx_csv_col(&t, "failures");
    long cd[NDCOLS], cm[NMCOLS], cmode = hx_csv_col(&t, "modes"), cruns[2];
    for (size_t k = 0; k < NDCOLS; k++)
        cd[k] = hx_csv_col(&t, summary_dcols[k].name);
    for (size_t k = 0; k < NMCOLS; k++)
        cm[k] = hx_csv_col(&t, modes_dcols[k].name);
    for (int k = 0; k < 2; k++)
        cruns[k] = hx_csv_col(&t, mode_runs_cols[k]);
    if (cb < 0 || cv < 0 || cw < 0) {
        hx_csv_free(&t);
        return hx_errf(err, errlen, "%s: not a summary.csv (no benchmark, variant or workers column)", path);
    }
    for (size_t i = 1; i < t.nlines; i++) {
        if (!t.lines[i][0])
            continue;
        char *fields[64];
        size_t nf = hx_csv_split(t.lines[i], fields, 64);
        out->cells = hx_xrealloc(out->cells, (out->ncells + 1) * sizeof *out->cells);
        hx_cell *c = &out->cells[out->ncells];
        memset(c, 0, sizeof *c);
        long w = 0, nok = 0, nfail = 0;
        const char *bad = NULL;
        if (!hx_csv_parse_long(hx_csv_field(fields, nf, cw), &w) || w < 1)
            bad = "workers";
        if (cok >= 0 && !hx_csv_parse_long(*hx_csv_field(fields, nf, cok) ? hx_csv_field(fields, nf, cok) : "0", &nok))
            bad = "n_ok";
        if (cnf >= 0 && !hx_csv_parse_long(*hx_csv_field(fields, nf, cnf) ? hx_csv_field(fields, nf, cnf) : "0", &nfail))
            bad = "n_failed";
        for (size_t k = 0; k < NDCOLS && !bad; k++) {
            double *d = dfield(c, summary_dcols[k].off);
            *d = NAN;
            if (cd[k] >= 0 && !hx_csv_parse_num(hx_csv_field(fields, nf, cd[k]), d))
                bad = summary_dcols[k].name;
        }
        if (!bad)
            bad = read_modes(c, fields, nf, cmode, cm, cruns);
        if (bad || !*hx_csv_field(fields, nf, cb) || !*hx_csv_field(fields, nf, cv)) {
            for (size_t j = 0; j < out->ncells; j++) {
                free(out->cells[j].benchmark);
                free(out->cells[j].kernel);
                free(out->cells[j].variant);
                free(out->cells[j].failures);
            }
            free(out->cells);
            memset(out, 0, sizeof *out);
            hx_csv_free(&t);
            return hx_errf(err, errlen, "%s line %zu: bad %s", path, i + 1, bad ? bad : "benchmark or variant");
        }
        c->benchmark = hx_xstrdup(hx_csv_field(fields, nf, cb));
        c->kernel = hx_xstrdup(hx_csv_field(fields, nf, ck));
        c->variant = hx_xstrdup(hx_csv_field(fields, nf, cv));
        c->failures = hx_xstrdup(hx_csv_field(fields, nf, cf));
        c->workers = w;
        const char *o = hx_csv_field(fields, nf, co);
        c->oversubscribed = !strcmp(o, "true") || !strcmp(o, "1") || !strcmp(o, "yes");
        c->n_ok = (int)nok;
        c->n_failed = (int)nfail;
        out->ncells++;
    }
    hx_csv_free(&t);
    /* benchmarks, in order of first appearance */
    for (size_t i = 0; i < out->ncells; i++) {
        size_t b = 0;
        while (b < out->nbenches && strcmp(out->benches[b].name, out->cells[i].benchmark))
            b++;
        if (b < out->nbenches)
            continue;
        out->benches = hx_xrealloc(out->benches, (out->nbenches + 1) * sizeof *out->benches);
        hx_bench_info *bi = &out->benches[out->nbenches++];
        bi->name = hx_xstrdup(out->cells[i].benchmark);
        bi->kernel = hx_xstrdup(out->cells[i].kernel);
        bi->params = hx_xstrdup("");
        bi->serial_workers = 0;
        for (size_t j = 0; j < out->ncells; j++)
            if (!strcmp(out->cells[j].benchmark, bi->name) && !strcmp(out->cells[j].variant, "serial") &&
                out->cells[j].n_ok > 0 && (!bi->serial_workers || out->cells[j].workers < bi->serial_workers))
                bi->serial_workers = out->cells[j].workers;
    }
    return 0;
}

int hx_fits_read(const char *path, hx_fit **fits, size_t *n, char *err, size_t errlen) {
    *fits = NULL;
    *n = 0;
    hx_csv_table t;
    int rc = hx_csv_load(path, &t);
    if (rc)
        return rc;
    long cb = hx_csv_col(&t, "benchmark"), cv = hx_csv_col(&t, "variant"), cs = hx_csv_col(&t, "status"),
         cp = hx_csv_col(&t, "points"), cn = hx_csv_col(&t, "note");
    long cd[NFCOLS];
    for (size_t k = 0; k < NFCOLS; k++)
        cd[k] = hx_csv_col(&t, fit_dcols[k].name);
    if (cb < 0 || cv < 0 || cs < 0) {
        hx_csv_free(&t);
        return hx_errf(err, errlen, "%s: not a fits.csv (no benchmark, variant or status column)", path);
    }
    hx_fit *out = NULL;
    size_t nout = 0;
    for (size_t i = 1; i < t.nlines; i++) {
        if (!t.lines[i][0])
            continue;
        char *fields[64];
        size_t nf = hx_csv_split(t.lines[i], fields, 64);
        out = hx_xrealloc(out, (nout + 1) * sizeof *out);
        hx_fit *x = &out[nout];
        memset(x, 0, sizeof *x);
        const char *bad = NULL;
        long pts = 0;
        if (cp >= 0 && !hx_csv_parse_long(*hx_csv_field(fields, nf, cp) ? hx_csv_field(fields, nf, cp) : "0", &pts))
            bad = "points";
        for (size_t k = 0; k < NFCOLS && !bad; k++) {
            double *d = dfield(x, fit_dcols[k].off);
            *d = NAN;
            if (cd[k] >= 0 && !hx_csv_parse_num(hx_csv_field(fields, nf, cd[k]), d))
                bad = fit_dcols[k].name;
        }
        if (bad || !*hx_csv_field(fields, nf, cb) || !*hx_csv_field(fields, nf, cv)) {
            hx_fit_free_all(out, nout);
            hx_csv_free(&t);
            return hx_errf(err, errlen, "%s line %zu: bad %s", path, i + 1, bad ? bad : "benchmark or variant");
        }
        x->benchmark = hx_xstrdup(hx_csv_field(fields, nf, cb));
        x->variant = hx_xstrdup(hx_csv_field(fields, nf, cv));
        x->ok = !strcmp(hx_csv_field(fields, nf, cs), "ok");
        x->points = (int)pts;
        snprintf(x->note, sizeof x->note, "%s", hx_csv_field(fields, nf, cn));
        nout++;
    }
    hx_csv_free(&t);
    *fits = out;
    *n = nout;
    return 0;
}

