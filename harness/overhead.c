/* overhead.c — paired time ratios and callgrind instruction counts (see overhead.h). */
#include "harness/overhead.h"
#include "harness/util.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/errors.h"
#include "harness/variants.h"

/* ---- instructions --------------------------------------------------------------------------- */

/* The full path of program `name` found in PATH, or -1. */
static int find_in_path(const char *name, char *out, size_t len) {
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t n = colon ? (size_t)(colon - path) : strlen(path);
        if (n && (size_t)snprintf(out, len, "%.*s/%s", (int)n, path, name) < len && access(out, X_OK) == 0)
            return 0;
        path += n + (colon ? 1 : 0);
    }
    return -1;
}

static double fib_calls(int n) {
    double a = 0, b = 1; /* fib(n + 1) */
    for (int i = 0; i < n + 1; i++) {
        double t = a + b;
        a = b;
        b = t;
    }
    return 2 * a - 1;
}

/* Whether a function name (as callgrind_annotate prints it, maybe with a 'N recursion
 * suffix) is one of the kernel's task functions. */
static int task_function(const char *fn, size_t len, const char *kernel) {
    size_t k = strlen(kernel);
    if (len < k || strncmp(fn, kernel, k))
        return 0;
    const char *rest = fn + k;
    size_t rl = len - k;
    if (rl == 0 || *rest == '\'' || *rest == '.')
        return 1;
    if (rl >= 2 && !strncmp(rest, "__", 2))
        return 1;
    return rl >= 7 && !strncmp(rest, "_serial", 7) && (rl == 7 || rest[7] == '\'' || rest[7] == '.');
}

int hx_icount_parse(const char *text, const char *kernel, unsigned long long *sum) {
    *sum = 0;
    int any = 0;
    for (const char *line = text; *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        const char *p = line;
        while (p < line + len && *p == ' ')
            p++;
        unsigned long long v = 0;
        int digits = 0;
        while (p < line + len && ((*p >= '0' && *p <= '9') || *p == ',')) {
            if (*p != ',')
                v = v * 10 + (unsigned long long)(*p - '0'), digits++;
            p++;
        }
        if (digits && p + 2 < line + len && p[0] == ' ' && p[1] == '(') {
            const char *close = memchr(p, ')', (size_t)(line + len - p));
            if (close) {
                p = close + 1;
                while (p < line + len && *p == ' ')
                    p++;
                const char *end = p;
                while (end < line + len && *end != ' ')
                    end++;
                const char *colon = NULL;
                for (const char *q = p; q < end; q++)
                    if (*q == ':')
                        colon = q;
                const char *fn = colon ? colon + 1 : p;
                if (task_function(fn, (size_t)(end - fn), kernel)) {
                    *sum += v;
                    any = 1;
                }
            }
        }
        line += len + (eol ? 1 : 0);
    }
    return any ? 0 : -ENOENT;
}

/* Runs argv through the launcher; returns 0 if it exited 0 (then *res is filled and must be
 * freed), else prints why and returns -1. */
static int run_tool(hx_launcher *l, char **argv, int intr_fd, hx_run_res *res) {
    hx_run_req rq = {argv, NULL, 3600, 0, NULL, NULL};
    int e = hx_launcher_run(l, &rq, res, intr_fd);
    if (e) {
        fprintf(stderr, "forkscope: instructions: cannot run %s: %s\n", argv[0], strerror(-e));
        return -1;
    }
    if (res->exec_errno || !res->exited || res->exit_code != 0) {
        fprintf(stderr, "forkscope: instructions: %s failed (%s %d)%s%s\n", argv[0],
                res->exec_errno ? "cannot execute, errno" : res->exited ? "exit status" : "signal",
                res->exec_errno ? res->exec_errno : res->exited ? res->exit_code : res->signo,
                res->err_len ? ": " : "", res->err_len ? res->err : "");
        hx_run_res_free(res);
        return -1;
    }
    return 0;
}

