/* slurm.c — `forkscope slurm`: a sweep as a SLURM job array (see slurm.h). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness/cli/cli.h"
#include "harness/report/analysis.h"
#include "harness/run/envinfo.h"
#include "harness/config/config.h"
#include "harness/util/errors.h"
#include "harness/run/launch.h"
#include "harness/run/icount.h"
#include "harness/cluster/slurm.h"
#include "harness/run/span.h"
#include "harness/run/records.h"
#include "harness/run/sweep.h"
#include "harness/util/util.h"

#define MANIFEST_SCHEMA 1

static int usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "forkscope slurm: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (try forkscope slurm --help)\n");
    va_end(ap);
    return HX_EUSAGE;
}

static void help(FILE *out) {
    fprintf(out,
            "usage: forkscope slurm COMMAND ...\n"
            "  submit CONFIG [-o DIR] [--shards N] [--max-parallel K] [--partition P] [--time T]\n"
            "         [--cores C] [--sbatch-arg ARG]... [--no-submit]\n"
            "        Plans the sweep for nodes of C cores (default: this machine's), groups its cells\n"
            "        into families (a benchmark at one P, all variants; the calibrate cells at one P),\n"
            "        spreads the families over N shards (default: up to 16) by estimated time, writes\n"
            "        DIR/config.json, DIR/slurm/manifest.json and DIR/slurm/job.sbatch (an array of N\n"
            "        tasks, at most K running, each on a whole node) and submits it with sbatch\n"
            "        (--no-submit: only writes them).  DIR must be on a file system the nodes share.\n"
            "  run-shard DIR K\n"
            "        What array task K runs: shard K's runs into DIR/shards/K/ (skipping those recorded).\n"
            "  status DIR     each shard's recorded runs against its plan, and SLURM's view (squeue).\n"
            "  resubmit DIR   submits the shards that miss runs and are not queued or running.\n"
            "  merge DIR      DIR/raw.jsonl and env.json from the shards (duplicates dropped; a cell\n"
            "                 whose runs come from nodes of different CPU models is refused), then\n"
            "                 `fit` and `plot` DIR.\n");
}

/* ---- small helpers ------------------------------------------------------------------------- */

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static char *manifest_path(const char *dir) {
    char *p;
    if (asprintf(&p, "%s/slurm/manifest.json", dir) < 0)
        abort();
    return p;
}

static json_t *manifest_read(const char *dir) {
    char *path = manifest_path(dir);
    json_error_t e;
    json_t *m = json_load_file(path, 0, &e);
    if (!m)
        fprintf(stderr, "forkscope slurm: %s: %s (is %s a sweep made by `forkscope slurm submit`?)\n", path, e.text,
                dir);
    else if (json_integer_value(json_object_get(m, "schema")) != MANIFEST_SCHEMA ||
             !json_is_array(json_object_get(m, "shards"))) {
        fprintf(stderr, "forkscope slurm: %s: not a manifest of this forkscope (schema %d expected)\n", path,
                MANIFEST_SCHEMA);
        json_decref(m);
        m = NULL;
    }
    free(path);
    return m;
}

static int manifest_write(const char *dir, json_t *m) {
    char *path = manifest_path(dir), *text = json_dumps(m, JSON_INDENT(2));
    int rc = hx_write_atomic(path, text, strlen(text));
    if (rc)
        fprintf(stderr, "forkscope slurm: cannot write %s: %s\n", path, strerror(-rc));
    free(path);
    free(text);
    return rc ? HX_EIO : HX_OK;
}

/* A shard's raw.jsonl, read without touching it (a task may be appending to it): its
 * complete records; an empty array if there is none yet, NULL if it cannot be read. */
static json_t *shard_records(const char *dir, size_t k) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/shards/%zu/raw.jsonl", dir, k);
    int why;
    return hx_records_read_raw(path, 0, &why);
}

/* What SLURM says of each array task of the manifest's jobs, the latest job with the task
 * winning: {"K": STATE}.  ended 0: squeue's queued and running tasks (*why: why SLURM could
 * not be asked, or NULL); ended 1: sacct's final states where accounting is on (else empty). */
