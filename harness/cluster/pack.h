/* pack.h — a plan's cells grouped into families and the families packed into shards, for
 * `forkscope slurm submit`.
 *
 * A family is what must run on one node: a benchmark at one P with all its variants (what
 * `forkscope compare` pairs), or the calibrate cells at one P.  Its estimate is the sum over
 * its cells of the estimated run time (hx_plan_estimate) times the repetitions.  Families go
 * to shards largest first, each onto the shard with the least estimated time so far (the
 * lowest index on a tie): the greedy "longest processing time first" rule, whose longest
 * shard is at most 4/3 of the best possible.  A family is never split. */
#ifndef HX_CLUSTER_PACK_H
#define HX_CLUSTER_PACK_H

#include <stddef.h>

#include "harness/run/plan.h"

typedef struct hx_family {
    char key[96];        /* "<benchmark>|<P>" or "calibrate|<P>" */
    double est;          /* estimated seconds, all its runs */
    size_t *cells, ncells; /* indices into the plan's cells */
    size_t shard;
} hx_family;

typedef struct hx_packing {
    hx_family *fam; /* largest estimate first (ties by key) */
    size_t nfam;
    size_t nshards; /* the shards asked for, cut to the number of families */
    double *load;   /* nshards estimated times */
    unsigned maxp;  /* the largest worker count of any cell */
} hx_packing;

/* Groups the cells of pl into families (estimates for `cores` cores) and packs them into
 * `shards` shards (0: 16).  *out is freed by hx_packing_free. */
void hx_pack_plan(const hx_plan *pl, unsigned cores, size_t shards, hx_packing *out);

/* The packing alone: families fam[0..nfam) (their est set, in any order) sorted largest
 * first and given shards 0..nshards-1; load[nshards] gets each shard's total. */
void hx_pack_families(hx_family *fam, size_t nfam, size_t nshards, double *load);

void hx_packing_free(hx_packing *p);

/* A SLURM time limit (--time): "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S", in seconds,
 * rounded up to whole minutes as SLURM does.  0 and *seconds, or -1 if there is no limit to
 * check against: s is none of these, "0" (no limit to SLURM), "UNLIMITED" or "INFINITE". */
int hx_pack_slurm_time(const char *s, double *seconds);

/* The fewest shards, packed as above, whose every estimate is within limit seconds: at least
 * p's own count (0 if even one family alone is longer than the limit). */
size_t hx_pack_shards_within(const hx_packing *p, double limit);

#endif
