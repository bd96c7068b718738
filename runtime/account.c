/* account.c — where each worker's time goes (fk_pool_times) and its timeline
 * (fk_pool_trace_write).
 *
 * A worker is always in exactly one category (fk_time_cat); the scheduler moves it at its
 * own transitions (FK__ACCT in sched.c, sched_fiber.c, deque.c), and each move adds the
 * time since the last one to the category left.  So per worker the categories add up to the
 * worker's wall time by construction; what the tests check is that each moment lands in the
 * right one.  The fork/join fast path reads no clock: its cost is work, as it is in T1.
 *
 * Readers (any thread) copy a worker's counters under a sequence lock: the owner makes the
 * sequence odd, updates, makes it even; a reader retries a copy taken across an update.
 * A reading counts the open period up to the reader's clock, and no part ever goes down
 * between two readings: that needs the owner to close the period no earlier than any reader
 * counted it.  The clocks cannot promise it (two CPUs' time-stamp counters may disagree by
 * microseconds: a reader ahead of the owner saw a part go down 17 us in CI; and RDTSC is not
 * ordered by the fences around it), so the owner does not compare clocks: each reader raises
 * the worker's `seen` to the time it counted up to before it validates its copy, and the
 * owner, after making the sequence odd, closes the period at max(its clock, seen).  A
 * Dekker pair of seq_cst fences (F1 in fk__acct_to, F2 in snapshot) makes sure that a reader
 * either retries or has its time seen by the move that closes the period.
 * With a trace, each move is also logged (FK__TEV_CAT), with each steal (FK__TEV_STEAL,
 * victim to thief) and leap; a full log counts what it drops. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "worker.h"

static const char *const cat_names[FK_TIME_NCAT] = {"work", "search", "steal", "join", "wait", "fiber", "sleep", "promote"};

const char *fk_time_cat_name(fk_time_cat c) { return (unsigned)c < FK_TIME_NCAT ? cat_names[c] : NULL; }

#if FK_ACCOUNT

#define RLX memory_order_relaxed

static void log_event(fk__acct *a, unsigned kind, unsigned cat, const char *name, uint32_t arg, uint64_t at) {
    uint32_t n = atomic_load_explicit(&a->nev, RLX);
    if (n >= a->cap) {
        atomic_store_explicit(&a->dropped, atomic_load_explicit(&a->dropped, RLX) + 1, RLX);
        return;
    }
    a->ev[n] = (fk__tev){.tick = at, .name = name, .kind = (uint16_t)kind, .cat = (uint16_t)cat, .arg = arg};
    atomic_store_explicit(&a->nev, n + 1, memory_order_release); /* the event before the count */
}

/* The owner's first log entry after a reset (fk_pool_stats_reset): the log starts afresh, with
 * the category the worker has been in since the reset.  (The reset bumps the epoch after
 * setting acct_t0; the writer reads a log only if its epoch is the pool's.) */
static void renew(fk_worker *w, fk__acct *a) {
    uint32_t e = atomic_load_explicit(&w->pool->acct_epoch, memory_order_acquire);
    if (e == atomic_load_explicit(&a->epoch, RLX))
        return;
    atomic_store_explicit(&a->nev, 0, RLX);
    atomic_store_explicit(&a->dropped, 0, RLX);
    atomic_store_explicit(&a->steals, 0, RLX);
    atomic_store_explicit(&a->epoch, e, memory_order_release); /* (the zeros before the epoch) */
    log_event(a, FK__TEV_CAT, atomic_load_explicit(&a->cat, RLX), NULL, 0,
              atomic_load_explicit(&w->pool->acct_t0, RLX));
}

