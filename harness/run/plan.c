/* plan.c — cells, runs and their order; the time a run is estimated to take (plan.h). */
#include "harness/run/plan.h"
#include "harness/util/errors.h"
#include "harness/util/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/config/command.h"
#include "uts/tree.h"

/* ---- the plan ------------------------------------------------------------------------------ */

/* The plan's types (sweep.h), by their short names here. */
typedef hx_plan_cell cell;
typedef hx_planned_run run;
typedef hx_plan plan;

void hx_plan_free(hx_plan *p) {
    for (size_t i = 0; i < p->ncells; i++)
        free(p->cells[i].times);
    free(p->cells);
    free(p->runs);
    memset(p, 0, sizeof *p);
}

static int add_cell(plan *p, size_t cap, const hx_config *cfg, const hx_bench *b, const hx_variant *v, unsigned P) {
    if (p->ncells >= cap)
        return HX_EINTERNAL;
    cell *c = &p->cells[p->ncells++];
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "%s|%s|%u", b ? b->name : "calibrate", v->name, P);
    c->bench = b;
    c->var = v;
    c->workers = P;
    int cls = hx_config_variant_class(v);
    c->reps = cfg->reps[cls];
    c->warmup = cfg->warmup[cls];
    c->preps = v->kind == HX_VARIANT_COMMAND ? 1 : cfg->preps[cls];
    c->oversub = P > cfg->cores;
    if (hx_variant_driver_path(v, c->driver, sizeof c->driver))
        snprintf(c->driver, sizeof c->driver, "%s", v->driver);
    c->times = hx_xcalloc(c->reps ? c->reps : 1, sizeof *c->times);
    return 0;
}

/* splitmix64: a tiny, well-mixed generator whose sequence is the same everywhere. */
static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Cells i and j are compared with each other: the same benchmark (or both calibrate) at the
 * same P. */
static int same_family(const plan *p, size_t i, size_t j) {
    return p->cells[i].bench == p->cells[j].bench && p->cells[i].workers == p->cells[j].workers;
}

/* "paired": round by round, the runs of each family (its variants) back to back, in an order
 * drawn afresh for every family and round from the seed. */
static void paired_order(plan *p, unsigned maxreps, uint64_t seed) {
    size_t k = 0;
    for (unsigned r = 0; r < maxreps; r++)
        for (size_t i = 0; i < p->ncells; i++) {
            size_t first = 0;
            while (!same_family(p, first, i))
                first++;
            if (first != i)
                continue; /* not the first cell of its family: done with it */
            size_t start = k;
            for (size_t j = i; j < p->ncells; j++)
                if (same_family(p, i, j) && r < p->cells[j].reps)
                    p->runs[k++] = (run){(uint32_t)j, r};
            for (size_t n = k - start; n > 1; n--) {
                size_t x = start + (size_t)(splitmix64(&seed) % n);
                run t = p->runs[start + n - 1];
                p->runs[start + n - 1] = p->runs[x];
                p->runs[x] = t;
            }
        }
}

