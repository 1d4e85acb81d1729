/* layernorm.c — CPU kernel: out = (x - mean) * rsqrt(var + 1e-5) * gamma + beta with the
 * biased variance. Two passes over the row (mean, then centred squares), each in float
 * chunks summed in double (dt_cpu_row_sum / dt_cpu_row_sumsq). */
#include <math.h>

#include "dt_cpu_kernels.h"

void dt_cpu_layernorm(int64_t m, int64_t n, const float *a, int64_t lda, const float *gamma,
                      const float *beta, float *out) {
    DT_CPU_FOR_ROWS(m * n >= DT_CPU_PAR_MIN_ELEMS, i, m, {
        const float *x = a + i * lda;
        float *o = out + i * n;
        const float mf = (float)(dt_cpu_row_sum(x, n) / (double)n);
        const double v = dt_cpu_row_sumsq(x, n, mf);
        const float r = (float)(1.0 / sqrt(v / (double)n + 1e-5));
        _Pragma("omp simd")
        for (int64_t j = 0; j < n; j++) o[j] = (x[j] - mf) * r * gamma[j] + beta[j];
    });
}
