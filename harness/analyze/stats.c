/* stats.c — descriptive statistics, and raw.jsonl reduced to cells (see stats.h, results.h).
 *
 * Reading is deliberately forgiving: raw.jsonl is appended while a sweep runs, may be cut
 * short by a crash or edited by hand, so one bad line costs that line only (with a warning
 * naming it), never the analysis. */
#include "harness/analyze/stats.h"
#include "harness/util/util.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers ----------------------------------------------------------------------- */

/* ---- descriptive statistics --------------------------------------------------------------- */

void hx_stats_describe(const double *x, size_t n, hx_sample *out) {
    out->n = n;
    out->median = out->mean = out->sd = out->se = out->min = out->max = NAN;
    if (n == 0)
        return;
    double *s = hx_xmalloc(n * sizeof *s);
    memcpy(s, x, n * sizeof *s);
    out->median = hx_median(s, n); /* sorts s */
    out->min = s[0];
    out->max = s[n - 1];
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += s[i];
    out->mean = sum / (double)n;
    if (n >= 2) {
        double ss = 0; /* two-pass: no cancellation from sum of squares */
        for (size_t i = 0; i < n; i++)
            ss += (s[i] - out->mean) * (s[i] - out->mean);
        out->sd = sqrt(ss / (double)(n - 1));
        out->se = out->sd / sqrt((double)n);
    }
    free(s);
}

double hx_stats_quadrature(double a, double b) {
    return hypot(a, b) + (isnan(a) || isnan(b) ? NAN : 0.0); /* hypot(inf, NaN) is inf */
}

void hx_stats_ratio(double num, double num_se, double den, double den_se, double *q, double *q_se) {
    if (isnan(num) || isnan(den) || den == 0) {
        *q = *q_se = NAN;
        return;
    }
    *q = num / den;
    if (isnan(num_se) || isnan(den_se)) {
        *q_se = NAN;
        return;
    }
    double rn = num != 0 ? num_se / num : 0, rd = den_se / den;
    *q_se = fabs(*q) * sqrt(rn * rn + rd * rd);
}

/* ---- the runs of raw.jsonl, grouped by cell ------------------------------------------------ */

enum { WARN_PRINT_MAX = 20 };

typedef struct status_tally {
    char *status;
    int count;
    size_t first; /* order of first appearance, to break ties */
    char *last_stderr;
} status_tally;

typedef struct group {
    char *benchmark, *kernel, *variant;
    long workers;
    int calibrate, oversubscribed;
    size_t bench_rank, variant_rank; /* order of first appearance */
    double *time, *mrss, *cpu, *promo, *tau;
    size_t ntime, nmrss, ncpu, cap_time, cap_mrss, cap_cpu, npromo, cap_promo, ntau, cap_tau;
    size_t *nrep;     /* parallel to time: how many repetitions (driver "times") each run has */
    double **rep;     /* parallel to time: each run's repetitions, owned (NULL: none) */
    size_t cap_nrep, cap_rep;
    status_tally *tally;
    size_t ntally, cap_tally;
    double bd_sum[HX_BD_N]; /* the breakdowns of its runs that had one, summed */
    size_t nbd, nbd_promote; /* those runs; those of them with a promote part (0.24 on) */
} group;

typedef struct loader {
    group *g;
    size_t ng, cap_g;
    char **benches, **variants; /* names in order of first appearance */
    size_t nbenches, nvariants, cap_b, cap_v;
    char **bench_params; /* parallel to benches */
    char **bench_kernel;
    /* run_id set: open addressing, FNV-1a */
    char **ids;
    size_t ids_cap, ids_n;
    hx_summary *out;
    FILE *warn;
    const char *prog, *path;
} loader;

