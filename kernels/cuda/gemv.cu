// gemv.cu — out = A * B for thin shapes (FFMA only, no TF32 / tensor cores): one output
// dimension is 1 (or M is a few rows), so the product is a matrix-vector product (or a few)
// and bandwidth- (or latency-) bound. Storage f32, bf16 or f16 (DT_ELEM 0 / 1 / 2, dt_cuda_common.cuh): loads widen to
// FP32, every product and sum is FP32 (fmaf), the output is rounded once to the storage
// type (cvt.rn) when it is stored. Kernel symbol DT_KNAME(dt_gemv): dt_gemv_f32 / _bf16 /
// _f16.
// A: M x K (row stride LDA), B: K x N (row stride LDB), out: M x N (row stride LDO).
// Plan variant "gemv" (backend_cuda_plan_sgemm.c chooses it and the geometry).
//
// DT_VW: elements of one 16-byte load, 4 (f32) or 8 (bf16/f16); VECA / VECB are DT_VW
// (16-byte loads of the walked operand: float4, or uint4 unpacked 8 halves at a time)
// or 1 (scalar: unaligned views, K resp. N not a multiple of DT_VW).
// GV_MODE 1 (N == 1): out[m] = dot(A[m, :], B[:, 0]). TPR threads per row (a warp or a
//   block), RPB = BLOCK / TPR rows a block; a thread reads VECA-wide chunks of A's row
//   (16-byte loads when VECA = DT_VW), lanes interleaved so a warp reads 512 contiguous
//   bytes per step; a thread's loads are written in chunks of DT_CH = 8 (with B's: 16)
//   ahead of the chunk's FFMAs (ptxas still starts the FFMAs after ~6 of them: the SASS
//   order, docs/perf.md), so many of a warp's loads are in flight at once; a chunk keeps
//   the loaded words as they are (8 x 16 bytes an operand) and widens them only at its
//   FFMAs. B's column (K elements) is read through the read-only cache with the same
//   index (VECB = DT_VW: B is contiguous, LDB == 1, 16-byte aligned; else scalar
//   B[k * LDB]).
// GV_MODE 2 (few rows: M == 1, or M small): out[m, n] = sum_k A[m, k] * B[k, n] for the
//   GV_MR rows row0 .. row0 + GV_MR - 1 of a block (row0 = blockIdx.y * GV_MR), so B is
//   read ceil(M / GV_MR) times in all, once where GV_MR = M. A block is TPR column
//   threads x KT = BLOCK / TPR k-rows; each column thread owns VECB consecutive columns
//   (16-byte loads of B's rows when VECB = DT_VW) of its GV_MR rows (GV_MR x VECB FP32
//   accumulators); the k-rows of the block interleave in steps of GV_KG consecutive k's,
//   so a warp reads 32 / TPR x GV_KG rows of TPR * VECB contiguous columns a step, and
//   takes A[m, k .. k + GV_KG - 1] of each of its rows as one load (GV_KG elements,
//   4 to 16 bytes, the same address across the warp's column threads: a broadcast from
//   L1). DT_CH steps' loads issue before the first FFMA (M == 1: 8; more rows: fewer, so
//   at most ~48 registers of loaded words are in flight). Partial sums are reduced over
//   the k-rows in shared memory (FP32), one row at a time.
// CL > 1 (sm_90 clusters, __cluster_dims__): the CL blocks of a cluster split K into
//   slices of KC (a multiple of DT_VW, so every slice of an aligned row starts aligned),
//   each reduces its slice, and the cluster's rank-0 block adds the CL FP32 partials over
//   distributed shared memory (one cluster barrier, then one more so no block's shared
//   memory goes away while it is read). CL == 1: KC == K.
// Grid: mode 1 ceil(M / RPB) * CL blocks; mode 2 (ceil(N / (TPR * VECB)) * CL,
// ceil(M / GV_MR)) blocks (blockIdx.x / CL the group, blockIdx.x % CL the K slice).
// Block: BLOCK threads.
// Accumulation is FP32 (fmaf), per thread in sequence over its k (per vector element),
// then a fixed pairwise tree over the vector elements and a fixed-order tree over the
// lanes: the order does not depend on timing (deterministic), and is the same for every
// storage type.
// Macros (all compile-time, from the plan): M N K LDA LDB LDO GV_MODE BLOCK TPR CL KC
// VECA VECB, GV_MR and GV_KG (mode 2; default 1), DT_ELEM (default 0).
#include "dt_cuda_common.cuh"

