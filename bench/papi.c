/* papi.c — see papi.h. */
#include <errno.h>
#include <linux/perf_event.h>
#include <papi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench/papi.h"

#define MAX_EVENTS 16

/* The kernel's software events, counted with perf_event_open() when PAPI cannot: PAPI's
 * perf_event component needs libpfm4 to recognise the processor's PMU, and disables itself,
 * software events included, when it does not (Debian 12's libpfm4 4.13 and AMD family
 * 0x1a, Zen 5: "libpfm4 no default PMU found").  The names are libpfm4's. */
static const struct {
    const char *name;
    uint64_t config;
} kernel_events[] = {
    {"TASK-CLOCK", PERF_COUNT_SW_TASK_CLOCK},        {"CPU-CLOCK", PERF_COUNT_SW_CPU_CLOCK},
    {"PAGE-FAULTS", PERF_COUNT_SW_PAGE_FAULTS},      {"FAULTS", PERF_COUNT_SW_PAGE_FAULTS},
    {"MINOR-FAULTS", PERF_COUNT_SW_PAGE_FAULTS_MIN}, {"MAJOR-FAULTS", PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"CONTEXT-SWITCHES", PERF_COUNT_SW_CONTEXT_SWITCHES}, {"CS", PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"CPU-MIGRATIONS", PERF_COUNT_SW_CPU_MIGRATIONS}, {"MIGRATIONS", PERF_COUNT_SW_CPU_MIGRATIONS},
};

struct bench_papi {
    char *names[MAX_EVENTS];
    const char *reason[MAX_EVENTS]; /* NULL: available */
    int kernel[MAX_EVENTS];         /* 1 + index in kernel_events: counted with perf_event_open */
    int kuser[MAX_EVENTS];          /* ... in user mode only (no privilege for the kernel's) */
    int kfail[MAX_EVENTS];          /* ... but a thread could not open it: its count is partial */
    char why_kernel[MAX_EVENTS][512]; /* what PAPI said about it (or, unavailable, why) */
    int nev, navail, npapi, multiplex;
    const char *domain;
    const char *init_error;
    unsigned nthreads;
    int *eventset;         /* per thread, PAPI_NULL until first start */
    int *fds;              /* per thread x event: perf_event_open() fds, -1 */
    pid_t *fd_tid;         /* per thread: the OS thread that opened its fds (they count only it) */
    long long *counts;     /* nthreads x MAX_EVENTS, by event index */
};

static unsigned long thread_id(void) { return (unsigned long)pthread_self(); }

/* Which kernel software event "perf::NAME" is (1 + index), or 0. */
static int kernel_event_of(const char *name) {
    if (strncasecmp(name, "perf::", 6))
        return 0;
    for (size_t k = 0; k < sizeof kernel_events / sizeof *kernel_events; k++)
        if (!strcasecmp(name + 6, kernel_events[k].name))
            return (int)k + 1;
    return 0;
}

