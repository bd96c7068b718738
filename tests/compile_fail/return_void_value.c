/* variants: cont-seg cont-lin child-seg child-lin child-native child-fiber
 * expect: FK_RETURN_VOID in a task that returns a value
 * A task that returns a value must return one on every path: FK_RETURN_VOID there would
 * hand its caller a zero (or, resumed elsewhere, leave the result unwritten). */
#include "forkscope.h"
typedef struct { fk_frame fk; int64_t a; } fr;
FK_TASK(t, int64_t, fr *f, (int, n)) {
    if (n < 2)
        FK_RETURN_VOID();
    FK_BEGIN(f);
    FK_FORK(a, t, n - 1);
    FK_JOIN();
    FK_RETURN(f->a);
} FK_END
void *keep = t__thunk;
