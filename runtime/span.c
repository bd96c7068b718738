/* span.c — work and span of a fork-join program (builds with FK_SPAN=1: the `span` build).
 *
 * The program runs on one worker with continuation stealing, that is, in the serial
 * projection's order: a fork runs its child at once and the continuation after it.  The
 * task macros call the hooks below at every point where a strand ends (a fork, a call, a
 * join, a return); a strand is the code between two such points.  Each strand's cost is
 * its time (the time-stamp counter, converted to ns; the time the hooks themselves take is
 * not counted) or 1 (FK_SPAN_STRANDS: the DAG's shape, exact and repeatable).
 *
 * The costs are combined along the DAG as the task frames come and go, on a shadow stack
 * of one record per running task (as Cilkview and Cilkscale do):
 *   contin  the longest path from the last join to here through this task's own strands
 *           and its called children;
 *   child   the longest path from the last join through a forked child that has returned;
 *   prefix  the longest path from the task's start to its last join.
 * A forked child of span s: child = max(child, contin + s).  A called child: contin += s.
 * A join: prefix += max(contin, child), then contin = child = 0.  A return: the task's span
 * is prefix + max(contin, child).  The burdened span charges every fork the cost of a steal
 * (fk_span_reset's burden) as Cilkscale does: on the forked child's path to the join
 * (child = max(child, contin + s + burden)) and on the continuation (contin += burden).
 *
 * Work is the sum of the strands.  Both include the runtime's own fork/join fast path on
 * one worker (what T1 pays for it), not the hooks: every hook stops the clock on entry and
 * starts it on exit, and what is left of a hook in the strand around it (the call, the
 * return, a read of the clock: a few ns, which fib's strands of about 1 ns do not dwarf) is
 * taken off once for each hook in a strand: the residue measured on empty strands
 * (calibrate_strand), but never more than the least any strand of the measurement took a
 * hook (hook_bound: a hook cannot leave more in a strand than the whole strand took).  So no
 * strand comes out below 0, and a repetition's work is at least its strands' raw time less
 * hook_bound for each hook.  A calibration that over-estimates the residue (a host whose
 * clock costs more in a tight loop than in real code; FORKSCOPE_SPAN_RESIDUE_SCALE inflates
 * it in tests) can no longer take a program's work to 0: subtracting it from every strand
 * and clamping the sum at 0 did.  Where what is left is not clearly above the residue or the
 * clock's resolution, the figures are flagged not resolved (resolved()).
 *
 * Time is noisy where it matters most: an interrupt in any strand lands on some path, and
 * the span is the longest.  A measurement over several repetitions of one program
 * (fk_span_next_rep) logs the DAG's events and each strand's time in the first, keeps each
 * strand's median time of the first three (the least of two), and evaluates the DAG again
 * with those (replay): an interrupt that lengthens a strand in one repetition is dropped. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "forkscope.h"

const char *fk_span_method_name(fk_span_method m) {
    switch (m) {
    case FK_SPAN_EXACT: return "exact (strands counted)";
    case FK_SPAN_PER_STRAND_MEDIAN: return "each strand's median of three repetitions (least of two)";
    case FK_SPAN_REP_MIN_LOG_FULL: return "minimum over the repetitions (the per-strand log outgrew its cap)";
    case FK_SPAN_REP_MIN_LONG_STRAND: return "minimum over the repetitions (a strand of over 2^32 ticks: the log cannot hold it)";
    case FK_SPAN_REP_MIN_DAG_VARIED: return "minimum over the repetitions (their DAGs differed)";
    }
    return "?";
}

#if FK_SPAN


typedef struct {
    double prefix, contin, child;    /* the path lengths above (ticks or strands) */
    double bprefix, bcontin, bchild; /* the same, burdened */
    double sprefix, scontin, schild; /* the same in strands (every strand 1), whatever the unit */
} span_rec;

/* The hooks' events, logged in the first repetition (one byte each) with each strand's time,
 * so that the DAG can be evaluated again with every strand's median time over the
 * repetitions. */
enum { EV_ENTER, EV_STRAND, EV_FORK_END, EV_CALL_END, EV_JOIN, EV_LEAVE };

