/* test_util.c — the harness's helpers (harness/util/util.h): whole-file reads, atomic writes that
 * leave either the old file or the new one and no temporary, medians and quantiles worked out
 * by hand, the monotonic clock. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/util/cli.h"
#include "harness/config/jsonpos.h"
#include "harness/run/cgroup.h"
#include "harness/util/csv.h"
#include "harness/util/env.h"
#include "harness/util/errors.h"
#include "harness/util/util.h"
#include "tests/testlib.h"

static char dir[64];

static void make_dir(void) {
    snprintf(dir, sizeof dir, "/tmp/fk-test-util.XXXXXX");
    ASSERT(mkdtemp(dir));
}

/* Files in dir (a leftover temporary would show). */
static int count_files(void) {
    DIR *d = opendir(dir);
    ASSERT(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."));
    closedir(d);
    return n;
}

/* Whether path holds exactly text. */
static int file_is(const char *path, const char *text) {
    char *t = hx_read_file(path, NULL);
    int same = t && !strcmp(t, text);
    free(t);
    return same;
}

static void remove_dir(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ASSERT_EQ(system(cmd), 0);
}

TEST(read_file) {
    make_dir();
    char path[128];
    snprintf(path, sizeof path, "%s/a", dir);
    size_t len = 7;
    errno = 0;
    ASSERT(!hx_read_file(path, &len));
    ASSERT_EQ(errno, ENOENT);
    /* larger than the first buffer (64 KiB), with a NUL inside */
    size_t n = 200000;
    char *data = hx_xmalloc(n);
    for (size_t i = 0; i < n; i++)
        data[i] = (char)('a' + i % 26);
    data[1000] = 0;
    ASSERT_EQ(hx_write_atomic(path, data, n), 0);
    char *back = hx_read_file(path, &len);
    ASSERT(back);
    ASSERT_EQ(len, n);
    ASSERT(!memcmp(back, data, n));
    ASSERT_EQ(back[n], 0);
    free(back);
    /* an empty file is "" */
    ASSERT_EQ(hx_write_atomic(path, "", 0), 0);
    back = hx_read_file(path, NULL);
    ASSERT(back && !back[0]);
    free(back);
    free(data);
    remove_dir();
}

TEST(write_atomic) {
    make_dir();
    char path[128], bad[160];
    snprintf(path, sizeof path, "%s/f.txt", dir);
    ASSERT_EQ(hx_write_atomic(path, "old\n", 4), 0);
    ASSERT_EQ(hx_write_atomic(path, "new text\n", 9), 0);
    ASSERT(file_is(path, "new text\n"));
    ASSERT_EQ(count_files(), 1);
    /* a directory that does not exist: -ENOENT, nothing created */
    snprintf(bad, sizeof bad, "%s/no/such/f", dir);
    ASSERT_EQ(hx_write_atomic(bad, "x", 1), -ENOENT);
    /* a target that cannot be replaced (a non-empty directory): the temporary is removed */
    char sub[160], inner[200];
    snprintf(sub, sizeof sub, "%s/d", dir);
    ASSERT_EQ(mkdir(sub, 0777), 0);
    snprintf(inner, sizeof inner, "%s/x", sub);
    ASSERT_EQ(hx_write_atomic(inner, "x", 1), 0);
    int rc = hx_write_atomic(sub, "y", 1);
    ASSERT_MSG(rc < 0, "replacing a non-empty directory succeeded (%d)", rc);
    ASSERT_EQ(count_files(), 2);
    remove_dir();
}

TEST(atomic_stream) {
    make_dir();
    char path[128], tmp[192];
    snprintf(path, sizeof path, "%s/r.md", dir);
    ASSERT_EQ(hx_write_atomic(path, "before", 6), 0);
    FILE *f = hx_atomic_open(path, tmp, sizeof tmp);
    ASSERT(f);
    fprintf(f, "line %d\n", 1);
    /* until the commit, readers see the old file */
    ASSERT(file_is(path, "before"));
    ASSERT_EQ(hx_atomic_commit(f, tmp, path), 0);
    ASSERT(file_is(path, "line 1\n"));
    ASSERT_EQ(count_files(), 1);
    /* aborted: the old file stays, no temporary */
    f = hx_atomic_open(path, tmp, sizeof tmp);
    ASSERT(f);
    fputs("half", f);
    hx_atomic_abort(f, tmp);
    ASSERT(file_is(path, "line 1\n"));
    ASSERT_EQ(count_files(), 1);
    /* a stream with an error flag is not committed */
    f = hx_atomic_open(path, tmp, sizeof tmp);
    ASSERT(f);
    fputs("bad", f);
    (void)fgetc(f); /* reading a write-only stream sets the error flag */
    ASSERT(ferror(f));
    ASSERT_EQ(hx_atomic_commit(f, tmp, path), -EIO);
    ASSERT(file_is(path, "line 1\n"));
    ASSERT_EQ(count_files(), 1);
    remove_dir();
}

TEST(median_and_quantiles) {
    double v[] = {5, 1, 4, 2, 3};
    ASSERT_NEAR(hx_median(v, 5), 3, 0);
    ASSERT(v[0] == 1 && v[4] == 5); /* sorted in place */
    const double w[] = {10, 2, 8, 4};
    ASSERT_NEAR(hx_median_copy(w, 4), 6, 0); /* (4 + 8) / 2 */
    ASSERT(w[0] == 10 && w[1] == 2);         /* untouched */
    ASSERT(isnan(hx_median(v, 0)));
    ASSERT(isnan(hx_median_copy(w, 0)));
    double one = 7;
    ASSERT_NEAR(hx_median(&one, 1), 7, 0);
    /* type 7 on 1 2 3 4 5: q = 0.25 -> h = 1 -> 2; q = 0.1 -> h = 0.4 -> 1.4; ends clamp */
    ASSERT_NEAR(hx_quantile_sorted(v, 5, 0.25), 2, 1e-12);
    ASSERT_NEAR(hx_quantile_sorted(v, 5, 0.1), 1.4, 1e-12);
    ASSERT_NEAR(hx_quantile_sorted(v, 5, 0.9), 4.6, 1e-12);
    ASSERT_NEAR(hx_quantile_sorted(v, 5, 0), 1, 0);
    ASSERT_NEAR(hx_quantile_sorted(v, 5, 1), 5, 0);
    ASSERT(isnan(hx_quantile_sorted(v, 0, 0.5)));
    /* NaNs sort last and do not break the order of the rest */
    double x[] = {NAN, 3, 1, NAN, 2};
    qsort(x, 5, sizeof *x, hx_cmp_double);
    ASSERT(x[0] == 1 && x[1] == 2 && x[2] == 3 && isnan(x[3]) && isnan(x[4]));
}

TEST(grow_and_clock) {
    int *a = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < 1000; i++) {
        hx_grow(&a, &cap, i + 1, sizeof *a);
        ASSERT_GE(cap, i + 1);
        a[i] = (int)i;
    }
    for (size_t i = 0; i < 1000; i++)
        ASSERT_EQ(a[i], (int)i);
    free(a);
    char *s = hx_xstrdup("forkscope");
    ASSERT(!strcmp(s, "forkscope"));
    free(s);
    double t0 = hx_now();
    usleep(20000);
    double dt = hx_now() - t0;
    ASSERT_MSG(dt >= 0.019 && dt < 5, "20 ms of sleep measured %.4f s", dt);
}

