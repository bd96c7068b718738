/* command.c — variants run by command template (see command.h). */
#include "harness/config/command.h"
#include "harness/config/kernels.h"
#include "harness/util/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


json_t *hx_command_template(const hx_variant *v, const char *kernel) {
    if (v->kind != HX_VARIANT_COMMAND || !v->spec)
        return NULL;
    return kernel ? json_object_get(json_object_get(v->spec, "command"), kernel) : json_object_get(v->spec, "calibrate");
}

/* A parameter of b as text: given, or the kernel's default. */
static int param_text(const hx_bench *b, const char *name, char *out, size_t len) {
    json_t *v = json_object_get(b->params, name);
    if (json_is_integer(v))
        return snprintf(out, len, "%lld", (long long)json_integer_value(v)), 0;
    if (json_is_number(v))
        return snprintf(out, len, "%.17g", json_number_value(v)), 0;
    if (json_is_string(v))
        return snprintf(out, len, "%s", json_string_value(v)), 0;
    const hx_kernel_info *k = hx_kernels_find(b->kernel);
    for (const hx_kopt *o = k ? k->opts : NULL; o && o->name; o++)
        if (!strcmp(o->name, name))
            return snprintf(out, len, "%s", o->def), 0;
    return -1;
}

/* One argument with {workers} and {PARAM} replaced. */
static char *expand(const char *t, const hx_bench *b, unsigned workers) {
    size_t cap = strlen(t) + 64, n = 0;
    char *out = hx_xmalloc(cap);
    for (const char *p = t; *p;) {
        const char *close = *p == '{' ? strchr(p, '}') : NULL;
        char val[128] = "", name[64];
        if (close && (size_t)(close - p - 1) < sizeof name) {
            memcpy(name, p + 1, (size_t)(close - p - 1));
            name[close - p - 1] = 0;
            if (!strcmp(name, "workers"))
                snprintf(val, sizeof val, "%u", workers);
            else if (!b || param_text(b, name, val, sizeof val))
                close = NULL; /* not a placeholder: copied as it is (config.c refuses unknown ones) */
        } else {
            close = NULL;
        }
        size_t add = close ? strlen(val) : 1;
        hx_grow(&out, &cap, n + add + 1, 1);
        if (close) {
            memcpy(out + n, val, add);
            p = close + 1;
        } else {
            out[n] = *p++;
        }
        n += add;
    }
    out[n] = 0;
    return out;
}

char **hx_command_argv(const hx_variant *v, const hx_bench *b, unsigned workers) {
    json_t *t = hx_command_template(v, b ? b->kernel : NULL);
    if (!json_is_array(t) || !json_array_size(t))
        return NULL;
    char **argv = hx_xcalloc(json_array_size(t) + 1, sizeof *argv);
    for (size_t i = 0; i < json_array_size(t); i++)
        argv[i] = expand(json_string_value(json_array_get(t, i)), b, workers);
    return argv;
}

/* ---- known answers ----------------------------------------------------------------------------
 * The kernel's own (its description's answer function: bench/options.h). */

int hx_command_checkable(const char *kernel) {
    const hx_kernel_info *k = hx_kernels_find(kernel);
    return k && k->answer;
}

const char *hx_command_checkable_list(char *buf, size_t len) {
    size_t n = 0, total = 0, seen = 0;
    for (size_t k = 0; bench_descs[k]; k++)
        total += bench_descs[k]->answer != NULL;
    buf[0] = 0;
    for (size_t k = 0; bench_descs[k] && n < len; k++) {
        if (!bench_descs[k]->answer)
            continue;
        seen++;
        int w = snprintf(buf + n, len - n, "%s%s", seen == 1 ? "" : seen == total ? " or " : ", ", bench_descs[k]->name);
        n = w > 0 && (size_t)w < len - n ? n + (size_t)w : len; /* (cut short: nothing more fits) */
    }
    return buf;
}

