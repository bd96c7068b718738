/* chaos.h — the chaos build (make check-chaos): FK_CHAOS_POINT() marks the steps of the
 * runtime's protocols where another thread's step could fall in between (a store and its
 * fence, a load and the CAS that acts on it, an arrival and the adoption of a stack, a
 * sleeper's bit and its re-check, a producer's exchange and its link).  Compiled with
 * -DFK_CHAOS=1 each point yields the processor (1 in 4) or sleeps 1-50 µs (1 in 64), at
 * random, so that interleavings that are rare at full speed happen all the time; the
 * runtime tests then run on that build.  Its clock also differs from thread to thread
 * (FK_CHAOS_CLOCK_SKEW_NS).  Otherwise it is nothing.  Slow paths only: the
 * fork/join fast path is inline code in forkscope/impl.h and has no step another thread
 * races with. */
#ifndef FK_CHAOS_H
#define FK_CHAOS_H

#ifndef FK_CHAOS
#define FK_CHAOS 0
#endif

/* The chaos build's clocks (clock.h): each thread's fk__clock_now runs ahead of the true
 * clock by its own constant, up to this many ns, as the time-stamp counters of two CPUs may
 * disagree (a VM whose kernel does not trust its TSC across CPUs, or after a migration). */
#ifndef FK_CHAOS_CLOCK_SKEW_NS
#define FK_CHAOS_CLOCK_SKEW_NS 50000
#endif

#if FK_CHAOS
void fk__chaos(void);
#define FK_CHAOS_POINT() fk__chaos()
#else
#define FK_CHAOS_POINT() ((void)0)
#endif

#endif
