/* cgroup.c — per-run memory limits by cgroup v2 or v1 (harness/run/cgroup.h). */
#include "harness/run/cgroup.h"
#include "harness/util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- files -------------------------------------------------------------------------------- */

static int write_file(const char *dir, const char *file, const char *text) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t len = strlen(text);
    ssize_t w = write(fd, text, len);
    int e = errno;
    close(fd);
    return w == (ssize_t)len ? 0 : w < 0 ? -e : -EIO;
}

/* dir/file's text (dir NULL: file is the path), NUL-terminated, or NULL. */
static char *read_text(const char *dir, const char *file) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s%s%s", dir ? dir : "", dir ? "/" : "", file);
    size_t len;
    return hx_read_file(path, &len);
}

static long long field_of(const char *dir, const char *file, const char *key) {
    char *t = read_text(dir, file);
    long long v = t ? hx_cg_field(t, key) : -1;
    free(t);
    return v;
}

/* ---- parsing -------------------------------------------------------------------------------- */

long long hx_cg_field(const char *text, const char *key) {
    size_t k = strlen(key);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (!strncmp(l, key, k) && l[k] == ' ') {
            char *end;
            long long v = strtoll(l + k + 1, &end, 10);
            return end > l + k + 1 && v >= 0 ? v : -1;
        }
    return -1;
}

int hx_cg_has(const char *list, const char *word) {
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)); p += n)
        if ((p == list || p[-1] == ' ' || p[-1] == '\n') && (p[n] == 0 || p[n] == ' ' || p[n] == '\n'))
            return 1;
    return 0;
}

/* mountinfo: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER" */
int hx_cg2_path(const char *mountinfo, const char *proc_cgroup, char *out, size_t len) {
    char mnt[PATH_MAX] = "", rel[PATH_MAX] = "";
    int found = 0;
    for (const char *l = mountinfo; l && *l && !found; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *eol = strchr(l, '\n'), *sep = strstr(l, " - ");
        if (!eol)
            eol = l + strlen(l);
        if (!sep || sep > eol || strncmp(sep + 3, "cgroup2 ", 8))
            continue;
        char root[PATH_MAX], point[PATH_MAX];
        if (sscanf(l, "%*s %*s %*s %4095s %4095s", root, point) != 2 || strcmp(root, "/"))
            continue; /* a bind mount of a subtree: paths would not join */
        snprintf(mnt, sizeof mnt, "%s", point);
        found = 1;
    }
    if (!found)
        return -1;
    found = 0;
    for (const char *l = proc_cgroup; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (!strncmp(l, "0::", 3)) {
            size_t n = strcspn(l + 3, "\n");
            if (n >= sizeof rel)
                return -1;
            memcpy(rel, l + 3, n);
            rel[n] = 0;
            found = 1;
            break;
        }
    if (!found || rel[0] != '/')
        return -1;
    size_t w = (size_t)snprintf(out, len, "%s%s", mnt, strcmp(rel, "/") ? rel : "");
    return w < len ? 0 : -1;
}

/* ---- set-up ----------------------------------------------------------------------------------- */

/* Removes forkscope-PID cgroups (and their run leaves) left by launchers that were killed. */
static void remove_stale(const char *base) {
    DIR *d = opendir(base);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        int pid;
        char tail;
        if (sscanf(e->d_name, "forkscope-%d%c", &pid, &tail) != 1 || pid <= 0)
            continue;
        if (kill(pid, 0) < 0 && errno == ESRCH) {
            char path[PATH_MAX + 300];
            snprintf(path, sizeof path, "%s/%s/run", base, e->d_name);
            rmdir(path);
            snprintf(path, sizeof path, "%s/%s", base, e->d_name);
            rmdir(path);
        }
    }
    closedir(d);
}

