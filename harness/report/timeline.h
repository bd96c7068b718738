/* timeline.h — `forkscope plot TRACE.json`: a trace's timeline as a figure (timeline.c). */
#ifndef HX_REPORT_TIMELINE_H
#define HX_REPORT_TIMELINE_H

/* Reads the trace (a Chrome trace JSON written by forkscope trace or a driver's --trace) and
 * draws TRACE-timeline/timeline.png and .pdf (or .svg) beside it, with the data (timeline.dat,
 * steals.dat) and the scripts to redraw it.  0, HX_EUSAGE (not a trace), HX_EIO, HX_ETOOL
 * (no gnuplot: the data is written), HX_EINTERNAL (gnuplot failed). */
int hx_timeline_plot(const char *trace);

#endif
