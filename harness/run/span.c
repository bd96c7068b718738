/* span.c — `forkscope span`: work, span and parallelism of one kernel run, measured by the
 * span build's driver (fk-bench-span, runtime/span.c), and the speedups they bound at worker
 * counts this machine may not have.
 *
 * The bounds: on P workers T_P >= max(T1 / P, T_inf), so the speedup T1 / T_P is at most
 * min(P, T1 / T_inf) (the work-span bound); a greedy scheduler gets within T1 / P + T_inf.
 * The burdened estimate T1 / (T1 / P + burdened span) charges every fork a steal (on the
 * child's path to the join and on the continuation), as Cilkscale's burdened-dag speedup does: where it falls well below the bound, the
 * program's parallelism is too fine-grained for the cost of moving work. */
#include "harness/util/cli.h"
#include "harness/util/env.h"
#include "harness/run/span.h"
#include "harness/results/spancsv.h"
#include "harness/util/csv.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "harness/config/config.h"
#include "harness/util/errors.h"
#include "harness/util/util.h"
#include "harness/config/variants.h"

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
            "--burden-ns calibrate: measure the burden first, on runtime variant --burden-variant V\n"
            "(default cont-lin-busy): two equal busy loops of ~0.15 ms forked and joined, 200 times,\n"
            "at P = 1 and 2, burden = T2 - T1/2 a fork-join; --calibrate-burden only prints it.\n"
            "Strands finer than the clock resolves (a few instructions): the times print \"not resolved\" (null with\n"
            "--json) and the bounds use the DAG in strands; docs/span.md says how work is measured.\n"
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

/* The last non-empty line of a driver's stderr (at most len - 1 bytes). */
static void last_line(const char *err, char *out, size_t len) {
    out[0] = 0;
    if (!err)
        return;
    const char *end = err + strlen(err);
    while (end > err && (end[-1] == '\n' || end[-1] == ' '))
        end--;
    const char *start = end;
    while (start > err && start[-1] != '\n')
        start--;
    size_t n = (size_t)(end - start) < len - 1 ? (size_t)(end - start) : len - 1;
    memcpy(out, start, n);
    out[n] = 0;
}

/* ---- the burden, calibrated ------------------------------------------------------------------ */

/* The kernel whose description says span calibrates on it (balanced: two equal busy loops of
 * ~0.15 ms, one repetition a fork-join of the two), many repetitions: on two workers a repetition's critical path is one loop, the
 * steal that hands the other to the second worker, and the join, so burden = T2 - T1 / 2
 * per repetition.  A loop much longer than a steal keeps the owner from running both itself
 * (which would cap the figure at one loop); a T2 near T1 is refused as not measurable. */
#define CAL_REPS 200
#define CAL_PAIRS 3

