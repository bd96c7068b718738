/* uts.c — the UTS kernel (bench_uts): count the nodes, leaves and depth of an implicit
 * random tree (tree.h), in the form this driver runs.
 *
 * Per node: draw the number of children n; a node without children is a leaf; otherwise
 * fork children 0..n-2, call child n-1, join, and sum the children's counts (nodes,
 * leaves; depth is the maximum).  The children's results go to an array of n entries,
 * from the heap (alloc=heap) or, in runtime builds with alloc=stack, from the runtime's
 * frame stack with FK_ALLOC/FK_FREE (the paper's '*' variant).  The serial projection is
 * the plain recursion of tree.c.
 *
 * The answer is checked against the paper's exact counts (presets), the closed form
 * (BALANCED trees) or a serial traversal of the same tree (everything else, up to 200
 * million nodes). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench.h"
#include "uts/rng.h"
#include "uts/tree.h"

/* ---- what the harness knows of uts (bench/options.h) ------------------------------------- */
enum { UTS_OPT_T, UTS_OPT_B, UTS_OPT_R, UTS_OPT_A, UTS_OPT_D, UTS_OPT_Q, UTS_OPT_M, UTS_OPT_F, UTS_OPT_G, UTS_OPT_PRESET,
       UTS_OPT_ALLOC };
static const bench_opt uts_opts[] = {
    [UTS_OPT_T] = {"t", BENCH_INT, "1", 0, 3, 0, NULL, "tree type: 0 BIN, 1 GEO, 2 HYBRID, 3 BALANCED"},
    [UTS_OPT_B] = {"b", BENCH_DOUBLE, "4.0", 0, 2147483647.0, 0, NULL, "root branching factor b0 (> 0)"},
    [UTS_OPT_R] = {"r", BENCH_INT, "0", -2147483648.0, 2147483647.0, 0, NULL, "root seed"},
    [UTS_OPT_A] = {"a", BENCH_INT, "0", 0, 3, 0, NULL, "GEO shape: 0 LINEAR, 1 EXPDEC, 2 CYCLIC, 3 FIXED"},
    [UTS_OPT_D] = {"d", BENCH_INT, "6", 0, 100000000, 0, NULL, "GEO/BALANCED depth limit gen_mx"},
    [UTS_OPT_Q] = {"q", BENCH_DOUBLE, "0.234375", 0, 1, 0, NULL, "BIN: probability that a non-root node has children"},
    [UTS_OPT_M] = {"m", BENCH_INT, "4", 0, 1000000, 0, NULL, "BIN: children of such a node (capped at 100)"},
    [UTS_OPT_F] = {"f", BENCH_DOUBLE, "0.5", 0, 1, 0, NULL, "HYBRID: fraction of gen_mx where GEO switches to BIN"},
    [UTS_OPT_G] = {"g", BENCH_INT, "1", 1, 1000000, 0, NULL, "compute granularity: SHA-1 hashes per child (same tree)"},
    [UTS_OPT_PRESET] = {"preset", BENCH_CHOICE, "none", 0, 0, 0, "none|T1|T1L|T1XXL|T3|T3L|T3XXL",
                        "a tree of the paper; overrides -t -b -r -a -d -q -m -f (not -g)"},
    [UTS_OPT_ALLOC] = {"alloc", BENCH_CHOICE, "heap", 0, 0, 0, "heap|stack",
                       "children's result array: malloc, or FK_ALLOC on the frame stack (runtime builds)"},
    {0},
};

int uts_params_of(bench_vals *c, uts_params *out, const uts_preset **found, char *err, size_t errlen) {
    const char *pname = c->s[UTS_OPT_PRESET];
    const uts_preset *pr = strcmp(pname, "none") ? uts_preset_find(pname) : NULL;
    *found = pr;
    if (strcmp(pname, "none") && !pr) { /* the option's choices and uts_presets disagree */
        snprintf(err, errlen, "option --preset: no preset named '%s'", pname);
        return -1;
    }
    if (pr) {
        *out = pr->params;
        out->g = (int)c->i[UTS_OPT_G]; /* granularity is not part of a tree */
        /* the options now say which tree runs: the driver records them as its params */
        c->i[UTS_OPT_T] = out->type;
        c->d[UTS_OPT_B] = out->b0;
        c->i[UTS_OPT_R] = out->seed;
        c->i[UTS_OPT_A] = out->shape;
        c->i[UTS_OPT_D] = out->gen_mx;
        c->d[UTS_OPT_Q] = out->q;
        c->i[UTS_OPT_M] = out->m;
        c->d[UTS_OPT_F] = out->f;
    } else {
        *out = (uts_params){
            .type = (int)c->i[UTS_OPT_T],
            .b0 = c->d[UTS_OPT_B],
            .seed = (int32_t)c->i[UTS_OPT_R],
            .shape = (int)c->i[UTS_OPT_A],
            .gen_mx = (int)c->i[UTS_OPT_D],
            .q = c->d[UTS_OPT_Q],
            .m = (int)c->i[UTS_OPT_M],
            .f = c->d[UTS_OPT_F],
            .g = (int)c->i[UTS_OPT_G],
        };
    }
    return uts_params_check(out, err, errlen);
}

