/* softmax.c — CPU kernel: row softmax. Per row: max (vectorized), e_j = exp(x_j - max)
 * (dt_cpu_expf, vectorized) written to the output and summed (float within 64-element
 * chunks, double across chunks), then one scale pass. */
#include <math.h>

#include "dt_cpu_kernels.h"

void dt_cpu_softmax(int64_t m, int64_t n, const float *a, int64_t lda, float *out) {
    DT_CPU_FOR_ROWS(m * n >= DT_CPU_PAR_MIN_ELEMS / 4, i, m, {
        const float *x = a + i * lda;
        float *o = out + i * n;
        float mx = x[0];
        _Pragma("omp simd reduction(max : mx)")
        for (int64_t j = 0; j < n; j++) mx = x[j] > mx ? x[j] : mx;
        /* exp pass: float sums over chunks of 64 (vectorized), chunk sums added in double */
        double s = 0.0;
        for (int64_t j0 = 0; j0 < n; j0 += 64) {
            const int64_t j1 = j0 + 64 < n ? j0 + 64 : n;
            float cs = 0.0f;
            _Pragma("omp simd reduction(+ : cs)")
            for (int64_t j = j0; j < j1; j++) {
                const float e = dt_cpu_expf(x[j] - mx);
                o[j] = e;
                cs += e;
            }
            s += (double)cs;
        }
        const float inv = (float)(1.0 / s);
        _Pragma("omp simd")
        for (int64_t j = 0; j < n; j++) o[j] *= inv;
    });
}
