/* forkscope/impl.h — the machinery behind the task macros of forkscope.h.
 *
 * Nothing here is API: names start with fk__ and may change.  It is in the public header
 * directory only because the fork/join fast path must be inlined into user tasks.
 *
 * HOW A TASK IS COMPILED (frame-stack variants: seg, lin)
 *   FK_TASK(name, ...) { body } FK_END makes the body an always-inline function and
 *   instantiates it twice:
 *     name          the fast clone: entered by an ordinary call (a fork, a call, a root).  It
 *                   never resumes anything, so it has no dispatch at its entry, and a leaf
 *                   (a task that returns before FK_BEGIN) costs what a C leaf costs;
 *     name__slow    the slow clone: entered only to resume a frame (after a steal, a join
 *                   that waited, a hop), with the parameters kept past the frame
 *                   (PARAMETERS below).  FK_BEGIN opens a `switch` on the frame's resume
 *                   point and every FK_FORK, FK_CALL, FK_JOIN and FK_SWITCH_TO puts a `case`
 *                   after itself (Duff's device): that is how a resumed task continues in
 *                   the middle of its body.
 *   A resume point is a static descriptor {task info, index, offset of the saved
 *   parameters}; the frame holds a pointer to the last one passed.  A task returns its
 *   result (see RESULTS below).  A task whose C frame must die because its rest runs
 *   elsewhere unwinds the C stack.  With continuation stealing every C frame between the
 *   worker's loop and it is dead then (each older continuation was stolen first, or was
 *   left public by a hop; a caller waiting in FK_CALL is resumed by its callee's end): the
 *   runtime jumps straight back to the worker's loop (siglongjmp), so FK_CALL costs no
 *   test.  With child stealing a frame whose join ran a child that unwound still has
 *   records to count, so such a task sets the worker's `unwinding` flag and returns no
 *   value; its callers see the flag, store nothing and return too, up to the worker's
 *   loop, which clears it.
 *
 * THE WORKER'S HOT STATE is thread-local (struct fk__hot, one per thread; workers use
 * theirs): the fast path reaches the frame-stack pointer and the deque cursor with one
 * %fs-relative instruction each and no register is spent on a worker pointer.  Thieves
 * reach another worker's through fk_worker.hot.  With continuation stealing on frame
 * stacks a task also gets the top and the cursor from its parent in registers (FK_WREGS,
 * forkscope/config.h) and only stores them to the hot state.
 *
 * SLOW PATHS THAT MUST NOT COST THE FAST PATH REGISTERS (x86-64): a slow call in the
 * middle of a task (frame allocation past a stacklet's end, a push that serves a thief's
 * request or grows the deque, the free that empties a stacklet) would make every value live across it need a callee-saved
 * register, which the compiler then saves in the prologue that leaves share.  These are
 * called through an asm stub that preserves every register, the vector state included
 * (runtime/tramp.c), so to the compiler they cost nothing.  Elsewhere (other
 * architectures, sanitizer builds) they are plain calls. */
#ifndef FORKSCOPE_IMPL_H
#define FORKSCOPE_IMPL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "config.h"
#include "pp.h"

#ifdef __cplusplus
#error "forkscope is a C library"
#endif

typedef struct fk_worker fk_worker;
typedef struct fk_frame fk_frame;
typedef struct fk__record fk__record;

#define FK__LIKELY(x) __builtin_expect(!!(x), 1)
#define FK__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define FK__NOINLINE __attribute__((noinline))
#define FK__COLD __attribute__((cold, noinline))
#define FK__UNUSED __attribute__((unused))
#define FK__INLINE static inline __attribute__((always_inline, unused))
#define FK__NORETURN _Noreturn
#define FK__RELAXED memory_order_relaxed
#if defined(__clang__)
#define FK__NO_MAYBE_UNINIT
#elif __GNUC__ >= 12
/* (and -Wdangling-pointer: in a slow clone, whose resume points jump into the middle of
 * blocks, GCC 12 takes the address of a fork's argument or result temporary, used in the
 * block where it lives, for one used after the block) */
#define FK__NO_MAYBE_UNINIT                                                                \
    _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")                            \
    _Pragma("GCC diagnostic ignored \"-Wdangling-pointer\"")
#else
#define FK__NO_MAYBE_UNINIT _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#endif

/* A frame's link to whoever waits for it: the parent's frame, or a root record. */
#define FK__LINK_CALLED ((uintptr_t)1) /* parent called us (no fork): resume it directly */
#define FK__LINK_ROOT ((uintptr_t)2)   /* link is an fk__root, not a frame */
#define FK__LINK_COUNTER ((uintptr_t)4) /* link is an fk_counter (FK_SPAWN, fibers) */
#define FK__LINK_MASK ((uintptr_t)7)

/* The join counter: children that finish after their parent was stolen add 1, the parent
 * adds K - steals when it reaches the join; whoever brings it to K continues the parent. */
#define FK__JOIN_K ((uint32_t)1 << 31)

typedef void fk__thunk_fn(const fk__record *);
typedef void fk__resume_fn(fk_frame *);

/* What every task knows about itself (one static object per task), and a resume point. */
typedef struct fk__task_info {
    fk__resume_fn *resume; /* the slow clone, entered with the frame */
    const char *name;
} fk__task_info;
typedef struct fk__rp {
    const fk__task_info *info;
    uint64_t idx;      /* the `case` of the resume point in the task's body */
    uint64_t args_at;  /* the task's saved parameters: this many bytes past its frame's start */
} fk__rp;
/* Resume points are numbered from here, so that an FK_FORK written inside a user's own
 * switch on an int is rejected by the compiler ("case label value exceeds maximum value
 * for type"; -Wswitch-outside-range) instead of resuming nowhere. */
#define FK__RP_BASE 0x4B00000000ull

/* ---- frames ----------------------------------------------------------------------------- */

#if !FK__NATIVE_FRAMES
/* The header every task frame starts with (member `fk` of the user's frame struct).
 * All fields are private to the runtime. */
struct fk_frame {
    const fk__rp *rp;       /* where to continue: set before each fork/call, and at a join that waits */
    uintptr_t link;         /* parent frame (| CALLED) or root record (| ROOT) */
    void *ret;              /* where the task's result goes */
    union { /* zeroed together by one store when the frame is made */
        struct {
            uint32_t steals;        /* children of this scope that finish elsewhere (written by the frame's owner) */
            _Atomic uint32_t joins; /* arrivals at the join counter, see FK__JOIN_K */
        };
        uint64_t sync0;
    };
    void *stack;            /* the stack this frame lives on, recorded when its worker lets go of it */
#if FK_STEAL == FK_STEAL_CHILD
    uint32_t nrec;          /* records of this scope still in the deque, saved at FK_CALL (owner only) */
#endif
#if FK_DEBUG
    uint32_t dbg_magic;     /* FK__DBG_MAGIC while the frame is live */
    uint32_t dbg_scope;     /* forks since the last join */
    void *dbg_top_alloc;    /* latest live FK_ALLOC block of this task */
#endif
};
#else
/* Native frames live in the task's C stack frame and are never resumed: the header is the
 * join cell through which thieves report the children they took. */
struct fk_frame {
    union {
        struct {
            _Atomic uint32_t done;  /* stolen children of the current scope that finished
                                       (fibers: + FK__JOIN_K - stolen once the join parks) */
            _Atomic uint32_t thief; /* 1 + the worker that stole one of them last, or 0 */
        };
        uint64_t sync0;
    };
#if FK_STACK == FK_STACK_FIBER
    void *waiter;           /* the fiber parked at the join (set before it adds K - stolen) */
#endif
#if FK_DEBUG
    uint32_t dbg_magic;
    uint32_t dbg_scope;
    void *dbg_top_alloc;
#endif
};
#endif

/* A child-stealing deque slot, and a root submitted from outside: a call waiting to happen.
 * Every word is atomic because a thief may read a slot while its owner rewrites it (the
 * thief's CAS then fails and it discards what it read). */
struct fk__record {
    _Atomic uintptr_t thunk; /* fk__thunk_fn *: unpacks args and calls the task */
    _Atomic uintptr_t link;
    _Atomic uintptr_t ret;
    _Atomic uint64_t args[FK_RECORD_ARG_WORDS];
};

#if FK_STEAL == FK_STEAL_CONT
typedef struct fk__slot {
    _Atomic(fk_frame *) frame; /* a parent whose continuation may be stolen */
} fk__slot;
#else
typedef struct fk__record fk__slot;
#endif

/* ---- the worker's hot state (thread-local) ------------------------------------------------ */

struct fk__hot {
    /* ---- one cache line: everything the fork and join's fast path touches (FK_FORK_AT's
     * check also reads cs_lo and cs_size, on the next) ----
     * Frame stack (owner only): [lo, hi) is the usable part of the current stacklet or
     * region; sp is the next free byte. */
    _Alignas(64) char *sp;
    char *hi;
    char *lo;
    /* Deque, owner's private view: cur is the owner's cursor (bottom = lap + (cur - buf));
     * slots from split to bottom are private: thieves never take them, so push and pop need
     * no fence.  Slots from top to split are public.  splitp is split's slot; cur - 1 >=
     * splitp means the newest slot is private (when the buffer wraps the test may say no
     * wrongly, never yes wrongly: the slow path sorts it out).
     * cur and splitp are atomic because a thief that forces a publication (deque.c) reads
     * cur and moves split.  The owner stores cur with release: a forcing thief's acquire
     * load of cur then orders the slots and what they point to (the frames, the records'
     * arguments) before its use of them. */
    _Atomic(fk__slot *) cur;
    _Atomic(fk__slot *) splitp;
    /* push takes its slow path when cur >= limit: limit is the end of the buffer or the
     * slot that top + capacity maps to, whichever comes first, or NULL: a thief asks the
     * owner to publish work.  Thieves write it rarely (only when it is not already NULL). */
    _Atomic(fk__slot *) limit;
    uint8_t unwinding;    /* child stealing: the C stack is unwinding (the rest of a task runs elsewhere) */
    fk_worker *w;         /* the worker this thread is (NULL on other threads) */
    /* ---- the owner's slow-path state ---- */
    _Alignas(64) uint64_t lap;
    uint64_t split;
    fk__slot *buf;
    uint64_t mask;
    /* This worker thread's C stack, [cs_lo, cs_lo + cs_size) (0, 0 on other threads): release
     * builds refuse a result address in it (fk__at_check). */
    uintptr_t cs_lo, cs_size;
    /* Counted by the task macros when compiled with FK_STATS >= 2 (the layout does not
     * depend on FK_STATS).  Written by the owner only (load + store, no atomic RMW); atomic
     * so that anyone may read them at any time. */
    _Atomic uint64_t n_fork, n_call;
#if FK_STEAL == FK_STEAL_CHILD
    _Alignas(64) fk__record scratch; /* a record on its way to the push slow path (x86-64 stub) */
#endif
};

