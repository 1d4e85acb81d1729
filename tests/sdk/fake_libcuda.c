/* fake_libcuda.c — a stand-in libcuda.so.1 for the worker SDK's CUDA mode on machines
 * without a GPU (tests/e2e/test_sdk_worker.sh): "device" memory is host memory, copies
 * are memcpy, streams and modules are tokens, launches do nothing. Only the entry points
 * src/sdk/dt_sdk_cuda.c opens. FAKE_CUDA_FAIL_ALLOC=1 makes cuMemAlloc fail (out of
 * memory). */
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
static int g_ctx = 1, g_mod = 2, g_fn = 3;
static long g_streams;

CUresult cuInit(unsigned flags) { return 0; }
CUresult cuDeviceGet(int *d, int ordinal) { *d = ordinal; return ordinal == 0 ? 0 : 101; }
CUresult cuDeviceGetName(char *name, int len, int dev) {
    strncpy(name, "Fake GPU (tests/sdk/fake_libcuda.c)", (size_t)len - 1);
    name[len - 1] = '\0';
    return 0;
}
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) { *ctx = &g_ctx; return 0; }
CUresult cuCtxSetCurrent(void *ctx) { return ctx == &g_ctx ? 0 : 201; }
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
    const char *f = getenv("FAKE_CUDA_FAIL_ALLOC");
    if (f && *f == '1') return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
    void *m = malloc(n);
    if (!m) return 2;
    memset(m, 0x5A, n); /* garbage: only upload may make it the arena */
    *p = (CUdeviceptr)(uintptr_t)m;
    return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) { free((void *)(uintptr_t)p); return 0; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n) {
    memcpy((void *)(uintptr_t)d, h, n);
    return 0;
}
CUresult cuMemcpyDtoH_v2(void *h, CUdeviceptr d, size_t n) {
    memcpy(h, (const void *)(uintptr_t)d, n);
    return 0;
}
CUresult cuStreamCreate(void **s, unsigned flags) { *s = (void *)(++g_streams * 16); return 0; }
CUresult cuStreamDestroy_v2(void *s) { return 0; }
CUresult cuModuleLoadData(void **m, const void *image) {
    *m = &g_mod;
    return strstr((const char *)image, ".entry dt_sdk_empty") ? 0 : 200;
}
CUresult cuModuleGetFunction(void **f, void *m, const char *name) { *f = &g_fn; return 0; }
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shmem, void *stream, void **params,
                        void **extra) {
    return f == &g_fn ? 0 : 400;
}
CUresult cuGetErrorString(CUresult r, const char **s) {
    *s = r == 2 ? "out of memory" : "fake error";
    return 0;
}
