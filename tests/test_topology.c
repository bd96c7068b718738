/* test_topology.c — placement, NUMA nodes, distances, Eq. 6 weights and the victim
 * samplers, on synthetic and XML topologies and on this machine. */

#include <hwloc.h>
#include <math.h>

#include "forkscope.h"
#include "testlib.h"
#include "topology.h"
#include "victim.h"

/* ---- helpers ------------------------------------------------------------------------- */

static fk__topo *make(const char *spec, unsigned workers, fk__topo_place place) {
    char err[512];
    fk__topo *t = NULL;
    int rc = fk__topo_create(&t, &(fk__topo_opts){.spec = spec, .workers = workers, .place = place}, err, sizeof err);
    ASSERT_MSG(rc == 0, "fk__topo_create(%s): %d: %s", spec ? spec : "(null)", rc, err);
    return t;
}

/* fk__topo_print's output as a malloc'd string. */
static char *printed(const fk__topo *t) {
    FILE *f = tmpfile();
    ASSERT(f);
    fk__topo_print(t, f);
    long len = ftell(f);
    ASSERT(len > 0);
    char *buf = malloc((size_t)len + 1);
    ASSERT(buf);
    rewind(f);
    ASSERT_EQ(fread(buf, 1, (size_t)len, f), len);
    buf[len] = 0;
    fclose(f);
    return buf;
}

/* Checks that worker w's group g has distance r, n members and per-member weight. */
static void check_group(const fk__topo *t, unsigned w, unsigned g, unsigned r, unsigned n, double weight) {
    fk__topo_group grp = fk__topo_group_at(t, w, g);
    ASSERT_EQ(grp.dist, r);
    ASSERT_EQ(grp.n, n);
    ASSERT_NEAR(grp.weight, weight, 1e-15);
}

static void check_members(const fk__topo *t, unsigned w, unsigned g, const unsigned *expect, unsigned n) {
    unsigned m[FK_MAX_WORKERS];
    ASSERT_EQ(fk__topo_members(t, w, g, m), n);
    for (unsigned i = 0; i < n; i++)
        ASSERT_EQ(m[i], expect[i]);
}

static void check_range(const fk__topo *t, unsigned w, unsigned g, unsigned lo, unsigned hi, unsigned skip) {
    unsigned e[FK_MAX_WORKERS], n = 0;
    for (unsigned j = lo; j <= hi; j++)
        if (j != skip)
            e[n++] = j;
    check_members(t, w, g, e, n);
}

/* Q(a, x), the regularized upper incomplete gamma function: the chi-squared p-value of a
 * statistic x2 with df degrees of freedom is Q(df / 2, x2 / 2).  Series below a + 1,
 * Lentz's continued fraction above (Numerical Recipes' gser / gcf). */
static double gamma_q(double a, double x) {
    if (x <= 0)
        return 1;
    double lead = exp(-x + a * log(x) - lgamma(a));
    if (x < a + 1) {
        double ap = a, del = 1 / a, sum = del;
        for (int i = 0; i < 100000 && fabs(del) > fabs(sum) * 1e-16; i++) {
            ap += 1;
            del *= x / ap;
            sum += del;
        }
        return 1 - sum * lead;
    }
    const double tiny = 1e-300;
    double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
    for (int i = 1; i < 100000; i++) {
        double an = -i * (i - a);
        b += 2;
        d = an * d + b;
        d = fabs(d) < tiny ? tiny : d;
        c = b + an / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-16)
            break;
    }
    return lead * h;
}

/* Draws `draws` victims and returns the chi-squared p-value of their counts against the
 * probabilities expect[j] (0 for cells that must stay empty: self).  Also checks each
 * group's total against its share within 6 standard deviations (a binomial count is
 * outside with probability ~2e-9). */
static double chi2_victims(fk__victims *v, const double *expect, unsigned n, unsigned draws, double *stat,
                           unsigned *df) {
    unsigned long *count = calloc(n, sizeof *count);
    ASSERT(count);
    for (unsigned i = 0; i < draws; i++) {
        unsigned k = fk__victim_pick(v);
        ASSERT(k < n);
        count[k]++;
    }
    double x2 = 0;
    unsigned cells = 0;
    for (unsigned j = 0; j < n; j++) {
        if (expect[j] == 0) {
            ASSERT_EQ(count[j], 0);
            continue;
        }
        double e = expect[j] * draws;
        x2 += (count[j] - e) * (count[j] - e) / e;
        cells++;
    }
    free(count);
    *stat = x2;
    *df = cells - 1;
    return gamma_q((cells - 1) / 2.0, x2 / 2);
}

TEST(chi2_pvalue_function) {
    /* df = 2: Q(1, x/2) = exp(-x/2); df = 1: Q(1/2, x/2) = erfc(sqrt(x/2)). */
    for (double x = 0.5; x < 60; x *= 1.7) {
        ASSERT_NEAR(gamma_q(1, x / 2), exp(-x / 2), 1e-12 * exp(-x / 2) + 1e-300);
        ASSERT_NEAR(gamma_q(0.5, x / 2), erfc(sqrt(x / 2)), 1e-10 * erfc(sqrt(x / 2)) + 1e-300);
    }
}

/* ---- Eq. 6 weights, by hand ---------------------------------------------------------- */

