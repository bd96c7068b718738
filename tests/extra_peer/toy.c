/* toy.c — the toy peer's kernels (tests/extra_peer/toy.mk): a test fixture that shows what a
 * peer's file provides (kernels/peer.h) and that a driver lists only the kernels its peer
 * defines.  It has no runtime: every "fork" is a plain call on the calling thread, whatever
 * the worker count, so its times say nothing about parallelism.  It defines fib_peer and
 * nqueens_peer only; its driver refuses every other kernel. */
#include <string.h>

#include <toy.h> /* (its "checkout": DIR/toy/toy.h, made by the test) */

#include "bench/options.h"
#include "kernels/inline.h"
#include "kernels/peer.h"

const char bench_peer_name[] = "toy";
const char bench_peer_what[] = "a test fixture: one thread, every fork a call";

void bench_peer_start(unsigned workers) { (void)workers; }
void bench_peer_stop(void) {}
void bench_peer_noop(void) {}

int64_t fib_peer(int n) {
    if (n < 2)
        return n;
    int64_t a = fib_peer(n - 1), b = fib_peer(n - 2);
    return a + b;
}

static int64_t queens(int j, const char *board, int n) {
    if (j == n)
        return 1;
    char child[NQ_MAX];
    memcpy(child, board, (size_t)j);
    int64_t sum = 0;
    for (int i = 0; i < n; i++) {
        child[j] = (char)i;
        if (!nqueens_conflict(child, j))
            sum += queens(j + 1, child, n);
    }
    return sum;
}

int64_t nqueens_peer(int n) {
    char empty[NQ_MAX] = {0};
    return queens(0, empty, n);
}
