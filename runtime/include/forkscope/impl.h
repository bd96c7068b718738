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
 *                   (PARAMETERS in impl_clones.h).  FK_BEGIN opens a `switch` on the frame's resume
 *                   point and every FK_FORK, FK_CALL, FK_JOIN and FK_SWITCH_TO puts a `case`
 *                   after itself (Duff's device): that is how a resumed task continues in
 *                   the middle of its body.
 *   A resume point is a static descriptor {task info, index, offset of the saved
 *   parameters}; the frame holds a pointer to the last one passed.  A task returns its
 *   result (see WHERE A RESULT GOES in impl_task.h).  A task whose C frame must die because its rest runs
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
 * forkscope/config.h): it stores the cursor to the hot state, and the top only where the
 * runtime is about to read it (the top's rule, impl_task.h).  With native frames
 * (child-native, FK_LIVE) the cursor is a task's hidden parameter and is never stored:
 * cur below is then only where a record the worker loop runs starts (its deque's first
 * slot).
 *
 * SLOW PATHS THAT MUST NOT COST THE FAST PATH REGISTERS (x86-64): a slow call in the
 * middle of a task (frame allocation past a stacklet's end, a push that serves a thief's
 * request or grows the deque, the free that empties a stacklet) would make every value live across it need a callee-saved
 * register, which the compiler then saves in the prologue that leaves share.  These are
 * called through an asm stub that preserves every register, the vector state included
 * (runtime/tramp.c), so to the compiler they cost nothing.  Elsewhere (other
 * architectures, sanitizer builds) they are plain calls.
 *
 * THE PARTS: this file holds the frames, the hot state, the slow paths, the frame stack, the
 * owner's side of the deque and the records; impl_task.h the task macros every variant
 * shares; impl_clones.h the fast and slow clones of frame-stack variants; impl_native.h the
 * native-frame tasks (child-native, child-fiber). */
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

/* FK_LIVE: a record is run with the cursor of the deque it is run over, fk__rc (a thunk's
 * second parameter).  FK__RC_PARAM declares it, FK__RC passes one. */
#if FK_LIVE
#define FK__RC_PARAM , fk__record *fk__rc /* (fk__slot: FK_LIVE is child stealing) */
#define FK__RC(cur) , (cur)
#else
#define FK__RC_PARAM
#define FK__RC(cur)
#endif
typedef void fk__thunk_fn(const fk__record *fk__r FK__RC_PARAM);
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
     * region; sp is the next free byte (FK_WREGS: as of the last entry into the runtime; the
     * top's rule, impl_task.h). */
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
     * arguments) before its use of them.  (FK_LIVE: cur is not used; the cursor is in the
     * tasks' registers, and each record's link is its live mark: fk__push_live.  lap is 0
     * and no slot wraps there.) */
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
/* A release store of v (of type T) to the _Atomic object at p. */
#define FK__STORE_RELEASE(T, p, v)                                                         \
    (atomic_signal_fence(memory_order_release), (void)(*(T volatile *)(void *)(p) = (v)))
FK__INLINE fk__slot *fk__hload(_Atomic(fk__slot *) *p) { return *(fk__slot *volatile *)(void *)p; }
/* The bound a fast-path test compares with (limit, splitp): a plain load, which the
 * compiler folds into the compare.  It is read once per push or pop, after a call or a
 * compiler fence, so it cannot be cached across the events that change it. */
FK__INLINE fk__slot *fk__hbound(_Atomic(fk__slot *) *p) { return *(fk__slot **)(void *)p; }
#else
#define FK__STORE_RELEASE(T, p, v) atomic_store_explicit((p), (v), memory_order_release)
FK__INLINE fk__slot *fk__hload(_Atomic(fk__slot *) *p) { return atomic_load_explicit(p, memory_order_relaxed); }
FK__INLINE fk__slot *fk__hbound(_Atomic(fk__slot *) *p) { return atomic_load_explicit(p, memory_order_relaxed); }
#endif
FK__INLINE void fk__hstore_release(_Atomic(fk__slot *) *p, fk__slot *v) { FK__STORE_RELEASE(fk__slot *, p, v); }

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
#elif FK_LIVE
void fk__push_slow(fk__slot *cur); /* the record is in FK__H->scratch; it goes to cur */
const fk__record *fk__pop_slow(fk__slot *s, uint32_t older);
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
void fk__lf_join(fk_frame *f, uint32_t stolen FK__RC_PARAM);
#else
void fk__fiber_join(fk_frame *f, uint32_t stolen);
const fk__record *fk__pop_slow_of(uintptr_t owner);
#endif
/* abi: &FK__ABI_SYM, the build the caller was compiled for (config.h): the reference makes
 * a mismatched library fail to link. */
extern const char FK__ABI_SYM;
int fk__run(fk_pool *pool, int worker, fk__thunk_fn *thunk, void *ret, const void *args, size_t size, const char *abi);
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
#if FK_STEAL == FK_STEAL_CONT || FK_LIVE
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
#if FK_STEAL == FK_STEAL_CONT || FK_LIVE
#define FK__SLOW_PUSH(f) fk__push_slow(f)
#else
#define FK__SLOW_PUSH() fk__push_slow()
#endif
#endif

/* FK_WREGS, FK_DEBUG: where a fast clone's frame is allocated or freed (the top then kept
 * in registers), this is left in the hot state's sp, so that a runtime read of the top that
 * the top's rule (impl_task.h) forgot to store first is refused (runtime/stack.c, top_of;
 * the header's own reads pass it on, to FK__WCHECK or a crash).  Release builds leave sp
 * as it was. */
#define FK__SP_POISON ((char *)(uintptr_t)0xF0F0F0F0F0F0F000ull)
#if FK_DEBUG
#define FK__SP_FORGET(h) ((void)((h)->sp = FK__SP_POISON))
#else
#define FK__SP_FORGET(h) ((void)(h))
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

/* FK_WREGS: a fast clone's frame p, freed as it returns.  Nothing is stored: the caller's
 * top is in its registers (fk__frame_new_w).  Only a segmented stack's first frame in a
 * stacklet takes the slow path, which steps back to the previous stacklet (its hi and lo;
 * its sp, saved when the slow allocation stepped off it, is again the top there: FK_DEBUG
 * poisons it all the same, as on every other path, so that no read relies on it). */
FK__INLINE void fk__free_frame_w(void *p) {
#if FK_STACK != FK_STACK_LIN
    if (FK__UNLIKELY((char *)p == FK__H->lo))
        FK__SLOW_FREE(p);
#else
    (void)p;
#endif
    FK__SP_FORGET(FK__H);
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

/* The link last: FK_LIVE's mark (below), with release order there. */
FK__INLINE void fk__record_write(fk__record *s, fk__thunk_fn *thunk, uintptr_t link, void *ret, const uint64_t *w,
                                 size_t nw) {
    atomic_store_explicit(&s->thunk, (uintptr_t)thunk, FK__RELAXED);
    atomic_store_explicit(&s->ret, (uintptr_t)ret, FK__RELAXED);
    FK__UNROLL_ARGS
    for (size_t i = 0; i < nw; i++)
        atomic_store_explicit(&s->args[i], w[i], FK__RELAXED);
#if FK_LIVE
    FK__STORE_RELEASE(uintptr_t, &s->link, link);
#else
    atomic_store_explicit(&s->link, link, FK__RELAXED);
#endif
}

#if !FK_LIVE
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

#endif
#if FK_LIVE
/* THE LIVE MARK (FK_LIVE, forkscope/config.h).  The owner's cursor is the task's fk__cur,
 * never stored: a record's link (never 0 in a live record: its parent's frame, or a root)
 * says whether its slot is live.  The push writes the other words, then the link (release:
 * a thief that sees the mark sees the words); the pop clears it, then reads split (the
 * owner's half of the Dekker pattern with a forcing thief, which moves split, runs
 * membarrier() and scans the marks: deque.c).  (Not the thunk: a join that pops a record
 * runs it through its thunk, read after the pop.)  The slots never move, so the task's
 * register names its slot for as long as the record lives. */
FK__INLINE void fk__push_live(struct fk__hot *h, fk__slot *s, fk__thunk_fn *thunk, uintptr_t link, void *ret,
                              const uint64_t *w, size_t nw) {
    if (FK__UNLIKELY(s >= fk__hbound(&h->limit))) {
        fk__record_write(&h->scratch, thunk, link, ret, w, nw);
        FK__SLOW_PUSH(s);
        return;
    }
    fk__record_write(s, thunk, link, ret, w, nw); /* (the mark last) */
}
/* Takes back the record at s, the task's newest (its cursor less one), or returns NULL if
 * it was stolen: then so were the `older` records of the scope below it, and the slow path
 * has left the deque's bottom at the oldest of them (s - older), where the task's cursor
 * goes. */
FK__INLINE const fk__record *fk__pop_live(struct fk__hot *h, fk__slot *s, uint32_t older) {
    atomic_store_explicit(&s->link, 0, FK__RELAXED);
    atomic_signal_fence(memory_order_seq_cst);
    if (FK__LIKELY(s >= fk__hbound(&h->splitp)))
        return s;
    return fk__pop_slow(s, older);
}
#endif

#if !FK_LIVE
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
#endif /* !FK_LIVE */
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
 * frame in *spo.  The top stays in registers: the hot state's sp is written only where the
 * runtime reads it, which is in slow paths (FK__WSTORE_SP, impl_task.h): here, for the
 * slow allocation, which starts from it. */
FK__INLINE fk_frame *fk__frame_new_w(char *p, size_t n, uintptr_t link, void *ret, ptrdiff_t *spo) {
    struct fk__hot *h = FK__H;
    if (FK__UNLIKELY((uintptr_t)p + n > (uintptr_t)h->hi)) {
        h->sp = p;
        p = FK__SLOW_ALLOC(n);
    } else {
        FK__SP_FORGET(h);
    }
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

#include "impl_task.h"

#if !FK__NATIVE_FRAMES
#include "impl_clones.h"
#else
#include "impl_native.h"
#endif

static inline size_t fk__scratch_bytes(size_t n, size_t size) {
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes) || bytes > SIZE_MAX - FK__ALIGN)
        fk__misuse("FK_ALLOC size overflows", "?", __FILE__, __LINE__);
    return FK__ROUND(bytes);
}

#endif
