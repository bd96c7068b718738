/* fit.c — Eq. 17 by weighted nonlinear least squares (GSL); the method is in fit.h.
 *
 * Inside, the data are divided by M1: y_i = mem_i/M1 ~ a' + b*P_i^n with a' = a/M1, so that
 * all three parameters are of order one (a raw a in KiB may be 10^6 while n ~ 1) and the
 * start (1, 1, 1) is sensible whatever the memory scale.  chi2 is the same in both units. */
#include "harness/analyze/fit.h"
#include "harness/util/util.h"
#include "harness/config/kernels.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_ITER = 500 };

typedef struct fit_data {
    size_t m;
    const double *P, *y; /* y scaled by 1/M1 */
} fit_data;

/* ---- the model and its Jacobian (unweighted; GSL applies sqrt(w)) ------------------------- */

static int model_f(const gsl_vector *x, void *params, gsl_vector *f) {
    const fit_data *d = params;
    double a = gsl_vector_get(x, 0), b = gsl_vector_get(x, 1), n = gsl_vector_get(x, 2);
    for (size_t i = 0; i < d->m; i++) {
        double r = a + b * pow(d->P[i], n) - d->y[i];
        if (!isfinite(r))
            return GSL_EDOM; /* P^n overflowed on a wild step: stop, the caller retries */
        gsl_vector_set(f, i, r);
    }
    return GSL_SUCCESS;
}

static int model_df(const gsl_vector *x, void *params, gsl_matrix *J) {
    const fit_data *d = params;
    double b = gsl_vector_get(x, 1), n = gsl_vector_get(x, 2);
    for (size_t i = 0; i < d->m; i++) {
        double pn = pow(d->P[i], n);
        gsl_matrix_set(J, i, 0, 1.0);
        gsl_matrix_set(J, i, 1, pn);
        gsl_matrix_set(J, i, 2, b * pn * log(d->P[i]));
        if (!isfinite(pn) || !isfinite(b * pn * log(d->P[i])))
            return GSL_EDOM;
    }
    return GSL_SUCCESS;
}

