/* options.c — the list of kernel descriptions and the parsing of their options (options.h):
 * the drivers' and the harness's own, so that the two accept exactly the same values. */
#include "bench/options.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_DESC_ADDR_(k) &bench_##k##_desc,
const bench_desc *const bench_descs[] = {BENCH_KERNEL_LIST(BENCH_DESC_ADDR_) NULL};

const bench_desc *bench_desc_find(const char *name) {
    for (size_t k = 0; bench_descs[k]; k++)
        if (!strcmp(bench_descs[k]->name, name))
            return bench_descs[k];
    return NULL;
}

int bench_opt_find(const bench_opt *opts, const char *name) {
    for (int i = 0; opts[i].name; i++)
        if (!strcmp(opts[i].name, name))
            return i;
    return -1;
}

static int is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

int bench_vals_set(const bench_opt *opts, bench_vals *v, int idx, const char *flag, const char *val, char *err,
                   size_t errlen) {
    const bench_opt *o = &opts[idx];
    char *end;
    errno = 0;
    switch (o->type) {
    case BENCH_INT: {
        long long x = strtoll(val, &end, 10);
        if (!*val || *end || errno)
            return snprintf(err, errlen, "option %s: '%s' is not an integer", flag, val), -1;
        if (x < o->min || x > o->max)
            return snprintf(err, errlen, "option %s: %lld is out of range [%.0f, %.0f]", flag, x, o->min, o->max), -1;
        if (o->pow2 && !is_pow2(x))
            return snprintf(err, errlen, "option %s: %lld is not a power of two", flag, x), -1;
        v->i[idx] = x;
        v->d[idx] = (double)x;
        return 0;
    }
    case BENCH_DOUBLE: {
        double x = strtod(val, &end);
        if (!*val || *end || errno || !isfinite(x))
            return snprintf(err, errlen, "option %s: '%s' is not a number", flag, val), -1;
        if (x < o->min || x > o->max)
            return snprintf(err, errlen, "option %s: %g is out of range [%g, %g]", flag, x, o->min, o->max), -1;
        v->d[idx] = x;
        v->i[idx] = (int64_t)x;
        return 0;
    }
    case BENCH_CHOICE: {
        size_t n = strlen(val);
        for (const char *p = o->choices; *p;) {
            const char *bar = strchr(p, '|');
            size_t len = bar ? (size_t)(bar - p) : strlen(p);
            if (n && len == n && !strncmp(p, val, n)) {
                v->s[idx] = val;
                return 0;
            }
            p += len + (bar ? 1 : 0);
        }
        return snprintf(err, errlen, "option %s: '%s' is not one of %s", flag, val, o->choices), -1;
    }
    }
    return -1;
}

int bench_vals_defaults(const bench_opt *opts, bench_vals *v, char *err, size_t errlen) {
    memset(v, 0, sizeof *v);
    for (int o = 0; opts[o].name; o++)
        if (bench_vals_set(opts, v, o, opts[o].name, opts[o].def, err, errlen))
            return -1;
    return 0;
}
