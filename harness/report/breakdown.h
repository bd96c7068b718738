/* breakdown.h — where the workers' time went (the config's "breakdown"; summary.csv's work_s
 * ... sleep_s, inflation_ts, inflation_t1): report.md's section and the figure's data. */
#ifndef HX_REPORT_BREAKDOWN_H
#define HX_REPORT_BREAKDOWN_H

#include <stdio.h>

#include "harness/analyze/stats.h"

/* 1 if some cell (of benchmark bench; NULL: any) has a breakdown. */
int hx_breakdown_has(const hx_summary *s, const char *bench);

/* report.md's "Where the time goes" (nothing if no cell has a breakdown). */
void hx_breakdown_write_md(FILE *f, const hx_summary *s);

/* plots/breakdown.dat and breakdown-settings.gp, for plots/breakdown.gp (a stacked bar per
 * cell, a panel per benchmark).  The number of panels (0: no breakdown, no figure), or -1 if a
 * file cannot be written. */
int hx_breakdown_write_plot(const char *pdir, const hx_summary *s);

#endif
