/* forkscope/impl_native.h — tasks with native frames (child stealing on the C
 * stack, and on fibers): the frame in the C stack frame, a join that waits.
 * Part of impl.h, which includes it; nothing here is API. */
#ifndef FORKSCOPE_IMPL_H
#error "forkscope/impl_native.h is part of forkscope/impl.h: include forkscope.h"
#endif

/* ==== native frames (child stealing): the frame is in the C stack frame, a join waits ====== */

/* (FK_LIVE, FK_DEBUG: a task returns with its cursor where it got it: every record it
 * pushed was joined) */
#if FK_LIVE && FK_DEBUG
#define FK__RETURN_FREE()                                                                  \
    do {                                                                                   \
        FK__DBG_END();                                                                     \
        FK__CHECK(fk__cur == fk__icur, "internal: a task returns with the deque's cursor moved (FK_LIVE)"); \
    } while (0)
#else
#define FK__RETURN_FREE() FK__DBG_END()
#endif
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
        name##__rv_t (*const fk__self_run)(const fk__record * FK__RC_TYPE) FK__UNUSED = name##__run; \
        FK__CUR_DECL                                                                       \
        uint32_t fk__nrec FK__UNUSED = 0, fk__stolen FK__UNUSED = 0;                       \
        fk__thunk_fn *fk__last FK__UNUSED = NULL;                                          \
        void *fk__lastslot FK__UNUSED = NULL;                                              \
        if (0)                                                                             \
            goto fk__begin; /* a task without FK_BEGIN does not compile */                 \
        {                                                                                  \
            {

/* FK_LIVE: the task's cursor (the deque's bottom while it runs), from its hidden parameter;
 * the ring's: the slot of the scope's newest record, if known (fk__ptop, 0 if not). */
#if FK_LIVE
#define FK__RC_TYPE , fk__slot *
#define FK__CUR_DECL fk__slot *fk__cur FK__UNUSED = fk__icur;
#define FK__CALL_ARGS(...) fk__cur __VA_OPT__(, ) __VA_ARGS__
#define FK__WAIT_CUR , fk__cur
#else
#define FK__RC_TYPE
#define FK__CUR_DECL uintptr_t fk__ptop FK__UNUSED = 0;
#define FK__CALL_ARGS(...) __VA_ARGS__
#define FK__WAIT_CUR
#endif

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
        task##__rv_t fk__cv = task(FK__CALL_ARGS(__VA_ARGS__));                            \
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
            FK__WAIT_STOLEN(FK__STACK_ADDR(fk__frame_store.fk), fk__stolen FK__WAIT_CUR);  \
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