static struct {
    fk_span_unit unit;
    double burden;   /* per fork, in the unit of the costs (ticks or strands) */
    double hook;     /* ticks taken off a strand for each hook: min(hook_cal, hook_bound) so far */
    double hook_cal; /* the residue calibrated on empty strands (times FORKSCOPE_SPAN_RESIDUE_SCALE) */
    double hook_bound; /* the least ticks any strand of the measurement took a hook (raw / (1 + inner)) */
    double tick_res; /* the clock's resolution: the least step between two reads, ticks */
    double raw;      /* this repetition's strands' ticks, the hooks' residues in them */
    uint64_t hooks;  /* the residues in them: one a strand, one for each hook inside it */
    uint64_t last;   /* when the last hook ended */
    uint64_t acc;    /* the strand running now: ticks outside hooks since it started */
    unsigned inner;  /* hooks inside it that end no strand (enter, fork_end, call_end) */
    uint64_t inner_total; /* such hooks in the repetition */
    double work, span, bspan;
    uint64_t strands, forks, roots;
    double ret, bret, sret; /* the span of the child that returned last (and in strands) */
    double sspan;           /* the span in strands */
    span_rec *stack;
    size_t depth, cap;
    /* the log: events (nev of evcap), strand times (ncost of costcap); rep counts the
     * repetitions, pos / cpos where this one is in the log */
    uint8_t *ev;
    uint32_t *cost; /* COST_SLOTS a strand: its times in the first repetitions (UINT32_MAX: none) */
    size_t nev, evcap, ncost, costcap, pos, cpos;
    unsigned rep;
    int log_state; /* 0 logging/matching, 1 over the cap, 2 a repetition's DAG differed, 3 a
                      strand too long for the log */
    double min_span, min_bspan; /* least over the repetitions of each one's own */
    struct rep_raw { double raw; uint64_t hooks; } *works; /* each finished repetition's */
    size_t nworks, workscap;
} S;

static double ns_per_tick = 1.0;

/* The clock (clock.h, shared with the time accounting) and its rate. */
static void calibrate_clock(void) {
    fk__clock_init();
    ns_per_tick = fk__clock_ns_per_tick();
}

int fk_span_enabled(void) { return 1; }

static size_t log_cap_bytes(void) {
    const char *e = getenv("FORKSCOPE_SPAN_LOG_MIB");
    long v = e ? strtol(e, NULL, 10) : 0;
    return (size_t)(v > 0 ? v : FK_SPAN_LOG_MIB) << 20;
}

/* FORKSCOPE_SPAN_RESIDUE_SCALE: the calibrated residue multiplied by this (default 1), for
 * tests: a host whose clock costs more, or whose calibration over-estimates what the hooks
 * leave in real strands. */
static double residue_scale(void) {
    const char *e = getenv("FORKSCOPE_SPAN_RESIDUE_SCALE");
    char *end;
    double v = e ? strtod(e, &end) : 1;
    return e && end != e && !*end && v >= 0 && v <= 1e6 ? v : 1;
}

/* Logs an event (first repetition) or checks it against the log (later ones). */
#define COST_SLOTS 3
#define COST_BYTES (COST_SLOTS * sizeof(uint32_t))

static inline void log_event(int e) {
    if (S.log_state || S.unit == FK_SPAN_STRANDS) /* (strands: the counts are exact) */
        return;
    if (S.rep == 0) {
        if (S.nev == S.evcap) {
            size_t cap = S.evcap ? 2 * S.evcap : 1 << 16;
            uint8_t *n = (cap + S.costcap * COST_BYTES <= log_cap_bytes()) ? realloc(S.ev, cap) : NULL;
            if (!n) {
                S.log_state = 1;
                return;
            }
            S.ev = n;
            S.evcap = cap;
        }
        S.ev[S.nev++] = (uint8_t)e;
    } else if (S.pos >= S.nev || S.ev[S.pos++] != e) {
        S.log_state = 2;
    }
}