/* One process of the driver at `workers`: the median of its repetitions, in *t. */
static int cal_time(hx_launcher *l, int intr_fd, const char *driver, const hx_variant *v, const char *workers,
                    double *t, char *why, size_t whylen) {
    char reps[16];
    snprintf(reps, sizeof reps, "%d", CAL_REPS);
    const hx_kernel_info *ck = NULL; /* the kernel whose description says to calibrate on it */
    for (size_t i = 0; bench_descs[i] && !ck; i++)
        ck = bench_descs[i]->span_calibrate ? bench_descs[i] : NULL;
    if (!ck) {
        snprintf(why, whylen, "no kernel of this build says how to calibrate on it (span_calibrate)");
        return HX_ETOOL;
    }
    char kernel[] = "--kernel", name[32], opts[128], ow[] = "--workers", orp[] = "--reps", warmup[] = "--warmup",
         ten[] = "10";
    snprintf(name, sizeof name, "%s", ck->name);
    snprintf(opts, sizeof opts, "%s", ck->span_calibrate);
    char *argv[32] = {(char *)driver, kernel, name}, flags[6][40]; /* (at most 3 + 12 + 6 + 2 + 1 used) */
    size_t n = 3, nf = 0;
    if (strlen(ck->span_calibrate) >= sizeof opts) {
        snprintf(why, whylen, "kernel %s: its span_calibrate is too long", ck->name);
        return HX_EINTERNAL;
    }
    for (char *save = NULL, *tok = strtok_r(opts, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || nf == 6 || (size_t)(eq - tok) + 3 > sizeof flags[0]) {
            snprintf(why, whylen, "kernel %s: span_calibrate \"%s\" is not up to 6 OPTION=VALUE", ck->name,
                     ck->span_calibrate);
            return HX_EINTERNAL;
        }
        *eq = 0;
        snprintf(flags[nf], sizeof flags[nf], "--%s", tok);
        argv[n++] = flags[nf++];
        argv[n++] = eq + 1;
    }
    argv[n++] = ow, argv[n++] = (char *)workers, argv[n++] = orp, argv[n++] = reps, argv[n++] = warmup,
    argv[n++] = ten;
    const char *vargs[HX_VARIANT_MAX_ARGS]; /* (--sched, and the promotion) */
    for (size_t i = 0, nv = hx_variant_args(v, vargs); i < nv; i++)
        argv[n++] = (char *)vargs[i];
    argv[n] = NULL;
    hx_run_req rq = {argv, NULL, 120, 0, NULL, NULL};
    hx_run_res r;
    int e = hx_launcher_run(l, &rq, &r, intr_fd);
    if (e) {
        snprintf(why, whylen, "cannot run %.300s: %s", driver, strerror(-e));
        return HX_ETOOL;
    }
    if (r.killed == HX_KILLED_INTERRUPT) {
        hx_run_res_free(&r);
        return HX_EINTERRUPTED;
    }
    json_t *doc = !r.exec_errno && r.exited && r.exit_code == 0 && r.out ? json_loads(r.out, 0, NULL) : NULL;
    const json_t *times = doc ? json_object_get(doc, "times") : NULL;
    if (!json_is_array(times) || !json_array_size(times) || !json_is_true(json_object_get(doc, "verified"))) {
        char tail[240] = "";
        last_line(r.err, tail, sizeof tail);
        snprintf(why, whylen, "%.300s --kernel %s --workers %s: %s%s%s", driver, name, workers,
                 r.exec_errno ? strerror(r.exec_errno) : r.killed == HX_KILLED_TIMEOUT ? "timed out (120 s)"
                 : doc ? "no verified times in its output" : "failed",
                 tail[0] ? ": " : "", tail);
        json_decref(doc);
        hx_run_res_free(&r);
        return HX_ERUNS_FAILED;
    }
    size_t k = json_array_size(times);
    double *v_ = hx_xcalloc(k, sizeof *v_);
    for (size_t i = 0; i < k; i++)
        v_[i] = json_number_value(json_array_get(times, i));
    *t = hx_median(v_, k);
    free(v_);
    json_decref(doc);
    hx_run_res_free(&r);
    return HX_OK;
}

int hx_span_calibrate_burden(const char *variant, hx_launcher *l, int intr_fd, hx_burden *out, char *why,
                             size_t whylen) {
    hx_variant v;
    char err[256], driver[PATH_MAX];
    memset(out, 0, sizeof *out);
    if (hx_variant_parse(variant, &v, err, sizeof err)) {
        snprintf(why, whylen, "variant %s: %s", variant, err);
        return HX_EUSAGE;
    }
    if (v.kind != HX_VARIANT_RUNTIME || v.resume[0]) {
        snprintf(why, whylen, "variant %s: the burden is calibrated on a forkscope runtime variant whose tasks fork "
                 "and join (not a baseline, not a fiber variant, whose tasks park)", variant);
        return HX_EUSAGE;
    }
    if (hx_usable_cpus() < 2) {
        snprintf(why, whylen, "one CPU to run on: a steal between two workers cannot be timed here");
        return HX_EUSAGE;
    }
    if (hx_variant_driver_path(&v, driver, sizeof driver)) {
        snprintf(why, whylen, "cannot locate the driver of %s", variant);
        return HX_ETOOL;
    }
    /* pairs of processes, one worker then two: the burden is each pair's, its median kept
     * and its range reported (a pair's T2 moves with the machine by more than a steal) */
    double b[CAL_PAIRS], t1[CAL_PAIRS], t2[CAL_PAIRS];
    for (int k = 0; k < CAL_PAIRS; k++) {
        int e = cal_time(l, intr_fd, driver, &v, "1", &t1[k], why, whylen);
        if (!e)
            e = cal_time(l, intr_fd, driver, &v, "2", &t2[k], why, whylen);
        if (e)
            return e;
        b[k] = (t2[k] - t1[k] / 2) * 1e9;
    }
    out->t1 = hx_median_copy(t1, CAL_PAIRS);
    out->t2 = hx_median_copy(t2, CAL_PAIRS);
    out->lo = out->hi = b[0];
    for (int k = 1; k < CAL_PAIRS; k++) {
        out->lo = b[k] < out->lo ? b[k] : out->lo;
        out->hi = b[k] > out->hi ? b[k] : out->hi;
    }
    double m = hx_median_copy(b, CAL_PAIRS);
    out->ns = m > 0 ? m : 0;
    snprintf(out->variant, sizeof out->variant, "%s", variant);
    if (out->t2 > 0.9 * out->t1) { /* the second worker hardly helped: no steal was timed */
        snprintf(why, whylen, "on %s two workers took %.0f us a repetition against %.0f us for one: the second "
                 "worker hardly helped, so no steal's cost can be read from it (a loaded machine?)",
                 variant, out->t2 * 1e6, out->t1 * 1e6);
        return HX_ERUNS_FAILED;
    }
    return HX_OK;
}

