/* config.c — loading and validating experiment configurations.
 *
 * jansson parses the file (and reports syntax errors with their position).  jansson keeps no
 * positions for values, so a small scanner walks the same (by then known valid) text once
 * and records the byte offset of every key and value under its key path
 * ("benchmarks[2].params.n"); semantic errors look their path up there. */
#include "harness/config/config.h"
#include "harness/config/jsonpos.h"
#include "harness/config/command.h"
#include "harness/util/env.h"
#include "harness/util/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <regex.h>
#include <string.h>
#include <unistd.h>

#include "harness/util/errors.h"

int hx_config_variant_class(const hx_variant *v) {
    return v->kind == HX_VARIANT_SERIAL ? HX_CLASS_SERIAL
         : v->kind == HX_VARIANT_BASELINE || v->kind == HX_VARIANT_COMMAND ? HX_CLASS_BASELINE
                                        : HX_CLASS_PARALLEL;
}

/* ---- diagnostics ------------------------------------------------------------------------------ */

void hx_config_diag_add(hx_diag *d, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    hx_strs_vaddf(&d->msgs, &d->n, fmt, ap);
    va_end(ap);
}

void hx_config_diag_print(const hx_diag *d, FILE *out) {
    for (size_t i = 0; i < d->n; i++)
        fprintf(out, "%s\n", d->msgs[i]);
}

void hx_config_diag_free(hx_diag *d) {
    hx_strs_free(d->msgs, d->n);
    memset(d, 0, sizeof *d);
}

/* ---- validation context ------------------------------------------------------------------------ */

typedef struct vctx {
    const char *file, *text;
    size_t len;
    hx_jpos sc;
    hx_diag *d;
    size_t nerr;
} vctx;

static const hx_jpos_entry *find_pos(const vctx *c, const char *path) { return hx_jpos_find(&c->sc, path); }

/* Reports an error at the value of pospath (at its key if at_key), naming showpath. */
static void verr_at(vctx *c, const char *pospath, int at_key, const char *showpath, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void verr_at(vctx *c, const char *pospath, int at_key, const char *showpath, const char *fmt, ...) {
    const hx_jpos_entry *p = find_pos(c, pospath);
    int line = 0, col = 0;
    if (p)
        hx_jpos_line_col(c->text, c->len, at_key && p->koff >= 0 ? p->koff : p->voff, &line, &col);
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    hx_config_diag_add(c->d, "%s:%d:%d: %s: %s", c->file, line, col, *showpath ? showpath : "(top level)", msg);
    c->nerr++;
}

#define VERR(c, path, ...) verr_at(c, path, 0, path, __VA_ARGS__)
#define VERR_KEY(c, path, ...) verr_at(c, path, 1, path, __VA_ARGS__)

static const char *type_name(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "a list";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "?";
}

/* A short description of a value for messages: numbers and strings as written, else the type. */
static const char *describe(const json_t *v, char *buf, size_t len) {
    if (json_is_integer(v))
        snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, len, "%g", json_real_value(v));
    else if (json_is_string(v))
        snprintf(buf, len, "\"%.60s\"", json_string_value(v));
    else
        snprintf(buf, len, "%s", type_name(v));
    return buf;
}

static void path_key(char *out, size_t len, const char *base, const char *key) {
    snprintf(out, len, "%s%s%s", base, *base ? "." : "", key);
}

static int valid_name(const char *s) {
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("_.-", *s))
            return 0;
    return 1;
}

/* Checks that object obj (at path) has only keys from allowed (NULL-terminated). */
static void check_keys(vctx *c, const char *path, json_t *obj, const char *const *allowed, const char *what) {
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        int ok = 0;
        for (size_t i = 0; allowed[i]; i++)
            ok |= !strcmp(key, allowed[i]);
        if (!ok) {
            char p[512], list[256] = "";
            path_key(p, sizeof p, path, key);
            for (size_t i = 0; allowed[i]; i++) {
                size_t u = strlen(list);
                snprintf(list + u, sizeof list - u, "%s%s", i ? ", " : "", allowed[i]);
            }
            VERR_KEY(c, p, "unknown key \"%s\" in %s (expected one of: %s)", key, what, list);
        }
    }
}

/* Integer value of v if it is an integer (or a real with an integral value, e.g. 1e4). */
static int as_integer(const json_t *v, long long *out) {
    if (json_is_integer(v)) {
        *out = (long long)json_integer_value(v);
        return 1;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (isfinite(d) && d == floor(d) && fabs(d) < 9007199254740992.0) {
            *out = (long long)d;
            return 1;
        }
    }
    return 0;
}

/* An integer in [lo, hi] at path; 0 and an error otherwise. */
static int get_int(vctx *c, const char *path, json_t *v, long long lo, long long hi, long long *out) {
    char buf[96];
    if (!as_integer(v, out)) {
        VERR(c, path, "expected an integer in [%lld, %lld], got %s", lo, hi, describe(v, buf, sizeof buf));
        return 0;
    }
    if (*out < lo || *out > hi) {
        VERR(c, path, "%lld is out of range (expected an integer in [%lld, %lld])", *out, lo, hi);
        return 0;
    }
    return 1;
}

/* ---- the parts of a config ------------------------------------------------------------------ */

static void check_param(vctx *c, const char *path, const hx_kopt *o, json_t *v, hx_bench *b) {
    char buf[96], text[64];
    switch (o->type) {
    case BENCH_INT: {
        long long x;
        if (!as_integer(v, &x)) {
            VERR(c, path, "expected an integer in [%.0f, %.0f]%s, got %s", o->min, o->max,
                 o->pow2 ? " that is a power of two" : "", describe(v, buf, sizeof buf));
            return;
        }
        if ((double)x < o->min || (double)x > o->max) {
            VERR(c, path, "%lld is out of range (expected an integer in [%.0f, %.0f]%s)", x, o->min, o->max,
                 o->pow2 ? " that is a power of two" : "");
            return;
        }
        if (o->pow2 && (x <= 0 || (x & (x - 1)))) {
            VERR(c, path, "%lld is not a power of two (expected a power of two in [%.0f, %.0f])", x, o->min, o->max);
            return;
        }
        snprintf(text, sizeof text, "%lld", x);
        break;
    }
    case BENCH_DOUBLE: {
        if (!json_is_number(v)) {
            VERR(c, path, "expected a number in [%g, %g], got %s", o->min, o->max, describe(v, buf, sizeof buf));
            return;
        }
        double x = json_number_value(v);
        if (!(x >= o->min && x <= o->max)) {
            VERR(c, path, "%g is out of range (expected a number in [%g, %g])", x, o->min, o->max);
            return;
        }
        snprintf(text, sizeof text, "%.17g", x);
        break;
    }
    case BENCH_CHOICE: {
        if (!json_is_string(v)) {
            VERR(c, path, "expected a string, one of %s, got %s", o->choices, describe(v, buf, sizeof buf));
            return;
        }
        const char *s = json_string_value(v);
        size_t n = strlen(s);
        int found = 0;
        for (const char *p = o->choices; *p && !found;) {
            const char *bar = strchr(p, '|');
            size_t len = bar ? (size_t)(bar - p) : strlen(p);
            found = n && len == n && !strncmp(p, s, n);
            p += len + (bar ? 1 : 0);
        }
        if (!found) {
            VERR(c, path, "\"%.60s\" is not a known %s (expected one of %s)", s, o->name, o->choices);
            return;
        }
        snprintf(text, sizeof text, "%s", s);
        break;
    }
    }
    char **args = realloc(b->args, (b->nargs + 2) * sizeof *args);
    if (!args)
        return;
    b->args = args;
    if (asprintf(&args[b->nargs], "--%s", o->name) < 0)
        return;
    args[b->nargs + 1] = strdup(text);
    b->nargs += 2;
}