/* "pack:2 core:56 pu:1", 112 workers, compact.
 *
 * The tree: Machine (depth 0) > Package (1) > Core (2) > PU (3); hwloc attaches one NUMA
 * node to the machine as a memory child, which is not a level.  Compact placement puts
 * worker k on PU L#k: workers 0-55 in package 0, 56-111 in package 1.
 *
 * Worker 0 and worker j in 1..55: common ancestor package 0, depth 1: r = 3 - 1 = 2.
 * Worker 0 and worker j in 56..111: common ancestor the machine, depth 0: r = 3.
 *   group r = 2: n = 55, w = 1 / (55 * 2^2) = 1/220 = 0.0045454...
 *   group r = 3: n = 56, w = 1 / (56 * 3^2) = 1/504 = 0.0019841...
 * Group shares: 55/220 = 1/4 and 56/504 = 1/9, total 13/36: 9/13 = 0.6923 and
 * 4/13 = 0.3077.  Per-member draw probability: (1/220) / (13/36) = 9/715 = 0.012587 for a
 * member of its own package, (1/504) / (13/36) = 1/182 = 0.0054945 for the other.
 * Worker 57 mirrors it: {56, 58..111} at r = 2, {0..55} at r = 3.
 *
 * With rank weights (libfork's code) r is 1 and 2: w = 1/55 and 1/(56 * 4) = 1/224,
 * shares 1 and 1/4 of 5/4: 0.8 and 0.2. */
TEST(weights_2x56) {
    fk__topo *t = make("synthetic:pack:2 core:56 pu:1", 112, FK__PLACE_COMPACT);
    ASSERT_EQ(fk__topo_workers(t), 112);
    ASSERT_EQ(fk__topo_npus(t), 112);
    ASSERT_EQ(fk__topo_kind_of(t), FK__TOPO_SYNTHETIC);
    ASSERT_EQ(fk__topo_distance(t, 0, 0), 0);
    ASSERT_EQ(fk__topo_distance(t, 0, 1), 2);
    ASSERT_EQ(fk__topo_distance(t, 0, 55), 2);
    ASSERT_EQ(fk__topo_distance(t, 0, 56), 3);
    ASSERT_EQ(fk__topo_distance(t, 111, 0), 3);

    ASSERT_EQ(fk__topo_ngroups(t, 0), 2);
    check_group(t, 0, 0, 2, 55, 1.0 / 220);
    check_group(t, 0, 1, 3, 56, 1.0 / 504);
    ASSERT_NEAR(fk__topo_group_at(t, 0, 0).prob, 9.0 / 13, 1e-15);
    ASSERT_NEAR(fk__topo_group_at(t, 0, 1).prob, 4.0 / 13, 1e-15);
    check_range(t, 0, 0, 1, 55, ~0u);
    check_range(t, 0, 1, 56, 111, ~0u);

    ASSERT_EQ(fk__topo_ngroups(t, 57), 2);
    check_group(t, 57, 0, 2, 55, 1.0 / 220);
    check_group(t, 57, 1, 3, 56, 1.0 / 504);
    check_range(t, 57, 0, 56, 111, 57);
    check_range(t, 57, 1, 0, 55, ~0u);

    char *out = printed(t);
    ASSERT_STR_CONTAINS(out, "topology: synthetic \"pack:2 core:56 pu:1\"");
    ASSERT_STR_CONTAINS(out, "levels: Machine:1 Package:2 Core:112 PU:112; NUMANode:1");
    ASSERT_STR_CONTAINS(out, "pinning: no: a synthetic topology is not this machine");
    ASSERT_STR_CONTAINS(out, "worker 57 -> PU L#57 (P#57)  core L#57  package L#1  node 0 (NUMANode L#0)");
    ASSERT_STR_CONTAINS(out, "worker 0: r=2 n=55 w=0.00454545 p=0.6923 {1-55} | r=3 n=56 w=0.00198413 p=0.3077 {56-111}");
    ASSERT_STR_CONTAINS(out, "worker 57: r=2 n=55 w=0.00454545 p=0.6923 {56,58-111} | r=3 n=56");
    free(out);
    fk__topo_destroy(t);

    fk__topo *tr = NULL;
    ASSERT_EQ(fk__topo_create(&tr, &(fk__topo_opts){.spec = "synthetic:pack:2 core:56 pu:1", .rank_weights = 1}, NULL, 0),
              0);
    ASSERT_EQ(fk__topo_workers(tr), 112); /* workers = 0: one per PU */
    check_group(tr, 0, 0, 2, 55, 1.0 / 55);
    check_group(tr, 0, 1, 3, 56, 1.0 / 224);
    ASSERT_NEAR(fk__topo_group_at(tr, 0, 0).prob, 0.8, 1e-15);
    ASSERT_NEAR(fk__topo_group_at(tr, 0, 1).prob, 0.2, 1e-15);
    fk__topo_destroy(tr);
}

/* "pack:2 l3:4 core:7 pu:1", 56 workers, compact.
 *
 * The tree: Machine (0) > Package (1) > L3 (2) > Core (3) > PU (4).  Worker k is on PU L#k;
 * L3 number k / 7, package k / 28.
 * Worker 0: workers 1-6 share its L3 (ancestor depth 2): r = 4 - 2 = 2, n = 6;
 *           7-27 share its package only (depth 1): r = 3, n = 21;
 *           28-55 share the machine (depth 0): r = 4, n = 28.
 *   w = 1/(6 * 4) = 1/24 = 0.041667, 1/(21 * 9) = 1/189 = 0.0052910, 1/(28 * 16) = 1/448 = 0.0022321.
 *   Shares 1/4 : 1/9 : 1/16, total 61/144: 36/61 = 0.5902, 16/61 = 0.2623, 9/61 = 0.1475.
 * Worker 10 (second L3 of package 0): {7-9, 11-13} at r = 2, {0-6, 14-27} at r = 3,
 * {28-55} at r = 4, same weights. */
