/* lazy.pml — the lazy scheduler's sleep/wake protocol of runtime/sched.c, model-checked with
 * SPIN (make check-model).
 *
 * G groups (NUMA nodes) of M workers; a submitter hands R roots, one at a time or all at
 * once, to workers' inboxes (fk__submit: any worker, then fk__wake) and waits for them; then
 * stops the pool (fk_pool_shutdown: stop, then wake_bit on everyone).  A root, run by the
 * worker that took it, publishes one stealable child (so thieves have something to find
 * while it runs) and joins it (takes it back itself if nobody stole it).  Workers: take a
 * root from the inbox, else steal, else offer to sleep (try_sleep: the (B) check of the last
 * thief, the sleeper bit, the re-check, the futex wait on the epoch).  Every operation on
 * active (nactive here: "active" is a Promela keyword), thieves[], the sleeper bits and the epochs is seq_cst in the C code, so SPIN's
 * sequential consistency is the right memory model here.
 *
 * Properties:
 *  - no lost wake-up: every root runs and the pool stops (a root left in an inbox with its
 *    worker asleep leaves the submitter waiting for ever: SPIN reports an invalid end state);
 *  - a thief awake per group while work runs (the monitor, in every reachable state): while
 *    active > 0, each group has a thief awake, or all its members are active, or one of them
 *    is inside a transition that ends in a thief (woken by a waker; in try_sleep before its
 *    futex wait, where (B) or the re-check may keep it up; turning active and about to
 *    wake its replacement).
 * Mutations that SPIN must refute: -DMUT_NO_RECHECK (try_sleep does not re-check its inbox
 * after setting its bit: the lost wake-up), -DMUT_NO_REPLACE (become_active does not wake a
 * replacement when it took its group's last thief; needs M >= 2), -DMUT_NO_LASTCHECK
 * (try_sleep without either test of "the last thief while work runs": (B)'s early one and the
 * re-check's; the last thief then sleeps while work runs).  -DNO_EARLY_B removes only (B)'s
 * early test and must verify: the re-check's test suffices for correctness, the early one
 * saves setting and clearing the sleeper bit.
 *
 * Each step names the C it models. */

#ifndef G
#define G 2
#endif
#ifndef M
#define M 2
#endif
#define W (G * M)
#ifndef R
#define R 2
#endif

#define THIEF 0
#define ACTIVE 1
#define ASLEEP 2

byte nactive = 0;   /* p->active */
byte thieves[G];    /* p->groups[g].thieves */
bool sleeper[W];    /* p->sleepers[] bits */
byte epoch[W];      /* w->wake_epoch (mod 256) */
byte state[W];      /* w->state */
byte inbox[W];      /* roots in w->inbox */
byte pub[W];        /* stealable children in w's deque */
bool stop = 0;      /* p->stop */
byte done = 0;      /* roots completed */
byte exited = 0;
/* transitions the monitor allows (bookkeeping of the model, not of the C code) */
bool woken[W];      /* a waker claimed w's sleeper bit; w has not yet counted itself a thief */
bool deciding[W];   /* w is in try_sleep between its fetch_sub of thieves and either its re-add
                       (it stays up, or its re-check cancels the sleep) or its futex wait */
bool in_active[W];  /* w is inside become_active (its wakes of a replacement, and of a thief for
                       every thiefless group when the pool turned active, not yet done) */

inline wake_bit(x, ok) {
    /* wake_bit: the fetch_and that owns the sleeper, then the epoch increment (futex_wake) */
    atomic { ok = sleeper[x]; sleeper[x] = 0; if :: ok -> woken[x] = 1 :: else fi };
    if
    :: ok -> epoch[x] = (epoch[x] + 1) % 4          /* (mod 4 in the model: at most two wakes fall in one sleep) */
    :: else
    fi
}

inline wake(x) { /* fk__wake: fence (F2), load the bit (L2) */
    if
    :: sleeper[x] -> wake_bit(x, ok)
    :: else
    fi
}

inline wake_one(g) { /* wake_one: the first member whose bit this waker claims */
    k = g * M;
    do
    :: k < g * M + M ->
        if
        :: sleeper[k] -> wake_bit(k, ok); if :: ok -> break :: else fi
        :: else
        fi;
        k++
    :: else -> break
    od
}

inline become_active(me, g) {
    if
    :: state[me] != ACTIVE ->
        state[me] = ACTIVE;
        in_active[me] = 1;
        atomic { was_idle = (nactive == 0); nactive++ };          /* (B): active up first */
        atomic { last = (thieves[g] == 1); thieves[g]-- };     /* then thieves down */
#ifndef MUT_NO_REPLACE
        if
        :: last -> wake_one(g)                                  /* we took the last thief */
        :: else
        fi;
#endif
        if
        :: was_idle ->                                          /* every other group gets one */
            h = 0;
            do
            :: h < G -> if :: h != g && thieves[h] == 0 -> wake_one(h) :: else fi; h++
            :: else -> break
            od
        :: else
        fi;
        in_active[me] = 0
    :: else
    fi
}

