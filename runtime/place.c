/* place.c — mappings whose addresses are the same in every launch modulo FK_PLACE_ALIGN
 * (place.h says why). */
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "forkscope/config.h"
#include "place.h"

static _Atomic unsigned long unplaced;

unsigned long fk__place_unplaced(void) { return atomic_load_explicit(&unplaced, memory_order_relaxed); }

void *fk__place_map(size_t size, size_t at, uintptr_t phase) {
    const int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
    const uintptr_t align = FK_PLACE_ALIGN;
    /* Reserve size + align: every phase occurs once in any align consecutive bytes. */
    char *m = mmap(NULL, size + align, prot, flags, -1, 0);
    if (m == MAP_FAILED) {
        m = mmap(NULL, size, prot, flags, -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        atomic_fetch_add_explicit(&unplaced, 1, memory_order_relaxed);
        return m;
    }
    /* The least start s >= m with s + at = phase (mod align), then the rest given back. */
    uintptr_t s = (uintptr_t)m + ((phase - at - (uintptr_t)m) & (align - 1));
    if (s > (uintptr_t)m)
        munmap(m, s - (uintptr_t)m);
    size_t tail = (size_t)((uintptr_t)m + size + align - (s + size));
    if (tail)
        munmap((char *)(s + size), tail);
    return (void *)s;
}