TEST(weights_l3) {
    fk__topo *t = make("synthetic:pack:2 l3:4 core:7 pu:1", 56, FK__PLACE_COMPACT);
    ASSERT_EQ(fk__topo_ngroups(t, 0), 3);
    check_group(t, 0, 0, 2, 6, 1.0 / 24);
    check_group(t, 0, 1, 3, 21, 1.0 / 189);
    check_group(t, 0, 2, 4, 28, 1.0 / 448);
    ASSERT_NEAR(fk__topo_group_at(t, 0, 0).prob, 36.0 / 61, 1e-15);
    ASSERT_NEAR(fk__topo_group_at(t, 0, 1).prob, 16.0 / 61, 1e-15);
    ASSERT_NEAR(fk__topo_group_at(t, 0, 2).prob, 9.0 / 61, 1e-15);
    check_range(t, 0, 0, 1, 6, ~0u);
    check_range(t, 0, 1, 7, 27, ~0u);
    check_range(t, 0, 2, 28, 55, ~0u);

    ASSERT_EQ(fk__topo_ngroups(t, 10), 3);
    check_group(t, 10, 0, 2, 6, 1.0 / 24);
    check_group(t, 10, 1, 3, 21, 1.0 / 189);
    check_group(t, 10, 2, 4, 28, 1.0 / 448);
    check_members(t, 10, 0, (const unsigned[]){7, 8, 9, 11, 12, 13}, 6);
    unsigned e[21], n = 0;
    for (unsigned j = 0; j <= 27; j++)
        if (j < 7 || j > 13)
            e[n++] = j;
    check_members(t, 10, 1, e, n);
    check_range(t, 10, 2, 28, 55, ~0u);

    char *out = printed(t);
    ASSERT_STR_CONTAINS(out, "levels: Machine:1 Package:2 L3Cache:8 Core:56 PU:56; NUMANode:1");
    ASSERT_STR_CONTAINS(out, "worker 10: r=2 n=6 w=0.0416667 p=0.5902 {7-9,11-13} | r=3 n=21 w=0.00529101 p=0.2623 "
                             "{0-6,14-27} | r=4 n=28 w=0.00223214 p=0.1475 {28-55}");
    free(out);
    fk__topo_destroy(t);
}

/* ---- the samplers -------------------------------------------------------------------- */

/* 200,000 weighted draws for a worker, against the per-member probabilities w_j / sum w.
 * Chi-squared over the other workers' counts (111 cells, df = 110 for worker 0 of 2 x 56;
 * 55 cells, df = 54 for worker 10 of the L3 machine): the test fails if the p-value is
 * below 1e-6, i.e. if the statistic exceeds 195.4 (df 110) or 118.5 (df 54), so a correct
 * sampler fails with probability 1e-6 per seed.  With the seeds fixed here the outcome is
 * deterministic; the threshold is what keeps the test honest when the seed or the
 * generator changes.  Sensitivity: libfork's rank weights (shares 0.8 / 0.2 instead of
 * 9/13 / 4/13) give a statistic near 11,000; a 5% error in the far group's share, ~200.
 * The group totals are also checked against their shares within 6 sigma (a correct
 * sampler is outside with probability ~2e-9 per group). */
static void sample_check(const char *spec, unsigned P, unsigned self) {
    fk__topo *t = make(spec, P, FK__PLACE_COMPACT);
    fk__victims v;
    ASSERT_EQ(fk__victims_init_topo(&v, self, t, 0x1234abcdull), 0);
    unsigned nclose = fk__topo_group_at(t, self, 0).n;
    ASSERT_EQ(fk__victim_round(&v), nclose + 8);
    for (unsigned i = 0; i < nclose; i++) /* the sweep of the closest group */
        fk__victim_pick(&v);

    double *expect = calloc(P, sizeof *expect);
    unsigned *m = calloc(P, sizeof *m);
    unsigned *group_of = calloc(P, sizeof *group_of);
    ASSERT(expect && m && group_of);
    double total = 0;
    for (unsigned g = 0; g < fk__topo_ngroups(t, self); g++) {
        fk__topo_group grp = fk__topo_group_at(t, self, g);
        unsigned k = fk__topo_members(t, self, g, m);
        for (unsigned i = 0; i < k; i++) {
            expect[m[i]] = grp.weight;
            group_of[m[i]] = g;
        }
        total += grp.n * grp.weight;
    }
    for (unsigned j = 0; j < P; j++)
        expect[j] /= total;

    const unsigned draws = 200000;
    /* Group totals: draw again with a copy of the state, count per group. */
    fk__victims v2 = v;
    unsigned long gcount[8] = {0};
    for (unsigned i = 0; i < draws; i++)
        gcount[group_of[fk__victim_pick(&v2)]]++;
    for (unsigned g = 0; g < fk__topo_ngroups(t, self); g++) {
        double p = fk__topo_group_at(t, self, g).prob, e = p * draws, sd = sqrt(draws * p * (1 - p));
        ASSERT_MSG(fabs(gcount[g] - e) <= 6 * sd, "group %u: %lu draws, expected %.0f +- %.0f", g, gcount[g], e, 6 * sd);
    }

    double stat;
    unsigned df;
    double p = chi2_victims(&v, expect, P, draws, &stat, &df);
    printf("  %s, worker %u: chi-squared %.1f, df %u, p = %.3g (%u draws)\n", spec, self, stat, df, p, draws);
    ASSERT_MSG(p > 1e-6, "victim frequencies do not match the weights: chi2 %.1f, df %u, p %.3g", stat, df, p);

    free(group_of);
    free(m);
    free(expect);
    fk__victims_free(&v); /* v2 shared v's tables */
    fk__topo_destroy(t);
}

TEST(sampled_frequencies) {
    sample_check("synthetic:pack:2 core:56 pu:1", 112, 0);
    sample_check("synthetic:pack:2 l3:4 core:7 pu:1", 56, 10);
}

/* Every round starts with each member of the closest group exactly once, in an order
 * that changes from round to round, also when a round is cut short. */