/* The return convention: 0, -errno, or HX_E* codes that never meet errno values, each mapped
 * to its documented exit status by the one function that does. */
TEST(return_codes) {
    ASSERT_EQ(hx_exit_status(0), HX_EXIT_OK);
    ASSERT_EQ(hx_exit_status(HX_EUSAGE), 1);
    ASSERT_EQ(hx_exit_status(HX_ECONFIG), 2);
    ASSERT_EQ(hx_exit_status(HX_EIO), 3);
    ASSERT_EQ(hx_exit_status(HX_ERUNS_FAILED), 4);
    ASSERT_EQ(hx_exit_status(HX_EINTERRUPTED), 5);
    ASSERT_EQ(hx_exit_status(HX_ETOOL), 6);
    ASSERT_EQ(hx_exit_status(HX_EINTERNAL), 7);
    ASSERT_EQ(hx_exit_status(-ENOENT), HX_EXIT_IO); /* a system call failed */
    ASSERT_EQ(hx_exit_status(-EACCES), HX_EXIT_IO);
    ASSERT_EQ(hx_exit_status(1), HX_EXIT_INTERNAL); /* not a return code */
    ASSERT_EQ(hx_exit_status(-100000), HX_EXIT_INTERNAL);
    int codes[] = {HX_EUSAGE, HX_ECONFIG, HX_EIO, HX_ERUNS_FAILED, HX_EINTERRUPTED, HX_ETOOL, HX_EINTERNAL};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        ASSERT(codes[i] < -HX_ERRNO_MAX);
        ASSERT(strcmp(hx_strerror(codes[i]), "unknown error") != 0);
        for (size_t j = 0; j < i; j++)
            ASSERT_NE(codes[i], codes[j]);
    }
    ASSERT_STR_CONTAINS(hx_strerror(HX_ECONFIG), "configuration");
    ASSERT_STR_CONTAINS(hx_strerror(-ENOENT), "No such file");
    ASSERT_STR_CONTAINS(hx_strerror(0), "success");
}