#define DT_VW (DT_ELEM == 0 ? 4 : 8) /* elements of a 16-byte load */
#ifndef GV_MR
#define GV_MR 1 /* mode 2: rows of A (and of out) a block */
#endif
#ifndef GV_KG
#define GV_KG 1 /* mode 2: consecutive k's a thread takes a step (one load of each A row) */
#endif
#if GV_MODE == 1
#define DT_GV_VEC VECA /* elements a load of the walked operand (A's row) */
#else
#define DT_GV_VEC VECB /* elements a load of the walked operand (B's rows) */
#endif
#define DT_RPB (BLOCK / TPR)
#if GV_MODE == 1
#define DT_NIT ((KC + TPR * DT_GV_VEC - 1) / (TPR * DT_GV_VEC)) /* loads a thread */
#else
#define DT_KT (BLOCK / TPR)                                      /* k-rows a block */
#define DT_NIT ((KC + DT_KT * GV_KG - 1) / (DT_KT * GV_KG))      /* steps a thread */
#endif
#if GV_MODE == 2 && (GV_MR > 1 || GV_KG > 1)
/* steps whose loads a thread issues before it uses the first: ~8 of B's rows, but at
 * most ~48 registers of loaded words in flight (a step holds GV_KG loads of B, 4 words
 * each at VECB = DT_VW, and GV_MR loads of A of GV_KG elements) */
#define DT_CH_W (GV_KG * (VECB == DT_VW ? 4 : 1) + GV_MR * ((GV_KG * (DT_ELEM == 0 ? 4 : 2) + 3) / 4))
#define DT_CH_A (8 / GV_KG < 48 / DT_CH_W ? 8 / GV_KG : 48 / DT_CH_W)
#ifdef GV_CH /* the plan's (DUALTIME_GEMV_CH, for A/B timing) */
#define DT_CH GV_CH
#else
#define DT_CH (DT_CH_A < 1 ? 1 : DT_CH_A)
#endif
#else
#define DT_CH 8 /* loads a thread issues before it uses the first */
#endif
#if GV_MODE == 1
/* every slice is KC long and the loads cover it exactly: no bound check in the loop */
#define DT_EXACT (CL * KC == K && DT_NIT * TPR * DT_GV_VEC == KC)
#else
#define DT_EXACT (CL * KC == K && DT_NIT * DT_KT * GV_KG == KC)
#endif
#if (GV_MODE == 1 && N != 1) || (GV_MODE != 1 && GV_MODE != 2) || GV_MR < 1 || GV_MR > M || \
    (GV_MODE == 1 && (GV_MR != 1 || GV_KG != 1))
#error "GV_MODE 1 needs N == 1 (and GV_MR = GV_KG = 1); GV_MODE 2 needs 1 <= GV_MR <= M"
#endif
#if GV_MODE == 2 && (GV_KG != 1 && GV_KG != 2 && GV_KG != 4 && GV_KG != 8 || \
                     GV_KG * (DT_ELEM == 0 ? 4 : 2) > 16 || K % GV_KG != 0 || \
                     LDA % GV_KG != 0 || KC % GV_KG != 0)
#error "GV_KG: 1, 2, 4 or 8 elements, at most 16 bytes, dividing K, LDA and KC"
#endif
#if BLOCK % TPR != 0 || BLOCK > 1024 || (GV_MODE == 1 && (TPR < 32 || TPR % 32 != 0)) || \
    (GV_MODE == 1 && CL > 1 && TPR != BLOCK) || \
    (CL > 1 && (KC % DT_VW != 0 || (CL - 1) * KC >= K || CL * KC < K)) || (CL == 1 && KC != K)
#error "bad gemv geometry"
#endif
#if (VECA != 1 && VECA != DT_VW) || (VECB != 1 && VECB != DT_VW) || \
    (GV_MODE == 2 && VECA != 1) || (GV_MODE == 1 && VECB == DT_VW && VECA != DT_VW)
#error "VECA / VECB: 1 or DT_VW (mode 2: VECA 1; mode 1: VECB wide only with VECA)"
#endif
#if (GV_MODE == 1 && VECA == DT_VW && (K % DT_VW != 0 || LDA % DT_VW != 0)) || \
    (GV_MODE == 1 && VECB == DT_VW && (LDB != 1 || K % DT_VW != 0)) || \
    (GV_MODE == 2 && VECB == DT_VW && (N % DT_VW != 0 || LDB % DT_VW != 0))
#error "vector width needs aligned rows"
#endif

