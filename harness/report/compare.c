/* compare.c — `forkscope compare`: two variants of one sweep, or two sweeps, judged with
 * statistics (harness/analyze/abtest.h) cell by cell: time, calibrated peak memory, and the memory
 * law's exponent n.  Writes compare.md, compare.csv and a forest plot.
 *
 * Stages: arguments -> load each side's runs (raw.jsonl, config.json, env.json) -> cells
 * (benchmark x P, and variant when two sweeps are compared) -> per cell a test per metric,
 * with its reliability flags -> Holm across the cells of each metric, verdicts, the geometric
 * mean -> the exponent from each side's fits -> files. */
#include "harness/util/cli.h"
#include "harness/report/analysis.h"
#include "harness/analyze/abtest.h"
#include "harness/util/errors.h"
#include "harness/analyze/fit.h"
#include "harness/analyze/modes.h"
#include "harness/report/plot.h"
#include "harness/report/report.h"
#include "harness/analyze/stats.h"
#include "harness/util/util.h"

#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- options ------------------------------------------------------------------------------------ */

typedef struct opts {
    const char *dir_a, *dir_b; /* dir_b NULL: one sweep, --a and --b name the variants */
    const char *va, *vb, *variant;
    const char *out;
    double noise, alpha; /* the noise band (a fraction) and the level */
    unsigned long long seed;
} opts;

static void compare_usage(FILE *f) {
    fputs("usage: forkscope compare DIR --a VARIANT --b VARIANT [options]\n"
          "       forkscope compare DIR_A DIR_B [--variant VARIANT] [options]\n"
          "Compares B against A cell by cell (benchmark x workers): the ratio B/A of times and of\n"
          "calibrated peak memory with a 95% interval, a p-value (Holm-adjusted over the cells), the\n"
          "probability that a B run is faster, and a verdict; and the memory exponent n of each fit.\n"
          "Runs of one sweep in \"interleaved\" or \"paired\" order are paired by repetition\n"
          "(Wilcoxon signed-rank); otherwise Mann-Whitney.  Writes compare.md, compare.csv and\n"
          "forest.png/.pdf into the output directory.\n"
          "  --noise PCT   the noise band (default 2): a change is claimed only if its whole 95%\n"
          "                interval lies beyond it; an interval inside it is \"no change\"\n"
          "  --alpha A     the level of the tests (default 0.05)\n"
          "  --seed N      the bootstrap's seed (default 1)\n"
          "  -o DIR        output directory (default DIR/compare-A-vs-B, or DIR_B/compare-vs-NAME)\n",
          f);
}

/* Parses argv into *o.  0; HX_OK with o->dir_a NULL after --help; HX_EUSAGE. */
static int compare_args(int argc, char **argv, opts *o) {
    *o = (opts){.noise = 0.02, .alpha = 0.05, .seed = 1};
    double noise = 2, seed = 1;
    const hx_opt options[] = {
        {"--a", NULL, HX_OPT_STR, &o->va, 0, 0, "a variant", NULL},
        {"--b", NULL, HX_OPT_STR, &o->vb, 0, 0, "a variant", NULL},
        {"--variant", NULL, HX_OPT_STR, &o->variant, 0, 0, "a variant", NULL},
        {"--output", "-o", HX_OPT_STR, &o->out, 0, 0, "a directory", NULL},
        {"--noise", NULL, HX_OPT_DOUBLE, &noise, 0, 50, NULL, NULL},
        {"--alpha", NULL, HX_OPT_DOUBLE, &o->alpha, 1e-6, 0.5, NULL, NULL},
        {"--seed", NULL, HX_OPT_DOUBLE, &seed, 0, 9007199254740991.0, NULL, NULL},
        {NULL, NULL, 0, NULL, 0, 0, NULL, NULL},
    };
    hx_cli c = {.cmd = "compare", .opts = options, .usage = compare_usage, .max_pos = 2,
                .pos_what = "results directories"};
    int rc = hx_cli_parse(&c, argc, argv);
    if (rc == HX_CLI_HELP) {
        o->dir_a = NULL;
        return HX_OK;
    }
    if (rc)
        return rc;
    if (seed != floor(seed))
        return hx_cli_usage_error("compare", "option --seed: '%.17g' is not a whole number", seed);
    o->noise = noise / 100;
    o->seed = (unsigned long long)seed;
    size_t nd = c.npos;
    const char *dirs[2] = {nd > 0 ? c.pos[0] : NULL, nd > 1 ? c.pos[1] : NULL};
    o->dir_a = dirs[0];
    o->dir_b = dirs[1];
    const char *why = !nd                                   ? "no results directory given"
                      : nd == 1 && (!o->va || !o->vb)       ? "one directory: give both --a VARIANT and --b VARIANT"
                      : nd == 1 && !strcmp(o->va, o->vb)    ? "--a and --b name the same variant"
                      : nd == 2 && (o->va || o->vb)         ? "two directories: use --variant, not --a/--b"
                      : nd == 1 && o->variant               ? "--variant is for two directories"
                                                            : NULL;
    if (why) {
        fprintf(stderr, "forkscope compare: %s\n", why);
        compare_usage(stderr);
        return HX_EUSAGE;
    }
    return HX_OK;
}

/* ---- one side: the runs of a results directory ---------------------------------------------- */

typedef struct run {
    char *bench, *variant;
    long P, rep;
    double t, rss;
    size_t order; /* line of raw.jsonl: the order the runs were made in */
    int calib;
    int has_bd;
    double bd[HX_BD_N]; /* where its workers' time went (the config's "breakdown"), s a repetition */
    size_t nrep;  /* its driver's "times" (the process's repetitions), owned; 0 if none */
    double *reps;
} run;

typedef struct side {
    const char *dir;
    run *runs;
    size_t n, cap;
    char order[16]; /* the sweep's "order" */
    long long seed; /* and its "seed" (-1 if not given) */
    json_t *env;
    hx_fit *fits;
    size_t nfits;
    size_t skipped;
    struct calib {
        const char *variant; /* a run's own string */
        long P;
        double m;
    } *calib; /* calib_of's answers so far */
    size_t ncalib, cap_calib;
} side;

