/* main.c — the forkscope command line: the table of commands (commands[] below: name, synopsis,
 * description, function), --help made from it, and the commands that are only a few lines
 * (run, bench, uts, variants, topology).  Options are parsed by harness/util/cli.h in every
 * command; the environment is harness/util/env.h's. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/util/cli.h"
#include "harness/cli/commands.h"
#include "harness/report/analysis.h"
#include "harness/util/env.h"
#include "harness/util/util.h"
#include "harness/config/config.h"
#include "harness/run/envinfo.h"
#include "harness/util/errors.h"
#include "harness/run/launch.h"
#include "harness/cluster/slurm.h"
#include "harness/run/span.h"
#include "harness/run/sweep.h"
#include "harness/config/variants.h"

#include <forkscope.h> /* forkscope topology: the runtime's view of a topology */

typedef struct command_entry {
    const char *name, *synopsis, *what;
    int (*fn)(int argc, char **argv);
} command_entry;

static int cmd_run(int argc, char **argv);
static int cmd_bench(int argc, char **argv);
static int cmd_uts(int argc, char **argv);
static int cmd_variants(int argc, char **argv);
static int cmd_kernels(int argc, char **argv);
static int cmd_topology(int argc, char **argv);

static const command_entry commands[] = {
    {"run", "run CONFIG [-o DIR] [--resume] [--dry-run [--effect PCT] [--cv PCT]]",
     "Run the sweep of an experiment file (configs/README.md) into DIR (default\n"
     "results/<name>): DIR/config.json, env.json, raw.jsonl; then `fit` and `plot` on DIR.\n"
     "--dry-run prints the plan (cells, runs, estimated time) and runs nothing, and for\n"
     "a paired or interleaved sweep how many rounds `compare` needs to detect a change\n"
     "of --effect PCT (default 5) at the noise of DIR's earlier runs, or --cv PCT\n"
     "(default 3) if there are none;\n"
     "--resume continues an interrupted sweep in DIR (same config required).",
     cmd_run},
    {"bench", "bench --kernel K [--OPTION VALUE]... [--variant V] [--workers P] [--reps R] [--warmup W]",
     "One measurement: runs the driver of variant V (default cont-seg-busy), which prints\n"
     "one JSON object.  Kernels and options: fk-bench-serial --list.",
     cmd_bench},
    {"uts",
     "uts [-t T -b B -r R -a A -d D -q Q -m M -f F -g G] [--preset NAME] [--alloc heap|stack]\n"
     "    [--variant V] [--workers P]",
     "Unbalanced Tree Search with the reference's flags; prints \"Tree size = N, tree depth\n"
     "= D, num leaves = L (x.xx%)\" (default variant cont-seg-busy, 1 worker).",
     cmd_uts},
    {"span", "span --kernel K [--OPTION VALUE]... [--reps R] [--unit ns|strands] [--project P1,P2,...] [--json]",
     "Work, span, parallelism and burdened parallelism of K (the span build, one worker),\n"
     "and the speedup they bound at each P (default up to 112) (forkscope span --help).",
     hx_cmd_span},
    {"trace", "trace --kernel K [--OPTION VALUE]... [--variant V] [--workers P] [--reps R] [--warmup W] -o FILE",
     "Every worker's timeline of one run as a Chrome trace (Perfetto, chrome://tracing), and\n"
     "where each worker's time went: work, search, steal, join, wait, fiber, sleep\n"
     "(forkscope trace --help).",
     hx_cmd_trace},
    {"variants", "variants", "The runtime variants and baselines, how they are named, why a name is refused.",
     cmd_variants},
    {"kernels", "kernels [--markdown]",
     "The kernels a benchmark may name, their options (default; limits) and what each says\n"
     "of itself (from the kernels' own descriptions); --markdown: a table.",
     cmd_kernels},
    {"topology", "topology [--synthetic DESC | --xml FILE] [--workers P] [--placement compact|spread|none]",
     "The topology (this machine, an hwloc XML file or a synthetic description such as\n"
     "\"pack:2 core:56 pu:1\"), where each worker is placed and pinned, and each worker's\n"
     "victim groups with their Eq. 6 weights (default: one worker per PU, compact).",
     cmd_topology},
    {"fit", "fit DIR", "DIR/summary.csv, fits.csv, report.md from DIR/raw.jsonl and env.json.", hx_cmd_fit},
    {"plot", "plot DIR", "DIR/plots/ from DIR's summary and fits (needs gnuplot).", hx_cmd_plot},
    {"compare", "compare DIR --a VARIANT --b VARIANT | compare DIR_A DIR_B [--variant V]",
     "B against A with statistics: ratio, 95% interval, Holm-adjusted p, verdict per\n"
     "cell, for time, memory and the memory exponent (compare --help).",
     hx_cmd_compare},
    {"slurm", "slurm submit CONFIG [-o DIR] [--shards N] [--max-parallel K] [...] | slurm status|resubmit|merge DIR",
     "The sweep as a SLURM job array: shards of whole cell families, one node each;\n"
     "status, resubmit what is missing, merge into DIR (forkscope slurm --help).",
     hx_cmd_slurm},
};
#define NCOMMANDS (sizeof commands / sizeof *commands)

