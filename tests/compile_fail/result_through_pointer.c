/* variants: cont-seg cont-lin child-seg child-lin child-native child-fiber
 * expect-gcc: error: cannot apply 'offsetof' to a non constant address
 * expect-gcc: a member in the frame, not one through a pointer (FK_FORK_AT(pointer, ...): an address
 * expect-clang: error: offsetof requires array type, 'int64_t *' (aka 'long *') invalid
 * A child's result into an element of a pointer member (FK_FORK(res[i], ...) with res a
 * pointer, here to a C local array): it would store wherever the pointer points, which
 * the compiler cannot check; FK_FORK_AT(&f->res[i], ...) is the escape that says so.  (GCC's
 * notes reprint FK_FORK's definition line, which says so; Clang's error stands alone and
 * names the pointer's type.) */
#include "forkscope.h"
typedef struct { fk_frame fk; int64_t *res; int i; } fr;
FK_LEAF_TASK(leaf, int64_t, (int, x)) { FK_RETURN(x); } FK_END
FK_TASK(t, int64_t, fr *f, (int, n)) {
    int64_t local[2];
    FK_BEGIN(f);
    f->res = local;
    FK_FORK(res[0], leaf, n);
    FK_CALL(res[1], leaf, n);
    FK_JOIN();
    FK_RETURN(f->res[0] + f->res[1]);
} FK_END
void *keep = t__thunk;
