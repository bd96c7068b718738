/* breakdown.c — report.md's "Where the time goes": the config's "breakdown" cells, each
 * worker's time split as the runtime accounted for it (summary.csv's work_s ... sleep_s, promote_s). */
#include "harness/report/breakdown.h"

#include <math.h>
#include <string.h>

/* Idle: the time a worker had nothing to run (search, sleep, a native join's wait);
 * overhead: the scheduler's own work (steal, join, fiber switching, promotion). */
static double idle_of(const hx_cell *c) { return c->bd[HX_BD_SEARCH] + c->bd[HX_BD_SLEEP] + c->bd[HX_BD_WAIT]; }
static double overhead_of(const hx_cell *c) { /* (promote: NAN in a summary.csv from before 0.24) */
    return c->bd[HX_BD_STEAL] + c->bd[HX_BD_JOIN] + c->bd[HX_BD_FIBER] +
           (isfinite(c->bd[HX_BD_PROMOTE]) ? c->bd[HX_BD_PROMOTE] : 0);
}

int hx_breakdown_has(const hx_summary *s, const char *bench) {
    for (size_t i = 0; i < s->ncells; i++)
        if ((!bench || !strcmp(s->cells[i].benchmark, bench)) && isfinite(s->cells[i].bd[HX_BD_WALL]))
            return 1;
    return 0;
}

static void pct(FILE *f, double part, double wall) {
    if (isfinite(part) && wall > 0)
        fprintf(f, " %.1f |", 100 * part / wall);
    else
        fputs(" — |", f);
}

static void ratio(FILE *f, double v) {
    if (isfinite(v))
        fprintf(f, " %.2f |", v);
    else
        fputs(" — |", f);
}

static void write_bench(FILE *f, const hx_summary *s, const hx_bench_info *b) {
    fprintf(f, "### %s (%s%s%s)\n\n", b->name, b->kernel, *b->params ? ", " : "", b->params);
    fputs("| variant | P | T_P (s) | work | search | steal | join | wait | fiber | sleep | promote | idle | overhead "
          "| work / T_s | work / T_1 | promotions / s | τ (ns) |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
          f);
    for (size_t i = 0; i < s->ncells; i++) {
        const hx_cell *c = &s->cells[i];
        if (strcmp(c->benchmark, b->name) || c->n_ok == 0)
            continue;
        double w = c->bd[HX_BD_WALL];
        fprintf(f, "| %s | %ld%s | %.4g |", c->variant, c->workers, c->oversubscribed ? "*" : "", c->time_median);
        for (int k = 0; k < HX_BD_WALL; k++)
            pct(f, c->bd[k], w);
        pct(f, idle_of(c), w);
        pct(f, overhead_of(c), w);
        ratio(f, c->inflation_ts);
        ratio(f, c->inflation_t1);
        if (isfinite(c->promotions_per_s))
            fprintf(f, " %.0f |", c->promotions_per_s);
        else
            fputs(" — |", f);
        if (isfinite(c->promotion_ns))
            fprintf(f, " %.0f |", c->promotion_ns);
        else
            fputs(" — |", f);
        fputc('\n', f);
    }
    fputc('\n', f);
}

