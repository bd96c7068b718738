/* main.c — the forkscope command line: run, bench, uts, variants, topology, fit, plot, compare, slurm,
 * span (each command's options are parsed where it lives; this file dispatches). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/report/analysis.h"
#include "harness/config/config.h"
#include "harness/run/envinfo.h"
#include "harness/util/errors.h"
#include "harness/run/launch.h"
#include "harness/cluster/slurm.h"
#include "harness/run/span.h"
#include "harness/run/sweep.h"
#include "harness/config/variants.h"

#include <forkscope.h> /* forkscope topology: the runtime's view of a topology */

static void help(FILE *out) {
    fprintf(out,
            "usage: forkscope COMMAND [ARGS]\n"
            "\n"
            "Commands:\n"
            "  run CONFIG [-o DIR] [--resume] [--dry-run [--effect PCT] [--cv PCT]]\n"
            "        Run the sweep of an experiment file (configs/README.md) into DIR (default\n"
            "        results/<name>): DIR/config.json, env.json, raw.jsonl; then `fit` and `plot` on DIR.\n"
            "        --dry-run prints the plan (cells, runs, estimated time) and runs nothing, and for\n"
            "        a paired or interleaved sweep how many rounds `compare` needs to detect a change\n"
            "        of --effect PCT (default 5) at the noise of DIR's earlier runs, or --cv PCT\n"
            "        (default 3) if there are none;\n"
            "        --resume continues an interrupted sweep in DIR (same config required).\n"
            "  bench --kernel K [--OPTION VALUE]... [--variant V] [--workers P] [--reps R] [--warmup W]\n"
            "        One measurement: runs the driver of variant V (default cont-seg-busy), which prints\n"
            "        one JSON object.  Kernels and options: fk-bench-serial --list.\n"
            "  uts [-t T -b B -r R -a A -d D -q Q -m M -f F -g G] [--preset NAME] [--alloc heap|stack]\n"
            "      [--variant V] [--workers P]\n"
            "        Unbalanced Tree Search with the reference's flags; prints \"Tree size = N, tree depth\n"
            "        = D, num leaves = L (x.xx%%)\" (default variant cont-seg-busy, 1 worker).\n"
            "  span --kernel K [--OPTION VALUE]... [--reps R] [--unit ns|strands] [--project P1,P2,...] [--json]\n"
            "        Work, span, parallelism and burdened parallelism of K (the span build, one worker),\n"
            "        and the speedup they bound at each P (default up to 112) (forkscope span --help).\n"
            "  variants\n"
            "        The runtime variants and baselines, how they are named, why a name is refused.\n"
            "  topology [--synthetic DESC | --xml FILE] [--workers P] [--placement compact|spread|none]\n"
            "        The topology (this machine, an hwloc XML file or a synthetic description such as\n"
            "        \"pack:2 core:56 pu:1\"), where each worker is placed and pinned, and each worker's\n"
            "        victim groups with their Eq. 6 weights (default: one worker per PU, compact).\n"
            "  fit DIR     DIR/summary.csv, fits.csv, report.md from DIR/raw.jsonl and env.json.\n"
            "  plot DIR    DIR/plots/ from DIR's summary and fits (needs gnuplot).\n"
            "  compare DIR --a VARIANT --b VARIANT | compare DIR_A DIR_B [--variant V]\n"
            "        B against A with statistics: ratio, 95%% interval, Holm-adjusted p, verdict per\n"
            "        cell, for time, memory and the memory exponent (compare --help).\n"
            "  slurm submit CONFIG [-o DIR] [--shards N] [--max-parallel K] [...] | slurm status|resubmit|merge DIR\n"
            "        The sweep as a SLURM job array: shards of whole cell families, one node each;\n"
            "        status, resubmit what is missing, merge into DIR (forkscope slurm --help).\n"
            "  --help, --version\n"
            "\n"
            "Environment:\n"
            "  FORKSCOPE_DRIVER=PATH     run PATH as the driver of every variant (for tests); by\n"
            "                            default fk-bench-* next to this executable.\n"
            "  FORKSCOPE_MEMLIMIT=auto|cgroup|cgroup-v2|cgroup-v1|poll   how the per-run memory limit\n"
            "                            is enforced (env.json's memory_limit says which, and why).\n"
            "  FORKSCOPE_PLOTS=DIR       the gnuplot scripts plot uses (default: plots/ of the source\n"
            "                            tree, found from this executable).\n"
            "  FORKSCOPE_SPAN_LOG_MIB=N  the span build's per-strand log in MiB (default 1024; beyond it\n"
            "                            span falls back to the least of the repetitions).\n"
            "  The runtime's own (FORKSCOPE_WORKERS, _SCHED, _TOPOLOGY, _PLACEMENT, _VICTIMS, ...) are\n"
            "  in runtime/include/forkscope.h (fk_pool_opts_init).\n"
            "\n"
            "Exit status (run, fit, plot, variants and errors before a driver starts):\n");
#define X(name, code, text) fprintf(out, "  %d  %s\n", code, text);
    HX_ERR_MAP(X)
#undef X
    fprintf(out, "bench and uts end with the driver's own status: 0 verified, 1 bad usage, 2 could not run,\n"
                 "3 wrong answer.\n");
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "forkscope: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (try forkscope --help)\n");
    va_end(ap);
    return HX_EUSAGE;
}