/* v1: the memory hierarchy's directory of this process, or -1. */
static int v1_base(char *buf, size_t len) {
    char *t = read_text(NULL, "/proc/self/cgroup");
    if (!t)
        return -1;
    int rc = -1;
    for (char *l = t; l && *l && rc; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        char *c1 = strchr(l, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, *eol = strchr(l, '\n');
        if (!c2 || (eol && c2 > eol))
            continue;
        size_t n = (size_t)(c2 - c1 - 1);
        char ctrl[256];
        if (n >= sizeof ctrl)
            continue;
        memcpy(ctrl, c1 + 1, n);
        ctrl[n] = 0;
        for (char *p = ctrl; *p; p++)
            if (*p == ',')
                *p = ' ';
        if (!hx_cg_has(ctrl, "memory"))
            continue;
        char *rel = c2 + 1;
        rel[strcspn(rel, "\n")] = 0;
        if ((size_t)snprintf(buf, len, "/sys/fs/cgroup/memory%s", strcmp(rel, "/") ? rel : "") < len)
            rc = 0;
    }
    free(t);
    struct stat st;
    return rc == 0 && stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

static int setup_v1(hx_cg *cg, char *why, size_t len) {
    char base[PATH_MAX - 32];
    if (v1_base(base, sizeof base)) {
        snprintf(why, len, "no cgroup-v1 memory hierarchy");
        return -1;
    }
    remove_stale(base);
    snprintf(cg->dir, sizeof cg->dir, "%s/forkscope-%d", base, (int)getpid());
    int rc;
    if ((mkdir(cg->dir, 0755) && errno != EEXIST) || (rc = write_file(cg->dir, "memory.limit_in_bytes", "-1")) ||
        field_of(cg->dir, "memory.oom_control", "oom_kill") < 0) {
        snprintf(why, len, "cannot make a cgroup-v1 memory cgroup in %s: %s", base, strerror(errno));
        rmdir(cg->dir);
        cg->dir[0] = 0;
        return -1;
    }
    cg->kind = HX_CG_V1;
    return 0;
}

/* Makes P/forkscope-PID with memory enabled for its children; 0 or -1. */
static int make_v2_group(hx_cg *cg, const char *P) {
    snprintf(cg->dir, sizeof cg->dir, "%s/forkscope-%d", P, (int)getpid());
    remove_stale(P);
    if (mkdir(cg->dir, 0755) && errno != EEXIST)
        return -1;
    char *ctl = read_text(cg->dir, "cgroup.controllers");
    int ok = ctl && hx_cg_has(ctl, "memory") && write_file(cg->dir, "cgroup.subtree_control", "+memory") == 0;
    free(ctl);
    if (!ok) {
        rmdir(cg->dir);
        cg->dir[0] = 0;
        return -1;
    }
    return 0;
}

static int setup_v2(hx_cg *cg, char *why, size_t len) {
    char *mi = read_text(NULL, "/proc/self/mountinfo"), *pc = read_text(NULL, "/proc/self/cgroup");
    char base[PATH_MAX - 64];
    int rc = mi && pc ? hx_cg2_path(mi, pc, base, sizeof base) : -1;
    free(mi);
    free(pc);
    if (rc) {
        snprintf(why, len, "no cgroup v2 (no cgroup2 mount with this process in it)");
        return -1;
    }
    char *ctl = read_text(base, "cgroup.controllers");
    int has = ctl && hx_cg_has(ctl, "memory");
    free(ctl);
    if (!has) {
        snprintf(why, len, "cgroup v2 at %s offers no memory controller (bound to v1 here, or not delegated)", base);
        return -1;
    }
    /* memory for our own children: needs our cgroup to hold no process (or to be the root) */
    if (write_file(base, "cgroup.subtree_control", "+memory") == 0 && make_v2_group(cg, base) == 0) {
        cg->kind = HX_CG_V2;
        return 0;
    }
    /* beside us: our parent enables memory for its children (we have it) */
    char parent[PATH_MAX - 64];
    snprintf(parent, sizeof parent, "%s", base);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent)
        *slash = 0;
    if (strcmp(parent, base) && make_v2_group(cg, parent) == 0) {
        cg->kind = HX_CG_V2;
        return 0;
    }
    snprintf(why, len, "cgroup v2 at %s: cannot make a cgroup with memory enabled there or beside it: %s", base,
             strerror(errno));
    return -1;
}

void hx_cg_setup(hx_cg *cg, const char *want, char *desc, size_t len) {
    memset(cg, 0, sizeof *cg);
    int any = !want || !strcmp(want, "auto") || !strcmp(want, "cgroup");
    char why2[PATH_MAX + 128] = "", why1[PATH_MAX + 128] = "";
    if (want && !strcmp(want, "poll")) {
        snprintf(desc, len, "poll /proc/PID/statm every 10 ms (FORKSCOPE_MEMLIMIT=poll)");
        return;
    }
    /* what is not tried says why too: a forced choice, or a value that chooses nothing */
    int try2 = any || !strcmp(want, "cgroup-v2"), try1 = any || !strcmp(want, "cgroup-v1");
    if (!try2 && !try1)
        snprintf(why2, sizeof why2, "FORKSCOPE_MEMLIMIT=%.64s is none of auto, cgroup, cgroup-v2, cgroup-v1, poll", want);
    else if (!try2)
        snprintf(why2, sizeof why2, "cgroup v2 not tried: FORKSCOPE_MEMLIMIT=%.64s", want);
    else if (!try1)
        snprintf(why1, sizeof why1, "cgroup-v1 not tried: FORKSCOPE_MEMLIMIT=%.64s", want);
    if (try2 && setup_v2(cg, why2, sizeof why2) == 0) {
        snprintf(desc, len, "cgroup-v2 %s", cg->dir);
        return;
    }
    if (try1 && setup_v1(cg, why1, sizeof why1) == 0) {
        snprintf(desc, len, "cgroup-v1 %s%s%s%s", cg->dir, !*why2 ? "" : try2 ? " (v2 not used: " : " (", why2,
                 *why2 ? ")" : "");
        return;
    }
    snprintf(desc, len, "poll /proc/PID/statm every 10 ms%s%s%s%s%s", *why2 || *why1 ? " (" : "", why2,
             *why2 && *why1 ? "; " : "", why1, *why2 || *why1 ? ")" : "");
}

/* ---- runs ---------------------------------------------------------------------------------- */

int hx_cg_run_begin(hx_cg *cg, unsigned long long limit) {
    char lim[32];
    snprintf(lim, sizeof lim, "%llu", limit);
    if (cg->kind == HX_CG_V1) {
        cg->oom0 = field_of(cg->dir, "memory.oom_control", "oom_kill");
        return write_file(cg->dir, "memory.limit_in_bytes", lim);
    }
    if (cg->kind != HX_CG_V2)
        return -ENOTSUP;
    snprintf(cg->run, sizeof cg->run, "%s/run", cg->dir);
    rmdir(cg->run); /* a leftover of a run whose end was not seen */
    if (mkdir(cg->run, 0755) && errno != EEXIST) /* (EEXIST: a leftover still holds processes) */
        return -errno;
    long long oom = field_of(cg->run, "memory.events", "oom_kill");
    cg->oom0 = oom > 0 ? oom : 0; /* 0 in a fresh cgroup; a reused one counts on */
    int rc = write_file(cg->run, "memory.max", lim);
    if (!rc) {
        write_file(cg->run, "memory.swap.max", "0"); /* absent without swap accounting: fine */
        write_file(cg->run, "memory.oom.group", "1");
    }
    return rc;
}

int hx_cg_join(const hx_cg *cg) {
    char pid[32];
    snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    return write_file(cg->kind == HX_CG_V2 ? cg->run : cg->dir, "cgroup.procs", pid);
}

int hx_cg_run_end(hx_cg *cg, long long *peak_kib) {
    *peak_kib = -1;
    if (cg->kind == HX_CG_V1) {
        int oom = field_of(cg->dir, "memory.oom_control", "oom_kill") > cg->oom0;
        write_file(cg->dir, "memory.limit_in_bytes", "-1");
        return oom;
    }
    if (cg->kind != HX_CG_V2)
        return 0;
    int oom = field_of(cg->run, "memory.events", "oom_kill") > cg->oom0;
    char *peak = read_text(cg->run, "memory.peak");
    if (peak) {
        char *end;
        long long b = strtoll(peak, &end, 10);
        if (end > peak && b >= 0)
            *peak_kib = b / 1024;
        free(peak);
    }
    /* the run's process is reaped; the cgroup may lag a moment behind, and processes the
     * run left running (a command's background children) are killed (cgroup.kill, Linux
     * 5.14+) so that the next run gets a fresh cgroup */
    for (int i = 0; i < 200 && rmdir(cg->run) && errno == EBUSY; i++) {
        if (i == 50)
            write_file(cg->run, "cgroup.kill", "1");
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return oom;
}

void hx_cg_teardown(hx_cg *cg) {
    if (cg->kind == HX_CG_V2 && cg->run[0])
        rmdir(cg->run);
    if (cg->dir[0])
        rmdir(cg->dir);
    cg->kind = HX_CG_NONE;
}
