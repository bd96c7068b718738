/* test_uts.c — UTS: the SHA-1 RNG, the tree rules and the kernel, built once per variant.
 *
 * Every build checks the RNG against the published test vectors and the serial traversal
 * against the published counts (T1, T3, the default tree).  Then the kernel of this build
 * (runtime: 1, 2 and 4 workers, alloc=heap and alloc=stack; OpenMP: 1, 2 and 4 threads;
 * serial: itself) runs through bench_uts's prepare/run/verify on trees of every type and
 * shape, and must give the counts of the serial traversal and the expected values below.
 *
 * Where the expected counts come from: T1, T3 and the default tree are the reference
 * implementation's (UTS 2.1, as printed by its sequential run; T1 and T3 also in Table I of
 * the libfork paper).  BALANCED trees have a closed form.  The other counts were computed
 * twice, by uts_search_serial and by tests/fixtures/uts_crosscheck.py, a Python counter
 * written from the published rules alone (hashlib SHA-1, an explicit stack), and agree. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "bench/bench.h"
#include "tests/testlib.h"
#include "uts/rng.h"
#include "uts/tree.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static void assert_result(uts_result got, uint64_t nodes, uint64_t leaves, uint64_t depth, const char *what) {
    ASSERT_MSG(got.nodes == nodes && got.leaves == leaves && got.depth == depth,
               "%s: got %llu nodes, %llu leaves, depth %llu; want %llu, %llu, %llu", what,
               (unsigned long long)got.nodes, (unsigned long long)got.leaves, (unsigned long long)got.depth,
               (unsigned long long)nodes, (unsigned long long)leaves, (unsigned long long)depth);
}

/* Parses "t=1 a=3 b=4" into p, on top of the defaults (only the tree flags). */
static uts_params params_of(const char *spec) {
    uts_params p;
    uts_params_default(&p);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        char *eq = strchr(tok, '=');
        ASSERT_MSG(eq && eq[1], "bad spec token '%s'", tok);
        *eq = 0;
        const char *v = eq + 1;
        switch (tok[0]) {
        case 't': p.type = atoi(v); break;
        case 'b': p.b0 = atof(v); break;
        case 'r': p.seed = atoi(v); break;
        case 'a': p.shape = atoi(v); break;
        case 'd': p.gen_mx = atoi(v); break;
        case 'q': p.q = atof(v); break;
        case 'm': p.m = atoi(v); break;
        case 'f': p.f = atof(v); break;
        case 'g': p.g = atoi(v); break;
        default: TEST_FAIL_("spec option '%s' is not a tree flag", tok);
        }
    }
    char err[160];
    ASSERT_MSG(uts_params_check(&p, err, sizeof err) == 0, "spec '%s': %s", spec, err);
    return p;
}

static uts_result serial_of(const char *spec) {
    uts_params p = params_of(spec);
    return uts_search_serial(&p);
}

/* Sets the kernel options of spec ("name=value ...") on c. */
static void set_opts(bench_ctx *c, const char *spec) {
    char buf[256], err[256];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        char *eq = strchr(tok, '=');
        ASSERT_MSG(eq != NULL, "bad spec token '%s'", tok);
        *eq = 0;
        int idx = bench_opt_index(&bench_uts, tok);
        ASSERT_MSG(idx >= 0, "uts has no option '%s'", tok);
        /* A choice option keeps the pointer it is given (the driver's argv): a copy that
         * outlives this buffer, never freed (the case's process ends soon). */
        ASSERT_MSG(bench_set_opt(c, idx, tok, strdup(eq + 1), err, sizeof err) == 0, "%s", err);
    }
}

static uint64_t json_u64(json_t *o, const char *key) {
    json_t *v = json_object_get(o, key);
    ASSERT_MSG(json_is_integer(v), "kernel output has no integer \"%s\"", key);
    return (uint64_t)json_integer_value(v);
}