/* Prints text with every line indented by n. */
static void indented(FILE *out, const char *text, int n) {
    while (*text) {
        size_t len = strcspn(text, "\n");
        fprintf(out, "%*s%.*s\n", n, "", (int)len, text);
        text += len + (text[len] == '\n');
    }
}

static void help(FILE *out) {
    fprintf(out, "usage: forkscope COMMAND [ARGS]\n\nCommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++) {
        indented(out, commands[i].synopsis, 2);
        indented(out, commands[i].what, 8);
    }
    fprintf(out, "  --help, --version, --man (this text as a manual page, roff)\n\nEnvironment:\n");
    hx_env_help(out);
    fprintf(out, "  The runtime's own (FORKSCOPE_WORKERS, _SCHED, _TOPOLOGY, _PLACEMENT, _VICTIMS, ...) are\n"
                 "  in runtime/include/forkscope.h (fk_pool_opts_init).\n"
                 "\n"
                 "Exit status (run, fit, plot, variants and errors before a driver starts):\n");
#define X(name, code, text) fprintf(out, "  %d  %s\n", code, text);
    HX_ERR_MAP(X)
#undef X
    fprintf(out, "bench and uts end with the driver's own status: 0 verified, 1 bad usage, 2 could not run,\n"
                 "3 wrong answer.\n");
}

/* ---- the manual page: the same table, in roff (make install's share/man/man1/forkscope.1) -- */

/* text as roff: backslashes escaped, a line that would start a request (. or ') guarded, and
 * each line of the source kept as a line. */
static void roff_text(FILE *out, const char *text) {
    int bol = 1;
    for (const char *c = text; *c; c++) {
        if (bol && (*c == '.' || *c == '\''))
            fputs("\\&", out);
        if (*c == '\\')
            fputs("\\e", out);
        else if (*c == '-')
            fputs("\\-", out);
        else
            fputc(*c, out);
        bol = *c == '\n';
    }
    if (!bol)
        fputc('\n', out);
}

static int man(FILE *out) {
    fprintf(out, ".TH FORKSCOPE 1 \"\" \"forkscope %s\" \"User Commands\"\n"
                 ".SH NAME\nforkscope \\- sweeps, fits and figures of fork-join work-stealing runtimes\n"
                 ".SH SYNOPSIS\n.B forkscope\n.I COMMAND\n[\\fIARGS\\fR]\n"
                 ".SH DESCRIPTION\nforkscope runs the benchmark suite on its runtime's variants, baselines and "
                 "peers, as an experiment file (a config) says, and analyses what it measured.  Its drivers are in "
                 "\\fI../libexec/forkscope\\fR beside it; its configs and gnuplot scripts in "
                 "\\fI../share/forkscope\\fR.\n.SH COMMANDS\n",
            HX_VERSION);
    for (size_t i = 0; i < NCOMMANDS; i++) {
        fputs(".TP\n.B\n", out);
        roff_text(out, commands[i].synopsis);
        roff_text(out, commands[i].what);
    }
    fputs(".TP\n.B \\-\\-help, \\-\\-version, \\-\\-man\nThis text as help, the version, this page.\n"
          ".SH ENVIRONMENT\n.nf\n", out);
    char *env = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&env, &len);
    if (!m) {
        fprintf(stderr, "forkscope --man: cannot make the ENVIRONMENT section: %s\n", strerror(errno));
        return HX_EINTERNAL;
    }
    hx_env_help(m);
    fclose(m);
    roff_text(out, env);
    free(env);
    fputs(".fi\nThe runtime's own (FORKSCOPE_WORKERS, _SCHED, _PROMOTE, _BEAT_US, ...) are described in "
          "\\fIforkscope.h\\fR (fk_pool_opts_init).\n.SH EXIT STATUS\n", out);
#define X(name, code, text) fprintf(out, ".TP\n.B %d\n", code), roff_text(out, text);
    HX_ERR_MAP(X)
#undef X
    fputs(".PP\nbench and uts end with the driver's own status: 0 verified, 1 bad usage, 2 could not run, 3 wrong "
          "answer.\n.SH SEE ALSO\n\\fIshare/forkscope/configs/README.md\\fR (the experiment files), "
          "\\fIforkscope.h\\fR and \\fBpkg-config\\fR(1) \\fBforkscope-cont-seg\\fR (the runtime in a "
          "program of your own).\n",
          out);
    return fflush(out) || ferror(out) ? HX_EIO : HX_OK;
}

