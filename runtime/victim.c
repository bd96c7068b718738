/* victim.c — the uniform victim policy and the workers' random numbers. */
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
    uint64_t x = seed ^ (0x5851f42d4c957f2dull * (self + 1));
    for (int i = 0; i < 4; i++)
        v->rng[i] = splitmix64(&x);
    v->self = self;
    v->n = n;
}

uint64_t fk__rand_below(fk__victims *v, uint64_t bound) {
    /* Lemire's multiply-shift; the bias (< bound / 2^64) is irrelevant here. */
    return (uint64_t)(((unsigned __int128)next(v->rng) * bound) >> 64);
}

unsigned fk__victim_pick(fk__victims *v) {
    unsigned k = (unsigned)fk__rand_below(v, v->n - 1);
    return k >= v->self ? k + 1 : k;
}