void hx_breakdown_write_md(FILE *f, const hx_summary *s) {
    if (!hx_breakdown_has(s, NULL))
        return;
    fputs("## Where the time goes\n\n"
          "For the benchmarks the config's \"breakdown\" names, each runtime variant's workers accounted for "
          "their time (the drivers' `--account times`): per repetition, summed over the P workers (their wall "
          "time, about P × T_P), the share of each part, in %. **work**: running task code, the fork/join fast "
          "path included; **search**: failed steal attempts and backoff; **steal**: successful steals up to the "
          "stolen work; **join**: join slow paths (arriving at a join, a fork whose continuation was stolen, "
          "resuming a parent); **wait**: a native join waiting between leaps; **fiber**: parking and switching "
          "fibers; **sleep**: lazy workers asleep; **promote**: making private forks stealable (the owner "
          "publishing when a thief's request or a heartbeat's mark asks, and taking back slots it had "
          "published). **idle** = search + wait + sleep, **overhead** = steal + join + fiber + promote. **work / T_s** is the work inflation (Olivier et al., SC'12): the summed work at P over the "
          "serial projection's time (above 1: the same work takes longer in parallel, or the runtime's fast "
          "path costs); **work / T_1** the same against the variant's own time on one worker. **promotions / s**: "
          "publications of private forks per second (a thief's request answered, a heartbeat's promotion, on "
          "cont-* a stolen frame publishing its own forks; the drivers' statistics, forced publications not "
          "counted); **τ**: promote time per publication, the cost of one promotion (the heartbeat papers' τ; "
          "under thief promotion, or half a deque a beat, one publication may be several forks), clock reads "
          "included. Baselines (serial, "
          "OpenMP, TBB, peers) do not account; their T_P is there for reference. A worker the OS descheduled "
          "(more workers than cores, marked *) counts that time in the part it was in.\n\n",
          f);
    for (size_t b = 0; b < s->nbenches; b++)
        if (hx_breakdown_has(s, s->benches[b].name))
            write_bench(f, s, &s->benches[b]);
}

/* ---- the figure's data (plots/breakdown.gp) ---------------------------------------------------- */

static void put_quoted(FILE *f, const char *s) { /* a gnuplot data string: "..." without quotes inside */
    fputc('"', f);
    for (; *s; s++)
        fputc(*s == '"' ? '\'' : *s, f);
    fputc('"', f);
}

int hx_breakdown_write_plot(const char *pdir, const hx_summary *s) {
    char path[4200];
    snprintf(path, sizeof path, "%s/breakdown.dat", pdir);
    FILE *d = fopen(path, "w");
    snprintf(path, sizeof path, "%s/breakdown-settings.gp", pdir);
    FILE *g = d ? fopen(path, "w") : NULL;
    if (!g) {
        if (d)
            fclose(d);
        return -1;
    }
    fputs("# breakdown.dat — written by `forkscope plot` from ../summary.csv: where the workers' time went\n"
          "# (the config's \"breakdown\"), per benchmark (one block each, gnuplot index from 0) and cell\n"
          "# (variant, P): % of the workers' summed wall time.\n"
          "# columns: cell work search steal join wait fiber sleep promote T_P_s\n",
          d);
    fputs("# breakdown-settings.gp — written by `forkscope plot`: the panels of breakdown.dat.\n", g);
    size_t np = 0, maxrows = 0;
    for (size_t b = 0; b < s->nbenches; b++) {
        const char *bn = s->benches[b].name;
        if (!hx_breakdown_has(s, bn))
            continue;
        size_t rows = 0;
        if (np)
            fputs("\n\n", d);
        for (size_t i = 0; i < s->ncells; i++) {
            const hx_cell *c = &s->cells[i];
            double w = c->bd[HX_BD_WALL];
            if (strcmp(c->benchmark, bn) || !isfinite(w) || w <= 0)
                continue;
            char label[160];
            snprintf(label, sizeof label, "%s P=%ld%s", c->variant, c->workers, c->oversubscribed ? "*" : "");
            put_quoted(d, label);
            for (int k = 0; k < HX_BD_WALL; k++)
                fprintf(d, " %.4f", isfinite(c->bd[k]) ? 100 * c->bd[k] / w : 0.0);
            fprintf(d, " %.6g\n", c->time_median);
            rows++;
        }
        np++;
        maxrows = rows > maxrows ? rows : maxrows;
        fprintf(g, "bd_title_%zu = ", np);
        put_quoted(g, s->benches[b].name);
        fputc('\n', g);
    }
    fprintf(g, "bd_npanels = %zu\nbd_maxrows = %zu\n", np, maxrows);
    int bad = ferror(d) | ferror(g);
    bad |= fclose(d) | fclose(g);
    return bad ? -1 : (int)np;
}
