/* testlib.h — a tiny test harness: named cases, assertions that never compile out.
 *
 * Each case runs in a child process (fork) under a watchdog, so a crash, an abort or a hang
 * fails that case and the others still run.  Output: one line per case ("ok NAME",
 * "FAIL NAME: why" or "skip NAME: why") and a closing line "N passed, N failed, N skipped";
 * the exit status is 1 if any case failed.  Usage:
 *
 *   TEST(name) { ASSERT_EQ(1 + 1, 2); }
 *   int main(int argc, char **argv) { return test_main(argc, argv, (struct test_case[]){
 *       TEST_CASE(name, 10), {0}}); }     // 10: seconds before the watchdog fires
 *
 * `prog NAME...` runs only the named cases; TEST_TIMEOUT_SCALE=k multiplies timeouts
 * (sanitizer builds are slower).
 *
 * A case that cannot run here (a sanitizer build that needs the address space it would take
 * away, a driver that was not built) calls TEST_SKIP("why"): it is counted as skipped, never
 * as passed, and make check fails on a skip its manifest does not expect (tests/skips).
 * A case that does not apply to a build at all is left out of that build's case list.
 *
 * Timing checks (a wall-clock bound that holds on a quiet machine) use ASSERT_TIMING: when
 * one fails, the case runs once more, and "retry NAME: ..." says so; a second failure fails
 * the case.  Every other assertion fails at once.  (A case's process exit statuses 77 and
 * 78 are these two; call TEST_SKIP from the case's own thread.) */
#ifndef FK_TESTLIB_H
#define FK_TESTLIB_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Sanitized builds cannot cap the address space (the shadow memory needs it) and
 * ThreadSanitizer records at most 65,536 stack frames: tests scale down or skip parts. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define TEST_SANITIZED 1
#else
#define TEST_SANITIZED 0
#endif
#if defined(__SANITIZE_THREAD__)
#define TEST_TSAN 1
#else
#define TEST_TSAN 0
#endif

/* LeakSanitizer checks at exit, which a forked case skips (it ends with _exit): call it
 * ourselves when it is linked in. */
extern int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

struct test_case {
    const char *name;
    void (*fn)(void);
    unsigned timeout; /* seconds */
};

/* Exit statuses of a case's child process beside 0 (passed) and 1 (failed). */
enum { TEST_EXIT_SKIP = 77, TEST_EXIT_TIMING = 78 };

/* The case running now, where its skip reason goes (a pipe to the parent), and where a
 * skip returns to when cases run in the test process itself (TEST_NOFORK). */
static const char *test_current_ __attribute__((unused));
static int test_skip_fd_ __attribute__((unused)) = -1;
static jmp_buf test_skip_jmp_ __attribute__((unused));
static int test_nofork_ __attribute__((unused));

#define TEST(name) static void name(void)
#define TEST_CASE(name, timeout) {#name, name, timeout}

#define TEST_FAIL_(...)                                                                      \
    do {                                                                                     \
        fflush(stdout); /* what the case printed before failing (_exit would drop it) */    \
        fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__);                                    \
        fprintf(stderr, __VA_ARGS__);                                                        \
        fputc('\n', stderr);                                                                 \
        fflush(stderr);                                                                      \
        _exit(1);                                                                            \
    } while (0)

/* Marks the running case skipped, with the reason, and ends it. */
__attribute__((format(printf, 1, 2), noreturn, unused)) static void TEST_SKIP(const char *fmt, ...) {
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    for (char *c = why; *c; c++) /* one line */
        if (*c == '\n')
            *c = ' ';
    fflush(NULL);
    if (test_nofork_) {
        printf("skip %s: %s\n", test_current_, why);
        longjmp(test_skip_jmp_, 1);
    }
    if (test_skip_fd_ >= 0) {
        ssize_t w = write(test_skip_fd_, why, strlen(why));
        (void)w;
    }
    _exit(TEST_EXIT_SKIP);
}

