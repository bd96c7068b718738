/* victim.h — whom an idle worker tries to steal from.
 *
 * The scheduler knows nothing of the policy: at the start of a steal round it calls
 * fk__victim_round, which says how many attempts the round should make, and it asks
 * fk__victim_pick for the victim of each attempt.  Two policies:
 *
 *   uniform  any other worker, equally likely (the A/B baseline).  A round is
 *            min(n - 1, FK__VICTIM_ROUND_RANDOM) attempts.
 *   topo     Eq. 6 of the libfork paper over a topology (topology.h): a round first tries
 *            every member of the closest victim group once, in a fresh random order, then
 *            makes min(n - 1, FK__VICTIM_ROUND_RANDOM) weighted random attempts, victim j
 *            drawn with probability w_ij / sum_j w_ij, w_ij = 1 / (n_g r_g^2) for j in
 *            group g.  A draw picks the group (probability proportional to 1 / r_g^2, by
 *            binary search in cumulative 53-bit thresholds) and then a member uniformly:
 *            the same distribution as drawing members by w_ij, with a table of one entry
 *            per group instead of one per worker.
 *
 * Costs: fk__victim_pick and fk__victim_round are O(1) apart from the binary search over
 * the groups (at most the depth of the hwloc tree), never allocate and never fail.  The
 * state is per worker and touched only by its owner; each worker has its own xoshiro256**
 * generator, seeded from (seed, self), so equal seeds give equal victim sequences. */
#ifndef FK_VICTIM_H
#define FK_VICTIM_H

#include <stdint.h>

#include "forkscope/config.h" /* FK__VICTIM_ROUND_RANDOM */
#include "topology.h"

typedef enum fk__victim_policy { FK__VICTIM_UNIFORM = 0, FK__VICTIM_TOPO = 1 } fk__victim_policy;

typedef struct fk__victims {
    uint64_t rng[4]; /* xoshiro256** state */
    unsigned self;
    unsigned n;      /* workers in the pool */
    fk__victim_policy policy;
    /* Topo policy only (NULL / 0 for uniform).  One allocation holds the three arrays. */
    uint64_t *cum;     /* [ngroups] group g is drawn when x < cum[g], x uniform in [0, 2^53) */
    unsigned *end;     /* [ngroups] members[end[g-1] .. end[g]) form group g (end[-1] = 0) */
    unsigned *members; /* [n - 1] the other workers, closest group first */
    unsigned ngroups;
    unsigned nclose;   /* size of the closest group: members[0 .. nclose) */
    unsigned cursor;   /* attempts made in the current round, up to nclose */
} fk__victims;

/* Uniform policy: seeds the state for worker self of n (n >= 1).  Allocates nothing;
 * equal seeds give equal victim sequences. */
void fk__victims_init(fk__victims *v, unsigned self, unsigned n, uint64_t seed);
/* Topo policy for worker self of topo's workers, with the same seeding as
 * fk__victims_init.  Copies what it needs: topo may be destroyed afterwards.  Returns 0,
 * or FK_ENOMEM (then v is a valid uniform-policy state, and fk__victims_free is still
 * allowed). */
int fk__victims_init_topo(fk__victims *v, unsigned self, const fk__topo *topo, uint64_t seed);
/* Frees what init_topo allocated (nothing for uniform); v becomes uniform.  Idempotent. */
void fk__victims_free(fk__victims *v);

/* Starts a steal round: the next picks sweep the closest group (topo).  Returns how many
 * attempts the round should make: uniform min(n - 1, R), topo nclose + min(n - 1, R),
 * R = FK__VICTIM_ROUND_RANDOM; 0 for a pool of one worker. */
unsigned fk__victim_round(fk__victims *v);
/* The victim of the next attempt: a worker index other than self (requires n > 1).
 * Without fk__victim_round calls, topo picks are all weighted after the first nclose. */
unsigned fk__victim_pick(fk__victims *v);
/* A uniformly random integer in [0, bound) (bound >= 1). */
uint64_t fk__rand_below(fk__victims *v, uint64_t bound);

/* "uniform" / "topo" and back (0, or FK_EINVAL for another name). */
const char *fk__victim_policy_name(fk__victim_policy p);
int fk__victim_policy_parse(const char *name, fk__victim_policy *out);

#endif
