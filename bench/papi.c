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
    char why_kernel[MAX_EVENTS][512]; /* what PAPI said about it */
    int nev, navail, npapi, multiplex;
    const char *domain;
    const char *init_error;
    unsigned nthreads;
    int *eventset;         /* per thread, PAPI_NULL until first start */
    int *fds;              /* per thread x event: perf_event_open() fds, -1 */
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
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
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
    s->counts = calloc((size_t)nthreads * MAX_EVENTS, sizeof *s->counts);
    for (unsigned t = 0; t < nthreads; t++)
        s->eventset[t] = PAPI_NULL;
    for (size_t j = 0; j < (size_t)nthreads * MAX_EVENTS; j++)
        s->fds[j] = -1;
    int rc = PAPI_library_init(PAPI_VER_CURRENT);
    if (rc != PAPI_VER_CURRENT) {
        s->init_error = rc < 0 ? PAPI_strerror(rc) : "PAPI library version mismatch";
        for (int i = 0; i < s->nev; i++)
            s->reason[i] = s->init_error;
        return s;
    }
    PAPI_thread_init(thread_id);
    PAPI_multiplex_init();
    /* Count in kernel mode too (context switches and most page-fault work happen there);
     * without the privilege for that, stay with user mode and say so. */
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
        int k = s->reason[i] ? kernel_event_of(s->names[i]) : 0;
        if (k) { /* a software event PAPI cannot count here: the kernel can */
            int fd = kernel_open(k, !strcmp(s->domain, "user"));
            if (fd >= 0) {
                close(fd);
                int cid = PAPI_get_component_index("perf_event");
                const PAPI_component_info_t *ci = cid >= 0 ? PAPI_get_component_info(cid) : NULL;
                if (ci && ci->disabled)
                    snprintf(s->why_kernel[i], sizeof s->why_kernel[i], "%.200s (its perf_event component is disabled: %.200s)",
                             s->reason[i], ci->disabled_reason);
                else
                    snprintf(s->why_kernel[i], sizeof s->why_kernel[i], "%s", s->reason[i]);
                s->kernel[i] = k;
                s->reason[i] = NULL;
            }
        }
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

void bench_papi_start(bench_papi *s, unsigned t) {
    if (!s || s->init_error || !s->navail || t >= s->nthreads)
        return;
    for (int i = 0; i < s->nev; i++) {
        int *fd = &s->fds[(size_t)t * MAX_EVENTS + (size_t)i];
        if (!s->kernel[i])
            continue;
        if (*fd < 0)
            *fd = kernel_open(s->kernel[i], !strcmp(s->domain, "user"));
        if (*fd >= 0) {
            ioctl(*fd, PERF_EVENT_IOC_RESET, 0);
            ioctl(*fd, PERF_EVENT_IOC_ENABLE, 0);
        }
    }
    if (!s->npapi)
        return;
    if (s->eventset[t] == PAPI_NULL) {
        PAPI_register_thread();
        if (make_set(s, s->multiplex, &s->eventset[t]) != PAPI_OK)
            return;
    }
    PAPI_reset(s->eventset[t]);
    PAPI_start(s->eventset[t]);
}

void bench_papi_stop(bench_papi *s, unsigned t) {
    if (!s || s->init_error || !s->navail || t >= s->nthreads)
        return;
    for (int i = 0; i < s->nev; i++) {
        int fd = s->fds[(size_t)t * MAX_EVENTS + (size_t)i];
        uint64_t v;
        if (s->kernel[i] && fd >= 0) {
            ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
            if (read(fd, &v, sizeof v) == (ssize_t)sizeof v)
                s->counts[(size_t)t * MAX_EVENTS + (size_t)i] += (long long)v;
        }
    }
    if (!s->npapi || s->eventset[t] == PAPI_NULL)
        return;
    long long v[MAX_EVENTS] = {0};
    if (PAPI_stop(s->eventset[t], v) != PAPI_OK)
        return;
    for (int i = 0, k = 0; i < s->nev; i++) /* v: the PAPI events, in order */
        if (!s->reason[i] && !s->kernel[i])
            s->counts[(size_t)t * MAX_EVENTS + (size_t)i] += v[k++];
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
            json_object_set_new(ev, "via", json_pack("{s:s, s:s}", "counter", "perf_event_open (the kernel's software event)",
                                                     "papi", s->why_kernel[i]));
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
    for (int i = 0; i < s->nev; i++)
        free(s->names[i]);
    free(s->eventset);
    free(s->counts);
    free(s);
}
