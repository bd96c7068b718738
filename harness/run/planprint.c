/* planprint.c — the plan printed (planprint.h): `forkscope run --dry-run`'s text, the power
 * of a paired comparison, and the one-distribution verdicts over earlier runs. */
#include "harness/run/planprint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/analyze/abtest.h"
#include "harness/analyze/modes.h"
#include "harness/analyze/stats.h"
#include "harness/config/command.h"
#include "harness/config/kernels.h"
#include "harness/config/variants.h"
#include "harness/run/progress.h"
#include "harness/util/util.h"

typedef hx_plan plan;
typedef hx_plan_cell cell;

/* ---- the plan, printed ------------------------------------------------------------------------ */

/* "process_reps" does not reach a command variant: its command runs once a process (no
 * within-process spread for modes.h).  One line naming those whose class (hx_config_variant_class)
 * asks for more than one repetition, if the config has any. */
void hx_plan_command_reps_note(FILE *out, const hx_config *cfg, const char *prefix) {
    size_t n = 0;
    unsigned preps = 0; /* the named variants' "process_reps"; 0 if they differ */
    for (size_t v = 0; v < cfg->nvariants; v++) {
        const hx_variant *var = &cfg->variants[v];
        unsigned p = cfg->preps[hx_config_variant_class(var)];
        if (var->kind != HX_VARIANT_COMMAND || p <= 1)
            continue;
        fprintf(out, "%s%s", n++ ? ", " : prefix, var->name);
        preps = n == 1 || p == preps ? p : 0;
    }
    if (!n)
        return;
    fprintf(out, ": command variant%s, run%s once a process (\"process_reps\" ", n > 1 ? "s" : "", n > 1 ? "" : "s");
    if (preps)
        fprintf(out, "%u ", preps);
    fputs("does not apply)\n", out);
}

/* The plan's repetition lines: processes per cell, warm-up and timed repetitions in each. */
static void print_reps(FILE *out, const hx_config *cfg) {
    fprintf(out, "Repetitions: serial %u, parallel %u, baseline %u; warm-up (in the same process) %u/%u/%u\n",
            cfg->reps[0], cfg->reps[1], cfg->reps[2], cfg->warmup[0], cfg->warmup[1], cfg->warmup[2]);
    fprintf(out, "Process reps (timed repetitions in each process; a run's time is their median): serial %u, "
                 "parallel %u, baseline %u\n",
            cfg->preps[0], cfg->preps[1], cfg->preps[2]);
    hx_plan_command_reps_note(out, cfg, "  ");
}

/* The kernels of cfg's benchmarks whose tasks block, "a, b" in buf; returns how many. */
static size_t blocking_kernels(const hx_config *cfg, char *buf, size_t len) {
    size_t nn = 0, at = 0;
    buf[0] = 0;
    for (size_t b = 0; b < cfg->nbenchmarks; b++) {
        const char *k = cfg->benchmarks[b].kernel;
        int seen = 0;
        for (size_t e = 0; e < b; e++)
            seen |= !strcmp(cfg->benchmarks[e].kernel, k);
        if (!hx_kernels_block(k) || seen)
            continue;
        int w = snprintf(buf + at, len - at, "%s%s", nn++ ? ", " : "", k);
        at = w > 0 && (size_t)w < len - at ? at + (size_t)w : len - 1; /* (cut short: nothing more fits) */
    }
    return nn;
}