static void warnf(loader *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warnf(loader *L, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    /* printed up to a limit (a file of bad lines would bury everything else); all are kept */
    if (L->warn && L->out->nwarnings < WARN_PRINT_MAX)
        fprintf(L->warn, "%s: warning: %s\n", L->prog ? L->prog : "forkscope", buf);
    else if (L->warn && L->out->nwarnings == WARN_PRINT_MAX)
        fprintf(L->warn, "%s: warning: more warnings not shown (see report.md)\n", L->prog ? L->prog : "forkscope");
    hx_strs_addf(&L->out->warnings, &L->out->nwarnings, "%s", buf);
}

static uint64_t fnv1a(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Adds id to the set; returns 0 if it was new, 1 if already there. */
static int id_insert(loader *L, const char *id) {
    if (2 * (L->ids_n + 1) > L->ids_cap) {
        size_t nc = L->ids_cap ? 2 * L->ids_cap : 256;
        char **n = hx_xrealloc(NULL, nc * sizeof *n);
        memset(n, 0, nc * sizeof *n);
        for (size_t i = 0; i < L->ids_cap; i++)
            if (L->ids[i]) {
                size_t j = fnv1a(L->ids[i]) & (nc - 1);
                while (n[j])
                    j = (j + 1) & (nc - 1);
                n[j] = L->ids[i];
            }
        free(L->ids);
        L->ids = n;
        L->ids_cap = nc;
    }
    size_t j = fnv1a(id) & (L->ids_cap - 1);
    while (L->ids[j]) {
        if (!strcmp(L->ids[j], id))
            return 1;
        j = (j + 1) & (L->ids_cap - 1);
    }
    L->ids[j] = hx_xstrdup(id);
    L->ids_n++;
    return 0;
}

static size_t rank_of(char ***names, size_t *n, size_t *cap, const char *name, int *is_new) {
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*names)[i], name)) {
            *is_new = 0;
            return i;
        }
    hx_grow(names, cap, *n + 1, sizeof **names);
    (*names)[*n] = hx_xstrdup(name);
    *is_new = 1;
    return (*n)++;
}

static group *find_group(loader *L, const char *bench, const char *variant, long workers, int calib) {
    for (size_t i = L->ng; i-- > 0;) { /* newest first: runs of a cell are usually adjacent */
        group *g = &L->g[i];
        if (g->workers == workers && g->calibrate == calib && !strcmp(g->benchmark, bench) &&
            !strcmp(g->variant, variant))
            return g;
    }
    hx_grow(&L->g, &L->cap_g, L->ng + 1, sizeof *L->g);
    group *g = &L->g[L->ng++];
    memset(g, 0, sizeof *g);
    g->benchmark = hx_xstrdup(bench);
    g->variant = hx_xstrdup(variant);
    g->kernel = hx_xstrdup("");
    g->workers = workers;
    g->calibrate = calib;
    return g;
}

/* The last non-empty line of s, trimmed, at most 200 characters; malloc'd. */
static char *last_line(const char *s) {
    const char *end = s + strlen(s);
    while (end > s && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
        end--;
    const char *b = end;
    while (b > s && b[-1] != '\n')
        b--;
    while (b < end && (*b == ' ' || *b == '\t'))
        b++;
    size_t n = (size_t)(end - b);
    if (n > 200)
        n = 200;
    char *r = hx_xrealloc(NULL, n + 1);
    memcpy(r, b, n);
    r[n] = 0;
    for (char *p = r; *p; p++)
        if (*p == '|' || (unsigned char)*p < 0x20)
            *p = ' '; /* it goes into a markdown table cell */
    return r;
}

char *hx_stats_render_params(const json_t *params) {
    char buf[512];
    size_t len = 0;
    buf[0] = 0;
    if (json_is_object(params)) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)params, k, v) {
            char val[128];
            if (json_is_integer(v))
                snprintf(val, sizeof val, "%lld", (long long)json_integer_value(v));
            else if (json_is_real(v))
                snprintf(val, sizeof val, "%g", json_real_value(v));
            else if (json_is_string(v))
                snprintf(val, sizeof val, "%s", json_string_value(v));
            else if (json_is_boolean(v))
                snprintf(val, sizeof val, "%s", json_is_true(v) ? "true" : "false");
            else
                snprintf(val, sizeof val, "?");
            int w = snprintf(buf + len, sizeof buf - len, "%s%s=%s", len ? " " : "", k, val);
            if (w < 0 || (size_t)w >= sizeof buf - len)
                break;
            len += (size_t)w;
        }
    }
    return hx_xstrdup(buf);
}

