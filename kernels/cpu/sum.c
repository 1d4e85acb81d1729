/* sum.c — CPU kernel: row sums (M x N -> M x 1) by dt_cpu_row_sum (dt_cpu_isa.h: 32
 * float lanes over 256-element blocks, blocks added in double), so the error stays far
 * below 1e-5 of the sum of |terms| for any N. Compiled once per ISA. */
#include "dt_cpu_isa.h"

DT_CPU_ROWS_FN(sum_rows, { out[i] = (float)dt_cpu_row_sum(a + i * lda, n); })

void DT_CPU_KFN(dt_cpu_sum)(int64_t m, int64_t n, const float *restrict a, int64_t lda,
                            float *restrict out) {
    const dt_cpu_rows_args p = {.m = m, .n = n, .lda = lda, .a = a, .out = out};
    dt_cpu_rows_run(m * n >= DT_CPU_PAR_MIN_ELEMS, &p, sum_rows);
}
