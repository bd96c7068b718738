/* span.c — `forkscope span`: work, span and parallelism of one kernel run, measured by the
 * span build's driver (fk-bench-span, runtime/span.c), and the speedups they bound at worker
 * counts this machine may not have.
 *
 * The bounds: on P workers T_P >= max(T1 / P, T_inf), so the speedup T1 / T_P is at most
 * min(P, T1 / T_inf) (the work-span bound); a greedy scheduler gets within T1 / P + T_inf.
 * The burdened estimate T1 / (T1 / P + burdened span) charges every fork a steal (on the
 * child's path to the join and on the continuation), as Cilkscale's burdened-dag speedup does: where it falls well below the bound, the
 * program's parallelism is too fine-grained for the cost of moving work. */
#include "harness/span.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "harness/errors.h"
#include "harness/util.h"
#include "harness/variants.h"

#define SPAN_MAX_P 64

static void span_help(FILE *out) {
    fprintf(out,
            "usage: forkscope span --kernel K [--OPTION VALUE]... [--reps R] [--burden-ns B] [--unit ns|strands]\n"
            "                      [--burden-strands B]\n"
            "                      [--project P1,P2,...] [--json]\n"
            "Work, span, parallelism and burdened parallelism of kernel K (its options as for bench),\n"
            "measured by the span build (fk-bench-span: continuation stealing on one worker, every\n"
            "strand timed; --unit strands counts strands instead: the DAG's shape, exact).  Time is\n"
            "taken over R repetitions (default 3), each strand at its median of three (an interrupt\n"
            "in one repetition does not lengthen the span); parallelism = strand-median work / span.\n"
            "B: a steal's burden on each fork, on the child's path to the join and on the\n"
            "continuation (default 5000 ns; in strands: --burden-strands, default 0).  Then, per\n"
            "worker count (default 1,2,4,8,16,32,64,112): the work-span bound on the speedup,\n"
            "min(P, parallelism), and the burdened estimate, work / (work/P + burdened span).\n"
            "--json prints the driver's JSON with \"projection\".\n");
}

static int parse_project(const char *s, unsigned *ps, size_t *n) {
    *n = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 1000000 || (*end && *end != ',') || *n == SPAN_MAX_P)
            return -1;
        ps[(*n)++] = (unsigned)v;
        s = *end ? end + 1 : end;
    }
    return *n ? 0 : -1;
}

static double num(const json_t *o, const char *key) {
    double v = 0;
    return hx_json_number(o, key, &v) == 1 ? v : 0;
}

