// gemv_mma.cu — out = A * B for a few rows of A (2 <= M, a handful of 8-row groups) in
// bf16 / f16 storage (DT_ELEM 1 / 2) on the tensor cores: mma.sync.m16n8k16 with FP32
// accumulation, as out^T = B^T A^T, so B's columns fill the MMA's 16-row side and A's rows
// its 8-wide side (no padding of M to 64 or 128 rows as a tile kernel would). Bandwidth
// bound: B (K x N) is read once for every row group of a block. Kernel symbol
// DT_KNAME(dt_gemv_mma): dt_gemv_mma_bf16 / _f16. Plan variant "gemv-mma"
// (backend_cuda_plan_sgemm.c: dt_gemv_mma_geom_make and its rules).
// A: M x K (row stride LDA), B: K x N (row stride LDB), out: M x N (row stride LDO).
//
// A warp owns a strip of 64 output columns and MG groups of 8 rows. Lane l = 4g + t
// (g = l / 4, t = l % 4) reads, for a step of 32 k's starting at ks, B's rows
// ks + 8t .. ks + 8t + 7 at columns nb + 8g .. nb + 8g + 7 (eight 16-byte loads: each load
// instruction of the warp reads four rows of 128 contiguous bytes), and A's row
// 8 mg + g at k = ks + 8t .. ks + 8t + 7 (one 16-byte load a row group). MMA (h, j)
// (h = 0, 1 the halves of the step; j = 0..3 the column pairs of a lane's 8 columns):
//   its 16 k-slots hold k = ks + 8t + 4h + {0, 1, 2, 3} in slots {2t, 2t+1, 2t+8, 2t+9}
//   (a permutation of the step's 32 k's, the same for both operands, so the sum is the
//   same sum); its row g is column ne = nb + 8g + 2j, row g + 8 is column ne + 1, and its
//   8-wide side is A's rows 8 mg .. 8 mg + 7. The A-side fragment (B's values) comes from
//   two 16-byte loads by a byte permute (prmt) each register; the B-side fragment (A's
//   values) is words 2h and 2h + 1 of A's load as they are. Accumulator c0..c3 of
//   MMA (h, j), row group mg: out[8 mg + 2t (+1)][ne (+1)].
// A block is WARPS warps on the same strip and row groups; they split the block's slice
// of K (KC k's) in steps of 32, warp w taking steps w, w + WARPS, ... Every warp runs the
// same number of steps (a step past the slice loads zeros), so every MMA of a block is
// issued by all of its warps, as the host emulation's collective MMA needs. Two steps'
// loads issue before the first MMA (DT_MU), about 64 registers of B in flight a thread.
// Partial sums: over the warps in shared memory in warp order, then (CL > 1, sm_90
// clusters) over the CL blocks of a cluster, which split K into slices of KC (a multiple
// of 32), by rank 0 over distributed shared memory in rank order. The order of every sum
// is fixed (deterministic); the MMA's own order inside a k16 step is the hardware's.
// The output is rounded once to the storage type (cvt.rn) when it is stored.
// Loads: VECA 1: 16-byte loads of A's rows (rows 16-byte aligned, K % 8 == 0), else
// element by element (VECA 0); VECB 1: 16-byte loads of B's rows (rows aligned,
// N % 8 == 0), else element by element (VECB 0). Elements past K, N or M read as zero.
// Grid: (ceil(N / 64) * CL, ceil(M / (8 MG))); blockIdx.x / CL the strip, blockIdx.x % CL
// the K slice, blockIdx.y the row groups. Block: 32 * WARPS threads.
// Macros (compile-time, from the plan): M N K LDA LDB LDO WARPS CL KC MG VECA VECB DT_ELEM.
#include "dt_cuda_common.cuh"

#if DT_ELEM != 1 && DT_ELEM != 2
#error "gemv_mma.cu: bf16 or f16 storage (DT_ELEM 1 or 2)"
#endif
#if MG < 1 || MG > 4 || WARPS < 1 || WARPS > 16 || KC % 32 != 0 || KC < 32 || \
    (CL > 1 && ((CL - 1) * KC >= K || CL * KC < K)) || (CL == 1 && KC < K) || CL < 1 || CL > 8