static void side_free(side *s) {
    for (size_t i = 0; i < s->n; i++) {
        free(s->runs[i].bench);
        free(s->runs[i].variant);
        free(s->runs[i].reps);
    }
    free(s->runs);
    free(s->calib);
    json_decref(s->env);
    hx_fit_free_all(s->fits, s->nfits);
}

/* One record: kept if it is a successful run with what compare needs. */
static void take_record(side *s, json_t *o, size_t line) {
    const char *bench = hx_json_str(o, "benchmark", NULL), *var = hx_json_str(o, "variant", NULL);
    json_t *w = json_object_get(o, "workers"), *rep = json_object_get(o, "rep");
    double t = NAN, rss = NAN;
    int calib = !strcmp(hx_json_str(o, "kind", ""), "calibrate") || (bench && !strcmp(bench, "calibrate"));
    if (!bench || !var || !json_is_integer(w) || !json_is_integer(rep) || hx_json_number(o, "maxrss_kib", &rss) != 1 ||
        (!calib && hx_json_number(o, "time_s", &t) != 1) || !(calib || t > 0)) {
        s->skipped++;
        return;
    }
    if (strcmp(hx_json_str(o, "status", ""), "ok"))
        return; /* failed runs are report.md's business */
    hx_grow(&s->runs, &s->cap, s->n + 1, sizeof *s->runs);
    run *r = &s->runs[s->n++];
    *r = (run){hx_xstrdup(bench), hx_xstrdup(var), (long)json_integer_value(w), (long)json_integer_value(rep), t,
               rss, line, calib, 0, {0}, 0, NULL};
    int hb = hx_stats_read_breakdown(o, r->bd);
    if (hb < 0) { /* (as fit: a malformed record is left out) */
        free(r->bench);
        free(r->variant);
        s->n--;
        s->skipped++;
        return;
    }
    r->has_bd = hb == 1;
    r->nrep = hx_stats_read_reps(o, &r->reps);
}

/* Loads DIR/raw.jsonl, the sweep's order from config.json, env.json and the memory fits. */
static int load_side(side *s, const char *dir) {
    memset(s, 0, sizeof *s);
    s->dir = dir;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%.4000s/raw.jsonl", dir);
    size_t len;
    char *text = hx_read_file(path, &len);
    if (!text) {
        int e = errno;
        fprintf(stderr, "forkscope compare: %s: %s\n", path, strerror(e));
        return -e;
    }
    size_t line = 0;
    for (char *p = text, *nl; *p; p = nl ? nl + 1 : p + strlen(p)) {
        nl = strchr(p, '\n');
        if (nl)
            *nl = 0;
        line++;
        json_error_t je;
        json_t *o = *p ? json_loads(p, 0, &je) : NULL;
        if (o)
            take_record(s, o, line);
        else if (*p)
            s->skipped++;
        json_decref(o);
        if (!nl)
            break;
    }
    free(text);
    char why[256];
    json_t *cfg = hx_report_load_json(dir, "config.json", why, sizeof why);
    snprintf(s->order, sizeof s->order, "%s", hx_json_str(cfg, "order", "grouped"));
    json_t *seed = json_object_get(cfg, "seed");
    s->seed = json_is_integer(seed) ? (long long)json_integer_value(seed) : -1;
    json_decref(cfg);
    s->env = hx_report_load_json(dir, "env.json", why, sizeof why);
    hx_summary sum;
    if (hx_stats_load(path, &sum, NULL, NULL) == 0) {
        hx_stats_derive(&sum);
        s->nfits = hx_fit_all(&sum, &s->fits);
        hx_summary_free(&sum);
    }
    return 0;
}

int hx_compare_read(const char *dir) {
    side s;
    int rc = load_side(&s, dir);
    side_free(&s);
    return rc;
}

/* The median calibrate MRSS of variant at P on this side, NaN if none (computed once per
 * variant and P: every timed run asks). */
static double calib_of(side *s, const char *variant, long P) {
    for (size_t i = 0; i < s->ncalib; i++)
        if (s->calib[i].P == P && !strcmp(s->calib[i].variant, variant))
            return s->calib[i].m;
    double *v = hx_xmalloc((s->n + 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->runs[i].calib && s->runs[i].P == P && !strcmp(s->runs[i].variant, variant))
            v[n++] = s->runs[i].rss;
    double m = n ? hx_median(v, n) : NAN;
    free(v);
    hx_grow(&s->calib, &s->cap_calib, s->ncalib + 1, sizeof *s->calib);
    s->calib[s->ncalib++] = (struct calib){variant, P, m};
    return m;
}

/* ---- cells ---------------------------------------------------------------------------------------- */

/* One side of a cell: its runs' times, calibrated memory, repetitions and order. */
typedef struct sample {
    double *t, *m;
    long *rep;
    size_t *ord;
    size_t n, cap;
    double bd_sum[HX_BD_N]; /* the breakdowns of its runs that have one, summed */
    size_t nbd, nbd_promote; /* its runs with a breakdown; those with a promote part (0.24 on) */
    size_t *nrep;  /* per run: its repetitions (modes.h's input) */
    double **reps; /* per run: its run's reps (not owned: the side's runs outlive the cells) */
} sample;

static void sample_add(sample *s, const run *r, double mem) {
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->t = hx_xrealloc(s->t, s->cap * sizeof *s->t);
        s->m = hx_xrealloc(s->m, s->cap * sizeof *s->m);
        s->rep = hx_xrealloc(s->rep, s->cap * sizeof *s->rep);
        s->ord = hx_xrealloc(s->ord, s->cap * sizeof *s->ord);
    }
    s->nrep = hx_xrealloc(s->nrep, s->cap * sizeof *s->nrep);
    s->reps = hx_xrealloc(s->reps, s->cap * sizeof *s->reps);
    s->nrep[s->n] = r->nrep;
    s->reps[s->n] = r->reps;
    s->t[s->n] = r->t;
    s->m[s->n] = mem;
    s->rep[s->n] = r->rep;
    s->ord[s->n++] = r->order;
    if (r->has_bd) {
        for (int k = 0; k < HX_BD_N; k++) /* (a record from before 0.24 has no promote part) */
            s->bd_sum[k] += isfinite(r->bd[k]) ? r->bd[k] : 0;
        s->nbd++;
        s->nbd_promote += isfinite(r->bd[HX_BD_PROMOTE]);
    }
}

