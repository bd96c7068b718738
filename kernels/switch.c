/* switch.c — the M:N report's context-switch microbenchmark as a kernel: two tasks hand
 * control to each other `rounds` times (two hand-offs a round), each blocking until the
 * other has had its turn.
 *
 * Fiber builds (child-fiber): two tasks and two arrays of counters; in round i one marks
 * ping[i] done and waits on pong[i], the other waits on ping[i] and marks pong[i] done: each
 * hand-off parks one fiber and resumes the other (on one worker; with more, a thief may take
 * the second task, and hand-offs cross threads).  The serial driver: two threads handing a
 * token through a futex (kernels/handoff.h), the 1:1 model the report compared with.  Tasks
 * that cannot block (the stackless variants, OpenMP, TBB) cannot express it: prepare says so.
 * Each side checks that the turns alternate; "ns_per_handoff" reports the last repetition's
 * time per hand-off, measured around the run. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "bench/bench.h"
#include "kernels/handoff.h"
#include "kernels/mn.h"

/* ---- what the harness knows of switch (bench/options.h) ---------------------------------- */
enum { SWITCH_OPT_ROUNDS };
static const bench_opt switch_opts[] = {
    [SWITCH_OPT_ROUNDS] = {"rounds", BENCH_INT, "20000", 1, 1e9, 0, NULL,
                           "round trips between two tasks that block (two hand-offs each)"},
    {0},
};

static double switch_serial_s(const bench_vals *v, int serial) {
    /* hand-offs: 27 us between threads (the serial projection's), 50 ns between fibers */
    return 2 * v->d[SWITCH_OPT_ROUNDS] * (serial ? 27e-6 : 50e-9);
}

const bench_desc bench_switch_desc = {
    .name = "switch",
    .summary = "M:N report: two tasks handing control to each other (fibers; serial: two threads)",
    .opts = switch_opts,
    .flags = BENCH_BLOCKS | BENCH_MN,
    .model = {.serial_s = switch_serial_s, .runtime = 1, .omp = 5},
    .small = (const char *const[]){"rounds=300", NULL},
};

#if !BENCH_DESCRIBE_ONLY

typedef struct {
    size_t rounds;
    _Atomic uint64_t turn; /* hand-offs so far: even, the first task's turn; odd, the second's */
    _Atomic uint64_t bad;  /* turns taken out of order */
    double ns;
#if MN_FIBERS
    fk_counter *ping, *pong;
#else
    _Atomic uint32_t token;
#endif
} sw;

static sw S;

#if MN_FIBERS || defined(FK_BASELINE_SERIAL)
/* Takes turn number `expect` (relaxed: the hand-off itself orders the turns, or fails to,
 * which is what the check is for). */
static void take_turn(sw *s, uint64_t expect) {
    if (atomic_load_explicit(&s->turn, memory_order_relaxed) != expect)
        atomic_fetch_add_explicit(&s->bad, 1, memory_order_relaxed);
    atomic_store_explicit(&s->turn, expect + 1, memory_order_relaxed);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}
#endif

#if MN_FIBERS
FK_LEAF_TASK(sw_second, void, (sw *, s)) {
    for (size_t i = 0; i < s->rounds; i++) {
        fk_counter_wait(&s->ping[i]);
        take_turn(s, 2 * i + 1);
        fk_counter_done(&s->pong[i]);
    }
    FK_RETURN_VOID();
} FK_END

FK_LEAF_TASK(sw_first, void, (sw *, s)) {
    fk_counter both;
    fk_counter_init(&both, 0);
    FK_SPAWN(&both, NULL, sw_second, s);
    for (size_t i = 0; i < s->rounds; i++) {
        take_turn(s, 2 * i);
        fk_counter_done(&s->ping[i]);
        fk_counter_wait(&s->pong[i]);
    }
    fk_counter_wait(&both);
    FK_RETURN_VOID();
} FK_END
#elif defined(FK_BASELINE_SERIAL)
static void *sw_second(void *arg) {
    sw *s = arg;
    for (size_t i = 0; i < s->rounds; i++) {
        handoff_await(&s->token, 1);
        take_turn(s, 2 * i + 1);
        handoff_give(&s->token, 0);
    }
    return NULL;
}
#endif

static int switch_prepare(bench_ctx *c) {
    S = (sw){.rounds = (size_t)c->i[SWITCH_OPT_ROUNDS]};
#if MN_FIBERS
    S.ping = malloc(S.rounds * sizeof *S.ping);
    S.pong = malloc(S.rounds * sizeof *S.pong);
    if (!S.ping || !S.pong) {
        fprintf(stderr, "out of memory for %zu rounds' counters\n", S.rounds);
        return -1;
    }
    return 0;
#elif defined(FK_BASELINE_SERIAL)
    return 0;
#else
    fprintf(stderr, "kernel switch: two tasks that block on each other cannot be written with %s's tasks, "
                    "which cannot wait; run it on a fiber variant (child-fiber-*) or serial (two threads)\n",
            bench_variant());
    return -1;
#endif
}

static void switch_run(bench_ctx *c) {
    atomic_store(&S.turn, 0);
    atomic_store(&S.bad, 0);
#if MN_FIBERS
    for (size_t i = 0; i < S.rounds; i++) {
        fk_counter_init(&S.ping[i], 1);
        fk_counter_init(&S.pong[i], 1);
    }
    double t0 = now_s();
    if (FK_RUN(c->pool, NULL, sw_first, &S))
        atomic_store(&S.bad, 1);
    S.ns = (now_s() - t0) / (2.0 * (double)S.rounds) * 1e9;
#elif defined(FK_BASELINE_SERIAL)
    (void)c;
    atomic_store(&S.token, 0);
    pthread_t t;
    if (pthread_create(&t, NULL, sw_second, &S)) {
        atomic_store(&S.bad, 1);
        return;
    }
    double t0 = now_s();
    for (size_t i = 0; i < S.rounds; i++) {
        take_turn(&S, 2 * i);
        handoff_give(&S.token, 1);
        handoff_await(&S.token, 0);
    }
    S.ns = (now_s() - t0) / (2.0 * (double)S.rounds) * 1e9;
    pthread_join(t, NULL);
#else
    (void)c;
#endif
}

static int switch_verify(bench_ctx *c) {
    uint64_t turns = atomic_load(&S.turn), bad = atomic_load(&S.bad);
    json_object_set_new(c->out, "answer", json_integer((json_int_t)turns));
    json_object_set_new(c->out, "expected", json_integer((json_int_t)(2 * S.rounds)));
    json_object_set_new(c->out, "out_of_turn", json_integer((json_int_t)bad));
    json_object_set_new(c->out, "ns_per_handoff", json_real(S.ns));
#if MN_FIBERS
    json_object_set_new(c->out, "model", json_string("blocking: fibers parked on counters"));
#else
    json_object_set_new(c->out, "model", json_string("two threads, a futex hand-off"));
#endif
    return turns == 2 * S.rounds && bad == 0;
}

static void switch_cleanup(bench_ctx *c) {
    (void)c;
#if MN_FIBERS
    free(S.ping);
    free(S.pong);
#endif
}

const bench_kernel bench_switch = {
    .desc = &bench_switch_desc,
    .prepare = switch_prepare,
    .run = switch_run,
    .verify = switch_verify,
    .cleanup = switch_cleanup,
};
#endif