TEST(json_getters) {
    json_error_t e;
    json_t *o = json_loads("{\"s\": \"x\", \"e\": \"\", \"n\": 2.5, \"z\": null, \"t\": \"2\"}", 0, &e);
    ASSERT(o);
    ASSERT(!strcmp(hx_json_str(o, "s", NULL), "x"));
    ASSERT(hx_json_str(o, "e", NULL) == NULL);          /* empty: the default */
    ASSERT(!strcmp(hx_json_str(o, "missing", "d"), "d"));
    ASSERT(!strcmp(hx_json_str(o, "n", ""), ""));       /* not a string */
    double v = 0;
    ASSERT_EQ(hx_json_number(o, "n", &v), 1);
    ASSERT(v == 2.5);
    ASSERT_EQ(hx_json_number(o, "z", &v), 0);
    ASSERT_EQ(hx_json_number(o, "missing", &v), 0);
    ASSERT_EQ(hx_json_number(o, "t", &v), -1);
    json_decref(o);
}

/* ---- cgroups: the parsers on texts from real machines ---------------------------------------- */

/* A systemd machine with only cgroup v2 (Debian 12, Ubuntu 22.04 and later). */
static const char mountinfo_v2[] =
    "22 28 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
    "25 28 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 "
    "rw,nsdelegate,memory_recursiveprot\n"
    "28 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\n";
static const char cgroup_v2[] = "0::/user.slice/user-1000.slice/session-3.scope\n";
/* This machine's kind: v1 controllers, the unified hierarchy beside them without memory. */
static const char mountinfo_hybrid[] =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
static const char cgroup_hybrid[] = "4:memory:/process_api/f6999\n1:cpu:/\n0::/\n";

