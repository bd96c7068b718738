/* icount.h — the per-task overhead of the runtime variants in instructions, counted by
 * callgrind (the time ratios are report/overhead.h's).
 *
 * Instructions (config key "instructions": {"kernel": "fib", "n": [N1, N2]}): each
 * variant's driver runs fib(N1) and fib(N2) on one worker under valgrind --tool=callgrind;
 * the instructions executed in the task's own functions (its fast and slow clones, thunk
 * and split parts: symbols fib, fib.*, fib__*, and fib_serial for the serial projection)
 * at N2 minus those at N1, over the difference in calls (2 fib(N+1) - 1 each), is the
 * count per call: exact and repeatable whatever else the machine runs.  Writes
 * DIR/instructions.csv:
 *   driver,kernel,n1,n2,instructions_n1,instructions_n2,calls_n1,calls_n2,per_call,vs_serial
 * (callgrind's output files are kept in DIR/callgrind/). */
#ifndef HX_RUN_ICOUNT_H
#define HX_RUN_ICOUNT_H

#include "harness/config/config.h"
#include "harness/run/launch.h"

/* Counts the instructions per call of every distinct driver among cfg's variants (one
 * per stealing-stack pair, and serial; OpenMP drivers are skipped: their task functions
 * are outlined by the compiler) into dir/instructions.csv.  Files already there from an
 * earlier run of the same config are reused.  Returns 0, or an HX_E* code with a
 * message on stderr (valgrind missing, a run failed). */
int hx_icount_run(const hx_config *cfg, const char *dir, hx_launcher *l, int intr_fd);

/* The instructions executed in the task's functions (kernel's name: see above) according to
 * `callgrind_annotate --auto=no` output: 0 and *sum, or -ENOENT if no such function appears. */
int hx_icount_parse(const char *annotate_output, const char *kernel, unsigned long long *sum);

#endif
