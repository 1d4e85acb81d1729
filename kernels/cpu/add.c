/* add.c — CPU kernel: out = A + B, row-parallel, vectorized inner loop (exact in FP32);
 * non-temporal output stores when the call outgrows the last-level cache
 * (dt_cpu_stream_wanted; docs/perf.md, CPU section). Compiled once per ISA
 * (dt_cpu_isa.h). */
#include "dt_cpu_isa.h"

/* o[0..n) = a + b with non-temporal stores where o is vector-aligned (plain stores for
 * the unaligned head and the tail), straight from the registers (no scratch row). */
DT_CPU_INLINE void add_row_stream(const float *restrict a, const float *restrict b,
                                  float *restrict o, int64_t n) {
    int64_t j = 0;
#if defined(__AVX__)
    for (; j < n && ((uintptr_t)(o + j) & 31) != 0; j++) o[j] = a[j] + b[j];
    for (; j + 16 <= n; j += 16) {
        _mm256_stream_ps(o + j, _mm256_add_ps(_mm256_loadu_ps(a + j), _mm256_loadu_ps(b + j)));
        _mm256_stream_ps(o + j + 8,
                         _mm256_add_ps(_mm256_loadu_ps(a + j + 8), _mm256_loadu_ps(b + j + 8)));
    }
#elif defined(__SSE__)
    for (; j < n && ((uintptr_t)(o + j) & 15) != 0; j++) o[j] = a[j] + b[j];
    for (; j + 8 <= n; j += 8) {
        _mm_stream_ps(o + j, _mm_add_ps(_mm_loadu_ps(a + j), _mm_loadu_ps(b + j)));
        _mm_stream_ps(o + j + 4, _mm_add_ps(_mm_loadu_ps(a + j + 4), _mm_loadu_ps(b + j + 4)));
    }
#endif
    for (; j < n; j++) o[j] = a[j] + b[j];
}

DT_CPU_ROWS_FN(add_rows_stream, {
    add_row_stream(a + i * lda, b + i * ldb, out + i * n, n);
    dt_cpu_stream_fence();
})

DT_CPU_ROWS_FN(add_rows, {
    const float *restrict ar = a + i * lda, *restrict br = b + i * ldb;
    float *restrict o = out + i * n;
    _Pragma("omp simd")
    for (int64_t j = 0; j < n; j++) o[j] = ar[j] + br[j];
})

void DT_CPU_KFN(dt_cpu_add)(int64_t m, int64_t n, const float *restrict a, int64_t lda,
                            const float *restrict b, int64_t ldb, float *restrict out) {
    const dt_cpu_rows_args p = {.m = m, .n = n, .lda = lda, .ldb = ldb, .a = a, .b = b,
                                .out = out};
    dt_cpu_rows_run(m * n >= DT_CPU_PAR_MIN_ELEMS, &p,
                    dt_cpu_stream_wanted(3 * m * n * (int64_t)sizeof(float)) ? add_rows_stream
                                                                               : add_rows);
}
