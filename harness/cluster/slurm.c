/* slurm.c — `forkscope slurm`: a sweep as a SLURM job array (see slurm.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness/util/cli.h"
#include "harness/util/env.h"
#include "harness/report/analysis.h"
#include "harness/run/envinfo.h"
#include "harness/config/config.h"
#include "harness/util/errors.h"
#include "harness/run/launch.h"
#include "harness/run/icount.h"
#include "harness/cluster/pack.h"
#include "harness/cluster/slurm.h"
#include "harness/run/span.h"
#include "harness/run/records.h"
#include "harness/run/sweep.h"
#include "harness/util/util.h"

#define MANIFEST_SCHEMA 1

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

/* The one argument DIR of status, resubmit and merge: 0, HX_CLI_HELP or HX_EUSAGE (said). */
static int dir_arg(const char *cmd, int argc, char **argv, const char **dir) {
    return hx_cli_one(cmd, help, "results directory", argc, argv, dir);
}

/* ---- submit --------------------------------------------------------------------------------- */

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
    hx_envinfo_iso_time(hx_envinfo_wall_time(), date, sizeof date);
    json_array_append_new(json_object_get(m, "jobs"),
                          json_pack("{s:s, s:s, s:s}", "id", id, "array", array ? array : "all", "date", date));
    printf("forkscope slurm: submitted job %s (array %s); follow it with: forkscope slurm status %s\n", id,
           array ? array : "all", dir);
    return HX_OK;
}

typedef struct submit_opts {
    const char *config, *outdir, *partition, *timelimit;
    long shards, maxpar, cores;
    int no_submit;
    hx_strv extra; /* --sbatch-arg */
} submit_opts;

/* argv into *o: 0, HX_CLI_HELP or HX_EUSAGE (said). */
static int submit_args(int argc, char **argv, submit_opts *o) {
    memset(o, 0, sizeof *o);
    const char *whole = "a whole number in 1..100000";
    const hx_opt opts[] = {
        {"--output", "-o", HX_OPT_STR, &o->outdir, 0, 0, "a directory", NULL},
        {"--partition", NULL, HX_OPT_STR, &o->partition, 0, 0, "a partition", NULL},
        {"--time", NULL, HX_OPT_STR, &o->timelimit, 0, 0, "a time limit", NULL},
        {"--sbatch-arg", NULL, HX_OPT_LIST, &o->extra, 0, 0, "an sbatch argument", NULL},
        {"--shards", NULL, HX_OPT_LONG, &o->shards, 1, 100000, whole, NULL},
        {"--max-parallel", NULL, HX_OPT_LONG, &o->maxpar, 1, 100000, whole, NULL},
        {"--cores", NULL, HX_OPT_LONG, &o->cores, 1, 100000, whole, NULL},
        {"--no-submit", NULL, HX_OPT_FLAG, &o->no_submit, 0, 0, NULL, NULL},
        {NULL, NULL, 0, NULL, 0, 0, NULL, NULL},
    };
    hx_cli c = {.cmd = "slurm submit", .opts = opts, .usage = help, .max_pos = 1, .pos_what = "CONFIG"};
    int rc = hx_cli_parse(&c, argc, argv);
    if (rc)
        return rc;
    if (!c.npos)
        return hx_cli_usage_error("slurm submit", "no CONFIG given");
    o->config = c.pos[0];
    for (const char *const *s = (const char *const[]){o->partition, o->timelimit, NULL}; *s; s++)
        if (!shell_safe(*s))
            return hx_cli_usage_error("slurm submit", "'%s' contains characters the job script cannot hold", *s);
    return 0;
}

/* The manifest of a packed plan: each shard's cells, runs and estimate; *lo and *hi the least
 * and greatest shard estimates. */
