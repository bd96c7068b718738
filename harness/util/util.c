/* util.c — see util.h. */
#include "harness/util/util.h"
#include "harness/util/errors.h"

#include <nettle/sha1.h>
#include <sched.h>

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void oom(void) {
    fputs("forkscope: out of memory\n", stderr);
    abort();
}

void *hx_xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p)
        oom();
    return p;
}

void *hx_xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom();
    return p;
}

void *hx_xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom();
    return q;
}

char *hx_xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    return memcpy(hx_xmalloc(n), s, n);
}

void hx_grow(void *arr, size_t *cap, size_t need, size_t sz) {
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap : 8;
    while (c < need)
        c *= 2;
    void **a = arr;
    *a = hx_xrealloc(*a, c * sz);
    *cap = c;
}

char *hx_read_file(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (cap - n < 2) {
            char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                errno = ENOMEM;
                break;
            }
            buf = nb;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            buf = NULL;
            errno = e;
            break;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    if (!buf && errno == 0)
        errno = ENOMEM;
    int e = errno;
    close(fd);
    if (!buf) {
        errno = e;
        return NULL;
    }
    buf[n] = 0;
    if (len)
        *len = n;
    return buf;
}

int hx_fsync_dir(const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = fsync(fd) ? -errno : 0;
    close(fd);
    return rc;
}

/* The directory part of path, in buf ("." if none). */
static const char *dir_of(const char *path, char *buf, size_t len) {
    const char *slash = strrchr(path, '/');
    if (!slash)
        return ".";
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    if (n >= len)
        return ".";
    memcpy(buf, path, n);
    buf[n] = 0;
    return buf;
}

static int tmp_name(const char *path, char *tmp, size_t len) {
    if ((size_t)snprintf(tmp, len, "%s.tmp.%ld", path, (long)getpid()) >= len)
        return -ENAMETOOLONG;
    return 0;
}

/* fsync, close, rename, fsync of the directory; fd is closed and tmp removed on failure. */
static int finish(int fd, const char *tmp, const char *path) {
    int rc = 0;
    if (fsync(fd))
        rc = -errno;
    if (close(fd) && !rc)
        rc = -errno;
    if (!rc && rename(tmp, path))
        rc = -errno;
    if (rc) {
        unlink(tmp);
        return rc;
    }
    char d[PATH_MAX];
    return hx_fsync_dir(dir_of(path, d, sizeof d));
}

int hx_write_atomic(const char *path, const void *data, size_t len) {
    char tmp[PATH_MAX];
    int rc = tmp_name(path, tmp, sizeof tmp);
    if (rc)
        return rc;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return -errno;
    const char *p = data;
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, p + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = w < 0 ? -errno : -EIO;
            close(fd);
            unlink(tmp);
            return rc;
        }
        off += (size_t)w;
    }
    return finish(fd, tmp, path);
}

FILE *hx_atomic_open(const char *path, char *tmp, size_t len) {
    int rc = tmp_name(path, tmp, len);
    if (rc) {
        errno = -rc;
        return NULL;
    }
    return fopen(tmp, "w");
}

int hx_atomic_commit(FILE *f, const char *tmp, const char *path) {
    int rc = 0;
    if (ferror(f))
        rc = -EIO;
    if (fflush(f) && !rc)
        rc = errno ? -errno : -EIO;
    if (rc) {
        fclose(f);
        unlink(tmp);
        return rc;
    }
    int fd = dup(fileno(f));
    if (fclose(f) || fd < 0) {
        rc = errno ? -errno : -EIO;
        if (fd >= 0)
            close(fd);
        unlink(tmp);
        return rc;
    }
    return finish(fd, tmp, path);
}

void hx_atomic_abort(FILE *f, const char *tmp) {
    if (f)
        fclose(f);
    unlink(tmp);
}

int hx_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    if (isnan(x) || isnan(y))
        return isnan(x) - isnan(y);
    return (x > y) - (x < y);
}

