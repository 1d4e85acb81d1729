// gemm_v2.cu — out = A * B, FP32 with FFMA only (no TF32, no tensor cores): the "v2"
// SIMT SGEMM (plan variant v2, the default; v1 is gemm.cu).
// A: M x K (row stride LDA), B: K x N (row stride LDB), out: M x N (row stride LDO).
//
// Classic register-blocked SGEMM, 256 threads per block:
//   - block tile BM x BN, depth BK per step; each thread owns TM x TN outputs, split into
//     (TM/4) x (TN/4) quads of 4x4 so every shared-memory read is one LDS.128;
//   - warps tile the block as (BM/(4*TM)) x (BN/(8*TN)); inside a warp the lanes form a
//     4 x 8 grid (ly, lx), a thread's row quads are 16 rows apart and its column quads 32
//     columns apart, so one LDS.128 of a warp touches 64 contiguous bytes of A and 128 of
//     B (one wavefront each, broadcast across the other lane dimension);
//   - A is stored transposed in shared memory (As[k][m], rows padded by 4 floats, groups
//     of 8 depths shifted by ASWZ below so the transposing stores are conflict-free), so
//     both operands are read with LDS.128;
//   - two shared-memory buffers: step t multiplies buffer t&1 while the loads of step t+1
//     are in flight into registers; they are stored to the other buffer after the
//     multiply, then ONE barrier per step;
//   - global loads: VECA/VECB = 4 → one float4 per load (row starts 16-byte aligned and
//     K resp. N divisible by 4); 1 → scalar loads mapped so a warp reads consecutive
//     elements of a row (coalesced; any base alignment and stride, i.e. views). Both fill
//     the same shared-memory layout, so the multiply loop is identical.
// Tails: M, N, K need not be multiples of the tile: loads outside the matrix are
// predicated off (zero fill), stores masked; full dimensions compile the checks away.
//
// KTAIL_EXACT=1 (the plan's shape geometry, K % BK != 0): the last K-step multiplies
// only its K % BK valid depths instead of a full BK of zero fill (4097x4095x257 at BK=16:
// 257 depths instead of 272).
// EPI_STAGE=1 (the plan's shape geometry, scalar C: N % 4 != 0): the epilogue stages each
// warp's rows through shared memory so a store writes 32 consecutive floats of a row
// (4-5 sectors) instead of 8 scattered pairs in each of 4 rows (16 sectors).
// KSPLIT > 1 (the plan's shape geometry where the tiles are too few for the SMs, sm_90):
// K split over a cluster of KSPLIT blocks, partial tiles summed over DSMEM (below).
// Macros (all compile-time, from the plan): M N K LDA LDB LDO, BM BN BK TM TN,
// VECA VECB VECC, KTAIL_EXACT, EPI_STAGE, KSPLIT (default 0 / 1). Grid: (ceil(N/BN),
// ceil(M/BM), KSPLIT), block: 256.
#define DT_THREADS 256
#define DT_LY 4                 /* lane rows of a warp */
#define DT_LX 8                 /* lane columns of a warp */
#define DT_WTM (DT_LY * TM)     /* warp tile rows */
#define DT_WTN (DT_LX * TN)     /* warp tile columns */
#define DT_WARPS_N (BN / DT_WTN)
#define DT_QSM (DT_LY * 4)      /* row distance between a thread's row quads */
#define DT_QSN (DT_LX * 4)      /* column distance between its column quads */
#define DT_LDSA (BM + 4)        /* padded row of the transposed A tile */
#define DT_KT ((K + BK - 1) / BK)
#define DT_FULL_M (M % BM == 0)
#define DT_FULL_N (N % BN == 0)
#define DT_FULL_K (K % BK == 0)
#ifndef KTAIL_EXACT
#define KTAIL_EXACT 0
#endif
#define DT_KREM (KTAIL_EXACT ? K % BK : 0) /* depths of the last step (0: a full step) */
#ifndef EPI_STAGE
#define EPI_STAGE 0
#endif
/* global -> shared mapping: load l of a thread covers row r0 + l*RS of its tile and the
 * same column(s) for every l (THREADS is a multiple of the vectors per tile row) */
