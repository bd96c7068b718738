/* icount.h — the per-task overhead of the runtime variants in instructions and data
 * accesses, counted by callgrind (the time ratios are report/overhead.h's).
 *
 * Instructions (config key "instructions": {"kernel": "fib", "n": [N1, N2]}): each
 * variant's driver runs fib(N1) and fib(N2) on one worker under valgrind --tool=callgrind
 * --cache-sim=yes; the instructions executed (Ir), and the data reads (Dr) and writes (Dw)
 * they make, in the task's own functions (its fast and slow clones, thunk and split parts:
 * symbols fib, fib.*, fib__*, and fib_serial for the serial projection) at N2 minus those at
 * N1, over the difference in calls (2 fib(N+1) - 1 each), are the counts per call: exact
 * and repeatable whatever else the machine runs.  (Dr and Dw count the accesses, loads and
 * stores, a call's push of its return address and a ret's pop included, not the misses:
 * callgrind needs the cache simulation to count them at all, and its miss counts, of a
 * simulated cache, are not used.)  Writes DIR/instructions.csv:
 *   driver,kernel,n1,n2,instructions_n1,instructions_n2,calls_n1,calls_n2,per_call,vs_serial,
 *   dr_n1,dr_n2,dw_n1,dw_n2,dr_per_call,dw_per_call,dr_vs_serial,dw_vs_serial
 * (per_call and vs_serial are the instructions'; the *_vs_serial columns are empty when
 * serial is not among the variants; the dr_ and dw_ columns came later, at the end, so a
 * reader of the first ten still reads them).  callgrind's output files are kept in
 * DIR/callgrind/ and reused by a rerun of the same config, unless they lack Dr and Dw (then
 * callgrind runs again). */
#ifndef HX_RUN_ICOUNT_H
#define HX_RUN_ICOUNT_H

#include "harness/config/config.h"
#include "harness/run/launch.h"

/* Counts the instructions, data reads and data writes per call of every distinct driver
 * among cfg's variants (one per stealing-stack pair, and serial; OpenMP drivers are
 * skipped: their task functions are outlined by the compiler) into dir/instructions.csv.
 * Files already there from an earlier run of the same config are reused (see above).
 * Returns 0, or an HX_E* code with a message on stderr (valgrind missing, a run failed). */
int hx_icount_run(const hx_config *cfg, const char *dir, hx_launcher *l, int intr_fd);

/* The events in the task's functions (kernel's name: see above) according to
 * `callgrind_annotate --auto=no --show=Ir,Dr,Dw` output, whose lines are the columns, each
 * "N (P%)", or "0" or "." for zero, then file:function: 0 and sum[0..2] (the first three
 * columns, Ir, Dr, Dw; 0 for a column a line lacks), or -ENOENT if no such function
 * appears. */
int hx_icount_parse3(const char *annotate_output, const char *kernel, unsigned long long sum[3]);

/* The same for the first column alone (Ir, with or without the others). */
int hx_icount_parse(const char *annotate_output, const char *kernel, unsigned long long *sum);

#endif
