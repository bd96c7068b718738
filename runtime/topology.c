/* topology.c — worker placement, NUMA nodes and victim groups from an hwloc topology.
 * Definitions (distance, groups, weights, placement, pinning) are in topology.h. */

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>
#include <hwloc/glibc-sched.h>

#include "forkscope.h"
#include "topology.h"

struct fk__topo {
    hwloc_topology_t hw;
    char *spec;             /* as given; "" for this machine */
    fk__topo_kind kind;
    fk__topo_place place;
    int rank_weights;
    unsigned n;             /* workers */
    unsigned npus;
    int oversubscribed;
    int pin;                /* fk__topo_bind pins */
    const char *pin_reason; /* static string */

    hwloc_obj_t *pu;        /* [n] worker -> PU object; all NULL with placement none */
    unsigned *node;         /* [n] worker -> dense NUMA node index */
    unsigned nnodes;
    unsigned *node_lidx;    /* [nnodes] dense index -> hwloc NUMANode logical index (UINT_MAX: none) */

    unsigned char *dist;    /* [n * n] tree distances, 0 on the diagonal */
    unsigned maxg;          /* room for groups per worker: distances are 1..maxg */
    unsigned *ngroups;      /* [n] */
    unsigned *gdist;        /* [n * maxg] distance of worker w's group g, increasing in g */
    unsigned *gn;           /* [n * maxg] members of worker w's group g */
};

