/* cross_entropy.c — CPU kernel: out[i] = logsumexp(x_i) - x_i[label_i] (M x N -> M x 1).
 * Max (dt_cpu_row_max), max-shifted exponentials summed (dt_cpu_row_expsum: float lanes
 * per block, blocks in double); the result is formed in double. A label outside [0, N)
 * yields NaN rather than an out-of-bounds read. Compiled once per ISA. */
#include <math.h>

#include "dt_cpu_isa.h"

DT_CPU_ROWS_FN(cross_entropy_rows, {
    const float *restrict x = a + i * lda;
    const int64_t lab = labels[i];
    if (lab < 0 || lab >= n) {
        out[i] = NAN;
        continue;
    }
    const float mx = dt_cpu_row_max(x, n);
    const double s = dt_cpu_row_expsum(x, n, mx, NULL, 0);
    out[i] = (float)((double)mx + log(s) - (double)x[lab]);
})

void DT_CPU_KFN(dt_cpu_cross_entropy)(int64_t m, int64_t n, const float *restrict a,
                                      int64_t lda, const int64_t *restrict labels,
                                      float *restrict out) {
    const dt_cpu_rows_args p = {.m = m, .n = n, .lda = lda, .a = a, .labels = labels,
                                .out = out};
    dt_cpu_rows_run(m * n >= DT_CPU_PAR_MIN_ELEMS / 4, &p, cross_entropy_rows);
}
