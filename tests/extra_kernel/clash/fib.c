/* fib.c — a kernel from outside the tree named like a built-in one: make EXTRA_KERNELS refuses
 * it before compiling anything (scripts/extra-kernel-test.sh). */
#include "bench/bench.h"
