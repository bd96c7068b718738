/* test_fiber.c — the context switch and fiber stacks (runtime/fiber.c), alone.
 *
 * Built for the host in every mode (rel, debug, tsan, asan) and, when the cross compiler
 * and qemu-user are installed, for aarch64 (run under qemu-aarch64).  Each case checks a
 * property a broken switch would break: values passed both ways, callee-saved integer and
 * floating-point registers, the floating-point control state per fiber, many suspended
 * fibers, deep recursion, a fiber resumed on another thread, restart after leaving for
 * good, and an overflow reported by name. */
#include <fenv.h>
#include <pthread.h>
#include <sys/resource.h>

#include "runtime/fiber.h"
#include "tests/testlib.h"

static fk__fiber main_fiber;

static void init_thread(void) { ASSERT_EQ(fk__fiber_thread_init(&main_fiber), 0); }

static fk__fiber *new_fiber(size_t bytes, fk__fiber_fn *fn, void *data) {
    fk__fiber *f = fk__fiber_new(bytes, fn, data, "a test fiber's stack", "raise FORKSCOPE_FIBER_STACK");
    ASSERT_MSG(f, "fk__fiber_new: %s", strerror(errno));
    return f;
}

/* ---- values both ways, in order ---------------------------------------------------------- */

static void counter_fn(void *arg, void *data) {
    fk__fiber *self = data;
    uintptr_t v = (uintptr_t)arg;
    for (;;) /* answers each value with value * 2 + 1 */
        v = (uintptr_t)fk__fiber_switch(self, &main_fiber, (void *)(v * 2 + 1));
}

TEST(ping_pong_values) {
    init_thread();
    fk__fiber *f = new_fiber(64 << 10, counter_fn, NULL);
    fk__fiber_restart(f, counter_fn, f); /* data = the fiber itself */
    ASSERT(fk__fiber_current() == &main_fiber);
    for (uintptr_t i = 0; i < 100000; i++) {
        uintptr_t got = (uintptr_t)fk__fiber_switch(&main_fiber, f, (void *)i);
        ASSERT_EQ_U(got, i * 2 + 1);
        ASSERT(fk__fiber_current() == &main_fiber);
    }
    fk__fiber_free(f);
}

/* ---- callee-saved registers ---------------------------------------------------------------
 * Many integer and double values live across each switch: the compiler keeps them in
 * callee-saved registers (or spills them, which is also fine).  The other fiber works on
 * as many of its own values; if the switch lost or swapped a register, a sum goes wrong. */

static fk__fiber *reg_a, *reg_b;

static __attribute__((noinline)) uint64_t mix(uint64_t x) { return x * 0x9E3779B97F4A7C15ull + 1; }

#define LIVE_VALUES(seed)                                                                  \
    uint64_t a0 = mix(seed), a1 = mix(a0), a2 = mix(a1), a3 = mix(a2), a4 = mix(a3),       \
             a5 = mix(a4), a6 = mix(a5), a7 = mix(a6);                                     \
    double d0 = (double)(a0 >> 40), d1 = (double)(a1 >> 40), d2 = (double)(a2 >> 40),       \
           d3 = (double)(a3 >> 40), d4 = (double)(a4 >> 40), d5 = (double)(a5 >> 40),       \
           d6 = (double)(a6 >> 40), d7 = (double)(a7 >> 40)
#define LIVE_SUM() (a0 ^ a1 ^ a2 ^ a3 ^ a4 ^ a5 ^ a6 ^ a7)
#define LIVE_DSUM() (d0 + d1 * 2 + d2 * 3 + d3 * 4 + d4 * 5 + d5 * 6 + d6 * 7 + d7 * 8)
#define LIVE_STEP()                                                                        \
    do {                                                                                   \
        a0 += 1, a1 += 2, a2 += 3, a3 += 4, a4 += 5, a5 += 6, a6 += 7, a7 += 8;            \
        d0 += 1, d1 += 1, d2 += 1, d3 += 1, d4 += 1, d5 += 1, d6 += 1, d7 += 1;            \
    } while (0)