static json_t *slurm_tasks(json_t *m, int ended, const char **why) {
    json_t *st = json_object();
    if (why)
        *why = NULL;
    size_t i;
    json_t *job;
    json_array_foreach(json_object_get(m, "jobs"), i, job) {
        const char *id = json_string_value(json_object_get(job, "id"));
        if (!id)
            continue;
        const char *sq[] = {"squeue", "-h", "-r", "-j", id, "-o", "%K %T", NULL},
                   *sa[] = {"sacct", "-n", "-P", "-X", "-j", id, "-o", "JobID,State", NULL};
        char *out;
        int rc = hx_capture(ended ? sa : sq, 2, &out); /* (sacct complains where accounting is off) */
        if (rc < 0 && why)
            *why = ended ? "sacct not found" : "squeue not found";
        for (char *line = rc == 0 ? out : NULL; line && *line;
             line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
            char task[32], state[64];
            if (ended ? sscanf(line, "%*[0-9]_%31[0-9]|%63[^\n ]", task, state) == 2
                      : sscanf(line, "%31s %63s", task, state) == 2)
                json_object_set_new(st, task, json_string(state));
        }
        free(out);
    }
    return st;
}

/* ---- submit --------------------------------------------------------------------------------- */

typedef struct family {
    char key[96];
    double est;
    size_t *cells, ncells;
    size_t shard;
} family;

static int cmp_family(const void *a, const void *b) {
    const family *x = a, *y = b;
    return x->est < y->est ? 1 : x->est > y->est ? -1 : strcmp(x->key, y->key);
}

/* Refuses a path the job script could not quote safely. */
static int shell_safe(const char *s) { return !strpbrk(s, "\"$`\\\n"); }

