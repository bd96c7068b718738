/* variants: cont-seg cont-lin child-seg child-lin child-native child-fiber
 * expect: a member in the frame, not one through a pointer (FK_FORK_AT(pointer, ...): an address
 * expect-gcc: error: cannot apply 'offsetof' to a non constant address
 * expect-clang: error: expected ')'
 * A child's result into a member of a struct the frame points to (FK_FORK(p->x, ...)):
 * refused like an element of a pointer member (result_through_pointer.c). */
#include "forkscope.h"
struct out { int64_t x; };
typedef struct { fk_frame fk; struct out *p; int64_t b; } fr;
FK_LEAF_TASK(leaf, int64_t, (int, x)) { FK_RETURN(x); } FK_END
FK_TASK(t, int64_t, fr *f, (struct out *, o)) {
    FK_BEGIN(f);
    f->p = o;
    FK_FORK(p->x, leaf, 1);
    FK_CALL(b, leaf, 2);
    FK_JOIN();
    FK_RETURN(f->b);
} FK_END
void *keep = t__thunk;