static void note_add(hx_fit *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_add(hx_fit *out, const char *fmt, ...) {
    size_t len = strlen(out->note);
    if (len && len + 2 < sizeof out->note) {
        strcpy(out->note + len, "; ");
        len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->note + len, sizeof out->note - len, fmt, ap);
    va_end(ap);
}

static double chi2_of(const fit_data *d, const double *w, double a, double b, double n) {
    double c2 = 0;
    for (size_t i = 0; i < d->m; i++) {
        double r = a + b * pow(d->P[i], n) - d->y[i];
        c2 += w[i] * r * r;
    }
    return c2;
}

/* Weighted linear least squares of y ~ a + b*x with x_i = P_i^n: the best (a, b) for a fixed
 * n, for a fallback start.  Returns chi2 (inf if degenerate). */
static double linear_ab(const fit_data *d, const double *w, double n, double *a, double *b) {
    double S = 0, Sx = 0, Sy = 0, Sxx = 0, Sxy = 0;
    for (size_t i = 0; i < d->m; i++) {
        double x = pow(d->P[i], n);
        S += w[i];
        Sx += w[i] * x;
        Sy += w[i] * d->y[i];
        Sxx += w[i] * x * x;
        Sxy += w[i] * x * d->y[i];
    }
    double det = S * Sxx - Sx * Sx;
    if (!(fabs(det) > 1e-300))
        return INFINITY;
    *b = (S * Sxy - Sx * Sy) / det;
    *a = (Sy - *b * Sx) / S;
    return chi2_of(d, w, *a, *b, n);
}

/* One GSL solve from x0.  Returns the GSL status; on success x, the covariance (unscaled)
 * and chi2 are filled. */
static int solve(const fit_data *d, const double *w, const double x0[3], double x[3], double cov[3][3],
                 double *chi2, int *iters) {
    gsl_multifit_nlinear_fdf fdf = {.f = model_f, .df = model_df, .fvv = NULL, .n = d->m, .p = 3,
                                    .params = (void *)d};
    gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
    par.trs = gsl_multifit_nlinear_trs_lm;
    par.scale = gsl_multifit_nlinear_scale_more;
    gsl_multifit_nlinear_workspace *ws = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, d->m, 3);
    if (!ws)
        return GSL_ENOMEM;
    double xs[3] = {x0[0], x0[1], x0[2]};
    gsl_vector_view xv = gsl_vector_view_array(xs, 3);
    gsl_vector_const_view wv = gsl_vector_const_view_array(w, d->m);
    int status = gsl_multifit_nlinear_winit(&xv.vector, &wv.vector, &fdf, ws);
    int info = 0;
    if (status == GSL_SUCCESS)
        status = gsl_multifit_nlinear_driver(MAX_ITER, 1e-12, 1e-12, 0.0, NULL, NULL, &info, ws);
    /* ENOPROG: no step could reduce the cost further.  On exact or nearly exact data this
     * happens at the optimum itself; accept it if the gradient there is negligible. */
    const gsl_vector *pos = gsl_multifit_nlinear_position(ws);
    const gsl_vector *res = gsl_multifit_nlinear_residual(ws);
    gsl_matrix *J = gsl_multifit_nlinear_jac(ws);
    if (status == GSL_ENOPROG) {
        double g[3] = {0, 0, 0}, norm_g = 0, fnorm = gsl_blas_dnrm2(res);
        for (size_t j = 0; j < 3; j++) {
            for (size_t i = 0; i < d->m; i++)
                g[j] += gsl_matrix_get(J, i, j) * gsl_vector_get(res, i);
            norm_g += g[j] * g[j];
        }
        if (sqrt(norm_g) <= 1e-6 * (1 + fnorm * fnorm))
            status = GSL_SUCCESS;
    }
    if (status == GSL_SUCCESS) {
        for (int j = 0; j < 3; j++)
            x[j] = gsl_vector_get(pos, (size_t)j);
        double r2;
        gsl_blas_ddot(res, res, &r2);
        *chi2 = r2;
        gsl_matrix *C = gsl_matrix_alloc(3, 3);
        gsl_multifit_nlinear_covar(J, 1e-14, C);
        for (size_t i = 0; i < 3; i++)
            for (size_t j = 0; j < 3; j++)
                cov[i][j] = gsl_matrix_get(C, i, j);
        gsl_matrix_free(C);
        *iters = (int)gsl_multifit_nlinear_niter(ws);
        for (int j = 0; j < 3; j++)
            if (!isfinite(x[j]))
                status = GSL_EDOM;
    }
    gsl_multifit_nlinear_free(ws);
    return status;
}

static double se_of(double v) { return v > 0 && isfinite(v) ? sqrt(v) : NAN; }

/* The best (a, b >= 0) for a fixed n >= 0 and its chi2: weighted linear least squares, or the
 * weighted mean (b = 0) where that b would be negative or n = 0 makes a and b one constant. */
static double profile_at(const fit_data *d, const double *w, double n, double *a, double *b) {
    double c2 = n > 0 ? linear_ab(d, w, n, a, b) : INFINITY;
    if (!(c2 < INFINITY) || *b < 0) {
        double S = 0, Sy = 0;
        for (size_t i = 0; i < d->m; i++) {
            S += w[i];
            Sy += w[i] * d->y[i];
        }
        *a = Sy / S;
        *b = 0;
        c2 = chi2_of(d, w, *a, 0, 0);
    }
    return c2;
}

/* The constrained optimum (b >= 0, n >= 0) by its profile over n: the model is linear in a and
 * b, so for each n their best values are closed-form and only a one-dimensional search is left:
 * a grid over [0, 4] (memory exponents beyond that are not plausible), then golden-section
 * refinement around the best grid point.  Ties go to the smallest n.  Returns chi2. */
