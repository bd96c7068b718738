/* gnuplot.c — finding gnuplot and its terminals, finding and copying the scripts, drawing a
 * figure (gnuplot.h); for every command that draws. */
#include "harness/util/env.h"
#include "harness/report/gnuplot.h"
#include "harness/util/errors.h"
#include "harness/util/util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the scripts, found and copied ------------------------------------------------------------------------------------ */

static const char *const script_names[] = {"term.gp",     "scaling.gp",  "speedup.gp", "efficiency.gp",
                                           "memory.gp",   "overhead.gp", "forest.gp", "breakdown.gp", "timeline.gp"};
#define NSCRIPTS (sizeof script_names / sizeof *script_names)

static int is_script_dir(const char *d) {
    char p[PATH_MAX];
    for (size_t i = 0; i < NSCRIPTS; i++) {
        if (hx_path_join(p, d, script_names[i], "") || access(p, R_OK))
            return 0;
    }
    return 1;
}

/* Finds the directory of the gnuplot scripts (see plot.h); 0 and out filled, or -1 with
 * where it looked in `looked`. */
static int find_scripts(char *out, size_t len, char *looked, size_t looklen) {
    const char *env = hx_env("FORKSCOPE_PLOTS");
    if (env && *env) {
        snprintf(looked, looklen, "$FORKSCOPE_PLOTS=%s", env);
        if (is_script_dir(env)) {
            snprintf(out, len, "%s", env);
            return 0;
        }
        return -1;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    looked[0] = 0;
    if (n > 0) {
        exe[n] = 0;
        for (int up = 0; up < 8; up++) {
            char *slash = strrchr(exe, '/');
            if (!slash || slash == exe)
                break;
            *slash = 0;
            char cand[PATH_MAX];
            if (!hx_path_join(cand, exe, "plots", "") && is_script_dir(cand)) {
                snprintf(out, len, "%s", cand);
                return 0;
            }
            /* an installed tree or make bundle's: bin/forkscope, share/forkscope/plots */
            if (!hx_path_join(cand, exe, "share/forkscope/plots", "") && is_script_dir(cand)) {
                snprintf(out, len, "%s", cand);
                return 0;
            }
        }
        snprintf(looked, looklen, "plots/ and share/forkscope/plots/ above %.*s, ", (int)n, exe);
    }
    if (is_script_dir("plots")) {
        snprintf(out, len, "plots");
        return 0;
    }
    size_t l = strlen(looked);
    snprintf(looked + l, looklen - l, "./plots");
    return -1;
}

static int copy_file(const char *from, const char *to) {
    FILE *in = fopen(from, "r");
    if (!in)
        return -errno;
    FILE *out = fopen(to, "w");
    if (!out) {
        int e = errno;
        fclose(in);
        return -e;
    }
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            break;
    int bad = ferror(in) || ferror(out);
    fclose(in);
    if (fclose(out) || bad)
        return -(errno ? errno : EIO);
    return 0;
}

/* ---- running gnuplot ------------------------------------------------------------------------------ */

/* Runs gnuplot (exe) with args (NULL-terminated; args[0] is replaced by exe); its stdout and
 * stderr together in *output (malloc'd).  The exit status, or -1 (and errno) if it could not
 * be started, 128 + signal if killed. */
static int run_gnuplot(const char *exe, const char *const args[], char **output) {
    size_t n = 0;
    while (args[n])
        n++;
    const char **argv = hx_xcalloc(n + 1, sizeof *argv);
    for (size_t i = 0; i < n; i++)
        argv[i] = i ? args[i] : exe;
    int rc = hx_capture(argv, 1, output);
    free(argv);
    return rc;
}

/* Does gnuplot know terminal `t`?  list is GPVAL_TERMINALS (space separated). */
static int has_term(const char *list, const char *t) {
    size_t n = strlen(t);
    for (const char *p = list; (p = strstr(p, t)); p += n)
        if ((p == list || p[-1] == ' ' || p[-1] == '\n') && (p[n] == ' ' || p[n] == '\n' || p[n] == 0))
            return 1;
    return 0;
}

/* Prints gnuplot's output indented, naming the script. */
static void print_output(const char *script, const char *term, const char *out) {
    const char *p = out;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n)
            fprintf(stderr, "forkscope: gnuplot (%s, %s): %.*s\n", script, term, (int)n, p);
        p += n;
        if (*p)
            p++;
    }
}

