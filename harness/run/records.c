/* records.c — DIR/raw.jsonl read back, and a driver's stdout judged (records.h). */
#include "harness/run/records.h"
#include "harness/config/command.h"
#include "harness/run/envinfo.h"
#include "harness/results/results.h"
#include "harness/util/errors.h"
#include "harness/util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
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

/* ---- a finished run's record --------------------------------------------------------------- */

_Static_assert(HX_NSTATUS == sizeof ((hx_plan_cell *)0)->fails / sizeof ((hx_plan_cell *)0)->fails[0],
               "hx_plan_cell.fails: one per status");
const char *const hx_status_names[HX_NSTATUS] = {"ok", "wrong", "crash", "timeout", "memory", "error"};

int hx_status_index(const char *s) {
    for (int i = 0; i < HX_NSTATUS; i++)
        if (s && !strcmp(s, hx_status_names[i]))
            return i;
    return HX_ST_ERROR;
}

/* Replaces bytes that are not valid UTF-8 (and NUL) by '?', in place: a stderr tail may
 * start inside a character, and JSON strings must be UTF-8. */
static void utf8_sanitize(char *s, size_t len) {
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)s[i];
        size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        int ok = n > 0 && i + n <= len && !(n == 2 && c < 0xC2);
        for (size_t k = 1; ok && k < n; k++)
            ok = ((unsigned char)s[i + k] & 0xC0) == 0x80;
        if (!ok || c == 0) {
            s[i++] = '?';
            continue;
        }
        i += n;
    }
}

/* "SIGSEGV" for a signal number (or "signal N"). */
static json_t *signal_name(int sig) {
    const char *abbrev = sigabbrev_np(sig);
    char buf[32];
    if (abbrev)
        snprintf(buf, sizeof buf, "SIG%s", abbrev);
    else
        snprintf(buf, sizeof buf, "signal %d", sig);
    return json_string(buf);
}

/* The status of a command variant's run that exited: its exit status, then its answer and time
 * (harness/config/command.h); *t the time taken (from the output, else the wall time). */
static int command_status(const hx_plan_cell *c, const hx_run_res *r, double *t, char *note, size_t len) {
    note[0] = 0;
    if (r->exit_code != 0) {
        snprintf(note, len, "exit status %d", r->exit_code);
        return HX_ST_ERROR;
    }
    char *out = hx_xmalloc(r->out_len + 1);
    memcpy(out, r->out ? r->out : "", r->out_len);
    out[r->out_len] = 0;
    int j = hx_command_judge(c->var, c->bench, out, t, note, len);
    free(out);
    if (isnan(*t)) {
        *t = r->wall_s;
        if (!j)
            snprintf(note, len, "time: the wall time of the process (no time regex)");
    }
    return j == 0 ? HX_ST_OK : j == 1 ? HX_ST_WRONG : HX_ST_ERROR;
}