void hx_span_burden_describe(const hx_burden *b, char *buf, size_t len) {
    snprintf(buf, len, "calibrated on %s: median of %d pairs %.0f ns (%.0f to %.0f), T1 %.1f us, T2 %.1f us a fork-join",
             b->variant, CAL_PAIRS, b->ns, b->lo, b->hi, b->t1 * 1e6, b->t2 * 1e6);
}

/* The options of `forkscope span`, parsed. */
typedef struct span_opts {
    unsigned ps[SPAN_MAX_P];
    size_t np;
    int json_out, calibrate, calibrate_only;
    const char *bvariant, *unit, *reps, *burden;
    hx_strv dargs; /* the driver's options, in order */
} span_opts;

/* argv into *o: 0, HX_CLI_HELP, or HX_EUSAGE (said). */
static int span_args(int argc, char **argv, span_opts *o) {
    const char *project = NULL;
    int bvariant_given = 0;
    static const char one_worker[] = "the span is measured by the span build on one worker; --project gives the "
                                     "worker counts to bound";
    *o = (span_opts){.ps = {1, 2, 4, 8, 16, 32, 64, 112}, .np = 8, .bvariant = "cont-lin-busy"};
    const hx_opt opts[] = {
        {"--json", NULL, HX_OPT_FLAG, &o->json_out, 0, 0, NULL, NULL},
        {"--project", NULL, HX_OPT_STR, &project, 0, 0, "a list of worker counts", NULL},
        {"--unit", NULL, HX_OPT_STR, &o->unit, 0, 0, "ns or strands", NULL},
        {"--reps", NULL, HX_OPT_STR, &o->reps, 0, 0, "a repetition count", NULL},
        {"--burden-ns", NULL, HX_OPT_STR, &o->burden, 0, 0, "a time in ns or calibrate", NULL},
        {"--burden-variant", NULL, HX_OPT_STR, &o->bvariant, 0, 0, "a runtime variant", &bvariant_given},
        {"--calibrate-burden", NULL, HX_OPT_FLAG, &o->calibrate_only, 0, 0, NULL, NULL},
        {"--workers", NULL, HX_OPT_REFUSE, NULL, 0, 0, one_worker, NULL},
        {"--variant", NULL, HX_OPT_REFUSE, NULL, 0, 0, one_worker, NULL},
        {NULL, NULL, 0, NULL, 0, 0, NULL, NULL},
    };
    hx_cli c = {.cmd = "span", .opts = opts, .usage = span_help, .pass_unknown = 1};
    int rc = hx_cli_parse(&c, argc, argv);
    o->dargs = c.rest;
    if (rc)
        return rc;
    if (project && parse_project(project, o->ps, &o->np))
        return hx_cli_usage_error("span", "option --project: '%s' is not a list of worker counts like 2,16,112 "
                                          "(at most %d)", project, SPAN_MAX_P);
    if (o->unit && strcmp(o->unit, "ns") && strcmp(o->unit, "strands"))
        return hx_cli_usage_error("span", "option --unit: '%s' is not ns or strands", o->unit);
    o->calibrate = o->burden && !strcmp(o->burden, "calibrate");
    if (bvariant_given && !o->calibrate && !o->calibrate_only)
        return hx_cli_usage_error("span", "option --burden-variant: only with --burden-ns calibrate or "
                                          "--calibrate-burden");
    if (o->calibrate_only && (o->dargs.n || (o->burden && !o->calibrate) || o->unit || o->reps))
        return hx_cli_usage_error("span", "--calibrate-burden measures the burden only (with --burden-variant V); "
                                          "to use it on a kernel: --burden-ns calibrate");
    if (o->calibrate && o->unit && !strcmp(o->unit, "strands"))
        return hx_cli_usage_error("span", "a calibrated burden is a time: not with --unit strands");
    return 0;
}

/* --burden-ns calibrate and --calibrate-burden: the burden measured on o->bvariant, in ns
 * (*ns).  0, or the code with the reason said. */
