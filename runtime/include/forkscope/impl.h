/* forkscope/impl.h — the inline machinery behind the task macros of forkscope.h.
 *
 * Nothing here is API: names start with fk__ and may change.  It is in the public header
 * directory only because the fork/join fast path must be inlined into user tasks.
 *
 * Layout of a worker, as far as the fast path sees it (struct fk__hot, the first member of
 * every struct fk_worker): the frame-stack pointers, the owner's private view of its deque,
 * and, on a cache line of its own, `limit`, the one word that thieves write. */
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
typedef struct fk_pool fk_pool;
typedef struct fk__record fk__record;

#define FK__LIKELY(x) __builtin_expect(!!(x), 1)
#define FK__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define FK__NOINLINE __attribute__((noinline))
#define FK__COLD __attribute__((cold, noinline))
#define FK__UNUSED __attribute__((unused))
#define FK__NORETURN _Noreturn
/* A task's resume points are label addresses (&&label), which differ between copies of a
 * function: a task must exist exactly once, never inlined or cloned. */
#if defined(__has_attribute)
#if __has_attribute(noclone)
#define FK__TASK_ATTR __attribute__((noinline, noclone))
#endif
#endif
#ifndef FK__TASK_ATTR
#define FK__TASK_ATTR __attribute__((noinline))
#endif

/* A frame's link to whoever waits for it: the parent's frame, or a root record. */
#define FK__LINK_CALLED ((uintptr_t)1) /* parent called us (no fork): resume it directly */
#define FK__LINK_ROOT ((uintptr_t)2)   /* link is an fk__root, not a frame */
#define FK__LINK_RESUME ((uintptr_t)4) /* only as a task argument: "re-enter this frame" */
#define FK__LINK_MASK ((uintptr_t)7)

/* The join counter: children that finish after their parent was stolen add 1, the parent
 * adds K - steals when it reaches the join; whoever brings it to K continues the parent. */
#define FK__JOIN_K ((uint32_t)1 << 31)

typedef int fk__resume_fn(fk_worker *, fk_frame *);
typedef int fk__thunk_fn(fk_worker *, const fk__record *);

/* The header every task frame starts with (member `fk` of the user's frame struct).
 * All fields are private to the runtime. */
