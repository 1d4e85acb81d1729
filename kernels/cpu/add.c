/* add.c — CPU kernel: out = A + B, row-parallel, vectorized inner loop (exact in FP32). */
#include "dt_cpu_kernels.h"

void dt_cpu_add(int64_t m, int64_t n, const float *a, int64_t lda, const float *b,
                int64_t ldb, float *out) {
#pragma omp parallel for schedule(static) if (m * n >= DT_CPU_PAR_MIN_ELEMS)
    for (int64_t i = 0; i < m; i++) {
        const float *ar = a + i * lda, *br = b + i * ldb;
        float *o = out + i * n;
#pragma omp simd
        for (int64_t j = 0; j < n; j++) o[j] = ar[j] + br[j];
    }
}
