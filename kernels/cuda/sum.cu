// sum.cu — out[i] = sum_j a[i][j] (M x N -> M x 1), FP32, one streaming pass.
// Specialization: M N LDA VEC BLOCK TPR (see dt_cuda_common.cuh). A row is read once,
// never kept: TPR threads stride over it with VEC-wide loads, four accumulators each,
// then a warp / block reduction. Grid: ceil(M / (BLOCK/TPR)).
#include "dt_cuda_common.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK)
dt_sum_f32(const float *__restrict__ a, float *__restrict__ out) {
    const int row = dt_row(), lane = dt_lane();
#if TPR == 32
    if (row >= M) return; /* whole warp leaves together */
#endif
    const float *__restrict__ p = a + (long long)row * LDA;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
#if VEC == 4
#pragma unroll 4
    for (int c = lane * 4; c < N; c += TPR * 4) {
        const float4 t = __ldg(reinterpret_cast<const float4 *>(p + c));
        s0 += t.x; s1 += t.y; s2 += t.z; s3 += t.w;
    }
#else
    int c = lane;
    for (; c + 3 * TPR < N; c += 4 * TPR) {
        s0 += __ldg(p + c); s1 += __ldg(p + c + TPR);
        s2 += __ldg(p + c + 2 * TPR); s3 += __ldg(p + c + 3 * TPR);
    }
    for (; c < N; c += TPR) s0 += __ldg(p + c);
#endif
    const float s = dt_row_sum((s0 + s1) + (s2 + s3));
    if (lane == 0) out[row] = s;
}
