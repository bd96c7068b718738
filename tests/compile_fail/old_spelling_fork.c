/* variants: cont-seg cont-lin child-seg child-lin child-native child-fiber
 * expect: FK_FORK(a, ...) stores to f->a: it takes a member's NAME, not &f->a
 * expect-gcc: error: expected identifier before '&' token
 * expect-clang: error: bit-field 'FK_FORK_and_FK_CALL_take_a_member_name__write_FK_FORK_a_for_f_a__FK_FORK_AT_p_for_a_pointer__FK_FORK_VOID_for_no_result' has negative width
 * The spelling before issue 20: a fork's result given as an address, FK_FORK(&f->a, ...).
 * FK_FORK now takes the name of a member of the frame; the compiler's message shows the
 * new spelling (GCC on the macro's definition line, Clang there and in a bit-field's name). */
#include "forkscope.h"
typedef struct { fk_frame fk; int64_t a, b; } fr;
FK_TASK(t, int64_t, fr *f, (int, n)) {
    if (n < 2)
        FK_RETURN(n);
    FK_BEGIN(f);
    FK_FORK(&f->a, t, n - 1);
    FK_CALL(b, t, n - 2);
    FK_JOIN();
    FK_RETURN(f->a + f->b);
} FK_END
void *keep = t__thunk;