static void check_benchmark(vctx *c, const char *path, json_t *v, hx_bench *b) {
    static const char *const keys[] = {"name", "kernel", "params", "variants", "workers", NULL};
    char p[512], buf[96];
    if (!json_is_object(v)) {
        VERR(c, path, "expected an object {\"name\": ..., \"kernel\": ..., \"params\": {...}}, got %s",
             describe(v, buf, sizeof buf));
        return;
    }
    check_keys(c, path, v, keys, "a benchmark");
    json_t *kernel = json_object_get(v, "kernel"), *name = json_object_get(v, "name"),
           *params = json_object_get(v, "params");
    char klist[512] = "";
    for (size_t k = 0; bench_descs[k]; k++) {
        size_t u = strlen(klist);
        snprintf(klist + u, sizeof klist - u, "%s%s", u ? "|" : "", bench_descs[k]->name);
    }
    const hx_kernel_info *ki = NULL;
    path_key(p, sizeof p, path, "kernel");
    if (!kernel)
        verr_at(c, path, 0, p, "missing (expected one of %s)", klist);
    else if (!json_is_string(kernel))
        VERR(c, p, "expected a string, one of %s, got %s", klist, describe(kernel, buf, sizeof buf));
    else if (!(ki = hx_kernels_find(json_string_value(kernel))))
        VERR(c, p, "unknown kernel \"%.60s\" (expected one of %s)", json_string_value(kernel), klist);
    else
        snprintf(b->kernel, sizeof b->kernel, "%s", ki->name);

    path_key(p, sizeof p, path, "name");
    if (name) {
        if (!json_is_string(name))
            VERR(c, p, "expected a string of letters, digits, '_', '.', '-', got %s", describe(name, buf, sizeof buf));
        else if (!valid_name(json_string_value(name)) || strlen(json_string_value(name)) >= sizeof b->name)
            VERR(c, p, "\"%.60s\" is not a valid name (expected 1 to %zu letters, digits, '_', '.', '-')",
                 json_string_value(name), sizeof b->name - 1);
        else if (!strcmp(json_string_value(name), "calibrate"))
            VERR(c, p, "\"calibrate\" is reserved for the calibrate runs (expected another name)");
        else
            snprintf(b->name, sizeof b->name, "%s", json_string_value(name));
    } else if (ki) {
        snprintf(b->name, sizeof b->name, "%s", ki->name);
    }

    path_key(p, sizeof p, path, "params");
    if (!params) {
        b->params = json_object();
        return;
    }
    if (!json_is_object(params)) {
        VERR(c, p, "expected an object {option: value}, got %s", describe(params, buf, sizeof buf));
        return;
    }
    b->params = json_incref(params);
    if (!ki)
        return;
    const char *key;
    json_t *val;
    json_object_foreach(params, key, val) {
        char pp[600];
        path_key(pp, sizeof pp, p, key);
        const hx_kopt *o = ki->opts;
        while (o->name && strcmp(o->name, key))
            o++;
        if (!o->name) {
            char list[128] = "";
            for (const hx_kopt *q = ki->opts; q->name; q++) {
                size_t u = strlen(list);
                snprintf(list + u, sizeof list - u, "%s%s", u ? ", " : "", q->name);
            }
            VERR_KEY(c, pp, "unknown option \"%s\" for kernel %s (expected one of: %s)", key, ki->name, list);
            continue;
        }
        check_param(c, pp, o, val, b);
    }
}

/* workers: a list of integers, "cores", and ranges {"from", "to", "step" | "mul"}. */
static int cmp_unsigned(const void *a, const void *b) {
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

static void add_worker(hx_config *cfg, unsigned p) {
    unsigned *w = realloc(cfg->workers, (cfg->nworkers + 1) * sizeof *w);
    if (!w)
        return;
    cfg->workers = w;
    w[cfg->nworkers++] = p;
}

static void check_workers(vctx *c, json_t *list, hx_config *cfg) {
    char p[128], pp[192], buf[96];
    unsigned cores = cfg->cores > 1024 ? 1024 : cfg->cores;
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v) {
        snprintf(p, sizeof p, "workers[%zu]", i);
        long long x;
        if (json_is_string(v)) {
            if (strcmp(json_string_value(v), "cores"))
                VERR(c, p, "expected an integer in [1, 1024], \"cores\" or a range object, got %s",
                     describe(v, buf, sizeof buf));
            else
                add_worker(cfg, cores);
        } else if (json_is_object(v)) {
            static const char *const keys[] = {"from", "to", "step", "mul", NULL};
            size_t before = c->nerr;
            check_keys(c, p, v, keys, "a workers range");
            json_t *from = json_object_get(v, "from"), *to = json_object_get(v, "to"),
                   *step = json_object_get(v, "step"), *mul = json_object_get(v, "mul");
            long long f = 1, t = 1, s = 1, m = 0;
            int to_cores = 0;
            snprintf(pp, sizeof pp, "%s.from", p);
            if (!from)
                verr_at(c, p, 0, pp, "missing (expected an integer in [1, 1024])");
            else
                get_int(c, pp, from, 1, 1024, &f);
            snprintf(pp, sizeof pp, "%s.to", p);
            if (!to)
                verr_at(c, p, 0, pp, "missing (expected an integer in [1, 1024] or \"cores\")");
            else if (json_is_string(to) && !strcmp(json_string_value(to), "cores"))
                to_cores = 1, t = cores;
            else if (!as_integer(to, &t))
                VERR(c, pp, "expected an integer in [1, 1024] or \"cores\", got %s", describe(to, buf, sizeof buf));
            else
                get_int(c, pp, to, 1, 1024, &t);
            if (step && mul) {
                snprintf(pp, sizeof pp, "%s.mul", p);
                VERR_KEY(c, pp, "a range has either \"step\" or \"mul\", not both");
            } else if (step) {
                snprintf(pp, sizeof pp, "%s.step", p);
                get_int(c, pp, step, 1, 1024, &s);
            } else if (mul) {
                snprintf(pp, sizeof pp, "%s.mul", p);
                get_int(c, pp, mul, 2, 1024, &m);
            }
            if (c->nerr != before)
                continue;
            if (f > t && !to_cores) {
                VERR(c, p, "empty range: from %lld is above to %lld (expected from <= to)", f, t);
                continue;
            }
            for (long long x2 = f; x2 <= t; x2 = m ? x2 * m : x2 + s)
                add_worker(cfg, (unsigned)x2);
        } else if (get_int(c, p, v, 1, 1024, &x)) {
            add_worker(cfg, (unsigned)x);
        }
    }
    /* Ascending, without duplicates; P > cores left out unless oversubscription is allowed. */
    if (cfg->nworkers) /* none if every entry was refused (qsort's array must not be NULL) */
        qsort(cfg->workers, cfg->nworkers, sizeof *cfg->workers, cmp_unsigned);
    size_t n = 0;
    for (size_t k = 0; k < cfg->nworkers; k++) {
        if (n && cfg->workers[n - 1] == cfg->workers[k])
            continue;
        if (!cfg->oversubscribe && cfg->workers[k] > cfg->cores) {
            unsigned *d = realloc(cfg->dropped, (cfg->ndropped + 1) * sizeof *d);
            if (d) {
                cfg->dropped = d;
                d[cfg->ndropped++] = cfg->workers[k];
            }
            continue;
        }
        cfg->workers[n++] = cfg->workers[k];
    }
    cfg->nworkers = n;
}

