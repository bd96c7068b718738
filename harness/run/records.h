/* records.h — the runs' records: a driver's stdout turned into numbers, DIR/raw.jsonl read
 * back (the format is results/results.h's). */
#ifndef HX_RUN_RECORDS_H
#define HX_RUN_RECORDS_H

#include <jansson.h>
#include <stddef.h>

/* A bench driver's stdout (bench/driver.c): *doc its JSON object (new reference, NULL if
 * it is not one), *time_s and *cpu_s the medians of its "times" and "cpu_times" (NaN if
 * absent or not all finite numbers).  Returns HX_DRIVER_OK, or what is wrong with it. */
enum { HX_DRIVER_OK, HX_DRIVER_NO_OUTPUT, HX_DRIVER_UNPARSABLE, HX_DRIVER_WRONG, HX_DRIVER_NO_TIMES };
int hx_records_driver_output(const char *out, size_t len, json_t **doc, double *time_s, double *cpu_s);

/* Reads DIR/raw.jsonl: every complete line must be a JSON object with a string "run_id"; an
 * incomplete last line (no '\n') is cut off the file if fix (resuming), else ignored (a
 * reader beside a sweep that is still writing).  Returns the records (a JSON array, new
 * reference) or NULL with a message on stderr (*why set to HX_EIO).  A missing file gives
 * an empty array. */
json_t *hx_records_read_raw(const char *path, int fix, int *why);

#endif