/* The mean of part k of the sample's breakdowns (NAN: none; for promote, also when a run
 * lacks it: records from before 0.24 counted that time elsewhere). */
static double bd_mean(const sample *s, int k) {
    if (k == HX_BD_PROMOTE && s->nbd_promote < s->nbd)
        return NAN;
    return s->nbd ? s->bd_sum[k] / (double)s->nbd : NAN;
}

static void sample_free(sample *s) {
    free(s->nrep);
    free(s->reps);
    free(s->t);
    free(s->m);
    free(s->rep);
    free(s->ord);
}

/* One metric of a cell: the test, its design, the bootstrap cross-check and the verdict. */
typedef struct metric {
    hx_test t;
    int ok, paired;
    double p_holm, boot_lo, boot_hi, sd; /* sd: of the log differences (paired) or log values */
    const char *verdict;
} metric;

typedef struct ccell {
    char *bench, *va, *vb;
    long P;
    sample a, b;
    int uncalibrated;
    metric time, mem;
    hx_modes modes_a, modes_b; /* is each side's cell one distribution (modes.h) */
    int unreliable;            /* one side is not: the time verdict is marked unreliable */
    char flags[1024];
} ccell;

typedef struct comparison {
    opts o;
    side A, B; /* B == A's data when one sweep is compared (B.dir NULL) */
    ccell *cells;
    size_t n, cap;
    int paired;        /* runs paired by repetition */
    char env_diff[256]; /* what differs between the two sweeps' machines, "" if nothing */
} comparison;

static ccell *cell_for(comparison *c, const char *bench, const char *va, const char *vb, long P) {
    for (size_t i = 0; i < c->n; i++)
        if (c->cells[i].P == P && !strcmp(c->cells[i].bench, bench) && !strcmp(c->cells[i].va, va) &&
            !strcmp(c->cells[i].vb, vb))
            return &c->cells[i];
    hx_grow(&c->cells, &c->cap, c->n + 1, sizeof *c->cells);
    ccell *x = &c->cells[c->n++];
    memset(x, 0, sizeof *x);
    x->bench = hx_xstrdup(bench);
    x->va = hx_xstrdup(va);
    x->vb = hx_xstrdup(vb);
    x->P = P;
    return x;
}

/* A timed run's calibrated memory: MRSS minus its variant's calibrate median at the same P,
 * floored as in summary.csv; the raw MRSS (and a flag) when there is no calibrate cell. */
static double calibrated(side *s, const run *r, int *uncalibrated) {
    double cal = calib_of(s, r->variant, r->P);
    if (isnan(cal)) {
        *uncalibrated = 1;
        return r->rss;
    }
    return fmax(r->rss - cal, HX_STATS_MEM_FLOOR_KIB);
}

/* Puts every timed run of side s whose variant is wanted into its cell, on side b or a. */
static void fill_side(comparison *c, side *s, int is_b) {
    for (size_t i = 0; i < s->n; i++) {
        const run *r = &s->runs[i];
        if (r->calib)
            continue;
        const char *va, *vb;
        if (!c->B.dir) { /* one sweep: the variant says the side */
            if (strcmp(r->variant, is_b ? c->o.vb : c->o.va))
                continue;
            va = c->o.va;
            vb = c->o.vb;
        } else {
            if (c->o.variant && strcmp(r->variant, c->o.variant))
                continue;
            va = vb = r->variant;
        }
        ccell *x = cell_for(c, r->bench, va, vb, r->P);
        int unc = 0;
        sample_add(is_b ? &x->b : &x->a, r, calibrated(s, r, &unc));
        x->uncalibrated |= unc;
    }
}

/* ---- the tests ------------------------------------------------------------------------------------- */

static double sd_of(const double *x, size_t n) {
    if (n < 2)
        return NAN;
    double m = 0, q = 0;
    for (size_t i = 0; i < n; i++)
        m += x[i];
    m /= (double)n;
    for (size_t i = 0; i < n; i++)
        q += (x[i] - m) * (x[i] - m);
    return sqrt(q / ((double)n - 1));
}

/* Tests one metric (which = 0 time, 1 memory) of cell x: paired by repetition if c->paired
 * and both sides have the repetition, else unpaired. */
static void test_metric(const comparison *c, ccell *x, int which, metric *m) {
    memset(m, 0, sizeof *m);
    m->p_holm = m->boot_lo = m->boot_hi = m->sd = NAN;
    const double *va = which ? x->a.m : x->a.t, *vb = which ? x->b.m : x->b.t;
    size_t na = x->a.n, nb = x->b.n;
    double *la = hx_xmalloc((na + 1) * sizeof *la), *lb = hx_xmalloc((nb + 1) * sizeof *lb);
    double *pa = hx_xmalloc((na + 1) * sizeof *pa), *pb = hx_xmalloc((na + 1) * sizeof *pb);
    for (size_t i = 0; i < na; i++)
        la[i] = log(va[i]);
    for (size_t j = 0; j < nb; j++)
        lb[j] = log(vb[j]);
    size_t np = 0;
    for (size_t i = 0; c->paired && i < na; i++)
        for (size_t j = 0; j < nb; j++)
            if (x->a.rep[i] == x->b.rep[j]) {
                pa[np] = la[i];
                pb[np++] = lb[j];
                break;
            }
    m->paired = c->paired && np >= 2;
    if (m->paired) {
        double *d = hx_xmalloc(np * sizeof *d);
        for (size_t k = 0; k < np; k++)
            d[k] = pb[k] - pa[k];
        m->ok = hx_ab_signed_rank(d, np, 0.95, &m->t) == 0;
        m->sd = sd_of(d, np);
        hx_ab_boot_log_ratio(pa, np, pb, np, 1, 2000, c->o.seed, 0.95, &m->boot_lo, &m->boot_hi);
        free(d);
    } else if (na && nb) {
        m->ok = hx_ab_rank_sum(la, na, lb, nb, 0.95, &m->t) == 0;
        m->sd = hypot(sd_of(la, na), sd_of(lb, nb)) / sqrt(2);
        hx_ab_boot_log_ratio(la, na, lb, nb, 0, 2000, c->o.seed, 0.95, &m->boot_lo, &m->boot_hi);
    }
    free(la);
    free(lb);
    free(pa);
    free(pb);
}

