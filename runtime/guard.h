/* guard.h — stacks that overflow are reported, not a bare SIGSEGV.
 *
 * Worker threads' C stacks (cstack.c) and fiber stacks (fiber.c) each have a guard region
 * below them (address space without access).  One SIGSEGV handler, running on the thread's
 * alternate signal stack, recognises a fault in the guard of the stack the thread is on,
 * says which stack overflowed and which setting to raise, and aborts.  Any other SIGSEGV
 * goes to the handler installed before ours (or the default action).  Nothing is installed
 * under the sanitizers, which report stack overflows themselves.
 *
 * Self-contained (no pool, no worker): the fiber tests link it alone, also cross-compiled. */
#ifndef FK_GUARD_H
#define FK_GUARD_H

#include <stddef.h>

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define FK__GUARD_ACTIVE 1
#else
#define FK__GUARD_ACTIVE 0
#endif

/* A stack's guard region [lo, hi) and what to say when a fault lands in it. */
typedef struct fk__guard_zone {
    char *lo, *hi;
    size_t stack_bytes; /* the usable size of the stack above it */
    const char *what;   /* "worker 3's C stack", "a fiber stack of worker 0" */
    const char *hint;   /* what overflowed it and what to raise */
} fk__guard_zone;

/* The thread's own stack, and the stack of the fiber the thread runs (NULL: the thread's
 * own).  Set by cstack.c and fiber.c; read by the handler. */
extern _Thread_local const fk__guard_zone *fk__guard_thread_zone;
extern _Thread_local const fk__guard_zone *fk__guard_fiber_zone;

/* The calling thread's C stack, [*lo, *hi): 0, or -errno. */
int fk__thread_stack(char **lo, char **hi);

/* Installs the process's handler once (thread-safe).  No-op under the sanitizers. */
void fk__guard_install(void);
/* Gives the calling thread an alternate signal stack if it has none (the handler cannot run
 * on the stack that overflowed); fk__guard_thread_leave removes the one it gave.  0, or -1
 * if none could be made (then an overflow is a plain SIGSEGV). */
int fk__guard_thread_enter(void);
void fk__guard_thread_leave(void);

#endif