/* Processes one parsed line; returns NULL if used, else why it was skipped (static text or
 * written into why). */
/* The fields of one record that the summary uses, checked. */
typedef struct run_fields {
    const char *bench, *variant, *status;
    long workers;
    int calib, ok;
    double t, rss, cpu;
    int has_cpu;
    double bd[HX_BD_N]; /* the driver's breakdown, s per repetition */
    int has_bd;
    double promo; /* publications per second of its timed repetitions, NAN without the stats */
    double tau;   /* its breakdown's promote time over its publications, ns; NAN without both */
} run_fields;

/* The driver's stats.publishes over its timed repetitions (the stats are reset before the
 * first), or -1 where the run has no such statistics (baselines, peers, a build without them). */
static double publications(json_t *o) {
    json_t *st = json_object_get(json_object_get(o, "driver"), "stats");
    json_t *pub = json_object_get(st, "publishes");
    if (!json_is_true(json_object_get(st, "enabled")) || !json_is_integer(pub) || json_integer_value(pub) < 0)
        return -1;
    return (double)json_integer_value(pub);
}

/* pub, the run's publications, over the sum of its timed repetitions' times, or NAN. */
static double promotions_per_s(json_t *o, double pub) {
    if (pub < 0)
        return NAN;
    double *reps, sum = 0;
    size_t n = hx_stats_read_reps(o, &reps);
    for (size_t i = 0; i < n; i++)
        sum += reps[i];
    free(reps);
    return n && sum > 0 ? pub / sum : NAN;
}


int hx_stats_read_breakdown(json_t *o, double *bd) {
    json_t *d = json_object_get(o, "driver");
    json_t *sec = json_object_get(json_object_get(d, "breakdown"), "seconds");
    if (!sec)
        return 0;
    json_t *reps = json_object_get(d, "reps");
    if (!json_is_object(sec) || !json_is_integer(reps) || json_integer_value(reps) < 1)
        return -1;
    for (int k = 0; k < HX_BD_N; k++) {
        json_t *v = json_object_get(sec, hx_bd_names[k]);
        if (!v && k == HX_BD_PROMOTE) { /* drivers before 0.24 had no promote category: unknown */
            bd[k] = NAN;
            continue;
        }
        if (!json_is_number(v) || json_number_value(v) < 0)
            return -1;
        bd[k] = json_number_value(v) / (double)json_integer_value(reps);
    }
    return 1;
}

