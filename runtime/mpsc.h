/* mpsc.h — a lock-free multi-producer single-consumer queue (intrusive, Vyukov's design).
 *
 * Producers (any thread) link a node in with one atomic exchange; the single consumer (the
 * worker that owns the queue) takes nodes in FIFO order.  A producer that has exchanged the
 * head but not yet linked its node makes the queue look empty for a moment: fk__mpsc_pop
 * then returns NULL and the consumer simply looks again later (the producer wakes it). */
#ifndef FK_MPSC_H
#define FK_MPSC_H

#include <stdatomic.h>
#include <stddef.h>

typedef struct fk__mpsc_node {
    _Atomic(struct fk__mpsc_node *) next;
} fk__mpsc_node;

typedef struct fk__mpsc {
    _Atomic(fk__mpsc_node *) head; /* producers: last node linked in */
    fk__mpsc_node *tail;           /* consumer: next node to take (may be the stub) */
    fk__mpsc_node stub;
} fk__mpsc;

void fk__mpsc_init(fk__mpsc *q);
/* Any thread.  The node must stay valid until the consumer has popped it. */
void fk__mpsc_push(fk__mpsc *q, fk__mpsc_node *n);
/* Consumer only.  NULL if empty (or a push is half-done). */
fk__mpsc_node *fk__mpsc_pop(fk__mpsc *q);
/* Any thread: a hint that something was pushed and not yet popped. */
int fk__mpsc_nonempty(fk__mpsc *q);

#endif
