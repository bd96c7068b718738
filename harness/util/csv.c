/* csv.c — writing and reading the results directory's CSV files (see csv.h). */
#include "harness/util/csv.h"
#include "harness/util/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* ---- CSV writing --------------------------------------------------------------------------- */

void hx_csv_str(FILE *f, const char *s) {
    if (!s)
        s = "";
    if (!strpbrk(s, ",\"\r\n") && s[0] != ' ' && (!*s || s[strlen(s) - 1] != ' ')) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void hx_csv_num(FILE *f, double v) {
    if (isfinite(v))
        fprintf(f, "%.10g", v);
}

/* ---- CSV reading ----------------------------------------------------------------------------- */


/* Splits one CSV record in place (quotes removed, doubled quotes undone).  Returns the number
 * of fields (at most max; extra ones are dropped). */
size_t hx_csv_split(char *line, char **fields, size_t max) {
    size_t n = 0;
    char *r = line, *w = line;
    for (;;) {
        char *start = w;
        if (*r == '"') {
            r++;
            for (;;) {
                if (*r == '"' && r[1] == '"') {
                    *w++ = '"';
                    r += 2;
                } else if (*r == '"') {
                    r++;
                    break;
                } else if (*r == 0) {
                    break;
                } else {
                    *w++ = *r++;
                }
            }
            while (*r && *r != ',') /* junk after a closing quote: keep it */
                *w++ = *r++;
        } else {
            while (*r && *r != ',')
                *w++ = *r++;
        }
        int more = *r == ',';
        *w++ = 0;
        if (n < max)
            fields[n++] = start;
        if (!more)
            break;
        r++;
    }
    return n;
}


int hx_csv_load(const char *path, hx_csv_table *t) {
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "r");
    if (!f)
        return -errno;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) >= 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = 0;
        t->lines = hx_xrealloc(t->lines, (t->nlines + 1) * sizeof *t->lines);
        t->lines[t->nlines++] = hx_xstrdup(line);
    }
    free(line);
    fclose(f);
    if (t->nlines)
        t->nhdr = hx_csv_split(t->lines[0], t->hdr, 64);
    return 0;
}

void hx_csv_free(hx_csv_table *t) {
    for (size_t i = 0; i < t->nlines; i++)
        free(t->lines[i]);
    free(t->lines);
}

long hx_csv_col(const hx_csv_table *t, const char *name) {
    for (size_t i = 0; i < t->nhdr; i++)
        if (!strcmp(t->hdr[i], name))
            return (long)i;
    return -1;
}

const char *hx_csv_field(char **fields, size_t nf, long col) {
    return col >= 0 && (size_t)col < nf ? fields[col] : "";
}

/* Parses a number field: empty -> NaN (ok); returns 0 if bad. */
int hx_csv_parse_num(const char *s, double *v) {
    while (*s == ' ')
        s++;
    if (!*s) {
        *v = NAN;
        return 1;
    }
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    while (*end == ' ')
        end++;
    return !*end && !errno;
}

int hx_csv_parse_long(const char *s, long *v) {
    double d;
    if (!hx_csv_parse_num(s, &d) || isnan(d) || d != floor(d) || fabs(d) > 1e15)
        return 0;
    *v = (long)d;
    return 1;
}

