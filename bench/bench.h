/* bench.h — what a benchmark kernel provides to the bench driver, and what it gets.
 *
 * One driver executable is built per variant: a runtime variant (cont-seg, cont-lin,
 * child-seg, child-lin, child-native, child-fiber, and the span build), the serial projection
 * (FK_BASELINE_SERIAL), an OpenMP baseline (FK_BASELINE_OMP, built with gcc/libgomp and
 * with clang/libomp), TBB (FK_BASELINE_TBB) or a peer runtime (FK_BASELINE_PEER).  Every kernel source is
 * compiled into every driver and provides, under #if, the version that driver runs.
 *
 * The driver parses the kernel's options (each option names its type, default and limits;
 * a bad value is an error naming the option), calls prepare() outside any timing, then
 * run() for each warm-up and timed repetition, then verify() once on the last answer, and
 * prints one JSON object.  A kernel stores its answer and any figures it wants reported as
 * JSON members of `out`. */
#ifndef FK_BENCH_H
#define FK_BENCH_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/options.h"

/* BENCH_DESCRIBE_ONLY: a kernel file compiled for the harness, its description alone
 * (options.h); no driver, no runtime. */
#ifndef BENCH_DESCRIBE_ONLY
#define BENCH_DESCRIBE_ONLY 0
#endif

#if defined(FK_BASELINE_TBB) && !BENCH_DESCRIBE_ONLY
#include "kernels/tbb.h"
#endif
#if defined(FK_BASELINE_PEER) && !BENCH_DESCRIBE_ONLY
#include "kernels/peer.h"
#endif

#if !defined(FK_BASELINE_SERIAL) && !defined(FK_BASELINE_OMP) && !defined(FK_BASELINE_TBB) && \
    !defined(FK_BASELINE_PEER) && !BENCH_DESCRIBE_ONLY
#define FK_BENCH_RUNTIME 1
#include "forkscope.h"
#else
#define FK_BENCH_RUNTIME 0
#endif

typedef struct bench_ctx {
    const struct bench_kernel *kernel;
    /* Option values, in the order of kernel->desc->opts: c->i[IDX] and the like, or c->v
     * whole (what the description's functions take). */
    union {
        bench_vals v;
        struct {
            int64_t i[BENCH_MAX_OPTS];
            double d[BENCH_MAX_OPTS];
            const char *s[BENCH_MAX_OPTS];
        };
    };
    unsigned workers;
#if FK_BENCH_RUNTIME
    fk_pool *pool; /* created by the driver before prepare() */
#endif
    void *state; /* the kernel's own (inputs, answer) */
    json_t *out; /* the kernel adds its answer and figures here */
} bench_ctx;

typedef struct bench_kernel {
    const bench_desc *desc; /* its name, options and the rest the harness knows (options.h) */
    /* Builds inputs, outside timing.  0, or -1 after printing an error to stderr.  It may
     * rewrite option values to what will actually run (a UTS preset sets the tree flags):
     * the driver records the values as they are after prepare(). */
    int (*prepare)(bench_ctx *c);
    /* One repetition: the timed work. */
    void (*run)(bench_ctx *c);
    /* Checks the answer of the last repetition.  Adds "answer" (and whatever else is worth
     * reporting, e.g. "expected", "error") to c->out and returns 1 if it is right. */
    int (*verify)(bench_ctx *c);
    void (*cleanup)(bench_ctx *c);
    /* A peer's driver only (FK_BASELINE_PEER): the peer's version of the kernel, which run()
     * calls, named with BENCH_PEER_VERSION.  Declared weak (kernels/peer.h), it is NULL where
     * peers/NAME.c has none: the driver lists only the kernels whose version it has (--kernels,
     * --list) and refuses the others before anything runs. */
    void (*peer)(void);
} bench_kernel;

/* In a kernel's bench_kernel: BENCH_PEER_VERSION(fib_peer), the function its peer version
 * calls; nothing outside a peer's driver. */
#if defined(FK_BASELINE_PEER)
#define BENCH_PEER_VERSION(fn) .peer = (void (*)(void))(fn),
#else
#define BENCH_PEER_VERSION(fn)
#endif

/* The kernels (kernels/ and uts/: options.h's list), and the calibrate kernel (bench/registry.c). */
#define BENCH_DECLARE_KERNEL_(k) extern const bench_kernel bench_##k;
BENCH_KERNEL_LIST(BENCH_DECLARE_KERNEL_)
extern const bench_kernel bench_calibrate;

/* The UTS tree v's options describe (a preset's, whose parameters are then written back
 * into v, or the flags'), checked: 0, or -1 with the reason in err.  *preset is
 * the preset or NULL. */
struct uts_params;
struct uts_preset;
int uts_params_of(bench_vals *v, struct uts_params *out, const struct uts_preset **preset, char *err, size_t errlen);

/* All kernels, NULL-terminated; one by name (NULL if unknown). */
extern const bench_kernel *const bench_kernels[];
const bench_kernel *bench_find(const char *name);

/* Option index by name, for kernels that look their options up (-1 if none). */
int bench_opt_index(const bench_kernel *k, const char *name);

/* Sets every option of k to its default and creates c->out.  0 on success. */
int bench_ctx_init(bench_ctx *c, const bench_kernel *k);
/* Parses and checks option idx (named flag in messages) from text; 0, or -1 with a message
 * naming the option in err. */
int bench_set_opt(bench_ctx *c, int idx, const char *flag, const char *val, char *err, size_t errlen);

/* The name of this driver's variant ("cont-seg", "serial", "omp", "omp-llvm"). */
const char *bench_variant(void);

#endif
