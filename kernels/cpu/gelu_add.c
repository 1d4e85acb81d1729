/* gelu_add.c — CPU kernel: out = GELU(A + B) with the exact erf GELU,
 * 0.5 x (1 + erf(x / sqrt 2)), evaluated in FP32 with libm's erff (< 1 ulp), row-parallel. */
#include <math.h>

#include "dt_cpu_kernels.h"

void dt_cpu_gelu_add(int64_t m, int64_t n, const float *a, int64_t lda, const float *b,
                     int64_t ldb, float *out) {
    const float inv_sqrt2 = 0.70710678118654752440f;
    DT_CPU_FOR_ROWS(m * n >= DT_CPU_PAR_MIN_ELEMS / 8, i, m, {
        const float *ar = a + i * lda, *br = b + i * ldb;
        float *o = out + i * n;
        for (int64_t j = 0; j < n; j++) {
            float x = ar[j] + br[j];
            o[j] = 0.5f * x * (1.0f + erff(x * inv_sqrt2));
        }
    });
}