TEST(round_sweeps_closest_group) {
    fk__topo *t = make("synthetic:pack:2 core:56 pu:1", 112, FK__PLACE_COMPACT);
    fk__victims v;
    ASSERT_EQ(fk__victims_init_topo(&v, 0, t, 7), 0);
    ASSERT_EQ(v.nclose, 55);
    unsigned first[112] = {0};
    for (unsigned round = 0; round < 5000; round++) {
        ASSERT_EQ(fk__victim_round(&v), 55 + 8);
        unsigned seen[112] = {0};
        for (unsigned i = 0; i < 55; i++) {
            unsigned k = fk__victim_pick(&v);
            ASSERT_MSG(k >= 1 && k <= 55, "round %u pick %u: worker %u is not in the closest group", round, i, k);
            ASSERT_MSG(!seen[k]++, "round %u: worker %u picked twice", round, k);
            if (i == 0)
                first[k]++;
        }
        /* The rest of the round is weighted: anyone but self. */
        for (unsigned i = 0; i < 8; i++)
            ASSERT_NE(fk__victim_pick(&v), 0);
        if (round % 7 == 3) { /* a round cut short by a successful steal */
            fk__victim_round(&v);
            for (unsigned i = 0; i < 3; i++)
                fk__victim_pick(&v);
        }
    }
    /* Each member led some round (P(some member never leads in 5000) ~ 55 e^-91). */
    for (unsigned k = 1; k <= 55; k++)
        ASSERT_MSG(first[k] > 0, "worker %u never started a round", k);
    fk__victims_free(&v);
    fk__victims_free(&v); /* idempotent */
    ASSERT_EQ(v.policy, FK__VICTIM_UNIFORM);

    /* L3 machine: the closest group of worker 10 is its L3: 7-9, 11-13. */
    fk__topo *t3 = make("synthetic:pack:2 l3:4 core:7 pu:1", 56, FK__PLACE_COMPACT);
    ASSERT_EQ(fk__victims_init_topo(&v, 10, t3, 7), 0);
    fk__topo_destroy(t3); /* the victims state keeps its own copy */
    for (unsigned round = 0; round < 100; round++) {
        ASSERT_EQ(fk__victim_round(&v), 6 + 8);
        unsigned mask = 0;
        for (unsigned i = 0; i < 6; i++) {
            unsigned k = fk__victim_pick(&v);
            ASSERT((k >= 7 && k <= 9) || (k >= 11 && k <= 13));
            ASSERT(!(mask & 1u << (k - 7)));
            mask |= 1u << (k - 7);
        }
    }
    fk__victims_free(&v);
    fk__topo_destroy(t);
}

/* The uniform policy is still there, unchanged: any other worker, equally likely. */
TEST(uniform_policy) {
    fk__victims v, w;
    fk__victims_init(&v, 3, 8, 99);
    fk__victims_init(&w, 3, 8, 99);
    ASSERT_EQ(v.policy, FK__VICTIM_UNIFORM);
    ASSERT_EQ(fk__victim_round(&v), 7);
    double expect[8];
    for (unsigned j = 0; j < 8; j++)
        expect[j] = j == 3 ? 0 : 1.0 / 7;
    for (unsigned i = 0; i < 1000; i++) /* equal seeds, equal sequences */
        ASSERT_EQ(fk__victim_pick(&v), fk__victim_pick(&w));
    double stat;
    unsigned df;
    double p = chi2_victims(&v, expect, 8, 70000, &stat, &df);
    ASSERT_MSG(p > 1e-6, "uniform victims: chi2 %.1f, df %u, p %.3g", stat, df, p);
    fk__victims_free(&v); /* nothing to free */

    fk__victims_init(&v, 0, 20, 1);
    ASSERT_EQ(fk__victim_round(&v), 8);
    fk__victims_init(&v, 0, 1, 1);
    ASSERT_EQ(fk__victim_round(&v), 0);

    fk__victim_policy pol;
    ASSERT_EQ(fk__victim_policy_parse("topo", &pol), 0);
    ASSERT_EQ(pol, FK__VICTIM_TOPO);
    ASSERT_EQ(fk__victim_policy_parse("uniform", &pol), 0);
    ASSERT_EQ(pol, FK__VICTIM_UNIFORM);
    ASSERT_EQ(fk__victim_policy_parse("numa", &pol), FK_EINVAL);
    ASSERT(!strcmp(fk__victim_policy_name(FK__VICTIM_TOPO), "topo"));

    /* A one-worker topology: no groups, nothing to try. */
    fk__topo *t = make("synthetic:pack:1 core:2 pu:1", 1, FK__PLACE_COMPACT);
    ASSERT_EQ(fk__topo_ngroups(t, 0), 0);
    ASSERT_EQ(fk__victims_init_topo(&v, 0, t, 1), 0);
    ASSERT_EQ(fk__victim_round(&v), 0);
    fk__victims_free(&v);
    fk__topo_destroy(t);
}

/* ---- placement ----------------------------------------------------------------------- */

static void check_pus(const fk__topo *t, const int *expect, unsigned n) {
    ASSERT_EQ(fk__topo_workers(t), n);
    for (unsigned k = 0; k < n; k++)
        ASSERT_MSG(fk__topo_pu(t, k) == expect[k], "worker %u on PU %d, expected %d", k, fk__topo_pu(t, k), expect[k]);
}

