/* test_fit.c — `forkscope fit`: the statistics, the memory fit (Eq. 17) and the files.
 *
 * Statistics are checked on examples small enough to compute by hand (the arithmetic is in
 * the comments).  The fit must recover known a, b, n from synthetic data with Gaussian noise
 * within its own stated errors, and its errors must be honest: over many noisy data sets,
 * about 68% of the fitted n lie within one standard error of the truth.  The fixture results
 * directory tests/fixtures/results/small (see its make_raw.py for the values) must give the
 * summary.csv values worked out below, skip the lines it should, and say what it should. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <limits.h>
#include <math.h>
#include <sys/stat.h>

#include "harness/cli/commands.h"
#include "harness/report/analysis.h"
#include "harness/util/errors.h"
#include "harness/analyze/fit.h"
#include "harness/report/report.h"
#include "harness/analyze/stats.h"
#include "tests/testlib.h"
#include "tests/results_fixture.h"

/* ---- helpers ------------------------------------------------------------------------------- */

#define NEAR_REL(a, b, rel) ASSERT_NEAR((a), (b), fabs((double)(b)) * (rel) + 1e-12)

/* Runs `forkscope fit dir` with stdout and stderr sent to dir/fit.out and dir/fit.err. */
static int run_fit(const char *dir) {
    char out[PATH_MAX], err[PATH_MAX];
    snprintf(out, sizeof out, "%.2000s/fit.out", dir);
    snprintf(err, sizeof err, "%.2000s/fit.err", dir);
    fflush(NULL);
    int so = dup(1), se = dup(2);
    ASSERT(freopen(out, "w", stdout));
    ASSERT(freopen(err, "w", stderr));
    char a0[] = "fit", a1[PATH_MAX];
    snprintf(a1, sizeof a1, "%s", dir);
    char *argv[] = {a0, a1, NULL};
    int rc = hx_cmd_fit(2, argv);
    fflush(NULL);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    return rc;
}

static const hx_cell *cell(const hx_summary *s, const char *b, const char *v, long p) {
    long i = hx_stats_find(s, b, v, p);
    ASSERT_MSG(i >= 0, "no cell %s|%s|%ld", b, v, p);
    return &s->cells[i];
}

/* ---- descriptive statistics ------------------------------------------------------------------ */

TEST(describe_small_samples) {
    hx_sample s;
    /* {3, 1, 2, 10}: sorted 1 2 3 10, median (2+3)/2 = 2.5, mean 4, deviations -3 -2 -1 6,
     * sum of squares 9+4+1+36 = 50, sd = sqrt(50/3) = 4.0824829, se = sd/2 */
    double x[] = {3, 1, 2, 10};
    hx_stats_describe(x, 4, &s);
    ASSERT_EQ(s.n, 4);
    ASSERT_NEAR(s.median, 2.5, 1e-15);
    ASSERT_NEAR(s.mean, 4.0, 1e-15);
    ASSERT_NEAR(s.sd, sqrt(50.0 / 3), 1e-12);
    ASSERT_NEAR(s.se, sqrt(50.0 / 3) / 2, 1e-12);
    ASSERT_NEAR(s.min, 1, 0);
    ASSERT_NEAR(s.max, 10, 0);
    ASSERT(x[0] == 3 && x[3] == 10); /* the input is left alone */
    /* {1.10, 1.12, 1.08}: median 1.10, sd 0.02, se 0.02/sqrt(3) = 0.011547005 */
    double t[] = {1.10, 1.12, 1.08};
    hx_stats_describe(t, 3, &s);
    ASSERT_NEAR(s.median, 1.10, 1e-15);
    ASSERT_NEAR(s.sd, 0.02, 1e-12);
    ASSERT_NEAR(s.se, 0.011547005383792516, 1e-12);
    /* one value: no spread */
    double one[] = {5};
    hx_stats_describe(one, 1, &s);
    ASSERT(s.median == 5 && s.mean == 5 && isnan(s.sd) && isnan(s.se));
    /* none: all missing */
    hx_stats_describe(NULL, 0, &s);
    ASSERT(s.n == 0 && isnan(s.median) && isnan(s.mean) && isnan(s.min) && isnan(s.max));
}