static uint64_t expect_sum(uint64_t seed, int steps) {
    LIVE_VALUES(seed);
    for (int i = 0; i < steps; i++)
        LIVE_STEP();
    return LIVE_SUM() ^ (uint64_t)LIVE_DSUM();
}

static void regs_b(void *arg, void *data) {
    (void)data;
    LIVE_VALUES(77);
    for (int i = 0; i < 1000; i++) {
        LIVE_STEP();
        arg = fk__fiber_switch(reg_b, reg_a, (void *)(uintptr_t)(LIVE_SUM() ^ (uint64_t)LIVE_DSUM()));
    }
    (void)arg;
    fk__fiber_exit_to(reg_b, &main_fiber, NULL);
}

static void regs_a(void *arg, void *data) {
    (void)arg, (void)data;
    LIVE_VALUES(5);
    int bad = 0;
    for (int i = 0; i < 1000; i++) {
        LIVE_STEP();
        uint64_t from_b = (uintptr_t)fk__fiber_switch(reg_a, reg_b, NULL);
        bad += from_b != expect_sum(77, i + 1);
    }
    uint64_t mine = LIVE_SUM() ^ (uint64_t)LIVE_DSUM();
    fk__fiber_exit_to(reg_a, &main_fiber, (void *)(uintptr_t)(bad ? 0 : mine));
}

TEST(callee_saved_registers) {
    init_thread();
    reg_a = new_fiber(64 << 10, regs_a, NULL);
    reg_b = new_fiber(64 << 10, regs_b, NULL);
    uint64_t got = (uintptr_t)fk__fiber_switch(&main_fiber, reg_a, NULL);
    ASSERT_EQ_U(got, expect_sum(5, 1000));
    fk__fiber_free(reg_a);
    fk__fiber_free(reg_b);
}

/* ---- the floating-point control state belongs to the fiber ------------------------------- */

static fk__fiber *fp_a, *fp_b;

static void fp_b_fn(void *arg, void *data) {
    (void)arg, (void)data;
    int seen = fegetround(); /* inherited from the creator's state when made: to nearest */
    fesetround(FE_UPWARD);
    fk__fiber_switch(fp_b, fp_a, (void *)(intptr_t)seen);
    fk__fiber_exit_to(fp_b, &main_fiber, (void *)(intptr_t)fegetround());
}

static void fp_a_fn(void *arg, void *data) {
    (void)arg, (void)data;
    fesetround(FE_TOWARDZERO);
    int seen_by_b = (int)(intptr_t)fk__fiber_switch(fp_a, fp_b, NULL);
    int mine = fegetround();
    volatile double one = 1, ten = 10;
    double tenth = one / ten; /* the nearest double to 0.1 is above it: toward zero is below */
    fk__fiber_switch(fp_a, &main_fiber, (void *)(intptr_t)(seen_by_b == FE_TONEAREST && mine == FE_TOWARDZERO &&
                                                           tenth < 0.1));
    abort();
}

TEST(fp_control_per_fiber) {
    init_thread();
    ASSERT_EQ(fegetround(), FE_TONEAREST);
    fp_a = new_fiber(64 << 10, fp_a_fn, NULL);
    fp_b = new_fiber(64 << 10, fp_b_fn, NULL);
    ASSERT_EQ((intptr_t)fk__fiber_switch(&main_fiber, fp_a, NULL), 1);
    ASSERT_EQ(fegetround(), FE_TONEAREST); /* main's own mode, untouched by both */
    ASSERT_EQ((intptr_t)fk__fiber_switch(&main_fiber, fp_b, NULL), FE_UPWARD);
    ASSERT_EQ(fegetround(), FE_TONEAREST);
    fk__fiber_free(fp_a);
    fk__fiber_free(fp_b);
}

/* ---- many suspended fibers ---------------------------------------------------------------- */

/* ThreadSanitizer gives each fiber a context with mappings of its own and runs out of them
 * (the kernel's map count) long before 10,000. */
#define MANY (TEST_TSAN ? 1000 : 10000)

