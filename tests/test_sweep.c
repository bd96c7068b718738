/* test_sweep.c — running sweeps: failures of every kind are recorded and the sweep goes on;
 * a sweep killed (SIGKILL) or interrupted (SIGINT) part-way resumes with every run exactly
 * once; run orders; the plan; and measurement honesty: a driver's peak RSS is its own,
 * even when the harness is large.
 *
 * The "driver" is this executable: with FK_TEST_FAKE_DRIVER=1 in its environment, main()
 * behaves like a bench driver whose behaviour the kernel options choose (see fake_driver),
 * and FORKSCOPE_DRIVER points the harness at it. */
#include "tests/testlib.h"

#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "harness/cluster/pack.h"
#include "harness/config/command.h"
#include "harness/config/config.h"
#include "harness/util/errors.h"
#include "harness/run/launch.h"
#include "harness/run/progress.h"
#include "harness/run/sweep.h"
#include "harness/analyze/stats.h"
#include "harness/report/analysis.h"
#include "harness/report/overhead.h"
#include "harness/report/plot.h"
#include "harness/report/report.h"
#include "uts/tree.h"

extern char **environ;

/* ---- the fake driver ------------------------------------------------------------------------
 *   --kernel calibrate        nothing
 *   --kernel fib --n N        allocates and touches N MiB, then succeeds
 *   --kernel nqueens --n 1    SIGSEGV            --n 5   prints garbage, exit 0
 *                    --n 2    hangs              --n 6   sleeps 0.1 s, succeeds
 *                    --n 3    allocates forever  --n 7   exit 2 ("could not run")
 *                             (with FK_TEST_HOG_LOG=FILE: "MIB SECONDS" appended per MiB)
 *                    --n 4    wrong answer (3)   --n 8   5000 bytes of stderr, succeeds
 *                                                   --n 9   succeeds if FK_TEST_ENV=yes, else exit 2
 *                    --n 10   a coin toss per process (FK_TEST_COIN=FILE counts the tosses):
 *                             each of its --reps repetitions 10 ms (heads) or 30 ms (tails),
 *                             +-1% (printed, not slept)
 *   anything else             succeeds at once
 * Without --account it prints --reps R times (all t but the coin's). */

static int fake_account; /* --account times was given: print a breakdown */
static int fake_lazy;    /* --sched lazy */
static unsigned fake_reps = 1; /* --reps */
static double fake_coin = -1; /* the coin's time of this process, s (-1: not the coin) */
static unsigned long long fake_toss; /* which toss this process is */

static unsigned long long splitmix(unsigned long long x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* The fake's "times" (and "cpu_times", halved): R repetitions of t, or the coin's. */
static void fake_times(const char *key, double t, double scale) {
    printf(",\"%s\":[", key);
    for (unsigned r = 0; r < fake_reps; r++) {
        double x = t;
        if (fake_coin > 0) /* +-1% a repetition, the same in every run of the test */
            x = fake_coin * (0.99 + 0.02 * (double)(splitmix(fake_toss * 64 + r) >> 11) / 9007199254740992.0);
        printf("%s%.9f", r ? "," : "", x * scale);
    }
    printf("]");
}

/* With --account times the driver reports 2 repetitions and their breakdown, summed: work
 * P s, search 0.5, steal 0.1, join 0.2, sleep 0.2 (busy) or 0.6 (lazy), promote 0.04, and
 * statistics with 400,000 publications (so τ = 0.04 s / 400,000 = 100 ns) */
static void fake_print(const char *kernel, long n, unsigned workers, int verified, double t) {
    printf("{\"kernel\":\"%s\",\"params\":{\"n\":%ld},\"variant\":\"fake\",\"workers\":%u,\"reps\":%u,"
           "\"build\":{\"compiler\":\"fake cc\",\"flags\":\"-O0 -fake\"}",
           kernel, n, workers, fake_account ? 2 : fake_reps);
    if (fake_account)
        printf(",\"times\":[%.9f,0],\"cpu_times\":[%.9f]", t, t / 2);
    else
        fake_times("times", t, 1), fake_times("cpu_times", t, 0.5);
    printf(",\"warmup_times\":[],\"verified\":%s,\"answer\":0", verified ? "true" : "false");
    if (fake_account && getenv("FAKE_BEFORE_PROMOTE")) { /* a driver before 0.24: no promote part */
        double sleep = fake_lazy ? 0.6 : 0.2;
        printf(",\"breakdown\":{\"seconds\":{\"work\":%u,\"search\":0.5,\"steal\":0.1,\"join\":0.2,\"wait\":0,"
               "\"fiber\":0,\"sleep\":%g,\"wall\":%g,\"cpu\":0.9},\"per_worker\":[]},"
               "\"stats\":{\"enabled\":true,\"publishes\":400000}",
               workers, sleep, workers + 0.8 + sleep);
    } else if (fake_account) {
        double sleep = fake_lazy ? 0.6 : 0.2;
        printf(",\"breakdown\":{\"seconds\":{\"work\":%u,\"search\":0.5,\"steal\":0.1,\"join\":0.2,\"wait\":0,"
               "\"fiber\":0,\"sleep\":%g,\"promote\":0.04,\"wall\":%g,\"cpu\":0.9},\"per_worker\":[]},"
               "\"stats\":{\"enabled\":true,\"publishes\":400000}",
               workers, sleep, workers + 0.84 + sleep);
    }
    printf("}\n");
    fflush(stdout);
}

static int fake_driver(int argc, char **argv) {
    const char *kernel = "";
    long n = 0;
    unsigned workers = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--kernel"))
            kernel = argv[i + 1];
        else if (!strcmp(argv[i], "--n"))
            n = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--workers"))
            workers = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--account"))
            fake_account = !strcmp(argv[i + 1], "times");
        else if (!strcmp(argv[i], "--sched"))
            fake_lazy = !strcmp(argv[i + 1], "lazy");
        else if (!strcmp(argv[i], "--reps"))
            fake_reps = (unsigned)atoi(argv[i + 1]);
    }
    double t0 = test_now();
    if (!strcmp(kernel, "calibrate")) {
        fake_print(kernel, 0, workers, 1, test_now() - t0);
        return 0;
    }
    if (!strcmp(kernel, "fib")) {
        size_t bytes = (size_t)n << 20;
        char *p = malloc(bytes ? bytes : 1);
        if (!p)
            return 2;
        memset(p, 1, bytes);
        fake_print(kernel, n, workers, p[bytes / 2] == 1 || !bytes, test_now() - t0);
        free(p);
        return 0;
    }
    switch (n) {
    case 1:
        fprintf(stderr, "fake: about to crash\n");
        raise(SIGSEGV);
        return 0;
    case 2:
        for (;;)
            pause();
    case 3: {
        /* Its pace goes to a file, not to stderr: output would wake the launcher, which then
         * polls the RSS more often than it does for a silent driver. */
        const char *log = getenv("FK_TEST_HOG_LOG");
        int fd = log ? open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
        for (int i = 0; i < 8192; i++) { /* at most 8 GiB: the limit must stop it long before */
            char *p = malloc(1 << 20);
            if (p)
                memset(p, 1, 1 << 20);
            if (fd >= 0)
                dprintf(fd, "%d %.6f\n", i + 1, test_now() - t0);
        }
        return 9;
    }
    case 4:
        fake_print(kernel, n, workers, 0, test_now() - t0);
        fprintf(stderr, "fake: WRONG ANSWER\n");
        return 3;
    case 5:
        printf("this is not JSON\n");
        return 0;
    case 6:
        nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
        fake_print(kernel, n, workers, 1, test_now() - t0);
        return 0;
    case 7:
        fprintf(stderr, "fake: cannot create a pool\n");
        return 2;
    case 9:
        if (!getenv("FK_TEST_ENV") || strcmp(getenv("FK_TEST_ENV"), "yes")) {
            fprintf(stderr, "fake: FK_TEST_ENV is not yes\n");
            return 2;
        }
        break;
    case 10: { /* the toss count in FK_TEST_COIN's file: runs are one at a time */
        const char *path = getenv("FK_TEST_COIN");
        FILE *f = path ? fopen(path, "r+") : NULL;
        if (!f || fscanf(f, "%llu", &fake_toss) != 1)
            return 2;
        rewind(f);
        fprintf(f, "%llu\n", fake_toss + 1);
        fclose(f);
        fake_coin = splitmix(fake_toss ^ 0xC0FFEEULL) & 1 ? 0.030 : 0.010;
        break;
    }
    case 8:
        for (int i = 0; i < 100; i++)
            fprintf(stderr, "%049d\n", i);
        fprintf(stderr, "END-OF-STDERR\n");
        fake_print(kernel, n, workers, 1, test_now() - t0);
        return 0;
    }
    fake_print(kernel, n, workers, 1, test_now() - t0); /* any other kernel or n: success */
    return 0;
}

/* ---- helpers ------------------------------------------------------------------------------- */

static char self_exe[PATH_MAX];

static void use_fake_driver(void) {
    ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    ASSERT(n > 0);
    self_exe[n] = 0;
    setenv("FORKSCOPE_DRIVER", self_exe, 1);
    setenv("FK_TEST_FAKE_DRIVER", "1", 1);
}

static void tmpdir(char *buf, size_t len) {
    snprintf(buf, len, "/tmp/fk_test_sweep_XXXXXX");
    ASSERT(mkdtemp(buf));
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    ASSERT_MSG(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static char *read_text(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n < 2)
            buf = realloc(buf, cap *= 2);
    }
    buf[n] = 0;
    fclose(f);
    if (len)
        *len = n;
    return buf;
}

/* Where a sweep's stderr goes: sweep.log in the test's temporary directory (the first three
 * components of out, "/tmp/fk_test_sweep_XXXXXX"). */
static void log_path(const char *out, char *buf, size_t len) {
    const char *p = strchr(out + 1, '/');
    p = p ? strchr(p + 1, '/') : NULL;
    snprintf(buf, len, "%.*s/sweep.log", p ? (int)(p - out) : (int)strlen(out), out);
}

/* Runs a sweep in this process with stderr captured into *log (malloc'd). */
static int sweep(const char *config, const char *out, int resume, hx_launcher *l, char **log) {
    char logpath[PATH_MAX];
    log_path(out, logpath, sizeof logpath);
    fflush(stderr);
    int saved = dup(2), fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    FILE *devnull = fopen("/dev/null", "w");
    hx_sweep_opts o = {.config_path = config, .outdir = out, .resume = resume, .live_progress = 0, .launcher = l,
                       .plan_out = devnull};
    int rc = hx_sweep_run(&o, NULL, 0);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fclose(devnull);
    char *text = read_text(logpath, NULL);
    if (log)
        *log = text;
    else
        free(text);
    return rc;
}

/* The records of DIR/raw.jsonl; asserts that the file is whole lines of JSON objects. */
static json_t *records(const char *dir) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/raw.jsonl", dir);
    size_t len;
    char *text = read_text(path, &len);
    ASSERT_MSG(text, "no %s", path);
    ASSERT_MSG(len == 0 || text[len - 1] == '\n', "%s does not end with a whole line", path);
    json_t *a = json_array();
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        json_error_t e;
        json_t *r = json_loads(line, 0, &e);
        ASSERT_MSG(json_is_object(r), "%s: a line is not a JSON object: %s", path, line);
        json_array_append_new(a, r);
    }
    free(text);
    return a;
}

static json_t *find_run(json_t *recs, const char *run_id) {
    size_t i;
    json_t *r;
    json_array_foreach(recs, i, r) if (!strcmp(json_string_value(json_object_get(r, "run_id")), run_id)) return r;
    return NULL;
}

static const char *sget(json_t *r, const char *key) {
    const char *s = json_string_value(json_object_get(r, key));
    return s ? s : "(none)";
}

static size_t lines_in(const char *path) {
    char *t = read_text(path, NULL);
    size_t n = 0;
    for (char *p = t; p && *p; p++)
        n += *p == '\n';
    free(t);
    return n;
}

/* ---- failures ------------------------------------------------------------------------------- */

static const char failing_config[] =
    "{\"name\": \"failing\",\n"
    " \"benchmarks\": [\n"
    "  {\"name\": \"good\", \"kernel\": \"fib\", \"params\": {\"n\": 1}},\n"
    "  {\"name\": \"crash\", \"kernel\": \"nqueens\", \"params\": {\"n\": 1}},\n"
    "  {\"name\": \"hang\", \"kernel\": \"nqueens\", \"params\": {\"n\": 2}},\n"
    "  {\"name\": \"hog\", \"kernel\": \"nqueens\", \"params\": {\"n\": 3}},\n"
    "  {\"name\": \"wrong\", \"kernel\": \"nqueens\", \"params\": {\"n\": 4}},\n"
    "  {\"name\": \"garbage\", \"kernel\": \"nqueens\", \"params\": {\"n\": 5}},\n"
    "  {\"name\": \"cannot\", \"kernel\": \"nqueens\", \"params\": {\"n\": 7}},\n"
    "  {\"name\": \"noisy\", \"kernel\": \"nqueens\", \"params\": {\"n\": 8}}],\n"
    " \"variants\": [\"cont-seg-busy\"], \"workers\": [1], \"repetitions\": 1,\n"
    " \"time_limit_s\": 1, \"memory_limit_mib\": 64, \"order\": \"grouped\"}\n";

/* What this machine offers the launcher, found here independently of harness/run/cgroup.c, and
 * what env.json's mechanism must then say: "cgroup-v2 ..." where cgroup v2 with its memory
 * controller is available to us, else the reason it is not; likewise for v1.  v2 is available
 * when this process's v2 cgroup (the cgroup2 mount, mounted from its root, joined with
 * /proc/self/cgroup's "0::" path) lists memory in cgroup.controllers and we may make a
 * cgroup that enables it for its children: in our own cgroup if that is the root (only the
 * root may enable controllers while it holds processes, and it holds ours), else beside it, in
 * our parent (which enables memory for its children: we have it).  v1: a writable directory
 * of the memory hierarchy for this process. */
struct memlimit_offer {
    int v2, v1;            /* usable */
    const char *v2_reason; /* if not: what the mechanism's text must say */
    char v2_dir[PATH_MAX];
};

static char *first_line_with(char *text, const char *needle) {
    for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        char *eol = strchr(l, '\n'), *hit = strstr(l, needle);
        if (hit && (!eol || hit < eol))
            return l;
    }
    return NULL;
}

static void memlimit_offer(struct memlimit_offer *o) {
    memset(o, 0, sizeof *o);
    char *mi = read_text("/proc/self/mountinfo", NULL), *pc = read_text("/proc/self/cgroup", NULL);
    ASSERT(mi && pc);
    char root[PATH_MAX] = "", mnt[PATH_MAX] = "", rel[PATH_MAX] = "";
    for (char *l = mi; (l = first_line_with(l, " - cgroup2 ")) && strcmp(root, "/"); l = strchr(l, '\n'))
        sscanf(l, "%*s %*s %*s %4095s %4095s", root, mnt); /* a mount of a subtree: no path to us */
    char *v2 = first_line_with(pc, "0::");
    if (v2 && v2 == strstr(v2, "0::"))
        sscanf(v2 + 3, "%4095[^\n]", rel);
    if (strcmp(root, "/") || rel[0] != '/') {
        o->v2_reason = "no cgroup v2";
    } else {
        snprintf(o->v2_dir, sizeof o->v2_dir, "%s%s", mnt, strcmp(rel, "/") ? rel : "");
        char path[PATH_MAX + 32], parent[PATH_MAX];
        snprintf(path, sizeof path, "%s/cgroup.controllers", o->v2_dir);
        char *ctl = read_text(path, NULL);
        int memory = 0;
        for (char *t = ctl ? strtok(ctl, " \n") : NULL; t; t = strtok(NULL, " \n"))
            memory |= !strcmp(t, "memory");
        free(ctl);
        snprintf(parent, sizeof parent, "%s", o->v2_dir);
        *strrchr(parent, '/') = 0;
        int makeable = !strcmp(rel, "/") ? access(o->v2_dir, W_OK) == 0 : access(parent, W_OK) == 0;
        if (!memory)
            o->v2_reason = "offers no memory controller";
        else if (!makeable)
            o->v2_reason = "cannot make a cgroup with memory enabled";
        else
            o->v2 = 1;
    }
    /* v1: "N:...memory...:PATH" */
    for (char *c = pc; c && *c; c = strchr(c, '\n') ? strchr(c, '\n') + 1 : NULL) {
        char ctrls[256], path[PATH_MAX], dir[PATH_MAX + 32];
        if (sscanf(c, "%*[0-9]:%255[^:]:%4095[^\n]", ctrls, path) != 2)
            continue;
        for (char *t = strtok(ctrls, ","); t; t = strtok(NULL, ","))
            if (!strcmp(t, "memory")) {
                snprintf(dir, sizeof dir, "/sys/fs/cgroup/memory%s", strcmp(path, "/") ? path : "");
                o->v1 = access(dir, W_OK) == 0;
            }
    }
    free(mi);
    free(pc);
}