TEST(error_propagation) {
    double q, qse;
    /* 2 ± 0.1 over 4 ± 0.2: q = 0.5, relative errors 0.05 and 0.05, q_se = 0.5*sqrt(2)*0.05 */
    hx_stats_ratio(2, 0.1, 4, 0.2, &q, &qse);
    ASSERT_NEAR(q, 0.5, 1e-15);
    ASSERT_NEAR(qse, 0.5 * sqrt(2.0) * 0.05, 1e-12);
    /* speedup of the fixture's cont-seg-busy at P = 2: T_s = 1.00 ± 0.011547, T_2 = 0.56 ± 0.0057735:
     * S = 1.7857143, S_se = S*sqrt(0.011547^2 + (0.0057735/0.56)^2) = 0.0276426 */
    hx_stats_ratio(1.0, 0.02 / sqrt(3), 0.56, 0.01 / sqrt(3), &q, &qse);
    ASSERT_NEAR(q, 1.0 / 0.56, 1e-12);
    ASSERT_NEAR(qse, 0.027642594, 1e-8);
    /* missing pieces */
    hx_stats_ratio(1, NAN, 2, 0.1, &q, &qse);
    ASSERT(q == 0.5 && isnan(qse));
    hx_stats_ratio(NAN, 0.1, 2, 0.1, &q, &qse);
    ASSERT(isnan(q) && isnan(qse));
    hx_stats_ratio(1, 0.1, 0, 0.1, &q, &qse);
    ASSERT(isnan(q) && isnan(qse));
    ASSERT_NEAR(hx_stats_quadrature(3, 4), 5, 1e-15);
    ASSERT(isnan(hx_stats_quadrature(3, NAN)));
}

/* ---- the memory fit ---------------------------------------------------------------------------- */

static const double Ps[] = {1, 2, 4, 8, 16, 24, 32, 48, 64};
#define NP (sizeof Ps / sizeof *Ps)

/* Noisy data from a + b*M1*P^n: sigma = 3% of the value + 8 KiB; se given = sigma. */
static void synth(gsl_rng *r, double a, double b, double m1, double n, double *y, double *se) {
    for (size_t i = 0; i < NP; i++) {
        double t = a + b * m1 * pow(Ps[i], n);
        se[i] = 0.03 * t + 8;
        y[i] = t + (r ? gsl_ran_gaussian(r, se[i]) : 0);
    }
}

TEST(fit_exact_data) {
    double y[NP], se[NP];
    synth(NULL, 2000, 0.5, 10000, 0.9, y, se);
    hx_fit f;
    ASSERT_EQ(hx_fit_power_law(Ps, y, se, NP, 10000, &f), 1);
    ASSERT(f.ok && f.points == (int)NP);
    ASSERT_NEAR(f.n, 0.9, 1e-6);
    ASSERT_NEAR(f.b, 0.5, 1e-6);
    ASSERT_NEAR(f.a, 2000, 1e-2);
    ASSERT_NEAR(f.chi2_dof, 0, 1e-9);
}

/* Several seeds per exponent: n within 3 of its own standard errors, a and b within 4 (their
 * errors are estimated from 6 degrees of freedom, so |t| > 3 has a probability of 2.4% per
 * check, |t| > 4 of 0.7%: see fit_errors_are_calibrated for the distribution). */
TEST(fit_recovers_known_parameters) {
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    const double ns[] = {0.4, 0.9, 1.3};
    for (size_t k = 0; k < 3; k++)
        for (unsigned long seed = 1; seed <= 5; seed++) {
            gsl_rng_set(r, seed);
            double a = 3000, b = 0.25, m1 = 20000, y[NP], se[NP];
            synth(r, a, b, m1, ns[k], y, se);
            hx_fit f;
            ASSERT_EQ(hx_fit_power_law(Ps, y, se, NP, m1, &f), 1);
            ASSERT_MSG(f.ok && isfinite(f.n_se) && f.n_se > 0, "n=%g seed %lu: not ok (%s)", ns[k], seed, f.note);
            ASSERT_MSG(fabs(f.n - ns[k]) <= 3 * f.n_se, "n=%g seed %lu: n = %g ± %g", ns[k], seed, f.n, f.n_se);
            ASSERT_MSG(fabs(f.b - b) <= 4 * f.b_se, "n=%g seed %lu: b = %g ± %g", ns[k], seed, f.b, f.b_se);
            ASSERT_MSG(fabs(f.a - a) <= 4 * f.a_se, "n=%g seed %lu: a = %g ± %g", ns[k], seed, f.a, f.a_se);
            ASSERT_MSG(f.chi2_dof < 4, "n=%g seed %lu: chi2/dof = %g", ns[k], seed, f.chi2_dof);
        }
    gsl_rng_free(r);
}

/* The stated errors are honest: over 300 data sets per exponent, the fraction of |n - n_true|
 * within 1 se is near 64% and within 3 se near 97.6% (Student's t with 6 degrees of freedom:
 * the errors are scaled by chi2/dof, estimated from 9 points - 3 parameters); allowed 55..80%
 * and >= 95%.  Prints the accuracy figures. */
