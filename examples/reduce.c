/* reduce.c — forkscope's runtime in a program of one's own, built against an installed
 * forkscope with pkg-config (examples/README.md):
 *
 *   cc -O2 reduce.c $(pkg-config --cflags --libs forkscope-cont-seg) -o reduce
 *   ./reduce [workers]
 *
 * Two tasks: a parallel reduction over an array (a sum, split in halves down to 4096
 * elements) and a recursive one (fib).  Each is checked against its serial answer; the exit
 * status is 0 only if both agree. */
#include <forkscope.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The sum of a[0..n).  Results of forks and calls go to members of the task's frame. */
typedef struct {
    fk_frame fk;     /* first: the runtime's part */
    int64_t left, right;
} sum_frame;

FK_TASK(sum, int64_t, sum_frame *f, (const int64_t *, a), (size_t, n)) {
    if (n <= 4096) { /* small: a plain loop, no frame */
        int64_t s = 0;
        for (size_t i = 0; i < n; i++)
            s += a[i];
        FK_RETURN(s);
    }
    FK_BEGIN(f);
    FK_FORK(left, sum, a, n / 2);          /* may run on another worker */
    FK_CALL(right, sum, a + n / 2, n - n / 2); /* runs here, now */
    FK_JOIN();
    FK_RETURN(f->left + f->right);
} FK_END

typedef struct {
    fk_frame fk;
    int64_t a, b;
} fib_frame;

FK_TASK(fib, int64_t, fib_frame *f, (int, n)) {
    if (n < 2)
        FK_RETURN(n);
    FK_BEGIN(f);
    FK_FORK(a, fib, n - 1);
    FK_CALL(b, fib, n - 2);
    FK_JOIN();
    FK_RETURN(f->a + f->b);
} FK_END

static int64_t fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

int main(int argc, char **argv) {
    unsigned workers = argc > 1 ? (unsigned)atoi(argv[1]) : 2;
    size_t n = (size_t)1 << 22;
    int64_t *a = malloc(n * sizeof *a), want = 0;
    if (!a)
        return 2;
    for (size_t i = 0; i < n; i++) {
        a[i] = (int64_t)(i % 1000) - 300;
        want += a[i];
    }

    fk_pool_opts o;
    fk_pool_opts_init(&o);
    o.workers = workers;
    fk_pool *pool;
    int err = fk_pool_create(&pool, &o);
    if (err) {
        fprintf(stderr, "reduce: cannot create a pool of %u workers: %s\n", workers, fk_strerror(err));
        return 2;
    }
    int64_t total = 0, f = 0;
    int bad = FK_RUN(pool, &total, sum, a, n) != 0 || FK_RUN(pool, &f, fib, 30) != 0;
    fk_stats st;
    fk_pool_stats(pool, &st, NULL);
    fk_pool_destroy(pool);
    free(a);
    printf("forkscope %s, %s, %u workers: sum %lld (serial %lld), fib(30) %lld (serial %lld), %llu steals\n",
           FK_VERSION, fk_build_variant(), workers, (long long)total, (long long)want, (long long)f,
           (long long)fib_serial(30), (unsigned long long)st.steals);
    return bad || total != want || f != fib_serial(30) ? 1 : 0;
}
