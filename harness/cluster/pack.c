/* pack.c — families of cells and their packing into shards (pack.h). */
#include "harness/cluster/pack.h"
#include "harness/util/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_family(const void *a, const void *b) {
    const hx_family *x = a, *y = b;
    return x->est < y->est ? 1 : x->est > y->est ? -1 : strcmp(x->key, y->key);
}

void hx_pack_families(hx_family *fam, size_t nfam, size_t nshards, double *load) {
    qsort(fam, nfam, sizeof *fam, cmp_family);
    for (size_t k = 0; k < nshards; k++)
        load[k] = 0;
    for (size_t f = 0; f < nfam && nshards; f++) {
        size_t best = 0;
        for (size_t k = 1; k < nshards; k++)
            best = load[k] < load[best] ? k : best;
        fam[f].shard = best;
        load[best] += fam[f].est;
    }
}

void hx_pack_plan(const hx_plan *pl, unsigned cores, size_t shards, hx_packing *out) {
    memset(out, 0, sizeof *out);
    out->fam = hx_xcalloc(pl->ncells ? pl->ncells : 1, sizeof *out->fam);
    out->maxp = 1;
    for (size_t i = 0; i < pl->ncells; i++) {
        const hx_plan_cell *c = &pl->cells[i];
        out->maxp = c->workers > out->maxp ? c->workers : out->maxp;
        char key[96];
        snprintf(key, sizeof key, "%s|%u", c->bench ? c->bench->name : "calibrate", c->workers);
        size_t f = 0;
        while (f < out->nfam && strcmp(out->fam[f].key, key))
            f++;
        if (f == out->nfam) {
            snprintf(out->fam[f].key, sizeof out->fam[f].key, "%s", key);
            out->fam[f].cells = hx_xcalloc(pl->ncells, sizeof *out->fam[f].cells);
            out->nfam++;
        }
        out->fam[f].cells[out->fam[f].ncells++] = i;
        out->fam[f].est += hx_plan_estimate(c, cores) * c->reps;
    }
    out->nshards = shards ? shards : 16;
    if (out->nshards > out->nfam)
        out->nshards = out->nfam;
    out->load = hx_xcalloc(out->nshards ? out->nshards : 1, sizeof *out->load);
    hx_pack_families(out->fam, out->nfam, out->nshards, out->load);
}

void hx_packing_free(hx_packing *p) {
    for (size_t f = 0; f < p->nfam; f++)
        free(p->fam[f].cells);
    free(p->fam);
    free(p->load);
    memset(p, 0, sizeof *p);
}

int hx_pack_slurm_time(const char *s, double *seconds) {
    long v[4] = {0, 0, 0, 0};
    int n = 0, days = 0;
    const char *p = s;
    const char *dash = strchr(s, '-');
    if (dash) { /* D-H[:M[:S]] */
        char *end;
        errno = 0;
        long d = strtol(s, &end, 10);
        if (end != dash || d < 0 || d > 100000 || errno || !isdigit((unsigned char)*s))
            return -1;
        days = (int)d;
        p = dash + 1;
    }
    for (;;) {
        if (!isdigit((unsigned char)*p))
            return -1;
        char *end;
        errno = 0;
        v[n++] = strtol(p, &end, 10);
        if (errno || v[n - 1] > 100000000)
            return -1;
        if (*end == 0)
            break;
        if (*end != ':' || n == 3)
            return -1;
        p = end + 1;
    }
    double secs;
    if (dash) /* D-H, D-H:M, D-H:M:S */
        secs = days * 86400.0 + v[0] * 3600.0 + (n > 1 ? v[1] * 60.0 : 0) + (n > 2 ? (double)v[2] : 0);
    else if (n == 1) /* M */
        secs = v[0] * 60.0;
    else if (n == 2) /* M:S */
        secs = v[0] * 60.0 + (double)v[1];
    else /* H:M:S */
        secs = v[0] * 3600.0 + v[1] * 60.0 + (double)v[2];
    if (secs <= 0) /* 0: no limit */
        return -1;
    *seconds = ceil(secs / 60) * 60; /* SLURM rounds a limit up to whole minutes */
    return 0;
}

size_t hx_pack_shards_within(const hx_packing *p, double limit) {
    if (!p->nfam || p->fam[0].est > limit) /* fam[0] is the largest */
        return 0;
    hx_family *fam = hx_xcalloc(p->nfam, sizeof *fam);
    double *load = hx_xcalloc(p->nfam, sizeof *load);
    memcpy(fam, p->fam, p->nfam * sizeof *fam);
    size_t k = p->nshards ? p->nshards : 1;
    for (; k < p->nfam; k++) {
        hx_pack_families(fam, p->nfam, k, load);
        double worst = 0;
        for (size_t i = 0; i < k; i++)
            worst = load[i] > worst ? load[i] : worst;
        if (worst <= limit)
            break;
    }
    free(fam);
    free(load);
    return k; /* (at nfam shards each family is alone, and every one fits) */
}
