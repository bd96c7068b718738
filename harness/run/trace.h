/* trace.h — `forkscope trace` (harness/run/trace.c): one run with every worker's timeline
 * written as a Chrome trace, and where each worker's time went. */
#ifndef HX_TRACE_H
#define HX_TRACE_H

/* argv[0] is "trace"; returns 0 or an HX_E* code (messages on stderr). */
int hx_cmd_trace(int argc, char **argv);

#endif
