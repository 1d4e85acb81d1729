/* dt_cpu_kernels.h — the CPU reference-speed kernels of the native worker, one file per op
 * (kernels/cpu/<op>.c), plain C11 + OpenMP.
 *
 * Contract shared by every kernel:
 *  - FP32 in, FP32 out; the definitions are those of the op registry (src/plan/dt_ops.c):
 *    exact erf GELU, eps 1e-5, biased variance, cross_entropy = logsumexp(x) - x[label].
 *  - Matrices are row-major. An input matrix is read through its row stride (elements,
 *    lda/ldb >= cols), so strided views of the arena work; vectors (gamma, beta, labels)
 *    are contiguous; the output is contiguous (row stride = its cols; sum and
 *    cross_entropy write M x 1).
 *  - Parallel across rows (gemm: across row blocks) with OpenMP, using the caller's
 *    omp_set_num_threads; small problems run on the calling thread only.
 *  - No allocation except gemm's packing buffers (malloc per call, freed before return);
 *    inputs are never written; every output element is written exactly once per call
 *    (gemm: accumulated in place over K blocks).
 *  - Shapes are positive; the caller validates them. Reentrant. */
#ifndef DT_CPU_KERNELS_H
#define DT_CPU_KERNELS_H

#include <stdint.h>

/* out = a + b (M x N) */
void dt_cpu_add(int64_t m, int64_t n, const float *a, int64_t lda, const float *b,
                int64_t ldb, float *out);
/* out = GELU(a + b), GELU(x) = 0.5 x (1 + erf(x / sqrt 2)) */
void dt_cpu_gelu_add(int64_t m, int64_t n, const float *a, int64_t lda, const float *b,
                     int64_t ldb, float *out);
/* out[i] = sum_j a[i][j]   (out is M x 1) */
void dt_cpu_sum(int64_t m, int64_t n, const float *a, int64_t lda, float *out);
/* out = row softmax of a */
void dt_cpu_softmax(int64_t m, int64_t n, const float *a, int64_t lda, float *out);
/* out = x * rsqrt(mean(x^2) + 1e-5) * gamma   (gamma: N) */
void dt_cpu_rmsnorm(int64_t m, int64_t n, const float *a, int64_t lda, const float *gamma,
                    float *out);
/* out = (x - mean) * rsqrt(var + 1e-5) * gamma + beta   (biased variance) */
void dt_cpu_layernorm(int64_t m, int64_t n, const float *a, int64_t lda, const float *gamma,
                      const float *beta, float *out);
/* out = layernorm(a + b), no affine */
void dt_cpu_residual_layernorm(int64_t m, int64_t n, const float *a, int64_t lda,
                               const float *b, int64_t ldb, float *out);
/* out[i] = logsumexp(a[i][:]) - a[i][labels[i]]   (out is M x 1); a label outside [0, N)
 * gives NaN (the arena check then reports it). */
void dt_cpu_cross_entropy(int64_t m, int64_t n, const float *a, int64_t lda,
                          const int64_t *labels, float *out);
/* out (M x N, contiguous) = a (M x K, stride lda) * b (K x N, stride ldb), FP32. */
void dt_cpu_gemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                 int64_t ldb, float *out);

/* One line naming the gemm blocking and the instruction set the dispatcher picked. */
const char *dt_cpu_gemm_describe(void);

/* Problems with fewer elements than this run on the calling thread (an OpenMP fork/join
 * costs microseconds, more than a small row op takes). */
#define DT_CPU_PAR_MIN_ELEMS 16384

/* for (int64_t i = 0; i < m; i++) body — across OpenMP threads when `par` is true, else
 * plainly on the calling thread. Not `#pragma omp parallel for if (par)`: with libgomp a
 * parallel region whose if-clause is false still costs about 3 µs per call (measured on
 * the 2-core development machine: 1x127 add 3033 ns with `if (0)`, 31 ns without), which
 * made every small CPU case slower than PyTorch's. Inside `body`, write pragmas as
 * _Pragma("omp simd"). */
#define DT_CPU_FOR_ROWS(par, i, m, ...)                                                  \
    do {                                                                                 \
        if (par) {                                                                       \
            _Pragma("omp parallel for schedule(static)")                                 \
            for (int64_t i = 0; i < (m); i++) __VA_ARGS__                                \
        } else {                                                                         \
            for (int64_t i = 0; i < (m); i++) __VA_ARGS__                                \
        }                                                                                \
    } while (0)

/* Row reductions for the kernels: float partial sums within 64-element chunks (vectorized;
 * at most 64 terms per float sum keeps the error near 1e-6 of the sum of |terms|), chunk
 * sums added in double. sum of x; sum of x^2; sum of (x - c)^2. */
#define DT_CPU_CHUNK 64
static inline double dt_cpu_row_sum(const float *x, int64_t n) {
    double s = 0.0;
    for (int64_t j0 = 0; j0 < n; j0 += DT_CPU_CHUNK) {
        const int64_t j1 = j0 + DT_CPU_CHUNK < n ? j0 + DT_CPU_CHUNK : n;
        float cs = 0.0f;
#pragma omp simd reduction(+ : cs)
        for (int64_t j = j0; j < j1; j++) cs += x[j];
        s += (double)cs;
    }
    return s;
}
static inline double dt_cpu_row_sumsq(const float *x, int64_t n, float c) {
    double s = 0.0;
    for (int64_t j0 = 0; j0 < n; j0 += DT_CPU_CHUNK) {
        const int64_t j1 = j0 + DT_CPU_CHUNK < n ? j0 + DT_CPU_CHUNK : n;
        float cs = 0.0f;
#pragma omp simd reduction(+ : cs)
        for (int64_t j = j0; j < j1; j++) cs += (x[j] - c) * (x[j] - c);
        s += (double)cs;
    }
    return s;
}

/* expf for vector loops (softmax, cross_entropy): Cephes-style range reduction
 * x = n ln2 + r (two-part ln2), degree-7 polynomial on |r| <= ln2/2, scaled by 2^n built in
 * the exponent bits; within 2 ulp of expf for x in [-87.3, 88.7] (inputs are clamped to
 * that range, so very negative x gives ~1e-38 instead of 0). Branch-free and libm-free,
 * so GCC vectorizes loops that call it with plain SSE2/AVX2. */
static inline float dt_cpu_expf(float x) {
    x = x < -87.3f ? -87.3f : x;
    x = x > 88.7f ? 88.7f : x;
    /* round(x / ln2) by the 1.5 * 2^23 trick (round to nearest even, no libm) */
    const float t = x * 1.44269504088896341f + 12582912.0f;
    const float n = t - 12582912.0f;
    float r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    const int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    __builtin_memcpy(&scale, &bits, 4);
    return p * scale;
}

#endif