TEST(placement_spread_compact) {
    /* 2 packages x 4 cores: compact fills package 0 first, spread alternates. */
    fk__topo *c = make("synthetic:pack:2 core:4 pu:1", 8, FK__PLACE_COMPACT);
    fk__topo *s = make("synthetic:pack:2 core:4 pu:1", 8, FK__PLACE_SPREAD);
    check_pus(c, (const int[]){0, 1, 2, 3, 4, 5, 6, 7}, 8);
    check_pus(s, (const int[]){0, 4, 1, 5, 2, 6, 3, 7}, 8);
    for (unsigned k = 0; k + 1 < 8; k++) /* consecutive workers: different packages */
        ASSERT_EQ(fk__topo_distance(s, k, k + 1), 3);
    ASSERT_EQ(fk__topo_distance(c, 0, 1), 2);
    ASSERT_EQ(fk__topo_distance(s, 0, 2), 2);
    char *out = printed(s);
    ASSERT_STR_CONTAINS(out, "placement spread");
    ASSERT_STR_CONTAINS(out, "worker 1 -> PU L#4 (P#4)  core L#4  package L#1");
    ASSERT_STR_CONTAINS(out, "worker 0: r=2 n=3 w=0.0833333 p=0.6923 {2,4,6} | r=3 n=4 w=0.0277778 p=0.3077 {1,3,5,7}");
    free(out);
    fk__topo_destroy(c);
    fk__topo_destroy(s);

    /* Fewer workers than PUs: spread still alternates packages. */
    s = make("synthetic:pack:2 core:4 pu:1", 3, FK__PLACE_SPREAD);
    check_pus(s, (const int[]){0, 4, 1}, 3);
    fk__topo_destroy(s);

    /* Spread recurses: packages, then the L3s within a package, then cores, then PUs. */
    s = make("synthetic:pack:2 l3:2 core:2 pu:2", 16, FK__PLACE_SPREAD);
    check_pus(s, (const int[]){0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15}, 16);
    ASSERT_EQ(fk__topo_distance(s, 0, 8), 1); /* PUs 0 and 1: hyperthreads of one core */
    fk__topo_destroy(s);

    /* Placement none: nothing placed, everyone at distance 1, one node, one group. */
    fk__topo *z = make("synthetic:pack:2 core:4 pu:1", 6, FK__PLACE_NONE);
    ASSERT_EQ(fk__topo_pu(z, 0), -1);
    ASSERT_EQ(fk__topo_pu_os(z, 5), -1);
    ASSERT_EQ(fk__topo_distance(z, 0, 5), 1);
    ASSERT_EQ(fk__topo_nnodes(z), 1);
    ASSERT_EQ(fk__topo_ngroups(z, 2), 1);
    check_group(z, 2, 0, 1, 5, 1.0 / 5);
    ASSERT(!fk__topo_pins(z));
    out = printed(z);
    ASSERT_STR_CONTAINS(out, "worker 5 -> unplaced  node 0");
    free(out);
    fk__topo_destroy(z);

    fk__topo_place p;
    ASSERT_EQ(fk__topo_place_parse("spread", &p), 0);
    ASSERT_EQ(p, FK__PLACE_SPREAD);
    ASSERT_EQ(fk__topo_place_parse("none", &p), 0);
    ASSERT_EQ(p, FK__PLACE_NONE);
    ASSERT_EQ(fk__topo_place_parse("compact", &p), 0);
    ASSERT_EQ(p, FK__PLACE_COMPACT);
    ASSERT_EQ(fk__topo_place_parse("scatter", &p), FK_EINVAL);
    ASSERT(!strcmp(fk__topo_place_name(FK__PLACE_SPREAD), "spread"));
}

/* 8 workers on 2 PUs: round-robin, oversubscribed, not pinned; workers sharing a PU are as
 * far apart as their PU is from the nearest other PU (never each other's closest victims).
 * Tree: Machine (0) > Package (1) > Core (2) > PU (3): PUs 0 and 1 meet at the package,
 * r = 2, so every other worker is at r = 2: one group of 7. */
TEST(oversubscribed) {
    fk__topo *t = make("synthetic:pack:1 core:2 pu:1", 8, FK__PLACE_COMPACT);
    check_pus(t, (const int[]){0, 1, 0, 1, 0, 1, 0, 1}, 8);
    ASSERT(fk__topo_oversubscribed(t));
    ASSERT(!fk__topo_pins(t));
    ASSERT_EQ(fk__topo_bind(t, 0), 0); /* nothing to do */
    ASSERT_EQ(fk__topo_distance(t, 0, 2), 2);
    ASSERT_EQ(fk__topo_distance(t, 0, 1), 2);
    ASSERT_EQ(fk__topo_ngroups(t, 0), 1);
    check_group(t, 0, 0, 2, 7, 1.0 / 28);
    check_members(t, 0, 0, (const unsigned[]){1, 2, 3, 4, 5, 6, 7}, 7);
    char *out = printed(t);
    ASSERT_STR_CONTAINS(out, "workers: 8 on 2 PUs, placement compact, oversubscribed");
    free(out);
    fk__topo_destroy(t);

    /* 6 workers on "pack:2 core:2 pu:1" (4 PUs, compact 0 1 2 3 0 1): worker 0 shares PU 0
     * with worker 4; PU 0's nearest other PU is PU 1 (same package, r = 2), so 4 joins the
     * r = 2 group {1, 5}; the other package's workers 2, 3 stay at r = 3. */
    t = make("synthetic:pack:2 core:2 pu:1", 6, FK__PLACE_COMPACT);
    check_pus(t, (const int[]){0, 1, 2, 3, 0, 1}, 6);
    ASSERT_EQ(fk__topo_distance(t, 0, 4), 2);
    ASSERT_EQ(fk__topo_distance(t, 0, 2), 3);
    ASSERT_EQ(fk__topo_ngroups(t, 0), 2);
    check_members(t, 0, 0, (const unsigned[]){1, 4, 5}, 3);
    check_members(t, 0, 1, (const unsigned[]){2, 3}, 2);
    /* a worker alone on its PU (2) sees 0 and 4 at the same distance */
    ASSERT_EQ(fk__topo_distance(t, 2, 0), fk__topo_distance(t, 2, 4));
    fk__topo_destroy(t);

    /* one PU only: every other worker at distance 1 */
    t = make("synthetic:pack:1 core:1 pu:1", 3, FK__PLACE_COMPACT);
    ASSERT_EQ(fk__topo_distance(t, 0, 1), 1);
    ASSERT_EQ(fk__topo_ngroups(t, 0), 1);
    fk__topo_destroy(t);

    /* More than FK_MAX_WORKERS PUs, workers = 0: capped. */
    t = make("synthetic:pack:2 core:600 pu:1", 0, FK__PLACE_COMPACT);
    ASSERT_EQ(fk__topo_workers(t), FK_MAX_WORKERS);
    ASSERT(!fk__topo_oversubscribed(t));
    fk__topo_destroy(t);
}

/* ---- NUMA nodes ---------------------------------------------------------------------- */