/* Writes a one-line message into err (if any) for the caller to show. */
__attribute__((format(printf, 3, 4))) static void say(char *err, size_t len, const char *fmt, ...) {
    if (!err || !len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
}

/* The spec as messages show it. */
static const char *shown(const char *spec) { return *spec ? spec : "(this machine)"; }

/* ---- loading ------------------------------------------------------------------------- */

/* hwloc builds a synthetic topology in a time that grows steeply with its size.  Measured
 * with hwloc 2.9 here (release build; the fuzz build, which loads each description three
 * times, takes about 5x): a level of 4,096 children 0.9 s, of 8,192 8 s; 16,384 PUs in any
 * shape 12-17 s ("4 4096", "4096 4"); 4,096 PUs 0.3-0.9 s, but with levels of one beneath
 * them ("1024 4 1 1 1 1 1 1 1 1") 14 s in the fuzz build.  forkscope places at most
 * FK_MAX_WORKERS workers, so a description is refused before hwloc sees it when a level's
 * count exceeds FK__SYNTH_MAX_ARITY, its PUs (the product of the counts) exceed
 * FK__SYNTH_MAX_PUS, or its objects (the sum over levels of the product of the counts down
 * to that level) exceed FK__SYNTH_MAX_OBJECTS.  The largest allowed takes under 2 s in the
 * fuzz build ("1024 1 1 1 2").  Found by fuzz/fuzz_topology.c: "33332",
 * "pack:7777core:7 pu:1", "l3:2()555555", "co?e[:7111111" and a 12 s input in CI.  A count
 * is any number outside "(attributes)" that is not part of a type's name (l3, l1i: digits
 * after a letter): that reads more counts than hwloc does, never fewer, whatever hwloc's
 * parser makes of the rest. */
#define FK__SYNTH_MAX_ARITY 1024
#define FK__SYNTH_MAX_PUS 2048
#define FK__SYNTH_MAX_OBJECTS 6144
static int synthetic_too_big(const char *spec, char *err, size_t errlen) {
    unsigned long long pus = 1, objects = 0;
    int depth = 0;
    for (const char *p = spec + 10; *p;) {
        char prev = p == spec + 10 ? ' ' : p[-1];
        if (*p == '(')
            depth++;
        else if (*p == ')' && depth)
            depth--;
        if (depth || *p < '0' || *p > '9' || (prev >= 'a' && prev <= 'z') || (prev >= 'A' && prev <= 'Z')) {
            p++;
            continue;
        }
        char *end;
        errno = 0;
        unsigned long long n = strtoull(p, &end, 0); /* as hwloc reads it: 0x.. and 0.. too */
        p = end > p ? end : p + 1;
        if (n > FK__SYNTH_MAX_ARITY || errno == ERANGE) {
            say(err, errlen, "topology \"%s\": a level of %llu objects (at most %d per level: hwloc takes minutes "
                "to build wider ones)", spec, n, FK__SYNTH_MAX_ARITY);
            return 1;
        }
        if (n)
            pus *= n;
        objects += pus;
        if (pus > FK__SYNTH_MAX_PUS) {
            say(err, errlen, "topology \"%s\": over %d PUs (forkscope places at most %d workers; hwloc takes "
                "seconds to minutes to build larger machines)", spec, FK__SYNTH_MAX_PUS, FK_MAX_WORKERS);
            return 1;
        }
        if (objects > FK__SYNTH_MAX_OBJECTS) {
            say(err, errlen, "topology \"%s\": over %d objects in all levels (hwloc takes seconds to minutes "
                "to build larger machines)", spec, FK__SYNTH_MAX_OBJECTS);
            return 1;
        }
    }
    return 0;
}

/* Points hwloc at the spec's source and loads it.  A failed hwloc_topology_set_* leaves
 * hwloc on its default source (this machine), so its result must be checked: a typo must
 * not silently give the weights of the wrong machine. */
static int load(fk__topo *t, char *err, size_t errlen) {
    const char *spec = t->spec;
    if (t->kind == FK__TOPO_XML) {
        const char *path = spec + 4;
        FILE *f = fopen(path, "r"); /* hwloc's own errors do not say "no such file" */
        if (!f) {
            say(err, errlen, "topology \"%s\": cannot read XML file \"%s\": %s", shown(spec), path, strerror(errno));
            return FK_ETOPO;
        }
        fclose(f);
        if (hwloc_topology_set_xml(t->hw, path)) {
            say(err, errlen, "topology \"%s\": hwloc cannot use \"%s\" as an XML topology: %s", shown(spec), path,
                strerror(errno));
            return FK_ETOPO;
        }
    } else if (t->kind == FK__TOPO_SYNTHETIC) {
        const char *desc = spec + 10;
        if (hwloc_topology_set_synthetic(t->hw, desc)) {
            say(err, errlen,
                "topology \"%s\": hwloc rejects the synthetic description \"%s\" "
                "(expected levels like \"pack:2 l3:4 core:7 pu:1\")",
                spec, desc);
            return FK_ETOPO;
        }
    }
    if (hwloc_topology_load(t->hw)) {
        say(err, errlen, "topology \"%s\": hwloc cannot load it: %s", shown(spec), strerror(errno));
        return FK_ETOPO;
    }
    return 0;
}

/* ---- placement ----------------------------------------------------------------------- */

/* Writes the logical indices of o's PUs into out in spread order: the children's own spread
 * orders interleaved round-robin (round r takes the r-th PU of every child that has one).
 * scratch has room for as many entries as out.  Returns the count, or -1 if out of memory. */
static long spread_fill(hwloc_obj_t o, unsigned *out, unsigned *scratch) {
    if (o->type == HWLOC_OBJ_PU) {
        out[0] = o->logical_index;
        return 1;
    }
    if (o->arity == 0)
        return 0;
    if (o->arity == 1)
        return spread_fill(o->children[0], out, scratch);
    unsigned long *len = malloc(o->arity * sizeof *len);
    if (!len)
        return -1;
    long total = 0;
    unsigned long maxlen = 0;
    for (unsigned i = 0; i < o->arity; i++) {
        long m = spread_fill(o->children[i], out + total, scratch);
        if (m < 0) {
            free(len);
            return -1;
        }
        len[i] = (unsigned long)m;
        maxlen = len[i] > maxlen ? len[i] : maxlen;
        total += m;
    }
    /* The children's lists are out[off_i, off_i + len_i); scratch is free: our children
     * have finished with it. */
    unsigned long k = 0;
    for (unsigned long r = 0; r < maxlen; r++) {
        unsigned long off = 0;
        for (unsigned i = 0; i < o->arity; i++) {
            if (r < len[i])
                scratch[k++] = out[off + r];
            off += len[i];
        }
    }
    memcpy(out, scratch, (size_t)total * sizeof *out);
    free(len);
    return total;
}

static void decide_pinning(fk__topo *t) {
    const struct hwloc_topology_support *sup = hwloc_topology_get_support(t->hw);
    t->pin = 0;
    if (t->kind == FK__TOPO_XML)
        t->pin_reason = "no: an XML topology describes some machine, not necessarily this one";
    else if (t->kind == FK__TOPO_SYNTHETIC)
        t->pin_reason = "no: a synthetic topology is not this machine";
    else if (!hwloc_topology_is_thissystem(t->hw))
        t->pin_reason = "no: hwloc says the topology is not this machine (HWLOC_XMLFILE or HWLOC_SYNTHETIC set?)";
    else if (t->place == FK__PLACE_NONE)
        t->pin_reason = "no: placement none";
    else if (t->oversubscribed)
        t->pin_reason = "no: more workers than PUs (busy workers pinned to one PU would wait for each other)";
    else if (!sup || !sup->cpubind || !sup->cpubind->set_thisthread_cpubind)
        t->pin_reason = "no: hwloc cannot bind threads on this system";
    else {
        t->pin = 1;
        t->pin_reason = "yes: each worker to its PU";
    }
}

/* Chooses the number of workers and each worker's PU. */
static int place_workers(fk__topo *t, unsigned want, char *err, size_t errlen) {
    int npus = hwloc_get_nbobjs_by_type(t->hw, HWLOC_OBJ_PU);
    if (npus <= 0) {
        say(err, errlen, "topology \"%s\": hwloc finds no PU", shown(t->spec));
        return FK_ETOPO;
    }
    t->npus = (unsigned)npus;
    t->n = want ? want : t->npus < FK_MAX_WORKERS ? t->npus : FK_MAX_WORKERS;
    t->oversubscribed = t->n > t->npus;

    unsigned *order = malloc(t->npus * sizeof *order);
    unsigned *scratch = malloc(t->npus * sizeof *scratch);
    t->pu = calloc(t->n, sizeof *t->pu);
    if (!order || !scratch || !t->pu)
        goto fail_alloc;
    if (t->place == FK__PLACE_SPREAD) {
        long m = spread_fill(hwloc_get_root_obj(t->hw), order, scratch);
        if (m < 0)
            goto fail_alloc;
        if (m != (long)t->npus) {
            say(err, errlen, "topology \"%s\": %ld PUs in the tree but %u in the PU level", shown(t->spec), m, t->npus);
            goto fail_tree;
        }
    } else {
        for (unsigned i = 0; i < t->npus; i++)
            order[i] = i;
    }
    for (unsigned k = 0; t->place != FK__PLACE_NONE && k < t->n; k++) {
        t->pu[k] = hwloc_get_obj_by_type(t->hw, HWLOC_OBJ_PU, order[k % t->npus]);
        if (!t->pu[k]) {
            say(err, errlen, "topology \"%s\": PU L#%u is missing", shown(t->spec), order[k % t->npus]);
            goto fail_tree;
        }
    }
    free(scratch);
    free(order);
    decide_pinning(t);
    return 0;

fail_tree:
    free(scratch);
    free(order);
    free(t->pu);
    t->pu = NULL;
    return FK_ETOPO;
fail_alloc:
    free(scratch);
    free(order);
    free(t->pu);
    t->pu = NULL;
    say(err, errlen, "topology \"%s\": out of memory", shown(t->spec));
    return FK_ENOMEM;
}

/* ---- NUMA nodes ---------------------------------------------------------------------- */

/* The NUMA node local to pu: the first NUMANode among the memory children of its nearest
 * ancestor that has some (through memory-side caches, which have memory children too). */
static hwloc_obj_t local_numa(hwloc_obj_t pu) {
    for (hwloc_obj_t o = pu; o; o = o->parent) {
        if (!o->memory_arity)
            continue;
        for (hwloc_obj_t m = o->memory_first_child; m; m = m->memory_first_child)
            if (m->type == HWLOC_OBJ_NUMANODE)
                return m;
    }
    return NULL;
}

static int find_nodes(fk__topo *t, char *err, size_t errlen) {
    int nn = hwloc_get_nbobjs_by_type(t->hw, HWLOC_OBJ_NUMANODE);
    unsigned nnuma = nn > 0 ? (unsigned)nn : 0;
    /* Bucket nnuma collects workers with no NUMA node (placement none, or none found). */
    unsigned *lidx = malloc(t->n * sizeof *lidx);
    unsigned *dense = calloc(nnuma + 1, sizeof *dense);
    t->node = malloc(t->n * sizeof *t->node);
    t->node_lidx = malloc((nnuma + 1) * sizeof *t->node_lidx);
    if (!lidx || !dense || !t->node || !t->node_lidx) {
        free(lidx);
        free(dense);
        free(t->node);
        free(t->node_lidx);
        t->node = t->node_lidx = NULL;
        say(err, errlen, "topology \"%s\": out of memory", shown(t->spec));
        return FK_ENOMEM;
    }
    for (unsigned k = 0; k < t->n; k++) {
        hwloc_obj_t m = t->pu[k] ? local_numa(t->pu[k]) : NULL;
        lidx[k] = m && m->logical_index < nnuma ? m->logical_index : nnuma;
        dense[lidx[k]] = 1;
    }
    /* Dense numbering, in hwloc's logical order, of the nodes that hold workers. */
    t->nnodes = 0;
    for (unsigned l = 0; l <= nnuma; l++) {
        if (!dense[l])
            continue;
        t->node_lidx[t->nnodes] = l < nnuma ? l : UINT_MAX;
        dense[l] = t->nnodes++;
    }
    for (unsigned k = 0; k < t->n; k++)
        t->node[k] = dense[lidx[k]];
    free(dense);
    free(lidx);
    return 0;
}

/* ---- distances and groups ------------------------------------------------------------ */

/* The tree distance of two workers' PUs; 1 with placement none; 0 for one PU shared (the
 * caller replaces it: see topology.h). */
static unsigned pu_distance(const fk__topo *t, unsigned i, unsigned j) {
    hwloc_obj_t a = t->pu[i], b = t->pu[j];
    if (!a)
        return 1;
    if (a == b)
        return 0;
    hwloc_obj_t anc = hwloc_get_common_ancestor_obj(t->hw, a, b);
    int da = a->depth - anc->depth, db = b->depth - anc->depth;
    return (unsigned)(da > db ? da : db);
}

static int compute_groups(fk__topo *t, char *err, size_t errlen) {
    int d = t->place == FK__PLACE_NONE ? 1 : hwloc_get_type_depth(t->hw, HWLOC_OBJ_PU);
    if (d < 1 || d > UCHAR_MAX) {
        say(err, errlen, "topology \"%s\": PUs at depth %d of the tree (expected 1..%d)", shown(t->spec), d, UCHAR_MAX);
        return FK_ETOPO;
    }
    int rc = FK_ENOMEM;
    unsigned n = t->n, maxg = (unsigned)d;
    t->maxg = maxg;
    t->dist = malloc((size_t)n * n);
    t->ngroups = calloc(n, sizeof *t->ngroups);
    t->gdist = malloc((size_t)n * maxg * sizeof *t->gdist);
    t->gn = malloc((size_t)n * maxg * sizeof *t->gn);
    unsigned *count = malloc((maxg + 1) * sizeof *count);
    if (!t->dist || !t->ngroups || !t->gdist || !t->gn || !count) {
        say(err, errlen, "topology \"%s\": out of memory", shown(t->spec));
        goto fail;
    }
    /* Workers sharing a PU (oversubscribed, hence unpinned): as far apart as their PU is from
     * the nearest other PU with a worker, or 1 if there is no other PU.  Their PU is a
     * bookkeeping fiction the OS does not follow, so it must not make them each other's
     * closest victims; measured on 2 cores with 4 workers at distance 1 (94% of weighted
     * attempts at the co-placed worker) UTS T3 ran 15-25% slower than with uniform victims. */
    unsigned *near = malloc((size_t)n * sizeof *near);
    if (!near) {
        say(err, errlen, "topology \"%s\": out of memory", shown(t->spec));
        goto fail;
    }
    for (unsigned i = 0; i < n; i++) {
        near[i] = 0;
        for (unsigned j = 0; j < n; j++) {
            unsigned r = j == i ? 0 : pu_distance(t, i, j);
            if (r && (!near[i] || r < near[i]))
                near[i] = r;
        }
        if (!near[i])
            near[i] = 1;
    }
    for (unsigned i = 0; i < n; i++) {
        t->dist[(size_t)i * n + i] = 0;
        for (unsigned j = i + 1; j < n; j++) {
            unsigned r = pu_distance(t, i, j);
            if (!r)
                r = near[i]; /* == near[j]: the same PU has the same nearest other PU */
            if (r < 1 || r > maxg) { /* cannot happen in a well-formed hwloc tree */
                free(near);
                say(err, errlen, "topology \"%s\": distance %u between workers %u and %u", shown(t->spec), r, i, j);
                rc = FK_ETOPO;
                goto fail;
            }
            t->dist[(size_t)i * n + j] = t->dist[(size_t)j * n + i] = (unsigned char)r;
        }
    }
    free(near);
    /* Groups: the distinct distances in each row, in increasing order, with their counts
     * (the diagonal's 0 is not a distance and is skipped). */
    for (unsigned i = 0; i < n; i++) {
        memset(count, 0, (maxg + 1) * sizeof *count);
        for (unsigned j = 0; j < n; j++)
            count[t->dist[(size_t)i * n + j]]++;
        unsigned g = 0;
        for (unsigned r = 1; r <= maxg; r++) {
            if (!count[r])
                continue;
            t->gdist[(size_t)i * maxg + g] = r;
            t->gn[(size_t)i * maxg + g] = count[r];
            g++;
        }
        t->ngroups[i] = g;
    }
    free(count);
    return 0;

fail:
    free(count);
    free(t->gn);
    free(t->gdist);
    free(t->ngroups);
    free(t->dist);
    t->gn = t->gdist = t->ngroups = NULL;
    t->dist = NULL;
    return rc;
}

/* ---- create / destroy ---------------------------------------------------------------- */

int fk__topo_create(fk__topo **out, const fk__topo_opts *opts, char *err, size_t errlen) {
    static const fk__topo_opts defaults = {0};
    if (!opts)
        opts = &defaults;
    const char *spec = opts->spec ? opts->spec : "";
    fk__topo_kind kind;
    if (!*spec)
        kind = FK__TOPO_MACHINE;
    else if (!strncmp(spec, "xml:", 4))
        kind = FK__TOPO_XML;
    else if (!strncmp(spec, "synthetic:", 10))
        kind = FK__TOPO_SYNTHETIC;
    else {
        say(err, errlen, "topology \"%s\": expected \"\" (this machine), \"xml:PATH\" or \"synthetic:DESC\"", shown(spec));
        return FK_EINVAL;
    }
    if (kind == FK__TOPO_SYNTHETIC && synthetic_too_big(spec, err, errlen))
        return FK_EINVAL;
    if (opts->workers > FK_MAX_WORKERS) {
        say(err, errlen, "topology \"%s\": %u workers requested, at most %d", shown(spec), opts->workers, FK_MAX_WORKERS);
        return FK_EINVAL;
    }
    if (opts->place != FK__PLACE_COMPACT && opts->place != FK__PLACE_SPREAD && opts->place != FK__PLACE_NONE) {
        say(err, errlen, "topology \"%s\": unknown placement %d", shown(spec), (int)opts->place);
        return FK_EINVAL;
    }

    int rc = FK_ENOMEM;
    fk__topo *t = calloc(1, sizeof *t);
    if (!t) {
        say(err, errlen, "topology \"%s\": out of memory", shown(spec));
        goto fail_alloc;
    }
    t->kind = kind;
    t->place = opts->place;
    t->rank_weights = opts->rank_weights != 0;
    t->spec = strdup(spec);
    if (!t->spec) {
        say(err, errlen, "topology \"%s\": out of memory", shown(spec));
        goto fail_spec;
    }
    if (hwloc_topology_init(&t->hw)) {
        rc = FK_ETOPO;
        say(err, errlen, "topology \"%s\": hwloc_topology_init failed: %s", shown(spec), strerror(errno));
        goto fail_hwloc_init;
    }
    if ((rc = load(t, err, errlen)))
        goto fail_load;
    if ((rc = place_workers(t, opts->workers, err, errlen)))
        goto fail_place;
    if ((rc = find_nodes(t, err, errlen)))
        goto fail_nodes;
    if ((rc = compute_groups(t, err, errlen)))
        goto fail_groups;
    *out = t;
    return 0;

fail_groups:
    free(t->node);
    free(t->node_lidx);
fail_nodes:
    free(t->pu);
fail_place:
fail_load:
    hwloc_topology_destroy(t->hw);
fail_hwloc_init:
    free(t->spec);
fail_spec:
    free(t);
fail_alloc:
    return rc;
}

void fk__topo_destroy(fk__topo *t) {
    if (!t)
        return;
    free(t->gn);
    free(t->gdist);
    free(t->ngroups);
    free(t->dist);
    free(t->node_lidx);
    free(t->node);
    free(t->pu);
    hwloc_topology_destroy(t->hw);
    free(t->spec);
    free(t);
}

/* ---- queries ------------------------------------------------------------------------- */

unsigned fk__topo_workers(const fk__topo *t) { return t->n; }
fk__topo_kind fk__topo_kind_of(const fk__topo *t) { return t->kind; }
fk__topo_place fk__topo_placement(const fk__topo *t) { return t->place; }
unsigned fk__topo_npus(const fk__topo *t) { return t->npus; }
int fk__topo_oversubscribed(const fk__topo *t) { return t->oversubscribed; }

int fk__topo_pu(const fk__topo *t, unsigned w) { return t->pu[w] ? (int)t->pu[w]->logical_index : -1; }
int fk__topo_pu_os(const fk__topo *t, unsigned w) { return t->pu[w] ? (int)t->pu[w]->os_index : -1; }

unsigned fk__topo_node(const fk__topo *t, unsigned w) { return t->node[w]; }
unsigned fk__topo_nnodes(const fk__topo *t) { return t->nnodes; }
const unsigned *fk__topo_nodes(const fk__topo *t) { return t ? t->node : NULL; }

unsigned fk__topo_distance(const fk__topo *t, unsigned i, unsigned j) { return t->dist[(size_t)i * t->n + j]; }

unsigned fk__topo_ngroups(const fk__topo *t, unsigned w) { return t->ngroups[w]; }

/* The r of Eq. 6 for w's group g. */
static double group_r(const fk__topo *t, unsigned w, unsigned g) {
    return t->rank_weights ? (double)(g + 1) : (double)t->gdist[(size_t)w * t->maxg + g];
}

fk__topo_group fk__topo_group_at(const fk__topo *t, unsigned w, unsigned g) {
    /* Group g's total weight is n_g * 1/(n_g r_g^2) = 1/r_g^2. */
    double total = 0;
    for (unsigned h = 0; h < t->ngroups[w]; h++) {
        double r = group_r(t, w, h);
        total += 1 / (r * r);
    }
    double r = group_r(t, w, g);
    fk__topo_group grp;
    grp.dist = t->gdist[(size_t)w * t->maxg + g];
    grp.n = t->gn[(size_t)w * t->maxg + g];
    grp.weight = 1 / (grp.n * r * r);
    grp.prob = 1 / (r * r) / total;
    return grp;
}

unsigned fk__topo_members(const fk__topo *t, unsigned w, unsigned g, unsigned *out) {
    unsigned r = t->gdist[(size_t)w * t->maxg + g], k = 0;
    const unsigned char *row = t->dist + (size_t)w * t->n;
    for (unsigned j = 0; j < t->n; j++)
        if (row[j] == r)
            out[k++] = j;
    return k;
}

int fk__topo_pins(const fk__topo *t) { return t->pin; }
const char *fk__topo_pin_reason(const fk__topo *t) { return t->pin_reason; }

int fk__topo_bind(const fk__topo *t, unsigned w) {
    if (!t || !t->pin)
        return 0;
    /* Concurrent calls are fine: binding reads the topology, it does not modify it. */
    return hwloc_set_cpubind(t->hw, t->pu[w]->cpuset, HWLOC_CPUBIND_THREAD) ? FK_ETOPO : 0;
}

int fk__topo_spare_cpus(const fk__topo *t, cpu_set_t *out) {
    CPU_ZERO(out);
    if (!t || !t->pin)
        return 0;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set)
        return -1;
    int n = -1;
    if (hwloc_get_cpubind(t->hw, set, HWLOC_CPUBIND_THREAD) == 0) {
        for (unsigned w = 0; w < t->n; w++)
            if (t->pu[w])
                hwloc_bitmap_andnot(set, set, t->pu[w]->cpuset);
        n = hwloc_bitmap_weight(set);
        if (n > 0 && hwloc_cpuset_to_glibc_sched_affinity(t->hw, set, out, sizeof *out))
            n = -1;
    }
    hwloc_bitmap_free(set);
    return n < 0 ? -1 : CPU_COUNT(out);
}