TEST(cgroup_parsing) {
    char out[PATH_MAX];
    ASSERT_EQ(hx_cg2_path(mountinfo_v2, cgroup_v2, out, sizeof out), 0);
    ASSERT_MSG(!strcmp(out, "/sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope"), "got %s", out);
    ASSERT_EQ(hx_cg2_path(mountinfo_hybrid, cgroup_hybrid, out, sizeof out), 0);
    ASSERT_MSG(!strcmp(out, "/sys/fs/cgroup/unified"), "got %s", out); /* "0::/": the mount's root itself */
    /* no cgroup2 mount; no v2 entry; a cgroup2 mount of a subtree (paths would not join) */
    ASSERT_EQ(hx_cg2_path("35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n", cgroup_v2, out,
                          sizeof out), -1);
    ASSERT_EQ(hx_cg2_path(mountinfo_v2, "4:memory:/x\n", out, sizeof out), -1);
    ASSERT_EQ(hx_cg2_path("25 28 0:23 /sub /mnt rw - cgroup2 cgroup2 rw\n", cgroup_v2, out, sizeof out), -1);
    char tiny[8];
    ASSERT_EQ(hx_cg2_path(mountinfo_v2, cgroup_v2, tiny, sizeof tiny), -1);
    /* memory.events (v2) and memory.oom_control (v1) */
    const char *events = "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n";
    ASSERT_EQ(hx_cg_field(events, "oom_kill"), 1);
    ASSERT_EQ(hx_cg_field(events, "oom"), 1);
    ASSERT_EQ(hx_cg_field(events, "max"), 12);
    ASSERT_EQ(hx_cg_field("oom_kill_disable 0\nunder_oom 0\noom_kill 3", "oom_kill"), 3);
    ASSERT_EQ(hx_cg_field("oom_kill_disable 0\n", "oom_kill"), -1);
    ASSERT_EQ(hx_cg_field("", "oom_kill"), -1);
    ASSERT_EQ(hx_cg_field("oom_kill x\n", "oom_kill"), -1);
    /* controller lists */
    ASSERT(hx_cg_has("cpuset cpu io memory hugetlb pids rdma misc\n", "memory"));
    ASSERT(hx_cg_has("memory", "memory"));
    ASSERT(!hx_cg_has("cpuset cpu io hugetlb pids\n", "memory"));
    ASSERT(!hx_cg_has("memoryx cpu", "memory"));
    ASSERT(!hx_cg_has("", "memory"));
}

/* On this machine: whatever the set-up finds, the description says what limits memory and,
 * when it is not cgroup v2, why; forcing v2 where it is unavailable falls back to polling and
 * says why; "poll" polls. */
TEST(cgroup_setup_here) {
    char desc[PATH_MAX + 512];
    hx_cg cg;
    hx_cg_setup(&cg, NULL, desc, sizeof desc);
    printf("  auto: %s\n", desc);
    ASSERT(cg.kind == HX_CG_V2 ? !strncmp(desc, "cgroup-v2 ", 10)
                               : strstr(desc, "v2 not used") || strstr(desc, "poll /proc/PID/statm"));
    hx_cg_teardown(&cg);
    hx_cg_setup(&cg, "cgroup-v2", desc, sizeof desc);
    printf("  cgroup-v2: %s\n", desc);
    if (cg.kind != HX_CG_V2) {
        ASSERT_EQ(cg.kind, HX_CG_NONE);
        ASSERT_STR_CONTAINS(desc, "poll");
        ASSERT_STR_CONTAINS(desc, "v2");
    }
    hx_cg_teardown(&cg);
    hx_cg_setup(&cg, "poll", desc, sizeof desc);
    ASSERT_EQ(cg.kind, HX_CG_NONE);
    ASSERT_STR_CONTAINS(desc, "FORKSCOPE_MEMLIMIT=poll");
}

/* ---- the command line (harness/util/cli.h) ----------------------------------------------------- */

#define ASSERT_STREQ(a, b) ASSERT_MSG(!strcmp((a), (b)), "'%s' != '%s'", (a), (b))

static void no_usage(FILE *f) { (void)f; }

