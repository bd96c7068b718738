/* icount.c — instructions, data reads and writes per task counted by callgrind (see icount.h). */
#include "harness/run/icount.h"
#include "harness/util/util.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/util/errors.h"
#include "harness/config/kernels.h"
#include "harness/config/variants.h"

/* ---- instructions --------------------------------------------------------------------------- */


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

/* One column of an annotate line at *pp (before line_end): "N (P%)" (N with thousands
 * commas), "0" (a zero count: no percentage) or "." (none: zero); 1 and *v with *pp past
 * it, or 0 if *pp is not a column. */
static int parse_column(const char **pp, const char *line_end, unsigned long long *v) {
    const char *p = *pp;
    if (*p == '.' && (p + 1 == line_end || p[1] == ' ')) {
        *v = 0;
        *pp = p + 1;
        return 1;
    }
    unsigned long long x = 0;
    int digits = 0;
    while (p < line_end && ((*p >= '0' && *p <= '9') || *p == ',')) {
        if (*p != ',')
            x = x * 10 + (unsigned long long)(*p - '0'), digits++;
        p++;
    }
    if (digits && !x && (p == line_end || *p == ' ') && (p == line_end || p + 1 == line_end || p[1] != '(')) {
        *v = 0;
        *pp = p;
        return 1;
    }
    if (!digits || p + 2 >= line_end || p[0] != ' ' || p[1] != '(')
        return 0;
    const char *close = memchr(p, ')', (size_t)(line_end - p));
    if (!close)
        return 0;
    *v = x;
    *pp = close + 1;
    return 1;
}

int hx_icount_parse3(const char *text, const char *kernel, unsigned long long sum[3]) {
    sum[0] = sum[1] = sum[2] = 0;
    int any = 0;
    for (const char *line = text; *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        const char *p = line, *le = line + len;
        unsigned long long col[3] = {0, 0, 0};
        int ncols = 0, numbers = 0;
        for (;;) { /* the event columns, then the function */
            while (p < le && *p == ' ')
                p++;
            unsigned long long v;
            if (p >= le || !parse_column(&p, le, &v))
                break;
            if (ncols < 3)
                col[ncols] = v;
            ncols++;
            numbers += p[-1] != '.';
        }
        if (numbers && p < le) {
            const char *end = p;
            while (end < le && *end != ' ')
                end++;
            const char *colon = NULL;
            for (const char *q = p; q < end; q++)
                if (*q == ':')
                    colon = q;
            const char *fn = colon ? colon + 1 : p;
            if (task_function(fn, (size_t)(end - fn), kernel)) {
                for (int k = 0; k < 3; k++)
                    sum[k] += col[k];
                any = 1;
            }
        }
        line += len + (eol ? 1 : 0);
    }
    return any ? 0 : -ENOENT;
}

int hx_icount_parse(const char *text, const char *kernel, unsigned long long *sum) {
    unsigned long long s[3];
    int e = hx_icount_parse3(text, kernel, s);
    *sum = s[0];
    return e;
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

/* Whether callgrind's file at path counts data reads and writes: its "events:" line names
 * Dr and Dw (a file kept from a run without --cache-sim=yes counts instructions only). */
static int has_data_events(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[1024];
    int dr = 0, dw = 0, found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "fn=", 3) || !strncmp(line, "fl=", 3) || !strncmp(line, "ob=", 3))
            break; /* past the header */
        if (strncmp(line, "events:", 7))
            continue;
        found = 1;
        for (char *save = NULL, *t = strtok_r(line + 7, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
            dr |= !strcmp(t, "Dr");
            dw |= !strcmp(t, "Dw");
        }
    }
    fclose(f);
    return dr && dw;
}

/* Instructions, data reads and data writes (c[0], c[1], c[2]) in the task's functions for one
 * driver at fib(n); callgrind's file in dir. */
