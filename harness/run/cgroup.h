/* cgroup.h — per-run memory limits by cgroup, for the launcher (harness/run/launch.c).
 *
 * Chosen automatically (FORKSCOPE_MEMLIMIT unset or "auto"): cgroup v2 if this process's
 * v2 cgroup offers the memory controller and a cgroup can be made where it is enabled; else
 * cgroup v1's memory hierarchy if writable; else none (the launcher then polls the RSS).
 * FORKSCOPE_MEMLIMIT=cgroup-v2, cgroup-v1 or poll forces one ("cgroup": either version).
 *
 * v2: the launcher makes forkscope-PID with memory enabled for its children — under its own
 * cgroup when that can enable controllers for children (it holds no process, or they are
 * delegated), else beside it (a sibling under the parent, which enables memory for its
 * children already) — and for every run a fresh leaf forkscope-PID/run: memory.max the
 * limit, memory.swap.max 0 (swapping would hide the overrun), memory.oom.group 1 (the OOM
 * killer takes the whole run).  After the run, memory.events' oom_kill tells an OOM kill from
 * any other SIGKILL, and memory.peak (Linux 5.19+) is the run's peak memory as the kernel
 * charged it.  v1: one cgroup forkscope-PID, memory.limit_in_bytes per run,
 * memory.oom_control's oom_kill before and after.  The description (env.json's
 * memory_limit.mechanism) names the cgroup and, when v2 was not used, why; polling says why
 * neither cgroup was (a forced choice or unknown FORKSCOPE_MEMLIMIT value included). */
#ifndef HX_CGROUP_H
#define HX_CGROUP_H

#include <limits.h>
#include <stddef.h>

typedef enum { HX_CG_NONE, HX_CG_V1, HX_CG_V2 } hx_cg_kind;

typedef struct hx_cg {
    hx_cg_kind kind;
    char dir[PATH_MAX];      /* forkscope-PID */
    char run[PATH_MAX + 8];  /* v2: dir/run while a run lasts */
    long long oom0;          /* oom_kill before the run */
} hx_cg;

/* Sets cg up per want (see above; NULL = auto) and writes the mechanism's description. */
void hx_cg_setup(hx_cg *cg, const char *want, char *desc, size_t len);
/* Before a run with a limit of `limit` bytes: 0, or -errno (the run cannot be limited). */
int hx_cg_run_begin(hx_cg *cg, unsigned long long limit);
/* In the forked child, before exec: moves it into the run's cgroup.  0 or -errno. */
int hx_cg_join(const hx_cg *cg);
/* After the child is reaped: 1 if the cgroup's OOM killer killed in this run, else 0;
 * *peak_kib the run's memory.peak (v2, where the kernel has it), else -1. */
int hx_cg_run_end(hx_cg *cg, long long *peak_kib);
/* Removes the launcher's cgroups. */
void hx_cg_teardown(hx_cg *cg);

/* ---- parsing (pure; tested on fixtures) ---- */
/* The v2 cgroup directory of a process from /proc/self/mountinfo's and /proc/self/cgroup's
 * texts: the cgroup2 mount point joined with the "0::PATH" entry.  0, or -1 if there is no
 * cgroup2 mount or no v2 entry. */
int hx_cg2_path(const char *mountinfo, const char *proc_cgroup, char *out, size_t len);
/* The value of a "KEY N" line (memory.events, memory.oom_control), or -1. */
long long hx_cg_field(const char *text, const char *key);
/* Whether a space-separated list (cgroup.controllers, cgroup.subtree_control) has word. */
int hx_cg_has(const char *list, const char *word);

#endif
