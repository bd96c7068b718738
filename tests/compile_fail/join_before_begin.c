/* variants: cont-seg cont-lin child-seg child-lin child-native
 * expect: fk__FK_BEGIN_must_come_first
 * A join before FK_BEGIN: frame variants have no switch to put its resume point in;
 * native variants have no frame yet. */
#include "forkscope.h"
typedef struct { fk_frame fk; int64_t a; } fr;
FK_TASK(t, int64_t, fr *f, (int, n)) {
    FK_JOIN();
    FK_BEGIN(f);
    FK_RETURN(n);
} FK_END
void *keep = t__thunk;
