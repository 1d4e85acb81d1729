"""softmax_cupy.py — a CuPy RawKernel as a dualtime implementation (issue 17,
`NAME=py:FILE.py`): `softmax(a, out)` and `add(a, b, out)` take torch CUDA tensors,
view them as CuPy arrays without a copy (__cuda_array_interface__) and launch on the
current torch stream, so the harness's stream and synchronization hold. f32 only.
"""
import cupy
import torch

_SRC = r"""
extern "C" __global__ void add_f32(const float *a, long long lda, const float *b,
                                   long long ldb, float *out, long long m, long long n) {
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < m * n;
         t += (long long)gridDim.x * blockDim.x) {
        long long i = t / n, j = t % n;
        out[t] = a[i * lda + j] + b[i * ldb + j];
    }
}

// one block of 256 threads per row
extern "C" __global__ void softmax_f32(const float *a, long long lda, float *out,
                                       long long n) {
    __shared__ float red[256];
    const float *x = a + blockIdx.x * lda;
    float *o = out + blockIdx.x * n;
    float m = -__int_as_float(0x7f800000), s = 0.f; // -inf (NVRTC has no INFINITY)
    for (long long j = threadIdx.x; j < n; j += blockDim.x) m = fmaxf(m, x[j]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if (threadIdx.x < w) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + w]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    for (long long j = threadIdx.x; j < n; j += blockDim.x) s += expf(x[j] - m);
    red[threadIdx.x] = s;
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if (threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
        __syncthreads();
    }
    for (long long j = threadIdx.x; j < n; j += blockDim.x) o[j] = expf(x[j] - m) / red[0];
}
"""
_mod = cupy.RawModule(code=_SRC)
_add = _mod.get_function("add_f32")
_softmax = _mod.get_function("softmax_f32")


def _stream():
    return cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)


def add(a, b, out):
    assert a.dtype == torch.float32, "f32 only"
    m, n = out.shape
    blocks = min((m * n + 255) // 256, 65535)
    with _stream():
        _add((blocks,), (256,), (cupy.asarray(a), cupy.int64(a.stride(0)), cupy.asarray(b),
                                 cupy.int64(b.stride(0)), cupy.asarray(out), cupy.int64(m),
                                 cupy.int64(n)))


def softmax(a, out):
    assert a.dtype == torch.float32, "f32 only"
    m, n = out.shape
    with _stream():
        _softmax((m,), (256,), (cupy.asarray(a), cupy.int64(a.stride(0)), cupy.asarray(out),
                                cupy.int64(n)))
