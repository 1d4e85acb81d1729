/* backend_cuda_flops.c — the FP32 FFMA ceiling (backend_cuda_flops.h). */
#include "backend_cuda_flops.h"

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/common/dt_cuda_check.h"
#include "../../src/stats/dt_stats.h"
#include "backend_cuda_plan.h"

/* On a failed driver call: the error text into err, st = DT_EDEVICE, goto label. */
#define FL_RUN(call, label)                                                             \
    do {                                                                                \
        CUresult r__ = (call);                                                          \
        char t__[DT_CUDA_CHECK_TEXT_LEN];                                               \
        if (!dt_cu_check(r__, #call, __FILE__, __LINE__, t__, sizeof t__)) {            \
            st = dt_fail(err, DT_EDEVICE, "flop ceilings: %s", t__);                    \
            goto label;                                                                 \
        }                                                                               \
    } while (0)

/* ceil_ffma.cu compiled for arch and loaded: *mod (the caller unloads it) and *fn. */
static dt_status load_ffma(const char *arch, CUmodule *mod, CUfunction *fn, dt_err *err) {
    dt_cuda_plan plan;
    memset(&plan, 0, sizeof plan);
    snprintf(plan.kernel_name, sizeof plan.kernel_name, "dt_ceil_ffma");
    snprintf(plan.opts[0], sizeof plan.opts[0], "--gpu-architecture=%s", arch);
    snprintf(plan.opts[1], sizeof plan.opts[1], "-DCEIL_CHAINS=%d", DT_FFMA_CHAINS);
    snprintf(plan.opts[2], sizeof plan.opts[2], "-DCEIL_UNROLL=%d", DT_FFMA_UNROLL);
    plan.nopts = 3;
    char *src = NULL, *image = NULL;
    size_t image_bytes = 0;
    dt_status st = dt_cuda_source_load("ceil_ffma.cu", &src, NULL, err);
    if (st == DT_OK)
        st = dt_cuda_nvrtc_compile("ceil_ffma.cu", src, NULL, &plan, &image, &image_bytes, err);
    if (st != DT_OK) goto out;
    FL_RUN(cuModuleLoadData(mod, image), out);
    FL_RUN(cuModuleGetFunction(fn, *mod, "dt_ceil_ffma"), out);
out:
    free(src);
    free(image);
    return st;
}

dt_status dt_cuda_ffma_ceiling(const char *arch, int sm_count, dt_flop_ceilings *out,
                               dt_err *err) {
    dt_status st = DT_OK;
    CUmodule mod = NULL;
    CUfunction fn = NULL;
    CUstream stream = NULL;
    CUevent ev0 = NULL, ev1 = NULL;
    CUdeviceptr buf = 0;
    double ms[DT_FFMA_REPS];
    if (sm_count < 1) return dt_fail(err, DT_EDEVICE, "flop ceilings: no SM count");
    const unsigned blocks = (unsigned)sm_count * DT_FFMA_BLOCKS_PER_SM;
    st = load_ffma(arch, &mod, &fn, err);
    if (st != DT_OK) goto done;
    FL_RUN(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), done);
    FL_RUN(cuEventCreate(&ev0, CU_EVENT_DEFAULT), done);
    FL_RUN(cuEventCreate(&ev1, CU_EVENT_DEFAULT), done);
    FL_RUN(cuMemAlloc(&buf, (size_t)blocks * DT_FFMA_THREADS * sizeof(float)), done);
    float m = 0.999999f, a = 1e-6f; /* |x| stays near its start: no overflow, no denormal */
    int rounds = DT_FFMA_ROUNDS;
    void *args[] = {&buf, &m, &a, &rounds};
    for (int r = 0; r < DT_FFMA_WARMUP + DT_FFMA_REPS; r++) {
        FL_RUN(cuEventRecord(ev0, stream), done);
        FL_RUN(cuLaunchKernel(fn, blocks, 1, 1, DT_FFMA_THREADS, 1, 1, 0, stream, args, NULL),
               done);
        FL_RUN(cuEventRecord(ev1, stream), done);
        FL_RUN(cuEventSynchronize(ev1), done);
        float t = 0;
        FL_RUN(cuEventElapsedTime(&t, ev0, ev1), done);
        if (r >= DT_FFMA_WARMUP) ms[r - DT_FFMA_WARMUP] = (double)t;
    }
    const double med_ms = dt_stats_median(ms, DT_FFMA_REPS);
    if (!(med_ms > 0)) {
        st = dt_fail(err, DT_EDEVICE, "flop ceilings: FFMA time not measurable (%g ms)", med_ms);
        goto done;
    }
    out->fp32_tflops = dt_cuda_ffma_flops(sm_count) / (med_ms * 1e9);
    snprintf(out->method, sizeof out->method,
             "fp32: FFMA chains (kernels/cuda/ceil_ffma.cu, %s): <<<%u, %d>>>, %d independent "
             "chains x = x*m + a a thread, %d rounds of %d, %.3g FLOP a launch; CUDA events "
             "around each launch, median of %d after %d (%.3f ms)",
             arch, blocks, DT_FFMA_THREADS, DT_FFMA_CHAINS, DT_FFMA_ROUNDS, DT_FFMA_UNROLL,
             dt_cuda_ffma_flops(sm_count),
             DT_FFMA_REPS, DT_FFMA_WARMUP, med_ms);
done:
    if (buf) cuMemFree(buf);
    if (ev0) cuEventDestroy(ev0);
    if (ev1) cuEventDestroy(ev1);
    if (stream) cuStreamDestroy(stream);
    if (mod) cuModuleUnload(mod);
    return st;
}