/* ---- run ------------------------------------------------------------------------------------ */

static int cmd_run(int argc, char **argv) {
    hx_sweep_opts o = {.live_progress = -1};
    double effect = 0, cv = 0;
    const hx_opt opts[] = {
        {"--output", "-o", HX_OPT_STR, &o.outdir, 0, 0, "a directory", NULL},
        {"--resume", NULL, HX_OPT_FLAG, &o.resume, 0, 0, NULL, NULL},
        {"--dry-run", NULL, HX_OPT_FLAG, &o.dry_run, 0, 0, NULL, NULL},
        {"--effect", NULL, HX_OPT_DOUBLE, &effect, 1e-9, 100, "a percentage in (0, 100]", NULL},
        {"--cv", NULL, HX_OPT_DOUBLE, &cv, 1e-9, 100, "a percentage in (0, 100]", NULL},
        {NULL, NULL, 0, NULL, 0, 0, NULL, NULL},
    };
    hx_cli c = {.cmd = "run", .opts = opts, .usage = help, .max_pos = 1, .pos_what = "CONFIG"};
    int rc = hx_cli_parse(&c, argc, argv);
    if (rc)
        return rc == HX_CLI_HELP ? HX_OK : rc;
    if (!c.npos)
        return hx_cli_usage_error("run", "no CONFIG given");
    const char *memlimit;
    if ((rc = hx_env_memlimit(&memlimit))) /* (what the launcher will use: checked first) */
        return rc;
    o.config_path = c.pos[0];
    o.effect = effect / 100;
    o.cv = cv / 100;
    /* The launcher is forked now, while this process is small (see harness/run/launch.h). */
    hx_launcher *l = NULL;
    if (!o.dry_run) {
        int e = hx_launcher_start(&l);
        if (e) {
            fprintf(stderr, "forkscope: cannot start the launcher process: %s\n", strerror(-e));
            return HX_EINTERNAL;
        }
        o.launcher = l;
    }
    char dir[PATH_MAX];
    rc = hx_sweep_run(&o, dir, sizeof dir);
    hx_launcher_stop(l);
    if (o.dry_run || (rc != HX_OK && rc != HX_ERUNS_FAILED))
        return rc;
    int prc, frc = hx_report_analyse_dir(dir, "forkscope", &prc);
    return rc != HX_OK ? rc : frc != HX_OK ? frc : prc;
}

/* ---- bench and uts: exec the driver ---------------------------------------------------------- */

/* Takes --variant and --workers out of argv (the rest goes to the driver, in order), finds the
 * driver and execs it with --workers and what the variant's name stands for (hx_variant_args).  first: arguments to
 * put before the rest ("uts" for the UTS mode).  Returns only on error. */
static int exec_driver(const char *cmd, int argc, char **argv, const char *first) {
    const char *vname = "cont-seg-busy";
    long p = 1;
    static const char in_name[] = "the scheduler (and a fiber variant's resume, and the promotion) is part of the "
                                  "variant name (e.g. --variant cont-seg-lazy, child-fiber-busy-home, "
                                  "child-native-busy-beat)";
    const hx_opt opts[] = {
        {"--variant", NULL, HX_OPT_STR, &vname, 0, 0, "a variant name", NULL},
        {"--workers", NULL, HX_OPT_LONG, &p, 1, 1024, "an integer in [1, 1024]", NULL},
        {"--sched", NULL, HX_OPT_REFUSE, NULL, 0, 0, in_name, NULL},
        {"--resume", NULL, HX_OPT_REFUSE, NULL, 0, 0, in_name, NULL},
        {"--promote", NULL, HX_OPT_REFUSE, NULL, 0, 0, in_name, NULL},
        {NULL, NULL, 0, NULL, 0, 0, NULL, NULL},
    };
    hx_cli c = {.cmd = cmd, .opts = opts, .pass_unknown = 1}; /* --help goes to the driver */
    int rc = hx_cli_parse(&c, argc, argv);
    if (rc) {
        hx_strv_free(&c.rest);
        return rc;
    }
    hx_variant v;
    char err[256], path[PATH_MAX], workers[16];
    if (hx_variant_parse(vname, &v, err, sizeof err)) {
        hx_strv_free(&c.rest);
        return hx_cli_usage_error(cmd, "option --variant: %s", err);
    }
    if (v.kind == HX_VARIANT_SERIAL && p != 1) {
        hx_strv_free(&c.rest);
        return hx_cli_usage_error(cmd, "option --workers: serial runs on 1 worker only, not %ld", p);
    }
    if (hx_variant_driver_path(&v, path, sizeof path)) {
        fprintf(stderr, "forkscope: cannot locate the driver %s\n", v.driver);
        hx_strv_free(&c.rest);
        return HX_EINTERNAL;
    }
    snprintf(workers, sizeof workers, "%ld", p);
    char **dargv = hx_xcalloc(c.rest.n + 6 + HX_VARIANT_MAX_ARGS, sizeof *dargv);
    size_t n = 0;
    dargv[n++] = path;
    if (first)
        dargv[n++] = (char *)first;
    for (size_t i = 0; i < c.rest.n; i++)
        dargv[n++] = (char *)c.rest.v[i];
    dargv[n++] = (char *)"--workers";
    dargv[n++] = workers;
    const char *vargs[HX_VARIANT_MAX_ARGS];
    for (size_t i = 0, nv = hx_variant_args(&v, vargs); i < nv; i++)
        dargv[n++] = (char *)vargs[i];
    dargv[n] = NULL;
    fflush(NULL);
    execv(path, dargv);
    fprintf(stderr, "forkscope: cannot execute the driver of %s, %s: %s%s\n", v.name, path, strerror(errno),
            errno == ENOENT ? " (build it: make build/bin/" : "");
    if (errno == ENOENT)
        fprintf(stderr, "%s)\n", v.driver);
    free(dargv);
    hx_strv_free(&c.rest);
    return HX_ETOOL;
}

