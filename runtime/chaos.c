/* chaos.c — the chaos build's random yields and sleeps (chaos.h). */
#include "chaos.h"

#if FK_CHAOS
#include <sched.h>
#include <stdint.h>
#include <time.h>

void fk__chaos(void) {
    static _Thread_local uint64_t s;
    if (!s) { /* per thread: seeded from the clock and the address of s */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        s = ((uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull) ^ (uint64_t)(uintptr_t)&s;
        s |= 1;
    }
    s ^= s << 13; /* xorshift64 */
    s ^= s >> 7;
    s ^= s << 17;
    uint64_t r = s;
    if ((r & 3) == 0) {
        sched_yield();
    } else if ((r & 63) == 1) {
        struct timespec d = {0, (long)(1000 + (r >> 8) % 49000)};
        nanosleep(&d, NULL);
    }
}
#else
typedef int fk__chaos_unused; /* an empty translation unit is not C */
#endif
