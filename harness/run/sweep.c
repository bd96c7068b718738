/* sweep.c — `forkscope run`: the sweep in stages (open, reconcile, account, start, run a
 * shard, finish), the runs recorded, env.json, signals (see sweep.h; the plan is plan.c's). */
#include "harness/util/env.h"
#include "harness/run/sweep.h"
#include "harness/run/records.h"
#include "harness/run/span.h"
#include "harness/util/util.h"
#include "harness/run/icount.h"
#include "harness/run/planprint.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "harness/analyze/stats.h"
#include "harness/config/command.h"
#include "harness/config/config.h"
#include "harness/run/envinfo.h"
#include "harness/util/errors.h"
#include "harness/run/progress.h"
#include "harness/results/results.h"
#include "harness/config/variants.h"

/* ---- the plan (plan.h) ------------------------------------------------------------------ */

/* The plan's types (plan.h), by their short names here. */
typedef hx_plan_cell cell;
typedef hx_planned_run run;
typedef hx_plan plan;

/* ---- files -------------------------------------------------------------------------------------- */


/* dir/name replaced atomically (util.h); -1 with errno on failure, as the callers report. */
static int write_atomic(const char *dir, const char *name, const char *data, size_t len) {
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int rc = hx_write_atomic(path, data, len);
    if (rc)
        errno = -rc;
    return rc ? -1 : 0;
}


/* ---- one run ------------------------------------------------------------------------------- */

/* A sweep in progress: what each stage of hx_sweep_run fills in and the later ones use. */
typedef struct sweep {
    const hx_sweep_opts *o;
    hx_config config; /* owned */
    const hx_config *cfg;
    hx_diag diag;
    plan pl;
    char dir[PATH_MAX], raw_path[PATH_MAX + 16], config_copy[PATH_MAX + 32];
    char *papi;  /* "EV1,EV2" for the drivers' --papi, or NULL */
    /* what the directory held before: */
    int have_raw, have_config;
    json_t *done_recs;    /* the records of raw.jsonl (a JSON array) */
    char **done_ids;      /* their run_ids, sorted */
    size_t ndone, already, cells_done;
    /* while running: */
    hx_launcher *launcher;
    int own_launcher;
    int intr_fd;
    int handlers;
    struct sigaction old_int, old_term;
    json_t *envinfo; /* env.json */
    int raw_fd;
    int raw_created;
    hx_progress *prog;
    run *shard;    /* the runs this sweep runs: the plan's, or a shard's (owned then) */
    size_t nshard;
} sweep;

/* The driver's command line for one run of cell c. */
static char **run_argv(const cell *c, unsigned warmup, const char *papi) {
    if (c->var->kind == HX_VARIANT_COMMAND)
        return hx_command_argv(c->var, c->bench, c->workers);
    size_t n = 16 + HX_VARIANT_MAX_ARGS + (c->bench ? c->bench->nargs : 0);
    char **argv = calloc(n, sizeof *argv);
    if (!argv)
        return NULL;
    size_t k = 0;
    argv[k++] = strdup(c->driver);
    argv[k++] = strdup("--kernel");
    argv[k++] = strdup(c->bench ? c->bench->kernel : "calibrate");
    for (size_t i = 0; c->bench && i < c->bench->nargs; i++)
        argv[k++] = strdup(c->bench->args[i]);
    argv[k++] = strdup("--workers");
    if (asprintf(&argv[k++], "%u", c->workers) < 0)
        argv[k - 1] = NULL;
    const char *vargs[HX_VARIANT_MAX_ARGS];
    for (size_t i = 0, nv = hx_variant_args(c->var, vargs); i < nv; i++)
        argv[k++] = strdup(vargs[i]);
    argv[k++] = strdup("--reps"); /* the config's "process_reps": time_s is their median */
    if (asprintf(&argv[k++], "%u", c->preps ? c->preps : 1) < 0)
        argv[k - 1] = NULL;
    argv[k++] = strdup("--warmup");
    if (asprintf(&argv[k++], "%u", warmup) < 0)
        argv[k - 1] = NULL;
    if (papi) {
        argv[k++] = strdup("--papi");
        argv[k++] = strdup(papi);
    }
    if (c->bench && c->bench->breakdown && c->var->kind == HX_VARIANT_RUNTIME) {
        argv[k++] = strdup("--account");
        argv[k++] = strdup("times");
    }
    for (size_t i = 0; i < k; i++)
        if (!argv[i]) {
            for (size_t j = 0; j < k; j++)
                free(argv[j]);
            free(argv);
            return NULL;
        }
    return argv;
}