/* "repetitions" / "warmup" / "process_reps": an integer, or {"serial": n, "parallel": n, "baseline": n}. */
static void check_per_class(vctx *c, const char *key, json_t *v, long long lo, unsigned out[HX_NCLASS]) {
    static const char *const classes[] = {"serial", "parallel", "baseline", NULL};
    char buf[96];
    long long x;
    if (json_is_object(v)) {
        check_keys(c, key, v, classes, key);
        if (json_object_size(v) == 0)
            VERR(c, key, "empty object (expected {\"serial\": n, \"parallel\": n, \"baseline\": n})");
        for (int k = 0; k < HX_NCLASS; k++) {
            json_t *e = json_object_get(v, classes[k]);
            char p[96];
            snprintf(p, sizeof p, "%s.%s", key, classes[k]);
            if (e && get_int(c, p, e, lo, 1000000, &x))
                out[k] = (unsigned)x;
        }
    } else if (as_integer(v, &x)) {
        if (get_int(c, key, v, lo, 1000000, &x))
            for (int k = 0; k < HX_NCLASS; k++)
                out[k] = (unsigned)x;
    } else {
        VERR(c, key, "expected an integer >= %lld or {\"serial\": n, \"parallel\": n, \"baseline\": n}, got %s", lo,
             describe(v, buf, sizeof buf));
    }
}

/* A list of variant names at path: each is parsed and added to cfg->variants if new.
 * Returns the set of their indices (bit v for cfg->variants[v]). */
/* A variant under a name of its own, possibly from another build:
 * {"name": "mine", "variant": "cont-seg-busy", "drivers": "../mine/build/bin"}.  The drivers
 * directory (relative to the current directory) must hold the variant's driver.  0 and *v,
 * or -1 after reporting. */
/* A template: a non-empty list of strings whose placeholders are {workers} or a parameter of
 * kernel (NULL: calibrate, {workers} only). */
static void check_template(vctx *c, const char *path, json_t *t, const char *kernel) {
    char buf[96], p[300];
    if (!json_is_array(t) || !json_array_size(t)) {
        VERR(c, path, "expected a command line: a non-empty list of strings, got %s", describe(t, buf, sizeof buf));
        return;
    }
    const hx_kernel_info *k = kernel ? hx_kernels_find(kernel) : NULL;
    size_t i;
    json_t *a;
    json_array_foreach(t, i, a) {
        snprintf(p, sizeof p, "%s[%zu]", path, i);
        if (!json_is_string(a)) {
            VERR(c, p, "expected a string, got %s", describe(a, buf, sizeof buf));
            continue;
        }
        for (const char *s = json_string_value(a); (s = strchr(s, '{'));) {
            const char *e = strchr(s, '}');
            if (!e)
                break;
            int known = (size_t)(e - s - 1) == 7 && !strncmp(s + 1, "workers", 7);
            for (const hx_kopt *o = k ? k->opts : NULL; o && o->name && !known; o++)
                known = strlen(o->name) == (size_t)(e - s - 1) && !strncmp(s + 1, o->name, (size_t)(e - s - 1));
            if (!known)
                VERR(c, p, "unknown placeholder %.*s (expected {workers}%s)", (int)(e - s + 1), s,
                     kernel ? " or a parameter of the kernel, e.g. {n}" : "");
            s = e + 1;
        }
    }
}

/* {"regex": R}: an extended POSIX regex with a group (the number to take). */
static void check_regex(vctx *c, const char *path, json_t *o) {
    char buf[96], p[300], why[320];
    json_t *r = json_object_get(o, "regex");
    snprintf(p, sizeof p, "%s.regex", path);
    if (!json_is_object(o) || !json_is_string(r)) {
        VERR(c, path, "expected {\"regex\": \"...([0-9.]+)...\"}, got %s", describe(o, buf, sizeof buf));
        return;
    }
    regex_t rx;
    if (hx_command_regex_compile(&rx, json_string_value(r), why, sizeof why)) {
        VERR(c, p, "not a usable regular expression: %s", why);
        return;
    }
    if (rx.re_nsub < 1)
        VERR(c, p, "needs a group ( ... ) around the number to take");
    regfree(&rx);
}

/* A variant object's name must not be a built-in variant's (results would say "cont-seg-busy"
 * for another program or another variant), except its own base's: {"name": "omp-llvm",
 * "variant": "omp-llvm", "env": ...} runs omp-llvm with an environment under its own name (not
 * with "drivers": another build's; the caller passes "" as its base). */
static void check_builtin_clash(vctx *c, const char *path, const char *name, const char *base) {
    hx_variant b;
    char err[256];
    if (hx_variant_parse(name, &b, err, sizeof err) || (base && !strcmp(name, base)))
        return;
    VERR(c, path, "\"%s\" is the name of a built-in variant (see `forkscope variants`): give this %s a name of its "
                  "own, e.g. \"my-%s\"",
         name, base ? "variant object" : "command variant", name);
}

