/* sum.c — CPU kernel: row sums (M x N -> M x 1): float sums of 64-element chunks
 * (vectorized) added in double, so the error stays far below 1e-5 of the sum of |terms|
 * for any N. */
#include "dt_cpu_kernels.h"

void dt_cpu_sum(int64_t m, int64_t n, const float *a, int64_t lda, float *out) {
    DT_CPU_FOR_ROWS(m * n >= DT_CPU_PAR_MIN_ELEMS, i, m, {
        const float *ar = a + i * lda;
        out[i] = (float)dt_cpu_row_sum(ar, n);
    });
}
