/* args.c — the bench driver's command line (bench/args.h). */
#include "bench/args.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if FK_BENCH_RUNTIME
#include "forkscope.h"
#endif

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return BENCH_CLI_ERROR;
}

/* The kernel: "uts" as the first argument, or --kernel NAME anywhere (found first, so that
 * its options can be recognised).  --help, --list and --kernels answer at once. */
static int find_kernel(int argc, char **argv, bench_ctx *c, bench_cli *cli, int *first, char *err, size_t errlen) {
    *first = 1;
    if (argc > 1 && !strcmp(argv[1], "uts")) {
        cli->uts_mode = 1;
        c->kernel = &bench_uts;
        *first = 2;
    }
    for (int i = *first; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return BENCH_CLI_HELP;
        if (!strcmp(argv[i], "--list"))
            return BENCH_CLI_LIST;
        if (!strcmp(argv[i], "--kernels"))
            return BENCH_CLI_KERNELS;
        if (!strcmp(argv[i], "--kernel")) {
            if (i + 1 >= argc)
                return fail(err, errlen, "option --kernel needs a value");
            c->kernel = bench_find(argv[i + 1]);
            if (!c->kernel)
                return fail(err, errlen, "option --kernel: unknown kernel '%s' (try --list)", argv[i + 1]);
        }
    }
    if (!c->kernel)
        return fail(err, errlen, "no --kernel given (try --help)");
    return BENCH_CLI_RUN;
}

/* An integer option of the driver in [lo, hi]. */
static int int_opt(const char *name, const char *val, long lo, long hi, unsigned *out, char *err, size_t errlen) {
    char *end;
    long v = strtol(val, &end, 10);
    if (!*val || *end || v < lo || v > hi)
        return fail(err, errlen, "option --%s: '%s' is not an integer in [%ld, %ld]", name, val, lo, hi);
    *out = (unsigned)v;
    return 0;
}

/* One option of the driver itself (not the kernel's): 1 if name is one, 0 if not, or
 * BENCH_CLI_ERROR for a bad value. */
static int driver_opt(const char *name, const char *val, bench_ctx *c, bench_cli *cli, char *err, size_t errlen) {
    if (!strcmp(name, "kernel"))
        return 1; /* taken by find_kernel */
    if (!strcmp(name, "workers"))
        return int_opt(name, val, 1, 1024, &c->workers, err, errlen) ? BENCH_CLI_ERROR : 1;
    if (!strcmp(name, "reps"))
        return int_opt(name, val, 1, 1000000, &cli->reps, err, errlen) ? BENCH_CLI_ERROR : 1;
    if (!strcmp(name, "warmup"))
        return int_opt(name, val, 0, 1000000, &cli->warmup, err, errlen) ? BENCH_CLI_ERROR : 1;
    if (!strcmp(name, "papi")) {
        cli->papi = val;
    } else if (!strcmp(name, "papi-per-worker")) {
        if (strcmp(val, "0") && strcmp(val, "1"))
            return fail(err, errlen, "option --papi-per-worker: '%s' is not 0 or 1", val);
        cli->papi_per_worker = val[0] == '1';
    } else if (!strcmp(name, "sched")) {
        if (strcmp(val, "busy") && strcmp(val, "lazy"))
            return fail(err, errlen, "option --sched: '%s' is not busy or lazy", val);
        cli->sched = val;
    } else if (!strcmp(name, "span-unit") || !strcmp(name, "burden-ns") || !strcmp(name, "burden-strands")) {
#if FK_BENCH_RUNTIME && FK_SPAN
        if (!strcmp(name, "span-unit")) {
            if (strcmp(val, "ns") && strcmp(val, "strands"))
                return fail(err, errlen, "option --span-unit: '%s' is not ns or strands", val);
            cli->span_strands = val[0] == 's';
        } else {
            char *end;
            double *b = name[7] == 'n' ? &cli->burden_ns : &cli->burden_strands;
            cli->burden_given |= name[7] == 'n' ? 1 : 2;
            *b = strtod(val, &end);
            if (!*val || *end || !(*b >= 0 && *b <= 1e9))
                return fail(err, errlen, "option --%s: '%s' is not a number in [0, 1e9]", name, val);
        }
#else
        return fail(err, errlen, "option --%s: only the span build (fk-bench-span) has it", name);
#endif
    } else if (!strcmp(name, "account") || !strcmp(name, "trace")) {
#if FK_BENCH_RUNTIME && !FK_SPAN
        fk_account acc;
        if (name[0] == 't') {
            if (!*val)
                return fail(err, errlen, "option --trace needs a file name");
            cli->trace = val;
        } else if (fk_account_parse(val, &acc)) {
            return fail(err, errlen, "option --account: '%s' is not off, times or trace", val);
        } else {
            cli->account = (int)acc;
        }
#else
        return fail(err, errlen, "option --%s: only the runtime's variants (fk-bench-cont-seg, ...) account for "
                                 "their workers' time", name);
#endif
    } else if (!strcmp(name, "promote") || !strcmp(name, "beat-us")) {
#if FK_BENCH_RUNTIME && !FK_SPAN && FK_STACK != FK_STACK_FIBER
        if (name[0] == 'p') {
            if (strcmp(val, "thief") && strcmp(val, "beat"))
                return fail(err, errlen, "option --promote: '%s' is not thief or beat", val);
            cli->promote = val;
        } else {
            char *end;
            errno = 0;
            unsigned long us = strtoul(val, &end, 10);
            if (!*val || *end || *val == '-' || errno || us < 1 || us > 10000000)
                return fail(err, errlen, "option --beat-us: '%s' is not a whole number of microseconds in [1, 10000000]",
                            val);
            cli->beat_us = (unsigned)us;
        }
#elif FK_BENCH_RUNTIME && !FK_SPAN
        return fail(err, errlen, "option --%s: heartbeat promotion is not built for fibers (fk-bench-child-fiber)", name);
#else
        return fail(err, errlen, "option --%s: only the runtime's variants (fk-bench-cont-seg, ...) promote forks", name);
#endif
    } else if (!strcmp(name, "resume")) {
#if FK_BENCH_RUNTIME && FK_STACK == FK_STACK_FIBER
        if (strcmp(val, "any") && strcmp(val, "home"))
            return fail(err, errlen, "option --resume: '%s' is not any or home", val);
        cli->resume = val;
#else
        return fail(err, errlen, "option --resume: only fiber builds (fk-bench-child-fiber) have it");
#endif
    } else {
        return 0;
    }
    return 1;
}