int hx_plan_build(const hx_config *cfg, hx_plan *p) {
    memset(p, 0, sizeof *p);
    size_t cap = (cfg->nbenchmarks + 1) * cfg->nvariants * cfg->nworkers;
    p->cells = hx_xcalloc(cap ? cap : 1, sizeof *p->cells);
    /* Calibrate cells first (they are short; a driver that cannot start shows at once),
     * for every variant some benchmark runs on. */
    unsigned long long used = 0;
    for (size_t b = 0; b < cfg->nbenchmarks; b++)
        used |= cfg->benchmarks[b].variants;
    for (size_t v = 0; cfg->calibrate && v < cfg->nvariants; v++)
        for (size_t w = 0; w < cfg->nworkers && (used >> v & 1); w++) {
            if (cfg->variants[v].kind == HX_VARIANT_SERIAL && cfg->workers[w] != 1)
                continue;
            int needed = 0; /* some benchmark runs this variant at this P */
            for (size_t b = 0; b < cfg->nbenchmarks; b++)
                needed |= (cfg->benchmarks[b].variants >> v & 1) && hx_config_bench_runs_at(&cfg->benchmarks[b], cfg->workers[w]) &&
                          hx_variant_runs_kernel(&cfg->variants[v], cfg->benchmarks[b].kernel, NULL);
            if (!needed || (cfg->variants[v].kind == HX_VARIANT_COMMAND && !hx_command_template(&cfg->variants[v], NULL)))
                continue; /* a command variant without a calibrate command: its memory is not calibrated */
            if (add_cell(p, cap, cfg, NULL, &cfg->variants[v], cfg->workers[w]))
                return HX_EINTERNAL;
        }
    p->ncalib = p->ncells;
    for (size_t b = 0; b < cfg->nbenchmarks; b++)
        for (size_t v = 0; v < cfg->nvariants; v++)
            for (size_t w = 0; w < cfg->nworkers && (cfg->benchmarks[b].variants >> v & 1); w++) {
                if (!hx_config_bench_runs_at(&cfg->benchmarks[b], cfg->workers[w]))
                    continue;
                if (cfg->variants[v].kind == HX_VARIANT_SERIAL && cfg->workers[w] != 1) {
                    p->nskipped_serial++;
                    continue;
                }
                if (cfg->variants[v].kind == HX_VARIANT_COMMAND &&
                    !hx_command_template(&cfg->variants[v], cfg->benchmarks[b].kernel)) {
                    p->nskipped_command++;
                    continue;
                }
                if (!hx_variant_runs_kernel(&cfg->variants[v], cfg->benchmarks[b].kernel, NULL)) {
                    p->nskipped_peer++;
                    continue;
                }
                if (hx_kernels_block(cfg->benchmarks[b].kernel) && !hx_variant_can_block(&cfg->variants[v])) {
                    p->nskipped_blocking++;
                    continue;
                }
                if (add_cell(p, cap, cfg, &cfg->benchmarks[b], &cfg->variants[v], cfg->workers[w]))
                    return HX_EINTERNAL;
            }
    unsigned maxreps = 0;
    for (size_t i = 0; i < p->ncells; i++) {
        p->nruns += p->cells[i].reps;
        maxreps = p->cells[i].reps > maxreps ? p->cells[i].reps : maxreps;
    }
    p->runs = hx_xcalloc(p->nruns ? p->nruns : 1, sizeof *p->runs);
    size_t k = 0;
    if (cfg->order == HX_ORDER_INTERLEAVED) {
        for (unsigned r = 0; r < maxreps; r++)
            for (size_t i = 0; i < p->ncells; i++)
                if (r < p->cells[i].reps)
                    p->runs[k++] = (run){(uint32_t)i, r};
    } else if (cfg->order == HX_ORDER_PAIRED) {
        paired_order(p, maxreps, cfg->seed);
    } else {
        for (size_t i = 0; i < p->ncells; i++)
            for (unsigned r = 0; r < p->cells[i].reps; r++)
                p->runs[k++] = (run){(uint32_t)i, r};
        if (cfg->order == HX_ORDER_SHUFFLED) {
            uint64_t s = cfg->seed;
            for (size_t i = p->nruns; i > 1; i--) {
                size_t j = (size_t)(splitmix64(&s) % i);
                run t = p->runs[i - 1];
                p->runs[i - 1] = p->runs[j];
                p->runs[j] = t;
            }
        }
    }
    return 0;
}

/* ---- estimates --------------------------------------------------------------------------------
 * A rough model (serial times measured on a 2-core Xeon VM, then per-variant overhead factors
 * and ideal speedup up to the core count), used when no earlier results exist.  Better:
 * the median wall time of the same cell in DIR/raw.jsonl from an earlier run. */

static double param(const hx_bench *b, const char *name) {
    json_t *v = json_object_get(b->params, name);
    if (json_is_number(v))
        return json_number_value(v);
    const hx_kernel_info *k = hx_kernels_find(b->kernel);
    for (const hx_kopt *o = k ? k->opts : NULL; o && o->name; o++)
        if (!strcmp(o->name, name))
            return atof(o->def);
    return 0;
}

