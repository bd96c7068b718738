/* tree.c — UTS tree rules, presets and the serial traversal (see tree.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "uts/tree.h"

/* ---- parameters and presets ------------------------------------------------------------ */

void uts_params_default(uts_params *p) {
    *p = (uts_params){
        .type = UTS_GEO,
        .b0 = 4.0,
        .seed = 0,
        .shape = UTS_LINEAR,
        .gen_mx = 6,
        .q = 15.0 / 64.0, /* 0.234375 */
        .m = 4,
        .f = 0.5,
        .g = 1,
    };
}

/* Table I of the paper: each preset's flags on top of the reference defaults, and the
 * exact node, leaf and depth counts the UTS reference implementation prints for them. */
#define GEO_FIXED(d, r) \
    {.type = UTS_GEO, .b0 = 4.0, .seed = (r), .shape = UTS_FIXED, .gen_mx = (d), .q = 15.0 / 64.0, .m = 4, .f = 0.5, .g = 1}
#define BIN_ROOT2000(qq, mm, r) \
    {.type = UTS_BIN, .b0 = 2000.0, .seed = (r), .shape = UTS_LINEAR, .gen_mx = 6, .q = (qq), .m = (mm), .f = 0.5, .g = 1}
const uts_preset uts_presets[] = {
    {"T1", GEO_FIXED(10, 19), {4130071, 3305118, 10}},
    {"T1L", GEO_FIXED(13, 29), {102181082, 81746377, 13}},
    {"T1XXL", GEO_FIXED(15, 19), {4230646601, 3384495738, 15}},
    {"T3", BIN_ROOT2000(0.124875, 8, 42), {4112897, 3599034, 1572}},
    {"T3L", BIN_ROOT2000(0.200014, 5, 7), {111345631, 89076904, 17844}},
    {"T3XXL", BIN_ROOT2000(0.499995, 2, 316), {2793220501, 1396611250, 99049}},
    {NULL, {0}, {0}},
};
#undef GEO_FIXED
#undef BIN_ROOT2000

const uts_preset *uts_preset_find(const char *name) {
    for (const uts_preset *t = uts_presets; t->name; t++)
        if (!strcmp(t->name, name))
            return t;
    return NULL;
}

int uts_params_check(const uts_params *p, char *err, size_t errlen) {
    const char *bad = NULL;
    if (p->type < UTS_BIN || p->type > UTS_BALANCED)
        bad = "-t (tree type) must be 0 BIN, 1 GEO, 2 HYBRID or 3 BALANCED";
    else if (!(p->b0 > 0) || !isfinite(p->b0))
        bad = "-b (root branching factor) must be a real number > 0";
    else if (p->shape < UTS_LINEAR || p->shape > UTS_FIXED)
        bad = "-a (GEO shape) must be 0 LINEAR, 1 EXPDEC, 2 CYCLIC or 3 FIXED";
    else if (p->gen_mx < 0 || p->gen_mx > 100000000)
        bad = "-d (depth limit) must be in [0, 10^8]";
    else if (!(p->q >= 0 && p->q <= 1))
        bad = "-q (BIN non-leaf probability) must be in [0, 1]";
    else if (p->m < 0)
        bad = "-m (BIN children of a non-leaf) must be >= 0";
    else if (!(p->f >= 0 && p->f <= 1))
        bad = "-f (HYBRID switch fraction) must be in [0, 1]";
    else if (p->g < 1)
        bad = "-g (compute granularity) must be >= 1";
    else if (p->b0 >= 2147483648.0)
        bad = "-b (root branching factor) must be < 2^31";
    if (bad) {
        snprintf(err, errlen, "%s", bad);
        return -1;
    }
    return 0;
}

static const char *const type_names[] = {"BIN", "GEO", "HYBRID", "BALANCED"};
static const char *const shape_names[] = {"LINEAR", "EXPDEC", "CYCLIC", "FIXED"};

void uts_params_describe(const uts_params *p, char *buf, size_t len) {
    int n = 0;
    switch (p->type) {
    case UTS_BIN:
        n = snprintf(buf, len, "BIN b0=%g q=%g m=%d r=%d", p->b0, p->q, p->m, (int)p->seed);
        break;
    case UTS_GEO:
        n = snprintf(buf, len, "GEO %s b0=%g d=%d r=%d", shape_names[p->shape], p->b0, p->gen_mx, (int)p->seed);
        break;
    case UTS_HYBRID:
        n = snprintf(buf, len, "HYBRID %s b0=%g d=%d f=%g q=%g m=%d r=%d", shape_names[p->shape], p->b0, p->gen_mx,
                     p->f, p->q, p->m, (int)p->seed);
        break;
    default:
        n = snprintf(buf, len, "%s b0=%g d=%d r=%d", type_names[UTS_BALANCED], p->b0, p->gen_mx, (int)p->seed);
        break;
    }
    if (p->g > 1 && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " g=%d", p->g);
}

