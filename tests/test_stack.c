/* test_stack.c — frame stacks seen from inside a task.
 *
 * Segmented: stacklets double (or fit a larger request), at most one empty stacklet stays
 * cached, one more than twice its predecessor is freed, FILO contents survive, and the pool
 * gives all memory back (checked by LeakSanitizer in `make check-asan`).  Linear: one
 * region, reused, contents survive. */
#include "runtime/place.h"
#include "runtime/worker.h"
#include "tests/testlib.h"

#define MAXS 16
static size_t sizes[MAXS];
static int cur, count;

static void look(fk_worker *w) { count = fk__stack_describe(w, sizes, MAXS, &cur); }

typedef struct {
    fk_frame fk;
    char *a, *b, *c;
} probe_frame;

static int failures;
#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "  %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);       \
            failures++;                                                                      \
        }                                                                                    \
    } while (0)

#if FK_STACK != FK_STACK_LIN
static uint64_t allocs(fk_worker *w) { return atomic_load(&w->st.stacklets_alloc); }

/* Runs on a pool whose first stacklet is 4096 bytes. */
FK_TASK(seg_probe, int, probe_frame *f) {
    FK_BEGIN(f);
    look(fk__current_worker());
    CHECK(count == 1 && sizes[0] == 4096 && cur == 0);

    f->a = FK_ALLOC(char, 3000); /* fits the first stacklet */
    memset(f->a, 'a', 3000);
    look(fk__current_worker());
    CHECK(count == 1);

    f->b = FK_ALLOC(char, 3000); /* does not: a new stacklet, twice the first */
    memset(f->b, 'b', 3000);
    look(fk__current_worker());
    CHECK(count == 2 && sizes[1] == 8192 && cur == 1);

    FK_FREE(f->b); /* back to the first; the empty second stays cached */
    look(fk__current_worker());
    CHECK(count == 2 && cur == 0);

    uint64_t before = allocs(fk__current_worker());
    f->b = FK_ALLOC(char, 3000); /* reuses the cached stacklet */
    look(fk__current_worker());
    CHECK(count == 2 && cur == 1 && allocs(fk__current_worker()) == before);

    f->c = FK_ALLOC(char, 100000); /* larger than twice the current: a stacklet that fits */
    memset(f->c, 'c', 100000);
    look(fk__current_worker());
    CHECK(count == 3 && cur == 2 && sizes[2] >= 100000 && sizes[2] < 100000 + 128);

    FK_FREE(f->c); /* more than twice its predecessor: freed, not cached */
    look(fk__current_worker());
    CHECK(count == 2 && cur == 1);

    for (int i = 0; i < 3000; i++) /* FILO: the older blocks are intact */
        CHECK(f->a[i] == 'a');
    FK_FREE(f->b);
    look(fk__current_worker());
    CHECK(count == 2 && cur == 0); /* the 8192 stacklet cached */
    FK_FREE(f->a);
    FK_RETURN(failures);
} FK_END

/* At most one empty stacklet cached: grow to four stacklets, then unwind. */
FK_TASK(seg_one_cached, int, probe_frame *f) {
    FK_BEGIN(f);
    f->a = FK_ALLOC(char, 3500); /* stacklet 0 (4096) full */
    f->b = FK_ALLOC(char, 8000); /* stacklet 1 (8192) */
    f->c = FK_ALLOC(char, 16000); /* stacklet 2 (16384) */
    look(fk__current_worker());
    CHECK(count == 3 && cur == 2 && sizes[1] == 8192 && sizes[2] == 16384);
    FK_FREE(f->c);
    look(fk__current_worker());
    CHECK(count == 3 && cur == 1); /* 16384 cached */
    FK_FREE(f->b);
    look(fk__current_worker());
    CHECK(count == 2 && cur == 0); /* 8192 cached; the 16384 beyond it was freed */
    FK_FREE(f->a);
    FK_RETURN(failures);
} FK_END
#endif