static int span_calibrate(const span_opts *o, double *ns) {
    hx_burden b;
    char why[PATH_MAX + 128], desc[256];
    hx_launcher *l = NULL;
    const char *memlimit;
    int e = hx_env_memlimit(&memlimit);
    if (e)
        return e;
    e = hx_launcher_start(&l);
    if (e) {
        fprintf(stderr, "forkscope span: cannot start the launcher process: %s\n", strerror(-e));
        return HX_EINTERNAL;
    }
    fprintf(stderr, "forkscope span: calibrating the burden on %s (two busy loops, P = 1 and 2, %d pairs)\n",
            o->bvariant, CAL_PAIRS);
    e = hx_span_calibrate_burden(o->bvariant, l, -1, &b, why, sizeof why);
    hx_launcher_stop(l);
    if (e) {
        fprintf(stderr, "forkscope span: cannot calibrate the burden: %s\n", why);
        return e;
    }
    hx_span_burden_describe(&b, desc, sizeof desc);
    fprintf(o->calibrate_only ? stdout : stderr, "burden %.0f ns a fork (%s)\n", b.ns, desc);
    *ns = b.ns;
    return HX_OK;
}

/* Runs fk-bench-span with o's options (burden: the calibrated one, NULL if none); *doc its
 * JSON, with a "span" object.  0, or the code with the reason said. */
static int span_measure(const span_opts *o, const char *burden, json_t **doc) {
    *doc = NULL;
    hx_variant v;
    memset(&v, 0, sizeof v);
    snprintf(v.driver, sizeof v.driver, "fk-bench-span");
    char path[PATH_MAX];
    if (hx_variant_driver_path(&v, path, sizeof path)) {
        fprintf(stderr, "forkscope span: cannot locate the driver fk-bench-span\n");
        return HX_EINTERNAL;
    }
    const char **dargv = hx_xcalloc(o->dargs.n + 10, sizeof *dargv);
    size_t n = 0;
    dargv[n++] = path;
    for (size_t i = 0; i < o->dargs.n; i++)
        dargv[n++] = o->dargs.v[i];
    if (o->unit) {
        dargv[n++] = "--span-unit";
        dargv[n++] = o->unit;
    }
    if (burden || o->burden) {
        dargv[n++] = "--burden-ns";
        dargv[n++] = burden ? burden : o->burden;
    }
    dargv[n++] = "--reps";
    dargv[n++] = o->reps ? o->reps : "3";
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
    *doc = json_loads(out, 0, &jerr);
    free(out);
    if (!json_is_object(*doc ? json_object_get(*doc, "span") : NULL)) {
        fprintf(stderr, "forkscope span: the driver's output has no \"span\" object%s%s\n", *doc ? "" : ": ",
                *doc ? "" : jerr.text);
        json_decref(*doc);
        *doc = NULL;
        return HX_ERUNS_FAILED;
    }
    return HX_OK;
}

/* The figures of the driver's "span" that are times or made of them: null (span --json) or
 * empty (span.csv) where the clock does not resolve the strands. */
static const char *const unresolved_times[] = {"work", "min_work", "span", "burdened_span", "last_span",
                                               "parallelism", "burdened_parallelism", NULL};

/* The measurement of doc as a table, with the bounds of proj. */
static void span_print(const json_t *doc, const json_t *proj) {
    const json_t *sp = json_object_get(doc, "span"), *dag = json_object_get(sp, "dag_in_strands");
    double work = num(sp, "work"), span = num(sp, "span"), bspan = num(sp, "burdened_span");
    double mwork = json_object_get(sp, "min_work") ? num(sp, "min_work") : work;
    int resolved = json_is_true(json_object_get(sp, "resolved"));
    int strands = !strcmp(hx_json_str(sp, "unit", "ns"), "strands");
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
    if (resolved) {
        printf("  work                 %14.4f %s (a repetition's, median)\n", work * scale, u);
        if (!strands)
            printf("  strand-median work   %14.4f %s (each strand's median time: what the span is made of)\n",
                   mwork * scale, u);
        printf("  span                 %14.4f %s\n", span * scale, u);
        printf("  parallelism          %14.1f\n", num(sp, "parallelism"));
        printf("  burdened span        %14.4f %s (a burden of %g %s a fork)\n", bspan * scale, u,
               num(sp, "burden") * (strands ? 1 : 1e-3), strands ? "strands" : "us");
        printf("  burdened parallelism %14.1f\n", num(sp, "burdened_parallelism"));
    } else { /* (the times: the strands' raw time is all the clock says) */
        printf("  work                 %14s    (the strands' raw time %.4f ms, the residue of %.0f hooks in it)\n",
               "not resolved", num(sp, "raw_work") * 1e-6, num(sp, "hooks"));
        printf("  strand-median work   %14s\n", "not resolved");
        printf("  span                 %14s\n", "not resolved");
        printf("  parallelism          %14s\n", "not resolved");
        printf("  burdened span        %14s    (a burden of %g us a fork)\n", "not resolved", num(sp, "burden") * 1e-3);
        printf("  burdened parallelism %14s\n", "not resolved");
    }
    printf("  strands %.0f, forks %.0f; %s, %d repetitions\n", num(sp, "strands"), num(sp, "forks"),
           hx_json_str(sp, "method", "?"), (int)num(sp, "reps"));
    if (dag && !strands)
        printf("  the DAG in strands: work %.0f, span %.0f, parallelism %.1f\n", num(dag, "work"), num(dag, "span"),
               num(dag, "parallelism"));
    if (!resolved)
        printf("  NOTE: what is left of the strands once the hooks' residue is off (%.2f ns a strand on average)\n"
               "  is less than twice what is uncertain in it (%.1f ns a hook: the residue taken off, %.1f ns, or\n"
               "  the clock's step, %.1f ns, for the strand and each hook inside it): the clock does not resolve\n"
               "  them.  The bounds below use the DAG in strands (every strand alike); no burdened estimate.\n",
               num(sp, "strands") > 0 ? (mwork < work ? mwork : work) / num(sp, "strands") : 0,
               fmax(num(sp, "hook_ns"), num(sp, "clock_resolution_ns")), num(sp, "hook_ns"),
               num(sp, "clock_resolution_ns"));
    printf("  %8s  %14s  %16s\n", "workers", "speedup bound", "burdened estimate");
    for (size_t k = 0; k < json_array_size(proj); k++) {
        const json_t *r = json_array_get(proj, k);
        if (resolved)
            printf("  %8d  %14.1f  %16.1f\n", (int)num(r, "workers"), num(r, "speedup_bound"),
                   num(r, "burdened_speedup"));
        else
            printf("  %8d  %14.1f  %16s\n", (int)num(r, "workers"), num(r, "speedup_bound"), "-");
    }
}