static void flag(ccell *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void flag(ccell *x, const char *fmt, ...) {
    size_t u = strlen(x->flags);
    if (u)
        u += (size_t)snprintf(x->flags + u, sizeof x->flags - u, "; ");
    if (u >= sizeof x->flags)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->flags + u, sizeof x->flags - u, fmt, ap);
    va_end(ap);
}

/* Why cell x's time comparison may not be trusted, into x->flags. */
static void reliability(const comparison *c, ccell *x) {
    const metric *m = &x->time;
    size_t n = m->paired ? m->t.n : (x->a.n < x->b.n ? x->a.n : x->b.n);
    size_t need = hx_ab_runs_needed(m->sd, c->o.noise > 0 ? c->o.noise : 0.01, c->o.alpha, 0.8, m->paired);
    if (n < (m->paired ? 6u : 4u))
        flag(x, "too few runs (%zu%s); about %zu %s needed to detect %g%%", n, m->paired ? " pairs" : " per side",
             need ? need : (size_t)(m->paired ? 6 : 4), m->paired ? "pairs" : "per side",
             100 * (c->o.noise > 0 ? c->o.noise : 0.01));
    double *d = hx_xmalloc((x->a.n + 1) * sizeof *d), *o = hx_xmalloc((x->a.n + 1) * sizeof *o), p;
    size_t k = 0;
    for (size_t i = 0; m->paired && i < x->a.n; i++)
        for (size_t j = 0; j < x->b.n; j++)
            if (x->a.rep[i] == x->b.rep[j]) {
                d[k] = log(x->b.t[j]) - log(x->a.t[i]);
                o[k++] = (double)x->a.ord[i];
                break;
            }
    double rho = m->paired ? hx_ab_spearman(o, d, k, &p) : NAN;
    if (m->paired && p < 0.01)
        flag(x, "drift: the paired difference correlates with time (Spearman rho %.2f, p %.3g)", rho, p);
    for (int s = 0; !m->paired && s < 2; s++) {
        const sample *q = s ? &x->b : &x->a;
        double *ord = hx_xmalloc((q->n + 1) * sizeof *ord);
        for (size_t i = 0; i < q->n; i++)
            ord[i] = (double)q->ord[i];
        rho = hx_ab_spearman(ord, q->t, q->n, &p);
        if (p < 0.01)
            flag(x, "drift: %s's times change over the sweep (Spearman rho %.2f, p %.3g)", s ? "B" : "A", rho, p);
        free(ord);
    }
    free(d);
    free(o);
    double *l = hx_xmalloc((x->a.n + x->b.n + 1) * sizeof *l);
    size_t out[2];
    for (int s = 0; s < 2; s++) {
        const sample *q = s ? &x->b : &x->a;
        for (size_t i = 0; i < q->n; i++)
            l[i] = log(q->t[i]);
        out[s] = hx_ab_outliers(l, q->n);
    }
    if (out[0] || out[1])
        flag(x, "outliers (modified z-score > 3.5): %zu of A's runs, %zu of B's", out[0], out[1]);
    free(l);
    if (m->ok && isfinite(m->t.lo) && isfinite(m->boot_lo) && (m->boot_hi < m->t.lo || m->boot_lo > m->t.hi))
        flag(x, "the bootstrap interval of the ratio of medians [%.3f, %.3f] misses the Hodges-Lehmann one",
             exp(m->boot_lo), exp(m->boot_hi));
    if (x->uncalibrated)
        flag(x, "memory not calibrated (no calibrate runs)");
    if (*c->env_diff)
        flag(x, "measured on different machines or builds: %s", c->env_diff);
}

/* Each side's cell judged by modes.h: a side that is not one distribution makes the time
 * verdict unreliable (its median and the rank tests describe a mixture), and the flags say
 * which side and its modes. */
static void modes_check(ccell *x) {
    hx_modes_judge(x->a.t, x->a.n, x->a.nrep, x->a.reps, &x->modes_a);
    hx_modes_judge(x->b.t, x->b.n, x->b.nrep, x->b.reps, &x->modes_b);
    for (int s = 0; s < 2; s++) {
        const hx_modes *m = s ? &x->modes_b : &x->modes_a;
        char why[256];
        if (!hx_modes_flagged(m->verdict))
            continue;
        x->unreliable = 1;
        flag(x, "unreliable: %s is not one distribution (%s): %s", s ? "B" : "A", hx_modes_name(m->verdict),
             hx_modes_describe(m, why, sizeof why));
    }
}

static const char *verdict(const metric *m, double band, double alpha, int memory) {
    if (!m->ok)
        return "inconclusive";
    return hx_ab_verdict(m->p_holm, m->t.lo, m->t.hi, band, alpha, memory ? "larger" : "slower",
                      memory ? "smaller" : "faster");
}

/* Holm over the cells of one metric, then the verdicts. */
static void judge(comparison *c, int which) {
    double *p = hx_xmalloc((c->n + 1) * sizeof *p), *adj = hx_xmalloc((c->n + 1) * sizeof *adj);
    for (size_t i = 0; i < c->n; i++) {
        metric *m = which ? &c->cells[i].mem : &c->cells[i].time;
        p[i] = m->ok ? m->t.p : NAN;
    }
    hx_ab_holm(p, c->n, adj);
    for (size_t i = 0; i < c->n; i++) {
        metric *m = which ? &c->cells[i].mem : &c->cells[i].time;
        m->p_holm = adj[i];
        m->verdict = verdict(m, c->o.noise, c->o.alpha, which);
    }
    free(p);
    free(adj);
}

