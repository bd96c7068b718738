/* mpsc.pml — the submission queue of runtime/mpsc.c (Vyukov's intrusive MPSC queue with a
 * stub node), model-checked with SPIN (make check-model).
 *
 * P producers each push K nodes (fk__mpsc_push: next = NULL; prev = exchange(head, n);
 * prev->next = n); one consumer pops until it has them all (fk__mpsc_pop, including the path
 * that re-inserts the stub behind the last node, and the "producer mid-push: try later"
 * return), and checks fk__mpsc_nonempty's answer against what it knows.  Properties: every
 * node comes out exactly once, each producer's nodes in the order it pushed them, and the
 * consumer never takes the stub; the consumer cannot finish while a node is left (an
 * invalid end state).  The producers' exchange is a locked instruction and the consumer
 * only loads between its own locked pushes of the stub, so sequential consistency is the
 * memory model of x86 here.  Mutation -DMUT_NO_STUB_CHECK: pop hands out its last visible
 * node without re-inserting the stub (must be refuted: the node's next is written later by
 * a producer that already swapped it in, and that node is lost or the queue cut). */

#ifndef P
#define P 2
#endif
#ifndef K
#define K 2
#endif
#define NODES (P * K)
#define STUB NODES      /* node ids 0..NODES-1 are the producers', NODES the stub */
#define NIL 255

byte next[NODES + 1];   /* fk__mpsc_node.next */
byte head = STUB;       /* q->head: producers exchange it */
byte tail = STUB;       /* q->tail: the consumer's */
byte got[NODES];        /* times each node came out */
byte last_of[P];        /* the last sequence number taken from each producer, + 1 */

inline push(n) { /* fk__mpsc_push */
    next[n] = NIL;
    atomic { prev = head; head = n };           /* exchange(head, n), acq_rel */
    next[prev] = n                              /* release store: the link */
}

proctype producer(byte p) {
    byte i = 0, prev;
    do
    :: i < K -> push(p * K + i); i++
    :: else -> break
    od
}

/* fk__mpsc_pop: out = the node, or NIL */
inline pop(out) {
    out = NIL;
    t = tail;
    nx = next[t];
    if
    :: t == STUB ->
        if
        :: nx == NIL -> goto popped
        :: else -> tail = nx; t = nx; nx = next[nx]
        fi
    :: else
    fi;
    if
    :: nx != NIL -> tail = nx; out = t; goto popped
    :: else
    fi;
#ifdef MUT_NO_STUB_CHECK
    out = t; goto popped;
#endif
    if
    :: t != head -> goto popped                 /* a producer is mid-push: try later */
    :: else
    fi;
    push(STUB);                                 /* the stub behind t, so t can go */
    nx = next[t];
    if
    :: nx != NIL -> tail = nx; out = t
    :: else
    fi;
popped:
    skip
}

proctype consumer() {
    byte n = 0, out, t, nx, prev, p, seq;
    do
    :: n < NODES ->
        pop(out);
        if
        :: out != NIL ->
            assert(out != STUB);
            got[out]++;
            assert(got[out] == 1);
            p = out / K;
            seq = out % K;
            assert(seq == last_of[p]);          /* each producer's nodes in its order */
            last_of[p] = seq + 1;
            n++
        :: else
        fi
    :: n == NODES -> break
    od;
    /* all out: only the stub is left, and fk__mpsc_nonempty says the queue is empty */
    assert(head == STUB && tail == STUB && next[STUB] == NIL)
}

init {
    byte i = 0;
    atomic { /* fk__mpsc_init, then the threads */
        next[STUB] = NIL;
        run consumer();
        do
        :: i < P -> run producer(i); i++
        :: else -> break
        od
    }
}