static int count_one(hx_launcher *l, int intr_fd, const char *valgrind, const char *annotate, const char *driver_path,
                     const char *driver, const char *kernel, int n, const char *dir, unsigned long long c[3]) {
    char out[PATH_MAX], arg_out[PATH_MAX + 32], nbuf[16];
    snprintf(out, sizeof out, "%s/callgrind/%s-%s%d.out", dir, driver, kernel, n);
    snprintf(arg_out, sizeof arg_out, "--callgrind-out-file=%s", out);
    snprintf(nbuf, sizeof nbuf, "%d", n);
    struct stat st;
    hx_run_res r;
    /* A file kept from an earlier run is reused, unless it lacks Dr and Dw (an earlier
     * version of this ran callgrind without the cache simulation): run it again. */
    if (stat(out, &st) != 0 || st.st_size == 0 || !has_data_events(out)) {
        char tool[] = "--tool=callgrind", cache[] = "--cache-sim=yes", a_kernel[] = "--kernel", a_n[] = "--n",
             a_workers[] = "--workers", one[] = "1", a_reps[] = "--reps", a_warmup[] = "--warmup", zero[] = "0";
        char *argv[] = {(char *)valgrind, tool, cache, arg_out, (char *)driver_path, a_kernel, (char *)kernel,
                        a_n, nbuf, a_workers, one, a_reps, one, a_warmup, zero, NULL};
        if (run_tool(l, argv, intr_fd, &r))
            return -1;
        hx_run_res_free(&r);
        if (!has_data_events(out)) {
            fprintf(stderr, "forkscope: instructions: %s counts no data reads and writes (events Dr, Dw)\n", out);
            return -1;
        }
    }
    char thr[] = "--threshold=100", noauto[] = "--auto=no", show[] = "--show=Ir,Dr,Dw";
    char *argv[] = {(char *)annotate, thr, noauto, show, out, NULL};
    if (run_tool(l, argv, intr_fd, &r))
        return -1;
    int e = hx_icount_parse3(r.out, kernel, c);
    hx_run_res_free(&r);
    if (e)
        fprintf(stderr, "forkscope: instructions: no function of task %s in %s (built without symbols?)\n", kernel,
                out);
    return e;
}

/* A driver's counts: Ir, Dr, Dw at n1 and n2, and per call. */
struct icount_row {
    char driver[96]; /* fk-bench-X, or NAME:fk-bench-X for another build's */
    char *path;
    unsigned long long c1[3], c2[3]; /* Ir, Dr, Dw at n1 and n2 */
    double per[3];                   /* ... per call */
};

/* Writes dir/instructions.csv from the rows (and a summary on stderr); serial[e] is NAN
 * when the serial projection is not among them. */