static void parked_fn(void *arg, void *data) {
    fk__fiber *self = data;
    uint64_t token = (uintptr_t)arg; /* on this fiber's stack while it is parked */
    volatile char pad[256];
    memset((char *)pad, (int)(token & 0xff), sizeof pad);
    uint64_t again = (uintptr_t)fk__fiber_switch(self, &main_fiber, NULL);
    int ok = again == token * 3;
    for (size_t i = 0; i < sizeof pad; i++)
        ok &= pad[i] == (char)(token & 0xff);
    fk__fiber_exit_to(self, &main_fiber, (void *)(uintptr_t)(ok ? token : ~(uint64_t)0));
}

TEST(ten_thousand_parked_fibers) {
    init_thread();
    fk__fiber **fs = calloc(MANY, sizeof *fs);
    ASSERT(fs);
    for (uint64_t i = 0; i < MANY; i++) {
        fs[i] = new_fiber(16 << 10, parked_fn, NULL);
        fk__fiber_restart(fs[i], parked_fn, fs[i]);
        fk__fiber_switch(&main_fiber, fs[i], (void *)(uintptr_t)(i + 1)); /* runs until it parks */
    }
    for (uint64_t k = 0; k < MANY; k++) { /* resumed in a scrambled order */
        uint64_t i = (k * 7919) % MANY;
        uint64_t got = (uintptr_t)fk__fiber_switch(&main_fiber, fs[i], (void *)(uintptr_t)((i + 1) * 3));
        ASSERT_EQ_U(got, i + 1);
    }
    for (uint64_t i = 0; i < MANY; i++)
        fk__fiber_free(fs[i]);
    free(fs);
}

/* ---- deep recursion on a fiber ----------------------------------------------------------- */

static __attribute__((noinline)) uint64_t depth_sum(uint64_t n) {
    volatile uint64_t keep = n; /* a real frame per level */
    return n == 0 ? 0 : keep + depth_sum(n - 1);
}

static void deep_fn(void *arg, void *data) {
    fk__fiber *self = data;
    uint64_t n = (uintptr_t)arg;
    fk__fiber_exit_to(self, &main_fiber, (void *)(uintptr_t)depth_sum(n));
}

TEST(deep_recursion) {
    init_thread();
    uint64_t n = TEST_SANITIZED ? 20000 : 200000;
    fk__fiber *f = new_fiber(64u << 20, deep_fn, NULL);
    fk__fiber_restart(f, deep_fn, f);
    ASSERT_EQ_U((uintptr_t)fk__fiber_switch(&main_fiber, f, (void *)(uintptr_t)n), n * (n + 1) / 2);
    fk__fiber_free(f);
}

/* ---- restart after leaving for good ------------------------------------------------------ */

static void once_fn(void *arg, void *data) {
    fk__fiber *self = data;
    fk__fiber_exit_to(self, &main_fiber, (void *)((uintptr_t)arg + 100));
}

TEST(restart_reuses_the_stack) {
    init_thread();
    fk__fiber *f = new_fiber(32 << 10, once_fn, NULL);
    for (uintptr_t i = 0; i < 1000; i++) {
        fk__fiber_restart(f, once_fn, f);
        ASSERT_EQ_U((uintptr_t)fk__fiber_switch(&main_fiber, f, (void *)i), i + 100);
    }
    fk__fiber_free(f);
}

/* ---- a fiber suspended on one thread, resumed on another --------------------------------- */

static fk__fiber *mig;
static fk__fiber thread_main;
static pthread_t mig_thread_seen[2];

/* pthread_self is declared const, so the compiler may reuse one call's value for the whole
 * function, as it may reuse any thread-local address: code on a fiber that can move to
 * another thread must read them afresh after each switch (here: a call it cannot fold). */
static __attribute__((noinline)) pthread_t current_thread(void) {
    pthread_t t = pthread_self();
    __asm__ volatile("" ::: "memory");
    return t;
}