#error "bad gemv_mma geometry (MG 1..4, WARPS 1..16, KC a multiple of 32 covering K over CL)"
#endif
#if (VECA != 0 && VECA != 1) || (VECB != 0 && VECB != 1) || \
    (VECA == 1 && (K % 8 != 0 || LDA % 8 != 0)) || (VECB == 1 && (N % 8 != 0 || LDB % 8 != 0))
#error "VECA / VECB: 1 needs whole 16-byte chunks (K resp. N and the row stride multiples of 8)"
#endif

#define DT_BLOCK (32 * WARPS)
#define DT_NS (KC / 32)                          /* steps of a block's slice */
#define DT_NIT ((DT_NS + WARPS - 1) / WARPS)     /* steps of every warp */
#define DT_MU (DT_NIT >= 2 ? 2 : 1)              /* steps whose loads issue together */

#if CL > 1
#define DT_GM_CLUSTER __cluster_dims__(CL, 1, 1)
#else
#define DT_GM_CLUSTER
#endif

/* d += a * b: one m16n8k16 MMA (dt_mma16816). tests/cuda/emu's planted fault
 * (DT_EMU_PLANT_ACC_NARROW): the accumulators rounded to the storage type after every MMA,
 * i.e. accumulating in bf16 / f16, which the emulation's tolerance must reject. */
__device__ __forceinline__ void dt_gm_mma(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                          unsigned b1) {
    dt_mma16816(d, a, b0, b1);
#if defined(DT_HOST_EMU) && defined(DT_EMU_PLANT_ACC_NARROW)
    for (int i = 0; i < 4; i++) d[i] = dt_to_f32(dt_from_f32(d[i]));
#endif
}

/* The 8 elements p[0 .. 7] with those at index >= lim read as zero (lim <= 0: all zero),
 * packed two a word (the lower index in the low half). V 1: one 16-byte load, legal where
 * a chunk is whole whenever lim > 0 (the kernel's VECA / VECB rules); V 0: element by
 * element. */
