// layernorm.cu — out = (x - mean) * rsqrt(var + 1e-5) * gamma + beta, DT_ELEM storage,
// FP32 arithmetic, biased variance computed as mean((x - mean)^2) (two-pass over the row, not E[x^2]-mean^2).
// Specialization: M N LDA LDO VEC BLOCK TPR PER INREG (see dt_cuda_common.cuh).
// INREG=1: the row is read once into registers; INREG=0: three reads over global;
// SMEMROW=1: the row staged once in shared memory, three passes over it; ROWL2=1: one
// block a row, Welford-style chunk merges streamed from DRAM, then a second read (L2).
// DT_LN_ONE=1 (INREG only; DUALTIME_ROW_LN_ONE=1, opt-in): mean and variance in one
// block reduction of per-thread (count, mean, M2) partials (Chan's merge) instead of
// two reductions (mean, then mean((x - mean)^2)): one barrier before the store.
// DT_LN_PERSIST=1 (INREG block-per-row only; DUALTIME_ROW_LN_PERSIST=1, opt-in): a
// persistent grid of G blocks, block b taking rows b, b + G, ...; the loads of row r + G
// are issued (raw, packed) before row r's reductions, so each block has its next row in
// flight during the reductions, gamma/beta and the store; =2: gamma and beta also loaded
// once a block (raw) and kept in registers across its rows. Per row the same arithmetic
// in the same order as INREG=1 (bit-identical results; tests/cuda/emu compares them).
#include "dt_cuda_common.cuh"

#define DT_EPS 1e-5f
#if INREG
#define DT_LN_HOIST (PER * VEC <= 8) /* load gamma/beta with the row (see below) */
#endif
/* DT_LN_RAW=1 (the plan's default for bf16/f16; DUALTIME_ROW_LN_RAW=0 is the version
 * before): where gamma and beta follow the reductions (!DT_LN_HOIST) in 16-byte vectors
 * of 8 narrow elements, they are loaded with the row instead, kept packed (4 registers
 * for 8 elements, half the floats' cost) and widened after the reductions, so their L2
 * round trip overlaps the row's load (8192^2 bf16: 75.4 us, 0.57x of FP32, docs/perf.md) */
#if !defined(DT_LN_RAW) || !INREG || DT_ELEM == 0 || VEC != 8 || DT_LN_HOIST
#undef DT_LN_RAW
#define DT_LN_RAW 0
#endif

/* DT_LN_MINB (in-register rows, from the plan: DUALTIME_ROW_LN_ONE, DUALTIME_ROW_LN_REGS):
 * blocks an SM the registers must allow (ptxas alone gave the one-reduction kernel 40-64
 * registers at 8192^2 depending on small code changes; docs/perf.md) */
#ifdef DT_LN_MINB
#define DT_LN_BOUNDS __launch_bounds__(BLOCK, DT_LN_MINB)
#else
#define DT_LN_BOUNDS __launch_bounds__(BLOCK)
#endif

#if INREG && DT_LN_PERSIST
/* The floats of a row held raw (dt_raw_row), in dt_load_row's order. */
__device__ __forceinline__ void ln_raw_floats(const dt_raw_t (&x)[PER], float (&v)[PER * VEC]) {
#pragma unroll
    for (int i = 0; i < PER; i++) {
        float f[VEC];
        dt_raw_unpack(x[i], f);
#pragma unroll
        for (int e = 0; e < VEC; e++) v[i * VEC + e] = f[e];
    }
}
#endif