static int write_script(const char *dir, const char *exe, const hx_config *cfg, size_t nshards, unsigned maxpar,
                        unsigned cpus, const char *partition, const char *timelimit, char **extra, size_t nextra) {
    char path[PATH_MAX + 32], tmp[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/slurm/job.sbatch", dir);
    FILE *f = hx_atomic_open(path, tmp, sizeof tmp);
    if (!f) {
        fprintf(stderr, "forkscope slurm: cannot write %s: %s\n", path, strerror(errno));
        return HX_EIO;
    }
    fprintf(f, "#!/bin/bash\n# forkscope slurm submit: %s, %zu shards (forkscope slurm --help)\n", cfg->name, nshards);
    fprintf(f, "#SBATCH --job-name=forkscope-%s\n", cfg->name);
    fprintf(f, "#SBATCH --array=0-%zu", nshards - 1);
    if (maxpar)
        fprintf(f, "%%%u", maxpar);
    fprintf(f, "\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --exclusive\n#SBATCH --cpus-per-task=%u\n", cpus);
    fprintf(f, "#SBATCH --output=%s/slurm/out/%%A_%%a.out\n", dir);
    if (partition)
        fprintf(f, "#SBATCH --partition=%s\n", partition);
    if (timelimit)
        fprintf(f, "#SBATCH --time=%s\n", timelimit);
    for (size_t i = 0; i < nextra; i++)
        fprintf(f, "#SBATCH %s\n", extra[i]);
    fprintf(f, "exec \"%s\" slurm run-shard \"%s\" \"$SLURM_ARRAY_TASK_ID\"\n", exe, dir);
    int rc = hx_atomic_commit(f, tmp, path);
    if (rc) {
        fprintf(stderr, "forkscope slurm: cannot write %s: %s\n", path, strerror(-rc));
        return HX_EIO;
    }
    chmod(path, 0755);
    return HX_OK;
}

/* sbatch --parsable [--array=SPEC] DIR/slurm/job.sbatch; records the job in the manifest. */
static int sbatch(const char *dir, json_t *m, const char *array) {
    char script[PATH_MAX + 32], arr[600];
    snprintf(script, sizeof script, "%s/slurm/job.sbatch", dir);
    snprintf(arr, sizeof arr, "--array=%s", array ? array : "");
    const char *argv[] = {"sbatch", "--parsable", array ? arr : script, array ? script : NULL, NULL};
    char *out;
    int rc = hx_capture(argv, 0, &out); /* (its messages go to our stderr) */
    if (rc != 0) {
        fprintf(stderr, "forkscope slurm: sbatch %s\n", rc < 0 ? "not found (is SLURM installed here?)" : "failed");
        free(out);
        return HX_ETOOL;
    }
    char id[64] = "";
    sscanf(out, "%63[0-9]", id);
    free(out);
    char date[32];
    hx_iso_time(hx_wall_time(), date, sizeof date);
    json_array_append_new(json_object_get(m, "jobs"),
                          json_pack("{s:s, s:s, s:s}", "id", id, "array", array ? array : "all", "date", date));
    printf("forkscope slurm: submitted job %s (array %s); follow it with: forkscope slurm status %s\n", id,
           array ? array : "all", dir);
    return HX_OK;
}

static int cmd_submit(int argc, char **argv) {
    const char *config = NULL, *outdir = NULL, *partition = NULL, *timelimit = NULL;
    unsigned long shards = 0, maxpar = 0, cores = 0;
    int no_submit = 0;
    char **extra = hx_xcalloc((size_t)argc + 1, sizeof *extra);
    size_t nextra = 0;
    int rc = HX_OK;
    for (int i = 1; i < argc && rc == HX_OK; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-submit")) {
            no_submit = 1;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--partition") || !strcmp(a, "--time") ||
                   !strcmp(a, "--sbatch-arg") || !strcmp(a, "--shards") || !strcmp(a, "--max-parallel") ||
                   !strcmp(a, "--cores")) {
            if (!val) {
                rc = usage("submit: option %s needs a value", a);
                break;
            }
            i++;
            char *end;
            unsigned long x = strtoul(val, &end, 10);
            int num = *val && !*end && x >= 1 && x <= 100000;
            if (!strcmp(a, "-o"))
                outdir = val;
            else if (!strcmp(a, "--partition"))
                partition = val;
            else if (!strcmp(a, "--time"))
                timelimit = val;
            else if (!strcmp(a, "--sbatch-arg"))
                extra[nextra++] = (char *)val;
            else if (!num)
                rc = usage("submit: option %s: '%s' is not a whole number in 1..100000", a, val);
            else
                *(!strcmp(a, "--shards") ? &shards : !strcmp(a, "--cores") ? &cores : &maxpar) = x;
        } else if (a[0] == '-') {
            rc = usage("submit: unknown option '%s'", a);
        } else if (config) {
            rc = usage("submit: more than one CONFIG given ('%s')", a);
        } else {
            config = a;
        }
    }
    if (rc == HX_OK && !config)
        rc = usage("submit: no CONFIG given");
    for (const char *const *s = (const char *const[]){partition, timelimit, NULL}; rc == HX_OK && *s; s++)
        if (!shell_safe(*s))
            rc = usage("submit: '%s' contains characters the job script cannot hold", *s);
    if (rc) {
        free(extra);
        return rc;
    }
    hx_config cfg;
    hx_diag d = {0};
    rc = hx_config_load(config, cores ? (unsigned)cores : hx_online_cores(), &cfg, &d);
    if (rc) {
        hx_diag_print(&d, stderr);
        fprintf(stderr, "forkscope slurm: %s: nothing was submitted\n", config);
        hx_diag_free(&d);
        free(extra);
        return rc;
    }
    hx_diag_free(&d);
    char dir[PATH_MAX], exe[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", outdir ? outdir : "");
    if (!outdir)
        snprintf(dir, sizeof dir, "results/%s", cfg.name);
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    hx_plan pl = {0};
    family *fam = NULL;
    json_t *m = NULL;
    char *mpath = NULL, real[PATH_MAX];
    size_t nfam = 0;
    if (hx_mkdir_p(dir) || !realpath(dir, real)) {
        fprintf(stderr, "forkscope slurm: cannot create %s: %s\n", dir, strerror(errno));
        rc = HX_EIO;
        goto out;
    }
    snprintf(dir, sizeof dir, "%s", real);
    if (!shell_safe(dir) || !shell_safe(exe)) {
        rc = usage("submit: the paths %s and %s must not hold quotes, $, ` or \\", dir, exe);
        goto out;
    }
    mpath = manifest_path(dir);
    char raw[PATH_MAX + 16];
    snprintf(raw, sizeof raw, "%s/raw.jsonl", dir);
    if (exists(mpath) || exists(raw)) {
        fprintf(stderr,
                "forkscope slurm: %s already holds a sweep: follow it with `forkscope slurm status %s` (and resubmit, "
                "merge), or choose another directory with -o\n",
                dir, dir);
        rc = HX_EUSAGE;
        goto out;
    }
    if (hx_plan_build(&cfg, &pl)) {
        rc = HX_EINTERNAL;
        goto out;
    }
    if (!pl.nruns) {
        fprintf(stderr, "forkscope slurm: %s plans no runs: nothing to submit\n", config);
        rc = HX_ECONFIG;
        goto out;
    }
    /* families, their estimated time, and the shards (largest family onto the lightest shard) */
    fam = hx_xcalloc(pl.ncells, sizeof *fam);
    unsigned maxp = 1;
    for (size_t i = 0; i < pl.ncells; i++) {
        const hx_plan_cell *c = &pl.cells[i];
        maxp = c->workers > maxp ? c->workers : maxp;
        char key[96];
        snprintf(key, sizeof key, "%s|%u", c->bench ? c->bench->name : "calibrate", c->workers);
        size_t f = 0;
        while (f < nfam && strcmp(fam[f].key, key))
            f++;
        if (f == nfam) {
            snprintf(fam[nfam].key, sizeof fam[nfam].key, "%s", key);
            fam[nfam].cells = hx_xcalloc(pl.ncells, sizeof *fam[nfam].cells);
            nfam++;
        }
        fam[f].cells[fam[f].ncells++] = i;
        fam[f].est += hx_plan_estimate(c, cfg.cores) * c->reps;
    }
    qsort(fam, nfam, sizeof *fam, cmp_family);
    size_t ns = shards ? shards : 16;
    if (ns > nfam) {
        if (shards)
            fprintf(stderr, "forkscope slurm: %zu families of cells (a benchmark at one P): %zu shards, not %lu\n", nfam,
                    nfam, shards);
        ns = nfam;
    }
    double *load = hx_xcalloc(ns, sizeof *load);
    for (size_t f = 0; f < nfam; f++) {
        size_t best = 0;
        for (size_t k = 1; k < ns; k++)
            best = load[k] < load[best] ? k : best;
        fam[f].shard = best;
        load[best] += fam[f].est;
    }
    m = json_pack("{s:i, s:s, s:s, s:i, s:s, s:[], s:[]}", "schema", MANIFEST_SCHEMA, "name", cfg.name, "config",
                  "config.json", "cores", (int)cfg.cores, "forkscope", exe, "shards", "jobs");
    json_t *jsh = json_object_get(m, "shards");
    double lo = 1e300, hi = 0;
    for (size_t k = 0; k < ns; k++) {
        json_t *cells = json_array();
        size_t runs = 0;
        for (size_t f = 0; f < nfam; f++)
            for (size_t j = 0; j < fam[f].ncells && fam[f].shard == k; j++) {
                json_array_append_new(cells, json_string(pl.cells[fam[f].cells[j]].id));
                runs += pl.cells[fam[f].cells[j]].reps;
            }
        json_array_append_new(jsh, json_pack("{s:o, s:I, s:f}", "cells", cells, "runs", (json_int_t)runs, "est_s",
                                             load[k]));
        lo = load[k] < lo ? load[k] : lo;
        hi = load[k] > hi ? load[k] : hi;
    }
    free(load);
    char sub[PATH_MAX + 32];
    int e = 0;
    snprintf(sub, sizeof sub, "%s/slurm/out", dir);
    if (hx_mkdir_p(sub))
        e = -errno;
    snprintf(sub, sizeof sub, "%s/shards", dir);
    if (!e && hx_mkdir_p(sub))
        e = -errno;
    snprintf(sub, sizeof sub, "%s/config.json", dir);
    if (!e)
        e = hx_write_atomic(sub, cfg.text, cfg.text_len);
    if (e) {
        fprintf(stderr, "forkscope slurm: cannot write into %s: %s\n", dir, strerror(-e));
        rc = HX_EIO;
        goto out;
    }
    unsigned cpus = maxp < cfg.cores ? maxp : cfg.cores;
    if ((rc = write_script(dir, exe, &cfg, ns, (unsigned)maxpar, cpus ? cpus : 1, partition, timelimit, extra, nextra)))
        goto out;
    if ((rc = manifest_write(dir, m)))
        goto out;
    printf("forkscope slurm: %zu runs in %zu cells, %zu families, %zu shards (estimated %.1f to %.1f s each on %u "
           "cores)\n  %s/slurm/job.sbatch, %s\n",
           pl.nruns, pl.ncells, nfam, ns, lo, hi, cfg.cores, dir, mpath);
    if (!no_submit) {
        rc = sbatch(dir, m, NULL);
        int wrc = manifest_write(dir, m);
        rc = rc ? rc : wrc;
    } else {
        printf("forkscope slurm: not submitted (--no-submit): sbatch %s/slurm/job.sbatch, or forkscope slurm "
               "resubmit %s\n",
               dir, dir);
    }
out:
    for (size_t f = 0; f < nfam; f++)
        free(fam[f].cells);
    free(fam);
    json_decref(m);
    free(mpath);
    hx_plan_free(&pl);
    hx_config_free(&cfg);
    free(extra);
    return rc;
}

/* ---- run-shard -------------------------------------------------------------------------------- */

static int cmd_run_shard(int argc, char **argv) {
    if (argc != 3)
        return usage("run-shard: expected DIR K");
    const char *dir = argv[1];
    char *end;
    unsigned long k = strtoul(argv[2], &end, 10);
    if (!*argv[2] || *end)
        return usage("run-shard: '%s' is not a shard number", argv[2]);
    json_t *m = manifest_read(dir);
    if (!m)
        return HX_EIO;
    json_t *sh = json_array_get(json_object_get(m, "shards"), k);
    if (!sh) {
        fprintf(stderr, "forkscope slurm: %s has %zu shards: no shard %lu\n", dir,
                json_array_size(json_object_get(m, "shards")), k);
        json_decref(m);
        return HX_EUSAGE;
    }
    json_t *cells = json_object_get(sh, "cells");
    const char **ids = hx_xcalloc(json_array_size(cells) + 1, sizeof *ids);
    for (size_t i = 0; i < json_array_size(cells); i++)
        ids[i] = json_string_value(json_array_get(cells, i));
    char config[PATH_MAX + 32], out[PATH_MAX + 32], host[256] = "";
    snprintf(config, sizeof config, "%s/config.json", dir);
    snprintf(out, sizeof out, "%s/shards/%lu", dir, k);
    gethostname(host, sizeof host - 1);
    hx_sweep_opts o = {.config_path = config,
                       .outdir = out,
                       .resume = 1,
                       .live_progress = 0,
                       .only_cells = ids,
                       .nonly_cells = json_array_size(cells),
                       .host = host,
                       .no_instructions = 1,
                       .cores = (unsigned)json_integer_value(json_object_get(m, "cores"))};
    fprintf(stderr, "forkscope slurm: shard %lu of %s on %s: %zu cells, %lld runs\n", k, dir, host,
            json_array_size(cells), (long long)json_integer_value(json_object_get(sh, "runs")));
    int rc = hx_sweep_run(&o, NULL, 0);
    free(ids);
    json_decref(m);
    /* Failed runs are results (recorded, counted by status and merge), not a failed task. */
    return rc == HX_ERUNS_FAILED ? HX_OK : rc;
}

/* ---- status and resubmit ---------------------------------------------------------------------- */

typedef struct shard_view {
    size_t planned, recorded, failed;
    const char *state; /* SLURM's: queued or running (squeue), or NULL */
    const char *ended; /* how its last task ended (sacct), or NULL */
} shard_view;

/* What each shard holds (files) and what SLURM says of it. */
static shard_view *survey(const char *dir, json_t *m, size_t *n, const char **why) {
    json_t *shards = json_object_get(m, "shards"), *states = slurm_tasks(m, 0, why), *ended = slurm_tasks(m, 1, NULL);
    *n = json_array_size(shards);
    shard_view *v = hx_xcalloc(*n + 1, sizeof *v);
    for (size_t k = 0; k < *n; k++) {
        v[k].planned = (size_t)json_integer_value(json_object_get(json_array_get(shards, k), "runs"));
        json_t *recs = shard_records(dir, k), *seen = json_object();
        size_t i;
        json_t *r;
        json_array_foreach(recs, i, r) {
            const char *id = json_string_value(json_object_get(r, "run_id"));
            if (json_object_get(seen, id))
                continue;
            json_object_set_new(seen, id, json_true());
            v[k].recorded++;
            v[k].failed += strcmp(hx_json_str(r, "status", ""), "ok") != 0;
        }
        json_decref(seen);
        json_decref(recs);
        char key[32];
        snprintf(key, sizeof key, "%zu", k);
        const char *s = json_string_value(json_object_get(states, key)),
                   *e = json_string_value(json_object_get(ended, key));
        v[k].state = s ? strdup(s) : NULL;
        v[k].ended = e ? strdup(e) : NULL;
    }
    json_decref(states);
    json_decref(ended);
    return v;
}

static void survey_free(shard_view *v, size_t n) {
    for (size_t k = 0; k < n; k++) {
        free((char *)v[k].state);
        free((char *)v[k].ended);
    }
    free(v);
}

static int cmd_status(int argc, char **argv) {
    if (argc != 2)
        return usage("status: expected DIR");
    json_t *m = manifest_read(argv[1]);
    if (!m)
        return HX_EIO;
    size_t n, planned = 0, recorded = 0, failed = 0, complete = 0, active = 0;
    const char *why;
    shard_view *v = survey(argv[1], m, &n, &why);
    printf("%-6s %8s %9s %7s  %s\n", "shard", "runs", "recorded", "failed", "SLURM");
    for (size_t k = 0; k < n; k++) {
        printf("%-6zu %8zu %9zu %7zu  %s%s%s%s\n", k, v[k].planned, v[k].recorded, v[k].failed,
               v[k].state ? v[k].state : v[k].recorded >= v[k].planned ? "-" : "not queued",
               v[k].ended && !v[k].state ? " (last task: " : "", v[k].ended && !v[k].state ? v[k].ended : "",
               v[k].ended && !v[k].state ? ")" : "");
        planned += v[k].planned;
        recorded += v[k].recorded;
        failed += v[k].failed;
        complete += v[k].recorded >= v[k].planned;
        active += v[k].state != NULL;
    }
    printf("%zu of %zu shards complete; %zu of %zu runs recorded (%zu failed)%s%s\n", complete, n, recorded, planned,
           failed, why ? "; SLURM not asked: " : "", why ? why : "");
    if (complete == n)
        printf("next: forkscope slurm merge %s\n", argv[1]);
    else if (complete + active < n)
        printf("next: forkscope slurm resubmit %s (shards missing runs and not queued)\n", argv[1]);
    survey_free(v, n);
    json_decref(m);
    return HX_OK;
}

static int cmd_resubmit(int argc, char **argv) {
    if (argc != 2)
        return usage("resubmit: expected DIR");
    json_t *m = manifest_read(argv[1]);
    if (!m)
        return HX_EIO;
    size_t n;
    const char *why;
    shard_view *v = survey(argv[1], m, &n, &why);
    char list[512] = "";
    size_t len = 0, count = 0;
    for (size_t k = 0; k < n; k++)
        if (v[k].recorded < v[k].planned && !v[k].state && len + 24 < sizeof list) {
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%zu", count ? "," : "", k);
            count++;
        }
    survey_free(v, n);
    int rc = HX_OK;
    if (!count)
        printf("forkscope slurm: nothing to resubmit: every shard is complete, queued or running\n");
    else
        rc = sbatch(argv[1], m, list);
    if (count) {
        int wrc = manifest_write(argv[1], m);
        rc = rc ? rc : wrc;
    }
    json_decref(m);
    return rc;
}

/* ---- merge ---------------------------------------------------------------------------------- */

/* host -> CPU model, from a shard's env.json (its first record and every resume). */
static void note_hosts(json_t *hosts, json_t *env) {
    const char *h = json_string_value(json_object_get(env, "host")),
               *c = json_string_value(json_object_get(env, "cpu_model"));
    if (h && c && !json_object_get(hosts, h))
        json_object_set_new(hosts, h, json_string(c));
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(env, "resumes"), i, r) {
        h = json_string_value(json_object_get(r, "host"));
        c = json_string_value(json_object_get(r, "cpu_model"));
        if (h && c && !json_object_get(hosts, h))
            json_object_set_new(hosts, h, json_string(c));
    }
}