/* ---- run ------------------------------------------------------------------------------------ */

static int cmd_run(int argc, char **argv) {
    hx_sweep_opts o = {.live_progress = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (++i >= argc)
                return usage_error("run: option %s needs a directory", a);
            o.outdir = argv[i];
        } else if (!strncmp(a, "--output=", 9)) {
            o.outdir = a + 9;
        } else if (!strcmp(a, "--resume")) {
            o.resume = 1;
        } else if (!strcmp(a, "--dry-run")) {
            o.dry_run = 1;
        } else if (!strcmp(a, "--effect") || !strcmp(a, "--cv")) {
            if (++i >= argc)
                return usage_error("run: option %s needs a percentage", a);
            char *end;
            double x = strtod(argv[i], &end);
            if (!*argv[i] || *end || !(x > 0 && x <= 100))
                return usage_error("run: option %s: '%s' is not a percentage in (0, 100]", a, argv[i]);
            *(a[2] == 'e' ? &o.effect : &o.cv) = x / 100;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return HX_OK;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("run: unknown option '%s'", a);
        } else if (o.config_path) {
            return usage_error("run: more than one CONFIG given ('%s')", a);
        } else {
            o.config_path = a;
        }
    }
    if (!o.config_path)
        return usage_error("run: no CONFIG given");
    if (o.outdir && !*o.outdir)
        return usage_error("run: empty output directory");
    /* The launcher is forked now, while this process is small (see harness/launch.h). */
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
    int rc = hx_sweep_run(&o, dir, sizeof dir);
    hx_launcher_stop(l);
    if (o.dry_run || (rc != HX_OK && rc != HX_ERUNS_FAILED))
        return rc;
    int prc, frc = hx_analyse_dir(dir, "forkscope", &prc);
    return rc != HX_OK ? rc : frc != HX_OK ? frc : prc;
}

/* ---- bench and uts: exec the driver ---------------------------------------------------------- */

/* Takes --variant and --workers out of argv (the rest goes to the driver), finds the driver
 * and execs it with --workers and, for runtime variants, --sched.  first: arguments to put
 * before the rest ("uts" for the UTS mode).  Returns only on error. */
