/* add.c — CPU kernel: out = A + B, row-parallel, vectorized inner loop (exact in FP32);
 * non-temporal output stores when the call outgrows the last-level cache
 * (dt_cpu_stream_wanted; docs/perf.md, CPU section). dt_cpu_add_narrow: the same on bf16 /
 * f16 storage in one pass, each 8 elements widened, added and rounded in registers
 * (session 15). Compiled once per ISA (dt_cpu_isa.h). */
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

/* o[0..n) = a + b on bf16 (f16 when f16) rows, rounded as dt_ops.h's rule; stream:
 * non-temporal 16-byte stores where o is 16-byte aligned (v3 and v4 copies). */
DT_CPU_INLINE void add_row_narrow(const int f16, const uint16_t *restrict a,
                                  const uint16_t *restrict b, uint16_t *restrict o, int64_t n,
                                  const int stream) {
    int64_t j = 0;
#if DT_CPU_NARROW_X8
    if (stream)
        for (; j < n && ((uintptr_t)(o + j) & 15) != 0; j++)
            o[j] = dt_cpu_round1(f16, dt_cpu_widen1(f16, a[j]) + dt_cpu_widen1(f16, b[j]));
    for (; j + 16 <= n; j += 16) {
        const __m128i r0 = dt_cpu_round8(
            f16, _mm256_add_ps(dt_cpu_widen8(f16, a + j), dt_cpu_widen8(f16, b + j)));
        const __m128i r1 = dt_cpu_round8(
            f16, _mm256_add_ps(dt_cpu_widen8(f16, a + j + 8), dt_cpu_widen8(f16, b + j + 8)));
        if (stream) {
            _mm_stream_si128((__m128i *)(o + j), r0);
            _mm_stream_si128((__m128i *)(o + j + 8), r1);
        } else {
            _mm_storeu_si128((__m128i *)(o + j), r0);
            _mm_storeu_si128((__m128i *)(o + j + 8), r1);
        }
    }
#else
    (void)stream;
    if (!f16) {
        _Pragma("omp simd")
        for (int64_t k = 0; k < n; k++)
            o[k] = dt_cpu_round1(0, dt_cpu_widen1(0, a[k]) + dt_cpu_widen1(0, b[k]));
        return;
    }
#endif
    for (; j < n; j++)
        o[j] = dt_cpu_round1(f16, dt_cpu_widen1(f16, a[j]) + dt_cpu_widen1(f16, b[j]));
}

DT_CPU_ROWS_FN(add_rows_narrow, {
    if (f16)
        add_row_narrow(1, an + i * lda, bn + i * ldb, outn + i * n, n, 0);
    else
        add_row_narrow(0, an + i * lda, bn + i * ldb, outn + i * n, n, 0);
})

DT_CPU_ROWS_FN(add_rows_narrow_stream, {
    if (f16)
        add_row_narrow(1, an + i * lda, bn + i * ldb, outn + i * n, n, 1);
    else
        add_row_narrow(0, an + i * lda, bn + i * ldb, outn + i * n, n, 1);
    dt_cpu_stream_fence();
})

void DT_CPU_KFN(dt_cpu_add)(int64_t m, int64_t n, const float *restrict a, int64_t lda,
                            const float *restrict b, int64_t ldb, float *restrict out) {
    const dt_cpu_rows_args p = {.m = m, .n = n, .lda = lda, .ldb = ldb, .a = a, .b = b,
                                .out = out};
    dt_cpu_rows_run(m * n >= DT_CPU_PAR_MIN_ELEMS, &p,
                    dt_cpu_stream_wanted(3 * m * n * (int64_t)sizeof(float)) ? add_rows_stream
                                                                               : add_rows);
}

void DT_CPU_KFN(dt_cpu_add_narrow)(dt_dtype t, int64_t m, int64_t n, const uint16_t *restrict a,
                                   int64_t lda, const uint16_t *restrict b, int64_t ldb,
                                   uint16_t *restrict out) {
    const dt_cpu_rows_args p = {.m = m, .n = n, .lda = lda, .ldb = ldb, .an = a, .bn = b,
                                .outn = out, .f16 = t == DT_F16};
    dt_cpu_rows_run(m * n >= DT_CPU_PAR_MIN_ELEMS, &p,
                    dt_cpu_stream_wanted(3 * m * n * 2) ? add_rows_narrow_stream
                                                        : add_rows_narrow);
}
