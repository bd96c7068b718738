/* results_fixture.h — helpers of the tests that read a results directory (test_fit,
 * test_plot): the fixture tests/fixtures/results/small, whole files read and written, and a
 * fresh temporary copy of the fixture per case.  Include after testlib.h. */
#ifndef FK_TEST_RESULTS_FIXTURE_H
#define FK_TEST_RESULTS_FIXTURE_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The fixture directory: relative to the working directory (make runs tests from the top),
 * else found above the test executable (build/rel/common/tests/test_X). */
static inline const char *fixture_dir(void) {
    static char path[PATH_MAX];
    const char *rel = "tests/fixtures/results/small";
    if (!access(rel, R_OK))
        return rel;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ASSERT_MSG(n > 0, "readlink /proc/self/exe failed");
    exe[n] = 0;
    for (int up = 0; up < 8; up++) {
        char *s = strrchr(exe, '/');
        if (!s || s == exe)
            break;
        *s = 0;
        snprintf(path, sizeof path, "%.3000s/%s", exe, rel);
        if (!access(path, R_OK))
            return path;
    }
    TEST_FAIL_("fixture %s not found (run from the top of the tree)", rel);
}

/* The whole file (malloc'd, NUL-terminated), or NULL if it cannot be opened. */
static inline char *slurp(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    ASSERT(buf);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = 0;
    fclose(f);
    return buf;
}

static inline void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    ASSERT_MSG(f, "cannot write %s", path);
    fputs(text, f);
    ASSERT(fclose(f) == 0);
}

static inline void copy_into(const char *from_dir, const char *name, const char *to_dir) {
    char a[PATH_MAX], b[PATH_MAX];
    snprintf(a, sizeof a, "%.2000s/%s", from_dir, name);
    snprintf(b, sizeof b, "%.2000s/%s", to_dir, name);
    char *text = slurp(a);
    ASSERT_MSG(text, "cannot read %s", a);
    write_file(b, text);
    free(text);
}

/* The case's temporary directory, /tmp/<test program>_XXXXXX: a case that passes removes it
 * with remove_tmpdir() at its end (testlib ends a case with _exit: no atexit), a failing one
 * leaves it for a look. */
static char tmpdir[64];
static inline void remove_tmpdir(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "/bin/rm -rf '%s'", tmpdir); /* PATH may be cut */
    if (system(cmd)) {
    }
}

/* A fresh temporary directory, with a copy of the fixture's raw.jsonl, env.json and
 * config.json if with_fixture. */
static inline const char *fresh_dir(int with_fixture) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/%.20s_XXXXXX", program_invocation_short_name);
    ASSERT(mkdtemp(tmpdir));
    if (with_fixture) {
        const char *fx = fixture_dir();
        copy_into(fx, "raw.jsonl", tmpdir);
        copy_into(fx, "env.json", tmpdir);
        copy_into(fx, "config.json", tmpdir);
    }
    return tmpdir;
}

#endif
