/* shared_tasks.c — the definitions of shared_tasks.h's tasks (FK_TASK_DEFINE). */
#include "tests/shared_tasks.h"

typedef struct {
    fk_frame fk;
    int64_t a, b;
    int n;
} shared_fib_frame;

FK_TASK_DEFINE(shared_fib, int64_t, shared_fib_frame *f, (int, n)) {
    if (n < 2)
        FK_RETURN(n);
    FK_BEGIN(f);
    f->n = n;
    FK_FORK(a, shared_fib, n - 1);
    FK_CALL(b, shared_fib, f->n - 2);
    FK_JOIN();
    FK_RETURN(f->a + f->b);
} FK_END

FK_LEAF_TASK_DEFINE(shared_inc, int, (int, x)) {
    FK_RETURN(x + 1);
} FK_END

FK_LEAF_TASK_DEFINE(shared_tick, int) {
    FK_RETURN(7);
} FK_END