double hx_median(double *v, size_t n) {
    if (!n)
        return NAN;
    qsort(v, n, sizeof *v, hx_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double hx_median_copy(const double *v, size_t n) {
    if (!n)
        return NAN;
    double *s = hx_xmalloc(n * sizeof *s);
    memcpy(s, v, n * sizeof *s);
    double m = hx_median(s, n);
    free(s);
    return m;
}

double hx_quantile_sorted(const double *s, size_t n, double q) {
    if (!n)
        return NAN;
    if (q <= 0)
        return s[0];
    if (q >= 1)
        return s[n - 1];
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)h;
    double frac = h - (double)lo;
    return lo + 1 < n ? s[lo] + frac * (s[lo + 1] - s[lo]) : s[lo];
}

double hx_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- JSON getters -------------------------------------------------------------------------- */

const char *hx_json_str(const json_t *o, const char *key, const char *def) {
    const char *s = json_string_value(json_object_get(o, key));
    return s && *s ? s : def;
}

int hx_json_number(const json_t *o, const char *key, double *out) {
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_number(v))
        return -1;
    *out = json_number_value(v);
    return isfinite(*out) ? 1 : -1;
}

int hx_capture(const char *const argv[], int with_stderr, char **output) {
    *output = NULL;
    int fd[2];
    if (pipe(fd))
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    if (with_stderr == 1)
        posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
    else if (with_stderr == 2)
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addclose(&fa, fd[1]);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid;
    /* posix_spawn's argv is char *const[] for historical reasons; it does not write to it */
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)(uintptr_t)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc) {
        close(fd[0]);
        errno = rc;
        return -1;
    }
    size_t cap = 4096, len = 0;
    char *buf = hx_xmalloc(cap);
    for (;;) {
        ssize_t r = read(fd[0], buf + len, cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
        if (cap - len < 2)
            buf = hx_xrealloc(buf, cap *= 2);
    }
    buf[len] = 0;
    close(fd[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    *output = buf;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int hx_mkdir_p(const char *path) {
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return errno = ENAMETOOLONG, -1;
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0777) && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(buf, 0777) && errno != EEXIST ? -1 : 0;
}

/* ---- files and the machine ---------------------------------------------------------------- */

int hx_file_sha1(const char *path, char hex[41]) {
    size_t len;
    char *data = hx_read_file(path, &len);
    if (!data)
        return -errno;
    struct sha1_ctx ctx;
    uint8_t d[SHA1_DIGEST_SIZE];
    sha1_init(&ctx);
    sha1_update(&ctx, len, (const uint8_t *)data);
    sha1_digest(&ctx, sizeof d, d);
    free(data);
    for (int i = 0; i < SHA1_DIGEST_SIZE; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    return 0;
}

unsigned hx_online_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (unsigned)n;
}

unsigned hx_usable_cpus(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int c = CPU_COUNT(&set);
        return c > 0 ? (unsigned)c : 1;
    }
    return hx_online_cores();
}

/* The full path of `name` on $PATH, or -1. */
int hx_find_on_path(const char *name, char *out, size_t len) {
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    while (*path) {
        const char *end = strchr(path, ':');
        size_t n = end ? (size_t)(end - path) : strlen(path);
        if ((size_t)snprintf(out, len, "%.*s/%s", (int)n, n ? path : ".", name) < len && !access(out, X_OK)) {
            struct stat st;
            if (!stat(out, &st) && S_ISREG(st.st_mode))
                return 0;
        }
        path += n;
        if (*path == ':')
            path++;
    }
    return -1;
}

/* out = a "/" b (+ ext); -1 if it does not fit in PATH_MAX (out is then truncated). */
int hx_path_join(char *out, const char *a, const char *b, const char *ext) {
    int n = snprintf(out, PATH_MAX, "%s/%s%s", a, b, ext);
    return n < 0 || n >= PATH_MAX ? -1 : 0;
}

void hx_strs_vaddf(char ***v, size_t *n, const char *fmt, va_list ap) {
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        oom();
    *v = hx_xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = s;
}

void hx_strs_addf(char ***v, size_t *n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    hx_strs_vaddf(v, n, fmt, ap);
    va_end(ap);
}

void hx_strs_free(char **v, size_t n) {
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}
