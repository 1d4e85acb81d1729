// gemm_tc1.cu — out = A * B for bf16 / f16 storage (DT_ELEM 1 / 2) on tensor cores:
// mma.sync.aligned.m16n8k16 (inline PTX) with FP32 accumulation; the output is rounded
// once to the storage type. A: M x K (row stride LDA), B: K x N (row stride LDB), out:
// M x N (row stride LDO). Variant "tc1": simple and correct, not tuned (no ldmatrix,
// no cp.async, no TMA/wgmma; a later issue makes it fast).
//
// Block: 128 threads = 4 warps in 2 x 2, block tile 64 x 64, K-step 32 (two k16 MMA
// steps). Each warp owns a 32 x 32 output tile: 2 (m16) x 4 (n8) MMA tiles, 32 FP32
// accumulators per thread. Per K-step the block stages A (64 x 32) and B (32 x 64) in
// shared memory, zero-filled outside the matrices (tails in M, N and K of any size);
// fragments are read from shared memory in the PTX ISA's m16n8k16 layouts (A row, B
// col: B pairs along k are two 16-bit reads). Stores are masked per element.
// Specialization macros: M N K LDA LDB LDO, DT_ELEM, VECA / VECB: 8 = 16-byte global
// loads (row starts 16-byte aligned, K resp. N % 8 == 0), 1 = scalar (views, tails).
// Grid: (ceil(N/64), ceil(M/64)).
#include "dt_cuda_common.cuh"

#if DT_ELEM != 1 && DT_ELEM != 2
#error "gemm_tc1 is for bf16 (DT_ELEM=1) and f16 (DT_ELEM=2)"
#endif
#define TC_BM 64
#define TC_BN 64
#define TC_BK 32
#define TC_THREADS 128
#define TC_APITCH (TC_BK + 8) /* halves; +8 keeps rows 16-byte aligned, shifts banks */
#define TC_BPITCH (TC_BN + 8)
#if (VECA == 8 && K % 8 != 0) || (VECB == 8 && N % 8 != 0)
#error "VECA/VECB=8 need K resp. N % 8 == 0"
#endif

// Stages the A tile (rows bm.., columns k0..) and the B tile (rows k0.., columns bn..).
__device__ __forceinline__ void tc_stage(const dt_t *__restrict__ A, const dt_t *__restrict__ B,
                                         dt_t (*As)[TC_APITCH], dt_t (*Bs)[TC_BPITCH], int bm,
                                         int bn, int k0, int tid) {
#if VECA == 8
    for (int i = tid; i < TC_BM * TC_BK / 8; i += TC_THREADS) {
        const int r = i / (TC_BK / 8), c = (i % (TC_BK / 8)) * 8;
        const int gr = bm + r, gc = k0 + c;
        uint4 v = make_uint4(0u, 0u, 0u, 0u);
        if (gr < M && gc < K)
            v = __ldg(reinterpret_cast<const uint4 *>(A + (long long)gr * LDA + gc));
        *reinterpret_cast<uint4 *>(&As[r][c]) = v;
    }
#else
    for (int i = tid; i < TC_BM * TC_BK; i += TC_THREADS) {
        const int r = i / TC_BK, c = i % TC_BK;
        const int gr = bm + r, gc = k0 + c;
        As[r][c] = gr < M && gc < K ? __ldg(A + (long long)gr * LDA + gc) : (dt_t)0;
    }
#endif
#if VECB == 8
    for (int i = tid; i < TC_BK * TC_BN / 8; i += TC_THREADS) {
        const int r = i / (TC_BN / 8), c = (i % (TC_BN / 8)) * 8;
        const int gr = k0 + r, gc = bn + c;
        uint4 v = make_uint4(0u, 0u, 0u, 0u);
        if (gr < K && gc < N)
            v = __ldg(reinterpret_cast<const uint4 *>(B + (long long)gr * LDB + gc));
        *reinterpret_cast<uint4 *>(&Bs[r][c]) = v;
    }
#else
    for (int i = tid; i < TC_BK * TC_BN; i += TC_THREADS) {
        const int r = i / TC_BN, c = i % TC_BN;
        const int gr = k0 + r, gc = bn + c;
        Bs[r][c] = gr < K && gc < N ? __ldg(B + (long long)gr * LDB + gc) : (dt_t)0;
    }
#endif
}

extern "C" __global__ void __launch_bounds__(TC_THREADS)
DT_KNAME(dt_gemm_tc1)(const dt_t *__restrict__ A, const dt_t *__restrict__ B,
                      dt_t *__restrict__ C) {
    __shared__ __align__(16) dt_t As[TC_BM][TC_APITCH];
    __shared__ __align__(16) dt_t Bs[TC_BK][TC_BPITCH];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int g = lane >> 2, t = lane & 3; /* groupID, thread in group (PTX ISA names) */
    const int bm = blockIdx.y * TC_BM, bn = blockIdx.x * TC_BN;
    const int wm = (warp >> 1) * 32, wn = (warp & 1) * 32;
    float acc[2][4][4];
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += TC_BK) {
        tc_stage(A, B, As, Bs, bm, bn, k0, tid);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TC_BK; kk += 16) {
            unsigned a[2][4];
#pragma unroll
            for (int i = 0; i < 2; i++) {
                const int r = wm + i * 16 + g;
                a[i][0] = *reinterpret_cast<const unsigned *>(&As[r][kk + 2 * t]);
                a[i][1] = *reinterpret_cast<const unsigned *>(&As[r + 8][kk + 2 * t]);
                a[i][2] = *reinterpret_cast<const unsigned *>(&As[r][kk + 2 * t + 8]);
                a[i][3] = *reinterpret_cast<const unsigned *>(&As[r + 8][kk + 2 * t + 8]);
            }
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const int c = wn + j * 8 + g, k = kk + 2 * t;
                const unsigned b0 = (unsigned)Bs[k][c] | ((unsigned)Bs[k + 1][c] << 16);
                const unsigned b1 = (unsigned)Bs[k + 8][c] | ((unsigned)Bs[k + 9][c] << 16);
#pragma unroll
                for (int i = 0; i < 2; i++) dt_mma16816(acc[i][j], a[i], b0, b1);
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int r = bm + wm + i * 16 + g + (e >= 2 ? 8 : 0);
                const int c = bn + wn + j * 8 + 2 * t + (e & 1);
                if (r < M && c < N) C[(long long)r * LDO + c] = dt_from_f32(acc[i][j][e]);
            }
}
