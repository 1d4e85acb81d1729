// gemv.cu — out = A * B for thin FP32 shapes (FFMA only, no TF32): one output dimension
// is 1, so the product is a matrix-vector product and bandwidth- (or latency-) bound.
// A: M x K (row stride LDA), B: K x N (row stride LDB), out: M x N (row stride LDO).
// Plan variant "gemv" (backend_cuda_plan_sgemm.c chooses it and the geometry).
//
// GV_MODE 1 (N == 1): out[m] = dot(A[m, :], B[:, 0]). TPR threads per row (a warp or a
//   block), RPB = BLOCK / TPR rows a block; a thread reads VECA-wide chunks of A's row
//   (16-byte loads when VECA = 4), lanes interleaved so a warp reads 512 contiguous bytes
//   per step; a thread's loads are written in chunks of DT_CH = 8 (with B's: 16) ahead
//   of the chunk's FFMAs (ptxas still starts the FFMAs after ~6 of them: the SASS order,
//   docs/perf.md), so many of a warp's loads are in flight at once. B's column
//   (K floats) is read through the read-only cache with the same index (VECB = 4: B is
//   contiguous, LDB == 1, 16-byte aligned; else scalar B[k * LDB]).
// GV_MODE 2 (M == 1): out[n] = sum_k A[0, k] * B[k, n]. A block is TPR column threads x
//   KT = BLOCK / TPR k-rows; each column thread owns VECB consecutive columns (16-byte
//   loads of B's rows when VECB = 4), the k-rows of the block interleave, so a warp reads
//   32 / TPR rows of TPR * VECB contiguous columns per load; partial sums are reduced over
//   the k-rows in shared memory.
// CL > 1 (sm_90 clusters, __cluster_dims__): the CL blocks of a cluster split K into
//   slices of KC (a multiple of 4), each reduces its slice, and the cluster's rank-0 block
//   adds the CL partials over distributed shared memory (one cluster barrier, then one
//   more so no block's shared memory goes away while it is read). CL == 1: KC == K.
// Grid: mode 1 ceil(M / RPB) * CL blocks; mode 2 ceil(N / (TPR * VECB)) * CL blocks
// (blockIdx.x / CL the group, blockIdx.x % CL the K slice). Block: BLOCK threads.
// Accumulation is FP32 (fmaf), per thread in sequence over its k, then a fixed-order
// tree over the lanes: the order does not depend on timing (deterministic).
// Macros (all compile-time, from the plan): M N K LDA LDB LDO GV_MODE BLOCK TPR CL KC
// VECA VECB.
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
#define DT_NIT ((KC + DT_KT - 1) / DT_KT)                        /* loads a thread */
#endif
#define DT_CH 8 /* loads a thread issues before it uses the first */
#if GV_MODE == 1
/* every slice is KC long and the loads cover it exactly: no bound check in the loop */
#define DT_EXACT (CL * KC == K && DT_NIT * TPR * DT_GV_VEC == KC)
#else
#define DT_EXACT (CL * KC == K && DT_NIT * DT_KT == KC)
#endif
#if (GV_MODE == 1 && N != 1) || (GV_MODE == 2 && M != 1) || (GV_MODE != 1 && GV_MODE != 2)
#error "GV_MODE 1 needs N == 1, GV_MODE 2 needs M == 1"
#endif
#if BLOCK % TPR != 0 || BLOCK > 1024 || (GV_MODE == 1 && (TPR < 32 || TPR % 32 != 0)) || \
    (GV_MODE == 1 && CL > 1 && TPR != BLOCK) || \
    (CL > 1 && (KC % 4 != 0 || (CL - 1) * KC >= K || CL * KC < K)) || (CL == 1 && KC != K)
#error "bad gemv geometry"
#endif
#if (GV_MODE == 1 && VECA == 4 && (K % 4 != 0 || LDA % 4 != 0)) || \
    (GV_MODE == 1 && VECB == 4 && (LDB != 1 || K % 4 != 0)) || \
    (GV_MODE == 2 && VECB == 4 && (N % 4 != 0 || LDB % 4 != 0))