/* Checks record o and fills *r: NULL, or why the record is not a run (static text, or why). */
static const char *check_run(json_t *o, run_fields *r, char *why, size_t whylen) {
    if (!json_is_object(o))
        return "not a JSON object";
    json_t *schema = json_object_get(o, "schema");
    if (schema && (!json_is_integer(schema) || json_integer_value(schema) != 1)) {
        snprintf(why, whylen, "schema is not %d (written by another version?)", 1);
        return why;
    }
    r->bench = json_string_value(json_object_get(o, "benchmark"));
    r->variant = json_string_value(json_object_get(o, "variant"));
    r->status = json_string_value(json_object_get(o, "status"));
    json_t *jw = json_object_get(o, "workers");
    if (!r->bench || !*r->bench)
        return "missing or bad field \"benchmark\" (a non-empty string)";
    if (!r->variant || !*r->variant)
        return "missing or bad field \"variant\" (a non-empty string)";
    if (!r->status || !*r->status)
        return "missing or bad field \"status\" (a non-empty string)";
    if (!json_is_integer(jw) || json_integer_value(jw) < 1 || json_integer_value(jw) > 1000000)
        return "missing or bad field \"workers\" (an integer >= 1)";
    r->workers = (long)json_integer_value(jw);
    /* A calibrate run has kind "calibrate" and benchmark "calibrate" (results.h); either is
     * taken to mean it, so that no calibrate run passes for a benchmark's. */
    const char *kind = json_string_value(json_object_get(o, "kind"));
    if (json_object_get(o, "kind") && (!kind || (strcmp(kind, "calibrate") && strcmp(kind, "timed"))))
        return "bad field \"kind\" (\"timed\" or \"calibrate\")";
    r->calib = (kind && !strcmp(kind, "calibrate")) || !strcmp(r->bench, "calibrate");
    r->ok = !strcmp(r->status, "ok");
    r->t = r->rss = r->cpu = NAN;
    int ht = hx_json_number(o, "time_s", &r->t), hr = hx_json_number(o, "maxrss_kib", &r->rss);
    if (ht < 0 || (ht > 0 && r->t < 0))
        return "bad field \"time_s\" (a number >= 0 or null)";
    if (hr < 0 || (hr > 0 && r->rss < 0))
        return "bad field \"maxrss_kib\" (a number >= 0)";
    if (r->ok && !r->calib && ht == 0)
        return "status \"ok\" but no \"time_s\"";
    if (r->ok && hr == 0)
        return "status \"ok\" but no \"maxrss_kib\"";
    int hc = hx_json_number(o, "cpu_s", &r->cpu);
    if (hc < 0 || (hc > 0 && r->cpu < 0))
        return "bad field \"cpu_s\" (a number >= 0 or null)";
    r->has_cpu = hc > 0;
    int hb = hx_stats_read_breakdown(o, r->bd);
    if (hb < 0)
        return "bad field \"driver.breakdown\" (its \"seconds\" per category, and the driver's \"reps\")";
    r->has_bd = hb > 0;
    double pub = publications(o);
    r->promo = promotions_per_s(o, pub);
    json_t *reps = json_object_get(json_object_get(o, "driver"), "reps");
    r->tau = r->has_bd && isfinite(r->bd[HX_BD_PROMOTE]) && pub > 0 && json_is_integer(reps)
                 ? r->bd[HX_BD_PROMOTE] * (double)json_integer_value(reps) / pub * 1e9
                 : NAN;
    return NULL;
}

size_t hx_stats_read_reps(json_t *o, double **out) {
    json_t *times = json_object_get(json_object_get(o, "driver"), "times");
    size_t n = json_array_size(times);
    *out = NULL;
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(times, i);
        if (!json_is_number(x) || !(json_number_value(x) > 0))
            return 0;
    }
    if (!n)
        return 0;
    *out = hx_xmalloc(n * sizeof **out);
    for (size_t i = 0; i < n; i++)
        (*out)[i] = json_number_value(json_array_get(times, i));
    return n;
}

/* The run's repetitions (hx_stats_read_reps) kept beside its time in g. */
static void take_reps(group *g, json_t *o) {
    hx_grow(&g->nrep, &g->cap_nrep, g->ntime + 1, sizeof *g->nrep);
    hx_grow(&g->rep, &g->cap_rep, g->ntime + 1, sizeof *g->rep);
    g->nrep[g->ntime] = hx_stats_read_reps(o, &g->rep[g->ntime]);
}

/* A failed run: counted under its status, with the last line of its stderr. */
static void tally_failure(group *g, const char *status, json_t *o) {
    status_tally *st = NULL;
    for (size_t i = 0; i < g->ntally; i++)
        if (!strcmp(g->tally[i].status, status))
            st = &g->tally[i];
    if (!st) {
        hx_grow(&g->tally, &g->cap_tally, g->ntally + 1, sizeof *g->tally);
        st = &g->tally[g->ntally];
        st->status = hx_xstrdup(status);
        st->count = 0;
        st->first = g->ntally++;
        st->last_stderr = NULL;
    }
    st->count++;
    const char *tail = json_string_value(json_object_get(o, "stderr_tail"));
    char *ll = last_line(tail ? tail : "");
    if (*ll || !st->last_stderr) {
        free(st->last_stderr);
        st->last_stderr = ll;
    } else {
        free(ll);
    }
}

