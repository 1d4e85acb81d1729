// cross_entropy.cu — out[i] = logsumexp_j(a_ij) - a[i][label_i] (M x N -> M x 1), DT_ELEM
// storage (out too), FP32 arithmetic,
// int64 labels; a label outside [0, N) gives NaN. Specialization: M N LDA VEC BLOCK TPR
// PER INREG (see dt_cuda_common.cuh). INREG=1: the row in registers, max then sum of
// exp; INREG=0: one online max/sum pass; SMEMROW=1: the row staged once in shared
// memory, max then sum of exp over it; CESTREAM=1 (DUALTIME_CE_STREAM=1): one streaming
// read, an online logsumexp over 16-byte chunks (dt_ce_stream_lse below). Grid:
// ceil(M / (BLOCK/TPR)).
#include "dt_cuda_common.cuh"

#if CESTREAM
// ---- the streaming online logsumexp (CESTREAM=1) ----------------------------------
// One block a row (TPR == BLOCK, INREG 0, SMEMROW 0, CLUSTER 1; checked in
// dt_cuda_common.cuh), VEC = the elements of a 16-byte chunk (4 f32, 8 bf16/f16)
// whatever the row's alignment. The row's chunks are walked by dt_l2_pass (the chunk
// view of dt_srow: the first and last chunk hold neighbours' or guard bytes, read and
// never used; DT_L2_UNROLL loads in flight a thread before their use), each thread
// keeping a running max m and s = sum exp(x - m), rescaled when a chunk raises m
// (dt_lse_add; an all -inf part has s = 0). Then the block combines the (m, s) pairs.
// The row at p: *mx gets its max, the result is sum exp(x - *mx), for every thread of
// the block (all must call it: it synchronizes).
__device__ __forceinline__ float dt_ce_stream_lse(const dt_t *p, float *mx) {
    float m = -DT_INF, s = 0.0f;
    dt_l2_pass(dt_l2_row(p), -DT_INF, [&](const float (&x)[VEC], int) { dt_lse_add(m, s, x); });
    return dt_lse_block(m, s, mx);
}
#endif /* CESTREAM */

extern "C" __global__ void DT_CLUSTER_ATTR __launch_bounds__(BLOCK)
DT_KNAME(dt_cross_entropy)(const dt_t *__restrict__ a, const long long *__restrict__ labels,
                           dt_t *__restrict__ out) {
    const int row = dt_row(), lane = dt_lane();
#if TPR == 32
    if (row >= M) return;
#endif
    const dt_t *__restrict__ p = a + (long long)row * LDA;
    /* the label and the target logit are loaded first, so their two dependent memory
     * round trips overlap the row's load instead of following the reductions (H200,
     * CUPTI kernel time 1x127 1.26 -> 1.15 us, 128x1024 1.62 -> 1.37 us; docs/perf.md) */
    const long long l = labels[row];
    const bool in_range = l >= 0 && l < N;
    const float target = in_range ? dt_ld(p + l) : 0.0f;
#if INREG
    float v[PER * VEC];
    dt_load_row<DT_SHIFT_A>(p + dt_cbase(), v, lane, -DT_INF);
    float mx = -DT_INF;
#pragma unroll
    for (int i = 0; i < PER * VEC; i++) mx = fmaxf(mx, v[i]);
    mx = dt_row_max(mx);
    const float mls = mx * DT_LOG2E;
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < PER * VEC; i++) s += dt_exp_shifted(v[i], mx, mls);
    s = dt_row_sum(s);
    DT_CLUSTER_END();
#elif SMEMROW
    (void)lane;
#if SMEMPIPE
    /* thread 0's label of the loop's next row, loaded one row ahead (no dependent round
     * trip in a row's critical path: the target load below is used only at its end) */
    long long lab_next = threadIdx.x == 0 && row < M ? labels[row] : -1;
#endif
    dt_srow_rows(a, LDA, [&](const dt_srow &r, int row_, int par) {
        const int nl = DT_NL;
#if SMEMPIPE
        const long long l_ = lab_next;
        const int step_ = (int)gridDim.x / CLUSTER;
        lab_next = threadIdx.x == 0 && row_ + step_ < M ? labels[row_ + step_] : -1;
        const bool ok_ = l_ >= 0 && l_ < N;
        const float tgt_ = ok_ ? dt_ld(a + (long long)row_ * LDA + l_) : 0.0f;
#else /* one row a block: loaded above, before the row's copies */
        const bool ok_ = in_range;
        const float tgt_ = target;
#endif
        const float mx = dt_srow_max(r, nl, par);
        const float mls = mx * DT_LOG2E;
        float s = 0.0f;
        for (int k = (int)threadIdx.x; k < r.nch; k += BLOCK) {
            float f[VEC];
            dt_srow_chunk_fill(r, nl, k, f, -DT_INF);
#pragma unroll
            for (int e = 0; e < VEC; e++) s += dt_exp_shifted(f[e], mx, mls);
        }
        s = dt_row_sum(s, par);
        if (threadIdx.x == 0 && dt_cbase() == 0)
            out[row_] = dt_from_f32(ok_ ? (mx + logf(s)) - tgt_ : DT_NAN);
    });
    DT_CLUSTER_END();
#elif CESTREAM
    float mx;
    const float s = dt_ce_stream_lse(p, &mx);
#else
    float mx;
    const float s = dt_row_online_sumexp(p, lane, &mx);
#endif
#if !SMEMROW
    if (lane == 0 && dt_cbase() == 0) out[row] = dt_from_f32(in_range ? (mx + logf(s)) - target : DT_NAN);
#endif
}
