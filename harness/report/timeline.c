/* timeline.c — `forkscope plot TRACE.json`: the timeline of a trace (forkscope trace, the
 * drivers' --trace) as a figure for a report, one row per worker coloured by what it did, each
 * steal a line from the victim's row to the thief's: what Perfetto shows, in a PDF. */
#include "harness/report/timeline.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness/analyze/stats.h"
#include "harness/report/gnuplot.h"
#include "harness/util/errors.h"
#include "harness/util/util.h"

/* A span's category as the figure's colour index (plots/timeline.gp: hx_bd_names' order). */
static int cat_index(const char *c) {
    for (int k = 0; c && k < HX_BD_WALL; k++)
        if (!strcmp(c, hx_bd_names[k]))
            return k + 1;
    return 0;
}

/* s into a gnuplot string ("..."): quotes and backslashes escaped. */
static void put_gp_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
    fputc('"', f);
}

/* The trace's spans into timeline.dat (worker start_ms end_ms category), its steals into
 * steals.dat (time_ms victim thief) and its promotions into promotes.dat (time_ms worker
 * slots); *workers, *end_ms: the rows and the time axis. */
static int write_data(const char *out, json_t *evs, long *workers, double *end_ms, size_t *nspans, size_t *nsteals,
                      size_t *npromotes) {
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/timeline.dat", out);
    FILE *d = fopen(path, "w");
    snprintf(path, sizeof path, "%s/steals.dat", out);
    FILE *s = d ? fopen(path, "w") : NULL;
    snprintf(path, sizeof path, "%s/promotes.dat", out);
    FILE *pr = s ? fopen(path, "w") : NULL;
    if (!pr) {
        int e = errno;
        if (s)
            fclose(s);
        if (d)
            fclose(d);
        return -e;
    }
    fputs("# promotes.dat — written by `forkscope plot` from a trace: time_ms worker slots (a request answered, a "
          "thief's or a heartbeat's)\n", pr);
    fputs("# timeline.dat — written by `forkscope plot` from a trace: one span per line\n# worker start_ms end_ms "
          "category(1 work, 2 search, 3 steal, 4 join, 5 wait, 6 fiber, 7 sleep, 8 promote)\n", d);
    fputs("# steals.dat — written by `forkscope plot` from a trace: time_ms victim thief\n", s);
    json_t *starts = json_object();
    size_t k;
    json_t *e;
    *workers = 0;
    *end_ms = 0;
    *nspans = *nsteals = *npromotes = 0;
    json_array_foreach(evs, k, e) {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        json_t *tid = json_object_get(e, "tid");
        if (!ph || !json_is_integer(tid))
            continue;
        long w = (long)json_integer_value(tid);
        double ts = json_number_value(json_object_get(e, "ts")) / 1e3;
        *workers = w + 1 > *workers ? w + 1 : *workers;
        if (!strcmp(ph, "i")) {
            if (!strcmp(json_string_value(json_object_get(e, "name")) ? json_string_value(json_object_get(e, "name")) : "",
                        "promote")) {
                fprintf(pr, "%.6f %ld %lld\n", ts, w,
                        (long long)json_integer_value(json_object_get(json_object_get(e, "args"), "slots")));
                ++*npromotes;
            }
        } else if (!strcmp(ph, "X")) {
            int c = cat_index(json_string_value(json_object_get(e, "cat")));
            double end = ts + json_number_value(json_object_get(e, "dur")) / 1e3;
            if (!c)
                continue;
            fprintf(d, "%ld %.6f %.6f %d\n", w, ts, end, c);
            *end_ms = end > *end_ms ? end : *end_ms;
            ++*nspans;
        } else if ((!strcmp(ph, "s") || !strcmp(ph, "f")) && !strcmp(json_string_value(json_object_get(e, "cat")) ? json_string_value(json_object_get(e, "cat")) : "", "steal")) {
            /* (steals only: a native join's leaps are not drawn) */
            char id[32];
            snprintf(id, sizeof id, "%lld", (long long)json_integer_value(json_object_get(e, "id")));
            json_t *other = json_object_get(starts, id);
            if (!other) {
                json_object_set_new(starts, id, json_pack("{s:s, s:I, s:f}", "ph", ph, "w", (json_int_t)w, "t", ts));
                continue;
            }
            long ow = (long)json_integer_value(json_object_get(other, "w"));
            int this_start = !strcmp(ph, "s");
            fprintf(s, "%.6f %ld %ld\n", ts, this_start ? w : ow, this_start ? ow : w);
            json_object_del(starts, id);
            ++*nsteals;
        }
    }
    json_decref(starts);
    int bad = ferror(d) | ferror(s) | ferror(pr);
    bad |= fclose(d) | fclose(s) | fclose(pr);
    return bad ? -EIO : 0;
}

