/* fk_switch.c — fk-switch: the cost of a context switch, as the CMU M:N report measured it.
 *
 *   fk-switch [--switches N] [--reps R] [--only fiber|raw|thread]
 *
 * Three ways for two execution contexts to hand control to each other, N hand-offs per
 * repetition, R repetitions; prints one JSON object with the median and the spread
 * (min, max) of the nanoseconds per hand-off:
 *   fiber   fk__fiber_switch between two fibers of one thread (what a scheduler uses:
 *           the switch plus the current-fiber and guard bookkeeping, and the sanitizers'
 *           notes in sanitizer builds);
 *   raw     fk__ctx_switch alone (the hand-written assembly);
 *   thread  two threads handing a token back and forth through futexes (the 1:1 model's
 *           hand-off: one sleeps, the other wakes).
 * The report measured 106 ns for its hand-written switch and 1,941 ns for pthreads. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernels/handoff.h"
#include "runtime/fiber.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- fibers ------------------------------------------------------------------------------- */

static fk__fiber main_fiber, *peer;
static void *raw_main_sp, *raw_peer_sp;

static void peer_fn(void *arg, void *data) {
    (void)data;
    for (;;)
        arg = fk__fiber_switch(peer, &main_fiber, arg);
}

static double fiber_round(long n) {
    double t0 = now();
    for (long i = 0; i < n / 2; i++) /* each iteration: there and back, two switches */
        fk__fiber_switch(&main_fiber, peer, NULL);
    return (now() - t0) / (double)(n / 2 * 2) * 1e9;
}

static void raw_peer(void *arg, void *data) {
    (void)arg, (void)data;
    for (;;)
        fk__ctx_switch(&raw_peer_sp, raw_main_sp, NULL);
}

static double raw_round(long n) {
    double t0 = now();
    for (long i = 0; i < n / 2; i++)
        fk__ctx_switch(&raw_main_sp, raw_peer_sp, NULL);
    return (now() - t0) / (double)(n / 2 * 2) * 1e9;
}

/* ---- threads ------------------------------------------------------------------------------ */

static _Atomic uint32_t turn; /* 0: main's turn, 1: the other thread's */
static long thread_n;

static void give(uint32_t to) { handoff_give(&turn, to); }
static void await_turn(uint32_t me) { handoff_await(&turn, me); }

static void *other(void *arg) {
    (void)arg;
    for (long i = 0; i < thread_n / 2; i++) {
        await_turn(1);
        give(0);
    }
    return NULL;
}

static double thread_round(long n) {
    thread_n = n;
    atomic_store(&turn, 0);
    pthread_t t;
    if (pthread_create(&t, NULL, other, NULL)) {
        fprintf(stderr, "fk-switch: pthread_create failed\n");
        exit(2);
    }
    double t0 = now();
    for (long i = 0; i < n / 2; i++) { /* there and back: two hand-offs */
        give(1);
        await_turn(0);
    }
    double dt = now() - t0;
    pthread_join(t, NULL);
    return dt / (double)(n / 2 * 2) * 1e9;
}

/* ---- main --------------------------------------------------------------------------------- */

static void report(const char *name, double (*round)(long), long n, int reps, int last) {
    double *v = malloc(sizeof *v * (size_t)reps);
    if (!v)
        exit(2);
    round(n / 10 + 2); /* warm-up */
    for (int r = 0; r < reps; r++)
        v[r] = round(n);
    qsort(v, (size_t)reps, sizeof *v, cmp_double);
    double med = reps % 2 ? v[reps / 2] : (v[reps / 2 - 1] + v[reps / 2]) / 2;
    printf("  \"%s\": {\"median_ns\": %.2f, \"min_ns\": %.2f, \"max_ns\": %.2f, \"switches\": %ld}%s\n", name, med, v[0],
           v[reps - 1], n, last ? "" : ",");
    fflush(stdout);
    free(v);
}

int main(int argc, char **argv) {
    long n = 2000000, tn = 200000;
    int reps = 11;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--switches") && i + 1 < argc)
            n = atol(argv[++i]), tn = n / 10;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc &&
                 (!strcmp(argv[i + 1], "fiber") || !strcmp(argv[i + 1], "raw") || !strcmp(argv[i + 1], "thread")))
            only = argv[++i];
        else {
            fprintf(stderr, "usage: fk-switch [--switches N] [--reps R] [--only fiber|raw|thread]\n");
            return 1;
        }
    }
    if (n < 2 || reps < 1) {
        fprintf(stderr, "fk-switch: --switches must be at least 2 and --reps at least 1\n");
        return 1;
    }
    if (fk__fiber_thread_init(&main_fiber) != 0) {
        fprintf(stderr, "fk-switch: cannot describe the main thread's stack\n");
        return 2;
    }
    peer = fk__fiber_new(64 << 10, peer_fn, NULL, "fk-switch's fiber stack", "(a benchmark)");
    fk__fiber *raw = fk__fiber_new(64 << 10, raw_peer, NULL, "fk-switch's fiber stack", "(a benchmark)");
    if (!peer || !raw) {
        fprintf(stderr, "fk-switch: cannot map fiber stacks: %s\n", strerror(errno));
        return 2;
    }
    raw_peer_sp = raw->sp;
    printf("{\n");
    if (!only || !strcmp(only, "fiber"))
        report("fiber", fiber_round, n, reps, only != NULL);
    if (!only || !strcmp(only, "raw"))
        report("raw", raw_round, n, reps, only != NULL);
    if (!only || !strcmp(only, "thread"))
        report("thread", thread_round, tn < 2 ? 2 : tn, reps, 1);
    printf("}\n");
    return 0;
}
