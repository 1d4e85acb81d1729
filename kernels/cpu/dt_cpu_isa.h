/* dt_cpu_isa.h — internal to kernels/cpu: the row and elementwise kernels compiled once per
 * instruction set, and the inline math they share.
 *
 * The row kernels (add.c ... cross_entropy.c, gemm.c, dt_cpu_table.c) are compiled up to
 * three times by workers/native/CMakeLists.txt: with DT_CPU_ISA=base (no -march: SSE2, the
 * x86-64 baseline), where the compiler takes -march=x86-64-v3 with DT_CPU_ISA=v3 (AVX2 +
 * FMA + F16C, 8-float vectors), and where it takes -march=x86-64-v4 with DT_CPU_ISA=v4
 * (AVX-512, 16-float vectors; DT_CPU_ISA_V3 is set there too: v3's intrinsics paths).
 * Every function they define is named through DT_CPU_KFN, so all copies link into one
 * library: dt_cpu_add_base, dt_cpu_add_v3, dt_cpu_add_v4, and each copy fills one table
 * (dt_cpu_rows_base / _v3 / _v4). dt_cpu_dispatch.c
 * (compiled once, baseline) picks the table from CPUID at the first call, or from
 * DUALTIME_CPU_ISA (docs/perf.md, CPU section), and the public dt_cpu_* entry points of
 * dt_cpu_kernels.h call through it, so the binary runs on any x86-64 machine.
 *
 * The inline helpers below are plain C written so that GCC vectorizes them (contiguous
 * inner loops over restrict pointers, branch-free bodies, fixed-width accumulator arrays
 * that become 4 vector registers): no intrinsics, so the same text is SSE2 in the base
 * copy and AVX2+FMA in the v3 copy. Same contract as dt_cpu_kernels.h: FP32, row-major,
 * input rows through their stride, contiguous output, reentrant. */
#ifndef DT_CPU_ISA_H
#define DT_CPU_ISA_H

#include <stddef.h>
#include <stdint.h>
#if defined(__SSE__)
#include <immintrin.h>
#endif

#include "../../src/plan/dt_ops.h" /* the bf16 / f16 rounding rules */
#include "dt_cpu_kernels.h"
#include "dt_cpu_pool.h"

/* In the per-ISA copies (DT_CPU_ISA=base|v3; DT_CPU_ISA_V3=1 in the v3 one):
 * name -> name_<isa>, every external symbol they define. */
#ifdef DT_CPU_ISA
#define DT_CPU_CAT2(a, b) a##_##b
#define DT_CPU_CAT(a, b) DT_CPU_CAT2(a, b)
#define DT_CPU_KFN(name) DT_CPU_CAT(name, DT_CPU_ISA)
#if DT_CPU_ISA_V4
#define DT_CPU_ISA_LABEL "v4 (AVX-512)"
#elif DT_CPU_ISA_V3
#define DT_CPU_ISA_LABEL "v3 (AVX2+FMA)"
#else
#define DT_CPU_ISA_LABEL "base (SSE2)"
#endif
#endif

