/* topology.h — where a pool's workers sit in the machine, and how far apart they are.
 *
 * A topology (fk__topo) is built once per pool from hwloc: from this machine, from an hwloc
 * XML file, or from an hwloc synthetic description (so that victim weights for a 2 x 56-core
 * machine can be computed and printed on a laptop).  It places each worker on a PU, gives
 * each worker its NUMA node (the lazy scheduler keeps one thief awake per node) and, for
 * each pair of workers, a tree distance from which the victim weights of Eq. 6 of the
 * libfork paper are derived (victim.h turns them into a sampler).
 *
 * DISTANCE.  hwloc describes the machine as a tree of normal objects (Machine > Package >
 * [Die, caches, Groups] > Core > PU; NUMA nodes hang off it as memory children and are not
 * levels of it).  Every PU is at the same depth D.  The distance between workers i and j,
 * placed on PUs a != b, is the larger of the two PUs' depths below their common ancestor
 * A, i.e. r_ij = D - depth(A) (as in libfork's distance_matrix).  Two workers placed on the
 * same PU (only when workers outnumber PUs, and then nothing is pinned) are as far apart as
 * that PU is from the nearest other PU holding a worker (1 if there is none): their shared
 * PU is bookkeeping the OS does not follow, so it must not make them each other's closest
 * victims (at distance 1 they were: with 4 workers on 2 cores, 94% of the weighted draws
 * went to the co-placed worker and UTS T3 ran 15-25% slower than with uniform victims).
 *   Example, "pack:2 core:56 pu:1": Machine (depth 0) > Package (1) > Core (2) > PU (3).
 *   Two PUs of one package meet at their package: r = 3 - 1 = 2; PUs of different
 *   packages meet at the machine: r = 3.
 * Levels with a single child (a private L2 above each core, say) count in r as hwloc
 * reports them; they shift all of a machine's distances by the same amount.
 *
 * GROUPS AND WEIGHTS.  The victim groups of worker i are the distinct distances
 * r_1 < r_2 < ... from i to the other workers, each with the n_g workers at that distance.
 * Each member of group g has weight w = 1 / (n_g * r_g^2) (Eq. 6), so group g as a whole is
 * chosen with probability proportional to 1 / r_g^2 and its members equally.  With
 * rank_weights set, r_g in the weight is the group's rank g (1 for the closest group, 2 for
 * the next...) instead of its tree distance: that is what libfork's code does (its
 * numa_context weighs neighbour list i by 1 / (n_i * i^2)), and it makes the weights
 * independent of how many single-child levels hwloc reports.
 *
 * PLACEMENT.  Worker k is placed on PU order[k mod npus], where order lists the PUs:
 *   compact  in hwloc's logical order: consecutive workers share cores, caches, packages;
 *   spread   round-robin over the children of every object, recursively, so consecutive
 *            workers go to different packages (or NUMA groups), then to different caches
 *            within a package...: on "pack:2 core:4 pu:1" the order is 0 4 1 5 2 6 3 7;
 *   none     workers are not placed: no pinning, one NUMA node, and every other worker at
 *            distance 1 (so the topology-weighted victims become uniform).
 * When there are more workers than PUs the placement wraps around (several workers per PU)
 * and the topology is "oversubscribed".
 *
 * PINNING.  fk__topo_bind pins the calling thread to its worker's PU only when (1) the
 * topology is this machine (spec NULL or "", and hwloc agrees: HWLOC_XMLFILE or
 * HWLOC_SYNTHETIC in the environment make it say otherwise), (2) the placement is not
 * none, (3) the topology is not oversubscribed: two busy-stealing workers pinned to one PU
 * cannot run at once and each waits for the other's time slice, while unpinned the OS can
 * at least move them; and (4) hwloc can bind threads here.  An XML or synthetic topology
 * describes another machine: its PU numbers mean nothing here, so nothing is pinned.
 * fk__topo_pin_reason says which case applies.
 *
 * NUMA NODES.  A worker's node is the first NUMA node attached to the nearest ancestor of
 * its PU that has memory children (hwloc's notion of local memory).  Node indices are
 * dense over the nodes that hold at least one worker, numbered in hwloc's logical order:
 * 0..nnodes-1, so that every lazy-scheduler group has members.  A topology without NUMA
 * objects has one node.
 *
 * Threads: a topology is read-only once created; any thread may call any function on it
 * (fk__topo_bind included) concurrently.  It does not depend on the pool: create it before
 * the workers, destroy it after them. */
#ifndef FK_TOPOLOGY_H
#define FK_TOPOLOGY_H

#include <sched.h>
#include <stddef.h>
#include <stdio.h>

typedef struct fk__topo fk__topo;

/* Placement policies (0 is the default). */
typedef enum fk__topo_place { FK__PLACE_COMPACT = 0, FK__PLACE_SPREAD = 1, FK__PLACE_NONE = 2 } fk__topo_place;

/* Where the topology comes from (fk__topo_kind). */
typedef enum fk__topo_kind { FK__TOPO_MACHINE, FK__TOPO_XML, FK__TOPO_SYNTHETIC } fk__topo_kind;

