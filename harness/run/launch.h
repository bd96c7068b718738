/* launch.h — running one driver process and measuring it honestly.
 *
 * Every run is a fresh child process, started by a *launcher*: a small process forked by
 * hx_launcher_start() while the harness is still small.  Why: on Linux, exec() carries the
 * old address space's high-water RSS into the new image's maxrss (exec_mmap() ->
 * setmax_mm_hiwater_rss()), and a child forked (or vforked / posix_spawned) from a large
 * parent starts from the parent's mapping; so a harness that grew (results, buffers) would
 * inflate every child's measured peak.  The launcher stays small, so a child's maxrss from
 * wait4() is the driver's own (tests/test_sweep.c checks this with a 300 MiB harness).
 *
 * The launcher forks the driver into its own process group, captures its stdout (up to
 * 1 MiB) and the last 2 KiB of its stderr, enforces the time limit (SIGKILL to the group)
 * and the memory limit (see below), and reaps it with wait4() on that pid (never
 * RUSAGE_CHILDREN).  If the harness dies, the launcher sees its socket close, kills the
 * running driver and exits; the driver also has PR_SET_PDEATHSIG(SIGKILL).
 *
 * Memory limit mechanisms (FORKSCOPE_MEMLIMIT=auto|cgroup|cgroup-v2|cgroup-v1|poll, default
 * auto; harness/run/cgroup.h):
 *   cgroup  a memory cgroup for the runs (v2: a leaf per run, memory.max = limit; v1:
 *           memory.limit_in_bytes = limit); the kernel OOM-kills the driver at the limit
 *           (counted in memory.events' or memory.oom_control's oom_kill).  Drivers reserve
 *           large virtual areas (thread stacks, linear frame stacks, OMP_STACKSIZE), so
 *           RLIMIT_AS is no use; a cgroup counts what is charged to it: what the run makes
 *           resident and the page cache it reads first, so the driver's resident set may pass
 *           the limit by the pages of its executable and libraries that others read before.
 *   poll    /proc/PID/statm read every 10 ms; the group is killed when the resident set
 *           exceeds the limit (a fast allocator may overshoot by what it touches between two
 *           polls).
 * auto picks cgroup v2, else v1, else poll; the mechanism's description says which, and why
 * not the ones before it. */
#ifndef HX_LAUNCH_H
#define HX_LAUNCH_H

#include <stddef.h>

typedef struct hx_launcher hx_launcher;

/* Starts the launcher.  Call it while this process is small (before reading results or
 * allocating buffers).  Returns 0 and *out, or -errno. */
int hx_launcher_start(hx_launcher **out);

/* The memory-limit mechanism: "cgroup-v2 DIR", "cgroup-v1 DIR (v2 not used: WHY)" or "poll
 * /proc/PID/statm every 10 ms (WHY)". */
const char *hx_launcher_mechanism(const hx_launcher *l);

/* Closes the launcher (it removes its cgroup) and reaps it.  l may be NULL. */
void hx_launcher_stop(hx_launcher *l);

typedef struct hx_run_req {
    char *const *argv;                  /* argv[0] is the executable's path; NULL-terminated */
    char *const *env;                   /* extra "NAME=VALUE" entries, NULL-terminated, or NULL */
    double time_limit_s;                /* 0: none */
    unsigned long long mem_limit_bytes; /* 0: none */
    void (*tick)(void *arg);            /* called about once a second while the run lasts, or NULL */
    void *tick_arg;
} hx_run_req;

enum hx_killed { HX_KILLED_NONE, HX_KILLED_TIMEOUT, HX_KILLED_MEMORY, HX_KILLED_INTERRUPT };

typedef struct hx_run_res {
    int exec_errno;      /* non-zero: the executable could not be started (errno) */
    int exited, exit_code;
    int signaled, signo; /* terminated by signal signo */
    int killed;          /* enum hx_killed: why the launcher (or the cgroup) killed it */
    double wall_s;       /* fork to reap, as the launcher saw it */
    double user_s, sys_s;
    long maxrss_kib;     /* wait4() of this child */
    long long cg_peak_kib; /* memory.peak of its cgroup v2 (a run with a memory limit, Linux 5.19+), else -1 */
    char *out;           /* stdout, NUL-terminated (at most 1 MiB kept) */
    size_t out_len;
    char *err; /* the last <= 2 KiB of stderr, NUL-terminated */
    size_t err_len;
} hx_run_res;

#define HX_LAUNCH_OUT_MAX ((size_t)1 << 20)
#define HX_LAUNCH_ERR_TAIL 2048

/* Runs one process and waits for it.  If intr_fd >= 0 and becomes readable while it runs
 * (a signal handler's self-pipe), the process is killed and res->killed is
 * HX_KILLED_INTERRUPT; the fd is not read.  Returns 0 and fills *res (free with
 * hx_run_res_free); -EPIPE if the launcher is gone; -errno on other failures. */
int hx_launcher_run(hx_launcher *l, const hx_run_req *req, hx_run_res *res, int intr_fd);

void hx_run_res_free(hx_run_res *res);

#endif
