/* kernels.c — the kernels' descriptions, as the harness reads them (kernels.h). */
#include "harness/config/kernels.h"
#include "harness/config/config.h"

#include <stdio.h>
#include <string.h>

const hx_kernel_info *hx_kernels_find(const char *name) { return bench_desc_find(name); }

int hx_kernels_block(const char *kernel) {
    const hx_kernel_info *k = hx_kernels_find(kernel);
    return k && (k->flags & BENCH_BLOCKS);
}

int hx_kernels_vals(const hx_bench *b, bench_vals *v) {
    const hx_kernel_info *k = hx_kernels_find(b->kernel);
    char err[256];
    if (!k || bench_vals_defaults(k->opts, v, err, sizeof err))
        return -1;
    for (size_t a = 0; a + 1 < b->nargs; a += 2) {
        int idx = strncmp(b->args[a], "--", 2) ? -1 : bench_opt_find(k->opts, b->args[a] + 2);
        if (idx < 0 || bench_vals_set(k->opts, v, idx, b->args[a], b->args[a + 1], err, sizeof err))
            return -1;
    }
    return 0;
}

/* One option's default and limits: "42; integer 0 to 92", "none; one of none|T1|T1L". */
static void opt_limits(const hx_kopt *o, int markdown, char *buf, size_t len) {
    if (o->type == BENCH_CHOICE) {
        size_t n = (size_t)snprintf(buf, len, "%s; one of ", o->def);
        for (const char *c = o->choices; *c && n + 3 < len; c++) { /* (a table cell escapes '|') */
            if (*c == '|' && markdown)
                buf[n++] = '\\';
            buf[n++] = *c;
        }
        buf[n < len ? n : len - 1] = 0;
    } else if (o->type == BENCH_INT) {
        snprintf(buf, len, "%s; %sinteger %.0f to %.0f", o->def, o->pow2 ? "a power of two, " : "", o->min, o->max);
    } else {
        snprintf(buf, len, "%s; %.10g to %.10g", o->def, o->min, o->max);
    }
}

static const char *by_command(const hx_kernel_info *k, char *buf, size_t len) {
    if (!k->answer)
        return "no (no one-number answer the harness knows)";
    if (k->answer_rel_tol > 0)
        snprintf(buf, len, "yes (answer to a relative %g)", k->answer_rel_tol);
    else
        snprintf(buf, len, "yes (answer exact)");
    return buf;
}

void hx_kernels_print(FILE *out, int markdown) {
    char lim[256], cmd[64];
    if (markdown)
        fputs("| kernel | what | options (default; limits) | by command |\n|---|---|---|---|\n", out);
    else
        fputs("Kernels (a benchmark's \"kernel\"; each described at the top of its own file, kernels/NAME.c):\n", out);
    for (size_t i = 0; bench_descs[i]; i++) {
        const hx_kernel_info *k = bench_descs[i];
        if (markdown) {
            fprintf(out, "| %s | %s%s%s | ", k->name, k->summary,
                    k->flags & BENCH_BLOCKS ? "; its tasks block (child-fiber-* and serial only)" : "",
                    k->memory_is_input ? "; its memory is its input" : "");
            for (const hx_kopt *o = k->opts; o->name; o++) {
                opt_limits(o, 1, lim, sizeof lim);
                fprintf(out, "%s`%s` (%s)", o == k->opts ? "" : ", ", o->name, lim);
            }
            fprintf(out, " | %s |\n", by_command(k, cmd, sizeof cmd));
            continue;
        }
        fprintf(out, "  %-11s %s\n", k->name, k->summary);
        for (const hx_kopt *o = k->opts; o->name; o++) {
            opt_limits(o, 0, lim, sizeof lim);
            fprintf(out, "      --%-9s %s (%s)\n", o->name, o->help, lim);
        }
        if (k->flags & BENCH_BLOCKS)
            fputs("      its tasks block each other: it runs on child-fiber-* and serial only\n", out);
        if (k->memory_is_input)
            fprintf(out, "      its memory is its input: %s\n", k->memory_is_input);
        fprintf(out, "      run by a command variant: %s\n", by_command(k, cmd, sizeof cmd));
    }
}
