/* dt_cpu_kernels.h — the CPU kernels of the native worker, one file per op
 * (kernels/cpu/<op>.c), plain C11 (+ AVX2 intrinsics in gemm's v3 copy), vectorized by
 * the compiler.
 *
 * Contract shared by every kernel:
 *  - FP32 in, FP32 out; the definitions are those of the op registry (src/plan/dt_ops.c):
 *    exact erf GELU, eps 1e-5, biased variance, cross_entropy = logsumexp(x) - x[label].
 *  - Matrices are row-major. An input matrix is read through its row stride (elements,
 *    lda/ldb >= cols), so strided views of the arena work; vectors (gamma, beta, labels)
 *    are contiguous; the output is contiguous (row stride = its cols; sum and
 *    cross_entropy write M x 1).
 *  - Parallel across rows (gemm: across row blocks) on the kernels' own thread pool
 *    (dt_cpu_pool.h; DUALTIME_CPU_POOL=omp: OpenMP regions), as many threads as the
 *    caller's omp_set_num_threads; small problems run on the calling thread only.
 *  - No allocation except gemm's packing buffers (malloc per call, freed before return)
 *    and the pool's worker threads (started once);
 *    inputs are never written; every output element is written exactly once per call
 *    (gemm: accumulated in place over K blocks).
 *  - Shapes are positive; the caller validates them. Reentrant.
 *  - The row and elementwise kernels and gemm (v2) exist once per instruction set
 *    (dt_cpu_isa.h): the entry points below pick, at their first call, the AVX2+FMA copy
 *    where CPUID offers it, else the SSE2 baseline; DUALTIME_CPU_ISA=base|v3 forces one
 *    (v3 only where the CPU has it), DUALTIME_CPU_GELU=libm selects the v1 GELU (libm
 *    erff, scalar loop), DUALTIME_CPU_GEMM=v1 the v1 gemm (gemm_v1.c). */
#ifndef DT_CPU_KERNELS_H
#define DT_CPU_KERNELS_H

#include <omp.h>
#include <stdint.h>

#include "../../src/plan/dt_ops.h" /* dt_dtype */

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

/* bf16 / f16 storage (t: DT_BF16 or DT_F16; rows of uint16_t bit patterns, strides in
 * elements), one pass: each input loaded and widened (exact), the op in FP32 registers as
 * the FP32 kernel above does it, the result rounded to t by dt_ops.h's rule
 * (dt_f32_to_narrow) and stored. Bit for bit what widening the inputs into FP32 rows,
 * calling the FP32 kernel and rounding its output gives (test_cpu_kernels checks it). Same
 * threading and contract otherwise; gelu_add follows DUALTIME_CPU_GELU, add streams its
 * output as dt_cpu_add does. (session 15; docs/perf.md) */
void dt_cpu_add_narrow(dt_dtype t, int64_t m, int64_t n, const uint16_t *a, int64_t lda,
                       const uint16_t *b, int64_t ldb, uint16_t *out);
void dt_cpu_gelu_add_narrow(dt_dtype t, int64_t m, int64_t n, const uint16_t *a, int64_t lda,
                            const uint16_t *b, int64_t ldb, uint16_t *out);
void dt_cpu_sum_narrow(dt_dtype t, int64_t m, int64_t n, const uint16_t *a, int64_t lda,
                       uint16_t *out);
/* The conversions those kernels use, on n contiguous values, in the copy
 * dt_cpu_rows_describe names: dst = src widened (exact), dst = src rounded to t. */
void dt_cpu_widen_narrow(dt_dtype t, const uint16_t *src, float *dst, int64_t n);
void dt_cpu_round_narrow(dt_dtype t, const float *src, uint16_t *dst, int64_t n);

/* v1 of dt_cpu_gemm (gemm_v1.c), what DUALTIME_CPU_GEMM=v1 runs; same contract. */
void dt_cpu_gemm_v1(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                    const float *b, int64_t ldb, float *out);

/* One line naming the gemm version, its blocking and the instruction set it runs (v2:
 * the copy dt_cpu_rows_describe names). Static storage, rewritten by each call. */
const char *dt_cpu_gemm_describe(void);
const char *dt_cpu_gemm_v1_describe(void);
/* Tests and tools: "v1" or "v2" (NULL: v2) replaces DUALTIME_CPU_GEMM for every later
 * call; returns 0, or -1 for another name (nothing changes). Not safe while another
 * thread runs a kernel. */
int dt_cpu_gemm_select(const char *variant);
/* The instruction set the row kernels run: "v3 (AVX2+FMA)" or "base (SSE2)", and why
 * (e.g. "base (SSE2), DUALTIME_CPU_ISA=base"). Static storage. */