#if FK_STACK == FK_STACK_LIN
FK_TASK(lin_probe, int, probe_frame *f) {
    FK_BEGIN(f);
    f->a = FK_ALLOC(char, 1 << 20);
    memset(f->a, 'a', 1 << 20);
    f->b = FK_ALLOC(char, 3 << 20);
    memset(f->b, 'b', 3 << 20);
    look(fk__current_worker());
    CHECK(count == 1 && cur == 0);
    CHECK(f->b - f->a >= (1 << 20) && f->b - f->a <= (1 << 20) + 64); /* contiguous (debug builds add a header) */
    FK_FREE(f->b);
    for (int i = 0; i < (1 << 20); i++)
        CHECK(f->a[i] == 'a');
    FK_FREE(f->a);
    FK_RETURN(failures);
} FK_END
#endif

/* Recursion that lives on the frame stack: checks every frame's contents on the way back. */
typedef struct {
    fk_frame fk;
    int depth, r;
    uint64_t pattern[20];
} rec_frame;

FK_TASK(rec, int, rec_frame *f, (int, depth)) {
    FK_BEGIN(f);
    f->depth = depth;
    for (int i = 0; i < 20; i++)
        f->pattern[i] = (uint64_t)depth * 1000 + (uint64_t)i;
    f->r = 0;
    if (depth > 0) {
        FK_FORK(r, rec, depth - 1);
        FK_JOIN();
    }
    int bad = f->r;
    for (int i = 0; i < 20; i++)
        bad += f->pattern[i] != (uint64_t)f->depth * 1000 + (uint64_t)i;
    FK_RETURN(bad);
} FK_END

static fk_pool *pool_of(unsigned workers) {
    fk_pool_opts o;
    fk_pool_opts_init(&o);
    o.workers = workers;
    o.stacklet_bytes = 4096;
    fk_pool *p;
    ASSERT_EQ(fk_pool_create(&p, &o), 0);
    return p;
}

TEST(stack_rules) {
    fk_pool *p = pool_of(1);
    int bad = -1;
#if FK_STACK != FK_STACK_LIN
    ASSERT_EQ(FK_RUN(p, &bad, seg_probe), 0);
    ASSERT_EQ(bad, 0);
    ASSERT_EQ(FK_RUN(p, &bad, seg_one_cached), 0);
    ASSERT_EQ(bad, 0);
#else
    ASSERT_EQ(FK_RUN(p, &bad, lin_probe), 0);
    ASSERT_EQ(bad, 0);
#endif
    fk_pool_destroy(p);
}

/* Shallower under sanitizers: ThreadSanitizer tracks every native frame (slowly). */
#define DEPTH (TEST_SANITIZED ? 5000 : 50000)

TEST(frames_survive_deep_recursion) {
    for (unsigned w = 1; w <= 3; w++) {
        fk_pool *p = pool_of(w);
        int bad = -1;
        ASSERT_EQ(FK_RUN(p, &bad, rec, DEPTH), 0);
        ASSERT_EQ(bad, 0);
        fk_stats st;
        fk_pool_stats(p, &st, NULL);
        if (!FK__NATIVE_FRAMES) /* native frames are on the C stack */
            ASSERT_GE(st.stack_bytes_peak, DEPTH * sizeof(rec_frame));
        fk_pool_destroy(p);
    }
}

/* After a computation the pool holds little: each worker its current stack, a spare and
 * at most one cached stacklet; everything else went back. */
TEST(memory_returned) {
    fk_pool *p = pool_of(2);
    int bad;
    ASSERT_EQ(FK_RUN(p, &bad, rec, 2 * DEPTH), 0);
    ASSERT_EQ(bad, 0);
    int64_t held = atomic_load(&p->stack_bytes);
    fk_stats st;
    fk_pool_stats(p, &st, NULL);
    printf("  after the run: %lld bytes of frame stack held, peak %llu\n", (long long)held,
           (unsigned long long)st.stack_bytes_peak);
#if FK_STACK != FK_STACK_LIN
    ASSERT_LE(held, (int64_t)st.stack_bytes_peak / 2 + 64 * 1024);
#endif
    fk_pool_destroy(p); /* LeakSanitizer (asan builds) checks the rest */
}