/* One ISA's row kernels, same signatures as the public ones (dt_cpu_kernels.h). */
typedef struct dt_cpu_row_kernels {
    const char *isa; /* "v4 (AVX-512)", "v3 (AVX2+FMA)" or "base (SSE2)" */
    void (*add)(int64_t, int64_t, const float *, int64_t, const float *, int64_t, float *);
    void (*gelu_add)(int64_t, int64_t, const float *, int64_t, const float *, int64_t,
                     float *);
    void (*gelu_add_libm)(int64_t, int64_t, const float *, int64_t, const float *, int64_t,
                          float *);
    void (*sum)(int64_t, int64_t, const float *, int64_t, float *);
    void (*softmax)(int64_t, int64_t, const float *, int64_t, float *);
    void (*rmsnorm)(int64_t, int64_t, const float *, int64_t, const float *, float *);
    void (*layernorm)(int64_t, int64_t, const float *, int64_t, const float *, const float *,
                      float *);
    void (*residual_layernorm)(int64_t, int64_t, const float *, int64_t, const float *,
                               int64_t, float *);
    void (*cross_entropy)(int64_t, int64_t, const float *, int64_t, const int64_t *, float *);
    void (*gemm)(int64_t, int64_t, int64_t, const float *, int64_t, const float *, int64_t,
                 float *); /* gemm.c (v2) */
    /* bf16 / f16 storage, one pass (session 15): same signatures as the public
     * dt_cpu_*_narrow of dt_cpu_kernels.h */
    void (*add_narrow)(dt_dtype, int64_t, int64_t, const uint16_t *, int64_t, const uint16_t *,
                       int64_t, uint16_t *);
    void (*gelu_add_narrow)(dt_dtype, int64_t, int64_t, const uint16_t *, int64_t,
                            const uint16_t *, int64_t, uint16_t *);
    void (*gelu_add_libm_narrow)(dt_dtype, int64_t, int64_t, const uint16_t *, int64_t,
                                 const uint16_t *, int64_t, uint16_t *);
    void (*sum_narrow)(dt_dtype, int64_t, int64_t, const uint16_t *, int64_t, uint16_t *);
    void (*widen)(dt_dtype, const uint16_t *, float *, int64_t);
    void (*round)(dt_dtype, const float *, uint16_t *, int64_t);
} dt_cpu_row_kernels;

extern const dt_cpu_row_kernels dt_cpu_rows_base;
extern const dt_cpu_row_kernels dt_cpu_rows_v3; /* only where DT_CPU_HAVE_V3 is defined */
extern const dt_cpu_row_kernels dt_cpu_rows_v4; /* only where DT_CPU_HAVE_V4 is defined */

/* 1 if a call that reads and writes `bytes` in all should stream its matrix output
 * (non-temporal stores): DUALTIME_CPU_STREAM=on|off, else (auto) when bytes exceed half
 * the last-level cache (sysconf; 32 MiB if unknown). dt_cpu_dispatch.c. */
int dt_cpu_stream_wanted(int64_t bytes);

#define DT_CPU_INLINE static inline __attribute__((always_inline))

/* ---- row loops on the pool ---------------------------------------------------------
 * Every row kernel is a range function over rows [i0, i1) (DT_CPU_ROWS_FN) and an entry
 * point that packs its arguments and calls dt_cpu_rows_run: on the calling thread alone
 * when `par` is false or one thread is allowed (no pool, no OpenMP region), else on the
 * kernels' pool (dt_cpu_pool.h: a thread the scheduler has parked costs no barrier wait,
 * as it did in an OpenMP region on the shared development VM; docs/perf.md, CPU v3). */
typedef struct dt_cpu_rows_args {
    int64_t m, n, lda, ldb;
    const float *a, *b, *gamma, *beta;
    const int64_t *labels;
    float *out;
    int stream; /* dt_cpu_stream_wanted's answer for the call */
    /* bf16 / f16 kernels (*_narrow): their rows, in place of a, b, out */
    const uint16_t *an, *bn;
    uint16_t *outn;
    int f16; /* 1: an, bn, outn hold f16; 0: bf16 */
} dt_cpu_rows_args;

/* static void name(const void *args, int64_t i0, int64_t i1): for i in [i0, i1) runs the
 * body (a braced block; `continue` ends a row) with the arguments as restrict locals
 * m, n, lda, ldb, a, b, gamma, beta, labels, out, st, an, bn, outn, f16. */
#define DT_CPU_ROWS_FN(name, ...)                                                          \
    static void name(const void *args_, int64_t i0_, int64_t i1_) {                        \
        const dt_cpu_rows_args *P_ = args_;                                                \
        const int64_t m = P_->m, n = P_->n, lda = P_->lda, ldb = P_->ldb;                  \
        const float *restrict a = P_->a, *restrict b = P_->b;                              \
        const float *restrict gamma = P_->gamma, *restrict beta = P_->beta;                \
        const int64_t *restrict labels = P_->labels;                                       \
        float *restrict out = P_->out;                                                     \
        const int st = P_->stream, f16 = P_->f16;                                          \
        const uint16_t *restrict an = P_->an, *restrict bn = P_->bn;                       \
        uint16_t *restrict outn = P_->outn;                                                \
        (void)m, (void)n, (void)lda, (void)ldb, (void)a, (void)b, (void)gamma, (void)beta, \
            (void)labels, (void)out, (void)st, (void)f16, (void)an, (void)bn, (void)outn;  \
        for (int64_t i = i0_; i < i1_; i++) __VA_ARGS__                                    \
    }

