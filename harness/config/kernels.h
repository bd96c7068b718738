/* kernels.h — the kernels a configuration may name: their own descriptions (bench/options.h),
 * compiled from each kernel's file without its runtime code and linked into the harness, which
 * learns from them everything it knows of a kernel (options, answer, estimate, flags). */
#ifndef HX_CONFIG_KERNELS_H
#define HX_CONFIG_KERNELS_H

#include <stdio.h>

#include "bench/options.h"

typedef bench_opt hx_kopt;
typedef bench_desc hx_kernel_info;

struct hx_bench;

/* The kernel called name, NULL if unknown. */
const hx_kernel_info *hx_kernels_find(const char *name);
/* Kernels written with tasks that block each other (BENCH_BLOCKS); the variants whose tasks
 * can are variants.h's hx_variant_can_block. */
int hx_kernels_block(const char *kernel);
/* The option values benchmark b's driver runs with (its kernel's defaults, then b's params as
 * the driver parses them): 0, or -1 (an unknown kernel or a value the driver would refuse:
 * config.c refuses those first). */
int hx_kernels_vals(const struct hx_bench *b, bench_vals *v);
/* Every kernel, its options (default; limits) and what it says of itself, as `forkscope
 * kernels` prints them; markdown: one table row per kernel (configs/README.md's table). */
void hx_kernels_print(FILE *out, int markdown);

#endif