/* Instructions in the task's functions for one driver at fib(n); callgrind's file in dir. */
static int count_one(hx_launcher *l, int intr_fd, const char *valgrind, const char *annotate, const char *driver_path,
                     const char *driver, const char *kernel, int n, const char *dir, unsigned long long *ir) {
    char out[PATH_MAX], arg_out[PATH_MAX + 32], nbuf[16];
    snprintf(out, sizeof out, "%s/callgrind/%s-%s%d.out", dir, driver, kernel, n);
    snprintf(arg_out, sizeof arg_out, "--callgrind-out-file=%s", out);
    snprintf(nbuf, sizeof nbuf, "%d", n);
    struct stat st;
    hx_run_res r;
    if (stat(out, &st) != 0 || st.st_size == 0) { /* (kept from an earlier run otherwise) */
        char tool[] = "--tool=callgrind", a_kernel[] = "--kernel", a_n[] = "--n", a_workers[] = "--workers",
             one[] = "1", a_reps[] = "--reps", a_warmup[] = "--warmup", zero[] = "0";
        char *argv[] = {(char *)valgrind, tool, arg_out, (char *)driver_path, a_kernel, (char *)kernel,
                        a_n, nbuf, a_workers, one, a_reps, one, a_warmup, zero, NULL};
        if (run_tool(l, argv, intr_fd, &r))
            return -1;
        hx_run_res_free(&r);
    }
    char thr[] = "--threshold=100", noauto[] = "--auto=no";
    char *argv[] = {(char *)annotate, thr, noauto, out, NULL};
    if (run_tool(l, argv, intr_fd, &r))
        return -1;
    int e = hx_icount_parse(r.out, kernel, ir);
    hx_run_res_free(&r);
    if (e)
        fprintf(stderr, "forkscope: instructions: no function of task %s in %s (built without symbols?)\n", kernel,
                out);
    return e;
}