int hx_cmd_span(int argc, char **argv) {
    span_opts o;
    int rc = span_args(argc, argv, &o);
    if (rc) {
        hx_strv_free(&o.dargs);
        return rc == HX_CLI_HELP ? HX_OK : rc;
    }
    char bbuf[32];
    const char *burden = NULL;
    if (o.calibrate || o.calibrate_only) {
        double ns;
        if ((rc = span_calibrate(&o, &ns)) || o.calibrate_only) {
            hx_strv_free(&o.dargs);
            return rc;
        }
        snprintf(bbuf, sizeof bbuf, "%.0f", ns);
        burden = bbuf;
    }
    json_t *doc;
    rc = span_measure(&o, burden, &doc);
    hx_strv_free(&o.dargs);
    if (rc)
        return rc;
    /* (the parallelism is the driver's: the strand-median work over the span, both made of
     * each strand's median time; `work` is a typical repetition's.  Strands finer than the
     * clock resolves: the times mean little, the DAG's shape in strands (every strand alike)
     * bounds the speedup, and there is no burdened estimate.) */
    const json_t *sp = json_object_get(doc, "span"), *dag = json_object_get(sp, "dag_in_strands");
    double work = num(sp, "work"), bspan = num(sp, "burdened_span");
    double mwork = json_object_get(sp, "min_work") ? num(sp, "min_work") : work;
    int resolved = json_is_true(json_object_get(sp, "resolved"));
    double par = !resolved && dag ? num(dag, "parallelism") : num(sp, "parallelism");
    json_t *proj = json_array();
    for (size_t k = 0; k < o.np; k++) {
        double p = o.ps[k], bound = par < p ? par : p;
        json_t *row = json_pack("{s:i, s:f}", "workers", (int)o.ps[k], "speedup_bound", bound);
        if (resolved)
            json_object_set_new(row, "burdened_speedup", json_real(mwork > 0 ? mwork / (mwork / p + bspan) : 0));
        json_array_append_new(proj, row);
    }
    int ok = json_is_true(json_object_get(doc, "verified"));
    if (o.json_out) {
        json_t *spw = json_object_get(doc, "span");
        if (!resolved) /* (the times mean nothing: null; the raw time and the DAG in strands kept) */
            for (const char *const *t = unresolved_times; *t; t++)
                if (json_object_get(spw, *t))
                    json_object_set_new(spw, *t, json_null());
        json_object_set_new(doc, "projection", proj);
        char *s = json_dumps(doc, JSON_INDENT(1));
        if (s)
            puts(s);
        free(s);
        json_decref(doc);
        return HX_OK;
    }
    span_print(doc, proj);
    json_decref(proj);
    json_decref(doc);
    return ok ? HX_OK : HX_ERUNS_FAILED;
}

/* ---- the sweep's "span" ---------------------------------------------------------------------- */

static const char span_header[] =
    "benchmark,kernel,status,note,burden_from,unit,method,resolved,reps,work_s,min_work_s,span_s,burdened_span_s,burden_s,"
    "parallelism,burdened_parallelism,strands,forks,strand_parallelism,bound_parallelism\n";

