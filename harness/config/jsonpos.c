/* jsonpos.c — where each value of a JSON text is (jsonpos.h): a scanner run over text that
 * jansson has already accepted, so it need not diagnose anything itself. */
#include "harness/config/jsonpos.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- positions: a hx_jpos over valid JSON text ------------------------------------------------ */



static void skip_ws(hx_jpos *sc) {
    while (sc->i < sc->len && (sc->s[sc->i] == ' ' || sc->s[sc->i] == '\t' || sc->s[sc->i] == '\n' ||
                               sc->s[sc->i] == '\r'))
        sc->i++;
}

static void put_utf8(char *out, size_t *o, unsigned cp) {
    if (cp < 0x80)
        out[(*o)++] = (char)cp;
    else if (cp < 0x800) {
        out[(*o)++] = (char)(0xC0 | (cp >> 6));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out[(*o)++] = (char)(0xE0 | (cp >> 12));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        out[(*o)++] = (char)(0xF0 | (cp >> 18));
        out[(*o)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    }
}

static unsigned hex4(const char *p) {
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p[k];
        v = v * 16 + (unsigned)(isdigit((unsigned char)c) ? c - '0' : (tolower((unsigned char)c) - 'a' + 10));
    }
    return v;
}

/* Reads the string at sc->i (which is '"'), decoding escapes as jansson does; malloc'd. */
static char *scan_string(hx_jpos *sc) {
    size_t start = ++sc->i, o = 0;
    size_t end = start;
    while (end < sc->len && sc->s[end] != '"')
        end += sc->s[end] == '\\' ? 2 : 1;
    char *out = malloc(end - start + 1);
    if (!out) {
        sc->failed = 1;
        return NULL;
    }
    for (size_t k = start; k < end && k < sc->len; k++) {
        char c = sc->s[k];
        if (c != '\\') {
            out[o++] = c;
            continue;
        }
        c = sc->s[++k];
        switch (c) {
        case 'b': out[o++] = '\b'; break;
        case 'f': out[o++] = '\f'; break;
        case 'n': out[o++] = '\n'; break;
        case 'r': out[o++] = '\r'; break;
        case 't': out[o++] = '\t'; break;
        case 'u': {
            if (k + 4 >= sc->len)
                break;
            unsigned cp = hex4(sc->s + k + 1);
            k += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && k + 6 < sc->len && sc->s[k + 1] == '\\' && sc->s[k + 2] == 'u') {
                unsigned lo = hex4(sc->s + k + 3);
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                k += 6;
            }
            put_utf8(out, &o, cp); /* never longer than the escape it replaces */
            break;
        }
        default: out[o++] = c; break; /* \" \\ \/ */
        }
    }
    out[o] = 0;
    sc->i = end + 1;
    return out;
}

static void scan_add(hx_jpos *sc, const char *path, long koff, long voff) {
    if (sc->n == sc->cap) {
        size_t cap = sc->cap ? 2 * sc->cap : 64;
        hx_jpos_entry *p = realloc(sc->e, cap * sizeof *p);
        if (!p) {
            sc->failed = 1;
            return;
        }
        sc->e = p;
        sc->cap = cap;
    }
    char *copy = strdup(path);
    if (!copy) {
        sc->failed = 1;
        return;
    }
    sc->e[sc->n++] = (hx_jpos_entry){copy, koff, voff};
}

static void scan_value(hx_jpos *sc, const char *path, long koff, int depth) {
    skip_ws(sc);
    if (sc->i >= sc->len || depth > 200 || sc->failed)
        return;
    scan_add(sc, path, koff, (long)sc->i);
    char c = sc->s[sc->i];
    if (c == '{') {
        sc->i++;
        for (;;) {
            skip_ws(sc);
            if (sc->i >= sc->len || sc->s[sc->i] == '}') {
                sc->i++;
                return;
            }
            if (sc->s[sc->i] == ',') {
                sc->i++;
                continue;
            }
            long k = (long)sc->i;
            char *key = scan_string(sc);
            if (!key)
                return;
            skip_ws(sc);
            if (sc->i < sc->len && sc->s[sc->i] == ':')
                sc->i++;
            char *sub = NULL;
            if (asprintf(&sub, "%s%s%s", path, *path ? "." : "", key) < 0)
                sub = NULL;
            free(key);
            if (!sub) {
                sc->failed = 1;
                return;
            }
            scan_value(sc, sub, k, depth + 1);
            free(sub);
        }
    } else if (c == '[') {
        sc->i++;
        for (size_t idx = 0;; idx++) {
            skip_ws(sc);
            if (sc->i >= sc->len || sc->s[sc->i] == ']') {
                sc->i++;
                return;
            }
            if (sc->s[sc->i] == ',')
                sc->i++;
            char *sub = NULL;
            if (asprintf(&sub, "%s[%zu]", path, idx) < 0) {
                sc->failed = 1;
                return;
            }
            scan_value(sc, sub, -1, depth + 1);
            free(sub);
        }
    } else if (c == '"') {
        free(scan_string(sc));
    } else {
        while (sc->i < sc->len && !strchr(",]} \t\r\n", sc->s[sc->i]))
            sc->i++;
    }
}

/* 1-based line and column (in characters: UTF-8 continuation bytes do not count, as in
 * jansson's messages) of byte offset off. */
void hx_jpos_line_col(const char *s, size_t len, long off, int *line, int *col) {
    *line = 1;
    *col = 1;
    for (long i = 0; i < off && (size_t)i < len; i++) {
        if (s[i] == '\n') {
            ++*line;
            *col = 1;
        } else if (((unsigned char)s[i] & 0xC0) != 0x80) {
            ++*col;
        }
    }
}

void hx_jpos_scan(hx_jpos *sc, const char *text, size_t len) {
    memset(sc, 0, sizeof *sc);
    sc->s = text;
    sc->len = len;
    scan_value(sc, "", -1, 0);
}

const hx_jpos_entry *hx_jpos_find(const hx_jpos *sc, const char *path) {
    for (size_t i = 0; i < sc->n; i++)
        if (!strcmp(sc->e[i].path, path))
            return &sc->e[i];
    return NULL;
}

void hx_jpos_free(hx_jpos *sc) {
    for (size_t i = 0; i < sc->n; i++)
        free(sc->e[i].path);
    free(sc->e);
    memset(sc, 0, sizeof *sc);
}