int hx_icount_run(const hx_config *cfg, const char *dir, hx_launcher *l, int intr_fd) {
    if (!cfg->icount_n[1])
        return HX_OK;
    char valgrind[PATH_MAX], annotate[PATH_MAX], cgdir[PATH_MAX];
    if (find_in_path("valgrind", valgrind, sizeof valgrind) ||
        find_in_path("callgrind_annotate", annotate, sizeof annotate)) {
        fprintf(stderr, "forkscope: instructions: valgrind (callgrind, callgrind_annotate) is not on PATH: "
                        "apt-get install valgrind, or remove \"instructions\" from the config\n");
        return HX_ETOOL;
    }
    snprintf(cgdir, sizeof cgdir, "%s/callgrind", dir);
    if (mkdir(cgdir, 0777) && errno != EEXIST) {
        fprintf(stderr, "forkscope: cannot create %s: %s\n", cgdir, strerror(errno));
        return HX_EIO;
    }
    const char *kernel = cfg->icount_kernel;
    int n1 = cfg->icount_n[0], n2 = cfg->icount_n[1];
    double calls1 = fib_calls(n1), calls2 = fib_calls(n2);
    /* One row per driver executable: a variant of another build ("drivers") is its own row,
     * labelled with the variant's name (two builds of one variant would otherwise share a
     * label, and a callgrind file). */
    struct row {
        char driver[96]; /* fk-bench-X, or NAME:fk-bench-X for another build's */
        char *path;
        unsigned long long ir1, ir2;
        double per_call;
    } rows[64];
    size_t nrows = 0;
    double serial = NAN;
    int rc = HX_OK;
    for (size_t i = 0; i < cfg->nvariants && nrows < 64 && rc == HX_OK; i++) {
        const hx_variant *v = &cfg->variants[i];
        if (v->kind == HX_VARIANT_BASELINE || v->kind == HX_VARIANT_COMMAND)
            continue;
        char path[PATH_MAX];
        if (hx_variant_driver_path(v, path, sizeof path)) {
            fprintf(stderr, "forkscope: instructions: cannot find the driver of %s\n", v->name);
            rc = HX_ETOOL;
            break;
        }
        int seen = 0;
        for (size_t k = 0; k < nrows; k++)
            seen |= !strcmp(rows[k].path, path);
        if (seen)
            continue;
        struct row *r = &rows[nrows];
        if (v->drivers[0])
            snprintf(r->driver, sizeof r->driver, "%s:%s", v->name, v->driver);
        else
            snprintf(r->driver, sizeof r->driver, "%s", v->driver);
        r->path = hx_xstrdup(path);
        nrows++;
        const char *file = v->drivers[0] ? v->name : v->driver; /* (names: [A-Za-z0-9_.-]) */
        fprintf(stderr, "forkscope: instructions: %s, %s(%d) and %s(%d) under callgrind\n", r->driver, kernel, n1,
                kernel, n2);
        if (count_one(l, intr_fd, valgrind, annotate, path, file, kernel, n1, dir, &r->ir1) ||
            count_one(l, intr_fd, valgrind, annotate, path, file, kernel, n2, dir, &r->ir2)) {
            rc = HX_ERUNS_FAILED;
            break;
        }
        r->per_call = ((double)r->ir2 - (double)r->ir1) / (calls2 - calls1);
        if (v->kind == HX_VARIANT_SERIAL && !v->drivers[0])
            serial = r->per_call;
    }
    for (size_t k = 0; k < nrows; k++)
        free(rows[k].path);
    if (rc != HX_OK)
        return rc;
    char path[PATH_MAX], tmp[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/instructions.csv", dir);
    FILE *f = hx_atomic_open(path, tmp, sizeof tmp);
    if (!f) {
        fprintf(stderr, "forkscope: cannot write %s: %s\n", tmp, strerror(errno));
        return HX_EIO;
    }
    fprintf(f, "driver,kernel,n1,n2,instructions_n1,instructions_n2,calls_n1,calls_n2,per_call,vs_serial\n");
    fprintf(stderr, "forkscope: instructions per %s call (callgrind, %s(%d) - %s(%d)):\n", kernel, kernel, n2, kernel,
            n1);
    for (size_t k = 0; k < nrows; k++) {
        fprintf(f, "%s,%s,%d,%d,%llu,%llu,%.0f,%.0f,%.3f,", rows[k].driver, kernel, n1, n2, rows[k].ir1, rows[k].ir2,
                calls1, calls2, rows[k].per_call);
        if (isnan(serial))
            fputs("\n", f);
        else
            fprintf(f, "%.3f\n", rows[k].per_call / serial);
        fprintf(stderr, "  %-22s %7.2f", rows[k].driver, rows[k].per_call);
        if (!isnan(serial))
            fprintf(stderr, "  (%.2fx serial)", rows[k].per_call / serial);
        fputc('\n', stderr);
    }
    rc = hx_atomic_commit(f, tmp, path);
    if (rc) {
        fprintf(stderr, "forkscope: cannot write %s: %s\n", path, strerror(-rc));
        return HX_EIO;
    }
    return HX_OK;
}

/* ---- the report section ----------------------------------------------------------------------- */

typedef struct {
    char bench[64], variant[64];
    long workers, rep;
    double time;
} timed_run;

static size_t load_runs(const char *dir, timed_run **out) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/raw.jsonl", dir);
    FILE *f = fopen(path, "r");
    *out = NULL;
    if (!f)
        return 0;
    size_t n = 0, cap = 0;
    char *line = NULL;
    size_t len = 0;
    while (getline(&line, &len, f) > 0) {
        json_t *r = json_loads(line, 0, NULL);
        if (!r)
            continue;
        const char *kind = json_string_value(json_object_get(r, "kind"));
        const char *status = json_string_value(json_object_get(r, "status"));
        const char *bench = json_string_value(json_object_get(r, "benchmark"));
        const char *variant = json_string_value(json_object_get(r, "variant"));
        json_t *t = json_object_get(r, "time_s");
        if (kind && !strcmp(kind, "timed") && status && !strcmp(status, "ok") && bench && variant && json_is_number(t)) {
            if (n == cap) {
                cap = cap ? 2 * cap : 256;
                timed_run *nr = realloc(*out, cap * sizeof *nr);
                if (!nr)
                    break;
                *out = nr;
            }
            timed_run *x = &(*out)[n++];
            snprintf(x->bench, sizeof x->bench, "%s", bench);
            snprintf(x->variant, sizeof x->variant, "%s", variant);
            x->workers = (long)json_integer_value(json_object_get(r, "workers"));
            x->rep = (long)json_integer_value(json_object_get(r, "rep"));
            x->time = json_number_value(t);
        }
        json_decref(r);
    }
    free(line);
    fclose(f);
    return n;
}

static const timed_run *find_run(const timed_run *r, size_t n, const char *bench, const char *variant, long P,
                                 long rep) {
    for (size_t i = 0; i < n; i++)
        if (r[i].workers == P && r[i].rep == rep && !strcmp(r[i].bench, bench) && !strcmp(r[i].variant, variant))
            return &r[i];
    return NULL;
}