/* The counts the tree must have: the preset's, the closed form's (BALANCED trees) or, with
 * `search`, a serial traversal's; returns which, or NULL (no search asked for). */
static const char *uts_expected(const uts_params *p, const uts_preset *pr, int search, uts_result *want) {
    if (pr) {
        *want = pr->expected;
        return "preset";
    }
    if (uts_balanced_counts(p, want) == 0)
        return "closed form";
    if (!search)
        return NULL;
    *want = uts_search_serial(p);
    return "serial traversal";
}

/* The node count: what a runtime run by command must print. */
static int uts_answer(const bench_vals *v, double *out) {
    bench_vals w = *v;
    uts_params p;
    const uts_preset *pr;
    uts_result r;
    char err[160];
    *out = uts_params_of(&w, &p, &pr, err, sizeof err) ? NAN : (uts_expected(&p, pr, 1, &r), (double)r.nodes);
    return 0;
}

/* The plan's guess of the node count (no traversal): a preset's, else the expected size of a
 * binomial tree, or a GEO tree's levels with b0 children each (fixed, BALANCED) or b0 (1 -
 * depth / d) (else). */
static double uts_nodes_guess(const bench_vals *v) {
    const uts_preset *pr = strcmp(v->s[UTS_OPT_PRESET], "none") ? uts_preset_find(v->s[UTS_OPT_PRESET]) : NULL;
    if (pr)
        return (double)pr->expected.nodes;
    int t = (int)v->i[UTS_OPT_T], a = (int)v->i[UTS_OPT_A], d = (int)v->i[UTS_OPT_D];
    double b0 = v->d[UTS_OPT_B], q = v->d[UTS_OPT_Q], m = v->d[UTS_OPT_M];
    if (t == 0) /* binomial: root b0 children, then q*m expected children each; a critical
                 * tree (q m = 1) has no finite mean: assume the size of T3 */
        return q * m < 0.999 ? 1 + b0 / (1 - q * m) : 4e6;
    double level = 1, total = 1;
    for (int k = 0; k < d && total < 1e10; k++) {
        double bk = (a == 3 || t == 3) ? b0 : b0 * (1 - (double)k / d); /* fixed / balanced, else linear */
        level *= bk;
        total += level;
    }
    return total;
}

static double uts_serial_s(const bench_vals *v, int serial) {
    (void)serial;
    return 1.7e-7 * v->d[UTS_OPT_G] * uts_nodes_guess(v);
}

static const bench_paper uts_paper[] = {
    {"preset=T1 ", "10 ms at 112 cores: sub-linear, sometimes negative scaling"},
    {"preset=T3 ", "13 ms at 112 cores: sub-linear, sometimes negative scaling"},
    {"preset=T1L", "linear scaling (Fig. 6)"},
    {"preset=T1XXL", "linear scaling (Fig. 6)"},
    {"preset=T3L", "linear, lower efficiency: frequent steals (Fig. 6)"},
    {"preset=T3XXL", "linear; at least 3.6x faster than TBB and OpenMP"},
    {NULL, NULL},
};

const bench_desc bench_uts_desc = {
    .name = "uts",
    .summary = "Unbalanced Tree Search: count an implicit SHA-1 random tree (fork all children but the last)",
    .opts = uts_opts,
    .answer = uts_answer,
    .model = {.serial_s = uts_serial_s, .runtime = 1.5, .omp = 1 /* measured on T3: libomp 1.4x, TBB 1.5x serial */},
    .paper = uts_paper,
    .small = (const char *const[]){"t=3 b=4 d=5", "", "t=0 b=200 q=0.2 m=4 r=3", NULL},
};

#if !BENCH_DESCRIBE_ONLY

#if defined(FK_BASELINE_SERIAL)
#define UTS_SERIAL_BUILD 1
#else
#define UTS_SERIAL_BUILD 0
#endif

/* Trees above this many nodes are not traversed a second time to check the answer. */
#define UTS_RECHECK_MAX_NODES 200000000u

/* The kernel's state.  `tree` and `alloc_stack` are written by prepare() and only read
 * while a traversal runs (the pool's root submission orders them before every task). */
