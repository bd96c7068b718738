/* forkscope/impl_task.h — the task macros every variant shares: a task's interface,
 * results, the fork, call, spawn and join forms.
 * Part of impl.h, which includes it; nothing here is API. */
#ifndef FORKSCOPE_IMPL_H
#error "forkscope/impl_task.h is part of forkscope/impl.h: include forkscope.h"
#endif

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
#if FK_LIVE
/* FK_LIVE: the deque's cursor first (fk__icur; a record's run passes fk__rc, the cursor it
 * was given). */
#define FK__SIG(M, RET, ...) fk__slot *fk__icur FK__PARAMS(M, __VA_ARGS__)
#define FK__RARGS(link, ret, ...) fk__rc FK__PARAMS(FK__ARG, __VA_ARGS__)
#define FK__LINK_UNUSED fk__slot *const fk__cur FK__UNUSED = fk__icur /* (a leaf's: FK_RETURN's check) */
#elif FK__NATIVE_FRAMES
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
/* (A record's task returned: the top is where it was; the top's rule, below.) */
#define FK__WRUN_END() ((void)(FK__H->sp = fk__isp))
#define FK__WLOCALS                                                                        \
    ptrdiff_t fk__spo FK__UNUSED = 0;                                                      \
    fk__slot *fk__cur FK__UNUSED = fk__icur;
/* The slow clone (resumed, perhaps on another worker) takes the cursor from the hot state,
 * and the top where it enters and after a join that arrived (FK__WLOAD_SPO): see the top's
 * rule below. */
#define FK__W_SP() fk__w_at(fk__self, fk__spo)
#define FK__W_CUR() (fk__resuming ? fk__hbound(&FK__H->cur) : fk__cur)
#define FK__WCHILD , FK__W_SP(), FK__W_CUR()
/* After a child may have moved the cursor (a failed pop that goes on: settling it may move
 * the cursor, e.g. back across the buffer's start; a call, whose child may have been
 * resumed in place): a plain load, which the compiler drops when the value is not used (a
 * call that ends a scope).  The top is not reloaded there: the child's subtree gave back
 * every frame it took (a pop that goes on, or a call that returns here, means that no
 * newer slot was stolen), and a merged value would cost a callee-saved register across
 * later calls.  FK_ALLOC and FK_FREE move the top
 * (FK_DEBUG refuses them before FK_BEGIN or in a leaf; in a release build the frame then
 * goes at the moved top: the parameter itself is reloaded).  The arithmetic is on
 * integers: on segmented stacks the top may be in another stacklet than the frame. */
#define FK__WRELOAD() ((void)(fk__cur = fk__hbound(&FK__H->cur)))
/* THE TOP'S RULE: the frame stack's top lives in the tasks' registers, and the hot state's
 * sp is written only before the runtime reads it, by whoever enters the runtime: a slow
 * allocation (fk__frame_new_w), FK_ALLOC, a pop's slow path, a join that arrives, a hop;
 * a slow clone's return (the trampoline's completion looks at the stack); a record's run,
 * once its task has returned (the worker loop then finds its stack empty).  Anywhere else
 * sp may be stale (FK_DEBUG builds poison it there: FK__SP_POISON): a fast clone's frames
 * neither write it nor put it back (two stores a task; fib on cont-lin ran 0.96x the serial
 * projection's time with them, 0.80x without: the medians over four code layouts).  A
 * slow clone takes its top from sp where it enters (at its resume point's dispatch) and
 * after a join that arrived, where it may have adopted another stack. */
#define FK__WSTORE_SP() ((void)(FK__H->sp = fk__has_frame ? fk__w_at(fk__self, fk__spo) : fk__isp))
#define FK__WLOAD_SPO() ((void)(fk__spo = (ptrdiff_t)((uintptr_t)FK__H->sp - (uintptr_t)fk__self)))
#define FK__WRELOAD_SP() ((void)(fk__has_frame ? (FK__WLOAD_SPO(), 0) : (fk__isp = FK__H->sp, 0)))
/* FK_DEBUG, before a push, a call, a frame: the task's cursor is the worker's, and its top
 * lies in the worker's current stacklet or region (a top kept from another stack, e.g. from
 * before a join that adopted the frame's, does not). */
FK__INLINE int fk__w_top_ok(const char *top) {
    struct fk__hot *h = FK__H;
    return top >= h->lo && top <= h->hi;
}
#define FK__WCHECK()                                                                       \
    FK__CHECK((fk__resuming || fk__cur == fk__hload(&FK__H->cur)) &&                       \
                  fk__w_top_ok(fk__has_frame ? fk__w_at(fk__self, fk__spo) : fk__isp),       \
              "internal: the task's copy of the deque's cursor or of the frame stack's top is stale (FK_WREGS)")
#else
#define FK__WCHECK() ((void)0)
#define FK__WSTORE_SP() ((void)0)
#define FK__WLOAD_SPO() ((void)0)
#define FK__WSIG
#define FK__WPASS
#define FK__WNONE
#define FK__WUNUSED
#define FK__WLOAD_DECL
#define FK__WRUN_END() ((void)0)
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
    FK__INLINE name##__rv_t name##__run(const fk__record *fk__r FK__RC_PARAM) {            \
        struct name##__args fk__a;                                                         \
        fk__record_args(fk__r, &fk__a, sizeof fk__a);                                      \
        (void)fk__a; /* a task without parameters reads none */                            \
        FK__WLOAD_DECL                                                                     \
        name##__rv_t fk__rv = name(FK__RARGS(fk__record_link(fk__r), (RET *)fk__record_ret(fk__r), __VA_ARGS__)); \
        FK__WRUN_END();                                                                    \
        return fk__rv;                                                                     \
    }                                                                                      \
    STORAGE void name##__thunk(const fk__record *fk__r FK__RC_PARAM);                      \
    FK__TASK_APPLY(name, RET, __VA_ARGS__)

