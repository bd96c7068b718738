/* analysis.h — the analysis half of the harness: statistics, the memory fit, reports and
 * plots, computed from a results directory alone (DIR/raw.jsonl, DIR/env.json).  Each
 * returns 0 or a code of harness/util/errors.h; the commands' options are harness/cli/'s. */
#ifndef HX_ANALYSIS_H
#define HX_ANALYSIS_H

/* forkscope fit DIR: writes DIR/summary.csv, DIR/fits.csv, DIR/report.md. */
int hx_report_fit_dir(const char *dir);

/* forkscope plot DIR: writes DIR/plots/ (data files, the gnuplot scripts used, PNG and PDF
 * or SVG figures) and prints where everything went. */
int hx_plot_dir(const char *dir);

/* Analyses a results directory as `forkscope run` does at its end: fit, then plot (each
 * prints what it wrote; a failure is said on stderr, prefixed by who, with what to rerun;
 * the files already written are kept).  Returns fit's code; *plot_rc (if given) gets plot's
 * (0 if plot was not run). */
int hx_report_analyse_dir(const char *dir, const char *who, int *plot_rc);

/* Reads DIR as compare reads each side (raw.jsonl, config.json, env.json, the fits) and
 * forgets it: 0 or -errno (the fuzz target of the results readers). */
int hx_compare_read(const char *dir);

/* forkscope compare DIR --a V --b V | DIR_A DIR_B: writes compare.md, compare.csv and a
 * forest plot (see compare.c). */
int hx_cmd_compare(int argc, char **argv);

#endif
