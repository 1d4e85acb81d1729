// sum.cu — out[i] = sum_j a[i][j] (M x N -> M x 1), DT_ELEM storage (out too), FP32
// accumulation, one streaming pass.
// Specialization: M N LDA VEC BLOCK TPR (see dt_cuda_common.cuh). A row is read once,
// never kept: TPR threads stride over it with VEC-wide loads, four accumulators each,
// then a warp / block reduction. Grid: ceil(M / (BLOCK/TPR)). ROWHEAD=1 (rows not 16-byte
// aligned: odd N, views): VEC-wide loads from each row's first 16-byte boundary, the
// elements before it and after the last whole vector one a lane.
//
// DT_ACC_F16=1 (planted fault, tests only; the plan passes it under the environment
// variable DUALTIME_PLANT_ACC_F16=1 and says so in the summary): each lane keeps ONE
// accumulator rounded to fp16 after every add (lane l adds columns l, l+32, ... in
// order, scalar loads), then a butterfly of __shfl_xor over the warp (offsets 16, 8, 4,
// 2, 1), each add rounded to fp16. Needs TPR == 32. tests/unit/test_narrow_tolerance.c
// emulates exactly this order in C; the tolerance of dt_op_tolerance must reject it.
#include "dt_cuda_common.cuh"

#if DT_ACC_F16
#if TPR != 32
#error "DT_ACC_F16 needs TPR == 32"
#endif
__device__ __forceinline__ float dt_round_f16(float x) {
    unsigned short h;
    float r;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(h));
    return r;
}
#endif

extern "C" __global__ void __launch_bounds__(BLOCK)
DT_KNAME(dt_sum)(const dt_t *__restrict__ a, dt_t *__restrict__ out) {
    const int row = dt_row(), lane = dt_lane();
#if TPR == 32
    if (row >= M) return; /* whole warp leaves together */
#endif
    const dt_t *__restrict__ p = a + (long long)row * LDA;
#if DT_ACC_F16
    float acc = 0.0f;
    for (int c = lane; c < N; c += 32) acc = dt_round_f16(acc + dt_ld(p + c));
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc = dt_round_f16(acc + __shfl_xor_sync(0xffffffffu, acc, o));
    if (lane == 0) out[row] = dt_from_f32(acc);
#else
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
#if ROWHEAD && VEC > 1
    /* rows that need not start 16-byte aligned (odd N, views): the first h < VEC elements
     * up to the row's first 16-byte boundary one a lane, the body in VEC-wide loads from
     * there, the last (N - h) % VEC one a lane */
#ifndef DT_EMU_PLANT_NO_HEAD /* tests/cuda/emu's planted fault: no head (misaligned loads) */
    const int head = (int)(((16u - ((unsigned)(size_t)p & 15u)) & 15u) / sizeof(dt_t));
#else
    const int head = 0;
#endif
    const int h = head < N ? head : N;
    if (lane < h) s0 += dt_ld(p + lane);
    const dt_t *__restrict__ q = p + h;
    const int nb = (N - h) / VEC * VEC;
    for (int c = nb + lane; c < N - h; c += TPR) s1 += dt_ld(q + c);
#else
    const dt_t *__restrict__ q = p;
    const int nb = N;
#endif
#if VEC == 8
#pragma unroll 2
    for (int c = lane * 8; c < nb; c += TPR * 8) {
        float f[8];
        dt_unpack8(__ldg(reinterpret_cast<const uint4 *>(q + c)), f);
        s0 += f[0] + f[4]; s1 += f[1] + f[5]; s2 += f[2] + f[6]; s3 += f[3] + f[7];
    }
#elif VEC == 4
#pragma unroll 4
    for (int c = lane * 4; c < nb; c += TPR * 4) {
        const float4 t = __ldg(reinterpret_cast<const float4 *>(q + c));
        s0 += t.x; s1 += t.y; s2 += t.z; s3 += t.w;
    }
#else
    int c = lane;
    for (; c + 3 * TPR < N; c += 4 * TPR) {
        s0 += dt_ld(p + c); s1 += dt_ld(p + c + TPR);
        s2 += dt_ld(p + c + 2 * TPR); s3 += dt_ld(p + c + 3 * TPR);
    }
    for (; c < N; c += TPR) s0 += dt_ld(p + c);
#endif
    const float s = dt_row_sum((s0 + s1) + (s2 + s3));
    if (lane == 0) out[row] = dt_from_f32(s);
#endif
}
