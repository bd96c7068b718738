/* variants: cont-seg cont-lin child-seg child-lin child-native child-fiber
 * expect: (compiles)
 * The control: well-formed tasks, compiled with the same command, must compile (else the
 * refusals above prove nothing): every form a result may take. */
#include "forkscope.h"
typedef struct { fk_frame fk; int64_t a, b; int n; int64_t part[4]; struct { int64_t lo, hi; } pair; } fr;
static int64_t outside[4];
FK_LEAF_TASK(touch, void, (int64_t *, p)) { *p += 1; FK_RETURN_VOID(); } FK_END
FK_LEAF_TASK(tick, void) { outside[1]++; FK_RETURN_VOID(); } FK_END
FK_TASK(t, int64_t, fr *f, (int, n)) {
    if (n < 2)
        FK_RETURN(n);
    FK_BEGIN(f);
    f->n = n;
    FK_FORK(a, t, n - 1);
    FK_FORK(part[n & 3], t, n - 2);
    FK_FORK(pair.lo, t, n - 2);
    FK_FORK_AT(&outside[n & 3], t, n - 2);
    FK_FORK_VOID(touch, &f->pair.hi);
    FK_FORK_VOID(tick);
    FK_CALL(b, t, f->n - 2);
    FK_JOIN();
    FK_CALL_VOID(touch, &f->b);
    FK_CALL_AT(&outside[0], t, 1);
    if (n > 3)
        FK_CALL(b, t, n - 3); /* (in an if without braces) */
    FK_RETURN(f->a + f->b + f->part[n & 3] + f->pair.lo);
} FK_END
void *keep = t__thunk;
