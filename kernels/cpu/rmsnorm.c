/* rmsnorm.c — CPU kernel: out = x * rsqrt(mean(x^2) + 1e-5) * gamma. Sum of squares by
 * dt_cpu_row_sumsq (float lanes per block, blocks in double), the scale rounded once to
 * float. Compiled once per ISA. */
#include <math.h>

#include "dt_cpu_isa.h"

DT_CPU_ROWS_FN(rmsnorm_rows, {
    const float *restrict x = a + i * lda;
    float *restrict o = out + i * n;
    const double ss = dt_cpu_row_sumsq(x, n, 0.0f);
    const float r = (float)(1.0 / sqrt(ss / (double)n + 1e-5));
    DT_CPU_WRITE_ROW(o, n, st, j, x[j] * r * gamma[j]);
})

void DT_CPU_KFN(dt_cpu_rmsnorm)(int64_t m, int64_t n, const float *restrict a, int64_t lda,
                                const float *restrict gamma, float *restrict out) {
    const dt_cpu_rows_args p = {.m = m, .n = n, .lda = lda, .a = a, .gamma = gamma,
                                .out = out,
                                .stream = dt_cpu_stream_wanted(2 * m * n * (int64_t)sizeof(float))};
    dt_cpu_rows_run(m * n >= DT_CPU_PAR_MIN_ELEMS, &p, rmsnorm_rows);
}