/* One 16-byte load as the loaded words (dt_gv_v), kept so until the chunk's FFMAs, and
 * widened to DT_VW floats there (dt_gv_unpack). */
#if DT_ELEM == 0
typedef float4 dt_gv_v;
__device__ __forceinline__ dt_gv_v dt_gv_zero() { return make_float4(0.0f, 0.0f, 0.0f, 0.0f); }
__device__ __forceinline__ void dt_gv_unpack(const dt_gv_v &t, float (&f)[DT_VW]) {
    f[0] = t.x; f[1] = t.y; f[2] = t.z; f[3] = t.w;
}
#else
typedef uint4 dt_gv_v;
__device__ __forceinline__ dt_gv_v dt_gv_zero() { return make_uint4(0u, 0u, 0u, 0u); }
__device__ __forceinline__ void dt_gv_unpack(const dt_gv_v &t, float (&f)[DT_VW]) { dt_unpack8(t, f); }
#endif
__device__ __forceinline__ dt_gv_v dt_gv_ld16(const dt_t *p) {
    return __ldg(reinterpret_cast<const dt_gv_v *>(p));
}
/* One step of a thread's accumulation: FP32. tests/cuda/emu's planted fault
 * (DT_EMU_PLANT_ACC_NARROW): the accumulator rounded to the storage type at every step,
 * i.e. accumulating in bf16 / f16, which the emulation's tolerance must reject. */
#if defined(DT_HOST_EMU) && defined(DT_EMU_PLANT_ACC_NARROW)
#define DT_GV_ACC(x) dt_to_f32(dt_from_f32(x))
#else
#define DT_GV_ACC(x) (x)
#endif
/* the fixed pairwise tree over a thread's DT_GV_VEC accumulators */
__device__ __forceinline__ float dt_gv_tree(const float (&acc)[DT_GV_VEC]) {
#if DT_GV_VEC == 8
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
#elif DT_GV_VEC == 4
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
#else
    return acc[0];
#endif
}

#if CL > 1
#define DT_GV_CLUSTER __cluster_dims__(CL, 1, 1)
#else
#define DT_GV_CLUSTER
#endif

