/* variants: cont-seg child-seg child-native
 * expect: the frame member given to FK_FORK or FK_CALL has another type than the result of task leaf
 * A const member: the child's store would write a const object. */
#include "forkscope.h"
typedef struct { fk_frame fk; const int64_t a; } fr;
FK_LEAF_TASK(leaf, int64_t, (int, x)) { FK_RETURN(x); } FK_END
FK_TASK(t, int64_t, fr *f, (int, n)) {
    FK_BEGIN(f);
    FK_FORK(a, leaf, n);
    FK_JOIN();
    FK_RETURN(f->a);
} FK_END
void *keep = t__thunk;
