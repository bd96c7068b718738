/* clock.h — the runtime's cheap clock, shared by the span build (span.c) and the per-worker
 * time accounting (account.c).
 *
 * The time-stamp counter where the CPU says it is invariant (CPUID 0x80000007, EDX bit 8:
 * it ticks at one rate in every P- and C-state, the same on every core), its rate calibrated
 * once against CLOCK_MONOTONIC over 20 ms; else (another architecture, no invariant TSC, or
 * FORKSCOPE_CLOCK=monotonic) CLOCK_MONOTONIC itself through the vDSO, in ns.  Not installed:
 * users see fk_clock_get (forkscope.h). */
#ifndef FK_CLOCK_H
#define FK_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "chaos.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define FK__CLOCK_HAS_TSC 1
#else
#define FK__CLOCK_HAS_TSC 0
#endif

/* 1 once fk__clock_init chose the TSC (read-only after it). */
extern int fk__clock_tsc;

/* Sets the clock up once (thread-safe; the calibration takes 20 ms the first time). */
void fk__clock_init(void);

/* ns per tick of fk__clock_now (1 for CLOCK_MONOTONIC).  After fk__clock_init. */
double fk__clock_ns_per_tick(void);

static inline uint64_t fk__clock_mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if FK_CHAOS
/* The chaos build: this thread's clock offset, ticks (0 to FK_CHAOS_CLOCK_SKEW_NS, drawn once
 * per thread), so that two threads' clocks disagree as two CPUs' may. */
uint64_t fk__clock_chaos_skew(void);
#endif

static inline uint64_t fk__clock_raw(void) {
#if FK__CLOCK_HAS_TSC
    if (__builtin_expect(fk__clock_tsc, 1))
        return __rdtsc();
#endif
    return fk__clock_mono_ns();
}

/* Now, in ticks.  After fk__clock_init.  Two threads' reads are not ordered like their
 * other memory operations (RDTSC is not ordered by a fence or a locked instruction), and
 * two CPUs' clocks need not agree: a protocol that compares times read on two threads
 * must not rely on them (account.c does not). */
static inline uint64_t fk__clock_now(void) {
#if FK_CHAOS
    return fk__clock_raw() + fk__clock_chaos_skew();
#else
    return fk__clock_raw();
#endif
}

#endif