extern _Thread_local struct fk__hot fk__tls __attribute__((tls_model(FK_TLS_MODEL)));
#if FK_STACK != FK_STACK_FIBER
#define FK__H (&fk__tls)
#else
/* Fibers move between threads: a task that calls, forks or joins may continue on another
 * worker's thread.  Within a function the compiler takes the thread pointer to be constant
 * and may keep it in a register across calls (GCC does, e.g. to count forks with
 * FK_STATS=2), so the hot state of the thread the task left would be used.  Here every use
 * reads the thread pointer afresh: a volatile asm is neither merged with another nor moved
 * across a call.  Elsewhere, an out-of-line function does the same. */
#if defined(__x86_64__)
FK__INLINE struct fk__hot *fk__hot_now(void) {
    struct fk__hot *h;
    __asm__ volatile("movq %%fs:0, %0\n\tleaq fk__tls@tpoff(%0), %0" : "=r"(h));
    return h;
}
#define FK__H fk__hot_now()
#else
struct fk__hot *fk__hot_now_out(void);
#define FK__H fk__hot_now_out()
#endif
#endif

/* The hot state as the fork and the join's pop reach it (FK__HOT).  With native frames a
 * task's C frame never leaves its thread, so FK_BEGIN takes the address once, into a
 * register the compiler keeps across the children's calls (fk__h): the accesses are then
 * short register-relative instructions, not %fs-relative ones with 32-bit displacements
 * (measured on fib here: T1/Ts 0.85 -> 0.81; Lace reaches its worker through a register
 * too).  On frame stacks a task continues in another C frame after a resumption (and the
 * slow clone enters FK_BEGIN past its declarations), and the register would cost the
 * fast path a callee-saved register more (slower: FK_POP_AT in config.h): FK__H there. */
#if FK_STACK == FK_STACK_NATIVE
#define FK__HOT fk__h
#define FK__HOT_INIT                                                                       \
    ({                                                                                     \
        struct fk__hot *fk__hp = FK__H;                                                    \
        __asm__("" : "+r"(fk__hp)); /* (a register, not %fs-relative addressing) */        \
        fk__hp;                                                                            \
    })
#else
#define FK__HOT FK__H
#define FK__HOT_INIT NULL
#endif

/* The owner's accesses to its cur, splitp and limit.  GCC reaches a thread-local _Atomic
 * through the thread pointer (two instructions and a register kept across calls); a
 * volatile access is one %fs-relative instruction.  On x86-64 an aligned 8-byte move is
 * atomic, a compiler fence before the store gives release order (TSO does the rest), and
 * the loads here are relaxed.  Elsewhere, and under ThreadSanitizer, C11 atomics. */
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
FK__INLINE fk__slot *fk__hload(_Atomic(fk__slot *) *p) { return *(fk__slot *volatile *)(void *)p; }
/* The bound a fast-path test compares with (limit, splitp): a plain load, which the
 * compiler folds into the compare.  It is read once per push or pop, after a call or a
 * compiler fence, so it cannot be cached across the events that change it. */
FK__INLINE fk__slot *fk__hbound(_Atomic(fk__slot *) *p) { return *(fk__slot **)(void *)p; }
FK__INLINE void fk__hstore_release(_Atomic(fk__slot *) *p, fk__slot *v) {
    atomic_signal_fence(memory_order_release);
    *(fk__slot *volatile *)(void *)p = v;
}
#else
FK__INLINE fk__slot *fk__hload(_Atomic(fk__slot *) *p) { return atomic_load_explicit(p, memory_order_relaxed); }
FK__INLINE fk__slot *fk__hbound(_Atomic(fk__slot *) *p) { return atomic_load_explicit(p, memory_order_relaxed); }
FK__INLINE void fk__hstore_release(_Atomic(fk__slot *) *p, fk__slot *v) {
    atomic_store_explicit(p, v, memory_order_release);
}
#endif

#define FK__COUNT(c)                                                                       \
    atomic_store_explicit(&(c), atomic_load_explicit(&(c), memory_order_relaxed) + 1, memory_order_relaxed)
#if FK_STATS >= 2
#define FK__STAT_INC(field) FK__COUNT(FK__H->field)
#else
#define FK__STAT_INC(field) ((void)0)
#endif

/* The span build's hooks (runtime/span.c): a task starts (enter), the strand running now
 * ends before a fork or call (strand), a forked or called child has returned (fork_end,
 * call_end), a join (join), a return (leave). */
#if FK_SPAN
void fk__span_enter(void);
void fk__span_strand(void);
void fk__span_fork_end(void);
void fk__span_call_end(void);
void fk__span_join(void);
void fk__span_leave(void);
#define FK__SPAN(hook) fk__span_##hook()
#else
#define FK__SPAN(hook) ((void)0)
#endif

/* ---- out-of-line slow paths (runtime) ---------------------------------------------- */

/* What fk__pop_slow (continuation stealing) tells the fork: go on, or continue at the resume point. */
enum { FK__POP_CONTINUE, FK__POP_RESUME };

void *fk__alloc_slow(size_t n);
void fk__free_slow(void *p);
#if FK_STEAL == FK_STEAL_CONT
void fk__push_slow(fk_frame *f);
int fk__pop_slow(fk_frame *f);
#else
void fk__push_slow(void); /* the record is in FK__H->scratch */
const fk__record *fk__pop_slow(void);
#endif
#if !FK__NATIVE_FRAMES && FK_STEAL == FK_STEAL_CONT
/* These return only to go on: to unwind they jump to the worker's loop. */
void fk__join(fk_frame *f);
_Noreturn void fk__switch(fk_frame *f, unsigned worker);
#elif !FK__NATIVE_FRAMES
int fk__join(fk_frame *f);
void fk__join_unwound(fk_frame *f, uint32_t detached);
void fk__switch(fk_frame *f, unsigned worker);
#elif FK_STACK == FK_STACK_NATIVE
void fk__lf_join(fk_frame *f, uint32_t stolen);
#else
void fk__fiber_join(fk_frame *f, uint32_t stolen);
const fk__record *fk__pop_slow_of(uintptr_t owner);
#endif
int fk__run(fk_pool *pool, int worker, fk__thunk_fn *thunk, void *ret, const void *args, size_t size);
unsigned fk__worker_id(void);

FK__NORETURN FK__COLD void fk__misuse(const char *what, const char *task, const char *file, int line);
FK__NORETURN FK__COLD void fk__bad_resume(const fk__task_info *task, uint64_t idx);

/* Slow calls that preserve every register (see the top of this file). */
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && !defined(FK_NO_STUBS)
#define FK__STUBS 1
#else
#define FK__STUBS 0
#endif
#if FK__STUBS
#define FK__STUB_CALL_(stub, ...)                                                          \
    __asm__ volatile("lea -128(%%rsp), %%rsp\n\t" /* step over the red zone */             \
                     "call " #stub "\n\t"                                                  \
                     "lea 128(%%rsp), %%rsp"                                               \
                     : __VA_ARGS__                                                         \
                     : "memory", "cc")
#define FK__SLOW_ALLOC(n)                                                                  \
    ({                                                                                     \
        void *fk__sr;                                                                      \
        FK__STUB_CALL_(fk__alloc_slow_stub, "=a"(fk__sr) : "0"((size_t)(n)));              \
        fk__sr;                                                                            \
    })
/* (rax is the stubs' result register: a void slow path still changes it.) */
/* (The free's stub keeps rax too: a task's result may be there.) */
#define FK__SLOW_FREE(p) FK__STUB_CALL_(fk__free_slow_stub, : "D"(p))
#if FK_STEAL == FK_STEAL_CONT
#define FK__SLOW_PUSH(f)                                                                   \
    do {                                                                                   \
        uintptr_t fk__sd;                                                                  \
        FK__STUB_CALL_(fk__push_slow_stub, "=a"(fk__sd) : "D"(f));                         \
        (void)fk__sd;                                                                      \
    } while (0)
#else
#define FK__SLOW_PUSH()                                                                    \
    do {                                                                                   \
        uintptr_t fk__sd;                                                                  \
        FK__STUB_CALL_(fk__push_slow_stub, "=a"(fk__sd) :);                                \
        (void)fk__sd;                                                                      \
    } while (0)
#endif
#else
#define FK__SLOW_ALLOC(n) fk__alloc_slow(n)
#define FK__SLOW_FREE(p) fk__free_slow(p)
#if FK_STEAL == FK_STEAL_CONT
#define FK__SLOW_PUSH(f) fk__push_slow(f)
#else
#define FK__SLOW_PUSH() fk__push_slow()
#endif
#endif

/* ---- frame stack --------------------------------------------------------------------- */

#define FK__ALIGN 16
#define FK__ROUND(n) (((n) + (FK__ALIGN - 1)) & ~(size_t)(FK__ALIGN - 1))

/* Allocates n bytes (a multiple of FK__ALIGN) on the worker's current stack.  (The
 * comparison is on addresses: a stack never ends within n bytes of the address space's.) */
FK__INLINE void *fk__alloc(size_t n) {
    struct fk__hot *h = FK__H;
    char *p = h->sp;
    if (FK__UNLIKELY((uintptr_t)p + n > (uintptr_t)h->hi))
        return FK__SLOW_ALLOC(n);
    h->sp = p + n;
    return p;
}

/* Frees the latest allocation p (FILO). */
FK__INLINE void fk__free(void *p) {
    struct fk__hot *h = FK__H;
#if FK_STACK != FK_STACK_LIN
    if (FK__UNLIKELY((char *)p == h->lo)) { /* the stacklet becomes empty */
        FK__SLOW_FREE(p); /* (a stub: a task's result lives across it in a register) */
        return;
    }
#endif
    h->sp = (char *)p;
}

/* The copies of a record's argument words are unrolled: their count is a constant, but
 * atomic stores and loads keep GCC from unrolling the loop by itself, and the loop kept
 * 5 doubles (integrate) going through memory twice: 40 instructions per fork and join. */
#define FK__UNROLL_ARGS _Pragma("GCC unroll 8")

/* ---- deque, owner side --------------------------------------------------------------- */

/* Pushes one slot.  Fast path: the slot at cur is below limit; it is written with relaxed
 * stores and becomes visible to thieves only when the owner publishes it (a release store
 * of split_pub in deque.c, paired with the thief's acquire load).  Slow path (limit
 * reached: the buffer's end, a full buffer, or a thief's request): the slow path writes the
 * slot itself and, if a thief asked, publishes the oldest half of the private slots, the
 * new one counted among them (so a parent that forks and then runs a long leaf can be
 * stolen at once when it is the only one). */
#if FK_STEAL == FK_STEAL_CONT
/* The push at the cursor *curp, which it leaves past the new slot (or where the slow path
 * left it).  FK_WREGS builds pass the task's own copy (fk__cur); the others, fk__push, a
 * copy just loaded from the hot state. */
FK__INLINE uintptr_t fk__push_w(fk_frame *f, fk__slot **curp) {
    struct fk__hot *h = FK__H;
    fk__slot *s = *curp;
    if (FK__UNLIKELY(s >= fk__hbound(&h->limit))) {
        FK__SLOW_PUSH(f);
        *curp = fk__hbound(&h->cur); /* (where the slow path left it) */
        return 0;
    }
    atomic_store_explicit(&s->frame, f, FK__RELAXED);
    fk__hstore_release(&h->cur, s + 1);
    *curp = s + 1;
    return (uintptr_t)s;
}
FK__INLINE uintptr_t fk__push(fk_frame *f) {
    fk__slot *cur = fk__hload(&FK__H->cur);
    return fk__push_w(f, &cur);
}