TEST(fit_errors_are_calibrated) {
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 12345);
    const double ns[] = {0.4, 0.9, 1.3};
    for (size_t k = 0; k < 3; k++) {
        int in1 = 0, in3 = 0, nfit = 300;
        double sum_dev = 0, sum_se = 0;
        for (int i = 0; i < nfit; i++) {
            double y[NP], se[NP];
            synth(r, 3000, 0.25, 20000, ns[k], y, se);
            hx_fit f;
            ASSERT_EQ(hx_fit_power_law(Ps, y, se, NP, 20000, &f), 1);
            double d = fabs(f.n - ns[k]);
            in1 += d <= f.n_se;
            in3 += d <= 3 * f.n_se;
            sum_dev += d;
            sum_se += f.n_se;
        }
        printf("  fit n = %.1f: %d noisy data sets (3%% + 8 KiB), mean |n - n_true| = %.4f, mean n_se = %.4f, "
               "within 1 se: %.0f%%, within 3 se: %.0f%%\n",
               ns[k], nfit, sum_dev / nfit, sum_se / nfit, 100.0 * in1 / nfit, 100.0 * in3 / nfit);
        ASSERT_MSG(in1 >= 0.55 * nfit && in1 <= 0.80 * nfit, "n=%g: %d of %d within 1 se", ns[k], in1, nfit);
        ASSERT_MSG(in3 >= 0.95 * nfit, "n=%g: %d of %d within 3 se", ns[k], in3, nfit);
    }
    gsl_rng_free(r);
}

TEST(fit_large_scale_and_offset) {
    /* MiB-to-GiB scale (a = 4 GiB of matrices): the internal scaling by M1 must cope */
    double y[NP], se[NP];
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    double a = 4.0 * 1024 * 1024, m1 = a + 300;
    for (size_t i = 0; i < NP; i++) {
        double t = a + 1.0 * 300 * pow(Ps[i], 1.1);
        se[i] = 20;
        y[i] = t + gsl_ran_gaussian(r, se[i]);
    }
    hx_fit f;
    ASSERT_EQ(hx_fit_power_law(Ps, y, se, NP, m1, &f), 1);
    ASSERT_MSG(fabs(f.n - 1.1) <= 3 * f.n_se, "n = %g ± %g (%s)", f.n, f.n_se, f.note);
    gsl_rng_free(r);
}

TEST(fit_skips_what_it_cannot_fit) {
    double P[] = {1, 2, 4}, y[] = {100, 180, 330}, se[] = {5, 5, 5};
    hx_fit f;
    ASSERT_EQ(hx_fit_power_law(P, y, se, 3, 100, &f), 0);
    ASSERT(!f.ok && isnan(f.n) && isnan(f.n_se));
    ASSERT_STR_CONTAINS(f.note, "3 points, need 4");
    ASSERT_EQ(hx_fit_power_law(P, y, se, 1, 100, &f), 0);
    ASSERT_STR_CONTAINS(f.note, "1 point, need 4");
    double P4[] = {2, 4, 8, 16}, y4[] = {180, 330, 600, 1100}, se4[] = {5, 5, 5, 5};
    ASSERT_EQ(hx_fit_power_law(P4, y4, se4, 4, NAN, &f), 0);
    ASSERT_STR_CONTAINS(f.note, "no P=1 cell");
    ASSERT_EQ(hx_fit_power_law(P4, y4, se4, 4, 0, &f), 0);
    ASSERT_STR_CONTAINS(f.note, "M1 = 0");
}

TEST(fit_bounds_and_se_floor) {
    /* memory falling with P: the unconstrained optimum has b < 0 or n < 0; the answer is the
     * bound n = 0 (a constant), with a note saying so */
    double P[] = {1, 2, 4, 8, 16, 32}, y[] = {1000, 960, 930, 905, 890, 880}, se[] = {5, 5, 5, 5, 5, 5};
    hx_fit f;
    ASSERT_EQ(hx_fit_power_law(P, y, se, 6, 1000, &f), 1);
    ASSERT(f.ok);
    ASSERT_NEAR(f.n, 0, 0);
    ASSERT(f.b >= 0 && isfinite(f.n_se) && f.n_se > 0);
    ASSERT_STR_CONTAINS(f.note, "bound");
    /* the constant is the weighted mean: b*M1 = mean of y (equal weights) */
    ASSERT_NEAR(f.b * 1000, (1000 + 960 + 930 + 905 + 890 + 880) / 6.0, 1e-9);
    /* standard errors of 0 and NaN are raised to 4 KiB, and the note says so */
    double y2[] = {100, 190, 350, 700, 1300, 2600}, se2[] = {0, NAN, 0, 8, 8, 8};
    ASSERT_EQ(hx_fit_power_law(P, y2, se2, 6, 100, &f), 1);
    ASSERT_STR_CONTAINS(f.note, "se raised to 4 KiB at 3 of 6 points");
}

