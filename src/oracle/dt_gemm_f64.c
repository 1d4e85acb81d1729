/* dt_gemm_f64.c — the oracle's register-blocked FP64 GEMM (see dt_gemm_f64.h).
 *
 * Structure (the BLIS/GotoBLAS layering, written for this one job): C is cut into tiles of
 * up to DT_GEMM_MT x DT_GEMM_NC (fewer rows where that leaves under 4 tiles a thread),
 * shared over the OpenMP team (dynamic schedule); each thread has its own packing buffers.
 * For each tile and each K block of DT_GEMM_KC terms the thread packs the block of B (and
 * |B|) into NR-wide micro-panels once, then for each DT_GEMM_MC rows the block of A (and
 * |A|) into MR-tall micro-panels, zero-padded at the edges, and runs the micro-kernel over
 * the MR x NR register tiles, columns outer: the register tile of C and of S stays in
 * registers across the K block, loaded from C and S before it (zero for the first block)
 * and stored after. Each element thus sees exactly the triple loop's operations in its
 * order (k ascending from c = 0, a multiply then an add per term), whatever the tiling.
 *
 * The micro-kernel is one always-inline body (DT_GEMM_TILE) over GCC vectors of 2, 4 or 8
 * doubles, instantiated per path with a target attribute (portable: the build's baseline;
 * AVX2; AVX-512F) and its own MR x NR; the compiler may not contract (-ffp-contract=off,
 * checked below; GCC ignores #pragma STDC FP_CONTRACT). Edge tiles run on a zero-padded copy.
 * DT_GEMM_F64_FAULT (test builds only, tests/oracle/) plants a fault: 1 = a K block's terms
 * summed apart and then added to C (the usual BLIS C += AB order), 2 = the last term of
 * every K block skipped. */
#include "dt_gemm_f64.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "../common/dt_common.h"

#ifndef DT_GEMM_F64_CONTRACT_OFF
#error "dt_gemm_f64.c must be compiled with -ffp-contract=off -DDT_GEMM_F64_CONTRACT_OFF (CMakeLists.txt)"
#endif
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif
#ifndef DT_GEMM_F64_FAULT
#define DT_GEMM_F64_FAULT 0
#endif

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define DT_GEMM_F64_X86 1
#else
#define DT_GEMM_F64_X86 0
#endif

#define DT_GEMM_MT 384 /* rows of a tile of C at most: DT_GEMM_MC times a power of 2 */
#define DT_GEMM_MC 96  /* rows of a packed block of A: a multiple of every path's MR */
#define DT_GEMM_NC 256 /* columns of a tile of C: a multiple of every path's NR */
#define DT_GEMM_KC 256 /* terms per K block (the register tile's life) */
#define DT_GEMM_MR_MAX 12 /* rows of a register tile */
#define DT_GEMM_NV_MAX 2  /* vectors per row of a register tile */
#define DT_GEMM_NR_MAX 16 /* columns of a register tile */

typedef double dt_v2d __attribute__((vector_size(16)));
typedef double dt_v4d __attribute__((vector_size(32)));
typedef double dt_v8d __attribute__((vector_size(64)));

/* DT_GEMM_TILE(NAME, VT) defines the micro-kernel body NAME over vectors of type VT (W =
 * sizeof(VT) / 8 doubles): c[r][:nr] and s[r][:nr] (row stride ldc) of an mr x nr sub-tile,
 * nr = W nv, over kc terms of the packed panels ap (per k: mr values of A, then their |.|)
 * and bp (per k: nr values of B, then their |.|). first: the tile starts at 0 instead of
 * c / s. mr and nv are constants at every call, so the loops unroll and the arrays live in
 * registers. The products are scalar * vector: a broadcast of a, then one multiply per lane;
 * the add is a separate statement (and no contraction is allowed anyway). */
