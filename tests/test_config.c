/* test_config.c — configuration files: every bad fixture gives its expected errors (file,
 * line:column, key path, what was expected), the shipped configs validate, worker
 * expressions expand, variant names parse, and each kernel's option table (its description,
 * shared by the harness and the drivers) is what a driver lists and enforces
 * (`fk-bench-serial --list` and its range checks), as `forkscope kernels` prints it. */
#include "tests/testlib.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sys/stat.h>

#include "harness/config/config.h"
#include "harness/config/command.h"
#include "harness/run/icount.h"
#include "harness/util/errors.h"
#include "harness/config/variants.h"

/* ---- paths: tests run from the repository root, or find it from the executable --------------- */

static char root[PATH_MAX / 2];

static const char *repo_path(const char *rel, char *buf, size_t len) {
    if (!root[0]) {
        if (access("configs", F_OK) == 0 && access("tests/fixtures", F_OK) == 0) {
            snprintf(root, sizeof root, ".");
        } else {
            char self[PATH_MAX / 2];
            ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
            ASSERT(n > 0);
            self[n] = 0;
            for (int up = 0; up < 5; up++) /* build/rel/common/tests/test_config */
                *strrchr(self, '/') = 0;
            snprintf(root, sizeof root, "%s", self);
        }
    }
    snprintf(buf, len, "%s/%s", root, rel);
    return buf;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    ASSERT_MSG(f, "cannot open %s: %s", path, strerror(errno));
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static char *joined(const hx_diag *d) {
    size_t len = 1;
    for (size_t i = 0; i < d->n; i++)
        len += strlen(d->msgs[i]) + 1;
    char *s = calloc(1, len), *p = s;
    for (size_t i = 0; i < d->n; i++)
        p += sprintf(p, "%s\n", d->msgs[i]);
    return s;
}

/* ---- bad configs: the fixture table ---------------------------------------------------------- */

/* The baselines and the peers (peers/NAME.mk) as messages list them, in order. */
#define BASES "serial, omp, omp-llvm, tbb, fibril, lace, libfork-busy, libfork-lazy, taskflow"

/* A fixture's line with {KERNELS} replaced by the kernels' names as messages list them
 * ("fib|integrate|..."), {CHECKABLE} by those a command variant may run ("fib, ... or uts"),
 * {BASES} by BASES: a new kernel changes no fixture. */
static char *with_lists(const char *line) {
    char kernels[1024] = "", checkable[512];
    for (size_t k = 0; bench_descs[k]; k++) {
        size_t u = strlen(kernels);
        snprintf(kernels + u, sizeof kernels - u, "%s%s", u ? "|" : "", bench_descs[k]->name);
    }
    hx_command_checkable_list(checkable, sizeof checkable);
    char *out = malloc(strlen(line) + sizeof kernels + sizeof checkable + sizeof BASES), *o = out;
    ASSERT(out);
    for (const char *p = line; *p;) {
        if (!strncmp(p, "{KERNELS}", 9))
            o += sprintf(o, "%s", kernels), p += 9;
        else if (!strncmp(p, "{CHECKABLE}", 11))
            o += sprintf(o, "%s", checkable), p += 11;
        else if (!strncmp(p, "{BASES}", 7))
            o += sprintf(o, "%s", BASES), p += 7;
        else
            *o++ = *p++;
    }
    *o = 0;
    return out;
}

TEST(bad_configs_give_expected_errors) {
    char dir[PATH_MAX];
    repo_path("tests/fixtures/configs", dir, sizeof dir);
    DIR *dp = opendir(dir);
    ASSERT_MSG(dp, "cannot open %s", dir);
    struct dirent *e;
    int cases = 0;
    while ((e = readdir(dp))) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "bad_", 4) || n < 6 || strcmp(e->d_name + n - 5, ".json"))
            continue;
        char path[PATH_MAX + 256], expect_path[PATH_MAX + 256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(expect_path, sizeof expect_path, "%s/%.*s.expect", dir, (int)(n - 5), e->d_name);
        char *expect = slurp(expect_path);
        hx_config cfg;
        hx_diag d = {0};
        int rc = hx_config_load(path, 2, &cfg, &d);
        ASSERT_MSG(rc == HX_ECONFIG, "%s: status %d, expected %d", e->d_name, rc, HX_ECONFIG);
        char *all = joined(&d);
        size_t lines = 0;
        for (char *line = strtok(expect, "\n"); line; line = strtok(NULL, "\n")) {
            lines++;
            char *want = with_lists(line);
            ASSERT_MSG(strstr(all, want), "%s: expected the error\n    %s\n  got:\n%s", e->d_name, want, all);
            free(want);
        }
        /* every error reported, none twice, nothing else */
        ASSERT_MSG(d.n == lines, "%s: %zu errors, the fixture expects %zu:\n%s", e->d_name, d.n, lines, all);
        for (size_t i = 0; i < d.n; i++)
            ASSERT_MSG(!strncmp(d.msgs[i], path, strlen(path)) && d.msgs[i][strlen(path)] == ':',
                       "%s: message does not start with the file name: %s", e->d_name, d.msgs[i]);
        free(all);
        free(expect);
        hx_config_diag_free(&d);
        cases++;
    }
    closedir(dp);
    ASSERT_GE(cases, 11);
}

/* The task's own functions in callgrind_annotate's output: both clones, thunk, split part,
 * recursion levels, the serial projection; nothing else whose name starts alike. */
TEST(instructions_parser) {
    static const char out[] =
        "--------------------------------------------------------------------------------\n"
        "Ir                    file:function\n"
        "--------------------------------------------------------------------------------\n"
        "8,580,853 (53.53%)  kernels/fib.c:fib'2 [/x/fk-bench-cont-seg]\n"
        "5,084,944 (31.72%)  runtime/include/forkscope/impl.h:fib'2\n"
        "   1,000 ( 0.01%)  kernels/fib.c:fib.part.0 [/x/fk-bench-cont-seg]\n"
        "     100 ( 0.00%)  kernels/fib.c:fib__resume\n"
        "      20 ( 0.00%)  kernels/fib.c:fib__thunk\n"
        "       3 ( 0.00%)  kernels/fib.c:fib_serial'3\n"
        "     198 ( 0.00%)  kernels/fib.c:fib_verify [/x/fk-bench-cont-seg]\n"
        "      14 ( 0.00%)  kernels/fib.c:fib_run [/x/fk-bench-cont-seg]\n"
        "   9,999 ( 0.05%)  ???:fibonacci_helper [/x/y]\n"
        "   7,777 ( 0.05%)  ???:fk__push_slow [/x/y]\n";
    unsigned long long sum = 0;
    ASSERT_EQ(hx_icount_parse(out, "fib", &sum), 0);
    ASSERT_EQ_U(sum, 8580853ull + 5084944 + 1000 + 100 + 20 + 3);
    ASSERT_EQ(hx_icount_parse(out, "nqueens", &sum), -ENOENT);
    unsigned long long one[3];
    ASSERT_EQ(hx_icount_parse3(out, "fib", one), 0); /* one column: no reads, no writes */
    ASSERT_EQ_U(one[0], 8580853ull + 5084944 + 1000 + 100 + 20 + 3);
    ASSERT_EQ_U(one[1], 0);
    ASSERT_EQ_U(one[2], 0);
}

