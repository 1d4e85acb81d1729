/* add.c — CPU kernel: out = A + B, row-parallel, vectorized inner loop (exact in FP32).
 * No streaming stores: on the shared-memory arena they measured slower for add
 * (docs/perf.md). Compiled once per ISA (dt_cpu_isa.h). */
#include "dt_cpu_isa.h"

void DT_CPU_KFN(dt_cpu_add)(int64_t m, int64_t n, const float *restrict a, int64_t lda,
                            const float *restrict b, int64_t ldb, float *restrict out) {
    DT_CPU_FOR_ROWS(m * n >= DT_CPU_PAR_MIN_ELEMS, i, m, {
        const float *restrict ar = a + i * lda, *restrict br = b + i * ldb;
        float *restrict o = out + i * n;
        _Pragma("omp simd")
        for (int64_t j = 0; j < n; j++) o[j] = ar[j] + br[j];
    });
}
