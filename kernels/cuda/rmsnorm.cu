// rmsnorm.cu — out = x * rsqrt(mean(x^2) + 1e-5) * gamma, DT_ELEM storage, FP32
// arithmetic (rsqrt as 1/sqrt, IEEE).
// Specialization: M N LDA LDO VEC BLOCK TPR PER INREG (see dt_cuda_common.cuh).
// INREG=1: the row is read once into registers; INREG=0: two reads over global;
// SMEMROW=1: the row staged once in shared memory (dt_cuda_common.cuh); ROWL2=1: one
// block a row, the sum of squares streamed from DRAM, then a second read (from L2).
#include "dt_cuda_common.cuh"

#define DT_EPS 1e-5f

extern "C" __global__ void DT_CLUSTER_ATTR __launch_bounds__(BLOCK)
DT_KNAME(dt_rmsnorm)(const dt_t *__restrict__ a, const dt_t *__restrict__ gamma,
                     dt_t *__restrict__ out) {
    const int row = dt_row(), lane = dt_lane();
#if TPR == 32
    if (row >= M) return;
#endif
    const dt_t *__restrict__ p = a + (long long)row * LDA + dt_cbase();
    dt_t *__restrict__ q = out + (long long)row * LDO + dt_cbase();
#if INREG
    gamma += dt_cbase();
    float v[PER * VEC], g[PER * VEC];
    const int t = dt_oframe(q); /* the output row's frame (DT_OFRAME), else 0 */
    dt_load_row<DT_SHIFT_A>(p, v, lane, 0.0f, t);
    dt_load_vec(gamma, g, lane, t);
    float ss = 0.0f;
#pragma unroll
    for (int i = 0; i < PER * VEC; i++) ss = fmaf(v[i], v[i], ss);
    ss = dt_row_sum(ss);
    const float r = 1.0f / sqrtf(ss / (float)N + DT_EPS);
#pragma unroll
    for (int i = 0; i < PER * VEC; i++) v[i] = v[i] * r * g[i];
    dt_store_row(q, v, lane, t);
    DT_CLUSTER_END();
#elif SMEMROW
    (void)lane;
    (void)p;
    (void)q;
    gamma += dt_cbase();
    dt_srow_rows(a, LDA, [&](const dt_srow &sr, int row_, int par) {
        const int nl = DT_NL;
        float ss = 0.0f;
        for (int k = (int)threadIdx.x; k < sr.nch; k += BLOCK) {
            float f[VEC];
            dt_srow_chunk_fill(sr, nl, k, f, 0.0f);
#pragma unroll
            for (int e = 0; e < VEC; e++) ss = fmaf(f[e], f[e], ss);
        }
        ss = dt_row_sum(ss, par);
        const float r = 1.0f / sqrtf(ss / (float)N + DT_EPS);
        dt_srow_store_params<1>(sr, out + (long long)row_ * LDO + dt_cbase(), nl, gamma, gamma,
                                [&](float (&x)[VEC], const float (&g)[VEC], const float (&)[VEC]) {
#pragma unroll
            for (int e = 0; e < VEC; e++) x[e] = x[e] * r * g[e];
        });
    });
    DT_CLUSTER_END();
#elif ROWL2
    /* pass 1: the sum of squares streamed from DRAM; pass 2: the row again, from L2 */
    (void)lane;
    const dt_srow sr = dt_l2_row(p);
    float ss = 0.0f;
    dt_l2_pass(sr, 0.0f, [&](const float (&x)[VEC], int) {
#pragma unroll
        for (int e = 0; e < VEC; e++) ss = fmaf(x[e], x[e], ss);
    });
    ss = dt_row_sum(ss);
    const float r = 1.0f / sqrtf(ss / (float)N + DT_EPS);
    dt_l2_store(sr, q, [&](float (&x)[VEC], int c0, bool full) {
        float g[VEC];
        dt_param_chunk(gamma, c0, full, N, g);
#pragma unroll
        for (int e = 0; e < VEC; e++) x[e] = x[e] * r * g[e];
    });
#else
    float ss = 0.0f;
    for (int c = lane; c < N; c += TPR) {
        const float x = dt_ld(p + c);
        ss = fmaf(x, x, ss);
    }
    ss = dt_row_sum(ss);
    const float r = 1.0f / sqrtf(ss / (float)N + DT_EPS);
    for (int c = lane; c < N; c += TPR) q[c] = dt_from_f32(dt_ld(p + c) * r * dt_ld(gamma + c));
#endif
}