/* --show=Ir,Dr,Dw (with --cache-sim=yes): three columns, "." (no count) or "0" (a count of
 * zero, printed without a percentage) for a zero; the same functions
 * count, each column summed on its own; another function's line (fib_verify, fibonacci,
 * the program's totals) does not count, nor a header line; and hx_icount_parse reads the
 * first column of the same text. */
TEST(instructions_parser_reads_writes) {
    static const char out[] =
        "--------------------------------------------------------------------------------\n"
        "Events recorded:  Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n"
        "Events shown:     Ir Dr Dw\n"
        "--------------------------------------------------------------------------------\n"
        "Ir                 Dr               Dw               \n"
        "--------------------------------------------------------------------------------\n"
        "3,036,233 (100.0%) 597,103 (100.0%) 292,506 (100.0%)  PROGRAM TOTALS\n"
        "--------------------------------------------------------------------------------\n"
        "Ir               Dr               Dw               file:function\n"
        "--------------------------------------------------------------------------------\n"
        " 96,111 ( 3.15%)  20,895 ( 3.50%) 29,251 (10.00%)  /w/kernels/fib.c:fib.part.0'2 [/w/bin/fk-bench-cont-lin]\n"
        " 50,000 ( 1.65%)       .          10,000 ( 3.42%)  /w/runtime/include/forkscope/impl.h:fib'2\n"
        "    730 ( 0.03%)     160 ( 0.03%)    222 ( 0.10%)  /w/kernels/fib.c:fib_verify [/w/bin/fk-bench-cont-lin]\n"
        "    500 ( 0.02%)     400 ( 0.07%)    300 ( 0.10%)  ???:fibonacci [/x/y]\n"
        "     14 ( 0.00%)       3 ( 0.00%)      2 ( 0.00%)  /w/kernels/fib.c:fib_serial'3\n"
        "      1 ( 0.00%)       1 ( 0.00%)      .           /w/runtime/include/forkscope/impl.h:fib__thunk\n"
        "      7 ( 0.00%)       .                .          /w/kernels/fib.c:fib\n"
        "     40 ( 0.00%)       0               5 ( 0.00%)  /w/kernels/fib.c:fib__resume\n"
        "118,990 ( 3.37%)  19,652 ( 2.34%)       0           ./elf/dl-new-hash.h:_dl_lookup_symbol_x [/lib/ld.so]\n"
        "     20 ( 0.00%)       3 ( 0.00%)       0           /w/kernels/fib.c:fib'3\n";
    unsigned long long c[3] = {1, 1, 1}, ir = 0;
    ASSERT_EQ(hx_icount_parse3(out, "fib", c), 0);
    ASSERT_EQ_U(c[0], 96111ull + 50000 + 14 + 1 + 7 + 40 + 20);
    ASSERT_EQ_U(c[1], 20895ull + 0 + 3 + 1 + 0 + 0 + 3);
    ASSERT_EQ_U(c[2], 29251ull + 10000 + 2 + 0 + 0 + 5 + 0);
    ASSERT_EQ(hx_icount_parse(out, "fib", &ir), 0);
    ASSERT_EQ_U(ir, c[0]);
    ASSERT_EQ(hx_icount_parse3(out, "fibonacci", c), 0);
    ASSERT_EQ_U(c[0], 500);
    ASSERT_EQ_U(c[1], 400);
    ASSERT_EQ_U(c[2], 300);
    ASSERT_EQ(hx_icount_parse3(out, "nqueens", c), -ENOENT);
    ASSERT_EQ_U(c[0] + c[1] + c[2], 0);
    /* a line whose columns are all "." has no count: it is no function's line */
    ASSERT_EQ(hx_icount_parse3("  .  .  .  kernels/fib.c:fib\n", "fib", c), -ENOENT);
}

TEST(unreadable_config_is_io_error) {
    hx_config cfg;
    hx_diag d = {0};
    ASSERT_EQ(hx_config_load("/nonexistent/x.json", 2, &cfg, &d), HX_EIO);
    ASSERT_EQ(d.n, 1);
    ASSERT_STR_CONTAINS(d.msgs[0], "/nonexistent/x.json: cannot read");
    hx_config_diag_free(&d);
}

/* ---- good configs ----------------------------------------------------------------------------- */

static void load_ok(const char *rel, unsigned cores, hx_config *cfg) {
    char path[PATH_MAX];
    hx_diag d = {0};
    int rc = hx_config_load(repo_path(rel, path, sizeof path), cores, cfg, &d);
    if (rc) {
        char *all = joined(&d);
        TEST_FAIL_("%s: status %d:\n%s", rel, rc, all);
    }
    ASSERT_EQ(d.n, 0);
}

TEST(shipped_configs_validate) {
    char dir[PATH_MAX];
    DIR *dp = opendir(repo_path("configs", dir, sizeof dir));
    ASSERT(dp);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(dp))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json"))
            continue;
        char rel[300];
        snprintf(rel, sizeof rel, "configs/%s", e->d_name);
        for (unsigned cores = 1; cores <= 256; cores *= 4) {
            hx_config cfg;
            load_ok(rel, cores, &cfg);
            ASSERT(cfg.nbenchmarks > 0 && cfg.nvariants > 0 && cfg.nworkers > 0);
            hx_config_free(&cfg);
        }
        n++;
    }
    closedir(dp);
    ASSERT_GE(n, 3);
}

/* The default experiment shows the paper's two findings: per-task overhead of fine-grained
 * kernels on forkscope, OpenMP and TBB at P = 1 and the cores; and memory of a deep tree at
 * enough worker counts (beyond the cores) to fit Eq. 17, on both stealing strategies and the
 * baselines. */
TEST(quick_config_shape) {
    hx_config cfg;
    load_ok("configs/scaling.json", 16, &cfg);
    for (int k = 0; k < HX_NCLASS; k++)
        ASSERT_EQ(cfg.preps[k], 3);
    hx_config_free(&cfg);
    load_ok("configs/quick.json", 2, &cfg);
    ASSERT(!strcmp(cfg.name, "quick"));
    const char *variants[] = {"cont-seg-busy", "child-seg-busy", "serial", "omp", "omp-llvm", "tbb"};
    for (size_t k = 0; k < 6; k++) {
        int found = 0;
        for (size_t v = 0; v < cfg.nvariants; v++)
            found |= !strcmp(cfg.variants[v].name, variants[k]);
        ASSERT_MSG(found, "quick.json has no variant %s", variants[k]);
    }
    int overhead = 0, memory = 0;
    for (size_t b = 0; b < cfg.nbenchmarks; b++) {
        const hx_bench *x = &cfg.benchmarks[b];
        if ((!strcmp(x->kernel, "fib") || !strcmp(x->kernel, "integrate")) && hx_config_bench_runs_at(x, 1) &&
            hx_config_bench_runs_at(x, 2) && !hx_config_bench_runs_at(x, 8))
            overhead++;
        if (!strcmp(x->kernel, "uts")) {
            size_t n = 0;
            for (size_t w = 0; w < cfg.nworkers; w++)
                n += hx_config_bench_runs_at(x, cfg.workers[w]);
            memory |= n >= 6 && hx_config_bench_runs_at(x, 16);
        }
    }
    ASSERT_MSG(overhead == 2, "fib and integrate at P = 1 and the cores only: %d", overhead);
    ASSERT_MSG(memory, "a UTS benchmark at 6 or more worker counts up to 16");
    int imb = 0; /* the README's figure of curves meeting their bound */
    for (size_t b = 0; b < cfg.nbenchmarks; b++) {
        ASSERT_MSG(cfg.benchmarks[b].span, "quick.json measures no work and span of %s", cfg.benchmarks[b].name);
        imb |= !strcmp(cfg.benchmarks[b].name, "imbalanced-2x") && !strcmp(cfg.benchmarks[b].kernel, "imbalanced");
    }
    ASSERT_MSG(imb, "quick.json has no imbalanced-2x");
    ASSERT(cfg.time_limit_s > 0);
    hx_config_free(&cfg);
}