/* The group of a record (benchmark, variant, P, calibrate or not), its benchmark and
 * variant ranked in order of first appearance. */
static group *group_of(loader *L, json_t *o, const run_fields *r) {
    group *g = find_group(L, r->bench, r->variant, r->workers, r->calib);
    int is_new;
    if (!r->calib) {
        g->bench_rank = rank_of(&L->benches, &L->nbenches, &L->cap_b, r->bench, &is_new);
        if (is_new) {
            L->bench_params = hx_xrealloc(L->bench_params, L->cap_b * sizeof *L->bench_params);
            L->bench_kernel = hx_xrealloc(L->bench_kernel, L->cap_b * sizeof *L->bench_kernel);
            L->bench_params[g->bench_rank] = hx_stats_render_params(json_object_get(o, "params"));
            const char *k = json_string_value(json_object_get(o, "kernel"));
            L->bench_kernel[g->bench_rank] = hx_xstrdup(k ? k : "");
        }
        g->variant_rank = rank_of(&L->variants, &L->nvariants, &L->cap_v, r->variant, &is_new);
    }
    const char *kernel = json_string_value(json_object_get(o, "kernel"));
    if (kernel && !*g->kernel) {
        free(g->kernel);
        g->kernel = hx_xstrdup(kernel);
    }
    if (json_is_true(json_object_get(o, "oversubscribed")))
        g->oversubscribed = 1;
    return g;
}

/* Takes one record into its group: NULL, or why it is not a run (then it is left out). */
static const char *take_run(loader *L, json_t *o, char *why, size_t whylen) {
    run_fields r;
    const char *bad = check_run(o, &r, why, whylen);
    if (bad)
        return bad;
    const char *run_id = json_string_value(json_object_get(o, "run_id"));
    if (run_id && id_insert(L, run_id)) {
        snprintf(why, whylen, "duplicate run_id \"%.100s\" (the first is kept)", run_id);
        return why;
    }
    group *g = group_of(L, o, &r);
    if (!r.ok) {
        tally_failure(g, r.status, o);
    } else {
        if (!r.calib) {
            take_reps(g, o);
            hx_grow(&g->time, &g->cap_time, g->ntime + 1, sizeof *g->time);
            g->time[g->ntime++] = r.t;
            if (r.has_cpu) {
                hx_grow(&g->cpu, &g->cap_cpu, g->ncpu + 1, sizeof *g->cpu);
                g->cpu[g->ncpu++] = r.cpu;
            }
            if (isfinite(r.promo)) {
                hx_grow(&g->promo, &g->cap_promo, g->npromo + 1, sizeof *g->promo);
                g->promo[g->npromo++] = r.promo;
            }
            if (isfinite(r.tau)) {
                hx_grow(&g->tau, &g->cap_tau, g->ntau + 1, sizeof *g->tau);
                g->tau[g->ntau++] = r.tau;
            }
            if (r.has_bd) {
                for (int k = 0; k < HX_BD_N; k++)
                    g->bd_sum[k] += isfinite(r.bd[k]) ? r.bd[k] : 0;
                g->nbd++;
                g->nbd_promote += isfinite(r.bd[HX_BD_PROMOTE]);
            }
        }
        hx_grow(&g->mrss, &g->cap_mrss, g->nmrss + 1, sizeof *g->mrss);
        g->mrss[g->nmrss++] = r.rss;
        if (r.calib)
            L->out->calib_runs++;
    }
    L->out->runs++;
    return NULL;
}

static int cmp_tally(const void *a, const void *b) {
    const status_tally *x = a, *y = b;
    if (x->count != y->count)
        return y->count - x->count;
    return (x->first > y->first) - (x->first < y->first);
}

