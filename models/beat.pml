/* beat.pml — the heartbeat thread's parking in a lazy pool (runtime/pool.c: beat_main,
 * beat_park, fk__beat_wake, beat_stop; runtime/sched.c: become_active), model-checked with
 * SPIN (make check-model).
 *
 * W workers each turn active K times.  Turning active (become_active) marks the worker
 * working and raises the pool's count of active workers; the one that raises it from 0 wakes
 * the heartbeat if it is parked (fk__beat_wake: exchange beat_parked to 0, then signal the
 * condition variable under the heartbeat's lock).  An active worker stays active until a beat
 * has reached it: the heartbeat's promise to a working worker.  The heartbeat thread beats
 * (marks every active worker), then, holding its lock, parks while no worker is active
 * (beat_park: beat_parked set, then active re-read, then the wait on the condition variable
 * until beat_parked is cleared or the pool stops).  Once every worker is done, the pool stops
 * it (beat_stop: under the lock, stop set, beat_parked cleared, a signal).  The C code's
 * loads, stores and exchanges of active and beat_parked are seq_cst, so SPIN's sequential
 * consistency is the memory model here.
 *
 * The condition variable: a wait records the signal count and gives up the lock in one step,
 * and returns once the count has moved (pthread_cond_wait's atomic release-and-wait; a
 * spurious return only re-runs the C loop's test, so it is left out); a signal moves the
 * count.
 *
 * Property: no lost wake-up.  A heartbeat parked while a worker is active leaves that worker
 * waiting for a beat for ever, and the pool never stops: SPIN reports an invalid end state.
 * Mutations SPIN must refute:
 *   -DMUT_WAKE_NO_LOCK  the waker signals without taking the heartbeat's lock: its signal can
 *                       come between the heartbeat's last test of beat_parked and its wait;
 *   -DMUT_NO_RECHECK    beat_park does not re-read active after setting beat_parked;
 *   -DMUT_READ_FIRST    beat_park reads active before it sets beat_parked (the Dekker pair's
 *                       order reversed). */

#ifndef W
#define W 2
#endif
#ifndef K
#define K 2
#endif

byte nactive = 0;   /* p->active ("active" is a Promela keyword) */
bit parked = 0;     /* p->beat_parked */
bit lock = 0;       /* p->beat_lock */
byte gen = 0;       /* p->beat_cond: signals so far */
bit stop = 0;       /* p->beat_stop */
bit working[W];     /* w->state == FK__W_ACTIVE */
bit beaten[W];      /* a beat has marked the worker since it turned active */
byte done = 0;

inline lock_() { atomic { lock == 0 -> lock = 1 } }
inline unlock_() { lock = 0 }

proctype Worker(byte i) {
    byte k = 0, old;
    bit was;
    do
    :: k < K ->
        /* become_active: the state, then was_idle = fetch_add(&active, 1) == 0 */
        working[i] = 1;
        atomic { old = nactive; nactive++ };
        if
        :: old == 0 ->
            /* fk__beat_wake: a load, then the exchange, then the signal under the lock */
            if
            :: parked ->
                atomic { was = parked; parked = 0 };
                if
                :: was ->
#ifndef MUT_WAKE_NO_LOCK
                    lock_();
#endif
                    gen++;
#ifndef MUT_WAKE_NO_LOCK
                    unlock_()
#endif
                :: else -> skip
                fi
            :: else -> skip
            fi
        :: else -> skip
        fi;
        /* it works until a beat marks it */
        beaten[i] == 1;
        /* become_thief, then asleep: no longer active */
        atomic { beaten[i] = 0; working[i] = 0 };
        nactive--;
        k++
    :: else -> break
    od;
    done++
}

proctype Beat() {
    byte g, j;
    bit idle;
    lock_();
    do
    :: stop -> break
    :: else ->
        /* the timed wait for the next beat (woken early only by the stop) */
        unlock_();
        /* the beat: every working worker is marked */
        j = 0;
        do
        :: j < W -> if :: working[j] -> beaten[j] = 1 :: else -> skip fi; j++
        :: else -> break
        od;
        lock_();
        /* beat_park */
#ifdef MUT_READ_FIRST
        idle = (nactive == 0);
        parked = 1;
#else
        parked = 1;
#ifdef MUT_NO_RECHECK
        idle = 1;
#else
        idle = (nactive == 0);
#endif
#endif
        if
        :: !idle -> parked = 0
        :: else ->
            do
            :: stop || !parked -> break
            :: else ->
                atomic { g = gen; lock = 0 };
                gen != g;
                lock_()
            od
        fi
    od;
    unlock_()
}

init {
    byte i = 0;
    atomic {
        run Beat();
        do
        :: i < W -> run Worker(i); i++
        :: else -> break
        od
    };
    done == W;
    /* beat_stop */
    lock_();
    stop = 1;
    parked = 0;
    gen++;
    unlock_()
}