TEST(paper_config_workers_follow_the_machine) {
    hx_config cfg;
    load_ok("configs/paper.json", 2, &cfg);
    ASSERT_EQ(cfg.nworkers, 2);
    ASSERT_EQ(cfg.workers[0], 1);
    ASSERT_EQ(cfg.workers[1], 2);
    ASSERT_EQ(cfg.reps[HX_CLASS_SERIAL], 25);
    ASSERT_EQ(cfg.reps[HX_CLASS_PARALLEL], 5);
    ASSERT_EQ(cfg.reps[HX_CLASS_BASELINE], 25);
    ASSERT_EQ(cfg.order, HX_ORDER_INTERLEAVED);
    ASSERT(cfg.calibrate);
    hx_config_free(&cfg);
    /* The paper's machine: 1, 2, 4, 8, 16, 24, ..., 64, then every 16 up to 112. */
    static const unsigned want[] = {1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112};
    load_ok("configs/paper.json", 112, &cfg);
    ASSERT_EQ(cfg.nworkers, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < cfg.nworkers; i++)
        ASSERT_EQ(cfg.workers[i], want[i]);
    hx_config_free(&cfg);
    /* 100 cores: the last step is the machine itself. */
    load_ok("configs/paper.json", 100, &cfg);
    ASSERT_EQ(cfg.workers[cfg.nworkers - 1], 100);
    ASSERT_EQ(cfg.workers[cfg.nworkers - 2], 96);
    hx_config_free(&cfg);
}

TEST(worker_expressions_expand) {
    hx_config cfg;
    load_ok("tests/fixtures/configs/good_workers.json", 20, &cfg);
    /* 1 2 4 8 | 16 (24.. > 20 dropped) | 80.. empty | cores=20 | 3 6 12 */
    static const unsigned want[] = {1, 2, 3, 4, 6, 8, 12, 16, 20};
    ASSERT_EQ(cfg.nworkers, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < cfg.nworkers; i++)
        ASSERT_EQ(cfg.workers[i], want[i]);
    ASSERT_EQ(cfg.ndropped, 6); /* 24 32 40 48 56 64 */
    ASSERT_EQ(cfg.reps[HX_CLASS_SERIAL], 25);
    ASSERT_EQ(cfg.warmup[HX_CLASS_PARALLEL], 1);
    ASSERT_EQ(cfg.warmup[HX_CLASS_BASELINE], 0);
    ASSERT_EQ(cfg.npapi, 2);
    ASSERT(!strcmp(cfg.papi_events[1], "perf::PAGE-FAULTS"));
    ASSERT_EQ(cfg.order, HX_ORDER_SHUFFLED);
    ASSERT_EQ(cfg.seed, 42);
    ASSERT_EQ(cfg.benchmarks[0].nargs, 4);
    ASSERT(!strcmp(cfg.benchmarks[0].args[0], "--preset") && !strcmp(cfg.benchmarks[0].args[1], "T1"));
    ASSERT(!strcmp(cfg.benchmarks[0].args[2], "--g") && !strcmp(cfg.benchmarks[0].args[3], "2"));
    hx_config_free(&cfg);
    load_ok("tests/fixtures/configs/good_minimal.json", 2, &cfg);
    ASSERT(!strcmp(cfg.benchmarks[0].name, "fib")); /* the name defaults to the kernel */
    ASSERT(!strcmp(cfg.benchmarks[0].args[1], "10")); /* 1e1: an integral real is an integer */
    ASSERT(cfg.calibrate && cfg.oversubscribe);
    hx_config_free(&cfg);
}

/* Positions count characters (as jansson does), after multi-byte UTF-8 and escaped keys. */
TEST(positions_after_utf8_and_escapes) {
    char path[] = "/tmp/fk_test_config_XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    const char *text = "{\"name\": \"t\", \"description\": \"\xc3\xa9\xc3\xa9\", \"benchmarks\": [{\"kernel\": "
                       "\"fib\", \"params\": {\"\\u006e\": 99}}],\n \"variants\": [\"serial\"], \"workers\": [1]}";
    ASSERT_EQ(write(fd, text, strlen(text)), (long long)strlen(text));
    close(fd);
    hx_config cfg;
    hx_diag d = {0};
    ASSERT_EQ(hx_config_load(path, 2, &cfg, &d), HX_ECONFIG);
    ASSERT_EQ(d.n, 1);
    /* "\u006e" is the key n; its value 99 starts at character 90 of line 1 */
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "%s:1:90: benchmarks[0].params.n: 99 is out of range", path);
    ASSERT_STR_CONTAINS(d.msgs[0], want);
    hx_config_diag_free(&d);
    unlink(path);
}

/* ---- variant names -------------------------------------------------------------------------- */

/* Builds as variants: an entry {"name", "variant", "drivers"} runs another build's driver
 * under a name of its own; without "drivers" it is an alias of this build's; a benchmark's
 * own list can name it. */
TEST(variant_objects) {
    char dir[] = "/tmp/fk_test_config_XXXXXX";
    ASSERT(mkdtemp(dir));
    char exe[PATH_MAX], cfgp[PATH_MAX], text[1024];
    snprintf(exe, sizeof exe, "%s/fk-bench-child-lin", dir);
    int fd = open(exe, O_WRONLY | O_CREAT, 0755);
    ASSERT(fd >= 0);
    close(fd);
    snprintf(cfgp, sizeof cfgp, "%s/c.json", dir);
    snprintf(text, sizeof text,
             "{\"name\": \"t\", \"benchmarks\": [{\"kernel\": \"fib\"}, {\"kernel\": \"nqueens\", \"variants\": "
             "[\"mine\"]}], \"variants\": [\"child-lin-lazy\", {\"name\": \"mine\", \"variant\": \"child-lin-lazy\", "
             "\"drivers\": \"%s\"}, {\"name\": \"again\", \"variant\": \"child-lin-lazy\"}], \"workers\": [1]}",
             dir);
    FILE *f = fopen(cfgp, "w");
    ASSERT(f);
    fputs(text, f);
    fclose(f);
    hx_config cfg;
    hx_diag d = {0};
    int rc = hx_config_load(cfgp, 2, &cfg, &d);
    ASSERT_MSG(rc == 0, "%s", joined(&d));
    ASSERT_EQ(cfg.nvariants, 3);
    ASSERT(!strcmp(cfg.variants[1].name, "mine") && !strcmp(cfg.variants[1].base, "child-lin-lazy"));
    ASSERT(!strcmp(cfg.variants[1].driver, "fk-bench-child-lin") && !strcmp(cfg.variants[1].sched, "lazy"));
    ASSERT(!strcmp(cfg.variants[2].name, "again") && cfg.variants[2].drivers[0] == 0);
    ASSERT_EQ(cfg.benchmarks[1].variants, 2); /* bit 1: "mine" only */
    char *over = getenv("FORKSCOPE_DRIVER") ? strdup(getenv("FORKSCOPE_DRIVER")) : NULL;
    unsetenv("FORKSCOPE_DRIVER");
    char path[PATH_MAX], real[PATH_MAX];
    ASSERT_EQ(hx_variant_driver_path(&cfg.variants[1], path, sizeof path), 0);
    ASSERT(realpath(exe, real));
    ASSERT_MSG(!strcmp(path, real), "driver path %s, expected %s", path, real);
    ASSERT_EQ(hx_variant_driver_path(&cfg.variants[2], path, sizeof path), 0);
    ASSERT_STR_CONTAINS(path, "/fk-bench-child-lin");
    ASSERT(strncmp(path, real, strlen(dir)) != 0); /* the alias runs this build's driver */
    if (over)
        setenv("FORKSCOPE_DRIVER", over, 1);
    free(over);
    hx_config_free(&cfg);
    hx_config_diag_free(&d);
    unlink(exe);
    unlink(cfgp);
    rmdir(dir);
}