const char *dt_cpu_rows_describe(void);
/* Tests and tools: replaces the environment's choices (same values as DUALTIME_CPU_ISA,
 * DUALTIME_CPU_GELU, DUALTIME_CPU_STREAM; NULL = the default) for every later call.
 * Returns 0, or -1 when isa is "v3" and this CPU or build has none (the baseline is used).
 * Not safe while another thread runs a kernel. */
int dt_cpu_configure(const char *isa, const char *gelu, const char *stream);
/* The GELU of dt_cpu_gelu_add: "poly" (dt_cpu_gelu below, the default) or "libm" (v1:
 * erff; DUALTIME_CPU_GELU=libm). */
const char *dt_cpu_gelu_variant(void);

/* Problems with fewer elements than this run on the calling thread (an OpenMP fork/join
 * costs microseconds, more than a small row op takes). */
#define DT_CPU_PAR_MIN_ELEMS 16384

/* expf for vector loops (softmax, cross_entropy): Cephes-style range reduction
 * x = n ln2 + r (two-part ln2), degree-7 polynomial on |r| <= ln2/2, 2^n added to the
 * result's exponent bits (t's low mantissa bits hold n, no float-to-int conversion);
 * within 2 ulp of expf for x in [-87, 88.7]; x < -87 gives 0 (exp(-87) = 1.6e-38, so the
 * absolute error there is below 1.7e-38), x > 88.7 is clamped, NaN stays NaN.
 * Branch-free and libm-free, so GCC vectorizes loops that call it (SSE2 or AVX2+FMA). */
static inline float dt_cpu_expf(float x) {
    const float xc = x < 88.7f ? x : 88.7f;
    /* round(x / ln2) by the 1.5 * 2^23 trick (round to nearest even, no libm) */
    const float t = xc * 1.44269504088896341f + 12582912.0f;
    const float n = t - 12582912.0f;
    float r = xc - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f; /* e^r in [0.70, 1.42]: 2^n p stays normal for x >= -87 */
    int32_t tb, pb;
    __builtin_memcpy(&tb, &t, 4);
    __builtin_memcpy(&pb, &p, 4);
    pb += (int32_t)((uint32_t)tb << 23); /* t - 1.5*2^23 = n: + n in the exponent */
    __builtin_memcpy(&p, &pb, 4);
    return x < -87.0f ? 0.0f : p;
}

/* 2^h for h in [-125, 0] (GELU's tail): h = n + r, |r| <= 1/2, degree-6 minimax
 * polynomial for 2^r (9.3e-8 relative in float), 2^n added to the exponent bits. */
static inline float dt_cpu_exp2f_neg(float h) {
    const float t = h + 12582912.0f; /* 1.5 * 2^23: t's low mantissa bits hold round(h) */
    const float n = t - 12582912.0f;
    const float r = h - n;
    float p = 1.533757750e-4f;
    p = p * r + 1.339985989e-3f;
    p = p * r + 9.618519805e-3f;
    p = p * r + 5.550329015e-2f;
    p = p * r + 2.402264625e-1f;
    p = p * r + 6.931471825e-1f;
    p = p * r + 1.0f;
    int32_t tb, pb;
    __builtin_memcpy(&tb, &t, 4);
    __builtin_memcpy(&pb, &p, 4);
    pb += (int32_t)((uint32_t)tb << 23); /* + n in the exponent (t - 1.5*2^23 = n) */
    __builtin_memcpy(&p, &pb, 4);
    return p;
}

/* Exact-erf GELU, x * Phi(x), without erf or division: GELU(x) = max(x, 0) - |x| Phi(-|x|)
 * with Phi(-u) = 2^q(u), q a degree-10 polynomial fitted (weighted least squares, FP32
 * Horner) to log2(erfc(u / sqrt 2) / 2) on u in [0, 9]; u is clamped to 9 (Phi(-9) ~ 1e-19).
 * |Phi error| <= ~1.3e-7 absolute on [0, 9] with the exp2 above (test_cpu_kernels checks
 * 2e-7 against double erf), so |GELU error| <= 2e-7 |x| + 1 ulp, inside the registry's
 * 2e-6 + 2e-5 (|a| + |b|). Branch-free: GCC vectorizes loops that call it. */
static inline float dt_cpu_gelu(float x) {
    const float ax = __builtin_fabsf(x);
    const float u = ax < 9.0f ? ax : 9.0f;
    float q = -5.511268242e-08f;
    q = q * u + 1.366341735e-06f;
    q = q * u + -1.501110182e-05f;
    q = q * u + 9.361522825e-05f;
    q = q * u + -3.214257595e-04f;
    q = q * u + 5.855677227e-05f;
    q = q * u + 6.901856512e-03f;
    q = q * u + -5.242457613e-02f;
    q = q * u + -4.592228532e-01f;
    q = q * u + -1.151104212e+00f;
    q = q * u + -1.0f;
    const float relu = x > 0.0f ? x : 0.0f;
    return relu - ax * dt_cpu_exp2f_neg(q);
}

#endif
