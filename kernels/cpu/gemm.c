/* gemm.c — CPU kernel v2: C (M x N, contiguous) = A (M x K, stride lda) * B (K x N, stride
 * ldb) in FP32, compiled once per instruction set like the row kernels (dt_cpu_isa.h), so
 * the v3 copy is built with -march=x86-64-v3 and the dispatcher (DUALTIME_CPU_ISA, CPUID)
 * picks it; v1 (gemm_v1.c) stays selectable with DUALTIME_CPU_GEMM=v1.
 *
 * Packed path (M >= MR), GotoBLAS/BLIS loop order: for each NC-column slab and KC-deep
 * slice of B the threads together pack B[pc:pc+KC, jc:jc+NC] into NR-wide column panels
 * (zero-padded, 64-byte aligned; the slice lives in L2/L3); the M rows are cut into
 * `mc`-row blocks (a multiple of MR, sized so the blocks split evenly over the threads),
 * each packed by its thread into MR-row panels (L2); the micro-kernel
 * then runs one B micro-panel (KC x NR, 16 KiB: L1) against every A panel of the block.
 * The v3 micro-kernel is 6 x 16 with AVX2+FMA intrinsics: 12 ymm accumulators, two B
 * vectors, one broadcast loaded straight from the packed A panel (v1's `0 + a` broadcast
 * compiled to a scalar add and a register broadcast per row and k), k unrolled by 4, the
 * C tile prefetched before the loop and written straight from the registers (full tiles;
 * edge tiles through a scratch tile clipped to the valid rows/columns). The baseline copy
 * uses the same packing with 4-float vector-extension code, two rows at a time.
 * The first K slice stores C, later ones add to it: every element is written by every
 * call, nothing is read before it is written.
 *
 * Threads: the B pack and the A blocks of each slice are jobs of the kernels' own pool
 * (dt_cpu_pool.h), not OpenMP regions — on a machine whose cores other processes share an
 * OpenMP barrier waits a scheduler slice for a descheduled thread (docs/perf.md, CPU v3);
 * the thread count is still the caller's omp_set_num_threads.
 *
 * Rows path (M < MR, e.g. matrix-vector 1 x N x K): no packing (it would read and write
 * all of B and multiply MR - M rows of padding); each row of C is accumulated in an L1
 * chunk of GEMM_RCHUNK columns by a vectorized axpy over four rows of B at a time (one
 * accumulator load and store per four FMAs), B read once per call, the chunks across
 * threads.
 *
 * FP32 accumulation in k order inside each slice (FMA rounding), slices added in order:
 * within the registry's gemm tolerance (1e-4 of sum |a b|), checked against the FP64
 * oracle by tests/native/test_cpu_kernels for both copies. */
#include <stdlib.h>
#include <string.h>

#include "dt_cpu_isa.h"
#include "dt_cpu_pool.h"

#define MR 6
#define NR 16
#define KC 256
#define MC_MAX 144 /* rows of A per block: 144 x 256 x 4 B = 144 KiB of packed A (L2) */
#define NC 1024
#define GEMM_RCHUNK 512 /* rows path: columns of C per chunk (MR-1 rows: 10 KiB, L1) */
#define GEMM_PAR_MIN_FLOPS 262144.0

/* Packs rows [0, mc) x cols [0, kc) of A (stride lda) into MR-row panels: panel p holds
 * kc groups of MR consecutive floats (rows p*MR .. p*MR+MR-1 at one k), zero-padded. */
static void pack_a(int64_t mc, int64_t kc, const float *restrict a, int64_t lda,
                   float *restrict ap) {
    for (int64_t p = 0; p < mc; p += MR) {
        const int64_t mr = mc - p < MR ? mc - p : MR;
        const float *ar = a + p * lda;
        if (mr == MR) {
            for (int64_t kk = 0; kk < kc; kk++)
                for (int64_t r = 0; r < MR; r++) ap[kk * MR + r] = ar[r * lda + kk];
        } else {
            for (int64_t kk = 0; kk < kc; kk++) {
                for (int64_t r = 0; r < mr; r++) ap[kk * MR + r] = ar[r * lda + kk];
                for (int64_t r = mr; r < MR; r++) ap[kk * MR + r] = 0.0f;
            }
        }
        ap += kc * MR;
    }
}