/* Takes back the frame pushed last: 1 if it was still private (the common case); else the
 * slow path decides (FK__POP_*).  The cursor is stored before split is read (the owner's
 * half of the Dekker pattern with a thief that forces a publication: the thief moves
 * split, then runs membarrier(), then reads cur; see deque.c).  The new cursor is left in
 * *curp, for an FK_WREGS task's next push or call.  (It loads the cursor: taking the slot
 * the push returned instead, FK_POP_AT's way, keeps that address in a callee-saved
 * register across the child's call, which made fib 13% slower on cont-lin here: a push, a
 * pop and a move in every task, where the load is one instruction.) */
FK__INLINE int fk__pop_w(fk__slot **curp) {
    struct fk__hot *h = FK__H;
    fk__slot *s = fk__hload(&h->cur) - 1;
    fk__hstore_release(&h->cur, s);
    *curp = s;
    atomic_signal_fence(memory_order_seq_cst);
    return s >= fk__hbound(&h->splitp);
}
FK__INLINE int fk__pop_fast(void) {
    fk__slot *cur;
    return fk__pop_w(&cur);
}
/* The same, for the slot at `at` the fork pushed to (0: the push took its slow path).  The
 * cursor is normally s + 1 again when the child returns; storing s (a register) rather
 * than the loaded cursor less one keeps the cursor's value out of a chain through memory:
 * the load only feeds a branch, which the processor predicts. */
FK__INLINE int fk__pop_fast_at(uintptr_t at) {
    struct fk__hot *h = FK__H;
    if (!FK_POP_AT || FK__UNLIKELY((uintptr_t)fk__hload(&h->cur) - sizeof(fk__slot) != at))
        return fk__pop_fast();
    fk__slot *s = (fk__slot *)at;
    fk__hstore_release(&h->cur, s);
    atomic_signal_fence(memory_order_seq_cst);
    return s >= fk__hbound(&h->splitp);
}

#if FK_WREGS
#define FK__PUSH(f) fk__push_w((f), &fk__cur)
#define FK__POP(at) ((void)(at), fk__pop_w(&fk__cur))
#else
#define FK__PUSH(f) fk__push(f)
#define FK__POP(at) fk__pop_fast_at(at)
#endif
#else
/* A record's arguments as the 8-byte words they are stored in.  (The bytes past the
 * arguments in the last word are never read.) */
#define FK__ARG_WORDS(T) ((sizeof(T) + 7) / 8)

FK__INLINE void fk__record_write(fk__record *s, fk__thunk_fn *thunk, uintptr_t link, void *ret, const uint64_t *w,
                                 size_t nw) {
    atomic_store_explicit(&s->thunk, (uintptr_t)thunk, FK__RELAXED);
    atomic_store_explicit(&s->link, link, FK__RELAXED);
    atomic_store_explicit(&s->ret, (uintptr_t)ret, FK__RELAXED);
    FK__UNROLL_ARGS
    for (size_t i = 0; i < nw; i++)
        atomic_store_explicit(&s->args[i], w[i], FK__RELAXED);
}

/* Returns the slot written, as an address (0: the push took its slow path), for the pop
 * that takes it back (fk__pop_record_at). */
FK__INLINE uintptr_t fk__push_record_h(struct fk__hot *h, fk__thunk_fn *thunk, uintptr_t link, void *ret, const uint64_t *w, size_t nw) {
    fk__slot *s = fk__hload(&h->cur);
    if (FK__UNLIKELY(s >= fk__hbound(&h->limit))) {
        fk__record_write(&h->scratch, thunk, link, ret, w, nw);
        FK__SLOW_PUSH();
        return 0;
    }
    fk__record_write(s, thunk, link, ret, w, nw);
    fk__hstore_release(&h->cur, s + 1);
    return (uintptr_t)s;
}
FK__INLINE uintptr_t fk__push_record(fk__thunk_fn *thunk, uintptr_t link, void *ret, const uint64_t *w, size_t nw) {
    return fk__push_record_h(FK__H, thunk, link, ret, w, nw);
}

/* Takes back the record pushed last, or returns NULL if it was stolen: then so were all
 * of the scope's older ones (the caller counts them).  Stores the cursor before reading
 * split, as continuation stealing's pop does. */
FK__INLINE const fk__record *fk__pop_record(void) {
    struct fk__hot *h = FK__H;
    fk__slot *s = fk__hload(&h->cur) - 1;
    fk__hstore_release(&h->cur, s);
    atomic_signal_fence(memory_order_seq_cst);
    if (FK__LIKELY(s >= fk__hbound(&h->splitp)))
        return s;
    return fk__pop_slow();
}

/* The same, told where the record should be: at `at` (the address fk__push_record returned
 * for the scope's newest record, or the one below the record popped last).  Where the
 * cursor is just past it, as it is unless a slow path moved the deque, the pop takes that
 * slot, which is what fk__pop_record would take: the cursor's loaded value then only feeds
 * a predicted branch, and the slot's address (and the arguments read through it) come
 * from a register, not from a chain of stores and loads of the cursor through every pop
 * of the subtree run before.  Elsewhere (at is 0, or the cursor is not where expected),
 * fk__pop_record (and always, in builds with FK_POP_AT 0: forkscope/config.h). */
FK__INLINE const fk__record *fk__pop_record_at_h(struct fk__hot *h, uintptr_t at) {
    if (!FK_POP_AT || FK__UNLIKELY((uintptr_t)fk__hload(&h->cur) - sizeof(fk__slot) != at))
        return fk__pop_record();
    fk__slot *s = (fk__slot *)at;
    if (!s)
        __builtin_unreachable(); /* (the cursor is never at the first slot past address 0) */
    fk__hstore_release(&h->cur, s);
    atomic_signal_fence(memory_order_seq_cst);
    if (FK__LIKELY(s >= fk__hbound(&h->splitp)))
        return s;
    return fk__pop_slow();
}
FK__INLINE const fk__record *fk__pop_record_at(uintptr_t at) { return fk__pop_record_at_h(FK__H, at); }

#if FK_STACK == FK_STACK_FIBER
/* Fibers share their worker's deque: a fiber that parked left its records below those of
 * the fiber that ran next, and a fiber may resume on another worker.  So a join takes the
 * newest record only if it is its own (its link is the joining frame): if not, none of its
 * scope's records is on top, and those it left elsewhere run detached, as if stolen.  A
 * private slot that is not ours is pushed back (its content is unchanged: the same as
 * pushing it again). */
FK__INLINE const fk__record *fk__pop_record_of(uintptr_t owner) {
    struct fk__hot *h = FK__H;
    fk__slot *s = fk__hload(&h->cur) - 1;
    fk__hstore_release(&h->cur, s);
    atomic_signal_fence(memory_order_seq_cst);
    if (FK__LIKELY(s >= fk__hbound(&h->splitp))) {
        if (FK__LIKELY(atomic_load_explicit(&s->link, FK__RELAXED) == owner))
            return s;
        fk__hstore_release(&h->cur, s + 1);
        return NULL;
    }
    return fk__pop_slow_of(owner);
}
#define FK__POP_OWN(at) ((void)(at), fk__pop_record_of((uintptr_t)FK__STACK_ADDR(fk__frame_store.fk)))
#else
#define FK__POP_OWN(at) fk__pop_record_at_h(FK__HOT, at)
#endif
#endif

/* ---- records ----------------------------------------------------------------------- */

FK__INLINE void fk__record_args(const fk__record *r, void *args, size_t size) {
    uint64_t words[FK_RECORD_ARG_WORDS];
    FK__UNROLL_ARGS
    for (size_t i = 0; i < (size + 7) / 8; i++)
        words[i] = atomic_load_explicit(&r->args[i], memory_order_relaxed);
    memcpy(args, words, size);
}
#define fk__record_link(r) atomic_load_explicit(&(r)->link, memory_order_relaxed)
#define fk__record_ret(r) ((void *)atomic_load_explicit(&(r)->ret, memory_order_relaxed))
#define fk__record_thunk(r) ((fk__thunk_fn *)atomic_load_explicit(&(r)->thunk, memory_order_relaxed))

/* ---- frames -------------------------------------------------------------------------- */

#define FK__DBG_MAGIC 0xF0F0C0DEu

#if !FK__NATIVE_FRAMES
FK__INLINE void fk__frame_init(fk_frame *f, uintptr_t link, void *ret) {
    f->link = link;
    f->ret = ret;
    f->sync0 = 0; /* steals and joins; the frame is not shared yet */
#if FK_DEBUG
    f->rp = NULL;
    f->dbg_magic = FK__DBG_MAGIC;
    f->dbg_scope = 0;
    f->dbg_top_alloc = NULL;
#endif
}

/* Allocates and initialises a task frame of n bytes (past the end of the current stacklet
 * or region: the slow path allocates, then the same stores initialise it). */
FK__INLINE fk_frame *fk__frame_new(size_t n, uintptr_t link, void *ret) {
    struct fk__hot *h = FK__H;
    char *p = h->sp;
    if (FK__UNLIKELY((uintptr_t)p + n > (uintptr_t)h->hi))
        p = FK__SLOW_ALLOC(n);
    else
        h->sp = p + n;
    fk__frame_init((fk_frame *)(void *)p, link, ret);
    return (fk_frame *)(void *)p;
}
#if FK_WREGS
/* The top `spo` bytes past the frame f, made afresh where it is used (the compiler would
 * otherwise keep the sum in a callee-saved register across the children's calls). */
FK__INLINE char *fk__w_at(fk_frame *f, ptrdiff_t spo) {
    uintptr_t b = (uintptr_t)f;
    __asm__("" : "+r"(b));
    return (char *)(b + (uintptr_t)spo);
}
/* The same at p, the top the task was given (fk__isp); leaves the top's distance past the
 * frame in *spo. */
FK__INLINE fk_frame *fk__frame_new_w(char *p, size_t n, uintptr_t link, void *ret, ptrdiff_t *spo) {
    struct fk__hot *h = FK__H;
    if (FK__UNLIKELY((uintptr_t)p + n > (uintptr_t)h->hi))
        p = FK__SLOW_ALLOC(n); /* (which reads the same top from the hot state) */
    else
        h->sp = p + n;
    *spo = (ptrdiff_t)n; /* the top is n bytes past the frame, wherever the frame went */
    fk__frame_init((fk_frame *)(void *)p, link, ret);
    return (fk_frame *)(void *)p;
}
#define FK__FRAME_NEW(n, link, ret) fk__frame_new_w(fk__isp, (n), (link), (ret), &fk__spo)
#else
#define FK__FRAME_NEW(n, link, ret) fk__frame_new((n), (link), (ret))
#endif
#endif

#if FK_DEBUG
#define FK__CHECK(cond, what)                                                              \
    ((cond) ? (void)0 : fk__misuse(what, fk__task_name, __FILE__, __LINE__))