TEST(numa_nodes) {
    /* One NUMA node per package (memory children of the packages). */
    fk__topo *t = make("synthetic:pack:2 numa:1 core:4 pu:1", 8, FK__PLACE_COMPACT);
    ASSERT_EQ(fk__topo_nnodes(t), 2);
    const unsigned *nodes = fk__topo_nodes(t);
    for (unsigned k = 0; k < 8; k++) {
        ASSERT_EQ(fk__topo_node(t, k), k / 4);
        ASSERT_EQ(nodes[k], k / 4);
    }
    char *out = printed(t);
    ASSERT_STR_CONTAINS(out, "levels: Machine:1 Package:2 Core:8 PU:8; NUMANode:2");
    ASSERT_STR_CONTAINS(out, "worker 4 -> PU L#4 (P#4)  core L#4  package L#1  node 1 (NUMANode L#1)");
    free(out);
    fk__topo_destroy(t);

    t = make("synthetic:pack:2 numa:1 core:4 pu:1", 8, FK__PLACE_SPREAD);
    for (unsigned k = 0; k < 8; k++)
        ASSERT_EQ(fk__topo_node(t, k), k % 2);
    fk__topo_destroy(t);

    /* Two compact workers fit in package 0: one node in use, numbered 0. */
    t = make("synthetic:pack:2 numa:1 core:4 pu:1", 2, FK__PLACE_COMPACT);
    ASSERT_EQ(fk__topo_nnodes(t), 1);
    ASSERT_EQ(fk__topo_node(t, 1), 0);
    fk__topo_destroy(t);

    /* Five compact workers: four on node 0, one on node 1. */
    t = make("synthetic:pack:2 numa:1 core:4 pu:1", 5, FK__PLACE_COMPACT);
    ASSERT_EQ(fk__topo_nnodes(t), 2);
    ASSERT_EQ(fk__topo_node(t, 4), 1);
    fk__topo_destroy(t);

    /* No NUMA level in the description: hwloc adds one node for the machine. */
    t = make("synthetic:pack:2 core:4 pu:1", 8, FK__PLACE_COMPACT);
    ASSERT_EQ(fk__topo_nnodes(t), 1);
    for (unsigned k = 0; k < 8; k++)
        ASSERT_EQ(fk__topo_node(t, k), 0);
    fk__topo_destroy(t);

    /* NUMA nodes under groups. */
    t = make("synthetic:numa:2 core:2 pu:2", 8, FK__PLACE_COMPACT);
    ASSERT_EQ(fk__topo_nnodes(t), 2);
    for (unsigned k = 0; k < 8; k++)
        ASSERT_EQ(fk__topo_node(t, k), k / 4);
    fk__topo_destroy(t);

    ASSERT(fk__topo_nodes(NULL) == NULL); /* no topology: one lazy-scheduler group */
}

/* ---- XML ----------------------------------------------------------------------------- */

static void same_topology(const fk__topo *a, const fk__topo *b) {
    unsigned n = fk__topo_workers(a);
    ASSERT_EQ(fk__topo_workers(b), n);
    ASSERT_EQ(fk__topo_npus(b), fk__topo_npus(a));
    ASSERT_EQ(fk__topo_nnodes(b), fk__topo_nnodes(a));
    for (unsigned i = 0; i < n; i++) {
        ASSERT_EQ(fk__topo_pu(b, i), fk__topo_pu(a, i));
        ASSERT_EQ(fk__topo_node(b, i), fk__topo_node(a, i));
        for (unsigned j = 0; j < n; j++)
            ASSERT_EQ(fk__topo_distance(b, i, j), fk__topo_distance(a, i, j));
        ASSERT_EQ(fk__topo_ngroups(b, i), fk__topo_ngroups(a, i));
        for (unsigned g = 0; g < fk__topo_ngroups(a, i); g++) {
            fk__topo_group x = fk__topo_group_at(a, i, g), y = fk__topo_group_at(b, i, g);
            ASSERT_EQ(x.dist, y.dist);
            ASSERT_EQ(x.n, y.n);
            ASSERT(x.weight == y.weight);
        }
    }
    /* The printed summaries agree but for the source and why nothing is pinned. */
    char *pa = printed(a), *pb = printed(b);
    const char *ra = strstr(pa, "\npinning: "), *rb = strstr(pb, "\npinning: ");
    ASSERT(ra && rb);
    ra = strchr(ra + 1, '\n'); /* the end of the pinning line: the rest must agree */
    rb = strchr(rb + 1, '\n');
    ASSERT(ra && rb && !strcmp(ra, rb));
    ASSERT(strlen(ra) > 100);
    free(pa);
    free(pb);
}

TEST(xml_round_trip) {
    const char *desc = "pack:2 numa:1 l3:2 core:3 pu:2";
    hwloc_topology_t hw;
    ASSERT_EQ(hwloc_topology_init(&hw), 0);
    ASSERT_EQ(hwloc_topology_set_synthetic(hw, desc), 0);
    ASSERT_EQ(hwloc_topology_load(hw), 0);
    char path[] = "/tmp/fk_topo_XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    close(fd);
    ASSERT_EQ(hwloc_topology_export_xml(hw, path, 0), 0);
    hwloc_topology_destroy(hw);

    char syn[128], xml[128];
    snprintf(syn, sizeof syn, "synthetic:%s", desc);
    snprintf(xml, sizeof xml, "xml:%s", path);
    for (int place = FK__PLACE_COMPACT; place <= FK__PLACE_SPREAD; place++) {
        unsigned counts[] = {24, 10, 30};
        for (unsigned c = 0; c < 3; c++) {
            fk__topo *a = make(syn, counts[c], (fk__topo_place)place);
            fk__topo *b = make(xml, counts[c], (fk__topo_place)place);
            ASSERT_EQ(fk__topo_kind_of(b), FK__TOPO_XML);
            ASSERT(!fk__topo_pins(b));
            ASSERT_STR_CONTAINS(fk__topo_pin_reason(b), "XML");
            same_topology(a, b);
            fk__topo_destroy(a);
            fk__topo_destroy(b);
        }
    }
    unlink(path);
}

