/* pack.c — families of cells and their packing into shards (pack.h). */
#include "harness/cluster/pack.h"
#include "harness/util/util.h"

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
