/* plan.c — cells, runs and their order; the time a run is estimated to take (plan.h). */
#include "harness/run/plan.h"
#include "harness/util/errors.h"
#include "harness/util/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/config/command.h"

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
                          hx_variant_runs_kernel(&cfg->variants[v], cfg->benchmarks[b].kernel);
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
                if (!hx_variant_runs_kernel(&cfg->variants[v], cfg->benchmarks[b].kernel)) {
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

double hx_plan_estimate(const hx_plan_cell *c, unsigned cores) {
    /* process start, pool creation and teardown (OpenMP drivers re-exec themselves) */
    const double start = c->var->kind == HX_VARIANT_SERIAL ? 0.015 : 0.03;
    if (!c->bench)
        return start;
    /* the kernel's own model (its description: bench/options.h) */
    const hx_kernel_info *k = hx_kernels_find(c->bench->kernel);
    bench_vals v;
    if (!k || !k->model.serial_s || hx_kernels_vals(c->bench, &v))
        return start;
    double ts = k->model.serial_s(&v, c->var->kind == HX_VARIANT_SERIAL);
    double rt = k->model.runtime, omp = k->model.omp, untimed = k->model.untimed * ts;
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
    double turns = !strcmp(c->var->base, "omp-llvm") ? 1 : !strncmp(c->var->base, "child-", 6) ? 0.4 : 0.1;
    double over = c->workers > cores ? 1 + turns * ((double)c->workers / cores - 1) : 1;
    return start + untimed + (c->warmup + c->preps) * ts * f * over / (par > 0 ? par : 1);
}

