// sdk_cuda_worker.cu — a dualtime worker for CUDA kernels of your own: add and softmax
// compiled by nvcc (sm_90), launched on the SDK's stream; the SDK owns the device mirror
// of the arena and the timing (include/dualtime/dt_worker_sdk.h, docs/worker-sdk.md).
#include <cuda_runtime.h>
#include <math.h>

#include "dualtime/dt_worker_sdk.h"

__global__ void add_kernel(const float *a, long sa, const float *b, long sb, float *out,
                           long rows, long cols) {
    long i = blockIdx.y, j = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < rows && j < cols) out[i * cols + j] = a[i * sa + j] + b[i * sb + j];
}

// One block of 256 threads per row: max, then sum of exp, then the quotient.
__global__ void softmax_kernel(const float *a, long sa, float *out, long cols) {
    __shared__ float red[256];
    const float *x = a + blockIdx.x * sa;
    float *o = out + blockIdx.x * cols, m = -INFINITY, s = 0.f;
    for (long j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, x[j]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if (threadIdx.x < w) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + w]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    for (long j = threadIdx.x; j < cols; j += blockDim.x) s += expf(x[j] - m);
    red[threadIdx.x] = s;
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if (threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
        __syncthreads();
    }
    for (long j = threadIdx.x; j < cols; j += blockDim.x) o[j] = expf(x[j] - m) / red[0];
}

static int launched(dt_sdk_case *c) {
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? 0 : dt_sdk_error(c, "launch: %s", cudaGetErrorString(e));
}

static int add(dt_sdk_case *c, void *ctx) {
    dt_sdk_buffer *a = dt_sdk_buf(c, "a"), *b = dt_sdk_buf(c, "b"), *o = dt_sdk_buf(c, "out");
    dim3 grid((unsigned)((o->cols + 255) / 256), (unsigned)o->rows);
    add_kernel<<<grid, 256, 0, (cudaStream_t)c->stream>>>(
        (const float *)a->base, a->row_stride, (const float *)b->base, b->row_stride,
        (float *)o->base, o->rows, o->cols);
    return launched(c);
}

static int softmax(dt_sdk_case *c, void *ctx) {
    dt_sdk_buffer *a = dt_sdk_buf(c, "a"), *o = dt_sdk_buf(c, "out");
    softmax_kernel<<<(unsigned)o->rows, 256, 0, (cudaStream_t)c->stream>>>(
        (const float *)a->base, a->row_stride, (float *)o->base, o->cols);
    return launched(c);
}

static int f32_only(dt_sdk_case *c, void *ctx) {
    return c->buf[0].dtype == DT_SDK_F32 ? 0 : dt_sdk_error(c, "this example has f32 only");
}

static int init(dt_sdk *sdk, void *user) {
    dt_sdk_op a = {add, f32_only, NULL, "add_kernel grid=(ceil(N/256),M) block=256", NULL};
    dt_sdk_op s = {softmax, f32_only, NULL, "softmax_kernel grid=M block=256", NULL};
    return dt_sdk_register_op(sdk, "add", &a) || dt_sdk_register_op(sdk, "softmax", &s);
}

int main(int argc, char **argv) {
    dt_sdk_spec spec = DT_SDK_SPEC_INIT;
    spec.worker = "sdk-cuda";
    spec.framework = "example-cuda";
    spec.framework_version = "1.0";
    spec.backend = DT_SDK_CUDA;
    spec.init = init;
    return dt_sdk_main(argc, argv, &spec);
}
