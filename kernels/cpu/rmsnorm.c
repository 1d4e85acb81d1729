/* rmsnorm.c — CPU kernel: out = x * rsqrt(mean(x^2) + 1e-5) * gamma. Sum of squares by
 * dt_cpu_row_sumsq (float lanes per block, blocks in double), the scale rounded once to
 * float. Compiled once per ISA. */
#include <math.h>

#include "dt_cpu_isa.h"

void DT_CPU_KFN(dt_cpu_rmsnorm)(int64_t m, int64_t n, const float *restrict a, int64_t lda,
                                const float *restrict gamma, float *restrict out) {
    const int st = dt_cpu_stream_wanted(2 * m * n * (int64_t)sizeof(float));
    DT_CPU_FOR_ROWS(m * n >= DT_CPU_PAR_MIN_ELEMS, i, m, {
        const float *restrict x = a + i * lda;
        float *restrict o = out + i * n;
        const double ss = dt_cpu_row_sumsq(x, n, 0.0f);
        const float r = (float)(1.0 / sqrt(ss / (double)n + 1e-5));
        DT_CPU_WRITE_ROW(o, n, st, j, x[j] * r * gamma[j]);
    });
}
