/* variants: cont-seg cont-lin child-seg child-lin child-native child-fiber
 * expect: a task frame must begin with its fk_frame member
 * A frame whose fk_frame is not its first member: results named by member would land at
 * the wrong offset. */
#include "forkscope.h"
typedef struct { int64_t a; fk_frame fk; } fr;
FK_LEAF_TASK(leaf, int64_t, (int, x)) { FK_RETURN(x); } FK_END
FK_TASK(t, int64_t, fr *f, (int, n)) {
    FK_BEGIN(f);
    FK_FORK(a, leaf, n);
    FK_JOIN();
    FK_RETURN(f->a);
} FK_END
void *keep = t__thunk;
