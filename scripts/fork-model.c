/* fork-model.c — where a child-stealing fork's time goes: fib written by hand with the
 * stores of forkscope's fast path, one kind at a time taken away, timed beside the serial
 * projection and beside a fork shaped like Lace's.  A model, single-threaded: no thief ever
 * comes, so every slow path aborts; what it measures is the owner's fast path alone.
 *
 *   scripts/fork-model.sh [N] [ROUNDS]        (builds this with cc -O2, pins it to one CPU)
 *
 * Each round runs every variant once (best of 5 runs of fib(N)) in a fixed order; the
 * program prints, per variant, the median over rounds of its time over the serial
 * projection's in the same round, and the stores per internal node it makes.  Every
 * variant's answer is checked against an iterative fib; a wrong one exits 1. */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A record as child stealing writes it: thunk, link (the parent's frame), ret (the
 * result's address) and the argument, in a 64-byte slot. */
typedef struct rec {
    _Atomic uintptr_t thunk, link, ret;
    _Atomic uint64_t arg;
    uint64_t pad[4];
} rec;

/* The worker's hot state: the cursor, split (below it: public) and the push limit. */
static struct hot {
    rec *_Atomic cur;
    rec *_Atomic split;
    rec *_Atomic limit;
} hot;
static rec buf[1024];

/* The join cell a native frame starts with, and the two results. */
typedef struct {
    uint64_t sync0;
    int64_t a, b;
} frame;

#define R memory_order_relaxed
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* No thief runs here: a slow path is a bug in the model. */
__attribute__((noinline, noreturn)) static void slow(void) {
    fprintf(stderr, "fork-model: a slow path was taken\n");
    exit(2);
}

static void push4(rec *s, frame *fr, int n) {
    atomic_store_explicit(&s->thunk, 1, R);
    atomic_store_explicit(&s->link, (uintptr_t)fr, R);
    atomic_store_explicit(&s->ret, (uintptr_t)&fr->a, R);
    atomic_store_explicit(&s->arg, (uint64_t)n, R);
}

/* The pop's test, as forkscope's: the cursor is stored, then split read (a thief that
 * forces a publication runs membarrier() between its store of split and its load of cur). */
#define POP_CHECK(s)                                                                       \
    do {                                                                                   \
        atomic_signal_fence(memory_order_seq_cst);                                         \
        if (UNLIKELY((s) < atomic_load_explicit(&hot.split, R)))                           \
            slow();                                                                        \
    } while (0)

/* native-now: child-native's fast path today.  The cursor is loaded from the hot state at
 * the push, stored after it, loaded and stored again at the pop. */
__attribute__((noinline)) static int64_t fib_now(int n) {
    frame fr;
    fr.sync0 = 0;
    rec *s = atomic_load_explicit(&hot.cur, R);
    if (UNLIKELY(s >= atomic_load_explicit(&hot.limit, R)))
        slow();
    push4(s, &fr, n - 1);
    atomic_store_explicit(&hot.cur, s + 1, memory_order_release);
    int m = n - 2;
    fr.b = m < 2 ? m : fib_now(m);
    __asm__ volatile("" ::: "memory");
    if (UNLIKELY(atomic_load_explicit(&hot.cur, R) - 1 != s))
        slow();
    atomic_store_explicit(&hot.cur, s, memory_order_release);
    POP_CHECK(s);
    int k = (int)atomic_load_explicit(&s->arg, R);
    int64_t a = k < 2 ? k : fib_now(k);
    __asm__ volatile("" : "+r"(a)); /* (keeps the call out of tail position: no loop) */
    return a + fr.b;
}

/* native-reg: the same stores, the cursor handed to each task in a register (a hidden
 * parameter) instead of loaded from the hot state the last push or pop stored. */
__attribute__((noinline)) static int64_t fib_reg(int n, rec *cur) {
    frame fr;
    fr.sync0 = 0;
    rec *s = cur;
    if (UNLIKELY(s >= atomic_load_explicit(&hot.limit, R)))
        slow();
    push4(s, &fr, n - 1);
    atomic_store_explicit(&hot.cur, s + 1, memory_order_release);
    int m = n - 2;
    fr.b = m < 2 ? m : fib_reg(m, s + 1);
    __asm__ volatile("" ::: "memory");
    if (UNLIKELY(atomic_load_explicit(&hot.cur, R) - 1 != s))
        slow();
    atomic_store_explicit(&hot.cur, s, memory_order_release);
    POP_CHECK(s);
    int k = (int)atomic_load_explicit(&s->arg, R);
    int64_t a = k < 2 ? k : fib_reg(k, s);
    __asm__ volatile("" : "+r"(a)); /* (keeps the call out of tail position: no loop) */
    return a + fr.b;
}

/* native-reg, no join cell: the frame's sync0 is not zeroed (a design where the join's
 * state lives elsewhere: the records, as Lace's). */
__attribute__((noinline)) static int64_t fib_nosync(int n, rec *cur) {
    frame fr;
    rec *s = cur;
    if (UNLIKELY(s >= atomic_load_explicit(&hot.limit, R)))
        slow();
    push4(s, &fr, n - 1);
    atomic_store_explicit(&hot.cur, s + 1, memory_order_release);
    int m = n - 2;
    fr.b = m < 2 ? m : fib_nosync(m, s + 1);
    __asm__ volatile("" ::: "memory");
    if (UNLIKELY(atomic_load_explicit(&hot.cur, R) - 1 != s))
        slow();
    atomic_store_explicit(&hot.cur, s, memory_order_release);
    POP_CHECK(s);
    int k = (int)atomic_load_explicit(&s->arg, R);
    int64_t a = k < 2 ? k : fib_nosync(k, s);
    __asm__ volatile("" : "+r"(a)); /* (keeps the call out of tail position: no loop) */
    return a + fr.b;
}

/* native-reg, cursor never stored: what a deque whose owner never publishes its cursor
 * would save (Lace's: a thief asks, the owner answers; no thief reads the cursor). */
__attribute__((noinline)) static int64_t fib_nocur(int n, rec *cur) {
    frame fr;
    fr.sync0 = 0;
    rec *s = cur;
    if (UNLIKELY(s >= atomic_load_explicit(&hot.limit, R)))
        slow();
    push4(s, &fr, n - 1);
    int m = n - 2;
    fr.b = m < 2 ? m : fib_nocur(m, s + 1);
    __asm__ volatile("" ::: "memory");
    POP_CHECK(s);
    int k = (int)atomic_load_explicit(&s->arg, R);
    int64_t a = k < 2 ? k : fib_nocur(k, s);
    __asm__ volatile("" : "+r"(a)); /* (keeps the call out of tail position: no loop) */
    return a + fr.b;
}

/* push4 in the order a live mark needs: the thunk (the mark) last. */
static void push_live(rec *s, frame *fr, int n) {
    atomic_store_explicit(&s->link, (uintptr_t)fr, R);
    atomic_store_explicit(&s->ret, (uintptr_t)&fr->a, R);
    atomic_store_explicit(&s->arg, (uint64_t)n, R);
    atomic_store_explicit(&s->thunk, 1, memory_order_release);
}

/* native-live: native-reg-nocur where each slot says whether it is live instead (the design
 * that would let a forcing thief find the owner's bottom without the cursor: the push writes
 * the thunk last, the pop clears it before its test of split).  One store more than nocur. */
__attribute__((noinline)) static int64_t fib_live(int n, rec *cur) {
    frame fr;
    fr.sync0 = 0;
    rec *s = cur;
    if (UNLIKELY(s >= atomic_load_explicit(&hot.limit, R)))
        slow();
    push_live(s, &fr, n - 1);
    int m = n - 2;
    fr.b = m < 2 ? m : fib_live(m, s + 1);
    __asm__ volatile("" ::: "memory");
    atomic_store_explicit(&s->thunk, 0, R);
    POP_CHECK(s);
    int k = (int)atomic_load_explicit(&s->arg, R);
    int64_t a = k < 2 ? k : fib_live(k, s);
    __asm__ volatile("" : "+r"(a)); /* (keeps the call out of tail position: no loop) */
    return a + fr.b;
}

/* native-live-ret: native-live where a call also hands back the cursor its callee left (a
 * second result register: a callee's slow path may move the deque), and the pop checks that
 * it is just past the slot the push wrote (a predicted branch, as FK_POP_AT's). */
typedef struct {
    int64_t v;
    rec *cur;
} live_ret;
__attribute__((noinline)) static live_ret fib_liveret(int n, rec *cur) {
    frame fr;
    fr.sync0 = 0;
    rec *s = cur;
    if (UNLIKELY(s >= atomic_load_explicit(&hot.limit, R)))
        slow();
    push_live(s, &fr, n - 1);
    int m = n - 2;
    rec *c = s + 1;
    if (m < 2) {
        fr.b = m;
    } else {
        live_ret r = fib_liveret(m, c);
        fr.b = r.v;
        c = r.cur;
    }
    __asm__ volatile("" ::: "memory");
    if (UNLIKELY(c - 1 != s))
        slow();
    atomic_store_explicit(&s->thunk, 0, R);
    POP_CHECK(s);
    int k = (int)atomic_load_explicit(&s->arg, R);
    live_ret out = {k, s};
    if (k >= 2)
        out = fib_liveret(k, s);
    __asm__ volatile("" : "+r"(out.v)); /* (keeps the call out of tail position: no loop) */
    out.v += fr.b;
    return out;
}

/* native-lin: native-live-ret as a deque whose slots never move could run it (one linear
 * mapping, no wrap and no growth: a slot's address then orders as its index does, so a pop
 * may trust the slot its push wrote).  The fork's child hands back a cursor that the pop
 * does not look at (if that child's subtree emptied the deque, this slot was stolen first,
 * and the pop's test of split fails); the cursor the task hands back is the one its last
 * call handed back (a slow path under it may have moved the deque's bottom). */
__attribute__((noinline)) static live_ret fib_lin(int n, rec *cur) {
    frame fr;
    fr.sync0 = 0;
    rec *s = cur;
    if (UNLIKELY(s >= atomic_load_explicit(&hot.limit, R)))
        slow();
    push_live(s, &fr, n - 1);
    int m = n - 2;
    fr.b = m < 2 ? m : fib_lin(m, s + 1).v;
    __asm__ volatile("" ::: "memory");
    atomic_store_explicit(&s->thunk, 0, R);
    POP_CHECK(s);
    int k = (int)atomic_load_explicit(&s->arg, R);
    live_ret out = {k, s};
    if (k >= 2)
        out = fib_lin(k, s);
    __asm__ volatile("" : "+r"(out.v)); /* (keeps the call out of tail position: no loop) */
    out.v += fr.b;
    return out;
}

/* native-idx: native-lin on the circular deque as it is, the cursor handed around as an
 * index (an index never wraps, so the pop's test of split stays right across a wrap, a
 * growth or a reset of the deque): the push makes the slot's address from the buffer and
 * the mask (read from the hot state, where only slow paths write them), the pop tests the
 * index.  (After a growth, the pops of slots pushed before it would take the slow path.) */
typedef struct {
    int64_t v;
    uint64_t ci;
} idx_ret;
static struct {
    rec *buf;
    uint64_t mask, split, limit;
} hoti;
__attribute__((noinline)) static idx_ret fib_idx(int n, uint64_t ci) {
    frame fr;
    fr.sync0 = 0;
    if (UNLIKELY(ci >= *(volatile uint64_t *)&hoti.limit))
        slow();
    rec *s = hoti.buf + (ci & hoti.mask);
    push_live(s, &fr, n - 1);
    int m = n - 2;
    fr.b = m < 2 ? m : fib_idx(m, ci + 1).v;
    __asm__ volatile("" ::: "memory");
    atomic_store_explicit(&s->thunk, 0, R);
    atomic_signal_fence(memory_order_seq_cst);
    if (UNLIKELY(ci < *(volatile uint64_t *)&hoti.split))
        slow();
    int k = (int)atomic_load_explicit(&s->arg, R);
    idx_ret out = {k, ci};
    if (k >= 2)
        out = fib_idx(k, ci);
    __asm__ volatile("" : "+r"(out.v)); /* (keeps the call out of tail position: no loop) */
    out.v += fr.b;
    return out;
}

/* (scripts/tools-test.sh builds one copy with MODEL_BIAS 1: the check of the answers must
 * then fail.) */
#ifndef MODEL_BIAS
#define MODEL_BIAS 0
#endif

/* lace-like: a two-word record (the task and its argument), no frame (the results in
 * registers), the cursor in a register and never stored. */
__attribute__((noinline)) static int64_t fib_lace(int n, rec *cur) {
    rec *s = cur;
    if (UNLIKELY(s >= atomic_load_explicit(&hot.limit, R)))
        slow();
    atomic_store_explicit(&s->thunk, 1, R);
    atomic_store_explicit(&s->arg, (uint64_t)(n - 1), R);
    int m = n - 2;
    int64_t b = m < 2 ? m : fib_lace(m, s + 1);
    __asm__ volatile("" : "+r"(b)::"memory");
    POP_CHECK(s);
    int k = (int)atomic_load_explicit(&s->arg, R);
    int64_t a = k < 2 ? k : fib_lace(k, s);
    __asm__ volatile("" : "+r"(a)); /* (keeps the call out of tail position: no loop) */
    return a + b + MODEL_BIAS;
}

/* lace-live: lace-like with the live mark (the argument, then the thunk; the pop clears the
 * thunk before its test of split): Lace's record on the deque of force.pml -DLOWER, the
 * fast path forkscope's child-native would have at the end of that road. */
__attribute__((noinline)) static int64_t fib_lacelive(int n, rec *cur) {
    rec *s = cur;
    if (UNLIKELY(s >= atomic_load_explicit(&hot.limit, R)))
        slow();
    atomic_store_explicit(&s->arg, (uint64_t)(n - 1), R);
    atomic_store_explicit(&s->thunk, 1, memory_order_release);
    int m = n - 2;
    int64_t b = m < 2 ? m : fib_lacelive(m, s + 1);
    __asm__ volatile("" : "+r"(b)::"memory");
    atomic_store_explicit(&s->thunk, 0, R);
    POP_CHECK(s);
    int k = (int)atomic_load_explicit(&s->arg, R);
    int64_t a = k < 2 ? k : fib_lacelive(k, s);
    __asm__ volatile("" : "+r"(a)); /* (keeps the call out of tail position: no loop) */
    return a + b;
}

/* lace-like, with the cursor stored at the push and the pop as forkscope does. */
__attribute__((noinline)) static int64_t fib_lacecur(int n, rec *cur) {
    rec *s = cur;
    if (UNLIKELY(s >= atomic_load_explicit(&hot.limit, R)))
        slow();
    atomic_store_explicit(&s->thunk, 1, R);
    atomic_store_explicit(&s->arg, (uint64_t)(n - 1), R);
    atomic_store_explicit(&hot.cur, s + 1, memory_order_release);
    int m = n - 2;
    int64_t b = m < 2 ? m : fib_lacecur(m, s + 1);
    __asm__ volatile("" : "+r"(b)::"memory");
    if (UNLIKELY(atomic_load_explicit(&hot.cur, R) - 1 != s))
        slow();
    atomic_store_explicit(&hot.cur, s, memory_order_release);
    POP_CHECK(s);
    int k = (int)atomic_load_explicit(&s->arg, R);
    int64_t a = k < 2 ? k : fib_lacecur(k, s);
    __asm__ volatile("" : "+r"(a)); /* (keeps the call out of tail position: no loop) */
    return a + b;
}

/* The serial projection with its leaf test at the call site, as every fork variant above
 * and forkscope's own fib (partly inlined) have it: half the calls of the projection. */
__attribute__((noinline)) static int64_t fib_serial_leaf(int n) {
    int64_t a = n - 1 < 2 ? n - 1 : fib_serial_leaf(n - 1);
    __asm__ volatile("" : "+r"(a));
    int64_t b = n - 2 < 2 ? n - 2 : fib_serial_leaf(n - 2);
    __asm__ volatile("" : "+r"(b));
    return a + b;
}

/* The serial projection, as kernels/fib.c writes it. */
__attribute__((noinline)) static int64_t fib_serial(int n) {
    if (n < 2)
        return n;
    int64_t a = fib_serial(n - 1);
    int64_t b = fib_serial(n - 2);
    __asm__ volatile("" : "+r"(b));
    return a + b;
}

enum { SERIAL, SERIAL_LEAF, NOW, REG, NOSYNC, NOCUR, LIVE, LIVERET, LIN, IDX, LACECUR, LACELIVE, LACE, NV };
static const struct {
    const char *name, *what;
    int stores; /* per internal node, besides the call's return address and saved registers */
} variants[NV] = {
    [SERIAL] = {"serial", "the serial projection (kernels/fib.c)", 0},
    [SERIAL_LEAF] = {"serial-leaftest", "the same, the leaf test at the call site (as every row below)", 0},
    [NOW] = {"native-now", "child-native today: 4-word record, join cell, cursor in the hot state", 8},
    [REG] = {"native-reg", "the same, the cursor in a register (stored as before)", 8},
    [NOSYNC] = {"native-reg-nosync", "native-reg without zeroing the join cell", 7},
    [NOCUR] = {"native-reg-nocur", "native-reg without the cursor's two stores (and the pop's test of it)", 6},
    [LIVE] = {"native-live", "native-reg-nocur, the pop clearing the slot's thunk (a live mark) instead", 7},
    [LIVERET] = {"native-live-ret", "native-live, the cursor handed back by each call and checked at the pop", 7},
    [LIN] = {"native-lin", "native-live-ret on a deque whose slots never move: no check at the pop", 7},
    [IDX] = {"native-idx", "native-lin on the circular deque: the cursor an index, the slot's address made from it", 7},
    [LACECUR] = {"lace-like-cur", "2-word record, no frame, cursor stored at push and pop", 4},
    [LACELIVE] = {"lace-live", "lace-like with the live mark: set last at the push, cleared at the pop", 3},
    [LACE] = {"lace-like", "2-word record, no frame, cursor never stored", 2},
};

static int64_t run(int v, int n) {
    atomic_store_explicit(&hot.cur, buf, R);
    switch (v) {
    case SERIAL: return fib_serial(n);
    case SERIAL_LEAF: return n < 2 ? n : fib_serial_leaf(n);
    case NOW: return fib_now(n);
    case REG: return fib_reg(n, buf);
    case NOSYNC: return fib_nosync(n, buf);
    case NOCUR: return fib_nocur(n, buf);
    case LIVE: return fib_live(n, buf);
    case LIVERET: return fib_liveret(n, buf).v;
    case LIN: return fib_lin(n, buf).v;
    case IDX: return fib_idx(n, 0).v;
    case LACECUR: return fib_lacecur(n, buf);
    case LACELIVE: return fib_lacelive(n, buf);
    default: return fib_lace(n, buf);
    }
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 32, rounds = argc > 2 ? atoi(argv[2]) : 11;
    if (n < 2 || n > 45 || rounds < 1 || rounds > 1000) {
        fprintf(stderr, "usage: fork-model [N (2..45)] [ROUNDS (1..1000)]\n");
        return 2;
    }
    int64_t want = 0, next = 1;
    for (int i = 0; i < n; i++) {
        int64_t t = want + next;
        want = next;
        next = t;
    }
    atomic_store_explicit(&hot.split, buf, R);
    hoti.buf = buf;
    hoti.mask = sizeof buf / sizeof buf[0] - 1;
    hoti.limit = hoti.mask;
    atomic_store_explicit(&hot.limit, buf + sizeof buf / sizeof buf[0] - 1, R);
    double *ratio = calloc((size_t)rounds * NV, sizeof *ratio), t[NV];
    if (!ratio)
        return 2;
    for (int r = 0; r < rounds; r++) {
        for (int v = 0; v < NV; v++) {
            t[v] = 1e30;
            for (int rep = 0; rep < 5; rep++) {
                double t0 = now();
                int64_t got = run(v, n);
                double dt = now() - t0;
                if (got != want) {
                    fprintf(stderr, "fork-model: %s: fib(%d) = %lld, not %lld\n", variants[v].name, n, (long long)got,
                            (long long)want);
                    return 1;
                }
                t[v] = dt < t[v] ? dt : t[v];
            }
        }
        for (int v = 0; v < NV; v++)
            ratio[v * rounds + r] = t[v] / t[SERIAL];
    }
    printf("fib(%d), %d rounds: median time / the serial projection's (quartiles); stores per internal node\n", n,
           rounds);
    for (int v = 0; v < NV; v++) {
        double *x = ratio + v * rounds;
        qsort(x, (size_t)rounds, sizeof *x, cmp_double);
        printf("  %-18s %.3f [%.3f, %.3f]  %d  %s\n", variants[v].name, x[rounds / 2], x[rounds / 4],
               x[(3 * rounds) / 4], variants[v].stores, variants[v].what);
    }
    free(ratio);
    return 0;
}
