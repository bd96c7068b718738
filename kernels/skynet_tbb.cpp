// skynet_tbb.cpp — skynet (kernels/skynet.c) for the TBB baseline: a task_group per inner
// node, run() for the first fanout - 1 children, the last called, wait().
#include "kernels/tbb.h"

#include <oneapi/tbb/task_group.h>

#include <cstdlib>

namespace {

constexpr int max_fanout = 16; // (the option's limit is 10: kernels/skynet.c)

int64_t skynet(int64_t num, int64_t size, int fanout) {
    if (size == 1)
        return num;
    int64_t part[max_fanout], step = size / fanout;
    tbb::task_group g;
    for (int i = 0; i < fanout - 1; i++)
        g.run([&part, i, num, step, fanout] { part[i] = skynet(num + i * step, step, fanout); });
    part[fanout - 1] = skynet(num + (fanout - 1) * step, step, fanout);
    g.wait();
    int64_t sum = 0;
    for (int i = 0; i < fanout; i++)
        sum += part[i];
    return sum;
}

} // namespace

// (declared, with the same signature, in kernels/skynet.c)
extern "C" int64_t skynet_tbb(int64_t num, int64_t size, int fanout) {
    if (fanout < 2 || fanout > max_fanout)
        std::abort();
    return bench_tbb_arena().execute([=] { return skynet(num, size, fanout); });
}
