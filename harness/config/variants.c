/* variants.c — variant names, their drivers, and `forkscope variants`. */
#include "harness/util/env.h"
#include "harness/config/variants.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct axis_value {
    const char *name, *what;
};

static const struct axis_value steal_axis[] = {
    {"cont", "continuation stealing: the child runs at once, thieves take the parent's continuation"},
    {"child", "child stealing: the parent goes on, thieves take the forked child"},
    {NULL, NULL},
};
static const struct axis_value stack_axis[] = {
    {"seg", "segmented frame stacks: linked stacklets that double in size"},
    {"lin", "linear frame stacks: one contiguous reserved region per stack"},
    {"native", "frames in the tasks' own C stack frames; a join that must wait steals meanwhile "
               "(leapfrogging, as Lace) instead of suspending; child stealing only"},
    {"fiber", "frames in the tasks' C stack frames on stackful fibers; a join that must wait parks "
              "its fiber and the worker goes on with another (marl, FiberTaskingLib); child stealing "
              "only; names a fourth axis, resume"},
    {NULL, NULL},
};
/* Fiber variants only: where a parked fiber resumes (the driver's --resume). */
static const struct axis_value resume_axis[] = {
    {"any", "on the worker that completes what it waited for: fibers migrate (FiberTaskingLib)"},
    {"home", "only on the worker that made it: a fiber never moves (marl)"},
    {NULL, NULL},
};
static const struct axis_value sched_axis[] = {
    {"busy", "idle workers keep trying to steal (pause, backoff, yield)"},
    {"lazy", "idle workers sleep; while any worker is busy one thief stays awake"},
    {NULL, NULL},
};

struct baseline {
    const char *name;
    hx_variant_kind kind;
    const char *what;
    const char *kernels; /* peers only (NULL: a baseline): the kernels their driver has, as peers/NAME.c's
                          * bench_peer_kernels (scripts/peers-test.sh checks that they agree) */
};
/* What every peer's driver runs: the paper's kernels and the M:N workloads fork-join expresses
 * (all but switch, whose tasks block on each other). */
#define PEER_KERNELS " fib integrate matmul nqueens uts balanced imbalanced heat bfs mergesort "
static const struct baseline baselines[] = {
    {"serial", HX_VARIANT_SERIAL, "the serial projection (forks become calls); 1 worker only", NULL},
    {"omp", HX_VARIANT_BASELINE, "OpenMP tasks, gcc + libgomp", NULL},
    {"omp-llvm", HX_VARIANT_BASELINE, "OpenMP tasks, clang + libomp (what the paper compared against)", NULL},
    {"tbb", HX_VARIANT_BASELINE, "oneTBB task_group, g++ (the paper's TBB column)", NULL},
    /* Peers: other runtimes, with drivers built from the user's checkouts (make peers). */
    {"lace", HX_VARIANT_BASELINE, "Lace: child stealing, leapfrogging, native stacks (peer: make peers PEERS_DIR=DIR)",
     PEER_KERNELS},
    {"fibril", HX_VARIANT_BASELINE,
     "Fibril: continuation stealing on native stacks, x86-64 only; at most one worker per CPU, forks nested "
     "at most 999 deep (peer: make peers PEERS_DIR=DIR)",
     PEER_KERNELS},
    {"taskflow", HX_VARIANT_BASELINE,
     "Taskflow: tf::Subflow recursion, work-stealing executor (peer: make peers PEERS_DIR=DIR)",
     PEER_KERNELS},
    {"libfork-busy", HX_VARIANT_BASELINE,
     "libfork, the paper's system: continuation stealing, coroutines, busy_pool, clang++-19 "
     "(peer: make peers PEERS_DIR=DIR)",
     PEER_KERNELS},
    {"libfork-lazy", HX_VARIANT_BASELINE,
     "libfork, the paper's system: continuation stealing, coroutines, lazy_pool (idle workers sleep), "
     "clang++-19 (peer: make peers PEERS_DIR=DIR)",
     PEER_KERNELS},
    {NULL, 0, NULL, NULL},
};

const char *const hx_variant_names[] = {
    "cont-seg-busy",  "cont-seg-lazy",  "cont-lin-busy",     "cont-lin-lazy",     "child-seg-busy", "child-seg-lazy",
    "child-lin-busy", "child-lin-lazy", "child-native-busy", "child-native-lazy", "child-fiber-busy-any",
    "child-fiber-busy-home", "child-fiber-lazy-any", "child-fiber-lazy-home", "serial", "omp", "omp-llvm", "tbb",
    "lace", "fibril", "taskflow", "libfork-busy", "libfork-lazy", NULL,
};