#define DT_AV (BK / VECA)                       /* vectors per A-tile row */
#define DT_NA (BM * BK / (DT_THREADS * VECA))   /* A loads per thread per step */
#define DT_RSA (DT_THREADS / DT_AV)             /* A-tile rows between loads l, l+1 */
#define DT_BV (BN / VECB)                       /* vectors per B-tile row */
#define DT_NB (BK * BN / (DT_THREADS * VECB))   /* B loads per thread per step */
#define DT_RSB (DT_THREADS / DT_BV)             /* B-tile rows between loads */

#if TM % 4 != 0 || TN % 4 != 0 || BM % DT_WTM != 0 || BN % DT_WTN != 0 || \
    (BM / DT_WTM) * (BN / DT_WTN) * 32 != DT_THREADS
#error "tile shape does not match 256 threads of 4x8-lane warps with TMxTN per thread"
#endif
#if BK % VECA != 0 || DT_THREADS % DT_AV != 0 || DT_THREADS % DT_BV != 0 || DT_NA < 1 || \
    DT_NB < 1 || DT_NA * DT_THREADS * VECA != BM * BK || DT_NB * DT_THREADS * VECB != BK * BN
#error "tile not evenly divisible among the threads"
#endif
#if EPI_STAGE && (VECC != 1 || (DT_THREADS / 32) * DT_LY * DT_WTN > 2 * BK * DT_LDSA || DT_WTN % 32 != 0)
#error "EPI_STAGE is for scalar C and needs the warps' staging rows to fit in As"
#endif
#if (VECA == 4 && (K % 4 != 0 || LDA % 4 != 0)) || (VECB == 4 && (N % 4 != 0 || LDB % 4 != 0)) || \
    (VECC == 4 && (N % 4 != 0 || LDO % 4 != 0))
#error "vector width needs aligned rows"
#endif

/* ASWZ (the plan: 1 on the 128x64 and 64x64 tiles, 0 on 128x128 where it measured 3% slower;
 * DUALTIME_GEMM_ASWZ=0|1 forces): the A tile's depth rows k >= 8 are
 * shifted by (k / 8) DT_ASH floats: element (k, m) of buffer buf is at
 * As[buf][DT_AOFF(k) + m]. A warp's transposing store writes DT_AR = 32 / DT_AV consecutive
 * rows m at DT_AV depths k (VECA apart); with a padded row of LDSA = 4 (mod 32) floats the
 * bank of (k, m) is 4 (k mod 8) + m, so depths k and k + 8 collide: 2-way at BK = 16, 4-way
 * at BK = 32 (ncu, session 15: 33% of the shared-store wavefronts of 4096^3 were
 * conflicts). A shift of DT_AR floats a group of 8 depths puts them on distinct banks. It
 * is a compile-time offset of each depth the multiply reads (kk is a constant after
 * unrolling) and part of each thread's store base, so it costs no register; it keeps the
 * 16-byte quads the multiply reads aligned only when DT_AR >= 4, i.e. VECA = 4 (at VECA =
 * 1, views, the stores keep their conflicts). tests/cuda/emu/emu_gemm_v2.cpp counts the
 * bank ways of the stores and reads from these macros. */
#ifndef ASWZ
#define ASWZ 1
#endif
#define DT_AR (32 / DT_AV) /* rows of a warp's A store */
#if ASWZ && DT_AR >= 4
#define DT_ASH DT_AR
#else
#define DT_ASH 0
#endif
#if BK % 8 != 0 || DT_AV > 32
#error "BK: a multiple of 8, at most 32 vectors a row"
#endif
#define DT_AOFF(k) ((k) * DT_LDSA + ((k) >> 3) * DT_ASH)  /* depth row k of a buffer */
#define DT_ABUF (BK * DT_LDSA + (BK / 8 - 1) * DT_ASH)     /* floats of one A buffer */

/* prefetch phases a K-step: BK = 32 loads the next tile in two halves (at depths 0 and
 * BK/2, the first half stored at BK/2), so the registers in flight stay those of BK = 16 */
#define DT_PH (BK > 16 ? 2 : 1)
#define DT_NAP (DT_NA / DT_PH) /* A loads a phase */
#define DT_NBP (DT_NB / DT_PH) /* B loads a phase */
#if DT_NA % DT_PH != 0 || DT_NB % DT_PH != 0
#error "loads not divisible into the prefetch phases"
#endif
/* both buffers of both tiles; over the 48 KiB of static shared memory (BK = 32: 66560
 * bytes) they are the dynamic shared memory the plan asks for (shared_bytes) */
