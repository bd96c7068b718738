/* variants: cont-native
 * expect: native frames need child stealing
 * Continuation stealing with frames on the native C stack would need Fibril's stack
 * switching: refused at compile time (and by `forkscope variants`). */
#include "forkscope.h"