/* A strand's times in the first COST_SLOTS repetitions (later ones are not logged). */
static inline void log_cost(uint64_t d) {
    if (S.log_state || S.unit == FK_SPAN_STRANDS || S.rep >= COST_SLOTS)
        return;
    if (d >= UINT32_MAX) { /* (a strand of over a second: the log cannot hold it) */
        S.log_state = 3;
        return;
    }
    if (S.rep == 0) {
        if (S.ncost == S.costcap) {
            size_t cap = S.costcap ? 2 * S.costcap : 1 << 16;
            uint32_t *n = (S.evcap + cap * COST_BYTES <= log_cap_bytes()) ? realloc(S.cost, cap * COST_BYTES) : NULL;
            if (!n) {
                S.log_state = 1;
                return;
            }
            S.cost = n;
            S.costcap = cap;
        }
        uint32_t *c = &S.cost[COST_SLOTS * S.ncost++];
        c[0] = (uint32_t)d;
        for (int k = 1; k < COST_SLOTS; k++)
            c[k] = UINT32_MAX;
    } else if (S.cpos < S.ncost) {
        S.cost[COST_SLOTS * S.cpos++ + S.rep] = (uint32_t)d;
    } else {
        S.log_state = 2;
    }
}

/* Strand i's time: the median of its three, the least of two (an interrupt lengthens one),
 * or its one. */
static inline double strand_time(size_t i) {
    const uint32_t *c = &S.cost[COST_SLOTS * i];
    uint32_t a = c[0], b = c[1], d = c[2];
    if (b == UINT32_MAX)
        return a;
    if (d == UINT32_MAX)
        return a < b ? a : b;
    uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
    return d < lo ? lo : d > hi ? hi : d;
}

/* Every hook stops the clock on entry and starts it again on exit, so that a strand's time
 * is the time outside hooks; what is left of each hook in it (the call, the return, a read of
 * the clock) is `hook` a hook, taken off for the strand's own and for each one inside it. */
static inline void hook_in(void) {
    if (S.unit == FK_SPAN_TIME)
        S.acc += fk__clock_now() - S.last;
}

static inline void hook_out(void) {
    if (S.unit == FK_SPAN_TIME)
        S.last = fk__clock_now();
}

/* Ends the strand running now: its cost goes to the task on top. */
static inline void strand_end(span_rec *f) {
    double d = 1;
    if (S.unit == FK_SPAN_TIME) {
        log_cost(S.acc);
        double a = (double)S.acc, n = 1 + S.inner;
        if (a < S.hook_bound * n) { /* (the bound only falls: the strands before took more off) */
            S.hook_bound = a / n;
            if (S.hook_bound < S.hook)
                S.hook = S.hook_bound;
        }
        d = a - S.hook * n;
        d = d > 0 ? d : 0; /* (S.hook <= a / n: below 0 by rounding only) */
        S.raw += a;
        S.hooks += 1 + S.inner;
        S.acc = 0;
    }
    S.inner = 0;
    f->contin += d;
    f->bcontin += d;
    f->scontin += 1;
    S.work += d;
    S.strands++;
}

static void push_rec(void) {
    if (S.depth == S.cap) {
        size_t cap = S.cap ? 2 * S.cap : 1024;
        span_rec *s = realloc(S.stack, cap * sizeof *s);
        if (!s) /* (the shadow stack is the measurement: without it there is none) */
            fk__misuse("out of memory for the span's shadow stack", "span", __FILE__, __LINE__);
        S.stack = s;
        S.cap = cap;
    }
    memset(&S.stack[S.depth++], 0, sizeof(span_rec));
}

static inline void sync_rec(span_rec *f) {
    f->prefix += f->contin > f->child ? f->contin : f->child;
    f->bprefix += f->bcontin > f->bchild ? f->bcontin : f->bchild;
    f->sprefix += f->scontin > f->schild ? f->scontin : f->schild;
    f->contin = f->child = f->bcontin = f->bchild = f->scontin = f->schild = 0;
}

static inline void fork_end(span_rec *f) {
    if (S.ret + f->contin > f->child)
        f->child = S.ret + f->contin;
    if (S.bret + S.burden + f->bcontin > f->bchild) /* (a stolen continuation: the child's path */
        f->bchild = S.bret + S.burden + f->bcontin; /* to the join pays a steal, as the rest) */
    if (S.sret + f->scontin > f->schild)
        f->schild = S.sret + f->scontin;
    f->bcontin += S.burden;
    S.forks++;
}