#define DT_GEMM_TILE(NAME, VT)                                                                  \
    static inline __attribute__((always_inline)) void NAME(                                     \
        const int mr, const int nv, int64_t kc, const double *restrict ap,                      \
        const double *restrict bp, double *restrict c, double *restrict s, int64_t ldc,         \
        int first) {                                                                            \
        enum { W = sizeof(VT) / sizeof(double) };                                               \
        const int nr = W * nv;                                                                  \
        const VT zero = {0};                                                                    \
        VT cv[DT_GEMM_MR_MAX][DT_GEMM_NV_MAX], sv[DT_GEMM_MR_MAX][DT_GEMM_NV_MAX];              \
        _Pragma("GCC unroll 12") for (int r = 0; r < mr; r++)                                   \
            _Pragma("GCC unroll 2") for (int v = 0; v < nv; v++) {                              \
            if (first || DT_GEMM_F64_FAULT == 1) {                                              \
                cv[r][v] = zero;                                                                \
                sv[r][v] = zero;                                                                \
            } else {                                                                            \
                memcpy(&cv[r][v], c + r * ldc + W * v, sizeof(VT));                             \
                memcpy(&sv[r][v], s + r * ldc + W * v, sizeof(VT));                             \
            }                                                                                   \
        }                                                                                       \
        const int64_t kn = kc - (DT_GEMM_F64_FAULT == 2 && kc > 1);                             \
        for (int64_t k = 0; k < kn; k++) {                                                      \
            const double *a = ap + k * 2 * mr, *b = bp + k * 2 * nr;                            \
            VT bv[DT_GEMM_NV_MAX], bb[DT_GEMM_NV_MAX];                                          \
            _Pragma("GCC unroll 2") for (int v = 0; v < nv; v++) {                              \
                memcpy(&bv[v], b + W * v, sizeof(VT));                                          \
                memcpy(&bb[v], b + nr + W * v, sizeof(VT));                                     \
            }                                                                                   \
            _Pragma("GCC unroll 12") for (int r = 0; r < mr; r++)                               \
                _Pragma("GCC unroll 2") for (int v = 0; v < nv; v++) {                          \
                const VT p = a[r] * bv[v], q = a[mr + r] * bb[v];                               \
                cv[r][v] = cv[r][v] + p;                                                        \
                sv[r][v] = sv[r][v] + q;                                                        \
            }                                                                                   \
        }                                                                                       \
        _Pragma("GCC unroll 12") for (int r = 0; r < mr; r++)                                   \
            _Pragma("GCC unroll 2") for (int v = 0; v < nv; v++) {                              \
            if (DT_GEMM_F64_FAULT == 1 && !first) {                                             \
                VT oc, os;                                                                      \
                memcpy(&oc, c + r * ldc + W * v, sizeof(VT));                                   \
                memcpy(&os, s + r * ldc + W * v, sizeof(VT));                                   \
                cv[r][v] = oc + cv[r][v];                                                       \
                sv[r][v] = os + sv[r][v];                                                       \
            }                                                                                   \
            memcpy(c + r * ldc + W * v, &cv[r][v], sizeof(VT));                                 \
            memcpy(s + r * ldc + W * v, &sv[r][v], sizeof(VT));                                 \
        }                                                                                       \
    }

DT_GEMM_TILE(tile_v2, dt_v2d)
DT_GEMM_TILE(tile_v4, dt_v4d)
DT_GEMM_TILE(tile_v8, dt_v8d)

typedef void (*dt_gemm_kern)(int64_t kc, const double *ap, const double *bp, double *c,
                             double *s, int64_t ldc, int first);

/* One path's micro-kernel: TILE with its MR, NV under target attribute ATTR. */
#define DT_GEMM_KERNEL(NAME, ATTR, TILE, MR, NV)                                               \
    ATTR static void NAME(int64_t kc, const double *ap, const double *bp, double *c,          \
                          double *s, int64_t ldc, int first) {                                 \
        TILE(MR, NV, kc, ap, bp, c, s, ldc, first);                                            \
    }

/* Register tiles mr x nr: C and S take 2 mr nv vector registers, B and |B| 2 nv more, of
 * 16 (SSE2, AVX2) or 32 (AVX-512); the sizes measured best on the development VM's Zen 4
 * among 1 x 8 .. 12 x 8 (docs/perf.md, "FP64 oracle gemm"). */
DT_GEMM_KERNEL(kern_portable, , tile_v2, 2, 2)
#if DT_GEMM_F64_X86
DT_GEMM_KERNEL(kern_avx2, __attribute__((target("avx2"))), tile_v4, 4, 1)
DT_GEMM_KERNEL(kern_avx512, __attribute__((target("avx512f"))), tile_v8, 12, 1)
#endif

typedef struct dt_gemm_cfg {
    int mr, nr;        /* register tile */
    dt_gemm_kern kern; /* NULL: not in this build */
} dt_gemm_cfg;

static const dt_gemm_cfg g_cfg[DT_GEMM_F64_PATHS] = {
    [DT_GEMM_F64_PORTABLE] = {2, 4, kern_portable},
#if DT_GEMM_F64_X86
    [DT_GEMM_F64_AVX2] = {4, 4, kern_avx2},
    [DT_GEMM_F64_AVX512] = {12, 8, kern_avx512},
#endif
};