/* A variant run by command (harness/config/command.h). */
static int command_object(vctx *c, const char *path, json_t *e, hx_variant *v) {
    char p[300], buf[96];
    size_t before = c->nerr;
    json_t *cmd = json_object_get(e, "command"), *name = json_object_get(e, "name");
    snprintf(p, sizeof p, "%s.command", path);
    if (!json_is_object(cmd) || !json_object_size(cmd)) {
        VERR(c, p, "expected {KERNEL: [PROGRAM, ARG...], ...}, got %s", describe(cmd, buf, sizeof buf));
    } else {
        const char *k;
        json_t *t;
        json_object_foreach(cmd, k, t) {
            char q[400];
            snprintf(q, sizeof q, "%s.%s", p, k);
            char ok[160];
            hx_command_checkable_list(ok, sizeof ok);
            if (!hx_kernels_find(k))
                VERR(c, q, "unknown kernel (expected %s)", ok);
            else if (!hx_command_checkable(k))
                VERR(c, q, "no single number to check its answer by: it cannot run by command (expected %s)", ok);
            else
                check_template(c, q, t, k);
        }
    }
    if (json_object_get(e, "calibrate")) {
        snprintf(p, sizeof p, "%s.calibrate", path);
        check_template(c, p, json_object_get(e, "calibrate"), NULL);
    }
    if (json_object_get(e, "time")) {
        snprintf(p, sizeof p, "%s.time", path);
        check_regex(c, p, json_object_get(e, "time"));
    }
    snprintf(p, sizeof p, "%s.answer", path);
    if (!json_object_get(e, "answer"))
        VERR(c, path, "missing \"answer\": {\"regex\": ...} (every run's answer is checked)");
    else
        check_regex(c, p, json_object_get(e, "answer"));
    snprintf(p, sizeof p, "%s.name", path);
    if (!json_is_string(name) || !valid_name(json_string_value(name)) || strlen(json_string_value(name)) >= sizeof v->name)
        VERR(c, name ? p : path, "expected a \"name\" of 1 to 31 letters, digits, '_', '.', '-', got %s",
             name ? describe(name, buf, sizeof buf) : "nothing");
    else
        check_builtin_clash(c, p, json_string_value(name), NULL);
    if (c->nerr != before)
        return -1;
    memset(v, 0, sizeof *v);
    v->kind = HX_VARIANT_COMMAND;
    snprintf(v->name, sizeof v->name, "%s", json_string_value(name));
    snprintf(v->base, sizeof v->base, "command");
    v->spec = json_incref(e);
    return 0;
}

/* "env": {"NAME": "value", ...}: environment variables for every run of the variant (e.g.
 * a runtime's own settings, KMP_BLOCKTIME, FORKSCOPE_FIBER_STACK).  0, or -1 after reporting. */
static int check_env(vctx *c, const char *path, json_t *e, hx_variant *v) {
    json_t *env = json_object_get(e, "env");
    if (!env)
        return 0;
    char p[300], buf[96];
    snprintf(p, sizeof p, "%s.env", path);
    if (!json_is_object(env)) {
        VERR(c, p, "expected {\"NAME\": \"value\", ...}, got %s", describe(env, buf, sizeof buf));
        return -1;
    }
    size_t before = c->nerr;
    const char *k;
    json_t *val;
    json_object_foreach(env, k, val) {
        int ok = (isalpha((unsigned char)*k) || *k == '_') && strlen(k) < 128;
        for (const char *q = k; ok && *q; q++)
            ok = isalnum((unsigned char)*q) || *q == '_';
        char q[420];
        snprintf(q, sizeof q, "%s.%.100s", p, k);
        if (!ok)
            VERR(c, q, "not an environment variable name (letters, digits and '_', not starting with a digit)");
        else if (!json_is_string(val))
            VERR(c, q, "expected a string value, got %s", describe(val, buf, sizeof buf));
        else if (!strcmp(k, "FORKSCOPE_PROMOTE"))
            VERR(c, q, "the variant's name says who promotes forks (its last axis, e.g. child-native-busy-beat; "
                       "thief when omitted), which the driver is given as --promote");
    }
    if (c->nerr != before)
        return -1;
    v->env = json_incref(env);
    return 0;
}

static int variant_object(vctx *c, const char *path, json_t *e, hx_variant *v) {
    static const char *const command_keys[] = {"name", "command", "calibrate", "time", "answer", "env", NULL};
    if (json_object_get(e, "command")) {
        check_keys(c, path, e, command_keys, "a command variant");
        if (command_object(c, path, e, v))
            return -1;
        if (check_env(c, path, e, v)) {
            json_decref(v->spec);
            v->spec = NULL;
            return -1;
        }
        return 0;
    }
    static const char *const keys[] = {"name", "variant", "drivers", "env", NULL};
    char p[200], buf[96], err[256];
    size_t before = c->nerr;
    check_keys(c, path, e, keys, "a variant");
    json_t *name = json_object_get(e, "name"), *base = json_object_get(e, "variant"), *dir = json_object_get(e, "drivers");
    snprintf(p, sizeof p, "%s.variant", path);
    if (!json_is_string(base))
        VERR(c, json_object_get(e, "variant") ? p : path, "%s", base ? "expected a variant name (see `forkscope variants`)"
                                                                    : "missing \"variant\" (the variant this entry runs)");
    else if (hx_variant_parse(json_string_value(base), v, err, sizeof err))
        VERR(c, p, "%s", err);
    snprintf(p, sizeof p, "%s.name", path);
    if (!json_is_string(name) || !valid_name(json_string_value(name)) || strlen(json_string_value(name)) >= sizeof v->name)
        VERR(c, name ? p : path, "%s %s", name ? "expected a name of 1 to 31 letters, digits, '_', '.', '-', got"
                                                : "missing \"name\" (what results call this variant), got",
             name ? describe(name, buf, sizeof buf) : "nothing");
    else if (json_is_string(base)) /* (another build's driver never under a built-in name) */
        check_builtin_clash(c, p, json_string_value(name), dir ? "" : json_string_value(base));
    if (dir && (!json_is_string(dir) || !*json_string_value(dir))) {
        snprintf(p, sizeof p, "%s.drivers", path);
        VERR(c, p, "expected the directory of a build's drivers (e.g. \"../other/build/bin\"), got %s",
             describe(dir, buf, sizeof buf));
    }
    if (c->nerr != before || check_env(c, path, e, v))
        return -1;
    snprintf(v->name, sizeof v->name, "%s", json_string_value(name));
    if (dir && hx_env("FORKSCOPE_DRIVER")) {
        /* every run's driver is FORKSCOPE_DRIVER's (tests, golden_facts): the directory is not
         * looked at, so a config's facts do not depend on what this tree has built */
        snprintf(v->drivers, sizeof v->drivers, "%s", json_string_value(dir));
    } else if (dir) {
        char exe[PATH_MAX + 64];
        if (!realpath(json_string_value(dir), v->drivers) ||
            (size_t)snprintf(exe, sizeof exe, "%s/%s", v->drivers, v->driver) >= sizeof exe || access(exe, X_OK)) {
            snprintf(p, sizeof p, "%s.drivers", path);
            if (strstr(json_string_value(dir), "layout/p")) /* (make layouts' copies) */
                VERR(c, p, "\"%.200s\" has no executable %s (make layouts builds the moved copies; a peer's with "
                           "PEERS_DIR=DIR after make peers)",
                     json_string_value(dir), v->driver);
            else
                VERR(c, p, "\"%.200s\" has no executable %s (build it there: make build/bin/%s)",
                     json_string_value(dir), v->driver, v->driver);
            json_decref(v->env);
            v->env = NULL;
            return -1;
        }
    }
    return 0;
}

