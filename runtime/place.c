/* place.c — mappings whose addresses are the same in every launch modulo FK_PLACE_ALIGN
 * (place.h says why). */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "forkscope/config.h"
#include "place.h"

static _Atomic unsigned long unplaced;

unsigned long fk__place_unplaced(void) { return atomic_load_explicit(&unplaced, memory_order_relaxed); }

/* A mapping made anyway when placement is refused: counted, and said once per process (a
 * measurement that depends on the layout should know it lost the promise). */
static void *unplaced_map(size_t size, int prot) {
    char *m = mmap(NULL, size, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    if (atomic_fetch_add_explicit(&unplaced, 1, memory_order_relaxed) == 0)
        fprintf(stderr, "forkscope: warning: a %zu-byte mapping could not be placed (the address space "
                        "refused %zu bytes more): the workers' memory layout may differ from launch to "
                        "launch (runtime/place.h)\n", size, (size_t)FK_PLACE_ALIGN);
    return m;
}

void *fk__place_map(size_t size, size_t at, uintptr_t phase) { return fk__place_map_prot(size, at, phase, PROT_READ | PROT_WRITE); }

void *fk__place_map_prot(size_t size, size_t at, uintptr_t phase, int prot) {
    const uintptr_t align = FK_PLACE_ALIGN;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (size > SIZE_MAX - align || at > size) {
        errno = ENOMEM;
        return NULL;
    }
    /* Pages larger than 4 KiB (some aarch64 kernels): the phase and the anchor move down to a
     * page boundary, so that what is cut off is whole pages. */
    phase &= ~(uintptr_t)(page - 1);
    at &= ~(size_t)(page - 1);
    /* Reserve size + align: every phase occurs once in any align consecutive bytes. */
    char *m = mmap(NULL, size + align, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return unplaced_map(size, prot);
    /* The least start s >= m with s + at = phase (mod align), then the rest given back (a
     * failed munmap only leaves address space reserved: nothing is touched there). */
    uintptr_t s = (uintptr_t)m + ((phase - at - (uintptr_t)m) & (align - 1));
    if (s > (uintptr_t)m)
        (void)munmap(m, s - (uintptr_t)m);
    size_t tail = (size_t)((uintptr_t)m + size + align - (s + size));
    if (tail)
        (void)munmap((char *)(s + size), tail);
    return (void *)s;
}
