/* tree.h — the UTS tree: parameters, presets, the number of children of a node, and the
 * serial traversal that every build carries as its reference.
 *
 * The rules are those of the UTS 2.1 reference implementation (Olivier et al., "UTS: An
 * Unbalanced Tree Search Benchmark", LCPC 2006, and its uts.c: tree types BIN, GEO, HYBRID
 * and BALANCED, GEO shapes, the -t -b -r -a -d -q -m -f -g flags).  Where the paper is
 * silent, the reference code's behaviour is followed and said so at the function
 * concerned.  Nothing here keeps state: every function
 * may be called from any number of threads at once. */
#ifndef UTS_TREE_H
#define UTS_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "uts/rng.h"

/* -t: how the number of children is drawn. */
enum uts_type { UTS_BIN = 0, UTS_GEO = 1, UTS_HYBRID = 2, UTS_BALANCED = 3 };
/* -a: how GEO's expected branching factor changes with height. */
enum uts_shape { UTS_LINEAR = 0, UTS_EXPDEC = 1, UTS_CYCLIC = 2, UTS_FIXED = 3 };

/* A node has at most this many children, except the root of a BIN tree and (as in the
 * reference) any node of a BALANCED tree. */
#define UTS_MAX_CHILDREN 100

/* The reference's command-line parameters (flag in the comment). */
typedef struct uts_params {
    int type;     /* -t  enum uts_type */
    double b0;    /* -b  root branching factor, > 0 */
    int32_t seed; /* -r  root seed */
    int shape;    /* -a  enum uts_shape (GEO, HYBRID) */
    int gen_mx;   /* -d  depth limit (GEO, HYBRID, BALANCED), >= 0 */
    double q;     /* -q  BIN: probability that a non-root node has children, in [0, 1] */
    int m;        /* -m  BIN: number of children of such a node, >= 0 */
    double f;     /* -f  HYBRID: GEO below height f * gen_mx, BIN from there, in [0, 1] */
    int g;        /* -g  compute granularity: hashes per child derivation (>= 1); the tree does not change */
} uts_params;

/* What a traversal counts.  64-bit: the XXL trees have more than 2^32 nodes. */
typedef struct uts_result {
    uint64_t nodes;  /* every node, the root included */
    uint64_t leaves; /* nodes without children */
    uint64_t depth;  /* greatest height (the root has height 0) */
} uts_result;

/* A tree of the paper (Table I) with its exact counts from the reference implementation. */
typedef struct uts_preset {
    const char *name;
    uts_params params; /* the preset's flags on top of the defaults (g = 1) */
    uts_result expected;
} uts_preset;

/* T1, T1L, T1XXL, T3, T3L, T3XXL; ends with an entry whose name is NULL. */
extern const uts_preset uts_presets[];

/* The preset called name, or NULL. */
const uts_preset *uts_preset_find(const char *name);

/* Fills p with the reference defaults: -t 1 -b 4 -r 0 -a 0 -d 6 -q 0.234375 -m 4 -f 0.5 -g 1. */
void uts_params_default(uts_params *p);

/* 0 if p describes a tree; otherwise -1 and a message naming the bad parameter in err. */
int uts_params_check(const uts_params *p, char *err, size_t errlen);

/* A one-line description of the tree, e.g. "GEO FIXED b0=4 d=10 r=19", into buf. */
void uts_params_describe(const uts_params *p, char *buf, size_t len);

/* The number of children of the node with state s at height h (root: 0), in [0, 100]
 * (more only for a BIN root or a BALANCED node).  p must have passed uts_params_check. */
int uts_num_children(const uts_params *p, const uts_state *s, int height);

/* The root's state. */
static inline void uts_root(const uts_params *p, uts_state *out) { uts_rng_root(out, p->seed); }

/* Child i of parent, derived p->g times (the granularity is extra hashing, the same answer
 * each time: nettle's SHA-1 is an external call the compiler cannot drop). */
static inline void uts_child(const uts_params *p, uts_state *out, const uts_state *parent, int i) {
    for (int k = 0; k < p->g; k++)
        uts_rng_child(out, parent, (uint32_t)i);
}

/* The counts of a leaf, and of an inner node before its children are added. */
static inline uts_result uts_result_leaf(int height) { return (uts_result){1, 1, (uint64_t)height}; }
static inline uts_result uts_result_inner(int height) { return (uts_result){1, 0, (uint64_t)height}; }

/* Adds a child's subtree to its parent's counts. */
static inline void uts_result_add(uts_result *acc, const uts_result *child) {
    acc->nodes += child->nodes;
    acc->leaves += child->leaves;
    if (child->depth > acc->depth)
        acc->depth = child->depth;
}

static inline int uts_result_equal(const uts_result *a, const uts_result *b) {
    return a->nodes == b->nodes && a->leaves == b->leaves && a->depth == b->depth;
}

/* Counts the tree by plain recursion on the calling thread's native stack (about 100 bytes
 * a level: T3XXL, 99,049 levels deep, needs ~10 MiB).  This is the serial projection and
 * the reference the parallel traversals are checked against. */
uts_result uts_search_serial(const uts_params *p);

/* For a BALANCED tree: the exact counts in closed form (floor(b0)^k nodes at height k, for
 * k = 0..d).  Returns 0 and fills *out, or -1 if p is not BALANCED or a count overflows
 * 64 bits. */
int uts_balanced_counts(const uts_params *p, uts_result *out);

#endif
