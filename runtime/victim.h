/* victim.h — whom an idle worker tries to steal from.
 *
 * The scheduler asks for one victim per steal attempt and knows nothing else about the
 * policy; a policy is an init function and a pick function over per-worker state.  The
 * uniform policy picks any other worker with equal probability.  (Topology-weighted
 * policies plug in here.) */
#ifndef FK_VICTIM_H
#define FK_VICTIM_H

#include <stdint.h>

typedef struct fk__victims {
    uint64_t rng[4]; /* xoshiro256** state */
    unsigned self;
    unsigned n;
} fk__victims;

/* Seeds the state for worker self of n; equal seeds give equal victim sequences. */
void fk__victims_init(fk__victims *v, unsigned self, unsigned n, uint64_t seed);
/* A worker index other than self (requires n > 1). */
unsigned fk__victim_pick(fk__victims *v);
/* A uniformly random integer in [0, bound). */
uint64_t fk__rand_below(fk__victims *v, uint64_t bound);

#endif