/* One way to run the kernel: a worker count and, in runtime builds, an alloc flavour. */
typedef struct form {
    unsigned workers;
    const char *alloc;
} form;

#if FK_BENCH_RUNTIME
static const form forms[] = {{1, "heap"}, {1, "stack"}, {2, "heap"}, {2, "stack"}, {4, "heap"}, {4, "stack"}};
#elif defined(FK_BASELINE_OMP) || defined(FK_BASELINE_TBB)
static const form forms[] = {{1, "heap"}, {2, "heap"}, {4, "heap"}};
#else
static const form forms[] = {{1, "heap"}};
#endif
#define NFORMS (sizeof forms / sizeof *forms)

#if FK_BENCH_RUNTIME
static fk_pool *make_pool(unsigned workers) {
    fk_pool_opts o;
    fk_pool_opts_init(&o);
    o.workers = workers;
    fk_pool *p = NULL;
    int err = fk_pool_create(&p, &o);
    ASSERT_MSG(err == 0, "fk_pool_create(%u workers): %s", workers, fk_strerror(err));
    return p;
}
#endif

/* Runs bench_uts once with the options of spec in form fm; returns its counts, and its
 * JSON output in *out if out is not NULL (the caller decrefs it).  The kernel must
 * verify its own answer. */
static uts_result kernel_run(const char *spec, form fm, json_t **out) {
    bench_ctx c;
    ASSERT_EQ(bench_ctx_init(&c, &bench_uts), 0);
    set_opts(&c, spec);
    char alloc[32];
    snprintf(alloc, sizeof alloc, "alloc=%s", fm.alloc);
    set_opts(&c, alloc);
    c.workers = fm.workers;
#if FK_BENCH_RUNTIME
    c.pool = make_pool(fm.workers);
#elif defined(FK_BASELINE_TBB)
    bench_tbb_start(fm.workers);
#endif
    ASSERT_MSG(bench_uts.prepare(&c) == 0, "prepare failed for '%s'", spec);
    bench_uts.run(&c);
    int ok = bench_uts.verify(&c);
    if (bench_uts.cleanup)
        bench_uts.cleanup(&c);
#if FK_BENCH_RUNTIME
    fk_pool_destroy(c.pool);
#elif defined(FK_BASELINE_TBB)
    bench_tbb_stop();
#endif
    uts_result r = {json_u64(c.out, "nodes"), json_u64(c.out, "leaves"), json_u64(c.out, "depth")};
    ASSERT_EQ_U(json_u64(c.out, "answer"), r.nodes);
    if (!ok) {
        char *s = json_dumps(c.out, JSON_COMPACT);
        TEST_FAIL_("'%s' (%s, %u workers): the kernel did not verify: %s", spec, fm.alloc, fm.workers, s);
    }
    if (out)
        *out = c.out;
    else
        json_decref(c.out);
    return r;
}

/* The kernel in every form of this build must give want. */
static void check_forms(const char *spec, uts_result want) {
    for (size_t k = 0; k < NFORMS; k++) {
        char what[320];
        snprintf(what, sizeof what, "kernel '%s' (%s, %u workers, %s)", spec, forms[k].alloc, forms[k].workers,
                 bench_variant());
        assert_result(kernel_run(spec, forms[k], NULL), want.nodes, want.leaves, want.depth, what);
    }
}

/* A tree given by tree flags: the serial traversal must give the pinned counts, and the
 * kernel in every form the same. */
static void check_tree(const char *spec, uint64_t nodes, uint64_t leaves, uint64_t depth) {
    char what[300];
    snprintf(what, sizeof what, "serial '%s'", spec);
    uts_result s = serial_of(spec);
    assert_result(s, nodes, leaves, depth, what);
    check_forms(spec, s);
}

/* ---- the RNG ------------------------------------------------------------------------------ */