static inline void call_end(span_rec *f) {
    f->contin += S.ret;
    f->bcontin += S.bret;
    f->scontin += S.sret;
}

/* A task returns: its span goes to its parent (or, a root's, to the totals). */
static inline void leave(span_rec *f) {
    sync_rec(f);
    S.ret = f->prefix;
    S.bret = f->bprefix;
    S.sret = f->sprefix;
    if (--S.depth == 0) { /* a root ended: roots run one after another */
        S.span += S.ret;
        S.bspan += S.bret;
        S.sspan += S.sret;
    }
}

void fk__span_enter(void) {
    if (S.depth == 0) { /* a root starts: its first strand starts when this hook ends */
        S.roots++;
        S.acc = 0;
        S.inner = 0;
    } else {
        hook_in();
        S.inner++, S.inner_total++;
    }
    log_event(EV_ENTER);
    push_rec();
    hook_out();
}

/* (noinline: the calibration calls it as the task macros do, out of line) */
__attribute__((noinline)) void fk__span_strand(void) {
    hook_in();
    log_event(EV_STRAND);
    strand_end(&S.stack[S.depth - 1]);
    hook_out();
}

void fk__span_fork_end(void) {
    hook_in();
    S.inner++, S.inner_total++;
    log_event(EV_FORK_END);
    fork_end(&S.stack[S.depth - 1]);
    hook_out();
}

void fk__span_call_end(void) {
    hook_in();
    S.inner++, S.inner_total++;
    log_event(EV_CALL_END);
    call_end(&S.stack[S.depth - 1]);
    hook_out();
}

void fk__span_join(void) {
    hook_in();
    log_event(EV_JOIN);
    span_rec *f = &S.stack[S.depth - 1];
    strand_end(f);
    sync_rec(f);
    hook_out();
}

void fk__span_leave(void) {
    hook_in();
    log_event(EV_LEAVE);
    span_rec *f = &S.stack[S.depth - 1];
    strand_end(f);
    leave(f);
    hook_out();
}

/* What is left of a hook in the strand around it (a call, a return, a read of the clock;
 * the hook's own work, the log included, is outside the clock), in ticks, measured as the
 * strands are: CAL_STRANDS empty strands through fk__span_strand, `reps` times, each one's
 * median (strand_time); their mean. */
#define CAL_STRANDS 16384
static double calibrate_strand(unsigned reps) {
    __typeof__(S) saved = S;
    memset(&S, 0, sizeof S);
    S.unit = FK_SPAN_TIME;
    push_rec();
    for (unsigned r = 0; r < reps; r++) {
        S.rep = r;
        S.pos = S.cpos = 0;
        S.acc = 0;
        S.last = fk__clock_now();
        for (int k = 0; k < CAL_STRANDS; k++)
            fk__span_strand();
    }
    double sum = 0;
    int ok = S.log_state == 0 && S.ncost == CAL_STRANDS;
    for (size_t i = 0; ok && i < S.ncost; i++)
        sum += strand_time(i);
    free(S.stack);
    free(S.ev);
    free(S.cost);
    S = saved;
    return ok ? sum / CAL_STRANDS : 0;
}

/* The clock's resolution in ticks: the least step between two reads that differ, of 16 (the
 * TSC's is its read's cost, a few ns; a coarse clock's its tick). */
static double clock_resolution(void) {
    uint64_t best = UINT64_MAX;
    for (int k = 0; k < 16; k++) {
        uint64_t t0 = fk__clock_now(), t1;
        while ((t1 = fk__clock_now()) == t0)
            ;
        if (t1 - t0 < best)
            best = t1 - t0;
    }
    return (double)best;
}

