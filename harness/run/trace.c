/* trace.c — `forkscope trace`: one run of a kernel on a runtime variant with every worker's
 * timeline logged (the driver's --trace: a Chrome Trace Event Format file), and where each
 * worker's time went (the driver's "breakdown") printed beside it. */
#include "harness/run/trace.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/analyze/stats.h"
#include "harness/config/variants.h"
#include "harness/util/cli.h"
#include "harness/util/errors.h"
#include "harness/util/util.h"

static void trace_help(FILE *f) {
    fputs("usage: forkscope trace --kernel K [--OPTION VALUE]... [--variant V] [--workers P] [--reps R] [--warmup W]\n"
          "                       -o FILE\n"
          "Runs kernel K once (R repetitions, default 1, after W untimed ones, default 1: a first run pays for\n"
          "touching its memory) on runtime variant V (default cont-seg-busy) with P workers (default: one per\n"
          "online CPU) and writes every worker's timeline over the timed repetitions to FILE in the Chrome\n"
          "Trace Event Format: open it in https://ui.perfetto.dev or chrome://tracing.  One track per\n"
          "worker; a span per period of work (named by the task that began it), search, steal, join,\n"
          "wait, fiber switching or sleep; each steal a flow from the victim to the thief.  Then prints\n"
          "where each worker's time went, from the same run.  A worker's log holds\n"
          "FORKSCOPE_TRACE_EVENTS events (default 1,048,576, 24 bytes each); what does not fit is\n"
          "counted and reported, never silently lost.  The kernels' options: fk-bench-serial --list.\n"
          "Exit status: 0 success, 1 bad command line, 4 the run failed or its answer was wrong,\n"
          "6 the driver is missing.\n",
          f);
}

static double num(const json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }

/* The driver's breakdown: one line per worker, each category in ms and % of the worker's wall. */
static void print_breakdown(const json_t *doc) {
    const json_t *bd = json_object_get(doc, "breakdown");
    const json_t *per = json_object_get(bd, "per_worker");
    printf("%-7s %9s", "worker", "wall ms");
    for (int c = 0; c < HX_BD_WALL; c++)
        printf(" %12s", hx_bd_names[c]);
    printf(" %9s\n", "cpu ms");
    size_t i;
    const json_t *w;
    json_array_foreach(per, i, w) {
        double wall = num(w, "wall");
        printf("%-7zu %9.3f", i, wall * 1e3);
        for (int c = 0; c < HX_BD_WALL; c++) {
            double v = num(w, hx_bd_names[c]);
            if (v > 0)
                printf(" %6.2f %4.1f%%", v * 1e3, wall > 0 ? 100 * v / wall : 0);
            else
                printf(" %12s", "-");
        }
        printf(" %9.3f\n", num(w, "cpu") * 1e3);
    }
    const json_t *ck = json_object_get(bd, "clock");
    const char *src = json_string_value(json_object_get(ck, "source"));
    const char *why = json_string_value(json_object_get(ck, "fallback_reason"));
    printf("(ms and %% of each worker's wall time over the timed repetitions; clock %s", src ? src : "?");
    if (src && !strcmp(src, "tsc"))
        printf(", %.4f ns a tick", num(ck, "ns_per_tick"));
    else
        printf(": %s", why ? why : "?");
    printf(")\n");
}

