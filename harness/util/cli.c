/* cli.c — options, numbers and usage errors for every command (cli.h). */
#include "harness/util/cli.h"
#include "harness/util/errors.h"
#include "harness/util/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void hx_strv_push(hx_strv *s, const char *x) {
    hx_grow(&s->v, &s->cap, s->n + 1, sizeof *s->v);
    s->v[s->n++] = x;
}

void hx_strv_free(hx_strv *s) {
    free(s->v);
    memset(s, 0, sizeof *s);
}

int hx_cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "forkscope%s%s: ", cmd && *cmd ? " " : "", cmd ? cmd : "");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (try forkscope%s%s --help)\n", cmd && *cmd ? " " : "", cmd ? cmd : "");
    va_end(ap);
    return HX_EUSAGE;
}

int hx_cli_long(const char *s, long lo, long hi, long *out) {
    if (isspace((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (!*s || *end || errno || x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

int hx_cli_double(const char *s, double lo, double hi, double *out) {
    if (isspace((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(x) || !(x >= lo && x <= hi))
        return -1;
    *out = x;
    return 0;
}

/* The option arg names (its name, alias, or name=value); *value set for the "=" form. */
static const hx_opt *find_opt(const hx_opt *opts, const char *arg, const char **value) {
    *value = NULL;
    for (const hx_opt *o = opts; o && o->name; o++) {
        size_t n = strlen(o->name);
        if (!strcmp(arg, o->name) || (o->alias && !strcmp(arg, o->alias)))
            return o;
        if (!strncmp(arg, o->name, n) && arg[n] == '=') {
            *value = arg + n + 1;
            return o;
        }
    }
    return NULL;
}

static int set_value(const hx_cli *c, const hx_opt *o, const char *v) {
    long l;
    double d;
    switch (o->kind) {
    case HX_OPT_FLAG: *(int *)o->dest = 1; break;
    case HX_OPT_REFUSE: break; /* (refused before a value is read) */
    case HX_OPT_STR:
        if (!*v)
            return hx_cli_usage_error(c->cmd, "option %s: empty value", o->name);
        *(const char **)o->dest = v;
        break;
    case HX_OPT_LIST: hx_strv_push(o->dest, v); break;
    case HX_OPT_LONG:
        if (hx_cli_long(v, (long)o->lo, (long)o->hi, &l))
            return o->what ? hx_cli_usage_error(c->cmd, "option %s: '%s' is not %s", o->name, v, o->what)
                           : hx_cli_usage_error(c->cmd, "option %s: '%s' is not an integer in [%.0f, %.0f]", o->name, v,
                                                o->lo, o->hi);
        *(long *)o->dest = l;
        break;
    case HX_OPT_DOUBLE:
        if (hx_cli_double(v, o->lo, o->hi, &d))
            return o->what ? hx_cli_usage_error(c->cmd, "option %s: '%s' is not %s", o->name, v, o->what)
                           : hx_cli_usage_error(c->cmd, "option %s: '%s' is not a number in [%g, %g]", o->name, v,
                                                o->lo, o->hi);
        *(double *)o->dest = d;
        break;
    }
    if (o->seen)
        *o->seen = 1;
    return 0;
}

int hx_cli_parse(hx_cli *c, int argc, char **argv) {
    c->npos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if ((!strcmp(a, "--help") || !strcmp(a, "-h")) && !(c->pass_unknown && !c->usage)) {
            if (c->usage)
                c->usage(stdout);
            return HX_CLI_HELP;
        }
        if (a[0] != '-' || !a[1]) {
            if (c->pass_unknown && c->max_pos == 0) { /* an unknown option's value */
                hx_strv_push(&c->rest, a);
                continue;
            }
            if (c->npos >= c->max_pos || c->npos >= sizeof c->pos / sizeof *c->pos) {
                if (c->max_pos == 0)
                    return hx_cli_usage_error(c->cmd, "takes no arguments ('%s')", a);
                return hx_cli_usage_error(c->cmd, "more than %zu %s given ('%s')", c->max_pos,
                                          c->pos_what ? c->pos_what : "arguments", a);
            }
            c->pos[c->npos++] = a;
            continue;
        }
        const hx_opt *o = find_opt(c->opts, a, &v);
        if (!o) {
            if (c->pass_unknown) {
                hx_strv_push(&c->rest, a);
                continue;
            }
            return hx_cli_usage_error(c->cmd, "unknown option '%s'", a);
        }
        if (o->kind == HX_OPT_REFUSE)
            return hx_cli_usage_error(c->cmd, "option %s: %s", o->name, o->what ? o->what : "not accepted here");
        if (o->kind == HX_OPT_FLAG) {
            if (v)
                return hx_cli_usage_error(c->cmd, "option %s takes no value", o->name);
        } else if (!v) {
            if (i + 1 >= argc)
                return hx_cli_usage_error(c->cmd, "option %s needs %s", a, o->what ? o->what : "a value");
            v = argv[++i];
        }
        int rc = set_value(c, o, v);
        if (rc)
            return rc;
    }
    return 0;
}

int hx_cli_one(const char *cmd, void (*usage)(FILE *), const char *what, int argc, char **argv, const char **arg) {
    hx_cli c = {.cmd = cmd, .usage = usage, .max_pos = 1, .pos_what = what};
    int rc = hx_cli_parse(&c, argc, argv);
    if (rc)
        return rc;
    if (!c.npos)
        return hx_cli_usage_error(cmd, "no %s given", what);
    *arg = c.pos[0];
    return 0;
}
