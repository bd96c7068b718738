/* env.c — the environment variables the harness reads (env.h). */
#include "harness/util/env.h"
#include "harness/util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const hx_envvar hx_envvars[] = {
    {"FORKSCOPE_DRIVER", "PATH",
     "run PATH as the driver of every variant (for tests); by default fk-bench-* in ../libexec/forkscope if there is one (an installed tree, make bundle's), else next to this executable"},
    {"FORKSCOPE_MEMLIMIT", "auto|cgroup|cgroup-v2|cgroup-v1|poll",
     "how the per-run memory limit is enforced: auto (or cgroup) tries cgroup v2, then v1, then polls; "
     "cgroup-v2 and cgroup-v1 force one (polling if it is unusable); poll reads /proc/PID/statm every "
     "10 ms (env.json's memory_limit says which was used, and why)"},
    {"FORKSCOPE_PROMOTE", "thief|beat",
     "the runtime's promotion (fk_pool_opts_init) where forkscope does not choose it; every runtime "
     "variant forkscope runs is passed its name's promotion (--promote thief when this is set), so that a setting in the shell does not turn thief variants into heartbeat ones"},
    {"FORKSCOPE_BEAT_US", "N",
     "the heartbeat period in us of a runtime variant's pool (fk_pool_opts_init; default 100); forkscope run "
     "(and slurm) does not pass the shell's value to the runs of runtime variants, so that the config says what "
     "ran: a variant object's \"env\" sets it (command variants, trace and the instruction counts inherit it)"},
    {"FORKSCOPE_BEAT_SHARE", "one|half",
     "what a heartbeat promotes (fk_pool_opts_init; default one); as FORKSCOPE_BEAT_US, only a variant "
     "object's \"env\" passes it to a sweep's runs of runtime variants"},
    {"FORKSCOPE_PLOTS", "DIR",
     "the gnuplot scripts plot and compare use (default: plots/ of the source tree, found from this "
     "executable, else ./plots)"},
    {"FORKSCOPE_SPAN_LOG_MIB", "N",
     "the span build's per-strand log in MiB (default 1024; beyond it span falls back to the least of the "
     "repetitions); read by the fk-bench-span driver"},
    {"FORKSCOPE_SPAN_RESIDUE_SCALE", "X",
     "multiply the span build's calibrated hook residue by X (default 1), for tests: a host whose clock costs "
     "more; read by the fk-bench-span driver"},
    {NULL, NULL, NULL},
};

static const char *const memlimit_values[] = {"auto", "cgroup", "cgroup-v2", "cgroup-v1", "poll", NULL};

const char *hx_env(const char *name) {
    for (const hx_envvar *v = hx_envvars; v->name; v++)
        if (!strcmp(v->name, name)) {
            const char *s = getenv(name);
            return s && *s ? s : NULL;
        }
    fprintf(stderr, "forkscope: internal error: environment variable %s is not in env.c's table\n", name);
    abort();
}

int hx_env_memlimit(const char **out) {
    const char *s = hx_env("FORKSCOPE_MEMLIMIT");
    *out = s;
    if (!s)
        return 0;
    for (const char *const *v = memlimit_values; *v; v++)
        if (!strcmp(s, *v))
            return 0;
    fprintf(stderr, "forkscope: FORKSCOPE_MEMLIMIT=%.64s is none of", s);
    for (const char *const *v = memlimit_values; *v; v++)
        fprintf(stderr, "%s %s", v == memlimit_values ? "" : ",", *v);
    fputc('\n', stderr);
    return HX_EUSAGE;
}

/* Prints text wrapped at 92 columns, every line indented by `indent`. */
static void wrapped(FILE *out, const char *text, int indent) {
    const int width = 92;
    int col = indent;
    fprintf(out, "%*s", indent, "");
    while (*text) {
        size_t n = strcspn(text, " ");
        if (col > indent && col + 1 + (int)n > width) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', out);
            col++;
        }
        fprintf(out, "%.*s", (int)n, text);
        col += (int)n;
        text += n;
        while (*text == ' ')
            text++;
    }
    fputc('\n', out);
}

void hx_env_help(FILE *out) {
    for (const hx_envvar *v = hx_envvars; v->name; v++) {
        fprintf(out, "  %s=%s\n", v->name, v->values);
        wrapped(out, v->help, 8);
    }
}