static double profile_min(const fit_data *d, const double *w, double *a, double *b, double *n) {
    enum { GRID = 80 };
    const double top = HX_FIT_N_TOP;
    double best = INFINITY, bn = 0;
    for (int k = 0; k <= GRID; k++) {
        double t = top * k / GRID, ta, tb, c2 = profile_at(d, w, t, &ta, &tb);
        if (c2 < best * (1 - 1e-12)) {
            best = c2;
            bn = t;
        }
    }
    double lo = fmax(0, bn - top / GRID), hi = fmin(top, bn + top / GRID), g = (sqrt(5.0) - 1) / 2;
    double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo), ta, tb;
    double f1 = profile_at(d, w, x1, &ta, &tb), f2 = profile_at(d, w, x2, &ta, &tb);
    for (int it = 0; it < 100 && hi - lo > 1e-9; it++) {
        if (f1 <= f2) {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - g * (hi - lo);
            f1 = profile_at(d, w, x1, &ta, &tb);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + g * (hi - lo);
            f2 = profile_at(d, w, x2, &ta, &tb);
        }
    }
    double mid = 0.5 * (lo + hi), fm = profile_at(d, w, mid, &ta, &tb);
    if (fm < best) {
        best = fm;
        bn = mid;
    }
    *n = bn;
    profile_at(d, w, bn, a, b);
    return best;
}

/* The unscaled covariance (J^T W J)^-1 of (a', b, n) at x, for a point GSL did not converge to. */
static void covariance_at(const fit_data *d, const double *w, const double x[3], double cov[3][3]) {
    gsl_matrix *J = gsl_matrix_alloc(d->m, 3), *C = gsl_matrix_alloc(3, 3);
    for (size_t i = 0; i < d->m; i++) {
        double pn = pow(d->P[i], x[2]), sw = sqrt(w[i]);
        gsl_matrix_set(J, i, 0, sw);
        gsl_matrix_set(J, i, 1, sw * pn);
        gsl_matrix_set(J, i, 2, sw * x[1] * pn * log(d->P[i]));
    }
    gsl_multifit_nlinear_covar(J, 1e-14, C);
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 3; j++)
            cov[i][j] = gsl_matrix_get(C, i, j);
    gsl_matrix_free(J);
    gsl_matrix_free(C);
}

/* The optimum of the bounded problem (b >= 0, n >= 0): GSL from (1,1,1), checked against
 * the profile over n (see profile_min), which also rescues it where GSL failed, left the
 * bounds or stopped in a worse local minimum.  Fills x, cov and chi2; returns 1 if the
 * answer is at the bound n = 0 (the caller refits a constant there), notes in out. */
static int optimum(const fit_data *d, const double *w, double x[3], double cov[3][3], double *chi2, hx_fit *out) {
    gsl_error_handler_t *old = gsl_set_error_handler_off(); /* the default aborts */
    int iters = 0;
    const double start[3] = {1, 1, 1};
    int status = solve(d, w, start, x, cov, chi2, &iters);
    int feasible = status == GSL_SUCCESS && x[1] >= 0 && x[2] >= 0;
    double pa, pb, pn, pchi2 = profile_min(d, w, &pa, &pb, &pn);
    int at_bound = 0;
    if (!feasible || pchi2 < *chi2 * (1 - 1e-6) - 1e-12) {
        const char *why = status != GSL_SUCCESS ? gsl_strerror(status)
                          : !feasible           ? "outside the bounds"
                                                : "a worse local minimum";
        if (pn >= HX_FIT_N_LIMIT && pb > 0) {
            double s2[3] = {pa, pb, pn}, x2[3], cov2[3][3], c2 = NAN;
            int st2 = solve(d, w, s2, x2, cov2, &c2, &iters);
            if (st2 == GSL_SUCCESS && x2[1] >= 0 && x2[2] >= 0 && c2 <= pchi2 * (1 + 1e-6) + 1e-12) {
                memcpy(x, x2, 3 * sizeof *x);
                memcpy(cov, cov2, sizeof cov2);
                *chi2 = c2;
            } else { /* keep the profile's point; errors from the Jacobian there */
                x[0] = pa;
                x[1] = pb;
                x[2] = pn;
                *chi2 = pchi2;
                covariance_at(d, w, x, cov);
            }
            note_add(out, "from (1,1,1) GSL gave %s; refitted from the best n >= 0 (n = %.3g)", why, pn);
        } else if (pn > 0 && pb > 0) {
            at_bound = 1;
            note_add(out, "from (1,1,1) GSL gave %s; the best n >= 0 is %.2g, the model's n -> 0 limit", why, pn);
        } else {
            at_bound = 1;
            if (status == GSL_SUCCESS)
                note_add(out, "unconstrained optimum b = %.3g, n = %.3g is outside b >= 0, n >= 0", x[1], x[2]);
            else
                note_add(out, "from (1,1,1) GSL gave %s", why);
        }
    }
    gsl_set_error_handler(old);
    if (!at_bound && x[2] < HX_FIT_N_LIMIT) {
        /* n -> 0 with b -> infinity and a -> -infinity: a + b P^n ~ (a + b) + b n ln P, growth
         * like log P with a and b meaningless on their own (seen: a = -1e8 KiB) */
        at_bound = 1;
        note_add(out, "the best n >= 0 is %.2g, the model's n -> 0 limit", x[2]);
    }
    return at_bound;
}

