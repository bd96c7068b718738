/* errors.h — the harness's return convention and the CLI's exit statuses.
 *
 * Every harness function that can fail returns 0 on success or a negative code, as the
 * runtime's functions do:
 *   -errno   a system call failed (reading or writing a file, starting a process); the
 *            caller's message names the file, strerror(-rc) says why;
 *   HX_E*    the harness's own outcomes below, all under -4095 so that they never meet an
 *            errno value.
 * Functions that print their own messages (the commands, hx_config_load with its
 * diagnostics, the sweep) still return a code, and the CLI turns the code of the command
 * it ran into the process's exit status with hx_exit_status — the one place that does. */
#ifndef HX_ERRORS_H
#define HX_ERRORS_H

#include <stddef.h>

/* name, exit status, what the status means (printed by forkscope --help) */
#define HX_ERR_MAP(X)                                                                        \
    X(USAGE, 1, "bad command line")                                                          \
    X(CONFIG, 2, "the configuration file is invalid")                                        \
    X(IO, 3, "a file could not be read or written")                                          \
    X(RUNS_FAILED, 4, "the sweep finished but some runs failed (recorded in raw.jsonl)")    \
    X(INTERRUPTED, 5, "interrupted (the results so far are kept; rerun with --resume)")     \
    X(TOOL, 6, "a required tool is missing (e.g. gnuplot)")                                 \
    X(INTERNAL, 7, "internal error")

/* Exit statuses of the forkscope CLI (0: success). */
#define HX_EXIT_ENUM_(name, code, text) HX_EXIT_##name = code,
enum hx_exit { HX_EXIT_OK = 0, HX_ERR_MAP(HX_EXIT_ENUM_) };
#undef HX_EXIT_ENUM_

/* Return codes.  An -errno from a system call maps to HX_EXIT_IO. */
#define HX_ERRNO_MAX 4095
#define HX_ERR_ENUM_(name, code, text) HX_E##name = -(HX_ERRNO_MAX + 1 + HX_EXIT_##name),
enum hx_err { HX_OK = 0, HX_ERR_MAP(HX_ERR_ENUM_) };
#undef HX_ERR_ENUM_

/* The exit status for return code rc (0, -errno or HX_E*). */
int hx_exit_status(int rc);
/* A static description of rc: the HX_E* code's text, strerror(-rc) for -errno. */
const char *hx_strerror(int rc);
/* Formats a reason into err[len] (if err) and returns -EINVAL: for readers that say why. */
int hx_errf(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
