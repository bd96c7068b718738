/* inline.h — the per-node work each kernel's versions share: the serial projection, the
 * OpenMP and forkscope versions in C, and the TBB versions in C++ (kernels/tbb.cpp), so that
 * every runtime does exactly the same work between its forks. */
#ifndef FK_KERNELS_INLINE_H
#define FK_KERNELS_INLINE_H

/* integrate: the integrand f(x) = (x^2 + 1) x. */
static inline double integrate_fn(double x) { return (x * x + 1.0) * x; }

/* nqueens: does the queen in row j of board b attack any queen in rows 0..j-1? */
static inline int nqueens_conflict(const char *b, int j) {
    for (int r = 0; r < j; r++) {
        int d = b[j] - b[r];
        if (d == 0 || d == j - r || d == r - j)
            return 1;
    }
    return 0;
}

/* matmul: the base case, a BASE x BASE block product with row stride s: r (+)= a b, summed
 * over k in a float (overwrites when add is 0). */
#define MATMUL_BASE 16
static inline void matmul_base(const float *a, const float *b, float *r, int s, int add) {
    for (int i = 0; i < MATMUL_BASE; i++)
        for (int j = 0; j < MATMUL_BASE; j++) {
            float sum = 0;
            for (int k = 0; k < MATMUL_BASE; k++)
                sum += a[i * s + k] * b[k * s + j];
            if (add)
                r[i * s + j] += sum;
            else
                r[i * s + j] = sum;
        }
}

#endif