uint64_t fk__acct_to(fk_worker *w, unsigned cat, const char *name, uint64_t at) {
    fk__acct *a = &w->acct;
    if (a->ev)
        renew(w, a);
    unsigned cur = atomic_load_explicit(&a->cat, RLX);
    if (cur == cat && !name)
        return 0;
    uint32_t s = atomic_load_explicit(&a->seq, RLX); /* (only the owner writes seq) */
    atomic_store_explicit(&a->seq, s + 1, RLX);
    /* F1, pairs with F2 in snapshot.  Both are seq_cst, so one precedes the other in their
     * single total order.  F2 first: our load of `seen` below returns that reader's time or a
     * later (larger) one, since its raise of `seen` is sequenced before its F2.  F1 first:
     * that reader's second load of seq, after its F2, returns our odd value or a later one,
     * and it retries.  So a reading that stands counted the open period up to at most the
     * time we close it with.  (F1 is also the seqlock writer's release fence: a reader that
     * copies any of the stores below sees seq changed in its second look, through its F2.) */
    atomic_thread_fence(memory_order_seq_cst);
    uint64_t now = at ? at : fk__clock_now();
    uint64_t seen = atomic_load_explicit(&a->seen, RLX); /* after F1: see above */
    uint64_t last = atomic_load_explicit(&a->last, RLX);
    if (now < seen) /* (a reader's clock ahead of ours: the period lasts until its time) */
        now = seen;
    if (now < last) /* (our clock behind the last move's time: the period is empty) */
        now = last;
    atomic_store_explicit(&a->t[cur], atomic_load_explicit(&a->t[cur], RLX) + (now - last), RLX);
    atomic_store_explicit(&a->last, now, RLX);
    atomic_store_explicit(&a->cat, cat, RLX);
    a->name = name;
    /* Even after; pairs with the acquire load of seq that begins a reader's copy: a reader
     * that sees s + 2 copies these counters (or later ones). */
    atomic_store_explicit(&a->seq, s + 2, memory_order_release);
    if (a->ev)
        log_event(a, FK__TEV_CAT, cat, name, 0, now);
    return now;
}

void fk__acct_event(fk_worker *w, unsigned kind, uint32_t arg, uint64_t at) {
    fk__acct *a = &w->acct;
    if (a->ev)
        renew(w, a);
    if (kind == FK__TEV_STEAL)
        atomic_store_explicit(&a->steals, atomic_load_explicit(&a->steals, RLX) + 1, RLX);
    if (a->ev)
        log_event(a, kind, 0, NULL, arg, at ? at : fk__clock_now());
}

/* Before the worker's thread starts: in the search category from now on. */
int fk__acct_worker_init(fk_worker *w) {
    fk__acct *a = &w->acct;
    const fk_pool_opts *o = &w->pool->opts;
    memset(a, 0, sizeof *a);
    a->on = o->account != FK_ACCOUNT_OFF;
    if (!a->on)
        return 0;
    fk__clock_init();
    if (o->account == FK_ACCOUNT_TRACE) {
        a->cap = o->trace_events ? o->trace_events : 1;
        a->ev = malloc((size_t)a->cap * sizeof *a->ev);
        if (!a->ev)
            return FK_ENOMEM;
    }
    uint64_t now = fk__clock_now();
    atomic_store_explicit(&a->cat, FK_TIME_SEARCH, RLX);
    atomic_store_explicit(&a->last, now, RLX);
    if (a->ev)
        log_event(a, FK__TEV_CAT, FK_TIME_SEARCH, NULL, 0, now);
    return 0;
}

int fk__acct_pool_init(fk_pool *p) {
    if (p->opts.account == FK_ACCOUNT_OFF)
        return 0;
    p->acct_base = calloc((size_t)p->n * FK_TIME_NCAT, sizeof *p->acct_base);
    p->acct_cpu_base = calloc(p->n, sizeof *p->acct_cpu_base);
    return p->acct_base && p->acct_cpu_base ? 0 : FK_ENOMEM;
}

void fk__acct_worker_free(fk_worker *w) {
    free(w->acct.ev);
    w->acct.ev = NULL;
}