/* At the bound: with b = 0 or n = 0 the model is a constant c; the best c is the weighted
 * mean.  Errors of (c, n) from c*P^n at n = 0 (see fit.h). */
static void report_at_bound(const fit_data *d, const double *w, double dof, hx_fit *out) {
    double S = 0, Sy = 0;
    for (size_t i = 0; i < d->m; i++) {
        S += w[i];
        Sy += w[i] * d->y[i];
    }
    double c = Sy / S, c2 = chi2_of(d, w, c, 0, 0);
    /* J columns at n = 0: d/dc = 1, d/dn = c ln P */
    double A = 0, B = 0, C = 0;
    for (size_t i = 0; i < d->m; i++) {
        double l = c * log(d->P[i]);
        A += w[i];
        B += w[i] * l;
        C += w[i] * l * l;
    }
    double det = A * C - B * B, scale = c2 / dof;
    note_add(out, "refitted at the bound n = 0 (a constant: a and b are not separable there; reported a = 0, "
                  "b = mean/M1)");
    out->a = 0;
    out->a_se = NAN;
    out->b = c;
    out->n = 0;
    out->b_se = det > 0 ? se_of(C / det * scale) : NAN;
    out->n_se = det > 0 ? se_of(A / det * scale) : NAN;
    out->chi2_dof = scale;
}

/* Inside the bounds (or exactly on one): the unconstrained optimum is the answer; errors
 * from the covariance scaled by chi2/dof. */
static void report_interior(const double x[3], double cov[3][3], double chi2, double dof, double m1, hx_fit *out) {
    double scale = chi2 / dof;
    out->a = x[0] * m1;
    out->a_se = se_of(cov[0][0] * scale) * m1;
    out->b = x[1];
    out->b_se = se_of(cov[1][1] * scale);
    out->n = x[2];
    out->n_se = se_of(cov[2][2] * scale);
    out->chi2_dof = scale;
    if (isnan(out->a_se) || isnan(out->b_se) || isnan(out->n_se))
        note_add(out, "covariance singular: some errors undetermined");
    if (out->b == 0)
        note_add(out, "b = 0: n undetermined");
}