static void free_argv(char **argv) {
    for (size_t i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
}

/* The runtime's settings that a sweep's config, not the shell, must choose: a runtime variant
 * runs without them unless its "env" sets them (a shell's FORKSCOPE_BEAT_US would otherwise
 * reach every heartbeat variant that keeps the default; FORKSCOPE_PROMOTE is the variant's
 * name's, given as --promote). */
static const char *const runtime_settings[] = {"FORKSCOPE_BEAT_US", "FORKSCOPE_BEAT_SHARE", NULL};

/* The variant's environment for its runs (free with free_argv), or NULL if none: its "env" as
 * NAME=value strings, then the runtime settings it does not set as a bare NAME (the launcher
 * unsets those). */
static char **variant_env(const hx_variant *v) {
    size_t n = 0, cap = (v->env ? json_object_size(v->env) : 0) + sizeof runtime_settings / sizeof *runtime_settings;
    char **env = hx_xcalloc(cap, sizeof *env);
    const char *k;
    json_t *val;
    if (v->env)
        json_object_foreach(v->env, k, val) {
            size_t len = strlen(k) + strlen(json_string_value(val)) + 2;
            env[n] = hx_xcalloc(len, 1);
            snprintf(env[n++], len, "%s=%s", k, json_string_value(val));
        }
    if (v->kind == HX_VARIANT_RUNTIME)
        for (const char *const *r = runtime_settings; *r; r++)
            if (!v->env || !json_object_get(v->env, *r))
                env[n++] = hx_xstrdup(*r);
    if (n == 0) {
        free(env);
        return NULL;
    }
    return env;
}

/* Appends one line and makes it durable (the directory too, when the file is new). */
static int append_record(sweep *s, json_t *rec) {
    char *line = json_dumps(rec, JSON_COMPACT);
    if (!line)
        return -1;
    size_t len = strlen(line);
    line[len] = '\n'; /* one write() of the whole line: a kill leaves a whole line or none */
    int rc = 0;
    size_t off = 0;
    while (off < len + 1) {
        ssize_t w = write(s->raw_fd, line + off, len + 1 - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = -1;
            break;
        }
        off += (size_t)w;
    }
    free(line);
    if (rc == 0)
        rc = fsync(s->raw_fd);
    if (rc == 0 && s->raw_created) {
        rc = hx_fsync_dir(s->dir) ? -1 : 0;
        s->raw_created = 0;
    }
    return rc;
}

/* Accounts a record (new or from an earlier run) to its cell. */
static void account(cell *c, json_t *rec) {
    int st = hx_status_index(json_string_value(json_object_get(rec, "status")));
    c->done++;
    c->fails[st]++;
    json_t *t = json_object_get(rec, "time_s");
    if (st == HX_ST_OK && json_is_number(t) && c->ntimes < c->reps)
        c->times[c->ntimes++] = json_number_value(t);
}

static void failures_text(const cell *c, char *buf, size_t len, unsigned *nfail) {
    buf[0] = 0;
    *nfail = 0;
    for (int k = 1; k < HX_NSTATUS; k++)
        if (c->fails[k]) {
            size_t u = strlen(buf);
            snprintf(buf + u, len - u, "%s%s:%u", u ? ";" : "", hx_status_names[k], c->fails[k]);
            *nfail += c->fails[k];
        }
}

/* ---- signals ------------------------------------------------------------------------------------ */

static volatile sig_atomic_t got_signal;
static int sig_pipe[2] = {-1, -1};

static void on_signal(int sig) {
    int e = errno;
    got_signal = sig;
    if (sig_pipe[1] >= 0 && write(sig_pipe[1], "x", 1) < 0) {
        /* the pipe is full: it is readable already */
    }
    errno = e;
}

/* ---- drivers and env.json --------------------------------------------------------------------- */

/* A command variant in env.json: its spec and the SHA-1 of each program it runs (which must
 * be an executable file: HX_ETOOL otherwise). */
static int probe_command(const hx_variant *var, json_t *drivers) {
    json_t *sums = json_object(), *cmds = json_object_get(var->spec, "command"), *t;
    const char *k;
    json_t *all = json_array();
    json_object_foreach(cmds, k, t) json_array_append(all, t);
    if (json_object_get(var->spec, "calibrate"))
        json_array_append(all, json_object_get(var->spec, "calibrate"));
    size_t i;
    json_array_foreach(all, i, t) {
        const char *prog = json_string_value(json_array_get(t, 0));
        char hex[41];
        if (!prog || access(prog, X_OK) || hx_file_sha1(prog, hex)) {
            fprintf(stderr, "forkscope: variant %s: cannot execute %s%s\n", var->name, prog ? prog : "(nothing)",
                    prog && !strchr(prog, '/') ? " (give the program's path)" : "");
            json_decref(all);
            json_decref(sums);
            return HX_ETOOL;
        }
        json_object_set_new(sums, prog, json_string(hex));
    }
    json_decref(all);
    json_object_set_new(drivers, var->name, json_pack("{s:O, s:o}", "command", var->spec, "sha1", sums));
    return 0;
}

/* Runs each distinct driver once (calibrate, 1 worker) for its build flags; fills
 * env["drivers"].  Returns HX_ETOOL if one cannot be executed. */
static int probe_drivers(sweep *s, json_t *env) {
    json_t *drivers = json_object();
    json_object_set_new(env, "drivers", drivers);
    for (size_t v = 0; v < s->cfg->nvariants; v++) {
        const hx_variant *var = &s->cfg->variants[v];
        if (var->kind == HX_VARIANT_COMMAND) {
            int rc = probe_command(var, drivers);
            if (rc)
                return rc;
            continue;
        }
        cell c;
        memset(&c, 0, sizeof c);
        c.var = var;
        c.workers = 1;
        c.preps = 1;
        snprintf(c.id, sizeof c.id, "calibrate|%s|1", var->name);
        if (hx_variant_driver_path(var, c.driver, sizeof c.driver)) {
            fprintf(stderr, "forkscope: cannot locate the driver of %s (/proc/self/exe unreadable?)\n", var->name);
            return HX_ETOOL;
        }
        char **argv = run_argv(&c, 0, s->papi);
        if (!argv)
            return HX_EINTERNAL;
        char **venv = variant_env(var);
        hx_run_req rq = {argv, venv, 60, 0, NULL, NULL};
        hx_run_res r;
        int rc = hx_launcher_run(s->launcher, &rq, &r, s->intr_fd);
        free_argv(argv);
        free_argv(venv);
        if (rc) {
            fprintf(stderr, "forkscope: the launcher failed: %s\n", strerror(-rc));
            return HX_EINTERNAL;
        }
        if (r.killed == HX_KILLED_INTERRUPT) {
            hx_run_res_free(&r);
            return HX_EINTERRUPTED;
        }
        if (r.exec_errno) {
            const char *over = hx_env("FORKSCOPE_DRIVER");
            if (hx_variant_is_peer(var) && !over && !var->drivers[0])
                fprintf(stderr, "forkscope: variant %s: cannot execute its driver %s: %s (a peer: build it from your "
                                "checkout with make peers PEERS_DIR=DIR, DIR holding a checkout named %s)\n",
                        var->name, c.driver, strerror(r.exec_errno), var->base);
            else
                fprintf(stderr, "forkscope: variant %s: cannot execute its driver %s: %s (build it: make %s)\n",
                        var->name, c.driver, strerror(r.exec_errno), over ? "" : var->driver);
            hx_run_res_free(&r);
            return HX_ETOOL;
        }
        if (hx_variant_is_peer(var) && !hx_env("FORKSCOPE_DRIVER") && !hx_variant_peer_kernels(var)) {
            fprintf(stderr, "forkscope: variant %s: its driver %s does not list the kernels it runs (--kernels), so "
                            "nothing can be planned for it: a driver built before this forkscope? Rebuild it: make "
                            "peers PEERS_DIR=DIR\n", var->name, c.driver);
            hx_run_res_free(&r);
            return HX_ETOOL;
        }
        json_error_t e;
        json_t *out = r.out_len ? json_loadb(r.out, r.out_len, 0, &e) : NULL;
        json_t *build = json_object_get(out, "build");
        json_t *d = json_pack("{s:s, s:O?, s:O?, s:O?}", "path", c.driver, "flags", json_object_get(build, "flags"),
                              "compiler", json_object_get(build, "compiler"), "git", json_object_get(build, "git"));
        if (var->env)
            json_object_set(d, "env", var->env);
        if (json_object_get(out, "peer")) /* a peer's checkout revision and flags */
            json_object_set(d, "peer", json_object_get(out, "peer"));
        if (!build)
            fprintf(stderr, "forkscope: warning: variant %s: the driver's calibrate run gave no build info (%s)\n",
                    var->name, r.exited ? "exit status" : "signal");
        json_object_set_new(drivers, var->name, d);
        json_decref(out);
        hx_run_res_free(&r);
    }
    return 0;
}

/* ---- the sweep -------------------------------------------------------------------------------- */

static int same_bytes(const char *path, const char *text, size_t len) {
    size_t n;
    char *t = hx_read_file(path, &n);
    int same = t && n == len && !memcmp(t, text, len);
    free(t);
    return same;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Stage 1: the configuration, the directory and the plan. */
static int sweep_open(sweep *s) {
    const hx_sweep_opts *o = s->o;
    int rc = hx_config_load(o->config_path, o->cores ? o->cores : hx_online_cores(), &s->config, &s->diag);
    if (rc) {
        hx_config_diag_print(&s->diag, stderr);
        if (rc == HX_ECONFIG)
            fprintf(stderr, "forkscope: %s: %zu error%s; nothing was run\n", o->config_path, s->diag.n,
                    s->diag.n == 1 ? "" : "s");
        return rc;
    }
    const hx_config *cfg = s->cfg = &s->config;
    if (o->outdir)
        snprintf(s->dir, sizeof s->dir, "%s", o->outdir);
    else
        snprintf(s->dir, sizeof s->dir, "results/%s", cfg->name);
    snprintf(s->raw_path, sizeof s->raw_path, "%s/raw.jsonl", s->dir);
    snprintf(s->config_copy, sizeof s->config_copy, "%s/config.json", s->dir);
    if (hx_plan_build(cfg, &s->pl)) {
        fprintf(stderr, "forkscope: internal error: the plan has more cells than counted\n");
        return HX_EINTERNAL;
    }
    if (cfg->npapi) { /* the drivers' --papi EVENT,... */
        size_t len = 1;
        for (size_t i = 0; i < cfg->npapi; i++)
            len += strlen(cfg->papi_events[i]) + 1;
        char *p = s->papi = hx_xmalloc(len);
        *p = 0;
        for (size_t i = 0; i < cfg->npapi; i++)
            p = stpcpy(stpcpy(p, i ? "," : ""), cfg->papi_events[i]);
    }
    return 0;
}

/* Stage 2: what the directory holds already (s->done_recs), checked against the options:
 * results without --resume, or a config.json that differs, stop the sweep here. */
static int sweep_reconcile(sweep *s) {
    const hx_sweep_opts *o = s->o;
    struct stat st;
    s->have_raw = stat(s->raw_path, &st) == 0;
    s->have_config = stat(s->config_copy, &st) == 0;
    if (o->dry_run) {
        int why = 0;
        s->done_recs = s->have_raw ? hx_records_read_raw(s->raw_path, 0, &why) : NULL;
    } else if (s->have_raw && !o->resume) {
        fprintf(stderr,
                "forkscope: %s already holds results (raw.jsonl): continue them with --resume, or choose another "
                "directory with -o\n",
                s->dir);
        return HX_EUSAGE;
    } else if (o->resume && (s->have_raw || s->have_config)) {
        if (!s->have_config) {
            fprintf(stderr, "forkscope: cannot resume %s: it has raw.jsonl but no config.json to compare with %s\n",
                    s->dir, s->cfg->path);
            return HX_EIO;
        }
        if (!same_bytes(s->config_copy, s->cfg->text, s->cfg->text_len)) {
            fprintf(stderr,
                    "forkscope: cannot resume %s: %s differs from %s, the configuration the sweep started with.\n"
                    "  Resume with that file (forkscope run %s -o %s --resume), or start a new sweep in another "
                    "directory (-o).\n",
                    s->dir, s->cfg->path, s->config_copy, s->config_copy, s->dir);
            return HX_ECONFIG;
        }
        int why = HX_EIO;
        if (!(s->done_recs = hx_records_read_raw(s->raw_path, 1, &why)))
            return why;
    }
    if (!s->done_recs)
        s->done_recs = json_array();
    return 0;
}

/* Stage 3: the runs already done, accounted to their cells (and, for --dry-run, their
 * median wall time as the cell's estimate). */
static void sweep_account_done(sweep *s) {
    json_t *done = s->done_recs;
    s->ndone = json_array_size(done);
    s->done_ids = hx_xcalloc(s->ndone + 1, sizeof *s->done_ids);
    for (size_t i = 0; i < s->ndone; i++)
        s->done_ids[i] = (char *)json_string_value(json_object_get(json_array_get(done, i), "run_id"));
    qsort(s->done_ids, s->ndone, sizeof *s->done_ids, cmp_str);
    for (size_t i = 0; i < s->pl.ncells; i++) {
        cell *c = &s->pl.cells[i];
        double wall[64];
        size_t nwall = 0;
        for (size_t k = 0; k < s->ndone; k++) {
            json_t *r = json_array_get(done, k);
            if (strcmp(hx_json_str(r, "cell_id", ""), c->id))
                continue;
            if (s->o->dry_run && nwall < 64 && json_is_number(json_object_get(r, "wall_s")) &&
                !strcmp(hx_json_str(r, "status", ""), "ok"))
                wall[nwall++] = json_number_value(json_object_get(r, "wall_s"));
            long rep = (long)json_integer_value(json_object_get(r, "rep"));
            if (rep >= 0 && (unsigned long)rep < c->reps) {
                account(c, r);
                s->already++;
            }
        }
        s->cells_done += c->done >= c->reps;
        c->est_measured = nwall > 0;
        c->est_s = nwall ? hx_median_copy(wall, nwall) : hx_plan_estimate(c, s->cfg->cores);
    }
}

/* SIGINT and SIGTERM set got_signal and wake the launcher through a self-pipe. */
static int signals_install(sweep *s) {
    if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK))
        return -errno;
    s->intr_fd = sig_pipe[0];
    got_signal = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: a blocking call returns EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &s->old_int);
    sigaction(SIGTERM, &sa, &s->old_term);
    s->handlers = 1;
    return 0;
}