/* The geometric mean of a metric's ratios over the cells, with a t interval. */
static void geomean(const comparison *c, int which, double *g, double *lo, double *hi, size_t *k) {
    double s = 0, q = 0;
    *k = 0;
    for (size_t i = 0; i < c->n; i++) {
        const metric *m = which ? &c->cells[i].mem : &c->cells[i].time;
        if (m->ok && isfinite(m->t.est)) {
            s += m->t.est;
            q += m->t.est * m->t.est;
            ++*k;
        }
    }
    *g = *lo = *hi = NAN;
    if (!*k)
        return;
    double mean = s / (double)*k;
    *g = exp(mean);
    if (*k < 2)
        return;
    double sd = sqrt(fmax(0, (q - (double)*k * mean * mean) / ((double)*k - 1)));
    double h = gsl_cdf_tdist_Pinv(0.975, (double)*k - 1) * sd / sqrt((double)*k);
    *lo = exp(mean - h);
    *hi = exp(mean + h);
}

/* What differs between the two sweeps' env.json (machine, kernel, compilers). */
static void env_differences(comparison *c) {
    static const char *const keys[] = {"cpu_model", "cores", "kernel", "compilers"};
    c->env_diff[0] = 0;
    if (!c->B.dir)
        return;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        json_t *x = json_object_get(c->A.env, keys[k]), *y = json_object_get(c->B.env, keys[k]);
        if (x && y && !json_equal(x, y)) {
            size_t u = strlen(c->env_diff);
            snprintf(c->env_diff + u, sizeof c->env_diff - u, "%s%s", u ? ", " : "", keys[k]);
        }
    }
}

/* ---- the memory exponent ----------------------------------------------------------------------------- */

typedef struct expo {
    const char *bench, *va, *vb;
    double na, na_se, nb, nb_se, diff, lo, hi, p;
    const char *verdict;
} expo;

#define EXPO_BAND 0.05 /* a difference in n smaller than this is "no change" */

static const hx_fit *fit_of(const side *s, const char *bench, const char *variant) {
    for (size_t i = 0; i < s->nfits; i++)
        if (s->fits[i].benchmark && !strcmp(s->fits[i].benchmark, bench) && !strcmp(s->fits[i].variant, variant))
            return &s->fits[i];
    return NULL;
}

/* n_B - n_A for every benchmark (and variant) both sides fitted: z from the two standard
 * errors in quadrature. */
static size_t exponents(const comparison *c, expo *out, size_t max) {
    size_t k = 0;
    for (size_t i = 0; i < c->n && k < max; i++) {
        const ccell *x = &c->cells[i];
        int seen = 0;
        for (size_t j = 0; j < k; j++)
            seen |= !strcmp(out[j].bench, x->bench) && !strcmp(out[j].va, x->va);
        const hx_fit *fa = fit_of(&c->A, x->bench, x->va), *fb = fit_of(c->B.dir ? &c->B : &c->A, x->bench, x->vb);
        if (seen || !fa || !fb || !fa->ok || !fb->ok || !isfinite(fa->n_se) || !isfinite(fb->n_se))
            continue;
        expo *e = &out[k++];
        *e = (expo){x->bench, x->va, x->vb, fa->n, fa->n_se, fb->n, fb->n_se, fb->n - fa->n, 0, 0, 1, NULL};
        double se = hypot(fa->n_se, fb->n_se), z = se > 0 ? e->diff / se : 0;
        double h = gsl_cdf_ugaussian_Pinv(1 - c->o.alpha / 2) * se;
        e->lo = e->diff - h;
        e->hi = e->diff + h;
        e->p = se > 0 ? 2 * gsl_cdf_ugaussian_Q(fabs(z)) : NAN;
        e->verdict = e->p < c->o.alpha && e->lo > EXPO_BAND    ? "higher"
                     : e->p < c->o.alpha && e->hi < -EXPO_BAND ? "lower"
                     : e->lo >= -EXPO_BAND && e->hi <= EXPO_BAND ? "no change"
                                                                 : "inconclusive";
    }
    return k;
}

/* ---- files --------------------------------------------------------------------------------------- */

/* Opens dir/name for an atomic write (hx_atomic_open: path[PATH_MAX], tmp[PATH_MAX + 16]). */
static FILE *open_out(const char *dir, const char *name, char *path, char *tmp) {
    snprintf(path, PATH_MAX, "%.4000s/%s", dir, name);
    return hx_atomic_open(path, tmp, PATH_MAX + 16);
}

/* compare.csv's numbers: a comma, then 6 significant digits (empty for NaN). */
static void put_num6(FILE *f, double v) {
    if (isfinite(v))
        fprintf(f, ",%.6g", v);
    else
        fputs(",", f);
}

static void csv_metric(FILE *f, const ccell *x, const metric *m, const char *name) {
    fprintf(f, "%s,%s,%s,%s,%ld,%s,%zu,%zu", name, x->bench, x->va, x->vb, x->P, m->paired ? "paired" : "unpaired",
            x->a.n, x->b.n);
    put_num6(f, exp(m->t.est));
    put_num6(f, exp(m->t.lo));
    put_num6(f, exp(m->t.hi));
    fputs(",ratio", f);
    put_num6(f, m->ok ? m->t.p : NAN);
    put_num6(f, m->p_holm);
    put_num6(f, m->ok ? m->t.p_faster : NAN);
    fprintf(f, ",%d", m->t.exact);
    put_num6(f, exp(m->boot_lo));
    put_num6(f, exp(m->boot_hi));
    fprintf(f, ",%s,\"%s\",%s,%s,%s\n", m->verdict, x->flags, hx_modes_name(x->modes_a.verdict),
            hx_modes_name(x->modes_b.verdict), m == &x->time ? (x->unreliable ? "no" : "yes") : "");
}

