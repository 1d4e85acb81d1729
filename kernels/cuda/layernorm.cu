// layernorm.cu — out = (x - mean) * rsqrt(var + 1e-5) * gamma + beta, FP32, biased
// variance computed as mean((x - mean)^2) (two-pass over the row, not E[x^2]-mean^2).
// Specialization: M N LDA LDO VEC BLOCK TPR PER INREG (see dt_cuda_common.cuh).
// INREG=1: the row is read once into registers; INREG=0: three reads over global.
#include "dt_cuda_common.cuh"

#define DT_EPS 1e-5f

extern "C" __global__ void __launch_bounds__(BLOCK)
dt_layernorm_f32(const float *__restrict__ a, const float *__restrict__ gamma,
                 const float *__restrict__ beta, float *__restrict__ out) {
    const int row = dt_row(), lane = dt_lane();
#if TPR == 32
    if (row >= M) return;
#endif
    const float *__restrict__ p = a + (long long)row * LDA;
    float *__restrict__ q = out + (long long)row * LDO;
#if INREG
    float v[PER * VEC];
    dt_load_row(p, v, lane, 0.0f);
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < PER * VEC; i++) s += v[i];
    const float mean = dt_row_sum(s) / (float)N;
    float d2 = 0.0f;
#pragma unroll
    for (int i = 0; i < PER; i++)
#pragma unroll
        for (int e = 0; e < VEC; e++) {
            const float d = dt_col(i, e, lane) < N ? v[i * VEC + e] - mean : 0.0f;
            v[i * VEC + e] = d;
            d2 = fmaf(d, d, d2);
        }
    const float r = 1.0f / sqrtf(dt_row_sum(d2) / (float)N + DT_EPS);
    float g[PER * VEC], b[PER * VEC];
    dt_load_vec(gamma, g, lane);
    dt_load_vec(beta, b, lane);
#pragma unroll
    for (int i = 0; i < PER * VEC; i++) v[i] = fmaf(v[i] * r, g[i], b[i]);
    dt_store_row(q, v, lane);
#else
    float s = 0.0f;
    for (int c = lane; c < N; c += TPR) s += __ldg(p + c);
    const float mean = dt_row_sum(s) / (float)N;
    float d2 = 0.0f;
    for (int c = lane; c < N; c += TPR) {
        const float d = __ldg(p + c) - mean;
        d2 = fmaf(d, d, d2);
    }
    const float r = 1.0f / sqrtf(dt_row_sum(d2) / (float)N + DT_EPS);
    for (int c = lane; c < N; c += TPR)
        q[c] = fmaf((__ldg(p + c) - mean) * r, __ldg(gamma + c), __ldg(beta + c));
#endif
}