#define ASSERT(cond)                                                                         \
    do {                                                                                     \
        if (!(cond))                                                                         \
            TEST_FAIL_("assertion failed: %s", #cond);                                       \
    } while (0)

#define ASSERT_MSG(cond, ...)                                                                \
    do {                                                                                     \
        if (!(cond))                                                                         \
            TEST_FAIL_(__VA_ARGS__);                                                         \
    } while (0)

#define ASSERT_CMP_(a, op, b, T, fmt)                                                        \
    do {                                                                                     \
        T a_ = (T)(a), b_ = (T)(b);                                                          \
        if (!(a_ op b_))                                                                     \
            TEST_FAIL_("expected %s %s %s, got %" fmt " vs %" fmt, #a, #op, #b, a_, b_);     \
    } while (0)

/* A bound on a measured time or rate: on failure the case is retried once (see above). */
#define ASSERT_TIMING(cond, ...)                                                             \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fflush(stdout);                                                                  \
            fprintf(stderr, "  %s:%d: timing check failed: ", __FILE__, __LINE__);           \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fputc('\n', stderr);                                                             \
            fflush(stderr);                                                                  \
            _exit(TEST_EXIT_TIMING);                                                         \
        }                                                                                    \
    } while (0)

#define ASSERT_EQ(a, b) ASSERT_CMP_(a, ==, b, long long, "lld")
#define ASSERT_NE(a, b) ASSERT_CMP_(a, !=, b, long long, "lld")
#define ASSERT_LT(a, b) ASSERT_CMP_(a, <, b, long long, "lld")
#define ASSERT_LE(a, b) ASSERT_CMP_(a, <=, b, long long, "lld")
#define ASSERT_GT(a, b) ASSERT_CMP_(a, >, b, long long, "lld")
#define ASSERT_GE(a, b) ASSERT_CMP_(a, >=, b, long long, "lld")
#define ASSERT_EQ_U(a, b) ASSERT_CMP_(a, ==, b, unsigned long long, "llu")
#define ASSERT_NEAR(a, b, tol)                                                               \
    do {                                                                                     \
        double a_ = (a), b_ = (b), t_ = (tol);                                               \
        if (!(a_ - b_ <= t_ && b_ - a_ <= t_))                                               \
            TEST_FAIL_("expected |%s - %s| <= %g, got %.17g vs %.17g", #a, #b, t_, a_, b_);  \
    } while (0)
#define ASSERT_STR_CONTAINS(hay, needle)                                                     \
    do {                                                                                     \
        const char *h_ = (hay), *n_ = (needle);                                              \
        if (!h_ || !strstr(h_, n_))                                                          \
            TEST_FAIL_("expected \"%s\" to contain \"%s\"", h_ ? h_ : "(null)", n_);          \
    } while (0)

/* Runs fn in a child process with stderr captured; returns its wait status and, in *err
 * (malloc'd, NUL-terminated), what it wrote to stderr.  For tests of fatal errors. */
static inline int test_run_capturing(void (*fn)(void *), void *arg, char **err) {
    int pipefd[2];
    if (pipe(pipefd))
        TEST_FAIL_("pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], 2);
        close(pipefd[0]);
        close(pipefd[1]);
        signal(SIGABRT, SIG_DFL);
        fn(arg);
        _exit(0);
    }
    close(pipefd[1]);
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    ssize_t r;
    while ((r = read(pipefd[0], buf + len, cap - len - 1)) > 0) {
        len += (size_t)r;
        if (cap - len < 2)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = 0;
    close(pipefd[0]);
    int status;
    waitpid(pid, &status, 0);
    *err = buf;
    return status;
}

static inline double test_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int test_selected(const char *name, int argc, char **argv) {
    if (argc < 2)
        return 1;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], name))
            return 1;
    return 0;
}

/* Runs one case in a child process; returns 0 passed, 1 failed (the FAIL line printed),
 * TEST_EXIT_SKIP (the reason in why[]) or TEST_EXIT_TIMING (a timing check failed). */
