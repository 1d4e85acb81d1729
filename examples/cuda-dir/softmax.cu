// softmax.cu — row softmax (f32) for `--impls NAME=cuda:DIR` (issue 17; contract in
// README.md). Constants: M, N, LDA, LDO (-D options). One block per row, rows looped over
// the grid: correct for any grid and any block of a multiple of 32 threads up to 1024.
// No headers: NVRTC compiles it as is.
__device__ float block_reduce(float v, bool is_max) {
    __shared__ float part[32];
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_down_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, w) : v + w;
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    __syncthreads(); // part[] may still be read by the previous reduction
    if (lane == 0) part[warp] = v;
    __syncthreads();
    v = lane < nwarps ? part[lane] : (is_max ? __int_as_float(0xff800000) : 0.f);
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_down_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, w) : v + w;
    }
    return __shfl_sync(0xffffffffu, v, 0);
}

extern "C" __global__ void softmax(const float *__restrict__ a, float *__restrict__ out) {
    for (long long row = blockIdx.x; row < M; row += gridDim.x) {
        const float *x = a + row * LDA;
        float *o = out + row * LDO;
        float m = __int_as_float(0xff800000); // -inf
        for (int j = threadIdx.x; j < N; j += blockDim.x) m = fmaxf(m, x[j]);
        m = block_reduce(m, true);
        float s = 0.f;
        for (int j = threadIdx.x; j < N; j += blockDim.x) s += expf(x[j] - m);
        s = block_reduce(s, false);
        for (int j = threadIdx.x; j < N; j += blockDim.x) o[j] = expf(x[j] - m) / s;
    }
}