struct fk_frame {
    void *resume;           /* label to continue at: set before each fork/call, and at a join that waits */
    fk__resume_fn *fn;      /* re-enters this task at `resume` */
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

struct fk__hot {
    /* Frame stack (owner only).  [lo, hi) is the usable part of the current stacklet or
     * region; sp is the next free byte. */
    char *sp;
    char *hi;
    char *lo;
    /* Deque, owner's private view.  Slot index x lives at buf[x & mask]; the owner keeps a
     * cursor instead of its bottom index: bottom = lap + (cur - buf).  Slots from split to
     * bottom are private: thieves never take them, so push and pop need no fence.  Slots
     * from top to split are public.  splitp is split's slot (see fk__split_ptr); cur - 1 >=
     * splitp means the newest slot is private (when the buffer wraps the test may say no
     * wrongly, never yes wrongly: the slow path sorts it out).
     * cur and splitp are atomic because a thief that forces a publication (deque.c) reads
     * cur and moves split; the owner's accesses are relaxed (plain moves on x86-64). */
    _Atomic(fk__slot *) cur;
    _Atomic(fk__slot *) splitp;
    uint64_t lap;
    uint64_t split;
    fk__slot *buf;
    uint64_t mask;
    /* Counted by the task macros when compiled with FK_STATS >= 2 (the layout does not
     * depend on FK_STATS).  Written by the owner only (load + store, no atomic RMW); atomic
     * so that anyone may read them at any time. */
    _Atomic uint64_t n_fork, n_call;
    /* push takes its slow path when cur >= limit: limit is the end of the buffer or the
     * slot that top + capacity maps to, whichever comes first, or NULL: a thief asks the
     * owner to publish work.  Thieves write it rarely and only when it is not already NULL,
     * so the owner's reads hit in its cache. */
    _Alignas(64) _Atomic(fk__slot *) limit;
    char fk__pad[64 - sizeof(void *)];
};

#define FK__HOT(w) ((struct fk__hot *)(void *)(w))

#define FK__COUNT(c) \
    atomic_store_explicit(&(c), atomic_load_explicit(&(c), memory_order_relaxed) + 1, memory_order_relaxed)
#if FK_STATS >= 2
#define FK__STAT_INC(w, field) FK__COUNT(FK__HOT(w)->field)
#else
#define FK__STAT_INC(w, field) ((void)0)
#endif

/* ---- out-of-line slow paths (runtime) ---------------------------------------------- */

#if FK_STEAL == FK_STEAL_CONT
void fk__push_slow(fk_worker *w, fk_frame *f);
int fk__pop_slow(fk_worker *w);
#else
void fk__push_slow(fk_worker *w, fk__thunk_fn *thunk, uintptr_t link, void *ret, const void *args, size_t size);
const fk__record *fk__pop_slow(fk_worker *w, fk_frame *f, uint32_t nrec);
void fk__join_unwound(fk_worker *w, fk_frame *f, uint32_t detached);
#endif
int fk__arrive(fk_worker *w, fk_frame *f, uint32_t add);
int fk__join(fk_worker *w, fk_frame *f);
void *fk__alloc_slow(fk_worker *w, size_t n);
fk_frame *fk__frame_new_slow(fk_worker *w, size_t n, fk__resume_fn *fn, uintptr_t link, void *ret);
void fk__free_slow(fk_worker *w, void *p);
int fk__run(fk_pool *pool, int worker, fk__thunk_fn *thunk, void *ret, const void *args, size_t size);
int fk__switch(fk_worker *w, fk_frame *f, unsigned worker);

FK__NORETURN FK__COLD void fk__misuse(const char *what, const char *task, const char *file, int line);

/* ---- frame stack --------------------------------------------------------------------- */

#define FK__ALIGN 16
#define FK__ROUND(n) (((n) + (FK__ALIGN - 1)) & ~(size_t)(FK__ALIGN - 1))

/* Allocates n bytes (a multiple of FK__ALIGN) on the worker's current stack.  (The
 * comparison is on addresses: a stack never ends within n bytes of the address space's.) */
static inline void *fk__alloc(fk_worker *w, size_t n) {
    struct fk__hot *h = FK__HOT(w);
    char *p = h->sp;
    if (FK__UNLIKELY((uintptr_t)p + n > (uintptr_t)h->hi))
        return fk__alloc_slow(w, n);
    h->sp = p + n;
    return p;
}

/* Frees the latest allocation p (FILO). */
static inline void fk__free(fk_worker *w, void *p) {
    struct fk__hot *h = FK__HOT(w);
#if FK_STACK == FK_STACK_SEG
    if (FK__UNLIKELY((char *)p == h->lo)) { /* the stacklet becomes empty */
        fk__free_slow(w, p);
        return;
    }
#endif
    h->sp = (char *)p;
}

/* ---- deque, owner side --------------------------------------------------------------- */

#define FK__RELAXED memory_order_relaxed

/* Pushes one slot.  Fast path: the slot at cur is below limit; it is written with relaxed
 * stores and becomes visible to thieves only when the owner publishes it (a release store
 * of split_pub in deque.c, paired with the thief's acquire load).  Slow path (limit
 * reached: the buffer's end, a full buffer, or a thief's request): fk__push_slow writes the
 * slot itself and, if a thief asked, publishes the oldest private slots, the new one
 * included (so a parent that forks and then runs a long leaf can be stolen at once). */
#if FK_STEAL == FK_STEAL_CONT
static inline void fk__push(fk_worker *w, fk_frame *f) {
    struct fk__hot *h = FK__HOT(w);
    fk__slot *s = atomic_load_explicit(&h->cur, FK__RELAXED);
    if (FK__UNLIKELY(s >= atomic_load_explicit(&h->limit, FK__RELAXED))) {
        fk__push_slow(w, f);
        return;
    }
    atomic_store_explicit(&s->frame, f, FK__RELAXED);
    atomic_store_explicit(&h->cur, s + 1, memory_order_release);
}

/* Takes back the frame pushed last.  Returns 1 if it was still there; 0 if a thief stole
 * it (then the parent's continuation runs elsewhere).  The cursor is stored before split is
 * read (the owner's half of the Dekker pattern with a thief that forces a publication: the
 * thief moves split, then runs membarrier(), then reads cur; see deque.c). */
static inline int fk__pop(fk_worker *w) {
    struct fk__hot *h = FK__HOT(w);
    fk__slot *s = atomic_load_explicit(&h->cur, FK__RELAXED) - 1;
    atomic_store_explicit(&h->cur, s, memory_order_release);
    atomic_signal_fence(memory_order_seq_cst);
    if (FK__LIKELY(s >= atomic_load_explicit(&h->splitp, FK__RELAXED))) /* private */
        return 1;
    return fk__pop_slow(w);
}
#else
static inline void fk__push_record(fk_worker *w, fk__thunk_fn *thunk, uintptr_t link, void *ret,
                                   const void *args, size_t size) {
    struct fk__hot *h = FK__HOT(w);
    fk__slot *s = atomic_load_explicit(&h->cur, FK__RELAXED);
    if (FK__UNLIKELY(s >= atomic_load_explicit(&h->limit, FK__RELAXED))) {
        fk__push_slow(w, thunk, link, ret, args, size);
        return;
    }
    uint64_t words[FK_RECORD_ARG_WORDS];
    words[(size + 7) / 8 - 1] = 0; /* the last word may be partly filled */
    memcpy(words, args, size);
    atomic_store_explicit(&s->thunk, (uintptr_t)thunk, FK__RELAXED);
    atomic_store_explicit(&s->link, link, FK__RELAXED);
    atomic_store_explicit(&s->ret, (uintptr_t)ret, FK__RELAXED);
    for (size_t i = 0; i < (size + 7) / 8; i++)
        atomic_store_explicit(&s->args[i], words[i], FK__RELAXED);
    atomic_store_explicit(&h->cur, s + 1, memory_order_release);
}

/* Takes back the record pushed last (one of f's nrec records), or returns NULL if it was
 * stolen: then so were all of f's older ones, and f->steals counts them.  Stores the cursor
 * before reading split, as fk__pop does. */
static inline const fk__record *fk__pop_record(fk_worker *w, fk_frame *f, uint32_t nrec) {
    struct fk__hot *h = FK__HOT(w);
    fk__slot *s = atomic_load_explicit(&h->cur, FK__RELAXED) - 1;
    atomic_store_explicit(&h->cur, s, memory_order_release);
    atomic_signal_fence(memory_order_seq_cst);
    if (FK__LIKELY(s >= atomic_load_explicit(&h->splitp, FK__RELAXED)))
        return s;
    return fk__pop_slow(w, f, nrec);
}
#endif

/* ---- records ----------------------------------------------------------------------- */

static inline void fk__record_args(const fk__record *r, void *args, size_t size) {
    uint64_t words[FK_RECORD_ARG_WORDS];
    for (size_t i = 0; i < (size + 7) / 8; i++)
        words[i] = atomic_load_explicit(&r->args[i], memory_order_relaxed);
    memcpy(args, words, size);
}
#define fk__record_link(r) atomic_load_explicit(&(r)->link, memory_order_relaxed)
#define fk__record_ret(r) ((void *)atomic_load_explicit(&(r)->ret, memory_order_relaxed))
#define fk__record_thunk(r) ((fk__thunk_fn *)atomic_load_explicit(&(r)->thunk, memory_order_relaxed))

/* ---- frames -------------------------------------------------------------------------- */

#define FK__DBG_MAGIC 0xF0F0C0DEu

static inline void fk__frame_init(fk_frame *f, fk__resume_fn *fn, uintptr_t link, void *ret) {
    f->fn = fn;
    f->link = link;
    f->ret = ret;
    f->sync0 = 0; /* steals and joins; the frame is not shared yet */
#if FK_DEBUG
    f->dbg_magic = FK__DBG_MAGIC;
    f->dbg_scope = 0;
    f->dbg_top_alloc = NULL;
#endif
}

/* Allocates and initialises a task frame of n bytes.  The slow path (a new stacklet) does
 * the initialisation itself, so that nothing has to survive a call on the fast path. */
static inline fk_frame *fk__frame_new(fk_worker *w, size_t n, fk__resume_fn *fn, uintptr_t link, void *ret) {
    struct fk__hot *h = FK__HOT(w);
    char *p = h->sp;
    if (FK__UNLIKELY((uintptr_t)p + n > (uintptr_t)h->hi))
        return fk__frame_new_slow(w, n, fn, link, ret);
    h->sp = p + n;
    fk__frame_init((fk_frame *)(void *)p, fn, link, ret);
    return (fk_frame *)(void *)p;
}

#if FK_DEBUG
#define FK__CHECK(cond, what) \
    ((cond) ? (void)0 : fk__misuse(what, fk__task_name, __FILE__, __LINE__))
#else
#define FK__CHECK(cond, what) ((void)0)
#endif

#if FK_DEBUG
/* 0xA5 bytes: the parameters a resumed task receives in debug builds (see rule 1). */
extern const _Alignas(64) unsigned char fk__poison[64];
void *fk__dbg_alloc(fk_worker *w, fk_frame *f, size_t n, int has_frame, const char *task, const char *file, int line);
void fk__dbg_free(fk_worker *w, fk_frame *f, void *p, const char *task, const char *file, int line);
#endif

#endif
