/* variants.c — variant names, their drivers, and `forkscope variants`. */
#include "harness/util/env.h"
#include "harness/util/util.h"
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
/* Who makes a private fork stealable (the driver's --promote); optional, last: thief when
 * omitted (the canonical name then omits it). */
static const struct axis_value promote_axis[] = {
    {"thief", "a thief that finds nothing public asks the owner, who publishes the oldest half of its "
              "private forks at its next fork or join (Lace's split deque); the default"},
    {"beat", "heartbeat promotion: thieves never ask; every beat (FORKSCOPE_BEAT_US, default 100 us) "
             "the owner promotes its oldest private fork (FORKSCOPE_BEAT_SHARE=half: the oldest half) at its "
             "next fork or join (Spice, chili; docs/heartbeat.md); not on fibers"},
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
};
static const struct baseline baselines[] = {
    {"serial", HX_VARIANT_SERIAL, "the serial projection (forks become calls); 1 worker only"},
    {"omp", HX_VARIANT_BASELINE, "OpenMP tasks, gcc + libgomp"},
    {"omp-llvm", HX_VARIANT_BASELINE, "OpenMP tasks, clang + libomp (what the paper compared against)"},
    {"tbb", HX_VARIANT_BASELINE, "oneTBB task_group, g++ (the paper's TBB column)"},
    {NULL, 0, NULL},
};
#define NBASELINES (sizeof baselines / sizeof baselines[0] - 1)

/* The peers (other runtimes, their drivers built from the user's checkouts by make peers)
 * are the Makefile's: hx_peer_rows, generated from peers/NAME.mk. */
/* The i-th name that takes no axes: the baselines, then the peers; NULL past the end. */
static const char *base_name(size_t i, hx_variant_kind *kind) {
    if (i < NBASELINES) {
        if (kind)
            *kind = baselines[i].kind;
        return baselines[i].name;
    }
    if (kind)
        *kind = HX_VARIANT_BASELINE;
    return hx_peer_rows[i - NBASELINES].name;
}

static const hx_peer_row *peer_row(const char *name) {
    for (size_t i = 0; hx_peer_rows[i].name; i++)
        if (!strcmp(hx_peer_rows[i].name, name))
            return &hx_peer_rows[i];
    return NULL;
}

/* The names of the baselines and peers, ", "-separated, into buf. */
static const char *base_names(char *buf, size_t len) {
    buf[0] = 0;
    for (size_t i = 0; base_name(i, NULL); i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", i ? ", " : "", base_name(i, NULL));
    }
    return buf;
}

static const char *const runtime_names[] = {
    "cont-seg-busy",  "cont-seg-lazy",  "cont-lin-busy",     "cont-lin-lazy",     "child-seg-busy", "child-seg-lazy",
    "child-lin-busy", "child-lin-lazy", "child-native-busy", "child-native-lazy", "child-fiber-busy-any",
    "child-fiber-busy-home", "child-fiber-lazy-any", "child-fiber-lazy-home", NULL,
};

const char *hx_variant_name(size_t i) {
    size_t nrt = sizeof runtime_names / sizeof runtime_names[0] - 1;
    return i < nrt ? runtime_names[i] : base_name(i - nrt, NULL);
}

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

/* The parts of runtime variant `name` after its scheduler (p): a fiber variant's resume value
 * (required), then an optional promotion.  0, or an error as hx_variant_parse returns it. */
static int parse_tail(const char *name, const char *p, int fiber, const char *sched, int *resume, int *promote,
                      char *err, size_t errlen) {
    char list[64];
    if (fiber) { /* the fourth axis */
        const char *dash = strchr(p, '-');
        size_t n = dash ? (size_t)(dash - p) : strlen(p);
        if (!n)
            return snprintf(err, errlen, "'%s': missing the resume axis of a fiber variant (one of %s), e.g. %s-any",
                            name, axis_list(resume_axis, list, sizeof list), name),
                   -1;
        *resume = axis_find(resume_axis, p, n);
        if (*resume < 0)
            return snprintf(err, errlen, "'%s': '%.*s' is not a resume value (one of %s)", name, (int)n, p,
                            axis_list(resume_axis, list, sizeof list)),
                   -1;
        p = dash ? dash + 1 : p + n;
    }
    if (p[-1] == '-' && !*p)
        return snprintf(err, errlen, "'%s': ends with '-'", name), -1;
    if (*p) { /* the last, optional axis */
        *promote = axis_find(promote_axis, p, strlen(p));
        if (*promote < 0)
            return snprintf(err, errlen, "'%s': unexpected '-%s' after the %s (what may follow: %s%s)", name, p,
                            fiber ? "resume value" : "scheduler", fiber ? "" : "a fiber variant's resume value, then ",
                            "an optional promotion, one of thief|beat"),
                   -1;
        if (fiber && !strcmp(promote_axis[*promote].name, "beat"))
            return snprintf(err, errlen, "'%s': heartbeat promotion is not built for fibers (a thief must ask for a "
                                         "ready fiber's record); use a frame-stack or native variant, e.g. "
                                         "child-native-%s-beat",
                            name, sched),
                   -EINVAL;
    }
    return 0;
}