/* ---- errors -------------------------------------------------------------------------- */

static void expect_error(const char *spec, unsigned workers, int code, const char *needle) {
    char err[512] = "";
    fk__topo *t = (fk__topo *)(uintptr_t)0x1;
    int rc = fk__topo_create(&t, &(fk__topo_opts){.spec = spec, .workers = workers}, err, sizeof err);
    ASSERT_MSG(rc == code, "%s: got %d, expected %d (%s)", spec, rc, code, err);
    ASSERT(t == (fk__topo *)(uintptr_t)0x1); /* untouched */
    ASSERT_STR_CONTAINS(err, needle);
    ASSERT_EQ(fk__topo_create(&t, &(fk__topo_opts){.spec = spec, .workers = workers}, NULL, 0), code);
    char tiny[8];
    ASSERT_EQ(fk__topo_create(&t, &(fk__topo_opts){.spec = spec, .workers = workers}, tiny, sizeof tiny), code);
    ASSERT(strlen(tiny) < sizeof tiny);
}

TEST(errors) {
    expect_error("synthetic:pack:2 bogus:3 pu:1", 0, FK_ETOPO, "\"pack:2 bogus:3 pu:1\"");
    expect_error("synthetic:pack:2 core:0 pu:1", 0, FK_ETOPO, "pack:2 core:0 pu:1");
    expect_error("synthetic:", 0, FK_ETOPO, "synthetic:");
    expect_error("xml:/nonexistent/fk_topo.xml", 0, FK_ETOPO, "/nonexistent/fk_topo.xml");
    expect_error("xml:/nonexistent/fk_topo.xml", 0, FK_ETOPO, "No such file");
    expect_error("pack:2 core:4", 0, FK_EINVAL, "\"pack:2 core:4\"");
    expect_error("synthetic:pack:2 core:4 pu:1", 1025, FK_EINVAL, "1025 workers");
    expect_error("", 2000, FK_EINVAL, "topology \"(this machine)\": 2000 workers requested, at most 1024");
    /* Descriptions hwloc would take minutes to build (found by fuzzing; each refused at once,
     * the watchdog fails the case otherwise): a level wider than 1,024, in decimal, hex,
     * without a space before the next level; more than 2,048 PUs in all; more than 6,144
     * objects in all levels (levels of one beneath wide ones). */
    expect_error("synthetic:33332", 0, FK_EINVAL, "a level of 33332 objects");
    expect_error("synthetic:pack:7777core:7 pu:1", 0, FK_EINVAL, "a level of 7777 objects");
    expect_error("synthetic:0x86000044", 0, FK_EINVAL, "at most 1024 per level");
    expect_error("synthetic:2048", 0, FK_EINVAL, "a level of 2048 objects");
    expect_error("synthetic:pack:64 core:64 pu:8", 0, FK_EINVAL, "over 2048 PUs");
    expect_error("synthetic:1024 4 1 1 1 1 1 1 1 1", 0, FK_EINVAL, "over 2048 PUs");
    expect_error("synthetic:1024 1 1 1 1 1 2", 0, FK_EINVAL, "over 6144 objects");
    /* ... while attributes and wide-but-allowed machines still load */
    fk__topo *big;
    char berr[256];
    ASSERT_EQ(fk__topo_create(&big, &(fk__topo_opts){.spec = "synthetic:pack:16 numa:1(memory=1GB) core:64 pu:2",
                                                      .workers = 4}, berr, sizeof berr), 0);
    fk__topo_destroy(big);
    ASSERT_EQ(fk__topo_create(&big, &(fk__topo_opts){.spec = "synthetic:1024 1 1 1 2", .workers = 4}, berr,
                              sizeof berr), 0); /* the most objects allowed, 6,144 */
    fk__topo_destroy(big);

    /* A file that is not XML. */
    char path[] = "/tmp/fk_topo_XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    ASSERT_EQ(write(fd, "not xml\n", 8), 8);
    close(fd);
    char spec[64];
    snprintf(spec, sizeof spec, "xml:%s", path);
    expect_error(spec, 0, FK_ETOPO, path);
    unlink(path);

    char err[256];
    fk__topo *t;
    ASSERT_EQ(fk__topo_create(&t, &(fk__topo_opts){.place = (fk__topo_place)7}, err, sizeof err), FK_EINVAL);
    ASSERT_STR_CONTAINS(err, "placement");
}

/* The public fk_topology_describe (what `forkscope topology` prints): the same placement as
 * the internal topology, victim groups included, and the same errors. */
TEST(describe_public) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ASSERT(f);
    char err[256] = "";
    fk_pool_opts o = {.topology = "synthetic:pack:2 core:4 pu:1", .workers = 3, .placement = FK_PLACE_SPREAD};
    ASSERT_EQ(fk_topology_describe(&o, f, err, sizeof err), 0);
    fclose(f);
    ASSERT_STR_CONTAINS(buf, "workers: 3 on 8 PUs, placement spread");
    ASSERT_STR_CONTAINS(buf, "worker 1 -> PU L#4"); /* spread: the second worker on the other package */
    ASSERT_STR_CONTAINS(buf, "victim groups");
    free(buf);
    o.topology = "synthetic:pack:2 bogus:3";
    ASSERT_EQ(fk_topology_describe(&o, stdout, err, sizeof err), FK_ETOPO);
    ASSERT_STR_CONTAINS(err, "bogus:3");
}

/* ---- this machine -------------------------------------------------------------------- */