TEST(fit_jump_is_not_a_fit) {
    /* flat memory with one high point at the largest P: the best n is the search limit; the fit
     * must say so and not claim n = 4 */
    double P[] = {1, 2, 4, 8}, y[] = {16, 16, 12, 64}, se[] = {4, 4, 4, 4};
    hx_fit f;
    hx_fit_power_law(P, y, se, 4, 16, &f);
    ASSERT_MSG(!f.ok, "n %g ± %g: %s", f.n, f.n_se, f.note);
    ASSERT_STR_CONTAINS(f.note, "search limit");
}

TEST(fit_log_growth_goes_to_the_bound) {
    /* memory growing like log P (raw MRSS of a small process: 5000 + 60 ln P) is the model's
     * n -> 0, b -> infinity limit: the optimiser ends at n ~ 1e-6 with a ~ -1e8 KiB, which
     * must not be reported; it is reported at the bound n = 0 with a = 0 and an error on n */
    double P[] = {1, 2, 3, 4}, y[4], se[] = {20, 20, 20, 20};
    for (int i = 0; i < 4; i++)
        y[i] = 5000 + 60 * log(P[i]) + (i == 2 ? 10 : -3);
    hx_fit f;
    ASSERT_EQ(hx_fit_power_law(P, y, se, 4, y[0], &f), 1);
    ASSERT(f.ok);
    ASSERT_MSG(f.n == 0 && f.a == 0, "n %g a %g b %g: %s", f.n, f.a, f.b, f.note);
    ASSERT_MSG(f.b > 0.9 && f.b < 1.1 && isfinite(f.n_se) && f.n_se > 0, "b %g n_se %g", f.b, f.n_se);
    ASSERT_STR_CONTAINS(f.note, "n -> 0 limit");
    ASSERT_STR_CONTAINS(f.note, "bound n = 0");
}

/* ---- the fixture results directory ------------------------------------------------------------ */

TEST(fixture_load_and_warnings) {
    char raw[PATH_MAX];
    snprintf(raw, sizeof raw, "%.3000s/raw.jsonl", fixture_dir());
    hx_summary s;
    ASSERT_EQ(hx_stats_load(raw, &s, NULL, "test"), 0);
    /* 65 lines: 63 usable runs, line 21 lacks "workers", line 65 is cut short */
    ASSERT_EQ(s.lines, 65);
    ASSERT_EQ(s.runs, 63);
    ASSERT_EQ(s.nwarnings, 2);
    ASSERT_STR_CONTAINS(s.warnings[0], "line 21");
    ASSERT_STR_CONTAINS(s.warnings[0], "\"workers\"");
    ASSERT_STR_CONTAINS(s.warnings[1], "line 65");
    ASSERT_STR_CONTAINS(s.warnings[1], "truncated");
    ASSERT_EQ(s.ncells, 12); /* fib: serial@1, cont-seg-busy@1,2,4,8, omp@1,2,4,8; T1: 3 */
    ASSERT_EQ(s.calib_runs, 27);
    ASSERT_EQ(s.uncalibrated, 0);
    ASSERT_EQ(s.nbenches, 2);
    ASSERT(!strcmp(s.benches[0].name, "fib") && s.benches[0].serial_workers == 1);
    ASSERT(!strcmp(s.benches[1].name, "T1") && s.benches[1].serial_workers == 0);
    ASSERT(!strcmp(s.benches[1].params, "t=1 a=3 d=10 b=4 r=19"));
    ASSERT_EQ(s.nfailures, 1);
    ASSERT(!strcmp(s.failures[0].status, "timeout") && s.failures[0].count == 1 && s.failures[0].workers == 8);
    ASSERT(!strcmp(s.failures[0].last_stderr, "worker 3: waiting for work"));
    hx_summary_free(&s);
}