#define DT_SMEM_BYTES ((2 * DT_ABUF + 2 * BK * BN) * 4)

/* KSPLIT > 1 (split-K, sm_90): the KSPLIT blocks of a cluster (__cluster_dims__(1, 1,
 * KSPLIT), grid z = KSPLIT) take consecutive runs of DT_KTS K-steps of the same output
 * tile; each leaves its partial tile in its shared memory (the buffers, free after the
 * last barrier, hold BM x BN floats), one cluster barrier, then block r sums rows
 * [r BM / KSPLIT, (r + 1) BM / KSPLIT) of every block's partial in rank order over DSMEM
 * and stores them; a second barrier keeps every block's shared memory until all have read
 * it. The sum's order is fixed: deterministic. */
#ifndef KSPLIT
#define KSPLIT 1
#endif
#if KSPLIT > 1
#include "dt_cuda_common.cuh" /* dt_cl_sync, dt_cl_ld */
#define DT_KTS ((DT_KT + KSPLIT - 1) / KSPLIT) /* K-steps a block */
#define DT_SPLIT_FLOATS (2 * DT_ABUF + 2 * BK * BN > BM * BN ? 2 * DT_ABUF + 2 * BK * BN : BM * BN)
#if (KSPLIT != 2 && KSPLIT != 4 && KSPLIT != 8) || (KSPLIT - 1) * DT_KTS >= DT_KT || \
    BM % KSPLIT != 0 || DT_SMEM_BYTES > 48 * 1024 || DT_SPLIT_FLOATS * 4 > 48 * 1024 || EPI_STAGE
#error "KSPLIT: 2, 4 or 8 blocks, each with K-steps, BM divisible, static shared memory, no EPI_STAGE"
#endif
#define DT_V2_CLUSTER __cluster_dims__(1, 1, KSPLIT)
#else
#define DT_V2_CLUSTER
#endif

