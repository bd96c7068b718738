/* plot.c — `forkscope plot DIR`: data files, settings and scripts in DIR/plots, then gnuplot.
 * The files and the exit statuses are described in plot.h.
 *
 * The split of work: this file decides what is drawn (which panels, which blocks, which
 * notes) and writes it as plain data plus a generated settings.gp; the scripts in plots/
 * decide how it looks.  So a user can restyle a figure by editing a script and rerunning
 * gnuplot, without the harness. */
#include "harness/report/plot.h"
#include "harness/analyze/bounds.h"
#include "harness/util/util.h"
#include "harness/config/kernels.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/report/analysis.h"
#include "harness/util/errors.h"
#include "harness/report/report.h"
#include "harness/report/breakdown.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif


/* ---- the style table ------------------------------------------------------------------------ */

/* Known variants, in legend order: baselines, then the runtime variants by stealing, stack,
 * scheduler.  Colours from Tableau 10 (distinguishable, colour-blind safer than pure hues);
 * point types are filled ones (5 square, 7 circle, 9 triangle, 11 inverted triangle,
 * 13 diamond, 15 pentagon); a neighbour in the table never shares colour or marker. */
static const struct style {
    const char *name, *color;
    int pt;
} known_styles[] = {
    {"serial", "#000000", 7},         {"omp", "#8c564b", 9},            {"omp-llvm", "#e377c2", 11},
    {"cont-seg-busy", "#1f77b4", 5},  {"cont-seg-lazy", "#17becf", 13}, {"cont-lin-busy", "#2ca02c", 15},
    {"cont-lin-lazy", "#bcbd22", 7},  {"child-seg-busy", "#d62728", 5}, {"child-seg-lazy", "#ff7f0e", 13},
    {"child-lin-busy", "#9467bd", 15}, {"child-lin-lazy", "#7f7f7f", 9},
    {"child-native-busy", "#e6550d", 11}, {"child-native-lazy", "#fd8d3c", 5},
    {"tbb", "#393b79", 13}, /* dark indigo: apart from the OpenMP browns and pinks */
};
#define NKNOWN (sizeof known_styles / sizeof *known_styles)

/* For any other name: darker shades, so they do not pass for a known variant. */
static const char *const extra_colors[] = {"#393b79", "#637939", "#8c6d31", "#843c39",
                                           "#7b4173", "#3182bd", "#e6550d", "#31a354"};
static const int extra_pts[] = {5, 7, 9, 11, 13, 15};

int hx_plot_style(const char *variant, const char **color, int *pt) {
    for (size_t i = 0; i < NKNOWN; i++)
        if (!strcmp(known_styles[i].name, variant)) {
            *color = known_styles[i].color;
            *pt = known_styles[i].pt;
            return (int)i;
        }
    uint32_t h = 2166136261u;
    for (const char *p = variant; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    *color = extra_colors[h % (sizeof extra_colors / sizeof *extra_colors)];
    *pt = extra_pts[(h / 8) % (sizeof extra_pts / sizeof *extra_pts)];
    return (int)NKNOWN;
}

/* ---- the context of one `forkscope plot` -------------------------------------------------------- */

typedef struct plotctx {
    const char *dir;
    char pdir[PATH_MAX]; /* DIR/plots */
    hx_summary s;
    hx_fit *fits;
    size_t nfits;
    int have_fits;
    char experiment[256], subtitle[512];
    long cores, maxworkers;
    const char **vars; /* variant names present, in style order (gnuplot index = i + 1) */
    size_t nvars;
    char **notes; /* for the printed output and README.txt */
    size_t nnotes;
    int bdpanels; /* panels of the breakdown figure (0: none) */
} plotctx;

static void note(plotctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(plotctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    hx_strs_vaddf(&c->notes, &c->nnotes, fmt, ap);
    va_end(ap);
}

static int var_index(const plotctx *c, const char *v) { /* 1-based, as in gnuplot */
    for (size_t i = 0; i < c->nvars; i++)
        if (!strcmp(c->vars[i], v))
            return (int)i + 1;
    return 0;
}

static int cmp_style(const void *a, const void *b) {
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    const char *col;
    int pt, rx = hx_plot_style(x, &col, &pt), ry = hx_plot_style(y, &col, &pt);
    return rx != ry ? rx - ry : strcmp(x, y);
}

static const hx_fit *find_fit(const plotctx *c, const char *bench, const char *variant) {
    for (size_t i = 0; i < c->nfits; i++)
        if (!strcmp(c->fits[i].benchmark, bench) && !strcmp(c->fits[i].variant, variant))
            return &c->fits[i];
    return NULL;
}

/* The kernel of benchmark `bench` if its memory is its input (its description's note), else NULL. */
static const hx_kernel_info *memory_is_input(const plotctx *c, const char *bench) {
    for (size_t i = 0; i < c->s.nbenches; i++)
        if (!strcmp(c->s.benches[i].name, bench)) {
            const hx_kernel_info *k = hx_kernels_find(c->s.benches[i].kernel);
            return k && k->memory_is_input ? k : NULL;
        }
    return NULL;
}

/* ---- gnuplot settings: growing lists of values, written as gnuplot arrays ------------------------ */

typedef struct glist {
    char **items; /* already in gnuplot syntax: a number or a quoted string */
    size_t n;
} glist;

static void gl_add(glist *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void gl_add(glist *l, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    hx_strs_vaddf(&l->items, &l->n, fmt, ap);
    va_end(ap);
}

/* A gnuplot string literal: single-quoted (no escapes), ' doubled. */
static void gl_add_str(glist *l, const char *s) {
    char buf[1024];
    size_t k = 0;
    buf[k++] = '\'';
    for (; *s && k < sizeof buf - 3; s++) {
        if (*s == '\'')
            buf[k++] = '\'';
        buf[k++] = *s;
    }
    buf[k++] = '\'';
    buf[k] = 0;
    gl_add(l, "%s", buf);
}

/* Writes "array NAME[n] = [...]"; an empty list becomes one placeholder (gnuplot has no
 * empty arrays; the counts written next to it say there is nothing). */
static void gl_write(FILE *f, const char *name, const glist *l, const char *placeholder) {
    fprintf(f, "array %s[%zu] = [", name, l->n ? l->n : 1);
    if (!l->n)
        fputs(placeholder, f);
    for (size_t i = 0; i < l->n; i++)
        fprintf(f, "%s%s", i ? ", " : "", l->items[i]);
    fputs("]\n", f);
}

static void gl_free(glist *l) {
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i]);
    free(l->items);
    memset(l, 0, sizeof *l);
}

static void fput_gpstr(FILE *f, const char *s) { /* a single-quoted gnuplot string */
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s, f);
    }
    fputc('\'', f);
}