/* Median over rounds of num/den ratios: ratio(k) = T(a, Pa, k) / T(b, Pb, k). */
static int paired_median(const timed_run *r, size_t n, const char *bench, const char *va, long pa, const char *vb,
                         long pb, double *med, size_t *rounds) {
    double *v = malloc((n + 1) * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; v && i < n; i++) {
        if (r[i].workers != pa || strcmp(r[i].bench, bench) || strcmp(r[i].variant, va))
            continue;
        const timed_run *o = find_run(r, n, bench, vb, pb, r[i].rep);
        if (o && o->time > 0)
            v[k++] = r[i].time / o->time;
    }
    *rounds = k;
    if (k)
        *med = hx_median(v, k);
    free(v);
    return k ? 0 : -1;
}

static void write_instructions(FILE *f, const char *dir) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/instructions.csv", dir);
    FILE *in = fopen(path, "r");
    if (!in)
        return;
    char line[512];
    int header = 1, any = 0;
    while (fgets(line, sizeof line, in)) {
        if (header) {
            header = 0;
            continue;
        }
        char driver[96], kernel[32];
        int n1, n2;
        double per, vs = NAN;
        int got = sscanf(line, "%95[^,],%31[^,],%d,%d,%*[^,],%*[^,],%*[^,],%*[^,],%lf,%lf", driver, kernel, &n1, &n2,
                         &per, &vs);
        if (got < 5)
            continue;
        if (!any) {
            fprintf(f, "### Instructions per %s call\n\n"
                       "callgrind, in the task's own functions, %s(%d) minus %s(%d) over the calls between them, "
                       "one worker (exact and repeatable: see harness/overhead.h).\n\n"
                       "| driver | instructions per call | × serial |\n|---|---:|---:|\n",
                    kernel, kernel, n2, kernel, n1);
            any = 1;
        }
        fprintf(f, "| %s | %.2f | ", driver, per);
        if (got == 6 && !isnan(vs))
            fprintf(f, "%.2f |\n", vs);
        else
            fputs(" |\n", f);
    }
    if (any)
        fputc('\n', f);
    fclose(in);
}

void hx_overhead_write_md(FILE *f, const char *dir) {
    timed_run *r;
    size_t n = load_runs(dir, &r);
    int heading = 0;
    char done[64][64];
    size_t ndone = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(r[i].variant, "serial") || r[i].workers != 1)
            continue;
        const char *bench = r[i].bench;
        int seen = 0;
        for (size_t k = 0; k < ndone; k++)
            seen |= !strcmp(done[k], bench);
        if (seen || ndone == 64)
            continue;
        snprintf(done[ndone++], sizeof done[0], "%s", bench);
        if (!heading) {
            fputs("## Overhead against the serial projection\n\n"
                  "Medians over rounds of ratios taken within a round (repetition k of every cell runs in round k "
                  "of an interleaved sweep): T1/Ts = T(variant, P = 1) / T(serial), Ts/T2 = T(serial) / "
                  "T(variant, P = 2).\n\n",
                  f);
            heading = 1;
        }
        fprintf(f, "### %s\n\n| variant | T1/Ts | Ts/T2 | rounds |\n|---|---:|---:|---:|\n", bench);
        char vdone[64][64];
        size_t nv = 0;
        for (size_t j = 0; j < n; j++) {
            if (strcmp(r[j].bench, bench) || !strcmp(r[j].variant, "serial"))
                continue;
            int vs = 0;
            for (size_t k = 0; k < nv; k++)
                vs |= !strcmp(vdone[k], r[j].variant);
            if (vs || nv == 64)
                continue;
            snprintf(vdone[nv++], sizeof vdone[0], "%s", r[j].variant);
            double t1 = NAN, t2 = NAN;
            size_t n1 = 0, n2 = 0;
            paired_median(r, n, bench, r[j].variant, 1, "serial", 1, &t1, &n1);
            paired_median(r, n, bench, "serial", 1, r[j].variant, 2, &t2, &n2);
            char a[32] = "-", b[32] = "-";
            if (n1)
                snprintf(a, sizeof a, "%.2f", t1);
            if (n2)
                snprintf(b, sizeof b, "%.2f", t2);
            fprintf(f, "| %s | %s | %s | %zu |\n", r[j].variant, a, b, n1 > n2 ? n1 : n2);
        }
        fputc('\n', f);
    }
    free(r);
    write_instructions(f, dir);
}
