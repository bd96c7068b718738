// libfork.cpp — the libfork peer (https://github.com/ConorWilliams/libfork), the libfork paper's
// own system: the kernels as libfork coroutines, written as the paper's benchmark suite writes
// them (lf::fork every child but the last, lf::call the last, co_await lf::join), with the
// per-node work of the other versions (kernels/inline.h, uts/tree.h).  Built against the
// user's checkout by `make peers PEERS_DIR=DIR` (DIR/libfork, header-only, C++23, clang++-19)
// twice: libfork-busy (lf::busy_pool) and libfork-lazy (lf::lazy_pool, -DPEER_LIBFORK_LAZY).
// No libfork code is in this project.
//
// libfork steals continuations; a task's frame is a coroutine frame on libfork's segmented
// stacks, so its locals survive a steal.  The driver's thread is not a worker: sync_wait
// submits the root and sleeps, so P workers are P pool threads.
#include <libfork.hpp>

#include <cmath>
#include <cstring>
#include <memory>
#include <optional>

#include "kernels/peer.h"
extern "C" {
#include "bench/options.h"
#include "kernels/inline.h"
}

#if defined(PEER_LIBFORK_LAZY)
using pool_t = lf::lazy_pool;
#define PEER_NAME "libfork-lazy"
#define PEER_POOL "lazy_pool (idle workers sleep)"
#else
using pool_t = lf::busy_pool;
#define PEER_NAME "libfork-busy"
#define PEER_POOL "busy_pool (idle workers keep stealing)"
#endif

extern "C" {
const char bench_peer_name[] = PEER_NAME;
const char bench_peer_what[] = "libfork (Williams & Elliott): continuation stealing, coroutines on "
                               "segmented stacks, " PEER_POOL;
}

// lf::fork[&r, f](args): libfork's binding where C++23's multidimensional subscript is there
// (its operator() form is deprecated then), lf::fork(&r, f)(args) before.
#if defined(__cpp_multidimensional_subscript) && __cpp_multidimensional_subscript >= 202211L
#define FORK(...) lf::fork[__VA_ARGS__]
#define CALL(...) lf::call[__VA_ARGS__]
#else
#define FORK(...) lf::fork(__VA_ARGS__)
#define CALL(...) lf::call(__VA_ARGS__)
#endif