static void signals_restore(sweep *s) {
    if (s->handlers) {
        sigaction(SIGINT, &s->old_int, NULL);
        sigaction(SIGTERM, &s->old_term, NULL);
        s->handlers = 0;
    }
    if (sig_pipe[0] >= 0) {
        close(sig_pipe[0]);
        close(sig_pipe[1]);
        sig_pipe[0] = sig_pipe[1] = -1;
    }
    s->intr_fd = -1;
}

/* The "peers" left out because their drivers are not built (env.json's "peers_left_out"). */
static json_t *left_out_json(const hx_config *cfg) {
    json_t *a = json_array();
    for (size_t i = 0; i < cfg->nleft_out; i++)
        json_array_append_new(a, json_string(cfg->left_out[i]));
    return a;
}

/* The kernels each peer of the config runs, as its driver lists them (env.json's
 * "peer_kernels"; null for a driver that does not answer): the plan depends on them. */
static json_t *peer_kernels_json(const hx_config *cfg) {
    json_t *o = json_object();
    for (size_t v = 0; v < cfg->nvariants; v++)
        if (hx_variant_is_peer(&cfg->variants[v])) {
            const char *k = hx_variant_peer_kernels(&cfg->variants[v]);
            json_object_set_new(o, cfg->variants[v].name, k ? json_string(k) : json_null());
        }
    return o;
}

