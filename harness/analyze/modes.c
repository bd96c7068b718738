/* modes.c — is a cell one distribution: the F test across processes and the two-cluster
 * split (see modes.h). */
#include "harness/analyze/modes.h"
#include "harness/util/util.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hx_modes_flagged(hx_modes_verdict v) { return v == HX_MODES_BETWEEN || v == HX_MODES_BIMODAL; }

/* ---- between processes: one-way random-effects ANOVA on log times --------------------------- */

/* 1 if run i is one of the F test's groups: >= 2 repetitions, each > 0 and finite (as the
 * runs' times are filtered in hx_modes_judge: a repetition of 0 has no log; the readers of
 * "times" already refuse one, but a caller's array is not trusted to). */
static int is_group(const size_t *nrep, double *const *rep, size_t i) {
    if (nrep[i] < 2)
        return 0;
    for (size_t j = 0; j < nrep[i]; j++)
        if (!(rep[i][j] > 0 && isfinite(rep[i][j])))
            return 0;
    return 1;
}

/* The F test over the runs with >= 2 repetitions, all positive (is_group; a run with a
 * non-positive repetition is left out of it): p, sd_between, sd_within into m.  The
 * between-process variance component is (MSB - MSW) / n0 with n0 = (N - sum n_i^2 / N) / (g - 1),
 * the mean group size corrected for unequal sizes (Searle, Casella & McCulloch, ch. 3). */
static void anova(const size_t *nrep, double *const *rep, size_t k, hx_modes *m) {
    double grand = 0, ssw = 0, ssb = 0, sumsq_n = 0;
    size_t g = 0, N = 0;
    for (size_t i = 0; nrep && rep && i < k; i++)
        if (is_group(nrep, rep, i)) {
            g++;
            N += nrep[i];
            for (size_t j = 0; j < nrep[i]; j++)
                grand += log(rep[i][j]);
        }
    m->groups = g;
    if (g < HX_MODES_MIN_GROUPS)
        return;
    grand /= (double)N;
    for (size_t i = 0; i < k; i++) {
        if (!is_group(nrep, rep, i))
            continue;
        double mean = 0;
        for (size_t j = 0; j < nrep[i]; j++)
            mean += log(rep[i][j]) / (double)nrep[i];
        for (size_t j = 0; j < nrep[i]; j++)
            ssw += (log(rep[i][j]) - mean) * (log(rep[i][j]) - mean);
        ssb += (double)nrep[i] * (mean - grand) * (mean - grand);
        sumsq_n += (double)nrep[i] * (double)nrep[i];
    }
    double df1 = (double)g - 1, df2 = (double)(N - g);
    double msb = ssb / df1, msw = ssw / df2, n0 = ((double)N - sumsq_n / (double)N) / df1;
    double F = msw > 0 ? msb / msw : msb > 0 ? INFINITY : 0;
    m->p = isinf(F) ? 0 : gsl_cdf_fdist_Q(F, df1, df2);
    m->sd_within = sqrt(msw);
    m->sd_between = sqrt(fmax(0, msb - msw) / n0);
}

/* ---- two clusters: the best 2-means split of the runs' log times ----------------------------- */

/* The 99.9% quantile of D (as best_split computes it) for k = 4, 5, ..., 40 runs drawn from one
 * normal distribution: 100,000 samples of each k (GSL's mt19937, seed 1, gsl_ran_gaussian).
 * The best split of a small sample often looks clumpy (the median D is about 3 at every k,
 * and at k = 6 one sample in a thousand has D > 17), so a fixed threshold would flag
 * one-distribution cells of few runs; this one flags 0.1% of them at every k.  Beyond 40 the
 * value at 40 (the quantile falls with k: conservative).  tests/test_compare.c checks it. */
static const double d_critical[] = {
    50.91, 25.17, 17.09, 12.90, 10.87, 9.45, 8.18, 7.60, 7.19, 6.68, 6.32, 6.07, 6.00, /* k = 4..16 */
    5.73, 5.51, 5.37, 5.32, 5.16, 5.12, 5.01, 4.93, 4.86, 4.75, 4.74, 4.65, 4.62,      /* 17..29 */
    4.54, 4.46, 4.44, 4.42, 4.37, 4.31, 4.27, 4.23, 4.23, 4.12, 4.13,                  /* 30..40 */
};