static void assert_state(const uts_state *s, const char *hex, uint32_t rand, const char *what) {
    char got[2 * UTS_STATE_BYTES + 1];
    uts_rng_hex(s, got);
    ASSERT_MSG(!strcmp(got, hex), "%s: state %s, want %s", what, got, hex);
    if (rand != UINT32_MAX)
        ASSERT_MSG(uts_rng_rand(s) == rand, "%s: rand %u, want %u", what, uts_rng_rand(s), rand);
}

TEST(rng_vectors) {
    uts_state root, c0, c1, c00;
    uts_rng_root(&root, 19);
    assert_state(&root, "c6988ab70cc9559ae4d6cba254e29a845a85f86b", 1518729323, "seed 19 root");
    uts_rng_child(&c0, &root, 0);
    assert_state(&c0, "2fb3131030280c1617a81d6a49c1e29effb19645", 2142344773, "seed 19 child 0");
    uts_rng_child(&c1, &root, 1);
    assert_state(&c1, "4a8304c7c88f903ac06b01b07c7b2590e9397b5b", 1765374811, "seed 19 child 1");
    uts_rng_child(&c00, &c0, 0);
    assert_state(&c00, "9ebdd48d50aa0da0de16ee6d3ec43bc0f5a09bfa", 1973459962, "seed 19 child 0 of child 0");
    uts_rng_root(&root, 0);
    assert_state(&root, "6768033e216468247bd031a0a2d9876d79818f8f", UINT32_MAX, "seed 0 root");
    uts_rng_root(&root, 42);
    assert_state(&root, "a11dabbcec7aab309c890ab3dbc256eaeb582782", UINT32_MAX, "seed 42 root");
}

TEST(rng_uniform_and_granularity) {
    uts_state s, a, b;
    uts_rng_root(&s, 19);
    ASSERT(uts_rng_uniform(&s) == 1518729323 / 2147483648.0);
    for (uint32_t i = 0; i < 1000; i++) {
        uts_rng_child(&a, &s, i);
        double u = uts_rng_uniform(&a);
        ASSERT(u >= 0 && u < 1);
        ASSERT(uts_rng_rand(&a) <= 0x7fffffffu);
    }
    /* Deriving a child g times gives the same state as once. */
    uts_params p;
    uts_params_default(&p);
    uts_rng_child(&a, &s, 7);
    p.g = 5;
    uts_child(&p, &b, &s, 7);
    ASSERT(!memcmp(a.b, b.b, UTS_STATE_BYTES));
    ASSERT_STR_CONTAINS(uts_rng_library(), "nettle ");
    ASSERT_STR_CONTAINS(uts_rng_library(), " sha1");
}

/* ---- parameters --------------------------------------------------------------------------- */