extern "C" __global__ void DT_CLUSTER_ATTR DT_LN_BOUNDS
DT_KNAME(dt_layernorm)(const dt_t *__restrict__ a, const dt_t *__restrict__ gamma,
                       const dt_t *__restrict__ beta, dt_t *__restrict__ out) {
    const int row = dt_row(), lane = dt_lane();
#if TPR == 32
    if (row >= M) return;
#endif
    const dt_t *__restrict__ p = a + (long long)row * LDA + dt_cbase();
    dt_t *__restrict__ q = out + (long long)row * LDO + dt_cbase();
#if INREG && DT_LN_ONE
    /* one block reduction (DUALTIME_ROW_LN_ONE): the row held as raw vectors (narrow
     * types packed), per-thread (count, mean, M2) of x - K combined once
     * (dt_row_welford_one); K, the row's first element, is one more load beside the
     * row's (the same address for every thread of the row). gamma and beta: loaded with
     * the row (raw) for few elements a thread (DT_LN_HOIST), else after the reduction a
     * vector at a time (loaded with the row they took 64 registers at 8192^2 bf16
     * against 40: 3 blocks an SM -> 2; docs/perf.md) */
    gamma += dt_cbase();
    beta += dt_cbase();
#ifndef DT_EMU_PLANT_NO_SHIFT /* tests/cuda/emu's planted fault: no shift (K = 0) */
    const float K = dt_ld(a + (long long)row * LDA);
#else
    const float K = 0.0f;
#endif
    dt_raw_t x[PER];
    dt_raw_row(p, x, lane);
#if DT_LN_HOIST
    dt_raw_t graw[PER], braw[PER];
    dt_raw_row(gamma, graw, lane);
    dt_raw_row(beta, braw, lane);
#endif
    const dt_welford w = dt_row_welford_one(x, lane, K);
    const float r = 1.0f / sqrtf(w.m2 / (float)N + DT_EPS);
#pragma unroll
    for (int i = 0; i < PER; i++) {
        const int c = (i * TPR + lane) * VEC;
        if (c >= DT_NL) continue;
        float f[VEC], g[VEC], b[VEC];
        dt_raw_unpack(x[i], f);
#if DT_LN_HOIST
        dt_raw_unpack(graw[i], g);
        dt_raw_unpack(braw[i], b);
#else
        dt_raw_unpack(dt_raw_ld(gamma + c), g);
        dt_raw_unpack(dt_raw_ld(beta + c), b);
#endif
#pragma unroll
        for (int e = 0; e < VEC; e++) f[e] = fmaf(((f[e] - K) - w.mean) * r, g[e], b[e]);
        dt_raw_store(q, c, f);
    }
    DT_CLUSTER_END();
#elif INREG && DT_LN_PERSIST
    (void)row;
    (void)p;
    (void)q;
    const int G = (int)gridDim.x;
    dt_raw_t nx[PER]; /* the next row, raw: in flight while this one is reduced and stored */
    if ((int)blockIdx.x < M) dt_raw_row(a + (long long)blockIdx.x * LDA, nx, lane);
#if DT_LN_PERSIST == 2
    dt_raw_t graw[PER], braw[PER]; /* once a block, kept across its rows */
    dt_raw_row(gamma, graw, lane);
    dt_raw_row(beta, braw, lane);
#endif
#ifndef DT_EMU_PLANT_PERSIST_TAIL
    for (int rr = (int)blockIdx.x; rr < M; rr += G) {
#else /* tests/cuda/emu's planted fault: M / G rows a block, the M % G tail rows skipped */
    for (int k = 0, rr = (int)blockIdx.x; k < M / G; k++, rr += G) {
#endif
        float v[PER * VEC];
        ln_raw_floats(nx, v); /* columns >= N: 0, as dt_load_row's fill */
        if (rr + G < M) dt_raw_row(a + (long long)(rr + G) * LDA, nx, lane);
        const float r = dt_row_center_rstd(v, lane, DT_EPS);
#ifdef DT_EMU_PLANT_PERSIST_CLOBBER /* tests/cuda/emu's planted fault: the prefetched
                                       registers taken as this row's before its store */
        ln_raw_floats(nx, v);
#endif
        dt_t *__restrict__ qr = out + (long long)rr * LDO;
#if DT_LN_PERSIST == 2
#pragma unroll
        for (int i = 0; i < PER; i++) {
            float g[VEC], b[VEC];
            dt_raw_unpack(graw[i], g);
            dt_raw_unpack(braw[i], b);
#pragma unroll
            for (int e = 0; e < VEC; e++) v[i * VEC + e] = fmaf(v[i * VEC + e] * r, g[e], b[e]);
        }
#else
        float g[PER * VEC], b[PER * VEC]; /* after the reductions (L2), as INREG=1's */
        dt_load_vec(gamma, g, lane);
        dt_load_vec(beta, b, lane);
#pragma unroll
        for (int i = 0; i < PER * VEC; i++) v[i] = fmaf(v[i] * r, g[i], b[i]);
#endif
        dt_store_row(qr, v, lane);
    }
#elif INREG
    gamma += dt_cbase();
    beta += dt_cbase();
    float v[PER * VEC], g[PER * VEC], b[PER * VEC];
    const int t = dt_oframe(q); /* the output row's frame (DT_OFRAME), else 0 */
    dt_load_row<DT_SHIFT_A>(p, v, lane, 0.0f, t);
#if DT_LN_HOIST
    /* few floats per thread (small rows): gamma and beta are loaded with the row, so
     * their latency overlaps the row's instead of following the two reductions */
    dt_load_vec(gamma, g, lane, t);
    dt_load_vec(beta, b, lane, t);
#endif
#if DT_LN_RAW
    uint4 graw[PER], braw[PER];
#pragma unroll
    for (int i = 0; i < PER; i++) {
        const int c = (i * TPR + lane) * VEC;
        const bool in = c < DT_NL;
        graw[i] = in ? __ldg(reinterpret_cast<const uint4 *>(gamma + c)) : make_uint4(0, 0, 0, 0);
        braw[i] = in ? __ldg(reinterpret_cast<const uint4 *>(beta + c)) : make_uint4(0, 0, 0, 0);
    }
#endif
    const float r = dt_row_center_rstd(v, lane, DT_EPS, t);
#if DT_LN_RAW
#pragma unroll
    for (int i = 0; i < PER; i++) {
        dt_unpack8(graw[i], &g[8 * i]);
        dt_unpack8(braw[i], &b[8 * i]);
    }
#elif !DT_LN_HOIST
    /* 16+ floats per thread (long rows, large grids): loading gamma and beta up front
     * cost occupancy (registers) and made 8192x8192 45% slower on the H200 (132 -> 192 us,
     * docs/perf.md); here they follow the reductions */
    dt_load_vec(gamma, g, lane, t);
    dt_load_vec(beta, b, lane, t);
#endif
#pragma unroll
    for (int i = 0; i < PER * VEC; i++) v[i] = fmaf(v[i] * r, g[i], b[i]);
    dt_store_row(q, v, lane, t);
    DT_CLUSTER_END();
#elif SMEMROW
    (void)lane;
    (void)p;
    (void)q;
    gamma += dt_cbase();
    beta += dt_cbase();
    dt_srow_rows(a, LDA, [&](const dt_srow &sr, int row_, int par) {
        const int nl = DT_NL;
        float s = 0.0f;
        for (int k = (int)threadIdx.x; k < sr.nch; k += BLOCK) {
            float f[VEC];
            dt_srow_chunk_fill(sr, nl, k, f, 0.0f);
#pragma unroll
            for (int e = 0; e < VEC; e++) s += f[e];
        }
        const float mean = dt_row_sum<0>(s, par) / (float)N;
        float d2 = 0.0f;
        for (int k = (int)threadIdx.x; k < sr.nch; k += BLOCK) {
            float f[VEC];
            dt_srow_chunk_fill(sr, nl, k, f, mean); /* outside the row: d = 0 exactly */
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                const float d = f[e] - mean;
                d2 = fmaf(d, d, d2);
            }
        }
        const float r = 1.0f / sqrtf(dt_row_sum<1>(d2, par) / (float)N + DT_EPS);
        dt_srow_store_params<2>(sr, out + (long long)row_ * LDO + dt_cbase(), nl, gamma, beta,
                                [&](float (&x)[VEC], const float (&g)[VEC], const float (&b)[VEC]) {
#pragma unroll
            for (int e = 0; e < VEC; e++) x[e] = fmaf((x[e] - mean) * r, g[e], b[e]);
        });
    });
    DT_CLUSTER_END();
#elif ROWL2
    /* pass 1: chunk-wise (n, mean, M2) merges of x - K streamed from DRAM (K the row's
     * first element: stable and exact under a large offset); pass 2: the row again, from
     * L2 (dt_cuda_common.cuh ROWL2), ((x - K) - mean) * rstd * gamma + beta */
    (void)lane;
    const dt_srow sr = dt_l2_row(p);
#ifndef DT_EMU_PLANT_NO_SHIFT /* tests/cuda/emu's planted fault: no shift (K = 0) */
    const float K = dt_ld(p);
#else
    const float K = 0.0f;
#endif
    dt_welford w = {0.0f, 0.0f, 0.0f};
    dt_l2_pass(sr, 0.0f, [&](float (&x)[VEC], int k) { dt_welford_chunk(w, sr, k, x, K); });
    w = dt_welford_block(w);
    const float mean = w.mean; /* of x - K */
    const float r = 1.0f / sqrtf(w.m2 / (float)N + DT_EPS);
    dt_l2_store(sr, q, [&](float (&x)[VEC], int c0, bool full) {
        float g[VEC], b[VEC];
        dt_param_chunk(gamma, c0, full, N, g);
        dt_param_chunk(beta, c0, full, N, b);
#pragma unroll
        for (int e = 0; e < VEC; e++) x[e] = fmaf(((x[e] - K) - mean) * r, g[e], b[e]);
    });
#else
    float s = 0.0f;
    for (int c = lane; c < N; c += TPR) s += dt_ld(p + c);
    const float mean = dt_row_sum(s) / (float)N;
    float d2 = 0.0f;
    for (int c = lane; c < N; c += TPR) {
        const float d = dt_ld(p + c) - mean;
        d2 = fmaf(d, d, d2);
    }
    const float r = 1.0f / sqrtf(dt_row_sum(d2) / (float)N + DT_EPS);
    for (int c = lane; c < N; c += TPR)
        q[c] = dt_from_f32(
            fmaf((dt_ld(p + c) - mean) * r, dt_ld(gamma + c), dt_ld(beta + c)));
#endif
}