void hx_plan_print(FILE *out, const hx_config *cfg, const hx_plan *p, const char *dir, size_t already_done,
                   int from_results) {
    fprintf(out, "Experiment %s (%s) -> %s\n", cfg->name, cfg->path, dir);
    fprintf(out, "Machine: %u online cores (P > %u is oversubscribed)\n", cfg->cores, cfg->cores);
    fprintf(out, "Workers:");
    for (size_t i = 0; i < cfg->nworkers; i++)
        fprintf(out, " %u%s", cfg->workers[i], cfg->workers[i] > cfg->cores ? "*" : "");
    fprintf(out, "%s\n", cfg->workers[cfg->nworkers - 1] > cfg->cores ? "   (* oversubscribed)" : "");
    if (cfg->ndropped) {
        fprintf(out, "Left out (oversubscribe is false, P > %u cores):", cfg->cores);
        for (size_t i = 0; i < cfg->ndropped; i++)
            fprintf(out, " %u", cfg->dropped[i]);
        fprintf(out, "\n");
    }
    print_reps(out, cfg);
    static const char *const orders[] = {"grouped", "interleaved", "shuffled", "paired"};
    fprintf(out, "Order: %s", orders[cfg->order]);
    if (cfg->order == HX_ORDER_SHUFFLED || cfg->order == HX_ORDER_PAIRED)
        fprintf(out, " (seed %llu)", cfg->seed);
    fprintf(out, "; time limit %s", cfg->time_limit_s > 0 ? "" : "none");
    if (cfg->time_limit_s > 0)
        fprintf(out, "%g s", cfg->time_limit_s);
    fprintf(out, "; memory limit ");
    if (cfg->memory_limit_mib)
        fprintf(out, "%llu MiB\n", cfg->memory_limit_mib);
    else
        fprintf(out, "none\n");
    if (cfg->npapi) {
        fprintf(out, "PAPI events (the drivers' --papi):");
        for (size_t i = 0; i < cfg->npapi; i++)
            fprintf(out, " %s", cfg->papi_events[i]);
        fprintf(out, "\n");
    }
    fprintf(out, "\n%-44s %5s %10s  %s\n", "cell (benchmark|variant|workers)", "runs", "est. s/run", "notes");
    double total = 0, todo = 0;
    size_t nover = 0;
    for (size_t i = 0; i < p->ncells; i++) {
        const cell *c = &p->cells[i];
        total += c->est_s * c->reps;
        todo += c->est_s * (c->reps - (c->done < c->reps ? c->done : c->reps));
        nover += c->oversub;
        char notes[96] = "";
        if (c->oversub)
            snprintf(notes, sizeof notes, "oversubscribed");
        if (c->done) {
            size_t u = strlen(notes);
            snprintf(notes + u, sizeof notes - u, "%s%u done", u ? ", " : "", c->done);
        }
        fprintf(out, "%-44s %5u %10.3f%s %s\n", c->id, c->reps, c->est_s, c->est_measured ? "m" : " ", notes);
    }
    size_t ncalib_runs = 0;
    for (size_t i = 0; i < p->ncalib; i++)
        ncalib_runs += p->cells[i].reps;
    fprintf(out, "\nCells: %zu (%zu timed, %zu calibrate)\n", p->ncells, p->ncells - p->ncalib, p->ncalib);
    if (p->nskipped_command)
        fprintf(out, "Skipped: %zu cells of command variants with no command for their kernel\n", p->nskipped_command);
    char left_out[600];
    if (cfg->nleft_out)
        fprintf(out, "Left out: the peers %s, not built (\"peers\" runs them once built: make peers PEERS_DIR=DIR)\n",
                hx_config_left_out_list(cfg, left_out, sizeof left_out));
    for (size_t b = 0; b < cfg->nbenchmarks; b++)
        if (!cfg->benchmarks[b].variants)
            fprintf(out, "Left out: benchmark %s, whose own \"variants\" names only peers that are not built\n",
                    cfg->benchmarks[b].name);
    if (p->nskipped_peer)
        fprintf(out, "Skipped: %zu cells of peers on kernels they have no version of (see `forkscope variants`)\n",
                p->nskipped_peer);
    if (p->nskipped_blocking) {
        char names[256];
        size_t nn = blocking_kernels(cfg, names, sizeof names);
        fprintf(out,
                "Skipped: %zu cells of kernel%s %s on variants whose tasks cannot block (%s on child-fiber-* "
                "and serial)\n",
                p->nskipped_blocking, nn > 1 ? "s" : "", names, nn > 1 ? "they run" : "it runs");
    }
    if (p->nskipped_serial)
        fprintf(out, "Skipped: %zu serial cells at P > 1 (the serial projection runs on 1 worker only)\n",
                p->nskipped_serial);
    fprintf(out, "Runs: %zu (%zu timed, %zu calibrate)%s", p->nruns, p->nruns - ncalib_runs, ncalib_runs,
            already_done ? "" : "\n");
    if (already_done)
        fprintf(out, "; %zu already in raw.jsonl, %zu to go\n", already_done, p->nruns - already_done);
    fprintf(out, "Oversubscribed cells: %zu\n", nover);
    char t1[32], t2[32];
    hx_progress_duration(total, t1, sizeof t1);
    hx_progress_duration(todo, t2, sizeof t2);
    fprintf(out, "Estimated time: %s%s%s%s\n", t1, already_done ? " in all, " : "", already_done ? t2 : "",
            already_done ? " to go" : "");
    fprintf(out, "  (%s)\n",
            from_results ? "cells marked m: median wall time of their earlier runs in raw.jsonl; others: the "
                           "built-in model"
                         : "built-in model: serial times measured on a 2-core Xeon VM, scaled by kernel size, a "
                           "per-variant overhead factor and ideal speedup up to the core count; rough (x2). "
                           "After a run, --dry-run -o DIR estimates from DIR/raw.jsonl");
}

/* ---- the power of a paired comparison ------------------------------------------------------------ */

/* For a paired or interleaved sweep: the rounds `forkscope compare` needs to detect a change
 * of `effect` in the noisiest benchmark cell, at the noise of the directory's earlier runs
 * (the standard deviation of log time_s per cell), or at an assumed CV. */