TEST(params_and_presets) {
    uts_params d;
    uts_params_default(&d);
    ASSERT_EQ(d.type, UTS_GEO);
    ASSERT(d.b0 == 4.0 && d.q == 0.234375 && d.f == 0.5);
    ASSERT_EQ(d.seed, 0);
    ASSERT_EQ(d.shape, UTS_LINEAR);
    ASSERT_EQ(d.gen_mx, 6);
    ASSERT_EQ(d.m, 4);
    ASSERT_EQ(d.g, 1);
    /* The kernel's option defaults are the same tree. */
    bench_ctx c;
    ASSERT_EQ(bench_ctx_init(&c, &bench_uts), 0);
    const char *names[] = {"t", "b", "r", "a", "d", "q", "m", "f", "g"};
    double want[] = {1, 4.0, 0, 0, 6, 0.234375, 4, 0.5, 1};
    for (int k = 0; k < 9; k++) {
        int idx = bench_opt_index(&bench_uts, names[k]);
        ASSERT_MSG(idx >= 0, "no option %s", names[k]);
        ASSERT_MSG(c.d[idx] == want[k], "option %s defaults to %g, want %g", names[k], c.d[idx], want[k]);
    }
    ASSERT(!strcmp(c.s[bench_opt_index(&bench_uts, "preset")], "none"));
    ASSERT(!strcmp(c.s[bench_opt_index(&bench_uts, "alloc")], "heap"));
    json_decref(c.out);

    /* The presets are Table I's flags (libfork paper; UTS sample trees T1 and T3). */
    const uts_preset *t1 = uts_preset_find("T1"), *t3 = uts_preset_find("T3");
    ASSERT(t1 && t3 && uts_preset_find("T1L") && uts_preset_find("T1XXL") && uts_preset_find("T3L") &&
           uts_preset_find("T3XXL") && !uts_preset_find("T2"));
    ASSERT(t1->params.type == UTS_GEO && t1->params.shape == UTS_FIXED && t1->params.gen_mx == 10 &&
           t1->params.b0 == 4 && t1->params.seed == 19);
    ASSERT(t3->params.type == UTS_BIN && t3->params.b0 == 2000 && t3->params.q == 0.124875 && t3->params.m == 8 &&
           t3->params.seed == 42);
    /* Every choice of the preset option names a preset. */
    char choices[128];
    snprintf(choices, sizeof choices, "%s", bench_uts.desc->opts[bench_opt_index(&bench_uts, "preset")].choices);
    for (char *name = strtok(choices, "|"); name; name = strtok(NULL, "|"))
        ASSERT_MSG(!strcmp(name, "none") || uts_preset_find(name), "preset choice %s has no preset", name);
    const uts_preset *xxl = uts_preset_find("T1XXL");
    ASSERT_EQ_U(xxl->expected.nodes, 4230646601ull); /* above 2^32: 64-bit counters */

    /* prepare() with a preset leaves the options saying which tree runs (the driver records
     * them as the run's params), granularity kept. */
    bench_ctx pc;
    ASSERT_EQ(bench_ctx_init(&pc, &bench_uts), 0);
    set_opts(&pc, "preset=T3 g=3 d=2");
    ASSERT_EQ(bench_uts.prepare(&pc), 0);
    double want3[] = {0, 2000, 42, 0, t3->params.gen_mx, 0.124875, 8, t3->params.f, 3};
    for (int k = 0; k < 9; k++) {
        int idx = bench_opt_index(&bench_uts, names[k]);
        double got = bench_uts.desc->opts[idx].type == BENCH_INT ? (double)pc.i[idx] : pc.d[idx];
        ASSERT_MSG(got == want3[k], "after prepare of T3, option %s is %g, want %g", names[k], got, want3[k]);
    }
    if (bench_uts.cleanup)
        bench_uts.cleanup(&pc);
    json_decref(pc.out);

    char err[160];
    uts_params bad = d;
    bad.b0 = 0;
    ASSERT_EQ(uts_params_check(&bad, err, sizeof err), -1);
    ASSERT_STR_CONTAINS(err, "-b");
    bad = d;
    bad.g = 0;
    ASSERT_EQ(uts_params_check(&bad, err, sizeof err), -1);
    ASSERT_STR_CONTAINS(err, "-g");
    bad = d;
    bad.q = 1.5;
    ASSERT_EQ(uts_params_check(&bad, err, sizeof err), -1);
    ASSERT_STR_CONTAINS(err, "-q");
}

static void prepare_b0_zero(void *arg) {
    (void)arg;
    bench_ctx c;
    ASSERT_EQ(bench_ctx_init(&c, &bench_uts), 0);
    set_opts(&c, "b=0");
#if FK_BENCH_RUNTIME
    c.pool = make_pool(1);
#endif
    ASSERT_EQ(bench_uts.prepare(&c), -1);
#if FK_BENCH_RUNTIME
    fk_pool_destroy(c.pool);
#endif
    json_decref(c.out);
}