#error "vector width needs aligned rows"
#endif

#if CL > 1
#define DT_GV_CLUSTER __cluster_dims__(CL, 1, 1)
#ifdef DT_HOST_EMU /* tests/cuda/emu (run_emu_gemv.sh): the CPU stand-ins of dt_emu.hpp */
__device__ __forceinline__ void dt_gv_cluster_sync() { dt_emu_cluster_sync(); }
__device__ __forceinline__ float dt_gv_ld_dsmem(const float *p, unsigned rank) {
    return *(const float *)dt_emu_remote(p, rank);
}
#else
__device__ __forceinline__ void dt_gv_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// *p in the shared memory of block `rank` of this cluster.
__device__ __forceinline__ float dt_gv_ld_dsmem(const float *p, unsigned rank) {
    const unsigned a = (unsigned)__cvta_generic_to_shared(p);
    unsigned ra;
    float v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(ra) : "r"(a), "r"(rank));
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(ra) : "memory");
    return v;
}
#endif /* DT_HOST_EMU */
#else
#define DT_GV_CLUSTER
#endif

#if GV_MODE == 1
extern "C" __global__ void __launch_bounds__(BLOCK) DT_GV_CLUSTER
dt_gemv_f32(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C) {
    const int lane = (int)threadIdx.x % TPR;
    const int grp = (int)blockIdx.x / CL, rank = (int)blockIdx.x % CL;
    const int row = grp * DT_RPB + (int)threadIdx.x / TPR;
    const int k0 = rank * KC;
    const int kend = K - k0 < KC ? K - k0 : KC; /* this slice's length */
    float acc[DT_GV_VEC];
#pragma unroll
    for (int e = 0; e < DT_GV_VEC; e++) acc[e] = 0.0f;
    if (row < M) {
        const float *a = A + (long long)row * LDA + k0;
        const float *b = B + (long long)k0 * LDB;
        /* chunks of DT_CH loads: all of a chunk's loads issue before its first FFMA (issue
         * is in order: an FFMA waiting on a load would hold back the loads behind it) */
#pragma unroll 1
        for (int i0 = 0; i0 < DT_NIT; i0 += DT_CH) {
            float x[DT_CH][DT_GV_VEC], y[DT_CH][DT_GV_VEC];
#pragma unroll
            for (int j = 0; j < DT_CH; j++) {
                const int k = ((i0 + j) * TPR + lane) * DT_GV_VEC; /* inside the slice */
                const bool ok = (DT_NIT % DT_CH == 0 || i0 + j < DT_NIT) && (DT_EXACT || k < kend);
#if VECA == 4
                float4 xv = make_float4(0.0f, 0.0f, 0.0f, 0.0f), yv = xv;
                if (ok) {
                    xv = __ldg(reinterpret_cast<const float4 *>(a + k));
#if VECB == 4
                    yv = __ldg(reinterpret_cast<const float4 *>(b + k));
#else
                    yv = make_float4(__ldg(b + (long long)k * LDB),
                                     __ldg(b + (long long)(k + 1) * LDB),
                                     __ldg(b + (long long)(k + 2) * LDB),
                                     __ldg(b + (long long)(k + 3) * LDB));
#endif
                }
                x[j][0] = xv.x; x[j][1] = xv.y; x[j][2] = xv.z; x[j][3] = xv.w;
                y[j][0] = yv.x; y[j][1] = yv.y; y[j][2] = yv.z; y[j][3] = yv.w;
#else
                x[j][0] = ok ? __ldg(a + k) : 0.0f;
                y[j][0] = ok ? __ldg(b + (long long)k * LDB) : 0.0f;
#endif
            }
#pragma unroll
            for (int j = 0; j < DT_CH; j++)
#pragma unroll
                for (int e = 0; e < DT_GV_VEC; e++) acc[e] = fmaf(x[j][e], y[j][e], acc[e]);
        }
    }
    float v = acc[0];
#if DT_GV_VEC == 4
    v = (acc[0] + acc[1]) + (acc[2] + acc[3]);
#endif
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
    dt_gv_cluster_sync();
    if (rank == 0 && threadIdx.x == 0 && row < M) {
        float s = 0.0f;
#pragma unroll
        for (int r = 0; r < CL; r++) s += dt_gv_ld_dsmem(&part, (unsigned)r);
        C[(long long)row * LDO] = s;
    }
    dt_gv_cluster_sync(); /* rank 0 has read every block's part */
#else
    if (lane == 0 && row < M) C[(long long)row * LDO] = v;
#endif
}
#else /* GV_MODE == 2 */
extern "C" __global__ void __launch_bounds__(BLOCK) DT_GV_CLUSTER
dt_gemv_f32(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C) {
    const int cx = (int)threadIdx.x % TPR, ky = (int)threadIdx.x / TPR;
    const int grp = (int)blockIdx.x / CL, rank = (int)blockIdx.x % CL;
    const int col = (grp * TPR + cx) * VECB;
    const int k0 = rank * KC;
    const int kend = K - k0 < KC ? K - k0 : KC;
    float acc[VECB];
#pragma unroll
    for (int e = 0; e < VECB; e++) acc[e] = 0.0f;
    if (col < N) {
        const float *a = A + k0; /* A's only row: contiguous along k */
        const float *b = B + (long long)k0 * LDB + col;
#pragma unroll 1
        for (int i0 = 0; i0 < DT_NIT; i0 += DT_CH) { /* chunks: loads first (see mode 1) */
            float x[DT_CH], y[DT_CH][VECB];
#pragma unroll
            for (int j = 0; j < DT_CH; j++) {
                const int k = (i0 + j) * DT_KT + ky;
                const bool ok = (DT_NIT % DT_CH == 0 || i0 + j < DT_NIT) && (DT_EXACT || k < kend);
                x[j] = ok ? __ldg(a + k) : 0.0f;
#if VECB == 4
                float4 yv = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                if (ok) yv = __ldg(reinterpret_cast<const float4 *>(b + (long long)k * LDB));
                y[j][0] = yv.x; y[j][1] = yv.y; y[j][2] = yv.z; y[j][3] = yv.w;
#else
                y[j][0] = ok ? __ldg(b + (long long)k * LDB) : 0.0f;
#endif
            }
#pragma unroll
            for (int j = 0; j < DT_CH; j++)
#pragma unroll
                for (int e = 0; e < VECB; e++) acc[e] = fmaf(x[j], y[j][e], acc[e]);
        }
    }
    /* reduce over the KT k-rows: red[ky][cx * VECB + e], then rows 0..KT-1 in order */
    __shared__ float red[DT_KT][TPR * VECB];
#pragma unroll
    for (int e = 0; e < VECB; e++) red[ky][cx * VECB + e] = acc[e];
    __syncthreads();
#if CL > 1
    __shared__ float part[TPR * VECB];
#endif
    for (int c = (int)threadIdx.x; c < TPR * VECB; c += BLOCK) {
        float s = 0.0f;
#pragma unroll 8
        for (int r = 0; r < DT_KT; r++) s += red[r][c];
#if CL > 1
        part[c] = s;
#else
        const int gc = grp * TPR * VECB + c;
        if (gc < N) C[(long long)gc] = s;
#endif
    }
#if CL > 1
    dt_gv_cluster_sync();
    if (rank == 0)
        for (int c = (int)threadIdx.x; c < TPR * VECB; c += BLOCK) {
            const int gc = grp * TPR * VECB + c;
            float s = 0.0f;
#pragma unroll
            for (int r = 0; r < CL; r++) s += dt_gv_ld_dsmem(&part[c], (unsigned)r);
            if (gc < N) C[(long long)gc] = s;
        }
    dt_gv_cluster_sync(); /* rank 0 has read every block's part */
#endif
}
#endif
