/* kernels.c — the kernels' descriptions, as the harness reads them (kernels.h). */
#include "harness/config/kernels.h"
#include "harness/config/config.h"

#include <string.h>

const hx_kernel_info *hx_kernels_find(const char *name) { return bench_desc_find(name); }

int hx_kernels_block(const char *kernel) {
    const hx_kernel_info *k = hx_kernels_find(kernel);
    return k && (k->flags & BENCH_BLOCKS);
}

int hx_kernels_vals(const hx_bench *b, bench_vals *v) {
    const hx_kernel_info *k = hx_kernels_find(b->kernel);
    char err[256];
    if (!k || bench_vals_defaults(k->opts, v, err, sizeof err))
        return -1;
    for (size_t a = 0; a + 1 < b->nargs; a += 2) {
        int idx = strncmp(b->args[a], "--", 2) ? -1 : bench_opt_find(k->opts, b->args[a] + 2);
        if (idx < 0 || bench_vals_set(k->opts, v, idx, b->args[a], b->args[a + 1], err, sizeof err))
            return -1;
    }
    return 0;
}
