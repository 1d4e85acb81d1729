/* softmax.c — CPU kernel: row softmax. Per row: max (dt_cpu_row_max), e_j = exp(x_j - max)
 * (dt_cpu_expf) written to the output and summed (dt_cpu_row_expsum: float lanes per
 * block, blocks in double), then one scale pass. Compiled once per ISA. */
#include "dt_cpu_isa.h"

DT_CPU_ROWS_FN(softmax_rows, {
    const float *restrict x = a + i * lda;
    float *restrict o = out + i * n;
    const float mx = dt_cpu_row_max(x, n);
    const float inv = (float)(1.0 / dt_cpu_row_expsum(x, n, mx, o, 1));
    _Pragma("omp simd")
    for (int64_t j = 0; j < n; j++) o[j] *= inv;
})

void DT_CPU_KFN(dt_cpu_softmax)(int64_t m, int64_t n, const float *restrict a, int64_t lda,
                                float *restrict out) {
    const dt_cpu_rows_args p = {.m = m, .n = n, .lda = lda, .a = a, .out = out};
    dt_cpu_rows_run(m * n >= DT_CPU_PAR_MIN_ELEMS / 4, &p, softmax_rows);
}
