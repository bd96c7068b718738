// squares_tbb.cpp — squares (squares.c beside it) for the TBB baseline: a task_group per
// split, the left half run(), the right half called, wait().
#include "kernels/tbb.h"

#include <oneapi/tbb/task_group.h>

namespace {

uint64_t leaf(uint64_t lo, uint64_t hi) {
    uint64_t s = 0;
    for (uint64_t i = lo; i < hi; i++) {
        s += i * i;
        __asm__ volatile("" : "+r"(s));
    }
    return s;
}

uint64_t squares(uint64_t lo, uint64_t hi, uint64_t grain) {
    if (hi - lo <= grain)
        return leaf(lo, hi);
    uint64_t mid = lo + (hi - lo) / 2, a, b;
    tbb::task_group g;
    g.run([&] { a = squares(lo, mid, grain); });
    b = squares(mid, hi, grain);
    g.wait();
    return a + b;
}

} // namespace

// (declared, with the same signature, in squares.c)
extern "C" uint64_t squares_tbb(uint64_t lo, uint64_t hi, uint64_t grain) {
    return bench_tbb_arena().execute([=] { return squares(lo, hi, grain); });
}