/* "peers": a peer whose driver is built joins every benchmark that takes the top-level list;
 * one that is not built is left out and named; the rest of the config is unchanged. */
static int load_text(const char *text, hx_config *cfg, hx_diag *d) {
    char dir[] = "/tmp/fk_test_peers_XXXXXX", path[PATH_MAX];
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof path, "%s/c.json", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    fclose(f);
    int rc = hx_config_load(path, 2, cfg, d);
    unlink(path);
    rmdir(dir);
    return rc;
}

/* A variant object's "drivers" directory must hold its driver, unless FORKSCOPE_DRIVER stands in
 * for every driver (tests, golden_facts): then the directory is not looked at, so that what a
 * config says does not depend on what this tree has built (configs/layouts.json's copies). */
TEST(drivers_dir_under_forkscope_driver) {
    static const char text[] = "{\"name\": \"t\", \"benchmarks\": [{\"kernel\": \"fib\"}], \"variants\": "
                               "[{\"name\": \"s-p16\", \"variant\": \"serial\", \"drivers\": \"/nonexistent/layout/p16\"}], "
                               "\"workers\": [1]}";
    char *over = getenv("FORKSCOPE_DRIVER") ? strdup(getenv("FORKSCOPE_DRIVER")) : NULL;
    hx_config cfg;
    hx_diag d = {0};
    unsetenv("FORKSCOPE_DRIVER");
    ASSERT(load_text(text, &cfg, &d) != 0);
    char *all = joined(&d);
    ASSERT_MSG(strstr(all, "variants[0].drivers: \"/nonexistent/layout/p16\" has no executable fk-bench-serial (make "
                           "layouts builds the moved copies"),
               "%s", all);
    free(all);
    hx_config_diag_free(&d);
    setenv("FORKSCOPE_DRIVER", "/bin/true", 1);
    ASSERT_MSG(load_text(text, &cfg, &d) == 0, "%s", joined(&d));
    ASSERT(!strcmp(cfg.variants[0].drivers, "/nonexistent/layout/p16"));
    char path[PATH_MAX];
    ASSERT_EQ(hx_variant_driver_path(&cfg.variants[0], path, sizeof path), 0);
    ASSERT(!strcmp(path, "/bin/true"));
    hx_config_free(&cfg);
    if (over)
        setenv("FORKSCOPE_DRIVER", over, 1);
    else
        unsetenv("FORKSCOPE_DRIVER");
    free(over);
}