static unsigned long long check_variants(vctx *c, const char *path, json_t *list, hx_config *cfg) {
    char p[160], buf[96];
    unsigned long long set = 0;
    if (!json_is_array(list) || json_array_size(list) == 0) {
        VERR(c, path, "expected a non-empty list of variant names (see `forkscope variants`), got %s",
             json_is_array(list) ? "an empty list" : describe(list, buf, sizeof buf));
        return 0;
    }
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e) {
        snprintf(p, sizeof p, "%s[%zu]", path, i);
        hx_variant var;
        memset(&var, 0, sizeof var);
        char err[256];
        if (json_is_object(e)) {
            if (variant_object(c, p, e, &var))
                continue;
        } else if (!json_is_string(e)) {
            VERR(c, p, "expected a variant name (a string, see `forkscope variants`) or {\"name\": ..., "
                       "\"variant\": ..., \"drivers\": DIR}, got %s",
                 describe(e, buf, sizeof buf));
            continue;
        } else if (hx_config_left_out(cfg, json_string_value(e))) {
            continue; /* a peer of "peers" that is not built: left out here too (the plan names it) */
        } else if (hx_variant_parse(json_string_value(e), &var, err, sizeof err)) {
            size_t named = 0; /* a benchmark's list may name an entry of the top-level list */
            while (named < cfg->nvariants && strcmp(cfg->variants[named].name, json_string_value(e)))
                named++;
            if (named == cfg->nvariants) {
                VERR(c, p, "%s", err);
                continue;
            }
            var = cfg->variants[named];
        }
        size_t k = 0;
        while (k < cfg->nvariants && strcmp(cfg->variants[k].name, var.name))
            k++;
        if (k < cfg->nvariants && (set >> k & 1)) {
            VERR(c, p, "duplicate variant \"%s\" (expected each variant once)", var.name);
            continue;
        }
        if (k == cfg->nvariants) {
            hx_variant *nv = k < 64 ? realloc(cfg->variants, (k + 1) * sizeof *nv) : NULL;
            if (!nv) {
                json_decref(var.spec);
                json_decref(var.env);
                continue;
            }
            cfg->variants = nv;
            nv[cfg->nvariants++] = var;
        } else {
            if (var.spec != cfg->variants[k].spec) /* the same name again: the first entry's are kept */
                json_decref(var.spec);
            if (var.env != cfg->variants[k].env)
                json_decref(var.env);
        }
        set |= 1ULL << k;
    }
    return set;
}

/* ---- the top-level keys, one rule each ----------------------------------------------------------
 * validate() applies the rules in table order, which matters twice: oversubscribe before
 * workers (it decides how "cores" expands), benchmarks before variants (the top-level list
 * is given to every benchmark, whose own list may then replace it). */

typedef struct key_rule key_rule;
struct key_rule {
    const char *key;
    void (*check)(vctx *c, const key_rule *r, json_t *v, hx_config *cfg);
    const char *missing; /* the message if the key is required and missing; NULL: optional */
    size_t off;          /* for check_bool: the int of hx_config it sets */
};

static void check_name(vctx *c, const key_rule *r, json_t *v, hx_config *cfg) {
    char buf[96];
    if (!json_is_string(v))
        VERR(c, r->key, "expected a string of letters, digits, '_', '.', '-', got %s", describe(v, buf, sizeof buf));
    else if (!valid_name(json_string_value(v)) || strlen(json_string_value(v)) >= sizeof cfg->name)
        VERR(c, r->key, "\"%.60s\" is not a valid experiment name (expected 1 to %zu letters, digits, '_', '.', '-')",
             json_string_value(v), sizeof cfg->name - 1);
    else
        snprintf(cfg->name, sizeof cfg->name, "%s", json_string_value(v));
}

static void check_string(vctx *c, const key_rule *r, json_t *v, hx_config *cfg) {
    char buf[96];
    (void)cfg;
    if (!json_is_string(v))
        VERR(c, r->key, "expected a string, got %s", describe(v, buf, sizeof buf));
}

static void check_bool(vctx *c, const key_rule *r, json_t *v, hx_config *cfg) {
    char buf[96];
    if (!json_is_boolean(v))
        VERR(c, r->key, "expected true or false, got %s", describe(v, buf, sizeof buf));
    else
        *(int *)(void *)((char *)cfg + r->off) = json_is_true(v); /* an int member: aligned */
}

static void check_reps(vctx *c, const key_rule *r, json_t *v, hx_config *cfg) {
    check_per_class(c, r->key, v, 1, cfg->reps);
}

static void check_warmup(vctx *c, const key_rule *r, json_t *v, hx_config *cfg) {
    check_per_class(c, r->key, v, 0, cfg->warmup);
}

/* "process_reps": the driver's --reps, timed repetitions inside each process (the spread
 * modes.h's between-process test weighs the processes against). */
static void check_process_reps(vctx *c, const key_rule *r, json_t *v, hx_config *cfg) {
    check_per_class(c, r->key, v, 1, cfg->preps);
}

static void check_time_limit(vctx *c, const key_rule *r, json_t *v, hx_config *cfg) {
    char buf[96];
    if (!json_is_number(v))
        VERR(c, r->key, "expected a number of seconds > 0, got %s", describe(v, buf, sizeof buf));
    else if (!(json_number_value(v) > 0) || json_number_value(v) > 1e7)
        VERR(c, r->key, "%g is not a valid limit (expected a number of seconds > 0 and <= 1e7)", json_number_value(v));
    else
        cfg->time_limit_s = json_number_value(v);
}

static void check_memory_limit(vctx *c, const key_rule *r, json_t *v, hx_config *cfg) {
    long long x;
    if (get_int(c, r->key, v, 1, 1LL << 30, &x))
        cfg->memory_limit_mib = (unsigned long long)x;
}

static void check_order(vctx *c, const key_rule *r, json_t *v, hx_config *cfg) {
    static const char *const orders[] = {[HX_ORDER_GROUPED] = "grouped", [HX_ORDER_INTERLEAVED] = "interleaved",
                                         [HX_ORDER_SHUFFLED] = "shuffled", [HX_ORDER_PAIRED] = "paired"};
    const char *s = json_is_string(v) ? json_string_value(v) : "";
    for (int k = 0; k < 4; k++)
        if (!strcmp(s, orders[k])) {
            cfg->order = (hx_order)k;
            return;
        }
    char buf[96];
    VERR(c, r->key, "expected \"grouped\", \"interleaved\", \"shuffled\" or \"paired\", got %s",
         describe(v, buf, sizeof buf));
}

static void check_seed(vctx *c, const key_rule *r, json_t *v, hx_config *cfg) {
    long long x;
    if (get_int(c, r->key, v, 0, 9007199254740991LL, &x))
        cfg->seed = (unsigned long long)x;
}

