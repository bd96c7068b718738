/* variants: cont-seg cont-lin child-seg child-lin child-native child-fiber
 * expect: FK_FORK_VOID or FK_CALL_VOID of task leaf, which returns a value
 * A task that returns a value, forked as if it had none: its result must go somewhere. */
#include "forkscope.h"
typedef struct { fk_frame fk; } fr;
FK_LEAF_TASK(leaf, int, (int, x)) { FK_RETURN(x); } FK_END
FK_TASK(t, int, fr *f, (int, n)) {
    FK_BEGIN(f);
    FK_FORK_VOID(leaf, n);
    FK_JOIN();
    FK_RETURN(n);
} FK_END
void *keep = t__thunk;