int hx_timeline_plot(const char *trace) {
    json_error_t jerr;
    json_t *doc = json_load_file(trace, 0, &jerr);
    json_t *evs = doc ? json_object_get(doc, "traceEvents") : NULL;
    if (!json_is_array(evs)) {
        fprintf(stderr, "forkscope plot: %s is not a trace (a Chrome trace JSON with \"traceEvents\"%s%s)\n", trace,
                doc ? "" : ": ", doc ? "" : jerr.text);
        json_decref(doc);
        return HX_EUSAGE;
    }
    char out[PATH_MAX];
    size_t len = strlen(trace);
    int n = snprintf(out, sizeof out, "%.*s-timeline", (int)(len > 5 && !strcmp(trace + len - 5, ".json") ? len - 5 : len),
                     trace);
    if (n < 0 || (size_t)n >= sizeof out - 64) {
        json_decref(doc);
        return HX_EUSAGE;
    }
    if (mkdir(out, 0777) && errno != EEXIST) {
        fprintf(stderr, "forkscope plot: cannot create %s: %s\n", out, strerror(errno));
        json_decref(doc);
        return HX_EIO;
    }
    long workers = 0;
    double end_ms = 0;
    size_t nspans = 0, nsteals = 0, npromotes = 0;
    int rc = write_data(out, evs, &workers, &end_ms, &nspans, &nsteals, &npromotes);
    json_t *od = json_object_get(doc, "otherData");
    char title[512];
    snprintf(title, sizeof title, "%s on %s, %ld workers (%s scheduler)",
             json_string_value(json_object_get(od, "kernel")) ? json_string_value(json_object_get(od, "kernel")) : "?",
             json_string_value(json_object_get(od, "variant")) ? json_string_value(json_object_get(od, "variant")) : "?",
             workers, json_string_value(json_object_get(od, "sched")) ? json_string_value(json_object_get(od, "sched")) : "?");
    json_int_t dropped = json_integer_value(json_object_get(od, "dropped"));
    json_decref(doc);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/timeline-settings.gp", out);
    FILE *g = rc ? NULL : fopen(path, "w");
    if (!g) {
        fprintf(stderr, "forkscope plot: cannot write into %s: %s\n", out, strerror(rc ? -rc : errno));
        return HX_EIO;
    }
    hx_gnuplot gp;
    int gst = hx_gnuplot_find(&gp);
    fprintf(g, "# timeline-settings.gp — written by `forkscope plot %s`\n", trace);
    fputs("tl_title = ", g);
    put_gp_string(g, title);
    fprintf(g, "\ntl_workers = %ld\ntl_end_ms = %.6f\ntl_steals = %zu\ntl_promotes = %zu\n", workers, end_ms, nsteals,
            npromotes);
    fprintf(g, "tl_note = \"%s\"\n", dropped ? "the trace lacks events: its workers' logs were full" : "");
    fprintf(g, "if (!exists(\"term\")) term = '%s'\n", gp.raster ? gp.raster : "pngcairo");
    if (fclose(g))
        return HX_EIO;
    if (gst)
        return gst;
    if (!gp.ok) {
        fprintf(stderr, "forkscope plot: gnuplot is not on PATH: %s/timeline.dat is written, the figure is not drawn\n",
                out);
        return HX_ETOOL;
    }
    if ((rc = hx_gnuplot_install_scripts(out)))
        return rc;
    hx_drawn drawn = {0};
    rc = hx_gnuplot_draw(&gp, out, "timeline", &drawn);
    if (rc)
        return rc == -ENAMETOOLONG ? HX_EUSAGE : rc;
    printf("forkscope plot: the timeline of %s (%zu spans, %zu steals, %zu promotions, %ld workers):\n", trace, nspans,
           nsteals, npromotes, workers);
    for (int i = 0; i < drawn.n; i++)
        printf("  %s\n", drawn.files[i]);
    printf("  redraw by hand: gnuplot %s/timeline.gp\n", out);
    return HX_OK;
}