/* A consistent copy of w's counters, the current period counted up to now: to the later of
 * our clock and the latest time any reader counted it up to, which we raise `seen` to; the
 * owner closes the period no earlier (fk__acct_to).  So no part goes down between two
 * readings, whatever the clocks: a period's count only grows while it is open (each reading
 * counts to the latest time counted so far, or later), and the count it is closed with is at
 * least every count a reading took of it.  w's owner may be moving meanwhile. */
static void snapshot(fk_worker *w, uint64_t *out) {
    fk__acct *a = &w->acct;
    for (;;) {
        /* Pairs with the owner's release store of the even seq: the copy below holds at least
         * the counters of the move that stored s1. */
        uint32_t s1 = atomic_load_explicit(&a->seq, memory_order_acquire);
        if (s1 & 1) { /* (the owner is between two stores: a few instructions) */
            fk__cpu_pause();
            continue;
        }
        unsigned cat = atomic_load_explicit(&a->cat, RLX);
        uint64_t last = atomic_load_explicit(&a->last, RLX);
        for (int c = 0; c < FK_TIME_NCAT; c++)
            out[c] = atomic_load_explicit(&a->t[c], RLX);
        uint64_t now = fk__clock_now();
        /* Raise seen to now (relaxed: F2 below orders it before our second look at seq), or
         * take the later time another reader counted to. */
        uint64_t seen = atomic_load_explicit(&a->seen, RLX);
        while (seen < now && !atomic_compare_exchange_weak_explicit(&a->seen, &seen, now, RLX, RLX))
            ;
        if (now < seen)
            now = seen;
        /* F2, pairs with F1 in fk__acct_to: either the move that closes the period we copied
         * loads a seen >= now, or our load of seq below sees its odd store (see F1).  As an
         * acquire fence it is also the seqlock reader's: the copy before the second look. */
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load_explicit(&a->seq, RLX) != s1) {
            fk__cpu_pause();
            continue;
        }
        if (now > last && cat < FK_TIME_NCAT)
            out[cat] += now - last;
        return;
    }
}

/* The CPU time of w's thread, ns (0 if it cannot be read, or the pool's threads are being
 * stopped: under the pool's lock, which the shutdown takes before it joins them). */
static uint64_t thread_cpu_ns(fk_pool *p, const fk_worker *w) {
    clockid_t id;
    struct timespec ts;
    pthread_mutex_lock(&p->lock);
    int ok = !p->shut && !pthread_getcpuclockid(w->thread, &id) && !clock_gettime(id, &ts);
    pthread_mutex_unlock(&p->lock);
    return ok ? (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec : 0;
}

/* (A reading concurrent with a reset may mix the old and the new bases of a worker.) */
void fk__acct_reset(fk_pool *p) {
    if (p->opts.account == FK_ACCOUNT_OFF)
        return;
    for (unsigned i = 0; i < p->n; i++) {
        uint64_t t[FK_TIME_NCAT];
        snapshot(p->workers[i], t);
        for (int c = 0; c < FK_TIME_NCAT; c++)
            atomic_store_explicit(&p->acct_base[(size_t)i * FK_TIME_NCAT + c], t[c], RLX);
        atomic_store_explicit(&p->acct_cpu_base[i], thread_cpu_ns(p, p->workers[i]), RLX);
    }
    atomic_store_explicit(&p->acct_t0, fk__clock_now(), RLX);
    atomic_fetch_add_explicit(&p->acct_epoch, 1, memory_order_release); /* (after acct_t0: renew) */
}

int fk_pool_times(const fk_pool *p, fk_times *sum, fk_times *per_worker) {
    if (p->opts.account == FK_ACCOUNT_OFF)
        return FK_EINVAL;
    double k = fk__clock_ns_per_tick();
    fk_times total;
    memset(&total, 0, sizeof total);
    for (unsigned i = 0; i < p->n; i++) {
        uint64_t t[FK_TIME_NCAT];
        snapshot(p->workers[i], t);
        fk_times one;
        memset(&one, 0, sizeof one);
        for (int c = 0; c < FK_TIME_NCAT; c++) {
            uint64_t b = atomic_load_explicit(&p->acct_base[(size_t)i * FK_TIME_NCAT + c], RLX);
            one.ns[c] = (double)(t[c] > b ? t[c] - b : 0) * k;
            one.wall_ns += one.ns[c];
            total.ns[c] += one.ns[c];
        }
        uint64_t cpu = thread_cpu_ns((fk_pool *)p, p->workers[i]);
        uint64_t cpu0 = atomic_load_explicit(&p->acct_cpu_base[i], RLX);
        one.cpu_ns = cpu > cpu0 ? (double)(cpu - cpu0) : 0;
        total.wall_ns += one.wall_ns;
        total.cpu_ns += one.cpu_ns;
        if (per_worker)
            per_worker[i] = one;
    }
    if (sum)
        *sum = total;
    return 0;
}

/* ---- the Chrome Trace Event Format ------------------------------------------------------ */

static void put_json_string(FILE *out, const char *s) {
    fputc('"', out);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(out, "\\u%04x", ch);
        else
            fputc(ch, out);
    }
    fputc('"', out);
}