TEST(cli_options) {
    const char *out = NULL, *v = NULL;
    int flag = 0, seen = 0;
    long n = 7;
    double x = 0;
    hx_strv list = {0};
    const hx_opt opts[] = {
        {"--output", "-o", HX_OPT_STR, &out, 0, 0, "a directory", NULL},
        {"--flag", NULL, HX_OPT_FLAG, &flag, 0, 0, NULL, NULL},
        {"--n", NULL, HX_OPT_LONG, &n, 1, 100, NULL, &seen},
        {"--x", NULL, HX_OPT_DOUBLE, &x, 0, 1, "a fraction", NULL},
        {"--arg", NULL, HX_OPT_LIST, &list, 0, 0, NULL, NULL},
        {"--v", NULL, HX_OPT_STR, &v, 0, 0, NULL, NULL},
        {"--no", NULL, HX_OPT_REFUSE, NULL, 0, 0, "refused here", NULL},
        {NULL, NULL, 0, NULL, 0, 0, NULL, NULL},
    };
    const char *argv[] = {"cmd", "A", "-o", "dir", "--flag", "--n=42", "--x", "0.25", "--arg", "a1", "--arg=a2", "B", NULL};
    hx_cli c = {.cmd = "cmd", .opts = opts, .max_pos = 2, .pos_what = "inputs"};
    ASSERT_EQ(hx_cli_parse(&c, 12, (char **)argv), 0);
    ASSERT_STREQ(out, "dir");
    ASSERT_EQ(flag, 1);
    ASSERT_EQ(n, 42);
    ASSERT_EQ(seen, 1);
    ASSERT(x == 0.25);
    ASSERT_EQ(list.n, 2);
    ASSERT_STREQ(list.v[0], "a1");
    ASSERT_STREQ(list.v[1], "a2");
    ASSERT_EQ(c.npos, 2);
    ASSERT_STREQ(c.pos[0], "A");
    ASSERT_STREQ(c.pos[1], "B");
    ASSERT(v == NULL);
    hx_strv_free(&list);
    /* each way of getting it wrong is a usage error, and leaves a number untouched */
    struct {
        const char *argv[5];
    } bad[] = {
        {{"cmd", "--n", "0"}},     {{"cmd", "--n", "101"}},   {{"cmd", "--n", "4x"}},   {{"cmd", "--n", ""}},
        {{"cmd", "--x", "2"}},     {{"cmd", "--x", "nan"}},   {{"cmd", "--n"}},         {{"cmd", "--nope"}},
        {{"cmd", "--flag=1"}},     {{"cmd", "-o", ""}},       {{"cmd", "a", "b", "c"}}, {{"cmd", "--output"}},
        {{"cmd", "--x="}},         {{"cmd", "-o=dir"}},       {{"cmd", "--n", " 3"}},   {{"cmd", "--no"}},
        {{"cmd", "--no=1"}},       {{"cmd", "--no", "1"}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int argc = 0;
        while (bad[i].argv[argc])
            argc++;
        n = 7;
        hx_cli d = {.cmd = "cmd", .opts = opts, .max_pos = 2};
        ASSERT_MSG(hx_cli_parse(&d, argc, (char **)bad[i].argv) == HX_EUSAGE, "case %zu (%s %s) accepted", i,
                   bad[i].argv[1], bad[i].argv[2] ? bad[i].argv[2] : "");
        ASSERT_EQ(n, 7);
        hx_strv_free(&d.rest);
    }
    /* --help: HX_CLI_HELP, unless passed on to a driver */
    const char *help[] = {"cmd", "--help", NULL};
    hx_cli h = {.cmd = "cmd", .opts = opts};
    ASSERT_EQ(hx_cli_parse(&h, 2, (char **)help), HX_CLI_HELP);
    hx_cli p = {.cmd = "bench", .opts = opts, .pass_unknown = 1};
    const char *pass[] = {"bench", "--kernel", "fib", "--n", "30", "--help", "-t", "1", NULL};
    ASSERT_EQ(hx_cli_parse(&p, 8, (char **)pass), 0);
    ASSERT_EQ(n, 30); /* a known option is taken out, the rest kept in order */
    ASSERT_EQ(p.rest.n, 5);
    ASSERT_STREQ(p.rest.v[0], "--kernel");
    ASSERT_STREQ(p.rest.v[1], "fib");
    ASSERT_STREQ(p.rest.v[2], "--help");
    ASSERT_STREQ(p.rest.v[4], "1");
    hx_strv_free(&p.rest);
    /* pass-through with a usage of its own (span): --help is ours, the rest the driver's,
     * a refused option still refused */
    hx_cli q = {.cmd = "span", .opts = opts, .usage = no_usage, .pass_unknown = 1};
    const char *span[] = {"span", "--kernel", "fib", "--depth=12", "--v", "x", NULL};
    ASSERT_EQ(hx_cli_parse(&q, 6, (char **)span), 0);
    ASSERT_EQ(q.rest.n, 3);
    ASSERT_STREQ(q.rest.v[2], "--depth=12");
    ASSERT_STREQ(v, "x");
    hx_strv_free(&q.rest);
    hx_cli r = {.cmd = "span", .opts = opts, .usage = no_usage, .pass_unknown = 1};
    const char *spanhelp[] = {"span", "--kernel", "fib", "--help", NULL};
    ASSERT_EQ(hx_cli_parse(&r, 4, (char **)spanhelp), HX_CLI_HELP);
    hx_strv_free(&r.rest);
    hx_cli t = {.cmd = "span", .opts = opts, .usage = no_usage, .pass_unknown = 1};
    const char *refused[] = {"span", "--kernel", "fib", "--no", NULL};
    ASSERT_EQ(hx_cli_parse(&t, 4, (char **)refused), HX_EUSAGE);
    hx_strv_free(&t.rest);
}

TEST(cli_numbers) {
    long l;
    double d;
    ASSERT_EQ(hx_cli_long("12", 1, 12, &l), 0);
    ASSERT_EQ(l, 12);
    ASSERT_EQ(hx_cli_long("13", 1, 12, &l), -1);
    ASSERT_EQ(hx_cli_long("99999999999999999999", 1, 100, &l), -1);
    ASSERT_EQ(hx_cli_long(" 3", 1, 100, &l), -1); /* the whole string: no blanks strtol would skip */
    ASSERT_EQ(hx_cli_double(" 0.5", 0, 1, &d), -1);
    ASSERT_EQ(hx_cli_double("1e-3", 0, 1, &d), 0);
    ASSERT(d == 1e-3);
    ASSERT_EQ(hx_cli_double("inf", 0, INFINITY, &d), -1);
    ASSERT_EQ(hx_cli_double("0.5x", 0, 1, &d), -1);
}

TEST(environment) {
    const char *m;
    unsetenv("FORKSCOPE_MEMLIMIT");
    ASSERT_EQ(hx_env_memlimit(&m), 0);
    ASSERT(m == NULL);
    const char *ok[] = {"auto", "cgroup", "cgroup-v2", "cgroup-v1", "poll"};
    for (size_t i = 0; i < 5; i++) {
        setenv("FORKSCOPE_MEMLIMIT", ok[i], 1);
        ASSERT_EQ(hx_env_memlimit(&m), 0);
        ASSERT_STREQ(m, ok[i]);
    }
    setenv("FORKSCOPE_MEMLIMIT", "cgroups", 1); /* a typo is an error, not a silent poll */
    ASSERT_EQ(hx_env_memlimit(&m), HX_EUSAGE);
    unsetenv("FORKSCOPE_MEMLIMIT");
    setenv("FORKSCOPE_PLOTS", "", 1);
    ASSERT(hx_env("FORKSCOPE_PLOTS") == NULL); /* empty is unset */
    unsetenv("FORKSCOPE_PLOTS");
    /* --help lists every variable of the table */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    hx_env_help(f);
    fclose(f);
    size_t n = 0;
    for (const hx_envvar *v = hx_envvars; v->name; v++, n++)
        ASSERT_STR_CONTAINS(text, v->name);
    ASSERT(n >= 4);
    free(text);
}

/* ---- CSV and JSON positions ------------------------------------------------------------------- */

TEST(csv_round_trip) {
    make_dir();
    char path[128];
    snprintf(path, sizeof path, "%s/t.csv", dir);
    FILE *f = fopen(path, "w");
    ASSERT(f);
    const char *fields[] = {"plain", "a,b", "say \"hi\"", " edge", ""};
    fputs("s1,s2,s3,s4,s5,x,y\n", f);
    for (size_t i = 0; i < 5; i++) {
        hx_csv_str(f, fields[i]);
        fputc(',', f);
    }
    hx_csv_num(f, 0.1);
    fputc(',', f);
    hx_csv_num(f, NAN);
    fputc('\n', f);
    fclose(f);
    hx_csv_table t;
    ASSERT_EQ(hx_csv_load(path, &t), 0);
    ASSERT_EQ(t.nlines, 2);
    ASSERT_EQ(t.nhdr, 7);
    ASSERT_EQ(hx_csv_col(&t, "s3"), 2);
    ASSERT_EQ(hx_csv_col(&t, "nope"), -1);
    char *row[16];
    size_t nf = hx_csv_split(t.lines[1], row, 16);
    ASSERT_EQ(nf, 7);
    for (size_t i = 0; i < 5; i++)
        ASSERT_STREQ(row[i], fields[i]);
    double d;
    long l;
    ASSERT(hx_csv_parse_num(row[5], &d) && d == 0.1);
    ASSERT(hx_csv_parse_num(row[6], &d) && isnan(d)); /* empty: NaN */
    ASSERT_STREQ(hx_csv_field(row, nf, 9), "");
    ASSERT(!hx_csv_parse_num("1x", &d));
    ASSERT(hx_csv_parse_long("42", &l) && l == 42);
    ASSERT(!hx_csv_parse_long("4.5", &l));
    ASSERT(!hx_csv_parse_long("", &l));
    hx_csv_free(&t);
    ASSERT_EQ(hx_csv_load("/nonexistent/x.csv", &t), -ENOENT);
    unlink(path);
    rmdir(dir);
}

TEST(json_positions) {
    const char *text = "{\n  \"a\": 1,\n  \"b\": [true, {\"c\": \"\\u00e9x\"}],\n  \"é\": null\n}\n";
    hx_jpos p;
    hx_jpos_scan(&p, text, strlen(text));
    ASSERT(!p.failed);
    const hx_jpos_entry *e = hx_jpos_find(&p, "b[1].c");
    ASSERT(e);
    int line, col;
    hx_jpos_line_col(text, strlen(text), e->voff, &line, &col);
    ASSERT_EQ(line, 3);
    ASSERT_EQ(col, 21);
    hx_jpos_line_col(text, strlen(text), e->koff, &line, &col);
    ASSERT_EQ(col, 16);
    e = hx_jpos_find(&p, "a");
    ASSERT(e);
    hx_jpos_line_col(text, strlen(text), e->voff, &line, &col);
    ASSERT_EQ(line, 2);
    ASSERT_EQ(col, 8);
    e = hx_jpos_find(&p, "é"); /* columns count characters, not bytes */
    ASSERT(e);
    hx_jpos_line_col(text, strlen(text), e->voff, &line, &col);
    ASSERT_EQ(line, 4);
    ASSERT_EQ(col, 8);
    ASSERT(hx_jpos_find(&p, "b[0]"));
    ASSERT(hx_jpos_find(&p, "b[2]") == NULL);
    hx_jpos_free(&p);
}

int main(int argc, char **argv) {
    return test_main(argc, argv,
                     (struct test_case[]){
                         TEST_CASE(read_file, 10),
                         TEST_CASE(write_atomic, 10),
                         TEST_CASE(atomic_stream, 10),
                         TEST_CASE(median_and_quantiles, 10),
                         TEST_CASE(grow_and_clock, 10),
                         TEST_CASE(return_codes, 10),
                         TEST_CASE(json_getters, 10),
                         TEST_CASE(cgroup_parsing, 10),
                         TEST_CASE(cgroup_setup_here, 10),
                         TEST_CASE(cli_options, 10),
                         TEST_CASE(cli_numbers, 10),
                         TEST_CASE(environment, 10),
                         TEST_CASE(csv_round_trip, 10),
                         TEST_CASE(json_positions, 10),
                         {0},
                     });
}