static int cmp_cell_group(const void *a, const void *b) {
    const group *x = *(const group *const *)a, *y = *(const group *const *)b;
    if (x->bench_rank != y->bench_rank)
        return (x->bench_rank > y->bench_rank) - (x->bench_rank < y->bench_rank);
    if (x->variant_rank != y->variant_rank)
        return (x->variant_rank > y->variant_rank) - (x->variant_rank < y->variant_rank);
    return (x->workers > y->workers) - (x->workers < y->workers);
}

static void fill_cell(hx_cell *c, group *g, loader *L) {
    memset(c, 0, sizeof *c);
    c->benchmark = hx_xstrdup(g->benchmark);
    c->kernel = hx_xstrdup(g->kernel);
    c->variant = hx_xstrdup(g->variant);
    c->workers = g->workers;
    c->oversubscribed = g->oversubscribed;
    c->n_ok = (int)g->ntime;
    hx_sample t, m;
    hx_stats_describe(g->time, g->ntime, &t);
    hx_stats_describe(g->mrss, g->nmrss, &m);
    c->time_median = t.median;
    c->time_mean = t.mean;
    c->time_sd = t.sd;
    c->time_se = t.se;
    c->time_min = t.min;
    c->time_max = t.max;
    c->mrss_median = m.median;
    c->mrss_se = m.se;
    c->cpu_median = c->cpu_se = NAN;
    c->span_bound = c->burdened_bound = NAN;
    for (int k = 0; k < HX_BD_N; k++) /* (means: the parts add up to the wall) */
        c->bd[k] = g->nbd ? g->bd_sum[k] / (double)g->nbd : NAN;
    if (!g->nbd_promote) /* (only records from before the promote category: not measured) */
        c->bd[HX_BD_PROMOTE] = NAN;
    /* (a cell mixing old and new records, which one sweep does not write, averages promote
     * over all of them, the old ones as 0) */
    c->inflation_ts = c->inflation_t1 = NAN;
    hx_modes_judge(g->time, g->ntime, g->nrep, g->rep, &c->modes);
    if (g->ncpu) {
        hx_sample u;
        hx_stats_describe(g->cpu, g->ncpu, &u);
        c->cpu_median = u.median;
        c->cpu_se = u.se;
    }
    c->promotions_per_s = NAN;
    if (g->npromo) {
        hx_sample u;
        hx_stats_describe(g->promo, g->npromo, &u);
        c->promotions_per_s = u.median;
    }
    c->promotion_ns = NAN;
    if (g->ntau) {
        hx_sample u;
        hx_stats_describe(g->tau, g->ntau, &u);
        c->promotion_ns = u.median;
    }
    c->calib_median = c->calib_se = NAN;
    for (size_t i = 0; i < L->ng; i++) {
        group *k = &L->g[i];
        if (k->calibrate && k->workers == g->workers && !strcmp(k->variant, g->variant)) {
            hx_sample s;
            hx_stats_describe(k->mrss, k->nmrss, &s);
            c->calib_median = s.median;
            c->calib_se = s.se;
            break;
        }
    }
    /* failures: "timeout:2;crash:1", most frequent first */
    if (g->ntally > 1) /* (qsort of a NULL array is undefined even for 0 elements) */
        qsort(g->tally, g->ntally, sizeof *g->tally, cmp_tally);
    char buf[512];
    size_t len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < g->ntally; i++) {
        c->n_failed += g->tally[i].count;
        int w = snprintf(buf + len, sizeof buf - len, "%s%s:%d", len ? ";" : "", g->tally[i].status,
                         g->tally[i].count);
        if (w > 0 && (size_t)w < sizeof buf - len)
            len += (size_t)w;
    }
    c->failures = hx_xstrdup(buf);
}

