/* variants: cont-seg cont-lin child-seg child-lin child-native child-fiber
 * expect-gcc: error: 'fk_result_must_name_a_member_of_this_frame__see_FK_FORK_AT' {aka 'fr'} has no member named 'n'
 * expect-clang: error: no member named 'n' in 'fr'
 * A child's result into the task's own parameter (the kept copy would be put back after
 * the fork, and the child may finish elsewhere): refused like a local. */
#include "forkscope.h"
typedef struct { fk_frame fk; int a; } fr;
FK_LEAF_TASK(leaf, int, (int, x)) { FK_RETURN(x); } FK_END
FK_TASK(t, int, fr *f, (int, n)) {
    FK_BEGIN(f);
    FK_FORK(n, leaf, 3);
    FK_CALL(a, leaf, 4);
    FK_JOIN();
    FK_RETURN(n + f->a);
} FK_END
void *keep = t__thunk;
