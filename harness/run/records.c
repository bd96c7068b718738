/* records.c — DIR/raw.jsonl read back, and a driver's stdout judged (records.h). */
#include "harness/run/records.h"
#include "harness/util/errors.h"
#include "harness/util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

json_t *hx_records_read_raw(const char *path, int fix, int *why) {
    size_t len = 0;
    char *text = hx_read_file(path, &len);
    if (!text) {
        if (errno == ENOENT)
            return json_array();
        fprintf(stderr, "forkscope: %s: cannot read: %s\n", path, strerror(errno));
        *why = HX_EIO;
        return NULL;
    }
    json_t *recs = json_array();
    size_t start = 0, lineno = 0;
    while (start < len) {
        char *nl = memchr(text + start, '\n', len - start);
        lineno++;
        if (!nl) { /* a line cut short by a kill while it was written */
            if (fix) {
                fprintf(stderr, "forkscope: %s: line %zu is incomplete (%zu bytes, no newline): cutting it away\n",
                        path, lineno, len - start);
                if (truncate(path, (off_t)start)) {
                    fprintf(stderr, "forkscope: %s: cannot truncate: %s\n", path, strerror(errno));
                    goto fail;
                }
            }
            break;
        }
        size_t n = (size_t)(nl - (text + start));
        json_error_t e;
        json_t *r = n ? json_loadb(text + start, n, 0, &e) : NULL;
        if (!json_is_object(r) || !json_is_string(json_object_get(r, "run_id"))) {
            fprintf(stderr,
                    "forkscope: %s:%zu: not a run record (%s); the file was changed by something else than "
                    "forkscope: fix or remove that line\n",
                    path, lineno, r ? "no run_id" : n ? e.text : "empty line");
            json_decref(r);
            goto fail;
        }
        json_array_append_new(recs, r);
        start += n + 1;
    }
    free(text);
    return recs;
fail:
    free(text);
    json_decref(recs);
    *why = HX_EIO;
    return NULL;
}

static double median_of(const json_t *driver, const char *key) {
    json_t *times = json_object_get(driver, key);
    size_t n = json_array_size(times);
    if (!n)
        return NAN;
    double *v = hx_xmalloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(times, i);
        v[i] = json_is_number(x) ? json_number_value(x) : NAN;
        if (!isfinite(v[i])) {
            free(v);
            return NAN;
        }
    }
    double m = hx_median(v, n);
    free(v);
    return m;
}

int hx_records_driver_output(const char *out, size_t len, json_t **doc, double *time_s, double *cpu_s) {
    *doc = NULL;
    *time_s = *cpu_s = NAN;
    if (!len)
        return HX_DRIVER_NO_OUTPUT;
    json_error_t e;
    json_t *d = json_loadb(out, len, 0, &e);
    if (!d || !json_is_object(d)) {
        json_decref(d);
        return HX_DRIVER_UNPARSABLE;
    }
    *doc = d;
    if (json_is_false(json_object_get(d, "verified")))
        return HX_DRIVER_WRONG;
    *time_s = median_of(d, "times");
    *cpu_s = median_of(d, "cpu_times");
    return isnan(*time_s) ? HX_DRIVER_NO_TIMES : HX_DRIVER_OK;
}