/* Values a task keeps in registers across its frame's allocation (doubles in vector
 * registers, integers in general ones: the compiler sees the allocation's slow path as an
 * asm that clobbers nothing) survive that slow path, in both of its forms: stepping into
 * the cached stacklet and back (the quick path, which must touch no vector register) and
 * allocating or freeing a stacklet (everything saved).  A first stacklet of 256 bytes holds
 * none of these frames (~270 bytes); the next ones double (512, 1024, 2048): each 6-deep
 * recursion crosses three stacklet ends on the way down and back, through both paths.
 * (It sees only the registers the compiler keeps values in across the allocation.) */
typedef struct {
    fk_frame fk;
    double r, before;
    char pad[192];
} swing_frame;

static double swing_serial(int d, double x) {
    double a = x * 1.5, b = x + 2.25, c = x * x, e = a * b - c;
    uint64_t g = (uint64_t)(x * 1000.0) ^ 0x5bd1e995u;
    if (d == 0)
        return a + b + c + e + (double)(g & 0xffff);
    double before = a + 2 * b + 3 * c + 4 * e + (double)(g % 977);
    return before + swing_serial(d - 1, x + 1);
}

FK_TASK(swing, double, swing_frame *f, (int, d), (double, x)) {
    double a = x * 1.5, b = x + 2.25, c = x * x, e = a * b - c;
    uint64_t g = (uint64_t)(x * 1000.0) ^ 0x5bd1e995u;
    if (d == 0)
        FK_RETURN(a + b + c + e + (double)(g & 0xffff));
    FK_BEGIN(f); /* a, b, c, e and g are live across the allocation */
    f->before = a + 2 * b + 3 * c + 4 * e + (double)(g % 977);
    FK_CALL(r, swing, d - 1, x + 1);
    FK_RETURN(f->before + f->r);
} FK_END

typedef struct {
    fk_frame fk;
    int i;
    double r, sum;
} swinger_frame;

FK_TASK(swinger, double, swinger_frame *f, (int, k)) {
    FK_BEGIN(f);
    f->sum = 0;
    for (f->i = 0; f->i < k; f->i++) {
        FK_CALL(r, swing, 6, f->i * 0.37);
        f->sum += f->r;
    }
    FK_RETURN(f->sum);
} FK_END

TEST(registers_survive_stacklet_swings) {
    fk_pool_opts o;
    fk_pool_opts_init(&o);
    o.workers = 1;
    o.stacklet_bytes = 256;
    fk_pool *p;
    ASSERT_EQ(fk_pool_create(&p, &o), 0);
    double want = 0, got = -1;
    for (int i = 0; i < 2000; i++)
        want += swing_serial(6, i * 0.37);
    ASSERT_EQ(FK_RUN(p, &got, swinger, 2000), 0);
    ASSERT(got == want);
    fk_stats st;
    fk_pool_stats(p, &st, NULL);
    if (!FK__NATIVE_FRAMES && FK_STACK != FK_STACK_LIN) /* it did swing across stacklets */
        ASSERT_GE(st.stacklets_alloc, 2);
    fk_pool_destroy(p);
}

/* ---- placement (runtime/place.h, issue 19) ----------------------------------------------
 * Each worker's hot memory sits at the same address modulo FK_PLACE_ALIGN whatever the
 * sizes of its mappings and wherever address-space randomisation put them: its C stack's
 * top, its deque buffer's mapping and (linear stacks) its frame region at their phases, and
 * so fk__tls, just below the stack's top, at one phase for every worker of every pool.
 * Pools of several sizes (the sizes issue 19 found fast or a coin toss) on 2 workers; a
 * root on each worker reads its own worker's regions. */