/* Packs column panel q (NR columns starting at q*NR, nc columns valid) of the kc x nc
 * slice of B into kc rows of NR floats, zero-padded. */
static void pack_b_panel(int64_t q, int64_t nc, int64_t kc, const float *restrict b,
                         int64_t ldb, float *restrict bp) {
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

/* Writes the MR x NR scratch tile t into C (clipped to mr x nr): stores when first, else
 * adds. */
DT_CPU_INLINE void tile_out(const float t[MR][NR], float *restrict c, int64_t ldc,
                            int64_t mr, int64_t nr, int first) {
    for (int64_t r = 0; r < mr; r++) {
        float *cr = c + r * ldc;
        if (first)
            for (int64_t j = 0; j < nr; j++) cr[j] = t[r][j];
        else
            for (int64_t j = 0; j < nr; j++) cr[j] += t[r][j];
    }
}

#if DT_CPU_ISA_V3
/* C tile (mr x nr at c) (+)= A panel (kc x MR) * B panel (kc x NR), AVX2 + FMA. */
DT_CPU_INLINE void micro(int64_t kc, const float *restrict ap, const float *restrict bp,
                         float *restrict c, int64_t ldc, int64_t mr, int64_t nr, int first) {
    __m256 acc[MR][2];
    for (int r = 0; r < MR; r++) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    for (int64_t r = 0; r < mr; r++) {
        _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)(c + r * ldc + NR - 1), _MM_HINT_T0);
    }
#pragma GCC unroll 4
    for (int64_t kk = 0; kk < kc; kk++) {
        const __m256 b0 = _mm256_load_ps(bp + kk * NR), b1 = _mm256_load_ps(bp + kk * NR + 8);
        const float *ak = ap + kk * MR;
        for (int r = 0; r < MR; r++) {
            const __m256 av = _mm256_broadcast_ss(ak + r);
            acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
            acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
        }
    }
    if (mr == MR && nr == NR) {
        for (int r = 0; r < MR; r++) {
            float *cr = c + r * ldc;
            if (!first) {
                acc[r][0] = _mm256_add_ps(acc[r][0], _mm256_loadu_ps(cr));
                acc[r][1] = _mm256_add_ps(acc[r][1], _mm256_loadu_ps(cr + 8));
            }
            _mm256_storeu_ps(cr, acc[r][0]);
            _mm256_storeu_ps(cr + 8, acc[r][1]);
        }
        return;
    }
    float t[MR][NR] __attribute__((aligned(32)));
    for (int r = 0; r < MR; r++) {
        _mm256_store_ps(t[r], acc[r][0]);
        _mm256_store_ps(t[r] + 8, acc[r][1]);
    }
    tile_out((const float(*)[NR])t, c, ldc, mr, nr, first);
}
#else
typedef float dt_v4f __attribute__((vector_size(16)));

/* The same tile with 4-float (SSE) vectors, two rows at a time: 8 accumulators, four B
 * vectors and one broadcast fit the 16 SSE registers. */
DT_CPU_INLINE void micro(int64_t kc, const float *restrict ap, const float *restrict bp,
                         float *restrict c, int64_t ldc, int64_t mr, int64_t nr, int first) {
    float t[MR][NR] __attribute__((aligned(16)));
    for (int r0 = 0; r0 < MR; r0 += 2) {
        dt_v4f acc[2][4];
        for (int r = 0; r < 2; r++)
            for (int q = 0; q < 4; q++) acc[r][q] = (dt_v4f){0};
        for (int64_t kk = 0; kk < kc; kk++) {
            dt_v4f bv[4];
            memcpy(bv, bp + kk * NR, sizeof bv);
            const float *ak = ap + kk * MR + r0;
            for (int r = 0; r < 2; r++) {
                const float s = ak[r];
                const dt_v4f av = {s, s, s, s};
                for (int q = 0; q < 4; q++) acc[r][q] += av * bv[q];
            }
        }
        memcpy(t[r0], acc, sizeof acc);
    }
    tile_out((const float(*)[NR])t, c, ldc, mr, nr, first);
}
#endif