static int write_csv(const char *dir, const char *kernel, int n1, int n2, double calls1, double calls2,
                     const struct icount_row *rows, size_t nrows, const double serial[3]) {
    char path[PATH_MAX], tmp[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/instructions.csv", dir);
    FILE *f = hx_atomic_open(path, tmp, sizeof tmp);
    if (!f) {
        fprintf(stderr, "forkscope: cannot write %s: %s\n", tmp, strerror(errno));
        return HX_EIO;
    }
    fprintf(f, "driver,kernel,n1,n2,instructions_n1,instructions_n2,calls_n1,calls_n2,per_call,vs_serial,"
               "dr_n1,dr_n2,dw_n1,dw_n2,dr_per_call,dw_per_call,dr_vs_serial,dw_vs_serial\n");
    fprintf(stderr,
            "forkscope: instructions (Ir), data reads (Dr) and writes (Dw) per %s call (callgrind, %s(%d) - %s(%d)):\n",
            kernel, kernel, n2, kernel, n1);
    for (size_t k = 0; k < nrows; k++) {
        const struct icount_row *r = &rows[k];
        char vs[3][32];
        double ratio[3];
        for (int e = 0; e < 3; e++) { /* empty without serial among the variants */
            vs[e][0] = 0;
            ratio[e] = !isnan(serial[e]) && serial[e] > 0 ? r->per[e] / serial[e] : NAN;
            if (!isnan(ratio[e]))
                snprintf(vs[e], sizeof vs[e], "%.3f", ratio[e]);
        }
        fprintf(f, "%s,%s,%d,%d,%llu,%llu,%.0f,%.0f,%.3f,%s,%llu,%llu,%llu,%llu,%.3f,%.3f,%s,%s\n", r->driver, kernel,
                n1, n2, r->c1[0], r->c2[0], calls1, calls2, r->per[0], vs[0], r->c1[1], r->c2[1], r->c1[2], r->c2[2],
                r->per[1], r->per[2], vs[1], vs[2]);
        fprintf(stderr, "  %-22s %7.2f Ir %6.2f Dr %6.2f Dw", r->driver, r->per[0], r->per[1], r->per[2]);
        if (!isnan(ratio[0]))
            fprintf(stderr, "  (%.2fx serial; Dr %.2fx, Dw %.2fx)", ratio[0], ratio[1], ratio[2]);
        fputc('\n', stderr);
    }
    int rc = hx_atomic_commit(f, tmp, path);
    if (rc) {
        fprintf(stderr, "forkscope: cannot write %s: %s\n", path, strerror(-rc));
        return HX_EIO;
    }
    return HX_OK;
}

int hx_icount_run(const hx_config *cfg, const char *dir, hx_launcher *l, int intr_fd) {
    if (!cfg->icount_n[1])
        return HX_OK;
    char valgrind[PATH_MAX], annotate[PATH_MAX], cgdir[PATH_MAX];
    if (hx_find_on_path("valgrind", valgrind, sizeof valgrind) ||
        hx_find_on_path("callgrind_annotate", annotate, sizeof annotate)) {
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
    const hx_kernel_info *ki = hx_kernels_find(kernel);
    if (!ki || !ki->icount_calls) {
        fprintf(stderr, "forkscope: instructions: kernel %s does not say how many calls a run makes\n", kernel);
        return HX_EINTERNAL;
    }
    double calls1 = ki->icount_calls(n1), calls2 = ki->icount_calls(n2);
    /* One row per driver executable: a variant of another build ("drivers") is its own row,
     * labelled with the variant's name (two builds of one variant would otherwise share a
     * label, and a callgrind file). */
    struct icount_row rows[64];
    size_t nrows = 0;
    double serial[3] = {NAN, NAN, NAN};
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
        struct icount_row *r = &rows[nrows];
        if (v->drivers[0])
            snprintf(r->driver, sizeof r->driver, "%s:%s", v->name, v->driver);
        else
            snprintf(r->driver, sizeof r->driver, "%s", v->driver);
        r->path = hx_xstrdup(path);
        nrows++;
        const char *file = v->drivers[0] ? v->name : v->driver; /* (names: [A-Za-z0-9_.-]) */
        fprintf(stderr, "forkscope: instructions: %s, %s(%d) and %s(%d) under callgrind\n", r->driver, kernel, n1,
                kernel, n2);
        if (count_one(l, intr_fd, valgrind, annotate, path, file, kernel, n1, dir, r->c1) ||
            count_one(l, intr_fd, valgrind, annotate, path, file, kernel, n2, dir, r->c2)) {
            rc = HX_ERUNS_FAILED;
            break;
        }
        for (int e = 0; e < 3; e++) {
            r->per[e] = ((double)r->c2[e] - (double)r->c1[e]) / (calls2 - calls1);
            if (v->kind == HX_VARIANT_SERIAL && !v->drivers[0])
                serial[e] = r->per[e];
        }
    }
    for (size_t k = 0; k < nrows; k++)
        free(rows[k].path);
    if (rc != HX_OK)
        return rc;
    return write_csv(dir, kernel, n1, n2, calls1, calls2, rows, nrows, serial);
}