json_t *hx_records_make(const hx_record_ctx *x, const hx_plan_cell *c, unsigned rep, const hx_run_res *r,
                        double started) {
    double cmd_time = NAN;
    json_t *driver = NULL;
    const char *note = NULL;
    char notebuf[PATH_MAX + 256];
    int st;
    double drv_time = NAN, drv_cpu = NAN;
    int drv = HX_DRIVER_NO_OUTPUT;
    if (c->var->kind != HX_VARIANT_COMMAND)
        drv = hx_records_driver_output(r->out, r->out_len, &driver, &drv_time, &drv_cpu);
    if (r->exec_errno) {
        st = HX_ST_ERROR;
        snprintf(notebuf, sizeof notebuf, "cannot execute %s: %s", c->driver, strerror(r->exec_errno));
        note = notebuf;
    } else if (r->killed == HX_KILLED_TIMEOUT) {
        st = HX_ST_TIMEOUT;
        snprintf(notebuf, sizeof notebuf, "killed at the time limit of %g s", x->time_limit_s);
        note = notebuf;
    } else if (r->killed == HX_KILLED_MEMORY) {
        st = HX_ST_MEMORY;
        snprintf(notebuf, sizeof notebuf, "stopped at the memory limit of %llu MiB (%s)", x->memory_limit_mib,
                 x->mechanism);
        note = notebuf;
    } else if (r->signaled) {
        st = HX_ST_CRASH;
        snprintf(notebuf, sizeof notebuf, "killed by signal %d (%s)", r->signo, strsignal(r->signo));
        note = notebuf;
    } else if (c->var->kind == HX_VARIANT_COMMAND) {
        st = command_status(c, r, &cmd_time, notebuf, sizeof notebuf);
        note = *notebuf ? notebuf : NULL;
    } else if (r->exit_code == 3) {
        st = HX_ST_WRONG;
        note = "the driver's answer did not verify (exit status 3)";
    } else if (r->exit_code != 0) {
        st = HX_ST_ERROR;
        snprintf(notebuf, sizeof notebuf, "exit status %d%s", r->exit_code,
                 r->exit_code == 1 ? " (bad usage)" : r->exit_code == 2 ? " (could not run)" : "");
        note = notebuf;
    } else if (drv == HX_DRIVER_NO_OUTPUT || drv == HX_DRIVER_UNPARSABLE) {
        st = HX_ST_ERROR;
        note = drv == HX_DRIVER_UNPARSABLE ? "unparsable output (not one JSON object)" : "no output";
    } else if (drv == HX_DRIVER_WRONG) {
        st = HX_ST_WRONG;
        note = "exit status 0 but \"verified\": false";
    } else if (drv == HX_DRIVER_NO_TIMES) {
        st = HX_ST_ERROR;
        note = "the driver's output has no \"times\" (an array of finite numbers)";
    } else {
        st = HX_ST_OK;
    }
    char *err = r->err ? r->err : (char *)"";
    utf8_sanitize(err, r->err_len);
    char when[32];
    hx_envinfo_iso_time(started, when, sizeof when);
    json_t *rec = json_object();
    json_object_set_new(rec, "schema", json_integer(HX_RESULTS_SCHEMA));
    char run_id[240];
    snprintf(run_id, sizeof run_id, "%s#%u", c->id, rep);
    json_object_set_new(rec, "run_id", json_string(run_id));
    json_object_set_new(rec, "cell_id", json_string(c->id));
    json_object_set_new(rec, "benchmark", json_string(c->bench ? c->bench->name : "calibrate"));
    json_object_set_new(rec, "kernel", json_string(c->bench ? c->bench->kernel : "calibrate"));
    json_object_set_new(rec, "params", c->bench ? json_deep_copy(c->bench->params) : json_object());
    json_object_set_new(rec, "variant", json_string(c->var->name));
    json_object_set_new(rec, "workers", json_integer(c->workers));
    json_object_set_new(rec, "rep", json_integer(rep));
    json_object_set_new(rec, "kind", json_string(c->bench ? "timed" : "calibrate"));
    json_object_set_new(rec, "oversubscribed", json_boolean(c->oversub));
    json_object_set_new(rec, "status", json_string(hx_status_names[st]));
    json_object_set_new(rec, "exit_code", r->exited && !r->exec_errno ? json_integer(r->exit_code) : json_null());
    json_object_set_new(rec, "signal", r->signaled ? signal_name(r->signo) : json_null());
    json_object_set_new(rec, "wall_s", json_real(r->wall_s));
    json_object_set_new(rec, "maxrss_kib", json_integer(r->maxrss_kib));
    json_object_set_new(rec, "cgroup_peak_kib", r->cg_peak_kib >= 0 ? json_integer(r->cg_peak_kib) : json_null());
    json_object_set_new(rec, "user_s", json_real(r->user_s));
    json_object_set_new(rec, "sys_s", json_real(r->sys_s));
    json_object_set_new(rec, "time_s", st != HX_ST_OK                         ? json_null()
                                       : c->var->kind == HX_VARIANT_COMMAND ? json_real(cmd_time)
                                                                            : json_real(drv_time));
    json_object_set_new(rec, "cpu_s", st == HX_ST_OK && !isnan(drv_cpu) ? json_real(drv_cpu) : json_null());
    json_object_set_new(rec, "driver", driver ? driver : json_null());
    json_object_set_new(rec, "stderr_tail", json_stringn(err, r->err_len));
    json_object_set_new(rec, "started", json_string(when));
    json_object_set_new(rec, "note", note ? json_string(note) : json_null());
    if (x->host)
        json_object_set_new(rec, "host", json_string(x->host));
    return rec;
}

