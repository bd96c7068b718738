/* exitcodes.h — exit statuses of the forkscope CLI, one table for every command. */
#ifndef HX_EXITCODES_H
#define HX_EXITCODES_H

#define HX_EXIT_MAP(X)                                                                       \
    X(OK, 0, "success")                                                                      \
    X(USAGE, 1, "bad command line")                                                          \
    X(CONFIG, 2, "the configuration file is invalid")                                        \
    X(IO, 3, "a file could not be read or written")                                          \
    X(RUNS_FAILED, 4, "the sweep finished but some runs failed (recorded in raw.jsonl)")    \
    X(INTERRUPTED, 5, "interrupted (the results so far are kept; rerun with --resume)")     \
    X(TOOL, 6, "a required tool is missing (e.g. gnuplot)")                                 \
    X(INTERNAL, 7, "internal error")

#define HX_EXIT_ENUM(name, code, text) HX_EXIT_##name = code,
enum hx_exit { HX_EXIT_MAP(HX_EXIT_ENUM) };
#undef HX_EXIT_ENUM

#endif