int hx_variant_parse(const char *name, hx_variant *v, char *err, size_t errlen) {
    memset(v, 0, sizeof *v);
    if (!name || !*name)
        return snprintf(err, errlen, "empty variant name (try `forkscope variants`)"), -EINVAL;
    /* A baseline, or a baseline with parts wrongly attached (the longest name that is a
     * prefix, so that "omp-llvm-busy" is read as omp-llvm + "-busy"). */
    const char *longest = NULL;
    hx_variant_kind kind = HX_VARIANT_BASELINE, k;
    for (size_t i = 0; base_name(i, &k); i++) {
        const char *b = base_name(i, &k);
        size_t n = strlen(b);
        if (!strncmp(name, b, n) && (name[n] == 0 || name[n] == '-') && (!longest || n > strlen(longest)))
            longest = b, kind = k;
    }
    char names[512];
    if (longest) {
        size_t n = strlen(longest);
        if (!strcmp(name, longest)) {
            v->kind = kind;
            snprintf(v->name, sizeof v->name, "%s", longest);
            snprintf(v->base, sizeof v->base, "%s", longest);
            snprintf(v->driver, sizeof v->driver, "fk-bench-%.22s", longest);
            return 0;
        }
        const char *rest = name + n + 1;
        if (axis_find(sched_axis, rest, strlen(rest)) >= 0)
            return snprintf(err, errlen, "'%s': baselines and peers (%s) take no scheduler (write '%s')", name,
                            base_names(names, sizeof names), longest),
                   -EINVAL;
        return snprintf(err, errlen, "'%s': the baseline '%s' has no '-%s' part", name, longest, rest), -EINVAL;
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
                                "cont-seg-busy; baselines and peers: %s; see `forkscope variants`)",
                                name, base_names(names, sizeof names)),
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
        p = dash ? dash + 1 : p + n;
    }
    const char *why = refused_pair(steal_axis[idx[0]].name, stack_axis[idx[1]].name);
    if (why)
        return snprintf(err, errlen, "'%s': %s", name, why), -EINVAL;
    int fiber = !strcmp(stack_axis[idx[1]].name, "fiber"), resume = -1, promote = 0;
    int rc = parse_tail(name, p, fiber, sched_axis[idx[2]].name, &resume, &promote, err, errlen);
    if (rc)
        return rc;
    v->kind = HX_VARIANT_RUNTIME;
    snprintf(v->name, sizeof v->name, "%s-%s-%s%s%s%s", steal_axis[idx[0]].name, stack_axis[idx[1]].name,
             sched_axis[idx[2]].name, resume >= 0 ? "-" : "", resume >= 0 ? resume_axis[resume].name : "",
             promote ? "-beat" : "");
    if (resume >= 0)
        snprintf(v->resume, sizeof v->resume, "%s", resume_axis[resume].name);
    snprintf(v->promote, sizeof v->promote, "%s", fiber ? "" : promote_axis[promote].name);
    snprintf(v->driver, sizeof v->driver, "fk-bench-%s-%s", steal_axis[idx[0]].name, stack_axis[idx[1]].name);
    snprintf(v->sched, sizeof v->sched, "%s", sched_axis[idx[2]].name);
    snprintf(v->base, sizeof v->base, "%s", v->name);
    return 0;
}

size_t hx_variant_args(const hx_variant *v, const char *out[HX_VARIANT_MAX_ARGS]) {
    size_t n = 0;
    if (v->kind == HX_VARIANT_RUNTIME) {
        out[n++] = "--sched";
        out[n++] = v->sched;
    }
    if (v->resume[0]) {
        out[n++] = "--resume";
        out[n++] = v->resume;
    }
    /* thief too when the environment would otherwise choose for the driver */
    if (!strcmp(v->promote, "beat") || (v->promote[0] && hx_env("FORKSCOPE_PROMOTE"))) {
        out[n++] = "--promote";
        out[n++] = v->promote;
    }
    return n;
}

int hx_variant_is_peer(const hx_variant *v) { return v->kind == HX_VARIANT_BASELINE && peer_row(v->base); }

