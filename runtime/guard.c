/* guard.c — the SIGSEGV handler that names an overflowed stack (see guard.h). */
#include "guard.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ALTSTACK_BYTES (64u << 10)

_Thread_local const fk__guard_zone *fk__guard_thread_zone;
_Thread_local const fk__guard_zone *fk__guard_fiber_zone;
static _Thread_local void *altstack; /* the signal stack this module gave the thread */

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

static int hits(const fk__guard_zone *z, const char *a) { return z && a >= z->lo && a < z->hi; }

static void on_segv(int sig, siginfo_t *si, void *ctx) {
    const char *a = si->si_addr;
    const fk__guard_zone *z = hits(fk__guard_fiber_zone, a) ? fk__guard_fiber_zone
                              : hits(fk__guard_thread_zone, a) ? fk__guard_thread_zone
                                                               : NULL;
    if (z) {
        say("forkscope: fatal: ");
        say(z->what);
        say(" overflowed (");
        say_num(z->stack_bytes);
        say(" bytes): ");
        say(z->hint);
        say("\n");
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

int fk__thread_stack(char **lo, char **hi) {
    pthread_attr_t attr;
    void *addr;
    size_t size;
    int rc = pthread_getattr_np(pthread_self(), &attr);
    if (rc)
        return -rc;
    rc = pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    if (rc)
        return -rc;
    *lo = addr;
    *hi = (char *)addr + size;
    return 0;
}

void fk__guard_install(void) {
    if (FK__GUARD_ACTIVE)
        pthread_once(&installed, install);
}

int fk__guard_thread_enter(void) {
    if (!FK__GUARD_ACTIVE)
        return 0;
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE))
        return 0; /* the thread has one already */
    void *mem = malloc(ALTSTACK_BYTES);
    if (!mem)
        return -1;
    stack_t ss = {.ss_sp = mem, .ss_size = ALTSTACK_BYTES, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
        free(mem);
        return -1;
    }
    altstack = mem;
    return 0;
}

void fk__guard_thread_leave(void) {
    if (altstack) {
        stack_t ss = {.ss_flags = SS_DISABLE};
        sigaltstack(&ss, NULL);
        free(altstack);
        altstack = NULL;
    }
}
