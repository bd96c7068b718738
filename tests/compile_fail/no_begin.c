/* variants: cont-seg cont-lin child-seg child-lin child-native
 * expect: fk__begin
 * An FK_TASK without FK_BEGIN (one that never forks is an FK_LEAF_TASK). */
#include "forkscope.h"
typedef struct { fk_frame fk; int64_t a; } fr;
FK_TASK(t, int64_t, fr *f, (int, n)) {
    FK_RETURN(n);
} FK_END
void *keep = t__thunk;