void hx_plan_print_power(FILE *out, const hx_config *cfg, const hx_plan *p, json_t *done, double effect, double cv) {
    effect = effect > 0 ? effect : 0.05;
    double sd = 0;
    const char *worst = NULL;
    size_t n = json_array_size(done);
    double *lt = hx_xmalloc((n + 1) * sizeof *lt);
    for (size_t i = p->ncalib; i < p->ncells; i++) {
        size_t k = 0;
        for (size_t j = 0; j < n; j++) {
            json_t *r = json_array_get(done, j);
            double t;
            if (!strcmp(hx_json_str(r, "cell_id", ""), p->cells[i].id) && !strcmp(hx_json_str(r, "status", ""), "ok") &&
                hx_json_number(r, "time_s", &t) == 1 && t > 0)
                lt[k++] = log(t);
        }
        double m = 0, q = 0;
        for (size_t j = 0; j < k; j++)
            m += lt[j] / (double)k;
        for (size_t j = 0; j < k; j++)
            q += (lt[j] - m) * (lt[j] - m);
        if (k >= 3 && sqrt(q / ((double)k - 1)) > sd) {
            sd = sqrt(q / ((double)k - 1));
            worst = p->cells[i].id;
        }
    }
    free(lt);
    const char *source = worst ? "measured" : "assumed";
    if (!worst)
        sd = cv > 0 ? cv : 0.03;
    /* the paired difference of two independent runs: sqrt(2) times one run's noise (pairing
     * in time removes what the runs share, so this is an upper bound) */
    size_t rounds = hx_ab_runs_needed(sqrt(2) * sd, effect, 0.05, 0.8, 1);
    unsigned have = cfg->reps[HX_CLASS_PARALLEL];
    fprintf(out, "\nPower (paired, Wilcoxon signed-rank, alpha 0.05, 80%%): to detect a %g%% change, about %zu rounds "
                 "(configured: %u)\n",
            100 * effect, rounds, have);
    if (worst)
        fprintf(out, "  noise %s in the earlier runs: CV %.1f%% in the noisiest cell, %s\n", source, 100 * sd, worst);
    else
        fprintf(out, "  noise %s: CV %.1f%% (no earlier runs here; --cv sets it, or run once and dry-run -o DIR)\n",
                source, 100 * sd);
    fprintf(out, "  compare's verdict also needs the whole interval beyond the noise band: aim for an effect\n"
                 "  well above it, or more rounds\n");
}

/* ---- is each cell one distribution ------------------------------------------------------------ */

/* The earlier runs of the planned timed cell with id `id` judged by modes.h (time_s, and the
 * driver's "times" as the process's repetitions). */
static void judge_cell(json_t *done, const char *id, hx_modes *m) {
    size_t n = json_array_size(done), k = 0;
    double *t = hx_xmalloc((n + 1) * sizeof *t), **rep = hx_xmalloc((n + 1) * sizeof *rep);
    size_t *nrep = hx_xmalloc((n + 1) * sizeof *nrep);
    for (size_t j = 0; j < n; j++) {
        json_t *r = json_array_get(done, j);
        if (strcmp(hx_json_str(r, "cell_id", ""), id) || strcmp(hx_json_str(r, "status", ""), "ok") ||
            hx_json_number(r, "time_s", &t[k]) != 1)
            continue;
        nrep[k] = hx_stats_read_reps(r, &rep[k]);
        k++;
    }
    hx_modes_judge(t, k, nrep, rep, m);
    for (size_t j = 0; j < k; j++)
        free(rep[j]);
    free(t);
    free(rep);
    free(nrep);
}

/* For a dry run over earlier results: how many cells are not one distribution (modes.h), and
 * which; nothing if there are no earlier runs. */
void hx_plan_print_modes(FILE *out, const hx_plan *p, json_t *done) {
    if (!json_array_size(done))
        return;
    size_t count[HX_MODES_N] = {0}, shown = 0;
    char why[256];
    for (size_t i = p->ncalib; i < p->ncells; i++) {
        hx_modes m;
        judge_cell(done, p->cells[i].id, &m);
        count[m.verdict]++;
        if (hx_modes_flagged(m.verdict) && shown++ < 20)
            fprintf(out, "%s  %s: %s: %s\n", shown == 1 ? "\nNot one distribution in the earlier runs:\n" : "",
                    p->cells[i].id, hx_modes_name(m.verdict), hx_modes_describe(&m, why, sizeof why));
    }
    if (shown > 20)
        fprintf(out, "  ... and %zu more\n", shown - 20);
    fprintf(out,
            "%sOne distribution per cell (earlier runs): %zu flagged (%zu between-process, %zu bimodal), %zu ok, "
            "%zu with too few runs to tell (fewer than %d), %zu without a successful run\n",
            shown ? "" : "\n", count[HX_MODES_BETWEEN] + count[HX_MODES_BIMODAL], count[HX_MODES_BETWEEN],
            count[HX_MODES_BIMODAL], count[HX_MODES_OK], count[HX_MODES_TOO_FEW], HX_MODES_MIN_RUNS,
            count[HX_MODES_NONE]);
}