DT_CPU_INLINE void dt_cpu_rows_run(int par, const dt_cpu_rows_args *p,
                                   void (*fn)(const void *, int64_t, int64_t)) {
    const int threads = par ? omp_get_max_threads() : 1;
    if (threads <= 1)
        fn(p, 0, p->m);
    else
        dt_cpu_pool_rows(threads, p->m, p->n, fn, p);
}

/* ---- bf16 / f16 storage (session 15) ------------------------------------------------
 * The *_narrow kernels load bf16 or f16, compute in FP32 and store the result rounded to
 * the storage type, in one pass: what the worker's widen path (widen into FP32 scratch,
 * the FP32 kernel, round: DUALTIME_CPU_NARROW=widen) computes, bit for bit. The rules are
 * dt_ops.h's: widening is exact; rounding is to nearest even, a NaN kept (bf16: its sign
 * and top payload bits, made quiet; f16: the quiet NaN 0x7E00 with its sign). The v3 and
 * v4 copies convert 8 at a time in AVX2 registers: bf16 widens by a zero extension and a
 * shift of 16 and rounds by dt_f32_bits_to_bf16's integer steps; f16 goes through F16C
 * (vcvtph2ps, its quieted signalling NaNs made signalling again; vcvtps2ph with round to
 * nearest even, its NaN results replaced by dt_ops.h's); heads and tails take the scalar
 * rules. The base copy takes the scalar rules (GCC vectorizes bf16's). */
#if defined(__F16C__) && defined(__AVX2__)
#define DT_CPU_NARROW_X8 1
/* 8 values at p (no alignment), widened. */
DT_CPU_INLINE __m256 dt_cpu_widen8(int f16, const uint16_t *p) {
    const __m128i v = _mm_loadu_si128((const __m128i *)p);
    if (f16) {
        __m256 x = _mm256_cvtph_ps(v);
        const __m128i e = _mm_set1_epi16(0x7C00);
        if (!_mm_testz_si128(_mm_cmpeq_epi16(_mm_and_si128(v, e), e), _mm_set1_epi32(-1))) {
            /* an inf or NaN among them: vcvtph2ps quiets a signalling NaN, the rule keeps
             * it (on x86 which NaN of two an add returns depends on it) */
            const __m256i w =
                _mm256_and_si256(_mm256_cvtepu16_epi32(v), _mm256_set1_epi32(0x7FFF));
            const __m256i snan =
                _mm256_and_si256(_mm256_cmpgt_epi32(w, _mm256_set1_epi32(0x7C00)),
                                 _mm256_cmpgt_epi32(_mm256_set1_epi32(0x7E00), w));
            const __m256i quiet = _mm256_and_si256(snan, _mm256_set1_epi32(0x400000));
            x = _mm256_andnot_ps(_mm256_castsi256_ps(quiet), x);
        }
        return x;
    }
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16));
}
/* x rounded to 8 bf16 or f16 values (dt_f32_bits_to_bf16 / dt_f32_bits_to_f16 bit for bit:
 * test_cpu_kernels checks the ties' neighbourhoods, with DT_TEST_EXHAUSTIVE=1 every float). */