TEST(fixture_summary_values) {
    const char *dir = fresh_dir(1);
    ASSERT_EQ(run_fit(dir), HX_OK);
    char path[PATH_MAX], err[256];
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    char *text = slurp(path);
    ASSERT(text);
    static const char header[] =
        "benchmark,kernel,variant,workers,oversubscribed,n_ok,n_failed,failures,time_median,time_mean,"
        "time_sd,time_se,time_min,time_max,mrss_median_kib,mrss_se_kib,calib_median_kib,calib_se_kib,"
        "mem_kib,mem_se_kib,speedup,speedup_se,efficiency,efficiency_se,cpu_median_s,cpu_se_s,span_bound,burdened_bound,"
        "work_s,search_s,steal_s,join_s,wait_s,fiber_s,sleep_s,workers_wall_s,inflation_ts,inflation_t1,"
        "promotions_per_s,modes,modes_p,modes_sd_between,modes_sd_within,modes_d,modes_ratio,mode1_median_s,mode1_runs,mode2_median_s,"
        "mode2_runs,promote_s,promotion_ns\n";
    ASSERT_MSG(!strncmp(text, header, strlen(header)), "header: %.400s", text);
    free(text);
    hx_summary s;
    ASSERT_EQ(hx_summary_read(path, &s, err, sizeof err), 0);
    ASSERT_EQ(s.ncells, 12);
    for (size_t i = 0; i < s.ncells; i++) /* 3 runs a cell or fewer: too few to tell one distribution */
        ASSERT_MSG(s.cells[i].modes.verdict == HX_MODES_TOO_FEW || (s.cells[i].n_ok == 0 && !s.cells[i].modes.verdict),
                   "cell %zu: modes %s", i, hx_modes_name(s.cells[i].modes.verdict));
    /* fib serial P=1: times 1.00 1.02 0.98 -> median 1, sd 0.02; MRSS 2004 2000 2008 -> median
     * 2004, sd 4, se 4/sqrt(3) = 2.3094011; calibrate 1000 1004 1000 -> median 1000, mean
     * 1001.333, sd sqrt(32/3/2) = 2.3094011, se 1.3333333; mem 1004, se sqrt(16/3 + 16/9) =
     * 2.6666667; speedup exactly 1 */
    const hx_cell *c = cell(&s, "fib", "serial", 1);
    ASSERT(c->n_ok == 3 && c->n_failed == 0 && !c->oversubscribed && !strcmp(c->kernel, "fib"));
    NEAR_REL(c->time_median, 1.0, 1e-9);
    NEAR_REL(c->time_mean, 1.0, 1e-9);
    NEAR_REL(c->time_sd, 0.02, 1e-7);
    NEAR_REL(c->time_se, 0.02 / sqrt(3), 1e-7);
    NEAR_REL(c->time_min, 0.98, 1e-9);
    NEAR_REL(c->time_max, 1.02, 1e-9);
    NEAR_REL(c->mrss_median, 2004, 1e-9);
    NEAR_REL(c->mrss_se, 4 / sqrt(3), 1e-7);
    NEAR_REL(c->calib_median, 1000, 1e-9);
    NEAR_REL(c->calib_se, 4.0 / 3, 1e-7);
    NEAR_REL(c->mem, 1004, 1e-9);
    NEAR_REL(c->mem_se, 8.0 / 3, 1e-7);
    ASSERT(c->speedup == 1 && c->speedup_se == 0 && c->efficiency == 1);
    /* cont-seg-busy P=2: 0.56 ± 0.01/sqrt(3); speedup 1/0.56 = 1.7857143 ± 0.0276426 (see
     * error_propagation), efficiency half of that; calibrate 1200, MRSS 1380 -> mem 180 */
    c = cell(&s, "fib", "cont-seg-busy", 2);
    NEAR_REL(c->time_median, 0.56, 1e-9);
    NEAR_REL(c->time_se, 0.01 / sqrt(3), 1e-7);
    NEAR_REL(c->speedup, 1 / 0.56, 1e-9);
    NEAR_REL(c->speedup_se, 0.027642594, 1e-6);
    NEAR_REL(c->efficiency, 0.5 / 0.56, 1e-9);
    NEAR_REL(c->efficiency_se, 0.027642594 / 2, 1e-6);
    NEAR_REL(c->calib_median, 1200, 1e-9);
    NEAR_REL(c->mem, 180, 1e-9);
    /* CPU time 2 x the times: 1.12, 1.10, 1.14 -> median 1.12, se 0.02/sqrt(3) */
    NEAR_REL(c->cpu_median, 1.12, 1e-9);
    NEAR_REL(c->cpu_se, 0.02 / sqrt(3), 1e-6);
    /* omp P=8: two runs ok (0.50, 0.52) and a timeout: median 0.51, sd 0.0141421, se 0.01;
     * MRSS 2596, 2604 -> median 2600, se 4; calibrate 1400 (se 4/3): mem 1200 ± sqrt(16 + 16/9)
     * = 4.2163702; oversubscribed (8 > 4 cores) */
    c = cell(&s, "fib", "omp", 8);
    ASSERT(c->n_ok == 2 && c->n_failed == 1 && c->oversubscribed && !strcmp(c->failures, "timeout:1"));
    NEAR_REL(c->time_median, 0.51, 1e-9);
    NEAR_REL(c->time_sd, sqrt(2) * 0.01, 1e-7);
    NEAR_REL(c->time_se, 0.01, 1e-7);
    NEAR_REL(c->mrss_median, 2600, 1e-9);
    NEAR_REL(c->mrss_se, 4, 1e-7);
    NEAR_REL(c->mem, 1200, 1e-9);
    NEAR_REL(c->mem_se, sqrt(16 + 16.0 / 9), 1e-7);
    NEAR_REL(c->speedup, 1 / 0.51, 1e-9);
    /* T1: no serial cell: speedup and efficiency empty; P=4 times all 0.06: sd 0 */
    c = cell(&s, "T1", "cont-seg-busy", 4);
    ASSERT(isnan(c->speedup) && isnan(c->speedup_se) && isnan(c->efficiency) && isnan(c->efficiency_se));
    ASSERT(c->time_sd == 0 && c->time_se == 0);
    NEAR_REL(c->mem, 80, 1e-9);
    ASSERT(isnan(c->cpu_median) && isnan(c->cpu_se)); /* records without cpu_s */
    /* the order: benchmarks and variants as they first appear, workers ascending */
    ASSERT(!strcmp(s.cells[0].variant, "serial") && !strcmp(s.cells[1].variant, "cont-seg-busy") &&
           s.cells[1].workers == 1 && s.cells[4].workers == 8 && !strcmp(s.cells[9].benchmark, "T1"));
    hx_summary_free(&s);

    /* the warnings went to stderr with their line numbers */
    snprintf(path, sizeof path, "%s/fit.err", dir);
    text = slurp(path);
    ASSERT_STR_CONTAINS(text, "raw.jsonl line 21: missing or bad field \"workers\"");
    ASSERT_STR_CONTAINS(text, "raw.jsonl line 65: truncated last line");
    free(text);
    remove_tmpdir();
}

