/* cli.h — the one option parser of the command line: a table of options per command, one
 * parser for them and for numbers, one way to say a usage error.  It is in util/ because the
 * commands that parse live in their stages (run/span.c, report/compare.c, cluster/slurm.c);
 * the table of commands and --help are harness/main.c's, the commands that only parse and
 * call a stage are cli/commands.c.  (The environment variables are util/env.h's.)
 *
 * Every command's options are a table of hx_opt; hx_cli_parse walks argv once:
 *   --name VALUE and --name=VALUE (an alias such as -o takes only the first form);
 *   a flag takes no value; a number is checked against its range; -h / --help prints the
 *   command's usage on stdout and returns HX_CLI_HELP; an argument not starting with '-'
 *   (or "-" itself) is positional; anything else is an error naming the command, unless
 *   the command passes unknown options on (to a driver: `span`).
 * Errors are printed as "forkscope CMD: what is wrong (try forkscope CMD --help)" and
 * returned as HX_EUSAGE. */
#ifndef HX_UTIL_CLI_H
#define HX_UTIL_CLI_H

#include <stddef.h>
#include <stdio.h>

typedef enum {
    HX_OPT_FLAG,   /* int *: set to 1 */
    HX_OPT_STR,    /* const char **: the value (non-empty) */
    HX_OPT_LIST,   /* hx_strv *: the value appended (the option may be repeated) */
    HX_OPT_LONG,   /* long *: an integer in [lo, hi] */
    HX_OPT_DOUBLE, /* double *: a number in [lo, hi] */
    HX_OPT_REFUSE, /* an option refused, with or without a value: `what` says why */
} hx_opt_kind;

typedef struct hx_opt {
    const char *name;  /* "--output" */
    const char *alias; /* "-o", or NULL */
    hx_opt_kind kind;
    void *dest;
    double lo, hi;     /* numbers: the accepted range, inclusive */
    const char *what;  /* what the value is, for "needs ..." and "'x' is not ..." ("a directory",
                          "a percentage in (0, 100]"); NULL: "a value", and a number's range */
    int *seen;         /* if not NULL, set to 1 when the option is given */
} hx_opt;

/* A growing list of strings (not owned). */
typedef struct hx_strv {
    const char **v;
    size_t n, cap;
} hx_strv;
void hx_strv_push(hx_strv *s, const char *x);
void hx_strv_free(hx_strv *s);

typedef struct hx_cli {
    const char *cmd;         /* "run", "slurm submit": names the messages */
    const hx_opt *opts;      /* ended by an entry with name NULL */
    void (*usage)(FILE *);   /* printed by --help (with pass_unknown and no usage, --help is
                                passed on too) */
    size_t max_pos;          /* positional arguments accepted (at most 4) */
    const char *pos_what;    /* what they are, for "more than N ... given" ("CONFIG") */
    int pass_unknown;        /* unknown options go to rest, and (with max_pos 0) every
                                non-option argument: the values of a driver's options */
    /* filled by hx_cli_parse */
    const char *pos[4];
    size_t npos;
    hx_strv rest;            /* if pass_unknown: the unknown arguments, in order */
} hx_cli;

#define HX_CLI_HELP 1
/* Parses argv[1..argc) (argv[0] is the command's name).  0; HX_CLI_HELP after printing the
 * usage; HX_EUSAGE with the message printed. */
int hx_cli_parse(hx_cli *c, int argc, char **argv);

/* A command whose only argument is one `what` (a results directory): *arg.  0, HX_CLI_HELP
 * (usage printed) or HX_EUSAGE ("no WHAT given", more than one). */
int hx_cli_one(const char *cmd, void (*usage)(FILE *), const char *what, int argc, char **argv, const char **arg);

/* "forkscope CMD: <message> (try forkscope CMD --help)" on stderr; returns HX_EUSAGE. */
int hx_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Numbers as the options take them: the whole string, in [lo, hi].  0 and *out, or -1. */
int hx_cli_long(const char *s, long lo, long hi, long *out);
int hx_cli_double(const char *s, double lo, double hi, double *out);

#endif
