/* forkscope/impl_clones.h — tasks with frames on frame stacks (seg, lin): the fast
 * and slow clones, parameters kept past the frame, the fork, call and join of each clone.
 * Part of impl.h, which includes it; nothing here is API. */
#ifndef FORKSCOPE_IMPL_H
#error "forkscope/impl_clones.h is part of forkscope/impl.h: include forkscope.h"
#endif

/* ==== frame-stack variants: fast and slow clones ============================================ */

/* (FK_WREGS: a fast clone's return stores no top, a slow clone's does: the top's rule in
 * impl_task.h.) */
#if FK_WREGS
#define FK__FREE_FRAME(f) (fk__resuming ? fk__free(f) : fk__free_frame_w(f))
#else
#define FK__FREE_FRAME(f) fk__free(f)
#endif
#define FK__RETURN_FREE()                                                                  \
    do {                                                                                   \
        FK__DBG_END();                                                                     \
        if (fk__has_frame)                                                                 \
            FK__FREE_FRAME(fk__self);                                                      \
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
        FK__WLOAD_SPO();                                                                   \
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
            FK__WSTORE_SP();                                                               \
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
            FK__WSTORE_SP();                                                               \
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
            FK__WSTORE_SP();                                                               \
            fk__join(fk__self); /* (returns if we were last to arrive) */                  \
            FK__WLOAD_SPO(); /* (the last to arrive may have adopted the frame's stack) */ \
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

