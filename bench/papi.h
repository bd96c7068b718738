/* papi.h — hardware and software event counts for the bench driver, through PAPI.
 *
 * The driver names the events (--papi A,B,...).  Each counting thread (a worker, an OpenMP
 * thread, or the measuring thread of the serial projection) has its own PAPI event set,
 * opened, started and stopped on that thread; counts are summed over threads and over the
 * timed repetitions.  The kernel's software events (perf::TASK-CLOCK, PAGE-FAULTS, ...)
 * that PAPI cannot count here (its perf_event component disables itself on processors
 * libpfm4 does not know) are counted with perf_event_open() instead, and the report says
 * so ("via").  An event PAPI cannot count here (on this VM every hardware event) is
 * reported as unavailable with PAPI's reason, and the run goes on.  If the available events
 * do not fit the counters together, the event sets are multiplexed (PAPI scales the
 * counts) and the report says so. */
#ifndef FK_BENCH_PAPI_H
#define FK_BENCH_PAPI_H

#include <jansson.h>

typedef struct bench_papi bench_papi;

/* Initialises PAPI for threads 0..nthreads-1 and checks each event (comma-separated list).
 * Returns NULL only if the list is empty; a PAPI that cannot start yields a session whose
 * report says why (nothing is counted). */
bench_papi *bench_papi_open(const char *events, unsigned nthreads);
/* On thread t: start counting (the first call on a thread also registers it and creates
 * its event set). */
void bench_papi_start(bench_papi *s, unsigned t);
/* On thread t: stop counting and add the counts to thread t's totals. */
void bench_papi_stop(bench_papi *s, unsigned t);
/* {"library": ..., "domain": "all" (user and kernel) | "user", "multiplexed": bool, "events": {name: {"available": true, "total": n,
 *  "per_thread": [...] (if per_thread), "via": {...} (counted by the kernel's interface, and
 *  what PAPI said)} | {"available": false, "reason": ...}}} */
json_t *bench_papi_report(const bench_papi *s, int per_thread);
void bench_papi_close(bench_papi *s);

#endif