int hx_cmd_span(int argc, char **argv) {
    unsigned ps[SPAN_MAX_P] = {1, 2, 4, 8, 16, 32, 64, 112};
    size_t np = 8;
    int json_out = 0, have_reps = 0;
    const char **dargv = hx_xcalloc((size_t)argc + 8, sizeof *dargv);
    size_t n = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            span_help(stdout);
            free(dargv);
            return HX_OK;
        } else if (!strcmp(a, "--json")) {
            json_out = 1;
        } else if (!strcmp(a, "--project") || !strncmp(a, "--project=", 10)) {
            const char *v = a[9] == '=' ? a + 10 : i + 1 < argc ? argv[++i] : NULL;
            if (!v || parse_project(v, ps, &np)) {
                fprintf(stderr, "forkscope span: option --project: '%s' is not a list of worker counts like 2,16,112 "
                                "(at most %d)\n", v ? v : "", SPAN_MAX_P);
                free(dargv);
                return HX_EUSAGE;
            }
        } else if (!strcmp(a, "--unit") || !strncmp(a, "--unit=", 7)) {
            const char *v = a[6] == '=' ? a + 7 : i + 1 < argc ? argv[++i] : NULL;
            if (!v || (strcmp(v, "ns") && strcmp(v, "strands"))) {
                fprintf(stderr, "forkscope span: option --unit: '%s' is not ns or strands\n", v ? v : "");
                free(dargv);
                return HX_EUSAGE;
            }
            dargv[n++] = "--span-unit";
            dargv[n++] = v;
        } else if (!strcmp(a, "--workers") || !strncmp(a, "--workers=", 10) || !strcmp(a, "--variant") ||
                   !strncmp(a, "--variant=", 10)) {
            fprintf(stderr, "forkscope span: option %s: the span is measured by the span build on one worker; "
                            "--project gives the worker counts to bound\n", a);
            free(dargv);
            return HX_EUSAGE;
        } else {
            if (!strcmp(a, "--reps") || !strncmp(a, "--reps=", 7))
                have_reps = 1;
            dargv[n++] = a;
        }
    }
    if (!have_reps) {
        dargv[n++] = "--reps";
        dargv[n++] = "3";
    }
    hx_variant v;
    memset(&v, 0, sizeof v);
    snprintf(v.driver, sizeof v.driver, "fk-bench-span");
    char path[PATH_MAX];
    if (hx_variant_driver_path(&v, path, sizeof path)) {
        fprintf(stderr, "forkscope span: cannot locate the driver fk-bench-span\n");
        free(dargv);
        return HX_EINTERNAL;
    }
    dargv[0] = path;
    char *out = NULL;
    int st = hx_capture(dargv, 0, &out);
    free(dargv);
    if (st < 0) {
        fprintf(stderr, "forkscope span: cannot run %s: %s%s\n", path, strerror(errno),
                errno == ENOENT ? " (build it: make build/bin/fk-bench-span)" : "");
        return HX_ETOOL;
    }
    if (st != 0) { /* the driver said why on stderr */
        free(out);
        if (st == 3)
            fprintf(stderr, "forkscope span: the kernel's answer was wrong: no figures\n");
        return st == 1 ? HX_EUSAGE : HX_ERUNS_FAILED;
    }
    json_error_t jerr;
    json_t *doc = json_loads(out, 0, &jerr);
    free(out);
    const json_t *sp = doc ? json_object_get(doc, "span") : NULL;
    if (!json_is_object(sp)) {
        fprintf(stderr, "forkscope span: the driver's output has no \"span\" object%s%s\n", doc ? "" : ": ",
                doc ? "" : jerr.text);
        json_decref(doc);
        return HX_ERUNS_FAILED;
    }
    /* (the parallelism is the driver's: the strand-median work over the span, both made of
     * each strand's median time; `work` is a typical repetition's) */
    double work = num(sp, "work"), span = num(sp, "span"), bspan = num(sp, "burdened_span");
    double mwork = json_object_get(sp, "min_work") ? num(sp, "min_work") : work;
    const char *unit = hx_json_str(sp, "unit", "ns");
    /* Strands finer than the clock resolves: the times mean little, the DAG's shape in
     * strands (every strand alike) bounds the speedup, and there is no burdened estimate. */
    int resolved = json_is_true(json_object_get(sp, "resolved"));
    const json_t *dag = json_object_get(sp, "dag_in_strands");
    double par = num(sp, "parallelism");
    if (!resolved && dag)
        par = num(dag, "parallelism");
    json_t *proj = json_array();
    for (size_t k = 0; k < np; k++) {
        double p = ps[k], bound = par < p ? par : p;
        json_t *row = json_pack("{s:i, s:f}", "workers", (int)ps[k], "speedup_bound", bound);
        if (resolved)
            json_object_set_new(row, "burdened_speedup", json_real(mwork > 0 ? mwork / (mwork / p + bspan) : 0));
        json_array_append_new(proj, row);
    }
    if (json_out) {
        json_object_set_new(doc, "projection", proj);
        char *s = json_dumps(doc, JSON_INDENT(1));
        if (s)
            puts(s);
        free(s);
        json_decref(doc);
        return HX_OK;
    }
    int strands = !strcmp(unit, "strands");
    double scale = strands ? 1 : 1e-6;
    const char *u = strands ? "strands" : "ms";
    printf("%s (", hx_json_str(doc, "kernel", "?"));
    const char *key;
    json_t *val;
    int first = 1;
    json_object_foreach(json_object_get(doc, "params"), key, val) {
        if (json_is_integer(val))
            printf("%s%s %lld", first ? "" : ", ", key, (long long)json_integer_value(val));
        else if (json_is_real(val))
            printf("%s%s %g", first ? "" : ", ", key, json_real_value(val));
        else if (json_is_string(val))
            printf("%s%s %s", first ? "" : ", ", key, json_string_value(val));
        first = 0;
    }
    printf("), verified: %s\n", json_is_true(json_object_get(doc, "verified")) ? "yes" : "NO");
    printf("  work                 %14.4f %s (a repetition's, median)\n", work * scale, u);
    if (!strands)
        printf("  strand-median work   %14.4f %s (each strand's median time: what the span is made of)\n",
               mwork * scale, u);
    printf("  span                 %14.4f %s\n", span * scale, u);
    printf("  parallelism          %14.1f\n", num(sp, "parallelism"));
    printf("  burdened span        %14.4f %s (a burden of %g %s a fork)\n", bspan * scale, u,
           num(sp, "burden") * (strands ? 1 : 1e-3), strands ? "strands" : "us");
    printf("  burdened parallelism %14.1f\n", num(sp, "burdened_parallelism"));
    printf("  strands %.0f, forks %.0f; %s, %d repetitions\n", num(sp, "strands"), num(sp, "forks"),
           hx_json_str(sp, "method", "?"), (int)num(sp, "reps"));
    if (dag && !strands)
        printf("  the DAG in strands: work %.0f, span %.0f, parallelism %.1f\n", num(dag, "work"), num(dag, "span"),
               num(dag, "parallelism"));
    if (!resolved)
        printf("  NOTE: the strands average %.2f ns, less than twice the hooks' residue taken off each (%.1f ns a\n"
               "  hook, for the strand and each hook inside it): the clock does not resolve them, and the times\n"
               "  above mean little.  The bounds below use the DAG in strands (every strand alike); there is no\n"
               "  burdened estimate.\n",
               num(sp, "strands") > 0 ? work / num(sp, "strands") : 0, num(sp, "hook_ns"));
    printf("  %8s  %14s  %16s\n", "workers", "speedup bound", "burdened estimate");
    for (size_t k = 0; k < np; k++) {
        const json_t *r = json_array_get(proj, k);
        if (resolved)
            printf("  %8d  %14.1f  %16.1f\n", (int)num(r, "workers"), num(r, "speedup_bound"),
                   num(r, "burdened_speedup"));
        else
            printf("  %8d  %14.1f  %16s\n", (int)num(r, "workers"), num(r, "speedup_bound"), "-");
    }
    int ok = json_is_true(json_object_get(doc, "verified"));
    json_decref(proj);
    json_decref(doc);
    return ok ? HX_OK : HX_ERUNS_FAILED;
}
