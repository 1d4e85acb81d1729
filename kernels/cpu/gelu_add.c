/* gelu_add.c — CPU kernel: out = GELU(A + B) with the exact erf GELU,
 * 0.5 x (1 + erf(x / sqrt 2)), row-parallel. Default: dt_cpu_gelu (dt_cpu_kernels.h), a
 * branch-free polynomial form the compiler vectorizes (v2). v1 (DUALTIME_CPU_GELU=libm):
 * libm's erff (< 1 ulp) in a scalar loop, about 6x slower. Compiled once per ISA. */
#include <math.h>

#include "dt_cpu_isa.h"

DT_CPU_ROWS_FN(gelu_add_rows, {
    const float *restrict ar = a + i * lda, *restrict br = b + i * ldb;
    float *restrict o = out + i * n;
    _Pragma("omp simd")
    for (int64_t j = 0; j < n; j++) o[j] = dt_cpu_gelu(ar[j] + br[j]);
})

DT_CPU_ROWS_FN(gelu_add_libm_rows, {
    const float inv_sqrt2 = 0.70710678118654752440f;
    const float *ar = a + i * lda, *br = b + i * ldb;
    float *o = out + i * n;
    for (int64_t j = 0; j < n; j++) {
        float x = ar[j] + br[j];
        o[j] = 0.5f * x * (1.0f + erff(x * inv_sqrt2));
    }
})

void DT_CPU_KFN(dt_cpu_gelu_add)(int64_t m, int64_t n, const float *restrict a, int64_t lda,
                                 const float *restrict b, int64_t ldb, float *restrict out) {
    const dt_cpu_rows_args p = {.m = m, .n = n, .lda = lda, .ldb = ldb, .a = a, .b = b,
                                .out = out};
    dt_cpu_rows_run(m * n >= DT_CPU_PAR_MIN_ELEMS / 8, &p, gelu_add_rows);
}

void DT_CPU_KFN(dt_cpu_gelu_add_libm)(int64_t m, int64_t n, const float *restrict a,
                                      int64_t lda, const float *restrict b, int64_t ldb,
                                      float *restrict out) {
    const dt_cpu_rows_args p = {.m = m, .n = n, .lda = lda, .ldb = ldb, .a = a, .b = b,
                                .out = out};
    dt_cpu_rows_run(m * n >= DT_CPU_PAR_MIN_ELEMS / 8, &p, gelu_add_libm_rows);
}
