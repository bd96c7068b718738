/* span.h — `forkscope span` (harness/span.c): work, span and parallelism of a kernel, from the
 * span build's driver, and the speedup bounds at given worker counts. */
#ifndef HX_SPAN_H
#define HX_SPAN_H

/* argv[0] is "span"; returns 0 or an HX_E* code (messages on stderr). */
int hx_cmd_span(int argc, char **argv);

#endif
