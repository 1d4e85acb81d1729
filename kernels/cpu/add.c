/* add.c — CPU kernel: out = A + B, row-parallel, vectorized inner loop (exact in FP32). */
#include "dt_cpu_kernels.h"

void dt_cpu_add(int64_t m, int64_t n, const float *a, int64_t lda, const float *b,
                int64_t ldb, float *out) {
    DT_CPU_FOR_ROWS(m * n >= DT_CPU_PAR_MIN_ELEMS, i, m, {
        const float *ar = a + i * lda, *br = b + i * ldb;
        float *o = out + i * n;
        _Pragma("omp simd")
        for (int64_t j = 0; j < n; j++) o[j] = ar[j] + br[j];
    });
}
