/* mpsc.c — see mpsc.h. */
#include "mpsc.h"
#include "chaos.h"

void fk__mpsc_init(fk__mpsc *q) {
    atomic_store_explicit(&q->stub.next, NULL, memory_order_relaxed);
    atomic_store_explicit(&q->head, &q->stub, memory_order_relaxed);
    q->tail = &q->stub;
}

void fk__mpsc_push(fk__mpsc *q, fk__mpsc_node *n) {
    atomic_store_explicit(&n->next, NULL, memory_order_relaxed);
    /* acq_rel: release publishes n's contents (and whatever the producer wrote before) to
     * the consumer, which reads them after its acquire load of prev->next below; acquire
     * orders us after the previous producer so that prev is a valid node. */
    fk__mpsc_node *prev = atomic_exchange_explicit(&q->head, n, memory_order_acq_rel);
    FK_CHAOS_POINT(); /* the queue is cut here until the link below: the consumer must wait */
    /* Release: pairs with the consumer's acquire load of ->next. */
    atomic_store_explicit(&prev->next, n, memory_order_release);
}

fk__mpsc_node *fk__mpsc_pop(fk__mpsc *q) {
    fk__mpsc_node *tail = q->tail;
    fk__mpsc_node *next = atomic_load_explicit(&tail->next, memory_order_acquire);
    if (tail == &q->stub) {
        if (!next)
            return NULL;
        q->tail = next;
        tail = next;
        next = atomic_load_explicit(&next->next, memory_order_acquire);
    }
    if (next) {
        q->tail = next;
        return tail;
    }
    /* tail is the last node we can see.  If it is also the head, re-insert the stub behind
     * it so that tail can be handed out; otherwise a producer is mid-push: try later. */
    if (tail != atomic_load_explicit(&q->head, memory_order_acquire))
        return NULL;
    fk__mpsc_push(q, &q->stub);
    next = atomic_load_explicit(&tail->next, memory_order_acquire);
    if (next) {
        q->tail = next;
        return tail;
    }
    return NULL;
}

int fk__mpsc_nonempty(fk__mpsc *q) {
    return atomic_load_explicit(&q->head, memory_order_acquire) != &q->stub ||
           atomic_load_explicit(&q->stub.next, memory_order_acquire) != NULL;
}
