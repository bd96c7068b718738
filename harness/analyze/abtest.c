/* abtest.c — rank tests, Hodges-Lehmann intervals, Holm, bootstrap, drift and outliers
 * (see abtest.h). */
#include "harness/analyze/abtest.h"
#include "harness/util/util.h"
#include "harness/util/errors.h"

#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MATHLIB_STANDALONE
#include <Rmath.h>

/* ---- ranks ------------------------------------------------------------------------------------ */

typedef struct {
    double v;
    size_t i;
} ranked;

static int cmp_ranked(const void *a, const void *b) {
    double x = ((const ranked *)a)->v, y = ((const ranked *)b)->v;
    return (x > y) - (x < y);
}

/* Midranks (1-based) of x[0..n) into r; *tie_sum = sum over tie groups of t^3 - t. */
static void midranks(const double *x, size_t n, double *r, double *tie_sum) {
    ranked *s = hx_xmalloc((n ? n : 1) * sizeof *s);
    for (size_t i = 0; i < n; i++)
        s[i] = (ranked){x[i], i};
    qsort(s, n, sizeof *s, cmp_ranked);
    *tie_sum = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && s[j].v == s[i].v)
            j++;
        double t = (double)(j - i), mid = (double)(i + 1 + j) / 2; /* ranks i+1 .. j */
        for (size_t k = i; k < j; k++)
            r[s[k].i] = mid;
        *tie_sum += t * t * t - t;
        i = j;
    }
    free(s);
}

/* ---- shared pieces ------------------------------------------------------------------------------ */

static double z_two_sided(double z) { return fmin(1.0, 2 * gsl_cdf_ugaussian_Q(fabs(z))); }

/* The normal approximation's p-value for statistic s with mean mu and variance var, with
 * the continuity correction of 1/2 towards the mean. */
static double normal_p(double s, double mu, double var) {
    if (!(var > 0))
        return 1;
    double z = s - mu;
    z = (z - (z > 0 ? 0.5 : z < 0 ? -0.5 : 0)) / sqrt(var);
    return z_two_sided(z);
}

/* The interval from order statistics k (1-based) and N + 1 - k of the sorted values w. */
static void order_interval(const double *w, size_t N, size_t k, double *lo, double *hi) {
    if (k < 1)
        k = 1;
    if (k > (N + 1) / 2)
        k = (N + 1) / 2;
    *lo = w[k - 1];
    *hi = w[N - k];
}

/* k for the normal case: floor(N/2 - z_{1-alpha/2} * sd), sd the statistic's null sd. */
static size_t normal_k(double N, double sd, double conf) {
    double k = floor(N / 2 - gsl_cdf_ugaussian_Pinv(1 - (1 - conf) / 2) * sd);
    return k < 1 ? 1 : (size_t)k;
}

static int bad_input(const double *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (isnan(x[i]))
            return 1;
    return 0;
}

/* ---- signed rank -------------------------------------------------------------------------------- */

int hx_ab_signed_rank(const double *d, size_t n, double conf, hx_test *out) {
    if (!n || !(conf > 0 && conf < 1) || bad_input(d, n))
        return -EINVAL;
    memset(out, 0, sizeof *out);
    double *x = hx_xmalloc(n * sizeof *x);
    size_t m = 0, nzero = 0, nneg = 0;
    for (size_t i = 0; i < n; i++) {
        nneg += d[i] < 0;
        if (d[i] == 0)
            nzero++;
        else
            x[m++] = d[i];
    }
    out->p_faster = (nneg + 0.5 * (double)nzero) / (double)n;
    out->n = m;
    out->p = 1;
    out->est = out->lo = out->hi = out->conf_achieved = NAN;
    if (m < 2) {
        out->est = hx_median_copy(d, n);
        if (m == 0 && n >= 2) /* every difference is 0: no change, exactly */
            out->est = out->lo = out->hi = 0;
        free(x);
        return 0;
    }
    double *a = hx_xmalloc(m * sizeof *a), *r = hx_xmalloc(m * sizeof *r), ties;
    for (size_t i = 0; i < m; i++)
        a[i] = fabs(x[i]);
    midranks(a, m, r, &ties);
    double V = 0, M = (double)m * (m + 1) / 2;
    for (size_t i = 0; i < m; i++)
        V += x[i] > 0 ? r[i] : 0;
    out->stat = V;
    size_t nw = m * (m + 1) / 2, k = 0;
    double *w = hx_xmalloc(nw * sizeof *w);
    for (size_t i = 0; i < m; i++)
        for (size_t j = i; j < m; j++)
            w[k++] = (x[i] + x[j]) / 2;
    qsort(w, nw, sizeof *w, hx_cmp_double);
    out->est = hx_median(w, nw);
    out->exact = m < 50 && ties == 0 && nzero == 0;
    if (out->exact) {
        double p = V > M / 2 ? psignrank(V - 1, (double)m, 0, 0) : psignrank(V, (double)m, 1, 0);
        out->p = fmin(1, 2 * p);
        double qu = qsignrank((1 - conf) / 2, (double)m, 1, 0);
        if (qu == 0)
            qu = 1;
        order_interval(w, nw, (size_t)qu, &out->lo, &out->hi);
        out->conf_achieved = 1 - 2 * psignrank(qu - 1, (double)m, 1, 0);
    } else {
        double var = (double)m * (m + 1) * (2.0 * m + 1) / 24 - ties / 48;
        out->p = normal_p(V, M / 2, var);
        order_interval(w, nw, normal_k((double)nw, sqrt(var), conf), &out->lo, &out->hi);
        out->conf_achieved = conf;
    }
    free(w);
    free(a);
    free(r);
    free(x);
    return 0;
}

