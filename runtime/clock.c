/* clock.c — the choice and calibration of the runtime's clock (clock.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "clock.h"
#include "forkscope.h"

int fk__clock_tsc;
static double ns_per_tick = 1.0;
static double calib_ms;
static const char *why = "";
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int tsc_invariant(void) {
#if FK__CLOCK_HAS_TSC
    unsigned a, b, c, d;
    return __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8));
#else
    return 0;
#endif
}

static void setup(void) {
    const char *e = getenv("FORKSCOPE_CLOCK");
    int want_mono = e && !strcmp(e, "monotonic");
    if (e && !want_mono && strcmp(e, "tsc"))
        fprintf(stderr, "forkscope: ignoring FORKSCOPE_CLOCK=%s: not tsc or monotonic\n", e);
    if (want_mono) {
        why = "FORKSCOPE_CLOCK=monotonic";
        return;
    }
    if (!tsc_invariant()) {
        why = FK__CLOCK_HAS_TSC ? "the CPU reports no invariant TSC" : "no TSC on this architecture";
        return;
    }
#if FK__CLOCK_HAS_TSC
    /* (each end: the TSC read between two monotonic reads, whose mean it is matched with) */
    uint64_t m0 = fk__clock_mono_ns();
    uint64_t t0 = __rdtsc();
    uint64_t m0b = fk__clock_mono_ns();
    while (fk__clock_mono_ns() - m0 < 20000000u)
        ;
    uint64_t m1 = fk__clock_mono_ns();
    uint64_t t1 = __rdtsc();
    uint64_t m1b = fk__clock_mono_ns();
    double dn = ((double)m1 + (double)m1b) / 2 - ((double)m0 + (double)m0b) / 2;
    if (t1 <= t0 || dn <= 0) {
        why = "the TSC did not advance during its calibration";
        return;
    }
    ns_per_tick = dn / (double)(t1 - t0);
    calib_ms = dn / 1e6;
    fk__clock_tsc = 1;
#endif
}

void fk__clock_init(void) { pthread_once(&once, setup); }

#if FK_CHAOS
uint64_t fk__clock_chaos_skew(void) {
    static _Thread_local uint64_t skew, drawn;
    if (!drawn) { /* (xorshift of the thread's first raw clock read and the address of skew) */
        uint64_t s = (fk__clock_raw() * 0x9e3779b97f4a7c15ull) ^ (uint64_t)(uintptr_t)&skew;
        s |= 1;
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        skew = (uint64_t)((double)(s % (FK_CHAOS_CLOCK_SKEW_NS + 1)) / ns_per_tick);
        drawn = 1;
    }
    return skew;
}
#endif

double fk__clock_ns_per_tick(void) { return ns_per_tick; }

void fk_clock_get(fk_clock_info *out) {
    fk__clock_init();
    memset(out, 0, sizeof *out);
    out->source = fk__clock_tsc ? "tsc" : "monotonic";
    out->ns_per_tick = ns_per_tick;
    out->calibration_ms = calib_ms;
    out->fallback_reason = fk__clock_tsc ? "" : why;
}