DT_CPU_INLINE __m128i dt_cpu_round8(int f16, __m256 x) {
    const __m256i u = _mm256_castps_si256(x);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7FFFFFFF)),
                                           _mm256_set1_epi32(0x7F800000));
    const __m256i hi = _mm256_srli_epi32(u, 16);
    if (f16) {
        __m128i h = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        if (!_mm256_testz_si256(nan, nan)) { /* F16C keeps the payload: use 0x7E00 | sign */
            const __m256i q = _mm256_or_si256(_mm256_and_si256(hi, _mm256_set1_epi32(0x8000)),
                                              _mm256_set1_epi32(0x7E00));
            h = _mm_blendv_epi8(h,
                                _mm_packus_epi32(_mm256_castsi256_si128(q),
                                                 _mm256_extracti128_si256(q, 1)),
                                _mm_packs_epi32(_mm256_castsi256_si128(nan),
                                                _mm256_extracti128_si256(nan, 1)));
        }
        return h;
    }
    /* r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16, q = (u >> 16) | 0x40, NaN ? q : r */
    const __m256i lsb = _mm256_and_si256(hi, _mm256_set1_epi32(1));
    const __m256i r = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7FFF)), lsb), 16);
    const __m256i q = _mm256_or_si256(hi, _mm256_set1_epi32(0x40));
    const __m256i v = _mm256_blendv_epi8(r, q, nan);
    return _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}
#else
#define DT_CPU_NARROW_X8 0
#endif

/* One value, the scalar rules (dt_ops.h). */
DT_CPU_INLINE float dt_cpu_widen1(int f16, uint16_t h) {
    if (f16) return dt_f16_bits_to_f32(h);
    const uint32_t u = (uint32_t)h << 16;
    float f;
    __builtin_memcpy(&f, &u, 4);
    return f;
}
DT_CPU_INLINE uint16_t dt_cpu_round1(int f16, float x) {
    uint32_t u;
    __builtin_memcpy(&u, &x, 4);
    return f16 ? dt_f32_bits_to_f16(u) : dt_f32_bits_to_bf16(u);
}

/* dst[0..n) = src[0..n) widened (exact). */
DT_CPU_INLINE void dt_cpu_widen_row(int f16, const uint16_t *restrict src, float *restrict dst,
                                    int64_t n) {
    int64_t j = 0;
#if DT_CPU_NARROW_X8
    for (; j + 8 <= n; j += 8) _mm256_storeu_ps(dst + j, dt_cpu_widen8(f16, src + j));
#else
    if (!f16) {
        _Pragma("omp simd")
        for (int64_t k = 0; k < n; k++) dst[k] = dt_cpu_widen1(0, src[k]);
        return;
    }
#endif
    for (; j < n; j++) dst[j] = dt_cpu_widen1(f16, src[j]);
}

/* dst[0..n) = src[0..n) rounded to bf16 (f16 when f16). */
DT_CPU_INLINE void dt_cpu_round_row(int f16, const float *restrict src, uint16_t *restrict dst,
                                    int64_t n) {
    int64_t j = 0;
#if DT_CPU_NARROW_X8
    for (; j + 8 <= n; j += 8)
        _mm_storeu_si128((__m128i *)(dst + j), dt_cpu_round8(f16, _mm256_loadu_ps(src + j)));
#else
    if (!f16) {
        _Pragma("omp simd")
        for (int64_t k = 0; k < n; k++) dst[k] = dt_cpu_round1(0, src[k]);
        return;
    }
#endif
    for (; j < n; j++) dst[j] = dt_cpu_round1(f16, src[j]);
}

/* Elementwise kernels on bf16 / f16 rows whose FP32 arithmetic is not a few registers
 * (gelu_add): each row in blocks of DT_CPU_NARROW_BLOCK elements, a and b widened into L1
 * buffers, `row(a, b, out, len)` (the FP32 kernel's own row function, so the same
 * arithmetic) on them into a third, rounded into the output. */
