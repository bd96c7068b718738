/* stack.c — frame stacks: segmented (geometric stacklets) or linear (one reserved region).
 *
 * A worker always has a current stack; frames are allocated and freed on it in FILO order
 * (fast path inline in forkscope/impl.h).  Stacks move between workers with the frames on
 * them: a worker that must let a suspended frame go records the stack's handle in the frame
 * and takes a fresh stack (fk__stack_replace); whoever later resumes that frame adopts the
 * stack (fk__stack_adopt) in place of its own, which is empty at that point.  Each worker
 * keeps one spare empty stack so that this costs no allocation in the steady state. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "place.h"
#include "worker.h"

void fk__stack_account(fk_pool *pool, int64_t bytes) {
    int64_t now = atomic_fetch_add_explicit(&pool->stack_bytes, bytes, memory_order_relaxed) + bytes;
    int64_t peak = atomic_load_explicit(&pool->stack_bytes_peak, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak_explicit(&pool->stack_bytes_peak, &peak, now,
                                                                memory_order_relaxed, memory_order_relaxed))
        ;
}

/* The worker's frame-stack top, as the runtime reads it.  FK_DEBUG refuses the value a
 * task's fast path leaves where it keeps the top in its registers (FK__SP_POISON, cont-seg
 * and cont-lin): every entry into the runtime stores the top first (the top's rule,
 * forkscope/impl_task.h).  (fk__stack_describe, which tests call from inside tasks, reads
 * it unchecked: what it saves is saved again before anyone reads it.) */
static char *top_of(const fk_worker *w) {
#if FK_DEBUG
    if (w->hot->sp == FK__SP_POISON)
        fk__fatal("internal error: worker %u read its frame stack's top where a task keeps it in registers "
                  "(the top's rule, forkscope/impl_task.h)", w->id);
#endif
    return w->hot->sp;
}

#if FK_STACK != FK_STACK_LIN
/* ==== segmented stacks (also native frames' FK_ALLOC blocks) =================================================================
 *
 * A stack is a doubly linked list of stacklets, each with a 48-byte header.  When a frame
 * does not fit the current stacklet, the next one is the cached empty stacklet if it is big
 * enough, else a new one of twice the current size (or the size needed, if larger).  When a
 * stacklet empties, the worker steps back to the previous one and keeps the empty one
 * cached, unless it is more than twice the size of the previous one; at most one empty
 * stacklet stays cached (Williams & Elliott, Section III-A). */

typedef struct fk__stacklet {
    struct fk__stacklet *prev, *next; /* next: the cached empty stacklet, if any */
    char *lo, *hi;                    /* usable area */
    char *sp;                         /* saved stack pointer while not current */
    size_t size;                      /* bytes, header included */
} fk__stacklet;

_Static_assert(sizeof(fk__stacklet) == 48, "stacklet header is 48 bytes");

static fk__stacklet *stacklet_try_new(fk_worker *w, size_t size) {
    fk__stacklet *s = malloc(size);
    if (!s)
        return NULL;
    s->prev = s->next = NULL;
    s->lo = (char *)s + FK__ROUND(sizeof *s);
    s->hi = (char *)s + size;
    s->sp = s->lo;
    s->size = size;
    FK__WSTAT(w, stacklets_alloc);
    fk__stack_account(w->pool, (int64_t)size);
    return s;
}

static fk__stacklet *stacklet_new(fk_worker *w, size_t size) {
    fk__stacklet *s = stacklet_try_new(w, size);
    if (!s)
        fk__fatal("out of memory allocating a %zu-byte stacklet", size);
    return s;
}

static void stacklet_free(fk_worker *w, fk__stacklet *s) {
    FK__WSTAT(w, stacklets_freed);
    fk__stack_account(w->pool, -(int64_t)s->size);
    free(s);
}

/* Frees an empty stack: its bottom stacklet and the cached one after it. */
static void stack_free(fk_worker *w, fk__stacklet *s) {
    if (s->next)
        stacklet_free(w, s->next);
    stacklet_free(w, s);
}