/* (the names are pool.c's table, the public fk_placement_* functions'; the two enums agree) */
_Static_assert((int)FK__PLACE_COMPACT == (int)FK_PLACE_COMPACT && (int)FK__PLACE_SPREAD == (int)FK_PLACE_SPREAD &&
                   (int)FK__PLACE_NONE == (int)FK_PLACE_NONE,
               "fk__topo_place and fk_placement have the same values");
const char *fk__topo_place_name(fk__topo_place p) { return fk_placement_name((fk_placement)p); }

int fk__topo_place_parse(const char *name, fk__topo_place *out) {
    fk_placement v;
    if (fk_placement_parse(name, &v))
        return FK_EINVAL;
    *out = (fk__topo_place)v;
    return 0;
}

/* ---- printing ------------------------------------------------------------------------ */

/* Prints a sorted list as ranges: "0-3,7,9-10". */
static void print_ranges(FILE *f, const unsigned *m, unsigned cnt) {
    for (unsigned i = 0; i < cnt;) {
        unsigned j = i;
        while (j + 1 < cnt && m[j + 1] == m[j] + 1)
            j++;
        fprintf(f, i ? ",%u" : "%u", m[i]);
        if (j > i)
            fprintf(f, "-%u", m[j]);
        i = j + 1;
    }
}