/* The row of benchmark b in span.csv (and a line on stderr): sp is the driver's "span" object,
 * NULL if the measurement failed (status and note say how). */
static void span_row(FILE *f, const hx_bench *b, const char *status, char *note, const char *burden_from,
                     const json_t *sp, double t0) {
    for (char *p = note; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    hx_csv_str(f, b->name);
    fputc(',', f);
    hx_csv_str(f, b->kernel);
    fprintf(f, ",%s,", status);
    hx_csv_str(f, note);
    fputc(',', f);
    hx_csv_str(f, burden_from);
    if (sp) {
        int strands = !strcmp(hx_json_str(sp, "unit", "ns"), "strands");
        double k = strands ? 1 : 1e-9; /* the driver's ns to seconds */
        int resolved = json_is_true(json_object_get(sp, "resolved"));
        const json_t *dag = json_object_get(sp, "dag_in_strands");
        double spar = dag ? num(dag, "parallelism") : NAN; /* (older drivers lack the DAG in strands) */
        double mwork = json_object_get(sp, "min_work") ? num(sp, "min_work") : num(sp, "work");
        fprintf(f, ",%s,", strands ? "strands" : "s");
        hx_csv_str(f, hx_json_str(sp, "method", "?"));
        fprintf(f, ",%d,%.0f", resolved, num(sp, "reps"));
        double t = resolved ? 1 : NAN; /* (not resolved: the times empty) */
        double v[] = {num(sp, "work") * k * t, mwork * k * t, num(sp, "span") * k * t,
                      num(sp, "burdened_span") * k * t, num(sp, "burden") * k, num(sp, "parallelism") * t,
                      num(sp, "burdened_parallelism") * t, num(sp, "strands"), num(sp, "forks"), spar,
                      resolved || !dag ? num(sp, "parallelism") : spar};
        for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
            fputc(',', f);
            hx_csv_num(f, v[i]);
        }
        fputc('\n', f);
        fprintf(stderr, "forkscope: span: %s: parallelism %.1f%s (%.1f s)\n", b->name,
                resolved ? num(sp, "parallelism") : spar, resolved ? "" : " (in strands: the clock does not resolve them)",
                hx_now() - t0);
    } else {
        fputs(",,,,,,,,,,,,,,,\n", f);
        fprintf(stderr, "forkscope: span: %s: %s%s%s\n", b->name, status, note[0] ? ": " : "", note);
    }
}

/* Measures one benchmark; writes its row to f. 0 if ok, 1 if it failed (row written),
 * HX_EINTERRUPTED, or HX_ETOOL if the launcher is gone. */