const char *dt_gemm_f64_path_name(dt_gemm_f64_path p) {
    static const char *const names[DT_GEMM_F64_PATHS] = {"auto", "portable", "avx2", "avx512"};
    return (unsigned)p < DT_GEMM_F64_PATHS ? names[p] : "?";
}

int dt_gemm_f64_path_runs(dt_gemm_f64_path p) {
    if (p == DT_GEMM_F64_AUTO || p == DT_GEMM_F64_PORTABLE) return 1;
#if DT_GEMM_F64_X86
    /* no __builtin_cpu_init: the runtime's constructor has run, and calls on several
     * threads at once would race on its writes */
    if (p == DT_GEMM_F64_AVX2) return __builtin_cpu_supports("avx2") != 0;
    if (p == DT_GEMM_F64_AVX512) return __builtin_cpu_supports("avx512f") != 0;
#endif
    return 0;
}

dt_gemm_f64_path dt_gemm_f64_path_auto(void) {
    const char *e = getenv("DUALTIME_ORACLE_ISA");
    for (int p = DT_GEMM_F64_PORTABLE; e && p < DT_GEMM_F64_PATHS; p++)
        if (strcmp(e, dt_gemm_f64_path_name(p)) == 0 && dt_gemm_f64_path_runs(p))
            return (dt_gemm_f64_path)p;
    for (int p = DT_GEMM_F64_PATHS - 1; p > DT_GEMM_F64_PORTABLE; p--)
        if (dt_gemm_f64_path_runs(p)) return (dt_gemm_f64_path)p;
    return DT_GEMM_F64_PORTABLE;
}

/* Packs rows i0 .. i0+mc-1, terms k0 .. k0+kc-1 of A (row stride K) into mr-tall
 * micro-panels (per k: mr values, then their |.|), rows past mc zero. */
static void pack_a(const double *A, int64_t K, int64_t i0, int64_t mc, int64_t k0, int64_t kc,
                   int mr, double *ap) {
    for (int64_t ir = 0; ir < mc; ir += mr) {
        const int h = mc - ir < mr ? (int)(mc - ir) : mr;
        const double *a = A + (i0 + ir) * K + k0;
        double *p = ap + ir * kc * 2;
        for (int64_t k = 0; k < kc; k++, p += 2 * mr) {
            for (int r = 0; r < h; r++) {
                p[r] = a[r * K + k];
                p[mr + r] = fabs(a[r * K + k]);
            }
            for (int r = h; r < mr; r++) p[r] = p[mr + r] = 0.0;
        }
    }
}

/* Packs terms k0 .. k0+kc-1, columns j0 .. j0+nc-1 of B (row stride N) into nr-wide
 * micro-panels (per k: nr values, then their |.|), columns past nc zero. */
static void pack_b(const double *B, int64_t N, int64_t j0, int64_t nc, int64_t k0, int64_t kc,
                   int nr, double *bp) {
    for (int64_t jr = 0; jr < nc; jr += nr) {
        double *p = bp + jr * kc * 2;
        const int64_t w = nc - jr < nr ? nc - jr : nr;
        for (int64_t k = 0; k < kc; k++) {
            const double *b = B + (k0 + k) * N + j0 + jr;
            double *q = p + k * 2 * nr;
            for (int64_t j = 0; j < w; j++) {
                q[j] = b[j];
                q[nr + j] = fabs(b[j]);
            }
            for (int64_t j = w; j < nr; j++) q[j] = q[nr + j] = 0.0;
        }
    }
}

/* The m x n (<= mr x nr) sub-tile at c / s: whole tiles go straight to the kernel, edge
 * tiles through a zero-padded copy. */
static void run_tile(const dt_gemm_cfg *cfg, int64_t kc, const double *ap, const double *bp,
                     double *c, double *s, int64_t ldc, int first, int64_t m, int64_t n) {
    if (m == cfg->mr && n == cfg->nr) {
        cfg->kern(kc, ap, bp, c, s, ldc, first);
        return;
    }
    double tc[DT_GEMM_MR_MAX * DT_GEMM_NR_MAX] = {0}, ts[DT_GEMM_MR_MAX * DT_GEMM_NR_MAX] = {0};
    for (int64_t r = 0; r < m && !first; r++) {
        memcpy(tc + r * cfg->nr, c + r * ldc, (size_t)n * sizeof(double));
        memcpy(ts + r * cfg->nr, s + r * ldc, (size_t)n * sizeof(double));
    }
    cfg->kern(kc, ap, bp, tc, ts, cfg->nr, first);
    for (int64_t r = 0; r < m; r++) {
        memcpy(c + r * ldc, tc + r * cfg->nr, (size_t)n * sizeof(double));
        memcpy(s + r * ldc, ts + r * cfg->nr, (size_t)n * sizeof(double));
    }
}