/* Stealing-stack pairs that do not exist, and why. */
static const char *refused_pair(const char *steal, const char *stack) {
    if (!strcmp(steal, "cont") && !strcmp(stack, "native"))
        return "continuation stealing with frames on the native C stack would need Fibril's stack switching "
               "(a thief resumes a frame that lives on another worker's stack), which forkscope does not "
               "implement; use cont-seg or cont-lin, or child-native";
    if (!strcmp(steal, "cont") && !strcmp(stack, "fiber"))
        return "fibers run tasks by child stealing (a parked fiber is the continuation, resumed once its "
               "children finish); use child-fiber-SCHED-RESUME, e.g. child-fiber-busy-any";
    return NULL;
}

static const char *axis_list(const struct axis_value *a, char *buf, size_t len) {
    buf[0] = 0;
    for (size_t i = 0; a[i].name; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", i ? "|" : "", a[i].name);
    }
    return buf;
}

static int axis_find(const struct axis_value *a, const char *s, size_t n) {
    for (int i = 0; a[i].name; i++)
        if (strlen(a[i].name) == n && !strncmp(a[i].name, s, n))
            return i;
    return -1;
}

int hx_variant_parse(const char *name, hx_variant *v, char *err, size_t errlen) {
    memset(v, 0, sizeof *v);
    if (!name || !*name)
        return snprintf(err, errlen, "empty variant name (try `forkscope variants`)"), -EINVAL;
    /* A baseline, or a baseline with parts wrongly attached (the longest name that is a
     * prefix, so that "omp-llvm-busy" is read as omp-llvm + "-busy"). */
    const struct baseline *longest = NULL;
    for (size_t i = 0; baselines[i].name; i++) {
        size_t n = strlen(baselines[i].name);
        if (!strncmp(name, baselines[i].name, n) && (name[n] == 0 || name[n] == '-') &&
            (!longest || n > strlen(longest->name)))
            longest = &baselines[i];
    }
    if (longest) {
        const struct baseline *b = longest;
        size_t n = strlen(b->name);
        if (!strcmp(name, b->name)) {
            v->kind = b->kind;
            snprintf(v->name, sizeof v->name, "%s", b->name);
            snprintf(v->base, sizeof v->base, "%s", b->name);
            snprintf(v->driver, sizeof v->driver, "fk-bench-%s", b->name);
            return 0;
        }
        const char *rest = name + n + 1;
        if (axis_find(sched_axis, rest, strlen(rest)) >= 0)
            return snprintf(err, errlen, "'%s': baselines and peers (serial, omp, omp-llvm, tbb, lace, fibril, taskflow, libfork-busy, libfork-lazy) take no scheduler (write '%s')", name, b->name),
                   -EINVAL;
        return snprintf(err, errlen, "'%s': the baseline '%s' has no '-%s' part", name, b->name, rest), -EINVAL;
    }
    /* A runtime variant: exactly three parts. */
    const struct axis_value *axes[3] = {steal_axis, stack_axis, sched_axis};
    static const char *const axis_names[3] = {"stealing", "frame stack", "scheduler"};
    int idx[3];
    const char *p = name;
    char list[64];
    for (int a = 0; a < 3; a++) {
        const char *dash = strchr(p, '-');
        size_t n = dash ? (size_t)(dash - p) : strlen(p);
        idx[a] = axis_find(axes[a], p, n);
        if (idx[a] < 0) {
            if (a == 0 && n == strlen(name))
                return snprintf(err, errlen,
                                "unknown variant '%s' (a runtime variant is stealing-stack-scheduler, e.g. "
                                "cont-seg-busy; baselines: serial, omp, omp-llvm, tbb; peers: lace)",
                                name),
                       -1;
            return snprintf(err, errlen, "'%s': '%.*s' is not a %s value (one of %s)", name, (int)n, p,
                            axis_names[a], axis_list(axes[a], list, sizeof list)),
                   -1;
        }
        if (a < 2 && !dash)
            return snprintf(err, errlen, "'%s': missing the %s axis (one of %s), e.g. %s-%s%s", name,
                            axis_names[a + 1], axis_list(axes[a + 1], list, sizeof list), name,
                            axes[a + 1][0].name, a == 0 ? "-busy" : ""),
                   -1;
        if (a == 2 && dash && strcmp(stack_axis[idx[1]].name, "fiber"))
            return snprintf(err, errlen, "'%s': unexpected '%s' after the scheduler (a variant has 3 parts)", name,
                            dash),
                   -1;
        p = dash ? dash + 1 : p + n;
    }
    const char *why = refused_pair(steal_axis[idx[0]].name, stack_axis[idx[1]].name);
    if (why)
        return snprintf(err, errlen, "'%s': %s", name, why), -EINVAL;
    int resume = -1;
    if (!strcmp(stack_axis[idx[1]].name, "fiber")) { /* the fourth axis */
        if (!*p || p == name + strlen(name))
            return snprintf(err, errlen, "'%s': missing the resume axis of a fiber variant (one of %s), e.g. %s-any",
                            name, axis_list(resume_axis, list, sizeof list), name),
                   -1;
        resume = axis_find(resume_axis, p, strlen(p));
        if (resume < 0)
            return snprintf(err, errlen, "'%s': '%s' is not a resume value (one of %s)", name, p,
                            axis_list(resume_axis, list, sizeof list)),
                   -1;
    }
    v->kind = HX_VARIANT_RUNTIME;
    snprintf(v->name, sizeof v->name, "%s-%s-%s%s%s", steal_axis[idx[0]].name, stack_axis[idx[1]].name,
             sched_axis[idx[2]].name, resume >= 0 ? "-" : "", resume >= 0 ? resume_axis[resume].name : "");
    if (resume >= 0)
        snprintf(v->resume, sizeof v->resume, "%s", resume_axis[resume].name);
    snprintf(v->driver, sizeof v->driver, "fk-bench-%s-%s", steal_axis[idx[0]].name, stack_axis[idx[1]].name);
    snprintf(v->sched, sizeof v->sched, "%s", sched_axis[idx[2]].name);
    snprintf(v->base, sizeof v->base, "%s", v->name);
    return 0;
}

