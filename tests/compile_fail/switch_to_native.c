/* variants: child-native
 * expect: FK_SWITCH_TO needs frames that can move between workers
 * A frame in the task's C stack frame cannot continue on another worker. */
#include "forkscope.h"
typedef struct { fk_frame fk; int64_t a; } fr;
FK_TASK(t, int64_t, fr *f, (int, n)) {
    FK_BEGIN(f);
    FK_SWITCH_TO(1);
    FK_RETURN(n);
} FK_END
void *keep = t__thunk;