TEST(real_machine) {
    fk__topo *t = make(NULL, 0, FK__PLACE_COMPACT);
    unsigned n = fk__topo_workers(t);
    ASSERT_GE(n, 1);
    ASSERT_EQ(n, fk__topo_npus(t));
    ASSERT_EQ(fk__topo_kind_of(t), FK__TOPO_MACHINE);
    for (unsigned k = 0; k < n; k++) {
        ASSERT_EQ(fk__topo_pu(t, k), (int)k);
        ASSERT_GE(fk__topo_pu_os(t, k), 0);
        ASSERT_LT(fk__topo_node(t, k), fk__topo_nnodes(t));
    }
    ASSERT_MSG(fk__topo_pins(t), "not pinning: %s", fk__topo_pin_reason(t));
    char *out = printed(t);
    ASSERT_STR_CONTAINS(out, "topology: this machine");
    ASSERT_STR_CONTAINS(out, "pinning: yes");
    printf("  this machine: %.*s\n", (int)(strchr(strstr(out, "levels:"), '\n') - strstr(out, "levels:")),
           strstr(out, "levels:"));
    free(out);

    /* Bind the calling thread to each worker's PU in turn and ask hwloc where it is. */
    hwloc_topology_t hw;
    ASSERT_EQ(hwloc_topology_init(&hw), 0);
    ASSERT_EQ(hwloc_topology_load(hw), 0);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    ASSERT(set);
    unsigned last = n - 1;
    for (unsigned k = 0; k <= last; k += last ? last : 1) {
        ASSERT_EQ(fk__topo_bind(t, k), 0);
        ASSERT_EQ(hwloc_get_cpubind(hw, set, HWLOC_CPUBIND_THREAD), 0);
        ASSERT_EQ(hwloc_bitmap_weight(set), 1);
        ASSERT_EQ(hwloc_bitmap_first(set), fk__topo_pu_os(t, k));
    }
    fk__topo_destroy(t);

    /* One worker more than PUs: oversubscribed, so not pinned, and bind does nothing. */
    t = make("", n + 1, FK__PLACE_COMPACT);
    ASSERT(fk__topo_oversubscribed(t));
    ASSERT(!fk__topo_pins(t));
    ASSERT_STR_CONTAINS(fk__topo_pin_reason(t), "more workers than PUs");
    ASSERT_EQ(fk__topo_pu(t, n), 0);
    unsigned nearest = n > 1 ? ~0u : 1; /* worker n shares PU 0: as far as PU 0's nearest other PU */
    for (unsigned k = 1; k < n; k++)
        if (fk__topo_distance(t, 0, k) < nearest)
            nearest = fk__topo_distance(t, 0, k);
    ASSERT_EQ(fk__topo_distance(t, 0, n), nearest);
    ASSERT_EQ(fk__topo_bind(t, 0), 0);
    ASSERT_EQ(hwloc_get_cpubind(hw, set, HWLOC_CPUBIND_THREAD), 0);
    ASSERT_EQ(hwloc_bitmap_first(set), fk__topo_pu_os(t, last)); /* still where the loop left it */
    fk__topo_destroy(t);

    /* Placement none: never pinned. */
    t = make(NULL, n, FK__PLACE_NONE);
    ASSERT(!fk__topo_pins(t));
    ASSERT_STR_CONTAINS(fk__topo_pin_reason(t), "placement none");
    fk__topo_destroy(t);

    ASSERT_EQ(fk__topo_bind(NULL, 0), 0);
    fk__topo_destroy(NULL);
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(hw);
}

/* The largest pool: 1024 workers, every worker's victim tables; fast enough to build at
 * pool creation. */
TEST(large_pool) {
    double t0 = test_now();
    fk__topo *t = make("synthetic:pack:4 l3:8 core:16 pu:2", FK_MAX_WORKERS, FK__PLACE_COMPACT);
    double t1 = test_now();
    fk__victims *v = calloc(FK_MAX_WORKERS, sizeof *v);
    ASSERT(v);
    for (unsigned k = 0; k < FK_MAX_WORKERS; k++)
        ASSERT_EQ(fk__victims_init_topo(&v[k], k, t, 5), 0);
    double t2 = test_now();
    /* Machine (0) > Package (1) > L3 (2) > Core (3) > PU (4).  Worker 0: its hyperthread
     * (r = 4 - 3 = 1, n = 1), the 30 PUs of its L3's other 15 cores (r = 2), the 224 PUs
     * of its package's other 7 L3s (r = 3), the 768 of the other 3 packages (r = 4). */
    ASSERT_EQ(fk__topo_ngroups(t, 0), 4);
    check_group(t, 0, 0, 1, 1, 1.0);
    check_group(t, 0, 1, 2, 30, 1.0 / (30 * 4));
    check_group(t, 0, 2, 3, 224, 1.0 / (224 * 9));
    check_group(t, 0, 3, 4, 768, 1.0 / (768 * 16));
    for (unsigned k = 0; k < FK_MAX_WORKERS; k++) {
        fk__victim_round(&v[k]);
        for (unsigned i = 0; i < 20; i++)
            ASSERT_NE(fk__victim_pick(&v[k]), k);
        fk__victims_free(&v[k]);
    }
    FILE *null = fopen("/dev/null", "w");
    ASSERT(null);
    fk__topo_print(t, null);
    fclose(null);
    double t3 = test_now();
    printf("  1024 workers: topology %.1f ms, victim tables %.1f ms, print %.1f ms\n", (t1 - t0) * 1e3,
           (t2 - t1) * 1e3, (t3 - t2) * 1e3);
    free(v);
    fk__topo_destroy(t);
}

int main(int argc, char **argv) {
    return test_main(argc, argv,
                     (struct test_case[]){
                         TEST_CASE(chi2_pvalue_function, 10),
                         TEST_CASE(weights_2x56, 10),
                         TEST_CASE(weights_l3, 10),
                         TEST_CASE(sampled_frequencies, 30),
                         TEST_CASE(round_sweeps_closest_group, 30),
                         TEST_CASE(uniform_policy, 10),
                         TEST_CASE(placement_spread_compact, 10),
                         TEST_CASE(oversubscribed, 10),
                         TEST_CASE(numa_nodes, 10),
                         TEST_CASE(xml_round_trip, 10),
                         TEST_CASE(errors, 10),
                         TEST_CASE(describe_public, 10),
                         TEST_CASE(real_machine, 10),
                         TEST_CASE(large_pool, 30),
                         {0},
                     });
}