int hx_command_expected(const hx_bench *b, double *answer) {
    /* One answer kept: a UTS tree's may take a traversal, and every run of a cell asks. */
    static char *cached_key;
    static double cached;
    const hx_kernel_info *k = hx_kernels_find(b->kernel);
    if (!k || !k->answer)
        return -ENOTSUP;
    char *key = NULL;
    size_t keylen = 0;
    FILE *f = open_memstream(&key, &keylen);
    if (f) {
        fprintf(f, "%s", b->kernel);
        for (size_t a = 0; a < b->nargs; a++)
            fprintf(f, "%c%s", 0x1f, b->args[a]);
        fclose(f);
    }
    if (key && cached_key && !strcmp(key, cached_key)) {
        free(key);
        *answer = cached;
        return 0;
    }
    bench_vals v;
    if (hx_kernels_vals(b, &v) || k->answer(&v, answer)) {
        free(key);
        *answer = NAN;
        return 0;
    }
    if (key) {
        free(cached_key);
        cached_key = key;
        cached = *answer;
    }
    return 0;
}

/* An estimate of the size of the tree glibc's regcomp builds for the ERE at *p (up to an
 * unmatched ')' or the end): atoms count 1; "x+" copies x once more ("xx*"), "x{m,n}" copies
 * it max(m, n) times, nested repetitions multiply.  Stops counting above `cap`; a repetition
 * right after another ("a??", "a+*": undefined in POSIX, and glibc's epsilon closures grow
 * without bound on runs of them) counts as above cap. */
static double re_size(const char **p, int depth, double cap) {
    double total = 0, item = 0;
    int prev_rep = 0;
    while (**p && total + item <= cap) {
        char ch = **p;
        if (ch == ')' && depth > 0)
            break;
        (*p)++;
        int rep = ch == '+' || ch == '*' || ch == '?' || ch == '{';
        if (rep && prev_rep) /* "a??", "a+*": undefined in POSIX; glibc's closures explode */
            return cap * 2 + 1;
        prev_rep = rep;
        if (ch == '|') {
            total += item;
            item = 0;
        } else if (ch == '(') {
            total += item;
            item = depth < 200 ? re_size(p, depth + 1, cap) : cap + 1;
            if (**p == ')')
                (*p)++;
        } else if (ch == '+') {
            item *= 2;
        } else if (ch == '*' || ch == '?') {
            item += 1;
        } else if (ch == '{') {
            char *end;
            double m = (double)strtoul(*p, &end, 10), k = m;
            if (*end == ',' && end[1] != '}')
                k = (double)strtoul(end + 1, &end, 10);
            const char *close = strchr(*p, '}');
            *p = close ? close + 1 : *p + strlen(*p);
            item *= (m > k ? m : k) > 1 ? (m > k ? m : k) : 1;
        } else {
            total += item;
            item = 1;
            if (ch == '\\' && **p) {
                (*p)++;
            } else if (ch == '[') { /* a bracket expression: "]" first is literal; [:class:] inside */
                if (**p == '^')
                    (*p)++;
                if (**p == ']')
                    (*p)++;
                while (**p && **p != ']') {
                    if (**p == '[' && ((*p)[1] == ':' || (*p)[1] == '.' || (*p)[1] == '=')) {
                        const char *close = strstr(*p + 2, (char[]){(*p)[1], ']', 0});
                        *p = close ? close + 2 : *p + strlen(*p);
                    } else {
                        (*p)++;
                    }
                }
                if (**p)
                    (*p)++;
            }
        }
    }
    return total + item;
}

/* An escape that other dialects (Perl, Python, PCRE) know and POSIX ERE does not.  glibc's
 * regcomp reads "\d" (and \D, \t, \n, any other letter but the GNU extensions) as the
 * plain letter, so a regex written with it compiles, then matches nothing a user meant; the GNU
 * extensions (\w \W \s \S \b \B) work with glibc only.  Both are refused, with the
 * POSIX form.  (Inside [...] a backslash is itself: "[\d]" is a backslash or a 'd', not what
 * it was meant to be either.)  0, or -1 with the escape and what to write. */