static json_t *submit_manifest(const hx_config *cfg, const hx_plan *pl, const hx_packing *pk, const char *exe,
                               double *lo, double *hi) {
    json_t *m = json_pack("{s:i, s:s, s:s, s:i, s:s, s:[], s:[]}", "schema", MANIFEST_SCHEMA, "name", cfg->name,
                          "config", "config.json", "cores", (int)cfg->cores, "forkscope", exe, "shards", "jobs");
    json_t *jsh = json_object_get(m, "shards");
    *lo = 1e300;
    *hi = 0;
    for (size_t k = 0; k < pk->nshards; k++) {
        json_t *cells = json_array();
        size_t runs = 0;
        for (size_t f = 0; f < pk->nfam; f++)
            for (size_t j = 0; j < pk->fam[f].ncells && pk->fam[f].shard == k; j++) {
                json_array_append_new(cells, json_string(pl->cells[pk->fam[f].cells[j]].id));
                runs += pl->cells[pk->fam[f].cells[j]].reps;
            }
        json_array_append_new(jsh, json_pack("{s:o, s:I, s:f}", "cells", cells, "runs", (json_int_t)runs, "est_s",
                                             pk->load[k]));
        *lo = pk->load[k] < *lo ? pk->load[k] : *lo;
        *hi = pk->load[k] > *hi ? pk->load[k] : *hi;
    }
    return m;
}

/* DIR/slurm/out, DIR/shards, DIR/config.json: 0 or HX_EIO (said). */
static int submit_dirs(const char *dir, const hx_config *cfg) {
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
        e = hx_write_atomic(sub, cfg->text, cfg->text_len);
    if (e) {
        fprintf(stderr, "forkscope slurm: cannot write into %s: %s\n", dir, strerror(-e));
        return HX_EIO;
    }
    return HX_OK;
}

/* The results directory for a submission: made, absolute, quotable, and without a sweep in
 * it.  0 or a code (said). */
static int submit_dir(const submit_opts *o, const hx_config *cfg, const char *exe, char dir[PATH_MAX]) {
    char real[PATH_MAX];
    snprintf(dir, PATH_MAX, "%s", o->outdir ? o->outdir : "");
    if (!o->outdir)
        snprintf(dir, PATH_MAX, "results/%s", cfg->name);
    if (hx_mkdir_p(dir) || !realpath(dir, real)) {
        fprintf(stderr, "forkscope slurm: cannot create %s: %s\n", dir, strerror(errno));
        return HX_EIO;
    }
    snprintf(dir, PATH_MAX, "%s", real);
    if (!shell_safe(dir) || !shell_safe(exe))
        return hx_cli_usage_error("slurm submit", "the paths %s and %s must not hold quotes, $, ` or \\", dir, exe);
    char *mpath = manifest_path(dir), raw[PATH_MAX + 16];
    snprintf(raw, sizeof raw, "%s/raw.jsonl", dir);
    int taken = exists(mpath) || exists(raw);
    free(mpath);
    if (taken) {
        fprintf(stderr,
                "forkscope slurm: %s already holds a sweep: follow it with `forkscope slurm status %s` (and resubmit, "
                "merge), or choose another directory with -o\n",
                dir, dir);
        return HX_EUSAGE;
    }
    return HX_OK;
}

/* A warning when a shard is estimated to take longer than --time (SLURM would kill it), with
 * the shard count at which each would fit. */
static void submit_check_time(const submit_opts *o, const hx_packing *pk, double longest) {
    double limit;
    if (!o->timelimit || hx_pack_slurm_time(o->timelimit, &limit) || longest <= limit)
        return;
    size_t fit = hx_pack_shards_within(pk, limit);
    fprintf(stderr, "forkscope slurm: warning: the longest shard is estimated at %.0f s, more than --time %s (%.0f s): ",
            longest, o->timelimit, limit);
    if (fit)
        fprintf(stderr, "%zu shards would fit (--shards %zu), or give more time\n", fit, fit);
    else
        fprintf(stderr, "the largest family of cells alone takes %.0f s (a family is never split): give more time\n",
                pk->fam[0].est);
}

