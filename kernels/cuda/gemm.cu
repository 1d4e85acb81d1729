// gemm.cu — out = A * B, FP32 with FFMA only (no TF32, no tensor cores).
// A: M x K (row stride LDA), B: K x N (row stride LDB), out: M x N (row stride LDO).
//
// Shared-memory tiled SGEMM. Specialization macros (all compile-time):
//   M N K LDA LDB LDO  shape and row strides in elements
//   BM BN BK           block tile (rows of A / columns of B / depth per step)
//   TM TN              outputs per thread (multiples of 4): a thread owns TM/4 x TN/4
//                      4x4 sub-blocks spaced BM/(TM/4) rows and BN/(TN/4) columns apart,
//                      so its shared-memory reads are float4 and conflict-free
//   VECA VECB VECC     4: 16-byte loads/stores of A / B / out (row starts 16B-aligned and
//                      K resp. N divisible by 4); 1: scalar (strided, unaligned views)
// Threads per block: (BM/TM)*(BN/TN). Grid: (ceil(N/BN), ceil(M/BM)). A is stored
// transposed in shared memory (As[k][m]); the next K-step's tiles are prefetched into
// registers while the current one is multiplied. Tails (M, N, K not multiples of the
// tile) are zero-filled on load and masked on store.
#define DT_TX (BN / TN)
#define DT_TY (BM / TM)
#define DT_THREADS (DT_TX * DT_TY)
#define DT_LA (BM * BK / (DT_THREADS * VECA)) /* A vectors each thread loads per step */
#define DT_LB (BK * BN / (DT_THREADS * VECB)) /* B vectors each thread loads per step */
#if (BM * BK) % (DT_THREADS * VECA) != 0 || (BK * BN) % (DT_THREADS * VECB) != 0
#error "tile not evenly divisible among the threads"
#endif
#if TM % 4 != 0 || TN % 4 != 0 || BK % VECA != 0
#error "TM, TN must be multiples of 4 and BK a multiple of VECA"
#endif
#if (VECA == 4 && (K % 4 != 0 || LDA % 4 != 0)) || (VECB == 4 && (N % 4 != 0 || LDB % 4 != 0)) || \
    (VECC == 4 && (N % 4 != 0 || LDO % 4 != 0))
#error "vector width needs aligned rows"
#endif
#define DT_RSTEP (BM / (TM / 4)) /* row distance between a thread's 4-row groups */
#define DT_CSTEP (BN / (TN / 4)) /* column distance between its 4-column groups */

extern "C" __global__ void __launch_bounds__(DT_THREADS)
dt_gemm_f32(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C) {
    __shared__ __align__(16) float As[BK][BM + 4];
    __shared__ __align__(16) float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int tx = tid % DT_TX, ty = tid / DT_TX;
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;

    float pa[DT_LA][VECA], pb[DT_LB][VECB]; /* prefetch registers */
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;

    auto load = [&](int k0) {
#pragma unroll
        for (int l = 0; l < DT_LA; l++) {
            const int idx = tid + l * DT_THREADS;
            const int r = idx / (BK / VECA), kc = (idx % (BK / VECA)) * VECA;
            const int gr = bm + r, gk = k0 + kc;
            if (gr < M && gk < K) {
                const float *src = A + (long long)gr * LDA + gk;
#if VECA == 4
                const float4 t = __ldg(reinterpret_cast<const float4 *>(src));
                pa[l][0] = t.x; pa[l][1] = t.y; pa[l][2] = t.z; pa[l][3] = t.w;
#else
                pa[l][0] = __ldg(src);
#endif
            } else {
#pragma unroll
                for (int e = 0; e < VECA; e++) pa[l][e] = 0.0f;
            }
        }
#pragma unroll
        for (int l = 0; l < DT_LB; l++) {
            const int idx = tid + l * DT_THREADS;
            const int kr = idx / (BN / VECB), c = (idx % (BN / VECB)) * VECB;
            const int gk = k0 + kr, gc = bn + c;
            if (gk < K && gc < N) {
                const float *src = B + (long long)gk * LDB + gc;
#if VECB == 4
                const float4 t = __ldg(reinterpret_cast<const float4 *>(src));
                pb[l][0] = t.x; pb[l][1] = t.y; pb[l][2] = t.z; pb[l][3] = t.w;
#else
                pb[l][0] = __ldg(src);
#endif
            } else {
#pragma unroll
                for (int e = 0; e < VECB; e++) pb[l][e] = 0.0f;
            }
        }
    };
    auto store = [&]() {
#pragma unroll
        for (int l = 0; l < DT_LA; l++) {
            const int idx = tid + l * DT_THREADS;
            const int r = idx / (BK / VECA), kc = (idx % (BK / VECA)) * VECA;
#pragma unroll
            for (int e = 0; e < VECA; e++) As[kc + e][r] = pa[l][e];
        }
#pragma unroll
        for (int l = 0; l < DT_LB; l++) {
            const int idx = tid + l * DT_THREADS;
            const int kr = idx / (BN / VECB), c = (idx % (BN / VECB)) * VECB;
#if VECB == 4
            *reinterpret_cast<float4 *>(&Bs[kr][c]) =
                make_float4(pb[l][0], pb[l][1], pb[l][2], pb[l][3]);
#else
            Bs[kr][c] = pb[l][0];
#endif
        }
    };

    load(0);
    store();
    __syncthreads();
    for (int k0 = 0; k0 < K; k0 += BK) {
        const bool more = k0 + BK < K;
        if (more) load(k0 + BK);
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            float ra[TM], rb[TN];
#pragma unroll
            for (int q = 0; q < TM / 4; q++) {
                const float4 t = *reinterpret_cast<const float4 *>(&As[kk][q * DT_RSTEP + ty * 4]);
                ra[4 * q + 0] = t.x; ra[4 * q + 1] = t.y; ra[4 * q + 2] = t.z; ra[4 * q + 3] = t.w;
            }
#pragma unroll
            for (int q = 0; q < TN / 4; q++) {
                const float4 t = *reinterpret_cast<const float4 *>(&Bs[kk][q * DT_CSTEP + tx * 4]);
                rb[4 * q + 0] = t.x; rb[4 * q + 1] = t.y; rb[4 * q + 2] = t.z; rb[4 * q + 3] = t.w;
            }
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
        }
        __syncthreads();
        if (more) {
            store();
            __syncthreads();
        }
    }

#pragma unroll
    for (int qi = 0; qi < TM / 4; qi++)
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int gr = bm + qi * DT_RSTEP + ty * 4 + i;
            if (gr >= M) continue;
            float *crow = C + (long long)gr * LDO;
#pragma unroll
            for (int qj = 0; qj < TN / 4; qj++) {
                const int gc = bn + qj * DT_CSTEP + tx * 4;
                const float *v = &acc[qi * 4 + i][qj * 4];
#if VECC == 4
                if (gc < N) *reinterpret_cast<float4 *>(crow + gc) = make_float4(v[0], v[1], v[2], v[3]);
#else
#pragma unroll
                for (int e = 0; e < 4; e++)
                    if (gc + e < N) crow[gc + e] = v[e];
#endif
            }
        }
}