int hx_variant_is_peer(const hx_variant *v) {
    if (v->kind != HX_VARIANT_BASELINE)
        return 0;
    for (size_t b = 0; baselines[b].name; b++)
        if (baselines[b].kernels && !strcmp(v->base, baselines[b].name))
            return 1;
    return 0;
}

int hx_variant_runs_kernel(const hx_variant *v, const char *kernel, const char **kernels) {
    for (size_t b = 0; v->kind == HX_VARIANT_BASELINE && baselines[b].name; b++)
        if (baselines[b].kernels && !strcmp(v->base, baselines[b].name)) {
            char word[40];
            snprintf(word, sizeof word, " %.30s ", kernel);
            if (kernels)
                *kernels = baselines[b].kernels;
            return strstr(baselines[b].kernels, word) != NULL;
        }
    return 1;
}

const char *hx_variant_class(const hx_variant *v) {
    switch (v->kind) {
    case HX_VARIANT_SERIAL:
        return "serial";
    case HX_VARIANT_BASELINE:
    case HX_VARIANT_COMMAND:
        return "baseline";
    case HX_VARIANT_RUNTIME:
        break;
    }
    return "parallel";
}

/* This build's drivers directory: ../libexec/forkscope beside the executable's directory when
 * that is a directory (an installed tree or make bundle's: bin/forkscope,
 * libexec/forkscope/fk-bench-*), else the executable's own directory (build/bin). */
static int drivers_dir(char *buf, size_t len) {
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return n < 0 ? -errno : -ENOENT;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (!slash)
        return -ENOENT;
    *slash = 0;
    char libexec[PATH_MAX + 24], real[PATH_MAX];
    struct stat st;
    snprintf(libexec, sizeof libexec, "%s/../libexec/forkscope", self);
    if (realpath(libexec, real) && !stat(real, &st) && S_ISDIR(st.st_mode)) /* (bin/.. resolved: paths in env.json read plainly) */
        return (size_t)snprintf(buf, len, "%s", real) < len ? 0 : -ENAMETOOLONG;
    return (size_t)snprintf(buf, len, "%s", self) < len ? 0 : -ENAMETOOLONG;
}

int hx_variant_driver_path(const hx_variant *v, char *buf, size_t len) {
    const char *over = hx_env("FORKSCOPE_DRIVER");
    if (over && *over)
        return (size_t)snprintf(buf, len, "%s", over) < len ? 0 : -ENAMETOOLONG;
    if (v->drivers[0])
        return (size_t)snprintf(buf, len, "%s/%s", v->drivers, v->driver) < len ? 0 : -ENAMETOOLONG;
    char dir[PATH_MAX];
    int rc = drivers_dir(dir, sizeof dir);
    if (rc)
        return rc;
    return (size_t)snprintf(buf, len, "%s/%s", dir, v->driver) < len ? 0 : -ENAMETOOLONG;
}