static uts_params tree;
static const uts_preset *preset; /* NULL: the flags give the tree */
static int alloc_stack;          /* runtime builds: results array from FK_ALLOC */
static uts_result result;        /* the last run's counts */
static int run_failed;           /* FK_RUN refused the root */
static double ns_per_sha1;       /* measured once per process: 0 until then */
static char description[192];

#if !defined(FK_BASELINE_SERIAL) && !defined(FK_BASELINE_TBB) && !defined(FK_BASELINE_PEER)
/* Aborts when the heap is exhausted: a traversal cannot be unwound half-way (the runtime
 * treats its own out-of-memory inside a task the same way). */
static uts_result *heap_results(int n) {
    uts_result *r = malloc((size_t)n * sizeof *r);
    if (!r) {
        fprintf(stderr, "uts: out of memory for the results of %d children\n", n);
        abort();
    }
    return r;
}
#endif

/* ---- serial projection ---------------------------------------------------------------- */
#if defined(FK_BASELINE_SERIAL)

static const char *results_array(void) { return "none (serial recursion)"; }
static void uts_run(bench_ctx *c) {
    (void)c;
    result = uts_search_serial(&tree);
}

/* ---- a peer runtime (kernels/peer.h) -------------------------------------------------------- */
#elif defined(FK_BASELINE_PEER)

static const char *results_array(void) { return "by value (the peer's own task records)"; }
static void uts_run(bench_ctx *c) {
    (void)c;
    result = uts_peer(&tree);
}

/* ---- TBB (kernels/tbb.cpp) ------------------------------------------------------------------ */
#elif defined(FK_BASELINE_TBB)

static const char *results_array(void) { return "heap"; }
static void uts_run(bench_ctx *c) {
    (void)c;
    result = uts_tbb(&tree);
}

/* ---- OpenMP tasks ------------------------------------------------------------------------- */
#elif defined(FK_BASELINE_OMP)

static const char *results_array(void) { return "heap"; }

static uts_result visit_omp(const uts_state *s, int height) {
    int n = uts_num_children(&tree, s, height);
    if (n == 0)
        return uts_result_leaf(height);
    uts_result *res = heap_results(n);
    for (int i = 0; i < n - 1; i++) {
        uts_state child;
        uts_child(&tree, &child, s, i);
#pragma omp task firstprivate(child, i, res, height)
        res[i] = visit_omp(&child, height + 1);
    }
    uts_state last;
    uts_child(&tree, &last, s, n - 1);
    res[n - 1] = visit_omp(&last, height + 1);
#pragma omp taskwait
    uts_result r = uts_result_inner(height);
    for (int i = 0; i < n; i++)
        uts_result_add(&r, &res[i]);
    free(res);
    return r;
}

static void uts_run(bench_ctx *c) {
    uts_state root;
    uts_root(&tree, &root);
#pragma omp parallel num_threads((int)c->workers)
#pragma omp single
    result = visit_omp(&root, 0);
}

/* ---- forkscope ------------------------------------------------------------------------------ */
#else

/* A task's argument: the node itself, by value (24 bytes: fits a child-stealing record). */
typedef struct uts_node {
    uts_state s;
    int32_t height;
} uts_node;

/* The locals read after the first fork live here (forkscope.h, rule 1): the number of
 * children, the loop counter and the results array.  The node itself is the task's
 * parameter, which comes back by itself after a steal. */
typedef struct {
    fk_frame fk;
    uts_result *res;
    int32_t n, i;
} node_frame;

FK_TASK(uts_visit, uts_result, node_frame *f, (uts_node, nd)) {
    int n = uts_num_children(&tree, &nd.s, nd.height);
    if (n == 0)
        FK_RETURN(uts_result_leaf(nd.height)); /* a leaf never allocates a frame */
    FK_BEGIN(f);
    f->n = n;
    f->res = alloc_stack ? FK_ALLOC(uts_result, (size_t)n) : heap_results(n);
    for (f->i = 0; f->i < f->n - 1; f->i++) {
        uts_node child = {.height = nd.height + 1};
        uts_child(&tree, &child.s, &nd.s, f->i);
        FK_FORK_AT(&f->res[f->i], uts_visit, child);
    }
    {
        uts_node last = {.height = nd.height + 1};
        uts_child(&tree, &last.s, &nd.s, f->n - 1);
        FK_CALL_AT(&f->res[f->n - 1], uts_visit, last);
    }
    FK_JOIN();
    uts_result r = uts_result_inner(nd.height);
    for (int i = 0; i < f->n; i++)
        uts_result_add(&r, &f->res[i]);
    if (alloc_stack)
        FK_FREE(f->res);
    else
        free(f->res);
    FK_RETURN(r);
} FK_END

static const char *results_array(void) { return alloc_stack ? "frame stack (FK_ALLOC)" : "heap"; }

