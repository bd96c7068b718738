/* variants: cont-seg cont-lin child-seg child-lin child-native child-fiber
 * expect: FK_CALL(b, ...) stores to f->b: it takes a member's NAME
 * expect-gcc: error: expected identifier before '(' token
 * expect-clang: error: bit-field 'FK_FORK_and_FK_CALL_take_a_member_name__write_FK_FORK_a_for_f_a__FK_FORK_AT_p_for_a_pointer__FK_FORK_VOID_for_no_result' has negative width
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