#define DT_CPU_NARROW_BLOCK 512
#define DT_CPU_NARROW_ROWS_FN(name, row)                                                    \
    DT_CPU_ROWS_FN(name, {                                                                 \
        float fa_[DT_CPU_NARROW_BLOCK] __attribute__((aligned(64)));                       \
        float fb_[DT_CPU_NARROW_BLOCK] __attribute__((aligned(64)));                       \
        float fo_[DT_CPU_NARROW_BLOCK] __attribute__((aligned(64)));                       \
        for (int64_t j0_ = 0; j0_ < n; j0_ += DT_CPU_NARROW_BLOCK) {                       \
            const int64_t len_ =                                                           \
                n - j0_ < DT_CPU_NARROW_BLOCK ? n - j0_ : DT_CPU_NARROW_BLOCK;             \
            dt_cpu_widen_row(f16, an + i * lda + j0_, fa_, len_);                          \
            dt_cpu_widen_row(f16, bn + i * ldb + j0_, fb_, len_);                          \
            row(fa_, fb_, fo_, len_);                                                      \
            dt_cpu_round_row(f16, fo_, outn + i * n + j0_, len_);                          \
        }                                                                                  \
    })

/* Reductions: DT_CPU_LANES float accumulators (4 AVX2 / 8 SSE registers: independent
 * dependency chains, enough loads in flight for L2 bandwidth) over blocks of DT_CPU_BLOCK
 * elements (32 terms per lane), each block folded pairwise (32 -> 16 -> 8 lanes) into
 * DT_CPU_DLANES double accumulators; the rest's whole DT_CPU_LANES steps are one shorter
 * block (since session 15: before, the whole rest was one float chain, which held rows
 * under 1024 at one add a cycle's latency; bf16 sum 1000x1000 85 -> 61 us on the AVX2
 * EPYC, FP32 96/48 -> 62/48), the last n % DT_CPU_LANES one float sum added in
 * double. Error of a float partial: <= 34 roundings, ~2e-6 of the sum of |terms| in the
 * worst case, inside the 1e-5 tolerances, for any N. (v1: 64-element chunks, one float
 * chain each, every chunk converted and added in double: 1.3-1.6x slower in L2.) */
#if DT_CPU_ISA_V4
#define DT_CPU_LANES 64 /* v4: 4 AVX-512 registers, as 32 are 4 AVX2 ones */
#else
#define DT_CPU_LANES 32
#endif
#define DT_CPU_BLOCK 1024
#define DT_CPU_DLANES 8

/* Folds acc[DT_CPU_LANES] pairwise (64 -> 32 ->) 16 -> 8 lanes into d[8] in double. */
DT_CPU_INLINE void dt_cpu_fold(float acc[DT_CPU_LANES], double d[DT_CPU_DLANES]) {
#if DT_CPU_LANES == 64
    for (int l = 0; l < 32; l++) acc[l] += acc[l + 32];
#endif
    for (int l = 0; l < 16; l++) acc[l] += acc[l + 16];
    for (int l = 0; l < DT_CPU_DLANES; l++) d[l] += (double)(acc[l] + acc[l + 8]);
}

DT_CPU_INLINE double dt_cpu_dsum(const double d[DT_CPU_DLANES]) {
    return ((d[0] + d[4]) + (d[1] + d[5])) + ((d[2] + d[6]) + (d[3] + d[7]));
}

/* The v3 copy folds a block of the plain sum in AVX registers (dt_cpu_fold's operations in
 * its order, so the same bits): GCC turns dt_cpu_fold into ~80 scalar instructions
 * (shuffles, single converts, a spilled double), which in a read-bound row sit in the
 * reorder buffer behind the block's last loads and keep the next block's loads from
 * issuing (session 14, AVX2-only EPYC: sum 1024x4096 from DRAM at one thread 10-20%
 * faster, 2 threads 12% faster from L3 and from DRAM; docs/perf.md). The sum of squares
 * (rmsnorm, layernorm) keeps the scalar fold: no gain was measured there, and the one
 * loss seen (rmsnorm 128x1024) followed code alignment, not the fold. Build with
 * -DDT_CPU_VFOLD=0 for the scalar fold in the sum too (before session 14). */
#ifndef DT_CPU_VFOLD
#define DT_CPU_VFOLD 1
#endif
#if DT_CPU_VFOLD && defined(__AVX__) && DT_CPU_LANES == 32
#define DT_CPU_VFOLD_AVX 1
#else
#define DT_CPU_VFOLD_AVX 0
#endif