FK__GPR_ONLY static void install(fk_worker *w, fk__stacklet *s) {
    w->stk_cur = s;
    w->hot->lo = s->lo;
    w->hot->hi = s->hi;
    w->hot->sp = s->sp;
}

static size_t first_size(const fk_worker *w) {
    size_t size = w->pool->opts.stacklet_bytes;
    return size < 256 ? 256 : size;
}

int fk__stack_init(fk_worker *w) {
    fk__stacklet *s = stacklet_try_new(w, first_size(w));
    if (!s)
        return FK_ENOMEM;
    install(w, s);
    w->stk_spare = NULL;
    return 0;
}

void fk__stack_destroy(fk_worker *w) {
    fk__stacklet *s = w->stk_cur;
    if (s) {
        while (s->prev) /* only if destroyed mid-computation; free the whole chain */
            s = s->prev;
        while (s) {
            fk__stacklet *next = s->next;
            stacklet_free(w, s);
            s = next;
        }
    }
    if (w->stk_spare)
        stack_free(w, w->stk_spare);
    w->stk_cur = w->stk_spare = NULL;
}

/* A recursion whose depth swings across the end of a stacklet steps into the cached
 * stacklet and back at every swing: these two cases are the quick paths (no allocation;
 * before them, each swing cost two full saves of the vector state in the stubs, and
 * integrate at n = 10^4 ran 2.6x as long on child-seg as on child-lin). */
/* (Anything these call must use the general registers only too: no calls out of them, and
 * no TLS model that calls __tls_get_addr.) */
FK__GPR_ONLY void *fk__alloc_slow_quick(size_t n) {
    fk_worker *w = fk__tls.w; /* (not FK__H: with fibers an inline asm of another target) */
    fk__stacklet *cur = w->stk_cur, *s = cur->next;
    if (!s || (size_t)(s->hi - s->lo) < n)
        return NULL;
    if (FK_DEBUG && w->hot->sp == FK__SP_POISON)
        return NULL; /* (the top's rule broken: fk__alloc_slow's top_of says so) */
    cur->sp = w->hot->sp;
    s->sp = s->lo + n;
    install(w, s);
    return s->lo;
}

FK__GPR_ONLY int fk__free_slow_quick(void *p) {
    fk_worker *w = fk__tls.w;
    fk__stacklet *cur = w->stk_cur, *prev = cur->prev;
    if (!prev) { /* the bottom stacklet just empties */
        w->hot->sp = p;
        return 1;
    }
    if (cur->next || cur->size > 2 * prev->size)
        return 0; /* a stacklet to free */
    install(w, prev); /* cur stays cached as prev's next */
    return 1;
}

void *fk__alloc_slow(size_t n) {
    void *q = fk__alloc_slow_quick(n);
    if (q)
        return q;
    fk_worker *w = FK__H->w;
    fk__stacklet *cur = w->stk_cur, *s = cur->next;
    cur->sp = top_of(w);
    if (s && (size_t)(s->hi - s->lo) < n) { /* the cached stacklet is too small */
        stacklet_free(w, s);
        cur->next = s = NULL;
    }
    if (!s) {
        size_t need = FK__ROUND(sizeof *s) + n, size = cur->size * 2;
        if (need < n)
            fk__fatal("frame-stack allocation of %zu bytes is too large", n);
        s = stacklet_new(w, size > need ? size : need);
        s->prev = cur;
        cur->next = s;
    }
    s->sp = s->lo + n;
    install(w, s);
    return s->lo;
}

void fk__free_slow(void *p) {
    if (fk__free_slow_quick(p)) /* (among them the bottom stacklet: below, prev is not NULL) */
        return;
    fk_worker *w = FK__H->w;
    fk__stacklet *cur = w->stk_cur, *prev = cur->prev;
    if (cur->next) { /* keep at most one empty stacklet cached: cur */
        stacklet_free(w, cur->next);
        cur->next = NULL;
    }
    if (cur->size > 2 * prev->size) { /* do not cache one much larger than its predecessor */
        stacklet_free(w, cur);
        prev->next = NULL;
    }
    install(w, prev);
}