extern "C" __global__ void __launch_bounds__(DT_THREADS, 2) DT_V2_CLUSTER
dt_gemm_v2_f32(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C) {
#if DT_SMEM_BYTES > 48 * 1024 || KSPLIT > 1
#if KSPLIT > 1 /* the buffers, then (after the loop) the partial tile, in one array */
    __shared__ __align__(16) float dt_v2_smem[DT_SPLIT_FLOATS];
#elif defined(DT_HOST_EMU) /* tests/cuda/emu: one block at a time, a static buffer */
    alignas(16) static float dt_v2_smem[DT_SMEM_BYTES / 4];
#else
    extern __shared__ __align__(16) float dt_v2_smem[];
#endif
    float(*As)[DT_ABUF] = reinterpret_cast<float(*)[DT_ABUF]>(dt_v2_smem);
    float(*Bs)[BK][BN] = reinterpret_cast<float(*)[BK][BN]>(dt_v2_smem + 2 * DT_ABUF);
#else
    __shared__ __align__(16) float As[2][DT_ABUF];
    __shared__ __align__(16) float Bs[2][BK][BN];
#endif
    const int tid = threadIdx.x;
    const int warp = tid >> 5, lane = tid & 31;
    const int wm = warp / DT_WARPS_N, wn = warp % DT_WARPS_N;
    const int ly = lane / DT_LX, lx = lane % DT_LX;
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    const int arow = wm * DT_WTM + ly * 4; /* first row (in the tile) of this thread */
    const int bcol = wn * DT_WTN + lx * 4; /* first column (in the tile) */

    /* this thread's global-load coordinates (in the tile) */
    const int ar0 = tid / DT_AV, ak = (tid % DT_AV) * VECA;
    const int bk0 = tid / DT_BV, bc = (tid % DT_BV) * VECB;
#if KSPLIT > 1
    const int rank = (int)blockIdx.z;
    const int t0 = rank * DT_KTS, t1 = t0 + DT_KTS < DT_KT ? t0 + DT_KTS : DT_KT;
#else
    const int t0 = 0, t1 = DT_KT; /* this block's K-steps */
#endif
    const float *pa = A + (long long)(bm + ar0) * LDA + ak + (long long)t0 * BK;
    const float *pb = B + (long long)(bk0 + t0 * BK) * LDB + (bn + bc);

    float ga[DT_NAP][VECA], gb[DT_NBP][VECB]; /* next step's tiles (a phase), in flight */
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;

    /* phase ph of step t's tiles: loads l = ph*NAP .. (ph+1)*NAP-1 of A (NBP of B); pa, pb
     * advance by one step after the last phase (k0 = t*BK is only used for the tail checks) */
    auto load = [&](int t, int ph) {
        const int k0 = t * BK;
#pragma unroll
        for (int i = 0; i < DT_NAP; i++) {
            const int l = ph * DT_NAP + i;
            const bool ok = (DT_FULL_M || bm + ar0 + l * DT_RSA < M) && (DT_FULL_K || k0 + ak < K);
            const float *src = pa + (long long)l * DT_RSA * LDA;
#if VECA == 4
            float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (ok) v = __ldg(reinterpret_cast<const float4 *>(src));
            ga[i][0] = v.x; ga[i][1] = v.y; ga[i][2] = v.z; ga[i][3] = v.w;
#else
            ga[i][0] = ok ? __ldg(src) : 0.0f;
#endif
        }
#pragma unroll
        for (int i = 0; i < DT_NBP; i++) {
            const int l = ph * DT_NBP + i;
            const bool ok = (DT_FULL_K || k0 + bk0 + l * DT_RSB < K) && (DT_FULL_N || bn + bc < N);
            const float *src = pb + (long long)l * DT_RSB * LDB;
#if VECB == 4
            float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (ok) v = __ldg(reinterpret_cast<const float4 *>(src));
            gb[i][0] = v.x; gb[i][1] = v.y; gb[i][2] = v.z; gb[i][3] = v.w;
#else
            gb[i][0] = ok ? __ldg(src) : 0.0f;
#endif
        }
        if (ph == DT_PH - 1) {
            pa += BK;
            pb += (long long)BK * LDB;
        }
    };
    auto store = [&](int buf, int ph) {
#pragma unroll
        for (int i = 0; i < DT_NAP; i++)
#pragma unroll
            for (int e = 0; e < VECA; e++)
                As[buf][DT_AOFF(ak + e) + ar0 + (ph * DT_NAP + i) * DT_RSA] = ga[i][e];
#pragma unroll
        for (int i = 0; i < DT_NBP; i++) {
            const int l = ph * DT_NBP + i;
#if VECB == 4
            *reinterpret_cast<float4 *>(&Bs[buf][bk0 + l * DT_RSB][bc]) =
                make_float4(gb[i][0], gb[i][1], gb[i][2], gb[i][3]);
#else
            Bs[buf][bk0 + l * DT_RSB][bc] = gb[i][0];
#endif
        }
    };

    /* one depth kk of the tile in buffer buf: TM x TN outer product, LDS.128 reads */
    auto mult = [&](int buf, int kk) {
        float ra[TM], rb[TN];
#pragma unroll
        for (int q = 0; q < TM / 4; q++) {
            const float4 v = *reinterpret_cast<const float4 *>(&As[buf][DT_AOFF(kk) + arow + q * DT_QSM]);
            ra[4 * q + 0] = v.x; ra[4 * q + 1] = v.y; ra[4 * q + 2] = v.z; ra[4 * q + 3] = v.w;
        }
#pragma unroll
        for (int q = 0; q < TN / 4; q++) {
            const float4 v = *reinterpret_cast<const float4 *>(&Bs[buf][kk][bcol + q * DT_QSN]);
            rb[4 * q + 0] = v.x; rb[4 * q + 1] = v.y; rb[4 * q + 2] = v.z; rb[4 * q + 3] = v.w;
        }
#pragma unroll
        for (int i = 0; i < TM; i++)
#pragma unroll
            for (int j = 0; j < TN; j++) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
    };

#pragma unroll
    for (int ph = 0; ph < DT_PH; ph++) {
        load(t0, ph);
        store(0, ph);
    }
    __syncthreads();
#pragma unroll 1
    for (int t = t0; t < t1; t++) {
        const int cur = (t - t0) & 1;
        const bool more = t + 1 < t1;
        /* KTAIL_EXACT: the last step multiplies only the K % BK depths it holds (the
         * rest of its tile is zero fill); a compile-time trip count either way. The
         * other buffer was last read in step t-1, before the previous barrier, so a
         * phase of step t+1 may be stored into it at any depth of step t. */
        if (DT_KREM && t == DT_KT - 1) {
#pragma unroll
            for (int kk = 0; kk < DT_KREM; kk++) mult(cur, kk);
        } else {
#pragma unroll
            for (int kk = 0; kk < BK; kk++) {
                if (more && kk % (BK / DT_PH) == 0) {
                    const int ph = kk / (BK / DT_PH);
                    if (ph > 0) store(cur ^ 1, ph - 1);
                    load(t + 1, ph);
                }
                mult(cur, kk);
            }
        }
        if (more) store(cur ^ 1, DT_PH - 1);
        __syncthreads();
    }

#if KSPLIT > 1
    float *T = dt_v2_smem; /* this block's partial tile, BM x BN, row pitch BN */
#pragma unroll
    for (int qi = 0; qi < TM / 4; qi++)
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int qj = 0; qj < TN / 4; qj++) {
                const float *v = &acc[qi * 4 + i][qj * 4];
                *reinterpret_cast<float4 *>(&T[(arow + qi * DT_QSM + i) * BN + bcol + qj * DT_QSN]) =
                    make_float4(v[0], v[1], v[2], v[3]);
            }
    dt_cl_sync();
    for (int e = tid; e < BM / KSPLIT * BN; e += DT_THREADS) {
        const int r = rank * (BM / KSPLIT) + e / BN, c = e % BN;
        float sum = 0.0f;
#pragma unroll
        for (int q = 0; q < KSPLIT; q++) sum += dt_cl_ld(&T[r * BN + c], (unsigned)q);
        const int gr = bm + r, gc = bn + c;
        if ((DT_FULL_M || gr < M) && (DT_FULL_N || gc < N)) C[(long long)gr * LDO + gc] = sum;
    }
    dt_cl_sync(); /* every block has read every partial */
