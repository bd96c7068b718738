/* commands.h — every forkscope command (their options parsed by cli/cli.h, the one layer of
 * the command line that every command uses wherever it lives): argv[0] is the command's name, the rest its
 * arguments; each returns 0 or a code of harness/util/errors.h (main turns it into the exit
 * status).  The table of commands and --help are in harness/main.c. */
#ifndef HX_CLI_COMMANDS_H
#define HX_CLI_COMMANDS_H

#include "harness/cluster/slurm.h"   /* hx_cmd_slurm */
#include "harness/report/analysis.h" /* hx_cmd_compare */
#include "harness/run/span.h"        /* hx_cmd_span */
#include "harness/run/trace.h"       /* hx_cmd_trace */

int hx_cmd_fit(int argc, char **argv);     /* cli/commands.c */
int hx_cmd_plot(int argc, char **argv);    /* cli/commands.c */

#endif
