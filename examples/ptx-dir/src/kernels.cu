// kernels.cu — the source that ptx-dir/add.ptx and ptx-dir/softmax.ptx were emitted from
// (a stand-in for "PTX a compiler emitted"). A .ptx has no compile-time shape, so the
// shape and strides come as kernel parameters: every buffer's pointer followed by its row
// stride in elements, then m, n (all 64-bit; docs/cuda-backend.md, "User kernel
// directories"). The default launch: 256 threads a block; add one thread an element
// (grid = ceil(m*n/256)), softmax one block a row (grid = m). Regenerate:
//   nvcc -arch=sm_90 -ptx -DONLY_ADD     src/kernels.cu -o add.ptx
//   nvcc -arch=sm_90 -ptx -DONLY_SOFTMAX src/kernels.cu -o softmax.ptx
#ifdef ONLY_ADD
extern "C" __global__ void add(const float *a, long long lda, const float *b, long long ldb,
                               float *out, long long ldo, long long m, long long n) {
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < m * n;
         t += (long long)gridDim.x * blockDim.x) {
        const long long i = t / n, j = t % n;
        out[i * ldo + j] = a[i * lda + j] + b[i * ldb + j];
    }
}
#endif

#ifdef ONLY_SOFTMAX
// one block (a multiple of 32 threads, at most 1024) per row; rows looped over the grid
__device__ float block_reduce(float v, bool is_max) {
    __shared__ float part[32];
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_down_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, w) : v + w;
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    __syncthreads();
    if (lane == 0) part[warp] = v;
    __syncthreads();
    v = lane < nwarps ? part[lane] : (is_max ? __int_as_float(0xff800000) : 0.f);
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_down_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, w) : v + w;
    }
    return __shfl_sync(0xffffffffu, v, 0);
}

extern "C" __global__ void softmax(const float *a, long long lda, float *out, long long ldo,
                                   long long m, long long n) {
    for (long long row = blockIdx.x; row < m; row += gridDim.x) {
        const float *x = a + row * lda;
        float *o = out + row * ldo;
        float mx = __int_as_float(0xff800000);
        for (long long j = threadIdx.x; j < n; j += blockDim.x) mx = fmaxf(mx, x[j]);
        mx = block_reduce(mx, true);
        float s = 0.f;
        for (long long j = threadIdx.x; j < n; j += blockDim.x) s += expf(x[j] - mx);
        s = block_reduce(s, false);
        for (long long j = threadIdx.x; j < n; j += blockDim.x) o[j] = expf(x[j] - mx) / s;
    }
}
#endif