static int cmd_bench(int argc, char **argv) { return exec_driver("bench", argc, argv, NULL); }
static int cmd_uts(int argc, char **argv) { return exec_driver("uts", argc, argv, "uts"); }

static int cmd_kernels(int argc, char **argv) {
    int markdown = 0;
    const hx_opt opts[] = {
        {"--markdown", NULL, HX_OPT_FLAG, &markdown, 0, 0, NULL, NULL},
        {NULL, NULL, 0, NULL, 0, 0, NULL, NULL},
    };
    hx_cli c = {.cmd = "kernels", .opts = opts, .usage = help};
    int rc = hx_cli_parse(&c, argc, argv);
    if (rc)
        return rc == HX_CLI_HELP ? HX_OK : rc;
    hx_kernels_print(stdout, markdown);
    return HX_OK;
}

static int cmd_variants(int argc, char **argv) {
    hx_cli c = {.cmd = "variants", .usage = help};
    int rc = hx_cli_parse(&c, argc, argv);
    if (rc)
        return rc == HX_CLI_HELP ? HX_OK : rc;
    hx_variants_print(stdout);
    return HX_OK;
}

/* ---- topology --------------------------------------------------------------------------------- */

static int cmd_topology(int argc, char **argv) {
    const char *synthetic = NULL, *xml = NULL, *placement = NULL;
    long workers = 0;
    const hx_opt opts[] = {
        {"--synthetic", NULL, HX_OPT_STR, &synthetic, 0, 0, "a description", NULL},
        {"--xml", NULL, HX_OPT_STR, &xml, 0, 0, "a file", NULL},
        {"--workers", NULL, HX_OPT_LONG, &workers, 1, 1024, "an integer in [1, 1024]", NULL},
        {"--placement", NULL, HX_OPT_STR, &placement, 0, 0, "compact, spread or none", NULL},
        {NULL, NULL, 0, NULL, 0, 0, NULL, NULL},
    };
    hx_cli c = {.cmd = "topology", .opts = opts, .usage = help};
    int rc = hx_cli_parse(&c, argc, argv);
    if (rc)
        return rc == HX_CLI_HELP ? HX_OK : rc;
    if (synthetic && xml)
        return hx_cli_usage_error("topology", "give one of --synthetic and --xml");
    char spec[4096] = "";
    if (synthetic || xml)
        snprintf(spec, sizeof spec, "%s:%s", synthetic ? "synthetic" : "xml", synthetic ? synthetic : xml);
    fk_pool_opts o = {.placement = FK_PLACE_COMPACT, .workers = (unsigned)workers};
    if (placement && fk_placement_parse(placement, &o.placement))
        return hx_cli_usage_error("topology", "option --placement: '%s' is not compact, spread or none", placement);
    o.topology = spec;
    char err[512];
    if (fk_topology_describe(&o, stdout, err, sizeof err)) {
        fprintf(stderr, "forkscope: %s\n", err);
        return HX_ECONFIG;
    }
    return HX_OK;
}

/* Runs the command of argv; 0 or a return code (errors.h). */
static int command(int argc, char **argv) {
    if (argc < 2) {
        help(stderr);
        return HX_EUSAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        help(stdout);
        return HX_OK;
    }
    if (!strcmp(cmd, "--man")) {
        return man(stdout);
    }
    if (!strcmp(cmd, "--version")) {
        printf("forkscope %s\n", HX_VERSION);
        return HX_OK;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(cmd, commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    return hx_cli_usage_error(NULL, "unknown command '%s'", cmd);
}

int main(int argc, char **argv) {
    return hx_exit_status(command(argc, argv));
}