TEST(fixture_fits_and_report) {
    const char *dir = fresh_dir(1);
    ASSERT_EQ(run_fit(dir), HX_OK);
    char path[PATH_MAX], err[256];
    snprintf(path, sizeof path, "%s/fits.csv", dir);
    hx_fit *fits;
    size_t n;
    ASSERT_EQ(hx_fits_read(path, &fits, &n, err, sizeof err), 0);
    ASSERT_EQ(n, 4); /* fib: serial, cont-seg-busy, omp; T1: cont-seg-busy */
    ASSERT(!strcmp(fits[0].variant, "serial") && !fits[0].ok && fits[0].points == 1);
    ASSERT_STR_CONTAINS(fits[0].note, "1 point, need 4");
    /* cont-seg-busy: mem 100, 180, 330, 600 at P = 1, 2, 4, 8: n = log2(600/330)... about 0.87 */
    ASSERT(!strcmp(fits[1].variant, "cont-seg-busy") && fits[1].ok && fits[1].points == 4);
    ASSERT_NEAR(fits[1].m1, 100, 1e-9);
    ASSERT(fits[1].n > 0.8 && fits[1].n < 0.95 && fits[1].n_se > 0);
    ASSERT(!strcmp(fits[2].variant, "omp") && fits[2].ok);
    ASSERT(fits[2].n > 0.9 && fits[2].n < 1.1);
    ASSERT(!strcmp(fits[3].benchmark, "T1") && !fits[3].ok && fits[3].points == 3);
    ASSERT_STR_CONTAINS(fits[3].note, "3 points, need 4");
    /* forkscope fit prints Table II: a column per variant with a fit, a row per benchmark */
    snprintf(path, sizeof path, "%s/fit.out", dir);
    char *out = slurp(path);
    ASSERT(out);
    ASSERT_STR_CONTAINS(out, "Table II: fitted exponents n");
    ASSERT_STR_CONTAINS(out, "benchmark  cont-seg-busy          omp\n");
    char row[160], nb[64], no[64];
    hx_report_exponent(nb, sizeof nb, fits[1].n, fits[1].n_se);
    hx_report_exponent(no, sizeof no, fits[2].n, fits[2].n_se);
    ASSERT(strlen(nb) == 11 + 1 && strlen(no) == 11 + 1); /* "0.87 ± 0.03": '±' is 2 bytes */
    snprintf(row, sizeof row, "fib          %s  %s\n", nb, no);
    ASSERT_STR_CONTAINS(out, row);
    ASSERT_STR_CONTAINS(out, "T1                     –            –\n");
    free(out);
    hx_fit_free_all(fits, n);

    snprintf(path, sizeof path, "%s/report.md", dir);
    char *md = slurp(path);
    ASSERT(md);
    ASSERT_STR_CONTAINS(md, "# forkscope results: small");
    ASSERT_STR_CONTAINS(md, "2025-01-15T10:00:00Z");
    ASSERT_STR_CONTAINS(md, "Intel(R) Xeon(R) Fixture CPU @ 2.00GHz, 4 online cores");
    ASSERT_STR_CONTAINS(md, "1 package, 1 NUMA node, 4 cores, 4 PUs");
    ASSERT_STR_CONTAINS(md, "gcc (Debian 12.2.0-14) 12.2.0");
    ASSERT_STR_CONTAINS(md, "0123456789abcdef0123456789abcdef01234567");
    ASSERT_STR_CONTAINS(md, "### fib (kernel fib; n=30)");
    ASSERT_STR_CONTAINS(md, "| cont-seg-busy | 2 | 3 | 0.5600 ± 0.0058 | 1.120 ± 0.012 | 1.786 ± 0.028 | 0.893 ± 0.014 | 180.0 ± 2.7 |");
    ASSERT_STR_CONTAINS(md, "| cont-seg-busy | 4 | 3 | 0.06 | – |"); /* T1: no cpu_s recorded */
    ASSERT_STR_CONTAINS(md, "| omp | 8 † | 2 |");
    ASSERT_STR_CONTAINS(md, "† oversubscribed");
    ASSERT_STR_CONTAINS(md, "No successful serial run");
    ASSERT_STR_CONTAINS(md, "Table II");
    ASSERT_STR_CONTAINS(md, "| benchmark | cont-seg-busy | omp |");
    ASSERT_STR_CONTAINS(md, "| fib \\| omp \\| 8 | timeout | 1 | `worker 3: waiting for work` |");
    ASSERT_STR_CONTAINS(md, "line 65: truncated last line");
    free(md);
    remove_tmpdir();
}

