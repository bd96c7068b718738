/* env.h — every environment variable the harness reads, in one table: read through hx_env
 * (which refuses a name not in the table), listed by --help from the same table. */
#ifndef HX_UTIL_ENV_H
#define HX_UTIL_ENV_H

#include <stdio.h>

/* Every variable the harness reads: its name, its values and what it does (for --help). */
typedef struct hx_envvar {
    const char *name, *values, *help;
} hx_envvar;
extern const hx_envvar hx_envvars[]; /* ended by name NULL */

/* The value of variable `name` (one of hx_envvars; anything else aborts: a typo in the code),
 * NULL if unset or empty. */
const char *hx_env(const char *name);

/* FORKSCOPE_MEMLIMIT, checked: 0 and *out (NULL if unset: auto) or HX_EUSAGE with a message
 * naming the accepted values.  See run/cgroup.h for what each value does. */
int hx_env_memlimit(const char **out);

/* Prints the Environment section of --help. */
void hx_env_help(FILE *out);

#endif
