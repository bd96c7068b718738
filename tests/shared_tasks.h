/* shared_tasks.h — tasks declared for other files (FK_TASK_DECLARE), defined in
 * shared_tasks.c and forked, called and run from test_runtime.c. */
#ifndef FK_TEST_SHARED_TASKS_H
#define FK_TEST_SHARED_TASKS_H

#include "forkscope.h"

FK_TASK_DECLARE(shared_fib, int64_t, (int, n))
FK_TASK_DECLARE(shared_inc, int, (int, x))
FK_TASK_DECLARE(shared_tick, int)

#endif