TEST(no_calibrate_runs) {
    const char *dir = fresh_dir(0);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/raw.jsonl", dir);
    /* hand-written: serial and one variant at P = 1, 2, no calibrate runs, one run each */
    write_file(path,
               "{\"schema\":1,\"run_id\":\"b|serial|1#0\",\"benchmark\":\"b\",\"kernel\":\"fib\",\"variant\":\"serial\","
               "\"workers\":1,\"kind\":\"timed\",\"status\":\"ok\",\"time_s\":2.0,\"maxrss_kib\":1500}\n"
               "{\"schema\":1,\"run_id\":\"b|v|1#0\",\"benchmark\":\"b\",\"kernel\":\"fib\",\"variant\":\"v\","
               "\"workers\":1,\"kind\":\"timed\",\"status\":\"ok\",\"time_s\":2.5,\"maxrss_kib\":1600}\n"
               "{\"schema\":1,\"run_id\":\"b|v|2#0\",\"benchmark\":\"b\",\"kernel\":\"fib\",\"variant\":\"v\","
               "\"workers\":2,\"kind\":\"timed\",\"status\":\"crash\",\"signal\":\"SIGSEGV\",\"time_s\":null,"
               "\"maxrss_kib\":1700,\"stderr_tail\":\"boom\\nSegmentation fault\\n\"}\n");
    ASSERT_EQ(run_fit(dir), HX_OK);
    hx_summary s;
    char err[256];
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    ASSERT_EQ(hx_summary_read(path, &s, err, sizeof err), 0);
    ASSERT_EQ(s.ncells, 3);
    const hx_cell *c = cell(&s, "b", "v", 1);
    NEAR_REL(c->mem, 1600, 1e-12); /* = MRSS, nothing subtracted */
    ASSERT(isnan(c->calib_median) && isnan(c->mem_se) && isnan(c->time_se) && isnan(c->speedup_se));
    NEAR_REL(c->speedup, 0.8, 1e-12);
    c = cell(&s, "b", "v", 2); /* only a crash: a row of empty fields */
    ASSERT(c->n_ok == 0 && c->n_failed == 1 && !strcmp(c->failures, "crash:1"));
    ASSERT(isnan(c->time_median) && isnan(c->mem) && isnan(c->speedup));
    hx_summary_free(&s);
    snprintf(path, sizeof path, "%s/report.md", dir);
    char *md = slurp(path);
    ASSERT_STR_CONTAINS(md, "no calibrate runs");
    ASSERT_STR_CONTAINS(md, "env.json is missing");
    ASSERT_STR_CONTAINS(md, "`Segmentation fault`");
    free(md);
    snprintf(path, sizeof path, "%s/fit.out", dir);
    md = slurp(path);
    ASSERT_STR_CONTAINS(md, "no calibrate runs");
    free(md);
    remove_tmpdir();
}

