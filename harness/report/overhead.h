/* overhead.h — report.md's section on the per-task overhead of the runtime variants.
 *
 * Time: in an interleaved sweep, repetition k of every cell runs in round k; the overhead
 * of variant V is the median over rounds of T_V,P=1 / T_serial (T1/Ts) and of
 * T_serial / T_V,P=2 (Ts/T2), each ratio taken within one round, so that the machine's
 * drift between rounds cancels (the ratio of the medians is in summary.csv as speedup).
 * Instructions, data reads and data writes per call: DIR/instructions.csv, written by
 * run/icount.c (a file from before the reads and writes: "–" in their cells). */
#ifndef HX_REPORT_OVERHEAD_H
#define HX_REPORT_OVERHEAD_H

#include <stdio.h>

/* Writes the report section "Overhead against the serial projection" from dir/raw.jsonl
 * (paired ratios) and dir/instructions.csv (if present).  Writes nothing if there is no
 * serial projection to compare with. */
void hx_overhead_write_md(FILE *f, const char *dir);

#endif