#if GV_MODE == 1
extern "C" __global__ void __launch_bounds__(BLOCK) DT_GV_CLUSTER
DT_KNAME(dt_gemv)(const dt_t *__restrict__ A, const dt_t *__restrict__ B, dt_t *__restrict__ C) {
    const int lane = (int)threadIdx.x % TPR;
    const int grp = (int)blockIdx.x / CL, rank = (int)blockIdx.x % CL;
    const int row = grp * DT_RPB + (int)threadIdx.x / TPR;
    const int k0 = rank * KC;
    const int kend = K - k0 < KC ? K - k0 : KC; /* this slice's length */
    float acc[DT_GV_VEC];
#pragma unroll
    for (int e = 0; e < DT_GV_VEC; e++) acc[e] = 0.0f;
    if (row < M) {
        const dt_t *a = A + (long long)row * LDA + k0;
        const dt_t *b = B + (long long)k0 * LDB;
        /* chunks of DT_CH loads: all of a chunk's loads issue before its first FFMA (issue
         * is in order: an FFMA waiting on a load would hold back the loads behind it) */
#pragma unroll 1
        for (int i0 = 0; i0 < DT_NIT; i0 += DT_CH) {
#if VECA == DT_VW
            dt_gv_v xv[DT_CH];
#if VECB == DT_VW
            dt_gv_v yv[DT_CH];
#else
            dt_t ys[DT_CH][DT_VW];
#endif
#else
            dt_t xs[DT_CH], ys[DT_CH];
#endif
#pragma unroll
            for (int j = 0; j < DT_CH; j++) {
                const int k = ((i0 + j) * TPR + lane) * DT_GV_VEC; /* inside the slice */
                const bool ok = (DT_NIT % DT_CH == 0 || i0 + j < DT_NIT) && (DT_EXACT || k < kend);
#if VECA == DT_VW
                xv[j] = dt_gv_zero();
#if VECB == DT_VW
                yv[j] = dt_gv_zero();
#else
#pragma unroll
                for (int e = 0; e < DT_VW; e++) ys[j][e] = (dt_t)0;
#endif
                if (ok) { /* one branch for both operands' loads */
                    xv[j] = dt_gv_ld16(a + k);
#if VECB == DT_VW
                    yv[j] = dt_gv_ld16(b + k);
#else
#pragma unroll
                    for (int e = 0; e < DT_VW; e++) ys[j][e] = __ldg(b + (long long)(k + e) * LDB);
#endif
                }
#else
                xs[j] = ok ? __ldg(a + k) : (dt_t)0;
                ys[j] = ok ? __ldg(b + (long long)k * LDB) : (dt_t)0;
#endif
            }
#pragma unroll
            for (int j = 0; j < DT_CH; j++) {
#if VECA == DT_VW
                float x[DT_VW], y[DT_VW];
                dt_gv_unpack(xv[j], x);
#if VECB == DT_VW
                dt_gv_unpack(yv[j], y);
#else
#pragma unroll
                for (int e = 0; e < DT_VW; e++) y[e] = dt_to_f32(ys[j][e]);
#endif
#pragma unroll
                for (int e = 0; e < DT_VW; e++) acc[e] = DT_GV_ACC(fmaf(x[e], y[e], acc[e]));
#else
                acc[0] = DT_GV_ACC(fmaf(dt_to_f32(xs[j]), dt_to_f32(ys[j]), acc[0]));
#endif
            }
        }
    }
    float v = dt_gv_tree(acc);
    /* the row's lanes: a warp (or TPR < 32 lanes of one) by shuffles, then the warps */
#pragma unroll
    for (int o = (TPR < 32 ? TPR : 32) / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
#if TPR > 32
    __shared__ float red[TPR / 32];
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
    __syncthreads();
    v = 0.0f;
#pragma unroll
    for (int w = 0; w < TPR / 32; w++) v += red[w];
#endif
#if CL > 1
    __shared__ float part;
    if (threadIdx.x == 0) part = v;
    dt_cl_sync();
    if (rank == 0 && threadIdx.x == 0 && row < M) {
        float s = 0.0f;
#pragma unroll
        for (int r = 0; r < CL; r++) s += dt_cl_ld(&part, (unsigned)r);
        C[(long long)row * LDO] = dt_from_f32(s); /* the one rounding to the storage type */
    }
    dt_cl_sync(); /* rank 0 has read every block's part */
#else
    if (lane == 0 && row < M) C[(long long)row * LDO] = dt_from_f32(v);
#endif
}
#else /* GV_MODE == 2 */
/* GV_KG consecutive k's of A's rows as one load (DT_KGB bytes), kept as 32-bit words
 * (DT_KGW of them; a 2-byte element alone in the low half of one) until its FFMAs */
#define DT_KGB (GV_KG * (DT_ELEM == 0 ? 4 : 2))
#define DT_KGW (DT_KGB < 4 ? 1 : DT_KGB / 4)
__device__ __forceinline__ void dt_gv_ldk(const dt_t *p, unsigned (&w)[DT_KGW]) {
#if DT_KGB == 16
    const uint4 t = __ldg(reinterpret_cast<const uint4 *>(p));
    w[0] = t.x; w[1] = t.y; w[2] = t.z; w[3] = t.w;
#elif DT_KGB == 8
    const uint2 t = __ldg(reinterpret_cast<const uint2 *>(p));
    w[0] = t.x; w[1] = t.y;
#elif DT_KGB == 4
    w[0] = __ldg(reinterpret_cast<const unsigned *>(p));
#else
    w[0] = (unsigned)__ldg(p);
#endif
}
/* element q (0 <= q < GV_KG) of such a load, widened */
__device__ __forceinline__ float dt_gv_kelem(const unsigned (&w)[DT_KGW], int q) {
#if DT_ELEM == 0
    return __uint_as_float(w[q]);
#else
    return dt_to_f32((unsigned short)((w[q / 2] >> (16 * (q % 2))) & 0xffffu));
#endif
}
extern "C" __global__ void __launch_bounds__(BLOCK) DT_GV_CLUSTER
DT_KNAME(dt_gemv)(const dt_t *__restrict__ A, const dt_t *__restrict__ B, dt_t *__restrict__ C) {
    const int cx = (int)threadIdx.x % TPR, ky = (int)threadIdx.x / TPR;
    const int grp = (int)blockIdx.x / CL, rank = (int)blockIdx.x % CL;
    const int row0 = (int)blockIdx.y * GV_MR; /* this block's rows: row0 .. row0 + GV_MR - 1 */
    const int col = (grp * TPR + cx) * VECB;
    const int k0 = rank * KC;
    const int kend = K - k0 < KC ? K - k0 : KC;
    float acc[GV_MR][VECB];
#pragma unroll
    for (int r = 0; r < GV_MR; r++)
#pragma unroll
        for (int e = 0; e < VECB; e++) acc[r][e] = 0.0f;
    if (col < N) {
        const dt_t *a = A + (long long)row0 * LDA + k0; /* A's rows: contiguous along k */
        const dt_t *b = B + (long long)k0 * LDB + col;
#pragma unroll 1
        for (int i0 = 0; i0 < DT_NIT; i0 += DT_CH) { /* chunks: loads first (see mode 1) */
            unsigned xw[DT_CH][GV_MR][DT_KGW];
#if VECB == DT_VW
            dt_gv_v yv[DT_CH][GV_KG];
#else
            dt_t ys[DT_CH][GV_KG];
#endif
#pragma unroll
            for (int j = 0; j < DT_CH; j++) {
                const int k = ((i0 + j) * DT_KT + ky) * GV_KG;
                const bool ok = (DT_NIT % DT_CH == 0 || i0 + j < DT_NIT) && (DT_EXACT || k < kend);
#pragma unroll
                for (int r = 0; r < GV_MR; r++) {
#pragma unroll
                    for (int w = 0; w < DT_KGW; w++) xw[j][r][w] = 0u;
                    /* rows past M (the last row group of M % GV_MR != 0) read nothing */
                    if (ok && (M % GV_MR == 0 || row0 + r < M))
                        dt_gv_ldk(a + (long long)r * LDA + k, xw[j][r]);
                }
#pragma unroll
                for (int q = 0; q < GV_KG; q++) {
#if VECB == DT_VW
                    yv[j][q] = ok ? dt_gv_ld16(b + (long long)(k + q) * LDB) : dt_gv_zero();
#else
                    ys[j][q] = ok ? __ldg(b + (long long)(k + q) * LDB) : (dt_t)0;
#endif
                }
            }
#pragma unroll
            for (int j = 0; j < DT_CH; j++)
#pragma unroll
                for (int q = 0; q < GV_KG; q++) { /* k + q, in order: each sum runs along k */
                    float y[VECB];
#if VECB == DT_VW
                    dt_gv_unpack(yv[j][q], y);
#else
                    y[0] = dt_to_f32(ys[j][q]);
#endif
#pragma unroll
                    for (int r = 0; r < GV_MR; r++) {
                        const float x = dt_gv_kelem(xw[j][r], q);
#pragma unroll
                        for (int e = 0; e < VECB; e++) acc[r][e] = DT_GV_ACC(fmaf(x, y[e], acc[r][e]));
                    }
                }
        }
    }
    /* reduce over the KT k-rows, one row at a time: red[ky][cx * VECB + e], then rows
     * 0..KT-1 in order (the same tree for every row and every geometry) */
    __shared__ float red[DT_KT][TPR * VECB];
#if CL > 1
    __shared__ float part[GV_MR][TPR * VECB];
#endif
#pragma unroll /* a constant r: acc[r] stays in registers */
    for (int r = 0; r < GV_MR; r++) {
        if (r > 0) __syncthreads(); /* row r - 1's sums have been read */
#pragma unroll
        for (int e = 0; e < VECB; e++) red[ky][cx * VECB + e] = acc[r][e];
        __syncthreads();
        for (int c = (int)threadIdx.x; c < TPR * VECB; c += BLOCK) {
            float s = 0.0f;
#pragma unroll 8
            for (int t = 0; t < DT_KT; t++) s += red[t][c];
#if CL > 1
            part[r][c] = s;
#else
            const int gc = grp * TPR * VECB + c;
            if (gc < N && (M % GV_MR == 0 || row0 + r < M))
                C[(long long)(row0 + r) * LDO + gc] = dt_from_f32(s); /* the one rounding */
#endif
        }
    }
#if CL > 1
    dt_cl_sync();
    if (rank == 0)
        for (int i = (int)threadIdx.x; i < GV_MR * TPR * VECB; i += BLOCK) {
            const int r = i / (TPR * VECB), c = i % (TPR * VECB);
            const int gc = grp * TPR * VECB + c;
            float s = 0.0f;
#pragma unroll
            for (int t = 0; t < CL; t++) s += dt_cl_ld(&part[r][c], (unsigned)t);
            if (gc < N && (M % GV_MR == 0 || row0 + r < M))
                C[(long long)(row0 + r) * LDO + gc] = dt_from_f32(s); /* the one rounding */
        }
    dt_cl_sync(); /* rank 0 has read every block's part */
#endif
}
#endif