#elif EPI_STAGE
    /* scalar C (VECC = 1): each (qi, i) of the warp's 4 rows x WTN columns goes through
     * its own 4 x WTN floats of As (free after the last barrier), then out as 32
     * consecutive floats of one row a store (128 bytes: 4-5 sectors, not 16) */
    float *W = &As[0][0] + warp * (DT_LY * DT_WTN);
#pragma unroll
    for (int qi = 0; qi < TM / 4; qi++)
#pragma unroll
        for (int i = 0; i < 4; i++) {
#pragma unroll
            for (int qj = 0; qj < TN / 4; qj++) {
                const float *v = &acc[qi * 4 + i][qj * 4];
                *reinterpret_cast<float4 *>(&W[ly * DT_WTN + qj * DT_QSN + lx * 4]) =
                    make_float4(v[0], v[1], v[2], v[3]);
            }
            __syncwarp();
#pragma unroll
            for (int r = 0; r < DT_LY; r++)
#pragma unroll
                for (int c0 = 0; c0 < DT_WTN; c0 += 32) {
                    const int gr = bm + wm * DT_WTM + r * 4 + qi * DT_QSM + i;
                    const int gc = bn + wn * DT_WTN + c0 + lane;
                    if ((DT_FULL_M || gr < M) && (DT_FULL_N || gc < N))
                        C[(long long)gr * LDO + gc] = W[r * DT_WTN + c0 + lane];
                }
            __syncwarp(); /* W is rewritten by the next (qi, i) */
        }
#else
#pragma unroll
    for (int qi = 0; qi < TM / 4; qi++)
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int gr = bm + arow + qi * DT_QSM + i;
            if (!DT_FULL_M && gr >= M) continue;
            float *crow = C + (long long)gr * LDO;
#pragma unroll
            for (int qj = 0; qj < TN / 4; qj++) {
                const int gc = bn + bcol + qj * DT_QSN;
                const float *v = &acc[qi * 4 + i][qj * 4];
#if VECC == 4
                if (DT_FULL_N || gc < N)
                    *reinterpret_cast<float4 *>(crow + gc) = make_float4(v[0], v[1], v[2], v[3]);
#else
#pragma unroll
                for (int e = 0; e < 4; e++)
                    if (DT_FULL_N || gc + e < N) crow[gc + e] = v[e];
#endif
            }
        }
#endif
}