/* The apply function (frames on frame stacks: a fork or call with its arguments evaluated
 * before); native frames call the task itself. */
#if FK__NATIVE_FRAMES
#define FK__TASK_APPLY(name, RET, ...)
#else
#define FK__TASK_APPLY(name, RET, ...)                                                     \
    FK__INLINE name##__rv_t name##__apply(uintptr_t fk__link, RET *fk__ret FK__WSIG,         \
                                          const struct name##__args *fk__ap) {             \
        const struct name##__args fk__a = *fk__ap;                                         \
        (void)fk__a; /* a task without parameters reads none */                            \
        (void)fk__link;                                                                    \
        (void)fk__ret;                                                                     \
        return name(FK__RARGS(fk__link, fk__ret, __VA_ARGS__));                            \
    }
#endif

/* The thunk a record of the task runs (defined with the task): the call, then the store of
 * its value to the record's result address (none: the value is dropped), unless the
 * child unwound. */
#define FK__TASK_THUNK(name, STORAGE)                                                      \
    STORAGE FK__UNUSED void name##__thunk(const fk__record *fk__r FK__RC_PARAM) {          \
        void *const fk__dst = fk__record_ret(fk__r);                                       \
        name##__rv_t fk__v = name##__run(fk__r FK__RC(fk__rc));                            \
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

/* FK_ALLOC / FK_FREE, on the worker's frame stack in every variant.  (FK_WREGS: the
 * allocation starts from the hot state's top, so the task's is stored first; they move the
 * top, so the task's copy is loaded again; FK__WSYNC(e) gives e's value.) */
#if FK_WREGS
#define FK__WSYNC(e)                                                                       \
    ({                                                                                     \
        FK__WSTORE_SP();                                                                   \
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
            fk__rv_t fk__jv = fk__self_run(r FK__RC(fk__cur)); /* inlined: a direct call */ \
            AFTER                                                                          \
            FK__STORE_RV(fk, fk__dst, fk__jv);                                            \
        } else {                                                                           \
            fk__rt(r FK__RC(fk__cur));                                                     \
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
        FK__FORK_PUSH(task##__thunk, (uintptr_t)fk__self, fk__fslot, fk__u.w, FK__ARG_WORDS(struct task##__args)); \
        fk__last = task##__thunk;                                                          \
        fk__lastslot = fk__fslot;                                                          \
        fk__nrec++;                                                                        \
    } while (0)

/* The fork's push: at the task's cursor, which moves past it (FK_LIVE), or at the hot
 * state's, the slot kept for the join's pop (fk__ptop). */
#if FK_LIVE
#define FK__FORK_PUSH(thunk, link, dst, w, nw)                                             \
    (fk__push_live(FK__HOT, fk__cur, (thunk), (link), (dst), (w), (nw)), fk__cur++)
#else
#define FK__FORK_PUSH(thunk, link, dst, w, nw)                                             \
    (fk__ptop = fk__push_record_h(FK__HOT, (thunk), (link), (dst), (w), (nw)))
#endif

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
        const fk__record *fk__r = FK__POP_NEXT();                                          \
        if (!fk__r) {                                                                      \
            FK__POP_GONE();                                                                \
            stolen += fk__nrec;                                                            \
            fk__nrec = 0;                                                                  \
            break;                                                                         \
        }                                                                                  \
        FK__POP_TAKEN(fk__r);                                                              \
        fk__nrec--;                                                                        \
        FK__RUN_RECORD(fk__t, fk__r, AFTER);                                               \
    }
/* The join's pop of its newest record; when that was stolen (so were the older ones), where
 * the cursor goes; when it was taken, where the next older record is.  FK_LIVE: the task's
 * cursor less one; the slow path left the bottom at the scope's oldest record, s - (nrec - 1);
 * the popped slot is free (its record is read before its task runs over it).  Otherwise the
 * slot below the one popped. */
#if FK_LIVE
/* (FK_DEBUG: the slot below the cursor holds this frame's record, stolen or not: its link
 * is cleared only by this pop, or by a lowering to a cursor at or below it) */
#define FK__POP_NEXT()                                                                     \
    (FK__CHECK(atomic_load_explicit(&(fk__cur - 1)->link, memory_order_relaxed) == (uintptr_t)fk__self, \
               "internal: the join's record is not at the cursor (FK_LIVE)"),              \
     fk__pop_live(FK__HOT, fk__cur - 1, fk__nrec - 1))
#define FK__POP_GONE() (fk__cur -= fk__nrec)
#define FK__POP_TAKEN(r) (fk__cur--)
#else
#define FK__POP_NEXT() FK__POP_OWN(fk__ptop)
#define FK__POP_GONE() ((void)0)
#define FK__POP_TAKEN(r) (fk__ptop = (uintptr_t)(r) - sizeof(fk__slot))
#endif