template <int V>
__device__ __forceinline__ uint4 dt_gm_chunk(const dt_t *p, int lim) {
    if (V == 1) return lim > 0 ? __ldg(reinterpret_cast<const uint4 *>(p)) : make_uint4(0u, 0u, 0u, 0u);
    unsigned w[4];
#pragma unroll
    for (int e = 0; e < 4; e++) {
        const unsigned lo = 2 * e < lim ? (unsigned)__ldg(p + 2 * e) : 0u;
        const unsigned hi = 2 * e + 1 < lim ? (unsigned)__ldg(p + 2 * e + 1) : 0u;
        w[e] = lo | (hi << 16);
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}
__device__ __forceinline__ unsigned dt_gm_word(const uint4 &v, int j) {
    return j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : v.w;
}

extern "C" __global__ void __launch_bounds__(DT_BLOCK) DT_GM_CLUSTER
DT_KNAME(dt_gemv_mma)(const dt_t *__restrict__ A, const dt_t *__restrict__ B, dt_t *__restrict__ C) {
    const int lane = (int)threadIdx.x & 31, w = (int)threadIdx.x >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int strip = (int)blockIdx.x / CL, rank = (int)blockIdx.x % CL;
    const int nb = strip * 64, row0 = (int)blockIdx.y * 8 * MG;
    const int k0 = rank * KC;
    const int kend = K - k0 < KC ? K - k0 : KC; /* this slice's length */
    const int ncol = N - (nb + 8 * g);          /* this lane's columns inside N (may be <= 0) */
    const dt_t *bp = B + (long long)k0 * LDB + nb + 8 * g;
    float acc[MG][4][4];
#pragma unroll
    for (int mg = 0; mg < MG; mg++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[mg][j][e] = 0.0f;
#pragma unroll 1
    for (int i0 = 0; i0 < DT_NIT; i0 += DT_MU) {
        uint4 bv[DT_MU][8], av[DT_MU][MG];
#pragma unroll
        for (int u = 0; u < DT_MU; u++) {
            const int ks = ((i0 + u) * WARPS + w) * 32 + 8 * t; /* this lane's first k */
            const int nk = (DT_NIT % DT_MU == 0 || i0 + u < DT_NIT) ? kend - ks : 0; /* valid k's */
#pragma unroll
            for (int i = 0; i < 8; i++) /* B's row ks + i, this lane's 8 columns */
                bv[u][i] = dt_gm_chunk<VECB>(bp + (long long)(ks + i) * LDB, i < nk ? ncol : 0);
#pragma unroll
            for (int mg = 0; mg < MG; mg++) { /* A's row r, this lane's 8 k's */
                const int r = row0 + 8 * mg + g;
                av[u][mg] = dt_gm_chunk<VECA>(A + (long long)r * LDA + k0 + ks, r < M ? nk : 0);
            }
        }
#pragma unroll
        for (int u = 0; u < DT_MU; u++)
#pragma unroll
            for (int h = 0; h < 2; h++)
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    const unsigned x0 = dt_gm_word(bv[u][4 * h], j), x1 = dt_gm_word(bv[u][4 * h + 1], j);
                    const unsigned x2 = dt_gm_word(bv[u][4 * h + 2], j), x3 = dt_gm_word(bv[u][4 * h + 3], j);
                    const unsigned a[4] = {__byte_perm(x0, x1, 0x5410), __byte_perm(x0, x1, 0x7632),
                                           __byte_perm(x2, x3, 0x5410), __byte_perm(x2, x3, 0x7632)};
#pragma unroll
                    for (int mg = 0; mg < MG; mg++)
                        dt_gm_mma(acc[mg][j], a, dt_gm_word(av[u][mg], 2 * h),
                                  dt_gm_word(av[u][mg], 2 * h + 1));
                }
    }
    /* the warps' partials: red[w][q * 32 + lane] (q = 4 j + e), then summed in warp order
     * by output index c = m_local * 64 + n_local (consecutive c: consecutive columns) */
    __shared__ float red[WARPS][512];
#if CL > 1
    __shared__ float part[MG][512];
#endif
#pragma unroll
    for (int mg = 0; mg < MG; mg++) {
        if (mg > 0) __syncthreads(); /* group mg - 1's partials have been read */
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) red[w][(4 * j + e) * 32 + lane] = acc[mg][j][e];
        __syncthreads();
        for (int c = (int)threadIdx.x; c < 512; c += DT_BLOCK) {
            const int ml = c >> 6, nl = c & 63;
            const int q = 4 * ((nl & 7) >> 1) + (((nl & 1) << 1) | (ml & 1));
            const int l = 4 * (nl >> 3) + (ml >> 1);
            float s = 0.0f;
#pragma unroll
            for (int v = 0; v < WARPS; v++) s += red[v][q * 32 + l];
#if CL > 1
            part[mg][c] = s;
#else
            const int r = row0 + 8 * mg + ml, col = nb + nl;
            if (r < M && col < N) C[(long long)r * LDO + col] = dt_from_f32(s); /* the one rounding */
#endif
        }
    }
#if CL > 1
    dt_cl_sync();
    if (rank == 0)
        for (int i = (int)threadIdx.x; i < MG * 512; i += DT_BLOCK) {
            const int mg = i >> 9, c = i & 511;
            const int r = row0 + 8 * mg + (c >> 6), col = nb + (c & 63);
            float s = 0.0f;
#pragma unroll
            for (int v = 0; v < CL; v++) s += dt_cl_ld(&part[mg][c], (unsigned)v);
            if (r < M && col < N) C[(long long)r * LDO + col] = dt_from_f32(s); /* the one rounding */
        }
    dt_cl_sync(); /* rank 0 has read every block's part */
#endif
}
