/* variants: cont-seg cont-lin child-seg child-lin child-native child-fiber
 * expect-gcc: error: 'fk__FK_BEGIN_must_come_first' undeclared
 * expect-clang: error: use of undeclared identifier 'fk__FK_BEGIN_must_come_first'
 * A fork into a member before FK_BEGIN (there is no frame yet). */
#include "forkscope.h"
typedef struct { fk_frame fk; int64_t a; } fr;
FK_TASK(t, int64_t, fr *f, (int, n)) {
    FK_FORK(a, t, n - 1);
    FK_BEGIN(f);
    FK_JOIN();
    FK_RETURN(n);
} FK_END
void *keep = t__thunk;
