/* backend_cuda_flops.h — the FP32 FFMA ceiling of the CUDA backend (the `flop_ceilings`
 * request, docs/protocol.md): kernels/cuda/ceil_ffma.cu compiled with NVRTC for the
 * device and timed with CUDA events.
 *
 * The caller (backend_cuda.c) owns the context: it is current on the calling thread.
 * Everything allocated here (module, stream, events, the output buffer) is freed before
 * returning. Units: TFLOP/s = 1e12 FLOP/s. Not thread-safe (one request at a time). */
#ifndef BACKEND_CUDA_FLOPS_H
#define BACKEND_CUDA_FLOPS_H

#include "../../src/common/dt_common.h"
#include "dt_backend.h"

#define DT_FFMA_BLOCKS_PER_SM 8
#define DT_FFMA_THREADS 256
#define DT_FFMA_ROUNDS 2048
#define DT_FFMA_CHAINS 8  /* the kernel's CEIL_CHAINS (passed as -D) */
#define DT_FFMA_UNROLL 16 /* its CEIL_UNROLL */
#define DT_FFMA_WARMUP 1
#define DT_FFMA_REPS 5

/* FLOPs of one launch on sm_count SMs (the grid: sm_count x DT_FFMA_BLOCKS_PER_SM blocks
 * of DT_FFMA_THREADS threads, DT_FFMA_ROUNDS rounds; inline: the GPU-free compile test
 * checks it against the kernel's PTX). */
static inline double dt_cuda_ffma_flops(int sm_count) {
    return (double)sm_count * DT_FFMA_BLOCKS_PER_SM * DT_FFMA_THREADS * DT_FFMA_ROUNDS * 2.0 *
           DT_FFMA_CHAINS * DT_FFMA_UNROLL;
}

/* Measures out->fp32_tflops (FLOPs of a launch / its event time, median of DT_FFMA_REPS
 * after DT_FFMA_WARMUP) and writes out->method; arch is the NVRTC target ("sm_90").
 * The other fields of *out are left as they are. DT_EDEVICE on any driver or NVRTC
 * failure (a fault of the kernel leaves the context sticky-broken: the caller checks). */
dt_status dt_cuda_ffma_ceiling(const char *arch, int sm_count, dt_flop_ceilings *out,
                               dt_err *err);

#endif
