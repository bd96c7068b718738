/* place.h — where a worker's hot memory goes: the same address modulo FK_PLACE_ALIGN in
 * every launch, whatever address-space randomisation, the mapping sizes or the kernel's
 * huge-page alignment of large mappings do.
 *
 * The fast path of every variant touches, each fork and join, a few cache lines of four
 * regions: the worker's C stack (and, just above its top, the thread's static TLS holding
 * fk__tls), its frame stack (linear variants: one mapped region), its deque's slots and
 * fk__tls itself.  Left to mmap and malloc, their addresses relative to each other change
 * from launch to launch in bits 12-27 (the kernel aligns anonymous mappings of 2 MiB and
 * more to 2 MiB, so the gaps between mappings follow the random base; malloc's thread
 * arenas sit wherever a 64 MiB-aligned hole was).  Caches and their predictors index and
 * tag by such bits (4K aliasing of loads on stores uses bits 0-11; AMD's L1 way predictor
 * hashes bits 12-27), and issue 19 saw fib on linear stacks run 3x slower in about half of
 * all launches on AMD EPYC, one process fast or slow throughout.  Here each region is cut
 * from a larger reservation so that a chosen offset of it lands on a chosen phase modulo
 * FK_PLACE_ALIGN: the layout of the hot lines is then one and the same in every launch
 * (tests/test_stack.c, hot_memory_placed, checks the addresses).  Which layout is fastest
 * on a given core is a separate question; that it is the same every time is what a
 * comparison needs. */
#ifndef FK_PLACE_H
#define FK_PLACE_H

#include <stddef.h>
#include <stdint.h>

#include "forkscope/config.h"

/* The phases (modulo FK_PLACE_ALIGN) of the regions' anchors: the top of a worker's C stack
 * mapping, the start of a linear frame region, the start of a deque buffer.  Distinct
 * multiples of 16 MiB plus an odd number of pages, so that no two anchors agree in bits
 * 12-27 (each also gets, inside its first page, the sub-page offset stack.c and deque.c
 * choose from fk__tls's address). */
#define FK__PLACE_CSTACK_TOP ((uintptr_t)0)
#define FK__PLACE_FRAMES (((uintptr_t)5 << 24) + ((uintptr_t)3 << 12))
#define FK__PLACE_DEQUE (((uintptr_t)9 << 24) + ((uintptr_t)7 << 12))

/* Maps `size` bytes (a multiple of the page size), readable and writable, untouched pages
 * unreserved (MAP_NORESERVE), such that the mapping's byte `at` (page-aligned, at most
 * size) lies at an address congruent to `phase` (page-aligned) modulo FK_PLACE_ALIGN.
 * Returns the mapping, or NULL with errno set.  When the larger reservation that placement
 * needs is refused (an address-space limit) it maps `size` bytes anywhere, counts that in
 * fk__place_unplaced and says so once on stderr: the memory is still there, only its
 * placement is not promised.  A size the reservation cannot hold fails with ENOMEM. */
void *fk__place_map(size_t size, size_t at, uintptr_t phase);
/* The same with protection `prot` (PROT_NONE: address space only, made usable later with
 * mprotect, and charged to the commit limit only then). */
void *fk__place_map_prot(size_t size, size_t at, uintptr_t phase, int prot);

/* How many fk__place_map calls fell back to an unplaced mapping (process-wide). */
unsigned long fk__place_unplaced(void);

#endif