/* A number for a data file: NaN as gnuplot reads it. */
static void fput_num(FILE *f, double v) {
    if (isfinite(v))
        fprintf(f, " %.10g", v);
    else
        fputs(" NaN", f);
}

/* A name as a data-file string: double-quoted, inner double quotes replaced. */
static void fput_dname(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++)
        fputc(*s == '"' ? '\'' : *s, f);
    fputc('"', f);
}

/* ---- the data files ----------------------------------------------------------------------------- */

typedef struct panels {
    glist title, first, count, note; /* per panel */
    glist var;                       /* per block: variant index */
    glist key;                       /* per block: legend text (memory) */
    glist fitfirst, fitcount, fitvar;
    glist bound;                     /* per panel: 1 if bounds.dat's block of that index has its bounds */
    int any_bound, any_burdened;
    size_t nblocks, nfit, npanels;
    int any_over;
    glist vars_used; /* variant indices with a block, for the shared legend */
} panels;

static void panels_free(panels *p) {
    gl_free(&p->title);
    gl_free(&p->first);
    gl_free(&p->count);
    gl_free(&p->note);
    gl_free(&p->var);
    gl_free(&p->key);
    gl_free(&p->fitfirst);
    gl_free(&p->fitcount);
    gl_free(&p->fitvar);
    gl_free(&p->bound);
    gl_free(&p->vars_used);
}

static void use_var(panels *p, int v) {
    char buf[16];
    snprintf(buf, sizeof buf, "%d", v);
    for (size_t i = 0; i < p->vars_used.n; i++)
        if (!strcmp(p->vars_used.items[i], buf))
            return;
    gl_add(&p->vars_used, "%d", v);
}

static FILE *open_in(plotctx *c, const char *name) {
    char path[PATH_MAX];
    if (hx_path_join(path, c->pdir, name, "")) {
        fprintf(stderr, "forkscope plot: %s/%s: path too long\n", c->pdir, name);
        return NULL;
    }
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "forkscope plot: cannot write %s: %s\n", path, strerror(errno));
    return f;
}

