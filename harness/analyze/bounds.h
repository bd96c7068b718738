/* bounds.h — the speedup bounds that a row of DIR/span.csv gives report.md and the plots. */
#ifndef HX_ANALYZE_BOUNDS_H
#define HX_ANALYZE_BOUNDS_H

#include "harness/results/spancsv.h"

/* The work-span bound on the speedup at P workers, min(P, bound_parallelism), and the
 * burdened estimate min_work / (min_work / P + burdened span) (NAN unless the row is ok and
 * resolved). */
double hx_bounds_speedup(const hx_spancsv_row *r, double P);
double hx_bounds_burdened(const hx_spancsv_row *r, double P);

#endif
