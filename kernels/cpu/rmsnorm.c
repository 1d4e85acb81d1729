/* rmsnorm.c — CPU kernel: out = x * rsqrt(mean(x^2) + 1e-5) * gamma. Sum of squares by
 * dt_cpu_row_sumsq (float chunks, double across), the scale rounded once to float. */
#include <math.h>

#include "dt_cpu_kernels.h"

void dt_cpu_rmsnorm(int64_t m, int64_t n, const float *a, int64_t lda, const float *gamma,
                    float *out) {
    DT_CPU_FOR_ROWS(m * n >= DT_CPU_PAR_MIN_ELEMS, i, m, {
        const float *x = a + i * lda;
        float *o = out + i * n;
        const double ss = dt_cpu_row_sumsq(x, n, 0.0f);
        const float r = (float)(1.0 / sqrt(ss / (double)n + 1e-5));
        _Pragma("omp simd")
        for (int64_t j = 0; j < n; j++) o[j] = x[j] * r * gamma[j];
    });
}
