/* util.h — the harness's small helpers, in one place: memory that cannot fail, whole-file
 * reads, atomic writes, medians and quantiles, the monotonic clock.
 *
 * Return convention (the whole harness): 0 on success or a negative code; functions that
 * touch the file system return -errno.  Out of memory is not something the analysis can
 * report usefully: the hx_x* allocators print and abort. */
#ifndef HX_UTIL_H
#define HX_UTIL_H

#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

void *hx_xmalloc(size_t n);
void *hx_xcalloc(size_t n, size_t size);
void *hx_xrealloc(void *p, size_t n); /* n = 0 is allowed (a 1-byte block) */
char *hx_xstrdup(const char *s);
/* Grows *arr (of *cap elements of size sz) so that it holds at least need elements. */
void hx_grow(void *arr, size_t *cap, size_t need, size_t sz);

/* The whole file, NUL-terminated (*len, if given, excludes the NUL); NULL with errno set.
 * Out of memory is errno ENOMEM, not an abort (a huge file is the caller's to report). */
char *hx_read_file(const char *path, size_t *len);

/* Runs argv (argv[0] searched in PATH unless it holds a '/'; stdin /dev/null) and returns its
 * stdout in *output (malloc'd, NUL-terminated); its stderr goes to ours (with_stderr 0),
 * into *output too (1) or nowhere (2).  The
 * exit status, 128 + the signal if killed, or -1 with errno if it could not be started
 * (ENOENT: not found). */
int hx_capture(const char *const argv[], int with_stderr, char **output);

/* mkdir -p: 0, or -1 with errno (ENAMETOOLONG for a path longer than PATH_MAX). */
int hx_mkdir_p(const char *path);

/* fsync of a directory (so that a rename in it is durable): 0 or -errno. */
int hx_fsync_dir(const char *dir);
/* Replaces path atomically with data: a temporary file beside it, fsync, rename, fsync of
 * the directory.  0 or -errno; the temporary file is removed on failure. */
int hx_write_atomic(const char *path, const void *data, size_t len);
/* The same for text written through a FILE*: hx_atomic_open opens a temporary file beside
 * path (its name in tmp[len]); hx_atomic_commit flushes, fsyncs and closes it and renames
 * it into place (or removes it: on an error, or when f has an error flag).  0 or -errno. */
FILE *hx_atomic_open(const char *path, char *tmp, size_t len);
int hx_atomic_commit(FILE *f, const char *tmp, const char *path);
/* Removes the temporary file of an hx_atomic_open that will not be committed. */
void hx_atomic_abort(FILE *f, const char *tmp);

/* The median of v[0..n) (v is sorted in place); NAN for n = 0. */
double hx_median(double *v, size_t n);
/* The median of a copy of v (v untouched); NAN for n = 0. */
double hx_median_copy(const double *v, size_t n);
/* The q-quantile (0 ≤ q ≤ 1) of sorted s[0..n), interpolated linearly between order
 * statistics (R's type 7); NAN for n = 0. */
double hx_quantile_sorted(const double *s, size_t n, double q);
/* qsort comparator for doubles (NaNs last). */
int hx_cmp_double(const void *a, const void *b);

/* Seconds on the monotonic clock. */
double hx_now(void);

/* JSON getters.  The string member key of o if it is a non-empty string, else def. */
const char *hx_json_str(const json_t *o, const char *key, const char *def);
/* A number member: 1 and *out if it is a finite JSON number, 0 if absent or null, -1 if
 * anything else. */
int hx_json_number(const json_t *o, const char *key, double *out);

/* The SHA-1 of a file's contents in hex: 0 or -errno. */
int hx_file_sha1(const char *path, char hex[41]);
/* Online CPUs (sysconf), and the CPUs this process may run on (its affinity mask); at least 1. */
unsigned hx_online_cores(void);
unsigned hx_usable_cpus(void);

/* The full path of program `name` on $PATH (/usr/bin:/bin if unset) into out[len]: 0, or -1
 * if there is no executable regular file of that name. */
int hx_find_on_path(const char *name, char *out, size_t len);
/* out = a "/" b ext (ext may be ""): 0, or -1 if it does not fit in PATH_MAX (out is then
 * truncated). */
int hx_path_join(char *out, const char *a, const char *b, const char *ext);

/* Appends a formatted string (malloc'd) to the list (*v)[0..*n); out of memory aborts. */
void hx_strs_addf(char ***v, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void hx_strs_vaddf(char ***v, size_t *n, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
/* Frees the strings of the list and the list. */
void hx_strs_free(char **v, size_t n);

#endif
