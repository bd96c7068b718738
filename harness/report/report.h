/* report.h — report.md, and what `forkscope fit DIR` does (hx_report_fit_dir, declared in
 * analysis.h; the command, hx_cmd_fit, is in harness/cli/commands.c).  summary.csv and
 * fits.csv are written and read by harness/results/summary.h. */
#ifndef HX_REPORT_H
#define HX_REPORT_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "harness/analyze/fit.h"
#include "harness/analyze/stats.h"
#include "harness/results/summary.h"

/* "v ± se" for humans: se to 2 significant digits and v to the same decimal place (whole
 * numbers once se >= 10); v alone (4 significant digits) if se is NaN or 0; "–" if v is NaN.
 * Returns buf. */
const char *hx_report_pm(char *buf, size_t len, double v, double se);
/* A fitted exponent as the paper's Table II prints it: "0.86 ± 0.08". */
const char *hx_report_exponent(char *buf, size_t len, double n, double se);

/* The experiment's name: config's "name" if it is a non-empty string, else the last
 * component of dir.  Written into buf. */
void hx_report_experiment_name(const json_t *config, const char *dir, char *buf, size_t len);

/* What the paper says of libfork at 112 cores for a benchmark of kernel with params rendered
 * "k=v k=v" (hx_bench_info's), or NULL. */
const char *hx_report_paper_text(const char *kernel, const char *params);

/* Loads DIR/NAME as JSON; NULL if absent or invalid (then *why says which, if why). */
json_t *hx_report_load_json(const char *dir, const char *name, char *why, size_t whylen);

/* Writes report.md (see results.h) to path.  env and config may be NULL (the report says
 * they were missing).  Returns 0 or -errno. */
int hx_report_write_md(const char *path, const char *dir, const hx_summary *s, const hx_fit *fits, size_t nfits,
                       const json_t *env, const json_t *config);

#endif