void hx_variants_print(FILE *out) {
    fprintf(out, "Runtime variants (stealing-stack-scheduler):\n");
    for (size_t s = 0; steal_axis[s].name; s++)
        for (size_t k = 0; stack_axis[k].name; k++)
            for (size_t h = 0; sched_axis[h].name && !refused_pair(steal_axis[s].name, stack_axis[k].name); h++) {
                int fiber = !strcmp(stack_axis[k].name, "fiber");
                for (size_t r = 0; fiber ? resume_axis[r].name != NULL : r == 0; r++) {
                    char name[40], resume[32] = "";
                    if (fiber)
                        snprintf(resume, sizeof resume, " --resume %s", resume_axis[r].name);
                    snprintf(name, sizeof name, "%s-%s-%s%s%s", steal_axis[s].name, stack_axis[k].name,
                             sched_axis[h].name, fiber ? "-" : "", fiber ? resume_axis[r].name : "");
                    fprintf(out, "  %-22s %s stealing, %s stacks, %s scheduler%s%s  (fk-bench-%s-%s --sched %s%s)\n",
                            name, steal_axis[s].name, stack_axis[k].name, sched_axis[h].name,
                            fiber ? ", resume " : "", fiber ? resume_axis[r].name : "", steal_axis[s].name,
                            stack_axis[k].name, sched_axis[h].name, resume);
                }
            }
    fprintf(out, "Baselines:\n");
    for (size_t b = 0; baselines[b].name; b++)
        if (!baselines[b].kernels)
            fprintf(out, "  %-18s %s  (fk-bench-%s)\n", baselines[b].name, baselines[b].what, baselines[b].name);
    fprintf(out, "Peers (drivers built from your checkouts: make peers PEERS_DIR=DIR, DIR holding a checkout per peer):\n");
    for (size_t b = 0; baselines[b].name; b++) {
        if (!baselines[b].kernels)
            continue;
        hx_variant v;
        char err[64], path[PATH_MAX];
        int built = !hx_variant_parse(baselines[b].name, &v, err, sizeof err) &&
                    !hx_variant_driver_path(&v, path, sizeof path) && !access(path, X_OK);
        fprintf(out, "  %-18s %s  (fk-bench-%s: %s)\n  %-18s kernels:%s\n", baselines[b].name, baselines[b].what,
                baselines[b].name, built ? "built" : "not built", "", baselines[b].kernels);
    }
    fprintf(out, "\nNaming: a runtime variant takes one value on each axis, in this order:\n");
    const struct axis_value *axes[3] = {steal_axis, stack_axis, sched_axis};
    static const char *const titles[3] = {"stealing", "frame stack", "scheduler"};
    for (int a = 0; a < 3; a++) {
        fprintf(out, "  %s%s:\n", titles[a], a < 2 ? " (compiled in: one driver per stealing-stack pair)"
                                                    : " (chosen at run time: the driver's --sched)");
        for (size_t i = 0; axes[a][i].name; i++)
            fprintf(out, "    %-7s %s\n", axes[a][i].name, axes[a][i].what);
    }
    fprintf(out, "  resume (fiber variants only, chosen at run time: the driver's --resume):\n");
    for (size_t i = 0; resume_axis[i].name; i++)
        fprintf(out, "    %-7s %s\n", resume_axis[i].name, resume_axis[i].what);
    fprintf(out, "\nA name is refused when:\n"
                 "  - an axis value is unknown (e.g. 'cont-seg-fast': 'fast' is not a scheduler value);\n"
                 "  - an axis is missing (e.g. 'cont-seg': every runtime variant names its scheduler);\n"
                 "  - a baseline or peer is given a scheduler (e.g. 'omp-busy': baselines and peers take no scheduler);\n"
                 "  - it has parts after the scheduler (but a fiber variant has exactly one: its resume value);\n"
                 "  - the pair does not exist: cont-native (continuation stealing on the native C stack needs\n"
                 "    Fibril-style stack switching, not implemented); cont-fiber (fibers steal children).\n"
                 "In a sweep, 'serial' runs on 1 worker only: its cells at other worker counts are skipped.\n"
                 "Drivers are looked up next to the forkscope executable; FORKSCOPE_DRIVER=PATH runs PATH for\n"
                 "every variant instead (for tests).\n");
}

int hx_variant_can_block(const hx_variant *v) {
    return v->kind == HX_VARIANT_SERIAL || (v->kind == HX_VARIANT_RUNTIME && !strncmp(v->base, "child-fiber-", 12));
}
