/* progress.c — the live progress line and the per-cell log lines. */
#include "harness/run/progress.h"
#include "harness/util/util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct hx_progress {
    FILE *out;
    int live;
    size_t cells, runs, cells_done, runs_done, runs_at_start;
    double t0, run_t0;
    char current[160];
    int line_shown;
};

void hx_progress_duration(double s, char *buf, size_t len) {
    if (s < 0)
        s = 0;
    if (s < 60)
        snprintf(buf, len, "%.1f s", s);
    else if (s < 3600)
        snprintf(buf, len, "%d min %02d s", (int)(s / 60), (int)s % 60);
    else
        snprintf(buf, len, "%d h %02d min", (int)(s / 3600), ((int)s % 3600) / 60);
}

hx_progress *hx_progress_new(FILE *out, int live, size_t cells, size_t runs, size_t cells_done, size_t runs_done) {
    hx_progress *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->out = out;
    p->live = live < 0 ? isatty(fileno(out)) : live;
    p->cells = cells;
    p->runs = runs;
    p->cells_done = cells_done;
    p->runs_done = p->runs_at_start = runs_done;
    p->t0 = hx_now();
    return p;
}

static void clear_line(hx_progress *p) {
    if (p->live && p->line_shown) {
        fputs("\r\033[K", p->out);
        p->line_shown = 0;
    }
}

static void show(hx_progress *p) {
    if (!p->live)
        return;
    double now = hx_now(), el = now - p->t0;
    size_t done_here = p->runs_done - p->runs_at_start;
    char e[32], eta[32] = "?";
    hx_progress_duration(el, e, sizeof e);
    if (done_here)
        hx_progress_duration(el / (double)done_here * (double)(p->runs - p->runs_done), eta, sizeof eta);
    char r[64] = "";
    if (p->run_t0 > 0 && now - p->run_t0 >= 1) { /* a run that takes a while: say so */
        char d[32];
        hx_progress_duration(now - p->run_t0, d, sizeof d);
        snprintf(r, sizeof r, " (this run %s)", d);
    }
    fprintf(p->out, "\r\033[Kcells %zu/%zu  runs %zu/%zu  %s%s  elapsed %s  ETA %s", p->cells_done, p->cells,
            p->runs_done, p->runs, p->current, r, e, eta);
    fflush(p->out);
    p->line_shown = 1;
}

void hx_progress_run_start(hx_progress *p, const char *cell) {
    if (!p)
        return;
    snprintf(p->current, sizeof p->current, "%s", cell);
    p->run_t0 = hx_now();
    show(p);
}

void hx_progress_run_done(hx_progress *p) {
    if (!p)
        return;
    p->runs_done++;
    p->run_t0 = 0;
    show(p);
}

void hx_progress_tick(void *arg) {
    hx_progress *p = arg;
    if (p && p->live && p->run_t0 > 0)
        show(p);
}

void hx_progress_cell_done(hx_progress *p, const char *cell, unsigned n_ok, unsigned n_failed, double median_s,
                           const char *failures) {
    if (!p)
        return;
    p->cells_done++;
    if (p->live) {
        if (n_failed) {
            clear_line(p);
            fprintf(p->out, "%s: %u ok, %u failed (%s)\n", cell, n_ok, n_failed, failures);
        }
        show(p);
        return;
    }
    char med[48] = "no successful run";
    if (median_s >= 0)
        snprintf(med, sizeof med, "median %.4g s", median_s);
    fprintf(p->out, "[%zu/%zu cells, %zu/%zu runs] %s: %u ok, %s%s%u failed%s%s%s\n", p->cells_done, p->cells,
            p->runs_done, p->runs, cell, n_ok, med, ", ", n_failed, n_failed ? " (" : "", n_failed ? failures : "",
            n_failed ? ")" : "");
    fflush(p->out);
}

void hx_progress_note(hx_progress *p, const char *fmt, ...) {
    FILE *out = p ? p->out : stderr;
    if (p)
        clear_line(p);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
    fputc('\n', out);
    if (p)
        show(p);
    fflush(out);
}

void hx_progress_finish(hx_progress *p) {
    if (!p)
        return;
    if (p->live && p->line_shown)
        fputc('\n', p->out);
    fflush(p->out);
    free(p);
}
