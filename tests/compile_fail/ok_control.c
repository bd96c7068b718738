/* variants: cont-seg cont-lin child-seg child-lin child-native
 * expect: (compiles)
 * The control: a well-formed task, compiled with the same command, must compile (else the
 * refusals above prove nothing). */
#include "forkscope.h"
typedef struct { fk_frame fk; int64_t a, b; int n; } fr;
FK_TASK(t, int64_t, fr *f, (int, n)) {
    if (n < 2)
        FK_RETURN(n);
    FK_BEGIN(f);
    f->n = n;
    FK_FORK(&f->a, t, n - 1);
    FK_CALL(&f->b, t, f->n - 2);
    FK_JOIN();
    FK_RETURN(f->a + f->b);
} FK_END
void *keep = t__thunk;