static int span_one(const hx_config *cfg, const hx_bench *b, const char *driver, double burden_ns,
                    const char *burden_from, hx_launcher *l, int intr_fd, FILE *f) {
    char reps[16], burden[32];
    snprintf(reps, sizeof reps, "%u", cfg->span_reps ? cfg->span_reps : 3);
    snprintf(burden, sizeof burden, "%.0f", burden_ns);
    char **argv = hx_xcalloc(b->nargs + 10, sizeof *argv);
    size_t n = 0;
    argv[n++] = (char *)driver;
    argv[n++] = (char *)"--kernel";
    argv[n++] = (char *)b->kernel;
    for (size_t i = 0; i < b->nargs; i++)
        argv[n++] = b->args[i];
    argv[n++] = (char *)"--reps";
    argv[n++] = reps;
    if (burden_ns >= 0) {
        argv[n++] = (char *)"--burden-ns";
        argv[n++] = burden;
    }
    argv[n] = NULL;
    /* The span build runs a kernel 1.2-100x slower than a plain build (fib's strands are a
     * few instructions; its logging repetition is the slowest), each of reps times: a
     * generous limit, scaled from the runs'; the runs' memory limit as it is. */
    double limit = cfg->time_limit_s > 0 ? cfg->time_limit_s * 50 * (cfg->span_reps ? cfg->span_reps : 3) : 0;
    hx_run_req rq = {argv, NULL, limit, cfg->memory_limit_mib << 20, NULL, NULL};
    hx_run_res r;
    double t0 = hx_now();
    int e = HX_OK;
    if (hx_kernels_block(b->kernel)) { /* (its tasks block on each other: no fork-join DAG) */
        memset(&r, 0, sizeof r);
        r.exited = 1;
        r.exit_code = -1;
    } else {
        e = hx_launcher_run(l, &rq, &r, intr_fd);
    }
    free(argv);
    if (e) {
        fprintf(stderr, "forkscope: span: cannot run %s: %s\n", driver, strerror(-e));
        return HX_ETOOL;
    }
    if (r.killed == HX_KILLED_INTERRUPT) {
        hx_run_res_free(&r);
        return HX_EINTERRUPTED;
    }
    const char *status = "ok";
    char note[512] = "";
    json_t *doc = NULL;
    const json_t *sp = NULL;
    if (r.exec_errno) {
        status = "error";
        snprintf(note, sizeof note, "cannot execute %.300s: %s%s", driver, strerror(r.exec_errno),
                 r.exec_errno == ENOENT ? " (make build/bin/fk-bench-span)" : "");
    } else if (r.killed == HX_KILLED_TIMEOUT) {
        status = "timeout";
        snprintf(note, sizeof note, "stopped after %.0f s", limit);
    } else if (r.killed == HX_KILLED_MEMORY) {
        status = "memory";
    } else if (r.signaled) {
        status = "crash";
        snprintf(note, sizeof note, "signal %d", r.signo);
    } else if (r.exit_code == -1) {
        status = "unsupported";
        snprintf(note, sizeof note, "%s's tasks block on each other (fibers that park): no fork-join DAG "
                                    "for the span build to time", b->kernel);
    } else if (r.exit_code == 3) {
        status = "wrong";
        last_line(r.err, note, sizeof note);
    } else if (r.exit_code != 0) {
        status = "error";
        char tail[400];
        last_line(r.err, tail, sizeof tail);
        snprintf(note, sizeof note, "exit status %d: %s", r.exit_code, tail);
    } else {
        json_error_t jerr;
        doc = json_loads(r.out ? r.out : "", 0, &jerr);
        sp = doc ? json_object_get(doc, "span") : NULL;
        if (!json_is_object(sp)) {
            status = "error";
            snprintf(note, sizeof note, "no \"span\" object in the driver's output%s%s", doc ? "" : ": ",
                     doc ? "" : jerr.text);
        }
    }
    if (sp) { /* a row the readers can use, or an error (a span of 0: nothing to bound with) */
        const json_t *dag = json_object_get(sp, "dag_in_strands");
        double bound = json_is_true(json_object_get(sp, "resolved")) || !dag ? num(sp, "parallelism")
                                                                             : num(dag, "parallelism");
        if (!(bound >= 1)) {
            status = "error";
            snprintf(note, sizeof note, "the driver's parallelism is %g: no bound", bound);
            sp = NULL;
        }
    }
    span_row(f, b, status, note, burden_from, sp, t0);
    json_decref(doc);
    hx_run_res_free(&r);
    return strcmp(status, "ok") && strcmp(status, "unsupported"); /* (said why: not a failure) */
}

/* Has benchmark `name` a row that needs no new measurement (ok, or unsupported)? */
static int span_done(const hx_spancsv_row *rows, size_t n, const char *name) {
    for (size_t j = 0; j < n; j++)
        if (!strcmp(rows[j].benchmark, name) && (!strcmp(rows[j].status, "ok") || !strcmp(rows[j].status, "unsupported")))
            return 1;
    return 0;
}

/* A sweep's calibrated burden ("burden_ns": "calibrate"), on the first runtime variant whose
 * tasks fork and join (no fibers): *burden_ns and from[] set; a failed calibration leaves the
 * driver's default (-1) with the reason in from.  0, or HX_EINTERRUPTED. */
static int span_sweep_burden(const hx_config *cfg, hx_launcher *l, int intr_fd, double *burden_ns, char *from,
                             size_t fromlen) {
    const char *var = "cont-lin-busy";
    for (size_t i = 0; i < cfg->nvariants; i++)
        if (cfg->variants[i].kind == HX_VARIANT_RUNTIME && !cfg->variants[i].drivers[0] &&
            !cfg->variants[i].resume[0]) {
            var = cfg->variants[i].base;
            break;
        }
    hx_burden b;
    char why[PATH_MAX + 128];
    fprintf(stderr, "forkscope: span: calibrating the burden on %s (two busy loops, P = 1 and 2, %d pairs)\n", var,
            CAL_PAIRS);
    int e = hx_span_calibrate_burden(var, l, intr_fd, &b, why, sizeof why);
    if (e == HX_EINTERRUPTED)
        return e;
    if (e) { /* the default burden, and why, rather than no figures at all */
        *burden_ns = -1;
        snprintf(from, fromlen, "the default: the calibration on %s failed (%.180s)", var, why);
        fprintf(stderr, "forkscope: span: cannot calibrate the burden (%s): the driver's default is used\n", why);
    } else {
        *burden_ns = b.ns;
        hx_span_burden_describe(&b, from, fromlen);
        fprintf(stderr, "forkscope: span: burden %.0f ns a fork (%s)\n", *burden_ns, from);
    }
    return HX_OK;
}