static int cmd_submit(int argc, char **argv) {
    submit_opts o;
    const char *memlimit;
    int rc = submit_args(argc, argv, &o);
    if (!rc) /* (the array tasks inherit it: refused here, not on every node) */
        rc = hx_env_memlimit(&memlimit);
    if (rc) {
        hx_strv_free(&o.extra);
        return rc == HX_CLI_HELP ? HX_OK : rc;
    }
    hx_config cfg;
    hx_diag d = {0};
    rc = hx_config_load(o.config, o.cores ? (unsigned)o.cores : hx_online_cores(), &cfg, &d);
    if (rc)
        hx_config_diag_print(&d, stderr);
    hx_config_diag_free(&d);
    if (rc) {
        fprintf(stderr, "forkscope slurm: %s: nothing was submitted\n", o.config);
        hx_strv_free(&o.extra);
        return rc;
    }
    char dir[PATH_MAX], exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    hx_plan pl = {0};
    hx_packing pk = {0};
    json_t *m = NULL;
    char *mpath = NULL;
    if ((rc = submit_dir(&o, &cfg, exe, dir)))
        goto out;
    mpath = manifest_path(dir);
    if (hx_plan_build(&cfg, &pl)) {
        rc = HX_EINTERNAL;
        goto out;
    }
    if (!pl.nruns) {
        fprintf(stderr, "forkscope slurm: %s plans no runs: nothing to submit\n", o.config);
        rc = HX_ECONFIG;
        goto out;
    }
    hx_pack_plan(&pl, cfg.cores, (size_t)o.shards, &pk);
    if (o.shards && pk.nshards < (size_t)o.shards)
        fprintf(stderr, "forkscope slurm: %zu families of cells (a benchmark at one P): %zu shards, not %ld\n", pk.nfam,
                pk.nfam, o.shards);
    double lo, hi;
    m = submit_manifest(&cfg, &pl, &pk, exe, &lo, &hi);
    submit_check_time(&o, &pk, hi);
    if ((rc = submit_dirs(dir, &cfg)))
        goto out;
    unsigned cpus = pk.maxp < cfg.cores ? pk.maxp : cfg.cores;
    if ((rc = write_script(dir, exe, &cfg, pk.nshards, (unsigned)o.maxpar, cpus ? cpus : 1, o.partition, o.timelimit,
                           (char **)o.extra.v, o.extra.n)))
        goto out;
    if ((rc = manifest_write(dir, m)))
        goto out;
    printf("forkscope slurm: %zu runs in %zu cells, %zu families, %zu shards (estimated %.1f to %.1f s each on %u "
           "cores)\n  %s/slurm/job.sbatch, %s\n",
           pl.nruns, pl.ncells, pk.nfam, pk.nshards, lo, hi, cfg.cores, dir, mpath);
    if (!o.no_submit) {
        rc = sbatch(dir, m, NULL);
        int wrc = manifest_write(dir, m);
        rc = rc ? rc : wrc;
    } else {
        printf("forkscope slurm: not submitted (--no-submit): sbatch %s/slurm/job.sbatch, or forkscope slurm "
               "resubmit %s\n",
               dir, dir);
    }
out:
    hx_packing_free(&pk);
    json_decref(m);
    free(mpath);
    hx_plan_free(&pl);
    hx_config_free(&cfg);
    hx_strv_free(&o.extra);
    return rc;
}

/* ---- run-shard -------------------------------------------------------------------------------- */

static int cmd_run_shard(int argc, char **argv) {
    hx_cli c = {.cmd = "slurm run-shard", .usage = help, .max_pos = 2, .pos_what = "arguments (DIR K)"};
    int arc = hx_cli_parse(&c, argc, argv);
    if (arc)
        return arc == HX_CLI_HELP ? HX_OK : arc;
    long kl;
    if (c.npos != 2)
        return hx_cli_usage_error("slurm run-shard", "expected DIR K");
    if (hx_cli_long(c.pos[1], 0, 1000000, &kl))
        return hx_cli_usage_error("slurm run-shard", "'%s' is not a shard number", c.pos[1]);
    const char *dir = c.pos[0], *memlimit;
    unsigned long k = (unsigned long)kl;
    if ((arc = hx_env_memlimit(&memlimit)))
        return arc;
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
    const char *dir = NULL;
    int arc = dir_arg("slurm status", argc, argv, &dir);
    if (arc)
        return arc == HX_CLI_HELP ? HX_OK : arc;
    json_t *m = manifest_read(dir);
    if (!m)
        return HX_EIO;
    size_t n, planned = 0, recorded = 0, failed = 0, complete = 0, active = 0;
    const char *why;
    shard_view *v = survey(dir, m, &n, &why);
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
        printf("next: forkscope slurm merge %s\n", dir);
    else if (complete + active < n)
        printf("next: forkscope slurm resubmit %s (shards missing runs and not queued)\n", dir);
    survey_free(v, n);
    json_decref(m);
    return HX_OK;
}

