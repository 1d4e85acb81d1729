// softmax.cu — out[i][j] = exp(a_ij - max_i) / sum_j exp(a_ij - max_i), DT_ELEM
// storage, FP32 arithmetic.
// Specialization: M N LDA LDO VEC BLOCK TPR PER INREG (see dt_cuda_common.cuh).
// INREG=1: one read of the row into registers, max, exp, sum, one write (fused single
// pass over memory). INREG=0 (rows too long for registers): an online max/sum pass,
// then a second read that writes. SMEMROW=1: the row staged in shared memory (one DRAM
// read): max pass, exp + sum pass (FP32 keeps the exps in shared memory), then the
// store pass; DT_SM_ONLINE=1 (DUALTIME_ROW_SM_ONLINE=1): one online (max, sum) pass and
// one block / cluster combination, then the store pass with exp again. ROWL2=1 (DUALTIME_ROW_L2=1): one block a row, an online max/sum pass
// streamed from DRAM, then a second read (from L2) that writes. Grid: ceil(M / (BLOCK/TPR))
// (times CLUSTER).
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
    const int t = dt_oframe(q); /* the output row's frame (DT_OFRAME), else 0 */
    dt_load_row<DT_SHIFT_A>(p, v, lane, -DT_INF, t);
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
    dt_store_row(q, v, lane, t);
    DT_CLUSTER_END();
#elif SMEMROW
    (void)lane;
    (void)p;
    (void)q;
    dt_srow_rows(a, LDA, [&](const dt_srow &r, int row_, int par) {
        const int nl = DT_NL;
#if DT_SM_ONLINE
        /* one pass over the staged row: an online (max, sum of exp) a thread, then one
         * block / cluster combination; the store pass computes exp(x - max) again */
        float m = -DT_INF, s0 = 0.0f;
        for (int k = (int)threadIdx.x; k < r.nch; k += BLOCK) {
            float f[VEC];
            dt_srow_chunk_fill(r, nl, k, f, -DT_INF);
            dt_lse_add(m, s0, f);
        }
        float mx;
        const float s = dt_row_lse(m, s0, par, &mx);
        const float mls = mx * DT_LOG2E;
#else
        const float mx = dt_srow_max(r, nl, par);
        const float mls = mx * DT_LOG2E;
        float s = 0.0f;
        for (int k = (int)threadIdx.x; k < r.nch; k += BLOCK) {
            float f[VEC];
            dt_srow_chunk_fill(r, nl, k, f, -DT_INF);
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                f[e] = dt_exp_shifted(f[e], mx, mls); /* outside the row: exp(-inf) = 0 */
                s += f[e];
            }
#if DT_ELEM == 0
            dt_srow_put(r, k, f); /* FP32: keep exp(x - max), the store pass divides */
#endif
        }
        s = dt_row_sum(s, par); /* its barrier orders the dt_srow_put stores before the reads */
#endif /* DT_SM_ONLINE */
#if DT_FASTEXP
        const float rs = 1.0f / s;
#endif
        dt_srow_store(r, out + (long long)row_ * LDO + dt_cbase(), nl, [&](float (&x)[VEC], int, bool) {
#pragma unroll
            for (int e = 0; e < VEC; e++) {
#if DT_ELEM == 0 && !DT_SM_ONLINE
                const float ex = x[e];
#else
                const float ex = dt_exp_shifted(x[e], mx, mls);
#endif
#if DT_FASTEXP
                x[e] = ex * rs;
#else
                x[e] = ex / s;
#endif
            }
        });
    });
    DT_CLUSTER_END();
#elif ROWL2
    /* pass 1: the row from DRAM, an online (max, sum of exp); pass 2: the row again,
     * from L2 (dt_cuda_common.cuh ROWL2), exp(x - max) / sum stored */
    (void)lane;
    const dt_srow r = dt_l2_row(p);
    float m = -DT_INF, s0 = 0.0f;
    dt_l2_pass(r, -DT_INF, [&](const float (&x)[VEC], int) { dt_lse_add(m, s0, x); });
    float mx;
    const float s = dt_lse_block(m, s0, &mx);
    const float mls = mx * DT_LOG2E;
#if DT_FASTEXP
    const float rs = 1.0f / s;
#endif
    dt_l2_store(r, q, [&](float (&x)[VEC], int, bool) {
#pragma unroll
        for (int e = 0; e < VEC; e++) {
            const float ex = dt_exp_shifted(x[e], mx, mls);
#if DT_FASTEXP
            x[e] = ex * rs;
#else
            x[e] = ex / s;
#endif
        }
    });
#else
    float mx;
    const float s = dt_row_online_sumexp(p, lane, &mx);
    for (int c = lane; c < N; c += TPR) q[c] = dt_from_f32(expf(dt_ld(p + c) - mx) / s);
#endif
}
