/* counter.pml — fk_counter (runtime/counter.c, and the parker in sched_fiber.c, after_switch
 * WAIT), model-checked with SPIN (make check-model).
 *
 * A counter starts at D; D doers each call fk_counter_done once.  F fibers wait on it: a
 * fiber cannot list itself while it runs on its stack, so the fiber that runs next does it
 * (the parker: under the counter's lock, list it unless the count is already zero, else make
 * it ready at once); the doer that makes the zero takes the list under the same lock, wakes
 * the threads, clears ANNOUNCING (its last access to the counter) and then makes the listed
 * fibers ready.  T threads (not workers) wait on the futex word seq: set its low bit (CAS),
 * read the count, sleep while seq is what they set; each zero adds 2 to seq (clearing the
 * bit) and FUTEX_WAKEs if the bit was set.  Every waiter returns only once it sees the
 * count zero with ANNOUNCING clear (settle), and may then free the counter (a counter in
 * the waiting task's frame).  The futex is modelled exactly: FUTEX_WAIT sleeps only if seq
 * still holds the value, and only FUTEX_WAKE ends a sleep.
 * Properties: every fiber is made ready exactly once, every waiter returns (no lost wake-up:
 * an invalid end state otherwise), and no doer touches the counter after a waiter may have
 * freed it.  Everything is seq_cst or under the lock: sequential consistency.
 * Mutations that SPIN must refute: -DMUT_PARK_NO_LOCK (the parker reads the count and lists
 * the fiber without the lock: lost wake-up), -DMUT_CLEAR_EARLY (the doer clears ANNOUNCING
 * before taking the list: a waiter frees the counter while the doer still uses it),
 * -DMUT_NO_BIT (a thread reads the count without first setting seq's bit: lost wake-up). */

#ifndef D
#define D 2
#endif
#ifndef F
#define F 1
#endif
#ifndef T
#define T 1
#endif

byte count = D;
bool announcing = 0;
bool lock = 0;
byte waiters = 0;          /* bit f: fiber f is on the list */
byte seq = 0;
bool sleeping[T + 1];      /* in FUTEX_WAIT (index 0 unused when T = 0) */
byte ready[F + 1];         /* times each fiber was made ready */
bool freed = 0;            /* some waiter returned: the counter may be gone */
byte returned = 0;

inline acquire() { atomic { !lock -> lock = 1 } }
inline release() { lock = 0 }
inline use() { assert(!freed) }        /* a doer's access to the counter */

inline settle_and_return() {
    (!announcing && count == 0);        /* settle: the announcer's last access is over */
    freed = 1;
    returned++
}

proctype doer() {
    byte list, old, k;
    bool zero;
    atomic { use(); count--; zero = (count == 0); if :: zero -> announcing = 1 :: else fi }
    if
    :: zero ->
#ifdef MUT_CLEAR_EARLY
        use(); announcing = 0;
#endif
        use(); acquire();               /* fk__counter_lock */
        use(); list = waiters; waiters = 0;
        use(); release();
        atomic { use(); old = seq; seq = (seq + 2) & 254 };   /* wake_threads: CAS */
        if
        :: old & 1 ->                   /* FUTEX_WAKE */
            k = 1;
            do
            :: k <= T -> sleeping[k] = 0; k++
            :: else -> break
            od
        :: else
        fi;
#ifndef MUT_CLEAR_EARLY
        atomic { use(); announcing = 0 }     /* the last access to the counter */
#endif
        k = 1;                          /* the listed fibers: fk__fiber_wake */
        do
        :: k <= F -> if :: list & (1 << k) -> ready[k]++ :: else fi; k++
        :: else -> break
        od
    :: else
    fi
}

proctype fiber(byte f) {                /* fk_counter_wait in a task of a fiber build */
    bool zero;
    if
    :: count == 0 -> goto out           /* the fast check before parking */
    :: else
    fi;
    /* parked; the next fiber on its worker lists it (FMSG_WAIT) */
#ifndef MUT_PARK_NO_LOCK
    acquire();
#endif
    zero = (count == 0);
    if
    :: !zero -> waiters = waiters | (1 << f)
    :: else
    fi;
#ifndef MUT_PARK_NO_LOCK
    release();
#endif
    if
    :: zero -> ready[f]++               /* make_ready at once */
    :: else
    fi;
    (ready[f] > 0);                     /* resumed */
out:
    settle_and_return()
}

proctype thread(byte t) {               /* fk_counter_wait on a thread that is not a worker */
    byte s;
    do
    :: s = seq;
#ifndef MUT_NO_BIT
       if
       :: !(s & 1) ->
           atomic { if :: seq == s -> seq = s | 1; s = s | 1 :: else -> s = 255 fi }
       :: else
       fi;
       if :: s == 255 -> goto again :: else fi;   /* the CAS failed: read again */
#else
       skip;                            /* (sleeps on the even value: no FUTEX_WAKE comes) */
#endif
       if
       :: count == 0 -> break
       :: else
       fi;
       atomic { if :: seq == s -> sleeping[t] = 1 :: else fi };   /* FUTEX_WAIT(seq, s) */
       (!sleeping[t]);
again: skip
    od;
    settle_and_return()
}

init {
    byte i;
    atomic {
        i = 1;
        do :: i <= F -> run fiber(i); i++ :: else -> break od;
        i = 1;
        do :: i <= T -> run thread(i); i++ :: else -> break od;
        i = 0;
        do :: i < D -> run doer(); i++ :: else -> break od
    }
    (returned == F + T);
    i = 1;
    do :: i <= F -> assert(ready[i] <= 1); i++ :: else -> break od
}