/* C block (mc x nc at c, stride ldc) (+)= packed A block * packed B slice: each B
 * micro-panel (L1) against every A panel of the block. */
static void macro(int64_t mc, int64_t nc, int64_t kc, const float *restrict ap,
                  const float *restrict bp, float *restrict c, int64_t ldc, int first) {
    for (int64_t q = 0; q * NR < nc; q++) {
        const int64_t nr = nc - q * NR < NR ? nc - q * NR : NR;
        const float *bq = bp + q * kc * NR;
        for (int64_t p = 0; p < mc; p += MR) {
            const int64_t mr = mc - p < MR ? mc - p : MR;
            micro(kc, ap + (p / MR) * kc * MR, bq, c + p * ldc + q * NR, ldc, mr, nr, first);
        }
    }
}

/* 64-byte aligned allocation of n floats; aborts on out of memory (not an input error). */
static float *alloc_floats(int64_t n) {
    const size_t bytes = ((size_t)n * sizeof(float) + 63) / 64 * 64;
    float *p = aligned_alloc(64, bytes);
    if (!p) abort();
    return p;
}

/* One call's operands and the slice being worked on, shared by the pool items. */
typedef struct gemm_job {
    int64_t m, n, k, lda, ldb, mc_blk, ap_floats; /* ap_floats: one slot's A buffer */
    const float *a, *b;
    float *out, *bp, *ap; /* ap: one A buffer per pool slot */
    int64_t jc, nc, pc, kc, npanels;
} gemm_job;

#define GEMM_PACK_PANELS 4 /* B panels per pack item */

/* Pool item: packs B panels [item*4, item*4+4) of the current slice. */
static void pack_b_item(void *ctx, int64_t item, int slot) {
    (void)slot;
    const gemm_job *j = ctx;
    const int64_t q1 = (item + 1) * GEMM_PACK_PANELS;
    for (int64_t q = item * GEMM_PACK_PANELS; q < q1 && q < j->npanels; q++)
        pack_b_panel(q, j->nc, j->kc, j->b + j->pc * j->ldb + j->jc, j->ldb, j->bp);
}

/* Pool item: A block `item` of the current slice, packed into the slot's buffer, times
 * the packed B slice into C. */
static void block_item(void *ctx, int64_t item, int slot) {
    const gemm_job *j = ctx;
    const int64_t ic = item * j->mc_blk, mc = j->m - ic < j->mc_blk ? j->m - ic : j->mc_blk;
    float *ap = j->ap + slot * j->ap_floats;
    pack_a(mc, j->kc, j->a + ic * j->lda + j->pc, j->lda, ap);
    macro(mc, j->nc, j->kc, ap, j->bp, j->out + ic * j->n + j->jc, j->n, j->pc == 0);
}

/* The packed loop nest: for each slab and slice, the B pack, then the A blocks, each a
 * pool job (dt_cpu_pool.h: the calling thread never waits for a worker that has not
 * started, so a descheduled thread costs no scheduler slice, as an OpenMP barrier does). */
static void gemm_nest(gemm_job *j, int threads) {
    const int64_t nblocks = (j->m + j->mc_blk - 1) / j->mc_blk;
    for (j->jc = 0; j->jc < j->n; j->jc += NC) {
        j->nc = j->n - j->jc < NC ? j->n - j->jc : NC;
        j->npanels = (j->nc + NR - 1) / NR;
        for (j->pc = 0; j->pc < j->k; j->pc += KC) {
            j->kc = j->k - j->pc < KC ? j->k - j->pc : KC;
            dt_cpu_pool_run(threads, (j->npanels + GEMM_PACK_PANELS - 1) / GEMM_PACK_PANELS,
                            pack_b_item, j);
            dt_cpu_pool_run(threads, nblocks, block_item, j);
        }
    }
}

