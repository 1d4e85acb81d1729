/* gemm_v1.c — CPU gemm v1, kept selectable (DUALTIME_CPU_GEMM=v1; the default is v2,
 * gemm.c): C (M x N, contiguous) = A (M x K, stride lda) * B (K x N, stride ldb) in FP32,
 * GotoBLAS-style. Compiled once; picks its AVX2 macro-kernel from CPUID itself.
 *
 * Blocking: for each NC-column slab and KC-deep slice of B, the threads together pack
 * B[pc:pc+KC, jc:jc+NC] into NR-wide column panels (zero-padded), then split the M rows
 * into MC-row blocks (OpenMP, dynamic); each thread packs its A block into MR-row panels
 * (zero-padded) and runs the MR x NR register micro-kernel over every panel pair,
 * accumulating into C (the first K slice stores). Padding removes all tail cases from the
 * micro-kernel; only the write-back clips to the valid rows/columns.
 *
 * The macro-kernel is compiled twice: an x86-64-v3 (AVX2 + FMA, 8-float vectors) version
 * and a baseline (SSE2, 4-float vectors) one; CPUID picks at run time, so the binary runs
 * on any x86-64 machine (no -march flag needed).
 * FMA changes the rounding of the FP32 accumulation only within the gemm tolerance. */
#include <stdlib.h>
#include <string.h>

#include "dt_cpu_kernels.h"

#define MR 6
#define NR 16
#define KC 256
#define MC 64
#define NC 1024

#if defined(__x86_64__) && defined(__GNUC__) && !defined(DT_NO_X86_DISPATCH)
#define DT_GEMM_X86_DISPATCH 1
#else
#define DT_GEMM_X86_DISPATCH 0
#endif

/* Packs rows [0, mc) x cols [0, kc) of A (stride lda) into MR-row panels: panel p holds
 * kc groups of MR consecutive floats (rows p*MR .. p*MR+MR-1 at one k), zero-padded. */
static void pack_a(int64_t mc, int64_t kc, const float *a, int64_t lda, float *ap) {
    for (int64_t p = 0; p < mc; p += MR) {
        const int64_t mr = mc - p < MR ? mc - p : MR;
        for (int64_t kk = 0; kk < kc; kk++) {
            for (int64_t r = 0; r < mr; r++) ap[kk * MR + r] = a[(p + r) * lda + kk];
            for (int64_t r = mr; r < MR; r++) ap[kk * MR + r] = 0.0f;
        }
        ap += kc * MR;
    }
}

/* Packs column panel q (NR columns starting at q*NR, nc columns valid) of the kc x nc
 * slice of B into kc rows of NR floats, zero-padded. */
static void pack_b_panel(int64_t q, int64_t nc, int64_t kc, const float *b, int64_t ldb,
                         float *bp) {
    const int64_t j0 = q * NR, nr = nc - j0 < NR ? nc - j0 : NR;
    float *dst = bp + q * kc * NR;
    for (int64_t kk = 0; kk < kc; kk++) {
        const float *src = b + kk * ldb + j0;
        float *d = dst + kk * NR;
        if (nr == NR) {
            memcpy(d, src, NR * sizeof(float));
        } else {
            for (int64_t j = 0; j < nr; j++) d[j] = src[j];
            for (int64_t j = nr; j < NR; j++) d[j] = 0.0f;
        }
    }
}

typedef float dt_v8f __attribute__((vector_size(32)));
typedef float dt_v4f __attribute__((vector_size(16)));

/* Writes the MR x NR tile t into C (clipped to mr x nr): stores when first, else adds. */
static inline __attribute__((always_inline)) void tile_out(const float t[MR][NR],
                                                           float *restrict c, int64_t ldc,
                                                           int64_t mr, int64_t nr, int first) {
    for (int64_t r = 0; r < mr; r++) {
        float *cr = c + r * ldc;
        if (first)
            for (int64_t j = 0; j < nr; j++) cr[j] = t[r][j];
        else
            for (int64_t j = 0; j < nr; j++) cr[j] += t[r][j];
    }
}

/* MR x NR register tile over kc, 8-float vectors: 12 accumulators, two B vectors and one
 * broadcast fit the 16 AVX registers. t = Ap panel * Bp panel. */
static inline __attribute__((always_inline)) void micro_v8(int64_t kc, const float *restrict ap,
                                                           const float *restrict bp,
                                                           float t[MR][NR]) {
    dt_v8f acc[MR][2];
    for (int r = 0; r < MR; r++) acc[r][0] = acc[r][1] = (dt_v8f){0};
    for (int64_t kk = 0; kk < kc; kk++) {
        dt_v8f b0, b1;
        memcpy(&b0, bp + kk * NR, sizeof b0);
        memcpy(&b1, bp + kk * NR + 8, sizeof b1);
        const float *ak = ap + kk * MR;
        for (int r = 0; r < MR; r++) {
            const dt_v8f av = (dt_v8f){0} + ak[r];
            acc[r][0] += av * b0;
            acc[r][1] += av * b1;
        }
    }
    memcpy(t, acc, sizeof acc);
}

/* The same tile with 4-float (SSE) vectors, two rows at a time: 8 accumulators, four B
 * vectors and one broadcast fit the 16 SSE registers. */