/* Opens kernel software event k (1-based) for the calling thread, disabled; -1 and errno. */
static int kernel_open(int k, int user_only) {
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = kernel_events[k - 1].config;
    a.disabled = 1;
    a.exclude_kernel = (unsigned)user_only;
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Event i, which PAPI cannot count: can the kernel?  In user and kernel mode, else (no
 * privilege: perf_event_paranoid) in user mode, where context switches and migrations are
 * never seen (the kernel records them in kernel mode) and task and CPU clocks ignore the
 * mode.  Otherwise i keeps PAPI's reason, with the kernel's added. */
static void kernel_probe(bench_papi *s, int i) {
    int k = kernel_event_of(s->names[i]);
    if (!k)
        return;
    int user_only = 0, fd = kernel_open(k, 0);
    uint64_t cfg = kernel_events[k - 1].config;
    if (fd < 0 && (errno == EACCES || errno == EPERM) && cfg != PERF_COUNT_SW_CONTEXT_SWITCHES &&
        cfg != PERF_COUNT_SW_CPU_MIGRATIONS && cfg != PERF_COUNT_SW_TASK_CLOCK && cfg != PERF_COUNT_SW_CPU_CLOCK) {
        user_only = 1;
        fd = kernel_open(k, 1);
    }
    if (fd < 0) {
        snprintf(s->why_kernel[i], sizeof s->why_kernel[i], "%.200s; perf_event_open: %s", s->reason[i], strerror(errno));
        s->reason[i] = s->why_kernel[i];
        return;
    }
    close(fd);
    int cid = s->init_error ? -1 : PAPI_get_component_index("perf_event");
    const PAPI_component_info_t *ci = cid >= 0 ? PAPI_get_component_info(cid) : NULL;
    if (ci && ci->disabled)
        snprintf(s->why_kernel[i], sizeof s->why_kernel[i], "%.200s (its perf_event component is disabled: %.200s)",
                 s->reason[i], ci->disabled_reason);
    else
        snprintf(s->why_kernel[i], sizeof s->why_kernel[i], "%.400s", s->reason[i]);
    s->kernel[i] = k;
    s->kuser[i] = user_only;
    s->reason[i] = NULL;
}

/* Creates an event set with the available events, multiplexed if asked. */
static int make_set(const bench_papi *s, int multiplex, int *out) {
    int es = PAPI_NULL, rc;
    if ((rc = PAPI_create_eventset(&es)) != PAPI_OK)
        return rc;
    if (multiplex) {
        if ((rc = PAPI_assign_eventset_component(es, 0)) != PAPI_OK || (rc = PAPI_set_multiplex(es)) != PAPI_OK)
            goto fail;
    }
    for (int i = 0; i < s->nev; i++)
        if (!s->reason[i] && !s->kernel[i] && (rc = PAPI_add_named_event(es, s->names[i])) != PAPI_OK)
            goto fail;
    *out = es;
    return PAPI_OK;
fail:
    PAPI_cleanup_eventset(es);
    PAPI_destroy_eventset(&es);
    return rc;
}

bench_papi *bench_papi_open(const char *events, unsigned nthreads) {
    if (!events || !*events)
        return NULL;
    bench_papi *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->nthreads = nthreads;
    char *copy = strdup(events), *save = NULL;
    for (char *e = strtok_r(copy, ",", &save); e && s->nev < MAX_EVENTS; e = strtok_r(NULL, ",", &save))
        s->names[s->nev++] = strdup(e);
    free(copy);
    s->eventset = malloc(nthreads * sizeof *s->eventset);
    s->fds = malloc((size_t)nthreads * MAX_EVENTS * sizeof *s->fds);
    s->fd_tid = calloc(nthreads, sizeof *s->fd_tid);
    s->counts = calloc((size_t)nthreads * MAX_EVENTS, sizeof *s->counts);
    if (!s->eventset || !s->fds || !s->fd_tid || !s->counts) {
        fprintf(stderr, "out of memory for PAPI's counts\n");
        exit(2);
    }
    for (unsigned t = 0; t < nthreads; t++)
        s->eventset[t] = PAPI_NULL;
    for (size_t j = 0; j < (size_t)nthreads * MAX_EVENTS; j++)
        s->fds[j] = -1;
    int rc = PAPI_library_init(PAPI_VER_CURRENT);
    if (rc != PAPI_VER_CURRENT) {
        s->init_error = rc < 0 ? PAPI_strerror(rc) : "PAPI library version mismatch";
        for (int i = 0; i < s->nev; i++) {
            s->reason[i] = s->init_error;
            kernel_probe(s, i);
            s->navail += !s->reason[i];
        }
        return s;
    }
    PAPI_thread_init(thread_id);
    PAPI_multiplex_init();
    /* Count in kernel mode too (context switches and most page-fault work happen there);
     * PAPI says "user" where it cannot (its components' domains; the kernel counters of
     * kernel_probe choose their own). */
    s->domain = PAPI_set_domain(PAPI_DOM_ALL) == PAPI_OK ? "all" : "user";
    /* Each event alone: is it countable at all, here? */
    for (int i = 0; i < s->nev; i++) {
        int es = PAPI_NULL;
        if ((rc = PAPI_create_eventset(&es)) != PAPI_OK) {
            s->reason[i] = PAPI_strerror(rc);
            continue;
        }
        if ((rc = PAPI_add_named_event(es, s->names[i])) != PAPI_OK) {
            s->reason[i] = PAPI_strerror(rc);
        } else {
            long long v;
            if ((rc = PAPI_start(es)) != PAPI_OK)
                s->reason[i] = PAPI_strerror(rc);
            else
                PAPI_stop(es, &v);
        }
        PAPI_cleanup_eventset(es);
        PAPI_destroy_eventset(&es);
        if (s->reason[i]) /* a software event PAPI cannot count here: perhaps the kernel can */
            kernel_probe(s, i);
        if (!s->reason[i])
            s->navail++;
        if (!s->reason[i] && !s->kernel[i])
            s->npapi++;
    }
    /* All together: if they conflict, multiplex. */
    int es;
    if (s->npapi && make_set(s, 0, &es) == PAPI_OK) {
        long long v[MAX_EVENTS];
        if (PAPI_start(es) == PAPI_OK)
            PAPI_stop(es, v);
        else
            s->multiplex = 1;
        PAPI_cleanup_eventset(es);
        PAPI_destroy_eventset(&es);
    } else if (s->npapi) {
        s->multiplex = 1;
    }
    return s;
}

/* Thread t's kernel counters: opened by the calling OS thread (an fd counts only the thread
 * that opened it; OpenMP may give number t to another thread in a later region). */
static void kernel_fds(bench_papi *s, unsigned t) {
    pid_t me = (pid_t)syscall(SYS_gettid);
    int *fd = &s->fds[(size_t)t * MAX_EVENTS];
    for (int i = 0; i < s->nev; i++) {
        if (!s->kernel[i])
            continue;
        if (fd[i] >= 0 && s->fd_tid[t] != me) {
            close(fd[i]);
            fd[i] = -1;
        }
        if (fd[i] < 0 && (fd[i] = kernel_open(s->kernel[i], s->kuser[i])) < 0)
            s->kfail[i] = 1;
    }
    s->fd_tid[t] = me;
}

void bench_papi_start(bench_papi *s, unsigned t) {
    if (!s || !s->navail || t >= s->nthreads)
        return;
    kernel_fds(s, t);
    if (!s->init_error && s->npapi && s->eventset[t] == PAPI_NULL) {
        PAPI_register_thread();
        if (make_set(s, s->multiplex, &s->eventset[t]) != PAPI_OK)
            s->eventset[t] = PAPI_NULL;
    }
    /* (everything set up first: the counts are those of the timed part) */
    for (int i = 0; i < s->nev; i++) {
        int fd = s->fds[(size_t)t * MAX_EVENTS + (size_t)i];
        if (s->kernel[i] && fd >= 0) {
            ioctl(fd, PERF_EVENT_IOC_RESET, 0);
            ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
        }
    }
    if (s->eventset[t] != PAPI_NULL) {
        PAPI_reset(s->eventset[t]);
        PAPI_start(s->eventset[t]);
    }
}

void bench_papi_stop(bench_papi *s, unsigned t) {
    if (!s || !s->navail || t >= s->nthreads)
        return;
    long long v[MAX_EVENTS] = {0};
    int papi_ok = s->eventset[t] != PAPI_NULL && PAPI_stop(s->eventset[t], v) == PAPI_OK;
    for (int i = 0, k = 0; i < s->nev; i++) {
        long long *c = &s->counts[(size_t)t * MAX_EVENTS + (size_t)i];
        int fd = s->fds[(size_t)t * MAX_EVENTS + (size_t)i];
        uint64_t kv;
        if (s->kernel[i]) {
            if (fd >= 0) {
                ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
                if (read(fd, &kv, sizeof kv) == (ssize_t)sizeof kv)
                    *c += (long long)kv;
            }
        } else if (!s->reason[i]) { /* v: the PAPI events, in order */
            if (papi_ok)
                *c += v[k];
            k++;
        }
    }
}

json_t *bench_papi_report(const bench_papi *s, int per_thread) {
    if (!s)
        return json_null();
    char lib[64];
    snprintf(lib, sizeof lib, "PAPI %d.%d.%d", PAPI_VERSION_MAJOR(PAPI_VERSION), PAPI_VERSION_MINOR(PAPI_VERSION),
             PAPI_VERSION_REVISION(PAPI_VERSION));
    json_t *events = json_object();
    for (int i = 0; i < s->nev; i++) {
        if (s->reason[i]) {
            json_object_set_new(events, s->names[i], json_pack("{s:b, s:s}", "available", 0, "reason", s->reason[i]));
            continue;
        }
        long long total = 0;
        json_t *pt = json_array();
        for (unsigned t = 0; t < s->nthreads; t++) {
            long long c = s->counts[(size_t)t * MAX_EVENTS + (size_t)i];
            total += c;
            json_array_append_new(pt, json_integer(c));
        }
        json_t *ev = json_pack("{s:b, s:I}", "available", 1, "total", (json_int_t)total);
        if (s->kernel[i]) /* say how, and why not through PAPI */
            json_object_set_new(ev, "via", json_pack("{s:s, s:s, s:s, s:b}", "counter",
                                                     "perf_event_open (the kernel's software event)", "domain",
                                                     s->kuser[i] ? "user" : "all", "papi", s->why_kernel[i],
                                                     "incomplete", s->kfail[i]));
        if (per_thread)
            json_object_set_new(ev, "per_thread", pt);
        else
            json_decref(pt);
        json_object_set_new(events, s->names[i], ev);
    }
    return json_pack("{s:s, s:s, s:b, s:o}", "library", lib, "domain", s->domain ? s->domain : "none", "multiplexed",
                     s->multiplex, "events", events);
}

void bench_papi_close(bench_papi *s) {
    if (!s)
        return;
    for (unsigned t = 0; t < s->nthreads; t++)
        if (s->eventset[t] != PAPI_NULL) {
            PAPI_cleanup_eventset(s->eventset[t]);
            PAPI_destroy_eventset(&s->eventset[t]);
        }
    for (size_t j = 0; j < (size_t)s->nthreads * MAX_EVENTS; j++)
        if (s->fds[j] >= 0)
            close(s->fds[j]);
    free(s->fds);
    free(s->fd_tid);
    for (int i = 0; i < s->nev; i++)
        free(s->names[i]);
    free(s->eventset);
    free(s->counts);
    free(s);
}
