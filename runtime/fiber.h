/* fiber.h — stackful fibers: a hand-written context switch and guarded, pooled stacks.
 *
 * A fiber is a stack and the registers a function call must preserve.  Switching saves the
 * running fiber's callee-saved registers on its own stack, stores its stack pointer in the
 * fiber, loads the other fiber's stack pointer and restores its registers: a function call
 * that returns on another stack.  Saved per switch:
 *   x86-64 (System V): rbx, rbp, r12-r15, the return address, MXCSR and the x87 control
 *                      word (callee-saved by the ABI's rules for the control bits);
 *   aarch64 (AAPCS64): x19-x28, x29 (frame pointer), x30 (link register), d8-d15, FPCR;
 * the stack pointer is the fiber's handle.  Caller-saved registers are the compiler's
 * business: the switch is an ordinary function call to it.
 *
 * A switch carries one pointer from the fiber that switches to the one that resumes: the
 * value returned by fk__fiber_switch in the resumed fiber, or the first argument of a new
 * fiber's function.  A scheduler uses it to finish what the switching fiber could not do
 * itself (e.g. publish it as parked only once its registers are saved).
 *
 * Stacks are mmap'd (untouched pages cost nothing) with a guard region below them: running
 * into it is reported by guard.c naming the stack-size setting, never a silent corruption.
 * The fiber's descriptor lives at the top of its own mapping.  The guard's size and the
 * least stack size are in forkscope/config.h (FK_FIBER_GUARD_BYTES, FK__FIBER_MIN_STACK).
 *
 * ASan and TSan are told about every switch (__sanitizer_start/finish_switch_fiber,
 * __tsan_switch_to_fiber), so sanitizer builds check fiber code too.
 *
 * Owner-only: a fiber runs on one thread at a time; whoever passes fibers between threads
 * orders that (a fiber suspended on one thread may be resumed on another once its switch
 * has returned there). */
#ifndef FK_FIBER_H
#define FK_FIBER_H

#include <stddef.h>
#include <stdint.h>

#include "forkscope/config.h" /* FK__FIBER_MIN_STACK, FK_FIBER_GUARD_BYTES */
#include "guard.h"

/* A new fiber's function: arg is what the first switch to it passed, data what
 * fk__fiber_new was given.  It must never return (it switches away for good instead). */
typedef void fk__fiber_fn(void *arg, void *data);

typedef struct fk__fiber {
    void *sp;                 /* saved stack pointer while suspended */
    struct fk__fiber *next;   /* a link for whoever holds the fiber (pool, queue) */
    void *user;               /* the scheduler's */
    char *map;                /* the mapping (guard + stack + this descriptor); NULL: a thread's stack */
    size_t map_bytes;
    char *lo, *hi;            /* the usable stack */
    fk__guard_zone guard;
#if defined(__SANITIZE_ADDRESS__)
    void *asan_fake;          /* ASan's fake stack of the fiber while it is switched out */
#endif
#if defined(__SANITIZE_THREAD__)
    void *tsan;               /* TSan's context of the fiber */
#endif
} fk__fiber;

/* Describes the calling thread's own stack as the fiber *main (no mapping of ours) and
 * makes it the thread's current fiber; installs the overflow handler and a signal stack.
 * Call once per thread before its first switch.  0, or -errno. */
int fk__fiber_thread_init(fk__fiber *main);
/* Forgets the thread's fibers (after the thread is back on *main). */
void fk__fiber_thread_exit(fk__fiber *main);

/* A new fiber with a stack of stack_bytes (rounded up to pages; at least
 * FK__FIBER_MIN_STACK) that will run fn(arg, data) when first switched to.  what and hint
 * name it in an overflow report (static strings).  NULL with errno set if no memory. */
fk__fiber *fk__fiber_new(size_t stack_bytes, fk__fiber_fn *fn, void *data, const char *what,
                         const char *hint);
/* Makes a fiber that is not running (never started, or switched away for good) start
 * afresh: fn(arg, data) at its next switch.  Its stack's pages stay resident. */
void fk__fiber_restart(fk__fiber *f, fk__fiber_fn *fn, void *data);
/* Unmaps a fiber that is not running. */
void fk__fiber_free(fk__fiber *f);

/* The fiber the calling thread runs (after fk__fiber_thread_init). */
fk__fiber *fk__fiber_current(void);

/* Suspends from (the running fiber) and runs to, passing arg; returns, in from, the value
 * passed by the switch that resumes it. */
void *fk__fiber_switch(fk__fiber *from, fk__fiber *to, void *arg);
/* The same for a fiber that will never be resumed again (it can then be restarted or
 * freed by whoever receives arg).  Does not return. */
_Noreturn void fk__fiber_exit_to(fk__fiber *from, fk__fiber *to, void *arg);

/* The raw switch, for the latency benchmark: no sanitizer notes, no current-fiber update. */
void *fk__ctx_switch(void **save_sp, void *to_sp, void *arg);

#endif