static inline int test_run_case_(const struct test_case *c, unsigned scale, char *why, size_t whysz) {
    int fd[2];
    if (pipe2(fd, O_CLOEXEC | O_NONBLOCK)) {
        printf("FAIL %s: pipe: %s\n", c->name, strerror(errno));
        return 1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        printf("FAIL %s: fork: %s\n", c->name, strerror(errno));
        close(fd[0]);
        close(fd[1]);
        return 1;
    }
    if (pid == 0) {
        close(fd[0]);
        test_current_ = c->name;
        test_skip_fd_ = fd[1];
        alarm(c->timeout * scale); /* the watchdog: SIGALRM kills a hung case */
        c->fn();
        fflush(NULL);
        if (__lsan_do_recoverable_leak_check && __lsan_do_recoverable_leak_check()) {
            fprintf(stderr, "  leaks found (LeakSanitizer report above)\n");
            _exit(1);
        }
        _exit(0);
    }
    close(fd[1]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    /* non-blocking: a grandchild the case left behind may still hold the pipe open */
    ssize_t n = read(fd[0], why, whysz - 1);
    why[n > 0 ? n : 0] = 0;
    close(fd[0]);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_EXIT_SKIP) {
        if (!why[0])
            snprintf(why, whysz, "(no reason given)");
        return TEST_EXIT_SKIP;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_EXIT_TIMING)
        return TEST_EXIT_TIMING;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        printf("FAIL %s: timed out after %us (hang?)\n", c->name, c->timeout * scale);
    else if (WIFSIGNALED(status))
        printf("FAIL %s: killed by signal %d (%s)\n", c->name, WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        printf("FAIL %s: exit status %d\n", c->name, WEXITSTATUS(status));
    return 1;
}

/* Runs one case in this process (TEST_NOFORK); returns 1 if it skipped. */
static inline int test_run_nofork_(const struct test_case *c) {
    test_nofork_ = 1;
    test_current_ = c->name;
    if (setjmp(test_skip_jmp_))
        return 1;
    c->fn();
    return 0;
}

static inline int test_main(int argc, char **argv, const struct test_case *cases) {
    unsigned passed = 0, failed = 0, skipped = 0, retried = 0, scale = 1;
    const char *s = getenv("TEST_TIMEOUT_SCALE");
    if (s && atoi(s) > 0)
        scale = (unsigned)atoi(s);
    for (int i = 1; i < argc; i++) { /* a misspelt case must not pass as "0 passed" */
        const struct test_case *c = cases;
        while (c->name && strcmp(c->name, argv[i]))
            c++;
        if (!c->name) {
            fprintf(stderr, "%s: no test case named \"%s\"; the cases are:", argv[0], argv[i]);
            for (c = cases; c->name; c++)
                fprintf(stderr, " %s", c->name);
            fputc('\n', stderr);
            return 2;
        }
    }
    for (const struct test_case *c = cases; c->name; c++) {
        if (!test_selected(c->name, argc, argv))
            continue;
        double t0 = test_now();
        fflush(NULL);
        if (getenv("TEST_NOFORK")) { /* for debuggers: run the case in this process */
            if (test_run_nofork_(c))
                skipped++;
            else {
                printf("ok %s (%.2fs)\n", c->name, test_now() - t0);
                passed++;
            }
            continue;
        }
        char why[512];
        int r = test_run_case_(c, scale, why, sizeof why);
        if (r == TEST_EXIT_TIMING) {
            printf("retry %s: a timing check failed (above) after %.2fs; running it once more in 1 s\n", c->name,
                   test_now() - t0);
            fflush(stdout);
            sleep(1); /* a burst of load from elsewhere may pass */
            retried++;
            t0 = test_now();
            r = test_run_case_(c, scale, why, sizeof why);
            if (r == TEST_EXIT_TIMING) {
                printf("FAIL %s: a timing check failed twice\n", c->name);
                r = 1;
            }
        }
        double dt = test_now() - t0;
        if (r == 0) {
            printf("ok %s (%.2fs)\n", c->name, dt);
            passed++;
        } else if (r == TEST_EXIT_SKIP) {
            printf("skip %s: %s\n", c->name, why);
            skipped++;
        } else {
            failed++;
        }
        fflush(stdout);
    }
    if (retried)
        printf("(%u case%s run a second time after a timing check failed: see the retry lines)\n", retried,
               retried == 1 ? "" : "s");
    printf("%u passed, %u failed, %u skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}

#endif