static void free_loader(loader *L) {
    for (size_t i = 0; i < L->ng; i++) {
        group *g = &L->g[i];
        free(g->benchmark);
        free(g->kernel);
        free(g->variant);
        free(g->time);
        free(g->nrep);
        for (size_t j = 0; j < g->ntime; j++)
            free(g->rep[j]);
        free(g->rep);
        free(g->cpu);
        free(g->promo);
        free(g->tau);
        free(g->mrss);
        for (size_t j = 0; j < g->ntally; j++) {
            free(g->tally[j].status);
            free(g->tally[j].last_stderr);
        }
        free(g->tally);
    }
    free(L->g);
    for (size_t i = 0; i < L->nbenches; i++) {
        free(L->benches[i]);
        free(L->bench_params[i]);
        free(L->bench_kernel[i]);
    }
    free(L->benches);
    free(L->bench_params);
    free(L->bench_kernel);
    for (size_t i = 0; i < L->nvariants; i++)
        free(L->variants[i]);
    free(L->variants);
    for (size_t i = 0; i < L->ids_cap; i++)
        free(L->ids[i]);
    free(L->ids);
}

int hx_stats_load(const char *path, hx_summary *out, FILE *warn, const char *prog) {
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f)
        return -errno;
    loader L = {.out = out, .warn = warn, .prog = prog, .path = path};
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) >= 0) {
        lineno++;
        int had_newline = n > 0 && line[n - 1] == '\n';
        if (had_newline)
            line[--n] = 0;
        size_t sp = strspn(line, " \t\r");
        if (line[sp] == 0)
            continue;
        out->lines++;
        json_error_t err;
        json_t *o = json_loadb(line, (size_t)n, 0, &err);
        if (!o) {
            if (!had_newline)
                warnf(&L, "%s line %zu: truncated last line (no newline, not valid JSON: the run was "
                          "being written when the file was copied or the sweep stopped); ignored",
                      path, lineno);
            else
                warnf(&L, "%s line %zu: not valid JSON (%s); line skipped", path, lineno, err.text);
            continue;
        }
        char why[256];
        const char *bad = take_run(&L, o, why, sizeof why);
        if (bad)
            warnf(&L, "%s line %zu: %s; line skipped", path, lineno, bad);
        json_decref(o);
    }
    int rerr = ferror(f) ? -EIO : 0;
    free(line);
    fclose(f);

    /* timed cells, sorted; failures of every cell, calibrate ones included */
    group **order = hx_xrealloc(NULL, L.ng * sizeof *order);
    size_t nt = 0;
    for (size_t i = 0; i < L.ng; i++)
        if (!L.g[i].calibrate)
            order[nt++] = &L.g[i];
    if (nt > 1)
        qsort(order, nt, sizeof *order, cmp_cell_group);
    out->cells = hx_xrealloc(NULL, nt * sizeof *out->cells);
    out->ncells = nt;
    for (size_t i = 0; i < nt; i++) {
        fill_cell(&out->cells[i], order[i], &L);
        hx_cell *c = &out->cells[i];
        if (!isnan(c->mrss_median) && isnan(c->calib_median))
            out->uncalibrated++;
        if (c->n_ok == 1)
            out->se_missing++;
        out->modes_flagged += hx_modes_flagged(c->modes.verdict);
        out->modes_too_few += c->modes.verdict == HX_MODES_TOO_FEW;
    }
    /* failures in the order of the cells, calibrate cells after */
    for (int pass = 0; pass < 2; pass++) {
        size_t cnt = pass == 0 ? nt : L.ng;
        for (size_t i = 0; i < cnt; i++) {
            group *g = pass == 0 ? order[i] : &L.g[i];
            if (pass == 1 && !g->calibrate)
                continue;
            for (size_t j = 0; j < g->ntally; j++) {
                out->failures = hx_xrealloc(out->failures, (out->nfailures + 1) * sizeof *out->failures);
                hx_failure *fl = &out->failures[out->nfailures++];
                fl->benchmark = hx_xstrdup(g->calibrate ? "calibrate" : g->benchmark);
                fl->variant = hx_xstrdup(g->variant);
                fl->workers = g->workers;
                fl->status = hx_xstrdup(g->tally[j].status);
                fl->count = g->tally[j].count;
                fl->last_stderr = hx_xstrdup(g->tally[j].last_stderr ? g->tally[j].last_stderr : "");
            }
        }
    }
    free(order);
    out->benches = hx_xrealloc(NULL, L.nbenches * sizeof *out->benches);
    out->nbenches = L.nbenches;
    for (size_t i = 0; i < L.nbenches; i++) {
        out->benches[i].name = hx_xstrdup(L.benches[i]);
        out->benches[i].kernel = hx_xstrdup(L.bench_kernel[i]);
        out->benches[i].params = hx_xstrdup(L.bench_params[i]);
        out->benches[i].serial_workers = 0;
    }
    free_loader(&L);
    hx_stats_derive(out);
    return rerr;
}