int hx_fit_power_law(const double *P, const double *mem, const double *se, size_t m, double m1, hx_fit *out) {
    out->ok = 0;
    out->points = (int)m;
    out->m1 = m1;
    out->a = out->a_se = out->b = out->b_se = out->n = out->n_se = out->chi2_dof = NAN;
    out->note[0] = 0;
    if (m < HX_FIT_MIN_POINTS) {
        note_add(out, "%zu point%s, need %d", m, m == 1 ? "" : "s", HX_FIT_MIN_POINTS);
        return 0;
    }
    if (!(m1 > 0) || !isfinite(m1)) {
        note_add(out, isnan(m1) ? "no P=1 cell (M1 undefined)" : "M1 = %g KiB (must be > 0)", m1);
        return 0;
    }
    /* y = mem/M1 with weights 1/(se/M1)^2, se floored */
    double *y = hx_xmalloc(m * sizeof *y), *w = hx_xmalloc(m * sizeof *w);
    int floored = 0;
    for (size_t i = 0; i < m; i++) {
        double s = se[i];
        if (!(s >= HX_FIT_SE_FLOOR_KIB)) { /* also NaN */
            s = HX_FIT_SE_FLOOR_KIB;
            floored++;
        }
        y[i] = mem[i] / m1;
        w[i] = (m1 / s) * (m1 / s);
    }
    if (floored)
        note_add(out, "se raised to %g KiB at %d of %zu points", HX_FIT_SE_FLOOR_KIB, floored, m);
    fit_data d = {.m = m, .P = P, .y = y};
    double dof = (double)m - 3.0, x[3] = {NAN, NAN, NAN}, cov[3][3], chi2 = NAN;
    int at_bound = optimum(&d, w, x, cov, &chi2, out);
    if (at_bound)
        report_at_bound(&d, w, dof, out);
    else
        report_interior(x, cov, chi2, dof, m1, out);
    out->ok = 1;
    if (!at_bound && out->n >= HX_FIT_N_TOP * (1 - 1e-6)) {
        /* the profile's edge: the points jump (one high point, usually) rather than follow a
         * power law; the numbers stay in fits.csv, but this is no fit to report or draw */
        out->ok = 0;
        note_add(out, "n at the search limit %g: the points jump rather than follow a power law (n undetermined)",
                 HX_FIT_N_TOP);
    }
    free(y);
    free(w);
    return out->ok;
}

/* ---- every (benchmark, variant) of a summary ---------------------------------------------- */

size_t hx_fit_all(const hx_summary *s, hx_fit **out) {
    size_t nf = 0;
    hx_fit *fits = NULL;
    double *P = malloc((s->ncells + 1) * sizeof *P), *mem = malloc((s->ncells + 1) * sizeof *mem),
           *se = malloc((s->ncells + 1) * sizeof *se);
    if (!P || !mem || !se) {
        fprintf(stderr, "forkscope: out of memory\n");
        abort();
    }
    for (size_t i = 0; i < s->ncells; i++) {
        const hx_cell *c = &s->cells[i];
        int seen = 0;
        for (size_t j = 0; j < nf && !seen; j++)
            seen = !strcmp(fits[j].benchmark, c->benchmark) && !strcmp(fits[j].variant, c->variant);
        if (seen)
            continue;
        size_t m = 0;
        double m1 = NAN;
        const char *kernel = c->kernel;
        for (size_t j = i; j < s->ncells; j++) {
            const hx_cell *e = &s->cells[j];
            if (strcmp(e->benchmark, c->benchmark) || strcmp(e->variant, c->variant) || isnan(e->mem))
                continue;
            P[m] = (double)e->workers;
            mem[m] = e->mem;
            se[m] = e->mem_se;
            m++;
            if (e->workers == 1)
                m1 = e->mem;
        }
        fits = realloc(fits, (nf + 1) * sizeof *fits);
        if (!fits) {
            fprintf(stderr, "forkscope: out of memory\n");
            abort();
        }
        hx_fit *f = &fits[nf++];
        memset(f, 0, sizeof *f);
        f->benchmark = hx_xstrdup(c->benchmark);
        f->variant = hx_xstrdup(c->variant);
        hx_fit_power_law(P, mem, se, m, m1, f);
        const hx_kernel_info *ki = kernel ? hx_kernels_find(kernel) : NULL;
        if (ki && ki->memory_is_input)
            note_add(f, "%s: %s", ki->name, ki->memory_is_input);
    }
    free(P);
    free(mem);
    free(se);
    *out = fits;
    return nf;
}