void fk_span_reset(fk_span_unit unit, double burden) {
    if (S.depth) /* (the hooks would lose their shadow stack) */
        fk__misuse("fk_span_reset while a root runs", "span", __FILE__, __LINE__);
    calibrate_clock();
    free(S.stack);
    free(S.ev);
    free(S.cost);
    free(S.works);
    memset(&S, 0, sizeof S);
    S.unit = unit;
    S.burden = unit == FK_SPAN_STRANDS ? burden : burden / ns_per_tick;
    /* (each empty strand's median of 3: one preemption in a single pass would be charged
     * to every strand) */
    S.hook_cal = unit == FK_SPAN_TIME ? calibrate_strand(3) * residue_scale() : 0;
    S.hook = S.hook_cal;
    S.hook_bound = INFINITY;
    S.tick_res = unit == FK_SPAN_TIME ? clock_resolution() : 0;
    S.min_span = S.min_bspan = INFINITY;
}

/* This repetition's raw work and hooks (in strands: the count, and no hooks). */
static struct rep_raw this_rep(void) {
    return (struct rep_raw){S.unit == FK_SPAN_STRANDS ? S.work : S.raw, S.hooks};
}

/* The end of a repetition: the least of the repetitions' own figures so far. */
static void rep_done(void) {
    if (S.span < S.min_span)
        S.min_span = S.span;
    if (S.bspan < S.min_bspan)
        S.min_bspan = S.bspan;
    if (S.nworks == S.workscap) {
        size_t cap = S.workscap ? 2 * S.workscap : 16;
        struct rep_raw *w = realloc(S.works, cap * sizeof *w);
        if (!w)
            return; /* (the median then leaves this one out) */
        S.works = w;
        S.workscap = cap;
    }
    S.works[S.nworks++] = this_rep();
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double rep_work(struct rep_raw r, double hook) {
    double w = r.raw - hook * (double)r.hooks;
    return w > 0 ? w : 0; /* (hook <= every strand's raw per hook: below 0 by rounding only) */
}

/* The median of the repetitions' own works (the last one's included), each its raw time less
 * `hook` for each of its hooks (in strands: its count); their least in *least, the median raw
 * time in *raw. */
static double median_work(double hook, double *least, double *raw) {
    size_t n = S.nworks;
    double *v = malloc(2 * (n + 1) * sizeof *v), *u = v + n + 1;
    if (!v) { /* (out of memory: the last repetition alone) */
        struct rep_raw r = this_rep();
        *raw = r.raw;
        return *least = rep_work(r, hook);
    }
    *least = INFINITY;
    for (size_t i = 0; i <= n; i++) {
        struct rep_raw r = i < n ? S.works[i] : this_rep();
        v[i] = rep_work(r, hook);
        u[i] = r.raw;
        *least = v[i] < *least ? v[i] : *least;
    }
    double m = median(v, n + 1);
    *raw = median(u, n + 1);
    free(v);
    return m;
}

void fk_span_next_rep(void) {
    rep_done();
    if (S.log_state == 0 && S.rep > 0 && S.pos != S.nev)
        S.log_state = 2; /* this repetition made fewer events than the first */
    S.rep++;
    S.pos = S.cpos = 0;
    S.work = S.span = S.bspan = S.sspan = S.raw = 0;
    S.strands = S.forks = S.roots = S.inner_total = S.hooks = 0;
}

/* The DAG of the log evaluated again with each strand's median time less `hook` (into S's
 * totals; the caller keeps the repetition's own). */
static void replay(double hook) {
    S.work = S.span = S.bspan = 0;
    S.depth = 0;
    size_t c = 0;
    unsigned inner = 0;
    for (size_t i = 0; i < S.nev; i++) {
        if (S.ev[i] == EV_ENTER) {
            inner = S.depth ? inner + 1 : 0;
            push_rec();
            continue;
        }
        if (!S.depth || !S.stack) /* (a log always enters before anything else: not reached) */
            break;
        span_rec *f = &S.stack[S.depth - 1];
        switch (S.ev[i]) {
        case EV_STRAND:
        case EV_JOIN:
        case EV_LEAVE: {
            double d = strand_time(c++) - hook * (1 + inner);
            d = d > 0 ? d : 0; /* (hook <= any strand's least raw per hook: rounding only) */
            inner = 0;
            f->contin += d;
            f->bcontin += d;
            S.work += d;
            if (S.ev[i] == EV_JOIN)
                sync_rec(f);
            else if (S.ev[i] == EV_LEAVE)
                leave(f);
            break;
        }
        case EV_FORK_END:
            inner++;
            fork_end(f);
            break;
        case EV_CALL_END:
            inner++;
            call_end(f);
            break;
        }
    }
}

/* Whether the clock resolves the strands: what is left of them is at least twice what is
 * uncertain in it, for each hook the residue taken off or the clock's resolution, whichever
 * is more (once for each strand and once for each hook inside it).  The residue is known to a
 * few ns only, so finer strands (fib's, UTS's) come out at any value from 0 to several times
 * their true cost; and a clock that steps coarser than the strands cannot time them. */
static int resolved(double work_ticks) {
    if (!S.strands || !S.hooks)
        return 0;
    double per = S.hook > S.tick_res ? S.hook : S.tick_res;
    return work_ticks >= 2 * per * (double)S.hooks;
}

int fk_span_get(fk_span_result *r) {
    memset(r, 0, sizeof *r);
    if (S.depth)
        return FK_EINVAL; /* a root is still running */
    /* (the last repetition made fewer events than the first: the DAG varied; not written
     * back, so that a call between repetitions leaves the measurement as it was) */
    int log_state = S.log_state == 0 && S.rep > 0 && S.pos != S.nev ? 2 : S.log_state;
    double k = S.unit == FK_SPAN_STRANDS ? 1.0 : ns_per_tick;
    r->unit = S.unit;
    r->reps = S.rep + 1;
    r->strands = S.strands;
    r->forks = S.forks;
    r->roots = S.roots;
    r->burden = S.burden * k;
    r->last_span = S.span * k;
    double least_work, raw;
    r->work = median_work(S.hook, &least_work, &raw) * k;
    r->strand_work = (double)S.strands; /* (the last repetition's DAG in strands) */
    r->strand_span = S.sspan;
    if (S.unit == FK_SPAN_STRANDS) {
        r->method = FK_SPAN_EXACT;
        r->work = r->min_work = S.work;
        r->span = S.span;
        r->burdened_span = S.bspan;
        r->resolved = 1;
    } else if (log_state == 0) {
        /* (replay uses the totals and the shadow stack: the repetition's own are kept) */
        double work = S.work, span = S.span, bspan = S.bspan, sspan = S.sspan;
        uint64_t forks = S.forks;
        replay(S.hook);
        r->method = FK_SPAN_PER_STRAND_MEDIAN;
        r->min_work = S.work * k;
        r->span = S.span * k;
        r->burdened_span = S.bspan * k;
        S.work = work, S.span = span, S.bspan = bspan, S.sspan = sspan, S.forks = forks;
    } else {
        r->method = log_state == 1   ? FK_SPAN_REP_MIN_LOG_FULL
                    : log_state == 3 ? FK_SPAN_REP_MIN_LONG_STRAND
                                     : FK_SPAN_REP_MIN_DAG_VARIED;
        /* (the works again with the final residue; the spans as each repetition had them, its
         * strands less the residue as low as it had fallen then: at least 0 each) */
        r->min_work = least_work * k;
        r->span = (S.span < S.min_span ? S.span : S.min_span) * k;
        r->burdened_span = (S.bspan < S.min_bspan ? S.bspan : S.min_bspan) * k;
    }
    if (S.unit == FK_SPAN_TIME) {
        /* (both works: the median of the repetitions' sums holds their interrupts, which a
         * single preempted repetition of fine strands would pass off as resolved time) */
        r->resolved = resolved((r->work < r->min_work ? r->work : r->min_work) / k);
        r->raw_work = raw * k;
        r->hooks = S.hooks;
        r->hook = S.hook * k;
        r->hook_calibrated = S.hook_cal * k;
        r->hook_bound = (isfinite(S.hook_bound) ? S.hook_bound : S.hook_cal) * k;
        r->clock_resolution = S.tick_res * k;
    }
    return 0;
}

#else

int fk_span_enabled(void) { return 0; }
void fk_span_reset(fk_span_unit unit, double burden_ns) {
    (void)unit;
    (void)burden_ns;
}
void fk_span_next_rep(void) {}
int fk_span_get(fk_span_result *r) {
    memset(r, 0, sizeof *r);
    return FK_EINVAL;
}

#endif