int hx_gnuplot_find(hx_gnuplot *g) {
    memset(g, 0, sizeof *g);
    if (hx_find_on_path("gnuplot", g->path, sizeof g->path))
        return HX_OK;
    char *out = NULL;
    const char *const args[] = {"gnuplot", "-e", "set print '-'; print GPVAL_TERMINALS", NULL};
    int r = run_gnuplot(g->path, args, &out);
    if (r != 0) {
        fprintf(stderr, "forkscope: %s does not run (%s)\n", g->path, r < 0 ? strerror(errno) : "exit status");
        if (out)
            print_output("terminal list", "-", out);
        free(out);
        return HX_ETOOL;
    }
    g->raster = has_term(out, "pngcairo") ? "pngcairo" : has_term(out, "png") ? "png" : NULL;
    g->vector = has_term(out, "pdfcairo") ? "pdfcairo" : has_term(out, "svg") ? "svg" : NULL;
    free(out);
    if (!g->raster) {
        fprintf(stderr, "forkscope: gnuplot (%s) has neither the pngcairo nor the png terminal\n", g->path);
        return HX_ETOOL;
    }
    g->ok = 1;
    return HX_OK;
}

int hx_gnuplot_install_scripts(const char *dir) {
    char sdir[PATH_MAX], looked[PATH_MAX + 64];
    if (find_scripts(sdir, sizeof sdir, looked, sizeof looked)) {
        fprintf(stderr, "forkscope: the gnuplot scripts (plots/*.gp) are not found (looked in %s); set "
                        "FORKSCOPE_PLOTS to their directory\n",
                looked);
        return HX_ETOOL;
    }
    for (size_t i = 0; i < NSCRIPTS; i++) {
        char from[PATH_MAX], to[PATH_MAX];
        int rc = hx_path_join(from, sdir, script_names[i], "") || hx_path_join(to, dir, script_names[i], "") ? -ENAMETOOLONG
                                                                                          : copy_file(from, to);
        if (rc) {
            fprintf(stderr, "forkscope: cannot copy %s to %s: %s\n", from, to, strerror(-rc));
            return HX_EIO;
        }
    }
    return HX_OK;
}

int hx_gnuplot_draw(const hx_gnuplot *g, const char *dir, const char *figure, hx_drawn *drawn) {
    const char *terms[2] = {g->raster, g->vector};
    for (int t = 0; t < 2 && terms[t]; t++) {
        char script[PATH_MAX], tset[64], outfile[PATH_MAX], *out = NULL;
        snprintf(tset, sizeof tset, "term='%s'", terms[t]);
        const char *ext = !strcmp(terms[t], "pdfcairo") ? ".pdf" : !strcmp(terms[t], "svg") ? ".svg" : ".png";
        if (hx_path_join(script, dir, figure, ".gp") || hx_path_join(outfile, dir, figure, ext))
            return -ENAMETOOLONG;
        unlink(outfile); /* so that a stale figure cannot pass for a new one */
        const char *const args[] = {"gnuplot", "-e", tset, script, NULL};
        int r = run_gnuplot(g->path, args, &out);
        struct stat st;
        int made = !stat(outfile, &st) && st.st_size > 0;
        if (r != 0 || !made) {
            fprintf(stderr, "forkscope: gnuplot failed on %s (terminal %s): %s\n", script, terms[t],
                    r < 0 ? strerror(errno) : r ? "error" : "no output file");
            if (out)
                print_output(figure, terms[t], out);
            free(out);
            return HX_EINTERNAL;
        }
        if (out && *out) {
            print_output(figure, terms[t], out); /* warnings: shown, not fatal */
            drawn->warnings++;
        }
        free(out);
        if (drawn->n < HX_DRAWN_MAX)
            snprintf(drawn->files[drawn->n++], PATH_MAX, "%s", outfile);
    }
    return HX_OK;
}