static inline __attribute__((always_inline)) void micro_v4(int64_t kc, const float *restrict ap,
                                                           const float *restrict bp,
                                                           float t[MR][NR]) {
    for (int r0 = 0; r0 < MR; r0 += 2) {
        dt_v4f acc[2][4];
        for (int r = 0; r < 2; r++)
            for (int q = 0; q < 4; q++) acc[r][q] = (dt_v4f){0};
        for (int64_t kk = 0; kk < kc; kk++) {
            dt_v4f bv[4];
            memcpy(bv, bp + kk * NR, sizeof bv);
            const float *ak = ap + kk * MR + r0;
            for (int r = 0; r < 2; r++) {
                const dt_v4f av = (dt_v4f){0} + ak[r];
                for (int q = 0; q < 4; q++) acc[r][q] += av * bv[q];
            }
        }
        memcpy(t[r0], acc, sizeof acc);
    }
}

/* C block (mc x nc at c, stride ldc) (+)= packed A block * packed B slice. One body,
 * instantiated per micro-kernel (and target). */
#define DT_GEMM_MACRO(fname, attr, microfn)                                                  \
    attr static void fname(int64_t mc, int64_t nc, int64_t kc, const float *ap,           \
                           const float *bp, float *c, int64_t ldc, int first) {            \
        float t[MR][NR] __attribute__((aligned(32)));                                      \
        for (int64_t q = 0; q * NR < nc; q++) {                                            \
            const int64_t nr = nc - q * NR < NR ? nc - q * NR : NR;                        \
            const float *bq = bp + q * kc * NR;                                            \
            for (int64_t p = 0; p < mc; p += MR) {                                         \
                const int64_t mr = mc - p < MR ? mc - p : MR;                              \
                microfn(kc, ap + (p / MR) * kc * MR, bq, t);                               \
                tile_out((const float(*)[NR])t, c + p * ldc + q * NR, ldc, mr, nr, first); \
            }                                                                              \
        }                                                                                  \
    }

typedef void (*dt_gemm_macro_fn)(int64_t, int64_t, int64_t, const float *, const float *,
                                 float *, int64_t, int);

DT_GEMM_MACRO(macro_base, , micro_v4)
#if DT_GEMM_X86_DISPATCH
DT_GEMM_MACRO(macro_v3, __attribute__((target("arch=x86-64-v3"))), micro_v8)

static int have_v3(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

/* The macro-kernel for this CPU: AVX2+FMA where CPUID says so, else the baseline. */
static dt_gemm_macro_fn pick_macro(void) {
#if DT_GEMM_X86_DISPATCH
    if (have_v3()) return macro_v3;
#endif
    return macro_base;
}

/* The packed loop nest of dt_cpu_gemm. Called inside a parallel region by every thread
 * (its `omp for` loops share the work), or directly by the calling thread alone (the
 * orphaned `omp for` loops then run serially): a `#pragma omp parallel if (0)` region
 * would cost libgomp about 3 us per call, more than a 32^3 product takes. */
static void gemm_nest(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                      const float *b, int64_t ldb, float *out, float *bp,
                      dt_gemm_macro_fn macro) {
    float *ap = malloc((size_t)((MC + MR - 1) / MR * MR * KC) * sizeof(float));
    if (!ap) abort();
    for (int64_t jc = 0; jc < n; jc += NC) {
        const int64_t nc = n - jc < NC ? n - jc : NC;
        const int64_t npanels = (nc + NR - 1) / NR;
        for (int64_t pc = 0; pc < k; pc += KC) {
            const int64_t kc = k - pc < KC ? k - pc : KC;
            const float *bs = b + pc * ldb + jc;
#pragma omp for schedule(static)
            for (int64_t q = 0; q < npanels; q++) pack_b_panel(q, nc, kc, bs, ldb, bp);
            /* implicit barrier: the slice is packed */
#pragma omp for schedule(dynamic, 1)
            for (int64_t ic = 0; ic < m; ic += MC) {
                const int64_t mc = m - ic < MC ? m - ic : MC;
                pack_a(mc, kc, a + ic * lda + pc, lda, ap);
                macro(mc, nc, kc, ap, bp, out + ic * n + jc, n, pc == 0);
            }
            /* implicit barrier: nobody still reads bp before it is repacked */
        }
    }
    free(ap);
}

void dt_cpu_gemm_v1(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                 int64_t ldb, float *out) {
    const int64_t nc_max = n < NC ? n : NC;
    const int64_t npanels_max = (nc_max + NR - 1) / NR;
    const dt_gemm_macro_fn macro = pick_macro();
    float *bp = malloc((size_t)(npanels_max * NR * KC) * sizeof(float));
    const int par = (double)m * (double)n * (double)k >= 262144.0 && m > MR;
    if (!bp) abort(); /* out of memory is not an input error */
    if (par) {
#pragma omp parallel
        gemm_nest(m, n, k, a, lda, b, ldb, out, bp, macro);
    } else {
        gemm_nest(m, n, k, a, lda, b, ldb, out, bp, macro);
    }
    free(bp);
}

const char *dt_cpu_gemm_v1_describe(void) {
#if DT_GEMM_X86_DISPATCH
    if (have_v3()) return "v1: packed MR=6 NR=16 KC=256 MC=64 NC=1024, x86-64-v3 (AVX2+FMA) path";
#endif
    return "v1: packed MR=6 NR=16 KC=256 MC=64 NC=1024, baseline (SSE) path";
}
