/* variants.h — the names of what the harness can measure, and where their drivers are.
 *
 * A runtime variant is one value on each axis, joined by '-':
 *   stealing   cont | child    (compile-time: one driver per value pair)
 *   stack      seg  | lin      (compile-time)
 *   scheduler  busy | lazy     (run-time: the driver's --sched)
 * e.g. "cont-seg-busy", "child-lin-lazy".  The baselines are "serial" (the serial
 * projection, 1 worker only), "omp" (gcc + libgomp tasks), "omp-llvm" (clang + libomp
 * tasks) and "tbb" (oneTBB task_group, g++); they take no scheduler, nor do the peers (other
 * runtimes, e.g. "lace": each a fragment peers/NAME.mk of the Makefile, which generates
 * hx_peer_rows; their drivers are built from the user's checkouts by `make peers`).  Runtime
 * variant steal-stack-sched runs the driver fk-bench-<steal>-<stack> with --sched <sched>; a
 * baseline or peer B runs fk-bench-B. */
#ifndef HX_VARIANTS_H
#define HX_VARIANTS_H

#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>

typedef enum hx_variant_kind {
    HX_VARIANT_RUNTIME, /* a forkscope runtime variant */
    HX_VARIANT_SERIAL,  /* the serial projection */
    HX_VARIANT_BASELINE, /* another runtime: OpenMP (omp, omp-llvm), TBB (tbb), or a peer (lace) */
    HX_VARIANT_COMMAND,  /* any program, run by a config's command template (harness/config/command.h) */
} hx_variant_kind;

typedef struct hx_variant {
    hx_variant_kind kind;
    char name[32];   /* the name results carry: canonical ("cont-seg-busy"), or a config's own
                        name for a build or alias ({"name": "mine", "variant": ...}) */
    char base[32];   /* the canonical variant name, e.g. "cont-seg-busy" */
    char driver[32]; /* driver executable name, e.g. "fk-bench-cont-seg" */
    char sched[8];   /* "busy" / "lazy" for runtime variants, "" for baselines */
    char resume[8];  /* fiber variants: "any" / "home" (the driver's --resume), else "" */
    char promote[8]; /* other runtime variants: "thief" / "beat" (the driver's --promote), else "" */
    char drivers[PATH_MAX]; /* the directory of another build's drivers; "" for this build's */
    json_t *spec;           /* HX_VARIANT_COMMAND: the variant's object (owned by the config) */
    json_t *env;            /* {"NAME": "value"}: set for each of its runs, or NULL (owned by the config) */
} hx_variant;

/* Parses a variant name.  0 on success; -EINVAL with a one-line reason in err (what was wrong
 * and what is accepted: unknown axis value, missing axis, a scheduler given to a baseline,
 * extra parts). */
int hx_variant_parse(const char *name, hx_variant *v, char *err, size_t errlen);

/* The driver options a variant's name stands for: --sched S for a runtime variant, a fiber
 * variant's --resume R, and --promote beat under heartbeat promotion (thief promotion, the
 * default, is passed only when FORKSCOPE_PROMOTE is set, which the driver would obey
 * otherwise: a driver built before the axis knows no --promote, and A/B sweeps run such
 * builds).  Fills out[] with pointers into v; returns how many (at most
 * HX_VARIANT_MAX_ARGS).  Sweeps, forkscope bench, uts and trace all pass them. */
#define HX_VARIANT_MAX_ARGS 6
size_t hx_variant_args(const hx_variant *v, const char *out[HX_VARIANT_MAX_ARGS]);

/* The repetition class of a variant in a config: "serial", "parallel" (runtime variants)
 * or "baseline" (OpenMP). */
const char *hx_variant_class(const hx_variant *v);

/* Writes the path of v's driver into buf: $FORKSCOPE_DRIVER if set (one executable for
 * every variant, for tests), else v->drivers/DRIVER for another build, else this build's:
 * in ../libexec/forkscope beside the executable's directory (/proc/self/exe) when there is
 * one (an installed tree, make bundle's), else next to the executable (build/bin).  0, -ENAMETOOLONG if the path does not fit, or -errno (-ENOENT) if
 * /proc/self/exe is unreadable. */
int hx_variant_driver_path(const hx_variant *v, char *buf, size_t len);

/* 1 if v is a peer ("lace"): another runtime whose driver is built from the user's checkout by
 * `make peers PEERS_DIR=DIR`, and so may be missing from a build. */
int hx_variant_is_peer(const hx_variant *v);
/* 0 if v is a peer whose driver does not list kernel among those it runs (fk-bench-PEER
 * --kernels, asked once per driver; its cells are skipped), else 1 (a peer whose driver is
 * not built or does not answer: its run says why). */
int hx_variant_runs_kernel(const hx_variant *v, const char *kernel);
/* The kernels peer v's driver lists (fk-bench-PEER --kernels), " fib nqueens ... ", asked
 * once per driver path; NULL if v is not a peer, its driver is not there, or it did not
 * answer. */
const char *hx_variant_peer_kernels(const hx_variant *v);

/* The peers the Makefile knows (peers/NAME.mk and EXTRA_PEERS), in BUILD/gen/peers.c, which it
 * generates: name and what it is, ended by {NULL, NULL}. */
typedef struct hx_peer_row {
    const char *name, *what;
} hx_peer_row;
extern const hx_peer_row hx_peer_rows[];

/* Prints `forkscope variants`: every variant with what it is, the naming, and the reasons
 * a name is refused. */
void hx_variants_print(FILE *out);

/* The i-th valid variant name (runtime variants first, then baselines, then peers); NULL past
 * the last. */
const char *hx_variant_name(size_t i);

/* Whether a variant's tasks can block each other (a kernel whose description says BENCH_BLOCKS:
 * kernels.h's hx_kernels_block): fiber variants; and the serial driver, which measures two
 * threads instead. */
int hx_variant_can_block(const hx_variant *v);

#endif
