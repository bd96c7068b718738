/* variants: cont-seg cont-lin child-seg child-lin child-native child-fiber
 * expect: read-only parameter
 * A task's parameters are const: a resumed task gets back the values it was called with
 * (FK_BEGIN saves them), so a parameter changed before a fork would silently revert after
 * it.  Changing one does not compile; copy it into a local or a frame field instead. */
#include "forkscope.h"
typedef struct { fk_frame fk; int64_t a; } fr;
FK_TASK(t, int64_t, fr *f, (int, n)) {
    if (n < 2)
        FK_RETURN(n);
    FK_BEGIN(f);
    n = n - 1;
    FK_FORK(&f->a, t, n);
    FK_JOIN();
    FK_RETURN(f->a + n);
} FK_END
void *keep = t__thunk;
