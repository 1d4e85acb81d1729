/* residual_layernorm.c — CPU kernel: out = layernorm(A + B) without affine. The sum row is
 * written to the output first, its statistics are taken from it (two passes, float lanes
 * per block, blocks in double), and it is normalized in place. Compiled once per ISA. */
#include <math.h>

#include "dt_cpu_isa.h"

DT_CPU_ROWS_FN(residual_layernorm_rows, {
    const float *restrict ar = a + i * lda, *restrict br = b + i * ldb;
    float *restrict o = out + i * n;
    _Pragma("omp simd")
    for (int64_t j = 0; j < n; j++) o[j] = ar[j] + br[j];
    const float mf = (float)(dt_cpu_row_sum(o, n) / (double)n);
    const double v = dt_cpu_row_sumsq(o, n, mf);
    const float r = (float)(1.0 / sqrt(v / (double)n + 1e-5));
    _Pragma("omp simd")
    for (int64_t j = 0; j < n; j++) o[j] = (o[j] - mf) * r;
})

void DT_CPU_KFN(dt_cpu_residual_layernorm)(int64_t m, int64_t n, const float *restrict a,
                                           int64_t lda, const float *restrict b, int64_t ldb,
                                           float *restrict out) {
    const dt_cpu_rows_args p = {.m = m, .n = n, .lda = lda, .ldb = ldb, .a = a, .b = b,
                                .out = out};
    dt_cpu_rows_run(m * n >= DT_CPU_PAR_MIN_ELEMS, &p, residual_layernorm_rows);
}