/* ---- rank sum ----------------------------------------------------------------------------------- */

int hx_ab_rank_sum(const double *la, size_t na, const double *lb, size_t nb, double conf, hx_test *out) {
    if (!na || !nb || !(conf > 0 && conf < 1) || bad_input(la, na) || bad_input(lb, nb))
        return -EINVAL;
    memset(out, 0, sizeof *out);
    size_t N = na + nb, nd = na * nb;
    double *all = hx_xmalloc(N * sizeof *all), *r = hx_xmalloc(N * sizeof *r), ties;
    memcpy(all, lb, nb * sizeof *lb); /* b first: W is b's rank sum */
    memcpy(all + nb, la, na * sizeof *la);
    midranks(all, N, r, &ties);
    double W = 0;
    for (size_t i = 0; i < nb; i++)
        W += r[i];
    W -= (double)nb * (nb + 1) / 2;
    out->stat = W;
    out->n = N;
    double *diff = hx_xmalloc(nd * sizeof *diff);
    size_t k = 0, below = 0, equal = 0;
    for (size_t j = 0; j < nb; j++)
        for (size_t i = 0; i < na; i++) {
            double v = lb[j] - la[i];
            below += v < 0;
            equal += v == 0;
            diff[k++] = v;
        }
    out->p_faster = (below + 0.5 * (double)equal) / (double)nd;
    qsort(diff, nd, sizeof *diff, hx_cmp_double);
    out->est = hx_median(diff, nd);
    double mn = (double)nb * (double)na;
    out->exact = na < 50 && nb < 50 && ties == 0;
    if (out->exact) {
        double p = W > mn / 2 ? pwilcox(W - 1, (double)nb, (double)na, 0, 0) : pwilcox(W, (double)nb, (double)na, 1, 0);
        out->p = fmin(1, 2 * p);
        double qu = qwilcox((1 - conf) / 2, (double)nb, (double)na, 1, 0);
        if (qu == 0)
            qu = 1;
        order_interval(diff, nd, (size_t)qu, &out->lo, &out->hi);
        out->conf_achieved = 1 - 2 * pwilcox(qu - 1, (double)nb, (double)na, 1, 0);
    } else {
        double var = mn / 12 * (((double)N + 1) - ties / ((double)N * ((double)N - 1)));
        out->p = normal_p(W, mn / 2, var);
        order_interval(diff, nd, normal_k(mn, sqrt(mn * ((double)N + 1) / 12), conf), &out->lo, &out->hi);
        out->conf_achieved = conf;
    }
    free(diff);
    free(all);
    free(r);
    return 0;
}

/* ---- verdict ---------------------------------------------------------------------------------- */

const char *hx_ab_verdict(double p, double lo, double hi, double band, double alpha, const char *up, const char *down) {
    if (isnan(lo) || isnan(hi))
        return "inconclusive";
    double blo = log1p(-band), bhi = log1p(band);
    if (p < alpha && lo > bhi)
        return up;
    if (p < alpha && hi < blo)
        return down;
    if (lo >= blo && hi <= bhi)
        return "no change";
    return "inconclusive";
}

/* ---- Holm ------------------------------------------------------------------------------------ */