TEST(bad_options_rejected) {
    bench_ctx c;
    char err[256];
    ASSERT_EQ(bench_ctx_init(&c, &bench_uts), 0);
    ASSERT_EQ(bench_set_opt(&c, bench_opt_index(&bench_uts, "t"), "-t", "4", err, sizeof err), -1);
    ASSERT_EQ(bench_set_opt(&c, bench_opt_index(&bench_uts, "g"), "-g", "0", err, sizeof err), -1);
    ASSERT_EQ(bench_set_opt(&c, bench_opt_index(&bench_uts, "q"), "-q", "1.5", err, sizeof err), -1);
    ASSERT_EQ(bench_set_opt(&c, bench_opt_index(&bench_uts, "alloc"), "--alloc", "pool", err, sizeof err), -1);
    ASSERT_EQ(bench_set_opt(&c, bench_opt_index(&bench_uts, "preset"), "--preset", "T2", err, sizeof err), -1);
    json_decref(c.out);
    /* b = 0 passes the option's range but not prepare (b0 must be > 0), which says why. */
    char *msg;
    int status = test_run_capturing(prepare_b0_zero, NULL, &msg);
    ASSERT_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "prepare with b = 0 did not fail cleanly: %s", msg);
    ASSERT_STR_CONTAINS(msg, "-b (root branching factor)");
    free(msg);
}

/* ---- published trees ---------------------------------------------------------------------- */

TEST(default_tree) { check_tree("", 1732, 1050, 6); }

TEST(t1_serial) { assert_result(serial_of("t=1 a=3 d=10 b=4 r=19"), 4130071, 3305118, 10, "T1 serial"); }

TEST(t3_serial) {
    assert_result(serial_of("t=0 b=2000 q=0.124875 m=8 r=42"), 4112897, 3599034, 1572, "T3 serial");
}

/* A preset through the kernel in every form: the exact counts, checked against the preset. */
static void check_preset(const char *name, uts_result want) {
    char spec[64];
    snprintf(spec, sizeof spec, "preset=%s", name);
    for (size_t k = 0; k < NFORMS; k++) {
        char what[160];
        snprintf(what, sizeof what, "kernel '%s' (%s, %u workers, %s)", spec, forms[k].alloc, forms[k].workers,
                 bench_variant());
        json_t *out;
        assert_result(kernel_run(spec, forms[k], &out), want.nodes, want.leaves, want.depth, what);
        ASSERT(!strcmp(json_string_value(json_object_get(out, "checked_against")), "preset"));
        json_t *exp = json_object_get(out, "expected");
        ASSERT(json_is_object(exp));
        ASSERT_EQ_U(json_u64(exp, "nodes"), want.nodes);
        ASSERT_EQ_U(json_u64(exp, "leaves"), want.leaves);
        ASSERT_EQ_U(json_u64(exp, "depth"), want.depth);
        ASSERT_STR_CONTAINS(json_string_value(json_object_get(out, "tree")), name);
        json_decref(out);
    }
}

TEST(t1_kernel) { check_preset("T1", (uts_result){4130071, 3305118, 10}); }
TEST(t3_kernel) { check_preset("T3", (uts_result){4112897, 3599034, 1572}); }

/* A preset sets every tree flag: flags given with it do not change the tree. */
TEST(preset_overrides_flags) {
    uts_result r = kernel_run("t=3 b=7 d=2 r=5 a=1 q=0.9 m=9 f=0.1 preset=T1", forms[0], NULL);
    assert_result(r, 4130071, 3305118, 10, "T1 with other flags");
}

/* ---- small trees -------------------------------------------------------------------------- */

/* Exactly one node: a BIN root with b0 < 1 has floor(b0) = 0 children; a BALANCED tree of
 * depth 0 (its root is at the depth limit) or b0 < 1 has none either. */
TEST(one_node) {
    check_tree("t=0 b=0.5", 1, 1, 0);
    check_tree("t=3 b=4 d=0", 1, 1, 0);
    check_tree("t=3 b=0.9 d=5", 1, 1, 0);
}

