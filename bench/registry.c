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

const bench_kernel *const bench_kernels[] = {&bench_fib,      &bench_integrate, &bench_matmul,    &bench_nqueens,
                                             &bench_uts,      &bench_balanced,  &bench_imbalanced, &bench_heat,
                                             &bench_bfs,      &bench_mergesort, &bench_switch,     &bench_calibrate,
                                             NULL};

const bench_kernel *bench_find(const char *name) {
    for (size_t k = 0; bench_kernels[k]; k++)
        if (!strcmp(bench_kernels[k]->name, name))
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

int bench_opt_index(const bench_kernel *k, const char *name) {
    for (int i = 0; k->opts[i].name; i++)
        if (!strcmp(k->opts[i].name, name))
            return i;
    return -1;
}

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
const bench_kernel bench_calibrate = {
    .name = "calibrate",
    .summary = "no work: the process's baseline memory and start-up (the paper's calibrate run)",
    .opts = calibrate_opts,
    .run = calibrate_run,
    .verify = calibrate_verify,
};

/* ---- options ------------------------------------------------------------------------------ */

static int is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

int bench_set_opt(bench_ctx *c, int idx, const char *flag, const char *val, char *err, size_t errlen) {
    const bench_opt *o = &c->kernel->opts[idx];
    char *end;
    errno = 0;
    switch (o->type) {
    case BENCH_INT: {
        long long v = strtoll(val, &end, 10);
        if (!*val || *end || errno)
            return snprintf(err, errlen, "option %s: '%s' is not an integer", flag, val), -1;
        if (v < o->min || v > o->max)
            return snprintf(err, errlen, "option %s: %lld is out of range [%.0f, %.0f]", flag, v, o->min, o->max), -1;
        if (o->pow2 && !is_pow2(v))
            return snprintf(err, errlen, "option %s: %lld is not a power of two", flag, v), -1;
        c->i[idx] = v;
        c->d[idx] = (double)v;
        return 0;
    }
    case BENCH_DOUBLE: {
        double v = strtod(val, &end);
        if (!*val || *end || errno || !isfinite(v))
            return snprintf(err, errlen, "option %s: '%s' is not a number", flag, val), -1;
        if (v < o->min || v > o->max)
            return snprintf(err, errlen, "option %s: %g is out of range [%g, %g]", flag, v, o->min, o->max), -1;
        c->d[idx] = v;
        c->i[idx] = (int64_t)v;
        return 0;
    }
    case BENCH_CHOICE: {
        size_t n = strlen(val);
        for (const char *p = o->choices; *p;) {
            const char *bar = strchr(p, '|');
            size_t len = bar ? (size_t)(bar - p) : strlen(p);
            if (n && len == n && !strncmp(p, val, n)) {
                c->s[idx] = val;
                return 0;
            }
            p += len + (bar ? 1 : 0);
        }
        return snprintf(err, errlen, "option %s: '%s' is not one of %s", flag, val, o->choices), -1;
    }
    }
    return -1;
}

int bench_ctx_init(bench_ctx *c, const bench_kernel *k) {
    memset(c, 0, sizeof *c);
    c->kernel = k;
    c->workers = 1;
    char err[256];
    for (int o = 0; k->opts[o].name; o++)
        if (bench_set_opt(c, o, k->opts[o].name, k->opts[o].def, err, sizeof err)) {
            fprintf(stderr, "internal error: default of %s: %s\n", k->name, err);
            return -1;
        }
    c->out = json_object();
    return 0;
}
