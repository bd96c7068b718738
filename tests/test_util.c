/* test_util.c — the harness's helpers (harness/util.h): whole-file reads, atomic writes that
 * leave either the old file or the new one and no temporary, medians and quantiles worked out
 * by hand, the monotonic clock. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/errors.h"
#include "harness/util.h"
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
                         {0},
                     });
}