double hx_modes_d_critical(size_t k) {
    size_t n = sizeof d_critical / sizeof *d_critical;
    if (k < 4)
        return INFINITY;
    return d_critical[k - 4 < n ? k - 4 : n - 1];
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void mean_var(const double *x, size_t n, double *mean, double *var) {
    double s = 0, q = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    *mean = s / (double)n;
    for (size_t i = 0; i < n; i++)
        q += (x[i] - *mean) * (x[i] - *mean);
    *var = n > 1 ? q / (double)(n - 1) : 0;
}

/* The cut of the sorted log times x[0..k) with the least within-cluster sum of squares, both
 * sides >= 2: D, ratio, and the clusters' medians and sizes (in m; medians as times). */
static void best_split(const double *x, size_t k, hx_modes *m) {
    size_t best = 0;
    double best_ss = INFINITY;
    for (size_t s = 2; s + 2 <= k; s++) {
        double m1, v1, m2, v2;
        mean_var(x, s, &m1, &v1);
        mean_var(x + s, k - s, &m2, &v2);
        double ss = v1 * (double)(s - 1) + v2 * (double)(k - s - 1);
        if (ss < best_ss) {
            best_ss = ss;
            best = s;
        }
    }
    double m1, v1, m2, v2;
    mean_var(x, best, &m1, &v1);
    mean_var(x + best, k - best, &m2, &v2);
    /* Ashman's D with the clusters' variances pooled (weighted by their degrees of freedom):
     * sqrt(2) (m2 - m1) / sqrt(2 s^2), the same when the two SDs agree, but a cluster of 2 runs
     * that happen to agree cannot make D large alone.  s floored at 0.1% (times at the clock's
     * resolution), D capped. */
    double s = sqrt((v1 * (double)(best - 1) + v2 * (double)(k - best - 1)) / (double)(k - 2));
    m->d = fmin(1000, (m2 - m1) / fmax(s, 1e-3));
    m->ratio = exp(m2 - m1);
    m->n[0] = best;
    m->n[1] = k - best;
    m->median[0] = exp(hx_median_copy(x, best));
    m->median[1] = exp(hx_median_copy(x + best, k - best));
}

void hx_modes_judge(const double *t, size_t k, const size_t *nrep, double *const *rep, hx_modes *out) {
    memset(out, 0, sizeof *out);
    out->p = out->sd_between = out->sd_within = out->d = out->ratio = NAN;
    out->median[0] = out->median[1] = NAN;
    double *x = hx_xmalloc((k + 1) * sizeof *x);
    size_t n = 0;
    for (size_t i = 0; i < k; i++)
        if (t[i] > 0 && isfinite(t[i])) /* (a time of 0: below the clock's resolution; not judged) */
            x[n++] = log(t[i]);
    out->runs = n;
    anova(nrep, rep, k, out);
    int between = out->groups >= HX_MODES_MIN_GROUPS && out->p < HX_MODES_ALPHA &&
                  out->sd_between >= HX_MODES_SD_FLOOR && out->sd_between >= HX_MODES_SD_RATIO * out->sd_within;
    int bimodal = 0;
    if (n >= 4) {
        qsort(x, n, sizeof *x, cmp_double);
        best_split(x, n, out);
        bimodal = out->d >= hx_modes_d_critical(n) && out->ratio >= HX_MODES_RATIO_MIN;
    }
    free(x);
    if (!n)
        return;
    if (!bimodal) { /* the clusters are the modes only when there are two */
        out->median[0] = out->median[1] = NAN;
        out->n[0] = out->n[1] = 0;
    }
    out->verdict = bimodal ? HX_MODES_BIMODAL
                   : between ? HX_MODES_BETWEEN
                   : n < HX_MODES_MIN_RUNS ? HX_MODES_TOO_FEW
                                           : HX_MODES_OK;
}

const char *hx_modes_describe(const hx_modes *m, char *buf, size_t len) {
    switch (m->verdict) {
    case HX_MODES_BIMODAL:
        snprintf(buf, len, "two clusters: %zu runs at %.4g s, %zu at %.4g s (%.2fx apart, Ashman's D %.3g)", m->n[0],
                 m->median[0], m->n[1], m->median[1], m->ratio, m->d);
        break;
    case HX_MODES_BETWEEN:
        snprintf(buf, len,
                 "the processes disagree beyond their repetitions: between-process SD %.1f%% against %.1f%% within "
                 "(F test over %zu processes, p %.2g)",
                 100 * m->sd_between, 100 * m->sd_within, m->groups, m->p);
        break;
    case HX_MODES_TOO_FEW:
        snprintf(buf, len, "too few runs to tell (%zu; %d needed)", m->runs, HX_MODES_MIN_RUNS);
        break;
    case HX_MODES_OK:
        snprintf(buf, len, "one distribution as far as %zu runs tell%s", m->runs,
                 m->groups >= HX_MODES_MIN_GROUPS ? "" : " (no repetitions inside the processes: clusters only)");
        break;
    default:
        snprintf(buf, len, "no successful run");
    }
    return buf;
}
