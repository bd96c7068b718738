// taskflow.cpp — the Taskflow peer (https://github.com/taskflow/taskflow): the kernels as
// recursions of Taskflow subflows, written as the libfork paper's benchmark suite writes them
// (every child emplaced into the parent's tf::Subflow, then join()), with the per-node work of
// the other versions (kernels/inline.h, uts/tree.h).  Built against the user's checkout by
// `make peers PEERS_DIR=DIR` (DIR/taskflow, header-only); no Taskflow code is in this project.
//
// A subflow's join runs the subflow's tasks on the joining worker and steals meanwhile; the
// thread that starts a run (the driver's) is not a worker: it waits in Future::wait(), so P
// workers are P executor threads.  Each child writes its result through a reference into the
// parent's C++ frame, which outlives the join.
#include <taskflow/taskflow.hpp>

#include <pthread.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <cstring>
#include <memory>

#include "kernels/peer.h"
extern "C" {
#include "bench/options.h"
#include "kernels/inline.h"
}

#if !defined(TF_VERSION) || TF_VERSION < 300600
#error "peers/taskflow.cpp needs Taskflow 3.6 or later (tf::Subflow::join)"
#endif

extern "C" {
const char bench_peer_name[] = "taskflow";
const char bench_peer_what[] = "Taskflow (Huang et al.): tf::Subflow recursion, work-stealing executor";
}

namespace {

std::unique_ptr<tf::Executor> executor;

// Runs f(sbf) as the one task of a taskflow, from the driver's thread, and waits.
template <class F> void run_root(F f) {
    tf::Taskflow flow;
    flow.emplace([&](tf::Subflow &sbf) { f(sbf); });
    executor->run(flow).wait();
}

int64_t fib(int n, tf::Subflow &sbf) {
    if (n < 2)
        return n;
    int64_t a, b;
    sbf.emplace([&a, n](tf::Subflow &s) { a = fib(n - 1, s); });
    sbf.emplace([&b, n](tf::Subflow &s) { b = fib(n - 2, s); });
    sbf.join();
    return a + b;
}

double eps;

double integrate(double x1, double y1, double x2, double y2, double area, tf::Subflow &sbf) {
    double half = (x2 - x1) / 2, x0 = x1 + half, y0 = integrate_fn(x0);
    double al = (y1 + y0) / 2 * half, ar = (y0 + y2) / 2 * half;
    if (std::fabs(al + ar - area) < eps)
        return al + ar;
    double a, b;
    sbf.emplace([&, x1, y1, x0, y0, al](tf::Subflow &s) { a = integrate(x1, y1, x0, y0, al, s); });
    sbf.emplace([&, x0, y0, x2, y2, ar](tf::Subflow &s) { b = integrate(x0, y0, x2, y2, ar, s); });
    sbf.join();
    return a + b;
}

void matmul(const float *a, const float *b, float *r, int n, int s, int add, tf::Subflow &sbf) {
    if (n <= MATMUL_BASE) {
        matmul_base(a, b, r, s, add);
        return;
    }
    int m = n / 2;
    size_t o01 = (size_t)m, o10 = (size_t)m * s, o11 = o10 + m;
    // The two halves of the products as two tasks of the subflow, the second after the
    // first, each forking its four products in a subflow of its own (a joined subflow takes
    // no new tasks, and Taskflow 4 has no Subflow::reset).
    tf::Task first = sbf.emplace([=](tf::Subflow &t) {
        t.emplace([=](tf::Subflow &u) { matmul(a, b, r, m, s, add, u); });
        t.emplace([=](tf::Subflow &u) { matmul(a, b + o01, r + o01, m, s, add, u); });
        t.emplace([=](tf::Subflow &u) { matmul(a + o10, b, r + o10, m, s, add, u); });
        t.emplace([=](tf::Subflow &u) { matmul(a + o10, b + o01, r + o11, m, s, add, u); });
        t.join();
    });
    tf::Task second = sbf.emplace([=](tf::Subflow &t) {
        t.emplace([=](tf::Subflow &u) { matmul(a + o01, b + o10, r, m, s, 1, u); });
        t.emplace([=](tf::Subflow &u) { matmul(a + o01, b + o11, r + o01, m, s, 1, u); });
        t.emplace([=](tf::Subflow &u) { matmul(a + o11, b + o10, r + o10, m, s, 1, u); });
        t.emplace([=](tf::Subflow &u) { matmul(a + o11, b + o11, r + o11, m, s, 1, u); });
        t.join();
    });
    first.precede(second);
    sbf.join();
}

int64_t nqueens(int j, const char *board, int n, tf::Subflow &sbf) {
    if (j == n)
        return 1;
    char buf[NQ_MAX * NQ_MAX];
    int64_t res[NQ_MAX];
    for (int i = 0; i < n; i++) {
        char *child = buf + i * n;
        std::memcpy(child, board, (size_t)j);
        child[j] = (char)i;
        res[i] = 0;
        if (!nqueens_conflict(child, j))
            sbf.emplace([&res, child, i, j, n](tf::Subflow &s) { res[i] = nqueens(j + 1, child, n, s); });
    }
    sbf.join();
    int64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += res[i];
    return sum;
}

// skynet: every child emplaced (as fib), join, sum
int64_t skynet(int64_t num, int64_t size, int fanout, tf::Subflow &sbf) {
    if (size == 1)
        return num;
    int64_t res[SKYNET_MAX_FANOUT], part = size / fanout;
    for (int i = 0; i < fanout; i++)
        sbf.emplace([&res, i, num, part, fanout](tf::Subflow &s) { res[i] = skynet(num + i * part, part, fanout, s); });
    sbf.join();
    int64_t sum = 0;
    for (int i = 0; i < fanout; i++)
        sum += res[i];
    return sum;
}

const uts_params *tree;

uts_result uts_visit(const uts_state *st, int height, tf::Subflow &sbf) {
    int n = uts_num_children(tree, st, height);
    if (n == 0)
        return uts_result_leaf(height);
    std::unique_ptr<uts_result[]> res(new uts_result[n]); // on the heap, as the TBB version
    uts_result *r = res.get();
    for (int i = 0; i < n; i++) {
        uts_state child;
        uts_child(tree, &child, st, i);
        sbf.emplace([child, i, r, height](tf::Subflow &s) { r[i] = uts_visit(&child, height + 1, s); });
    }
    sbf.join();
    uts_result total = uts_result_inner(height);
    for (int i = 0; i < n; i++)
        uts_result_add(&total, &r[i]);
    return total;
}

// mergesort: both halves emplaced, join, merge (as fib)
void msort(int32_t *a, int32_t *tmp, size_t n, size_t cutoff, tf::Subflow &sbf) {
    if (n <= cutoff) {
        msort_serial(a, tmp, n);
        return;
    }
    size_t mid = n / 2;
    sbf.emplace([=](tf::Subflow &s) { msort(a, tmp, mid, cutoff, s); });
    sbf.emplace([=](tf::Subflow &s) { msort(a + mid, tmp + mid, n - mid, cutoff, s); });
    sbf.join();
    msort_merge(a, tmp, n, mid);
}

} // namespace

