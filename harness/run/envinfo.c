/* envinfo.c — the environment record of a sweep. */
#include "harness/run/envinfo.h"

#include <hwloc.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "forkscope.h"
#include "harness/config/config.h"
#include "harness/util/util.h"
#include "harness/util/errors.h"

double hx_envinfo_wall_time(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void hx_envinfo_iso_time(double t, char *buf, size_t len) {
    time_t s = (time_t)t;
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* First line of a command's output (stderr discarded), or NULL. */
static char *first_line(const char *cmd) {
    FILE *p = popen(cmd, "r");
    if (!p)
        return NULL;
    char line[512];
    char *r = fgets(line, sizeof line, p) ? strdup(line) : NULL;
    while (fgets(line, sizeof line, p)) /* let the command finish writing */
        ;
    int st = pclose(p);
    if (r)
        r[strcspn(r, "\n")] = 0;
    if (st != 0 || (r && !*r)) {
        free(r);
        return NULL;
    }
    return r;
}

static json_t *string_or_null(char *s) {
    json_t *j = s ? json_string(s) : json_null();
    free(s);
    return j ? j : json_null();
}

/* make bundle's record of the build (share/forkscope/BUNDLE.txt beside bin/, written by
 * scripts/bundle.sh): its "key: value" lines as an object of strings, or NULL when this
 * executable is not in a bundle (an installed tree without one, build/bin). */
static json_t *bundle_record(const char *exe_dir) {
    char path[PATH_MAX + 40];
    snprintf(path, sizeof path, "%s/../share/forkscope/BUNDLE.txt", exe_dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    json_t *b = json_object();
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *colon = strstr(line, ": ");
        if (line[0] == '#' || !colon || colon == line || strspn(line, "abcdefghijklmnopqrstuvwxyz_") != (size_t)(colon - line))
            continue;
        *colon = 0;
        json_object_set_new(b, line, json_string(colon + 2));
    }
    fclose(f);
    if (!json_object_get(b, "build_id")) { /* (not one of ours: say nothing rather than something wrong) */
        json_decref(b);
        return NULL;
    }
    return b;
}

int hx_envinfo_topology(char *buf, size_t len) {
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo))
        return HX_EINTERNAL;
    if (hwloc_topology_load(topo)) {
        hwloc_topology_destroy(topo);
        return HX_EINTERNAL;
    }
    static const struct {
        hwloc_obj_type_t type;
        const char *name;
    } kinds[] = {{HWLOC_OBJ_PACKAGE, "Package"},
                 {HWLOC_OBJ_NUMANODE, "NUMANode"},
                 {HWLOC_OBJ_L3CACHE, "L3"},
                 {HWLOC_OBJ_CORE, "Core"},
                 {HWLOC_OBJ_PU, "PU"}};
    buf[0] = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        int n = hwloc_get_nbobjs_by_type(topo, kinds[k].type);
        if (n <= 0 && kinds[k].type == HWLOC_OBJ_L3CACHE)
            continue;
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s:%d", used ? " " : "", kinds[k].name, n < 0 ? 0 : n);
    }
    hwloc_topology_destroy(topo);
    return 0;
}

static json_t *cpu_model(void) {
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (!f)
        return json_null();
    char line[512];
    json_t *r = NULL;
    while (!r && fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) && strncmp(line, "Processor", 9) && strncmp(line, "cpu model", 9))
            continue;
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        colon++;
        while (*colon == ' ' || *colon == '\t')
            colon++;
        colon[strcspn(colon, "\n")] = 0;
        r = json_string(colon);
    }
    fclose(f);
    return r ? r : json_null();
}

json_t *hx_envinfo_collect(const char *config_file) {
    json_t *env = json_object();
    char buf[512];
    hx_envinfo_iso_time(hx_envinfo_wall_time(), buf, sizeof buf);
    json_object_set_new(env, "date", json_string(buf));
    if (gethostname(buf, sizeof buf) == 0) {
        buf[sizeof buf - 1] = 0;
        json_object_set_new(env, "host", json_string(buf));
    } else {
        json_object_set_new(env, "host", json_null());
    }
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(buf, sizeof buf, "%s %s %s %s", u.sysname, u.release, u.version, u.machine);
        json_object_set_new(env, "kernel", json_string(buf));
    } else {
        json_object_set_new(env, "kernel", json_null());
    }
    json_object_set_new(env, "cpu_model", cpu_model());
    fk_clock_info ck; /* (each driver calibrates its own: its "breakdown" says what it found) */
    fk_clock_get(&ck);
    json_object_set_new(env, "clock",
                        json_pack("{s:s, s:f, s:f, s:s, s:s}", "source", ck.source, "ns_per_tick", ck.ns_per_tick,
                                  "calibration_ms", ck.calibration_ms, "fallback_reason", ck.fallback_reason, "use",
                                  "the runtime's time accounting (\"breakdown\", forkscope trace) and the span build"));
    json_object_set_new(env, "cores", json_integer(hx_online_cores()));
    json_object_set_new(env, "topology", hx_envinfo_topology(buf, sizeof buf) ? json_null() : json_string(buf));
#ifdef HWLOC_VERSION
    json_object_set_new(env, "hwloc_version", json_string(HWLOC_VERSION));
#else
    unsigned api = hwloc_get_api_version();
    snprintf(buf, sizeof buf, "%u.%u.%u", api >> 16, (api >> 8) & 0xff, api & 0xff);
    json_object_set_new(env, "hwloc_version", json_string(buf));
#endif
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    json_object_set_new(env, "memory_bytes", pages > 0 && psize > 0 ? json_integer((json_int_t)pages * psize) : json_null());

    /* The git tree the executable was built in, or make bundle's record of it. */
    char self[PATH_MAX], cmd[PATH_MAX + 128];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    char *rev = NULL, *dirty = NULL;
    json_t *bundle = NULL;
    if (n > 0) {
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = 0;
        if (!(bundle = bundle_record(self)) && !strchr(self, '\'')) {
            snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse HEAD 2>/dev/null", self);
            rev = first_line(cmd);
            snprintf(cmd, sizeof cmd, "git -C '%s' status --porcelain --untracked-files=no 2>/dev/null", self);
            dirty = rev ? first_line(cmd) : NULL;
        }
    }
    /* Run from make bundle's tree: its build id, and the revision it was built from (not a
     * git tree's, even if it was unpacked inside one). */
    const char *brev = bundle ? hx_json_str(bundle, "git_revision", NULL) : NULL;
    if (brev) {
        size_t bl = strlen(brev);
        int bdirty = bl > 6 && !strcmp(brev + bl - 6, "-dirty");
        rev = strndup(brev, bdirty ? bl - 6 : bl);
        dirty = bdirty ? strdup("yes") : NULL;
    }
    json_object_set_new(env, "bundle", bundle ? bundle : json_null());
    json_object_set_new(env, "git_dirty", json_boolean(dirty != NULL));
    free(dirty);
    json_object_set_new(env, "git_revision", string_or_null(rev));
    json_object_set_new(env, "compilers",
                        json_pack("{s:o, s:o}", "gcc", string_or_null(first_line("gcc --version 2>/dev/null")),
                                  "clang", string_or_null(first_line("clang --version 2>/dev/null"))));
    json_object_set_new(env, "forkscope_version", json_string(HX_VERSION));
    json_object_set_new(env, "config_file", config_file ? json_string(config_file) : json_null());
    return env;
}
