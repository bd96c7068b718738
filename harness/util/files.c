/* files.c — see util.h: files read whole, written atomically (a temporary, fsync'd, renamed,
 * the directory fsync'd), directories made, a file's SHA-1, a program on $PATH. */
#include "harness/util/util.h"

#include <nettle/sha1.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