/* acc[l] = the sum of lane l's terms (x's, or h's widened) over [j, j + len), len a
 * multiple of DT_CPU_LANES: dt_cpu_row_reduce's block. */
DT_CPU_INLINE void dt_cpu_block_terms(const float *restrict x, const uint16_t *restrict h,
                                      int f16, int64_t j, int64_t len, float c, int sq,
                                      float acc[DT_CPU_LANES], float *restrict hbuf) {
#if DT_CPU_NARROW_X8 && DT_CPU_LANES == 32
    if (h && !sq) {
        /* the loop below as GCC vectorizes it (lanes 8k..8k+7 in register k), each 8
         * terms widened in registers: no L1 round trip */
        __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        for (int64_t jj = 0; jj < len; jj += DT_CPU_LANES) {
            s0 = _mm256_add_ps(s0, dt_cpu_widen8(f16, h + j + jj));
            s1 = _mm256_add_ps(s1, dt_cpu_widen8(f16, h + j + jj + 8));
            s2 = _mm256_add_ps(s2, dt_cpu_widen8(f16, h + j + jj + 16));
            s3 = _mm256_add_ps(s3, dt_cpu_widen8(f16, h + j + jj + 24));
        }
        _mm256_storeu_ps(acc, s0);
        _mm256_storeu_ps(acc + 8, s1);
        _mm256_storeu_ps(acc + 16, s2);
        _mm256_storeu_ps(acc + 24, s3);
        return;
    }
#endif
    if (h) dt_cpu_widen_row(f16, h + j, hbuf, len);
    const float *restrict xb = h ? hbuf : x + j;
    for (int64_t jj = 0; jj < len; jj += DT_CPU_LANES)
        for (int l = 0; l < DT_CPU_LANES; l++) {
            const float v = sq ? xb[jj + l] - c : xb[jj + l];
            acc[l] += sq ? v * v : v;
        }
}

/* sum_j (x_j - c)^2 when sq, else sum_j x_j (c unused). With h (x unused) the terms are
 * h's bf16 (f16 when f16) values, summed in the same order as x's, so the result is the
 * FP32 kernel's on the widened row, bit for bit: in the v3 copy each block's terms
 * widened in registers, the tail (n % DT_CPU_LANES) widened into an L1 buffer first and
 * summed by the same code; elsewhere the blocks too. */
DT_CPU_INLINE double dt_cpu_row_reduce(const float *restrict x, const uint16_t *restrict h,
                                       int f16, int64_t n, float c, int sq) {
    double d[DT_CPU_DLANES] = {0};
    float hbuf[DT_CPU_BLOCK] __attribute__((aligned(64)));
#if DT_CPU_VFOLD_AVX
    __m256d dlo = _mm256_setzero_pd(), dhi = _mm256_setzero_pd(); /* d[0..3], d[4..7] */
#endif
    int64_t j = 0;
    /* whole blocks, then the rest's whole DT_CPU_LANES steps as one shorter block (a
     * separate call, so the whole blocks keep their constant trip count) */
    while (j + DT_CPU_LANES <= n) {
        float acc[DT_CPU_LANES] = {0};
        const int64_t len =
            j + DT_CPU_BLOCK <= n ? DT_CPU_BLOCK : (n - j) / DT_CPU_LANES * DT_CPU_LANES;
        if (len == DT_CPU_BLOCK)
            dt_cpu_block_terms(x, h, f16, j, DT_CPU_BLOCK, c, sq, acc, hbuf);
        else
            dt_cpu_block_terms(x, h, f16, j, len, c, sq, acc, hbuf);
        j += len;
#if DT_CPU_VFOLD_AVX
        if (!sq) {
            /* acc[l] += acc[l + 16] (l < 16), then d[l] += (double)(acc[l] + acc[l + 8]) */
            const __m256 a0 = _mm256_add_ps(_mm256_loadu_ps(acc), _mm256_loadu_ps(acc + 16));
            const __m256 a1 = _mm256_add_ps(_mm256_loadu_ps(acc + 8), _mm256_loadu_ps(acc + 24));
            const __m256 s = _mm256_add_ps(a0, a1);
            dlo = _mm256_add_pd(dlo, _mm256_cvtps_pd(_mm256_castps256_ps128(s)));
            dhi = _mm256_add_pd(dhi, _mm256_cvtps_pd(_mm256_extractf128_ps(s, 1)));
            continue;
        }
#endif
        dt_cpu_fold(acc, d);
    }
    if (h) dt_cpu_widen_row(f16, h + j, hbuf, n - j);
    const float *restrict xt = h ? hbuf : x + j;
    float t = 0.0f;
#pragma omp simd reduction(+ : t)
    for (int64_t jt = 0; jt < n - j; jt++) {
        const float v = sq ? xt[jt] - c : xt[jt];
        t += sq ? v * v : v;
    }
#if DT_CPU_VFOLD_AVX
    if (!sq) {
        /* dt_cpu_dsum in registers: ((d0 + d4) + (d1 + d5)) + ((d2 + d6) + (d3 + d7)) */
        const __m256d s = _mm256_add_pd(dlo, dhi);
        const __m128d h = _mm_hadd_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
        return (_mm_cvtsd_f64(h) + _mm_cvtsd_f64(_mm_unpackhi_pd(h, h))) + (double)t;
    }
#endif
    return dt_cpu_dsum(d) + (double)t;
}

