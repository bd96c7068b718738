/* abtest.h — the statistics of an A/B comparison (`forkscope compare`).
 *
 * Every test works on log values, so that a location shift is a ratio: for times a (A's
 * runs) and b (B's runs), the estimate est is of log(b/a) and exp(est) is the ratio B/A
 * (> 1: B is slower).  The tests are those of R's wilcox.test, whose null distributions
 * come from R's standalone math library (Debian's r-mathlib: psignrank, qsignrank,
 * pwilcox, qwilcox):
 *   paired    Wilcoxon signed-rank test on d_i = log b_i - log a_i (zeros dropped), the
 *             Hodges-Lehmann estimate (median of the Walsh averages (d_i + d_j)/2, i <= j)
 *             and its confidence interval from order statistics of the Walsh averages;
 *   unpaired  Mann-Whitney U (Wilcoxon rank-sum) on log b against log a, the
 *             Hodges-Lehmann shift (median of all differences log b_j - log a_i) and its
 *             interval from order statistics of those differences.
 * Exact null distributions when n < 50 (each side, unpaired) and there are no ties (and,
 * paired, no zero differences); otherwise the normal approximation with the tie
 * correction of the variance and a continuity correction of 1/2, as R does.  Exact
 * intervals are conservative: their achieved confidence (conf_achieved) is at least the
 * one asked for.  In the normal case the interval's order statistics come from the normal
 * quantile of the statistic (Hollander & Wolfe), not from R's root search. */
#ifndef HX_ABTEST_H
#define HX_ABTEST_H

#include <stddef.h>
#include <stdint.h>

typedef struct hx_test {
    size_t n;            /* pairs used (paired: nonzero differences) or na + nb */
    double stat;         /* V (signed rank: sum of positive ranks) or W (rank sum of b minus nb(nb+1)/2) */
    double p;            /* two-sided p-value */
    double est, lo, hi;  /* Hodges-Lehmann estimate of log(b/a) and its interval (NaN if n too small) */
    double conf_achieved; /* the interval's actual confidence (exact: >= asked; normal: as asked) */
    double p_faster;     /* probability that a B run is faster than an A run (ties count 1/2) */
    int exact;           /* 1: exact null distribution; 0: normal approximation */
} hx_test;

/* Paired test on d[0..n) = log b_i - log a_i at confidence conf (e.g. 0.95).  0, or
 * -EINVAL (n = 0, a NaN, conf outside (0, 1)).  With fewer than 2 nonzero differences the
 * p-value is 1 and the interval NaN, except when all of at least 2 differences are 0: then
 * the estimate and the interval are exactly 0. */
int hx_ab_signed_rank(const double *d, size_t n, double conf, hx_test *out);

/* Unpaired test of lb[0..nb) = log b against la[0..na) = log a.  0 or -EINVAL. */
int hx_ab_rank_sum(const double *la, size_t na, const double *lb, size_t nb, double conf, hx_test *out);

/* The verdict on a log ratio with interval [lo, hi] and (adjusted) p-value p against a
 * noise band of ±band (a fraction): `up` ("slower") or `down` ("faster") only when p < alpha
 * and the whole interval lies beyond the band, so that an A/A comparison practically never
 * claims a change; "no change" when the interval lies inside the band (a significant 0.3%
 * included); otherwise "inconclusive".  A NaN interval is inconclusive. */
const char *hx_ab_verdict(double p, double lo, double hi, double band, double alpha, const char *up, const char *down);

/* Holm's step-down adjustment of n p-values (NaN entries are left NaN and not counted). */
void hx_ab_holm(const double *p, size_t n, double *adj);

/* Percentile bootstrap interval of log(median b / median a), B resamples seeded by seed
 * (paired: pairs resampled together, na == nb).  0 and *lo, *hi; -EINVAL. */
int hx_ab_boot_log_ratio(const double *la, size_t na, const double *lb, size_t nb, int paired, unsigned B,
                      uint64_t seed, double conf, double *lo, double *hi);

/* Spearman's rank correlation of x and y (midranks) and its two-sided p-value (t
 * approximation with n - 2 degrees of freedom; NaN for n < 4). */
double hx_ab_spearman(const double *x, const double *y, size_t n, double *p);

/* How many of x[0..n) have a modified z-score |0.6745 (x - median) / MAD| > 3.5
 * (Iglewicz & Hoaglin); 0 if MAD is 0. */
size_t hx_ab_outliers(const double *x, size_t n);

/* Pairs (paired) or runs per side (unpaired) needed for the Wilcoxon test to detect a
 * shift of log(1 + effect) with probability power at two-sided level alpha, when the log
 * values have standard deviation sd (paired: of the differences): the normal-theory count
 * divided by the tests' asymptotic relative efficiency 3/pi.  0 if sd or effect is not > 0. */
size_t hx_ab_runs_needed(double sd, double effect, double alpha, double power, int paired);

#endif