/* What to build.  A zeroed struct means: this machine, one worker per PU, compact. */
typedef struct fk__topo_opts {
    /* NULL or "": this machine; "xml:PATH": an hwloc XML file (lstopo foo.xml);
     * "synthetic:DESC": an hwloc synthetic description, e.g. "pack:2 core:56 pu:1",
     * "pack:2 l3:4 core:7 pu:1" (caches l1..l5), "pack:2 numa:1 core:4 pu:1" (a NUMA
     * node per package).  The string is copied. */
    const char *spec;
    unsigned workers;     /* 1..FK_MAX_WORKERS; 0: one per PU (at most FK_MAX_WORKERS) */
    fk__topo_place place;
    int rank_weights;     /* 0: r in Eq. 6 is the tree distance; 1: the group's rank */
} fk__topo_opts;

/* Builds a topology.  On success returns 0 and *out owns it (fk__topo_destroy).  On
 * failure returns FK_EINVAL (unknown spec form, workers > FK_MAX_WORKERS, bad placement),
 * FK_ETOPO (hwloc rejects the synthetic description, the XML file cannot be read or
 * parsed, hwloc fails) or FK_ENOMEM, leaves *out untouched and, if err is not NULL,
 * writes a one-line message naming the spec into err (errlen bytes, NUL-terminated).
 * Never aborts. */
int fk__topo_create(fk__topo **out, const fk__topo_opts *opts, char *err, size_t errlen);
/* Frees t (NULL is fine).  No other thread may use t any more. */
void fk__topo_destroy(fk__topo *t);

unsigned fk__topo_workers(const fk__topo *t);
fk__topo_kind fk__topo_kind_of(const fk__topo *t);
fk__topo_place fk__topo_placement(const fk__topo *t);
unsigned fk__topo_npus(const fk__topo *t);
/* Whether workers outnumber PUs (then several share a PU). */
int fk__topo_oversubscribed(const fk__topo *t);

/* Worker w's PU: hwloc logical index (L#) and OS index (P#, what the kernel calls the CPU);
 * -1 with placement none. */
int fk__topo_pu(const fk__topo *t, unsigned w);
int fk__topo_pu_os(const fk__topo *t, unsigned w);

/* NUMA nodes: worker w's node in 0..nnodes-1; nodes() is the array of all workers' nodes
 * (n entries, owned by t), ready for the pool's lazy-scheduler groups.  nodes(NULL) is
 * NULL: "no topology, one group". */
unsigned fk__topo_node(const fk__topo *t, unsigned w);
unsigned fk__topo_nnodes(const fk__topo *t);
const unsigned *fk__topo_nodes(const fk__topo *t);

/* Tree distance between workers i and j (see DISTANCE): >= 1 for i != j, 0 for i == j. */
unsigned fk__topo_distance(const fk__topo *t, unsigned i, unsigned j);

/* Worker w's victim groups, closest first (g = 0..ngroups-1; 0 groups for one worker). */
typedef struct fk__topo_group {
    unsigned dist;  /* tree distance r_g of its members from w */
    unsigned n;     /* members, n_g */
    double weight;  /* per member: 1 / (n_g r^2), r = dist (or g + 1 with rank_weights) */
    double prob;    /* the group's share of a weighted draw: n_g weight / sum over groups */
} fk__topo_group;
unsigned fk__topo_ngroups(const fk__topo *t, unsigned w);
fk__topo_group fk__topo_group_at(const fk__topo *t, unsigned w, unsigned g);
/* Writes the members of w's group g into out (room for fk__topo_group_at(t, w, g).n
 * entries), in increasing order; returns how many. */
unsigned fk__topo_members(const fk__topo *t, unsigned w, unsigned g, unsigned *out);

/* Whether fk__topo_bind pins (see PINNING), and a phrase saying why or why not. */
int fk__topo_pins(const fk__topo *t);
const char *fk__topo_pin_reason(const fk__topo *t);
/* Pins the calling thread to worker w's PU if pinning applies; otherwise does nothing.
 * Returns 0, or FK_ETOPO if hwloc could not bind (errno says why).  t may be NULL (no
 * topology: nothing to do). */
int fk__topo_bind(const fk__topo *t, unsigned w);
/* For a thread beside the workers (the heartbeat): if pinning applies, the PUs of the calling
 * thread's binding that no worker is pinned to, into *out, so that it need not preempt a
 * worker while a PU is free.  Returns how many there are (0: none is free, or pinning does not
 * apply: leave the thread unbound), or -1 if hwloc could not read the binding. */
int fk__topo_spare_cpus(const fk__topo *t, cpu_set_t *out);

/* Prints the summary that `forkscope topology` shows: the source, hwloc's object count per
 * level, the placement and pinning, every worker's PU/core/package/node, and every
 * worker's victim groups (distance, size, weight per member, share, member ranges). */
void fk__topo_print(const fk__topo *t, FILE *f);

/* "compact" / "spread" / "none" and back (0, or FK_EINVAL for another name). */
const char *fk__topo_place_name(fk__topo_place p);
int fk__topo_place_parse(const char *name, fk__topo_place *out);

#endif