int bench_cli_parse(int argc, char **argv, bench_ctx *c, bench_cli *cli, char *err, size_t errlen) {
    *cli = (bench_cli){.reps = 1, .warmup = 0, .sched = "busy", .burden_ns = BENCH_SPAN_BURDEN_NS, .account = -1};
#if FK_BENCH_RUNTIME && FK_SPAN
    cli->reps = 3; /* (each strand's median of 3: one repetition keeps every interrupt) */
#endif
    c->workers = 1;
    int first, rc = find_kernel(argc, argv, c, cli, &first, err, errlen);
    if (rc != BENCH_CLI_RUN)
        return rc;
    const bench_kernel *k = c->kernel;
    for (int o = 0; k->desc->opts[o].name; o++)
        if (bench_set_opt(c, o, k->desc->opts[o].name, k->desc->opts[o].def, err, errlen))
            return BENCH_CLI_ERROR; /* a default out of its own range: the table is wrong */
    for (int i = first; i < argc; i++) {
        const char *arg = argv[i], *val = NULL;
        char name[64];
        if (arg[0] != '-')
            return fail(err, errlen, "unexpected argument '%s'", arg);
        const char *n = arg + (arg[1] == '-' ? 2 : 1);
        const char *eq = strchr(n, '=');
        size_t len = eq ? (size_t)(eq - n) : strlen(n);
        if (len >= sizeof name)
            return fail(err, errlen, "unknown option %s", arg);
        memcpy(name, n, len);
        name[len] = 0;
        if (eq)
            val = eq + 1;
        else if (i + 1 < argc)
            val = argv[++i];
        else
            return fail(err, errlen, "option %s needs a value", arg);
        rc = driver_opt(name, val, c, cli, err, errlen);
        if (rc == BENCH_CLI_ERROR)
            return rc;
        if (rc)
            continue;
        int idx = bench_opt_index(k, name);
        if (idx < 0)
            return fail(err, errlen, "unknown option %s for kernel %s (try --help)", arg, k->desc->name);
        if (bench_set_opt(c, idx, arg, val, err, errlen))
            return BENCH_CLI_ERROR;
    }
#if defined(FK_BASELINE_SERIAL)
    if (c->workers != 1)
        return fail(err, errlen, "option --workers: the serial projection runs on 1 worker, not %u", c->workers);
#endif
    if ((cli->burden_given & 1) && cli->span_strands)
        return fail(err, errlen, "option --burden-ns: the burden in strands is --burden-strands (with --span-unit strands)");
    if ((cli->burden_given & 2) && !cli->span_strands)
        return fail(err, errlen, "option --burden-strands: needs --span-unit strands (in time: --burden-ns)");
#if FK_BENCH_RUNTIME && !FK_SPAN
    if (cli->trace && cli->account >= 0 && cli->account != FK_ACCOUNT_TRACE)
        return fail(err, errlen, "option --trace: needs the trace, not --account %s", fk_account_name((fk_account)cli->account));
#endif
    return BENCH_CLI_RUN;
}