static double uts_nodes(const hx_bench *b) {
    static const struct {
        const char *name;
        double nodes;
    } presets[] = {{"T1", 4130071},      {"T1L", 102181082}, {"T1XXL", 4230646601.0},
                   {"T3", 4112897},      {"T3L", 111345631}, {"T3XXL", 2793220501.0}};
    const char *pre = json_string_value(json_object_get(b->params, "preset"));
    for (size_t i = 0; pre && i < sizeof presets / sizeof presets[0]; i++)
        if (!strcmp(pre, presets[i].name))
            return presets[i].nodes;
    int t = (int)param(b, "t"), a = (int)param(b, "a"), d = (int)param(b, "d");
    double b0 = param(b, "b"), q = param(b, "q"), m = param(b, "m");
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

double hx_plan_estimate(const hx_plan_cell *c, unsigned cores) {
    /* process start, pool creation and teardown (OpenMP drivers re-exec themselves) */
    const double start = c->var->kind == HX_VARIANT_SERIAL ? 0.015 : 0.03;
    if (!c->bench)
        return start;
    const hx_bench *b = c->bench;
    double ts = 0.01, rt = 1.5, omp = 5, untimed = 0;
    if (!strcmp(b->kernel, "fib")) {
        ts = 0.02 * pow(1.6180339887, param(b, "n") - 30);
        rt = 2.5, omp = 40;
    } else if (!strcmp(b->kernel, "integrate")) {
        ts = 0.15 * pow(param(b, "n") / 1000, 1.44) * pow(param(b, "eps") / 1e-9, -0.41);
        rt = 2, omp = 20;
    } else if (!strcmp(b->kernel, "matmul")) {
        double n = param(b, "n");
        ts = 7e-10 * n * n * n;
        rt = 1.0, omp = 1.1, untimed = 2 * ts; /* inputs and verification */
    } else if (!strcmp(b->kernel, "nqueens")) {
        ts = 0.0077 * pow(5.0, param(b, "n") - 10);
        rt = 1.2, omp = 3;
    } else if (!strcmp(b->kernel, "uts")) {
        ts = 1.7e-7 * param(b, "g") * uts_nodes(b);
        rt = 1.5, omp = 1; /* measured on T3: libomp 1.4x, TBB 1.5x serial */
    } else if (!strcmp(b->kernel, "balanced") || !strcmp(b->kernel, "imbalanced")) {
        double n = param(b, "n"), heavy = b->kernel[0] == 'b' ? n : ceil(n / param(b, "every"));
        double steps = b->kernel[0] == 'b' ? n * param(b, "iters")
                                           : heavy * param(b, "heavy") + (n - heavy) * param(b, "light");
        ts = 1.42e-9 * steps; /* an LCG step: about 4 cycles */
        rt = omp = 1.0;
    } else if (!strcmp(b->kernel, "heat")) {
        double n = param(b, "n");
        ts = 0.86e-9 * n * n * param(b, "steps") * (2 + param(b, "heavy")) / 3;
        rt = omp = 1.1;
    } else if (!strcmp(b->kernel, "bfs")) {
        ts = 1.3e-8 * param(b, "n") * param(b, "degree");
        rt = omp = 1.3, untimed = 2 * ts; /* the graph, and the serial search that checks */
    } else if (!strcmp(b->kernel, "mergesort")) {
        double n = param(b, "n");
        ts = 4.7e-9 * n * log2(n > 2 ? n : 2);
        rt = omp = 1.0;
    } else if (!strcmp(b->kernel, "switch")) { /* hand-offs: 27 us between threads, 50 ns between fibers */
        ts = 2 * param(b, "rounds") * (c->var->kind == HX_VARIANT_SERIAL ? 27e-6 : 50e-9);
        rt = 1;
    }
    /* (a peer is priced like a forkscope variant: Lace's per-task cost is of that order) */
    double f = c->var->kind == HX_VARIANT_SERIAL                                    ? 1
               : c->var->kind == HX_VARIANT_BASELINE && !hx_variant_is_peer(c->var) ? omp
                                                                                     : rt;
    if (!strcmp(c->var->base, "omp-llvm"))
        f *= 2;
    if (!strcmp(c->var->base, "tbb")) /* measured: fib 30 about 15x, integrate 6x serial */
        f = f * 0.4 > 1 ? f * 0.4 : 1;
    double par = c->workers < cores ? c->workers : cores;
    /* Oversubscribed, the work is the same but idle workers take turns on the cores: measured on
     * UTS T3 at P = 16 on 2 cores against P = 2, libomp (whose idle threads spin) 13x, child
     * stealing 4.5x (a thief that finds nothing yields and retries), cont-seg and TBB 1.2-1.5x. */
    double k = !strcmp(c->var->base, "omp-llvm") ? 1 : !strncmp(c->var->base, "child-", 6) ? 0.4 : 0.1;
    double over = c->workers > cores ? 1 + k * ((double)c->workers / cores - 1) : 1;
    return start + untimed + (c->warmup + c->preps) * ts * f * over / (par > 0 ? par : 1);
}