TEST(peers_key) {
    static const char text[] =
        "{\"name\": \"t\", \"benchmarks\": [{\"kernel\": \"fib\"}, {\"kernel\": \"nqueens\", \"variants\": "
        "[\"serial\"]}], \"variants\": [\"serial\", \"cont-seg-busy\"], \"peers\": [\"taskflow\", \"libfork-lazy\"], "
        "\"workers\": [1]}";
    char *over = getenv("FORKSCOPE_DRIVER") ? strdup(getenv("FORKSCOPE_DRIVER")) : NULL;
    hx_config cfg;
    hx_diag d = {0};
    /* not built: no driver beside this test's executable */
    unsetenv("FORKSCOPE_DRIVER");
    ASSERT_MSG(load_text(text, &cfg, &d) == 0, "%s", joined(&d));
    ASSERT_EQ(cfg.nvariants, 2);
    char lo[128];
    hx_config_left_out_list(&cfg, lo, sizeof lo);
    ASSERT_MSG(!strcmp(lo, "taskflow, libfork-lazy"), "unbuilt: '%s'", lo);
    ASSERT_EQ(cfg.benchmarks[0].variants, 3);
    hx_config_free(&cfg);
    /* built (any executable stands in for every driver) */
    setenv("FORKSCOPE_DRIVER", "/bin/true", 1);
    ASSERT_MSG(load_text(text, &cfg, &d) == 0, "%s", joined(&d));
    ASSERT_EQ(cfg.nvariants, 4);
    ASSERT(!strcmp(cfg.variants[2].name, "taskflow") && !strcmp(cfg.variants[3].name, "libfork-lazy"));
    ASSERT_EQ(cfg.nleft_out, 0);
    ASSERT_EQ(hx_config_left_out_list(&cfg, lo, sizeof lo)[0], 0);
    ASSERT_EQ(cfg.benchmarks[0].variants, 15); /* fib: both variants and both peers */
    ASSERT_EQ(cfg.benchmarks[1].variants, 1);  /* nqueens: its own list, serial only */
    hx_config_free(&cfg);
    /* errors: a variant that is not a peer, an unknown name, a duplicate, not a list */
    static const struct {
        const char *peers, *want;
    } bad[] = {
        {"[\"omp\"]", "peers[0]: 'omp' is not a peer"},
        {"[\"fibrill\"]", "peers[0]: unknown variant 'fibrill'"},
        {"[\"lace\", \"lace\"]", "peers[1]: duplicate variant \"lace\""},
        {"\"lace\"", "peers: expected a list of peer names"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char t[512];
        snprintf(t, sizeof t,
                 "{\"name\": \"t\", \"benchmarks\": [{\"kernel\": \"fib\"}], \"variants\": [\"serial\"], "
                 "\"peers\": %s, \"workers\": [1]}",
                 bad[i].peers);
        hx_config_diag_free(&d);
        ASSERT_EQ(load_text(t, &cfg, &d), HX_ECONFIG);
        char *all = joined(&d);
        int found = strstr(all, bad[i].want) != NULL;
        ASSERT_MSG(found, "peers %s: expected \"%s\" in:\n%s", bad[i].peers, bad[i].want, all);
        free(all);
    }
    /* not built: a duplicate is still an error (the same config on every machine), and a
     * benchmark's own list naming a left-out peer leaves it out there too */
    unsetenv("FORKSCOPE_DRIVER");
    hx_config_diag_free(&d);
    ASSERT_EQ(load_text("{\"name\": \"t\", \"benchmarks\": [{\"kernel\": \"fib\"}], \"variants\": [\"serial\"], "
                        "\"peers\": [\"lace\", \"lace\"], \"workers\": [1]}",
                        &cfg, &d),
              HX_ECONFIG);
    char *all = joined(&d);
    int dup = strstr(all, "peers[1]: duplicate variant \"lace\"") != NULL;
    ASSERT_MSG(dup, "unbuilt duplicate: %s", all);
    free(all);
    hx_config_diag_free(&d);
    ASSERT_MSG(load_text("{\"name\": \"t\", \"benchmarks\": [{\"kernel\": \"fib\", \"variants\": [\"serial\", "
                         "\"taskflow\"]}], \"variants\": [\"serial\"], \"peers\": [\"taskflow\"], \"workers\": [1]}",
                         &cfg, &d) == 0,
               "%s", joined(&d));
    ASSERT_EQ(cfg.nvariants, 1);
    ASSERT_EQ(cfg.benchmarks[0].variants, 1);
    ASSERT(hx_config_left_out(&cfg, "taskflow") && !hx_config_left_out(&cfg, "serial"));
    hx_config_free(&cfg);
    if (over)
        setenv("FORKSCOPE_DRIVER", over, 1);
    else
        unsetenv("FORKSCOPE_DRIVER");
    free(over);
    hx_config_diag_free(&d);
}

/* "span": true, a list of names, or an object; wrong names and values are named. */
TEST(span_key) {
    static const char head[] = "{\"name\": \"t\", \"benchmarks\": [{\"kernel\": \"fib\"}, {\"name\": \"T1\", \"kernel\": "
                               "\"uts\", \"params\": {\"preset\": \"T1\"}}], \"variants\": [\"serial\"], "
                               "\"workers\": [1], \"span\": ";
    static const struct {
        const char *span, *want; /* want: NULL = valid */
        int fib, t1;
        double burden;
        unsigned reps;
    } cases[] = {
        {"true", NULL, 1, 1, -1, 0},
        {"false", NULL, 0, 0, -1, 0},
        {"[\"T1\"]", NULL, 0, 1, -1, 0},
        {"{\"benchmarks\": [\"fib\"], \"burden_ns\": 800, \"reps\": 5}", NULL, 1, 0, 800, 5},
        {"{\"burden_ns\": 0}", NULL, 1, 1, 0, 0},
        {"{\"burden_ns\": \"calibrate\"}", NULL, 1, 1, -2, 0},
        {"{\"burden_ns\": \"fast\"}", "span.burden_ns: expected a burden in ns (an integer) or \"calibrate\"", 0, 0, 0, 0},
        {"[\"fib\", \"T3\"]", "span[1]: expected the name of a benchmark in \"benchmarks\", got \"T3\"", 0, 0, 0, 0},
        {"3", "span: expected true, false, a list of benchmark names", 0, 0, 0, 0},
        {"{\"reps\": 0}", "span.reps", 0, 0, 0, 0},
        {"{\"burden\": 5}", "unknown key \"burden\"", 0, 0, 0, 0},
        {"{\"benchmarks\": [1]}", "span.benchmarks[0]: expected the name of a benchmark", 0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[1024];
        snprintf(text, sizeof text, "%s%s}", head, cases[i].span);
        hx_config cfg;
        hx_diag d = {0};
        int rc = load_text(text, &cfg, &d);
        char *all = joined(&d);
        if (!cases[i].want) {
            ASSERT_MSG(rc == 0, "span %s: %s", cases[i].span, all);
            ASSERT_MSG(cfg.benchmarks[0].span == cases[i].fib && cfg.benchmarks[1].span == cases[i].t1,
                       "span %s: fib %d, T1 %d", cases[i].span, cfg.benchmarks[0].span, cfg.benchmarks[1].span);
            ASSERT_MSG(cfg.span_burden_ns == cases[i].burden && cfg.span_reps == cases[i].reps,
                       "span %s: burden %g, reps %u", cases[i].span, cfg.span_burden_ns, cfg.span_reps);
            hx_config_free(&cfg);
        } else {
            ASSERT_MSG(rc == HX_ECONFIG && strstr(all, cases[i].want), "span %s: status %d, errors:\n%s\nwanted: %s",
                       cases[i].span, rc, all, cases[i].want);
        }
        free(all);
        hx_config_diag_free(&d);
    }
}

/* "process_reps": the drivers' --reps, per class like "repetitions"; 1 where absent (one
 * timed repetition a process, as before the key); the shipped scaling sweep asks for 3 in
 * every class (modes.h's between-process test needs them), the quick run leaves it at 1. */
TEST(process_reps_key) {
    static const char head[] = "{\"name\": \"t\", \"benchmarks\": [{\"kernel\": \"fib\"}], \"variants\": "
                               "[\"serial\", \"cont-seg-busy\", \"tbb\"], \"workers\": [1]";
    static const struct {
        const char *v, *want; /* v: NULL = the key absent; want: NULL = valid */
        unsigned s, p, b;
    } cases[] = {
        {NULL, NULL, 1, 1, 1},
        {"3", NULL, 3, 3, 3},
        {"{\"parallel\": 4}", NULL, 1, 4, 1},
        {"{\"serial\": 2, \"baseline\": 5}", NULL, 2, 1, 5},
        {"0", "process_reps: 0 is out of range (expected an integer in [1, 1000000])", 0, 0, 0},
        {"2.5", "process_reps: expected an integer >= 1 or {\"serial\": n, \"parallel\": n, \"baseline\": n}, got 2.5",
         0, 0, 0},
        {"{\"parallel\": 0}", "process_reps.parallel: 0 is out of range", 0, 0, 0},
        {"{}", "process_reps: empty object", 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[1024];
        snprintf(text, sizeof text, "%s%s%s}", head, cases[i].v ? ", \"process_reps\": " : "",
                 cases[i].v ? cases[i].v : "");
        hx_config cfg;
        hx_diag d = {0};
        int rc = load_text(text, &cfg, &d);
        char *all = joined(&d);
        if (!cases[i].want) {
            ASSERT_MSG(rc == 0, "process_reps %s: %s", cases[i].v, all);
            ASSERT_MSG(cfg.preps[HX_CLASS_SERIAL] == cases[i].s && cfg.preps[HX_CLASS_PARALLEL] == cases[i].p &&
                           cfg.preps[HX_CLASS_BASELINE] == cases[i].b,
                       "process_reps %s: %u/%u/%u", cases[i].v, cfg.preps[0], cfg.preps[1], cfg.preps[2]);
            ASSERT_EQ(cfg.reps[HX_CLASS_PARALLEL], 5); /* processes per cell: untouched */
            hx_config_free(&cfg);
        } else {
            ASSERT_MSG(rc == HX_ECONFIG && strstr(all, cases[i].want) && d.n == 1,
                       "process_reps %s: status %d, errors:\n%s\nwanted: %s", cases[i].v, rc, all, cases[i].want);
        }
        free(all);
        hx_config_diag_free(&d);
    }
    hx_config cfg;
    load_ok("configs/scaling.json", 16, &cfg);
    for (int k = 0; k < HX_NCLASS; k++)
        ASSERT_EQ(cfg.preps[k], 3);
    hx_config_free(&cfg);
    load_ok("configs/quick.json", 2, &cfg);
    for (int k = 0; k < HX_NCLASS; k++)
        ASSERT_EQ(cfg.preps[k], 1);
    hx_config_free(&cfg);
}

/* "breakdown": true, false or a list of names; a wrong name or value is named. */
TEST(breakdown_key) {
    static const char head[] = "{\"name\": \"t\", \"benchmarks\": [{\"kernel\": \"fib\"}, {\"name\": \"T1\", \"kernel\": "
                               "\"uts\", \"params\": {\"preset\": \"T1\"}}], \"variants\": [\"serial\"], "
                               "\"workers\": [1], \"breakdown\": ";
    static const struct {
        const char *v, *want; /* want: NULL = valid */
        int fib, t1;
    } cases[] = {
        {"true", NULL, 1, 1},
        {"false", NULL, 0, 0},
        {"[\"T1\"]", NULL, 0, 1},
        {"[\"fib\", \"T3\"]", "breakdown[1]: expected the name of a benchmark in \"benchmarks\", got \"T3\"", 0, 0},
        {"\"yes\"", "breakdown: expected true, false or a list of benchmark names, got \"yes\"", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[1024];
        snprintf(text, sizeof text, "%s%s}", head, cases[i].v);
        hx_config cfg;
        hx_diag d = {0};
        int rc = load_text(text, &cfg, &d);
        char *all = joined(&d);
        if (!cases[i].want) {
            ASSERT_MSG(rc == 0, "breakdown %s: %s", cases[i].v, all);
            ASSERT_MSG(cfg.benchmarks[0].breakdown == cases[i].fib && cfg.benchmarks[1].breakdown == cases[i].t1,
                       "breakdown %s: fib %d, T1 %d", cases[i].v, cfg.benchmarks[0].breakdown, cfg.benchmarks[1].breakdown);
            hx_config_free(&cfg);
        } else {
            ASSERT_MSG(rc == HX_ECONFIG && strstr(all, cases[i].want), "breakdown %s: status %d, errors:\n%s\nwanted: %s",
                       cases[i].v, rc, all, cases[i].want);
        }
        free(all);
        hx_config_diag_free(&d);
    }
}

TEST(variant_names) {
    static const struct {
        const char *name, *want; /* canonical name, or a piece of the error */
        int ok;
    } cases[] = {
        {"cont-seg-busy", "fk-bench-cont-seg", 1},
        {"child-lin-lazy", "fk-bench-child-lin", 1},
        {"child-native-busy", "fk-bench-child-native", 1},
        {"cont-native-busy", "Fibril's stack switching", 0},
        {"serial", "fk-bench-serial", 1},
        {"omp", "fk-bench-omp", 1},
        {"omp-llvm", "fk-bench-omp-llvm", 1},
        {"cont-seg-fast", "'fast' is not a scheduler value", 0},
        {"steal-seg-busy", "'steal' is not a stealing value", 0},
        {"cont-ring-busy", "'ring' is not a frame stack value", 0},
        {"cont-seg", "missing the scheduler axis", 0},
        {"cont", "missing the frame stack axis", 0},
        {"cont-seg-busy-x", "unexpected '-x' after the scheduler", 0},
        {"cont-seg-busy-", "ends with '-'", 0},
        {"child-native-lazy-beat", "fk-bench-child-native", 1},
        {"cont-seg-busy-beat", "fk-bench-cont-seg", 1},
        {"cont-lin-lazy-beat-x", "unexpected '-beat-x' after the scheduler", 0},
        {"child-seg-busy-beats", "one of thief|beat", 0},
        {"child-fiber-busy-any-beat", "heartbeat promotion is not built for fibers", 0},
        {"child-fiber-busy-any-thief", "fk-bench-child-fiber", 2},
        {"child-native-busy-thief", "fk-bench-child-native", 2},
        {"child-fiber-busy-beat", "'beat' is not a resume value", 0},
        {"child-fiber-busy-any-", "ends with '-'", 0},
        {"serial-busy", "baselines and peers (" BASES ") take no scheduler", 0},
        {"omp-lazy", "baselines and peers (" BASES ") take no scheduler", 0},
        {"omp-llvm-busy", "baselines and peers (" BASES ") take no scheduler", 0},
        {"omp-gcc", "has no '-gcc' part", 0},
        {"tbb", "fk-bench-tbb", 1},
        {"tbb-busy", "baselines and peers (" BASES ") take no scheduler", 0},
        {"taskflow", "fk-bench-taskflow", 1},
        {"taskflow-lazy", "take no scheduler (write 'taskflow')", 0},
        {"libfork-busy", "fk-bench-libfork-busy", 1},
        {"libfork-lazy", "fk-bench-libfork-lazy", 1},
        {"libfork-lazy-busy", "take no scheduler (write 'libfork-lazy')", 0},
        {"fibril", "fk-bench-fibril", 1},
        {"fibrill", "unknown variant 'fibrill'", 0},
        {"lace", "fk-bench-lace", 1},
        {"lace-lazy", "baselines and peers (" BASES ") take no scheduler", 0},
        {"lace-x", "has no '-x' part", 0},
        {"child-fiber-busy-any", "fk-bench-child-fiber", 1},
        {"child-fiber-lazy-home", "fk-bench-child-fiber", 1},
        {"child-fiber-busy", "missing the resume axis of a fiber variant (one of any|home)", 0},
        {"child-fiber-busy-x", "'x' is not a resume value (one of any|home)", 0},
        {"cont-fiber-busy-any", "fibers run tasks by child stealing", 0},
        {"cont-seg-busy-any", "unexpected '-any' after the scheduler", 0},
        {"", "empty variant name", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hx_variant v;
        char err[256] = "";
        int rc = hx_variant_parse(cases[i].name, &v, err, sizeof err);
        ASSERT_MSG((rc == 0) == (cases[i].ok != 0), "'%s': rc %d (%s)", cases[i].name, rc, err);
        if (cases[i].ok) {
            ASSERT_MSG(!strcmp(v.driver, cases[i].want), "'%s': driver %s", cases[i].name, v.driver);
            if (cases[i].ok == 2) /* (the default promotion, named: the canonical name omits it) */
                ASSERT_MSG(strlen(v.name) + 6 == strlen(cases[i].name) && !strncmp(v.name, cases[i].name, strlen(v.name)),
                           "'%s': canonical name %s", cases[i].name, v.name);
            else
                ASSERT_MSG(!strcmp(v.name, cases[i].name), "'%s': canonical name %s", cases[i].name, v.name);
        } else {
            ASSERT_STR_CONTAINS(err, cases[i].want);
        }
    }
    size_t peers = 0;
    for (size_t i = 0; hx_variant_name(i); i++) {
        hx_variant v;
        char err[256];
        ASSERT_MSG(!hx_variant_parse(hx_variant_name(i), &v, err, sizeof err), "%s: %s", hx_variant_name(i), err);
        peers += (size_t)hx_variant_is_peer(&v);
    }
    /* (the Makefile's peers/NAME.mk: lace, fibril, taskflow, libfork-busy, libfork-lazy) */
    ASSERT_MSG(peers >= 5, "%zu names of peers", peers);
    hx_variant v;
    char err[8];
    ASSERT_EQ(hx_variant_parse("cont-seg-lazy", &v, err, sizeof err), 0);
    ASSERT(!strcmp(v.sched, "lazy") && v.resume[0] == 0 && !strcmp(v.promote, "thief"));
    ASSERT_EQ(hx_variant_parse("child-native-busy-beat", &v, err, sizeof err), 0);
    ASSERT(!strcmp(v.sched, "busy") && v.resume[0] == 0 && !strcmp(v.promote, "beat"));
    ASSERT_EQ(hx_variant_parse("child-fiber-lazy-home", &v, err, sizeof err), 0);
    ASSERT(!strcmp(v.sched, "lazy") && !strcmp(v.resume, "home") && v.promote[0] == 0);
    /* what each name stands for on the driver's command line (sweeps, bench, uts, trace): thief
     * promotion, the default, is not passed (a driver built before the axis refuses --promote) */
    static const struct {
        const char *name, *args;
    } arg_cases[] = {
        {"cont-seg-lazy", "--sched lazy"},
        {"child-native-busy-thief", "--sched busy"},
        {"child-native-busy-beat", "--sched busy --promote beat"},
        {"child-fiber-lazy-home", "--sched lazy --resume home"},
        {"serial", ""},
        {"omp", ""},
    };
    for (size_t i = 0; i < sizeof arg_cases / sizeof arg_cases[0]; i++) {
        ASSERT_EQ(hx_variant_parse(arg_cases[i].name, &v, err, sizeof err), 0);
        const char *a[HX_VARIANT_MAX_ARGS];
        size_t n = hx_variant_args(&v, a);
        char joined[128] = "";
        for (size_t k = 0; k < n; k++)
            snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%s", k ? " " : "", a[k]);
        ASSERT_MSG(!strcmp(joined, arg_cases[i].args), "%s: '%s', expected '%s'", arg_cases[i].name, joined,
                   arg_cases[i].args);
    }
    ASSERT_EQ(hx_variant_parse("child-fiber-lazy-home", &v, err, sizeof err), 0);
    ASSERT(!strcmp(hx_variant_class(&v), "parallel"));
    ASSERT(!hx_variant_is_peer(&v) && hx_variant_runs_kernel(&v, "heat"));
    ASSERT_EQ(hx_variant_parse("lace", &v, err, sizeof err), 0);
    ASSERT(hx_variant_is_peer(&v) && !strcmp(hx_variant_class(&v), "baseline"));
    /* A peer's kernels are what its driver lists (--kernels): stand-in drivers that list some,
     * say nothing, or are not there (each path asked once: a new path each). */
    char *over = getenv("FORKSCOPE_DRIVER") ? strdup(getenv("FORKSCOPE_DRIVER")) : NULL;
    char dir[] = "/tmp/fk_variants_XXXXXX", lists[PATH_MAX], silent[PATH_MAX + 8];
    ASSERT(mkdtemp(dir));
    snprintf(lists, sizeof lists, "%s/lists", dir);
    snprintf(silent, sizeof silent, "%s/silent", dir);
    FILE *f = fopen(lists, "w");
    ASSERT(f);
    fprintf(f, "#!/bin/sh\n[ \"$1\" = --kernels ] && echo 'kernels: fib uts heat mergesort nqueens'\nexit 0\n");
    fclose(f);
    ASSERT_EQ(chmod(lists, 0755), 0);
    setenv("FORKSCOPE_DRIVER", lists, 1);
    ASSERT(hx_variant_runs_kernel(&v, "fib") && hx_variant_runs_kernel(&v, "uts"));
    ASSERT(hx_variant_runs_kernel(&v, "heat") && hx_variant_runs_kernel(&v, "mergesort"));
    ASSERT(!hx_variant_runs_kernel(&v, "switch") && !hx_variant_runs_kernel(&v, "integrate"));
    ASSERT(!hx_variant_runs_kernel(&v, "fi")); /* whole words only */
    ASSERT_EQ(hx_variant_parse("tbb", &v, err, sizeof err), 0);
    ASSERT(!hx_variant_is_peer(&v) && hx_variant_runs_kernel(&v, "integrate"));
    ASSERT_EQ(hx_variant_parse("fibril", &v, err, sizeof err), 0);
    setenv("FORKSCOPE_DRIVER", "/bin/true", 1); /* (says nothing: every kernel planned, its run says) */
    ASSERT(hx_variant_runs_kernel(&v, "integrate") && hx_variant_runs_kernel(&v, "switch"));
    setenv("FORKSCOPE_DRIVER", silent, 1); /* (not there) */
    ASSERT(hx_variant_runs_kernel(&v, "integrate"));
    unlink(lists);
    rmdir(dir);
    if (over)
        setenv("FORKSCOPE_DRIVER", over, 1);
    else
        unsetenv("FORKSCOPE_DRIVER");
    free(over);
}

/* ---- the option table against the drivers ----------------------------------------------------- */

/* Runs the serial driver with args; returns its exit status and its stdout+stderr. */
static int run_driver(const char *const args[], char *out, size_t outlen) {
    char drv[PATH_MAX];
    repo_path("build/bin/fk-bench-serial", drv, sizeof drv);
    int p[2];
    ASSERT(pipe(p) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        dup2(p[1], 2);
        close(p[0]);
        char *argv[32] = {drv};
        for (int i = 0; args[i] && i < 30; i++)
            argv[i + 1] = (char *)args[i];
        execv(drv, argv);
        _exit(126);
    }
    close(p[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < outlen && (r = read(p[0], out + n, outlen - n - 1)) > 0)
        n += (size_t)r;
    out[n] = 0;
    close(p[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* The serial driver, or the case is skipped (make check builds it first, and fails on this
 * skip: tests/skips does not expect it). */
static void need_driver(void) {
    char drv[PATH_MAX];
    if (access(repo_path("build/bin/fk-bench-serial", drv, sizeof drv), X_OK))
        TEST_SKIP("%s not built (make build/bin/fk-bench-serial)", drv);
}

/* The harness and the drivers read one description per kernel (bench/options.h), compiled
 * twice: alone into the harness (BENCH_DESCRIBE_ONLY) and with the versions into each
 * driver.  So this is no comparison of two tables: it checks that the serial driver's
 * --kernels names exactly the harness's kernels, and that --list renders every kernel and
 * option with the default and choices the harness's compilation has (a field under an #if
 * would differ there; summaries, help and limits are not compared: option_limits_match_driver
 * probes the limits). */
TEST(driver_list_renders_each_description) {
    need_driver();
    static char out[1 << 16];
    ASSERT_EQ(run_driver((const char *const[]){"--kernels", NULL}, out, sizeof out), 0);
    char want_line[4096] = "kernels:";
    for (size_t ki = 0; bench_descs[ki]; ki++)
        snprintf(want_line + strlen(want_line), sizeof want_line - strlen(want_line), " %s", bench_descs[ki]->name);
    ASSERT(strlen(want_line) + 2 < sizeof want_line);
    strcat(want_line, "\n");
    ASSERT_MSG(!strcmp(out, want_line), "the serial driver's --kernels: %s; the harness's: %s", out, want_line);
    out[0] = '\n'; /* every kernel line then starts with "\n  " */
    ASSERT_EQ(run_driver((const char *const[]){"--list", NULL}, out + 1, sizeof out - 1), 0);
    /* Every kernel and option of the description is listed, with the same default (and
     * choices); and every option the driver lists is in the description. */
    for (size_t ki = 0; bench_descs[ki]; ki++) {
        const hx_kernel_info *k = bench_descs[ki];
        char want[256];
        snprintf(want, sizeof want, "\n  %-10s ", k->name);
        char *at = strstr(out, want);
        ASSERT_MSG(at, "the driver does not list kernel %s", k->name);
        char *next = strstr(at + 1, "\n  ");
        while (next && next[3] == ' ')
            next = strstr(next + 1, "\n  ");
        size_t span = next ? (size_t)(next - at) : strlen(at);
        char section[4096];
        snprintf(section, sizeof section, "%.*s", (int)span, at);
        size_t nopt = 0;
        for (const hx_kopt *o = k->opts; o->name; o++, nopt++) {
            snprintf(want, sizeof want, "--%-8s ", o->name);
            char *line = strstr(section, want);
            ASSERT_MSG(line, "kernel %s: the driver does not list option --%s", k->name, o->name);
            char *eol = strchr(line, '\n');
            if (eol)
                *eol = 0;
            snprintf(want, sizeof want, "(default %s", o->def);
            ASSERT_MSG(strstr(line, want), "kernel %s option %s: the harness's description says default %s, the driver: %s", k->name,
                       o->name, o->def, line);
            if (o->type == BENCH_CHOICE) {
                snprintf(want, sizeof want, "one of %s)", o->choices);
                ASSERT_MSG(strstr(line, want), "kernel %s option %s: choices differ: %s", k->name, o->name, line);
            }
            if (eol)
                *eol = '\n';
        }
        size_t listed = 0;
        for (char *p = section; (p = strstr(p, "\n      --")); p++)
            listed++;
        ASSERT_MSG(listed == nopt, "kernel %s: the driver lists %zu options, the harness's description has %zu", k->name, listed, nopt);
    }
}

/* The driver checks options in order, so "--OPT V --workers 0" fails on --workers if and
 * only if it accepted V: each limit of the table is probed without running anything. */
static void probe(const char *kernel, const char *opt, const char *val, int accepted) {
    static char out[8192];
    char flag[64];
    snprintf(flag, sizeof flag, "--%s", opt);
    int rc = run_driver((const char *const[]){"--kernel", kernel, flag, val, "--workers", "0", NULL}, out,
                        sizeof out);
    ASSERT_MSG(rc == 1, "%s %s %s: exit %d: %s", kernel, flag, val, rc, out);
    if (accepted)
        ASSERT_MSG(strstr(out, "option --workers"), "%s %s %s: the driver refused what the table allows: %s", kernel,
                   flag, val, out);
    else
        ASSERT_MSG(strstr(out, flag) && !strstr(out, "option --workers"),
                   "%s %s %s: the driver accepted what the table refuses: %s", kernel, flag, val, out);
}

/* `forkscope kernels --markdown`: a header, a separator and one row of four cells per kernel
 * of the list, in its order, naming each of its options (`opt`). */
TEST(kernels_markdown_table) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ASSERT(f);
    hx_kernels_print(f, 1);
    fclose(f);
    size_t row = 0, lines = 0;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save), lines++) {
        size_t bars = 0;
        for (char *p = line; *p; p++)
            bars += *p == '|' && (p == line || p[-1] != '\\'); /* (an escaped one is text) */
        ASSERT_MSG(bars == 5, "not a row of four cells: %s", line);
        if (lines < 2)
            continue;
        char name[64];
        ASSERT_MSG(sscanf(line, "| %63[a-z0-9_] |", name) == 1, "not a kernel row: %s", line);
        ASSERT_MSG(bench_descs[row] && !strcmp(name, bench_descs[row]->name), "row %zu is %s", row + 1, name);
        for (const hx_kopt *o = bench_descs[row]->opts; o->name; o++) {
            char want[64];
            snprintf(want, sizeof want, "`%s` (%s;", o->name, o->def);
            ASSERT_MSG(strstr(line, want), "kernel %s's row does not give option %s with its default", name, o->name);
        }
        row++;
    }
    ASSERT_MSG(!bench_descs[row], "the table stops before kernel %s", bench_descs[row]->name);
    ASSERT_GE(row, 12);
    free(text);
}

TEST(option_limits_match_driver) {
    need_driver();
    for (size_t ki = 0; bench_descs[ki]; ki++)
        for (const hx_kopt *o = bench_descs[ki]->opts; o->name; o++) {
            const hx_kernel_info *k = bench_descs[ki];
            char v[64];
            if (o->type == BENCH_CHOICE) {
                char first[32];
                snprintf(first, sizeof first, "%.*s", (int)strcspn(o->choices, "|"), o->choices);
                probe(k->name, o->name, first, 1);
                probe(k->name, o->name, "no-such-choice", 0);
                continue;
            }
            if (o->type == BENCH_INT) {
                snprintf(v, sizeof v, "%.0f", o->min);
                probe(k->name, o->name, v, 1);
                snprintf(v, sizeof v, "%.0f", o->max);
                probe(k->name, o->name, v, 1);
                snprintf(v, sizeof v, "%.0f", o->min - 1);
                probe(k->name, o->name, v, 0);
                snprintf(v, sizeof v, "%.0f", o->max + 1);
                probe(k->name, o->name, v, 0);
                if (o->pow2) {
                    snprintf(v, sizeof v, "%.0f", o->min * 2 + 1);
                    probe(k->name, o->name, v, 0);
                }
            } else {
                snprintf(v, sizeof v, "%.17g", o->min);
                probe(k->name, o->name, v, 1);
                snprintf(v, sizeof v, "%.17g", o->max);
                probe(k->name, o->name, v, 1);
                snprintf(v, sizeof v, "%.17g", o->min - (o->min ? fabs(o->min) * 0.5 : 0.5));
                probe(k->name, o->name, v, 0);
                snprintf(v, sizeof v, "%.17g", o->max + (o->max ? fabs(o->max) * 0.5 : 0.5));
                probe(k->name, o->name, v, 0);
            }
        }
}

int main(int argc, char **argv) {
    return test_main(argc, argv,
                     (struct test_case[]){
                         TEST_CASE(bad_configs_give_expected_errors, 20),
                         TEST_CASE(instructions_parser, 10),
                         TEST_CASE(instructions_parser_reads_writes, 10),
                         TEST_CASE(breakdown_key, 10),
                         TEST_CASE(process_reps_key, 10),
                         TEST_CASE(span_key, 10),
                         TEST_CASE(unreadable_config_is_io_error, 5),
                         TEST_CASE(shipped_configs_validate, 20),
                         TEST_CASE(quick_config_shape, 5),
                         TEST_CASE(paper_config_workers_follow_the_machine, 5),
                         TEST_CASE(worker_expressions_expand, 5),
                         TEST_CASE(positions_after_utf8_and_escapes, 5),
                         TEST_CASE(variant_names, 5),
                         TEST_CASE(variant_objects, 5),
                         TEST_CASE(drivers_dir_under_forkscope_driver, 10),
                         TEST_CASE(peers_key, 5),
                         TEST_CASE(driver_list_renders_each_description, 20),
                         TEST_CASE(kernels_markdown_table, 10),
                         TEST_CASE(option_limits_match_driver, 60),
                         {0},
                     });
}
