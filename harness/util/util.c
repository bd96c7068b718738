/* util.c — see util.h: memory, numbers, JSON getters, string lists (files: files.c; processes
 * and the machine: proc.c). */
#include "harness/util/util.h"
#include "harness/util/errors.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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
