/* command.h — variants defined by a command template: any runtime measured beside forkscope.
 *
 * A config's variant object {"name": N, "command": {KERNEL: [ARGV...], ...}, "calibrate":
 * [ARGV...], "time": {"regex": R}, "answer": {"regex": R}} runs ARGV for each benchmark of
 * KERNEL (no command for a kernel: its cells are skipped, and the plan says so).  In ARGV,
 * {workers} and {PARAM} (the kernel's parameters, given or default) are replaced.  A run goes
 * through the launcher like a driver's (peak RSS, limits, process group).  Its time is group 1
 * of the time regex's first match on stdout, in seconds, or, without a time regex, the wall
 * time of the process (the record says which); its answer, group 1 of the answer regex, must
 * equal the kernel's known answer (its description's; exactly, or to its relative tolerance):
 * a wrong or missing answer is a failed run.  A kernel whose answer is not one number cannot
 * be run by command.  config.c validates all of this before a sweep. */
#ifndef HX_COMMAND_H
#define HX_COMMAND_H

#include <jansson.h>
#include <regex.h>
#include <stddef.h>

#include "harness/config/config.h"

/* The command of v for kernel (NULL for the calibrate command); NULL if there is none. */
json_t *hx_command_template(const hx_variant *v, const char *kernel);

/* The argv (malloc'd, NULL-terminated) of one run of v on benchmark b (NULL: calibrate) at P
 * workers; NULL if v has no such command. */
char **hx_command_argv(const hx_variant *v, const hx_bench *b, unsigned workers);

/* The known answer of benchmark b (its kernel's description's): 0 and *answer (NaN where
 * the kernel knows none for b's params); -ENOTSUP if its answer is not one number. */
int hx_command_expected(const hx_bench *b, double *answer);
/* 1 if a runtime run by command can run `kernel`: its answer is one number the harness knows. */
int hx_command_checkable(const char *kernel);
/* Those kernels, in the list's order, for messages: "fib, integrate, nqueens or uts".  Returns buf. */
const char *hx_command_checkable_list(char *buf, size_t len);

/* Compiles a config's regex (REG_EXTENDED) after refusing what would make regcomp take
 * memory without bound: over HX_REGEX_MAX characters, or repetitions nested so that the
 * expansion exceeds HX_REGEX_MAX_SIZE nodes.  0, or -1 with the reason in why. */
#define HX_REGEX_MAX 512
#define HX_REGEX_MAX_SIZE 20000
int hx_command_regex_compile(regex_t *rx, const char *re, char *why, size_t len);

/* Judges a finished run's stdout: 0 (ok), 1 (wrong answer) or 2 (no answer / unparsable
 * time), with *time_s (NaN without a time regex) and a one-line note. */
int hx_command_judge(const hx_variant *v, const hx_bench *b, const char *out, double *time_s, char *note,
                     size_t notelen);


#endif
