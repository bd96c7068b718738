/* fuzz.h — what the libFuzzer targets share: a private scratch directory for the files the
 * parsers read (they take paths, as forkscope's commands do), and splitting one input into
 * several files at NUL bytes. */
#ifndef FK_FUZZ_H
#define FK_FUZZ_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char fz_dir[64];

/* Makes the scratch directory (once per process; the run script removes /tmp/fkfuzz.*). */
static inline const char *fz_scratch(void) {
    if (!fz_dir[0]) {
        snprintf(fz_dir, sizeof fz_dir, "/tmp/fkfuzz.XXXXXX");
        if (!mkdtemp(fz_dir)) {
            perror("fuzz: mkdtemp");
            abort();
        }
    }
    return fz_dir;
}

/* path of NAME in the scratch directory */
static inline const char *fz_path(const char *name, char *buf, size_t len) {
    snprintf(buf, len, "%s/%s", fz_scratch(), name);
    return buf;
}

/* Writes data to NAME in the scratch directory (replacing it); NULL data removes it. */
static inline const char *fz_write(const char *name, const void *data, size_t n) {
    static char path[PATH_MAX];
    fz_path(name, path, sizeof path);
    unlink(path);
    if (!data)
        return path;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || (n && write(fd, data, n) != (ssize_t)n)) {
        perror("fuzz: write");
        abort();
    }
    close(fd);
    return path;
}

/* Splits data at NUL bytes into at most max parts (the last part takes the rest, NULs and
 * all); returns how many parts there are. */
static inline size_t fz_split(const uint8_t *data, size_t n, const uint8_t **part, size_t *len, size_t max) {
    size_t k = 0, start = 0;
    for (size_t i = 0; i < n && k + 1 < max; i++)
        if (data[i] == 0) {
            part[k] = data + start;
            len[k++] = i - start;
            start = i + 1;
        }
    part[k] = data + start;
    len[k++] = n - start;
    return k;
}

/* A NUL-terminated copy (free it). */
static inline char *fz_str(const uint8_t *data, size_t n) {
    char *s = malloc(n + 1);
    if (!s)
        abort();
    memcpy(s, data, n);
    s[n] = 0;
    return s;
}

#endif