static void print_ancestor(const fk__topo *t, FILE *f, hwloc_obj_type_t type, hwloc_obj_t pu, const char *label) {
    hwloc_obj_t a = hwloc_get_ancestor_obj_by_type(t->hw, type, pu);
    if (a)
        fprintf(f, "  %s L#%u", label, a->logical_index);
    else
        fprintf(f, "  %s -", label);
}

void fk__topo_print(const fk__topo *t, FILE *f) {
    if (t->kind == FK__TOPO_MACHINE)
        fprintf(f, "topology: this machine\n");
    else if (t->kind == FK__TOPO_XML)
        fprintf(f, "topology: XML file \"%s\"\n", t->spec + 4);
    else
        fprintf(f, "topology: synthetic \"%s\"\n", t->spec + 10);

    fprintf(f, "levels:");
    int depth = hwloc_topology_get_depth(t->hw);
    for (int d = 0; d < depth; d++)
        fprintf(f, " %s:%d", hwloc_obj_type_string(hwloc_get_depth_type(t->hw, d)), hwloc_get_nbobjs_by_depth(t->hw, d));
    fprintf(f, "; NUMANode:%d\n", hwloc_get_nbobjs_by_type(t->hw, HWLOC_OBJ_NUMANODE));

    fprintf(f, "workers: %u on %u PUs, placement %s%s\n", t->n, t->npus, fk__topo_place_name(t->place),
            t->oversubscribed ? ", oversubscribed (several workers per PU)" : "");
    fprintf(f, "pinning: %s\n", t->pin_reason);
    fprintf(f, "NUMA nodes with workers: %u\n", t->nnodes);

    fprintf(f, "placement:\n");
    for (unsigned k = 0; k < t->n; k++) {
        fprintf(f, "  worker %u ->", k);
        hwloc_obj_t pu = t->pu[k];
        if (!pu) {
            fprintf(f, " unplaced");
        } else {
            fprintf(f, " PU L#%u (P#%u)", pu->logical_index, pu->os_index);
            print_ancestor(t, f, HWLOC_OBJ_CORE, pu, "core");
            print_ancestor(t, f, HWLOC_OBJ_PACKAGE, pu, "package");
        }
        unsigned l = t->node_lidx[t->node[k]];
        if (l == UINT_MAX)
            fprintf(f, "  node %u\n", t->node[k]);
        else
            fprintf(f, "  node %u (NUMANode L#%u)\n", t->node[k], l);
    }

    fprintf(f, "victim groups: r distance, n members, w = 1/(n %s^2) per member, p the group's share\n",
            t->rank_weights ? "rank" : "r");
    unsigned *m = malloc((t->n ? t->n : 1) * sizeof *m);
    for (unsigned k = 0; k < t->n; k++) {
        fprintf(f, "  worker %u:", k);
        if (!t->ngroups[k])
            fprintf(f, " none");
        for (unsigned g = 0; g < t->ngroups[k]; g++) {
            fk__topo_group grp = fk__topo_group_at(t, k, g);
            fprintf(f, "%s r=%u n=%u w=%.6g p=%.4f {", g ? " |" : "", grp.dist, grp.n, grp.weight, grp.prob);
            if (m)
                print_ranges(f, m, fk__topo_members(t, k, g, m));
            else
                fprintf(f, "out of memory");
            fprintf(f, "}");
        }
        fprintf(f, "\n");
    }
    free(m);
}
