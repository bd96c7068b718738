/* config.h — experiment configuration files: loading, validation, the expanded sweep axes.
 *
 * The format is documented in configs/README.md.  Loading validates everything before
 * anything runs and reports every error found, each as
 *     FILE:LINE:COLUMN: KEY.PATH: what is wrong (what was expected)
 * with the position of the offending value (or key, for an unknown key; or the enclosing
 * object, for a missing key).  Kernel options are checked against each kernel's own option
 * table (its description, bench/options.h: the table its drivers parse with). */
#ifndef HX_CONFIG_H
#define HX_CONFIG_H

#include <jansson.h>
#include <stddef.h>

#include "harness/config/variants.h"

#include "harness/config/kernels.h"

/* ---- diagnostics ------------------------------------------------------------------------------ */

/* A list of error messages (each one line, without the newline).  Zero-initialise. */
typedef struct hx_diag {
    char **msgs;
    size_t n;
} hx_diag;

void hx_config_diag_add(hx_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hx_config_diag_print(const hx_diag *d, FILE *out); /* one message a line */
void hx_config_diag_free(hx_diag *d);

/* ---- the configuration ------------------------------------------------------------------------ */

/* Repetition classes: which count of "repetitions"/"warmup"/"process_reps" a variant uses. */
enum { HX_CLASS_SERIAL, HX_CLASS_PARALLEL, HX_CLASS_BASELINE, HX_NCLASS };
int hx_config_variant_class(const hx_variant *v); /* HX_CLASS_* of a variant */

typedef enum hx_order { HX_ORDER_GROUPED, HX_ORDER_INTERLEAVED, HX_ORDER_SHUFFLED, HX_ORDER_PAIRED } hx_order;

typedef struct hx_bench {
    char name[64];   /* label: unique in the config, [A-Za-z0-9_.-]+ */
    char kernel[16]; /* a kernel's name (bench_descs, bench/options.h) */
    json_t *params;  /* the params object as given (owned; {} if none) */
    char **args;     /* driver arguments for the params: "--n", "30", ... (owned) */
    size_t nargs;
    unsigned long long variants; /* bit v set: runs on cfg->variants[v] (its own "variants"
                                    list, else every top-level variant) */
    unsigned *workers; /* its own "workers" (a subset of the top-level list, ascending), or
                          NULL: every top-level worker count (owned) */
    size_t nworkers;
    int span; /* "span" names it: its work and span are measured after the runs (span.h) */
    int breakdown; /* "breakdown" names it: its runtime variants' runs account for their
                      workers' time (the drivers' --account times; results.h, summary.csv) */
} hx_bench;

typedef struct hx_config {
    char *path;      /* as given to hx_config_load */
    char *text;      /* the file, verbatim (NUL-terminated), for DIR/config.json */
    size_t text_len;
    char name[128];  /* experiment name, [A-Za-z0-9_.-]+ */
    hx_bench *benchmarks;
    size_t nbenchmarks;
    hx_variant *variants; /* the top-level list, then those only benchmarks name (at most 64) */
    size_t nvariants;
    unsigned *workers; /* expanded: ascending, no duplicates, each in [1, 1024] */
    size_t nworkers;
    unsigned *dropped; /* worker counts left out because P > cores and oversubscribe is false */
    size_t ndropped;
    unsigned cores;    /* online CPUs the expansion used ("cores", oversubscription) */
    unsigned reps[HX_NCLASS], warmup[HX_NCLASS];
    unsigned preps[HX_NCLASS]; /* "process_reps": timed repetitions inside each driver process (its
                                  --reps; default 1); a run's time_s is their median (results.h).
                                  Command variants run their command once a process: not theirs */
    double time_limit_s;              /* per run; 0 = none */
    unsigned long long memory_limit_mib; /* per run; 0 = none */
    hx_order order;
    unsigned long long seed; /* for "shuffled" */
    int calibrate;           /* measure calibrate runs (default 1) */
    int oversubscribe;       /* allow P > cores (default 1; such cells are flagged) */
    char **papi_events;      /* passed to the drivers (--papi) and recorded, not checked here */
    size_t npapi;
    char icount_kernel[16];  /* "instructions": the kernel ("fib") ... */
    int icount_n[2];         /* ... and its two sizes; icount_n[1] == 0: none (overhead.h) */
    double span_burden_ns;   /* "span": the burden of a fork (-1: the driver's default, -2: calibrate) ... */
    unsigned span_reps;      /* ... and the span build's repetitions (0: 3) */
    char left_out[16][32];   /* "peers" whose drivers are not built, left out */
    size_t nleft_out;
} hx_config;

/* Reads and validates the configuration file at path; `cores` is the number of online CPUs
 * that "cores" stands for.  Returns 0 and fills *cfg (free with hx_config_free); or
 * HX_EIO if the file cannot be read, HX_ECONFIG if it is invalid, with every
 * message in *d (cfg is then left empty). */
int hx_config_load(const char *path, unsigned cores, hx_config *cfg, hx_diag *d);

void hx_config_free(hx_config *cfg);

/* Does benchmark b run at P workers (its own "workers", else every top-level count)? */
int hx_config_bench_runs_at(const hx_bench *b, unsigned P);

/* Is name one of the "peers" left out because their drivers are not built? */
int hx_config_left_out(const hx_config *cfg, const char *name);
/* The left-out peers as one string, "taskflow, lace" ("" if none); returns buf. */
const char *hx_config_left_out_list(const hx_config *cfg, char *buf, size_t len);


#endif
