// ceil_ffma.cu — the FP32 FFMA ceiling of the `flop_ceilings` request (docs/protocol.md):
// every thread runs CEIL_CHAINS independent dependency chains x = x * m + a, one FFMA
// each, CEIL_UNROLL times per round for `rounds` rounds. m and a are kernel arguments
// (nothing folds at compile time) and every thread stores the sum of its chains (nothing
// is dead code). FLOPs of a launch: 2 * CEIL_CHAINS * CEIL_UNROLL * rounds * threads.
// Eight chains a thread and 2048 threads an SM (8 blocks of 256) hide the FFMA latency
// (4 cycles) many times over, so the count of FP32 lanes is the limit.
// Kernel dt_ceil_ffma(float *out, float m, float a, int rounds): out has one float per
// thread of the grid. Compiled by workers/native/backend_cuda_flops.c, not by the plan.
// CEIL_CHAINS and CEIL_UNROLL come from the host (-D: one source of the FLOP count).
#if !defined(CEIL_CHAINS) || !defined(CEIL_UNROLL)
#error "ceil_ffma.cu: CEIL_CHAINS and CEIL_UNROLL must be defined (-D)"
#endif

extern "C" __global__ void __launch_bounds__(256) dt_ceil_ffma(float *out, float m, float a,
                                                               int rounds) {
    float x[CEIL_CHAINS];
#pragma unroll
    for (int i = 0; i < CEIL_CHAINS; i++) x[i] = (float)threadIdx.x * 1e-3f + (float)i;
    for (int r = 0; r < rounds; r++) {
#pragma unroll
        for (int u = 0; u < CEIL_UNROLL; u++) {
#pragma unroll
            for (int i = 0; i < CEIL_CHAINS; i++) x[i] = fmaf(x[i], m, a);
        }
    }
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < CEIL_CHAINS; i++) s += x[i];
    out[(long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
}