int fk__stack_empty(const fk_worker *w) {
    const fk__stacklet *s = w->stk_cur;
    return !s->prev && top_of(w) == w->hot->lo;
}

int fk__stack_holds(const fk_worker *w, const void *p) {
    for (const fk__stacklet *s = w->stk_cur; s; s = s->prev) {
        const char *top = s == w->stk_cur ? top_of(w) : s->sp;
        if ((const char *)p >= s->lo && (const char *)p < top)
            return 1;
    }
    return 0;
}

void *fk__stack_handle(fk_worker *w) {
    fk__stacklet *s = w->stk_cur;
    s->sp = top_of(w);
    return s;
}

void fk__stack_replace(fk_worker *w) {
    fk__stacklet *s = w->stk_spare;
    w->stk_spare = NULL;
    if (!s)
        s = stacklet_new(w, first_size(w));
    install(w, s);
}

void fk__stack_adopt(fk_worker *w, void *handle) {
    fk__stacklet *old = w->stk_cur;
    old->sp = top_of(w); /* == old->lo: the caller's stack is empty */
    if (!w->stk_spare)
        w->stk_spare = old;
    else
        stack_free(w, old);
    install(w, handle);
}

int fk__stack_describe(fk_worker *w, size_t *sizes, int max, int *current) {
    fk__stacklet *s = w->stk_cur;
    s->sp = w->hot->sp;
    while (s->prev)
        s = s->prev;
    int n = 0;
    for (; s; s = s->next, n++) {
        if (s == w->stk_cur)
            *current = n;
        if (n < max)
            sizes[n] = s->size;
    }
    return n;
}

#else
/* ==== linear stacks ====================================================================
 *
 * A stack is one region reserved with mmap (MAP_NORESERVE: untouched pages cost nothing),
 * with a small header at its start.  The fast path sees a soft end, `mark`, raised in
 * LIN_STEP steps by the slow path; so the pool knows how many bytes of each region have
 * been used (and touched) without any cost on the fast path.  Past the region's real end
 * allocation is a fatal error that names the setting to raise. */

#define LIN_STEP ((size_t)64 << 10)

typedef struct fk__region {
    char *lo, *end; /* usable area */
    char *mark;     /* soft end: [lo, mark) has been handed out at some point */
    char *sp;       /* saved stack pointer while not current */
    size_t size;    /* bytes reserved, header included */
} fk__region;

static char *mark_for(const fk__region *r, char *need) {
    size_t used = (size_t)(need - r->lo);
    used = (used + LIN_STEP - 1) / LIN_STEP * LIN_STEP;
    return used > (size_t)(r->end - r->lo) ? r->end : r->lo + used;
}

static fk__region *region_try_new(fk_worker *w) {
    size_t size = (w->pool->opts.linear_stack_bytes + 4095) & ~(size_t)4095; /* (at most 2^40: pool.c) */
    void *m = fk__place_map(size, 0, FK__PLACE_FRAMES); /* (the same layout every launch: place.h) */
    if (!m)
        return NULL;
    fk__region *r = m;
    /* The first frames start half a page from the page offset of the owner's hot cache line
     * (fk__tls), and the deque's first slots right after it (deque.c): a frame or slot at
     * the same page offset as a hot field makes the fast path's loads of the field wait on
     * its stores (4K aliasing; on AMD EPYC (Zen 3) fib on linear stacks ran 0.13 s or 0.55
     * s depending on where ASLR put the region).  Trees deeper than half a page of frames
     * meet it again: the layout only keeps the shallow, hottest part clear. */
    uintptr_t want = ((uintptr_t)w->hot + 2048) & (4096 - 64);
    r->lo = (char *)m + (want >= FK__ROUND(sizeof *r) ? want : want + 4096);
    r->end = (char *)m + size;
    r->sp = r->lo;
    r->mark = mark_for(r, r->lo + 1);
    r->size = size;
    FK__WSTAT(w, stacklets_alloc);
    fk__stack_account(w->pool, (int64_t)(r->mark - (char *)r));
    return r;
}