/* One tile of C and S (rows i0.. of at most `rows`, DT_GEMM_NC columns j0..), all K blocks: per
 * K block, B's block is packed once (it stays in L2/L3), then per DT_GEMM_MC rows A's block
 * (it stays in L2), and the register tiles run columns outer, rows inner (a micro-panel of
 * B stays in L1). */
static void run_block(const dt_gemm_cfg *cfg, int64_t M, int64_t N, int64_t K, const double *A,
                      const double *B, double *C, double *S, int64_t i0, int64_t j0,
                      int64_t rows, double *ap, double *bp) {
    const int64_t mt = M - i0 < rows ? M - i0 : rows;
    const int64_t nc = N - j0 < DT_GEMM_NC ? N - j0 : DT_GEMM_NC;
    for (int64_t k0 = 0; k0 < K; k0 += DT_GEMM_KC) {
        const int64_t kc = K - k0 < DT_GEMM_KC ? K - k0 : DT_GEMM_KC;
        pack_b(B, N, j0, nc, k0, kc, cfg->nr, bp);
        for (int64_t ic = 0; ic < mt; ic += DT_GEMM_MC) {
            const int64_t mc = mt - ic < DT_GEMM_MC ? mt - ic : DT_GEMM_MC;
            pack_a(A, K, i0 + ic, mc, k0, kc, cfg->mr, ap);
            for (int64_t jr = 0; jr < nc; jr += cfg->nr)
                for (int64_t ir = 0; ir < mc; ir += cfg->mr) {
                    const int64_t m = mc - ir < cfg->mr ? mc - ir : cfg->mr;
                    const int64_t n = nc - jr < cfg->nr ? nc - jr : cfg->nr;
                    double *c = C + (i0 + ic + ir) * N + j0 + jr, *s = S + (c - C);
                    run_tile(cfg, kc, ap + ir * kc * 2, bp + jr * kc * 2, c, s, N, k0 == 0, m,
                             n);
                }
        }
    }
}

void dt_gemm_f64(dt_gemm_f64_path p, int64_t M, int64_t N, int64_t K, const double *A,
                 const double *B, double *C, double *S) {
    DT_ASSERT(M >= 1 && N >= 1 && K >= 1);
    if ((unsigned)p >= DT_GEMM_F64_PATHS || p == DT_GEMM_F64_AUTO || !dt_gemm_f64_path_runs(p))
        p = dt_gemm_f64_path_auto();
    const dt_gemm_cfg *cfg = &g_cfg[p];
    DT_ASSERT(cfg->kern && DT_GEMM_MC % cfg->mr == 0 && DT_GEMM_NC % cfg->nr == 0);
    /* tiles of DT_GEMM_MT rows, fewer rows where that leaves under 4 tiles a thread */
    const int64_t nt = (N + DT_GEMM_NC - 1) / DT_GEMM_NC, want = 4 * (int64_t)omp_get_max_threads();
    int64_t rows = DT_GEMM_MT;
    while (rows > DT_GEMM_MC && (M + rows - 1) / rows * nt < want) rows /= 2;
    const int64_t mt = (M + rows - 1) / rows;
    const size_t ap_bytes = (size_t)DT_GEMM_MC * DT_GEMM_KC * 2 * sizeof(double);
    const size_t bp_bytes = (size_t)DT_GEMM_NC * DT_GEMM_KC * 2 * sizeof(double);
#pragma omp parallel if (mt * nt > 1)
    {
        /* 64-byte aligned panels: the kernel's vectors then never split a cache line */
        char *mem = dt_xmalloc(ap_bytes + bp_bytes + 64);
        double *ap = (double *)(mem + (64 - (uintptr_t)mem % 64) % 64);
        double *bp = ap + ap_bytes / sizeof(double);
#pragma omp for schedule(dynamic)
        for (int64_t t = 0; t < mt * nt; t++)
            run_block(cfg, M, N, K, A, B, C, S, (t / nt) * rows, (t % nt) * DT_GEMM_NC, rows, ap,
                      bp);
        free(mem);
    }
}