#else
#define FK__CHECK(cond, what) ((void)0)
#endif

#if FK_DEBUG
void *fk__dbg_alloc(fk_frame *f, size_t n, int has_frame, const char *task, const char *file, int line);
void fk__dbg_free(fk_frame *f, void *p, const char *task, const char *file, int line);
#endif
void fk__check_cstack_slot(const void *slot, const char *what, const char *task, const char *file, int line);

/* ==== the task macros ======================================================================
 * Common to every variant: the argument struct, the thunk that runs a record, and an
 * apply function that calls the task with arguments evaluated earlier (a fork evaluates
 * them before it pushes the parent: once pushed, the parent may run elsewhere at once).
 *
 * RESULTS: a task's C function returns its result (in registers), and whoever called it
 * stores it where the fork or call said: the parent's fork or call (which then often needs
 * no reload: the compiler sees the store), a record's thunk, a join that runs its own
 * record.  A void task returns a one-byte dummy (struct fk__none), so that every task has
 * a value type and the store, skipped for it, still type-checks.  With frames on frame
 * stacks a task also gets its result address (fk__ret): a task that finishes in its slow
 * clone, resumed elsewhere, has no caller waiting for a value and stores it itself; a
 * child whose C frame died never gives its caller a value (continuation stealing: it does
 * not return; child stealing: the caller sees FK__H->unwinding and stores nothing), since
 * the child will store it. */

struct fk__none {
    char fk__c;
};
#define FK__IS_VOID(T) __builtin_types_compatible_p(T, void)
/* The type a task of result type RET returns: RET, or struct fk__none for void. */
#define FK__RV_T(RET) __typeof__(__builtin_choose_expr(FK__IS_VOID(RET), (struct fk__none){0}, *(RET *)0))

/* A task's C parameters: with frames on frame stacks the link to its parent and its result
 * address first; native frames need neither.  FK__SIG declares them (M: FK__PDECL),
 * FK__RARGS passes a record's or argument struct's (fields fk__a.NAME). */
#if FK__NATIVE_FRAMES
#define FK__SIG(M, RET, ...) FK__PLIST(M, __VA_ARGS__)
#define FK__RARGS(link, ret, ...) FK__ALIST(FK__ARG, __VA_ARGS__)
#define FK__LINK_UNUSED ((void)0)
#else
#define FK__SIG(M, RET, ...) uintptr_t fk__link, RET *fk__ret FK__WSIG FK__PARAMS(M, __VA_ARGS__)
#define FK__RARGS(link, ret, ...) (link), (ret)FK__WPASS FK__PARAMS(FK__ARG, __VA_ARGS__)
#define FK__LINK_UNUSED ((void)fk__link, (void)fk__ret FK__WUNUSED)
#endif

/* The worker's registers (FK_WREGS, forkscope/config.h): a task's hidden parameters
 * fk__isp (the frame stack's top) and fk__icur (the deque's cursor), kept in the locals
 * fk__spo (the top's distance past the task's frame) and fk__cur.  FK__WSIG declares
 * them, FK__WPASS passes the names, FK__WNONE passes nothing (a resumption, which loads
 * them), FK__WLOAD_DECL declares them loaded from the hot state (a record's thunk),
 * FK__WCHILD passes a child the task's own. */
#if FK_WREGS
#define FK__WSIG , char *fk__isp, fk__slot *fk__icur
#define FK__WPASS , fk__isp, fk__icur
#define FK__WNONE , (char *)0, (fk__slot *)0
#define FK__WUNUSED , (void)fk__isp, (void)fk__icur
#define FK__WLOAD_DECL                                                                     \
    char *const fk__isp = FK__H->sp;                                                       \
    fk__slot *const fk__icur = fk__hbound(&FK__H->cur);
#define FK__WLOCALS                                                                        \
    ptrdiff_t fk__spo FK__UNUSED = 0;                                                      \
    fk__slot *fk__cur FK__UNUSED = fk__icur;
/* The slow clone (resumed, perhaps on another worker) takes them from the hot state. */
#define FK__W_SP() (fk__resuming ? FK__H->sp : fk__w_at(fk__self, fk__spo))
#define FK__W_CUR() (fk__resuming ? fk__hbound(&FK__H->cur) : fk__cur)
#define FK__WCHILD , FK__W_SP(), FK__W_CUR()
/* After a child may have moved the cursor (a failed pop that goes on: settling it may move
 * the cursor, e.g. back across the buffer's start; a call, whose child may have been
 * resumed in place): a plain load, which the compiler drops when the value is not used (a
 * call that ends a scope).  The top is not reloaded there: the child's subtree gave back
 * every frame it took (a pop that goes on, or a call that returns here, means that no
 * newer slot was stolen), and a merged value would cost a callee-saved register across
 * later calls; FK__WCHECK checks it in FK_DEBUG builds.  FK_ALLOC and FK_FREE move the top
 * (FK_DEBUG refuses them before FK_BEGIN or in a leaf; in a release build the frame then
 * goes at the moved top: the parameter itself is reloaded).  The arithmetic is on
 * integers: on segmented stacks the top may be in another stacklet than the frame. */
#define FK__WRELOAD() ((void)(fk__cur = fk__hbound(&FK__H->cur)))
#define FK__WRELOAD_SP()                                                                   \
    ((void)(fk__has_frame ? (fk__spo = (ptrdiff_t)((uintptr_t)FK__H->sp - (uintptr_t)fk__self)) \
                          : (fk__isp = FK__H->sp, 0)))
/* FK_DEBUG: the task's copies are the worker's (before a push, a call, a frame). */
#define FK__WCHECK()                                                                       \
    FK__CHECK(fk__resuming || ((fk__has_frame ? fk__w_at(fk__self, fk__spo) : fk__isp) == FK__H->sp && \
                               fk__cur == fk__hload(&FK__H->cur)),                          \
              "internal: the task's copy of the frame stack's top or the deque's cursor is stale (FK_WREGS)")
#else
#define FK__WCHECK() ((void)0)
#define FK__WSIG
#define FK__WPASS
#define FK__WNONE
#define FK__WUNUSED
#define FK__WLOAD_DECL
#define FK__WLOCALS
#define FK__WCHILD
#define FK__WRELOAD() ((void)0)
#define FK__WRELOAD_SP() ((void)0)
#endif

/* The store of a result v of task type T (its rv_t) to dst, by the one that called it;
 * nothing for a void task. */