/* On a resume: env.json's `key` (if it has one) must equal `now` (consumed); else a message
 * naming what differs, then and now, and how to go on, and HX_ECONFIG. */
static int same_as_started(const sweep *s, const char *key, json_t *now, const char *what, const char *fix) {
    json_t *then = json_object_get(s->envinfo, key);
    int rc = 0;
    if (then && !json_equal(then, now)) {
        char *a = json_dumps(then, JSON_COMPACT), *b = json_dumps(now, JSON_COMPACT);
        fprintf(stderr, "forkscope: cannot resume %s: %sthen: %s; now: %s). %s, or start a new sweep in another "
                        "directory (-o)\n", s->dir, what, a ? a : "?", b ? b : "?", fix);
        free(a);
        free(b);
        rc = HX_ECONFIG;
    }
    json_decref(now);
    return rc;
}

/* What a fresh sweep records in env.json beside hx_envinfo_collect's machine. */
static void env_first_record(sweep *s, json_t *env) {
    const hx_config *cfg = s->cfg;
    json_object_set_new(env, "time_limit_s", cfg->time_limit_s > 0 ? json_real(cfg->time_limit_s) : json_null());
    json_object_set_new(env, "memory_limit",
                        json_pack("{s:o, s:s}", "limit_mib",
                                  cfg->memory_limit_mib ? json_integer((json_int_t)cfg->memory_limit_mib) : json_null(),
                                  "mechanism", cfg->memory_limit_mib ? hx_launcher_mechanism(s->launcher) : "none"));
    json_t *papi = json_array();
    for (size_t i = 0; i < cfg->npapi; i++)
        json_array_append_new(papi, json_string(cfg->papi_events[i]));
    json_object_set_new(env, "papi_events", papi);
    json_object_set_new(env, "peers_left_out", left_out_json(cfg));
    json_object_set_new(env, "peer_kernels", peer_kernels_json(cfg));
    json_object_set_new(env, "measurement",
                        json_pack("{s:s, s:s}", "launcher",
                                  "each run is a fresh driver process forked by a small launcher process; "
                                  "maxrss from wait4() on it",
                                  "runs", "--reps R --warmup W per process (R, W: the config's process_reps "
                                          "and warmup; time_s is the median of the R)"));
}