static int write_csv(const comparison *c, const char *dir, const expo *e, size_t ne) {
    char path[PATH_MAX], tmp[PATH_MAX + 16];
    FILE *f = open_out(dir, "compare.csv", path, tmp);
    if (!f)
        return -errno;
    fputs("metric,benchmark,variant_a,variant_b,workers,design,n_a,n_b,estimate,lo,hi,scale,p,p_holm,p_b_faster,"
          "exact,boot_lo,boot_hi,verdict,flags,modes_a,modes_b,reliable\n",
          f);
    for (size_t i = 0; i < c->n; i++) {
        csv_metric(f, &c->cells[i], &c->cells[i].time, "time");
        csv_metric(f, &c->cells[i], &c->cells[i].mem, "memory");
    }
    for (size_t i = 0; i < ne; i++) {
        fprintf(f, "exponent,%s,%s,%s,,fits,,", e[i].bench, e[i].va, e[i].vb);
        put_num6(f, e[i].diff);
        put_num6(f, e[i].lo);
        put_num6(f, e[i].hi);
        fputs(",difference", f);
        put_num6(f, e[i].p);
        fputs(",,,0,,", f);
        fprintf(f, ",%s,\"n_a = %.3f +- %.3f, n_b = %.3f +- %.3f\",,,\n", e[i].verdict, e[i].na, e[i].na_se, e[i].nb,
                e[i].nb_se);
    }
    return hx_atomic_commit(f, tmp, path);
}

static void md_pvalue(FILE *f, double p) {
    if (isnan(p))
        fputs(" – |", f);
    else if (p < 0.001)
        fprintf(f, " <0.001 |");
    else
        fprintf(f, " %.3f |", p);
}

static void md_table(FILE *f, const comparison *c, int which) {
    fprintf(f, "| benchmark | P | design | runs A/B | %s B/A [95%% CI] | p (Holm) | P(B %s) | verdict | flags |\n",
            which ? "memory" : "time", which ? "smaller" : "faster");
    fputs("|---|---|---|---|---|---|---|---|---|\n", f);
    for (size_t i = 0; i < c->n; i++) {
        const ccell *x = &c->cells[i];
        const metric *m = which ? &x->mem : &x->time;
        fprintf(f, "| %s%s%s | %ld | %s | %zu/%zu |", x->bench, c->B.dir ? " " : "", c->B.dir ? x->va : "", x->P,
                m->paired ? "paired" : "unpaired", x->a.n, x->b.n);
        if (m->ok && isfinite(m->t.lo))
            fprintf(f, " %.3f [%.3f, %.3f] |", exp(m->t.est), exp(m->t.lo), exp(m->t.hi));
        else if (m->ok)
            fprintf(f, " %.3f |", exp(m->t.est));
        else
            fputs(" – |", f);
        md_pvalue(f, m->p_holm);
        if (m->ok)
            fprintf(f, " %.2f |", m->t.p_faster);
        else
            fputs(" – |", f);
        fprintf(f, " **%s**%s | %s |\n", m->verdict, !which && x->unreliable ? " (unreliable)" : "",
                which ? "" : x->flags);
    }
    double g, lo, hi;
    size_t k;
    geomean(c, which, &g, &lo, &hi, &k);
    if (k)
        fprintf(f, "\nGeometric mean of the %zu ratios: %.3f%s", k, g, k > 1 ? "" : "\n");
    if (k > 1)
        fprintf(f, " [%.3f, %.3f] (95%% t interval over the cells)\n", lo, hi);
}

/* The drivers A and B ran: path, source revision, compiler (from each sweep's env.json). */
static void write_builds(FILE *f, const comparison *c) {
    fputs("\n| side | variant | driver | source (git) | compiler |\n|---|---|---|---|---|\n", f);
    for (int s = 0; s < 2; s++) {
        const side *sd = s && c->B.dir ? &c->B : &c->A;
        json_t *drv = json_object_get(sd->env, "drivers");
        const char *k;
        json_t *v;
        json_object_foreach(drv, k, v) {
            if (!c->B.dir && strcmp(k, s ? c->o.vb : c->o.va))
                continue;
            if (c->B.dir && c->o.variant && strcmp(k, c->o.variant))
                continue;
            fprintf(f, "| %s | %s | %s | %s | %s |\n", s ? "B" : "A", k, hx_json_str(v, "path", "?"),
                    hx_json_str(v, "git", "?"), hx_json_str(v, "compiler", "?"));
        }
    }
}

/* Where the time changed: for the cells whose runs accounted for their workers' time on both
 * sides (the config's "breakdown"), each part's change beside the change of the whole. */
static void write_breakdown_md(FILE *f, const comparison *c) {
    size_t any = 0;
    for (size_t i = 0; i < c->n; i++)
        any += c->cells[i].a.nbd && c->cells[i].b.nbd;
    if (!any)
        return;
    fputs("\n## Where the time changed\n\n"
          "The cells whose runs accounted for their workers' time on both sides (the config's \"breakdown\"): "
          "the mean of each part per repetition, summed over the P workers, B - A in ms, and the share of "
          "the change of the workers' whole wall time (about P × the change of T) that each part made. "
          "work: task code; search, wait, sleep: idle; steal, join, fiber, promote: the scheduler's overhead "
          "(report.md's \"Where the time goes\" says more).\n\n"
          "| benchmark | P | time verdict | wall B - A (ms) |",
          f);
    for (int k = 0; k < HX_BD_WALL; k++)
        fprintf(f, " %s |", hx_bd_names[k]);
    fputs(" most of the change |\n|---|---|---|---:|", f);
    for (int k = 0; k < HX_BD_WALL; k++)
        fputs("---:|", f);
    fputs("---|\n", f);
    for (size_t i = 0; i < c->n; i++) {
        const ccell *x = &c->cells[i];
        if (!x->a.nbd || !x->b.nbd)
            continue;
        double dw = bd_mean(&x->b, HX_BD_WALL) - bd_mean(&x->a, HX_BD_WALL);
        fprintf(f, "| %s%s%s | %ld | %s | %+.3f |", x->bench, c->B.dir ? " " : "", c->B.dir ? x->va : "", x->P,
                x->time.verdict ? x->time.verdict : "–", dw * 1e3);
        int most = 0;
        double mostd = 0;
        for (int k = 0; k < HX_BD_WALL; k++) {
            double d = bd_mean(&x->b, k) - bd_mean(&x->a, k);
            if (!isfinite(d)) { /* (promote, with a side from before 0.24) */
                fputs(" — |", f);
                continue;
            }
            if (fabs(d) > fabs(mostd))
                mostd = d, most = k;
            if (fabs(dw) > 0)
                fprintf(f, " %+.3f (%.0f%%) |", d * 1e3, 100 * d / dw);
            else
                fprintf(f, " %+.3f |", d * 1e3);
        }
        fprintf(f, " %s %s |\n", hx_bd_names[most], mostd > 0 ? "up" : mostd < 0 ? "down" : "–");
    }
}

