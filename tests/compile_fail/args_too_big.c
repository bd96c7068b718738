/* variants: cont-seg child-seg child-native
 * expect: do not fit a record
 * Arguments are copied into fixed-size records (roots, child stealing): at most
 * FK_RECORD_ARG_WORDS 8-byte words in every variant. */
#include "forkscope.h"
FK_LEAF_TASK(t, int64_t, (int64_t, a), (int64_t, b), (int64_t, c), (int64_t, d), (int64_t, e), (int64_t, g)) {
    FK_RETURN(a + b + c + d + e + g);
} FK_END
void *keep = t__thunk;