/* A resumed sweep keeps env.json's first record, warns about what changed and appends the
 * resume (now: this machine's record now). */
static void env_note_resume(sweep *s, json_t *env, json_t *now) {
    static const char *const keys[] = {"host", "cpu_model", "cores", "git_revision", "bundle", "drivers"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (!json_equal(json_object_get(env, keys[k]), json_object_get(now, keys[k])))
            fprintf(stderr, "forkscope: warning: resuming with a different %s than the sweep started with\n", keys[k]);
    json_t *resumes = json_object_get(env, "resumes");
    if (!json_is_array(resumes))
        json_object_set_new(env, "resumes", resumes = json_array());
    json_array_append_new(resumes, json_pack("{s:O, s:O, s:O, s:O, s:O, s:O, s:I}", "date",
                                             json_object_get(now, "date"), "host", json_object_get(now, "host"),
                                             "cpu_model", json_object_get(now, "cpu_model"), "git_revision",
                                             json_object_get(now, "git_revision"), "git_dirty",
                                             json_object_get(now, "git_dirty"), "drivers",
                                             json_object_get(now, "drivers"), "runs_before", (json_int_t)s->already));
}

/* env.json: collected (fresh) or read back and extended (resume), the drivers probed. */
static int write_env(sweep *s, int fresh) {
    for (const char *const *r = runtime_settings; *r; r++)
        if (hx_env(*r))
            fprintf(stderr, "forkscope: %s=%.64s in the environment is not passed to the runs: a variant's \"env\" "
                            "sets it\n", *r, hx_env(*r));
    if (fresh) {
        s->envinfo = hx_envinfo_collect(s->cfg->path);
    } else {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/env.json", s->dir);
        json_error_t e;
        s->envinfo = json_load_file(path, 0, &e);
        if (!json_is_object(s->envinfo)) {
            json_decref(s->envinfo);
            s->envinfo = hx_envinfo_collect(s->cfg->path); /* lost: collect it anew */
        }
    }
    if (!fresh) {
        /* The plan depends on which of the "peers" are built and on the kernels each one's
         * driver lists: a resumed sweep (or a shard) must see the same, or its rounds and
         * cells would not be the sweep's.  (An env.json written before a key was recorded is
         * not checked for it.) */
        int rc = same_as_started(s, "peers_left_out", left_out_json(s->cfg),
                                 "the config's \"peers\" built here differ from when the sweep started (left out",
                                 "Build (make peers PEERS_DIR=DIR) or remove peer drivers to match");
        if (!rc)
            rc = same_as_started(s, "peer_kernels", peer_kernels_json(s->cfg),
                                 "the peers' drivers list other kernels than when the sweep started (",
                                 "A peer driver was rebuilt: rebuild it as it was");
        if (rc)
            return rc;
    }
    char left_out[600];
    if (s->cfg->nleft_out)
        fprintf(stderr, "forkscope: left out: the peers %s, not built (\"peers\" runs them once built: make peers "
                        "PEERS_DIR=DIR)\n",
                hx_config_left_out_list(s->cfg, left_out, sizeof left_out));
    for (size_t b = 0; b < s->cfg->nbenchmarks; b++)
        if (!s->cfg->benchmarks[b].variants)
            fprintf(stderr, "forkscope: left out: benchmark %s, whose own \"variants\" names only peers that are not "
                            "built\n", s->cfg->benchmarks[b].name);
    hx_plan_command_reps_note(stderr, s->cfg, "forkscope: note: ");
    json_t *now = fresh ? NULL : hx_envinfo_collect(s->cfg->path);
    int rc = probe_drivers(s, now ? now : s->envinfo);
    if (!rc) {
        if (now)
            env_note_resume(s, s->envinfo, now);
        else
            env_first_record(s, s->envinfo);
    }
    json_decref(now);
    if (rc)
        return rc;
    char *text = json_dumps(s->envinfo, JSON_INDENT(2));
    rc = text ? write_atomic(s->dir, "env.json", text, strlen(text)) : -1;
    if (rc)
        fprintf(stderr, "forkscope: cannot write %s/env.json: %s\n", s->dir, strerror(errno));
    free(text);
    return rc ? HX_EIO : 0;
}

/* Stage 4: the launcher, the signal handlers, the directory with config.json and env.json,
 * raw.jsonl open for appending. */
static int sweep_start(sweep *s) {
    const hx_sweep_opts *o = s->o;
    if (o->launcher) {
        s->launcher = o->launcher;
    } else {
        int e = hx_launcher_start(&s->launcher);
        if (e) {
            fprintf(stderr, "forkscope: cannot start the launcher process: %s\n", strerror(-e));
            return HX_EINTERNAL;
        }
        s->own_launcher = 1;
    }
    if (signals_install(s))
        return HX_EINTERNAL;
    if (hx_mkdir_p(s->dir)) {
        fprintf(stderr, "forkscope: cannot create %s: %s\n", s->dir, strerror(errno));
        return HX_EIO;
    }
    /* A fresh sweep (no --resume: raw.jsonl is absent, checked before) writes config.json,
     * even over one left by a start that recorded nothing. */
    int fresh = !o->resume || !s->have_config;
    if (fresh && write_atomic(s->dir, "config.json", s->cfg->text, s->cfg->text_len)) {
        fprintf(stderr, "forkscope: cannot write %s: %s\n", s->config_copy, strerror(errno));
        return HX_EIO;
    }
    int rc = write_env(s, fresh);
    if (rc)
        return rc;
    s->raw_created = !s->have_raw;
    s->raw_fd = open(s->raw_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
    if (s->raw_fd < 0) {
        fprintf(stderr, "forkscope: cannot open %s: %s\n", s->raw_path, strerror(errno));
        return HX_EIO;
    }
    return 0;
}

/* Runs one run (rep of cell c) and appends its record. */
static int run_and_record(sweep *s, cell *c, unsigned rep) {
    char **argv = run_argv(c, c->warmup, s->papi);
    if (!argv)
        return HX_EINTERNAL;
    hx_progress_run_start(s->prog, c->id);
    char **env = variant_env(c->var);
    hx_run_req rq = {argv, env, s->cfg->time_limit_s, s->cfg->memory_limit_mib << 20, hx_progress_tick, s->prog};
    hx_run_res r;
    double started = hx_envinfo_wall_time();
    int e = hx_launcher_run(s->launcher, &rq, &r, s->intr_fd);
    free_argv(argv);
    free_argv(env);
    if (e) {
        hx_progress_note(s->prog, "forkscope: the launcher process failed (%s); stopping", strerror(-e));
        return HX_EINTERNAL;
    }
    if (r.killed == HX_KILLED_INTERRUPT || got_signal) { /* not a result: the user stopped it */
        hx_run_res_free(&r);
        return HX_EINTERRUPTED;
    }
    hx_record_ctx x = {s->cfg->time_limit_s, s->cfg->memory_limit_mib, hx_launcher_mechanism(s->launcher), s->o->host};
    json_t *rec = hx_records_make(&x, c, rep, &r, started);
    hx_run_res_free(&r);
    if (append_record(s, rec)) {
        hx_progress_note(s->prog, "forkscope: cannot append to %s: %s", s->raw_path, strerror(errno));
        json_decref(rec);
        return HX_EIO;
    }
    account(c, rec);
    json_decref(rec);
    hx_progress_run_done(s->prog);
    if (c->done == c->reps) {
        char fails[160];
        unsigned nfail;
        failures_text(c, fails, sizeof fails, &nfail);
        hx_progress_cell_done(s->prog, c->id, c->fails[HX_ST_OK], nfail, hx_median_copy(c->times, c->ntimes), fails);
    }
    return 0;
}

/* Is cell `id` one this sweep runs (every cell, or one of the shard's)? */
static int in_shard(const sweep *s, const char *id) {
    if (!s->o->only_cells)
        return 1;
    for (size_t i = 0; i < s->o->nonly_cells; i++)
        if (!strcmp(s->o->only_cells[i], id))
            return 1;
    return 0;
}

/* The runs this sweep runs: the plan's, or those of the shard's cells (in the plan's order). */
static int sweep_select(sweep *s) {
    if (!s->o->only_cells) {
        s->shard = s->pl.runs;
        s->nshard = s->pl.nruns;
        return 0;
    }
    /* every cell the shard was given must be in this machine's plan (one whose variant is a
     * peer left out here is not: it would never run, and status would ask for it forever) */
    for (size_t k = 0; k < s->o->nonly_cells; k++) {
        size_t i = 0;
        while (i < s->pl.ncells && strcmp(s->pl.cells[i].id, s->o->only_cells[k]))
            i++;
        if (i == s->pl.ncells) {
            char left_out[600];
            fprintf(stderr,
                    "forkscope: the shard's cell %s is not in this node's plan of %s (a peer not built here?%s%s)\n",
                    s->o->only_cells[k], s->cfg->path, s->cfg->nleft_out ? " left out: " : "",
                    hx_config_left_out_list(s->cfg, left_out, sizeof left_out));
            return HX_ECONFIG;
        }
    }
    char *mine = hx_xcalloc(s->pl.ncells + 1, 1);
    for (size_t i = 0; i < s->pl.ncells; i++)
        mine[i] = (char)in_shard(s, s->pl.cells[i].id);
    s->shard = hx_xcalloc(s->pl.nruns + 1, sizeof *s->shard);
    s->nshard = 0;
    for (size_t i = 0; i < s->pl.nruns; i++)
        if (mine[s->pl.runs[i].cell])
            s->shard[s->nshard++] = s->pl.runs[i];
    free(mine);
    return 0;
}

/* Stage 5: runs runs[0..n) of the plan in order, skipping those already recorded; *ran
 * counts the new records.  0, or the code that stopped it (HX_EINTERRUPTED on a signal). */
static int sweep_run_shard(sweep *s, const run *runs, size_t n, size_t *ran) {
    *ran = 0;
    for (size_t i = 0; i < n && !got_signal; i++) {
        cell *c = &s->pl.cells[runs[i].cell];
        char run_id[240];
        snprintf(run_id, sizeof run_id, "%s#%u", c->id, runs[i].rep);
        const char *key = run_id;
        if (bsearch(&key, s->done_ids, s->ndone, sizeof *s->done_ids, cmp_str))
            continue;
        int rc = run_and_record(s, c, runs[i].rep);
        if (rc)
            return rc;
        ++*ran;
    }
    return got_signal ? HX_EINTERRUPTED : 0;
}

/* Stage 6: the totals over the whole raw.jsonl, then the instruction counts if asked for. */
static int sweep_finish(sweep *s, size_t ran) {
    unsigned totals[HX_NSTATUS] = {0};
    for (size_t i = 0; i < s->pl.ncells; i++)
        if (in_shard(s, s->pl.cells[i].id))
            for (int k = 0; k < HX_NSTATUS; k++)
                totals[k] += s->pl.cells[i].fails[k];
    unsigned nfailed = 0;
    char ftext[256] = "";
    for (int k = 1; k < HX_NSTATUS; k++)
        if (totals[k]) {
            size_t u = strlen(ftext);
            snprintf(ftext + u, sizeof ftext - u, "%s%s:%u", u ? ";" : "", hx_status_names[k], totals[k]);
            nfailed += totals[k];
        }
    fprintf(stderr, "forkscope: %zu runs in %s (%zu now): %u ok, %u failed%s%s%s\n", s->nshard, s->raw_path, ran,
            totals[HX_ST_OK], nfailed, nfailed ? " (" : "", ftext, nfailed ? ")" : "");
    int rc = nfailed ? HX_ERUNS_FAILED : 0;
    if (s->cfg->icount_n[1] && !s->o->no_instructions) { /* after the timed runs: callgrind slows everything else down */
        int e = hx_icount_run(s->cfg, s->dir, s->launcher, s->intr_fd);
        if (e && !rc)
            rc = e;
    }
    if (!s->o->no_instructions && !got_signal) { /* "span": likewise after the runs, once */
        int e = hx_span_sweep(s->cfg, s->dir, s->launcher, s->intr_fd);
        if (e == HX_EINTERRUPTED) {
            fprintf(stderr, "  To continue: forkscope run %s -o %s --resume\n", s->cfg->path, s->dir);
            rc = e;
        } else if (e && !rc) {
            rc = HX_ERUNS_FAILED; /* (a failed measurement: said, and the analysis goes on) */
        }
    }
    return rc;
}

static void sweep_close(sweep *s) {
    if (s->shard != s->pl.runs)
        free(s->shard);
    hx_progress_finish(s->prog);
    if (s->raw_fd >= 0)
        close(s->raw_fd);
    signals_restore(s);
    if (s->own_launcher)
        hx_launcher_stop(s->launcher);
    json_decref(s->envinfo);
    free(s->done_ids);
    json_decref(s->done_recs);
    hx_plan_free(&s->pl);
    free(s->papi);
    if (s->cfg)
        hx_config_free(&s->config);
    hx_config_diag_free(&s->diag);
}

int hx_sweep_run(const hx_sweep_opts *o, char *dir_out, size_t dirlen) {
    sweep s;
    memset(&s, 0, sizeof s);
    s.o = o;
    s.raw_fd = -1;
    s.intr_fd = -1;
    int rc = sweep_open(&s);
    if (!rc && dir_out)
        snprintf(dir_out, dirlen, "%s", s.dir);
    if (!rc)
        rc = sweep_reconcile(&s);
    if (rc)
        goto out;
    sweep_account_done(&s);
    if (o->dry_run) {
        int measured = 0;
        for (size_t i = 0; i < s.pl.ncells; i++)
            measured |= s.pl.cells[i].est_measured;
        hx_plan_print(o->plan_out ? o->plan_out : stdout, s.cfg, &s.pl, s.dir, s.already, measured);
        if (s.cfg->order == HX_ORDER_PAIRED || s.cfg->order == HX_ORDER_INTERLEAVED)
            hx_plan_print_power(o->plan_out ? o->plan_out : stdout, s.cfg, &s.pl, s.done_recs, o->effect, o->cv);
        hx_plan_print_modes(o->plan_out ? o->plan_out : stdout, &s.pl, s.done_recs);
        goto out;
    }
    if ((rc = sweep_select(&s)) || (rc = sweep_start(&s)))
        goto out;
    size_t ncells = 0, cells_done = 0, already = 0;
    for (size_t i = 0; i < s.pl.ncells; i++)
        if (in_shard(&s, s.pl.cells[i].id)) {
            ncells++;
            cells_done += s.pl.cells[i].done >= s.pl.cells[i].reps;
            already += s.pl.cells[i].done < s.pl.cells[i].reps ? s.pl.cells[i].done : s.pl.cells[i].reps;
        }
    s.prog = hx_progress_new(stderr, o->live_progress, ncells, s.nshard, cells_done, already);
    if (already)
        hx_progress_note(s.prog, "forkscope: resuming %s: %zu of %zu runs already done", s.dir, already, s.nshard);
    if (s.cfg->memory_limit_mib)
        hx_progress_note(s.prog, "forkscope: memory limit %llu MiB per run by %s", s.cfg->memory_limit_mib,
                         hx_launcher_mechanism(s.launcher));
    size_t ran = 0;
    rc = sweep_run_shard(&s, s.shard, s.nshard, &ran);
    hx_progress_finish(s.prog);
    s.prog = NULL;
    if (rc == HX_EINTERRUPTED)
        fprintf(stderr,
                "forkscope: interrupted (%s) after %zu of %zu runs; every finished run is in %s.\n"
                "  To continue: forkscope run %s -o %s --resume\n",
                got_signal == SIGINT ? "SIGINT" : "SIGTERM", already + ran, s.nshard, s.raw_path, s.cfg->path,
                s.dir);
    else if (!rc)
        rc = sweep_finish(&s, ran);
out:
    sweep_close(&s);
    return rc;
}