static int cmd_merge(int argc, char **argv) {
    if (argc != 2)
        return usage("merge: expected DIR");
    const char *dir = argv[1];
    json_t *m = manifest_read(dir);
    if (!m)
        return HX_EIO;
    size_t nshards = json_array_size(json_object_get(m, "shards")), planned = 0;
    json_t *hosts = json_object(), *seen = json_object(), *merged = json_array(), *env0 = NULL;
    json_t *cell_models = json_object(); /* cell -> {model: host} */
    for (size_t k = 0; k < nshards; k++) {
        planned += (size_t)json_integer_value(json_object_get(json_array_get(json_object_get(m, "shards"), k), "runs"));
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/shards/%zu/env.json", dir, k);
        json_error_t e;
        json_t *env = json_load_file(path, 0, &e);
        if (env) {
            note_hosts(hosts, env);
            if (!env0)
                env0 = json_incref(env);
        }
        json_decref(env);
        json_t *recs = shard_records(dir, k);
        size_t i;
        json_t *r;
        json_array_foreach(recs, i, r) {
            const char *id = json_string_value(json_object_get(r, "run_id"));
            if (json_object_get(seen, id))
                continue; /* a duplicate (a run recorded twice): the first stays */
            json_object_set_new(seen, id, json_true());
            json_array_append(merged, r);
            const char *cell = hx_json_str(r, "cell_id", "?"), *host = hx_json_str(r, "host", "?"),
                       *model = hx_json_str(hosts, host, "unknown");
            json_t *cm = json_object_get(cell_models, cell);
            if (!cm)
                json_object_set_new(cell_models, cell, cm = json_object());
            if (!json_object_get(cm, model))
                json_object_set_new(cm, model, json_string(host));
        }
        json_decref(recs);
    }
    int rc = HX_OK;
    size_t mixed = 0;
    const char *cell;
    json_t *cm;
    json_object_foreach(cell_models, cell, cm) {
        if (json_object_size(cm) < 2)
            continue;
        if (mixed++ < 5) {
            fprintf(stderr, "forkscope slurm: cell %s: runs from nodes of different CPU models:", cell);
            const char *model;
            json_t *h;
            json_object_foreach(cm, model, h)
                fprintf(stderr, " %s (%s);", model, json_string_value(h));
            fputc('\n', stderr);
        }
    }
    if (mixed) {
        fprintf(stderr,
                "forkscope slurm: %zu cells mix node types: nothing merged.  Rerun their shards on one node type "
                "(move their records away and resubmit with --sbatch-arg=--constraint=...)\n",
                mixed);
        rc = HX_ECONFIG;
        goto out;
    }
    if (!json_array_size(merged)) {
        fprintf(stderr, "forkscope slurm: %s: no shard has recorded a run yet (forkscope slurm status %s)\n", dir, dir);
        rc = HX_EIO;
        goto out;
    }
    /* raw.jsonl and env.json of DIR */
    char path[PATH_MAX + 32], tmp[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/raw.jsonl", dir);
    FILE *f = hx_atomic_open(path, tmp, sizeof tmp);
    if (!f) {
        fprintf(stderr, "forkscope slurm: cannot write %s: %s\n", path, strerror(errno));
        rc = HX_EIO;
        goto out;
    }
    size_t i;
    json_t *r;
    json_array_foreach(merged, i, r) {
        char *line = json_dumps(r, JSON_COMPACT);
        fprintf(f, "%s\n", line);
        free(line);
    }
    int e = hx_atomic_commit(f, tmp, path);
    json_t *env = env0 ? json_deep_copy(env0) : json_object();
    json_object_set_new(env, "slurm", json_pack("{s:I, s:O, s:O}", "shards", (json_int_t)nshards, "nodes", hosts,
                                                "jobs", json_object_get(m, "jobs")));
    char *text = json_dumps(env, JSON_INDENT(2));
    snprintf(path, sizeof path, "%s/env.json", dir);
    int e2 = hx_write_atomic(path, text, strlen(text));
    free(text);
    json_decref(env);
    if (e || e2) {
        fprintf(stderr, "forkscope slurm: cannot write %s: %s\n", dir, strerror(-(e ? e : e2)));
        rc = HX_EIO;
        goto out;
    }
    size_t got = json_array_size(merged);
    fprintf(stderr, "forkscope slurm: %zu of %zu runs merged into %s/raw.jsonl from %zu shards on %zu nodes\n", got,
            planned, dir, nshards, json_object_size(hosts));
    if (got < planned)
        fprintf(stderr, "forkscope slurm: %zu runs are missing: the analysis covers what exists "
                        "(forkscope slurm status %s)\n",
                planned - got, dir);
    /* "instructions": counted here, once (callgrind's counts do not depend on the node) */
    snprintf(path, sizeof path, "%s/config.json", dir);
    hx_config cfg;
    int span_failed = 0;
    hx_diag d = {0};
    if (hx_config_load(path, (unsigned)json_integer_value(json_object_get(m, "cores")), &cfg, &d) == 0) {
        if (cfg.icount_n[1]) {
            hx_launcher *l = NULL;
            if (hx_launcher_start(&l) == 0) {
                int ic = hx_icount_run(&cfg, dir, l, -1);
                if (ic)
                    fprintf(stderr, "forkscope slurm: the instruction counts failed (%s)\n", hx_strerror(ic));
                hx_launcher_stop(l);
            }
        }
        int want_span = 0; /* "span": measured here, once, on the node that merges (its times, and a
                              calibrated burden, are this node's: README says so) */
        for (size_t b = 0; b < cfg.nbenchmarks; b++)
            want_span |= cfg.benchmarks[b].span;
        hx_launcher *l = NULL;
        if (want_span && hx_launcher_start(&l) != 0)
            fprintf(stderr, "forkscope slurm: cannot start a launcher: no work and span measured\n");
        else if (want_span) {
            char host[256] = "";
            gethostname(host, sizeof host - 1);
            fprintf(stderr, "forkscope slurm: work and span measured here, on %s (one worker)\n", host);
            int sc = hx_span_sweep(&cfg, dir, l, -1);
            if (sc)
                fprintf(stderr, "forkscope slurm: the work and span measurements failed (%s)\n", hx_strerror(sc));
            span_failed = sc != HX_OK;
            hx_launcher_stop(l);
        }
        hx_config_free(&cfg);
    }
    hx_diag_free(&d);
    rc = hx_analyse_dir(dir, "forkscope slurm", NULL); /* (plots not drawn: said, merge still done) */
    if (rc == HX_OK && (got < planned || span_failed))
        rc = HX_ERUNS_FAILED;
out:
    json_decref(hosts);
    json_decref(seen);
    json_decref(merged);
    json_decref(env0);
    json_decref(cell_models);
    json_decref(m);
    return rc;
}

int hx_cmd_slurm(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        help(argc < 2 ? stderr : stdout);
        return argc < 2 ? HX_EUSAGE : HX_OK;
    }
    const char *c = argv[1];
    if (!strcmp(c, "submit"))
        return cmd_submit(argc - 1, argv + 1);
    if (!strcmp(c, "run-shard"))
        return cmd_run_shard(argc - 1, argv + 1);
    if (!strcmp(c, "status"))
        return cmd_status(argc - 1, argv + 1);
    if (!strcmp(c, "resubmit"))
        return cmd_resubmit(argc - 1, argv + 1);
    if (!strcmp(c, "merge"))
        return cmd_merge(argc - 1, argv + 1);
    return usage("unknown command '%s' (submit, run-shard, status, resubmit, merge)", c);
}