static void uts_run(bench_ctx *c) {
    uts_node root = {.height = 0};
    uts_root(&tree, &root.s);
    run_failed = FK_RUN(c->pool, &result, uts_visit, root) != 0;
}
#endif

/* ---- prepare / verify --------------------------------------------------------------------- */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The cost of one child derivation (one SHA-1 of 24 bytes): 200,000 derivations in 10
 * batches, each a dependent chain (every hash takes the previous result, so none can be
 * skipped).  The fastest batch is reported: other processes on the machine only ever add
 * time. */
static double measure_sha1(void) {
    enum { BATCHES = 10, PER_BATCH = 20000 };
    uts_state a, b;
    uts_rng_root(&a, 1);
    double best = 0;
    for (int k = 0; k < BATCHES; k++) {
        double t0 = now();
        for (uint32_t i = 0; i < PER_BATCH; i += 2) {
            uts_rng_child(&b, &a, i);
            uts_rng_child(&a, &b, i + 1);
        }
        double ns = (now() - t0) * 1e9 / PER_BATCH;
        if (k == 0 || ns < best)
            best = ns;
    }
    volatile uint8_t sink = a.b[0]; /* keep the chain's result alive */
    (void)sink;
    return best;
}

static int uts_prepare(bench_ctx *c) {
    char err[160];
    if (uts_params_of(&c->v, &tree, &preset, err, sizeof err)) {
        fprintf(stderr, "uts: %s\n", err);
        return -1;
    }
    alloc_stack = !strcmp(c->s[UTS_OPT_ALLOC], "stack");
    result = (uts_result){0, 0, 0};
    run_failed = 0;
    if (preset) {
        char flags[160];
        uts_params_describe(&tree, flags, sizeof flags);
        snprintf(description, sizeof description, "%s (%s)", preset->name, flags);
    } else {
        uts_params_describe(&tree, description, sizeof description);
    }
    if (ns_per_sha1 == 0)
        ns_per_sha1 = measure_sha1();
    return 0;
}

static json_t *result_json(const uts_result *r) {
    return json_pack("{s:I, s:I, s:I}", "nodes", (json_int_t)r->nodes, "leaves", (json_int_t)r->leaves, "depth",
                     (json_int_t)r->depth);
}

static int uts_verify(bench_ctx *c) {
    json_t *o = c->out;
    json_object_set_new(o, "nodes", json_integer((json_int_t)result.nodes));
    json_object_set_new(o, "leaves", json_integer((json_int_t)result.leaves));
    json_object_set_new(o, "depth", json_integer((json_int_t)result.depth));
    json_object_set_new(o, "answer", json_integer((json_int_t)result.nodes));
    json_object_set_new(o, "tree", json_string(description));
    json_object_set_new(o, "tree_params",
                        json_pack("{s:i, s:f, s:i, s:i, s:i, s:f, s:i, s:f, s:i}", "t", tree.type, "b", tree.b0, "r",
                                  (int)tree.seed, "a", tree.shape, "d", tree.gen_mx, "q", tree.q, "m", tree.m, "f",
                                  tree.f, "g", tree.g));
    json_object_set_new(o, "results_array", json_string(results_array()));
    json_object_set_new(o, "sha1_library", json_string(uts_rng_library()));
    json_object_set_new(o, "ns_per_node_sha1", json_real(ns_per_sha1));
    if (run_failed) {
        json_object_set_new(o, "error", json_string("the runtime refused the root task (FK_RUN failed)"));
        return 0;
    }
    /* Holds for every tree, whatever it is checked against below. */
    int ok = result.nodes >= 1 && result.leaves >= 1 && result.leaves <= result.nodes && result.depth < result.nodes;

    uts_result want;
    const char *against = uts_expected(&tree, preset, 0, &want);
    if (!against && UTS_SERIAL_BUILD) {
        /* The answer is the serial traversal's own: only the consistency checks apply. */
        json_object_set_new(o, "checked_against", json_string("none (this is the serial traversal)"));
        return ok;
    }
    if (!against && result.nodes > UTS_RECHECK_MAX_NODES) {
        json_object_set_new(o, "checked_against", json_string("none (too large)"));
        return ok;
    }
    if (!against)
        against = uts_expected(&tree, preset, 1, &want);
    json_object_set_new(o, "checked_against", json_string(against));
    json_object_set_new(o, "expected", result_json(&want));
    return ok && uts_result_equal(&result, &want);
}

const bench_kernel bench_uts = {
    .desc = &bench_uts_desc,
    .prepare = uts_prepare,
    .run = uts_run,
    .verify = uts_verify,
    BENCH_PEER_VERSION(uts_peer)
};
#endif