/* span.csv opened to append, a last line cut short by a crash (no newline) dropped first:
 * not a row (hx_spancsv_load); *len its length then (0: write the header).  NULL if it cannot
 * be used (said). */
static FILE *span_csv_open(const char *path, size_t *len) {
    *len = 0;
    char *text = hx_read_file(path, len);
    if (text && *len && text[*len - 1] != '\n') {
        size_t keep = *len;
        while (keep && text[keep - 1] != '\n')
            keep--;
        if (truncate(path, (off_t)keep)) {
            fprintf(stderr, "forkscope: span: cannot drop the torn last line of %s: %s\n", path, strerror(errno));
            free(text);
            return NULL;
        }
        *len = keep;
    }
    if (!text)
        *len = 0;
    free(text);
    FILE *f = fopen(path, "a");
    if (!f)
        fprintf(stderr, "forkscope: cannot open %s: %s\n", path, strerror(errno));
    return f;
}

int hx_span_sweep(const hx_config *cfg, const char *dir, hx_launcher *l, int intr_fd) {
    hx_spancsv_row *done = NULL;
    size_t ndone = 0, todo = 0, want = 0;
    char err[512], path[PATH_MAX];
    if (hx_spancsv_load(dir, &done, &ndone, err, sizeof err)) {
        fprintf(stderr, "forkscope: span: %s: not measuring over it (move it away to start afresh)\n", err);
        return HX_ERUNS_FAILED;
    }
    for (size_t i = 0; i < cfg->nbenchmarks; i++) {
        want += cfg->benchmarks[i].span;
        todo += cfg->benchmarks[i].span && !span_done(done, ndone, cfg->benchmarks[i].name);
    }
    if (!todo) { /* (nothing asked, or all measured before: a resumed sweep) */
        free(done);
        return HX_OK;
    }
    hx_variant v;
    memset(&v, 0, sizeof v);
    snprintf(v.driver, sizeof v.driver, "fk-bench-span");
    char driver[PATH_MAX];
    if (hx_variant_driver_path(&v, driver, sizeof driver)) {
        free(done);
        fprintf(stderr, "forkscope: span: cannot locate the driver fk-bench-span\n");
        return HX_ETOOL;
    }
    /* the burden: given, the driver's default, or calibrated on the first runtime variant
     * whose tasks fork and join (no fibers) */
    double burden_ns = cfg->span_burden_ns;
    char from[256];
    snprintf(from, sizeof from, "%s", burden_ns >= 0 ? "given" : "the default");
    int timed = 0; /* benchmarks to measure that the span build runs (none whose tasks block) */
    for (size_t i = 0; i < cfg->nbenchmarks; i++)
        timed += cfg->benchmarks[i].span && !hx_kernels_block(cfg->benchmarks[i].kernel) &&
                 !span_done(done, ndone, cfg->benchmarks[i].name);
    if (burden_ns == -2 && timed && span_sweep_burden(cfg, l, intr_fd, &burden_ns, from, sizeof from)) {
        free(done);
        return HX_EINTERRUPTED;
    }
    snprintf(path, sizeof path, "%s/span.csv", dir);
    size_t len;
    FILE *f = span_csv_open(path, &len);
    if (!f) {
        free(done);
        return HX_ERUNS_FAILED;
    }
    if (len == 0)
        fputs(span_header, f);
    int rc = HX_OK;
    size_t k = 0;
    for (size_t i = 0; i < cfg->nbenchmarks && (rc == HX_OK || rc == HX_ERUNS_FAILED); i++) {
        const hx_bench *b = &cfg->benchmarks[i];
        if (!b->span)
            continue;
        k++;
        if (span_done(done, ndone, b->name))
            continue;
        fprintf(stderr, "forkscope: span: %s (%zu of %zu): work and span with %s on one worker\n", b->name, k, want,
                driver);
        int e = span_one(cfg, b, driver, burden_ns, from, l, intr_fd, f);
        if (fflush(f) || fsync(fileno(f))) {
            fprintf(stderr, "forkscope: cannot write %s: %s\n", path, strerror(errno));
            e = HX_EIO;
        }
        if (e == 1)
            rc = HX_ERUNS_FAILED;
        else if (e)
            rc = e;
    }
    if (fclose(f) && rc == HX_OK)
        rc = HX_EIO;
    free(done);
    if (rc == HX_EINTERRUPTED)
        fprintf(stderr, "forkscope: span: interrupted; what was measured is in %s\n", path);
    else if (rc == HX_EIO || rc == HX_ETOOL)
        rc = HX_ERUNS_FAILED; /* (said above; the runs' analysis goes on) */
    return rc;
}
