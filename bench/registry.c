/* registry.c — the kernels a driver knows, option parsing, and the calibrate kernel. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"

#if defined(FK_BASELINE_OMP)
#include <omp.h>
#endif

#define BENCH_KERNEL_ADDR_(k) &bench_##k,
const bench_kernel *const bench_kernels[] = {BENCH_KERNEL_LIST(BENCH_KERNEL_ADDR_) & bench_calibrate, NULL};

const bench_kernel *bench_find(const char *name) {
    for (size_t k = 0; bench_kernels[k]; k++)
        if (!strcmp(bench_kernels[k]->desc->name, name))
            return bench_kernels[k];
    return NULL;
}


const char *bench_variant(void) {
#if defined(FK_BASELINE_SERIAL)
    return "serial";
#elif defined(FK_BASELINE_TBB)
    return "tbb";
#elif defined(FK_BASELINE_PEER)
    return bench_peer_name;
#elif defined(FK_BASELINE_OMP) && defined(__clang__)
    return "omp-llvm";
#elif defined(FK_BASELINE_OMP)
    return "omp";
#else
    return fk_build_variant();
#endif
}

int bench_opt_index(const bench_kernel *k, const char *name) { return bench_opt_find(k->desc->opts, name); }

/* ---- the calibrate kernel: the same process doing no work -------------------------------- */

#if FK_BENCH_RUNTIME
FK_LEAF_TASK(nothing, int, (int, x)) {
    FK_RETURN(x);
} FK_END
#endif

static void calibrate_run(bench_ctx *c) {
#if FK_BENCH_RUNTIME
    int r;
    FK_RUN(c->pool, &r, nothing, 0);
#elif defined(FK_BASELINE_OMP)
#pragma omp parallel num_threads(c->workers)
    {
        (void)0;
    }
#elif defined(FK_BASELINE_TBB)
    (void)c;
    bench_tbb_noop();
#elif defined(FK_BASELINE_PEER)
    (void)c;
    bench_peer_noop();
#else
    (void)c;
#endif
}

static int calibrate_verify(bench_ctx *c) {
    json_object_set_new(c->out, "answer", json_integer(0));
    return 1;
}

static const bench_opt calibrate_opts[] = {{0}};
/* (not in the harness's list of kernels: it is the sweep's calibrate cell, not a benchmark) */
static const bench_desc calibrate_desc = {
    .name = "calibrate",
    .summary = "no work: the process's baseline memory and start-up (the paper's calibrate run)",
    .opts = calibrate_opts,
    .small = (const char *const[]){"", NULL},
};
const bench_kernel bench_calibrate = {
    .desc = &calibrate_desc,
    .run = calibrate_run,
    .verify = calibrate_verify,
    BENCH_PEER_VERSION(bench_peer_noop)
};

/* ---- options (parsed by options.c: the harness's own parser) ------------------------------- */

int bench_set_opt(bench_ctx *c, int idx, const char *flag, const char *val, char *err, size_t errlen) {
    return bench_vals_set(c->kernel->desc->opts, &c->v, idx, flag, val, err, errlen);
}

int bench_ctx_init(bench_ctx *c, const bench_kernel *k) {
    memset(c, 0, sizeof *c);
    c->kernel = k;
    c->workers = 1;
    char err[256];
    if (bench_vals_defaults(k->desc->opts, &c->v, err, sizeof err)) {
        fprintf(stderr, "internal error: default of %s: %s\n", k->desc->name, err);
        return -1;
    }
    c->out = json_object();
    return 0;
}