namespace {

std::optional<pool_t> pool;

constexpr auto noop = [](auto, int x) LF_STATIC_CALL -> lf::task<int> { co_return x; };

constexpr auto fib = [](auto fib, int n) LF_STATIC_CALL -> lf::task<int64_t> {
    if (n < 2)
        co_return n;
    int64_t a, b;
    co_await FORK(&a, fib)(n - 1);
    co_await CALL(&b, fib)(n - 2);
    co_await lf::join;
    co_return a + b;
};

double eps;

constexpr auto integrate = [](auto integrate, double x1, double y1, double x2, double y2,
                              double area) LF_STATIC_CALL -> lf::task<double> {
    double half = (x2 - x1) / 2, x0 = x1 + half, y0 = integrate_fn(x0);
    double al = (y1 + y0) / 2 * half, ar = (y0 + y2) / 2 * half;
    if (std::fabs(al + ar - area) < eps)
        co_return al + ar;
    double a, b;
    co_await FORK(&a, integrate)(x1, y1, x0, y0, al);
    co_await CALL(&b, integrate)(x0, y0, x2, y2, ar);
    co_await lf::join;
    co_return a + b;
};

constexpr auto matmul = [](auto matmul, const float *a, const float *b, float *r, int n, int s,
                           int add) LF_STATIC_CALL -> lf::task<void> {
    if (n <= MATMUL_BASE) {
        matmul_base(a, b, r, s, add);
        co_return;
    }
    int m = n / 2;
    size_t o01 = (size_t)m, o10 = (size_t)m * s, o11 = o10 + m;
    co_await FORK(matmul)(a, b, r, m, s, add);
    co_await FORK(matmul)(a, b + o01, r + o01, m, s, add);
    co_await FORK(matmul)(a + o10, b, r + o10, m, s, add);
    co_await CALL(matmul)(a + o10, b + o01, r + o11, m, s, add);
    co_await lf::join;
    co_await FORK(matmul)(a + o01, b + o10, r, m, s, 1);
    co_await FORK(matmul)(a + o01, b + o11, r + o01, m, s, 1);
    co_await FORK(matmul)(a + o11, b + o10, r + o10, m, s, 1);
    co_await CALL(matmul)(a + o11, b + o11, r + o11, m, s, 1);
    co_await lf::join;
};

constexpr auto nqueens = [](auto nqueens, int j, const char *board, int n) LF_STATIC_CALL -> lf::task<int64_t> {
    if (j == n)
        co_return 1;
    char buf[NQ_MAX * NQ_MAX]; // in the coroutine's frame: it survives the forks
    int64_t res[NQ_MAX];
    for (int i = 0; i < n; i++) {
        char *child = buf + i * n;
        std::memcpy(child, board, (size_t)j);
        child[j] = (char)i;
        res[i] = 0;
        if (!nqueens_conflict(child, j))
            co_await FORK(&res[i], nqueens)(j + 1, child, n);
    }
    co_await lf::join;
    int64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += res[i];
    co_return sum;
};

constexpr auto skynet = [](auto skynet, int64_t num, int64_t size, int fanout) LF_STATIC_CALL -> lf::task<int64_t> {
    if (size == 1)
        co_return num;
    int64_t res[SKYNET_MAX_FANOUT], part = size / fanout; // in the coroutine's frame
    for (int i = 0; i < fanout - 1; i++)
        co_await FORK(&res[i], skynet)(num + i * part, part, fanout);
    co_await CALL(&res[fanout - 1], skynet)(num + (fanout - 1) * part, part, fanout);
    co_await lf::join;
    int64_t sum = 0;
    for (int i = 0; i < fanout; i++)
        sum += res[i];
    co_return sum;
};

const uts_params *tree;

constexpr auto uts_visit = [](auto uts_visit, uts_state s, int height) LF_STATIC_CALL -> lf::task<uts_result> {
    int n = uts_num_children(tree, &s, height);
    if (n == 0)
        co_return uts_result_leaf(height);
    std::unique_ptr<uts_result[]> res(new uts_result[n]); // on the heap, as the TBB version
    for (int i = 0; i < n; i++) {
        uts_state child;
        uts_child(tree, &child, &s, i);
        if (i + 1 < n)
            co_await FORK(&res[i], uts_visit)(child, height + 1);
        else
            co_await CALL(&res[i], uts_visit)(child, height + 1);
    }
    co_await lf::join;
    uts_result total = uts_result_inner(height);
    for (int i = 0; i < n; i++)
        uts_result_add(&total, &res[i]);
    co_return total;
};

// The M:N workloads (kernels/mn.h): in one root task, each round's tasks forked, then one
// join; mergesort as fib.
constexpr auto mn_leaf = [](auto, mn_body *body, void *ctx, size_t i) LF_STATIC_CALL -> lf::task<void> {
    body(ctx, i);
    co_return;
};

constexpr auto mn_rounds = [](auto, mn_next *next, mn_body *body, void *ctx) LF_STATIC_CALL -> lf::task<void> {
    for (size_t n; (n = next(ctx)) != 0;) {
        for (size_t i = 0; i < n; i++)
            co_await FORK(mn_leaf)(body, ctx, i);
        co_await lf::join;
    }
};

constexpr auto msort = [](auto msort, int32_t *a, int32_t *tmp, size_t n, size_t cutoff) LF_STATIC_CALL -> lf::task<void> {
    if (n <= cutoff) {
        msort_serial(a, tmp, n);
        co_return;
    }
    size_t mid = n / 2;
    co_await FORK(msort)(a, tmp, mid, cutoff);
    co_await CALL(msort)(a + mid, tmp + mid, n - mid, cutoff);
    co_await lf::join;
    msort_merge(a, tmp, n, mid);
};

} // namespace

extern "C" {

void bench_peer_start(unsigned workers) {
    pool.emplace(workers);
    bench_peer_noop(); // the workers' first task, outside timing
}

void bench_peer_stop(void) { pool.reset(); }

void bench_peer_noop(void) { (void)lf::sync_wait(*pool, noop, 0); }

int64_t fib_peer(int n) { return lf::sync_wait(*pool, fib, n); }
int64_t skynet_peer(int64_t num, int64_t size, int fanout) { return lf::sync_wait(*pool, skynet, num, size, fanout); }

double integrate_peer(double x1, double y1, double x2, double y2, double area, double e) {
    eps = e;
    return lf::sync_wait(*pool, integrate, x1, y1, x2, y2, area);
}

void matmul_peer(const float *a, const float *b, float *r, int n, int s) { lf::sync_wait(*pool, matmul, a, b, r, n, s, 0); }

int64_t nqueens_peer(int n) {
    char empty[NQ_MAX] = {0};
    return lf::sync_wait(*pool, nqueens, 0, (const char *)empty, n);
}

uts_result uts_peer(const uts_params *p) {
    uts_state root;
    uts_root(p, &root);
    tree = p;
    return lf::sync_wait(*pool, uts_visit, root, 0);
}

const char bench_peer_mn_model[] = "fork-join: lf::fork, lf::join";

void mn_rounds_peer(mn_next *next, mn_body *body, void *ctx) { lf::sync_wait(*pool, mn_rounds, next, body, ctx); }

void msort_peer(int32_t *a, int32_t *tmp, size_t n, size_t cutoff) { lf::sync_wait(*pool, msort, a, tmp, n, cutoff); }

} // extern "C"