inline become_thief(me, g) {
    if
    :: state[me] == ACTIVE ->
        thieves[g]++;                                           /* a thief first, */
        nactive--;                                               /* then not active */
        state[me] = THIEF
    :: else
    fi
}

inline try_sleep(me, g) {
    deciding[me] = 1;
    atomic { last = (thieves[g] == 1); thieves[g]-- };          /* (B): thieves down, */
#if !defined(MUT_NO_LASTCHECK) && !defined(NO_EARLY_B)
    if
    :: last && nactive > 0 -> thieves[g]++; deciding[me] = 0; goto slept   /* then load active */
    :: else
    fi;
#endif
    e = epoch[me];                                              /* the epoch, before the bit */
    state[me] = ASLEEP;
    sleeper[me] = 1;                                            /* S1, fence F1 */
#if defined(MUT_NO_RECHECK)
    cancel = stop || (thieves[g] == 0 && nactive > 0);
#elif defined(MUT_NO_LASTCHECK)
    cancel = stop || inbox[me] > 0;
#else
    cancel = stop || inbox[me] > 0 || (thieves[g] == 0 && nactive > 0);   /* L1 */
#endif
    if
    :: !cancel -> deciding[me] = 0; (epoch[me] != e)            /* futex_wait(&wake_epoch, e) */
    :: else
    fi;
    atomic { sleeper[me] = 0; state[me] = THIEF; thieves[g]++; woken[me] = 0; deciding[me] = 0 };
slept:
    skip
}

proctype worker(byte me) {
    byte g = me / M, e, k, h, v;
    bool ok, last, was_idle, cancel, got;
    do
    :: stop -> break
    :: !stop ->
        /* local_work: a root from the inbox (the locals reset: fewer distinct states) */
        got = 0; e = 0; k = 0; h = 0; v = 0; ok = 0; last = 0; was_idle = 0; cancel = 0;
        atomic { if :: inbox[me] > 0 -> inbox[me]--; got = 1 :: else fi };
        if
        :: got ->
            become_active(me, g);
            pub[me]++;                                          /* the root forks a child */
            atomic { if :: pub[me] > 0 -> pub[me]-- :: else fi };   /* joins: takes it back if there */
            done++;                                             /* the root is done (fk__run returns) */
            become_thief(me, g)
        :: else ->
            /* steal_round: any victim with public work */
            v = 0;
            do
            :: v < W ->
                atomic { if :: v != me && pub[v] > 0 -> pub[v]--; got = 1 :: else fi };
                if :: got -> break :: else -> v++ fi
            :: else -> break
            od;
            if
            :: got -> become_active(me, g); become_thief(me, g)   /* ran the stolen child */
            :: else -> try_sleep(me, g)                         /* idle_step after failed rounds */
            fi
        fi
    od;
end_exit:
    exited++
}

proctype submitter() {
    byte r = 0, t, k;
    bool ok;
    do
    :: r < R ->
        select(t : 0 .. W - 1);                                 /* fk__submit: any worker */
        inbox[t]++;                                             /* the push (S2) */
        wake(t);                                                /* fk__wake */
        r++
    :: r == R -> break
    od;
    (done == R);                                                /* every FK_RUN returned */
    stop = 1;                                                   /* fk_pool_shutdown */
    k = 0;
    do
    :: k < W -> wake_bit(k, ok); k++
    :: else -> break
    od;
    (exited == W)                                               /* pthread_join */
}

active proctype monitor() {
    byte g, k;
    bool fine;
    /* in every reachable state (SPIN may run this at any point of any interleaving) */
    atomic {
        g = 0;
        do
        :: g < G ->
            fine = (nactive == 0 || thieves[g] > 0 || stop);
            k = g * M;
            do
            :: k < g * M + M -> fine = fine || woken[k] || deciding[k]; k++
            :: else -> break
            od;
            k = 0; /* a worker of any group turning active may be waking this group's thief */
            do
            :: k < W -> fine = fine || in_active[k]; k++
            :: else -> break
            od;
            /* or every member is active */
            k = g * M;
            do
            :: k < g * M + M && state[k] == ACTIVE -> k++
            :: k < g * M + M && state[k] != ACTIVE -> break
            :: else -> fine = 1; break
            od;
            assert(fine);
            g++
        :: else -> break
        od
    }
}

init {
    byte i = 0;
    atomic {
        do
        :: i < G -> thieves[i] = M; i++
        :: else -> break
        od;
        i = 0;
        do
        :: i < W -> run worker(i); i++
        :: else -> break
        od;
        run submitter()
    }
}