static int write_md(const comparison *c, const char *dir, const expo *e, size_t ne) {
    char path[PATH_MAX], tmp[PATH_MAX + 16];
    FILE *f = open_out(dir, "compare.md", path, tmp);
    if (!f)
        return -errno;
    if (c->B.dir)
        fprintf(f, "# %s (B) against %s (A)\n\n", c->B.dir, c->A.dir);
    else
        fprintf(f, "# %s (B) against %s (A) in %s\n\n", c->o.vb, c->o.va, c->A.dir);
    fprintf(f, "- Design: %s",
            c->paired ? "paired by repetition (the sweep ran A and B in the same rounds): Wilcoxon signed-rank on "
                        "the log ratios, Hodges-Lehmann estimate and interval"
                      : "unpaired: Mann-Whitney U on the log values, Hodges-Lehmann shift and interval");
    if (c->paired)
        fprintf(f, " (order \"%s\"%s", c->A.order, strcmp(c->A.order, "paired") ? ")" : ", seed ");
    if (c->paired && !strcmp(c->A.order, "paired"))
        fprintf(f, "%lld)", c->A.seed < 0 ? 1 : c->A.seed);
    fputs(".  The bootstrap interval of the ratio of medians (compare.csv: boot_lo, boot_hi) is a "
          "cross-check; a cell where the two intervals do not overlap is flagged.\n",
          f);
    fprintf(f, "- Verdicts: **faster**/**slower** (memory: smaller/larger) when the change is significant at "
               "alpha = %g after Holm's correction over the %zu cells of each metric *and* its whole 95%% interval "
               "lies beyond the noise band of ±%g%%; **no change** when the interval lies inside the band; "
               "otherwise **inconclusive** (more runs would tell: see the flags).\n",
            c->o.alpha, c->n, 100 * c->o.noise);
    fprintf(f, "- Memory: peak RSS minus the variant's calibrate run at the same P (as in summary.csv).\n");
    size_t unreliable = 0;
    for (size_t i = 0; i < c->n; i++)
        unreliable += c->cells[i].unreliable;
    fprintf(f, "- One distribution per cell: a side whose processes disagree far beyond their repetitions "
               "(between-process) or whose runs form two clusters (bimodal) makes the cell's time verdict "
               "**unreliable** (its median and the rank tests describe a mixture: which cluster each run fell in, "
               "not the variant); %zu of the %zu cells %s, the flags say why (docs/compare.md, \"Is a cell one "
               "distribution?\").\n",
            unreliable, c->n, unreliable == 1 ? "is" : "are");
    if (*c->env_diff)
        fprintf(f, "- **Warning**: the sweeps differ in %s; their differences are not the variants' alone.\n",
                c->env_diff);
    if (c->A.skipped || c->B.skipped)
        fprintf(f, "- Records left out (malformed or incomplete): %zu in A, %zu in B.\n", c->A.skipped, c->B.skipped);
    write_builds(f, c);
    fputs("\n## Time\n\n", f);
    md_table(f, c, 0);
    write_breakdown_md(f, c);
    fputs("\n## Calibrated peak memory\n\n", f);
    md_table(f, c, 1);
    fputs("\n## Memory exponent n (Eq. 17)\n\n", f);
    if (!ne)
        fputs("No benchmark has a successful fit on both sides.\n", f);
    else
        fputs("| benchmark | n A | n B | n B - n A [95% CI] | p | verdict |\n|---|---|---|---|---|---|\n", f);
    for (size_t i = 0; i < ne; i++)
        fprintf(f, "| %s | %.3f ± %.3f | %.3f ± %.3f | %+.3f [%+.3f, %+.3f] | %.3g | **%s** |\n", e[i].bench, e[i].na,
                e[i].na_se, e[i].nb, e[i].nb_se, e[i].diff, e[i].lo, e[i].hi, e[i].p, e[i].verdict);
    if (ne)
        fprintf(f, "\nz from the two fits' standard errors; the same rule with a band of ±%g in n.\n", EXPO_BAND);
    return hx_atomic_commit(f, tmp, path);
}

/* forest.dat (a row per cell, time then memory) and forest-settings.gp. */
static int write_forest_data(const comparison *c, const char *dir) {
    char path[PATH_MAX], tmp[PATH_MAX + 16];
    FILE *f = open_out(dir, "forest.dat", path, tmp);
    if (!f)
        return -errno;
    fputs("# forest.dat — written by `forkscope compare`: row label ratio lo hi verdict (0 no change,\n"
          "# 1 faster/smaller, 2 slower/larger, 3 inconclusive); index 0 time, index 1 memory\n",
          f);
    for (int which = 0; which < 2; which++) {
        for (size_t i = 0; i < c->n; i++) {
            const ccell *x = &c->cells[i];
            const metric *m = which ? &x->mem : &x->time;
            int v = !strcmp(m->verdict, "no change")                                  ? 0
                    : !strcmp(m->verdict, "faster") || !strcmp(m->verdict, "smaller") ? 1
                    : !strcmp(m->verdict, "slower") || !strcmp(m->verdict, "larger")  ? 2
                                                                                       : 3;
            double lo = isfinite(m->t.lo) ? exp(m->t.lo) : NAN, hi = isfinite(m->t.hi) ? exp(m->t.hi) : NAN;
            fprintf(f, "%zu \"%s%s%s P=%ld\" %.6g %.6g %.6g %d\n", i + 1, x->bench, c->B.dir ? " " : "",
                    c->B.dir ? x->va : "", x->P, m->ok ? exp(m->t.est) : NAN, lo, hi, v);
        }
        fputs("\n\n", f);
    }
    int rc = hx_atomic_commit(f, tmp, path);
    if (rc)
        return rc;
    if (!(f = open_out(dir, "forest-settings.gp", path, tmp)))
        return -errno;
    fprintf(f, "# forest-settings.gp — written by `forkscope compare` for forest.gp\n");
    if (c->B.dir)
        fprintf(f, "title = \"%s (B) against %s (A)\"\n", c->B.dir, c->A.dir);
    else
        fprintf(f, "title = \"%s (B) against %s (A)\"\n", c->o.vb, c->o.va);
    fprintf(f, "subtitle = \"%s; 95%% intervals; shaded: the noise band ±%g%%\"\n",
            c->paired ? "paired (Wilcoxon signed-rank)" : "unpaired (Mann-Whitney)", 100 * c->o.noise);
    fprintf(f, "band = %g\nnrows = %zu\nif (!exists(\"term\")) term = \"pngcairo\"\n", c->o.noise, c->n);
    for (int which = 0; which < 2; which++) { /* each panel's axis: its intervals and the band */
        double lo = 1 - 2 * c->o.noise, hi = 1 + 2 * c->o.noise;
        for (size_t i = 0; i < c->n; i++) {
            const metric *m = which ? &c->cells[i].mem : &c->cells[i].time;
            double v[3] = {m->t.est, m->t.lo, m->t.hi};
            for (int k = 0; m->ok && k < 3; k++)
                if (isfinite(v[k]) && exp(v[k]) > 0) {
                    lo = fmin(lo, exp(v[k]));
                    hi = fmax(hi, exp(v[k]));
                }
        }
        fprintf(f, "xmin%d = %.6g\nxmax%d = %.6g\n", which, lo / 1.1, which, hi * 1.1);
    }
    return hx_atomic_commit(f, tmp, path);
}