DT_CPU_INLINE double dt_cpu_row_sum(const float *restrict x, int64_t n) {
    return dt_cpu_row_reduce(x, NULL, 0, n, 0.0f, 0);
}
/* The sum of a bf16 (f16 when f16) row: dt_cpu_row_sum of the widened row, bit for bit. */
DT_CPU_INLINE double dt_cpu_row_sum_narrow(const uint16_t *restrict h, int f16, int64_t n) {
    return dt_cpu_row_reduce(NULL, h, f16, n, 0.0f, 0);
}
DT_CPU_INLINE double dt_cpu_row_sumsq(const float *restrict x, int64_t n, float c) {
    return dt_cpu_row_reduce(x, NULL, 0, n, c, 1);
}

/* max_j x_j, DT_CPU_LANES independent maxima. */
DT_CPU_INLINE float dt_cpu_row_max(const float *restrict x, int64_t n) {
    float acc[DT_CPU_LANES];
    for (int l = 0; l < DT_CPU_LANES; l++) acc[l] = x[0];
    int64_t j = 0;
    for (; j + DT_CPU_LANES <= n; j += DT_CPU_LANES)
        for (int l = 0; l < DT_CPU_LANES; l++) acc[l] = x[j + l] > acc[l] ? x[j + l] : acc[l];
    float mx = x[0];
    for (int l = 0; l < DT_CPU_LANES; l++) mx = acc[l] > mx ? acc[l] : mx;
    for (; j < n; j++) mx = x[j] > mx ? x[j] : mx;
    return mx;
}

/* sum_j exp(x_j - mx) (dt_cpu_expf), each term also stored to e[j] when store (softmax).
 * One `omp simd` float reduction per block of DT_CPU_EBLOCK (32 terms per AVX2 lane),
 * blocks added in double: the exponential, not the add, bounds this loop, so one vector
 * chain suffices. Out of line (noinline, restrict parameters): inlined into the kernels'
 * row loops GCC lost the accumulator to the stack and added run-time alias checks. */
#define DT_CPU_EBLOCK 256
static __attribute__((noinline, unused)) double dt_cpu_row_expsum(const float *restrict x,
                                                                 int64_t n, float mx,
                                                                 float *restrict e,
                                                                 int store) {
    double s = 0.0;
    for (int64_t j0 = 0; j0 < n; j0 += DT_CPU_EBLOCK) {
        const int64_t j1 = j0 + DT_CPU_EBLOCK < n ? j0 + DT_CPU_EBLOCK : n;
        float cs = 0.0f;
        if (store) {
#pragma omp simd reduction(+ : cs)
            for (int64_t j = j0; j < j1; j++) {
                const float v = dt_cpu_expf(x[j] - mx);
                e[j] = v;
                cs += v;
            }
        } else {
#pragma omp simd reduction(+ : cs)
            for (int64_t j = j0; j < j1; j++) cs += dt_cpu_expf(x[j] - mx);
        }
        s += (double)cs;
    }
    return s;
}