#define FK__STORE_RV(T, dst, v)                                                            \
    do {                                                                                   \
        if (!FK__IS_VOID(T##__ret_t))                                                      \
            *(T##__rv_t *)(void *)(dst) = (v);                                             \
    } while (0)
/* FK_SPAWN's, which may stand in a plain function (no task name there: the spawned one's). */
#if FK_DEBUG
#define FK__CHECK_SPAWN_DST(T, dst)                                                        \
    ((FK__IS_VOID(T##__ret_t) || (dst) != NULL)                                            \
         ? (void)0                                                                         \
         : fk__misuse("FK_SPAWN of a task that returns a value, with no result address", #T, __FILE__, __LINE__))
#else
#define FK__CHECK_SPAWN_DST(T, dst) ((void)0)
#endif
/* A fork or call of a task that returns a value needs somewhere to put it (FK_DEBUG). */
#define FK__CHECK_DST(T, dst)                                                              \
    FK__CHECK(FK__IS_VOID(T##__ret_t) || (dst) != NULL, "a task that returns a value was given no result address")

/* A task that returns without a value (it unwound: its caller stores nothing). */
#define FK__RETURN_UNWOUND() return (fk__rv_t){0}

/* What a caller needs to fork, call or run task name: its prototype, argument struct,
 * result type, thunk and apply.  STORAGE: static (FK_TASK) or extern (FK_TASK_DECLARE). */
#define FK__TASK_IFACE(name, RET, STORAGE, ...)                                            \
    typedef RET name##__ret_t;                                                             \
    typedef FK__RV_T(RET) name##__rv_t;                                                    \
    STORAGE name##__rv_t name(FK__SIG(FK__PDECL, RET, __VA_ARGS__));                       \
    struct name##__args {                                                                  \
        FK__FIELDS(__VA_ARGS__)                                                            \
    };                                                                                     \
    _Static_assert(sizeof(struct name##__args) <= 8 * FK_RECORD_ARG_WORDS,                 \
                   "the arguments of task " #name " do not fit a record (FK_RECORD_ARG_WORDS " \
                   "8-byte words): pass a pointer");                                       \
    /* Runs the call a record holds and returns its value (the record is read before: its  \
     * slot may be reused by the child's own forks). */                                    \
    FK__INLINE name##__rv_t name##__run(const fk__record *fk__r) {                         \
        struct name##__args fk__a;                                                         \
        fk__record_args(fk__r, &fk__a, sizeof fk__a);                                      \
        (void)fk__a; /* a task without parameters reads none */                            \
        FK__WLOAD_DECL                                                                     \
        return name(FK__RARGS(fk__record_link(fk__r), (RET *)fk__record_ret(fk__r), __VA_ARGS__)); \
    }                                                                                      \
    STORAGE void name##__thunk(const fk__record *fk__r);                                   \
    FK__INLINE name##__rv_t name##__apply(uintptr_t fk__link, RET *fk__ret FK__WSIG,         \
                                          const struct name##__args *fk__ap) {             \
        const struct name##__args fk__a = *fk__ap;                                         \
        (void)fk__a; /* a task without parameters reads none */                            \
        (void)fk__link;                                                                    \
        (void)fk__ret;                                                                     \
        return name(FK__RARGS(fk__link, fk__ret, __VA_ARGS__));                            \
    }

/* The thunk a record of the task runs (defined with the task): the call, then the store of
 * its value to the record's result address (none: the value is dropped), unless the
 * child unwound. */
#define FK__TASK_THUNK(name, STORAGE)                                                      \
    STORAGE FK__UNUSED void name##__thunk(const fk__record *fk__r) {                       \
        void *const fk__dst = fk__record_ret(fk__r);                                       \
        name##__rv_t fk__v = name##__run(fk__r);                                           \
        if (fk__dst && !FK__CHILD_UNWOUND())                                               \
            FK__STORE_RV(name, fk__dst, fk__v);                                            \
    }

#if FK__NATIVE_FRAMES || FK_STEAL == FK_STEAL_CONT
#define FK__CHILD_UNWOUND() 0 /* (continuation stealing: an unwinding child never returns) */
#else
#define FK__CHILD_UNWOUND() FK__UNLIKELY(FK__H->unwinding)
#endif

#define FK__TASK_COMMON(name, RET, ...)                                                    \
    FK__TASK_IFACE(name, RET, static, __VA_ARGS__)                                         \
    FK__TASK_THUNK(name, static)

/* A leaf: one plain function, never a frame, never resumed. */
#define FK__LEAF_TASK(name, RET, ...)                                                      \
    FK__TASK_COMMON(name, RET, __VA_ARGS__) FK__LEAF_BODY(name, RET, static, __VA_ARGS__)
/* A task declared with FK_TASK_DECLARE: its thunk and the function, with external linkage. */
#define FK__LEAF_TASK_DEFINE(name, RET, ...)                                               \
    FK__TASK_THUNK(name, ) FK__LEAF_BODY(name, RET, , __VA_ARGS__)
#define FK__TASK_DEFINE(name, RET, FRAMEDECL, ...)                                         \
    FK__TASK_THUNK(name, ) FK__TASK_BODY(name, RET, FRAMEDECL, , __VA_ARGS__)
#define FK__TASK(name, RET, FRAMEDECL, ...)                                                \
    FK__TASK_COMMON(name, RET, __VA_ARGS__)                                                \
    FK__TASK_BODY(name, RET, FRAMEDECL, static, __VA_ARGS__)

/* The names every task body declares: its result types, and that it is not resuming (a
 * task body on frame stacks has a parameter of that name instead). */
#define FK__BODY_TYPES(name)                                                               \
    typedef name##__ret_t fk__ret_t FK__UNUSED;                                            \
    typedef name##__rv_t fk__rv_t FK__UNUSED

#define FK__LEAF_BODY(name, RET, STORAGE, ...)                                             \
    _Pragma("GCC diagnostic push")                                                         \
    STORAGE name##__rv_t name(FK__SIG(FK__PDECL, RET, __VA_ARGS__)) {                      \
        static const char fk__task_name[] FK__UNUSED = #name;                              \
        FK__BODY_TYPES(name);                                                              \
        fk_frame *const fk__self FK__UNUSED = NULL;                                        \
        enum { fk__has_frame = 0, fk__resuming = 0 };                                      \
        FK__LINK_UNUSED;                                                                   \
        FK__WLOCALS /* (FK_ALLOC's) */                                                     \
        FK__SPAN(enter);                                                                   \
        {                                                                                  \
            {

/* FK_RETURN: the value goes back in registers.  A task finishing in its slow clone (frames
 * on frame stacks, resumed: no caller waits for a value) stores it first. */
#define FK__RETURN_VALUE(v)                                                                \
    do {                                                                                   \
        fk__rv_t fk__v = (v);                                                              \
        FK__SPAN(leave);                                                                   \
        FK__RETURN_STORE(fk__v);                                                           \
        FK__RETURN_FREE();                                                                 \
        return fk__v;                                                                      \
    } while (0)
#define FK__RETURN_NOVALUE()                                                               \
    do {                                                                                   \
        _Static_assert(FK__IS_VOID(fk__ret_t), "FK_RETURN_VOID in a task that returns a value: " \
                                               "use FK_RETURN(value)");                    \
        FK__SPAN(leave);                                                                   \
        FK__RETURN_FREE();                                                                 \
        return (fk__rv_t){0};                                                              \
    } while (0)

/* FK_ALLOC / FK_FREE, on the worker's frame stack in every variant.  (FK_WREGS: they move
 * the top, so the task's copy is loaded again; FK__WSYNC(e) gives e's value.) */
#if FK_WREGS
#define FK__WSYNC(e)                                                                       \
    ({                                                                                     \
        void *fk__we = (e);                                                                \
        FK__WRELOAD_SP();                                                                  \
        fk__we;                                                                            \
    })
#else
#define FK__WSYNC(e) (e)
#endif
#if FK_DEBUG
#define FK__ALLOC(T, n)                                                                    \
    ((T *)FK__WSYNC(fk__dbg_alloc(fk__self, fk__scratch_bytes((n), sizeof(T)), fk__has_frame, fk__task_name, \
                                  __FILE__, __LINE__)))
#define FK__FREE(p) (fk__dbg_free(fk__self, (p), fk__task_name, __FILE__, __LINE__), FK__WRELOAD_SP())
#define FK__SCOPE_OPEN() (fk__self->dbg_scope++)
#define FK__SCOPE_CLOSE() (fk__self->dbg_scope = 0)
#define FK__DBG_END()                                                                      \
    do {                                                                                   \
        if (fk__has_frame) {                                                               \
            FK__CHECK(fk__self->dbg_scope == 0, "FK_RETURN with forked children not joined"); \
            FK__CHECK(fk__self->dbg_top_alloc == NULL, "FK_RETURN with FK_ALLOC blocks not freed"); \
            fk__self->dbg_magic = 0;                                                       \
        }                                                                                  \
    } while (0)
#else
#define FK__ALLOC(T, n) ((T *)FK__WSYNC(fk__alloc(fk__scratch_bytes((n), sizeof(T)))))
#define FK__FREE(p) (fk__free(p), FK__WRELOAD_SP())
#define FK__SCOPE_OPEN() ((void)0)
#define FK__SCOPE_CLOSE() ((void)0)
#define FK__DBG_END() ((void)0)
#endif

/* Closes a task's body (the blocks its opening macro left open, and the function).  A
 * body that ends without FK_RETURN (or a stray `break` that left FK_BEGIN's switch) is a
 * misuse. */
#define FK__END                                                                            \
    }                                                                                      \
    }                                                                                      \
    fk__misuse("task body ended without FK_RETURN", fk__task_name, __FILE__, __LINE__);    \
    }                                                                                      \
    _Pragma("GCC diagnostic pop")

/* Runs a record the join popped itself.  The first one a join pops is the scope's last
 * fork (a call between a fork and the join leaves the deque as it found it), whose task
 * the compiler usually knows (fk__last, a constant in straight-line code): a direct call.
 * Later ones go through the thunk they carry, or a direct call to our own task. */
#define FK__RUN_RECORD(known, r, AFTER)                                                    \
    do {                                                                                   \
        fk__thunk_fn *fk__rt = (known) ? (known) : fk__record_thunk(r);                    \
        if (fk__rt == fk__self_thunk) {                                                    \
            /* the last fork's record: its result address is known too (fk__lastslot) */   \
            void *const fk__dst = (known) ? fk__lastslot : fk__record_ret(r);              \
            fk__rv_t fk__jv = fk__self_run(r); /* inlined: a direct call of the task */    \
            AFTER                                                                          \
            FK__STORE_RV(fk, fk__dst, fk__jv);                                            \
        } else {                                                                           \
            fk__rt(r);                                                                     \
            AFTER                                                                          \
        }                                                                                  \
    } while (0)

/* WHERE A RESULT GOES.  FK_FORK(m, ...) and FK_CALL(m, ...) store the child's result in
 * the frame's member m: the address is made here, from the frame, so a C local or a
 * parameter cannot be named (with frames on frame stacks neither survives a resumption
 * elsewhere, and a child may finish after the C frame that held it is gone).  FK_BEGIN
 * names the frame's type; its name is what a compiler shows when m is not a member, and
 * the line below is what it shows when the argument is not a member's name at all (the
 * old spelling FK_FORK(&f->m, ...), or NULL). */
#define FK__FRAME_TYPEDEF(var)                                                             \
    typedef __typeof__(*(var)) fk_result_must_name_a_member_of_this_frame__see_FK_FORK_AT FK__UNUSED; \
    _Static_assert(offsetof(fk_result_must_name_a_member_of_this_frame__see_FK_FORK_AT, fk) == 0, \
                   "a task frame must begin with its fk_frame member: typedef struct { fk_frame fk; ... }")
/* The address of member m for a result of task T: the member's type must be T's result
 * type (a narrower member would be overrun by the store). */
#define FK__MEMBER_SLOT(m, T)                                                              \
    (FK__OLD_SPELLING_CHECK(m), (void)sizeof(struct {                                      \
         _Static_assert(__builtin_types_compatible_p(                                      \
                            __typeof__(&((fk_result_must_name_a_member_of_this_frame__see_FK_FORK_AT *)0)->m), \
                            T##__ret_t *), /* (pointers: a const member is refused too) */ \
                        "the frame member given to FK_FORK or FK_CALL has another type than the result of task " #T); \
         FK__IN_FRAME_CHECK(m);                                                            \
     }),                                                                                   \
     &((fk_result_must_name_a_member_of_this_frame__see_FK_FORK_AT *)(void *)fk__self)->m)
/* The member must lie in the frame itself: offsetof refuses a member reached through a
 * pointer (FK_FORK(res[i], ...) with res a pointer member, FK_FORK(p->x, ...)), which would
 * store wherever the pointer points; that is FK_FORK_AT's job, the escape that says so (and
 * whose address every build checks).  An array member indexed at run time (part[n]) is
 * accepted (GCC and Clang take a variable index in offsetof), so are nested members
 * (pair.lo).  A member of the struct FK__MEMBER_SLOT measures (a comma expression around
 * it would add GCC's "left-hand operand of comma expression has no effect" to the error):
 * not evaluated, no code. */
#define FK__IN_FRAME_CHECK(m)                                                              \
    char fk__in_frame[sizeof(__builtin_offsetof(fk_result_must_name_a_member_of_this_frame__see_FK_FORK_AT, m))]
/* The old spelling, FK_FORK(&f->a, ...) or FK_FORK(NULL, ...), is a syntax error in the
 * member access above.  GCC then shows, in its notes, the public macro's definition line,
 * which says what to write; so does Clang, but its error itself says only "expected
 * identifier", so for Clang the argument's spelling is tested first, and a bit-field named
 * after the rule gets a negative width.  (Clang folds a string literal's characters in a
 * bit-field's width; GCC does not.  NULL arrives expanded, as "((void *)0)".) */
#if defined(__clang__)
#define FK__OLD_SPELLING(s) (s[0] == '&' || s[0] == '(' || s[0] == '*' || (s[0] >= '0' && s[0] <= '9'))
#define FK__OLD_SPELLING_CHECK(m)                                                          \
    _Pragma("clang diagnostic push") _Pragma("clang diagnostic ignored \"-Wgnu-folding-constant\"") \
    (void)sizeof(struct {                                                                  \
        int FK_FORK_and_FK_CALL_take_a_member_name__write_FK_FORK_a_for_f_a__FK_FORK_AT_p_for_a_pointer__FK_FORK_VOID_for_no_result \
            : FK__OLD_SPELLING(#m) ? -1 : 1;                                               \
    }) _Pragma("clang diagnostic pop")
#else
#define FK__OLD_SPELLING_CHECK(m) (void)0
#endif
/* FK_FORK_AT, FK_CALL_AT: a task that returns a value needs a typed pointer (NULL, a void
 * pointer, or 0, an integer, would drop the result, or write through NULL in a release
 * build).  (Type class 5 is a pointer's, arrays included, in GCC and Clang.) */
#define FK__AT_SLOT(p, T)                                                                  \
    ((void)sizeof(struct {                                                                 \
         _Static_assert(FK__IS_VOID(T##__ret_t) ||                                         \
                            (__builtin_classify_type(p) == 5 &&                            \
                             !__builtin_types_compatible_p(__typeof__(p), void *)),         \
                        "FK_FORK_AT or FK_CALL_AT of task " #T " with a void pointer or no pointer (NULL? 0?): its result "  \
                        "needs a place of its type, a member of the frame (FK_FORK(member, ...)) or a "  \
                        "pointer to one; a task without a result: FK_FORK_VOID"); \
         int fk__x;                                                                        \
     }),                                                                                   \
     FK__AT_CHECKED(p))
/* FK_FORK_VOID, FK_CALL_VOID: the task must return nothing. */
#define FK__VOID_ONLY(task)                                                                \
    _Static_assert(FK__IS_VOID(task##__ret_t), "FK_FORK_VOID or FK_CALL_VOID of task " #task \
                   ", which returns a value: give it a member of the frame, FK_FORK(member, " \
                   #task ", ...), or FK_FORK_AT(pointer, " #task ", ...)")
#define FK__FORK_VOID(L, task, ...)                                                        \
    do {                                                                                   \
        FK__VOID_ONLY(task);                                                               \
        FK__FORK(L, NULL, task, __VA_ARGS__);                                              \
    } while (0)
#define FK__CALL_VOID(L, task, ...)                                                        \
    do {                                                                                   \
        FK__VOID_ONLY(task);                                                               \
        FK__CALL(L, NULL, task, __VA_ARGS__);                                              \
    } while (0)

/* Result-address type check shared by the call forms (slot is not evaluated). */
#define FK__CHECK_SLOT(slot, task) ((void)sizeof((slot) == (task##__ret_t *)0))
/* With frames on frame stacks, debug builds also refuse a result address p (evaluated once,
 * by the caller) in the C stack: a local, while the task may continue on another worker
 * from its frame, and the child may finish after the local's C frame is gone. */
#if FK_DEBUG && !FK__NATIVE_FRAMES
#define FK__DBG_SLOT(p) fk__check_cstack_slot((p), "the result address of FK_FORK_AT or FK_CALL_AT", fk__task_name, __FILE__, __LINE__)
#else
#define FK__DBG_SLOT(p) ((void)0)
#endif
/* Release builds check the escape's address too (FK_FORK_AT, FK_CALL_AT; FK_FORK(member)
 * names a member in the frame, which needs no check): a C local there was a silently wrong
 * result.  Inline, against the bounds of the running worker's own C stack kept in the hot
 * state (on x86-64 with local-exec TLS, a subtraction and a compare from memory and a
 * branch; more with initial-exec TLS or on aarch64); fk__check_cstack_slot aborts with the
 * task's name.  Not caught: an address in another worker's C stack (a pointer handed down
 * to a child that was stolen), or any address where the thread's stack bounds could not be
 * read (fk__thread_stack failed: cs_size stays 0).  The bounds are glibc's, which for a
 * stack the pool maps include the thread's control block and static TLS at its top.  Native frames keep their locals (no check), and debug builds check every
 * result address (FK__DBG_SLOT). */
#if !FK_DEBUG && !FK__NATIVE_FRAMES
FK__INLINE void fk__at_check(const void *p, const char *task, const char *file, int line) {
    struct fk__hot *h = FK__H;
    if (FK__UNLIKELY((uintptr_t)p - h->cs_lo < h->cs_size))
        fk__check_cstack_slot(p, "the result address of FK_FORK_AT or FK_CALL_AT", task, file, line);
}
#define FK__AT_CHECKED(p)                                                                  \
    ({                                                                                     \
        __auto_type fk__atp = (p); /* (evaluated once; an array decays) */               \
        fk__at_check((const void *)(uintptr_t)fk__atp, fk__task_name, __FILE__, __LINE__); \
        fk__atp;                                                                           \
    })
#else
#define FK__AT_CHECKED(p) (p)
#endif

/* Resume point number N (a __COUNTER__ value, expanded once by the public macro): its
 * descriptor, and the `case` a resumed task jumps to. */
#define FK__RP(N) FK__CAT(fk__rp, N)
#define FK__RP_DECL(N) static const fk__rp FK__RP(N) = {&fk__info, FK__RP_BASE + (N), fk__frame_bytes}
#define FK__RP_CASE(N) case FK__RP_BASE + (N):;

/* Child stealing's fork, with frames on frame stacks or native: the call goes into a record
 * in the deque (arguments copied), the parent goes on. */
#define FK__CHILD_FORK(slot, task, ...)                                                    \
    do {                                                                                   \
        (void)fk__FK_BEGIN_must_come_first; /* a fork, call or join needs FK_BEGIN first */ \
        FK__CHECK(fk__has_frame, "FK_FORK before FK_BEGIN");                               \
        FK__CHECK_SLOT(slot, task);                                                        \
        FK__SCOPE_OPEN();                                                                  \
        FK__STAT_INC(n_fork);                                                              \
        union {                                                                            \
            struct task##__args a;                                                         \
            uint64_t w[FK__ARG_WORDS(struct task##__args)];                                \
        } fk__u;                                                                           \
        task##__ret_t *const fk__fslot = (slot);                                           \
        FK__DBG_SLOT(fk__fslot);                                                           \
        FK__CHECK_DST(task, fk__fslot);                                                    \
        fk__u.a = (struct task##__args){__VA_ARGS__};                                      \
        fk__ptop = fk__push_record_h(FK__HOT, task##__thunk, (uintptr_t)fk__self, fk__fslot, fk__u.w, \
                        FK__ARG_WORDS(struct task##__args));                               \
        fk__last = task##__thunk;                                                          \
        fk__lastslot = fk__fslot;                                                          \
        fk__nrec++;                                                                        \
    } while (0)

/* FK_SPAWN: a record like a fork's, linked to the counter instead of the frame (so no join
 * takes it back), outside the scope's count. */
#if FK_STACK == FK_STACK_FIBER
#define FK__SPAWN(counter, slot, task, ...)                                                \
    do {                                                                                   \
        FK__CHECK_SLOT(slot, task);                                                        \
        FK__CHECK_SPAWN_DST(task, (slot));                                                 \
        fk_counter *const fk__sc = (counter);                                              \
        fk_counter_add(fk__sc, 1);                                                         \
        union {                                                                            \
            struct task##__args a;                                                         \
            uint64_t w[FK__ARG_WORDS(struct task##__args)];                                \
        } fk__su;                                                                          \
        fk__su.a = (struct task##__args){__VA_ARGS__};                                     \
        fk__push_record(task##__thunk, (uintptr_t)fk__sc | FK__LINK_COUNTER, (slot), fk__su.w, \
                        FK__ARG_WORDS(struct task##__args));                               \
    } while (0)
#else
#define FK__SPAWN(counter, slot, task, ...)                                                \
    _Static_assert(0, "FK_SPAWN starts detached work that someone waits for on a counter: only "  \
                      "fiber builds (child-fiber) can wait in a task")
#endif

/* The checks an FK_CALL starts with (in both frame modes). */
#define FK__CALL_PROLOGUE(slot, task)                                                      \
    (void)fk__FK_BEGIN_must_come_first; /* a fork, call or join needs FK_BEGIN first */    \
    FK__CHECK(fk__has_frame, "FK_CALL before FK_BEGIN");                                   \
    FK__CHECK_SLOT(slot, task);                                                            \
    FK__STAT_INC(n_call)

/* With fibers the newest record of ours need not be the last fork's: a call that parked
 * lets the worker run our newest records, and we may find an older one on top.  Its own
 * thunk says which task it is. */
#if FK_STACK == FK_STACK_FIBER
#define FK__FIRST_KNOWN NULL
#else
#define FK__FIRST_KNOWN fk__last
#endif

/* Child stealing, the first part of a join: run this scope's children still in the deque,
 * newest first (the record on top is the last fork's: its thunk is known, fk__last); the
 * first one missing was stolen, and so were all older ones: they are added to `stolen`.
 * AFTER (a statement, or nothing) follows each child run here. */
#define FK__JOIN_LOCAL(stolen, AFTER)                                                      \
    for (fk__thunk_fn *fk__t = FK__FIRST_KNOWN; fk__nrec; fk__t = NULL) {                  \
        const fk__record *fk__r = FK__POP_OWN(fk__ptop);                                   \
        if (!fk__r) {                                                                      \
            stolen += fk__nrec;                                                            \
            fk__nrec = 0;                                                                  \
            break;                                                                         \
        }                                                                                  \
        fk__ptop = (uintptr_t)fk__r - sizeof(fk__slot); /* the next older record's slot */ \
        fk__nrec--;                                                                        \
        FK__RUN_RECORD(fk__t, fk__r, AFTER);                                               \
    }

#if !FK__NATIVE_FRAMES
/* ==== frame-stack variants: fast and slow clones ============================================ */

#define FK__RETURN_FREE()                                                                  \
    do {                                                                                   \
        FK__DBG_END();                                                                     \
        if (fk__has_frame)                                                                 \
            fk__free(fk__self);                                                            \
    } while (0)
/* The slow clone stores its result: nobody waits for it in a register.  (A null address:
 * a root whose result is dropped; the forms that fork or call check theirs.) */
#define FK__RETURN_STORE(v)                                                                \
    do {                                                                                   \
        if (fk__resuming && !FK__IS_VOID(fk__ret_t) && fk__self->ret)                      \
            *(fk__rv_t *)fk__self->ret = (v);                                              \
    } while (0)

/* PARAMETERS live in the frame, as a coroutine's do: with continuation stealing FK_BEGIN
 * saves them past the frame (FK__BEGIN_PSAVE); whatever may let the task continue
 * elsewhere saves them (again) first (so a parameter the task changed keeps its new
 * value): a continuation-stealing fork, a call, a join (its slow
 * path with continuation stealing), FK_SWITCH_TO; and after a call, a continuation-stealing
 * fork and a child-stealing join, and before a slow clone dispatches in place, they are
 * reloaded (a resumed task loads them on entry).  The reload is also what keeps them out of
 * callee-saved registers on the fast path: across the child's call the compiler holds no
 * copy (in fib on cont-lin that spares a push, a pop, a move and the stack alignment's two,
 * and costs one load: 4 of 50 instructions a node).  The body reaches its parameters
 * through pointers (struct NAME__pptrs, only the body knows their names); once psave and
 * pload are inlined these are plain moves, and a save of values just loaded is dropped as
 * redundant.  The C variable is only the working copy: a parameter's address must not be a
 * fork's or call's result address, nor be written through by a child (the reload after
 * the child puts the kept value back). */
#define FK__TASK_BODY(name, RET, FRAMEDECL, STORAGE, ...)                                  \
    struct name##__pptrs {                                                                 \
        FK__PPTRS(__VA_ARGS__)                                                             \
    };                                                                                     \
    FK__INLINE void name##__psave(const struct name##__pptrs *fk__pp, void *fk__dv) {      \
        struct name##__args *fk__d = fk__dv;                                               \
        (void)fk__pp, (void)fk__d;                                                         \
        FK__PMOVES(FK__PSAVE1, __VA_ARGS__)                                                \
    }                                                                                      \
    FK__INLINE void name##__pload(const struct name##__pptrs *fk__pp, const void *fk__sv) { \
        const struct name##__args *fk__s = fk__sv;                                         \
        (void)fk__pp, (void)fk__s;                                                         \
        FK__PMOVES(FK__PLOAD1, __VA_ARGS__)                                                \
    }                                                                                      \
    static name##__rv_t name##__resume_v(fk_frame *);                                      \
    static void name##__resume(fk_frame *);                                                \
    FK__INLINE name##__rv_t name##__body(const int fk__resuming, uintptr_t fk__link, RET *fk__ret \
                                         FK__WSIG FK__PARAMS(FK__PDECL, __VA_ARGS__));     \
    STORAGE name##__rv_t name(uintptr_t fk__link, RET *fk__ret FK__WSIG FK__PARAMS(FK__PDECL, __VA_ARGS__)) { \
        FK__SPAN(enter);                                                                   \
        return name##__body(0, fk__link, fk__ret FK__WPASS FK__PARAMS(FK__PNAME, __VA_ARGS__)); \
    }                                                                                      \
    /* A resumed task gets its parameters back from the copy saved past its frame (where   \
     * its resume point says: only FK_BEGIN knows the frame's type).  It stores its        \
     * result itself, and also returns it, for a fast clone that resumed it inline. */      \
    static FK__NOINLINE name##__rv_t name##__resume_v(fk_frame *fk__f) {                   \
        const struct name##__args fk__a =                                                  \
            FK__ISEMPTY(__VA_ARGS__) ? (struct name##__args){0}                            \
                                     : *(const struct name##__args *)(const void *)((char *)fk__f + fk__f->rp->args_at); \
        (void)fk__a; /* a task without parameters reads none */                            \
        return name##__body(1, (uintptr_t)fk__f, (RET *)fk__f->ret FK__WNONE FK__PARAMS(FK__ARG, __VA_ARGS__)); \
    }                                                                                      \
    static void name##__resume(fk_frame *fk__f) { (void)name##__resume_v(fk__f); }         \
    /* The slow clone never runs the code before FK_BEGIN, nor the fresh path after it (a  \
     * hint says so), but at -O1 GCC warns that it reads that code's locals. */            \
    _Pragma("GCC diagnostic push") FK__NO_MAYBE_UNINIT                                     \
    FK__INLINE name##__rv_t name##__body(const int fk__resuming, uintptr_t fk__link, RET *fk__ret \
                                         FK__WSIG FK__PARAMS(FK__PDECL, __VA_ARGS__)) {    \
        static const char fk__task_name[] FK__UNUSED = #name;                              \
        static const fk__task_info fk__info FK__UNUSED = {name##__resume, #name};          \
        FK__BODY_TYPES(name);                                                              \
        name##__rv_t (*const fk__resume_v)(fk_frame *) FK__UNUSED = name##__resume_v;      \
        /* the parameters, kept past the frame (fk__args_bytes, or none) */                \
        enum { fk__args_bytes = FK__ARGS_SAVED(name, __VA_ARGS__) };                       \
        const struct name##__pptrs fk__pp FK__UNUSED = {FK__MAP_PADDR(__VA_ARGS__)};       \
        void (*const fk__psave)(const struct name##__pptrs *, void *) FK__UNUSED = name##__psave; \
        void (*const fk__pload)(const struct name##__pptrs *, const void *) FK__UNUSED = name##__pload; \
        fk__thunk_fn *const fk__self_thunk FK__UNUSED = name##__thunk;                     \
        name##__rv_t (*const fk__self_run)(const fk__record *) FK__UNUSED = name##__run;    \
        FK__SCOPE_LOCALS                                                                   \
        FK__WLOCALS                                                                        \
        FRAMEDECL FK__UNUSED;                                                              \
        fk_frame *fk__self FK__UNUSED = NULL;                                              \
        int fk__has_frame FK__UNUSED = 0;                                                  \
        uint64_t fk__idx FK__UNUSED = 0;                                                   \
        if (fk__resuming)                                                                  \
            goto fk__begin;                                                                \
        {


/* In the fast clone: allocate the frame.  In the slow clone: take the frame being resumed
 * and go to its resume point (the `case` put by the macro that set it). */
#define FK__BEGIN(var)                                                                     \
    enum { fk__frame_bytes = FK__ROUND(sizeof *(var)) };                                   \
    FK__FRAME_TYPEDEF(var);                                                                \
    if (0) {                                                                               \
    fk__begin:                                                                             \
        fk__self = (fk_frame *)fk__link;                                                   \
        (var) = (void *)fk__self;                                                          \
        fk__has_frame = 1;                                                                 \
    fk__dispatch: __attribute__((unused));                                                 \
        fk__idx = fk__self->rp->idx;                                                       \
    } else {                                                                               \
        FK__CHECK(!fk__has_frame, "FK_BEGIN called twice");                                \
        FK__WCHECK();                                                                      \
        (var) = (void *)FK__FRAME_NEW(fk__frame_bytes + fk__args_bytes, fk__link, fk__ret); \
        fk__self = &(var)->fk; /* the same address, derived from var: one register */      \
        FK__BEGIN_PSAVE();                                                                 \
        fk__has_frame = 1;                                                                 \
    }                                                                                      \
    if (fk__resuming && fk__idx < FK__RP_BASE)                                             \
        __builtin_unreachable(); /* the slow clone never takes the fresh path (case 0) */  \
    switch (fk__resuming ? fk__idx : 0) {                                                  \
    default:                                                                               \
        fk__bad_resume(&fk__info, fk__idx);                                                \
    case 0:;                                                                               \
        enum { fk__FK_BEGIN_must_come_first = 1 }

/* The task's parameters to and from the copy past its frame. */
#define FK__PSAVE() fk__psave(&fk__pp, (char *)fk__self + fk__frame_bytes)
/* For a resumption elsewhere, the parameters are saved where the task may next be resumed
 * from: with continuation stealing at FK_BEGIN (the first fork's continuation may be
 * stolen at once); with child stealing a task is resumed only after an FK_CALL, an FK_JOIN
 * or an FK_SWITCH_TO, and each of them saves them first (a fork never moves its parent). */
#if FK_STEAL == FK_STEAL_CONT
#define FK__BEGIN_PSAVE() FK__PSAVE()
#else
#define FK__BEGIN_PSAVE() ((void)0)
#endif
#define FK__PLOAD() fk__pload(&fk__pp, (const char *)fk__self + fk__frame_bytes)

/* Continue at the frame's current resume point: in the slow clone by dispatching, in the
 * fast clone by entering the slow clone (which then returns here to return).  Either way
 * the parameters come from the frame: whoever ran the task meanwhile may have changed them. */
#define FK__CONTINUE_AT_RP()                                                               \
    do {                                                                                   \
        if (fk__resuming) {                                                                \
            FK__PLOAD();                                                                   \
            goto fk__dispatch;                                                             \
        }                                                                                  \
        return fk__resume_v(fk__self);                                                     \
    } while (0)

#if FK_STEAL == FK_STEAL_CONT
#define FK__UNWIND_CHECK() ((void)0) /* (a callee that unwinds never returns here) */
#define FK__SWITCH_UNWOUND() __builtin_unreachable() /* (fk__switch jumped away) */
#else
#define FK__SWITCH_UNWOUND() FK__RETURN_UNWOUND()
#define FK__UNWIND_CHECK()                                                                 \
    do {                                                                                   \
        if (FK__UNLIKELY(FK__H->unwinding))                                                \
            FK__RETURN_UNWOUND();                                                          \
    } while (0)
#endif

#define FK__CALL(L, slot, task, ...)                                                       \
    do {                                                                                   \
        FK__CALL_PROLOGUE(slot, task);                                                     \
        task##__ret_t *const fk__cslot = (slot);                                           \
        FK__DBG_SLOT(fk__cslot);                                                           \
        FK__CHECK_DST(task, fk__cslot);                                                    \
        FK__RP_DECL(L);                                                                    \
        fk__self->rp = &FK__RP(L);                                                         \
        FK__SAVE_NREC();                                                                   \
        const struct task##__args fk__ca = {__VA_ARGS__};                                  \
        FK__WCHECK();                                                                      \
        FK__PSAVE();                                                                       \
        /* (+, not |: the frame is aligned, and + is one lea) */                           \
        FK__SPAN(strand);                                                                  \
        task##__rv_t fk__cv = task##__apply((uintptr_t)fk__self + FK__LINK_CALLED, fk__cslot FK__WCHILD, &fk__ca); \
        FK__SPAN(call_end);                                                                \
        FK__UNWIND_CHECK(); /* (child stealing: then the child stores its result itself) */ \
        FK__WRELOAD(); /* (a child resumed in place may return with the deque moved) */    \
        FK__STORE_RV(task, fk__cslot, fk__cv);                                             \
    FK__RP_CASE(L)                                                                         \
        FK__PLOAD();                                                                       \
    } while (0)

#define FK__SWITCH(L, k)                                                                   \
    do {                                                                                   \
        (void)fk__FK_BEGIN_must_come_first; /* a fork, call or join needs FK_BEGIN first */ \
        FK__CHECK(fk__has_frame, "FK_SWITCH_TO before FK_BEGIN");                          \
        FK__CHECK(fk__self->dbg_scope == 0, "FK_SWITCH_TO inside a fork-join scope");      \
        unsigned fk__k = (unsigned)(k);                                                    \
        FK__RP_DECL(L);                                                                    \
        if (fk__k != fk__worker_id()) {                                                    \
            FK__PSAVE();                                                                   \
            fk__self->rp = &FK__RP(L);                                                     \
            fk__switch(fk__self, fk__k);                                                   \
            FK__SWITCH_UNWOUND();                                                          \
        }                                                                                  \
    FK__RP_CASE(L)                                                                         \
    } while (0)

#if FK_STEAL == FK_STEAL_CONT

#define FK__SCOPE_LOCALS
#define FK__SAVE_NREC() ((void)0)

/* A frame that was stolen (its slow clone runs) publishes at each of its forks, as if a
 * thief had asked (the oldest half of the private slots, its new continuation counted
 * among them; usually it is the only one): where one thief took a frame, another will want
 * its next continuation when its own work ends (a loop of forks: strips, chunks, loop
 * bodies), and a private continuation reaches it only through a forced publication, one
 * leaf later.  The fast clone, never stolen, keeps the fence-free private push. */
void fk__push_published(fk_frame *f);

/* Evaluate the child's result address and arguments (they may read the frame), push our
 * continuation, run the child, pop.  The child returned, so it finished here: store its
 * value.  A failed pop: a thief may have our continuation; fk__pop_slow sorts it out: go
 * on, continue at our resume point (we are the last to arrive at our join), or unwind (it
 * does not return). */
#define FK__FORK(L, slot, task, ...)                                                       \
    do {                                                                                   \
        (void)fk__FK_BEGIN_must_come_first; /* a fork, call or join needs FK_BEGIN first */ \
        FK__CHECK(fk__has_frame, "FK_FORK before FK_BEGIN");                               \
        FK__CHECK_SLOT(slot, task);                                                        \
        FK__SCOPE_OPEN();                                                                  \
        FK__STAT_INC(n_fork);                                                              \
        task##__ret_t *const fk__res = (slot);                                             \
        FK__DBG_SLOT(fk__res);                                                             \
        FK__CHECK_DST(task, fk__res);                                                      \
        const struct task##__args fk__fa = {__VA_ARGS__};                                  \
        FK__PSAVE();                                                                       \
        FK__RP_DECL(L);                                                                    \
        fk__self->rp = &FK__RP(L);                                                         \
        uintptr_t fk__ps = 0;                                                              \
        FK__WCHECK();                                                                      \
        if (fk__resuming) /* (a plain call: the slow clone spares the register-saving stub) */ \
            fk__push_published(fk__self);                                                  \
        else                                                                               \
            fk__ps = FK__PUSH(fk__self);                                                   \
        FK__SPAN(strand);                                                                  \
        task##__rv_t fk__fv = task##__apply((uintptr_t)fk__self, fk__res FK__WCHILD, &fk__fa); \
        FK__SPAN(fork_end);                                                                \
        FK__STORE_RV(task, fk__res, fk__fv); /* (before we arrive at our join) */          \
        if (FK__UNLIKELY(!FK__POP(fk__ps))) {                                              \
            if (fk__pop_slow(fk__self) == FK__POP_RESUME)                                  \
                FK__CONTINUE_AT_RP();                                                      \
            FK__WRELOAD();                                                                 \
        }                                                                                  \
    FK__RP_CASE(L)                                                                         \
        FK__PLOAD();                                                                       \
    } while (0)

/* In the fast clone every pop succeeded, so nothing was stolen: a join costs nothing.  In
 * the slow clone, if thieves took our continuation, arrive at the join counter. */
#define FK__JOIN(L)                                                                        \
    do {                                                                                   \
        (void)fk__FK_BEGIN_must_come_first; /* a fork, call or join needs FK_BEGIN first */ \
        FK__CHECK(fk__has_frame, "FK_JOIN outside a fork scope (no FK_BEGIN)");            \
        FK__SCOPE_CLOSE();                                                                 \
        FK__CHECK(fk__resuming || fk__self->steals == 0, "internal: a steal seen on the fast path"); \
        FK__SPAN(join);                                                                    \
        FK__RP_DECL(L);                                                                    \
        if (fk__resuming && fk__self->steals != 0) {                                       \
            FK__PSAVE();                                                                   \
            fk__self->rp = &FK__RP(L);                                                     \
            fk__join(fk__self); /* (returns if we were last to arrive) */                  \
        }                                                                                  \
    FK__RP_CASE(L)                                                                         \
    } while (0)

#else /* FK_STEAL_CHILD, frames on frame stacks: a join that must wait suspends the frame */

/* fk__nrec (a register): records this scope pushed that it has not popped or lost.  It is
 * spilled to the frame only before FK_CALL, where a resumer may need it; on every path that
 * resumes the frame its value is 0 (the prologue's), which is right: a join that completed
 * has none, and the resumer after an unwound call has counted them as steals. */
#define FK__SCOPE_LOCALS                                                                   \
    uint32_t fk__nrec FK__UNUSED = 0;                                                      \
    uintptr_t fk__ptop FK__UNUSED = 0; /* the slot of the scope's newest record, if known */ \
    fk__thunk_fn *fk__last FK__UNUSED = NULL;                                              \
    void *fk__lastslot FK__UNUSED = NULL;
#define FK__SAVE_NREC() (fk__self->nrec = fk__nrec)

#define FK__FORK(L, slot, task, ...) FK__CHILD_FORK(slot, task, __VA_ARGS__)

/* Run our children still in the deque, newest first: a child of the task's own kind by a
 * direct call (recursive tasks), others through their thunk.  A pop that fails means the
 * rest of the scope was stolen.  A child whose C frame died (unwinding): it and our records
 * left finish elsewhere; fk__join_unwound arrives for us and we unwind. */
#define FK__JOIN(L)                                                                        \
    do {                                                                                   \
        (void)fk__FK_BEGIN_must_come_first; /* a fork, call or join needs FK_BEGIN first */ \
        FK__CHECK(fk__has_frame, "FK_JOIN outside a fork scope (no FK_BEGIN)");            \
        FK__SCOPE_CLOSE();                                                                 \
        /* (saved here rather than in the slow branches below, which would keep the        \
         * parameters live across the children run here: 5 more instructions a fib node) */ \
        FK__PSAVE();                                                                       \
        FK__RP_DECL(L);                                                                    \
        FK__JOIN_LOCAL(fk__self->steals, if (FK__UNLIKELY(FK__H->unwinding)) {             \
            fk__self->rp = &FK__RP(L);                                                     \
            fk__join_unwound(fk__self, 1 + fk__nrec);                                      \
            FK__RETURN_UNWOUND();                                                          \
        });                                                                                \
        if (FK__UNLIKELY(fk__self->steals != 0)) {                                         \
            fk__self->rp = &FK__RP(L);                                                     \
            if (!fk__join(fk__self))                                                       \
                FK__RETURN_UNWOUND();                                                      \
        }                                                                                  \
    FK__RP_CASE(L)                                                                         \
        FK__PLOAD();                                                                       \
    } while (0)

#endif

#else
/* ==== native frames (child stealing): the frame is in the C stack frame, a join waits ====== */

#define FK__RETURN_FREE() FK__DBG_END()
#define FK__RETURN_STORE(v) ((void)0) /* the caller stores: a native task returns where it began */

#define FK__TASK_BODY(name, RET, FRAMEDECL, STORAGE, ...)                                  \
    _Pragma("GCC diagnostic push")                                                         \
    STORAGE name##__rv_t name(FK__SIG(FK__PDECL, RET, __VA_ARGS__)) {                      \
        static const char fk__task_name[] FK__UNUSED = #name;                              \
        FK__BODY_TYPES(name);                                                              \
        enum { fk__resuming = 0 };                                                         \
        FRAMEDECL FK__UNUSED;                                                              \
        fk_frame *fk__self FK__UNUSED = NULL;                                              \
        int fk__has_frame FK__UNUSED = 0;                                                  \
        fk__thunk_fn *const fk__self_thunk FK__UNUSED = name##__thunk;                     \
        name##__rv_t (*const fk__self_run)(const fk__record *) FK__UNUSED = name##__run;    \
        uint32_t fk__nrec FK__UNUSED = 0, fk__stolen FK__UNUSED = 0;                       \
        uintptr_t fk__ptop FK__UNUSED = 0; /* the slot of the scope's newest record, if known */ \
        fk__thunk_fn *fk__last FK__UNUSED = NULL;                                          \
        void *fk__lastslot FK__UNUSED = NULL;                                              \
        if (0)                                                                             \
            goto fk__begin; /* a task without FK_BEGIN does not compile */                 \
        {                                                                                  \
            {

/* The address of an object in the task's C stack frame, computed where it is used (a stack
 * offset) rather than kept in a callee-saved register across the task's calls. */
#if defined(__x86_64__)
#define FK__STACK_ADDR(obj)                                                                \
    ({                                                                                     \
        __typeof__(obj) *fk__sa;                                                           \
        __asm__("lea %1, %0" : "=r"(fk__sa) : "m"(obj));                                   \
        fk__sa;                                                                            \
    })
#else
#define FK__STACK_ADDR(obj) (&(obj))
#endif

/* The frame is a local of the task's C function; its header is zeroed (the join cell).
 * FK_BEGIN declares it, so FK_BEGIN must stand at the body's top level. */
#define FK__BEGIN(var)                                                                     \
fk__begin:;                                                                                \
    enum { fk__FK_BEGIN_must_come_first = 1 };                                             \
    __typeof__(*(var)) fk__frame_store;                                                    \
    struct fk__hot *const fk__h FK__UNUSED = FK__HOT_INIT;                                 \
    FK__FRAME_TYPEDEF(var);                                                                \
    FK__CHECK(!fk__has_frame, "FK_BEGIN called twice");                                    \
    (var) = &fk__frame_store;                                                              \
    fk__self = &fk__frame_store.fk;                                                        \
    FK__NATIVE_INIT(fk__self);                                                             \
    fk__has_frame = 1

#if FK_DEBUG
#define FK__NATIVE_INIT(f)                                                                 \
    ((f)->sync0 = 0, (f)->dbg_magic = FK__DBG_MAGIC, (f)->dbg_scope = 0,                    \
     (f)->dbg_top_alloc = NULL)
#else
#define FK__NATIVE_INIT(f) ((f)->sync0 = 0)
#endif

#define FK__CALL(L, slot, task, ...)                                                       \
    do {                                                                                   \
        FK__CALL_PROLOGUE(slot, task);                                                     \
        task##__ret_t *const fk__cslot = (slot);                                           \
        FK__CHECK_DST(task, fk__cslot);                                                    \
        task##__rv_t fk__cv = task(__VA_ARGS__);                                           \
        FK__STORE_RV(task, fk__cslot, fk__cv);                                             \
    } while (0)

#define FK__FORK(L, slot, task, ...) FK__CHILD_FORK(slot, task, __VA_ARGS__)

/* Run the children still in the deque, newest first; if some were stolen, wait for them
 * here, stealing back from their thieves meanwhile (leapfrogging; fk__lf_join). */
#if FK_STACK == FK_STACK_NATIVE
#define FK__WAIT_STOLEN fk__lf_join
#else
#define FK__WAIT_STOLEN fk__fiber_join
#endif
#define FK__JOIN(L)                                                                        \
    do {                                                                                   \
        (void)fk__FK_BEGIN_must_come_first; /* a fork, call or join needs FK_BEGIN first */ \
        FK__CHECK(fk__has_frame, "FK_JOIN outside a fork scope (no FK_BEGIN)");            \
        FK__SCOPE_CLOSE();                                                                 \
        FK__JOIN_LOCAL(fk__stolen, );                                                      \
        if (FK__UNLIKELY(fk__stolen != 0)) {                                               \
            FK__WAIT_STOLEN(FK__STACK_ADDR(fk__frame_store.fk), fk__stolen);               \
            fk__stolen = 0;                                                                \
        }                                                                                  \
    } while (0)

#if FK_STACK == FK_STACK_FIBER
/* Fibers: the task's whole stack moves; its fiber parks and is resumed on worker k. */
void fk__fiber_switch_to(unsigned worker);
#define FK__SWITCH(L, k)                                                                   \
    do {                                                                                   \
        (void)fk__FK_BEGIN_must_come_first; /* a fork, call or join needs FK_BEGIN first */ \
        FK__CHECK(fk__has_frame, "FK_SWITCH_TO before FK_BEGIN");                          \
        FK__CHECK(fk__self->dbg_scope == 0, "FK_SWITCH_TO inside a fork-join scope");      \
        fk__fiber_switch_to((unsigned)(k));                                                \
    } while (0)
#else
#define FK__SWITCH(L, k)                                                                   \
    do {                                                                                   \
        (void)fk__FK_BEGIN_must_come_first; /* a fork, call or join needs FK_BEGIN first */ \
        _Static_assert(0, "FK_SWITCH_TO needs frames that can move between workers: not available " \
                          "with native frames (child-native); use a seg, lin or fiber variant"); \
    } while (0)
#endif

#endif

static inline size_t fk__scratch_bytes(size_t n, size_t size) {
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes) || bytes > SIZE_MAX - FK__ALIGN)
        fk__misuse("FK_ALLOC size overflows", "?", __FILE__, __LINE__);
    return FK__ROUND(bytes);
}

#endif