/* The kernel whose instructions per call a config's "instructions" counts (BENCH_ICOUNT), or "". */
static const char *icount_kernel_name(void) {
    for (size_t i = 0; bench_descs[i]; i++)
        if (bench_descs[i]->flags & BENCH_ICOUNT)
            return bench_descs[i]->name;
    return "";
}

static void check_instructions(vctx *c, const key_rule *r, json_t *v, hx_config *cfg) {
    static const char *const ikeys[] = {"kernel", "n", NULL};
    char buf[96];
    if (!json_is_object(v)) {
        VERR(c, r->key, "expected {\"kernel\": \"%s\", \"n\": [N1, N2]}, got %s", icount_kernel_name(),
             describe(v, buf, sizeof buf));
        return;
    }
    check_keys(c, "instructions", v, ikeys, "\"instructions\"");
    json_t *k = json_object_get(v, "kernel"), *n = json_object_get(v, "n");
    const hx_kernel_info *ki = hx_kernels_find(icount_kernel_name());
    if (!ki)
        VERR(c, "instructions.kernel", "no kernel's instructions per call are defined in this build");
    else if (!k || !json_is_string(k) || strcmp(json_string_value(k), ki->name))
        VERR(c, "instructions.kernel", "expected \"%s\" (instructions per call are defined for %s: "
             "its call count is known), got %s", ki->name, ki->name, k ? describe(k, buf, sizeof buf) : "nothing");
    else
        snprintf(cfg->icount_kernel, sizeof cfg->icount_kernel, "%s", ki->name);
    long long a, b;
    if (!n || !json_is_array(n) || json_array_size(n) != 2)
        VERR(c, "instructions.n", "expected two sizes [N1, N2], N1 < N2 (e.g. [22, 27]), got %s",
             n ? describe(n, buf, sizeof buf) : "nothing");
    else if (get_int(c, "instructions.n[0]", json_array_get(n, 0), 2, 32, &a) &&
             get_int(c, "instructions.n[1]", json_array_get(n, 1), 3, 32, &b)) {
        if (a >= b)
            VERR(c, "instructions.n", "expected N1 < N2, got [%lld, %lld]", a, b);
        else
            cfg->icount_n[0] = (int)a, cfg->icount_n[1] = (int)b;
    }
}

/* list (true, false, or a list of benchmark names, at key `path`): sets the int at offset `field`
 * of every benchmark it names (of all for true) to 1. */
static void mark_benchmarks(vctx *c, const char *path, json_t *list, hx_config *cfg, size_t field) {
    char buf[96], p[160];
    if (json_is_boolean(list)) {
        for (size_t i = 0; i < cfg->nbenchmarks; i++)
            *(int *)(void *)((char *)&cfg->benchmarks[i] + field) = json_is_true(list);
        return;
    }
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e) {
        snprintf(p, sizeof p, "%s[%zu]", path, i);
        const char *name = json_is_string(e) ? json_string_value(e) : NULL;
        size_t k = 0;
        while (name && k < cfg->nbenchmarks && strcmp(cfg->benchmarks[k].name, name))
            k++;
        if (!name || k == cfg->nbenchmarks)
            VERR(c, p, "expected the name of a benchmark in \"benchmarks\", got %s", describe(e, buf, sizeof buf));
        else
            *(int *)(void *)((char *)&cfg->benchmarks[k] + field) = 1;
    }
}

/* "span": true (every benchmark), a list of benchmark names, or {"benchmarks": true | [names],
 * "burden_ns": B | "calibrate", "reps": R}: measure their work and span with the span build after the runs. */
static void check_span(vctx *c, const key_rule *r, json_t *v, hx_config *cfg) {
    static const char *const skeys[] = {"benchmarks", "burden_ns", "reps", NULL};
    char buf[96];
    json_t *list = v;
    if (json_is_object(v)) {
        check_keys(c, "span", v, skeys, "\"span\"");
        list = json_object_get(v, "benchmarks");
        if (!list)
            list = json_true();
        long long x;
        json_t *bn = json_object_get(v, "burden_ns"), *rp = json_object_get(v, "reps");
        if (bn && json_is_string(bn) && !strcmp(json_string_value(bn), "calibrate"))
            cfg->span_burden_ns = -2;
        else if (bn && !json_is_integer(bn))
            VERR(c, "span.burden_ns", "expected a burden in ns (an integer) or \"calibrate\", got %s",
                 describe(bn, buf, sizeof buf));
        else if (bn && get_int(c, "span.burden_ns", bn, 0, 1000000000, &x))
            cfg->span_burden_ns = (double)x;
        if (rp && get_int(c, "span.reps", rp, 1, 100, &x))
            cfg->span_reps = (unsigned)x;
    }
    if (!json_is_boolean(list) && !json_is_array(list)) {
        VERR(c, json_is_object(v) ? "span.benchmarks" : r->key,
             "expected true, false, a list of benchmark names or {\"benchmarks\": ..., \"burden_ns\": B, "
             "\"reps\": R}, got %s", describe(list, buf, sizeof buf));
        return;
    }
    mark_benchmarks(c, json_is_object(v) ? "span.benchmarks" : "span", list, cfg, offsetof(hx_bench, span));
}

/* "breakdown": true (every benchmark), false, or a list of benchmark names: their runtime
 * variants' runs account for where their workers' time goes. */
static void check_breakdown(vctx *c, const key_rule *r, json_t *v, hx_config *cfg) {
    char buf[96];
    if (!json_is_boolean(v) && !json_is_array(v))
        VERR(c, r->key, "expected true, false or a list of benchmark names, got %s", describe(v, buf, sizeof buf));
    else
        mark_benchmarks(c, r->key, v, cfg, offsetof(hx_bench, breakdown));
}

static void check_papi(vctx *c, const key_rule *r, json_t *v, hx_config *cfg) {
    char buf[96], p[128];
    if (!json_is_array(v)) {
        VERR(c, r->key, "expected a list of event names (strings), got %s", describe(v, buf, sizeof buf));
        return;
    }
    size_t i;
    json_t *e;
    cfg->papi_events = hx_xcalloc(json_array_size(v) + 1, sizeof *cfg->papi_events);
    json_array_foreach(v, i, e) {
        snprintf(p, sizeof p, "papi_events[%zu]", i);
        if (!json_is_string(e) || !*json_string_value(e) || strchr(json_string_value(e), ','))
            VERR(c, p, "expected an event name (a non-empty string without ','), got %s", describe(e, buf, sizeof buf));
        else
            cfg->papi_events[cfg->npapi++] = hx_xstrdup(json_string_value(e));
    }
}