static int foreign_escape(const char *re, char *why, size_t len) {
    static const struct {
        char c;
        int gnu; /* a GNU extension glibc understands */
        const char *fix;
    } known[] = {{'d', 0, "[0-9]"},         {'D', 0, "[^0-9]"},         {'w', 1, "[[:alnum:]_]"},
                 {'W', 1, "[^[:alnum:]_]"}, {'s', 1, "[[:space:]]"},    {'S', 1, "[^[:space:]]"},
                 {'t', 0, "a tab itself"},  {'n', 0, "a newline itself (\\n in the JSON string)"},
                 {'b', 1, "the text around the number (POSIX has no word boundary)"},
                 {'B', 1, "the text around the number (POSIX has no word boundary)"}};
    for (const char *p = re; *p; p++) {
        if (*p != '\\' || !p[1])
            continue;
        p++;
        if (!isalpha((unsigned char)*p))
            continue; /* \. \( \[ ...: an escaped special character, as ERE has it */
        const char *fix = "a bracket expression such as [0-9] or [[:alpha:]]";
        int gnu = 0;
        for (size_t i = 0; i < sizeof known / sizeof *known; i++)
            if (known[i].c == *p) {
                fix = known[i].fix;
                gnu = known[i].gnu;
            }
        if (gnu)
            snprintf(why, len, "'\\%c' is a GNU extension, not POSIX extended regex syntax: write %s", *p, fix);
        else
            snprintf(why, len, "'\\%c' is not POSIX extended regex syntax (regcomp reads it as a plain '%c'): write %s",
                     *p, *p, fix);
        return -1;
    }
    return 0;
}

int hx_command_regex_compile(regex_t *rx, const char *re, char *why, size_t len) {
    if (strlen(re) > HX_REGEX_MAX) {
        snprintf(why, len, "longer than %d characters", HX_REGEX_MAX);
        return -1;
    }
    if (foreign_escape(re, why, len))
        return -1;
    /* Repetitions of repetitions ("a++++", "((a{9}){9}){9}") make glibc's regcomp copy the
     * inner part once per count, recursively: memory without bound (found by
     * fuzz/fuzz_output.c: "took +++...[0-9.]+)" took over 2 GiB, "a??????????" over 10 s). */
    const char *p = re;
    double size = 0;
    while (*p) { /* unmatched ')' at the top: regcomp's to refuse */
        size += re_size(&p, 0, HX_REGEX_MAX_SIZE);
        if (*p)
            p++;
    }
    if (size > HX_REGEX_MAX_SIZE) {
        snprintf(why, len, "repetitions stacked (\"a+?\") or nested too deeply (an expansion over %d nodes): "
                 "glibc's regcomp would take time and memory without bound", HX_REGEX_MAX_SIZE);
        return -1;
    }
    int rc = regcomp(rx, re, REG_EXTENDED);
    if (rc) {
        regerror(rc, rx, why, len);
        return -1;
    }
    return 0;
}

/* Group 1 of the first match of regex re in text, as a number: 0 and *v, or -1. */
static int capture(const char *re, const char *text, double *v) {
    regex_t rx;
    char why[320];
    if (hx_command_regex_compile(&rx, re, why, sizeof why))
        return -1;
    regmatch_t m[2];
    int rc = -1;
    if (!regexec(&rx, text, 2, m, 0) && m[1].rm_so >= 0) {
        char buf[64];
        size_t n = (size_t)(m[1].rm_eo - m[1].rm_so);
        if (n < sizeof buf) {
            memcpy(buf, text + m[1].rm_so, n);
            buf[n] = 0;
            char *end;
            *v = strtod(buf, &end);
            rc = end != buf && !*end ? 0 : -1;
        }
    }
    regfree(&rx);
    return rc;
}

int hx_command_judge(const hx_variant *v, const hx_bench *b, const char *out, double *time_s, char *note,
                     size_t notelen) {
    const char *tre = json_string_value(json_object_get(json_object_get(v->spec, "time"), "regex"));
    const char *are = json_string_value(json_object_get(json_object_get(v->spec, "answer"), "regex"));
    *time_s = NAN;
    note[0] = 0;
    if (!b) /* a calibrate run: nothing to check; its time is the wall time */
        return 0;
    if (tre && capture(tre, out, time_s)) {
        snprintf(note, notelen, "no time in the output (regex %.100s)", tre);
        return 2;
    }
    double got, want;
    if (!are || capture(are, out, &got)) {
        snprintf(note, notelen, "no answer in the output (regex %.100s)", are ? are : "none");
        return 2;
    }
    if (hx_command_expected(b, &want) || isnan(want)) {
        snprintf(note, notelen, "no known answer for %s", b->name);
        return 2;
    }
    const hx_kernel_info *k = hx_kernels_find(b->kernel);
    double tol = k ? k->answer_rel_tol : 0;
    int ok = tol > 0 ? fabs(got - want) <= tol * fabs(want) : got == want;
    if (!ok)
        snprintf(note, notelen, "wrong answer: %.17g, expected %.17g", got, want);
    return ok ? 0 : 1;
}