static int exec_driver(int argc, char **argv, const char *first) {
    const char *vname = "cont-seg-busy", *workers = "1";
    char **dargv = calloc((size_t)argc + 10, sizeof *dargv);
    if (!dargv)
        return HX_EINTERNAL;
    int n = 1;
    if (first)
        dargv[n++] = (char *)first;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--variant") || !strcmp(a, "--workers")) {
            if (i + 1 >= argc) {
                free(dargv);
                return usage_error("option %s needs a value", a);
            }
            *(a[2] == 'v' ? &vname : &workers) = argv[++i];
        } else if (!strncmp(a, "--variant=", 10)) {
            vname = a + 10;
        } else if (!strncmp(a, "--workers=", 10)) {
            workers = a + 10;
        } else if (!strcmp(a, "--sched") || !strncmp(a, "--sched=", 8) || !strcmp(a, "--resume") ||
                   !strncmp(a, "--resume=", 9)) {
            free(dargv);
            return usage_error("option %s: the scheduler (and a fiber variant's resume) is part of the variant "
                               "name (e.g. --variant cont-seg-lazy, child-fiber-busy-home)",
                               a);
        } else {
            dargv[n++] = argv[i];
        }
    }
    hx_variant v;
    char err[256], path[PATH_MAX];
    if (hx_variant_parse(vname, &v, err, sizeof err)) {
        fprintf(stderr, "forkscope: option --variant: %s\n", err);
        free(dargv);
        return HX_EUSAGE;
    }
    char *end;
    long p = strtol(workers, &end, 10);
    if (!*workers || *end || p < 1 || p > 1024) {
        free(dargv);
        return usage_error("option --workers: '%s' is not an integer in [1, 1024]", workers);
    }
    if (v.kind == HX_VARIANT_SERIAL && p != 1) {
        free(dargv);
        return usage_error("option --workers: serial runs on 1 worker only, not %s", workers);
    }
    if (hx_variant_driver_path(&v, path, sizeof path)) {
        fprintf(stderr, "forkscope: cannot locate the driver %s\n", v.driver);
        free(dargv);
        return HX_EINTERNAL;
    }
    dargv[0] = path;
    dargv[n++] = (char *)"--workers";
    dargv[n++] = (char *)workers;
    if (v.kind == HX_VARIANT_RUNTIME) {
        dargv[n++] = (char *)"--sched";
        dargv[n++] = v.sched;
    }
    if (v.resume[0]) {
        dargv[n++] = (char *)"--resume";
        dargv[n++] = v.resume;
    }
    dargv[n] = NULL;
    fflush(NULL);
    execv(path, dargv);
    fprintf(stderr, "forkscope: cannot execute the driver of %s, %s: %s%s\n", v.name, path, strerror(errno),
            errno == ENOENT ? " (build it: make build/bin/" : "");
    if (errno == ENOENT)
        fprintf(stderr, "%s)\n", v.driver);
    free(dargv);
    return HX_ETOOL;
}

/* ---- topology --------------------------------------------------------------------------------- */

static int cmd_topology(int argc, char **argv) {
    char spec[4096] = "";
    fk_pool_opts o = {.placement = FK_PLACE_COMPACT};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc)
            return usage_error("topology: option %s needs a value", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--synthetic") || !strcmp(a, "--xml")) {
            if (*spec)
                return usage_error("topology: give one of --synthetic and --xml");
            snprintf(spec, sizeof spec, "%s:%s", a[2] == 's' ? "synthetic" : "xml", v);
        } else if (!strcmp(a, "--workers")) {
            char *end;
            long n = strtol(v, &end, 10);
            if (!*v || *end || n < 1 || n > 1024)
                return usage_error("topology: option --workers: '%s' is not an integer in [1, 1024]", v);
            o.workers = (unsigned)n;
        } else if (!strcmp(a, "--placement")) {
            if (fk_placement_parse(v, &o.placement))
                return usage_error("topology: option --placement: '%s' is not compact, spread or none", v);
        } else {
            return usage_error("topology: unknown option %s", a);
        }
    }
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
    if (!strcmp(cmd, "--version")) {
        printf("forkscope %s\n", HX_VERSION);
        return HX_OK;
    }
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench"))
        return exec_driver(argc - 1, argv + 1, NULL);
    if (!strcmp(cmd, "uts"))
        return exec_driver(argc - 1, argv + 1, "uts");
    if (!strcmp(cmd, "variants")) {
        if (argc > 2)
            return usage_error("variants takes no arguments ('%s')", argv[2]);
        hx_variants_print(stdout);
        return HX_OK;
    }
    if (!strcmp(cmd, "topology"))
        return cmd_topology(argc - 1, argv + 1);
    if (!strcmp(cmd, "fit"))
        return hx_cmd_fit(argc - 1, argv + 1);
    if (!strcmp(cmd, "plot"))
        return hx_cmd_plot(argc - 1, argv + 1);
    if (!strcmp(cmd, "slurm"))
        return hx_cmd_slurm(argc - 1, argv + 1);
    if (!strcmp(cmd, "compare"))
        return hx_cmd_compare(argc - 1, argv + 1);
    if (!strcmp(cmd, "span"))
        return hx_cmd_span(argc - 1, argv + 1);
    return usage_error("unknown command '%s'", cmd);
}

int main(int argc, char **argv) {
    return hx_exit_status(command(argc, argv));
}
