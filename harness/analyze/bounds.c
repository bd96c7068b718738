/* bounds.c — the speedup bounds a row of span.csv gives (bounds.h). */
#include "harness/analyze/bounds.h"

#include <math.h>
#include <string.h>

double hx_bounds_speedup(const hx_spancsv_row *r, double P) {
    if (strcmp(r->status, "ok") || !(r->bound_parallelism > 0))
        return NAN;
    return r->bound_parallelism < P ? r->bound_parallelism : P;
}

double hx_bounds_burdened(const hx_spancsv_row *r, double P) {
    if (strcmp(r->status, "ok") || !r->resolved || !(r->min_work_s > 0) || !isfinite(r->burdened_span_s))
        return NAN;
    double e = r->min_work_s / (r->min_work_s / P + r->burdened_span_s);
    return e < P ? e : P;
}

/* The bound limits a variant's self-speedup T1/T_P (its own time at P = 1): that is what a
 * cell must not beat by more than the noise, three standard errors (of the two times,
 * propagated) and 5% of the bound.  *self gets the self-speedup (NAN without a P = 1 cell). */
