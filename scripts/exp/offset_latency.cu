// scripts/exp/offset_latency.cu — an experiment for issue 12's per-process offsets
// (docs/device-workflow.md, "Reruns"): does a latency-bound kernel's time depend on where
// its buffers sit in device memory? One process, one 256 MiB allocation; for each of 48
// placements (offsets spread over it: 64 KiB steps, 2 MiB steps, odd strides) the same
// 17 x 257 fp32 add (out = a + b, one block a row-chunk, as small as the default matrix's
// smallest) is captured 64 times into a CUDA graph and replayed between events (the GPU
// runs the launches back to back, as in a held window); median of 15 replays after 3,
// printed as us per kernel with the offset. A spread well over the replays' own scatter,
// stable when the run is repeated, says placement matters; none says look elsewhere.
// Mode "held" (session 8): no graph; like dualtime's held control window, the stream first
// waits on a host-mapped flag (cuStreamWaitValue32), then the host queues begin event, 64
// stream launches and end event, then sets the flag; 48 windows at placement 0, the same
// summary line. A plain process in this mode with per-process offsets says the held stream
// launches have them by themselves (graph replay had none: 0.44% over 10 processes).
// Build: nvcc -O2 -arch=sm_90 -o offset_latency scripts/exp/offset_latency.cu -lcuda
// Mode "held S" (session 9): the same over S streams of one process, window r on stream
// r % S, each stream's median and the spread over streams: a spread over streams like the
// one over processes says the offset belongs to the stream's hardware queue, not the process.
// Run: ./offset_latency [rows cols] | ./offset_latency held [S]   (not part of the build or the tests)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void add(const float *a, const float *b, float *o, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) o[i] = a[i] + b[i];
}

static int held(int nstreams) {
    const int rows = 17, cols = 257, n = rows * cols, per = 48;
    float *a, *b, *o;
    CK(cudaMalloc(&a, 3 * ((size_t)n + 64) * sizeof(float)));
    CK(cudaMemset(a, 0, 3 * ((size_t)n + 64) * sizeof(float)));
    b = a + n + 64;
    o = b + n + 64;
    volatile unsigned *flag;
    CK(cudaHostAlloc((void **)&flag, 64, cudaHostAllocMapped));
    *flag = 0;
    void *dflag;
    CK(cudaHostGetDevicePointer(&dflag, (void *)flag, 0));
    std::vector<cudaStream_t> ss(nstreams);
    for (auto &s : ss) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (auto s : ss) {
        for (int i = 0; i < 64; i++) add<<<(n + 255) / 256, 256, 0, s>>>(a, b, o, n); /* warm */
        CK(cudaStreamSynchronize(s));
    }
    std::vector<std::vector<double>> t(nstreams);
    std::vector<double> all;
    printf("# held: 17 x 257 fp32 add, 64 stream launches a held window, us per kernel, "
           "%d stream(s), window r on stream r %% %d\n", nstreams, nstreams);
    const int windows = per * nstreams;
    for (int r = 0; r < windows + 3 * nstreams; r++) {
        cudaStream_t s = ss[r % nstreams];
        if (cuStreamWaitValue32((CUstream)s, (CUdeviceptr)dflag, (cuuint32_t)(r + 1),
                                CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS) {
            fprintf(stderr, "cuStreamWaitValue32 failed\n");
            return 1;
        }
        CK(cudaEventRecord(e0, s));
        for (int i = 0; i < 64; i++) add<<<(n + 255) / 256, 256, 0, s>>>(a, b, o, n);
        CK(cudaEventRecord(e1, s));
        __atomic_store_n((unsigned *)flag, (unsigned)(r + 1), __ATOMIC_SEQ_CST);
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 3 * nstreams) t[r % nstreams].push_back(ms * 1000.0 / 64), all.push_back(ms * 1000.0 / 64);
    }
    std::vector<double> med;
    for (int k = 0; k < nstreams; k++) {
        std::sort(t[k].begin(), t[k].end());
        med.push_back(t[k][t[k].size() / 2]);
        if (nstreams > 1) printf("stream %2d median %.4f min %.4f max %.4f\n", k, med.back(), t[k].front(), t[k].back());
    }
    std::sort(all.begin(), all.end());
    std::sort(med.begin(), med.end());
    if (nstreams > 1)
        printf("# over streams: min %.4f max %.4f (max/min - 1 = %.2f%%)\n", med.front(), med.back(),
               100 * (med.back() / med.front() - 1));
    printf("# over placements: min %.4f median %.4f max %.4f us (max/min - 1 = %.2f%%)\n",
           all.front(), all[all.size() / 2], all.back(), 100 * (all.back() / all.front() - 1));
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "held") == 0) return held(argc > 2 ? atoi(argv[2]) : 1);
    int rows = argc > 2 ? atoi(argv[1]) : 17, cols = argc > 2 ? atoi(argv[2]) : 257;
    int n = rows * cols;
    size_t bytes = (size_t)n * sizeof(float), span = 256u << 20;
    char *base;
    CK(cudaMalloc(&base, span));
    CK(cudaMemset(base, 0, span));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<size_t> offs;
    for (int k = 0; k < 16; k++) offs.push_back((size_t)k << 16);          // 64 KiB steps
    for (int k = 1; k <= 16; k++) offs.push_back((size_t)k << 21);         // 2 MiB steps
    for (int k = 1; k <= 16; k++) offs.push_back((size_t)k * 12345 * 256); // odd strides
    printf("# %d x %d fp32 add, 64 launches a graph, median of 15 replays, us per kernel\n", rows, cols);
    printf("# offset_bytes us_per_kernel min max\n");
    std::vector<double> meds;
    for (size_t off : offs) {
        float *a = (float *)(base + off), *b = a + n + 64, *o = b + n + 64;
        if (off + 3 * bytes + 1024 > span) continue;
        cudaGraph_t g;
        cudaGraphExec_t ge;
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < 64; i++) add<<<(n + 255) / 256, 256, 0, s>>>(a, b, o, n);
        CK(cudaStreamEndCapture(s, &g));
        CK(cudaGraphInstantiate(&ge, g, 0));
        std::vector<double> t;
        for (int r = 0; r < 18; r++) {
            CK(cudaEventRecord(e0, s));
            CK(cudaGraphLaunch(ge, s));
            CK(cudaEventRecord(e1, s));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (r >= 3) t.push_back(ms * 1000.0 / 64);
        }
        std::sort(t.begin(), t.end());
        meds.push_back(t[t.size() / 2]);
        printf("%12zu %8.4f %8.4f %8.4f\n", off, t[t.size() / 2], t.front(), t.back());
        CK(cudaGraphExecDestroy(ge));
        CK(cudaGraphDestroy(g));
    }
    std::sort(meds.begin(), meds.end());
    printf("# over placements: min %.4f median %.4f max %.4f us (max/min - 1 = %.2f%%)\n",
           meds.front(), meds[meds.size() / 2], meds.back(), 100 * (meds.back() / meds.front() - 1));
    return 0;
}