/* Rows per A block: at most MC_MAX, a multiple of MR, and a block count that is a
 * multiple of the thread count where that keeps blocks of at least 4 panels. */
static int64_t block_rows(int64_t m, int threads) {
    int64_t nb = (m + MC_MAX - 1) / MC_MAX;
    if (threads > 1) {
        const int64_t nb2 = (nb + threads - 1) / threads * threads;
        if ((m + nb2 - 1) / nb2 >= 4 * MR) nb = nb2;
    }
    const int64_t rows = (m + nb - 1) / nb;
    return (rows + MR - 1) / MR * MR;
}

/* One chunk (columns j0 .. j0+nn) of the rows path: m < MR rows of C accumulated in L1. */
static void rows_chunk(int64_t m, int64_t n, int64_t k, const float *restrict a,
                       int64_t lda, const float *restrict b, int64_t ldb,
                       float *restrict out, int64_t j0) {
    const int64_t nn = n - j0 < GEMM_RCHUNK ? n - j0 : GEMM_RCHUNK;
    float acc[MR - 1][GEMM_RCHUNK] __attribute__((aligned(64)));
    for (int64_t r = 0; r < m; r++) memset(acc[r], 0, (size_t)nn * sizeof(float));
    int64_t kk = 0;
    for (; kk + 4 <= k; kk += 4) { /* four rows of B per pass over the accumulators */
        const float *restrict b0 = b + kk * ldb + j0, *restrict b1 = b0 + ldb,
                              *restrict b2 = b1 + ldb, *restrict b3 = b2 + ldb;
        for (int64_t r = 0; r < m; r++) {
            const float *ak = a + r * lda + kk;
            const float a0 = ak[0], a1 = ak[1], a2 = ak[2], a3 = ak[3];
            float *restrict ar = acc[r];
#pragma omp simd
            for (int64_t j = 0; j < nn; j++) {
                float s = ar[j];
                s += a0 * b0[j];
                s += a1 * b1[j];
                s += a2 * b2[j];
                s += a3 * b3[j];
                ar[j] = s;
            }
        }
    }
    for (; kk < k; kk++) {
        const float *restrict br = b + kk * ldb + j0;
        for (int64_t r = 0; r < m; r++) {
            const float av = a[r * lda + kk];
            float *restrict ar = acc[r];
#pragma omp simd
            for (int64_t j = 0; j < nn; j++) ar[j] += av * br[j];
        }
    }
    for (int64_t r = 0; r < m; r++) memcpy(out + r * n + j0, acc[r], (size_t)nn * sizeof(float));
}

/* Pool item: rows-path chunk `item`. */
static void rows_item(void *ctx, int64_t item, int slot) {
    (void)slot;
    const gemm_job *j = ctx;
    rows_chunk(j->m, j->n, j->k, j->a, j->lda, j->b, j->ldb, j->out, item * GEMM_RCHUNK);
}

void DT_CPU_KFN(dt_cpu_gemm)(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                             const float *b, int64_t ldb, float *out) {
    const int par = (double)m * (double)n * (double)k >= GEMM_PAR_MIN_FLOPS;
    const int threads = par ? omp_get_max_threads() : 1;
    gemm_job j = {.m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .a = a, .b = b, .out = out};
    if (m < MR) {
        dt_cpu_pool_run(threads, (n + GEMM_RCHUNK - 1) / GEMM_RCHUNK, rows_item, &j);
        return;
    }
    const int64_t nc_max = n < NC ? n : NC, kc_max = k < KC ? k : KC;
    const int slots = threads < DT_CPU_POOL_MAX ? threads : DT_CPU_POOL_MAX;
    j.mc_blk = block_rows(m, threads);
    j.ap_floats = (j.mc_blk * KC + 15) / 16 * 16; /* each slot's buffer 64-byte aligned */
    j.bp = alloc_floats((nc_max + NR - 1) / NR * NR * kc_max);
    j.ap = alloc_floats(j.ap_floats * slots);
    gemm_nest(&j, slots);
    free(j.ap);
    free(j.bp);
}