/* ---- streaming (non-temporal) output ------------------------------------------------
 * When one call touches more memory than the last-level cache (dt_cpu_stream_wanted,
 * dt_cpu_dispatch.c), the kernels write their matrix output with non-temporal stores:
 * no read-for-ownership of the output lines, and the output does not evict the inputs,
 * so inputs that fit stay cached from call to call. Each row is produced into an L1
 * scratch chunk by the same vectorized loop as the cached path, then streamed out.
 * Used by rmsnorm and layernorm (1024x4096: 20-30% faster) and add (its own loop in
 * add.c, streaming straight from the registers: 1024x4096 0.95 -> 0.70 of torch); not by
 * gelu_add (compute-bound: 10-25% slower) nor the kernels that revisit their output row
 * (softmax, residual_layernorm: streaming it from a scratch row measured 10-20% slower);
 * see docs/perf.md. */
#define DT_CPU_STREAM_CHUNK 1024 /* floats (4 KiB) of scratch per chunk */

/* dst[0..n) = src[0..n) with non-temporal stores where dst is vector-aligned, plain
 * stores for the unaligned head and the tail. Ordered by dt_cpu_stream_fence. */
DT_CPU_INLINE void dt_cpu_stream_store(float *restrict dst, const float *restrict src,
                                       int64_t n) {
#if defined(__AVX__)
    const int64_t w = 8;
#elif defined(__SSE__)
    const int64_t w = 4;
#else
    const int64_t w = 1;
#endif
    int64_t j = 0;
    for (; j < n && ((uintptr_t)(dst + j) & (uintptr_t)(w * 4 - 1)) != 0; j++) dst[j] = src[j];
#if defined(__AVX__)
    for (; j + 8 <= n; j += 8) _mm256_stream_ps(dst + j, _mm256_loadu_ps(src + j));
#elif defined(__SSE__)
    for (; j + 4 <= n; j += 4) _mm_stream_ps(dst + j, _mm_loadu_ps(src + j));
#endif
    for (; j < n; j++) dst[j] = src[j];
}

/* Orders the non-temporal stores before anything after it (end of each row). */
DT_CPU_INLINE void dt_cpu_stream_fence(void) {
#if defined(__SSE__)
    _mm_sfence();
#endif
}

/* o[j] = expr for j in [0, n): the vectorized loop straight into o, or (stream) into L1
 * scratch chunks streamed to o. `j` names the index inside expr. */
#define DT_CPU_WRITE_ROW(o, n, stream, j, expr)                                            \
    do {                                                                                 \
        if (!(stream)) {                                                                 \
            _Pragma("omp simd")                                                          \
            for (int64_t j = 0; j < (n); j++) (o)[j] = (expr);                           \
        } else {                                                                         \
            float dt_tmp_[DT_CPU_STREAM_CHUNK] __attribute__((aligned(64)));             \
            for (int64_t j0_ = 0; j0_ < (n); j0_ += DT_CPU_STREAM_CHUNK) {               \
                const int64_t len_ =                                                     \
                    (n) - j0_ < DT_CPU_STREAM_CHUNK ? (n) - j0_ : DT_CPU_STREAM_CHUNK;   \
                _Pragma("omp simd")                                                      \
                for (int64_t jj_ = 0; jj_ < len_; jj_++) {                               \
                    const int64_t j = j0_ + jj_;                                         \
                    dt_tmp_[jj_] = (expr);                                               \
                }                                                                        \
                dt_cpu_stream_store((o) + j0_, dt_tmp_, len_);                           \
            }                                                                            \
            dt_cpu_stream_fence();                                                       \
        }                                                                                \
    } while (0)

#endif