int hx_cmd_trace(int argc, char **argv) {
    const char *vname = "cont-seg-busy", *out = NULL, *reps = "1", *warmup = "1";
    long cpus = sysconf(_SC_NPROCESSORS_ONLN), p = cpus < 1 ? 1 : cpus > 1024 ? 1024 : cpus;
    static const char in_name[] = "the scheduler (and a fiber variant's resume, and the promotion) is part of the "
                                  "variant name (e.g. --variant cont-seg-lazy, child-fiber-busy-home, "
                                  "child-native-busy-beat)";
    const hx_opt opts[] = {
        {"--output", "-o", HX_OPT_STR, &out, 0, 0, "a file name", NULL},
        {"--variant", NULL, HX_OPT_STR, &vname, 0, 0, "a variant name", NULL},
        {"--workers", NULL, HX_OPT_LONG, &p, 1, 1024, "an integer in [1, 1024]", NULL},
        {"--reps", NULL, HX_OPT_STR, &reps, 0, 0, "a repetition count", NULL},
        {"--warmup", NULL, HX_OPT_STR, &warmup, 0, 0, "a repetition count", NULL},
        {"--sched", NULL, HX_OPT_REFUSE, NULL, 0, 0, in_name, NULL},
        {"--resume", NULL, HX_OPT_REFUSE, NULL, 0, 0, in_name, NULL},
        {"--promote", NULL, HX_OPT_REFUSE, NULL, 0, 0, in_name, NULL},
        {"--trace", NULL, HX_OPT_REFUSE, NULL, 0, 0, "the file is -o FILE", NULL},
        {"--account", NULL, HX_OPT_REFUSE, NULL, 0, 0, "a trace accounts for every worker's time", NULL},
        {NULL, NULL, 0, NULL, 0, 0, NULL, NULL},
    };
    hx_cli c = {.cmd = "trace", .opts = opts, .usage = trace_help, .pass_unknown = 1};
    int rc = hx_cli_parse(&c, argc, argv);
    if (rc) {
        hx_strv_free(&c.rest);
        return rc == HX_CLI_HELP ? HX_OK : rc;
    }
    hx_variant v;
    char err[256], path[PATH_MAX], workers[16];
    if (!out)
        rc = hx_cli_usage_error("trace", "no -o FILE: where to write the trace");
    else if (hx_variant_parse(vname, &v, err, sizeof err))
        rc = hx_cli_usage_error("trace", "option --variant: %s", err);
    else if (v.kind != HX_VARIANT_RUNTIME)
        rc = hx_cli_usage_error("trace", "option --variant: %s is not one of forkscope's runtime variants, whose "
                                         "workers log their timelines (cont-seg-busy, child-fiber-lazy-any, ...)", vname);
    else if (hx_variant_driver_path(&v, path, sizeof path)) {
        fprintf(stderr, "forkscope trace: cannot locate the driver %s\n", v.driver);
        rc = HX_EINTERNAL;
    }
    if (rc) {
        hx_strv_free(&c.rest);
        return rc;
    }
    snprintf(workers, sizeof workers, "%ld", p);
    const char **dargv = hx_xcalloc(c.rest.n + 10 + HX_VARIANT_MAX_ARGS, sizeof *dargv);
    size_t n = 0;
    dargv[n++] = path;
    for (size_t i = 0; i < c.rest.n; i++)
        dargv[n++] = c.rest.v[i];
    const char *tail[] = {"--workers", workers, "--reps", reps, "--warmup", warmup, "--trace", out};
    for (size_t i = 0; i < sizeof tail / sizeof *tail; i++)
        dargv[n++] = tail[i];
    n += hx_variant_args(&v, dargv + n);
    char *text = NULL;
    fflush(NULL);
    int st = hx_capture(dargv, 0, &text);
    free(dargv);
    hx_strv_free(&c.rest);
    if (st < 0) {
        fprintf(stderr, "forkscope trace: cannot run %s: %s%s%s%s\n", path, strerror(errno),
                errno == ENOENT ? " (build it: make build/bin/" : "", errno == ENOENT ? v.driver : "",
                errno == ENOENT ? ")" : "");
        return HX_ETOOL;
    }
    if (st != 0) { /* the driver said why on stderr */
        free(text);
        if (st == 3)
            fprintf(stderr, "forkscope trace: the kernel's answer was wrong (the trace is written: %s)\n", out);
        return st == 1 ? HX_EUSAGE : HX_ERUNS_FAILED;
    }
    json_error_t jerr;
    json_t *doc = json_loads(text, 0, &jerr);
    free(text);
    const json_t *tr = doc ? json_object_get(doc, "trace") : NULL;
    if (!json_is_object(tr) || !json_is_object(json_object_get(doc, "breakdown"))) {
        fprintf(stderr, "forkscope trace: the driver's output has no \"trace\" and \"breakdown\"%s%s\n",
                doc ? "" : ": ", doc ? "" : jerr.text);
        json_decref(doc);
        return HX_ERUNS_FAILED;
    }
    json_int_t events = json_integer_value(json_object_get(tr, "events"));
    json_int_t dropped = json_integer_value(json_object_get(tr, "dropped"));
    printf("%s on %s, %ld workers: %.6f s (the first timed repetition)\n", json_string_value(json_object_get(doc, "kernel")),
           vname, p, json_real_value(json_array_get(json_object_get(doc, "times"), 0)));
    printf("wrote %s: %lld events, %lld steals", out, (long long)events,
           (long long)json_integer_value(json_object_get(tr, "steals")));
    if (dropped)
        printf("; %lld events DROPPED (the logs were full: raise FORKSCOPE_TRACE_EVENTS)", (long long)dropped);
    printf(" (open it in https://ui.perfetto.dev or chrome://tracing)\n");
    print_breakdown(doc);
    json_decref(doc);
    return HX_OK;
}