/* ---- derived columns ----------------------------------------------------------------------- */

/* The serial projection's cell for a benchmark: variant "serial" with a successful run, the
 * fewest workers (P = 1 normally; the serial driver ignores P). */
static long serial_cell(const hx_summary *s, const char *bench) {
    long best = -1;
    for (size_t i = 0; i < s->ncells; i++) {
        const hx_cell *c = &s->cells[i];
        if (c->n_ok > 0 && !isnan(c->time_median) && !strcmp(c->variant, "serial") &&
            !strcmp(c->benchmark, bench) && (best < 0 || c->workers < s->cells[best].workers))
            best = (long)i;
    }
    return best;
}

void hx_stats_derive(hx_summary *s) {
    for (size_t i = 0; i < s->ncells; i++) {
        hx_cell *c = &s->cells[i];
        if (isnan(c->mrss_median)) {
            c->mem = c->mem_se = NAN;
        } else if (isnan(c->calib_median)) {
            c->mem = c->mrss_median; /* uncalibrated: nothing to subtract */
            c->mem_se = c->mrss_se;
        } else {
            c->mem = fmax(c->mrss_median - c->calib_median, HX_STATS_MEM_FLOOR_KIB);
            c->mem_se = hx_stats_quadrature(c->mrss_se, c->calib_se);
        }
        long k1 = hx_stats_find(s, c->benchmark, c->variant, 1);
        c->inflation_t1 = k1 >= 0 && s->cells[k1].time_median > 0 ? c->bd[HX_BD_WORK] / s->cells[k1].time_median : NAN;
        long k = serial_cell(s, c->benchmark);
        c->inflation_ts = k >= 0 && s->cells[k].time_median > 0 ? c->bd[HX_BD_WORK] / s->cells[k].time_median : NAN;
        if (k < 0 || isnan(c->time_median)) {
            c->speedup = c->speedup_se = c->efficiency = c->efficiency_se = NAN;
            continue;
        }
        const hx_cell *ser = &s->cells[k];
        if ((size_t)k == i) { /* T_s / T_s: exactly 1, its errors cancel */
            c->speedup = 1;
            c->speedup_se = 0;
        } else {
            hx_stats_ratio(ser->time_median, ser->time_se, c->time_median, c->time_se, &c->speedup,
                           &c->speedup_se);
        }
        c->efficiency = c->speedup / (double)c->workers;
        c->efficiency_se = c->speedup_se / (double)c->workers;
    }
    for (size_t b = 0; b < s->nbenches; b++) {
        long k = serial_cell(s, s->benches[b].name);
        s->benches[b].serial_workers = k < 0 ? 0 : s->cells[k].workers;
    }
}

long hx_stats_find(const hx_summary *s, const char *benchmark, const char *variant, long workers) {
    for (size_t i = 0; i < s->ncells; i++) {
        const hx_cell *c = &s->cells[i];
        if (c->workers == workers && !strcmp(c->benchmark, benchmark) && !strcmp(c->variant, variant))
            return (long)i;
    }
    return -1;
}

