/* variants: cont-seg cont-lin child-seg child-lin
 * expect: FK__RP_CASE
 * An FK_CALL (or FK_FORK, FK_JOIN) inside the task's own switch statement: its resume
 * point (a case label) would belong to that switch.  Resume points are numbered beyond any
 * int, so a switch on an int type rejects them (-Woverflow / -Wswitch-outside-range, on by
 * default; an error here with -Werror). */
#include "forkscope.h"
typedef struct { fk_frame fk; int64_t a; } fr;
FK_TASK(t, int64_t, fr *f, (int, n)) {
    FK_BEGIN(f);
    switch (n) {
    case 1:
        FK_CALL(a, t, 0);
        break;
    default:
        break;
    }
    FK_RETURN(n);
} FK_END
void *keep = t__thunk;
