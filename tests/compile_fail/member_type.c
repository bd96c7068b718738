/* variants: cont-seg cont-lin child-seg child-lin child-native child-fiber
 * expect: the frame member given to FK_FORK or FK_CALL has another type than the result of task big
 * A member narrower than the task's result (an int for an int64_t): the store would run
 * over the next member. */
#include "forkscope.h"
typedef struct { fk_frame fk; int a, b; } fr;
FK_LEAF_TASK(big, int64_t, (int, x)) { FK_RETURN((int64_t)x << 40); } FK_END
FK_TASK(t, int, fr *f, (int, n)) {
    FK_BEGIN(f);
    FK_FORK(a, big, n);
    FK_JOIN();
    FK_RETURN(f->a + f->b);
} FK_END
void *keep = t__thunk;
