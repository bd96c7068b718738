/* commands.c — the commands whose work is a stage's function: their options and usage. */
#include "harness/cli/commands.h"
#include "harness/util/cli.h"
#include "harness/report/analysis.h"
#include "harness/util/errors.h"

#include <stdio.h>
#include <sys/stat.h>

#include "harness/report/timeline.h"

static void fit_usage(FILE *f) {
    fputs("usage: forkscope fit DIR\n"
          "Reads DIR/raw.jsonl (and DIR/env.json, DIR/config.json, DIR/span.csv if present) and writes\n"
          "DIR/summary.csv (one row per cell), DIR/fits.csv (the memory power law, Eq. 17)\n"
          "and DIR/report.md.  Lines of raw.jsonl that cannot be used are skipped with a warning.\n"
          "Exit status: 0 success, 1 bad command line, 3 a file could not be read or written.\n",
          f);
}

/* A command whose one argument is a results directory: parses, then runs fn on it. */
static int dir_command(const char *cmd, void (*usage)(FILE *), int (*fn)(const char *), int argc, char **argv) {
    const char *dir = NULL;
    int rc = hx_cli_one(cmd, usage, "results directory", argc, argv, &dir);
    return rc == HX_CLI_HELP ? HX_OK : rc ? rc : fn(dir);
}

int hx_cmd_fit(int argc, char **argv) { return dir_command("fit", fit_usage, hx_report_fit_dir, argc, argv); }

static void plot_usage(FILE *f) {
    fputs("usage: forkscope plot DIR | forkscope plot TRACE.json\n"
          "Draws the figures of results directory DIR from DIR/summary.csv and DIR/fits.csv (run\n"
          "`forkscope fit DIR` first) with gnuplot, into DIR/plots/: speedup, efficiency, memory and\n"
          "overhead as PNG and PDF (or SVG), with the data files and the gnuplot scripts used, so that a\n"
          "figure can be edited and redrawn by hand: gnuplot DIR/plots/speedup.gp\n"
          "With a trace (forkscope trace -o TRACE.json) instead: its timeline, one row per worker coloured\n"
          "by what it did, each steal a line from victim to thief, into TRACE-timeline/timeline.png and .pdf.\n"
          "Exit status: 0 success, 1 bad command line, 3 a file could not be read or written,\n"
          "6 gnuplot (or its scripts) missing (the data files are still written), 7 gnuplot failed.\n",
          f);
}

/* plot DIR, or plot TRACE.json (a file): the timeline of a trace. */
static int plot_one(const char *arg) {
    struct stat st;
    if (!stat(arg, &st) && S_ISREG(st.st_mode))
        return hx_timeline_plot(arg);
    return hx_plot_dir(arg);
}

int hx_cmd_plot(int argc, char **argv) { return dir_command("plot", plot_usage, plot_one, argc, argv); }