static int cmd_resubmit(int argc, char **argv) {
    const char *dir = NULL;
    int arc = dir_arg("slurm resubmit", argc, argv, &dir);
    if (arc)
        return arc == HX_CLI_HELP ? HX_OK : arc;
    const char *memlimit;
    if ((arc = hx_env_memlimit(&memlimit)))
        return arc;
    json_t *m = manifest_read(dir);
    if (!m)
        return HX_EIO;
    size_t n;
    const char *why;
    shard_view *v = survey(dir, m, &n, &why);
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
        rc = sbatch(dir, m, list);
    if (count) {
        int wrc = manifest_write(dir, m);
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

/* The shards' records and what their nodes are, gathered for merge. */
typedef struct merge_state {
    json_t *m;           /* the manifest */
    size_t nshards, planned;
    json_t *hosts;       /* host -> CPU model */
    json_t *seen;        /* run_id -> true */
    json_t *merged;      /* the records, duplicates dropped (the first stays) */
    json_t *env0;        /* the first shard's env.json */
    json_t *cell_models; /* cell -> {model: host} */
} merge_state;

static void merge_collect(const char *dir, merge_state *s) {
    s->nshards = json_array_size(json_object_get(s->m, "shards"));
    s->hosts = json_object();
    s->seen = json_object();
    s->merged = json_array();
    s->cell_models = json_object();
    for (size_t k = 0; k < s->nshards; k++) {
        s->planned +=
            (size_t)json_integer_value(json_object_get(json_array_get(json_object_get(s->m, "shards"), k), "runs"));
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/shards/%zu/env.json", dir, k);
        json_error_t e;
        json_t *env = json_load_file(path, 0, &e);
        if (env) {
            note_hosts(s->hosts, env);
            if (!s->env0)
                s->env0 = json_incref(env);
        }
        json_decref(env);
        json_t *recs = shard_records(dir, k);
        size_t i;
        json_t *r;
        json_array_foreach(recs, i, r) {
            const char *id = json_string_value(json_object_get(r, "run_id"));
            if (json_object_get(s->seen, id))
                continue; /* a duplicate (a run recorded twice): the first stays */
            json_object_set_new(s->seen, id, json_true());
            json_array_append(s->merged, r);
            const char *cell = hx_json_str(r, "cell_id", "?"), *host = hx_json_str(r, "host", "?"),
                       *model = hx_json_str(s->hosts, host, "unknown");
            json_t *cm = json_object_get(s->cell_models, cell);
            if (!cm)
                json_object_set_new(s->cell_models, cell, cm = json_object());
            if (!json_object_get(cm, model))
                json_object_set_new(cm, model, json_string(host));
        }
        json_decref(recs);
    }
}

static void merge_free(merge_state *s) {
    json_decref(s->hosts);
    json_decref(s->seen);
    json_decref(s->merged);
    json_decref(s->env0);
    json_decref(s->cell_models);
    json_decref(s->m);
}

/* The cells whose runs come from nodes of different CPU models (the first five said). */
static size_t merge_mixed_cells(const merge_state *s) {
    size_t mixed = 0;
    const char *cell;
    json_t *cm;
    json_object_foreach(s->cell_models, cell, cm) {
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
    return mixed;
}

/* DIR/raw.jsonl and DIR/env.json from the shards': 0 or HX_EIO (said). */
static int merge_write(const char *dir, const merge_state *s) {
    char path[PATH_MAX + 32], tmp[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/raw.jsonl", dir);
    FILE *f = hx_atomic_open(path, tmp, sizeof tmp);
    if (!f) {
        fprintf(stderr, "forkscope slurm: cannot write %s: %s\n", path, strerror(errno));
        return HX_EIO;
    }
    size_t i;
    json_t *r;
    json_array_foreach(s->merged, i, r) {
        char *line = json_dumps(r, JSON_COMPACT);
        fprintf(f, "%s\n", line);
        free(line);
    }
    int e = hx_atomic_commit(f, tmp, path);
    json_t *env = s->env0 ? json_deep_copy(s->env0) : json_object();
    json_object_set_new(env, "slurm", json_pack("{s:I, s:O, s:O}", "shards", (json_int_t)s->nshards, "nodes",
                                                s->hosts, "jobs", json_object_get(s->m, "jobs")));
    char *text = json_dumps(env, JSON_INDENT(2));
    snprintf(path, sizeof path, "%s/env.json", dir);
    int e2 = hx_write_atomic(path, text, strlen(text));
    free(text);
    json_decref(env);
    if (e || e2) {
        fprintf(stderr, "forkscope slurm: cannot write %s: %s\n", dir, strerror(-(e ? e : e2)));
        return HX_EIO;
    }
    return HX_OK;
}

/* What a merged sweep measures once, on the node that merges: the instruction counts
 * (callgrind's do not depend on the node) and work and span (its times, and a calibrated
 * burden, are this node's: docs/slurm.md says so).  Returns 1 if the span measurement
 * failed, else 0 (an instruction-count failure is said, not counted: as `run` does). */
static int merge_measure(const char *dir, unsigned cores) {
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/config.json", dir);
    hx_config cfg;
    int span_failed = 0;
    hx_diag d = {0};
    if (hx_config_load(path, cores, &cfg, &d) == 0) {
        if (cfg.icount_n[1]) {
            hx_launcher *l = NULL;
            if (hx_launcher_start(&l) == 0) {
                int ic = hx_icount_run(&cfg, dir, l, -1);
                if (ic)
                    fprintf(stderr, "forkscope slurm: the instruction counts failed (%s)\n", hx_strerror(ic));
                hx_launcher_stop(l);
            }
        }
        int want_span = 0;
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
    hx_config_diag_free(&d);
    return span_failed;
}

static int cmd_merge(int argc, char **argv) {
    const char *dir = NULL;
    int rc = dir_arg("slurm merge", argc, argv, &dir);
    if (rc)
        return rc == HX_CLI_HELP ? HX_OK : rc;
    const char *memlimit;
    if ((rc = hx_env_memlimit(&memlimit)))
        return rc;
    merge_state s = {.m = manifest_read(dir)};
    if (!s.m)
        return HX_EIO;
    merge_collect(dir, &s);
    size_t mixed = merge_mixed_cells(&s);
    if (mixed) {
        fprintf(stderr,
                "forkscope slurm: %zu cells mix node types: nothing merged.  Rerun their shards on one node type "
                "(move their records away and resubmit with --sbatch-arg=--constraint=...)\n",
                mixed);
        rc = HX_ECONFIG;
    } else if (!json_array_size(s.merged)) {
        fprintf(stderr, "forkscope slurm: %s: no shard has recorded a run yet (forkscope slurm status %s)\n", dir, dir);
        rc = HX_EIO;
    } else if (!(rc = merge_write(dir, &s))) {
        size_t got = json_array_size(s.merged);
        fprintf(stderr, "forkscope slurm: %zu of %zu runs merged into %s/raw.jsonl from %zu shards on %zu nodes\n",
                got, s.planned, dir, s.nshards, json_object_size(s.hosts));
        if (got < s.planned)
            fprintf(stderr, "forkscope slurm: %zu runs are missing: the analysis covers what exists "
                            "(forkscope slurm status %s)\n",
                    s.planned - got, dir);
        int span_failed = merge_measure(dir, (unsigned)json_integer_value(json_object_get(s.m, "cores")));
        rc = hx_report_analyse_dir(dir, "forkscope slurm", NULL); /* (plots not drawn: said, merge still done) */
        if (rc == HX_OK && (got < s.planned || span_failed))
            rc = HX_ERUNS_FAILED;
    }
    merge_free(&s);
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
    return hx_cli_usage_error("slurm", "unknown command '%s' (submit, run-shard, status, resubmit, merge)", c);
}
