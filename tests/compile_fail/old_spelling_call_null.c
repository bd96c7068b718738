/* variants: cont-seg cont-lin child-seg child-lin child-native child-fiber
 * expect: FK_CALL(b, ...) stores to f->b: it takes a member's NAME
 * The old spelling of a call without a result, FK_CALL(NULL, ...): now FK_CALL_VOID(...). */
#include "forkscope.h"
typedef struct { fk_frame fk; } fr;
FK_LEAF_TASK(touch, void, (int *, p)) { *p = 1; FK_RETURN_VOID(); } FK_END
FK_TASK(t, int, fr *f, (int *, p)) {
    FK_BEGIN(f);
    FK_CALL(NULL, touch, p);
    FK_RETURN(*p);
} FK_END
void *keep = t__thunk;