TEST(fit_command_errors) {
    const char *dir = fresh_dir(0);
    ASSERT_EQ(run_fit(dir), HX_EIO); /* no raw.jsonl */
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/fit.err", dir);
    char *e = slurp(path);
    ASSERT_STR_CONTAINS(e, "raw.jsonl: No such file or directory");
    free(e);
    fflush(NULL);
    int so = dup(1), se = dup(2);
    ASSERT(freopen("/dev/null", "w", stdout) && freopen("/dev/null", "w", stderr));
    char fit[] = "fit", x[] = "a", y[] = "b", bogus[] = "--bogus", help[] = "--help";
    char *a1[] = {fit, NULL};
    char *a2[] = {fit, x, y, NULL};
    char *a3[] = {fit, bogus, NULL};
    char *a4[] = {fit, help, NULL};
    int r1 = hx_cmd_fit(1, a1), r2 = hx_cmd_fit(3, a2), r3 = hx_cmd_fit(2, a3), r4 = hx_cmd_fit(2, a4);
    fflush(NULL);
    dup2(so, 1);
    dup2(se, 2);
    ASSERT_EQ(r1, HX_EUSAGE);
    ASSERT_EQ(r2, HX_EUSAGE);
    ASSERT_EQ(r3, HX_EUSAGE);
    ASSERT_EQ(r4, HX_OK);
    remove_tmpdir();
}

TEST(csv_round_trip_quotes) {
    const char *dir = fresh_dir(0);
    char path[PATH_MAX], err[256];
    snprintf(path, sizeof path, "%s/fits.csv", dir);
    hx_fit f[1];
    memset(f, 0, sizeof f);
    char bench[] = "uts, \"big\"", var[] = "v";
    f[0].benchmark = bench;
    f[0].variant = var;
    f[0].ok = 1;
    f[0].points = 5;
    f[0].m1 = 100;
    f[0].a = -1.5;
    f[0].a_se = NAN;
    f[0].b = 0.25;
    f[0].b_se = 0.01;
    f[0].n = 0.875;
    f[0].n_se = 0.0125;
    f[0].chi2_dof = 1.5;
    snprintf(f[0].note, sizeof f[0].note, "a note, with commas; and \"quotes\"");
    ASSERT_EQ(hx_fits_write(path, f, 1), 0);
    hx_fit *back;
    size_t n;
    ASSERT_EQ(hx_fits_read(path, &back, &n, err, sizeof err), 0);
    ASSERT_EQ(n, 1);
    ASSERT(!strcmp(back[0].benchmark, "uts, \"big\"") && !strcmp(back[0].note, f[0].note));
    ASSERT(back[0].ok && back[0].points == 5 && back[0].a == -1.5 && isnan(back[0].a_se) && back[0].n == 0.875);
    hx_fit_free_all(back, n);
    /* a file that is not a fits.csv is refused with a reason */
    write_file(path, "x,y\n1,2\n");
    ASSERT_EQ(hx_fits_read(path, &back, &n, err, sizeof err), -EINVAL);
    ASSERT_STR_CONTAINS(err, "not a fits.csv");
    remove_tmpdir();
}

int main(int argc, char **argv) {
    return test_main(argc, argv,
                     (struct test_case[]){
                         TEST_CASE(describe_small_samples, 10),
                         TEST_CASE(error_propagation, 10),
                         TEST_CASE(fit_exact_data, 10),
                         TEST_CASE(fit_recovers_known_parameters, 20),
                         TEST_CASE(fit_errors_are_calibrated, 30),
                         TEST_CASE(fit_large_scale_and_offset, 10),
                         TEST_CASE(fit_skips_what_it_cannot_fit, 10),
                         TEST_CASE(fit_log_growth_goes_to_the_bound, 10),
                         TEST_CASE(fit_jump_is_not_a_fit, 10),
                         TEST_CASE(fit_bounds_and_se_floor, 10),
                         TEST_CASE(fixture_load_and_warnings, 10),
                         TEST_CASE(fixture_summary_values, 10),
                         TEST_CASE(fixture_fits_and_report, 10),
                         TEST_CASE(no_calibrate_runs, 10),
                         TEST_CASE(fit_command_errors, 10),
                         TEST_CASE(csv_round_trip_quotes, 10),
                         {0},
                     });
}