static void check_benchmarks(vctx *c, const key_rule *r, json_t *v, hx_config *cfg) {
    char buf[96], p[128];
    if (!json_is_array(v) || json_array_size(v) == 0) {
        VERR(c, r->key, "expected a non-empty list of benchmark objects, got %s",
             json_is_array(v) ? "an empty list" : describe(v, buf, sizeof buf));
        return;
    }
    cfg->benchmarks = hx_xcalloc(json_array_size(v), sizeof *cfg->benchmarks);
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) {
        hx_bench *b = &cfg->benchmarks[cfg->nbenchmarks++];
        snprintf(p, sizeof p, "benchmarks[%zu]", i);
        check_benchmark(c, p, e, b);
        for (size_t k = 0; k < i && b->name[0]; k++)
            if (!strcmp(cfg->benchmarks[k].name, b->name)) {
                char q[160];
                snprintf(q, sizeof q, "%s.name", p);
                verr_at(c, json_object_get(e, "name") ? q : p, 0, q,
                        "duplicate benchmark name \"%s\" (benchmarks[%zu] has it; expected unique names)", b->name,
                        k);
                break;
            }
    }
}

static void check_top_variants(vctx *c, const key_rule *r, json_t *v, hx_config *cfg) {
    unsigned long long all = check_variants(c, r->key, v, cfg);
    for (size_t b = 0; b < cfg->nbenchmarks; b++)
        cfg->benchmarks[b].variants = all;
}

/* "peers": peers run beside the variants when their drivers are built (make peers), left out
 * otherwise (named in the plan), so that one config serves a machine with the user's
 * checkouts and one without.  Runs after "variants": every benchmark gets the built ones,
 * unless its own list replaces the top-level one. */
static void check_top_peers(vctx *c, const key_rule *r, json_t *v, hx_config *cfg) {
    char buf[96], p[128], err[256], path[PATH_MAX + 64];
    if (!json_is_array(v)) {
        VERR(c, r->key, "expected a list of peer names (e.g. [\"lace\", \"libfork-busy\"], see `forkscope "
                        "variants`), got %s",
             describe(v, buf, sizeof buf));
        return;
    }
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) {
        snprintf(p, sizeof p, "%s[%zu]", r->key, i);
        hx_variant var;
        memset(&var, 0, sizeof var);
        if (!json_is_string(e)) {
            VERR(c, p, "expected a peer name (a string), got %s", describe(e, buf, sizeof buf));
            continue;
        }
        if (hx_variant_parse(json_string_value(e), &var, err, sizeof err)) {
            VERR(c, p, "%s", err);
            continue;
        }
        if (!hx_variant_is_peer(&var)) {
            VERR(c, p, "'%s' is not a peer (\"peers\" lists other runtimes built by make peers, which are left "
                       "out when not built; put forkscope's variants and baselines in \"variants\")",
                 var.name);
            continue;
        }
        size_t k = 0;
        while (k < cfg->nvariants && strcmp(cfg->variants[k].name, var.name))
            k++;
        if (k < cfg->nvariants || hx_config_left_out(cfg, var.name)) { /* (built or not: the same on every machine) */
            VERR(c, p, "duplicate variant \"%s\" (already in \"variants\" or earlier in \"peers\")", var.name);
            continue;
        }
        if (hx_variant_driver_path(&var, path, sizeof path) || access(path, X_OK)) {
            if (cfg->nleft_out < sizeof cfg->left_out / sizeof cfg->left_out[0])
                snprintf(cfg->left_out[cfg->nleft_out++], sizeof cfg->left_out[0], "%s", var.name);
            continue;
        }
        hx_variant *nv = k < 64 ? realloc(cfg->variants, (k + 1) * sizeof *nv) : NULL;
        if (!nv) {
            VERR(c, p, "too many variants (at most 64)");
            continue;
        }
        cfg->variants = nv;
        nv[cfg->nvariants++] = var;
        for (size_t b = 0; b < cfg->nbenchmarks; b++)
            cfg->benchmarks[b].variants |= 1ULL << k;
    }
}

static void check_top_workers(vctx *c, const key_rule *r, json_t *v, hx_config *cfg) {
    char buf[96];
    if (!json_is_array(v) || json_array_size(v) == 0) {
        VERR(c, r->key, "expected a non-empty list of integers, \"cores\" or ranges, got %s",
             json_is_array(v) ? "an empty list" : describe(v, buf, sizeof buf));
        return;
    }
    size_t before = c->nerr;
    check_workers(c, v, cfg);
    if (c->nerr == before && cfg->nworkers == 0)
        VERR(c, r->key, "no worker count left (all are above the %u cores and \"oversubscribe\" is false)",
             cfg->cores);
}

static const key_rule rules[] = { /* in the order a user reads them in the unknown-key message */
    {"name", check_name, "missing (expected the experiment's name, e.g. \"quick\")", 0},
    {"description", check_string, NULL, 0},
    {"benchmarks", check_benchmarks, "missing (expected a non-empty list of benchmark objects)", 0},
    {"variants", check_top_variants, "missing (expected a non-empty list of variant names)", 0},
    {"peers", check_top_peers, NULL, 0},
    {"oversubscribe", check_bool, NULL, offsetof(hx_config, oversubscribe)},
    {"workers", check_top_workers, "missing (expected a non-empty list of worker counts)", 0},
    {"repetitions", check_reps, NULL, 0},
    {"warmup", check_warmup, NULL, 0},
    {"process_reps", check_process_reps, NULL, 0},
    {"time_limit_s", check_time_limit, NULL, 0},
    {"memory_limit_mib", check_memory_limit, NULL, 0},
    {"order", check_order, NULL, 0},
    {"seed", check_seed, NULL, 0},
    {"calibrate", check_bool, NULL, offsetof(hx_config, calibrate)},
    {"papi_events", check_papi, NULL, 0},
    {"instructions", check_instructions, NULL, 0},
    {"span", check_span, NULL, 0},
    {"breakdown", check_breakdown, NULL, 0},
};
#define NRULES (sizeof rules / sizeof rules[0])

/* A benchmark's "workers": integers (or "cores") from the top-level list, e.g. overhead
 * kernels at P = 1, 2 beside memory kernels up to 16 in one sweep. */
static void check_bench_workers(vctx *c, const char *path, json_t *list, hx_config *cfg, hx_bench *b) {
    char p[200], buf[96];
    if (!json_is_array(list) || !json_array_size(list)) {
        VERR(c, path, "expected a non-empty list of worker counts from the top-level \"workers\", got %s",
             json_is_array(list) ? "an empty list" : describe(list, buf, sizeof buf));
        return;
    }
    b->workers = hx_xcalloc(json_array_size(list), sizeof *b->workers);
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v) {
        snprintf(p, sizeof p, "%s[%zu]", path, i);
        long long x = json_is_string(v) && !strcmp(json_string_value(v), "cores") ? (long long)cfg->cores : -1;
        if (x < 0 && !(json_is_integer(v) && (x = (long long)json_integer_value(v)) >= 1)) {
            VERR(c, p, "expected a worker count (an integer, or \"cores\"), got %s", describe(v, buf, sizeof buf));
            continue;
        }
        size_t k = 0;
        while (k < cfg->nworkers && cfg->workers[k] != (unsigned)x)
            k++;
        if (k == cfg->nworkers) {
            VERR(c, p, "%lld is not among the top-level worker counts (a benchmark runs on a subset of them)", x);
            continue;
        }
        size_t at = 0; /* insert in ascending order, once */
        while (at < b->nworkers && b->workers[at] < (unsigned)x)
            at++;
        if (at < b->nworkers && b->workers[at] == (unsigned)x)
            continue;
        memmove(b->workers + at + 1, b->workers + at, (b->nworkers - at) * sizeof *b->workers);
        b->workers[at] = (unsigned)x;
        b->nworkers++;
    }
}