/* A non-integer b0: GEO uses it as a real mean; the BIN root takes floor(b0) = 10 children. */
TEST(non_integer_b0) {
    check_tree("t=1 a=0 b=3.7 d=12 r=7", 59328, 32014, 12);
    check_tree("t=0 b=10.9 q=0.24 m=4 r=10", 3935, 2953, 86);
    uts_params p = params_of("t=0 b=10.9 q=0.24 m=4 r=10");
    uts_state root;
    uts_root(&p, &root);
    ASSERT_EQ(uts_num_children(&p, &root, 0), 10);
}

TEST(geo_linear) { check_tree("t=1 a=0 b=6 d=10 r=4", 74814, 43558, 10); }
TEST(geo_expdec) {
    check_tree("t=1 a=1 b=6 d=12 r=5", 15636, 7945, 29);
    check_tree("t=1 a=1 b=4 d=8 r=0", 12958, 6606, 26);
}
/* Depth 41 = 5 * gen_mx + 1: b_h is 0 above 5 * gen_mx. */
TEST(geo_cyclic) { check_tree("t=1 a=2 b=3 d=8 r=0", 9392, 5234, 41); }
TEST(geo_fixed) { check_tree("t=1 a=3 b=4 d=7 r=19", 63914, 51124, 7); }

/* b0 = 150: the root draws 292 children and keeps 100; without the cap the tree would
 * have 44,906 nodes (the cross-check script, cap removed). */
TEST(child_cap) {
    check_tree("t=1 a=3 b=150 d=2 r=1", 7392, 7291, 2);
    uts_params p = params_of("t=1 a=3 b=150 d=2 r=1");
    uts_state root;
    uts_root(&p, &root);
    ASSERT_EQ(uts_num_children(&p, &root, 0), UTS_MAX_CHILDREN);
    /* T3's BIN root is exempt: 2000 children. */
    p = params_of("t=0 b=2000 q=0.124875 m=8 r=42");
    uts_root(&p, &root);
    ASSERT_EQ(uts_num_children(&p, &root, 0), 2000);
}

TEST(hybrid) {
    check_tree("t=2 a=0 b=4 d=10 q=0.2 m=5 r=10", 57388, 45874, 149);
    check_tree("t=2 a=3 b=4 d=8 q=0.124875 m=8 r=4", 37795, 33052, 150);
}

/* BALANCED: floor(b0)^k nodes at height k <= d, so sum_k floor(b0)^k nodes and
 * floor(b0)^d leaves (no cap: the reference exempts BALANCED trees from it). */
static void check_balanced(const char *spec, uint64_t b, int d) {
    uint64_t level = 1, nodes = 1;
    for (int k = 1; k <= d; k++) {
        level *= b;
        nodes += level;
    }
    check_tree(spec, nodes, level, (uint64_t)d);
    uts_params p = params_of(spec);
    uts_result closed;
    ASSERT_EQ(uts_balanced_counts(&p, &closed), 0);
    assert_result(closed, nodes, level, (uint64_t)d, "uts_balanced_counts");
}

TEST(balanced) {
    check_balanced("t=3 b=3 d=7", 3, 7);          /* 3,280 nodes */
    check_balanced("t=3 b=2.5 d=10 r=3", 2, 10);  /* 2,047 nodes */
    check_balanced("t=3 b=1 d=50", 1, 50);        /* a chain */
    check_balanced("t=3 b=150 d=2 r=9", 150, 2);  /* 22,651 nodes: more than 100 children each */
    json_t *out;
    kernel_run("t=3 b=3 d=7", forms[0], &out);
    ASSERT(!strcmp(json_string_value(json_object_get(out, "checked_against")), "closed form"));
    json_decref(out);
}

/* A chain 100,000 levels deep (T3XXL is 99,049): every form recurses once per level, so
 * the case runs on a thread with a 1 GiB stack, as the bench driver's measurement does. */
static void *deep_chain_thread(void *arg) {
    (void)arg;
    check_balanced("t=3 b=1 d=100000", 1, 100000);
    return NULL;
}

