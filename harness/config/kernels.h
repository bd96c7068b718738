/* kernels.h — the kernels a configuration may name and the options each takes: the drivers'
 * own table (bench/options.c), linked into the harness. */
#ifndef HX_CONFIG_KERNELS_H
#define HX_CONFIG_KERNELS_H

#include "bench/options.h"

/* The drivers' own table (bench/options.h), linked into the harness: a configuration's
 * params are checked against exactly what the drivers accept. */
typedef bench_opt hx_kopt;
typedef bench_kernel_opts hx_kernel_info;

/* The kernel called name, NULL if unknown. */
const hx_kernel_info *hx_kernels_find(const char *name);
/* Kernels written with tasks that block each other (switch); the variants whose tasks can
 * are variants.h's hx_variant_can_block. */
int hx_kernels_block(const char *kernel);

#endif
