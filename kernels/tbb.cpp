// tbb.cpp — the TBB baseline: the kernels as oneTBB task_group recursions, written as TBB's
// own examples write fib (a task_group on the stack, run() for the forked child, the other
// child called, wait()), with exactly the per-node work of the other versions
// (kernels/inline.h, uts/tree.h).  The only C++ in forkscope; see tbb.h for the arena.
#include "kernels/tbb.h"

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>

extern "C" {
#include "bench/options.h"
#include "kernels/inline.h"
}

namespace {

std::unique_ptr<tbb::global_control> limit_parallelism, limit_stack;
std::unique_ptr<tbb::task_arena> arena;

int64_t fib(int n) {
    if (n < 2)
        return n;
    int64_t a, b;
    tbb::task_group g;
    g.run([&] { a = fib(n - 1); });
    b = fib(n - 2);
    g.wait();
    return a + b;
}

double eps;

double integrate(double x1, double y1, double x2, double y2, double area) {
    double half = (x2 - x1) / 2, x0 = x1 + half, y0 = integrate_fn(x0);
    double al = (y1 + y0) / 2 * half, ar = (y0 + y2) / 2 * half;
    if (std::fabs(al + ar - area) < eps)
        return al + ar;
    double a, b;
    tbb::task_group g;
    g.run([&] { a = integrate(x1, y1, x0, y0, al); });
    b = integrate(x0, y0, x2, y2, ar);
    g.wait();
    return a + b;
}

void matmul(const float *a, const float *b, float *r, int n, int s, int add) {
    if (n <= MATMUL_BASE) {
        matmul_base(a, b, r, s, add);
        return;
    }
    int m = n / 2;
    size_t o01 = (size_t)m, o10 = (size_t)m * s, o11 = o10 + m;
    tbb::task_group g;
    g.run([=] { matmul(a, b, r, m, s, add); });
    g.run([=] { matmul(a, b + o01, r + o01, m, s, add); });
    g.run([=] { matmul(a + o10, b, r + o10, m, s, add); });
    matmul(a + o10, b + o01, r + o11, m, s, add);
    g.wait();
    g.run([=] { matmul(a + o01, b + o10, r, m, s, 1); });
    g.run([=] { matmul(a + o01, b + o11, r + o01, m, s, 1); });
    g.run([=] { matmul(a + o11, b + o10, r + o10, m, s, 1); });
    matmul(a + o11, b + o11, r + o11, m, s, 1);
    g.wait();
}

int64_t nqueens(int j, const char *board, int n) {
    if (j == n)
        return 1;
    char buf[NQ_MAX * NQ_MAX];
    int64_t res[NQ_MAX];
    tbb::task_group g;
    for (int i = 0; i < n; i++) {
        char *child = buf + i * n;
        std::memcpy(child, board, (size_t)j);
        child[j] = (char)i;
        res[i] = 0;
        if (!nqueens_conflict(child, j))
            g.run([&res, child, i, j, n] { res[i] = nqueens(j + 1, child, n); });
    }
    g.wait();
    int64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += res[i];
    return sum;
}

uts_result uts_visit(const uts_params *p, const uts_state *s, int height) {
    int n = uts_num_children(p, s, height);
    if (n == 0)
        return uts_result_leaf(height);
    std::unique_ptr<uts_result[]> res(new uts_result[n]); // on the heap, as the OpenMP version
    uts_result *r = res.get();
    tbb::task_group g;
    for (int i = 0; i < n - 1; i++) {
        uts_state child;
        uts_child(p, &child, s, i);
        g.run([p, child, i, r, height] { r[i] = uts_visit(p, &child, height + 1); });
    }
    uts_state last;
    uts_child(p, &last, s, n - 1);
    r[n - 1] = uts_visit(p, &last, height + 1);
    g.wait();
    uts_result total = uts_result_inner(height);
    for (int i = 0; i < n; i++)
        uts_result_add(&total, &r[i]);
    return total;
}

void msort(int32_t *a, int32_t *tmp, size_t n, size_t cutoff) {
    if (n <= cutoff) {
        msort_serial(a, tmp, n);
        return;
    }
    size_t mid = n / 2;
    tbb::task_group g;
    g.run([=] { msort(a, tmp, mid, cutoff); });
    msort(a + mid, tmp + mid, n - mid, cutoff);
    g.wait();
    msort_merge(a, tmp, n, mid);
}

template <class F> auto in_arena(F f) -> decltype(f()) { return arena->execute(f); }

} // namespace

tbb::task_arena &bench_tbb_arena() { return *arena; }

extern "C" {

void bench_tbb_start(unsigned workers) {
    limit_stack = std::make_unique<tbb::global_control>(tbb::global_control::thread_stack_size, size_t(512) << 20);
    limit_parallelism = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, workers);
    arena = std::make_unique<tbb::task_arena>((int)workers);
    // Start the threads outside timing: every slot holds a task until all have arrived (or
    // a second has passed: TBB may bring workers in later; then they start in the first run).
    std::atomic<unsigned> arrived{0};
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    auto meet = [&] {
        arrived++;
        while (arrived.load() < workers && std::chrono::steady_clock::now() < deadline)
            std::this_thread::yield();
    };
    in_arena([&] {
        tbb::task_group g;
        for (unsigned k = 1; k < workers; k++)
            g.run(meet);
        meet();
        g.wait();
    });
}

void bench_tbb_stop(void) {
    arena.reset();
    limit_parallelism.reset();
    limit_stack.reset();
}

void bench_tbb_noop(void) {
    in_arena([] {
        tbb::task_group g;
        g.run([] {});
        g.wait();
    });
}

int64_t fib_tbb(int n) { return in_arena([=] { return fib(n); }); }

double integrate_tbb(double x1, double y1, double x2, double y2, double area, double e) {
    eps = e;
    return in_arena([=] { return integrate(x1, y1, x2, y2, area); });
}

void matmul_tbb(const float *a, const float *b, float *r, int n, int s) {
    in_arena([=] { matmul(a, b, r, n, s, 0); });
}

int64_t nqueens_tbb(int n) {
    char empty[NQ_MAX] = {0};
    return in_arena([&] { return nqueens(0, empty, n); });
}

uts_result uts_tbb(const uts_params *p) {
    uts_state root;
    uts_root(p, &root);
    return in_arena([&] { return uts_visit(p, &root, 0); });
}

void mn_each_tbb(size_t n, mn_body *body, void *ctx) {
    in_arena([=] {
        tbb::task_group g;
        for (size_t i = 0; i < n; i++)
            g.run([=] { body(ctx, i); });
        g.wait();
    });
}

void msort_tbb(int32_t *a, int32_t *tmp, size_t n, size_t cutoff) {
    in_arena([=] { msort(a, tmp, n, cutoff); });
}

} // extern "C"
