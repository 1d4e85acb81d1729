/* gelu_add.c — CPU kernel: out = GELU(A + B) with the exact erf GELU,
 * 0.5 x (1 + erf(x / sqrt 2)), row-parallel. Default: dt_cpu_gelu (dt_cpu_kernels.h), a
 * branch-free polynomial form the compiler vectorizes (v2). v1 (DUALTIME_CPU_GELU=libm):
 * libm's erff (< 1 ulp) in a scalar loop, about 6x slower. The *_narrow kernels: the same
 * row functions on bf16 / f16 storage, a block of each row at a time widened into L1 and
 * rounded back (DT_CPU_NARROW_ROWS_FN, session 15). Compiled once per ISA. */
#include <math.h>

#include "dt_cpu_isa.h"

/* o[0..n) = GELU(ar + br): the polynomial GELU, vectorized */
DT_CPU_INLINE void gelu_add_row(const float *restrict ar, const float *restrict br,
                                float *restrict o, int64_t n) {
    _Pragma("omp simd")
    for (int64_t j = 0; j < n; j++) o[j] = dt_cpu_gelu(ar[j] + br[j]);
}

/* o[0..n) = GELU(ar + br): libm's erff, scalar (v1) */
DT_CPU_INLINE void gelu_add_libm_row(const float *ar, const float *br, float *o, int64_t n) {
    const float inv_sqrt2 = 0.70710678118654752440f;
    for (int64_t j = 0; j < n; j++) {
        float x = ar[j] + br[j];
        o[j] = 0.5f * x * (1.0f + erff(x * inv_sqrt2));
    }
}

DT_CPU_ROWS_FN(gelu_add_rows, { gelu_add_row(a + i * lda, b + i * ldb, out + i * n, n); })
DT_CPU_ROWS_FN(gelu_add_libm_rows,
               { gelu_add_libm_row(a + i * lda, b + i * ldb, out + i * n, n); })
DT_CPU_NARROW_ROWS_FN(gelu_add_rows_narrow, gelu_add_row)
DT_CPU_NARROW_ROWS_FN(gelu_add_libm_rows_narrow, gelu_add_libm_row)

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

/* A narrow gelu_add with the row function fn (the polynomial or the libm GELU). */
static void gelu_add_narrow_run(void (*fn)(const void *, int64_t, int64_t), dt_dtype t,
                                int64_t m, int64_t n, const uint16_t *a, int64_t lda,
                                const uint16_t *b, int64_t ldb, uint16_t *out) {
    const dt_cpu_rows_args p = {.m = m, .n = n, .lda = lda, .ldb = ldb, .an = a, .bn = b,
                                .outn = out, .f16 = t == DT_F16};
    dt_cpu_rows_run(m * n >= DT_CPU_PAR_MIN_ELEMS / 8, &p, fn);
}

void DT_CPU_KFN(dt_cpu_gelu_add_narrow)(dt_dtype t, int64_t m, int64_t n, const uint16_t *a,
                                        int64_t lda, const uint16_t *b, int64_t ldb,
                                        uint16_t *out) {
    gelu_add_narrow_run(gelu_add_rows_narrow, t, m, n, a, lda, b, ldb, out);
}

void DT_CPU_KFN(dt_cpu_gelu_add_libm_narrow)(dt_dtype t, int64_t m, int64_t n,
                                             const uint16_t *a, int64_t lda, const uint16_t *b,
                                             int64_t ldb, uint16_t *out) {
    gelu_add_narrow_run(gelu_add_libm_rows_narrow, t, m, n, a, lda, b, ldb, out);
}