/* The output directory: -o, or a default beside the results. */
static int output_dir(const comparison *c, char *out, size_t len) {
    if (c->o.out)
        snprintf(out, len, "%s", c->o.out);
    else if (!c->B.dir)
        snprintf(out, len, "%.2000s/compare-%.100s-vs-%.100s", c->A.dir, c->o.vb, c->o.va);
    else {
        const char *base = strrchr(c->A.dir, '/');
        base = base && base[1] ? base + 1 : c->A.dir;
        snprintf(out, len, "%.2000s/compare-vs-%.200s", c->B.dir, base);
    }
    if (mkdir(out, 0777) && errno != EEXIST) {
        fprintf(stderr, "forkscope compare: cannot create %s: %s\n", out, strerror(errno));
        return HX_EIO;
    }
    return 0;
}

/* ---- the command ----------------------------------------------------------------------------------- */

static void comparison_free(comparison *c) {
    for (size_t i = 0; i < c->n; i++) {
        free(c->cells[i].bench);
        free(c->cells[i].va);
        free(c->cells[i].vb);
        sample_free(&c->cells[i].a);
        sample_free(&c->cells[i].b);
    }
    free(c->cells);
    side_free(&c->A);
    if (c->B.dir)
        side_free(&c->B);
}

/* Cells with runs on one side only are dropped, and said so. */
static void drop_one_sided(comparison *c) {
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++) {
        ccell *x = &c->cells[i];
        if (x->a.n && x->b.n) {
            c->cells[k++] = *x;
            continue;
        }
        fprintf(stderr, "forkscope compare: %s%s%s P=%ld: successful runs only in %s; not compared\n", x->bench,
                c->B.dir ? " " : "", c->B.dir ? x->va : "", x->P, x->a.n ? "A" : "B");
        free(x->bench);
        free(x->va);
        free(x->vb);
        sample_free(&x->a);
        sample_free(&x->b);
    }
    c->n = k;
}

static int draw(const comparison *c, const char *dir) {
    hx_gnuplot g;
    int rc = hx_gnuplot_find(&g);
    if (rc || !g.ok) {
        if (!rc)
            fprintf(stderr, "forkscope compare: gnuplot is not on PATH: no forest plot (forest.dat is written)\n");
        return HX_ETOOL;
    }
    if ((rc = hx_gnuplot_install_scripts(dir)))
        return rc;
    hx_drawn drawn = {0};
    rc = hx_gnuplot_draw(&g, dir, "forest", &drawn);
    for (int i = 0; i < drawn.n; i++)
        printf("  %s\n", drawn.files[i]);
    (void)c;
    return rc;
}

int hx_cmd_compare(int argc, char **argv) {
    comparison c;
    memset(&c, 0, sizeof c);
    int rc = compare_args(argc, argv, &c.o);
    if (rc || !c.o.dir_a)
        return rc;
    if ((rc = load_side(&c.A, c.o.dir_a)) || (c.o.dir_b && (rc = load_side(&c.B, c.o.dir_b)))) {
        side_free(&c.A);
        return rc;
    }
    c.paired = !c.o.dir_b && (!strcmp(c.A.order, "interleaved") || !strcmp(c.A.order, "paired"));
    env_differences(&c);
    fill_side(&c, &c.A, 0);
    fill_side(&c, c.o.dir_b ? &c.B : &c.A, 1);
    drop_one_sided(&c);
    if (!c.n) {
        fprintf(stderr, "forkscope compare: no cell has successful runs on both sides (variants %s)\n",
                c.o.dir_b ? (c.o.variant ? c.o.variant : "present in both") : "given");
        comparison_free(&c);
        return HX_EUSAGE;
    }
    for (size_t i = 0; i < c.n; i++) {
        test_metric(&c, &c.cells[i], 0, &c.cells[i].time);
        test_metric(&c, &c.cells[i], 1, &c.cells[i].mem);
        reliability(&c, &c.cells[i]);
        modes_check(&c.cells[i]);
    }
    judge(&c, 0);
    judge(&c, 1);
    expo *e = hx_xcalloc(c.n + 1, sizeof *e);
    size_t ne = exponents(&c, e, c.n);
    char dir[PATH_MAX];
    if (!(rc = output_dir(&c, dir, sizeof dir))) {
        int w = write_csv(&c, dir, e, ne);
        if (!w)
            w = write_md(&c, dir, e, ne);
        if (!w)
            w = write_forest_data(&c, dir);
        if (w) {
            fprintf(stderr, "forkscope compare: cannot write into %s: %s\n", dir, strerror(-w));
            rc = HX_EIO;
        } else {
            printf("forkscope compare: %s/compare.md, compare.csv, forest.dat\n", dir);
            rc = draw(&c, dir);
        }
    }
    free(e);
    comparison_free(&c);
    return rc;
}