void hx_ab_holm(const double *p, size_t n, double *adj) {
    ranked *s = hx_xmalloc((n ? n : 1) * sizeof *s);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        adj[i] = NAN;
        if (!isnan(p[i]))
            s[m++] = (ranked){p[i], i};
    }
    qsort(s, m, sizeof *s, cmp_ranked);
    double run = 0;
    for (size_t j = 0; j < m; j++) {
        double v = fmin(1, (double)(m - j) * s[j].v);
        run = fmax(run, v); /* adjusted p-values never decrease along the order */
        adj[s[j].i] = run;
    }
    free(s);
}

/* ---- bootstrap -------------------------------------------------------------------------------- */

int hx_ab_boot_log_ratio(const double *la, size_t na, const double *lb, size_t nb, int paired, unsigned B,
                      uint64_t seed, double conf, double *lo, double *hi) {
    if (!na || !nb || B < 10 || !(conf > 0 && conf < 1) || (paired && na != nb))
        return -EINVAL;
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    if (!g) {
        fprintf(stderr, "forkscope: out of memory\n");
        exit(HX_EXIT_INTERNAL);
    }
    gsl_rng_set(g, (unsigned long)seed);
    double *ra = hx_xmalloc(na * sizeof *ra), *rb = hx_xmalloc(nb * sizeof *rb), *t = hx_xmalloc(B * sizeof *t);
    for (unsigned k = 0; k < B; k++) {
        for (size_t i = 0; i < na; i++) {
            size_t j = gsl_rng_uniform_int(g, na);
            ra[i] = la[j];
            if (paired)
                rb[i] = lb[j];
        }
        for (size_t i = 0; !paired && i < nb; i++)
            rb[i] = lb[gsl_rng_uniform_int(g, nb)];
        t[k] = hx_median(rb, nb) - hx_median(ra, na); /* log values: medians commute with exp */
    }
    qsort(t, B, sizeof *t, hx_cmp_double);
    *lo = hx_quantile_sorted(t, B, (1 - conf) / 2);
    *hi = hx_quantile_sorted(t, B, 1 - (1 - conf) / 2);
    free(ra);
    free(rb);
    free(t);
    gsl_rng_free(g);
    return 0;
}

/* ---- drift and outliers ---------------------------------------------------------------------- */

double hx_ab_spearman(const double *x, const double *y, size_t n, double *p) {
    *p = NAN;
    if (n < 4)
        return NAN;
    double *rx = hx_xmalloc(n * sizeof *rx), *ry = hx_xmalloc(n * sizeof *ry), t;
    midranks(x, n, rx, &t);
    midranks(y, n, ry, &t);
    double mean = ((double)n + 1) / 2, sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        sxy += (rx[i] - mean) * (ry[i] - mean);
        sxx += (rx[i] - mean) * (rx[i] - mean);
        syy += (ry[i] - mean) * (ry[i] - mean);
    }
    free(rx);
    free(ry);
    if (!(sxx > 0 && syy > 0))
        return NAN;
    double rho = sxy / sqrt(sxx * syy);
    double df = (double)n - 2, tt = rho * sqrt(df / fmax(1e-300, 1 - rho * rho));
    *p = fmin(1, 2 * gsl_cdf_tdist_Q(fabs(tt), df));
    return rho;
}

size_t hx_ab_outliers(const double *x, size_t n) {
    if (n < 3)
        return 0;
    double med = hx_median_copy(x, n), *dev = hx_xmalloc(n * sizeof *dev);
    for (size_t i = 0; i < n; i++)
        dev[i] = fabs(x[i] - med);
    double mad = hx_median(dev, n);
    size_t count = 0;
    for (size_t i = 0; mad > 0 && i < n; i++)
        count += fabs(0.6745 * (x[i] - med) / mad) > 3.5;
    free(dev);
    return count;
}

/* ---- power ------------------------------------------------------------------------------------ */

size_t hx_ab_runs_needed(double sd, double effect, double alpha, double power, int paired) {
    if (!(sd > 0) || !(effect > 0) || !(alpha > 0 && alpha < 1) || !(power > 0 && power < 1))
        return 0;
    double delta = log1p(effect);
    double z = gsl_cdf_ugaussian_Pinv(1 - alpha / 2) + gsl_cdf_ugaussian_Pinv(power);
    double n = (paired ? 1 : 2) * (z * sd / delta) * (z * sd / delta) * M_PI / 3;
    size_t floor_n = paired ? 6 : 4; /* the smallest samples whose exact test can reach p < 0.05 */
    n = ceil(n);
    return n < (double)floor_n ? floor_n : (size_t)n;
}