int hx_config_left_out(const hx_config *cfg, const char *name) {
    for (size_t i = 0; i < cfg->nleft_out; i++)
        if (!strcmp(cfg->left_out[i], name))
            return 1;
    return 0;
}

const char *hx_config_left_out_list(const hx_config *cfg, char *buf, size_t len) {
    size_t u = 0;
    buf[0] = 0;
    for (size_t i = 0; i < cfg->nleft_out && u < len; i++)
        u += (size_t)snprintf(buf + u, len - u, "%s%s", i ? ", " : "", cfg->left_out[i]);
    return buf;
}

/* Does benchmark b run at P? */
int hx_config_bench_runs_at(const hx_bench *b, unsigned P) {
    for (size_t i = 0; b->workers && i < b->nworkers; i++)
        if (b->workers[i] == P)
            return 1;
    return !b->workers;
}

static void validate(vctx *c, json_t *root, hx_config *cfg) {
    char buf[96], p[128];
    if (!json_is_object(root)) {
        VERR(c, "", "expected an object {\"name\": ..., \"benchmarks\": [...], ...}, got %s",
             describe(root, buf, sizeof buf));
        return;
    }
    const char *keys[NRULES + 1];
    for (size_t i = 0; i < NRULES; i++)
        keys[i] = rules[i].key;
    keys[NRULES] = NULL;
    check_keys(c, "", root, keys, "the configuration");

    cfg->calibrate = 1; /* the defaults of the optional keys */
    cfg->oversubscribe = 1;
    cfg->span_burden_ns = -1;
    cfg->seed = 1;
    for (int k = 0; k < HX_NCLASS; k++)
        cfg->reps[k] = 5, cfg->warmup[k] = 0, cfg->preps[k] = 1;
    for (size_t i = 0; i < NRULES; i++) {
        json_t *v = json_object_get(root, rules[i].key);
        if (v)
            rules[i].check(c, &rules[i], v, cfg);
        else if (rules[i].missing)
            verr_at(c, "", 0, rules[i].key, "%s", rules[i].missing);
    }

    /* a benchmark's own worker counts (a subset of the top-level ones) and variant list
     * (replacing the top-level one for it) */
    json_t *blist = json_object_get(root, "benchmarks");
    for (size_t b = 0; json_is_array(blist) && b < cfg->nbenchmarks; b++) {
        json_t *e = json_array_get(blist, b), *own;
        if ((own = json_object_get(e, "workers"))) {
            snprintf(p, sizeof p, "benchmarks[%zu].workers", b);
            check_bench_workers(c, p, own, cfg, &cfg->benchmarks[b]);
        }
        if ((own = json_object_get(e, "variants"))) {
            snprintf(p, sizeof p, "benchmarks[%zu].variants", b);
            cfg->benchmarks[b].variants = check_variants(c, p, own, cfg);
        }
    }
}

/* ---- loading ---------------------------------------------------------------------------------- */

/* Position of a jansson syntax error: jansson reports the end of the offending token; point
 * at its start when the message names it ("... near 'tok'"). */
static void syntax_pos(const char *text, size_t len, const json_error_t *e, int *line, int *col) {
    *line = e->line;
    *col = e->column;
    const char *near = strstr(e->text, "near '");
    if (!near || e->position <= 0)
        return;
    near += 6;
    size_t toklen = strlen(near);
    if (toklen && near[toklen - 1] == '\'')
        toklen--;
    long start = (long)e->position - (long)toklen;
    if (start >= 0 && (size_t)start + toklen <= len && !strncmp(text + start, near, toklen))
        hx_jpos_line_col(text, len, start, line, col);
}

int hx_config_load(const char *path, unsigned cores, hx_config *cfg, hx_diag *d) {
    memset(cfg, 0, sizeof *cfg);
    int rc = HX_ECONFIG;
    size_t len = 0;
    json_t *root = NULL;
    vctx c = {.file = path, .d = d};
    char *text = hx_read_file(path, &len);
    if (!text) {
        hx_config_diag_add(d, "%s: cannot read: %s", path, strerror(errno));
        return HX_EIO;
    }
    if (strlen(text) != len) {
        int line, col;
        hx_jpos_line_col(text, len, (long)strlen(text), &line, &col);
        hx_config_diag_add(d, "%s:%d:%d: (top level): the file contains a NUL byte (expected JSON text)", path, line, col);
        goto fail_parse;
    }
    json_error_t e;
    root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
    if (!root) {
        int line, col;
        syntax_pos(text, len, &e, &line, &col);
        hx_config_diag_add(d, "%s:%d:%d: JSON syntax error: %s", path, line, col, e.text);
        goto fail_parse;
    }
    c.text = text;
    c.len = len;
    hx_jpos_scan(&c.sc, text, len);
    if (c.sc.failed) {
        hx_config_diag_add(d, "%s: out of memory", path);
        rc = HX_EINTERNAL;
        goto fail_validate;
    }
    cfg->cores = cores ? cores : 1;
    validate(&c, root, cfg);
    if (c.nerr)
        goto fail_validate;
    cfg->path = strdup(path);
    cfg->text = text;
    cfg->text_len = len;
    hx_jpos_free(&c.sc);
    json_decref(root);
    return 0;

fail_validate:
    hx_jpos_free(&c.sc);
    json_decref(root);
fail_parse:
    free(text);
    hx_config_free(cfg);
    return rc;
}

void hx_config_free(hx_config *cfg) {
    for (size_t i = 0; i < cfg->nbenchmarks; i++) {
        json_decref(cfg->benchmarks[i].params);
        free(cfg->benchmarks[i].workers);
        for (size_t k = 0; k < cfg->benchmarks[i].nargs; k++)
            free(cfg->benchmarks[i].args[k]);
        free(cfg->benchmarks[i].args);
    }
    free(cfg->benchmarks);
    for (size_t i = 0; i < cfg->nvariants; i++) {
        json_decref(cfg->variants[i].spec);
        json_decref(cfg->variants[i].env);
    }
    free(cfg->variants);
    free(cfg->workers);
    free(cfg->dropped);
    for (size_t i = 0; i < cfg->npapi; i++)
        free(cfg->papi_events[i]);
    free(cfg->papi_events);
    free(cfg->path);
    free(cfg->text);
    memset(cfg, 0, sizeof *cfg);
}
