/* variants: cont-seg child-seg child-native
 * expect: FK_FORK_AT or FK_CALL_AT of task leaf with a void pointer or no pointer (NULL? 0?)
 * FK_FORK_AT(0, ...): an integer, not a pointer, for a task that returns a value. */
#include "forkscope.h"
typedef struct { fk_frame fk; } fr;
FK_LEAF_TASK(leaf, int, (int, x)) { FK_RETURN(x); } FK_END
FK_TASK(t, int, fr *f, (int, n)) {
    FK_BEGIN(f);
    FK_FORK_AT(0, leaf, n);
    FK_JOIN();
    FK_RETURN(n);
} FK_END
void *keep = t__thunk;
