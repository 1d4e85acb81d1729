/* layernorm.c — CPU kernel: out = (x - mean) * rsqrt(var + 1e-5) * gamma + beta with the
 * biased variance. Two passes over the row (mean, then centred squares), each by the
 * float-lane/double-block reductions of dt_cpu_isa.h. Compiled once per ISA. */
#include <math.h>

#include "dt_cpu_isa.h"

DT_CPU_ROWS_FN(layernorm_rows, {
    const float *restrict x = a + i * lda;
    float *restrict o = out + i * n;
    const float mf = (float)(dt_cpu_row_sum(x, n) / (double)n);
    const double v = dt_cpu_row_sumsq(x, n, mf);
    const float r = (float)(1.0 / sqrt(v / (double)n + 1e-5));
    DT_CPU_WRITE_ROW(o, n, st, j, (x[j] - mf) * r * gamma[j] + beta[j]);
})

void DT_CPU_KFN(dt_cpu_layernorm)(int64_t m, int64_t n, const float *restrict a, int64_t lda,
                                  const float *restrict gamma, const float *restrict beta,
                                  float *restrict out) {
    const dt_cpu_rows_args p = {.m = m, .n = n, .lda = lda, .a = a, .gamma = gamma,
                                .beta = beta, .out = out,
                                .stream = dt_cpu_stream_wanted(2 * m * n * (int64_t)sizeof(float))};
    dt_cpu_rows_run(m * n >= DT_CPU_PAR_MIN_ELEMS, &p, layernorm_rows);
}