static fk__region *region_new(fk_worker *w) {
    fk__region *r = region_try_new(w);
    if (!r)
        fk__fatal("cannot reserve a %zu-byte linear frame stack: %s (lower FORKSCOPE_LINEAR_STACK "
                  "or fk_pool_opts.linear_stack_bytes)", w->pool->opts.linear_stack_bytes, strerror(errno));
    return r;
}

static void region_free(fk_worker *w, fk__region *r) {
    FK__WSTAT(w, stacklets_freed);
    fk__stack_account(w->pool, -(int64_t)(r->mark - (char *)r));
    munmap(r, r->size);
}

static void install(fk_worker *w, fk__region *r) {
    w->stk_cur = r;
    w->hot->lo = r->lo;
    w->hot->hi = r->mark;
    w->hot->sp = r->sp;
}

int fk__stack_init(fk_worker *w) {
    fk__region *r = region_try_new(w);
    if (!r)
        return FK_ENOMEM;
    install(w, r);
    w->stk_spare = NULL;
    return 0;
}

void fk__stack_destroy(fk_worker *w) {
    if (w->stk_cur)
        region_free(w, w->stk_cur);
    if (w->stk_spare)
        region_free(w, w->stk_spare);
    w->stk_cur = w->stk_spare = NULL;
}

void *fk__alloc_slow(size_t n) {
    fk_worker *w = FK__H->w;
    fk__region *r = w->stk_cur;
    char *p = top_of(w);
    if ((size_t)(r->end - p) < n)
        fk__fatal("linear frame stack overflow: a stack holds %zu bytes and %zu more were needed "
                  "(raise FORKSCOPE_LINEAR_STACK or fk_pool_opts.linear_stack_bytes, or use "
                  "segmented stacks)", w->pool->opts.linear_stack_bytes, n);
    char *mark = mark_for(r, p + n);
    fk__stack_account(w->pool, (int64_t)(mark - r->mark));
    r->mark = mark;
    w->hot->hi = mark;
    w->hot->sp = p + n;
    return p;
}

void fk__free_slow(void *p) {
    FK__H->sp = p;
}

/* (Raising the soft end is rare, once per LIN_STEP of new depth: always the full path.) */
FK__GPR_ONLY void *fk__alloc_slow_quick(size_t n) {
    (void)n;
    return NULL;
}

FK__GPR_ONLY int fk__free_slow_quick(void *p) {
    fk__tls.sp = p;
    return 1;
}

int fk__stack_empty(const fk_worker *w) {
    return top_of(w) == w->hot->lo;
}

int fk__stack_holds(const fk_worker *w, const void *p) {
    return (const char *)p >= w->hot->lo && (const char *)p < top_of(w);
}

void *fk__stack_handle(fk_worker *w) {
    fk__region *r = w->stk_cur;
    r->sp = top_of(w);
    return r;
}

void fk__stack_replace(fk_worker *w) {
    fk__region *r = w->stk_spare;
    w->stk_spare = NULL;
    install(w, r ? r : region_new(w));
}

void fk__stack_adopt(fk_worker *w, void *handle) {
    fk__region *old = w->stk_cur;
    old->sp = top_of(w); /* == old->lo: the caller's stack is empty */
    if (!w->stk_spare)
        w->stk_spare = old;
    else
        region_free(w, old);
    install(w, handle);
}

int fk__stack_describe(fk_worker *w, size_t *sizes, int max, int *current) {
    fk__region *r = w->stk_cur;
    *current = 0;
    if (max > 0)
        sizes[0] = r->size;
    return 1;
}
#endif
