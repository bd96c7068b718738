/* cstack.c — a worker's C stack overflowing is reported, not a bare SIGSEGV.
 *
 * Fast-path calls recurse on the worker thread's C stack in every variant (and native
 * frames live there), so a deep enough task tree overflows it.  Each worker thread has a
 * large guard region below its stack (FK_CSTACK_GUARD_BYTES) and a small signal stack; a
 * SIGSEGV handler running on that signal stack recognises a fault in the current worker's
 * guard region, says which setting to raise, and aborts.  Any other SIGSEGV goes to the
 * handler that was installed before ours (or the default action).  Not installed under
 * the sanitizers, which report stack overflows themselves. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker.h"

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define GUARD_ACTIVE 1
#else
#define GUARD_ACTIVE 0
#endif

#define ALTSTACK_BYTES (64u << 10)

static struct sigaction previous;
static pthread_once_t installed = PTHREAD_ONCE_INIT;

/* Async-signal-safe output. */
static void say(const char *s) {
    ssize_t r = write(2, s, strlen(s));
    (void)r;
}

static void say_num(unsigned long long v) {
    char buf[24], *p = buf + sizeof buf;
    *--p = 0;
    do
        *--p = (char)('0' + v % 10);
    while ((v /= 10) && p > buf);
    say(p);
}

static void on_segv(int sig, siginfo_t *si, void *ctx) {
    fk_worker *w = FK__H->w;
    char *a = si->si_addr;
    if (w && w->cstack_lo && a < w->cstack_lo && a >= w->cstack_lo - FK_CSTACK_GUARD_BYTES) {
        say("forkscope: fatal: worker ");
        say_num(w->id);
        say(" overflowed its C stack (");
        say_num(w->pool->opts.thread_stack_bytes);
        say(" bytes): the task tree is too deep for it (fast-path calls recurse on it");
#if FK_STACK == FK_STACK_NATIVE
        say(", and native frames live in it");
#endif
        say("); raise FORKSCOPE_THREAD_STACK or fk_pool_opts.thread_stack_bytes\n");
        abort();
    }
    /* Not ours: whoever handled SIGSEGV before us, or the default action. */
    if (previous.sa_flags & SA_SIGINFO) {
        previous.sa_sigaction(sig, si, ctx);
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(sig);
    } else {
        signal(SIGSEGV, SIG_DFL); /* returning re-runs the faulting instruction */
    }
}

static void install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &previous);
}

void fk__cstack_guard_install(void) {
    if (GUARD_ACTIVE)
        pthread_once(&installed, install);
}

/* On the worker thread, before it runs anything. */
void fk__cstack_guard_enter(fk_worker *w) {
    if (!GUARD_ACTIVE)
        return;
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &addr, &size) == 0)
            w->cstack_lo = addr;
        pthread_attr_destroy(&attr);
    }
    w->altstack = malloc(ALTSTACK_BYTES);
    if (w->altstack) {
        stack_t ss = {.ss_sp = w->altstack, .ss_size = ALTSTACK_BYTES, .ss_flags = 0};
        if (sigaltstack(&ss, NULL) != 0) {
            free(w->altstack);
            w->altstack = NULL;
        }
    }
}

void fk__cstack_guard_leave(fk_worker *w) {
    if (w->altstack) {
        stack_t ss = {.ss_flags = SS_DISABLE};
        sigaltstack(&ss, NULL);
        free(w->altstack);
        w->altstack = NULL;
    }
}