const char *hx_variant_peer_kernels(const hx_variant *v) {
    static struct kernels_of {
        char *path, *list;
    } *cache;
    static size_t ncache, cap;
    char path[PATH_MAX];
    if (!hx_variant_is_peer(v) || hx_variant_driver_path(v, path, sizeof path) || access(path, X_OK))
        return NULL;
    for (size_t i = 0; i < ncache; i++)
        if (!strcmp(cache[i].path, path))
            return cache[i].list;
    char *out = NULL, *list = NULL;
    int st = hx_capture((const char *const[]){path, "--kernels", NULL}, 2, &out);
    if (st == 0 && out && !strncmp(out, "kernels:", 8)) {
        size_t n = strcspn(out + 8, "\n");
        list = hx_xmalloc(n + 2);
        snprintf(list, n + 2, "%.*s ", (int)n, out + 8);
    }
    free(out);
    hx_grow(&cache, &cap, ncache + 1, sizeof *cache); /* (kept for the process's life) */
    cache[ncache].path = hx_xstrdup(path);
    cache[ncache++].list = list;
    return list;
}

int hx_variant_runs_kernel(const hx_variant *v, const char *kernel) {
    if (!hx_variant_is_peer(v))
        return 1;
    const char *list = hx_variant_peer_kernels(v);
    if (!list)
        return 1; /* (not built, or silent: its run says why) */
    char word[48];
    snprintf(word, sizeof word, " %.40s ", kernel);
    return strstr(list, word) != NULL;
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
        fprintf(out, "  %-18s %s  (fk-bench-%s)\n", baselines[b].name, baselines[b].what, baselines[b].name);
    fprintf(out, "Peers (drivers built from your checkouts: make peers PEERS_DIR=DIR, DIR holding a checkout per peer;\n"
                 "each is peers/NAME.mk, and make EXTRA_PEERS=FILE.mk adds one of your own):\n");
    for (size_t b = 0; hx_peer_rows[b].name; b++) {
        hx_variant v;
        char err[64], path[PATH_MAX];
        int built = !hx_variant_parse(hx_peer_rows[b].name, &v, err, sizeof err) &&
                    !hx_variant_driver_path(&v, path, sizeof path) && !access(path, X_OK);
        const char *list = built ? hx_variant_peer_kernels(&v) : NULL;
        fprintf(out, "  %-18s %s (peer: make peers PEERS_DIR=DIR)  (fk-bench-%s: %s)\n  %-18s kernels:%s\n",
                hx_peer_rows[b].name, hx_peer_rows[b].what, hx_peer_rows[b].name, built ? "built" : "not built", "",
                list ? list : !built ? " (its driver says, once built)" : " (its driver did not list them: --kernels)");
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
    fprintf(out, "  promotion (optional, last; thief when omitted; chosen at run time: the driver's --promote),\n"
                 "  e.g. child-native-busy-beat; the beat's period from FORKSCOPE_BEAT_US and what it promotes\n"
                 "  from FORKSCOPE_BEAT_SHARE (one|half), which a variant object's \"env\" may set:\n");
    for (size_t i = 0; promote_axis[i].name; i++)
        fprintf(out, "    %-7s %s\n", promote_axis[i].name, promote_axis[i].what);
    fprintf(out, "\nA name is refused when:\n"
                 "  - an axis value is unknown (e.g. 'cont-seg-fast': 'fast' is not a scheduler value);\n"
                 "  - an axis is missing (e.g. 'cont-seg': every runtime variant names its scheduler);\n"
                 "  - a baseline or peer is given a scheduler (e.g. 'omp-busy': baselines and peers take no scheduler);\n"
                 "  - it has parts after the scheduler other than a fiber variant's resume value and a\n"
                 "    promotion (e.g. 'cont-seg-busy-any': only fiber variants have a resume value);\n"
                 "  - it asks for heartbeat promotion on fibers (e.g. 'child-fiber-busy-any-beat');\n"
                 "  - the pair does not exist: cont-native (continuation stealing on the native C stack needs\n"
                 "    Fibril-style stack switching, not implemented); cont-fiber (fibers steal children).\n"
                 "In a sweep, 'serial' runs on 1 worker only: its cells at other worker counts are skipped.\n"
                 "Drivers are looked up next to the forkscope executable; FORKSCOPE_DRIVER=PATH runs PATH for\n"
                 "every variant instead (for tests).\n");
}

int hx_variant_can_block(const hx_variant *v) {
    return v->kind == HX_VARIANT_SERIAL || (v->kind == HX_VARIANT_RUNTIME && !strncmp(v->base, "child-fiber-", 12));
}
