/* variants: cont-seg cont-lin child-seg child-lin child-native child-fiber
 * expect-gcc: error: 'fk_result_must_name_a_member_of_this_frame__see_FK_FORK_AT' {aka 'fr'} has no member named 'a'
 * expect-clang: error: no member named 'a' in 'fr'
 * A newcomer's first task: each child's result into a C local.  With frames on frame
 * stacks the local is gone when the task continues on another worker (release builds used
 * to return 0 or 20 instead of 40 here): the result must name a member of the frame. */
#include "forkscope.h"
typedef struct { fk_frame fk; } fr;
FK_LEAF_TASK(leaf, int, (int, x)) { FK_RETURN(x); } FK_END
FK_TASK(two, int, fr *f, (int, n)) {
    FK_BEGIN(f);
    int a, b;
    FK_FORK(a, leaf, n);
    FK_CALL(b, leaf, n);
    FK_JOIN();
    FK_RETURN(a + b);
} FK_END
void *keep = two__thunk;