typedef struct {
    fk_frame fk;
} where_frame;

typedef struct {
    uintptr_t hot, cstack_top, deque, frames;
} placed;

FK_TASK(where_am_i, int, where_frame *f, (placed *, out)) {
    FK_BEGIN(f);
    fk_worker *w = FK__H->w;
    out->hot = (uintptr_t)w->hot;
    out->cstack_top = (uintptr_t)w->cstack_map + w->cstack_map_bytes;
    out->deque = (uintptr_t)w->dq_cur->mem;
    out->frames = FK_STACK == FK_STACK_LIN ? (uintptr_t)w->stk_cur : 0;
    FK_RETURN(0);
} FK_END

TEST(hot_memory_placed) {
    const size_t stacks[][2] = {{64u << 20, 64u << 20},          {100000000, 256u << 20},
                                {256u << 20, (256u << 20) + 4096}, {(256u << 20) + 65536, 128u << 20},
                                {128u << 20, 100000000}};
    const uintptr_t mask = FK_PLACE_ALIGN - 1;
    uintptr_t hot_phase = 0;
    unsigned long unplaced = fk__place_unplaced();
    for (size_t i = 0; i < sizeof stacks / sizeof stacks[0]; i++) {
        fk_pool_opts o;
        fk_pool_opts_init(&o);
        o.workers = 2;
        o.thread_stack_bytes = stacks[i][0];
        o.linear_stack_bytes = stacks[i][1];
        fk_pool *p;
        ASSERT_EQ(fk_pool_create(&p, &o), 0);
        for (int k = 0; k < 2; k++) {
            placed at = {0};
            int r = -1;
            ASSERT_EQ(FK_RUN_ON(p, k, &r, where_am_i, &at), 0);
            ASSERT_EQ(r, 0);
            printf("  stacks %zu/%zu, worker %d: C stack top %#lx, fk__tls %#lx, deque %#lx, frames %#lx "
                   "(phases %#lx %#lx %#lx %#lx)\n", stacks[i][0], stacks[i][1], k, (unsigned long)at.cstack_top,
                   (unsigned long)at.hot, (unsigned long)at.deque, (unsigned long)at.frames,
                   (unsigned long)(at.cstack_top & mask), (unsigned long)(at.hot & mask),
                   (unsigned long)(at.deque & mask), (unsigned long)(at.frames & mask));
            ASSERT_EQ(at.cstack_top & mask, FK__PLACE_CSTACK_TOP);
            ASSERT_EQ(at.deque & mask, FK__PLACE_DEQUE);
            if (FK_STACK == FK_STACK_LIN)
                ASSERT_EQ(at.frames & mask, FK__PLACE_FRAMES);
            ASSERT_MSG(at.hot < at.cstack_top && at.cstack_top - at.hot < 65536,
                       "fk__tls at %#lx is not just below the C stack's top %#lx", (unsigned long)at.hot,
                       (unsigned long)at.cstack_top);
            if (!hot_phase)
                hot_phase = at.hot & mask;
            ASSERT_EQ(at.hot & mask, hot_phase);
        }
        fk_pool_destroy(p);
    }
    ASSERT_EQ(fk__place_unplaced(), unplaced); /* nothing fell back to an unplaced mapping */
}

int main(int argc, char **argv) {
    printf("# test_stack: variant %s\n", fk_build_variant());
    return test_main(argc, argv, (struct test_case[]){
        TEST_CASE(stack_rules, 30),
        TEST_CASE(frames_survive_deep_recursion, 60),
        TEST_CASE(memory_returned, 60),
        TEST_CASE(registers_survive_stacklet_swings, 30),
        TEST_CASE(hot_memory_placed, 60),
        {0},
    });
}
