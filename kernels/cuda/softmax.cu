// softmax.cu — out[i][j] = exp(a_ij - max_i) / sum_j exp(a_ij - max_i), DT_ELEM
// storage, FP32 arithmetic.
// Specialization: M N LDA LDO VEC BLOCK TPR PER INREG (see dt_cuda_common.cuh).
// INREG=1: one read of the row into registers, max, exp, sum, one write (fused single
// pass over memory). INREG=0 (rows too long for registers): an online max/sum pass,
// then a second read that writes. Grid: ceil(M / (BLOCK/TPR)).
#include "dt_cuda_common.cuh"

extern "C" __global__ void DT_CLUSTER_ATTR __launch_bounds__(BLOCK)
DT_KNAME(dt_softmax)(const dt_t *__restrict__ a, dt_t *__restrict__ out) {
    const int row = dt_row(), lane = dt_lane();
#if TPR == 32
    if (row >= M) return;
#endif
    const dt_t *__restrict__ p = a + (long long)row * LDA + dt_cbase();
    dt_t *__restrict__ q = out + (long long)row * LDO + dt_cbase();
#if INREG
    float v[PER * VEC];
    dt_load_row(p, v, lane, -DT_INF);
    float mx = -DT_INF;
#pragma unroll
    for (int i = 0; i < PER * VEC; i++) mx = fmaxf(mx, v[i]);
    mx = dt_row_max(mx);
    const float mls = mx * DT_LOG2E;
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < PER * VEC; i++) {
        v[i] = dt_exp_shifted(v[i], mx, mls); /* padding: exp(-inf) = 0 */
        s += v[i];
    }
    s = dt_row_sum(s);
#if DT_FASTEXP
    const float rs = 1.0f / s;
#pragma unroll
    for (int i = 0; i < PER * VEC; i++) v[i] *= rs;
#else
#pragma unroll
    for (int i = 0; i < PER * VEC; i++) v[i] = v[i] / s;
#endif
    dt_store_row(q, v, lane);
    DT_CLUSTER_END();
#else
    float mx;
    const float s = dt_row_online_sumexp(p, lane, &mx);
    for (int c = lane; c < N; c += TPR) q[c] = dt_from_f32(expf(dt_ld(p + c) - mx) / s);
#endif
}
