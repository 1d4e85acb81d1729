// add.cu — out = a + b (f32) for `--impls NAME=cuda:DIR` (issue 17; contract in README.md).
// Shape constants come as -D options: M, N (logical shape), LDA, LDB, LDO (row strides in
// elements). A grid-stride loop: correct for any grid and block the harness launches.
extern "C" __global__ void add(const float *__restrict__ a, const float *__restrict__ b,
                               float *__restrict__ out) {
    const long long total = (long long)M * N;
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < total;
         t += (long long)gridDim.x * blockDim.x) {
        const long long i = t / N, j = t % N;
        out[i * LDO + j] = a[i * LDA + j] + b[i * LDB + j];
    }
}
