/* cross_entropy.c — CPU kernel: out[i] = logsumexp(x_i) - x_i[label_i] (M x N -> M x 1).
 * Max-shifted exponentials (dt_cpu_expf, vectorized) summed in double; the result is
 * formed in double. A label outside [0, N) yields NaN rather than an out-of-bounds read. */
#include <math.h>

#include "dt_cpu_kernels.h"

void dt_cpu_cross_entropy(int64_t m, int64_t n, const float *a, int64_t lda,
                          const int64_t *labels, float *out) {
    DT_CPU_FOR_ROWS(m * n >= DT_CPU_PAR_MIN_ELEMS / 4, i, m, {
        const float *x = a + i * lda;
        const int64_t lab = labels[i];
        float mx = x[0];
        _Pragma("omp simd reduction(max : mx)")
        for (int64_t j = 0; j < n; j++) mx = x[j] > mx ? x[j] : mx;
        double s = 0.0; /* float sums over chunks of 64 (vectorized), chunks in double */
        for (int64_t j0 = 0; j0 < n; j0 += 64) {
            const int64_t j1 = j0 + 64 < n ? j0 + 64 : n;
            float cs = 0.0f;
            _Pragma("omp simd reduction(+ : cs)")
            for (int64_t j = j0; j < j1; j++) cs += dt_cpu_expf(x[j] - mx);
            s += (double)cs;
        }
        if (lab < 0 || lab >= n) {
            out[i] = NAN;
            continue;
        }
        out[i] = (float)((double)mx + log(s) - (double)x[lab]);
    });
}