/* The hog's pace from its log (FK_TEST_HOG_LOG): MiB touched and seconds, at its last line. */
static void hog_pace(const char *path, int *mib, double *secs) {
    char *t = read_text(path, NULL);
    ASSERT_MSG(t, "the hog left no log in %s", path);
    *mib = 0;
    *secs = 0;
    for (char *l = strtok(t, "\n"); l; l = strtok(NULL, "\n"))
        ASSERT_MSG(sscanf(l, "%d %lf", mib, secs) == 2, "%s: '%s'", path, l);
    free(t);
    ASSERT_MSG(*mib >= 8 && *secs > 0, "the hog touched %d MiB in %g s", *mib, *secs);
}

static void check_failures(const char *mech) {
    use_fake_driver();
    setenv("FORKSCOPE_MEMLIMIT", mech, 1);
    char dir[64], cfg[128], out[128];
    tmpdir(dir, sizeof dir);
    snprintf(cfg, sizeof cfg, "%s/failing.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    write_text(cfg, failing_config);
    char hoglog[160];
    snprintf(hoglog, sizeof hoglog, "%s/hog.log", dir);
    setenv("FK_TEST_HOG_LOG", hoglog, 1);
    char *log;
    double t0 = test_now();
    int rc = sweep(cfg, out, 0, NULL, &log);
    double dt = test_now() - t0;
    ASSERT_MSG(rc == HX_ERUNS_FAILED, "status %d, log:\n%s", rc, log);
    json_t *recs = records(out);
    ASSERT_EQ(json_array_size(recs), 9); /* 8 benchmarks + 1 calibrate, all recorded */
    static const struct {
        const char *run, *status, *signal;
        int exit_code; /* -1: null */
    } want[] = {
        {"calibrate|cont-seg-busy|1#0", "ok", NULL, 0}, {"good|cont-seg-busy|1#0", "ok", NULL, 0},
        {"crash|cont-seg-busy|1#0", "crash", "SIGSEGV", -1}, {"hang|cont-seg-busy|1#0", "timeout", "SIGKILL", -1},
        {"hog|cont-seg-busy|1#0", "memory", "SIGKILL", -1},   {"wrong|cont-seg-busy|1#0", "wrong", NULL, 3},
        {"garbage|cont-seg-busy|1#0", "error", NULL, 0},      {"cannot|cont-seg-busy|1#0", "error", NULL, 2},
        {"noisy|cont-seg-busy|1#0", "ok", NULL, 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        json_t *r = find_run(recs, want[i].run);
        ASSERT_MSG(r, "no record of %s", want[i].run);
        ASSERT_MSG(!strcmp(sget(r, "status"), want[i].status), "%s: status %s, expected %s (note: %s)", want[i].run,
                   sget(r, "status"), want[i].status, sget(r, "note"));
        json_t *sig = json_object_get(r, "signal"), *ec = json_object_get(r, "exit_code");
        if (want[i].signal)
            ASSERT_MSG(json_is_string(sig) && !strcmp(json_string_value(sig), want[i].signal), "%s: signal %s",
                       want[i].run, json_is_string(sig) ? json_string_value(sig) : "null");
        else
            ASSERT(json_is_null(sig));
        if (want[i].exit_code < 0)
            ASSERT(json_is_null(ec));
        else
            ASSERT_EQ(json_integer_value(ec), want[i].exit_code);
        ASSERT(json_is_integer(json_object_get(r, "maxrss_kib")));
        ASSERT(json_is_number(json_object_get(r, "wall_s")));
    }
    json_t *r = find_run(recs, "good|cont-seg-busy|1#0");
    ASSERT(json_is_number(json_object_get(r, "time_s")));
    ASSERT_NEAR(json_number_value(json_object_get(r, "cpu_s")), json_number_value(json_object_get(r, "time_s")) / 2,
                1e-9);
    ASSERT(json_is_object(json_object_get(r, "driver")));
    ASSERT(json_is_null(json_object_get(find_run(recs, "wrong|cont-seg-busy|1#0"), "time_s")));
    ASSERT(json_is_null(json_object_get(find_run(recs, "wrong|cont-seg-busy|1#0"), "cpu_s")));
    ASSERT_STR_CONTAINS(sget(find_run(recs, "crash|cont-seg-busy|1#0"), "stderr_tail"), "about to crash");
    ASSERT_STR_CONTAINS(sget(find_run(recs, "cannot|cont-seg-busy|1#0"), "stderr_tail"), "cannot create a pool");
    ASSERT_STR_CONTAINS(sget(find_run(recs, "garbage|cont-seg-busy|1#0"), "note"), "unparsable output");
    const char *tail = sget(find_run(recs, "noisy|cont-seg-busy|1#0"), "stderr_tail");
    ASSERT_LE(strlen(tail), 2048);
    ASSERT_GE(strlen(tail), 2000);
    ASSERT_STR_CONTAINS(tail, "END-OF-STDERR\n");
    /* Killed at its time limit of 1 s, not before; how soon after depends on the launcher
     * getting a CPU: a timing check (retried once on failure). */
    double hang_s = json_real_value(json_object_get(find_run(recs, "hang|cont-seg-busy|1#0"), "wall_s"));
    ASSERT_MSG(hang_s >= 1.0 - 1e-6, "the hang was killed after %.3f s, before its limit of 1 s", hang_s);
    ASSERT_TIMING(hang_s <= 1.5, "the hang was killed %.3f s after its limit of 1 s", hang_s - 1.0);

    /* env.json names the mechanism, and why cgroup v2 (and v1) were not used where they were not. */
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/env.json", out);
    json_error_t e;
    json_t *env = json_load_file(path, 0, &e);
    ASSERT(env);
    const char *m = json_string_value(json_object_get(json_object_get(env, "memory_limit"), "mechanism"));
    ASSERT(m);
    struct memlimit_offer offer;
    memlimit_offer(&offer);
    printf("  memory limit by %s\n  this machine: cgroup v2 %s: %s%s; cgroup v1 memory hierarchy %s\n", m,
           offer.v2_dir[0] ? offer.v2_dir : "(none)", offer.v2 ? "usable" : "not usable: ",
           offer.v2 ? "" : offer.v2_reason, offer.v1 ? "writable" : "not writable");
    if (!strcmp(mech, "poll")) {
        ASSERT_MSG(!strncmp(m, "poll ", 5), "FORKSCOPE_MEMLIMIT=poll, yet the mechanism is %s", m);
        ASSERT_STR_CONTAINS(m, "(FORKSCOPE_MEMLIMIT=poll)"); /* why no cgroup */
    } else if (offer.v2) {
        ASSERT_MSG(!strncmp(m, "cgroup-v2 ", 10), "cgroup v2 with memory is usable at %s, yet the mechanism is %s",
                   offer.v2_dir, m);
    } else {
        ASSERT_MSG(strncmp(m, "cgroup-v2 ", 10), "cgroup v2 is used where it is not usable (%s): %s",
                   offer.v2_reason, m);
        ASSERT_STR_CONTAINS(m, offer.v2_reason); /* the fallback says why */
        if (offer.v1)
            ASSERT_MSG(!strncmp(m, "cgroup-v1 ", 10) && strstr(m, "(v2 not used: "),
                       "cgroup v1's memory hierarchy is writable, yet the mechanism is %s", m);
        else
            ASSERT_MSG(!strncmp(m, "poll ", 5) && strstr(m, "cgroup-v1"), "no cgroup is usable, yet: %s", m);
    }

    /* The hog was stopped near its limit, by a margin that depends on the mechanism:
     * - a cgroup (v1, v2) stops the pages charged to it at the limit, but the hog's resident
     *   set also holds the pages of its executable and libraries, which were read before the
     *   run and are charged to whoever read them: at most the resident set of the same
     *   driver doing nothing (its calibrate run), plus 1 MiB for the library code the hog
     *   runs and calibrate does not.  Not timing: the kernel enforces it.  With v2, the
     *   cgroup's own peak (memory.peak) is at the limit: a charge may be forced past it
     *   (reclaim's own allocations, __GFP_NOFAIL) by a few pages; 1 MiB allowed.
     * - polling kills the hog once its resident set was seen above the limit, so it holds
     *   more than the limit, plus what it touched since the last poll that saw it below:
     *   one poll interval at its own pace, and one more for a launcher that wakes late.
     *   That depends on both getting a CPU: a timing check. */
    const long long limit_kib = 64 * 1024;
    json_t *hog = find_run(recs, "hog|cont-seg-busy|1#0");
    json_int_t hog_rss = json_integer_value(json_object_get(hog, "maxrss_kib")),
               idle_rss = json_integer_value(json_object_get(find_run(recs, "calibrate|cont-seg-busy|1#0"), "maxrss_kib"));
    json_t *peak = json_object_get(hog, "cgroup_peak_kib");
    int mib;
    double secs;
    hog_pace(hoglog, &mib, &secs);
    double kib_per_s = mib * 1024.0 / secs;
    if (!strncmp(m, "poll ", 5)) {
        int every_ms = 0;
        ASSERT_MSG(sscanf(m, "poll /proc/PID/statm every %d ms", &every_ms) == 1 && every_ms > 0,
                   "no poll interval in '%s'", m);
        long long margin = (long long)(kib_per_s * 2 * every_ms / 1000.0);
        printf("  hog stopped at %lld KiB = limit + %lld KiB; at its pace (%.0f MiB/s) 2 polls of %d ms allow "
               "%lld KiB; sweep %.1f s\n",
               (long long)hog_rss, (long long)hog_rss - limit_kib, kib_per_s / 1024, every_ms, margin, dt);
        /* The kernel counts a resident set per CPU (percpu_counter since 6.2; per thread before):
         * /proc/PID/statm, which the poll reads, and the peak that wait4 reports are both
         * approximate, each off by up to a batch of pages per CPU for each of the three counters
         * (file, anon, shmem; batch max(32, 2 x CPUs)).  A poll may see the hog over its limit
         * while the peak it exits with is a few pages under (CI: 65504 KiB against 65536).  A
         * kill "well before the limit" (a unit slip, a wrong comparison) is still refused: the
         * allowance is at most 4 MiB (the cgroup branch's below), whatever the CPU count. */
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        if (ncpu < 1)
            ncpu = 1;
        long long fuzz_kib = 2LL * 3 * ncpu * (ncpu * 2 > 32 ? ncpu * 2 : 32) * (sysconf(_SC_PAGESIZE) / 1024);
        if (fuzz_kib > 4096)
            fuzz_kib = 4096;
        ASSERT_MSG(hog_rss > limit_kib - fuzz_kib,
                   "polling killed the hog at %lld KiB, under its limit of %lld KiB by more than the kernel's "
                   "counting error (%lld KiB on %ld CPUs)",
                   (long long)hog_rss, limit_kib, fuzz_kib, ncpu);
        ASSERT_TIMING(hog_rss <= limit_kib + margin,
                      "the hog reached %lld KiB, %lld KiB past its limit: more than 2 polls of %d ms at "
                      "%.0f MiB/s (%lld KiB)",
                      (long long)hog_rss, (long long)hog_rss - limit_kib, every_ms, kib_per_s / 1024, margin);
        ASSERT(json_is_null(peak));
    } else {
        long long margin = idle_rss + 1024;
        char peak_s[32] = "none";
        if (json_is_integer(peak))
            snprintf(peak_s, sizeof peak_s, "%lld KiB", (long long)json_integer_value(peak));
        printf("  hog stopped at %lld KiB = limit + %lld KiB (allowed: the idle driver's %lld KiB + 1024); "
               "cgroup peak %s; hog pace %.0f MiB/s; sweep %.1f s\n",
               (long long)hog_rss, (long long)hog_rss - limit_kib, (long long)idle_rss, peak_s, kib_per_s / 1024, dt);
        ASSERT_LE(hog_rss, limit_kib + margin);
        ASSERT_MSG(hog_rss >= limit_kib - 4096, "the hog was stopped at %lld KiB, well before its limit of %lld KiB",
                   (long long)hog_rss, limit_kib);
        if (!strncmp(m, "cgroup-v2 ", 10) && json_is_integer(peak))
            ASSERT_LE(json_integer_value(peak), limit_kib + 1024);
    }
    ASSERT_STR_CONTAINS(json_string_value(json_object_get(json_object_get(json_object_get(env, "drivers"),
                                                                          "cont-seg-busy"),
                                                          "flags")),
                        "-fake");
    json_decref(env);
    json_decref(recs);
    free(log);
}

TEST(failures_recorded_poll) { check_failures("poll"); }
TEST(failures_recorded_auto) { check_failures("auto"); }

/* cgroup v2 forced: memory.max stops the hog, its oom_kill is "memory", and memory.peak is at
 * the limit where the kernel has it (5.19 on; check_failures checks these where v2 is the
 * mechanism).  Where no cgroup v2 hierarchy
 * has the memory controller, the skip says exactly why, from /proc/cgroups and mountinfo. */
TEST(failures_recorded_v2) {
    struct memlimit_offer offer;
    memlimit_offer(&offer);
    if (offer.v2) {
        check_failures("cgroup-v2");
        return;
    }
    char *pc = read_text("/proc/cgroups", NULL);
    int hier = 0, ncg = 0;
    char *l = pc ? first_line_with(pc, "memory\t") : NULL;
    if (l)
        sscanf(l, "memory %d %d", &hier, &ncg);
    free(pc);
    char mnt[PATH_MAX] = "(not mounted)", *mi = read_text("/proc/self/mountinfo", NULL);
    for (char *m = mi; m && (m = first_line_with(m, " - cgroup ")); m = strchr(m, '\n')) {
        /* "ID PARENT M:N ROOT POINT OPTS [OPTIONAL...] - cgroup SOURCE SUPER-OPTS" */
        char point[PATH_MAX], opts[512];
        char *dash = strstr(m, " - cgroup ");
        if (sscanf(m, "%*s %*s %*s %*s %4095s", point) == 1 && dash &&
            sscanf(dash, " - cgroup %*s %511s", opts) == 1 && strstr(opts, "memory"))
            snprintf(mnt, sizeof mnt, "%s", point);
    }
    free(mi);
    if (hier > 0)
        TEST_SKIP("cgroup v2 with the memory controller cannot be made here: the memory controller is bound to the "
                  "cgroup v1 hierarchy %d (/proc/cgroups; %d cgroups in it, mounted at %s), and a controller serves "
                  "one hierarchy at a time: moving it to v2 means removing every v1 memory cgroup on the machine.  "
                  "The cgroup v2 hierarchy %s %s",
                  hier, ncg, mnt, offer.v2_dir[0] ? offer.v2_dir : "(none mounted)", offer.v2_reason);
    TEST_SKIP("cgroup v2 with the memory controller is not usable here: %s%s%s", offer.v2_reason,
              offer.v2_dir[0] ? " at " : "", offer.v2_dir);
}

/* ---- interruption and resume ------------------------------------------------------------------- */

static const char slow_config[] = "{\"name\": \"slow\",\n"
                                  " \"benchmarks\": [{\"name\": \"slow\", \"kernel\": \"nqueens\", \"params\": {\"n\": 6}},\n"
                                  "                  {\"name\": \"mem\", \"kernel\": \"fib\", \"params\": {\"n\": 2}}],\n"
                                  " \"variants\": [\"cont-seg-busy\", \"serial\"], \"workers\": [1, 2],\n"
                                  " \"repetitions\": 4, \"order\": \"interleaved\"}\n";
enum { SLOW_RUNS = 3 * 4 + 3 * 4 * 2 }; /* calibrate cells 3, timed cells 3 per benchmark */

static void expect_complete(const char *out) {
    json_t *recs = records(out);
    ASSERT_EQ(json_array_size(recs), SLOW_RUNS);
    const char *cells[] = {"calibrate|cont-seg-busy|1", "calibrate|cont-seg-busy|2", "calibrate|serial|1",
                           "slow|cont-seg-busy|1",      "slow|cont-seg-busy|2",      "slow|serial|1",
                           "mem|cont-seg-busy|1",       "mem|cont-seg-busy|2",       "mem|serial|1"};
    for (size_t c = 0; c < 9; c++)
        for (int rep = 0; rep < 4; rep++) {
            char id[128];
            snprintf(id, sizeof id, "%s#%d", cells[c], rep);
            size_t n = 0, i;
            json_t *r;
            json_array_foreach(recs, i, r) n += !strcmp(sget(r, "run_id"), id);
            ASSERT_MSG(n == 1, "%s appears %zu times", id, n);
        }
    json_decref(recs);
}

/* Starts a sweep in a child process and, once it has recorded `after` runs, sends it sig.
 * Returns the child's wait status. */
static int sweep_and_signal(const char *cfg, const char *out, int sig, size_t after) {
    char raw[PATH_MAX];
    snprintf(raw, sizeof raw, "%s/raw.jsonl", out);
    fflush(NULL);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0)
        _exit(hx_exit_status(sweep(cfg, out, 0, NULL, NULL)));
    double t0 = test_now();
    while (lines_in(raw) < after && test_now() - t0 < 20)
        nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    kill(pid, sig);
    int st;
    waitpid(pid, &st, 0);
    return st;
}

TEST(sigkill_then_resume) {
    use_fake_driver();
    char dir[64], cfg[128], out[128], raw[160];
    tmpdir(dir, sizeof dir);
    snprintf(cfg, sizeof cfg, "%s/slow.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(raw, sizeof raw, "%s/raw.jsonl", out);
    write_text(cfg, slow_config);
    int st = sweep_and_signal(cfg, out, SIGKILL, 14);
    ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    json_t *recs = records(out); /* whole lines only */
    size_t before = json_array_size(recs);
    ASSERT_GE(before, 14);
    ASSERT_LT(before, SLOW_RUNS);
    json_decref(recs);
    /* A write cut short by a kill: a partial last line, which resume must cut away. */
    FILE *f = fopen(raw, "a");
    fputs("{\"schema\":1,\"run_id\":\"slow|serial|1#3\",\"cell_id\":\"slo", f);
    fclose(f);
    char *log;
    int rc = sweep(cfg, out, 1, NULL, &log);
    ASSERT_MSG(rc == HX_OK, "resume: status %d:\n%s", rc, log);
    ASSERT_STR_CONTAINS(log, "incomplete");
    expect_complete(out);
    /* Resuming a finished sweep runs nothing and changes nothing. */
    size_t n = lines_in(raw);
    ASSERT_EQ(sweep(cfg, out, 1, NULL, NULL), HX_OK);
    ASSERT_EQ(lines_in(raw), n);
    free(log);
}

TEST(sigint_then_resume) {
    use_fake_driver();
    char dir[64], cfg[128], out[128];
    tmpdir(dir, sizeof dir);
    snprintf(cfg, sizeof cfg, "%s/slow.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    write_text(cfg, slow_config);
    int st = sweep_and_signal(cfg, out, SIGINT, 14);
    ASSERT_MSG(WIFEXITED(st) && WEXITSTATUS(st) == HX_EXIT_INTERRUPTED, "wait status %#x", st);
    char logpath[PATH_MAX];
    log_path(out, logpath, sizeof logpath);
    char *log = read_text(logpath, NULL);
    ASSERT_STR_CONTAINS(log, "--resume");
    ASSERT_STR_CONTAINS(log, "interrupted (SIGINT)");
    free(log);
    json_t *recs = records(out);
    ASSERT_LT(json_array_size(recs), SLOW_RUNS);
    json_decref(recs);
    int rc = sweep(cfg, out, 1, NULL, &log);
    ASSERT_MSG(rc == HX_OK, "resume: status %d:\n%s", rc, log);
    expect_complete(out);
    free(log);
}

TEST(resume_checks_config) {
    use_fake_driver();
    char dir[64], cfg[128], out[128];
    tmpdir(dir, sizeof dir);
    snprintf(cfg, sizeof cfg, "%s/c.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    write_text(cfg, "{\"name\": \"c\", \"benchmarks\": [{\"kernel\": \"fib\", \"params\": {\"n\": 1}}],"
                    " \"variants\": [\"serial\"], \"workers\": [1], \"repetitions\": 2}\n");
    ASSERT_EQ(sweep(cfg, out, 0, NULL, NULL), HX_OK);
    char *log;
    ASSERT_EQ(sweep(cfg, out, 0, NULL, &log), HX_EUSAGE); /* results there, no --resume */
    ASSERT_STR_CONTAINS(log, "--resume");
    free(log);
    write_text(cfg, "{\"name\": \"c\", \"benchmarks\": [{\"kernel\": \"fib\", \"params\": {\"n\": 2}}],"
                    " \"variants\": [\"serial\"], \"workers\": [1], \"repetitions\": 2}\n");
    ASSERT_EQ(sweep(cfg, out, 1, NULL, &log), HX_ECONFIG);
    ASSERT_STR_CONTAINS(log, "differs from");
    free(log);
    /* A line that is whole but not a record is not cut away silently. */
    char raw[160];
    snprintf(raw, sizeof raw, "%s/raw.jsonl", out);
    FILE *f = fopen(raw, "a");
    fputs("not json\n", f);
    fclose(f);
    char cfg2[160];
    snprintf(cfg2, sizeof cfg2, "%s/config.json", out);
    ASSERT_EQ(sweep(cfg2, out, 1, NULL, &log), HX_EIO);
    ASSERT_STR_CONTAINS(log, "raw.jsonl:5: not a run record"); /* 2 timed + 2 calibrate runs before it */
    free(log);
    /* A start that recorded no run leaves config.json alone: a new sweep replaces it. */
    char out2[160], path[200];
    snprintf(out2, sizeof out2, "%s/out2", dir);
    ASSERT_EQ(mkdir(out2, 0777), 0);
    snprintf(path, sizeof path, "%s/config.json", out2);
    write_text(path, "{\"old\": 1}\n");
    ASSERT_EQ(sweep(cfg, out2, 0, NULL, NULL), HX_OK);
    char *now = read_text(path, NULL), *given = read_text(cfg, NULL);
    ASSERT(now && given && !strcmp(now, given));
    free(now);
    free(given);
}

/* ---- order ------------------------------------------------------------------------------------ */

static void run_ids(const char *order, char ids[][32], size_t n) {
    char dir[64], cfg[128], out[128], text[512];
    tmpdir(dir, sizeof dir);
    snprintf(cfg, sizeof cfg, "%s/o.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(text, sizeof text,
             "{\"name\": \"o\", \"benchmarks\": [{\"name\": \"a\", \"kernel\": \"fib\", \"params\": {\"n\": 0}},"
             " {\"name\": \"b\", \"kernel\": \"fib\", \"params\": {\"n\": 0}}], \"variants\": [\"serial\"],"
             " \"workers\": [1], \"repetitions\": 5, \"calibrate\": false, \"order\": \"%s\", \"seed\": 7}\n",
             order);
    write_text(cfg, text);
    ASSERT_EQ(sweep(cfg, out, 0, NULL, NULL), HX_OK);
    json_t *recs = records(out);
    ASSERT_EQ(json_array_size(recs), n);
    for (size_t i = 0; i < n; i++)
        snprintf(ids[i], 32, "%c%lld", sget(json_array_get(recs, i), "benchmark")[0],
                 (long long)json_integer_value(json_object_get(json_array_get(recs, i), "rep")));
    json_decref(recs);
}

TEST(run_orders) {
    use_fake_driver();
    char g[10][32], il[10][32], s1[10][32], s2[10][32];
    run_ids("grouped", g, 10);
    run_ids("interleaved", il, 10);
    run_ids("shuffled", s1, 10);
    run_ids("shuffled", s2, 10);
    static const char *const want_g[] = {"a0", "a1", "a2", "a3", "a4", "b0", "b1", "b2", "b3", "b4"};
    static const char *const want_i[] = {"a0", "b0", "a1", "b1", "a2", "b2", "a3", "b3", "a4", "b4"};
    int same_as_grouped = 1;
    for (int i = 0; i < 10; i++) {
        ASSERT_MSG(!strcmp(g[i], want_g[i]), "grouped run %d is %s", i, g[i]);
        ASSERT_MSG(!strcmp(il[i], want_i[i]), "interleaved run %d is %s", i, il[i]);
        ASSERT_MSG(!strcmp(s1[i], s2[i]), "the shuffle is not reproducible: run %d %s vs %s", i, s1[i], s2[i]);
        same_as_grouped &= !strcmp(s1[i], g[i]);
        int found = 0;
        for (int k = 0; k < 10; k++)
            found += !strcmp(s1[i], g[k]);
        ASSERT_EQ(found, 1);
    }
    ASSERT(!same_as_grouped);
}

/* ---- the plan ---------------------------------------------------------------------------------- */

TEST(dry_run_plan) {
    use_fake_driver();
    char dir[64], cfg[128], out[128], planpath[128];
    tmpdir(dir, sizeof dir);
    snprintf(cfg, sizeof cfg, "%s/p.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(planpath, sizeof planpath, "%s/plan.txt", dir);
    write_text(cfg, "{\"name\": \"p\", \"benchmarks\": [{\"kernel\": \"fib\", \"params\": {\"n\": 30}},"
                    " {\"kernel\": \"uts\", \"params\": {\"preset\": \"T1\"}}],"
                    " \"variants\": [\"cont-seg-busy\", \"serial\", \"omp\"], \"workers\": [1, 2, 1024],"
                    " \"repetitions\": {\"serial\": 3, \"parallel\": 2, \"baseline\": 4}}\n");
    FILE *plan = fopen(planpath, "w");
    hx_sweep_opts o = {.config_path = cfg, .outdir = out, .dry_run = 1, .live_progress = 0, .plan_out = plan};
    ASSERT_EQ(hx_sweep_run(&o, NULL, 0), HX_OK);
    fclose(plan);
    char *text = read_text(planpath, NULL);
    /* timed: 2 benchmarks x (cont 3 P x 2 + serial 1 x 3 + omp 3 P x 4) = 2 x 21 runs in 14 cells;
     * calibrate: 3 + 1 + 3 cells, 6 + 3 + 12 runs */
    ASSERT_STR_CONTAINS(text, "Cells: 21 (14 timed, 7 calibrate)");
    ASSERT_STR_CONTAINS(text, "Runs: 63 (42 timed, 21 calibrate)");
    ASSERT_STR_CONTAINS(text, "Skipped: 4 serial cells at P > 1");
    ASSERT_STR_CONTAINS(text, "fib|omp|1024");
    ASSERT_STR_CONTAINS(text, "oversubscribed");
    ASSERT_STR_CONTAINS(text, "Oversubscribed cells: 6");
    ASSERT_STR_CONTAINS(text, "Estimated time:");
    ASSERT_STR_CONTAINS(text, "built-in model");
    free(text);
    struct stat st;
    ASSERT(stat(out, &st) < 0); /* nothing written */

    /* a paired sweep's dry run says how many rounds compare needs: a 5% change at an assumed
     * 3% CV: ((1.95996 + 0.84162) * sqrt 2 * 0.03 / log 1.05)^2 * pi/3 = 6.2 -> 7 rounds */
    write_text(cfg, "{\"name\": \"p\", \"benchmarks\": [{\"kernel\": \"fib\", \"params\": {\"n\": 30}}],"
                    " \"variants\": [\"cont-seg-busy\", \"cont-seg-lazy\"], \"workers\": [1], \"order\": \"paired\","
                    " \"repetitions\": 5}\n");
    plan = fopen(planpath, "w");
    o.plan_out = plan;
    o.effect = 0.05;
    o.cv = 0.03;
    ASSERT_EQ(hx_sweep_run(&o, NULL, 0), HX_OK);
    fclose(plan);
    text = read_text(planpath, NULL);
    ASSERT_STR_CONTAINS(text, "to detect a 5% change, about 7 rounds (configured: 5)");
    ASSERT_STR_CONTAINS(text, "noise assumed: CV 3.0%");
    free(text);
}

/* The plan stage alone (as A/B and cluster shards use it): cells and runs counted as above,
 * calibrate cells first, every repetition of every cell exactly once, serial only at P = 1,
 * the interleaved order round by round. */
TEST(plan_stage) {
    char dir[64], cfg[128];
    tmpdir(dir, sizeof dir);
    snprintf(cfg, sizeof cfg, "%s/p.json", dir);
    write_text(cfg, "{\"name\": \"p\", \"benchmarks\": [{\"kernel\": \"fib\", \"params\": {\"n\": 30}},"
                    " {\"kernel\": \"uts\", \"params\": {\"preset\": \"T1\"}}],"
                    " \"variants\": [\"cont-seg-busy\", \"serial\", \"omp\"], \"workers\": [1, 2, 1024],"
                    " \"order\": \"interleaved\","
                    " \"repetitions\": {\"serial\": 3, \"parallel\": 2, \"baseline\": 4}}\n");
    hx_config c;
    hx_diag d = {0};
    ASSERT_EQ(hx_config_load(cfg, 2, &c, &d), 0);
    hx_plan p;
    ASSERT_EQ(hx_plan_build(&c, &p), 0);
    ASSERT_EQ(p.ncells, 21);
    ASSERT_EQ(p.ncalib, 7);
    ASSERT_EQ(p.nruns, 63);
    ASSERT_EQ(p.nskipped_serial, 4);
    unsigned seen[21][4];
    memset(seen, 0, sizeof seen);
    for (size_t i = 0; i < p.ncells; i++) {
        ASSERT_EQ(p.cells[i].bench == NULL, i < p.ncalib);
        if (!strcmp(p.cells[i].var->name, "serial"))
            ASSERT_EQ(p.cells[i].workers, 1);
        ASSERT_EQ(p.cells[i].oversub, p.cells[i].workers > 2);
    }
    unsigned last_rep = 0;
    for (size_t k = 0; k < p.nruns; k++) {
        hx_planned_run r = p.runs[k];
        ASSERT(r.cell < p.ncells && r.rep < p.cells[r.cell].reps);
        ASSERT_EQ(seen[r.cell][r.rep]++, 0);
        ASSERT_MSG(r.rep >= last_rep, "run %zu: repetition %u after %u (not interleaved)", k, r.rep, last_rep);
        last_rep = r.rep;
    }
    for (size_t i = 0; i < p.ncells; i++)
        for (unsigned r = 0; r < p.cells[i].reps; r++)
            ASSERT_EQ(seen[i][r], 1);
    hx_plan_free(&p);
    hx_config_free(&c);
    hx_config_diag_free(&d);
}

/* A benchmark's own "workers": its cells only at those counts, and calibrate cells only
 * where some benchmark runs. */
TEST(benchmark_workers) {
    char dir[64], cfg[128];
    tmpdir(dir, sizeof dir);
    snprintf(cfg, sizeof cfg, "%s/w.json", dir);
    write_text(cfg, "{\"name\": \"w\", \"benchmarks\": [{\"kernel\": \"fib\", \"workers\": [1, 2]},"
                    " {\"kernel\": \"nqueens\", \"workers\": [8, 2]}], \"variants\": [\"cont-seg-busy\", \"serial\"],"
                    " \"workers\": [1, 2, 4, 8], \"repetitions\": 1}\n");
    hx_config c;
    hx_diag d = {0};
    ASSERT_EQ(hx_config_load(cfg, 2, &c, &d), 0);
    ASSERT_EQ(c.benchmarks[1].nworkers, 2);
    ASSERT(c.benchmarks[1].workers[0] == 2 && c.benchmarks[1].workers[1] == 8); /* sorted */
    ASSERT(hx_config_bench_runs_at(&c.benchmarks[0], 1) && !hx_config_bench_runs_at(&c.benchmarks[0], 4));
    hx_plan p;
    ASSERT_EQ(hx_plan_build(&c, &p), 0);
    /* calibrate: cont-seg at 1, 2, 8 and serial at 1; fib: cont-seg 1, 2 and serial 1;
     * nqueens: cont-seg 2, 8 (serial only runs at P = 1, which nqueens does not) */
    ASSERT_EQ(p.ncalib, 4);
    ASSERT_EQ(p.ncells, 4 + 3 + 2);
    for (size_t i = 0; i < p.ncells; i++)
        ASSERT_MSG(p.cells[i].workers != 4, "a cell at P = 4: %s", p.cells[i].id);
    hx_plan_free(&p);
    hx_config_free(&c);
    hx_config_diag_free(&d);
}

/* A variant's "env" reaches each of its runs (and only its runs) and is recorded in env.json;
 * a bad one is refused before anything runs, naming the key. */
TEST(variant_env) {
    use_fake_driver();
    char dir[64], cfg[128], out[128], path[PATH_MAX];
    tmpdir(dir, sizeof dir);
    snprintf(cfg, sizeof cfg, "%s/e.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    write_text(cfg, "{\"name\": \"e\", \"benchmarks\": [{\"kernel\": \"nqueens\", \"params\": {\"n\": 9}}],"
                    " \"variants\": [\"cont-seg-busy\", {\"name\": \"with-env\", \"variant\": \"cont-seg-busy\","
                    " \"env\": {\"FK_TEST_ENV\": \"yes\"}}], \"workers\": [1], \"repetitions\": 2, \"warmup\": 0}\n");
    ASSERT_EQ(sweep(cfg, out, 0, NULL, NULL), HX_ERUNS_FAILED);
    json_t *recs = records(out);
    size_t i, ok = 0, failed = 0;
    json_t *r;
    json_array_foreach(recs, i, r) {
        if (strcmp(json_string_value(json_object_get(r, "kind")), "timed"))
            continue;
        int is_ok = !strcmp(json_string_value(json_object_get(r, "status")), "ok");
        int with = !strcmp(json_string_value(json_object_get(r, "variant")), "with-env");
        ASSERT_MSG(is_ok == with, "run %s: status %s", json_string_value(json_object_get(r, "run_id")),
                   json_string_value(json_object_get(r, "status")));
        ok += is_ok, failed += !is_ok;
    }
    ASSERT_EQ(ok, 2);
    ASSERT_EQ(failed, 2);
    json_decref(recs);
    snprintf(path, sizeof path, "%s/env.json", out);
    json_error_t e;
    json_t *env = json_load_file(path, 0, &e);
    ASSERT(env);
    json_t *drv = json_object_get(json_object_get(env, "drivers"), "with-env");
    ASSERT(!strcmp(json_string_value(json_object_get(json_object_get(drv, "env"), "FK_TEST_ENV")), "yes"));
    ASSERT(!json_object_get(json_object_get(json_object_get(env, "drivers"), "cont-seg-busy"), "env"));
    json_decref(env);

    static const char *const bad[][2] = {
        {"{\"1X\": \"a\"}", "variants[1].env.1X: not an environment variable name"},
        {"{\"A-B\": \"a\"}", "variants[1].env.A-B: not an environment variable name"},
        {"{\"X\": 1}", "variants[1].env.X: expected a string value"},
        {"[\"X=1\"]", "variants[1].env: expected {\"NAME\": \"value\", ...}"},
        {"{\"FORKSCOPE_PROMOTE\": \"beat\"}", "variants[1].env.FORKSCOPE_PROMOTE: the variant's name says who promotes"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char text[512];
        snprintf(text, sizeof text,
                 "{\"name\": \"e\", \"benchmarks\": [{\"kernel\": \"fib\"}], \"variants\": [\"serial\", "
                 "{\"name\": \"v\", \"variant\": \"cont-seg-busy\", \"env\": %s}], \"workers\": [1]}\n",
                 bad[k][0]);
        write_text(cfg, text);
        hx_config c;
        hx_diag d = {0};
        ASSERT(hx_config_load(cfg, 2, &c, &d) != 0);
        int found = 0;
        for (size_t j = 0; j < d.n; j++)
            found |= strstr(d.msgs[j], bad[k][1]) != NULL;
        ASSERT_MSG(found, "case %zu: no message containing '%s' (first: %s)", k, bad[k][1], d.n ? d.msgs[0] : "none");
        hx_config_diag_free(&d);
    }
}

/* A link in dir to this build's driver build/bin/NAME (run from the top, after make). */
static void link_driver(const char *dir, const char *name) {
    char real[PATH_MAX], from[PATH_MAX], link[PATH_MAX + 64];
    snprintf(from, sizeof from, "build/bin/%s", name);
    ASSERT_MSG(realpath(from, real), "no %s (run from the top, after make)", from);
    snprintf(link, sizeof link, "%s/%s", dir, name);
    ASSERT_MSG(symlink(real, link) == 0, "symlink %s: %s", link, strerror(errno));
}

/* The promotion axis reaches the driver: a sweep of child-native-busy (thief, the default) and
 * child-native-busy-beat, once with FORKSCOPE_BEAT_US from the variant's "env" and once without,
 * real drivers, records in each run the promotion and beat the driver's pool ran with,
 * FORKSCOPE_PROMOTE=beat, FORKSCOPE_BEAT_US=9 and FORKSCOPE_BEAT_SHARE=half in the shell's
 * environment notwithstanding (only a variant's "env" sets the beat: the one without runs at the
 * default 100 us, one slot a beat). */
TEST(promotion_axis_reaches_the_driver) {
    unsetenv("FORKSCOPE_DRIVER");
    setenv("FORKSCOPE_PROMOTE", "beat", 1); /* (a shell's setting: the thief variant must stay thief) */
    setenv("FORKSCOPE_BEAT_US", "9", 1);    /* (and these must reach no run) */
    setenv("FORKSCOPE_BEAT_SHARE", "half", 1);
    char dir[64], cfg[128], out[128], text[1024];
    tmpdir(dir, sizeof dir);
    link_driver(dir, "fk-bench-child-native");
    link_driver(dir, "fk-bench-serial");
    snprintf(cfg, sizeof cfg, "%s/p.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(text, sizeof text,
             "{\"name\": \"p\", \"benchmarks\": [{\"kernel\": \"fib\", \"params\": {\"n\": 18}}],"
             " \"variants\": [{\"name\": \"t\", \"variant\": \"child-native-busy\", \"drivers\": \"%s\"},"
             " {\"name\": \"b\", \"variant\": \"child-native-busy-beat\", \"drivers\": \"%s\","
             " \"env\": {\"FORKSCOPE_BEAT_US\": \"250\"}}, {\"name\": \"b2\", \"variant\": \"child-native-busy-beat\","
             " \"drivers\": \"%s\"}, {\"name\": \"s\", \"variant\": \"serial\", \"drivers\": \"%s\"}],"
             " \"workers\": [1, 2], \"repetitions\": 1, \"warmup\": 0, \"calibrate\": false}\n",
             dir, dir, dir, dir);
    write_text(cfg, text);
    char *log = NULL;
    int rc = sweep(cfg, out, 0, NULL, &log);
    unsetenv("FORKSCOPE_PROMOTE");
    unsetenv("FORKSCOPE_BEAT_US");
    unsetenv("FORKSCOPE_BEAT_SHARE");
    ASSERT_MSG(rc == HX_OK, "sweep: %d; %s", rc, log);
    ASSERT_MSG(strstr(log, "FORKSCOPE_BEAT_US=9 in the environment is not passed to the runs"), "no note: %s", log);
    free(log);
    json_t *recs = records(out);
    char sum_path[PATH_MAX];
    ASSERT_EQ(hx_report_fit_dir(out), HX_OK);
    snprintf(sum_path, sizeof sum_path, "%s/summary.csv", out);
    hx_summary sum;
    char err[256];
    ASSERT_MSG(hx_summary_read(sum_path, &sum, err, sizeof err) == 0, "%s", err);
    int seen = 0;
    for (size_t i = 0; i < json_array_size(recs); i++) {
        json_t *r = json_array_get(recs, i);
        const char *v = json_string_value(json_object_get(r, "variant"));
        /* summary.csv's promotions_per_s: the run's publications over its timed repetitions (one
         * run a cell: its value), none for the serial projection */
        const hx_cell *cell = NULL;
        for (size_t k = 0; k < sum.ncells; k++)
            if (!strcmp(sum.cells[k].variant, v) && sum.cells[k].workers == json_integer_value(json_object_get(r, "workers")))
                cell = &sum.cells[k];
        ASSERT_MSG(cell, "no summary cell for %s", v);
        if (!strcmp(v, "s")) {
            ASSERT_MSG(isnan(cell->promotions_per_s), "serial: promotions_per_s %g", cell->promotions_per_s);
            seen |= 4;
            continue;
        }
        json_t *rd = json_object_get(r, "driver"), *times = json_object_get(rd, "times");
        double t = 0;
        for (size_t k = 0; k < json_array_size(times); k++)
            t += json_number_value(json_array_get(times, k));
        double want = (double)json_integer_value(json_object_get(json_object_get(rd, "stats"), "publishes")) / t;
        ASSERT_MSG(fabs(cell->promotions_per_s - want) <= 1e-9 * want + 1e-9, "%s: promotions_per_s %g, the run's %g", v,
                   cell->promotions_per_s, want);
        json_t *pool = json_object_get(json_object_get(r, "driver"), "pool");
        const char *promote = json_string_value(json_object_get(pool, "promote"));
        ASSERT_MSG(promote, "run of %s: the driver's JSON names no pool.promote", v);
        int beat = v[0] == 'b';
        ASSERT_MSG(!strcmp(promote, beat ? "beat" : "thief"), "run of %s: pool.promote %s", v, promote);
        if (beat) {
            ASSERT_MSG(json_integer_value(json_object_get(pool, "beat_us")) == (!strcmp(v, "b") ? 250 : 100),
                       "run of %s: pool.beat_us %lld", v, (long long)json_integer_value(json_object_get(pool, "beat_us")));
            const char *share = json_string_value(json_object_get(pool, "beat_share"));
            ASSERT_MSG(share && !strcmp(share, "one"), "run of %s: pool.beat_share %s", v, share ? share : "(none)");
        } else {
            ASSERT(!json_object_get(pool, "beat_us"));
        }
        seen |= !strcmp(v, "b") ? 2 : !strcmp(v, "b2") ? 8 : 1;
    }
    ASSERT_EQ(json_array_size(recs), 7); /* (serial at P = 1 only) */
    json_decref(recs);
    hx_summary_free(&sum);
    ASSERT_MSG(seen == 15, "runs seen: %d (1 thief, 2 beat, 4 serial, 8 beat without env)", seen);
}

/* "instructions" counts every driver executable once, and two builds of one variant are two
 * rows, each under its variant's name (they once shared the label "fk-bench-serial" and one
 * callgrind file, and the second build's count replaced the first).  Two directories holding
 * the serial driver: two rows, named; real callgrind runs (valgrind is installed by setup).
 * And the values: per_call = (instructions at n2 - at n1) / (calls at n2 - at n1), fib(n)
 * making 2 fib(n + 1) - 1 calls; one executable counted twice counts the same; the serial
 * projection's fib is a test, two calls and an add (14 instructions with gcc -O3 here); a
 * runtime build's fork adds a push and a pop of a deque slot to that (24 for cont-seg),
 * more than serial, less than 4 times it.  The data reads and writes (callgrind's Dr, Dw,
 * with --cache-sim=yes) likewise: dr_per_call and dw_per_call are the differences of the
 * file's counts over the calls', more than none for every driver (a call's return address
 * is a write, its ret a read); the runtime's fork writes its deque slot, so cont-seg
 * writes more than serial.  And report.md's table shows them beside the instructions. */
struct icount_row {
    char driver[96], kernel[16];
    int n1, n2;
    unsigned long long ir1, ir2, dr1, dr2, dw1, dw2;
    double calls1, calls2, per_call, dr_per_call, dw_per_call;
};

static double fib_calls(int n) { /* 2 fib(n + 1) - 1, by counting them */
    return n < 2 ? 1 : 1 + fib_calls(n - 1) + fib_calls(n - 2);
}

TEST(instructions_per_build) {
    unsetenv("FORKSCOPE_DRIVER");
    char dir[64], cfg[128], out[128], a[160], b[160], c[160], path[PATH_MAX + 64];
    tmpdir(dir, sizeof dir);
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    snprintf(c, sizeof c, "%s/c", dir);
    ASSERT_EQ(mkdir(a, 0777), 0);
    ASSERT_EQ(mkdir(b, 0777), 0);
    ASSERT_EQ(mkdir(c, 0777), 0);
    link_driver(a, "fk-bench-serial");
    link_driver(b, "fk-bench-serial");
    link_driver(c, "fk-bench-cont-seg");
    snprintf(cfg, sizeof cfg, "%s/i.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    char text[1024];
    snprintf(text, sizeof text,
             "{\"name\": \"i\", \"benchmarks\": [{\"kernel\": \"fib\", \"params\": {\"n\": 5}}],"
             " \"variants\": [{\"name\": \"one\", \"variant\": \"serial\", \"drivers\": \"%s\"},"
             " {\"name\": \"two\", \"variant\": \"serial\", \"drivers\": \"%s\"},"
             " {\"name\": \"rt\", \"variant\": \"cont-seg-busy\", \"drivers\": \"%s\"}],"
             " \"workers\": [1], \"repetitions\": 1, \"warmup\": 0, \"calibrate\": false,"
             " \"instructions\": {\"kernel\": \"fib\", \"n\": [4, 8]}}\n",
             a, b, c);
    write_text(cfg, text);
    char *log = NULL;
    int rc = sweep(cfg, out, 0, NULL, &log);
    ASSERT_MSG(rc == HX_OK, "sweep: %d; %s", rc, log);
    free(log);
    snprintf(path, sizeof path, "%s/instructions.csv", out);
    char *csv = read_text(path, NULL);
    ASSERT_MSG(csv, "no %s", path);
    char *csv_first = strdup(csv);
    static const char *const want[] = {"one:fk-bench-serial", "two:fk-bench-serial", "rt:fk-bench-cont-seg"};
    struct icount_row rows[3];
    int nrows = 0;
    char *line = strtok(csv, "\n");
    ASSERT_STR_CONTAINS(line, "driver,kernel,n1,n2,instructions_n1,instructions_n2,calls_n1,calls_n2,per_call,");
    ASSERT_STR_CONTAINS(line, ",vs_serial,dr_n1,dr_n2,dw_n1,dw_n2,dr_per_call,dw_per_call,dr_vs_serial,dw_vs_serial");
    for (line = strtok(NULL, "\n"); line; line = strtok(NULL, "\n")) {
        ASSERT_MSG(nrows < 3, "more rows than drivers: %s", line);
        struct icount_row *r = &rows[nrows];
        /* (vs_serial and the other ratios are empty: no variant is the default build's serial) */
        ASSERT_MSG(sscanf(line, "%95[^,],%15[^,],%d,%d,%llu,%llu,%lf,%lf,%lf,,%llu,%llu,%llu,%llu,%lf,%lf,,", r->driver,
                          r->kernel, &r->n1, &r->n2, &r->ir1, &r->ir2, &r->calls1, &r->calls2, &r->per_call, &r->dr1,
                          &r->dr2, &r->dw1, &r->dw2, &r->dr_per_call, &r->dw_per_call) == 15,
                   "not a row: %s", line);
        ASSERT_MSG(line[strlen(line) - 1] == ',' && line[strlen(line) - 2] == ',', "not a row: %s", line);
        ASSERT_MSG(!strcmp(r->driver, want[nrows]), "row %d is %s, expected %s", nrows + 1, r->driver, want[nrows]);
        ASSERT_MSG(!strcmp(r->kernel, "fib") && r->n1 == 4 && r->n2 == 8, "%s", line);
        ASSERT_NEAR(r->calls1, fib_calls(4), 0);
        ASSERT_NEAR(r->calls2, fib_calls(8), 0);
        ASSERT_MSG(r->ir2 > r->ir1 && r->ir1 > 0, "%s", line);
        ASSERT_NEAR(r->per_call, (double)(r->ir2 - r->ir1) / (r->calls2 - r->calls1), 0.0005);
        ASSERT_MSG(r->dr2 > r->dr1 && r->dr1 > 0 && r->dw2 > r->dw1 && r->dw1 > 0, "%s", line);
        ASSERT_NEAR(r->dr_per_call, (double)(r->dr2 - r->dr1) / (r->calls2 - r->calls1), 0.0005);
        ASSERT_NEAR(r->dw_per_call, (double)(r->dw2 - r->dw1) / (r->calls2 - r->calls1), 0.0005);
        ASSERT_MSG(r->dr_per_call > 0 && r->dw_per_call > 0, "%s: no data reads or writes per call", line);
        ASSERT_MSG(r->dr_per_call < r->per_call && r->dw_per_call < r->per_call,
                   "%s: more data accesses of one kind than instructions", line);
        nrows++;
    }
    ASSERT_EQ(nrows, 3);
    free(csv);
    ASSERT_MSG(rows[0].ir1 == rows[1].ir1 && rows[0].ir2 == rows[1].ir2,
               "one executable, two counts: %llu, %llu vs %llu, %llu", rows[0].ir1, rows[0].ir2, rows[1].ir1,
               rows[1].ir2);
    ASSERT_MSG(rows[0].dr1 == rows[1].dr1 && rows[0].dr2 == rows[1].dr2 && rows[0].dw1 == rows[1].dw1 &&
                   rows[0].dw2 == rows[1].dw2,
               "one executable, two counts of reads and writes: %llu, %llu, %llu, %llu vs %llu, %llu, %llu, %llu",
               rows[0].dr1, rows[0].dr2, rows[0].dw1, rows[0].dw2, rows[1].dr1, rows[1].dr2, rows[1].dw1, rows[1].dw2);
    double serial = rows[0].per_call, rt = rows[2].per_call;
    printf("  instructions per fib call: serial %.3f (one and two: %llu at fib(4), %llu at fib(8)), cont-seg %.3f\n",
           serial, rows[0].ir1, rows[0].ir2, rt);
    printf("  data reads, writes per fib call: serial %.3f, %.3f; cont-seg %.3f, %.3f\n", rows[0].dr_per_call,
           rows[0].dw_per_call, rows[2].dr_per_call, rows[2].dw_per_call);
    ASSERT_MSG(serial >= 8 && serial <= 30, "serial fib: %.3f instructions per call", serial);
    ASSERT_MSG(rt > serial && rt < 4 * serial, "cont-seg fib: %.3f instructions per call, serial %.3f", rt, serial);
    ASSERT_MSG(rows[2].dw_per_call > rows[0].dw_per_call, "cont-seg fib: %.3f writes per call, serial %.3f",
               rows[2].dw_per_call, rows[0].dw_per_call);
    char *md = NULL; /* report.md's table of this instructions.csv */
    size_t mdlen = 0;
    FILE *mdf = open_memstream(&md, &mdlen);
    ASSERT(mdf);
    hx_overhead_write_md(mdf, out);
    fclose(mdf);
    ASSERT_STR_CONTAINS(md, "| driver | instructions per call | × serial | data reads per call | × serial "
                            "| data writes per call | × serial |");
    char want_row[256];
    snprintf(want_row, sizeof want_row, "| rt:fk-bench-cont-seg | %.2f |  | %.2f |  | %.2f |  |\n", rows[2].per_call,
             rows[2].dr_per_call, rows[2].dw_per_call);
    ASSERT_STR_CONTAINS(md, want_row);
    free(md);
    snprintf(path, sizeof path, "%s/callgrind/one-fib8.out", out);
    ASSERT_MSG(access(path, F_OK) == 0, "no %s", path);
    snprintf(path, sizeof path, "%s/callgrind/two-fib8.out", out);
    ASSERT_MSG(access(path, F_OK) == 0, "no %s", path);
    /* Resumed, the callgrind files are reused, except one kept from before the data reads
     * and writes (callgrind without --cache-sim=yes: events Ir only), which is counted
     * again: the same instructions.csv. */
    struct stat kept;
    ASSERT_EQ(stat(path, &kept), 0);
    char old[PATH_MAX + 64], cmd[3 * PATH_MAX], real[PATH_MAX];
    ASSERT(realpath("build/bin/fk-bench-serial", real));
    snprintf(old, sizeof old, "%s/callgrind/one-fib8.out", out);
    snprintf(cmd, sizeof cmd,
             "valgrind --tool=callgrind --callgrind-out-file=%s %s --kernel fib --n 8 --workers 1 --reps 1 "
             "--warmup 0 >/dev/null 2>&1",
             old, real);
    ASSERT_EQ(system(cmd), 0);
    char *cg = read_text(old, NULL);
    ASSERT_MSG(cg && strstr(cg, "\nevents: Ir\n"), "%s: not an instructions-only callgrind file", old);
    free(cg);
    rc = sweep(cfg, out, 1, NULL, &log);
    ASSERT_MSG(rc == HX_OK, "resumed sweep: %d; %s", rc, log);
    free(log);
    cg = read_text(old, NULL);
    ASSERT_MSG(cg && strstr(cg, "\nevents: Ir Dr Dw "), "%s: not counted again with the data reads and writes", old);
    free(cg);
    struct stat now;
    ASSERT_EQ(stat(path, &now), 0);
    ASSERT_MSG(now.st_mtim.tv_sec == kept.st_mtim.tv_sec && now.st_mtim.tv_nsec == kept.st_mtim.tv_nsec,
               "%s: counted again, not reused", path);
    snprintf(path, sizeof path, "%s/instructions.csv", out);
    csv = read_text(path, NULL);
    ASSERT_MSG(csv && !strcmp(csv, csv_first), "resumed: %s differs:\n%s\nfirst:\n%s", path, csv ? csv : "",
               csv_first);
    free(csv);
    free(csv_first);
}

/* report.md's table of instructions.csv: the data reads and writes beside the instructions,
 * ratios to serial where the file has them; a file from before the reads and writes (ten
 * columns) still gives its instructions, with "–" for the rest; a row without vs_serial
 * (no serial among the variants) has empty ratio cells. */
TEST(instructions_report_columns) {
    char dir[64], path[PATH_MAX];
    tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/instructions.csv", dir);
    static const char *const in[2] = {
        "driver,kernel,n1,n2,instructions_n1,instructions_n2,calls_n1,calls_n2,per_call,vs_serial,"
        "dr_n1,dr_n2,dw_n1,dw_n2,dr_per_call,dw_per_call,dr_vs_serial,dw_vs_serial\n"
        "fk-bench-serial,fib,22,27,1,2,57313,635621,14.000,1.000,1,2,1,2,3.000,2.000,1.000,1.000\n"
        "fk-bench-cont-lin,fib,22,27,1,2,57313,635621,20.500,1.464,1,2,1,2,5.000,6.000,1.667,3.000\n"
        "x:fk-bench-cont-seg,fib,22,27,1,2,57313,635621,24.000,,1,2,1,2,7.000,8.000,,\n",
        "driver,kernel,n1,n2,instructions_n1,instructions_n2,calls_n1,calls_n2,per_call,vs_serial\n"
        "fk-bench-serial,fib,22,27,1,2,57313,635621,14.000,1.000\n"
        "fk-bench-cont-lin,fib,22,27,1,2,57313,635621,20.500,1.464\n"
        "x:fk-bench-cont-seg,fib,22,27,1,2,57313,635621,24.000,\n"};
    static const char *const want[2][4] = {
        {"| data writes per call | × serial |", "| fk-bench-serial | 14.00 | 1.00 | 3.00 | 1.00 | 2.00 | 1.00 |\n",
         "| fk-bench-cont-lin | 20.50 | 1.46 | 5.00 | 1.67 | 6.00 | 3.00 |\n",
         "| x:fk-bench-cont-seg | 24.00 |  | 7.00 |  | 8.00 |  |\n"},
        {"| data writes per call | × serial |", "| fk-bench-serial | 14.00 | 1.00 | – | – | – | – |\n",
         "| fk-bench-cont-lin | 20.50 | 1.46 | – | – | – | – |\n",
         "| x:fk-bench-cont-seg | 24.00 |  | – |  | – |  |\n"}};
    for (int k = 0; k < 2; k++) {
        write_text(path, in[k]);
        char *md = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&md, &len);
        ASSERT(f);
        hx_overhead_write_md(f, dir);
        fclose(f);
        ASSERT_STR_CONTAINS(md, "### Instructions and data accesses per fib call");
        ASSERT_STR_CONTAINS(md, "fib(27) minus fib(22)");
        for (int i = 0; i < 4; i++)
            ASSERT_MSG(strstr(md, want[k][i]), "file %d: no '%s' in:\n%s", k, want[k][i], md);
        free(md);
    }
}

/* ---- runtimes by command ----------------------------------------------------------------------- */

/* Command variants (harness/config/command.h) run the programs of tests/fixtures/cmd: the right
 * answer with a time line is ok; a wrong answer is "wrong"; a hang is killed at the limit; no
 * time line with a time regex is an error; without a time regex the wall time is taken; a
 * kernel without a command is skipped; env.json has each program's SHA-1. */
TEST(command_variants) {
    char dir[64], cfg[128], out[128], cmd[PATH_MAX], text[6 * PATH_MAX + 2048];
    tmpdir(dir, sizeof dir);
    snprintf(cfg, sizeof cfg, "%s/cmd.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    ASSERT(realpath("tests/fixtures/cmd", cmd));
    snprintf(text, sizeof text,
             "{\"name\": \"cmd\", \"benchmarks\": [{\"kernel\": \"fib\", \"params\": {\"n\": 20}},"
             " {\"kernel\": \"nqueens\", \"params\": {\"n\": 6}}], \"variants\": ["
             "{\"name\": \"ok\", \"command\": {\"fib\": [\"%s/fib-ok.sh\", \"{workers}\", \"{n}\"]},"
             " \"calibrate\": [\"%s/nothing.sh\"], \"time\": {\"regex\": \"Time: ([0-9.]+)\"},"
             " \"answer\": {\"regex\": \"fib\\\\([0-9]+\\\\) = ([0-9]+)\"}},"
             "{\"name\": \"wrong\", \"command\": {\"fib\": [\"%s/fib-wrong.sh\", \"{workers}\", \"{n}\"]},"
             " \"answer\": {\"regex\": \"= ([0-9]+)\"}},"
             "{\"name\": \"hang\", \"command\": {\"fib\": [\"%s/fib-hang.sh\"]}, \"answer\": {\"regex\": \"= ([0-9]+)\"}},"
             "{\"name\": \"notime\", \"command\": {\"fib\": [\"%s/fib-notime.sh\", \"{n}\"]},"
             " \"time\": {\"regex\": \"Time: ([0-9.]+)\"}, \"answer\": {\"regex\": \"= ([0-9]+)\"}},"
             "{\"name\": \"wall\", \"command\": {\"fib\": [\"%s/fib-notime.sh\", \"{n}\"]},"
             " \"answer\": {\"regex\": \"= ([0-9]+)\"}}],"
             " \"workers\": [1, 2], \"repetitions\": 2, \"time_limit_s\": 1}\n",
             cmd, cmd, cmd, cmd, cmd, cmd);
    write_text(cfg, text);
    ASSERT_EQ(sweep(cfg, out, 0, NULL, NULL), HX_ERUNS_FAILED);
    json_t *recs = records(out);
    int seen[5] = {0};
    static const char *const names[] = {"ok", "wrong", "hang", "notime", "wall"};
    static const char *const want[] = {"ok", "wrong", "timeout", "error", "ok"};
    size_t i;
    json_t *r;
    json_array_foreach(recs, i, r) {
        ASSERT(strcmp(sget(r, "benchmark"), "nqueens")); /* no command for it: skipped */
        if (!strcmp(sget(r, "kind"), "calibrate")) {
            ASSERT(!strcmp(sget(r, "variant"), "ok")); /* the only variant with a calibrate command */
            continue;
        }
        for (int k = 0; k < 5; k++)
            if (!strcmp(sget(r, "variant"), names[k])) {
                seen[k]++;
                ASSERT_MSG(!strcmp(sget(r, "status"), want[k]), "%s: status %s (%s)", names[k], sget(r, "status"),
                           json_string_value(json_object_get(r, "note")));
            }
        if (!strcmp(sget(r, "variant"), "ok"))
            ASSERT_NEAR(json_real_value(json_object_get(r, "time_s")), 0.0125, 0);
        if (!strcmp(sget(r, "variant"), "wall"))
            ASSERT(json_real_value(json_object_get(r, "time_s")) > 0 &&
                   json_real_value(json_object_get(r, "time_s")) <= json_real_value(json_object_get(r, "wall_s")) + 1e-9);
        if (!strcmp(sget(r, "variant"), "wrong"))
            ASSERT_STR_CONTAINS(json_string_value(json_object_get(r, "note")), "expected 6765");
    }
    for (int k = 0; k < 5; k++)
        ASSERT_EQ(seen[k], 4); /* 2 worker counts x 2 repetitions */
    json_decref(recs);
    char envp[256];
    snprintf(envp, sizeof envp, "%s/env.json", out);
    json_error_t e;
    json_t *env = json_load_file(envp, 0, &e);
    json_t *sums = json_object_get(json_object_get(json_object_get(env, "drivers"), "ok"), "sha1");
    char prog[PATH_MAX + 32];
    snprintf(prog, sizeof prog, "%s/fib-ok.sh", cmd);
    ASSERT_EQ(strlen(json_string_value(json_object_get(sums, prog))), 40);
    json_decref(env);
}

/* The known answers a command's output is checked against. */
TEST(command_expected_answers) {
    char dir[64], cfg[128];
    tmpdir(dir, sizeof dir);
    snprintf(cfg, sizeof cfg, "%s/a.json", dir);
    write_text(cfg, "{\"name\": \"a\", \"benchmarks\": [{\"kernel\": \"fib\", \"params\": {\"n\": 30}},"
                    " {\"kernel\": \"nqueens\", \"params\": {\"n\": 8}},"
                    " {\"kernel\": \"integrate\", \"params\": {\"n\": 10}},"
                    " {\"name\": \"T1\", \"kernel\": \"uts\", \"params\": {\"preset\": \"T1\"}},"
                    " {\"name\": \"bal\", \"kernel\": \"uts\", \"params\": {\"t\": 3, \"b\": 2, \"d\": 5}},"
                    " {\"name\": \"geo\", \"kernel\": \"uts\", \"params\": {\"d\": 4, \"r\": 7}},"
                    " {\"kernel\": \"matmul\", \"params\": {\"n\": 16}}],"
                    " \"variants\": [\"serial\"], \"workers\": [1]}\n");
    hx_config c;
    hx_diag d = {0};
    ASSERT_EQ(hx_config_load(cfg, 2, &c, &d), 0);
    double a;
    ASSERT_EQ(hx_command_expected(&c.benchmarks[0], &a), 0);
    ASSERT_NEAR(a, 832040, 0);
    ASSERT_EQ(hx_command_expected(&c.benchmarks[1], &a), 0);
    ASSERT_NEAR(a, 92, 0);
    ASSERT_EQ(hx_command_expected(&c.benchmarks[2], &a), 0);
    ASSERT_NEAR(a, 10.0 * 10 * 102 / 4, 0); /* F(n) = n^2 (n^2 + 2) / 4 */
    ASSERT_EQ(hx_command_expected(&c.benchmarks[3], &a), 0);
    ASSERT_NEAR(a, 4130071, 0);
    ASSERT_EQ(hx_command_expected(&c.benchmarks[4], &a), 0);
    ASSERT_NEAR(a, 63, 0); /* 1 + 2 + ... + 32 */
    ASSERT_EQ(hx_command_expected(&c.benchmarks[5], &a), 0);
    uts_params up;
    uts_params_default(&up);
    up.gen_mx = 4;
    up.seed = 7;
    ASSERT_NEAR(a, (double)uts_search_serial(&up).nodes, 0); /* the serial traversal's count */
    ASSERT_EQ(hx_command_expected(&c.benchmarks[6], &a), -ENOTSUP);
    hx_config_free(&c);
    hx_config_diag_free(&d);
}

/* "paired": every round holds each family's runs back to back (same benchmark and P), in
 * an order that changes between rounds and is the same for the same seed. */
static void paired_plan(unsigned long long seed, hx_plan *p, hx_config *c) {
    char dir[64], cfg[128], text[512];
    tmpdir(dir, sizeof dir);
    snprintf(cfg, sizeof cfg, "%s/p.json", dir);
    snprintf(text, sizeof text,
             "{\"name\": \"p\", \"benchmarks\": [{\"kernel\": \"fib\", \"params\": {\"n\": 20}},"
             " {\"kernel\": \"nqueens\", \"params\": {\"n\": 8}}],"
             " \"variants\": [\"cont-seg-busy\", \"cont-seg-lazy\", \"child-seg-busy\"], \"workers\": [1, 2],"
             " \"order\": \"paired\", \"seed\": %llu, \"repetitions\": 6}\n",
             seed);
    write_text(cfg, text);
    hx_diag d = {0};
    ASSERT_EQ(hx_config_load(cfg, 2, c, &d), 0);
    hx_config_diag_free(&d);
    ASSERT_EQ(hx_plan_build(c, p), 0);
}

TEST(paired_order) {
    hx_plan p, q, r;
    hx_config cp, cq, cr;
    paired_plan(5, &p, &cp);
    paired_plan(5, &q, &cq);
    paired_plan(6, &r, &cr);
    ASSERT_EQ(p.nruns, (2 + 2 * 2) * 3 * 6); /* (calibrate + 2 benchmarks) x 2 P x 3 variants x 6 */
    int differs_by_round = 0, differs_by_seed = 0;
    for (size_t k = 0; k < p.nruns; k += 3) {
        /* runs k, k+1, k+2: one family (3 variants), one round, each variant once */
        const hx_plan_cell *a = &p.cells[p.runs[k].cell], *b = &p.cells[p.runs[k + 1].cell],
                           *c = &p.cells[p.runs[k + 2].cell];
        ASSERT(a->bench == b->bench && b->bench == c->bench && a->workers == b->workers && b->workers == c->workers);
        ASSERT(a->var != b->var && b->var != c->var && a->var != c->var);
        ASSERT(p.runs[k].rep == p.runs[k + 1].rep && p.runs[k].rep == p.runs[k + 2].rep);
        ASSERT_EQ(p.runs[k].cell, q.runs[k].cell); /* the same seed: the same plan */
        differs_by_seed |= p.runs[k].cell != r.runs[k].cell;
        if (k >= 3 * 6) /* against the same family one round before */
            for (size_t j = k - 3 * 6; j == k - 3 * 6; j++)
                differs_by_round |= p.runs[j].cell != p.runs[k].cell;
    }
    ASSERT(differs_by_round);
    ASSERT(differs_by_seed);
    hx_plan_free(&p);
    hx_plan_free(&q);
    hx_plan_free(&r);
    hx_config_free(&cp);
    hx_config_free(&cq);
    hx_config_free(&cr);
}

/* ---- records and env.json ------------------------------------------------------------------------ */

TEST(record_and_env_fields) {
    use_fake_driver();
    char dir[64], cfg[128], out[128], path[160];
    tmpdir(dir, sizeof dir);
    snprintf(cfg, sizeof cfg, "%s/f.json", dir);
    snprintf(out, sizeof out, "%s/deep/out", dir);
    const char *text = "{\"name\": \"f\", \"benchmarks\": [{\"name\": \"x\", \"kernel\": \"uts\", \"params\":"
                       " {\"preset\": \"T1\", \"b\": 4.5}}], \"variants\": [\"child-lin-lazy\"],"
                       " \"workers\": [1], \"repetitions\": 1, \"papi_events\": [\"perf::TASK-CLOCK\"]}\n";
    write_text(cfg, text);
    ASSERT_EQ(sweep(cfg, out, 0, NULL, NULL), HX_OK);
    snprintf(path, sizeof path, "%s/config.json", out);
    char *copy = read_text(path, NULL);
    ASSERT(copy && !strcmp(copy, text)); /* verbatim */
    free(copy);
    json_t *recs = records(out);
    json_t *r = find_run(recs, "x|child-lin-lazy|1#0");
    ASSERT(r);
    static const char *const keys[] = {"schema", "run_id",  "cell_id",     "benchmark", "kernel",   "params",
                                       "variant", "workers", "rep",         "kind",      "oversubscribed",
                                       "status",  "exit_code", "signal",    "wall_s",    "maxrss_kib",
                                       "user_s",  "sys_s",   "time_s",      "cpu_s",     "driver",      "stderr_tail", "started"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        ASSERT_MSG(json_object_get(r, keys[i]), "record has no %s", keys[i]);
    ASSERT_EQ(json_integer_value(json_object_get(r, "schema")), 1);
    ASSERT(!strcmp(sget(r, "kind"), "timed"));
    ASSERT(!strcmp(sget(r, "kernel"), "uts"));
    ASSERT(!strcmp(sget(json_object_get(r, "params"), "preset"), "T1"));
    ASSERT(!strcmp(sget(find_run(recs, "calibrate|child-lin-lazy|1#0"), "kind"), "calibrate"));
    json_decref(recs);
    snprintf(path, sizeof path, "%s/env.json", out);
    json_error_t e;
    json_t *env = json_load_file(path, 0, &e);
    ASSERT(env);
    static const char *const ekeys[] = {"date",        "host",       "kernel",       "cpu_model",
                                        "cores",       "topology",   "memory_bytes", "git_revision",
                                        "git_dirty",   "compilers",  "drivers",      "forkscope_version",
                                        "config_file", "papi_events"};
    for (size_t i = 0; i < sizeof ekeys / sizeof ekeys[0]; i++)
        ASSERT_MSG(json_object_get(env, ekeys[i]), "env.json has no %s", ekeys[i]);
    ASSERT_STR_CONTAINS(sget(env, "topology"), "PU:");
    ASSERT(json_object_get(json_object_get(env, "drivers"), "child-lin-lazy"));
    json_decref(env);
}

/* "breakdown": the runtime variants' runs of the benchmarks it names, and only those, ask their
 * driver to account (--account times); their records carry its breakdown; fit puts the parts
 * and the work inflation into summary.csv and report.md, and plot draws them. */
/* Records from drivers before 0.24 (no promote part in their breakdown) still fit: promote_s
 * and promotion_ns empty (not a measured 0), the other parts and the overhead as before. */
TEST(breakdown_before_promote) {
    use_fake_driver();
    setenv("FAKE_BEFORE_PROMOTE", "1", 1);
    char dir[64], cfg[128], out[128], path[200], err[256];
    tmpdir(dir, sizeof dir);
    snprintf(cfg, sizeof cfg, "%s/b.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    write_text(cfg, "{\"name\": \"b\", \"benchmarks\": [{\"name\": \"x\", \"kernel\": \"fib\", \"params\": {\"n\": 0}}],"
                    " \"variants\": [\"cont-seg-busy\"], \"workers\": [2], \"repetitions\": 2, "
                    "\"breakdown\": true, \"calibrate\": false}\n");
    ASSERT_EQ(sweep(cfg, out, 0, NULL, NULL), HX_OK);
    unsetenv("FAKE_BEFORE_PROMOTE");
    ASSERT_EQ(hx_report_fit_dir(out), HX_OK);
    snprintf(path, sizeof path, "%s/summary.csv", out);
    hx_summary s;
    ASSERT_EQ(hx_summary_read(path, &s, err, sizeof err), 0);
    long k = hx_stats_find(&s, "x", "cont-seg-busy", 2);
    ASSERT(k >= 0);
    const hx_cell *c = &s.cells[k];
    ASSERT_MSG(isnan(c->bd[HX_BD_PROMOTE]) && isnan(c->promotion_ns), "promote_s %g, promotion_ns %g: not measured",
               c->bd[HX_BD_PROMOTE], c->promotion_ns);
    ASSERT_MSG(fabs(c->bd[HX_BD_WORK] - 1.0) < 1e-9 && fabs(c->bd[HX_BD_WALL] - 1.5) < 1e-9, "work %g, wall %g",
               c->bd[HX_BD_WORK], c->bd[HX_BD_WALL]);
    hx_summary_free(&s);
    snprintf(path, sizeof path, "%s/report.md", out);
    char *md = read_text(path, NULL);
    ASSERT(md);
    /* work 66.7%, search 16.7, steal 3.3, join 6.7, wait 0, fiber 0, sleep 6.7, promote —;
     * idle 23.3, overhead 10.0 */
    ASSERT_STR_CONTAINS(md, "| 66.7 | 16.7 | 3.3 | 6.7 | 0.0 | 0.0 | 6.7 | — | 23.3 | 10.0 |");
    free(md);
    /* compared with the same sweep by today's driver: promote's change is unknown ("—"), not
     * all of B's promote time, and it is not what changed most */
    char out2[160];
    snprintf(out2, sizeof out2, "%s/new", dir);
    ASSERT_EQ(sweep(cfg, out2, 0, NULL, NULL), HX_OK);
    ASSERT_EQ(hx_report_fit_dir(out2), HX_OK);
    char *cargv[] = {(char *)"compare", out, out2, (char *)"-o", path, NULL};
    snprintf(path, sizeof path, "%s/cmp", dir);
    int crc = hx_cmd_compare(5, cargv);
    ASSERT_MSG(crc == HX_OK || crc == HX_ETOOL, "compare: %d", crc);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "%s/cmp/compare.md", dir);
    md = read_text(cmd, NULL);
    ASSERT(md);
    char *sec = strstr(md, "## Where the time changed");
    ASSERT_MSG(sec && strstr(sec, " | — | ") && !strstr(sec, "promote up"), "compare.md's breakdown: %s",
               sec ? sec : "none");
    free(md);
}

TEST(breakdown_runs_and_summary) {
    use_fake_driver();
    char dir[64], cfg[128], out[128], path[200], err[256];
    tmpdir(dir, sizeof dir);
    snprintf(cfg, sizeof cfg, "%s/b.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    write_text(cfg, "{\"name\": \"b\", \"benchmarks\": [{\"name\": \"x\", \"kernel\": \"fib\", \"params\": {\"n\": 0}},"
                    " {\"name\": \"y\", \"kernel\": \"fib\", \"params\": {\"n\": 0}}], \"variants\": [\"serial\", "
                    "\"cont-seg-busy\", \"child-fiber-lazy-home\"], \"workers\": [1, 2], \"repetitions\": 2, "
                    "\"breakdown\": [\"x\"], \"calibrate\": false}\n");
    ASSERT_EQ(sweep(cfg, out, 0, NULL, NULL), HX_OK);
    json_t *recs = records(out);
    size_t i, with = 0;
    json_t *r;
    json_array_foreach(recs, i, r) {
        int has = json_object_get(json_object_get(r, "driver"), "breakdown") != NULL;
        int want = !strcmp(sget(r, "benchmark"), "x") && strcmp(sget(r, "variant"), "serial");
        ASSERT_MSG(has == want, "%s: breakdown %d, wanted %d", sget(r, "run_id"), has, want);
        with += has;
    }
    ASSERT_EQ(with, 8); /* x: 2 runtime variants x 2 worker counts x 2 repetitions */
    json_decref(recs);
    ASSERT_EQ(hx_report_fit_dir(out), HX_OK);
    snprintf(path, sizeof path, "%s/summary.csv", out);
    hx_summary s;
    ASSERT_EQ(hx_summary_read(path, &s, err, sizeof err), 0);
    long ks = hx_stats_find(&s, "x", "serial", 1), k = hx_stats_find(&s, "x", "cont-seg-busy", 2);
    long k1 = hx_stats_find(&s, "x", "cont-seg-busy", 1), ky = hx_stats_find(&s, "y", "cont-seg-busy", 2);
    ASSERT(ks >= 0 && k >= 0 && k1 >= 0 && ky >= 0);
    const hx_cell *c = &s.cells[k];
    /* per repetition: the driver's sums over its 2 repetitions, halved */
    static const double want[HX_BD_N] = {1.0, 0.25, 0.05, 0.1, 0, 0, 0.1, 0.02, 1.52};
    for (int b = 0; b < HX_BD_N; b++)
        ASSERT_MSG(fabs(c->bd[b] - want[b]) < 1e-9, "%s_s %g, wanted %g", hx_bd_names[b], c->bd[b], want[b]);
    ASSERT_MSG(fabs(c->inflation_ts - 1.0 / s.cells[ks].time_median) < 1e-6 * c->inflation_ts,
               "inflation_ts %g, work 1.0 / T_s %g", c->inflation_ts, s.cells[ks].time_median);
    ASSERT_MSG(fabs(c->inflation_t1 - 1.0 / s.cells[k1].time_median) < 1e-6 * c->inflation_t1,
               "inflation_t1 %g, work 1.0 / T_1 %g", c->inflation_t1, s.cells[k1].time_median);
    ASSERT_MSG(fabs(s.cells[k1].bd[HX_BD_WORK] - 0.5) < 1e-9, "P = 1: work_s %g", s.cells[k1].bd[HX_BD_WORK]);
    /* τ: each run's promote time (0.04 s over its 2 repetitions) over its 400,000 publications */
    ASSERT_MSG(fabs(c->promotion_ns - 100) < 1e-6, "promotion_ns %g, wanted 100", c->promotion_ns);
    ASSERT(isnan(s.cells[ky].promotion_ns) && isnan(s.cells[ks].promotion_ns));
    ASSERT(isnan(s.cells[ky].bd[HX_BD_WORK]) && isnan(s.cells[ky].inflation_ts) && isnan(s.cells[ks].bd[HX_BD_WALL]));
    hx_summary_free(&s);
    snprintf(path, sizeof path, "%s/report.md", out);
    char *md = read_text(path, NULL);
    ASSERT(md);
    ASSERT_STR_CONTAINS(md, "## Where the time goes");
    /* P = 2 of 1.52 s: work 65.8%, search 16.4, steal 3.3, join 6.6, wait 0, fiber 0, sleep 6.6,
     * promote 1.3; idle 23.0, overhead 11.2 (promote in it); τ 100 ns */
    ASSERT_STR_CONTAINS(md, "| cont-seg-busy | 2 |");
    ASSERT_STR_CONTAINS(md, "| 65.8 | 16.4 | 3.3 | 6.6 | 0.0 | 0.0 | 6.6 | 1.3 | 23.0 | 11.2 |");
    ASSERT_STR_CONTAINS(md, " | 100 |\n");
    char *sec = strstr(md, "## Where the time goes"), *end = sec ? strstr(sec + 3, "\n## ") : NULL;
    if (end)
        *end = 0;
    ASSERT_MSG(sec && strstr(sec, "### x (") && !strstr(sec, "### y ("), "the breakdown section: %s", sec ? sec : "none");
    free(md);
    /* the figure: one panel (x), a bar per runtime cell; drawn if gnuplot is here */
    int prc = hx_plot_dir(out);
    snprintf(path, sizeof path, "%s/plots/breakdown-settings.gp", out);
    char *gs = read_text(path, NULL);
    ASSERT(gs);
    ASSERT_STR_CONTAINS(gs, "bd_npanels = 1\nbd_maxrows = 4\n");
    free(gs);
    snprintf(path, sizeof path, "%s/plots/breakdown.dat", out);
    char *dat = read_text(path, NULL);
    ASSERT(dat);
    ASSERT_STR_CONTAINS(dat, "\"cont-seg-busy P=2\" 65.7895 16.4474 3.2895 6.5789 0.0000 0.0000 6.5789 1.3158 ");
    free(dat);
    snprintf(path, sizeof path, "%s/plots/breakdown.png", out);
    ASSERT_MSG(prc == HX_ETOOL || (prc == HX_OK && access(path, F_OK) == 0), "plot: %d, %s", prc, path);
    /* compare: each part's change beside the time's, for the cells with a breakdown (x) only */
    char *cargv[] = {(char *)"compare", out, (char *)"--a", (char *)"cont-seg-busy", (char *)"--b",
                     (char *)"child-fiber-lazy-home", NULL};
    int crc = hx_cmd_compare(6, cargv);
    ASSERT_MSG(crc == HX_OK || crc == HX_ETOOL, "compare: %d", crc);
    snprintf(path, sizeof path, "%s/compare-child-fiber-lazy-home-vs-cont-seg-busy/compare.md", out);
    char *cmp = read_text(path, NULL);
    ASSERT_MSG(cmp, "no %s", path);
    sec = strstr(cmp, "## Where the time changed");
    end = sec ? strstr(sec + 3, "\n## ") : NULL;
    if (end)
        *end = 0;
    ASSERT_MSG(sec && strstr(sec, "| x | 1 |") && strstr(sec, "| x | 2 |") && !strstr(sec, "| y |"),
               "compare.md's breakdown: %s", sec ? sec : "none");
    /* the lazy variant sleeps 0.2 s a repetition more, the rest alike: all of the change */
    ASSERT_STR_CONTAINS(sec, " | +200.000 | +0.000 (0%) | +0.000 (0%) | +0.000 (0%) | +0.000 (0%) "
                             "| +0.000 (0%) | +0.000 (0%) | +200.000 (100%) | +0.000 (0%) | sleep up |");
    free(cmp);
}

/* ---- repetitions inside each process ("process_reps") ------------------------------------------ */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The coin sweep's records: every ok run's time_s is the median of its driver's "times", which
 * hold `reps` repetitions; *heads / *tails count its processes at 10 / 30 ms (per variant:
 * serial, cont-seg-busy). */
static void check_coin_records(const char *out, unsigned reps, int heads[2], int tails[2]) {
    json_t *recs = records(out);
    size_t i;
    json_t *r;
    heads[0] = heads[1] = tails[0] = tails[1] = 0;
    json_array_foreach(recs, i, r) {
        ASSERT_MSG(!strcmp(sget(r, "status"), "ok"), "%s: %s", sget(r, "run_id"), sget(r, "status"));
        json_t *d = json_object_get(r, "driver"), *times = json_object_get(d, "times");
        ASSERT_EQ(json_integer_value(json_object_get(d, "reps")), reps); /* the driver got --reps */
        ASSERT_EQ(json_array_size(times), reps);
        double v[8], t = json_real_value(json_object_get(r, "time_s"));
        for (unsigned k = 0; k < reps; k++)
            v[k] = json_number_value(json_array_get(times, k));
        qsort(v, reps, sizeof *v, cmp_double);
        ASSERT_NEAR(t, v[reps / 2], 1e-12); /* odd counts: the middle one */
        int serial = !strcmp(sget(r, "variant"), "serial");
        heads[serial] += t < 0.02;
        tails[serial] += t > 0.02;
    }
    json_decref(recs);
}

/* The coin sweep (fake nqueens 10: each process 10 or 30 ms by a coin toss, its repetitions
 * within 1%): 12 processes a cell on serial and cont-seg-busy, `preps` timed repetitions each
 * ("process_reps" absent when 0). */
static void coin_sweep(const char *dir, const char *out, unsigned preps) {
    char cfg[128], coin[128], text[512];
    snprintf(cfg, sizeof cfg, "%s/coin.json", dir);
    snprintf(coin, sizeof coin, "%s/tosses", dir);
    write_text(coin, "0\n");
    setenv("FK_TEST_COIN", coin, 1);
    snprintf(text, sizeof text,
             "{\"name\": \"coin\", \"benchmarks\": [{\"name\": \"coin\", \"kernel\": \"nqueens\", \"params\": "
             "{\"n\": 10}}], \"variants\": [\"serial\", \"cont-seg-busy\"], \"workers\": [1], \"repetitions\": 12, "
             "\"calibrate\": false%s%.0u}\n",
             preps ? ", \"process_reps\": " : "", preps);
    write_text(cfg, text);
    ASSERT_EQ(sweep(cfg, out, 0, NULL, NULL), HX_OK);
    unsetenv("FK_TEST_COIN");
}

/* Issue 19's case end to end: processes fast or slow by a coin toss, each process's
 * repetitions agreeing.  With "process_reps": 3 every driver runs --reps 3, each record's
 * time_s is the median of its three, and fit's summary.csv counts processes (n_ok 12, the
 * median over their time_s), flags the cell (bimodal: two clusters) with the between-process
 * test's numbers filled in (its F test had 12 groups); --dry-run -o DIR and compare read the
 * same values.  With the default (one repetition) the F test has nothing to weigh against. */
TEST(process_reps_end_to_end) {
    use_fake_driver();
    char dir[64], out[128], out1[128], path[200], err[256];
    tmpdir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(out1, sizeof out1, "%s/out1", dir);
    coin_sweep(dir, out, 3);
    int heads[2], tails[2];
    check_coin_records(out, 3, heads, tails);
    for (int v = 0; v < 2; v++) /* (a fixed sequence of tosses: both faces in both cells) */
        ASSERT_MSG(heads[v] >= 3 && tails[v] >= 3, "variant %d: %d heads, %d tails", v, heads[v], tails[v]);
    ASSERT_EQ(hx_report_fit_dir(out), HX_OK);
    snprintf(path, sizeof path, "%s/summary.csv", out);
    hx_summary s;
    ASSERT_EQ(hx_summary_read(path, &s, err, sizeof err), 0);
    long k = hx_stats_find(&s, "coin", "cont-seg-busy", 1);
    ASSERT(k >= 0);
    const hx_cell *c = &s.cells[k];
    ASSERT_EQ(c->n_ok, 12); /* processes, not 36 repetitions */
    ASSERT_MSG(hx_modes_flagged(c->modes.verdict), "modes %s", hx_modes_name(c->modes.verdict));
    ASSERT_MSG(c->modes.verdict == HX_MODES_BIMODAL, "modes %s", hx_modes_name(c->modes.verdict));
    ASSERT_MSG(c->modes.p < 1e-6 && c->modes.sd_within < 0.02 && c->modes.sd_between > 0.3,
               "F test p %g, SD within %g, between %g", c->modes.p, c->modes.sd_within, c->modes.sd_between);
    ASSERT_EQ(c->modes.n[0], (size_t)heads[0]);
    ASSERT_NEAR(c->modes.median[0], 0.010, 0.0002);
    ASSERT_NEAR(c->modes.median[1], 0.030, 0.0005);
    hx_summary_free(&s);

    /* --dry-run over the results: the plan says 3, and the earlier runs are judged alike */
    char planpath[200], cfg[128];
    snprintf(planpath, sizeof planpath, "%s/plan.txt", dir);
    snprintf(cfg, sizeof cfg, "%s/coin.json", dir);
    FILE *plan = fopen(planpath, "w");
    hx_sweep_opts o = {.config_path = cfg, .outdir = out, .dry_run = 1, .plan_out = plan};
    ASSERT_EQ(hx_sweep_run(&o, NULL, 0), HX_OK);
    fclose(plan);
    char *text = read_text(planpath, NULL);
    ASSERT_STR_CONTAINS(text, "Process reps (timed repetitions in each process; a run's time is their median): "
                              "serial 3, parallel 3, baseline 3");
    ASSERT_STR_CONTAINS(text, "coin|cont-seg-busy|1: bimodal");
    ASSERT_STR_CONTAINS(text, "Runs: 24 (24 timed, 0 calibrate); 24 already in raw.jsonl, 0 to go");
    free(text);

    /* compare: 12 runs a side (one value a process), both sides flagged */
    char *cargv[] = {(char *)"compare", out, (char *)"--a", (char *)"serial", (char *)"--b", (char *)"cont-seg-busy",
                     NULL};
    int crc = hx_cmd_compare(6, cargv);
    ASSERT_MSG(crc == HX_OK || crc == HX_ETOOL, "compare: %d", crc);
    snprintf(path, sizeof path, "%s/compare-cont-seg-busy-vs-serial/compare.csv", out);
    char *csv = read_text(path, NULL);
    ASSERT_MSG(csv, "no %s", path);
    ASSERT_STR_CONTAINS(csv, "time,coin,serial,cont-seg-busy,1,");
    char *line = strstr(csv, "time,coin,");
    ASSERT_MSG(line && strstr(line, ",12,12,") && strstr(line, ",bimodal,bimodal,no"), "compare.csv: %s", csv);
    free(csv);

    /* the default, one repetition a process: the same tosses, no within-process spread */
    coin_sweep(dir, out1, 0);
    check_coin_records(out1, 1, heads, tails);
    ASSERT_EQ(hx_report_fit_dir(out1), HX_OK);
    snprintf(path, sizeof path, "%s/summary.csv", out1);
    ASSERT_EQ(hx_summary_read(path, &s, err, sizeof err), 0);
    c = &s.cells[hx_stats_find(&s, "coin", "cont-seg-busy", 1)];
    ASSERT_EQ(c->n_ok, 12);
    ASSERT_MSG(isnan(c->modes.p) && isnan(c->modes.sd_within), "F test p %g without repetitions", c->modes.p);
    hx_summary_free(&s);
}

/* The plan: each cell's preps by class (calibrate cells too; a command variant 1); the
 * estimate counts the timed repetitions (3 of them: three times one's kernel time, the process
 * start once); a command variant's sweep says the key does not reach it and runs it once. */
TEST(process_reps_plan) {
    char dir[64], cfg[128], out[128], cmd[PATH_MAX], text[2 * PATH_MAX + 1024];
    tmpdir(dir, sizeof dir);
    snprintf(cfg, sizeof cfg, "%s/p.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    ASSERT(realpath("tests/fixtures/cmd", cmd));
    double est[2][8];
    for (int pass = 0; pass < 2; pass++) {
        snprintf(text, sizeof text,
                 "{\"name\": \"p\", \"benchmarks\": [{\"kernel\": \"fib\", \"params\": {\"n\": 20}}], \"variants\": "
                 "[\"cont-seg-busy\", \"serial\", \"tbb\", {\"name\": \"ok\", \"command\": {\"fib\": "
                 "[\"%s/fib-ok.sh\", \"{workers}\", \"{n}\"]}, \"calibrate\": [\"%s/nothing.sh\"], \"time\": "
                 "{\"regex\": \"Time: ([0-9.]+)\"}, \"answer\": {\"regex\": \"fib\\\\([0-9]+\\\\) = ([0-9]+)\"}}], "
                 "\"workers\": [1], \"repetitions\": 2%s}\n",
                 cmd, cmd, pass ? ", \"process_reps\": {\"parallel\": 3, \"baseline\": 3}" : "");
        write_text(cfg, text);
        hx_config c;
        hx_diag d = {0};
        ASSERT_EQ(hx_config_load(cfg, 2, &c, &d), 0);
        hx_plan p;
        ASSERT_EQ(hx_plan_build(&c, &p), 0);
        ASSERT(p.ncells <= 8);
        for (size_t i = 0; i < p.ncells; i++) {
            const hx_plan_cell *x = &p.cells[i];
            unsigned want = !pass || x->var->kind == HX_VARIANT_SERIAL || x->var->kind == HX_VARIANT_COMMAND ? 1 : 3;
            ASSERT_MSG(x->preps == want, "%s: preps %u, wanted %u", x->id, x->preps, want);
            est[pass][i] = hx_plan_estimate(x, 2);
            if (pass && x->bench && x->var->kind == HX_VARIANT_RUNTIME) /* start 0.03 s, then 3x */
                ASSERT_NEAR(est[1][i] - 0.03, 3 * (est[0][i] - 0.03), 1e-12);
            if (pass && x->preps == 1)
                ASSERT_NEAR(est[1][i], est[0][i], 1e-12);
        }
        hx_plan_free(&p);
        hx_config_free(&c);
        hx_config_diag_free(&d);
    }
    /* the command variant alone, run: once a process, and stderr says so */
    snprintf(text, sizeof text,
             "{\"name\": \"p\", \"benchmarks\": [{\"kernel\": \"fib\", \"params\": {\"n\": 20}}], \"variants\": "
             "[{\"name\": \"ok\", \"command\": {\"fib\": [\"%s/fib-ok.sh\", \"{workers}\", \"{n}\"]}, \"time\": "
             "{\"regex\": \"Time: ([0-9.]+)\"}, \"answer\": {\"regex\": \"fib\\\\([0-9]+\\\\) = ([0-9]+)\"}}], "
             "\"workers\": [1], \"repetitions\": 2, \"process_reps\": 3}\n",
             cmd);
    write_text(cfg, text);
    char *log = NULL;
    ASSERT_EQ(sweep(cfg, out, 0, NULL, &log), HX_OK);
    ASSERT_STR_CONTAINS(log, "forkscope: note: ok: command variant, runs once a process (\"process_reps\" 3 does "
                             "not apply)");
    free(log);
    json_t *recs = records(out);
    size_t i;
    json_t *r;
    json_array_foreach(recs, i, r) {
        ASSERT(!strcmp(sget(r, "status"), "ok"));
        ASSERT_NEAR(json_real_value(json_object_get(r, "time_s")), 0.0125, 0);
    }
    ASSERT_EQ(json_array_size(recs), 2);
    json_decref(recs);
}

/* ---- progress during a long run ------------------------------------------------------------------ */

static void count_tick(void *arg) { ++*(int *)arg; }

/* A run of 2.5 s ticks about once a second, and the live line then says how long the current
 * run has been going (a single T3XXL run takes minutes: the line must not look stuck). */
TEST(long_run_ticks) {
    hx_launcher *l;
    ASSERT_EQ(hx_launcher_start(&l), 0);
    char *argv[] = {(char *)"/bin/sleep", (char *)"2.5", NULL};
    int ticks = 0;
    hx_run_req rq = {argv, NULL, 30, 0, count_tick, &ticks};
    hx_run_res r;
    double t0 = test_now();
    ASSERT_EQ(hx_launcher_run(l, &rq, &r, -1), 0);
    double waited = test_now() - t0; /* the reference: how long the run kept us waiting */
    ASSERT(r.exited && r.exit_code == 0);
    hx_run_res_free(&r);
    hx_launcher_stop(l);
    /* A tick comes after a whole second without news, never sooner: at most one per second
     * waited, whatever the load.  At least one per 1.1 s waited (so 2 in 2.5 s) unless the
     * harness wakes more than 10% late: a timing check. */
    ASSERT_MSG(ticks <= (int)waited, "%d ticks in %.2f s", ticks, waited);
    ASSERT_TIMING(ticks >= (int)(waited / 1.1), "%d ticks in %.2f s", ticks, waited);

    /* The live line's run time against the same clock read around it: under a second, none;
     * else the time since the run started, to the line's 0.1 s. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ASSERT(f);
    hx_progress *p = hx_progress_new(f, 1, 1, 1, 0, 0);
    double a = test_now();
    hx_progress_run_start(p, "fib|cont-seg-busy|2");
    double b = test_now();
    hx_progress_tick(p);
    fflush(f);
    double c = test_now();
    if (c - a < 1)
        ASSERT_MSG(!strstr(buf, "this run"), "%.3f s into the run: %s", c - a, buf);
    sleep(1);
    double d = test_now();
    hx_progress_tick(p);
    fflush(f);
    double e = test_now();
    const char *shown = NULL; /* the second tick's line: the last */
    for (const char *q = buf; (q = strstr(q, "fib|cont-seg-busy|2 (this run ")); q++)
        shown = q;
    ASSERT_MSG(shown, "%.3f s into the run, no run time: %s", d - b, buf);
    double run_s = atof(shown + strlen("fib|cont-seg-busy|2 (this run "));
    ASSERT_MSG(run_s >= d - b - 0.05 && run_s <= e - a + 0.05, "the line says %.1f s; %.3f to %.3f s passed", run_s,
               d - b, e - a);
    hx_progress_run_done(p);
    hx_progress_finish(p);
    fclose(f);
    free(buf);
}

/* ---- measurement honesty: maxrss ---------------------------------------------------------------- */

static long run_maxrss(hx_launcher *l, const char *kernel, const char *n) {
    char *argv[] = {self_exe, (char *)"--kernel", (char *)kernel, (char *)"--n", (char *)n, NULL};
    hx_run_req rq = {argv, NULL, 30, 0, NULL, NULL};
    hx_run_res r;
    ASSERT_EQ(hx_launcher_run(l, &rq, &r, -1), 0);
    ASSERT_MSG(r.exited && r.exit_code == 0, "fake %s %s failed: %s", kernel, n, r.err);
    long kib = r.maxrss_kib;
    hx_run_res_free(&r);
    return kib;
}

static int cmp_long(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

TEST(maxrss_is_the_drivers_own) {
    use_fake_driver();
    hx_launcher *l;
    ASSERT_EQ(hx_launcher_start(&l), 0); /* while this process is small */
    /* Now grow the harness: 300 MiB touched. */
    size_t big = (size_t)300 << 20;
    char *hog = malloc(big);
    ASSERT(hog);
    memset(hog, 7, big);

    /* What a naive launch would measure (posix_spawn = vfork + exec): informational. */
    char *argv[] = {self_exe, (char *)"--kernel", (char *)"calibrate", NULL};
    pid_t pid;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    ASSERT_EQ(posix_spawn(&pid, self_exe, &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    int st;
    struct rusage ru;
    wait4(pid, &st, 0, &ru);
    long naive = ru.ru_maxrss;

    long calib[5], touched[5];
    for (int i = 0; i < 5; i++) {
        calib[i] = run_maxrss(l, "calibrate", "0");
        touched[i] = run_maxrss(l, "fib", "64");
    }
    qsort(calib, 5, sizeof *calib, cmp_long);
    qsort(touched, 5, sizeof *touched, cmp_long);
    long diff = touched[2] - calib[2];
    printf("  harness 300 MiB: posix_spawn child maxrss %ld KiB; via the launcher: calibrate %ld KiB, "
           "64 MiB driver %ld KiB, difference %ld KiB (64 MiB = 65536 KiB)\n",
           naive, calib[2], touched[2], diff);
    ASSERT_LT(calib[2], 32 * 1024);          /* nowhere near the harness's 300 MiB */
    ASSERT_NEAR((double)diff, 65536.0, 1024.0); /* within 1 MiB */

    /* The same through a whole sweep, reading raw.jsonl. */
    char dir[64], cfg[128], out[128];
    tmpdir(dir, sizeof dir);
    snprintf(cfg, sizeof cfg, "%s/m.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    write_text(cfg, "{\"name\": \"m\", \"benchmarks\": [{\"name\": \"m64\", \"kernel\": \"fib\", \"params\": {\"n\": 64}}],"
                    " \"variants\": [\"serial\"], \"workers\": [1], \"repetitions\": 5}\n");
    char *log;
    int rc = sweep(cfg, out, 0, l, &log);
    ASSERT_MSG(rc == HX_OK, "status %d: %s", rc, log);
    free(log);
    json_t *recs = records(out);
    long m[2][5];
    size_t nm[2] = {0, 0}, i;
    json_t *r;
    json_array_foreach(recs, i, r) {
        int k = !strcmp(sget(r, "kind"), "timed");
        if (nm[k] < 5)
            m[k][nm[k]++] = (long)json_integer_value(json_object_get(r, "maxrss_kib"));
    }
    ASSERT_EQ(nm[0], 5);
    ASSERT_EQ(nm[1], 5);
    qsort(m[0], 5, sizeof(long), cmp_long);
    qsort(m[1], 5, sizeof(long), cmp_long);
    ASSERT_NEAR((double)(m[1][2] - m[0][2]), 65536.0, 1024.0);
    json_decref(recs);
    hx_launcher_stop(l);
    free(hog);
}

/* ---- the launcher alone ------------------------------------------------------------------------ */

TEST(launcher_exec_failure_and_output) {
    hx_launcher *l;
    ASSERT_EQ(hx_launcher_start(&l), 0);
    char *argv[] = {(char *)"/nonexistent/driver", NULL};
    hx_run_req rq = {argv, NULL, 5, 0, NULL, NULL};
    hx_run_res r;
    ASSERT_EQ(hx_launcher_run(l, &rq, &r, -1), 0);
    ASSERT_EQ(r.exec_errno, ENOENT);
    hx_run_res_free(&r);
    char *argv2[] = {(char *)"/bin/sh", (char *)"-c", (char *)"echo out; echo \"$FK_X\" >&2; exit 4", NULL};
    char *env[] = {(char *)"FK_X=extra-env", NULL};
    hx_run_req rq2 = {argv2, env, 5, 0, NULL, NULL};
    ASSERT_EQ(hx_launcher_run(l, &rq2, &r, -1), 0);
    ASSERT(r.exited && r.exit_code == 4);
    ASSERT(!strcmp(r.out, "out\n"));
    ASSERT(!strcmp(r.err, "extra-env\n"));
    hx_run_res_free(&r);
    hx_launcher_stop(l);
}

/* ---- slurm shards (harness/cluster/pack.h) ---------------------------------------------------- */

TEST(shard_packing) {
    /* the greedy rule on known numbers, worked by hand: 7 5 4 3 2 on 2 shards: 7 -> s0, 5 -> s1,
     * 4 -> s1 (5 < 7), 3 -> s0 (7 < 9), 2 -> s1 (9 < 10): loads 10 and 11 */
    hx_family f[5];
    memset(f, 0, sizeof f);
    const double est[5] = {3, 7, 2, 5, 4}; /* any order in */
    for (int i = 0; i < 5; i++) {
        snprintf(f[i].key, sizeof f[i].key, "b%d|1", i);
        f[i].est = est[i];
    }
    double load[2];
    hx_pack_families(f, 5, 2, load);
    const double sorted[5] = {7, 5, 4, 3, 2};
    const size_t shard[5] = {0, 1, 1, 0, 1};
    for (int i = 0; i < 5; i++) {
        ASSERT(f[i].est == sorted[i]);
        ASSERT_EQ(f[i].shard, shard[i]);
    }
    ASSERT(load[0] == 10 && load[1] == 11);
    /* equal estimates: ties broken by key, so every machine packs alike */
    for (int i = 0; i < 5; i++) {
        snprintf(f[i].key, sizeof f[i].key, "k%d|1", 4 - i);
        f[i].est = 1;
    }
    hx_pack_families(f, 5, 3, (double[3]){0});
    for (int i = 0; i < 5; i++) {
        char want[8];
        snprintf(want, sizeof want, "k%d|1", i);
        ASSERT_MSG(!strcmp(f[i].key, want), "position %d holds %s", i, f[i].key);
        ASSERT_EQ(f[i].shard, (size_t)(i % 3));
    }

    /* a plan: families are a benchmark at one P with all its variants, never split; the
     * shards asked for are cut to the families there are; every cell is in one family */
    hx_plan p;
    hx_config c;
    paired_plan(3, &p, &c); /* fib and nqueens x 3 variants x P = 1, 2, and calibrate cells */
    hx_packing pk;
    hx_pack_plan(&p, c.cores, 0, &pk);
    ASSERT_EQ(pk.nfam, 6); /* fib|1, fib|2, nqueens|1, nqueens|2, calibrate|1, calibrate|2 */
    ASSERT_EQ(pk.nshards, 6); /* 16 asked by default, 6 families */
    ASSERT_EQ(pk.maxp, 2);
    size_t seen = 0;
    double total = 0;
    for (size_t i = 0; i < pk.nfam; i++) {
        const hx_family *fa = &pk.fam[i];
        ASSERT_EQ(fa->ncells, 3);
        double sum = 0;
        for (size_t j = 0; j < fa->ncells; j++) {
            const hx_plan_cell *cell = &p.cells[fa->cells[j]];
            char key[96];
            snprintf(key, sizeof key, "%s|%u", cell->bench ? cell->bench->name : "calibrate", cell->workers);
            ASSERT_MSG(!strcmp(key, fa->key), "cell %s in family %s", cell->id, fa->key);
            sum += hx_plan_estimate(cell, c.cores) * cell->reps;
        }
        ASSERT_NEAR(fa->est, sum, 1e-9 * sum);
        ASSERT(i == 0 || pk.fam[i - 1].est >= fa->est);
        seen += fa->ncells;
        total += fa->est;
    }
    ASSERT_EQ(seen, p.ncells);
    hx_packing_free(&pk);
    hx_pack_plan(&p, c.cores, 2, &pk);
    ASSERT_EQ(pk.nshards, 2);
    double sum = 0, longest = 0, biggest = pk.fam[0].est;
    for (size_t k = 0; k < 2; k++) {
        sum += pk.load[k];
        longest = pk.load[k] > longest ? pk.load[k] : longest;
    }
    ASSERT_NEAR(sum, total, 1e-9 * total);
    /* the greedy bound: no shard longer than the mean plus the largest family */
    ASSERT(longest <= total / 2 + biggest + 1e-9);
    hx_packing_free(&pk);
    hx_plan_free(&p);
    hx_config_free(&c);
}

TEST(slurm_time_limits) {
    struct {
        const char *s;
        double secs; /* -1: refused */
    } cases[] = {{"30", 1800},      {"1:30", 120},        {"2:00:00", 7200}, {"1-0", 86400},
                 {"1-2:30", 95400}, {"1-2:30:05", 95460}, {"0:01", 60},      {"", -1},
                 {"x", -1},         {"1:2:3:4", -1},      {"UNLIMITED", -1}, {"1-", -1},
                 {"-5", -1},        {"5:", -1},           {"1-2:3:4:5", -1}, {"0", -1},
                 {"99999999999999999999", -1}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double got = -1;
        int rc = hx_pack_slurm_time(cases[i].s, &got);
        ASSERT_MSG(cases[i].secs < 0 ? rc == -1 : rc == 0 && got == cases[i].secs, "'%s': rc %d, %g s", cases[i].s,
                   rc, got);
    }
    /* (seconds are rounded up to minutes, "0" is no limit: SLURM's rules) */
    /* the fewest shards that fit: families 7 5 4 3 2 (21 s) */
    hx_family f[5];
    memset(f, 0, sizeof f);
    const double est[5] = {7, 5, 4, 3, 2};
    for (int i = 0; i < 5; i++) {
        snprintf(f[i].key, sizeof f[i].key, "b%d|1", i);
        f[i].est = est[i];
    }
    double load[1];
    hx_pack_families(f, 5, 1, load);
    hx_packing p = {.fam = f, .nfam = 5, .nshards = 1, .load = load};
    ASSERT_EQ(hx_pack_shards_within(&p, 21), 1);
    ASSERT_EQ(hx_pack_shards_within(&p, 11), 2);  /* 10 | 11, worked above */
    ASSERT_EQ(hx_pack_shards_within(&p, 7.5), 3); /* 7 | 5+2 | 4+3 */
    ASSERT_EQ(hx_pack_shards_within(&p, 7), 3);
    ASSERT_EQ(hx_pack_shards_within(&p, 6.9), 0); /* the 7 s family alone is too long */
}

int main(int argc, char **argv) {
    if (getenv("FK_TEST_FAKE_DRIVER"))
        return fake_driver(argc, argv);
    return test_main(argc, argv,
                     (struct test_case[]){
                         TEST_CASE(launcher_exec_failure_and_output, 10),
                         TEST_CASE(failures_recorded_poll, 30),
                         TEST_CASE(failures_recorded_v2, 60),
                         TEST_CASE(failures_recorded_auto, 30),
                         TEST_CASE(sigkill_then_resume, 30),
                         TEST_CASE(sigint_then_resume, 30),
                         TEST_CASE(resume_checks_config, 20),
                         TEST_CASE(run_orders, 20),
                         TEST_CASE(dry_run_plan, 10),
                         TEST_CASE(plan_stage, 10),
                         TEST_CASE(paired_order, 10),
                         TEST_CASE(shard_packing, 10),
                         TEST_CASE(slurm_time_limits, 10),
                         TEST_CASE(instructions_per_build, 120),
                         TEST_CASE(promotion_axis_reaches_the_driver, 60),
                         TEST_CASE(instructions_report_columns, 10),
        TEST_CASE(variant_env, 60), TEST_CASE(benchmark_workers, 10),
                         TEST_CASE(command_variants, 30),
                         TEST_CASE(command_expected_answers, 10),
                         TEST_CASE(record_and_env_fields, 20),
                         TEST_CASE(breakdown_before_promote, 60),
                         TEST_CASE(breakdown_runs_and_summary, 30),
                         TEST_CASE(process_reps_end_to_end, 60),
                         TEST_CASE(process_reps_plan, 30),
                         TEST_CASE(long_run_ticks, 20),
                         TEST_CASE(maxrss_is_the_drivers_own, 30),
                         {0},
                     });
}