static int close_checked(FILE *f, plotctx *c, const char *name) {
    int bad = ferror(f);
    if (fclose(f) || bad) {
        fprintf(stderr, "forkscope plot: cannot write %s/%s: %s\n", c->pdir, name, strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}

/* bounds.dat (from ../span.csv, if the sweep measured work and span): block p-1 for panel p,
 * the work-span bound and the burdened estimate at every P from 1 to the panel's largest. */
static int write_bounds(plotctx *c, panels *p) {
    hx_spancsv_row *rows;
    size_t n;
    char err[512];
    if (hx_spancsv_load(c->dir, &rows, &n, err, sizeof err)) {
        note(c, "%s: no work-span bounds drawn", err);
        n = 0, rows = NULL;
    }
    FILE *f = open_in(c, "bounds.dat");
    if (!f) {
        free(rows);
        return -1;
    }
    fputs("# bounds.dat — written by `forkscope plot` from ../span.csv: per benchmark (block = panel - 1)\n"
          "# the work-span bound on the speedup, min(P, T1/T_inf), and the burdened estimate\n"
          "# T1/(T1/P + burdened span) (NaN where the span build did not resolve the strands), at every P.\n"
          "# columns: workers bound burdened bound/P burdened/P\n",
          f);
    for (size_t b = 0; b < c->s.nbenches; b++) {
        const char *bn = c->s.benches[b].name;
        const hx_spancsv_row *r = NULL;
        for (size_t k = 0; k < n; k++)
            if (!strcmp(rows[k].benchmark, bn) && isfinite(hx_bounds_speedup(&rows[k], 1)))
                r = &rows[k];
        long maxp = 0;
        for (size_t i = 0; i < c->s.ncells; i++)
            if (!strcmp(c->s.cells[i].benchmark, bn) && c->s.cells[i].workers > maxp)
                maxp = c->s.cells[i].workers;
        fprintf(f, "# %s\n", bn);
        if (!r || maxp < 1) {
            fputs("1 NaN NaN NaN NaN\n\n\n", f); /* (a block for the index; never drawn) */
            gl_add(&p->bound, "%d", 0);
            continue;
        }
        for (long P = 1; P <= maxp; P++) {
            double bd = hx_bounds_speedup(r, (double)P), bu = hx_bounds_burdened(r, (double)P);
            fprintf(f, "%ld", P);
            fput_num(f, bd);
            fput_num(f, bu);
            fput_num(f, bd / (double)P);
            fput_num(f, bu / (double)P);
            fputc('\n', f);
        }
        fputs("\n\n", f);
        gl_add(&p->bound, "%d", isfinite(hx_bounds_burdened(r, 1)) ? 2 : 1);
        p->any_bound = 1;
        p->any_burdened |= isfinite(hx_bounds_burdened(r, 1));
    }
    free(rows);
    return close_checked(f, c, "bounds.dat");
}

/* scaling.dat: per benchmark (panel), per variant (block): workers, speedup, its se,
 * efficiency, its se, oversubscribed. */
static int write_scaling(plotctx *c, panels *p) {
    FILE *f = open_in(c, "scaling.dat");
    if (!f)
        return -1;
    fputs("# scaling.dat — written by `forkscope plot` from ../summary.csv: speedup T_s/T_P (Eq. 15) and\n"
          "# efficiency speedup/P (Eq. 16) against workers P.  One block per (benchmark, variant), in the\n"
          "# order settings.gp lists (sc_*); blocks are separated by two blank lines.  A standard error of\n"
          "# 0 means none is known (a single run).\n"
          "# columns: workers speedup speedup_se efficiency efficiency_se oversubscribed(1/0)\n",
          f);
    for (size_t b = 0; b < c->s.nbenches; b++) {
        const char *bn = c->s.benches[b].name;
        size_t first = p->nblocks, count = 0;
        for (size_t v = 0; v < c->nvars; v++) {
            int started = 0;
            for (size_t i = 0; i < c->s.ncells; i++) {
                const hx_cell *e = &c->s.cells[i];
                if (strcmp(e->benchmark, bn) || strcmp(e->variant, c->vars[v]) || !isfinite(e->speedup))
                    continue;
                if (!started) {
                    fprintf(f, "# %s %s\n", bn, c->vars[v]);
                    started = 1;
                }
                fprintf(f, "%ld", e->workers);
                fput_num(f, e->speedup);
                fput_num(f, isfinite(e->speedup_se) ? e->speedup_se : 0);
                fput_num(f, e->efficiency);
                fput_num(f, isfinite(e->efficiency_se) ? e->efficiency_se : 0);
                fprintf(f, " %d\n", e->oversubscribed);
                p->any_over |= e->oversubscribed;
            }
            if (started) {
                fputs("\n\n", f);
                gl_add(&p->var, "%zu", v + 1);
                use_var(p, (int)v + 1);
                p->nblocks++;
                count++;
            }
        }
        gl_add_str(&p->title, bn);
        gl_add(&p->first, "%zu", first);
        gl_add(&p->count, "%zu", count);
        if (count)
            gl_add_str(&p->note, "");
        else if (!c->s.benches[b].serial_workers) {
            gl_add_str(&p->note, "no serial run: speedup undefined");
            note(c, "%s: no successful serial run, so no speedup, efficiency or overhead (empty panels)", bn);
        } else {
            gl_add_str(&p->note, "no successful runs");
            note(c, "%s: no successful timed run besides the serial one (empty panels)", bn);
        }
        p->npanels++;
    }
    if (close_checked(f, c, "scaling.dat"))
        return -1;
    return write_bounds(c, p);
}

/* Fits not drawn, grouped by reason (one note per reason, not per benchmark and variant). */
typedef struct skipgroup {
    char reason[320];
    char list[400];
    int count;
} skipgroup;

static void skip_add(skipgroup *g, const char *reason, const char *bench, const char *variant) {
    size_t k = 0;
    while (k < 16 && g[k].count && strcmp(g[k].reason, reason))
        k++;
    if (k == 16)
        k = 15; /* more than 16 reasons: the rest share the last line */
    if (!g[k].count)
        snprintf(g[k].reason, sizeof g[k].reason, "%s", reason);
    size_t len = strlen(g[k].list);
    if (g[k].count < 6)
        snprintf(g[k].list + len, sizeof g[k].list - len, "%s%s/%s", len ? ", " : "", bench, variant);
    g[k].count++;
}

/* memory.dat and memory-fit.dat: per benchmark but those whose memory is their input (unless
 * they are all there is). */
/* The memory points of variant v on benchmark bn as one block of memory.dat; its range of P
 * in *pmin, *pmax.  0 if it has none (no block written). */
static int memory_points(plotctx *c, FILE *f, panels *p, const char *bn, size_t v, double *pmin, double *pmax) {
    int started = 0;
    *pmin = INFINITY;
    *pmax = 0;
    for (size_t i = 0; i < c->s.ncells; i++) {
        const hx_cell *e = &c->s.cells[i];
        if (strcmp(e->benchmark, bn) || strcmp(e->variant, c->vars[v]) || !isfinite(e->mem) || e->mem <= 0)
            continue;
        if (!started) {
            fprintf(f, "# %s %s\n", bn, c->vars[v]);
            started = 1;
        }
        double se = isfinite(e->mem_se) ? e->mem_se : 0;
        fprintf(f, "%ld", e->workers);
        fput_num(f, e->mem);
        fput_num(f, fmax(e->mem - se, e->mem / 10));
        fput_num(f, e->mem + se);
        fprintf(f, " %d\n", e->oversubscribed);
        p->any_over |= e->oversubscribed;
        *pmin = fmin(*pmin, (double)e->workers);
        *pmax = fmax(*pmax, (double)e->workers);
    }
    if (started)
        fputs("\n\n", f);
    return started;
}

/* The most worker counts with memory data that any variant of benchmark bench has. */
static int max_points(const plotctx *c, const char *bench) {
    int best = 0;
    for (size_t v = 0; v < c->nvars; v++) {
        int n = 0;
        for (size_t i = 0; i < c->s.ncells; i++) {
            const hx_cell *e = &c->s.cells[i];
            n += !strcmp(e->benchmark, bench) && !strcmp(e->variant, c->vars[v]) && isfinite(e->mem) && e->mem > 0;
        }
        best = n > best ? n : best;
    }
    return best;
}

/* mem ~ a + b ln P over the cells of (bench, variant), weights 1/se^2 (se floored as the
 * fit does): 1 and *a, *b, or 0 with fewer than 2 points. */
static int log_growth(const plotctx *c, const char *bench, const char *variant, double *a, double *b) {
    double S = 0, Sx = 0, Sy = 0, Sxx = 0, Sxy = 0;
    int n = 0;
    for (size_t i = 0; i < c->s.ncells; i++) {
        const hx_cell *e = &c->s.cells[i];
        if (strcmp(e->benchmark, bench) || strcmp(e->variant, variant) || !isfinite(e->mem) || e->mem <= 0)
            continue;
        double se = isfinite(e->mem_se) && e->mem_se > HX_FIT_SE_FLOOR_KIB ? e->mem_se : HX_FIT_SE_FLOOR_KIB;
        double w = 1 / (se * se), xv = log((double)e->workers);
        S += w;
        Sx += w * xv;
        Sy += w * e->mem;
        Sxx += w * xv * xv;
        Sxy += w * xv * e->mem;
        n++;
    }
    double det = S * Sxx - Sx * Sx;
    if (n < 2 || !(det > 0))
        return 0;
    *b = (S * Sxy - Sx * Sy) / det;
    *a = (Sy - *b * Sx) / S;
    return 1;
}

/* Variant v's fitted curve on bn over [pmin, pmax] as a block of memory-fit.dat, and its key
 * ("v: n = ..." or "v: no fit (...)"); a fit that is missing or skipped is noted in skips.
 * 1 if a curve was written. */
static int memory_fit_curve(plotctx *c, FILE *g, const char *bn, size_t v, double pmin, double pmax,
                            skipgroup *skips, char *key, size_t keylen) {
    const hx_fit *x = find_fit(c, bn, c->vars[v]);
    if (!(x && x->ok && isfinite(x->a) && isfinite(x->b) && isfinite(x->n) && isfinite(x->m1))) {
        if (c->have_fits && strcmp(c->vars[v], "serial"))
            skip_add(skips, x ? (*x->note ? x->note : "skipped") : "not in fits.csv", bn, c->vars[v]);
        if (x && x->points < HX_FIT_MIN_POINTS)
            snprintf(key, keylen, "%s: no fit (%d point%s)", c->vars[v], x->points, x->points == 1 ? "" : "s");
        else
            snprintf(key, keylen, "%s: no fit", c->vars[v]);
        return 0;
    }
    char n[64];
    snprintf(key, keylen, "%s: n = %s", c->vars[v], hx_report_exponent(n, sizeof n, x->n, x->n_se));
    /* At the model's n -> 0 limit the fit reports a constant, which would draw a flat line
     * through growing points; the limit itself, a + b M1 P^n with b n fixed, is growth like
     * log P: draw that (weighted least squares of mem on ln P) and say so. */
    double la = NAN, lb = NAN;
    if (strstr(x->note, "n -> 0 limit") && log_growth(c, bn, c->vars[v], &la, &lb) && lb > 0)
        snprintf(key, keylen, "%s: n -> 0 (grows like log P)", c->vars[v]);
    else
        la = lb = NAN;
    int wrote = 0;
    for (int k = 0; k <= 60; k++) {
        double P = pmin * pow(pmax / pmin, k / 60.0);
        double y = isfinite(lb) ? la + lb * log(P) : x->a + x->b * x->m1 * pow(P, x->n);
        if (!(y > 0) || !isfinite(y))
            continue; /* a log axis cannot show it */
        if (!wrote && isfinite(lb))
            fprintf(g, "# %s %s: n -> 0 limit, drawn as %.6g + %.6g ln P\n", bn, c->vars[v], la, lb);
        else if (!wrote)
            fprintf(g, "# %s %s: a = %.6g, b = %.6g, M1 = %.6g, n = %.6g\n", bn, c->vars[v], x->a, x->b, x->m1, x->n);
        fprintf(g, "%.10g %.10g\n", P, y);
        wrote = 1;
    }
    if (wrote)
        fputs("\n\n", g);
    else
        note(c, "%s/%s: fitted curve is not positive over P = %g..%g: not drawn", bn, c->vars[v], pmin, pmax);
    return wrote;
}

/* memory.dat and memory-fit.dat: a panel per benchmark (those whose memory is their input
 * left out unless alone), a block per variant with data, a curve per fit. */
static int write_memory(plotctx *c, panels *p) {
    skipgroup skips[16];
    memset(skips, 0, sizeof skips);
    FILE *f = open_in(c, "memory.dat"), *g = open_in(c, "memory-fit.dat");
    if (!f || !g) {
        if (f)
            fclose(f);
        if (g)
            fclose(g);
        return -1;
    }
    fputs("# memory.dat — written by `forkscope plot` from ../summary.csv: calibrated peak memory\n"
          "# (MRSS - calibrate, KiB) against workers P.  One block per (benchmark, variant), in the order\n"
          "# settings.gp lists (mem_*); blocks separated by two blank lines.  mem_lo/mem_hi = mem -/+ its\n"
          "# standard error (mem_lo kept >= mem/10 for the log axis; equal to mem when no error is known).\n"
          "# columns: workers mem_kib mem_lo mem_hi oversubscribed(1/0)\n",
          f);
    fputs("# memory-fit.dat — written by `forkscope plot` from ../fits.csv: each successful fit of Eq. 17,\n"
          "# mem = a + b*M1*P^n, sampled over the variant's range of P.  One block per fit, in the order\n"
          "# settings.gp lists (mem_fit*); blocks separated by two blank lines.\n"
          "# columns: workers mem_fit_kib\n",
          g);
    int only_input = 1, any_fittable = 0; /* every benchmark's memory is its input */
    for (size_t b = 0; b < c->s.nbenches; b++) {
        only_input &= memory_is_input(c, c->s.benches[b].name) != NULL;
        any_fittable |= max_points(c, c->s.benches[b].name) >= 3;
    }
    for (size_t b = 0; b < c->s.nbenches; b++) {
        const char *bn = c->s.benches[b].name;
        const hx_kernel_info *ki = memory_is_input(c, bn);
        if (!only_input && ki) {
            note(c, "%s: left out of the memory figure (%s: %s); its fit is in fits.csv", bn, ki->name,
                 ki->memory_is_input);
            continue;
        }
        if (any_fittable && max_points(c, bn) < 3) { /* two points cannot show how memory grows */
            note(c, "%s: left out of the memory figure (measured at fewer than 3 worker counts)", bn);
            continue;
        }
        size_t first = p->nblocks, count = 0, ffirst = p->nfit, fcount = 0;
        for (size_t v = 0; v < c->nvars; v++) {
            double pmin, pmax;
            if (!memory_points(c, f, p, bn, v, &pmin, &pmax))
                continue;
            gl_add(&p->var, "%zu", v + 1);
            use_var(p, (int)v + 1);
            p->nblocks++;
            count++;
            char key[256];
            if (memory_fit_curve(c, g, bn, v, pmin, pmax, skips, key, sizeof key)) {
                gl_add(&p->fitvar, "%zu", v + 1);
                p->nfit++;
                fcount++;
            }
            gl_add_str(&p->key, key);
        }
        gl_add_str(&p->title, bn);
        gl_add(&p->first, "%zu", first);
        gl_add(&p->count, "%zu", count);
        gl_add(&p->fitfirst, "%zu", ffirst);
        gl_add(&p->fitcount, "%zu", fcount);
        gl_add_str(&p->note, count ? "" : "no memory data");
        if (!count)
            note(c, "%s: no memory data (no successful run)", bn);
        p->npanels++;
    }
    for (size_t k = 0; k < 16 && skips[k].count; k++)
        note(c, "no memory fit drawn for %d benchmark/variant pair%s (%s): %s%s", skips[k].count,
             skips[k].count == 1 ? "" : "s", skips[k].reason, skips[k].list, skips[k].count > 6 ? ", ..." : "");
    int r1 = close_checked(f, c, "memory.dat"), r2 = close_checked(g, c, "memory-fit.dat");
    return r1 || r2 ? -1 : 0;
}

/* overhead.dat: rows = benchmarks with a serial time, columns = non-serial variants with a
 * P = 1 time: T1/Ts and its standard error. */
static int write_overhead(plotctx *c, glist *ovvar, size_t *nrows) {
    FILE *f = open_in(c, "overhead.dat");
    if (!f)
        return -1;
    *nrows = 0;
    /* columns first: variants with at least one value */
    for (size_t v = 0; v < c->nvars; v++) {
        if (!strcmp(c->vars[v], "serial"))
            continue;
        int any = 0;
        for (size_t b = 0; b < c->s.nbenches && !any; b++) {
            long ks = hx_stats_find(&c->s, c->s.benches[b].name, "serial", c->s.benches[b].serial_workers);
            long k1 = hx_stats_find(&c->s, c->s.benches[b].name, c->vars[v], 1);
            any = ks >= 0 && k1 >= 0 && isfinite(c->s.cells[k1].time_median);
        }
        if (any)
            gl_add(ovvar, "%zu", v + 1);
    }
    fputs("# overhead.dat — written by `forkscope plot` from ../summary.csv: the overhead T_1/T_s, a\n"
          "# variant's median time at P = 1 over the serial projection's, per benchmark (rows) and\n"
          "# variant (column pairs: value, standard error; NaN = no data).  Variants, in column order:\n#",
          f);
    for (size_t k = 0; k < ovvar->n; k++)
        fprintf(f, " %s", c->vars[atoi(ovvar->items[k]) - 1]);
    fputs("\n# columns: benchmark", f);
    for (size_t k = 0; k < ovvar->n; k++)
        fprintf(f, " %s %s_se", c->vars[atoi(ovvar->items[k]) - 1], c->vars[atoi(ovvar->items[k]) - 1]);
    fputc('\n', f);
    for (size_t b = 0; b < c->s.nbenches && ovvar->n; b++) {
        const char *bn = c->s.benches[b].name;
        long ks = hx_stats_find(&c->s, bn, "serial", c->s.benches[b].serial_workers);
        if (ks < 0)
            continue;
        const hx_cell *ser = &c->s.cells[ks];
        fput_dname(f, bn);
        int any = 0;
        for (size_t k = 0; k < ovvar->n; k++) {
            long k1 = hx_stats_find(&c->s, bn, c->vars[atoi(ovvar->items[k]) - 1], 1);
            double q = NAN, qse = NAN;
            if (k1 >= 0)
                hx_stats_ratio(c->s.cells[k1].time_median, c->s.cells[k1].time_se, ser->time_median, ser->time_se, &q,
                               &qse);
            fput_num(f, q);
            fput_num(f, isfinite(q) ? (isfinite(qse) ? qse : 0) : NAN);
            any |= isfinite(q);
        }
        fputc('\n', f);
        *nrows += 1;
        if (!any)
            note(c, "%s: no variant has a P = 1 time: no overhead bars", bn);
    }
    return close_checked(f, c, "overhead.dat");
}

/* settings.gp: everything the scripts need to know about the data files. */
static int write_settings(plotctx *c, panels *sc, panels *mem, glist *ovvar, size_t ovrows, const char *raster) {
    FILE *f = open_in(c, "settings.gp");
    if (!f)
        return -1;
    fputs("# settings.gp — written by `forkscope plot` (and rewritten by every run of it): what the figure\n"
          "# scripts here need to know about the data files: panels, blocks, variant styles, titles.\n"
          "# To change the look of a figure, edit its script (speedup.gp, ...) and run it with gnuplot.\n",
          f);
    fputs("experiment = ", f);
    fput_gpstr(f, c->experiment);
    fputs("\nsubtitle = ", f);
    fput_gpstr(f, c->subtitle);
    fprintf(f, "\ncores = %ld      # online cores of the machine (0: unknown); more workers = oversubscribed\n",
            c->cores);
    fprintf(f, "maxworkers = %ld\n", c->maxworkers);
    fprintf(f, "if (!exists(\"term\")) term = '%s'   # pngcairo | png | pdfcairo | svg\n\n", raster);

    glist n = {0}, col = {0}, pt = {0};
    for (size_t v = 0; v < c->nvars; v++) {
        const char *cl;
        int p;
        hx_plot_style(c->vars[v], &cl, &p);
        gl_add_str(&n, c->vars[v]);
        gl_add_str(&col, cl);
        gl_add(&pt, "%d", p);
    }
    fputs("# variants: name, colour, point type (filled; point type - 1 is its hollow twin, used for\n"
          "# oversubscribed points).  The same variant has the same style in every figure.\n",
          f);
    fprintf(f, "nvar = %zu\n", c->nvars);
    gl_write(f, "vname", &n, "''");
    gl_write(f, "vcolor", &col, "'#000000'");
    gl_write(f, "vpt", &pt, "7");
    gl_free(&n);
    gl_free(&col);
    gl_free(&pt);

    fputs("\n# scaling.dat (speedup.gp, efficiency.gp): one panel per benchmark; panel p has the blocks\n"
          "# sc_first[p] .. sc_first[p] + sc_count[p] - 1 (gnuplot 'index', from 0); block k is variant\n"
          "# sc_var[k+1]; a panel without blocks shows sc_note[p].\n",
          f);
    fprintf(f, "sc_npanels = %zu\nsc_nblocks = %zu\nsc_over = %d\nsc_vars = '", sc->npanels, sc->nblocks,
            sc->any_over);
    for (size_t i = 0; i < sc->vars_used.n; i++)
        fprintf(f, "%s%s", i ? " " : "", sc->vars_used.items[i]);
    fputs("'   # variants in the legend\n", f);
    gl_write(f, "sc_title", &sc->title, "''");
    gl_write(f, "sc_first", &sc->first, "0");
    gl_write(f, "sc_count", &sc->count, "0");
    gl_write(f, "sc_note", &sc->note, "''");
    gl_write(f, "sc_var", &sc->var, "1");
    fputs("# bounds.dat: panel p's block is index p - 1; sc_bound[p]: 0 none, 1 the work-span bound,\n"
          "# 2 also the burdened estimate\n", f);
    fprintf(f, "sc_anybound = %d\nsc_anyburdened = %d\n", sc->any_bound, sc->any_burdened);
    gl_write(f, "sc_bound", &sc->bound, "0");

    fputs("\n# memory.dat and memory-fit.dat (memory.gp): likewise; block k of memory.dat is variant\n"
          "# mem_var[k+1] with legend mem_key[k+1]; panel p's fitted curves are blocks mem_fitfirst[p] ..\n"
          "# + mem_fitcount[p] - 1 of memory-fit.dat, block k being variant mem_fitvar[k+1].\n",
          f);
    fprintf(f, "mem_npanels = %zu\nmem_nblocks = %zu\nmem_nfit = %zu\nmem_over = %d\n", mem->npanels, mem->nblocks,
            mem->nfit, mem->any_over);
    size_t maxkeys = 0;
    for (size_t i = 0; i < mem->count.n; i++)
        if ((size_t)atoi(mem->count.items[i]) > maxkeys)
            maxkeys = (size_t)atoi(mem->count.items[i]);
    fprintf(f, "mem_maxkeys = %zu   # the most legend entries of a panel\n", maxkeys);
    gl_write(f, "mem_title", &mem->title, "''");
    gl_write(f, "mem_first", &mem->first, "0");
    gl_write(f, "mem_count", &mem->count, "0");
    gl_write(f, "mem_note", &mem->note, "''");
    gl_write(f, "mem_var", &mem->var, "1");
    gl_write(f, "mem_key", &mem->key, "''");
    gl_write(f, "mem_fitfirst", &mem->fitfirst, "0");
    gl_write(f, "mem_fitcount", &mem->fitcount, "0");
    gl_write(f, "mem_fitvar", &mem->fitvar, "1");

    fputs("\n# overhead.dat (overhead.gp): ov_nrows benchmarks; column pair k (columns 2k, 2k+1) is variant\n"
          "# ov_var[k].\n",
          f);
    fprintf(f, "ov_nrows = %zu\nov_ncols = %zu\n", ovrows, ovvar->n);
    gl_write(f, "ov_var", ovvar, "1");
    return close_checked(f, c, "settings.gp");
}

/* ---- forkscope plot DIR: hx_plot_dir ------------------------------------------------------------------------------ */


static void free_ctx(plotctx *c) {
    hx_summary_free(&c->s);
    hx_fit_free_all(c->fits, c->nfits);
    free(c->vars);
    for (size_t i = 0; i < c->nnotes; i++)
        free(c->notes[i]);
    free(c->notes);
}

/* Did the experiment ask for this benchmark on this variant?  A benchmark's own "variants"
 * list replaces the top-level one.  Without a readable config.json: assume it did, so a
 * missing variant is still reported. */
static int planned(json_t *config, const char *bench, const char *variant) {
    json_t *benches = json_object_get(config, "benchmarks"), *list = json_object_get(config, "variants"), *e;
    if (!json_is_array(benches) || !json_is_array(list))
        return 1;
    size_t i;
    json_array_foreach(benches, i, e) {
        const char *name = json_string_value(json_object_get(e, "name"));
        if (!name)
            name = json_string_value(json_object_get(e, "kernel"));
        if (name && !strcmp(name, bench) && json_is_array(json_object_get(e, "variants")))
            list = json_object_get(e, "variants");
    }
    json_array_foreach(list, i, e)
        if (json_is_string(e) && !strcmp(json_string_value(e), variant))
            return 1;
    return 0;
}

/* Titles: the experiment's name and a subtitle with the machine and date. */
static void load_titles(plotctx *c) {
    char why[512];
    json_t *env = hx_report_load_json(c->dir, "env.json", why, sizeof why);
    json_t *config = hx_report_load_json(c->dir, "config.json", why, sizeof why);
    hx_report_experiment_name(config, c->dir, c->experiment, sizeof c->experiment);
    const char *cpu = json_string_value(json_object_get(env, "cpu_model"));
    const char *date = json_string_value(json_object_get(env, "date"));
    json_t *cores = json_object_get(env, "cores");
    c->cores = json_is_integer(cores) ? (long)json_integer_value(cores) : 0;
    char cs[64] = "";
    if (c->cores)
        snprintf(cs, sizeof cs, "%s%ld cores", cpu ? ", " : "", c->cores);
    snprintf(c->subtitle, sizeof c->subtitle, "%s%s%s%.10s", cpu ? cpu : "", cs, date && (cpu || *cs) ? " — " : "",
             date ? date : "");
    json_decref(env);
    json_decref(config);
}

/* The directory argument of `forkscope plot`: 0 and *dir, or an HX_E* code (help: HX_OK
 * with *dir NULL). */
/* Stage 1: summary.csv (required), fits.csv (optional), the variants in style order, and
 * notes on the gaps: cells without a successful run, variants planned but not run. */
static int plot_load(plotctx *c) {
    char path[PATH_MAX], err[512];
    snprintf(path, sizeof path, "%s/summary.csv", c->dir);
    int rc = hx_summary_read(path, &c->s, err, sizeof err);
    if (rc) {
        if (rc == -EINVAL)
            fprintf(stderr, "forkscope plot: %s\n", err);
        else
            fprintf(stderr, "forkscope plot: %s: %s%s\n", path, strerror(-rc),
                    rc == -ENOENT ? " (run `forkscope fit DIR` first)" : "");
        return HX_EIO;
    }
    snprintf(path, sizeof path, "%s/fits.csv", c->dir);
    rc = hx_fits_read(path, &c->fits, &c->nfits, err, sizeof err);
    c->have_fits = rc == 0;
    if (rc == -EINVAL)
        fprintf(stderr, "forkscope plot: warning: %s: memory figure drawn without fits\n", err);
    else if (rc)
        fprintf(stderr, "forkscope plot: warning: %s: %s: memory figure drawn without fits\n", path, strerror(-rc));
    if (rc)
        note(c, "fits.csv unreadable: no fitted curves");
    load_titles(c);
    for (size_t i = 0; i < c->s.ncells; i++) {
        const hx_cell *e = &c->s.cells[i];
        if (e->workers > c->maxworkers)
            c->maxworkers = e->workers;
        if (!var_index(c, e->variant)) {
            c->vars = hx_xrealloc(c->vars, (c->nvars + 1) * sizeof *c->vars);
            c->vars[c->nvars++] = e->variant;
        }
        if (e->n_ok == 0)
            note(c, "%s/%s at P = %ld: no successful run (%s): a gap", e->benchmark, e->variant, e->workers,
                 *e->failures ? e->failures : "no runs");
    }
    if (c->nvars > 1)
        qsort(c->vars, c->nvars, sizeof *c->vars, cmp_style);
    char why[512];
    json_t *config = hx_report_load_json(c->dir, "config.json", why, sizeof why);
    for (size_t b = 0; b < c->s.nbenches; b++) /* a variant that ran elsewhere but not here */
        for (size_t v = 0; v < c->nvars; v++) {
            int found = 0;
            for (size_t i = 0; i < c->s.ncells && !found; i++)
                found = !strcmp(c->s.cells[i].benchmark, c->s.benches[b].name) &&
                        !strcmp(c->s.cells[i].variant, c->vars[v]);
            if (!found && strcmp(c->vars[v], "serial") && planned(config, c->s.benches[b].name, c->vars[v]))
                note(c, "%s/%s: not run (no cells in summary.csv)", c->s.benches[b].name, c->vars[v]);
        }
    json_decref(config);
    return HX_OK;
}

/* Stage 3 of plot: gnuplot, with notes on the terminals it lacks. */
static int find_gnuplot(plotctx *c, hx_gnuplot *g) {
    int rc = hx_gnuplot_find(g);
    if (g->raster && strcmp(g->raster, "pngcairo"))
        note(c, "gnuplot has no pngcairo terminal: PNGs drawn with 'png' (libgd)");
    if (g->ok && g->vector && strcmp(g->vector, "pdfcairo"))
        note(c, "gnuplot has no pdfcairo terminal: vector figures are SVG instead of PDF");
    if (g->ok && !g->vector)
        note(c, "gnuplot has neither pdfcairo nor svg: PNG only");
    return rc;
}

/* plots/README.txt: what each file is and how to redraw a figure. */
static int write_readme(plotctx *c, const hx_gnuplot *g) {
    FILE *rd = open_in(c, "README.txt");
    if (!rd)
        return HX_EIO;
    fprintf(rd, "Figures of experiment \"%s\", drawn by `forkscope plot %s` with gnuplot from ../summary.csv\n"
                "and ../fits.csv.  Everything here is rewritten by every `forkscope plot`.\n\n"
                "  speedup.*     speedup T_s/T_P against workers, a panel per benchmark (paper Fig. 5a/6a)\n"
                "  efficiency.*  parallel efficiency speedup/P, likewise (Fig. 5b/6b)\n"
                "  memory.*      calibrated peak memory, log-log, with each variant's fit of Eq. 17 (Fig. 7)\n"
                "  overhead.*    T_1/T_s per benchmark and variant\n"
                "  breakdown.*   where the workers' time went (the config's \"breakdown\"), a stacked bar per cell\n\n"
                "Data: scaling.dat, memory.dat, memory-fit.dat, overhead.dat (plain text; the header of\n"
                "each says its columns), settings.gp (panels, blocks, styles: generated).\n"
                "Scripts: speedup.gp, efficiency.gp (both draw with scaling.gp), memory.gp, overhead.gp,\n"
                "term.gp (terminal and output).  To redraw one after editing it or a data file:\n\n"
                "  gnuplot %s/speedup.gp                          -> speedup.%s\n"
                "  gnuplot -e \"term='%s'\" %s/speedup.gp    -> the vector version\n\n"
                "Style: one colour and marker per variant (the same in every figure); hollow markers are\n"
                "oversubscribed points (more workers than the machine's cores).\n",
            c->experiment, c->dir, c->pdir, "png", g->vector ? g->vector : "pdfcairo", c->pdir);
    if (c->nnotes) {
        fputs("\nNotes from the last run:\n", rd);
        for (size_t i = 0; i < c->nnotes; i++)
            fprintf(rd, "  - %s\n", c->notes[i]);
    }
    return close_checked(rd, c, "README.txt") ? HX_EIO : HX_OK;
}

/* Stage 5: draws every figure with every terminal and lists what was written. */
static int draw_figures(plotctx *c, const hx_gnuplot *g, int with_memory, int with_overhead, int with_breakdown) {
    static const char *const figures[] = {"speedup", "efficiency", "memory", "overhead", "breakdown"};
    hx_drawn drawn = {0};
    int status = HX_OK;
    for (size_t fi = 0; fi < sizeof figures / sizeof *figures && status == HX_OK; fi++) {
        if ((!strcmp(figures[fi], "overhead") && !with_overhead) || (!strcmp(figures[fi], "memory") && !with_memory) ||
            (!strcmp(figures[fi], "breakdown") && !with_breakdown))
            continue;
        status = hx_gnuplot_draw(g, c->pdir, figures[fi], &drawn);
    }
    printf("forkscope plot: %s/\n", c->pdir);
    for (int i = 0; i < drawn.n; i++)
        printf("  %s\n", drawn.files[i]);
    printf("  data: scaling.dat bounds.dat memory.dat memory-fit.dat overhead.dat%s settings.gp; scripts: *.gp; "
           "README.txt\n", with_breakdown ? " breakdown.dat" : "");
    printf("  redraw by hand: gnuplot %s/speedup.gp   (-e \"term='%s'\" for the vector version)\n", c->pdir,
           g->vector ? g->vector : g->raster);
    if (drawn.warnings)
        printf("  gnuplot printed warnings for %d figure%s (above)\n", drawn.warnings, drawn.warnings == 1 ? "" : "s");
    return status == -ENAMETOOLONG ? HX_EUSAGE : status;
}

/* Stage 2: the data files and settings, written whatever happens next. */
static int write_data(plotctx *c, panels *sc, panels *mem, glist *ovvar, size_t *ovrows, const hx_gnuplot *g) {
    if (mkdir(c->pdir, 0777) && errno != EEXIST) {
        fprintf(stderr, "forkscope plot: cannot create %s: %s\n", c->pdir, strerror(errno));
        return HX_EIO;
    }
    if (write_scaling(c, sc) || write_memory(c, mem) || write_overhead(c, ovvar, ovrows))
        return HX_EIO;
    if ((c->bdpanels = hx_breakdown_write_plot(c->pdir, &c->s)) < 0) {
        fprintf(stderr, "forkscope plot: cannot write %s/breakdown.dat: %s\n", c->pdir, strerror(errno));
        return HX_EIO;
    }
    if (!*ovrows || !ovvar->n)
        note(c, "no overhead chart: it needs a benchmark with a serial run and a P = 1 run of another variant");
    return write_settings(c, sc, mem, ovvar, *ovrows, g->raster ? g->raster : "pngcairo") ? HX_EIO : HX_OK;
}

int hx_plot_dir(const char *dir) {
    int status;
    plotctx c;
    memset(&c, 0, sizeof c);
    c.dir = dir;
    if ((size_t)snprintf(c.pdir, sizeof c.pdir, "%s/plots", dir) >= sizeof c.pdir - 32) {
        fprintf(stderr, "forkscope plot: %s: path too long\n", dir);
        return HX_EUSAGE;
    }
    if ((status = plot_load(&c))) {
        free_ctx(&c);
        return status;
    }
    panels sc, mem;
    memset(&sc, 0, sizeof sc);
    memset(&mem, 0, sizeof mem);
    glist ovvar = {0};
    size_t ovrows = 0;
    hx_gnuplot g;
    int gp_status = find_gnuplot(&c, &g);
    if ((status = write_data(&c, &sc, &mem, &ovvar, &ovrows, &g)))
        goto out;
    status = gp_status;
    int sc_status = hx_gnuplot_install_scripts(c.pdir);
    if (sc_status == HX_EIO || !status)
        status = sc_status;
    if (!g.ok && status == HX_OK) {
        fprintf(stderr, "forkscope plot: gnuplot is not on PATH: the figures are not drawn.  Install it (Debian: "
                        "apt-get install gnuplot-nox) and run `forkscope plot %s` again.\n",
                dir);
        status = HX_ETOOL;
    }
    int rd_status = write_readme(&c, &g);
    if (rd_status)
        status = rd_status;
    if (status != HX_OK)
        printf("forkscope plot: data files and settings written to %s/ (no figures)\n", c.pdir);
    else
        status = draw_figures(&c, &g, mem.npanels > 0, ovrows && ovvar.n, c.bdpanels > 0);
out:
    if (c.nnotes) {
        printf("notes:\n");
        for (size_t i = 0; i < c.nnotes; i++)
            printf("  - %s\n", c.notes[i]);
    }
    panels_free(&sc);
    panels_free(&mem);
    gl_free(&ovvar);
    free_ctx(&c);
    return status;
}
