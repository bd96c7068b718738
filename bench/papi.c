/* papi.c — see papi.h. */
#include <papi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/papi.h"

#define MAX_EVENTS 16

struct bench_papi {
    char *names[MAX_EVENTS];
    const char *reason[MAX_EVENTS]; /* NULL: available */
    int nev, navail, multiplex;
    const char *domain;
    const char *init_error;
    unsigned nthreads;
    int *eventset;         /* per thread, PAPI_NULL until first start */
    long long *counts;     /* nthreads x navail */
};

static unsigned long thread_id(void) { return (unsigned long)pthread_self(); }

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
        if (!s->reason[i] && (rc = PAPI_add_named_event(es, s->names[i])) != PAPI_OK)
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
    s->counts = calloc((size_t)nthreads * MAX_EVENTS, sizeof *s->counts);
    for (unsigned t = 0; t < nthreads; t++)
        s->eventset[t] = PAPI_NULL;
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
        if (!s->reason[i])
            s->navail++;
    }
    /* All together: if they conflict, multiplex. */
    int es;
    if (s->navail && make_set(s, 0, &es) == PAPI_OK) {
        long long v[MAX_EVENTS];
        if (PAPI_start(es) == PAPI_OK)
            PAPI_stop(es, v);
        else
            s->multiplex = 1;
        PAPI_cleanup_eventset(es);
        PAPI_destroy_eventset(&es);
    } else if (s->navail) {
        s->multiplex = 1;
    }
    return s;
}

void bench_papi_start(bench_papi *s, unsigned t) {
    if (!s || s->init_error || !s->navail || t >= s->nthreads)
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
    if (!s || s->init_error || !s->navail || t >= s->nthreads || s->eventset[t] == PAPI_NULL)
        return;
    long long v[MAX_EVENTS] = {0};
    if (PAPI_stop(s->eventset[t], v) != PAPI_OK)
        return;
    for (int i = 0; i < s->navail; i++)
        s->counts[(size_t)t * MAX_EVENTS + (size_t)i] += v[i];
}

json_t *bench_papi_report(const bench_papi *s, int per_thread) {
    if (!s)
        return json_null();
    char lib[64];
    snprintf(lib, sizeof lib, "PAPI %d.%d.%d", PAPI_VERSION_MAJOR(PAPI_VERSION), PAPI_VERSION_MINOR(PAPI_VERSION),
             PAPI_VERSION_REVISION(PAPI_VERSION));
    json_t *events = json_object();
    for (int i = 0, a = 0; i < s->nev; i++) {
        if (s->reason[i]) {
            json_object_set_new(events, s->names[i], json_pack("{s:b, s:s}", "available", 0, "reason", s->reason[i]));
            continue;
        }
        long long total = 0;
        json_t *pt = json_array();
        for (unsigned t = 0; t < s->nthreads; t++) {
            long long c = s->counts[(size_t)t * MAX_EVENTS + (size_t)a];
            total += c;
            json_array_append_new(pt, json_integer(c));
        }
        json_t *ev = json_pack("{s:b, s:I}", "available", 1, "total", (json_int_t)total);
        if (per_thread)
            json_object_set_new(ev, "per_thread", pt);
        else
            json_decref(pt);
        json_object_set_new(events, s->names[i], ev);
        a++;
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
    for (int i = 0; i < s->nev; i++)
        free(s->names[i]);
    free(s->eventset);
    free(s->counts);
    free(s);
}
