/* kernels.c — the kernel table's lookups (kernels.h). */
#include "harness/config/kernels.h"

#include <string.h>

const hx_kernel_info *hx_kernels_find(const char *name) {
    for (const hx_kernel_info *k = bench_kernel_options; k->name; k++)
        if (!strcmp(k->name, name))
            return k;
    return NULL;
}

int hx_kernels_block(const char *kernel) { return !strcmp(kernel, "switch"); }