extern "C" {

void bench_peer_start(unsigned workers) {
    // Taskflow's workers are std::threads with the default stack: give new threads 4 GB of
    // address space (touched as needed).  Each level of a tree is a subflow join on the C
    // stack, at least 30 KB of it here: UTS T3L (17,844 levels) overflowed 512 MB at P = 1
    // and 2, and runs in 4 GB.  (Deeper trees, T3XXL's 99,049 levels, may need more: not
    // measured.)  Where the system cannot reserve that much, the run stops with exit 2.
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) || pthread_attr_setstacksize(&attr, size_t(4) << 30) ||
        pthread_setattr_default_np(&attr)) {
        std::fprintf(stderr, "taskflow: cannot set the worker threads' stack size\n");
        std::exit(2);
    }
    pthread_attr_destroy(&attr);
    try {
        executor = std::make_unique<tf::Executor>(workers);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "taskflow: cannot start %u workers with 4 GB stacks: %s\n", workers, e.what());
        std::exit(2);
    }
    bench_peer_noop(); // the workers' first run, outside timing
}

void bench_peer_stop(void) { executor.reset(); }

void bench_peer_noop(void) {
    run_root([](tf::Subflow &sbf) {
        sbf.emplace([] {});
        sbf.join();
    });
}

int64_t fib_peer(int n) {
    int64_t r = 0;
    run_root([&](tf::Subflow &sbf) { r = fib(n, sbf); });
    return r;
}

double integrate_peer(double x1, double y1, double x2, double y2, double area, double e) {
    eps = e;
    double r = 0;
    run_root([&](tf::Subflow &sbf) { r = integrate(x1, y1, x2, y2, area, sbf); });
    return r;
}

void matmul_peer(const float *a, const float *b, float *r, int n, int s) {
    run_root([&](tf::Subflow &sbf) { matmul(a, b, r, n, s, 0, sbf); });
}

int64_t nqueens_peer(int n) {
    char empty[NQ_MAX] = {0};
    int64_t r = 0;
    run_root([&](tf::Subflow &sbf) { r = nqueens(0, empty, n, sbf); });
    return r;
}

int64_t skynet_peer(int64_t num, int64_t size, int fanout) {
    int64_t r = 0;
    run_root([&](tf::Subflow &sbf) { r = skynet(num, size, fanout, sbf); });
    return r;
}

uts_result uts_peer(const uts_params *p) {
    uts_state root;
    uts_root(p, &root);
    tree = p;
    uts_result r;
    run_root([&](tf::Subflow &sbf) { r = uts_visit(&root, 0, sbf); });
    return r;
}

// The M:N workloads (kernels/mn.h): in one root task, each round's tasks started with
// tf::Runtime::silent_async, then corun_all() (a subflow cannot be joined twice: Taskflow's
// Runtime is its way to fork and wait again and again from one task).
const char bench_peer_mn_model[] = "fork-join: tf::Runtime silent_async, corun_all";

void mn_rounds_peer(mn_next *next, mn_body *body, void *ctx) {
    tf::Taskflow flow;
    flow.emplace([=](tf::Runtime &rt) {
        for (size_t n; (n = next(ctx)) != 0;) {
            for (size_t i = 0; i < n; i++)
                rt.silent_async([body, ctx, i] { body(ctx, i); });
            rt.corun_all(); // (corun() without an argument is Taskflow 3.11 and later)
        }
    });
    executor->run(flow).wait();
}

void msort_peer(int32_t *a, int32_t *tmp, size_t n, size_t cutoff) {
    run_root([&](tf::Subflow &sbf) { msort(a, tmp, n, cutoff, sbf); });
}

} // extern "C"