/* ---- number of children ------------------------------------------------------------------ */

/* BIN below the root: m children with probability q, else none. */
static int bin_children(const uts_params *p, const uts_state *s) {
    return uts_rng_uniform(s) < p->q ? p->m : 0;
}

/* GEO: a geometric number of children with mean b_h, b_h given by the shape.  The
 * expressions are the reference's, operation for operation, so that the doubles (and the
 * floor at the end) come out bit-identical: a different but equal formula (log1p, a
 * precomputed table of another form) could move a node across an integer boundary.
 *
 * The result is capped at UTS_MAX_CHILDREN here.  Values C's (int) conversion cannot hold,
 * undefined behaviour in the reference, are defined: NaN and negative values (which need
 * b_h so large that 1 - p rounds to 1, above ~10^15) give 0, large finite values the cap. */
static int geo_children(const uts_params *p, const uts_state *s, int height) {
    double b0 = p->b0, bh = b0;
    if (height > 0) {
        double h = (double)height, mx = (double)p->gen_mx;
        switch (p->shape) {
        case UTS_EXPDEC:
            bh = b0 * pow(h, -log(b0) / log(mx));
            break;
        case UTS_CYCLIC:
            /* 5 * gen_mx cannot overflow: uts_params_check keeps gen_mx <= 10^8. */
            bh = height > 5 * p->gen_mx ? 0.0 : pow(b0, sin(2.0 * 3.141592653589793 * h / mx));
            break;
        case UTS_FIXED:
            bh = height < p->gen_mx ? b0 : 0.0;
            break;
        default: /* UTS_LINEAR */
            bh = b0 * (1.0 - h / mx);
            break;
        }
    }
    double prob = 1.0 / (1.0 + bh);
    double u = uts_rng_uniform(s);
    double n = floor(log(1 - u) / log(1 - prob));
    if (!(n > 0))
        return 0;
    return n >= UTS_MAX_CHILDREN ? UTS_MAX_CHILDREN : (int)n;
}

/* The reference decides with the tree's type and the node's height only:
 *  - HYBRID applies the below-root BIN rule from height f * gen_mx on, even at the root
 *    (f = 0); the root exemption from the cap belongs to BIN trees only.
 *  - BALANCED nodes are never capped (the reference skips the cap for that type), so the
 *    closed form of uts_balanced_counts holds for every b0. */
int uts_num_children(const uts_params *p, const uts_state *s, int height) {
    int n;
    switch (p->type) {
    case UTS_BIN:
        if (height == 0)
            return (int)floor(p->b0); /* uncapped; uts_params_check keeps b0 < 2^31 */
        n = bin_children(p, s);
        break;
    case UTS_GEO:
        return geo_children(p, s, height); /* already capped */
    case UTS_HYBRID:
        if (height < p->f * p->gen_mx)
            return geo_children(p, s, height);
        n = bin_children(p, s);
        break;
    default: /* UTS_BALANCED */
        return height < p->gen_mx ? (int)floor(p->b0) : 0;
    }
    return n > UTS_MAX_CHILDREN ? UTS_MAX_CHILDREN : n;
}

/* ---- serial traversal ------------------------------------------------------------------ */

/* Counts into *acc rather than returning a struct, so that a level of recursion holds no
 * more than the child's state and a few registers. */
static void search(const uts_params *p, const uts_state *s, int height, uts_result *acc) {
    int n = uts_num_children(p, s, height);
    acc->nodes++;
    if ((uint64_t)height > acc->depth)
        acc->depth = (uint64_t)height;
    if (n == 0) {
        acc->leaves++;
        return;
    }
    for (int i = 0; i < n; i++) {
        uts_state child;
        uts_child(p, &child, s, i);
        search(p, &child, height + 1, acc);
    }
}

uts_result uts_search_serial(const uts_params *p) {
    uts_state root;
    uts_root(p, &root);
    uts_result r = {0, 0, 0};
    search(p, &root, 0, &r);
    return r;
}

int uts_balanced_counts(const uts_params *p, uts_result *out) {
    if (p->type != UTS_BALANCED)
        return -1;
    uint64_t b = (uint64_t)floor(p->b0);
    if (b == 0 || p->gen_mx == 0) { /* the root alone */
        *out = (uts_result){1, 1, 0};
        return 0;
    }
    uint64_t level = 1, nodes = 1; /* nodes at height k, nodes up to height k */
    for (int k = 1; k <= p->gen_mx; k++) {
        if (__builtin_mul_overflow(level, b, &level) || __builtin_add_overflow(nodes, level, &nodes))
            return -1;
    }
    *out = (uts_result){nodes, level, (uint64_t)p->gen_mx};
    return 0;
}
