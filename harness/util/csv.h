/* csv.h — the CSV of the results directory (summary.csv, fits.csv, span.csv): quoting on
 * write only where needed, a tolerant reader (quotes undone, missing fields empty). */
#ifndef HX_UTIL_CSV_H
#define HX_UTIL_CSV_H

#include <stddef.h>
#include <stdio.h>

/* A field: quoted only when it must be (comma, quote, line break, edge space). */
void hx_csv_str(FILE *f, const char *s);
/* A number with 10 significant digits; nothing for NaN or infinity (an empty field). */
void hx_csv_num(FILE *f, double v);

/* Splits one record in place (quotes removed, doubled quotes undone); returns the number of
 * fields, at most max (extra ones are dropped). */
size_t hx_csv_split(char *line, char **fields, size_t max);

/* A whole file in memory: lines[0] is the header, split into hdr[0..nhdr). */
typedef struct hx_csv_table {
    char **lines;
    size_t nlines;
    char *hdr[64];
    size_t nhdr;
} hx_csv_table;
/* 0, or -errno if the file cannot be opened. */
int hx_csv_load(const char *path, hx_csv_table *t);
void hx_csv_free(hx_csv_table *t);
/* The index of a header column, -1 if absent. */
long hx_csv_col(const hx_csv_table *t, const char *name);
/* fields[col], or "" past the end or for col -1. */
const char *hx_csv_field(char **fields, size_t nf, long col);
/* A number field: empty -> NaN (accepted); 0 if malformed. */
int hx_csv_parse_num(const char *s, double *v);
/* An integral number field (|v| <= 1e15); 0 if malformed, empty or fractional. */
int hx_csv_parse_long(const char *s, long *v);

#endif
