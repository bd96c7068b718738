/* handoff.h — two threads handing a token back and forth through a futex: the 1:1 model's
 * context switch (one thread sleeps, the other wakes), which the M:N report compared its
 * fibers with.  Used by fk-switch (bench/fk_switch.c) and the switch kernel's serial driver. */
#ifndef FK_KERNELS_HANDOFF_H
#define FK_KERNELS_HANDOFF_H

#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Gives the token to `to` (wakes it if it sleeps). */
static inline void handoff_give(_Atomic uint32_t *turn, uint32_t to) {
    atomic_store(turn, to);
    syscall(SYS_futex, (uint32_t *)turn, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Sleeps until the token is `me`'s. */
static inline void handoff_await(_Atomic uint32_t *turn, uint32_t me) {
    uint32_t t;
    while ((t = atomic_load(turn)) != me)
        syscall(SYS_futex, (uint32_t *)turn, FUTEX_WAIT_PRIVATE, t, NULL, NULL, 0);
}

#endif
