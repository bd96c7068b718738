/* fit.h — the memory power law of the paper's Eq. 17, mem(P) ~ a + b * M1 * P^n.
 *
 * Method (as the libfork paper, Williams & Elliott, arXiv:2402.18480, fits its Fig. 7):
 *  - weighted nonlinear least squares with GSL's gsl_multifit_nlinear (Levenberg-Marquardt,
 *    Moré scaling), weights 1/se^2 where se is the calibrated memory's standard error (the
 *    calibrate error already added in quadrature); an se that is missing or below
 *    HX_FIT_SE_FLOOR_KIB is raised to it (MRSS is quantised to 4 KiB pages: a smaller error
 *    only says the repetitions agreed to the page), and the note says how many;
 *  - start (a, b, n) = (1, 1, 1), with a in units of M1 (we fit mem/M1 so that the three
 *    parameters are of order one; a is reported in KiB);
 *  - bounds b >= 0, n >= 0 by clamping and refitting at the bound.  The constrained optimum is
 *    also found independently from its profile over n (for a fixed n the model is linear in a
 *    and b: their best values are closed-form; a grid over n in [0, 4] and a golden-section
 *    search do the rest).  If GSL from (1,1,1) fails, leaves the bounds or stops at a worse
 *    point than the profile's, it is rerun from the profile's optimum (the note says so).  If
 *    that optimum is on the bound, the model there is the constant mem = c (b = 0 makes n
 *    irrelevant, n = 0 makes a and b one constant), c the weighted mean.  We report it as
 *    n = 0, with a = 0 and b = c/M1 (at n = 0 a and b cannot be told apart; this puts it all
 *    in b), and the errors of c and n from the two-parameter model c * P^n at n = 0, which say
 *    how fast memory could grow unseen (the paper's "0.00 ± 0.03" entries are of this kind).
 *    An optimum with n below HX_FIT_N_LIMIT is taken to that bound too: there the model
 *    tends to (a + b) + b·n·ln P with b -> infinity and a -> -infinity (memory that grows
 *    like log P, or not at all), and a and b on their own are meaningless (we saw a = -1e8
 *    KiB); the note says so.
 *    Clamping rather than reparametrising (b = u^2, n = v^2) because the delta method gives
 *    zero errors at the bound (d(v^2)/dv = 0 there), which would claim n = 0 exactly;
 *  - errors: square roots of the covariance diagonal (J^T W J)^-1, scaled by chi2/dof
 *    (dof = points - 3 > 0 always, since a fit needs points >= 4), as scipy's curve_fit does
 *    by default (absolute_sigma=False) — the paper's errors are of that kind;
 *  - a best n at HX_FIT_N_TOP, the top of the profile's search, means the points jump rather
 *    than follow a power law (one high point among flat ones): the fit is "skipped" with
 *    that note, its numbers kept in fits.csv but neither reported in Table II nor drawn;
 *  - a fit needs 4 points (parameters + 1), a P = 1 point for M1, and M1 > 0; otherwise it is
 *    skipped with the reason in note. */
#ifndef HX_FIT_H
#define HX_FIT_H

#include <stddef.h>

#include "harness/analyze/stats.h"
#include "harness/results/summary.h" /* (hx_fit) */

#define HX_FIT_SE_FLOOR_KIB 4.0
#define HX_FIT_MIN_POINTS 4
#define HX_FIT_N_LIMIT 1e-3 /* n below this is reported at the bound n = 0 */
#define HX_FIT_N_TOP 4.0    /* the largest n searched; a best n there is no fit (skipped) */


/* Fits mem[i] ~ a + b*m1*P[i]^n over the m points (P[i] >= 1, mem[i] and se[i] in KiB;
 * se[i] may be NaN: floored as above).  Fills *out (its names are left alone) and returns
 * out->ok: 1 if fitted, 0 if skipped or not reportable (out->note says why: too few points,
 * no M1, n at the search limit).  Never fails otherwise.  A GSL failure from (1,1,1) is not a skip: the profile's optimum is used and the
 * note gives GSL's reason. */
int hx_fit_power_law(const double *P, const double *mem, const double *se, size_t m, double m1,
                     hx_fit *out);

/* One fit per (benchmark, variant) of s, in the order of s's cells, over the cells with a
 * memory value; M1 = the variant's own mem at P = 1.  A kernel whose memory is its input
 * (its description says so: matmul) is fitted and its note says so.  *out is malloc'd; free
 * with hx_fit_free_all. */
size_t hx_fit_all(const hx_summary *s, hx_fit **out);

#endif
