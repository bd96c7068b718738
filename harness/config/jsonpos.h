/* jsonpos.h — the position of every value in a JSON text, by path ("benchmarks[2].params.n"),
 * so that a configuration error can give FILE:LINE:COLUMN as jansson gives for a syntax error. */
#ifndef HX_CONFIG_JSONPOS_H
#define HX_CONFIG_JSONPOS_H

#include <stddef.h>

typedef struct hx_jpos_entry {
    char *path;
    long koff, voff; /* byte offsets of the key (its opening quote; -1 if none) and of the value */
} hx_jpos_entry;

typedef struct hx_jpos {
    const char *s;
    size_t len, i;
    hx_jpos_entry *e;
    size_t n, cap;
    int failed; /* out of memory: the positions are incomplete */
} hx_jpos;

/* Scans text (valid JSON) into *sc; hx_jpos_free releases it. */
void hx_jpos_scan(hx_jpos *sc, const char *text, size_t len);
/* The entry of path, NULL if none. */
const hx_jpos_entry *hx_jpos_find(const hx_jpos *sc, const char *path);
void hx_jpos_free(hx_jpos *sc);
/* 1-based line and column (in characters: UTF-8 continuation bytes do not count, as in
 * jansson's messages) of byte offset off. */
void hx_jpos_line_col(const char *s, size_t len, long off, int *line, int *col);

#endif