static void migrant_fn(void *arg, void *data) {
    (void)data;
    fk__fiber *back = arg;
    mig_thread_seen[0] = current_thread();
    uint64_t local = 0xC0FFEE; /* lives on the fiber's stack across the move */
    back = fk__fiber_switch(mig, back, NULL); /* suspended here on the main thread ... */
    mig_thread_seen[1] = current_thread();   /* ... resumed here on the other one */
    fk__fiber_exit_to(mig, back, (void *)(uintptr_t)(local == 0xC0FFEE && fk__fiber_current() == mig));
}

static void *other_thread(void *arg) {
    (void)arg;
    if (fk__fiber_thread_init(&thread_main))
        return NULL;
    void *r = fk__fiber_switch(&thread_main, mig, &thread_main);
    fk__fiber_thread_exit(&thread_main);
    return r;
}

TEST(resume_on_another_thread) {
    init_thread();
    mig = new_fiber(64 << 10, migrant_fn, NULL);
    ASSERT(fk__fiber_switch(&main_fiber, mig, &main_fiber) == NULL);
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, other_thread, NULL), 0);
    void *r;
    ASSERT_EQ(pthread_join(t, &r), 0);
    ASSERT_EQ((uintptr_t)r, 1);
    ASSERT(pthread_equal(mig_thread_seen[0], pthread_self()));
    ASSERT(pthread_equal(mig_thread_seen[1], t));
    fk__fiber_free(mig);
}

/* ---- an overflow is reported by name ----------------------------------------------------- */

static volatile uint64_t endless_limit = UINT64_MAX;

static __attribute__((noinline)) uint64_t endless(uint64_t n) {
    volatile char buf[512];
    buf[0] = (char)n;
    return n == endless_limit ? 0 : endless(n + 1) + buf[0];
}

static void overflow_fn(void *arg, void *data) {
    (void)arg, (void)data;
    endless(0);
}

static void overflow_child(void *arg) {
    (void)arg;
    init_thread();
    fk__fiber *f = fk__fiber_new(64 << 10, overflow_fn, NULL, "a fiber stack of the test",
                                 "raise FORKSCOPE_FIBER_STACK or fk_pool_opts.fiber_stack_bytes");
    if (f)
        fk__fiber_switch(&main_fiber, f, NULL);
    _exit(0);
}

TEST(overflow_reported) {
    if (TEST_SANITIZED)
        TEST_SKIP("sanitizer build: the sanitizer reports stack overflows itself");
    char *err;
    int st = test_run_capturing(overflow_child, NULL, &err);
    ASSERT_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "expected an abort, got status %d; stderr: %s", st, err);
    ASSERT_STR_CONTAINS(err, "forkscope: fatal: a fiber stack of the test overflowed (");
    ASSERT_STR_CONTAINS(err, "FORKSCOPE_FIBER_STACK");
    free(err);
}

/* A SIGSEGV that is not in a guard still crashes as a SIGSEGV (the handler passes it on). */
static void wild_child(void *arg) {
    (void)arg;
    init_thread();
    volatile uintptr_t wild = 16;
    *(volatile int *)wild = 1;
}

TEST(other_faults_pass_through) {
    if (TEST_SANITIZED)
        TEST_SKIP("sanitizer build: the sanitizer handles SIGSEGV itself");
    char *err;
    int st = test_run_capturing(wild_child, NULL, &err);
    ASSERT_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "expected SIGSEGV, got status %d; stderr: %s", st, err);
    ASSERT(!strstr(err, "overflowed"));
    free(err);
}

int main(int argc, char **argv) {
    return test_main(argc, argv,
                     (struct test_case[]){TEST_CASE(ping_pong_values, 30), TEST_CASE(callee_saved_registers, 30),
                                          TEST_CASE(fp_control_per_fiber, 30),
                                          TEST_CASE(ten_thousand_parked_fibers, 60), TEST_CASE(deep_recursion, 60),
                                          TEST_CASE(restart_reuses_the_stack, 30),
                                          TEST_CASE(resume_on_another_thread, 30), TEST_CASE(overflow_reported, 30),
                                          TEST_CASE(other_faults_pass_through, 30), {0}});
}