typedef struct {
    FILE *out;
    uint64_t t0, end; /* the trace's window */
    double us_per_tick;
    int first;
} writer;

static void sep(writer *wr) {
    fputs(wr->first ? "\n" : ",\n", wr->out);
    wr->first = 0;
}

static double us(const writer *wr, uint64_t tick) { return (double)(tick - wr->t0) * wr->us_per_tick; }

static void span(writer *wr, unsigned tid, unsigned cat, const char *name, uint64_t from, uint64_t to) {
    if (to < wr->t0)
        return;
    if (from < wr->t0)
        from = wr->t0;
    if (to > wr->end)
        to = wr->end;
    if (to <= from)
        return;
    /* (times in us to 0.1 ns: a span of one tick, 0.2 ns or more, never prints as 0) */
    sep(wr);
    fprintf(wr->out, "{\"ph\":\"X\",\"pid\":1,\"tid\":%u,\"cat\":\"%s\",\"name\":", tid, cat_names[cat]);
    put_json_string(wr->out, name ? name : cat_names[cat]);
    fprintf(wr->out, ",\"ts\":%.4f,\"dur\":%.4f}", us(wr, from), us(wr, to) - us(wr, from));
}

/* One worker's periods (each from one logged move to the next; the last one to `end`, or to
 * the last move logged if the log dropped some) and its steals and leaps, as flows from the
 * victim's track to this one; its counts into *s.  A worker that has not moved since the last
 * reset (its log is older: see renew) has been in one category all along. */
static void write_worker(writer *wr, const fk_pool *p, const fk_worker *w, uint64_t *flow, fk_trace_summary *s) {
    const fk__acct *a = &w->acct;
    if (atomic_load_explicit(&a->epoch, memory_order_acquire) != atomic_load_explicit(&p->acct_epoch, RLX)) {
        span(wr, w->id, atomic_load_explicit(&a->cat, RLX), NULL, wr->t0, wr->end);
        return;
    }
    uint32_t n = atomic_load_explicit(&a->nev, memory_order_acquire);
    uint64_t dropped = atomic_load_explicit(&a->dropped, RLX);
    int full = dropped != 0;
    s->events += n + dropped;
    s->dropped += dropped;
    s->steals += atomic_load_explicit(&a->steals, RLX);
    const fk__tev *open = NULL;
    for (uint32_t j = 0; j < n; j++) {
        const fk__tev *e = &a->ev[j];
        if (e->kind == FK__TEV_CAT) {
            if (open)
                span(wr, w->id, open->cat, open->name, open->tick, e->tick);
            open = e;
            continue;
        }
        if (e->tick < wr->t0 || e->tick > wr->end)
            continue;
        if (e->kind == FK__TEV_PROMOTE) {
            s->promotions++;
            sep(wr);
            fprintf(wr->out,
                    "{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":%u,\"cat\":\"promote\",\"name\":\"promote\",\"ts\":%.4f,"
                    "\"args\":{\"slots\":%u}}",
                    w->id, us(wr, e->tick), e->arg);
            continue;
        }
        const char *what = e->kind == FK__TEV_STEAL ? "steal" : "leap";
        uint64_t id = ++*flow;
        sep(wr);
        fprintf(wr->out, "{\"ph\":\"s\",\"pid\":1,\"tid\":%u,\"cat\":\"%s\",\"name\":\"%s\",\"id\":%llu,\"ts\":%.4f}",
                e->arg, what, what, (unsigned long long)id, us(wr, e->tick));
        sep(wr);
        fprintf(wr->out,
                "{\"ph\":\"f\",\"bp\":\"e\",\"pid\":1,\"tid\":%u,\"cat\":\"%s\",\"name\":\"%s\",\"id\":%llu,\"ts\":%.4f}",
                w->id, what, what, (unsigned long long)id, us(wr, e->tick));
    }
    if (open && !full)
        span(wr, w->id, open->cat, open->name, open->tick, wr->end);
}

