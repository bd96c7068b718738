/* victim.c — the victim policies (uniform, topology-weighted) and the workers' random
 * numbers.  Policies and costs are described in victim.h. */
#include <stdlib.h>
#include <string.h>

#include "forkscope.h"
#include "victim.h"

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* xoshiro256** (Blackman & Vigna). */
static uint64_t next(uint64_t s[4]) {
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void fk__victims_init(fk__victims *v, unsigned self, unsigned n, uint64_t seed) {
    memset(v, 0, sizeof *v);
    uint64_t x = seed ^ (0x5851f42d4c957f2dull * (self + 1));
    for (int i = 0; i < 4; i++)
        v->rng[i] = splitmix64(&x);
    v->self = self;
    v->n = n;
    v->policy = FK__VICTIM_UNIFORM;
}

/* 2^53: draws compare 53 random bits with the thresholds, so that the thresholds are
 * exact conversions of doubles in [0, 1]. */
#define SCALE ((uint64_t)1 << 53)

int fk__victims_init_topo(fk__victims *v, unsigned self, const fk__topo *topo, uint64_t seed) {
    unsigned n = fk__topo_workers(topo);
    fk__victims_init(v, self, n, seed);
    unsigned ng = fk__topo_ngroups(topo, self);
    if (n < 2 || ng == 0) { /* nobody to steal from: a topo state with empty tables */
        v->policy = FK__VICTIM_TOPO;
        return 0;
    }
    /* cum first: the block is malloc-aligned, so the uint64_t array is aligned. */
    void *block = malloc(ng * sizeof *v->cum + ng * sizeof *v->end + (n - 1) * sizeof *v->members);
    if (!block)
        return FK_ENOMEM;
    uint64_t *cum = block;
    unsigned *end = (unsigned *)(cum + ng);
    unsigned *members = end + ng;

    double total = 0;
    for (unsigned g = 0; g < ng; g++) {
        fk__topo_group grp = fk__topo_group_at(topo, self, g);
        total += grp.prob;
    }
    double acc = 0;
    unsigned filled = 0;
    for (unsigned g = 0; g < ng; g++) {
        fk__topo_group grp = fk__topo_group_at(topo, self, g);
        acc += grp.prob;
        /* The last threshold is exactly 2^53 so that every x in [0, 2^53) finds a group,
         * whatever the rounding of the sum. */
        cum[g] = g + 1 == ng ? SCALE : (uint64_t)(acc / total * (double)SCALE);
        filled += fk__topo_members(topo, self, g, members + filled);
        end[g] = filled;
    }
    v->policy = FK__VICTIM_TOPO;
    v->cum = cum;
    v->end = end;
    v->members = members;
    v->ngroups = ng;
    v->nclose = end[0];
    v->cursor = 0;
    return 0;
}

void fk__victims_free(fk__victims *v) {
    free(v->cum); /* the start of the block */
    v->cum = NULL;
    v->end = v->members = NULL;
    v->ngroups = v->nclose = v->cursor = 0;
    v->policy = FK__VICTIM_UNIFORM;
}

uint64_t fk__rand_below(fk__victims *v, uint64_t bound) {
    /* Lemire's multiply-shift; the bias (< bound / 2^64) is irrelevant here. */
    return (uint64_t)(((unsigned __int128)next(v->rng) * bound) >> 64);
}

unsigned fk__victim_round(fk__victims *v) {
    unsigned others = v->n ? v->n - 1 : 0;
    unsigned random = others < FK__VICTIM_ROUND_RANDOM ? others : FK__VICTIM_ROUND_RANDOM;
    if (v->policy == FK__VICTIM_UNIFORM)
        return random;
    v->cursor = 0;
    return v->nclose + (v->members ? random : 0);
}

/* A weighted draw: the group by its share, then a member uniformly. */
static unsigned weighted(fk__victims *v) {
    uint64_t x = next(v->rng) >> 11; /* uniform in [0, 2^53) */
    unsigned lo = 0, hi = v->ngroups - 1; /* the first g with x < cum[g]; cum[last] = 2^53 */
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (x < v->cum[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    unsigned start = lo ? v->end[lo - 1] : 0;
    return v->members[start + (unsigned)fk__rand_below(v, v->end[lo] - start)];
}

unsigned fk__victim_pick(fk__victims *v) {
    if (v->policy == FK__VICTIM_TOPO) {
        if (v->cursor < v->nclose) {
            /* One step of Fisher-Yates: members[i] becomes a uniform choice among the
             * closest-group members not yet tried this round, whatever order the last
             * round left them in.  So each round sweeps the group in a fresh order. */
            unsigned i = v->cursor++;
            unsigned j = i + (unsigned)fk__rand_below(v, v->nclose - i);
            unsigned m = v->members[j];
            v->members[j] = v->members[i];
            v->members[i] = m;
            return m;
        }
        return weighted(v);
    }
    unsigned k = (unsigned)fk__rand_below(v, v->n - 1);
    return k >= v->self ? k + 1 : k;
}

const char *fk__victim_policy_name(fk__victim_policy p) { return p == FK__VICTIM_TOPO ? "topo" : "uniform"; }

int fk__victim_policy_parse(const char *name, fk__victim_policy *out) {
    if (!strcmp(name, "uniform"))
        *out = FK__VICTIM_UNIFORM;
    else if (!strcmp(name, "topo"))
        *out = FK__VICTIM_TOPO;
    else
        return FK_EINVAL;
    return 0;
}
