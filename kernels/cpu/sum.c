/* sum.c — CPU kernel: row sums (M x N -> M x 1) by dt_cpu_row_sum (dt_cpu_isa.h: 32
 * float lanes over 256-element blocks, blocks added in double), so the error stays far
 * below 1e-5 of the sum of |terms| for any N. dt_cpu_sum_narrow: bf16 / f16 rows summed
 * in the same order (dt_cpu_row_sum_narrow), the sum rounded to the storage type
 * (session 15). Compiled once per ISA. */
#include "dt_cpu_isa.h"

DT_CPU_ROWS_FN(sum_rows, { out[i] = (float)dt_cpu_row_sum(a + i * lda, n); })

void DT_CPU_KFN(dt_cpu_sum)(int64_t m, int64_t n, const float *restrict a, int64_t lda,
                            float *restrict out) {
    const dt_cpu_rows_args p = {.m = m, .n = n, .lda = lda, .a = a, .out = out};
    dt_cpu_rows_run(m * n >= DT_CPU_PAR_MIN_ELEMS, &p, sum_rows);
}

DT_CPU_ROWS_FN(sum_rows_narrow, {
    outn[i] = f16 ? dt_cpu_round1(1, (float)dt_cpu_row_sum_narrow(an + i * lda, 1, n))
                  : dt_cpu_round1(0, (float)dt_cpu_row_sum_narrow(an + i * lda, 0, n));
})

void DT_CPU_KFN(dt_cpu_sum_narrow)(dt_dtype t, int64_t m, int64_t n, const uint16_t *restrict a,
                                   int64_t lda, uint16_t *restrict out) {
    const dt_cpu_rows_args p = {.m = m, .n = n, .lda = lda, .an = a, .outn = out,
                                .f16 = t == DT_F16};
    dt_cpu_rows_run(m * n >= DT_CPU_PAR_MIN_ELEMS, &p, sum_rows_narrow);
}