TEST(deep_chain) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    ASSERT_EQ(pthread_attr_setstacksize(&attr, (size_t)1 << 30), 0);
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, &attr, deep_chain_thread, NULL), 0);
    ASSERT_EQ(pthread_join(th, NULL), 0);
}

/* -g only adds hashing: the same counts for any granularity. */
TEST(granularity) {
    check_tree("t=2 a=3 b=4 d=8 q=0.124875 m=8 r=4 g=3", 37795, 33052, 150);
    check_tree("t=1 a=0 b=6 d=10 r=4 g=2", 74814, 43558, 10);
    json_t *out;
    kernel_run("preset=T1 g=2", forms[0], &out); /* a preset keeps -g */
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(out, "tree_params"), "g")), 2);
    ASSERT_EQ_U(json_u64(out, "nodes"), 4130071);
    json_decref(out);
}

/* The kernel's report: the library, the SHA-1 cost, the tree and how it was checked. */
TEST(kernel_report) {
    json_t *out;
    kernel_run("t=1 a=0 b=6 d=10 r=4", forms[0], &out);
    ASSERT_STR_CONTAINS(json_string_value(json_object_get(out, "sha1_library")), "nettle ");
    double ns = json_real_value(json_object_get(out, "ns_per_node_sha1"));
    ASSERT_MSG(ns > 1 && ns < 100000, "ns_per_node_sha1 = %g", ns);
    ASSERT_STR_CONTAINS(json_string_value(json_object_get(out, "tree")), "GEO LINEAR b0=6 d=10 r=4");
    const char *against = json_string_value(json_object_get(out, "checked_against"));
#if defined(FK_BASELINE_SERIAL)
    ASSERT_STR_CONTAINS(against, "none (this is the serial traversal)");
#else
    ASSERT_STR_CONTAINS(against, "serial traversal");
    ASSERT_EQ_U(json_u64(json_object_get(out, "expected"), "nodes"), 74814);
#endif
    json_decref(out);
    /* alloc=stack is accepted by every build; only runtime builds use the frame stack. */
    kernel_run("t=1 a=0 b=6 d=10 r=4", (form){1, "stack"}, &out);
    const char *arr = json_string_value(json_object_get(out, "results_array"));
#if FK_BENCH_RUNTIME
    ASSERT_STR_CONTAINS(arr, "FK_ALLOC");
#else
    ASSERT(arr && !strstr(arr, "FK_ALLOC"));
#endif
    json_decref(out);
}

int main(int argc, char **argv) {
#if defined(FK_BASELINE_OMP)
    /* OpenMP runtimes size their threads' stacks from OMP_STACKSIZE when they start: set
     * it (as the bench driver does) and start again. */
    if (!getenv("OMP_STACKSIZE")) {
        setenv("OMP_STACKSIZE", "64M", 1);
        execv("/proc/self/exe", argv);
    }
#endif
    return test_main(argc, argv, (struct test_case[]){
        TEST_CASE(rng_vectors, 10),
        TEST_CASE(rng_uniform_and_granularity, 10),
        TEST_CASE(params_and_presets, 10),
        TEST_CASE(bad_options_rejected, 10),
        TEST_CASE(default_tree, 30),
        TEST_CASE(t1_serial, 60),
        TEST_CASE(t3_serial, 60),
        TEST_CASE(t1_kernel, 120),
        TEST_CASE(t3_kernel, 120),
        TEST_CASE(preset_overrides_flags, 60),
        TEST_CASE(one_node, 30),
        TEST_CASE(non_integer_b0, 30),
        TEST_CASE(geo_linear, 30),
        TEST_CASE(geo_expdec, 30),
        TEST_CASE(geo_cyclic, 30),
        TEST_CASE(geo_fixed, 30),
        TEST_CASE(child_cap, 30),
        TEST_CASE(hybrid, 30),
        TEST_CASE(balanced, 30),
        TEST_CASE(deep_chain, 60),
        TEST_CASE(granularity, 60),
        TEST_CASE(kernel_report, 30),
        {0},
    });
}