int fk_pool_trace_write(const fk_pool *p, FILE *out, const char *const *meta, fk_trace_summary *summary) {
    if (p->opts.account != FK_ACCOUNT_TRACE)
        return FK_EINVAL;
    uint64_t end = fk__clock_now();
    fk_clock_info ck;
    fk_clock_get(&ck);
    writer wr = {out, atomic_load_explicit(&p->acct_t0, RLX), end, ck.ns_per_tick / 1000, 1};
    if (!wr.t0) { /* from the start: the earliest event logged */
        wr.t0 = end;
        for (unsigned i = 0; i < p->n; i++)
            if (atomic_load_explicit(&p->workers[i]->acct.nev, memory_order_acquire) && p->workers[i]->acct.ev[0].tick < wr.t0)
                wr.t0 = p->workers[i]->acct.ev[0].tick;
    }
    fk_trace_summary s = {0, 0, 0, 0};
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", out);
    sep(&wr);
    fputs("{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"forkscope pool\"}}", out);
    uint64_t flow = 0;
    for (unsigned i = 0; i < p->n; i++) {
        sep(&wr);
        fprintf(out, "{\"ph\":\"M\",\"pid\":1,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":\"worker %u\"}}", i, i);
        write_worker(&wr, p, p->workers[i], &flow, &s);
    }
    fprintf(out, "\n],\"otherData\":{\"variant\":\"%s\",\"workers\":%u,\"sched\":\"%s\",\"clock\":\"%s\","
                 "\"ns_per_tick\":%.9f,\"events\":%llu,\"dropped\":%llu,\"steals\":%llu,\"promotions\":%llu,"
                 "\"promote\":\"%s\",\"log_events_per_worker\":%u",
            fk_build_variant(), p->n, fk_sched_name(p->sched), ck.source, ck.ns_per_tick,
            (unsigned long long)s.events, (unsigned long long)s.dropped, (unsigned long long)s.steals,
            (unsigned long long)s.promotions, fk_promote_name(p->opts.promote), p->workers[0]->acct.cap);
    for (size_t j = 0; meta && meta[j] && meta[j + 1]; j += 2) {
        fputc(',', out);
        put_json_string(out, meta[j]);
        fputc(':', out);
        put_json_string(out, meta[j + 1]);
    }
    fputs("}}\n", out);
    if (summary)
        *summary = s;
    return fflush(out) || ferror(out) ? (errno ? errno : EIO) : 0;
}

#else /* FK_ACCOUNT == 0 */

int fk_pool_times(const fk_pool *p, fk_times *sum, fk_times *per_worker) {
    (void)p, (void)sum, (void)per_worker;
    return FK_EINVAL;
}

int fk_pool_trace_write(const fk_pool *p, FILE *out, const char *const *meta, fk_trace_summary *summary) {
    (void)p, (void)out, (void)meta, (void)summary;
    return FK_EINVAL;
}
#endif
